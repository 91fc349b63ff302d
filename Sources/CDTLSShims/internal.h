#ifndef RTCS_DTLS_INTERNAL_H
#define RTCS_DTLS_INTERNAL_H

// Shared between the shim's files; not part of the module's public header.

#include "CDTLSShims.h"

#include "openssl_calls.h"

/// Output datagrams queued before the oldest is dropped: a few flights and their retransmissions.
#define RTCS_SSL_QUEUE_SLOTS 16

struct rtcs_ssl_cert {
    EVP_PKEY *key;
    X509 *x509;
};

/// The datagram memory BIO's state: one received datagram waiting for OpenSSL to read it, and a
/// ring of datagrams OpenSSL wrote, each one BIO_write (one flush of its handshake buffer).
typedef struct rtcs_ssl_datagrams {
    const uint8_t *in;        // borrowed for the duration of rtcs_ssl_endpoint_receive
    size_t in_len;
    uint8_t out[RTCS_SSL_QUEUE_SLOTS][RTCS_SSL_MAX_DATAGRAM];
    size_t out_len[RTCS_SSL_QUEUE_SLOTS];
    unsigned head;            // free-running: next slot to pop is head % slots
    unsigned tail;            // free-running: next slot to fill is tail % slots
    uint64_t dropped;
} rtcs_ssl_datagrams;

struct rtcs_ssl_endpoint {
    SSL_CTX *ctx;
    SSL *ssl;
    rtcs_ssl_datagrams io;
    const EVP_MD *expected_md;
    uint8_t expected[EVP_MAX_MD_SIZE];
    unsigned expected_len;
    unsigned initial_timeout_us;
    int fingerprint_mismatch;
    int peer_alert;
    int failed;               // sticky: a fatal status was returned once
    uint64_t retransmissions;
    char error[160];
};

/// The BIO that carries `io`'s datagrams; returns NULL on failure.
BIO *rtcs_ssl_datagram_bio_new(rtcs_ssl_datagrams *io);

/// The digest for a hash id, or NULL.
const EVP_MD *rtcs_ssl_md(rtcs_ssl_hash hash);

#endif
