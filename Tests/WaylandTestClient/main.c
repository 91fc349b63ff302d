// A window for the wayland source's tests: under sway with no borders it covers the output with
// a known picture (a blue background, a white and a black box, the frame marker of the test
// source) and, while animating, draws a new frame 20 times a second with the marker's counter
// one higher and a yellow box moved on. SIGUSR1 starts the animation, SIGUSR2 holds the
// picture still (nothing is committed, so the compositor draws nothing); SIGTERM ends it.
// SIGHUP starts a small animation: only the marker ticks (no box), and each frame damages only
// the marker's rectangle, so the compositor reports a small region (once each buffer has been
// drawn whole in this mode). With `--alternate`, the small animation takes turns: even frames
// draw (and damage) the marker, odd frames a 384x48 block at the bottom-left, so a frame's
// damage alone is never the whole change since a frame two or more back.
//
// The marker (two rows of 32 blocks: the counter, then the low 32 bits of CLOCK_MONOTONIC in
// microseconds; white 1, black 0) is drawn `width / share_width` times its size, so that a share
// shrinking the output to `share_width` wide puts it back at 8x16-pixel blocks where
// `rtcshare receive` reads it.
//
// With `--pointer X,Y,W,H` it also puts the pointer at (X, Y) of a W x H output through a virtual pointer
// (headless sway has no input device, so no pointer until one appears), and sets as its cursor a
// 24x24 square of pure red (hot spot at its top-left) whenever the pointer enters the window.
//
// Prints "ready WxH" once a picture of that size is on the screen (after each resize too).

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <wayland-client.h>

#include "wlr-virtual-pointer-unstable-v1-client-protocol.h"
#include "xdg-shell-client-protocol.h"

static volatile sig_atomic_t animate_signal, still_signal, tick_signal, quit_signal;
static void on_signal(int s) {
    if (s == SIGUSR1) animate_signal = 1;
    else if (s == SIGHUP) tick_signal = 1;
    else if (s == SIGUSR2) still_signal = 1;
    else quit_signal = 1;
}

typedef struct buffer {
    struct wl_buffer *wl;
    uint32_t *pixels;
    size_t bytes;
    int busy;
    int painted;      // the still part is drawn
    int box_x;        // where its moving box is (-1: none yet)
} buffer;

static struct {
    struct wl_compositor *compositor;
    struct wl_shm *shm;
    struct xdg_wm_base *wm;
    struct zwlr_virtual_pointer_manager_v1 *pointers;
    struct wl_seat *seat;
    struct wl_pointer *pointer;
    struct wl_surface *cursor_surface;
    struct wl_buffer *cursor_buffer;
    struct wl_surface *surface;
    struct xdg_surface *xdg;
    struct xdg_toplevel *toplevel;
    int width, height, pending_width, pending_height;
    int configured, redraw, closed;
    buffer buffers[2];
    int share_width;
    int small;        // only the marker ticks, and only it is damaged
    int alternate;    // in the small animation: the marker on even frames, the bottom block on odd ones
    uint32_t counter;
} app = {.share_width = 1280};

static uint64_t now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

// Marker block sizes in whole pixels of the output: 8x16 at the share's width.
static int marker_block_width(void) { return 8 * app.width / app.share_width; }
static int marker_block_height(void) { return 16 * app.width / app.share_width; }

static void fill(buffer *b, int x, int y, int w, int h, uint32_t rgb) {
    if (x < 0) { w += x; x = 0; }
    if (y < 0) { h += y; y = 0; }
    if (x + w > app.width) w = app.width - x;
    if (y + h > app.height) h = app.height - y;
    if (w <= 0 || h <= 0) return;
    uint32_t *first = b->pixels + (size_t)y * app.width + x;
    for (int col = 0; col < w; col++) first[col] = rgb;
    for (int row = 1; row < h; row++) memcpy(first + (size_t)row * app.width, first, (size_t)w * 4);
}

// The still part once per buffer; then per frame only the moving box (where it was, where it
// is; none in the small animation) and the marker, so the client keeps up on a loaded machine.
// Returns 1 when the whole buffer was drawn.
static int draw(buffer *b) {
    int W = app.width, H = app.height;
    int side = H / 10;
    int whole = !b->painted;
    if (!b->painted) {
        fill(b, 0, 0, W, H, 0x336699);
        fill(b, W / 10, H / 5, W * 3 / 10, H * 3 / 10, 0xffffff);
        fill(b, W * 6 / 10, H / 2, W / 5, H * 2 / 5, 0x000000);
        b->painted = 1;
        b->box_x = -1;
    }
    if (!app.small) {
        if (b->box_x >= 0) fill(b, b->box_x, H * 17 / 20, side, side, 0x336699);
        b->box_x = (int)((app.counter * (uint32_t)W / 40) % (uint32_t)(W - side));
        fill(b, b->box_x, H * 17 / 20, side, side, 0xe0c020);
    }
    int bw = marker_block_width(), bh = marker_block_height();
    if (app.small && app.alternate && (app.counter & 1)) {
        fill(b, 0, H - 2 * bh, 32 * bw, 2 * bh, (app.counter & 2) ? 0xffffff : 0x000000);
        return whole;
    }
    uint32_t rows[2] = {app.counter, (uint32_t)now_us()};
    for (int r = 0; r < 2; r++) {
        for (int bit = 0; bit < 32; bit++) {
            int one = (rows[r] >> (31 - bit)) & 1;
            fill(b, bit * bw, r * bh, bw, bh, one ? 0xffffff : 0x000000);
        }
    }
    return whole;
}

static void buffer_release(void *data, struct wl_buffer *wl) {
    (void)wl;
    ((buffer *)data)->busy = 0;
}
static const struct wl_buffer_listener buffer_listener = {.release = buffer_release};

static void drop_buffers(void) {
    for (int i = 0; i < 2; i++) {
        buffer *b = &app.buffers[i];
        if (b->wl) wl_buffer_destroy(b->wl);
        if (b->pixels) munmap(b->pixels, b->bytes);
        memset(b, 0, sizeof *b);
    }
}

static int make_buffers(void) {
    drop_buffers();
    size_t bytes = (size_t)app.width * app.height * 4;
    for (int i = 0; i < 2; i++) {
        int fd = memfd_create("wayland-test-client", MFD_CLOEXEC);
        if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) return -1;
        void *pixels = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (pixels == MAP_FAILED) return -1;
        struct wl_shm_pool *pool = wl_shm_create_pool(app.shm, fd, (int32_t)bytes);
        buffer *b = &app.buffers[i];
        b->wl = wl_shm_pool_create_buffer(pool, 0, app.width, app.height, app.width * 4, WL_SHM_FORMAT_XRGB8888);
        wl_buffer_add_listener(b->wl, &buffer_listener, b);
        wl_shm_pool_destroy(pool);
        close(fd);
        b->pixels = pixels;
        b->bytes = bytes;
    }
    return 0;
}

// Draws and commits the next frame into a free buffer; 0 when both are still with the compositor.
static int present(void) {
    buffer *b = !app.buffers[0].busy ? &app.buffers[0] : !app.buffers[1].busy ? &app.buffers[1] : NULL;
    if (b == NULL) return 0;
    int whole = draw(b);
    wl_surface_attach(app.surface, b->wl, 0, 0);
    if (app.small && !whole) {
        int bottom = app.alternate && (app.counter & 1) ? app.height - 2 * marker_block_height() : 0;
        wl_surface_damage(app.surface, 0, bottom, 32 * marker_block_width(), 2 * marker_block_height());
    } else {
        wl_surface_damage(app.surface, 0, 0, app.width, app.height);
    }
    wl_surface_commit(app.surface);
    b->busy = 1;
    app.counter++;
    return 1;
}

// The red square, in a buffer of its own.
static void make_cursor(void) {
    int side = 24;
    size_t bytes = (size_t)side * side * 4;
    int fd = memfd_create("wayland-test-cursor", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) return;
    uint32_t *pixels = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (pixels == MAP_FAILED) { close(fd); return; }
    for (int i = 0; i < side * side; i++) pixels[i] = 0xffff0000;
    struct wl_shm_pool *pool = wl_shm_create_pool(app.shm, fd, (int32_t)bytes);
    app.cursor_buffer = wl_shm_pool_create_buffer(pool, 0, side, side, side * 4, WL_SHM_FORMAT_ARGB8888);
    wl_shm_pool_destroy(pool);
    close(fd);
    app.cursor_surface = wl_compositor_create_surface(app.compositor);
    wl_surface_attach(app.cursor_surface, app.cursor_buffer, 0, 0);
    wl_surface_damage(app.cursor_surface, 0, 0, side, side);
    wl_surface_commit(app.cursor_surface);
}

static void pointer_enter(void *data, struct wl_pointer *p, uint32_t serial, struct wl_surface *s, wl_fixed_t x, wl_fixed_t y) {
    (void)data; (void)s; (void)x; (void)y;
    if (app.cursor_surface == NULL) return;
    wl_pointer_set_cursor(p, serial, app.cursor_surface, 0, 0);
    // The test waits for this before it shares: on a loaded machine the enter can come late.
    printf("cursor set\n");
    fflush(stdout);
}
static void pointer_leave(void *d, struct wl_pointer *p, uint32_t serial, struct wl_surface *s) { (void)d; (void)p; (void)serial; (void)s; }
static void pointer_motion(void *d, struct wl_pointer *p, uint32_t t, wl_fixed_t x, wl_fixed_t y) { (void)d; (void)p; (void)t; (void)x; (void)y; }
static void pointer_button(void *d, struct wl_pointer *p, uint32_t serial, uint32_t t, uint32_t b, uint32_t st) {
    (void)d; (void)p; (void)serial; (void)t; (void)b; (void)st;
}
static void pointer_axis(void *d, struct wl_pointer *p, uint32_t t, uint32_t a, wl_fixed_t v) { (void)d; (void)p; (void)t; (void)a; (void)v; }
static const struct wl_pointer_listener pointer_listener = {
    .enter = pointer_enter, .leave = pointer_leave, .motion = pointer_motion, .button = pointer_button, .axis = pointer_axis,
};

static void seat_capabilities(void *data, struct wl_seat *seat, uint32_t caps) {
    (void)data;
    if ((caps & WL_SEAT_CAPABILITY_POINTER) && app.pointer == NULL) {
        app.pointer = wl_seat_get_pointer(seat);
        wl_pointer_add_listener(app.pointer, &pointer_listener, NULL);
    }
}
static void seat_name(void *data, struct wl_seat *seat, const char *name) { (void)data; (void)seat; (void)name; }
static const struct wl_seat_listener seat_listener = {.capabilities = seat_capabilities, .name = seat_name};

static void wm_ping(void *data, struct xdg_wm_base *wm, uint32_t serial) {
    (void)data;
    xdg_wm_base_pong(wm, serial);
}
static const struct xdg_wm_base_listener wm_listener = {.ping = wm_ping};

static void xdg_configure(void *data, struct xdg_surface *xdg, uint32_t serial) {
    (void)data;
    xdg_surface_ack_configure(xdg, serial);
    int w = app.pending_width > 0 ? app.pending_width : 640, h = app.pending_height > 0 ? app.pending_height : 480;
    if (w != app.width || h != app.height || !app.configured) {
        app.width = w;
        app.height = h;
        if (make_buffers() != 0) app.closed = 1;
        app.redraw = 1;
    }
    app.configured = 1;
}
static const struct xdg_surface_listener xdg_listener = {.configure = xdg_configure};

static void toplevel_configure(void *data, struct xdg_toplevel *t, int32_t w, int32_t h, struct wl_array *states) {
    (void)data; (void)t; (void)states;
    app.pending_width = w;
    app.pending_height = h;
}
static void toplevel_close(void *data, struct xdg_toplevel *t) {
    (void)data; (void)t;
    app.closed = 1;
}
static void toplevel_bounds(void *data, struct xdg_toplevel *t, int32_t w, int32_t h) {
    (void)data; (void)t; (void)w; (void)h;
}
static void toplevel_caps(void *data, struct xdg_toplevel *t, struct wl_array *caps) {
    (void)data; (void)t; (void)caps;
}
static const struct xdg_toplevel_listener toplevel_listener = {
    .configure = toplevel_configure, .close = toplevel_close,
    .configure_bounds = toplevel_bounds, .wm_capabilities = toplevel_caps,
};

static void global(void *data, struct wl_registry *r, uint32_t name, const char *interface, uint32_t version) {
    (void)data; (void)version;
    if (strcmp(interface, wl_compositor_interface.name) == 0) {
        app.compositor = wl_registry_bind(r, name, &wl_compositor_interface, 1);
    } else if (strcmp(interface, wl_shm_interface.name) == 0) {
        app.shm = wl_registry_bind(r, name, &wl_shm_interface, 1);
    } else if (strcmp(interface, xdg_wm_base_interface.name) == 0) {
        app.wm = wl_registry_bind(r, name, &xdg_wm_base_interface, 1);
        xdg_wm_base_add_listener(app.wm, &wm_listener, NULL);
    } else if (strcmp(interface, wl_seat_interface.name) == 0 && app.seat == NULL) {
        app.seat = wl_registry_bind(r, name, &wl_seat_interface, 1);
        wl_seat_add_listener(app.seat, &seat_listener, NULL);
    } else if (strcmp(interface, zwlr_virtual_pointer_manager_v1_interface.name) == 0) {
        app.pointers = wl_registry_bind(r, name, &zwlr_virtual_pointer_manager_v1_interface, 1);
    }
}
static void global_remove(void *data, struct wl_registry *r, uint32_t name) { (void)data; (void)r; (void)name; }
static const struct wl_registry_listener registry_listener = {.global = global, .global_remove = global_remove};

int main(int argc, char **argv) {
    int pointer_x = -1, pointer_y = -1, extent_x = 1, extent_y = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--alternate") == 0) app.alternate = 1;
    }
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--share-width") == 0) app.share_width = atoi(argv[i + 1]);
        if (strcmp(argv[i], "--pointer") == 0 && sscanf(argv[i + 1], "%d,%d,%d,%d", &pointer_x, &pointer_y, &extent_x, &extent_y) != 4) {
            pointer_x = -1;
        }
    }
    if (app.share_width <= 0) app.share_width = 1280;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    // A child inherits its parent's blocked signals (test threads block some): take them back.
    sigset_t wanted;
    sigemptyset(&wanted);
    sigaddset(&wanted, SIGUSR1);
    sigaddset(&wanted, SIGUSR2);
    sigaddset(&wanted, SIGHUP);
    sigaddset(&wanted, SIGTERM);
    sigaddset(&wanted, SIGINT);
    sigprocmask(SIG_UNBLOCK, &wanted, NULL);

    struct wl_display *display = wl_display_connect(NULL);
    if (display == NULL) {
        fprintf(stderr, "wayland-test-client: cannot connect: %s\n", strerror(errno));
        return 1;
    }
    struct wl_registry *registry = wl_display_get_registry(display);
    wl_registry_add_listener(registry, &registry_listener, NULL);
    wl_display_roundtrip(display);
    if (!app.compositor || !app.shm || !app.wm) {
        fprintf(stderr, "wayland-test-client: the compositor lacks wl_compositor, wl_shm or xdg_wm_base\n");
        return 1;
    }
    make_cursor();
    // The pointer first, so the seat has one (and this client its wl_pointer) before the window
    // maps under it: the enter that follows is where the cursor is set.
    if (pointer_x >= 0 && app.pointers != NULL) {
        struct zwlr_virtual_pointer_v1 *p = zwlr_virtual_pointer_manager_v1_create_virtual_pointer(app.pointers, NULL);
        wl_display_roundtrip(display);
        zwlr_virtual_pointer_v1_motion_absolute(p, 0, (uint32_t)pointer_x, (uint32_t)pointer_y, (uint32_t)extent_x,
                                                (uint32_t)extent_y);
        zwlr_virtual_pointer_v1_frame(p);
        wl_display_roundtrip(display);
    }
    app.surface = wl_compositor_create_surface(app.compositor);
    app.xdg = xdg_wm_base_get_xdg_surface(app.wm, app.surface);
    xdg_surface_add_listener(app.xdg, &xdg_listener, NULL);
    app.toplevel = xdg_surface_get_toplevel(app.xdg);
    xdg_toplevel_add_listener(app.toplevel, &toplevel_listener, NULL);
    xdg_toplevel_set_title(app.toplevel, "rtcshare-test");
    wl_surface_commit(app.surface);

    int animating = 0;
    uint64_t next_frame = now_us();
    int announced_width = 0, announced_height = 0;
    while (!quit_signal && !app.closed) {
        if (animate_signal || tick_signal) {
            // Each buffer is drawn whole once in the new mode (the box appears, or is painted over).
            app.small = tick_signal != 0;
            animate_signal = tick_signal = 0;
            animating = 1;
            next_frame = now_us();
            app.buffers[0].painted = app.buffers[1].painted = 0;
        }
        if (still_signal) { still_signal = 0; animating = 0; }
        uint64_t t = now_us();
        if (app.configured && (app.redraw || (animating && t >= next_frame))) {
            if (present()) {
                app.redraw = 0;
                while (next_frame <= t) next_frame += 50000;
                if (app.width != announced_width || app.height != announced_height) {
                    // Round trip first: the compositor has the picture once it answers.
                    wl_display_roundtrip(display);
                    printf("ready %dx%d\n", app.width, app.height);
                    fflush(stdout);
                    announced_width = app.width;
                    announced_height = app.height;
                }
            }
        }
        if (wl_display_flush(display) < 0 && errno != EAGAIN) break;
        int timeout = 100;
        if (animating) {
            uint64_t now = now_us();
            timeout = next_frame > now ? (int)((next_frame - now + 999) / 1000) : 0;
            if (timeout > 100) timeout = 100;
        }
        struct pollfd p = {.fd = wl_display_get_fd(display), .events = POLLIN, .revents = 0};
        int n = poll(&p, 1, timeout);
        if (n > 0 && wl_display_dispatch(display) < 0) break;
        if (n == 0 && wl_display_dispatch_pending(display) < 0) break;
    }
    drop_buffers();
    wl_display_disconnect(display);
    return 0;
}
