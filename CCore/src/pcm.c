// 16-bit PCM sample transforms between the wire/producer layouts and what the Opus encoder
// takes (native-endian interleaved int16). Audio is ~100 KB/s, so plain loops that the compiler
// vectorises are enough; there is no kernel dispatch here.
#include <string.h>

#include "internal.h"

// Swaps the two bytes of each sample.
void ccore_pcm_s16_byteswap(const uint16_t *src, uint16_t *dst, size_t count) {
    if (!src || !dst) return;
    // Element-wise, so src == dst (in-place) is safe.
    for (size_t i = 0; i < count; i++) dst[i] = (uint16_t)((src[i] >> 8) | (src[i] << 8));
}

// Reads big-endian byte pairs into native samples.
void ccore_pcm_s16be_to_native(const uint8_t *src, int16_t *dst, size_t count) {
    if (!src || !dst) return;
    // Assembled from bytes, so it needs no alignment and is right on either host byte order.
    for (size_t i = 0; i < count; i++)
        dst[i] = (int16_t)(uint16_t)(((unsigned)src[2 * i] << 8) | src[2 * i + 1]);
}

// Writes frame i as sample i of each plane in channel order; ignores NULL or no channels.
void ccore_pcm_s16_interleave(const int16_t *const *planes, int channels, size_t frames,
                              int16_t *dst) {
    if (!planes || !dst || channels <= 0) return;
    for (int c = 0; c < channels; c++)
        if (!planes[c]) return;
    if (channels == 1) {
        memcpy(dst, planes[0], frames * sizeof *dst);
        return;
    }
    if (channels == 2) { // the common case gets a loop the compiler can vectorise
        const int16_t *l = planes[0], *r = planes[1];
        for (size_t i = 0; i < frames; i++) {
            dst[2 * i] = l[i];
            dst[2 * i + 1] = r[i];
        }
        return;
    }
    size_t n = (size_t)channels;
    for (size_t c = 0; c < n; c++) {
        const int16_t *p = planes[c];
        for (size_t i = 0; i < frames; i++) dst[i * n + c] = p[i];
    }
}

// Sends sample c of frame i to plane c; ignores NULL or no channels.
void ccore_pcm_s16_deinterleave(const int16_t *src, int channels, size_t frames,
                                int16_t *const *planes) {
    if (!src || !planes || channels <= 0) return;
    for (int c = 0; c < channels; c++)
        if (!planes[c]) return;
    if (channels == 1) {
        memcpy(planes[0], src, frames * sizeof *src);
        return;
    }
    if (channels == 2) {
        int16_t *l = planes[0], *r = planes[1];
        for (size_t i = 0; i < frames; i++) {
            l[i] = src[2 * i];
            r[i] = src[2 * i + 1];
        }
        return;
    }
    size_t n = (size_t)channels;
    for (size_t c = 0; c < n; c++) {
        int16_t *p = planes[c];
        for (size_t i = 0; i < frames; i++) p[i] = src[i * n + c];
    }
}
