/* A value network's HJI-residual loss, forward and backward, on one thread: a sine (SIREN) or tanh
 * MLP V(x, tau) of 3 hidden layers of 256 (in -> 256 -> 256 -> 256 -> 1, linear out) at B points,
 * its input gradient on the tape (dg_mlp_forward_grad: reverse mode, one op for one output), the loss
 * mean_b (dV/dtau + |grad_x V|_1 - |x|²)² + mean_b (V - x_0)² and dg_backward. Prints one JSON line:
 * ms per iteration (the median of the repeats after one warm-up), the tape's FLOPs per iteration
 * (dg_ctx_flops: matrix products exactly, elementwise ops one a element) and GFLOP/s, the arena's
 * peak, and beside it the same for V alone (forward and backward of mean(V²), no input gradient).
 * Usage: build/bench/value_grad [points 8192] [inputs 4] [sine|tanh] [repeats 5] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "difgames/difgames.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct job {
    dg_mlp     m;
    dg_params *p;
    int        B, in, grad;  /* grad 0: V alone */
    dg_real   *x;
} job;

/* one iteration: the loss and its backward (dg_ctx_run's job) */
static dg_status iteration(dg_ctx *ctx, void *user) {
    job *j = user;
    const int d = j->in - 1;
    dg_tensor *x = dg_from(ctx, 2, (int[]){j->B, j->in}, j->x), *g = NULL, *loss;
    if (j->grad) {
        dg_tensor *v = dg_mlp_forward_grad(ctx, &j->m, j->p, x, &g);
        if (!v) return dg_ctx_status(ctx);
        dg_tensor *c = dg_sum_axis(ctx, dg_square(ctx, dg_cols(ctx, x, 0, d)), 1);
        dg_tensor *h = dg_sum_axis(ctx, dg_abs(ctx, dg_cols(ctx, g, 0, d)), 1);
        dg_tensor *res = dg_sub(ctx, dg_add(ctx, dg_cols(ctx, g, d, 1), h), c);
        loss = dg_add(ctx, dg_mean(ctx, dg_square(ctx, res)),
                      dg_mean(ctx, dg_square(ctx, dg_sub(ctx, v, dg_cols(ctx, x, 0, 1)))));
    } else
        loss = dg_mean(ctx, dg_square(ctx, dg_mlp_forward(ctx, &j->m, j->p, x)));
    dg_params_zero_grad(j->p);
    if (!loss) return dg_ctx_status(ctx);
    return dg_backward(ctx, loss);
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* times reps iterations of j after one warm-up: the median ms into *ms, FLOPs per iteration into
 * *flops, the arena's peak into *peak; 0, or 1 after printing the error */
static int measure(job *j, int reps, double *ms, double *flops, size_t *peak) {
    dg_ctx *ctx = dg_ctx_create((size_t)1 << 26);
    if (!ctx || dg_ctx_run(&ctx, DG_ARENA_MAX, iteration, j) != DG_OK) {
        fprintf(stderr, "value_grad: %s\n", ctx ? dg_ctx_error(ctx) : "out of memory");
        return 1;
    }
    double t[64];
    uint64_t f0 = dg_ctx_flops(ctx);
    for (int r = 0; r < reps; r++) {
        const double t0 = now();
        dg_ctx_reset(ctx);
        if (iteration(ctx, j) != DG_OK) {
            fprintf(stderr, "value_grad: %s\n", dg_ctx_error(ctx));
            return 1;
        }
        t[r] = 1e3 * (now() - t0);
    }
    *flops = (double)(dg_ctx_flops(ctx) - f0) / reps;
    *peak = dg_ctx_peak(ctx);
    qsort(t, (size_t)reps, sizeof t[0], cmp_double);
    *ms = t[reps / 2];
    dg_ctx_free(ctx);
    return 0;
}

int main(int argc, char **argv) {
    const int B = argc > 1 ? atoi(argv[1]) : 8192, in = argc > 2 ? atoi(argv[2]) : 4;
    const int sine = argc > 3 ? strcmp(argv[3], "tanh") != 0 : 1, reps = argc > 4 ? atoi(argv[4]) : 5;
    if (B < 1 || in < 2 || in > 64 || reps < 1 || reps > 64) {
        fprintf(stderr, "usage: value_grad [points >= 1] [inputs 2..64] [sine|tanh] [repeats 1..64]\n");
        return 2;
    }
    job j = {.B = B, .in = in};
    dg_err e = {0};
    j.p = dg_params_create();
    j.x = malloc((size_t)B * in * sizeof(dg_real));
    if (!j.p || !j.x || dg_mlp_init(&j.m, j.p, "value", in, (int[]){256, 256, 256}, 3, 1, &e) != DG_OK ||
        dg_mlp_set_activation(&j.m, sine ? DG_MLP_SINE : DG_MLP_TANH, 1, &e) != DG_OK) {
        fprintf(stderr, "value_grad: %s\n", e.msg[0] ? e.msg : "out of memory");
        return 1;
    }
    dg_rng rng;
    dg_rng_seed(&rng, 1);
    dg_mlp_reset_params(&j.m, j.p, &rng);
    for (int64_t i = 0; i < (int64_t)B * in; i++) j.x[i] = dg_rng_uniform(&rng, -1.0f, 1.0f);
    double ms, flops, ms_v, flops_v;
    size_t peak, peak_v;
    j.grad = 1;
    if (measure(&j, reps, &ms, &flops, &peak)) return 1;
    j.grad = 0;
    if (measure(&j, reps, &ms_v, &flops_v, &peak_v)) return 1;
    printf("{\"net\":\"%s %d-256-256-256-1\",\"points\":%d,\"precision\":\"%s\",\"ms_per_iteration\":%.3f,"
           "\"gflop_per_iteration\":%.3f,\"gflops\":%.2f,\"arena_mib\":%.1f,"
           "\"value_only_ms\":%.3f,\"value_only_gflops\":%.2f,\"ratio_to_value_only\":%.2f}\n",
           sine ? "sine" : "tanh", in, B, DG_REAL_NAME, ms, flops * 1e-9, flops * 1e-6 / ms, peak / 1048576.0, ms_v,
           flops_v * 1e-6 / ms_v, ms / ms_v);
    free(j.x);
    dg_params_free(j.p);
    return 0;
}
