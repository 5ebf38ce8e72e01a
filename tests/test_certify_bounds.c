/* dg_certify_bounds: bounds with a sign per held-out start (issue 26, section 2).
 * - One player, a model-file point mass with a quadratic cost (the box never binds): the best
 *   open-loop plan from each start is the solution of a linear system (the cost is quadratic in the
 *   action sequence), solved here in double; plan_cost matches it to 1e-3 relative and never lies
 *   below it (a realised cost), and is <= an untrained policy's cost.
 * - The bound policy_cost - plan_cost is >= 0 always, and 0 for a policy that is already optimal.
 * - The starts' plans are independent: a start optimised alone or in a batch ends at the same plan.
 * - Two players on duel_simple: a pursuer held at half throttle (speed at most v_p / 2 < v_e) lets
 *   the evader's straight flight along the initial line of sight reach d_t >= d_0 + (v_e - v_p/2) t dt
 *   at every step (issue section 6), so the evader's best response reaches at least that loss; the
 *   regret bounds are never negative; the frozen network's parameters are unchanged. */
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
#include "util/tier.h"

/* u = 4 a (the box [-4, 4]): the optimum's |u| stays well inside it (checked) */
#define MASS(GOAL)                                                                                    \
    "game: model\n"                                                                                   \
    "model:\n"                                                                                        \
    "  name: mass\n"                                                                                  \
    "  compile: false\n"                                                                              \
    "  constants: {accel: 2.0, damping: 0.9}\n"                                                       \
    "  state: {x: [-2, 2], v: [-2, 2]}\n"                                                             \
    "  inputs: {u: {dim: 1, lo: -4, hi: 4}}\n"                                                        \
    "  dynamics:\n"                                                                                   \
    "    v: ((damping - 1)*v + damping*accel*dt*u)/dt\n"                                              \
    "    x: v\n"                                                                                      \
    "  observe: [x, v]\n"                                                                             \
    "  costs: {goal: x^2, energy: u^2}\n"                                                             \
    "  reset:\n"                                                                                      \
    "    - {x: [-1, 1], v: [-0.5, 0.5]}\n"                                                            \
    "env: {dt: 0.1, horizon: 20}\n"                                                                   \
    "loss: {goal: " GOAL ", energy: 0.1}\n"                                                           \
    "policy: {hidden: [8]}\n"

enum { H_MASS = 20 };
static const double ACCEL = 2.0, DAMP = 0.9, DT = 0.1, UMAX = 4.0, W_ENERGY = 0.1;

typedef struct fixture {
    dg_run run;
    dg_policy pol;
    dg_params *params;
    float *state, *aux;
} fixture;

static void setup(fixture *f, const char *yaml, int B, uint64_t seed) {
    dg_err e = {0};
    memset(f, 0, sizeof *f);
    if (dg_run_parse(&f->run, yaml, strlen(yaml), "bounds.yaml", NULL, 0, &e) != DG_OK) fail_msg("%s", e.msg);
    if (dg_policy_create(f->run.env, f->run.opts.hidden, f->run.opts.nhidden, &f->pol, &f->params, &e) != DG_OK)
        fail_msg("%s", e.msg);
    dg_rng rng;
    dg_rng_seed(&rng, seed);
    dg_policy_reset_params(&f->pol, f->params, &rng);
    if (dg_run_init_draw(f->run.env, seed, B, &f->state, &f->aux, &e) != DG_OK) fail_msg("%s", e.msg);
}

static void teardown(fixture *f) {
    free(f->state);
    free(f->aux);
    dg_params_free(f->params);
    dg_run_free(&f->run);
}

/* The point mass's loss for the actions u (H, in the box's units) from (x0, v0), in double: the
 * model's semi-implicit step v <- damping (v + accel dt u), x <- x + dt v, each step's cost on the new
 * state, the mean over the H steps. */
static double mass_loss(double x, double v, const double *u, double wg) {
    double J = 0;
    for (int t = 0; t < H_MASS; t++) {
        v = DAMP * (v + ACCEL * DT * u[t]);
        x += DT * v;
        J += wg * x * x + W_ENERGY * u[t] * u[t];
    }
    return J / H_MASS;
}

/* The exact open-loop optimum from (x0, v0): x_t = c_t + sum_s G[t][s] u_s (c: the free motion, G:
 * the responses to unit impulses), so J = (wg |c + G u|^2 + w_e |u|^2) / H and its minimiser solves
 * (wg G'G + w_e I) u = -wg G'c (Gaussian elimination with partial pivoting). u gets it. */
static double mass_optimum(double x0, double v0, double wg, double *u) {
    double c[H_MASS], G[H_MASS][H_MASS], M[H_MASS][H_MASS + 1];
    for (int s = -1; s < H_MASS; s++) {  /* s = -1: no impulse (the free motion) */
        double x = x0, v = v0;
        for (int t = 0; t < H_MASS; t++) {
            v = DAMP * (v + ACCEL * DT * (t == s ? 1.0 : 0.0));
            x += DT * v;
            if (s < 0) c[t] = x;
            else G[t][s] = x - c[t];
        }
    }
    for (int i = 0; i < H_MASS; i++) {
        for (int j = 0; j < H_MASS; j++) {
            double m = i == j ? W_ENERGY : 0;
            for (int t = 0; t < H_MASS; t++) m += wg * G[t][i] * G[t][j];
            M[i][j] = m;
        }
        double r = 0;
        for (int t = 0; t < H_MASS; t++) r -= wg * G[t][i] * c[t];
        M[i][H_MASS] = r;
    }
    for (int k = 0; k < H_MASS; k++) {
        int piv = k;
        for (int i = k + 1; i < H_MASS; i++)
            if (fabs(M[i][k]) > fabs(M[piv][k])) piv = i;
        for (int j = 0; j <= H_MASS; j++) {
            const double tmp = M[k][j];
            M[k][j] = M[piv][j], M[piv][j] = tmp;
        }
        for (int i = k + 1; i < H_MASS; i++) {
            const double q = M[i][k] / M[k][k];
            for (int j = k; j <= H_MASS; j++) M[i][j] -= q * M[k][j];
        }
    }
    for (int k = H_MASS - 1; k >= 0; k--) {
        double r = M[k][H_MASS];
        for (int j = k + 1; j < H_MASS; j++) r -= M[k][j] * u[j];
        u[k] = r / M[k][k];
    }
    return mass_loss(x0, v0, u, wg);
}

/* (a) the plan's cost against the exact optimum: within 1e-3 relative, never below it beyond the
 * float tape's rounding (a realised cost is >= the optimum), and <= the untrained policy's cost */
static void test_plan_matches_lq_optimum(void **state) {
    (void)state;
    enum { B = 8 };
    fixture f;
    setup(&f, MASS("1.0"), B, 11);
    double pc[B], plan[B], sub[B];
    dg_certify_bound_rows rows = {.policy_cost = pc, .plan_cost = plan, .suboptimal = sub};
    dg_certify_bound_stats st;
    dg_certify_plan_opts o = dg_certify_plan_opts_default();
    dg_err e = {0};
    assert_int_equal(dg_certify_bounds(f.run.env, &f.pol, f.params, f.state, f.aux, B, &o, NULL, &rows, &st, &e), DG_OK);
    double worst = 0;
    for (int b = 0; b < B; b++) {
        double u[H_MASS];
        const double x0 = f.state[2 * b], v0 = f.state[2 * b + 1];
        const double J = mass_optimum(x0, v0, 1.0, u);
        for (int t = 0; t < H_MASS; t++) assert_true(fabs(u[t]) < 0.8 * UMAX);  /* the box never binds */
        /* the optimum's own check: a small change of any action costs more */
        for (int t = 0; t < H_MASS; t += 7) {
            u[t] += 1e-3;
            assert_true(mass_loss(x0, v0, u, 1.0) > J);
            u[t] -= 1e-3;
        }
        const double rel = (plan[b] - J) / J;
        worst = fmax(worst, fabs(rel));
        assert_true(rel > -1e-5);                 /* an upper bound of the value: float rounding only */
        assert_true(rel < 1e-3);
        assert_true(plan[b] <= pc[b]);
        assert_true(sub[b] == pc[b] - plan[b] && sub[b] >= 0);
        assert_true(pc[b] > 1.5 * J);             /* an untrained policy is far from it */
    }
    print_message("point mass: plan vs exact optimum, worst %.2e relative; %d restarts x %d steps, %.3f s "
                  "(%.4f s a restart, %d starts)\n", worst, st.restarts, st.iters, st.seconds, st.seconds_restart, B);
    teardown(&f);
}

/* (b) the bound is never negative, and 0 for a policy that is already optimal: without a goal the
 * cost is energy alone, and the zero network (action tanh(0) = 0) is optimal from every start */
static void test_bound_sign(void **state) {
    (void)state;
    enum { B = 6 };
    fixture f;
    setup(&f, MASS("0.0"), B, 5);
    memset(f.params->data, 0, f.params->total * sizeof(float));
    double pc[B], plan[B], sub[B];
    dg_certify_bound_rows rows = {.policy_cost = pc, .plan_cost = plan, .suboptimal = sub};
    dg_certify_bound_stats st;
    dg_certify_plan_opts o = dg_certify_plan_opts_default();
    o.iters = 50;
    dg_err e = {0};
    assert_int_equal(dg_certify_bounds(f.run.env, &f.pol, f.params, f.state, f.aux, B, &o, NULL, &rows, &st, &e), DG_OK);
    for (int b = 0; b < B; b++) {
        assert_true(pc[b] == 0.0);
        assert_true(plan[b] == 0.0 && sub[b] == 0.0);
    }
    assert_int_equal(st.kept[0], B);  /* no plan beat the optimal policy's own actions */
    for (int r = 1; r < o.restarts; r++) assert_true(st.restart_cost[0][r] >= 0.0);
    teardown(&f);
    /* a policy near the optimum (linear in the state through small tanh's, as a stationary LQ gain):
     * the bound is small and never negative */
    setup(&f, MASS("1.0"), B, 6);
    memset(f.params->data, 0, f.params->total * sizeof(float));
    const double eps = 0.01, K[2] = {1.6, 1.0};  /* a = -(K x) / 4: a gain that brings the mass home */
    const dg_mlp *m = &f.pol.mlp[0];
    float *w0 = dg_params_data(f.params, m->w[0]), *w1 = dg_params_data(f.params, m->w[1]);
    w0[0 * 2 + 0] = (float)eps, w0[1 * 2 + 1] = (float)eps;  /* h = tanh(eps (x, v)) ~ eps (x, v) */
    w1[0] = (float)(-K[0] / UMAX / eps), w1[1] = (float)(-K[1] / UMAX / eps);
    assert_int_equal(dg_certify_bounds(f.run.env, &f.pol, f.params, f.state, f.aux, B, &o, NULL, &rows, &st, &e), DG_OK);
    for (int b = 0; b < B; b++) {
        double u[H_MASS];
        const double J = mass_optimum(f.state[2 * b], f.state[2 * b + 1], 1.0, u);
        assert_true(sub[b] >= 0 && plan[b] <= pc[b]);
        assert_true(plan[b] >= J * (1 - 1e-5));
        assert_true(pc[b] < 1.5 * J);  /* the hand-made gain is near the optimum */
    }
    teardown(&f);
}

/* a policy whose episodes go non-finite (NaN weights) has a NaN cost, and the plans still find the
 * optimum: a finite cost beats a NaN one */
static void test_nonfinite_policy(void **state) {
    (void)state;
    enum { B = 3 };
    fixture f;
    setup(&f, MASS("1.0"), B, 4);
    for (size_t i = 0; i < f.params->total; i++) f.params->data[i] = NAN;
    double pc[B], plan[B];
    dg_certify_bound_stats st;
    dg_certify_plan_opts o = dg_certify_plan_opts_default();
    dg_err e = {0};
    assert_int_equal(dg_certify_bounds(f.run.env, &f.pol, f.params, f.state, f.aux, B, &o, NULL,
                                       &(dg_certify_bound_rows){.policy_cost = pc, .plan_cost = plan}, &st, &e), DG_OK);
    for (int b = 0; b < B; b++) {
        double u[H_MASS];
        const double J = mass_optimum(f.state[2 * b], f.state[2 * b + 1], 1.0, u);
        assert_true(isnan(pc[b]));
        assert_true(fabs(plan[b] - J) < 1e-3 * J);
    }
    teardown(&f);
}

/* each start's plan is its own: optimised alone (a batch of one) or beside others, the same plan
 * (the gradient of the batch mean times B is the start's own; Adam is elementwise) */
static void test_starts_independent(void **state) {
    (void)state;
    enum { B = 4 };
    fixture f;
    setup(&f, MASS("1.0"), B, 9);
    dg_certify_plan_opts o = dg_certify_plan_opts_default();
    o.restarts = 2;  /* the warm start and zero: no random draw that depends on B */
    o.iters = 10;    /* part way: the cost still moves with the plan */
    double all[B], one[1];
    dg_certify_bound_stats st;
    dg_err e = {0};
    assert_int_equal(dg_certify_bounds(f.run.env, &f.pol, f.params, f.state, f.aux, B, &o, NULL,
                                       &(dg_certify_bound_rows){.plan_cost = all}, &st, &e), DG_OK);
    for (int b = 0; b < B; b++) {
        assert_int_equal(dg_certify_bounds(f.run.env, &f.pol, f.params, f.state + 2 * b, f.aux, 1, &o, NULL,
                                           &(dg_certify_bound_rows){.plan_cost = one}, &st, &e), DG_OK);
        assert_true(fabs(one[0] - all[b]) <= 1e-5 * all[b]);
    }
    teardown(&f);
}

/* duel_simple's straight-flight loss from distance d0: d_t = d0 + (v_e - v_p/2) t dt, the game's
 * smoothing sqrt(d^2 + 1e-6), the mean over the H steps */
static double straight_flight(double d0, double vp, double ve, double dt, int H) {
    double J = 0;
    for (int t = 1; t <= H; t++) {
        const double d = d0 + (ve - vp / 2) * t * dt;
        J += sqrt(d * d + 1e-6);
    }
    return J / H;
}

/* (c) duel_simple, the pursuer at half throttle: a hand-made network heading at the evader's quadrant,
 * each component tanh(c h) with tanh(c) = 0.5/sqrt(2), so |a| <= 1/2 and its speed at most v_p / 2 */
static void test_half_throttle_pursuer(void **state) {
    (void)state;
    enum { B = 6 };
    static const char DUEL[] = "game: duel_simple\nenv: {horizon: 50}\npolicy: {hidden: [2]}\n"
                               "train: {batch: 16}\n";
    fixture f;
    setup(&f, DUEL, B, 21);
    const dg_mlp *m = &f.pol.mlp[0];
    float *w0 = dg_params_data(f.params, m->w[0]), *b0 = dg_params_data(f.params, m->b[0]);
    float *w1 = dg_params_data(f.params, m->w[1]), *b1 = dg_params_data(f.params, m->b[1]);
    memset(w0, 0, 8 * sizeof(float));
    memset(b0, 0, 2 * sizeof(float));
    memset(w1, 0, 4 * sizeof(float));
    memset(b1, 0, 2 * sizeof(float));
    w0[0 * 4 + 2] = 50.0f, w0[1 * 4 + 3] = 50.0f;  /* h = tanh(50 (e - p)): the sign of each component */
    const float c = (float)atanh(0.5 / sqrt(2.0));
    w1[0] = c, w1[3] = c;
    float *saved = malloc(f.params->total * sizeof(float));
    memcpy(saved, f.params->data, f.params->total * sizeof(float));
    double pc[B], br[2][B], regret[2][B];
    int route[2][B];
    dg_certify_bound_rows rows = {.policy_cost = pc, .br_cost = {br[0], br[1]}, .br_route = {route[0], route[1]},
                                  .regret = {regret[0], regret[1]}};
    dg_certify_bound_stats st;
    dg_certify_plan_opts o = dg_certify_plan_opts_default();
    o.bptt_epochs = 10;
    dg_err e = {0};
    assert_int_equal(dg_certify_bounds(f.run.env, &f.pol, f.params, f.state, f.aux, B, &o, &f.run.opts, &rows, &st, &e),
                     DG_OK);
    assert_memory_equal(saved, f.params->data, f.params->total * sizeof(float));  /* the frozen one did not move */
    const dg_env *env = f.run.env;
    for (int b = 0; b < B; b++) {
        const float *s = f.state + 4 * b;
        const double d0 = hypot((double)s[2] - s[0], (double)s[3] - s[1]);
        const double flight = straight_flight(d0, 1.0, 0.6, env->dt, env->horizon);
        print_message("start %d: d0 %.3f pair %.4f, evader's best %.4f (%s; straight flight %.4f), pursuer's best "
                      "%.4f (%s)\n", b, d0, pc[b], br[0][b], dg_certify_route_name(route[0][b]), flight, br[1][b],
                      dg_certify_route_name(route[1][b]));
        assert_true(br[0][b] >= flight * (1 - 1e-5));
        for (int k = 0; k < 2; k++) {
            assert_true(regret[k][b] >= 0);
            assert_true(regret[k][b] == (k == 0 ? br[0][b] - pc[b] : pc[b] - br[1][b]));
            assert_non_null(dg_certify_route_name(route[k][b]));
        }
    }
    print_message("duel_simple: %.3f s (%.4f s a restart, BPTT %.3f s), BPTT best at %d and %d starts\n", st.seconds,
                  st.seconds_restart, st.seconds_bptt, st.bptt_best[0], st.bptt_best[1]);
    free(saved);
    teardown(&f);
}

/* bad arguments and options are refused in one line; the memory estimate */
static void test_refused(void **state) {
    (void)state;
    fixture f;
    setup(&f, MASS("1.0"), 2, 1);
    dg_certify_bound_rows rows = {0};
    dg_certify_bound_stats st;
    dg_certify_plan_opts o = dg_certify_plan_opts_default();
    dg_err e = {0};
    o.restarts = 0;
    assert_int_equal(dg_certify_bounds(f.run.env, &f.pol, f.params, f.state, f.aux, 2, &o, NULL, &rows, &st, &e),
                     DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "restarts"));
    o = dg_certify_plan_opts_default();
    assert_int_equal(dg_certify_bounds(f.run.env, &f.pol, f.params, f.state, f.aux, 0, &o, NULL, &rows, &st, &e),
                     DG_ERR_ARG);
    /* what it allocates grows with the starts; nothing for no starts */
    assert_true(dg_certify_bounds_memory(f.run.env, &f.pol, 64) > dg_certify_bounds_memory(f.run.env, &f.pol, 1));
    assert_true(dg_certify_bounds_memory(f.run.env, &f.pol, 1) > 0);
    assert_true(dg_certify_bounds_memory(f.run.env, &f.pol, 0) == 0);
    assert_string_equal(dg_certify_route_name(DG_CERTIFY_ROUTE_GRID), "grid");
    assert_null(dg_certify_route_name(3));
    assert_string_equal(dg_certify_route_name(DG_CERTIFY_ROUTE_BPTT), "bptt");
    teardown(&f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_matches_lq_optimum),
        cmocka_unit_test(test_bound_sign),
        cmocka_unit_test(test_nonfinite_policy),
        cmocka_unit_test(test_starts_independent),
        cmocka_unit_test(test_half_throttle_pursuer),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
