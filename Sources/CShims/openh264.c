#include "CShims.h"

#include <dlfcn.h>
#include <limits.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wels/codec_api.h>
#include <wels/codec_ver.h>

// openh264 is loaded on first use, not linked: a VP8 share (the default) never needs it, and
// linked it costs every process ~0.3 MiB resident (its relocations and initialisers run at
// start-up). Four C entry points create and destroy the objects; everything else is a call
// through the objects' own function tables. Once loaded it stays loaded (encoders and
// decoders may live anywhere in the process).
static struct {
    int (*create_encoder)(ISVCEncoder **);
    void (*destroy_encoder)(ISVCEncoder *);
    long (*create_decoder)(ISVCDecoder **);
    void (*destroy_decoder)(ISVCDecoder *);
} api;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded;
static char load_error[256] = "openh264 not loaded";

// ABI 8 (openh264 2.6, Debian 13's libopenh264.so.8) appended PSNR fields to three structs of
// ABI 7 (2.3-2.5, Debian 12's .so.7). The encoder parameters and the source picture grew at
// their ends, which the zeroed tails below absorb whichever headers this is built with. Each
// layer of a frame's bitstream info grew in the middle of an array, so the frame is read through
// the layout of the ABI that was loaded, spelled out here for both (the headers give only one).
static int abi;

typedef struct {
    unsigned char uiTemporalId, uiSpatialId, uiQualityId;
    EVideoFrameType eFrameType;
    unsigned char uiLayerType;
    int iSubSeqId;
    int iNalCount;
    int *pNalLengthInByte;
    unsigned char *pBsBuf;
} LayerBSInfo7;

typedef struct {
    LayerBSInfo7 v7;  // ends with a pointer, so the new field starts right after it
    float rPsnr[3];
} LayerBSInfo8;

#define FRAME_BS_INFO(layer)                                                                       \
    struct {                                                                                       \
        int iLayerNum;                                                                             \
        layer sLayerInfo[MAX_LAYER_NUM_OF_FRAME];                                                  \
        EVideoFrameType eFrameType;                                                                \
        int iFrameSizeInBytes;                                                                     \
        long long uiTimeStamp;                                                                     \
    }
typedef FRAME_BS_INFO(LayerBSInfo7) FrameBSInfo7;
typedef FRAME_BS_INFO(LayerBSInfo8) FrameBSInfo8;
#undef FRAME_BS_INFO

// The headers built with are one of the two.
_Static_assert((OPENH264_MAJOR == 2 && OPENH264_MINOR >= 6 ? sizeof(FrameBSInfo8) : sizeof(FrameBSInfo7)) ==
                   sizeof(SFrameBSInfo),
               "the bitstream info of the headers built with is ABI 7's or ABI 8's");
_Static_assert(offsetof(LayerBSInfo8, rPsnr) == sizeof(LayerBSInfo7), "ABI 8's rPsnr follows pBsBuf directly");

// The ABI of a library found by its unversioned name, from the version it reports.
static int abi_of_version(void *lib) {
    void (*version)(OpenH264Version *) = NULL;
    *(void **)&version = dlsym(lib, "WelsGetCodecVersionEx");
    if (version == NULL) return 0;
    OpenH264Version v;
    memset(&v, 0, sizeof v);
    version(&v);
    if (v.uMajor == 2 && v.uMinor >= 3 && v.uMinor <= 5) return 7;
    if (v.uMajor == 2 && v.uMinor == 6) return 8;
    return 0;
}

static void load(void) {
    static const struct { const char *name; int abi; } names[] = {
        {"libopenh264.so.7", 7}, {"libopenh264.so.8", 8}, {"libopenh264.so", 0}};
    void *lib = NULL;
    // A build of the user's choice, e.g. one whose patent licence comes with the binary: its ABI
    // from the version it reports.
    const char *chosen = getenv("RTCSHARE_OPENH264");
    if (chosen != NULL && chosen[0] != '\0') {
        lib = dlopen(chosen, RTLD_NOW | RTLD_LOCAL);
        if (lib == NULL) {
            const char *why = dlerror();
            snprintf(load_error, sizeof load_error, "cannot load RTCSHARE_OPENH264 (%s): %s", chosen, why != NULL ? why : "?");
            return;
        }
        abi = 0;
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0] && lib == NULL; i++) {
        lib = dlopen(names[i].name, RTLD_NOW | RTLD_LOCAL);
        abi = names[i].abi;
    }
    if (lib == NULL) {
        // "failed to map segment": the address space ran out, not a missing package.
        const char *why = dlerror();
        int missing = why != NULL && strstr(why, "cannot open shared object file") != NULL;
        snprintf(load_error, sizeof load_error, "cannot load libopenh264.so.7 or .so.8%s: %s",
                 missing ? " (install libopenh264-7, or libopenh264-8 on Debian 13)" : "", why != NULL ? why : "?");
        return;
    }
    if (abi == 0) abi = abi_of_version(lib);
    if (abi == 0) {
        snprintf(load_error, sizeof load_error, "%s is of an ABI other than 7 (openh264 2.3-2.5) or 8 (2.6)",
                 chosen != NULL && chosen[0] != '\0' ? chosen : "libopenh264.so");
        dlclose(lib);
        return;
    }
#define RESOLVE(field, name)                                                                         \
    do {                                                                                             \
        *(void **)&api.field = dlsym(lib, name);                                                     \
        if (api.field == NULL) {                                                                     \
            snprintf(load_error, sizeof load_error, "libopenh264 has no %s (too old?)", name);       \
            dlclose(lib);                                                                            \
            return;                                                                                  \
        }                                                                                            \
    } while (0)
    RESOLVE(create_encoder, "WelsCreateSVCEncoder");
    RESOLVE(destroy_encoder, "WelsDestroySVCEncoder");
    RESOLVE(create_decoder, "WelsCreateDecoder");
    RESOLVE(destroy_decoder, "WelsDestroyDecoder");
#undef RESOLVE
    loaded = 1;
}

int rtcs_openh264_load(void) {
    pthread_once(&load_once, load);
    return loaded ? 0 : RTCS_OPENH264_NOT_LOADED;
}

const char *rtcs_openh264_load_error(void) { return load_error; }

// A function inside the loaded library (for `rtcs_zerofill_begin` to find it), or NULL.
__attribute__((visibility("hidden"))) const void *rtcs_openh264_symbol(void) {
    return loaded ? (const void *)api.create_encoder : NULL;
}

// openh264 from C: each object is a pointer to a table of function pointers, called as
// (*obj)->Method(obj, ...). The handles below keep that object beside the structs a call needs
// so Swift never sees the C++-shaped types.

struct rtcs_openh264_encoder {
    ISVCEncoder *codec;
    // Filled by EncodeFrame in the loaded ABI's layout; large (a table per layer), so kept, not on
    // the stack.
    union {
        FrameBSInfo7 v7;
        FrameBSInfo8 v8;
    } info;
    SSourcePicture picture;
    unsigned char picture_abi8_tail[8];  // zero: ABI 8's "compute PSNR" flags stay off
    int bitrate_bps;
};
_Static_assert(offsetof(struct rtcs_openh264_encoder, picture_abi8_tail) ==
                   offsetof(struct rtcs_openh264_encoder, picture) + sizeof(SSourcePicture),
               "the zeroed tail follows the source picture");

struct rtcs_openh264_decoder {
    ISVCDecoder *codec;
};

static int level_enum(int level_idc) {
    switch (level_idc) {
    case 10: return LEVEL_1_0;
    case 11: return LEVEL_1_1;
    case 12: return LEVEL_1_2;
    case 13: return LEVEL_1_3;
    case 20: return LEVEL_2_0;
    case 21: return LEVEL_2_1;
    case 22: return LEVEL_2_2;
    case 30: return LEVEL_3_0;
    case 31: return LEVEL_3_1;
    case 32: return LEVEL_3_2;
    case 40: return LEVEL_4_0;
    case 41: return LEVEL_4_1;
    case 42: return LEVEL_4_2;
    case 50: return LEVEL_5_0;
    case 51: return LEVEL_5_1;
    case 52: return LEVEL_5_2;
    default: return LEVEL_UNKNOWN;
    }
}

int rtcs_openh264_encoder_open(const rtcs_openh264_encoder_params *p, rtcs_openh264_encoder **out) {
    if (p == NULL || out == NULL || p->width < 16 || p->height < 16 || p->bitrate_bps <= 0) return -1;
    if (rtcs_openh264_load() != 0) return RTCS_OPENH264_NOT_LOADED;
    rtcs_openh264_encoder *e = calloc(1, sizeof *e);
    if (e == NULL) return cmMallocMemeError;
    int rc = api.create_encoder(&e->codec);
    if (rc != 0 || e->codec == NULL) {
        free(e);
        return rc != 0 ? rc : cmInitParaError;
    }
    // Quiet: openh264 logs warnings to stderr by default, and stderr is the user's.
    int trace = WELS_LOG_QUIET;
    (*e->codec)->SetOption(e->codec, ENCODER_OPTION_TRACE_LEVEL, &trace);

    // ABI 8's PSNR flags land in the zeroed tail.
    struct {
        SEncParamExt param;
        unsigned char abi8_tail[8];
    } params;
    memset(&params, 0, sizeof params);
    SEncParamExt *const param = &params.param;
    (*e->codec)->GetDefaultParams(e->codec, param);
    param->iUsageType = p->screen_content ? SCREEN_CONTENT_REAL_TIME : CAMERA_VIDEO_REAL_TIME;
    param->iPicWidth = p->width;
    param->iPicHeight = p->height;
    param->iTargetBitrate = p->bitrate_bps;
    param->iMaxBitrate = p->bitrate_bps;
    param->iRCMode = RC_BITRATE_MODE;
    param->fMaxFrameRate = p->max_frame_rate;
    param->iTemporalLayerNum = 1;
    param->iSpatialLayerNum = 1;
    // IDRs only when the caller asks (first picture, PLI/FIR, period, orientation change).
    param->uiIntraPeriod = 0;
    param->bEnableSceneChangeDetect = false;
    param->iNumRefFrame = 1;
    // The same SPS/PPS ids on every IDR: a receiver or SFU that cached the first set keeps working.
    param->eSpsPpsIdStrategy = CONSTANT_ID;
    param->bPrefixNalAddingCtrl = false;
    param->bEnableSSEI = false;
    param->bSimulcastAVC = false;
    param->iPaddingFlag = 0;
    param->iEntropyCodingModeFlag = 0;  // CAVLC: baseline has no CABAC
    param->bEnableFrameSkip = p->frame_skip != 0;
    param->iMinQp = p->min_qp;
    param->iMaxQp = p->max_qp;
    param->bEnableLongTermReference = false;
    param->iMultipleThreadIdc = 1;
    param->bUseLoadBalancing = false;
    param->bEnableDenoise = false;          // a screen has no sensor noise
    param->bEnableBackgroundDetection = true;
    param->bEnableAdaptiveQuant = false;
    param->bEnableFrameCroppingFlag = true; // sizes that are not multiples of 16
    param->bFixRCOverShoot = true;

    SSpatialLayerConfig *layer = &param->sSpatialLayers[0];
    layer->iVideoWidth = p->width;
    layer->iVideoHeight = p->height;
    layer->fFrameRate = p->max_frame_rate;
    layer->iSpatialBitrate = p->bitrate_bps;
    layer->iMaxSpatialBitrate = p->bitrate_bps;
    layer->uiProfileIdc = PRO_BASELINE;
    layer->uiLevelIdc = level_enum(p->level_idc);
    if (p->max_slice_bytes > 0) {
        layer->sSliceArgument.uiSliceMode = SM_SIZELIMITED_SLICE;
        layer->sSliceArgument.uiSliceSizeConstraint = (unsigned)p->max_slice_bytes;
        param->uiMaxNalSize = (unsigned)p->max_slice_bytes;
    } else {
        layer->sSliceArgument.uiSliceMode = SM_SINGLE_SLICE;
        layer->sSliceArgument.uiSliceNum = 1;
    }

    rc = (*e->codec)->InitializeExt(e->codec, param);
    if (rc != 0) {
        api.destroy_encoder(e->codec);
        free(e);
        return rc;
    }
    (*e->codec)->SetOption(e->codec, ENCODER_OPTION_TRACE_LEVEL, &trace);
    int format = videoFormatI420;
    rc = (*e->codec)->SetOption(e->codec, ENCODER_OPTION_DATAFORMAT, &format);
    if (rc != 0) {
        (*e->codec)->Uninitialize(e->codec);
        api.destroy_encoder(e->codec);
        free(e);
        return rc;
    }
    e->picture.iColorFormat = videoFormatI420;
    e->picture.iPicWidth = p->width;
    e->picture.iPicHeight = p->height;
    e->bitrate_bps = p->bitrate_bps;
    *out = e;
    return 0;
}

void rtcs_openh264_encoder_close(rtcs_openh264_encoder *e) {
    if (e == NULL) return;
    (*e->codec)->Uninitialize(e->codec);
    api.destroy_encoder(e->codec);
    free(e);
}

static int set_bitrate_option(rtcs_openh264_encoder *e, ENCODER_OPTION option, int layer, int bps) {
    SBitrateInfo info;
    memset(&info, 0, sizeof info);
    info.iLayer = layer;
    info.iBitrate = bps;
    return (*e->codec)->SetOption(e->codec, option, &info);
}

int rtcs_openh264_encoder_set_bitrate(rtcs_openh264_encoder *e, int bps) {
    if (e == NULL || bps <= 0) return -1;
    // openh264 keeps a target and a maximum for the whole stream and for the (one) spatial
    // layer, and refuses any call that would leave a target above its maximum (checked here:
    // 2.3.1 returns cmInitParaError). Going up: the maxima first, layer before stream for the
    // target; going down: the targets first.
    const struct { ENCODER_OPTION option; int layer; } up[] = {
        {ENCODER_OPTION_MAX_BITRATE, SPATIAL_LAYER_ALL}, {ENCODER_OPTION_MAX_BITRATE, SPATIAL_LAYER_0},
        {ENCODER_OPTION_BITRATE, SPATIAL_LAYER_0}, {ENCODER_OPTION_BITRATE, SPATIAL_LAYER_ALL},
    }, down[] = {
        {ENCODER_OPTION_BITRATE, SPATIAL_LAYER_0}, {ENCODER_OPTION_BITRATE, SPATIAL_LAYER_ALL},
        {ENCODER_OPTION_MAX_BITRATE, SPATIAL_LAYER_0}, {ENCODER_OPTION_MAX_BITRATE, SPATIAL_LAYER_ALL},
    };
    for (int i = 0; i < 4; i++) {
        int rc = bps > e->bitrate_bps ? set_bitrate_option(e, up[i].option, up[i].layer, bps)
                                      : set_bitrate_option(e, down[i].option, down[i].layer, bps);
        if (rc != 0) return rc;
    }
    e->bitrate_bps = bps;
    return 0;
}

// openh264 has one quantizer range for the whole stream, and its rate control keeps an IDR's
// quantizer at or under 40 whatever the range's top (its table of starting quantizers by bits
// per pixel), and a picture's within a few steps of the last one's. A picture that must come out
// coarser than that (one too large to send whole) is coded with rate control off at a quantizer
// of the caller's: the mode can change between pictures (ENCODER_OPTION_RC_MODE), and the
// quantizer it then uses (iDLayerQp) is among the parameters openh264 takes while running without
// starting over (WelsEncoderParamAdjust copies it; no reset, nothing allocated).
int rtcs_openh264_encoder_set_fixed_qp(rtcs_openh264_encoder *e, int qp) {
    if (e == NULL || qp < 0 || qp > 51) return -1;
    if (qp > 0) {
        struct {
            SEncParamExt param;
            unsigned char abi8_tail[8];  // ABI 8's PSNR flags, as at open
        } params;
        memset(&params, 0, sizeof params);
        int rc = (*e->codec)->GetOption(e->codec, ENCODER_OPTION_SVC_ENCODE_PARAM_EXT, &params.param);
        if (rc != 0) return rc;
        if (params.param.sSpatialLayers[0].iDLayerQp != qp) {
            params.param.sSpatialLayers[0].iDLayerQp = qp;
            rc = (*e->codec)->SetOption(e->codec, ENCODER_OPTION_SVC_ENCODE_PARAM_EXT, &params.param);
            if (rc != 0) return rc;
        }
    }
    int mode = qp > 0 ? RC_OFF_MODE : RC_BITRATE_MODE;
    return (*e->codec)->SetOption(e->codec, ENCODER_OPTION_RC_MODE, &mode);
}

int rtcs_openh264_encoder_force_idr(rtcs_openh264_encoder *e) {
    if (e == NULL) return -1;
    return (*e->codec)->ForceIntraFrame(e->codec, true);
}

int rtcs_openh264_encoder_encode(rtcs_openh264_encoder *e, const uint8_t *y, const uint8_t *u,
                                 const uint8_t *v, int stride_y, int stride_u, int stride_v,
                                 int64_t timestamp_ms, const uint8_t **out, size_t *out_bytes,
                                 int *frame_type) {
    if (e == NULL || y == NULL || u == NULL || v == NULL || out == NULL || out_bytes == NULL || frame_type == NULL)
        return -1;
    // openh264 reads the planes through non-const pointers but does not write them.
    e->picture.pData[0] = (unsigned char *)y;
    e->picture.pData[1] = (unsigned char *)u;
    e->picture.pData[2] = (unsigned char *)v;
    e->picture.iStride[0] = stride_y;
    e->picture.iStride[1] = stride_u;
    e->picture.iStride[2] = stride_v;
    e->picture.uiTimeStamp = timestamp_ms;
    int rc = (*e->codec)->EncodeFrame(e->codec, &e->picture, (SFrameBSInfo *)&e->info);
    e->picture.pData[0] = e->picture.pData[1] = e->picture.pData[2] = NULL;
    if (rc != 0) return rc;
    const int type = abi == 8 ? e->info.v8.eFrameType : e->info.v7.eFrameType;
    const int layers = abi == 8 ? e->info.v8.iLayerNum : e->info.v7.iLayerNum;
    *frame_type = type;
    *out = NULL;
    *out_bytes = 0;
    if (type == videoFrameTypeSkip || type == videoFrameTypeInvalid) return 0;
    if (layers < 0 || layers > MAX_LAYER_NUM_OF_FRAME) return -2;
    // The layers (parameter sets, then the slices) follow each other in one buffer.
    const unsigned char *start = NULL;
    size_t total = 0;
    for (int i = 0; i < layers; i++) {
        const LayerBSInfo7 *layer = abi == 8 ? &e->info.v8.sLayerInfo[i].v7 : &e->info.v7.sLayerInfo[i];
        size_t bytes = 0;
        for (int n = 0; n < layer->iNalCount; n++) bytes += (size_t)layer->pNalLengthInByte[n];
        if (bytes == 0) continue;
        if (start == NULL) start = layer->pBsBuf;
        else if (layer->pBsBuf != start + total) return -2;
        total += bytes;
    }
    *out = start;
    *out_bytes = total;
    return 0;
}

int rtcs_openh264_decoder_open(rtcs_openh264_decoder **out) {
    if (out == NULL) return -1;
    if (rtcs_openh264_load() != 0) return RTCS_OPENH264_NOT_LOADED;
    rtcs_openh264_decoder *d = calloc(1, sizeof *d);
    if (d == NULL) return cmMallocMemeError;
    long rc = api.create_decoder(&d->codec);
    if (rc != 0 || d->codec == NULL) {
        free(d);
        return rc != 0 ? (int)rc : cmInitParaError;
    }
    int trace = WELS_LOG_QUIET;
    (*d->codec)->SetOption(d->codec, DECODER_OPTION_TRACE_LEVEL, &trace);
    SDecodingParam param;
    memset(&param, 0, sizeof param);
    param.sVideoProperty.eVideoBsType = VIDEO_BITSTREAM_AVC;
    param.eEcActiveIdc = ERROR_CON_DISABLE;  // a lost picture is reported, not painted over
    rc = (*d->codec)->Initialize(d->codec, &param);
    if (rc != 0) {
        api.destroy_decoder(d->codec);
        free(d);
        return (int)rc;
    }
    *out = d;
    return 0;
}

void rtcs_openh264_decoder_close(rtcs_openh264_decoder *d) {
    if (d == NULL) return;
    (*d->codec)->Uninitialize(d->codec);
    api.destroy_decoder(d->codec);
    free(d);
}

int rtcs_openh264_decoder_decode(rtcs_openh264_decoder *d, const uint8_t *bytes, size_t count,
                                 rtcs_openh264_picture *picture, int *has_picture) {
    if (d == NULL || bytes == NULL || picture == NULL || has_picture == NULL || count == 0 || count > INT_MAX)
        return -1;
    unsigned char *planes[3] = {NULL, NULL, NULL};
    SBufferInfo info;
    memset(&info, 0, sizeof info);
    DECODING_STATE state = (*d->codec)->DecodeFrameNoDelay(d->codec, bytes, (int)count, planes, &info);
    *has_picture = 0;
    if (state != dsErrorFree) return (int)state;
    if (info.iBufferStatus == 1 && planes[0] != NULL) {
        for (int i = 0; i < 3; i++) picture->planes[i] = planes[i];
        picture->strides[0] = info.UsrData.sSystemBuffer.iStride[0];
        picture->strides[1] = info.UsrData.sSystemBuffer.iStride[1];
        picture->strides[2] = info.UsrData.sSystemBuffer.iStride[1];
        picture->width = info.UsrData.sSystemBuffer.iWidth;
        picture->height = info.UsrData.sSystemBuffer.iHeight;
        *has_picture = 1;
    }
    return 0;
}
