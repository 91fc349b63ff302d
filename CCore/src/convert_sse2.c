// SSE2 and SSSE3 conversion kernels (x86-64): NV12 chroma split (SSE2) and BGRA to I420 rows
// (SSSE3, which brings the pmaddubsw multiply-add the colour weights need).
//
// Fixed-point tricks shared with the AVX2 kernels (formulas in convert.c):
//  - pmaddubsw multiplies unsigned bytes by signed bytes. The luma weights 129 and 150 do not fit
//    a signed byte, so for luma the weights are the unsigned operand and the pixels, shifted to
//    signed by flipping their top bit, the signed one: the sum is then Y*256 minus 128 times the
//    weight total, which the bias constant adds back (mod 2^16) before the final shift.
//  - The chroma weights fit signed bytes, so there the averaged pixels are the unsigned operand.
//  - (x + 0x8080) >> 8 is computed as floor((x + 0x80) / 256) + 128 so x stays a signed 16-bit
//    value; the rounding shift is one pmulhrsw by 128, the + 128 a byte add after packing (for
//    luma the 128 * weight-total removed by the flip is added back the same way).
#include "kernels.h"

#if CCORE_X86
#include <immintrin.h>

// De-interleaves 16 U,V pairs.
static inline void split16(const uint8_t *uv, uint8_t *u, uint8_t *v) {
    const __m128i low = _mm_set1_epi16(0x00ff);
    __m128i a = _mm_loadu_si128((const __m128i *)uv);
    __m128i b = _mm_loadu_si128((const __m128i *)(uv + 16));
    _mm_storeu_si128((__m128i *)u, _mm_packus_epi16(_mm_and_si128(a, low), _mm_and_si128(b, low)));
    _mm_storeu_si128((__m128i *)v, _mm_packus_epi16(_mm_srli_epi16(a, 8), _mm_srli_epi16(b, 8)));
}

// Chroma split, 16 pairs at a time; shorter rows go to scalar.
void ccore_split_uv_sse2(const uint8_t *uv, uint8_t *u, uint8_t *v, int32_t w) {
    if (w < 16) {
        ccore_split_uv_c(uv, u, v, w);
        return;
    }
    size_t n = (size_t)w, x = 0;
    for (; x + 16 <= n; x += 16) split16(uv + 2 * x, u + x, v + x);
    if (x < n) split16(uv + 2 * (n - 16), u + n - 16, v + n - 16); // overlaps the previous block
}

// Weights of one range, per B,G,R,A byte for pmaddubsw, and what to add after rounding.
typedef struct {
    __m128i y_weights, y_offset, u_weights, v_weights;
} weights128;

// The weights of full (1) or limited (0) range.
static inline weights128 weights_for(int full) {
    weights128 k;
    if (full) {
        k.y_weights = _mm_set1_epi32(0x004d961d);      // 29, 150, 77, 0
        k.y_offset = _mm_set1_epi8((char)128);         // 128*256 taken out by the flip
        k.u_weights = _mm_set1_epi32((int)0x00d5ac7f); // 127, -84, -43, 0
        k.v_weights = _mm_set1_epi32((int)0x007f95ec); // -20, -107, 127, 0
    } else {
        k.y_weights = _mm_set1_epi32(0x00428119);      // 25, 129, 66, 0
        k.y_offset = _mm_set1_epi8(126);               // (128*220 + 16*256) / 256, rounded down
        k.u_weights = _mm_set1_epi32((int)0x00dab670); // 112, -74, -38, 0
        k.v_weights = _mm_set1_epi32((int)0x0070a2ee); // -18, -94, 112, 0
    }
    return k;
}

// floor((s + 128) / 256) for signed words in one multiply: pmulhrsw by 128 is the rounding
// shift by 8 that would otherwise take an add and a shift.
CCORE_TARGET_SSSE3 static inline __m128i round_shift8(__m128i s) {
    return _mm_mulhrs_epi16(s, _mm_set1_epi16(128));
}

// Luma of 16 pixels held in four registers, as 16 bytes in pixel order.
CCORE_TARGET_SSSE3 static inline __m128i luma16(__m128i p0, __m128i p1, __m128i p2, __m128i p3,
                                               const weights128 *k) {
    const __m128i flip = _mm_set1_epi8((char)0x80);
    __m128i a = _mm_hadd_epi16(_mm_maddubs_epi16(k->y_weights, _mm_xor_si128(p0, flip)),
                               _mm_maddubs_epi16(k->y_weights, _mm_xor_si128(p1, flip)));
    __m128i b = _mm_hadd_epi16(_mm_maddubs_epi16(k->y_weights, _mm_xor_si128(p2, flip)),
                               _mm_maddubs_epi16(k->y_weights, _mm_xor_si128(p3, flip)));
    return _mm_add_epi8(_mm_packs_epi16(round_shift8(a), round_shift8(b)), k->y_offset);
}

// Averages pixel pairs (0,1), (2,3), ... of eight pixels in two registers into four.
static inline __m128i pair_average(__m128i a, __m128i b) {
    __m128 fa = _mm_castsi128_ps(a), fb = _mm_castsi128_ps(b);
    __m128i even = _mm_castps_si128(_mm_shuffle_ps(fa, fb, _MM_SHUFFLE(2, 0, 2, 0)));
    __m128i odd = _mm_castps_si128(_mm_shuffle_ps(fa, fb, _MM_SHUFFLE(3, 1, 3, 1)));
    return _mm_avg_epu8(even, odd);
}

// Weighted chroma of eight averaged pixels (q0 = 0..3, q1 = 4..7) as words in -128..127.
CCORE_TARGET_SSSE3 static inline __m128i chroma8(__m128i q0, __m128i q1, __m128i weights) {
    return round_shift8(_mm_hadd_epi16(_mm_maddubs_epi16(q0, weights), _mm_maddubs_epi16(q1, weights)));
}

// Converts the 16 pixels at x of both rows (x even).
CCORE_TARGET_SSSE3 static inline void bgra_block16(const uint8_t *s0, const uint8_t *s1,
                                                   uint8_t *y0, uint8_t *y1, uint8_t *u,
                                                   uint8_t *v, size_t x, const weights128 *k) {
    const __m128i flip = _mm_set1_epi8((char)0x80);
    const uint8_t *p = s0 + 4 * x, *q = s1 + 4 * x;
    __m128i a0 = _mm_loadu_si128((const __m128i *)p);
    __m128i a1 = _mm_loadu_si128((const __m128i *)(p + 16));
    __m128i a2 = _mm_loadu_si128((const __m128i *)(p + 32));
    __m128i a3 = _mm_loadu_si128((const __m128i *)(p + 48));
    __m128i b0 = _mm_loadu_si128((const __m128i *)q);
    __m128i b1 = _mm_loadu_si128((const __m128i *)(q + 16));
    __m128i b2 = _mm_loadu_si128((const __m128i *)(q + 32));
    __m128i b3 = _mm_loadu_si128((const __m128i *)(q + 48));
    _mm_storeu_si128((__m128i *)(y0 + x), luma16(a0, a1, a2, a3, k));
    _mm_storeu_si128((__m128i *)(y1 + x), luma16(b0, b1, b2, b3, k));
    // Rows first, then columns, exactly as the scalar kernel rounds.
    __m128i c0 = pair_average(_mm_avg_epu8(a0, b0), _mm_avg_epu8(a1, b1));
    __m128i c1 = pair_average(_mm_avg_epu8(a2, b2), _mm_avg_epu8(a3, b3));
    __m128i uv = _mm_xor_si128(
        _mm_packs_epi16(chroma8(c0, c1, k->u_weights), chroma8(c0, c1, k->v_weights)), flip);
    _mm_storel_epi64((__m128i *)(u + x / 2), uv);
    _mm_storel_epi64((__m128i *)(v + x / 2), _mm_unpackhi_epi64(uv, uv));
}

// Two BGRA rows, 16 pixels at a time; shorter rows go to scalar. Each block prefetches the
// same 64 bytes (one cache line) of the next pair's rows, as the AVX2 kernel does.
CCORE_TARGET_SSSE3 void ccore_bgra_rows_ssse3(const uint8_t *s0, const uint8_t *s1,
                                              const uint8_t *n0, const uint8_t *n1, uint8_t *y0,
                                              uint8_t *y1, uint8_t *u, uint8_t *v, int32_t w,
                                              int full) {
    if (w < 16) {
        ccore_bgra_rows_c(s0, s1, n0, n1, y0, y1, u, v, w, full);
        return;
    }
    if (!n0) { // the last pair: nothing ahead, the hints fall on the rows being read
        n0 = s0;
        n1 = s1;
    }
    const weights128 k = weights_for(full);
    size_t even_w = (size_t)w & ~(size_t)1, x = 0;
    for (; x + 16 <= even_w; x += 16) {
        _mm_prefetch((const char *)(n0 + 4 * x), _MM_HINT_T0);
        _mm_prefetch((const char *)(n1 + 4 * x), _MM_HINT_T0);
        bgra_block16(s0, s1, y0, y1, u, v, x, &k);
    }
    // The last block moves back to overlap the previous one, staying on an even pixel so its
    // chroma samples line up; an odd last column is left to the scalar kernel.
    if (x < even_w) bgra_block16(s0, s1, y0, y1, u, v, even_w - 16, &k);
    if (w & 1)
        ccore_bgra_rows_c(s0 + 4 * (w - 1), s1 + 4 * (w - 1), NULL, NULL, y0 + w - 1,
                          y1 + w - 1, u + (w - 1) / 2, v + (w - 1) / 2, 1, full);
}

#endif
