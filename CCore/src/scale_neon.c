// NEON scaling kernels (AArch64), chosen at run time. Same arithmetic and group layout as the
// x86 kernels; each produces exactly the bytes of its scalar reference in scale.c.
#include "scale.h"

#if CCORE_ARM64
#include <arm_neon.h>

// Blends 16 pixels. vqrdmulh computes (2 d f + 2^15) >> 16 = (d f + 2^14) >> 15, the rounding
// of the scalar kernel (it saturates only for -32768 * -32768, which never occurs here).
static inline void vlerp16(const uint8_t *r0, const uint8_t *r1, uint8_t *mid, int16x8_t f) {
    uint8x16_t a = vld1q_u8(r0), b = vld1q_u8(r1);
    int16x8_t alo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(a)));
    int16x8_t ahi = vreinterpretq_s16_u16(vmovl_high_u8(a));
    int16x8_t blo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(b)));
    int16x8_t bhi = vreinterpretq_s16_u16(vmovl_high_u8(b));
    int16x8_t lo = vaddq_s16(alo, vqrdmulhq_s16(vsubq_s16(blo, alo), f));
    int16x8_t hi = vaddq_s16(ahi, vqrdmulhq_s16(vsubq_s16(bhi, ahi), f));
    vst1q_u8(mid, vcombine_u8(vqmovun_s16(lo), vqmovun_s16(hi)));
}

// Vertical blend, 16 pixels per step; a ragged end is one more step over the last 16 pixels.
void ccore_scale_vlerp_neon(const uint8_t *r0, const uint8_t *r1, uint8_t *mid, int32_t n,
                            int f15) {
    const int16x8_t f = vdupq_n_s16((int16_t)f15);
    if (n < 16) {
        ccore_scale_vlerp_c(r0, r1, mid, n, f15);
        return;
    }
    int32_t i = 0;
    for (; i + 16 <= n; i += 16) vlerp16(r0 + i, r1 + i, mid + i, f);
    if (i < n) vlerp16(r0 + n - 16, r1 + n - 16, mid + n - 16, f);
}

// Box sums, 16 pixels per step widened to 32 bits.
void ccore_scale_vacc_neon(const uint8_t *src, uint32_t *acc, int32_t n, int first) {
    int32_t i = 0;
    for (; i + 16 <= n; i += 16) {
        uint8x16_t v = vld1q_u8(src + i);
        uint16x8_t lo = vmovl_u8(vget_low_u8(v)), hi = vmovl_high_u8(v);
        uint32x4_t w[4] = {vmovl_u16(vget_low_u16(lo)), vmovl_high_u16(lo),
                           vmovl_u16(vget_low_u16(hi)), vmovl_high_u16(hi)};
        for (int j = 0; j < 4; j++) {
            if (!first) w[j] = vaddq_u32(w[j], vld1q_u32(acc + i + 4 * j));
            vst1q_u32(acc + i + 4 * j, w[j]);
        }
    }
    if (i < n) ccore_scale_vacc_c(src + i, acc + i, n - i, first);
}

// Four outputs from four (left, right) pairs and their weight pairs: widening multiply, then
// pairwise add of each output's two products.
static inline int32x4_t blend4(uint8x8_t pairs, int16x8_t w) {
    int16x8_t p = vreinterpretq_s16_u16(vmovl_u8(pairs));
    int32x4_t m0 = vmull_s16(vget_low_s16(p), vget_low_s16(w));
    int32x4_t m1 = vmull_high_s16(p, w);
    return vpaddq_s32(m0, m1);
}

// Horizontal bilinear, 16 outputs per group as two halves of 8: load the half's 16-byte
// window, tbl the (left, right) pairs, blend with the 14-bit weights, round, narrow.
void ccore_scale_hgroups_neon(const uint8_t *mid, const ccore_hgroup *groups, int32_t count,
                              uint8_t *dst) {
    for (int32_t g = 0; g < count; g++) {
        const ccore_hgroup *G = &groups[g];
        uint8x8_t half[2];
        for (int h = 0; h < 2; h++) {
            uint8x16_t pairs = vqtbl1q_u8(vld1q_u8(mid + G->base[h]), vld1q_u8(G->shuf + 16 * h));
            int32x4_t lo = blend4(vget_low_u8(pairs), vld1q_s16(G->wlo + 8 * h));
            int32x4_t hi = blend4(vget_high_u8(pairs), vld1q_s16(G->whi + 8 * h));
            lo = vrshrq_n_s32(lo, CCORE_SCALE_HBITS); // (x + 2^13) >> 14
            hi = vrshrq_n_s32(hi, CCORE_SCALE_HBITS);
            half[h] = vqmovun_s16(vcombine_s16(vqmovn_s32(lo), vqmovn_s32(hi)));
        }
        vst1q_u8(dst + g * CCORE_SCALE_GROUP, vcombine_u8(half[0], half[1]));
    }
}
#endif
