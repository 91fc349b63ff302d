// SSE2 and SSSE3 orientation kernels (x86-64): the transpose in 16x16 and 8x16 byte tiles, and
// the row mirror. SSE2 is part of x86-64, so only the SSSE3 function carries a target attribute.
//
// The transpose uses one stage four times: registers i and i+8 are interleaved byte-wise into
// registers 2i and 2i+1. Writing a byte's address as (register bits | byte bits), each stage
// rotates that bit string left by one, so after four stages register and byte bits have swapped
// places: register c holds column c. An 8-row tile needs three stages of the same idea.
#include "kernels.h"

#if CCORE_X86
#include <immintrin.h>

// One interleave stage over 16 registers (see the file comment).
#define STAGE16(r, t)                                                                         \
    do {                                                                                      \
        t##0 = _mm_unpacklo_epi8(r##0, r##8); t##1 = _mm_unpackhi_epi8(r##0, r##8);           \
        t##2 = _mm_unpacklo_epi8(r##1, r##9); t##3 = _mm_unpackhi_epi8(r##1, r##9);           \
        t##4 = _mm_unpacklo_epi8(r##2, r##10); t##5 = _mm_unpackhi_epi8(r##2, r##10);         \
        t##6 = _mm_unpacklo_epi8(r##3, r##11); t##7 = _mm_unpackhi_epi8(r##3, r##11);         \
        t##8 = _mm_unpacklo_epi8(r##4, r##12); t##9 = _mm_unpackhi_epi8(r##4, r##12);         \
        t##10 = _mm_unpacklo_epi8(r##5, r##13); t##11 = _mm_unpackhi_epi8(r##5, r##13);       \
        t##12 = _mm_unpacklo_epi8(r##6, r##14); t##13 = _mm_unpackhi_epi8(r##6, r##14);       \
        t##14 = _mm_unpacklo_epi8(r##7, r##15); t##15 = _mm_unpackhi_epi8(r##7, r##15);       \
    } while (0)

// Transposes the 16x16 bytes at s into d.
static inline void tile16x16(const uint8_t *s, ptrdiff_t ss, uint8_t *d, ptrdiff_t ds) {
    __m128i a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15;
    __m128i b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15;
#define LD(i) a##i = _mm_loadu_si128((const __m128i *)(s + (i) * ss))
    LD(0); LD(1); LD(2); LD(3); LD(4); LD(5); LD(6); LD(7);
    LD(8); LD(9); LD(10); LD(11); LD(12); LD(13); LD(14); LD(15);
#undef LD
    STAGE16(a, b);
    STAGE16(b, a);
    STAGE16(a, b);
    STAGE16(b, a);
#define ST(i) _mm_storeu_si128((__m128i *)(d + (i) * ds), a##i)
    ST(0); ST(1); ST(2); ST(3); ST(4); ST(5); ST(6); ST(7);
    ST(8); ST(9); ST(10); ST(11); ST(12); ST(13); ST(14); ST(15);
#undef ST
}

// One interleave stage over 8 registers.
#define STAGE8(r, t)                                                                          \
    do {                                                                                      \
        t##0 = _mm_unpacklo_epi8(r##0, r##4); t##1 = _mm_unpackhi_epi8(r##0, r##4);           \
        t##2 = _mm_unpacklo_epi8(r##1, r##5); t##3 = _mm_unpackhi_epi8(r##1, r##5);           \
        t##4 = _mm_unpacklo_epi8(r##2, r##6); t##5 = _mm_unpackhi_epi8(r##2, r##6);           \
        t##6 = _mm_unpacklo_epi8(r##3, r##7); t##7 = _mm_unpackhi_epi8(r##3, r##7);           \
    } while (0)

// Transposes 8 rows of 16 bytes at s into 16 rows of 8 bytes at d. After three stages register
// j holds column 2j in its low half and column 2j+1 in its high half.
static inline void tile8x16(const uint8_t *s, ptrdiff_t ss, uint8_t *d, ptrdiff_t ds) {
    __m128i a0, a1, a2, a3, a4, a5, a6, a7, b0, b1, b2, b3, b4, b5, b6, b7;
#define LD(i) a##i = _mm_loadu_si128((const __m128i *)(s + (i) * ss))
    LD(0); LD(1); LD(2); LD(3); LD(4); LD(5); LD(6); LD(7);
#undef LD
    STAGE8(a, b);
    STAGE8(b, a);
    STAGE8(a, b);
#define ST(i)                                                                                 \
    _mm_storel_epi64((__m128i *)(d + (2 * i) * ds), b##i);                                    \
    _mm_storel_epi64((__m128i *)(d + (2 * i + 1) * ds), _mm_unpackhi_epi64(b##i, b##i))
    ST(0); ST(1); ST(2); ST(3); ST(4); ST(5); ST(6); ST(7);
#undef ST
}

// Transpose in 16x16 tiles (8x16 for planes 8..15 rows tall); smaller planes go to scalar.
void ccore_transpose_sse2(const uint8_t *src, ptrdiff_t src_stride, uint8_t *dst,
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
    // Strips of 64 source columns, walked top to bottom: each source cache line is used whole
    // and the 64 destination rows being filled stay in L1 until their lines are complete. The
    // last tile of a strip or band moves back to overlap its neighbour instead of running off
    // the edge.
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

// Reverses the 16 bytes of v with SSE2 only: dwords, then words within dwords, then bytes.
static inline __m128i reverse16_sse2(__m128i v) {
    v = _mm_shuffle_epi32(v, _MM_SHUFFLE(0, 1, 2, 3));
    v = _mm_shufflelo_epi16(v, _MM_SHUFFLE(2, 3, 0, 1));
    v = _mm_shufflehi_epi16(v, _MM_SHUFFLE(2, 3, 0, 1));
    return _mm_or_si128(_mm_slli_epi16(v, 8), _mm_srli_epi16(v, 8));
}

// Row mirror with SSE2 shuffles only, 16 bytes at a time; shorter rows go to scalar.
void ccore_mirror_sse2(const uint8_t *src, uint8_t *dst, int32_t w) {
    if (w < 16) {
        ccore_mirror_c(src, dst, w);
        return;
    }
    int32_t x = 0;
    for (; x + 16 <= w; x += 16)
        _mm_storeu_si128((__m128i *)(dst + x),
                         reverse16_sse2(_mm_loadu_si128((const __m128i *)(src + w - 16 - x))));
    if (x < w) // last block overlaps the previous one
        _mm_storeu_si128((__m128i *)(dst + w - 16),
                         reverse16_sse2(_mm_loadu_si128((const __m128i *)src)));
}

// Row mirror with one pshufb per 16 bytes; shorter rows go to scalar.
CCORE_TARGET_SSSE3 void ccore_mirror_ssse3(const uint8_t *src, uint8_t *dst, int32_t w) {
    if (w < 16) {
        ccore_mirror_c(src, dst, w);
        return;
    }
    const __m128i rev = _mm_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    int32_t x = 0;
    for (; x + 16 <= w; x += 16)
        _mm_storeu_si128((__m128i *)(dst + x),
                         _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(src + w - 16 - x)), rev));
    if (x < w)
        _mm_storeu_si128((__m128i *)(dst + w - 16),
                         _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)src), rev));
}

#endif
