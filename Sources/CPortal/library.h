#ifndef CPORTAL_LIBRARY_H
#define CPORTAL_LIBRARY_H

// libdbus-1 and libpipewire-0.3 are loaded on first use (dlopen), not linked: only a portal
// share needs them, and linked they cost every other share ~1.3 MiB resident (their
// relocations and their chain: libsystemd, libgcrypt, liblzma, libzstd, liblz4).
//
// Their headers cannot be used without linking them (SwiftPM takes include paths only from
// pkg-config, which also names the libraries to link), so the few types, constants and calls
// used here are declared below, mirroring the stable ABIs of libdbus-1.so.3 and
// libpipewire-0.3.so.0 field for field. Tests/PortalTestShim/abi-check.c compiles these
// declarations beside the real headers and checks every size, offset and value
// (PortalCaptureTests). SPA is header-only and comes from its own headers.

#include <stddef.h>
#include <stdint.h>

#include <spa/buffer/buffer.h>
#include <spa/pod/pod.h>
#include <spa/support/loop.h>
#include <spa/utils/dict.h>
#include <spa/utils/hook.h>

// Under RTCS_ABI_CHECK (abi-check.c, beside the real headers) the types and constants declared
// here take a prefix so both can be compared; the calls' signatures then use the real types.
#ifdef RTCS_ABI_CHECK
#define RTCS_NAME(name) rtcs_check_##name
#else
#define RTCS_NAME(name) name
#endif
#define RTCS_PLAIN(name) name

// MARK: libdbus-1 (dbus/dbus.h)

typedef uint32_t RTCS_NAME(dbus_bool_t);
typedef struct RTCS_NAME(DBusConnection) RTCS_NAME(DBusConnection);
typedef struct RTCS_NAME(DBusMessage) RTCS_NAME(DBusMessage);

/// An error's name and message; the rest is libdbus's.
typedef struct RTCS_NAME(DBusError) {
    const char *name;
    const char *message;
    unsigned int bits1 : 1, bits2 : 1, bits3 : 1, bits4 : 1, bits5 : 1;
    void *padding;
} RTCS_NAME(DBusError);

/// A reader or writer of a message's arguments; its fields are libdbus's.
typedef struct RTCS_NAME(DBusMessageIter) {
    void *p1, *p2;
    uint32_t u3;
    int i4, i5, i6, i7, i8, i9, i10, i11, i12;
    void *p13, *p14;
} RTCS_NAME(DBusMessageIter);

typedef enum { RTCS_NAME(DBUS_BUS_SESSION) = 0 } RTCS_NAME(DBusBusType);
enum {
    RTCS_NAME(DBUS_TYPE_INVALID) = '\0',
    RTCS_NAME(DBUS_TYPE_UINT32) = 'u',
    RTCS_NAME(DBUS_TYPE_INT32) = 'i',
    RTCS_NAME(DBUS_TYPE_STRING) = 's',
    RTCS_NAME(DBUS_TYPE_OBJECT_PATH) = 'o',
    RTCS_NAME(DBUS_TYPE_UNIX_FD) = 'h',
    RTCS_NAME(DBUS_TYPE_ARRAY) = 'a',
    RTCS_NAME(DBUS_TYPE_VARIANT) = 'v',
    RTCS_NAME(DBUS_TYPE_STRUCT) = 'r',
    RTCS_NAME(DBUS_TYPE_DICT_ENTRY) = 'e',
};
#define RTCS_DBUS_ERROR_SERVICE_UNKNOWN "org.freedesktop.DBus.Error.ServiceUnknown"
#ifndef RTCS_ABI_CHECK
#define TRUE 1
#define FALSE 0
#define DBUS_ERROR_SERVICE_UNKNOWN RTCS_DBUS_ERROR_SERVICE_UNKNOWN
#endif

#define RTCS_DBUS_CALLS(X) \
    X(void, dbus_error_init, (RTCS_PLAIN(DBusError) *)) \
    X(void, dbus_error_free, (RTCS_PLAIN(DBusError) *)) \
    X(RTCS_PLAIN(DBusConnection) *, dbus_bus_get_private, (DBusBusType, RTCS_PLAIN(DBusError) *)) \
    X(const char *, dbus_bus_get_unique_name, (RTCS_PLAIN(DBusConnection) *)) \
    X(void, dbus_bus_add_match, (RTCS_PLAIN(DBusConnection) *, const char *, RTCS_PLAIN(DBusError) *)) \
    X(void, dbus_bus_remove_match, (RTCS_PLAIN(DBusConnection) *, const char *, RTCS_PLAIN(DBusError) *)) \
    X(void, dbus_connection_close, (RTCS_PLAIN(DBusConnection) *)) \
    X(void, dbus_connection_unref, (RTCS_PLAIN(DBusConnection) *)) \
    X(void, dbus_connection_flush, (RTCS_PLAIN(DBusConnection) *)) \
    X(RTCS_PLAIN(dbus_bool_t), dbus_connection_get_is_connected, (RTCS_PLAIN(DBusConnection) *)) \
    X(void, dbus_connection_set_exit_on_disconnect, (RTCS_PLAIN(DBusConnection) *, RTCS_PLAIN(dbus_bool_t))) \
    X(RTCS_PLAIN(DBusMessage) *, dbus_connection_pop_message, (RTCS_PLAIN(DBusConnection) *)) \
    X(RTCS_PLAIN(dbus_bool_t), dbus_connection_read_write, (RTCS_PLAIN(DBusConnection) *, int)) \
    X(RTCS_PLAIN(dbus_bool_t), dbus_connection_send, (RTCS_PLAIN(DBusConnection) *, RTCS_PLAIN(DBusMessage) *, uint32_t *)) \
    X(RTCS_PLAIN(DBusMessage) *, dbus_connection_send_with_reply_and_block, \
      (RTCS_PLAIN(DBusConnection) *, RTCS_PLAIN(DBusMessage) *, int, RTCS_PLAIN(DBusError) *)) \
    X(RTCS_PLAIN(DBusMessage) *, dbus_message_new_method_call, (const char *, const char *, const char *, const char *)) \
    X(void, dbus_message_unref, (RTCS_PLAIN(DBusMessage) *)) \
    X(void, dbus_message_set_no_reply, (RTCS_PLAIN(DBusMessage) *, RTCS_PLAIN(dbus_bool_t))) \
    X(RTCS_PLAIN(dbus_bool_t), dbus_message_append_args, (RTCS_PLAIN(DBusMessage) *, int, ...)) \
    X(RTCS_PLAIN(dbus_bool_t), dbus_message_get_args, (RTCS_PLAIN(DBusMessage) *, RTCS_PLAIN(DBusError) *, int, ...)) \
    X(RTCS_PLAIN(dbus_bool_t), dbus_message_has_path, (RTCS_PLAIN(DBusMessage) *, const char *)) \
    X(RTCS_PLAIN(dbus_bool_t), dbus_message_is_signal, (RTCS_PLAIN(DBusMessage) *, const char *, const char *)) \
    X(RTCS_PLAIN(dbus_bool_t), dbus_message_iter_init, (RTCS_PLAIN(DBusMessage) *, RTCS_PLAIN(DBusMessageIter) *)) \
    X(void, dbus_message_iter_init_append, (RTCS_PLAIN(DBusMessage) *, RTCS_PLAIN(DBusMessageIter) *)) \
    X(RTCS_PLAIN(dbus_bool_t), dbus_message_iter_append_basic, (RTCS_PLAIN(DBusMessageIter) *, int, const void *)) \
    X(RTCS_PLAIN(dbus_bool_t), dbus_message_iter_open_container, \
      (RTCS_PLAIN(DBusMessageIter) *, int, const char *, RTCS_PLAIN(DBusMessageIter) *)) \
    X(RTCS_PLAIN(dbus_bool_t), dbus_message_iter_close_container, (RTCS_PLAIN(DBusMessageIter) *, RTCS_PLAIN(DBusMessageIter) *)) \
    X(int, dbus_message_iter_get_arg_type, (RTCS_PLAIN(DBusMessageIter) *)) \
    X(void, dbus_message_iter_get_basic, (RTCS_PLAIN(DBusMessageIter) *, void *)) \
    X(RTCS_PLAIN(dbus_bool_t), dbus_message_iter_next, (RTCS_PLAIN(DBusMessageIter) *)) \
    X(void, dbus_message_iter_recurse, (RTCS_PLAIN(DBusMessageIter) *, RTCS_PLAIN(DBusMessageIter) *))

// MARK: libpipewire-0.3 (pipewire/pipewire.h)

struct RTCS_NAME(pw_context);
struct RTCS_NAME(pw_core);
struct RTCS_NAME(pw_stream);
struct RTCS_NAME(pw_properties);

/// A loop and its parts; `control` is what iterates it.
struct RTCS_NAME(pw_loop) {
    struct spa_system *system;
    struct spa_loop *loop;
    struct spa_loop_control *control;
    struct spa_loop_utils *utils;
};

/// A buffer handed out by pw_stream_dequeue_buffer.
struct RTCS_NAME(pw_buffer) {
    struct spa_buffer *buffer;
    void *user_data;
    uint64_t size;
    uint64_t requested;
};

enum RTCS_NAME(pw_stream_state) {
    RTCS_NAME(PW_STREAM_STATE_ERROR) = -1,
    RTCS_NAME(PW_STREAM_STATE_UNCONNECTED) = 0,
    RTCS_NAME(PW_STREAM_STATE_CONNECTING) = 1,
    RTCS_NAME(PW_STREAM_STATE_PAUSED) = 2,
    RTCS_NAME(PW_STREAM_STATE_STREAMING) = 3,
};

enum RTCS_NAME(pw_stream_flags) {
    RTCS_NAME(PW_STREAM_FLAG_AUTOCONNECT) = 1 << 0,
    RTCS_NAME(PW_STREAM_FLAG_MAP_BUFFERS) = 1 << 2,
};

/// The stream's events, in version 2's order; the ones rtcshare leaves NULL take `void *`.
struct RTCS_NAME(pw_stream_events) {
    uint32_t version;
    void (*destroy)(void *data);
    void (*state_changed)(void *data, enum RTCS_NAME(pw_stream_state) old, enum RTCS_NAME(pw_stream_state) state,
                          const char *error);
    void (*control_info)(void *data, uint32_t id, const void *control);
    void (*io_changed)(void *data, uint32_t id, void *area, uint32_t size);
    void (*param_changed)(void *data, uint32_t id, const struct spa_pod *param);
    void (*add_buffer)(void *data, struct RTCS_NAME(pw_buffer) *buffer);
    void (*remove_buffer)(void *data, struct RTCS_NAME(pw_buffer) *buffer);
    void (*process)(void *data);
    void (*drained)(void *data);
    void (*command)(void *data, const void *command);
    void (*trigger_done)(void *data);
};

#define RTCS_PW_VERSION_STREAM_EVENTS 2
#define RTCS_PW_KEY_MEDIA_TYPE "media.type"
#define RTCS_PW_KEY_MEDIA_CATEGORY "media.category"
#define RTCS_PW_KEY_MEDIA_ROLE "media.role"
#ifndef RTCS_ABI_CHECK
#define PW_VERSION_STREAM_EVENTS RTCS_PW_VERSION_STREAM_EVENTS
#define PW_KEY_MEDIA_TYPE RTCS_PW_KEY_MEDIA_TYPE
#define PW_KEY_MEDIA_CATEGORY RTCS_PW_KEY_MEDIA_CATEGORY
#define PW_KEY_MEDIA_ROLE RTCS_PW_KEY_MEDIA_ROLE
#define pw_loop_enter(l) spa_loop_control_enter((l)->control)
#define pw_loop_iterate(l, timeout) spa_loop_control_iterate((l)->control, timeout)
#define pw_loop_leave(l) spa_loop_control_leave((l)->control)
#endif

#define RTCS_PW_CALLS(X) \
    X(void, pw_init, (int *, char ***)) \
    X(struct RTCS_PLAIN(pw_loop) *, pw_loop_new, (const struct spa_dict *)) \
    X(void, pw_loop_destroy, (struct RTCS_PLAIN(pw_loop) *)) \
    X(struct RTCS_PLAIN(pw_context) *, pw_context_new, (struct RTCS_PLAIN(pw_loop) *, struct RTCS_PLAIN(pw_properties) *, size_t)) \
    X(void, pw_context_destroy, (struct RTCS_PLAIN(pw_context) *)) \
    X(struct RTCS_PLAIN(pw_core) *, pw_context_connect_fd, \
      (struct RTCS_PLAIN(pw_context) *, int, struct RTCS_PLAIN(pw_properties) *, size_t)) \
    X(int, pw_core_disconnect, (struct RTCS_PLAIN(pw_core) *)) \
    X(struct RTCS_PLAIN(pw_properties) *, pw_properties_new, (const char *, ...)) \
    X(struct RTCS_PLAIN(pw_stream) *, pw_stream_new, (struct RTCS_PLAIN(pw_core) *, const char *, struct RTCS_PLAIN(pw_properties) *)) \
    X(void, pw_stream_add_listener, (struct RTCS_PLAIN(pw_stream) *, struct spa_hook *, \
                                     const struct RTCS_PLAIN(pw_stream_events) *, void *)) \
    X(int, pw_stream_connect, (struct RTCS_PLAIN(pw_stream) *, enum spa_direction, uint32_t, \
                               enum RTCS_PLAIN(pw_stream_flags), const struct spa_pod **, uint32_t)) \
    X(void, pw_stream_destroy, (struct RTCS_PLAIN(pw_stream) *)) \
    X(int, pw_stream_update_params, (struct RTCS_PLAIN(pw_stream) *, const struct spa_pod **, uint32_t)) \
    X(struct RTCS_PLAIN(pw_buffer) *, pw_stream_dequeue_buffer, (struct RTCS_PLAIN(pw_stream) *)) \
    X(int, pw_stream_queue_buffer, (struct RTCS_PLAIN(pw_stream) *, struct RTCS_PLAIN(pw_buffer) *))

// MARK: the tables

#define RTCS_POINTER(result, name, arguments) result(*name) arguments;
struct rtcs_dbus_api { RTCS_DBUS_CALLS(RTCS_POINTER) };
struct rtcs_pw_api { RTCS_PW_CALLS(RTCS_POINTER) };
#undef RTCS_POINTER

#ifndef RTCS_ABI_CHECK
extern struct rtcs_dbus_api rtcs_dbus;
extern struct rtcs_pw_api rtcs_pipewire;

/// Loads libdbus-1.so.3 and libpipewire-0.3.so.0 once (kept for the process's life: PipeWire
/// loads its own modules beside them); 0 on success, else -1 with one line in `error`.
int rtcs_portal_load(char *error, size_t error_len);

/// One line into the caller's `error` buffer (nothing when there is none).
void rtcs_portal_fail(char *error, size_t len, const char *format, ...) __attribute__((format(printf, 3, 4)));
#endif

#endif
