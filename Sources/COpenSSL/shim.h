// OpenSSL's libcrypto for tests only: an independent AES and HMAC-SHA1 to check libsrtp2's
// output against the RFC 3711 / RFC 7714 computations. Not linked into any product target.
#include <openssl/evp.h>
#include <openssl/hmac.h>
