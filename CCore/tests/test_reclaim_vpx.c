// The reason the reclaim exists, checked with the real library: libvpx's VP8 encoder started
// between two snapshots leaves megabytes of all-zero pages (its token buffer) that are given
// back, and its output is bit-identical to an encoder whose pages were left alone. This runner
// is single-threaded while it runs (libvpx with one thread starts none), as the reclaim needs.
#include <string.h>
#include <vpx/vp8cx.h>
#include <vpx/vpx_encoder.h>

#include "ccore/reclaim.h"
#include "check.h"

enum { W = 1280, H = 720, FRAMES = 12, SNAPSHOT = 8192 };
static ccore_range snap_before[SNAPSHOT], snap_after[SNAPSHOT];

// Encodes FRAMES frames of busy, moving content; returns a hash of every output byte and the
// bytes given back at start (0 when `reclaim` is off).
static int encode(int reclaim, uint64_t *hash, size_t *reclaimed) {
    vpx_codec_enc_cfg_t cfg;
    if (vpx_codec_enc_config_default(vpx_codec_vp8_cx(), &cfg, 0)) return -1;
    cfg.g_w = W;
    cfg.g_h = H;
    cfg.g_threads = 1;
    cfg.g_lag_in_frames = 0;
    cfg.rc_end_usage = VPX_CBR;
    cfg.rc_target_bitrate = 2500;
    cfg.g_timebase.num = 1;
    cfg.g_timebase.den = 1000;
    vpx_codec_ctx_t ctx;
    size_t nb = 0, na = 0;
    *reclaimed = 0;
    if (reclaim && ccore_anon_snapshot(snap_before, SNAPSHOT, &nb) != CCORE_OK) return -1;
    if (vpx_codec_enc_init(&ctx, vpx_codec_vp8_cx(), &cfg, 0)) return -1;
    vpx_codec_control(&ctx, VP8E_SET_CPUUSED, -6);
    if (reclaim) {
        if (ccore_anon_snapshot(snap_after, SNAPSHOT, &na) != CCORE_OK) return -1;
        if (ccore_reclaim_new_zero_pages(snap_before, nb, snap_after, na, 1 << 20, reclaimed) != CCORE_OK) return -1;
    }
    vpx_image_t img;
    if (!vpx_img_alloc(&img, VPX_IMG_FMT_I420, W, H, 16)) return -1;
    *hash = 1469598103934665603ull;
    for (int f = 0; f < FRAMES; f++) {
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                img.planes[0][y * img.stride[0] + x] =
                    (unsigned char)(((x / 8 + y / 8 + f) % 9) * 25 + ((x * y + f * 7) % 11 == 0 ? 60 : 0));
        memset(img.planes[1], 128, (size_t)img.stride[1] * (H / 2));
        memset(img.planes[2], 128, (size_t)img.stride[2] * (H / 2));
        if (vpx_codec_encode(&ctx, &img, f * 50, 50, 0, VPX_DL_REALTIME)) return -1;
        const vpx_codec_cx_pkt_t *pkt;
        vpx_codec_iter_t it = NULL;
        while ((pkt = vpx_codec_get_cx_data(&ctx, &it))) {
            if (pkt->kind != VPX_CODEC_CX_FRAME_PKT) continue;
            const unsigned char *d = pkt->data.frame.buf;
            for (size_t k = 0; k < pkt->data.frame.sz; k++) *hash = (*hash ^ d[k]) * 1099511628211ull;
        }
    }
    vpx_img_free(&img);
    vpx_codec_destroy(&ctx);
    return 0;
}

TEST(vp8EncoderStartGivesBackMegabytesAndEncodesBitIdentically) {
    uint64_t plain = 0, reclaimed_hash = 0;
    size_t none = 0, reclaimed = 0;
    REQUIRE(encode(0, &plain, &none) == 0);
    REQUIRE(encode(1, &reclaimed_hash, &reclaimed) == 0);
    CHECK(none == 0);
    // The token buffer alone is 3600 macroblocks x 6 KiB = 21 MiB at 1280x720.
    CHECK(reclaimed >= (size_t)15 << 20);
    CHECK(plain == reclaimed_hash);
}
