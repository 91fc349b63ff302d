#ifndef RTCS_SHIMS_H
#define RTCS_SHIMS_H

// Non-variadic doors into libvpx and libopus for Swift. Swift cannot call C variadic functions
// (vpx_codec_control_, opus_encoder_ctl) nor function-like macros (vpx_codec_enc_init,
// vpx_codec_dec_init, which bake the ABI version of the headers in), so each call Swift needs
// gets a fixed-signature wrapper here. Nothing here allocates or keeps state.

#include <vpx/vpx_encoder.h>
#include <vpx/vpx_decoder.h>
#include <vpx/vp8cx.h>
#include <vpx/vp8dx.h>
#include <opus/opus.h>

#ifdef __cplusplus
extern "C" {
#endif

// ---- libvpx ----

/// Opens a VP8 encoder in `ctx` with `cfg` (vpx_codec_enc_init for vp8 at the headers' ABI
/// version); returns VPX_CODEC_OK, or the libvpx error (ctx is then not to be destroyed).
vpx_codec_err_t rtcs_vpx_enc_init(vpx_codec_ctx_t *ctx, const vpx_codec_enc_cfg_t *cfg,
                                  vpx_codec_flags_t flags);

/// Opens a VP8 decoder in `ctx` using `threads` threads (vpx_codec_dec_init for vp8); returns
/// VPX_CODEC_OK, or the libvpx error.
vpx_codec_err_t rtcs_vpx_dec_init(vpx_codec_ctx_t *ctx, unsigned int threads);

/// Sets control `ctrl_id` (a VP8E_SET_* taking an int or unsigned int) to `value`; returns
/// VPX_CODEC_OK, or the libvpx error (VPX_CODEC_INVALID_PARAM for an out-of-range value).
vpx_codec_err_t rtcs_vpx_control_int(vpx_codec_ctx_t *ctx, int ctrl_id, int value);

/// Reads control `ctrl_id` (a VP8E_GET_* taking an int pointer) into `*value`; returns
/// VPX_CODEC_OK, or the libvpx error (`*value` untouched).
vpx_codec_err_t rtcs_vpx_control_get_int(vpx_codec_ctx_t *ctx, int ctrl_id, int *value);

// ---- libopus (opus_encoder_ctl) ----
// A getter writes `*out` only when it returns OPUS_OK.

/// Sets the target bitrate in bit/s (or OPUS_AUTO / OPUS_BITRATE_MAX); returns OPUS_OK or OPUS_BAD_ARG.
int rtcs_opus_set_bitrate(OpusEncoder *enc, opus_int32 bits_per_second);
/// Reads the bitrate in bit/s being used; returns OPUS_OK or OPUS_BAD_ARG.
int rtcs_opus_get_bitrate(OpusEncoder *enc, opus_int32 *out);

/// Sets the complexity, 0 (cheapest) .. 10; returns OPUS_OK or OPUS_BAD_ARG out of range.
int rtcs_opus_set_complexity(OpusEncoder *enc, opus_int32 complexity);
/// Reads the complexity, 0 .. 10; returns OPUS_OK or OPUS_BAD_ARG.
int rtcs_opus_get_complexity(OpusEncoder *enc, opus_int32 *out);

/// Sets the signal hint (OPUS_AUTO, OPUS_SIGNAL_VOICE, OPUS_SIGNAL_MUSIC); returns OPUS_OK or OPUS_BAD_ARG.
int rtcs_opus_set_signal(OpusEncoder *enc, opus_int32 signal);
/// Reads the signal hint; returns OPUS_OK or OPUS_BAD_ARG.
int rtcs_opus_get_signal(OpusEncoder *enc, opus_int32 *out);

/// Turns in-band FEC (LBRR) on (1) or off (0); returns OPUS_OK or OPUS_BAD_ARG.
int rtcs_opus_set_inband_fec(OpusEncoder *enc, opus_int32 enabled);
/// Reads whether in-band FEC is on; returns OPUS_OK or OPUS_BAD_ARG.
int rtcs_opus_get_inband_fec(OpusEncoder *enc, opus_int32 *out);

/// Sets the expected packet loss, 0 .. 100 % (drives FEC redundancy); returns OPUS_OK or OPUS_BAD_ARG.
int rtcs_opus_set_packet_loss_perc(OpusEncoder *enc, opus_int32 percent);
/// Reads the expected packet loss in percent; returns OPUS_OK or OPUS_BAD_ARG.
int rtcs_opus_get_packet_loss_perc(OpusEncoder *enc, opus_int32 *out);

/// Turns discontinuous transmission on (1) or off (0); returns OPUS_OK or OPUS_BAD_ARG.
int rtcs_opus_set_dtx(OpusEncoder *enc, opus_int32 enabled);
/// Reads whether DTX is on; returns OPUS_OK or OPUS_BAD_ARG.
int rtcs_opus_get_dtx(OpusEncoder *enc, opus_int32 *out);

/// Chooses variable (1) or constant (0) bitrate; returns OPUS_OK or OPUS_BAD_ARG.
int rtcs_opus_set_vbr(OpusEncoder *enc, opus_int32 enabled);
/// Reads whether VBR is on; returns OPUS_OK or OPUS_BAD_ARG.
int rtcs_opus_get_vbr(OpusEncoder *enc, opus_int32 *out);

/// Reads the lookahead in samples at the encoder's rate (the RTP pre-skip); returns OPUS_OK or OPUS_BAD_ARG.
int rtcs_opus_get_lookahead(OpusEncoder *enc, opus_int32 *out);

#ifdef __cplusplus
}
#endif

#endif
