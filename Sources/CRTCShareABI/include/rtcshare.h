/*
 * rtcshare.h: the C ABI of rtcshare, a screen-sharing sender inside a fixed memory budget.
 *
 * Link with -lrtcshare-c (shared) or librtcshare-c-static.a plus the Swift runtime.
 *
 * Model: a process budget (one cap for the whole process, the runtime counted once) holds any
 * number of sessions; a session is planned and its memory reserved when it is created, so a
 * session that would not fit is refused (RTCSHARE_E_DOES_NOT_FIT) and the others are untouched.
 * A session runs on a thread of its own from rtcshare_session_start until its duration passes,
 * its source ends, or rtcshare_session_stop.
 *
 * Threading: every function is thread-safe unless it says otherwise. The event callback runs on
 * the session's own thread; it must return quickly and must not call rtcshare_session_wait or
 * rtcshare_session_destroy on its own session.
 *
 * Ownership: strings and buffers passed in are read during the call only (the library keeps no
 * pointer to them). Strings handed to the callback live until it returns. Objects created by
 * *_create are owned by the caller and given back with the matching *_destroy.
 *
 * Errors: functions return RTCSHARE_OK (0) or a negative RTCSHARE_E_* code;
 * rtcshare_error_message turns a code into one line (static storage). The last error of a
 * session (with its detail) is available from rtcshare_session_last_error.
 */
#ifndef RTCSHARE_H
#define RTCSHARE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RTCSHARE_ABI_VERSION 1

enum rtcshare_status {
    RTCSHARE_OK = 0,
    RTCSHARE_E_INVALID_ARGUMENT = -1, /* a NULL pointer, a value out of range, a bad string */
    RTCSHARE_E_DOES_NOT_FIT = -2,     /* the session's plan is over what the process has left */
    RTCSHARE_E_SOURCE = -3,           /* the source cannot be opened or failed */
    RTCSHARE_E_OUTPUT = -4,           /* a file, socket or thread cannot be opened */
    RTCSHARE_E_PIPELINE = -5,         /* encoding or sending failed while running */
    RTCSHARE_E_STATE = -6,            /* not allowed now: started twice, waited before start */
    RTCSHARE_E_BUSY = -7,             /* push: every slot is busy downstream; dropped, counted */
    RTCSHARE_E_NOT_RUNNING = -8,      /* push: the session is not running */
    /* WHIP publications (the detail is rtcshare_session_last_error's): */
    RTCSHARE_E_UNAUTHORIZED = -9,     /* the WHIP server refused the token (HTTP 401/403), or it is unusable */
    RTCSHARE_E_SERVER = -10,          /* the WHIP exchange failed: another HTTP status, no Location, a
                                         timeout, an answer that cannot be used */
    RTCSHARE_E_CONNECT = -11,         /* ICE found no working path to the server in time */
    RTCSHARE_E_SECURITY = -12,        /* DTLS failed: the server's certificate is not the answer's
                                         fingerprint, a handshake timeout, SRTP keys unusable */
    RTCSHARE_E_PEER_GONE = -13,       /* the server stopped answering (consent lost), closed DTLS, or its port closed */
    RTCSHARE_E_SERVER_UNAVAILABLE = -14, /* the WHIP server is away for now: HTTP 5xx, 408, 429, a
                                            timeout, a refused or reset connection */
    RTCSHARE_E_SECURITY_REFUSED = -15,   /* DTLS can never work with this answer: the server's
                                            certificate is not its fingerprint, no SRTP profile in common */
    RTCSHARE_E_RESOURCE = -16,           /* the system ran short: memory or address space, a library
                                            (libcurl, OpenSSL) that cannot be loaded or initialised */
};
/* Permanent and temporary failures. Retrying cannot help after _UNAUTHORIZED, _SERVER (HTTP 400,
 * 404, 415, 422 or another 4xx, an answer that cannot be used: no common codec, video rejected,
 * bad SDP, not application/sdp, 200 instead of 201, no Location) and _SECURITY_REFUSED; it may
 * after _SERVER_UNAVAILABLE, _CONNECT, _SECURITY, _PEER_GONE and _RESOURCE:
 * rtcshare_status_is_temporary says which. */

/* Pixel formats a pushed picture may have. */
enum rtcshare_pixel_format {
    RTCSHARE_PIXEL_I420 = 0, /* planes: Y, U, V */
    RTCSHARE_PIXEL_NV12 = 1, /* planes: Y, UV */
    RTCSHARE_PIXEL_BGRA = 2, /* one plane, 4 bytes a pixel */
    RTCSHARE_PIXEL_BGRX = 3,
};

enum rtcshare_audio {
    RTCSHARE_AUDIO_NONE = 0,
    RTCSHARE_AUDIO_PUSHED = 1,   /* PCM from rtcshare_session_push_audio */
    RTCSHARE_AUDIO_TESTTONE = 2, /* a 440 Hz tone */
};

/* The video codec of a session. */
enum rtcshare_codec {
    RTCSHARE_CODEC_AUTO = 0, /* VP8 with a peer; with WHIP both are offered (VP8 first), the answer picks */
    RTCSHARE_CODEC_VP8 = 1,
    RTCSHARE_CODEC_H264 = 2, /* H.264 constrained baseline (openh264), RFC 6184 packetization-mode 1 */
};

/* A session's settings. Fill with rtcshare_config_init, then change what differs. Fields are
 * only ever appended: a caller built against an older header passes its smaller struct_size,
 * and what it does not have takes its default. */
typedef struct rtcshare_config {
    uint32_t struct_size;     /* sizeof(rtcshare_config), set by rtcshare_config_init */
    const char *source;       /* "push" (default), "testsrc", "y4m:PATH", "x11[:DISPLAY]", "wayland[:OUTPUT]", "portal", "ipc:PATH" */
    int32_t width, height;    /* output size; 0, 0 = the largest that fits */
    int32_t max_width, max_height; /* "push": largest picture pushed (either orientation); default 1280x720 */
    int32_t fps;              /* frames per second sent (default 20) */
    int32_t idle_fps;         /* frame rate while the picture is static; 0 = always fps */
    int32_t bitrate_kbps;     /* video bitrate ceiling (default 1500) */
    int32_t audio;            /* enum rtcshare_audio (default NONE) */
    const char *peer;         /* "host:port" to send RTP/SRTP to; NULL: no network output */
    const char *srtp_key;     /* base64 AES_CM_128_HMAC_SHA1_80 key+salt; NULL: generated */
    int32_t insecure;         /* non-zero: plain RTP (no SRTP) */
    int32_t rtx;              /* non-zero: retransmit on an RTX stream */
    const char *ivf_path;     /* also write the video stream to this IVF file; NULL: no */
    double duration_seconds;  /* stop after this long; 0 = until stopped */
    const char *whip_url;     /* publish into this WHIP endpoint (ICE, DTLS-SRTP) instead of `peer`; NULL: no */
    const char *whip_token;   /* its bearer token, or NULL (never logged) */
    const char *whip_bind;    /* "host:port" the session's UDP socket binds; NULL: every IPv4 interface */
    int32_t video_codec;      /* enum rtcshare_codec (default AUTO); appended in ABI version 1's second edition */
    int32_t reclaim_encoder_memory; /* non-zero: give back the all-zero pages libvpx writes when its
                                 * encoder starts (~17 MiB at 1280x720, ~10 MiB at 960x540). Only
                                 * if no thread of the process outside rtcshare allocates and
                                 * writes memory while a session is created: pages of memory mapped
                                 * meanwhile that read as zeros are returned to the kernel. Default 0.
                                 * Appended with video_codec (same struct_size). */
    const char *whip_stun;    /* "host:port" of a STUN server asked for the session's public address
                               * before the WHIP offer (a server-reflexive candidate, for a gateway
                               * behind NAT); a server that does not answer costs at most ~1 s and
                               * the offer goes with host candidates. NULL: none. Appended in ABI
                               * version 1's third edition. */
    int32_t whip_reconnect;   /* a lost connection (or a POST answered 5xx, timed out) is published
                               * again with back-off (1 s doubling to 30 s, Retry-After honoured),
                               * reported by RTCSHARE_EVENT_RECONNECTING / _RECONNECTED: 0 (default)
                               * for ever, N > 0 at most N attempts in a row, -1 never (the first
                               * failure ends the session). Appended in ABI version 1's fourth
                               * edition. */
    /* ICE servers, appended in ABI version 1's fifth edition (a struct_size up to whip_reconnect
     * is still taken): */
    const char *whip_ice_servers; /* STUN and TURN URIs (RFC 7064/7065), separated by spaces or commas:
                               * "stun:192.0.2.1:3478 turn:192.0.2.1:3478?transport=tcp turns:turn.example.net:443".
                               * A relayed candidate is allocated before the offer on the best TURN
                               * server that answers (UDP, then TCP, then TLS). TURN servers a WHIP
                               * answer names in Link headers are used as well. NULL: none. */
    const char *whip_ice_username;   /* the TURN servers' username */
    const char *whip_ice_credential; /* the TURN servers' password (never logged) */
    int32_t whip_ice_transport_policy; /* 0: all candidates; 1: relay only (nothing leaves but toward
                               * the TURN server) */
    const char *whip_ice_ca_file; /* PEM CAs a turns: server's certificate must chain to; NULL: the
                               * system's store */
} rtcshare_config;

/* A picture handed in; planes are read during the call only. */
typedef struct rtcshare_video_frame {
    int32_t format;           /* enum rtcshare_pixel_format */
    int32_t width, height;    /* even, at least 16 */
    const uint8_t *planes[3];
    int32_t strides[3];       /* bytes from one row to the next, per plane */
    int64_t pts_us;           /* capture time, CLOCK_MONOTONIC microseconds; 0 = now */
    int32_t orientation;      /* EXIF 1..8: how the stored pixels must be turned to be upright */
} rtcshare_video_frame;

enum rtcshare_event_type {
    RTCSHARE_EVENT_STARTING = 1,
    RTCSHARE_EVENT_STARTED = 2,
    RTCSHARE_EVENT_PAUSED = 3,
    RTCSHARE_EVENT_RESUMED = 4,
    RTCSHARE_EVENT_SOURCE_STALLED = 5,   /* value: restart attempt */
    RTCSHARE_EVENT_SOURCE_RECOVERED = 6, /* value: milliseconds stalled */
    RTCSHARE_EVENT_PROGRESS = 7,         /* once a second; rtcshare_session_stats has the figures */
    RTCSHARE_EVENT_NOTICE = 8,           /* text: one line */
    RTCSHARE_EVENT_FINISHED = 9,         /* text: the reason ("duration reached", "stopped: …", "failed: …") */
    RTCSHARE_EVENT_RECEIVER_SILENT = 10, /* value: ms without RTCP from the receiver; text: the output */
    RTCSHARE_EVENT_RECEIVER_HEARD_AGAIN = 11, /* value: ms the silence lasted; text: the output */
    RTCSHARE_EVENT_MEMORY_PRESSURE = 12, /* value: resident bytes; text: what gave way ("frame rate lowered to 10 fps") */
    RTCSHARE_EVENT_RECEIVER_LEFT = 13,   /* the receiver sent RTCP BYE; the share goes on; text: the output */
    RTCSHARE_EVENT_RECONNECTING = 14,    /* the connection was lost or a POST failed; value: attempt (1, 2, …); text: why */
    RTCSHARE_EVENT_RECONNECTED = 15,     /* media flows again; value: ms since the connection was lost */
};

typedef struct rtcshare_event {
    int32_t type;     /* enum rtcshare_event_type */
    int64_t value;
    const char *text; /* NULL or a line valid until the callback returns */
} rtcshare_event;

typedef void (*rtcshare_event_callback)(void *user_data, const rtcshare_event *event);

/* Counters of a session (a snapshot). */
typedef struct rtcshare_stats {
    double elapsed_seconds;
    int64_t source_frames, encoded_frames, repeated_frames, keyframes;
    int64_t encoded_bytes, audio_packets;
    int64_t target_bitrate_kbps;
    int64_t packets_sent, bytes_sent, nacks_received, packets_retransmitted;
    int64_t round_trip_us;    /* -1 until a receiver report came */
    int64_t pushed_accepted, pushed_dropped;
    int64_t wakeups;
} rtcshare_stats;

typedef struct rtcshare_process rtcshare_process;
typedef struct rtcshare_session rtcshare_session;

/* The library's version, the one `rtcshare --version` prints, and the ABI version
   ("0.1.0 (abi 1)"); static storage. */
const char *rtcshare_version(void);

/* One line for a status code; static storage. */
const char *rtcshare_error_message(int32_t code);

/* 1 when the failure `code` names may pass (try again later, with a back-off), 0 when retrying
   the same configuration cannot help or `code` is not a failure. */
int32_t rtcshare_status_is_temporary(int32_t code);

/* Defaults for every field. */
void rtcshare_config_init(rtcshare_config *config);

/* A process budget of cap_bytes for all sessions (0: 50 MiB). NULL if out of memory. */
rtcshare_process *rtcshare_process_create(uint64_t cap_bytes);

/* Bytes not yet reserved by any session. */
uint64_t rtcshare_process_available_bytes(const rtcshare_process *process);

/* Gives the budget back; every session made in it must have been destroyed first. */
void rtcshare_process_destroy(rtcshare_process *process);

/* Plans and prepares a session inside `process` (opens its source, sockets, files; with
 * whip_url it also makes the WHIP exchange, so this call blocks for up to its HTTP timeout). On success
 * *out_session is set and owned by the caller. `callback` may be NULL. */
int32_t rtcshare_session_create(rtcshare_process *process, const rtcshare_config *config,
                                rtcshare_event_callback callback, void *user_data,
                                rtcshare_session **out_session);

/* Runs the session on a thread of its own. */
int32_t rtcshare_session_start(rtcshare_session *session);

/* Hands in a picture ("push" source); never blocks. RTCSHARE_E_BUSY / _NOT_RUNNING: dropped. */
int32_t rtcshare_session_push_video(rtcshare_session *session, const rtcshare_video_frame *frame);

/* Hands in interleaved signed 16-bit PCM (RTCSHARE_AUDIO_PUSHED); never blocks. */
int32_t rtcshare_session_push_audio(rtcshare_session *session, const void *pcm, size_t bytes,
                                    int32_t sample_rate, int32_t channels, int32_t big_endian);

int32_t rtcshare_session_pause(rtcshare_session *session);
int32_t rtcshare_session_resume(rtcshare_session *session);
int32_t rtcshare_session_request_keyframe(rtcshare_session *session);
int32_t rtcshare_session_set_bitrate(rtcshare_session *session, int32_t kbps);

/* Asks the session to stop; `reason` (may be NULL) becomes the finished event's text. */
int32_t rtcshare_session_stop(rtcshare_session *session, const char *reason);

/* Waits for the session to finish; fills `stats` (may be NULL). Returns the session's outcome. */
int32_t rtcshare_session_wait(rtcshare_session *session, rtcshare_stats *stats);

/* The latest counters (from the last progress event, or the final ones). */
int32_t rtcshare_session_stats(rtcshare_session *session, rtcshare_stats *stats);

/* The codec the session encodes with, an RTCSHARE_CODEC_* (never AUTO: with WHIP, what the
 * server's answer kept). */
int32_t rtcshare_session_video_codec(rtcshare_session *session);

/* The SDP a receiver opens (it holds the SRTP key), NUL-terminated into buffer. Returns the
 * length without the NUL, RTCSHARE_E_INVALID_ARGUMENT if it does not fit or there is no peer. */
int32_t rtcshare_session_sdp(rtcshare_session *session, char *buffer, size_t buffer_size);

/* The last error of the session as one line, NUL-terminated into buffer (empty if none). */
int32_t rtcshare_session_last_error(rtcshare_session *session, char *buffer, size_t buffer_size);

/* Stops (if running), waits, and frees the session; its memory goes back to the process. */
void rtcshare_session_destroy(rtcshare_session *session);

#ifdef __cplusplus
}
#endif

#endif
