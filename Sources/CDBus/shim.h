// libdbus-1, the reference D-Bus client library, for the ScreenCast portal's calls (CPortal).
#include <dbus/dbus.h>
