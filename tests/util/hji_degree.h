/* Games of degree with exact values, for configs/hji/{pursuit2d_time, zermelo_time,
 * double_integrator_time, lq_game, lq_discounted}.yaml: shared by tests/test_hji_degree.c (errors
 * asserted) and bench/hji_degree.c (the tables of docs/hji.md). Static inline, header-only.
 *   - time to capture in simple pursuit, T = (|x| - r) / (v_p - v_e);
 *   - Zermelo's boat in a constant current, T the positive root of |x + w t| = t + R;
 *   - the double integrator's minimum time to a disk: the minimum over the disk's rim of the
 *     bang-bang time to a point (one switch);
 *   - the LQ game's P(tau) from the Riccati ODE (RK4), and the discounted game's P from the
 *     algebraic Riccati equation (the ODE marched to its fixed point, residual checked);
 *   - the error of a value against one of them over a region of the grid. */
#ifndef DG_TESTS_UTIL_HJI_DEGREE_H
#define DG_TESTS_UTIL_HJI_DEGREE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/config.h"

#include "difgames/hji.h"

/* ---------------------------------------------------------------- time to reach */

/* Simple pursuit: the time to bring |x| within r at closing speed v_p - v_e. */
static inline double deg_pursuit_time(const double *x, double vp, double ve, double r) {
    const double d = sqrt(x[0] * x[0] + x[1] * x[1]);
    return d <= r ? 0 : (d - r) / (vp - ve);
}

/* Zermelo, x' = u + w, |u| <= 1, |w| < 1: at time t the boat can be anywhere in the disk of radius t
 * about x + w t, so T is the least t >= 0 with |x + w t| <= t + R: the positive root of
 * (|w|^2 - 1) t^2 + 2 (x.w - R) t + |x|^2 - R^2 = 0 (the roots' product is negative outside). */
static inline double deg_zermelo_time(const double *x, const double *w, double R) {
    const double c = x[0] * x[0] + x[1] * x[1] - R * R;
    if (c <= 0) return 0;
    const double a = w[0] * w[0] + w[1] * w[1] - 1, b = 2 * (x[0] * w[0] + x[1] * w[1] - R);
    return (-b - sqrt(b * b - 4 * a * c)) / (2 * a);
}

/* Double integrator x1' = x2, x2' = u, |u| <= 1: the least time from x to the state y, bang-bang with
 * at most one switch at velocity s: u = +1 then -1 (s^2 = y1 + y2^2/2 - x1 + x2^2/2, s >= x2, y2), or
 * u = -1 then +1 (s^2 = x1 + x2^2/2 - y1 + y2^2/2, s <= x2, y2); both signs of s are tried. */
static inline double deg_di_time_to(const double *x, const double *y) {
    double best = INFINITY;
    const double qa = (y[0] + 0.5 * y[1] * y[1]) - (x[0] - 0.5 * x[1] * x[1]);
    const double qb = (x[0] + 0.5 * x[1] * x[1]) - (y[0] - 0.5 * y[1] * y[1]);
    for (int sg = -1; sg <= 1; sg += 2) {
        if (qa >= 0) {
            const double s = sg * sqrt(qa);
            if (s >= x[1] - 1e-12 && s >= y[1] - 1e-12 && 2 * s - x[1] - y[1] < best) best = 2 * s - x[1] - y[1];
        }
        if (qb >= 0) {
            const double s = sg * sqrt(qb);
            if (s <= x[1] + 1e-12 && s <= y[1] + 1e-12 && x[1] + y[1] - 2 * s < best) best = x[1] + y[1] - 2 * s;
        }
    }
    return best;
}

/* ... to the disk of radius r at the origin: the first time the path meets its rim, the least time to
 * a point of the rim (m points, refined by golden sections around the best). */
static inline double deg_di_time(const double *x, double r) {
    if (x[0] * x[0] + x[1] * x[1] <= r * r) return 0;
    const int m = 720;
    double best = INFINITY, bt = 0;
    for (int i = 0; i < m; i++) {
        const double th = 2 * 3.141592653589793 * i / m, y[2] = {r * cos(th), r * sin(th)};
        const double t = deg_di_time_to(x, y);
        if (t < best) {
            best = t;
            bt = th;
        }
    }
    double a = bt - 2 * 3.141592653589793 / m, b = bt + 2 * 3.141592653589793 / m;
    for (int it = 0; it < 60; it++) {
        const double c = b - 0.618033988749895 * (b - a), d = a + 0.618033988749895 * (b - a);
        const double yc[2] = {r * cos(c), r * sin(c)}, yd[2] = {r * cos(d), r * sin(d)};
        if (deg_di_time_to(x, yc) < deg_di_time_to(x, yd)) b = d;
        else a = c;
    }
    const double th = 0.5 * (a + b), y[2] = {r * cos(th), r * sin(th)};
    const double t = deg_di_time_to(x, y);
    return t < best ? t : best;
}

/* ------------------------------------------------------------------- LQ games */

/* dP/dtau = Q + P A + A'P - P S P - rho P (2 x 2), S = B B'/R - D D'/gamma^2 (time-to-go). */
static inline void deg_riccati_rhs(const double *P, const double *A, const double *Q, const double *S, double rho,
                                   double *dP) {
    double PA[4], SP[4];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            PA[i * 2 + j] = P[i * 2] * A[j] + P[i * 2 + 1] * A[2 + j];
            SP[i * 2 + j] = S[i * 2] * P[j] + S[i * 2 + 1] * P[2 + j];
        }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            const double pap = PA[i * 2 + j] + PA[j * 2 + i];   /* PA + (PA)' = PA + A'P */
            const double psp = P[i * 2] * SP[j] + P[i * 2 + 1] * SP[2 + j];
            dP[i * 2 + j] = Q[i * 2 + j] + pap - psp - rho * P[i * 2 + j];
        }
}

/* The game x' = A x + B u + D d (2 x 2, inputs scalar), L = x'Qx + R u^2 - gamma^2 d^2, discount rho,
 * terminal cost x'Q_T x: P(tau) by RK4 in n steps from P(0) = Q_T into P. */
static inline void deg_riccati(const double *A, const double *B, const double *D, const double *Q, double R,
                               double gamma, double rho, const double *QT, double tau, int n, double *P) {
    double S[4];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) S[i * 2 + j] = B[i] * B[j] / R - D[i] * D[j] / (gamma * gamma);
    memcpy(P, QT, 4 * sizeof *P);
    const double h = tau / n;
    for (int s = 0; s < n; s++) {
        double k1[4], k2[4], k3[4], k4[4], t[4];
        deg_riccati_rhs(P, A, Q, S, rho, k1);
        for (int i = 0; i < 4; i++) t[i] = P[i] + 0.5 * h * k1[i];
        deg_riccati_rhs(t, A, Q, S, rho, k2);
        for (int i = 0; i < 4; i++) t[i] = P[i] + 0.5 * h * k2[i];
        deg_riccati_rhs(t, A, Q, S, rho, k3);
        for (int i = 0; i < 4; i++) t[i] = P[i] + h * k3[i];
        deg_riccati_rhs(t, A, Q, S, rho, k4);
        for (int i = 0; i < 4; i++) P[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
    }
}

/* The algebraic Riccati equation (A - rho/2)'P + P (A - rho/2) + Q - P S P = 0 of the discounted game:
 * the ODE from P = 0 marched until it stops moving (its stabilising solution); returns the equation's
 * largest residual there. */
static inline double deg_are(const double *A, const double *B, const double *D, const double *Q, double R,
                             double gamma, double rho, double *P) {
    const double zero[4] = {0};
    double S[4], r[4];
    deg_riccati(A, B, D, Q, R, gamma, rho, zero, 200, 200000, P);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) S[i * 2 + j] = B[i] * B[j] / R - D[i] * D[j] / (gamma * gamma);
    deg_riccati_rhs(P, A, Q, S, rho, r);
    double m = 0;
    for (int i = 0; i < 4; i++) m = fmax(m, fabs(r[i]));
    return m;
}

/* ---------------------------------------------------------------------- errors */

/* An exact value at a point (user: its constants). */
typedef double (*deg_exact_fn)(const void *user, const double *x);

typedef struct deg_error {
    double rel_l1;     /* sum |V - V*| / sum |V*| over the region */
    double mean_rel;   /* mean of |V - V*| / |V*| over the region's nodes with |V*| >= floor */
    double max_abs;    /* max |V - V*| over the region */
    int    nodes;      /* nodes in the region */
} deg_error;

/* V (g's nodes) against exact over the nodes with |x|_inf <= box (every axis) and exact >= lo (outside
 * a target: lo > 0) and below hi (under a cap); mean_rel over those with exact >= floor. */
static inline deg_error deg_compare(const dg_hji_grid *g, const double *V, deg_exact_fn exact, const void *user,
                                    double box, double lo, double hi, double floor) {
    deg_error r = {0, 0, 0, 0};
    double num = 0, den = 0, rs = 0;
    int nr = 0;
    for (int64_t j = 0; j < g->nodes; j++) {
        double x[DG_HJI_MAX_DIMS];
        dg_hji_grid_point(g, j, x);
        int in = 1;
        for (int k = 0; k < g->ndim; k++) in &= fabs(x[k]) <= box + 1e-9;
        if (!in) continue;
        const double v = exact(user, x);
        if (!(v >= lo) || !(v < hi)) continue;
        const double d = fabs(V[j] - v);
        num += d;
        den += fabs(v);
        if (d > r.max_abs) r.max_abs = d;
        if (fabs(v) >= floor) {
            rs += d / fabs(v);
            nr++;
        }
        r.nodes++;
    }
    r.rel_l1 = den > 0 ? num / den : 0;
    r.mean_rel = nr ? rs / nr : 0;
    return r;
}

/* ------------------------------------------------------------- the five configs */

/* Which exact value a config has. */
typedef enum deg_kind { DEG_PURSUIT = 0, DEG_ZERMELO, DEG_DI, DEG_LQ } deg_kind;

typedef struct deg_case {
    const char *name;    /* configs/hji/<name>.yaml */
    deg_kind    kind;
    double      box;     /* the region compared: |x|_inf <= box (and outside the target, under the cap) */
} deg_case;

static const deg_case DEG_CASES[] = {
    {"pursuit2d_time", DEG_PURSUIT, 2},
    {"zermelo_time", DEG_ZERMELO, 2},
    {"double_integrator_time", DEG_DI, 1},
    {"lq_game", DEG_LQ, 1},
    {"lq_discounted", DEG_LQ, 1},
};
#define DEG_NCASES ((int)(sizeof DEG_CASES / sizeof DEG_CASES[0]))

/* The exact value of a loaded problem, every constant read from it (its keys), at x. */
typedef struct deg_exact {
    const dg_hji_problem *p;
    deg_kind kind;
    double   P[4];       /* LQ: V = x'Px */
    double   are_residual;
} deg_exact;

static inline double deg_exact_at(const void *user, const double *x) {
    const deg_exact *q = user;
    const dg_hji_problem *p = q->p;
    switch (q->kind) {
    case DEG_PURSUIT:
        return deg_pursuit_time(x, dg_hji_problem_param(p, "speed_pursuer"), dg_hji_problem_param(p, "speed_evader"),
                                dg_hji_problem_param(p, "capture_radius"));
    case DEG_ZERMELO: return deg_zermelo_time(x, p->lin.drift, dg_hji_problem_param(p, "target_radius"));
    case DEG_DI: return deg_di_time(x, dg_hji_problem_param(p, "target_radius"));
    default: return x[0] * x[0] * q->P[0] + x[0] * x[1] * (q->P[1] + q->P[2]) + x[1] * x[1] * q->P[3];
    }
}

/* q for problem p: the LQ game's P from its matrices and weights (Riccati ODE to t_end, or the ARE
 * when stationary). */
static inline void deg_exact_init(deg_exact *q, const dg_hji_problem *p, deg_kind kind) {
    memset(q, 0, sizeof *q);
    q->p = p;
    q->kind = kind;
    if (kind != DEG_LQ) return;
    const dg_hji_linear *l = &p->lin;
    const double R = l->u_weight, gamma = sqrt(l->d_weight), rho = p->game.payoff.discount;
    if (p->stationary) q->are_residual = deg_are(l->A, l->B, l->D, p->game.payoff.Q, R, gamma, rho, q->P);
    else deg_riccati(l->A, l->B, l->D, p->game.payoff.Q, R, gamma, rho, p->terminal, p->t_end, 20000, q->P);
}

/* The config at path with its grid set to n nodes per axis (0: its own), accuracy acc and solver.method
 * method (NULL: its own), solved with one thread and compared over c's region: *err, *st, and the value
 * into *Vout when it is not NULL (the caller frees it). Returns 0, or 1 with msg set. */
static inline int deg_run(const char *path, const deg_case *c, int n, const char *acc, const char *method,
                          deg_error *err, dg_hji_stats *st, double **Vout, char *msg, size_t size) {
    dg_err e = {0};
    dg_cfg *cfg = dg_cfg_load(path, &e);
    char buf[32];
    int rc = 1;
    dg_hji_problem *p = NULL;
    double *V = NULL;
    if (cfg && n > 0) {
        snprintf(buf, sizeof buf, "%d", n);
        if (!dg_cfg_set(cfg, "grid.n[0]", buf, &e)) dg_cfg_set(cfg, "grid.n[1]", buf, &e);
    }
    if (cfg && !e.status && acc) dg_cfg_set(cfg, "accuracy", acc, &e);
    if (cfg && !e.status && method) dg_cfg_set(cfg, "solver.method", method, &e);
    if (cfg && !e.status) p = dg_hji_problem_load(cfg, &e);
    if (p && !dg_cfg_check_unused(cfg, &e)) {
        p->opts.threads = 1;
        V = malloc((size_t)p->grid.nodes * sizeof *V);
        if (V && !dg_hji_problem_solve(p, V, st, &e)) {
            deg_exact q;
            deg_exact_init(&q, p, c->kind);
            const int lq = c->kind == DEG_LQ;
            /* time to reach: outside the target (T > 0) and under the cap; mean_rel where T >= 0.5 */
            *err = deg_compare(&p->grid, V, deg_exact_at, &q, c->box, lq ? -INFINITY : 1e-12,
                               lq ? INFINITY : p->t_end, lq ? 0.05 : 0.5);
            rc = 0;
        }
    }
    if (rc) snprintf(msg, size, "%.200s: %.300s", path, e.msg[0] ? e.msg : "out of memory");
    if (!rc && Vout) {
        *Vout = V;
        V = NULL;
    }
    free(V);
    dg_hji_problem_free(p);
    dg_cfg_free(cfg);
    return rc;
}

#endif
