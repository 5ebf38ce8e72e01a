/* difgames certify's default path in the library (certify.h: dg_certify_discrete; issue 26, sections
 * 3 to 5) and the inputs no learned player controls (section 4).
 * - gust, a point on a line pushed by a wind w nobody learns: x' = x + dt (u + w), |u| <= 1, |w| <= 0.5,
 *   cost x'^2 per step. Its discrete values are exact by hand: with d = |x| the upper (u commits)
 *   d' = max(d - dt, 0) + dt/2, the lower max(d - dt/2, 0); held at w = h, d' is the distance of
 *   [x + dt (h - 1), x + dt (h + 1)] from 0. An adversarial wind makes the grid solve the two values
 *   (to 0.5 %) and the policy's cost is measured against the grid's worst-case answer (>= V+, above
 *   the cost with the wind held); a held wind is the learner's and the grid's alike; an undeclared
 *   one is refused naming it, as are declarations that cannot hold.
 * - The gap against [V-, V+] (dg_certify_interval_gap), the state's column names, the per-game plan
 *   iterations, and dg_certify_discrete on duel_simple at test scale (two values, best responses).
 * - Slow: section 6's third anchor, duel_simple's exact players and a half-throttle pursuer frozen. */
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
#include "util/duel_players.h"
#include "util/tier.h"

#define GUST(W)                                                                                        \
    "game: model\n"                                                                                    \
    "seed: 0\n"                                                                                        \
    "model:\n"                                                                                         \
    "  name: gust\n"                                                                                   \
    "  compile: false\n"                                                                               \
    "  state: {x: [-2, 2]}\n"                                                                          \
    "  inputs:\n"                                                                                      \
    "    u: {dim: 1, lo: -1, hi: 1, role: min}\n"                                                      \
    "    w: {dim: 1, lo: -0.5, hi: 0.5, learned: false" W "}\n"                              \
    "  dynamics:\n"                                                                                    \
    "    x: u + w\n"                                                                                   \
    "  observe: [x]\n"                                                                                 \
    "  costs: {dist: x^2}\n"                                                                           \
    "  reset:\n"                                                                                       \
    "    - {x: [0.5, 1.0]}\n"                                                                          \
    "env: {dt: 0.1, horizon: 10}\n"                                                                    \
    "loss: {dist: 1.0}\n"                                                                              \
    "policy: {hidden: [8]}\n"

#define DUEL(H) "game: duel_simple\nenv: {dt: 0.2, horizon: " #H ", distance: [0.4, 0.6]}\npolicy: {hidden: [8]}\n"

typedef struct fixture {
    dg_run run;
    dg_policy pol;
    dg_params *params;
} fixture;

static void setup(fixture *f, const char *yaml) {
    dg_err e = {0};
    memset(f, 0, sizeof *f);
    if (dg_run_parse(&f->run, yaml, strlen(yaml), "certify.yaml", NULL, 0, &e) != DG_OK) fail_msg("%s", e.msg);
    if (dg_policy_create(f->run.env, f->run.opts.hidden, f->run.opts.nhidden, &f->pol, &f->params, &e) != DG_OK)
        fail_msg("%s", e.msg);
    dg_rng rng;
    dg_rng_seed(&rng, 3);
    dg_policy_reset_params(&f->pol, f->params, &rng);
}

static void teardown(fixture *f) {
    dg_params_free(f->params);
    dg_run_free(&f->run);
}

/* the config's error, or "" when it loads */
static const char *load_error(const char *yaml, dg_err *e) {
    dg_run r;
    memset(e, 0, sizeof *e);
    if (dg_run_parse(&r, yaml, strlen(yaml), "gust.yaml", NULL, 0, e) == DG_OK) {
        dg_run_free(&r);
        return "";
    }
    return e->msg;
}

/* gust's exact values from x: 0 upper, 1 lower, 2 the wind held at h */
static double gust_exact(double x, int kind, double h) {
    const double dt = 0.1;
    const int H = 10;
    double s = 0, d = fabs(x);
    for (int t = 0; t < H; t++) {
        if (kind == 0) d = fmax(d - dt, 0) + 0.5 * dt;
        else if (kind == 1) d = fmax(d - 0.5 * dt, 0);
        else {
            const double a = x + dt * (h - 1), b = x + dt * (h + 1);
            x = a > 0 ? a : b < 0 ? b : 0;
            d = fabs(x);
        }
        s += d * d / H;
    }
    return s;
}

/* ------------------------------------------------------------------ the gap */

static void test_interval_gap(void **state) {
    (void)state;
    assert_true(dg_certify_interval_gap(1.0, 0.9, 1.1) == 0);        /* inside */
    assert_true(dg_certify_interval_gap(0.9, 0.9, 1.1) == 0);        /* an end */
    assert_true(fabs(dg_certify_interval_gap(1.21, 0.9, 1.1) - 0.1) < 1e-12);   /* above: over |V+| */
    assert_true(fabs(dg_certify_interval_gap(0.81, 0.9, 1.1) + 0.1) < 1e-12);   /* below: over |V-| */
    assert_true(fabs(dg_certify_interval_gap(-1.5, -1.0, -1.0) + 0.5) < 1e-12); /* a negative value */
    assert_true(isnan(dg_certify_interval_gap(1, 0, 0)));
    assert_true(dg_certify_interval_gap(0, 0, 0) == 0);
    assert_true(isnan(dg_certify_interval_gap(NAN, 0, 1)));
}

/* ------------------------------------------------------------------ inputs no one learns */

static void test_free_input_declared(void **state) {
    (void)state;
    fixture f;
    setup(&f, GUST(", role: max, play: adversarial"));
    dg_env_input in[2];
    assert_int_equal(dg_env_free_inputs(f.run.env, in, 2), 1);
    assert_string_equal(in[0].name, "w");
    assert_int_equal(in[0].play, DG_INPUT_ADVERSARIAL);
    assert_true(in[0].hold[0] == 0 && in[0].lo[0] == -0.5 && in[0].hi[0] == 0.5);
    assert_string_equal(dg_env_input_play_name(in[0].play), "adversarial");
    assert_int_equal(dg_dp_nvalues(f.run.env), 2);
    char name[16];
    dg_env_state_name(f.run.env, 0, name, sizeof name);
    assert_string_equal(name, "x");
    teardown(&f);
    setup(&f, DUEL(5));  /* a built-in: its inputs are its players' */
    assert_int_equal(dg_env_free_inputs(f.run.env, in, 2), 0);
    const char *want[] = {"px", "py", "ex", "ey"};
    for (int k = 0; k < 4; k++) {
        dg_env_state_name(f.run.env, k, name, sizeof name);
        assert_string_equal(name, want[k]);
    }
    teardown(&f);
}

/* refused: an undeclared input by the grid (naming it), declarations that cannot hold by the loader */
static void test_free_input_refused(void **state) {
    (void)state;
    fixture f;
    setup(&f, GUST(", role: max"));  /* BPTT still plays it at its box centre, as it always did */
    dg_err e = {0};
    assert_int_equal(dg_dp_check(f.run.env, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "'w'"));
    assert_non_null(strstr(e.msg, "model.inputs.w.play"));
    dg_certify_discrete_opts o = dg_certify_discrete_opts_default(f.run.env);
    dg_certify_discrete_result r;
    assert_int_equal(dg_certify_discrete(f.run.env, &f.pol, f.params, &o, NULL, &r, &e), DG_ERR_ARG);
    teardown(&f);
    assert_non_null(strstr(load_error(GUST(", role: max, play: gusty"), &e), "model.inputs.w.play"));
    assert_non_null(strstr(load_error(GUST(", role: min, play: adversarial"), &e), "role: max"));
    assert_non_null(strstr(load_error(GUST(", role: max, play: hold, hold: 0.7"), &e), "model.inputs.w.hold"));
    const char *learned = "game: model\nmodel:\n  state: {x: [-1, 1]}\n  inputs: {u: {dim: 1, play: hold}}\n"
                          "  dynamics: {x: u}\n  observe: [x]\n  costs: {c: x^2}\n  reset: [{x: [0, 1]}]\n";
    assert_non_null(strstr(load_error(learned, &e), "a learned input"));
}

/* held at 0.3: the learner's loss and the grid's value are of the same game, the exact one */
static void test_free_input_hold(void **state) {
    (void)state;
    fixture f;
    setup(&f, GUST(", role: max, play: hold, hold: 0.3"));
    dg_err e = {0};
    const int B = 8;
    dg_real *s = NULL, *aux = NULL;
    assert_int_equal(dg_run_init_draw(f.run.env, 11, B, &s, &aux, &e), DG_OK);
    assert_int_equal(dg_dp_nvalues(f.run.env), 1);
    dg_dp_opts o = {.nodes = {41}, .lo = {-2}, .hi = {2}};
    dg_dp_refine_opts ro = {.tol = 0.002};
    dg_dp_refinement ref;
    double v[16];
    assert_int_equal(dg_dp_refine(f.run.env, &o, &ro, s, B, &ref, v, NULL, &e), DG_OK);
    double err = 0, sum = 0;
    for (int b = 0; b < B; b++) {
        const double x = gust_exact(s[b], 2, 0.3);
        err += fabs(v[b] - x);
        sum += x;
    }
    print_message("gust held at 0.3: %d grids, error %.3f%%\n", ref.ngrids, 100 * err / sum);
    assert_true(err / sum < 0.005);
    /* the learner's game: one start, the action 0 (tanh(0)), so x' = x + dt 0.3 each step */
    dg_eval_result res;
    dg_policy zero;
    dg_params *zp = NULL;
    assert_int_equal(dg_policy_create_plan(f.run.env, &zero, &zp, &e), DG_OK);
    assert_int_equal(dg_run_eval(f.run.env, &zero, zp, s, aux, 1, 0, &res, &e), DG_OK);
    double x = s[0], want = 0;
    for (int t = 0; t < 10; t++) x += 0.1 * 0.3, want += x * x / 10;
    assert_true(fabs(res.loss - want) < 1e-5 * want);
    dg_params_free(zp);
    free(s);
    free(aux);
    teardown(&f);
}

/* adversarial: the grid's two values against the exact ones; the policy's cost against the grid's
 * answer is above V+ and above its cost with the wind held */
static void test_free_input_adversarial(void **state) {
    (void)state;
    fixture f;
    setup(&f, GUST(", role: max, play: adversarial"));
    dg_err e = {0};
    const int B = 16;
    dg_certify_discrete_opts o = dg_certify_discrete_opts_default(f.run.env);
    o.episodes = B;
    o.seed = 5;
    o.refine.tol = 0.002;
    double vu[16], vl[16], pc[16], held[16], st[16], plan[16];
    dg_certify_discrete_rows rows = {.state = st, .value_upper = vu, .value_lower = vl, .policy_cost = pc,
                                     .policy_cost_held = held, .plan_cost = plan};
    dg_certify_discrete_result r;
    if (dg_certify_discrete(f.run.env, &f.pol, f.params, &o, &rows, &r, &e) != DG_OK) fail_msg("%s", e.msg);
    assert_int_equal(r.adversarial, 1);
    assert_int_equal(r.nvalues, 2);
    assert_int_equal(r.ninputs, 1);
    assert_int_equal(r.bounds, 0);  /* the plans' game holds the wind: no bound of this one */
    assert_true(r.ref.converged && r.ref.ngrids >= 3);
    double eu = 0, el = 0, su = 0, sl = 0;
    for (int b = 0; b < B; b++) {
        const double xu = gust_exact(st[b], 0, 0), xl = gust_exact(st[b], 1, 0);
        eu += fabs(vu[b] - xu), su += xu;
        el += fabs(vl[b] - xl), sl += xl;
        assert_true(pc[b] >= xu * (1 - 1e-3));  /* a feedback against a best answer: at least V+ */
        assert_true(pc[b] > held[b]);
        assert_true(isnan(plan[b]));
    }
    print_message("gust adversarial: V+ error %.3f%%, V- %.3f%% (%d grids)\n", 100 * eu / su, 100 * el / sl,
                  r.ref.ngrids);
    assert_true(eu / su < 0.005 && el / sl < 0.005);
    assert_true(r.policy_cost > r.policy_cost_held);
    teardown(&f);
}

/* ------------------------------------------------------------------ the default path */

static void test_discrete_duel(void **state) {
    (void)state;
    fixture f;
    setup(&f, DUEL(5));
    dg_err e = {0};
    const int B = 8;
    dg_certify_discrete_opts o = dg_certify_discrete_opts_default(f.run.env);
    o.episodes = B;
    o.seed = 9;
    o.refine.tol = 0.05;
    o.refine.max_grids = 3;
    o.dp.nodes[0] = o.dp.nodes[1] = 9;  /* 9, 13, 19: the checks here hold on any grid */
    o.plan.iters = 30;
    o.plan.bptt_epochs = 0;
    double vu[8], vl[8], pc[8], gap[8], br0[8], br1[8], x0[8], x1[8];
    int r0[8], r1[8];
    dg_certify_discrete_rows rows = {.value_upper = vu, .value_lower = vl, .policy_cost = pc, .gap = gap,
                                     .br_cost = {br0, br1}, .br_route = {r0, r1}, .exploit = {x0, x1}};
    dg_certify_discrete_result r;
    if (dg_certify_discrete(f.run.env, &f.pol, f.params, &o, &rows, &r, &e) != DG_OK) fail_msg("%s", e.msg);
    assert_int_equal(r.players, 2);
    assert_int_equal(r.ref.ngrids, 3);
    assert_int_equal(r.grid_route[0], -1);  /* each network reads its absolute position: not the grid's state */
    assert_int_equal(r.grid_route[1], -1);
    double m = 0;
    for (int b = 0; b < B; b++) {
        assert_true(gap[b] == dg_certify_interval_gap(pc[b], vl[b], vu[b]));
        assert_true(br0[b] >= pc[b] - 1e-9 && br1[b] <= pc[b] + 1e-9);  /* best responses: never worse */
        assert_true(x0[b] == br0[b] - vu[b] && x1[b] == vl[b] - br1[b]);
        assert_true(r0[b] == DG_CERTIFY_ROUTE_PLAN);
        m += pc[b] / B;
    }
    assert_true(fabs(m - r.policy_cost) < 1e-9);
    teardown(&f);
}

/* duel_simple's exact players and the half-throttle pursuer as functions (test_certify_dp.c's
 * test_frozen_exact says why each is exact): throttle x dg_unit_disk(scale x the relative position) */
/* exact_player, exact_act: tests/util/duel_players.h */

/* Section 6's third anchor through dg_certify_discrete: with the exact equilibrium players frozen,
 * exploit_pursuer (the evader's best response minus V+) is ~0 at every start; with the pursuer at half
 * throttle, br_cost_pursuer is the evader's straight flight's exact loss (d' = d + (v_e - v_p / 2) dt)
 * and exploit_pursuer that loss minus V+. The grid route runs for both frozen players (they act on
 * e - p alone) and finds those responses. */
static void test_exact_players(void **state) {
    (void)state;
    fixture f;
    setup(&f, DUEL(5));
    dg_err e = {0};
    enum { B = 8 };
    const double dt = f.run.env->dt, vp = 1.0, ve = 0.6;
    exact_player pursuer = {1.0 / (vp * dt), 1.0}, half = {1e6, 0.5}, evader = {-1e6, 1.0};
    f.pol.fn[1] = exact_act;
    f.pol.fn_user[1] = &evader;
    f.pol.fn[0] = exact_act;
    for (int c = 0; c < 2; c++) {
        f.pol.fn_user[0] = c ? &half : &pursuer;
        dg_certify_discrete_opts o = dg_certify_discrete_opts_default(f.run.env);
        o.episodes = B;
        o.seed = 9;
        o.refine.tol = 0.01;
        o.dp.nodes[0] = o.dp.nodes[1] = 21;
        o.plan.iters = 30;
        o.plan.bptt_epochs = 0;
        double st[B * 4], vu[B], br0[B], x0[B];
        int r0[B];
        dg_certify_discrete_rows rows = {.state = st, .value_upper = vu, .br_cost = {br0, NULL},
                                         .br_route = {r0, NULL}, .exploit = {x0, NULL}};
        dg_certify_discrete_result r;
        if (dg_certify_discrete(f.run.env, &f.pol, f.params, &o, &rows, &r, &e) != DG_OK) fail_msg("%s", e.msg);
        assert_int_equal(r.grid_route[0], 1);
        assert_int_equal(r.grid_route[1], 1);
        double worst = 0;
        for (int b = 0; b < B; b++) {
            double d = hypot(st[4 * b + 2] - st[4 * b], st[4 * b + 3] - st[4 * b + 1]), straight = 0;
            for (int t = 0; t < f.run.env->horizon; t++) {
                d += (ve - 0.5 * vp) * dt;
                straight += sqrt(d * d + 1e-6) / f.run.env->horizon;
            }
            if (c == 0) {
                worst = fmax(worst, fabs(x0[b]) / vu[b]);
            } else {
                worst = fmax(worst, fabs(br0[b] - straight) / straight);
                assert_true(fabs(x0[b] - (straight - vu[b])) < 0.01 * straight);
            }
        }
        print_message("%s: exploit_pursuer %.6f (V+ %.6f, converged %d), worst start %.3f%%, grid best at %d of %d\n",
                      c ? "half throttle" : "exact pair", r.exploit[0], r.value_upper, r.ref.converged, 100 * worst,
                      r.grid_best[0], B);
        assert_true(worst < 0.01);
    }
    teardown(&f);
}

/* what a model file declares for the grid: its state box, its episode constants */
static void test_model_declarations(void **state) {
    (void)state;
    fixture f;
    setup(&f, GUST(", role: max, play: hold"));
    double lo[2], hi[2], aux[2];
    assert_int_equal(dg_env_state_box(f.run.env, lo, hi), 1);
    assert_true(lo[0] == -2 && hi[0] == 2);
    assert_int_equal(dg_env_episode_grid(f.run.env, aux), 0);  /* none declared */
    teardown(&f);
    setup(&f, DUEL(5));
    assert_int_equal(dg_env_state_box(f.run.env, lo, hi), 0);
    assert_int_equal(dg_env_episode_grid(f.run.env, aux), 0);
    teardown(&f);
    const char *goal = "game: model\nmodel:\n  compile: false\n  state: {x: [-1, 1]}\n"
                       "  episode: {name: goal, vars: [g], grid: {g: 0.25}}\n  inputs: {u: {dim: 1}}\n"
                       "  dynamics: {x: u}\n  observe: [x, g]\n  costs: {c: (x - g)^2}\n"
                       "  reset: [{x: [0, 1], g: [-1, 1]}]\npolicy: {hidden: [4]}\n";
    setup(&f, goal);
    assert_int_equal(dg_env_episode_grid(f.run.env, aux), 1);
    assert_true(aux[0] == 0.25);
    teardown(&f);
}

/* the grid's box: chase's velocities start at 0 (the reset gives them no span), so they are bounded
 * by episodes under constant actions, whatever the policy; duel_simple's is the reset's (dg_dp_box);
 * a model file's its declared state box; a box given is kept */
static void test_discrete_box(void **state) {
    (void)state;
    fixture f;
    setup(&f, "game: chase\nenv: {evader: policy, walls: false, horizon: 10}\npolicy: {hidden: [4]}\n");
    dg_err e = {0};
    dg_dp_opts o = {0}, r = {0};
    double lo[8], hi[8];
    assert_int_equal(dg_dp_box(f.run.env, &r, lo, hi, &e), DG_ERR_ARG);  /* the reset alone cannot */
    if (dg_certify_discrete_box(f.run.env, &o, &e) != DG_OK) fail_msg("%s", e.msg);
    for (int k = 2; k < 4; k++) {  /* relative velocity: both ways, within the bodies' top speeds */
        print_message("chase axis %d: [%.3f, %.3f]\n", k, o.lo[k], o.hi[k]);
        assert_true(o.lo[k] < -0.3 && o.hi[k] > 0.3 && o.lo[k] > -20 && o.hi[k] < 20);
    }
    teardown(&f);
    setup(&f, DUEL(5));
    memset(&o, 0, sizeof o);
    assert_int_equal(dg_certify_discrete_box(f.run.env, &o, &e), DG_OK);
    assert_int_equal(dg_dp_box(f.run.env, &r, lo, hi, &e), DG_OK);
    assert_true(o.lo[0] == lo[0] && o.hi[1] == hi[1]);
    o.lo[0] = -7, o.hi[0] = 7;
    assert_int_equal(dg_certify_discrete_box(f.run.env, &o, &e), DG_OK);
    assert_true(o.lo[0] == -7 && o.hi[0] == 7);
    teardown(&f);
    setup(&f, GUST(", role: max, play: hold"));
    memset(&o, 0, sizeof o);
    assert_int_equal(dg_certify_discrete_box(f.run.env, &o, &e), DG_OK);
    assert_true(o.lo[0] == -2 && o.hi[0] == 2);
    teardown(&f);
}

static void test_plan_defaults(void **state) {
    (void)state;
    fixture f;
    setup(&f, DUEL(5));
    assert_int_equal(dg_certify_plan_opts_game(f.run.env).iters, 300);
    teardown(&f);
    setup(&f, "game: reach\n");
    assert_int_equal(dg_certify_plan_opts_game(f.run.env).iters, 3000);
    teardown(&f);
    assert_int_equal(dg_certify_discrete_nodes(2), 21);
    assert_int_equal(dg_certify_discrete_nodes(4), 9);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interval_gap),
        cmocka_unit_test(test_free_input_declared),
        cmocka_unit_test(test_free_input_refused),
        cmocka_unit_test(test_free_input_hold),
        cmocka_unit_test(test_free_input_adversarial),
        cmocka_unit_test(test_discrete_duel),
        cmocka_unit_test(test_model_declarations),
        cmocka_unit_test(test_discrete_box),
        cmocka_unit_test(test_plan_defaults),
    };
    const struct CMUnitTest slow[] = {
        cmocka_unit_test(test_exact_players),  /* two refinement studies of the two-player game: ~25 s */
    };
    return dg_test_run_tiers(tests, slow, NULL, NULL);
}
