#ifndef RTCS_SHIMS_H
#define RTCS_SHIMS_H

// Non-variadic doors into libvpx, libopus and openh264 for Swift. Swift cannot call C variadic
// functions (vpx_codec_control_, opus_encoder_ctl) nor function-like macros (vpx_codec_enc_init,
// vpx_codec_dec_init, which bake the ABI version of the headers in), so each call Swift needs
// gets a fixed-signature wrapper here. openh264 is a C++ interface seen from C as a table of
// function pointers taking `void *` options; its wrappers (rtcs_openh264_*) keep the parameter
// structs, option ids and the layer walk in C, where the headers describe them. The libvpx and
// libopus wrappers allocate nothing and keep no state; the openh264 ones own one small handle
// each, made at open and freed at close.

#include <vpx/vpx_encoder.h>
#include <vpx/vpx_decoder.h>
#include <vpx/vp8cx.h>
#include <vpx/vp8dx.h>
#include <opus/opus.h>
#include <stddef.h>
#include <stdint.h>

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

/// Sets VP8's active map (VP8E_SET_ACTIVEMAP) from `map`, `rows` x `cols` macroblocks, nonzero
/// active (libvpx copies it); a NULL map makes every macroblock active again. Returns
/// VPX_CODEC_OK, or the libvpx error (VPX_CODEC_INVALID_PARAM for a size not the encoder's).
vpx_codec_err_t rtcs_vpx_set_active_map(vpx_codec_ctx_t *ctx, const unsigned char *map, unsigned int rows,
                                        unsigned int cols);

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

// ---- openh264 ----
// Return values: 0 on success, else openh264's own code (a CM_RETURN, or a DECODING_STATE for
// the decoder), -1 for an argument these wrappers refuse, or RTCS_OPENH264_NOT_LOADED.
// The library is loaded (dlopen) by the first open of an encoder or decoder, not linked.

/// The library could not be loaded; `rtcs_openh264_load_error` says why.
#define RTCS_OPENH264_NOT_LOADED (-3)
/// Loads libopenh264 once (thread-safe; later calls return the first outcome): 0 or
/// RTCS_OPENH264_NOT_LOADED.
int rtcs_openh264_load(void);
/// Why loading failed, one line (static storage).
const char *rtcs_openh264_load_error(void);

/// An openh264 encoder with what one encode call needs (the bitstream description).
typedef struct rtcs_openh264_encoder rtcs_openh264_encoder;

/// How the encoder is opened. Always: one spatial and one temporal layer, constrained baseline
/// (CAVLC, no B-frames), one thread, constant SPS/PPS ids, no IDR of its own accord.
typedef struct rtcs_openh264_encoder_params {
    int width, height;          ///< even, 16 ... 4096
    int bitrate_bps;            ///< target bitrate
    float max_frame_rate;       ///< nominal frame rate (openh264 follows timestamps after)
    int screen_content;         ///< non-zero: SCREEN_CONTENT_REAL_TIME, else CAMERA_VIDEO_REAL_TIME
    int max_slice_bytes;        ///< 0: one slice per picture; else slices of at most this many bytes
    int min_qp, max_qp;         ///< quantizer range, 0 ... 51
    int frame_skip;             ///< non-zero: rate control may skip a picture to hold the rate
    int level_idc;              ///< H.264 level times ten (31 = 3.1); 0: openh264 picks
} rtcs_openh264_encoder_params;

/// Creates and opens an encoder in `*out`; returns 0, or the failing code (`*out` untouched).
int rtcs_openh264_encoder_open(const rtcs_openh264_encoder_params *params, rtcs_openh264_encoder **out);

/// Closes and frees an encoder (NULL is ignored).
void rtcs_openh264_encoder_close(rtcs_openh264_encoder *encoder);

/// Sets the target (and maximum) bitrate from the next picture on; returns 0 or the code.
int rtcs_openh264_encoder_set_bitrate(rtcs_openh264_encoder *encoder, int bitrate_bps);

/// Makes the next picture an IDR (SPS and PPS go with it); returns 0 or the code.
int rtcs_openh264_encoder_force_idr(rtcs_openh264_encoder *encoder);

/// From the next picture on: `qp` 1 ... 51 codes every picture at that quantizer, rate control
/// off (openh264's RC_OFF_MODE); 0 turns rate control back on. Returns 0 or the code.
int rtcs_openh264_encoder_set_fixed_qp(rtcs_openh264_encoder *encoder, int qp);

/// Encodes one I420 picture at the encoder's size, `timestamp_ms` increasing. On success
/// `*out`/`*out_bytes` are the access unit in Annex B form (start codes, parameter sets first on
/// an IDR), in openh264's buffer, valid until the next call; `*frame_type` is openh264's
/// EVideoFrameType (videoFrameTypeSkip, with `*out_bytes` 0, when rate control dropped it).
/// Returns 0 or the code (-2 if openh264 ever wrote the layers apart, which it does not).
int rtcs_openh264_encoder_encode(rtcs_openh264_encoder *encoder, const uint8_t *y, const uint8_t *u,
                                 const uint8_t *v, int stride_y, int stride_u, int stride_v,
                                 int64_t timestamp_ms, const uint8_t **out, size_t *out_bytes,
                                 int *frame_type);

/// An openh264 decoder.
typedef struct rtcs_openh264_decoder rtcs_openh264_decoder;

/// A decoded I420 picture in the decoder's buffers (valid until the next decode call).
typedef struct rtcs_openh264_picture {
    const uint8_t *planes[3];
    int strides[3];             ///< luma stride, then the chroma stride twice
    int width, height;
} rtcs_openh264_picture;

/// Creates and opens a decoder (one thread, no reordering delay); returns 0 or the code.
int rtcs_openh264_decoder_open(rtcs_openh264_decoder **out);

/// Closes and frees a decoder (NULL is ignored).
void rtcs_openh264_decoder_close(rtcs_openh264_decoder *decoder);

/// Decodes one access unit (Annex B). Returns 0 when the call succeeded — then `*has_picture`
/// says whether `*picture` holds one — or openh264's DECODING_STATE bits.
int rtcs_openh264_decoder_decode(rtcs_openh264_decoder *decoder, const uint8_t *bytes, size_t count,
                                 rtcs_openh264_picture *picture, int *has_picture);

// ---- start-up zero-fill ----
// libvpx's VP8 encoder and openh264 zero-fill their big buffers with memset right after
// malloc hands them fresh pages (libvpx's token buffer: 48 MiB at 1920x1080), which makes every
// page resident at once. For the length of an encoder's start, the library's own memset is
// pointed at `ccore_zero_fill_sparse`, which leaves out the whole pages that already read as
// zeros without being resident: the library sees the same bytes, the pages stay unbacked until
// the encoder writes them.

/// The library whose memset is watched.
typedef enum rtcs_zerofill_library {
    RTCS_ZEROFILL_LIBVPX = 0,    ///< libvpx, as linked
    RTCS_ZEROFILL_OPENH264 = 1,  ///< libopenh264, once `rtcs_openh264_load` has loaded it
} rtcs_zerofill_library;

/// Points `library`'s calls to memset at the sparse zero-fill until `rtcs_zerofill_end`.
/// Returns 0, or -1 when it cannot (another window open, the library not loaded, no memset
/// slot found, its page not writable): then nothing was changed and the start goes on as usual.
int rtcs_zerofill_begin(rtcs_zerofill_library library);

/// Puts the library's memset back as it was; returns the bytes of zero-fill left out since
/// `rtcs_zerofill_begin` (0 when no window is open).
size_t rtcs_zerofill_end(void);

/// The largest single zero-fill the last window saw go through the sparse fill: its start and
/// length (NULL and 0 when none). For an encoder to find its biggest buffer again.
void rtcs_zerofill_largest(void **start, size_t *bytes);

#ifdef __cplusplus
}
#endif

#endif
