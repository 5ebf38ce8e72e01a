/* Tests for time-varying targets and obstacles in the HJI grid solver (docs/hji.md, time-varying
 * sets): the exact anchor (simple pursuit of a target moving at a constant velocity is the static
 * game in the target's frame, where the dynamics gain the drift -w: the two solves compared node for
 * node, and with the closed form), helperOC's tvObs test (a Dubins car's reach-avoid tube with an
 * obstacle whose radius changes in time) with checks that can fail, the built-in keys against a
 * model file's expressions of t, and the refusals. */
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

/* ------------------------------------------------------------------ helpers */

/* The problem of a config's text, or NULL with e set. */
static dg_hji_problem *load(const char *yaml, dg_err *e) {
    dg_cfg *c = dg_cfg_parse(yaml, strlen(yaml), "tvary.yaml", e);
    dg_hji_problem *p = c ? dg_hji_problem_load(c, e) : NULL;
    if (p && dg_cfg_check_unused(c, e)) {
        dg_hji_problem_free(p);
        p = NULL;
    }
    dg_cfg_free(c);
    return p;
}

/* Solves yaml at the nt times (the last its t_end) into a new array (nt, nodes); *pp gets the problem. */
static double *solve(const char *yaml, int nt, const double *times, dg_hji_problem **pp) {
    dg_err e = {0};
    dg_hji_problem *p = load(yaml, &e);
    if (!p) fail_msg("%s\n%s", e.msg, yaml);
    double *V = malloc((size_t)nt * (size_t)p->grid.nodes * sizeof *V);
    assert_non_null(V);
    dg_hji_stats st;
    if (dg_hji_problem_solve_at(p, nt, times, V, &st, &e)) fail_msg("%s", e.msg);
    *pp = p;
    return V;
}

static void expect_config_error(const char *yaml, const char *want) {
    dg_err e = {0};
    dg_hji_problem *p = load(yaml, &e);
    if (p) {
        dg_hji_problem_free(p);
        fail_msg("config should fail: %s", yaml);
    }
    assert_int_equal(e.status, DG_ERR_CONFIG);
    if (!strstr(e.msg, want)) fail_msg("message \"%s\" lacks \"%s\"", e.msg, want);
}

/* ------------------------------------------------------- the exact anchor */

/* Simple pursuit x = x_E - x_P, x' = v_e b - v_p a (|a|, |b| <= 1; v_p = 1, v_e = 0.5) with the target
 * |x - c(t)| <= r whose center moves at w = (0.6, -0.4), faster than the pursuer closes (0.5), so that the
 * tube is not the set: c(t) = w t (t the game's time, 0 at the start of the horizon).
 * In the target's frame y = x - w t the game is y' = v_e b - v_p a - w with the static target |y| <= r:
 * `game: linear` with drift -w. At the start (t = 0, time-to-go T) the frames coincide (y = x), so the
 * two values are the same function of the same nodes. The closed form: the pursuer closes at v_p - v_e
 * whatever the evader does, so the set (BRS, the payoff at T) is V(x, T) = max(|x - w T| - (v_p - v_e) T, 0)
 * - r, and the tube (brt_target) the least of max(|x - w s| - (v_p - v_e) s, 0) - r over 0 <= s <= T. */
static const char PURSUIT[] =
    "game: linear\n"
    "target_radius: 0.25\n"
    "control: {set: ball, matrix: [-1, 0, 0, -1], bound: 1.0}\n"
    "disturbance: {set: ball, matrix: [1, 0, 0, 1], bound: 0.5}\n"
    "t_end: 1.0\n"
    "accuracy: %s\n"
    "mode: %s\n"
    "grid: {min: [-2, -2], max: [2, 2], n: [81, 81]}\n"
    "%s\n";

static void pursuit_pair(const char *acc, const char *mode, double *diff, double *err_moving, double *err_static,
                         double *moved) {
    const double w[2] = {0.6, -0.4}, T = 1.0, r = 0.25;
    const int tube = strcmp(mode, "brs") != 0;
    char moving[1024], still[1024], none[1024];
    snprintf(moving, sizeof moving, PURSUIT, acc, mode, "target_velocity: [0.6, -0.4]");
    snprintf(still, sizeof still, PURSUIT, acc, mode, "dynamics: {drift: [-0.6, 0.4]}");
    snprintf(none, sizeof none, PURSUIT, acc, mode, "");
    dg_hji_problem *pm, *ps, *pn;
    double *Vm = solve(moving, 1, &T, &pm), *Vs = solve(still, 1, &T, &ps), *Vn = solve(none, 1, &T, &pn);
    /* the comparison away from the grid's edge, where the ghost cells of the two frames differ */
    *diff = *err_moving = *err_static = *moved = 0;
    for (int64_t j = 0; j < pm->grid.nodes; j++) {
        double x[2];
        dg_hji_grid_point(&pm->grid, j, x);
        if (fabs(x[0]) > 1.2 || fabs(x[1]) > 1.2) continue;
        double exact = INFINITY;   /* the tube: the least over the times s <= T the target is reached at */
        for (int i = tube ? 0 : 1000; i <= 1000; i++) {
            const double s = T * i / 1000, dx = x[0] - w[0] * s, dy = x[1] - w[1] * s;
            exact = fmin(exact, fmax(sqrt(dx * dx + dy * dy) - 0.5 * s, 0) - r);
        }
        *diff = fmax(*diff, fabs(Vm[j] - Vs[j]));
        *err_moving = fmax(*err_moving, fabs(Vm[j] - exact));
        *err_static = fmax(*err_static, fabs(Vs[j] - exact));
        *moved = fmax(*moved, fabs(Vm[j] - Vn[j]));
    }
    free(Vm);
    free(Vs);
    free(Vn);
    dg_hji_problem_free(pm);
    dg_hji_problem_free(ps);
    dg_hji_problem_free(pn);
}

static void test_moving_target_is_the_moving_frame(void **state) {
    (void)state;
    double diff, em, es, moved;
    /* brs: only the target at the end of the horizon (tau = 0) enters; the two discretisations differ
     * (the drift adds to the static frame's dissipation), so they agree to the scheme's error */
    pursuit_pair("veryHigh", "brs", &diff, &em, &es, &moved);
    print_message("brs veryHigh: max |moving - static| %.3g, max error %.3g / %.3g, moved %.3g\n", diff, em, es,
                  moved);
    assert_true(moved > 0.2);          /* the target did move: not the static target's value */
    assert_true(em < 0.05 && es < 0.05);   /* both near the closed form (a cell is 0.05) */
    assert_true(diff < 0.02);          /* node for node, to the discretisation's tolerance */
    /* brt_target: the target of every step (l(x, t) at t = t_end - tau) against the static tube */
    pursuit_pair("veryHigh", "brt_target", &diff, &em, &es, &moved);
    print_message("brt_target veryHigh: max |moving - static| %.3g, max error %.3g / %.3g, moved %.3g\n", diff, em,
                  es, moved);
    assert_true(moved > 0.2);
    assert_true(em < 0.05 && es < 0.05);
    assert_true(diff < 0.02);
    pursuit_pair("low", "brt_target", &diff, &em, &es, &moved);
    print_message("brt_target low: max |moving - static| %.3g, max error %.3g / %.3g\n", diff, em, es);
    assert_true(diff < 0.06);
}

/* simple pursuit as a game of degree (the time to reach a ball of radius 0.25, capped at 3 s): the
 * time-to-reach anchors' game, its target's motion appended */
#define PURSUIT_TIME                                                         \
    "game: linear\n"                                                         \
    "target_radius: 0.25\n"                                                  \
    "control: {set: ball, matrix: [-1, 0, 0, -1], bound: 1.0}\n"             \
    "disturbance: {set: ball, matrix: [1, 0, 0, 1], bound: 0.5}\n"           \
    "payoff: time\n"                                                         \
    "t_end: 3.0\n"                                                           \
    "accuracy: veryHigh\n"                                                   \
    "grid: {min: [-2, -2], max: [2, 2], n: [81, 81]}\n"

/* The same anchor for a game of degree: the time to reach the moving target (capped at t_end = 3), the
 * static frame's time to reach its fixed one. Closed form: the least s with |x - w s| <= r + (v_p - v_e) s,
 * here for w = (0.3, -0.2), slower than the pursuer closes; capped at t_end. */
static void test_moving_target_time_to_reach(void **state) {
    (void)state;
    static const char TIME[] = PURSUIT_TIME "%s\n";
    const double w[2] = {0.3, -0.2}, T = 3.0, r = 0.25;
    char moving[1024], still[1024];
    snprintf(moving, sizeof moving, TIME, "target_velocity: [0.3, -0.2]");
    snprintf(still, sizeof still, TIME, "dynamics: {drift: [-0.3, 0.2]}");
    dg_hji_problem *pm, *ps;
    double *Vm = solve(moving, 1, &T, &pm), *Vs = solve(still, 1, &T, &ps);
    double diff = 0, em = 0, es = 0, mm = 0, ms = 0;
    int cnt = 0;
    for (int64_t j = 0; j < pm->grid.nodes; j++) {
        double x[2];
        dg_hji_grid_point(&pm->grid, j, x);
        if (fabs(x[0]) > 1.2 || fabs(x[1]) > 1.2) continue;
        /* |x - w s| = r + 0.5 s: (|w|^2 - 0.25) s^2 - 2 (x.w + 0.5 r) s + |x|^2 - r^2 = 0, its least root >= 0 */
        const double a = w[0] * w[0] + w[1] * w[1] - 0.25, b = -2 * (x[0] * w[0] + x[1] * w[1] + 0.5 * r);
        const double c = x[0] * x[0] + x[1] * x[1] - r * r;
        double exact = 0;
        if (c > 0) exact = fmin((-b - sqrt(b * b - 4 * a * c)) / (2 * a), T);   /* a < 0: the positive root; capped */
        if (exact > T - 0.5) continue;   /* the cap's kink */
        diff = fmax(diff, fabs(Vm[j] - Vs[j]));
        em = fmax(em, fabs(Vm[j] - exact));
        es = fmax(es, fabs(Vs[j] - exact));
        mm += fabs(Vm[j] - exact);
        ms += fabs(Vs[j] - exact);
        cnt++;
    }
    mm /= cnt;
    ms /= cnt;
    print_message("time to reach: max |moving - static| %.3g, max error %.3g / %.3g, mean %.3g / %.3g\n", diff, em,
                  es, mm, ms);
    /* the moving target's held set jumps from node to node: first order (docs/hji.md), the static frame's
     * high order; both near the closed form, and near each other */
    assert_true(mm < 0.03 && ms < 0.01);
    assert_true(em < 0.15 && diff < 0.15);
    free(Vm);
    free(Vs);
    dg_hji_problem_free(pm);
    dg_hji_problem_free(ps);
}

/* Plays of the anchor's time to reach (the target moving at w = (0.3, -0.2), slower than the pursuer
 * closes): both players follow the value's feedback, and capture is tested against the target of the
 * game's time t (the value read at the time-to-go t_end - t). At the equilibrium the pursuer heads for
 * the intercept x0 - w T* and the evader flees along the same line, so the play is captured at the
 * closed form's T* (the least s with |x0 - w s| <= r + (v_p - v_e) s); against the target where it
 * ends (t = t_end: the node array), (1, 0.5) was captured at 2.85 s. (-1.5, 1) escapes
 * (T* is 11 s, past t_end). The batch plays the same starts in lockstep, to the same times. */
static void test_play_moving_target(void **state) {
    (void)state;
    static const char TIME[] = PURSUIT_TIME "target_velocity: [0.3, -0.2]\n";
    const double w[2] = {0.3, -0.2}, r = 0.25, dt = 0.005;
    dg_err e = {0};
    dg_hji_problem *p = load(TIME, &e);
    if (!p) fail_msg("%s", e.msg);
    enum { SLICES = 61 };
    double times[SLICES + 1];
    double *out = malloc((SLICES + 1) * (size_t)p->grid.nodes * sizeof *out);
    assert_non_null(out);
    int nt = 0;
    dg_hji_stats st;
    if (dg_hji_problem_solve_slices(p, SLICES, 0, NULL, &nt, times, out, &st, &e)) fail_msg("%s", e.msg);
    const dg_hji_slices V = {.nt = nt, .t = times, .v = out};
    const double x0[4] = {1.0, 0.5, -1.5, 1.0};
    double exact[2];
    for (int i = 0; i < 2; i++) {   /* the least root of (|w|^2 - 0.25) s^2 - 2 (x.w + 0.5 r) s + |x|^2 - r^2 */
        const double *x = x0 + 2 * i, a = w[0] * w[0] + w[1] * w[1] - 0.25;
        const double b = -2 * (x[0] * w[0] + x[1] * w[1] + 0.5 * r), c = x[0] * x[0] + x[1] * x[1] - r * r;
        exact[i] = (-b - sqrt(b * b - 4 * a * c)) / (2 * a);
    }
    assert_true(exact[0] > 1.4 && exact[0] < 1.5 && exact[1] > 10);
    const dg_hji_sim_opts o = {.t_max = p->t_end, .dt = dt, .max_steps = 100000};
    dg_hji_sim_result res[2];
    for (int i = 0; i < 2; i++)
        if (dg_hji_simulate(p, &V, x0 + 2 * i, &o, &res[i], &e)) fail_msg("%s", e.msg);
    print_message("play of the moving target: captured at %.4f (closed form %.4f); the other %s\n",
                  res[0].capture_time, exact[0], res[1].captured ? "captured" : "escapes");
    assert_int_equal(res[0].captured, 1);
    assert_true(fabs(res[0].capture_time - exact[0]) < 0.01);   /* two steps (the target where it ends: 1.4) */
    assert_int_equal(res[1].captured, 0);
    const dg_hji_source src = dg_hji_source_slices(&p->grid, &V);
    double ct[2], lmin[2];
    if (dg_hji_simulate_batch(p, &src, NULL, 2, x0, &o, ct, lmin, &e)) fail_msg("%s", e.msg);
    assert_true(fabs(ct[0] - res[0].capture_time) < 1e-12);
    assert_true(ct[1] < 0 && lmin[1] > 0);
    /* the sets at a time: the target moved by w t, the node array's (t_end) at t_end */
    double l[2], lt;
    const double at[2] = {0.3, -0.2};
    if (dg_hji_problem_sets_at(p, 1.0, 1, at, &l[0], NULL, &e) || dg_hji_problem_sets_at(p, p->t_end, 1, at, &l[1],
                                                                                         NULL, &e) ||
        dg_hji_problem_target_at(p, 1, at, &lt, NULL, &e))
        fail_msg("%s", e.msg);
    assert_true(fabs(l[0] + r) < 1e-12);
    assert_true(l[1] == lt && fabs(lt - (sqrt(0.36 + 0.16) - r)) < 1e-12);
    free(out);
    dg_hji_problem_free(p);
}

/* A play's obstacle field at each step (dg_hji_sim_step.obstacle): the ball of the step's time t,
 * 0.3 - |x - (c + v t)|, and r.obstacle_time the first step inside it. */
typedef struct obst_check {
    double worst, first;
} obst_check;
static int obst_step(void *user, const dg_hji_sim_step *s) {
    obst_check *c = user;
    const double g = 0.3 - hypot(s->x[0] - (1.0 - 0.8 * s->t), s->x[1] - 0.2 * s->t);
    c->worst = fmax(c->worst, fabs(s->obstacle - g));
    if (s->obstacle > 0 && c->first < 0) c->first = s->t;
    return 0;
}
static void test_play_moving_obstacle(void **state) {
    (void)state;
    char yaml[1024];
    snprintf(yaml, sizeof yaml, PURSUIT, "low", "brt_target",
             "obstacles:\n  - {shape: ball, center: [1.0, 0.0], radius: 0.3, velocity: [-0.8, 0.2]}\n");
    dg_hji_problem *p;
    const double times[3] = {0.5, 0.75, 1.0};
    double *V = solve(yaml, 3, times, &p);
    const dg_hji_slices S = {.nt = 3, .t = times, .v = V};
    obst_check c = {0, -1};
    const dg_hji_sim_opts o = {.t_max = 1.0, .dt = 0.01, .max_steps = 1000, .on_step = obst_step, .user = &c};
    dg_hji_sim_result r;
    dg_err e = {0};
    const double x0[2] = {0.2, 0.3};   /* the ball sweeps over it at about t = 1 */
    if (dg_hji_simulate(p, &S, x0, &o, &r, &e)) fail_msg("%s", e.msg);
    print_message("moving obstacle: the play's field %.3g from the ball of its time; inside from %g\n", c.worst,
                  r.obstacle_time);
    assert_true(c.worst < 1e-12);
    assert_true(r.obstacle_time == c.first);
    free(V);
    dg_hji_problem_free(p);
}

/* float32 solves take the moving sets too (converted each step): the moving target's tube in f32 is the
 * f64 one's to float32's rounding, and not the fixed target's. */
static void test_float32(void **state) {
    (void)state;
    char f64[1024], f32[1024], none[1024];
    snprintf(f64, sizeof f64, PURSUIT, "medium", "brt_target", "target_velocity: [0.6, -0.4]");
    snprintf(f32, sizeof f32, PURSUIT, "medium", "brt_target",
             "target_velocity: [0.6, -0.4]\nsolver: {precision: f32}");
    snprintf(none, sizeof none, PURSUIT, "medium", "brt_target", "solver: {precision: f32}");
    const double T = 1.0;
    dg_hji_problem *pa, *pb, *pc;
    double *A = solve(f64, 1, &T, &pa), *B = solve(f32, 1, &T, &pb), *C = solve(none, 1, &T, &pc);
    double d = 0, moved = 0;
    for (int64_t j = 0; j < pa->grid.nodes; j++) {
        d = fmax(d, fabs(A[j] - B[j]));
        moved = fmax(moved, fabs(B[j] - C[j]));
    }
    print_message("float32: %.3g from double, %.3g from the fixed target's\n", d, moved);
    assert_true(d < 1e-4 && moved > 0.2);
    free(A);
    free(B);
    free(C);
    dg_hji_problem_free(pa);
    dg_hji_problem_free(pb);
    dg_hji_problem_free(pc);
}

/* ------------------------------------------------------ helperOC's tvObs */

/* helperOC's tests/HJIPDE_solve_test.m, 'tvObs': a Dubins car (speed 1, turn rate in [-1, 1]) on
 * [-5, 5]^2 x [-pi, pi), the target the cylinder of radius R = 1 about the origin, and an obstacle, the
 * cylinder about (1.5, 1.5) whose radius grows with the time-to-go, R tau / tMax (helperOC's i/length(tau)
 * R at the i-th time), tMax = 2, the tube with the target ('data0' / 'none' with targets). Here the
 * radius in the game's time t = tMax - tau: R (2 - t) / 2, a model file's expression of t. */
static const char DUBINS[] =
    "game: model\n"
    "model:\n"
    "  name: dubins_tvobs\n"
    "  constants: {speed: 1, R: 1}\n"
    "  state: {x: [-5, 5], y: [-5, 5], th: [-3.141592653589793, 3.141592653589793]}\n"
    "  periodic: [th]\n"
    "  inputs:\n"
    "    w: {dim: 1, lo: -1, hi: 1, role: min}\n"
    "  dynamics:\n"
    "    x: speed*cos(th)\n"
    "    y: speed*sin(th)\n"
    "    th: w\n"
    "  target: sqrt(x^2 + y^2) - R\n"
    "%s"
    "t_end: 2.0\n"
    "mode: brt_target\n"
    "accuracy: %s\n"
    "grid: {min: [-5, -5, -3.141592653589793], max: [5, 5, 3.141592653589793], n: [%d, %d, %d]}\n";

static double *dubins(const char *avoid, const char *acc, int n, int nt, const double *times, dg_hji_problem **pp) {
    char yaml[2048];
    snprintf(yaml, sizeof yaml, DUBINS, avoid, acc, n, n, n);
    return solve(yaml, nt, times, pp);
}

static void test_tvobs(void **state) {
    (void)state;
    enum { NT = 4 };
    const double times[NT] = {0.5, 1.0, 1.5, 2.0};
    const char *grow = "  avoid: sqrt((x - 1.5)^2 + (y - 1.5)^2) - R*(2 - t)/2\n";
    dg_hji_problem *p, *p0, *p1;
    double *V = dubins(grow, "medium", 41, NT, times, &p);
    const int64_t N = p->grid.nodes;
    /* 1. the constraint at every stored time: V(x, tau) >= g(x, t) with t = t_end - tau, g the obstacle
     *    field (the radius R tau / 2 at time-to-go tau); where g > 0 the state is not in the tube */
    int64_t inside = 0;
    for (int k = 0; k < NT; k++) {
        const double rad = 1.0 * times[k] / 2.0;
        for (int64_t j = 0; j < N; j++) {
            double x[3];
            dg_hji_grid_point(&p->grid, j, x);
            const double g = rad - sqrt((x[0] - 1.5) * (x[0] - 1.5) + (x[1] - 1.5) * (x[1] - 1.5));
            if (g > 0) inside++;
            if (!(V[(int64_t)k * N + j] >= g - 1e-12))
                fail_msg("tau %g node %lld: V %g below the obstacle's %g", times[k], (long long)j,
                         V[(int64_t)k * N + j], g);
        }
    }
    assert_true(inside > 100);
    /* 2. a monotone scheme (low: upwind, Euler, CFL < 1) orders the tubes as their obstacles: no obstacle
     *    <= the growing one <= the largest (radius R at every time), and the growing one is strictly
     *    between somewhere on either side (its obstacle is not one of the fixed ones) */
    const double T = 2.0;
    dg_hji_problem_free(p);   /* the first solve's problem: p is the next one's */
    double *Vt = dubins(grow, "low", 31, 1, &T, &p);
    double *V0 = dubins("", "low", 31, 1, &T, &p0);
    double *V1 = dubins("  avoid: sqrt((x - 1.5)^2 + (y - 1.5)^2) - R\n", "low", 31, 1, &T, &p1);
    double below = 0, above = 0, worst = 0;
    for (int64_t j = 0; j < p->grid.nodes; j++) {
        double x[3];
        dg_hji_grid_point(&p->grid, j, x);
        if (fabs(x[0]) > 4.5 || fabs(x[1]) > 4.5) continue;
        worst = fmax(worst, fmax(V0[j] - Vt[j], Vt[j] - V1[j]));
        below = fmax(below, Vt[j] - V0[j]);
        above = fmax(above, V1[j] - Vt[j]);
    }
    /* (the plain edges' ghost cells, extrapolated away from zero, are not a monotone rule: the cells
     * within a cell of the x and y edges are left out) */
    if (!(worst <= 1e-12)) fail_msg("the tubes are not ordered as their obstacles: by %g", worst);
    print_message("tvObs (low, 31^3): up to %.3g above the tube without the obstacle, %.3g below the largest's\n",
                  below, above);
    assert_true(below > 0.1 && above > 0.1);
    free(V);
    free(Vt);
    free(V0);
    free(V1);
    dg_hji_problem_free(p);
    dg_hji_problem_free(p0);
    dg_hji_problem_free(p1);
}

/* The built-in keys (obstacles[i].velocity, a box and a ball) against the same sets written as a model
 * file's expressions of t: the same values (to rounding: the two formulas round differently). */
static void test_keys_match_expressions(void **state) {
    (void)state;
    const double T = 2.0;
    dg_hji_problem *pk, *pe;
    char yaml[3072], base[2048];
    snprintf(base, sizeof base, DUBINS, "", "medium", 25, 25, 25);
    snprintf(yaml, sizeof yaml, "%s"
             "obstacles:\n"
             "  - {shape: ball, center: [1.5, 1.5], radius: 0.5, axes: [0, 1], velocity: [-0.5, 0.25]}\n", base);
    double *Vk = solve(yaml, 1, &T, &pk);
    double *Ve = dubins("  avoid: sqrt((x - (1.5 - 0.5*t))^2 + (y - (1.5 + 0.25*t))^2) - 0.5\n", "medium", 25, 1, &T,
                        &pe);
    double diff = 0, moved = 0;
    char still[3072];
    snprintf(still, sizeof still, "%s"
             "obstacles:\n"
             "  - {shape: ball, center: [1.5, 1.5], radius: 0.5, axes: [0, 1]}\n", base);
    dg_hji_problem *ps;
    double *Vs = solve(still, 1, &T, &ps);
    for (int64_t j = 0; j < pk->grid.nodes; j++) {
        diff = fmax(diff, fabs(Vk[j] - Ve[j]));
        moved = fmax(moved, fabs(Vk[j] - Vs[j]));
    }
    print_message("moving ball: keys against the expression %.3g (moved %.3g)\n", diff, moved);
    assert_true(diff < 1e-9);
    assert_true(moved > 0.1);
    free(Vk);
    free(Ve);
    free(Vs);
    dg_hji_problem_free(pk);
    dg_hji_problem_free(pe);
    dg_hji_problem_free(ps);
}

/* A value of moving sets is not taken for one of fixed sets: a moving ball and a fixed one where the
 * moving one ends (the node arrays, the sets at tau = 0, are the same) differ in the fingerprint, so
 * dg_hji_value_check refuses either's value for the other's config. */
static void test_fingerprint(void **state) {
    (void)state;
    static const char BASE[] = "game: pursuit2d\nmode: brt_target\nt_end: 1.0\naccuracy: low\n"
                               "grid: {min: [-2, -2], max: [2, 2], n: [21, 21]}\nobstacles:\n%s";
    char mov[512], fix[512];
    snprintf(mov, sizeof mov, BASE, "  - {shape: ball, center: [1.0, 0.0], radius: 0.3, velocity: [-0.8, 0.2]}\n");
    snprintf(fix, sizeof fix, BASE, "  - {shape: ball, center: [0.2, 0.2], radius: 0.3}\n");
    dg_err e = {0};
    dg_hji_problem *pm = load(mov, &e), *pf = load(fix, &e);
    assert_non_null(pm);
    assert_non_null(pf);
    assert_string_equal(dg_hji_problem_moving(pm), "obstacles");
    assert_null(dg_hji_problem_moving(pf));
    assert_int_equal(dg_hji_problem_target_moves(pm), 0);   /* a play tests its fixed target as before */
    for (int64_t j = 0; j < pm->grid.nodes; j++) assert_true(fabs(pm->obstacle[j] - pf->obstacle[j]) < 1e-12);
    const double T = 1.0;
    double *V = calloc((size_t)pm->grid.nodes, sizeof *V);
    dg_hji_value vm, vf;
    assert_int_equal(dg_hji_value_make(pm, 1, &T, V, "mov", &vm, &e), DG_OK);
    assert_int_equal(dg_hji_value_make(pf, 1, &T, V, "fix", &vf, &e), DG_OK);
    assert_int_equal(dg_hji_value_check(&vm, pm, "mov.yaml", &e), DG_OK);
    assert_int_equal(dg_hji_value_check(&vm, pf, "fix.yaml", &e), DG_ERR_ARG);
    if (!strstr(e.msg, "obstacles")) fail_msg("%s", e.msg);
    assert_int_equal(dg_hji_value_check(&vf, pm, "mov.yaml", &e), DG_ERR_ARG);
    dg_hji_value_close(&vm);
    dg_hji_value_close(&vf);
    free(V);
    dg_hji_problem_free(pm);
    dg_hji_problem_free(pf);
}

/* Refused in one line naming the key: a moving target under mode brt (its rule freezes the target of
 * tau = 0), a game of degree with moving sets, target_velocity of the wrong length or on a model. */
static void test_refusals(void **state) {
    (void)state;
    char yaml[1024];
    snprintf(yaml, sizeof yaml, PURSUIT, "low", "brt", "target_velocity: [0.3, -0.2]");
    expect_config_error(yaml, "target_velocity");
    expect_config_error(yaml, "brt_target");
    snprintf(yaml, sizeof yaml, PURSUIT, "low", "brs", "target_velocity: [0.3]");
    expect_config_error(yaml, "expected 2 numbers");
    snprintf(yaml, sizeof yaml, PURSUIT, "low", "brs",
             "obstacles:\n  - {shape: box, min: [0.5, 0.5], max: [1, 1], velocity: [0, 0.1]}\npayoff: time\n"
             "stationary: true\n");
    /* a game of degree refuses a mode; drop it */
    char *m = strstr(yaml, "mode: brs\n");
    memmove(m, m + 10, strlen(m + 10) + 1);
    expect_config_error(yaml, "no steady value");
    snprintf(yaml, sizeof yaml, PURSUIT, "low", "brs", "target_velocity: [0, 0.1]\npayoff: cost\n");
    m = strstr(yaml, "mode: brs\n");
    memmove(m, m + 10, strlen(m + 10) + 1);
    expect_config_error(yaml, "not payoff: cost");
    char dub[2048];
    snprintf(dub, sizeof dub, DUBINS, "", "low", 11, 11, 11);
    strcat(dub, "target_velocity: [0, 0, 0]\n");
    expect_config_error(dub, "expression of t");
    /* a model that names its own t: its sets read that one, and stay */
    snprintf(dub, sizeof dub, DUBINS, "  avoid: sqrt((x - 1.5)^2 + (y - 1.5)^2) - t\n", "low", 11, 11, 11);
    char *k = strstr(dub, "{speed: 1, R: 1}");
    assert_non_null(k);
    memcpy(k, "{speed: 1, t: 1}", 16);
    char *r = strstr(dub, "- R\n");
    assert_non_null(r);
    r[2] = 't';
    dg_err e = {0};
    dg_hji_problem *p = load(dub, &e);
    if (!p) fail_msg("%s", e.msg);
    assert_null(dg_hji_problem_moving(p));
    dg_hji_problem_free(p);
    {   /* for work at points (hji play's load) a moving target loads; hji learn and certify --sampling refuse
         * it in one line naming the key */
        snprintf(yaml, sizeof yaml, PURSUIT, "low", "brt_target", "target_velocity: [0.3, -0.2]");
        dg_cfg *c = dg_cfg_parse(yaml, strlen(yaml), "tvary.yaml", &e);
        dg_hji_problem *pp = c ? dg_hji_problem_load_points(c, &e) : NULL;
        dg_hji_learn_opts lo;
        if (!pp || dg_hji_learn_opts_read(c, &lo, &e)) fail_msg("%s", e.msg);
        assert_string_equal(dg_hji_problem_moving(pp), "target_velocity");
        assert_int_equal(dg_hji_problem_target_moves(pp), 1);
        dg_err le = {0};
        assert_null(dg_hji_learner_create(pp, &lo, &le));
        assert_int_equal(le.status, DG_ERR_ARG);
        assert_non_null(strstr(le.msg, "target_velocity moves in time"));
        dg_err ce = {0};
        assert_int_equal(dg_certify_sampling_check(pp, &ce), DG_ERR_ARG);
        assert_non_null(strstr(ce.msg, "target_velocity moves in time"));
        dg_hji_problem_free(pp);
        dg_cfg_free(c);
    }
    /* the game's t moves them */
    snprintf(dub, sizeof dub, DUBINS, "  avoid: sqrt((x - 1.5)^2 + (y - 1.5)^2) - t/4\n", "low", 11, 11, 11);
    p = load(dub, &e);
    if (!p) fail_msg("%s", e.msg);
    assert_string_equal(dg_hji_problem_moving(p), "model.avoid");
    dg_hji_problem_free(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_moving_target_is_the_moving_frame),
        cmocka_unit_test(test_moving_target_time_to_reach),
        cmocka_unit_test(test_play_moving_target),
        cmocka_unit_test(test_play_moving_obstacle),
        cmocka_unit_test(test_float32),
        cmocka_unit_test(test_tvobs),
        cmocka_unit_test(test_keys_match_expressions),
        cmocka_unit_test(test_fingerprint),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
