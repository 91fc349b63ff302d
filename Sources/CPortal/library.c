#include "library.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>

struct rtcs_dbus_api rtcs_dbus;
struct rtcs_pw_api rtcs_pipewire;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int loaded;
static char load_error[256];

/// dlopen `soname` and fill `count` pointers of `table` from `names`; 0 or -1 with the reason.
static int load(const char *soname, const char *package, const char *const *names, void **table, size_t count) {
    void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(load_error, sizeof load_error, "portal: cannot load %s (%s): install %s", soname, dlerror(), package);
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        table[i] = dlsym(library, names[i]);
        if (!table[i]) {
            snprintf(load_error, sizeof load_error, "portal: %s has no %s: install %s", soname, names[i], package);
            dlclose(library);
            return -1;
        }
    }
    return 0;
}

#define RTCS_SYMBOL(result, name, arguments) #name,
static const char *const dbus_names[] = { RTCS_DBUS_CALLS(RTCS_SYMBOL) };
static const char *const pw_names[] = { RTCS_PW_CALLS(RTCS_SYMBOL) };
#undef RTCS_SYMBOL

void rtcs_portal_fail(char *error, size_t len, const char *format, ...) {
    if (!error || len == 0) return;
    va_list args;
    va_start(args, format);
    vsnprintf(error, len, format, args);
    va_end(args);
}

int rtcs_portal_load(char *error, size_t error_len) {
    pthread_mutex_lock(&lock);
    if (!loaded) {
        _Static_assert(sizeof rtcs_dbus == sizeof dbus_names, "one name per D-Bus call");
        _Static_assert(sizeof rtcs_pipewire == sizeof pw_names, "one name per PipeWire call");
        if (load("libdbus-1.so.3", "libdbus-1-3", dbus_names, (void **)&rtcs_dbus, sizeof dbus_names / sizeof *dbus_names) == 0
            && load("libpipewire-0.3.so.0", "libpipewire-0.3-0", pw_names, (void **)&rtcs_pipewire,
                    sizeof pw_names / sizeof *pw_names) == 0)
            loaded = 1;
    }
    int ok = loaded;
    if (!ok && error && error_len) snprintf(error, error_len, "%s", load_error);
    pthread_mutex_unlock(&lock);
    return ok ? 0 : -1;
}
