/* Finite-difference tests for the physics layer: the fused Euler step (free and
 * inside soft walls), soft
 * signed distances (circles, boxes, walls) and the smooth penalties. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "difgames/core.h"
#include "difgames/physics.h"

typedef dg_tensor *(*build_fn)(dg_ctx *ctx, dg_params *p);

/* loss = sum(f * R) with a fixed random R */
static dg_tensor *weighted(dg_ctx *ctx, dg_tensor *y) {
    if (!y) return NULL;
    dg_tensor *r = dg_new(ctx, y->ndim, y->shape);
    if (!r) return NULL;
    dg_rng rng;
    dg_rng_seed(&rng, 11);
    for (int64_t i = 0; i < r->n; i++) r->data[i] = dg_rng_uniform(&rng, -1, 1);
    return dg_sum(ctx, dg_mul(ctx, y, r));
}

static const float CIRCLES[] = {0.0f, 0.0f, 0.25f, 0.5f, -0.3f, 0.1f};
static const float BOXES[] = {0.3f, 0.2f, 0.2f, 0.1f, -0.5f, 0.5f, 0.1f, 0.3f};

static dg_tensor *f_step(dg_ctx *c, dg_params *p) {
    const float accel[2] = {5.0f, 3.5f};
    dg_tensor *s = dg_phys_step(c, dg_param(c, p, 0), dg_param(c, p, 1), 2, accel, 0.05f, 0.98f);
    return weighted(c, dg_phys_step(c, s, dg_param(c, p, 1), 2, accel, 0.05f, 0.98f));  /* two steps */
}
/* walls at ±0.8, so some of the random bodies (in [-1, 1]) press into them */
static dg_tensor *f_step_walls(dg_ctx *c, dg_params *p) {
    const float accel[2] = {5.0f, 3.5f};
    dg_tensor *s = dg_phys_step_walls(c, dg_param(c, p, 0), dg_param(c, p, 1), 2, accel, 0.05f, 0.98f, 0.8f, 0.8f);
    return weighted(c, dg_phys_step_walls(c, s, dg_param(c, p, 1), 2, accel, 0.05f, 0.98f, 0.8f, 0.8f));
}
static dg_tensor *f_circles(dg_ctx *c, dg_params *p) { return weighted(c, dg_sdf_circles(c, dg_param(c, p, 0), CIRCLES, 2)); }
static dg_tensor *f_boxes(dg_ctx *c, dg_params *p) { return weighted(c, dg_sdf_boxes(c, dg_param(c, p, 0), BOXES, 2)); }
static dg_tensor *f_walls(dg_ctx *c, dg_params *p) { return weighted(c, dg_sdf_walls(c, dg_param(c, p, 0), 1.0f)); }
static dg_tensor *f_margin(dg_ctx *c, dg_params *p) {
    return weighted(c, dg_penalty_margin(c, dg_sdf_circles(c, dg_param(c, p, 0), CIRCLES, 2), 0.3f));
}
static const float GOALS[] = {0.3f, -0.2f, 0.5f, 0.1f, -0.4f, 0.7f, 0.2f, 0.25f, -0.9f, 0.0f, 1.1f, -0.6f};
/* a goal term (against fixed points) plus an energy term (b NULL), both fused */
static dg_tensor *f_sqdiff(dg_ctx *c, dg_params *p) {
    dg_tensor *a = dg_param(c, p, 0), *g = dg_from(c, 2, (int[]){6, 2}, GOALS);
    return dg_add(c, dg_sum_sq_diff(c, a, g, 0.7f), dg_sum_sq_diff(c, dg_tanh(c, a), NULL, 0.3f));
}
static dg_tensor *f_outside(dg_ctx *c, dg_params *p) { return weighted(c, dg_penalty_outside(c, dg_param(c, p, 0), 0.5f)); }
static dg_tensor *f_push(dg_ctx *c, dg_params *p) { return weighted(c, dg_wall_push(c, dg_param(c, p, 0), 1.0f, 20.0f, 0.15f)); }

/* positions chosen away from kinks (|x| = half, box edges, the margin) */
static const float POS[] = {0.9f, -0.1f, 0.15f, 0.12f, -0.7f, 0.62f, 0.62f, 0.35f, 0.42f, -0.25f, -1.2f, 0.9f};

typedef struct phys_case {
    const char *name;
    build_fn    f;
    int         is_step;   /* inputs: state (3,8) + action (3,4); else positions (6,2) */
    float       eps;       /* finite-difference step: small where the function is stiff */
    double      floor;     /* of the relative error (see the walls case) */
} phys_case;

static dg_tensor *case_loss(dg_ctx *ctx, dg_params *p, void *user) {
    return ((const phys_case *)user)->f(ctx, p);
}

static const phys_case CASES[] = {
    {"phys_step (2 bodies, 2 steps)", f_step, 1, 5e-2f, 1e-2},
    /* the contact multiplies a penetration by stiff/dt = 16 into the velocity, so the float
     * rounding of the summed loss is ~5e-5 of a unit gradient: a floor of 5e-2. The step
     * 2e-2 halves that rounding against 1e-2 (worst 3.9e-4 at -O3, 4.8e-4 at -O1 against
     * 9.2e-4 and 1.1e-3) and still crosses no contact kink (3e-2 does: 3e-2) */
    {"phys_step_walls (2 bodies, 2 steps)", f_step_walls, 1, 2e-2f, 5e-2},
    {"sdf_circles", f_circles, 0, 2e-2f, 1e-2},
    {"sdf_boxes", f_boxes, 0, 2e-2f, 1e-2},
    {"sdf_walls", f_walls, 0, 2e-2f, 1e-2},
    {"penalty_margin", f_margin, 0, 2e-2f, 1e-2},
    {"sum_sq_diff (with and without b)", f_sqdiff, 0, 2e-2f, 1e-2},
    {"penalty_outside", f_outside, 0, 2e-2f, 1e-2},
    {"wall_push (k = 20)", f_push, 0, 1e-2f, 1e-2},
};

static void test_physics_gradcheck(void **state) {
    (void)state;
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        const phys_case *c = &CASES[k];
        dg_params *p = dg_params_create();
        if (c->is_step) {
            dg_params_add(p, "state", 2, (int[]){3, 8}, NULL);
            dg_params_add(p, "action", 2, (int[]){3, 4}, NULL);
            dg_rng rng;
            dg_rng_seed(&rng, 2);
            for (size_t i = 0; i < p->total; i++) p->data[i] = dg_rng_uniform(&rng, -1, 1);
        } else {
            dg_params_add(p, "pos", 2, (int[]){6, 2}, NULL);
            memcpy(p->data, POS, sizeof POS);
        }
        dg_ctx *ctx = dg_ctx_create(1 << 20);
        dg_gradcheck_report r;
        dg_err e = {0};
        assert_int_equal(dg_gradcheck(ctx, p, case_loss, (void *)c, c->eps, c->floor, 0, &r, &e), DG_OK);
        printf("  %-30s max rel err %.2e over %lld\n", c->name, r.max_rel_err, (long long)r.checked);
        if (r.max_rel_err > 1e-3)
            fail_msg("%s: rel err %.3e at [%lld]: %g vs %g", c->name, r.max_rel_err,
                     (long long)r.worst_index, r.worst_analytic, r.worst_numeric);
        dg_ctx_free(ctx);
        dg_params_free(p);
    }
}

/* the two losses of test_sum_sq_diff_bits, fused or as the chains the fused ops replace */
static dg_tensor *sq_loss(dg_ctx *c, dg_tensor *a, int fused) {
    dg_tensor *g = dg_from(c, 2, (int[]){6, 2}, GOALS), *t = dg_tanh(c, a);
    return fused ? dg_add(c, dg_sum_sq_diff(c, a, g, 1.0f / 6), dg_sum_sq_diff(c, t, NULL, 1.0f / 6))
                 : dg_add(c, dg_scale(c, dg_sum(c, dg_square(c, dg_sub(c, a, g))), 1.0f / 6),
                          dg_scale(c, dg_sum(c, dg_square(c, t)), 1.0f / 6));
}

static dg_tensor *margin_loss(dg_ctx *c, dg_tensor *a, int fused) {
    dg_tensor *d = dg_sdf_circles(c, a, CIRCLES, 2);
    return weighted(c, fused ? dg_penalty_margin(c, d, 0.3f)
                             : dg_sum_axis(c, dg_square(c, dg_relu(c, dg_add_scalar(c, dg_neg(c, d), 0.3f))), -1));
}

/* loss(POS) and its gradient (12 values) */
static float loss_grad(dg_tensor *(*loss)(dg_ctx *, dg_tensor *, int), int fused, float grad[12]) {
    dg_params *p = dg_params_create();
    dg_params_add(p, "pos", 2, (int[]){6, 2}, NULL);
    memcpy(p->data, POS, sizeof POS);
    dg_ctx *c = dg_ctx_create(1 << 16);
    dg_tensor *l = loss(c, dg_param(c, p, 0), fused);
    dg_params_zero_grad(p);
    assert_int_equal(dg_backward(c, l), DG_OK);
    const float val = l->data[0];
    memcpy(grad, p->grad, 12 * sizeof grad[0]);
    dg_ctx_free(c);
    dg_params_free(p);
    return val;
}

/* the fused sum of squares and margin penalty give the bits of the chains they replace: value
 * and gradients */
static void test_sum_sq_diff_bits(void **state) {
    (void)state;
    float val[2], grad[2][12];
    for (int fused = 0; fused < 2; fused++) val[fused] = loss_grad(sq_loss, fused, grad[fused]);
    assert_memory_equal(&val[0], &val[1], sizeof val[0]);
    assert_memory_equal(grad[0], grad[1], sizeof grad[0]);
    /* the fused penalty_margin against its old chain, some distances inside the margin */
    for (int fused = 0; fused < 2; fused++) val[fused] = loss_grad(margin_loss, fused, grad[fused]);
    assert_true(val[0] != 0.0f);
    assert_memory_equal(&val[0], &val[1], sizeof val[0]);
    assert_memory_equal(grad[0], grad[1], sizeof grad[0]);
    dg_ctx *c = dg_ctx_create(1 << 16);
    dg_tensor *x = dg_from(c, 2, (int[]){6, 2}, GOALS), *y = dg_from(c, 2, (int[]){2, 6}, GOALS);
    assert_null(dg_sum_sq_diff(c, x, y, 1.0f));  /* shapes differ: a context error */
    assert_int_equal(dg_ctx_status(c), DG_ERR_SHAPE);
    dg_ctx_free(c);
}

/* values against the formulas, by hand */
static void test_physics_values(void **state) {
    (void)state;
    dg_ctx *ctx = dg_ctx_create(1 << 16);
    dg_tensor *s = dg_from(ctx, 2, (int[]){1, 4}, (float[]){0.1f, 0.2f, 1.0f, -1.0f});
    dg_tensor *a = dg_from(ctx, 2, (int[]){1, 2}, (float[]){0.5f, 1.0f});
    const float accel = 5.0f;
    dg_tensor *n = dg_phys_step(ctx, s, a, 1, &accel, 0.05f, 0.98f);
    const float vx = (1.0f + 5.0f * 0.5f * 0.05f) * 0.98f, vy = (-1.0f + 5.0f * 1.0f * 0.05f) * 0.98f;
    assert_float_equal(n->data[2], vx, 1e-6);
    assert_float_equal(n->data[3], vy, 1e-6);
    assert_float_equal(n->data[0], 0.1f + vx * 0.05f, 1e-6);
    assert_float_equal(n->data[1], 0.2f + vy * 0.05f, 1e-6);
    dg_tensor *p = dg_from(ctx, 2, (int[]){3, 2}, (float[]){0.5f, 0.2f, 0.3f, 0.25f, 0.0f, 0.0f});
    dg_tensor *d = dg_sdf_boxes(ctx, p, BOXES, 1);  /* box centre (0.3,0.2), half (0.2,0.1) */
    assert_float_equal(d->data[0], 0.0f, 1e-6);     /* on the right edge */
    assert_float_equal(d->data[1], -0.05f, 1e-6);   /* inside, 0.05 below the top edge */
    assert_float_equal(d->data[2], sqrtf(0.1f * 0.1f + 0.1f * 0.1f), 1e-5);  /* off the corner */
    dg_tensor *c = dg_sdf_circles(ctx, p, CIRCLES, 1);
    assert_float_equal(c->data[2], -0.25f, 1e-4);
    assert_int_equal(dg_ctx_status(ctx), DG_OK);
    /* soft walls: stiffness 0 is the plain step bit for bit; 1 stops a body on the wall;
     * 0.5 removes half the penetration (both axes, one wall each) */
    dg_tensor *fast = dg_from(ctx, 2, (int[]){1, 4}, (float[]){0.95f, -0.95f, 4.0f, -3.0f});
    dg_tensor *free_ = dg_phys_step(ctx, fast, a, 1, &accel, 0.05f, 0.98f);
    dg_tensor *w0 = dg_phys_step_walls(ctx, fast, a, 1, &accel, 0.05f, 0.98f, 1.0f, 0.0f);
    dg_tensor *w1 = dg_phys_step_walls(ctx, fast, a, 1, &accel, 0.05f, 0.98f, 1.0f, 1.0f);
    dg_tensor *wh = dg_phys_step_walls(ctx, fast, a, 1, &accel, 0.05f, 0.98f, 1.0f, 0.5f);
    assert_memory_equal(w0->data, free_->data, 4 * sizeof(float));
    const float qx = free_->data[0] - 1.0f, qy = free_->data[1] + 1.0f;  /* penetrations */
    assert_true(qx > 0.1f && qy < -0.05f);
    assert_float_equal(w1->data[0], 1.0f, 1e-6);
    assert_float_equal(w1->data[1], -1.0f, 1e-6);
    assert_float_equal(wh->data[0], 1.0f + 0.5f * qx, 1e-6);
    assert_float_equal(wh->data[1], -1.0f + 0.5f * qy, 1e-6);
    assert_float_equal(wh->data[2], free_->data[2] - 0.5f * qx / 0.05f, 1e-4);
    assert_float_equal(wh->data[3], free_->data[3] - 0.5f * qy / 0.05f, 1e-4);
    assert_int_equal(dg_ctx_status(ctx), DG_OK);
    assert_null(dg_phys_step_walls(ctx, fast, a, 1, &accel, 0.05f, 0.98f, 1.0f, 1.5f));
    assert_int_equal(dg_ctx_status(ctx), DG_ERR_ARG);
    dg_ctx_free(ctx);
    ctx = dg_ctx_create(1 << 16);
    s = dg_from(ctx, 2, (int[]){1, 4}, (float[]){0.1f, 0.2f, 1.0f, -1.0f});
    /* bad shapes are a context error, not a crash */
    assert_null(dg_phys_step(ctx, s, s, 1, &accel, 0.05f, 0.98f));
    assert_int_equal(dg_ctx_status(ctx), DG_ERR_SHAPE);
    dg_ctx_free(ctx);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_physics_gradcheck),
        cmocka_unit_test(test_physics_values),
        cmocka_unit_test(test_sum_sq_diff_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
