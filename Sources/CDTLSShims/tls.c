// A TLS client over memory BIOs, for a TURN server reached by `turns:` (RFC 8656 §3.1, TLS over
// TCP): sans-IO like the DTLS endpoint. Bytes from the TCP stream go in (rtcs_tls_client_feed),
// bytes for it come out (rtcs_tls_client_take); the caller owns the socket. The server's
// certificate must chain to the system's store or to the CAs of a PEM file, and name the host
// the URI named (a DNS name, sent as SNI too, or an IP address, checked against the IP SANs).
#include "internal.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rtcs_tls_client {
    SSL_CTX *ctx;
    SSL *ssl;
    BIO *in;   // ciphertext from the server, read by OpenSSL
    BIO *out;  // ciphertext OpenSSL wrote, for the caller to send
    int established;
    int failed;
    char error[256];
};

static void note_error(rtcs_tls_client *c, const char *what) {
    unsigned long e = ERR_peek_error();
    char detail[200] = "";
    if (e != 0) ERR_error_string_n(e, detail, sizeof detail);
    snprintf(c->error, sizeof c->error, "%s%s%s", what, detail[0] ? ": " : "", detail);
    ERR_clear_error();
}

static int is_ip(const char *name) {
    unsigned char buf[16];
    return inet_pton(AF_INET, name, buf) == 1 || inet_pton(AF_INET6, name, buf) == 1;
}

rtcs_tls_client *rtcs_tls_client_new(const char *host, const char *ca_file, char *error, size_t error_len) {
    if (rtcs_openssl_load() != 0) {
        snprintf(error, error_len, "%s", rtcs_openssl_load_error());
        return NULL;
    }
    rtcs_tls_client *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(error, error_len, "out of memory");
        return NULL;
    }
    c->ctx = SSL_CTX_new(TLS_client_method());
    if (!c->ctx) goto fail;
    SSL_CTX_set_min_proto_version(c->ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER, NULL);
    int loaded = ca_file ? SSL_CTX_load_verify_locations(c->ctx, ca_file, NULL) : SSL_CTX_set_default_verify_paths(c->ctx);
    if (loaded != 1) {
        note_error(c, ca_file ? "cannot load the CA file" : "cannot load the system's CA store");
        snprintf(error, error_len, "%s", c->error);
        rtcs_tls_client_free(c);
        return NULL;
    }
    c->ssl = SSL_new(c->ctx);
    c->in = BIO_new(BIO_s_mem());
    c->out = BIO_new(BIO_s_mem());
    if (!c->ssl || !c->in || !c->out) goto fail;
    SSL_set_bio(c->ssl, c->in, c->out);  // the SSL owns both BIOs from here
    if (is_ip(host)) {
        if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), host) != 1) goto fail;
    } else {
        if (SSL_set1_host(c->ssl, host) != 1 || SSL_set_tlsext_host_name(c->ssl, host) != 1) goto fail;
    }
    SSL_set_connect_state(c->ssl);
    ERR_clear_error();
    return c;
fail:
    note_error(c, "TLS set-up failed");
    snprintf(error, error_len, "%s", c->error);
    rtcs_tls_client_free(c);
    return NULL;
}

void rtcs_tls_client_free(rtcs_tls_client *c) {
    if (!c) return;
    if (c->ssl) {
        SSL_free(c->ssl);
    } else {
        if (c->in) BIO_free(c->in);
        if (c->out) BIO_free(c->out);
    }
    if (c->ctx) SSL_CTX_free(c->ctx);
    free(c);
}

int rtcs_tls_client_feed(rtcs_tls_client *c, const uint8_t *data, size_t len) {
    if (len == 0) return 1;
    return BIO_write(c->in, data, (int)len) == (int)len;
}

int rtcs_tls_client_handshake(rtcs_tls_client *c) {
    if (c->failed) return c->failed;
    if (c->established) return 1;
    int r = SSL_do_handshake(c->ssl);
    if (r == 1) {
        c->established = 1;
        ERR_clear_error();
        return 1;
    }
    int e = SSL_get_error(c->ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        ERR_clear_error();
        return 0;
    }
    long verify = SSL_get_verify_result(c->ssl);
    if (verify != X509_V_OK) {
        snprintf(c->error, sizeof c->error, "%s", X509_verify_cert_error_string(verify));
        ERR_clear_error();
        c->failed = RTCS_TLS_CERTIFICATE;
        return c->failed;
    }
    note_error(c, "TLS handshake failed");
    c->failed = RTCS_TLS_FAILED;
    return c->failed;
}

size_t rtcs_tls_client_pending(rtcs_tls_client *c) { return BIO_ctrl_pending(c->out); }

size_t rtcs_tls_client_take(rtcs_tls_client *c, uint8_t *out, size_t cap) {
    int n = BIO_read(c->out, out, (int)(cap > 0x7FFFFFFF ? 0x7FFFFFFF : cap));
    return n > 0 ? (size_t)n : 0;
}

long rtcs_tls_client_write(rtcs_tls_client *c, const uint8_t *data, size_t len) {
    if (!c->established || c->failed) return -1;
    int n = SSL_write(c->ssl, data, (int)len);
    if (n <= 0) {
        note_error(c, "TLS write failed");
        return -1;
    }
    return n;
}

long rtcs_tls_client_read(rtcs_tls_client *c, uint8_t *out, size_t cap) {
    if (!c->established || c->failed) return -1;
    int n = SSL_read(c->ssl, out, (int)cap);
    if (n > 0) return n;
    int e = SSL_get_error(c->ssl, n);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        ERR_clear_error();
        return 0;
    }
    if (e == SSL_ERROR_ZERO_RETURN) {
        snprintf(c->error, sizeof c->error, "the server closed the TLS session");
        ERR_clear_error();
        return -1;
    }
    note_error(c, "TLS read failed");
    return -1;
}

const char *rtcs_tls_client_error(const rtcs_tls_client *c) { return c->error; }
