// Frames: refcount lifecycle back to the pool, layout, size limits, metadata, and the ring
// ownership rules (rejected or evicted frames are released by the push).
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "ccore/frame.h"
#include "check.h"

// A fresh mapped arena and a frame pool of `count` slots sized for I420 at w x h.
static int frame_setup(int32_t w, int32_t h, uint32_t count, ccore_arena **a, ccore_frame_pool **fp) {
    if (ccore_arena_create(8u << 20, 0, a) != CCORE_OK) return 0;
    return ccore_frame_pool_create(*a, CCORE_PIXEL_I420, w, h, count, fp) == CCORE_OK;
}

// The pool's in_use right now.
static uint32_t frames_out(const ccore_frame_pool *fp) {
    ccore_pool_stats s;
    ccore_frame_pool_get_stats(fp, &s);
    return s.in_use;
}

// Tears down a frame pool and its arena, checking nothing leaked.
static void frame_teardown(ccore_arena *a, ccore_frame_pool *fp) {
    CHECK(ccore_frame_pool_destroy(fp) == CCORE_OK);
    ccore_arena_stats s;
    ccore_arena_get_stats(a, &s);
    CHECK(s.live_blocks == 0 && s.in_use == 0);
    CHECK(ccore_arena_destroy(a) == CCORE_OK);
}

TEST(framePoolCreateRejectsInvalidFormatSizeOrCount) {
    ccore_arena *a;
    REQUIRE(ccore_arena_create(1 << 20, 0, &a) == CCORE_OK);
    ccore_frame_pool *fp = (ccore_frame_pool *)1;
    CHECK(ccore_frame_pool_create(a, (ccore_pixel_format)9, 64, 64, 2, &fp) == CCORE_ERR_INVALID && !fp);
    CHECK(ccore_frame_pool_create(a, CCORE_PIXEL_I420, 0, 64, 2, &fp) == CCORE_ERR_INVALID);
    CHECK(ccore_frame_pool_create(a, CCORE_PIXEL_I420, 64, 64, 0, &fp) == CCORE_ERR_INVALID);
    CHECK(ccore_frame_pool_create(NULL, CCORE_PIXEL_I420, 64, 64, 2, &fp) == CCORE_ERR_INVALID);
    // More than the cap: refused, and nothing is kept.
    CHECK(ccore_frame_pool_create(a, CCORE_PIXEL_BGRA, 1920, 1080, 2, &fp) == CCORE_ERR_NO_MEMORY);
    ccore_arena_stats s;
    ccore_arena_get_stats(a, &s);
    CHECK(s.live_blocks == 0);
    CHECK(ccore_arena_destroy(a) == CCORE_OK);
}

TEST(frameRefcountLifecycleReturnsSlotToPool) {
    ccore_arena *a;
    ccore_frame_pool *fp;
    REQUIRE(frame_setup(64, 48, 2, &a, &fp));
    ccore_frame *f = ccore_frame_acquire(fp, CCORE_PIXEL_I420, 64, 48);
    REQUIRE(f != NULL);
    CHECK(ccore_frame_refcount(f) == 1 && frames_out(fp) == 1);
    ccore_frame_retain(f);
    ccore_frame_retain(f);
    CHECK(ccore_frame_refcount(f) == 3);
    ccore_frame_release(f);
    ccore_frame_release(f);
    CHECK(ccore_frame_refcount(f) == 1 && frames_out(fp) == 1);
    ccore_frame_release(f);
    CHECK(frames_out(fp) == 0);
    ccore_frame_release(NULL); // ignored
    frame_teardown(a, fp);
}

TEST(frameAcquireStartsWithDefaultMetadataThatRoundTrips) {
    ccore_arena *a;
    ccore_frame_pool *fp;
    REQUIRE(frame_setup(32, 32, 1, &a, &fp));
    ccore_frame *f = ccore_frame_acquire(fp, CCORE_PIXEL_I420, 32, 32);
    REQUIRE(f != NULL);
    CHECK(ccore_frame_pts_us(f) == 0 && ccore_frame_orientation(f) == 1);
    ccore_frame_set_pts_us(f, -123456789012345);
    CHECK(ccore_frame_pts_us(f) == -123456789012345);
    for (int o = 1; o <= 8; o++) {
        CHECK(ccore_frame_set_orientation(f, o) == CCORE_OK);
        CHECK(ccore_frame_orientation(f) == o);
    }
    CHECK(ccore_frame_set_orientation(f, 0) == CCORE_ERR_INVALID);
    CHECK(ccore_frame_set_orientation(f, 9) == CCORE_ERR_INVALID);
    CHECK(ccore_frame_orientation(f) == 8);
    ccore_frame_set_pts_us(f, 77);
    ccore_frame_release(f);
    // A recycled slot starts clean again.
    f = ccore_frame_acquire(fp, CCORE_PIXEL_I420, 16, 16);
    REQUIRE(f != NULL);
    CHECK(ccore_frame_pts_us(f) == 0 && ccore_frame_orientation(f) == 1 && ccore_frame_refcount(f) == 1);
    ccore_frame_release(f);
    frame_teardown(a, fp);
}

TEST(frameLayoutRowsAre64ByteAlignedInsideTheSlot) {
    ccore_arena *a;
    REQUIRE(ccore_arena_create(8u << 20, 0, &a) == CCORE_OK);
    ccore_frame_pool *fp;
    REQUIRE(ccore_frame_pool_create(a, CCORE_PIXEL_BGRA, 333, 201, 1, &fp) == CCORE_OK);
    size_t slot_bytes = ccore_frame_pool_slot_bytes(fp);
    CHECK(slot_bytes == ccore_image_bytes(CCORE_PIXEL_BGRA, 333, 201));
    const ccore_pixel_format formats[] = {CCORE_PIXEL_I420, CCORE_PIXEL_NV12, CCORE_PIXEL_BGRA,
                                          CCORE_PIXEL_BGRX};
    const int32_t sizes[][2] = {{1, 1}, {2, 2}, {3, 5}, {17, 9}, {64, 64}, {333, 201}, {201, 333}};
    for (size_t fi = 0; fi < 4; fi++) {
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            ccore_pixel_format fmt = formats[fi];
            int32_t w = sizes[si][0], h = sizes[si][1];
            size_t need = ccore_image_bytes(fmt, w, h);
            ccore_frame *f = ccore_frame_acquire(fp, fmt, w, h);
            if (need > slot_bytes) {
                CHECK(f == NULL);
                continue;
            }
            REQUIRE(f != NULL);
            ccore_image img = ccore_frame_image(f);
            CHECK(img.format == fmt && img.width == w && img.height == h);
            CHECK(ccore_image_valid(&img));
            uint8_t *start = img.plane[0];
            for (int p = 0; p < ccore_pixel_format_planes(fmt); p++) {
                CHECK(((uintptr_t)img.plane[p] & 63) == 0);
                CHECK(img.stride[p] % 64 == 0);
            }
            // Every pixel byte is writable and inside the slot (ASan and the pool's neighbours
            // would notice otherwise).
            memset(start, 0xee, need);
            CHECK((size_t)(img.plane[ccore_pixel_format_planes(fmt) - 1] - start) < need);
            ccore_frame_release(f);
        }
    }
    CHECK(frames_out(fp) == 0);
    frame_teardown(a, fp);
}

TEST(frameOversizedAcquireReturnsNullWithoutCountingExhaustion) {
    ccore_arena *a;
    ccore_frame_pool *fp;
    REQUIRE(frame_setup(64, 64, 2, &a, &fp));
    CHECK(ccore_frame_acquire(fp, CCORE_PIXEL_I420, 65, 64) == NULL);
    CHECK(ccore_frame_acquire(fp, CCORE_PIXEL_BGRA, 64, 64) == NULL);
    CHECK(ccore_frame_acquire(fp, CCORE_PIXEL_I420, 0, 64) == NULL);
    CHECK(ccore_frame_acquire(fp, (ccore_pixel_format)0, 8, 8) == NULL);
    CHECK(ccore_frame_acquire(NULL, CCORE_PIXEL_I420, 8, 8) == NULL);
    // A different format and shape needing no more bytes fits.
    ccore_frame *f = ccore_frame_acquire(fp, CCORE_PIXEL_BGRX, 16, 64);
    CHECK(f != NULL);
    ccore_pool_stats s;
    ccore_frame_pool_get_stats(fp, &s);
    CHECK(s.failures == 0 && s.in_use == 1);
    ccore_frame_release(f);
    frame_teardown(a, fp);
}

TEST(frameExhaustedPoolReturnsNullAndCountsIt) {
    ccore_arena *a;
    ccore_frame_pool *fp;
    REQUIRE(frame_setup(16, 16, 2, &a, &fp));
    ccore_frame *x = ccore_frame_acquire(fp, CCORE_PIXEL_I420, 16, 16);
    ccore_frame *y = ccore_frame_acquire(fp, CCORE_PIXEL_I420, 16, 16);
    REQUIRE(x && y && x != y);
    CHECK(ccore_frame_image(x).plane[0] != ccore_frame_image(y).plane[0]);
    CHECK(ccore_frame_acquire(fp, CCORE_PIXEL_I420, 16, 16) == NULL);
    ccore_pool_stats s;
    ccore_frame_pool_get_stats(fp, &s);
    CHECK(s.failures == 1 && s.in_use == 2 && s.high_water == 2);
    CHECK(ccore_frame_pool_destroy(fp) == CCORE_ERR_BUSY);
    ccore_frame_release(x);
    ccore_frame_release(y);
    frame_teardown(a, fp);
}

TEST(frameRingPushReleasesRejectedFrames) {
    ccore_arena *a;
    ccore_frame_pool *fp;
    REQUIRE(frame_setup(16, 16, 8, &a, &fp));
    ccore_ring *r;
    REQUIRE(ccore_ring_create(a, 4, CCORE_RING_REJECT_NEWEST, &r) == CCORE_OK);
    ccore_frame *sent[6];
    for (int i = 0; i < 6; i++) {
        sent[i] = ccore_frame_acquire(fp, CCORE_PIXEL_I420, 16, 16);
        REQUIRE(sent[i] != NULL);
        ccore_frame_set_pts_us(sent[i], i);
        CHECK(ccore_frame_ring_push(r, sent[i]) == (i < 4 ? CCORE_OK : CCORE_ERR_FULL));
    }
    CHECK(frames_out(fp) == 4); // the two rejected frames went back to the pool
    for (int i = 0; i < 4; i++) {
        ccore_frame *f = ccore_frame_ring_pop(r);
        REQUIRE(f == sent[i]);
        CHECK(ccore_frame_pts_us(f) == i && ccore_frame_refcount(f) == 1);
        ccore_frame_release(f);
    }
    CHECK(ccore_frame_ring_pop(r) == NULL);
    CHECK(frames_out(fp) == 0);
    // A frame pushed to no ring is handed over all the same, so it is released, not leaked.
    ccore_frame *lost = ccore_frame_acquire(fp, CCORE_PIXEL_I420, 16, 16);
    CHECK(ccore_frame_ring_push(NULL, lost) == CCORE_ERR_INVALID);
    CHECK(frames_out(fp) == 0);
    CHECK(ccore_ring_destroy(r) == CCORE_OK);
    frame_teardown(a, fp);
}

TEST(frameRingPushReleasesEvictedFramesButKeepsSharedOnes) {
    ccore_arena *a;
    ccore_frame_pool *fp;
    REQUIRE(frame_setup(16, 16, 8, &a, &fp));
    ccore_ring *r;
    REQUIRE(ccore_ring_create(a, 2, CCORE_RING_DROP_OLDEST, &r) == CCORE_OK);
    ccore_frame *first = ccore_frame_acquire(fp, CCORE_PIXEL_I420, 16, 16);
    REQUIRE(first != NULL);
    ccore_frame_retain(first); // the pacer keeps the last frame it saw
    CHECK(ccore_frame_ring_push(r, first) == CCORE_OK);
    for (int i = 1; i < 5; i++) {
        ccore_frame *f = ccore_frame_acquire(fp, CCORE_PIXEL_I420, 16, 16);
        REQUIRE(f != NULL);
        ccore_frame_set_pts_us(f, i);
        CHECK(ccore_frame_ring_push(r, f) == (i < 2 ? CCORE_OK : CCORE_DROPPED_OLDEST));
    }
    // In the ring: pts 3 and 4. Evicted and released: `first` (still held once) and pts 1, 2.
    CHECK(frames_out(fp) == 3 && ccore_frame_refcount(first) == 1);
    for (int64_t pts = 3; pts <= 4; pts++) {
        ccore_frame *f = ccore_frame_ring_pop(r);
        REQUIRE(f != NULL);
        CHECK(ccore_frame_pts_us(f) == pts);
        ccore_frame_release(f);
    }
    ccore_frame_release(first);
    CHECK(frames_out(fp) == 0);
    ccore_ring_stats rs;
    ccore_ring_get_stats(r, &rs);
    CHECK(rs.pushed == 5 && rs.dropped_oldest == 3 && rs.popped == 2);
    CHECK(ccore_ring_destroy(r) == CCORE_OK);
    frame_teardown(a, fp);
}

enum { FLOW_FRAMES = 20000 };

// A capture thread and a pipeline thread sharing a drop-oldest ring, as in a session.
typedef struct {
    ccore_frame_pool *pool;
    ccore_ring *ring;
    _Atomic(int) done;
    int64_t last_pts;
    int bad;
    uint64_t exhausted;
} frame_flow;

// Producer: fills each frame's first pixel with its pts, then pushes it.
static void *flow_capture(void *arg) {
    frame_flow *fl = arg;
    for (int64_t pts = 1; pts <= FLOW_FRAMES; pts++) {
        ccore_frame *f = ccore_frame_acquire(fl->pool, CCORE_PIXEL_I420, 32, 32);
        if (!f) {
            fl->exhausted++;
            sched_yield();
            continue;
        }
        ccore_frame_set_pts_us(f, pts);
        ccore_image img = ccore_frame_image(f);
        memset(img.plane[0], (uint8_t)pts, 32);
        ccore_frame_ring_push(fl->ring, f);
    }
    atomic_store(&fl->done, 1);
    return NULL;
}

// Consumer: checks increasing pts and intact pixels, holds each frame briefly, releases it.
static void *flow_pipeline(void *arg) {
    frame_flow *fl = arg;
    for (;;) {
        int finished = atomic_load(&fl->done);
        ccore_frame *f = ccore_frame_ring_pop(fl->ring);
        if (!f) {
            if (finished) break;
            sched_yield();
            continue;
        }
        int64_t pts = ccore_frame_pts_us(f);
        ccore_image img = ccore_frame_image(f);
        if (pts <= fl->last_pts || img.plane[0][31] != (uint8_t)pts || ccore_frame_refcount(f) != 1) fl->bad = 1;
        fl->last_pts = pts;
        ccore_frame_release(f);
    }
    return NULL;
}

TEST(frameFlowAcrossThreadsReturnsEverySlot) {
    ccore_arena *a;
    ccore_frame_pool *fp;
    REQUIRE(frame_setup(32, 32, 6, &a, &fp));
    ccore_ring *r;
    REQUIRE(ccore_ring_create(a, 4, CCORE_RING_DROP_OLDEST, &r) == CCORE_OK);
    static frame_flow fl;
    memset(&fl, 0, sizeof fl);
    fl.pool = fp;
    fl.ring = r;
    pthread_t cap, pipe;
    pthread_create(&pipe, NULL, flow_pipeline, &fl);
    pthread_create(&cap, NULL, flow_capture, &fl);
    pthread_join(cap, NULL);
    pthread_join(pipe, NULL);
    CHECK(!fl.bad);
    CHECK(frames_out(fp) == 0);
    ccore_ring_stats rs;
    ccore_ring_get_stats(r, &rs);
    CHECK(rs.pushed + fl.exhausted == FLOW_FRAMES && rs.popped + rs.dropped_oldest == rs.pushed);
    CHECK(ccore_ring_destroy(r) == CCORE_OK);
    frame_teardown(a, fp);
}
