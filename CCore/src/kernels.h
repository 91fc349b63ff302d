// Row and block kernels behind the pixel transforms in yuv.h, one set per instruction set.
// Public functions (orient.c, convert.c) validate their arguments, read the CPU features once
// per call and pick a kernel; kernels trust their caller and only assert in debug builds.
//
// Invariants every kernel keeps:
//  - it reads only bytes inside the rectangle it is given and writes only inside its output
//    rectangle, whatever the width (callers hand in strips cut out of larger images);
//  - every SIMD kernel produces exactly the bytes of the scalar (_c) kernel;
//  - a SIMD kernel that cannot cover a size with whole vectors either reprocesses an
//    overlapping last block (same bytes written twice, harmless as src and dst never overlap)
//    or hands the size to a narrower kernel; none needs padding or scratch memory.
//
// Strides are ptrdiff_t and may be negative: a vertical flip is "start at the last row and
// step backwards", so a single transpose kernel serves all four axis-swapping orientations and
// a single mirror kernel serves tags 2 and 3.
#ifndef CCORE_KERNELS_H
#define CCORE_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/// Largest plane side the raw-plane functions accept; the same limit ccore_image_valid applies.
#define CCORE_PLANE_MAX_SIDE 16384

/// Writes the transpose of the w x h bytes at src into the h x w bytes at dst
/// (dst row x, column y = src row y, column x).
typedef void (*ccore_transpose_fn)(const uint8_t *src, ptrdiff_t src_stride, uint8_t *dst,
                                   ptrdiff_t dst_stride, int32_t w, int32_t h);

/// Writes the w bytes of src in reverse order to dst.
typedef void (*ccore_mirror_fn)(const uint8_t *src, uint8_t *dst, int32_t w);

/// Splits w interleaved U,V byte pairs into w bytes of U and w bytes of V.
typedef void (*ccore_split_uv_fn)(const uint8_t *uv, uint8_t *u, uint8_t *v, int32_t w);

/// Converts two rows of w BGRA pixels (s0 above s1) into two rows of luma (y0, y1) and one row
/// of (w+1)/2 chroma samples, each the rounded average of its 2x2 block: first the two rows,
/// then the two columns, like a pair of pavgb. The last row of an odd-height image passes the
/// same row twice; an odd last column averages its two vertical pixels only. `full` selects
/// BT.601 full range (1) or limited range (0).
///
/// n0 and n1 are the two source rows the caller converts next (w pixels each, both NULL for
/// the last pair): SIMD kernels prefetch them, column for column, while converting s0 and s1.
/// Hardware prefetchers stop at every 4 KiB page and restart on each new row, so a frame that
/// has dropped out of the cache (a 1080p BGRA frame is 8 MB) otherwise stalls on memory
/// latency at every row start and page crossing. Prefetches are hints: they never fault and
/// never change the output.
typedef void (*ccore_bgra_rows_fn)(const uint8_t *s0, const uint8_t *s1, const uint8_t *n0,
                                   const uint8_t *n1, uint8_t *y0, uint8_t *y1, uint8_t *u,
                                   uint8_t *v, int32_t w, int full);

/// Copies h rows of w bytes (strides may be negative), as one block copy when both planes are
/// contiguous. `features` is the caller's ccore_cpu_features() snapshot.
void ccore_copy_plane(const uint8_t *src, ptrdiff_t src_stride, uint8_t *dst,
                      ptrdiff_t dst_stride, int32_t w, int32_t h, uint32_t features);

// Scalar reference kernels: always built, the definition of correct output.
void ccore_transpose_c(const uint8_t *src, ptrdiff_t src_stride, uint8_t *dst,
                       ptrdiff_t dst_stride, int32_t w, int32_t h);
void ccore_mirror_c(const uint8_t *src, uint8_t *dst, int32_t w);
void ccore_split_uv_c(const uint8_t *uv, uint8_t *u, uint8_t *v, int32_t w);
void ccore_bgra_rows_c(const uint8_t *s0, const uint8_t *s1, const uint8_t *n0,
                       const uint8_t *n1, uint8_t *y0, uint8_t *y1, uint8_t *u, uint8_t *v,
                       int32_t w, int full);

#if CCORE_X86
void ccore_transpose_sse2(const uint8_t *src, ptrdiff_t src_stride, uint8_t *dst,
                          ptrdiff_t dst_stride, int32_t w, int32_t h);
void ccore_transpose_avx2(const uint8_t *src, ptrdiff_t src_stride, uint8_t *dst,
                          ptrdiff_t dst_stride, int32_t w, int32_t h);
void ccore_mirror_sse2(const uint8_t *src, uint8_t *dst, int32_t w);
void ccore_mirror_ssse3(const uint8_t *src, uint8_t *dst, int32_t w);
void ccore_mirror_avx2(const uint8_t *src, uint8_t *dst, int32_t w);
void ccore_split_uv_sse2(const uint8_t *uv, uint8_t *u, uint8_t *v, int32_t w);
void ccore_split_uv_avx2(const uint8_t *uv, uint8_t *u, uint8_t *v, int32_t w);
void ccore_bgra_rows_ssse3(const uint8_t *s0, const uint8_t *s1, const uint8_t *n0,
                           const uint8_t *n1, uint8_t *y0, uint8_t *y1, uint8_t *u, uint8_t *v,
                           int32_t w, int full);
void ccore_bgra_rows_avx2(const uint8_t *s0, const uint8_t *s1, const uint8_t *n0,
                          const uint8_t *n1, uint8_t *y0, uint8_t *y1, uint8_t *u, uint8_t *v,
                          int32_t w, int full);
/// The change map's signature of one whole macroblock: 16 rows of 16 luma bytes at y and 8
/// rows of 8 bytes at u and at v (change_avx2.c; not the scalar signature's value).
uint64_t ccore_change_signature_avx2(const uint8_t *y, ptrdiff_t y_stride, const uint8_t *u,
                                     ptrdiff_t u_stride, const uint8_t *v, ptrdiff_t v_stride);
#endif

#if CCORE_ARM64
void ccore_transpose_neon(const uint8_t *src, ptrdiff_t src_stride, uint8_t *dst,
                          ptrdiff_t dst_stride, int32_t w, int32_t h);
void ccore_mirror_neon(const uint8_t *src, uint8_t *dst, int32_t w);
void ccore_split_uv_neon(const uint8_t *uv, uint8_t *u, uint8_t *v, int32_t w);
void ccore_bgra_rows_neon(const uint8_t *s0, const uint8_t *s1, const uint8_t *n0,
                          const uint8_t *n1, uint8_t *y0, uint8_t *y1, uint8_t *u, uint8_t *v,
                          int32_t w, int full);
#endif

#endif
