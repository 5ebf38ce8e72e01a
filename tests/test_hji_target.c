/* The problem's sets at points (dg_hji_problem_target_at, _obstacle_at, _v0_at, _stop_at): the node
 * arrays' bits at every node of small grids of each kind of problem (built-in games, the config's
 * ball and box obstacles, model files, linear games, games of degree), gradients against central
 * differences away from kinks, the analytic value between nodes (where interpolation is not), the
 * stated subgradients at kinks, and dg_hji_learn_target on top of them. */
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
#include "difgames/hji_learn.h"
#include "util/hji_load.h"

static dg_hji_problem *load_yaml(const char *yaml) {
    dg_err e;
    dg_hji_problem *p = load(yaml, &e);
    if (!p) fail_msg("%s", e.msg);
    return p;
}

/* configs/<dir>/<name>.yaml (DG_TEST_DATA is tests/data) with grid.n set to n. */
static dg_hji_problem *load_config(const char *dir, const char *name, const char *n) {
    const char *data = getenv("DG_TEST_DATA");
    char path[1024];
    snprintf(path, sizeof path, "%s/../../configs/%s/%s.yaml", data ? data : "tests/data", dir, name);
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

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* At every node of p: target_at, obstacle_at (where p keeps the field), v0_at and stop_at (where p
 * has a stop set) give the node arrays' bits. Returns how many nodes. */
static int64_t check_nodes(const dg_hji_problem *p, const char *name) {
    const dg_hji_grid *g = &p->grid;
    const int nx = g->ndim;
    const double *v0 = dg_hji_problem_v0(p);
    int64_t bad = 0;
    dg_err e = {0};
    for (int64_t j = 0; j < g->nodes; j++) {
        double x[DG_HJI_MAX_DIMS], l, o, v, s;
        dg_hji_grid_point(g, j, x);
        assert_int_equal(dg_hji_problem_target_at(p, 1, x, &l, NULL, &e), DG_OK);
        assert_int_equal(dg_hji_problem_obstacle_at(p, 1, x, &o, NULL, &e), DG_OK);
        assert_int_equal(dg_hji_problem_v0_at(p, 1, x, &v, NULL, &e), DG_OK);
        assert_int_equal(dg_hji_problem_stop_at(p, 1, x, &s, &e), DG_OK);
        int ok = same_bits(l, p->target[j]) && same_bits(v, v0[j]);
        if (p->obstacle) ok &= same_bits(o, p->obstacle[j]);
        else if (p->payoff == DG_HJI_PAYOFF_KIND) ok &= o == -INFINITY;
        if (p->stop) ok &= (s <= 0) == (p->stop[j] <= 0);
        if (!ok && bad++ < 3)
            print_message("%s node %lld: l %.17g / %.17g, v0 %.17g / %.17g, g %.17g / %.17g\n", name, (long long)j, l,
                          p->target[j], v, v0[j], o, p->obstacle ? p->obstacle[j] : NAN);
        (void)nx;
    }
    assert_int_equal(bad, 0);
    return g->nodes;
}

typedef dg_status (*point_fn)(const dg_hji_problem *, int, const double *, double *, double *, dg_err *);

/* fn's gradient at random points of p's box against central differences (step 1e-6, and 2e-6 to
 * tell a kink: a point where the two disagree is left out); at least half the points are checked. */
static void check_grad(const dg_hji_problem *p, point_fn fn, const char *name, uint64_t seed) {
    const dg_hji_grid *g = &p->grid;
    const int nx = g->ndim, N = 200;
    dg_rng rng;
    dg_rng_seed(&rng, seed);
    dg_err e = {0};
    int checked = 0;
    double worst = 0;
    for (int i = 0; i < N; i++) {
        double x[DG_HJI_MAX_DIMS], gr[DG_HJI_MAX_DIMS], v, y[DG_HJI_MAX_DIMS];
        for (int k = 0; k < nx; k++) x[k] = g->lo[k] + (g->hi[k] - g->lo[k]) * (double)dg_rng_uniform(&rng, 0, 1);
        assert_int_equal(fn(p, 1, x, &v, gr, &e), DG_OK);
        if (!isfinite(v)) continue;
        int smooth = 1;
        double err = 0;
        for (int k = 0; k < nx && smooth; k++) {
            double cd[2];
            for (int s = 0; s < 2; s++) {
                const double h = 1e-6 * (s + 1);
                double up, dn;
                memcpy(y, x, sizeof y);
                y[k] = x[k] + h;
                fn(p, 1, y, &up, NULL, &e);
                y[k] = x[k] - h;
                fn(p, 1, y, &dn, NULL, &e);
                cd[s] = (up - dn) / (2 * h);
            }
            smooth = fabs(cd[0] - cd[1]) < 1e-6;
            err = fmax(err, fabs(gr[k] - cd[0]));
        }
        if (!smooth) continue;
        checked++;
        worst = fmax(worst, err);
    }
    print_message("  %s: gradient at %d of %d points, worst |grad - central difference| %.1e\n", name, checked, N,
                  worst);
    assert_true(checked >= N / 2);
    assert_true(worst < 1e-6);
}

static void test_builtin_nodes(void **state) {
    (void)state;
    static const char *const YAML[] = {
        "game: air3d\ngrid: {n: [13, 11, 10]}\n",
        "game: pursuit2d\ngrid: {n: [21, 17]}\n",
        "game: chauffeur\ngrid: {n: [15, 15]}\n",
        "game: chase4d\ngrid: {n: [9, 7, 7, 9]}\n",
        "game: linear\ngrid: {n: [19, 23]}\n",
    };
    for (size_t i = 0; i < sizeof YAML / sizeof YAML[0]; i++) {
        dg_hji_problem *p = load_yaml(YAML[i]);
        check_nodes(p, p->name);
        check_grad(p, dg_hji_problem_target_at, p->name, 10 + i);
        dg_hji_problem_free(p);
    }
}

/* The config's obstacles: balls and boxes, over some axes, one across air3d's periodic heading. */
static void test_obstacle_nodes(void **state) {
    (void)state;
    dg_hji_problem *p = load_yaml("game: pursuit2d\ngrid: {n: [41, 37]}\nobstacles:\n"
                                  "  - {shape: box, min: [0.25, -0.25], max: [0.5, 0.25]}\n"
                                  "  - {shape: ball, center: [-1], radius: 0.3, axes: [1]}\n"
                                  "  - {shape: ball, center: [1, 1], radius: 0.4}\n"
                                  "  - {shape: box, min: [-1.5], max: [-1.2], axes: [0]}\n");
    assert_non_null(p->obstacle);
    check_nodes(p, "pursuit2d + obstacles");
    check_grad(p, dg_hji_problem_obstacle_at, "pursuit2d obstacles", 21);
    /* inside the first box, nearest its +x face: g = 0.0625, gradient the face's inward normal
     * (obstacle = -distance; the box's numbers are exact in binary) */
    double x[2] = {0.4375, 0.0}, g, gr[2];
    dg_err e = {0};
    assert_int_equal(dg_hji_problem_obstacle_at(p, 1, x, &g, gr, &e), DG_OK);
    assert_true(g == 0.0625);
    assert_true(gr[0] == -1 && gr[1] == 0);
    /* on the box's corner (0.5, 0.25): 0, the first axis's face (x) */
    x[0] = 0.5, x[1] = 0.25;
    assert_int_equal(dg_hji_problem_obstacle_at(p, 1, x, &g, gr, &e), DG_OK);
    assert_true(g == 0 && gr[0] == -1 && gr[1] == 0);
    /* the ball's centre (1, 1): its radius, gradient 0 */
    x[0] = 1, x[1] = 1;
    assert_int_equal(dg_hji_problem_obstacle_at(p, 1, x, &g, gr, &e), DG_OK);
    assert_true(fabs(g - 0.4) < 1e-15 && gr[0] == 0 && gr[1] == 0);
    dg_hji_problem_free(p);
    p = load_yaml("game: air3d\ngrid: {n: [13, 11, 12]}\nobstacles:\n"
                  "  - {shape: box, min: [5.5], max: [6.8], axes: [2]}\n"
                  "  - {shape: box, min: [8, -2, 1], max: [12, 2, 2]}\n");
    check_nodes(p, "air3d + obstacles");
    check_grad(p, dg_hji_problem_obstacle_at, "air3d obstacles", 22);
    dg_hji_problem_free(p);
}

/* Model files: expression targets and avoid sets, a periodic axis. */
static void test_model_nodes(void **state) {
    (void)state;
    dg_hji_problem *p = load_config("models", "dubins", "[15, 13, 12]");
    assert_non_null(p->obstacle);
    check_nodes(p, "dubins (model)");
    check_grad(p, dg_hji_problem_target_at, "dubins target", 31);
    check_grad(p, dg_hji_problem_obstacle_at, "dubins avoid", 32);
    /* off the box on the periodic heading: the wrapped point's value */
    double x[3] = {0.2, -0.4, 1.0}, y[3] = {0.2, -0.4, 1.0 + 2 * 3.141592653589793}, a, b;
    dg_err e = {0};
    assert_int_equal(dg_hji_problem_target_at(p, 1, x, &a, NULL, &e), DG_OK);
    assert_int_equal(dg_hji_problem_target_at(p, 1, y, &b, NULL, &e), DG_OK);
    assert_true(fabs(a - b) < 1e-12);
    dg_hji_problem_free(p);
    p = load_config("models", "air3d", "[13, 11, 10]");
    check_nodes(p, "air3d (model)");
    check_grad(p, dg_hji_problem_target_at, "air3d model target", 33);
    dg_hji_problem_free(p);
}

/* Games of degree: payoff: cost's terminal cost, payoff: time's v0 and stop set (with obstacles). */
static void test_degree_nodes(void **state) {
    (void)state;
    dg_hji_problem *p = load_config("hji", "lq_game", "[21, 19]");
    check_nodes(p, "lq_game");
    check_grad(p, dg_hji_problem_v0_at, "lq_game v0", 41);
    dg_hji_problem_free(p);
    p = load_config("hji", "lq_discounted", "[21, 19]");
    check_nodes(p, "lq_discounted");
    dg_hji_problem_free(p);
    p = load_config("hji", "zermelo_time", "[25, 21]");
    check_nodes(p, "zermelo_time");
    dg_hji_problem_free(p);
    p = load_config("hji", "chauffeur_time", "[31, 29]");
    check_nodes(p, "chauffeur_time");
    dg_hji_problem_free(p);
    p = load_yaml("game: pursuit2d\npayoff: time\nt_end: 4\ngrid: {n: [33, 31]}\nobstacles:\n"
                  "  - {shape: box, min: [0.6, -0.3], max: [0.8, 0.3]}\n");
    assert_non_null(p->stop);
    check_nodes(p, "pursuit2d time + obstacle");
    /* payoff: time's gradient inside the target: its central differences (step 1e-6 dx) */
    double x[2] = {0.05, 0.07}, v, gr[2], up, dn, y[2];
    dg_err e = {0};
    assert_int_equal(dg_hji_problem_v0_at(p, 1, x, &v, gr, &e), DG_OK);
    assert_true(v < 0);
    for (int k = 0; k < 2; k++) {
        memcpy(y, x, sizeof y);
        y[k] += 1e-5;
        dg_hji_problem_v0_at(p, 1, y, &up, NULL, &e);
        y[k] -= 2e-5;
        dg_hji_problem_v0_at(p, 1, y, &dn, NULL, &e);
        assert_true(fabs(gr[k] - (up - dn) / 2e-5) < 1e-4);
    }
    dg_hji_problem_free(p);
}

/* Between nodes: air3d's target is |(x, y)| - r exactly, where the grid's interpolation is not, and
 * dg_hji_learn_target gives the same. */
static void test_off_grid(void **state) {
    (void)state;
    dg_hji_problem *p = load_yaml("game: air3d\ngrid: {n: [27, 21, 24]}\n");
    const double R = dg_hji_problem_param(p, "capture_radius");
    enum { B = 64 };
    double x[3 * B], l[B], g[3 * B], ll[B], lg[3 * B];
    dg_rng rng;
    dg_rng_seed(&rng, 5);
    for (int b = 0; b < B; b++)
        for (int k = 0; k < 3; k++)
            x[3 * b + k] = p->grid.lo[k] + (p->grid.hi[k] - p->grid.lo[k]) * (double)dg_rng_uniform(&rng, 0, 1);
    x[0] = x[1] = 0;   /* the kink: the cylinder's axis, gradient 0 */
    dg_err e = {0};
    assert_int_equal(dg_hji_problem_target_at(p, B, x, l, g, &e), DG_OK);
    assert_int_equal(dg_hji_learn_target(p, B, x, ll, lg, &e), DG_OK);
    double worst_interp = 0;
    for (int b = 0; b < B; b++) {
        const double *xb = x + 3 * b, n = sqrt(xb[0] * xb[0] + xb[1] * xb[1]);
        assert_true(fabs(l[b] - (n - R)) < 1e-14);
        if (n > 0) {
            assert_true(fabs(g[3 * b] - xb[0] / n) < 1e-15 && fabs(g[3 * b + 1] - xb[1] / n) < 1e-15);
        } else {
            assert_true(g[3 * b] == 0 && g[3 * b + 1] == 0);
        }
        assert_true(g[3 * b + 2] == 0);
        assert_true(same_bits(ll[b], l[b]));
        for (int k = 0; k < 3; k++) assert_true(same_bits(lg[3 * b + k], g[3 * b + k]));
        worst_interp = fmax(worst_interp, fabs(dg_hji_interp(&p->grid, p->target, xb, NULL) - (n - R)));
    }
    print_message("  air3d off the nodes: interpolation's worst error %.1e, the pointwise target's < 1e-14\n",
                  worst_interp);
    assert_true(worst_interp > 1e-4);
    dg_hji_problem_free(p);
}

static void test_refusals(void **state) {
    (void)state;
    dg_hji_problem *p = load_yaml("game: pursuit2d\ngrid: {n: [11, 11]}\n");
    double x[2] = {0, 0}, v;
    dg_err e = {0};
    assert_int_equal(dg_hji_problem_target_at(NULL, 1, x, &v, NULL, &e), DG_ERR_ARG);
    assert_int_equal(dg_hji_problem_obstacle_at(p, -1, x, &v, NULL, &e), DG_ERR_ARG);
    assert_int_equal(dg_hji_problem_v0_at(p, 1, NULL, &v, NULL, &e), DG_ERR_ARG);
    assert_int_equal(dg_hji_problem_stop_at(p, 1, x, NULL, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "stop_at"));
    assert_int_equal(dg_hji_problem_target_at(p, 0, NULL, NULL, NULL, &e), DG_OK);
    dg_hji_problem hand = {0};
    assert_int_equal(dg_hji_problem_target_at(&hand, 1, x, &v, NULL, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "not loaded from a config"));
    dg_hji_problem_free(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_nodes), cmocka_unit_test(test_obstacle_nodes),
        cmocka_unit_test(test_model_nodes),   cmocka_unit_test(test_degree_nodes),
        cmocka_unit_test(test_off_grid),      cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
