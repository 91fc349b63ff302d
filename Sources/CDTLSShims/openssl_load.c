// Loads OpenSSL on first use and fills the table of openssl_api.h (see there for why).
#include "openssl_api.h"

#include "CDTLSShims.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

struct rtcs_openssl_api rtcs_openssl;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int status = -1;
static char error_text[256] = "OpenSSL not loaded";

static void load(void) {
    // libssl.so.3 depends on libcrypto.so.3: dlsym on its handle finds both.
    void *lib = dlopen("libssl.so.3", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        // "failed to map segment": the address space ran out, not a missing package.
        const char *why = dlerror();
        int missing = why != NULL && strstr(why, "cannot open shared object file") != NULL;
        snprintf(error_text, sizeof error_text, "cannot load libssl.so.3%s: %s", missing ? " (install libssl3)" : "",
                 why != NULL ? why : "?");
        return;
    }
#define RTCS_OPENSSL_RESOLVE(name)                                                              \
    *(void **)&rtcs_openssl.name = dlsym(lib, #name);                                           \
    if (!rtcs_openssl.name) {                                                                   \
        snprintf(error_text, sizeof error_text, "libssl.so.3 has no %s (OpenSSL 3 needed)", #name); \
        return;                                                                                 \
    }
    RTCS_OPENSSL_FUNCTIONS(RTCS_OPENSSL_RESOLVE)
#undef RTCS_OPENSSL_RESOLVE
    status = 0;
}

int rtcs_openssl_load(void) {
    pthread_once(&once, load);
    return status;
}

const char *rtcs_openssl_load_error(void) { return error_text; }
