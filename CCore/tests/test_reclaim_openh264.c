// The same check with openh264, the H.264 encoder: started between two snapshots, single-
// threaded, in its screen-content realtime mode; whatever pages are given back, its output is
// bit-identical to an encoder whose pages were left alone.
#include <string.h>
#include <wels/codec_api.h>

#include "ccore/reclaim.h"
#include "check.h"

enum { W = 1280, H = 720, FRAMES = 12, SNAPSHOT = 8192 };
static ccore_range h_before[SNAPSHOT], h_after[SNAPSHOT];
static unsigned char planes[W * H * 3 / 2];

static int encode(int reclaim, uint64_t *hash, size_t *reclaimed) {
    ISVCEncoder *enc = NULL;
    size_t nb = 0, na = 0;
    *reclaimed = 0;
    if (reclaim && ccore_anon_snapshot(h_before, SNAPSHOT, &nb) != CCORE_OK) return -1;
    if (WelsCreateSVCEncoder(&enc) != 0 || !enc) return -1;
    SEncParamExt param;
    (*enc)->GetDefaultParams(enc, &param);
    param.iUsageType = SCREEN_CONTENT_REAL_TIME;
    param.iPicWidth = W;
    param.iPicHeight = H;
    param.iTargetBitrate = 1500000;
    param.iRCMode = RC_BITRATE_MODE;
    param.fMaxFrameRate = 20;
    param.iMultipleThreadIdc = 1;
    param.uiIntraPeriod = 0;
    param.sSpatialLayers[0].iVideoWidth = W;
    param.sSpatialLayers[0].iVideoHeight = H;
    param.sSpatialLayers[0].fFrameRate = 20;
    param.sSpatialLayers[0].iSpatialBitrate = 1500000;
    param.sSpatialLayers[0].uiProfileIdc = PRO_BASELINE;
    if ((*enc)->InitializeExt(enc, &param) != 0) return -1;
    if (reclaim) {
        if (ccore_anon_snapshot(h_after, SNAPSHOT, &na) != CCORE_OK) return -1;
        if (ccore_reclaim_new_zero_pages(h_before, nb, h_after, na, 1 << 20, reclaimed) != CCORE_OK) return -1;
    }
    SSourcePicture pic;
    memset(&pic, 0, sizeof pic);
    pic.iColorFormat = videoFormatI420;
    pic.iPicWidth = W;
    pic.iPicHeight = H;
    pic.iStride[0] = W;
    pic.iStride[1] = pic.iStride[2] = W / 2;
    pic.pData[0] = planes;
    pic.pData[1] = planes + W * H;
    pic.pData[2] = planes + W * H + W * H / 4;
    *hash = 1469598103934665603ull;
    for (int f = 0; f < FRAMES; f++) {
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                planes[y * W + x] = (unsigned char)(((x / 8 + y / 8 + f) % 9) * 25 + ((x * y + f * 7) % 11 == 0 ? 60 : 0));
        memset(planes + W * H, 128, W * H / 2);
        pic.uiTimeStamp = f * 50;
        SFrameBSInfo info;
        memset(&info, 0, sizeof info);
        if ((*enc)->EncodeFrame(enc, &pic, &info) != 0) return -1;
        for (int l = 0; l < info.iLayerNum; l++) {
            const SLayerBSInfo *layer = &info.sLayerInfo[l];
            int bytes = 0;
            for (int n = 0; n < layer->iNalCount; n++) bytes += layer->pNalLengthInByte[n];
            for (int k = 0; k < bytes; k++) *hash = (*hash ^ layer->pBsBuf[k]) * 1099511628211ull;
        }
    }
    (*enc)->Uninitialize(enc);
    WelsDestroySVCEncoder(enc);
    return 0;
}

TEST(openh264EncoderStartWithItsZeroPagesGivenBackEncodesBitIdentically) {
    uint64_t plain = 0, reclaimed_hash = 0;
    size_t none = 0, reclaimed = 0;
    REQUIRE(encode(0, &plain, &none) == 0);
    REQUIRE(encode(1, &reclaimed_hash, &reclaimed) == 0);
    CHECK(none == 0);
    CHECK(plain == reclaimed_hash);
    printf("  openh264 1280x720: %zu KiB of zero pages given back at start\n", reclaimed >> 10);
}
