// libpipewire-0.3's and SPA's headers, for the portal's screen stream (CPortal); the library is loaded on first use, not linked.
#include <pipewire/pipewire.h>
#include <spa/param/video/format-utils.h>
