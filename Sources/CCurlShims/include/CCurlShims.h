#ifndef RTCS_CURL_SHIMS_H
#define RTCS_CURL_SHIMS_H

// Non-variadic doors into libcurl for Swift, and the response capture the WHIP client uses.
//
// Why this exists: curl_easy_setopt and curl_easy_getinfo are variadic (and wrapped in
// type-checking macros), which Swift cannot call; each argument type Swift needs gets a
// fixed-signature wrapper here. The capture callbacks live in C too, so libcurl calls plain C
// functions with a plain struct: no Swift closure or context crosses into libcurl.
//
// Invariants of the capture: the caller hands in the memory (two buffers of fixed capacity);
// nothing here allocates. A response larger than a buffer is refused, not truncated: the
// callback reports a short write, libcurl aborts the transfer with CURLE_WRITE_ERROR, and
// `overflow` says which buffer was full. Only the last response of a transfer is kept: every
// status line ("HTTP/…") empties both buffers, so the headers and body of followed redirects
// and of 1xx interim responses are dropped.

#include <curl/curl.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Which buffer of an `rtcs_curl_response` ran out of room.
typedef enum rtcs_curl_overflow {
    RTCS_CURL_OVERFLOW_NONE = 0,     ///< everything fitted
    RTCS_CURL_OVERFLOW_HEADERS = 1,  ///< the header block was larger than `header_capacity`
    RTCS_CURL_OVERFLOW_BODY = 2,     ///< the body was larger than `body_capacity`
} rtcs_curl_overflow;

/// The last response of a transfer: raw header lines (CRLF as received) and body bytes, in
/// caller-owned buffers. Set `headers`/`body` and the capacities, zero the rest, then pass it
/// to `rtcs_curl_capture`; it must stay at the same address until the transfer ends.
typedef struct rtcs_curl_response {
    char *headers;
    size_t header_capacity;
    size_t header_length;
    char *body;
    size_t body_capacity;
    size_t body_length;
    rtcs_curl_overflow overflow;
} rtcs_curl_response;

/// Points `curl`'s header and write callbacks at `response`; returns CURLE_OK, or the libcurl
/// error (CURLE_BAD_FUNCTION_ARGUMENT for a null argument).
CURLcode rtcs_curl_capture(CURL *curl, rtcs_curl_response *response);

// libcurl is loaded when needed (dlopen of libcurl.so.4), not linked: only a WHIP session needs
// it, and linking it maps its whole dependency chain (GnuTLS, Kerberos, LDAP, SSH, HTTP/2, …,
// about 4 MiB resident) into every process, a file share or `--peer` included. It stays loaded
// only while held: the last release runs curl_global_cleanup and unloads it, chain and all, so
// a WHIP share carries none of it between its POST and its DELETE. The functions below are
// libcurl's, called through pointers resolved at load; call them only while holding.

/// Holds libcurl, loading it (and running curl_global_init) if nobody holds it. 0 when usable;
/// -1 (with a line in rtcs_curl_load_error, nothing held) when the library or one of its
/// symbols is missing. Thread-safe; every 0 needs one rtcs_curl_release.
int rtcs_curl_hold(void);
/// Lets go of one hold; the last one unloads the library. Thread-safe.
void rtcs_curl_release(void);
/// Whether the library is loaded now (for tests and diagnostics).
int rtcs_curl_is_loaded(void);
const char *rtcs_curl_load_error(void);

// A stop for requests in flight: an eventfd that becomes readable, and stays readable, once
// raised. Why an fd and not a flag the progress callback reads: libcurl calls that callback
// about once a second while it waits for a silent server, so a stop would take up to a second;
// a readable fd in the transfer's own poll ends the wait at once, from any thread, with no lock
// and no callback into Swift.

/// A new, unraised stop (an eventfd, close-on-exec); -1 when the process has no fd to spare.
int rtcs_curl_stop_create(void);
/// Raises `stop`: every transfer watching it ends within one poll wake-up. Any thread;
/// raising twice is raising once.
void rtcs_curl_stop_raise(int stop);
/// 1 once `stop` was raised, else 0.
int rtcs_curl_stop_is_raised(int stop);
/// Closes `stop`; no transfer may be watching it.
void rtcs_curl_stop_destroy(int stop);

/// curl_easy_perform that also watches `stop` (-1: none). Runs the transfer on a multi handle
/// whose poll waits on `stop` beside libcurl's sockets, so a raised stop ends it within
/// milliseconds with CURLE_ABORTED_BY_CALLBACK; otherwise returns what curl_easy_perform
/// would (CURLE_OK, or the transfer's error). CURLE_OUT_OF_MEMORY when no multi handle can be made.
CURLcode rtcs_curl_perform(CURL *curl, int stop);

CURL *rtcs_curl_easy_init(void);
void rtcs_curl_easy_cleanup(CURL *curl);
CURLcode rtcs_curl_easy_perform(CURL *curl);
const char *rtcs_curl_easy_strerror(CURLcode code);
struct curl_slist *rtcs_curl_slist_append(struct curl_slist *list, const char *line);
void rtcs_curl_slist_free_all(struct curl_slist *list);
CURLU *rtcs_curl_url(void);
void rtcs_curl_url_cleanup(CURLU *url);
CURLUcode rtcs_curl_url_set(CURLU *url, CURLUPart part, const char *content, unsigned int flags);
CURLUcode rtcs_curl_url_get(const CURLU *url, CURLUPart part, char **content, unsigned int flags);
void rtcs_curl_free(void *p);

/// curl_easy_setopt for an option taking a long; returns CURLE_OK or the libcurl error.
CURLcode rtcs_curl_setopt_long(CURL *curl, CURLoption option, long value);

/// curl_easy_setopt for an option taking a string (libcurl copies it, except
/// CURLOPT_POSTFIELDS: use CURLOPT_COPYPOSTFIELDS); returns CURLE_OK or the libcurl error.
CURLcode rtcs_curl_setopt_string(CURL *curl, CURLoption option, const char *value);

/// curl_easy_setopt for an option taking a pointer (a curl_slist, an error buffer of
/// CURL_ERROR_SIZE bytes); returns CURLE_OK or the libcurl error.
CURLcode rtcs_curl_setopt_pointer(CURL *curl, CURLoption option, void *value);

/// curl_easy_getinfo for a long (CURLINFO_RESPONSE_CODE, …); returns CURLE_OK or the libcurl
/// error (`*value` untouched).
CURLcode rtcs_curl_getinfo_long(CURL *curl, CURLINFO info, long *value);

/// curl_easy_getinfo for a double (CURLINFO_TOTAL_TIME, …); returns CURLE_OK or the error.
CURLcode rtcs_curl_getinfo_double(CURL *curl, CURLINFO info, double *value);

/// curl_easy_getinfo for a string owned by `curl` (CURLINFO_EFFECTIVE_URL, …), valid until
/// the next transfer or cleanup; returns CURLE_OK or the libcurl error (`*value` untouched).
CURLcode rtcs_curl_getinfo_string(CURL *curl, CURLINFO info, const char **value);

#ifdef __cplusplus
}
#endif

#endif
