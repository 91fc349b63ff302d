// NEON orientation kernels (AArch64, where NEON is baseline): the transpose in 16x16 and 8x16
// byte tiles and the row mirror, laid out like the SSE2 kernels (orient_sse2.c) so one proof
// covers both: each zip stage interleaves registers i and i+8 (i+4 for an 8-row tile) into
// 2i and 2i+1, which rotates the bits of a byte's (register | byte) address left by one;
// after four stages (three for 8 rows) register c holds column c.
#include "kernels.h"

#if CCORE_ARM64
#include <arm_neon.h>

#define STAGE16(r, t)                                                                         \
    do {                                                                                      \
        t##0 = vzip1q_u8(r##0, r##8); t##1 = vzip2q_u8(r##0, r##8);                           \
        t##2 = vzip1q_u8(r##1, r##9); t##3 = vzip2q_u8(r##1, r##9);                           \
        t##4 = vzip1q_u8(r##2, r##10); t##5 = vzip2q_u8(r##2, r##10);                         \
        t##6 = vzip1q_u8(r##3, r##11); t##7 = vzip2q_u8(r##3, r##11);                         \
        t##8 = vzip1q_u8(r##4, r##12); t##9 = vzip2q_u8(r##4, r##12);                         \
        t##10 = vzip1q_u8(r##5, r##13); t##11 = vzip2q_u8(r##5, r##13);                       \
        t##12 = vzip1q_u8(r##6, r##14); t##13 = vzip2q_u8(r##6, r##14);                       \
        t##14 = vzip1q_u8(r##7, r##15); t##15 = vzip2q_u8(r##7, r##15);                       \
    } while (0)

// Transposes the 16x16 bytes at s into d.
static inline void tile16x16(const uint8_t *s, ptrdiff_t ss, uint8_t *d, ptrdiff_t ds) {
    uint8x16_t a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15;
    uint8x16_t b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15;
#define LD(i) a##i = vld1q_u8(s + (i) * ss)
    LD(0); LD(1); LD(2); LD(3); LD(4); LD(5); LD(6); LD(7);
    LD(8); LD(9); LD(10); LD(11); LD(12); LD(13); LD(14); LD(15);
#undef LD
    STAGE16(a, b);
    STAGE16(b, a);
    STAGE16(a, b);
    STAGE16(b, a);
#define ST(i) vst1q_u8(d + (i) * ds, a##i)
    ST(0); ST(1); ST(2); ST(3); ST(4); ST(5); ST(6); ST(7);
    ST(8); ST(9); ST(10); ST(11); ST(12); ST(13); ST(14); ST(15);
#undef ST
}

#define STAGE8(r, t)                                                                          \
    do {                                                                                      \
        t##0 = vzip1q_u8(r##0, r##4); t##1 = vzip2q_u8(r##0, r##4);                           \
        t##2 = vzip1q_u8(r##1, r##5); t##3 = vzip2q_u8(r##1, r##5);                           \
        t##4 = vzip1q_u8(r##2, r##6); t##5 = vzip2q_u8(r##2, r##6);                           \
        t##6 = vzip1q_u8(r##3, r##7); t##7 = vzip2q_u8(r##3, r##7);                           \
    } while (0)

// Transposes 8 rows of 16 bytes at s into 16 rows of 8 bytes at d; register j ends up with
// column 2j in its low half and column 2j+1 in its high half.
static inline void tile8x16(const uint8_t *s, ptrdiff_t ss, uint8_t *d, ptrdiff_t ds) {
    uint8x16_t a0, a1, a2, a3, a4, a5, a6, a7, b0, b1, b2, b3, b4, b5, b6, b7;
#define LD(i) a##i = vld1q_u8(s + (i) * ss)
    LD(0); LD(1); LD(2); LD(3); LD(4); LD(5); LD(6); LD(7);
#undef LD
    STAGE8(a, b);
    STAGE8(b, a);
    STAGE8(a, b);
#define ST(i)                                                                                 \
    vst1_u8(d + (2 * i) * ds, vget_low_u8(b##i));                                             \
    vst1_u8(d + (2 * i + 1) * ds, vget_high_u8(b##i))
    ST(0); ST(1); ST(2); ST(3); ST(4); ST(5); ST(6); ST(7);
#undef ST
}

// Transpose in 16x16 tiles (8x16 for planes 8..15 rows tall); smaller planes go to scalar.
void ccore_transpose_neon(const uint8_t *src, ptrdiff_t src_stride, uint8_t *dst,
                          ptrdiff_t dst_stride, int32_t w, int32_t h) {
    if (w < 16 || h < 8) {
        ccore_transpose_c(src, src_stride, dst, dst_stride, w, h);
        return;
    }
    if (h < 16) {
        // Too short for a 16-row tile: two 8-row bands, the second overlapping the first.
        for (int32_t x = 0; x < w; x += 16) {
            int32_t xx = x + 16 <= w ? x : w - 16;
            tile8x16(src + xx, src_stride, dst + xx * dst_stride, dst_stride);
            tile8x16(src + (h - 8) * src_stride + xx, src_stride, dst + xx * dst_stride + (h - 8),
                     dst_stride);
        }
        return;
    }
    // 64-column strips top to bottom so source lines are used whole and the destination lines
    // being filled stay in L1; edge tiles move back to overlap their neighbours.
    for (int32_t x0 = 0; x0 < w; x0 += 64) {
        int32_t x1 = x0 + 64 < w ? x0 + 64 : w;
        for (int32_t y = 0; y < h; y += 16) {
            int32_t yy = y + 16 <= h ? y : h - 16;
            for (int32_t x = x0; x < x1; x += 16) {
                int32_t xx = x + 16 <= w ? x : w - 16;
                tile16x16(src + yy * src_stride + xx, src_stride, dst + xx * dst_stride + yy,
                          dst_stride);
            }
        }
    }
}

// Reverses 16 bytes: within each doubleword, then the two doublewords.
static inline uint8x16_t reverse16(uint8x16_t v) {
    v = vrev64q_u8(v);
    return vextq_u8(v, v, 8);
}

// Row mirror, 32 then 16 bytes at a time; shorter rows go to scalar.
void ccore_mirror_neon(const uint8_t *src, uint8_t *dst, int32_t w) {
    if (w < 16) {
        ccore_mirror_c(src, dst, w);
        return;
    }
    const uint8_t *end = src + w;
    int32_t x = 0;
    for (; x + 32 <= w; x += 32) {
        uint8x16_t hi = vld1q_u8(end - x - 16), lo = vld1q_u8(end - x - 32);
        vst1q_u8(dst + x, reverse16(hi));
        vst1q_u8(dst + x + 16, reverse16(lo));
    }
    if (x + 16 <= w) {
        vst1q_u8(dst + x, reverse16(vld1q_u8(end - x - 16)));
        x += 16;
    }
    if (x < w) // last block overlaps the previous one
        vst1q_u8(dst + w - 16, reverse16(vld1q_u8(src)));
}

#endif
