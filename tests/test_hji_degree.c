/* Tests for games of degree in the HJI solver: the closed-form min/max of quadratic-cost inputs,
 * running costs, discount, the time to reach (held target, cap, obstacles), stationary solves by
 * time-marching and fast sweeping, and the five configs against their exact values on reduced grids
 * (the default grids: the ctest hji_degree_configs). Grids are small so the file stays fast. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "difgames/difgames.h"
#include "util/hji_degree.h"
#include "util/hji_load.h"

/* ------------------------------------------------------------------ helpers */

static void config_path(const char *name, char *out, size_t size) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", __FILE__);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    snprintf(out, size, "%s/../configs/hji/%s.yaml", dir, name);
}

/* DEG_CASES[i] on n nodes per axis with accuracy acc and method (NULL: the config's). */
static deg_error run_case(int i, int n, const char *acc, const char *method, dg_hji_stats *st) {
    char path[1200], msg[512];
    config_path(DEG_CASES[i].name, path, sizeof path);
    deg_error r;
    dg_hji_stats s;
    if (deg_run(path, &DEG_CASES[i], n, acc, method, &r, st ? st : &s, NULL, msg, sizeof msg)) fail_msg("%s", msg);
    return r;
}

/* x' = (x2, 0) + (0, 1) u + (0, 1) d: the LQ game's dynamics */
static void dyn_lq(void *user, const double *x, double *f, double *G, double *D) {
    (void)user;
    f[0] = x[1];
    G[1] = 1;
    D[1] = 1;
}

/* --------------------------------------------------------------------- tests */

/* Quadratic-cost inputs: u* = -B'p / (2R), d* = D'p / (2 gamma^2), H in closed form, the running cost. */
static void test_quadratic_inputs(void **state) {
    (void)state;
    dg_hji_game gm = {.nx = 2, .dyn = dyn_lq};
    gm.u = (dg_hji_input){.dim = 1, .set = DG_HJI_SET_QUAD, .role = DG_HJI_ROLE_MIN, .weight = 1};
    gm.d = (dg_hji_input){.dim = 1, .set = DG_HJI_SET_QUAD, .role = DG_HJI_ROLE_MAX, .weight = 4};
    dg_err e = {0};
    assert_int_equal(dg_hji_game_check(&gm, 2, &e), DG_ERR_ARG);   /* a quadratic input needs a payoff */
    assert_non_null(strstr(e.msg, "payoff"));
    gm.payoff = (dg_hji_payoff){.on = 1, .running = 0.5, .Q = {1, 0, 0, 2}};
    assert_int_equal(dg_hji_game_check(&gm, 2, &e), DG_OK);
    assert_true(dg_hji_game_degree(&gm));
    const double x[2] = {0.3, -0.7}, p[2] = {1.5, -2.0};
    double u, d;
    dg_hji_game_optimal(&gm, x, p, &u, &d);
    assert_true(fabs(u - 1.0) < 1e-15);     /* -p2 / 2 */
    assert_true(fabs(d + 0.25) < 1e-15);    /* p2 / 8 */
    /* H = -(L0 + x'Qx + p1 x2 - p2^2/4 + p2^2/16) */
    const double L0 = 0.5 + 0.09 + 2 * 0.49;
    const double H = -(L0 + p[0] * x[1] - p[1] * p[1] / 4 + p[1] * p[1] / 16);
    assert_true(fabs(dg_hji_game_hamiltonian(&gm, x, p) - H) < 1e-14);
    /* ... which is the min over u and max over d of L + p.f at the optimal inputs */
    double xd[2];
    dg_hji_game_dynamics(&gm, x, &u, &d, xd);
    const double L = dg_hji_game_running_cost(&gm, x, &u, &d);
    assert_true(fabs(L - (L0 + u * u - 4 * d * d)) < 1e-14);
    assert_true(fabs(-(L + p[0] * xd[0] + p[1] * xd[1]) - H) < 1e-14);
    for (double du = -0.1; du <= 0.1; du += 0.05)   /* a saddle: u minimises, d maximises */
        for (double dd = -0.1; dd <= 0.1; dd += 0.05) {
            const double uu = u + du, ddd = d + dd;
            dg_hji_game_dynamics(&gm, x, &uu, &d, xd);
            assert_true(dg_hji_game_running_cost(&gm, x, &uu, &d) + p[0] * xd[0] + p[1] * xd[1] >= -H - 1e-14);
            dg_hji_game_dynamics(&gm, x, &u, &ddd, xd);
            assert_true(dg_hji_game_running_cost(&gm, x, &u, &ddd) + p[0] * xd[0] + p[1] * xd[1] <= -H + 1e-14);
        }
    gm.u.weight = 0;
    assert_int_equal(dg_hji_game_check(&gm, 2, &e), DG_ERR_ARG);
    gm.u.weight = 1;
    gm.payoff.discount = -1;
    assert_int_equal(dg_hji_game_check(&gm, 2, &e), DG_ERR_ARG);
    /* a game of kind has no running cost */
    dg_hji_game kind = {.nx = 2, .dyn = dyn_lq};
    assert_true(dg_hji_game_running_cost(&kind, x, NULL, NULL) == 0);
    assert_false(dg_hji_game_degree(&kind));
}

static double box_cost_L(void *user, const double *x) {
    (void)user;
    return sin(x[0]) + x[1] * x[1];
}

/* A box at a running cost (DG_HJI_SET_BOX_COST) and a state cost callback (payoff.cost): H is the min
 * over the box of u (max over d) of L + p.f, found by brute force on a fine lattice of both boxes, for
 * gradients where the clip binds and where it does not; the optimal inputs are those extremes. */
static void test_box_cost_inputs(void **state) {
    (void)state;
    dg_hji_game gm = {.nx = 2, .dyn = dyn_lq};
    gm.u = (dg_hji_input){.dim = 1, .set = DG_HJI_SET_BOX_COST, .role = DG_HJI_ROLE_MIN, .lo = {-1}, .hi = {0.5},
                          .weight = 0.7};
    gm.d = (dg_hji_input){.dim = 1, .set = DG_HJI_SET_BOX_COST, .role = DG_HJI_ROLE_MAX, .lo = {-0.3}, .hi = {0.4},
                          .weight = 2};
    dg_err e = {0};
    assert_int_equal(dg_hji_game_check(&gm, 2, &e), DG_ERR_ARG);   /* a cost needs a payoff */
    gm.payoff = (dg_hji_payoff){.on = 1, .running = 0.25, .cost = box_cost_L};
    assert_int_equal(dg_hji_game_check(&gm, 2, &e), DG_OK);
    const double x[2] = {0.3, -0.7};
    const double ps[][2] = {{1.5, -0.2}, {0.5, 3.0}, {-1, -4.0}, {0.2, 0.1}, {0, 0}};
    for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
        const double *p = ps[k];
        double u, d, xd[2];
        dg_hji_game_optimal(&gm, x, p, &u, &d);
        assert_true(u >= -1 && u <= 0.5 && d >= -0.3 && d <= 0.4);
        const double H = dg_hji_game_hamiltonian(&gm, x, p);
        dg_hji_game_dynamics(&gm, x, &u, &d, xd);
        assert_true(fabs(-(dg_hji_game_running_cost(&gm, x, &u, &d) + p[0] * xd[0] + p[1] * xd[1]) - H) < 1e-13);
        double best = INFINITY;   /* min over u of max over d, on a lattice of 1/2000 of each box */
        for (int i = 0; i <= 2000; i++) {
            const double uu = -1 + 1.5 * i / 2000;
            double worst = -INFINITY;
            for (int j = 0; j <= 2000; j += 1) {
                const double dd = -0.3 + 0.7 * j / 2000;
                dg_hji_game_dynamics(&gm, x, &uu, &dd, xd);
                const double v = dg_hji_game_running_cost(&gm, x, &uu, &dd) + p[0] * xd[0] + p[1] * xd[1];
                if (v > worst) worst = v;
            }
            if (worst < best) best = worst;
        }
        assert_true(fabs(-best - H) < 1e-6);
        assert_true(fabs(dg_hji_game_running_cost(&gm, x, &u, &d) -
                         (0.25 + sin(0.3) + 0.49 + 0.7 * u * u - 2 * d * d)) < 1e-14);
    }
}

/* the generic Hamiltonian of the affine game in user, and its dissipation bound (|f| + box bounds) */
static void generic_ham(void *user, double t, int n, const double *x, const double *p, double *h) {
    (void)t;
    for (int i = 0; i < n; i++) {
        const double xi[2] = {x[i], x[n + i]}, pi[2] = {p[i], p[n + i]};
        h[i] = dg_hji_game_hamiltonian(user, xi, pi);
    }
}
static void generic_alpha(void *user, double t, int n, const double *x, const double *pmin, const double *pmax,
                          double *alpha) {
    (void)user, (void)t, (void)pmin, (void)pmax;
    for (int i = 0; i < n; i++) {
        alpha[i] = fabs(x[n + i]);           /* x1' = x2 */
        alpha[n + i] = 1.0 + 0.5;           /* x2' = u + d, |u| <= 1, |d| <= 0.5 */
    }
}

/* The affine kernel's box at a running cost (DG_HJI_SET_BOX_COST, vectorised over a row) against the
 * generic Hamiltonian of the same game (game.c's closed form, point by point) with the same
 * dissipation bound: the same values to rounding (measured 1.8e-15). */
static void test_box_cost_kernel(void **state) {
    (void)state;
    dg_hji_game gm = {.nx = 2, .dyn = dyn_lq, .payoff = {.on = 1, .Q = {1, 0, 0, 1}}};
    gm.u = (dg_hji_input){.dim = 1, .set = DG_HJI_SET_BOX_COST, .role = DG_HJI_ROLE_MIN, .lo = {-1}, .hi = {1},
                          .weight = 0.5};
    gm.d = (dg_hji_input){.dim = 1, .set = DG_HJI_SET_BOX_COST, .role = DG_HJI_ROLE_MAX, .lo = {-0.5}, .hi = {0.5},
                          .weight = 2};
    dg_hji_game gen = {.nx = 2, .ham = generic_ham, .alpha = generic_alpha, .user = &gm,
                       .payoff = {.on = 1}};
    dg_hji_grid g;
    dg_err e = {0};
    assert_int_equal(dg_hji_grid_init(&g, 2, (double[]){-2, -2}, (double[]){2, 2}, (int[]){61, 61}, NULL, &e), DG_OK);
    double *v0 = malloc((size_t)g.nodes * sizeof *v0), *a = malloc((size_t)g.nodes * sizeof *a);
    double *b = malloc((size_t)g.nodes * sizeof *b);
    for (int64_t j = 0; j < g.nodes; j++) {
        double x[2];
        dg_hji_grid_point(&g, j, x);
        v0[j] = x[0] * x[0] + x[1] * x[1];
    }
    dg_hji_opts o = dg_hji_opts_default();
    o.threads = 1;
    const double T = 0.5;
    assert_int_equal(dg_hji_solve(&g, &gm, &o, v0, NULL, 1, &T, a, NULL, &e), DG_OK);
    assert_int_equal(dg_hji_solve(&g, &gen, &o, v0, NULL, 1, &T, b, NULL, &e), DG_OK);
    double worst = 0, top = 0;
    for (int64_t j = 0; j < g.nodes; j++) {
        double x[2];
        dg_hji_grid_point(&g, j, x);
        if (fabs(x[0]) > 1 || fabs(x[1]) > 1) continue;   /* away from the grid's edges */
        worst = fmax(worst, fabs(a[j] - b[j]));
        top = fmax(top, fabs(a[j]));
    }
    print_message("box at a cost: affine kernel vs generic Hamiltonian, max |dV| %.3g of max V %.3g\n", worst, top);
    assert_true(top > 0.5 && worst < 1e-12 * top);
    free(v0);
    free(a);
    free(b);
}

/* A game of degree with L = 0 and no discount is the game of kind's plain equation, bit for bit (the
 * affine kernel adds L = 0 exactly), and float32 follows. */
static void test_degree_zero_cost_is_kind(void **state) {
    (void)state;
    dg_err e = {0};
    dg_hji_problem *p = load("game: pursuit2d\nmode: brs\nt_end: 0.5\naccuracy: medium\ngrid: {n: [31, 31]}\n", &e);
    if (!p) fail_msg("%s", e.msg);
    const int64_t N = p->grid.nodes;
    double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    const double T = 0.5;
    assert_int_equal(dg_hji_solve(&p->grid, &p->game, &p->opts, p->target, NULL, 1, &T, a, NULL, &e), DG_OK);
    dg_hji_game g = p->game;
    g.payoff.on = 1;
    assert_int_equal(dg_hji_solve(&p->grid, &g, &p->opts, p->target, NULL, 1, &T, b, NULL, &e), DG_OK);
    assert_memory_equal(a, b, N * sizeof *a);
    /* a running cost 1 adds t to a value whose Hamiltonian is unchanged: phi + t exactly on a flat field */
    g.payoff.running = 1;
    for (int64_t j = 0; j < N; j++) a[j] = 2;
    assert_int_equal(dg_hji_solve(&p->grid, &g, &p->opts, a, NULL, 1, &T, b, NULL, &e), DG_OK);
    for (int64_t j = 0; j < N; j++) assert_true(fabs(b[j] - 2.5) < 1e-12);
    /* a discount rho: phi' = 1 - rho phi from 2: phi(t) = 1/rho + (2 - 1/rho) e^{-rho t} (to RK2's error) */
    g.payoff.discount = 0.8;
    assert_int_equal(dg_hji_solve(&p->grid, &g, &p->opts, a, NULL, 1, &T, b, NULL, &e), DG_OK);
    const double ex = 1 / 0.8 + (2 - 1 / 0.8) * exp(-0.8 * T);
    for (int64_t j = 0; j < N; j++)
        if (!(fabs(b[j] - ex) < 1e-4)) fail_msg("node %lld: %.9g, expected %.9g", (long long)j, b[j], ex);
    free(a);
    free(b);
    dg_hji_problem_free(p);
}

/* pursuit2d_time: T = (|x| - r) / (v_p - v_e); the errors fall at the schemes' orders, stationary. */
static void test_pursuit_time(void **state) {
    (void)state;
    dg_hji_stats st;
    const deg_error d81 = run_case(0, 0, NULL, NULL, &st);   /* the default grid, 81^2: stationary */
    assert_true(st.converged && st.residual < 1e-6 && d81.rel_l1 < 1e-3);
    const deg_error m41 = run_case(0, 41, "medium", NULL, NULL);
    const deg_error m81 = run_case(0, 81, "medium", NULL, NULL);
    assert_true(m41.rel_l1 < 0.05 && m81.rel_l1 < 0.01);
    assert_true(log(m41.rel_l1 / m81.rel_l1) / log(2.0) > 1.7);
    const deg_error v41 = run_case(0, 41, "veryHigh", NULL, NULL);
    assert_true(v41.rel_l1 < 2e-3 && v41.mean_rel < 2e-3);
    const deg_error l41 = run_case(0, 41, "low", NULL, NULL);
    assert_true(l41.rel_l1 > v41.rel_l1);   /* the comparison can fail */
}

/* zermelo_time (the linear game with a current) and double_integrator_time (coarse grids). */
static void test_zermelo_and_double_integrator(void **state) {
    (void)state;
    dg_hji_stats st;
    const deg_error z = run_case(1, 0, NULL, NULL, &st);   /* 81^2 */
    assert_true(st.converged && st.residual < 1e-6);
    assert_true(z.rel_l1 < 1e-3 && z.mean_rel < 1e-3);
    const deg_error z41 = run_case(1, 41, "low", NULL, NULL);
    assert_true(z41.rel_l1 > z.rel_l1 && z41.rel_l1 < 0.2);
    const deg_error a = run_case(2, 81, "medium", NULL, NULL), b = run_case(2, 161, "medium", NULL, NULL);
    assert_true(a.rel_l1 < 0.2 && b.rel_l1 < 0.1 && b.rel_l1 < 0.75 * a.rel_l1);
}

/* lq_game: V = x'P(t)x from the Riccati ODE; quadratics are exact for ENO2 and WENO5, so only the time
 * step and the edges are left; upwind1 + LF converges at first order. */
static void test_lq_game(void **state) {
    (void)state;
    const deg_error v = run_case(3, 41, "veryHigh", NULL, NULL);
    assert_true(v.rel_l1 < 1e-5);
    const deg_error l21 = run_case(3, 21, "low", NULL, NULL), l41 = run_case(3, 41, "low", NULL, NULL);
    assert_true(l41.rel_l1 < l21.rel_l1 && log(l21.rel_l1 / l41.rel_l1) / log(2.0) > 0.7);
    /* the Riccati solution itself: P(t) symmetric, the ODE's RK4 converged */
    dg_err e = {0};
    char path[1200];
    config_path("lq_game", path, sizeof path);
    dg_cfg *c = dg_cfg_load(path, &e);
    dg_hji_problem *p = c ? dg_hji_problem_load(c, &e) : NULL;
    if (!p) fail_msg("%s", e.msg);
    deg_exact q, q2;
    deg_exact_init(&q, p, DEG_LQ);
    const dg_hji_linear *l = &p->lin;
    deg_riccati(l->A, l->B, l->D, p->game.payoff.Q, l->u_weight, sqrt(l->d_weight), 0, p->terminal, p->t_end, 200, q2.P);
    for (int i = 0; i < 4; i++) assert_true(fabs(q.P[i] - q2.P[i]) < 1e-10);
    assert_true(fabs(q.P[1] - q.P[2]) < 1e-12 && q.P[0] > 1 && q.P[3] > 1);
    dg_hji_problem_free(p);
    dg_cfg_free(c);
}

/* lq_discounted: the ARE's P; time-marching and fast sweeping both converge (sweeping at first order). */
static void test_lq_discounted(void **state) {
    (void)state;
    dg_hji_stats st;
    const deg_error v = run_case(4, 41, "veryHigh", NULL, &st);
    assert_true(st.converged && st.residual < 1e-4 && st.t > 1);
    assert_true(v.rel_l1 < 1e-4);
    const deg_error s21 = run_case(4, 21, NULL, "sweep", &st);
    assert_true(st.converged && st.iterations > 4);
    const deg_error s41 = run_case(4, 41, NULL, "sweep", NULL);
    assert_true(s41.rel_l1 < s21.rel_l1 && s41.rel_l1 < 0.6);
    /* ... and on a time to reach */
    const deg_error p41 = run_case(0, 41, NULL, "sweep", &st);
    assert_true(st.converged && p41.rel_l1 < 0.3);
}

/* The time to reach holds the target at 0 (reported), obstacles at the cap, and only grows with them. */
static void test_time_obstacles(void **state) {
    (void)state;
    static const char BASE[] = "game: pursuit2d\npayoff: time\nt_end: 6\naccuracy: medium\ngrid: {n: [41, 41]}\n";
    char yaml[512];
    dg_err e = {0};
    dg_hji_problem *p = load(BASE, &e);
    snprintf(yaml, sizeof yaml, "%sobstacles:\n  - {shape: box, min: [0.5, -0.5], max: [1.0, 0.5]}\n", BASE);
    dg_hji_problem *q = load(yaml, &e);
    if (!p || !q) fail_msg("%s", e.msg);
    const int64_t N = p->grid.nodes;
    double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    assert_int_equal(dg_hji_problem_solve(p, a, NULL, &e), DG_OK);
    assert_int_equal(dg_hji_problem_solve(q, b, NULL, &e), DG_OK);
    int inside = 0;
    double longer = 0, sum = 0;
    for (int64_t j = 0; j < N; j++) {
        double x[2];
        dg_hji_grid_point(&p->grid, j, x);
        assert_true(a[j] >= 0 && a[j] <= 6 && b[j] <= 6);
        if (p->target[j] <= 0) assert_true(a[j] == 0);
        if (q->stop[j] <= 0 && q->target[j] > 0) {  /* the problem's own obstacle nodes (held: stop <= 0) */
            assert_true(x[0] >= 0.5 - 1e-9 && x[0] <= 1.0 + 1e-9 && fabs(x[1]) <= 0.5 + 1e-9);
            assert_true(b[j] == 6);
            inside++;
        }
        /* the obstacle only lengthens the time: the exact time without it bounds both from below, to
         * medium's error on 41^2 (the corners aside: their ghost cells) */
        const double T = deg_pursuit_time(x, 1, 0.5, 0.25);
        if (fabs(x[0]) <= 1.5 && fabs(x[1]) <= 1.5 && (!(a[j] >= T - 0.1) || !(b[j] >= T - 0.1)))
            fail_msg("(%g, %g): %g with the obstacle, %g without, exact without %g", x[0], x[1], b[j], a[j], T);
    }
    for (int64_t j = 0; j < N; j++) {
        longer += b[j] - a[j];
        sum += a[j];
    }
    assert_true(inside > 10 && longer > 0.01 * sum);   /* the detour adds time */
    free(a);
    free(b);
    dg_hji_problem_free(p);
    dg_hji_problem_free(q);
}

/* What `hji play` reports: both players' feedback from the value's gradient (dg_hji_simulate), the
 * payoff added up along the path against V(x0). The LQ game (finite horizon: the value at 11
 * times-to-go, running cost by the midpoint rule, terminal cost at t_end) and pursuit2d's time to
 * capture (the time to where the path crosses the target's rim). A game of kind has no payoff. */
static double play(const char *name, const double *x0, int slices, dg_hji_sim_result *r) {
    char path[1200];
    dg_err e = {0};
    config_path(name, path, sizeof path);
    dg_cfg *c = dg_cfg_load(path, &e);
    if (c && !strcmp(name, "lq_game")) dg_cfg_set(c, "grid.n[0]", "41", &e), dg_cfg_set(c, "grid.n[1]", "41", &e);
    dg_hji_problem *p = c ? dg_hji_problem_load(c, &e) : NULL;
    if (!p) fail_msg("%s", e.msg);
    p->opts.threads = 1;
    const int64_t N = p->grid.nodes;
    double times[DG_HJI_MAX_TIMES], *V = malloc((size_t)(slices + 1) * N * sizeof *V);
    int nt = 0;
    assert_non_null(V);
    assert_int_equal(dg_hji_problem_solve_slices(p, slices, 0, NULL, &nt, times, V, NULL, &e), DG_OK);
    const dg_hji_slices VS = {.nt = nt, .t = times, .v = V};
    const dg_hji_sim_opts o = {.t_max = 2 * p->t_end, .max_steps = 100000};
    assert_int_equal(dg_hji_simulate(p, &VS, x0, &o, r, &e), DG_OK);
    const double v0 = dg_hji_slices_interp(&p->grid, &VS, p->t_end, x0, NULL);
    assert_true(r->value0 == v0);
    free(V);
    dg_hji_problem_free(p);
    dg_cfg_free(c);
    return v0;
}

static void test_payoff_along_the_path(void **state) {
    (void)state;
    dg_hji_sim_result r;
    const double x0[2] = {0.5, -0.3};
    double v0 = play("lq_game", x0, 11, &r);
    print_message("lq_game 41^2 from (0.5, -0.3): payoff %.6f along the path, V(x0) %.6f\n", r.payoff, v0);
    if (!(fabs(r.payoff - v0) < 1e-4 * v0)) fail_msg("LQ: payoff %.6f along the path, V(x0) %.6f", r.payoff, v0);
    assert_false(r.captured);  /* a running cost: the game is not over at the target ... */
    assert_true(fabs(r.steps * r.dt - 1.0) < 1e-12);  /* ... but at t_end */
    const double y0[2] = {1.2, -0.9};
    v0 = play("pursuit2d_time", y0, 1, &r);
    print_message("pursuit2d_time 81^2 from (1.2, -0.9): captured after %.4f, T(x0) %.4f\n", r.payoff, v0);
    assert_true(r.captured && r.payoff <= r.capture_time && r.payoff > r.capture_time - r.dt);
    if (!(fabs(r.payoff - v0) < 0.005 * v0)) fail_msg("pursuit: captured after %.4f, T(x0) %.4f", r.payoff, v0);
    const double z0[2] = {0.5, 0.2};
    v0 = play("pursuit2d", z0, 11, &r);  /* a game of kind: no payoff */
    assert_true(isnan(r.payoff) && v0 < 0 && r.captured);
}

/* hji plot of a game of degree: the file says what its value is (the fingerprint's payoff type and
 * discount), and the figure is of the value's level sets at round values inside its range, the
 * colour bar's ticks, titled and named by what V is; a game of kind keeps its zero level sets. */
static void test_plot_of_degree(void **state) {
    (void)state;
    static const char GRID[] = "grid: {min: [-2, -2], max: [2, 2], n: [21, 21]}\n";
    static const struct {
        const char *yaml, *title, *bar;
        int payoff, levels;
    } CASES[] = {
        {"game: pursuit2d\nt_end: 0.5\n", "pursuit2d: zero level sets of V", "V at t = 0.5", DG_HJI_PAYOFF_KIND, 0},
        {"game: pursuit2d\npayoff: time\nt_end: 3\n", "pursuit2d: level sets of V, the time to reach the target",
         "V: time to reach the target (s), at most 3", DG_HJI_PAYOFF_TIME, 1},
        {"game: linear\ndynamics: {A: [0, 1, 0, 0]}\ncontrol: {set: quadratic, matrix: [0, 1], weight: 1}\n"
         "disturbance: {set: quadratic, matrix: [0, 1], weight: 4}\npayoff: cost\n"
         "cost: {state: [1, 0, 0, 1], terminal: [1, 0, 0, 1]}\nt_end: 0.5\n",
         "linear: level sets of V, the cost to go", "V: cost to go over a horizon of 0.5", DG_HJI_PAYOFF_COST, 1},
        {"game: linear\ndynamics: {A: [0, 1, 0, 0]}\ncontrol: {set: quadratic, matrix: [0, 1], weight: 1}\n"
         "payoff: cost\ncost: {state: [1, 0, 0, 1], discount: 0.5}\nstationary: true\nt_end: 20\n"
         "solver: {tol: 1.0e-3}\n",
         "linear: level sets of V, the cost to go", "V: discounted cost to go (rho = 0.5)", DG_HJI_PAYOFF_COST, 1},
    };
    for (size_t c = 0; c < sizeof CASES / sizeof CASES[0]; c++) {
        char yaml[1024], path[] = "/tmp/dg_plot_degree_XXXXXX";
        snprintf(yaml, sizeof yaml, "%s%s", CASES[c].yaml, GRID);
        dg_err e = {0};
        dg_hji_problem *p = load(yaml, &e);
        if (!p) fail_msg("case %zu: %s", c, e.msg);
        const int fd = mkstemp(path);
        assert_true(fd >= 0);
        close(fd);
        const dg_hji_file_opts fo = {.label = "plot.yaml"};
        dg_hji_file_result r;
        if (dg_hji_solve_file(p, &fo, path, &r, &e) != DG_OK) fail_msg("case %zu: %s", c, e.msg);
        dg_hji_value v;
        assert_int_equal(dg_hji_value_open(path, &v, &e), DG_OK);
        assert_int_equal(v.payoff, CASES[c].payoff);
        double *V = malloc((size_t)v.grid.nodes * sizeof *V), lo = INFINITY, hi = -INFINITY;
        assert_non_null(V);
        assert_int_equal(dg_hji_value_read(&v, v.nt - 1, V, &e), DG_OK);
        for (int64_t j = 0; j < v.grid.nodes; j++) { lo = fmin(lo, V[j]); hi = fmax(hi, V[j]); }
        dg_hji_plot_spec sp;
        dg_hji_plot_describe(&v, NULL, lo, hi, &sp);
        if (strcmp(sp.title, CASES[c].title) || strcmp(sp.bar, CASES[c].bar))
            fail_msg("case %zu: title '%s', bar '%s'", c, sp.title, sp.bar);
        if (!CASES[c].levels) {
            assert_int_equal(sp.nlevels, 0);
        } else {  /* about DG_HJI_PLOT_LEVELS round values strictly inside the range, increasing */
            print_message("case %zu: V in [%g, %g], %d levels from %g to %g\n", c, lo, hi, sp.nlevels, sp.level[0],
                          sp.level[sp.nlevels - 1]);
            assert_true(sp.nlevels >= DG_HJI_PLOT_LEVELS / 2 - 1 && sp.nlevels <= 2 * DG_HJI_PLOT_LEVELS);
            const double step = sp.level[1] - sp.level[0];
            for (int k = 0; k < sp.nlevels; k++) {
                /* not at a rounding error from the ends: a loop of noise around the minimum */
                assert_true(sp.level[k] > lo + 1e-3 * (hi - lo) && sp.level[k] < hi - 1e-3 * (hi - lo));
                if (k) assert_true(fabs(sp.level[k] - sp.level[k - 1] - step) < 1e-9 * step);
                assert_true(fabs(sp.level[k] / step - round(sp.level[k] / step)) < 1e-6);
            }
            const double m = step / pow(10, floor(log10(step)) + 1e-12);  /* 1, 2 or 5 times a power of 10 */
            assert_true(fabs(m - 1) < 1e-9 || fabs(m - 2) < 1e-9 || fabs(m - 5) < 1e-9);
        }
        char png[sizeof path + 8];
        snprintf(png, sizeof png, "%s.png", path);
        assert_int_equal(dg_hji_plot_value(&v, NULL, png, &e), DG_OK);
        remove(png);
        free(V);
        dg_hji_value_close(&v);
        remove(path);
        dg_hji_problem_free(p);
    }
}

/* Stationary options: one output time, stats; errors name the key. */
static void test_options_and_errors(void **state) {
    (void)state;
    dg_err e = {0};
    dg_hji_problem *p = load("game: pursuit2d\npayoff: time\nstationary: true\nt_end: 6\naccuracy: low\n"
                             "grid: {n: [21, 21]}\n", &e);
    if (!p) fail_msg("%s", e.msg);
    double *V = malloc(2 * p->grid.nodes * sizeof *V);
    const double two[2] = {1, 2};
    assert_int_equal(dg_hji_solve(&p->grid, &p->game, &p->opts, dg_hji_problem_v0(p), NULL, 2, two, V, NULL, &e),
                     DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "stationary"));
    dg_hji_opts o = p->opts;
    o.tol = -1;
    assert_int_equal(dg_hji_solve(&p->grid, &p->game, &o, dg_hji_problem_v0(p), NULL, 1, two, V, NULL, &e), DG_ERR_ARG);
    assert_true(dg_hji_solve_memory(&p->grid, &p->game, &p->opts, 1) > 0);
    free(V);
    dg_hji_problem_free(p);
    static const struct { const char *yaml, *want; } BAD[] = {
        {"game: pursuit2d\npayoff: cost\nmode: brt\n", "mode"},
        {"game: pursuit2d\npayoff: cost\ncost: {state: [1, 0, 0]}\n", "cost.state"},
        {"game: pursuit2d\npayoff: time\ncost: {running: 2}\n", "cost.running"},
        {"game: pursuit2d\ncost: {discount: 1}\n", "'cost'"},
        {"game: pursuit2d\npayoff: cost\nsolver: {method: sweep}\n", "solver.method"},
        {"game: pursuit2d\npayoff: cost\nobstacles:\n  - {shape: ball, center: [1, 1], radius: 0.2}\n", "obstacles"},
        {"game: linear\ncontrol: {matrix: [1, 0, 0]}\n", "control.matrix"},
        {"game: linear\ncontrol: {set: quadratic, matrix: [0, 1]}\npayoff: time\n", "control.set"},
        {"game: linear\ncontrol: {matrix: [0, 1]}\ndisturbance: {set: ball}\n", "disturbance.matrix"},
        {"game: linear\ncontrol: {matrix: [0, 1], weight: 0}\n", "control.weight"},
        {"game: pursuit2d\npayoff: money\n", "payoff"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        dg_hji_problem *b = load(BAD[i].yaml, &e);
        if (b) fail_msg("accepted: %s", BAD[i].yaml);
        if (!strstr(e.msg, BAD[i].want)) fail_msg("'%s': %s", BAD[i].want, e.msg);
        assert_non_null(strstr(e.msg, "hji.yaml"));
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quadratic_inputs),
        cmocka_unit_test(test_box_cost_inputs),
        cmocka_unit_test(test_box_cost_kernel),  cmocka_unit_test(test_degree_zero_cost_is_kind),
        cmocka_unit_test(test_pursuit_time),      cmocka_unit_test(test_zermelo_and_double_integrator),
        cmocka_unit_test(test_lq_game),           cmocka_unit_test(test_lq_discounted),
        cmocka_unit_test(test_time_obstacles),    cmocka_unit_test(test_options_and_errors),
        cmocka_unit_test(test_payoff_along_the_path), cmocka_unit_test(test_plot_of_degree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
