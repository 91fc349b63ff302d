// Orientation correction: the eight EXIF tags against a per-pixel coordinate mapping and
// against libyuv, the group laws of the tags, every SIMD path against the scalar one, and
// argument checks. Planes sit in guarded buffers (the last byte of every plane is the last byte
// before an inaccessible page), so a kernel that reads or writes past a plane faults.
// Build with -DCCORE_TESTS_NO_LIBYUV where libyuv is not available (cross builds).
#include <stdlib.h>
#include <string.h>

#include "CCore.h"
#include "check.h"

#ifndef CCORE_TESTS_NO_LIBYUV
#include <libyuv/planar_functions.h>
#include <libyuv/rotate.h>
#endif

// A plane in its own guarded buffer; `bytes` covers exactly stride * (h - 1) + w.
typedef struct {
    uint8_t *p;
    int32_t w, h, stride;
    size_t bytes;
} plane;

static void fill_random(check_rng *r, uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(check_next(r) >> 56);
}

// A w x h plane with a stride of w plus 0..max_pad bytes, padding included in the random fill.
static plane plane_new(check_rng *r, int32_t w, int32_t h, int max_pad) {
    plane pl = {.w = w, .h = h, .stride = w + (max_pad ? check_range(r, 0, max_pad) : 0)};
    pl.bytes = (size_t)pl.stride * (size_t)(h - 1) + (size_t)w;
    pl.p = check_guarded_alloc(pl.bytes);
    if (pl.p) fill_random(r, pl.p, pl.bytes);
    return pl;
}

static void plane_free(plane *pl) {
    check_guarded_free(pl->p, pl->bytes);
    pl->p = NULL;
}

// Whether the w x h pixels of two planes are equal (padding ignored).
static int plane_same(const plane *a, const plane *b) {
    if (a->w != b->w || a->h != b->h) return 0;
    for (int32_t y = 0; y < a->h; y++)
        if (memcmp(a->p + (size_t)y * a->stride, b->p + (size_t)y * b->stride, (size_t)a->w))
            return 0;
    return 1;
}

// Whether the bytes between rows still equal a snapshot taken before the call.
static int padding_intact(const plane *pl, const uint8_t *before) {
    for (int32_t y = 0; y + 1 < pl->h; y++) {
        size_t from = (size_t)y * pl->stride + pl->w, to = (size_t)(y + 1) * pl->stride;
        if (memcmp(pl->p + from, before + from, to - from)) return 0;
    }
    return 1;
}

// The stored pixel that ends up at upright (x, y), straight from the EXIF definitions.
static uint8_t reference_pixel(const plane *s, int tag, int32_t x, int32_t y) {
    int32_t w = s->w, h = s->h, sx = 0, sy = 0;
    switch (tag) {
    case 1: sx = x; sy = y; break;
    case 2: sx = w - 1 - x; sy = y; break;
    case 3: sx = w - 1 - x; sy = h - 1 - y; break;
    case 4: sx = x; sy = h - 1 - y; break;
    case 5: sx = y; sy = x; break;
    case 6: sx = y; sy = h - 1 - x; break;
    case 7: sx = w - 1 - y; sy = h - 1 - x; break;
    case 8: sx = w - 1 - y; sy = x; break;
    }
    return s->p[(size_t)sy * s->stride + sx];
}

static int32_t upright_w(const plane *s, int tag) { return tag >= 5 ? s->h : s->w; }
static int32_t upright_h(const plane *s, int tag) { return tag >= 5 ? s->w : s->h; }

// The feature masks to run every kernel under: scalar, SSE2, SSE2+SSSE3 and everything this
// CPU has, each limited by what the process allows (so CCORE_CPU_MASK=0 stays scalar).
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

// Sizes that stress the edges of every tile width (8, 16, 32) plus random ones.
static void pick_size(check_rng *r, int i, int32_t *w, int32_t *h) {
    static const int32_t edge[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 97};
    enum { N_EDGE = sizeof edge / sizeof edge[0] };
    if (i < N_EDGE * N_EDGE) {
        *w = edge[i % N_EDGE];
        *h = edge[i / N_EDGE];
    } else {
        *w = check_range(r, 1, 300);
        *h = check_range(r, 1, 200);
    }
}

TEST(orientationSwapsAxesOnlyForTags5To8) {
    for (int tag = 1; tag <= 4; tag++) CHECK(ccore_orientation_swaps_axes(tag) == 0);
    for (int tag = 5; tag <= 8; tag++) CHECK(ccore_orientation_swaps_axes(tag) == 1);
    CHECK(ccore_orientation_swaps_axes(0) == -1);
    CHECK(ccore_orientation_swaps_axes(9) == -1);
    CHECK(ccore_orientation_swaps_axes(-6) == -1);
}

TEST(planeOrientMatchesPixelMappingForEveryTagAndKernel) {
    check_rng r = {0x6f7269656e74ull};
    uint32_t masks[4];
    int n_masks = test_masks(masks), cases = 17 * 17 + 200;
    for (int i = 0; i < cases; i++) {
        int32_t w, h;
        pick_size(&r, i, &w, &h);
        plane s = plane_new(&r, w, h, 40);
        REQUIRE(s.p);
        for (int tag = 1; tag <= 8; tag++) {
            plane d = plane_new(&r, upright_w(&s, tag), upright_h(&s, tag), 40);
            REQUIRE(d.p);
            uint8_t *before = malloc(d.bytes);
            REQUIRE(before);
            memcpy(before, d.p, d.bytes);
            for (int m = 0; m < n_masks; m++) {
                ccore_cpu_set_mask(masks[m]);
                memcpy(d.p, before, d.bytes);
                CHECK(ccore_plane_orient(s.p, s.stride, w, h, d.p, d.stride, tag) == CCORE_OK);
                int bad = 0;
                for (int32_t y = 0; y < d.h && !bad; y++)
                    for (int32_t x = 0; x < d.w && !bad; x++)
                        bad = d.p[(size_t)y * d.stride + x] != reference_pixel(&s, tag, x, y);
                if (bad) fprintf(stderr, "  tag %d %dx%d mask %#x differs\n", tag, w, h, masks[m]);
                CHECK(!bad);
                CHECK(padding_intact(&d, before));
            }
            ccore_cpu_set_mask(masks[n_masks - 1]);
            free(before);
            plane_free(&d);
        }
        plane_free(&s);
        if (check_failed_now()) break;
    }
}

TEST(everySimdOrientPathEqualsScalarOnLargeStridedPlanes) {
    check_rng r = {0x73696d64ull};
    uint32_t masks[4];
    int n_masks = test_masks(masks);
    for (int i = 0; i < 12; i++) {
        int32_t w = check_range(&r, 200, 700), h = check_range(&r, 150, 500);
        plane s = plane_new(&r, w, h, 200);
        REQUIRE(s.p);
        for (int tag = 1; tag <= 8; tag++) {
            plane want = plane_new(&r, upright_w(&s, tag), upright_h(&s, tag), 0);
            plane got = plane_new(&r, want.w, want.h, 100);
            REQUIRE(want.p && got.p);
            ccore_cpu_set_mask(0);
            CHECK(ccore_plane_orient(s.p, s.stride, w, h, want.p, want.stride, tag) == CCORE_OK);
            for (int m = 1; m < n_masks; m++) {
                ccore_cpu_set_mask(masks[m]);
                memset(got.p, 0xA5, got.bytes);
                CHECK(ccore_plane_orient(s.p, s.stride, w, h, got.p, got.stride, tag) == CCORE_OK);
                CHECK(plane_same(&want, &got));
            }
            ccore_cpu_set_mask(masks[n_masks - 1]);
            plane_free(&want);
            plane_free(&got);
        }
        plane_free(&s);
    }
}

// An I420 image in three guarded planes.
typedef struct {
    ccore_image img;
    plane pl[3];
} i420;

static i420 i420_new(check_rng *r, int32_t w, int32_t h, int max_pad) {
    i420 t = {.img = {.format = CCORE_PIXEL_I420, .width = w, .height = h}};
    for (int p = 0; p < 3; p++) {
        int32_t pw = p ? (w + 1) / 2 : w, ph = p ? (h + 1) / 2 : h;
        t.pl[p] = plane_new(r, pw, ph, max_pad);
        t.img.plane[p] = t.pl[p].p;
        t.img.stride[p] = t.pl[p].stride;
    }
    return t;
}

static int i420_ok(const i420 *t) { return t->pl[0].p && t->pl[1].p && t->pl[2].p; }

static void i420_free(i420 *t) {
    for (int p = 0; p < 3; p++) plane_free(&t->pl[p]);
}

static int i420_same(const i420 *a, const i420 *b) {
    return plane_same(&a->pl[0], &b->pl[0]) && plane_same(&a->pl[1], &b->pl[1]) &&
           plane_same(&a->pl[2], &b->pl[2]);
}

// An image of the size `tag` turns `t` into.
static i420 i420_upright(check_rng *r, const i420 *t, int tag, int max_pad) {
    int swap = ccore_orientation_swaps_axes(tag) == 1;
    return i420_new(r, swap ? t->img.height : t->img.width, swap ? t->img.width : t->img.height,
                    max_pad);
}

// Applies `tag` to `t` `times` times and reports whether the result equals `t`.
static int i420_law_holds(check_rng *r, const i420 *t, const int *tags, int n) {
    i420 cur = i420_new(r, t->img.width, t->img.height, 9);
    if (!i420_ok(&cur)) return 0;
    for (int p = 0; p < 3; p++)
        for (int32_t y = 0; y < t->pl[p].h; y++)
            memcpy(cur.pl[p].p + (size_t)y * cur.pl[p].stride,
                   t->pl[p].p + (size_t)y * t->pl[p].stride, (size_t)t->pl[p].w);
    int ok = 1;
    for (int i = 0; i < n && ok; i++) {
        i420 next = i420_upright(r, &cur, tags[i], 9);
        ok = i420_ok(&next) && ccore_i420_orient(&cur.img, &next.img, tags[i]) == CCORE_OK;
        i420_free(&cur);
        cur = next;
    }
    ok = ok && i420_same(&cur, t);
    i420_free(&cur);
    return ok;
}

// Runs `law` (a sequence of tags that must compose to the identity) on random images.
static void check_law(uint64_t seed, const int *tags, int n) {
    check_rng r = {seed};
    uint32_t masks[4];
    int n_masks = test_masks(masks);
    for (int i = 0; i < 40; i++) {
        int32_t w = check_range(&r, 1, 300), h = check_range(&r, 1, 200);
        if (i < 4) w = h = 1 + i; // tiny ones first
        i420 t = i420_new(&r, w, h, 33);
        REQUIRE(i420_ok(&t));
        for (int m = 0; m < n_masks; m++) {
            ccore_cpu_set_mask(masks[m]);
            CHECK(i420_law_holds(&r, &t, tags, n));
        }
        ccore_cpu_set_mask(masks[n_masks - 1]);
        i420_free(&t);
    }
}

TEST(fourQuarterTurnsGiveTheInputBack) {
    static const int tags[] = {6, 6, 6, 6};
    check_law(0x9001, tags, 4);
}

TEST(mirrorTwiceGivesTheInputBack) {
    static const int lr[] = {2, 2}, tb[] = {4, 4};
    check_law(0x9002, lr, 2);
    check_law(0x9003, tb, 2);
}

TEST(halfTurnTwiceIsIdentity) {
    static const int tags[] = {3, 3};
    check_law(0x9004, tags, 2);
}

TEST(counterClockwiseTurnUndoesClockwiseTurn) {
    static const int a[] = {6, 8}, b[] = {8, 6};
    check_law(0x9005, a, 2);
    check_law(0x9006, b, 2);
}

TEST(transposeAndTransverseAreTheirOwnInverses) {
    static const int a[] = {5, 5}, b[] = {7, 7};
    check_law(0x9007, a, 2);
    check_law(0x9008, b, 2);
}

TEST(i420OrientMatchesPixelMappingOnEveryPlane) {
    check_rng r = {0x1420};
    for (int i = 0; i < 30; i++) {
        int32_t w = check_range(&r, 1, 300), h = check_range(&r, 1, 200);
        i420 s = i420_new(&r, w, h, 50);
        REQUIRE(i420_ok(&s));
        for (int tag = 1; tag <= 8; tag++) {
            i420 d = i420_upright(&r, &s, tag, 50);
            REQUIRE(i420_ok(&d));
            CHECK(ccore_i420_orient(&s.img, &d.img, tag) == CCORE_OK);
            for (int p = 0; p < 3; p++) {
                int bad = 0;
                for (int32_t y = 0; y < d.pl[p].h && !bad; y++)
                    for (int32_t x = 0; x < d.pl[p].w && !bad; x++)
                        bad = d.pl[p].p[(size_t)y * d.pl[p].stride + x] !=
                              reference_pixel(&s.pl[p], tag, x, y);
                CHECK(!bad);
            }
            i420_free(&d);
        }
        i420_free(&s);
    }
}

#ifndef CCORE_TESTS_NO_LIBYUV
// libyuv's result for `tag`, composed from the operations it has.
static int libyuv_orient(check_rng *r, const i420 *s, const i420 *d, int tag) {
    const ccore_image *a = &s->img, *b = &d->img;
    int w = a->width, h = a->height;
    switch (tag) {
    case 1:
    case 3:
    case 6:
    case 8: {
        enum RotationMode mode = tag == 1 ? kRotate0 : tag == 3 ? kRotate180 : tag == 6 ? kRotate90 : kRotate270;
        return I420Rotate(a->plane[0], a->stride[0], a->plane[1], a->stride[1], a->plane[2],
                          a->stride[2], b->plane[0], b->stride[0], b->plane[1], b->stride[1],
                          b->plane[2], b->stride[2], w, h, mode);
    }
    case 2:
        return I420Mirror(a->plane[0], a->stride[0], a->plane[1], a->stride[1], a->plane[2],
                          a->stride[2], b->plane[0], b->stride[0], b->plane[1], b->stride[1],
                          b->plane[2], b->stride[2], w, h);
    case 4: // a negative height reads the source bottom row first
        return I420Rotate(a->plane[0], a->stride[0], a->plane[1], a->stride[1], a->plane[2],
                          a->stride[2], b->plane[0], b->stride[0], b->plane[1], b->stride[1],
                          b->plane[2], b->stride[2], w, -h, kRotate0);
    default: { // 5 = mirror then turn counter-clockwise, 7 = mirror then turn clockwise
        i420 m = i420_new(r, w, h, 0);
        if (!i420_ok(&m)) return -1;
        const ccore_image *c = &m.img;
        int rc = I420Mirror(a->plane[0], a->stride[0], a->plane[1], a->stride[1], a->plane[2],
                            a->stride[2], c->plane[0], c->stride[0], c->plane[1], c->stride[1],
                            c->plane[2], c->stride[2], w, h);
        if (rc == 0)
            rc = I420Rotate(c->plane[0], c->stride[0], c->plane[1], c->stride[1], c->plane[2],
                            c->stride[2], b->plane[0], b->stride[0], b->plane[1], b->stride[1],
                            b->plane[2], b->stride[2], w, h, tag == 5 ? kRotate270 : kRotate90);
        i420_free(&m);
        return rc;
    }
    }
}

TEST(i420OrientMatchesLibyuvBitForBitForEveryTag) {
    check_rng r = {0x6c6962797576ull};
    uint32_t masks[4];
    int n_masks = test_masks(masks);
    for (int i = 0; i < 40; i++) {
        int32_t w = check_range(&r, 1, 300), h = check_range(&r, 1, 200);
        if (i == 0) w = h = 1;
        if (i == 1) { w = 64; h = 48; }
        i420 s = i420_new(&r, w, h, 70);
        REQUIRE(i420_ok(&s));
        for (int tag = 1; tag <= 8; tag++) {
            i420 want = i420_upright(&r, &s, tag, 20), got = i420_upright(&r, &s, tag, 20);
            REQUIRE(i420_ok(&want) && i420_ok(&got));
            CHECK(libyuv_orient(&r, &s, &want, tag) == 0);
            for (int m = 0; m < n_masks; m++) {
                ccore_cpu_set_mask(masks[m]);
                CHECK(ccore_i420_orient(&s.img, &got.img, tag) == CCORE_OK);
                if (!i420_same(&want, &got))
                    fprintf(stderr, "  tag %d %dx%d mask %#x differs from libyuv\n", tag, w, h, masks[m]);
                CHECK(i420_same(&want, &got));
            }
            ccore_cpu_set_mask(masks[n_masks - 1]);
            i420_free(&want);
            i420_free(&got);
        }
        i420_free(&s);
    }
}
#endif

TEST(planeOrientOnAStripTouchesOnlyItsRectangle) {
    // The fused transform hands in sub-rectangles cut out of larger planes by pointer offsets:
    // the result must equal the same rectangle copied out on its own, and nothing around the
    // destination rectangle may change.
    check_rng r = {0x7374726970ull};
    uint32_t masks[4];
    int n_masks = test_masks(masks);
    for (int i = 0; i < 60; i++) {
        int32_t bw = check_range(&r, 40, 300), bh = check_range(&r, 40, 200);
        int32_t w = check_range(&r, 1, bw - 3), h = check_range(&r, 1, bh - 3);
        int32_t x0 = check_range(&r, 0, bw - w), y0 = check_range(&r, 0, bh - h);
        plane big = plane_new(&r, bw, bh, 0), alone = plane_new(&r, w, h, 0);
        REQUIRE(big.p && alone.p);
        const uint8_t *sub = big.p + (size_t)y0 * big.stride + x0;
        for (int32_t y = 0; y < h; y++) memcpy(alone.p + (size_t)y * w, sub + (size_t)y * big.stride, (size_t)w);
        int tag = check_range(&r, 1, 8);
        int32_t dw = tag >= 5 ? h : w, dh = tag >= 5 ? w : h;
        // Destination: a rectangle inside a larger plane with a margin on every side.
        plane out = plane_new(&r, dw + 5, dh + 4, 0), want = plane_new(&r, dw, dh, 0);
        REQUIRE(out.p && want.p);
        uint8_t *before = malloc(out.bytes);
        REQUIRE(before);
        memcpy(before, out.p, out.bytes);
        ccore_cpu_set_mask(0);
        CHECK(ccore_plane_orient(alone.p, w, w, h, want.p, want.stride, tag) == CCORE_OK);
        uint8_t *dsub = out.p + 2 * (size_t)out.stride + 3;
        for (int m = 0; m < n_masks; m++) {
            ccore_cpu_set_mask(masks[m]);
            memcpy(out.p, before, out.bytes);
            CHECK(ccore_plane_orient(sub, big.stride, w, h, dsub, out.stride, tag) == CCORE_OK);
            int inside_ok = 1, outside_ok = 1;
            for (int32_t y = 0; y < out.h; y++)
                for (int32_t x = 0; x < out.w; x++) {
                    size_t at = (size_t)y * out.stride + x;
                    int in = y >= 2 && y < 2 + dh && x >= 3 && x < 3 + dw;
                    if (in) inside_ok &= out.p[at] == want.p[(size_t)(y - 2) * want.stride + (x - 3)];
                    else outside_ok &= out.p[at] == before[at];
                }
            CHECK(inside_ok);
            CHECK(outside_ok);
        }
        ccore_cpu_set_mask(masks[n_masks - 1]);
        free(before);
        plane_free(&big);
        plane_free(&alone);
        plane_free(&out);
        plane_free(&want);
    }
}

TEST(identityAndFlipCopyContiguousPlanes) {
    // Planes whose stride equals their width are copied as one block (a different code path
    // from the row-by-row copy); check both tags that copy, at sizes above and below a page.
    check_rng r = {0x636f7079ull};
    static const int32_t sizes[][2] = {{1, 1}, {64, 64}, {640, 360}, {1000, 3}, {3, 2000}};
    uint32_t masks[4];
    int n_masks = test_masks(masks);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        plane s = plane_new(&r, sizes[i][0], sizes[i][1], 0);
        plane d = plane_new(&r, sizes[i][0], sizes[i][1], 0);
        REQUIRE(s.p && d.p);
        for (int tag = 1; tag <= 4; tag += 3) {
            for (int m = 0; m < n_masks; m++) {
                ccore_cpu_set_mask(masks[m]);
                memset(d.p, 0, d.bytes);
                CHECK(ccore_plane_orient(s.p, s.stride, s.w, s.h, d.p, d.stride, tag) == CCORE_OK);
                int bad = 0;
                for (int32_t y = 0; y < d.h && !bad; y++)
                    for (int32_t x = 0; x < d.w && !bad; x++)
                        bad = d.p[(size_t)y * d.stride + x] != reference_pixel(&s, tag, x, y);
                CHECK(!bad);
            }
        }
        ccore_cpu_set_mask(masks[n_masks - 1]);
        plane_free(&s);
        plane_free(&d);
    }
}

TEST(orientRejectsInvalidArguments) {
    uint8_t src[64], dst[64];
    memset(src, 1, sizeof src);
    CHECK(ccore_plane_orient(NULL, 8, 8, 8, dst, 8, 1) == CCORE_ERR_INVALID);
    CHECK(ccore_plane_orient(src, 8, 8, 8, NULL, 8, 1) == CCORE_ERR_INVALID);
    CHECK(ccore_plane_orient(src, 8, 8, 8, dst, 8, 0) == CCORE_ERR_INVALID);
    CHECK(ccore_plane_orient(src, 8, 8, 8, dst, 8, 9) == CCORE_ERR_INVALID);
    CHECK(ccore_plane_orient(src, 8, 0, 8, dst, 8, 1) == CCORE_ERR_INVALID);
    CHECK(ccore_plane_orient(src, 8, 8, -1, dst, 8, 1) == CCORE_ERR_INVALID);
    CHECK(ccore_plane_orient(src, 7, 8, 8, dst, 8, 1) == CCORE_ERR_INVALID);  // stride < width
    CHECK(ccore_plane_orient(src, 8, 8, 4, dst, 2, 6) == CCORE_ERR_INVALID);  // dst row is 4 wide
    CHECK(ccore_plane_orient(src, 8, 8, 4, src + 16, 8, 3) == CCORE_ERR_INVALID); // overlap
    CHECK(ccore_plane_orient(src, 8, 8, 4, dst, 4, 6) == CCORE_OK);
    CHECK(ccore_plane_orient(src, 8, 8, 8, dst, 8, 1) == CCORE_OK);

    check_rng r = {7};
    i420 s = i420_new(&r, 6, 4, 0), d = i420_new(&r, 4, 6, 0), same = i420_new(&r, 6, 4, 0);
    REQUIRE(i420_ok(&s) && i420_ok(&d) && i420_ok(&same));
    CHECK(ccore_i420_orient(NULL, &d.img, 6) == CCORE_ERR_INVALID);
    CHECK(ccore_i420_orient(&s.img, NULL, 6) == CCORE_ERR_INVALID);
    CHECK(ccore_i420_orient(&s.img, &d.img, 0) == CCORE_ERR_INVALID);
    CHECK(ccore_i420_orient(&s.img, &d.img, 9) == CCORE_ERR_INVALID);
    CHECK(ccore_i420_orient(&s.img, &d.img, 3) == CCORE_ERR_INVALID);    // 4x6 is not 6x4
    CHECK(ccore_i420_orient(&s.img, &same.img, 8) == CCORE_ERR_INVALID); // 6x4 is not 4x6
    CHECK(ccore_i420_orient(&s.img, &s.img, 3) == CCORE_ERR_INVALID);    // in place
    ccore_image nv12 = s.img;
    nv12.format = CCORE_PIXEL_NV12;
    CHECK(ccore_i420_orient(&nv12, &same.img, 1) == CCORE_ERR_INVALID);
    ccore_image no_plane = d.img;
    no_plane.plane[2] = NULL;
    CHECK(ccore_i420_orient(&s.img, &no_plane, 6) == CCORE_ERR_INVALID);
    CHECK(ccore_i420_orient(&s.img, &d.img, 6) == CCORE_OK);
    CHECK(ccore_i420_orient(&s.img, &same.img, 2) == CCORE_OK);
    i420_free(&s);
    i420_free(&d);
    i420_free(&same);
}
