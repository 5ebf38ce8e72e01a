/* billiards and open-loop plans: the gradient of the target ball's final
 * position with respect to the shot's angle, by backward and by central finite
 * differences, for the three contact models (the table of
 * docs/games/billiards.md); open-loop plans through gradcheck and training. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "difgames/difgames.h"
#include "util/tier.h"

static dg_env *env_of(const char *yaml, dg_cfg **cfg) {
    dg_err e = {0};
    *cfg = dg_cfg_parse(yaml, strlen(yaml), "test.yaml", &e);
    if (!*cfg) fail_msg("config: %s", e.msg);
    dg_env *env = dg_env_create(*cfg, &e);
    if (!env) fail_msg("env: %s", e.msg);
    return env;
}

/* The target ball's final position (x, y) after a shot with action (a0, a1) from the reset
 * table; grad (if not NULL) gets d x_H / d a0 and d y_H / d a0 by backward. */
static void final_pos(const dg_env *env, float a0, float a1, float *xy, float *grad) {
    const int S = env->state_dim, H = env->horizon;
    float *s0 = calloc((size_t)S, sizeof(float));
    dg_rng rng;
    dg_rng_seed(&rng, 0);
    assert_int_equal(env->game->reset(env, &rng, 1, s0, NULL, NULL), DG_OK);
    dg_ctx *ctx = dg_ctx_create(64 << 20);
    for (int k = 0; k < (grad ? 2 : 1); k++) {
        dg_ctx_reset(ctx);
        dg_tensor *a = dg_from(ctx, 2, (int[]){1, 2}, (float[]){a0, a1});
        dg_set_requires_grad(a);
        dg_tensor *st = dg_from(ctx, 2, (int[]){1, S}, s0), *zero = dg_zeros(ctx, 2, (int[]){1, 2});
        for (int t = 1; t <= H; t++) st = env->game->step(ctx, env, st, NULL, t == 1 ? a : zero);
        assert_non_null(st);
        dg_tensor *p = dg_cols(ctx, st, 4, 2);  /* ball 1, the target ball */
        xy[0] = p->data[0];
        xy[1] = p->data[1];
        if (grad) {
            assert_int_equal(dg_backward(ctx, dg_cols(ctx, p, k, 1)), DG_OK);
            grad[k] = a->grad ? a->grad[0] : 0.0f;
        }
    }
    dg_ctx_free(ctx);
    free(s0);
}

/* d p_H / d theta, theta = atan(a0 · aim_range) the shot's angle off the line to the target ball,
 * on a table of two balls (one contact, no cushion): backward against central differences with
 * h = 1e-4 rad (the discrete model's own local slope) and h = 0.02 rad (its trend over angles whose
 * impacts fall in different steps). Every model's backward is its local slope; soft's and toi's
 * are also the trend, the uncorrected hard contact's is not: it makes p_H a saw-tooth in theta
 * (the impact is moved to a step's end). */
static void test_angle_gradient(void **state) {
    (void)state;
    const struct { const char *name, *env; } models[] = {
        {"soft, k 2e4", "contact: soft, substeps: 8, stiffness: 20000"},
        {"soft, k 2e3", "contact: soft, substeps: 8, stiffness: 2000"},
        {"hard", "contact: hard"},
        {"toi", "contact: toi"},
    };
    enum { NM = 4, NA = 5 };
    const double angles[NA] = {0.05, 0.1, 0.15, 0.2, 0.25};
    double local[NM] = {0}, trend[NM] = {0};
    printf("  model        theta  backward (dx, dy)   h=1e-4 (dx, dy)     rel err   h=0.02 (dx, dy)     rel err\n");
    for (int m = 0; m < NM; m++) {
        char yaml[256];
        snprintf(yaml, sizeof yaml, "game: billiards\nenv: {%s, balls: [[-0.35, 0], [0, 0]]}\n", models[m].env);
        dg_cfg *cfg;
        dg_env *env = env_of(yaml, &cfg);
        for (int i = 0; i < NA; i++) {
            const double th = angles[i], h = 1e-4, w = 0.02;
            /* aim_range 1: a0 = tan(theta), d a0 / d theta = 1 + tan²; strength -0.5: speed 1 */
            float xy[2], g[2], xp[2], xm[2], wp[2], wm[2];
            final_pos(env, (float)tan(th), -0.5f, xy, g);
            final_pos(env, (float)tan(th + h), -0.5f, xp, NULL);
            final_pos(env, (float)tan(th - h), -0.5f, xm, NULL);
            final_pos(env, (float)tan(th + w), -0.5f, wp, NULL);
            final_pos(env, (float)tan(th - w), -0.5f, wm, NULL);
            const double j = 1 + tan(th) * tan(th);
            const double bx = g[0] * j, by = g[1] * j, fx = (xp[0] - xm[0]) / (2 * h), fy = (xp[1] - xm[1]) / (2 * h);
            const double gx = (wp[0] - wm[0]) / (2 * w), gy = (wp[1] - wm[1]) / (2 * w);
            const double err = hypot(bx - fx, by - fy) / fmax(hypot(fx, fy), 1e-6);
            const double werr = hypot(bx - gx, by - gy) / fmax(hypot(gx, gy), 1e-6);
            printf("  %-11s  %.2f  %8.4f %8.4f   %8.4f %8.4f  %.1e   %8.4f %8.4f  %.1e\n", models[m].name, th, bx, by,
                   fx, fy, err, gx, gy, werr);
            if (err > local[m]) local[m] = err;
            if (werr > trend[m]) trend[m] = werr;
        }
        dg_env_free(env);
        dg_cfg_free(cfg);
    }
    for (int m = 0; m < NM; m++) assert_true(local[m] < 2e-2);  /* backward is each model's exact slope */
    assert_true(trend[0] < 0.05 && trend[1] < 0.05);  /* soft: also the slope over angles */
    assert_true(trend[3] < 0.05);                     /* toi: too */
    assert_true(trend[2] > 0.3);                      /* hard: not */
}

/* the shot's gradient over 40 steps of the default table (the cue ball, the target ball and a
 * cushion) agrees with finite differences (dg_env_gradcheck of the plan, eps 0.003: wider steps cross the kinks where a contact starts) for toi and for
 * a soft contact soft enough to be smooth at that scale (stiffness 2000, 8 substeps) */
static void test_plan_gradcheck(void **state) {
    (void)state;
    const char *models[] = {"soft", "toi"};
    for (int m = 0; m < 2; m++) {
        char yaml[256];
        snprintf(yaml, sizeof yaml, "game: billiards\nenv: {contact: %s, substeps: %d, stiffness: 2000}\n"
                 "loss: {track: 1.0}\n", models[m], m == 0 ? 8 : 1);
        dg_cfg *cfg;
        dg_env *env = env_of(yaml, &cfg);
        dg_env_gradcheck_opts o = dg_env_gradcheck_opts_default();
        o.batch = 1;
        o.horizon = 40;
        o.eps = 0.003f;
        o.open_loop = 1;
        dg_env_gradcheck_result r;
        dg_err e = {0};
        assert_int_equal(dg_env_gradcheck(env, &o, &r, &e), DG_OK);
        printf("  %-4s plan over 40 steps: worst rel err %.2e over %lld (%s)\n", models[m], r.episode.max_rel_err,
               (long long)r.episode.checked, r.episode_worst);
        assert_int_equal(r.episode.checked, 2);  /* the shot: aim and strength */
        assert_true(r.episode.max_rel_err < 1e-3);
        assert_int_equal(r.nzero, 0);
        dg_env_free(env);
        dg_cfg_free(cfg);
    }
}

/* train.mode: open_loop on reach: the plan is one action row a step, its gradient checks, and
 * Adam on it brings the point mass to its goal (a fixed batch of one) */
static void test_open_loop_reach(void **state) {
    (void)state;
    dg_cfg *cfg;
    dg_env *env = env_of("game: reach\nenv: {horizon: 30, obstacles: []}\n"
                         "train: {mode: open_loop, batch: 1, epochs: 150, lr: 0.05, snapshots: []}\n", &cfg);
    dg_train_opts o;
    dg_err e = {0};
    assert_int_equal(dg_train_opts_read(cfg, &o, &e), DG_OK);
    assert_int_equal(o.open_loop, 1);
    assert_int_equal(o.fixed_batch, 1);
    dg_env_gradcheck_opts go = dg_env_gradcheck_opts_default();
    go.batch = 1;
    go.open_loop = 1;
    go.max_per_param = 0;
    dg_env_gradcheck_result r;
    assert_int_equal(dg_env_gradcheck(env, &go, &r, &e), DG_OK);
    assert_int_equal(r.episode.checked, 10 * 2);  /* 10 steps of 2 actions */
    assert_true(r.episode.max_rel_err < 1e-3);
    dg_trainer *t = dg_trainer_create(env, &o, NULL, NULL, &e);
    assert_non_null(t);
    assert_int_equal(dg_trainer_policy(t)->plan_steps, 30);
    assert_int_equal(dg_params_find(dg_trainer_params(t), "plan"), 0);
    assert_int_equal(dg_trainer_run(t, NULL, NULL, NULL, &e), DG_OK);
    const dg_epoch_stats *s = dg_trainer_last(t);
    printf("  reach open loop: final_dist %.4f after %d epochs\n", s->metrics[1], s->epoch);
    assert_true(s->metrics[1] < 0.05);
    dg_trainer_free(t);
    dg_env_free(env);
    dg_cfg_free(cfg);
}

/* an arena that fills up mid-step (the trainer then grows it and runs again) gives an error, not a
 * crash, for every contact model and for racing */
static void test_full_arena(void **state) {
    (void)state;
    const char *yamls[] = {"game: billiards\nenv: {contact: toi}\n", "game: billiards\nenv: {contact: hard}\n",
                           "game: billiards\nenv: {contact: soft, substeps: 4}\n", "game: racing\n"};
    for (int y = 0; y < 4; y++) {
        dg_cfg *cfg;
        dg_env *env = env_of(yamls[y], &cfg);
        dg_policy m;
        dg_params *p;
        dg_err e = {0};
        assert_int_equal(dg_policy_create_plan(env, &m, &p, &e), DG_OK);
        float s0[64] = {0}, aux[1] = {0};
        dg_rng rng;
        dg_rng_seed(&rng, 1);
        assert_int_equal(env->game->reset(env, &rng, 1, s0, aux, &e), DG_OK);
        for (size_t cap = 4096; cap < ((size_t)1 << 22); cap *= 4) {
            dg_ctx *ctx = dg_ctx_create(cap);
            dg_tensor *l = dg_rollout(ctx, env, &m, p, s0, aux, 1, 1.0f, NULL, NULL, 0);
            assert_true(l ? dg_ctx_status(ctx) == DG_OK : dg_ctx_status(ctx) != DG_OK);
            dg_ctx_free(ctx);
        }
        dg_params_free(p);
        dg_env_free(env);
        dg_cfg_free(cfg);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_gradcheck),
        cmocka_unit_test(test_open_loop_reach),
        cmocka_unit_test(test_full_arena),
    };
    /* the long anchors: the slow tier (tests/util/tier.h) */
    const struct CMUnitTest slow[] = {
        cmocka_unit_test(test_angle_gradient),
    };
    return dg_test_run_tiers(tests, slow, NULL, NULL);
}
