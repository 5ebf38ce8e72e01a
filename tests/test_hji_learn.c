/* The HJI residual on the tape (hji_learn.h, src/hji/learn), on the double tape (compiled with
 * DG_F64, as test_value_net.c):
 *   - the tape's Hamiltonian against the grid solver's (dg_hji_game_hamiltonian) and against this
 *     file's own reference (the input sets' extrema by enumeration and closed forms written here from
 *     f, G, D) to 1e-12, on air3d, pursuit2d, lq_discounted and games written here with box, ball,
 *     quadratic and box-with-cost inputs (games of kind and of degree, discount, state costs);
 *   - dH/dp on the tape against finite differences (dg_gradcheck);
 *   - exact values: pursuit2d's V = max(|x| - (v_p - v_e) tau, 0) - r has residual ~0 in BRS, BRT
 *     and BRT_TARGET (each where it is that mode's value), the LQ game's x'P(tau)x (Riccati ODE) and
 *     the discounted game's x'Px (algebraic Riccati) too, and a wrong V a residual far from 0;
 *   - the obstacle, cap and stop terms where they are active and where not;
 *   - the exact boundary form V = l + tau N against its formula, and the weight gradient of the mean
 *     residual of small sine networks against finite differences (dg_gradcheck);
 *   - a generic-Hamiltonian game refused, naming it; bad shapes;
 *   - a problem of 8 state dimensions: refused by the grid solver's loads, learned at points;
 *   - collision9d (three Dubins aircraft, 9-D): dynamics, H, dH/dp and the target with its gradient. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "difgames/difgames.h"
#include "util/check.h"
#include "util/hji_degree.h"
#include "util/hji_load.h"

#if !DG_REAL_F64
#error "test_hji_learn runs on the double tape (tests/CMakeLists.txt: DG_F64)"
#endif

/* ------------------------------------------------------------ games written here */

/* A nonlinear 3-D game: f, G (3, 2) and D (3, 2) depend on x, so G^T p differs at every point. */
static void dyn3(void *user, const double *x, double *f, double *G, double *D) {
    (void)user;
    f[0] = sin(x[1]) + 0.5 * x[2];
    f[1] = x[0] * x[2];
    f[2] = cos(x[0]) - 0.3;
    const double g[6] = {1, x[2], 0.5, cos(x[1]), x[0], 1};
    const double d[6] = {0.3, -x[1], x[1], 0.2, 1, sin(x[2])};
    memcpy(G, g, sizeof g);
    memcpy(D, d, sizeof d);
}

/* a state cost L1(x) of a game of degree */
static double cost3(void *user, const double *x) {
    (void)user;
    return 0.1 * sin(x[0]) * sin(x[0]) + 0.05 * x[1] * x[2];
}

static dg_hji_game game3(dg_hji_set us, dg_hji_role ur, dg_hji_set ds, dg_hji_role dr, int degree) {
    dg_hji_game g = {.nx = 3, .dyn = dyn3};
    g.u = (dg_hji_input){.dim = 2, .set = us, .role = ur, .lo = {-1, -0.5}, .hi = {2, 0.5}, .center = {0.2, -0.1},
                         .radius = 1.5, .weight = 0.7};
    g.d = (dg_hji_input){.dim = 2, .set = ds, .role = dr, .lo = {-0.4, -1}, .hi = {0.6, 0.25}, .center = {-0.3, 0.1},
                         .radius = 0.7, .weight = 2.5};
    if (degree) {
        g.payoff.on = 1;
        g.payoff.running = 0.3;
        const double Q[9] = {1, 0.2, 0, 0.2, 0.5, 0, 0, 0, 0.25};
        memcpy(g.payoff.Q, Q, sizeof Q);
        g.payoff.discount = 0.2;
        g.payoff.cost = cost3;
    }
    return g;
}

/* This file's own H: -(L + p.f + ext_u + ext_d), each extremum of s.v over the set (s = M^T p) by
 * enumerating a box's vertices, a ball's closed form, and for a cost-weighted input the extremum of
 * s v - sg w v^2 over the candidates (the box's ends and its clipped stationary point; QUAD: the
 * stationary point). */
static double ext_ref(const dg_hji_input *in, const double *s) {
    const int m = in->dim;
    const double sg = in->role == DG_HJI_ROLE_MAX ? 1 : -1;
    if (m == 0) return 0;
    if (in->set == DG_HJI_SET_BOX) {
        double best = sg * -INFINITY;
        for (int c = 0; c < (1 << m); c++) {
            double v = 0;
            for (int j = 0; j < m; j++) v += s[j] * ((c >> j) & 1 ? in->hi[j] : in->lo[j]);
            best = sg > 0 ? fmax(best, v) : fmin(best, v);
        }
        return best;
    }
    if (in->set == DG_HJI_SET_BALL) {
        double sc = 0, n2 = 0;
        for (int j = 0; j < m; j++) {
            sc += s[j] * in->center[j];
            n2 += s[j] * s[j];
        }
        return sc + sg * in->radius * sqrt(n2);
    }
    double tot = 0;
    for (int j = 0; j < m; j++) {
        const double w = in->weight, st = sg * s[j] / (2 * w);
        if (in->set == DG_HJI_SET_QUAD) {
            tot += s[j] * st - sg * w * st * st;
            continue;
        }
        const double cand[3] = {in->lo[j], in->hi[j], fmin(fmax(st, in->lo[j]), in->hi[j])};
        double best = sg * -INFINITY;
        for (int c = 0; c < 3; c++) {
            const double v = s[j] * cand[c] - sg * w * cand[c] * cand[c];
            best = sg > 0 ? fmax(best, v) : fmin(best, v);
        }
        tot += best;
    }
    return tot;
}

static double ham_ref(const dg_hji_game *gm, const double *x, const double *p) {
    const int nx = gm->nx, nu = gm->u.dim, nd = gm->d.dim;
    double f[DG_HJI_MAX_DIMS] = {0}, G[DG_HJI_MAX_DIMS * DG_HJI_MAX_INPUT] = {0},
           D[DG_HJI_MAX_DIMS * DG_HJI_MAX_INPUT] = {0}, su[DG_HJI_MAX_INPUT] = {0}, sd[DG_HJI_MAX_INPUT] = {0};
    gm->dyn(gm->user, x, f, G, D);
    double h = 0;
    for (int k = 0; k < nx; k++) {
        h += p[k] * f[k];
        for (int j = 0; j < nu; j++) su[j] += G[k * nu + j] * p[k];
        for (int j = 0; j < nd; j++) sd[j] += D[k * nd + j] * p[k];
    }
    if (gm->payoff.on) {
        h += gm->payoff.running + (gm->payoff.cost ? gm->payoff.cost(gm->user, x) : 0);
        for (int i = 0; i < nx; i++)
            for (int j = 0; j < nx; j++) h += x[i] * gm->payoff.Q[i * nx + j] * x[j];
    }
    return -(h + ext_ref(&gm->u, su) + ext_ref(&gm->d, sd));
}

/* ------------------------------------------------------------------ helpers */

static double urand(dg_rng *r, double lo, double hi) { return lo + (hi - lo) * (double)dg_rng_uniform(r, 0, 1); }

static dg_tensor *col_from(dg_ctx *ctx, int B, int c, const double *v) {
    dg_tensor *t = dg_from(ctx, 2, (int[]){B, c}, v);
    assert_non_null(t);
    return t;
}

static dg_hji_problem *load_cfg(const char *name) {
    char path[1200], dir[1024];
    snprintf(dir, sizeof dir, "%s", __FILE__);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    snprintf(path, sizeof path, "%s/../configs/hji/%s.yaml", dir, name);
    dg_err e = {0};
    dg_cfg *c = dg_cfg_load(path, &e);
    if (!c) fail_msg("%s", e.msg);
    dg_hji_problem *p = dg_hji_problem_load_points(c, &e);   /* (of up to 6 axes: dg_hji_problem_load's) */
    if (!p) fail_msg("%s: %s", path, e.msg);
    dg_cfg_free(c);
    return p;
}

static dg_hji_problem *load_yaml(const char *yaml) {
    dg_err e;
    dg_hji_problem *p = load(yaml, &e);
    if (!p) fail_msg("%s", e.msg);
    return p;
}

#define NB 64
#define PI 3.141592653589793

/* ------------------------------------------------- (a) H against the solver's */

/* H on the tape at NB random (x, p) of gm against the solver's and this file's reference. */
static void check_ham(const char *name, const dg_hji_game *gm, double xr, double pr, uint64_t seed) {
    const int nx = gm->nx;
    double x[NB * DG_HJI_MAX_DIMS], p[NB * DG_HJI_MAX_DIMS];
    dg_rng rng;
    dg_rng_seed(&rng, seed);
    for (int i = 0; i < NB * nx; i++) {
        x[i] = urand(&rng, -xr, xr);
        p[i] = urand(&rng, -pr, pr);
    }
    dg_ctx *ctx = dg_ctx_create(1 << 20);
    dg_tensor *H = dg_hji_learn_hamiltonian(ctx, gm, col_from(ctx, NB, nx, x), col_from(ctx, NB, nx, p));
    if (!H) fail_msg("%s: %s", name, dg_ctx_error(ctx));
    assert_int_equal(H->shape[0], NB);
    assert_int_equal(H->shape[1], 1);
    double worst = 0;
    for (int b = 0; b < NB; b++) {
        const double hs = dg_hji_game_hamiltonian(gm, x + b * nx, p + b * nx), hr = ham_ref(gm, x + b * nx, p + b * nx);
        const double tol = 1e-12 * (1 + fabs(hr));
        if (!(fabs(H->data[b] - hs) <= tol) || !(fabs(H->data[b] - hr) <= tol))
            fail_msg("%s: point %d: tape %.17g solver %.17g reference %.17g", name, b, H->data[b], hs, hr);
        worst = fmax(worst, fabs(H->data[b] - hr));
    }
    printf("  %-34s H against the reference: max |diff| %.1e\n", name, worst);
    dg_ctx_free(ctx);
}

static void test_hamiltonian_values(void **state) {
    (void)state;
    dg_hji_problem *air = load_yaml("game: air3d\n");
    check_ham("air3d (boxes)", &air->game, 6, 3, 1);
    dg_hji_problem *pur = load_yaml("game: pursuit2d\n");
    check_ham("pursuit2d (balls)", &pur->game, 2, 3, 2);
    dg_hji_problem *lq = load_cfg("lq_discounted");
    check_ham("lq_discounted (quadratic, degree)", &lq->game, 2, 3, 3);
    const dg_hji_set S[4] = {DG_HJI_SET_BOX, DG_HJI_SET_BALL, DG_HJI_SET_QUAD, DG_HJI_SET_BOX_COST};
    const char *SN[4] = {"box", "ball", "quad", "box_cost"};
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            const int degree = a >= 2 || b >= 2;
            for (int roles = 0; roles < 2; roles++) {
                const dg_hji_role ur = roles ? DG_HJI_ROLE_MAX : DG_HJI_ROLE_MIN;
                const dg_hji_role dr = roles ? DG_HJI_ROLE_MIN : DG_HJI_ROLE_MAX;
                dg_hji_game g = game3(S[a], ur, S[b], dr, degree);
                char name[96];
                snprintf(name, sizeof name, "3-D u %s %s, d %s%s", SN[a], roles ? "max" : "min", SN[b],
                         degree ? ", degree" : "");
                check_ham(name, &g, 1.5, 2, 10 + (uint64_t)(8 * a + 2 * b + roles));
            }
        }
    /* a box input alone, a ball alone, and a game of degree with no inputs (L0 + p.f only) */
    dg_hji_game g = game3(DG_HJI_SET_BOX, DG_HJI_ROLE_MIN, DG_HJI_SET_BOX, DG_HJI_ROLE_MAX, 0);
    g.d.dim = 0;
    check_ham("3-D u box alone", &g, 1.5, 2, 50);
    g = game3(DG_HJI_SET_BALL, DG_HJI_ROLE_MAX, DG_HJI_SET_BALL, DG_HJI_ROLE_MIN, 0);
    g.u.dim = 0;
    check_ham("3-D d ball alone", &g, 1.5, 2, 51);
    g = game3(DG_HJI_SET_BOX, DG_HJI_ROLE_MIN, DG_HJI_SET_BOX, DG_HJI_ROLE_MAX, 1);
    g.u.dim = g.d.dim = 0;
    check_ham("3-D no inputs, degree", &g, 1.5, 2, 52);
    dg_hji_problem_free(air);
    dg_hji_problem_free(pur);
    dg_hji_problem_free(lq);
}

/* ------------------------------------------------- (b) dH/dp by finite differences */

typedef struct ham_fd {
    const dg_hji_game *gm;
    double x[NB * DG_HJI_MAX_DIMS], w[NB];
    int B;
} ham_fd;

/* sum_b w_b H(x_b, p_b), p the parameter "p" (B, nx) */
static dg_tensor *ham_loss(dg_ctx *ctx, dg_params *p, void *user) {
    const ham_fd *u = user;
    dg_tensor *x = dg_from(ctx, 2, (int[]){u->B, u->gm->nx}, u->x);
    dg_tensor *w = dg_from(ctx, 2, (int[]){u->B, 1}, u->w);
    return dg_sum(ctx, dg_mul(ctx, w, dg_hji_learn_hamiltonian(ctx, u->gm, x, dg_param(ctx, p, 0))));
}

static void check_ham_grad(const char *name, const dg_hji_game *gm, double xr, double pr, uint64_t seed) {
    ham_fd u = {.gm = gm, .B = 16};
    dg_rng rng;
    dg_rng_seed(&rng, seed);
    dg_params *p = dg_params_create();
    dg_err e = {0};
    assert_int_equal(dg_params_add(p, "p", 2, (int[]){u.B, gm->nx}, &e), 0);
    for (int i = 0; i < u.B * gm->nx; i++) {
        u.x[i] = urand(&rng, -xr, xr);
        dg_params_data(p, 0)[i] = urand(&rng, -pr, pr);
    }
    for (int b = 0; b < u.B; b++) u.w[b] = urand(&rng, 0.5, 1.5);
    dg_ctx *ctx = dg_ctx_create(1 << 20);
    dg_gradcheck_report rep;
    if (dg_gradcheck(ctx, p, ham_loss, &u, 1e-4, 1e-6, 0, &rep, &e) != DG_OK) fail_msg("%s: %s", name, e.msg);
    printf("  %-34s dH/dp against finite differences: rel err %.1e (%lld)\n", name, rep.max_rel_err,
           (long long)rep.checked);
    check_gradcheck(name, p, &rep, 1e-7);
    dg_ctx_free(ctx);
    dg_params_free(p);
}

static void test_hamiltonian_grad(void **state) {
    (void)state;
    dg_hji_problem *air = load_yaml("game: air3d\n");
    check_ham_grad("air3d (boxes)", &air->game, 6, 3, 101);
    dg_hji_problem *lq = load_cfg("lq_discounted");
    check_ham_grad("lq_discounted (quadratic)", &lq->game, 2, 3, 102);
    const dg_hji_set S[4] = {DG_HJI_SET_BOX, DG_HJI_SET_BALL, DG_HJI_SET_QUAD, DG_HJI_SET_BOX_COST};
    const char *SN[4] = {"box", "ball", "quad", "box_cost"};
    for (int a = 0; a < 4; a++) {
        char name[64];
        snprintf(name, sizeof name, "3-D u %s, d %s", SN[a], SN[3 - a]);
        dg_hji_game g = game3(S[a], DG_HJI_ROLE_MIN, S[3 - a], DG_HJI_ROLE_MAX, 1);
        check_ham_grad(name, &g, 1.5, 2, 110 + (uint64_t)a);
    }
    /* at p = 0 a ball's |G^T p| has no derivative: the tape takes the centre's (finite, no NaN) */
    dg_hji_game g = game3(DG_HJI_SET_BALL, DG_HJI_ROLE_MIN, DG_HJI_SET_BALL, DG_HJI_ROLE_MAX, 0);
    dg_ctx *ctx = dg_ctx_create(1 << 16);
    const double x[3] = {0.3, -0.2, 0.1}, zero[3] = {0};
    dg_tensor *pt = col_from(ctx, 1, 3, zero);
    dg_set_requires_grad(pt);
    dg_tensor *H = dg_hji_learn_hamiltonian(ctx, &g, col_from(ctx, 1, 3, x), pt);
    assert_non_null(H);
    assert_true(fabs(H->data[0]) < 1e-15);
    assert_int_equal(dg_backward(ctx, dg_sum(ctx, H)), DG_OK);
    double f[3] = {0}, G[6] = {0}, D[6] = {0};
    dyn3(NULL, x, f, G, D);
    for (int k = 0; k < 3; k++) {   /* -(f + G c_u + D c_d) */
        const double want = -(f[k] + G[2 * k] * g.u.center[0] + G[2 * k + 1] * g.u.center[1] +
                              D[2 * k] * g.d.center[0] + D[2 * k + 1] * g.d.center[1]);
        assert_true(fabs(pt->grad[k] - want) < 1e-14);
    }
    dg_ctx_free(ctx);
    dg_hji_problem_free(air);
    dg_hji_problem_free(lq);
}

/* ------------------------------------------------------ (c) exact values */

/* The residual (B, 1) of eq for V, V_tau, grad given as data at x. */
static dg_tensor *residual_of(dg_ctx *ctx, const dg_hji_game *gm, const dg_hji_learn_eq *eq, int B, const double *x,
                              const double *V, const double *Vt, const double *grad) {
    const int nx = gm->nx;
    dg_tensor *r = dg_hji_learn_residual(ctx, gm, eq, col_from(ctx, B, nx, x), col_from(ctx, B, 1, V),
                                         col_from(ctx, B, 1, Vt), col_from(ctx, B, nx, grad));
    if (!r) fail_msg("%s", dg_ctx_error(ctx));
    return r;
}

static double max_abs(const dg_tensor *t) {
    double m = 0;
    for (int64_t i = 0; i < t->n; i++) m = fmax(m, fabs(t->data[i]));
    return m;
}

/* pursuit2d: V = max(|x| - c tau, 0) - r, c = v_p - v_e, in each mode: outside the shrinking disk
 * |x| > c tau the PDE (V_tau = -c, |grad V| = 1, H = c |p|), inside V = -r (V_tau = 0, grad 0) where
 * the tubes hold it; BRS's value there is |x| - c tau - r (the points kept out of the disk). */
static void test_exact_pursuit(void **state) {
    (void)state;
    dg_hji_problem *pp = load_yaml("game: pursuit2d\n");
    const dg_hji_game *gm = &pp->game;
    const double vp = dg_hji_problem_param(pp, "speed_pursuer"), ve = dg_hji_problem_param(pp, "speed_evader"),
                 R = dg_hji_problem_param(pp, "capture_radius"), c = vp - ve;
    double x[2 * NB], V[NB], Vt[NB], g[2 * NB], l[NB], Vw[NB], Vtw[NB], taus[NB];
    dg_rng rng;
    dg_rng_seed(&rng, 7);
    const dg_hji_mode MODES[3] = {DG_HJI_MODE_BRS, DG_HJI_MODE_BRT, DG_HJI_MODE_BRT_TARGET};
    for (int mi = 0; mi < 3; mi++) {
        const dg_hji_mode mode = MODES[mi];
        for (int b = 0; b < NB; b++) {
            const double tau = taus[b] = urand(&rng, 0, 1.0);
            double n;
            do {
                x[2 * b] = urand(&rng, -2, 2);
                x[2 * b + 1] = urand(&rng, -2, 2);
                n = hypot(x[2 * b], x[2 * b + 1]);
            } while (n < 1e-3 || (mode == DG_HJI_MODE_BRS && n < c * tau + 1e-3) || fabs(n - c * tau) < 1e-3);
            l[b] = n - R;
            const int out = n > c * tau;
            V[b] = out ? n - c * tau - R : -R;
            Vt[b] = out ? -c : 0;
            g[2 * b] = out ? x[2 * b] / n : 0;
            g[2 * b + 1] = out ? x[2 * b + 1] / n : 0;
            Vw[b] = out ? n - 2 * c * tau - R : -R;   /* a wrong value: twice the closing speed */
            Vtw[b] = out ? -2 * c : 0;
        }
        dg_ctx *ctx = dg_ctx_create(1 << 20);
        dg_hji_learn_eq eq = {.mode = mode, .l = col_from(ctx, NB, 1, l)};
        dg_tensor *r = residual_of(ctx, gm, &eq, NB, x, V, Vt, g);
        dg_tensor *rw = residual_of(ctx, gm, &eq, NB, x, Vw, Vtw, g);
        dg_tensor *loss = dg_hji_learn_loss(ctx, gm, &eq, col_from(ctx, NB, 2, x), col_from(ctx, NB, 1, Vw),
                                            col_from(ctx, NB, 1, Vtw), col_from(ctx, NB, 2, g));
        assert_non_null(loss);
        double ms = 0;
        for (int b = 0; b < NB; b++) ms += rw->data[b] * rw->data[b] / NB;
        printf("  pursuit2d mode %d: exact V max |r| %.1e; wrong V max |r| %.3f, loss %.4f\n", (int)mode, max_abs(r),
               max_abs(rw), loss->data[0]);
        assert_true(max_abs(r) < 1e-14);
        assert_true(fabs(loss->data[0] - ms) < 1e-14);
        /* the wrong V: V_tau + H = -c outside (BRT_TARGET: the larger of that and V - l = -2 c tau),
         * 0 inside the disk, where it is still the tubes' -r */
        int off = 0;
        for (int b = 0; b < NB; b++) {
            if (Vtw[b] != 0) {
                off++;
                const double want = mode == DG_HJI_MODE_BRT_TARGET ? fmax(-c, -2 * c * taus[b]) : -c;
                assert_true(fabs(rw->data[b] - want) < 1e-14);
            } else {
                assert_true(fabs(rw->data[b]) < 1e-14);
            }
        }
        assert_true(off > NB / 4);
        dg_ctx_free(ctx);
    }
    dg_hji_problem_free(pp);
}

/* The LQ games of degree: V = x'P(tau)x with the Riccati ODE's P (its rate dP/dtau from the same
 * right-hand side: V_tau = x'(dP/dtau)x), and the discounted game's stationary x'Px (V_tau = 0), in
 * lq_discounted's game (quadratic inputs, a state cost, discount 0.5). */
static void test_exact_lq(void **state) {
    (void)state;
    dg_hji_problem *p = load_cfg("lq_discounted");
    const dg_hji_game *gm = &p->game;
    const double A[4] = {0, 1, 0, 0}, Bm[2] = {0, 1}, Dm[2] = {0, 1}, Q[4] = {1, 0, 0, 1};
    const double Rw = gm->u.weight, gam = sqrt(gm->d.weight), rho = gm->payoff.discount;
    assert_true(rho > 0);
    double P[4], Ps[4], dP[4], S[4];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) S[i * 2 + j] = Bm[i] * Bm[j] / Rw - Dm[i] * Dm[j] / (gam * gam);
    const double QT[4] = {0.5, 0.1, 0.1, 0.3};
    deg_riccati(A, Bm, Dm, Q, Rw, gam, rho, QT, 0.7, 4000, P);
    deg_riccati_rhs(P, A, Q, S, rho, dP);
    assert_true(deg_are(A, Bm, Dm, Q, Rw, gam, rho, Ps) < 1e-10);
    double x[2 * NB], V[NB], Vt[NB], g[2 * NB], Vs[NB], zero[NB] = {0}, gs[2 * NB], Vw[NB], gw[2 * NB];
    dg_rng rng;
    dg_rng_seed(&rng, 9);
    for (int b = 0; b < NB; b++) {
        const double *xb = x + 2 * b;
        x[2 * b] = urand(&rng, -1, 1);
        x[2 * b + 1] = urand(&rng, -1, 1);
        const double *M[2] = {P, Ps};
        double *Vo[2] = {V, Vs}, *go[2] = {g, gs};
        for (int q = 0; q < 2; q++) {
            Vo[q][b] = 0;
            for (int i = 0; i < 2; i++) {
                go[q][2 * b + i] = 0;
                for (int j = 0; j < 2; j++) {
                    Vo[q][b] += xb[i] * M[q][i * 2 + j] * xb[j];
                    go[q][2 * b + i] += (M[q][i * 2 + j] + M[q][j * 2 + i]) * xb[j];
                }
            }
        }
        Vt[b] = 0;
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) Vt[b] += xb[i] * dP[i * 2 + j] * xb[j];
        Vw[b] = 1.2 * Vs[b];
        gw[2 * b] = 1.2 * gs[2 * b];
        gw[2 * b + 1] = 1.2 * gs[2 * b + 1];
    }
    dg_ctx *ctx = dg_ctx_create(1 << 20);
    dg_hji_learn_eq eq = {.mode = DG_HJI_MODE_BRS};
    dg_tensor *r = residual_of(ctx, gm, &eq, NB, x, V, Vt, g);
    dg_tensor *rs = residual_of(ctx, gm, &eq, NB, x, Vs, zero, gs);
    dg_tensor *rw = residual_of(ctx, gm, &eq, NB, x, Vw, zero, gw);
    /* without the discount's rho V the stationary value is off by rho x'Px */
    dg_hji_game nod = *gm;
    nod.payoff.discount = 0;
    dg_tensor *rn = residual_of(ctx, &nod, &eq, NB, x, Vs, zero, gs);
    printf("  lq: x'P(tau)x max |r| %.1e, stationary %.1e; 1.2 x'Px %.3f; without rho V %.3f\n", max_abs(r),
           max_abs(rs), max_abs(rw), max_abs(rn));
    assert_true(max_abs(r) < 1e-12);
    assert_true(max_abs(rs) < 1e-9);   /* the ARE's own residual, < 1e-10, times |x|^2 <= 2 */
    assert_true(max_abs(rw) > 0.05);
    for (int b = 0; b < NB; b++) assert_true(fabs(rn->data[b] + rho * Vs[b]) < 1e-9);
    dg_ctx_free(ctx);
    dg_hji_problem_free(p);
}

/* Obstacles, cap and stop: each term where it is active and where not, on pursuit2d's Hamiltonian
 * (H = c |p|) with V_tau = 0 and |grad V| = 1, so the PDE alone gives r = c. */
static void test_terms(void **state) {
    (void)state;
    dg_hji_problem *pp = load_yaml("game: pursuit2d\n");
    const dg_hji_game *gm = &pp->game;
    const double c = dg_hji_problem_param(pp, "speed_pursuer") - dg_hji_problem_param(pp, "speed_evader");
    enum { B = 4 };
    const double x[2 * B] = {1, 0, 0, 1, -1, 0, 0, -1}, g[2 * B] = {1, 0, 0, 1, -1, 0, 0, -1};
    const double V[B] = {0.5, 0.5, 0.5, 0.5}, Vt[B] = {0}, l[B] = {0.5, 0.9, 0.2, 0.5};
    const double obst[B] = {0.5, 0.1, 0.7, -1}, stop[B] = {1, -1, 1, 0};
    dg_ctx *ctx = dg_ctx_create(1 << 20);
    dg_hji_learn_eq eq = {.mode = DG_HJI_MODE_BRS};
    dg_tensor *r = residual_of(ctx, gm, &eq, B, x, V, Vt, g);
    for (int b = 0; b < B; b++) assert_true(fabs(r->data[b] - c) < 1e-15);
    /* BRT: V_tau - min(0, -H) = c too; with V_tau = -c exactly 0; a negative H is cut */
    eq.mode = DG_HJI_MODE_BRT;
    r = residual_of(ctx, gm, &eq, B, x, V, Vt, g);
    for (int b = 0; b < B; b++) assert_true(fabs(r->data[b] - c) < 1e-15);
    /* BRT_TARGET: max(V - l, V_tau + H): V - l = 0, -0.4, 0.3, 0 */
    eq.mode = DG_HJI_MODE_BRT_TARGET;
    eq.l = col_from(ctx, B, 1, l);
    const double Vt2[B] = {-1, -1, -1, -1};
    r = residual_of(ctx, gm, &eq, B, x, V, Vt2, g);
    const double want_t[B] = {0, c - 1 > -0.4 ? c - 1 : -0.4, 0.3, 0};
    for (int b = 0; b < B; b++) assert_true(fabs(r->data[b] - want_t[b]) < 1e-15);
    /* obstacle (BRS): min(V - g, r): V - g = 0 (held: 0), 0.4, -0.2, 1.5 */
    eq.mode = DG_HJI_MODE_BRS;
    eq.obstacle = col_from(ctx, B, 1, obst);
    r = residual_of(ctx, gm, &eq, B, x, V, Vt, g);
    const double want_o[B] = {0, fmin(0.4, c), -0.2, c};
    for (int b = 0; b < B; b++) assert_true(fabs(r->data[b] - want_o[b]) < 1e-15);
    /* cap 0.5 (BRS, no obstacle): max(V - cap, r) with V_tau + H = -1 + c < 0: held at the cap */
    eq.obstacle = NULL;
    eq.cap = 0.5;
    r = residual_of(ctx, gm, &eq, B, x, V, Vt2, g);
    for (int b = 0; b < B; b++) assert_true(fabs(r->data[b]) < 1e-15);
    eq.cap = 0.7;
    r = residual_of(ctx, gm, &eq, B, x, V, Vt2, g);
    for (int b = 0; b < B; b++) assert_true(fabs(r->data[b] - (c - 1 > -0.2 ? c - 1 : -0.2)) < 1e-15);
    /* stop: V - l where stop <= 0 (points 1 and 3), the PDE elsewhere */
    eq.cap = 0;
    eq.stop = col_from(ctx, B, 1, stop);
    r = residual_of(ctx, gm, &eq, B, x, V, Vt, g);
    const double want_s[B] = {c, V[1] - l[1], c, V[3] - l[3]};
    for (int b = 0; b < B; b++) assert_true(fabs(r->data[b] - want_s[b]) < 1e-15);
    dg_ctx_free(ctx);
    dg_hji_problem_free(pp);
}

/* -------------------------------------------- (d) networks: the exact form, weight gradients */

typedef struct net_fd {
    const dg_hji_game *gm;
    dg_mlp  m;
    int     B, exact, mode;
    double  xt[16 * 3], l[16], gl[16 * 2], tau[16], obst[16], x0[16 * 3];
} net_fd;

/* pursuit2d's residual loss of the network on the input (x, tau): exact form V = l + tau N, or
 * penalised V = N with the boundary penalty at tau = 0 added. */
static dg_tensor *net_loss(dg_ctx *ctx, dg_params *p, void *user) {
    const net_fd *u = user;
    const int B = u->B;
    dg_tensor *in = dg_from(ctx, 2, (int[]){B, 3}, u->xt), *dy, *V, *Vt, *g;
    dg_tensor *y = dg_mlp_forward_grad(ctx, &u->m, p, in, &dy);
    dg_tensor *l = dg_from(ctx, 2, (int[]){B, 1}, u->l);
    if (u->exact) {
        if (dg_hji_learn_value(ctx, 2, y, dy, dg_from(ctx, 2, (int[]){B, 1}, u->tau), l,
                               dg_from(ctx, 2, (int[]){B, 2}, u->gl), &V, &Vt, &g) != DG_OK)
            return NULL;
    } else if (dg_hji_learn_value(ctx, 2, y, dy, NULL, NULL, NULL, &V, &Vt, &g) != DG_OK) {
        return NULL;
    }
    dg_hji_learn_eq eq = {.mode = (dg_hji_mode)u->mode, .l = l};
    if (!u->exact) eq.obstacle = dg_from(ctx, 2, (int[]){B, 1}, u->obst);
    dg_tensor *loss = dg_hji_learn_loss(ctx, u->gm, &eq, in, V, Vt, g);
    if (u->exact) return loss;
    dg_tensor *y0 = dg_mlp_forward(ctx, &u->m, p, dg_from(ctx, 2, (int[]){B, 3}, u->x0));
    return dg_add(ctx, loss, dg_hji_learn_boundary(ctx, y0, l));
}

static void test_network_grad(void **state) {
    (void)state;
    dg_hji_problem *pp = load_yaml("game: pursuit2d\n");
    const double R = dg_hji_problem_param(pp, "capture_radius");
    for (int cs = 0; cs < 3; cs++) {
        net_fd u = {.gm = &pp->game, .B = 12, .exact = cs < 2,
                    .mode = cs == 0 ? DG_HJI_MODE_BRS : cs == 1 ? DG_HJI_MODE_BRT : DG_HJI_MODE_BRT_TARGET};
        dg_params *p = dg_params_create();
        dg_err e = {0};
        if (dg_mlp_init(&u.m, p, "value", 3, (int[]){16, 16}, 2, 1, &e) != DG_OK ||
            dg_mlp_set_activation(&u.m, cs == 2 ? DG_MLP_TANH : DG_MLP_SINE, 1, &e) != DG_OK)
            fail_msg("%s", e.msg);
        dg_rng rng;
        dg_rng_seed(&rng, 200 + (uint64_t)cs);
        dg_mlp_reset_params(&u.m, p, &rng);
        for (int b = 0; b < u.B; b++) {
            const double x0 = urand(&rng, -1.5, 1.5), x1 = urand(&rng, -1.5, 1.5), t = urand(&rng, 0, 1);
            const double n = hypot(x0, x1);
            u.xt[3 * b] = u.x0[3 * b] = x0;
            u.xt[3 * b + 1] = u.x0[3 * b + 1] = x1;
            u.xt[3 * b + 2] = u.tau[b] = t;
            u.x0[3 * b + 2] = 0;
            u.l[b] = n - R;
            u.gl[2 * b] = x0 / n;
            u.gl[2 * b + 1] = x1 / n;
            u.obst[b] = urand(&rng, -1, 0.5);
        }
        dg_ctx *ctx = dg_ctx_create(4 << 20);
        /* the exact form at tau = 0 is l, and its pieces are their formulas */
        if (u.exact) {
            dg_tensor *in = dg_from(ctx, 2, (int[]){u.B, 3}, u.xt), *dy, *V, *Vt, *g;
            dg_tensor *y = dg_mlp_forward_grad(ctx, &u.m, p, in, &dy);
            assert_int_equal(dg_hji_learn_value(ctx, 2, y, dy, dg_from(ctx, 2, (int[]){u.B, 1}, u.tau),
                                                dg_from(ctx, 2, (int[]){u.B, 1}, u.l),
                                                dg_from(ctx, 2, (int[]){u.B, 2}, u.gl), &V, &Vt, &g), DG_OK);
            for (int b = 0; b < u.B; b++) {
                const double N = y->data[b], Nx0 = dy->data[3 * b], Nx1 = dy->data[3 * b + 1], Nt = dy->data[3 * b + 2];
                assert_true(fabs(V->data[b] - (u.l[b] + u.tau[b] * N)) < 1e-14);
                assert_true(fabs(Vt->data[b] - (N + u.tau[b] * Nt)) < 1e-14);
                assert_true(fabs(g->data[2 * b] - (u.gl[2 * b] + u.tau[b] * Nx0)) < 1e-14);
                assert_true(fabs(g->data[2 * b + 1] - (u.gl[2 * b + 1] + u.tau[b] * Nx1)) < 1e-14);
            }
        }
        dg_gradcheck_report rep;
        if (dg_gradcheck(ctx, p, net_loss, &u, 1e-5, 1e-6, 0, &rep, &e) != DG_OK) fail_msg("case %d: %s", cs, e.msg);
        printf("  network case %d (%s, %s): loss weight gradient rel err %.1e over %lld weights\n", cs,
               cs == 2 ? "tanh" : "sine", u.exact ? "exact boundary" : "penalised, obstacle", rep.max_rel_err,
               (long long)rep.checked);
        check_gradcheck(cs == 0 ? "sine BRS exact" : cs == 1 ? "sine BRT exact" : "tanh BRT_TARGET penalised", p, &rep,
                        1e-6);
        dg_ctx_free(ctx);
        dg_params_free(p);
    }
    dg_hji_problem_free(pp);
}

/* ----------------------------------------------------------- refusals, shapes */

static void ham_generic(void *user, double t, int n, const double *x, const double *p, double *h) {
    (void)user, (void)t, (void)x;
    for (int i = 0; i < n; i++) h[i] = fabs(p[i]);
}
static void alpha_generic(void *user, double t, int n, const double *x, const double *pmin, const double *pmax,
                          double *alpha) {
    (void)user, (void)t, (void)x, (void)pmin, (void)pmax;
    for (int i = 0; i < n; i++) alpha[i] = 1;
}

static void test_refusals(void **state) {
    (void)state;
    dg_hji_game gen = {.nx = 1, .ham = ham_generic, .alpha = alpha_generic};
    dg_err e = {0};
    assert_int_equal(dg_hji_learn_check(&gen, "smooth", &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "smooth"));
    assert_non_null(strstr(e.msg, "generic Hamiltonian"));
    dg_ctx *ctx = dg_ctx_create(1 << 16);
    const double one[2] = {1, 2};
    assert_null(dg_hji_learn_hamiltonian(ctx, &gen, col_from(ctx, 2, 1, one), col_from(ctx, 2, 1, one)));
    assert_int_equal(dg_ctx_status(ctx), DG_ERR_ARG);
    assert_non_null(strstr(dg_ctx_error(ctx), "generic Hamiltonian"));
    /* an affine game passes; bad shapes are refused */
    dg_hji_game g = game3(DG_HJI_SET_BOX, DG_HJI_ROLE_MIN, DG_HJI_SET_BALL, DG_HJI_ROLE_MAX, 0);
    assert_int_equal(dg_hji_learn_check(&g, "three", &e), DG_OK);
    dg_ctx_reset(ctx);
    const double x6[6] = {0};
    assert_null(dg_hji_learn_hamiltonian(ctx, &g, col_from(ctx, 2, 3, x6), col_from(ctx, 3, 2, x6)));
    assert_int_equal(dg_ctx_status(ctx), DG_ERR_SHAPE);
    dg_ctx_reset(ctx);
    dg_hji_learn_eq eq = {.mode = DG_HJI_MODE_BRT_TARGET};   /* no l */
    assert_null(dg_hji_learn_residual(ctx, &g, &eq, col_from(ctx, 2, 3, x6), col_from(ctx, 2, 1, one),
                                      col_from(ctx, 2, 1, one), col_from(ctx, 2, 3, x6)));
    assert_int_equal(dg_ctx_status(ctx), DG_ERR_ARG);
    assert_non_null(strstr(dg_ctx_error(ctx), "l(x)"));
    dg_ctx_reset(ctx);
    dg_tensor *V, *Vt, *gr;
    assert_int_equal(dg_hji_learn_value(ctx, 3, col_from(ctx, 2, 1, one), col_from(ctx, 2, 3, x6), NULL, NULL, NULL,
                                        &V, &Vt, &gr), DG_ERR_SHAPE);
    assert_null(V);
    dg_ctx_free(ctx);
}

/* The problem's v0 at points: exact on the nodes; air3d's target |(x, y)| - r everywhere (the
 * formula at the point, not the grid's interpolation), and its gradient the radial unit vector
 * away from the kink. */
static void test_target(void **state) {
    (void)state;
    dg_hji_problem *p = load_yaml("game: air3d\n");
    const double R = dg_hji_problem_param(p, "capture_radius");
    enum { B = 32 };
    double x[3 * B], l[B], g[3 * B];
    dg_rng rng;
    dg_rng_seed(&rng, 77);
    for (int b = 0; b < B; b++) {
        const int64_t j = (int64_t)(dg_rng_uniform(&rng, 0, 1) * (float)p->grid.nodes) % p->grid.nodes;
        dg_hji_grid_point(&p->grid, j, x + 3 * b);
    }
    dg_err e = {0};
    assert_int_equal(dg_hji_learn_target(p, B, x, l, NULL, &e), DG_OK);
    for (int b = 0; b < B; b++) assert_true(fabs(l[b] - (hypot(x[3 * b], x[3 * b + 1]) - R)) < 1e-12);
    double worst = 0, worst_g = 0;
    for (int b = 0; b < B; b++) {
        double n;
        do {
            for (int k = 0; k < 3; k++) x[3 * b + k] = urand(&rng, p->grid.lo[k], p->grid.hi[k]);
            n = hypot(x[3 * b], x[3 * b + 1]);
        } while (n < 2);
    }
    assert_int_equal(dg_hji_learn_target(p, B, x, l, g, &e), DG_OK);
    for (int b = 0; b < B; b++) {
        const double n = hypot(x[3 * b], x[3 * b + 1]);
        worst = fmax(worst, fabs(l[b] - (n - R)));
        worst_g = fmax(worst_g, hypot(g[3 * b] - x[3 * b] / n, g[3 * b + 1] - x[3 * b + 1] / n) + fabs(g[3 * b + 2]));
    }
    printf("  air3d target at points: max |l - (|(x,y)| - r)| %.1e, gradient %.1e\n", worst, worst_g);
    assert_true(worst < 1e-12 && worst_g < 1e-12);
    dg_hji_problem_free(p);
}

/* ------------------------------------------------- (f) beyond the grid's six axes */

/* An 8-D model game (four simple-motion pairs, and four axes that integrate them), grid.n 15 an axis:
 * 2.6e9 nodes, an array of 20 GB. */
#define DRIFT8                                                                                                  \
    "game: model\nmodel:\n  name: drift8\n  constants: {vp: 1.0, ve: 0.5, radius: 0.5}\n"                        \
    "  state: {p1: [-1, 1], p2: [-1, 1], p3: [-1, 1], p4: [-1, 1], p5: [-1, 1], p6: [-1, 1], p7: [-1, 1], "       \
    "p8: [-1, 1]}\n"                                                                                            \
    "  inputs:\n    a: {dim: 4, lo: -1, hi: 1, role: min}\n    b: {dim: 4, lo: -1, hi: 1, role: max}\n"          \
    "  dynamics:\n    p1: ve*b1 - vp*a1\n    p2: ve*b2 - vp*a2\n    p3: ve*b3 - vp*a3\n    p4: ve*b4 - vp*a4\n" \
    "    p5: p1\n    p6: p2\n    p7: p3\n    p8: p4\n"                                                          \
    "  target: sqrt(p1^2 + p2^2 + p3^2 + p4^2 + p5^2 + p6^2 + p7^2 + p8^2) - radius\n"                          \
    "t_end: 0.5\ngrid:\n  n: [15, 15, 15, 15, 15, 15, 15, 15]\n"

/* the problem of yaml by how (0 whole, 1 split, 2 points); NULL with e set */
static dg_hji_problem *load_how(const char *yaml, int how, dg_err *e) {
    memset(e, 0, sizeof *e);
    dg_cfg *c = dg_cfg_parse(yaml, strlen(yaml), "hji.yaml", e);
    if (!c) return NULL;
    dg_hji_problem *p = how == 2 ? dg_hji_problem_load_points(c, e)
                        : how    ? dg_hji_problem_load_split(c, e)
                                 : dg_hji_problem_load(c, e);
    dg_cfg_free(c);
    return p;
}

/* A problem of 8 state dimensions: the grid solver's loads refuse it naming grid.n (before any array
 * of its n^d nodes), dg_hji_problem_load_points takes it as a box without node arrays, its target at
 * points is the formula with its gradient, dg_hji_solve refuses its grid, payoff: time is refused,
 * an obstacle is there at points, and a learner takes steps on it and evaluates its network. */
static void test_beyond_grid(void **state) {
    (void)state;
    dg_err e;
    for (int how = 0; how < 2; how++) {
        assert_null(load_how(DRIFT8, how, &e));
        assert_int_equal(e.status, DG_ERR_CONFIG);
        assert_non_null(strstr(e.msg, "hji.yaml:"));
        assert_non_null(strstr(e.msg, "key 'grid.n'"));
        assert_non_null(strstr(e.msg, "8 state dimensions: the grid solver takes at most 6"));
    }
    dg_hji_problem *p = load_how(DRIFT8, 2, &e);
    if (!p) fail_msg("%s", e.msg);
    assert_int_equal(p->grid.ndim, 8);
    assert_true(p->grid.nodes == 0 && !p->target && !p->obstacle && !p->initial && !p->stop);
    assert_false(dg_hji_problem_has_obstacle(p));
    assert_false(dg_hji_problem_has_stop(p));
    enum { B = 16 };
    double x[8 * B], l[B], g[8 * B];
    dg_rng rng;
    dg_rng_seed(&rng, 5);
    for (int i = 0; i < 8 * B; i++) x[i] = urand(&rng, -1, 1);
    assert_int_equal(dg_hji_learn_target(p, B, x, l, g, &e), DG_OK);
    for (int b = 0; b < B; b++) {
        double n2 = 0;
        for (int k = 0; k < 8; k++) n2 += x[8 * b + k] * x[8 * b + k];
        assert_true(fabs(l[b] - (sqrt(n2) - 0.5)) < 1e-12);
        for (int k = 0; k < 8; k++) assert_true(fabs(g[8 * b + k] - x[8 * b + k] / sqrt(n2)) < 1e-12);
    }
    double V[1];
    assert_int_equal(dg_hji_solve(&p->grid, &p->game, &p->opts, V, NULL, 1, &p->t_end, V, NULL, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "1 to 6 axes"));
    dg_hji_learn_opts o;
    dg_hji_learn_opts_default(&o);
    o.hidden[0] = o.hidden[1] = 8, o.nhidden = 2, o.points = 32, o.pretrain = 1, o.curriculum = 1, o.lr = 1e-3;
    dg_hji_learner *L = dg_hji_learner_create(p, &o, &e);
    if (!L) fail_msg("%s", e.msg);
    dg_hji_learn_metrics m;
    for (int i = 0; i < 3; i++) assert_int_equal(dg_hji_learner_step(L, &m, &e), DG_OK);
    assert_true(isfinite(m.loss) && m.tau_max == p->t_end);
    double tau[B], v[B], vt[B], gr[8 * B];
    for (int b = 0; b < B; b++) tau[b] = 0.25;
    assert_int_equal(dg_hji_learn_eval_grad(dg_hji_learner_net(L), p, B, x, tau, v, vt, gr, &e), DG_OK);
    for (int b = 0; b < B; b++) assert_true(isfinite(v[b]) && isfinite(vt[b]) && isfinite(gr[8 * b + 7]));
    dg_hji_learner_free(L);
    dg_hji_problem_free(p);
    /* payoff: time needs the grid's front speed: refused; an obstacle is there at points alone */
    assert_null(load_how(DRIFT8 "payoff: time\n", 2, &e));
    assert_non_null(strstr(e.msg, "key 'payoff': time, with 8 state dimensions"));
    p = load_how(DRIFT8 "obstacles:\n  - {shape: ball, axes: [6, 7], center: [0.5, 0.5], radius: 0.25}\n", 2, &e);
    if (!p) fail_msg("%s", e.msg);
    assert_true(dg_hji_problem_has_obstacle(p) && !p->obstacle);
    double ob;
    for (int k = 0; k < 8; k++) x[k] = k >= 6 ? 0.5 : 0;
    assert_int_equal(dg_hji_problem_obstacle_at(p, 1, x, &ob, NULL, &e), DG_OK);
    assert_true(fabs(ob - 0.25) < 1e-12);   /* > 0 inside: the radius at the centre */
    dg_hji_problem_free(p);
}

/* ------------------------------------------------- (g) collision9d, three Dubins aircraft */

/* collision9d (configs/hji/collision9d.yaml): its dynamics against the Dubins formulas written here;
 * H against the solver's and the reference, and its closed form -(sum_i v (cos th_i p_xi + sin th_i
 * p_yi) + w sum_i |p_thi|) (every turn maximises); dH/dp by finite differences; the target, the
 * smallest pairwise distance minus R, against its formula, its gradient against central differences
 * away from the kinks, 2 pi along a heading changing nothing (periodic headings). */
static void test_collision9d(void **state) {
    (void)state;
    dg_hji_problem *p = load_cfg("collision9d");
    const dg_hji_game *gm = &p->game;
    const double v = dg_hji_problem_param(p, "speed"), w = dg_hji_problem_param(p, "turn_rate"),
                 R = dg_hji_problem_param(p, "collision_radius");
    assert_true(v == 0.6 && w == 1.1 && R == 0.25 && p->t_end == 1.0 && p->opts.mode == DG_HJI_MODE_BRT_TARGET);
    assert_int_equal(gm->nx, 9);
    assert_true(gm->u.dim == 3 && gm->u.role == DG_HJI_ROLE_MAX && gm->d.dim == 0);
    for (int k = 0; k < 9; k++) assert_int_equal(p->grid.bc[k] == DG_HJI_BC_PERIODIC, k >= 6);
    dg_rng rng;
    dg_rng_seed(&rng, 909);
    double worst_h = 0;
    for (int b = 0; b < NB; b++) {
        double x[9], q[9], f[9] = {0}, G[27] = {0}, D[9] = {0};
        for (int k = 0; k < 9; k++) x[k] = k < 6 ? urand(&rng, -1, 1) : urand(&rng, -PI, PI);
        for (int k = 0; k < 9; k++) q[k] = urand(&rng, -2, 2);
        gm->dyn(gm->user, x, f, G, D);
        double h = 0;
        for (int i = 0; i < 3; i++) {
            assert_true(fabs(f[2 * i] - v * cos(x[6 + i])) < 1e-15 && fabs(f[2 * i + 1] - v * sin(x[6 + i])) < 1e-15);
            assert_true(f[6 + i] == 0);
            for (int k = 0; k < 9; k++)
                for (int j = 0; j < 3; j++) assert_true(G[k * 3 + j] == (k == 6 + j ? 1 : 0));
            h += v * (cos(x[6 + i]) * q[2 * i] + sin(x[6 + i]) * q[2 * i + 1]) + w * fabs(q[6 + i]);
        }
        worst_h = fmax(worst_h, fabs(dg_hji_game_hamiltonian(gm, x, q) + h));
    }
    printf("  collision9d: H against its closed form: max |diff| %.1e\n", worst_h);
    assert_true(worst_h < 1e-13);
    check_ham("collision9d (3 turns, max)", gm, PI, 2, 910);
    check_ham_grad("collision9d (3 turns, max)", gm, PI, 2, 911);
    /* the target and its gradient */
    dg_err e = {0};
    int checked = 0;
    double worst = 0, worst_g = 0;
    for (int b = 0; b < 200; b++) {
        double x[9], l, g[9], y[9], lp, lm;
        for (int k = 0; k < 9; k++) x[k] = k < 6 ? urand(&rng, -1, 1) : urand(&rng, -PI, PI);
        const double d12 = hypot(x[0] - x[2], x[1] - x[3]), d13 = hypot(x[0] - x[4], x[1] - x[5]),
                     d23 = hypot(x[2] - x[4], x[3] - x[5]);
        assert_int_equal(dg_hji_learn_target(p, 1, x, &l, g, &e), DG_OK);
        worst = fmax(worst, fabs(l - (fmin(d12, fmin(d13, d23)) - R)));
        const double s[3] = {d12, d13, d23};   /* a kink where the two nearest pairs are within 1e-4 */
        const double lo = fmin(s[0], fmin(s[1], s[2])), mid = s[0] + s[1] + s[2] - lo - fmax(s[0], fmax(s[1], s[2]));
        if (mid - lo < 1e-4) continue;
        checked++;
        for (int k = 0; k < 9; k++) {
            memcpy(y, x, sizeof y);
            y[k] = x[k] + 1e-6;
            dg_hji_learn_target(p, 1, y, &lp, NULL, &e);
            y[k] = x[k] - 1e-6;
            dg_hji_learn_target(p, 1, y, &lm, NULL, &e);
            worst_g = fmax(worst_g, fabs(g[k] - (lp - lm) / 2e-6));
        }
        memcpy(y, x, sizeof y);
        y[7] += 2 * PI;   /* a heading a turn on: the same point */
        assert_int_equal(dg_hji_learn_target(p, 1, y, &lp, NULL, &e), DG_OK);
        assert_true(lp == l);
    }
    printf("  collision9d: target at %d points: max |l - formula| %.1e, gradient - central difference %.1e\n",
           checked, worst, worst_g);
    assert_true(checked > 150 && worst < 1e-15 && worst_g < 1e-7);
    dg_hji_problem_free(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hamiltonian_values),
        cmocka_unit_test(test_hamiltonian_grad),
        cmocka_unit_test(test_exact_pursuit),
        cmocka_unit_test(test_exact_lq),
        cmocka_unit_test(test_terms),
        cmocka_unit_test(test_network_grad),
        cmocka_unit_test(test_target),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_beyond_grid),
        cmocka_unit_test(test_collision9d),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
