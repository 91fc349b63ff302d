// Dropping the loaded objects' read-only pages: they leave the resident set and come back with
// the same bytes on their next touch; code keeps running; writable data is never touched.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ccore/codepages.h"
#include "check.h"

// A read-only table large enough to span whole pages (in .rodata, a read-only segment).
static const uint32_t table[8192] = {[0] = 0x12345678u, [4095] = 0xCAFEF00Du, [8191] = 0x0BADBEEFu};
// Writable data with a value set at run time: it must keep it.
static uint32_t written[4096];

static int resident(const void *p) {
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    unsigned char v = 0;
    return mincore((void *)((uintptr_t)p & ~(page - 1)), page, &v) == 0 && (v & 1);
}

// The resident size of this process in KiB (VmRSS).
static long rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL) return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "VmRSS:", 6) == 0) kib = atol(line + 6);
    }
    fclose(f);
    return kib;
}

static uint32_t sum_table(void) {
    uint32_t s = 0;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) s += table[i] * (uint32_t)(i + 1);
    return s;
}

TEST(code_pages_leave_and_come_back_with_the_same_bytes) {
    volatile const uint32_t *t = table;
    uint32_t before = sum_table();
    written[100] = 0xFEEDu;
    REQUIRE(t[4095] == 0xCAFEF00Du);
    CHECK(resident((const void *)&table[4095]));
    long rss_before = rss_kib();

    size_t advised = 0;
    CHECK(ccore_release_code_pages(&advised) == CCORE_OK);
    CHECK(advised > 1 << 20);  // this test's code, libc's, libvpx's ... read-only segments
    // mincore answers for the page cache, not this process's page tables: the drop is seen in
    // the resident size instead (the runner's own code and libraries' pages, read once).
    long rss_after = rss_kib();
    CHECK(rss_before > 0 && rss_after > 0 && rss_after < rss_before);

    // Everything reads as before: the table, the writable data, and code that runs again.
    CHECK(t[0] == 0x12345678u && t[4095] == 0xCAFEF00Du && t[8191] == 0x0BADBEEFu);
    CHECK(sum_table() == before);
    CHECK(written[100] == 0xFEEDu);
    CHECK(ccore_release_code_pages(NULL) == CCORE_ERR_INVALID);
}
