/* pong: the soft paddle contact returns the ball (elastic, aimed by the offset), a ball the
 * paddle does not reach goes past; the gradient of the game's cost through a hit and of an episode
 * against finite differences; the rally metrics; each player's exploitability (dg_run_exploit). */
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

enum { BX, BY, VX, VY, UL, UR, NS };

static dg_env *env_of(const char *yaml, dg_cfg **cfg) {
    dg_err e = {0};
    *cfg = dg_cfg_parse(yaml, strlen(yaml), "test.yaml", &e);
    if (!*cfg) fail_msg("config: %s", e.msg);
    dg_env *env = dg_env_create(*cfg, &e);
    if (!env) fail_msg("env: %s", e.msg);
    return env;
}

/* steps steps of one row from s with both paddles still; s gets the last state */
static void play(const dg_env *env, float *s, int steps) {
    dg_ctx *ctx = dg_ctx_create(16 << 20);
    for (int t = 0; t < steps; t++) {
        dg_ctx_reset(ctx);
        dg_tensor *st = dg_from(ctx, 2, (int[]){1, NS}, s);
        dg_tensor *n = env->game->step(ctx, env, st, NULL, dg_zeros(ctx, 2, (int[]){1, 2}));
        assert_non_null(n);
        memcpy(s, n->data, NS * sizeof(float));
    }
    dg_ctx_free(ctx);
}

/* A ball sent at the left paddle's centre comes back at the same speed (the spring is elastic, up
 * to the integrator); sent above the centre it leaves upwards (the aim); sent where the paddle is
 * not, it passes the goal line. The right paddle, mirrored, the same. */
static void test_contact(void **state) {
    (void)state;
    dg_cfg *cfg;
    dg_env *env = env_of("game: pong\n", &cfg);
    for (int side = -1; side <= 1; side += 2) {
        const int u = side < 0 ? UL : UR;
        float s[NS] = {0.5f * side, 0.0f, 1.2f * side, 0.0f, 0.0f, 0.0f};
        play(env, s, 50);  /* 1 s: in at 0.36 s, out and back past the centre */
        assert_true(s[VX] * side < 0);
        assert_true(fabsf(fabsf(s[VX]) - 1.2f) < 0.03f);
        assert_true(fabsf(s[VY]) < 1e-4f);
        float a[NS] = {0.5f * side, 0.0f, 1.2f * side, 0.0f, 0.0f, 0.0f};
        a[u] = atanhf(-0.08f / 0.6f);  /* the paddle 0.08 below the ball: hit above its centre */
        play(env, a, 50);
        assert_true(a[VX] * side < 0);
        assert_true(a[VY] > 0.3f);
        float m[NS] = {0.5f * side, 0.0f, 1.2f * side, 0.0f, 0.0f, 0.0f};
        m[u] = atanhf(0.4f / 0.6f);  /* 0.4 away: the ball goes past */
        play(env, m, 50);
        assert_true(m[VX] * side > 1.19f);
        assert_true(m[BX] * side > 1.0f);
    }
    /* the walls: a ball thrown up comes down at the same speed */
    float w[NS] = {0.0f, 0.3f, 0.0f, 1.0f, 0.0f, 0.0f};
    play(env, w, 40);
    assert_true(w[VY] < -0.97f && w[VY] > -1.03f);
    dg_env_free(env);
    dg_cfg_free(cfg);
}

/* ------------------------------------------------ finite differences through a hit */

typedef struct hit_job {
    const dg_env *env;
    int steps;
} hit_job;

/* Σ_t Σ_i term_i(t) (unit weights) of steps steps from the state "s0" (1, 6) under the actions
 * "acts" (steps, 2): the game's cost through the ball's hit on the left paddle */
static dg_tensor *hit_cost(dg_ctx *ctx, dg_params *p, void *user) {
    const hit_job *j = user;
    dg_tensor *st = dg_param(ctx, p, 0), *acts = dg_param(ctx, p, 1), *total = NULL;
    for (int t = 0; t < j->steps; t++) {
        dg_tensor *a = dg_rows(ctx, acts, t, 1);
        st = j->env->game->step(ctx, j->env, st, NULL, a);
        if (!st) return NULL;
        dg_tensor *terms[DG_LOSS_MAX_TERMS];
        j->env->game->step_cost(ctx, j->env, st, NULL, a, 1.0f, terms);
        for (int i = 0; i < j->env->nterms; i++) total = total ? dg_add(ctx, total, terms[i]) : terms[i];
    }
    return total;
}

/* The gradient of the game's cost over 20 steps through a hit, with respect to the state before
 * it (the ball's position and velocity, both paddles) and every action, against central finite
 * differences; then an episode of two policies through the first hit (dg_env_gradcheck). */
static void test_gradcheck(void **state) {
    (void)state;
    dg_cfg *cfg;
    dg_env *env;
    dg_err e = {0};
    /* the default softness 0.01 and a softer contact, at step 3e-3 (measured 3.2e-3 and 3.9e-3: float32
       rounding through the stiff spring; a hit the ball meets at its paddle's end is rougher) */
    const struct { const char *yaml; double tol; } cases[] = {
        {"game: pong\nenv: {paddle_half: 0.1}\n", 1e-2},
        {"game: pong\nenv: {paddle_half: 0.1, softness: 0.02}\n", 1e-2},
    };
    for (int c = 0; c < 2; c++) {
        env = env_of(cases[c].yaml, &cfg);
        dg_params *p = dg_params_create();
        const int steps = 20;
        assert_true(dg_params_add(p, "s0", 2, (int[]){1, NS}, &e) >= 0);
        assert_true(dg_params_add(p, "acts", 2, (int[]){steps, 2}, &e) >= 0);
        /* the ball 0.15 from the left face, its hit about 0.04 above the paddle's centre, a reach shortfall
           building at the right paddle as it comes back */
        const float s0[NS] = {-0.72f, 0.0f, -1.1f, 0.3f, atanhf(0.0f), atanhf(-0.3f / 0.6f)};
        memcpy(dg_params_data(p, 0), s0, sizeof s0);
        float *acts = dg_params_data(p, 1);
        for (int i = 0; i < steps * 2; i++) acts[i] = 0.3f * sinf(0.7f * (float)i);
        hit_job j = {env, steps};
        dg_ctx *ctx = dg_ctx_create(64 << 20);
        dg_ctx_reset(ctx);
        dg_tensor *last = hit_cost(ctx, p, &j);
        assert_non_null(last);
        dg_gradcheck_report r;
        assert_int_equal(dg_gradcheck(ctx, p, hit_cost, &j, 3e-3f, 1e-3, 0, &r, &e), DG_OK);
        printf("  %s  cost over %d steps through a hit: worst rel err %.2e over %lld (param %d [%lld]: backward "
               "%.6g, numeric %.6g)\n", c ? "softness 0.02" : "softness 0.01", steps, r.max_rel_err,
               (long long)r.checked, r.worst_param, (long long)r.worst_index, r.worst_analytic, r.worst_numeric);
        assert_int_equal(r.checked, NS + 2 * steps);
        assert_true(r.max_rel_err < cases[c].tol);
        /* the hit happened: the ball ends moving right */
        float s[NS];
        memcpy(s, s0, sizeof s);
        play(env, s, steps);
        assert_true(s[VX] > 1.0f);
        dg_ctx_free(ctx);
        dg_params_free(p);
        dg_env_free(env);
        dg_cfg_free(cfg);
    }

    /* an episode of both players' MLPs through the first hit (the serve is fast, so 30 steps reach it) */
    env = env_of("game: pong\nenv: {serve_speed: 2.4, serve_angle: 0.2}\n", &cfg);
    dg_env_gradcheck_opts o = dg_env_gradcheck_opts_default();
    o.batch = 4;
    o.horizon = 30;
    o.eps = 0.01f;
    o.hidden[0] = o.hidden[1] = 16;
    o.nhidden = 2;
    dg_env_gradcheck_result g;
    dg_err e2 = {0};
    assert_int_equal(dg_env_gradcheck(env, &o, &g, &e2), DG_OK);
    printf("  step: worst rel err %.2e (%s); episode of %d steps: %.2e over %lld (%s)\n", g.step.max_rel_err,
           g.step_worst, g.horizon, g.episode.max_rel_err, (long long)g.episode.checked, g.episode_worst);
    assert_true(g.step.max_rel_err < 1e-3);
    assert_true(g.episode.max_rel_err < 1e-2);
    assert_int_equal(g.nzero, 0);
    dg_env_free(env);
    dg_cfg_free(cfg);
}

/* ------------------------------------------------ metrics */

/* hits count the returns before the ball leaves; rally_time the seconds until it does */
static void test_metrics(void **state) {
    (void)state;
    dg_cfg *cfg;
    dg_env *env = env_of("game: pong\nenv: {horizon: 6}\n", &cfg);
    const int H = 6, B = 2;
    float traj[(6 + 1) * 2 * NS] = {0};
    /* row 0: returned by the left paddle at step 2, by the right at step 4, past the left line at 6;
       row 1: returned by nobody, past the right goal line at step 3 */
    const float x0[7] = {-0.5f, -0.85f, -0.8f, 0.5f, 0.85f, -0.5f, -1.1f}, v0[7] = {-1, -1, 1, 1, -1, -1, -1};
    const float x1[7] = {0.5f, 0.7f, 0.9f, 1.05f, 1.2f, 1.3f, 1.4f};
    for (int t = 0; t <= H; t++) {
        traj[(t * B + 0) * NS + BX] = x0[t];
        traj[(t * B + 0) * NS + VX] = v0[t];
        traj[(t * B + 1) * NS + BX] = x1[t];
        traj[(t * B + 1) * NS + VX] = 1;
    }
    double m[DG_MAX_METRICS];
    env->game->metrics(env, traj, NULL, B, H, m);
    assert_string_equal(env->metric_names[0], "hits");
    assert_true(fabs(m[0] - 1.0) < 1e-12);                            /* (2 + 0) / 2 */
    assert_true(fabs(m[1] - 0.5 * (6 + 3) * env->dt) < 1e-9);         /* rally_time */
    assert_true(fabs(m[2] - 0.5) < 1e-12 && fabs(m[3] - 0.5) < 1e-12); /* miss_left, miss_right */
    dg_env_free(env);
    dg_cfg_free(cfg);
}

/* ------------------------------------------------ exploitability */

/* An untrained pair is exploitable on both sides: a best response trained against either frozen
 * player wins from it; p is left as it was; the same seed gives the same numbers; a one-player game
 * is refused. */
static void test_exploit(void **state) {
    (void)state;
    dg_cfg *cfg;
    dg_env *env = env_of("game: pong\nenv: {horizon: 80}\n", &cfg);
    dg_train_opts o;
    dg_train_opts_default(&o);
    o.batch = 16;
    o.lr = 3e-3;
    o.hidden[0] = o.hidden[1] = 16;
    o.nhidden = 2;
    dg_policy m;
    dg_params *p;
    dg_err e = {0};
    assert_int_equal(dg_policy_create(env, o.hidden, o.nhidden, &m, &p, &e), DG_OK);
    dg_rng rng;
    dg_rng_seed(&rng, 3);
    dg_policy_reset_params(&m, p, &rng);
    float *w0 = malloc(p->total * sizeof(float)), *st, *aux;
    memcpy(w0, p->data, p->total * sizeof(float));
    assert_int_equal(dg_run_init_draw(env, 1000, 32, &st, &aux, &e), DG_OK);
    dg_exploit_result r, r2;
    assert_int_equal(dg_run_exploit(env, &m, p, &o, 40, st, aux, 32, &r, &e), DG_OK);
    printf("  untrained pair: J %.4f, against a best evader %.4f, a best pursuer %.4f: exploitability %.4f, %.4f\n",
           r.j, r.j_best[0], r.j_best[1], r.exploit[0], r.exploit[1]);
    assert_true(r.exploit[0] > 0.01 && r.exploit[1] > 0.01);
    assert_true(fabs(r.exploit[0] - (r.j_best[0] - r.j)) < 1e-12 && fabs(r.exploit[1] - (r.j - r.j_best[1])) < 1e-12);
    assert_memory_equal(p->data, w0, p->total * sizeof(float));
    assert_int_equal(dg_run_exploit(env, &m, p, &o, 40, st, aux, 32, &r2, &e), DG_OK);
    assert_memory_equal(&r, &r2, sizeof r);
    /* no budget: nothing to gain */
    assert_int_equal(dg_run_exploit(env, &m, p, &o, 0, st, aux, 32, &r2, &e), DG_OK);
    assert_true(r2.exploit[0] == 0 && r2.exploit[1] == 0);
    assert_true(dg_run_exploit_memory(env, &o, p, 32) > 0);
    free(st);
    free(aux);
    free(w0);
    dg_params_free(p);
    dg_env_free(env);
    dg_cfg_free(cfg);

    env = env_of("game: reach\n", &cfg);
    assert_int_equal(dg_policy_create(env, o.hidden, o.nhidden, &m, &p, &e), DG_OK);
    assert_int_equal(dg_run_init_draw(env, 1, 4, &st, &aux, &e), DG_OK);
    assert_int_equal(dg_run_exploit(env, &m, p, &o, 5, st, aux, 4, &r, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "one player"));
    free(st);
    free(aux);
    dg_params_free(p);
    dg_env_free(env);
    dg_cfg_free(cfg);
}

/* A config error names its key */
static void test_bad_config(void **state) {
    (void)state;
    const char *bad[][2] = {
        {"game: pong\nenv: {paddle_x: 0.97}\n", "env.paddle_x"},
        {"game: pong\nenv: {court: [1.0, 0.1]}\n", "env.court"},
        {"game: pong\nenv: {serve_y: 0.59}\n", "env.serve_y"},
        {"game: pong\nenv: {paddle_start: 0.55}\n", "env.paddle_start"},
        {"game: pong\nenv: {stiffness: 200000}\n", "env.stiffness"},
        {"game: pong\nenv: {softness: 0}\n", "env.softness"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dg_err e = {0};
        dg_cfg *cfg = dg_cfg_parse(bad[i][0], strlen(bad[i][0]), "bad.yaml", &e);
        assert_non_null(cfg);
        assert_null(dg_env_create(cfg, &e));
        if (!strstr(e.msg, bad[i][1])) fail_msg("%s: %s", bad[i][1], e.msg);
        dg_cfg_free(cfg);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contact),
        cmocka_unit_test(test_gradcheck),
        cmocka_unit_test(test_metrics),
        cmocka_unit_test(test_exploit),
        cmocka_unit_test(test_bad_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
