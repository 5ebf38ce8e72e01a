/* The C side of tests/ref_value_grad.py: a value network V(x, tau) with its input gradient on the
 * tape (dg_mlp_forward_grad), an HJI-residual-like loss of V and grad V, and the loss's weight
 * gradient by the tape's backward, written into one safetensors file for PyTorch to recompute.
 * Built twice (tests/CMakeLists.txt): value_grad_dump over float, value_grad_dump64 over double
 * (DG_F64), each writing its own dtype.
 *
 * usage: value_grad_dump OUT.safetensors sine|tanh SEED
 * writes: every parameter under its name ("value.0.weight", ...), "x" (B, in: the last column tau),
 * "V" (B, 1), "dV" (B, in), "loss" (1), "grad.<name>" for every parameter; metadata "act",
 * "omega0", "precision". Exit 0, or 2 with one line on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/difgames.h"

enum { B = 64, IN = 4 };  /* three state dimensions and tau */

/* mean_b (dV/dtau + |grad_x V|_1 - |x|²)² + mean_b (V - x_0)²: a residual and a boundary term,
 * the loss tests/ref_value_grad.py recomputes */
static dg_tensor *residual_loss(dg_ctx *ctx, const dg_mlp *m, dg_params *p, dg_tensor *x, dg_tensor **v,
                                dg_tensor **g) {
    const int d = IN - 1;
    *v = dg_mlp_forward_grad(ctx, m, p, x, g);
    if (!*v) return NULL;
    dg_tensor *c = dg_sum_axis(ctx, dg_square(ctx, dg_cols(ctx, x, 0, d)), 1);
    dg_tensor *h = dg_sum_axis(ctx, dg_abs(ctx, dg_cols(ctx, *g, 0, d)), 1);
    dg_tensor *res = dg_sub(ctx, dg_add(ctx, dg_cols(ctx, *g, d, 1), h), c);
    dg_tensor *bc = dg_sub(ctx, *v, dg_cols(ctx, x, 0, 1));
    return dg_add(ctx, dg_mean(ctx, dg_square(ctx, res)), dg_mean(ctx, dg_square(ctx, bc)));
}

static int fail(const char *msg) {
    fprintf(stderr, "value_grad_dump: %s\n", msg);
    return 2;
}

int main(int argc, char **argv) {
    if (argc != 4 || (strcmp(argv[2], "sine") && strcmp(argv[2], "tanh")))
        return fail("usage: value_grad_dump OUT.safetensors sine|tanh SEED");
    const dg_mlp_act act = strcmp(argv[2], "sine") ? DG_MLP_TANH : DG_MLP_SINE;
    dg_err e = {0};
    dg_params *p = dg_params_create();
    dg_mlp m;
    if (!p || dg_mlp_init(&m, p, "value", IN, (int[]){32, 32}, 2, 1, &e) != DG_OK ||
        dg_mlp_set_activation(&m, act, 1, &e) != DG_OK)
        return fail(p ? e.msg : "out of memory");
    dg_rng rng;
    dg_rng_seed(&rng, (uint64_t)strtoull(argv[3], NULL, 10));
    dg_mlp_reset_params(&m, p, &rng);
    dg_real xs[B * IN];
    for (int i = 0; i < B * IN; i++) xs[i] = dg_rng_uniform(&rng, -1.0f, 1.0f);

    dg_ctx *ctx = dg_ctx_create(1 << 24);
    if (!ctx) return fail("out of memory");
    dg_tensor *x = dg_from(ctx, 2, (int[]){B, IN}, xs), *v = NULL, *g = NULL;
    dg_tensor *loss = residual_loss(ctx, &m, p, x, &v, &g);
    dg_params_zero_grad(p);
    if (!loss || dg_backward(ctx, loss) != DG_OK) return fail(dg_ctx_error(ctx));

    dg_st_writer *w = dg_st_writer_create();
    if (!w) return fail("out of memory");
    dg_status st = DG_OK;
    for (int i = 0; i < p->count && st == DG_OK; i++) {
        int64_t shape[DG_MAX_DIMS];
        for (int k = 0; k < p->info[i].ndim; k++) shape[k] = p->info[i].shape[k];
        char name[80];
        snprintf(name, sizeof name, "grad.%s", p->info[i].name);
        st = dg_st_writer_add(w, p->info[i].name, DG_DTYPE_REAL, p->info[i].ndim, shape, dg_params_data(p, i), &e);
        if (st == DG_OK) st = dg_st_writer_add(w, name, DG_DTYPE_REAL, p->info[i].ndim, shape, dg_params_grad(p, i), &e);
    }
    if (st == DG_OK) st = dg_st_writer_add(w, "x", DG_DTYPE_REAL, 2, (int64_t[]){B, IN}, x->data, &e);
    if (st == DG_OK) st = dg_st_writer_add(w, "V", DG_DTYPE_REAL, 2, (int64_t[]){B, 1}, v->data, &e);
    if (st == DG_OK) st = dg_st_writer_add(w, "dV", DG_DTYPE_REAL, 2, (int64_t[]){B, IN}, g->data, &e);
    if (st == DG_OK) st = dg_st_writer_add(w, "loss", DG_DTYPE_REAL, 1, (int64_t[]){1}, loss->data, &e);
    char om[32];
    snprintf(om, sizeof om, "%.17g", m.omega0);
    if (st == DG_OK) st = dg_st_writer_meta(w, "act", argv[2], &e);
    if (st == DG_OK) st = dg_st_writer_meta(w, "omega0", om, &e);
    if (st == DG_OK) st = dg_st_writer_meta(w, "precision", DG_REAL_NAME, &e);
    if (st == DG_OK) st = dg_st_writer_write(w, argv[1], &e);
    dg_st_writer_free(w);
    dg_ctx_free(ctx);
    dg_params_free(p);
    return st == DG_OK ? 0 : fail(e.msg);
}
