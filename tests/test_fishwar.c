/* fishwar (the great fish war, Levhari & Mirman 1980): the closed-form feedback Nash catch played as
 * function players gives each country the discounted utility of its closed form, a unilateral
 * deviation loses, and the cooperative catch gives both more (the tragedy of the commons); at the Nash
 * catch each country's own cost is flat in its own action (its gradient on the tape); requests
 * above env.ration are rationed and shared in proportion; each country's cost is its own term (general-sum), or
 * with env.cooperative both (the joint cost, flat at the cooperative catch); bad keys
 * are refused. (Finite differences of its step, cost and an episode: test_games, every game.) */
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
#include "util/check.h"

/* a country that always catches the fraction f of the stock: the action the game maps onto f
 * (env.request's default [0.01, 0.99]; requests below env.ration's lo, 0.9, are granted in full) */
static dg_tensor *fraction_act(dg_ctx *ctx, void *user, int t, dg_tensor *obs, int B) {
    (void)t;
    (void)obs;
    const double f = *(const double *)user, lo = 0.01, hi = 0.99;
    return dg_full(ctx, 2, (int[]){B, 1}, (float)(2 * (f - lo) / (hi - lo) - 1));
}

/* sum_(t < H) q^t */
static double geo(double q, int H) { return (1 - pow(q, H)) / (1 - q); }

/* Country i's utility sum_(t < H) beta^t log c_i,t from x0 when country i catches f_i x and both
 * together F x, each step: log x_t = alpha^t log x0 + alpha log(1 - F) (1 - alpha^t) / (1 - alpha), so
 * U = log f_i S(beta) + log x0 S(alpha beta) + alpha log(1 - F) / (1 - alpha) (S(beta) - S(alpha beta)),
 * S(q) = sum_(t < H) q^t (H -> infinity: V_i(x0) = A_i + log x0 / (1 - alpha beta), docs/economics.md). */
static double utility(double fi, double F, double x0, double alpha, double beta, int H) {
    return log(fi) * geo(beta, H) + log(x0) * geo(alpha * beta, H) +
           alpha * log(1 - F) / (1 - alpha) * (geo(beta, H) - geo(alpha * beta, H));
}

typedef struct played {
    double cost[2];      /* each country's cost, the game's terms: -(1/H) sum_t beta^t log c_i, batch mean */
    double exact[2];     /* the closed form's of the same starts, the same scale                         */
    double frac[2];      /* catch_fraction_1, catch_fraction_2                                            */
} played;

/* Both countries catch fixed fractions f[0], f[1] over B starts of env; the game's costs against the
 * closed form's */
static played play(const dg_env *env, const double *f) {
    enum { B = 16 };
    const int H = env->horizon;
    dg_real *st, *aux;
    dg_err e = {0};
    assert_int_equal(dg_run_init_draw(env, 7, B, &st, &aux, &e), DG_OK);
    dg_policy pol;
    dg_params *p;
    assert_int_equal(dg_policy_create(env, (int[]){4}, 1, &pol, &p, &e), DG_OK);
    for (int i = 0; i < 2; i++) {
        pol.fn[i] = fraction_act;
        pol.fn_user[i] = (void *)&f[i];
    }
    float *traj = malloc((size_t)(H + 1) * B * env->state_dim * sizeof *traj);
    dg_ctx *ctx = dg_ctx_create(64 << 20);
    float terms[DG_LOSS_MAX_TERMS];
    assert_non_null(dg_rollout(ctx, env, &pol, p, st, aux, B, 1.0f / B, terms, traj, B));
    played r = {{terms[0], terms[1]}, {0, 0}, {0, 0}};
    const double alpha = 0.5, beta = 0.95;  /* the defaults */
    for (int b = 0; b < B; b++)
        for (int i = 0; i < 2; i++)
            r.exact[i] -= utility(f[i], f[0] + f[1], st[(size_t)b * env->state_dim], alpha, beta, H) / H / B;
    double m[DG_MAX_METRICS];
    env->game->metrics(env, traj, aux, B, H, m);
    r.frac[0] = m[0];
    r.frac[1] = m[1];
    dg_ctx_free(ctx);
    dg_params_free(p);
    free(traj);
    free(st);
    free(aux);
    return r;
}

/* The feedback Nash catch c_i = (1 - alpha beta) / (2 - alpha beta) x of both: each country's cost is
 * minus its closed-form discounted utility over the H steps, over H (the loss's mean over steps),
 * to 1e-4 relative; metrics report the fractions. A country that deviates alone (catching 0.05 more
 * or less, or requesting all it may) does worse; the cooperative catch (1 - alpha beta) x shared equally gives both more: the
 * tragedy of the commons, measured. H = 200 (beta^H = 3.5e-5), so the H-step utilities are also
 * within 1e-3 of the infinite horizon's V_i(x) (checked against the closed form, not assumed). */
static void test_nash_and_commons(void **state) {
    (void)state;
    dg_cfg *cfg;
    dg_env *env = check_env("game: fishwar\nenv: {horizon: 200}\n", &cfg, NULL);
    assert_int_equal(env->general_sum, 1);
    assert_true(env->player_share[0][0] == 1 && env->player_share[0][1] == 0);
    assert_true(env->player_share[1][0] == 0 && env->player_share[1][1] == 1);
    const double ab = 0.5 * 0.95, nash = (1 - ab) / (2 - ab), coop = (1 - ab) / 2;
    const double fn[2] = {nash, nash}, fc[2] = {coop, coop};
    played n = play(env, fn), c = play(env, fc);
    for (int i = 0; i < 2; i++) {
        print_message("country %d: Nash cost %.6f (closed form %.6f), catch fraction %.6f (Nash %.6f); "
                      "cooperative cost %.6f (closed form %.6f)\n", i + 1, n.cost[i], n.exact[i], n.frac[i], nash,
                      c.cost[i], c.exact[i]);
        assert_true(fabs(n.cost[i] - n.exact[i]) < 1e-4 * fabs(n.exact[i]));
        assert_true(fabs(c.cost[i] - c.exact[i]) < 1e-4 * fabs(c.exact[i]));
        assert_true(fabs(n.frac[i] - nash) < 1e-5 && fabs(c.frac[i] - coop) < 1e-5);
        assert_true(c.cost[i] < n.cost[i]);  /* cooperation: every country better off */
    }
    /* the infinite horizon's value, V(x) = A + log x / (1 - alpha beta), against the H-step sum: the
     * tail beta^H (A + ...) is below 1e-3 of it at H = 200 */
    const double A = (log(nash) + ab / (1 - ab) * log(1 - 2 * nash)) / (1 - 0.95);
    const double x = 0.5, V = A + log(x) / (1 - ab);
    assert_true(fabs(utility(nash, 2 * nash, x, 0.5, 0.95, 200) - V) < 1e-3 * fabs(V));
    /* unilateral deviations: country 1 alone catches 0.05 more or less, country 2 stays at Nash */
    for (int s = -1; s <= 1; s += 2) {
        const double fd[2] = {nash + 0.05 * s, nash};
        played d = play(env, fd);
        print_message("country 1 deviates to %.4f: cost %.6f (Nash %.6f)\n", fd[0], d.cost[0], n.cost[0]);
        assert_true(fabs(d.cost[0] - d.exact[0]) < 1e-4 * fabs(d.exact[0]));
        assert_true(d.cost[0] > n.cost[0]);
    }
    /* and the greediest request, 0.99, rationed with Nash's 0.344 (G = 0.9 + 0.09 tanh(4.8)), worse still */
    const double fg[2] = {0.99, nash};
    played d = play(env, fg);
    print_message("country 1 requests 0.99: cost %.6f, catch fraction %.4f\n", d.cost[0], d.frac[0]);
    assert_true(d.cost[0] > n.cost[0]);
    dg_env_free(env);
    dg_cfg_free(cfg);
}

/* Each country's own cost (its player_share of the weighted terms, what a general-sum trainer descends
 * for it) over H steps of 8 starts when both request the constant fraction f, and its gradient with
 * respect to its own action, through the game's tape: g[i] = d cost_i / d a_i */
static void own_gradients(const dg_env *env, double f, double *g, double *cost) {
    enum { B = 8 };
    dg_real *st, *aux;
    dg_err e = {0};
    assert_int_equal(dg_run_init_draw(env, 3, B, &st, &aux, &e), DG_OK);
    dg_params *p = dg_params_create();
    const int a = dg_params_add(p, "a", 2, (int[]){1, 2}, &e);
    assert_true(a >= 0);
    dg_params_data(p, a)[0] = dg_params_data(p, a)[1] = (float)(2 * (f - 0.01) / 0.98 - 1);
    dg_ctx *ctx = dg_ctx_create(64 << 20);
    for (int i = 0; i < 2; i++) {
        dg_ctx_reset(ctx);
        dg_params_zero_grad(p);
        dg_real w[DG_LOSS_MAX_TERMS];
        for (int k = 0; k < env->nterms; k++) w[k] = env->player_share[i][k] * env->term_weights[k];
        dg_loss l;
        assert_int_equal(dg_loss_begin(&l, env->nterms, w), DG_OK);
        dg_tensor *s = dg_from(ctx, 2, (int[]){B, env->state_dim}, st);
        dg_tensor *act = dg_add(ctx, dg_zeros(ctx, 2, (int[]){B, 2}), dg_param(ctx, p, a));
        for (int t = 1; t <= env->horizon; t++) s = dg_env_advance(ctx, env, t, s, NULL, act, 1.0f / B, &l);
        dg_tensor *loss = dg_loss_finish(ctx, &l, NULL);
        assert_non_null(loss);
        assert_int_equal(dg_backward(ctx, loss), DG_OK);
        cost[i] = loss->data[0];
        g[i] = dg_params_grad(p, a)[i];
    }
    dg_ctx_free(ctx);
    dg_params_free(p);
    free(st);
    free(aux);
}

/* The Nash catch is where each country's own cost is flat in its own action (the stationary point of
 * simultaneous descent on the two costs): there d cost_i / d a_i is below 1e-3 of its size at the
 * cooperative catch, where each country would lower its own cost by catching more (gradient < 0),
 * and at 0.45 each, where it would catch less (> 0) */
static void test_own_gradients(void **state) {
    (void)state;
    dg_cfg *cfg;
    dg_env *env = check_env("game: fishwar\nenv: {horizon: 200}\n", &cfg, NULL);
    const double ab = 0.5 * 0.95, nash = (1 - ab) / (2 - ab), coop = (1 - ab) / 2;
    double gn[2], gc[2], gh[2], c[2];
    own_gradients(env, nash, gn, c);
    own_gradients(env, coop, gc, c);
    own_gradients(env, 0.45, gh, c);
    for (int i = 0; i < 2; i++) {
        print_message("country %d: d cost / d own action %.3g at Nash, %.3g cooperative, %.3g at 0.45\n", i + 1, gn[i],
                      gc[i], gh[i]);
        assert_true(gc[i] < 0 && gh[i] > 0);
        assert_true(fabs(gn[i]) < 1e-3 * fabs(gc[i]));
    }
    dg_env_free(env);
    dg_cfg_free(cfg);
}

/* env.cooperative: each country's cost is the sum of both terms (shares 1 and 1), so the players are a
 * team whose stationary point is the planner's: d cost_i / d a_i of the joint cost is flat at the
 * cooperative catch (1 - alpha beta)/2 each, below 1e-3 of its size at the Nash catch (where each
 * would lower the joint cost by catching less, > 0) and at 0.2 (by catching more, < 0) */
static void test_cooperative(void **state) {
    (void)state;
    dg_cfg *cfg;
    dg_env *env = check_env("game: fishwar\nenv: {horizon: 200, cooperative: true}\n", &cfg, NULL);
    assert_int_equal(env->general_sum, 1);
    for (int i = 0; i < 2; i++) assert_true(env->player_share[i][0] == 1 && env->player_share[i][1] == 1);
    assert_string_equal(env->player_names[0], "country_1");
    const double ab = 0.5 * 0.95, nash = (1 - ab) / (2 - ab), coop = (1 - ab) / 2;
    double gc[2], gn[2], gl[2], c[2], cn[2], cl[2];
    own_gradients(env, coop, gc, c);
    own_gradients(env, nash, gn, cn);
    own_gradients(env, 0.2, gl, cl);
    for (int i = 0; i < 2; i++) {
        print_message("cooperative, country %d: d joint cost / d own action %.3g at the cooperative catch, %.3g at "
                      "Nash, %.3g at 0.2\n", i + 1, gc[i], gn[i], gl[i]);
        assert_true(gn[i] > 0 && gl[i] < 0);
        assert_true(fabs(gc[i]) < 1e-3 * fabs(gn[i]));
        assert_true(c[i] < cn[i] && c[i] < cl[i]);  /* the joint cost is least there */
    }
    assert_float_equal(c[0], c[1], 1e-6 * fabs(c[0]));  /* one joint cost for both */
    dg_env_free(env);
    dg_cfg_free(cfg);
}

/* one step of one row from x with actions a1, a2: the next state */
static void step1(const dg_env *env, float x, float a1, float a2, float *next) {
    dg_ctx *ctx = dg_ctx_create(1 << 20);
    dg_tensor *s = dg_from(ctx, 2, (int[]){1, 4}, (float[]){x, 1, 0, 0});
    dg_tensor *n = env->game->step(ctx, env, s, NULL, dg_from(ctx, 2, (int[]){1, 2}, (float[]){a1, a2}));
    assert_non_null(n);
    memcpy(next, n->data, 4 * sizeof(float));
    dg_ctx_free(ctx);
}

/* Requests map affinely onto env.request; requests totalling R over env.ration's lo are granted
 * lo + (hi - lo) tanh((R - lo)/(hi - lo)) in all, in proportion to the requests; below it each gets
 * its request */
static void test_requests_shared(void **state) {
    (void)state;
    dg_cfg *cfg;
    dg_env *env = check_env("game: fishwar\nenv: {request: [0.1, 0.9], ration: [0.7, 0.8], alpha: 0.5, beta: 0.9}\n", &cfg, NULL);
    float n[4];
    step1(env, 0.64f, -1.0f, 0.0f, n);  /* requests 0.1 and 0.5: 0.6, below 0.7 */
    assert_float_equal(n[2], 0.1f * 0.64f, 1e-6);
    assert_float_equal(n[3], 0.5f * 0.64f, 1e-6);
    assert_float_equal(n[0], sqrtf(0.4f * 0.64f), 1e-6);
    assert_float_equal(n[1], 0.9f, 1e-7);  /* the discount of the next catch */
    step1(env, 0.64f, 1.0f, 0.0f, n);   /* requests 0.9 and 0.5 total 1.4: G = 0.7 + 0.1 tanh(7), shared 9 : 5 */
    const double G = 0.7 + 0.1 * tanh(7.0);
    assert_float_equal(n[2], G * 0.9 / 1.4 * 0.64, 1e-6);
    assert_float_equal(n[3], G * 0.5 / 1.4 * 0.64, 1e-6);
    assert_float_equal(n[0], sqrt((1 - G) * 0.64), 1e-6);
    step1(env, 0.64f, 0.0f, 0.05f, n);  /* 0.5 and 0.52 total 1.02: G = 0.7 + 0.1 tanh(3.2) */
    const double G2 = 0.7 + 0.1 * tanh(3.2);
    assert_float_equal(n[2] + n[3], G2 * 0.64, 1e-6);
    assert_float_equal(n[2] / n[3], 0.5 / 0.52, 1e-5);
    /* the step's cost: -beta^(t-1) log c_i on the new state (its discount column over beta) */
    dg_ctx *ctx = dg_ctx_create(1 << 20);
    dg_tensor *terms[DG_LOSS_MAX_TERMS] = {0};
    env->game->step_cost(ctx, env, dg_from(ctx, 2, (int[]){1, 4}, (float[]){0.3f, 0.81f, 0.2f, 0.1f}), NULL,
                         dg_zeros(ctx, 2, (int[]){1, 2}), 1.0f, terms);
    assert_float_equal(terms[0]->data[0], -0.9 * log(0.2), 1e-6);
    assert_float_equal(terms[1]->data[0], -0.9 * log(0.1), 1e-6);
    dg_ctx_free(ctx);
    dg_env_free(env);
    dg_cfg_free(cfg);
}

/* each bad key is refused in one line that names it */
static void test_bad_keys(void **state) {
    (void)state;
    const char *bad[][2] = {
        {"game: fishwar\nenv: {alpha: 1}\n", "env.alpha"},
        {"game: fishwar\nenv: {beta: 0}\n", "env.beta"},
        {"game: fishwar\nenv: {request: [0, 0.5]}\n", "env.request"},
        {"game: fishwar\nenv: {request: [0.6, 0.5]}\n", "env.request"},
        {"game: fishwar\nenv: {ration: [0.9, 1]}\n", "env.ration"},
        {"game: fishwar\nenv: {ration: [0.9, 0.9]}\n", "env.ration"},
        {"game: fishwar\nenv: {stock: [0, 1]}\n", "env.stock"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        dg_err e = {0};
        dg_cfg *c = dg_cfg_parse(bad[k][0], strlen(bad[k][0]), "test.yaml", &e);
        assert_non_null(c);
        assert_null(dg_env_create(c, &e));
        if (!strstr(e.msg, bad[k][1])) fail_msg("%s: %s", bad[k][1], e.msg);
        dg_cfg_free(c);
    }
}

/* replays draw both catches (bodies 0 and 1: the countries, whom `play --as` drives) and the stock
 * inside the frame */
static void test_bodies(void **state) {
    (void)state;
    dg_cfg *cfg;
    dg_env *env = check_env("game: fishwar\n", &cfg, NULL);
    float xy[2 * DG_MAX_BODIES];
    int goal[DG_MAX_BODIES];
    const float s[4] = {2.0f, 0.5f, 0.3f, 0.1f};  /* a stock above the reset range: clamped */
    assert_int_equal(env->game->bodies(env, s, NULL, xy, goal), 3);
    assert_float_equal(xy[0], -0.6f, 0);
    assert_float_equal(xy[1], -0.4f, 1e-6);
    assert_float_equal(xy[3], -0.8f, 1e-6);
    assert_float_equal(xy[4], 0.0f, 0);
    assert_float_equal(xy[5], 1.0f, 0);
    assert_string_equal(env->game->body_names, "country_1,country_2,stock");
    dg_env_free(env);
    dg_cfg_free(cfg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nash_and_commons),
        cmocka_unit_test(test_own_gradients),
        cmocka_unit_test(test_cooperative),
        cmocka_unit_test(test_requests_shared),
        cmocka_unit_test(test_bad_keys),
        cmocka_unit_test(test_bodies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
