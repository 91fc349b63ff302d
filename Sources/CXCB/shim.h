// The X protocol C binding, core, MIT-SHM, DAMAGE and XFIXES (the pointer's image, for --cursor), for screen capture. xcbext.h brings in
// xcb_poll_for_reply, which lets a capture wait for a reply with a time limit.
#include <xcb/xcb.h>
#include <xcb/xcbext.h>
#include <xcb/shm.h>
#include <xcb/damage.h>
#include <xcb/xfixes.h>
