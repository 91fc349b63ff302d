// Snapshots of anonymous mappings and the return of all-zero pages (see ccore/reclaim.h).
#include "ccore/reclaim.h"

#include <fcntl.h>
#include <limits.h>
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

// Calls `visit` with each private writable anonymous mapping, in address order, until it
// returns false. CCORE_ERR_INVALID when /proc/self/maps cannot be read.
static ccore_status for_each_anon(bool (*visit)(void *context, ccore_range r), void *context) {
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return CCORE_ERR_INVALID;
    char buffer[4096];
    size_t held = 0;
    ccore_status status = CCORE_OK;
    bool more = true;
    while (more) {
        ssize_t got = read(fd, buffer + held, sizeof buffer - held);
        if (got < 0) {
            status = CCORE_ERR_INVALID;
            break;
        }
        held += (size_t)got;
        size_t used = 0;
        while (more) {
            char *nl = memchr(buffer + used, '\n', held - used);
            if (!nl) break;
            ccore_range r;
            if (parse_line(buffer + used, nl, &r)) more = visit(context, r);
            used = (size_t)(nl - buffer) + 1;
        }
        if (got == 0) break;  // end of file (a last line without newline is ignored)
        if (used == 0 && held == sizeof buffer) {
            status = CCORE_ERR_INVALID;  // a line longer than the buffer: not a maps file we know
            break;
        }
        memmove(buffer, buffer + used, held - used);
        held -= used;
    }
    close(fd);
    return status;
}

typedef struct {
    ccore_range *out;
    size_t capacity;
    size_t count;
    bool overflow;
} snapshot_state;

static bool snapshot_visit(void *context, ccore_range r) {
    snapshot_state *s = context;
    if (s->count == s->capacity) {
        s->overflow = true;
        return false;
    }
    s->out[s->count++] = r;
    return true;
}

ccore_status ccore_anon_snapshot(ccore_range *out, size_t capacity, size_t *count) {
    if (!count || (!out && capacity)) return CCORE_ERR_INVALID;
    *count = 0;
    snapshot_state state = {out, capacity, 0, false};
    ccore_status status = for_each_anon(snapshot_visit, &state);
    if (status == CCORE_OK && state.overflow) status = CCORE_ERR_TOO_SMALL;
    *count = status == CCORE_OK ? state.count : 0;
    return status;
}

typedef struct {
    uintptr_t next;  // the first address not yet found covered
    uintptr_t end;
} covers_state;

static bool covers_visit(void *context, ccore_range r) {
    covers_state *s = context;
    if (r.end <= s->next) return true;
    if (r.start > s->next) return false;  // a gap: not all anonymous
    s->next = r.end;
    return s->next < s->end;
}

bool ccore_anon_covers(uintptr_t start, uintptr_t end) {
    if (end <= start) return false;
    covers_state state = {start, end};
    return for_each_anon(covers_visit, &state) == CCORE_OK && state.next >= end;
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

ccore_status ccore_discard_pages(uintptr_t start, uintptr_t end, size_t *discarded_bytes) {
    if (!discarded_bytes || end < start) return CCORE_ERR_INVALID;
    *discarded_bytes = 0;
    const size_t page = page_size();
    const uintptr_t first = (start + page - 1) & ~(uintptr_t)(page - 1);
    const uintptr_t last = end & ~(uintptr_t)(page - 1);
    if (first >= last) return CCORE_OK;
    if (madvise((void *)first, last - first, MADV_DONTNEED) != 0) return CCORE_ERR_INVALID;
    *discarded_bytes = last - first;
    return CCORE_OK;
}

int ccore_heap_map_large_fresh(size_t min_bytes) {
#if defined(__GLIBC__)
    if (min_bytes > (size_t)INT_MAX) return 0;
    return mallopt(M_MMAP_THRESHOLD, (int)min_bytes) == 1;
#else
    (void)min_bytes;
    return 0;
#endif
}

int ccore_release_free_heap(void) {
#if defined(__GLIBC__)
    return malloc_trim(0);
#else
    return 0;
#endif
}

// /proc/self/pagemap: one 64-bit entry per page; bit 63 present, bit 62 swapped out.
#define PAGEMAP_PRESENT (1ull << 63)
#define PAGEMAP_SWAPPED (1ull << 62)

void ccore_zero_fill_sparse(void *p, size_t n, void *(*fill)(void *, int, size_t), size_t *skipped_bytes) {
    size_t skipped = 0;
    const size_t page = page_size();
    const uintptr_t start = (uintptr_t)p, end = start + n;
    const uintptr_t first = (start + page - 1) & ~(uintptr_t)(page - 1);
    const uintptr_t last = end & ~(uintptr_t)(page - 1);
    int fd = -1;
    if (n > 0 && end > start && first < last && ccore_anon_covers(first, last))
        fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (n > 0) fill(p, 0, n);
        if (skipped_bytes) *skipped_bytes = 0;
        return;
    }
    // Everything before `pending` is done; the pages from `pending` up to the one looked at
    // need the fill (they may hold data) and are filled as one run when a skippable page or
    // the end comes.
    uintptr_t pending = start;
    uintptr_t at = first;
    uint64_t entries[512];
    while (at < last) {
        size_t want = (last - at) / page;
        if (want > sizeof entries / sizeof entries[0]) want = sizeof entries / sizeof entries[0];
        ssize_t got = pread(fd, entries, want * sizeof entries[0], (off_t)(at / page * sizeof entries[0]));
        if (got < (ssize_t)sizeof entries[0]) break;  // /proc cannot say: fill the rest
        size_t count = (size_t)got / sizeof entries[0];
        for (size_t i = 0; i < count; i++, at += page) {
            if (entries[i] & (PAGEMAP_PRESENT | PAGEMAP_SWAPPED)) continue;
            if (at > pending) fill((void *)pending, 0, at - pending);
            pending = at + page;
            skipped += page;
        }
    }
    close(fd);
    if (end > pending) fill((void *)pending, 0, end - pending);
    if (skipped_bytes) *skipped_bytes = skipped;
}
