// The ScreenCast portal's session over libdbus-1: the calls, and the Request/Response signal
// each of them answers with. libdbus is used without a main loop: each call blocks for its
// reply, then the Response is read off the connection with a time limit, so the source's own
// thread drives it and nothing runs behind its back.

#include "CPortal.h"
#include "library.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PORTAL_BUS "org.freedesktop.portal.Desktop"
#define PORTAL_PATH "/org/freedesktop/portal/desktop"
#define SCREENCAST "org.freedesktop.portal.ScreenCast"
#define STEP_TIMEOUT_MS 10000

struct rtcs_portal {
    DBusConnection *bus;
    char session[256];
    char sender[128];     // the unique name as request paths spell it (":1.5" -> "1_5")
    unsigned counter;     // handle tokens are unique per connection
    int closed;
};

#define fail rtcs_portal_fail

static long long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

// MARK: a{sv} options

static int add_entry(DBusMessageIter *dict, const char *key, int type, const char *signature, const void *value) {
    DBusMessageIter entry, variant;
    if (!rtcs_dbus.dbus_message_iter_open_container(dict, DBUS_TYPE_DICT_ENTRY, NULL, &entry)) return 0;
    if (!rtcs_dbus.dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key)) return 0;
    if (!rtcs_dbus.dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, signature, &variant)) return 0;
    if (!rtcs_dbus.dbus_message_iter_append_basic(&variant, type, value)) return 0;
    return rtcs_dbus.dbus_message_iter_close_container(&entry, &variant) && rtcs_dbus.dbus_message_iter_close_container(dict, &entry);
}

static int add_string(DBusMessageIter *dict, const char *key, const char *value) {
    return add_entry(dict, key, DBUS_TYPE_STRING, "s", &value);
}

static int add_uint(DBusMessageIter *dict, const char *key, uint32_t value) {
    return add_entry(dict, key, DBUS_TYPE_UINT32, "u", &value);
}

// MARK: reading results

/// Finds `key` in the a{sv} at `dict` and leaves `value` inside its variant; 0 when absent.
static int find_entry(DBusMessageIter *dict, const char *key, DBusMessageIter *value) {
    if (rtcs_dbus.dbus_message_iter_get_arg_type(dict) != DBUS_TYPE_ARRAY) return 0;
    DBusMessageIter entries;
    rtcs_dbus.dbus_message_iter_recurse(dict, &entries);
    while (rtcs_dbus.dbus_message_iter_get_arg_type(&entries) == DBUS_TYPE_DICT_ENTRY) {
        DBusMessageIter entry;
        rtcs_dbus.dbus_message_iter_recurse(&entries, &entry);
        if (rtcs_dbus.dbus_message_iter_get_arg_type(&entry) == DBUS_TYPE_STRING) {
            const char *name = NULL;
            rtcs_dbus.dbus_message_iter_get_basic(&entry, &name);
            if (name && strcmp(name, key) == 0 && rtcs_dbus.dbus_message_iter_next(&entry)
                && rtcs_dbus.dbus_message_iter_get_arg_type(&entry) == DBUS_TYPE_VARIANT) {
                rtcs_dbus.dbus_message_iter_recurse(&entry, value);
                return 1;
            }
        }
        rtcs_dbus.dbus_message_iter_next(&entries);
    }
    return 0;
}

static int find_string(DBusMessageIter *dict, const char *key, char *out, size_t len) {
    DBusMessageIter v;
    if (!find_entry(dict, key, &v) || rtcs_dbus.dbus_message_iter_get_arg_type(&v) != DBUS_TYPE_STRING) return 0;
    const char *s = NULL;
    rtcs_dbus.dbus_message_iter_get_basic(&v, &s);
    if (!s || strlen(s) >= len) return 0;
    strcpy(out, s);
    return 1;
}

/// The first stream of Start's `streams` (a(ua{sv})): its node and its `size` (ii) when given.
static int first_stream(DBusMessageIter *results, rtcs_portal_stream *stream) {
    DBusMessageIter v, streams, item, props, size;
    if (!find_entry(results, "streams", &v) || rtcs_dbus.dbus_message_iter_get_arg_type(&v) != DBUS_TYPE_ARRAY) return 0;
    rtcs_dbus.dbus_message_iter_recurse(&v, &streams);
    if (rtcs_dbus.dbus_message_iter_get_arg_type(&streams) != DBUS_TYPE_STRUCT) return 0;
    rtcs_dbus.dbus_message_iter_recurse(&streams, &item);
    if (rtcs_dbus.dbus_message_iter_get_arg_type(&item) != DBUS_TYPE_UINT32) return 0;
    uint32_t node = 0;
    rtcs_dbus.dbus_message_iter_get_basic(&item, &node);
    stream->node = node;
    stream->width = stream->height = 0;
    if (rtcs_dbus.dbus_message_iter_next(&item) && find_entry(&item, "size", &props)
        && rtcs_dbus.dbus_message_iter_get_arg_type(&props) == DBUS_TYPE_STRUCT) {
        rtcs_dbus.dbus_message_iter_recurse(&props, &size);
        int32_t w = 0, h = 0;
        if (rtcs_dbus.dbus_message_iter_get_arg_type(&size) == DBUS_TYPE_INT32) {
            rtcs_dbus.dbus_message_iter_get_basic(&size, &w);
            if (rtcs_dbus.dbus_message_iter_next(&size) && rtcs_dbus.dbus_message_iter_get_arg_type(&size) == DBUS_TYPE_INT32) {
                rtcs_dbus.dbus_message_iter_get_basic(&size, &h);
                if (w > 0 && h > 0 && w <= 16384 && h <= 16384) {
                    stream->width = w;
                    stream->height = h;
                }
            }
        }
    }
    return 1;
}

// MARK: calls

/// Sends `call` (consumed) and returns its reply, or NULL with the D-Bus error in `error`.
static DBusMessage *call_blocking(rtcs_portal *p, DBusMessage *call, const char *what, char *error, size_t len) {
    DBusError e;
    rtcs_dbus.dbus_error_init(&e);
    DBusMessage *reply = rtcs_dbus.dbus_connection_send_with_reply_and_block(p->bus, call, STEP_TIMEOUT_MS, &e);
    rtcs_dbus.dbus_message_unref(call);
    if (!reply) {
        if (e.name && strcmp(e.name, DBUS_ERROR_SERVICE_UNKNOWN) == 0)
            fail(error, len, "portal: no desktop portal on the session bus (%s)", e.message ? e.message : e.name);
        else
            fail(error, len, "portal: %s failed: %s", what, e.message ? e.message : (e.name ? e.name : "no reply"));
        rtcs_dbus.dbus_error_free(&e);
    }
    return reply;
}

/// The next handle token, and the Request path the portal will answer on.
static void next_request(rtcs_portal *p, char *token, size_t token_len, char *path, size_t path_len) {
    snprintf(token, token_len, "rtcshare%d_%u", (int)getpid(), ++p->counter);
    snprintf(path, path_len, PORTAL_PATH "/request/%s/%s", p->sender, token);
}

/// Sends `call` (consumed; its options carry `token`), then waits until `timeout_ms` for the
/// Response on the Request path; returns it (response code in `code`, reader at the results)
/// or NULL with one line.
static DBusMessage *request(rtcs_portal *p, DBusMessage *call, const char *path, const char *what, int timeout_ms,
                            uint32_t *code, DBusMessageIter *results, char *error, size_t len) {
    char rule[512];
    snprintf(rule, sizeof rule, "type='signal',interface='org.freedesktop.portal.Request',member='Response',path='%s'", path);
    // Subscribed before the call: the Response may follow its reply at once.
    rtcs_dbus.dbus_bus_add_match(p->bus, rule, NULL);
    DBusMessage *reply = call_blocking(p, call, what, error, len);
    if (!reply) {
        rtcs_dbus.dbus_bus_remove_match(p->bus, rule, NULL);
        return NULL;
    }
    // Portals before 0.9 answer on a path of their own choosing: follow the one they give.
    char handle[256];
    const char *given = NULL;
    snprintf(handle, sizeof handle, "%s", path);
    if (rtcs_dbus.dbus_message_get_args(reply, NULL, DBUS_TYPE_OBJECT_PATH, &given, DBUS_TYPE_INVALID) && given
        && strcmp(given, path) != 0 && strlen(given) < sizeof handle) {
        char other[512];
        snprintf(other, sizeof other, "type='signal',interface='org.freedesktop.portal.Request',member='Response',path='%s'", given);
        rtcs_dbus.dbus_bus_add_match(p->bus, other, NULL);
        snprintf(handle, sizeof handle, "%s", given);
    }
    rtcs_dbus.dbus_message_unref(reply);
    long long deadline = now_ms() + timeout_ms;
    DBusMessage *response = NULL;
    while (!response) {
        DBusMessage *m;
        while (!response && (m = rtcs_dbus.dbus_connection_pop_message(p->bus))) {
            if (rtcs_dbus.dbus_message_is_signal(m, "org.freedesktop.portal.Request", "Response")
                && rtcs_dbus.dbus_message_has_path(m, handle)) {
                response = m;
            } else {
                rtcs_dbus.dbus_message_unref(m);
            }
        }
        if (response) break;
        long long left = deadline - now_ms();
        if (left <= 0) {
            fail(error, len, "portal: %s got no answer within %d s", what, timeout_ms / 1000);
            break;
        }
        if (!rtcs_dbus.dbus_connection_read_write(p->bus, (int)left)) {
            fail(error, len, "portal: the session bus went away during %s", what);
            break;
        }
    }
    rtcs_dbus.dbus_bus_remove_match(p->bus, rule, NULL);
    if (!response) return NULL;
    DBusMessageIter it;
    uint32_t c = 2;
    if (!rtcs_dbus.dbus_message_iter_init(response, &it) || rtcs_dbus.dbus_message_iter_get_arg_type(&it) != DBUS_TYPE_UINT32) {
        fail(error, len, "portal: %s answered with a malformed Response", what);
        rtcs_dbus.dbus_message_unref(response);
        return NULL;
    }
    rtcs_dbus.dbus_message_iter_get_basic(&it, &c);
    rtcs_dbus.dbus_message_iter_next(&it);
    *code = c;
    *results = it;
    if (c != 0) {
        fail(error, len, "portal: %s was %s", what, c == 1 ? "cancelled (the dialog was dismissed)" : "refused");
        rtcs_dbus.dbus_message_unref(response);
        return NULL;
    }
    return response;
}

/// A ScreenCast method call with the session (when `session`) and an options dict to fill.
static DBusMessage *screencast_call(const char *method, const char *session, DBusMessageIter *options,
                                    DBusMessageIter *args) {
    DBusMessage *m = rtcs_dbus.dbus_message_new_method_call(PORTAL_BUS, PORTAL_PATH, SCREENCAST, method);
    if (!m) return NULL;
    rtcs_dbus.dbus_message_iter_init_append(m, args);
    if (session) rtcs_dbus.dbus_message_iter_append_basic(args, DBUS_TYPE_OBJECT_PATH, &session);
    rtcs_dbus.dbus_message_iter_open_container(args, DBUS_TYPE_ARRAY, "{sv}", options);
    return m;
}

/// A uint32 property of the ScreenCast interface; `fallback` when it cannot be read.
static uint32_t screencast_property(rtcs_portal *p, const char *name, uint32_t fallback) {
    DBusMessage *m = rtcs_dbus.dbus_message_new_method_call(PORTAL_BUS, PORTAL_PATH, "org.freedesktop.DBus.Properties", "Get");
    if (!m) return fallback;
    const char *iface = SCREENCAST;
    rtcs_dbus.dbus_message_append_args(m, DBUS_TYPE_STRING, &iface, DBUS_TYPE_STRING, &name, DBUS_TYPE_INVALID);
    DBusMessage *reply = rtcs_dbus.dbus_connection_send_with_reply_and_block(p->bus, m, STEP_TIMEOUT_MS, NULL);
    rtcs_dbus.dbus_message_unref(m);
    if (!reply) return fallback;
    uint32_t value = fallback;
    DBusMessageIter it, v;
    if (rtcs_dbus.dbus_message_iter_init(reply, &it) && rtcs_dbus.dbus_message_iter_get_arg_type(&it) == DBUS_TYPE_VARIANT) {
        rtcs_dbus.dbus_message_iter_recurse(&it, &v);
        if (rtcs_dbus.dbus_message_iter_get_arg_type(&v) == DBUS_TYPE_UINT32) rtcs_dbus.dbus_message_iter_get_basic(&v, &value);
    }
    rtcs_dbus.dbus_message_unref(reply);
    return value;
}

static rtcs_portal *connect_bus(char *error, size_t len) {
    DBusError e;
    rtcs_dbus.dbus_error_init(&e);
    // A private connection: closing it is this module's business, and a bus that goes away
    // must not end the process (libdbus's default for shared connections).
    DBusConnection *bus = rtcs_dbus.dbus_bus_get_private(DBUS_BUS_SESSION, &e);
    if (!bus) {
        fail(error, len, "portal: cannot connect to the session bus: %s", e.message ? e.message : "unknown error");
        rtcs_dbus.dbus_error_free(&e);
        return NULL;
    }
    rtcs_dbus.dbus_connection_set_exit_on_disconnect(bus, FALSE);
    rtcs_portal *p = calloc(1, sizeof *p);
    if (!p) {
        rtcs_dbus.dbus_connection_close(bus);
        rtcs_dbus.dbus_connection_unref(bus);
        fail(error, len, "portal: out of memory");
        return NULL;
    }
    p->bus = bus;
    const char *unique = rtcs_dbus.dbus_bus_get_unique_name(bus);
    size_t n = 0;
    for (const char *c = unique && unique[0] == ':' ? unique + 1 : (unique ? unique : ""); *c && n + 1 < sizeof p->sender; c++)
        p->sender[n++] = *c == '.' ? '_' : *c;
    p->sender[n] = 0;
    return p;
}

static int create_session(rtcs_portal *p, char *error, size_t len) {
    char token[64], path[256], session_token[64];
    next_request(p, token, sizeof token, path, sizeof path);
    snprintf(session_token, sizeof session_token, "rtcshare%d_s%u", (int)getpid(), p->counter);
    DBusMessageIter args, options, results;
    DBusMessage *m = screencast_call("CreateSession", NULL, &options, &args);
    if (!m || !add_string(&options, "handle_token", token) || !add_string(&options, "session_handle_token", session_token)
        || !rtcs_dbus.dbus_message_iter_close_container(&args, &options)) {
        if (m) rtcs_dbus.dbus_message_unref(m);
        fail(error, len, "portal: out of memory");
        return 0;
    }
    uint32_t code;
    DBusMessage *r = request(p, m, path, "CreateSession", STEP_TIMEOUT_MS, &code, &results, error, len);
    if (!r) return 0;
    int ok = find_string(&results, "session_handle", p->session, sizeof p->session);
    rtcs_dbus.dbus_message_unref(r);
    if (!ok) fail(error, len, "portal: CreateSession gave no session handle");
    return ok;
}

static int select_sources(rtcs_portal *p, const char *restore_token, int cursor, char *error, size_t len) {
    uint32_t version = screencast_property(p, "version", 1);
    uint32_t modes = screencast_property(p, "AvailableCursorModes", 1);
    uint32_t types = screencast_property(p, "AvailableSourceTypes", 1);
    if (!(types & 1)) {
        fail(error, len, "portal: the ScreenCast portal offers no monitor to share (source types %u)", types);
        return 0;
    }
    if (cursor && !(modes & 2)) {
        fail(error, len, "portal: the ScreenCast portal cannot draw the pointer into the picture (cursor modes %u)", modes);
        return 0;
    }
    char token[64], path[256];
    next_request(p, token, sizeof token, path, sizeof path);
    DBusMessageIter args, options, results;
    DBusMessage *m = screencast_call("SelectSources", p->session, &options, &args);
    int ok = m && add_string(&options, "handle_token", token) && add_uint(&options, "types", 1);
    // Cursor modes: 1 hidden, 2 embedded; a portal without them (version 1) draws what it draws.
    if (ok && version >= 2 && (modes & (cursor ? 2 : 1))) ok = add_uint(&options, "cursor_mode", cursor ? 2 : 1);
    // Version 4: persist until revoked (2), so the token lets an unattended restart skip the dialog.
    if (ok && version >= 4) {
        ok = add_uint(&options, "persist_mode", 2);
        if (ok && restore_token && restore_token[0]) ok = add_string(&options, "restore_token", restore_token);
    }
    if (!ok || !rtcs_dbus.dbus_message_iter_close_container(&args, &options)) {
        if (m) rtcs_dbus.dbus_message_unref(m);
        fail(error, len, "portal: out of memory");
        return 0;
    }
    uint32_t code;
    DBusMessage *r = request(p, m, path, "SelectSources", STEP_TIMEOUT_MS, &code, &results, error, len);
    if (!r) return 0;
    rtcs_dbus.dbus_message_unref(r);
    return 1;
}

static int start(rtcs_portal *p, int timeout_ms, rtcs_portal_stream *stream, char *error, size_t len) {
    char token[64], path[256];
    next_request(p, token, sizeof token, path, sizeof path);
    DBusMessageIter args, options, results;
    // Start's parent window (none: "") comes between the session and the options.
    const char *parent = "";
    DBusMessage *m = rtcs_dbus.dbus_message_new_method_call(PORTAL_BUS, PORTAL_PATH, SCREENCAST, "Start");
    if (!m) {
        fail(error, len, "portal: out of memory");
        return 0;
    }
    const char *session = p->session;
    rtcs_dbus.dbus_message_iter_init_append(m, &args);
    int ok = rtcs_dbus.dbus_message_iter_append_basic(&args, DBUS_TYPE_OBJECT_PATH, &session)
        && rtcs_dbus.dbus_message_iter_append_basic(&args, DBUS_TYPE_STRING, &parent)
        && rtcs_dbus.dbus_message_iter_open_container(&args, DBUS_TYPE_ARRAY, "{sv}", &options)
        && add_string(&options, "handle_token", token) && rtcs_dbus.dbus_message_iter_close_container(&args, &options);
    if (!ok) {
        rtcs_dbus.dbus_message_unref(m);
        fail(error, len, "portal: out of memory");
        return 0;
    }
    uint32_t code;
    DBusMessage *r = request(p, m, path, "Start", timeout_ms, &code, &results, error, len);
    if (!r) return 0;
    ok = first_stream(&results, stream);
    stream->restore_token[0] = 0;
    find_string(&results, "restore_token", stream->restore_token, sizeof stream->restore_token);
    rtcs_dbus.dbus_message_unref(r);
    if (!ok) fail(error, len, "portal: Start gave no stream");
    return ok;
}

static int open_remote(rtcs_portal *p, int *fd, char *error, size_t len) {
    DBusMessageIter args, options;
    DBusMessage *m = screencast_call("OpenPipeWireRemote", p->session, &options, &args);
    if (!m || !rtcs_dbus.dbus_message_iter_close_container(&args, &options)) {
        if (m) rtcs_dbus.dbus_message_unref(m);
        fail(error, len, "portal: out of memory");
        return 0;
    }
    DBusMessage *reply = call_blocking(p, m, "OpenPipeWireRemote", error, len);
    if (!reply) return 0;
    int got = -1;
    if (!rtcs_dbus.dbus_message_get_args(reply, NULL, DBUS_TYPE_UNIX_FD, &got, DBUS_TYPE_INVALID) || got < 0) {
        rtcs_dbus.dbus_message_unref(reply);
        fail(error, len, "portal: OpenPipeWireRemote gave no file descriptor");
        return 0;
    }
    rtcs_dbus.dbus_message_unref(reply);
    *fd = got;
    return 1;
}

rtcs_portal *rtcs_portal_open(const char *restore_token, int cursor, int start_timeout_ms,
                              rtcs_portal_stream *stream, int *pipewire_fd, char *error, size_t error_len) {
    if (!stream || !pipewire_fd) {
        fail(error, error_len, "portal: no place for the stream");
        return NULL;
    }
    if (rtcs_portal_load(error, error_len) != 0) return NULL;
    rtcs_portal *p = connect_bus(error, error_len);
    if (!p) return NULL;
    if (!create_session(p, error, error_len) || !select_sources(p, restore_token, cursor, error, error_len)
        || !start(p, start_timeout_ms > 0 ? start_timeout_ms : STEP_TIMEOUT_MS, stream, error, error_len)
        || !open_remote(p, pipewire_fd, error, error_len)) {
        rtcs_portal_close(p);
        return NULL;
    }
    // From now on the session's end is watched: its Closed signal, or the portal leaving the bus.
    char rule[512];
    snprintf(rule, sizeof rule, "type='signal',interface='org.freedesktop.portal.Session',member='Closed',path='%s'", p->session);
    rtcs_dbus.dbus_bus_add_match(p->bus, rule, NULL);
    rtcs_dbus.dbus_bus_add_match(p->bus, "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                       "member='NameOwnerChanged',arg0='" PORTAL_BUS "'", NULL);
    return p;
}

int rtcs_portal_alive(rtcs_portal *p) {
    if (!p || p->closed) return 0;
    if (!rtcs_dbus.dbus_connection_read_write(p->bus, 0) || !rtcs_dbus.dbus_connection_get_is_connected(p->bus)) {
        p->closed = 1;
        return 0;
    }
    DBusMessage *m;
    while ((m = rtcs_dbus.dbus_connection_pop_message(p->bus))) {
        if (rtcs_dbus.dbus_message_is_signal(m, "org.freedesktop.portal.Session", "Closed")) {
            p->closed = 1;
        } else if (rtcs_dbus.dbus_message_is_signal(m, "org.freedesktop.DBus", "NameOwnerChanged")) {
            const char *name = NULL, *old_owner = NULL, *new_owner = NULL;
            if (rtcs_dbus.dbus_message_get_args(m, NULL, DBUS_TYPE_STRING, &name, DBUS_TYPE_STRING, &old_owner,
                                      DBUS_TYPE_STRING, &new_owner, DBUS_TYPE_INVALID)
                && name && strcmp(name, PORTAL_BUS) == 0 && new_owner && new_owner[0] == 0)
                p->closed = 1;
        }
        rtcs_dbus.dbus_message_unref(m);
    }
    return !p->closed;
}

void rtcs_portal_close(rtcs_portal *p) {
    if (!p) return;
    if (!p->closed && p->session[0] && rtcs_dbus.dbus_connection_get_is_connected(p->bus)) {
        DBusMessage *m = rtcs_dbus.dbus_message_new_method_call(PORTAL_BUS, p->session, "org.freedesktop.portal.Session", "Close");
        if (m) {
            rtcs_dbus.dbus_message_set_no_reply(m, TRUE);
            rtcs_dbus.dbus_connection_send(p->bus, m, NULL);
            rtcs_dbus.dbus_connection_flush(p->bus);
            rtcs_dbus.dbus_message_unref(m);
        }
    }
    rtcs_dbus.dbus_connection_close(p->bus);
    rtcs_dbus.dbus_connection_unref(p->bus);
    free(p);
}
