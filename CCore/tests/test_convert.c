// Layout conversions into I420: NV12 bit for bit against libyuv, BGRA within one code value of
// libyuv (whose SIMD rounding differs by one from its own C rows), every SIMD path bit for bit
// against the scalar one, known colours, and argument checks. Planes sit in guarded buffers so
// a kernel that runs past the end of a plane faults.
// Build with -DCCORE_TESTS_NO_LIBYUV where libyuv is not available (cross builds).
#include <stdlib.h>
#include <string.h>

#include "CCore.h"
#include "check.h"

#ifndef CCORE_TESTS_NO_LIBYUV
#include <libyuv/convert.h>
#include <libyuv/convert_from_argb.h>
#endif

// An image whose planes each sit at the end of their own guarded buffer.
typedef struct {
    ccore_image img;
    int32_t row[3], rows[3];
    size_t bytes[3];
} timage;

static void fill_random(check_rng *r, uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(check_next(r) >> 56);
}

// Allocates `format` at w x h with strides of the row size plus 0..max_pad, filled at random.
static int timage_new(timage *t, check_rng *r, ccore_pixel_format format, int32_t w, int32_t h,
                      int max_pad) {
    memset(t, 0, sizeof *t);
    t->img = (ccore_image){.format = format, .width = w, .height = h};
    int32_t cw = (w + 1) / 2, ch = (h + 1) / 2;
    int planes = ccore_pixel_format_planes(format);
    for (int p = 0; p < planes; p++) {
        switch (format) {
        case CCORE_PIXEL_I420: t->row[p] = p ? cw : w; t->rows[p] = p ? ch : h; break;
        case CCORE_PIXEL_NV12: t->row[p] = p ? 2 * cw : w; t->rows[p] = p ? ch : h; break;
        default: t->row[p] = 4 * w; t->rows[p] = h; break;
        }
        int32_t stride = t->row[p] + (max_pad ? check_range(r, 0, max_pad) : 0);
        t->bytes[p] = (size_t)stride * (size_t)(t->rows[p] - 1) + (size_t)t->row[p];
        t->img.plane[p] = check_guarded_alloc(t->bytes[p]);
        t->img.stride[p] = stride;
        if (!t->img.plane[p]) return 0;
        fill_random(r, t->img.plane[p], t->bytes[p]);
    }
    return 1;
}

static void timage_free(timage *t) {
    for (int p = 0; p < 3; p++) check_guarded_free(t->img.plane[p], t->bytes[p]);
    memset(t, 0, sizeof *t);
}

// Largest difference between the pixels of two images of the same layout.
static int max_diff(const timage *a, const timage *b) {
    int worst = 0;
    for (int p = 0; p < 3 && a->img.plane[p]; p++)
        for (int32_t y = 0; y < a->rows[p]; y++) {
            const uint8_t *x = a->img.plane[p] + (size_t)y * a->img.stride[p];
            const uint8_t *z = b->img.plane[p] + (size_t)y * b->img.stride[p];
            for (int32_t i = 0; i < a->row[p]; i++) {
                int d = abs(x[i] - z[i]);
                if (d > worst) worst = d;
            }
        }
    return worst;
}

// Same masks as the orientation tests: scalar, SSE2, SSE2+SSSE3, all, limited by the process.
static int test_masks(uint32_t out[4]) {
    uint32_t all = ccore_cpu_features();
    uint32_t want[4] = {0, CCORE_CPU_SSE2, CCORE_CPU_SSE2 | CCORE_CPU_SSSE3, all};
    int n = 0;
    for (int i = 0; i < 4; i++) {
        uint32_t m = want[i] & all;
        int dup = 0;
        for (int j = 0; j < n; j++) dup |= out[j] == m;
        if (!dup) out[n++] = m;
    }
    return n;
}

// Edge sizes around every vector width first, then random ones up to 300 x 200.
static void pick_size(check_rng *r, int i, int32_t *w, int32_t *h) {
    static const int32_t edge[] = {1, 2, 3, 15, 16, 17, 31, 32, 33, 63, 64, 65, 66, 67};
    enum { N_EDGE = sizeof edge / sizeof edge[0] };
    if (i < N_EDGE) {
        *w = edge[i];
        *h = edge[(i * 5) % N_EDGE];
    } else {
        *w = check_range(r, 1, 300);
        *h = check_range(r, 1, 200);
    }
}

#ifndef CCORE_TESTS_NO_LIBYUV
TEST(nv12ToI420MatchesLibyuvBitForBit) {
    check_rng r = {0x6e7631320000ull};
    uint32_t masks[4];
    int n_masks = test_masks(masks);
    for (int i = 0; i < 80; i++) {
        int32_t w, h;
        pick_size(&r, i, &w, &h);
        timage s, want, got;
        REQUIRE(timage_new(&s, &r, CCORE_PIXEL_NV12, w, h, 70));
        REQUIRE(timage_new(&want, &r, CCORE_PIXEL_I420, w, h, 30));
        REQUIRE(timage_new(&got, &r, CCORE_PIXEL_I420, w, h, 30));
        const ccore_image *a = &s.img, *b = &want.img;
        CHECK(NV12ToI420(a->plane[0], a->stride[0], a->plane[1], a->stride[1], b->plane[0],
                         b->stride[0], b->plane[1], b->stride[1], b->plane[2], b->stride[2], w,
                         h) == 0);
        for (int m = 0; m < n_masks; m++) {
            ccore_cpu_set_mask(masks[m]);
            CHECK(ccore_nv12_to_i420(&s.img, &got.img) == CCORE_OK);
            CHECK(max_diff(&want, &got) == 0);
        }
        ccore_cpu_set_mask(masks[n_masks - 1]);
        timage_free(&s);
        timage_free(&want);
        timage_free(&got);
    }
}

// Converts with libyuv (ARGB there is B,G,R,A in memory, our BGRA) in the given range.
static int libyuv_bgra(const timage *s, const timage *d, ccore_color_range range) {
    const ccore_image *a = &s->img, *b = &d->img;
    return (range == CCORE_RANGE_FULL ? ARGBToJ420 : ARGBToI420)(
        a->plane[0], a->stride[0], b->plane[0], b->stride[0], b->plane[1], b->stride[1],
        b->plane[2], b->stride[2], a->width, a->height);
}

// Checks every kernel against libyuv for one range; `tolerance` is the allowed difference.
static void check_bgra_against_libyuv(uint64_t seed, ccore_color_range range) {
    check_rng r = {seed};
    uint32_t masks[4];
    int n_masks = test_masks(masks), worst = 0;
    for (int i = 0; i < 80; i++) {
        int32_t w, h;
        pick_size(&r, i, &w, &h);
        timage s, want, got;
        REQUIRE(timage_new(&s, &r, i & 1 ? CCORE_PIXEL_BGRX : CCORE_PIXEL_BGRA, w, h, 70));
        REQUIRE(timage_new(&want, &r, CCORE_PIXEL_I420, w, h, 30));
        REQUIRE(timage_new(&got, &r, CCORE_PIXEL_I420, w, h, 30));
        CHECK(libyuv_bgra(&s, &want, range) == 0);
        for (int m = 0; m < n_masks; m++) {
            ccore_cpu_set_mask(masks[m]);
            CHECK(ccore_bgra_to_i420(&s.img, &got.img, range) == CCORE_OK);
            int d = max_diff(&want, &got);
            if (d > worst) worst = d;
            if (d > 1) fprintf(stderr, "  %dx%d range %d mask %#x: off by %d\n", w, h, range, masks[m], d);
            CHECK(d <= 1);
        }
        ccore_cpu_set_mask(masks[n_masks - 1]);
        timage_free(&s);
        timage_free(&want);
        timage_free(&got);
    }
}

TEST(bgraToI420LimitedIsWithinOneOfLibyuvARGBToI420) {
    check_bgra_against_libyuv(0x6267726131ull, CCORE_RANGE_LIMITED);
}

TEST(bgraToI420FullIsWithinOneOfLibyuvARGBToJ420) {
    check_bgra_against_libyuv(0x6267726132ull, CCORE_RANGE_FULL);
}
#endif

TEST(everySimdConvertPathEqualsScalarBitForBit) {
    check_rng r = {0x636f6e76ull};
    uint32_t masks[4];
    int n_masks = test_masks(masks);
    for (int i = 0; i < 60; i++) {
        int32_t w, h;
        pick_size(&r, i, &w, &h);
        if (i >= 50) { // a few large ones with wide strides
            w = check_range(&r, 300, 900);
            h = check_range(&r, 2, 64);
        }
        timage bgra, nv12, want, got;
        REQUIRE(timage_new(&bgra, &r, CCORE_PIXEL_BGRA, w, h, 130));
        REQUIRE(timage_new(&nv12, &r, CCORE_PIXEL_NV12, w, h, 130));
        REQUIRE(timage_new(&want, &r, CCORE_PIXEL_I420, w, h, 40));
        REQUIRE(timage_new(&got, &r, CCORE_PIXEL_I420, w, h, 40));
        for (int range = 0; range <= 1; range++) {
            ccore_cpu_set_mask(0);
            CHECK(ccore_bgra_to_i420(&bgra.img, &want.img, (ccore_color_range)range) == CCORE_OK);
            for (int m = 1; m < n_masks; m++) {
                ccore_cpu_set_mask(masks[m]);
                CHECK(ccore_bgra_to_i420(&bgra.img, &got.img, (ccore_color_range)range) == CCORE_OK);
                CHECK(max_diff(&want, &got) == 0);
            }
        }
        ccore_cpu_set_mask(0);
        CHECK(ccore_nv12_to_i420(&nv12.img, &want.img) == CCORE_OK);
        for (int m = 1; m < n_masks; m++) {
            ccore_cpu_set_mask(masks[m]);
            CHECK(ccore_nv12_to_i420(&nv12.img, &got.img) == CCORE_OK);
            CHECK(max_diff(&want, &got) == 0);
        }
        ccore_cpu_set_mask(masks[n_masks - 1]);
        timage_free(&bgra);
        timage_free(&nv12);
        timage_free(&want);
        timage_free(&got);
    }
}

TEST(nv12ToI420CopiesLumaAndSplitsChromaPairs) {
    // 3x3 NV12: luma 0..8, chroma pairs (U,V) = (100,200) (101,201) / (102,202) (103,203).
    uint8_t y[9], uv[8] = {100, 200, 101, 201, 102, 202, 103, 203};
    for (int i = 0; i < 9; i++) y[i] = (uint8_t)i;
    ccore_image s = {.format = CCORE_PIXEL_NV12, .width = 3, .height = 3,
                     .plane = {y, uv}, .stride = {3, 4}};
    uint8_t oy[9], ou[4], ov[4];
    ccore_image d = {.format = CCORE_PIXEL_I420, .width = 3, .height = 3,
                     .plane = {oy, ou, ov}, .stride = {3, 2, 2}};
    CHECK(ccore_nv12_to_i420(&s, &d) == CCORE_OK);
    CHECK(memcmp(oy, y, 9) == 0);
    static const uint8_t want_u[4] = {100, 101, 102, 103}, want_v[4] = {200, 201, 202, 203};
    CHECK(memcmp(ou, want_u, 4) == 0);
    CHECK(memcmp(ov, want_v, 4) == 0);
}

// Converts a solid w x h BGRA colour and returns the (Y, U, V) of its first pixel.
static void solid_yuv(uint8_t b, uint8_t g, uint8_t r, ccore_color_range range, int32_t w,
                      int32_t h, uint8_t out[3], int *uniform) {
    uint8_t *px = malloc((size_t)w * h * 4), *yuv = malloc((size_t)w * h * 2 + 8);
    if (!px || !yuv) {
        free(px);
        free(yuv);
        *uniform = 0;
        return;
    }
    for (int32_t i = 0; i < w * h; i++) {
        px[4 * i] = b;
        px[4 * i + 1] = g;
        px[4 * i + 2] = r;
        px[4 * i + 3] = (uint8_t)i; // alpha must not matter
    }
    int32_t cw = (w + 1) / 2, ch = (h + 1) / 2;
    ccore_image s = {.format = CCORE_PIXEL_BGRX, .width = w, .height = h, .plane = {px}, .stride = {4 * w}};
    ccore_image d = {.format = CCORE_PIXEL_I420, .width = w, .height = h,
                     .plane = {yuv, yuv + w * h, yuv + w * h + cw * ch}, .stride = {w, cw, cw}};
    *uniform = ccore_bgra_to_i420(&s, &d, range) == CCORE_OK;
    for (int32_t i = 1; i < w * h; i++) *uniform &= yuv[i] == yuv[0];
    for (int32_t i = 1; i < cw * ch; i++) *uniform &= d.plane[1][i] == d.plane[1][0] && d.plane[2][i] == d.plane[2][0];
    out[0] = yuv[0];
    out[1] = d.plane[1][0];
    out[2] = d.plane[2][0];
    free(px);
    free(yuv);
}

TEST(bgraToI420GivesKnownBt601ValuesForPrimaries) {
    // B, G, R -> Y, U, V; limited then full range (BT.601, 8-bit fixed point as in convert.c).
    static const struct { uint8_t bgr[3], lim[3], full[3]; } table[] = {
        {{0, 0, 0}, {16, 128, 128}, {0, 128, 128}},          // black
        {{255, 255, 255}, {235, 128, 128}, {255, 128, 128}}, // white
        {{0, 0, 255}, {82, 90, 240}, {77, 85, 255}},         // red
        {{0, 255, 0}, {144, 54, 34}, {149, 44, 21}},         // green
        {{255, 0, 0}, {41, 240, 110}, {29, 255, 108}},       // blue
        {{128, 128, 128}, {126, 128, 128}, {128, 128, 128}}, // mid grey
    };
    uint32_t masks[4];
    int n_masks = test_masks(masks);
    for (int m = 0; m < n_masks; m++) {
        ccore_cpu_set_mask(masks[m]);
        for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
            for (int range = 0; range <= 1; range++) {
                uint8_t got[3];
                int uniform;
                solid_yuv(table[i].bgr[0], table[i].bgr[1], table[i].bgr[2], (ccore_color_range)range,
                          67, 5, got, &uniform);
                const uint8_t *want = range ? table[i].full : table[i].lim;
                CHECK(uniform);
                if (memcmp(got, want, 3))
                    fprintf(stderr, "  colour %zu range %d: got %d %d %d\n", i, range, got[0], got[1], got[2]);
                CHECK(memcmp(got, want, 3) == 0);
            }
        }
    }
    ccore_cpu_set_mask(masks[n_masks - 1]);
}

TEST(bgraToI420AveragesEachTwoByTwoBlockAndEdgePixelsRepeat) {
    // 3x3 picture, green only: a 2x2 block, a right column of 2, a bottom row of 2, a corner.
    uint8_t px[9 * 4] = {0};
    static const uint8_t g[9] = {0, 100, 50, 200, 255, 150, 30, 60, 90};
    for (int i = 0; i < 9; i++) px[4 * i + 1] = g[i];
    uint8_t y[9], u[4], v[4];
    ccore_image s = {.format = CCORE_PIXEL_BGRA, .width = 3, .height = 3, .plane = {px}, .stride = {12}};
    ccore_image d = {.format = CCORE_PIXEL_I420, .width = 3, .height = 3, .plane = {y, u, v}, .stride = {3, 2, 2}};
    uint32_t masks[4];
    int n_masks = test_masks(masks);
    for (int m = 0; m < n_masks; m++) {
        ccore_cpu_set_mask(masks[m]);
        CHECK(ccore_bgra_to_i420(&s, &d, CCORE_RANGE_FULL) == CCORE_OK);
        // Rounded halvings, rows first: block ((0+200+1)/2=100, (100+255+1)/2=178) -> 139;
        // right column (50+150+1)/2=100; bottom row (30+60+1)/2=45; corner 90.
        static const int avg[4] = {139, 100, 45, 90};
        for (int i = 0; i < 4; i++) {
            CHECK(u[i] == (uint8_t)((-84 * avg[i] + 0x8080) >> 8));
            CHECK(v[i] == (uint8_t)((-107 * avg[i] + 0x8080) >> 8));
        }
        for (int i = 0; i < 9; i++) CHECK(y[i] == (uint8_t)((150 * g[i] + 0x80) >> 8));
    }
    ccore_cpu_set_mask(masks[n_masks - 1]);
}

// Copies the w x h sub-image of `big` at (x0, y0) (x0, y0 even) into a view of it.
static ccore_image sub_image(const ccore_image *big, int32_t x0, int32_t y0, int32_t w, int32_t h) {
    ccore_image v = *big;
    v.width = w;
    v.height = h;
    int bpp = big->format == CCORE_PIXEL_BGRA || big->format == CCORE_PIXEL_BGRX ? 4 : 1;
    v.plane[0] = big->plane[0] + (size_t)y0 * big->stride[0] + (size_t)x0 * bpp;
    for (int p = 1; p < 3 && big->plane[p]; p++) {
        int chroma_bpp = big->format == CCORE_PIXEL_NV12 ? 2 : 1;
        v.plane[p] = big->plane[p] + (size_t)(y0 / 2) * big->stride[p] + (size_t)(x0 / 2) * chroma_bpp;
    }
    return v;
}

// Whether every byte of `t` outside the view `inner` equals `before` (plane by plane).
static int only_inside_changed(const timage *t, uint8_t *const before[3], const ccore_image *inner) {
    int ok = 1;
    for (int p = 0; p < 3 && t->img.plane[p]; p++) {
        int32_t iw = p ? (inner->width + 1) / 2 : inner->width, ih = p ? (inner->height + 1) / 2 : inner->height;
        size_t off = (size_t)(inner->plane[p] - t->img.plane[p]);
        size_t y0 = off / (size_t)t->img.stride[p], x0 = off % (size_t)t->img.stride[p];
        for (size_t i = 0; i < t->bytes[p]; i++) {
            size_t y = i / (size_t)t->img.stride[p], x = i % (size_t)t->img.stride[p];
            int in = y >= y0 && y < y0 + (size_t)ih && x >= x0 && x < x0 + (size_t)iw;
            if (!in) ok &= t->img.plane[p][i] == before[p][i];
        }
    }
    return ok;
}

TEST(conversionsOnAStripMatchTheStandaloneImageAndTouchNothingElse) {
    check_rng r = {0x73747270ull};
    uint32_t masks[4];
    int n_masks = test_masks(masks);
    for (int i = 0; i < 40; i++) {
        int32_t bw = check_range(&r, 40, 300), bh = check_range(&r, 20, 120);
        int32_t x0 = 2 * check_range(&r, 0, 8), y0 = 2 * check_range(&r, 0, 4);
        int32_t w = check_range(&r, 1, bw - x0 - 4), h = check_range(&r, 1, bh - y0 - 4);
        for (int kind = 0; kind < 2; kind++) { // 0 = BGRA, 1 = NV12
            ccore_pixel_format f = kind ? CCORE_PIXEL_NV12 : CCORE_PIXEL_BGRA;
            timage src, dst, alone, want;
            REQUIRE(timage_new(&src, &r, f, bw, bh, 0));
            REQUIRE(timage_new(&dst, &r, CCORE_PIXEL_I420, bw, bh, 0));
            REQUIRE(timage_new(&alone, &r, f, w, h, 0));
            REQUIRE(timage_new(&want, &r, CCORE_PIXEL_I420, w, h, 0));
            ccore_image s = sub_image(&src.img, x0, y0, w, h), d = sub_image(&dst.img, x0, y0, w, h);
            for (int p = 0; p < 2 && s.plane[p]; p++)
                for (int32_t y = 0; y < alone.rows[p]; y++)
                    memcpy(alone.img.plane[p] + (size_t)y * alone.img.stride[p],
                           s.plane[p] + (size_t)y * s.stride[p], (size_t)alone.row[p]);
            ccore_cpu_set_mask(0);
            CHECK((kind ? ccore_nv12_to_i420(&alone.img, &want.img)
                        : ccore_bgra_to_i420(&alone.img, &want.img, CCORE_RANGE_LIMITED)) == CCORE_OK);
            uint8_t *before[3];
            for (int p = 0; p < 3; p++) {
                before[p] = malloc(dst.bytes[p]);
                REQUIRE(before[p]);
                memcpy(before[p], dst.img.plane[p], dst.bytes[p]);
            }
            for (int m = 0; m < n_masks; m++) {
                ccore_cpu_set_mask(masks[m]);
                CHECK((kind ? ccore_nv12_to_i420(&s, &d)
                            : ccore_bgra_to_i420(&s, &d, CCORE_RANGE_LIMITED)) == CCORE_OK);
                timage view = want; // want's sizes, d's pixels and strides
                view.img = d;
                CHECK(max_diff(&want, &view) == 0);
                CHECK(only_inside_changed(&dst, before, &d));
            }
            ccore_cpu_set_mask(masks[n_masks - 1]);
            for (int p = 0; p < 3; p++) free(before[p]);
            timage_free(&src);
            timage_free(&dst);
            timage_free(&alone);
            timage_free(&want);
        }
    }
}

TEST(nv12ToI420HandlesContiguousPlanesAsOneBlock) {
    // Strides equal to widths take the whole-plane luma copy and the single-row chroma split;
    // 640x360 is above the block-copy threshold, the odd sizes end in a partial vector.
    check_rng r = {0x626c6f63ull};
    static const int32_t sizes[][2] = {{640, 360}, {33, 17}, {1, 1}, {95, 64}};
    uint32_t masks[4];
    int n_masks = test_masks(masks);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int32_t w = sizes[i][0], h = sizes[i][1];
        timage s, want, got;
        REQUIRE(timage_new(&s, &r, CCORE_PIXEL_NV12, w, h, 0));
        REQUIRE(timage_new(&want, &r, CCORE_PIXEL_I420, w, h, 0));
        REQUIRE(timage_new(&got, &r, CCORE_PIXEL_I420, w, h, 0));
        ccore_cpu_set_mask(0);
        CHECK(ccore_nv12_to_i420(&s.img, &want.img) == CCORE_OK);
        CHECK(memcmp(want.img.plane[0], s.img.plane[0], (size_t)w * h) == 0);
        for (int32_t c = 0; c < want.row[1] * want.rows[1]; c++) {
            CHECK(want.img.plane[1][c] == s.img.plane[1][2 * c]);
            CHECK(want.img.plane[2][c] == s.img.plane[1][2 * c + 1]);
        }
        for (int m = 1; m < n_masks; m++) {
            ccore_cpu_set_mask(masks[m]);
            for (int p = 0; p < 3; p++) memset(got.img.plane[p], 0, got.bytes[p]);
            CHECK(ccore_nv12_to_i420(&s.img, &got.img) == CCORE_OK);
            CHECK(max_diff(&want, &got) == 0);
        }
        ccore_cpu_set_mask(masks[n_masks - 1]);
        timage_free(&s);
        timage_free(&want);
        timage_free(&got);
    }
}

TEST(convertRejectsInvalidArguments) {
    check_rng r = {11};
    timage bgra, nv12, i420, small;
    REQUIRE(timage_new(&bgra, &r, CCORE_PIXEL_BGRA, 8, 6, 0));
    REQUIRE(timage_new(&nv12, &r, CCORE_PIXEL_NV12, 8, 6, 0));
    REQUIRE(timage_new(&i420, &r, CCORE_PIXEL_I420, 8, 6, 0));
    REQUIRE(timage_new(&small, &r, CCORE_PIXEL_I420, 8, 4, 0));
    CHECK(ccore_nv12_to_i420(NULL, &i420.img) == CCORE_ERR_INVALID);
    CHECK(ccore_nv12_to_i420(&nv12.img, NULL) == CCORE_ERR_INVALID);
    CHECK(ccore_nv12_to_i420(&bgra.img, &i420.img) == CCORE_ERR_INVALID);
    CHECK(ccore_nv12_to_i420(&nv12.img, &nv12.img) == CCORE_ERR_INVALID);
    CHECK(ccore_nv12_to_i420(&nv12.img, &small.img) == CCORE_ERR_INVALID);
    CHECK(ccore_bgra_to_i420(NULL, &i420.img, CCORE_RANGE_LIMITED) == CCORE_ERR_INVALID);
    CHECK(ccore_bgra_to_i420(&bgra.img, NULL, CCORE_RANGE_LIMITED) == CCORE_ERR_INVALID);
    CHECK(ccore_bgra_to_i420(&nv12.img, &i420.img, CCORE_RANGE_LIMITED) == CCORE_ERR_INVALID);
    CHECK(ccore_bgra_to_i420(&bgra.img, &small.img, CCORE_RANGE_LIMITED) == CCORE_ERR_INVALID);
    CHECK(ccore_bgra_to_i420(&bgra.img, &i420.img, (ccore_color_range)2) == CCORE_ERR_INVALID);
    ccore_image short_stride = bgra.img;
    short_stride.stride[0] = 31;
    CHECK(ccore_bgra_to_i420(&short_stride, &i420.img, CCORE_RANGE_LIMITED) == CCORE_ERR_INVALID);
    CHECK(ccore_nv12_to_i420(&nv12.img, &i420.img) == CCORE_OK);
    CHECK(ccore_bgra_to_i420(&bgra.img, &i420.img, CCORE_RANGE_FULL) == CCORE_OK);
    timage_free(&bgra);
    timage_free(&nv12);
    timage_free(&i420);
    timage_free(&small);
}
