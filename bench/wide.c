/* The matrix kernels of the reach MLP's 64 -> 64 layer, called directly (no op around them: no
 * node, no copies), at B 64 and B 1024: the best of many repeats, in microseconds per call and
 * GFLOP/s. At B 1024 also "far": the layer's input (forward, weight gradient) and output (forward)
 * rotate through 32 copies (16 MiB each way, beyond L2), as a long episode's tape is when the
 * backward reaches it. docs/performance.md ("The third round") compares builds with it.
 * Usage: build/bench/wide [repeats] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../src/core/internal.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

enum { BMAX = 1024, H = 64 };

enum { FAR = 32 };

static float x[BMAX * H], y[BMAX * H], d[BMAX * H], c[BMAX * H], w[H * H], gw[H * H], gb[H], bias[H];
static float *xs[FAR], *cs[FAR];  /* far copies of x and c */

static void run_far(int which, int B, int i) {
    if (which == 0) dg__gemm_bias_act(B, H, H, xs[i], H, w, H, bias, 1, cs[i], H);
    else if (which == 1) dg__gemm_acc(H, H, B, d, 1, H, xs[i], H, gw, H);
    else {  /* linear's backward products: dx stored (prefetching x when which is 3), then dW */
        if (which == 3) dg__gemm_store_prefetch(B, H, H, d, H, w, H, c, H, xs[i], (int64_t)B * H);
        else dg__gemm_bias_act(B, H, H, d, H, w, H, NULL, 0, c, H);
        dg__gemm_acc(H, H, B, d, 1, H, xs[i], H, gw, H);
    }
}

static void run(int which, int B) {
    switch (which) {
    case 0: dg__gemm_bias_act(B, H, H, x, H, w, H, bias, 1, c, H); break;   /* forward: product, bias, tanh */
    case 1: dg__gemm_bias_act(B, H, H, x, H, w, H, bias, 0, c, H); break;   /* forward without the tanh */
    case 2: dg__tanh_grad_colsum(B, H, y, d, gb); break;                    /* dz = dy (1 - y^2), bias grad */
    case 3: dg__gemm_acc(H, H, B, d, 1, H, x, H, gw, H); break;             /* dW += dz^T x */
    default: dg__gemm_bias_act(B, H, H, d, H, w, H, NULL, 0, c, H); break;  /* dx = dz W (stored) */
    }
}

int main(int argc, char **argv) {
    const int reps = argc > 1 ? atoi(argv[1]) : 300;
    if (reps < 1) {
        fprintf(stderr, "usage: wide [repeats >= 1]\n");
        return 2;
    }
    for (int i = 0; i < BMAX * H; i++) {
        x[i] = (float)(i % 13) * 0.01f - 0.06f;
        y[i] = (float)(i % 5) * 0.1f - 0.2f;
    }
    for (int i = 0; i < H * H; i++) w[i] = (float)(i % 7) * 0.01f - 0.03f;
    for (int f = 0; f < FAR; f++) {
        xs[f] = malloc(sizeof x), cs[f] = malloc(sizeof c);
        if (!xs[f] || !cs[f]) return 1;
        for (int i = 0; i < BMAX * H; i++) xs[f][i] = x[i], cs[f][i] = 0.0f;
    }
    static const char *names[] = {"forward (product, bias, tanh)", "forward, product and bias only",
                                  "dz = dy (1 - y^2), bias grad", "weight grad dW += dz^T x",
                                  "input grad dx = dz W"};
    static const int batches[] = {64, 1024};
    printf("| kernel (64 -> 64) | B | best us | GFLOP/s |\n|---|---|---|---|\n");
    for (int bi = 0; bi < 2; bi++) {
        const int B = batches[bi], inner = B == 64 ? 20 : 2;
        for (int k = 0; k < 5; k++) {
            double best = 1e30;
            for (int r = 0; r < reps; r++) {
                for (int i = 0; i < B * H; i++) d[i] = (float)(i % 11) * 0.02f - 0.1f;  /* dz is in place */
                for (int i = 0; i < H * H; i++) gw[i] = 0.0f;
                for (int i = 0; i < H; i++) gb[i] = 0.0f;
                const double t0 = now();
                for (int i = 0; i < inner; i++) run(k, B);
                const double t = (now() - t0) / inner;
                if (t < best) best = t;
            }
            const double flop = k == 2 ? 0.0 : 2.0 * B * H * H;
            printf("| %s | %d | %.3f | %.0f |\n", names[k], B, best * 1e6, flop / best * 1e-9);
        }
    }
    static const char *far_names[] = {"forward (product, bias, tanh)", "weight grad dW += dz^T x",
                                      "dx = dz W, then dW", "dx = dz W prefetching x, then dW"};
    for (int k = 0; k < 4; k++) {  /* far: each call's x (and c) the least recently used copy */
        double best = 1e30;
        for (int r = 0; r < reps / 10 + 1; r++) {
            const double t0 = now();
            for (int i = 0; i < FAR; i++) run_far(k, BMAX, i);
            const double t = (now() - t0) / FAR;
            if (t < best) best = t;
        }
        printf("| %s, far | %d | %.3f | %.0f |\n", far_names[k], BMAX, best * 1e6,
               (k >= 2 ? 4.0 : 2.0) * BMAX * H * H / best * 1e-9);
    }
    for (int f = 0; f < FAR; f++) free(xs[f]), free(cs[f]);
    return 0;
}
