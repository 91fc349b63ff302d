// Digests through OpenSSL's calls, for STUN (HMAC-SHA1 of MESSAGE-INTEGRITY, built in Swift in
// RTCShareICE) and TURN's long-term credentials (the MD5 or SHA-256 key, RFC 8489 §9.2.2): here
// so that OpenSSL is reached only through this shim's loaded table.
#include "internal.h"

void *rtcs_crypto_sha1_new(void) { return rtcs_openssl_load() == 0 ? EVP_MD_CTX_new() : NULL; }

void rtcs_crypto_sha1_free(void *ctx) {
    if (ctx) EVP_MD_CTX_free(ctx);
}

int rtcs_crypto_sha1_init(void *ctx) { return EVP_DigestInit_ex(ctx, EVP_sha1(), NULL) == 1; }

int rtcs_crypto_sha1_update(void *ctx, const void *data, size_t len) {
    return EVP_DigestUpdate(ctx, data, len) == 1;
}

int rtcs_crypto_sha1_final(void *ctx, uint8_t out[20]) { return EVP_DigestFinal_ex(ctx, out, NULL) == 1; }

int rtcs_crypto_sha1(const void *data, size_t len, uint8_t out[20]) {
    unsigned int n = 0;
    return rtcs_openssl_load() == 0 && EVP_Digest(data, len, out, &n, EVP_sha1(), NULL) == 1 && n == 20;
}

static const EVP_MD *digest_of(int algorithm) {
    switch (algorithm) {
    case RTCS_DIGEST_SHA1: return EVP_sha1();
    case RTCS_DIGEST_SHA256: return EVP_sha256();
    case RTCS_DIGEST_MD5: return EVP_md5();
    default: return NULL;
    }
}

size_t rtcs_crypto_digest(int algorithm, const void *data, size_t len, uint8_t *out, size_t out_len) {
    if (rtcs_openssl_load() != 0) return 0;
    const EVP_MD *md = digest_of(algorithm);
    unsigned int n = 0;
    if (!md || (size_t)EVP_MD_get_size(md) > out_len) return 0;
    return EVP_Digest(data, len, out, &n, md, NULL) == 1 ? n : 0;
}
