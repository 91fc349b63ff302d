// Snapshots of anonymous mappings and the return of all-zero pages (see ccore/reclaim.h).
#include "ccore/reclaim.h"

#include <fcntl.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

// Parses a hexadecimal number at *p, advancing it; false when there is none.
static bool parse_hex(const char **p, const char *end, uintptr_t *value) {
    uintptr_t v = 0;
    const char *s = *p;
    while (s < end) {
        char c = *s;
        unsigned d;
        if (c >= '0' && c <= '9') d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') d = (unsigned)(c - 'a' + 10);
        else break;
        if (v > (UINTPTR_MAX >> 4)) return false;
        v = (v << 4) | d;
        s++;
    }
    if (s == *p) return false;
    *p = s;
    *value = v;
    return true;
}

// Skips to the next space-separated field.
static const char *next_field(const char *p, const char *end) {
    while (p < end && *p != ' ') p++;
    while (p < end && *p == ' ') p++;
    return p;
}

// One line of /proc/self/maps: "start-end perms offset dev inode   [path]". True when it is a
// private writable anonymous mapping (no path, or the brk heap).
static bool parse_line(const char *line, const char *end, ccore_range *r) {
    const char *p = line;
    if (!parse_hex(&p, end, &r->start) || p >= end || *p != '-') return false;
    p++;
    if (!parse_hex(&p, end, &r->end) || r->end <= r->start) return false;
    while (p < end && *p == ' ') p++;
    if (end - p < 4 || p[0] != 'r' || p[1] != 'w' || p[3] != 'p') return false;
    p = next_field(p, end);  // offset
    p = next_field(p, end);  // device
    p = next_field(p, end);  // inode
    if (p >= end || *p != '0' || (p + 1 < end && p[1] != ' ')) return false;
    p = next_field(p, end);  // path, if any
    if (p >= end) return true;
    static const char heap[] = "[heap]";
    return (size_t)(end - p) == sizeof heap - 1 && memcmp(p, heap, sizeof heap - 1) == 0;
}

ccore_status ccore_anon_snapshot(ccore_range *out, size_t capacity, size_t *count) {
    if (!count || (!out && capacity)) return CCORE_ERR_INVALID;
    *count = 0;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return CCORE_ERR_INVALID;
    char buffer[4096];
    size_t held = 0;
    size_t n = 0;
    ccore_status status = CCORE_OK;
    for (;;) {
        ssize_t got = read(fd, buffer + held, sizeof buffer - held);
        if (got < 0) {
            status = CCORE_ERR_INVALID;
            break;
        }
        held += (size_t)got;
        size_t used = 0;
        for (;;) {
            char *nl = memchr(buffer + used, '\n', held - used);
            if (!nl) break;
            ccore_range r;
            if (parse_line(buffer + used, nl, &r)) {
                if (n == capacity) {
                    status = CCORE_ERR_TOO_SMALL;
                    break;
                }
                out[n++] = r;
            }
            used = (size_t)(nl - buffer) + 1;
        }
        if (status != CCORE_OK) break;
        if (got == 0) break;  // end of file (a last line without newline is ignored)
        if (used == 0 && held == sizeof buffer) {
            status = CCORE_ERR_INVALID;  // a line longer than the buffer: not a maps file we know
            break;
        }
        memmove(buffer, buffer + used, held - used);
        held -= used;
    }
    close(fd);
    *count = status == CCORE_OK ? n : 0;
    return status;
}

static size_t page_size(void) {
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

// Reads whole pages whatever lies in them (allocator metadata, redzones under AddressSanitizer):
// exempt from the sanitizer's checks, which are about objects, not pages.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CCORE_NO_ASAN __attribute__((no_sanitize("address")))
#endif
#endif
#if !defined(CCORE_NO_ASAN) && defined(__SANITIZE_ADDRESS__)
#define CCORE_NO_ASAN __attribute__((no_sanitize("address")))
#endif
#ifndef CCORE_NO_ASAN
#define CCORE_NO_ASAN
#endif

CCORE_NO_ASAN static bool page_is_zero(const unsigned char *page, size_t size) {
    const uint64_t *w = (const uint64_t *)(const void *)page;
    for (size_t i = 0; i < size / sizeof *w; i++)
        if (w[i]) return false;
    return true;
}

ccore_status ccore_reclaim_zero_pages(uintptr_t start, uintptr_t end, size_t *reclaimed_bytes) {
    if (!reclaimed_bytes || end < start) return CCORE_ERR_INVALID;
    *reclaimed_bytes = 0;
    const size_t page = page_size();
    uintptr_t p = (start + page - 1) & ~(uintptr_t)(page - 1);
    const uintptr_t last = end & ~(uintptr_t)(page - 1);
    for (; p < last; p += page) {
        unsigned char resident = 0;
        // A page never touched is not resident and costs nothing: reading it would map it.
        if (mincore((void *)p, page, &resident) != 0) return CCORE_ERR_INVALID;
        if (!(resident & 1)) continue;
        if (!page_is_zero((const unsigned char *)p, page)) continue;
        if (madvise((void *)p, page, MADV_DONTNEED) != 0) return CCORE_ERR_INVALID;
        *reclaimed_bytes += page;
    }
    return CCORE_OK;
}

ccore_status ccore_reclaim_new_zero_pages(const ccore_range *before, size_t before_count,
                                          const ccore_range *after, size_t after_count,
                                          size_t minimum_range_bytes, size_t *reclaimed_bytes) {
    if (!reclaimed_bytes || (!before && before_count) || (!after && after_count)) return CCORE_ERR_INVALID;
    *reclaimed_bytes = 0;
    // Both lists are in address order: walk `after`, cutting out what `before` covered.
    size_t b = 0;
    for (size_t a = 0; a < after_count; a++) {
        uintptr_t s = after[a].start;
        const uintptr_t e = after[a].end;
        while (s < e) {
            while (b < before_count && before[b].end <= s) b++;
            uintptr_t gap_end = e;
            if (b < before_count && before[b].start <= s) {
                s = before[b].end < e ? before[b].end : e;  // covered before: skip it
                continue;
            }
            if (b < before_count && before[b].start < e) gap_end = before[b].start;
            if (gap_end - s >= minimum_range_bytes) {
                size_t got = 0;
                ccore_status st = ccore_reclaim_zero_pages(s, gap_end, &got);
                *reclaimed_bytes += got;
                if (st != CCORE_OK) return st;
            }
            s = gap_end;
        }
    }
    return CCORE_OK;
}

int ccore_release_free_heap(void) {
#if defined(__GLIBC__)
    return malloc_trim(0);
#else
    return 0;
#endif
}
