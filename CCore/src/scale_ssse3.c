// SSSE3 scaling kernels (x86-64 without AVX2, e.g. Atom and Celeron boards), chosen at run
// time. Same arithmetic and the same group layout as the AVX2 kernels, 128 bits at a time;
// each produces exactly the bytes of its scalar reference in scale.c.
#include "scale.h"

#if CCORE_X86
#include <tmmintrin.h>

// Blends 16 pixels exactly as ccore_scale_vlerp_c does (pmulhrsw rounding).
CCORE_TARGET_SSSE3 static inline void vlerp16(const uint8_t *r0, const uint8_t *r1, uint8_t *mid,
                                              __m128i f) {
    const __m128i zero = _mm_setzero_si128();
    __m128i a = _mm_loadu_si128((const __m128i *)r0);
    __m128i b = _mm_loadu_si128((const __m128i *)r1);
    __m128i alo = _mm_unpacklo_epi8(a, zero), ahi = _mm_unpackhi_epi8(a, zero);
    __m128i blo = _mm_unpacklo_epi8(b, zero), bhi = _mm_unpackhi_epi8(b, zero);
    __m128i lo = _mm_add_epi16(alo, _mm_mulhrs_epi16(_mm_sub_epi16(blo, alo), f));
    __m128i hi = _mm_add_epi16(ahi, _mm_mulhrs_epi16(_mm_sub_epi16(bhi, ahi), f));
    _mm_storeu_si128((__m128i *)mid, _mm_packus_epi16(lo, hi));
}

// Vertical blend, 16 pixels per step; a ragged end is one more step over the last 16 pixels.
CCORE_TARGET_SSSE3 void ccore_scale_vlerp_ssse3(const uint8_t *r0, const uint8_t *r1,
                                                uint8_t *mid, int32_t n, int f15) {
    const __m128i f = _mm_set1_epi16((int16_t)f15);
    if (n < 16) {
        ccore_scale_vlerp_c(r0, r1, mid, n, f15);
        return;
    }
    int32_t i = 0;
    for (; i + 16 <= n; i += 16) vlerp16(r0 + i, r1 + i, mid + i, f);
    if (i < n) vlerp16(r0 + n - 16, r1 + n - 16, mid + n - 16, f);
}

// Box sums, 16 pixels per step widened to 32 bits.
CCORE_TARGET_SSSE3 void ccore_scale_vacc_ssse3(const uint8_t *src, uint32_t *acc, int32_t n,
                                               int first) {
    const __m128i zero = _mm_setzero_si128();
    int32_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(src + i));
        __m128i lo = _mm_unpacklo_epi8(v, zero), hi = _mm_unpackhi_epi8(v, zero);
        __m128i w[4] = {_mm_unpacklo_epi16(lo, zero), _mm_unpackhi_epi16(lo, zero),
                        _mm_unpacklo_epi16(hi, zero), _mm_unpackhi_epi16(hi, zero)};
        for (int j = 0; j < 4; j++) {
            __m128i *a = (__m128i *)(acc + i + 4 * j);
            if (!first) w[j] = _mm_add_epi32(w[j], _mm_loadu_si128(a));
            _mm_storeu_si128(a, w[j]);
        }
    }
    if (i < n) ccore_scale_vacc_c(src + i, acc + i, n - i, first);
}

// Horizontal bilinear, 16 outputs per group as two halves of 8: load the half's 16-byte
// window, pshufb the (left, right) pairs, pmaddwd with the 14-bit weights.
CCORE_TARGET_SSSE3 void ccore_scale_hgroups_ssse3(const uint8_t *mid, const ccore_hgroup *groups,
                                                  int32_t count, uint8_t *dst) {
    const __m128i zero = _mm_setzero_si128();
    const __m128i round = _mm_set1_epi32(1 << (CCORE_SCALE_HBITS - 1));
    for (int32_t g = 0; g < count; g++) {
        const ccore_hgroup *G = &groups[g];
        __m128i half[2];
        for (int h = 0; h < 2; h++) {
            __m128i win = _mm_loadu_si128((const __m128i *)(mid + G->base[h]));
            __m128i shuf = _mm_loadu_si128((const __m128i *)(G->shuf + 16 * h));
            __m128i pairs = _mm_shuffle_epi8(win, shuf);
            __m128i lo = _mm_madd_epi16(_mm_unpacklo_epi8(pairs, zero),
                                        _mm_loadu_si128((const __m128i *)(G->wlo + 8 * h)));
            __m128i hi = _mm_madd_epi16(_mm_unpackhi_epi8(pairs, zero),
                                        _mm_loadu_si128((const __m128i *)(G->whi + 8 * h)));
            lo = _mm_srli_epi32(_mm_add_epi32(lo, round), CCORE_SCALE_HBITS);
            hi = _mm_srli_epi32(_mm_add_epi32(hi, round), CCORE_SCALE_HBITS);
            half[h] = _mm_packs_epi32(lo, hi); // outputs 8h .. 8h+7
        }
        _mm_storeu_si128((__m128i *)(dst + g * CCORE_SCALE_GROUP),
                         _mm_packus_epi16(half[0], half[1]));
    }
}
#endif
