// The scaler behind ccore_plane_scale, ccore_i420_scale and ccore_transform (not installed).
//
// Sampling, per axis, for an output of d samples from a source of s samples:
//   bilinear  source position (x + 0.5) * s / d - 0.5, clamped to [0, s-1], held in 16.16
//             fixed point; the two neighbours are blended with the fraction.
//   box       output x averages source samples [floor(x*s/d), floor((x+1)*s/d)): an area
//             average on integer boundaries. Only on a shrinking axis; an axis that does not
//             shrink is bilinear even under CCORE_FILTER_BOX.
// Arithmetic, shared bit for bit by the scalar and SIMD kernels:
//   vertical bilinear    v = r0 + ((r1 - r0) * f15 + 2^14) >> 15   (f15: 15-bit fraction;
//                        exactly what pmulhrsw computes), rounded to 8 bits;
//   horizontal bilinear  (m0 * (2^14 - f14) + m1 * f14 + 2^13) >> 14;
//   box                  round(sum / count) on exact 32/64-bit sums, one rounding per pixel.
// The worst error against exact real-valued sampling is thus 0.5 (vertical rounding) + about
// 255/2^14 (both weights' precision) before the final rounding, so every output is within 1 of
// the rounded double-precision reference.
//
// The scaler is driven row by row: the caller asks which source row it needs next
// (ccore_scaler_need) and hands rows in increasing order (ccore_scaler_feed). Rows arrive by
// pointer, so a row may come straight from the source or from a converted row in scratch; the
// scaler only keeps pointers to the last two rows fed, which the caller must keep valid until it
// feeds the next row after them. Each finished output row is written through a callback,
// which lets ccore_transform collect rows into strips. Every byte of memory the scaler uses
// comes from the caller (a stack buffer or the transform's scratch).
#ifndef CCORE_SCALE_H
#define CCORE_SCALE_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/// Fraction bits of the horizontal bilinear weights.
#define CCORE_SCALE_HBITS 14
/// Output columns per SIMD horizontal group.
#define CCORE_SCALE_GROUP 16
/// Bytes of readable slack kept after the intermediate row, so a 16-byte SIMD window that
/// starts at any column of it stays inside the buffer.
#define CCORE_SCALE_MID_SLACK 64

/// Precomputed gather-and-blend description of 16 consecutive output columns of a
/// horizontal bilinear pass whose taps fit a 16-byte window per 8 outputs (any upscale, any
/// downscale up to 2x).
typedef struct ccore_hgroup {
    int32_t base[2];  ///< offsets in the intermediate row of the windows of outputs 0-7, 8-15
    uint8_t shuf[32]; ///< per output, the (left, right) byte pair within its window
    int16_t wlo[16];  ///< (2^14 - f, f) of outputs 0-3 then 8-11
    int16_t whi[16];  ///< (2^14 - f, f) of outputs 4-7 then 12-15
} ccore_hgroup;

/// Row kernels of one instruction set.
typedef struct ccore_scale_kernels {
    /// mid[i] = bilinear blend of r0[i] and r1[i] with 15-bit fraction f15 (1..32767).
    void (*vlerp)(const uint8_t *r0, const uint8_t *r1, uint8_t *mid, int32_t n, int f15);
    /// acc[i] = (first ? 0 : acc[i]) + src[i].
    void (*vacc)(const uint8_t *src, uint32_t *acc, int32_t n, int first);
    /// 16 outputs per group from the intermediate row; NULL when only the scalar pass exists.
    void (*hgroups)(const uint8_t *mid, const ccore_hgroup *groups, int32_t count, uint8_t *dst);
} ccore_scale_kernels;

void ccore_scale_vlerp_c(const uint8_t *r0, const uint8_t *r1, uint8_t *mid, int32_t n, int f15);
void ccore_scale_vacc_c(const uint8_t *src, uint32_t *acc, int32_t n, int first);
#if CCORE_X86
void ccore_scale_vlerp_ssse3(const uint8_t *r0, const uint8_t *r1, uint8_t *mid, int32_t n,
                             int f15);
void ccore_scale_vacc_ssse3(const uint8_t *src, uint32_t *acc, int32_t n, int first);
void ccore_scale_hgroups_ssse3(const uint8_t *mid, const ccore_hgroup *groups, int32_t count,
                               uint8_t *dst);
void ccore_scale_vlerp_avx2(const uint8_t *r0, const uint8_t *r1, uint8_t *mid, int32_t n,
                            int f15);
void ccore_scale_vacc_avx2(const uint8_t *src, uint32_t *acc, int32_t n, int first);
void ccore_scale_hgroups_avx2(const uint8_t *mid, const ccore_hgroup *groups, int32_t count,
                              uint8_t *dst);
#endif
#if CCORE_ARM64
void ccore_scale_vlerp_neon(const uint8_t *r0, const uint8_t *r1, uint8_t *mid, int32_t n,
                            int f15);
void ccore_scale_vacc_neon(const uint8_t *src, uint32_t *acc, int32_t n, int first);
void ccore_scale_hgroups_neon(const uint8_t *mid, const ccore_hgroup *groups, int32_t count,
                              uint8_t *dst);
#endif

/// The widest kernels the current CPU feature mask allows.
ccore_scale_kernels ccore_scale_pick_kernels(void);

/// Resolves CCORE_FILTER_AUTO for a plane of this size: CCORE_FILTER_BOX or _BILINEAR.
ccore_scale_filter ccore_scale_resolve(int32_t sw, int32_t sh, int32_t dw, int32_t dh,
                                       ccore_scale_filter filter);

/// Receives finished output row y; returns where to write its (xb - xa) bytes.
typedef uint8_t *(*ccore_scaler_out_fn)(void *ctx, int32_t y);

/// One plane's scaling state over output columns [xa, xb). Lives in caller memory.
typedef struct ccore_scaler {
    int32_t sw, sh, dw, dh;
    int hbox, vbox;          // box on this axis, else bilinear
    int32_t xa, xb;          // output columns produced
    int32_t s0, s1;          // source columns read, [s0, s1)
    int32_t *hix;            // per output: first source column, relative to s0
    uint16_t *hw;            // per output: bilinear weight of hix+1, or box width
    ccore_hgroup *groups;    // SIMD layout of the first ngroups*16 outputs, then the tail group
    int32_t ngroups;
    int tail_group;          // groups[ngroups] covers the last 16 outputs (overlapping)
    uint8_t *mid;            // one intermediate row: s1 - s0 + CCORE_SCALE_MID_SLACK bytes
    uint32_t *acc;           // box sums: s1 - s0 words (NULL unless an axis is box)
    ccore_scale_kernels k;
    int32_t y;               // next output row
    int32_t row_a, row_b;    // last two rows fed (row_a older), -1 when none
    const uint8_t *ptr_a, *ptr_b;
    ccore_scaler_out_fn out;
    void *out_ctx;
} ccore_scaler;

/// Bytes ccore_scaler_init needs for `cols` output columns reading `span` source columns.
size_t ccore_scaler_bytes(int32_t cols, int32_t span, int box);

/// Source column span [*s0, *s1) that output columns [xa, xb) read.
void ccore_scaler_span(int32_t sw, int32_t dw, int hbox, int32_t xa, int32_t xb, int32_t *s0,
                       int32_t *s1);

/// Plans scaling sw x sh to dw x dh (filter already resolved, not AUTO) for output columns
/// [xa, xb), carving its tables from mem (at least ccore_scaler_bytes, 64-byte aligned).
void ccore_scaler_init(ccore_scaler *s, int32_t sw, int32_t sh, int32_t dw, int32_t dh,
                       ccore_scale_filter filter, int32_t xa, int32_t xb, void *mem,
                       const ccore_scale_kernels *k, ccore_scaler_out_fn out, void *out_ctx);

/// The next source row the scaler needs, or INT32_MAX once every output row is written.
int32_t ccore_scaler_need(const ccore_scaler *s);

/// Hands source row `row` (pointer to its column 0). Rows below ccore_scaler_need are
/// ignored; rows must come in increasing order. Writes every output row that becomes ready.
void ccore_scaler_feed(ccore_scaler *s, int32_t row, const uint8_t *p);

#endif
