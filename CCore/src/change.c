// Macroblock change map: a 64-bit signature per 16x16 macroblock instead of a copy of the last
// picture. Two pictures whose macroblock signatures agree are taken to be equal there; with a
// 64-bit mix of every byte a false "unchanged" is ~2^-64 a macroblock, far below a bit error in
// memory, and a macroblock that changes again is found at once.
//
// Invariants: signatures and activity hold `total` entries, row-major; `seen` is 0 until an
// update has written every signature. Nothing is allocated: the caller lays the map out.

#include <string.h>

#include "internal.h"
#include "kernels.h"

/// A whole macroblock's signature: 16 luma rows of 16 bytes, 8 rows of 8 bytes per chroma plane.
typedef uint64_t (*signature_fn)(const uint8_t *y, ptrdiff_t y_stride, const uint8_t *u, ptrdiff_t u_stride,
                                 const uint8_t *v, ptrdiff_t v_stride);

struct ccore_change_map {
    int32_t width, height;
    int32_t cols, rows;
    uint32_t total;
    uint32_t seen;
    uint64_t *signature;
    uint8_t *activity;
    // Picked once at init: signatures of different kernels are different numbers, so a map
    // compares only what one kernel made.
    signature_fn full;
};

// The multiply-rotate round of xxHash64 (its published constants): every input bit reaches the
// whole accumulator, and four independent lanes keep the multiplier busy.
static const uint64_t P1 = 0x9E3779B185EBCA87ull;
static const uint64_t P2 = 0xC2B2AE3D27D4EB4Full;

static inline uint64_t rotl64(uint64_t v, int r) { return (v << r) | (v >> (64 - r)); }
static inline uint64_t round64(uint64_t acc, uint64_t word) { return rotl64(acc + word * P2, 31) * P1; }

static inline uint64_t load64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

// Up to 8 bytes, zero-padded (a macroblock cut by the picture's right edge).
static inline uint64_t load_partial(const uint8_t *p, int32_t n) {
    uint64_t v = 0;
    if (n > 0) memcpy(&v, p, (size_t)(n > 8 ? 8 : n));
    return v;
}

static inline uint64_t finish(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
    uint64_t h = rotl64(a, 1) + rotl64(b, 7) + rotl64(c, 12) + rotl64(d, 18);
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    return h;
}

// A whole macroblock: 16 luma rows of two words, 8 rows of one word per chroma plane.
static uint64_t signature_full_c(const uint8_t *y, ptrdiff_t y_stride, const uint8_t *u, ptrdiff_t u_stride,
                                 const uint8_t *v, ptrdiff_t v_stride) {
    uint64_t a = P1, b = P2, c = ~P1, d = ~P2;
    for (int r = 0; r < 16; r++, y += y_stride) {
        a = round64(a, load64(y));
        b = round64(b, load64(y + 8));
    }
    for (int r = 0; r < 8; r++, u += u_stride, v += v_stride) {
        c = round64(c, load64(u));
        d = round64(d, load64(v));
    }
    return finish(a, b, c, d);
}

static signature_fn pick_signature(uint32_t features) {
#if CCORE_X86
    if (features & CCORE_CPU_AVX2) return ccore_change_signature_avx2;
#endif
    (void)features;
    return signature_full_c;
}

static uint64_t signature_full(const ccore_change_map *map, const ccore_image *f, int32_t mx, int32_t my) {
    return map->full(f->plane[0] + (size_t)(my * 16) * (size_t)f->stride[0] + (size_t)mx * 16, f->stride[0],
                     f->plane[1] + (size_t)(my * 8) * (size_t)f->stride[1] + (size_t)mx * 8, f->stride[1],
                     f->plane[2] + (size_t)(my * 8) * (size_t)f->stride[2] + (size_t)mx * 8, f->stride[2]);
}

// A macroblock cut by the right or bottom edge: only the pixels inside are read.
static uint64_t signature_edge(const ccore_image *f, int32_t mx, int32_t my) {
    uint64_t a = P1, b = P2, c = ~P1, d = ~P2;
    int32_t w = f->width - mx * 16, h = f->height - my * 16;
    if (w > 16) w = 16;
    if (h > 16) h = 16;
    for (int32_t r = 0; r < h; r++) {
        const uint8_t *y = f->plane[0] + (size_t)(my * 16 + r) * (size_t)f->stride[0] + (size_t)mx * 16;
        a = round64(a, load_partial(y, w));
        b = round64(b, load_partial(y + 8, w - 8));
    }
    int32_t cw = (f->width + 1) / 2 - mx * 8, ch = (f->height + 1) / 2 - my * 8;
    if (cw > 8) cw = 8;
    if (ch > 8) ch = 8;
    for (int32_t r = 0; r < ch; r++) {
        c = round64(c, load_partial(f->plane[1] + (size_t)(my * 8 + r) * (size_t)f->stride[1] + (size_t)mx * 8, cw));
        d = round64(d, load_partial(f->plane[2] + (size_t)(my * 8 + r) * (size_t)f->stride[2] + (size_t)mx * 8, cw));
    }
    return finish(a, b, c, d);
}

static size_t header_bytes(void) { return ccore_align_up(sizeof(struct ccore_change_map), 8); }

size_t ccore_change_map_bytes(int32_t width, int32_t height) {
    if (width < 1 || width > 16383 || height < 1 || height > 16383) return 0;
    size_t total = (size_t)((width + 15) / 16) * (size_t)((height + 15) / 16);
    return header_bytes() + total * sizeof(uint64_t) + ccore_align_up(total, 8);
}

ccore_status ccore_change_map_init(void *mem, size_t len, int32_t width, int32_t height,
                                   ccore_change_map **out) {
    size_t need = ccore_change_map_bytes(width, height);
    if (mem == NULL || out == NULL || need == 0 || ((uintptr_t)mem & 7) != 0) return CCORE_ERR_INVALID;
    if (len < need) return CCORE_ERR_TOO_SMALL;
    ccore_change_map *map = mem;
    map->width = width;
    map->height = height;
    map->cols = (width + 15) / 16;
    map->rows = (height + 15) / 16;
    map->total = (uint32_t)map->cols * (uint32_t)map->rows;
    map->seen = 0;
    map->full = pick_signature(ccore_cpu_features());
    map->signature = (uint64_t *)((uint8_t *)mem + header_bytes());
    map->activity = (uint8_t *)(map->signature + map->total);
    memset(map->signature, 0, map->total * sizeof(uint64_t));
    memset(map->activity, 0, map->total);
    *out = map;
    return CCORE_OK;
}

ccore_status ccore_change_map_update(ccore_change_map *map, const ccore_image *frame, uint8_t hold,
                                     ccore_change_counts *counts) {
    if (map == NULL || frame == NULL || !ccore_image_valid(frame) || frame->format != CCORE_PIXEL_I420
        || frame->width != map->width || frame->height != map->height) {
        return CCORE_ERR_INVALID;
    }
    if (hold == 0) hold = 1;
    uint32_t changed = 0, active = 0;
    int32_t full_cols = map->width / 16, full_rows = map->height / 16;
    for (int32_t my = 0; my < map->rows; my++) {
        uint64_t *sig = map->signature + (size_t)my * (size_t)map->cols;
        uint8_t *act = map->activity + (size_t)my * (size_t)map->cols;
        for (int32_t mx = 0; mx < map->cols; mx++) {
            uint64_t s = (mx < full_cols && my < full_rows) ? signature_full(map, frame, mx, my)
                                                             : signature_edge(frame, mx, my);
            if (!map->seen || s != sig[mx]) {
                sig[mx] = s;
                act[mx] = hold;
                changed++;
            } else if (act[mx] > 0) {
                act[mx]--;
            }
            active += act[mx] > 0;
        }
    }
    map->seen = 1;
    if (counts) *counts = (ccore_change_counts){changed, active, map->total};
    return CCORE_OK;
}

void ccore_change_map_age(ccore_change_map *map, ccore_change_counts *counts) {
    if (map == NULL) return;
    uint32_t active = 0;
    for (uint32_t i = 0; i < map->total; i++) {
        if (map->activity[i] > 0) map->activity[i]--;
        active += map->activity[i] > 0;
    }
    if (counts) *counts = (ccore_change_counts){0, active, map->total};
}

void ccore_change_map_renew(ccore_change_map *map, uint8_t hold) {
    if (map == NULL) return;
    uint8_t renewed = hold == 255 ? 255 : (uint8_t)(hold + 1);
    for (uint32_t i = 0; i < map->total; i++)
        if (map->activity[i] > 0) map->activity[i] = renewed;
}

void ccore_change_map_activate_all(ccore_change_map *map, uint8_t count) {
    if (map == NULL) return;
    for (uint32_t i = 0; i < map->total; i++)
        if (map->activity[i] < count) map->activity[i] = count;
}

void ccore_change_map_reset(ccore_change_map *map) {
    if (map != NULL) map->seen = 0;
}

const uint8_t *ccore_change_map_activity(const ccore_change_map *map, int32_t *rows, int32_t *cols) {
    if (map == NULL) return NULL;
    if (rows) *rows = map->rows;
    if (cols) *cols = map->cols;
    return map->activity;
}
