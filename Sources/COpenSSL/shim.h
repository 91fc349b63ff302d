// OpenSSL (libssl + libcrypto). Product code: HMAC-SHA1 for STUN MESSAGE-INTEGRITY
// (RTCShareICE, from Swift) and DTLS-SRTP (RTCShareDTLS, through the CDTLSShims C target).
// Tests also use libcrypto directly, as an independent AES and HMAC-SHA1 to check libsrtp2's
// output against the RFC 3711 / RFC 7714 computations.
#include <openssl/evp.h>
#include <openssl/hmac.h>
