#include "internal.h"

#include <pthread.h>
#include <string.h>

// A datagram memory BIO. OpenSSL's BIO_s_mem is a byte stream: it would glue the datagrams
// OpenSSL writes into one run and lose where each ends, and a garbage datagram fed in would be
// read together with the next good one. This BIO keeps datagram boundaries both ways: a read
// returns the one datagram being received, and every write becomes one output datagram. During
// the handshake OpenSSL buffers a flight's records and flushes them when the next would not fit
// the MTU, so one write is a set of whole records of at most `mtu` bytes.
//
// The ctrl answers are those a connected datagram socket would give, minus what does not apply:
// no MTU query (SSL_OP_NO_QUERY_MTU; the MTU is set), no header overhead (the MTU given is the
// datagram payload size), nothing ever pending to write (queued means sent).

static int dgram_write(BIO *b, const char *data, int len) {
    rtcs_ssl_datagrams *io = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    if (io == NULL || len < 0) return -1;
    if ((size_t)len > RTCS_SSL_MAX_DATAGRAM || io->tail - io->head == RTCS_SSL_QUEUE_SLOTS) {
        // Like a full socket buffer: the datagram is lost and the DTLS timer will resend it.
        io->dropped++;
        return len;
    }
    unsigned slot = io->tail % RTCS_SSL_QUEUE_SLOTS;
    memcpy(io->out[slot], data, (size_t)len);
    io->out_len[slot] = (size_t)len;
    io->tail++;
    return len;
}

static int dgram_read(BIO *b, char *out, int cap) {
    rtcs_ssl_datagrams *io = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    if (io == NULL || out == NULL || cap < 0) return -1;
    if (io->in == NULL) {
        BIO_set_retry_read(b);
        return -1;
    }
    size_t n = io->in_len < (size_t)cap ? io->in_len : (size_t)cap; // the rest is cut, as recv(2) does
    memcpy(out, io->in, n);
    io->in = NULL;
    io->in_len = 0;
    return (int)n;
}

static long dgram_ctrl(BIO *b, int cmd, long num, void *ptr) {
    (void)num;
    (void)ptr;
    rtcs_ssl_datagrams *io = BIO_get_data(b);
    switch (cmd) {
    case BIO_CTRL_FLUSH: return 1;
    case BIO_CTRL_PENDING: return io != NULL && io->in != NULL ? (long)io->in_len : 0;
    case BIO_CTRL_WPENDING: return 0;
    case BIO_CTRL_DGRAM_GET_MTU_OVERHEAD: return 0;
    case BIO_CTRL_DGRAM_QUERY_MTU: return 0;
    case BIO_CTRL_DGRAM_MTU_EXCEEDED: return 0;
    case BIO_CTRL_DGRAM_SET_NEXT_TIMEOUT: return 1;
    default: return 0;
    }
}

static int dgram_create(BIO *b) {
    BIO_set_init(b, 1);
    return 1;
}

static BIO_METHOD *method;
static pthread_once_t method_once = PTHREAD_ONCE_INIT;

static void make_method(void) {
    BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "rtcs datagram memory");
    if (m == NULL) return;
    if (!BIO_meth_set_write(m, dgram_write) || !BIO_meth_set_read(m, dgram_read)
        || !BIO_meth_set_ctrl(m, dgram_ctrl) || !BIO_meth_set_create(m, dgram_create)) {
        BIO_meth_free(m);
        return;
    }
    method = m; // lives as long as the process, like OpenSSL's own methods
}

BIO *rtcs_ssl_datagram_bio_new(rtcs_ssl_datagrams *io) {
    pthread_once(&method_once, make_method);
    if (method == NULL) return NULL;
    BIO *b = BIO_new(method);
    if (b != NULL) BIO_set_data(b, io);
    return b;
}
