#include "CShims.h"

// The macros and variadic calls are expanded here, once, with the ABI versions of the headers
// this package was built against; see CShims.h for why the wrappers exist.

vpx_codec_err_t rtcs_vpx_enc_init(vpx_codec_ctx_t *ctx, const vpx_codec_enc_cfg_t *cfg,
                                  vpx_codec_flags_t flags) {
    if (ctx == NULL || cfg == NULL) return VPX_CODEC_INVALID_PARAM;
    return vpx_codec_enc_init(ctx, vpx_codec_vp8_cx(), cfg, flags);
}

vpx_codec_err_t rtcs_vpx_dec_init(vpx_codec_ctx_t *ctx, unsigned int threads) {
    if (ctx == NULL) return VPX_CODEC_INVALID_PARAM;
    vpx_codec_dec_cfg_t cfg = {.threads = threads, .w = 0, .h = 0};
    return vpx_codec_dec_init(ctx, vpx_codec_vp8_dx(), &cfg, 0);
}

vpx_codec_err_t rtcs_vpx_control_int(vpx_codec_ctx_t *ctx, int ctrl_id, int value) {
    if (ctx == NULL) return VPX_CODEC_INVALID_PARAM;
    return vpx_codec_control_(ctx, ctrl_id, value);
}

vpx_codec_err_t rtcs_vpx_control_get_int(vpx_codec_ctx_t *ctx, int ctrl_id, int *value) {
    if (ctx == NULL || value == NULL) return VPX_CODEC_INVALID_PARAM;
    return vpx_codec_control_(ctx, ctrl_id, value);
}

vpx_codec_err_t rtcs_vpx_set_active_map(vpx_codec_ctx_t *ctx, const unsigned char *map, unsigned int rows,
                                        unsigned int cols) {
    if (ctx == NULL) return VPX_CODEC_INVALID_PARAM;
    // libvpx only reads the map (it copies it into its own), whatever the field's constness.
    vpx_active_map_t active = {.active_map = (unsigned char *)map, .rows = rows, .cols = cols};
    return vpx_codec_control_(ctx, VP8E_SET_ACTIVEMAP, &active);
}

// opus_encoder_ctl type-checks through macros that expand to (request, value); the request
// numbers are passed the same way here.

static int opus_set(OpusEncoder *enc, int request, opus_int32 value) {
    if (enc == NULL) return OPUS_BAD_ARG;
    return opus_encoder_ctl(enc, request, value);
}

static int opus_get(OpusEncoder *enc, int request, opus_int32 *out) {
    if (enc == NULL || out == NULL) return OPUS_BAD_ARG;
    opus_int32 value = 0;
    int status = opus_encoder_ctl(enc, request, &value);
    if (status == OPUS_OK) *out = value;
    return status;
}

int rtcs_opus_set_bitrate(OpusEncoder *enc, opus_int32 v) { return opus_set(enc, OPUS_SET_BITRATE_REQUEST, v); }
int rtcs_opus_get_bitrate(OpusEncoder *enc, opus_int32 *out) { return opus_get(enc, OPUS_GET_BITRATE_REQUEST, out); }

int rtcs_opus_set_complexity(OpusEncoder *enc, opus_int32 v) { return opus_set(enc, OPUS_SET_COMPLEXITY_REQUEST, v); }
int rtcs_opus_get_complexity(OpusEncoder *enc, opus_int32 *out) { return opus_get(enc, OPUS_GET_COMPLEXITY_REQUEST, out); }

int rtcs_opus_set_signal(OpusEncoder *enc, opus_int32 v) { return opus_set(enc, OPUS_SET_SIGNAL_REQUEST, v); }
int rtcs_opus_get_signal(OpusEncoder *enc, opus_int32 *out) { return opus_get(enc, OPUS_GET_SIGNAL_REQUEST, out); }

int rtcs_opus_set_inband_fec(OpusEncoder *enc, opus_int32 v) { return opus_set(enc, OPUS_SET_INBAND_FEC_REQUEST, v); }
int rtcs_opus_get_inband_fec(OpusEncoder *enc, opus_int32 *out) { return opus_get(enc, OPUS_GET_INBAND_FEC_REQUEST, out); }

int rtcs_opus_set_packet_loss_perc(OpusEncoder *enc, opus_int32 v) { return opus_set(enc, OPUS_SET_PACKET_LOSS_PERC_REQUEST, v); }
int rtcs_opus_get_packet_loss_perc(OpusEncoder *enc, opus_int32 *out) { return opus_get(enc, OPUS_GET_PACKET_LOSS_PERC_REQUEST, out); }

int rtcs_opus_set_dtx(OpusEncoder *enc, opus_int32 v) { return opus_set(enc, OPUS_SET_DTX_REQUEST, v); }
int rtcs_opus_get_dtx(OpusEncoder *enc, opus_int32 *out) { return opus_get(enc, OPUS_GET_DTX_REQUEST, out); }

int rtcs_opus_set_vbr(OpusEncoder *enc, opus_int32 v) { return opus_set(enc, OPUS_SET_VBR_REQUEST, v); }
int rtcs_opus_get_vbr(OpusEncoder *enc, opus_int32 *out) { return opus_get(enc, OPUS_GET_VBR_REQUEST, out); }

int rtcs_opus_get_lookahead(OpusEncoder *enc, opus_int32 *out) { return opus_get(enc, OPUS_GET_LOOKAHEAD_REQUEST, out); }
