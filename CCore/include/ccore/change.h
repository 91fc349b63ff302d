#ifndef CCORE_CHANGE_H
#define CCORE_CHANGE_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Which 16x16 macroblocks of an I420 picture changed since the last picture it was shown,
/// without keeping that picture: one 64-bit signature per macroblock (its 16x16 luma and two
/// 8x8 chroma blocks) is all that stays, 9 bytes a macroblock with the activity count (33 KiB
/// at 1280x720, against 1.3 MiB for a copy of the frame). An encoder reads the activity as an
/// active map: a macroblock that changed stays active for `hold` more pictures, so the frames
/// after a change still refine it; one unchanged for that long can be coded as skipped.
typedef struct ccore_change_map ccore_change_map;

/// What one update found.
typedef struct ccore_change_counts {
    uint32_t changed; ///< macroblocks whose pixels differ from the last picture's
    uint32_t active;  ///< macroblocks whose activity count is above 0 after the update
    uint32_t total;   ///< macroblocks in the picture
} ccore_change_counts;

/// Bytes a change map for pictures of width x height needs (8-byte aligned memory), or 0 for a
/// size outside 1...16383.
size_t ccore_change_map_bytes(int32_t width, int32_t height);

/// Lays a change map out in [mem, mem+len) (8-byte aligned). Nothing counts as seen: the first
/// update finds every macroblock changed. Returns CCORE_OK and the map in *out;
/// CCORE_ERR_INVALID for a bad size, pointer or alignment; CCORE_ERR_TOO_SMALL when len is
/// below ccore_change_map_bytes.
ccore_status ccore_change_map_init(void *mem, size_t len, int32_t width, int32_t height,
                                   ccore_change_map **out);

/// Compares `frame` (I420 at the map's size) with the picture of the last update, macroblock by
/// macroblock: a changed one's activity count becomes `hold` (at least 1), every other one's
/// goes down by one, not below 0. Fills *counts (may be NULL). Returns CCORE_OK, or
/// CCORE_ERR_INVALID (nothing changed in the map) for a frame of another format or size.
ccore_status ccore_change_map_update(ccore_change_map *map, const ccore_image *frame, uint8_t hold,
                                     ccore_change_counts *counts);

/// The picture of the last update is coded again (a repeat): every activity count goes down
/// by one. Fills *counts (may be NULL).
void ccore_change_map_age(ccore_change_map *map, ccore_change_counts *counts);

/// The picture of the last update was not coded after all (the encoder's rate control dropped
/// it): every active macroblock's count becomes hold + 1 (at most 255), so what changed in it
/// stays active through the next update, whatever `hold` is.
void ccore_change_map_renew(ccore_change_map *map, uint8_t hold);

/// Every macroblock was coded afresh (a keyframe): each count becomes at least `count`, so the
/// frames after it refine the whole picture, not only what changes.
void ccore_change_map_activate_all(ccore_change_map *map, uint8_t count);

/// Forgets the last picture: the next update finds every macroblock changed.
void ccore_change_map_reset(ccore_change_map *map);

/// The activity counts, one byte a macroblock, row after row (libvpx's active-map layout:
/// nonzero is active); *rows and *cols get the macroblock rows and columns.
const uint8_t *ccore_change_map_activity(const ccore_change_map *map, int32_t *rows, int32_t *cols);

#ifdef __cplusplus
}
#endif
#endif
