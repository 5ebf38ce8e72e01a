/* Value sources (hji_sim.h): what the strategies read. The grid's slices as a source play the bits
 * dg_hji_simulate plays; each player may read a value of its own (u one source, d another, each
 * player's input that of its own value's gradient); a batch of plays in lockstep evaluates each
 * source once a step and captures where and when single plays do; a learned network is a source
 * (dg_hji_learn_source) whose values and gradients are dg_hji_learn_eval_grad's; a source's error
 * stops a play with nothing written. */
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
#include "difgames/hji_learn.h"

/* A problem from yaml text, one thread. */
static dg_hji_problem *load_yaml(const char *yaml) {
    dg_err e = {0};
    dg_cfg *c = dg_cfg_parse(yaml, strlen(yaml), "test.yaml", &e);
    if (!c) fail_msg("%s", e.msg);
    dg_hji_problem *p = dg_cfg_set(c, "solver.threads", "1", &e) == DG_OK ? dg_hji_problem_load(c, &e) : NULL;
    dg_cfg_free(c);
    if (!p) fail_msg("%s", e.msg);
    return p;
}

static const char P2[] = "game: pursuit2d\nt_end: 0.5\naccuracy: medium\ngrid: {min: [-2, -2], max: [2, 2], n: [41, 41]}\n";
static const char AIR[] = "game: air3d\nt_end: 1.0\naccuracy: low\ngrid: {n: [21, 21, 20]}\n";

/* A game solved into 6 slices: its problem, values and times, and the slices as a source. Set up
 * in place (src points into V) by solved_init, freed by solved_free. */
typedef struct solved {
    dg_hji_problem *p;
    double         *vals, times[12];
    dg_hji_slices   V;
    dg_hji_source   src;
} solved;
static void solved_init(solved *s, const char *yaml) {
    s->p = load_yaml(yaml);
    s->vals = malloc((size_t)12 * (size_t)s->p->grid.nodes * sizeof *s->vals);
    assert_non_null(s->vals);
    int nt = 0;
    dg_err e = {0};
    if (dg_hji_problem_solve_slices(s->p, 5, 0, NULL, &nt, s->times, s->vals, NULL, &e) != DG_OK) fail_msg("%s", e.msg);
    s->V = (dg_hji_slices){.nt = nt, .t = s->times, .v = s->vals};
    s->src = dg_hji_source_slices(&s->p->grid, &s->V);
}
static void solved_free(solved *s) {
    free(s->vals);
    dg_hji_problem_free(s->p);
}

/* A source that counts its evaluations and hands them to another (inner), or fails (fail). */
typedef struct counted {
    const dg_hji_source *inner;
    int calls;
    int64_t points;
    int fail;
} counted;
static dg_status counted_eval(const dg_hji_source *s, int64_t B, const double *x, const double *tau, double *V,
                              double *grad, dg_err *e) {
    counted *c = (counted *)s->user;
    c->calls++;
    c->points += B;
    if (c->fail) return dg_err_set(e, DG_ERR_ARG, "counted: refused");
    return dg_hji_source_eval(c->inner, B, x, tau, V, grad, e);
}
static dg_hji_source counted_source(counted *c) {
    return (dg_hji_source){.eval = counted_eval, .horizon = c->inner->horizon, .user = c};
}

/* A CSV file's bytes (malloc'd), its length in *n. */
static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *b = malloc(1 << 22);
    assert_non_null(b);
    *n = fread(b, 1, 1 << 22, f);
    fclose(f);
    return b;
}

/* The slices as a source, and a caller's source handing its points to them (one source for both
 * players, or the same value as two sources, each player reading its own), play dg_hji_simulate's
 * CSV byte for byte, bang-bang and with a boundary layer, on pursuit2d and air3d. */
static void test_slices_source_same_bits(void **state) {
    (void)state;
    const char *yamls[2] = {P2, AIR};
    const double starts[2][3] = {{0.9, -0.7, 0}, {7, 2, 2.5}};
    for (int g = 0; g < 2; g++) {
        solved S;
        solved_init(&S, yamls[g]);
        const dg_hji_problem *p = S.p;
        const dg_hji_slices V = S.V;
        const dg_hji_source src = S.src;
        counted cu = {.inner = &src}, cd = {.inner = &src};
        const dg_hji_source su = counted_source(&cu), sd = counted_source(&cd);
        for (int layer = 0; layer < 2; layer++) {
            char a[64], b[64], c[64];
            snprintf(a, sizeof a, "/tmp/dg_src_%d_a.csv", (int)getpid());
            snprintf(b, sizeof b, "/tmp/dg_src_%d_b.csv", (int)getpid());
            snprintf(c, sizeof c, "/tmp/dg_src_%d_c.csv", (int)getpid());
            dg_hji_sim_opts o = {.t_max = 1.5, .max_steps = 100000, .layer = layer ? 0.3 : 0, .csv_path = a};
            dg_hji_sim_result r0, r1, r2;
            dg_err e = {0};
            assert_int_equal(dg_hji_simulate(p, &V, starts[g], &o, &r0, &e), DG_OK);
            o.csv_path = b;
            assert_int_equal(dg_hji_simulate_sources(p, &su, NULL, starts[g], &o, &r1, &e), DG_OK);
            o.csv_path = c;
            cd.calls = 0;
            assert_int_equal(dg_hji_simulate_sources(p, &su, &sd, starts[g], &o, &r2, &e), DG_OK);
            assert_true(cd.calls > 0);  /* d read its own source */
            assert_memory_equal(&r0, &r1, sizeof r0);
            assert_memory_equal(&r0, &r2, sizeof r0);
            size_t na, nb, nc;
            char *ta = slurp(a, &na), *tb = slurp(b, &nb), *tc = slurp(c, &nc);
            if (!(na > 100 && na == nb && na == nc)) fail_msg("%d %d: %zu %zu %zu", g, layer, na, nb, nc);
            assert_memory_equal(ta, tb, na);
            assert_memory_equal(ta, tc, na);
            free(ta), free(tb), free(tc);
            unlink(a), unlink(b), unlink(c);
        }
        solved_free(&S);
    }
}

/* u from one value and d from another: each player's input is dg_hji_feedback's of its own value,
 * bang-bang and with a layer; V is u's. */
static void test_two_values(void **state) {
    (void)state;
    dg_hji_problem *p = load_yaml(AIR);
    const int64_t N = p->grid.nodes;
    double *v = malloc((size_t)N * sizeof *v), *w = malloc((size_t)N * sizeof *w), t0 = 0.7;
    assert_true(v && w);
    for (int64_t i = 0; i < N; i++) {  /* two fields of other gradients */
        double y[3];
        dg_hji_grid_point(&p->grid, i, y);
        v[i] = y[0] - 0.5 * y[1] + 0.3 * y[2];
        w[i] = -0.2 * y[0] + y[1] - 2 * y[2];
    }
    const dg_hji_slices V = {.nt = 1, .t = &t0, .v = v}, W = {.nt = 1, .t = &t0, .v = w};
    const dg_hji_source sv = dg_hji_source_slices(&p->grid, &V), sw = dg_hji_source_slices(&p->grid, &W);
    const double x[2][3] = {{4, 3, 1.0}, {-2, 1, 2.5}};
    for (int layer = 0; layer < 2; layer++) {
        double u[2], d[2], val[2];
        dg_err e = {0};
        assert_int_equal(dg_hji_feedback_batch(p, &sv, &sw, 0.2, layer * 0.5, 2, &x[0][0], u, d, val, &e), DG_OK);
        for (int i = 0; i < 2; i++) {
            double uv, dv, uw, dw;
            const double vv = dg_hji_feedback(p, &V, 0.5, layer * 0.5, x[i], &uv, &dv);
            dg_hji_feedback(p, &W, 0.5, layer * 0.5, x[i], &uw, &dw);
            assert_true(u[i] == uv && d[i] == dw && val[i] == vv);
            assert_true(uv != uw || dv != dw);  /* the two values do disagree somewhere */
        }
    }
    free(v), free(w);
    dg_hji_problem_free(p);
}

/* A batch in lockstep: one evaluation of each source a step for every live play, and each play's
 * capture time and least l(x) those of a single play with the same step. */
static void test_batch(void **state) {
    (void)state;
    solved S;
    solved_init(&S, P2);
    const dg_hji_problem *p = S.p;
    const dg_hji_slices V = S.V;
    const dg_hji_source src = S.src;
    counted c = {.inner = &src};
    const dg_hji_source sc = counted_source(&c);
    enum { B = 40 };
    double x0[2 * B], ct[B], mt[B];
    dg_rng rng;
    dg_rng_seed(&rng, 5);
    for (int i = 0; i < 2 * B; i++) x0[i] = dg_rng_uniform(&rng, -1.8f, 1.8f);
    const dg_hji_sim_opts o = {.t_max = 1.0, .dt = 0.01, .max_steps = 1000};
    dg_err e = {0};
    assert_int_equal(dg_hji_simulate_batch(p, &sc, NULL, B, x0, &o, ct, mt, &e), DG_OK);
    assert_true(c.calls <= 100 && c.calls >= 1);  /* one a step at most: 100 steps */
    int captured = 0, escaped = 0;
    for (int i = 0; i < B; i++) {
        dg_hji_sim_result r;
        assert_int_equal(dg_hji_simulate(p, &V, x0 + 2 * i, &o, &r, &e), DG_OK);
        assert_true(r.captured ? ct[i] == r.capture_time : ct[i] == -1);
        captured += r.captured, escaped += !r.captured;
        assert_true(r.captured ? mt[i] <= 0 : mt[i] > 0);
    }
    assert_true(captured > 0 && escaped > 0);
    /* a game with a running cost is refused, as are bad options */
    dg_hji_sim_opts bad = o;
    bad.t_max = 0;
    assert_int_equal(dg_hji_simulate_batch(p, &sc, NULL, B, x0, &bad, ct, mt, &e), DG_ERR_ARG);
    bad = o;
    bad.max_steps = 10;
    assert_int_equal(dg_hji_simulate_batch(p, &sc, NULL, B, x0, &bad, ct, mt, &e), DG_ERR_ARG);
    solved_free(&S);
}

/* A source's error stops a play: nothing written, the error returned. */
static void test_source_error(void **state) {
    (void)state;
    solved S;
    solved_init(&S, P2);
    const dg_hji_problem *p = S.p;
    const dg_hji_source src = S.src;
    counted c = {.inner = &src, .fail = 1};
    const dg_hji_source sc = counted_source(&c);
    char path[64];
    snprintf(path, sizeof path, "/tmp/dg_src_%d_err.csv", (int)getpid());
    unlink(path);
    const double x0[2] = {0.5, 0.3};
    dg_hji_sim_opts o = {.t_max = 1, .dt = 0.01, .max_steps = 1000, .csv_path = path};
    dg_hji_sim_result r;
    dg_err e = {0};
    assert_int_equal(dg_hji_simulate_sources(p, &src, &sc, x0, &o, &r, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "counted: refused"));
    assert_int_equal(access(path, F_OK), -1);
    o.dt = 0;  /* the automatic step reads it too */
    assert_int_equal(dg_hji_simulate_sources(p, &sc, NULL, x0, &o, &r, &e), DG_ERR_ARG);
    const dg_hji_source none = {0};
    assert_int_equal(dg_hji_simulate_sources(p, &none, NULL, x0, &o, &r, &e), DG_ERR_ARG);
    solved_free(&S);
}

/* A network as a source: its values and gradients are dg_hji_learn_eval_grad's, its horizon t_end,
 * and a play reads it (its value column V(x, T - t) the network's). */
static void test_learn_source(void **state) {
    (void)state;
    dg_hji_problem *p = load_yaml(P2);
    dg_hji_learn_opts lo;
    dg_hji_learn_opts_default(&lo);
    lo.nhidden = 2, lo.hidden[0] = lo.hidden[1] = 16;
    dg_hji_learn_net net;
    dg_err e = {0};
    assert_int_equal(dg_hji_learn_net_init(&net, p, &lo, &e), DG_OK);
    dg_hji_source s;
    assert_int_equal(dg_hji_learn_source(&net, p, &s, &e), DG_OK);
    assert_true(s.horizon == p->t_end);
    const double x[6] = {0.5, 0.3, -1, 1.2, 1.5, -0.4}, tau[3] = {0.5, 0.1, 0};
    double V[3], G[6], V2[3], G2[6], V3[3];
    assert_int_equal(dg_hji_source_eval(&s, 3, x, tau, V, G, &e), DG_OK);
    assert_int_equal(dg_hji_learn_eval_grad(&net, p, 3, x, tau, V2, NULL, G2, &e), DG_OK);
    assert_memory_equal(V, V2, sizeof V);
    assert_memory_equal(G, G2, sizeof G);
    assert_int_equal(dg_hji_source_eval(&s, 3, x, tau, V3, NULL, &e), DG_OK);  /* V alone */
    for (int i = 0; i < 3; i++) assert_true(fabs(V3[i] - V[i]) <= 1e-6 * fmax(1, fabs(V[i])));
    dg_hji_sim_opts o = {.t_max = 0.5, .dt = 0.05, .max_steps = 100};
    dg_hji_sim_result r;
    assert_int_equal(dg_hji_simulate_sources(p, &s, NULL, x, &o, &r, &e), DG_OK);
    assert_true(r.value0 == V[0]);
    dg_hji_learn_net_free(&net);
    dg_hji_problem_free(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slices_source_same_bits),
        cmocka_unit_test(test_two_values),
        cmocka_unit_test(test_batch),
        cmocka_unit_test(test_source_error),
        cmocka_unit_test(test_learn_source),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
