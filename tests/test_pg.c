/* The policy-gradient baseline: the Gaussian log-probability and the PPO /
 * REINFORCE objectives against finite differences, per-episode rewards
 * against the game's batch costs, learning on a tiny budget, determinism. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "difgames/difgames.h"
#include "difgames/pg.h"

#define M 6  /* samples in the objective tests */

typedef struct obj_case {
    dg_mlp mlp;
    int    ilogstd;
    float  obs[M * 6], act[M * 2], logp_old[M], adv[M];
    float  clip;
} obj_case;

/* The policy objective of M fixed samples as a function of net.* and log_std. */
static dg_tensor *obj_loss(dg_ctx *ctx, dg_params *p, void *user) {
    obj_case *c = user;
    dg_tensor *obs = dg_from(ctx, 2, (int[]){M, 6}, c->obs);
    dg_tensor *act = dg_from(ctx, 2, (int[]){M, 2}, c->act);
    dg_tensor *lp = dg_pg_log_prob(ctx, dg_mlp_forward(ctx, &c->mlp, p, obs), dg_param(ctx, p, c->ilogstd), act);
    return dg_pg_policy_loss(ctx, lp, c->logp_old, c->adv, c->clip, 1.0f / M);
}

/* A 6 -> 8 -> 2 policy with log_std and M samples; logp_old is the current
 * log-probability shifted so that ratios lie inside the clip range and well
 * outside it on both sides (away from the kinks, for finite differences). */
static dg_params *make_case(obj_case *c, float clip) {
    memset(c, 0, sizeof *c);
    dg_params *p = dg_params_create();
    assert_non_null(p);
    assert_int_equal(dg_mlp_init(&c->mlp, p, "net", 6, (int[]){8}, 1, 2, NULL), DG_OK);
    c->ilogstd = dg_params_add(p, "log_std", 1, (int[]){2}, NULL);
    dg_rng rng;
    dg_rng_seed(&rng, 5);
    dg_mlp_reset_params(&c->mlp, p, &rng);
    dg_params_data(p, c->ilogstd)[0] = -0.4f;
    dg_params_data(p, c->ilogstd)[1] = -0.9f;
    for (int i = 0; i < M * 6; i++) c->obs[i] = dg_rng_uniform(&rng, -1.0f, 1.0f);
    for (int i = 0; i < M * 2; i++) c->act[i] = dg_rng_uniform(&rng, -1.2f, 1.2f);
    for (int j = 0; j < M; j++) c->adv[j] = dg_rng_normal(&rng, 0.0f, 1.0f);
    c->clip = clip;
    dg_ctx *ctx = dg_ctx_create(1 << 20);
    dg_tensor *obs = dg_from(ctx, 2, (int[]){M, 6}, c->obs);
    dg_tensor *act = dg_from(ctx, 2, (int[]){M, 2}, c->act);
    dg_tensor *mu = dg_mlp_forward(ctx, &c->mlp, p, obs);
    dg_tensor *lp = dg_pg_log_prob(ctx, mu, dg_param(ctx, p, c->ilogstd), act);
    assert_non_null(lp);
    static const float shift[M] = {0.0f, 0.05f, -0.05f, 0.6f, -0.6f, 0.02f};
    for (int j = 0; j < M; j++) {
        /* the log-probability itself, against the closed form in double */
        double ref = 0.0;
        for (int a = 0; a < 2; a++) {
            const double ls = dg_params_data(p, c->ilogstd)[a];
            const double z = (c->act[j * 2 + a] - mu->data[j * 2 + a]) / exp(ls);
            ref += -0.5 * z * z - ls - 0.5 * log(2.0 * 3.14159265358979323846);
        }
        assert_float_equal(lp->data[j], ref, 1e-5 * fmax(1.0, fabs(ref)));
        c->logp_old[j] = lp->data[j] + shift[j];
    }
    dg_ctx_free(ctx);
    return p;
}

static void check_objective(float clip) {
    obj_case c;
    dg_params *p = make_case(&c, clip);
    dg_ctx *ctx = dg_ctx_create(1 << 20);
    dg_gradcheck_report r;
    dg_err e = {0};
    assert_int_equal(dg_gradcheck(ctx, p, obj_loss, &c, 1e-2f, 1e-2, 0, &r, &e), DG_OK);
    printf("  clip %.1f: max rel err %.2e over %lld elements\n", clip, r.max_rel_err, (long long)r.checked);
    if (r.max_rel_err > 5e-3)
        fail_msg("clip %g: rel err %.3e at %s[%lld]: analytic %.6g numeric %.6g", clip, r.max_rel_err,
                 p->info[r.worst_param].name, (long long)r.worst_index, r.worst_analytic, r.worst_numeric);
    assert_int_equal(dg_params_find_zero_grads(p, (int[8]){0}, 8), 0);  /* log_std and every layer get a gradient */
    dg_ctx_free(ctx);
    dg_params_free(p);
}

/* d objective / d (net.*, log_std) by backward = central differences, for
 * PPO's clipped surrogate and for the unclipped (REINFORCE) objective. */
static void test_objective_gradcheck(void **state) {
    (void)state;
    check_objective(0.2f);
    check_objective(0.0f);
}

/* At the old policy (r = 1) the unclipped objective's gradient is the
 * REINFORCE gradient -mean(∇logp · A). */
static void test_reinforce_gradient(void **state) {
    (void)state;
    obj_case c;
    dg_params *p = make_case(&c, 0.0f);
    dg_ctx *ctx = dg_ctx_create(1 << 20);
    for (int j = 0; j < M; j++) c.logp_old[j] = 0.0f;
    /* logp_old := logp exactly, by evaluating it on the same ops */
    dg_tensor *lp0 = dg_pg_log_prob(ctx, dg_mlp_forward(ctx, &c.mlp, p, dg_from(ctx, 2, (int[]){M, 6}, c.obs)),
                                    dg_param(ctx, p, c.ilogstd), dg_from(ctx, 2, (int[]){M, 2}, c.act));
    for (int j = 0; j < M; j++) c.logp_old[j] = lp0->data[j];
    dg_ctx_reset(ctx);
    dg_params_zero_grad(p);
    assert_int_equal(dg_backward(ctx, obj_loss(ctx, p, &c)), DG_OK);
    float g1[512];
    assert_true(p->total <= 512);
    memcpy(g1, p->grad, p->total * sizeof(float));
    dg_ctx_reset(ctx);
    dg_params_zero_grad(p);
    dg_tensor *lp = dg_pg_log_prob(ctx, dg_mlp_forward(ctx, &c.mlp, p, dg_from(ctx, 2, (int[]){M, 6}, c.obs)),
                                   dg_param(ctx, p, c.ilogstd), dg_from(ctx, 2, (int[]){M, 2}, c.act));
    dg_tensor *adv = dg_from(ctx, 2, (int[]){M, 1}, c.adv);
    assert_int_equal(dg_backward(ctx, dg_scale(ctx, dg_sum(ctx, dg_mul(ctx, lp, adv)), -1.0f / M)), DG_OK);
    for (size_t i = 0; i < p->total; i++) assert_float_equal(g1[i], p->grad[i], 1e-5 * fmax(1.0, fabs(p->grad[i])));
    dg_ctx_free(ctx);
    dg_params_free(p);
}

static dg_env *make_env(const char *yaml, dg_cfg **cfg) {
    dg_err e = {0};
    *cfg = dg_cfg_parse(yaml, strlen(yaml), "test.yaml", &e);
    assert_non_null(*cfg);
    dg_env *env = dg_env_create(*cfg, &e);
    if (!env) fail_msg("%s", e.msg);
    return env;
}

/* Per-episode rewards add up to the game's batch cost of the step. */
static void test_step_rewards(void **state) {
    (void)state;
    const char *games[] = {"game: reach\n", "game: chase\n"};
    for (int k = 0; k < 2; k++) {
        dg_cfg *cfg;
        dg_env *env = make_env(games[k], &cfg);
        const int B = 7, S = env->state_dim, X = env->aux_dim ? env->aux_dim : 1, A = env->act_dim;
        float st[7 * 8], aux[7 * 8], act[7 * 2], rew[7];
        dg_rng rng;
        dg_rng_seed(&rng, 3);
        assert_int_equal(env->game->reset(env, &rng, B, st, aux, NULL), DG_OK);
        for (int i = 0; i < B * A; i++) act[i] = dg_rng_uniform(&rng, -1.0f, 1.0f);
        for (int i = 0; i < B * S; i++) st[i] += dg_rng_uniform(&rng, -0.3f, 0.3f);  /* some in walls / obstacles */
        dg_ctx *ctx = dg_ctx_create(1 << 20);
        dg_tensor *s = dg_from(ctx, 2, (int[]){B, S}, st);
        dg_tensor *ax = env->aux_dim ? dg_from(ctx, 2, (int[]){B, X}, aux) : NULL;
        dg_tensor *a = dg_from(ctx, 2, (int[]){B, A}, act);
        dg_tensor *nx = env->game->step(ctx, env, s, ax, a);
        assert_int_equal(dg_pg_step_rewards(ctx, env, nx, ax, a, rew), DG_OK);
        dg_tensor *tm[DG_LOSS_MAX_TERMS] = {0};
        env->game->step_cost(ctx, env, nx, ax, a, 1.0f / B, tm);
        double batch = 0.0, sum = 0.0;
        for (int i = 0; i < env->nterms; i++) batch += env->term_weights[i] * tm[i]->data[0];
        for (int b = 0; b < B; b++) sum -= rew[b];
        printf("  %s: batch cost %.7g, mean of per-episode costs %.7g\n", env->game->name, batch, sum / B);
        assert_float_equal(sum / B, batch, 1e-5 * fmax(1.0, fabs(batch)));
        dg_ctx_free(ctx);
        dg_env_free(env);
        dg_cfg_free(cfg);
    }
}

/* Trains reach for iters iterations of 16 episodes; returns the evaluation
 * losses before and after and the final parameters (caller frees). */
static dg_params *train_small(dg_pg_algo algo, uint64_t seed, int threads, int iters, double *before,
                              double *after) {
    dg_cfg *cfg;
    dg_env *env = make_env("game: reach\n", &cfg);
    dg_pg_opts o;
    dg_pg_opts_default(&o, algo);
    o.seed = seed;
    o.batch = 16;
    o.threads = threads;
    o.vf_epochs = 4;  /* fewer passes than the defaults: a fast test */
    if (algo == DG_PG_ALGO_PPO) {
        o.lr = 1e-3;
        o.pi_epochs = 4;
    }
    dg_err e = {0};
    dg_pg *pg = dg_pg_create(env, &o, &e);
    if (!pg) fail_msg("%s", e.msg);
    dg_pg_eval *ev = dg_pg_eval_create(env, 64, 77, threads, &e);
    assert_non_null(ev);
    assert_int_equal(dg_pg_eval_loss(ev, dg_pg_policy(pg), dg_pg_policy_params(pg), before, NULL, &e), DG_OK);
    dg_pg_stats s = {0};
    for (int i = 0; i < iters; i++) {
        if (dg_pg_iterate(pg, &s, &e) != DG_OK) fail_msg("%s", e.msg);
        assert_int_equal(s.skipped, 0);
    }
    assert_int_equal(s.iter, iters);
    assert_int_equal(s.env_steps, (int64_t)iters * 16 * env->horizon);
    assert_int_equal(dg_pg_env_steps(pg), s.env_steps);
    assert_int_equal(dg_pg_eval_loss(ev, dg_pg_policy(pg), dg_pg_policy_params(pg), after, NULL, &e), DG_OK);
    dg_params *out = dg_params_create();
    const dg_params *pp = dg_pg_policy_params(pg), *pv = dg_pg_value_params(pg);
    for (int i = 0; i < pp->count; i++) dg_params_add(out, pp->info[i].name, pp->info[i].ndim, pp->info[i].shape, NULL);
    for (int i = 0; i < pv->count; i++) dg_params_add(out, pv->info[i].name, pv->info[i].ndim, pv->info[i].shape, NULL);
    memcpy(out->data, pp->data, pp->total * sizeof(float));
    memcpy(out->data + pp->total, pv->data, pv->total * sizeof(float));
    dg_pg_eval_free(ev);
    dg_pg_free(pg);
    dg_env_free(env);
    dg_cfg_free(cfg);
    return out;
}

/* PPO and REINFORCE both lower reach's evaluation loss on a tiny budget. */
static void test_pg_improves_reach(void **state) {
    (void)state;
    for (int k = 0; k < 2; k++) {
        const dg_pg_algo algo = k ? DG_PG_ALGO_REINFORCE : DG_PG_ALGO_PPO;
        double before, after;
        dg_params *p = train_small(algo, 0, 1, 30, &before, &after);
        printf("  %-9s evaluation loss %.4g -> %.4g after 30 x 16 episodes\n", dg_pg_algo_name(algo), before, after);
        assert_true(isfinite(after));
        assert_true(after < 0.5 * before);
        dg_params_free(p);
    }
}

/* The same seed and thread count (two shards) give the same bits; another
 * seed does not. */
static void test_pg_deterministic(void **state) {
    (void)state;
    double b1, a1, b2, a2, b3, a3;
    dg_params *p1 = train_small(DG_PG_ALGO_PPO, 4, 2, 4, &b1, &a1);
    dg_params *p2 = train_small(DG_PG_ALGO_PPO, 4, 2, 4, &b2, &a2);
    dg_params *p3 = train_small(DG_PG_ALGO_PPO, 5, 2, 4, &b3, &a3);
    assert_int_equal(p1->total, p2->total);
    assert_memory_equal(p1->data, p2->data, p1->total * sizeof(float));
    assert_true(a1 == a2 && b1 == b2);
    assert_true(memcmp(p1->data, p3->data, p1->total * sizeof(float)) != 0);
    /* the initial policy is the BPTT trainer's for the same seed */
    dg_cfg *cfg;
    dg_env *env = make_env("game: reach\ntrain: {batch: 4, epochs: 0}\nseed: 4\n", &cfg);
    dg_train_opts o;
    dg_err e = {0};
    assert_int_equal(dg_train_opts_read(cfg, &o, &e), DG_OK);
    dg_trainer *t = dg_trainer_create(env, &o, NULL, NULL, &e);
    assert_non_null(t);
    dg_pg_eval *ev = dg_pg_eval_create(env, 64, 77, 2, &e);
    double l0;
    assert_int_equal(dg_pg_eval_loss(ev, dg_trainer_policy(t), dg_trainer_params(t), &l0, NULL, &e), DG_OK);
    assert_true(l0 == b1);
    dg_pg_eval_free(ev);
    dg_trainer_free(t);
    dg_env_free(env);
    dg_cfg_free(cfg);
    dg_params_free(p1);
    dg_params_free(p2);
    dg_params_free(p3);
}

/* The evaluation batch is the held-out draw of a run (dg_run_init_draw) from the same seed: with one
 * shard its loss is dg_rollout's on those starts to the bit (reach: an aux goal per row). */
static void test_pg_eval_batch(void **state) {
    (void)state;
    dg_cfg *cfg;
    dg_env *env = make_env("game: reach\nseed: 5\n", &cfg);
    dg_err e = {0};
    dg_policy m;
    dg_params *p = NULL;
    assert_int_equal(dg_policy_create(env, (int[]){16}, 1, &m, &p, &e), DG_OK);
    dg_rng rng;
    dg_rng_seed(&rng, 9);
    dg_policy_reset_params(&m, p, &rng);
    enum { B = 24 };
    dg_pg_eval *ev = dg_pg_eval_create(env, B, 4242, 1, &e);
    assert_non_null(ev);
    double l = NAN;
    assert_int_equal(dg_pg_eval_loss(ev, &m, p, &l, NULL, &e), DG_OK);
    float *st = NULL, *ax = NULL;
    assert_int_equal(dg_run_init_draw(env, 4242, B, &st, &ax, &e), DG_OK);
    dg_ctx *ctx = dg_ctx_create((size_t)32 << 20);
    assert_non_null(ctx);
    dg_tensor *r = dg_rollout(ctx, env, &m, p, st, ax, B, 1.0f / B, NULL, NULL, 0);
    assert_non_null(r);
    assert_true(l == (double)r->data[0]);
    dg_ctx_free(ctx);
    free(st);
    free(ax);
    dg_pg_eval_free(ev);
    dg_params_free(p);
    dg_env_free(env);
    dg_cfg_free(cfg);
}

typedef struct curve_seen {
    int points, iters, stop_at;
} curve_seen;

static dg_status count_progress(const dg_pg_progress *p, void *user) {
    curve_seen *c = user;
    c->points += p->point != NULL;
    c->iters += p->stats != NULL;
    if (p->point) assert_true(isfinite(p->point->loss));
    return c->stop_at && c->points == c->stop_at ? DG_ERR_INTERRUPTED : DG_OK;
}

/* BPTT then PG on one evaluation batch: points on the grid, summaries, stops, the CSV. */
static void test_pg_curves(void **state) {
    (void)state;
    dg_cfg *cfg;
    dg_env *env = make_env("game: reach\ntrain: {batch: 4, epochs: 6}\nseed: 3\n", &cfg);
    dg_train_opts to;
    dg_err e = {0};
    assert_int_equal(dg_train_opts_read(cfg, &to, &e), DG_OK);
    dg_pg_eval *ev = dg_pg_eval_create(env, 32, 77, 1, &e);
    assert_non_null(ev);
    dg_pg_curve c = {0};
    curve_seen seen = {0};
    dg_pg_result r;
    assert_int_equal(dg_pg_run_bptt(env, &to, ev, 0, &c, NULL, NULL, &r, &e), DG_ERR_ARG);
    if (dg_pg_run_bptt(env, &to, ev, 40, &c, count_progress, &seen, &r, &e) != DG_OK) fail_msg("%s", e.msg);
    assert_true(c.n >= 2 && seen.points == c.n && seen.iters == 0);
    assert_string_equal(c.pts[0].method, "bptt");
    assert_int_equal(c.pts[0].iter, 0);
    assert_true(isnan(c.pts[0].sample_loss));
    assert_int_equal(c.pts[c.n - 1].iter, 6);
    assert_int_equal(c.pts[c.n - 1].steps, (int64_t)6 * 4 * env->horizon);
    double best = INFINITY;
    for (int i = 0; i < c.n; i++) best = fmin(best, c.pts[i].loss);
    for (int i = 1; i < c.n; i++) assert_true(c.pts[i].steps > c.pts[i - 1].steps);
    assert_true(r.best == best && r.final == c.pts[c.n - 1].loss && r.iters == 6 && r.steps == c.pts[c.n - 1].steps);
    const int nb = c.n;

    dg_pg_opts o;
    dg_pg_opts_default(&o, DG_PG_ALGO_PPO);
    o.batch = 8;
    o.vf_epochs = o.pi_epochs = 2;
    dg_pg_schedule sc = {.iters = 3, .stop_below = -INFINITY, .stop_after = 1, .evals_per_decade = 40};
    dg_pg *pg = dg_pg_create(env, &o, &e);
    assert_non_null(pg);
    seen = (curve_seen){0};
    if (dg_pg_run(pg, ev, &sc, &c, count_progress, &seen, &r, &e) != DG_OK) fail_msg("%s", e.msg);
    assert_int_equal(c.n, nb + 4);  /* 40 a decade: every iteration is evaluated */
    assert_int_equal(seen.points, 4);
    assert_int_equal(seen.iters, 3);
    assert_string_equal(c.pts[nb].method, "pg");
    assert_int_equal(c.pts[c.n - 1].iter, 3);
    assert_int_equal(r.iters, 3);
    assert_int_equal(c.pts[c.n - 1].steps, dg_pg_env_steps(pg));
    dg_pg_free(pg);

    /* stop_below reached by the first evaluation: no iteration; a callback's status stops the run */
    sc.stop_below = INFINITY;
    pg = dg_pg_create(env, &o, &e);
    assert_int_equal(dg_pg_run(pg, ev, &sc, NULL, NULL, NULL, &r, &e), DG_OK);
    assert_int_equal(r.iters, 0);
    assert_int_equal(dg_pg_env_steps(pg), 0);
    sc.stop_below = -INFINITY;
    seen = (curve_seen){.stop_at = 2};
    assert_int_equal(dg_pg_run(pg, ev, &sc, NULL, count_progress, &seen, &r, &e), DG_ERR_INTERRUPTED);
    assert_int_equal(seen.points, 2);
    dg_pg_free(pg);

    char path[256];
    snprintf(path, sizeof path, "test_pg_curve.csv");
    assert_int_equal(dg_pg_curve_save_csv(&c, 3, path, &e), DG_OK);
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    char line[256];
    int lines = 0;
    assert_non_null(fgets(line, sizeof line, fp));
    assert_string_equal(line, "method,seed,iter,env_steps,eval_loss,sample_loss\n");
    while (fgets(line, sizeof line, fp)) {
        if (lines == 0) assert_true(!strncmp(line, "bptt,3,0,0,", 11));
        lines++;
    }
    fclose(fp);
    remove(path);
    assert_int_equal(lines, c.n);
    dg_pg_curve_free(&c);
    assert_true(c.n == 0 && c.pts == NULL);
    dg_pg_eval_free(ev);
    dg_env_free(env);
    dg_cfg_free(cfg);
}

/* Bad options are refused with a message, not a crash. */
static void test_pg_bad_options(void **state) {
    (void)state;
    dg_cfg *cfg;
    dg_env *env = make_env("game: reach\n", &cfg);
    dg_pg_opts o;
    dg_pg_opts_default(&o, DG_PG_ALGO_PPO);
    o.batch = 0;
    dg_err e = {0};
    assert_null(dg_pg_create(env, &o, &e));
    assert_int_equal(e.status, DG_ERR_ARG);
    assert_true(strlen(e.msg) > 0);
    dg_pg_opts_default(&o, DG_PG_ALGO_PPO);
    o.gamma = 1.5;
    assert_null(dg_pg_create(env, &o, &e));
    dg_pg_algo a;
    assert_true(dg_pg_algo_parse("reinforce", &a) && a == DG_PG_ALGO_REINFORCE);
    assert_false(dg_pg_algo_parse("a2c", &a));
    dg_pg_free(NULL);
    dg_pg_eval_free(NULL);
    dg_env_free(env);
    dg_cfg_free(cfg);
}

/* The pg.* keys: the table's defaults are dg_pg_opts_default's; REINFORCE's defaults fill what the
 * config leaves out; doubles read as written; a step budget alone lifts the iteration limit. */
static void test_pg_opts_read(void **state) {
    (void)state;
    static const char *const texts[] = {
        "game: reach\n",
        "game: reach\npg: {algo: reinforce, lr: 0.002}\nseed: 3\ntrain: {threads: 2}\n",
        "game: reach\npg: {max_steps: 1000}\n",
        "game: reach\npg: {max_steps: 1000, iters: 5, clip_ratio: 1}\n",
        "game: reach\npg: {algo: a2c}\n",
    };
    dg_cfg *c[5];
    dg_err e = {0};
    for (int i = 0; i < 5; i++) assert_non_null(c[i] = dg_cfg_parse(texts[i], strlen(texts[i]), "t.yaml", &e));
    dg_pg_opts o, d;
    dg_pg_schedule s;
    assert_int_equal(dg_pg_opts_read(c[0], &o, &s, &e), DG_OK);
    dg_pg_opts_default(&d, DG_PG_ALGO_PPO);
    assert_memory_equal(&o, &d, sizeof o);  /* memset in both: padding too */
    assert_int_equal(s.iters, 500);
    assert_int_equal(s.max_steps, 0);
    assert_true(isinf(s.stop_below) && s.stop_below < 0);
    assert_int_equal(s.eval_batch, 256);
    assert_int_equal((int)s.eval_seed, 1000003);
    assert_int_equal(s.evals_per_decade, 40);
    assert_int_equal(dg_pg_opts_read(c[1], &o, NULL, &e), DG_OK);
    dg_pg_opts_default(&d, DG_PG_ALGO_REINFORCE);
    assert_int_equal(o.algo, DG_PG_ALGO_REINFORCE);
    assert_true(o.lr == 0.002 && d.lr == 1e-3);  /* the config's, to the last bit of the double */
    assert_true(o.lambda == d.lambda && o.lambda == 1.0 && o.clip == 0.0 && d.clip == 0.0);
    assert_int_equal(o.pi_epochs, 1);
    assert_int_equal(o.minibatch, 0);
    assert_int_equal((int)o.seed, 3);
    assert_int_equal(o.threads, 2);
    assert_int_equal(dg_pg_opts_read(c[2], &o, &s, &e), DG_OK);
    assert_int_equal(s.iters, 0);
    assert_int_equal(s.max_steps, 1000);
    assert_int_equal(dg_pg_opts_read(c[3], &o, &s, &e), DG_ERR_CONFIG);
    assert_non_null(strstr(e.msg, "pg.clip_ratio"));
    assert_int_equal(dg_pg_opts_read(c[4], &o, &s, &e), DG_ERR_CONFIG);
    assert_non_null(strstr(e.msg, "a2c"));
    /* the table lists the doubles as they are */
    int n;
    const dg_key *k = dg_pg_keys(&n);
    char buf[64];
    assert_true(n > 10);
    assert_string_equal(k[2].name, "pg.lr");
    assert_string_equal(dg_key_default_str(&k[2], buf, sizeof buf), "0.0003");
    for (int i = 0; i < 5; i++) dg_cfg_free(c[i]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_objective_gradcheck),
        cmocka_unit_test(test_reinforce_gradient),
        cmocka_unit_test(test_step_rewards),
        cmocka_unit_test(test_pg_improves_reach),
        cmocka_unit_test(test_pg_deterministic),
        cmocka_unit_test(test_pg_curves),
        cmocka_unit_test(test_pg_eval_batch),
        cmocka_unit_test(test_pg_bad_options),
        cmocka_unit_test(test_pg_opts_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
