#ifndef CCORE_POOL_H
#define CCORE_POOL_H

#include <stddef.h>
#include <stdint.h>
#include "arena.h"

#ifdef __cplusplus
extern "C" {
#endif

/// A fixed number of fixed-size slots carved from an arena at creation. Acquire and release are
/// O(1) and lock-free (a tagged free-list), safe from any number of threads, and never allocate.
typedef struct ccore_pool ccore_pool;

typedef struct ccore_pool_stats {
    size_t slot_size;     ///< usable bytes per slot (rounded up to the slot alignment)
    uint32_t capacity;    ///< slots in all
    uint32_t in_use;      ///< slots acquired and not yet released
    uint32_t high_water;  ///< largest in_use seen
    uint64_t acquired;    ///< successful acquires
    uint64_t failures;    ///< acquires refused because every slot was in use
} ccore_pool_stats;

/// Carves `count` slots of `slot_size` bytes, each aligned to `align` (power of two, 8..4096),
/// from the arena. CCORE_ERR_NO_MEMORY if the arena's cap is reached (nothing is kept).
ccore_status ccore_pool_create(ccore_arena *arena, size_t slot_size, uint32_t count,
                               size_t align, ccore_pool **out);

/// Returns the pool's memory to its arena. CCORE_ERR_BUSY (and nothing freed) while slots are out.
ccore_status ccore_pool_destroy(ccore_pool *pool);

/// A free slot, or NULL when all are in use (counted in failures).
void *ccore_pool_acquire(ccore_pool *pool);

/// Gives a slot back. A pointer that is not a slot of this pool is ignored and returns
/// CCORE_ERR_INVALID.
ccore_status ccore_pool_release(ccore_pool *pool, void *slot);

/// The slot's index in 0..capacity-1, or -1 if `slot` is not a slot of this pool.
int64_t ccore_pool_index_of(const ccore_pool *pool, const void *slot);

/// A snapshot of the pool's counters.
void ccore_pool_get_stats(const ccore_pool *pool, ccore_pool_stats *out);

#ifdef __cplusplus
}
#endif
#endif
