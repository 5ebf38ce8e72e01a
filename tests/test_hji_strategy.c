/* The HJBI strategies of a finite-horizon game: from a state inside the tube of horizon T
 * (V(x0, T) < 0 by a margin, outside the target), the pursuer and the evader both following the
 * feedback of V(x, T - t) (dg_hji_simulate over the time slices of dg_hji_problem_solve_slices)
 * end in capture by T (plus one step), on the shipped configs of pursuit2d, air3d and
 * chase4d_open, the 2-D and 4-D ones on coarser grids (air3d on its own: a coarser one misplaces
 * the tube's edge by more than the margin). */
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
#include "util/tier.h"

/* configs/hji/<game>.yaml (DG_TEST_DATA is tests/data) with grid.n set to n, one thread. */
static dg_hji_problem *load_config(const char *game, const char *n) {
    const char *data = getenv("DG_TEST_DATA");
    char path[1024];
    snprintf(path, sizeof path, "%s/../../configs/hji/%s.yaml", data ? data : "tests/data", game);
    dg_err e = {0};
    dg_cfg *c = dg_cfg_load(path, &e);
    if (!c) fail_msg("%s", e.msg);
    dg_hji_problem *p = NULL;
    if (dg_cfg_set(c, "grid.n", n, &e) == DG_OK && dg_cfg_set(c, "solver.threads", "1", &e) == DG_OK)
        p = dg_hji_problem_load(c, &e);
    dg_cfg_free(c);
    if (!p) fail_msg("%s: %s", path, e.msg);
    return p;
}

typedef struct strat_case {
    const char *game, *n;                 /* config and its coarser grid                       */
    double      margin, band;             /* starts with -band < V(x0, T) < -margin: near the
                                             tube's edge, where capture comes late             */
    int         starts;                   /* how many                                          */
} strat_case;

/* Solves c's game with 11 time slices and plays both strategies from c->starts states inside the
 * tube, drawn uniformly over the grid's box (fixed seed). Every one is captured by T + dt; the
 * count of starts the strategy of the single slice V(., T) fails to capture by then (the defect
 * the slices fix) is printed. */
static void check_capture(const strat_case *c) {
    dg_hji_problem *p = load_config(c->game, c->n);
    const int64_t N = p->grid.nodes;
    double *vals = malloc((size_t)12 * (size_t)N * sizeof *vals), times[12];
    assert_non_null(vals);
    int nt = 0;
    dg_err e = {0};
    if (dg_hji_problem_solve_slices(p, 11, 0, NULL, &nt, times, vals, NULL, &e) != DG_OK) fail_msg("%s", e.msg);
    assert_int_equal(nt, 11);
    assert_true(times[0] == 0 && times[nt - 1] == p->t_end);
    const double T = p->t_end;
    const dg_hji_slices V = {.nt = nt, .t = times, .v = vals};
    const dg_hji_slices last = {.nt = 1, .t = &times[nt - 1], .v = vals + (size_t)(nt - 1) * (size_t)N};
    const dg_hji_grid *g = &p->grid;
    uint64_t h = 0x2545f4914f6cdd1dull;
    int found = 0, tries = 0, fixed_late = 0;
    double worst = 0;
    while (found < c->starts) {
        assert_true(++tries < 200000);  /* the tube is not empty */
        double x[DG_HJI_MAX_DIMS];
        for (int k = 0; k < g->ndim; k++) {
            h = h * 6364136223846793005ull + 1442695040888963407ull;
            const double f = (double)(h >> 11) / 9007199254740992.0;
            const int per = g->bc[k] == DG_HJI_BC_PERIODIC;  /* plain axes: away from the edges, where the */
            x[k] = g->lo[k] + (per ? f : 0.2 + 0.6 * f) * (g->hi[k] - g->lo[k]);  /* value is extrapolated */
        }
        const double v0 = dg_hji_slices_interp(g, &V, T, x, NULL);
        if (!(v0 < -c->margin && v0 > -c->band) || dg_hji_interp(g, p->target, x, NULL) <= 0) continue;
        found++;
        dg_hji_sim_opts o = {.t_max = 2 * T, .max_steps = 100000};
        o.dt = dg_hji_sim_dt(p, &V, x, o.t_max);
        dg_hji_sim_result r;
        assert_int_equal(dg_hji_simulate(p, &V, x, &o, &r, &e), DG_OK);
        if (!r.captured || r.capture_time > T + r.dt)
            fail_msg("%s: from (%g, %g, %g, %g) V(x0, T) = %g: %s at %g, after T = %g", c->game, x[0], x[1],
                     g->ndim > 2 ? x[2] : 0, g->ndim > 3 ? x[3] : 0, dg_hji_slices_interp(g, &V, T, x, NULL),
                     r.captured ? "captured" : "not captured", r.capture_time, T);
        worst = fmax(worst, r.capture_time);
        dg_hji_sim_result r1;
        assert_int_equal(dg_hji_simulate(p, &last, x, &o, &r1, &e), DG_OK);
        fixed_late += !r1.captured || r1.capture_time > T + r1.dt;
    }
    printf("%-13s %d starts inside the tube (%d drawn): all captured by T = %g (latest %.3f s); with the "
           "slice V(., T) alone %d are not\n", c->game, found, tries, T, worst, fixed_late);
    free(vals);
    dg_hji_problem_free(p);
}

/* The slices solve: V(., t_end) and the --times have the bits of a plain solve at those times
 * (the samples do not change the steps), in double and float32; the times increase, the first
 * is 0 with the initial value, each sample lies within a step after its mark; too many times or
 * bad ones are refused. */
static void test_slices_solve(void **state) {
    (void)state;
    dg_hji_problem *p = load_config("pursuit2d", "[41, 41]");
    const int64_t N = p->grid.nodes;
    const double land[3] = {0.25, 0.5, 1.0};
    dg_err e = {0};
    for (int f32 = 0; f32 < 2; f32++) {
        p->opts.real = f32 ? DG_HJI_REAL_F32 : DG_HJI_REAL_F64;
        double *plain = malloc((size_t)3 * (size_t)N * sizeof *plain);
        double *vals = malloc((size_t)14 * (size_t)N * sizeof *vals);
        double times[14];
        assert_non_null(plain);
        assert_non_null(vals);
        dg_hji_stats st;
        assert_int_equal(dg_hji_solve(&p->grid, &p->game, &p->opts, p->target, NULL, 3, land, plain, &st, &e), DG_OK);
        const double dt = st.dt_max;
        int nt = 0;
        assert_int_equal(dg_hji_problem_solve_slices(p, 11, 2, land, &nt, times, vals, NULL, &e), DG_OK);
        assert_int_equal(nt, 12);  /* 11 marks, 0.5 and 1 landed on: 10 samples, 0.25 and t_end */
        assert_true(times[0] == 0);
        for (int64_t j = 0; j < N; j++) assert_true(vals[j] == (f32 ? (double)(float)p->target[j] : p->target[j]));
        int seen = 0;
        for (int i = 1; i < nt; i++) {
            assert_true(times[i] > times[i - 1]);
            for (int k = 0; k < 3; k++)
                if (times[i] == land[k]) {
                    seen++;
                    assert_memory_equal(vals + (size_t)i * N, plain + (size_t)k * N, (size_t)N * sizeof *vals);
                }
        }
        assert_int_equal(seen, 3);
        for (int m = 1; m < 10; m++) {  /* a sample within a step after each mark, or a landed time */
            int ok = 0;
            for (int i = 0; i < nt; i++)
                ok |= times[i] >= m * 0.1 * (1 - 1e-12) && times[i] <= m * 0.1 + dt * (1 + 1e-9);
            assert_true(ok);
        }
        /* one slice: t_end alone */
        assert_int_equal(dg_hji_problem_solve_slices(p, 1, 0, NULL, &nt, times, vals, NULL, &e), DG_OK);
        assert_int_equal(nt, 1);
        assert_true(times[0] == 1.0);
        assert_memory_equal(vals, plain + 2 * N, (size_t)N * sizeof *vals);
        free(plain);
        free(vals);
    }
    double t[2], v[1];
    int nt;
    assert_int_equal(dg_hji_problem_solve_slices(p, DG_HJI_MAX_TIMES, 0, NULL, &nt, t, v, NULL, &e), DG_ERR_ARG);
    const double bad[2] = {0.5, 0.25};
    assert_int_equal(dg_hji_problem_solve_slices(p, 0, 2, bad, &nt, t, v, NULL, &e), DG_ERR_ARG);
    dg_hji_problem_free(p);
}

/* V(x, tau): the slices' own values at their times, linear between, clamped outside; a field
 * linear in space and time is read exactly, its gradient too. */
static void test_slices_interp(void **state) {
    (void)state;
    dg_hji_grid g;
    dg_err e = {0};
    const double lo[2] = {-1, -1}, hi[2] = {1, 1};
    const int n[2] = {11, 11};
    assert_int_equal(dg_hji_grid_init(&g, 2, lo, hi, n, NULL, &e), DG_OK);
    double v[3 * 121], t[3] = {0, 0.5, 2};
    for (int k = 0; k < 3; k++)
        for (int64_t i = 0; i < g.nodes; i++) {
            double x[2];
            dg_hji_grid_point(&g, i, x);
            v[k * 121 + i] = x[0] + 2 * x[1] - 3 * t[k];
        }
    const dg_hji_slices V = {.nt = 3, .t = t, .v = v};
    const double x[2] = {0.33, -0.21};
    double grad[2];
    for (double tau = -1; tau <= 3; tau += 0.125) {
        const double tc = fmin(fmax(tau, 0), 2);
        assert_true(fabs(dg_hji_slices_interp(&g, &V, tau, x, grad) - (0.33 - 0.42 - 3 * tc)) < 1e-12);
        assert_true(fabs(grad[0] - 1) < 1e-12 && fabs(grad[1] - 2) < 1e-12);
    }
    const dg_hji_slices one = {.nt = 1, .t = t + 2, .v = v + 121};
    assert_true(fabs(dg_hji_slices_interp(&g, &one, 0, x, NULL) - (0.33 - 0.42 - 1.5)) < 1e-12);
}

/* The boundary layer: 0 is dg_hji_game_optimal's bang-bang; inside the layer a box input is linear
 * in the switching function (between its bounds, the centre at 0), outside it the bound; a ball
 * input stays in its ball; a layer outside [0, 1] or bad slices are refused by the simulation. */
static void test_boundary_layer(void **state) {
    (void)state;
    dg_hji_problem *p = load_config("air3d", "[11, 11, 10]");  /* box inputs: the turn rates */
    const int64_t N = p->grid.nodes;
    double *v = malloc((size_t)N * sizeof *v), t0 = 0;
    assert_non_null(v);
    const dg_hji_slices V = {.nt = 1, .t = &t0, .v = v};
    const double x[3] = {4, 3, 1.0};
    double u0[1], d0[1], u[1], d[1], ub[1], db[1], grad[3];
    for (int c = 0; c < 3; c++) {  /* fields whose gradient at x is (1, c - 1, eps_c) */
        const double gz = c == 0 ? 1e-3 : c == 1 ? -1e-3 : 5;
        for (int64_t i = 0; i < N; i++) {
            double y[3];
            dg_hji_grid_point(&p->grid, i, y);
            v[i] = y[0] + (c - 1) * y[1] + gz * y[2];
        }
        dg_hji_slices_interp(&p->grid, &V, 0, x, grad);
        dg_hji_game_optimal(&p->game, x, grad, ub, db);
        dg_hji_feedback(p, &V, 0, 0, x, u0, d0);
        assert_true(u0[0] == ub[0] && d0[0] == db[0]);
        dg_hji_feedback(p, &V, 0, 0.2, x, u, d);
        assert_true(fabs(u[0]) <= 1 && fabs(d[0]) <= 1);
        if (c < 2) {  /* the pursuer's switching function d psi' / d b = p_psi is tiny: inside the layer */
            assert_true(fabs(d[0]) < 0.5 && d[0] * db[0] > 0);
        } else {      /* far outside: the bounds */
            assert_true(d[0] == db[0]);
        }
    }
    dg_hji_sim_opts o = {.t_max = 1, .dt = 0.1, .max_steps = 100, .layer = 1.5};
    dg_hji_sim_result r;
    dg_err e = {0};
    assert_int_equal(dg_hji_simulate(p, &V, x, &o, &r, &e), DG_ERR_ARG);
    o.layer = 0.1;
    const double tb[2] = {1, 0.5};
    const dg_hji_slices W = {.nt = 2, .t = tb, .v = v};
    assert_int_equal(dg_hji_simulate(p, &W, x, &o, &r, &e), DG_ERR_ARG);
    free(v);
    dg_hji_problem_free(p);
}

static void test_capture_pursuit2d(void **state) {
    (void)state;
    check_capture(&(strat_case){"pursuit2d", "[41, 41]", 0.02, 0.1, 40});
}

static void test_capture_air3d(void **state) {
    (void)state;
    check_capture(&(strat_case){"air3d", "[51, 40, 50]", 0.1, 1, 60});
}

static void test_capture_chase4d_open(void **state) {
    (void)state;
    check_capture(&(strat_case){"chase4d_open", "[21, 21, 21, 21]", 0.002, 0.03, 100});
}

/* The value-file flows of `difgames hji solve|play|versus` as calls: dg_hji_solve_file writes what
 * dg_hji_problem_solve_slices computes (the same bits, the samples flagged), dg_hji_value_load reads
 * it back for the problem, dg_hji_play plays as dg_hji_simulate does; each refusal names its step. */
static void test_value_file_flows(void **state) {
    (void)state;
    dg_hji_problem *p = load_config("pursuit2d", "[21, 21]");
    const int64_t N = p->grid.nodes;
    dg_err e = {0};
    const double req[1] = {0.5};
    dg_hji_file_opts fo = {.slices = 4, .ntimes = 1, .times = req, .label = "p2.yaml"};
    dg_hji_file_result r;
    assert_int_equal(dg_hji_solve_plan(p, &fo, &r, &e), DG_OK);
    assert_int_equal(r.nt, 6);  /* 4 samples, 0.5 and t_end at most */
    assert_true(r.memory >= 6.0 * (double)N * sizeof(double));
    char path[] = "/tmp/dg_flow_XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(dg_hji_solve_file(p, &fo, path, &r, &e), DG_OK);
    assert_int_equal(r.step, DG_HJI_FILE_OK);
    double times[6], *vals = malloc(6 * (size_t)N * sizeof *vals);
    assert_non_null(vals);
    int nt = 0;
    assert_int_equal(dg_hji_problem_solve_slices(p, 4, 1, req, &nt, times, vals, NULL, &e), DG_OK);
    assert_int_equal(r.nt, nt);
    assert_memory_equal(r.times, times, (size_t)nt * sizeof *times);
    assert_true(r.stats.steps > 0);
    dg_hji_value_slices vs;
    dg_hji_file_step step;
    assert_int_equal(dg_hji_value_load(path, p, "p2.yaml", &vs, &step, &e), DG_OK);
    assert_int_equal(step, DG_HJI_FILE_OK);
    assert_int_equal(vs.slices.nt, nt);
    assert_ptr_equal(vs.slices.t, vs.file.times);
    assert_memory_equal(vs.slices.v, vals, (size_t)nt * (size_t)N * sizeof *vals);
    for (int i = 0; i < nt; i++) assert_int_equal(vs.file.sampled[i], times[i] != 0.5 && times[i] != 1.0);
    /* the play: dg_hji_simulate's path with the automatic step */
    const double x0[2] = {0.5, 0.3};
    const dg_hji_play_opts po = {.t_max = 2, .max_steps = 100000};
    dg_hji_sim_result a, b;
    assert_int_equal(dg_hji_play(p, &vs.slices, x0, &po, &a, &step, &e), DG_OK);
    const dg_hji_sim_opts so = {.t_max = 2, .dt = dg_hji_sim_dt(p, &vs.slices, x0, 2), .max_steps = 100000};
    assert_int_equal(dg_hji_simulate(p, &vs.slices, x0, &so, &b, &e), DG_OK);
    assert_true(a.captured && a.dt == b.dt && a.capture_time == b.capture_time && a.rows == b.rows);
    assert_true(a.value0 == b.value0);
    /* refusals, each with its step */
    const dg_hji_play_opts tiny = {.t_max = 2, .dt = 1e-6, .max_steps = 1000};
    assert_int_equal(dg_hji_play(p, &vs.slices, x0, &tiny, &a, &step, &e), DG_ERR_ARG);
    assert_int_equal(step, DG_HJI_FILE_STEPS);
    assert_true(a.dt == 1e-6);
    const dg_hji_play_opts gif = {.t_max = 2, .max_steps = 100000, .gif_path = "/nonexistent/dir/x.gif"};
    assert_int_not_equal(dg_hji_play(p, &vs.slices, x0, &gif, &a, &step, &e), DG_OK);
    assert_int_equal(step, DG_HJI_FILE_GIF);
    dg_hji_value_slices_free(&vs);
    dg_hji_value_slices_free(&vs);  /* twice is harmless */
    dg_hji_problem *q = load_config("pursuit2d", "[25, 25]");  /* another grid */
    assert_int_equal(dg_hji_value_load(path, q, "q.yaml", &vs, &step, &e), DG_ERR_ARG);
    assert_int_equal(step, DG_HJI_FILE_READ);
    assert_null(vs.v);
    assert_int_not_equal(dg_hji_value_load("/nonexistent/v.safetensors", p, "p2.yaml", &vs, &step, &e), DG_OK);
    assert_int_equal(step, DG_HJI_FILE_READ);
    dg_hji_problem_free(q);
    const double down[2] = {0.5, 0.25}, late[1] = {1.5};
    fo = (dg_hji_file_opts){.slices = 4, .ntimes = 2, .times = down};
    assert_int_equal(dg_hji_solve_plan(p, &fo, &r, &e), DG_ERR_ARG);
    assert_int_equal(r.step, DG_HJI_FILE_TIMES);
    fo = (dg_hji_file_opts){.ntimes = 1, .times = late};
    assert_int_equal(dg_hji_solve_file(p, &fo, path, &r, &e), DG_ERR_ARG);
    assert_int_equal(r.step, DG_HJI_FILE_TIMES);
    fo = (dg_hji_file_opts){.slices = DG_HJI_MAX_TIMES - 1, .ntimes = 1, .times = req};
    assert_int_equal(dg_hji_solve_plan(p, &fo, &r, &e), DG_ERR_ARG);
    assert_int_equal(r.step, DG_HJI_FILE_COUNT);
    assert_string_equal(e.msg, "1 + 63 times and t_end, more than 64");
    dg_hji_problem *t = load_config("pursuit2d_time", "[21, 21]");  /* stationary */
    fo = (dg_hji_file_opts){.ntimes = 1, .times = req, .label = "t.yaml"};
    assert_int_equal(dg_hji_solve_plan(t, &fo, &r, &e), DG_ERR_ARG);
    assert_int_equal(r.step, DG_HJI_FILE_STATIONARY);
    fo = (dg_hji_file_opts){.slices = 11};
    assert_int_equal(dg_hji_solve_plan(t, &fo, &r, &e), DG_OK);
    assert_int_equal(r.nt, 1);  /* one value, no samples */
    dg_hji_problem_free(t);
    unlink(path);
    free(vals);
    dg_hji_problem_free(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slices_solve),
        cmocka_unit_test(test_slices_interp),
        cmocka_unit_test(test_boundary_layer),
        cmocka_unit_test(test_capture_pursuit2d),
        cmocka_unit_test(test_value_file_flows),
    };
    /* the long anchors: the slow tier (tests/util/tier.h) */
    const struct CMUnitTest slow[] = {
        cmocka_unit_test(test_capture_air3d),
        cmocka_unit_test(test_capture_chase4d_open),
    };
    return dg_test_run_tiers(tests, slow, NULL, NULL);
}
