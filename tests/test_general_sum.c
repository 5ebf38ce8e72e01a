/* General-sum games of N learned players (env.h's general_sum, docs/models.md's model.players): the
 * players' parameters and names, each player's gradient being that of its own cost (on one tape and
 * through checkpointed segments alike), NashConv's terms (>= 0 by construction, 0 with no best-response
 * epoch), model.players' one-line errors, and certify's refusal. */
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

/* Three players, each steering one coordinate, with costs shared unevenly (interpreted: nothing
 * written to the compiled expressions' cache). PLAYERS is the model.players section. */
#define GAME3(PLAYERS)                                                                                \
    "game: model\n"                                                                                   \
    "model:\n"                                                                                        \
    "  name: three\n"                                                                                 \
    "  compile: false\n"                                                                              \
    "  state: {x: [-2, 2], y: [-2, 2], z: [-2, 2]}\n"                                                 \
    "  inputs: {u: {lo: -2, hi: 2}, v: {lo: -2, hi: 2}, w: {dim: 2}}\n"                               \
    "  dynamics: {x: 0.2*y + u, y: -0.3*x + v, z: w1 - w2 + 0.1*x}\n"                                 \
    "  observe: [x, y, z]\n"                                                                          \
    "  costs: {xx: x^2, yz: (y - z + 0.3)^2, uu: u^2, vv: v^2, ww: w1^2 + w2^2}\n" PLAYERS             \
    "  reset:\n"                                                                                      \
    "    - {x: [-0.5, 0.5], y: [-0.5, 0.5], z: [-0.5, 0.5]}\n"                                          \
    "env: {dt: 0.1, horizon: 6}\n"
#define PLAYERS3                                                                                      \
    "  players:\n"                                                                                    \
    "    ann: {input: u, costs: {xx: 1.0, yz: 0.5, uu: 0.2}}\n"                                          \
    "    ben: {input: v, costs: {yz: 2.0, vv: 0.3}, observe: [y, z]}\n"                                  \
    "    cat: {input: w, costs: {xx: -0.5, yz: 1.0, ww: 0.4}}\n"

static dg_cfg *cfg_of(const char *text) {
    dg_err e = {0};
    dg_cfg *c = dg_cfg_parse(text, strlen(text), "m.yaml", &e);
    if (!c) fail_msg("config: %s", e.msg);
    return c;
}

/* the one-line error yaml's env gives: it names the file and key */
static void expect_error(const char *yaml, const char *key, const char *words) {
    dg_err e = {0};
    dg_cfg *c = cfg_of(yaml);
    dg_env *env = dg_env_create(c, &e);
    if (env) fail_msg("expected an error for:\n%s", yaml);
    if (!strstr(e.msg, "m.yaml") || !strstr(e.msg, key) || !strstr(e.msg, words) || strchr(e.msg, '\n'))
        fail_msg("error '%s' should name m.yaml, %s and say '%s'", e.msg, key, words);
    dg_cfg_free(c);
}

/* the game, its players, their sizes, names and parameters (MLPs and plans) */
static void test_players(void **state) {
    (void)state;
    dg_cfg *cfg;
    dg_env *env = check_env(GAME3(PLAYERS3), &cfg, NULL);
    assert_int_equal(env->nplayers, 3);
    assert_int_equal(env->general_sum, 1);
    assert_int_equal(env->player_obs[0], 3);
    assert_int_equal(env->player_obs[1], 2);  /* ben's own observation */
    assert_int_equal(env->player_obs[2], 3);
    assert_int_equal(env->player_act[2], 2);
    assert_int_equal(dg_env_action_col(env, 2), 2);
    assert_int_equal(dg_env_action_col(env, 3), 4);
    char nm[32];
    assert_string_equal(dg_env_player_name(env, 2, nm, sizeof nm), "cat");
    assert_true(env->player_share[1][1] == 2.0f && env->player_share[1][0] == 0.0f && env->player_share[2][0] == -0.5f);
    dg_err e = {0};
    dg_policy pol;
    dg_params *p = NULL;
    assert_int_equal(dg_policy_create(env, (int[]){8}, 1, &pol, &p, &e), DG_OK);
    assert_int_equal(pol.n, 3);
    assert_true(dg_params_find(p, "net.0.weight") >= 0);
    assert_true(dg_params_find(p, "evader.0.weight") >= 0);
    const int w2 = dg_params_find(p, "player2.0.weight");
    assert_true(w2 >= 0);
    assert_int_equal(p->info[w2].shape[1], 3);
    assert_int_equal(p->info[dg_params_find(p, "player2.2.weight")].shape[0], 2);
    dg_params_free(p);
    assert_int_equal(dg_policy_create_plan(env, &pol, &p, &e), DG_OK);
    assert_int_equal(p->count, 3);
    assert_true(dg_params_find(p, "plan") == 0 && dg_params_find(p, "evader_plan") == 1);
    assert_int_equal(dg_params_find(p, "player2_plan"), 2);
    assert_int_equal(p->info[2].shape[1], 2);
    /* certify refuses the game in one line */
    assert_int_equal(dg_certify_general_sum_check(env, &e), DG_ERR_CONFIG);
    assert_non_null(strstr(e.msg, "three is a general-sum game"));
    dg_params_free(p);
    dg_env_free(env);
    dg_cfg_free(cfg);
}

/* Each player's cost of the episode of p on B rows from st, ax. */
static void costs_of(dg_ctx *ctx, const dg_env *env, const dg_policy *pol, dg_params *p, const dg_real *st,
                     const dg_real *ax, int B, double *c) {
    dg_real terms[DG_LOSS_MAX_TERMS];
    dg_ctx_reset(ctx);
    assert_non_null(dg_rollout(ctx, env, pol, p, st, ax, B, 1.0f / (dg_real)B, terms, NULL, 0));
    for (int i = 0; i < pol->n; i++) c[i] = dg_env_player_cost(env, i, terms);
}

/* the gradient in player i's block is that of player i's own cost (central differences), on one tape
 * and through checkpointed segments (every 2 steps) alike */
static void test_own_gradients(void **state) {
    (void)state;
    dg_cfg *cfg;
    dg_env *env = check_env(GAME3(PLAYERS3), &cfg, NULL);
    dg_err e = {0};
    dg_policy pol;
    dg_params *p = NULL;
    assert_int_equal(dg_policy_create(env, (int[]){6}, 1, &pol, &p, &e), DG_OK);
    dg_rng rng;
    dg_rng_seed(&rng, 3);
    dg_policy_reset_params(&pol, p, &rng);
    enum { B = 4 };
    dg_real st[B * 3], ax[1];
    assert_int_equal(env->game->reset(env, &rng, B, st, ax, &e), DG_OK);
    dg_ctx *ctx = dg_ctx_create(1 << 22);
    dg_real *g1 = malloc(p->total * sizeof *g1), saved[8 * B * 3];
    double loss, c[3], cp[3], cm[3];
    dg_real terms[DG_LOSS_MAX_TERMS];
    dg_params_zero_grad(p);
    assert_int_equal(dg_episode_grad(ctx, env, &pol, p, st, ax, B, 1.0f / B, 0, 0, NULL, &loss, terms, NULL, 0), DG_OK);
    memcpy(g1, p->grad, p->total * sizeof *g1);
    dg_params_zero_grad(p);
    assert_int_equal(dg_episode_grad(ctx, env, &pol, p, st, ax, B, 1.0f / B, 2, 0, saved, &loss, terms, NULL, 0), DG_OK);
    for (size_t k = 0; k < p->total; k++)  /* the same gradient both ways, to float rounding */
        assert_true(fabs(g1[k] - p->grad[k]) <= 1e-5 * (1 + fabs(g1[k])));
    costs_of(ctx, env, &pol, p, st, ax, B, c);
    int checked = 0;
    for (int i = 0; i < 3; i++) {
        const size_t lo = p->info[dg_policy_first_param(&pol, i)].offset;
        for (size_t k = lo; k < lo + 5; k++) {  /* a few weights of each player's first layer */
            const dg_real w = p->data[k], h = 1e-2f;
            p->data[k] = w + h;
            costs_of(ctx, env, &pol, p, st, ax, B, cp);
            p->data[k] = w - h;
            costs_of(ctx, env, &pol, p, st, ax, B, cm);
            p->data[k] = w;
            const double fd = (cp[i] - cm[i]) / (2 * h), other = (cp[(i + 1) % 3] - cm[(i + 1) % 3]) / (2 * h);
            if (fabs(fd - other) < 1e-3) continue;  /* no weight tells the players' costs apart */
            if (fabs(g1[k] - fd) > 2e-3 * (1 + fabs(fd)))
                fail_msg("player %d, parameter %zu: gradient %g, its own cost's differences %g (another's %g)", i, k,
                         (double)g1[k], fd, other);
            checked++;
        }
    }
    assert_true(checked >= 9);
    free(g1);
    dg_ctx_free(ctx);
    dg_params_free(p);
    dg_env_free(env);
    dg_cfg_free(cfg);
}

/* NashConv: each term >= 0; 0 with no best-response epoch (the start is the best iterate); > 0 for
 * the open-loop plans at zero, where each player can gain; the parameters are left as they were */
static void test_nash_conv(void **state) {
    (void)state;
    dg_cfg *cfg;
    dg_env *env = check_env(GAME3(PLAYERS3), &cfg, NULL);
    dg_err e = {0};
    dg_policy pol;
    dg_params *p = NULL;
    assert_int_equal(dg_policy_create_plan(env, &pol, &p, &e), DG_OK);
    dg_rng rng;
    dg_rng_seed(&rng, 5);
    dg_policy_reset_params(&pol, p, &rng);
    dg_train_opts o;
    dg_train_opts_default(&o);
    o.lr = 0.05f;
    o.batch = 2;
    dg_real st[2 * 3], ax[1];
    assert_int_equal(env->game->reset(env, &rng, 2, st, ax, &e), DG_OK);
    double cost[3], gain[3];
    assert_int_equal(dg_run_nash_conv(env, &pol, p, &o, 0, st, ax, 2, cost, gain, &e), DG_OK);
    for (int i = 0; i < 3; i++) assert_true(gain[i] == 0.0 && isfinite(cost[i]));
    assert_int_equal(dg_run_nash_conv(env, &pol, p, &o, 30, st, ax, 2, cost, gain, &e), DG_OK);
    for (int i = 0; i < 3; i++)
        if (!(gain[i] > 0.0 && gain[i] <= cost[i] + 1.0)) fail_msg("player %d: gain %g at cost %g", i, gain[i], cost[i]);
    for (size_t k = 0; k < p->total; k++) assert_true(p->data[k] == 0.0f);
    dg_params_free(p);
    dg_env_free(env);
    dg_cfg_free(cfg);
}

/* model.players' mistakes: one line naming the file and the key */
static void test_players_errors(void **state) {
    (void)state;
    expect_error(GAME3("  players:\n    ann: {input: q, costs: {xx: 1}}\n    ben: {input: v, costs: {yz: 1}}\n"
                       "    cat: {input: w, costs: {ww: 1}}\n"),
                 "model.players.ann.input", "'q' is not one of model.inputs");
    expect_error(GAME3("  players:\n    ann: {input: u, costs: {xx: 1}}\n    ben: {input: u, costs: {yz: 1}}\n"
                       "    cat: {input: w, costs: {ww: 1}}\n"),
                 "model.players.ben.input", "player ann's input already");
    expect_error(GAME3("  players:\n    ann: {input: u, costs: {xx: 1, speed: 2}}\n    ben: {input: v, costs: {yz: 1}}\n"
                       "    cat: {input: w, costs: {ww: 1}}\n"),
                 "model.players.ann.costs.speed", "not a term of model.costs");
    expect_error(GAME3("  players:\n    ann: {input: u, costs: {xx: 1}}\n"), "model.players", "a map of 2 to 4 players");
    expect_error(GAME3("  players:\n    ann: {input: u, costs: {xx: 1}}\n    ben: {input: v}\n"
                       "    cat: {input: w, costs: {ww: 1}}\n"),
                 "model.players.ben.costs", "a map term: weight");
    expect_error(GAME3("  observe2: [x]\n" PLAYERS3), "model.observe2", "zero-sum max player's");
    /* an input no player names is no one's: held, as an input with learned: false */
    dg_cfg *cfg;
    dg_env *env = check_env(GAME3("  players:\n    ann: {input: u, costs: {xx: 1}}\n    ben: {input: v, costs: {yz: 1}}\n"),
                            &cfg, NULL);
    assert_int_equal(env->nplayers, 2);
    assert_int_equal(dg_env_free_inputs(env, NULL, 0), 1);
    /* a general-sum pair has no zero-sum exploitability: refused, naming what it has instead */
    dg_err e = {0};
    dg_policy pol;
    dg_params *p = NULL;
    assert_int_equal(dg_policy_create_plan(env, &pol, &p, &e), DG_OK);
    dg_train_opts o;
    dg_train_opts_default(&o);
    dg_real st[3] = {0}, ax[1] = {0};
    dg_exploit_result x;
    assert_int_equal(dg_run_exploit(env, &pol, p, &o, 1, st, ax, 1, &x, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "dg_run_nash_conv"));
    dg_params_free(p);
    dg_env_free(env);
    dg_cfg_free(cfg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_players),
        cmocka_unit_test(test_own_gradients),
        cmocka_unit_test(test_nash_conv),
        cmocka_unit_test(test_players_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
