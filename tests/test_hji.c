/* Tests for the HJI level-set solver: convergence orders on the smooth benchmark and on pursuit2d's
 * exact value, tubes that only grow, interpolation everywhere, periodic wrap, float32, obstacles,
 * determinism across runs and thread counts, a 5-d grid, the equilibrium inputs, the configs
 * (and their errors with file:line), air3d against the analytic barrier on a coarse grid.
 * Grids are small so the file stays fast under ASan. */
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
#include <png.h>

#include "difgames/difgames.h"
#include "util/hji_smooth.h"
#include "util/hji_load.h"

/* ------------------------------------------------------------------ helpers */

static dg_hji_problem *load_ok(const char *yaml) {
    dg_err e;
    dg_hji_problem *p = load(yaml, &e);
    if (!p) fail_msg("load failed: %s", e.msg);
    return p;
}

/* Solves p at times[0..nt) into a new (nt, nodes) array. */
static double *solve_times(const dg_hji_problem *p, int nt, const double *times, dg_hji_stats *st) {
    double *V = malloc((size_t)p->grid.nodes * (size_t)nt * sizeof *V);
    assert_non_null(V);
    dg_err e = {0};
    if (dg_hji_solve(&p->grid, &p->game, &p->opts, p->target, p->obstacle, nt, times, V, st, &e))
        fail_msg("solve failed: %s", e.msg);
    return V;
}

static double *solve(const dg_hji_problem *p) { return solve_times(p, 1, &p->t_end, NULL); }

/* ------------------------------------------------------- the smooth benchmark */

/* L1 error (mean abs) at t = 0.5/pi^2 on n nodes of the periodic [-1, 1). */
static double smooth_l1(int n, dg_hji_deriv d, dg_hji_time tm, double cfl, double dtc) {
    dg_hji_opts o = dg_hji_opts_default();
    o.deriv = d;
    o.time = tm;
    o.cfl = cfl;
    o.weno_eps = DG_HJI_WENO_EPS_CONST;
    o.threads = 1;
    double l1, linf;
    dg_err e = {0};
    if (smooth_errors(n, o, dtc, &l1, &linf, &e)) fail_msg("%s", e.msg);
    return l1;
}

static void check_orders(const char *name, dg_hji_deriv d, dg_hji_time tm, double cfl, double dtc,
                         double min_order) {
    const double e40 = smooth_l1(40, d, tm, cfl, dtc), e80 = smooth_l1(80, d, tm, cfl, dtc);
    const double e160 = smooth_l1(160, d, tm, cfl, dtc);
    const double o1 = log2(e40 / e80), o2 = log2(e80 / e160);
    printf("  %-22s L1 %.3e %.3e %.3e  orders %.2f %.2f\n", name, e40, e80, e160, o1, o2);
    if (o2 < min_order || o1 < min_order - 0.3)
        fail_msg("%s: observed orders %.2f %.2f, expected > %.2f", name, o1, o2, min_order);
}

/* WENO5 + RK3 with dt ~ dx^(5/3) converges at fifth order (time error O(dt^3) = O(dx^5)). */
static void test_smooth_weno5(void **state) {
    (void)state;
    check_orders("WENO5 + RK3", DG_HJI_DERIV_WENO5, DG_HJI_TIME_RK3, 0.75, 0.5, 4.5);
}

/* The lower presets at their design orders. ENO3 + RK3 needs CFL <= ~0.6 here: at 0.75 its stencil
 * switching makes it erratic on this problem (ToolboxLS's own default CFL factor is 0.5). */
static void test_smooth_lower(void **state) {
    (void)state;
    check_orders("upwind1 + Euler", DG_HJI_DERIV_UPWIND1, DG_HJI_TIME_EULER, 0.75, 0, 0.9);
    check_orders("ENO2 + RK2", DG_HJI_DERIV_ENO2, DG_HJI_TIME_RK2, 0.75, 0, 1.7);
    check_orders("ENO3 + RK3 (cfl 0.5)", DG_HJI_DERIV_ENO3, DG_HJI_TIME_RK3, 0.5, 0, 2.6);
}

/* Spatial derivatives alone: the mean of p- and p+ of a periodic smooth function. */
static void test_derivative_orders(void **state) {
    (void)state;
    static const double want[] = {1.9, 1.9, 2.8, 4.5};
    for (int d = 0; d < 4; d++) {
        double err[2];
        for (int k = 0; k < 2; k++) {
            int n = 64 << k;
            dg_hji_grid g;
            dg_err e = {0};
            assert_int_equal(dg_hji_grid_init(&g, 1, (double[]){0}, (double[]){2 * PI}, &n, (int[]){1}, &e), 0);
            double *v = malloc((size_t)n * sizeof *v), *gr = malloc((size_t)n * sizeof *gr);
            for (int i = 0; i < n; i++) v[i] = sin(dg_hji_grid_coord(&g, 0, i)) + 0.5 * cos(2 * dg_hji_grid_coord(&g, 0, i));
            dg_hji_opts o = dg_hji_opts_default();
            o.deriv = (dg_hji_deriv)d;
            o.threads = 1;
            assert_int_equal(dg_hji_gradient(&g, &o, v, gr, &e), DG_OK);
            err[k] = 0;
            for (int i = 0; i < n; i++) {
                const double x = dg_hji_grid_coord(&g, 0, i);
                err[k] = fmax(err[k], fabs(gr[i] - (cos(x) - sin(2 * x))));
            }
            free(v);
            free(gr);
        }
        printf("  derivative %d: max err %.2e -> %.2e, order %.2f\n", d, err[0], err[1], log2(err[0] / err[1]));
        assert_true(log2(err[0] / err[1]) > want[d]);
    }
}

/* Every dissipation on the generic path: all converge, local ones are no less accurate. */
static void test_dissipation_generic(void **state) {
    (void)state;
    double e[4][2];
    for (int d = 0; d < 4; d++)
        for (int k = 0; k < 2; k++) {
            dg_hji_opts o = dg_hji_opts_default();
            dg_hji_opts_accuracy(&o, DG_HJI_ACCURACY_MEDIUM);
            o.diss = (dg_hji_diss)d;
            double linf;
            dg_err er = {0};
            assert_int_equal(smooth_errors(40 << k, o, 0, &e[d][k], &linf, &er), DG_OK);
        }
    printf("  ENO2+RK2 L1 at n 40, 80: global %.2e %.2e, local %.2e %.2e, local-local %.2e %.2e, "
           "global max %.2e %.2e\n", e[0][0], e[0][1], e[1][0], e[1][1], e[2][0], e[2][1], e[3][0], e[3][1]);
    for (int d = 0; d < 4; d++) assert_true(log2(e[d][0] / e[d][1]) > 1.5);
    assert_true(e[2][1] <= e[0][1] * 1.01 && e[0][1] <= e[3][1] * 1.01);
}

/* Fixed steps land on every output time; BRT_TARGET keeps phi <= v0; the options all run. */
static void test_options(void **state) {
    (void)state;
    dg_hji_problem *p = load_ok("game: air3d\naccuracy: high\nmode: brt_target\nt_end: 0.3\n"
                                "grid: {n: [15, 13, 12]}\n"
                                "solver: {dt: 0.007, dissipation: locallocal, weno_eps: const, boundary: linear}\n");
    assert_true(p->grid.bc[0] == DG_HJI_BC_LINEAR && p->grid.bc[2] == DG_HJI_BC_PERIODIC);
    const double times[3] = {0.1, 0.25, 0.3};
    dg_hji_stats st;
    double *V = solve_times(p, 3, times, &st);
    /* 0.1/0.007 -> 15 steps, 0.15/0.007 -> 22, 0.05/0.007 -> 8 */
    assert_int_equal(st.steps, 15 + 22 + 8);
    assert_true(st.dt_max <= 0.007 && st.dt_min > 0.006);
    for (int64_t j = 0; j < 3 * p->grid.nodes; j++) assert_true(V[j] <= p->target[j % p->grid.nodes]);
    free(V);
    p->opts.mode = DG_HJI_MODE_BRS;
    p->opts.deriv = DG_HJI_DERIV_WENO5;
    p->opts.diss = DG_HJI_DISS_LOCAL;
    p->opts.dt = 0;
    V = solve_times(p, 3, times, &st);
    for (int64_t j = 0; j < 3 * p->grid.nodes; j++) assert_true(isfinite(V[j]));
    free(V);
    dg_hji_problem_free(p);
    /* bad arguments */
    dg_err e = {0};
    dg_hji_problem *q = load_ok("game: pursuit2d\ngrid: {n: [5, 5]}\n");
    double out[25];
    const double back[2] = {0.5, 0.2};
    assert_int_equal(dg_hji_solve(&q->grid, &q->game, &q->opts, q->target, NULL, 2, back, out, NULL, &e),
                     DG_ERR_ARG);
    q->opts.cfl = -1;
    assert_int_equal(dg_hji_solve(&q->grid, &q->game, &q->opts, q->target, NULL, 1, back, out, NULL, &e),
                     DG_ERR_ARG);
    q->opts.cfl = 0.75;
    q->game.u.radius = -1;
    assert_int_equal(dg_hji_solve(&q->grid, &q->game, &q->opts, q->target, NULL, 1, back, out, NULL, &e),
                     DG_ERR_ARG);
    dg_hji_problem_free(q);
}

/* Ghost cells: linear extrapolation keeps a linear function's derivatives exact up to the edge;
 * "away" extrapolation bends the ghosts away from zero (ToolboxLS's default). */
static void test_upwind_boundary(void **state) {
    (void)state;
    dg_hji_grid g;
    dg_err e = {0};
    assert_int_equal(dg_hji_grid_init(&g, 2, (double[]){-1, 0}, (double[]){1, 1}, (int[]){9, 6}, NULL, &e), 0);
    double v[54], l[108], r[108];
    for (int64_t j = 0; j < g.nodes; j++) {
        double x[2];
        dg_hji_grid_point(&g, j, x);
        v[j] = 5 - x[0] + 2 * x[1];          /* positive everywhere */
    }
    for (int d = 0; d < 4; d++) {
        dg_hji_opts o = dg_hji_opts_default();
        o.deriv = (dg_hji_deriv)d;
        o.threads = 1;
        g.bc[0] = g.bc[1] = DG_HJI_BC_LINEAR;
        assert_int_equal(dg_hji_upwind(&g, &o, v, l, r, &e), DG_OK);
        for (int64_t j = 0; j < g.nodes; j++) {
            assert_true(fabs(l[j] + 1) < 1e-9 && fabs(r[j] + 1) < 1e-9);
            assert_true(fabs(l[g.nodes + j] - 2) < 1e-9 && fabs(r[g.nodes + j] - 2) < 1e-9);
        }
        g.bc[0] = g.bc[1] = DG_HJI_BC_AWAY;
        assert_int_equal(dg_hji_upwind(&g, &o, v, NULL, r, &e), DG_OK);
        const int last[2] = {8, 3}, first[2] = {4, 0};
        if (d == 0) assert_true(fabs(r[dg_hji_grid_node(&g, last)] - 1) < 1e-9);  /* (|dphi| dx)/dx */
        assert_true(r[dg_hji_grid_node(&g, last)] > -1 + 1e-6);   /* the ghost beyond x = 1 bends up */
        assert_true(fabs(r[g.nodes + dg_hji_grid_node(&g, first)] - 2) < 1e-9);  /* inside: untouched */
    }
    dg_hji_opts o = dg_hji_opts_default();
    assert_int_equal(dg_hji_upwind(&g, &o, v, NULL, NULL, &e), DG_ERR_ARG);
}

/* ----------------------------------------------------------------- pursuit2d */

/* Mean and max abs error of pursuit2d against V = max(|x| - (v_p - v_e) t, 0) - r. */
static void pursuit_error(int n, const char *acc, const char *mode, double *mean, double *mx) {
    char yaml[256];
    snprintf(yaml, sizeof yaml, "game: pursuit2d\nt_end: 0.5\naccuracy: %s\nmode: %s\ngrid: {n: [%d, %d]}\n",
             acc, mode, n, n);
    dg_hji_problem *p = load_ok(yaml);
    double *V = solve(p);
    double x[2];
    *mean = *mx = 0;
    for (int64_t j = 0; j < p->grid.nodes; j++) {
        dg_hji_grid_point(&p->grid, j, x);
        const double r = hypot(x[0], x[1]) - (dg_hji_problem_param(p, "speed_pursuer") - dg_hji_problem_param(p, "speed_evader")) * p->t_end;
        const double err = fabs(V[j] - (fmax(r, 0) - dg_hji_problem_param(p, "capture_radius")));
        *mean += err / (double)p->grid.nodes;
        *mx = fmax(*mx, err);
    }
    free(V);
    dg_hji_problem_free(p);
}

static void test_pursuit_exact(void **state) {
    (void)state;
    static const char *const ACC[] = {"low", "medium", "veryHigh"};
    for (int a = 0; a < 3; a++) {
        double m1, x1, m2, x2, m3, x3;
        pursuit_error(21, ACC[a], "brt", &m1, &x1);
        pursuit_error(41, ACC[a], "brt", &m2, &x2);
        pursuit_error(41, ACC[a], "brs", &m3, &x3);
        printf("  pursuit2d %-8s mean err 21^2 %.2e 41^2 %.2e (order %.2f), max %.2e -> %.2e; brs %.2e\n",
               ACC[a], m1, m2, log2(m1 / m2), x1, x2, m3);
        assert_true(m2 < m1 && x2 < x1);
        assert_true(log2(m1 / m2) > 0.8);
        assert_true(m3 < 4 * m2);  /* the exact tube and set coincide for this game */
    }
    double mv, xv;
    pursuit_error(41, "veryHigh", "brt", &mv, &xv);
    assert_true(mv < 3e-3);
}

/* ----------------------------------------------------------- tubes, obstacles */

static const char AIR3D_COARSE[] = "game: air3d\naccuracy: medium\ngrid: {n: [27, 21, 24]}\n";

static void test_brt_monotone(void **state) {
    (void)state;
    dg_hji_problem *p = load_ok(AIR3D_COARSE);
    const double times[4] = {0, 0.4, 1.0, 1.6};
    double *V = solve_times(p, 4, times, NULL);
    const int64_t N = p->grid.nodes;
    for (int64_t j = 0; j < N; j++) {
        assert_true(V[j] == p->target[j]);
        for (int k = 1; k < 4; k++) assert_true(V[k * N + j] <= V[(k - 1) * N + j]);
    }
    int64_t in0 = 0, in3 = 0;
    for (int64_t j = 0; j < N; j++) {
        in0 += V[j] <= 0;
        in3 += V[3 * N + j] <= 0;
    }
    printf("  air3d tube: %lld -> %lld nodes inside\n", (long long)in0, (long long)in3);
    assert_true(in3 > in0 + N / 50);
    free(V);
    dg_hji_problem_free(p);
}

/* Reach-avoid: an obstacle in the way keeps V >= obstacle and can only raise the value (exactly so
 * for the monotone first-order scheme); a state whose straight path to the target crosses it needs
 * longer (or cannot make it). */
static void test_obstacles(void **state) {
    (void)state;
    static const char BASE[] = "game: pursuit2d\nt_end: 0.5\ngrid: {n: [81, 81]}\naccuracy: low\n";
    dg_hji_problem *p = load_ok(BASE);
    char yaml[512];
    snprintf(yaml, sizeof yaml, "%sobstacles:\n"
             "  - {shape: box, min: [0.3, -0.3], max: [0.4, 0.3]}\n"
             "  - {shape: ball, center: [-1], radius: 0.3, axes: [1]}\n", BASE);
    dg_hji_problem *q = load_ok(yaml);
    assert_non_null(q->obstacle);
    double *V = solve(p), *W = solve(q);
    int64_t above = 0;
    for (int64_t j = 0; j < p->grid.nodes; j++) {
        assert_true(W[j] >= q->obstacle[j]);
        if (W[j] < V[j] - 1e-12) fail_msg("node %lld: W %g < V %g", (long long)j, W[j], V[j]);
        above += W[j] > V[j] + 1e-3;
    }
    const int box[2] = {46, 40}, behind[2] = {49, 40}, band[2] = {40, 20};  /* (0.3, 0), (0.45, 0), (0, -1) */
    assert_true(fabs(q->obstacle[dg_hji_grid_node(&q->grid, box)] - 0) < 1e-12);  /* on the box's edge */
    assert_true(fabs(q->obstacle[dg_hji_grid_node(&q->grid, band)] - 0.3) < 1e-12);
    const int64_t jb = dg_hji_grid_node(&q->grid, behind);
    printf("  obstacle: V(0.45, 0) %.3f -> %.3f, %lld nodes raised\n", V[jb], W[jb], (long long)above);
    assert_true(W[jb] > V[jb] + 0.02);
    assert_true(above > 100);
    free(V);
    free(W);
    dg_hji_problem_free(p);
    dg_hji_problem_free(q);
}

/* The point a slice passes through (hji plot --at, hji view --at): each axis's middle, 0.5 (lo + hi)
 * (a periodic axis's too: the middle of its period), then the axes named by index or by name, or by
 * place; an item naming no axis after the first two, or no number, refused in one line. */
static void test_slice_at(void **state) {
    (void)state;
    dg_hji_grid g;
    dg_err e = {0};
    assert_int_equal(dg_hji_grid_init(&g, 4, (double[]){-2, -1, 0, 0}, (double[]){2, 1, 2 * PI, 3},
                                      (int[]){5, 5, 30, 7}, (int[]){0, 0, 1, 0}, &e), DG_OK);
    snprintf(g.name[2], sizeof g.name[2], "psi");
    double at[DG_HJI_MAX_DIMS];
    assert_int_equal(dg_hji_grid_slice_at(&g, NULL, at, &e), DG_OK);
    assert_true(at[0] == 0 && at[1] == 0 && at[2] == PI && at[3] == 1.5);
    assert_int_equal(dg_hji_grid_slice_at(&g, "x3=2.5", at, &e), DG_OK);
    assert_true(at[2] == PI && at[3] == 2.5);
    assert_int_equal(dg_hji_grid_slice_at(&g, "psi=1,x3=-1", at, &e), DG_OK);
    assert_true(at[2] == 1 && at[3] == -1);
    assert_int_equal(dg_hji_grid_slice_at(&g, "0.5,0.25", at, &e), DG_OK);  /* in axis order from x2 */
    assert_true(at[2] == 0.5 && at[3] == 0.25);
    assert_int_equal(dg_hji_grid_slice_at(&g, "psi=2,3", at, &e), DG_OK);   /* the axis after the one before */
    assert_true(at[2] == 2 && at[3] == 3);
    const char *bad[] = {"x1=0", "x4=0", "phi=1", "x2=a", "1,2,3", "x2=1,,", "x2"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        e = (dg_err){0};
        assert_int_equal(dg_hji_grid_slice_at(&g, bad[k], at, &e), DG_ERR_ARG);
        if (!strstr(e.msg, "expected x2=V,... or V,... for the axes after the first two (x2 to x3, or their names) "
                           "of this 4-D grid, got '"))
            fail_msg("'%s': %s", bad[k], e.msg);
    }
    dg_hji_grid g2;  /* 2-D: nothing to give */
    assert_int_equal(dg_hji_grid_init(&g2, 2, (double[]){-1, -1}, (double[]){1, 1}, (int[]){3, 3}, NULL, &e), DG_OK);
    assert_int_equal(dg_hji_grid_slice_at(&g2, "", at, &e), DG_OK);
    assert_int_equal(dg_hji_grid_slice_at(&g2, "x2=1", at, &e), DG_ERR_ARG);
    assert_string_equal(e.msg, "expected no values: this 2-D grid has no axes after the first two, got 'x2=1'");
}

static void test_sdf(void **state) {
    (void)state;
    dg_hji_grid g;
    dg_err e = {0};
    assert_int_equal(dg_hji_grid_init(&g, 3, (double[]){-2, -2, 0}, (double[]){2, 2, 2 * PI},
                                      (int[]){5, 5, 8}, (int[]){0, 0, 1}, &e), DG_OK);
    assert_true(g.bc[2] == DG_HJI_BC_PERIODIC && g.bc[0] == DG_HJI_BC_AWAY);
    assert_true(fabs(g.dx[2] - PI / 4) < 1e-15 && fabs(g.dx[0] - 1) < 1e-15);
    double *a = malloc((size_t)g.nodes * sizeof *a), *b = malloc((size_t)g.nodes * sizeof *b);
    dg_hji_sdf_ball(&g, (double[]){0, 0, 0}, 1, 3u, a);                 /* cylinder over the angle */
    const int i0[3] = {4, 2, 5}, i1[3] = {2, 2, 0};
    assert_true(fabs(a[dg_hji_grid_node(&g, i0)] - 1) < 1e-12);         /* (2, 0, *): 2 - 1 */
    assert_true(fabs(a[dg_hji_grid_node(&g, i1)] + 1) < 1e-12);         /* centre: -1 */
    dg_hji_sdf_box(&g, (double[]){-1, -1, 0}, (double[]){1, 1, 0}, 3u, b);
    assert_true(fabs(b[dg_hji_grid_node(&g, i1)] + 1) < 1e-12);
    const int c2[3] = {4, 4, 0};
    assert_true(fabs(b[dg_hji_grid_node(&g, c2)] - sqrt(2)) < 1e-12);   /* corner (2, 2) */
    dg_hji_sdf_ball(&g, (double[]){0, 0, 0.1}, 0.5, 4u, a);             /* angle ball wraps at 2 pi */
    const int w[3] = {2, 2, 7};                                         /* psi = 7 pi/4 */
    assert_true(fabs(a[dg_hji_grid_node(&g, w)] - (PI / 4 + 0.1 - 0.5)) < 1e-12);
    double *c = malloc((size_t)g.nodes * sizeof *c);
    memcpy(c, b, (size_t)g.nodes * sizeof *c);
    dg_hji_sdf_union(g.nodes, a, c);
    for (int64_t j = 0; j < g.nodes; j++) assert_true(c[j] == fmin(a[j], b[j]));
    memcpy(c, b, (size_t)g.nodes * sizeof *c);
    dg_hji_sdf_intersect(g.nodes, a, c);
    dg_hji_sdf_complement(g.nodes, c);
    for (int64_t j = 0; j < g.nodes; j++) assert_true(c[j] == -fmax(a[j], b[j]));
    free(a);
    free(b);
    free(c);
}

/* ------------------------------------------------------------ interpolation */

static void test_interp(void **state) {
    (void)state;
    dg_hji_grid g;
    dg_err e = {0};
    assert_int_equal(dg_hji_grid_init(&g, 3, (double[]){-1, 0, 0}, (double[]){1, 2, 2 * PI},
                                      (int[]){9, 5, 16}, (int[]){0, 0, 1}, &e), DG_OK);
    double *v = malloc((size_t)g.nodes * sizeof *v);
    double x[3], gr[3];
    for (int64_t j = 0; j < g.nodes; j++) {
        dg_hji_grid_point(&g, j, x);
        v[j] = 2 * x[0] - 3 * x[1] + cos(x[2]);
    }
    /* linear axes: exact inside, value and gradient */
    const double in[3] = {0.33, 1.21, 0.0};
    double val = dg_hji_interp(&g, v, in, gr);
    assert_true(fabs(val - (2 * 0.33 - 3 * 1.21 + 1)) < 1e-12);
    assert_true(fabs(gr[0] - 2) < 1e-12 && fabs(gr[1] + 3) < 1e-12);
    /* periodic: psi and psi + 2 pi k read the same */
    const double a[3] = {0.1, 0.7, 1.0}, b[3] = {0.1, 0.7, 1.0 + 4 * PI}, c[3] = {0.1, 0.7, 1.0 - 6 * PI};
    const double va = dg_hji_interp(&g, v, a, NULL);
    assert_true(fabs(va - dg_hji_interp(&g, v, b, NULL)) < 1e-9);
    assert_true(fabs(va - dg_hji_interp(&g, v, c, NULL)) < 1e-9);
    assert_true(fabs(va - (0.2 - 2.1 + cos(1.0))) < 0.02);
    /* the seam between the last node and node 0 */
    const double s[3] = {0, 1, 2 * PI - 1e-9};
    assert_true(fabs(dg_hji_interp(&g, v, s, NULL) - (-3 + 1)) < 1e-6);
    /* far outside: finite, extrapolated linearly along plain axes */
    const double far[][3] = {{1e6, 0, 0}, {-1e9, 1e9, 1e12}, {INFINITY, -INFINITY, NAN}, {NAN, NAN, -INFINITY}};
    for (int k = 0; k < 4; k++) {
        const double f = dg_hji_interp(&g, v, far[k], gr);
        assert_true(isfinite(f) || isinf(far[k][0]) || isinf(far[k][1]));
        assert_false(isnan(f));
        for (int q = 0; q < 3; q++) assert_true(isfinite(gr[q]));
    }
    const double out1[3] = {3, 1, 0};
    assert_true(fabs(dg_hji_interp(&g, v, out1, NULL) - (6 - 3 + 1)) < 1e-9);
    float *vf = malloc((size_t)g.nodes * sizeof *vf);
    for (int64_t j = 0; j < g.nodes; j++) vf[j] = (float)v[j];
    assert_true(fabs(dg_hji_interp_f32(&g, vf, in, NULL) - val) < 1e-5);
    free(vf);
    free(v);
}

/* ------------------------------------------------------ precision, determinism */

static void test_float32(void **state) {
    (void)state;
    dg_hji_problem *p = load_ok("game: pursuit2d\nt_end: 0.5\ngrid: {n: [41, 41]}\n");
    double *V = solve(p);
    p->opts.real = DG_HJI_REAL_F32;
    double *W = solve(p);
    float *v0 = malloc((size_t)p->grid.nodes * sizeof *v0), *Wf = malloc((size_t)p->grid.nodes * sizeof *Wf);
    for (int64_t j = 0; j < p->grid.nodes; j++) v0[j] = (float)p->target[j];
    dg_err e = {0};
    assert_int_equal(dg_hji_solve_f32(&p->grid, &p->game, &p->opts, v0, NULL, 1, &p->t_end, Wf, NULL, &e), DG_OK);
    double mx = 0;
    for (int64_t j = 0; j < p->grid.nodes; j++) {
        mx = fmax(mx, fabs(V[j] - W[j]));
        assert_true(W[j] == Wf[j]);
    }
    printf("  float32 vs double: max diff %.2e\n", mx);
    assert_true(mx < 2e-5);
    /* the generic path in float32: the smooth benchmark to float precision */
    dg_hji_opts o = dg_hji_opts_default();
    o.real = DG_HJI_REAL_F32;
    double l1, linf;
    assert_int_equal(smooth_errors(80, o, 0, &l1, &linf, &e), DG_OK);
    printf("  smooth benchmark in float32, n 80: L1 %.2e\n", l1);
    assert_true(l1 < 1e-5);
    free(V);
    free(W);
    free(v0);
    free(Wf);
    dg_hji_problem_free(p);
}

static void test_determinism(void **state) {
    (void)state;
    static const char *const Y[] = {
        "game: air3d\naccuracy: veryHigh\nt_end: 0.2\ngrid: {n: [21, 17, 16]}\n",
        "game: chase4d\naccuracy: medium\nt_end: 0.05\ngrid: {n: [9, 9, 9, 9]}\nsolver: {dissipation: globalmax}\n",
    };
    for (int k = 0; k < 2; k++) {
        dg_hji_problem *p = load_ok(Y[k]);
        p->opts.threads = 1;
        double *a = solve(p), *b = solve(p);
        p->opts.threads = 2;
        double *c = solve(p);
        p->opts.threads = 3;
        double *d = solve(p);
        const size_t bytes = (size_t)p->grid.nodes * sizeof *a;
        assert_memory_equal(a, b, bytes);
        assert_memory_equal(a, c, bytes);
        assert_memory_equal(a, d, bytes);
        free(a);
        free(b);
        free(c);
        free(d);
        dg_hji_problem_free(p);
    }
}

/* ---------------------------------------------------------------------- 5-d */

static void dyn5(void *user, const double *x, double *f, double *G, double *D) {
    (void)user;
    f[4] = 0.2 * x[0];                                /* varies along axis 0: one table */
    for (int k = 0; k < 4; k++) G[k * 4 + k] = 1;
    D[4 * 1 + 0] = 0.5 * (1 + x[1] * x[2]);           /* varies along two axes: a full table */
}

static void test_5d(void **state) {
    (void)state;
    dg_hji_grid g;
    dg_err e = {0};
    const double lo[5] = {-1, -1, -1, -1, -1}, hi[5] = {1, 1, 1, 1, 1};
    assert_int_equal(dg_hji_grid_init(&g, 5, lo, hi, (int[]){7, 7, 6, 7, 8}, (int[]){0, 0, 0, 0, 1}, &e), DG_OK);
    dg_hji_game gm = {.nx = 5, .dyn = dyn5,
                      .u = {.dim = 4, .set = DG_HJI_SET_BALL, .role = DG_HJI_ROLE_MIN, .radius = 1},
                      .d = {.dim = 1, .set = DG_HJI_SET_BOX, .role = DG_HJI_ROLE_MAX, .lo = {-1}, .hi = {1}}};
    double *v0 = malloc((size_t)g.nodes * sizeof *v0), *V = malloc((size_t)g.nodes * sizeof *V);
    dg_hji_sdf_ball(&g, (double[]){0, 0, 0, 0, 0}, 0.5, 0, v0);
    for (int acc = 0; acc < DG_HJI_ACCURACY_COUNT; acc++) {
        dg_hji_opts o = dg_hji_opts_default();
        dg_hji_opts_accuracy(&o, (dg_hji_accuracy)acc);
        o.mode = DG_HJI_MODE_BRT;
        o.dt = 0.01;
        o.threads = 1 + acc % 2;
        const double T = 0.01;
        dg_hji_stats st;
        assert_int_equal(dg_hji_solve(&g, &gm, &o, v0, NULL, 1, &T, V, &st, &e), DG_OK);
        assert_int_equal(st.steps, 1);
        for (int64_t j = 0; j < g.nodes; j++) assert_true(isfinite(V[j]) && V[j] <= v0[j]);
    }
    free(v0);
    free(V);
}

/* One game written twice: as affine dynamics (f, G, D, bounds, roles: the solver derives H and
 * alpha) and as a generic Hamiltonian written by hand. Same numbers up to rounding. Every alpha
 * varies over two axes, so the affine path recomputes it per row (over the table budget). */
static void dyn_mix(void *user, const double *x, double *f, double *G, double *D) {
    (void)user;
    f[0] = 0.5 * x[1] * x[2];
    f[1] = -0.3 * x[0] * x[2];
    f[2] = 0.2 * x[0] * x[2];
    G[0] = 1;                    /* G (3, 1) */
    G[2] = x[0];
    D[0] = 1;                    /* D (3, 2) */
    D[3] = 1;
}

static void ham_mix(void *user, double t, int n, const double *x, const double *p, double *h) {
    (void)user; (void)t;
    for (int i = 0; i < n; i++) {
        const double x0 = x[i], x1 = x[n + i], x2 = x[2 * n + i];
        const double p0 = p[i], p1 = p[n + i], p2 = p[2 * n + i];
        const double pf = p0 * 0.5 * x1 * x2 - p1 * 0.3 * x0 * x2 + p2 * 0.2 * x0 * x2;
        const double su = p0 + x0 * p2;                    /* u in [-1, 2], maximises */
        const double ext_u = 0.5 * su + 1.5 * fabs(su);
        const double ext_d = -0.5 * hypot(p0, p1);         /* |d| <= 0.5, minimises */
        h[i] = -(pf + ext_u + ext_d);
    }
}

static void alpha_mix(void *user, double t, int n, const double *x, const double *pmin, const double *pmax,
                      double *a) {
    (void)user; (void)t; (void)pmin; (void)pmax;
    for (int i = 0; i < n; i++) {
        const double x0 = x[i], x1 = x[n + i], x2 = x[2 * n + i];
        a[i] = fabs(0.5 * x1 * x2) + 0.5 + 1.5 + 0.5;
        a[n + i] = fabs(0.3 * x0 * x2) + 0.5;
        a[2 * n + i] = fabs(0.2 * x0 * x2) + fabs(0.5 * x0) + 1.5 * fabs(x0);
    }
}

static void test_affine_vs_generic(void **state) {
    (void)state;
    dg_hji_grid g;
    dg_err e = {0};
    assert_int_equal(dg_hji_grid_init(&g, 3, (double[]){-1, -1, -1}, (double[]){1, 1, 1}, (int[]){12, 10, 9},
                                      (int[]){0, 1, 0}, &e), DG_OK);
    dg_hji_game affine = {.nx = 3, .dyn = dyn_mix,
                          .u = {.dim = 1, .set = DG_HJI_SET_BOX, .role = DG_HJI_ROLE_MAX, .lo = {-1}, .hi = {2}},
                          .d = {.dim = 2, .set = DG_HJI_SET_BALL, .role = DG_HJI_ROLE_MIN, .radius = 0.5}};
    dg_hji_game generic = {.nx = 3, .ham = ham_mix, .alpha = alpha_mix};
    double *v0 = malloc((size_t)g.nodes * sizeof *v0), *a = malloc((size_t)g.nodes * sizeof *a);
    double *b = malloc((size_t)g.nodes * sizeof *b);
    dg_hji_sdf_ball(&g, (double[]){0.2, 0, -0.1}, 0.4, 0, v0);
    for (int diss = 0; diss < 4; diss++) {
        dg_hji_opts o = dg_hji_opts_default();
        o.mode = DG_HJI_MODE_BRT;
        o.dt = 0.01;
        o.diss = (dg_hji_diss)diss;
        o.threads = 1;
        const double T = 0.2;
        assert_int_equal(dg_hji_solve(&g, &affine, &o, v0, NULL, 1, &T, a, NULL, &e), DG_OK);
        assert_int_equal(dg_hji_solve(&g, &generic, &o, v0, NULL, 1, &T, b, NULL, &e), DG_OK);
        double mx = 0, change = 0;
        for (int64_t j = 0; j < g.nodes; j++) {
            mx = fmax(mx, fabs(a[j] - b[j]));
            change = fmax(change, fabs(a[j] - v0[j]));
        }
        printf("  affine vs generic H (dissipation %d): max diff %.1e (values moved by %.2f)\n", diss, mx, change);
        assert_true(mx < 1e-11 && change > 0.1);
        /* the Hamiltonian at a point agrees too */
        const double x[3] = {0.3, -0.7, 0.9}, p[3] = {0.2, -1.1, 0.6};
        double h;
        ham_mix(NULL, 0, 1, x, p, &h);
        assert_true(fabs(dg_hji_game_hamiltonian(&affine, x, p) - h) < 1e-14);
    }
    free(v0);
    free(a);
    free(b);
}

/* ------------------------------------------------------------ game functions */

static void test_optimal(void **state) {
    (void)state;
    dg_hji_problem *p = load_ok("game: air3d\ngrid: {n: [6, 5, 8]}\n");
    const double x[3] = {3, 2, 1}, gr[3] = {0.5, -0.25, 0.3};
    double u, d, xd[3];
    dg_hji_game_optimal(&p->game, x, gr, &u, &d);
    /* u (evader, max) sees s = p.G = 0.5*2 - (-0.25)*3... = p_x y - p_y x - p_psi */
    const double su = gr[0] * x[1] - gr[1] * x[0] - gr[2];
    assert_true(u == (su > 0 ? 1 : -1));
    assert_true(d == -1);                               /* pursuer (min), s = p_psi > 0 */
    dg_hji_game_dynamics(&p->game, x, &u, &d, xd);
    assert_true(fabs(xd[0] - (-5 + 5 * cos(1.0) + u * 2)) < 1e-12);
    assert_true(fabs(xd[2] - (d - u)) < 1e-12);
    const double H = dg_hji_game_hamiltonian(&p->game, x, gr);
    assert_true(fabs(H + (gr[0] * xd[0] + gr[1] * xd[1] + gr[2] * xd[2])) < 1e-12);
    dg_hji_problem_free(p);
    /* ball inputs: along -p for the minimiser, +p for the maximiser */
    dg_hji_problem *q = load_ok("game: pursuit2d\ngrid: {n: [5, 5]}\n");
    const double y[2] = {1, 0}, pg[2] = {0.6, 0.8};
    double a[2], b[2];
    dg_hji_game_optimal(&q->game, y, pg, a, b);
    /* x' = v_e b - v_p a: G^T p = -v_p p, the pursuer (min) takes a = p/|p|, evader b = p/|p| */
    assert_true(fabs(a[0] - 0.6) < 1e-12 && fabs(a[1] - 0.8) < 1e-12);
    assert_true(fabs(b[0] - 0.6) < 1e-12 && fabs(b[1] - 0.8) < 1e-12);
    assert_true(fabs(dg_hji_game_hamiltonian(&q->game, y, pg) - (dg_hji_problem_param(q, "speed_pursuer") - dg_hji_problem_param(q, "speed_evader"))) < 1e-12);
    dg_hji_problem_free(q);
}

/* The points of Merz's analytic barrier (tests/data/air3d_merz_barrier.csv, columns x,y,psi; see
 * tests/data/README.md), from DG_TEST_DATA (set by ctest) or next to this file. Returns a malloc'd
 * (n, 3) array; fails the test if the file is missing or a line is malformed. */
static double *merz_points(int *n) {
    char path[1024];
    const char *dir = getenv("DG_TEST_DATA");
    if (dir) {
        snprintf(path, sizeof path, "%s/air3d_merz_barrier.csv", dir);
    } else {
        snprintf(path, sizeof path, "%s", __FILE__);
        char *slash = strrchr(path, '/');
        snprintf(slash ? slash + 1 : path, sizeof path - (size_t)(slash ? slash + 1 - path : 0),
                 "data/air3d_merz_barrier.csv");
    }
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot open %s", path);
    int cap = 4096, k = 0;
    double *pts = malloc((size_t)cap * 3 * sizeof *pts);
    assert_non_null(pts);
    char line[256];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        assert_true(k < cap);
        if (sscanf(line, "%lf,%lf,%lf", &pts[3 * k], &pts[3 * k + 1], &pts[3 * k + 2]) != 3)
            fail_msg("%s: malformed line %d", path, k + 2);
        k++;
    }
    fclose(f);
    *n = k;
    return pts;
}

/* air3d on a coarse grid against every point of Merz's analytic barrier, where V should be 0. */
static void test_air3d_barrier(void **state) {
    (void)state;
    int n = 0;
    double *M = merz_points(&n);
    assert_int_equal(n, 2612);
    dg_hji_problem *p = load_ok(AIR3D_COARSE);
    double *V = solve(p);
    double mean = 0, mx = 0;
    for (int i = 0; i < n; i++) {
        const double v = fabs(dg_hji_interp(&p->grid, V, M + 3 * i, NULL));
        mean += v / n;
        mx = fmax(mx, v);
    }
    printf("  air3d 27x21x24 medium: |V| at the %d barrier points mean %.3f max %.3f\n", n, mean, mx);
    assert_true(mean < 0.2 && mx < 1.2);
    free(V);
    free(M);
    dg_hji_problem_free(p);
}

/* ------------------------------------------------------------------ configs */

static int stop_after_3(void *user, const dg_hji_progress *pr) {
    *(int *)user = (int)pr->step;
    return pr->step >= 3;
}

static void test_progress_and_stats(void **state) {
    (void)state;
    dg_hji_problem *p = load_ok("game: chauffeur\ngrid: {n: [31, 31]}\naccuracy: high\n");
    int steps = 0;
    p->opts.progress = stop_after_3;
    p->opts.progress_user = &steps;
    double *V = malloc((size_t)p->grid.nodes * sizeof *V);
    dg_err e = {0};
    assert_int_equal(dg_hji_problem_solve(p, V, NULL, &e), DG_ERR_INTERRUPTED);
    assert_int_equal(steps, 3);
    p->opts.progress = NULL;
    p->t_end = 0.5;
    dg_hji_stats st;
    assert_int_equal(dg_hji_problem_solve(p, V, &st, &e), DG_OK);
    assert_int_equal(st.stages, 3);
    assert_true(st.cell_updates == (double)st.steps * 3 * 31 * 31);
    /* CFL: alpha_x = w |y| + v_e <= 3.5, alpha_y = v_p + w |x| + v_e <= 4.5, dx = 0.2 */
    assert_true(st.dt_max <= 0.75 / ((3.5 + 4.5) / 0.2) * (1 + 1e-12) && st.dt_max > 0.74 / 40);
    free(V);
    dg_hji_problem_free(p);
}

static void test_config_files(void **state) {
    (void)state;
    static const char *const NAMES[] = {"pursuit2d", "air3d", "chauffeur", "chase4d"};
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", __FILE__);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    for (int i = 0; i < 4; i++) {
        assert_string_equal(dg_hji_problem_name(i), NAMES[i]);
        char path[1200];
        snprintf(path, sizeof path, "%s/../configs/hji/%s.yaml", dir, NAMES[i]);
        dg_err e = {0};
        dg_cfg *c = dg_cfg_load(path, &e);
        if (!c) fail_msg("%s", e.msg);
        dg_hji_problem *p = dg_hji_problem_load(c, &e);
        dg_hji_learn_opts lo;   /* a learn: section (hji learn's recipe) is read as the commands read it */
        if (!p || dg_hji_learn_opts_read(c, &lo, &e) || dg_cfg_check_unused(c, &e)) fail_msg("%s: %s", path, e.msg);
        assert_string_equal(p->name, NAMES[i]);
        assert_int_equal(p->grid.ndim, p->game.nx);
        dg_hji_problem_free(p);
        dg_cfg_free(c);
    }
    assert_string_equal(dg_hji_problem_name(4), "linear");   /* configs declare it (test_hji_degree.c) */
    assert_string_equal(dg_hji_problem_name(5), "collision9d");   /* 9-D: hji learn's (test_hji_learn.c) */
    assert_string_equal(dg_hji_problem_name(6), "merton1d");   /* noisy: test_hji_noise.c */
    assert_string_equal(dg_hji_problem_name(7), "lqg1d");
    assert_null(dg_hji_problem_name(8));
    dg_err e;
    dg_hji_problem *p = load_ok("game: air3d\n");
    assert_int_equal(p->grid.n[0], 51);
    assert_int_equal(p->grid.n[1], 40);
    assert_int_equal(p->grid.n[2], 50);
    assert_true(p->grid.bc[2] == DG_HJI_BC_PERIODIC && fabs(p->grid.dx[2] - 2 * PI / 50) < 1e-15);
    assert_true(p->opts.mode == DG_HJI_MODE_BRT && fabs(p->t_end - 2.8) < 1e-15);
    dg_hji_problem_free(p);
    p = load("game: chase4d\ndamping: 0.98\ndt: 0.05\n", &e);
    assert_non_null(p);
    assert_true(fabs(dg_hji_problem_param(p, "drag") - (-log(0.98) / 0.05)) < 1e-12);
    assert_true(dg_hji_problem_param(p, "dt") == 0.05 && isnan(dg_hji_problem_param(p, "no_such")));
    assert_non_null(p->link);
    assert_string_equal(p->link->env_game, "chase");
    dg_hji_problem_free(p);
    /* every game names its state variables (the figures' axes), one per axis (collision9d's 9 axes a box
     * for hji learn: dg_hji_problem_load_points) */
    for (int i = 0; dg_hji_problem_name(i); i++) {
        char cfg[64];
        snprintf(cfg, sizeof cfg, "game: %s\n", dg_hji_problem_name(i));
        dg_cfg *c = dg_cfg_parse(cfg, strlen(cfg), "hji.yaml", &e);
        dg_hji_problem *q = c ? dg_hji_problem_load_points(c, &e) : NULL;
        dg_cfg_free(c);
        if (!q) fail_msg("%s: %s", cfg, e.msg);
        for (int k = 0; k < q->grid.ndim; k++) assert_non_null(dg_hji_axis_name(q->name, k));
        assert_null(dg_hji_axis_name(q->name, q->grid.ndim));
        dg_hji_problem_free(q);
    }
    assert_string_equal(dg_hji_axis_name("air3d", 2), "psi");
    assert_null(dg_hji_axis_name("no_such_game", 0));
    assert_null(dg_hji_axis_name(NULL, 0));
    assert_null(dg_hji_axis_name("air3d", -1));
}

static void expect_config_error(const char *yaml, const char *want) {
    dg_err e;
    dg_hji_problem *p = load(yaml, &e);
    if (p) {
        dg_hji_problem_free(p);
        fail_msg("config should fail: %s", yaml);
    }
    assert_int_equal(e.status, DG_ERR_CONFIG);
    if (!strstr(e.msg, want)) fail_msg("message \"%s\" lacks \"%s\"", e.msg, want);
}

static void test_bad_configs(void **state) {
    (void)state;
    expect_config_error("game: pursuit2d\nspeed_pursuer: fast\n", "hji.yaml:2");
    expect_config_error("game: pursuit2d\nspeed_pursuer: 1\nspeed_evadr: 0.5\n", "hji.yaml:3: unknown key 'speed_evadr'");
    expect_config_error("game: pursuit2d\ngrid:\n  n: [41, 41, 41]\n", "hji.yaml:3");
    expect_config_error("game: pursuit2d\ngrid:\n  n: [41, 1]\n", "hji.yaml:3");
    expect_config_error("game: pursuit2d\ngrid:\n  min: [1, 1]\n  max: [0, 2]\n", "hji.yaml:4");
    expect_config_error("game: pursuit2d\naccuracy: ultra\n", "hji.yaml:2: key 'accuracy'");
    expect_config_error("game: air3d\nsolver:\n  dissipation: lots\n", "hji.yaml:3");
    expect_config_error("game: air3d\ncapture_radius: -1\n", "hji.yaml:2");
    expect_config_error("game: checkers\n", "hji.yaml:1");
    expect_config_error("t_end: 1\n", "missing required key 'game'");
    expect_config_error("game: pursuit2d\nobstacles:\n  - {shape: cone}\n", "hji.yaml:3");
    expect_config_error("game: pursuit2d\nobstacles:\n  - {shape: ball, center: [0, 0]}\n", "radius");
    expect_config_error("game: chase4d\ndamping: 1.5\n", "hji.yaml:2");
    /* the messages of the key tables: the key, its line, the value and the declared range */
    expect_config_error("game: chase4d\ndamping: 0\n", "hji.yaml:2: key 'damping': 0 is out of range, expected (0, 1]");
    expect_config_error("game: air3d\nturn_pursuer: -2\n", "key 'turn_pursuer': -2 is out of range, expected >= 0");
    expect_config_error("game: pursuit2d\ngrid:\n  n:\n    - 41\n    - 1\n",
                        "hji.yaml:5: key 'grid.n[1]': 1 is out of range, expected [2, 100000]");
    expect_config_error("game: pursuit2d\ngrid: {min: [0, x]}\n", "hji.yaml:2: key 'grid.min[1]': expected a number");
    expect_config_error("game: pursuit2d\nsolver: {precision: f16}\n",
                        "key 'solver.precision': 'f16' is not one of: f64, f32");
    expect_config_error("game: pursuit2d\nobstacles:\n  - {radius: 1}\n",
                        "key 'obstacles[0].shape': missing: expected ball or box");
    expect_config_error("game: pursuit2d\nobstacles:\n  - {shape: box, axes: [1], min: [0], max: [0]}\n",
                        "key 'obstacles[0].max': max[0] = 0 must exceed min[0] = 0");
    expect_config_error("game: pursuit2d\nobstacles:\n  - {shape: ball, axes: [1, 1], center: [0, 0], radius: 1}\n",
                        "key 'obstacles[0].axes': axes must be distinct, in 0..1");
}

/* Value files: written, read back, held against the config: the same passes; another game, grid
 * (shape, bounds, axis order) or game constant is refused naming what differs; a NaN is refused;
 * bytes that are not a value file are refused. */
static uint32_t rgb24(const unsigned char *p) { return ((uint32_t)p[0] << 16) | ((uint32_t)p[1] << 8) | p[2]; }

/* Checks the value figure at path reads like a paper's figure: a PNG of a plausible size, ink (not
 * white) in every eighth of its width and of its height (no empty margin), the colour bar's two
 * ends (viridis at 1 and at 0) in one column at its right, light legend text on a dark box. */
static void check_value_figure(const char *path) {
    png_image im = {.version = PNG_IMAGE_VERSION};
    assert_true(png_image_begin_read_from_file(&im, path));
    im.format = PNG_FORMAT_RGB;
    const int w = (int)im.width, h = (int)im.height;
    assert_true(w >= 300 && w < 1000 && h >= 200 && h < 700);
    unsigned char *px = malloc(PNG_IMAGE_SIZE(im));
    assert_non_null(px);
    assert_true(png_image_finish_read(&im, NULL, px, 0, NULL));
#define AT(x, y) rgb24(px + ((size_t)(y) * w + (x)) * 3)
    int colx[8] = {0}, rowy[8] = {0};
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            if (AT(x, y) != 0xffffff) { colx[x * 8 / w]++; rowy[y * 8 / h]++; }
    for (int k = 0; k < 8; k++) {
        assert_true(colx[k] > h / 20);
        assert_true(rowy[k] > w / 20);
    }
    int bar = 0;
    for (int x = w * 3 / 4; x < w && !bar; x++) {
        int top = 0, bottom = 0;
        for (int y = 0; y < h; y++) { top |= AT(x, y) == 0xfde725; bottom |= AT(x, y) == 0x440154; }
        bar = top && bottom;
    }
    assert_true(bar);
#undef AT
    free(px);
}

static void test_value_files(void **state) {
    (void)state;
    dg_err e;
    dg_hji_problem *p = load("game: pursuit2d\nt_end: 0.3\ngrid: {min: [-2, -1], max: [2, 1], n: [21, 11]}\n", &e);
    assert_non_null(p);
    double *V = malloc(2 * (size_t)p->grid.nodes * sizeof *V);
    assert_non_null(V);
    const double times[2] = {0.1, 0.3};
    assert_int_equal(dg_hji_solve(&p->grid, &p->game, &p->opts, p->target, NULL, 2, times, V, NULL, &e), DG_OK);
    char path[] = "/tmp/dg_value_XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(dg_hji_value_write(path, p, 2, times, NULL, V, 0, NULL, &e), DG_OK);
    dg_hji_value v;
    assert_int_equal(dg_hji_value_open(path, &v, &e), DG_OK);
    assert_int_equal(v.nt, 2);
    assert_string_equal(v.game, "pursuit2d");
    assert_int_equal(dg_hji_value_check(&v, p, "cfg.yaml", &e), DG_OK);
    double *W = malloc((size_t)p->grid.nodes * sizeof *W);
    assert_non_null(W);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(dg_hji_value_read(&v, i, W, &e), DG_OK);
        assert_memory_equal(W, V + (size_t)i * p->grid.nodes, (size_t)p->grid.nodes * sizeof *W);
    }
    assert_false(v.sampled[0] || v.sampled[1]);  /* written without flags: every time asked for */
    {   /* the game's fingerprint: the same game under another spelling passes, another game of the
         * same name and constants (an obstacle, a discount, other costs) is refused, saying what differs */
        const char *same = "game: pursuit2d\nt_end: 0.3\nspeed_pursuer: 1\n"
                           "grid: {min: [-2, -1], max: [2, 1], n: [21, 11]}\n";
        const char *other[][2] = {
            {"game: pursuit2d\nt_end: 0.3\ngrid: {min: [-2, -1], max: [2, 1], n: [21, 11]}\n"
             "obstacles:\n  - {shape: box, min: [0.5, -0.5], max: [1.0, 0.5]}\n", "the obstacles"},
            {"game: pursuit2d\nt_end: 0.3\npayoff: time\ngrid: {min: [-2, -1], max: [2, 1], n: [21, 11]}\n",
             "the payoff type"},
        };
        dg_hji_problem *q = load(same, &e);
        assert_non_null(q);
        assert_int_equal(dg_hji_value_check(&v, q, "same.yaml", &e), DG_OK);
        dg_hji_problem_free(q);
        for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
            q = load(other[i][0], &e);
            assert_non_null(q);
            assert_int_equal(dg_hji_value_check(&v, q, "other.yaml", &e), DG_ERR_ARG);
            assert_non_null(strstr(e.msg, "solved for another game than other.yaml's"));
            if (!strstr(e.msg, other[i][1])) fail_msg("%s", e.msg);
            dg_hji_problem_free(q);
        }
        assert_true(v.nprint == DG_HJI_PRINT_MAX);
    }
    {   /* a time-slice sample is flagged in the file; t_end never is */
        const unsigned char flags[2] = {1, 0}, bad[2] = {0, 1};
        dg_hji_value s;
        assert_int_equal(dg_hji_value_write(path, p, 2, times, flags, V, 0, NULL, &e), DG_OK);
        assert_int_equal(dg_hji_value_open(path, &s, &e), DG_OK);
        assert_true(s.sampled[0] && !s.sampled[1]);
        dg_hji_value_close(&s);
        assert_int_equal(dg_hji_value_write(path, p, 2, times, bad, V, 0, NULL, &e), DG_OK);
        assert_int_equal(dg_hji_value_open(path, &s, &e), DG_ERR_FORMAT);
        assert_non_null(strstr(e.msg, "'sampled'"));
        assert_int_equal(dg_hji_value_write(path, p, 2, times, NULL, V, 0, NULL, &e), DG_OK);
    }
    {   /* its figure: a PNG written whole, or an error naming the path it could not write */
        char png[sizeof path + 8];
        snprintf(png, sizeof png, "%s.png", path);
        assert_int_equal(dg_hji_plot_value(&v, NULL, png, &e), DG_OK);
        unsigned char sig[8] = {0};
        FILE *f = fopen(png, "rb");
        assert_non_null(f);
        assert_int_equal(fread(sig, 1, 8, f), 8);
        fclose(f);
        assert_memory_equal(sig, "\x89PNG\r\n\x1a\n", 8);
        check_value_figure(png);
        remove(png);
        assert_int_equal(dg_hji_plot_value(&v, NULL, "/nonexistent-dir/v.png", &e), DG_ERR_IO);
        assert_non_null(strstr(e.msg, "/nonexistent-dir/v.png"));
    }
    const char *other[][2] = {
        {"game: air3d\ngrid: {n: [11, 11, 11]}\n", "solved for game 'pursuit2d', but cfg.yaml is 'air3d'"},
        {"game: pursuit2d\ngrid: {min: [-2, -1], max: [2, 1], n: [21, 21]}\n", "grid axis 1 is 11 nodes"},
        {"game: pursuit2d\ngrid: {min: [-2, -1], max: [2, 1.5], n: [21, 11]}\n", "but cfg.yaml's is 11 nodes over [-1, 1.5]"},
        {"game: pursuit2d\ngrid: {min: [-1, -2], max: [1, 2], n: [11, 21]}\n", "transposed"},
        {"game: pursuit2d\nspeed_pursuer: 1.5\ngrid: {min: [-2, -1], max: [2, 1], n: [21, 11]}\n", "game constant 0"},
    };
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
        dg_hji_problem *q = load(other[i][0], &e);
        assert_non_null(q);
        memset(&e, 0, sizeof e);
        assert_int_equal(dg_hji_value_check(&v, q, "cfg.yaml", &e), DG_ERR_ARG);
        if (!strstr(e.msg, other[i][1])) fail_msg("'%s' lacks '%s'", e.msg, other[i][1]);
        assert_non_null(strstr(e.msg, path));
        dg_hji_problem_free(q);
    }
    dg_hji_value_close(&v);
    dg_hji_value_close(&v);  /* twice is harmless */
    /* a NaN in the stored value */
    V[2 * p->grid.nodes - 7] = NAN;
    assert_int_equal(dg_hji_value_write(path, p, 2, times, NULL, V, 1, NULL, &e), DG_OK);
    assert_int_equal(dg_hji_value_open(path, &v, &e), DG_OK);
    assert_int_equal(dg_hji_value_read(&v, 0, W, &e), DG_OK);
    assert_int_equal(dg_hji_value_read(&v, 1, W, &e), DG_ERR_NONFINITE);
    assert_non_null(strstr(e.msg, "non-finite"));
    /* a read past the stored times names the file and the times it holds */
    assert_int_equal(dg_hji_value_read(&v, 2, W, &e), DG_ERR_ARG);
    if (!strstr(e.msg, path) || !strstr(e.msg, "time index 2, but the file holds 2 times")) fail_msg("%s", e.msg);
    assert_int_equal(dg_hji_value_read(&v, 0, NULL, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, path));
    dg_hji_value_close(&v);
    assert_int_equal(dg_hji_value_read(&v, 0, W, &e), DG_ERR_ARG);  /* closed */
    /* not a value file; no label or path: "<memory>", never NULL through %s */
    const char junk[] = "not a safetensors file at all";
    assert_int_not_equal(dg_hji_value_parse(junk, sizeof junk, "junk", &v, &e), DG_OK);
    assert_int_not_equal(dg_hji_value_parse(junk, sizeof junk, NULL, &v, &e), DG_OK);
    if (!strstr(e.msg, "<memory>")) fail_msg("%s", e.msg);
    assert_int_equal(dg_hji_value_open(NULL, &v, &e), DG_ERR_ARG);
    /* a game name longer than any game's is refused, never cut */
    {
        FILE *fp = fopen(path, "rb");
        assert_non_null(fp);
        static unsigned char raw[1 << 16];
        const size_t n = fread(raw, 1, sizeof raw, fp);
        fclose(fp);
        assert_true(n < sizeof raw);
        const unsigned char *at = NULL;
        for (size_t i = 0; i + 11 <= n && !at; i++)
            if (!memcmp(raw + i, "\"pursuit2d\"", 11)) at = raw + i;
        assert_non_null(at);
        /* the header again with the game's name 40 characters longer, its size word to match */
        uint64_t hlen;
        memcpy(&hlen, raw, 8);
        const size_t pad = 40;
        static unsigned char out[(1 << 16) + 64];
        const size_t pre = (size_t)(at - raw) + 1;  /* up to and with the opening quote */
        memcpy(out, raw, pre);
        memcpy(out + pre, "pursuit2d", 9);
        memset(out + pre + 9, 'x', pad);
        memcpy(out + pre + 9 + pad, raw + pre + 9, n - pre - 9);
        const uint64_t h2 = hlen + pad;
        memcpy(out, &h2, 8);
        assert_int_equal(dg_hji_value_parse(out, n + pad, "long.safetensors", &v, &e), DG_ERR_FORMAT);
        if (!strstr(e.msg, "metadata 'game' is 49 characters long")) fail_msg("%s", e.msg);
    }
    remove(path);
    free(W);
    free(V);
    dg_hji_problem_free(p);
}

/* ------------------------------------------------------------- simulation */

typedef struct sim_seen { int64_t calls; double lo2, hi2; int stop_at; } sim_seen;

static int sim_count(void *user, const dg_hji_sim_step *s) {
    sim_seen *c = user;
    c->calls++;
    assert_int_equal(s->step, c->calls - 1);
    assert_true(fabs(s->t - 0.01 * (double)s->step) < 1e-12);
    return c->stop_at && s->step == c->stop_at;
}

static int sim_angle(void *user, const dg_hji_sim_step *s) {
    sim_seen *c = user;
    c->calls++;
    c->lo2 = fmin(c->lo2, s->x[2]);
    c->hi2 = fmax(c->hi2, s->x[2]);
    return 0;
}

static int count_lines(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int n = 0, ch;
    while ((ch = fgetc(f)) != EOF) n += ch == '\n';
    fclose(f);
    return n;
}

/* pursuit2d with V = |x| - r (the exact value's gradient is radial): the pursuer closes at
 * v_p - v_e, so capture at (|x0| - r) / (v_p - v_e), within a step; a faster evader escapes
 * after t_max; the CSV has a row per step; too many steps, or a caller's stop, write nothing. */
static void test_simulate(void **state) {
    (void)state;
    dg_err e = {0};
    dg_hji_problem *p = load_ok("game: pursuit2d\ngrid: {min: [-2, -2], max: [2, 2], n: [41, 41]}\n");
    char path[] = "/tmp/dg_sim_XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    remove(path);
    const double x0[2] = {1, 0};
    sim_seen c = {0};
    dg_hji_sim_opts o = {.t_max = 3, .dt = 0.01, .max_steps = 1000, .csv_path = path, .on_step = sim_count, .user = &c};
    dg_hji_sim_result r;
    assert_int_equal(dg_hji_simulate(p, &(dg_hji_slices){1, &p->t_end, p->target}, x0, &o, &r, &e), DG_OK);
    assert_true(r.captured);
    assert_true(fabs(r.capture_time - 1.5) <= 0.011);
    assert_int_equal(r.steps, 300);
    assert_int_equal(c.calls, r.rows);
    assert_int_equal(count_lines(path), r.rows + 1);  /* the header and a row per step */
    FILE *f = fopen(path, "r");
    char head[128] = "";
    assert_non_null(fgets(head, sizeof head, f));
    fclose(f);
    assert_string_equal(head, "t,x0,x1,u0,u1,d0,d1,value,target\n");
    /* the automatic step: a quarter cell at the closing speed's fastest component */
    const double dt = dg_hji_sim_dt(p, &(dg_hji_slices){1, &p->t_end, p->target}, x0, 3);
    assert_true(dt > 0 && dt <= 3.0 / 200);
    /* too many steps: refused before anything is written */
    remove(path);
    o.max_steps = 299;
    assert_int_equal(dg_hji_simulate(p, &(dg_hji_slices){1, &p->t_end, p->target}, x0, &o, &r, &e), DG_ERR_ARG);
    assert_true(access(path, F_OK) != 0);
    /* stopped by the caller: no CSV */
    o.max_steps = 1000;
    c = (sim_seen){.stop_at = 5};
    assert_int_equal(dg_hji_simulate(p, &(dg_hji_slices){1, &p->t_end, p->target}, x0, &o, &r, &e), DG_ERR_INTERRUPTED);
    assert_true(access(path, F_OK) != 0);
    {   /* its GIF: written whole through the step callback; a folder that is not there is refused */
        char gif[sizeof path + 8];
        snprintf(gif, sizeof gif, "%s.gif", path);
        dg_hji_play_gif *pg = dg_hji_play_gif_begin(gif, p, p->target, p->t_end, &e);
        assert_non_null(pg);
        o = (dg_hji_sim_opts){.t_max = 3, .dt = 0.01, .max_steps = 1000, .on_step = dg_hji_play_gif_step, .user = pg};
        assert_int_equal(dg_hji_simulate(p, &(dg_hji_slices){1, &p->t_end, p->target}, x0, &o, &r, &e), DG_OK);
        assert_int_equal(dg_hji_play_gif_end(pg, &e), DG_OK);
        char sig[7] = {0};
        FILE *g = fopen(gif, "rb");
        assert_non_null(g);
        assert_int_equal(fread(sig, 1, 6, g), 6);
        fclose(g);
        assert_string_equal(sig, "GIF89a");
        remove(gif);
        assert_null(dg_hji_play_gif_begin("/nonexistent-dir/p.gif", p, p->target, p->t_end, &e));
        assert_int_equal(e.status, DG_ERR_IO);
        dg_hji_play_gif_abort(NULL);
    }
    dg_hji_problem_free(p);
    /* a faster evader escapes: every step simulated */
    p = load_ok("game: pursuit2d\nspeed_evader: 1.5\ngrid: {min: [-2, -2], max: [2, 2], n: [41, 41]}\n");
    o = (dg_hji_sim_opts){.t_max = 1, .dt = 0.01, .max_steps = 1000};
    assert_int_equal(dg_hji_simulate(p, &(dg_hji_slices){1, &p->t_end, p->target}, x0, &o, &r, &e), DG_OK);
    assert_false(r.captured);
    assert_true(r.capture_time < 0);
    assert_int_equal(r.rows, r.steps + 1);
    dg_hji_problem_free(p);
    /* air3d: the relative heading stays in [0, 2 pi) however far it turns */
    p = load_ok("game: air3d\ngrid: {n: [21, 21, 20]}\n");
    const double a0[3] = {15, 8, 6.2};
    c = (sim_seen){.lo2 = INFINITY, .hi2 = -INFINITY};
    o = (dg_hji_sim_opts){.t_max = 20, .dt = 0.05, .max_steps = 1000, .on_step = sim_angle, .user = &c};
    assert_int_equal(dg_hji_simulate(p, &(dg_hji_slices){1, &p->t_end, p->target}, a0, &o, &r, &e), DG_OK);
    assert_true(c.calls > 10);
    assert_true(c.lo2 >= 0 && c.hi2 < 2 * PI);
    dg_hji_problem_free(p);
}

/* ---------------------------------------------------------------- pictures */

typedef struct seg_check { const dg_hji_grid *g; double r, worst; } seg_check;

static void seg_on_circle(void *user, float i0, float j0, float i1, float j1) {
    seg_check *c = user;
    const float pt[2][2] = {{i0, j0}, {i1, j1}};
    for (int k = 0; k < 2; k++) {  /* index space -> the plane (rows count down from the top) */
        const double x = c->g->lo[0] + pt[k][0] * c->g->dx[0];
        const double y = c->g->hi[1] - pt[k][1] * c->g->dx[1];
        c->worst = fmax(c->worst, fabs(hypot(x, y) - c->r));
    }
}

/* The zero contour of a circle's signed distance lies within a grid cell of the circle, and goes
 * all the way round; a slice of a 3-d field linear in x is that plane. */
static void test_contour_slice(void **state) {
    (void)state;
    dg_err e = {0};
    dg_hji_grid g;
    const double lo[3] = {-1, -1, -1}, hi[3] = {1, 1, 1};
    const int n[3] = {41, 41, 9};
    assert_int_equal(dg_hji_grid_init(&g, 3, lo, hi, n, NULL, &e), DG_OK);
    double *v = malloc((size_t)g.nodes * sizeof *v), *sl = malloc(41 * 41 * sizeof *sl);
    assert_non_null(v);
    assert_non_null(sl);
    const double c[3] = {0, 0, 0};
    dg_hji_sdf_ball(&g, c, 0.6, 3u, v);  /* a cylinder along axis 2 */
    const double at[3] = {0, 0, 0.3};
    dg_hji_slice2d(&g, v, at, sl);
    seg_check sc = {&g, 0.6, 0};
    const int64_t nseg = dg_hji_contour(sl, 41, 41, seg_on_circle, &sc);
    assert_true(nseg >= (int64_t)(2 * PI * 0.6 / 0.05));  /* about one per cell the circle crosses */
    assert_true(sc.worst < g.dx[0]);
    assert_int_equal(dg_hji_contour(sl, 41, 41, NULL, NULL), nseg);
    /* no sign change, no segment */
    for (int i = 0; i < 41 * 41; i++) sl[i] = 1 + i;
    assert_int_equal(dg_hji_contour(sl, 41, 41, NULL, NULL), 0);
    /* the slice: image order (row 0 at axis 1's top), interpolated between axis 2's nodes */
    for (int64_t i = 0; i < g.nodes; i++) {
        double x[3];
        dg_hji_grid_point(&g, i, x);
        v[i] = x[0] + 2 * x[1] + 3 * x[2];
    }
    dg_hji_slice2d(&g, v, at, sl);
    for (int j = 0; j < 41; j++)
        for (int i = 0; i < 41; i++)
            assert_true(fabs(sl[j * 41 + i] - (-1 + 0.05 * i + 2 * (1 - 0.05 * j) + 0.9)) < 1e-12);
    free(v);
    free(sl);
}

/* ------------------------------------------------------- learned vs HJI */

/* chase4d declares how chase's state maps onto its own: the four pairings play from the same
 * starts, the same bits twice; the share of starts inside the tube is V <= 0 at the mapped state;
 * another learning game, or an HJI game with no mapping, is refused. */
static void test_versus(void **state) {
    (void)state;
    dg_err e = {0};
    dg_hji_problem *p = load_ok("game: chase4d\nt_end: 0.2\naccuracy: low\n"
                                "grid: {min: [-1, -1, -2, -2], max: [1, 1, 2, 2], n: [9, 9, 9, 9]}\n");
    double *V = solve(p);
    const char *yaml = "game: chase\nenv: {horizon: 20, evader: policy, walls: false}\npolicy: {hidden: [8]}\n";
    dg_cfg *c = dg_cfg_parse(yaml, strlen(yaml), "chase.yaml", &e);
    assert_non_null(c);
    dg_env *env = dg_env_create(c, &e);
    if (!env) fail_msg("env: %s", e.msg);
    dg_policy pol;
    dg_params *pp = NULL;
    const int hidden[1] = {8};
    assert_int_equal(dg_policy_create(env, hidden, 1, &pol, &pp, &e), DG_OK);
    dg_rng rng;
    dg_rng_seed(&rng, 3);
    dg_policy_reset_params(&pol, pp, &rng);
    assert_int_equal(dg_hji_link_check(p, env, &e), DG_OK);
    dg_hji_versus_result r, r2;
    const dg_hji_source VSRC = dg_hji_source_slices(&p->grid, &(dg_hji_slices){1, &p->t_end, V});
    assert_int_equal(dg_hji_versus(p, &VSRC, 0, env, &pol, pp, 32, 7, &r, &e), DG_OK);
    assert_int_equal(dg_hji_versus(p, &VSRC, 0, env, &pol, pp, 32, 7, &r2, &e), DG_OK);
    assert_memory_equal(&r, &r2, sizeof r);
    assert_int_equal(r.episodes, 32);
    for (int k = 0; k < DG_HJI_PAIRINGS; k++) {
        assert_non_null(dg_hji_pairing_name(k));
        assert_true(r.capture_rate[k] >= 0 && r.capture_rate[k] <= 1);
        assert_true(r.capture_rate[k] > 0 ? r.capture_time[k] > 0 : isnan(r.capture_time[k]));
    }
    assert_null(dg_hji_pairing_name(DG_HJI_PAIRINGS));
    {   /* a moving target: capture tested against the target of each step's time (docs/hji.md, time-varying
         * sets); at velocity 0 the same captures as the capture radius, moving, others */
        dg_hji_versus_result rm[2];
        static const char *const VEL[2] = {"[0, 0, 0, 0]", "[3, 3, 0, 0]"};
        for (int q = 0; q < 2; q++) {
            char y[256];
            snprintf(y, sizeof y, "game: chase4d\nt_end: 0.2\naccuracy: low\nmode: brt_target\n"
                     "grid: {min: [-1, -1, -2, -2], max: [1, 1, 2, 2], n: [9, 9, 9, 9]}\ntarget_velocity: %s\n",
                     VEL[q]);
            dg_hji_problem *pm = load_ok(y);
            assert_int_equal(dg_hji_problem_target_moves(pm), 1);
            double *Vm = solve(pm);
            const dg_hji_source SM = dg_hji_source_slices(&pm->grid, &(dg_hji_slices){1, &pm->t_end, Vm});
            assert_int_equal(dg_hji_versus(pm, &SM, 0, env, &pol, pp, 32, 7, &rm[q], &e), DG_OK);
            print_message("versus, target velocity %s: capture rates %g %g %g %g (fixed: %g %g %g %g)\n", VEL[q],
                          rm[q].capture_rate[0], rm[q].capture_rate[1], rm[q].capture_rate[2], rm[q].capture_rate[3],
                          r.capture_rate[0], r.capture_rate[1], r.capture_rate[2], r.capture_rate[3]);
            free(Vm);
            dg_hji_problem_free(pm);
        }
        for (int k = 0; k < DG_HJI_PAIRINGS; k++)
            assert_true(rm[0].capture_rate[k] == r.capture_rate[k]);   /* the same ball, tested at each time */
        /* learned vs learned reads no value: the same paths, captured by the moving ball (measured 0.094; the
         * ball where it starts 0.031) */
        assert_true(rm[1].capture_rate[0] != r.capture_rate[0]);
    }
    float st[32 * 8];
    dg_rng_seed(&rng, 7);
    assert_int_equal(env->game->reset(env, &rng, 32, st, NULL, NULL), DG_OK);
    int inside = 0;
    for (int i = 0; i < 32; i++) {
        const float *s = st + 8 * i;
        const double x[4] = {s[4] - s[0], s[5] - s[1], s[6] - s[2], s[7] - s[3]};
        inside += dg_hji_interp(&p->grid, V, x, NULL) <= 0;
    }
    assert_true(r.inside == inside / 32.0);
    dg_env_free(env);
    dg_cfg_free(c);
    /* a one-player game is not chase with a learned evader */
    c = dg_cfg_parse("game: reach\n", 12, "reach.yaml", &e);
    env = dg_env_create(c, &e);
    assert_non_null(env);
    assert_int_equal(dg_hji_link_check(p, env, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "needs chase"));
    dg_hji_problem *q = load_ok("game: pursuit2d\ngrid: {n: [11, 11]}\n");  /* linked to duel_simple */
    assert_int_equal(dg_hji_link_check(q, env, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "needs duel_simple"));
    dg_hji_problem_free(q);
    q = load_ok("game: air3d\ngrid: {n: [11, 11, 11]}\n");  /* no learning game maps onto it */
    assert_int_equal(dg_hji_link_check(q, env, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "needs pursuit2d or chase4d"));
    dg_hji_problem_free(q);
    dg_env_free(env);
    dg_cfg_free(c);
    dg_params_free(pp);
    free(V);
    dg_hji_problem_free(p);
}

/* The accuracy preset read back from the options; a solve's peak memory covers the solver's and
 * the target's, and float32 files need less. */
static void test_presets_memory(void **state) {
    (void)state;
    for (int a = 0; a < DG_HJI_ACCURACY_COUNT; a++) {
        dg_hji_opts o = dg_hji_opts_default();
        dg_hji_opts_accuracy(&o, (dg_hji_accuracy)a);
        assert_int_equal(dg_hji_accuracy_of(&o), a);
    }
    dg_hji_problem *p = load_ok("game: pursuit2d\ngrid: {n: [41, 41]}\n");
    const double m = dg_hji_problem_memory(p, 3, 3, 0);
    assert_true(m >= dg_hji_solve_memory(&p->grid, &p->game, &p->opts, 3) + (double)p->grid.nodes * sizeof(double));
    assert_true(m >= 3.0 * (double)p->grid.nodes * sizeof(double) + dg_hji_value_memory(p, 3, 0));
    assert_true(dg_hji_problem_memory(p, 3, 3, 1) <= m);
    dg_hji_problem_free(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_smooth_weno5),
        cmocka_unit_test(test_smooth_lower),
        cmocka_unit_test(test_derivative_orders),
        cmocka_unit_test(test_upwind_boundary),
        cmocka_unit_test(test_dissipation_generic),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_pursuit_exact),
        cmocka_unit_test(test_brt_monotone),
        cmocka_unit_test(test_obstacles),
        cmocka_unit_test(test_slice_at),
        cmocka_unit_test(test_sdf),
        cmocka_unit_test(test_interp),
        cmocka_unit_test(test_float32),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_5d),
        cmocka_unit_test(test_affine_vs_generic),
        cmocka_unit_test(test_optimal),
        cmocka_unit_test(test_air3d_barrier),
        cmocka_unit_test(test_progress_and_stats),
        cmocka_unit_test(test_config_files),
        cmocka_unit_test(test_bad_configs),
        cmocka_unit_test(test_value_files),
        cmocka_unit_test(test_simulate),
        cmocka_unit_test(test_contour_slice),
        cmocka_unit_test(test_versus),
        cmocka_unit_test(test_presets_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
