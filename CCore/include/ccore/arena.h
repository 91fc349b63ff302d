#ifndef CCORE_ARENA_H
#define CCORE_ARENA_H

#include <stddef.h>
#include <stdint.h>
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The capped allocator: one region with a hard byte cap, fixed at start-up, from which every
/// long-lived CCore object (pools, rings, scratch) is carved. Allocation and free take a short
/// spin lock, so any thread may use it; they are meant for set-up and teardown, not per frame.
/// Exceeding the cap returns NULL and counts a failure: it never aborts and never asks the OS
/// for more.
typedef struct ccore_arena ccore_arena;

typedef struct ccore_arena_stats {
    size_t cap;           ///< bytes that can be handed out in all
    size_t in_use;        ///< bytes handed out now (block headers and alignment included)
    size_t high_water;    ///< largest in_use seen
    size_t live_blocks;   ///< allocations not yet freed
    uint64_t failures;    ///< allocations refused because the cap would be exceeded
} ccore_arena_stats;

/// Bytes of bookkeeping that ccore_arena_init keeps at the start of the caller's region.
size_t ccore_arena_overhead(void);

/// Lays an arena over caller memory [mem, mem+len); cap = len - overhead. The memory must stay
/// valid until the arena is no longer used. Returns CCORE_ERR_INVALID if mem is NULL, not
/// 16-byte aligned, or too small.
ccore_status ccore_arena_init(void *mem, size_t len, ccore_arena **out);

/// Maps a private region of `cap` bytes (plus overhead) for a new arena, touching every page
/// when `prefault` is non-zero so the whole budget is resident from the start and RSS never
/// grows later. CCORE_ERR_NO_MEMORY if the OS refuses.
ccore_status ccore_arena_create(size_t cap, int prefault, ccore_arena **out);

/// Unmaps an arena made by ccore_arena_create. CCORE_ERR_BUSY (and nothing freed) while
/// blocks are live; CCORE_ERR_INVALID for an arena laid over caller memory.
ccore_status ccore_arena_destroy(ccore_arena *arena);

/// `size` bytes aligned to `align` (a power of two, at most 4096); NULL when the cap would be
/// exceeded (counted in failures) or the arguments are invalid.
void *ccore_arena_alloc(ccore_arena *arena, size_t size, size_t align);

/// Gives back a block from ccore_arena_alloc of the same arena; NULL is ignored.
void ccore_arena_free(ccore_arena *arena, void *block);

/// A consistent snapshot of the arena's counters.
void ccore_arena_get_stats(const ccore_arena *arena, ccore_arena_stats *out);

#ifdef __cplusplus
}
#endif
#endif
