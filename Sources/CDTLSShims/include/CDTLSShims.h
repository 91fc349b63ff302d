#ifndef RTCS_DTLS_SHIMS_H
#define RTCS_DTLS_SHIMS_H

// OpenSSL's door for DTLS-SRTP, and the only code that calls libssl or libcrypto on the product
// path. It exists because most of what DTLS needs cannot be called from Swift: macros
// (SSL_CTX_set_mode, SSL_set_mtu, DTLSv1_get_timeout, DTLSv1_handle_timeout, EVP_EC_gen) and
// C callbacks whose state lives in C (the datagram BIO, the fingerprint check, the DTLS timer,
// the alert watcher). Keeping every OpenSSL call here also keeps OpenSSL's types and headers out
// of the Swift modules, and clears OpenSSL's thread-local error queue in one place: every
// function below leaves it empty on return.
//
// Swift sees two opaque objects:
// - rtcs_ssl_cert: an ECDSA P-256 key and its self-signed X.509 certificate;
// - rtcs_ssl_endpoint: one DTLS 1.2 association over a datagram memory BIO. Bytes go in with
//   rtcs_ssl_endpoint_receive, whole datagrams come out with rtcs_ssl_endpoint_pop_datagram;
//   there is no socket. Each output datagram is one flush of OpenSSL's write buffer, so records
//   are never split across datagrams and a datagram holds at most `mtu` bytes.
//
// Not thread-safe per object; distinct objects may be used from distinct threads.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Hash functions a certificate fingerprint may use (RFC 8122 §5, the ones browsers send).
typedef enum rtcs_ssl_hash {
    RTCS_SSL_HASH_SHA1 = 1,   ///< 20-byte digest
    RTCS_SSL_HASH_SHA256 = 2, ///< 32-byte digest
    RTCS_SSL_HASH_SHA384 = 3, ///< 48-byte digest
    RTCS_SSL_HASH_SHA512 = 4, ///< 64-byte digest
} rtcs_ssl_hash;

/// Where an endpoint stands after a call that drives it.
typedef enum rtcs_ssl_status {
    RTCS_SSL_HANDSHAKING = 0,        ///< handshake under way; wait for datagrams or the timer
    RTCS_SSL_ESTABLISHED = 1,        ///< handshake complete; keys can be exported
    RTCS_SSL_CLOSED = 2,             ///< the peer sent close_notify
    RTCS_SSL_FINGERPRINT_MISMATCH = -1, ///< the peer's certificate digest is not the expected one
    RTCS_SSL_PEER_ALERT = -2,        ///< the peer sent a fatal alert (rtcs_ssl_endpoint_alert says which)
    RTCS_SSL_TIMED_OUT = -3,         ///< too many retransmissions without an answer
    RTCS_SSL_PROTOCOL_ERROR = -4,    ///< any other handshake failure (rtcs_ssl_endpoint_error says which)
} rtcs_ssl_status;

// ---- certificate ----

typedef struct rtcs_ssl_cert rtcs_ssl_cert;

/// Makes an ECDSA P-256 key and a self-signed X.509 v3 certificate for it: subject and issuer
/// CN=`common_name`, a random positive 64-bit serial, valid from one day ago (peer clock skew)
/// for `validity_days`, signed with ECDSA-SHA256. Returns NULL on failure.
rtcs_ssl_cert *rtcs_ssl_cert_generate(const char *common_name, int validity_days);

/// Frees a certificate (endpoints made from it keep their own references).
void rtcs_ssl_cert_free(rtcs_ssl_cert *cert);

/// Writes the `hash` digest of the certificate's DER into `out`; returns its length, or -1 if
/// `cap` is too small or `hash` unknown.
int rtcs_ssl_cert_fingerprint(const rtcs_ssl_cert *cert, rtcs_ssl_hash hash, uint8_t *out, size_t cap);

// ---- endpoint ----

typedef struct rtcs_ssl_endpoint rtcs_ssl_endpoint;

/// Largest datagram rtcs_ssl_endpoint_receive accepts.
#define RTCS_SSL_MAX_DATAGRAM 2048

typedef struct rtcs_ssl_endpoint_config {
    int is_client;                 ///< 1: DTLS client (setup:active); 0: server (setup:passive)
    unsigned mtu;                  ///< largest datagram written, 256 ... RTCS_SSL_MAX_DATAGRAM
    const char *srtp_profiles;     ///< OpenSSL use_srtp list, preferred first
    rtcs_ssl_hash expected_hash;   ///< hash of the peer fingerprint from the SDP
    const uint8_t *expected_digest;
    size_t expected_digest_len;
    unsigned initial_timeout_ms;   ///< first retransmission timeout; doubles up to 60 s
} rtcs_ssl_endpoint_config;

/// Makes a DTLS 1.2 endpoint using `cert`. A client queues its ClientHello at once. Returns NULL
/// on a bad argument or an OpenSSL failure.
rtcs_ssl_endpoint *rtcs_ssl_endpoint_new(const rtcs_ssl_cert *cert, const rtcs_ssl_endpoint_config *config);

/// Frees the endpoint and everything it owns (no close_notify is sent).
void rtcs_ssl_endpoint_free(rtcs_ssl_endpoint *ep);

/// Hands one received datagram to OpenSSL and drives the association; returns the status.
/// The caller has checked `len <= RTCS_SSL_MAX_DATAGRAM`; longer input is cut there.
rtcs_ssl_status rtcs_ssl_endpoint_receive(rtcs_ssl_endpoint *ep, const uint8_t *data, size_t len);

/// Microseconds until the retransmission timer fires (0 if due now), or -1 if none runs.
/// OpenSSL measures this against its own reading of the wall clock.
int64_t rtcs_ssl_endpoint_timeout_us(rtcs_ssl_endpoint *ep);

/// Retransmits the last flight if its timer has expired; returns the status
/// (RTCS_SSL_TIMED_OUT once OpenSSL gives up).
rtcs_ssl_status rtcs_ssl_endpoint_handle_timeout(rtcs_ssl_endpoint *ep);

/// Queues a close_notify alert; returns 1 if queued, 0 if not (handshake unfinished).
int rtcs_ssl_endpoint_close(rtcs_ssl_endpoint *ep);

/// Size of the oldest queued output datagram, 0 if none.
size_t rtcs_ssl_endpoint_next_datagram_size(const rtcs_ssl_endpoint *ep);

/// Moves the oldest queued output datagram into `out`; returns its size, 0 if none is queued or
/// `cap` is smaller than it (it then stays queued).
size_t rtcs_ssl_endpoint_pop_datagram(rtcs_ssl_endpoint *ep, uint8_t *out, size_t cap);

/// Output datagrams dropped because the queue was full (the caller did not drain it).
uint64_t rtcs_ssl_endpoint_dropped_output(const rtcs_ssl_endpoint *ep);

/// Retransmissions of a flight made so far.
uint64_t rtcs_ssl_endpoint_retransmissions(const rtcs_ssl_endpoint *ep);

/// The negotiated DTLS-SRTP protection profile id (RFC 5764 §4.1.2), or 0 if none.
unsigned rtcs_ssl_endpoint_srtp_profile(rtcs_ssl_endpoint *ep);

/// Writes `len` bytes of keying material exported with label EXTRACTOR-dtls_srtp and no context
/// (RFC 5764 §4.2) into `out`; returns 1, or 0 before the handshake completes.
int rtcs_ssl_endpoint_export_srtp(rtcs_ssl_endpoint *ep, uint8_t *out, size_t len);

/// The fatal alert the peer sent (RFC 5246 §7.2 description), or -1 if none.
int rtcs_ssl_endpoint_alert(const rtcs_ssl_endpoint *ep);

/// The first OpenSSL error text recorded by the failing call (NUL-terminated, maybe empty).
const char *rtcs_ssl_endpoint_error(const rtcs_ssl_endpoint *ep);

/// Loads OpenSSL (libssl.so.3 and libcrypto.so.3) once; 0 when usable, -1 with a line in
/// rtcs_openssl_load_error. Every function here loads it on first use; callers only need this
/// to tell why something failed.
int rtcs_openssl_load(void);
const char *rtcs_openssl_load_error(void);

/// SHA-1 through OpenSSL, for STUN's HMAC (RTCShareICE): a digest context, reset to SHA-1 by
/// init. NULL / 0 when OpenSSL cannot be loaded or the call fails.
void *rtcs_crypto_sha1_new(void);
void rtcs_crypto_sha1_free(void *ctx);
int rtcs_crypto_sha1_init(void *ctx);
int rtcs_crypto_sha1_update(void *ctx, const void *data, size_t len);
int rtcs_crypto_sha1_final(void *ctx, uint8_t out[20]);
int rtcs_crypto_sha1(const void *data, size_t len, uint8_t out[20]);

// ---- TLS client (TURN over TLS) ----

typedef struct rtcs_tls_client rtcs_tls_client;

enum { RTCS_TLS_FAILED = -1, RTCS_TLS_CERTIFICATE = -2 };

/// A TLS client (1.2 or newer) for `host` (a DNS name: SNI and the certificate's name; or an IP
/// address: the certificate's IP SAN), trusting the CAs in `ca_file` (PEM) or, when NULL, the
/// system's store. NULL with a line in `error` when it cannot be made.
rtcs_tls_client *rtcs_tls_client_new(const char *host, const char *ca_file, char *error, size_t error_len);
void rtcs_tls_client_free(rtcs_tls_client *c);
/// Bytes from the TCP stream; 1 when taken.
int rtcs_tls_client_feed(rtcs_tls_client *c, const uint8_t *data, size_t len);
/// Drives the handshake: 1 established, 0 under way (send what is pending, feed what comes),
/// RTCS_TLS_CERTIFICATE (the certificate does not verify: rtcs_tls_client_error says why) or
/// RTCS_TLS_FAILED.
int rtcs_tls_client_handshake(rtcs_tls_client *c);
/// Ciphertext waiting to be sent, and taking it.
size_t rtcs_tls_client_pending(rtcs_tls_client *c);
size_t rtcs_tls_client_take(rtcs_tls_client *c, uint8_t *out, size_t cap);
/// Application data: written (its length, or -1), read (bytes, 0 when none yet, -1 closed or failed).
long rtcs_tls_client_write(rtcs_tls_client *c, const uint8_t *data, size_t len);
long rtcs_tls_client_read(rtcs_tls_client *c, uint8_t *out, size_t cap);
const char *rtcs_tls_client_error(const rtcs_tls_client *c);

enum { RTCS_DIGEST_SHA1 = 1, RTCS_DIGEST_SHA256 = 2, RTCS_DIGEST_MD5 = 3 };
/// A one-shot digest (RTCS_DIGEST_*) into `out`; its length, or 0 when OpenSSL cannot be loaded,
/// the algorithm is unknown or `out_len` is too small.
size_t rtcs_crypto_digest(int algorithm, const void *data, size_t len, uint8_t *out, size_t out_len);

#ifdef __cplusplus
}
#endif

#endif
