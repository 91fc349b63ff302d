// The fused pass from a captured frame to encoder input: convert + orient + scale, reading the
// source once and writing the destination once, through a few cache-sized buffers in scratch.
//
// The picture is scaled in the source's own orientation, to the destination size turned back
// (swapped for tags 5..8), and only then oriented. Orientation is a pure permutation of
// pixels, so scale-then-orient gives exactly the bytes of ccore_i420_scale followed by
// ccore_i420_orient; orienting first would change which axis is filtered first and how each
// row is rounded.
//
// Flow with scaling: three row-driven scalers (Y, U, V; see scale.h) each ask for the next
// source row they need. I420 rows come straight from the source. NV12 and BGRA rows are
// converted a row pair at a time (two luma rows and the chroma row they share, by the public
// converters on a two-row sub-image) into one of two pair slots and handed to all three
// scalers; rows no scaler needs are never converted. Two slots suffice: a scaler only ever
// needs the row before the one it asks for, and the pair asked for is the lowest any scaler
// still needs. Finished rows collect in a strip per plane (STRIP_ROWS luma rows); a full strip
// is written to its place in the destination by ccore_plane_orient. Tag 1 skips the strips.
//
// Without scaling: I420 is oriented straight into dst; NV12/BGRA are converted straight into
// dst for tag 1, else converted STRIP_ROWS rows at a time into a strip and oriented from it.
//
// Where a strip of stored rows [y0, y1) of a plane of stored height h lands: tags 1, 2 at dst
// rows y0..; tags 3, 4 at dst rows h-y1..; tags 5, 8 at dst columns y0..; tags 6, 7 at dst
// columns h-y1.. (tags 3, 4, 6 and 7 reverse the stored row order).
#include <string.h>

#include "scale.h"

// Luma rows per strip (chroma strips are half). 32 keeps a 1920-wide strip set near 90 KiB,
// inside L2, and gives the transposing tags 32-byte runs per destination row.
#define STRIP_ROWS 32

// Scratch is aligned internally; this much of it may go to the alignment.
#define SCRATCH_SLACK CCORE_CACHE_LINE

// Chroma samples for v luma samples.
static int32_t chroma(int32_t v) { return (v + 1) / 2; }

// Stride of a scratch row of w bytes: whole cache lines.
static size_t row_stride(int32_t w) { return ccore_align_up((size_t)w, CCORE_CACHE_LINE); }

// Source and output geometry of one call, shared by the size query and the pass.
typedef struct geometry {
    int32_t sw, sh;       // source
    int32_t ow, oh;       // scaled picture in source orientation
    int scale;            // sizes differ
} geometry;

// A format the transform reads.
static int format_ok(ccore_pixel_format f) { return ccore_pixel_format_planes(f) > 0; }

// A side CCore accepts.
static int side_ok(int32_t v) { return v > 0 && v <= 16384; }

// Fills g from the images' formats and sizes only (planes are not looked at, so the size query
// works on descriptions). Returns 0 if they cannot be transformed.
static int geometry_of(const ccore_image *src, const ccore_image *dst, int orientation,
                       geometry *g) {
    if (!src || !dst || !format_ok(src->format) || dst->format != CCORE_PIXEL_I420) return 0;
    if (!side_ok(src->width) || !side_ok(src->height) || !side_ok(dst->width) ||
        !side_ok(dst->height))
        return 0;
    int swaps = ccore_orientation_swaps_axes(orientation);
    if (swaps < 0) return 0;
    g->sw = src->width;
    g->sh = src->height;
    g->ow = swaps ? dst->height : dst->width;
    g->oh = swaps ? dst->width : dst->height;
    g->scale = g->sw != g->ow || g->sh != g->oh;
    return 1;
}

// Scratch carved into its parts.
typedef struct scratch_layout {
    size_t scaler[3]; // Y, U, V scaler tables and intermediate rows
    size_t slots;     // two converted row pairs
    size_t strips;    // Y, U, V strips
    size_t total;
} scratch_layout;

// Bytes of one converted row pair (or strip of `rows` rows): luma then the two chroma planes.
static size_t i420_rows_bytes(int32_t w, int32_t rows) {
    return row_stride(w) * (size_t)rows + 2 * row_stride(chroma(w)) * (size_t)chroma(rows);
}

// Every part is reserved whatever the filter, format or tag, so the size depends only on the
// two widths and grows with each: a buffer sized for the largest frames fits every smaller one.
static scratch_layout scratch_layout_of(const geometry *g) {
    scratch_layout l;
    size_t at = 0;
    int32_t cols[3] = {g->ow, chroma(g->ow), chroma(g->ow)};
    int32_t span[3] = {g->sw, chroma(g->sw), chroma(g->sw)};
    for (int p = 0; p < 3; p++) {
        l.scaler[p] = at;
        at += ccore_align_up(ccore_scaler_bytes(cols[p], span[p], 1), CCORE_CACHE_LINE);
    }
    l.slots = at;
    at += 2 * i420_rows_bytes(g->sw, 2);
    l.strips = at;
    int32_t strip_w = g->ow > g->sw ? g->ow : g->sw; // the no-scale path strips source rows
    at += i420_rows_bytes(strip_w, STRIP_ROWS);
    l.total = at + SCRATCH_SLACK;
    return l;
}

// The layout's total for these sizes, or 0 if the arguments cannot be transformed.
size_t ccore_transform_scratch_size(const ccore_image *src, const ccore_image *dst,
                                    int orientation) {
    geometry g;
    if (!geometry_of(src, dst, orientation, &g)) return 0;
    return scratch_layout_of(&g).total;
}

// ---------------------------------------------------------------------------------------------
// Strips: where finished rows of one plane collect before being oriented into dst.

typedef struct strip_plane {
    uint8_t *buf;        // NULL: rows go straight to dst (tag 1)
    int32_t stride;      // of buf
    int32_t width;       // plane width in source orientation
    int32_t height;      // plane height in source orientation
    int32_t rows;        // rows per strip
    int32_t y0;          // first row held in buf
    uint8_t *dst;
    int32_t dst_stride;
    int orientation;
    ccore_status status; // first failure of a flush
} strip_plane;

// Orients stored rows [sp->y0, y1) from buf into their place in dst.
static void strip_flush(strip_plane *sp, int32_t y1) {
    int32_t y0 = sp->y0, n = y1 - y0;
    if (!sp->buf || n <= 0) return;
    uint8_t *d = sp->dst;
    switch (sp->orientation) {
    case 1:
    case 2: d += (ptrdiff_t)y0 * sp->dst_stride; break;
    case 3:
    case 4: d += (ptrdiff_t)(sp->height - y1) * sp->dst_stride; break;
    case 5:
    case 8: d += y0; break;
    default: d += sp->height - y1; break; // 6, 7
    }
    ccore_status st = ccore_plane_orient(sp->buf, sp->stride, sp->width, n, d, sp->dst_stride,
                                         sp->orientation);
    if (st != CCORE_OK && sp->status == CCORE_OK) sp->status = st;
}

// Scaler output callback: the buffer row for output row y, flushing the strip when y starts
// the next one (rows arrive in order).
static uint8_t *strip_row(void *ctx, int32_t y) {
    strip_plane *sp = ctx;
    if (!sp->buf) return sp->dst + (ptrdiff_t)y * sp->dst_stride;
    if (y >= sp->y0 + sp->rows) {
        strip_flush(sp, sp->y0 + sp->rows);
        sp->y0 += sp->rows;
    }
    return sp->buf + (ptrdiff_t)(y - sp->y0) * sp->stride;
}

// Sets up the three strips (width x height: the plane in source orientation) over buf, or
// straight to dst when buf is NULL.
static void strips_init(strip_plane sp[3], uint8_t *buf, int32_t width, int32_t height,
                        const ccore_image *dst, int orientation) {
    int32_t w[3] = {width, chroma(width), chroma(width)};
    int32_t h[3] = {height, chroma(height), chroma(height)};
    int32_t rows[3] = {STRIP_ROWS, STRIP_ROWS / 2, STRIP_ROWS / 2};
    for (int p = 0; p < 3; p++) {
        sp[p] = (strip_plane){.buf = buf, .stride = (int32_t)row_stride(w[p]), .width = w[p],
                              .height = h[p], .rows = rows[p], .dst = dst->plane[p],
                              .dst_stride = dst->stride[p], .orientation = orientation};
        if (buf) buf += row_stride(w[p]) * (size_t)rows[p];
    }
}

// ---------------------------------------------------------------------------------------------
// Conversion of source rows.

// Converts source rows [y, y + n) (y even) into the I420 rows at yd, ud, vd, with
// the public converters so the bytes equal a whole-frame conversion's.
static ccore_status convert_rows(const ccore_image *src, int32_t y, int32_t n, uint8_t *yd,
                                 int32_t ys, uint8_t *ud, uint8_t *vd, int32_t cs,
                                 ccore_color_range range) {
    ccore_image s = *src;
    s.height = n;
    s.plane[0] += (ptrdiff_t)y * src->stride[0];
    if (src->format == CCORE_PIXEL_NV12) s.plane[1] += (ptrdiff_t)(y / 2) * src->stride[1];
    ccore_image d = {CCORE_PIXEL_I420, src->width, n, {yd, ud, vd}, {ys, cs, cs}};
    if (src->format == CCORE_PIXEL_NV12) return ccore_nv12_to_i420(&s, &d);
    return ccore_bgra_to_i420(&s, &d, range);
}

// One converted row pair.
typedef struct pair_slot {
    uint8_t *y, *u, *v;
} pair_slot;

// ---------------------------------------------------------------------------------------------
// The passes.

// No scaling, NV12/BGRA, any tag but 1: convert STRIP_ROWS rows at a time, orient each strip.
static ccore_status convert_orient(const ccore_image *src, const ccore_image *dst,
                                   int orientation, ccore_color_range range, uint8_t *strip) {
    strip_plane sp[3];
    strips_init(sp, strip, src->width, src->height, dst, orientation);
    for (int32_t y = 0; y < src->height; y += STRIP_ROWS) {
        int32_t n = src->height - y < STRIP_ROWS ? src->height - y : STRIP_ROWS;
        ccore_status st = convert_rows(src, y, n, sp[0].buf, sp[0].stride, sp[1].buf, sp[2].buf,
                                       sp[1].stride, range);
        if (st != CCORE_OK) return st;
        for (int p = 0; p < 3; p++) {
            sp[p].y0 = p ? y / 2 : y;
            strip_flush(&sp[p], p ? chroma(y + n) : y + n);
            if (sp[p].status != CCORE_OK) return sp[p].status;
        }
    }
    return CCORE_OK;
}

// With scaling: three scalers fed from the source or from converted pairs, strips oriented out.
static ccore_status scale_orient(const ccore_image *src, const ccore_image *dst,
                                 int orientation, ccore_scale_filter filter,
                                 ccore_color_range range, const geometry *g, uint8_t *base,
                                 const scratch_layout *l) {
    strip_plane sp[3];
    strips_init(sp, orientation == 1 ? NULL : base + l->strips, g->ow, g->oh, dst, orientation);
    int32_t sw[3] = {g->sw, chroma(g->sw), chroma(g->sw)};
    int32_t sh[3] = {g->sh, chroma(g->sh), chroma(g->sh)};
    ccore_scale_filter f = ccore_scale_resolve(g->sw, g->sh, g->ow, g->oh, filter);
    ccore_scale_kernels k = ccore_scale_pick_kernels();
    ccore_scaler s[3];
    for (int p = 0; p < 3; p++)
        ccore_scaler_init(&s[p], sw[p], sh[p], sp[p].width, sp[p].height, f, 0, sp[p].width,
                          base + l->scaler[p], &k, strip_row, &sp[p]);

    if (src->format == CCORE_PIXEL_I420) {
        for (int p = 0; p < 3; p++)
            for (int32_t row; (row = ccore_scaler_need(&s[p])) < sh[p];)
                ccore_scaler_feed(&s[p], row, src->plane[p] + (ptrdiff_t)row * src->stride[p]);
    } else {
        int32_t ys = (int32_t)row_stride(g->sw), cs = (int32_t)row_stride(chroma(g->sw));
        pair_slot slot[2];
        uint8_t *at = base + l->slots;
        for (int i = 0; i < 2; i++) {
            slot[i].y = at;
            slot[i].u = at + 2 * (size_t)ys;
            slot[i].v = slot[i].u + cs;
            at += i420_rows_bytes(g->sw, 2);
        }
        for (;;) {
            int32_t need_y = ccore_scaler_need(&s[0]);
            int32_t pair = need_y == INT32_MAX ? INT32_MAX : need_y / 2;
            for (int p = 1; p < 3; p++) {
                int32_t c = ccore_scaler_need(&s[p]);
                if (c < pair) pair = c;
            }
            if (pair == INT32_MAX) break;
            pair_slot *ps = &slot[pair & 1];
            int32_t y = 2 * pair, n = g->sh - y < 2 ? 1 : 2;
            ccore_status st = convert_rows(src, y, n, ps->y, ys, ps->u, ps->v, cs, range);
            if (st != CCORE_OK) return st;
            ccore_scaler_feed(&s[0], y, ps->y);
            if (n == 2) ccore_scaler_feed(&s[0], y + 1, ps->y + ys);
            ccore_scaler_feed(&s[1], pair, ps->u);
            ccore_scaler_feed(&s[2], pair, ps->v);
        }
    }
    for (int p = 0; p < 3; p++) {
        strip_flush(&sp[p], sp[p].height);
        if (sp[p].status != CCORE_OK) return sp[p].status;
    }
    return CCORE_OK;
}

// Byte range [*lo, *hi) of plane p of an image.
static void plane_range(const ccore_image *m, int p, uintptr_t *lo, uintptr_t *hi) {
    int32_t rows = p ? chroma(m->height) : m->height;
    size_t row = (size_t)(p ? chroma(m->width) : m->width);
    if (m->format == CCORE_PIXEL_BGRA || m->format == CCORE_PIXEL_BGRX) row = 4 * (size_t)m->width;
    if (m->format == CCORE_PIXEL_NV12 && p == 1) row *= 2;
    *lo = (uintptr_t)m->plane[p];
    *hi = *lo + (uintptr_t)m->stride[p] * (uintptr_t)(rows - 1) + row;
}

// Whether any plane of a intersects any plane of b.
static int images_overlap(const ccore_image *a, const ccore_image *b) {
    int pa = ccore_pixel_format_planes(a->format), pb = ccore_pixel_format_planes(b->format);
    for (int i = 0; i < pa; i++)
        for (int j = 0; j < pb; j++) {
            uintptr_t a0, a1, b0, b1;
            plane_range(a, i, &a0, &a1);
            plane_range(b, j, &b0, &b1);
            if (a0 < b1 && b0 < a1) return 1;
        }
    return 0;
}

// Checks everything, then takes the cheapest path that produces the fused result.
ccore_status ccore_transform(const ccore_image *src, const ccore_image *dst, int orientation,
                             ccore_scale_filter filter, ccore_color_range range, void *scratch,
                             size_t scratch_len) {
    geometry g;
    if (!ccore_image_valid(src) || !ccore_image_valid(dst) ||
        !geometry_of(src, dst, orientation, &g))
        return CCORE_ERR_INVALID;
    if (filter != CCORE_FILTER_AUTO && filter != CCORE_FILTER_BILINEAR &&
        filter != CCORE_FILTER_BOX)
        return CCORE_ERR_INVALID;
    if (range != CCORE_RANGE_LIMITED && range != CCORE_RANGE_FULL) return CCORE_ERR_INVALID;
    if (images_overlap(src, dst)) return CCORE_ERR_INVALID;
    scratch_layout l = scratch_layout_of(&g);
    if (!scratch || scratch_len < l.total) return CCORE_ERR_TOO_SMALL;
    uint8_t *base = (uint8_t *)ccore_align_up((uintptr_t)scratch, CCORE_CACHE_LINE);

    if (!g.scale) {
        if (src->format == CCORE_PIXEL_I420) return ccore_i420_orient(src, dst, orientation);
        if (orientation == 1) {
            if (src->format == CCORE_PIXEL_NV12) return ccore_nv12_to_i420(src, dst);
            return ccore_bgra_to_i420(src, dst, range);
        }
        return convert_orient(src, dst, orientation, range, base + l.strips);
    }
    return scale_orient(src, dst, orientation, filter, range, &g, base, &l);
}
