/* The matrix kernels of the reach MLP's narrow layers (input 6 -> 64, output 64 -> 2, B 64),
 * called directly, without the op around them (no node, no copies): the best of many repeats,
 * in microseconds per call. docs/performance.md ("The narrow layers") compares builds with it.
 * Usage: build/bench/narrow [repeats] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../src/core/internal.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

enum { B = 64, HID = 64, IN = 6, OUT = 2, INNER = 20 };

static float x[B * HID], w[HID * HID], y[B * HID], c[B * HID], bias[HID];

static void run(int which) {
    switch (which) {
    case 0: dg__gemm_bias_act(B, OUT, HID, x, HID, w, OUT, bias, 1, c, OUT); break;  /* output fwd */
    case 1: dg__tanh_grad_colsum(B, OUT, y, c, bias); break;                        /* output dz, db */
    case 2: dg__gemm_acc(OUT, HID, B, y, 1, OUT, x, HID, c, HID); break;            /* output dW */
    case 3: dg__gemm_acc(B, HID, OUT, y, OUT, 1, w, HID, c, HID); break;            /* output dx */
    case 4: dg__gemm_bias_act(B, HID, IN, x, IN, w, HID, bias, 1, c, HID); break;   /* input fwd */
    case 5: dg__tanh_grad_colsum(B, HID, y, c, bias); break;                        /* input dz, db */
    case 6: dg__gemm_acc(HID, IN, B, y, 1, HID, x, IN, c, IN); break;               /* input dW */
    default: dg__gemm_acc(B, IN, HID, y, HID, 1, w, IN, c, IN); break;              /* input dx */
    }
}

int main(int argc, char **argv) {
    const int reps = argc > 1 ? atoi(argv[1]) : 2000;
    if (reps < 1) {
        fprintf(stderr, "usage: narrow [repeats >= 1]\n");
        return 2;
    }
    for (int i = 0; i < B * HID; i++) {
        x[i] = (float)(i % 13) * 0.01f - 0.06f;
        w[i] = (float)(i % 7) * 0.01f - 0.03f;
        y[i] = (float)(i % 5) * 0.1f - 0.2f;
    }
    static const char *names[] = {
        "output 64 -> 2: forward (product, bias, tanh)", "output 64 -> 2: dz = dy (1 - y^2), bias grad",
        "output 64 -> 2: weight grad (2 x 64, K 64)",    "output 64 -> 2: input grad (64 x 64, K 2)",
        "input 6 -> 64: forward (product, bias, tanh)",  "input 6 -> 64: dz = dy (1 - y^2), bias grad",
        "input 6 -> 64: weight grad (64 x 6, K 64)",     "input 6 -> 64: input grad (64 x 6, K 64)"};
    printf("| kernel (B 64) | best us |\n|---|---|\n");
    for (int k = 0; k < 8; k++) {
        double best = 1e30;
        for (int r = 0; r < reps; r++) {
            for (int i = 0; i < B * HID; i++) c[i] = 0.0f;  /* no growth over the repeats */
            const double t0 = now();
            for (int i = 0; i < INNER; i++) run(k);
            const double t = (now() - t0) / INNER;
            if (t < best) best = t;
        }
        printf("| %s | %.3f |\n", names[k], best * 1e6);
    }
    return 0;
}
