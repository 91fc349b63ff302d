// libpipewire-0.3 and the SPA headers, for the portal's screen stream (CPortal).
#include <pipewire/pipewire.h>
#include <spa/param/video/format-utils.h>
