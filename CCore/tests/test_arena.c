// Arena: the hard cap, no leaks, first-fit with coalescing checked against a shadow model, bad
// frees ignored, and the create/destroy rules.
#include <pthread.h>
#include <string.h>

#include "ccore/arena.h"
#include "check.h"

// Caller memory for arenas laid over it (16-byte aligned as ccore_arena_init requires).
static _Alignas(64) uint8_t region[1 << 16];

// Reads the stats in one call, for brevity.
static ccore_arena_stats stats_of(const ccore_arena *a) {
    ccore_arena_stats s;
    ccore_arena_get_stats(a, &s);
    return s;
}

TEST(arenaInitRejectsNullMisalignedOrTooSmallRegions) {
    ccore_arena *a = (ccore_arena *)1;
    CHECK(ccore_arena_init(NULL, sizeof region, &a) == CCORE_ERR_INVALID && a == NULL);
    CHECK(ccore_arena_init(region + 8, sizeof region - 8, &a) == CCORE_ERR_INVALID);
    CHECK(ccore_arena_init(region, ccore_arena_overhead(), &a) == CCORE_ERR_INVALID);
    CHECK(ccore_arena_init(region, sizeof region, NULL) == CCORE_ERR_INVALID);
    REQUIRE(ccore_arena_init(region, sizeof region, &a) == CCORE_OK && a);
    ccore_arena_stats s = stats_of(a);
    CHECK(s.cap == sizeof region - ccore_arena_overhead());
    CHECK(s.in_use == 0 && s.high_water == 0 && s.live_blocks == 0 && s.failures == 0);
    CHECK(ccore_arena_overhead() <= 256);
}

TEST(arenaCapReachedReturnsNullCountsFailureAndKeepsInUse) {
    ccore_arena *a;
    REQUIRE(ccore_arena_create(4096, 0, &a) == CCORE_OK);
    void *big = ccore_arena_alloc(a, 3000, 16);
    REQUIRE(big != NULL);
    ccore_arena_stats before = stats_of(a);
    CHECK(before.in_use >= 3000 && before.live_blocks == 1);
    CHECK(ccore_arena_alloc(a, 2000, 16) == NULL);
    CHECK(ccore_arena_alloc(a, SIZE_MAX, 16) == NULL);
    ccore_arena_stats after = stats_of(a);
    CHECK(after.failures == before.failures + 2);
    CHECK(after.in_use == before.in_use && after.live_blocks == 1);
    ccore_arena_free(a, big);
    CHECK(stats_of(a).in_use == 0);
    CHECK(ccore_arena_destroy(a) == CCORE_OK);
}

TEST(arenaInvalidArgumentsReturnNullWithoutCountingFailure) {
    ccore_arena *a;
    REQUIRE(ccore_arena_create(4096, 0, &a) == CCORE_OK);
    CHECK(ccore_arena_alloc(a, 0, 16) == NULL);
    CHECK(ccore_arena_alloc(a, 16, 3) == NULL);
    CHECK(ccore_arena_alloc(a, 16, 0) == NULL);
    CHECK(ccore_arena_alloc(a, 16, 8192) == NULL);
    CHECK(ccore_arena_alloc(NULL, 16, 16) == NULL);
    CHECK(stats_of(a).failures == 0);
    ccore_arena_free(NULL, region); // ignored
    CHECK(ccore_arena_destroy(a) == CCORE_OK);
}

TEST(arenaFreeingEverythingLeavesNoLiveBlocksAndOneWholeChunk) {
    ccore_arena *a;
    REQUIRE(ccore_arena_init(region, sizeof region, &a) == CCORE_OK);
    size_t cap = stats_of(a).cap;
    void *p[64];
    for (int i = 0; i < 64; i++) REQUIRE((p[i] = ccore_arena_alloc(a, 1 + (size_t)i * 23, 16)));
    CHECK(stats_of(a).live_blocks == 64);
    // Free in an order that leaves holes on both sides before they close.
    for (int i = 0; i < 64; i += 2) ccore_arena_free(a, p[i]);
    for (int i = 63; i > 0; i -= 2) ccore_arena_free(a, p[i]);
    ccore_arena_stats s = stats_of(a);
    CHECK(s.in_use == 0 && s.live_blocks == 0);
    // Fully coalesced: the largest possible block (cap minus its 16-byte tag) fits again.
    void *all = ccore_arena_alloc(a, cap - 16, 16);
    CHECK(all != NULL);
    ccore_arena_free(a, all);
    CHECK(stats_of(a).in_use == 0);
}

TEST(arenaHighWaterTracksThePeak) {
    ccore_arena *a;
    REQUIRE(ccore_arena_init(region, sizeof region, &a) == CCORE_OK);
    void *x = ccore_arena_alloc(a, 1000, 16);
    void *y = ccore_arena_alloc(a, 1000, 16);
    size_t peak = stats_of(a).in_use;
    ccore_arena_free(a, x);
    ccore_arena_free(a, y);
    void *z = ccore_arena_alloc(a, 10, 16);
    ccore_arena_stats s = stats_of(a);
    CHECK(s.high_water == peak && s.in_use < peak);
    ccore_arena_free(a, z);
}

TEST(arenaAlignmentUpTo4096IsHonoured) {
    ccore_arena *a;
    REQUIRE(ccore_arena_create(1 << 16, 0, &a) == CCORE_OK);
    void *blocks[13];
    for (int k = 0; k <= 12; k++) {
        size_t align = (size_t)1 << k;
        blocks[k] = ccore_arena_alloc(a, 24, align);
        REQUIRE(blocks[k] != NULL);
        CHECK(((uintptr_t)blocks[k] & (align - 1)) == 0);
        CHECK(((uintptr_t)blocks[k] & 15) == 0);
        memset(blocks[k], 0xab, 24);
    }
    for (int k = 0; k <= 12; k++) ccore_arena_free(a, blocks[k]);
    ccore_arena_stats s = stats_of(a);
    CHECK(s.in_use == 0 && s.live_blocks == 0);
    CHECK(ccore_arena_destroy(a) == CCORE_OK);
}

// One live block of the shadow model: where it is, how big, and the byte it was filled with.
typedef struct {
    uint8_t *p;
    size_t size;
    uint8_t fill;
} shadow_block;

TEST(arenaRandomAllocFreeMatchesShadowModel) {
    enum { SLOTS = 96, STEPS = 20000 };
    ccore_arena *a;
    REQUIRE(ccore_arena_create(1 << 17, 0, &a) == CCORE_OK);
    ccore_arena_stats s0 = stats_of(a);
    // The block area lies right after the arena's header.
    uint8_t *lo = (uint8_t *)a + ccore_arena_overhead(), *hi = lo + s0.cap;
    shadow_block live[SLOTS] = {{0}};
    check_rng rng = {0x5eed1234abcdull};
    uint64_t expected_failures = 0;
    for (int step = 0; step < STEPS && !check_failed_now(); step++) {
        int i = check_range(&rng, 0, SLOTS - 1);
        if (live[i].p) {
            // The block still holds what was written: no neighbour overran it.
            for (size_t k = 0; k < live[i].size; k++)
                if (live[i].p[k] != live[i].fill) {
                    CHECK(!"block content corrupted");
                    break;
                }
            ccore_arena_free(a, live[i].p);
            live[i].p = NULL;
            continue;
        }
        size_t size = (size_t)(check_range(&rng, 0, 3) == 0 ? check_range(&rng, 1, 8000)
                                                             : check_range(&rng, 1, 300));
        size_t align = (size_t)1 << check_range(&rng, 0, 12);
        uint8_t *p = ccore_arena_alloc(a, size, align);
        if (!p) {
            expected_failures++;
            continue;
        }
        CHECK(((uintptr_t)p & (align - 1)) == 0);
        CHECK(p >= lo && p + size <= hi);
        for (int j = 0; j < SLOTS; j++)
            if (live[j].p) CHECK(p + size <= live[j].p || live[j].p + live[j].size <= p);
        live[i] = (shadow_block){p, size, (uint8_t)step};
        memset(p, live[i].fill, size);

        size_t count = 0;
        for (int j = 0; j < SLOTS; j++) count += live[j].p != NULL;
        ccore_arena_stats s = stats_of(a);
        CHECK(s.live_blocks == count);
        CHECK(s.in_use <= s.cap && s.high_water >= s.in_use);
    }
    CHECK(stats_of(a).failures == expected_failures);
    for (int j = 0; j < SLOTS; j++) ccore_arena_free(a, live[j].p);
    ccore_arena_stats s = stats_of(a);
    CHECK(s.in_use == 0 && s.live_blocks == 0);
    void *all = ccore_arena_alloc(a, s.cap - 16, 16); // coalesced back into one chunk
    CHECK(all != NULL);
    ccore_arena_free(a, all);
    CHECK(ccore_arena_destroy(a) == CCORE_OK);
}

TEST(arenaBadAndDoubleFreesAreIgnored) {
    ccore_arena *a, *other;
    REQUIRE(ccore_arena_create(8192, 0, &a) == CCORE_OK);
    REQUIRE(ccore_arena_create(8192, 0, &other) == CCORE_OK);
    uint8_t *x = ccore_arena_alloc(a, 256, 16);
    uint8_t *y = ccore_arena_alloc(a, 256, 64);
    uint8_t *foreign = ccore_arena_alloc(other, 64, 16);
    REQUIRE(x && y && foreign);
    memset(x, 0, 256);
    ccore_arena_stats before = stats_of(a);
    int local;
    ccore_arena_free(a, &local);             // not in the region
    ccore_arena_free(a, x + 1);              // misaligned
    ccore_arena_free(a, x + 16);             // interior, no tag there
    ccore_arena_free(a, x + 256);            // past the block, into free space
    ccore_arena_free(a, foreign);            // another arena's block
    ccore_arena_free(a, (uint8_t *)a + 16);  // inside the arena's own header
    ccore_arena_stats after = stats_of(a);
    CHECK(after.in_use == before.in_use && after.live_blocks == 2);

    ccore_arena_free(a, x);
    ccore_arena_stats once = stats_of(a);
    ccore_arena_free(a, x); // double free of a chunk now at the start of free space
    ccore_arena_free(a, y);
    ccore_arena_free(a, y); // double free of a chunk merged into its neighbour
    ccore_arena_stats twice = stats_of(a);
    CHECK(once.live_blocks == 1 && twice.live_blocks == 0 && twice.in_use == 0);
    // The free list is intact: the whole cap is one chunk again.
    void *all = ccore_arena_alloc(a, twice.cap - 16, 16);
    CHECK(all != NULL);
    ccore_arena_free(a, all);
    ccore_arena_free(other, foreign);
    CHECK(ccore_arena_destroy(a) == CCORE_OK);
    CHECK(ccore_arena_destroy(other) == CCORE_OK);
}

TEST(arenaDestroyRefusesLiveBlocksAndCallerMemory) {
    ccore_arena *a, *laid;
    REQUIRE(ccore_arena_create(4096, 0, &a) == CCORE_OK);
    void *p = ccore_arena_alloc(a, 100, 16);
    REQUIRE(p != NULL);
    CHECK(ccore_arena_destroy(a) == CCORE_ERR_BUSY);
    CHECK(stats_of(a).live_blocks == 1); // nothing was freed
    ccore_arena_free(a, p);
    CHECK(ccore_arena_destroy(a) == CCORE_OK);
    CHECK(ccore_arena_destroy(NULL) == CCORE_ERR_INVALID);
    REQUIRE(ccore_arena_init(region, sizeof region, &laid) == CCORE_OK);
    CHECK(ccore_arena_destroy(laid) == CCORE_ERR_INVALID);
}

TEST(arenaPrefaultedCreateHandsOutItsWholeCap) {
    ccore_arena *a;
    CHECK(ccore_arena_create(0, 1, &a) == CCORE_ERR_INVALID);
    CHECK(ccore_arena_create(SIZE_MAX, 1, &a) == CCORE_ERR_NO_MEMORY && a == NULL);
    REQUIRE(ccore_arena_create(1 << 20, 1, &a) == CCORE_OK);
    ccore_arena_stats s = stats_of(a);
    CHECK(s.cap == 1 << 20);
    uint8_t *p = ccore_arena_alloc(a, s.cap - 16, 16);
    REQUIRE(p != NULL);
    memset(p, 0x5a, s.cap - 16);
    CHECK(stats_of(a).in_use == s.cap);
    CHECK(ccore_arena_alloc(a, 1, 16) == NULL);
    ccore_arena_free(a, p);
    CHECK(ccore_arena_destroy(a) == CCORE_OK);
}

// One thread of the concurrency test: its arena and a stamp no other thread uses.
typedef struct {
    ccore_arena *arena;
    uint8_t stamp;
    int corrupted;
} arena_worker_arg;

// Allocates, stamps, re-reads and frees blocks many times; a block shared with another thread
// shows up as a foreign stamp.
static void *arena_worker(void *arg) {
    arena_worker_arg *w = arg;
    for (int i = 0; i < 5000; i++) {
        size_t size = 16 + (size_t)(i % 7) * 24;
        uint8_t *p = ccore_arena_alloc(w->arena, size, 16);
        if (!p) continue;
        memset(p, w->stamp, size);
        for (size_t k = 0; k < size; k++)
            if (p[k] != w->stamp) w->corrupted = 1;
        ccore_arena_free(w->arena, p);
    }
    return NULL;
}

TEST(arenaConcurrentThreadsNeverShareABlock) {
    ccore_arena *a;
    REQUIRE(ccore_arena_create(1 << 14, 0, &a) == CCORE_OK);
    pthread_t t[4];
    arena_worker_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (arena_worker_arg){a, (uint8_t)(0x10 + i), 0};
        REQUIRE(pthread_create(&t[i], NULL, arena_worker, &args[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        CHECK(!args[i].corrupted);
    }
    ccore_arena_stats s = stats_of(a);
    CHECK(s.in_use == 0 && s.live_blocks == 0);
    CHECK(ccore_arena_destroy(a) == CCORE_OK);
}

#if defined(__SANITIZE_ADDRESS__)
#define ARENA_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_TEST_ASAN 1
#endif
#endif

#ifdef ARENA_TEST_ASAN
#include <sanitizer/asan_interface.h>

TEST(arenaUnderASanPoisonsEverythingButLiveBlocks) {
    ccore_arena *a;
    REQUIRE(ccore_arena_create(8192, 0, &a) == CCORE_OK);
    uint8_t *p = ccore_arena_alloc(a, 40, 16);
    REQUIRE(p != NULL);
    CHECK(__asan_region_is_poisoned(p, 40) == NULL);
    CHECK(__asan_address_is_poisoned(p + 40));  // an overrun past the block trips ASan
    CHECK(__asan_address_is_poisoned(p - 1));   // so does an underrun into the tag
    ccore_arena_free(a, p);
    CHECK(__asan_address_is_poisoned(p));       // and a use after free
    CHECK(ccore_arena_destroy(a) == CCORE_OK);
}
#endif
