#ifndef CCORE_CODEPAGES_H
#define CCORE_CODEPAGES_H

#include <stddef.h>

#include "ccore/status.h"

#ifdef __cplusplus
extern "C" {
#endif

// Letting go of the code and read-only data pages the process touched only while it started.
//
// A share's start touches code it never runs again: argument parsing, library initialisers,
// the HTTP exchange that publishes it, the DTLS handshake (certificate, key exchange). Those
// pages stay mapped and count in the resident size for the rest of the share. Telling the
// kernel the process does not need its loaded objects' read-only segments
// (madvise(MADV_DONTNEED)) drops them all; the ones the share runs again come straight back
// from the page cache on their next touch (a minor fault each), the others stay out.
//
// How it stays safe:
// - Only PT_LOAD segments without write permission are touched, and none that overlaps a
//   PT_GNU_RELRO range, of objects without text relocations (DT_TEXTREL, DF_TEXTREL): pages
//   that no one can have written, so they read the same bytes from the file when they return.
// - The segments are walked with dl_iterate_phdr, which holds the dynamic loader's lock: no
//   object can be unloaded (and its addresses reused) while it is being advised.
// - The vDSO is left alone (not file-backed).

/// Drops the resident pages of every loaded object's read-only segments (page-aligned
/// inward). `*advised_bytes` gets the size of the ranges advised (not how much was resident).
/// CCORE_ERR_INVALID when `advised_bytes` is NULL. Allocates nothing.
ccore_status ccore_release_code_pages(size_t *advised_bytes);

#ifdef __cplusplus
}
#endif

#endif
