// Colour-layout conversions into I420 (NV12 and BGRA/BGRX sources), plus the scalar reference
// kernels the SIMD files are tested against.
//
// BGRA to I420 uses BT.601 with 8-bit fixed-point weights: limited range
//   Y = (66 R + 129 G + 25 B + 0x1080) >> 8
//   U = (112 B - 74 G - 38 R + 0x8080) >> 8,  V = (112 R - 94 G - 18 B + 0x8080) >> 8
// and full range (JPEG)
//   Y = (77 R + 150 G + 29 B + 0x80) >> 8
//   U = (127 B - 84 G - 43 R + 0x8080) >> 8,  V = (127 R - 107 G - 20 B + 0x8080) >> 8.
// The chroma input is the 2x2 block averaged as two rounding halvings (rows, then columns), the
// order a pair of pavgb/urhadd instructions computes, so SIMD kernels match this file bit for
// bit. Every intermediate of these formulas fits 16 bits, which is what the SIMD kernels rely on.
#include <stdatomic.h>
#include <string.h>

#include "kernels.h"

#if CCORE_X86
#include <cpuid.h>
#endif

// Rounding average of two bytes, as pavgb / urhadd compute it.
static inline int avg2(int a, int b) { return (a + b + 1) >> 1; }

// Luma of one pixel.
static inline uint8_t luma(int b, int g, int r, int full) {
    return (uint8_t)(full ? (77 * r + 150 * g + 29 * b + 0x80) >> 8
                          : (66 * r + 129 * g + 25 * b + 0x1080) >> 8);
}

// U and V of one averaged pixel.
static inline void chroma(int b, int g, int r, int full, uint8_t *u, uint8_t *v) {
    if (full) {
        *u = (uint8_t)((127 * b - 84 * g - 43 * r + 0x8080) >> 8);
        *v = (uint8_t)((127 * r - 107 * g - 20 * b + 0x8080) >> 8);
    } else {
        *u = (uint8_t)((112 * b - 74 * g - 38 * r + 0x8080) >> 8);
        *v = (uint8_t)((112 * r - 94 * g - 18 * b + 0x8080) >> 8);
    }
}

// Plain two-row BGRA conversion: the definition every SIMD kernel must reproduce. The rows to
// prefetch (n0, n1) are only a hint, left to the hardware here.
void ccore_bgra_rows_c(const uint8_t *s0, const uint8_t *s1, const uint8_t *n0,
                       const uint8_t *n1, uint8_t *y0, uint8_t *y1, uint8_t *u, uint8_t *v,
                       int32_t w, int full) {
    assert(s0 && s1 && y0 && y1 && u && v && w > 0);
    (void)n0;
    (void)n1;
    for (int32_t x = 0; x < w; x++) {
        const uint8_t *p = s0 + 4 * x, *q = s1 + 4 * x;
        y0[x] = luma(p[0], p[1], p[2], full);
        y1[x] = luma(q[0], q[1], q[2], full);
    }
    int32_t x = 0;
    for (; x + 1 < w; x += 2) {
        const uint8_t *p = s0 + 4 * x, *q = s1 + 4 * x;
        int b = avg2(avg2(p[0], q[0]), avg2(p[4], q[4]));
        int g = avg2(avg2(p[1], q[1]), avg2(p[5], q[5]));
        int r = avg2(avg2(p[2], q[2]), avg2(p[6], q[6]));
        chroma(b, g, r, full, &u[x / 2], &v[x / 2]);
    }
    if (x < w) { // odd width: the last column has no right neighbour
        const uint8_t *p = s0 + 4 * x, *q = s1 + 4 * x;
        chroma(avg2(p[0], q[0]), avg2(p[1], q[1]), avg2(p[2], q[2]), full, &u[x / 2], &v[x / 2]);
    }
}

// Plain de-interleave of U,V pairs: the definition every SIMD kernel must reproduce.
void ccore_split_uv_c(const uint8_t *uv, uint8_t *u, uint8_t *v, int32_t w) {
    assert(uv && u && v && w > 0);
    for (int32_t x = 0; x < w; x++) {
        u[x] = uv[2 * x];
        v[x] = uv[2 * x + 1];
    }
}

// Picks the widest split kernel the current feature mask allows.
static ccore_split_uv_fn pick_split_uv(uint32_t f) {
#if CCORE_X86
    if (f & CCORE_CPU_AVX2) return ccore_split_uv_avx2;
    if (f & CCORE_CPU_SSE2) return ccore_split_uv_sse2;
#elif CCORE_ARM64
    if (f & CCORE_CPU_NEON) return ccore_split_uv_neon;
#endif
    (void)f;
    return ccore_split_uv_c;
}

// Picks the widest BGRA kernel the current feature mask allows (x86 needs SSSE3's pmaddubsw).
static ccore_bgra_rows_fn pick_bgra_rows(uint32_t f) {
#if CCORE_X86
    if (f & CCORE_CPU_AVX2) return ccore_bgra_rows_avx2;
    if (f & CCORE_CPU_SSSE3) return ccore_bgra_rows_ssse3;
#elif CCORE_ARM64
    if (f & CCORE_CPU_NEON) return ccore_bgra_rows_neon;
#endif
    (void)f;
    return ccore_bgra_rows_c;
}

#if CCORE_X86
// Whether the CPU advertises fast `rep movsb` (ERMS). Cached: under a hypervisor cpuid traps
// and costs microseconds.
static int cpu_has_erms(void) {
    static _Atomic int cached = -1;
    int has = atomic_load_explicit(&cached, memory_order_relaxed);
    if (has < 0) {
        unsigned a, b, c, d;
        has = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 9));
        atomic_store_explicit(&cached, has, memory_order_relaxed);
    }
    return has;
}
#endif

// Copies n bytes. glibc's memcpy leaves `rep movsb` for a vector loop above the L2 size on AMD,
// which is ~10% slower for the frame-sized, L3-resident copies made here; where ERMS makes
// `rep movsb` fast (and the mask allows AVX2-era kernels) it is used directly, as libyuv does.
static void copy_bytes(uint8_t *dst, const uint8_t *src, size_t n, uint32_t features) {
#if CCORE_X86
    if (n >= 4096 && (features & CCORE_CPU_AVX2) && cpu_has_erms()) {
        __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
        return;
    }
#else
    (void)features;
#endif
    memcpy(dst, src, n);
}

// Row-by-row copy, or one block copy when both planes are contiguous.
void ccore_copy_plane(const uint8_t *src, ptrdiff_t src_stride, uint8_t *dst,
                      ptrdiff_t dst_stride, int32_t w, int32_t h, uint32_t features) {
    assert(src && dst && w > 0 && h > 0);
    if (src_stride == w && dst_stride == w) {
        copy_bytes(dst, src, (size_t)w * (size_t)h, features);
        return;
    }
    for (int32_t y = 0; y < h; y++)
        copy_bytes(dst + y * dst_stride, src + y * src_stride, (size_t)w, features);
}

// Luma is a plain copy; chroma is de-interleaved row by row.
ccore_status ccore_nv12_to_i420(const ccore_image *src, const ccore_image *dst) {
    if (!ccore_image_valid(src) || !ccore_image_valid(dst)) return CCORE_ERR_INVALID;
    if (src->format != CCORE_PIXEL_NV12 || dst->format != CCORE_PIXEL_I420) return CCORE_ERR_INVALID;
    if (src->width != dst->width || src->height != dst->height) return CCORE_ERR_INVALID;
    uint32_t features = ccore_cpu_features();
    ccore_split_uv_fn split = pick_split_uv(features);
    int32_t w = src->width, h = src->height, cw = (w + 1) / 2, ch = (h + 1) / 2;
    ccore_copy_plane(src->plane[0], src->stride[0], dst->plane[0], dst->stride[0], w, h, features);
    if (src->stride[1] == 2 * cw && dst->stride[1] == cw && dst->stride[2] == cw) {
        // All three planes contiguous: one long row (at most 8192 * 8192 pairs), with no
        // per-row call or edge block.
        split(src->plane[1], dst->plane[1], dst->plane[2], cw * ch);
        return CCORE_OK;
    }
    for (int32_t y = 0; y < ch; y++)
        split(src->plane[1] + (ptrdiff_t)y * src->stride[1], dst->plane[1] + (ptrdiff_t)y * dst->stride[1],
              dst->plane[2] + (ptrdiff_t)y * dst->stride[2], cw);
    return CCORE_OK;
}

// Walks the image two rows at a time: each chroma row needs both. Each pair is converted while
// the next one is prefetched (see ccore_bgra_rows_fn).
ccore_status ccore_bgra_to_i420(const ccore_image *src, const ccore_image *dst,
                                ccore_color_range range) {
    if (!ccore_image_valid(src) || !ccore_image_valid(dst)) return CCORE_ERR_INVALID;
    if ((src->format != CCORE_PIXEL_BGRA && src->format != CCORE_PIXEL_BGRX) ||
        dst->format != CCORE_PIXEL_I420)
        return CCORE_ERR_INVALID;
    if (src->width != dst->width || src->height != dst->height) return CCORE_ERR_INVALID;
    if (range != CCORE_RANGE_LIMITED && range != CCORE_RANGE_FULL) return CCORE_ERR_INVALID;
    ccore_bgra_rows_fn rows = pick_bgra_rows(ccore_cpu_features());
    int full = range == CCORE_RANGE_FULL;
    int32_t w = src->width, h = src->height;
    for (int32_t y = 0; y < h; y += 2) {
        // The last row of an odd height pairs with itself, so its chroma is that row alone.
        int32_t y1 = y + 1 < h ? y + 1 : y;
        int32_t next = y + 2, next1 = next + 1 < h ? next + 1 : next;
        rows(src->plane[0] + (ptrdiff_t)y * src->stride[0],
             src->plane[0] + (ptrdiff_t)y1 * src->stride[0],
             next < h ? src->plane[0] + (ptrdiff_t)next * src->stride[0] : NULL,
             next < h ? src->plane[0] + (ptrdiff_t)next1 * src->stride[0] : NULL,
             dst->plane[0] + (ptrdiff_t)y * dst->stride[0],
             dst->plane[0] + (ptrdiff_t)y1 * dst->stride[0],
             dst->plane[1] + (ptrdiff_t)(y / 2) * dst->stride[1],
             dst->plane[2] + (ptrdiff_t)(y / 2) * dst->stride[2], w, full);
    }
    return CCORE_OK;
}
