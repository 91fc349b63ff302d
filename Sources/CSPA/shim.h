// SPA's headers (libspa-0.2, header-only: nothing to link), for the portal's PipeWire stream
// (CPortal): the format and buffer-parameter builders, buffer metadata, the loop interface.
#include <spa/buffer/meta.h>
#include <spa/param/video/format-utils.h>
#include <spa/pod/builder.h>
#include <spa/support/loop.h>
#include <spa/utils/hook.h>
#include <spa/utils/result.h>
