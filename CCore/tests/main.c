// Runs every registered test (optionally only those whose name contains argv[1]) and prints
// "N passed, N failed". Exit status is non-zero when any test failed.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"

enum { MAX_TESTS = 1024 };
static struct { const char *name; check_fn fn; } tests[MAX_TESTS];
static int test_count;
static int current_failures;

void check_register(const char *name, check_fn fn) {
    if (test_count < MAX_TESTS) {
        tests[test_count].name = name;
        tests[test_count].fn = fn;
        test_count++;
    }
}

void check_fail(const char *file, int line, const char *expr) {
    if (current_failures < 5) fprintf(stderr, "  %s:%d: CHECK failed: %s\n", file, line, expr);
    current_failures++;
}

int check_failed_now(void) { return current_failures; }

void *check_guarded_alloc(size_t bytes) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t data_pages = (bytes + page - 1) / page;
    size_t total = (data_pages + 1) * page;
    uint8_t *base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) return NULL;
    mprotect(base + data_pages * page, page, PROT_NONE);
    return base + data_pages * page - bytes;
}

void check_guarded_free(void *p, size_t bytes) {
    if (!p) return;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t data_pages = (bytes + page - 1) / page;
    uint8_t *base = (uint8_t *)p + bytes - data_pages * page;
    munmap(base, (data_pages + 1) * page);
}

static int by_name(const void *a, const void *b) {
    const char *const *x = a, *const *y = b;
    return strcmp(*x, *y);
}

int main(int argc, char **argv) {
    const char *filter = argc > 1 ? argv[1] : NULL;
    qsort(tests, (size_t)test_count, sizeof tests[0], by_name);
    int passed = 0, failed = 0;
    for (int i = 0; i < test_count; i++) {
        if (filter && !strstr(tests[i].name, filter)) continue;
        current_failures = 0;
        tests[i].fn();
        if (current_failures) {
            fprintf(stderr, "FAIL %s (%d checks failed)\n", tests[i].name, current_failures);
            failed++;
        } else {
            printf("ok   %s\n", tests[i].name);
            passed++;
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
