// The macroblock change map against a plain reference: the same pictures compared byte by byte
// with a kept copy of the last one, on random pictures with sparse random changes, odd sizes
// and planes whose last byte ends at a page boundary (an overread faults).
#include <stdlib.h>
#include <string.h>

#include "ccore/change.h"
#include "check.h"

typedef struct {
    ccore_image im;
    size_t bytes[3];
} cimage;

// An I420 picture with random strides, each plane in guarded memory ending at a page boundary.
static cimage cimage_make(check_rng *r, int32_t w, int32_t h) {
    cimage g;
    memset(&g, 0, sizeof g);
    g.im.format = CCORE_PIXEL_I420;
    g.im.width = w;
    g.im.height = h;
    for (int p = 0; p < 3; p++) {
        int32_t rows = p ? (h + 1) / 2 : h, row = p ? (w + 1) / 2 : w;
        g.im.stride[p] = row + (int32_t)check_range(r, 0, 2) * 8 + (int32_t)check_range(r, 0, 1);
        g.bytes[p] = (size_t)g.im.stride[p] * (size_t)(rows - 1) + (size_t)row;
        g.im.plane[p] = check_guarded_alloc(g.bytes[p]);
        for (size_t i = 0; i < g.bytes[p]; i++) g.im.plane[p][i] = (uint8_t)check_next(r);
    }
    return g;
}

static void cimage_free(cimage *g) {
    for (int p = 0; p < 3; p++) check_guarded_free(g->im.plane[p], g->bytes[p]);
}

// Whether macroblock (mx, my) differs between a and b, read pixel by pixel.
static int reference_changed(const ccore_image *a, const ccore_image *b, int32_t mx, int32_t my) {
    for (int p = 0; p < 3; p++) {
        int32_t n = p ? 8 : 16, w = p ? (a->width + 1) / 2 : a->width, h = p ? (a->height + 1) / 2 : a->height;
        for (int32_t y = my * n; y < my * n + n && y < h; y++)
            for (int32_t x = mx * n; x < mx * n + n && x < w; x++)
                if (a->plane[p][(size_t)y * a->stride[p] + x] != b->plane[p][(size_t)y * b->stride[p] + x]) return 1;
    }
    return 0;
}

static void copy_pixels(const ccore_image *from, ccore_image *to) {
    for (int p = 0; p < 3; p++) {
        int32_t w = p ? (from->width + 1) / 2 : from->width, h = p ? (from->height + 1) / 2 : from->height;
        for (int32_t y = 0; y < h; y++)
            memcpy(to->plane[p] + (size_t)y * to->stride[p], from->plane[p] + (size_t)y * from->stride[p], (size_t)w);
    }
}

static ccore_change_map *map_make(int32_t w, int32_t h, void **mem) {
    size_t need = ccore_change_map_bytes(w, h);
    *mem = aligned_alloc(8, (need + 7) & ~(size_t)7);
    ccore_change_map *map = NULL;
    if (*mem == NULL || ccore_change_map_init(*mem, need, w, h, &map) != CCORE_OK) return NULL;
    return map;
}

TEST(changeMapFirstUpdateFindsEveryMacroblockChanged) {
    check_rng r = {0x11};
    cimage a = cimage_make(&r, 40, 20);
    void *mem;
    ccore_change_map *map = map_make(40, 20, &mem);
    REQUIRE(map != NULL);
    ccore_change_counts c;
    CHECK(ccore_change_map_update(map, &a.im, 3, &c) == CCORE_OK);
    CHECK(c.changed == 6 && c.active == 6 && c.total == 6);
    int32_t rows = 0, cols = 0;
    const uint8_t *act = ccore_change_map_activity(map, &rows, &cols);
    CHECK(rows == 2 && cols == 3);
    for (int i = 0; i < 6; i++) CHECK(act[i] == 3);
    // The same picture again: nothing changed, every count one lower.
    CHECK(ccore_change_map_update(map, &a.im, 3, &c) == CCORE_OK);
    CHECK(c.changed == 0 && c.active == 6);
    for (int i = 0; i < 6; i++) CHECK(act[i] == 2);
    ccore_change_map_reset(map);
    CHECK(ccore_change_map_update(map, &a.im, 3, &c) == CCORE_OK);
    CHECK(c.changed == 6);
    free(mem);
    cimage_free(&a);
}

// Random pictures, each frame changing a few random pixels (some in chroma only, some at the
// edges), compared with a copy of the last frame; the activity counts follow the reference's.
TEST(changeMapAgreesWithByteComparisonOnOddSizes) {
    static const int32_t sizes[][2] = {{1, 1}, {16, 16}, {17, 9}, {33, 31}, {64, 48}, {15, 47}, {1280, 720}};
    check_rng r = {0x5eed};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int32_t w = sizes[s][0], h = sizes[s][1], cols = (w + 15) / 16, rows = (h + 15) / 16;
        cimage cur = cimage_make(&r, w, h), last = cimage_make(&r, w, h);
        void *mem;
        ccore_change_map *map = map_make(w, h, &mem);
        REQUIRE(map != NULL);
        uint8_t *want = calloc((size_t)(cols * rows), 1);
        const uint8_t hold = 4;
        ccore_change_counts c;
        REQUIRE(ccore_change_map_update(map, &cur.im, hold, &c) == CCORE_OK);
        memset(want, hold, (size_t)(cols * rows));
        copy_pixels(&cur.im, &last.im);
        for (int frame = 0; frame < 12; frame++) {
            int edits = check_range(&r, 0, 4);
            for (int e = 0; e < edits; e++) {
                int p = check_range(&r, 0, 2);
                int32_t pw = p ? (w + 1) / 2 : w, ph = p ? (h + 1) / 2 : h;
                int32_t x = check_range(&r, 0, pw - 1), y = check_range(&r, 0, ph - 1);
                cur.im.plane[p][(size_t)y * cur.im.stride[p] + x] ^= (uint8_t)(1 + check_range(&r, 0, 254));
            }
            // Bytes in the stride padding are not pixels: changing them changes nothing.
            if (cur.im.stride[0] > w && h > 1) cur.im.plane[0][w] ^= 0x55;
            uint32_t want_changed = 0, want_active = 0;
            for (int32_t my = 0; my < rows; my++)
                for (int32_t mx = 0; mx < cols; mx++) {
                    uint8_t *a = &want[my * cols + mx];
                    if (reference_changed(&cur.im, &last.im, mx, my)) {
                        *a = hold;
                        want_changed++;
                    } else if (*a > 0) {
                        (*a)--;
                    }
                    want_active += *a > 0;
                }
            REQUIRE(ccore_change_map_update(map, &cur.im, hold, &c) == CCORE_OK);
            CHECK(c.changed == want_changed && c.active == want_active && c.total == (uint32_t)(cols * rows));
            CHECK(memcmp(ccore_change_map_activity(map, NULL, NULL), want, (size_t)(cols * rows)) == 0);
            copy_pixels(&cur.im, &last.im);
        }
        free(want);
        free(mem);
        cimage_free(&cur);
        cimage_free(&last);
    }
}

TEST(changeMapAgeLowersEveryCount) {
    check_rng r = {0x77};
    cimage a = cimage_make(&r, 32, 16);
    void *mem;
    ccore_change_map *map = map_make(32, 16, &mem);
    REQUIRE(map != NULL);
    ccore_change_counts c;
    REQUIRE(ccore_change_map_update(map, &a.im, 2, &c) == CCORE_OK);
    ccore_change_map_age(map, &c);
    CHECK(c.changed == 0 && c.active == 2);
    ccore_change_map_age(map, &c);
    CHECK(c.active == 0);
    ccore_change_map_age(map, &c);
    CHECK(c.active == 0 && ccore_change_map_activity(map, NULL, NULL)[0] == 0);
    free(mem);
    cimage_free(&a);
}

TEST(changeMapRejectsBadArguments) {
    CHECK(ccore_change_map_bytes(0, 10) == 0 && ccore_change_map_bytes(10, 16384) == 0);
    CHECK(ccore_change_map_bytes(1280, 720) >= 3600 * 9 && ccore_change_map_bytes(1280, 720) < 3600 * 9 + 128);
    uint64_t small[4];
    ccore_change_map *map = NULL;
    CHECK(ccore_change_map_init(small, sizeof small, 64, 64, &map) == CCORE_ERR_TOO_SMALL);
    CHECK(ccore_change_map_init((uint8_t *)small + 1, 1 << 20, 16, 16, &map) == CCORE_ERR_INVALID);
    CHECK(ccore_change_map_init(NULL, 1 << 20, 16, 16, &map) == CCORE_ERR_INVALID);
    check_rng r = {0x99};
    cimage a = cimage_make(&r, 32, 32);
    void *mem;
    map = map_make(16, 16, &mem);
    REQUIRE(map != NULL);
    // Another size, another format: refused, the map untouched.
    CHECK(ccore_change_map_update(map, &a.im, 1, NULL) == CCORE_ERR_INVALID);
    a.im.width = 16;
    a.im.height = 16;
    a.im.format = CCORE_PIXEL_NV12;
    CHECK(ccore_change_map_update(map, &a.im, 1, NULL) == CCORE_ERR_INVALID);
    a.im.format = CCORE_PIXEL_I420;
    ccore_change_counts c;
    CHECK(ccore_change_map_update(map, &a.im, 1, &c) == CCORE_OK && c.changed == 1);
    CHECK(ccore_change_map_update(NULL, &a.im, 1, &c) == CCORE_ERR_INVALID);
    ccore_change_map_age(NULL, NULL);
    CHECK(ccore_change_map_activity(NULL, NULL, NULL) == NULL);
    free(mem);
    a.im.width = 32;
    a.im.height = 32;
    cimage_free(&a);
}

// A dropped picture's changes are still coded: they stay active through the next update even
// with a hold of one picture.
TEST(changeMapRenewKeepsADroppedPicturesChangesActive) {
    check_rng r = {0x42};
    cimage a = cimage_make(&r, 32, 16);
    void *mem;
    ccore_change_map *map = map_make(32, 16, &mem);
    REQUIRE(map != NULL);
    ccore_change_counts c;
    REQUIRE(ccore_change_map_update(map, &a.im, 1, &c) == CCORE_OK);
    REQUIRE(ccore_change_map_update(map, &a.im, 1, &c) == CCORE_OK && c.active == 0);
    a.im.plane[0][0] ^= 1;
    REQUIRE(ccore_change_map_update(map, &a.im, 1, &c) == CCORE_OK && c.changed == 1 && c.active == 1);
    ccore_change_map_renew(map, 1);
    REQUIRE(ccore_change_map_update(map, &a.im, 1, &c) == CCORE_OK);
    CHECK(c.changed == 0 && c.active == 1 && ccore_change_map_activity(map, NULL, NULL)[0] == 1);
    REQUIRE(ccore_change_map_update(map, &a.im, 1, &c) == CCORE_OK);
    CHECK(c.active == 0);
    ccore_change_map_renew(map, 255);
    CHECK(ccore_change_map_activity(map, NULL, NULL)[0] == 0);
    ccore_change_map_renew(NULL, 1);
    free(mem);
    cimage_free(&a);
}

// After a keyframe every macroblock is active again, none lowered.
TEST(changeMapActivateAllRaisesEveryCount) {
    check_rng r = {0x43};
    cimage a = cimage_make(&r, 48, 16);
    void *mem;
    ccore_change_map *map = map_make(48, 16, &mem);
    REQUIRE(map != NULL);
    ccore_change_counts c;
    REQUIRE(ccore_change_map_update(map, &a.im, 9, &c) == CCORE_OK);
    for (int i = 0; i < 9; i++) ccore_change_map_age(map, &c);
    REQUIRE(c.active == 0);
    a.im.plane[0][0] ^= 1;
    REQUIRE(ccore_change_map_update(map, &a.im, 9, &c) == CCORE_OK && c.active == 1);
    ccore_change_map_activate_all(map, 5);
    const uint8_t *act = ccore_change_map_activity(map, NULL, NULL);
    CHECK(act[0] == 9 && act[1] == 5 && act[2] == 5);
    ccore_change_map_age(map, &c);
    CHECK(c.active == 3);
    ccore_change_map_activate_all(NULL, 1);
    free(mem);
    cimage_free(&a);
}

// Every single byte of a whole macroblock (luma and both chroma blocks) is seen when it changes,
// and so are two of its rows swapped and its U and V blocks swapped: the signature depends on
// where each byte is, not only on which bytes there are. Runs on the SIMD signature where the
// CPU has one and on the scalar one under `make scalar`.
TEST(changeMapSeesEveryByteAndMovedRowsOfAMacroblock) {
    check_rng r = {0xb10c};
    cimage a = cimage_make(&r, 32, 32);
    void *mem;
    ccore_change_map *map = map_make(32, 32, &mem);
    REQUIRE(map != NULL);
    ccore_change_counts c;
    REQUIRE(ccore_change_map_update(map, &a.im, 1, &c) == CCORE_OK);
    int missed = 0;
    for (int p = 0; p < 3; p++) {
        int32_t n = p ? 8 : 16;
        for (int32_t y = 0; y < n; y++)
            for (int32_t x = 0; x < n; x++) {
                uint8_t *px = &a.im.plane[p][(size_t)y * a.im.stride[p] + x];
                for (int bit = 0; bit < 8; bit += 7) {
                    *px ^= (uint8_t)(1u << bit);
                    REQUIRE(ccore_change_map_update(map, &a.im, 1, &c) == CCORE_OK);
                    missed += c.changed != 1;
                    *px ^= (uint8_t)(1u << bit);
                    REQUIRE(ccore_change_map_update(map, &a.im, 1, &c) == CCORE_OK);
                    missed += c.changed != 1;
                }
            }
    }
    CHECK(missed == 0);
    // Two luma rows of macroblock (1, 1) swapped.
    uint8_t row[16];
    uint8_t *r3 = a.im.plane[0] + (size_t)19 * a.im.stride[0] + 16, *r9 = a.im.plane[0] + (size_t)25 * a.im.stride[0] + 16;
    memcpy(row, r3, 16);
    memcpy(r3, r9, 16);
    memcpy(r9, row, 16);
    REQUIRE(ccore_change_map_update(map, &a.im, 1, &c) == CCORE_OK);
    CHECK(c.changed == 1);
    // Macroblock (0, 1)'s U and V blocks swapped.
    for (int32_t y = 8; y < 16; y++) {
        uint8_t *u = a.im.plane[1] + (size_t)y * a.im.stride[1], *v = a.im.plane[2] + (size_t)y * a.im.stride[2];
        memcpy(row, u, 8);
        memcpy(u, v, 8);
        memcpy(v, row, 8);
    }
    REQUIRE(ccore_change_map_update(map, &a.im, 1, &c) == CCORE_OK);
    CHECK(c.changed == 1);
    free(mem);
    cimage_free(&a);
}
