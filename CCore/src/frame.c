// Refcounted frames in pool slots. A slot is a frame header followed by the pixel bytes, which
// start on a cache line so every plane row laid out by ccore_image_layout does too.
//
// Ownership: whoever holds a reference may read the pixels; only the holder of the sole reference
// may write them or the metadata (the producer, before it shares the frame). The last release
// returns the slot. The acq_rel decrement orders every holder's reads and writes before the slot
// is handed to its next owner, who gets it through the pool's acquire.
#include <stdatomic.h>

#include "internal.h"

#define FRAME_POOL_MAGIC 0x43465250u

struct ccore_frame {
    _Atomic(uint32_t) refs;
    int32_t orientation;
    int64_t pts_us;
    ccore_frame_pool *pool;
    ccore_image image;
};

struct ccore_frame_pool {
    uint32_t magic;
    ccore_arena *arena;
    ccore_pool *slots;
    size_t pixel_bytes;
};

// Header bytes in front of the pixels, a whole number of cache lines.
#define FRAME_HEADER ((sizeof(struct ccore_frame) + CCORE_CACHE_LINE - 1) & ~(size_t)(CCORE_CACHE_LINE - 1))

// Whether `p` looks like a frame pool made by ccore_frame_pool_create.
static int frame_pool_ok(const ccore_frame_pool *p) { return p && p->magic == FRAME_POOL_MAGIC; }

ccore_status ccore_frame_pool_create(ccore_arena *arena, ccore_pixel_format format,
                                     int32_t max_width, int32_t max_height, uint32_t count,
                                     ccore_frame_pool **out) {
    if (!out) return CCORE_ERR_INVALID;
    *out = NULL;
    size_t pixels = ccore_image_bytes(format, max_width, max_height);
    if (!arena || !pixels || count == 0) return CCORE_ERR_INVALID;
    if (pixels > SIZE_MAX - FRAME_HEADER) return CCORE_ERR_NO_MEMORY;
    ccore_frame_pool *fp = ccore_arena_alloc(arena, sizeof *fp, CCORE_CACHE_LINE);
    if (!fp) return CCORE_ERR_NO_MEMORY;
    ccore_pool *slots = NULL;
    ccore_status st = ccore_pool_create(arena, FRAME_HEADER + pixels, count, CCORE_CACHE_LINE, &slots);
    if (st != CCORE_OK) {
        ccore_arena_free(arena, fp);
        return st;
    }
    *fp = (ccore_frame_pool){
        .magic = FRAME_POOL_MAGIC, .arena = arena, .slots = slots, .pixel_bytes = pixels};
    *out = fp;
    return CCORE_OK;
}

ccore_status ccore_frame_pool_destroy(ccore_frame_pool *pool) {
    if (!frame_pool_ok(pool)) return CCORE_ERR_INVALID;
    ccore_status st = ccore_pool_destroy(pool->slots);
    if (st != CCORE_OK) return st;
    pool->magic = 0;
    ccore_arena_free(pool->arena, pool);
    return CCORE_OK;
}

void ccore_frame_pool_get_stats(const ccore_frame_pool *pool, ccore_pool_stats *out) {
    if (!out) return;
    if (!frame_pool_ok(pool)) {
        *out = (ccore_pool_stats){0};
        return;
    }
    ccore_pool_get_stats(pool->slots, out);
}

size_t ccore_frame_pool_slot_bytes(const ccore_frame_pool *pool) {
    return frame_pool_ok(pool) ? pool->pixel_bytes : 0;
}

ccore_frame *ccore_frame_acquire(ccore_frame_pool *pool, ccore_pixel_format format,
                                 int32_t width, int32_t height) {
    if (!frame_pool_ok(pool)) return NULL;
    size_t need = ccore_image_bytes(format, width, height);
    // A size that cannot fit is the caller's mistake, not pool pressure: not counted as a failure.
    if (!need || need > pool->pixel_bytes) return NULL;
    uint8_t *slot = ccore_pool_acquire(pool->slots);
    if (!slot) return NULL;
    ccore_frame *f = (ccore_frame *)slot;
    atomic_init(&f->refs, 1);
    f->orientation = 1;
    f->pts_us = 0;
    f->pool = pool;
    if (ccore_image_layout(format, width, height, slot + FRAME_HEADER, pool->pixel_bytes, &f->image) != 0) {
        // Unreachable with a size checked above; give the slot back rather than hand out garbage.
        ccore_pool_release(pool->slots, slot);
        return NULL;
    }
    return f;
}

void ccore_frame_retain(ccore_frame *frame) {
    if (!frame) return;
    // Taking a reference needs no ordering: the caller already holds one.
    atomic_fetch_add_explicit(&frame->refs, 1, memory_order_relaxed);
}

void ccore_frame_release(ccore_frame *frame) {
    if (!frame) return;
    // A CAS loop instead of a plain decrement so that a stray extra release of a frame still in
    // its slot cannot wrap the count and keep the slot out forever.
    uint32_t refs = atomic_load_explicit(&frame->refs, memory_order_relaxed);
    do {
        if (refs == 0) return;
    } while (!atomic_compare_exchange_weak_explicit(&frame->refs, &refs, refs - 1,
                                                    memory_order_acq_rel, memory_order_relaxed));
    if (refs == 1) ccore_pool_release(frame->pool->slots, frame);
}

uint32_t ccore_frame_refcount(const ccore_frame *frame) {
    return frame ? atomic_load_explicit(&frame->refs, memory_order_acquire) : 0;
}

ccore_image ccore_frame_image(const ccore_frame *frame) {
    if (!frame) return (ccore_image){0};
    return frame->image;
}

int64_t ccore_frame_pts_us(const ccore_frame *frame) { return frame ? frame->pts_us : 0; }

void ccore_frame_set_pts_us(ccore_frame *frame, int64_t pts_us) {
    if (frame) frame->pts_us = pts_us;
}

int ccore_frame_orientation(const ccore_frame *frame) { return frame ? frame->orientation : 0; }

ccore_status ccore_frame_set_orientation(ccore_frame *frame, int orientation) {
    if (!frame || orientation < 1 || orientation > 8) return CCORE_ERR_INVALID;
    frame->orientation = orientation;
    return CCORE_OK;
}

ccore_status ccore_frame_ring_push(ccore_ring *ring, ccore_frame *frame) {
    if (!frame) return CCORE_ERR_INVALID;
    uintptr_t evicted = 0;
    ccore_status st = ccore_ring_push(ring, (uintptr_t)frame, &evicted);
    if (st == CCORE_DROPPED_OLDEST) {
        ccore_frame_release((ccore_frame *)evicted);
    } else if (st != CCORE_OK) {
        // Rejected (or an invalid ring): the reference was handed over either way, so it ends here.
        ccore_frame_release(frame);
    }
    return st;
}

ccore_frame *ccore_frame_ring_pop(ccore_ring *ring) {
    uintptr_t handle = 0;
    if (ccore_ring_pop(ring, &handle) != CCORE_OK) return NULL;
    return (ccore_frame *)handle;
}
