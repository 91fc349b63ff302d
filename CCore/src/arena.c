// The capped allocator: one fixed region, a hard cap, first-fit over an address-ordered free list.
//
// Invariants (all hold whenever the lock is free):
// - The block area [base, end) is tiled by chunks with no gap: each chunk starts GRAIN-aligned,
//   its size is a multiple of GRAIN, and its first word is that size. A chunk is either free
//   (its second word links the next free chunk) or handed out (its second word is a live magic
//   derived from the arena and the chunk's address, and the caller's block starts TAG bytes in).
// - The free list is sorted by address and no two free chunks touch: free() merges a chunk with
//   both neighbours, so a fully freed arena is one chunk again and fragmentation cannot ratchet.
// - in_use is the sum of the sizes of handed-out chunks (tags and rounding included; alignment
//   padding in front of a block becomes a free chunk of its own, so it is not counted).
// - Nothing outside [base, end) is ever touched, and the OS is never asked for more: when no free
//   chunk fits, alloc returns NULL and counts a failure.
// A pointer given to free() is accepted only if it is in range, GRAIN-aligned, carries the live
// magic for its address, and its chunk overlaps no free chunk; anything else (a foreign pointer, an
// interior pointer, a second free) is ignored, so a caller bug cannot corrupt the list.
//
// Under AddressSanitizer, arenas made by ccore_arena_create poison every byte that is not inside a
// handed-out block, so an overrun past a block or a use after free trips ASan at once. The
// allocator reads its own chunk words through unchecked accessors for that reason. Arenas laid
// over caller memory are never poisoned: nothing tells us when the caller takes that memory back.

// MAP_ANONYMOUS is outside strict ISO C / POSIX; ask for it explicitly so the file builds under
// -std=c11 as well as gnu11 (SwiftPM does not define _GNU_SOURCE).
#if !defined(_GNU_SOURCE) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE 1
#endif
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#if defined(__SANITIZE_ADDRESS__)
#define CCORE_ARENA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CCORE_ARENA_ASAN 1
#endif
#endif

#ifdef CCORE_ARENA_ASAN
#include <sanitizer/asan_interface.h>
#define ARENA_UNCHECKED __attribute__((no_sanitize_address, noinline))
#else
#define ARENA_UNCHECKED
#endif

#define ARENA_MAGIC 0x4343524eu // marks a live ccore_arena header
#define ARENA_LIVE 0x9e3779b9u  // mixed into every handed-out chunk's magic
#define GRAIN ((size_t)16)      // chunk granularity and minimum block alignment
#define TAG GRAIN               // bytes in front of every handed-out block
#define MAX_ALIGN ((size_t)4096)

// The two words at the start of every chunk. For a free chunk `link` is the next free chunk; a
// handed-out chunk keeps its live magic in `magic`, which overlays part of that word.
typedef struct chunk {
    size_t size;
    union {
        struct chunk *link;
        uint32_t magic;
    } u;
} chunk;

_Static_assert(sizeof(chunk) <= GRAIN, "a chunk header must fit in one grain");

struct ccore_arena {
    atomic_flag lock;
    uint32_t magic;
    int owned;          // mapped by ccore_arena_create: destroy may unmap it
    size_t map_len;     // bytes mapped, when owned
    uint8_t *base;      // first chunk
    uint8_t *end;       // one past the last chunk
    chunk *free_head;   // lowest free chunk
    size_t cap;
    size_t in_use;
    size_t high_water;
    size_t live_blocks;
    uint64_t failures;
};

// Header bytes rounded to a cache line, so the block area starts as aligned as the region does.
#define ARENA_OVERHEAD ((sizeof(struct ccore_arena) + 63) & ~(size_t)63)

// --- chunk words, read and written without ASan checks (they may sit in poisoned memory) ---

// Size word of the chunk at `c`.
static ARENA_UNCHECKED size_t chunk_size(const chunk *c) { return c->size; }

// Next free chunk after free chunk `c`.
static ARENA_UNCHECKED chunk *chunk_link(const chunk *c) { return c->u.link; }

// The magic word of a (claimed) handed-out chunk.
static ARENA_UNCHECKED uint32_t chunk_magic(const chunk *c) { return c->u.magic; }

// Makes `c` a free chunk of `size` bytes linking to `next`.
static ARENA_UNCHECKED void chunk_set_free(chunk *c, size_t size, chunk *next) {
    c->size = size;
    c->u.link = next;
}

// Makes `c` a handed-out chunk of `size` bytes carrying `magic`.
static ARENA_UNCHECKED void chunk_set_live(chunk *c, size_t size, uint32_t magic) {
    c->u.link = NULL; // clears the high half of the word on 64-bit targets
    c->size = size;
    c->u.magic = magic;
}

// Wipes a chunk header that is being merged into a neighbour, so a stale pointer to it can never
// pass as live again.
static ARENA_UNCHECKED void chunk_wipe(chunk *c) {
    c->size = 0;
    c->u.link = NULL;
}

// The magic a live chunk at `c` must carry: ties the block to this arena and this address, so a
// block of another arena or a shifted pointer does not match.
static uint32_t live_magic(const ccore_arena *a, const chunk *c) {
    uintptr_t x = ((uintptr_t)c >> 4) ^ ((uintptr_t)a >> 6);
    return ARENA_LIVE ^ (uint32_t)x ^ (uint32_t)((uint64_t)x >> 32);
}

// Hides [p, p+n) from the program (ASan builds, owned arenas only).
static void arena_poison(const ccore_arena *a, void *p, size_t n) {
#ifdef CCORE_ARENA_ASAN
    if (a->owned) ASAN_POISON_MEMORY_REGION(p, n);
#else
    (void)a, (void)p, (void)n;
#endif
}

// Opens [p, p+n) to the program again (ASan builds, owned arenas only).
static void arena_unpoison(const ccore_arena *a, void *p, size_t n) {
#ifdef CCORE_ARENA_ASAN
    if (a->owned) ASAN_UNPOISON_MEMORY_REGION(p, n);
#else
    (void)a, (void)p, (void)n;
#endif
}

// Tells the core we are spinning, so a sibling hyper-thread gets the pipeline.
static inline void arena_cpu_relax(void) {
#if CCORE_X86
    __builtin_ia32_pause();
#elif CCORE_ARM64
    __asm__ __volatile__("yield");
#endif
}

// Takes the arena lock. A spin lock is enough because only set-up and teardown allocate; after a
// short spin it yields so a preempted holder on a small board can finish.
static void arena_lock(ccore_arena *a) {
    unsigned spins = 0;
    while (atomic_flag_test_and_set_explicit(&a->lock, memory_order_acquire)) {
        if (++spins < 64) {
            arena_cpu_relax();
        } else {
            spins = 0;
            sched_yield();
        }
    }
}

// Releases the arena lock.
static void arena_unlock(ccore_arena *a) { atomic_flag_clear_explicit(&a->lock, memory_order_release); }

// Whether `a` looks like an arena set up by this file.
static int arena_ok(const ccore_arena *a) { return a && a->magic == ARENA_MAGIC; }

size_t ccore_arena_overhead(void) { return ARENA_OVERHEAD; }

ccore_status ccore_arena_init(void *mem, size_t len, ccore_arena **out) {
    if (!out) return CCORE_ERR_INVALID;
    *out = NULL;
    if (!mem || ((uintptr_t)mem & (GRAIN - 1)) || len < ARENA_OVERHEAD + 2 * GRAIN)
        return CCORE_ERR_INVALID;
    ccore_arena *a = mem;
    size_t area = (len - ARENA_OVERHEAD) & ~(GRAIN - 1);
    atomic_flag_clear_explicit(&a->lock, memory_order_relaxed);
    a->magic = ARENA_MAGIC;
    a->owned = 0;
    a->map_len = 0;
    a->base = (uint8_t *)mem + ARENA_OVERHEAD;
    a->end = a->base + area;
    a->cap = area;
    a->in_use = 0;
    a->high_water = 0;
    a->live_blocks = 0;
    a->failures = 0;
    a->free_head = (chunk *)a->base;
    chunk_set_free(a->free_head, area, NULL);
    *out = a;
    return CCORE_OK;
}

ccore_status ccore_arena_create(size_t cap, int prefault, ccore_arena **out) {
    if (!out) return CCORE_ERR_INVALID;
    *out = NULL;
    cap &= ~(GRAIN - 1);
    if (cap < 2 * GRAIN) return CCORE_ERR_INVALID;
    long page_l = sysconf(_SC_PAGESIZE);
    size_t page = page_l > 0 ? (size_t)page_l : 4096;
    if (cap > SIZE_MAX - ARENA_OVERHEAD - page) return CCORE_ERR_NO_MEMORY;
    size_t map_len = ccore_align_up(ARENA_OVERHEAD + cap, page);
    int flags = MAP_PRIVATE | MAP_ANONYMOUS;
#ifdef MAP_POPULATE
    if (prefault) flags |= MAP_POPULATE;
#endif
    void *mem = mmap(NULL, map_len, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (mem == MAP_FAILED) return CCORE_ERR_NO_MEMORY;
    if (prefault) {
        // MAP_POPULATE may be missing or only advisory; a write per page makes every page
        // resident and private now, so RSS does not grow later in the session.
        for (size_t off = 0; off < map_len; off += page) ((volatile uint8_t *)mem)[off] = 0;
    }
    ccore_arena *a = NULL;
    ccore_status st = ccore_arena_init(mem, ARENA_OVERHEAD + cap, &a);
    if (st != CCORE_OK) {
        munmap(mem, map_len);
        return st;
    }
    a->owned = 1;
    a->map_len = map_len;
    arena_poison(a, a->base, a->cap);
    *out = a;
    return CCORE_OK;
}

ccore_status ccore_arena_destroy(ccore_arena *arena) {
    if (!arena_ok(arena) || !arena->owned) return CCORE_ERR_INVALID;
    arena_lock(arena);
    size_t live = arena->live_blocks;
    if (live) {
        arena_unlock(arena);
        return CCORE_ERR_BUSY;
    }
    arena->magic = 0;
    size_t map_len = arena->map_len;
#ifdef CCORE_ARENA_ASAN
    // The next mapping at this address must not inherit our poison.
    ASAN_UNPOISON_MEMORY_REGION(arena, map_len);
#endif
    arena_unlock(arena);
    munmap(arena, map_len);
    return CCORE_OK;
}

void *ccore_arena_alloc(ccore_arena *arena, size_t size, size_t align) {
    if (!arena_ok(arena) || size == 0 || !ccore_is_pow2(align) || align > MAX_ALIGN) return NULL;
    if (align < GRAIN) align = GRAIN;
    ccore_arena *a = arena;
    arena_lock(a);
    uint8_t *user = NULL;
    if (size <= a->cap) {
        size_t total = TAG + ccore_align_up(size, GRAIN);
        chunk *prev = NULL;
        for (chunk *c = a->free_head; c; prev = c, c = chunk_link(c)) {
            size_t csize = chunk_size(c);
            uintptr_t start = (uintptr_t)c;
            size_t pad = ccore_align_up(start + TAG, align) - TAG - start;
            if (pad > csize || csize - pad < total) continue;
            chunk *next = chunk_link(c);
            size_t rest = csize - pad - total;
            chunk *blk = (chunk *)((uint8_t *)c + pad);
            if (rest) {
                chunk *r = (chunk *)((uint8_t *)blk + total);
                chunk_set_free(r, rest, next);
                next = r;
            }
            if (pad) {
                // The padding in front stays a free chunk where c was, keeping address order.
                chunk_set_free(c, pad, next);
            } else if (prev) {
                chunk_set_free(prev, chunk_size(prev), next);
            } else {
                a->free_head = next;
            }
            chunk_set_live(blk, total, live_magic(a, blk));
            a->in_use += total;
            if (a->in_use > a->high_water) a->high_water = a->in_use;
            a->live_blocks++;
            user = (uint8_t *)blk + TAG;
            arena_unpoison(a, user, size);
            break;
        }
    }
    if (!user) a->failures++;
    arena_unlock(a);
    return user;
}

void ccore_arena_free(ccore_arena *arena, void *block) {
    if (!block || !arena_ok(arena)) return;
    ccore_arena *a = arena;
    uint8_t *p = block;
    arena_lock(a);
    // Range and alignment first: only then is it safe to read the tag in front of p.
    if ((uintptr_t)p & (GRAIN - 1) || p < a->base + TAG || p >= a->end) goto ignore;
    chunk *c = (chunk *)(p - TAG);
    size_t size = chunk_size(c);
    if (chunk_magic(c) != live_magic(a, c) || size < TAG + GRAIN || (size & (GRAIN - 1)) ||
        size > (size_t)(a->end - (uint8_t *)c))
        goto ignore;
    chunk *prev = NULL, *next = a->free_head;
    while (next && next < c) {
        prev = next;
        next = chunk_link(next);
    }
    // A live chunk never overlaps free space; if this one does, its tag is stale or forged.
    if (prev && (uint8_t *)prev + chunk_size(prev) > (uint8_t *)c) goto ignore;
    if (next && (uint8_t *)c + size > (uint8_t *)next) goto ignore;

    a->in_use -= size;
    a->live_blocks--;
    arena_poison(a, c, size);
    chunk *after = next;
    if (next && (uint8_t *)c + size == (uint8_t *)next) {
        size += chunk_size(next);
        after = chunk_link(next);
        chunk_wipe(next);
    }
    if (prev && (uint8_t *)prev + chunk_size(prev) == (uint8_t *)c) {
        chunk_wipe(c);
        chunk_set_free(prev, chunk_size(prev) + size, after);
    } else {
        chunk_set_free(c, size, after);
        if (prev) chunk_set_free(prev, chunk_size(prev), c);
        else a->free_head = c;
    }
ignore:
    arena_unlock(a);
}

void ccore_arena_get_stats(const ccore_arena *arena, ccore_arena_stats *out) {
    if (!out) return;
    *out = (ccore_arena_stats){0};
    if (!arena_ok(arena)) return;
    // The lock lives inside the arena's writable region; taking it does not change the arena's
    // observable state, so casting away const here is sound.
    ccore_arena *a = (ccore_arena *)arena;
    arena_lock(a);
    out->cap = a->cap;
    out->in_use = a->in_use;
    out->high_water = a->high_water;
    out->live_blocks = a->live_blocks;
    out->failures = a->failures;
    arena_unlock(a);
}
