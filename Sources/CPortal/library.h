#ifndef CPORTAL_LIBRARY_H
#define CPORTAL_LIBRARY_H

// libdbus-1 and libpipewire-0.3 are loaded on first use (dlopen), not linked: only a portal share
// needs them, and linked they cost every other share ~1.3 MiB resident (their relocations and
// their chain: libsystemd, libgcrypt, liblzma, libzstd, liblz4). The calls go through the tables
// below, declared with the headers' own types, so a mismatch is a compile error.

#include <dbus/dbus.h>
#include <pipewire/pipewire.h>
#include <stddef.h>

#define RTCS_DBUS_CALLS(X) \
    X(dbus_bus_add_match) \
    X(dbus_bus_get_private) \
    X(dbus_bus_get_unique_name) \
    X(dbus_bus_remove_match) \
    X(dbus_connection_close) \
    X(dbus_connection_flush) \
    X(dbus_connection_get_is_connected) \
    X(dbus_connection_pop_message) \
    X(dbus_connection_read_write) \
    X(dbus_connection_send) \
    X(dbus_connection_send_with_reply_and_block) \
    X(dbus_connection_set_exit_on_disconnect) \
    X(dbus_connection_unref) \
    X(dbus_error_free) \
    X(dbus_error_init) \
    X(dbus_message_append_args) \
    X(dbus_message_get_args) \
    X(dbus_message_has_path) \
    X(dbus_message_is_signal) \
    X(dbus_message_iter_append_basic) \
    X(dbus_message_iter_close_container) \
    X(dbus_message_iter_get_arg_type) \
    X(dbus_message_iter_get_basic) \
    X(dbus_message_iter_init) \
    X(dbus_message_iter_init_append) \
    X(dbus_message_iter_next) \
    X(dbus_message_iter_open_container) \
    X(dbus_message_iter_recurse) \
    X(dbus_message_new_method_call) \
    X(dbus_message_set_no_reply) \
    X(dbus_message_unref) \

#define RTCS_PW_CALLS(X) \
    X(pw_context_connect_fd) \
    X(pw_context_destroy) \
    X(pw_context_new) \
    X(pw_core_disconnect) \
    X(pw_init) \
    X(pw_loop_destroy) \
    X(pw_loop_new) \
    X(pw_properties_new) \
    X(pw_stream_add_listener) \
    X(pw_stream_connect) \
    X(pw_stream_dequeue_buffer) \
    X(pw_stream_destroy) \
    X(pw_stream_new) \
    X(pw_stream_queue_buffer) \
    X(pw_stream_update_params) \

#define RTCS_POINTER(name) __typeof__(name) *name;
struct rtcs_dbus_api { RTCS_DBUS_CALLS(RTCS_POINTER) };
struct rtcs_pw_api { RTCS_PW_CALLS(RTCS_POINTER) };
#undef RTCS_POINTER

extern struct rtcs_dbus_api rtcs_dbus;
extern struct rtcs_pw_api rtcs_pipewire;

/// Loads libdbus-1.so.3 and libpipewire-0.3.so.0 once (kept for the process's life: PipeWire
/// loads its own modules from them); 0 on success, else -1 with one line in `error`.
int rtcs_portal_load(char *error, size_t error_len);

#endif
