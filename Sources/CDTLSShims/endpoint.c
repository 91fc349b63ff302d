#include "internal.h"

#include <stdlib.h>
#include <string.h>

// One DTLS 1.2 association. OpenSSL does the protocol; this file only sets it up for WebRTC
// (RFC 8827: ECDHE, both sides present a certificate, use_srtp, the peer is trusted by
// fingerprint alone), moves datagrams through the BIO in bio.c, and sorts OpenSSL's outcome into
// rtcs_ssl_status. A failure is sticky: once a fatal status is returned, the SSL object is not
// touched again and every call returns that status.

/// ECDHE only (forward secrecy, RFC 8827 §6.5), AEAD first; RSA suites too, because some
/// servers still present RSA certificates.
static const char cipher_list[] =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:"
    "ECDHE-ECDSA-AES128-SHA:ECDHE-RSA-AES128-SHA";

/// Retransmission timers double up to this (RFC 6347 §4.2.4.1: at least 60 s).
static const unsigned max_timeout_us = 60u * 1000u * 1000u;

/// Records the first queued OpenSSL error as text, then empties the queue.
static void record_error(rtcs_ssl_endpoint *ep, const char *fallback) {
    unsigned long code = ERR_peek_error();
    if (code != 0) {
        ERR_error_string_n(code, ep->error, sizeof ep->error);
    } else {
        strncpy(ep->error, fallback, sizeof ep->error - 1);
    }
    ERR_clear_error();
}

/// Accepts the peer's certificate only if its digest is the one the SDP announced; there is no
/// chain to build, the fingerprint is the trust (RFC 8122 §5).
static int verify_fingerprint(X509_STORE_CTX *store, void *arg) {
    rtcs_ssl_endpoint *ep = arg;
    X509 *peer = X509_STORE_CTX_get0_cert(store);
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    if (peer != NULL && X509_digest(peer, ep->expected_md, digest, &len) && len == ep->expected_len
        && CRYPTO_memcmp(digest, ep->expected, len) == 0) {
        X509_STORE_CTX_set_error(store, X509_V_OK);
        return 1;
    }
    ep->fingerprint_mismatch = 1;
    X509_STORE_CTX_set_error(store, X509_V_ERR_CERT_REJECTED);
    return 0;
}

/// Notes a fatal alert from the peer, so the failure can say it was the peer's decision.
static void watch_alerts(const SSL *ssl, int where, int value) {
    if ((where & SSL_CB_READ_ALERT) == 0 || (value >> 8) != SSL3_AL_FATAL) return;
    rtcs_ssl_endpoint *ep = SSL_get_app_data(ssl);
    if (ep != NULL) ep->peer_alert = value & 0xFF;
}

/// The DTLS timer: the configured first timeout, then doubling (RFC 6347 §4.2.4.1).
static unsigned int next_timeout(SSL *ssl, unsigned int previous_us) {
    rtcs_ssl_endpoint *ep = SSL_get_app_data(ssl);
    if (previous_us == 0) return ep->initial_timeout_us;
    return previous_us >= max_timeout_us / 2 ? max_timeout_us : previous_us * 2;
}

static SSL_CTX *make_context(rtcs_ssl_endpoint *ep, const rtcs_ssl_cert *cert, const char *srtp_profiles) {
    SSL_CTX *ctx = SSL_CTX_new(DTLS_method());
    if (ctx == NULL) return NULL;
    int ok = SSL_CTX_set_min_proto_version(ctx, DTLS1_2_VERSION)
        && SSL_CTX_set_max_proto_version(ctx, DTLS1_2_VERSION)
        && SSL_CTX_use_certificate(ctx, cert->x509) == 1
        && SSL_CTX_use_PrivateKey(ctx, cert->key) == 1
        && SSL_CTX_check_private_key(ctx) == 1
        && SSL_CTX_set_cipher_list(ctx, cipher_list) == 1
        && SSL_CTX_set1_groups_list(ctx, "X25519:P-256:P-384") == 1
        && SSL_CTX_set_tlsext_use_srtp(ctx, srtp_profiles) == 0; // 0 is success here
    if (!ok) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    // No renegotiation (a peer could restart the handshake mid-call), no session tickets (every
    // association is new), no MTU probing (the caller sets the MTU; the BIO has no socket).
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_TICKET | SSL_OP_NO_QUERY_MTU);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    SSL_CTX_set_cert_verify_callback(ctx, verify_fingerprint, ep);
    return ctx;
}

static rtcs_ssl_status fail(rtcs_ssl_endpoint *ep, rtcs_ssl_status status, const char *fallback) {
    record_error(ep, fallback);
    ep->failed = status;
    return status;
}

/// Sorts the outcome of an SSL call that returned `ret`.
static rtcs_ssl_status outcome(rtcs_ssl_endpoint *ep, int ret) {
    switch (SSL_get_error(ep->ssl, ret)) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
        ERR_clear_error();
        return SSL_is_init_finished(ep->ssl) ? RTCS_SSL_ESTABLISHED : RTCS_SSL_HANDSHAKING;
    case SSL_ERROR_ZERO_RETURN:
        ERR_clear_error();
        return RTCS_SSL_CLOSED;
    default:
        if (ep->fingerprint_mismatch) return fail(ep, RTCS_SSL_FINGERPRINT_MISMATCH, "fingerprint mismatch");
        if (ep->peer_alert >= 0) return fail(ep, RTCS_SSL_PEER_ALERT, "fatal alert from the peer");
        return fail(ep, RTCS_SSL_PROTOCOL_ERROR, "DTLS handshake failed");
    }
}

/// Runs the handshake as far as the input allows; once established, reads what arrived (a
/// close_notify, a retransmitted flight to answer; application data is not used and dropped).
static rtcs_ssl_status drive(rtcs_ssl_endpoint *ep) {
    if (!SSL_is_init_finished(ep->ssl)) {
        int ret = SSL_do_handshake(ep->ssl);
        if (ret <= 0) return outcome(ep, ret);
    }
    unsigned char sink[512];
    for (;;) {
        int ret = SSL_read(ep->ssl, sink, (int)sizeof sink);
        if (ret <= 0) return outcome(ep, ret);
    }
}

rtcs_ssl_endpoint *rtcs_ssl_endpoint_new(const rtcs_ssl_cert *cert, const rtcs_ssl_endpoint_config *config) {
    if (rtcs_openssl_load() != 0 || cert == NULL || config == NULL || config->srtp_profiles == NULL || config->mtu < 256
        || config->mtu > RTCS_SSL_MAX_DATAGRAM || config->initial_timeout_ms == 0
        || config->initial_timeout_ms > max_timeout_us / 1000 || config->expected_digest == NULL) {
        return NULL;
    }
    const EVP_MD *md = rtcs_ssl_md(config->expected_hash);
    if (md == NULL || config->expected_digest_len != (size_t)EVP_MD_get_size(md)) return NULL;

    rtcs_ssl_endpoint *ep = calloc(1, sizeof *ep);
    if (ep == NULL) return NULL;
    ep->expected_md = md;
    memcpy(ep->expected, config->expected_digest, config->expected_digest_len);
    ep->expected_len = (unsigned)config->expected_digest_len;
    ep->initial_timeout_us = config->initial_timeout_ms * 1000u;
    ep->peer_alert = -1;

    BIO *bio = NULL;
    int ok = (ep->ctx = make_context(ep, cert, config->srtp_profiles)) != NULL
        && (ep->ssl = SSL_new(ep->ctx)) != NULL
        && SSL_set_app_data(ep->ssl, ep)
        && (bio = rtcs_ssl_datagram_bio_new(&ep->io)) != NULL;
    if (ok) {
        SSL_set_bio(ep->ssl, bio, bio); // one BIO both ways; the SSL owns it now
        ok = SSL_set_mtu(ep->ssl, config->mtu) > 0; // returns the MTU set, 0 if refused
    }
    if (!ok) {
        ERR_clear_error();
        rtcs_ssl_endpoint_free(ep);
        return NULL;
    }
    DTLS_set_timer_cb(ep->ssl, next_timeout);
    SSL_set_info_callback(ep->ssl, watch_alerts);
    if (config->is_client) {
        SSL_set_connect_state(ep->ssl);
        if (drive(ep) < 0) { // queues the ClientHello
            rtcs_ssl_endpoint_free(ep);
            return NULL;
        }
    } else {
        SSL_set_accept_state(ep->ssl);
    }
    ERR_clear_error();
    return ep;
}

void rtcs_ssl_endpoint_free(rtcs_ssl_endpoint *ep) {
    if (ep == NULL) return;
    SSL_free(ep->ssl);
    SSL_CTX_free(ep->ctx);
    OPENSSL_cleanse(ep->io.out, sizeof ep->io.out);
    free(ep);
    ERR_clear_error();
}

rtcs_ssl_status rtcs_ssl_endpoint_receive(rtcs_ssl_endpoint *ep, const uint8_t *data, size_t len) {
    if (ep->failed) return ep->failed;
    ep->io.in = data;
    ep->io.in_len = len < RTCS_SSL_MAX_DATAGRAM ? len : RTCS_SSL_MAX_DATAGRAM;
    rtcs_ssl_status status = drive(ep);
    ep->io.in = NULL; // never outlives the caller's buffer
    ep->io.in_len = 0;
    ERR_clear_error();
    return status;
}

int64_t rtcs_ssl_endpoint_timeout_us(rtcs_ssl_endpoint *ep) {
    if (ep->failed) return -1;
    struct timeval left;
    int running = DTLSv1_get_timeout(ep->ssl, &left) == 1;
    ERR_clear_error();
    return running ? (int64_t)left.tv_sec * 1000000 + left.tv_usec : -1;
}

rtcs_ssl_status rtcs_ssl_endpoint_handle_timeout(rtcs_ssl_endpoint *ep) {
    if (ep->failed) return ep->failed;
    int ret = DTLSv1_handle_timeout(ep->ssl);
    if (ret < 0) return fail(ep, RTCS_SSL_TIMED_OUT, "DTLS handshake timed out");
    if (ret > 0) ep->retransmissions++;
    ERR_clear_error();
    return SSL_is_init_finished(ep->ssl) ? RTCS_SSL_ESTABLISHED : RTCS_SSL_HANDSHAKING;
}

int rtcs_ssl_endpoint_close(rtcs_ssl_endpoint *ep) {
    if (ep->failed || !SSL_is_init_finished(ep->ssl)) return 0;
    int ret = SSL_shutdown(ep->ssl);
    ERR_clear_error();
    return ret >= 0;
}

size_t rtcs_ssl_endpoint_next_datagram_size(const rtcs_ssl_endpoint *ep) {
    if (ep->io.head == ep->io.tail) return 0;
    return ep->io.out_len[ep->io.head % RTCS_SSL_QUEUE_SLOTS];
}

size_t rtcs_ssl_endpoint_pop_datagram(rtcs_ssl_endpoint *ep, uint8_t *out, size_t cap) {
    size_t len = rtcs_ssl_endpoint_next_datagram_size(ep);
    if (len == 0 || out == NULL || cap < len) return 0;
    memcpy(out, ep->io.out[ep->io.head % RTCS_SSL_QUEUE_SLOTS], len);
    ep->io.head++;
    return len;
}

uint64_t rtcs_ssl_endpoint_dropped_output(const rtcs_ssl_endpoint *ep) { return ep->io.dropped; }

uint64_t rtcs_ssl_endpoint_retransmissions(const rtcs_ssl_endpoint *ep) { return ep->retransmissions; }

unsigned rtcs_ssl_endpoint_srtp_profile(rtcs_ssl_endpoint *ep) {
    if (ep->failed || !SSL_is_init_finished(ep->ssl)) return 0;
    SRTP_PROTECTION_PROFILE *profile = SSL_get_selected_srtp_profile(ep->ssl);
    ERR_clear_error();
    return profile != NULL ? (unsigned)profile->id : 0;
}

int rtcs_ssl_endpoint_export_srtp(rtcs_ssl_endpoint *ep, uint8_t *out, size_t len) {
    static const char label[] = "EXTRACTOR-dtls_srtp";
    if (ep->failed || out == NULL || !SSL_is_init_finished(ep->ssl)) return 0;
    int ok = SSL_export_keying_material(ep->ssl, out, len, label, sizeof label - 1, NULL, 0, 0) == 1;
    ERR_clear_error();
    return ok;
}

int rtcs_ssl_endpoint_alert(const rtcs_ssl_endpoint *ep) { return ep->peer_alert; }

const char *rtcs_ssl_endpoint_error(const rtcs_ssl_endpoint *ep) { return ep->error; }
