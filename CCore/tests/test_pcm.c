// 16-bit PCM transforms: byte tables for the endian conversions, round trips for the byte swap
// and the (de)interleavers at every channel count a producer may send.
#include <string.h>

#include "CCore.h"
#include "check.h"

TEST(pcmByteswapTwiceGivesTheSamplesBack) {
    check_rng r = {0x70636d};
    enum { N = 1031 };
    static uint16_t src[N], once[N], twice[N];
    for (int i = 0; i < N; i++) src[i] = (uint16_t)check_next(&r);
    for (size_t count = 0; count <= N; count += count < 40 ? 1 : 97) {
        ccore_pcm_s16_byteswap(src, once, count);
        ccore_pcm_s16_byteswap(once, twice, count);
        CHECK(memcmp(src, twice, count * sizeof src[0]) == 0);
        for (size_t i = 0; i < count; i++)
            CHECK(once[i] == (uint16_t)((src[i] & 0xff) << 8 | src[i] >> 8));
    }
}

TEST(pcmByteswapWorksInPlace) {
    uint16_t s[5] = {0x0102, 0xA0B0, 0xFF00, 0x00FF, 0x1234};
    static const uint16_t want[5] = {0x0201, 0xB0A0, 0x00FF, 0xFF00, 0x3412};
    ccore_pcm_s16_byteswap(s, s, 5);
    CHECK(memcmp(s, want, sizeof want) == 0);
}

TEST(pcmBigEndianBytesBecomeNativeSamples) {
    // Bytes as they arrive, sample they stand for.
    static const uint8_t be[] = {
        0x00, 0x00, //      0
        0x00, 0x01, //      1
        0x01, 0x00, //    256
        0x7F, 0xFF, //  32767, largest
        0x80, 0x00, // -32768, smallest
        0xFF, 0xFF, //     -1
        0x12, 0x34, //   4660
        0xED, 0xCC, //  -4660
    };
    static const int16_t want[] = {0, 1, 256, 32767, -32768, -1, 4660, -4660};
    enum { N = sizeof want / sizeof want[0] };
    int16_t got[N];
    ccore_pcm_s16be_to_native(be, got, N);
    CHECK(memcmp(got, want, sizeof want) == 0);
    // Any alignment: the same bytes one past an even address.
    uint8_t shifted[sizeof be + 1];
    memcpy(shifted + 1, be, sizeof be);
    memset(got, 0, sizeof got);
    ccore_pcm_s16be_to_native(shifted + 1, got, N);
    CHECK(memcmp(got, want, sizeof want) == 0);
}

TEST(pcmInterleaveThenDeinterleaveRoundTripsForOneToEightChannels) {
    check_rng r = {0x696c76};
    enum { FRAMES = 483 };
    static int16_t planes[8][FRAMES], back[8][FRAMES], mixed[8 * FRAMES];
    for (int c = 0; c < 8; c++)
        for (int i = 0; i < FRAMES; i++) planes[c][i] = (int16_t)check_next(&r);
    for (int channels = 1; channels <= 8; channels++) {
        const int16_t *in[8];
        int16_t *out[8];
        for (int c = 0; c < 8; c++) {
            in[c] = planes[c];
            out[c] = back[c];
        }
        memset(mixed, 0, sizeof mixed);
        memset(back, 0, sizeof back);
        ccore_pcm_s16_interleave(in, channels, FRAMES, mixed);
        // Frame i holds sample i of every channel, in channel order.
        for (int i = 0; i < FRAMES; i++)
            for (int c = 0; c < channels; c++) CHECK(mixed[i * channels + c] == planes[c][i]);
        ccore_pcm_s16_deinterleave(mixed, channels, FRAMES, out);
        for (int c = 0; c < channels; c++)
            CHECK(memcmp(back[c], planes[c], sizeof planes[c]) == 0);
    }
}

TEST(pcmStereoInterleaveByteTable) {
    static const int16_t l[3] = {1, 3, 5}, rr[3] = {2, 4, -6};
    const int16_t *in[2] = {l, rr};
    int16_t mixed[6];
    ccore_pcm_s16_interleave(in, 2, 3, mixed);
    static const int16_t want[6] = {1, 2, 3, 4, 5, -6};
    CHECK(memcmp(mixed, want, sizeof want) == 0);
}

TEST(pcmTransformsIgnoreNullAndZeroChannels) {
    int16_t buf[4] = {1, 2, 3, 4};
    const int16_t *in[1] = {NULL};
    int16_t *out[1] = {NULL};
    ccore_pcm_s16_interleave(in, 1, 4, buf);
    ccore_pcm_s16_interleave(NULL, 1, 4, buf);
    ccore_pcm_s16_deinterleave(buf, 1, 4, out);
    ccore_pcm_s16_deinterleave(buf, 0, 4, out);
    ccore_pcm_s16_byteswap(NULL, NULL, 4);
    ccore_pcm_s16be_to_native(NULL, buf, 4);
    CHECK(buf[0] == 1 && buf[3] == 4);
}
