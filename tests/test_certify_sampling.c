/* certify --sampling's library (difgames/certify_sampling.h):
 *   - the statistics against exact values: binomial tails, sample counts, allowed failures and the
 *     bound a count supports, computed independently in exact rational arithmetic (Python's
 *     fractions; the lines are beside each number) or in closed form;
 *   - the scenario program's level on small arrays by hand;
 *   - the problems --sampling refuses, one line each;
 *   - the lockstep rollout on a game whose failures are known exactly: x' = u + d on the plane, the
 *     pursuer u (min) in a ball of 2, the evader d (max, the avoider) in a ball of 1, the target the
 *     disk of 0.5; a network whose N is 0 (V = l: its feedback flies straight away), against the
 *     network's own other player and against the grid's: a path closes at speed 1, so it fails iff
 *     |x0| <= 0.5 + T; against a flat value the other player stays put and nothing fails;
 *   - a problem with no grid (collision9d, 9-D, dg_hji_problem_load_points): the check takes its
 *     mode brt_target and refuses its obstacles (their field, no array); a network whose N is 0
 *     (V = l: no gradient along the headings, so every turn rate is its box's centre 0 and the three
 *     aircraft fly straight) fails a start exactly when the closed-form straight paths come within
 *     the collision radius at a step (the target's formula, dg_hji_problem_target_at, checked at
 *     each), in the lockstep rollout and in one play (dg_hji_simulate_sources) alike;
 *   - (slow) air3d against the grid's truth: a small network trained here, certified at a loose
 *     epsilon and beta, then among the grid's nodes in the certified set (leaving out those within
 *     one cell of the grid's zero set) the fraction inside the grid's tube is below epsilon. */
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
#include "util/hji_load.h"
#include "util/tier.h"

#define PI 3.14159265358979323846

/* The exact values below come from this Python (fractions: no rounding until the last float()):
 *     from fractions import Fraction as F; from math import comb
 *     tail = lambda N, k, e: sum(comb(N, i) * e**i * (1 - e)**(N - i) for i in range(k + 1))
 *     float(tail(10, 2, F(1, 10))) == 0.9298091736
 *     float(tail(20, 0, F(1, 20))) == 0.3584859224085422
 *     float(tail(100, 3, F(1, 50))) == 0.8589615633982952
 *     float(tail(13809, 0, F(1, 1000))) == 9.996015309191599e-07
 *     float(tail(13808, 0, F(1, 1000))) == 1.000602133052212e-06
 *     float(tail(200, 1, F(1, 20))) == 0.0004040281004470293,  float(tail(200, 2, F(1, 20))) == 0.00233629419006392 */
static void test_tail_exact(void **state) {
    (void)state;
    assert_float_equal(dg_scenario_tail(10, 2, 0.1), 0.9298091736, 1e-13);
    assert_float_equal(dg_scenario_tail(20, 0, 0.05), 0.3584859224085422, 1e-13);
    assert_float_equal(dg_scenario_tail(100, 3, 0.02), 0.8589615633982952, 1e-13);
    assert_float_equal(dg_scenario_tail(13809, 0, 1e-3) / 9.996015309191599e-07, 1, 1e-10);
    assert_float_equal(dg_scenario_tail(13808, 0, 1e-3) / 1.000602133052212e-06, 1, 1e-10);
    assert_float_equal(dg_scenario_tail(200, 1, 0.05) / 0.0004040281004470293, 1, 1e-10);
    assert_float_equal(dg_scenario_tail(200, 2, 0.05) / 0.00233629419006392, 1, 1e-10);
    /* the ends, and a tail far below any double's single term: (1 - 0.5)^4000 alone underflows */
    assert_true(dg_scenario_tail(10, -1, 0.1) == 0);
    assert_true(dg_scenario_tail(10, 10, 0.1) == 1);
    assert_true(dg_scenario_tail(10, 3, 0) == 1);
    const double t = dg_scenario_tail(4000, 1900, 0.5);  /* P(Bin(4000, 1/2) <= 1900): about 8e-4 */
    assert_true(t > 7e-4 && t < 9e-4);
}

/* The least N with tail(N, k, eps) <= beta, by the bisection over exact tails of the Python above:
 *     nmin(F(1, 10), F(1, 100), 0) == 44;  nmin(F(1, 10), F(1, 100), 2) == 81;
 *     nmin(F(1, 20), F(1, 1000), 5) == 324;  nmin(F(1, 1000), F(1, 10**6), 0) == 13809;
 *     nmin(F(1, 1000), F(1, 3 * 10**6), 0) == 14907 (the default three rounds at beta / 3);
 *     nmin(F(1, 1000), F(1, 10**6), 5) == 25403.
 * k = 0 also in closed form: ceil(log beta / log(1 - eps)). */
static void test_samples_exact(void **state) {
    (void)state;
    assert_int_equal(dg_scenario_samples(0.1, 0.01, 0), 44);
    assert_int_equal(dg_scenario_samples(0.1, 0.01, 2), 81);
    assert_int_equal(dg_scenario_samples(0.05, 0.001, 5), 324);
    assert_int_equal(dg_scenario_samples(1e-3, 1e-6, 0), 13809);
    assert_int_equal(dg_scenario_samples(1e-3, 1e-6 / 3, 0), 14907);
    assert_int_equal(dg_scenario_samples(1e-3, 1e-6, 5), 25403);
    assert_int_equal(dg_scenario_samples(1e-3, 1e-6, 0), (int64_t)ceil(log(1e-6) / log1p(-1e-3)));
    assert_int_equal(dg_scenario_samples(0, 0.1, 0), -1);
    assert_int_equal(dg_scenario_samples(0.1, 1, 0), -1);
    assert_int_equal(dg_scenario_samples(0.1, 0.1, -1), -1);
}

/* tail(200, 1, 1/20) = 4.0e-4 <= 1e-3 < tail(200, 2, 1/20) = 2.3e-3 (above): 200 samples at
 * eps 0.05, beta 0.001 allow 1 failure; 43 samples at eps 0.1, beta 0.01 allow none (44 needed). */
static void test_failures_exact(void **state) {
    (void)state;
    assert_int_equal(dg_scenario_failures(200, 0.05, 0.001), 1);
    assert_int_equal(dg_scenario_failures(44, 0.1, 0.01), 0);
    assert_int_equal(dg_scenario_failures(43, 0.1, 0.01), -1);
    assert_int_equal(dg_scenario_failures(81, 0.1, 0.01), 2);
    assert_int_equal(dg_scenario_failures(80, 0.1, 0.01), 1);
}

/* No failure in N: tail(N, 0, e) = (1 - e)^N = beta at e = 1 - beta^(1/N) (closed form). Otherwise
 * the bound e' solves tail(N, m, e') = beta: the tail there is beta. */
static void test_epsilon_bound(void **state) {
    (void)state;
    assert_float_equal(dg_scenario_epsilon(13809, 0, 1e-6) / (1 - pow(1e-6, 1.0 / 13809)), 1, 1e-9);
    assert_float_equal(dg_scenario_epsilon(100, 0, 0.05) / (1 - pow(0.05, 0.01)), 1, 1e-9);
    const double e3 = dg_scenario_epsilon(500, 3, 1e-3);
    assert_float_equal(dg_scenario_tail(500, 3, e3) / 1e-3, 1, 1e-8);
    assert_true(dg_scenario_epsilon(10, 10, 0.1) == 1);
}

/* The (j + 1)-th largest value among the failures: by hand. */
static void test_level(void **state) {
    (void)state;
    const double v[] = {0.5, 3.0, 1.0, 2.5, 7.0, 0.2, 4.0};
    const unsigned char f[] = {1, 0, 1, 1, 0, 1, 1};  /* failing values: 0.5, 1.0, 2.5, 0.2, 4.0 */
    dg_err e = {0};
    double d;
    assert_int_equal(dg_scenario_level(v, f, 7, 0, &d, &e), DG_OK);
    assert_true(d == 4.0);  /* none above */
    assert_int_equal(dg_scenario_level(v, f, 7, 2, &d, &e), DG_OK);
    assert_true(d == 1.0);  /* 4.0 and 2.5 above */
    assert_int_equal(dg_scenario_level(v, f, 7, 5, &d, &e), DG_OK);
    assert_true(d == -INFINITY);  /* only 5 failures: no constraint left */
    assert_int_equal(dg_scenario_level(v, f, 7, -1, &d, &e), DG_ERR_ARG);
}

/* pursuit-evasion on the plane: x' = u + d, |u| <= 2 (the control minimises in game: linear), |d| <= 1
 * (maximises: the avoider), the target the disk of 0.5 */
static dg_hji_problem *plane(const char *extra) {
    char yaml[768];
    snprintf(yaml, sizeof yaml,
             "game: linear\ntarget_radius: 0.5\ncontrol: {set: ball, bound: 2.0}\n"
             "disturbance: {set: ball, bound: 1.0, matrix: [1, 0, 0, 1]}\nt_end: 1.0\naccuracy: high\n"
             "grid: {min: [-3, -3], max: [3, 3], n: [61, 61]}\n%s", extra);
    dg_err e;
    dg_hji_problem *p = load(yaml, &e);
    if (!p) fail_msg("%s", e.msg);
    return p;
}

static void test_refusals(void **state) {
    (void)state;
    dg_err e = {0};
    dg_hji_problem *p = plane("mode: brt\n");
    assert_int_equal(dg_certify_sampling_check(p, &e), DG_OK);
    dg_hji_problem_free(p);
    p = plane("mode: brs\n");
    assert_int_equal(dg_certify_sampling_check(p, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "mode: brs"));
    dg_hji_problem_free(p);
    p = plane("mode: brt\nobstacles:\n  - {shape: ball, center: [1.5, 0], radius: 0.3}\n");
    assert_int_equal(dg_certify_sampling_check(p, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "reach-avoid"));
    dg_hji_problem_free(p);
    dg_hji_problem *q = load("game: linear\ntarget_radius: 0.2\ncontrol: {set: ball, bound: 1.0}\npayoff: time\n"
                             "t_end: 2.0\ngrid: {min: [-1, -1], max: [1, 1], n: [21, 21]}\n", &e);
    assert_non_null(q);
    assert_int_equal(dg_certify_sampling_check(q, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "game of degree"));
    dg_hji_problem_free(q);
    /* one player who reaches and none who avoids: nothing to certify */
    q = load("game: linear\ntarget_radius: 0.2\ncontrol: {set: ball, bound: 1.0}\nmode: brt\nt_end: 1.0\n"
             "grid: {min: [-1, -1], max: [1, 1], n: [21, 21]}\n", &e);
    assert_non_null(q);
    assert_int_equal(dg_certify_sampling_check(q, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "role max"));
    dg_hji_problem_free(q);
}

/* a network of p whose N is 0: V = l(x) + tau 0 = l */
static void zero_net(const dg_hji_problem *p, dg_hji_learn_net *net) {
    dg_hji_learn_opts o;
    dg_hji_learn_opts_default(&o);
    o.hidden[0] = o.hidden[1] = 16;
    o.nhidden = 2;
    dg_err e = {0};
    assert_int_equal(dg_hji_learn_net_init(net, p, &o, &e), DG_OK);
    assert_true(net->exact);
    memset(net->params->data, 0, net->params->total * sizeof(dg_real));
}

/* starts at radius rad[i] (angle i), expected failure iff rad <= 1.5 (0.5 + T at closing speed 1),
 * the failure's time the first step at or past rad - 0.5 */
static void check_plane(const dg_hji_problem *p, const dg_hji_learn_net *net, const dg_hji_source *other) {
    const double rad[] = {0.3, 0.9, 1.2, 1.45, 1.55, 1.8, 2.5};
    const int B = (int)(sizeof rad / sizeof rad[0]);
    double x0[2 * 7], when[7];
    unsigned char fail[7];
    for (int i = 0; i < B; i++) x0[2 * i] = rad[i] * cos(0.7 * i + 0.1), x0[2 * i + 1] = rad[i] * sin(0.7 * i + 0.1);
    dg_err e = {0};
    const double dt = 0.01;
    assert_int_equal(dg_certify_rollout(p, net, other, B, x0, dt, 100, fail, when, &e), DG_OK);
    for (int i = 0; i < B; i++) {
        assert_int_equal(fail[i], rad[i] <= 1.5);
        if (rad[i] <= 0.5) assert_true(when[i] == 0);
        else if (rad[i] <= 1.5) assert_float_equal(when[i], dt * ceil((rad[i] - 0.5) / dt - 1e-6), 0.0101);
        else assert_true(when[i] == -1);
    }
}

static void test_rollout_exact(void **state) {
    (void)state;
    dg_hji_problem *p = plane("mode: brt\n");
    dg_hji_learn_net net;
    zero_net(p, &net);
    check_plane(p, &net, NULL);  /* both players from V = l */
    /* the pursuer from the grid's value (its slices: the solve's) */
    double times[8], *v = malloc(8 * (size_t)p->grid.nodes * sizeof *v);
    int nt = 0;
    dg_err e = {0};
    dg_hji_stats st;
    assert_int_equal(dg_hji_problem_solve_slices(p, 5, 0, NULL, &nt, times, v, &st, &e), DG_OK);
    const dg_hji_slices VS = {.nt = nt, .t = times, .v = v};
    const dg_hji_source grid = dg_hji_source_slices(&p->grid, &VS);
    check_plane(p, &net, &grid);
    /* the other player from a flat value (gradient 0: it stays put, its ball's centre) tells the two
     * players apart: the avoider, playing V = l, flies away at 1 and nothing outside the target fails
     * (were the roles swapped, the pursuer would close at 2 and fail every start within 2.5) */
    memset(v, 0, (size_t)p->grid.nodes * sizeof *v);
    const dg_hji_slices flat_v = {.nt = 1, .t = times + nt - 1, .v = v};
    const dg_hji_source flat = dg_hji_source_slices(&p->grid, &flat_v);
    const double x0[] = {0.3, 0, 1.0, 0, 0, -2.0, 2.9, 0};
    unsigned char fail[4];
    assert_int_equal(dg_certify_rollout(p, &net, &flat, 4, x0, 0.01, 100, fail, NULL, &e), DG_OK);
    assert_int_equal(fail[0], 1);
    assert_int_equal(fail[1], 0);
    assert_int_equal(fail[2], 0);
    assert_int_equal(fail[3], 0);
    free(v);
    dg_hji_learn_net_free(&net);
    dg_hji_problem_free(p);
}

/* The whole procedure on the plane with V = l = |x| - 0.5: S_0 = {|x| > 0.5} fails on 0.5 < |x| <= 1.5
 * (about 20 % of it), so round 1 fails; each later level comes from failing samples, whose l is at
 * most 1.0, and the set certified {|x| > 0.5 + delta} must keep the promise exactly: its failing
 * ring 0.5 + delta < |x| <= 1.5 holds at most epsilon of it (areas inside the box [-3, 3]^2). */
static void test_sampling_plane(void **state) {
    (void)state;
    dg_hji_problem *p = plane("mode: brt\n");
    dg_hji_learn_net net;
    zero_net(p, &net);
    dg_certify_sampling_opts o = dg_certify_sampling_opts_default();
    o.epsilon = 0.02;
    o.beta = 1e-3;
    o.failures = 4;
    o.rounds = 3;
    o.dt = 0.01;
    o.coverage_samples = 200000;
    o.seed = 5;
    dg_certify_sampling_result r;
    dg_err e = {0};
    assert_int_equal(dg_certify_sampling(p, &net, &o, &r, &e), DG_OK);
    assert_int_equal(r.N, dg_scenario_samples(0.02, 1e-3 / 3, 4));
    assert_true(r.rounds >= 2);
    assert_true(r.certified);
    assert_true(r.failures <= 4);
    assert_true(r.delta > 0.9 && r.delta <= 1.0);
    const double R = 0.5 + r.delta, ring = PI * (1.5 * 1.5 - R * R), set = 36 - PI * R * R;
    assert_true(ring / set <= o.epsilon);
    /* the box [-3, 3]^2: |x| > 0.5 holds 1 - pi 0.25 / 36 of it, S_delta set / 36 */
    assert_float_equal(r.safe_fraction, 1 - PI * 0.25 / 36, 4 * sqrt(0.02 / 200000) + 1e-3);
    assert_float_equal(r.coverage, set / 36, 4 * r.coverage_se + 1e-3);
    /* the failure rate among V > 0: the ring 0.5 < |x| <= 1.5 over the box outside the target */
    assert_float_equal(r.uncertified_rate, PI * (1.5 * 1.5 - 0.25) / (36 - PI * 0.25), 4 * r.uncertified_se);
    assert_true(r.epsilon_bound <= 0.02);
    dg_hji_learn_net_free(&net);
    dg_hji_problem_free(p);
}

/* configs/hji/collision9d.yaml with extra appended, loaded for work at points (9 axes: no grid) */
static dg_hji_problem *nine(const char *extra) {
    char path[1200], dir[1024];
    snprintf(dir, sizeof dir, "%s", __FILE__);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    snprintf(path, sizeof path, "%s/../configs/hji/collision9d.yaml", dir);
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("%s: cannot open", path);
    char yaml[4096];
    const size_t n = fread(yaml, 1, sizeof yaml - 1, f);
    fclose(f);
    yaml[n] = 0;
    snprintf(yaml + n, sizeof yaml - n, "%s", extra);
    dg_err e = {0};
    dg_cfg *c = dg_cfg_parse(yaml, strlen(yaml), "collision9d.yaml", &e);
    if (!c) fail_msg("%s", e.msg);
    dg_hji_problem *p = dg_hji_problem_load_points(c, &e);
    if (!p) fail_msg("%s", e.msg);
    dg_cfg_free(c);
    assert_int_equal(p->grid.ndim, 9);
    assert_null(p->target);  /* no grid: the target is its formula alone */
    return p;
}

/* Start i's straight paths (speed 0.6, headings fixed) in closed form: the first step s dt (s = 0 ..
 * steps) where two of the aircraft are within the radius 0.25, or -1. */
static double straight_when(const double *x, double dt, int steps) {
    for (int s = 0; s <= steps; s++) {
        const double t = s * dt;
        double px[3], py[3];
        for (int i = 0; i < 3; i++) px[i] = x[2 * i] + 0.6 * t * cos(x[6 + i]), py[i] = x[2 * i + 1] + 0.6 * t * sin(x[6 + i]);
        for (int i = 0; i < 3; i++)
            for (int j = i + 1; j < 3; j++)
                if (hypot(px[i] - px[j], py[i] - py[j]) <= 0.25) return t;
    }
    return -1;
}

static void test_nine_check(void **state) {
    (void)state;
    dg_err e = {0};
    dg_hji_problem *p = nine("");
    assert_int_equal(p->opts.mode, DG_HJI_MODE_BRT_TARGET);  /* a tube: its safe set is V > 0 */
    assert_int_equal(dg_certify_sampling_check(p, &e), DG_OK);
    dg_hji_problem_free(p);
    p = nine("obstacles:\n  - {shape: ball, center: [0, 0, 0, 0, 0, 0, 0, 0, 0], radius: 0.3}\n");
    assert_false(p->obstacle);  /* the field without its array */
    assert_int_equal(dg_certify_sampling_check(p, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "reach-avoid"));
    dg_hji_problem_free(p);
}

static void test_nine_rollout(void **state) {
    (void)state;
    dg_hji_problem *p = nine("");
    dg_hji_learn_net net;
    zero_net(p, &net);
    enum { B = 200, STEPS = 100 };
    const double dt = 0.01;
    double *x0 = malloc(B * 9 * sizeof *x0), when[B];
    unsigned char fail[B];
    dg_rng r;
    dg_rng_seed(&r, 17);
    for (int b = 0; b < B; b++)
        for (int k = 0; k < 9; k++) {
            const double u = (double)(dg_rng_u64(&r) >> 11) * 0x1p-53;
            x0[b * 9 + k] = p->grid.lo[k] + (p->grid.hi[k] - p->grid.lo[k]) * u;
        }
    dg_err e = {0};
    assert_int_equal(dg_certify_rollout(p, &net, NULL, B, x0, dt, STEPS, fail, when, &e), DG_OK);
    int at0 = 0, later = 0, never = 0;
    for (int b = 0; b < B; b++) {
        const double t = straight_when(x0 + b * 9, dt, STEPS);
        if (fail[b] != (t >= 0) || fabs(when[b] - t) > 1e-9)
            fail_msg("start %d: failed %d at %g, straight paths: %g", b, fail[b], when[b], t);
        at0 += t == 0, later += t > 0, never += t < 0;
    }
    assert_true(at0 > 0 && later > 0 && never > 0);  /* each case is there */
    /* one play (hji play's path) from the first starts of each kind: the same capture time */
    dg_hji_source src;
    assert_int_equal(dg_hji_learn_source(&net, p, &src, &e), DG_OK);
    const dg_hji_sim_opts so = {.t_max = 1.0, .dt = dt, .max_steps = 1000};
    for (int b = 0; b < 12; b++) {
        dg_hji_sim_result res;
        assert_int_equal(dg_hji_simulate_sources(p, &src, NULL, x0 + b * 9, &so, &res, &e), DG_OK);
        assert_int_equal(res.captured, fail[b]);
        assert_true(fabs(res.capture_time - when[b]) < 1e-9);
    }
    free(x0);
    dg_hji_learn_net_free(&net);
    dg_hji_problem_free(p);
}

/* air3d against the grid's truth (slow: a network trained here, at reduced size): air3d at a horizon
 * of 1.4 s on 31 x 25 x 30 nodes, the grid's value with 8 slices (the pursuer's feedback), a 3 x 64
 * sine network trained 1500 iterations, certified at epsilon 0.05, beta 1e-3 (4 rounds, 10 failures
 * allowed). Then the check: among the grid's nodes in S_delta, leaving out those within one
 * cell of the grid's zero set (a neighbour along an axis of the other sign), the fraction inside the
 * grid's tube (V_grid <= 0) is below epsilon. At 1.4 s this small network certifies about a fifth of
 * the box whatever the seed (seeds 1-3: 20-23 %, 5,000-5,700 nodes checked); at 2.8 s it is too rough
 * to certify more than a sliver, or anything (the full-size 2.8 s check is docs/neural.md's). */
static void test_air3d_grid_truth(void **state) {
    (void)state;
    dg_err e = {0};
    dg_hji_problem *p = load("game: air3d\nt_end: 1.4\nmode: brt\naccuracy: veryHigh\n"
                             "grid: {min: [-6, -10, 0], max: [20, 10, 6.283185307179586], n: [31, 25, 30]}\n", &e);
    if (!p) fail_msg("%s", e.msg);
    const int64_t nodes = p->grid.nodes;
    double times[16], *v = malloc(16 * (size_t)nodes * sizeof *v);
    int nt = 0;
    dg_hji_stats st;
    assert_int_equal(dg_hji_problem_solve_slices(p, 8, 0, NULL, &nt, times, v, &st, &e), DG_OK);
    const double *vT = v + (size_t)(nt - 1) * (size_t)nodes;
    const dg_hji_slices VS = {.nt = nt, .t = times, .v = v};
    const dg_hji_source grid = dg_hji_source_slices(&p->grid, &VS);
    dg_hji_learn_opts lo;
    dg_hji_learn_opts_default(&lo);
    lo.hidden[0] = lo.hidden[1] = lo.hidden[2] = 64;
    lo.nhidden = 3;
    lo.points = 1024;
    lo.iterations = 1500;
    lo.pretrain = 100;
    lo.curriculum = 800;
    lo.lr = 1e-4;
    lo.seed = 1;
    dg_hji_learner *L = dg_hji_learner_create(p, &lo, &e);
    assert_non_null(L);
    for (int i = 0; i < lo.iterations; i++) assert_int_equal(dg_hji_learner_step(L, NULL, &e), DG_OK);
    const dg_hji_learn_net *net = dg_hji_learner_net(L);
    dg_certify_sampling_opts o = dg_certify_sampling_opts_default();
    o.epsilon = 0.05;
    o.beta = 1e-3;
    o.rounds = 4;
    o.seed = 2;
    o.other = &grid;
    dg_certify_sampling_result r;
    assert_int_equal(dg_certify_sampling(p, net, &o, &r, &e), DG_OK);
    assert_true(r.certified);
    /* V_theta at the nodes, and the grid's truth there */
    const int nx = 3;
    double *x = malloc((size_t)nodes * nx * sizeof *x), *tau = malloc((size_t)nodes * sizeof *tau);
    double *vn = malloc((size_t)nodes * sizeof *vn);
    for (int64_t i = 0; i < nodes; i++) {
        dg_hji_grid_point(&p->grid, i, x + i * nx);
        tau[i] = p->t_end;
    }
    assert_int_equal(dg_hji_learn_eval(net, p, nodes, x, tau, vn, &e), DG_OK);
    int64_t in = 0, tube = 0;
    for (int64_t i = 0; i < nodes; i++) {
        if (!(vn[i] > r.delta)) continue;
        int near = 0;  /* a neighbour along an axis across the grid's zero set (periodic psi wraps) */
        int64_t stride = 1;
        for (int k = nx - 1; k >= 0 && !near; k--) {
            const int n = p->grid.n[k];
            const int c = (int)((i / stride) % n);
            for (int sgn = -1; sgn <= 1 && !near; sgn += 2) {
                int c2 = c + sgn;
                if (p->grid.bc[k] == DG_HJI_BC_PERIODIC) c2 = (c2 + n) % n;
                if (c2 < 0 || c2 >= n) continue;
                near = (vT[i + (int64_t)(c2 - c) * stride] > 0) != (vT[i] > 0);
            }
            stride *= n;
        }
        if (near) continue;
        in++;
        tube += vT[i] <= 0;
    }
    print_message("air3d: delta %.4g, coverage %.4g, uncertified rate %.4g, %lld of %lld certified nodes in the grid's "
                  "tube\n", r.delta, r.coverage, r.uncertified_rate, (long long)tube, (long long)in);
    assert_true(in > 1000);   /* a certified set worth the name */
    assert_true((double)tube / (double)in < o.epsilon);
    free(x), free(tau), free(vn), free(v);
    dg_hji_learner_free(L);
    dg_hji_problem_free(p);
}

int main(void) {
    const struct CMUnitTest unit[] = {
        cmocka_unit_test(test_tail_exact),     cmocka_unit_test(test_samples_exact),
        cmocka_unit_test(test_failures_exact), cmocka_unit_test(test_epsilon_bound),
        cmocka_unit_test(test_level),          cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_rollout_exact),  cmocka_unit_test(test_sampling_plane),
        cmocka_unit_test(test_nine_check),     cmocka_unit_test(test_nine_rollout),
    };
    const struct CMUnitTest slow[] = {cmocka_unit_test(test_air3d_grid_truth)};
    return dg_test_run_tiers(unit, slow, NULL, NULL);
}
