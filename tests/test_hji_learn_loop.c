/* hji learn's training loop (dg_hji_learner, learn.c) on the float tape:
 *   - a small sine network trained a few hundred iterations on pursuit2d (configs/hji/pursuit2d.yaml
 *     at a coarser grid) agrees in sign with the grid solver's value at t_end on more than 95 % of
 *     the nodes more than one cell from the grid's zero set, and its loss fell;
 *   - the same seed twice gives the same weights to the bit, another seed other weights;
 *   - learn.threads: the same seed and shard count give the same bits on 1 thread and on 2, and the
 *     loss of 2 shards is the loss of 1 (to rounding) at the same weights;
 *   - a network saved and loaded (dg_hji_learn_save / dg_hji_learn_load) gives the same values;
 *   - learn.margin widens the sampled box (and the network's input scaling) on the axes that are not
 *     periodic, and a saved network keeps it;
 *   - the learn.* keys read from a config, a bad one refused; a generic-Hamiltonian game refused. */
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
#include <omp.h>

#include "difgames/difgames.h"
#include "util/hji_load.h"

/* pursuit2d at n x n nodes, t_end 1, brt */
static dg_hji_problem *pursuit(int n) {
    char yaml[256];
    snprintf(yaml, sizeof yaml, "game: pursuit2d\nmode: brt\naccuracy: medium\ngrid: {min: [-2, -2], max: [2, 2], n: [%d, %d]}\n", n, n);
    dg_err e;
    dg_hji_problem *p = load(yaml, &e);
    if (!p) fail_msg("%s", e.msg);
    return p;
}

static dg_hji_learn_opts small_opts(int iterations) {
    dg_hji_learn_opts o;
    dg_hji_learn_opts_default(&o);
    o.hidden[0] = o.hidden[1] = 64;
    o.nhidden = 2;
    o.points = 512;
    o.iterations = iterations;
    o.pretrain = 50;
    o.curriculum = iterations / 2;
    o.lr = 1e-3;
    o.seed = 3;
    return o;
}

/* The fraction of p's nodes whose learned V at t_end has the grid value's sign, leaving out the nodes
 * within one cell of the grid's zero set (a neighbour along an axis of the other sign); *kept gets
 * the nodes counted. */
static double sign_agreement(const dg_hji_learn_net *net, const dg_hji_problem *p, const double *vg, int64_t *kept,
                             double *moved) {
    const int64_t N = p->grid.nodes;
    const int nx = p->grid.ndim;
    double *x = malloc((size_t)N * nx * sizeof(double)), *tau = malloc((size_t)N * sizeof(double)),
           *v = malloc((size_t)N * sizeof(double));
    assert_non_null(x), assert_non_null(tau), assert_non_null(v);
    for (int64_t j = 0; j < N; j++) {
        dg_hji_grid_point(&p->grid, j, x + j * nx);
        tau[j] = p->t_end;
    }
    dg_err e = {0};
    if (dg_hji_learn_eval(net, p, N, x, tau, v, &e) != DG_OK) fail_msg("%s", e.msg);
    const double *l = dg_hji_problem_v0(p);
    int64_t agree = 0, n = 0, nm = 0, am = 0;   /* m: the nodes where V's sign is not l's (the tube's growth) */
    for (int64_t j = 0; j < N; j++) {
        int near = 0;
        int64_t rem = j;
        for (int k = nx - 1; k >= 0; k--) {
            const int i = (int)(rem % p->grid.n[k]);
            rem /= p->grid.n[k];
            const int64_t s = p->grid.stride[k];
            if (i > 0 && (vg[j - s] > 0) != (vg[j] > 0)) near = 1;
            if (i < p->grid.n[k] - 1 && (vg[j + s] > 0) != (vg[j] > 0)) near = 1;
        }
        if (near) continue;
        n++;
        agree += (v[j] > 0) == (vg[j] > 0);
        if ((l[j] > 0) != (vg[j] > 0)) {
            nm++;
            am += (v[j] > 0) == (vg[j] > 0);
        }
    }
    *moved = nm ? (double)am / nm : 0;
    free(x), free(tau), free(v);
    *kept = n;
    return n ? (double)agree / n : 0;
}

static void learn_pursuit(int exact, int iterations) {
    dg_hji_problem *p = pursuit(41);
    double *vg = malloc((size_t)p->grid.nodes * sizeof(double));
    dg_err e = {0};
    assert_non_null(vg);
    if (dg_hji_problem_solve(p, vg, NULL, &e) != DG_OK) fail_msg("%s", e.msg);
    dg_hji_learn_opts o = small_opts(iterations);
    o.exact = exact;
    dg_hji_learner *L = dg_hji_learner_create(p, &o, &e);
    if (!L) fail_msg("%s", e.msg);
    int64_t kept;
    double mb, ma;
    const double before = sign_agreement(dg_hji_learner_net(L), p, vg, &kept, &mb);
    double first = 0, last = 0, secs = 0;
    dg_hji_learn_metrics m;
    for (int it = 0; it < o.iterations; it++) {
        if (dg_hji_learner_step(L, &m, &e) != DG_OK) fail_msg("%s", e.msg);
        if (it == o.pretrain) first = m.loss;   /* the first residual step with tau > 0 */
        if (it >= o.iterations - 20) last += m.loss / 20;
        secs += m.seconds;
        assert_int_equal(m.iteration, it + 1);
    }
    assert_true(m.tau_max == p->t_end);
    const double after = sign_agreement(dg_hji_learner_net(L), p, vg, &kept, &ma);
    printf("  pursuit2d 41x41, 2 x 64 sine, %s boundary, %d points, %d iterations: sign agreement %.2f %% (before "
           "training %.2f %%) over %lld nodes, %.2f %% (before %.2f %%) where l's sign is not V's; loss %.3g -> %.3g; "
           "%.2f ms/iteration\n", o.exact ? "exact" : "penalised", o.points, o.iterations, 100 * after, 100 * before,
           (long long)kept, 100 * ma, 100 * mb, first, last, 1e3 * secs / o.iterations);
    /* V(., 0) = l already agrees on most nodes: the nodes the tube grew over are what was learned */
    assert_true(after > 0.95);
    assert_true(ma > 0.9);
    assert_true(last < first);
    dg_hji_learner_free(L);
    free(vg);
    dg_hji_problem_free(p);
}

static void test_learn_pursuit(void **state) {
    (void)state;
    learn_pursuit(1, 400);
}

static void test_learn_pursuit_penalised(void **state) {
    (void)state;
    learn_pursuit(0, 800);
}

/* the weights after n steps of o on p into a new buffer (p->total values) */
static dg_real *weights_after(const dg_hji_problem *p, const dg_hji_learn_opts *o, int n, size_t *total) {
    dg_err e = {0};
    dg_hji_learner *L = dg_hji_learner_create(p, o, &e);
    if (!L) fail_msg("%s", e.msg);
    for (int i = 0; i < n; i++)
        if (dg_hji_learner_step(L, NULL, &e) != DG_OK) fail_msg("%s", e.msg);
    const dg_params *w = dg_hji_learner_net(L)->params;
    *total = w->total;
    dg_real *out = malloc(w->total * sizeof(dg_real));
    assert_non_null(out);
    memcpy(out, w->data, w->total * sizeof(dg_real));
    dg_hji_learner_free(L);
    return out;
}

/* the same seed: the same bits (exact and penalised); another seed: other weights */
static void test_same_seed(void **state) {
    (void)state;
    dg_hji_problem *p = pursuit(21);
    for (int exact = 0; exact < 2; exact++) {
        dg_hji_learn_opts o = small_opts(40);
        o.exact = exact;
        o.pretrain = 5;
        size_t n1, n2, n3;
        dg_real *a = weights_after(p, &o, 30, &n1), *b = weights_after(p, &o, 30, &n2);
        o.seed = 4;
        dg_real *c = weights_after(p, &o, 30, &n3);
        assert_int_equal(n1, n2);
        assert_memory_equal(a, b, n1 * sizeof(dg_real));
        assert_memory_not_equal(a, c, n1 * sizeof(dg_real));
        free(a), free(b), free(c);
    }
    dg_hji_problem_free(p);
}

/* 2 shards: the same bits on 1 thread and 2 (omp_set_num_threads caps the shards' threads), also with
 * learn.focus (its candidates evaluated a shard a thread); the first iteration's loss (the same
 * weights, the same points) as 1 shard's to rounding */
static void test_threads(void **state) {
    (void)state;
    dg_hji_problem *p = pursuit(21);
    const int saved = omp_get_max_threads();
    for (int exact = 0; exact < 3; exact++) {
        dg_hji_learn_opts o = small_opts(40);
        o.exact = exact > 0;
        o.focus = exact == 2 ? 0.4 : 0;
        o.pretrain = 5;
        o.points = 301;   /* rows 151 and 150 */
        o.threads = 2;
        size_t n1, n2;
        omp_set_num_threads(1);
        dg_real *a = weights_after(p, &o, 30, &n1);
        omp_set_num_threads(2);
        dg_real *b = weights_after(p, &o, 30, &n2);
        assert_int_equal(n1, n2);
        assert_memory_equal(a, b, n1 * sizeof(dg_real));
        free(a), free(b);
        dg_hji_learn_metrics m1, m2;
        dg_err e = {0};
        dg_hji_learner *L2 = dg_hji_learner_create(p, &o, &e);
        o.threads = 1;
        dg_hji_learner *L1 = dg_hji_learner_create(p, &o, &e);
        assert_non_null(L1), assert_non_null(L2);
        assert_int_equal(dg_hji_learner_shards(L2), 2);
        assert_int_equal(dg_hji_learner_step(L1, &m1, &e), DG_OK);
        assert_int_equal(dg_hji_learner_step(L2, &m2, &e), DG_OK);
        assert_true(fabs(m1.loss - m2.loss) <= 1e-5 * fabs(m1.loss));
        assert_true(fabs(m1.boundary - m2.boundary) <= 1e-5 * fabs(m1.boundary) + 1e-30);
        dg_hji_learner_free(L1), dg_hji_learner_free(L2);
    }
    omp_set_num_threads(saved);
    dg_hji_problem_free(p);
}

/* saved and loaded: the same values at random points; a file of another game refused */
static void test_save_load(void **state) {
    (void)state;
    dg_hji_problem *p = pursuit(21);
    dg_hji_learn_opts o = small_opts(20);
    o.activation = DG_MLP_TANH;
    o.hidden[2] = 8;
    o.nhidden = 3;
    dg_err e = {0};
    dg_hji_learner *L = dg_hji_learner_create(p, &o, &e);
    if (!L) fail_msg("%s", e.msg);
    for (int i = 0; i < 20; i++) assert_int_equal(dg_hji_learner_step(L, NULL, &e), DG_OK);
    char path[] = "/tmp/dg_hji_learn_XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    if (dg_hji_learn_save(dg_hji_learner_net(L), path, &e) != DG_OK) fail_msg("%s", e.msg);
    dg_hji_learn_net net;
    if (dg_hji_learn_load(path, p, &net, &e) != DG_OK) fail_msg("%s", e.msg);
    assert_int_equal(net.mlp.nlayers, 4);
    assert_int_equal(net.mlp.act, DG_MLP_TANH);
    double x[2 * 50], tau[50], v1[50], v2[50];
    dg_rng rng;
    dg_rng_seed(&rng, 9);
    for (int i = 0; i < 50; i++) {
        x[2 * i] = dg_rng_uniform(&rng, -2, 2), x[2 * i + 1] = dg_rng_uniform(&rng, -2, 2);
        tau[i] = dg_rng_uniform(&rng, 0, 1);
    }
    assert_int_equal(dg_hji_learn_eval(dg_hji_learner_net(L), p, 50, x, tau, v1, &e), DG_OK);
    assert_int_equal(dg_hji_learn_eval(&net, p, 50, x, tau, v2, &e), DG_OK);
    assert_memory_equal(v1, v2, sizeof v1);
    dg_hji_learn_net_free(&net);
    dg_err le;
    dg_hji_problem *air = load("game: air3d\n", &le);
    assert_non_null(air);
    assert_int_equal(dg_hji_learn_load(path, air, &net, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "pursuit2d"));
    unlink(path);
    dg_hji_problem_free(air);
    dg_hji_learner_free(L);
    dg_hji_problem_free(p);
}

/* dg_hji_learn_eval_grad: its V is dg_hji_learn_eval's to the bit, and its V_tau and grad_x V are the
 * value's central differences (a tanh network, exact boundary: V = l + tau N, l smooth away from the
 * target's kink), to the float tape's rounding */
static void test_eval_grad(void **state) {
    (void)state;
    dg_hji_problem *p = pursuit(21);
    dg_hji_learn_opts o = small_opts(5);
    o.activation = DG_MLP_TANH;
    dg_err e = {0};
    dg_hji_learner *L = dg_hji_learner_create(p, &o, &e);
    if (!L) fail_msg("%s", e.msg);
    for (int i = 0; i < 5; i++) assert_int_equal(dg_hji_learner_step(L, NULL, &e), DG_OK);
    const dg_hji_learn_net *net = dg_hji_learner_net(L);
    enum { n = 40 };
    double x[2 * n], tau[n], v[n], v1[n], vt[n], g[2 * n];
    dg_rng rng;
    dg_rng_seed(&rng, 11);
    for (int i = 0; i < n; i++) {
        x[2 * i] = dg_rng_uniform(&rng, -1.8, 1.8), x[2 * i + 1] = dg_rng_uniform(&rng, -1.8, 1.8);
        tau[i] = dg_rng_uniform(&rng, 0.1, 0.9);
    }
    if (dg_hji_learn_eval_grad(net, p, n, x, tau, v, vt, g, &e) != DG_OK) fail_msg("%s", e.msg);
    assert_int_equal(dg_hji_learn_eval(net, p, n, x, tau, v1, &e), DG_OK);
    assert_memory_equal(v, v1, sizeof v);
    const double h = 1e-2;
    int checked = 0;
    for (int i = 0; i < n; i++) {
        if (hypot(x[2 * i], x[2 * i + 1]) < 0.6) continue;  /* pursuit2d's target: a disc; l kinks at 0 only */
        for (int k = 0; k <= 2; k++) {
            double xp[2] = {x[2 * i], x[2 * i + 1]}, xm[2] = {x[2 * i], x[2 * i + 1]}, tp = tau[i], tm = tau[i];
            if (k < 2) xp[k] += h, xm[k] -= h;
            else tp += h, tm -= h;
            double vp, vm;
            assert_int_equal(dg_hji_learn_eval(net, p, 1, xp, &tp, &vp, &e), DG_OK);
            assert_int_equal(dg_hji_learn_eval(net, p, 1, xm, &tm, &vm, &e), DG_OK);
            const double fd = (vp - vm) / (2 * h), an = k < 2 ? g[2 * i + k] : vt[i];
            if (fabs(fd - an) > 2e-3 * (1 + fabs(fd))) fail_msg("point %d, axis %d: fd %g, tape %g", i, k, fd, an);
        }
        checked++;
    }
    assert_true(checked > n / 2);
    /* outputs may be NULL one by one */
    assert_int_equal(dg_hji_learn_eval_grad(net, p, n, x, tau, NULL, NULL, g, &e), DG_OK);
    dg_hji_learner_free(L);
    dg_hji_problem_free(p);
}

/* learn.schedule: constant keeps lr; cosine keeps it through pretraining and the curriculum, then follows
 * half a cosine to 0: values at chosen steps computed by hand */
static void test_schedule(void **state) {
    (void)state;
    dg_hji_learn_opts o = small_opts(100);   /* pretrain 50, curriculum 50: nothing after the curriculum */
    o.lr = 1e-3;
    o.schedule = 1;
    assert_true(dg_hji_learn_lr(&o, 99) == 1e-3);
    o.iterations = 300, o.pretrain = 20, o.curriculum = 80;   /* 200 steps of cosine from step 100 */
    assert_true(dg_hji_learn_lr(&o, 0) == 1e-3 && dg_hji_learn_lr(&o, 99) == 1e-3 && dg_hji_learn_lr(&o, 100) == 1e-3);
    assert_true(fabs(dg_hji_learn_lr(&o, 200) - 0.5e-3) < 1e-15);                   /* halfway: cos(pi/2) = 0 */
    assert_true(fabs(dg_hji_learn_lr(&o, 150) - 1e-3 * (2 + sqrt(2)) / 4) < 1e-15);  /* a quarter: cos(pi/4) */
    assert_true(dg_hji_learn_lr(&o, 299) > 0 && dg_hji_learn_lr(&o, 299) < 1e-3 * 1e-4);
    assert_true(dg_hji_learn_lr(&o, 300) == 0);
    o.schedule = 0;
    assert_true(dg_hji_learn_lr(&o, 200) == 1e-3 && dg_hji_learn_lr(&o, 299) == 1e-3);
}

/* the learn.* keys from a config; out of range and unknown values refused, naming the key */
/* learn.focus: after a short training, the focused rows (the last focus x points of a step) sit nearer
 * the learned zero set than the uniform ones: each the least |V| of four candidates, their mean |V|
 * under half the uniform rows' and their largest |V| under the uniform rows' median */
static void test_focus(void **state) {
    (void)state;
    dg_hji_problem *p = pursuit(21);
    dg_hji_learn_opts o = small_opts(60);
    o.focus = 0.5;
    o.points = 400;
    dg_err e = {0};
    dg_hji_learner *L = dg_hji_learner_create(p, &o, &e);
    if (!L) fail_msg("%s", e.msg);
    for (int i = 0; i < 60; i++) assert_int_equal(dg_hji_learner_step(L, NULL, &e), DG_OK);
    const double *x;
    const dg_real *tr;
    const int B = dg_hji_learner_points(L, &x, &tr), F = 200;
    assert_int_equal(B, 400);
    double tau[400], v[400], a[200];
    for (int i = 0; i < B; i++) tau[i] = tr[i];
    assert_int_equal(dg_hji_learn_eval(dg_hji_learner_net(L), p, B, x, tau, v, &e), DG_OK);
    double mu = 0, mf = 0, fmax = 0;
    for (int i = 0; i < B - F; i++) mu += fabs(v[i]) / (B - F), a[i] = fabs(v[i]);
    for (int i = B - F; i < B; i++) mf += fabs(v[i]) / F, fmax = fmax > fabs(v[i]) ? fmax : fabs(v[i]);
    int below = 0;   /* uniform rows with |V| under the focused rows' largest */
    for (int i = 0; i < B - F; i++) below += a[i] < fmax;
    print_message("focus: mean |V| %.4g focused, %.4g uniform; %d of %d uniform rows below the focused maximum\n", mf,
                  mu, below, B - F);
    assert_true(mf < 0.5 * mu);
    assert_true(below < (B - F) / 2);
    dg_hji_learner_free(L);
    dg_hji_problem_free(p);
}

/* learn.margin: the network's input box is the grid box widened by margin x its width on each side
 * of x and y, psi (periodic) left as it is; it survives a save and load; a margin out of [0, 4] is
 * refused. */
static void test_margin(void **state) {
    (void)state;
    dg_err e = {0};
    dg_hji_problem *p = load("game: air3d\nt_end: 0.5\ngrid: {n: [11, 11, 10]}\n", &e);
    if (!p) fail_msg("%s", e.msg);
    dg_hji_learn_opts o = small_opts(2);
    o.points = 64;
    o.pretrain = 0;
    o.margin = 0.5;
    dg_hji_learner *L = dg_hji_learner_create(p, &o, &e);
    if (!L) fail_msg("%s", e.msg);
    const dg_hji_learn_net *net = dg_hji_learner_net(L);
    for (int k = 0; k < 3; k++) {
        const double w = p->grid.hi[k] - p->grid.lo[k];
        assert_true(fabs(net->mid[k] - 0.5 * (p->grid.lo[k] + p->grid.hi[k])) < 1e-12);
        assert_true(fabs(net->half[k] - (k < 2 ? w : 0.5 * w)) < 1e-12);
    }
    dg_hji_learn_metrics m;
    assert_int_equal(dg_hji_learner_step(L, &m, &e), DG_OK);
    assert_true(isfinite(m.loss));
    char path[] = "/tmp/dg_hji_margin_XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    if (dg_hji_learn_save(net, path, &e) != DG_OK) fail_msg("%s", e.msg);
    dg_hji_learn_net back;
    if (dg_hji_learn_load(path, p, &back, &e) != DG_OK) fail_msg("%s", e.msg);
    assert_memory_equal(back.mid, net->mid, sizeof back.mid);
    assert_memory_equal(back.half, net->half, sizeof back.half);
    dg_hji_learn_net_free(&back);
    unlink(path);
    dg_hji_learner_free(L);
    o.margin = -0.1;   /* out of bounds: refused */
    assert_null(dg_hji_learner_create(p, &o, &e));
    assert_non_null(strstr(e.msg, "margin"));
    dg_hji_problem_free(p);
}

static void test_keys(void **state) {
    (void)state;
    const char *yaml = "learn: {hidden: [32, 16], activation: tanh, points: 100, boundary: penalty, seed: 7, schedule: cosine, "
                       "margin: 0.25, focus: 0.5}\n";
    dg_err e = {0};
    dg_cfg *c = dg_cfg_parse(yaml, strlen(yaml), "l.yaml", &e);
    assert_non_null(c);
    dg_hji_learn_opts o;
    assert_int_equal(dg_hji_learn_opts_read(c, &o, &e), DG_OK);
    assert_int_equal(o.nhidden, 2);
    assert_int_equal(o.hidden[1], 16);
    assert_int_equal(o.activation, DG_MLP_TANH);
    assert_int_equal(o.points, 100);
    assert_int_equal(o.exact, 0);
    assert_int_equal((int)o.seed, 7);
    assert_int_equal(o.schedule, 1);
    assert_true(o.margin == 0.25);
    assert_true(o.focus == 0.5);
    dg_cfg_free(c);
    const char *bad[] = {"learn: {points: 0}\n", "learn: {activation: relu}\n", "learn: {hidden: []}\n",
                         "learn: {schedule: linear}\n", "learn: {margin: 5}\n", "learn: {focus: 1}\n"};
    const char *key[] = {"learn.points", "learn.activation", "learn.hidden", "learn.schedule", "learn.margin",
                         "learn.focus"};
    for (int i = 0; i < 6; i++) {
        c = dg_cfg_parse(bad[i], strlen(bad[i]), "l.yaml", &e);
        assert_non_null(c);
        assert_int_not_equal(dg_hji_learn_opts_read(c, &o, &e), DG_OK);
        if (!strstr(e.msg, key[i])) fail_msg("%s: %s", key[i], e.msg);
        dg_cfg_free(c);
    }
}

static void ham_generic(void *user, double t, int n, const double *x, const double *p, double *h) {
    (void)user, (void)t, (void)x;
    for (int i = 0; i < n; i++) h[i] = fabs(p[i]);
}

/* a game with a generic Hamiltonian has no tape form: refused, naming it (no config makes one: the
 * problems' games all have dynamics) */
static void test_refused(void **state) {
    (void)state;
    dg_hji_problem *p = pursuit(21);
    const dg_hji_game keep = p->game;
    p->game.dyn = NULL;   /* as a game given by its Hamiltonian alone */
    p->game.ham = ham_generic;
    dg_hji_learn_opts o = small_opts(10);
    dg_err e = {0};
    assert_null(dg_hji_learner_create(p, &o, &e));
    assert_int_equal(e.status, DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "pursuit2d"));
    p->game = keep;
    dg_hji_problem_free(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_learn_pursuit),
        cmocka_unit_test(test_learn_pursuit_penalised),
        cmocka_unit_test(test_same_seed),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_save_load),
        cmocka_unit_test(test_eval_grad),
        cmocka_unit_test(test_schedule),
        cmocka_unit_test(test_focus),
        cmocka_unit_test(test_margin),
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
