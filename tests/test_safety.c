/* The safety filter (include/difgames/safety.h, docs/safety.md) on a small game whose answers are
 * known: a point mass x' = u + push w in the plane (u the learned player's box [-1, 1]^2, w a wind
 * declared adversarial) around a disk, and the disk's avoid value solved on a 2-D grid.
 * - switch: where V <= margin the value's optimal action (bang-bang, away from the disk), elsewhere
 *   the policy's untouched; its Jacobian 0 and the identity there;
 * - qp: the filtered action meets grad V . (u + push d*) >= -gamma V and is the nearest such point
 *   of the box (against a search over a fine grid of the box), the policy's action where it already
 *   meets it;
 * - the filter's op on the tape: the gradient in the action against central differences of the
 *   filter, where the filter is smooth (the active set the same on both sides);
 * - dg_safety_eval: a player that drives into the disk enters it in every episode without the filter,
 *   in none with it (switch and qp), under the value's worst-case wind, interventions counted;
 * - refusals: safety.train without a value, a value whose axes are not the game's states;
 * - a network of hji learn as the value: its own values, the batch op equal to the rows, its config needed;
 * - qp's gradient in the state against central differences on a half-plane's value (grad V constant);
 * - the penalty on interventions (safety.penalty): its gradient in the action through the op, and in an
 *   episode a term of its own after the game's, the same loss on the whole, checkpointed and truncated
 *   paths, and (test_safety64, the double tape) the parameters' gradient against central differences. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "difgames/difgames.h"
#include "difgames/hji.h"
#include "difgames/hji_learn.h"
#include "util/tmpdir.h"

#define PUSH 0.5
#define RADIUS 0.3
/* the learned game: the mass, its goal and the wind */
static const char GAME[] =
    "game: model\n"
    "model:\n"
    "  name: disk\n"
    "  compile: false\n"
    "  constants: {push: 0.5}\n"
    "  state: {x: [-1, 1], y: [-1, 1]}\n"
    "  episode: {name: goal, vars: [gx, gy]}\n"
    "  inputs:\n"
    "    u: {dim: 2, lo: -1, hi: 1, role: min}\n"
    "    w: {dim: 2, lo: -1, hi: 1, role: max, learned: false, play: adversarial}\n"
    "  dynamics: {x: u1 + push*w1, y: u2 + push*w2}\n"
    "  observe: [x, y, gx, gy]\n"
    "  costs: {goal: (x - gx)^2 + (y - gy)^2}\n"
    "  reset:\n"
    "    - {x: [-0.9, -0.7], y: [-0.1, 0.1], gx: [0.7, 0.9], gy: [-0.1, 0.1]}\n"
    "env: {dt: 0.02, horizon: 50}\n"
    "policy: {hidden: [4]}\n";
/* its avoid value: the mass maximises the distance, the wind minimises it. A, B: the state's names */
#define VALUE(A, B)                                                                                   \
    "game: model\n"                                                                                   \
    "model:\n"                                                                                        \
    "  name: disk_avoid\n"                                                                            \
    "  compile: false\n"                                                                              \
    "  constants: {push: 0.5}\n"                                                                      \
    "  state: {" A ": [-1, 1], " B ": [-1, 1]}\n"                                                      \
    "  inputs:\n"                                                                                     \
    "    u: {dim: 2, lo: -1, hi: 1, role: max}\n"                                                     \
    "    w: {dim: 2, lo: -1, hi: 1, role: min}\n"                                                     \
    "  dynamics: {" A ": u1 + push*w1, " B ": u2 + push*w2}\n"                                       \
    "  target: sqrt(" A "^2 + " B "^2) - 0.3\n"                                                             \
    "t_end: 0.5\n"                                                                                    \
    "mode: brt\n"                                                                                     \
    "grid: {n: [61, 61]}\n"

static char dir[64], vpath[128];
static dg_env *env;
static dg_cfg *gcfg;
static dg_safety_value *val;

/* solves yaml's value into path, its config stored */
static void solve_to(const char *yaml, const char *path) {
    dg_err e = {0};
    dg_cfg *c = dg_cfg_parse(yaml, strlen(yaml), "v.yaml", &e);
    if (!c) fail_msg("value config: %s", e.msg);
    dg_hji_problem *p = dg_hji_problem_load(c, &e);
    if (!p) fail_msg("problem: %s", e.msg);
    double *v = malloc((size_t)p->grid.nodes * sizeof *v);
    if (dg_hji_problem_solve(p, v, NULL, &e) != DG_OK) fail_msg("solve: %s", e.msg);
    if (dg_hji_value_write(path, p, 1, &p->t_end, NULL, v, 0, yaml, &e) != DG_OK) fail_msg("write: %s", e.msg);
    free(v);
    dg_hji_problem_free(p);
    dg_cfg_free(c);
}

static int setup(void **state) {
    (void)state;
    if (check_tmpdir(dir, "dg_safety_")) return -1;
    snprintf(vpath, sizeof vpath, "%s/v.safetensors", dir);
    solve_to(VALUE("x", "y"), vpath);
    dg_err e = {0};
    if (!(gcfg = dg_cfg_parse(GAME, strlen(GAME), "g.yaml", &e)) || !(env = dg_env_create(gcfg, &e))) {
        fprintf(stderr, "game: %s\n", e.msg);
        return -1;
    }
    if (dg_safety_value_open(env, vpath, NULL, &val, &e) != DG_OK) {
        fprintf(stderr, "value: %s\n", e.msg);
        return -1;
    }
    return 0;
}

static int teardown(void **state) {
    (void)state;
    dg_safety_value_free(val);
    dg_env_free(env);
    dg_cfg_free(gcfg);
    return check_rmdir(dir);
}

static dg_safety_opts opts(int mode) {
    return (dg_safety_opts){.mode = mode, .margin = 0.1, .gamma = 2.0};
}

/* a reproducible number in [lo, hi) */
static double draw(unsigned *s, double lo, double hi) {
    *s = *s * 1103515245u + 12345u;
    return lo + (hi - lo) * ((*s >> 8) & 0xffffff) / 16777216.0;
}

static void test_switch(void **state) {
    (void)state;
    dg_safety s;
    const dg_safety_opts o = opts(DG_SAFETY_SWITCH);
    dg_safety_init(&s, env, val, NULL, &o);
    unsigned seed = 1;
    int near = 0, far = 0;
    for (int i = 0; i < 400; i++) {
        const double x[2] = {draw(&seed, -0.8, 0.8), draw(&seed, -0.8, 0.8)}, a[2] = {draw(&seed, -1, 1), draw(&seed, -1, 1)};
        double out[2], J[4], g[2], u[2];
        const double V = dg_safety_value_at(val, x, g, u, NULL);
        const int moved = dg_safety_filter_row(&s, x, a, out, J);
        if (V <= o.margin) {
            near++;
            assert_int_equal(moved, 1);
            for (int j = 0; j < 2; j++) {
                assert_true(out[j] == u[j]);  /* the box is [-1, 1]: the action is u* */
                /* away from the disk: u* takes the sign of grad V where it is not 0 */
                if (fabs(g[j]) > 1e-9) assert_true(out[j] == (g[j] > 0 ? 1.0 : -1.0));
            }
            for (int k = 0; k < 4; k++) assert_true(J[k] == 0);
        } else {
            far++;
            assert_int_equal(moved, 0);
            assert_true(out[0] == a[0] && out[1] == a[1]);
            assert_true(J[0] == 1 && J[1] == 0 && J[2] == 0 && J[3] == 1);
        }
    }
    assert_true(near > 20 && far > 20);
}

static void test_qp_nearest(void **state) {
    (void)state;
    dg_safety s;
    const dg_safety_opts o = opts(DG_SAFETY_QP);
    dg_safety_init(&s, env, val, NULL, &o);
    unsigned seed = 7;
    int moved_n = 0, kept = 0;
    for (int i = 0; i < 300; i++) {
        const double x[2] = {draw(&seed, -0.6, 0.6), draw(&seed, -0.6, 0.6)};
        /* an action toward the disk half of the time: the constraint active */
        double a[2] = {draw(&seed, -1, 1), draw(&seed, -1, 1)};
        if (i % 2) a[0] = -0.9 * (x[0] > 0 ? 1 : -1), a[1] = -0.9 * (x[1] > 0 ? 1 : -1);
        double out[2], g[2], d[2];
        const double V = dg_safety_value_at(val, x, g, NULL, d);
        /* the game's own terms: grad V . (u + push d) >= -gamma V, u the action */
        const double c = -o.gamma * V - PUSH * (g[0] * d[0] + g[1] * d[1]);
        const int moved = dg_safety_filter_row(&s, x, a, out, NULL);
        const double have = g[0] * a[0] + g[1] * a[1], got = g[0] * out[0] + g[1] * out[1];
        if (have >= c) {
            kept++;
            assert_int_equal(moved, 0);
            assert_true(out[0] == a[0] && out[1] == a[1]);
            continue;
        }
        moved_n++;
        assert_int_equal(moved, 1);
        assert_true(fabs(out[0]) <= 1 && fabs(out[1]) <= 1);
        const double best = fabs(g[0]) + fabs(g[1]);  /* the most g.u over the box */
        if (best < c) {  /* nothing meets it: the box's maximiser of g.u */
            assert_true(fabs(got - best) < 1e-12);
            continue;
        }
        assert_true(got >= c - 1e-9);
        /* the nearest feasible point of a 401 x 401 grid of the box is no nearer than out (to the grid's
         * spacing) */
        const double dist = hypot(out[0] - a[0], out[1] - a[1]);
        double nearest = INFINITY;
        for (int p = 0; p <= 400; p++)
            for (int q = 0; q <= 400; q++) {
                const double b0 = -1 + p / 200.0, b1 = -1 + q / 200.0;
                if (g[0] * b0 + g[1] * b1 >= c) {
                    const double dd = hypot(b0 - a[0], b1 - a[1]);
                    if (dd < nearest) nearest = dd;
                }
            }
        if (!(dist <= nearest + 0.0075)) fail_msg("x (%g, %g) a (%g, %g): out at %g, a grid point at %g", x[0], x[1], a[0], a[1], dist, nearest);
    }
    assert_true(moved_n > 30 && kept > 30);
}

/* the filter's op: d sum(W out) / d action against central differences of dg_safety_filter_row */
static void check_grad_pen(int mode, double pen);
static void check_grad(int mode) { check_grad_pen(mode, 0); }

/* pen > 0: the loss adds pen |out - action|^2 (the trainer's penalty on the filter's interventions,
 * dg_policy.filter_penalty), its gradient through the op's Jacobian and directly */
static void check_grad_pen(int mode, double pen) {
    dg_safety s;
    const dg_safety_opts o = opts(mode);
    dg_safety_init(&s, env, val, NULL, &o);
    enum { B = 200 };
    dg_real xs[B * 4], as[B * 2], W[B * 2];
    unsigned seed = 11 + mode;
    for (int b = 0; b < B; b++) {
        xs[b * 4] = (dg_real)draw(&seed, -0.6, 0.6), xs[b * 4 + 1] = (dg_real)draw(&seed, -0.6, 0.6);
        xs[b * 4 + 2] = xs[b * 4 + 3] = 0;
        as[b * 2] = (dg_real)draw(&seed, -0.95, 0.95), as[b * 2 + 1] = (dg_real)draw(&seed, -0.95, 0.95);
        W[b * 2] = (dg_real)draw(&seed, -1, 1), W[b * 2 + 1] = (dg_real)draw(&seed, -1, 1);
    }
    dg_ctx *ctx = dg_ctx_create(1 << 22);
    dg_tensor *st = dg_from(ctx, 2, (int[]){B, 2}, (dg_real[B * 2]){0});
    for (int b = 0; b < B; b++) st->data[b * 2] = xs[b * 4], st->data[b * 2 + 1] = xs[b * 4 + 1];
    dg_tensor *act = dg_from(ctx, 2, (int[]){B, 2}, as);
    dg_set_requires_grad(act);
    dg_tensor *out = dg_safety_filter(ctx, &s, 1, st, act);
    assert_non_null(out);
    dg_tensor *loss = dg_sum(ctx, dg_mul(ctx, out, dg_from(ctx, 2, (int[]){B, 2}, W)));
    if (pen > 0) loss = dg_add(ctx, loss, dg_scale(ctx, dg_sum(ctx, dg_square(ctx, dg_sub(ctx, out, act))), (dg_real)pen));
    assert_int_equal(dg_backward(ctx, loss), DG_OK);
    const double h = 1e-6;
    int smooth = 0, moved = 0;
    for (int b = 0; b < B; b++) {
        const double x[2] = {st->data[b * 2], st->data[b * 2 + 1]};
        for (int k = 0; k < 2; k++) {
            double ap[2] = {as[b * 2], as[b * 2 + 1]}, am[2] = {as[b * 2], as[b * 2 + 1]}, a0[2] = {ap[0], ap[1]};
            ap[k] += h, am[k] -= h;
            double op[2], om[2], o0[2];
            dg_safety_filter_row(&s, x, ap, op, NULL);
            dg_safety_filter_row(&s, x, am, om, NULL);
            moved += dg_safety_filter_row(&s, x, a0, o0, NULL);
            double lp = W[b * 2] * op[0] + W[b * 2 + 1] * op[1], lm = W[b * 2] * om[0] + W[b * 2 + 1] * om[1],
                   l0 = W[b * 2] * o0[0] + W[b * 2 + 1] * o0[1];
            for (int j = 0; j < 2; j++) {
                lp += pen * (op[j] - ap[j]) * (op[j] - ap[j]);
                lm += pen * (om[j] - am[j]) * (om[j] - am[j]);
                l0 += pen * (o0[j] - a0[j]) * (o0[j] - a0[j]);
            }
            /* smooth here: the one-sided slopes agree (the active set is the same on both sides) */
            const double fwd = (lp - l0) / h, bwd = (l0 - lm) / h;
            if (fabs(fwd - bwd) > 1e-4) continue;
            smooth++;
            const double fd = (lp - lm) / (2 * h), got = act->grad[b * 2 + k];
            if (fabs(fd - got) > 1e-4 * (1 + fabs(fd)))
                fail_msg("%s row %d, d/da%d: tape %.9g, differences %.9g", dg_safety_mode_name(mode), b, k, got, fd);
        }
    }
    assert_true(smooth > 300);
    assert_true(moved > 20);
    dg_ctx_free(ctx);
}

static void test_grad_switch(void **state) {
    (void)state;
    check_grad(DG_SAFETY_SWITCH);
}

static void test_grad_qp(void **state) {
    (void)state;
    check_grad(DG_SAFETY_QP);
}

/* the penalty's gradient in the action (through the op's Jacobian and directly) against differences */
static void test_grad_penalty(void **state) {
    (void)state;
    check_grad_pen(DG_SAFETY_SWITCH, 3.0);
    check_grad_pen(DG_SAFETY_QP, 3.0);
}

/* qp's gradient in the state (its bound c(x) = -gamma V(x) - grad V . (f + D d*), grad V held) against
 * central differences of the filter in x, on a value whose gradient is constant: the half-plane
 * x <= 0 (V = x exactly, which the grid's interpolation reproduces), where holding grad V is exact */
static void test_grad_state(void **state) {
    (void)state;
    static const char HALF[] =
        "game: model\n"
        "model:\n"
        "  name: wall\n"
        "  compile: false\n"
        "  constants: {push: 0.5}\n"
        "  state: {x: [-1, 1], y: [-1, 1]}\n"
        "  inputs:\n"
        "    u: {dim: 2, lo: -1, hi: 1, role: max}\n"
        "    w: {dim: 2, lo: -1, hi: 1, role: min}\n"
        "  dynamics: {x: u1 + push*w1, y: u2 + push*w2}\n"
        "  target: x\n"
        "t_end: 0.5\n"
        "mode: brt\n"
        "grid: {n: [41, 41]}\n";
    char hpath[160];
    snprintf(hpath, sizeof hpath, "%s/half.safetensors", dir);
    solve_to(HALF, hpath);
    dg_err e = {0};
    dg_safety_value *hv = NULL;
    assert_int_equal(dg_safety_value_open(env, hpath, NULL, &hv, &e), DG_OK);
    dg_safety s;
    const dg_safety_opts o = opts(DG_SAFETY_QP);
    dg_safety_init(&s, env, hv, NULL, &o);
    enum { B = 200 };
    dg_real xs[B * 2], as[B * 2], W[B * 2];
    unsigned seed = 31;
    for (int b = 0; b < B; b++) {
        xs[b * 2] = (dg_real)draw(&seed, 0.02, 0.3), xs[b * 2 + 1] = (dg_real)draw(&seed, -0.5, 0.5);
        as[b * 2] = (dg_real)draw(&seed, -0.95, 0.95), as[b * 2 + 1] = (dg_real)draw(&seed, -0.95, 0.95);
        W[b * 2] = (dg_real)draw(&seed, -1, 1), W[b * 2 + 1] = (dg_real)draw(&seed, -1, 1);
    }
    dg_ctx *ctx = dg_ctx_create(1 << 22);
    dg_tensor *st = dg_from(ctx, 2, (int[]){B, 2}, xs), *act = dg_from(ctx, 2, (int[]){B, 2}, as);
    dg_set_requires_grad(st);
    dg_set_requires_grad(act);
    dg_tensor *out = dg_safety_filter(ctx, &s, 1, st, act);
    assert_non_null(out);
    dg_tensor *loss = dg_sum(ctx, dg_mul(ctx, out, dg_from(ctx, 2, (int[]){B, 2}, W)));
    assert_int_equal(dg_backward(ctx, loss), DG_OK);
    const double h = 1e-6;
    int smooth = 0, pulled = 0;
    for (int b = 0; b < B; b++) {
        const double a[2] = {as[b * 2], as[b * 2 + 1]};
        for (int k = 0; k < 2; k++) {
            double xp[2] = {xs[b * 2], xs[b * 2 + 1]}, xm[2] = {xp[0], xp[1]}, x0[2] = {xp[0], xp[1]};
            xp[k] += h, xm[k] -= h;
            double op[2], om[2], o0[2];
            dg_safety_filter_row(&s, xp, a, op, NULL);
            dg_safety_filter_row(&s, xm, a, om, NULL);
            dg_safety_filter_row(&s, x0, a, o0, NULL);
            const double lp = W[b * 2] * op[0] + W[b * 2 + 1] * op[1], lm = W[b * 2] * om[0] + W[b * 2 + 1] * om[1],
                         l0 = W[b * 2] * o0[0] + W[b * 2 + 1] * o0[1];
            if (fabs((lp - l0) / h - (l0 - lm) / h) > 1e-4) continue;  /* the active set changes here */
            smooth++;
            const double fd = (lp - lm) / (2 * h), got = st->grad[b * 2 + k];
            pulled += fabs(fd) > 0.1;
            if (fabs(fd - got) > 1e-4 * (1 + fabs(fd)))
                fail_msg("row %d, d/dx%d: tape %.9g, differences %.9g", b, k, got, fd);
        }
    }
    assert_true(smooth > 300 && pulled > 30);
    dg_ctx_free(ctx);
    dg_safety_value_free(hv);
}

/* A policy's episode near the disk, the switch filter and its penalty w on the tape, by
 * dg_episode_grad (every: checkpointed, truncate: truncated BPTT): its loss, weighted terms and
 * gradient; *acted gets the rows x steps the filter changed. */
enum { PB = 24 };
static double penalty_episode(dg_policy *m, dg_params *p, double w, int every, int truncate, dg_real *terms,
                              dg_real *grad, int64_t *acted) {
    dg_err e = {0};
    dg_real *st = NULL, *aux = NULL;
    assert_int_equal(dg_run_init_draw(env, 5, PB, &st, &aux, &e), DG_OK);
    unsigned seed = 21;
    for (int b = 0; b < PB; b++) {  /* around the disk, within the margin: the filter acts */
        const double r = draw(&seed, 0.32, 0.38), th = draw(&seed, -3.1, 3.1);
        st[b * 2] = (dg_real)(r * cos(th)), st[b * 2 + 1] = (dg_real)(r * sin(th));
    }
    dg_safety s;
    const dg_safety_opts o = opts(DG_SAFETY_SWITCH);
    dg_safety_init(&s, env, val, NULL, &o);
    dg_safety_attach(&s, m);
    m->filter_penalty = w;
    dg_ctx *ctx = dg_ctx_create(1 << 24);
    const int H = env->horizon;
    dg_real *saved = calloc((size_t)dg_episode_saved(H, every, truncate) * PB * 2 + 1, sizeof *saved);
    double loss = NAN;
    dg_params_zero_grad(p);
    memset(terms, 0, DG_LOSS_MAX_TERMS * sizeof *terms);
    const dg_status rc = dg_episode_grad(ctx, env, m, p, st, aux, PB, (dg_real)1 / PB, every, truncate, saved, &loss,
                                         terms, NULL, 0);
    if (rc != DG_OK) fail_msg("episode: %s", dg_ctx_error(ctx));
    memcpy(grad, p->grad, p->total * sizeof *grad);
    *acted = s.filtered;
    free(saved), free(st), free(aux);
    dg_ctx_free(ctx);
    return loss;
}

/* The penalty on the filter's interventions (safety.penalty) carried through the trainer's loss:
 * a term of its own after the game's, the same loss on every BPTT path (plain, checkpointed,
 * truncated), the checkpointed gradient the plain one, the truncated one moved by it; on the
 * double tape the gradient against central differences of the episode's loss in the parameters
 * (the switch filter: its action is piecewise constant in the state, so the op's gradient is the
 * whole of it almost everywhere). */
static void test_penalty(void **state) {
    (void)state;
    dg_err e = {0};
    dg_policy m;
    dg_params *p = NULL;
    const int hidden[1] = {4};
    assert_int_equal(dg_policy_create(env, hidden, 1, &m, &p, &e), DG_OK);
    const size_t n = p->total;
    dg_real *g0 = malloc(n * sizeof *g0), *g1 = malloc(n * sizeof *g1), *g2 = malloc(n * sizeof *g2);
    dg_real t0[DG_LOSS_MAX_TERMS], t1[DG_LOSS_MAX_TERMS], t2[DG_LOSS_MAX_TERMS];
    const int K = env->nterms;
    const double w = 2.0;
    int64_t acted = 0;
    const double l0 = penalty_episode(&m, p, 0, 0, 0, t0, g0, &acted);
    const double l1 = penalty_episode(&m, p, w, 0, 0, t1, g1, &acted);
    if (acted < 50) fail_msg("the filter acted on %lld rows x steps: too few to test its penalty", (long long)acted);
    /* the penalty's own term, after the game's; the game's terms unchanged (the same trajectory) */
    assert_true(t1[K] > 0 && t0[K] == 0);
    double sum = 0;
    for (int i = 0; i < K; i++) {
        assert_true(t1[i] == t0[i]);
        sum += t1[i];
    }
    if (fabs(l1 - (sum + t1[K])) > 1e-5 * (1 + fabs(l1)) || fabs(l1 - l0 - t1[K]) > 1e-5 * (1 + fabs(l1)))
        fail_msg("loss %.9g, %.9g without the penalty, its term %.9g, the game's %.9g", l1, l0, t1[K], sum);
    double moved = 0;
    for (size_t i = 0; i < n; i++) moved += fabs((double)g1[i] - g0[i]);
    assert_true(moved > 0);
    /* checkpointed: the same loss and gradient */
    const double lc = penalty_episode(&m, p, w, 7, 0, t2, g2, &acted);
    assert_true(lc == l1 && t2[K] == t1[K]);
    for (size_t i = 0; i < n; i++)
        if (fabs((double)g2[i] - g1[i]) > 1e-6 * (1 + fabs((double)g1[i])))
            fail_msg("checkpointed gradient %zu: %.9g against %.9g", i, (double)g2[i], (double)g1[i]);
    /* truncated (windows of 10 steps), checkpointed inside them or not: the same loss, and the
     * penalty moves the gradient there too */
    const double lt = penalty_episode(&m, p, w, 0, 10, t2, g2, &acted);
    assert_true(lt == l1 && t2[K] == t1[K]);
    (void)penalty_episode(&m, p, 0, 0, 10, t0, g0, &acted);
    moved = 0;
    for (size_t i = 0; i < n; i++) moved += fabs((double)g2[i] - g0[i]);
    assert_true(moved > 0);
    const double ltc = penalty_episode(&m, p, w, 4, 10, t0, g0, &acted);
    assert_true(ltc == l1);
    for (size_t i = 0; i < n; i++)
        if (fabs((double)g0[i] - g2[i]) > 1e-6 * (1 + fabs((double)g2[i])))
            fail_msg("truncated and checkpointed gradient %zu: %.9g against %.9g", i, (double)g0[i], (double)g2[i]);
#if DG_REAL_F64
    /* central differences of the episode's loss (dg_rollout: the same tape forward) */
    dg_real *st = NULL, *aux = NULL;
    assert_int_equal(dg_run_init_draw(env, 5, PB, &st, &aux, &e), DG_OK);
    unsigned seed = 21;
    for (int b = 0; b < PB; b++) {
        const double r = draw(&seed, 0.32, 0.38), th = draw(&seed, -3.1, 3.1);
        st[b * 2] = (dg_real)(r * cos(th)), st[b * 2 + 1] = (dg_real)(r * sin(th));
    }
    dg_safety s;
    const dg_safety_opts o = opts(DG_SAFETY_SWITCH);
    dg_safety_init(&s, env, val, NULL, &o);
    dg_safety_attach(&s, &m);
    m.filter_penalty = w;
    dg_ctx *ctx = dg_ctx_create(1 << 24);
    const double h = 1e-6;
    int checked = 0;
    for (size_t i = 0; i < n; i++) {
        const dg_real keep = p->data[i];
        double lpm[2];
        for (int k = 0; k < 2; k++) {
            p->data[i] = keep + (k ? -h : h);
            dg_ctx_reset(ctx);
            dg_tensor *l = dg_rollout(ctx, env, &m, p, st, aux, PB, (dg_real)1 / PB, NULL, NULL, 0);
            assert_non_null(l);
            lpm[k] = l->data[0];
        }
        p->data[i] = keep;
        const double fd = (lpm[0] - lpm[1]) / (2 * h);
        if (fabs(fd - g1[i]) > 1e-5 * (1 + fabs(fd)))
            fail_msg("parameter %zu: tape %.9g, differences %.9g", i, (double)g1[i], fd);
        checked++;
    }
    assert_true(checked == (int)n);
    dg_ctx_free(ctx);
    free(st), free(aux);
#endif
    free(g0), free(g1), free(g2);
    dg_params_free(p);
}

/* a player that heads for the disk's centre at full speed */
static dg_tensor *into_disk(dg_ctx *ctx, void *user, int t, dg_tensor *obs, int B) {
    (void)user, (void)t;
    dg_tensor *a = dg_new_2d(ctx, B, 2);
    if (!a) return NULL;
    for (int b = 0; b < B; b++) {
        const double x = obs->data[b * 4], y = obs->data[b * 4 + 1], n = hypot(x, y) + 1e-9;
        a->data[b * 2] = (dg_real)(-x / n), a->data[b * 2 + 1] = (dg_real)(-y / n);
    }
    return a;
}

static void test_eval(void **state) {
    (void)state;
    dg_err e = {0};
    dg_policy m;
    dg_params *p = NULL;
    const int hidden[1] = {4};
    assert_int_equal(dg_policy_create(env, hidden, 1, &m, &p, &e), DG_OK);
    m.fn[0] = into_disk;
    enum { B = 64 };
    dg_real *st = NULL, *aux = NULL;
    assert_int_equal(dg_run_init_draw(env, 3, B, &st, &aux, &e), DG_OK);
    dg_eval_result r;
    dg_safety_result sr;
    dg_safety s;
    const dg_safety_opts off = opts(DG_SAFETY_SWITCH);
    dg_safety_init(&s, env, NULL, val, &off);  /* the wind alone */
    assert_int_equal(dg_safety_eval(env, &m, p, &s, st, aux, B, 0, &r, &sr, &e), DG_OK);
    assert_int_equal(sr.violations, B);
    assert_true(sr.interventions == 0 && sr.min_target < 0);
    for (int mode = 0; mode < 2; mode++) {
        const dg_safety_opts o = opts(mode);
        dg_safety_init(&s, env, val, val, &o);
        assert_int_equal(dg_safety_eval(env, &m, p, &s, st, aux, B, 0, &r, &sr, &e), DG_OK);
        if (sr.violations != 0 || !(sr.min_target > 0))
            fail_msg("%s: %lld violations, least l %g", dg_safety_mode_name(mode), (long long)sr.violations, sr.min_target);
        /* qp acts from the start here (the player closes in faster than gamma V allows), switch near the disk */
        if (!(sr.interventions > 0.1 && sr.interventions <= 1 && (mode == DG_SAFETY_QP || sr.interventions < 0.9))) fail_msg("%s: interventions %g", dg_safety_mode_name(mode), sr.interventions);
        assert_int_equal(sr.episodes, B);
    }
    free(st);
    free(aux);
    dg_params_free(p);
}

static void test_refusals(void **state) {
    (void)state;
    dg_err e = {0};
    /* safety.train needs its value */
    const char *y = "safety: {train: true}\n";
    dg_cfg *c = dg_cfg_parse(y, strlen(y), "s.yaml", &e);
    dg_safety_opts o;
    assert_int_equal(dg_safety_opts_read(c, &o, &e), DG_ERR_CONFIG);
    assert_non_null(strstr(e.msg, "safety.value"));
    dg_cfg_free(c);
    y = "safety: {mode: bang}\n";
    c = dg_cfg_parse(y, strlen(y), "s.yaml", &e);
    assert_int_equal(dg_safety_opts_read(c, &o, &e), DG_ERR_CONFIG);
    assert_non_null(strstr(e.msg, "safety.mode"));
    dg_cfg_free(c);
    /* a value over other axes */
    char other[160];
    snprintf(other, sizeof other, "%s/o.safetensors", dir);
    solve_to(VALUE("x", "z"), other);
    dg_safety_value *v = NULL;
    memset(&e, 0, sizeof e);
    assert_int_equal(dg_safety_value_open(env, other, NULL, &v, &e), DG_ERR_ARG);
    assert_null(v);
    assert_non_null(strstr(e.msg, "axis 'z'"));
    /* not a value file */
    memset(&e, 0, sizeof e);
    assert_int_not_equal(dg_safety_value_open(env, "/nonexistent/v.safetensors", NULL, &v, &e), DG_OK);
    assert_null(v);
}

/* a network of hji learn as the filter's value (untrained: only the plumbing is checked): its values
 * are the network's own (dg_hji_learn_eval_grad at the horizon), the batch op filters as the rows do,
 * and the HJI config it was trained on is needed */
static void test_network(void **state) {
    (void)state;
    char cpath[160], npath[160];
    snprintf(cpath, sizeof cpath, "%s/n.yaml", dir);
    snprintf(npath, sizeof npath, "%s/net.safetensors", dir);
    const char *yaml = VALUE("x", "y");
    FILE *f = fopen(cpath, "w");
    assert_non_null(f);
    fputs(yaml, f);
    fclose(f);
    dg_err e = {0};
    dg_cfg *c = dg_cfg_load(cpath, &e);
    assert_non_null(c);
    dg_hji_problem *p = dg_hji_problem_load(c, &e);
    assert_non_null(p);
    dg_hji_learn_opts lo;
    dg_hji_learn_opts_default(&lo);
    lo.hidden[0] = lo.hidden[1] = 16, lo.nhidden = 2;
    dg_hji_learn_net net = {0};
    assert_int_equal(dg_hji_learn_net_init(&net, p, &lo, &e), DG_OK);
    assert_int_equal(dg_hji_learn_save(&net, npath, &e), DG_OK);
    dg_safety_value *v = NULL;
    assert_int_equal(dg_safety_value_open(env, npath, NULL, &v, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "safety.config"));
    assert_int_equal(dg_safety_value_open(env, npath, cpath, &v, &e), DG_OK);
    const double x[2] = {0.4, -0.2};
    double g[2], V0, g0[2];
    const double V = dg_safety_value_at(v, x, g, NULL, NULL), tau = p->t_end;
    assert_int_equal(dg_hji_learn_eval_grad(&net, p, 1, x, &tau, &V0, NULL, g0, &e), DG_OK);
    assert_true(V == V0 && g[0] == g0[0] && g[1] == g0[1]);
    /* the op over a batch (one evaluation) against the rows (one each) */
    dg_safety s;
    const dg_safety_opts o = {.mode = DG_SAFETY_QP, .gamma = 50};
    dg_safety_init(&s, env, v, v, &o);
    enum { B = 32 };
    dg_real xs[B * 2], as[B * 2];
    unsigned seed = 5;
    for (int i = 0; i < B * 2; i++) xs[i] = (dg_real)draw(&seed, -0.9, 0.9), as[i] = (dg_real)draw(&seed, -1, 1);
    dg_ctx *ctx = dg_ctx_create(1 << 20);
    dg_tensor *out = dg_safety_filter(ctx, &s, 1, dg_from(ctx, 2, (int[]){B, 2}, xs), dg_from(ctx, 2, (int[]){B, 2}, as));
    assert_non_null(out);
    assert_int_equal(out->shape[1], 4);  /* the action, then the wind's columns */
    int moved = 0;
    for (int b = 0; b < B; b++) {
        const double xb[2] = {xs[b * 2], xs[b * 2 + 1]}, ab[2] = {as[b * 2], as[b * 2 + 1]};
        double ob[2], d[2];
        moved += dg_safety_filter_row(&s, xb, ab, ob, NULL);
        dg_safety_value_at(v, xb, NULL, NULL, d);
        for (int j = 0; j < 2; j++) {
            assert_true(fabs(out->data[b * 4 + j] - ob[j]) <= 1e-6);
            assert_true(out->data[b * 4 + 2 + j] == (dg_real)d[j]);  /* the box is [-1, 1]: d* itself */
        }
    }
    assert_true(moved > 0);
    dg_ctx_free(ctx);
    dg_safety_value_free(v);
    dg_hji_learn_net_free(&net);
    dg_hji_problem_free(p);
    dg_cfg_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_switch),    cmocka_unit_test(test_qp_nearest), cmocka_unit_test(test_grad_switch),
        cmocka_unit_test(test_grad_qp),   cmocka_unit_test(test_eval),       cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_network),   cmocka_unit_test(test_grad_penalty), cmocka_unit_test(test_penalty),
        cmocka_unit_test(test_grad_state),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
