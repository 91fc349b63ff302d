// Micro benchmark of CCore's pixel transforms against libyuv and against memcpy, in one run.
// Prints one JSON line per operation and size. Each iteration times our call, libyuv's call and
// a memcpy of as many bytes as the operation moves, back to back and in an order that rotates
// every iteration, so the machine's noise and the cache state hit all three alike; the reported
// figure is the median over many iterations after a warm-up.
//
// memcpy_ns is the floor: memcpy of (bytes read + bytes written) / 2, i.e. the same memory
// traffic as the operation (memcpy reads and writes each byte it copies).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <CCore.h>
#include <libyuv.h>

enum { WARMUP = 10, ITERATIONS = 101 };

typedef struct image_buf {
    ccore_image im;
    uint8_t *mem;
} image_buf;

// An image laid out by CCore (64-byte aligned rows), filled with screen-like content.
static image_buf image_new(ccore_pixel_format f, int32_t w, int32_t h) {
    image_buf b;
    size_t bytes = ccore_image_bytes(f, w, h);
    b.mem = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!b.mem || ccore_image_layout(f, w, h, b.mem, bytes, &b.im) != 0) {
        fprintf(stderr, "yuv-bench: cannot allocate %dx%d\n", w, h);
        exit(1);
    }
    uint32_t s = 12345;
    for (size_t i = 0; i < bytes; i++) {
        s = s * 1103515245u + 12345u;
        b.mem[i] = (uint8_t)((i % 97 < 60) ? (i / 131) : (s >> 24)); // flat runs and detail
    }
    return b;
}

static void image_free(image_buf *b) { free(b->mem); }

static size_t i420_bytes(int32_t w, int32_t h) {
    return (size_t)w * h + 2 * (size_t)((w + 1) / 2) * ((h + 1) / 2);
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof v[0], by_value);
    return v[n / 2];
}

// One operation: our call, libyuv's call, and the bytes it reads plus writes.
typedef struct bench_op {
    const char *name;
    const char *size;   // the row's frame size
    const char *detail; // what exactly runs
    double target;      // our time / libyuv's time must not exceed this
    size_t traffic;     // bytes read + bytes written
    void (*ours)(void *ctx);
    void (*ref)(void *ctx);
    void *ctx;
} bench_op;

static uint8_t *copy_src, *copy_dst;

// Which of the three runs in which place: the first of an iteration finds the caches as the
// previous iteration's last left them, the second and third find the source (and destination)
// the one before just touched. The order rotates every iteration so no contender always sits in
// the warm or the cold place.
static void run(const bench_op *op) {
    double ours[ITERATIONS], ref[ITERATIONS], mem[ITERATIONS];
    size_t half = op->traffic / 2;
    for (int i = 0; i < WARMUP + ITERATIONS; i++) {
        double took[3];
        for (int k = 0; k < 3; k++) {
            int who = (i + k) % 3;
            double t0 = now_ns();
            if (who == 0)
                op->ours(op->ctx);
            else if (who == 1)
                op->ref(op->ctx);
            else
                memcpy(copy_dst, copy_src, half);
            __asm__ volatile("" ::: "memory"); // keep the copy from being optimised away
            took[who] = now_ns() - t0;
        }
        if (i >= WARMUP) {
            ours[i - WARMUP] = took[0];
            ref[i - WARMUP] = took[1];
            mem[i - WARMUP] = took[2];
        }
    }
    double o = median(ours, ITERATIONS), r = median(ref, ITERATIONS), m = median(mem, ITERATIONS);
    double vs_ref = o / r;
    printf("{\"op\":\"%s\",\"size\":\"%s\",\"detail\":\"%s\",\"ours_ns\":%.0f,\"libyuv_ns\":%.0f,"
           "\"memcpy_ns\":%.0f,\"ratio_vs_libyuv\":%.3f,\"ratio_vs_memcpy\":%.3f,"
           "\"target\":%.1f,\"met\":%s}\n",
           op->name, op->size, op->detail, o, r, m, vs_ref, o / m, op->target,
           vs_ref <= op->target ? "true" : "false");
    fflush(stdout);
}

// ---------------------------------------------------------------------------------------------
// The operations. Every context holds its own source and destination.

typedef struct orient_ctx {
    image_buf src, dst;
    int tag;                     // ours
    enum RotationMode rotation;  // libyuv (mirror uses I420Mirror)
    int mirror;
} orient_ctx;

static void orient_ours(void *p) {
    orient_ctx *c = p;
    ccore_i420_orient(&c->src.im, &c->dst.im, c->tag);
}

static void orient_ref(void *p) {
    orient_ctx *c = p;
    const ccore_image *s = &c->src.im, *d = &c->dst.im;
    if (c->mirror)
        I420Mirror(s->plane[0], s->stride[0], s->plane[1], s->stride[1], s->plane[2], s->stride[2],
                   d->plane[0], d->stride[0], d->plane[1], d->stride[1], d->plane[2], d->stride[2],
                   s->width, s->height);
    else
        I420Rotate(s->plane[0], s->stride[0], s->plane[1], s->stride[1], s->plane[2], s->stride[2],
                   d->plane[0], d->stride[0], d->plane[1], d->stride[1], d->plane[2], d->stride[2],
                   s->width, s->height, c->rotation);
}

typedef struct convert_ctx {
    image_buf src, dst;
} convert_ctx;

static void nv12_ours(void *p) {
    convert_ctx *c = p;
    ccore_nv12_to_i420(&c->src.im, &c->dst.im);
}

static void nv12_ref(void *p) {
    convert_ctx *c = p;
    const ccore_image *s = &c->src.im, *d = &c->dst.im;
    NV12ToI420(s->plane[0], s->stride[0], s->plane[1], s->stride[1], d->plane[0], d->stride[0],
               d->plane[1], d->stride[1], d->plane[2], d->stride[2], s->width, s->height);
}

static void bgra_ours(void *p) {
    convert_ctx *c = p;
    ccore_bgra_to_i420(&c->src.im, &c->dst.im, CCORE_RANGE_LIMITED);
}

// libyuv's "ARGB" is B, G, R, A in memory: our BGRA. Both BT.601 limited range.
static void bgra_ref(void *p) {
    convert_ctx *c = p;
    const ccore_image *s = &c->src.im, *d = &c->dst.im;
    ARGBToI420(s->plane[0], s->stride[0], d->plane[0], d->stride[0], d->plane[1], d->stride[1],
               d->plane[2], d->stride[2], s->width, s->height);
}

typedef struct scale_ctx {
    image_buf src, dst;
} scale_ctx;

static void scale_ours(void *p) {
    scale_ctx *c = p;
    ccore_i420_scale(&c->src.im, &c->dst.im, CCORE_FILTER_BILINEAR);
}

static void i420_scale_ref(const ccore_image *s, const ccore_image *d) {
    I420Scale(s->plane[0], s->stride[0], s->plane[1], s->stride[1], s->plane[2], s->stride[2],
              s->width, s->height, d->plane[0], d->stride[0], d->plane[1], d->stride[1],
              d->plane[2], d->stride[2], d->width, d->height, kFilterBilinear);
}

static void scale_ref(void *p) {
    scale_ctx *c = p;
    i420_scale_ref(&c->src.im, &c->dst.im);
}

typedef struct fused_ctx {
    image_buf src, dst, upright; // upright: libyuv's intermediate, full size
    void *scratch;
    size_t scratch_len;
} fused_ctx;

static void fused_ours(void *p) {
    fused_ctx *c = p;
    ccore_transform(&c->src.im, &c->dst.im, 6, CCORE_FILTER_BILINEAR, CCORE_RANGE_LIMITED,
                    c->scratch, c->scratch_len);
}

// What it takes without a fused pass: rotate the whole frame, then scale it.
static void fused_ref(void *p) {
    fused_ctx *c = p;
    const ccore_image *s = &c->src.im, *u = &c->upright.im;
    I420Rotate(s->plane[0], s->stride[0], s->plane[1], s->stride[1], s->plane[2], s->stride[2],
               u->plane[0], u->stride[0], u->plane[1], u->stride[1], u->plane[2], u->stride[2],
               s->width, s->height, kRotate90);
    i420_scale_ref(u, &c->dst.im);
}

// ---------------------------------------------------------------------------------------------

typedef struct frame_size {
    const char *label;
    int32_t w, h;       // landscape frame
    int32_t sw, sh;     // scale target (and fused output)
} frame_size;

static void bench_size(const frame_size *fs) {
    int32_t w = fs->w, h = fs->h;
    size_t frame = i420_bytes(w, h);
    char detail[128];

    struct { const char *name; int tag; enum RotationMode rot; int mirror; } orients[] = {
        {"rotate90", 6, kRotate90, 0},
        {"rotate180", 3, kRotate180, 0},
        {"rotate270", 8, kRotate270, 0},
        {"mirror", 2, kRotate0, 1},
    };
    for (size_t i = 0; i < sizeof orients / sizeof orients[0]; i++) {
        int swaps = orients[i].tag >= 5;
        orient_ctx c = {image_new(CCORE_PIXEL_I420, w, h),
                        image_new(CCORE_PIXEL_I420, swaps ? h : w, swaps ? w : h), orients[i].tag,
                        orients[i].rot, orients[i].mirror};
        snprintf(detail, sizeof detail, "I420 %dx%d, ccore_i420_orient tag %d vs %s", w, h,
                 orients[i].tag, orients[i].mirror ? "I420Mirror" : "I420Rotate");
        bench_op op = {orients[i].name, fs->label, detail, 1.0, 2 * frame, orient_ours, orient_ref, &c};
        run(&op);
        image_free(&c.src);
        image_free(&c.dst);
    }
    {
        convert_ctx c = {image_new(CCORE_PIXEL_NV12, w, h), image_new(CCORE_PIXEL_I420, w, h)};
        snprintf(detail, sizeof detail, "%dx%d vs NV12ToI420", w, h);
        bench_op op = {"nv12_to_i420", fs->label, detail, 1.0, 2 * frame, nv12_ours, nv12_ref, &c};
        run(&op);
        image_free(&c.src);
        image_free(&c.dst);
    }
    {
        convert_ctx c = {image_new(CCORE_PIXEL_BGRA, w, h), image_new(CCORE_PIXEL_I420, w, h)};
        snprintf(detail, sizeof detail, "%dx%d limited range vs ARGBToI420", w, h);
        bench_op op = {"bgra_to_i420", fs->label, detail, 1.0, 4 * (size_t)w * h + frame,
                       bgra_ours, bgra_ref, &c};
        run(&op);
        image_free(&c.src);
        image_free(&c.dst);
    }
    {
        scale_ctx c = {image_new(CCORE_PIXEL_I420, w, h), image_new(CCORE_PIXEL_I420, fs->sw, fs->sh)};
        snprintf(detail, sizeof detail, "I420 %dx%d->%dx%d bilinear vs I420Scale kFilterBilinear",
                 w, h, fs->sw, fs->sh);
        bench_op op = {"scale", fs->label, detail, 1.0, frame + i420_bytes(fs->sw, fs->sh),
                       scale_ours, scale_ref, &c};
        run(&op);
        image_free(&c.src);
        image_free(&c.dst);
    }
    {
        // A portrait capture (h x w) tagged 6: upright it is w x h, scaled to sw x sh.
        fused_ctx c = {image_new(CCORE_PIXEL_I420, h, w), image_new(CCORE_PIXEL_I420, fs->sw, fs->sh),
                       image_new(CCORE_PIXEL_I420, w, h), NULL, 0};
        c.scratch_len = ccore_transform_scratch_size(&c.src.im, &c.dst.im, 6);
        c.scratch = aligned_alloc(64, (c.scratch_len + 63) / 64 * 64);
        snprintf(detail, sizeof detail,
                 "I420 %dx%d tag 6 -> %dx%d bilinear, one pass (scratch %zu B) vs I420Rotate + "
                 "I420Scale", h, w, fs->sw, fs->sh, c.scratch_len);
        bench_op op = {"fused_orient_scale", fs->label, detail, 0.7,
                       frame + i420_bytes(fs->sw, fs->sh), fused_ours, fused_ref, &c};
        run(&op);
        free(c.scratch);
        image_free(&c.src);
        image_free(&c.dst);
        image_free(&c.upright);
    }
}

int main(void) {
    size_t most = 4 * 1920 * 1080 + i420_bytes(1920, 1080);
    copy_src = aligned_alloc(64, most);
    copy_dst = aligned_alloc(64, most);
    if (!copy_src || !copy_dst) return 1;
    memset(copy_src, 1, most);
    memset(copy_dst, 2, most);
    frame_size sizes[] = {
        {"1920x1080", 1920, 1080, 1280, 720},
        {"1280x720", 1280, 720, 854, 480},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) bench_size(&sizes[i]);
    free(copy_src);
    free(copy_dst);
    return 0;
}
