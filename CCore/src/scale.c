// Plane and I420 scaling: bilinear (pixel centres aligned) and box (area average), with the
// scalar reference kernels, the row-driven scaler that ccore_transform shares, and the public
// entry points. See scale.h for the sampling definition and the arithmetic.
//
// Invariants:
//  - no allocation: tables and the intermediate row live in a caller buffer (a fixed stack
//    buffer here, scratch in ccore_transform); a plane too wide for it is done in column
//    chunks, each a full pass over the rows it needs;
//  - an output pixel depends only on its own coordinates, never on how columns were chunked or
//    rows were stripped, so the scalar and SIMD paths, the chunked plane scaler and the fused
//    transform all produce identical bytes;
//  - only bytes inside the given source rectangle are read, only the destination rectangle is
//    written; SIMD windows that run past a row's end read the scaler's own slack, never the
//    caller's pixels.
#include <string.h>

#include "scale.h"

// Largest side any plane function accepts (as ccore_image_valid).
#define SCALE_MAX_SIDE 16384
// Stack bytes ccore_plane_scale plans a column chunk in: tables plus one intermediate row.
#define SCALE_STACK_BYTES 16384

// ---------------------------------------------------------------------------------------------
// Scalar reference kernels.

// Vertical bilinear blend of two rows; the rounding matches pmulhrsw (bias keeps the shift on
// a non-negative value, so no implementation-defined right shift of a negative number).
void ccore_scale_vlerp_c(const uint8_t *r0, const uint8_t *r1, uint8_t *mid, int32_t n, int f15) {
    for (int32_t i = 0; i < n; i++) {
        int32_t d = (int32_t)r1[i] - (int32_t)r0[i];
        mid[i] = (uint8_t)(r0[i] + (((d * f15 + (1 << 14)) + (256 << 15)) >> 15) - 256);
    }
}

// Adds a row of bytes into 32-bit box sums (or starts them).
void ccore_scale_vacc_c(const uint8_t *src, uint32_t *acc, int32_t n, int first) {
    if (first) {
        for (int32_t i = 0; i < n; i++) acc[i] = src[i];
    } else {
        for (int32_t i = 0; i < n; i++) acc[i] += src[i];
    }
}

// Widest kernels the feature mask allows; read once per public call so a mask change never
// switches kernels half-way through an image.
ccore_scale_kernels ccore_scale_pick_kernels(void) {
    ccore_scale_kernels k = {ccore_scale_vlerp_c, ccore_scale_vacc_c, NULL};
#if CCORE_X86
    uint32_t f = ccore_cpu_features();
    if (f & CCORE_CPU_SSSE3) {
        k.vlerp = ccore_scale_vlerp_ssse3;
        k.vacc = ccore_scale_vacc_ssse3;
        k.hgroups = ccore_scale_hgroups_ssse3;
    }
    if (f & CCORE_CPU_AVX2) {
        k.vlerp = ccore_scale_vlerp_avx2;
        k.vacc = ccore_scale_vacc_avx2;
        k.hgroups = ccore_scale_hgroups_avx2;
    }
#elif CCORE_ARM64
    if (ccore_cpu_has(CCORE_CPU_NEON)) {
        k.vlerp = ccore_scale_vlerp_neon;
        k.vacc = ccore_scale_vacc_neon;
        k.hgroups = ccore_scale_hgroups_neon;
    }
#endif
    return k;
}

// AUTO becomes box past a 2x shrink on either axis, bilinear otherwise.
ccore_scale_filter ccore_scale_resolve(int32_t sw, int32_t sh, int32_t dw, int32_t dh,
                                       ccore_scale_filter filter) {
    if (filter != CCORE_FILTER_AUTO) return filter;
    // More than 2x smaller on an axis: bilinear would skip source pixels and alias.
    return (sw > 2 * dw || sh > 2 * dh) ? CCORE_FILTER_BOX : CCORE_FILTER_BILINEAR;
}

// ---------------------------------------------------------------------------------------------
// Sampling positions.

// Bilinear source position of output sample x in 16.16: (x + 0.5) * s / d - 0.5, rounded to
// the nearest 1/65536 and clamped to [0, s-1]. Computed per sample, so no step error builds up.
static int64_t bilinear_pos16(int32_t s, int32_t d, int32_t x) {
    int64_t num = ((int64_t)(2 * x + 1) * s - d) * 65536;
    if (num <= 0) return 0;
    int64_t p = (num + d) / (2 * (int64_t)d);
    int64_t max = (int64_t)(s - 1) << 16;
    return p > max ? max : p;
}

// First source sample of box output x: floor(x * s / d).
static int32_t box_lo(int32_t s, int32_t d, int32_t x) { return (int32_t)((int64_t)x * s / d); }

// Horizontal bilinear tap of output x: left source column and the 14-bit weight of its right
// neighbour (0..2^14; 2^14 only when the position rounds up to the next column).
static void hbilinear_tap(int32_t sw, int32_t dw, int32_t x, int32_t *ix, uint16_t *f14) {
    int64_t p = bilinear_pos16(sw, dw, x);
    *ix = (int32_t)(p >> 16);
    *f14 = (uint16_t)(((p & 0xffff) + 2) >> 2);
}

// Vertical bilinear tap of output row y: top source row and 15-bit weight of the row below
// (0 means the top row alone).
static void vbilinear_tap(int32_t sh, int32_t dh, int32_t y, int32_t *iy, int *f15) {
    int64_t p = bilinear_pos16(sh, dh, y);
    *iy = (int32_t)(p >> 16);
    *f15 = (int)((p & 0xffff) >> 1);
}

// ---------------------------------------------------------------------------------------------
// Exact rounded division for box averages: round(sum / n) = floor((2 sum + n) / 2n), by a
// multiply when that is exact. With m = ceil(2^55 / 2n) the product is exact whenever
// (2 sum + n) * 2n <= 2^55, which holds for sum <= 255 n and n up to ~5.9 million pixels per
// box; larger boxes (only near 16384 -> 1) take a real division.

typedef struct box_div {
    uint64_t n; // divisor: pixels in the box
    uint64_t m; // multiplier, 0 = divide
} box_div;

static box_div box_div_make(uint64_t n) {
    box_div d = {n, 0};
    if (n <= 5000000u) d.m = ((1ull << 55) + 2 * n - 1) / (2 * n);
    return d;
}

static inline uint8_t box_div_apply(const box_div *d, uint64_t sum) {
    uint64_t num = 2 * sum + d->n;
    return (uint8_t)(d->m ? (num * d->m) >> 55 : num / (2 * d->n));
}

// ---------------------------------------------------------------------------------------------
// The row-driven scaler.

// Source columns output columns [xa, xb) read: the box range, or the taps plus the right
// neighbour of the last one.
void ccore_scaler_span(int32_t sw, int32_t dw, int hbox, int32_t xa, int32_t xb, int32_t *s0,
                       int32_t *s1) {
    if (hbox) {
        *s0 = box_lo(sw, dw, xa);
        *s1 = box_lo(sw, dw, xb);
        return;
    }
    int32_t ia, ib;
    uint16_t f;
    hbilinear_tap(sw, dw, xa, &ia, &f);
    hbilinear_tap(sw, dw, xb - 1, &ib, &f);
    *s0 = ia;
    *s1 = ib + 2 < sw ? ib + 2 : sw;
}

// Byte offsets of the scaler's tables inside its buffer.
typedef struct scaler_layout {
    size_t hix, hw, groups, mid, acc, total;
} scaler_layout;

static scaler_layout scaler_layout_of(int32_t cols, int32_t span, int box) {
    scaler_layout l;
    size_t groups = (size_t)cols / CCORE_SCALE_GROUP + 1; // + the overlapping tail group
    l.hix = 0;
    l.hw = l.hix + (size_t)cols * sizeof(int32_t);
    l.groups = ccore_align_up(l.hw + (size_t)cols * sizeof(uint16_t), CCORE_CACHE_LINE);
    l.mid = ccore_align_up(l.groups + groups * sizeof(ccore_hgroup), CCORE_CACHE_LINE);
    l.acc = ccore_align_up(l.mid + (size_t)span + CCORE_SCALE_MID_SLACK, CCORE_CACHE_LINE);
    l.total = l.acc + (box ? (size_t)span * sizeof(uint32_t) : 0);
    return l;
}

// Bytes of the layout above.
size_t ccore_scaler_bytes(int32_t cols, int32_t span, int box) {
    return scaler_layout_of(cols, span, box).total;
}

// Fills the SIMD gather layout for every whole group of 16 outputs; returns the number of
// groups, or 0 if some 8-output half needs more than a 16-byte window (downscales past 2x).
static int32_t build_groups(const int32_t *hix, const uint16_t *hw, int32_t cols,
                            ccore_hgroup *groups) {
    int32_t count = cols / CCORE_SCALE_GROUP;
    for (int32_t g = 0; g < count; g++) {
        ccore_hgroup *G = &groups[g];
        for (int half = 0; half < 2; half++) {
            int32_t first = g * CCORE_SCALE_GROUP + half * 8;
            int32_t base = hix[first];
            if (hix[first + 7] - base > 14) return 0;
            G->base[half] = base;
            for (int j = 0; j < 8; j++) {
                int32_t x = first + j;
                uint8_t o = (uint8_t)(hix[x] - base);
                G->shuf[half * 16 + 2 * j] = o;
                G->shuf[half * 16 + 2 * j + 1] = (uint8_t)(o + 1);
                int16_t *w = j < 4 ? &G->wlo[half * 8 + 2 * j] : &G->whi[half * 8 + 2 * (j - 4)];
                w[0] = (int16_t)((1 << CCORE_SCALE_HBITS) - hw[x]);
                w[1] = (int16_t)hw[x];
            }
        }
    }
    return count;
}

// Lays out the tables in mem and fills the per-column taps (and their SIMD groups).
void ccore_scaler_init(ccore_scaler *s, int32_t sw, int32_t sh, int32_t dw, int32_t dh,
                       ccore_scale_filter filter, int32_t xa, int32_t xb, void *mem,
                       const ccore_scale_kernels *k, ccore_scaler_out_fn out, void *out_ctx) {
    assert(filter == CCORE_FILTER_BILINEAR || filter == CCORE_FILTER_BOX);
    assert(0 <= xa && xa < xb && xb <= dw);
    int box = filter == CCORE_FILTER_BOX;
    *s = (ccore_scaler){.sw = sw, .sh = sh, .dw = dw, .dh = dh, .xa = xa, .xb = xb,
                        .hbox = box && sw > dw, .vbox = box && sh > dh, .k = *k,
                        .row_a = -1, .row_b = -1, .out = out, .out_ctx = out_ctx};
    ccore_scaler_span(sw, dw, s->hbox, xa, xb, &s->s0, &s->s1);
    int32_t cols = xb - xa, span = s->s1 - s->s0;
    int any_box = s->hbox || s->vbox;
    scaler_layout l = scaler_layout_of(cols, span, any_box);
    uint8_t *base = mem;
    s->hix = (int32_t *)(base + l.hix);
    s->hw = (uint16_t *)(base + l.hw);
    s->groups = (ccore_hgroup *)(base + l.groups);
    s->mid = base + l.mid;
    s->acc = any_box ? (uint32_t *)(base + l.acc) : NULL;
    for (int32_t i = 0; i < cols; i++) {
        int32_t x = xa + i;
        if (s->hbox) {
            int32_t lo = box_lo(sw, dw, x);
            s->hix[i] = lo - s->s0;
            s->hw[i] = (uint16_t)(box_lo(sw, dw, x + 1) - lo);
        } else {
            int32_t ix;
            hbilinear_tap(sw, dw, x, &ix, &s->hw[i]);
            s->hix[i] = ix - s->s0;
        }
    }
    s->ngroups = (!s->hbox && k->hgroups) ? build_groups(s->hix, s->hw, cols, s->groups) : 0;
    // Columns after the last whole group: one more group over the last 16 outputs, which
    // rewrites a few outputs with the same bytes instead of leaving them to the scalar loop.
    int32_t rest = cols - s->ngroups * CCORE_SCALE_GROUP;
    if (s->ngroups && rest > 0)
        s->tail_group = build_groups(s->hix + cols - CCORE_SCALE_GROUP,
                                     s->hw + cols - CCORE_SCALE_GROUP, CCORE_SCALE_GROUP,
                                     &s->groups[s->ngroups]) == 1;
}

// Pointer of row `row` if it is one of the two rows held, else NULL.
static const uint8_t *held_row(const ccore_scaler *s, int32_t row) {
    if (row == s->row_b) return s->ptr_b;
    if (row == s->row_a) return s->ptr_a;
    return NULL;
}

// Next source row: the box's next row, or whichever bilinear tap is not held yet.
int32_t ccore_scaler_need(const ccore_scaler *s) {
    if (s->y >= s->dh) return INT32_MAX;
    if (s->vbox) {
        int32_t lo = box_lo(s->sh, s->dh, s->y);
        return s->row_b >= lo ? s->row_b + 1 : lo;
    }
    int32_t iy;
    int f15;
    vbilinear_tap(s->sh, s->dh, s->y, &iy, &f15);
    if (!held_row(s, iy)) return iy;
    return iy + 1; // f15 > 0 here: a row whose taps are all held has been written already
}

// Horizontal bilinear pass of the intermediate row into one output row.
static void hlerp_row(const ccore_scaler *s, uint8_t *dst) {
    int32_t span = s->s1 - s->s0, cols = s->xb - s->xa, x = 0;
    uint8_t *mid = s->mid;
    mid[span] = mid[span - 1]; // the right tap of the last column (weight 0) stays defined
    if (s->ngroups) {
        s->k.hgroups(mid, s->groups, s->ngroups, dst);
        x = s->ngroups * CCORE_SCALE_GROUP;
        if (s->tail_group) {
            s->k.hgroups(mid, &s->groups[s->ngroups], 1, dst + cols - CCORE_SCALE_GROUP);
            x = cols;
        }
    }
    for (; x < cols; x++) {
        const uint8_t *m = mid + s->hix[x];
        uint32_t f = s->hw[x];
        dst[x] = (uint8_t)((m[0] * ((1u << CCORE_SCALE_HBITS) - f) + m[1] * f +
                            (1u << (CCORE_SCALE_HBITS - 1))) >> CCORE_SCALE_HBITS);
    }
}

// Horizontal box pass of the box sums (each over `rows` source rows) into one output row.
static void hbox_row(const ccore_scaler *s, uint32_t rows, uint8_t *dst) {
    int32_t cols = s->xb - s->xa;
    box_div d[2] = {{0, 0}, {0, 0}}; // box widths take at most two values: cache both
    for (int32_t x = 0; x < cols; x++) {
        const uint32_t *a = s->acc + s->hix[x];
        uint32_t n = s->hw[x];
        uint64_t sum = 0;
        for (uint32_t i = 0; i < n; i++) sum += a[i];
        uint64_t count = (uint64_t)n * rows;
        if (d[0].n != count) {
            if (d[1].n == count) {
                box_div t = d[0];
                d[0] = d[1];
                d[1] = t;
            } else {
                d[1] = d[0];
                d[0] = box_div_make(count);
            }
        }
        dst[x] = box_div_apply(&d[0], sum);
    }
}

// Writes output row s->y from the intermediate row (bilinear vertical pass done).
static void finish_from_mid(ccore_scaler *s) {
    uint8_t *dst = s->out(s->out_ctx, s->y);
    if (s->hbox) {
        s->k.vacc(s->mid, s->acc, s->s1 - s->s0, 1);
        hbox_row(s, 1, dst);
    } else {
        hlerp_row(s, dst);
    }
}

// Takes a row, then writes every output row whose taps are now all held (box: whose last row
// this is).
void ccore_scaler_feed(ccore_scaler *s, int32_t row, const uint8_t *p) {
    int32_t need = ccore_scaler_need(s);
    if (row < need) return;
    assert(row == need);
    s->row_a = s->row_b;
    s->ptr_a = s->ptr_b;
    s->row_b = row;
    s->ptr_b = p;
    int32_t span = s->s1 - s->s0;
    if (s->vbox) {
        int32_t lo = box_lo(s->sh, s->dh, s->y), hi = box_lo(s->sh, s->dh, s->y + 1);
        s->k.vacc(p + s->s0, s->acc, span, row == lo);
        if (row != hi - 1) return;
        uint32_t rows = (uint32_t)(hi - lo);
        if (s->hbox) {
            hbox_row(s, rows, s->out(s->out_ctx, s->y));
        } else {
            box_div d = box_div_make(rows);
            for (int32_t i = 0; i < span; i++) s->mid[i] = box_div_apply(&d, s->acc[i]);
            hlerp_row(s, s->out(s->out_ctx, s->y));
        }
        s->y++;
        return;
    }
    while (s->y < s->dh) {
        int32_t iy;
        int f15;
        vbilinear_tap(s->sh, s->dh, s->y, &iy, &f15);
        const uint8_t *p0 = held_row(s, iy), *p1 = NULL;
        if (!p0) break;
        if (f15) {
            p1 = held_row(s, iy + 1);
            if (!p1) break;
            s->k.vlerp(p0 + s->s0, p1 + s->s0, s->mid, span, f15);
        } else {
            memcpy(s->mid, p0 + s->s0, (size_t)span);
        }
        finish_from_mid(s);
        s->y++;
    }
}

// ---------------------------------------------------------------------------------------------
// Public entry points.

typedef struct plane_out {
    uint8_t *dst;
    ptrdiff_t stride;
} plane_out;

// Output rows of ccore_plane_scale go straight to the destination (already offset to the
// chunk's first column).
static uint8_t *plane_out_row(void *ctx, int32_t y) {
    plane_out *o = ctx;
    return o->dst + (ptrdiff_t)y * o->stride;
}

// Largest number of output columns from xa whose tables fit in `cap` bytes (0 if none).
static int32_t chunk_fit(int32_t sw, int32_t dw, int hbox, int box, int32_t xa, size_t cap) {
    int32_t lo = 0, hi = dw - xa;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo + 1) / 2, s0, s1;
        ccore_scaler_span(sw, dw, hbox, xa, xa + mid, &s0, &s1);
        if (ccore_scaler_bytes(mid, s1 - s0, box) <= cap)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

// Box averages computed straight from the source, one output pixel at a time: for horizontal
// boxes too wide for the stack tables (shrinking by thousands). Same arithmetic as the scaler.
static void scale_plane_direct(const uint8_t *src, ptrdiff_t ss, int32_t sw, int32_t sh,
                               uint8_t *dst, ptrdiff_t ds, int32_t dw, int32_t dh, int vbox) {
    for (int32_t y = 0; y < dh; y++) {
        int32_t r0, r1;
        int f15 = 0;
        if (vbox) {
            r0 = box_lo(sh, dh, y);
            r1 = box_lo(sh, dh, y + 1);
        } else {
            vbilinear_tap(sh, dh, y, &r0, &f15);
            r1 = r0 + 1;
        }
        for (int32_t x = 0; x < dw; x++) {
            int32_t c0 = box_lo(sw, dw, x), c1 = box_lo(sw, dw, x + 1);
            uint64_t sum = 0;
            for (int32_t c = c0; c < c1; c++) {
                if (vbox) {
                    for (int32_t r = r0; r < r1; r++) sum += src[(ptrdiff_t)r * ss + c];
                } else {
                    uint8_t a = src[(ptrdiff_t)r0 * ss + c], v = a;
                    const uint8_t *below = &src[(ptrdiff_t)(r0 + 1) * ss + c];
                    if (f15) ccore_scale_vlerp_c(&a, below, &v, 1, f15);
                    sum += v;
                }
            }
            box_div d = box_div_make((uint64_t)(c1 - c0) * (uint64_t)(vbox ? r1 - r0 : 1));
            dst[(ptrdiff_t)y * ds + x] = box_div_apply(&d, sum);
        }
    }
}

// Scales one plane whose arguments are checked and whose filter is resolved.
static void scale_plane(const ccore_scale_kernels *k, const uint8_t *src, ptrdiff_t ss,
                        int32_t sw, int32_t sh, uint8_t *dst, ptrdiff_t ds, int32_t dw,
                        int32_t dh, ccore_scale_filter filter) {
    if (sw == dw && sh == dh) {
        // Both filters sample every source pixel exactly at this size.
        for (int32_t y = 0; y < dh; y++)
            memcpy(dst + (ptrdiff_t)y * ds, src + (ptrdiff_t)y * ss, (size_t)dw);
        return;
    }
    _Alignas(CCORE_CACHE_LINE) uint8_t work[SCALE_STACK_BYTES];
    int box = filter == CCORE_FILTER_BOX;
    int hbox = box && sw > dw, vbox = box && sh > dh, any_box = hbox || vbox;
    int32_t most = chunk_fit(sw, dw, hbox, any_box, 0, sizeof work);
    if (most == 0) {
        scale_plane_direct(src, ss, sw, sh, dst, ds, dw, dh, vbox);
        return;
    }
    // Even chunks (a multiple of the SIMD group) rather than one full and one sliver.
    int32_t chunks = (dw + most - 1) / most;
    int32_t even = (dw + chunks - 1) / chunks;
    even = (even + CCORE_SCALE_GROUP - 1) / CCORE_SCALE_GROUP * CCORE_SCALE_GROUP;
    for (int32_t xa = 0; xa < dw;) {
        int32_t cols = dw - xa < even ? dw - xa : even;
        int32_t s0, s1;
        ccore_scaler_span(sw, dw, hbox, xa, xa + cols, &s0, &s1);
        if (ccore_scaler_bytes(cols, s1 - s0, any_box) > sizeof work)
            cols = chunk_fit(sw, dw, hbox, any_box, xa, sizeof work);
        if (cols == 0) { // cannot happen for a uniform ratio; stay correct regardless
            scale_plane_direct(src, ss, sw, sh, dst, ds, dw, dh, vbox);
            return;
        }
        plane_out o = {dst + xa, ds};
        ccore_scaler s;
        ccore_scaler_init(&s, sw, sh, dw, dh, filter, xa, xa + cols, work, k, plane_out_row, &o);
        for (int32_t row; (row = ccore_scaler_need(&s)) < sh;)
            ccore_scaler_feed(&s, row, src + (ptrdiff_t)row * ss);
        xa += cols;
    }
}

// Whether the byte ranges of two planes intersect.
static int planes_overlap(const uint8_t *a, int32_t as, int32_t aw, int32_t ah, const uint8_t *b,
                          int32_t bs, int32_t bw, int32_t bh) {
    uintptr_t a0 = (uintptr_t)a, a1 = a0 + (uintptr_t)as * (uintptr_t)(ah - 1) + (uintptr_t)aw;
    uintptr_t b0 = (uintptr_t)b, b1 = b0 + (uintptr_t)bs * (uintptr_t)(bh - 1) + (uintptr_t)bw;
    return a0 < b1 && b0 < a1;
}

// A plane side CCore accepts.
static int side_ok(int32_t v) { return v > 0 && v <= SCALE_MAX_SIDE; }

// One of the three filters.
static int filter_ok(ccore_scale_filter f) {
    return f == CCORE_FILTER_AUTO || f == CCORE_FILTER_BILINEAR || f == CCORE_FILTER_BOX;
}

// Checks the arguments, resolves AUTO on this plane's sizes and scales.
ccore_status ccore_plane_scale(const uint8_t *src, int32_t src_stride, int32_t src_w,
                               int32_t src_h, uint8_t *dst, int32_t dst_stride, int32_t dst_w,
                               int32_t dst_h, ccore_scale_filter filter) {
    if (!src || !dst || !side_ok(src_w) || !side_ok(src_h) || !side_ok(dst_w) ||
        !side_ok(dst_h) || src_stride < src_w || dst_stride < dst_w || !filter_ok(filter))
        return CCORE_ERR_INVALID;
    if (planes_overlap(src, src_stride, src_w, src_h, dst, dst_stride, dst_w, dst_h))
        return CCORE_ERR_INVALID;
    ccore_scale_kernels k = ccore_scale_pick_kernels();
    scale_plane(&k, src, src_stride, src_w, src_h, dst, dst_stride, dst_w, dst_h,
                ccore_scale_resolve(src_w, src_h, dst_w, dst_h, filter));
    return CCORE_OK;
}

// Checks both images and scales the three planes with one filter.
ccore_status ccore_i420_scale(const ccore_image *src, const ccore_image *dst,
                              ccore_scale_filter filter) {
    if (!ccore_image_valid(src) || !ccore_image_valid(dst) || !filter_ok(filter))
        return CCORE_ERR_INVALID;
    if (src->format != CCORE_PIXEL_I420 || dst->format != CCORE_PIXEL_I420)
        return CCORE_ERR_INVALID;
    int32_t sw[3] = {src->width, (src->width + 1) / 2, (src->width + 1) / 2};
    int32_t sh[3] = {src->height, (src->height + 1) / 2, (src->height + 1) / 2};
    int32_t dw[3] = {dst->width, (dst->width + 1) / 2, (dst->width + 1) / 2};
    int32_t dh[3] = {dst->height, (dst->height + 1) / 2, (dst->height + 1) / 2};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            if (planes_overlap(src->plane[a], src->stride[a], sw[a], sh[a], dst->plane[b],
                               dst->stride[b], dw[b], dh[b]))
                return CCORE_ERR_INVALID;
    // One filter for all planes, chosen on luma, so chroma never switches filter on its own
    // rounding of the sizes.
    ccore_scale_filter f = ccore_scale_resolve(sw[0], sh[0], dw[0], dh[0], filter);
    ccore_scale_kernels k = ccore_scale_pick_kernels();
    for (int p = 0; p < 3; p++)
        scale_plane(&k, src->plane[p], src->stride[p], sw[p], sh[p], dst->plane[p],
                    dst->stride[p], dw[p], dh[p], f);
    return CCORE_OK;
}
