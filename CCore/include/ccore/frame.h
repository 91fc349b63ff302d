#ifndef CCORE_FRAME_H
#define CCORE_FRAME_H

#include <stdint.h>
#include "arena.h"
#include "image.h"
#include "pool.h"
#include "ring.h"

#ifdef __cplusplus
extern "C" {
#endif

/// A refcounted picture living in a slot of a frame pool: pixels, their layout, a capture time
/// and an EXIF orientation tag. Stages pass frames by pointer; the last release gives the slot
/// back to its pool. The refcount is atomic; the rest is written by whoever holds the only
/// reference (the producer, before it shares the frame).
typedef struct ccore_frame ccore_frame;

/// Slots sized for the largest image a pool's frames may hold.
typedef struct ccore_frame_pool ccore_frame_pool;

/// Carves `count` frame slots, each big enough for `format` at max_width x max_height (any
/// format and size needing no more bytes fits), from the arena.
ccore_status ccore_frame_pool_create(ccore_arena *arena, ccore_pixel_format format,
                                     int32_t max_width, int32_t max_height, uint32_t count,
                                     ccore_frame_pool **out);

/// Returns the pool to its arena. CCORE_ERR_BUSY (and nothing freed) while frames are out.
ccore_status ccore_frame_pool_destroy(ccore_frame_pool *pool);

/// The underlying slot pool's counters.
void ccore_frame_pool_get_stats(const ccore_frame_pool *pool, ccore_pool_stats *out);

/// Pixel bytes each slot holds.
size_t ccore_frame_pool_slot_bytes(const ccore_frame_pool *pool);

/// A frame with refcount 1 laid out for `format` at width x height (rows 64-byte aligned),
/// pts 0 and orientation 1; NULL if the pool is exhausted (counted) or the image does not fit.
ccore_frame *ccore_frame_acquire(ccore_frame_pool *pool, ccore_pixel_format format,
                                 int32_t width, int32_t height);

/// Adds a reference.
void ccore_frame_retain(ccore_frame *frame);

/// Drops a reference; the last one returns the slot to its pool. NULL is ignored.
void ccore_frame_release(ccore_frame *frame);

/// Current reference count (a snapshot).
uint32_t ccore_frame_refcount(const ccore_frame *frame);

/// The frame's pixels and layout.
ccore_image ccore_frame_image(const ccore_frame *frame);

/// Capture time in microseconds (the source's clock).
int64_t ccore_frame_pts_us(const ccore_frame *frame);
void ccore_frame_set_pts_us(ccore_frame *frame, int64_t pts_us);

/// EXIF orientation tag 1..8 of the pixels as stored.
int ccore_frame_orientation(const ccore_frame *frame);
/// Sets the tag; CCORE_ERR_INVALID outside 1..8.
ccore_status ccore_frame_set_orientation(ccore_frame *frame, int orientation);

/// Pushes a frame onto a ring, handing over the caller's reference. Whatever does not stay in
/// the ring (the evicted oldest, or this frame when rejected) is released here, so the producer
/// never blocks and never has to clean up. Returns what ccore_ring_push returned.
ccore_status ccore_frame_ring_push(ccore_ring *ring, ccore_frame *frame);

/// Pops the oldest frame (the caller owns its reference), or NULL when the ring is empty.
ccore_frame *ccore_frame_ring_pop(ccore_ring *ring);

#ifdef __cplusplus
}
#endif
#endif
