#include "internal.h"

#include <stdlib.h>

// The certificate a WebRTC endpoint presents is self-signed and made per process: peers trust it
// through the fingerprint carried in the SDP (RFC 8827 §6.5), never through a CA. P-256 keygen and
// one ECDSA signature take well under a millisecond's CPU, unlike RSA keygen.

const EVP_MD *rtcs_ssl_md(rtcs_ssl_hash hash) {
    switch (hash) {
    case RTCS_SSL_HASH_SHA1: return EVP_sha1();
    case RTCS_SSL_HASH_SHA256: return EVP_sha256();
    case RTCS_SSL_HASH_SHA384: return EVP_sha384();
    case RTCS_SSL_HASH_SHA512: return EVP_sha512();
    }
    return NULL;
}

/// A random positive 64-bit serial (RFC 5280 §4.1.2.2: positive, at most 20 octets).
static int set_random_serial(X509 *x509) {
    unsigned char bytes[8];
    if (RAND_bytes(bytes, sizeof bytes) != 1) return 0;
    bytes[0] &= 0x7F;
    bytes[0] |= 0x01; // never zero
    BIGNUM *bn = BN_bin2bn(bytes, sizeof bytes, NULL);
    if (bn == NULL) return 0;
    ASN1_INTEGER *serial = BN_to_ASN1_INTEGER(bn, NULL);
    BN_free(bn);
    if (serial == NULL) return 0;
    int ok = X509_set_serialNumber(x509, serial);
    ASN1_INTEGER_free(serial);
    return ok;
}

rtcs_ssl_cert *rtcs_ssl_cert_generate(const char *common_name, int validity_days) {
    if (common_name == NULL || validity_days <= 0 || rtcs_openssl_load() != 0) return NULL;
    rtcs_ssl_cert *cert = calloc(1, sizeof *cert);
    if (cert == NULL) return NULL;
    X509_NAME *name = NULL;
    int ok = (cert->key = EVP_EC_gen("P-256")) != NULL
        && (cert->x509 = X509_new()) != NULL
        && X509_set_version(cert->x509, X509_VERSION_3)
        && set_random_serial(cert->x509)
        && X509_gmtime_adj(X509_getm_notBefore(cert->x509), -86400L) != NULL
        && X509_gmtime_adj(X509_getm_notAfter(cert->x509), 86400L * validity_days) != NULL
        && X509_set_pubkey(cert->x509, cert->key)
        && (name = X509_NAME_new()) != NULL
        && X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)common_name, -1, -1, 0)
        && X509_set_subject_name(cert->x509, name)
        && X509_set_issuer_name(cert->x509, name)
        && X509_sign(cert->x509, cert->key, EVP_sha256()) > 0;
    X509_NAME_free(name);
    ERR_clear_error();
    if (!ok) {
        rtcs_ssl_cert_free(cert);
        return NULL;
    }
    return cert;
}

void rtcs_ssl_cert_free(rtcs_ssl_cert *cert) {
    if (cert == NULL) return;
    X509_free(cert->x509);
    EVP_PKEY_free(cert->key);
    free(cert);
}

int rtcs_ssl_cert_fingerprint(const rtcs_ssl_cert *cert, rtcs_ssl_hash hash, uint8_t *out, size_t cap) {
    const EVP_MD *md = rtcs_ssl_md(hash);
    if (cert == NULL || out == NULL || md == NULL || cap < (size_t)EVP_MD_get_size(md)) return -1;
    unsigned len = 0;
    int ok = X509_digest(cert->x509, md, out, &len);
    ERR_clear_error();
    return ok ? (int)len : -1;
}
