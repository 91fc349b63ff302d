#include "CCurlShims.h"

#include <string.h>

// See CCurlShims.h for why these wrappers exist and the capture's invariants.

// A status line starts a new response (after a redirect or a 1xx): forget the previous one.
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

static struct {
    CURLcode (*global_init)(long);
    void (*global_cleanup)(void);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    CURLcode (*easy_perform)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    CURLU *(*url)(void);
    void (*url_cleanup)(CURLU *);
    CURLUcode (*url_set)(CURLU *, CURLUPart, const char *, unsigned int);
    CURLUcode (*url_get)(const CURLU *, CURLUPart, char **, unsigned int);
    void (*free)(void *);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_add_handle)(CURLM *, CURL *);
    CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
    CURLMcode (*multi_perform)(CURLM *, int *);
    CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd *, unsigned int, int, int *);
    CURLMsg *(*multi_info_read)(CURLM *, int *);
    CURLMcode (*multi_cleanup)(CURLM *);
} api;
// The library is loaded while somebody holds it (rtcs_curl_hold), and unloaded with its whole
// dependency chain when the last holder lets go: a WHIP share needs it for two requests, the
// POST at the start and the DELETE at the end, and its ~4 MiB resident have no reason to stay
// mapped in between. `lock` guards the three below and every load and unload.
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *library;
static int holders;
static char load_error[256] = "libcurl not loaded";

// Address space a load of libcurl leaves free, or it fails. libcurl's chain takes ~30 MiB of
// address space; under a tight `ulimit -v` a load that just fits left nothing for the request
// right after it, whose allocations (the response buffers, libcurl's handle, Swift's strings)
// then failed, some of them in Swift, which traps. Mapped (PROT_NONE, never touched: no memory,
// only address space) around the load and unmapped after it, it turns that band into a load
// that fails with one clear error.
#define RTCS_CURL_LOAD_HEADROOM (1u << 20)

static int load_locked_with_headroom(void);

// Loads libcurl and runs curl_global_init; with `lock` held. 0, or -1 with load_error set.
static int load_locked(void) {
    void *headroom = mmap(NULL, RTCS_CURL_LOAD_HEADROOM, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (headroom == MAP_FAILED) {
        snprintf(load_error, sizeof load_error, "cannot load libcurl.so.4: out of address space (%s)", strerror(errno));
        return -1;
    }
    int status = load_locked_with_headroom();
    munmap(headroom, RTCS_CURL_LOAD_HEADROOM);
    return status;
}

static int load_locked_with_headroom(void) {
    void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        // "failed to map segment", "cannot allocate memory": the address space, not a missing package.
        const char *why = dlerror();
        int missing = why != NULL && strstr(why, "cannot open shared object file") != NULL;
        snprintf(load_error, sizeof load_error, "cannot load libcurl.so.4%s: %s",
                 missing ? " (install libcurl4)" : "", why != NULL ? why : "?");
        return -1;
    }
#define RESOLVE(field, name)                                                                         \
    do {                                                                                             \
        *(void **)&api.field = dlsym(lib, name);                                                     \
        if (!api.field) {                                                                            \
            snprintf(load_error, sizeof load_error, "libcurl.so.4 has no %s (too old?)", name);      \
            dlclose(lib);                                                                            \
            return -1;                                                                               \
        }                                                                                            \
    } while (0)
    RESOLVE(global_init, "curl_global_init");
    RESOLVE(global_cleanup, "curl_global_cleanup");
    RESOLVE(easy_init, "curl_easy_init");
    RESOLVE(easy_cleanup, "curl_easy_cleanup");
    RESOLVE(easy_perform, "curl_easy_perform");
    RESOLVE(easy_strerror, "curl_easy_strerror");
    RESOLVE(easy_setopt, "curl_easy_setopt");
    RESOLVE(easy_getinfo, "curl_easy_getinfo");
    RESOLVE(slist_append, "curl_slist_append");
    RESOLVE(slist_free_all, "curl_slist_free_all");
    RESOLVE(url, "curl_url");
    RESOLVE(url_cleanup, "curl_url_cleanup");
    RESOLVE(url_set, "curl_url_set");
    RESOLVE(url_get, "curl_url_get");
    RESOLVE(free, "curl_free");
    RESOLVE(multi_init, "curl_multi_init");
    RESOLVE(multi_add_handle, "curl_multi_add_handle");
    RESOLVE(multi_remove_handle, "curl_multi_remove_handle");
    RESOLVE(multi_perform, "curl_multi_perform");
    RESOLVE(multi_poll, "curl_multi_poll");
    RESOLVE(multi_info_read, "curl_multi_info_read");
    RESOLVE(multi_cleanup, "curl_multi_cleanup");
#undef RESOLVE
    if (api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(load_error, sizeof load_error, "curl_global_init failed");
        dlclose(lib);
        return -1;
    }
    library = lib;
    return 0;
}

int rtcs_curl_hold(void) {
    pthread_mutex_lock(&lock);
    int status = library != NULL || load_locked() == 0 ? 0 : -1;
    if (status == 0) holders++;
    pthread_mutex_unlock(&lock);
    return status;
}

void rtcs_curl_release(void) {
    pthread_mutex_lock(&lock);
    if (holders > 0 && --holders == 0 && library != NULL) {
        api.global_cleanup();
        dlclose(library);
        library = NULL;
        snprintf(load_error, sizeof load_error, "libcurl not loaded");
    }
    pthread_mutex_unlock(&lock);
}

int rtcs_curl_is_loaded(void) {
    pthread_mutex_lock(&lock);
    int loaded = library != NULL;
    pthread_mutex_unlock(&lock);
    return loaded;
}

const char *rtcs_curl_load_error(void) { return load_error; }

// Callers hold the library (rtcs_curl_hold) around every call below.
CURL *rtcs_curl_easy_init(void) { return library != NULL ? api.easy_init() : NULL; }
void rtcs_curl_easy_cleanup(CURL *curl) { api.easy_cleanup(curl); }
CURLcode rtcs_curl_easy_perform(CURL *curl) { return api.easy_perform(curl); }
const char *rtcs_curl_easy_strerror(CURLcode code) {
    return library != NULL ? api.easy_strerror(code) : load_error;
}
struct curl_slist *rtcs_curl_slist_append(struct curl_slist *list, const char *line) {
    return api.slist_append(list, line);
}
void rtcs_curl_slist_free_all(struct curl_slist *list) { api.slist_free_all(list); }
CURLU *rtcs_curl_url(void) { return library != NULL ? api.url() : NULL; }
void rtcs_curl_url_cleanup(CURLU *url) { api.url_cleanup(url); }
CURLUcode rtcs_curl_url_set(CURLU *url, CURLUPart part, const char *content, unsigned int flags) {
    return api.url_set(url, part, content, flags);
}
CURLUcode rtcs_curl_url_get(const CURLU *url, CURLUPart part, char **content, unsigned int flags) {
    return api.url_get(url, part, content, flags);
}
void rtcs_curl_free(void *p) { api.free(p); }

int rtcs_curl_stop_create(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

void rtcs_curl_stop_raise(int stop) {
    uint64_t one = 1;
    // Never read: the counter only grows, so the fd stays readable. EAGAIN (the counter at its
    // maximum) leaves it readable too.
    while (write(stop, &one, sizeof one) < 0 && errno == EINTR) {}
}

int rtcs_curl_stop_is_raised(int stop) {
    struct pollfd p = {.fd = stop, .events = POLLIN};
    return poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

void rtcs_curl_stop_destroy(int stop) {
    if (stop >= 0) close(stop);
}

CURLcode rtcs_curl_perform(CURL *curl, int stop) {
    if (curl == NULL) return CURLE_BAD_FUNCTION_ARGUMENT;
    if (stop < 0) return api.easy_perform(curl);
    if (rtcs_curl_stop_is_raised(stop)) return CURLE_ABORTED_BY_CALLBACK;
    CURLM *multi = api.multi_init();
    if (multi == NULL) return CURLE_OUT_OF_MEMORY;
    if (api.multi_add_handle(multi, curl) != CURLM_OK) {
        api.multi_cleanup(multi);
        return CURLE_OUT_OF_MEMORY;
    }
    CURLcode result = CURLE_OK;
    int running = 1;
    for (;;) {
        CURLMcode mc = api.multi_perform(multi, &running);
        if (mc != CURLM_OK) {
            result = mc == CURLM_OUT_OF_MEMORY ? CURLE_OUT_OF_MEMORY : CURLE_RECV_ERROR;
            break;
        }
        if (running == 0) {
            int left = 0;
            CURLMsg *msg;
            result = CURLE_GOT_NOTHING;  // replaced by the transfer's own result below
            while ((msg = api.multi_info_read(multi, &left)) != NULL) {
                if (msg->msg == CURLMSG_DONE && msg->easy_handle == curl) result = msg->data.result;
            }
            break;
        }
        // libcurl's own timeouts (connect, total) still apply: the poll returns for them.
        struct curl_waitfd extra = {.fd = stop, .events = CURL_WAIT_POLLIN, .revents = 0};
        mc = api.multi_poll(multi, &extra, 1, 1000, NULL);
        if (mc != CURLM_OK) {
            result = mc == CURLM_OUT_OF_MEMORY ? CURLE_OUT_OF_MEMORY : CURLE_RECV_ERROR;
            break;
        }
        if (extra.revents != 0 || rtcs_curl_stop_is_raised(stop)) {
            result = CURLE_ABORTED_BY_CALLBACK;
            break;
        }
    }
    api.multi_remove_handle(multi, curl);
    api.multi_cleanup(multi);
    return result;
}

static void reset_if_status_line(rtcs_curl_response *r, const char *line, size_t n) {
    if (n >= 5 && memcmp(line, "HTTP/", 5) == 0) {
        r->header_length = 0;
        r->body_length = 0;
    }
}

static size_t on_header(char *data, size_t size, size_t count, void *user) {
    rtcs_curl_response *r = user;
    size_t n = size * count;  // libcurl guarantees size == 1
    reset_if_status_line(r, data, n);
    if (n > r->header_capacity - r->header_length) {
        r->overflow = RTCS_CURL_OVERFLOW_HEADERS;
        return 0;  // short write: libcurl aborts the transfer
    }
    memcpy(r->headers + r->header_length, data, n);
    r->header_length += n;
    return n;
}

static size_t on_body(char *data, size_t size, size_t count, void *user) {
    rtcs_curl_response *r = user;
    size_t n = size * count;
    if (n > r->body_capacity - r->body_length) {
        r->overflow = RTCS_CURL_OVERFLOW_BODY;
        return 0;
    }
    memcpy(r->body + r->body_length, data, n);
    r->body_length += n;
    return n;
}

CURLcode rtcs_curl_capture(CURL *curl, rtcs_curl_response *response) {
    if (curl == NULL || response == NULL) return CURLE_BAD_FUNCTION_ARGUMENT;
    if (response->header_length > response->header_capacity ||
        response->body_length > response->body_capacity) return CURLE_BAD_FUNCTION_ARGUMENT;
    CURLcode rc;
    if ((rc = api.easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header)) != CURLE_OK) return rc;
    if ((rc = api.easy_setopt(curl, CURLOPT_HEADERDATA, (void *)response)) != CURLE_OK) return rc;
    if ((rc = api.easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body)) != CURLE_OK) return rc;
    return api.easy_setopt(curl, CURLOPT_WRITEDATA, (void *)response);
}

CURLcode rtcs_curl_setopt_long(CURL *curl, CURLoption option, long value) {
    if (curl == NULL) return CURLE_BAD_FUNCTION_ARGUMENT;
    return api.easy_setopt(curl, option, value);
}

CURLcode rtcs_curl_setopt_string(CURL *curl, CURLoption option, const char *value) {
    if (curl == NULL) return CURLE_BAD_FUNCTION_ARGUMENT;
    return api.easy_setopt(curl, option, value);
}

CURLcode rtcs_curl_setopt_pointer(CURL *curl, CURLoption option, void *value) {
    if (curl == NULL) return CURLE_BAD_FUNCTION_ARGUMENT;
    return api.easy_setopt(curl, option, value);
}

CURLcode rtcs_curl_getinfo_long(CURL *curl, CURLINFO info, long *value) {
    if (curl == NULL || value == NULL) return CURLE_BAD_FUNCTION_ARGUMENT;
    return api.easy_getinfo(curl, info, value);
}

CURLcode rtcs_curl_getinfo_double(CURL *curl, CURLINFO info, double *value) {
    if (curl == NULL || value == NULL) return CURLE_BAD_FUNCTION_ARGUMENT;
    return api.easy_getinfo(curl, info, value);
}

CURLcode rtcs_curl_getinfo_string(CURL *curl, CURLINFO info, const char **value) {
    if (curl == NULL || value == NULL) return CURLE_BAD_FUNCTION_ARGUMENT;
    return api.easy_getinfo(curl, info, (char **)value);
}
