// OpenSSL (libssl + libcrypto). Product code reaches it only through the CDTLSShims C target,
// which needs this module for OpenSSL's pkg-config flags; tests also use libcrypto directly, as
// an independent AES and HMAC-SHA1 to check libsrtp2's output against RFC 3711 / RFC 7714.
#include <openssl/evp.h>
#include <openssl/hmac.h>
