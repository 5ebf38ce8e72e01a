/* The Gaussian soft-point renderer: forward against a direct per-pixel formula,
 * finite-difference gradients, tape bookkeeping and argument errors. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "difgames/core.h"
#include "difgames/render.h"
#include "util/check.h"

#define TOL 1e-3
#define NOBJ 3
#define MAXB 4

/* img[b,0,i,j] straight from the spec, in double, exp per pixel */
static double reference_pixel(int w, int h, int i, int j, const float *xy /* (count,2) */,
                              int count, const float *inten, float sigma) {
    const double x = -1.0 + (j + 0.5) * 2.0 / w, y = 1.0 - (i + 0.5) * 2.0 / h;
    double v = 0.0;
    for (int k = 0; k < count; k++) {
        const double dx = x - xy[2 * k], dy = y - xy[2 * k + 1];
        v += (inten ? inten[k] : 1.0) * exp(-(dx * dx + dy * dy) / (2.0 * (double)sigma * sigma));
    }
    return v;
}

/* Checks a whole (B,1,H,W) forward against the reference; positions (count) × (B,2). */
static double forward_max_err(int w, int h, int B, int count, const float pos[][MAXB * 2],
                              const float *inten, float sigma) {
    dg_render_grid *g = dg_render_grid_create(w, h, NULL);
    assert_non_null(g);
    dg_ctx *ctx = dg_ctx_create(1 << 22);
    dg_tensor *p[NOBJ];
    for (int k = 0; k < count; k++) p[k] = dg_from(ctx, 2, (int[]){B, 2}, pos[k]);
    dg_tensor *img = dg_render_points(ctx, g, p, count, inten, sigma);
    assert_int_equal(dg_ctx_status(ctx), DG_OK);
    assert_non_null(img);
    assert_int_equal(img->ndim, 4);
    assert_int_equal(img->shape[0], B);
    assert_int_equal(img->shape[1], 1);
    assert_int_equal(img->shape[2], h);
    assert_int_equal(img->shape[3], w);

    /* the same positions, (B, count, 2), for the target and the plain-C helper */
    float xy[MAXB][NOBJ * 2];
    for (int b = 0; b < B; b++)
        for (int k = 0; k < count; k++) {
            xy[b][2 * k] = pos[k][2 * b];
            xy[b][2 * k + 1] = pos[k][2 * b + 1];
        }
    dg_tensor *tgt = dg_render_target(ctx, g, &xy[0][0], B, count, inten, sigma);
    assert_non_null(tgt);
    assert_int_equal(tgt->requires_grad, 0);
    float *one = test_malloc((size_t)w * h * sizeof(float));

    double worst = 0.0;
    for (int b = 0; b < B; b++) {
        dg_render_points_f32(g, xy[b], count, inten, sigma, one);
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w; j++) {
                const size_t at = ((size_t)b * h + i) * w + j;
                const double want = reference_pixel(w, h, i, j, xy[b], count, inten, sigma);
                worst = fmax(worst, fabs(img->data[at] - want));
                assert_true(tgt->data[at] == img->data[at]);       /* same kernel, same bits */
                assert_true(one[(size_t)i * w + j] == img->data[at]);
            }
    }
    test_free(one);
    dg_ctx_free(ctx);
    dg_render_grid_free(g);
    return worst;
}

static void test_forward_values(void **state) {
    (void)state;
    /* B = 3, three objects (one partly outside the arena), non-square 12 × 9 */
    const float pos[NOBJ][MAXB * 2] = {
        {0.10f, -0.20f, -0.85f, 0.90f, 0.55f, 0.33f},
        {-0.40f, 0.60f, 0.05f, -0.70f, 1.15f, -0.95f},
        {0.70f, 0.10f, -0.30f, -0.25f, -0.60f, 0.80f},
    };
    const float inten[NOBJ] = {1.0f, 0.5f, 1.7f};
    double e1 = forward_max_err(12, 9, 3, NOBJ, pos, inten, 0.3f);
    double e2 = forward_max_err(12, 9, 3, NOBJ, pos, NULL, 0.12f);
    /* wider than one column tile, with a narrow splat that underflows far away */
    double e3 = forward_max_err(301, 5, 3, NOBJ, pos, inten, 0.05f);
    printf("  forward max abs err: 12x9 s=0.3 %.2e, 12x9 s=0.12 %.2e, 301x5 s=0.05 %.2e\n", e1,
           e2, e3);
    assert_true(e1 < 1e-6);
    assert_true(e2 < 1e-6);
    assert_true(e3 < 1e-6);
}

/* row 0 is the top (y = +1), column 0 the left (x = -1) */
static void test_orientation_and_grid(void **state) {
    (void)state;
    dg_err e = {0};
    dg_render_grid *g = dg_render_grid_create(8, 6, &e);
    assert_non_null(g);
    assert_float_equal(g->xs[0], -1.0f + 1.0f / 8, 1e-7);
    assert_float_equal(g->xs[7], 1.0f - 1.0f / 8, 1e-7);
    assert_float_equal(g->ys[0], 1.0f - 1.0f / 6, 1e-7);
    assert_float_equal(g->ys[5], -1.0f + 1.0f / 6, 1e-7);
    float img[6 * 8];
    dg_render_points_f32(g, (float[]){-0.9f, 0.9f}, 1, NULL, 0.1f, img);
    int best = 0;
    for (int t = 1; t < 48; t++)
        if (img[t] > img[best]) best = t;
    assert_int_equal(best, 0);  /* top-left pixel */
    dg_render_points_f32(g, (float[]){0.9f, -0.9f}, 1, NULL, 0.1f, img);
    best = 0;
    for (int t = 1; t < 48; t++)
        if (img[t] > img[best]) best = t;
    assert_int_equal(best, 47);  /* bottom-right pixel */
    /* bad sigma in the plain helper: a blank image, no crash */
    dg_render_points_f32(g, (float[]){0.0f, 0.0f}, 1, NULL, -1.0f, img);
    for (int t = 0; t < 48; t++) assert_true(img[t] == 0.0f);
    dg_render_points_f32(NULL, NULL, 1, NULL, 0.1f, img);
    dg_render_grid_free(g);

    assert_null(dg_render_grid_create(0, 5, &e));
    assert_int_equal(e.status, DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "0x5"));
    assert_null(dg_render_grid_create(5, -3, NULL));
    dg_render_grid_free(NULL);
}

/* ------------------------------------------------------------ gradients */

typedef struct grad_case {
    const char *name;
    int         w, h, B;
    float       sigma;
    const float *inten;     /* (NOBJ) or NULL                                      */
    int         mse;        /* 0: sum(img · R), 1: mean((img - target)²)           */
    int         dup;        /* pos list {p0, p1, p0}: gradients accumulate          */
    const dg_render_grid *g;
} grad_case;

/* positions: params 0 and 1 are (B,2), object 2 a constant that needs no gradient */
static dg_tensor *render_loss(dg_ctx *ctx, dg_params *p, void *user) {
    const grad_case *c = user;
    static const float konst[MAXB * 2] = {0.3f, -0.5f, -0.6f, 0.2f, 0.0f, 0.75f, 0.4f, 0.4f};
    dg_tensor *p0 = dg_param(ctx, p, 0), *p1 = dg_param(ctx, p, 1);
    dg_tensor *p2 = dg_from(ctx, 2, (int[]){c->B, 2}, konst);
    dg_tensor *pos[NOBJ] = {p0, p1, c->dup ? p0 : p2};
    dg_tensor *img = dg_render_points(ctx, c->g, pos, NOBJ, c->inten, c->sigma);
    if (!img) return NULL;
    if (c->mse) {
        float tpos[MAXB][NOBJ * 2];
        for (int b = 0; b < c->B; b++)
            for (int k = 0; k < NOBJ * 2; k++) tpos[b][k] = 0.25f * (float)((b + k) % 5) - 0.45f;
        dg_tensor *t = dg_render_target(ctx, c->g, &tpos[0][0], c->B, NOBJ, c->inten, c->sigma);
        return dg_mean(ctx, dg_square(ctx, dg_sub(ctx, img, t)));
    }
    dg_tensor *r = dg_new(ctx, img->ndim, img->shape);
    if (!r) return NULL;
    dg_rng rng;
    dg_rng_seed(&rng, 99);
    for (int64_t i = 0; i < r->n; i++) r->data[i] = dg_rng_uniform(&rng, -1.0f, 1.0f);
    return dg_sum(ctx, dg_mul(ctx, img, r));
}

static double run_grad_case(grad_case *c, float eps) {
    dg_render_grid *g = dg_render_grid_create(c->w, c->h, NULL);
    assert_non_null(g);
    c->g = g;
    dg_params *p = dg_params_create();
    assert_int_equal(dg_params_add(p, "pos0", 2, (int[]){c->B, 2}, NULL), 0);
    assert_int_equal(dg_params_add(p, "pos1", 2, (int[]){c->B, 2}, NULL), 1);
    dg_rng rng;
    dg_rng_seed(&rng, 7);
    for (int k = 0; k < 2; k++)
        for (int64_t j = 0; j < p->info[k].n; j++)
            dg_params_data(p, k)[j] = dg_rng_uniform(&rng, -0.8f, 0.8f);
    dg_ctx *ctx = dg_ctx_create(1 << 22);
    dg_gradcheck_report rep;
    dg_err e = {0};
    if (dg_gradcheck(ctx, p, render_loss, c, eps, 1e-2, 0, &rep, &e) != DG_OK)
        fail_msg("%s: %s", c->name, e.msg);
    printf("  %-34s eps %.0e: max rel err %.2e (abs %.2e) over %lld elements\n", c->name,
           (double)eps, rep.max_rel_err, rep.max_abs_err, (long long)rep.checked);
    check_gradcheck(c->name, p, &rep, TOL);
    dg_ctx_free(ctx);
    dg_params_free(p);
    dg_render_grid_free(g);
    return rep.max_rel_err;
}

static void test_gradcheck(void **state) {
    (void)state;
    static const float inten[NOBJ] = {1.0f, 0.6f, 1.4f};
    grad_case cases[] = {
        {"sum(img*R) 12x9 B=3", 12, 9, 3, 0.3f, inten, 0, 0, NULL},
        {"sum(img*R) 12x9 B=3 sigma 0.15", 12, 9, 3, 0.15f, NULL, 0, 0, NULL},
        {"mse to target 12x9 B=3", 12, 9, 3, 0.3f, inten, 1, 0, NULL},
        {"mse to target 16x16 B=4 sigma 0.2", 16, 16, 4, 0.2f, NULL, 1, 0, NULL},
        {"sum(img*R) pos0 used twice", 12, 9, 3, 0.3f, inten, 0, 1, NULL},
        {"sum(img*R) 300x7 (two tiles)", 300, 7, 2, 0.25f, inten, 0, 0, NULL},
    };
    const float eps[] = {1e-2f, 3e-2f};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (size_t k = 0; k < sizeof eps / sizeof eps[0]; k++) run_grad_case(&cases[i], eps[k]);
}

/* ------------------------------------------------------------ the tape */

static void test_tape(void **state) {
    (void)state;
    dg_render_grid *g = dg_render_grid_create(10, 7, NULL);
    dg_ctx *ctx = dg_ctx_create(1 << 20);
    const float a[4] = {0.1f, 0.2f, -0.3f, 0.4f}, b[4] = {0.5f, -0.5f, 0.0f, 0.0f};

    /* constants only: a value, nothing taped */
    dg_tensor *ca = dg_from(ctx, 2, (int[]){2, 2}, a), *cb = dg_from(ctx, 2, (int[]){2, 2}, b);
    size_t before = dg_ctx_tape_len(ctx);
    dg_tensor *img = dg_render_points(ctx, g, (dg_tensor *[]){ca, cb}, 2, NULL, 0.2f);
    assert_non_null(img);
    assert_int_equal(img->requires_grad, 0);
    assert_int_equal(dg_ctx_tape_len(ctx), before);
    assert_non_null(dg_render_target(ctx, g, a, 2, 1, NULL, 0.2f));
    assert_int_equal(dg_ctx_tape_len(ctx), before);

    /* one position needs a gradient: one node, and only it gets a gradient */
    dg_tensor *va = dg_from(ctx, 2, (int[]){2, 2}, a);
    dg_set_requires_grad(va);
    img = dg_render_points(ctx, g, (dg_tensor *[]){cb, va}, 2, (float[]){1.0f, 2.0f}, 0.2f);
    assert_non_null(img);
    assert_int_equal(img->requires_grad, 1);
    assert_int_equal(dg_ctx_tape_len(ctx), before + 1);
    assert_int_equal(img->op, DG_OP_CUSTOM);
    assert_string_equal(img->name, "render_points");

    /* backward of sum(img) against the closed form:
     * d/dpx Σ_ij I·gx·gy = I Σ_ij gx gy (x_j - px)/σ² */
    dg_tensor *loss = dg_sum(ctx, img);
    assert_int_equal(dg_backward(ctx, loss), DG_OK);
    assert_null(cb->grad);
    assert_non_null(va->grad);
    for (int r = 0; r < 2; r++) {
        double gx = 0.0, gy = 0.0;
        const double s2 = 0.2 * 0.2;
        for (int i = 0; i < 7; i++)
            for (int j = 0; j < 10; j++) {
                const double x = -1.0 + (j + 0.5) * 0.2, y = 1.0 - (i + 0.5) * 2.0 / 7;
                const double dx = x - a[2 * r], dy = y - a[2 * r + 1];
                const double v = 2.0 * exp(-(dx * dx + dy * dy) / (2 * s2));
                gx += v * dx / s2;
                gy += v * dy / s2;
            }
        assert_float_equal(va->grad[2 * r], gx, 1e-4 * fmax(1.0, fabs(gx)));
        assert_float_equal(va->grad[2 * r + 1], gy, 1e-4 * fmax(1.0, fabs(gy)));
    }

    /* a point far outside the arena: its splat underflows, value and gradient are 0 */
    dg_ctx_reset(ctx);
    dg_tensor *far = dg_from(ctx, 2, (int[]){1, 2}, (float[]){50.0f, -50.0f});
    dg_set_requires_grad(far);
    img = dg_render_points(ctx, g, &far, 1, NULL, 0.1f);
    assert_non_null(img);
    for (int64_t i = 0; i < img->n; i++) assert_true(img->data[i] == 0.0f);
    assert_int_equal(dg_backward(ctx, dg_sum(ctx, img)), DG_OK);
    assert_true(far->grad[0] == 0.0f && far->grad[1] == 0.0f);

    dg_ctx_free(ctx);
    dg_render_grid_free(g);
}

/* ------------------------------------------------------------ errors */

/* each bad call: NULL, the context holds the error, nothing crashes */
static void expect_error(dg_ctx *ctx, dg_tensor *got, dg_status want, const char *needle) {
    assert_null(got);
    assert_int_equal(dg_ctx_status(ctx), want);
    if (!strstr(dg_ctx_error(ctx), needle))
        fail_msg("error '%s' does not mention '%s'", dg_ctx_error(ctx), needle);
    dg_ctx_reset(ctx);
}

static void test_errors(void **state) {
    (void)state;
    dg_render_grid *g = dg_render_grid_create(6, 5, NULL);
    dg_ctx *ctx = dg_ctx_create(1 << 18);
    const float xy[6] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f};
#define P2(B) dg_from(ctx, 2, (int[]){B, 2}, xy)
    dg_tensor *p;

    p = P2(2);
    expect_error(ctx, dg_render_points(ctx, g, &p, 1, NULL, 0.0f), DG_ERR_ARG, "sigma");
    p = P2(2);
    expect_error(ctx, dg_render_points(ctx, g, &p, 1, NULL, -0.5f), DG_ERR_ARG, "sigma");
    p = P2(2);
    expect_error(ctx, dg_render_points(ctx, g, &p, 1, NULL, NAN), DG_ERR_ARG, "sigma");
    p = P2(2);
    expect_error(ctx, dg_render_points(ctx, g, &p, 1, NULL, INFINITY), DG_ERR_ARG, "sigma");
    p = P2(2);
    expect_error(ctx, dg_render_points(ctx, g, &p, 0, NULL, 0.1f), DG_ERR_ARG, "count");
    p = P2(2);
    expect_error(ctx, dg_render_points(ctx, NULL, &p, 1, NULL, 0.1f), DG_ERR_ARG, "grid");
    expect_error(ctx, dg_render_points(ctx, g, NULL, 1, NULL, 0.1f), DG_ERR_ARG, "NULL");

    dg_tensor *two[2] = {P2(2), P2(3)};
    dg_set_requires_grad(two[0]);
    expect_error(ctx, dg_render_points(ctx, g, two, 2, NULL, 0.1f), DG_ERR_SHAPE, "batch 3");
    dg_tensor *wrong[2] = {P2(2), dg_from(ctx, 2, (int[]){2, 3}, xy)};
    expect_error(ctx, dg_render_points(ctx, g, wrong, 2, NULL, 0.1f), DG_ERR_SHAPE, "(B,2)");
    dg_tensor *flat = dg_from(ctx, 1, (int[]){2}, xy);
    expect_error(ctx, dg_render_points(ctx, g, &flat, 1, NULL, 0.1f), DG_ERR_SHAPE, "(B,2)");
    dg_tensor *with_null[2] = {P2(2), NULL};
    expect_error(ctx, dg_render_points(ctx, g, with_null, 2, NULL, 0.1f), DG_ERR_ARG, "pos[1]");

    expect_error(ctx, dg_render_target(ctx, g, xy, 1, 1, NULL, -1.0f), DG_ERR_ARG, "sigma");
    expect_error(ctx, dg_render_target(ctx, g, xy, 0, 1, NULL, 0.1f), DG_ERR_ARG, "batch");
    expect_error(ctx, dg_render_target(ctx, g, NULL, 1, 1, NULL, 0.1f), DG_ERR_ARG, "NULL");

    /* sticky: after an error every call returns NULL and the first message stays */
    p = P2(2);
    assert_null(dg_render_points(ctx, g, &p, 1, NULL, 0.0f));
    p = P2(2);
    assert_null(p);
    assert_null(dg_render_points(ctx, g, &p, 1, NULL, 0.1f));
    assert_non_null(strstr(dg_ctx_error(ctx), "sigma"));
    dg_ctx_reset(ctx);

    /* a full arena is an error too, not a crash */
    dg_ctx *tiny = dg_ctx_create(4096);
    dg_render_grid *big = dg_render_grid_create(64, 64, NULL);
    p = dg_from(tiny, 2, (int[]){1, 2}, xy);
    assert_null(dg_render_points(tiny, big, &p, 1, NULL, 0.1f));
    assert_int_equal(dg_ctx_status(tiny), DG_ERR_ARENA_FULL);
    dg_render_grid_free(big);
    dg_ctx_free(tiny);
#undef P2
    dg_ctx_free(ctx);
    dg_render_grid_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forward_values),
        cmocka_unit_test(test_orientation_and_grid),
        cmocka_unit_test(test_gradcheck),
        cmocka_unit_test(test_tape),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
