// AVX2 orientation kernels (x86-64). Compiled with per-function target attributes so the rest
// of the library keeps the x86-64 baseline; orient.c only calls these after a run-time check.
//
// The transpose works on tiles of 16 rows x 32 columns: AVX2 byte interleaves stay inside each
// 128-bit lane, so the SSE2 stage (see orient_sse2.c) transposes the left and the right 16x16
// half at the same time, and each lane is stored as one 16-byte destination row. Against an
// 8-row transpose this halves the loads, shuffles and stores per byte.
#include "kernels.h"

#if CCORE_X86
#include <immintrin.h>

// One interleave stage over 16 registers, both 128-bit halves at once (see orient_sse2.c).
#define STAGE16(r, t)                                                                         \
    do {                                                                                      \
        t##0 = _mm256_unpacklo_epi8(r##0, r##8); t##1 = _mm256_unpackhi_epi8(r##0, r##8);     \
        t##2 = _mm256_unpacklo_epi8(r##1, r##9); t##3 = _mm256_unpackhi_epi8(r##1, r##9);     \
        t##4 = _mm256_unpacklo_epi8(r##2, r##10); t##5 = _mm256_unpackhi_epi8(r##2, r##10);   \
        t##6 = _mm256_unpacklo_epi8(r##3, r##11); t##7 = _mm256_unpackhi_epi8(r##3, r##11);   \
        t##8 = _mm256_unpacklo_epi8(r##4, r##12); t##9 = _mm256_unpackhi_epi8(r##4, r##12);   \
        t##10 = _mm256_unpacklo_epi8(r##5, r##13); t##11 = _mm256_unpackhi_epi8(r##5, r##13); \
        t##12 = _mm256_unpacklo_epi8(r##6, r##14); t##13 = _mm256_unpackhi_epi8(r##6, r##14); \
        t##14 = _mm256_unpacklo_epi8(r##7, r##15); t##15 = _mm256_unpackhi_epi8(r##7, r##15); \
    } while (0)

// Transposes the 16 rows x 32 bytes at s into 32 rows x 16 bytes at d.
CCORE_TARGET_AVX2 static inline void tile16x32(const uint8_t *s, ptrdiff_t ss, uint8_t *d,
                                               ptrdiff_t ds) {
    __m256i a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15;
    __m256i b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15;
#define LD(i) a##i = _mm256_loadu_si256((const __m256i *)(s + (i) * ss))
    LD(0); LD(1); LD(2); LD(3); LD(4); LD(5); LD(6); LD(7);
    LD(8); LD(9); LD(10); LD(11); LD(12); LD(13); LD(14); LD(15);
#undef LD
    STAGE16(a, b);
    STAGE16(b, a);
    STAGE16(a, b);
    STAGE16(b, a);
#define ST(i)                                                                                 \
    _mm_storeu_si128((__m128i *)(d + (i) * ds), _mm256_castsi256_si128(a##i));                \
    _mm_storeu_si128((__m128i *)(d + (i + 16) * ds), _mm256_extracti128_si256(a##i, 1))
    ST(0); ST(1); ST(2); ST(3); ST(4); ST(5); ST(6); ST(7);
    ST(8); ST(9); ST(10); ST(11); ST(12); ST(13); ST(14); ST(15);
#undef ST
}

// Transpose in 16x32 tiles; planes narrower than 32 or shorter than 16 go to the SSE2 kernel.
CCORE_TARGET_AVX2 void ccore_transpose_avx2(const uint8_t *src, ptrdiff_t src_stride,
                                            uint8_t *dst, ptrdiff_t dst_stride, int32_t w,
                                            int32_t h) {
    if (w < 32 || h < 16) {
        ccore_transpose_sse2(src, src_stride, dst, dst_stride, w, h);
        return;
    }
    // Same walk as the SSE2 kernel: 64-column strips top to bottom, so source lines are used
    // whole and the destination lines being filled stay in L1; edge tiles overlap inwards.
    for (int32_t x0 = 0; x0 < w; x0 += 64) {
        int32_t x1 = x0 + 64 < w ? x0 + 64 : w;
        for (int32_t y = 0; y < h; y += 16) {
            int32_t yy = y + 16 <= h ? y : h - 16;
            for (int32_t x = x0; x < x1; x += 32) {
                int32_t xx = x + 32 <= w ? x : w - 32;
                tile16x32(src + yy * src_stride + xx, src_stride, dst + xx * dst_stride + yy,
                          dst_stride);
            }
        }
    }
}

// Reverses the 32 bytes of v: bytes within each lane, then the two lanes.
CCORE_TARGET_AVX2 static inline __m256i reverse32(__m256i v, __m256i rev) {
    return _mm256_permute4x64_epi64(_mm256_shuffle_epi8(v, rev), _MM_SHUFFLE(1, 0, 3, 2));
}

// Row mirror, 64 then 32 bytes at a time; rows under 32 bytes go to the SSSE3 kernel.
CCORE_TARGET_AVX2 void ccore_mirror_avx2(const uint8_t *src, uint8_t *dst, int32_t w) {
    if (w < 32) {
        ccore_mirror_ssse3(src, dst, w);
        return;
    }
    const __m256i rev = _mm256_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0,
                                         15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const uint8_t *end = src + w;
    int32_t x = 0;
    for (; x + 64 <= w; x += 64) {
        __m256i hi = _mm256_loadu_si256((const __m256i *)(end - x - 32));
        __m256i lo = _mm256_loadu_si256((const __m256i *)(end - x - 64));
        _mm256_storeu_si256((__m256i *)(dst + x), reverse32(hi, rev));
        _mm256_storeu_si256((__m256i *)(dst + x + 32), reverse32(lo, rev));
    }
    if (x + 32 <= w) {
        _mm256_storeu_si256((__m256i *)(dst + x),
                            reverse32(_mm256_loadu_si256((const __m256i *)(end - x - 32)), rev));
        x += 32;
    }
    if (x < w) // last block overlaps the previous one
        _mm256_storeu_si256((__m256i *)(dst + w - 32),
                            reverse32(_mm256_loadu_si256((const __m256i *)src), rev));
}

#endif
