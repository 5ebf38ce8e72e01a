/* Games without the optional hooks (bodies, metrics, observe2, complete_aux):
 * training, an episode with its trajectory, checkpointed BPTT and the
 * policy-gradient evaluation all run and never call a NULL hook; a game whose
 * declarations need a hook it lacks is refused when its env is made, with the
 * hook named; dg_env_advance's step, costs and terminal cost. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "difgames/difgames.h"

/* a point on a line that should sit at 0: state [x, v], action [a] */
static dg_status bare_create(dg_env *env, dg_cfg *cfg, dg_err *e) {
    (void)cfg;
    (void)e;
    env->state_dim = 2;
    env->obs_dim = 2;
    env->act_dim = 1;
    return DG_OK;
}

static dg_status bare_reset(const dg_env *env, dg_rng *rng, int B, float *state, float *aux, dg_err *e) {
    (void)env;
    (void)aux;
    (void)e;
    for (int b = 0; b < B; b++) {
        state[2 * b] = dg_rng_uniform(rng, -1.0f, 1.0f);
        state[2 * b + 1] = 0.0f;
    }
    return DG_OK;
}

static dg_tensor *bare_observe(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux) {
    (void)ctx;
    (void)env;
    (void)aux;
    return state;
}

static dg_tensor *bare_step(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux, dg_tensor *action) {
    (void)aux;
    dg_tensor *x = dg_cols(ctx, state, 0, 1), *v = dg_cols(ctx, state, 1, 1);
    dg_tensor *v2 = dg_add(ctx, v, dg_scale(ctx, action, env->dt));
    return dg_concat(ctx, (dg_tensor *[]){dg_add(ctx, x, dg_scale(ctx, v2, env->dt)), v2}, 2, 1);
}

static void bare_cost(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux, dg_tensor *action,
                      float inv_batch, dg_tensor **terms) {
    (void)env;
    (void)aux;
    (void)action;
    terms[0] = dg_scale(ctx, dg_sum(ctx, dg_square(ctx, dg_cols(ctx, next, 0, 1))), inv_batch);
}

static const dg_loss_term BARE_LOSS[] = {{"loss.distance", 1.0f, NULL, 0, "mean_b x'^2"}};

static const dg_game BARE = {
    .name = "bare", .summary = "no optional hooks", .dt = 0.1f, .horizon = 8, .loss = BARE_LOSS, .nloss = 1,
    .create = bare_create, .reset = bare_reset,
    .observe = bare_observe, .step = bare_step, .step_cost = bare_cost,
};

static dg_env *bare_env(const dg_game *g, dg_cfg **cfg, dg_err *e) {
    static const char Y[] = "seed: 1\ntrain: {batch: 6, epochs: 3, threads: 2}\n";
    *cfg = dg_cfg_parse(Y, strlen(Y), "bare.yaml", e);
    assert_non_null(*cfg);
    return dg_env_create_game(g, *cfg, e);
}

static void test_bare_game_runs(void **state) {
    (void)state;
    dg_err e = {0};
    dg_cfg *cfg;
    dg_env *env = bare_env(&BARE, &cfg, &e);
    assert_non_null(env);
    dg_train_opts o;
    assert_int_equal(dg_train_opts_read(cfg, &o, &e), DG_OK);
    /* training (the trainer's metrics path with no metrics hook), plain and checkpointed */
    for (int ck = -1; ck <= 3; ck += 4) {
        o.checkpoint_every = ck;
        dg_trainer *t = dg_trainer_create(env, &o, NULL, NULL, &e);
        assert_non_null(t);
        assert_int_equal(dg_trainer_run(t, NULL, NULL, NULL, &e), DG_OK);
        assert_true(isfinite(dg_trainer_last(t)->loss));
        dg_trainer_free(t);
    }
    /* one episode with its trajectory, as eval and replay roll it out */
    dg_policy m;
    dg_params *p = NULL;
    assert_int_equal(dg_policy_create(env, o.hidden, o.nhidden, &m, &p, &e), DG_OK);
    dg_rng rng;
    dg_rng_seed(&rng, 3);
    dg_policy_reset_params(&m, p, &rng);
    const int B = 4;
    float s0[8], traj[(8 + 1) * 4 * 2], terms[DG_LOSS_MAX_TERMS];
    assert_int_equal(env->game->reset(env, &rng, B, s0, NULL, NULL), DG_OK);
    dg_ctx *ctx = dg_ctx_create((size_t)8 << 20);
    assert_non_null(ctx);
    dg_tensor *loss = dg_rollout(ctx, env, &m, p, s0, NULL, B, 1.0f / B, terms, traj, B);
    assert_non_null(loss);
    dg_backward(ctx, loss);
    assert_int_equal(dg_ctx_status(ctx), DG_OK);
    assert_true(isfinite(loss->data[0]));
    assert_true(traj[0] == s0[0] && isfinite(traj[8 * 4 * 2 - 1]));
    /* the policy-gradient evaluation batch */
    dg_pg_eval *ev = dg_pg_eval_create(env, 5, 7, 1, &e);
    assert_non_null(ev);
    double l = NAN;
    assert_int_equal(dg_pg_eval_loss(ev, &m, p, &l, NULL, &e), DG_OK);
    assert_true(isfinite(l));
    dg_pg_eval_free(ev);
    dg_ctx_free(ctx);
    dg_params_free(p);
    dg_env_free(env);
    dg_cfg_free(cfg);
}

/* the bare game with a terminal cost: mean_b v_H^2 as a second term (0 at every step before) */
static void final_cost(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux, dg_tensor *action,
                       float inv_batch, dg_tensor **terms) {
    bare_cost(ctx, env, next, aux, action, inv_batch, terms);
    terms[1] = dg_scalar(ctx, 0.0f);
}
static void final_terminal(dg_ctx *ctx, const dg_env *env, dg_tensor *final, dg_tensor *aux, float inv_batch,
                           dg_tensor **terms) {
    (void)env;
    (void)aux;
    terms[1] = dg_scale(ctx, dg_sum(ctx, dg_square(ctx, dg_cols(ctx, final, 1, 1))), inv_batch);
}

/* dg_env_advance, H steps of a constant action: each step's state is the game's step, the loss
 * the mean over the steps of the running term plus the terminal term counted once, at t = H
 * only, each with its weight (checked against the same sums in double). */
static void test_env_advance(void **state) {
    (void)state;
    static const dg_loss_term LOSS[] = {{"loss.distance", 1.0f, NULL, 0, "mean_b x'^2"},
                                        {"loss.final", 2.0f, NULL, 0, "mean_b v_H^2"}};
    dg_game g = BARE;
    g.loss = LOSS;
    g.nloss = 2;
    g.step_cost = final_cost;
    g.terminal_cost = final_terminal;
    dg_err e = {0};
    dg_cfg *cfg;
    dg_env *env = bare_env(&g, &cfg, &e);
    assert_non_null(env);
    enum { B = 3 };
    const int H = env->horizon;
    const float dt = env->dt, s0[2 * B] = {0.5f, 0.0f, -0.25f, 0.5f, 1.0f, -1.0f}, a = 0.75f;
    dg_ctx *ctx = dg_ctx_create((size_t)1 << 20);
    assert_non_null(ctx);
    dg_tensor *st = dg_from(ctx, 2, (int[]){B, 2}, s0), *act = dg_full(ctx, 2, (int[]){B, 1}, a);
    assert_non_null(st);
    assert_non_null(act);
    dg_loss loss;
    assert_int_equal(dg_loss_begin(&loss, env->nterms, env->term_weights), DG_OK);
    double x[B], v[B], run = 0;
    for (int b = 0; b < B; b++) x[b] = s0[2 * b], v[b] = s0[2 * b + 1];
    for (int t = 1; t <= H; t++) {
        st = dg_env_advance(ctx, env, t, st, NULL, act, 1.0f / B, &loss);
        assert_non_null(st);
        for (int b = 0; b < B; b++) {
            v[b] += a * dt;
            x[b] += v[b] * dt;
            run += x[b] * x[b] / B;
            assert_float_equal(st->data[2 * b], x[b], 1e-5);
            assert_float_equal(st->data[2 * b + 1], v[b], 1e-5);
        }
    }
    assert_int_equal(loss.steps, H);
    double fin = 0;
    for (int b = 0; b < B; b++) fin += v[b] * v[b] / B;
    float terms[DG_LOSS_MAX_TERMS];
    dg_tensor *l = dg_loss_finish(ctx, &loss, terms);
    assert_non_null(l);
    assert_float_equal(terms[0], run / H, 1e-5);
    assert_float_equal(terms[1], 2.0 * fin, 1e-5);
    assert_float_equal(l->data[0], run / H + 2.0 * fin, 1e-5);
    dg_ctx_free(ctx);
    dg_env_free(env);
    dg_cfg_free(cfg);
}

/* declarations that need a hook the game lacks */
static dg_status metrics_create(dg_env *env, dg_cfg *cfg, dg_err *e) {
    bare_create(env, cfg, e);
    env->nmetrics = 1;
    env->metric_names[0] = "m";
    return DG_OK;
}
static dg_status two_player_create(dg_env *env, dg_cfg *cfg, dg_err *e) {
    bare_create(env, cfg, e);
    env->nplayers = 2;
    env->obs2_dim = 2;
    env->act2_dim = 1;
    return DG_OK;
}
static dg_status part_aux_create(dg_env *env, dg_cfg *cfg, dg_err *e) {
    bare_create(env, cfg, e);
    env->aux_dim = 3;
    env->aux_user_dim = 1;
    env->aux_name = "goal";
    return DG_OK;
}

static void test_missing_hook_refused(void **state) {
    (void)state;
    static const struct { dg_status (*create)(dg_env *, dg_cfg *, dg_err *); const char *want; } CASES[] = {
        {metrics_create, "no metrics hook"},
        {two_player_create, "observe2"},
        {part_aux_create, "complete_aux"},
        {NULL, "lacks the hook create"},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        dg_game g = BARE;
        g.create = CASES[i].create;
        dg_err e = {0};
        dg_cfg *cfg;
        dg_env *env = bare_env(&g, &cfg, &e);
        assert_null(env);
        if (!strstr(e.msg, CASES[i].want) || !strstr(e.msg, "game 'bare'"))
            fail_msg("case %zu: '%s' lacks '%s'", i, e.msg, CASES[i].want);
        dg_cfg_free(cfg);
    }
    dg_game g = BARE;  /* a required hook */
    g.step = NULL;
    dg_err e = {0};
    dg_cfg *cfg;
    assert_null(bare_env(&g, &cfg, &e));
    assert_non_null(strstr(e.msg, "lacks the hook step"));
    dg_cfg_free(cfg);
    g = BARE;  /* declarations: no loss terms, a bad default, a term that is not loss.NAME */
    g.nloss = 0;
    assert_null(bare_env(&g, &cfg, &e));
    assert_non_null(strstr(e.msg, "its declaration needs"));
    dg_cfg_free(cfg);
    g = BARE;
    g.dt = 0.0f;
    assert_null(bare_env(&g, &cfg, &e));
    assert_non_null(strstr(e.msg, "dt in (0, 10]"));
    dg_cfg_free(cfg);
    static const dg_loss_term BAD[] = {{"distance", 1.0f, NULL, 0, NULL}};
    g = BARE;
    g.loss = BAD;
    assert_null(bare_env(&g, &cfg, &e));
    assert_non_null(strstr(e.msg, "loss term 'distance' is not a key loss.NAME"));
    dg_cfg_free(cfg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bare_game_runs),
        cmocka_unit_test(test_env_advance),
        cmocka_unit_test(test_missing_hook_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
