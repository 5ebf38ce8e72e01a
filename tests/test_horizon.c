/* Long-horizon tools: truncated BPTT (train.truncate) and the state-gradient diagnostic.
 * truncate >= H is the full gradient to the bit; truncate < H is the gradient of the truncated
 * objective, computed here independently window by window with dg_rollout; checkpointing inside
 * the windows, threads and a resume change no bit; the diagnostic's norms are those of the
 * states' gradients on the tape and flag an exploding gradient. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "difgames/difgames.h"
#include "util/check.h"
#include "util/tmpdir.h"

static char g_dir[64];

static int setup(void **state) {
    (void)state;
    return check_tmpdir(g_dir, "dg_horizon_");
}

/* An episode's parts: the game, its policy (MLP or open-loop plan) and a batch. */
typedef struct episode {
    dg_cfg    *cfg;
    dg_env    *env;
    dg_train_opts o;
    dg_policy  pol;
    dg_params *p;
    float     *st, *aux;
    int        B, S, H;
} episode;

static void episode_open(episode *x, const char *yaml, int B) {
    dg_err e = {0};
    x->env = check_env(yaml, &x->cfg, &x->o);
    x->B = B;
    x->S = x->env->state_dim;
    x->H = x->env->horizon;
    if ((x->o.open_loop ? dg_policy_create_plan(x->env, &x->pol, &x->p, &e)
                        : dg_policy_create(x->env, x->o.hidden, x->o.nhidden, &x->pol, &x->p, &e)) != DG_OK)
        fail_msg("%s", e.msg);
    dg_rng rng;
    dg_rng_seed(&rng, 5);
    dg_policy_reset_params(&x->pol, x->p, &rng);
    for (size_t i = 0; x->o.open_loop && i < x->p->total; i++)  /* plans start at zero: move them */
        x->p->data[i] = 0.5f * (float)sin(0.7 * (double)i + 0.3);
    x->st = malloc((size_t)B * x->S * sizeof(float));
    x->aux = malloc((size_t)B * (x->env->aux_dim ? x->env->aux_dim : 1) * sizeof(float));
    assert_true(x->st && x->aux);
    assert_int_equal(x->env->game->reset(x->env, &rng, B, x->st, x->aux, &e), DG_OK);
}

static void episode_close(episode *x) {
    free(x->st);
    free(x->aux);
    dg_params_free(x->p);
    dg_env_free(x->env);
    dg_cfg_free(x->cfg);
}

/* dg_episode_grad of x with every and truncate: loss, terms, gradient (g, p->total), trajectory. */
static void grad_of(episode *x, int every, int truncate, double *loss, float *terms, float *g, float *traj) {
    const int n = dg_episode_saved(x->H, every, truncate);
    float *saved = n ? malloc((size_t)n * x->B * x->S * sizeof(float)) : NULL;
    assert_true(!n || saved);
    dg_ctx *ctx = dg_ctx_create(64 << 20);
    assert_non_null(ctx);
    dg_params_zero_grad(x->p);
    assert_int_equal(dg_episode_grad(ctx, x->env, &x->pol, x->p, x->st, x->aux, x->B, 1.0f / (float)x->B, every,
                                     truncate, saved, loss, terms, traj, x->B), DG_OK);
    memcpy(g, x->p->grad, x->p->total * sizeof(float));
    dg_ctx_free(ctx);
    free(saved);
}

static double max_abs(const float *a, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fmax(m, fabs((double)a[i]));
    return m;
}

/* The truncated objective's gradient, independently: each window of K steps is an episode of its
 * own (a copy of the game with that horizon) from the state the full rollout reached there, on its
 * own tape; its loss is a mean over its steps, so it weighs len/H in the whole episode's. Only
 * for MLP policies (a plan's step index would start again at each window). */
static void windows_reference(episode *x, int K, const float *traj, double *ref) {
    const size_t total = x->p->total;
    memset(ref, 0, total * sizeof(double));
    for (int T0 = 0; T0 < x->H; T0 += K) {
        dg_env w = *x->env;
        w.horizon = T0 + K < x->H ? K : x->H - T0;
        dg_ctx *ctx = dg_ctx_create(64 << 20);
        dg_params_zero_grad(x->p);
        dg_tensor *l = dg_rollout(ctx, &w, &x->pol, x->p, traj + (size_t)T0 * x->B * x->S, x->aux, x->B,
                                  1.0f / (float)x->B, NULL, NULL, x->B);
        assert_non_null(l);
        assert_int_equal(dg_backward(ctx, l), DG_OK);
        for (size_t i = 0; i < total; i++) ref[i] += (double)w.horizon / x->H * x->p->grad[i];
        dg_ctx_free(ctx);
    }
}

/* K >= H and K = 0 give the same bits; K < H gives the windows' gradient, the loss and the
 * trajectory of the whole episode to the bit, and the same bits with checkpointing inside. */
static void check_game(const char *yaml, int B, const int *Ks, int nK) {
    episode x;
    episode_open(&x, yaml, B);
    const size_t total = x.p->total, TL = (size_t)(x.H + 1) * B * x.S;
    float *g0 = malloc(total * sizeof(float)), *g1 = malloc(total * sizeof(float)), *g2 = malloc(total * sizeof(float));
    float *tr0 = malloc(TL * sizeof(float)), *tr1 = malloc(TL * sizeof(float));
    double *ref = malloc(total * sizeof(double));
    float terms0[DG_LOSS_MAX_TERMS], terms1[DG_LOSS_MAX_TERMS];
    double loss0, loss1;
    grad_of(&x, 0, 0, &loss0, terms0, g0, tr0);
    const int same[] = {x.H, x.H + 7};
    for (int k = 0; k < 2; k++) {
        grad_of(&x, 0, same[k], &loss1, terms1, g1, tr1);
        assert_true(loss0 == loss1);
        assert_memory_equal(g0, g1, total * sizeof(float));
        grad_of(&x, 5, same[k], &loss1, terms1, g1, tr1);  /* checkpointed: still the full gradient */
        assert_memory_equal(g0, g1, total * sizeof(float));
    }
    for (int k = 0; k < nK; k++) {
        const int K = Ks[k];
        grad_of(&x, 0, K, &loss1, terms1, g1, tr1);
        assert_true(loss0 == loss1);  /* the forward is the whole episode's */
        assert_memory_equal(terms0, terms1, x.env->nterms * sizeof(float));
        assert_memory_equal(tr0, tr1, TL * sizeof(float));
        const double scale = max_abs(g0, total);
        double diff_full = 0;
        for (size_t i = 0; i < total; i++) diff_full = fmax(diff_full, fabs((double)g1[i] - g0[i]));
        printf("  %-8s H %3d K %3d: |g_trunc - g_full| / |g_full| = %.3g", x.env->game->name, x.H, K,
               diff_full / scale);
        assert_true(diff_full > 1e-3 * scale);  /* truncation changes the gradient */
        if (!x.o.open_loop) {
            windows_reference(&x, K, tr0, ref);
            double err = 0, rs = 0;
            for (size_t i = 0; i < total; i++) {
                err = fmax(err, fabs(g1[i] - ref[i]));
                rs = fmax(rs, fabs(ref[i]));
            }
            printf(", against the windows' own gradients %.3g", err / rs);
            assert_true(err <= 2e-5 * rs);
        }
        printf("\n");
        const int ck[] = {1, 3, K - 1};
        for (int c = 0; c < 3; c++) {  /* checkpointed windows: the same bits */
            if (ck[c] < 1) continue;
            grad_of(&x, ck[c], K, &loss1, terms1, g2, tr1);
            assert_true(loss0 == loss1);
            assert_memory_equal(g1, g2, total * sizeof(float));
            assert_memory_equal(tr0, tr1, TL * sizeof(float));
        }
    }
    free(g0);
    free(g1);
    free(g2);
    free(tr0);
    free(tr1);
    free(ref);
    episode_close(&x);
}

static void test_truncate_policy(void **state) {
    (void)state;
    check_game("game: reach\nenv: {horizon: 23}\npolicy: {hidden: [8, 8]}\n", 5, (const int[]){1, 4, 10, 22}, 4);
    check_game("game: racing\nenv: {horizon: 30}\npolicy: {hidden: [16]}\n", 4, (const int[]){7, 15}, 2);
    check_game("game: chase\nenv: {horizon: 20, evader: policy}\npolicy: {hidden: [8]}\n", 3, (const int[]){6}, 1);
}

/* Open loop: a planned action reaches only the costs of its own window, so in the last window the
 * plan's gradient is the full one (the same costs after it), earlier it is not. */
static void test_truncate_open_loop(void **state) {
    (void)state;
    const char *yaml = "game: reach\nenv: {horizon: 20}\ntrain: {mode: open_loop}\n";
    check_game(yaml, 3, (const int[]){6, 13}, 2);
    episode x;
    episode_open(&x, yaml, 3);
    const size_t total = x.p->total;
    const int A = x.env->act_dim, K = 6, last0 = (x.H - 1) / K * K;  /* plan row t-1 acts at step t */
    assert_int_equal(total, (size_t)x.H * A);
    float *g0 = malloc(total * sizeof(float)), *g1 = malloc(total * sizeof(float));
    double l;
    float terms[DG_LOSS_MAX_TERMS];
    grad_of(&x, 0, 0, &l, terms, g0, NULL);
    grad_of(&x, 0, K, &l, terms, g1, NULL);
    const double scale = max_abs(g0, total);
    for (int t = last0; t < x.H; t++)
        for (int a = 0; a < A; a++) assert_true(fabs(g1[t * A + a] - g0[t * A + a]) <= 1e-6 * scale);
    double early = 0;
    for (int t = 0; t < last0; t++)
        for (int a = 0; a < A; a++) early = fmax(early, fabs(g1[t * A + a] - g0[t * A + a]));
    assert_true(early > 1e-3 * scale);
    free(g0);
    free(g1);
    episode_close(&x);
}

static void keep_last(const dg_train_event *ev, void *user) {
    if (ev->kind == DG_TRAIN_EV_INIT) *(dg_state_grads *)user = *ev->state_grads;
}

/* A racing run with train.truncate (reduced) on 2 threads: read from the config; run twice, resumed
 * after 3 epochs of 5, or checkpointed inside the windows, the same bits. */
static void test_truncate_train(void **state) {
    (void)state;
    static const char YAML[] = "game: racing\nseed: 2\nenv: {horizon: 24}\npolicy: {hidden: [16]}\n"
                               "train: {batch: 6, epochs: 5, truncate: 5, snapshots: [3], resume_every: 0}\n";
    float *w[4] = {0};
    size_t total = 0;
    const char *names[] = {"t2", "t2b", "r", "ck"};
    for (int k = 0; k < 4; k++) {
        dg_err e = {0};
        dg_run r;
        const dg_run_set sets[][2] = {{{"train.threads", "2"}, {"train.epochs", "5"}},
                                      {{"train.threads", "2"}, {"train.epochs", "5"}},
                                      {{"train.threads", "2"}, {"train.epochs", "3"}},
                                      {{"train.checkpoint_every", "2"}, {"train.threads", "2"}}};
        char dir[128];
        snprintf(dir, sizeof dir, "%s/%s", g_dir, names[k]);
        if (dg_run_parse(&r, YAML, strlen(YAML), "racing.yaml", sets[k], 2, &e) != DG_OK) fail_msg("%s", e.msg);
        assert_int_equal(r.opts.truncate, 5);
        dg_run_train_result res;
        dg_state_grads sg = {0};
        if (dg_run_train(&r, dir, NULL, 0, keep_last, &sg, NULL, &res, &e) != DG_OK) fail_msg("%s", e.msg);
        assert_int_equal(sg.n, 6);  /* H-1, H-2, H-5, H-10, H-20 and 0 */
        dg_run_free(&r);
        if (k == 2) {  /* go on to epoch 5 from its resume file */
            const dg_run_set more[] = {{"train.threads", "2"}, {"train.epochs", "5"}};
            char rpath[160];
            snprintf(rpath, sizeof rpath, "%s/resume.safetensors", dir);
            if (dg_run_parse(&r, YAML, strlen(YAML), "racing.yaml", more, 2, &e) != DG_OK) fail_msg("%s", e.msg);
            if (dg_run_train(&r, dir, rpath, 1, NULL, NULL, NULL, &res, &e) != DG_OK) fail_msg("%s", e.msg);
            dg_run_free(&r);
        }
        char path[192];
        snprintf(path, sizeof path, "%s/final.safetensors", dir);
        dg_run rl;
        if (dg_run_parse(&rl, YAML, strlen(YAML), "racing.yaml", NULL, 0, &e) != DG_OK) fail_msg("%s", e.msg);
        dg_policy m;
        dg_params *p = NULL;
        if (dg_run_policy_load(&rl, path, &m, &p, &e) != DG_OK) fail_msg("%s", e.msg);
        total = p->total;
        w[k] = malloc(total * sizeof(float));
        memcpy(w[k], p->data, total * sizeof(float));
        dg_params_free(p);
        dg_run_free(&rl);
    }
    for (int k = 1; k < 4; k++) assert_memory_equal(w[0], w[k], total * sizeof(float));
    for (int k = 0; k < 4; k++) free(w[k]);
}

/* The diagnostic: its times 1, 2, 5, ... back and t = 0; its norm at t = 0 that of the loss's
 * finite differences in the initial state; reach (stable, damped) not flagged, billiards with
 * little friction over 400 steps (a chain of contacts) flagged. */
static void test_state_grads(void **state) {
    (void)state;
    episode x;
    episode_open(&x, "game: reach\nenv: {horizon: 30}\npolicy: {hidden: [8]}\n", 4);
    dg_ctx *ctx = dg_ctx_create(64 << 20);
    dg_state_grads r;
    assert_int_equal(dg_episode_state_grads(ctx, x.env, &x.pol, x.p, x.st, x.aux, x.B, &r), DG_OK);
    const int want[] = {29, 28, 25, 20, 10, 0};
    assert_int_equal(r.n, 6);
    assert_int_equal(r.rows, 4);
    for (int i = 0; i < r.n; i++) {
        assert_int_equal(r.t[i], want[i]);
        assert_true(isfinite(r.norm[i]) && r.norm[i] > 0);
    }
    assert_int_equal(r.ref, 0);
    assert_false(r.chaotic);
    /* |d loss / d x_0| by central differences of the loss in double over every state element */
    const size_t n = (size_t)x.B * x.S;
    double ss = 0;
    for (size_t i = 0; i < n; i++) {
        const float keep = x.st[i], h = 1e-2f;
        double lp, lm;
        x.st[i] = keep + h;
        dg_tensor *l = dg_rollout(ctx, x.env, &x.pol, x.p, x.st, x.aux, x.B, 1.0f / (float)x.B, NULL, NULL, x.B);
        lp = l->data[0];
        dg_ctx_reset(ctx);
        x.st[i] = keep - h;
        l = dg_rollout(ctx, x.env, &x.pol, x.p, x.st, x.aux, x.B, 1.0f / (float)x.B, NULL, NULL, x.B);
        lm = l->data[0];
        dg_ctx_reset(ctx);
        x.st[i] = keep;
        const double d = (lp - lm) / (2.0 * h);
        ss += d * d;
    }
    printf("  reach |dL/dx_0| backward %.6g, finite differences %.6g\n", r.norm[r.n - 1], sqrt(ss));
    assert_true(fabs(r.norm[r.n - 1] - sqrt(ss)) <= 2e-2 * sqrt(ss));
    dg_ctx_free(ctx);
    episode_close(&x);

    /* billiards with little friction over a long horizon (many contacts): the gradient explodes
     * going back */
    episode b;
    episode_open(&b, "game: billiards\nenv: {horizon: 400, damping: 0.999, shot_speed: 8.0}\n", 1);
    ctx = dg_ctx_create(64 << 20);
    assert_int_equal(dg_episode_state_grads(ctx, b.env, &b.pol, b.p, b.st, b.aux, 1, &r), DG_OK);
    printf("  billiards H 400, damping 0.999: growth x%.3g at t = %d (window %d)\n", r.growth, r.growth_t, r.window);
    assert_true(r.chaotic && r.growth > DG_STATE_GRADS_CHAOS);
    assert_true(r.window >= 1 && r.window < 400);
    dg_ctx_free(ctx);
    episode_close(&b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truncate_policy),
        cmocka_unit_test(test_truncate_open_loop),
        cmocka_unit_test(test_truncate_train),
        cmocka_unit_test(test_state_grads),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
