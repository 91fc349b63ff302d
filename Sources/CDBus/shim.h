// libdbus-1's headers, for the ScreenCast portal's calls (CPortal); the library is loaded on first use, not linked.
#include <dbus/dbus.h>
