// The portal's screen as a PipeWire stream (libpipewire-0.3): connected over the fd the portal
// opened, its loop iterated from the source's own thread (no pw_thread_loop: the capture already
// waits in one place, and a second thread would only hand frames across). Buffers are shared
// memory the producer writes (MemFd mapped by PipeWire, or MemPtr); DMA-BUF is not offered, so a
// GPU-only producer fails negotiation with one line instead of handing over what cannot be read.
//
// One buffer is held at a time, the newest: a new one arriving while an older is held gives the
// older back at once, so the producer never runs dry and a slow conversion skips pictures
// instead of queueing them.

#include "CPortal.h"
#include "library.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <spa/buffer/meta.h>
#include <spa/utils/result.h>
#include <spa/param/video/format-utils.h>
#include <spa/pod/builder.h>

struct rtcs_pw {
    struct pw_loop *loop;
    struct pw_context *context;
    struct pw_core *core;
    struct pw_stream *stream;
    struct spa_hook stream_listener;
    rtcs_pw_state state;
    char error[256];
    uint32_t format;  // rtcs_pw_format once agreed
    uint32_t width, height;
    uint32_t max_buffers;
    struct pw_buffer *held;
    uint64_t seen, skipped;
    // Damage of the buffers given back unread since the last take: a buffer's damage is what
    // changed since the buffer before it, so a picture read after skipping some changed by the
    // union of theirs and its own. 0: none, 1: the box below, 2: all of it.
    int pending;
    uint32_t pending_x0, pending_y0, pending_x1, pending_y1;
};

static int damage_box(struct spa_buffer *sb, uint32_t width, uint32_t height, rtcs_pw_frame *frame);
static void picture_of(struct spa_buffer *sb, uint64_t width, uint64_t height, uint64_t *x, uint64_t *y, uint64_t *w,
                       uint64_t *h);

/// Adds what changed in `sb` (its damage, or all of it) to what the next picture read changed by.
static void note_damage(rtcs_pw *pw, struct spa_buffer *sb) {
    if (pw->pending == 2) return;
    rtcs_pw_frame box;
    memset(&box, 0, sizeof box);
    if (!sb || !damage_box(sb, pw->width, pw->height, &box)) {
        pw->pending = 2;
        return;
    }
    uint32_t x1 = box.damage_x + box.damage_width, y1 = box.damage_y + box.damage_height;
    if (pw->pending == 0) {
        pw->pending_x0 = box.damage_x;
        pw->pending_y0 = box.damage_y;
        pw->pending_x1 = x1;
        pw->pending_y1 = y1;
        pw->pending = 1;
        return;
    }
    if (box.damage_x < pw->pending_x0) pw->pending_x0 = box.damage_x;
    if (box.damage_y < pw->pending_y0) pw->pending_y0 = box.damage_y;
    if (x1 > pw->pending_x1) pw->pending_x1 = x1;
    if (y1 > pw->pending_y1) pw->pending_y1 = y1;
}

static void set_error(rtcs_pw *pw, const char *format, ...) {
    if (pw->state == RTCS_PW_FAILED) return;  // the first reason is the one to tell
    va_list args;
    va_start(args, format);
    vsnprintf(pw->error, sizeof pw->error, format, args);
    va_end(args);
    pw->state = RTCS_PW_FAILED;
}

#define fail rtcs_portal_fail

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void init_pipewire(void) { rtcs_pipewire.pw_init(NULL, NULL); }

// MARK: events

static void on_state(void *data, enum pw_stream_state old, enum pw_stream_state state, const char *message) {
    (void)old;
    rtcs_pw *pw = data;
    // PipeWire going away reaches the stream too (its core's error), as an error or unconnected.
    if (state == PW_STREAM_STATE_ERROR)
        set_error(pw, "portal: the PipeWire stream failed (%s)", message ? message : "no reason given");
    else if (state == PW_STREAM_STATE_UNCONNECTED)
        set_error(pw, "portal: the PipeWire stream was disconnected (the screen cast ended)");
}

static uint32_t our_format(uint32_t spa) {
    switch (spa) {
    case SPA_VIDEO_FORMAT_BGRx: return RTCS_PW_BGRX;
    case SPA_VIDEO_FORMAT_BGRA: return RTCS_PW_BGRA;
    case SPA_VIDEO_FORMAT_RGBx: return RTCS_PW_RGBX;
    case SPA_VIDEO_FORMAT_RGBA: return RTCS_PW_RGBA;
    default: return UINT32_MAX;
    }
}

/// The format agreed: checked, then the buffers and metadata this side takes are said.
static void on_param_changed(void *data, uint32_t id, const struct spa_pod *param) {
    rtcs_pw *pw = data;
    if (id != SPA_PARAM_Format || !param) return;
    uint32_t media_type = 0, media_subtype = 0;
    if (spa_format_parse(param, &media_type, &media_subtype) < 0 || media_type != SPA_MEDIA_TYPE_video
        || media_subtype != SPA_MEDIA_SUBTYPE_raw) {
        set_error(pw, "portal: PipeWire agreed on a format that is not raw video");
        return;
    }
    struct spa_video_info_raw info;
    memset(&info, 0, sizeof info);
    if (spa_format_video_raw_parse(param, &info) < 0) {
        set_error(pw, "portal: PipeWire's video format cannot be read");
        return;
    }
    uint32_t format = our_format(info.format);
    if (format == UINT32_MAX || info.size.width == 0 || info.size.height == 0 || info.size.width > 16384
        || info.size.height > 16384) {
        set_error(pw, "portal: PipeWire agreed on video format %u at %ux%u, which rtcshare does not read",
                  info.format, info.size.width, info.size.height);
        return;
    }
    pw->format = format;
    pw->width = info.size.width;
    pw->height = info.size.height;
    if (pw->state == RTCS_PW_CONNECTING) pw->state = RTCS_PW_STREAMING;

    uint8_t storage[1024];
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(storage, sizeof storage);
    int32_t stride = (int32_t)(pw->width * 4);
    int32_t most = (int32_t)pw->max_buffers;
    const struct spa_pod *params[5];
    params[0] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamBuffers, SPA_PARAM_Buffers,
        SPA_PARAM_BUFFERS_buffers, SPA_POD_CHOICE_RANGE_Int(most, 1, most),
        SPA_PARAM_BUFFERS_blocks, SPA_POD_Int(1),
        SPA_PARAM_BUFFERS_size, SPA_POD_Int(stride * (int32_t)pw->height),
        SPA_PARAM_BUFFERS_stride, SPA_POD_Int(stride),
        SPA_PARAM_BUFFERS_dataType, SPA_POD_CHOICE_FLAGS_Int((1 << SPA_DATA_MemFd) | (1 << SPA_DATA_MemPtr)));
    params[1] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_Header),
        SPA_PARAM_META_size, SPA_POD_Int(sizeof(struct spa_meta_header)));
    params[2] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_VideoDamage),
        SPA_PARAM_META_size, SPA_POD_CHOICE_RANGE_Int(sizeof(struct spa_meta_region) * 16,
                                                      sizeof(struct spa_meta_region) * 1,
                                                      sizeof(struct spa_meta_region) * 16));
    params[3] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_VideoCrop),
        SPA_PARAM_META_size, SPA_POD_Int(sizeof(struct spa_meta_region)));
    params[4] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_VideoTransform),
        SPA_PARAM_META_size, SPA_POD_Int(sizeof(struct spa_meta_videotransform)));
    rtcs_pipewire.pw_stream_update_params(pw->stream, params, 5);
}

/// Buffers that carry no picture go straight back; the newest picture is held.
static void on_process(void *data) {
    rtcs_pw *pw = data;
    struct pw_buffer *buffer;
    while ((buffer = rtcs_pipewire.pw_stream_dequeue_buffer(pw->stream))) {
        struct spa_buffer *sb = buffer->buffer;
        struct spa_meta_header *header = spa_buffer_find_meta_data(sb, SPA_META_Header, sizeof *header);
        int empty = sb->n_datas < 1 || !sb->datas[0].chunk || sb->datas[0].chunk->size == 0
            || (sb->datas[0].chunk->flags & SPA_CHUNK_FLAG_CORRUPTED)
            || (header && (header->flags & SPA_META_HEADER_FLAG_CORRUPTED));
        if (empty) {
            // Its picture is lost, and with it what changed: the next one read counts as all changed.
            pw->pending = 2;
            pw->skipped++;
            rtcs_pipewire.pw_stream_queue_buffer(pw->stream, buffer);
            continue;
        }
        pw->seen++;
        if (pw->held) {
            note_damage(pw, pw->held->buffer);
            rtcs_pipewire.pw_stream_queue_buffer(pw->stream, pw->held);
        }
        pw->held = buffer;
    }
}

static const struct pw_stream_events stream_events = {
    PW_VERSION_STREAM_EVENTS,
    .state_changed = on_state,
    .param_changed = on_param_changed,
    .process = on_process,
};

// MARK: life

rtcs_pw *rtcs_pw_open(int fd, uint32_t node, int32_t width, int32_t height, uint32_t max_buffers,
                      char *error, size_t error_len) {
    if (rtcs_portal_load(error, error_len) != 0) {
        close(fd);
        return NULL;
    }
    pthread_once(&init_once, init_pipewire);
    rtcs_pw *pw = calloc(1, sizeof *pw);
    if (!pw) {
        close(fd);
        fail(error, error_len, "portal: out of memory");
        return NULL;
    }
    pw->max_buffers = max_buffers < 1 ? 1 : (max_buffers > 16 ? 16 : max_buffers);
    pw->loop = rtcs_pipewire.pw_loop_new(NULL);
    pw->context = pw->loop ? rtcs_pipewire.pw_context_new(pw->loop, NULL, 0) : NULL;
    if (!pw->context) {
        close(fd);
        fail(error, error_len, "portal: cannot set up PipeWire (%s)", strerror(errno));
        rtcs_pw_close(pw);
        return NULL;
    }
    // The core takes the fd over, also when it fails.
    pw->core = rtcs_pipewire.pw_context_connect_fd(pw->context, fd, NULL, 0);
    if (!pw->core) {
        fail(error, error_len, "portal: cannot connect to PipeWire over the portal's remote (%s)", strerror(errno));
        rtcs_pw_close(pw);
        return NULL;
    }
    pw->stream = rtcs_pipewire.pw_stream_new(pw->core, "rtcshare",
                               rtcs_pipewire.pw_properties_new(PW_KEY_MEDIA_TYPE, "Video", PW_KEY_MEDIA_CATEGORY, "Capture",
                                                 PW_KEY_MEDIA_ROLE, "Screen", NULL));
    if (!pw->stream) {
        fail(error, error_len, "portal: cannot make a PipeWire stream (%s)", strerror(errno));
        rtcs_pw_close(pw);
        return NULL;
    }
    rtcs_pipewire.pw_stream_add_listener(pw->stream, &pw->stream_listener, &stream_events, pw);

    uint8_t storage[1024];
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(storage, sizeof storage);
    struct spa_rectangle preferred = SPA_RECTANGLE(width > 0 ? (uint32_t)width : 1920, height > 0 ? (uint32_t)height : 1080);
    struct spa_rectangle least = SPA_RECTANGLE(1, 1), most = SPA_RECTANGLE(16384, 16384);
    struct spa_fraction rate = SPA_FRACTION(30, 1), slowest = SPA_FRACTION(0, 1), fastest = SPA_FRACTION(1000, 1);
    const struct spa_pod *params[1];
    // No modifier property: a producer that can only hand over DMA-BUFs finds nothing to agree on.
    params[0] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
        SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
        SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw),
        SPA_FORMAT_VIDEO_format, SPA_POD_CHOICE_ENUM_Id(5, SPA_VIDEO_FORMAT_BGRx, SPA_VIDEO_FORMAT_BGRx,
                                                        SPA_VIDEO_FORMAT_BGRA, SPA_VIDEO_FORMAT_RGBx, SPA_VIDEO_FORMAT_RGBA),
        SPA_FORMAT_VIDEO_size, SPA_POD_CHOICE_RANGE_Rectangle(&preferred, &least, &most),
        SPA_FORMAT_VIDEO_framerate, SPA_POD_CHOICE_RANGE_Fraction(&rate, &slowest, &fastest));
    int res = rtcs_pipewire.pw_stream_connect(pw->stream, SPA_DIRECTION_INPUT, node,
                                PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS, params, 1);
    if (res < 0) {
        fail(error, error_len, "portal: cannot connect to the screen's PipeWire node %u (%s)", node, spa_strerror(res));
        rtcs_pw_close(pw);
        return NULL;
    }
    return pw;
}

rtcs_pw_state rtcs_pw_iterate(rtcs_pw *pw, int timeout_ms) {
    if (pw->state == RTCS_PW_FAILED) return pw->state;
    pw_loop_enter(pw->loop);
    int res = pw_loop_iterate(pw->loop, timeout_ms < 0 ? 0 : timeout_ms);
    pw_loop_leave(pw->loop);
    if (res < 0 && res != -EINTR) set_error(pw, "portal: PipeWire's loop failed (%s)", spa_strerror(res));
    return pw->state;
}

const char *rtcs_pw_error(const rtcs_pw *pw) { return pw->error; }

void rtcs_pw_size(const rtcs_pw *pw, uint32_t *width, uint32_t *height) {
    *width = pw->width;
    *height = pw->height;
}

uint64_t rtcs_pw_buffers_seen(const rtcs_pw *pw) { return pw->seen; }
uint64_t rtcs_pw_buffers_skipped(const rtcs_pw *pw) { return pw->skipped; }

/// The visible picture of a `width` x `height` buffer: all of it, or the crop its meta gives when
/// that lies inside it (one outside is ignored).
static void picture_of(struct spa_buffer *sb, uint64_t width, uint64_t height, uint64_t *x, uint64_t *y, uint64_t *w,
                       uint64_t *h) {
    *x = 0;
    *y = 0;
    *w = width;
    *h = height;
    struct spa_meta_region *crop = spa_buffer_find_meta_data(sb, SPA_META_VideoCrop, sizeof *crop);
    if (crop && spa_meta_region_is_valid(crop) && crop->region.position.x >= 0 && crop->region.position.y >= 0
        && (uint64_t)crop->region.position.x + crop->region.size.width <= width
        && (uint64_t)crop->region.position.y + crop->region.size.height <= height
        && crop->region.size.width >= 2 && crop->region.size.height >= 2) {
        *x = (uint64_t)crop->region.position.x;
        *y = (uint64_t)crop->region.position.y;
        *w = crop->region.size.width;
        *h = crop->region.size.height;
    }
}

/// The bounding box of the damage regions in the visible picture's coordinates (the buffer's,
/// less the crop's corner), clipped to it; 0 when the meta is absent or names nothing inside.
static int damage_box(struct spa_buffer *sb, uint32_t buffer_width, uint32_t buffer_height, rtcs_pw_frame *frame) {
    struct spa_meta *meta = spa_buffer_find_meta(sb, SPA_META_VideoDamage);
    if (!meta || meta->size < sizeof(struct spa_meta_region)) return 0;
    uint64_t cx, cy, cw, ch;
    picture_of(sb, buffer_width, buffer_height, &cx, &cy, &cw, &ch);
    int64_t width = (int64_t)cw, height = (int64_t)ch;
    uint32_t x0 = (uint32_t)cw, y0 = (uint32_t)ch, x1 = 0, y1 = 0;
    int any = 0;
    struct spa_meta_region *r;
    spa_meta_for_each(r, meta) {
        if (!spa_meta_region_is_valid(r)) break;
        int64_t rx = (int64_t)r->region.position.x - (int64_t)cx, ry = (int64_t)r->region.position.y - (int64_t)cy;
        int64_t rx1 = rx + r->region.size.width, ry1 = ry + r->region.size.height;
        if (rx < 0) rx = 0;
        if (ry < 0) ry = 0;
        if (rx1 > width) rx1 = width;
        if (ry1 > height) ry1 = height;
        if (rx1 <= rx || ry1 <= ry) continue;
        any = 1;
        if (rx < x0) x0 = (uint32_t)rx;
        if (ry < y0) y0 = (uint32_t)ry;
        if (rx1 > x1) x1 = (uint32_t)rx1;
        if (ry1 > y1) y1 = (uint32_t)ry1;
    }
    if (!any) return 0;  // present but empty: the whole picture counts as changed
    frame->damage_x = x0;
    frame->damage_y = y0;
    frame->damage_width = x1 - x0;
    frame->damage_height = y1 - y0;
    return 1;
}

int rtcs_pw_frame_take(rtcs_pw *pw, rtcs_pw_frame *frame) {
    if (!pw->held) return 0;
    struct spa_buffer *sb = pw->held->buffer;
    struct spa_data *d = &sb->datas[0];
    memset(frame, 0, sizeof *frame);
    if (d->type != SPA_DATA_MemFd && d->type != SPA_DATA_MemPtr) {
        set_error(pw, "portal: PipeWire handed over a buffer of memory type %u (DMA-BUF or other); "
                  "rtcshare reads shared memory only", d->type);
        rtcs_pw_frame_release(pw);
        return -1;
    }
    uint64_t offset = d->chunk->offset, size = d->chunk->size, maxsize = d->maxsize;
    int64_t stride = d->chunk->stride;
    uint64_t width = pw->width, height = pw->height;
    if (!d->data || offset > maxsize || size > maxsize - offset || width == 0 || height == 0) {
        set_error(pw, "portal: PipeWire's buffer is not mapped or its chunk (offset %llu, size %llu) is outside it (%llu)",
                  (unsigned long long)offset, (unsigned long long)size, (unsigned long long)maxsize);
        rtcs_pw_frame_release(pw);
        return -1;
    }
    if (stride == 0) stride = (int64_t)width * 4;
    if (stride < (int64_t)width * 4 || stride % 4 != 0 || (uint64_t)stride * (height - 1) + width * 4 > size) {
        set_error(pw, "portal: PipeWire's buffer (%llux%llu, stride %lld) does not fit its chunk of %llu bytes",
                  (unsigned long long)width, (unsigned long long)height, (long long)stride, (unsigned long long)size);
        rtcs_pw_frame_release(pw);
        return -1;
    }
    uint8_t *base = (uint8_t *)d->data + offset;
    // A crop inside the picture narrows it.
    uint64_t cx, cy;
    picture_of(sb, pw->width, pw->height, &cx, &cy, &width, &height);
    base += cy * (uint64_t)stride + cx * 4;
    struct spa_meta_videotransform *turn = spa_buffer_find_meta_data(sb, SPA_META_VideoTransform, sizeof *turn);
    frame->data = base;
    frame->width = (uint32_t)width;
    frame->height = (uint32_t)height;
    frame->stride = (uint32_t)stride;
    frame->format = pw->format;
    frame->writable = (d->flags & SPA_DATA_FLAG_WRITABLE) ? 1 : 0;
    frame->transform = turn && turn->transform <= 7 ? turn->transform : 0;
    // This buffer's damage with that of the buffers given back unread before it.
    note_damage(pw, sb);
    frame->damaged = pw->pending == 1;
    if (frame->damaged) {
        frame->damage_x = pw->pending_x0;
        frame->damage_y = pw->pending_y0;
        frame->damage_width = pw->pending_x1 - pw->pending_x0;
        frame->damage_height = pw->pending_y1 - pw->pending_y0;
    }
    return 1;
}

void rtcs_pw_frame_release(rtcs_pw *pw) {
    if (!pw->held) return;
    pw->pending = 0;
    // The producer's buffers (two of the whole screen, 15.8 MiB at 1920x1080) would all stay
    // resident in this process once read; given back, a buffer's pages leave this process's
    // mapping (they stay in the producer's memory), so while the share runs only the one being
    // converted counts (measured: 46 -> 38 MiB resident, which keeps a 1080p screen shared at
    // 720p under the default soft limit of 45 MiB). The plan still counts both, the most that
    // can be resident at once.
    struct spa_data *d = &pw->held->buffer->datas[0];
    if (d->type == SPA_DATA_MemFd && d->data && d->maxsize > 0) {
        uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
        uintptr_t start = ((uintptr_t)d->data + page - 1) & ~(page - 1);
        uintptr_t end = ((uintptr_t)d->data + d->maxsize) & ~(page - 1);
        if (end > start) madvise((void *)start, end - start, MADV_DONTNEED);
    }
    rtcs_pipewire.pw_stream_queue_buffer(pw->stream, pw->held);
    pw->held = NULL;
}

void rtcs_pw_close(rtcs_pw *pw) {
    if (!pw) return;
    if (pw->stream) {
        if (pw->held) rtcs_pipewire.pw_stream_queue_buffer(pw->stream, pw->held);
        rtcs_pipewire.pw_stream_destroy(pw->stream);
    }
    if (pw->core) rtcs_pipewire.pw_core_disconnect(pw->core);
    if (pw->context) rtcs_pipewire.pw_context_destroy(pw->context);
    if (pw->loop) rtcs_pipewire.pw_loop_destroy(pw->loop);
    free(pw);
}
