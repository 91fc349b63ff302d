// SPSC ring: capacity rules, FIFO order, both full policies with exact counts, and two threads
// passing a million handles without losing or duplicating one.
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "ccore/ring.h"
#include "check.h"

// Reads the stats in one call, for brevity.
static ccore_ring_stats ring_stats_of(const ccore_ring *r) {
    ccore_ring_stats s;
    ccore_ring_get_stats(r, &s);
    return s;
}

// Caller memory for rings laid over it.
static _Alignas(64) uint8_t ring_mem[4096];

TEST(ringSizeAcceptsOnlyPowersOfTwoFrom2To2p24) {
    CHECK(ccore_ring_size(0) == 0);
    CHECK(ccore_ring_size(1) == 0);
    CHECK(ccore_ring_size(3) == 0);
    CHECK(ccore_ring_size(12) == 0);
    CHECK(ccore_ring_size((1u << 24) + 1) == 0);
    CHECK(ccore_ring_size(1u << 25) == 0);
    CHECK(ccore_ring_size(0x80000000u) == 0);
    CHECK(ccore_ring_size(2) > 0);
    CHECK(ccore_ring_size(1u << 24) > 0);
    // Each extra entry costs exactly one handle.
    CHECK(ccore_ring_size(64) - ccore_ring_size(32) == 32 * sizeof(uintptr_t));
}

TEST(ringInitRejectsBadMemoryCapacityOrPolicy) {
    ccore_ring *r = (ccore_ring *)1;
    size_t need = ccore_ring_size(8);
    REQUIRE(need > 0 && need <= sizeof ring_mem);
    CHECK(ccore_ring_init(NULL, need, 8, CCORE_RING_DROP_OLDEST, &r) == CCORE_ERR_INVALID && r == NULL);
    CHECK(ccore_ring_init(ring_mem + 16, need, 8, CCORE_RING_DROP_OLDEST, &r) == CCORE_ERR_INVALID);
    CHECK(ccore_ring_init(ring_mem, need, 6, CCORE_RING_DROP_OLDEST, &r) == CCORE_ERR_INVALID);
    CHECK(ccore_ring_init(ring_mem, need, 8, (ccore_ring_policy)7, &r) == CCORE_ERR_INVALID);
    CHECK(ccore_ring_init(ring_mem, need - 1, 8, CCORE_RING_DROP_OLDEST, &r) == CCORE_ERR_TOO_SMALL);
    REQUIRE(ccore_ring_init(ring_mem, need, 8, CCORE_RING_REJECT_NEWEST, &r) == CCORE_OK);
    ccore_ring_stats s = ring_stats_of(r);
    CHECK(s.capacity == 8 && s.count == 0 && s.pushed == 0);
    // A ring over caller memory is the caller's to drop; destroy only takes arena rings.
    CHECK(ccore_ring_destroy(r) == CCORE_ERR_INVALID);

    ccore_arena *a;
    REQUIRE(ccore_arena_create(1 << 14, 0, &a) == CCORE_OK);
    CHECK(ccore_ring_create(a, 5, CCORE_RING_DROP_OLDEST, &r) == CCORE_ERR_INVALID);
    CHECK(ccore_ring_create(a, 1u << 20, CCORE_RING_DROP_OLDEST, &r) == CCORE_ERR_NO_MEMORY);
    ccore_arena_stats as;
    ccore_arena_get_stats(a, &as);
    CHECK(as.live_blocks == 0);
    CHECK(ccore_arena_destroy(a) == CCORE_OK);
}

TEST(ringKeepsFifoOrderAcrossIndexWrap) {
    ccore_ring *r;
    REQUIRE(ccore_ring_init(ring_mem, sizeof ring_mem, 4, CCORE_RING_REJECT_NEWEST, &r) == CCORE_OK);
    uintptr_t next_in = 1, next_out = 1, v;
    check_rng rng = {42};
    // Random bursts of pushes and pops wrap the masked index many times.
    for (int round = 0; round < 2000; round++) {
        int pushes = check_range(&rng, 0, 4), pops = check_range(&rng, 0, 4);
        for (int i = 0; i < pushes; i++)
            if (ccore_ring_push(r, next_in, NULL) == CCORE_OK) next_in++;
        for (int i = 0; i < pops; i++) {
            if (ccore_ring_pop(r, &v) != CCORE_OK) break;
            CHECK(v == next_out);
            next_out++;
        }
        CHECK(ring_stats_of(r).count == next_in - next_out);
    }
    while (ccore_ring_pop(r, &v) == CCORE_OK) CHECK(v == next_out++);
    CHECK(next_out == next_in);
    CHECK(ccore_ring_pop(r, &v) == CCORE_ERR_EMPTY);
}

TEST(ringRejectNewestRefusesWhenFullWithExactCounts) {
    ccore_ring *r;
    REQUIRE(ccore_ring_init(ring_mem, sizeof ring_mem, 4, CCORE_RING_REJECT_NEWEST, &r) == CCORE_OK);
    uintptr_t evicted = 99;
    for (uintptr_t i = 1; i <= 4; i++) CHECK(ccore_ring_push(r, i, &evicted) == CCORE_OK);
    CHECK(evicted == 0);
    for (uintptr_t i = 5; i <= 7; i++) CHECK(ccore_ring_push(r, i, NULL) == CCORE_ERR_FULL);
    ccore_ring_stats s = ring_stats_of(r);
    CHECK(s.count == 4 && s.pushed == 4 && s.rejected_newest == 3 && s.dropped_oldest == 0);
    uintptr_t v;
    for (uintptr_t i = 1; i <= 4; i++) CHECK(ccore_ring_pop(r, &v) == CCORE_OK && v == i);
    CHECK(ccore_ring_pop(r, &v) == CCORE_ERR_EMPTY);
    s = ring_stats_of(r);
    CHECK(s.count == 0 && s.popped == 4);
}

TEST(ringDropOldestEvictsOldestWithExactCounts) {
    ccore_ring *r;
    REQUIRE(ccore_ring_init(ring_mem, sizeof ring_mem, 4, CCORE_RING_DROP_OLDEST, &r) == CCORE_OK);
    uintptr_t evicted;
    // The evicted handle has to go somewhere, so a push without the out-parameter is refused.
    CHECK(ccore_ring_push(r, 1, NULL) == CCORE_ERR_INVALID);
    for (uintptr_t i = 1; i <= 4; i++) CHECK(ccore_ring_push(r, i, &evicted) == CCORE_OK && evicted == 0);
    for (uintptr_t i = 5; i <= 10; i++) {
        CHECK(ccore_ring_push(r, i, &evicted) == CCORE_DROPPED_OLDEST);
        CHECK(evicted == i - 4);
    }
    ccore_ring_stats s = ring_stats_of(r);
    CHECK(s.count == 4 && s.pushed == 10 && s.dropped_oldest == 6 && s.rejected_newest == 0);
    uintptr_t v;
    for (uintptr_t i = 7; i <= 10; i++) CHECK(ccore_ring_pop(r, &v) == CCORE_OK && v == i);
    CHECK(ccore_ring_pop(r, &v) == CCORE_ERR_EMPTY);
    CHECK(ring_stats_of(r).popped == 4);
}

TEST(ringDestroyRefusesWhileEntriesAreQueued) {
    ccore_arena *a;
    REQUIRE(ccore_arena_create(1 << 14, 0, &a) == CCORE_OK);
    ccore_ring *r;
    REQUIRE(ccore_ring_create(a, 16, CCORE_RING_REJECT_NEWEST, &r) == CCORE_OK);
    CHECK(((uintptr_t)r & 63) == 0);
    CHECK(ccore_ring_push(r, 7, NULL) == CCORE_OK);
    CHECK(ccore_ring_destroy(r) == CCORE_ERR_BUSY);
    CHECK(ccore_arena_destroy(a) == CCORE_ERR_BUSY);
    uintptr_t v;
    CHECK(ccore_ring_pop(r, &v) == CCORE_OK && v == 7);
    CHECK(ccore_ring_destroy(r) == CCORE_OK);
    CHECK(ccore_arena_destroy(a) == CCORE_OK);
}

// Handles per run; failed tries a waiting side spins through before it sleeps; how far the
// DROP_OLDEST producer may run ahead of any sign of life from the consumer.
enum { PASS_COUNT = 1000000, PASS_SPINS = 1024, PASS_LEAD = 256 };

// Shared state of a two-thread run: the ring, the producer's finish flag, and per-handle marks.
typedef struct {
    ccore_ring *ring;
    _Atomic(int) ready;          // start barrier: both threads running before the first push
    _Atomic(int) done;
    _Atomic(uint64_t) consumed;  // pops so far, published by the consumer for pacing
    uint8_t *received; // written by the consumer only
    uint8_t *evicted;  // written by the producer only
    int out_of_order;  // consumer
    int bad_eviction;  // producer
} pass_state;

// Waits for the other side. Spinning covers the usual case (both threads on a core, the other
// a few hundred nanoseconds behind). After a long spin the other thread is likely off its core
// (oversubscribed CI boxes), so sleep briefly: a sleeping thread leaves the run queue and the
// other side gets the core at once, where sched_yield() measured up to 50x slower there.
static void pass_backoff(unsigned *spins) {
    if (++*spins % PASS_SPINS == 0) {
        struct timespec pause = {0, 20000};
        nanosleep(&pause, NULL);
        return;
    }
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

// Holds each thread until both are running, so the run measures them together rather than one
// finishing before the other starts.
static void pass_start(pass_state *st) {
    unsigned spins = 0;
    atomic_fetch_add(&st->ready, 1);
    while (atomic_load(&st->ready) < 2) pass_backoff(&spins);
}

// Producer for REJECT_NEWEST: retries each handle until the ring takes it.
static void *reject_producer(void *arg) {
    pass_state *st = arg;
    pass_start(st);
    for (uintptr_t i = 1; i <= PASS_COUNT; i++) {
        unsigned spins = 0;
        while (ccore_ring_push(st->ring, i, NULL) == CCORE_ERR_FULL) pass_backoff(&spins);
    }
    atomic_store(&st->done, 1);
    return NULL;
}

// Producer for DROP_OLDEST: never waits for room; records what it evicted (oldest first, so
// increasing). It does wait when it has run PASS_LEAD pushes without seeing the consumer make
// progress: the point is to have both sides CAS head at the same moments, and a producer racing
// alone through a million evictions (consumer off its core) would prove nothing.
static void *drop_producer(void *arg) {
    pass_state *st = arg;
    uintptr_t last_evicted = 0, progress_at = 0;
    uint64_t seen = 0;
    pass_start(st);
    for (uintptr_t i = 1; i <= PASS_COUNT; i++) {
        uint64_t now = atomic_load_explicit(&st->consumed, memory_order_relaxed);
        if (now != seen) {
            seen = now;
            progress_at = i;
        } else if (i - progress_at > PASS_LEAD) {
            unsigned spins = 0;
            while (atomic_load_explicit(&st->consumed, memory_order_relaxed) == seen) pass_backoff(&spins);
            progress_at = i;
        }
        uintptr_t e = 0;
        ccore_status s = ccore_ring_push(st->ring, i, &e);
        if (s == CCORE_DROPPED_OLDEST) {
            if (e == 0 || e >= i || e <= last_evicted || st->evicted[e - 1]) st->bad_eviction = 1;
            else st->evicted[e - 1] = 1;
            last_evicted = e;
        } else if (s != CCORE_OK) {
            st->bad_eviction = 1;
        }
    }
    atomic_store(&st->done, 1);
    return NULL;
}

// Consumer: pops until the producer is done and the ring is empty, checking strict order.
static void *pass_consumer(void *arg) {
    pass_state *st = arg;
    uintptr_t last = 0, v;
    uint64_t consumed = 0;
    unsigned spins = 0;
    pass_start(st);
    for (;;) {
        // Read before popping: once `done` is seen, every push has happened, so an empty pop
        // after it means the run is over.
        int finished = atomic_load(&st->done);
        if (ccore_ring_pop(st->ring, &v) == CCORE_OK) {
            if (v <= last || v > PASS_COUNT || st->received[v - 1]) st->out_of_order = 1;
            else st->received[v - 1] = 1;
            last = v;
            atomic_store_explicit(&st->consumed, ++consumed, memory_order_relaxed);
            continue;
        }
        if (finished) break;
        pass_backoff(&spins);
    }
    return NULL;
}

static uint8_t received_marks[PASS_COUNT];
static uint8_t evicted_marks[PASS_COUNT];

// Runs producer and consumer on two threads through a ring of `capacity` with `policy`.
static void pass_run(pass_state *st, uint32_t capacity, ccore_ring_policy policy, ccore_arena **arena) {
    memset(received_marks, 0, sizeof received_marks);
    memset(evicted_marks, 0, sizeof evicted_marks);
    *st = (pass_state){.received = received_marks, .evicted = evicted_marks};
    if (ccore_arena_create(1 << 14, 0, arena) != CCORE_OK) return;
    if (ccore_ring_create(*arena, capacity, policy, &st->ring) != CCORE_OK) {
        ccore_arena_destroy(*arena);
        return;
    }
    pthread_t prod, cons;
    pthread_create(&cons, NULL, pass_consumer, st);
    pthread_create(&prod, NULL, policy == CCORE_RING_DROP_OLDEST ? drop_producer : reject_producer, st);
    pthread_join(prod, NULL);
    pthread_join(cons, NULL);
}

TEST(ringTwoThreadsRejectNewestDeliverEveryHandleOnceInOrder) {
    pass_state st;
    ccore_arena *a;
    pass_run(&st, 64, CCORE_RING_REJECT_NEWEST, &a);
    REQUIRE(st.ring != NULL);
    CHECK(!st.out_of_order);
    size_t missing = 0;
    for (size_t i = 0; i < PASS_COUNT; i++) missing += !received_marks[i];
    CHECK(missing == 0);
    ccore_ring_stats s = ring_stats_of(st.ring);
    CHECK(s.pushed == PASS_COUNT && s.popped == PASS_COUNT && s.dropped_oldest == 0 && s.count == 0);
    CHECK(ccore_ring_destroy(st.ring) == CCORE_OK);
    CHECK(ccore_arena_destroy(a) == CCORE_OK);
}

TEST(ringTwoThreadsDropOldestLoseNothingAndDuplicateNothing) {
    pass_state st;
    ccore_arena *a;
    pass_run(&st, 8, CCORE_RING_DROP_OLDEST, &a);
    REQUIRE(st.ring != NULL);
    CHECK(!st.out_of_order && !st.bad_eviction);
    size_t wrong = 0, evicted = 0;
    for (size_t i = 0; i < PASS_COUNT; i++) {
        wrong += received_marks[i] + evicted_marks[i] != 1;
        evicted += evicted_marks[i];
    }
    CHECK(wrong == 0);
    ccore_ring_stats s = ring_stats_of(st.ring);
    CHECK(s.pushed == PASS_COUNT && s.dropped_oldest == evicted && s.rejected_newest == 0);
    CHECK(s.popped + s.dropped_oldest == PASS_COUNT && s.count == 0);
    CHECK(ccore_ring_destroy(st.ring) == CCORE_OK);
    CHECK(ccore_arena_destroy(a) == CCORE_OK);
}
