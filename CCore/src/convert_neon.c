// NEON conversion kernels (AArch64): NV12 chroma split and BGRA to I420 rows. The structure
// loads (vld2/vld4) de-interleave channels for free, and widening multiply-accumulate on
// unsigned bytes evaluates the formulas of convert.c directly: every intermediate of those
// formulas fits an unsigned 16-bit lane (and any wrap-around would cancel, as the final
// values lie in 0..65535), so no sign tricks are needed here.
#include "kernels.h"

#if CCORE_ARM64
#include <arm_neon.h>

// Chroma split, 32 then 16 pairs at a time; shorter rows go to scalar.
void ccore_split_uv_neon(const uint8_t *uv, uint8_t *u, uint8_t *v, int32_t w) {
    if (w < 16) {
        ccore_split_uv_c(uv, u, v, w);
        return;
    }
    size_t n = (size_t)w, x = 0;
    for (; x + 32 <= n; x += 32) {
        uint8x16x2_t a = vld2q_u8(uv + 2 * x), b = vld2q_u8(uv + 2 * x + 32);
        vst1q_u8(u + x, a.val[0]);
        vst1q_u8(v + x, a.val[1]);
        vst1q_u8(u + x + 16, b.val[0]);
        vst1q_u8(v + x + 16, b.val[1]);
    }
    if (x + 16 <= n) {
        uint8x16x2_t a = vld2q_u8(uv + 2 * x);
        vst1q_u8(u + x, a.val[0]);
        vst1q_u8(v + x, a.val[1]);
        x += 16;
    }
    if (x < n) { // last block overlaps the previous one
        uint8x16x2_t a = vld2q_u8(uv + 2 * (n - 16));
        vst1q_u8(u + n - 16, a.val[0]);
        vst1q_u8(v + n - 16, a.val[1]);
    }
}

// Weights of one range and the constant each sum starts from.
typedef struct {
    uint8x16_t yb, yg, yr;
    uint16x8_t y_start; // rounding is left to vrshrn; this is the +16 of limited range
    uint8x16_t ub, ug, ur, vb, vg, vr; // U = start + ub*B - ug*G - ur*R, V = start + vr*R - ...
} weights_neon;

// The weights of full (1) or limited (0) range.
static inline weights_neon weights_for(int full) {
    weights_neon k;
    k.yb = vdupq_n_u8(full ? 29 : 25);
    k.yg = vdupq_n_u8(full ? 150 : 129);
    k.yr = vdupq_n_u8(full ? 77 : 66);
    k.y_start = vdupq_n_u16(full ? 0 : 0x1000);
    k.ub = vdupq_n_u8(full ? 127 : 112);
    k.ug = vdupq_n_u8(full ? 84 : 74);
    k.ur = vdupq_n_u8(full ? 43 : 38);
    k.vr = vdupq_n_u8(full ? 127 : 112);
    k.vg = vdupq_n_u8(full ? 107 : 94);
    k.vb = vdupq_n_u8(full ? 20 : 18);
    return k;
}

// Luma of 16 pixels given as channel vectors.
static inline uint8x16_t luma16(uint8x16_t b, uint8x16_t g, uint8x16_t r, const weights_neon *k) {
    uint16x8_t lo = vmlal_u8(k->y_start, vget_low_u8(r), vget_low_u8(k->yr));
    lo = vmlal_u8(lo, vget_low_u8(g), vget_low_u8(k->yg));
    lo = vmlal_u8(lo, vget_low_u8(b), vget_low_u8(k->yb));
    uint16x8_t hi = vmlal_high_u8(k->y_start, r, k->yr);
    hi = vmlal_high_u8(hi, g, k->yg);
    hi = vmlal_high_u8(hi, b, k->yb);
    return vrshrn_high_n_u16(vrshrn_n_u16(lo, 8), hi, 8);
}

// start + p*P - m1*M1 - m2*M2, then >> 8, for 16 lanes (the chroma formulas).
static inline uint8x16_t chroma16(uint8x16_t p, uint8x16_t wp, uint8x16_t m1, uint8x16_t w1,
                                  uint8x16_t m2, uint8x16_t w2) {
    const uint16x8_t start = vdupq_n_u16(0x8080);
    uint16x8_t lo = vmlal_u8(start, vget_low_u8(p), vget_low_u8(wp));
    lo = vmlsl_u8(lo, vget_low_u8(m1), vget_low_u8(w1));
    lo = vmlsl_u8(lo, vget_low_u8(m2), vget_low_u8(w2));
    uint16x8_t hi = vmlal_high_u8(start, p, wp);
    hi = vmlsl_high_u8(hi, m1, w1);
    hi = vmlsl_high_u8(hi, m2, w2);
    return vshrn_high_n_u16(vshrn_n_u16(lo, 8), hi, 8);
}

// Rounding average of each pixel pair of 32 values (lo = 0..15, hi = 16..31), in order.
static inline uint8x16_t pair_average(uint8x16_t lo, uint8x16_t hi) {
    return vrhaddq_u8(vuzp1q_u8(lo, hi), vuzp2q_u8(lo, hi));
}

// Converts the 32 pixels at x of both rows (x even).
static inline void bgra_block32(const uint8_t *s0, const uint8_t *s1, uint8_t *y0, uint8_t *y1,
                                uint8_t *u, uint8_t *v, size_t x, const weights_neon *k) {
    const uint8_t *p = s0 + 4 * x, *q = s1 + 4 * x;
    uint8x16x4_t a0 = vld4q_u8(p), a1 = vld4q_u8(p + 64);
    uint8x16x4_t b0 = vld4q_u8(q), b1 = vld4q_u8(q + 64);
    vst1q_u8(y0 + x, luma16(a0.val[0], a0.val[1], a0.val[2], k));
    vst1q_u8(y0 + x + 16, luma16(a1.val[0], a1.val[1], a1.val[2], k));
    vst1q_u8(y1 + x, luma16(b0.val[0], b0.val[1], b0.val[2], k));
    vst1q_u8(y1 + x + 16, luma16(b1.val[0], b1.val[1], b1.val[2], k));
    // Rows first, then columns, exactly as the scalar kernel rounds.
    uint8x16_t cb = pair_average(vrhaddq_u8(a0.val[0], b0.val[0]), vrhaddq_u8(a1.val[0], b1.val[0]));
    uint8x16_t cg = pair_average(vrhaddq_u8(a0.val[1], b0.val[1]), vrhaddq_u8(a1.val[1], b1.val[1]));
    uint8x16_t cr = pair_average(vrhaddq_u8(a0.val[2], b0.val[2]), vrhaddq_u8(a1.val[2], b1.val[2]));
    vst1q_u8(u + x / 2, chroma16(cb, k->ub, cg, k->ug, cr, k->ur));
    vst1q_u8(v + x / 2, chroma16(cr, k->vr, cg, k->vg, cb, k->vb));
}

// Two BGRA rows, 32 pixels at a time; shorter rows go to scalar. Each block prefetches the
// same 128 bytes of the next pair's rows, as the AVX2 kernel does.
void ccore_bgra_rows_neon(const uint8_t *s0, const uint8_t *s1, const uint8_t *n0,
                          const uint8_t *n1, uint8_t *y0, uint8_t *y1, uint8_t *u, uint8_t *v,
                          int32_t w, int full) {
    if (w < 32) {
        ccore_bgra_rows_c(s0, s1, n0, n1, y0, y1, u, v, w, full);
        return;
    }
    if (!n0) { // the last pair: nothing ahead, the hints fall on the rows being read
        n0 = s0;
        n1 = s1;
    }
    const weights_neon k = weights_for(full);
    size_t even_w = (size_t)w & ~(size_t)1, x = 0;
    for (; x + 32 <= even_w; x += 32) {
        __builtin_prefetch(n0 + 4 * x);
        __builtin_prefetch(n0 + 4 * x + 64);
        __builtin_prefetch(n1 + 4 * x);
        __builtin_prefetch(n1 + 4 * x + 64);
        bgra_block32(s0, s1, y0, y1, u, v, x, &k);
    }
    // The last block moves back to overlap the previous one, staying on an even pixel so its
    // chroma samples line up; an odd last column is left to the scalar kernel.
    if (x < even_w) bgra_block32(s0, s1, y0, y1, u, v, even_w - 32, &k);
    if (w & 1)
        ccore_bgra_rows_c(s0 + 4 * (w - 1), s1 + 4 * (w - 1), NULL, NULL, y0 + w - 1,
                          y1 + w - 1, u + (w - 1) / 2, v + (w - 1) / 2, 1, full);
}

#endif
