// Orientation correction of planes and I420 images (the eight EXIF tags), plus the scalar
// reference kernels the SIMD files are tested against.
//
// Every tag reduces to one of two kernels run over a possibly flipped view of the source:
//   1 copy rows            2 mirror rows             3 mirror rows, bottom row first
//   4 copy rows, bottom row first
//   5 transpose            6 transpose of the source read bottom row first     (rotate 90 CW)
//   7 transpose of the source read bottom row first, written last row first    (transverse)
//   8 transpose written last row first                                         (rotate 90 CCW)
// "Bottom row first" is a pointer to the last row with the stride negated, so the kernels never
// need to know which tag they serve.
#include "kernels.h"

int ccore_orientation_swaps_axes(int orientation) {
    if (orientation < 1 || orientation > 8) return -1;
    return orientation >= 5;
}

// Plain per-pixel transpose: the definition every SIMD transpose must reproduce.
void ccore_transpose_c(const uint8_t *src, ptrdiff_t src_stride, uint8_t *dst,
                       ptrdiff_t dst_stride, int32_t w, int32_t h) {
    assert(src && dst && w > 0 && h > 0);
    for (int32_t x = 0; x < w; x++) {
        const uint8_t *s = src + x;
        uint8_t *d = dst + (ptrdiff_t)x * dst_stride;
        for (int32_t y = 0; y < h; y++) d[y] = s[(ptrdiff_t)y * src_stride];
    }
}

// Plain reversed copy of one row: the definition every SIMD mirror must reproduce.
void ccore_mirror_c(const uint8_t *src, uint8_t *dst, int32_t w) {
    assert(src && dst && w > 0);
    for (int32_t x = 0; x < w; x++) dst[x] = src[w - 1 - x];
}

// The kernels (and feature snapshot) one public call uses for all its planes.
typedef struct orient_kernels {
    ccore_transpose_fn transpose;
    ccore_mirror_fn mirror;
    uint32_t features; // for the plain copies of tags 1 and 4
} orient_kernels;

// Picks the widest kernels the current feature mask allows; read once per public call so a
// mask change never switches kernels half-way through an image.
static orient_kernels pick_kernels(void) {
    uint32_t f = ccore_cpu_features();
    orient_kernels k = {ccore_transpose_c, ccore_mirror_c, f};
#if CCORE_X86
    if (f & CCORE_CPU_SSE2) {
        k.transpose = ccore_transpose_sse2;
        k.mirror = ccore_mirror_sse2;
    }
    if (f & CCORE_CPU_SSSE3) k.mirror = ccore_mirror_ssse3;
    if (f & CCORE_CPU_AVX2) {
        k.transpose = ccore_transpose_avx2;
        k.mirror = ccore_mirror_avx2;
    }
#elif CCORE_ARM64
    if (f & CCORE_CPU_NEON) {
        k.transpose = ccore_transpose_neon;
        k.mirror = ccore_mirror_neon;
    }
#endif
    return k;
}

// Applies `orientation` to one plane whose arguments are already checked.
static void orient_plane(const orient_kernels *k, const uint8_t *src, ptrdiff_t ss, int32_t w,
                         int32_t h, uint8_t *dst, ptrdiff_t ds, int orientation) {
    // Tags that read the source bottom row first.
    int flip_src = orientation == 3 || orientation == 4 || orientation == 6 || orientation == 7;
    if (flip_src) {
        src += (ptrdiff_t)(h - 1) * ss;
        ss = -ss;
    }
    switch (orientation) {
    case 1:
    case 4:
        ccore_copy_plane(src, ss, dst, ds, w, h, k->features);
        return;
    case 2:
    case 3:
        for (int32_t y = 0; y < h; y++) k->mirror(src + y * ss, dst + y * ds, w);
        return;
    case 7:
    case 8:
        // Written last row first: the destination has w rows.
        dst += (ptrdiff_t)(w - 1) * ds;
        ds = -ds;
        k->transpose(src, ss, dst, ds, w, h);
        return;
    default: // 5, 6
        k->transpose(src, ss, dst, ds, w, h);
        return;
    }
}

// Whether the byte spans of two planes (rows of `row` bytes every `stride`) intersect.
static int spans_overlap(const uint8_t *a, int32_t a_stride, int32_t a_row, int32_t a_rows,
                         const uint8_t *b, int32_t b_stride, int32_t b_row, int32_t b_rows) {
    uintptr_t a0 = (uintptr_t)a, a1 = a0 + (uintptr_t)a_stride * (uintptr_t)(a_rows - 1) + (uintptr_t)a_row;
    uintptr_t b0 = (uintptr_t)b, b1 = b0 + (uintptr_t)b_stride * (uintptr_t)(b_rows - 1) + (uintptr_t)b_row;
    return a0 < b1 && b0 < a1;
}

// Checks the plane and its destination (including overlap), then applies the tag.
ccore_status ccore_plane_orient(const uint8_t *src, int32_t src_stride, int32_t src_w,
                                int32_t src_h, uint8_t *dst, int32_t dst_stride,
                                int orientation) {
    int swaps = ccore_orientation_swaps_axes(orientation);
    if (swaps < 0 || !src || !dst) return CCORE_ERR_INVALID;
    if (src_w <= 0 || src_h <= 0 || src_w > CCORE_PLANE_MAX_SIDE || src_h > CCORE_PLANE_MAX_SIDE)
        return CCORE_ERR_INVALID;
    int32_t dst_w = swaps ? src_h : src_w, dst_h = swaps ? src_w : src_h;
    if (src_stride < src_w || dst_stride < dst_w) return CCORE_ERR_INVALID;
    if (spans_overlap(src, src_stride, src_w, src_h, dst, dst_stride, dst_w, dst_h))
        return CCORE_ERR_INVALID;
    orient_kernels k = pick_kernels();
    orient_plane(&k, src, src_stride, src_w, src_h, dst, dst_stride, orientation);
    return CCORE_OK;
}

// Checks both images, then applies the tag to each plane with the same kernels.
ccore_status ccore_i420_orient(const ccore_image *src, const ccore_image *dst, int orientation) {
    int swaps = ccore_orientation_swaps_axes(orientation);
    if (swaps < 0 || !ccore_image_valid(src) || !ccore_image_valid(dst)) return CCORE_ERR_INVALID;
    if (src->format != CCORE_PIXEL_I420 || dst->format != CCORE_PIXEL_I420) return CCORE_ERR_INVALID;
    int32_t w = src->width, h = src->height;
    if (dst->width != (swaps ? h : w) || dst->height != (swaps ? w : h)) return CCORE_ERR_INVALID;
    int32_t pw[3] = {w, (w + 1) / 2, (w + 1) / 2}, ph[3] = {h, (h + 1) / 2, (h + 1) / 2};
    for (int s = 0; s < 3; s++) {
        for (int d = 0; d < 3; d++) {
            int32_t dw = swaps ? ph[d] : pw[d], dh = swaps ? pw[d] : ph[d];
            if (spans_overlap(src->plane[s], src->stride[s], pw[s], ph[s], dst->plane[d],
                              dst->stride[d], dw, dh))
                return CCORE_ERR_INVALID;
        }
    }
    orient_kernels k = pick_kernels();
    for (int p = 0; p < 3; p++)
        orient_plane(&k, src->plane[p], src->stride[p], pw[p], ph[p], dst->plane[p],
                     dst->stride[p], orientation);
    return CCORE_OK;
}
