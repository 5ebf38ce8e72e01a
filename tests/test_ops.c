/* Finite-difference gradient tests for every op (with broadcasting shapes),
 * plus the tape's bookkeeping: accumulation, constants, arena overflow. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "difgames/core.h"
#include "difgames/losses.h"
#include "core/internal.h"
#include "util/check.h"

#define TOL 1e-3

typedef dg_tensor *(*build_fn)(dg_ctx *ctx, dg_tensor **in);

typedef struct op_case {
    const char *name;
    build_fn    f;
    int         nin;
    int         ndim[3];
    int         shape[3][4];
    float       lo, hi;      /* inputs drawn from U(lo, hi) ...                    */
    float       gap;         /* ... with |x| >= gap (keeps away from kinks, poles) */
} op_case;

/* R: y's shape of U(-1, 1) numbers, the same for every call (NULL when y is) */
static dg_tensor *fixed_weights(dg_ctx *ctx, const dg_tensor *y) {
    dg_tensor *r = y ? dg_new(ctx, y->ndim, y->shape) : NULL;
    if (!r) return NULL;
    dg_rng rng;
    dg_rng_seed(&rng, 99);
    for (int64_t i = 0; i < r->n; i++) r->data[i] = dg_rng_uniform(&rng, -1.0f, 1.0f);
    return r;
}

/* loss = sum(f(inputs) * R), R a fixed random tensor, so every output element
 * carries a different weight */
static dg_tensor *case_loss(dg_ctx *ctx, dg_params *p, void *user) {
    const op_case *c = user;
    dg_tensor *in[3] = {0};
    for (int i = 0; i < c->nin; i++) in[i] = dg_param(ctx, p, i);
    dg_tensor *y = c->f(ctx, in);
    dg_tensor *r = fixed_weights(ctx, y);
    return r ? dg_sum(ctx, dg_mul(ctx, y, r)) : NULL;
}

static void run_case(const op_case *c) {
    dg_params *p = dg_params_create();
    assert_non_null(p);
    dg_rng rng;
    dg_rng_seed(&rng, 7);
    for (int i = 0; i < c->nin; i++) {
        char name[16];
        snprintf(name, sizeof name, "in%d", i);
        int k = dg_params_add(p, name, c->ndim[i], c->shape[i], NULL);
        assert_int_equal(k, i);
        float *d = dg_params_data(p, k);
        for (int64_t j = 0; j < p->info[k].n; j++) {
            float v;
            do v = dg_rng_uniform(&rng, c->lo, c->hi);
            while (fabsf(v) < c->gap);
            d[j] = v;
        }
    }
    dg_ctx *ctx = dg_ctx_create(1 << 20);
    dg_gradcheck_report rep;
    dg_err e = {0};
    dg_status st = dg_gradcheck(ctx, p, case_loss, (void *)c, 5e-2f, 1e-2, 0, &rep, &e);
    if (st != DG_OK) fail_msg("%s: %s", c->name, e.msg);
    printf("  %-22s max rel err %.2e over %lld elements\n", c->name, rep.max_rel_err,
           (long long)rep.checked);
    check_gradcheck(c->name, p, &rep, TOL);
    dg_ctx_free(ctx);
    dg_params_free(p);
}

/* ---------------------------------------------------------- builders */
static dg_tensor *f_add(dg_ctx *c, dg_tensor **x) { return dg_add(c, x[0], x[1]); }
static dg_tensor *f_sub(dg_ctx *c, dg_tensor **x) { return dg_sub(c, x[0], x[1]); }
static dg_tensor *f_mul(dg_ctx *c, dg_tensor **x) { return dg_mul(c, x[0], x[1]); }
static dg_tensor *f_div(dg_ctx *c, dg_tensor **x) { return dg_div(c, x[0], x[1]); }
static dg_tensor *f_neg(dg_ctx *c, dg_tensor **x) { return dg_neg(c, x[0]); }
static dg_tensor *f_scale(dg_ctx *c, dg_tensor **x) { return dg_scale(c, x[0], 2.5f); }
static dg_tensor *f_add_scalar(dg_ctx *c, dg_tensor **x) { return dg_mul(c, dg_add_scalar(c, x[0], 0.7f), x[0]); }
static dg_tensor *f_linear(dg_ctx *c, dg_tensor **x) { return dg_linear(c, x[0], x[1], x[2]); }
static dg_tensor *f_linear_nb(dg_ctx *c, dg_tensor **x) { return dg_linear(c, x[0], x[1], NULL); }
static dg_tensor *f_linear_tanh(dg_ctx *c, dg_tensor **x) { return dg_linear_tanh(c, x[0], x[1], x[2]); }
static dg_tensor *f_matmul(dg_ctx *c, dg_tensor **x) { return dg_matmul(c, x[0], x[1]); }
/* the layer's input an intermediate (a parameter's gradient buffer exists before backward): with 32
 * or more input columns the layer's backward stores dx into its new gradient buffer; in the second,
 * h is also read by a square before the layer, whose backward then adds to what the layer stored */
static dg_tensor *f_linear_inner(dg_ctx *c, dg_tensor **x) {
    return dg_linear_tanh(c, dg_scale(c, x[0], 1.5f), x[1], x[2]);
}
static dg_tensor *f_linear_shared(dg_ctx *c, dg_tensor **x) {
    dg_tensor *h = dg_scale(c, x[0], 1.5f), *sq = dg_sum_axis(c, dg_square(c, h), 1);
    return dg_add(c, dg_linear_tanh(c, h, x[1], x[2]), sq);
}
static dg_tensor *f_tanh(dg_ctx *c, dg_tensor **x) { return dg_tanh(c, x[0]); }
static dg_tensor *f_relu(dg_ctx *c, dg_tensor **x) { return dg_relu(c, x[0]); }
static dg_tensor *f_softplus(dg_ctx *c, dg_tensor **x) { return dg_softplus(c, x[0]); }
static dg_tensor *f_sigmoid(dg_ctx *c, dg_tensor **x) { return dg_sigmoid(c, x[0]); }
static dg_tensor *f_exp(dg_ctx *c, dg_tensor **x) { return dg_exp(c, x[0]); }
static dg_tensor *f_log(dg_ctx *c, dg_tensor **x) { return dg_log(c, x[0]); }
static dg_tensor *f_sqrt(dg_ctx *c, dg_tensor **x) { return dg_sqrt(c, x[0]); }
static dg_tensor *f_square(dg_ctx *c, dg_tensor **x) { return dg_square(c, x[0]); }
static dg_tensor *f_pow25(dg_ctx *c, dg_tensor **x) { return dg_pow(c, x[0], 2.5f); }
static dg_tensor *f_pow3(dg_ctx *c, dg_tensor **x) { return dg_pow(c, x[0], 3.0f); }
static dg_tensor *f_abs(dg_ctx *c, dg_tensor **x) { return dg_abs(c, x[0]); }
static dg_tensor *f_sin(dg_ctx *c, dg_tensor **x) { return dg_sin(c, x[0]); }
static dg_tensor *f_cos(dg_ctx *c, dg_tensor **x) { return dg_cos(c, x[0]); }
static dg_tensor *f_sum(dg_ctx *c, dg_tensor **x) { return dg_sum(c, dg_square(c, x[0])); }
static dg_tensor *f_mean(dg_ctx *c, dg_tensor **x) { return dg_mean(c, dg_square(c, x[0])); }
static dg_tensor *f_sum_ax0(dg_ctx *c, dg_tensor **x) { return dg_sum_axis(c, x[0], 0); }
static dg_tensor *f_sum_ax1(dg_ctx *c, dg_tensor **x) { return dg_sum_axis(c, x[0], 1); }
static dg_tensor *f_sum_axlast(dg_ctx *c, dg_tensor **x) { return dg_sum_axis(c, x[0], -1); }
static dg_tensor *f_mean_ax1(dg_ctx *c, dg_tensor **x) { return dg_mean_axis(c, x[0], 1); }
static dg_tensor *f_concat0(dg_ctx *c, dg_tensor **x) { return dg_concat(c, x, 3, 0); }
static dg_tensor *f_concat1(dg_ctx *c, dg_tensor **x) { return dg_concat(c, x, 3, 1); }
static dg_tensor *f_cols(dg_ctx *c, dg_tensor **x) { return dg_cols(c, x[0], 1, 2); }
static dg_tensor *f_rows(dg_ctx *c, dg_tensor **x) { return dg_rows(c, x[0], 2, 2); }
static dg_tensor *f_slice_mid(dg_ctx *c, dg_tensor **x) { return dg_slice(c, x[0], 1, 1, 2); }
static dg_tensor *f_reshape(dg_ctx *c, dg_tensor **x) {
    dg_tensor *r = dg_reshape(c, x[0], 2, (int[]){2, 6});
    return dg_mul(c, r, dg_reshape(c, x[0], 2, (int[]){2, 6}));
}
static dg_tensor *f_used_twice(dg_ctx *c, dg_tensor **x) {  /* a*a + tanh(a): gradients accumulate */
    return dg_add(c, dg_mul(c, x[0], x[0]), dg_tanh(c, x[0]));
}
/* a custom op as a layer would define one: y = s * x³ with s in its state */
static void cube_backward(dg_ctx *ctx, dg_tensor *out) {
    dg_tensor *x = out->srcs[0];
    const float s = *(const float *)out->state;
    float *gx = dg_grad_of(ctx, x);
    if (!gx) return;
    for (int64_t i = 0; i < x->n; i++) gx[i] += out->grad[i] * 3.0f * s * x->data[i] * x->data[i];
}
static dg_tensor *f_custom(dg_ctx *c, dg_tensor **x) {
    const float s = 0.5f;
    dg_tensor *y = dg_custom(c, "cube", x[0]->ndim, x[0]->shape, x, 1, cube_backward, &s, sizeof s);
    if (y)
        for (int64_t i = 0; i < y->n; i++) y->data[i] = s * x[0]->data[i] * x[0]->data[i] * x[0]->data[i];
    return y;
}
/* a layer and its tangents over stacked rows (3 a point: two values, then their two tangents each); sine
 * at omega0 2 */
static dg_tensor *f_tangent_sine(dg_ctx *c, dg_tensor **x) { return dg_linear_tangent(c, x[0], x[1], x[2], 3, DG_TANGENT_SINE, 2.0f); }
static dg_tensor *f_tangent_tanh(dg_ctx *c, dg_tensor **x) { return dg_linear_tangent(c, x[0], x[1], x[2], 3, DG_TANGENT_TANH, 0); }
static dg_tensor *f_tangent_lin(dg_ctx *c, dg_tensor **x) { return dg_linear_tangent(c, x[0], x[1], NULL, 3, DG_TANGENT_LINEAR, 0); }
/* 33 rows a point and 40 inputs from an intermediate (the backward stores dz into its new gradient
 * buffer); then 65 rows a point, 9 points (three panels of 4, 4 and 1 points: the panels' sums chain) */
static dg_tensor *f_tangent_wide(dg_ctx *c, dg_tensor **x) {
    return dg_linear_tangent(c, dg_scale(c, x[0], 1.5f), x[1], x[2], 33, DG_TANGENT_SINE, 1.5f);
}
static dg_tensor *f_tangent_panels(dg_ctx *c, dg_tensor **x) {
    return dg_linear_tangent(c, x[0], x[1], x[2], 65, DG_TANGENT_TANH, 0);
}
static dg_tensor *f_chain(dg_ctx *c, dg_tensor **x) {  /* a small MLP-like chain */
    dg_tensor *h = dg_tanh(c, dg_linear(c, x[0], x[1], x[2]));
    return dg_softplus(c, dg_sub(c, h, dg_mean_axis(c, h, 0)));
}

#define S2(a, b) {a, b, 1, 1}
#define S3(a, b, c) {a, b, c, 1}
#define S1(a) {a, 1, 1, 1}

static const op_case CASES[] = {
    {"add (B,D)+(1,D)", f_add, 2, {2, 2}, {S2(4, 3), S2(1, 3)}, -1, 1, 0},
    {"add (B,D)+(B,1)", f_add, 2, {2, 2}, {S2(4, 3), S2(4, 1)}, -1, 1, 0},
    {"add (B,D)+scalar", f_add, 2, {2, 1}, {S2(4, 3), S1(1)}, -1, 1, 0},
    {"add (B,1)+(1,D)", f_add, 2, {2, 2}, {S2(4, 1), S2(1, 3)}, -1, 1, 0},
    {"add 4d broadcast", f_add, 2, {4, 3}, {{2, 1, 3, 4}, S3(5, 1, 4)}, -1, 1, 0},
    {"sub (B,D)-(1,D)", f_sub, 2, {2, 2}, {S2(4, 3), S2(1, 3)}, -1, 1, 0},
    {"sub scalar-(B,D)", f_sub, 2, {1, 2}, {S1(1), S2(4, 3)}, -1, 1, 0},
    {"mul (B,D)*(B,1)", f_mul, 2, {2, 2}, {S2(4, 3), S2(4, 1)}, -1, 1, 0},
    {"mul (B,D)*(B,D)", f_mul, 2, {2, 2}, {S2(4, 3), S2(4, 3)}, -1, 1, 0},
    {"mul (1,D)*(B,D)", f_mul, 2, {2, 2}, {S2(1, 3), S2(4, 3)}, -1, 1, 0},
    {"div (B,D)/(1,D)", f_div, 2, {2, 2}, {S2(4, 3), S2(1, 3)}, 0.5f, 2, 0},
    {"div (B,1)/(B,D)", f_div, 2, {2, 2}, {S2(4, 1), S2(4, 3)}, 0.5f, 2, 0},
    {"div (B,D)/scalar", f_div, 2, {2, 1}, {S2(4, 3), S1(1)}, 0.5f, 2, 0},
    {"neg", f_neg, 1, {2}, {S2(3, 4)}, -1, 1, 0},
    {"scale", f_scale, 1, {2}, {S2(3, 4)}, -1, 1, 0},
    {"add_scalar", f_add_scalar, 1, {2}, {S2(3, 4)}, -1, 1, 0},
    {"linear", f_linear, 3, {2, 2, 1}, {S2(5, 4), S2(3, 4), S1(3)}, -1, 1, 0},
    {"linear no bias", f_linear_nb, 2, {2, 2}, {S2(5, 4), S2(3, 4)}, -1, 1, 0},
    {"linear_tanh", f_linear_tanh, 3, {2, 2, 1}, {S2(5, 4), S2(3, 4), S1(3)}, -1, 1, 0},
    {"matmul", f_matmul, 2, {2, 2}, {S2(3, 4), S2(4, 5)}, -1, 1, 0},
    {"tanh", f_tanh, 1, {2}, {S2(3, 4)}, -3, 3, 0},
    {"relu", f_relu, 1, {2}, {S2(3, 4)}, -1, 1, 0.15f},
    {"softplus", f_softplus, 1, {2}, {S2(3, 4)}, -4, 4, 0},
    {"sigmoid", f_sigmoid, 1, {2}, {S2(3, 4)}, -4, 4, 0},
    {"exp", f_exp, 1, {2}, {S2(3, 4)}, -2, 2, 0},
    {"log", f_log, 1, {2}, {S2(3, 4)}, 0.3f, 3, 0},
    {"sqrt", f_sqrt, 1, {2}, {S2(3, 4)}, 0.3f, 3, 0},
    {"square", f_square, 1, {2}, {S2(3, 4)}, -2, 2, 0},
    {"pow 2.5", f_pow25, 1, {2}, {S2(3, 4)}, 0.3f, 2, 0},
    {"pow 3", f_pow3, 1, {2}, {S2(3, 4)}, -1.5f, 1.5f, 0},
    {"abs", f_abs, 1, {2}, {S2(3, 4)}, -1, 1, 0.15f},
    {"sin", f_sin, 1, {2}, {S2(3, 4)}, -4, 4, 0},
    {"cos", f_cos, 1, {2}, {S2(3, 4)}, -4, 4, 0},
    {"sum", f_sum, 1, {2}, {S2(3, 4)}, -1, 1, 0},
    {"mean", f_mean, 1, {2}, {S2(3, 4)}, -1, 1, 0},
    {"sum_axis 0", f_sum_ax0, 1, {2}, {S2(3, 4)}, -1, 1, 0},
    {"sum_axis 1", f_sum_ax1, 1, {2}, {S2(3, 4)}, -1, 1, 0},
    {"sum_axis -1 (3d)", f_sum_axlast, 1, {3}, {S3(2, 3, 4)}, -1, 1, 0},
    {"mean_axis 1 (3d)", f_mean_ax1, 1, {3}, {S3(2, 3, 4)}, -1, 1, 0},
    {"concat axis 0", f_concat0, 3, {2, 2, 2}, {S2(2, 3), S2(1, 3), S2(3, 3)}, -1, 1, 0},
    {"concat axis 1", f_concat1, 3, {2, 2, 2}, {S2(3, 2), S2(3, 1), S2(3, 4)}, -1, 1, 0},
    {"slice cols", f_cols, 1, {2}, {S2(3, 4)}, -1, 1, 0},
    {"slice rows", f_rows, 1, {2}, {S2(5, 3)}, -1, 1, 0},
    {"slice middle axis", f_slice_mid, 1, {3}, {S3(2, 4, 3)}, -1, 1, 0},
    {"reshape", f_reshape, 1, {2}, {S2(3, 4)}, -1, 1, 0},
    {"value used twice", f_used_twice, 1, {2}, {S2(3, 4)}, -1, 1, 0},
    {"custom op", f_custom, 1, {2}, {S2(3, 4)}, -1.5f, 1.5f, 0},
    {"linear wide (vector paths)", f_linear_tanh, 3, {2, 2, 1}, {S2(6, 20), S2(40, 20), S1(40)}, -0.5f, 0.5f, 0},
    {"linear_tanh 70 wide (64-column strips)", f_linear_tanh, 3, {2, 2, 1}, {S2(9, 7), S2(70, 7), S1(70)}, -0.5f, 0.5f, 0},
    {"linear 33 wide, no bias", f_linear_nb, 2, {2, 2}, {S2(10, 5), S2(33, 5)}, -0.5f, 0.5f, 0},
    {"linear_tanh 40 inputs (dx stored)", f_linear_inner, 3, {2, 2, 1}, {S2(9, 40), S2(3, 40), S1(3)}, -0.5f, 0.5f, 0},
    {"linear_tanh 64 inputs, x read twice", f_linear_shared, 3, {2, 2, 1}, {S2(5, 64), S2(3, 64), S1(3)}, -0.5f, 0.5f, 0},
    {"matmul wide (vector paths)", f_matmul, 2, {2, 2}, {S2(5, 33), S2(33, 37)}, -0.5f, 0.5f, 0},
    {"linear_tangent sine", f_tangent_sine, 3, {2, 2, 1}, {S2(6, 4), S2(5, 4), S1(5)}, -1, 1, 0},
    {"linear_tangent tanh", f_tangent_tanh, 3, {2, 2, 1}, {S2(6, 4), S2(5, 4), S1(5)}, -1, 1, 0},
    {"linear_tangent linear, no bias", f_tangent_lin, 2, {2, 2}, {S2(6, 4), S2(5, 4)}, -1, 1, 0},
    {"linear_tangent 40 inputs stored", f_tangent_wide, 3, {2, 2, 1}, {S2(66, 40), S2(3, 40), S1(3)}, -0.3f, 0.3f, 0},
    {"linear_tangent 3 panels", f_tangent_panels, 3, {2, 2, 1}, {S2(585, 2), S2(3, 2), S1(3)}, -1, 1, 0},
    {"chain", f_chain, 3, {2, 2, 1}, {S2(5, 4), S2(3, 4), S1(3)}, -1, 1, 0},
};

static void test_all_ops_gradcheck(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) run_case(&CASES[i]);
}

/* every op kind (but leaf) appears in at least one case */
static void test_every_op_covered(void **state) {
    (void)state;
    int seen[DG_OP_COUNT] = {0};
    dg_ctx *ctx = dg_ctx_create(1 << 20);
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        dg_params *p = dg_params_create();
        for (int k = 0; k < CASES[i].nin; k++) {
            char name[16];
            snprintf(name, sizeof name, "x%d", k);
            dg_params_add(p, name, CASES[i].ndim[k], CASES[i].shape[k], NULL);
            for (int64_t j = 0; j < p->info[k].n; j++) dg_params_data(p, k)[j] = 1.0f;
        }
        dg_ctx_reset(ctx);
        dg_tensor *in[3] = {0};
        for (int k = 0; k < CASES[i].nin; k++) in[k] = dg_param(ctx, p, k);
        assert_non_null(CASES[i].f(ctx, in));
        /* walk the graph through the tape */
        size_t n = 0;
        dg_tensor *t = dg_sum(ctx, CASES[i].f(ctx, in));
        for (; t; t = t->tape_prev, n++) seen[t->op] = 1;
        assert_true(n > 0);
        dg_params_free(p);
    }
    dg_ctx_free(ctx);
    for (int op = 1; op < DG_OP_COUNT; op++)
        if (!seen[op]) fail_msg("op %s has no gradient test", dg_op_name(op));
}

static void test_forward_values(void **state) {
    (void)state;
    dg_ctx *ctx = dg_ctx_create(1 << 16);
    float a[6] = {1, 2, 3, 4, 5, 6}, b[3] = {10, 20, 30}, c[2] = {100, 200};
    dg_tensor *ta = dg_from(ctx, 2, (int[]){2, 3}, a);
    dg_tensor *tb = dg_from(ctx, 2, (int[]){1, 3}, b);
    dg_tensor *tc = dg_from(ctx, 2, (int[]){2, 1}, c);
    dg_tensor *s = dg_add(ctx, dg_add(ctx, ta, tb), tc);
    float want[6] = {111, 122, 133, 214, 225, 236};
    for (int i = 0; i < 6; i++) assert_float_equal(s->data[i], want[i], 0);
    dg_tensor *w = dg_from(ctx, 2, (int[]){2, 3}, a);  /* (O=2, I=3) */
    dg_tensor *l = dg_linear(ctx, ta, w, dg_from(ctx, 1, (int[]){2}, c));
    assert_float_equal(l->data[0], 1 + 4 + 9 + 100, 0);
    assert_float_equal(l->data[1], 4 + 10 + 18 + 200, 0);
    assert_float_equal(l->data[3], 16 + 25 + 36 + 200, 0);
    dg_tensor *m = dg_matmul(ctx, ta, dg_reshape(ctx, w, 2, (int[]){3, 2}));
    assert_float_equal(m->data[0], 1 * 1 + 2 * 3 + 3 * 5, 0);
    dg_tensor *sp = dg_softplus(ctx, dg_from(ctx, 1, (int[]){3}, (float[]){-100, 0, 100}));
    assert_float_equal(sp->data[0], 0, 1e-30);
    assert_float_equal(sp->data[1], logf(2), 1e-7);
    assert_float_equal(sp->data[2], 100, 0);
    dg_tensor *cat = dg_concat(ctx, (dg_tensor *[]){ta, tc}, 2, 1);
    assert_int_equal(cat->shape[1], 4);
    assert_float_equal(cat->data[3], 100, 0);
    assert_float_equal(cat->data[7], 200, 0);
    assert_int_equal(dg_ctx_status(ctx), DG_OK);
    dg_ctx_free(ctx);
}

/* dg_mlp_value_grad: a one-output MLP's value and input gradient (reverse mode) and its second-order
 * backward. Params in0 = x (B, 3), then each layer's weight and bias; the loss weighs every output
 * (y and each dy/dx_j) by a fixed random number. */
typedef struct vg_case {
    int B, L, act, linear_out;
    int sizes[5];  /* I, hidden..., 1 */
} vg_case;

static dg_tensor *vg_build(dg_ctx *ctx, dg_params *p, const vg_case *c) {
    dg_tensor *w[4], *b[4], *x = dg_param(ctx, p, 0);
    for (int l = 0; l < c->L; l++) w[l] = dg_param(ctx, p, 1 + 2 * l), b[l] = dg_param(ctx, p, 2 + 2 * l);
    return dg_mlp_value_grad(ctx, x, c->L, w, b, (dg_tangent_act)c->act, c->linear_out, c->act == DG_TANGENT_SINE ? 2.0f : 0);
}

static dg_tensor *vg_loss(dg_ctx *ctx, dg_params *p, void *user) {
    dg_tensor *y = vg_build(ctx, p, user), *r = fixed_weights(ctx, y);
    if (!r) return NULL;
    /* squared as well as weighted: dL/dy and dL/d(dy/dx) then vary with the point */
    return dg_sum(ctx, dg_add(ctx, dg_mul(ctx, y, r), dg_square(ctx, y)));
}

static dg_params *vg_params(const vg_case *c) {
    dg_params *p = dg_params_create();
    dg_rng rng;
    dg_rng_seed(&rng, 3);
    float *d = dg_params_data(p, dg_params_add(p, "x", 2, (int[]){c->B, c->sizes[0]}, NULL));
    for (int64_t j = 0; j < (int64_t)c->B * c->sizes[0]; j++) d[j] = dg_rng_uniform(&rng, -1, 1);
    for (int l = 0; l < c->L; l++) {
        const int O = c->sizes[l + 1], I = c->sizes[l];
        const float k = 1.2f / sqrtf((float)I);
        char name[16];
        snprintf(name, sizeof name, "w%d", l);
        float *w = dg_params_data(p, dg_params_add(p, name, 2, (int[]){O, I}, NULL));
        for (int j = 0; j < O * I; j++) w[j] = dg_rng_uniform(&rng, -k, k);
        snprintf(name, sizeof name, "b%d", l);
        float *b = dg_params_data(p, dg_params_add(p, name, 1, (int[]){O}, NULL));
        for (int j = 0; j < O; j++) b[j] = dg_rng_uniform(&rng, -0.5f, 0.5f);
    }
    return p;
}

static void test_mlp_value_grad(void **state) {
    (void)state;
    const vg_case cases[] = {
        {5, 3, DG_TANGENT_SINE, 1, {3, 6, 5, 1}},    /* a SIREN value network, linear output */
        {4, 3, DG_TANGENT_TANH, 1, {3, 5, 4, 1}},
        {3, 2, DG_TANGENT_SINE, 0, {2, 4, 1}},       /* the output layer's sine too */
        {300, 2, DG_TANGENT_TANH, 1, {2, 3, 1}},     /* two panels (256 + 44 rows) */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const vg_case *c = &cases[k];
        dg_params *p = vg_params(c);
        dg_ctx *ctx = dg_ctx_create(1 << 22);
        dg_gradcheck_report rep;
        dg_err e = {0};
        if (dg_gradcheck(ctx, p, vg_loss, (void *)c, 5e-2f, 1e-2, 0, &rep, &e) != DG_OK) fail_msg("%s", e.msg);
        printf("  mlp_value_grad case %zu: max rel err %.2e over %lld elements\n", k, rep.max_rel_err,
               (long long)rep.checked);
        check_gradcheck("mlp_value_grad", p, &rep, TOL);
        /* the value is dg_linear's and its activation's to the bit; dy/dx the tangents' to rounding */
        dg_ctx_reset(ctx);
        dg_tensor *r = vg_build(ctx, p, c);
        assert_non_null(r);
        const int I = c->sizes[0];
        dg_tensor *z = dg_new_2d(ctx, c->B * (I + 1), I);
        memset(z->data, 0, (size_t)z->n * sizeof(float));
        memcpy(z->data, dg_params_data(p, 0), (size_t)c->B * I * sizeof(float));
        for (int64_t q = 0; q < (int64_t)c->B * I; q++) z->data[(c->B + q) * I + q % I] = 1.0f;
        for (int l = 0; l < c->L; l++) {
            dg_tangent_act a = c->linear_out && l == c->L - 1 ? DG_TANGENT_LINEAR : (dg_tangent_act)c->act;
            z = dg_linear_tangent(ctx, z, dg_param(ctx, p, 1 + 2 * l), dg_param(ctx, p, 2 + 2 * l), I + 1, a,
                                  c->act == DG_TANGENT_SINE ? 2.0f : 0);
        }
        assert_non_null(z);
        for (int b = 0; b < c->B; b++) {
            assert_true(r->data[b * (I + 1)] == z->data[b]);
            for (int j = 0; j < I; j++)
                assert_float_equal(r->data[b * (I + 1) + 1 + j], z->data[c->B + b * I + j], 1e-5);
        }
        dg_ctx_free(ctx);
        dg_params_free(p);
    }
    /* shapes refused in one message */
    dg_ctx *ctx = dg_ctx_create(1 << 16);
    dg_tensor *x = dg_new_2d(ctx, 2, 3), *w = dg_new_2d(ctx, 2, 3), *b = dg_new_2d(ctx, 1, 2);
    assert_null(dg_mlp_value_grad(ctx, x, 1, (dg_tensor *[]){w}, (dg_tensor *[]){b}, DG_TANGENT_TANH, 1, 0));
    assert_int_equal(dg_ctx_status(ctx), DG_ERR_SHAPE);
    assert_non_null(strstr(dg_ctx_error(ctx), "O 1 in the last layer"));
    dg_ctx_free(ctx);
}

/* dg_linear_tangent's sine beyond the reduction's range (|omega0 p| > 1e5), at infinities and NaN:
 * libm's sin and cos there, in the value row and the tangent row's factor, wherever in the row
 * (the vectorised test that finds them must not miss one) */
static void test_linear_tangent_sine_far(void **state) {
    (void)state;
    enum { O = 48 };
    dg_ctx *ctx = dg_ctx_create((size_t)1 << 20);
    dg_tensor *z = dg_new(ctx, 2, (int[]){2, 1}), *w = dg_new(ctx, 2, (int[]){O, 1});
    z->data[0] = 1.0f, z->data[1] = 2.0f;  /* a value row and one tangent row */
    for (int o = 0; o < O; o++) w->data[o] = 0.01f * (float)o;
    const int far[5] = {5, 17, 33, 40, 47};
    const float fv[5] = {3e5f, -1e7f, INFINITY, NAN, 2e5f};
    for (int j = 0; j < 5; j++) w->data[far[j]] = fv[j];
    dg_tensor *y = dg_linear_tangent(ctx, z, w, NULL, 2, DG_TANGENT_SINE, 1.0f);
    assert_non_null(y);
    for (int j = 0; j < 5; j++) {
        const int o = far[j];
        const dg_real p = w->data[o];
        if (isnan(p) || isinf(p)) {
            assert_true(isnan(y->data[o]) && isnan(y->data[O + o]));
            continue;
        }
        assert_true(y->data[o] == (dg_real)sin(p) || y->data[o] == sinf((float)p));
        assert_true(y->data[O + o] == (dg_real)cos(p) * (2 * p) || y->data[O + o] == cosf((float)p) * (2 * p));
    }
    dg_ctx_free(ctx);
}

/* the float tape's sin and cos (a polynomial after reducing by π/2) are within 2.5e-7 of the exact
 * values (|sin| <= 1, so absolute) for |x| <= 1e5, a dense sweep of [-64, 64] and steps up to 1e5;
 * beyond it, and at infinities and NaN, libm's */
static void test_sin_cos_accuracy(void **state) {
    (void)state;
    enum { N = 1 << 20 };
    dg_ctx *ctx = dg_ctx_create((size_t)64 << 20);
    dg_tensor *x = dg_new(ctx, 1, (int[]){N});
    for (int i = 0; i < N / 2; i++) x->data[i] = -64.0f + 128.0f * (float)i / (N / 2);
    for (int i = N / 2; i < N - 8; i++) x->data[i] = (i & 1 ? -1.0f : 1.0f) * 1e5f * (float)(i - N / 2) / (N / 2);
    const float ends[8] = {1e5f, -1e5f, 3e5f, -1e7f, INFINITY, -INFINITY, NAN, 0x1p-140f};
    for (int i = 0; i < 8; i++) x->data[N - 8 + i] = ends[i];
    dg_tensor *s = dg_sin(ctx, x), *c = dg_cos(ctx, x);
    double worst = 0;
    for (int i = 0; i < N; i++) {
        const double xi = x->data[i];
        if (isnan(xi) || isinf(xi)) {
            assert_true(isnan(s->data[i]) && isnan(c->data[i]));
            continue;
        }
        if (fabs(xi) > 1e5) {
            assert_true(s->data[i] == sinf((float)xi) && c->data[i] == cosf((float)xi));
            continue;
        }
        const double e = fmax(fabs(s->data[i] - sin(xi)), fabs(c->data[i] - cos(xi)));
        if (e > worst) worst = e;
        if (!(e <= 2.5e-7)) fail_msg("sin/cos(%.9g): %.9g %.9g, exact %.9g %.9g", xi, s->data[i], c->data[i], sin(xi), cos(xi));
    }
    assert_true(s->data[N - 1] == 0x1p-140f);  /* sin x = x for tiny x, a subnormal too */
    printf("  fast sin, cos max abs error %.2e\n", worst);
    dg_ctx_free(ctx);
}

/* the fast tanh is within 5e-7 of the exact one everywhere */
static void test_tanh_accuracy(void **state) {
    (void)state;
    dg_ctx *ctx = dg_ctx_create(1 << 22);
    const int n = 200001;
    dg_tensor *x = dg_new(ctx, 1, &n);
    for (int i = 0; i < n; i++) x->data[i] = -12.0f + 24.0f * (float)i / (float)(n - 1);
    dg_tensor *y = dg_tanh(ctx, x);
    double worst = 0;
    for (int i = 0; i < n; i++) {
        double err = fabs((double)y->data[i] - tanh((double)x->data[i]));
        if (err > worst) worst = err;
        assert_true(y->data[i] <= 1.0f && y->data[i] >= -1.0f);
    }
    printf("  fast tanh max abs error %.2e\n", worst);
    assert_true(worst < 5e-7);
    dg_ctx_free(ctx);
}

/* data and constants cost no backward work: nothing is taped */
static void test_constants_not_taped(void **state) {
    (void)state;
    dg_ctx *ctx = dg_ctx_create(1 << 16);
    dg_tensor *a = dg_full(ctx, 2, (int[]){4, 3}, 2.0f);
    dg_tensor *y = dg_sum(ctx, dg_tanh(ctx, dg_mul(ctx, a, a)));
    assert_int_equal(dg_ctx_tape_len(ctx), 0);
    assert_int_equal(y->requires_grad, 0);
    assert_int_equal(dg_backward(ctx, y), DG_OK);
    assert_null(a->grad);
    /* mixing in a parameter tapes only the nodes on its path */
    dg_params *p = dg_params_create();
    dg_params_add(p, "w", 1, (int[]){3}, NULL);
    dg_tensor *w = dg_param(ctx, p, 0);
    dg_tensor *c = dg_exp(ctx, a);  /* not taped */
    dg_tensor *z = dg_sum(ctx, dg_mul(ctx, c, w));
    assert_int_equal(dg_ctx_tape_len(ctx), 2);
    assert_int_equal(dg_backward(ctx, z), DG_OK);
    assert_null(c->grad);
    assert_float_equal(dg_params_grad(p, 0)[0], 4 * expf(2), 1e-4);
    dg_params_free(p);
    dg_ctx_free(ctx);
}

/* leaf gradients accumulate across backwards like PyTorch; intermediates restart */
static void test_backward_twice_accumulates(void **state) {
    (void)state;
    dg_params *p = dg_params_create();
    dg_params_add(p, "w", 1, (int[]){2}, NULL);
    dg_params_data(p, 0)[0] = 0.5f;
    dg_params_data(p, 0)[1] = -1.5f;
    dg_ctx *ctx = dg_ctx_create(1 << 16);
    dg_tensor *w = dg_param(ctx, p, 0);
    dg_tensor *h = dg_tanh(ctx, w);
    dg_tensor *l = dg_sum(ctx, dg_mul(ctx, h, h));
    dg_params_zero_grad(p);
    assert_int_equal(dg_backward(ctx, l), DG_OK);
    float g0 = dg_params_grad(p, 0)[0];
    assert_int_equal(dg_backward(ctx, l), DG_OK);
    assert_float_equal(dg_params_grad(p, 0)[0], 2 * g0, 1e-6);
    float t = tanhf(0.5f);
    assert_float_equal(g0, 2 * t * (1 - t * t), 1e-6);
    dg_ctx_free(ctx);
    dg_params_free(p);
}

static void test_arena_full_is_status(void **state) {
    (void)state;
    dg_ctx *ctx = dg_ctx_create(4096);
    dg_tensor *t = dg_zeros(ctx, 2, (int[]){8, 8});
    assert_non_null(t);
    dg_tensor *big = NULL;
    for (int i = 0; i < 100; i++) big = dg_tanh(ctx, t);
    assert_null(big);
    assert_int_equal(dg_ctx_status(ctx), DG_ERR_ARENA_FULL);
    assert_non_null(strstr(dg_ctx_error(ctx), "arena full"));
    /* later ops see the sticky error and return NULL; backward refuses */
    assert_null(dg_add(ctx, t, t));
    assert_int_equal(dg_backward(ctx, t), DG_ERR_ARENA_FULL);
    assert_true(dg_ctx_peak(ctx) <= dg_ctx_capacity(ctx));
    dg_ctx_reset(ctx);
    assert_int_equal(dg_ctx_status(ctx), DG_OK);
    assert_int_equal(dg_ctx_used(ctx), 0);
    assert_non_null(dg_zeros(ctx, 1, (int[]){4}));
    assert_true(dg_ctx_used(ctx) > 0);
    dg_ctx_free(ctx);
    dg_ctx_free(NULL);
}

static void test_shape_errors(void **state) {
    (void)state;
    dg_ctx *ctx = dg_ctx_create(1 << 16);
    dg_tensor *a = dg_zeros(ctx, 2, (int[]){4, 3});
    dg_tensor *b = dg_zeros(ctx, 2, (int[]){4, 2});
    assert_null(dg_add(ctx, a, b));
    assert_int_equal(dg_ctx_status(ctx), DG_ERR_SHAPE);
    assert_non_null(strstr(dg_ctx_error(ctx), "(4,3) and (4,2)"));
    dg_ctx_reset(ctx);
    a = dg_zeros(ctx, 2, (int[]){4, 3});
    assert_null(dg_matmul(ctx, a, a));
    dg_ctx_reset(ctx);
    a = dg_zeros(ctx, 2, (int[]){4, 3});
    assert_null(dg_slice(ctx, a, 1, 2, 2));
    assert_int_equal(dg_ctx_status(ctx), DG_ERR_ARG);
    dg_ctx_reset(ctx);
    a = dg_zeros(ctx, 2, (int[]){4, 3});
    assert_null(dg_reshape(ctx, a, 2, (int[]){5, 2}));
    assert_null(dg_sum_axis(ctx, a, 2));
    dg_ctx_free(ctx);
}

static void test_chain_check_finds_cut(void **state) {
    (void)state;
    dg_params *p = dg_params_create();
    dg_params_add(p, "used", 1, (int[]){2}, NULL);
    dg_params_add(p, "unused", 1, (int[]){2}, NULL);
    dg_params_data(p, 0)[0] = 1.0f;
    dg_ctx *ctx = dg_ctx_create(1 << 16);
    dg_tensor *l = dg_sum(ctx, dg_square(ctx, dg_param(ctx, p, 0)));
    dg_param(ctx, p, 1);
    dg_params_zero_grad(p);
    dg_backward(ctx, l);
    int idx[2];
    assert_int_equal(dg_params_find_zero_grads(p, idx, 2), 1);
    assert_int_equal(idx[0], 1);
    dg_ctx_free(ctx);
    dg_params_free(p);
}

/* A narrow feature (softplus(40 (w - 0.85)), width 0.025) against a step of 0.1: one step's
 * Richardson estimate is off, the multi-scale check is not; a gradient that misses a term (the
 * term's input copied into an untaped constant) fails at every scale. */
static dg_tensor *narrow_loss(dg_ctx *ctx, dg_params *p, void *user) {
    dg_tensor *w = dg_param(ctx, p, 0);
    dg_tensor *l = dg_sum(ctx, dg_softplus(ctx, dg_scale(ctx, dg_add_scalar(ctx, w, -0.85f), 40.0f)));
    if (!user) return l;
    dg_tensor *cut = dg_from(ctx, 1, (int[]){w->n}, w->data);  /* forward sees w, backward does not */
    return dg_add(ctx, l, dg_sum(ctx, dg_square(ctx, cut)));
}

static void test_gradcheck_scales(void **state) {
    (void)state;
    dg_params *p = dg_params_create();
    dg_params_add(p, "w", 1, (int[]){4}, NULL);
    const float w0[4] = {0.83f, 0.85f, 0.87f, 0.9f};
    memcpy(dg_params_data(p, 0), w0, sizeof w0);
    dg_ctx *ctx = dg_ctx_create(1 << 16);
    dg_gradcheck_report one, three, bad;
    assert_int_equal(dg_gradcheck(ctx, p, narrow_loss, NULL, 0.1f, 1e-2, 0, &one, NULL), DG_OK);
    assert_int_equal(dg_gradcheck_scales(ctx, p, narrow_loss, NULL, 0.1f, 3, 1e-2, 0, &three, NULL), DG_OK);
    printf("  narrow feature: one step %.2e, three steps %.2e\n", one.max_rel_err, three.max_rel_err);
    assert_true(one.max_rel_err > 1e-2);
    assert_true(three.max_rel_err < 1e-3);
    for (int n = 1; n <= 3; n++) {
        assert_int_equal(dg_gradcheck_scales(ctx, p, narrow_loss, (void *)1, 0.1f, n, 1e-2, 0, &bad, NULL), DG_OK);
        assert_true(bad.max_rel_err > 0.1);  /* d(w²)/dw = 2w is missing: half or more of it */
    }
    assert_int_equal(dg_gradcheck_scales(ctx, p, narrow_loss, NULL, 0.1f, 0, 1e-2, 0, &bad, NULL), DG_ERR_ARG);
    dg_ctx_free(ctx);
    dg_params_free(p);
}

/* 1000 + sum(w · c): a loss whose float rounding (ulp(1000) / eps) is most of every difference */
static dg_tensor *offset_loss(dg_ctx *ctx, dg_params *p, void *user) {
    (void)user;
    dg_tensor *c = dg_from(ctx, 1, (int[]){8}, (const float[]){0.3f, -1.7f, 2.9f, 0.01f, -0.6f, 1.1f, 4.3f, -2.2f});
    return dg_add_scalar(ctx, dg_sum(ctx, dg_mul(ctx, dg_param(ctx, p, 0), c)), 1000.0f);
}

/* Every difference within the rounding allowance: the relative error is 0, and the element
 * reported is the one of the largest raw difference (all have the same denominator, the floor),
 * with that difference and its allowance, not merely the first element. */
static void test_gradcheck_worst_raw(void **state) {
    (void)state;
    dg_params *p = dg_params_create();
    dg_params_add(p, "w", 1, (int[]){8}, NULL);
    const float w0[8] = {0.11f, -0.37f, 0.52f, 0.93f, -0.71f, 0.26f, -0.05f, 0.64f};
    memcpy(dg_params_data(p, 0), w0, sizeof w0);
    dg_ctx *ctx = dg_ctx_create(1 << 16);
    dg_gradcheck_report r;
    assert_int_equal(dg_gradcheck(ctx, p, offset_loss, NULL, 0.1f, 10.0, 0, &r, NULL), DG_OK);
    printf("  1000 + w.c: rel err %.2e, worst w[%lld] differs by %.2e (allowance %.2e), largest %.2e\n",
           r.max_rel_err, (long long)r.worst_index, r.worst_abs_err, r.worst_allowance, r.max_abs_err);
    assert_true(r.max_rel_err == 0.0);
    assert_true(r.max_abs_err > 0.0);
    assert_true(r.worst_abs_err == r.max_abs_err);
    assert_true(r.worst_abs_err == fabs(r.worst_analytic - r.worst_numeric));
    assert_true(r.worst_abs_err <= r.worst_allowance && r.worst_allowance <= r.rounding);
    dg_ctx_free(ctx);
    dg_params_free(p);
}

/* sqrt(w^2) at w = 0: |w| forward (finite differences give 0), but backward's inf * 0 is NaN */
static dg_tensor *abs_by_sqrt_loss(dg_ctx *ctx, dg_params *p, void *user) {
    (void)user;
    dg_tensor *w = dg_param(ctx, p, 0);
    return dg_sum(ctx, dg_sqrt(ctx, dg_mul(ctx, w, w)));
}

/* A NaN backward gradient fails the check naming its element (it once read as a relative error
 * of 0: fmax(NaN - allowance, 0) is 0) */
static void test_gradcheck_nan_backward(void **state) {
    (void)state;
    dg_params *p = dg_params_create();
    dg_params_add(p, "w", 1, (int[]){3}, NULL);
    memcpy(dg_params_data(p, 0), (const float[]){0.5f, 0.0f, -0.25f}, 3 * sizeof(float));
    dg_ctx *ctx = dg_ctx_create(1 << 16);
    dg_gradcheck_report r;
    dg_err e = {0};
    assert_int_equal(dg_gradcheck(ctx, p, abs_by_sqrt_loss, NULL, 0.01f, 1e-3, 0, &r, &e), DG_ERR_NONFINITE);
    printf("  %s\n", e.msg);
    assert_non_null(strstr(e.msg, "backward gradient of w[1] is nan"));
    dg_ctx_free(ctx);
    dg_params_free(p);
}

/* backward hands an intermediate's gradient buffer on to later nodes unless it is retained */
static void test_retain_grad(void **state) {
    (void)state;
    dg_ctx *ctx = dg_ctx_create(1 << 16);
    for (int retain = 0; retain < 2; retain++) {
        dg_ctx_reset(ctx);
        dg_tensor *x = dg_from(ctx, 1, (int[]){3}, (const float[]){1.0f, 2.0f, 3.0f});
        dg_set_requires_grad(x);
        dg_tensor *y = dg_scale(ctx, x, 2.0f);  /* dL/dy = 2 y = 4 x */
        if (retain) dg_retain_grad(y);
        assert_int_equal(dg_backward(ctx, dg_sum(ctx, dg_square(ctx, y))), DG_OK);
        if (!retain) assert_null(y->grad);
        else
            for (int i = 0; i < 3; i++) assert_float_equal(y->grad[i], 4.0f * (float)(i + 1), 0.0f);
        for (int i = 0; i < 3; i++) assert_float_equal(x->grad[i], 8.0f * (float)(i + 1), 0.0f);  /* leaves keep theirs */
    }
    dg_ctx_free(ctx);
}

static void test_rng_reproducible(void **state) {
    (void)state;
    dg_rng a, b;
    dg_rng_seed(&a, 42);
    dg_rng_seed(&b, 42);
    double mean = 0, var = 0;
    const int n = 100000;
    for (int i = 0; i < n; i++) {
        float x = dg_rng_uniform(&a, -1, 1);
        assert_true(x == dg_rng_uniform(&b, -1, 1));
        assert_true(x >= -1 && x < 1);
        float z = dg_rng_normal(&a, 0, 1);
        assert_true(z == dg_rng_normal(&b, 0, 1));
        mean += z;
        var += (double)z * z;
    }
    mean /= n;
    var = var / n - mean * mean;
    assert_true(fabs(mean) < 0.02 && fabs(var - 1) < 0.03);
    dg_rng_seed(&b, 43);
    assert_true(dg_rng_u64(&a) != dg_rng_u64(&b));
}

/* the blocked kernel against a plain triple loop, over every block remainder
 * and all three stride patterns the ops use */
static void test_gemm_kernel(void **state) {
    (void)state;
    const int Ms[] = {1, 3, 4, 5, 9, 16, 33, 64, 130}, Ns[] = {1, 2, 6, 15, 16, 17, 31, 32, 33, 64, 70}, Ks[] = {1, 7, 64, 600};
    dg_rng rng;
    dg_rng_seed(&rng, 3);
    static float A[130 * 600], B[600 * 70], C[130 * 70], R[130 * 70];
    for (size_t i = 0; i < sizeof A / sizeof A[0]; i++) A[i] = dg_rng_uniform(&rng, -1, 1);
    for (size_t i = 0; i < sizeof B / sizeof B[0]; i++) B[i] = dg_rng_uniform(&rng, -1, 1);
    for (int mi = 0; mi < 9; mi++)
        for (int ni = 0; ni < 11; ni++)
            for (int ki = 0; ki < 4; ki++)
                for (int layout = 0; layout < 2; layout++) {
                    const int M = Ms[mi], N = Ns[ni], K = Ks[ki];
                    const int64_t a_rs = layout ? 1 : K, a_cs = layout ? M : 1;  /* A or Aᵀ */
                    for (int i = 0; i < M * N; i++) C[i] = R[i] = 0.25f * (float)(i % 7);
                    dg__gemm_acc(M, N, K, A, a_rs, a_cs, B, N, C, N);
                    for (int m = 0; m < M; m++)
                        for (int n = 0; n < N; n++) {
                            double acc = R[m * N + n];
                            for (int k = 0; k < K; k++) acc += (double)A[m * a_rs + k * a_cs] * B[k * N + n];
                            if (fabs(acc - C[m * N + n]) > 2e-5 * (1 + fabs(acc)))
                                fail_msg("gemm M=%d N=%d K=%d layout %d at (%d,%d): %g vs %g", M, N, K,
                                         layout, m, n, C[m * N + n], acc);
                        }
                }
}

/* Whether this build's kernel rounds a * b + c once (an FMA) or twice: gcc contracts the kernel's
 * vector a * b + c under -ffp-contract=fast only from -O2 (the Release build), not at -O1 (the
 * sanitizer build). Found on the path the long test takes (32 x 32, A transposed): (1/3)·3 - 1 is
 * 0 rounded twice, 2.98e-8 rounded once. */
static int kernel_fuses(void) {
    static float A[32], B[32], C[32 * 32];
    for (int i = 0; i < 32; i++) A[i] = 1.0f / 3.0f, B[i] = 3.0f;
    for (int i = 0; i < 32 * 32; i++) C[i] = -1.0f;
    dg__gemm_acc(32, 32, 1, A, 1, 32, B, 32, C, 32);
    return C[0] != 0.0f;
}

/* A long reduction (a weight gradient at a large batch: A is dzᵀ, K the batch) gives each element
 * the bits of one multiply-add chain in the order k = 0, 1, ..., K - 1, rounded as the build's
 * kernel rounds (kernel_fuses), whatever the block. */
static void test_gemm_long_exact(void **state) {
    (void)state;
    const int Ns[] = {32, 64, 96}, Ks[] = {256, 300, 1000, 1024}, Ms[] = {32, 64};
    dg_rng rng;
    dg_rng_seed(&rng, 11);
    static float A[64 * 1024], B[1024 * 96], C[64 * 96], R[64 * 96];
    const int fused = kernel_fuses();
    print_message("  the kernel's multiply-adds are %s\n", fused ? "fused" : "rounded twice");
    for (size_t i = 0; i < sizeof A / sizeof A[0]; i++) A[i] = dg_rng_uniform(&rng, -1, 1);
    for (size_t i = 0; i < sizeof B / sizeof B[0]; i++) B[i] = dg_rng_uniform(&rng, -1, 1);
    for (int mi = 0; mi < 2; mi++)
        for (int ni = 0; ni < 3; ni++)
            for (int ki = 0; ki < 4; ki++) {
                const int M = Ms[mi], N = Ns[ni], K = Ks[ki];
                for (int i = 0; i < M * N; i++) C[i] = R[i] = 0.25f * (float)(i % 7);
                dg__gemm_acc(M, N, K, A, 1, M, B, N, C, N);  /* A is dzᵀ: a_rs 1, a_cs M */
                for (int m = 0; m < M; m++)
                    for (int n = 0; n < N; n++) {
                        float acc = R[m * N + n];
                        for (int k = 0; k < K; k++) {
                            if (fused) {
                                acc = fmaf(A[m + k * M], B[k * N + n], acc);
                            } else {
                                volatile float p = A[m + k * M] * B[k * N + n];  /* rounded here */
                                acc = acc + p;
                            }
                        }
                        if (memcmp(&acc, &C[m * N + n], sizeof acc))
                            fail_msg("long gemm M=%d N=%d K=%d at (%d,%d): %.9g vs %.9g", M, N, K, m, n,
                                     C[m * N + n], acc);
                    }
            }
}

/* At a large batch the forward prefetches its output's next rows for writing, and the stored dx
 * of linear's backward prefetches the layer's input: hints only, so the bits are those of the same
 * rows computed in small calls (no prefetch) and of dg__gemm_bias_act without bias or tanh. */
static void test_gemm_prefetch_exact(void **state) {
    (void)state;
    const int Ms[] = {256, 300, 1024}, Ns[] = {32, 64, 70}, Ks[] = {6, 64};
    dg_rng rng;
    dg_rng_seed(&rng, 13);
    static float A[1024 * 64], B[64 * 70], bias[70], C[1024 * 70], R[1024 * 70], X[1024 * 64];
    for (size_t i = 0; i < sizeof A / sizeof A[0]; i++) A[i] = dg_rng_uniform(&rng, -3, 3), X[i] = A[i];
    for (size_t i = 0; i < sizeof B / sizeof B[0]; i++) B[i] = dg_rng_uniform(&rng, -1, 1);
    for (int i = 0; i < 70; i++) bias[i] = dg_rng_uniform(&rng, -1, 1);
    for (int mi = 0; mi < 3; mi++)
        for (int ni = 0; ni < 3; ni++)
            for (int ki = 0; ki < 2; ki++) {
                const int M = Ms[mi], N = Ns[ni], K = Ks[ki];
                dg__gemm_bias_act(M, N, K, A, K, B, N, bias, 1, C, N);
                for (int m = 0; m < M; m += 8)  /* 8 rows a call: below the prefetching size */
                    dg__gemm_bias_act(M - m < 8 ? M - m : 8, N, K, A + m * K, K, B, N, bias, 1, R + m * N, N);
                assert_memory_equal(C, R, (size_t)M * N * sizeof(float));
                dg__gemm_store_prefetch(M, N, K, A, K, B, N, C, N, X, (int64_t)M * 64);
                dg__gemm_bias_act(M, N, K, A, K, B, N, NULL, 0, R, N);
                assert_memory_equal(C, R, (size_t)M * N * sizeof(float));
            }
}

/* The fused kernels do what the unfused steps they replace did: dg__gemm_bias_act gives the bits
 * of the bias copied into C, dg__gemm_acc, then the tanh op; dg__tanh_grad_colsum is d *= 1 - y²
 * and the column sums row by row (to rounding here; training runs keep their bits, see
 * docs/performance.md). */
static void test_fused_kernels_exact(void **state) {
    (void)state;
    const int Ms[] = {1, 3, 8, 9, 64, 65}, Ns[] = {1, 2, 6, 31, 32, 33, 64, 70, 130}, Ks[] = {1, 6, 64};
    dg_rng rng;
    dg_rng_seed(&rng, 5);
    static float A[65 * 64], B[64 * 130], bias[130], C[65 * 130], R[65 * 130], y[65 * 130], gb[130], gr[130];
    for (size_t i = 0; i < sizeof A / sizeof A[0]; i++) A[i] = dg_rng_uniform(&rng, -3, 3);
    for (size_t i = 0; i < sizeof B / sizeof B[0]; i++) B[i] = dg_rng_uniform(&rng, -1, 1);
    for (int i = 0; i < 130; i++) bias[i] = dg_rng_uniform(&rng, -1, 1);
    dg_ctx *ctx = dg_ctx_create(1 << 20);
    for (int mi = 0; mi < 6; mi++)
        for (int ni = 0; ni < 9; ni++)
            for (int ki = 0; ki < 3; ki++)
                for (int mode = 0; mode < 4; mode++) {  /* bias or none, tanh or none */
                    const int M = Ms[mi], N = Ns[ni], K = Ks[ki], hasb = mode & 1, act = mode >> 1;
                    for (int i = 0; i < M * N; i++) {
                        C[i] = 99.0f;  /* overwritten, never read */
                        R[i] = hasb ? bias[i % N] : 0.0f;
                    }
                    dg__gemm_bias_act(M, N, K, A, K, B, N, hasb ? bias : NULL, act, C, N);
                    dg__gemm_acc(M, N, K, A, K, 1, B, N, R, N);
                    if (act) {  /* the tanh op, compiled with the library's flags as the kernel is */
                        dg_ctx_reset(ctx);
                        memcpy(R, dg_tanh(ctx, dg_from(ctx, 1, (int[]){M * N}, R))->data, (size_t)M * N * sizeof(float));
                    }
                    if (memcmp(C, R, (size_t)M * N * sizeof(float)))
                        fail_msg("gemm_bias_act M=%d N=%d K=%d mode %d differs", M, N, K, mode);
                    /* backward's first half on this output */
                    for (int i = 0; i < M * N; i++) {
                        y[i] = C[i] > 1 ? 0.5f : (C[i] < -1 ? -0.5f : C[i]);
                        C[i] = R[i] = dg_rng_uniform(&rng, -1, 1);
                    }
                    for (int n = 0; n < N; n++) gb[n] = gr[n] = bias[n];
                    dg__tanh_grad_colsum(M, N, act ? y : NULL, C, hasb ? gb : NULL);
                    for (int m = 0; m < M; m++)
                        for (int n = 0; n < N; n++) {
                            if (act) R[m * N + n] *= 1.0f - y[m * N + n] * y[m * N + n];
                            if (hasb) gr[n] += R[m * N + n];
                        }
                    for (int i = 0; i < M * N + N; i++) {  /* to rounding: where the compiler fuses a
                                                                 multiply-add is its choice in each */
                        const float got = i < M * N ? C[i] : gb[i - M * N], want = i < M * N ? R[i] : gr[i - M * N];
                        if (fabsf(got - want) > 1e-6f * (1 + fabsf(want)))
                            fail_msg("tanh_grad_colsum M=%d N=%d mode %d at %d: %g vs %g", M, N, mode, i, got, want);
                    }
                }
    dg_ctx_free(ctx);
}

/* dg__gemm_acc on one or two rows of C (a 2-wide output layer's weight gradient: dzᵀ, strided,
 * times the layer's input) gives each element C + Σ_k a·b in order, to rounding, for every column
 * count around the 64-wide blocks and both strides of A. */
static void test_gemm_few_rows(void **state) {
    (void)state;
    const int Ns[] = {32, 63, 64, 65, 96, 128, 130}, Ks[] = {1, 5, 64, 200};
    dg_rng rng;
    dg_rng_seed(&rng, 9);
    static float A[2 * 200], B[200 * 130], C[2 * 130];
    for (size_t i = 0; i < sizeof A / sizeof A[0]; i++) A[i] = dg_rng_uniform(&rng, -1, 1);
    for (size_t i = 0; i < sizeof B / sizeof B[0]; i++) B[i] = dg_rng_uniform(&rng, -1, 1);
    for (int M = 1; M <= 2; M++)
        for (int ni = 0; ni < 7; ni++)
            for (int ki = 0; ki < 4; ki++)
                for (int tr = 0; tr < 2; tr++) {  /* A (M, K) row-major, or its transpose stored (K, M) */
                    const int N = Ns[ni], K = Ks[ki];
                    const int64_t a_rs = tr ? 1 : K, a_cs = tr ? M : 1;
                    for (int i = 0; i < M * N; i++) C[i] = (float)(i % 7) - 3.0f;
                    dg__gemm_acc(M, N, K, A, a_rs, a_cs, B, N, C, N);
                    for (int m = 0; m < M; m++)
                        for (int n = 0; n < N; n++) {
                            double want = (double)((m * N + n) % 7) - 3.0, mag = fabs(want);
                            for (int k = 0; k < K; k++) {
                                const double p = (double)A[m * a_rs + k * a_cs] * B[k * N + n];
                                want += p;
                                mag += fabs(p);
                            }
                            if (fabs(C[m * N + n] - want) > 1e-6 * (1 + mag))
                                fail_msg("gemm_acc M=%d N=%d K=%d tr %d at (%d, %d): %g vs %g", M, N, K, tr, m, n,
                                         C[m * N + n], want);
                        }
                }
}

/* Narrow products with an even column count (a 2-wide output layer: 8 rows x 2 columns at a time,
 * C contiguous; the 6-wide input layer's gradient: 4 rows x 6 columns at a time) give the bits of
 * the general narrow dot-product path, one column at a time (N 1). */
static void test_gemm_two_columns_exact(void **state) {
    (void)state;
    const int Ms[] = {1, 8, 9, 16, 64, 70}, Ks[] = {16, 20, 64, 600}, Ns[] = {2, 6};
    dg_rng rng;
    dg_rng_seed(&rng, 11);
    static float A[70 * 600], B[600 * 6], C[70 * 6], R[70 * 6];
    for (size_t i = 0; i < sizeof A / sizeof A[0]; i++) A[i] = dg_rng_uniform(&rng, -1, 1);
    for (size_t i = 0; i < sizeof B / sizeof B[0]; i++) B[i] = dg_rng_uniform(&rng, -1, 1);
    for (int ni = 0; ni < 2; ni++)
        for (int mi = 0; mi < 6; mi++)
            for (int ki = 0; ki < 4; ki++) {
                const int M = Ms[mi], K = Ks[ki], N = Ns[ni];
                for (int i = 0; i < M * N; i++) C[i] = R[i] = dg_rng_uniform(&rng, -1, 1);
                dg__gemm_acc(M, N, K, A, K, 1, B, N, C, N);
                for (int n = 0; n < N; n++) dg__gemm_acc(M, 1, K, A, K, 1, B + n, N, R + n, N);
                for (int i = 0; i < M * N; i++)
                    if (memcmp(&C[i], &R[i], sizeof(float)))
                        fail_msg("gemm_acc N=%d M=%d K=%d at %d: %.9g vs %.9g", N, M, K, i, C[i], R[i]);
            }
}

/* A loss with more terms than DG_LOSS_MAX_TERMS is refused, never truncated. */
static void test_loss_refuses_too_many_terms(void **state) {
    (void)state;
    float w[DG_LOSS_MAX_TERMS + 1] = {0};
    dg_loss l;
    assert_int_equal(dg_loss_begin(&l, DG_LOSS_MAX_TERMS + 1, w), DG_ERR_ARG);
    assert_int_equal(l.nterms, 0);
    dg_ctx *ctx = dg_ctx_create(1 << 16);
    assert_non_null(ctx);
    assert_null(dg_loss_finish(ctx, &l, NULL));
    assert_int_equal(dg_ctx_status(ctx), DG_ERR_ARG);
    assert_int_equal(dg_loss_begin(&l, DG_LOSS_MAX_TERMS, w), DG_OK);
    assert_int_equal(l.nterms, DG_LOSS_MAX_TERMS);
    dg_ctx_free(ctx);
}

/* dg_ctx_run: an arena too small is measured by the failed run and grown once; later runs of the
 * same job reuse it; a cap too small is reported. */
static dg_status alloc_job(dg_ctx *ctx, void *user) {
    float *x = dg_ctx_alloc(ctx, *(size_t *)user);
    if (x) x[0] = 1.0f;
    return dg_ctx_status(ctx);
}

static void test_ctx_run_grows_once(void **state) {
    (void)state;
    dg_ctx *ctx = dg_ctx_create(4096);
    assert_non_null(ctx);
    size_t bytes = (size_t)1 << 20;
    assert_int_equal(dg_ctx_run(&ctx, DG_ARENA_MAX, alloc_job, &bytes), DG_OK);
    assert_true(dg_ctx_capacity(ctx) >= bytes);
    const dg_ctx *settled = ctx;
    assert_int_equal(dg_ctx_run(&ctx, DG_ARENA_MAX, alloc_job, &bytes), DG_OK);
    assert_ptr_equal(ctx, settled);  /* the second run allocates nothing */
    bytes = (size_t)1 << 24;
    assert_int_equal(dg_ctx_run(&ctx, (size_t)1 << 22, alloc_job, &bytes), DG_ERR_ARENA_FULL);
    assert_true(dg_ctx_capacity(ctx) <= (size_t)1 << 22);
    const dg_ctx *before = ctx;
    assert_int_equal(dg_ctx_reserve(&ctx, 4096), DG_OK);  /* already large enough: kept */
    assert_ptr_equal(ctx, before);
    assert_int_equal(dg_ctx_reserve(&ctx, (size_t)1 << 23), DG_OK);
    assert_true(dg_ctx_capacity(ctx) >= (size_t)1 << 23);
    dg_ctx_free(ctx);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_ops_gradcheck),
        cmocka_unit_test(test_gradcheck_scales),
        cmocka_unit_test(test_gradcheck_worst_raw),
        cmocka_unit_test(test_gradcheck_nan_backward),
        cmocka_unit_test(test_linear_tangent_sine_far),
        cmocka_unit_test(test_mlp_value_grad),
        cmocka_unit_test(test_retain_grad),
        cmocka_unit_test(test_every_op_covered),
        cmocka_unit_test(test_forward_values),
        cmocka_unit_test(test_gemm_kernel),
        cmocka_unit_test(test_gemm_long_exact),
        cmocka_unit_test(test_gemm_prefetch_exact),
        cmocka_unit_test(test_fused_kernels_exact),
        cmocka_unit_test(test_gemm_few_rows),
        cmocka_unit_test(test_gemm_two_columns_exact),
        cmocka_unit_test(test_tanh_accuracy),
        cmocka_unit_test(test_sin_cos_accuracy),
        cmocka_unit_test(test_constants_not_taped),
        cmocka_unit_test(test_backward_twice_accumulates),
        cmocka_unit_test(test_arena_full_is_status),
        cmocka_unit_test(test_shape_errors),
        cmocka_unit_test(test_chain_check_finds_cut),
        cmocka_unit_test(test_rng_reproducible),
        cmocka_unit_test(test_loss_refuses_too_many_terms),
        cmocka_unit_test(test_ctx_run_grows_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
