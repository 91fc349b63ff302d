// Returning all-zero pages mapped during a window: only new memory, only resident pages that
// read as zeros, the data around them untouched, and the pages read as zeros again after.
#include <stdlib.h>
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

static size_t fills, filled_bytes;
static void *counting_memset(void *p, int c, size_t n) {
    fills++;
    filled_bytes += n;
    return memset(p, c, n);
}

TEST(aSparseZeroFillLeavesUntouchedPagesUnwrittenAndZeroesTheRest) {
    // 64 pages, from an unaligned start inside page 0 to an unaligned end inside page 63:
    // page 0 holds data, page 1 a zero page written, pages 10..12 data; the rest never touched.
    unsigned char *p = make_region(64, 1);
    REQUIRE(p);
    memset(p + 10 * page(), 0x5A, 3 * page());
    fills = filled_bytes = 0;
    size_t skipped = 0;
    unsigned char *start = p + 100, *end = p + 63 * page() + 50;
    ccore_zero_fill_sparse(start, (size_t)(end - start), counting_memset, &skipped);
    // Pages 2..9 and 13..62 are left: 8 + 50 pages.
    CHECK(skipped == 58 * page());
    CHECK(filled_bytes == (size_t)(end - start) - skipped);
    CHECK(fills == 3);  // page 0's part with page 1, pages 10..12, page 63's part
    // Before reading them (a read maps the shared zero page, which mincore counts).
    CHECK(resident(p + 11 * page()));
    for (size_t k = 13; k < 63; k += 7) CHECK(!resident(p + k * page()));
    for (unsigned char *q = start; q < end; q += 97) CHECK(*q == 0);
    CHECK(end[-1] == 0 && start[0] == 0);
    for (size_t i = 0; i < 100; i++) CHECK(p[i] == 0xA5);  // before the range: kept
    CHECK(p[63 * page() + 50] == 0);                          // after it: untouched, still zero
    munmap(p, 64 * page());
}

TEST(aSparseZeroFillOutsideAnonymousMemoryFillsEverything) {
    // A private file mapping reads its file where it is not resident: nothing may be left out.
    char name[] = "/tmp/ccore-sparse-XXXXXX";
    int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    unlink(name);
    REQUIRE(ftruncate(fd, (off_t)(8 * page())) == 0);
    unsigned char *p = mmap(NULL, 8 * page(), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    close(fd);
    REQUIRE(p != MAP_FAILED);
    CHECK(!ccore_anon_covers((uintptr_t)p, (uintptr_t)(p + 8 * page())));
    size_t skipped = 1;
    fills = filled_bytes = 0;
    ccore_zero_fill_sparse(p, 8 * page(), counting_memset, &skipped);
    CHECK(skipped == 0 && filled_bytes == 8 * page() && fills == 1);
    munmap(p, 8 * page());
    // And anonymous memory is recognised as such, a range running past it is not.
    unsigned char *a = mmap(NULL, 8 * page(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(a != MAP_FAILED);
    CHECK(ccore_anon_covers((uintptr_t)a, (uintptr_t)(a + 8 * page())));
    munmap(a + 4 * page(), 4 * page());
    CHECK(!ccore_anon_covers((uintptr_t)a, (uintptr_t)(a + 8 * page())));
    munmap(a, 4 * page());
}

TEST(discardedPagesGoBackWhateverTheyHeldAndReadAsZeros) {
    unsigned char *p = make_region(8, 0);
    REQUIRE(p);
    memset(p, 0x77, 8 * page());
    size_t got = 0;
    // From inside page 0 to inside page 7: pages 1..6 go, the partial ends stay.
    REQUIRE(ccore_discard_pages((uintptr_t)(p + 10), (uintptr_t)(p + 7 * page() + 10), &got) == CCORE_OK);
    CHECK(got == 6 * page());
    CHECK(resident(p) && resident(p + 7 * page()));
    for (size_t k = 1; k <= 6; k++) CHECK(!resident(p + k * page()));
    CHECK(p[9] == 0x77 && p[7 * page() + 10] == 0x77);
    for (size_t k = 1; k <= 6; k++) CHECK(p[k * page() + 100] == 0);
    CHECK(ccore_discard_pages(10, 5, &got) == CCORE_ERR_INVALID);
    CHECK(ccore_discard_pages((uintptr_t)p + 1, (uintptr_t)p + 2, &got) == CCORE_OK && got == 0);
    munmap(p, 8 * page());
}
