/* Value networks with their input gradient on the tape (dg_mlp_forward_grad, policy/mlp.c), on the
 * double tape (compiled with DG_F64, as test_f64.c): the input Jacobian against central finite
 * differences of the network's output to 1e-8, for tanh and sine (SIREN) networks, linear and
 * bounded last layers, one to three layers, several random networks and points; the weight gradient
 * of an HJI-residual-like loss made of V and grad V against finite differences over the weights
 * (dg_gradcheck); SIREN's initialisation ranges; bad arguments. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "difgames/difgames.h"
#include "util/check.h"

typedef struct net_case {
    const char *name;
    dg_mlp_act  act;
    int         linear_out;
    int         in, nhidden, hidden[3], out;
} net_case;

static const net_case NETS[] = {
    {"sine 3 -> 16 -> 16 -> 1, linear out", DG_MLP_SINE, 1, 3, 2, {16, 16}, 1},
    {"sine 5 -> 12 -> 12 -> 12 -> 1, linear out", DG_MLP_SINE, 1, 5, 3, {12, 12, 12}, 1},
    {"sine 2 -> 8 -> 3, sine out", DG_MLP_SINE, 0, 2, 1, {8}, 3},
    {"tanh 3 -> 16 -> 16 -> 1, linear out", DG_MLP_TANH, 1, 3, 2, {16, 16}, 1},
    {"tanh 4 -> 10 -> 2, tanh out (a policy)", DG_MLP_TANH, 0, 4, 1, {10}, 2},
    {"tanh 3 -> 2, one layer, tanh out", DG_MLP_TANH, 0, 3, 0, {0}, 2},
    {"sine 3 -> 1, one linear layer", DG_MLP_SINE, 1, 3, 0, {0}, 1},
};
#define NNETS (int)(sizeof NETS / sizeof NETS[0])

/* The network of case c with weights drawn for seed into a new *p; the test fails on an error. */
static dg_mlp make_net(const net_case *c, uint64_t seed, dg_params **p) {
    dg_mlp m;
    dg_err e = {0};
    *p = dg_params_create();
    assert_non_null(*p);
    if (dg_mlp_init(&m, *p, "value", c->in, c->hidden, c->nhidden, c->out, &e) != DG_OK ||
        dg_mlp_set_activation(&m, c->act, c->linear_out, &e) != DG_OK)
        fail_msg("%s: %s", c->name, e.msg);
    dg_rng rng;
    dg_rng_seed(&rng, seed);
    dg_mlp_reset_params(&m, *p, &rng);
    return m;
}

/* the network's outputs at the B points x (B, in) into y (B, out), forward only */
static void eval_net(dg_ctx *ctx, const dg_mlp *m, dg_params *p, int B, const double *x, double *y) {
    dg_ctx_reset(ctx);
    dg_tensor *t = dg_mlp_forward(ctx, m, p, dg_from(ctx, 2, (int[]){B, m->sizes[0]}, x));
    assert_non_null(t);
    memcpy(y, t->data, (size_t)t->n * sizeof *y);
}

/* (a) dy against Richardson-extrapolated central differences of y (steps h and h/2, error O(h⁴)),
 * each element within 1e-8 of the larger of the two (or of the Jacobian's largest element, for
 * elements near zero); y equal to dg_mlp_forward's to the bit. */
static void test_input_gradient_fd(void **state) {
    (void)state;
    enum { B = 6 };
    dg_ctx *ctx = dg_ctx_create(1 << 22);
    double worst = 0;
    for (int ci = 0; ci < NNETS; ci++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            const net_case *c = &NETS[ci];
            dg_params *p;
            const dg_mlp m = make_net(c, seed, &p);
            const int in = c->in, out = c->out;
            double x[B * 8], y[B * 4], xp[B * 8], f[4][B * 4], dy[B * 32];
            dg_rng rng;
            dg_rng_seed(&rng, 100 + seed);
            for (int i = 0; i < B * in; i++) x[i] = dg_rng_uniform(&rng, -1.0f, 1.0f);
            dg_ctx_reset(ctx);
            dg_tensor *tdy = NULL, *ty = dg_mlp_forward_grad(ctx, &m, p, dg_from(ctx, 2, (int[]){B, in}, x), &tdy);
            if (!ty || !tdy) fail_msg("%s: %s", c->name, dg_ctx_error(ctx));
            assert_int_equal(tdy->ndim, 2);
            assert_int_equal(tdy->shape[0], B);
            assert_int_equal(tdy->shape[1], in * out);
            memcpy(dy, tdy->data, sizeof(double) * B * in * out);
            memcpy(y, ty->data, sizeof(double) * B * out);
            double y0[B * 4];
            eval_net(ctx, &m, p, B, x, y0);
            if (memcmp(y, y0, sizeof(double) * B * out)) fail_msg("%s: y is not dg_mlp_forward's", c->name);
            double scale = 0;
            for (int i = 0; i < B * in * out; i++) scale = fmax(scale, fabs(dy[i]));
            const double h = 1e-4, steps[4] = {h, -h, h / 2, -h / 2};
            for (int j = 0; j < in; j++) {
                for (int s = 0; s < 4; s++) {
                    memcpy(xp, x, sizeof(double) * B * in);
                    for (int b = 0; b < B; b++) xp[b * in + j] += steps[s];
                    eval_net(ctx, &m, p, B, xp, f[s]);
                }
                for (int b = 0; b < B; b++)
                    for (int k = 0; k < out; k++) {
                        const int o = b * out + k;
                        const double d1 = (f[0][o] - f[1][o]) / (2 * h), d2 = (f[2][o] - f[3][o]) / h;
                        const double num = (4 * d2 - d1) / 3, ana = dy[(int64_t)b * in * out + j * out + k];
                        const double rel = fabs(ana - num) / fmax(fmax(fabs(ana), fabs(num)), 1e-3 * scale);
                        worst = fmax(worst, rel);
                        if (!(rel <= 1e-8))
                            fail_msg("%s seed %d: dy_%d/dx_%d at row %d: %.12g, differences %.12g (rel %.2e)", c->name,
                                     (int)seed, k, j, b, ana, num, rel);
                    }
            }
            dg_params_free(p);
        }
    printf("  input gradient: worst relative error %.2e\n", worst);
    dg_ctx_free(ctx);
}

typedef struct residual_case {
    dg_mlp m;
    int    B;
    double x[16 * 8];
} residual_case;

/* An HJI-residual-like loss of V and its input gradient at B points (x, tau) (the last input is
 * tau): mean_b (dV/dtau + |grad_x V|_1 - c(x))² + mean_b (V - l(x))², c(x) = |x|², l(x) = x_0. */
static dg_tensor *residual_loss(dg_ctx *ctx, dg_params *p, void *user) {
    const residual_case *r = user;
    const int in = r->m.sizes[0], d = in - 1;
    dg_tensor *x = dg_from(ctx, 2, (int[]){r->B, in}, r->x), *g = NULL;
    dg_tensor *v = dg_mlp_forward_grad(ctx, &r->m, p, x, &g);
    if (!v) return NULL;
    dg_tensor *xs = dg_cols(ctx, x, 0, d);
    dg_tensor *c = dg_sum_axis(ctx, dg_square(ctx, xs), 1);
    dg_tensor *res = dg_sub(ctx, dg_add(ctx, dg_cols(ctx, g, d, 1), dg_sum_axis(ctx, dg_abs(ctx, dg_cols(ctx, g, 0, d)), 1)), c);
    dg_tensor *bc = dg_sub(ctx, v, dg_cols(ctx, x, 0, 1));
    return dg_add(ctx, dg_mean(ctx, dg_square(ctx, res)), dg_mean(ctx, dg_square(ctx, bc)));
}

/* (b) the residual's weight gradient from the tape's backward against finite differences over
 * every weight and bias (dg_gradcheck), for sine and tanh value networks */
static void test_residual_weight_gradient(void **state) {
    (void)state;
    dg_ctx *ctx = dg_ctx_create(1 << 22);
    for (int ci = 0; ci < NNETS; ci++) {
        if (NETS[ci].out != 1) continue;
        for (uint64_t seed = 1; seed <= 2; seed++) {
            const net_case *c = &NETS[ci];
            dg_params *p;
            residual_case r = {.m = make_net(c, seed, &p), .B = 16};
            dg_rng rng;
            dg_rng_seed(&rng, 200 + seed);
            /* points whose gradient components are all 0.01 or more from zero: a difference across
               |.|'s kink measures the kink, not backward */
            for (int b = 0; b < r.B;) {
                double *xb = r.x + (int64_t)b * c->in;
                for (int i = 0; i < c->in; i++) xb[i] = dg_rng_uniform(&rng, -1.0f, 1.0f);
                dg_ctx_reset(ctx);
                dg_tensor *g = NULL;
                assert_non_null(dg_mlp_forward_grad(ctx, &r.m, p, dg_from(ctx, 2, (int[]){1, c->in}, xb), &g));
                int ok = 1;
                for (int i = 0; i + 1 < c->in; i++) ok &= fabs(g->data[i]) >= 0.01;
                b += ok;
            }
            dg_gradcheck_report rep;
            dg_err e = {0};
            if (dg_gradcheck(ctx, p, residual_loss, &r, 1e-4, 1e-6, 0, &rep, &e) != DG_OK)
                fail_msg("%s: %s", c->name, e.msg);
            printf("  %-44s seed %d: max rel err %.2e over %lld weights\n", c->name, (int)seed, rep.max_rel_err,
                   (long long)rep.checked);
            check_gradcheck(c->name, p, &rep, 1e-7);
            dg_params_free(p);
        }
    }
    dg_ctx_free(ctx);
}

/* SIREN's initialisation: the first layer's weights within 1/in, the later ones' within
 * sqrt(6/in)/omega0, and spread over most of that range; biases PyTorch's U(±1/sqrt(in)) */
static void test_siren_init(void **state) {
    (void)state;
    const net_case c = {"sine 4 -> 64 -> 64 -> 1", DG_MLP_SINE, 1, 4, 2, {64, 64}, 1};
    dg_params *p;
    const dg_mlp m = make_net(&c, 5, &p);
    assert_true(m.omega0 == DG_MLP_SIREN_OMEGA0);
    for (int l = 0; l < m.nlayers; l++) {
        const double in = m.sizes[l], k = l == 0 ? 1.0 / in : sqrt(6.0 / in) / m.omega0, kb = 1.0 / sqrt(in);
        double wmax = 0, bmax = 0;
        for (int64_t i = 0; i < p->info[m.w[l]].n; i++) wmax = fmax(wmax, fabs(dg_params_data(p, m.w[l])[i]));
        for (int64_t i = 0; i < p->info[m.b[l]].n; i++) bmax = fmax(bmax, fabs(dg_params_data(p, m.b[l])[i]));
        if (!(wmax <= k && wmax > 0.8 * k)) fail_msg("layer %d: |w| up to %g, want up to %g", l, wmax, k);
        if (!(bmax <= kb && bmax > 0.5 * kb)) fail_msg("layer %d: |b| up to %g, want up to %g", l, bmax, kb);
    }
    dg_params_free(p);
}

/* a sine MLP's forward is sin(omega0 (x Wᵀ + b)) layer by layer, the last one linear */
static void test_sine_forward_values(void **state) {
    (void)state;
    const net_case c = {"sine 2 -> 3 -> 1", DG_MLP_SINE, 1, 2, 1, {3}, 1};
    dg_params *p;
    const dg_mlp m = make_net(&c, 9, &p);
    const double x[2] = {0.3, -0.7};
    const double *w0 = dg_params_data(p, m.w[0]), *b0 = dg_params_data(p, m.b[0]);
    const double *w1 = dg_params_data(p, m.w[1]), *b1 = dg_params_data(p, m.b[1]);
    double want = b1[0];
    for (int o = 0; o < 3; o++) want += w1[o] * sin(30.0 * (w0[o * 2] * x[0] + w0[o * 2 + 1] * x[1] + b0[o]));
    dg_ctx *ctx = dg_ctx_create(1 << 16);
    double y;
    eval_net(ctx, &m, p, 1, x, &y);
    if (!(fabs(y - want) <= 1e-14)) fail_msg("sine net: %.17g, want %.17g", y, want);
    dg_ctx_free(ctx);
    dg_params_free(p);
}

/* an unknown activation is refused; an x of the wrong width is the context's shape error */
static void test_bad_arguments(void **state) {
    (void)state;
    const net_case c = {"tanh 3 -> 4 -> 1", DG_MLP_TANH, 1, 3, 1, {4}, 1};
    dg_params *p;
    dg_mlp m = make_net(&c, 1, &p);
    dg_err e = {0};
    assert_int_equal(dg_mlp_set_activation(&m, (dg_mlp_act)7, 1, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "activation"));
    dg_ctx *ctx = dg_ctx_create(1 << 16);
    dg_tensor *dy = (dg_tensor *)ctx;  /* set to NULL on failure */
    assert_null(dg_mlp_forward_grad(ctx, &m, p, dg_zeros(ctx, 2, (int[]){5, 4}), &dy));
    assert_null(dy);
    assert_int_equal(dg_ctx_status(ctx), DG_ERR_SHAPE);
    assert_non_null(strstr(dg_ctx_error(ctx), "(B, 3)"));
    dg_ctx_free(ctx);
    dg_params_free(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_input_gradient_fd),
        cmocka_unit_test(test_residual_weight_gradient),
        cmocka_unit_test(test_siren_init),
        cmocka_unit_test(test_sine_forward_values),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
