/* The HJBI strategies of a finite-horizon game: from a state inside the tube of horizon T
 * (V(x0, T) < 0 by a margin, outside the target), the pursuer and the evader both following the
 * feedback of V(x, T - t) (dg_hji_simulate over the time slices of dg_hji_problem_solve_slices)
 * end in capture by T (plus one step), on the shipped configs of pursuit2d, air3d and
 * chase4d_open, the 2-D and 4-D ones on coarser grids (air3d on its own: a coarser one misplaces
 * the tube's edge by more than the margin). */
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capture_pursuit2d),
        cmocka_unit_test(test_capture_air3d),
        cmocka_unit_test(test_capture_chase4d_open),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
