// Slot pool: exhaustion, counters, foreign pointers, destroy rules, and many threads never being
// handed the same slot at once.
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "ccore/pool.h"
#include "check.h"

// Reads the stats in one call, for brevity.
static ccore_pool_stats pool_stats_of(const ccore_pool *p) {
    ccore_pool_stats s;
    ccore_pool_get_stats(p, &s);
    return s;
}

TEST(poolCreateRejectsInvalidArguments) {
    ccore_arena *a;
    REQUIRE(ccore_arena_create(1 << 16, 0, &a) == CCORE_OK);
    ccore_pool *p = (ccore_pool *)1;
    CHECK(ccore_pool_create(NULL, 64, 4, 64, &p) == CCORE_ERR_INVALID && p == NULL);
    CHECK(ccore_pool_create(a, 0, 4, 64, &p) == CCORE_ERR_INVALID);
    CHECK(ccore_pool_create(a, 64, 0, 64, &p) == CCORE_ERR_INVALID);
    CHECK(ccore_pool_create(a, 64, 4, 4, &p) == CCORE_ERR_INVALID);
    CHECK(ccore_pool_create(a, 64, 4, 48, &p) == CCORE_ERR_INVALID);
    CHECK(ccore_pool_create(a, 64, 4, 8192, &p) == CCORE_ERR_INVALID);
    CHECK(ccore_pool_create(a, 64, 4, 64, NULL) == CCORE_ERR_INVALID);
    ccore_arena_stats s;
    ccore_arena_get_stats(a, &s);
    CHECK(s.live_blocks == 0 && s.failures == 0);
    CHECK(ccore_arena_destroy(a) == CCORE_OK);
}

TEST(poolCreateFailsCleanlyWhenTheArenaCapIsReached) {
    ccore_arena *a;
    REQUIRE(ccore_arena_create(1 << 14, 0, &a) == CCORE_OK);
    ccore_pool *p;
    CHECK(ccore_pool_create(a, 1024, 64, 64, &p) == CCORE_ERR_NO_MEMORY && p == NULL);
    CHECK(ccore_pool_create(a, SIZE_MAX / 2, 4, 64, &p) == CCORE_ERR_NO_MEMORY);
    ccore_arena_stats s;
    ccore_arena_get_stats(a, &s);
    CHECK(s.in_use == 0 && s.live_blocks == 0);
    CHECK(ccore_arena_destroy(a) == CCORE_OK);
}

TEST(poolSlotsAreAlignedDistinctAndIndexed) {
    ccore_arena *a;
    REQUIRE(ccore_arena_create(1 << 16, 0, &a) == CCORE_OK);
    ccore_pool *p;
    REQUIRE(ccore_pool_create(a, 100, 8, 128, &p) == CCORE_OK);
    ccore_pool_stats s = pool_stats_of(p);
    CHECK(s.slot_size == 128 && s.capacity == 8 && s.in_use == 0);
    uint8_t *slot[8];
    int seen[8] = {0};
    for (int i = 0; i < 8; i++) {
        slot[i] = ccore_pool_acquire(p);
        REQUIRE(slot[i] != NULL);
        CHECK(((uintptr_t)slot[i] & 127) == 0);
        int64_t idx = ccore_pool_index_of(p, slot[i]);
        REQUIRE(idx >= 0 && idx < 8);
        CHECK(!seen[idx]);
        seen[idx] = 1;
        memset(slot[i], i, 100);
    }
    for (int i = 0; i < 8; i++) CHECK(slot[i][0] == i && slot[i][99] == i);
    for (int i = 0; i < 8; i++) CHECK(ccore_pool_release(p, slot[i]) == CCORE_OK);
    CHECK(ccore_pool_destroy(p) == CCORE_OK);
    CHECK(ccore_arena_destroy(a) == CCORE_OK);
}

TEST(poolExhaustionReturnsNullAndCountsFailure) {
    ccore_arena *a;
    REQUIRE(ccore_arena_create(1 << 16, 0, &a) == CCORE_OK);
    ccore_pool *p;
    REQUIRE(ccore_pool_create(a, 64, 3, 64, &p) == CCORE_OK);
    void *x = ccore_pool_acquire(p), *y = ccore_pool_acquire(p), *z = ccore_pool_acquire(p);
    REQUIRE(x && y && z);
    CHECK(ccore_pool_acquire(p) == NULL);
    CHECK(ccore_pool_acquire(p) == NULL);
    ccore_pool_stats s = pool_stats_of(p);
    CHECK(s.in_use == 3 && s.acquired == 3 && s.failures == 2);
    CHECK(ccore_pool_release(p, y) == CCORE_OK);
    void *again = ccore_pool_acquire(p);
    CHECK(again == y); // the slot just returned is the one handed out next (LIFO, cache-warm)
    ccore_pool_release(p, x);
    ccore_pool_release(p, again);
    ccore_pool_release(p, z);
    CHECK(pool_stats_of(p).in_use == 0);
    CHECK(ccore_pool_destroy(p) == CCORE_OK);
    CHECK(ccore_arena_destroy(a) == CCORE_OK);
}

TEST(poolHighWaterTracksPeakInUse) {
    ccore_arena *a;
    REQUIRE(ccore_arena_create(1 << 16, 0, &a) == CCORE_OK);
    ccore_pool *p;
    REQUIRE(ccore_pool_create(a, 32, 10, 8, &p) == CCORE_OK);
    void *s[10];
    for (int i = 0; i < 6; i++) s[i] = ccore_pool_acquire(p);
    for (int i = 0; i < 6; i++) ccore_pool_release(p, s[i]);
    for (int i = 0; i < 2; i++) s[i] = ccore_pool_acquire(p);
    ccore_pool_stats st = pool_stats_of(p);
    CHECK(st.high_water == 6 && st.in_use == 2 && st.acquired == 8);
    for (int i = 0; i < 2; i++) ccore_pool_release(p, s[i]);
    CHECK(ccore_pool_destroy(p) == CCORE_OK);
    CHECK(ccore_arena_destroy(a) == CCORE_OK);
}

TEST(poolForeignMisalignedOrFreeSlotIsRejected) {
    ccore_arena *a;
    REQUIRE(ccore_arena_create(1 << 16, 0, &a) == CCORE_OK);
    ccore_pool *p, *q;
    REQUIRE(ccore_pool_create(a, 64, 4, 64, &p) == CCORE_OK);
    REQUIRE(ccore_pool_create(a, 64, 4, 64, &q) == CCORE_OK);
    uint8_t *x = ccore_pool_acquire(p);
    uint8_t *other = ccore_pool_acquire(q);
    REQUIRE(x && other);
    int local;
    CHECK(ccore_pool_release(p, &local) == CCORE_ERR_INVALID);
    CHECK(ccore_pool_release(p, x + 1) == CCORE_ERR_INVALID);
    uint8_t *first = (uint8_t *)x - 64 * ccore_pool_index_of(p, x);
    CHECK(ccore_pool_release(p, first + 64 * 4) == CCORE_ERR_INVALID);      // one past the end
    CHECK(ccore_pool_release(p, (void *)((uintptr_t)first - 64)) == CCORE_ERR_INVALID); // before
    CHECK(ccore_pool_release(p, other) == CCORE_ERR_INVALID);
    CHECK(ccore_pool_release(p, NULL) == CCORE_ERR_INVALID);
    CHECK(ccore_pool_release(NULL, x) == CCORE_ERR_INVALID);
    CHECK(ccore_pool_index_of(p, x + 1) == -1 && ccore_pool_index_of(p, other) == -1);
    // A slot that is still free (never handed out) is refused too.
    uint8_t *free_slot = first == x ? first + 64 : first;
    CHECK(ccore_pool_release(p, free_slot) == CCORE_ERR_INVALID);
    CHECK(pool_stats_of(p).in_use == 1);
    CHECK(ccore_pool_release(p, x) == CCORE_OK);
    CHECK(ccore_pool_release(p, x) == CCORE_ERR_INVALID); // second release
    CHECK(pool_stats_of(p).in_use == 0);
    // The stack survived all of that: every slot comes out exactly once.
    void *all[4];
    for (int i = 0; i < 4; i++) CHECK((all[i] = ccore_pool_acquire(p)) != NULL);
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++) CHECK(all[i] != all[j]);
    CHECK(ccore_pool_acquire(p) == NULL);
    for (int i = 0; i < 4; i++) ccore_pool_release(p, all[i]);
    ccore_pool_release(q, other);
    CHECK(ccore_pool_destroy(p) == CCORE_OK && ccore_pool_destroy(q) == CCORE_OK);
    CHECK(ccore_arena_destroy(a) == CCORE_OK);
}

TEST(poolDestroyRefusesWhileSlotsAreOut) {
    ccore_arena *a;
    REQUIRE(ccore_arena_create(1 << 16, 0, &a) == CCORE_OK);
    ccore_pool *p;
    REQUIRE(ccore_pool_create(a, 64, 2, 64, &p) == CCORE_OK);
    void *x = ccore_pool_acquire(p);
    CHECK(ccore_pool_destroy(p) == CCORE_ERR_BUSY);
    CHECK(ccore_pool_release(p, x) == CCORE_OK); // still usable after the refusal
    CHECK(ccore_pool_destroy(p) == CCORE_OK);
    ccore_arena_stats s;
    ccore_arena_get_stats(a, &s);
    CHECK(s.live_blocks == 0 && s.in_use == 0);
    CHECK(ccore_arena_destroy(a) == CCORE_OK);
}

enum { HAMMER_THREADS = 4, HAMMER_ROUNDS = 100000, HAMMER_SLOTS = 8, HAMMER_HOLD = 3 };

// Shared state of the hammer test: which thread believes it owns each slot right now.
typedef struct {
    ccore_pool *pool;
    _Atomic(int) owner[HAMMER_SLOTS];
    _Atomic(uint64_t) double_handouts;
    _Atomic(uint64_t) attempts;
    _Atomic(uint64_t) got;
} hammer_shared;

typedef struct {
    hammer_shared *shared;
    int id;
} hammer_arg;

// Acquires up to HAMMER_HOLD slots at a time and releases them, claiming each slot's marker on
// the way in and clearing it on the way out; finding a marker already set is a double handout.
static void *pool_hammer(void *arg) {
    hammer_arg *h = arg;
    hammer_shared *sh = h->shared;
    uint8_t *held[HAMMER_HOLD];
    uint64_t attempts = 0, got = 0;
    for (int round = 0; round < HAMMER_ROUNDS; round++) {
        int n = 1 + round % HAMMER_HOLD, have = 0;
        for (int k = 0; k < n; k++) {
            attempts++;
            uint8_t *s = ccore_pool_acquire(sh->pool);
            if (!s) continue;
            got++;
            int64_t idx = ccore_pool_index_of(sh->pool, s);
            int expected = 0;
            if (idx < 0 || !atomic_compare_exchange_strong(&sh->owner[idx], &expected, h->id))
                atomic_fetch_add(&sh->double_handouts, 1);
            s[0] = (uint8_t)h->id; // a write the next owner must never race with (TSan/ASan)
            held[have++] = s;
        }
        for (int k = 0; k < have; k++) {
            int64_t idx = ccore_pool_index_of(sh->pool, held[k]);
            int expected = h->id;
            if (held[k][0] != (uint8_t)h->id ||
                !atomic_compare_exchange_strong(&sh->owner[idx], &expected, 0))
                atomic_fetch_add(&sh->double_handouts, 1);
            if (ccore_pool_release(sh->pool, held[k]) != CCORE_OK)
                atomic_fetch_add(&sh->double_handouts, 1);
        }
    }
    atomic_fetch_add(&sh->attempts, attempts);
    atomic_fetch_add(&sh->got, got);
    return NULL;
}

TEST(poolFourThreadsHammeringNeverHandOutASlotTwice) {
    ccore_arena *a;
    REQUIRE(ccore_arena_create(1 << 16, 0, &a) == CCORE_OK);
    static hammer_shared sh;
    memset(&sh, 0, sizeof sh);
    REQUIRE(ccore_pool_create(a, 64, HAMMER_SLOTS, 64, &sh.pool) == CCORE_OK);
    pthread_t t[HAMMER_THREADS];
    hammer_arg args[HAMMER_THREADS];
    for (int i = 0; i < HAMMER_THREADS; i++) {
        args[i] = (hammer_arg){&sh, i + 1};
        REQUIRE(pthread_create(&t[i], NULL, pool_hammer, &args[i]) == 0);
    }
    for (int i = 0; i < HAMMER_THREADS; i++) pthread_join(t[i], NULL);
    CHECK(atomic_load(&sh.double_handouts) == 0);
    ccore_pool_stats s = pool_stats_of(sh.pool);
    CHECK(s.in_use == 0);
    CHECK(s.acquired == atomic_load(&sh.got));
    CHECK(s.acquired + s.failures == atomic_load(&sh.attempts));
    CHECK(s.high_water <= HAMMER_SLOTS && s.high_water >= HAMMER_HOLD);
    CHECK(ccore_pool_destroy(sh.pool) == CCORE_OK);
    CHECK(ccore_arena_destroy(a) == CCORE_OK);
}

#if defined(__SANITIZE_ADDRESS__)
#define POOL_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOL_TEST_ASAN 1
#endif
#endif

#ifdef POOL_TEST_ASAN
#include <sanitizer/asan_interface.h>

TEST(poolUnderASanPoisonsSlotsThatAreNotHandedOut) {
    ccore_arena *a;
    REQUIRE(ccore_arena_create(1 << 16, 0, &a) == CCORE_OK);
    ccore_pool *p;
    REQUIRE(ccore_pool_create(a, 64, 2, 64, &p) == CCORE_OK);
    uint8_t *s = ccore_pool_acquire(p);
    REQUIRE(s != NULL);
    CHECK(__asan_region_is_poisoned(s, 64) == NULL);
    CHECK(__asan_address_is_poisoned(s + 64)); // the neighbouring free slot
    ccore_pool_release(p, s);
    CHECK(__asan_address_is_poisoned(s));      // touching a released slot trips ASan
    CHECK(ccore_pool_destroy(p) == CCORE_OK);
    CHECK(ccore_arena_destroy(a) == CCORE_OK);
}
#endif
