// OpenSSL's libcrypto, for tests only: an independent AES and HMAC-SHA1 to check libsrtp2's
// output against the RFC 3711 / RFC 7714 computations. Product code reaches OpenSSL only
// through CDTLSShims, which loads it on first use instead of linking it.
#include <openssl/evp.h>
#include <openssl/hmac.h>
