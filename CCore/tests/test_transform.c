// The fused transform: for every tag, source format and a spread of sizes, with and without
// scaling, its output equals the unfused chain convert -> ccore_i420_scale (to the size in
// source orientation) -> ccore_i420_orient byte for byte. That order is the exact one:
// orientation permutes pixels, so it commutes with a scaler that works in source orientation,
// while orienting before scaling swaps which axis is filtered first and changes roundings
// (checked too, within 1). Plus an independent check of where pixels land for each tag,
// guarded buffers (every plane and the scratch end at an inaccessible page), scratch size
// properties and argument errors.
#include <stdlib.h>
#include <string.h>

#include "CCore.h"
#include "check.h"

// An image whose planes each sit in their own guarded buffer.
typedef struct gimage {
    ccore_image im;
    size_t bytes[3];
} gimage;

static size_t plane_row_bytes(ccore_pixel_format f, int32_t w, int p) {
    if (f == CCORE_PIXEL_BGRA || f == CCORE_PIXEL_BGRX) return 4 * (size_t)w;
    if (p == 0) return (size_t)w;
    return f == CCORE_PIXEL_NV12 ? 2 * (size_t)((w + 1) / 2) : (size_t)((w + 1) / 2);
}

static gimage gimage_make(check_rng *r, ccore_pixel_format f, int32_t w, int32_t h) {
    gimage g;
    memset(&g, 0, sizeof g);
    g.im.format = f;
    g.im.width = w;
    g.im.height = h;
    for (int p = 0; p < ccore_pixel_format_planes(f); p++) {
        int32_t rows = p ? (h + 1) / 2 : h;
        size_t row = plane_row_bytes(f, w, p);
        g.im.stride[p] = (int32_t)row + check_range(r, 0, 3) * 8 + check_range(r, 0, 1);
        g.bytes[p] = (size_t)g.im.stride[p] * (size_t)(rows - 1) + row;
        g.im.plane[p] = check_guarded_alloc(g.bytes[p]);
        for (size_t i = 0; i < g.bytes[p]; i++) g.im.plane[p][i] = (uint8_t)check_next(r);
    }
    return g;
}

static void gimage_free(gimage *g) {
    for (int p = 0; p < 3; p++)
        if (g->bytes[p]) check_guarded_free(g->im.plane[p], g->bytes[p]);
}

static int i420_equal(const ccore_image *a, const ccore_image *b) {
    for (int p = 0; p < 3; p++) {
        int32_t w = p ? (a->width + 1) / 2 : a->width, h = p ? (a->height + 1) / 2 : a->height;
        for (int32_t y = 0; y < h; y++)
            if (memcmp(a->plane[p] + (size_t)y * a->stride[p], b->plane[p] + (size_t)y * b->stride[p], (size_t)w))
                return 0;
    }
    return 1;
}

// Largest per-byte difference between two I420 images of one size.
static int i420_max_diff(const ccore_image *a, const ccore_image *b) {
    int worst = 0;
    for (int p = 0; p < 3; p++) {
        int32_t w = p ? (a->width + 1) / 2 : a->width, h = p ? (a->height + 1) / 2 : a->height;
        for (int32_t y = 0; y < h; y++)
            for (int32_t x = 0; x < w; x++) {
                int e = abs(a->plane[p][(size_t)y * a->stride[p] + x] - b->plane[p][(size_t)y * b->stride[p] + x]);
                if (e > worst) worst = e;
            }
    }
    return worst;
}

// Runs ccore_transform with exactly the scratch it asks for, at an odd address, ending at a
// guard page.
static ccore_status run_fused(const ccore_image *src, const ccore_image *dst, int tag,
                              ccore_scale_filter f, ccore_color_range range) {
    size_t need = ccore_transform_scratch_size(src, dst, tag);
    if (!need) return CCORE_ERR_INVALID;
    uint8_t *scratch = check_guarded_alloc(need + 1);
    ccore_status st = ccore_transform(src, dst, tag, f, range, scratch + 1, need);
    check_guarded_free(scratch, need + 1);
    return st;
}

// The unfused chain: convert, scale in source orientation, orient. Returns the status of the
// first step that fails.
static ccore_status run_chain(const ccore_image *src, const ccore_image *dst, int tag,
                              ccore_scale_filter f, ccore_color_range range, int orient_first) {
    int swaps = tag >= 5;
    int32_t sw = src->width, sh = src->height;
    int32_t ow = swaps ? dst->height : dst->width, oh = swaps ? dst->width : dst->height;
    size_t cb = ccore_image_bytes(CCORE_PIXEL_I420, sw, sh);
    size_t mb = ccore_image_bytes(CCORE_PIXEL_I420, orient_first ? (swaps ? sh : sw) : ow,
                                  orient_first ? (swaps ? sw : sh) : oh);
    uint8_t *cm = aligned_alloc(64, cb), *mm = aligned_alloc(64, mb);
    ccore_image conv, mid;
    ccore_image_layout(CCORE_PIXEL_I420, sw, sh, cm, cb, &conv);
    ccore_status st;
    if (src->format == CCORE_PIXEL_I420) st = ccore_i420_scale(src, &conv, CCORE_FILTER_BILINEAR); // same size: a copy
    else if (src->format == CCORE_PIXEL_NV12) st = ccore_nv12_to_i420(src, &conv);
    else st = ccore_bgra_to_i420(src, &conv, range);
    if (st == CCORE_OK) {
        if (orient_first) {
            ccore_image_layout(CCORE_PIXEL_I420, swaps ? sh : sw, swaps ? sw : sh, mm, mb, &mid);
            st = ccore_i420_orient(&conv, &mid, tag);
            if (st == CCORE_OK) st = ccore_i420_scale(&mid, dst, f);
        } else {
            ccore_image_layout(CCORE_PIXEL_I420, ow, oh, mm, mb, &mid);
            st = ccore_i420_scale(&conv, &mid, f);
            if (st == CCORE_OK) st = ccore_i420_orient(&mid, dst, tag);
        }
    }
    free(cm);
    free(mm);
    return st;
}

static const ccore_pixel_format formats[4] = {CCORE_PIXEL_I420, CCORE_PIXEL_NV12,
                                              CCORE_PIXEL_BGRA, CCORE_PIXEL_BGRX};

// One fused-versus-chain comparison; returns 1 when identical (and both succeeded).
static int fused_equals_chain(check_rng *r, ccore_pixel_format fmt, int32_t sw, int32_t sh,
                              int32_t dw, int32_t dh, int tag, ccore_scale_filter f,
                              int *orient_first_diff) {
    ccore_color_range range = (ccore_color_range)check_range(r, 0, 1);
    gimage src = gimage_make(r, fmt, sw, sh);
    gimage a = gimage_make(r, CCORE_PIXEL_I420, dw, dh), b = gimage_make(r, CCORE_PIXEL_I420, dw, dh);
    ccore_status sa = run_fused(&src.im, &a.im, tag, f, range);
    ccore_status sb = run_chain(&src.im, &b.im, tag, f, range, 0);
    int same = sa == CCORE_OK && sb == CCORE_OK && i420_equal(&a.im, &b.im);
    if (!same)
        fprintf(stderr, "  format %d %dx%d -> %dx%d tag %d filter %d: fused %d chain %d\n", fmt, sw,
                sh, dw, dh, tag, f, sa, sb);
    if (orient_first_diff && run_chain(&src.im, &b.im, tag, f, range, 1) == CCORE_OK) {
        int d = i420_max_diff(&a.im, &b.im);
        if (d > *orient_first_diff) *orient_first_diff = d;
    }
    gimage_free(&src);
    gimage_free(&a);
    gimage_free(&b);
    return same;
}

TEST(transformWithoutScalingEqualsConvertThenOrient) {
    check_rng r = {0x7a45f001};
    for (int tag = 1; tag <= 8; tag++)
        for (int fi = 0; fi < 4; fi++)
            for (int k = 0; k < 3; k++) {
                int32_t sw = check_range(&r, 1, 90), sh = check_range(&r, 1, 90);
                if (k == 2) sh = check_range(&r, 33, 140); // several strips
                int32_t dw = tag >= 5 ? sh : sw, dh = tag >= 5 ? sw : sh;
                CHECK(fused_equals_chain(&r, formats[fi], sw, sh, dw, dh, tag, CCORE_FILTER_AUTO, NULL));
            }
}

TEST(transformWithScalingEqualsConvertScaleOrient) {
    check_rng r = {0x7a45f002};
    int orient_first = 0;
    for (int tag = 1; tag <= 8; tag++)
        for (int fi = 0; fi < 4; fi++)
            for (int k = 0; k < 4; k++) {
                int32_t sw = check_range(&r, 1, 160), sh = check_range(&r, 1, 160);
                int32_t dw = check_range(&r, 1, 160), dh = check_range(&r, 1, 160);
                if (k == 0) { // a moderate ratio: bilinear, the product's usual case
                    int32_t uw = tag >= 5 ? sh : sw, uh = tag >= 5 ? sw : sh;
                    dw = check_range(&r, (uw + 1) / 2, uw * 2);
                    dh = check_range(&r, (uh + 1) / 2, uh * 2);
                }
                ccore_scale_filter f = (ccore_scale_filter)((tag + fi + k) % 3);
                CHECK(fused_equals_chain(&r, formats[fi], sw, sh, dw, dh, tag, f,
                                         f == CCORE_FILTER_BILINEAR && k == 0 ? &orient_first : NULL));
            }
    printf("     orient-then-scale differs from the fused result by at most %d\n", orient_first);
    CHECK(orient_first <= 1);
}

// The product's case: a portrait 1080x1920 capture tagged 6 to a 1280x720 encoder input.
TEST(transformPortraitBgraTo720pEqualsChain) {
    check_rng r = {0x7a45f003};
    CHECK(fused_equals_chain(&r, CCORE_PIXEL_BGRA, 1080, 1920, 1280, 720, 6, CCORE_FILTER_AUTO, NULL));
    CHECK(fused_equals_chain(&r, CCORE_PIXEL_NV12, 720, 1280, 854, 480, 8, CCORE_FILTER_AUTO, NULL));
    CHECK(fused_equals_chain(&r, CCORE_PIXEL_I420, 1920, 1080, 640, 360, 3, CCORE_FILTER_AUTO, NULL));
}

TEST(transformScalarAndSimdAgree) {
    check_rng r = {0x7a45f004};
    for (int iter = 0; iter < 16; iter++) {
        ccore_pixel_format fmt = formats[iter % 4];
        int tag = 1 + iter % 8;
        int32_t sw = check_range(&r, 1, 300), sh = check_range(&r, 1, 200);
        int32_t dw = check_range(&r, 1, 300), dh = check_range(&r, 1, 200);
        gimage src = gimage_make(&r, fmt, sw, sh);
        gimage a = gimage_make(&r, CCORE_PIXEL_I420, dw, dh), b = gimage_make(&r, CCORE_PIXEL_I420, dw, dh);
        uint32_t saved = ccore_cpu_features(); // restored after, so a forced-scalar run stays scalar
        ccore_cpu_set_mask(0);
        CHECK(run_fused(&src.im, &a.im, tag, CCORE_FILTER_AUTO, CCORE_RANGE_LIMITED) == CCORE_OK);
        ccore_cpu_set_mask(0xffffffffu);
        CHECK(run_fused(&src.im, &b.im, tag, CCORE_FILTER_AUTO, CCORE_RANGE_LIMITED) == CCORE_OK);
        ccore_cpu_set_mask(saved);
        CHECK(i420_equal(&a.im, &b.im));
        gimage_free(&src);
        gimage_free(&a);
        gimage_free(&b);
    }
}

// Independent of the orient functions: stored pixel (x, y) of an I420 luma plane must land at
// the EXIF position for its tag.
TEST(transformPutsEveryPixelWhereTheTagSays) {
    check_rng r = {0x7a45f005};
    for (int tag = 1; tag <= 8; tag++) {
        int32_t w = check_range(&r, 1, 70), h = check_range(&r, 1, 70);
        int swaps = tag >= 5;
        gimage src = gimage_make(&r, CCORE_PIXEL_I420, w, h);
        gimage dst = gimage_make(&r, CCORE_PIXEL_I420, swaps ? h : w, swaps ? w : h);
        REQUIRE(run_fused(&src.im, &dst.im, tag, CCORE_FILTER_AUTO, CCORE_RANGE_LIMITED) == CCORE_OK);
        int bad = 0;
        for (int32_t y = 0; y < h; y++)
            for (int32_t x = 0; x < w; x++) {
                int32_t ux, uy;
                switch (tag) {
                case 1: ux = x; uy = y; break;
                case 2: ux = w - 1 - x; uy = y; break;
                case 3: ux = w - 1 - x; uy = h - 1 - y; break;
                case 4: ux = x; uy = h - 1 - y; break;
                case 5: ux = y; uy = x; break;
                case 6: ux = h - 1 - y; uy = x; break;
                case 7: ux = h - 1 - y; uy = w - 1 - x; break;
                default: ux = y; uy = w - 1 - x; break;
                }
                bad += dst.im.plane[0][(size_t)uy * dst.im.stride[0] + ux] !=
                       src.im.plane[0][(size_t)y * src.im.stride[0] + x];
            }
        CHECK(bad == 0);
        gimage_free(&src);
        gimage_free(&dst);
    }
}

TEST(transformScratchIsSmallAndGrowsWithSize) {
    ccore_image src = {CCORE_PIXEL_BGRA, 1080, 1920, {NULL}, {0}};
    ccore_image dst = {CCORE_PIXEL_I420, 1280, 720, {NULL}, {0}};
    size_t need = ccore_transform_scratch_size(&src, &dst, 6);
    printf("     scratch for 1080x1920 BGRA tag 6 -> 1280x720: %zu bytes\n", need);
    CHECK(need > 0);
    CHECK(need < 256 * 1024);                               // strips, not frames
    CHECK(need * 8 < ccore_image_bytes(CCORE_PIXEL_I420, 1280, 720));
    // A buffer sized for the largest frames fits every smaller source and output.
    check_rng r = {0x7a45f006};
    for (int i = 0; i < 200; i++) {
        ccore_pixel_format fmt = formats[i % 4];
        int tag = 1 + i % 8;
        ccore_image s = {fmt, check_range(&r, 1, 1920), check_range(&r, 1, 1920), {NULL}, {0}};
        ccore_image d = {CCORE_PIXEL_I420, check_range(&r, 1, 1280), check_range(&r, 1, 1280), {NULL}, {0}};
        ccore_image sbig = {fmt, 1920, 1920, {NULL}, {0}}, dbig = {CCORE_PIXEL_I420, 1280, 1280, {NULL}, {0}};
        size_t small = ccore_transform_scratch_size(&s, &d, tag);
        CHECK(small > 0 && small <= ccore_transform_scratch_size(&sbig, &dbig, tag));
    }
}

TEST(transformRefusesBadArgumentsAndShortScratch) {
    check_rng r = {0x7a45f007};
    gimage src = gimage_make(&r, CCORE_PIXEL_BGRA, 64, 48);
    gimage dst = gimage_make(&r, CCORE_PIXEL_I420, 32, 24);
    gimage nv = gimage_make(&r, CCORE_PIXEL_NV12, 32, 24);
    size_t need = ccore_transform_scratch_size(&src.im, &dst.im, 1);
    REQUIRE(need > 0);
    uint8_t *scratch = check_guarded_alloc(need);
    const ccore_scale_filter au = CCORE_FILTER_AUTO;
    const ccore_color_range lim = CCORE_RANGE_LIMITED;
    CHECK(ccore_transform(&src.im, &dst.im, 1, au, lim, scratch, need) == CCORE_OK);
    CHECK(ccore_transform(&src.im, &dst.im, 1, au, lim, scratch, need - 1) == CCORE_ERR_TOO_SMALL);
    CHECK(ccore_transform(&src.im, &dst.im, 1, au, lim, NULL, need) == CCORE_ERR_TOO_SMALL);
    CHECK(ccore_transform(&src.im, &dst.im, 0, au, lim, scratch, need) == CCORE_ERR_INVALID);
    CHECK(ccore_transform(&src.im, &dst.im, 9, au, lim, scratch, need) == CCORE_ERR_INVALID);
    CHECK(ccore_transform(&src.im, &nv.im, 1, au, lim, scratch, need) == CCORE_ERR_INVALID);
    CHECK(ccore_transform(&src.im, &dst.im, 1, (ccore_scale_filter)5, lim, scratch, need) ==
          CCORE_ERR_INVALID);
    CHECK(ccore_transform(&src.im, &dst.im, 1, au, (ccore_color_range)2, scratch, need) ==
          CCORE_ERR_INVALID);
    CHECK(ccore_transform(NULL, &dst.im, 1, au, lim, scratch, need) == CCORE_ERR_INVALID);
    CHECK(ccore_transform(&src.im, &src.im, 1, au, lim, scratch, need) == CCORE_ERR_INVALID);
    ccore_image bad = dst.im;
    bad.plane[1] = NULL;
    CHECK(ccore_transform(&src.im, &bad, 1, au, lim, scratch, need) == CCORE_ERR_INVALID);
    ccore_image inside = dst.im; // output overlapping the source
    inside.plane[0] = src.im.plane[0];
    CHECK(ccore_transform(&src.im, &inside, 1, au, lim, scratch, need) == CCORE_ERR_INVALID);
    CHECK(ccore_transform_scratch_size(&src.im, &nv.im, 1) == 0);
    CHECK(ccore_transform_scratch_size(&src.im, &dst.im, 0) == 0);
    CHECK(ccore_transform_scratch_size(NULL, &dst.im, 1) == 0);
    check_guarded_free(scratch, need);
    gimage_free(&src);
    gimage_free(&dst);
    gimage_free(&nv);
}
