// Preloaded into xdg-desktop-portal-wlr by PortalCaptureTests only: each screencopy frame's
// shared-memory description is also announced as a DMA-BUF one (same format and size).
//
// Why: xdg-desktop-portal-wlr 0.7 (Debian 12) refuses to start a cast unless the compositor
// offers a DMA-BUF format besides the shared-memory one (its issue #289). A compositor rendering
// with pixman, as headless sway without a GPU does, offers none. With a DMA-BUF format seen but
// no GPU to allocate one (no modifiers can be queried), the portal offers PipeWire shared memory
// only: the path rtcshare reads, and the one the test means to exercise. Nothing is copied or
// drawn differently: the compositor's own shared-memory copies are what reach the stream.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wayland-client-core.h>

typedef void (*event)(void);

// zwlr_screencopy_frame_v1's events in protocol order (version 3).
struct frame_listener {
    void (*buffer)(void *, struct wl_proxy *, uint32_t format, uint32_t width, uint32_t height, uint32_t stride);
    void (*flags)(void *, struct wl_proxy *, uint32_t);
    void (*ready)(void *, struct wl_proxy *, uint32_t, uint32_t, uint32_t);
    void (*failed)(void *, struct wl_proxy *);
    void (*damage)(void *, struct wl_proxy *, uint32_t, uint32_t, uint32_t, uint32_t);
    void (*linux_dmabuf)(void *, struct wl_proxy *, uint32_t format, uint32_t width, uint32_t height);
    void (*buffer_done)(void *, struct wl_proxy *);
};

struct wrapped {
    const struct frame_listener *listener;
    void *data;
    uint32_t format, width, height;
    int seen_shm, seen_dmabuf;
};

static uint32_t drm_fourcc(uint32_t shm) {
    if (shm == 0) return 0x34325241;  // ARGB8888 'AR24'
    if (shm == 1) return 0x34325258;  // XRGB8888 'XR24'
    return shm;                       // the other wl_shm codes are the DRM fourccs
}

static void on_buffer(void *d, struct wl_proxy *f, uint32_t format, uint32_t w, uint32_t h, uint32_t stride) {
    struct wrapped *x = d;
    x->format = format, x->width = w, x->height = h, x->seen_shm = 1;
    x->listener->buffer(x->data, f, format, w, h, stride);
}
static void on_flags(void *d, struct wl_proxy *f, uint32_t v) {
    struct wrapped *x = d;
    if (x->listener->flags) x->listener->flags(x->data, f, v);
}
static void on_ready(void *d, struct wl_proxy *f, uint32_t a, uint32_t b, uint32_t c) {
    struct wrapped *x = d;
    if (x->listener->ready) x->listener->ready(x->data, f, a, b, c);
}
static void on_failed(void *d, struct wl_proxy *f) {
    struct wrapped *x = d;
    if (x->listener->failed) x->listener->failed(x->data, f);
}
static void on_damage(void *d, struct wl_proxy *f, uint32_t a, uint32_t b, uint32_t c, uint32_t e) {
    struct wrapped *x = d;
    if (x->listener->damage) x->listener->damage(x->data, f, a, b, c, e);
}
static void on_linux_dmabuf(void *d, struct wl_proxy *f, uint32_t format, uint32_t w, uint32_t h) {
    struct wrapped *x = d;
    x->seen_dmabuf = 1;
    if (x->listener->linux_dmabuf) x->listener->linux_dmabuf(x->data, f, format, w, h);
}
static void on_buffer_done(void *d, struct wl_proxy *f) {
    struct wrapped *x = d;
    if (x->seen_shm && !x->seen_dmabuf && x->listener->linux_dmabuf)
        x->listener->linux_dmabuf(x->data, f, drm_fourcc(x->format), x->width, x->height);
    if (x->listener->buffer_done) x->listener->buffer_done(x->data, f);
}

static const struct frame_listener ours = {
    on_buffer, on_flags, on_ready, on_failed, on_damage, on_linux_dmabuf, on_buffer_done,
};

int wl_proxy_add_listener(struct wl_proxy *proxy, void (**implementation)(void), void *data) {
    static int (*real)(struct wl_proxy *, void (**)(void), void *);
    if (!real) real = (int (*)(struct wl_proxy *, void (**)(void), void *))dlsym(RTLD_NEXT, "wl_proxy_add_listener");
    if (strcmp(wl_proxy_get_class(proxy), "zwlr_screencopy_frame_v1") != 0) return real(proxy, implementation, data);
    // One small record per frame, left behind with it: a test's few hundred frames.
    struct wrapped *w = calloc(1, sizeof *w);
    if (!w) return -1;
    w->listener = (const struct frame_listener *)implementation;
    w->data = data;
    return real(proxy, (void (**)(void))&ours, w);
}
