// Built and run by PortalCaptureTests: CPortal's own declarations of libdbus-1 and
// libpipewire-0.3 (Sources/CPortal/library.h, which does not include their headers) against
// the real headers of the installed -dev packages. Layouts, enumerators and the calls' types are
// checked while compiling (-Werror); the string constants when run (exit 0: all agree).
#include <dbus/dbus.h>
#include <pipewire/pipewire.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define RTCS_ABI_CHECK
#include "library.h"

#define SAME_SIZE(ours, theirs) _Static_assert(sizeof(ours) == sizeof(theirs) && _Alignof(ours) == _Alignof(theirs), #theirs)
#define SAME_FIELD(ours, theirs, field) \
    _Static_assert(offsetof(ours, field) == offsetof(theirs, field), #theirs "." #field)
#define SAME_VALUE(name) _Static_assert((long)rtcs_check_##name == (long)name, #name)

SAME_SIZE(rtcs_check_dbus_bool_t, dbus_bool_t);
SAME_SIZE(rtcs_check_DBusError, DBusError);
SAME_FIELD(rtcs_check_DBusError, DBusError, name);
SAME_FIELD(rtcs_check_DBusError, DBusError, message);
SAME_SIZE(rtcs_check_DBusMessageIter, DBusMessageIter);
SAME_VALUE(DBUS_BUS_SESSION);
SAME_VALUE(DBUS_TYPE_INVALID);
SAME_VALUE(DBUS_TYPE_UINT32);
SAME_VALUE(DBUS_TYPE_INT32);
SAME_VALUE(DBUS_TYPE_STRING);
SAME_VALUE(DBUS_TYPE_OBJECT_PATH);
SAME_VALUE(DBUS_TYPE_UNIX_FD);
SAME_VALUE(DBUS_TYPE_ARRAY);
SAME_VALUE(DBUS_TYPE_VARIANT);
SAME_VALUE(DBUS_TYPE_STRUCT);
SAME_VALUE(DBUS_TYPE_DICT_ENTRY);

SAME_SIZE(struct rtcs_check_pw_loop, struct pw_loop);
SAME_FIELD(struct rtcs_check_pw_loop, struct pw_loop, control);
SAME_SIZE(struct rtcs_check_pw_buffer, struct pw_buffer);
SAME_FIELD(struct rtcs_check_pw_buffer, struct pw_buffer, buffer);
SAME_SIZE(struct rtcs_check_pw_stream_events, struct pw_stream_events);
SAME_FIELD(struct rtcs_check_pw_stream_events, struct pw_stream_events, state_changed);
SAME_FIELD(struct rtcs_check_pw_stream_events, struct pw_stream_events, param_changed);
SAME_FIELD(struct rtcs_check_pw_stream_events, struct pw_stream_events, process);
SAME_FIELD(struct rtcs_check_pw_stream_events, struct pw_stream_events, trigger_done);
SAME_VALUE(PW_STREAM_STATE_ERROR);
SAME_VALUE(PW_STREAM_STATE_UNCONNECTED);
SAME_VALUE(PW_STREAM_STATE_CONNECTING);
SAME_VALUE(PW_STREAM_STATE_PAUSED);
SAME_VALUE(PW_STREAM_STATE_STREAMING);
SAME_VALUE(PW_STREAM_FLAG_AUTOCONNECT);
SAME_VALUE(PW_STREAM_FLAG_MAP_BUFFERS);
_Static_assert(RTCS_PW_VERSION_STREAM_EVENTS == PW_VERSION_STREAM_EVENTS, "PW_VERSION_STREAM_EVENTS");
_Static_assert(SPA_DIRECTION_INPUT == PW_DIRECTION_INPUT, "PW_DIRECTION_INPUT");

// Every call's declared type is the header's (an incompatible pointer is an error under -Werror).
#define SAME_CALL(result, name, arguments) .name = name,
static const struct rtcs_dbus_api dbus_calls = { RTCS_DBUS_CALLS(SAME_CALL) };
static const struct rtcs_pw_api pw_calls = { RTCS_PW_CALLS(SAME_CALL) };

int main(void) {
    int failures = 0;
#define SAME_TEXT(ours, theirs) \
    if (strcmp(ours, theirs) != 0) { fprintf(stderr, "%s: %s, not %s\n", #theirs, ours, theirs); failures++; }
    SAME_TEXT(RTCS_DBUS_ERROR_SERVICE_UNKNOWN, DBUS_ERROR_SERVICE_UNKNOWN);
    SAME_TEXT(RTCS_PW_KEY_MEDIA_TYPE, PW_KEY_MEDIA_TYPE);
    SAME_TEXT(RTCS_PW_KEY_MEDIA_CATEGORY, PW_KEY_MEDIA_CATEGORY);
    SAME_TEXT(RTCS_PW_KEY_MEDIA_ROLE, PW_KEY_MEDIA_ROLE);
    printf("%zu D-Bus calls, %zu PipeWire calls, %d differences\n", sizeof dbus_calls / sizeof(void *),
           sizeof pw_calls / sizeof(void *), failures);
    return failures != 0;
}
