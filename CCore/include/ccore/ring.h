#ifndef CCORE_RING_H
#define CCORE_RING_H

#include <stdint.h>
#include "arena.h"

#ifdef __cplusplus
extern "C" {
#endif

/// What a full ring does with a push.
typedef enum ccore_ring_policy {
    CCORE_RING_DROP_OLDEST = 0,   ///< take the oldest entry out (handed back to the producer), keep the new one
    CCORE_RING_REJECT_NEWEST = 1, ///< refuse the new entry (CCORE_ERR_FULL)
} ccore_ring_policy;

/// A bounded single-producer/single-consumer queue of opaque handles (e.g. frame pointers).
/// Power-of-two capacity, free-running indices; the producer never blocks and memory never
/// grows. Exactly one thread pushes and one thread pops at a time.
typedef struct ccore_ring ccore_ring;

typedef struct ccore_ring_stats {
    uint32_t capacity;        ///< entries it can hold
    uint32_t count;           ///< entries held now (a snapshot)
    uint64_t pushed;          ///< entries accepted
    uint64_t popped;          ///< entries taken by the consumer
    uint64_t dropped_oldest;  ///< entries taken out by the producer to make room
    uint64_t rejected_newest; ///< pushes refused
} ccore_ring_stats;

/// Bytes a ring of `capacity` entries needs (0 if capacity is not a power of two in 2..2^24).
size_t ccore_ring_size(uint32_t capacity);

/// Lays a ring over caller memory of at least ccore_ring_size(capacity) bytes, 64-byte aligned.
ccore_status ccore_ring_init(void *mem, size_t len, uint32_t capacity, ccore_ring_policy policy,
                             ccore_ring **out);

/// Carves a ring from the arena. CCORE_ERR_NO_MEMORY when the cap is reached.
ccore_status ccore_ring_create(ccore_arena *arena, uint32_t capacity, ccore_ring_policy policy,
                               ccore_ring **out);

/// Returns a ring made by ccore_ring_create to its arena. Entries still queued are the caller's
/// to drain first: CCORE_ERR_BUSY (and nothing freed) while it holds any.
ccore_status ccore_ring_destroy(ccore_ring *ring);

/// Producer: queues `handle`. CCORE_OK; CCORE_DROPPED_OLDEST with the evicted handle in
/// *evicted (the caller now owns it); or CCORE_ERR_FULL (rejected, the caller keeps `handle`).
ccore_status ccore_ring_push(ccore_ring *ring, uintptr_t handle, uintptr_t *evicted);

/// Consumer: takes the oldest entry into *out. CCORE_OK or CCORE_ERR_EMPTY.
ccore_status ccore_ring_pop(ccore_ring *ring, uintptr_t *out);

/// A snapshot of the ring's counters.
void ccore_ring_get_stats(const ccore_ring *ring, ccore_ring_stats *out);

#ifdef __cplusplus
}
#endif
#endif
