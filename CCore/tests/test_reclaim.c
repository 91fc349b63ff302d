// Returning all-zero pages mapped during a window: only new memory, only resident pages that
// read as zeros, the data around them untouched, and the pages read as zeros again after.
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ccore/reclaim.h"
#include "check.h"

enum { SNAP = 4096 };
static ccore_range before[SNAP], after[SNAP];

static size_t page(void) { return (size_t)sysconf(_SC_PAGESIZE); }

static int resident(const unsigned char *p) {
    unsigned char v = 0;
    return mincore((void *)p, page(), &v) == 0 && (v & 1);
}

// A private anonymous region of `pages`: page 0 holds data, pages 1..zeroed written with zeros
// (resident), the rest never touched.
static unsigned char *make_region(size_t pages, size_t zeroed) {
    unsigned char *p = mmap(NULL, pages * page(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    memset(p, 0xA5, page());
    memset(p + page(), 0, zeroed * page());
    p[page() + 5] = 1;  // a single non-zero byte keeps page 1 resident
    return p;
}

TEST(snapshotListsAFreshMappingOnlyOnceItExists) {
    size_t nb = 0, na = 0;
    REQUIRE(ccore_anon_snapshot(before, SNAP, &nb) == CCORE_OK);
    CHECK(nb > 0);
    unsigned char *p = mmap(NULL, 32 * page(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(p != MAP_FAILED);
    REQUIRE(ccore_anon_snapshot(after, SNAP, &na) == CCORE_OK);
    int in_before = 0, in_after = 0;
    for (size_t i = 0; i < nb; i++)
        if (before[i].start <= (uintptr_t)p && (uintptr_t)p < before[i].end) in_before = 1;
    for (size_t i = 0; i < na; i++) {
        if (after[i].start <= (uintptr_t)p && (uintptr_t)(p + 32 * page()) <= after[i].end) in_after = 1;
        if (i > 0) CHECK(after[i - 1].end <= after[i].start);  // address order, no overlap
    }
    CHECK(!in_before && in_after);
    munmap(p, 32 * page());
}

TEST(onlyNewResidentZeroPagesAreReturnedAndDataStays) {
    // Memory from before the window, with zero pages written: never touched by the call.
    unsigned char *old = make_region(16, 8);
    REQUIRE(old);
    size_t nb = 0, na = 0, got = 0;
    REQUIRE(ccore_anon_snapshot(before, SNAP, &nb) == CCORE_OK);
    unsigned char *fresh = make_region(64, 40);
    REQUIRE(fresh);
    REQUIRE(ccore_anon_snapshot(after, SNAP, &na) == CCORE_OK);
    REQUIRE(ccore_reclaim_new_zero_pages(before, nb, after, na, 0, &got) == CCORE_OK);
    // Pages 2..40 of the fresh region were zero and resident: 39 pages (page 1 holds a byte).
    // Other memory mapped in the window (the test runner's own) may add a little.
    CHECK(got >= 39 * page());
    CHECK(got < 39 * page() + 64 * page());
    for (size_t i = 0; i < page(); i++) CHECK(fresh[i] == 0xA5);
    CHECK(fresh[page() + 5] == 1 && resident(fresh + page()));
    for (size_t k = 2; k <= 40; k++) CHECK(!resident(fresh + k * page()));
    for (size_t k = 2; k < 64; k++) {
        for (size_t i = 0; i < page(); i += 512) CHECK(fresh[k * page() + i] == 0);
    }
    // The old region kept its resident zero pages.
    for (size_t k = 2; k <= 8; k++) CHECK(resident(old + k * page()));
    munmap(old, 16 * page());
    munmap(fresh, 64 * page());
}

TEST(aRangeCutByAnOlderMappingIsReturnedOnlyOutsideIt) {
    size_t nb = 1, na = 1, got = 0;
    unsigned char *p = make_region(8, 7);
    REQUIRE(p);
    // Pretend pages 0..3 existed before: only 4..7 may be returned.
    ccore_range b = {(uintptr_t)p, (uintptr_t)(p + 4 * page())};
    ccore_range a = {(uintptr_t)p, (uintptr_t)(p + 8 * page())};
    REQUIRE(ccore_reclaim_new_zero_pages(&b, nb, &a, na, 5 * page(), &got) == CCORE_OK);
    CHECK(got == 0);  // the new stretch (4 pages) is below the minimum asked for
    REQUIRE(ccore_reclaim_new_zero_pages(&b, nb, &a, na, 4 * page(), &got) == CCORE_OK);
    CHECK(got == 4 * page());
    CHECK(resident(p + 2 * page()) && resident(p + 3 * page()));
    CHECK(!resident(p + 4 * page()) && !resident(p + 7 * page()));
    munmap(p, 8 * page());
}

TEST(badArgumentsAndASnapshotTooSmallAreRefused) {
    size_t n = 0, got = 0;
    CHECK(ccore_anon_snapshot(NULL, 4, &n) == CCORE_ERR_INVALID);
    CHECK(ccore_anon_snapshot(before, SNAP, NULL) == CCORE_ERR_INVALID);
    CHECK(ccore_anon_snapshot(before, 1, &n) == CCORE_ERR_TOO_SMALL && n == 0);
    CHECK(ccore_reclaim_zero_pages(10, 5, &got) == CCORE_ERR_INVALID);
    CHECK(ccore_reclaim_new_zero_pages(NULL, 1, after, 0, 0, &got) == CCORE_ERR_INVALID);
    CHECK(ccore_reclaim_zero_pages(0, 0, &got) == CCORE_OK && got == 0);
}
