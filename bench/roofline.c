/* roofline: this machine's roofs (one core's float32 FMA peak, memory and cache bandwidth) and
 * where the reach epoch's hot kernels sit under them (docs/performance.md, "Roofline").
 * A benchmark, not an example: built with the rest (build/bench/roofline), run by hand.
 *
 *     ./build/bench/roofline [peak|bandwidth|kernels|all]     (default all)
 *
 * Every figure is the best of many short timed repeats (the minimum is the least disturbed by
 * other work on a shared machine; the median is printed next to it). FLOPs of a kernel are the
 * ops' own count (dg_ctx_flops); bytes are the least it must move: each operand read once and
 * each result written once. Prints markdown tables. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/core.h"
#include "difgames/physics.h"

typedef float v16 __attribute__((vector_size(64)));

static int cmp_d(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* best and median seconds of reps timed calls of fn(user) */
typedef void (*job_fn)(void *user);
static void timeit(job_fn fn, void *user, int reps, double *best, double *med) {
    double *t = malloc((size_t)reps * sizeof *t);
    if (!t) {
        *best = *med = 0;
        return;
    }
    fn(user);  /* warm the caches */
    for (int i = 0; i < reps; i++) {
        const double t0 = dg_clock_s();
        fn(user);
        t[i] = dg_clock_s() - t0;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_d);
    *best = t[0];
    *med = t[reps / 2];
    free(t);
}

/* ------------------------------------------------------------------ peak FMA */

#define PEAK_ACC 24     /* independent chains: more than latency x ports (4 x 2) */
#define PEAK_ITERS 4096
static volatile float peak_sink;
static volatile float peak_seed[PEAK_ACC] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f, 1.1f, 1.2f,
                                              1.3f, 1.4f, 1.5f, 1.6f, 1.7f, 1.8f, 1.9f, 2.0f, 2.1f, 2.2f, 2.3f, 2.4f};

#define FMA8(a0, a1, a2, a3, a4, a5, a6, a7) \
    a0 = a0 * m + c; a1 = a1 * m + c; a2 = a2 * m + c; a3 = a3 * m + c; \
    a4 = a4 * m + c; a5 = a5 * m + c; a6 = a6 * m + c; a7 = a7 * m + c
static void peak_job(void *user) {
    (void)user;
    const v16 m = (v16){0} + 0.999999f, c = (v16){0} + 1e-7f;
    /* each chain starts from its own volatile read: with start values the compiler can prove equal
       (y0 = x0 + c and x1 = m + c were one expression) it merges their chains, and it once ran 18
       chains while the count below said 24, a peak a third too high */
    v16 x0 = (v16){0} + peak_seed[0], x1 = (v16){0} + peak_seed[1], x2 = (v16){0} + peak_seed[2];
    v16 x3 = (v16){0} + peak_seed[3], x4 = (v16){0} + peak_seed[4], x5 = (v16){0} + peak_seed[5];
    v16 x6 = (v16){0} + peak_seed[6], x7 = (v16){0} + peak_seed[7], y0 = (v16){0} + peak_seed[8];
    v16 y1 = (v16){0} + peak_seed[9], y2 = (v16){0} + peak_seed[10], y3 = (v16){0} + peak_seed[11];
    v16 y4 = (v16){0} + peak_seed[12], y5 = (v16){0} + peak_seed[13], y6 = (v16){0} + peak_seed[14];
    v16 y7 = (v16){0} + peak_seed[15], z0 = (v16){0} + peak_seed[16], z1 = (v16){0} + peak_seed[17];
    v16 z2 = (v16){0} + peak_seed[18], z3 = (v16){0} + peak_seed[19], z4 = (v16){0} + peak_seed[20];
    v16 z5 = (v16){0} + peak_seed[21], z6 = (v16){0} + peak_seed[22], z7 = (v16){0} + peak_seed[23];
    for (int i = 0; i < PEAK_ITERS; i++) {  /* 24 independent FMA chains, 16 lanes each */
        FMA8(x0, x1, x2, x3, x4, x5, x6, x7);
        FMA8(y0, y1, y2, y3, y4, y5, y6, y7);
        FMA8(z0, z1, z2, z3, z4, z5, z6, z7);
    }
    const v16 s = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + y0 + y1 + y2 + y3 + y4 + y5 + y6 + y7 + z0 + z1 + z2 +
                  z3 + z4 + z5 + z6 + z7;
    peak_sink = s[0];
}

static double peak_gflops(void) {
    double best, med;
    timeit(peak_job, NULL, 2000, &best, &med);
    const double flop = 2.0 * 16 * PEAK_ACC * PEAK_ITERS;
    printf("| float32 FMA, 16 lanes, %d chains | %.1f | %.1f |\n", PEAK_ACC, flop / best / 1e9, flop / med / 1e9);
    return flop / best / 1e9;
}

/* ------------------------------------------------------------------ bandwidth */

typedef struct bw_job { float *a, *b; size_t n; int mode; } bw_job;

static void bw_run(void *user) {
    bw_job *j = user;
    float *restrict a = j->a;
    const float *restrict b = j->b;
    if (j->mode == 0) {  /* read: a sum the compiler must keep */
        v16 s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
        for (size_t i = 0; i + 64 <= j->n; i += 64) {
            v16 x0, x1, x2, x3;
            memcpy(&x0, b + i, 64);
            memcpy(&x1, b + i + 16, 64);
            memcpy(&x2, b + i + 32, 64);
            memcpy(&x3, b + i + 48, 64);
            s0 += x0;
            s1 += x1;
            s2 += x2;
            s3 += x3;
        }
        peak_sink = (s0 + s1 + s2 + s3)[0];
    } else {  /* read one, write one: a = 1.0001 b */
        for (size_t i = 0; i < j->n; i++) a[i] = 1.0001f * b[i];
    }
}

static void bandwidth(double *l2_read, double *dram_read) {
    static const struct { const char *what; size_t bytes; } sizes[] = {
        {"L1 (16 KiB)", 16u << 10}, {"L2 (512 KiB)", 512u << 10}, {"beyond the caches (1 GiB)", 1u << 30}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const size_t n = sizes[s].bytes / sizeof(float);
        bw_job j = {aligned_alloc(64, n * sizeof(float)), aligned_alloc(64, n * sizeof(float)), n, 0};
        if (!j.a || !j.b) {
            printf("| %s | (no memory) | | |\n", sizes[s].what);
            free(j.a);
            free(j.b);
            continue;
        }
        for (size_t i = 0; i < n; i++) j.a[i] = j.b[i] = (float)(i & 255);
        const int reps = sizes[s].bytes > (64u << 20) ? 7 : (int)((256u << 20) / sizes[s].bytes);
        double rb, rm, cb, cm;
        timeit(bw_run, &j, reps, &rb, &rm);
        j.mode = 1;
        timeit(bw_run, &j, reps, &cb, &cm);
        const double by = (double)sizes[s].bytes;
        printf("| %s | %.1f | %.1f | %.1f |\n", sizes[s].what, by / rb / 1e9, 2 * by / cb / 1e9, by / rm / 1e9);
        if (s == 1) *l2_read = by / rb / 1e9;
        if (s == 2) *dram_read = by / rb / 1e9;
        free(j.a);
        free(j.b);
    }
}

/* ------------------------------------------------------------------ kernels */

#define KSTEPS 16  /* layer calls per arena reset (weights are transposed once per reset) */

typedef struct kern {
    dg_ctx *ctx;
    dg_params *p;          /* the layer's weight (O, I) and bias (O), as a policy holds them */
    int B, I, O;
    float *x, *a;          /* input (B, I) or state (B, 4); action (B, 2) */
    int what;              /* 0 linear_tanh forward, 1 its forward + backward, 2 tanh, 3 phys step, 4 its fwd + bwd */
    uint64_t flops;        /* of one run */
    int calls;             /* kernel calls in one run */
} kern;

static void kern_run(void *user) {
    kern *k = user;
    dg_ctx_reset(k->ctx);
    dg_params_zero_grad(k->p);
    const uint64_t f0 = dg_ctx_flops(k->ctx);
    dg_tensor *out = NULL;
    if (k->what <= 1) {  /* KSTEPS calls per arena reset, as an episode's steps share one */
        dg_tensor *w = dg_param(k->ctx, k->p, 0), *b = dg_param(k->ctx, k->p, 1);
        for (int s = 0; s < KSTEPS; s++) {
            dg_tensor *x = dg_from(k->ctx, 2, (int[]){k->B, k->I}, k->x);
            dg_set_requires_grad(x);
            dg_tensor *y = dg_linear_tanh(k->ctx, x, w, b);
            if (k->what == 1) {  /* d y = 1 in row 0, 0 elsewhere: the kernels do the full work */
                y = dg_sum(k->ctx, dg_rows(k->ctx, y, 0, 1));
                out = out ? dg_add(k->ctx, out, y) : y;
            }
        }
    } else if (k->what == 2) {
        dg_tensor *x = dg_from(k->ctx, 2, (int[]){k->B, k->O}, k->x);
        dg_set_requires_grad(x);
        out = dg_tanh(k->ctx, x);
    } else {
        dg_tensor *s = dg_from(k->ctx, 2, (int[]){k->B, 4}, k->x);
        dg_tensor *a = dg_from(k->ctx, 2, (int[]){k->B, 2}, k->a);
        dg_set_requires_grad(s);
        dg_set_requires_grad(a);
        const float accel = 5.0f;
        out = dg_phys_step(k->ctx, s, a, 1, &accel, 0.05f, 0.98f);
    }
    if (k->what == 1) dg_backward(k->ctx, out);
    if (k->what == 4) dg_backward(k->ctx, dg_sum(k->ctx, out));  /* d out = 1 */
    k->flops = dg_ctx_flops(k->ctx) - f0;
    k->calls = k->what <= 1 ? KSTEPS : 1;
}

/* one row of the kernel table: FLOPs, bytes, time, GFLOP/s, and the roof at its intensity */
static void kernel_row(const char *name, kern *k, double bytes, double peak, double bw_l2) {
    double best, med;
    timeit(kern_run, k, k->what <= 1 ? 400 : 3000, &best, &med);
    best /= k->calls;
    const double f = (double)k->flops / k->calls, ai = f / bytes, roof = ai * bw_l2 < peak ? ai * bw_l2 : peak;
    if (f > 0)
        printf("| %s | %.0f | %.0f | %.2f | %.2f | %.1f | %.1f | %.0f %% |\n", name, f, bytes, ai, best * 1e6,
               f / best / 1e9, roof, 100 * f / best / 1e9 / roof);
    else  /* an op that keeps no FLOP count: against the bandwidth roof alone */
        printf("| %s | - | %.0f | - | %.2f | %.1f GB/s | %.0f GB/s | %.0f %% |\n", name, bytes, best * 1e6,
               bytes / best / 1e9, bw_l2, 100 * bytes / best / 1e9 / bw_l2);
}

static void kernels(double peak, double bw_l2) {
    static const struct { const char *name; int B, I, O; } L[] = {
        {"layer 1, 6 -> 64 (B 64)", 64, 6, 64},     {"layer 2, 64 -> 64 (B 64)", 64, 64, 64},
        {"layer 3, 64 -> 2 (B 64)", 64, 64, 2},     {"layer 2, 64 -> 64 (B 1024)", 1024, 64, 64},
        {"layer 2, 256 -> 256 (B 64)", 64, 256, 256}};
    dg_ctx *ctx = dg_ctx_create(64u << 20);
    float *x = malloc(1024 * 256 * sizeof(float)), *a = malloc(1024 * 2 * sizeof(float));
    if (!ctx || !x || !a) {
        printf("(no memory)\n");
        dg_ctx_free(ctx);
        free(x);
        free(a);
        return;
    }
    dg_rng r;
    dg_rng_seed(&r, 1);
    for (int i = 0; i < 1024 * 256; i++) x[i] = dg_rng_uniform(&r, -1, 1);
    for (int i = 0; i < 1024 * 2; i++) a[i] = dg_rng_uniform(&r, -1, 1);
    printf("| kernel | FLOP/call | bytes/call | FLOP/byte | best us | GFLOP/s | roof GFLOP/s | of roof |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    for (size_t l = 0; l < sizeof L / sizeof L[0]; l++) {
        dg_params *p = dg_params_create();
        if (!p) break;
        dg_params_add(p, "w", 2, (int[]){L[l].O, L[l].I}, NULL);
        dg_params_add(p, "b", 1, (int[]){L[l].O}, NULL);
        const float s = 1.0f / (float)L[l].I;
        for (int i = 0; i < L[l].O * L[l].I; i++) dg_params_data(p, 0)[i] = dg_rng_uniform(&r, -s, s);
        for (int i = 0; i < L[l].O; i++) dg_params_data(p, 1)[i] = dg_rng_uniform(&r, -s, s);
        const int B = L[l].B, I = L[l].I, O = L[l].O;
        kern k = {ctx, p, B, I, O, x, a, 0, 0, 1};
        char name[96];
        /* forward reads x, W, b and writes y; backward reads dy, y, x, W, writes dx and dW, db */
        snprintf(name, sizeof name, "linear+tanh forward, %s", L[l].name);
        kernel_row(name, &k, 4.0 * (B * I + O * I + O + B * O), peak, bw_l2);
        k.what = 1;
        snprintf(name, sizeof name, "linear+tanh fwd + bwd, %s", L[l].name);
        kernel_row(name, &k, 4.0 * (B * I + O * I + O + B * O) + 4.0 * (2 * B * O + B * I + O * I + B * I + O * I + O),
                   peak, bw_l2);
        dg_params_free(p);
    }
    dg_params *p = dg_params_create();
    if (p) {
        dg_params_add(p, "w", 2, (int[]){1, 1}, NULL);
        dg_params_add(p, "b", 1, (int[]){1}, NULL);
        kern k = {ctx, p, 64, 64, 64, x, a, 2, 0, 1};
        kernel_row("tanh (64 x 64)", &k, 4.0 * 2 * 64 * 64, peak, bw_l2);
        k.what = 3;
        kernel_row("physics step (B 64)", &k, 4.0 * 64 * (4 + 2 + 4), peak, bw_l2);
        k.what = 4;
        kernel_row("physics step fwd + bwd (B 64)", &k, 4.0 * 64 * (4 + 2 + 4) * 2 + 4.0 * 64 * (4 + 2), peak, bw_l2);
        dg_params_free(p);
    }
    dg_ctx_free(ctx);
    free(x);
    free(a);
}

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "all";
    const int all = !strcmp(what, "all");
    if (!all && strcmp(what, "peak") && strcmp(what, "bandwidth") && strcmp(what, "kernels")) {
        fprintf(stderr, "usage: roofline [peak|bandwidth|kernels|all]\n");
        return 2;
    }
    double peak = 0, dram = 0, l2 = 0;
    printf("| compute roof (one core) | best GFLOP/s | median GFLOP/s |\n|---|---|---|\n");
    peak = peak_gflops();
    printf("\n| memory roof (one core) | read GB/s | copy GB/s (read + write) | median read GB/s |\n|---|---|---|---|\n");
    if (all || !strcmp(what, "bandwidth") || !strcmp(what, "kernels")) bandwidth(&l2, &dram);
    if (all || !strcmp(what, "kernels")) {
        printf("\nKernels against the roofline min(%.0f GFLOP/s, %.0f GB/s L2 read x FLOP/byte): their operands fit in L2.\n\n",
               peak, l2);
        kernels(peak, l2);
    }
    return 0;
}
