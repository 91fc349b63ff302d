// AVX2 scaling kernels (x86-64), chosen at run time. Each produces exactly the bytes of its
// scalar reference in scale.c; columns that do not fill a whole vector go to that reference.
#include "scale.h"

#if CCORE_X86
#include <immintrin.h>

// Blends 32 pixels: widen to 16 bits, pmulhrsw the difference by the 15-bit fraction (the
// rounding the scalar kernel reproduces), add back, narrow. unpack and pack both work within
// 128-bit lanes, so the pixel order comes back unchanged.
CCORE_TARGET_AVX2 static inline void vlerp32(const uint8_t *r0, const uint8_t *r1, uint8_t *mid,
                                             __m256i f) {
    const __m256i zero = _mm256_setzero_si256();
    __m256i a = _mm256_loadu_si256((const __m256i *)r0);
    __m256i b = _mm256_loadu_si256((const __m256i *)r1);
    __m256i alo = _mm256_unpacklo_epi8(a, zero), ahi = _mm256_unpackhi_epi8(a, zero);
    __m256i blo = _mm256_unpacklo_epi8(b, zero), bhi = _mm256_unpackhi_epi8(b, zero);
    __m256i lo = _mm256_add_epi16(alo, _mm256_mulhrs_epi16(_mm256_sub_epi16(blo, alo), f));
    __m256i hi = _mm256_add_epi16(ahi, _mm256_mulhrs_epi16(_mm256_sub_epi16(bhi, ahi), f));
    _mm256_storeu_si256((__m256i *)mid, _mm256_packus_epi16(lo, hi));
}

// Vertical blend, 32 pixels per step; a ragged end is one more step over the last 32 pixels
// (rewriting a few with the same bytes), or the scalar kernel for rows under 32.
CCORE_TARGET_AVX2 void ccore_scale_vlerp_avx2(const uint8_t *r0, const uint8_t *r1,
                                              uint8_t *mid, int32_t n, int f15) {
    const __m256i f = _mm256_set1_epi16((int16_t)f15);
    if (n < 32) {
        ccore_scale_vlerp_c(r0, r1, mid, n, f15);
        return;
    }
    int32_t i = 0;
    for (; i + 32 <= n; i += 32) vlerp32(r0 + i, r1 + i, mid + i, f);
    if (i < n) vlerp32(r0 + n - 32, r1 + n - 32, mid + n - 32, f);
}

// Box sums, 32 pixels per step as four groups of eight widened to 32 bits.
CCORE_TARGET_AVX2 void ccore_scale_vacc_avx2(const uint8_t *src, uint32_t *acc, int32_t n,
                                             int first) {
    int32_t i = 0;
    for (; i + 32 <= n; i += 32) {
        for (int j = 0; j < 32; j += 8) {
            __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(src + i + j)));
            __m256i *a = (__m256i *)(acc + i + j);
            if (!first) v = _mm256_add_epi32(v, _mm256_loadu_si256(a));
            _mm256_storeu_si256(a, v);
        }
    }
    if (i < n) ccore_scale_vacc_c(src + i, acc + i, n - i, first);
}

// Horizontal bilinear, 16 outputs per group: each 128-bit lane loads the 16-byte window of its
// 8 outputs, pshufb gathers the (left, right) pairs, pmaddwd blends them with 14-bit weights.
CCORE_TARGET_AVX2 void ccore_scale_hgroups_avx2(const uint8_t *mid, const ccore_hgroup *groups,
                                                int32_t count, uint8_t *dst) {
    const __m256i zero = _mm256_setzero_si256();
    const __m256i round = _mm256_set1_epi32(1 << (CCORE_SCALE_HBITS - 1));
    for (int32_t g = 0; g < count; g++) {
        const ccore_hgroup *G = &groups[g];
        __m256i win = _mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(mid + G->base[0]))),
            _mm_loadu_si128((const __m128i *)(mid + G->base[1])), 1);
        __m256i pairs = _mm256_shuffle_epi8(win, _mm256_loadu_si256((const __m256i *)G->shuf));
        __m256i lo = _mm256_madd_epi16(_mm256_unpacklo_epi8(pairs, zero),
                                       _mm256_loadu_si256((const __m256i *)G->wlo));
        __m256i hi = _mm256_madd_epi16(_mm256_unpackhi_epi8(pairs, zero),
                                       _mm256_loadu_si256((const __m256i *)G->whi));
        lo = _mm256_srli_epi32(_mm256_add_epi32(lo, round), CCORE_SCALE_HBITS);
        hi = _mm256_srli_epi32(_mm256_add_epi32(hi, round), CCORE_SCALE_HBITS);
        __m256i w16 = _mm256_packs_epi32(lo, hi);       // lane: outputs 0-7 | 8-15
        __m256i b = _mm256_packus_epi16(w16, w16);      // qwords: 0-7, 0-7, 8-15, 8-15
        b = _mm256_permute4x64_epi64(b, 0x08);          // qwords 0 and 2 to the low half
        _mm_storeu_si128((__m128i *)(dst + g * CCORE_SCALE_GROUP), _mm256_castsi256_si128(b));
    }
}
#endif
