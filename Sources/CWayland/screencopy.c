#include "CWayland.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <wayland-client.h>

#include "wlr-screencopy-unstable-v1-client-protocol.h"

// See CWayland.h for why this layer exists.

typedef struct rtcs_wl_output {
    struct wl_output *output;
    uint32_t global;           // the registry name, to notice its removal
    char name[64];
    int32_t width, height, transform;
    int described;             // its first `done` arrived
    int removed;
} rtcs_wl_output;

struct rtcs_wl {
    struct wl_display *display;
    struct wl_registry *registry;
    struct wl_shm *shm;
    struct zwlr_screencopy_manager_v1 *manager;
    uint32_t manager_version;
    rtcs_wl_output outputs[RTCS_WL_MAX_OUTPUTS];
    int output_count;
    int selected;

    int shm_fd;
    uint8_t *shm_base;
    size_t shm_bytes;
    struct wl_shm_pool *pool;
    struct wl_buffer *buffer;  // made for buffer_desc; remade when the description changes
    uint32_t buffer_desc[4];   // format, width, height, stride

    struct zwlr_screencopy_frame_v1 *frame;
    rtcs_wl_frame_state state;
    rtcs_wl_frame_info info;
    uint32_t damage_x1, damage_y1;  // the union's far corner while damage arrives

    struct wl_callback *sync;
    uint64_t pongs;
    char error[256];
};

static void set_error(rtcs_wl *w, const char *text) {
    snprintf(w->error, sizeof w->error, "%s", text);
}

// Formats the converter reads: 8-bit channels in 32 bits, little-endian. XRGB/ARGB are B G R X in
// memory (what CCore calls BGRX), XBGR/ABGR are R G B X (swapped to BGRX before conversion).
static int readable_format(uint32_t format) {
    return format == WL_SHM_FORMAT_XRGB8888 || format == WL_SHM_FORMAT_ARGB8888
        || format == WL_SHM_FORMAT_XBGR8888 || format == WL_SHM_FORMAT_ABGR8888;
}

// MARK: outputs

static void output_geometry(void *data, struct wl_output *o, int32_t x, int32_t y, int32_t pw, int32_t ph,
                            int32_t subpixel, const char *make, const char *model, int32_t transform) {
    (void)o; (void)x; (void)y; (void)pw; (void)ph; (void)subpixel; (void)make; (void)model;
    rtcs_wl_output *out = data;
    out->transform = (transform >= 0 && transform <= 7) ? transform : 0;
}

static void output_mode(void *data, struct wl_output *o, uint32_t flags, int32_t width, int32_t height, int32_t refresh) {
    (void)o; (void)refresh;
    rtcs_wl_output *out = data;
    if (flags & WL_OUTPUT_MODE_CURRENT) {
        out->width = width;
        out->height = height;
    }
}

static void output_done(void *data, struct wl_output *o) {
    (void)o;
    ((rtcs_wl_output *)data)->described = 1;
}

static void output_scale(void *data, struct wl_output *o, int32_t factor) { (void)data; (void)o; (void)factor; }

static void output_name(void *data, struct wl_output *o, const char *name) {
    (void)o;
    rtcs_wl_output *out = data;
    snprintf(out->name, sizeof out->name, "%s", name ? name : "");
}

static void output_description(void *data, struct wl_output *o, const char *text) { (void)data; (void)o; (void)text; }

static const struct wl_output_listener output_listener = {
    .geometry = output_geometry, .mode = output_mode, .done = output_done, .scale = output_scale,
    .name = output_name, .description = output_description,
};

// MARK: registry

static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

static void registry_global(void *data, struct wl_registry *registry, uint32_t name, const char *interface,
                            uint32_t version) {
    rtcs_wl *w = data;
    if (strcmp(interface, wl_shm_interface.name) == 0 && w->shm == NULL) {
        w->shm = wl_registry_bind(registry, name, &wl_shm_interface, 1);
    } else if (strcmp(interface, zwlr_screencopy_manager_v1_interface.name) == 0 && w->manager == NULL) {
        w->manager_version = min_u32(version, 3);
        w->manager = wl_registry_bind(registry, name, &zwlr_screencopy_manager_v1_interface, w->manager_version);
    } else if (strcmp(interface, wl_output_interface.name) == 0 && w->output_count < RTCS_WL_MAX_OUTPUTS) {
        rtcs_wl_output *out = &w->outputs[w->output_count++];
        memset(out, 0, sizeof *out);
        out->global = name;
        // Version 4 names the output; older ones are chosen by position only.
        out->output = wl_registry_bind(registry, name, &wl_output_interface, min_u32(version, 4));
        wl_output_add_listener(out->output, &output_listener, out);
    }
}

static void registry_global_remove(void *data, struct wl_registry *registry, uint32_t name) {
    (void)registry;
    rtcs_wl *w = data;
    for (int i = 0; i < w->output_count; i++) {
        if (w->outputs[i].global == name) w->outputs[i].removed = 1;
    }
}

static const struct wl_registry_listener registry_listener = {
    .global = registry_global, .global_remove = registry_global_remove,
};

// MARK: connection

rtcs_wl *rtcs_wl_connect(const char *display, char *error, size_t error_len) {
    rtcs_wl *w = calloc(1, sizeof *w);
    if (w == NULL) {
        snprintf(error, error_len, "out of memory");
        return NULL;
    }
    w->shm_fd = -1;
    w->display = wl_display_connect(display);
    if (w->display == NULL) {
        snprintf(error, error_len, "cannot connect to the compositor %s: %s",
                 display ? display : (getenv("WAYLAND_DISPLAY") ? getenv("WAYLAND_DISPLAY") : "wayland-0"),
                 strerror(errno));
        free(w);
        return NULL;
    }
    w->registry = wl_display_get_registry(w->display);
    wl_registry_add_listener(w->registry, &registry_listener, w);
    // One round trip for the globals, one for what the bound outputs say of themselves.
    if (wl_display_roundtrip(w->display) < 0 || wl_display_roundtrip(w->display) < 0) {
        snprintf(error, error_len, "the compositor closed the connection while it was set up");
        rtcs_wl_disconnect(w);
        return NULL;
    }
    const char *missing = w->manager == NULL ? "the wlroots screencopy protocol (zwlr_screencopy_manager_v1)"
                        : w->shm == NULL ? "wl_shm" : w->output_count == 0 ? "an output" : NULL;
    if (missing != NULL) {
        snprintf(error, error_len, "the compositor offers no %s", missing);
        rtcs_wl_disconnect(w);
        return NULL;
    }
    return w;
}

static void shm_unmap(rtcs_wl *w) {
    if (w->buffer) wl_buffer_destroy(w->buffer);
    if (w->pool) wl_shm_pool_destroy(w->pool);
    if (w->shm_base) munmap(w->shm_base, w->shm_bytes);
    if (w->shm_fd >= 0) close(w->shm_fd);
    w->buffer = NULL;
    w->pool = NULL;
    w->shm_base = NULL;
    w->shm_bytes = 0;
    w->shm_fd = -1;
}

void rtcs_wl_disconnect(rtcs_wl *w) {
    if (w == NULL) return;
    rtcs_wl_frame_release(w);
    shm_unmap(w);
    if (w->sync) wl_callback_destroy(w->sync);
    for (int i = 0; i < w->output_count; i++) {
        if (w->outputs[i].output) wl_output_destroy(w->outputs[i].output);
    }
    if (w->manager) zwlr_screencopy_manager_v1_destroy(w->manager);
    if (w->shm) wl_shm_destroy(w->shm);
    if (w->registry) wl_registry_destroy(w->registry);
    wl_display_disconnect(w->display);
    free(w);
}

int rtcs_wl_output_count(const rtcs_wl *w) { return w->output_count; }

const char *rtcs_wl_output_name(const rtcs_wl *w, int index) {
    return (index >= 0 && index < w->output_count) ? w->outputs[index].name : "";
}

void rtcs_wl_output_mode(const rtcs_wl *w, int index, int32_t *width, int32_t *height, int32_t *transform) {
    int ok = index >= 0 && index < w->output_count;
    *width = ok ? w->outputs[index].width : 0;
    *height = ok ? w->outputs[index].height : 0;
    *transform = ok ? w->outputs[index].transform : 0;
}

int rtcs_wl_output_select(rtcs_wl *w, int index) {
    if (index < 0 || index >= w->output_count) return -1;
    w->selected = index;
    return 0;
}

int rtcs_wl_output_present(const rtcs_wl *w) { return !w->outputs[w->selected].removed; }

uint32_t rtcs_wl_screencopy_version(const rtcs_wl *w) { return w->manager_version; }

// MARK: shared memory

int rtcs_wl_shm_map(rtcs_wl *w, size_t bytes, char *error, size_t error_len) {
    if (w->shm_base != NULL || bytes == 0 || bytes > INT32_MAX) {
        snprintf(error, error_len, "a shared buffer of %zu bytes cannot be mapped", bytes);
        return -1;
    }
    // Sealed against shrinking: the compositor maps it too, and a file cut short under its
    // mapping would fault in the compositor, not here.
    int fd = memfd_create("rtcshare-wayland", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) {
        snprintf(error, error_len, "cannot make a %zu KiB shared buffer: %s", bytes >> 10, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    (void)fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL);
    void *base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        snprintf(error, error_len, "cannot map a %zu KiB shared buffer: %s", bytes >> 10, strerror(errno));
        close(fd);
        return -1;
    }
    w->shm_fd = fd;
    w->shm_base = base;
    w->shm_bytes = bytes;
    w->pool = wl_shm_create_pool(w->shm, fd, (int32_t)bytes);
    return 0;
}

uint8_t *rtcs_wl_shm_base(const rtcs_wl *w) { return w->shm_base; }
size_t rtcs_wl_shm_bytes(const rtcs_wl *w) { return w->shm_bytes; }

// MARK: frames

static void frame_buffer(void *data, struct zwlr_screencopy_frame_v1 *f, uint32_t format, uint32_t width,
                         uint32_t height, uint32_t stride) {
    (void)f;
    rtcs_wl *w = data;
    w->info.offered_format = format;
    // The first readable offer wins (version 3 may offer several shm formats).
    if (w->info.shm_format == RTCS_WL_NO_FORMAT && readable_format(format)) {
        w->info.shm_format = format;
        w->info.width = width;
        w->info.height = height;
        w->info.stride = stride;
        w->info.red_first = format == WL_SHM_FORMAT_XBGR8888 || format == WL_SHM_FORMAT_ABGR8888;
    }
    if (w->manager_version < 3 && w->state == RTCS_WL_FRAME_ASKED) w->state = RTCS_WL_FRAME_DESCRIBED;
}

static void frame_flags(void *data, struct zwlr_screencopy_frame_v1 *f, uint32_t flags) {
    (void)f;
    ((rtcs_wl *)data)->info.y_invert = flags & ZWLR_SCREENCOPY_FRAME_V1_FLAGS_Y_INVERT ? 1 : 0;
}

static void frame_ready(void *data, struct zwlr_screencopy_frame_v1 *f, uint32_t sec_hi, uint32_t sec_lo,
                        uint32_t nsec) {
    (void)f; (void)sec_hi; (void)sec_lo; (void)nsec;
    rtcs_wl *w = data;
    if (w->state == RTCS_WL_FRAME_COPYING) w->state = RTCS_WL_FRAME_READY;
}

static void frame_failed(void *data, struct zwlr_screencopy_frame_v1 *f) {
    (void)f;
    ((rtcs_wl *)data)->state = RTCS_WL_FRAME_FAILED;
}

// Damage boxes are the compositor's word: each is clipped to the buffer before it joins the union.
static void frame_damage(void *data, struct zwlr_screencopy_frame_v1 *f, uint32_t x, uint32_t y, uint32_t width,
                         uint32_t height) {
    (void)f;
    rtcs_wl *w = data;
    uint32_t bw = w->buffer_desc[1], bh = w->buffer_desc[2];
    if (x >= bw || y >= bh || width == 0 || height == 0) return;
    uint32_t x1 = width > bw - x ? bw : x + width, y1 = height > bh - y ? bh : y + height;
    if (!w->info.damaged) {
        w->info.damaged = 1;
        w->info.damage_x = x;
        w->info.damage_y = y;
        w->damage_x1 = x1;
        w->damage_y1 = y1;
    } else {
        if (x < w->info.damage_x) w->info.damage_x = x;
        if (y < w->info.damage_y) w->info.damage_y = y;
        if (x1 > w->damage_x1) w->damage_x1 = x1;
        if (y1 > w->damage_y1) w->damage_y1 = y1;
    }
    w->info.damage_width = w->damage_x1 - w->info.damage_x;
    w->info.damage_height = w->damage_y1 - w->info.damage_y;
}

static void frame_linux_dmabuf(void *data, struct zwlr_screencopy_frame_v1 *f, uint32_t format, uint32_t width,
                               uint32_t height) {
    (void)data; (void)f; (void)format; (void)width; (void)height;  // shared memory only
}

static void frame_buffer_done(void *data, struct zwlr_screencopy_frame_v1 *f) {
    (void)f;
    rtcs_wl *w = data;
    if (w->state == RTCS_WL_FRAME_ASKED) w->state = RTCS_WL_FRAME_DESCRIBED;
}

static const struct zwlr_screencopy_frame_v1_listener frame_listener = {
    .buffer = frame_buffer, .flags = frame_flags, .ready = frame_ready, .failed = frame_failed,
    .damage = frame_damage, .linux_dmabuf = frame_linux_dmabuf, .buffer_done = frame_buffer_done,
};

void rtcs_wl_frame_release(rtcs_wl *w) {
    if (w->frame) zwlr_screencopy_frame_v1_destroy(w->frame);
    w->frame = NULL;
    w->state = RTCS_WL_FRAME_IDLE;
}

int rtcs_wl_frame_request(rtcs_wl *w, int overlay_cursor) {
    if (w->state == RTCS_WL_FRAME_ASKED || w->state == RTCS_WL_FRAME_COPYING) return -1;
    rtcs_wl_frame_release(w);
    memset(&w->info, 0, sizeof w->info);
    w->info.shm_format = RTCS_WL_NO_FORMAT;
    w->info.offered_format = RTCS_WL_NO_FORMAT;
    w->frame = zwlr_screencopy_manager_v1_capture_output(w->manager, overlay_cursor ? 1 : 0,
                                                         w->outputs[w->selected].output);
    zwlr_screencopy_frame_v1_add_listener(w->frame, &frame_listener, w);
    w->state = RTCS_WL_FRAME_ASKED;
    return 0;
}

int rtcs_wl_frame_copy(rtcs_wl *w) {
    if (w->state != RTCS_WL_FRAME_DESCRIBED || w->pool == NULL) return -1;
    rtcs_wl_frame_info *i = &w->info;
    if (i->shm_format == RTCS_WL_NO_FORMAT || i->width == 0 || i->height == 0 || i->width > 16384
        || i->height > 16384 || i->stride < i->width * 4 || i->stride % 4 != 0
        || (uint64_t)i->stride * i->height > w->shm_bytes) {
        return -2;
    }
    uint32_t desc[4] = {i->shm_format, i->width, i->height, i->stride};
    if (w->buffer == NULL || memcmp(desc, w->buffer_desc, sizeof desc) != 0) {
        if (w->buffer) wl_buffer_destroy(w->buffer);
        w->buffer = wl_shm_pool_create_buffer(w->pool, 0, (int32_t)i->width, (int32_t)i->height,
                                              (int32_t)i->stride, i->shm_format);
        memcpy(w->buffer_desc, desc, sizeof desc);
    }
    // With damage, the compositor holds the copy until something on the output is drawn: a
    // still screen costs no copy at all.
    if (w->manager_version >= 2) {
        zwlr_screencopy_frame_v1_copy_with_damage(w->frame, w->buffer);
    } else {
        zwlr_screencopy_frame_v1_copy(w->frame, w->buffer);
    }
    w->state = RTCS_WL_FRAME_COPYING;
    return 0;
}

rtcs_wl_frame_state rtcs_wl_frame_state_now(const rtcs_wl *w) { return w->state; }
rtcs_wl_frame_info rtcs_wl_frame_info_now(const rtcs_wl *w) { return w->info; }

// MARK: liveness

static void sync_done(void *data, struct wl_callback *callback, uint32_t serial) {
    (void)serial;
    rtcs_wl *w = data;
    wl_callback_destroy(callback);
    w->sync = NULL;
    w->pongs++;
}

static const struct wl_callback_listener sync_listener = {.done = sync_done};

void rtcs_wl_ping(rtcs_wl *w) {
    if (w->sync != NULL) return;
    w->sync = wl_display_sync(w->display);
    wl_callback_add_listener(w->sync, &sync_listener, w);
}

uint64_t rtcs_wl_pongs(const rtcs_wl *w) { return w->pongs; }

// MARK: events

static int lost(rtcs_wl *w) {
    int code = wl_display_get_error(w->display);
    if (code == EPROTO) {
        const struct wl_interface *interface = NULL;
        uint32_t id = 0;
        uint32_t protocol_code = wl_display_get_protocol_error(w->display, &interface, &id);
        snprintf(w->error, sizeof w->error, "the compositor ended the connection: protocol error %u on %s",
                 protocol_code, interface ? interface->name : "?");
    } else {
        set_error(w, "lost the connection to the compositor");
    }
    return -1;
}

int rtcs_wl_dispatch(rtcs_wl *w, int timeout_ms) {
    struct wl_display *d = w->display;
    while (wl_display_prepare_read(d) != 0) {
        if (wl_display_dispatch_pending(d) < 0) return lost(w);
    }
    // A full socket (EAGAIN) is left for the next turn; anything else is a dead connection.
    if (wl_display_flush(d) < 0 && errno != EAGAIN) {
        wl_display_cancel_read(d);
        return lost(w);
    }
    struct pollfd p = {.fd = wl_display_get_fd(d), .events = POLLIN, .revents = 0};
    int n = poll(&p, 1, timeout_ms < 0 ? 0 : timeout_ms);
    if (n <= 0) {
        wl_display_cancel_read(d);
        return (n < 0 && errno != EINTR) ? lost(w) : 0;
    }
    if (wl_display_read_events(d) < 0) return lost(w);
    if (wl_display_dispatch_pending(d) < 0) return lost(w);
    return 0;
}

const char *rtcs_wl_error(const rtcs_wl *w) { return w->error; }
