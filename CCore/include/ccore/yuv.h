#ifndef CCORE_YUV_H
#define CCORE_YUV_H

#include <stddef.h>
#include <stdint.h>
#include "image.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Pixel transforms. All write into caller-given images, never allocate, and pick SIMD kernels
/// at run time (see cpu.h) with the scalar path as the reference. Every public function checks
/// its images (ccore_image_valid, sizes that agree) and returns CCORE_ERR_INVALID otherwise.
///
/// Orientation tags follow EXIF: the tag describes the pixels as stored, and the transforms
/// apply the correction that makes them upright:
///   1 none            2 mirror left-right      3 rotate 180           4 mirror top-bottom
///   5 transpose       6 rotate 90 clockwise    7 transverse           8 rotate 90 counter-clockwise
/// Tags 5..8 swap width and height: a stored w x h picture is h x w upright.

typedef enum ccore_color_range {
    CCORE_RANGE_LIMITED = 0, ///< BT.601 studio range: Y 16..235, chroma 16..240 (what VP8 expects)
    CCORE_RANGE_FULL = 1,    ///< BT.601 full range (JPEG): Y and chroma 0..255
} ccore_color_range;

typedef enum ccore_scale_filter {
    CCORE_FILTER_AUTO = 0,     ///< box when shrinking by more than 2x in a direction, bilinear otherwise
    CCORE_FILTER_BILINEAR = 1, ///< bilinear, pixel centres aligned
    CCORE_FILTER_BOX = 2,      ///< area average (for large downscales)
} ccore_scale_filter;

/// 1 if the tag turns the picture by 90 or 270 degrees (tags 5..8), 0 for 1..4, -1 otherwise.
int ccore_orientation_swaps_axes(int orientation);

/// One plane, corrected for `orientation`: src is src_w x src_h bytes, dst is src_w x src_h
/// for tags 1..4 and src_h x src_w for 5..8. Buffers must not overlap.
ccore_status ccore_plane_orient(const uint8_t *src, int32_t src_stride, int32_t src_w,
                                int32_t src_h, uint8_t *dst, int32_t dst_stride,
                                int orientation);

/// An I420 image corrected for `orientation` into an I420 image of the upright size.
ccore_status ccore_i420_orient(const ccore_image *src, const ccore_image *dst, int orientation);

/// NV12 to I420 of the same size.
ccore_status ccore_nv12_to_i420(const ccore_image *src, const ccore_image *dst);

/// BGRA/BGRX to I420 of the same size, BT.601 in the given range. Chroma is the average of each
/// 2x2 block (edge pixels repeat for odd sizes).
ccore_status ccore_bgra_to_i420(const ccore_image *src, const ccore_image *dst,
                                ccore_color_range range);

/// One plane scaled from src_w x src_h to dst_w x dst_h.
ccore_status ccore_plane_scale(const uint8_t *src, int32_t src_stride, int32_t src_w,
                               int32_t src_h, uint8_t *dst, int32_t dst_stride, int32_t dst_w,
                               int32_t dst_h, ccore_scale_filter filter);

/// An I420 image scaled to the size of dst (I420).
ccore_status ccore_i420_scale(const ccore_image *src, const ccore_image *dst,
                              ccore_scale_filter filter);

/// Scratch bytes ccore_transform needs for this source and destination.
size_t ccore_transform_scratch_size(const ccore_image *src, const ccore_image *dst,
                                    int orientation);

/// The fused pass from a captured frame to encoder input: converts src (I420, NV12, BGRA, BGRX)
/// to I420, corrects `orientation` and scales to the size of dst (I420), reading the source once
/// and writing dst once, working in cache-sized strips held in `scratch`.
/// CCORE_ERR_TOO_SMALL if scratch_len < ccore_transform_scratch_size().
ccore_status ccore_transform(const ccore_image *src, const ccore_image *dst, int orientation,
                             ccore_scale_filter filter, ccore_color_range range, void *scratch,
                             size_t scratch_len);

#ifdef __cplusplus
}
#endif
#endif
