// AVX2 macroblock signature (x86-64) for the change map. The scalar signature (change.c) runs
// 48 dependent multiply-rotate rounds a macroblock and is bound by the 64-bit multiplier; here
// each 32-byte load (two luma rows, or four chroma rows) costs one 4-lane 32x32->64 multiply:
// every 64-bit word is xored with a key of its own (so moving a word to another row changes
// the sum), its halves multiplied together, and the word itself, half-swapped into the
// neighbouring lane, added as well (a change the product misses, a zero half, still lands).
// The four lanes are then folded through full 64x64->128 multiplies. A different function
// from the scalar one: a map keeps the one it was laid out with (ccore_change_map_init), so
// signatures are only ever compared with signatures of the same kind.
#include "kernels.h"

#if CCORE_X86
#include <immintrin.h>
#include <string.h>

// 12 loads of 4 words each, one key per word: arbitrary odd 64-bit constants (digits of the
// golden ratio and of pi, stepped), fixed so signatures are stable within a process.
static const uint64_t KEYS[12][4] __attribute__((aligned(32))) = {
    {0x9E3779B97F4A7C15ull, 0xF39CC0605CEDC835ull, 0x1082276BF3A27251ull, 0xF86C6A11D0C18E95ull},
    {0x2767F0B153D27B7Full, 0x0347045B5BF1827Full, 0x01886F0928403003ull, 0xC1D64BA40F335E37ull},
    {0xA0761D6478BD642Full, 0xE7037ED1A0B428DBull, 0x8EBC6AF09C88C6E3ull, 0x589965CC75374CC3ull},
    {0x1D8E4E27C47D124Full, 0x243F6A8885A308D3ull, 0x13198A2E03707345ull, 0xA4093822299F31D1ull},
    {0x082EFA98EC4E6C89ull, 0x452821E638D01377ull, 0xBE5466CF34E90C6Dull, 0xC0AC29B7C97C50DDull},
    {0x3F84D5B5B5470917ull, 0x9216D5D98979FB1Bull, 0xD1310BA698DFB5ADull, 0x2FFD72DBD01ADFB7ull},
    {0xB8E1AFED6A267E97ull, 0xBA7C9045F12C7F99ull, 0x24A19947B3916CF7ull, 0x0801F2E2858EFC17ull},
    {0x636920D871574E69ull, 0xA458FEA3F4933D7Full, 0x0D95748F728EB659ull, 0x718BCD5882154AEFull},
    {0x7B54A41DC25A59B5ull, 0x9C30D5392AF26013ull, 0xC5D1B023286085F1ull, 0xCA417918B8DB38EFull},
    {0x8E79DCB0603A180Full, 0x6C9E0E8BB01E8A3Full, 0xD71577C1BD314B27ull, 0x78AF2FDA55605C61ull},
    {0xE65525F3AA55AB95ull, 0x5748986263E81441ull, 0x55CA396A2AAB10B7ull, 0xDB6B6DE9D9B9ED7Bull},
    {0xE4D1F1F81F3E6C0Bull, 0x7F8B6D3D87C9C8F1ull, 0x4B7A70E9B5B32945ull, 0xAD3A9F7C2D66E12Bull},
};

CCORE_TARGET_AVX2 static inline __m256i accumulate(__m256i acc, __m256i data, int k) {
    __m256i keyed = _mm256_xor_si256(data, _mm256_load_si256((const __m256i *)KEYS[k]));
    __m256i product = _mm256_mul_epu32(keyed, _mm256_srli_epi64(keyed, 32));
    __m256i swapped = _mm256_shuffle_epi32(data, _MM_SHUFFLE(1, 0, 3, 2));
    return _mm256_add_epi64(acc, _mm256_add_epi64(product, swapped));
}

static inline uint64_t load64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

CCORE_TARGET_AVX2 static inline __m256i four_rows(const uint8_t *p, ptrdiff_t stride) {
    return _mm256_set_epi64x((long long)load64(p + 3 * stride), (long long)load64(p + 2 * stride),
                             (long long)load64(p + stride), (long long)load64(p));
}

// Folds two 64-bit words into one through their 128-bit product.
static inline uint64_t fold(uint64_t a, uint64_t b) {
    unsigned __int128 m = (unsigned __int128)a * b;
    return (uint64_t)m ^ (uint64_t)(m >> 64);
}

CCORE_TARGET_AVX2 uint64_t ccore_change_signature_avx2(const uint8_t *y, ptrdiff_t y_stride, const uint8_t *u,
                                                       ptrdiff_t u_stride, const uint8_t *v, ptrdiff_t v_stride) {
    // Two accumulators: the adds of one load do not wait for the last.
    __m256i a = _mm256_setzero_si256(), b = _mm256_setzero_si256();
    for (int r = 0; r < 16; r += 4) {
        __m256i d0 = _mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(y + r * y_stride))),
            _mm_loadu_si128((const __m128i *)(y + (r + 1) * y_stride)), 1);
        __m256i d1 = _mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(y + (r + 2) * y_stride))),
            _mm_loadu_si128((const __m128i *)(y + (r + 3) * y_stride)), 1);
        a = accumulate(a, d0, r / 2);
        b = accumulate(b, d1, r / 2 + 1);
    }
    a = accumulate(a, four_rows(u, u_stride), 8);
    b = accumulate(b, four_rows(u + 4 * u_stride, u_stride), 9);
    a = accumulate(a, four_rows(v, v_stride), 10);
    b = accumulate(b, four_rows(v + 4 * v_stride, v_stride), 11);
    uint64_t lanes[8] __attribute__((aligned(32)));
    _mm256_store_si256((__m256i *)lanes, a);
    _mm256_store_si256((__m256i *)(lanes + 4), b);
    uint64_t h = fold(lanes[0] ^ 0x9E3779B185EBCA87ull, lanes[1] ^ 0xC2B2AE3D27D4EB4Full)
                 + fold(lanes[2] ^ 0x165667B19E3779F9ull, lanes[3] ^ 0x85EBCA77C2B2AE63ull)
                 + fold(lanes[4] ^ 0x27D4EB2F165667C5ull, lanes[5] ^ 0x9FB21C651E98DF25ull)
                 + fold(lanes[6] ^ 0xD6E8FEB86659FD93ull, lanes[7] ^ 0x94D049BB133111EBull);
    // The final avalanche, so a change anywhere reaches every bit compared.
    h ^= h >> 37;
    h *= 0x165667919E3779F9ull;
    h ^= h >> 32;
    return h;
}
#endif
