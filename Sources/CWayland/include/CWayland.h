#ifndef CWAYLAND_H
#define CWAYLAND_H

// One Wayland connection set up for wlroots screencopy (zwlr_screencopy_manager_v1), behind plain
// functions. The protocol's listeners are C callbacks that write into one state record; Swift
// reads that record between dispatches, so no Swift closure is ever a C callback and nothing of
// the protocol's object lifetimes leaks into Swift. The request code is what wayland-scanner
// generated from protocol/ (scripts/generate-wayland-protocol); nothing here writes wire bytes.
//
// Everything the compositor sends is checked before use: sizes, strides and formats against
// what was mapped, damage clipped to the buffer, output names cut to their field.

#include <stddef.h>
#include <stdint.h>

typedef struct rtcs_wl rtcs_wl;

/// Where the one frame in flight is.
typedef enum rtcs_wl_frame_state {
    RTCS_WL_FRAME_IDLE = 0,    ///< none asked for
    RTCS_WL_FRAME_ASKED,       ///< capture_output sent; the compositor has not described the buffer yet
    RTCS_WL_FRAME_DESCRIBED,   ///< the buffer it wants is in rtcs_wl_frame_info; copy or release
    RTCS_WL_FRAME_COPYING,     ///< copy sent; with damage, it waits until something is drawn
    RTCS_WL_FRAME_READY,       ///< the pixels are in the mapped buffer
    RTCS_WL_FRAME_FAILED,      ///< the compositor could not copy (the output went away, …)
} rtcs_wl_frame_state;

/// What the compositor said of the frame in flight.
typedef struct rtcs_wl_frame_info {
    uint32_t shm_format;    ///< a wl_shm format this module reads, or RTCS_WL_NO_FORMAT
    uint32_t offered_format;  ///< the last wl_shm format offered (for the message when none is readable)
    uint32_t width, height, stride;
    uint32_t red_first;     ///< 1: R G B X in memory (XBGR/ABGR), swapped before conversion
    uint32_t y_invert;      ///< 1: rows are bottom to top
    uint32_t damaged;       ///< 1: the box below is the union of the damage reported
    uint32_t damage_x, damage_y, damage_width, damage_height;
} rtcs_wl_frame_info;

#define RTCS_WL_NO_FORMAT 0xffffffffu
#define RTCS_WL_MAX_OUTPUTS 16

/// Connects to `display` (NULL: $WAYLAND_DISPLAY, else wayland-0), binds wl_shm, the screencopy
/// manager and the outputs, and waits until every output has described itself. NULL with a one-line
/// reason in `error` when any of that fails.
rtcs_wl *rtcs_wl_connect(const char *display, char *error, size_t error_len);
/// Closes the connection, the frame in flight and the mapped buffer.
void rtcs_wl_disconnect(rtcs_wl *w);

/// Outputs the compositor announced (at most RTCS_WL_MAX_OUTPUTS).
int rtcs_wl_output_count(const rtcs_wl *w);
/// Output `index`'s name ("HEADLESS-1", "HDMI-A-1"), "" when the compositor gives none (wl_output < 4).
const char *rtcs_wl_output_name(const rtcs_wl *w, int index);
/// Output `index`'s current mode in pixels (as the buffer holds it) and its wl_output transform.
void rtcs_wl_output_mode(const rtcs_wl *w, int index, int32_t *width, int32_t *height, int32_t *transform);
/// Captures come from output `index` from now on. 0, or -1 for an index out of range.
int rtcs_wl_output_select(rtcs_wl *w, int index);
/// Whether the selected output is still announced (0 once the compositor removed it).
int rtcs_wl_output_present(const rtcs_wl *w);
/// The screencopy manager's version bound (1..3); copy_with_damage needs 2.
uint32_t rtcs_wl_screencopy_version(const rtcs_wl *w);

/// Maps `bytes` of shared memory (memfd) the compositor copies frames into. 0, or -1 with a reason.
int rtcs_wl_shm_map(rtcs_wl *w, size_t bytes, char *error, size_t error_len);
/// The mapping's address (NULL before rtcs_wl_shm_map) and size.
uint8_t *rtcs_wl_shm_base(const rtcs_wl *w);
size_t rtcs_wl_shm_bytes(const rtcs_wl *w);

/// Asks for the next frame of the selected output (the cursor drawn in when overlay_cursor is 1).
/// Releases a finished frame first. 0, or -1 while a frame is still asked for or copying.
int rtcs_wl_frame_request(rtcs_wl *w, int overlay_cursor);
/// Copies the described frame into the mapping, waiting for damage when the manager has it.
/// 0; -1 when not described; -2 when the format is unreadable or the buffer does not fit the mapping.
int rtcs_wl_frame_copy(rtcs_wl *w);
/// Lets go of the frame in flight (its protocol object), whatever its state.
void rtcs_wl_frame_release(rtcs_wl *w);
rtcs_wl_frame_state rtcs_wl_frame_state_now(const rtcs_wl *w);
rtcs_wl_frame_info rtcs_wl_frame_info_now(const rtcs_wl *w);

/// Sends a wl_display.sync unless one is unanswered; its answer counts in rtcs_wl_pongs.
void rtcs_wl_ping(rtcs_wl *w);
/// Syncs the compositor answered so far.
uint64_t rtcs_wl_pongs(const rtcs_wl *w);

/// Sends what is queued, waits up to `timeout_ms` for events and handles them. 0, or -1 when the
/// connection is gone or broke on a protocol error (rtcs_wl_error says which).
int rtcs_wl_dispatch(rtcs_wl *w, int timeout_ms);
/// The last failure as one line.
const char *rtcs_wl_error(const rtcs_wl *w);

#endif
