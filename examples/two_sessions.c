/*
 * Two screen shares from one process through the C ABI, as a meeting gateway would run them:
 * each session gets generated 1280x720 pictures (stamped with rtcshare's frame marker, so a
 * receiver can check order and orientation) and a tone pushed from a thread of its own, and
 * sends them as VP8 + Opus over SRTP to its peer. A third session is then asked for; when the
 * process budget has no room left it is refused with RTCSHARE_E_DOES_NOT_FIT while the two go on.
 *
 *   two_sessions CAP_MIB SECONDS PEER1 KEY1 PEER2 KEY2
 *
 * PEERn is host:port, KEYn the base64 SRTP key (AES_CM_128_HMAC_SHA1_80) the receiver uses.
 * Prints one line per event and a summary line per session; exits 0 when both ran to the end.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rtcshare.h"

enum { WIDTH = 1280, HEIGHT = 720, FPS = 20, RATE = 48000, TICK_MS = 10 };

typedef struct {
    int index;
    rtcshare_session *session;
    double seconds;
    uint8_t *picture; /* I420 */
    atomic_int pushed, dropped;
} share;

static int64_t monotonic_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void sleep_until_us(int64_t t) {
    struct timespec ts = {.tv_sec = t / 1000000, .tv_nsec = (t % 1000000) * 1000};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {}
}

/* A screen-like picture: flat background, a moving bar, and the frame marker top-left (two rows
 * of 32 blocks of 8x16: the counter, then the low 32 bits of the capture time in microseconds;
 * MSB first, Y=235 for 1, Y=16 for 0). */
static void render(uint8_t *y, int counter, uint32_t capture_us, int session_index) {
    uint8_t *u = y + WIDTH * HEIGHT, *v = u + WIDTH * HEIGHT / 4;
    memset(y, 90 + 40 * session_index, WIDTH * HEIGHT);
    memset(u, 128, WIDTH * HEIGHT / 4);
    memset(v, 128 + 20 * session_index, WIDTH * HEIGHT / 4);
    int bar = (counter * 8) % (WIDTH - 64);
    for (int row = 200; row < 520; row++) memset(y + row * WIDTH + bar, 200, 64);
    uint32_t words[2] = {(uint32_t)counter, capture_us};
    for (int r = 0; r < 2; r++)
        for (int bit = 0; bit < 32; bit++) {
            uint8_t value = (words[r] >> (31 - bit)) & 1 ? 235 : 16;
            for (int line = 0; line < 16; line++) memset(y + (r * 16 + line) * WIDTH + bit * 8, value, 8);
        }
}

static void *push_loop(void *arg) {
    share *s = arg;
    int16_t pcm[RATE / 1000 * TICK_MS * 2];
    double phase = 0;
    int64_t start = monotonic_us(), next = start, frame_due = start;
    int counter = 0;
    while (next - start < (int64_t)(s->seconds * 1e6)) {
        int64_t now = monotonic_us();
        if (now >= frame_due) {
            render(s->picture, counter++, (uint32_t)now, s->index);
            rtcshare_video_frame f = {
                .format = RTCSHARE_PIXEL_I420, .width = WIDTH, .height = HEIGHT,
                .planes = {s->picture, s->picture + WIDTH * HEIGHT, s->picture + WIDTH * HEIGHT * 5 / 4},
                .strides = {WIDTH, WIDTH / 2, WIDTH / 2}, .pts_us = now, .orientation = 1};
            int32_t status = rtcshare_session_push_video(s->session, &f);
            if (status == RTCSHARE_OK) atomic_fetch_add(&s->pushed, 1); else atomic_fetch_add(&s->dropped, 1);
            frame_due += 1000000 / FPS;
        }
        for (size_t i = 0; i < sizeof pcm / sizeof pcm[0]; i += 2) {
            pcm[i] = pcm[i + 1] = (int16_t)(8000 * sin(phase));
            phase += 2 * M_PI * 440.0 / RATE;
        }
        rtcshare_session_push_audio(s->session, pcm, sizeof pcm, RATE, 2, 0);
        next += TICK_MS * 1000;
        sleep_until_us(next);
    }
    return NULL;
}

static void on_event(void *user, const rtcshare_event *event) {
    share *s = user;
    if (event->type == RTCSHARE_EVENT_PROGRESS) return;
    printf("session %d: event %d%s%s\n", s->index, event->type, event->text ? ": " : "", event->text ? event->text : "");
    fflush(stdout);
}

static rtcshare_config settings(const char *peer, const char *key, double seconds) {
    rtcshare_config c;
    rtcshare_config_init(&c);
    c.source = "push";
    c.width = WIDTH;
    c.height = HEIGHT;
    c.fps = FPS;
    c.audio = RTCSHARE_AUDIO_PUSHED;
    c.peer = peer;
    c.srtp_key = key;
    c.duration_seconds = seconds + 1;
    return c;
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: %s CAP_MIB SECONDS PEER1 KEY1 PEER2 KEY2\n", argv[0]);
        return 2;
    }
    uint64_t cap = strtoull(argv[1], NULL, 10) << 20;
    double seconds = atof(argv[2]);
    printf("rtcshare %s\n", rtcshare_version());
    rtcshare_process *process = rtcshare_process_create(cap);
    if (!process) return 1;

    share shares[2] = {{.index = 1, .seconds = seconds}, {.index = 2, .seconds = seconds}};
    for (int i = 0; i < 2; i++) {
        rtcshare_config c = settings(argv[3 + 2 * i], argv[4 + 2 * i], seconds);
        int32_t status = rtcshare_session_create(process, &c, on_event, &shares[i], &shares[i].session);
        if (status != RTCSHARE_OK) {
            fprintf(stderr, "session %d: %s\n", i + 1, rtcshare_error_message(status));
            return 1;
        }
        printf("session %d: created; %llu MiB of the process budget left\n", i + 1,
               (unsigned long long)(rtcshare_process_available_bytes(process) >> 20));
    }

    /* A third share of the same size: refused if the budget has no room, the others untouched. */
    rtcshare_config third = settings(argv[3], argv[4], seconds);
    rtcshare_session *extra = NULL;
    int32_t status = rtcshare_session_create(process, &third, NULL, NULL, &extra);
    printf("session 3: %s (%d)\n", rtcshare_error_message(status), status);
    if (extra) rtcshare_session_destroy(extra);

    pthread_t threads[2];
    for (int i = 0; i < 2; i++) {
        shares[i].picture = malloc(WIDTH * HEIGHT * 3 / 2);
        if (rtcshare_session_start(shares[i].session) != RTCSHARE_OK) return 1;
        pthread_create(&threads[i], NULL, push_loop, &shares[i]);
    }
    int failed = 0;
    for (int i = 0; i < 2; i++) {
        pthread_join(threads[i], NULL);
        rtcshare_session_stop(shares[i].session, "the host ended the meeting");
        rtcshare_stats stats;
        int32_t outcome = rtcshare_session_wait(shares[i].session, &stats);
        printf("session %d: %s; pushed %d dropped %d; encoded %lld frames, %lld audio packets, %lld packets sent\n",
               i + 1, rtcshare_error_message(outcome), atomic_load(&shares[i].pushed), atomic_load(&shares[i].dropped),
               (long long)stats.encoded_frames, (long long)stats.audio_packets, (long long)stats.packets_sent);
        failed |= outcome != RTCSHARE_OK;
        rtcshare_session_destroy(shares[i].session);
        free(shares[i].picture);
    }
    rtcshare_process_destroy(process);
    return failed;
}
