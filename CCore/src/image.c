// Image views: plane counts, the 64-byte-aligned layout used by frame slots, and the one
// consistency check every transform applies to its arguments.
#include "internal.h"

int ccore_pixel_format_planes(ccore_pixel_format format) {
    switch (format) {
    case CCORE_PIXEL_I420: return 3;
    case CCORE_PIXEL_NV12: return 2;
    case CCORE_PIXEL_BGRA:
    case CCORE_PIXEL_BGRX: return 1;
    }
    return 0;
}

// Largest side accepted anywhere; keeps every size computation far from overflow.
#define CCORE_MAX_SIDE 16384

// Row bytes and row count of plane `p`.
static void plane_geometry(ccore_pixel_format format, int32_t w, int32_t h, int p,
                           size_t *row_bytes, size_t *rows) {
    size_t cw = ((size_t)w + 1) / 2, ch = ((size_t)h + 1) / 2;
    switch (format) {
    case CCORE_PIXEL_I420:
        *row_bytes = p == 0 ? (size_t)w : cw;
        *rows = p == 0 ? (size_t)h : ch;
        return;
    case CCORE_PIXEL_NV12:
        *row_bytes = p == 0 ? (size_t)w : cw * 2;
        *rows = p == 0 ? (size_t)h : ch;
        return;
    case CCORE_PIXEL_BGRA:
    case CCORE_PIXEL_BGRX:
        *row_bytes = (size_t)w * 4;
        *rows = (size_t)h;
        return;
    }
    *row_bytes = 0;
    *rows = 0;
}

static int size_ok(int32_t w, int32_t h) {
    return w > 0 && h > 0 && w <= CCORE_MAX_SIDE && h <= CCORE_MAX_SIDE;
}

size_t ccore_image_bytes(ccore_pixel_format format, int32_t width, int32_t height) {
    int planes = ccore_pixel_format_planes(format);
    if (!planes || !size_ok(width, height)) return 0;
    size_t total = 0;
    for (int p = 0; p < planes; p++) {
        size_t row, rows;
        plane_geometry(format, width, height, p, &row, &rows);
        total += ccore_align_up(row, CCORE_CACHE_LINE) * rows;
    }
    return total;
}

int ccore_image_layout(ccore_pixel_format format, int32_t width, int32_t height, void *mem,
                       size_t len, ccore_image *out) {
    size_t need = ccore_image_bytes(format, width, height);
    if (!need || !mem || !out || len < need || ((uintptr_t)mem & (CCORE_CACHE_LINE - 1))) return -1;
    int planes = ccore_pixel_format_planes(format);
    uint8_t *cursor = mem;
    *out = (ccore_image){.format = format, .width = width, .height = height};
    for (int p = 0; p < planes; p++) {
        size_t row, rows;
        plane_geometry(format, width, height, p, &row, &rows);
        size_t stride = ccore_align_up(row, CCORE_CACHE_LINE);
        out->plane[p] = cursor;
        out->stride[p] = (int32_t)stride;
        cursor += stride * rows;
    }
    return 0;
}

int ccore_image_valid(const ccore_image *image) {
    if (!image) return 0;
    int planes = ccore_pixel_format_planes(image->format);
    if (!planes || !size_ok(image->width, image->height)) return 0;
    for (int p = 0; p < planes; p++) {
        size_t row, rows;
        plane_geometry(image->format, image->width, image->height, p, &row, &rows);
        if (!image->plane[p] || image->stride[p] <= 0 || (size_t)image->stride[p] < row) return 0;
    }
    return 1;
}
