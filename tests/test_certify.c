/* dg_certify: a learned pair of duel_simple against pursuit2d's time to capture (issue 14, section 3).
 * The value at each held-out start is the exact (|x0| - r) / (v_p - v_e); a pair that does not move
 * never captures (its cost is the horizon); constants that differ, or a game of kind, are refused. */
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
#include "util/hji_load.h"
#include "util/tier.h"

static const char DUEL[] = "game: duel_simple\nenv: {horizon: 50}\npolicy: {hidden: [8]}\n";
static const char P2[] = "game: pursuit2d\nspeed_pursuer: 1.0\nspeed_evader: 0.6\ncapture_radius: 0.1\n"
                         "payoff: time\nt_end: 6\nstationary: true\naccuracy: veryHigh\n"
                         "grid: {min: [-2, -2], max: [2, 2], n: [81, 81]}\nsolver: {tol: 1.0e-6, threads: 1}\n";

typedef struct fixture {
    dg_run run;
    dg_cfg *hcfg;
    dg_hji_problem *p;
    double *V, t_end;
    dg_hji_slices VS;
    dg_policy pol;
    dg_params *params;
} fixture;

static void setup(fixture *f, const char *duel, const char *p2) {
    dg_err e = {0};
    memset(f, 0, sizeof *f);
    if (dg_run_parse(&f->run, duel, strlen(duel), "duel", NULL, 0, &e) != DG_OK) fail_msg("%s", e.msg);
    f->hcfg = dg_cfg_parse(p2, strlen(p2), "p2", &e);
    if (!f->hcfg || !(f->p = dg_hji_problem_load(f->hcfg, &e))) fail_msg("%s", e.msg);
    f->V = malloc((size_t)f->p->grid.nodes * sizeof *f->V);
    dg_hji_stats st;
    if (!f->V || dg_hji_problem_solve(f->p, f->V, &st, &e) != DG_OK) fail_msg("%s", e.msg);
    f->t_end = f->p->t_end;
    f->VS = (dg_hji_slices){.nt = 1, .t = &f->t_end, .v = f->V};
    if (dg_policy_create(f->run.env, f->run.opts.hidden, f->run.opts.nhidden, &f->pol, &f->params, &e) != DG_OK)
        fail_msg("%s", e.msg);
}

static void teardown(fixture *f) {
    dg_params_free(f->params);
    free(f->V);
    dg_hji_problem_free(f->p);
    dg_cfg_free(f->hcfg);
    dg_run_free(&f->run);
}

/* a pair that stands still: no capture, each cost the horizon; V(x0) the exact time to capture */
static void test_still_pair(void **state) {
    (void)state;
    fixture f;
    setup(&f, DUEL, P2);
    memset(f.params->data, 0, f.params->total * sizeof(float));  /* tanh(0): no action */
    enum { B = 64 };
    double value[B], cost[B];
    const dg_certify_opts o = {.episodes = B, .seed = 7};
    dg_certify_result r;
    dg_err e = {0};
    assert_int_equal(dg_certify(f.p, &f.VS, f.run.env, f.run.cfg, &f.pol, f.params, &o, &r, value, cost, &e), DG_OK);
    assert_int_equal(r.episodes, B);
    assert_int_equal(r.captured, 0);
    const double H = f.run.env->horizon * (double)f.run.env->dt;
    float *st, *aux;
    assert_int_equal(dg_run_init_draw(f.run.env, 7, B, &st, &aux, &e), DG_OK);  /* the same starts */
    double vmean = 0, gap = 0;
    for (int i = 0; i < B; i++) {
        const double d0 = hypot((double)st[4 * i + 2] - st[4 * i], (double)st[4 * i + 3] - st[4 * i + 1]);
        const double exact = (d0 - 0.1) / (1.0 - 0.6);
        assert_true(fabs(value[i] - exact) < 0.01 * exact + 0.01);  /* the grid's accuracy */
        assert_true(cost[i] == H);
        vmean += value[i] / B;
        gap += (H - value[i]) / value[i] / B;
    }
    free(st);
    free(aux);
    assert_true(fabs(r.value_mean - vmean) < 1e-12);
    assert_true(fabs(r.policy_cost_mean - H) < 1e-12);
    assert_true(fabs(r.gap - gap) < 1e-9);
    teardown(&f);
}

/* a trained-like pair: random weights still give a cost on the step grid, captured or the horizon */
static void test_costs_on_steps(void **state) {
    (void)state;
    fixture f;
    setup(&f, DUEL, P2);
    dg_rng rng;
    dg_rng_seed(&rng, 3);
    for (size_t i = 0; i < f.params->total; i++) f.params->data[i] = dg_rng_uniform(&rng, -3.0f, 3.0f);
    enum { B = 32 };
    double value[B], cost[B];
    dg_certify_result r;
    dg_err e = {0};
    assert_int_equal(dg_certify(f.p, &f.VS, f.run.env, f.run.cfg, &f.pol, f.params,
                                &(dg_certify_opts){.episodes = B, .seed = 1}, &r, value, cost, &e), DG_OK);
    int captured = 0;
    for (int i = 0; i < B; i++) {
        const double steps = cost[i] / f.run.env->dt;
        assert_true(fabs(steps - round(steps)) < 1e-6 && steps >= 1 && steps <= f.run.env->horizon);
        captured += cost[i] < f.run.env->horizon * (double)f.run.env->dt;
    }
    assert_true(r.captured >= captured);
    teardown(&f);
}

/* one game: constants that differ, a game of kind, bad options */
static void test_refused(void **state) {
    (void)state;
    fixture f;
    setup(&f, "game: duel_simple\nenv: {horizon: 20, speed_evader: 0.5}\npolicy: {hidden: [8]}\n", P2);
    dg_certify_result r;
    dg_err e = {0};
    const dg_certify_opts o = {.episodes = 4, .seed = 1};
    assert_int_equal(dg_certify(f.p, &f.VS, f.run.env, f.run.cfg, &f.pol, f.params, &o, &r, NULL, NULL, &e),
                     DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "env.speed_evader is 0.5"));
    teardown(&f);
    setup(&f, DUEL, "game: pursuit2d\nspeed_evader: 0.6\ncapture_radius: 0.1\nt_end: 0.5\naccuracy: low\n"
                    "grid: {n: [21, 21]}\n");
    assert_int_equal(dg_certify(f.p, &f.VS, f.run.env, f.run.cfg, &f.pol, f.params, &o, &r, NULL, NULL, &e),
                     DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "payoff: time"));
    assert_int_equal(dg_certify(f.p, &f.VS, f.run.env, f.run.cfg, &f.pol, f.params,
                                &(dg_certify_opts){.episodes = 0}, &r, NULL, NULL, &e), DG_ERR_ARG);
    teardown(&f);
}

/* the exact equilibrium player frozen (pure pursuit a = x/|x|, or the evader's b = x/|x|): the other
 * player's best response can do no better than the value, so W = V up to the grids' error */
static void test_best_response_to_equilibrium(void **state) {
    (void)state;
    static const char P2C[] = "game: pursuit2d\nspeed_pursuer: 1.0\nspeed_evader: 0.5\ncapture_radius: 0.25\n"
                              "payoff: time\nt_end: 6\nstationary: true\naccuracy: veryHigh\n"
                              "grid: {min: [-2, -2], max: [2, 2], n: [41, 41]}\nsolver: {tol: 1.0e-4, threads: 1}\n";
    dg_err e;
    dg_hji_problem *p = load(P2C, &e);
    if (!p) fail_msg("%s", e.msg);
    double *V = malloc((size_t)p->grid.nodes * sizeof *V);
    assert_int_equal(dg_hji_problem_solve(p, V, NULL, &e), DG_OK);
    dg_hji_grid g;
    assert_int_equal(dg_certify_exploit_grid(p, &(dg_certify_exploit_opts){.n_own = 5, .own_half = 3}, &g, &e), DG_OK);
    float *act = malloc((size_t)g.nodes * 2 * sizeof *act);
    for (int64_t j = 0; j < g.nodes; j++) {
        double z[4];
        dg_hji_grid_point(&g, j, z);
        const double n = hypot(z[2], z[3]);
        act[2 * j] = n > 0 ? (float)(z[2] / n) : 0.0f;
        act[2 * j + 1] = n > 0 ? (float)(z[3] / n) : 0.0f;
    }
    enum { B = 6 };
    const float s0[B * 4] = {0, 0, 1.2f, 0.3f,  0.5f, -0.5f, -0.4f, 0.6f,  -1, 0.2f, -0.1f, -0.6f,
                             0.3f, 0.3f, 0.3f, 1.5f,  0, 0, -1, -1,  -0.2f, 0.4f, 0.8f, 0.9f};
    double w[2][B];
    for (int k = 0; k < 2; k++)
        assert_int_equal(dg_certify_best_response(p, &g, k, act, B, s0, w[k], NULL, &e), DG_OK);
    const double t = p->t_end;
    const dg_hji_slices VS = {.nt = 1, .t = &t, .v = V};
    for (int i = 0; i < B; i++) {
        const double x[2] = {(double)s0[4 * i + 2] - s0[4 * i], (double)s0[4 * i + 3] - s0[4 * i + 1]};
        const double v = dg_hji_slices_interp(&p->grid, &VS, t, x, NULL);
        const double exact = (hypot(x[0], x[1]) - 0.25) / 0.5;
        print_message("start %d: V %.4f (exact %.4f), best response to the frozen pursuer %.4f, evader %.4f\n", i, v,
                      exact, w[0][i], w[1][i]);
        assert_true(fabs(w[0][i] - v) < 0.005 * v);
        assert_true(fabs(w[1][i] - v) < 0.005 * v);
    }
    free(act);
    free(V);
    dg_hji_problem_free(p);
}

/* chase against chase4d (env.observe: relative): the equilibrium player of chase4d's own value (its
 * input from V's gradient at each node) frozen on the 4-D grid; the other's best response gives V back
 * up to the grid's error. A player that sees all 8 numbers is refused (its grid would be 8-D), and so
 * is a relative view with walls. */
static void test_chase_best_response(void **state) {
    (void)state;
    static const char C4[] = "game: chase4d\ncapture_radius: 0.3\npayoff: time\nt_end: 1.0\naccuracy: medium\n"
                             "grid: {min: [-1, -1, -2, -2], max: [1, 1, 2, 2], n: [15, 15, 15, 15]}\n"
                             "solver: {threads: 1}\n";
    dg_err e;
    dg_hji_problem *p = load(C4, &e);
    if (!p) fail_msg("%s", e.msg);
    double *V = malloc((size_t)p->grid.nodes * sizeof *V);
    assert_int_equal(dg_hji_problem_solve(p, V, NULL, &e), DG_OK);
    dg_hji_grid g;
    assert_int_equal(dg_certify_exploit_grid(p, NULL, &g, &e), DG_OK);
    assert_int_equal((int)g.nodes, (int)p->grid.nodes);
    float *act[2] = {malloc((size_t)g.nodes * 2 * sizeof(float)), malloc((size_t)g.nodes * 2 * sizeof(float))};
    for (int64_t j = 0; j < g.nodes; j++) {
        double z[4], grad[4], u[2], d[2];
        dg_hji_grid_point(&g, j, z);
        dg_hji_interp(&g, V, z, grad);
        dg_hji_game_optimal(&p->game, z, grad, u, d);
        for (int k = 0; k < 2; k++) act[0][2 * j + k] = (float)u[k], act[1][2 * j + k] = (float)d[k];
    }
    enum { B = 4 };
    const float s0[B * 8] = {0, 0, 0, 0, 0.6f, 0.2f, 0, 0,   0, 0, 0, 0, -0.5f, 0.5f, 0.3f, 0,
                             0, 0, 0, 0, 0.1f, -0.7f, 0, 0.4f,   0.2f, 0.1f, 0, 0, -0.4f, -0.4f, 0, 0};
    double w[2][B];
    for (int k = 0; k < 2; k++)
        assert_int_equal(dg_certify_best_response(p, &g, k, act[k], B, s0, w[k], NULL, &e), DG_OK);
    const double t = p->t_end;
    const dg_hji_slices VS = {.nt = 1, .t = &t, .v = V};
    for (int i = 0; i < B; i++) {
        double x[4];
        for (int k = 0; k < 4; k++) x[k] = (double)s0[8 * i + 4 + k] - s0[8 * i + k];
        const double v = dg_hji_slices_interp(&p->grid, &VS, t, x, NULL);
        print_message("chase start %d: V %.4f, best response to the frozen pursuer %.4f, evader %.4f\n", i, v,
                      w[0][i], w[1][i]);
        assert_true(v > 0.1);
        assert_true(fabs(w[0][i] - v) < 0.05 * v);   /* 15 nodes an axis: 1-4 % measured */
        assert_true(fabs(w[1][i] - v) < 0.05 * v);
    }
    /* a pursuer that stays (a = 0) is exploited: the evader's best response escapes to the cap */
    memset(act[0], 0, (size_t)g.nodes * 2 * sizeof(float));
    assert_int_equal(dg_certify_best_response(p, &g, 0, act[0], B, s0, w[0], NULL, &e), DG_OK);
    for (int i = 0; i < B; i++) assert_true(w[0][i] > 0.95 * p->t_end);
    /* the players must see the relative state only */
    static const char FULL[] = "game: chase\nenv: {evader: policy, walls: false}\npolicy: {hidden: [8]}\n";
    dg_run run;
    dg_policy pol;
    dg_params *params = NULL;
    if (dg_run_parse(&run, FULL, strlen(FULL), "full", NULL, 0, &e) != DG_OK) fail_msg("%s", e.msg);
    if (dg_policy_create(run.env, run.opts.hidden, run.opts.nhidden, &pol, &params, &e) != DG_OK) fail_msg("%s", e.msg);
    assert_int_equal(dg_certify_tabulate(run.env, &pol, params, 0, &g, act[0], &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "env.observe: relative"));
    dg_params_free(params);
    dg_run_free(&run);
    static const char WALLS[] = "game: chase\nenv: {evader: policy, observe: relative}\n";
    assert_int_not_equal(dg_run_parse(&run, WALLS, strlen(WALLS), "walls", NULL, 0, &e), DG_OK);
    assert_non_null(strstr(e.msg, "env.observe"));
    free(act[0]);
    free(act[1]);
    free(V);
    dg_hji_problem_free(p);
}

/* certify's table: the pairs sorted by V(x0), each quarter's range and means and the mean relative gap,
 * then all of them; an empty quarter of too few starts; what a frozen player loses, in seconds and
 * relative to |V|. */
static void test_statistics(void **state) {
    (void)state;
    /* (V, cost) pairs out of order */
    double rows[] = {4, 5, 1, 1.5, 3, 3, 2, 1, 8, 8, 6, 9, 5, 5, 7, 7};
    dg_certify_quarter q[5];
    dg_certify_quarters(rows, 8, q);
    for (int i = 0; i < 8; i++) assert_true(rows[2 * i] == i + 1);
    assert_true(rows[1] == 1.5 && rows[3] == 1);  /* each cost stays with its V */
    assert_int_equal(q[0].n, 2);
    assert_true(q[0].v_lo == 1 && q[0].v_hi == 2);
    assert_true(q[0].value_mean == 1.5 && q[0].cost_mean == 1.25);
    assert_true(fabs(q[0].gap - (0.5 + -0.5) / 2) < 1e-15);
    assert_true(q[2].v_lo == 5 && q[2].v_hi == 6 && fabs(q[2].gap - 0.25) < 1e-15);  /* (0 + 3/6) / 2 */
    assert_int_equal(q[4].n, 8);
    assert_true(q[4].v_lo == 1 && q[4].v_hi == 8 && q[4].value_mean == 4.5);
    double two[] = {2, 3, 1, 1};  /* 2 starts: quarters 0 and 2 empty */
    dg_certify_quarters(two, 2, q);
    assert_int_equal(q[0].n, 0);
    assert_int_equal(q[1].n, 1);
    assert_int_equal(q[2].n, 0);
    assert_int_equal(q[3].n, 1);
    assert_true(q[3].v_lo == 2 && q[3].gap == 0.5);
    const double value[] = {2, 4}, w[] = {3, 2};
    double mean, rel;
    dg_certify_exploit_loss(value, w, 2, 0, &mean, &rel);  /* the frozen pursuer loses w - V */
    assert_true(mean == (1 - 2) / 2.0 && rel == (0.5 - 0.5) / 2);
    dg_certify_exploit_loss(value, w, 2, 1, &mean, &rel);  /* the frozen evader V - w */
    assert_true(mean == 0.5 && rel == 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_statistics),
        cmocka_unit_test(test_still_pair),
        cmocka_unit_test(test_costs_on_steps),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_chase_best_response),
    };
    /* the long anchors: the slow tier (tests/util/tier.h) */
    const struct CMUnitTest slow[] = {
        cmocka_unit_test(test_best_response_to_equilibrium),
    };
    return dg_test_run_tiers(tests, slow, NULL, NULL);
}
