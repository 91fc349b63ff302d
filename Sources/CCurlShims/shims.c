#include "CCurlShims.h"

#include <string.h>

// See CCurlShims.h for why these wrappers exist and the capture's invariants.

// A status line starts a new response (after a redirect or a 1xx): forget the previous one.
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
    if ((rc = curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header)) != CURLE_OK) return rc;
    if ((rc = curl_easy_setopt(curl, CURLOPT_HEADERDATA, (void *)response)) != CURLE_OK) return rc;
    if ((rc = curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body)) != CURLE_OK) return rc;
    return curl_easy_setopt(curl, CURLOPT_WRITEDATA, (void *)response);
}

CURLcode rtcs_curl_setopt_long(CURL *curl, CURLoption option, long value) {
    if (curl == NULL) return CURLE_BAD_FUNCTION_ARGUMENT;
    return curl_easy_setopt(curl, option, value);
}

CURLcode rtcs_curl_setopt_string(CURL *curl, CURLoption option, const char *value) {
    if (curl == NULL) return CURLE_BAD_FUNCTION_ARGUMENT;
    return curl_easy_setopt(curl, option, value);
}

CURLcode rtcs_curl_setopt_pointer(CURL *curl, CURLoption option, void *value) {
    if (curl == NULL) return CURLE_BAD_FUNCTION_ARGUMENT;
    return curl_easy_setopt(curl, option, value);
}

CURLcode rtcs_curl_getinfo_long(CURL *curl, CURLINFO info, long *value) {
    if (curl == NULL || value == NULL) return CURLE_BAD_FUNCTION_ARGUMENT;
    return curl_easy_getinfo(curl, info, value);
}

CURLcode rtcs_curl_getinfo_double(CURL *curl, CURLINFO info, double *value) {
    if (curl == NULL || value == NULL) return CURLE_BAD_FUNCTION_ARGUMENT;
    return curl_easy_getinfo(curl, info, value);
}

CURLcode rtcs_curl_getinfo_string(CURL *curl, CURLINFO info, const char **value) {
    if (curl == NULL || value == NULL) return CURLE_BAD_FUNCTION_ARGUMENT;
    return curl_easy_getinfo(curl, info, (char **)value);
}
