// Scaling: against a double-precision reference of the documented sampling, against libyuv
// (the industry reference, with its own slightly different sampling), scalar against SIMD bit
// for bit, plus identity, chunking, extreme ratios, guarded buffers and argument checks.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <libyuv.h>

#include "CCore.h"
#include "check.h"

// A plane in a guarded buffer: its last row ends exactly at an inaccessible page.
typedef struct gplane {
    uint8_t *p;
    int32_t w, h, stride;
    size_t bytes;
} gplane;

static gplane gplane_make(int32_t w, int32_t h, int32_t pad) {
    gplane g = {NULL, w, h, w + pad, 0};
    g.bytes = (size_t)g.stride * (size_t)(h - 1) + (size_t)w;
    g.p = check_guarded_alloc(g.bytes);
    return g;
}

static void gplane_free(gplane *g) { check_guarded_free(g->p, g->bytes); }

// Noise, smooth gradients and hard edges, so every weight and every carry gets exercised.
static void fill_plane(check_rng *r, gplane *g, int kind) {
    for (int32_t y = 0; y < g->h; y++)
        for (int32_t x = 0; x < g->w; x++) {
            uint8_t v;
            switch (kind) {
            case 0: v = (uint8_t)check_next(r); break;
            case 1: v = (uint8_t)((x * 7 + y * 3) & 255); break;
            default: v = ((x / 3 + y / 5) & 1) ? 235 : 16; break;
            }
            g->p[(size_t)y * g->stride + x] = v;
        }
}

// Taps of one axis under the documented definition, with real-valued weights.
typedef struct axis_taps {
    int32_t first, n;
    int box;
    double f;
} axis_taps;

static void ref_axis(int32_t s, int32_t d, int box, int32_t x, axis_taps *t) {
    if (box && s > d) {
        int32_t lo = (int32_t)((int64_t)x * s / d), hi = (int32_t)((int64_t)(x + 1) * s / d);
        *t = (axis_taps){lo, hi - lo, 1, 0};
        return;
    }
    double pos = (x + 0.5) * s / d - 0.5;
    if (pos < 0) pos = 0;
    if (pos > s - 1) pos = s - 1;
    int32_t i = (int32_t)floor(pos);
    *t = (axis_taps){i, i + 1 < s ? 2 : 1, 0, pos - i};
}

static double tap_weight(const axis_taps *t, int i) {
    return t->box ? 1.0 / t->n : (i == 0 ? 1 - t->f : t->f);
}

// Exact value of output (x, y).
static double ref_pixel(const uint8_t *src, int32_t ss, int32_t sw, int32_t sh, int32_t dw,
                        int32_t dh, int box, int32_t x, int32_t y) {
    axis_taps tx, ty;
    ref_axis(sw, dw, box, x, &tx);
    ref_axis(sh, dh, box, y, &ty);
    double v = 0;
    for (int32_t j = 0; j < ty.n; j++)
        for (int32_t i = 0; i < tx.n; i++)
            v += tap_weight(&ty, j) * tap_weight(&tx, i) * src[(size_t)(ty.first + j) * ss + tx.first + i];
    return v;
}

static int resolved_box(int32_t sw, int32_t sh, int32_t dw, int32_t dh, ccore_scale_filter f) {
    if (f == CCORE_FILTER_AUTO) return sw > 2 * dw || sh > 2 * dh;
    return f == CCORE_FILTER_BOX;
}

TEST(scaleMatchesDoubleReferenceWithinOne) {
    check_rng r = {0x5ca1e001};
    double worst = 0, total = 0;
    long count = 0;
    for (int iter = 0; iter < 90; iter++) {
        int32_t sw = check_range(&r, 1, 400), sh = check_range(&r, 1, 400);
        int32_t dw = check_range(&r, 1, 400), dh = check_range(&r, 1, 400);
        if (iter % 3 == 0) { // bias towards moderate ratios, where bilinear is the filter
            dw = check_range(&r, (sw + 2) / 3, sw * 2);
            dh = check_range(&r, (sh + 2) / 3, sh * 2);
        }
        ccore_scale_filter filter = (ccore_scale_filter)(iter % 3);
        gplane s = gplane_make(sw, sh, check_range(&r, 0, 40));
        gplane d = gplane_make(dw, dh, check_range(&r, 0, 40));
        REQUIRE(s.p && d.p);
        fill_plane(&r, &s, iter % 3);
        REQUIRE(ccore_plane_scale(s.p, s.stride, sw, sh, d.p, d.stride, dw, dh, filter) == CCORE_OK);
        int box = resolved_box(sw, sh, dw, dh, filter);
        int bad = 0;
        for (int32_t y = 0; y < dh; y++)
            for (int32_t x = 0; x < dw; x++) {
                double v = ref_pixel(s.p, s.stride, sw, sh, dw, dh, box, x, y);
                double e = fabs(d.p[(size_t)y * d.stride + x] - v);
                if (fabs(d.p[(size_t)y * d.stride + x] - floor(v + 0.5)) > 1) bad++;
                if (e > worst) worst = e;
                total += e;
                count++;
            }
        CHECK(bad == 0);
        if (bad) fprintf(stderr, "  %dx%d -> %dx%d filter %d: %d pixels off\n", sw, sh, dw, dh, filter, bad);
        gplane_free(&s);
        gplane_free(&d);
    }
    printf("     vs double reference: max |err| %.3f, mean %.4f over %ld pixels\n", worst,
           total / (double)count, count);
}

// Scales with the scalar kernels, then with each SIMD level (SSSE3 alone, everything
// available), and byte-compares.
static int scalar_equals_simd(const gplane *s, int32_t dw, int32_t dh, ccore_scale_filter f) {
    static const uint32_t masks[2] = {CCORE_CPU_SSE2 | CCORE_CPU_SSSE3 | CCORE_CPU_NEON, 0xffffffffu};
    size_t bytes = (size_t)dw * dh;
    uint8_t *a = check_guarded_alloc(bytes), *b = check_guarded_alloc(bytes);
    uint32_t saved = ccore_cpu_features(); // restored after, so a forced-scalar run stays scalar
    ccore_cpu_set_mask(0);
    int same = ccore_plane_scale(s->p, s->stride, s->w, s->h, a, dw, dw, dh, f) == CCORE_OK;
    for (int m = 0; m < 2; m++) {
        ccore_cpu_set_mask(masks[m]);
        same &= ccore_plane_scale(s->p, s->stride, s->w, s->h, b, dw, dw, dh, f) == CCORE_OK &&
                memcmp(a, b, bytes) == 0;
    }
    ccore_cpu_set_mask(saved);
    check_guarded_free(a, bytes);
    check_guarded_free(b, bytes);
    return same;
}

TEST(scaleScalarAndSimdAgreeBitForBit) {
    check_rng r = {0x5ca1e002};
    for (int iter = 0; iter < 120; iter++) {
        int32_t sw = check_range(&r, 1, iter < 100 ? 400 : 2600);
        int32_t sh = check_range(&r, 1, iter < 100 ? 400 : 300);
        int32_t dw = check_range(&r, 1, iter < 100 ? 400 : 2600);
        int32_t dh = check_range(&r, 1, iter < 100 ? 400 : 300);
        if (iter % 2) dw = check_range(&r, (sw + 1) / 2, sw * 2); // the SIMD horizontal range
        gplane s = gplane_make(sw, sh, check_range(&r, 0, 70));
        REQUIRE(s.p);
        fill_plane(&r, &s, 0);
        for (int f = 0; f < 3; f++) {
            int same = scalar_equals_simd(&s, dw, dh, (ccore_scale_filter)f);
            CHECK(same);
            if (!same) fprintf(stderr, "  %dx%d -> %dx%d filter %d\n", sw, sh, dw, dh, f);
        }
        gplane_free(&s);
    }
}

TEST(scaleToTheSameSizeIsAnExactCopy) {
    check_rng r = {0x5ca1e003};
    for (int iter = 0; iter < 20; iter++) {
        int32_t w = check_range(&r, 1, 300), h = check_range(&r, 1, 100);
        gplane s = gplane_make(w, h, check_range(&r, 0, 9));
        gplane d = gplane_make(w, h, check_range(&r, 0, 9));
        fill_plane(&r, &s, 0);
        for (int f = 0; f < 3; f++) {
            memset(d.p, 0, d.bytes);
            REQUIRE(ccore_plane_scale(s.p, s.stride, w, h, d.p, d.stride, w, h, (ccore_scale_filter)f) == CCORE_OK);
            for (int32_t y = 0; y < h; y++)
                CHECK(memcmp(s.p + (size_t)y * s.stride, d.p + (size_t)y * d.stride, (size_t)w) == 0);
        }
        gplane_free(&s);
        gplane_free(&d);
    }
}

// Wide planes run in several column chunks and very large ratios take the direct box path;
// both must still match the reference (checked on a sample of pixels to keep the test fast).
TEST(scaleWidePlanesAndExtremeRatiosMatchReference) {
    check_rng r = {0x5ca1e004};
    struct { int32_t sw, sh, dw, dh; ccore_scale_filter f; } cases[] = {
        {4000, 40, 2600, 30, CCORE_FILTER_BILINEAR}, {1500, 20, 5000, 50, CCORE_FILTER_AUTO},
        {6000, 20, 1000, 7, CCORE_FILTER_BOX},      {16384, 3, 3, 2, CCORE_FILTER_BOX},
        {16384, 2, 5, 3, CCORE_FILTER_AUTO},        {3, 16384, 2, 7, CCORE_FILTER_BOX},
        {9000, 4, 7, 4, CCORE_FILTER_BILINEAR},     {1, 1, 37, 23, CCORE_FILTER_AUTO},
        {37, 23, 1, 1, CCORE_FILTER_BOX},           {37, 23, 1, 1, CCORE_FILTER_BILINEAR},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gplane s = gplane_make(cases[c].sw, cases[c].sh, 3);
        gplane d = gplane_make(cases[c].dw, cases[c].dh, 5);
        fill_plane(&r, &s, 0);
        REQUIRE(ccore_plane_scale(s.p, s.stride, s.w, s.h, d.p, d.stride, d.w, d.h, cases[c].f) == CCORE_OK);
        int box = resolved_box(s.w, s.h, d.w, d.h, cases[c].f);
        int bad = 0;
        for (int k = 0; k < 400; k++) {
            int32_t x = check_range(&r, 0, d.w - 1), y = check_range(&r, 0, d.h - 1);
            double v = ref_pixel(s.p, s.stride, s.w, s.h, d.w, d.h, box, x, y);
            if (fabs(d.p[(size_t)y * d.stride + x] - floor(v + 0.5)) > 1) bad++;
        }
        CHECK(bad == 0);
        if (bad) fprintf(stderr, "  case %zu: %d pixels off\n", c, bad);
        CHECK(scalar_equals_simd(&s, d.w, d.h, cases[c].f));
        gplane_free(&s);
        gplane_free(&d);
    }
}

// Screen-like content: a smooth gradient background with text-like blocks of hard edges.
static void fill_screen(check_rng *r, gplane *g) {
    for (int32_t y = 0; y < g->h; y++)
        for (int32_t x = 0; x < g->w; x++)
            g->p[(size_t)y * g->stride + x] = (uint8_t)(40 + 120 * x / g->w + 60 * y / g->h);
    int blocks = g->w * g->h / 400;
    for (int b = 0; b < blocks; b++) {
        int32_t bw = check_range(r, 1, 12), bh = check_range(r, 2, 16);
        int32_t x0 = check_range(r, 0, g->w - 1), y0 = check_range(r, 0, g->h - 1);
        uint8_t v = (check_next(r) & 1) ? 235 : 16;
        for (int32_t y = y0; y < y0 + bh && y < g->h; y++)
            for (int32_t x = x0; x < x0 + bw && x < g->w; x++) g->p[(size_t)y * g->stride + x] = v;
    }
}

// Error statistics of one comparison.
typedef struct diff_stats {
    int max;
    double sum;
    long n, over2;
} diff_stats;

static void diff_add(diff_stats *st, int e) {
    if (e > st->max) st->max = e;
    st->sum += e;
    st->n++;
    st->over2 += e > 2;
}

static void diff_planes(diff_stats *st, const uint8_t *a, int32_t as, const uint8_t *b,
                        int32_t bs, int32_t w, int32_t h) {
    for (int32_t y = 0; y < h; y++)
        for (int32_t x = 0; x < w; x++) diff_add(st, abs(a[(size_t)y * as + x] - b[(size_t)y * bs + x]));
}

// libyuv samples bilinear downscales at the same centres but with 8-bit vertical and 7-bit
// horizontal weights, truncating its horizontal blend; its box steps boundaries in truncated
// 16.16 (a boundary that should fall on an exact integer often lands one row or column early)
// and divides by truncated reciprocals. So on smooth areas the two agree within a level, and
// at hard edges they differ by as much as libyuv itself departs from the exact definition.
// The checks therefore bound the mean tightly, bound the bilinear maximum by libyuv's weight
// precision (2 levels per axis at a 219-level edge, +1 rounding), and require every box
// disagreement to be explained by libyuv's own distance from the exact area average.
TEST(scaleAgreesWithLibyuvOnScreenContent) {
    check_rng r = {0x5ca1e005};
    diff_stats bil = {0}, box = {0}, libyuv_box_err = {0};
    for (int iter = 0; iter < 40; iter++) {
        int use_box = iter % 2;
        int32_t sw = check_range(&r, 64, 640), sh = check_range(&r, 64, 480), dw, dh;
        if (use_box) { // libyuv only boxes when both axes shrink past 2x
            dw = check_range(&r, sw / 8 + 1, sw / 2 - 1);
            dh = check_range(&r, sh / 8 + 1, sh / 2 - 1);
        } else {
            dw = check_range(&r, sw / 2 + 1, sw);
            dh = check_range(&r, sh / 2 + 1, sh);
        }
        gplane s = gplane_make(sw, sh, 0);
        fill_screen(&r, &s);
        size_t bytes = (size_t)dw * dh;
        uint8_t *a = malloc(bytes), *b = malloc(bytes);
        REQUIRE(a && b);
        ccore_scale_filter f = use_box ? CCORE_FILTER_BOX : CCORE_FILTER_BILINEAR;
        REQUIRE(ccore_plane_scale(s.p, s.stride, sw, sh, a, dw, dw, dh, f) == CCORE_OK);
        ScalePlane(s.p, s.stride, sw, sh, b, dw, dw, dh, use_box ? kFilterBox : kFilterBilinear);
        for (int32_t y = 0; y < dh; y++)
            for (int32_t x = 0; x < dw; x++) {
                int e = abs(a[(size_t)y * dw + x] - b[(size_t)y * dw + x]);
                diff_add(use_box ? &box : &bil, e);
                if (use_box) {
                    double v = ref_pixel(s.p, s.stride, sw, sh, dw, dh, 1, x, y);
                    int le = (int)ceil(fabs(b[(size_t)y * dw + x] - v));
                    diff_add(&libyuv_box_err, le);
                    CHECK(e <= le + 1);
                }
            }
        free(a);
        free(b);
        gplane_free(&s);
    }
    // A 1080p -> 720p frame of the same content, the size the product uses most.
    {
        gplane s = gplane_make(1920, 1080, 0);
        fill_screen(&r, &s);
        uint8_t *a = malloc(1280 * 720), *b = malloc(1280 * 720);
        REQUIRE(a && b);
        REQUIRE(ccore_plane_scale(s.p, s.stride, 1920, 1080, a, 1280, 1280, 720, CCORE_FILTER_BILINEAR) == CCORE_OK);
        ScalePlane(s.p, s.stride, 1920, 1080, b, 1280, 1280, 720, kFilterBilinear);
        diff_planes(&bil, a, 1280, b, 1280, 1280, 720);
        free(a);
        free(b);
        gplane_free(&s);
    }
    printf("     vs libyuv bilinear: max %d, mean %.3f, >2 in %.4f%%; box: max %d, mean %.3f "
           "(libyuv box vs exact: max %d, mean %.3f)\n", bil.max, bil.sum / (double)bil.n,
           100.0 * (double)bil.over2 / (double)bil.n, box.max, box.sum / (double)box.n,
           libyuv_box_err.max, libyuv_box_err.sum / (double)libyuv_box_err.n);
    CHECK(bil.max <= 5);
    CHECK(bil.sum / (double)bil.n < 0.5);
    CHECK(box.sum / (double)box.n < 1.0);
}

// I420: each plane is the plane scaler with the filter resolved on luma.
TEST(i420ScaleScalesEachPlaneWithTheLumaFilter) {
    check_rng r = {0x5ca1e006};
    for (int iter = 0; iter < 25; iter++) {
        int32_t sw = check_range(&r, 1, 300), sh = check_range(&r, 1, 300);
        int32_t dw = check_range(&r, 1, 300), dh = check_range(&r, 1, 300);
        ccore_scale_filter f = (ccore_scale_filter)(iter % 3);
        size_t sb = ccore_image_bytes(CCORE_PIXEL_I420, sw, sh), db = ccore_image_bytes(CCORE_PIXEL_I420, dw, dh);
        uint8_t *smem = aligned_alloc(64, sb), *dmem = aligned_alloc(64, db), *pmem = aligned_alloc(64, db);
        ccore_image src, dst, per;
        REQUIRE(ccore_image_layout(CCORE_PIXEL_I420, sw, sh, smem, sb, &src) == 0);
        REQUIRE(ccore_image_layout(CCORE_PIXEL_I420, dw, dh, dmem, db, &dst) == 0);
        REQUIRE(ccore_image_layout(CCORE_PIXEL_I420, dw, dh, pmem, db, &per) == 0);
        for (size_t i = 0; i < sb; i++) smem[i] = (uint8_t)check_next(&r);
        REQUIRE(ccore_i420_scale(&src, &dst, f) == CCORE_OK);
        ccore_scale_filter lf = (f == CCORE_FILTER_AUTO) ? ((sw > 2 * dw || sh > 2 * dh) ? CCORE_FILTER_BOX : CCORE_FILTER_BILINEAR) : f;
        for (int p = 0; p < 3; p++) {
            int32_t pw = p ? (sw + 1) / 2 : sw, ph = p ? (sh + 1) / 2 : sh;
            int32_t qw = p ? (dw + 1) / 2 : dw, qh = p ? (dh + 1) / 2 : dh;
            REQUIRE(ccore_plane_scale(src.plane[p], src.stride[p], pw, ph, per.plane[p], per.stride[p], qw, qh, lf) == CCORE_OK);
            for (int32_t y = 0; y < qh; y++)
                CHECK(memcmp(dst.plane[p] + (size_t)y * dst.stride[p], per.plane[p] + (size_t)y * per.stride[p], (size_t)qw) == 0);
        }
        free(smem);
        free(dmem);
        free(pmem);
    }
}

TEST(i420ScaleIsCloseToLibyuvAt1080pTo720p) {
    check_rng r = {0x5ca1e007};
    size_t sb = ccore_image_bytes(CCORE_PIXEL_I420, 1920, 1080), db = ccore_image_bytes(CCORE_PIXEL_I420, 1280, 720);
    uint8_t *smem = aligned_alloc(64, sb), *dmem = aligned_alloc(64, db), *lmem = aligned_alloc(64, db);
    ccore_image src, dst, lib;
    REQUIRE(ccore_image_layout(CCORE_PIXEL_I420, 1920, 1080, smem, sb, &src) == 0);
    REQUIRE(ccore_image_layout(CCORE_PIXEL_I420, 1280, 720, dmem, db, &dst) == 0);
    REQUIRE(ccore_image_layout(CCORE_PIXEL_I420, 1280, 720, lmem, db, &lib) == 0);
    for (int p = 0; p < 3; p++) {
        gplane g = {src.plane[p], p ? 960 : 1920, p ? 540 : 1080, src.stride[p], 0};
        fill_screen(&r, &g);
    }
    REQUIRE(ccore_i420_scale(&src, &dst, CCORE_FILTER_BILINEAR) == CCORE_OK);
    I420Scale(src.plane[0], src.stride[0], src.plane[1], src.stride[1], src.plane[2], src.stride[2],
              1920, 1080, lib.plane[0], lib.stride[0], lib.plane[1], lib.stride[1], lib.plane[2],
              lib.stride[2], 1280, 720, kFilterBilinear);
    diff_stats st = {0};
    for (int p = 0; p < 3; p++)
        diff_planes(&st, dst.plane[p], dst.stride[p], lib.plane[p], lib.stride[p], p ? 640 : 1280, p ? 360 : 720);
    printf("     vs libyuv I420Scale 1080p->720p: max %d, mean %.3f\n", st.max, st.sum / (double)st.n);
    CHECK(st.max <= 5);
    CHECK(st.sum / (double)st.n < 0.5);
    free(smem);
    free(dmem);
    free(lmem);
}

TEST(scaleRefusesBadArguments) {
    uint8_t a[64], b[64];
    CHECK(ccore_plane_scale(NULL, 8, 8, 8, b, 8, 8, 8, CCORE_FILTER_AUTO) == CCORE_ERR_INVALID);
    CHECK(ccore_plane_scale(a, 8, 8, 8, NULL, 8, 8, 8, CCORE_FILTER_AUTO) == CCORE_ERR_INVALID);
    CHECK(ccore_plane_scale(a, 8, 0, 8, b, 8, 8, 8, CCORE_FILTER_AUTO) == CCORE_ERR_INVALID);
    CHECK(ccore_plane_scale(a, 8, 8, 8, b, 8, 8, -1, CCORE_FILTER_AUTO) == CCORE_ERR_INVALID);
    CHECK(ccore_plane_scale(a, 7, 8, 8, b, 8, 8, 8, CCORE_FILTER_AUTO) == CCORE_ERR_INVALID);
    CHECK(ccore_plane_scale(a, 8, 8, 8, b, 4, 8, 8, CCORE_FILTER_AUTO) == CCORE_ERR_INVALID);
    CHECK(ccore_plane_scale(a, 8, 8, 8, b, 8, 8, 8, (ccore_scale_filter)7) == CCORE_ERR_INVALID);
    CHECK(ccore_plane_scale(a, 8, 20000, 1, b, 8, 8, 8, CCORE_FILTER_AUTO) == CCORE_ERR_INVALID);
    CHECK(ccore_plane_scale(a, 8, 8, 8, a + 8, 8, 4, 4, CCORE_FILTER_AUTO) == CCORE_ERR_INVALID); // overlap
    ccore_image s = {CCORE_PIXEL_I420, 4, 4, {a, a + 16, a + 20}, {4, 2, 2}};
    ccore_image d = {CCORE_PIXEL_I420, 4, 4, {b, b + 16, b + 20}, {4, 2, 2}};
    CHECK(ccore_i420_scale(&s, &d, CCORE_FILTER_AUTO) == CCORE_OK);
    ccore_image n = d;
    n.format = CCORE_PIXEL_NV12;
    CHECK(ccore_i420_scale(&s, &n, CCORE_FILTER_AUTO) == CCORE_ERR_INVALID);
    CHECK(ccore_i420_scale(&n, &d, CCORE_FILTER_AUTO) == CCORE_ERR_INVALID);
    CHECK(ccore_i420_scale(NULL, &d, CCORE_FILTER_AUTO) == CCORE_ERR_INVALID);
    CHECK(ccore_i420_scale(&s, &s, CCORE_FILTER_AUTO) == CCORE_ERR_INVALID); // in place
    CHECK(ccore_i420_scale(&s, &d, (ccore_scale_filter)3) == CCORE_ERR_INVALID);
}
