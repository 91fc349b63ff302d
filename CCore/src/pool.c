// Fixed-size slot pool: a lock-free stack of free slot indices over slots carved once from an arena.
//
// Invariants:
// - `head` packs a 32-bit ABA tag (high half) and the index of the top free slot (low half, NIL
//   when empty). Every successful CAS on it bumps the tag, so a thread that read head, then slept
//   while the same index was popped and pushed back, fails its CAS instead of installing a stale
//   `next` (the tag would have to wrap all 2^32 values during that sleep to fool it).
// - next[i] is the index below slot i while i is free, and OUT while slot i is handed out. Only
//   the owner of a slot changes next[i] from OUT (release claims it with a CAS), so releasing a
//   slot that is not out fails that CAS and is refused instead of putting i on the stack twice.
// - A release publishes with the release half of its head CAS and an acquire reads head with
//   acquire order, so the next owner sees next[] and everything the last owner wrote in the slot.
// - Counters are statistics only: in_use is updated beside the stack, not inside it, so a snapshot
//   may be off by the operations in flight, never by more.
// Under AddressSanitizer a free slot is poisoned, so touching a slot (or a frame) after giving it
// back trips ASan; destroy unpoisons everything before the memory goes back to the arena.
#include <stdatomic.h>

#include "internal.h"

#if defined(__SANITIZE_ADDRESS__)
#define CCORE_POOL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CCORE_POOL_ASAN 1
#endif
#endif

#ifdef CCORE_POOL_ASAN
#include <sanitizer/asan_interface.h>
#define POOL_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define POOL_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POOL_POISON(p, n) ((void)(p), (void)(n))
#define POOL_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define POOL_MAGIC 0x43504f4cu
#define NIL 0xffffffffu          // end of the free stack
#define OUT 0xfffffffeu          // next[i] of a slot that is handed out
#define MAX_SLOTS 0x7fffffffu

struct ccore_pool {
    // Fixed at creation; read by every call, so kept off the lines that are written.
    uint32_t magic;
    uint32_t capacity;
    size_t stride;             // slot size rounded up to the alignment
    uint8_t *slots;
    _Atomic(uint32_t) *next;
    ccore_arena *arena;
    void *block;               // the arena allocation holding all of the above
    // The one word every acquire and release CASes.
    _Alignas(64) _Atomic(uint64_t) head;
    _Alignas(64) _Atomic(uint32_t) in_use;
    _Atomic(uint32_t) high_water;
    _Atomic(uint64_t) acquired;
    _Atomic(uint64_t) failures;
};

// Packs a tag and an index into a head word.
static inline uint64_t head_pack(uint64_t tag, uint32_t index) { return (tag << 32) | index; }

// Whether `p` looks like a pool made by ccore_pool_create.
static int pool_ok(const ccore_pool *p) { return p && p->magic == POOL_MAGIC; }

ccore_status ccore_pool_create(ccore_arena *arena, size_t slot_size, uint32_t count, size_t align,
                               ccore_pool **out) {
    if (!out) return CCORE_ERR_INVALID;
    *out = NULL;
    if (!arena || slot_size == 0 || count == 0 || count > MAX_SLOTS || !ccore_is_pow2(align) ||
        align < 8 || align > 4096)
        return CCORE_ERR_INVALID;
    if (slot_size > SIZE_MAX - align) return CCORE_ERR_NO_MEMORY;
    size_t stride = ccore_align_up(slot_size, align);
    size_t meta = ccore_align_up(sizeof(ccore_pool) + (size_t)count * sizeof(_Atomic(uint32_t)), align);
    if (stride > (SIZE_MAX - meta) / count) return CCORE_ERR_NO_MEMORY;
    size_t block_align = align > 64 ? align : 64;
    uint8_t *block = ccore_arena_alloc(arena, meta + stride * count, block_align);
    if (!block) return CCORE_ERR_NO_MEMORY;

    ccore_pool *p = (ccore_pool *)block;
    p->magic = POOL_MAGIC;
    p->capacity = count;
    p->stride = stride;
    p->slots = block + meta;
    p->next = (_Atomic(uint32_t) *)(block + sizeof(ccore_pool));
    p->arena = arena;
    p->block = block;
    for (uint32_t i = 0; i < count; i++)
        atomic_init(&p->next[i], i + 1 < count ? i + 1 : NIL);
    atomic_init(&p->head, head_pack(0, 0));
    atomic_init(&p->in_use, 0);
    atomic_init(&p->high_water, 0);
    atomic_init(&p->acquired, 0);
    atomic_init(&p->failures, 0);
    POOL_POISON(p->slots, stride * count);
    *out = p;
    return CCORE_OK;
}

ccore_status ccore_pool_destroy(ccore_pool *pool) {
    if (!pool_ok(pool)) return CCORE_ERR_INVALID;
    if (atomic_load_explicit(&pool->in_use, memory_order_acquire) != 0) return CCORE_ERR_BUSY;
    POOL_UNPOISON(pool->slots, pool->stride * pool->capacity);
    pool->magic = 0;
    ccore_arena_free(pool->arena, pool->block);
    return CCORE_OK;
}

void *ccore_pool_acquire(ccore_pool *pool) {
    if (!pool) return NULL;
    uint64_t h = atomic_load_explicit(&pool->head, memory_order_acquire);
    uint32_t index;
    for (;;) {
        index = (uint32_t)h;
        if (index == NIL) {
            atomic_fetch_add_explicit(&pool->failures, 1, memory_order_relaxed);
            return NULL;
        }
        // May be stale if another thread takes `index` meanwhile; the tag makes the CAS fail then.
        uint32_t below = atomic_load_explicit(&pool->next[index], memory_order_relaxed);
        if (atomic_compare_exchange_weak_explicit(&pool->head, &h, head_pack((h >> 32) + 1, below),
                                                  memory_order_acq_rel, memory_order_acquire))
            break;
    }
    atomic_store_explicit(&pool->next[index], OUT, memory_order_relaxed);
    uint32_t now = atomic_fetch_add_explicit(&pool->in_use, 1, memory_order_relaxed) + 1;
    uint32_t high = atomic_load_explicit(&pool->high_water, memory_order_relaxed);
    while (now > high && !atomic_compare_exchange_weak_explicit(&pool->high_water, &high, now,
                                                                memory_order_relaxed,
                                                                memory_order_relaxed)) {
    }
    atomic_fetch_add_explicit(&pool->acquired, 1, memory_order_relaxed);
    uint8_t *slot = pool->slots + (size_t)index * pool->stride;
    POOL_UNPOISON(slot, pool->stride);
    return slot;
}

ccore_status ccore_pool_release(ccore_pool *pool, void *slot) {
    int64_t i = ccore_pool_index_of(pool, slot);
    if (i < 0) return CCORE_ERR_INVALID;
    uint32_t index = (uint32_t)i;
    uint32_t expected = OUT;
    // Claims the slot back; fails if it is already free (a second release), which must not
    // push the index twice.
    if (!atomic_compare_exchange_strong_explicit(&pool->next[index], &expected, NIL,
                                                 memory_order_relaxed, memory_order_relaxed))
        return CCORE_ERR_INVALID;
    POOL_POISON(slot, pool->stride);
    atomic_fetch_sub_explicit(&pool->in_use, 1, memory_order_relaxed);
    uint64_t h = atomic_load_explicit(&pool->head, memory_order_relaxed);
    do {
        atomic_store_explicit(&pool->next[index], (uint32_t)h, memory_order_relaxed);
    } while (!atomic_compare_exchange_weak_explicit(&pool->head, &h, head_pack((h >> 32) + 1, index),
                                                    memory_order_acq_rel, memory_order_relaxed));
    return CCORE_OK;
}

int64_t ccore_pool_index_of(const ccore_pool *pool, const void *slot) {
    if (!pool_ok(pool) || !slot) return -1;
    uintptr_t at = (uintptr_t)slot, first = (uintptr_t)pool->slots;
    if (at < first) return -1;
    uintptr_t off = at - first;
    if (off / pool->stride >= pool->capacity || off % pool->stride) return -1;
    return (int64_t)(off / pool->stride);
}

void ccore_pool_get_stats(const ccore_pool *pool, ccore_pool_stats *out) {
    if (!out) return;
    *out = (ccore_pool_stats){0};
    if (!pool_ok(pool)) return;
    out->slot_size = pool->stride;
    out->capacity = pool->capacity;
    out->in_use = atomic_load_explicit(&pool->in_use, memory_order_relaxed);
    out->high_water = atomic_load_explicit(&pool->high_water, memory_order_relaxed);
    out->acquired = atomic_load_explicit(&pool->acquired, memory_order_relaxed);
    out->failures = atomic_load_explicit(&pool->failures, memory_order_relaxed);
}
