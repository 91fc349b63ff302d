// SHA-1 through OpenSSL's digest calls, for STUN's MESSAGE-INTEGRITY (HMAC-SHA1, built in Swift
// in RTCShareICE): here so that OpenSSL is reached only through this shim's loaded table.
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
