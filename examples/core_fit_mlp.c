/* core_fit_mlp: fit a small tanh MLP to y = sin(3x) on [-1, 1] with the core alone.
 *
 * Shows the whole training loop of difgames in miniature: parameters outside
 * the arena, a graph rebuilt each step on a reset context, one backward,
 * global-norm clipping and Adam.
 *
 *     ./build/examples/core_fit_mlp [steps]      (default 2000)
 *
 * Prints the loss every 10 % of the steps; exits 1 if the final mean squared
 * error is not below 1e-3.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "difgames/difgames.h"

#define N_POINTS 128
#define HIDDEN 32

/* PyTorch's nn.Linear default init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) */
static void init_uniform(float *w, int64_t n, int fan_in, dg_rng *rng) {
    const float k = 1.0f / sqrtf((float)fan_in);
    for (int64_t i = 0; i < n; i++) w[i] = dg_rng_uniform(rng, -k, k);
}

int main(int argc, char **argv) {
    const int steps = argc > 1 ? atoi(argv[1]) : 2000;
    if (steps <= 0) {
        fprintf(stderr, "core_fit_mlp: steps must be a positive integer\n");
        return 2;
    }
    dg_err e = {0};
    dg_params *p = dg_params_create();
    const int layers[4] = {1, HIDDEN, HIDDEN, 1};
    int widx[3], bidx[3];
    dg_rng rng;
    dg_rng_seed(&rng, 0);
    for (int l = 0; l < 3; l++) {
        char name[32];
        snprintf(name, sizeof name, "net.%d.weight", 2 * l);
        widx[l] = dg_params_add(p, name, 2, (int[]){layers[l + 1], layers[l]}, &e);
        snprintf(name, sizeof name, "net.%d.bias", 2 * l);
        bidx[l] = dg_params_add(p, name, 1, (int[]){layers[l + 1]}, &e);
        if (widx[l] < 0 || bidx[l] < 0) {
            fprintf(stderr, "core_fit_mlp: %s\n", e.msg);
            return 1;
        }
        init_uniform(dg_params_data(p, widx[l]), p->info[widx[l]].n, layers[l], &rng);
        init_uniform(dg_params_data(p, bidx[l]), p->info[bidx[l]].n, layers[l], &rng);
    }
    float xs[N_POINTS], ys[N_POINTS];
    for (int i = 0; i < N_POINTS; i++) {
        xs[i] = -1.0f + 2.0f * (float)i / (N_POINTS - 1);
        ys[i] = sinf(3.0f * xs[i]);
    }
    dg_adam adam;
    if (dg_adam_init(&adam, p, 1e-2, 0.9, 0.999, 1e-8, 0.0) != DG_OK) return 1;
    dg_ctx *ctx = dg_ctx_create(4 << 20);
    if (!ctx) return 1;

    float loss_v = INFINITY;
    for (int step = 1; step <= steps; step++) {
        dg_ctx_reset(ctx);
        dg_tensor *x = dg_from(ctx, 2, (int[]){N_POINTS, 1}, xs);   // (N, 1)
        dg_tensor *y = dg_from(ctx, 2, (int[]){N_POINTS, 1}, ys);   // (N, 1)
        dg_tensor *h = dg_linear_tanh(ctx, x, dg_param(ctx, p, widx[0]), dg_param(ctx, p, bidx[0]));
        h = dg_linear_tanh(ctx, h, dg_param(ctx, p, widx[1]), dg_param(ctx, p, bidx[1]));
        dg_tensor *out = dg_linear(ctx, h, dg_param(ctx, p, widx[2]), dg_param(ctx, p, bidx[2]));
        dg_tensor *loss = dg_mean(ctx, dg_square(ctx, dg_sub(ctx, out, y)));
        dg_params_zero_grad(p);
        if (dg_backward(ctx, loss) != DG_OK) {
            fprintf(stderr, "core_fit_mlp: %s\n", dg_ctx_error(ctx));
            return 1;
        }
        dg_clip_grad_norm(p, 1.0f);
        dg_adam_step(&adam, p);
        loss_v = loss->data[0];
        if (step % (steps / 10 > 0 ? steps / 10 : 1) == 0)
            printf("step %5d  mse %.3e  arena %zu bytes\n", step, loss_v, dg_ctx_used(ctx));
    }
    printf("final mse %.3e (%s)\n", loss_v, loss_v < 1e-3f ? "fit" : "NOT fit");
    dg_ctx_free(ctx);
    dg_adam_free(&adam);
    dg_params_free(p);
    return loss_v < 1e-3f ? 0 : 1;
}
