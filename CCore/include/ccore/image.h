#ifndef CCORE_IMAGE_H
#define CCORE_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Pixel layouts CCore reads; I420 is the one it writes for the encoder.
typedef enum ccore_pixel_format {
    CCORE_PIXEL_I420 = 1, ///< planes Y, U, V; chroma (w+1)/2 x (h+1)/2
    CCORE_PIXEL_NV12 = 2, ///< planes Y, interleaved UV; chroma (w+1)/2 pairs x (h+1)/2
    CCORE_PIXEL_BGRA = 3, ///< one plane, bytes B,G,R,A per pixel (an X11 ZPixmap on little-endian)
    CCORE_PIXEL_BGRX = 4, ///< as BGRA, fourth byte ignored
} ccore_pixel_format;

/// A view of pixels owned by someone else. Strides are in bytes and may exceed the row size.
typedef struct ccore_image {
    ccore_pixel_format format;
    int32_t width;
    int32_t height;
    uint8_t *plane[3];
    int32_t stride[3];
} ccore_image;

/// Number of planes of a format (0 for an unknown one).
int ccore_pixel_format_planes(ccore_pixel_format format);

/// Bytes needed to lay out an image of this format and size with every row starting 64-byte
/// aligned (what ccore_image_layout produces), or 0 for an invalid format or size.
size_t ccore_image_bytes(ccore_pixel_format format, int32_t width, int32_t height);

/// Fills `out` with a view of an image laid out in [mem, mem+len) as ccore_image_bytes
/// describes. Returns 0 on success, -1 if the arguments are invalid or len is too small.
int ccore_image_layout(ccore_pixel_format format, int32_t width, int32_t height, void *mem,
                       size_t len, ccore_image *out);

/// Whether the view is internally consistent: known format, positive size, non-NULL planes,
/// strides at least the row size. Every transform checks its images with this.
int ccore_image_valid(const ccore_image *image);

#ifdef __cplusplus
}
#endif
#endif
