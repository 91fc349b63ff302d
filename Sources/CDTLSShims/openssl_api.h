#ifndef RTCS_OPENSSL_API_H
#define RTCS_OPENSSL_API_H

// OpenSSL is loaded on first use (dlopen of libssl.so.3, which brings libcrypto), not linked:
// only a WebRTC session (DTLS, STUN's HMAC) needs it, and linked it is mapped and relocated in
// every process, a file share or `--peer` included (1.7 MiB resident). The functions the shim
// calls live in one table, typed from OpenSSL's own prototypes and resolved once;
// openssl_calls.h then points every call (and every OpenSSL macro that expands to one) at it.

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/srtp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#define RTCS_OPENSSL_FUNCTIONS(X) \
    X(ASN1_INTEGER_free) \
    X(BIO_clear_flags) \
    X(BIO_ctrl_pending) \
    X(BIO_free) \
    X(BIO_get_data) \
    X(BIO_get_new_index) \
    X(BIO_meth_free) \
    X(BIO_meth_new) \
    X(BIO_meth_set_create) \
    X(BIO_meth_set_ctrl) \
    X(BIO_meth_set_read) \
    X(BIO_meth_set_write) \
    X(BIO_new) \
    X(BIO_read) \
    X(BIO_s_mem) \
    X(BIO_write) \
    X(BIO_set_data) \
    X(BIO_set_flags) \
    X(BIO_set_init) \
    X(BN_bin2bn) \
    X(BN_free) \
    X(BN_to_ASN1_INTEGER) \
    X(CRYPTO_memcmp) \
    X(DTLS_method) \
    X(DTLS_set_timer_cb) \
    X(ERR_clear_error) \
    X(ERR_error_string_n) \
    X(ERR_peek_error) \
    X(EVP_MD_get_size) \
    X(EVP_PKEY_Q_keygen) \
    X(EVP_PKEY_free) \
    X(EVP_md5) \
    X(EVP_sha1) \
    X(EVP_sha256) \
    X(EVP_sha384) \
    X(EVP_sha512) \
    X(OPENSSL_cleanse) \
    X(RAND_bytes) \
    X(SSL_CTX_check_private_key) \
    X(SSL_CTX_load_verify_locations) \
    X(SSL_CTX_set_default_verify_paths) \
    X(SSL_CTX_ctrl) \
    X(SSL_CTX_free) \
    X(SSL_CTX_new) \
    X(SSL_CTX_set_cert_verify_callback) \
    X(SSL_CTX_set_cipher_list) \
    X(SSL_CTX_set_options) \
    X(SSL_CTX_set_tlsext_use_srtp) \
    X(SSL_CTX_set_verify) \
    X(SSL_CTX_use_PrivateKey) \
    X(SSL_CTX_use_certificate) \
    X(SSL_ctrl) \
    X(SSL_do_handshake) \
    X(SSL_export_keying_material) \
    X(SSL_free) \
    X(SSL_get_error) \
    X(SSL_get0_param) \
    X(SSL_get_verify_result) \
    X(SSL_get_ex_data) \
    X(SSL_get_selected_srtp_profile) \
    X(SSL_is_init_finished) \
    X(SSL_new) \
    X(SSL_read) \
    X(SSL_set_accept_state) \
    X(SSL_set1_host) \
    X(SSL_set_bio) \
    X(SSL_set_connect_state) \
    X(SSL_set_ex_data) \
    X(SSL_set_info_callback) \
    X(SSL_shutdown) \
    X(SSL_write) \
    X(TLS_client_method) \
    X(X509_VERIFY_PARAM_set1_ip_asc) \
    X(X509_verify_cert_error_string) \
    X(X509_NAME_add_entry_by_txt) \
    X(X509_NAME_free) \
    X(X509_NAME_new) \
    X(X509_STORE_CTX_get0_cert) \
    X(X509_STORE_CTX_set_error) \
    X(X509_digest) \
    X(X509_free) \
    X(X509_getm_notAfter) \
    X(X509_getm_notBefore) \
    X(X509_gmtime_adj) \
    X(X509_new) \
    X(X509_set_issuer_name) \
    X(X509_set_pubkey) \
    X(X509_set_serialNumber) \
    X(X509_set_subject_name) \
    X(X509_set_version) \
    X(X509_sign) \
    X(EVP_MD_CTX_new) \
    X(EVP_MD_CTX_free) \
    X(EVP_DigestInit_ex) \
    X(EVP_DigestUpdate) \
    X(EVP_DigestFinal_ex) \
    X(EVP_Digest)

struct rtcs_openssl_api {
#define RTCS_OPENSSL_SLOT(name) __typeof__(name) *name;
    RTCS_OPENSSL_FUNCTIONS(RTCS_OPENSSL_SLOT)
#undef RTCS_OPENSSL_SLOT
};

extern struct rtcs_openssl_api rtcs_openssl;

#endif
