/* Every registered game: finite differences for step + step_cost and for a
 * short episode; the renderer on the tape; a single-batch overfit; identical
 * metrics for the same seed and thread count; the NaN guard. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "difgames/difgames.h"
#include "util/tier.h"

static dg_cfg *cfg_of(const char *text) {
    dg_err e = {0};
    dg_cfg *c = dg_cfg_parse(text, strlen(text), "test.yaml", &e);
    if (!c) fail_msg("config: %s", e.msg);
    return c;
}

typedef struct setup {
    dg_cfg *cfg;
    dg_env *env;
    dg_train_opts o;
} setup;

static void setup_game(setup *s, const char *yaml) {
    dg_err e = {0};
    s->cfg = cfg_of(yaml);
    s->env = dg_env_create(s->cfg, &e);
    if (!s->env) fail_msg("env: %s", e.msg);
    if (dg_train_opts_read(s->cfg, &s->o, &e) != DG_OK) fail_msg("opts: %s", e.msg);
    if (dg_cfg_check_unused(s->cfg, &e) != DG_OK) fail_msg("unused: %s", e.msg);
}

static void setup_free(setup *s) {
    dg_env_free(s->env);
    dg_cfg_free(s->cfg);
}

/* step_cost and a 6-step episode of every game agree with finite differences (dg_env_gradcheck,
 * the check `difgames gradcheck` runs), every loss term at weight 1 so a small weight cannot hide a
 * wrong term; no policy parameter is cut from the loss */
static void test_games_gradcheck(void **state) {
    (void)state;
    for (int g = 0; g < dg_game_count(); g++) {
        char yaml[256];
        /* billiards: the cue ball to a target, no contact in the 6 steps: a contact is a kink at the
         * scale of the check's step (test_billiards checks the contacts' gradients) */
        const int billiards = !strcmp(dg_game_at(g)->name, "billiards");
        const char *env = billiards ? "horizon: 6, target_ball: 0, balls: [[-0.3, 0], [0.6, 0]], table: [2, 2]"
                                    : "horizon: 6";
        snprintf(yaml, sizeof yaml, "game: %s\nenv: {%s}\npolicy: {hidden: [16, 16]}\n", dg_game_at(g)->name, env);
        setup s;
        setup_game(&s, yaml);
        dg_env_gradcheck_opts o = dg_env_gradcheck_opts_default();
        o.batch = 3;
        o.seed = 5;
        o.max_per_param = 16;
        o.unit_weights = 1;
        if (s.env->gradcheck_eps > 0) o.eps = s.env->gradcheck_eps;  /* the game's own scale */
        memcpy(o.hidden, s.o.hidden, sizeof o.hidden);
        o.nhidden = s.o.nhidden;
        dg_env_gradcheck_result r;
        dg_err e = {0};
        assert_int_equal(dg_env_gradcheck(s.env, &o, &r, &e), DG_OK);
        assert_int_equal(r.horizon, 6);
        printf("  %-6s step_cost: worst rel err %.2e over %lld\n", s.env->game->name, r.step.max_rel_err,
               (long long)r.step.checked);
        printf("  %-6s episode:   worst rel err %.2e over %lld\n", s.env->game->name, r.episode.max_rel_err,
               (long long)r.episode.checked);
        assert_true(r.step.checked > 0 && r.episode.checked > 0);
        assert_true(r.step.max_rel_err < 1e-3);
        assert_true(r.episode.max_rel_err < 1e-3);
        assert_int_equal(r.nzero, 0);  /* the chain is whole */
        setup_free(&s);
    }
    /* bad options are refused */
    setup s;
    setup_game(&s, "game: reach\n");
    dg_env_gradcheck_opts o = dg_env_gradcheck_opts_default();
    dg_env_gradcheck_result r;
    dg_err e = {0};
    o.eps = 0;
    assert_int_equal(dg_env_gradcheck(s.env, &o, &r, &e), DG_ERR_ARG);
    setup_free(&s);
}

/* pixel: the loss reaches the policy only through the renderer's op */
static void test_renderer_on_tape(void **state) {
    (void)state;
    setup s;
    setup_game(&s, "game: pixel\nenv: {horizon: 3}\nrender: {size: 16}\n");
    const int B = 2;
    float st[8], aux[2 * (2 + 256)];
    dg_rng rng;
    dg_rng_seed(&rng, 1);
    assert_int_equal(s.env->game->reset(s.env, &rng, B, st, aux, NULL), DG_OK);
    dg_policy m;
    dg_params *p;
    dg_err e = {0};
    assert_int_equal(dg_policy_create(s.env, s.o.hidden, s.o.nhidden, &m, &p, &e), DG_OK);
    dg_policy_reset_params(&m, p, &rng);
    dg_ctx *ctx = dg_ctx_create(16 << 20);
    dg_tensor *l = dg_rollout(ctx, s.env, &m, p, st, aux, B, 0.5f, NULL, NULL, 0);
    assert_non_null(l);
    int renders = 0;
    for (dg_tensor *t = l; t; t = t->tape_prev)
        if (t->op == DG_OP_CUSTOM && !strcmp(t->name, "render_points")) {
            renders++;
            assert_int_equal(t->ndim, 4);
            assert_int_equal(t->shape[2], 16);
        }
    assert_int_equal(renders, 3);  /* one render per step, all taped */
    dg_params_zero_grad(p);
    assert_int_equal(dg_backward(ctx, l), DG_OK);
    assert_true(dg_grad_norm(p) > 0.0f);
    dg_ctx_free(ctx);
    dg_params_free(p);
    setup_free(&s);
}

static void first_loss(const dg_train_event *ev, void *user) {
    if (ev->kind == DG_TRAIN_EV_INIT) *(double *)user = ev->stats->loss;
}

/* the seed's single-batch overfit: batch 4, horizon 30, 50 epochs; starts and
 * goals up to 0.57 apart, so the travel itself keeps the loss above zero */
static void test_single_batch_overfit(void **state) {
    (void)state;
    setup s;
    setup_game(&s,
               "game: reach\nseed: 0\n"
               "env: {horizon: 30, obstacles: [], start: {x: [-0.2, 0.2], y: [-0.2, 0.2]},"
               " goal: {x: [-0.2, 0.2], y: [-0.2, 0.2]}}\n"
               "train: {batch: 4, epochs: 50, lr: 0.01, fixed_batch: true, snapshots: []}\n");
    dg_err e = {0};
    dg_trainer *t = dg_trainer_create(s.env, &s.o, NULL, NULL, &e);
    assert_non_null(t);
    double init = 0;
    assert_int_equal(dg_trainer_run(t, first_loss, &init, NULL, &e), DG_OK);
    const double final = dg_trainer_last(t)->loss;
    printf("  overfit: loss %.3e at initialisation, %.3e after 50 epochs\n", init, final);
    assert_true(final < 1e-2 && final < 0.05 * init);
    dg_trainer_free(t);
    setup_free(&s);
}

static char *slurp(const char *path) {
    unsigned char *buf;
    size_t len;
    if (dg_file_read_all(path, &buf, &len, NULL) != DG_OK) return NULL;
    return (char *)buf;
}

/* drop the ms column (wall time) from each line of metrics.csv */
static void drop_ms(char *csv) {
    char *out = csv;
    for (char *line = csv; *line;) {
        char *end = strchr(line, '\n');
        if (!end) end = line + strlen(line);
        int col = 0, ms_col = 1 + 1 + 3 + 2;  /* epoch, loss, 3 terms, grad_norm, lr, [ms] */
        for (char *c = line; c < end; c++) {
            if (*c == ',') col++;
            if (col != ms_col) *out++ = *c;
        }
        *out++ = '\n';
        line = *end ? end + 1 : end;
    }
    *out = 0;
}

static char *train_run(const char *dir, int threads) {
    char yaml[256];
    snprintf(yaml, sizeof yaml, "game: reach\nseed: 7\ntrain: {batch: 16, epochs: 8, threads: %d,"
             " snapshots: [4]}\n", threads);
    setup s;
    setup_game(&s, yaml);
    dg_err e = {0};
    dg_trainer *t = dg_trainer_create(s.env, &s.o, dir, "x", &e);
    assert_non_null(t);
    assert_int_equal(dg_trainer_run(t, NULL, NULL, NULL, &e), DG_OK);
    dg_trainer_free(t);
    setup_free(&s);
    char path[512];
    snprintf(path, sizeof path, "%s/metrics.csv", dir);
    char *csv = slurp(path);
    assert_non_null(csv);
    drop_ms(csv);
    return csv;
}

static void test_deterministic_metrics(void **state) {
    (void)state;
    char tmpl[] = "/tmp/dg_games_XXXXXX";
    char *root = mkdtemp(tmpl);
    assert_non_null(root);
    for (int threads = 1; threads <= 2; threads++) {
        char a[512], b[512];
        snprintf(a, sizeof a, "%s/a%d", root, threads);
        snprintf(b, sizeof b, "%s/b%d", root, threads);
        char *ca = train_run(a, threads), *cb = train_run(b, threads);
        assert_string_equal(ca, cb);
        /* and the checkpoints are byte-identical */
        char pa[600], pb[600];
        unsigned char *fa, *fb;
        size_t la, lb;
        snprintf(pa, sizeof pa, "%s/final.safetensors", a);
        snprintf(pb, sizeof pb, "%s/final.safetensors", b);
        assert_int_equal(dg_file_read_all(pa, &fa, &la, NULL), DG_OK);
        assert_int_equal(dg_file_read_all(pb, &fb, &lb, NULL), DG_OK);
        assert_int_equal(la, lb);
        assert_memory_equal(fa, fb, la);
        free(fa);
        free(fb);
        free(ca);
        free(cb);
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

typedef struct nan_seen {
    int nan_events;
    double lr;
} nan_seen;

static void on_ev(const dg_train_event *ev, void *user) {
    nan_seen *n = user;
    if (ev->kind == DG_TRAIN_EV_NAN) {
        n->nan_events++;
        n->lr = ev->lr;
    }
}

/* a non-finite loss is never applied: parameters roll back, lr halves */
static void test_nan_guard(void **state) {
    (void)state;
    setup s;
    setup_game(&s, "game: reach\ntrain: {batch: 8, epochs: 6, fault_nan_epoch: 4, snapshots: []}\n");
    dg_err e = {0};
    dg_trainer *t = dg_trainer_create(s.env, &s.o, NULL, NULL, &e);
    nan_seen n = {0};
    assert_int_equal(dg_trainer_run(t, on_ev, &n, NULL, &e), DG_OK);
    assert_int_equal(n.nan_events, 1);
    assert_float_equal(n.lr, 5e-4, 1e-9);
    assert_true(isfinite(dg_trainer_last(t)->loss));
    const dg_params *p = dg_trainer_params(t);
    for (size_t i = 0; i < p->total; i++) assert_true(isfinite(p->data[i]));
    dg_trainer_free(t);
    setup_free(&s);
}

/* checkpointed BPTT: the same loss, terms and gradients, to the bit, as one
 * tape, for every game and several segment lengths (one that does not divide H) */
static void test_checkpointed_bptt_identical(void **state) {
    (void)state;
    for (int g = 0; g < dg_game_count(); g++) {
        char yaml[256];
        snprintf(yaml, sizeof yaml, "game: %s\nenv: {horizon: 23}\npolicy: {hidden: [16, 16]}\n",
                 dg_game_at(g)->name);
        setup s;
        setup_game(&s, yaml);
        const dg_env *env = s.env;
        const int B = 5, S = env->state_dim, H = env->horizon;
        float *st = malloc((size_t)B * S * sizeof(float));
        float *aux = malloc((size_t)B * (env->aux_dim ? env->aux_dim : 1) * sizeof(float));
        float *saved = malloc((size_t)H * B * S * sizeof(float));
        float *traj0 = malloc((size_t)(H + 1) * B * S * sizeof(float));
        float *traj1 = malloc((size_t)(H + 1) * B * S * sizeof(float));
        dg_rng rng;
        dg_rng_seed(&rng, 9);
        assert_int_equal(env->game->reset(env, &rng, B, st, aux, NULL), DG_OK);
        dg_policy m;
        dg_params *p;
        dg_err e = {0};
        assert_int_equal(dg_policy_create(env, s.o.hidden, s.o.nhidden, &m, &p, &e), DG_OK);
        dg_policy_reset_params(&m, p, &rng);
        dg_ctx *ctx = dg_ctx_create(32 << 20);
        double loss0, loss1;
        float terms0[DG_LOSS_MAX_TERMS], terms1[DG_LOSS_MAX_TERMS];
        dg_params_zero_grad(p);
        assert_int_equal(dg_episode_grad(ctx, env, &m, p, st, aux, B, 1.0f / B, 0, 0, NULL, &loss0, terms0,
                                         traj0, B), DG_OK);
        float *g0 = malloc(p->total * sizeof(float));
        memcpy(g0, p->grad, p->total * sizeof(float));
        const size_t full_peak = dg_ctx_peak(ctx);
        const int everys[] = {1, 5, 7, 22};
        for (int k = 0; k < 4; k++) {
            dg_ctx_free(ctx);
            ctx = dg_ctx_create(32 << 20);
            dg_params_zero_grad(p);
            assert_int_equal(dg_episode_grad(ctx, env, &m, p, st, aux, B, 1.0f / B, everys[k], 0, saved,
                                             &loss1, terms1, traj1, B), DG_OK);
            assert_true(loss0 == loss1);
            assert_memory_equal(terms0, terms1, env->nterms * sizeof(float));
            assert_memory_equal(g0, p->grad, p->total * sizeof(float));
            assert_memory_equal(traj0, traj1, (size_t)(H + 1) * B * S * sizeof(float));
            if (everys[k] <= 7) assert_true(dg_ctx_peak(ctx) < full_peak / 2);
        }
        printf("  %-6s checkpointed BPTT (k = 1, 5, 7, 22 of H = 23): identical; arena %zu -> %zu bytes\n",
               env->game->name, full_peak, dg_ctx_peak(ctx));
        dg_ctx_free(ctx);
        dg_params_free(p);
        free(g0);
        free(st);
        free(aux);
        free(saved);
        free(traj0);
        free(traj1);
        setup_free(&s);
    }
}

/* reach's fused ops (reach_obs, reach_cost) give the bits of the chains they replaced: the
 * observation as a concat, the terms as cols, sum_sq_diff, sdf_circles, penalty_margin, sum, scale
 * and sum_sq_diff: values and every gradient compared byte for byte, with points inside and
 * outside the margins of two obstacles */
static dg_tensor *reach_chain(dg_ctx *ctx, dg_tensor *st, dg_tensor *ax, dg_tensor *ac, dg_tensor *w,
                              float inv_batch, float *terms) {
    const float obst[2][3] = {{0.0f, 0.0f, 0.25f}, {0.5f, 0.2f, 0.1f}};
    dg_tensor *obs = dg_concat(ctx, (dg_tensor *[]){st, ax}, 2, 1);
    dg_tensor *p = dg_cols(ctx, st, 0, 2);
    dg_tensor *t[3] = {dg_sum_sq_diff(ctx, p, ax, inv_batch),
                       dg_scale(ctx, dg_sum(ctx, dg_penalty_margin(ctx, dg_sdf_circles(ctx, p, &obst[0][0], 2), 0.3f)),
                                inv_batch),
                       dg_sum_sq_diff(ctx, ac, NULL, inv_batch)};
    for (int i = 0; i < 3; i++) terms[i] = t[i]->data[0];
    return dg_add(ctx, dg_sum(ctx, dg_mul(ctx, obs, w)),
                  dg_add(ctx, dg_add(ctx, dg_scale(ctx, t[0], 1.3f), dg_scale(ctx, t[1], 0.7f)), dg_scale(ctx, t[2], 2.1f)));
}

static void test_reach_cost_bits(void **state) {
    (void)state;
    setup s;
    setup_game(&s, "game: reach\nenv: {margin: 0.3, obstacles: [[0, 0, 0.25], [0.5, 0.2, 0.1]]}\n");
    enum { B = 37 };
    float sv[B * 4], av[B * 2], uv[B * 2], wv[B * 6];
    dg_rng rng;
    dg_rng_seed(&rng, 3);
    for (int i = 0; i < B * 4; i++) sv[i] = dg_rng_uniform(&rng, -0.7f, 0.7f);
    for (int i = 0; i < B * 2; i++) av[i] = dg_rng_uniform(&rng, -0.9f, 0.9f), uv[i] = dg_rng_uniform(&rng, -1, 1);
    for (int i = 0; i < B * 6; i++) wv[i] = dg_rng_uniform(&rng, -2, 2);
    float val[2][4], terms[2][3], gs[2][B * 4], ga[2][B * 2], gu[2][B * 2];
    for (int v = 0; v < 2; v++) {
        dg_ctx *ctx = dg_ctx_create(1 << 20);
        dg_tensor *st = dg_from(ctx, 2, (int[]){B, 4}, sv), *ax = dg_from(ctx, 2, (int[]){B, 2}, av);
        dg_tensor *ac = dg_from(ctx, 2, (int[]){B, 2}, uv), *w = dg_from(ctx, 2, (int[]){B, 6}, wv);
        dg_set_requires_grad(st), dg_set_requires_grad(ax), dg_set_requires_grad(ac);
        dg_tensor *loss;
        if (v == 0) {
            loss = reach_chain(ctx, st, ax, ac, w, 1.0f / B, terms[0]);
        } else {
            dg_tensor *obs = s.env->game->observe(ctx, s.env, st, ax), *tm[3] = {0};
            s.env->game->step_cost(ctx, s.env, st, ax, ac, 1.0f / B, tm);
            for (int i = 0; i < 3; i++) terms[1][i] = tm[i]->data[0];
            loss = dg_add(ctx, dg_sum(ctx, dg_mul(ctx, obs, w)),
                          dg_add(ctx, dg_add(ctx, dg_scale(ctx, tm[0], 1.3f), dg_scale(ctx, tm[1], 0.7f)),
                                 dg_scale(ctx, tm[2], 2.1f)));
        }
        assert_int_equal(dg_backward(ctx, loss), DG_OK);
        val[v][0] = loss->data[0];
        memcpy(gs[v], st->grad, sizeof gs[v]);
        memcpy(ga[v], ax->grad, sizeof ga[v]);
        memcpy(gu[v], ac->grad, sizeof gu[v]);
        dg_ctx_free(ctx);
    }
    assert_true(terms[0][1] > 0.0f);  /* some points inside a margin */
    assert_memory_equal(terms[0], terms[1], sizeof terms[0]);
    assert_memory_equal(&val[0][0], &val[1][0], sizeof(float));
    assert_memory_equal(gs[0], gs[1], sizeof gs[0]);
    assert_memory_equal(ga[0], ga[1], sizeof ga[0]);
    assert_memory_equal(gu[0], gu[1], sizeof gu[0]);
    setup_free(&s);
}

/* reach's per-row costs (reach_cost_rows, the fused op's rows for certify's dynamic programming)
 * against the chain of the rows: goal (p - g)², collision penalty_margin(sdf_circles(p)), energy a²;
 * values and the gradients of a weighted sum of the rows byte for byte, points inside and outside
 * the margins of two obstacles */
static void test_reach_rows_bits(void **state) {
    (void)state;
    setup s;
    setup_game(&s, "game: reach\nenv: {margin: 0.3, obstacles: [[0, 0, 0.25], [0.5, 0.2, 0.1]]}\n");
    assert_non_null(s.env->game->step_cost_rows);
    const float obst[2][3] = {{0.0f, 0.0f, 0.25f}, {0.5f, 0.2f, 0.1f}};
    enum { B = 37 };
    float sv[B * 4], av[B * 2], uv[B * 2], wv[3][B * 2];
    dg_rng rng;
    dg_rng_seed(&rng, 5);
    for (int i = 0; i < B * 4; i++) sv[i] = dg_rng_uniform(&rng, -0.7f, 0.7f);
    for (int i = 0; i < B * 2; i++) av[i] = dg_rng_uniform(&rng, -0.9f, 0.9f), uv[i] = dg_rng_uniform(&rng, -1, 1);
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < B * 2; i++) wv[k][i] = dg_rng_uniform(&rng, -2, 2);
    const int width[3] = {2, 1, 2};
    float rows[2][3][B * 2], gs[2][B * 4], ga[2][B * 2], gu[2][B * 2];
    for (int v = 0; v < 2; v++) {
        dg_ctx *ctx = dg_ctx_create(1 << 20);
        dg_tensor *st = dg_from(ctx, 2, (int[]){B, 4}, sv), *ax = dg_from(ctx, 2, (int[]){B, 2}, av);
        dg_tensor *ac = dg_from(ctx, 2, (int[]){B, 2}, uv);
        dg_set_requires_grad(st), dg_set_requires_grad(ax), dg_set_requires_grad(ac);
        dg_tensor *r[DG_LOSS_MAX_TERMS] = {0};
        if (v == 0) {
            dg_tensor *p = dg_cols(ctx, st, 0, 2);
            r[0] = dg_square(ctx, dg_sub(ctx, p, ax));
            r[1] = dg_penalty_margin(ctx, dg_sdf_circles(ctx, p, &obst[0][0], 2), 0.3f);
            r[2] = dg_square(ctx, ac);
        } else {
            s.env->game->step_cost_rows(ctx, s.env, st, ax, ac, r);
        }
        dg_tensor *loss = NULL;
        for (int k = 0; k < 3; k++) {
            assert_non_null(r[k]);
            assert_int_equal(r[k]->n, B * width[k]);
            memcpy(rows[v][k], r[k]->data, sizeof(float) * B * width[k]);
            dg_tensor *w = dg_from(ctx, 2, (int[]){B, width[k]}, wv[k]);
            dg_tensor *t = dg_sum(ctx, dg_mul(ctx, r[k], w));
            loss = loss ? dg_add(ctx, loss, t) : t;
        }
        assert_int_equal(dg_backward(ctx, loss), DG_OK);
        memcpy(gs[v], st->grad, sizeof gs[v]);
        memcpy(ga[v], ax->grad, sizeof ga[v]);
        memcpy(gu[v], ac->grad, sizeof gu[v]);
        dg_ctx_free(ctx);
    }
    int inside = 0;
    for (int b = 0; b < B; b++) inside += rows[0][1][b] > 0.0f;
    assert_true(inside > 0 && inside < B);  /* some points inside a margin, some outside */
    for (int k = 0; k < 3; k++) assert_memory_equal(rows[0][k], rows[1][k], sizeof(float) * B * width[k]);
    assert_memory_equal(gs[0], gs[1], sizeof gs[0]);
    assert_memory_equal(ga[0], ga[1], sizeof ga[0]);
    assert_memory_equal(gu[0], gu[1], sizeof gu[0]);
    setup_free(&s);
}

/* Two learned players (chase with evader: policy): finite differences for
 * both players' parameters through one rollout, and no zero gradient. */
static void test_two_player_gradcheck(void **state) {
    (void)state;
    setup s;
    setup_game(&s, "game: chase\nenv: {horizon: 6, evader: policy}\npolicy: {hidden: [16, 16]}\n");
    const dg_env *env = s.env;
    assert_int_equal(env->nplayers, 2);
    dg_policy m;
    dg_params *p;
    dg_err e = {0};
    assert_int_equal(dg_policy_create(env, s.o.hidden, s.o.nhidden, &m, &p, &e), DG_OK);
    assert_int_equal(m.n, 2);
    assert_true(dg_params_find(p, "evader.0.weight") >= 0);
    dg_params_free(p);
    dg_env_gradcheck_opts o = dg_env_gradcheck_opts_default();
    o.batch = 3;
    o.seed = 4;
    o.max_per_param = 12;
    memcpy(o.hidden, s.o.hidden, sizeof o.hidden);
    o.nhidden = s.o.nhidden;
    dg_env_gradcheck_result r;
    assert_int_equal(dg_env_gradcheck(env, &o, &r, &e), DG_OK);
    printf("  chase, learned evader: worst rel err %.2e over %lld (both players)\n", r.episode.max_rel_err,
           (long long)r.episode.checked);
    assert_true(r.episode.max_rel_err < 1e-3);
    assert_true(r.episode.checked > 12 * 6);  /* both MLPs' three layers' weights and biases */
    assert_int_equal(r.nzero, 0);
    setup_free(&s);
}

/* duel_simple: learned pursuer against learned evader capture within 5 % of
 * the exact equilibrium time (d - r) / (v_p - v_e), over a spread of distances */
static void test_duel_capture_time(void **state) {
    (void)state;
    setup s;
    setup_game(&s, "game: duel_simple\ntrain: {batch: 32, epochs: 500, lr: 0.003, snapshots: []}\n");
    dg_err e = {0};
    dg_trainer *t = dg_trainer_create(s.env, &s.o, NULL, NULL, &e);
    assert_non_null(t);
    assert_int_equal(dg_trainer_run(t, NULL, NULL, NULL, &e), DG_OK);
    const int B = 256, H = s.env->horizon;
    float *st = malloc((size_t)B * 4 * sizeof(float)), *traj = malloc((size_t)(H + 1) * B * 4 * sizeof(float));
    dg_rng rng;
    dg_rng_seed(&rng, 2024);
    assert_int_equal(s.env->game->reset(s.env, &rng, B, st, NULL, NULL), DG_OK);
    dg_ctx *ctx = dg_ctx_create(256 << 20);
    assert_non_null(dg_rollout(ctx, s.env, dg_trainer_policy(t), dg_trainer_params(t), st, NULL, B, 1.0f / B,
                               NULL, traj, B));
    double m[4];
    s.env->game->metrics(s.env, traj, NULL, B, H, m);
    printf("  duel_simple after 500 epochs: capture rate %.3f, time %.3f s, exact %.3f s, mean error %.1f %%\n",
           m[0], m[1], m[2], 100 * m[3]);
    assert_true(m[0] == 1.0);
    assert_true(m[3] < 0.05);
    dg_ctx_free(ctx);
    free(st);
    free(traj);
    dg_trainer_free(t);
    setup_free(&s);
}

/* reach: obstacle_hit_rate counts episodes inside an obstacle at some step
 * 1..H (never step 0), final_dist is the median final distance; chase:
 * left_arena counts episodes with a body outside [-1, 1]², and only where
 * there are walls */
static void test_rule_metrics(void **state) {
    (void)state;
    setup s;
    setup_game(&s, "game: reach\nenv: {horizon: 2}\n");  /* one obstacle: centre 0, radius 0.25 */
    const dg_env *env = s.env;
    assert_int_equal(env->nmetrics, 2);
    assert_string_equal(env->metric_names[0], "obstacle_hit_rate");
    assert_string_equal(env->metric_names[1], "final_dist");
    /* 4 episodes, (H + 1, B, 4): 0 goes through, 1 stays out, 2 ends inside, 3 starts inside only */
    const float P[3][4][2] = {{{-0.5f, 0}, {-0.5f, 0.5f}, {0.5f, 0.5f}, {0.1f, 0}},
                              {{0, 0.1f}, {0, 0.5f}, {0.5f, 0.4f}, {0.3f, 0}},
                              {{0.5f, 0}, {0.5f, 0.5f}, {0.2f, 0}, {0.6f, 0}}};
    const float goal[4][2] = {{0.5f, 0}, {0.5f, 0.2f}, {0, 0}, {0.6f, 0.4f}};
    float traj[3 * 4 * 4] = {0};
    for (int t = 0; t < 3; t++)
        for (int b = 0; b < 4; b++) {
            traj[(t * 4 + b) * 4] = P[t][b][0];
            traj[(t * 4 + b) * 4 + 1] = P[t][b][1];
        }
    double m[DG_MAX_METRICS];
    env->game->metrics(env, traj, &goal[0][0], 4, 2, m);
    assert_float_equal(m[0], 0.5, 1e-12);             /* episodes 0 and 2 */
    assert_float_equal(m[1], (0.2 + 0.3) / 2, 1e-6);  /* final distances 0, 0.3, 0.2, 0.4 */
    assert_true(env->game->violation(env, (float[]){0.1f, 0.1f, 0, 0}, goal[0]) == 1u);
    assert_true(env->game->violation(env, (float[]){0.3f, 0.0f, 0, 0}, goal[0]) == 0u);
    setup_free(&s);

    setup_game(&s, "game: chase\nenv: {horizon: 2}\n");
    env = s.env;
    assert_int_equal(env->nmetrics, 3);
    assert_string_equal(env->metric_names[2], "left_arena");
    /* 2 episodes, 8 columns: the first evader is outside at step 2, nobody in the second */
    float ct[3 * 2 * 8] = {0};
    for (int t = 0; t < 3; t++) {
        ct[(t * 2) * 8 + 4] = t == 2 ? 1.02f : 0.9f;  /* evader x */
        ct[(t * 2 + 1) * 8 + 0] = -0.5f;
        ct[(t * 2 + 1) * 8 + 4] = 0.5f;
    }
    env->game->metrics(env, ct, NULL, 2, 2, m);
    assert_float_equal(m[2], 0.5, 1e-12);
    assert_true(env->game->violation(env, &ct[(2 * 2) * 8], NULL) == 2u);  /* bit 1: the evader */
    setup_free(&s);
    setup_game(&s, "game: chase\nenv: {walls: false}\n");
    assert_int_equal(s.env->nmetrics, 2);  /* the open plane has no arena to leave */
    setup_free(&s);

    /* duel_simple: the first evader (0.6 from the pursuer, exact time (0.6 - 0.1) / (1 - 0.5) = 1 s)
     * is caught at step 1 (0.5 s: error 0.5), the second never; the times count captured episodes
     * only (test_duel_capture_time, slow tier, holds them against a trained pair) */
    setup_game(&s, "game: duel_simple\nenv: {horizon: 2, dt: 0.5, speed_pursuer: 1, speed_evader: 0.5, "
                   "capture_radius: 0.1}\n");
    env = s.env;
    assert_int_equal(env->nmetrics, 4);
    assert_string_equal(env->metric_names[1], "capture_time");
    assert_string_equal(env->metric_names[3], "capture_time_error");
    const float ex[3][2] = {{0.6f, 1}, {0.05f, 1}, {0.05f, 1}};  /* evader x of each episode, pursuer at 0 */
    float dt[3 * 2 * 4] = {0};
    for (int t = 0; t < 3; t++)
        for (int b = 0; b < 2; b++) dt[(t * 2 + b) * 4 + 2] = ex[t][b];
    env->game->metrics(env, dt, NULL, 2, 2, m);
    assert_float_equal(m[0], 0.5, 1e-12);  /* capture_rate */
    assert_float_equal(m[1], 0.5, 1e-12);  /* capture_time */
    assert_float_equal(m[2], 1.0, 1e-6);   /* reference_capture_time */
    assert_float_equal(m[3], 0.5, 1e-6);   /* capture_time_error */
    setup_free(&s);
}

/* replay frames: the agent is drawn red from the step it enters the obstacle,
 * in its own colour before */
static void test_replay_marks_violation(void **state) {
    (void)state;
    setup s;
    setup_game(&s, "game: reach\nenv: {horizon: 2}\n");
    const float traj[3 * 4] = {-0.6f, 0, 0, 0, -0.4f, 0, 0, 0, -0.1f, 0, 0, 0};  /* inside at step 2 */
    const float goal[2] = {0.7f, 0};
    dg_image *img = dg_image_create(200, 200 + DG_REPLAY_HEADER, 0);
    dg_err e = {0};
    dg_render_grid *g = dg_render_grid_create(50, 50, &e);
    float *heat = malloc(50 * 50 * sizeof(float));
    assert_non_null(img);
    assert_non_null(g);
    assert_non_null(heat);
    const float half = 1.08f;  /* the view's half-extent */
    for (int t = 1; t <= 2; t++) {
        dg_replay_frame(img, s.env, g, 0.08f, traj, goal, t, heat);
        const int px = (int)((traj[4 * t] + half) / (2 * half) * 200), py = DG_REPLAY_HEADER + 100;
        const uint32_t c = dg_image_get(img, px, py);
        printf("  replay step %d: agent pixel 0x%06x\n", t, (unsigned)c);
        if (t == 1) assert_true(c != DG_REPLAY_VIOLATION);
        else assert_true(c == DG_REPLAY_VIOLATION);
        int text = 0;  /* the header line's text: light pixels on its dark band */
        for (int y = 0; y < DG_REPLAY_HEADER; y++)
            for (int x = 0; x < 200; x++) text += (dg_image_get(img, x, y) & 0xff) > 0xc0;
        assert_true(text > 30);
    }
    {   /* the frame as a PNG: written whole, its size in the header */
        char png[64];
        snprintf(png, sizeof png, "/tmp/dg_test_replay_%d.png", (int)getpid());
        assert_int_equal(dg_png_write(img, png, &e), DG_OK);
        unsigned char hdr[24] = {0};
        FILE *f = fopen(png, "rb");
        assert_non_null(f);
        assert_int_equal(fread(hdr, 1, 24, f), 24);
        fclose(f);
        remove(png);
        assert_memory_equal(hdr, "\x89PNG\r\n\x1a\n", 8);
        assert_int_equal((hdr[16] << 24) | (hdr[17] << 16) | (hdr[18] << 8) | hdr[19], 200);
        assert_int_equal((hdr[20] << 24) | (hdr[21] << 16) | (hdr[22] << 8) | hdr[23], 200 + DG_REPLAY_HEADER);
    }
    free(heat);
    dg_render_grid_free(g);
    dg_image_free(img);
    setup_free(&s);
}

/* a track made once draws every frame as dg_replay_frame does (which reads the episode anew) */
static void test_replay_track_same_frames(void **state) {
    (void)state;
    setup s;
    setup_game(&s, "game: reach\nenv: {horizon: 4}\n");
    const float traj[5 * 4] = {-0.6f, 0, 0, 0, -0.4f, 0, 0, 0, -0.1f, 0, 0, 0, 0.2f, 0.1f, 0, 0, 0.5f, 0.1f, 0, 0};
    const float goal[2] = {0.7f, 0};
    dg_image *a = dg_image_create(120, 120 + DG_REPLAY_HEADER, 0), *b = dg_image_create(120, 120 + DG_REPLAY_HEADER, 0);
    dg_err e = {0};
    dg_render_grid *g = dg_render_grid_create(30, 30, &e);
    float *heat = malloc(30 * 30 * sizeof(float));
    dg_replay_track *tr = dg_replay_track_create(s.env, traj, goal, 5, &e);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(g);
    assert_non_null(heat);
    assert_non_null(tr);
    assert_null(dg_replay_track_create(s.env, traj, goal, 0, &e));
    assert_int_equal(e.status, DG_ERR_ARG);
    for (int t = 0; t <= 4; t++) {
        dg_replay_frame(a, s.env, g, 0.08f, traj, goal, t, heat);
        dg_replay_draw(b, s.env, tr, g, 0.08f, t, heat);
        assert_memory_equal(a->rgb, b->rgb, (size_t)a->w * a->h * 3);
    }
    dg_replay_track_free(tr);
    dg_replay_track_free(NULL);
    free(heat);
    dg_render_grid_free(g);
    dg_image_free(a);
    dg_image_free(b);
    setup_free(&s);
}

static void record_lr(const dg_train_event *ev, void *user) {
    if (ev->kind == DG_TRAIN_EV_EPOCH) ((double *)user)[ev->stats->epoch] = ev->stats->lr;
}

/* linear warmup: epoch k of W uses lr · k / W, then lr */
static void test_warmup(void **state) {
    (void)state;
    setup s;
    setup_game(&s, "game: reach\ntrain: {batch: 4, epochs: 6, lr: 0.004, warmup: 4, snapshots: []}\n");
    dg_err e = {0};
    dg_trainer *t = dg_trainer_create(s.env, &s.o, NULL, NULL, &e);
    double lr[8] = {0};
    assert_int_equal(dg_trainer_run(t, record_lr, lr, NULL, &e), DG_OK);
    const double want[7] = {0, 0.001, 0.002, 0.003, 0.004, 0.004, 0.004};
    for (int k = 1; k <= 6; k++) assert_float_equal(lr[k], want[k], 1e-9);
    dg_trainer_free(t);
    setup_free(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_games_gradcheck),
        cmocka_unit_test(test_renderer_on_tape),
        cmocka_unit_test(test_single_batch_overfit),
        cmocka_unit_test(test_deterministic_metrics),
        cmocka_unit_test(test_nan_guard),
        cmocka_unit_test(test_warmup),
        cmocka_unit_test(test_checkpointed_bptt_identical),
        cmocka_unit_test(test_two_player_gradcheck),
        cmocka_unit_test(test_reach_cost_bits),
        cmocka_unit_test(test_reach_rows_bits),
        cmocka_unit_test(test_rule_metrics),
        cmocka_unit_test(test_replay_marks_violation),
        cmocka_unit_test(test_replay_track_same_frames),
    };
    /* the long anchors: the slow tier (tests/util/tier.h) */
    const struct CMUnitTest slow[] = {
        cmocka_unit_test(test_duel_capture_time),
    };
    return dg_test_run_tiers(tests, slow, NULL, NULL);
}
