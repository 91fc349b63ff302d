#ifndef CPORTAL_H
#define CPORTAL_H

// The ScreenCast portal (org.freedesktop.portal.ScreenCast over D-Bus, libdbus-1) and the
// PipeWire stream it hands over (libpipewire-0.3), behind plain functions. libdbus and
// libpipewire speak through variadic calls, inline SPA builders and C callbacks Swift cannot
// use; here their callbacks write into one state record that Swift reads between iterations,
// so no Swift closure is ever a C callback.
//
// Everything the portal and PipeWire hand over is checked before use: the negotiated format and
// size, each buffer's memory type, chunk offset, size and stride against what is mapped, crop
// and damage regions clipped to the picture, strings cut to their fields.

#include <stddef.h>
#include <stdint.h>

// MARK: the portal (portal.c)

typedef struct rtcs_portal rtcs_portal;

/// What the portal's Start gave: the PipeWire node of the first stream and its size (0 when
/// the portal gave none), and the restore token for the next session ("" when none).
typedef struct rtcs_portal_stream {
    uint32_t node;
    int32_t width, height;
    char restore_token[512];
} rtcs_portal_stream;

/// Opens a ScreenCast session on the session bus ($DBUS_SESSION_BUS_ADDRESS): CreateSession,
/// SelectSources (one monitor, the pointer drawn in when `cursor`, persisted until revoked with
/// `restore_token` when not NULL or ""), Start, then OpenPipeWireRemote. Waits up to
/// `start_timeout_ms` for Start (a dialog may be up), 10 s for the other steps. On success
/// fills `stream`, stores the PipeWire fd (owned by the caller) in `pipewire_fd` and returns the
/// session; on failure NULL with one line in `error`.
rtcs_portal *rtcs_portal_open(const char *restore_token, int cursor, int start_timeout_ms,
                              rtcs_portal_stream *stream, int *pipewire_fd, char *error, size_t error_len);

/// Reads what the bus sent without waiting; 1 while the session stands, 0 once it was closed,
/// the portal left the bus or the bus went away.
int rtcs_portal_alive(rtcs_portal *p);

/// Closes the session (when still there) and the connection; NULL is allowed.
void rtcs_portal_close(rtcs_portal *p);

// MARK: the PipeWire stream (pipewire_stream.c)

typedef struct rtcs_pw rtcs_pw;

/// Where the stream is.
typedef enum rtcs_pw_state {
    RTCS_PW_CONNECTING = 0,  ///< connected, format not agreed yet
    RTCS_PW_STREAMING,       ///< format agreed, buffers flowing (or the picture is still)
    RTCS_PW_FAILED,          ///< PipeWire or the node went away, or refused what was offered; see rtcs_pw_error
} rtcs_pw_state;

/// Byte orders the stream accepts (SPA names; in memory order).
typedef enum rtcs_pw_format {
    RTCS_PW_BGRX = 0,
    RTCS_PW_BGRA,
    RTCS_PW_RGBX,
    RTCS_PW_RGBA,
} rtcs_pw_format;

/// The newest buffer, checked: `data` points at its first visible pixel (crop applied),
/// `height` rows of `width` pixels `stride` bytes apart all lie in the mapped chunk.
typedef struct rtcs_pw_frame {
    uint8_t *data;
    uint32_t width, height, stride;
    uint32_t format;          ///< rtcs_pw_format
    uint32_t writable;        ///< 1: the mapping may be written (a red-first picture is swapped in place)
    uint32_t transform;       ///< wl_output numbering, 0...7 (SPA_META_VideoTransform; 0 without it)
    uint32_t damaged;         ///< 1: the box below bounds what changed since the last buffer taken (SPA_META_VideoDamage
                              ///< of this one and of those given back unread, clipped, crop-relative); 0: all of it
    uint32_t damage_x, damage_y, damage_width, damage_height;
} rtcs_pw_frame;

/// Connects to PipeWire over `fd` (taken over, closed on failure too) and asks node `node` for
/// BGRx/BGRA/RGBx/RGBA in shared memory (MemFd or MemPtr; DMA-BUF is not offered), at most
/// `max_buffers` buffers, `width` x `height` as the preferred size. NULL with one line on failure.
rtcs_pw *rtcs_pw_open(int fd, uint32_t node, int32_t width, int32_t height, uint32_t max_buffers,
                      char *error, size_t error_len);

/// Handles what arrives within `timeout_ms` (0: only what is there). Returns the state after.
rtcs_pw_state rtcs_pw_iterate(rtcs_pw *pw, int timeout_ms);

/// The failure's line (empty while none).
const char *rtcs_pw_error(const rtcs_pw *pw);

/// The agreed size (0 before), buffers received and buffers given back unread (empty or corrupted).
void rtcs_pw_size(const rtcs_pw *pw, uint32_t *width, uint32_t *height);
uint64_t rtcs_pw_buffers_seen(const rtcs_pw *pw);
uint64_t rtcs_pw_buffers_skipped(const rtcs_pw *pw);

/// Fills `frame` from the newest buffer held and returns 1; 0 when none is held; -1 when the held
/// buffer is unusable (the reason in rtcs_pw_error; the buffer is given back).
int rtcs_pw_frame_take(rtcs_pw *pw, rtcs_pw_frame *frame);

/// Gives the held buffer back to the producer (after its pixels were read).
void rtcs_pw_frame_release(rtcs_pw *pw);

/// Disconnects and frees; NULL is allowed.
void rtcs_pw_close(rtcs_pw *pw);

#endif
