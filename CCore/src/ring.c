// Bounded single-producer/single-consumer ring of opaque handles.
//
// Invariants:
// - head and tail are free-running 32-bit counters; entry n lives in slots[n & mask]. The capacity
//   is a power of two (at most 2^24), so it divides 2^32 and tail - head (unsigned) is the count
//   even across wrap-around. 0 <= tail - head <= capacity at every instant.
// - Only the producer writes tail and the slots. It stores the slot, then publishes it with a
//   release store of tail; the consumer's acquire load of tail makes the slot's value visible.
// - head is shared. Under REJECT_NEWEST only the consumer moves it (a plain release store).
//   Under DROP_OLDEST the producer, finding the ring full (tail - head == capacity), takes the
//   oldest entry itself so it never blocks: it reads slots[head & mask] and CASes head from h to
//   h + 1; on success that handle is its own (handed back as *evicted) and the slot is free for
//   the new entry. The consumer pops the same way: load head h, check h != tail, read slots[h],
//   CAS head h -> h + 1. Whoever wins the CAS owns entry h, exactly once. A consumer whose CAS
//   fails read an entry the producer took (and may since have overwritten), so it discards what
//   it read and retries; because its read precedes its CAS, and the producer only overwrites a
//   slot after a CAS has moved head past it, a consumer whose CAS succeeds read the entry it won.
//   Both loops are lock-free: a failed CAS means the other side made progress.
// - head and tail sit on separate cache lines (and away from the fixed fields) so the two threads
//   do not bounce one line on every operation. Counters are written by one side each.
#include <stdatomic.h>

#include "internal.h"

#define RING_MAGIC 0x4352494eu
#define RING_MIN 2u
#define RING_MAX (1u << 24)

struct ccore_ring {
    // Fixed at init.
    uint32_t magic;
    uint32_t capacity;
    uint32_t mask;
    ccore_ring_policy policy;
    ccore_arena *arena;   // set when made by ccore_ring_create
    // Producer side.
    _Alignas(64) _Atomic(uint32_t) tail;
    _Atomic(uint64_t) pushed;
    _Atomic(uint64_t) dropped_oldest;
    _Atomic(uint64_t) rejected_newest;
    // Consumer side (head is also CASed by an evicting producer).
    _Alignas(64) _Atomic(uint32_t) head;
    _Atomic(uint64_t) popped;
    _Alignas(64) _Atomic(uintptr_t) slots[];
};

// Adds one to a counter only this thread writes (no read-modify-write needed).
static inline void counter_bump(_Atomic(uint64_t) *c) {
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

// Whether `r` looks like a ring set up by this file.
static int ring_ok(const ccore_ring *r) { return r && r->magic == RING_MAGIC; }

size_t ccore_ring_size(uint32_t capacity) {
    if (capacity < RING_MIN || capacity > RING_MAX || !ccore_is_pow2(capacity)) return 0;
    return sizeof(ccore_ring) + (size_t)capacity * sizeof(_Atomic(uintptr_t));
}

ccore_status ccore_ring_init(void *mem, size_t len, uint32_t capacity, ccore_ring_policy policy,
                             ccore_ring **out) {
    if (!out) return CCORE_ERR_INVALID;
    *out = NULL;
    size_t need = ccore_ring_size(capacity);
    if (!need || !mem || ((uintptr_t)mem & (CCORE_CACHE_LINE - 1)) ||
        (policy != CCORE_RING_DROP_OLDEST && policy != CCORE_RING_REJECT_NEWEST))
        return CCORE_ERR_INVALID;
    if (len < need) return CCORE_ERR_TOO_SMALL;
    ccore_ring *r = mem;
    r->magic = RING_MAGIC;
    r->capacity = capacity;
    r->mask = capacity - 1;
    r->policy = policy;
    r->arena = NULL;
    atomic_init(&r->tail, 0);
    atomic_init(&r->pushed, 0);
    atomic_init(&r->dropped_oldest, 0);
    atomic_init(&r->rejected_newest, 0);
    atomic_init(&r->head, 0);
    atomic_init(&r->popped, 0);
    for (uint32_t i = 0; i < capacity; i++) atomic_init(&r->slots[i], 0);
    *out = r;
    return CCORE_OK;
}

ccore_status ccore_ring_create(ccore_arena *arena, uint32_t capacity, ccore_ring_policy policy,
                               ccore_ring **out) {
    if (!out) return CCORE_ERR_INVALID;
    *out = NULL;
    size_t need = ccore_ring_size(capacity);
    if (!arena || !need || (policy != CCORE_RING_DROP_OLDEST && policy != CCORE_RING_REJECT_NEWEST))
        return CCORE_ERR_INVALID;
    void *mem = ccore_arena_alloc(arena, need, CCORE_CACHE_LINE);
    if (!mem) return CCORE_ERR_NO_MEMORY;
    ccore_ring *r = NULL;
    ccore_status st = ccore_ring_init(mem, need, capacity, policy, &r);
    if (st != CCORE_OK) {
        ccore_arena_free(arena, mem);
        return st;
    }
    r->arena = arena;
    *out = r;
    return CCORE_OK;
}

ccore_status ccore_ring_destroy(ccore_ring *ring) {
    if (!ring_ok(ring) || !ring->arena) return CCORE_ERR_INVALID;
    uint32_t t = atomic_load_explicit(&ring->tail, memory_order_acquire);
    uint32_t h = atomic_load_explicit(&ring->head, memory_order_acquire);
    if (t != h) return CCORE_ERR_BUSY;
    ring->magic = 0;
    ccore_arena_free(ring->arena, ring);
    return CCORE_OK;
}

ccore_status ccore_ring_push(ccore_ring *ring, uintptr_t handle, uintptr_t *evicted) {
    if (!ring) return CCORE_ERR_INVALID;
    int drop = ring->policy == CCORE_RING_DROP_OLDEST;
    // The evicted entry must have somewhere to go, or it would leak.
    if (drop && !evicted) return CCORE_ERR_INVALID;
    if (evicted) *evicted = 0;
    uint32_t t = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    uint32_t h = atomic_load_explicit(&ring->head, memory_order_acquire);
    ccore_status result = CCORE_OK;
    if (t - h >= ring->capacity) {
        if (!drop) {
            counter_bump(&ring->rejected_newest);
            return CCORE_ERR_FULL;
        }
        for (;;) {
            // Read before the CAS: once head moves past h the consumer never reads this slot.
            uintptr_t oldest = atomic_load_explicit(&ring->slots[h & ring->mask], memory_order_relaxed);
            if (atomic_compare_exchange_strong_explicit(&ring->head, &h, h + 1, memory_order_acq_rel,
                                                        memory_order_acquire)) {
                *evicted = oldest;
                counter_bump(&ring->dropped_oldest);
                result = CCORE_DROPPED_OLDEST;
                break;
            }
            // The consumer popped entry h meanwhile; there is room now unless it was the
            // only change (h now holds the fresh head).
            if (t - h < ring->capacity) break;
        }
    }
    atomic_store_explicit(&ring->slots[t & ring->mask], handle, memory_order_relaxed);
    atomic_store_explicit(&ring->tail, t + 1, memory_order_release);
    counter_bump(&ring->pushed);
    return result;
}

ccore_status ccore_ring_pop(ccore_ring *ring, uintptr_t *out) {
    if (!ring || !out) return CCORE_ERR_INVALID;
    uint32_t h = atomic_load_explicit(&ring->head, memory_order_acquire);
    if (ring->policy == CCORE_RING_REJECT_NEWEST) {
        // The producer never moves head under this policy, so no CAS is needed.
        uint32_t t = atomic_load_explicit(&ring->tail, memory_order_acquire);
        if (t == h) return CCORE_ERR_EMPTY;
        *out = atomic_load_explicit(&ring->slots[h & ring->mask], memory_order_relaxed);
        atomic_store_explicit(&ring->head, h + 1, memory_order_release);
        counter_bump(&ring->popped);
        return CCORE_OK;
    }
    for (;;) {
        uint32_t t = atomic_load_explicit(&ring->tail, memory_order_acquire);
        if (t == h) return CCORE_ERR_EMPTY;
        uintptr_t value = atomic_load_explicit(&ring->slots[h & ring->mask], memory_order_relaxed);
        if (atomic_compare_exchange_strong_explicit(&ring->head, &h, h + 1, memory_order_acq_rel,
                                                    memory_order_acquire)) {
            *out = value;
            counter_bump(&ring->popped);
            return CCORE_OK;
        }
        // The producer evicted entry h; h now holds the new head.
    }
}

void ccore_ring_get_stats(const ccore_ring *ring, ccore_ring_stats *out) {
    if (!out) return;
    *out = (ccore_ring_stats){0};
    if (!ring_ok(ring)) return;
    uint32_t h = atomic_load_explicit(&ring->head, memory_order_acquire);
    uint32_t t = atomic_load_explicit(&ring->tail, memory_order_acquire);
    uint32_t count = t - h;
    // head and tail are read at different instants; keep the snapshot within bounds.
    out->capacity = ring->capacity;
    out->count = count > ring->capacity ? ring->capacity : count;
    out->pushed = atomic_load_explicit(&ring->pushed, memory_order_relaxed);
    out->popped = atomic_load_explicit(&ring->popped, memory_order_relaxed);
    out->dropped_oldest = atomic_load_explicit(&ring->dropped_oldest, memory_order_relaxed);
    out->rejected_newest = atomic_load_explicit(&ring->rejected_newest, memory_order_relaxed);
}
