// A minimal test harness for the C core: TEST(name) registers a test at load time (no shared
// list to edit), CHECK records a failure with its location and carries on, REQUIRE stops the
// test. The runner (main.c) prints one line per failure and closes with "N passed, N failed".
#ifndef CCORE_CHECK_H
#define CCORE_CHECK_H

#include <stdint.h>
#include <stdio.h>

typedef void (*check_fn)(void);
void check_register(const char *name, check_fn fn);
void check_fail(const char *file, int line, const char *expr);
int check_failed_now(void);

#define TEST(name)                                                                  \
    static void test_##name(void);                                                  \
    __attribute__((constructor)) static void register_##name(void) {                \
        check_register(#name, test_##name);                                         \
    }                                                                               \
    static void test_##name(void)

#define CHECK(expr)                                                                 \
    do {                                                                            \
        if (!(expr)) check_fail(__FILE__, __LINE__, #expr);                         \
    } while (0)

#define REQUIRE(expr)                                                               \
    do {                                                                            \
        if (!(expr)) {                                                              \
            check_fail(__FILE__, __LINE__, #expr);                                  \
            return;                                                                 \
        }                                                                           \
    } while (0)

/// A deterministic generator for property tests (xorshift64*), seeded per test.
typedef struct { uint64_t s; } check_rng;
static inline uint64_t check_next(check_rng *r) {
    r->s ^= r->s >> 12; r->s ^= r->s << 25; r->s ^= r->s >> 27;
    return r->s * 2685821657736338717ull;
}
/// Uniform in [lo, hi].
static inline int check_range(check_rng *r, int lo, int hi) {
    return lo + (int)(check_next(r) % (uint64_t)(hi - lo + 1));
}

/// A buffer whose last byte sits right before an inaccessible page, so reading or writing past
/// the end faults at once (under any build, not only with ASan). Freed with check_guarded_free.
void *check_guarded_alloc(size_t bytes);
void check_guarded_free(void *p, size_t bytes);

#endif
