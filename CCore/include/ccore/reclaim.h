#ifndef CCORE_RECLAIM_H
#define CCORE_RECLAIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ccore/status.h"

#ifdef __cplusplus
extern "C" {
#endif

// Giving back the all-zero pages a library wrote while it started (libvpx's VP8 encoder zero-
// fills a token buffer of 6 KiB per macroblock with memset, 21 MiB at 1280x720, though a frame of
// screen content writes a small part of it).
//
// How it stays safe:
// - Only memory mapped *between* two snapshots of the process's private anonymous mappings is
//   considered (`ccore_anon_snapshot` before and after the library's start); the caller runs
//   the start on its thread and makes sure no other thread of the process maps and writes
//   memory in that window (rtcshare's own threads allocate only at their start).
// - Only pages that are resident and read as zeros in every byte are returned, with
//   madvise(MADV_DONTNEED): a private anonymous page given back reads as zeros again on its
//   next touch, so the library sees the same bytes; nothing is ever returned that held data.
// - Where the assumptions do not hold (no /proc, not Linux, more mappings than the snapshot
//   holds, a madvise that fails) nothing is returned and the call says so; the caller goes on
//   with the memory resident, as before.

/// A range of addresses [start, end).
typedef struct ccore_range {
    uintptr_t start;
    uintptr_t end;
} ccore_range;

/// Writes the process's private, writable, anonymous mappings (unnamed, and the brk heap) into
/// `out`, in address order; `*count` gets how many. CCORE_ERR_TOO_SMALL when there are more than
/// `capacity` (then the snapshot is unusable), CCORE_ERR_INVALID when /proc/self/maps cannot be
/// read. Allocates nothing (reads the file in fixed chunks).
ccore_status ccore_anon_snapshot(ccore_range *out, size_t capacity, size_t *count);

/// Gives back every resident all-zero page of the memory in `after` that no range of `before`
/// covered (mapped between the two snapshots), in new stretches of at least
/// `minimum_range_bytes` (large buffers: a smaller stretch is more likely a malloc arena's
/// growth that another thread's small allocations share). `*reclaimed_bytes` gets how much.
/// Both snapshots must be complete (CCORE_OK from `ccore_anon_snapshot`).
ccore_status ccore_reclaim_new_zero_pages(const ccore_range *before, size_t before_count,
                                          const ccore_range *after, size_t after_count,
                                          size_t minimum_range_bytes, size_t *reclaimed_bytes);

/// Gives back the resident all-zero pages of [start, end) (page-aligned inward). The caller
/// guarantees no other thread writes the range meanwhile.
ccore_status ccore_reclaim_zero_pages(uintptr_t start, uintptr_t end, size_t *reclaimed_bytes);

/// Whether [start, end) lies wholly in the process's private, writable, anonymous mappings (as
/// `ccore_anon_snapshot` lists them; adjacent ones together). False when /proc/self/maps cannot
/// be read. Allocates nothing.
bool ccore_anon_covers(uintptr_t start, uintptr_t end);

/// Zero-fills [p, p + n) as `fill(p, 0, n)` would, except the whole pages that already read as
/// zeros without being resident: in private anonymous memory (`ccore_anon_covers`), a page that
/// is neither present nor swapped out (/proc/self/pagemap) has never been written since it was
/// mapped or given back, and reads as zeros; writing zeros there would only make it resident.
/// `fill` does the rest (the partial pages at either end, every present or swapped page, and
/// all of it when /proc cannot say). `*skipped_bytes` gets the bytes left as they were. The
/// result is the same bytes in every case; only the resident size differs. Allocates nothing.
void ccore_zero_fill_sparse(void *p, size_t n, void *(*fill)(void *, int, size_t), size_t *skipped_bytes);

/// Gives back every page of [start, end) (page-aligned inward), whatever it holds, with
/// madvise(MADV_DONTNEED): for a buffer whose contents the caller knows are not read again
/// before they are written (they read as zeros after). `*discarded_bytes` gets how much.
ccore_status ccore_discard_pages(uintptr_t start, uintptr_t end, size_t *discarded_bytes);

/// Returns the memory malloc holds free (its heap top and whole free pages inside its arenas) to
/// the system: after a large object is freed (an encoder replaced mid-share), so the memory is
/// given back rather than kept for later. Returns 1 when some was released. glibc only; 0
/// elsewhere.
int ccore_release_free_heap(void);

/// Makes malloc serve every request of `min_bytes` or more with a mapping of its own, fresh
/// from the kernel (all zeros, nothing resident), and unmap it when freed: glibc otherwise
/// raises that threshold after a large block is freed and serves the next ones from its heap,
/// whose pages may be resident and hold old data. Returns 1 when set; glibc only, 0 elsewhere.
int ccore_heap_map_large_fresh(size_t min_bytes);

#ifdef __cplusplus
}
#endif
#endif
