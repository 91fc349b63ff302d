// AVX2 conversion kernels (x86-64): NV12 chroma split and BGRA to I420 rows. The fixed-point
// scheme is the SSSE3 one (see convert_sse2.c); what AVX2 adds is lane bookkeeping, because
// packs and horizontal adds work inside each 128-bit half and leave groups interleaved by half,
// which one cross-half permute per output register (plus a byte shuffle for chroma) undoes.
//
// BGRA rows are converted two at a time, so each pixel is loaded once for its luma and its
// chroma (converting luma and chroma in separate passes reads the source twice).
#include "kernels.h"

#if CCORE_X86
#include <immintrin.h>

// De-interleaves 32 U,V pairs.
CCORE_TARGET_AVX2 static inline void split32(const uint8_t *uv, uint8_t *u, uint8_t *v) {
    const __m256i low = _mm256_set1_epi16(0x00ff);
    __m256i a = _mm256_loadu_si256((const __m256i *)uv);
    __m256i b = _mm256_loadu_si256((const __m256i *)(uv + 32));
    // packus interleaves the halves of a and b; permuting the quadwords restores order.
    __m256i us = _mm256_packus_epi16(_mm256_and_si256(a, low), _mm256_and_si256(b, low));
    __m256i vs = _mm256_packus_epi16(_mm256_srli_epi16(a, 8), _mm256_srli_epi16(b, 8));
    _mm256_storeu_si256((__m256i *)u, _mm256_permute4x64_epi64(us, _MM_SHUFFLE(3, 1, 2, 0)));
    _mm256_storeu_si256((__m256i *)v, _mm256_permute4x64_epi64(vs, _MM_SHUFFLE(3, 1, 2, 0)));
}

// Chroma split, 64 then 32 pairs at a time; rows under 32 pairs go to the SSE2 kernel.
CCORE_TARGET_AVX2 void ccore_split_uv_avx2(const uint8_t *uv, uint8_t *u, uint8_t *v, int32_t w) {
    if (w < 32) {
        ccore_split_uv_sse2(uv, u, v, w);
        return;
    }
    size_t n = (size_t)w, x = 0;
    for (; x + 64 <= n; x += 64) {
        split32(uv + 2 * x, u + x, v + x);
        split32(uv + 2 * x + 64, u + x + 32, v + x + 32);
    }
    if (x + 32 <= n) {
        split32(uv + 2 * x, u + x, v + x);
        x += 32;
    }
    if (x < n) split32(uv + 2 * (n - 32), u + n - 32, v + n - 32); // overlaps the previous block
}

// Weights of one range, per B,G,R,A byte for pmaddubsw, and what to add after rounding.
typedef struct {
    __m256i y_weights, y_offset, u_weights, v_weights;
} weights256;

// The weights of full (1) or limited (0) range.
CCORE_TARGET_AVX2 static inline weights256 weights_for(int full) {
    weights256 k;
    if (full) {
        k.y_weights = _mm256_set1_epi32(0x004d961d);      // 29, 150, 77, 0
        k.y_offset = _mm256_set1_epi8((char)128);         // 128*256 taken out by the flip
        k.u_weights = _mm256_set1_epi32((int)0x00d5ac7f); // 127, -84, -43, 0
        k.v_weights = _mm256_set1_epi32((int)0x007f95ec); // -20, -107, 127, 0
    } else {
        k.y_weights = _mm256_set1_epi32(0x00428119);      // 25, 129, 66, 0
        k.y_offset = _mm256_set1_epi8(126);               // (128*220 + 16*256) / 256, rounded down
        k.u_weights = _mm256_set1_epi32((int)0x00dab670); // 112, -74, -38, 0
        k.v_weights = _mm256_set1_epi32((int)0x0070a2ee); // -18, -94, 112, 0
    }
    return k;
}

// floor((s + 128) / 256) for signed words in one multiply: pmulhrsw by 128 is the rounding
// shift by 8 that would otherwise take an add and a shift.
CCORE_TARGET_AVX2 static inline __m256i round_shift8(__m256i s) {
    return _mm256_mulhrs_epi16(s, _mm256_set1_epi16(128));
}

// Luma of 32 pixels (p0 = pixels 0..7, ..., p3 = 24..31) as 32 bytes in pixel order.
CCORE_TARGET_AVX2 static inline __m256i luma32(__m256i p0, __m256i p1, __m256i p2, __m256i p3,
                                               const weights256 *k, __m256i order) {
    const __m256i flip = _mm256_set1_epi8((char)0x80);
    __m256i a = _mm256_hadd_epi16(_mm256_maddubs_epi16(k->y_weights, _mm256_xor_si256(p0, flip)),
                                  _mm256_maddubs_epi16(k->y_weights, _mm256_xor_si256(p1, flip)));
    __m256i b = _mm256_hadd_epi16(_mm256_maddubs_epi16(k->y_weights, _mm256_xor_si256(p2, flip)),
                                  _mm256_maddubs_epi16(k->y_weights, _mm256_xor_si256(p3, flip)));
    __m256i y = _mm256_packs_epi16(round_shift8(a), round_shift8(b));
    // Halves now hold groups of four pixels in the order 0 2 4 6 | 1 3 5 7.
    return _mm256_permutevar8x32_epi32(_mm256_add_epi8(y, k->y_offset), order);
}

// Averages the pixel pairs of a (pixels 0..7) and b (8..15): eight averages, in the order
// 0 1 4 5 | 2 3 6 7 that the in-half shuffles leave (put right once, at the end).
CCORE_TARGET_AVX2 static inline __m256i pair_average(__m256i a, __m256i b) {
    __m256 x = _mm256_castsi256_ps(a), y = _mm256_castsi256_ps(b);
    __m256i even = _mm256_castps_si256(_mm256_shuffle_ps(x, y, _MM_SHUFFLE(2, 0, 2, 0)));
    __m256i odd = _mm256_castps_si256(_mm256_shuffle_ps(x, y, _MM_SHUFFLE(3, 1, 3, 1)));
    return _mm256_avg_epu8(even, odd);
}

// Weighted chroma of 16 averaged pixels as words in -128..127.
CCORE_TARGET_AVX2 static inline __m256i chroma16(__m256i q0, __m256i q1, __m256i weights) {
    return round_shift8(_mm256_hadd_epi16(_mm256_maddubs_epi16(q0, weights),
                                          _mm256_maddubs_epi16(q1, weights)));
}

// Converts the 32 pixels at x of both rows (x even).
CCORE_TARGET_AVX2 static inline void bgra_block32(const uint8_t *s0, const uint8_t *s1,
                                                  uint8_t *y0, uint8_t *y1, uint8_t *u,
                                                  uint8_t *v, size_t x, const weights256 *k) {
    const __m256i flip = _mm256_set1_epi8((char)0x80);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    // After packing, the halves hold U then V as 2-sample pairs in the order 0 2 4 6 | 1 3 5 7;
    // a quadword permute puts all U in the low half and all V in the high half, and one byte
    // shuffle per half interleaves the pairs back into order.
    const __m256i pairs = _mm256_setr_epi8(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15,
                                           0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15);
    const uint8_t *p = s0 + 4 * x, *q = s1 + 4 * x;
    __m256i a0 = _mm256_loadu_si256((const __m256i *)p);
    __m256i a1 = _mm256_loadu_si256((const __m256i *)(p + 32));
    __m256i a2 = _mm256_loadu_si256((const __m256i *)(p + 64));
    __m256i a3 = _mm256_loadu_si256((const __m256i *)(p + 96));
    __m256i b0 = _mm256_loadu_si256((const __m256i *)q);
    __m256i b1 = _mm256_loadu_si256((const __m256i *)(q + 32));
    __m256i b2 = _mm256_loadu_si256((const __m256i *)(q + 64));
    __m256i b3 = _mm256_loadu_si256((const __m256i *)(q + 96));
    _mm256_storeu_si256((__m256i *)(y0 + x), luma32(a0, a1, a2, a3, k, order));
    _mm256_storeu_si256((__m256i *)(y1 + x), luma32(b0, b1, b2, b3, k, order));
    // Rows first, then columns, exactly as the scalar kernel rounds.
    __m256i c0 = pair_average(_mm256_avg_epu8(a0, b0), _mm256_avg_epu8(a1, b1));
    __m256i c1 = pair_average(_mm256_avg_epu8(a2, b2), _mm256_avg_epu8(a3, b3));
    __m256i uv = _mm256_packs_epi16(chroma16(c0, c1, k->u_weights), chroma16(c0, c1, k->v_weights));
    uv = _mm256_permute4x64_epi64(_mm256_xor_si256(uv, flip), _MM_SHUFFLE(3, 1, 2, 0));
    uv = _mm256_shuffle_epi8(uv, pairs);
    _mm_storeu_si128((__m128i *)(u + x / 2), _mm256_castsi256_si128(uv));
    _mm_storeu_si128((__m128i *)(v + x / 2), _mm256_extracti128_si256(uv, 1));
}

// Two BGRA rows, 32 pixels at a time; rows under 32 pixels go to the SSSE3 kernel. Each block
// prefetches the same 128 bytes (two cache lines) of the next pair's rows, so the whole next
// pair is in L1 by the time the caller converts it (see ccore_bgra_rows_fn for why).
CCORE_TARGET_AVX2 void ccore_bgra_rows_avx2(const uint8_t *s0, const uint8_t *s1,
                                            const uint8_t *n0, const uint8_t *n1, uint8_t *y0,
                                            uint8_t *y1, uint8_t *u, uint8_t *v, int32_t w,
                                            int full) {
    if (w < 32) {
        ccore_bgra_rows_ssse3(s0, s1, n0, n1, y0, y1, u, v, w, full);
        return;
    }
    if (!n0) { // the last pair: nothing ahead, the hints fall on the rows being read
        n0 = s0;
        n1 = s1;
    }
    const weights256 k = weights_for(full);
    size_t even_w = (size_t)w & ~(size_t)1, x = 0;
    for (; x + 32 <= even_w; x += 32) {
        _mm_prefetch((const char *)(n0 + 4 * x), _MM_HINT_T0);
        _mm_prefetch((const char *)(n0 + 4 * x + 64), _MM_HINT_T0);
        _mm_prefetch((const char *)(n1 + 4 * x), _MM_HINT_T0);
        _mm_prefetch((const char *)(n1 + 4 * x + 64), _MM_HINT_T0);
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
