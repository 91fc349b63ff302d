#ifndef CCORE_PCM_H
#define CCORE_PCM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// 16-bit PCM sample transforms. src and dst may be the same buffer for the byte swap; the
/// (de)interleavers need distinct buffers. Counts are in samples per channel (frames).

/// Reverses the byte order of `count` 16-bit samples (big-endian <-> little-endian).
void ccore_pcm_s16_byteswap(const uint16_t *src, uint16_t *dst, size_t count);

/// Reads `count` samples stored big-endian (any alignment) into native int16.
void ccore_pcm_s16be_to_native(const uint8_t *src, int16_t *dst, size_t count);

/// Interleaves `channels` planes of `frames` samples each into dst (frames * channels samples).
void ccore_pcm_s16_interleave(const int16_t *const *planes, int channels, size_t frames,
                              int16_t *dst);

/// Splits interleaved src (frames * channels samples) into `channels` planes.
void ccore_pcm_s16_deinterleave(const int16_t *src, int channels, size_t frames,
                                int16_t *const *planes);

#ifdef __cplusplus
}
#endif
#endif
