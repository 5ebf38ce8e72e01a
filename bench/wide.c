/* The matrix kernels of the reach MLP's 64 -> 64 layer, called directly (no op around them: no
 * node, no copies), at B 64 and B 1024: the best of many repeats, in microseconds per call and
 * GFLOP/s. docs/performance.md ("The third round") compares builds with it.
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

static float x[BMAX * H], y[BMAX * H], d[BMAX * H], c[BMAX * H], w[H * H], gw[H * H], gb[H], bias[H];

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
    return 0;
}
