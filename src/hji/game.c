/* Games at a single state: checks, the players' optimal inputs, the Hamiltonian, the dynamics.
 * These are what a simulation of the equilibrium feedback strategies calls at every step. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "hji/internal.h"

#define MAXE (DG_HJI_MAX_DIMS * (1 + 2 * DG_HJI_MAX_INPUT))

/* ----------------------------------------------------------------- helpers */

static dg_status check_input(const dg_hji_input *in, const char *who, dg_err *e) {
    if (in->dim < 0 || in->dim > DG_HJI_MAX_INPUT)
        return dg_err_set(e, DG_ERR_ARG, "hji game: %s has %d components, expected 0 to %d", who, in->dim,
                          DG_HJI_MAX_INPUT);
    if (in->dim == 0) return DG_OK;
    if (in->role != DG_HJI_ROLE_MIN && in->role != DG_HJI_ROLE_MAX)
        return dg_err_set(e, DG_ERR_ARG, "hji game: %s role must be DG_HJI_ROLE_MIN or DG_HJI_ROLE_MAX", who);
    if (in->set == DG_HJI_SET_QUAD || in->set == DG_HJI_SET_BOX_COST) {
        if (!(in->weight > 0) || !isfinite(in->weight))
            return dg_err_set(e, DG_ERR_ARG, "hji game: %s quadratic cost weight %g, expected > 0", who, in->weight);
    } else if (in->set == DG_HJI_SET_BALL) {
        if (!(in->radius >= 0) || !isfinite(in->radius))
            return dg_err_set(e, DG_ERR_ARG, "hji game: %s ball radius %g, expected >= 0", who, in->radius);
        for (int j = 0; j < in->dim; j++)
            if (!isfinite(in->center[j]))
                return dg_err_set(e, DG_ERR_ARG, "hji game: %s ball centre[%d] is not finite", who, j);
    }
    if (in->set == DG_HJI_SET_BOX || in->set == DG_HJI_SET_BOX_COST) {
        for (int j = 0; j < in->dim; j++)
            if (!isfinite(in->lo[j]) || !isfinite(in->hi[j]) || in->lo[j] > in->hi[j])
                return dg_err_set(e, DG_ERR_ARG, "hji game: %s box [%g, %g] on component %d is empty or "
                                  "not finite", who, in->lo[j], in->hi[j], j);
    } else if (in->set != DG_HJI_SET_BALL && in->set != DG_HJI_SET_QUAD) {
        return dg_err_set(e, DG_ERR_ARG, "hji game: %s set must be DG_HJI_SET_BOX, _BALL, _QUAD or _BOX_COST", who);
    }
    return DG_OK;
}

/* f, G, D at x into v (nx + nx nu + nx nd), zeroed first. */
static void eval(const dg_hji_game *gm, const double *x, double *v) {
    const int nx = gm->nx;
    memset(v, 0, (size_t)(nx * (1 + gm->u.dim + gm->d.dim)) * sizeof *v);
    gm->dyn(gm->user, x, v, v + nx, v + nx + nx * gm->u.dim);
}

/* s = M^T p for the block M (nx, m). */
static void project(const double *M, int nx, int m, const double *p, double *s) {
    for (int j = 0; j < m; j++) {
        s[j] = 0;
        for (int k = 0; k < nx; k++) s[j] += M[k * m + j] * p[k];
    }
}

/* The input that takes s.v to its extreme for the player's role, into v; returns s.v there. A QUAD
 * player's extreme is of s.v - sg weight |v|^2 (its running cost counted in): sg |s|^2 / (4 weight). */
static double best(const dg_hji_input *in, const double *s, double *v) {
    const double sg = in->role == DG_HJI_ROLE_MAX ? 1 : -1;
    double val = 0;
    if (in->set == DG_HJI_SET_QUAD) {
        double n2 = 0;
        for (int j = 0; j < in->dim; j++) {
            n2 += s[j] * s[j];
            if (v) v[j] = sg * s[j] / (2 * in->weight);
        }
        return sg * n2 / (4 * in->weight);
    }
    if (in->set == DG_HJI_SET_BALL) {
        double n2 = 0;
        for (int j = 0; j < in->dim; j++) n2 += s[j] * s[j];
        const double nrm = sqrt(n2);
        for (int j = 0; j < in->dim; j++) {
            const double vj = in->center[j] + (nrm > 0 ? sg * in->radius * s[j] / nrm : 0);
            if (v) v[j] = vj;
            val += s[j] * vj;
        }
    } else if (in->set == DG_HJI_SET_BOX_COST) {  /* the clipped extremum of s v - sg weight v^2 */
        for (int j = 0; j < in->dim; j++) {
            double vj = sg * s[j] / (2 * in->weight);
            vj = vj < in->lo[j] ? in->lo[j] : vj > in->hi[j] ? in->hi[j] : vj;
            if (v) v[j] = vj;
            val += s[j] * vj - sg * in->weight * vj * vj;
        }
    } else {
        for (int j = 0; j < in->dim; j++) {
            const double x = sg * s[j];
            const double vj = x > 0 ? in->hi[j] : x < 0 ? in->lo[j] : 0.5 * (in->lo[j] + in->hi[j]);
            if (v) v[j] = vj;
            val += s[j] * vj;
        }
    }
    return val;
}

/* running + x'Qx of a game of degree */
static double state_cost(const dg_hji_game *gm, const double *x) {
    const int nx = gm->nx;
    double r = gm->payoff.running + (gm->payoff.cost ? gm->payoff.cost(gm->user, x) : 0);
    for (int i = 0; i < nx; i++) {
        double qi = 0;
        for (int j = 0; j < nx; j++) qi += gm->payoff.Q[i * nx + j] * x[j];
        r += x[i] * qi;
    }
    return r;
}

/* A player's bound on |dH/dp_k| (G its block (nx, m) at x), for |p_i| <= P[i]: |G_k.c| plus
 * sum_j |G_kj| r_j (box), radius |G_k.| (ball), or sum_j |G_kj| S_j / (2 weight) with
 * S_j = sum_i |G_ij| P_i >= |(G^T p)_j| (QUAD: it grows with |p|). */
static double input_bound(const dg_hji_input *in, const double *G, int nx, int k, const double *P) {
    const int m = in->dim;
    double cen = 0, rad = 0;
    for (int j = 0; j < m; j++) {
        const double gkj = G[k * m + j];
        if (in->set == DG_HJI_SET_QUAD) {
            double S = 0;
            for (int i = 0; i < nx; i++) S += fabs(G[i * m + j]) * P[i];
            rad += fabs(gkj) * S / (2 * in->weight);
        } else if (in->set == DG_HJI_SET_BALL) {
            cen += gkj * in->center[j];
            rad += gkj * gkj;
        } else {
            cen += gkj * 0.5 * (in->lo[j] + in->hi[j]);
            rad += fabs(gkj) * 0.5 * (in->hi[j] - in->lo[j]);
        }
    }
    return fabs(cen) + (in->set == DG_HJI_SET_BALL ? in->radius * sqrt(rad) : rad);
}

/* ----------------------------------------------------- games of degree, inside */

/* The generic Hamiltonian of a game of degree (user: the game) at n points (x, p: (nx, n)). */
static void degree_ham(void *user, double t, int n, const double *x, const double *p, double *h) {
    const dg_hji_game *gm = user;
    const int nx = gm->nx;
    (void)t;
    for (int i = 0; i < n; i++) {
        double xi[DG_HJI_MAX_DIMS], pi[DG_HJI_MAX_DIMS];
        for (int k = 0; k < nx; k++) {
            xi[k] = x[(int64_t)k * n + i];
            pi[k] = p[(int64_t)k * n + i];
        }
        h[i] = dg_hji_game_hamiltonian(gm, xi, pi);
    }
}

/* Its dissipation bounds: |f_k| plus both players' input_bound over the box [pmin, pmax]. */
static void degree_alpha(void *user, double t, int n, const double *x, const double *pmin, const double *pmax,
                         double *alpha) {
    const dg_hji_game *gm = user;
    const int nx = gm->nx;
    (void)t;
    for (int i = 0; i < n; i++) {
        double xi[DG_HJI_MAX_DIMS], P[DG_HJI_MAX_DIMS], v[MAXE];
        for (int k = 0; k < nx; k++) {
            xi[k] = x[(int64_t)k * n + i];
            const double a = fabs(pmin[(int64_t)k * n + i]), b = fabs(pmax[(int64_t)k * n + i]);
            P[k] = a > b ? a : b;
        }
        eval(gm, xi, v);
        for (int k = 0; k < nx; k++) {
            double a = fabs(v[k]);
            if (gm->u.dim) a += input_bound(&gm->u, v + nx, nx, k, P);
            if (gm->d.dim) a += input_bound(&gm->d, v + nx + nx * gm->u.dim, nx, k, P);
            alpha[(int64_t)k * n + i] = a;
        }
    }
}

void hji_degree_wrap(const dg_hji_game *gm, dg_hji_game *out) {
    memset(out, 0, sizeof *out);
    out->nx = gm->nx;
    out->ham = degree_ham;
    out->alpha = degree_alpha;
    out->user = (void *)(uintptr_t)gm;   /* read only */
    out->payoff.on = 1;
    out->payoff.discount = gm->payoff.discount;
}

/* -------------------------------------------------------------------- games */

int dg_hji_game_degree(const dg_hji_game *gm) { return gm && gm->payoff.on; }

/* 1 when gm is an affine game of degree with an input of set a or b */
static int has_input_set(const dg_hji_game *gm, dg_hji_set a, dg_hji_set b) {
    const dg_hji_input *in[2] = {&gm->u, &gm->d};
    int any = 0;
    for (int q = 0; q < 2; q++) any |= in[q]->dim > 0 && (in[q]->set == a || in[q]->set == b);
    return gm->dyn && gm->payoff.on && any;
}

int hji_game_smooth_inputs(const dg_hji_game *gm) { return has_input_set(gm, DG_HJI_SET_QUAD, DG_HJI_SET_BOX_COST); }
int hji_game_quad_inputs(const dg_hji_game *gm) { return has_input_set(gm, DG_HJI_SET_QUAD, DG_HJI_SET_QUAD); }

double dg_hji_game_running_cost(const dg_hji_game *gm, const double *x, const double *u, const double *d) {
    if (!gm->payoff.on) return 0;
    double r = state_cost(gm, x);
    const dg_hji_input *in[2] = {&gm->u, &gm->d};
    const double *v[2] = {u, d};
    for (int q = 0; q < 2; q++) {
        if (!v[q] || !in[q]->dim || !(in[q]->set == DG_HJI_SET_QUAD || in[q]->set == DG_HJI_SET_BOX_COST)) continue;
        double n2 = 0;
        for (int j = 0; j < in[q]->dim; j++) n2 += v[q][j] * v[q][j];
        r += (in[q]->role == DG_HJI_ROLE_MAX ? -1 : 1) * in[q]->weight * n2;
    }
    return r;
}

dg_status dg_hji_game_check(const dg_hji_game *gm, int ndim, dg_err *e) {
    if (!gm) return dg_err_set(e, DG_ERR_ARG, "hji game: NULL");
    if (gm->nx < 1 || gm->nx > DG_HJI_MAX_DIMS)
        return dg_err_set(e, DG_ERR_ARG, "hji game: nx = %d, expected 1 to %d", gm->nx, DG_HJI_MAX_DIMS);
    if (ndim > 0 && gm->nx != ndim)
        return dg_err_set(e, DG_ERR_ARG, "hji game: nx = %d but the grid has %d axes", gm->nx, ndim);
    const dg_hji_payoff *pf = &gm->payoff;
    if (pf->on) {
        if (!(pf->discount >= 0) || !isfinite(pf->discount) || !isfinite(pf->running))
            return dg_err_set(e, DG_ERR_ARG, "hji game: payoff discount %g (expected >= 0) or running cost %g "
                              "is not finite", pf->discount, pf->running);
        for (int k = 0; k < gm->nx * gm->nx; k++)
            if (!isfinite(pf->Q[k])) return dg_err_set(e, DG_ERR_ARG, "hji game: payoff Q[%d] is not finite", k);
    }
    if (gm->dyn) {
        dg_status rc = check_input(&gm->u, "control u", e);
        if (!rc) rc = check_input(&gm->d, "disturbance d", e);
        const dg_hji_game plain = {.dyn = gm->dyn, .u = gm->u, .d = gm->d, .payoff.on = 1};
        if (!rc && !pf->on && hji_game_smooth_inputs(&plain))
            return dg_err_set(e, DG_ERR_ARG, "hji game: an input with a quadratic cost (DG_HJI_SET_QUAD or "
                              "_BOX_COST) needs a payoff (payoff.on)");
        return rc;
    }
    if (!gm->ham || !gm->alpha)
        return dg_err_set(e, DG_ERR_ARG, "hji game: needs dynamics (dyn) or a Hamiltonian (ham and alpha)");
    return DG_OK;
}

void dg_hji_game_optimal(const dg_hji_game *gm, const double *x, const double *p, double *u, double *d) {
    if (!gm->dyn) {
        if (u) memset(u, 0, (size_t)gm->u.dim * sizeof *u);
        if (d) memset(d, 0, (size_t)gm->d.dim * sizeof *d);
        return;
    }
    double v[MAXE], s[DG_HJI_MAX_INPUT];
    const int nx = gm->nx;
    eval(gm, x, v);
    if (u && gm->u.dim) {
        project(v + nx, nx, gm->u.dim, p, s);
        best(&gm->u, s, u);
    }
    if (d && gm->d.dim) {
        project(v + nx + nx * gm->u.dim, nx, gm->d.dim, p, s);
        best(&gm->d, s, d);
    }
}

double dg_hji_game_hamiltonian(const dg_hji_game *gm, const double *x, const double *p) {
    if (!gm->dyn) {
        double h = 0;
        gm->ham(gm->user, 0, 1, x, p, &h);
        return h;
    }
    double v[MAXE], s[DG_HJI_MAX_INPUT];
    const int nx = gm->nx;
    eval(gm, x, v);
    double r = gm->payoff.on ? state_cost(gm, x) : 0;
    for (int k = 0; k < nx; k++) r += v[k] * p[k];
    if (gm->u.dim) {
        project(v + nx, nx, gm->u.dim, p, s);
        r += best(&gm->u, s, NULL);
    }
    if (gm->d.dim) {
        project(v + nx + nx * gm->u.dim, nx, gm->d.dim, p, s);
        r += best(&gm->d, s, NULL);
    }
    return -r;
}

void dg_hji_game_dynamics(const dg_hji_game *gm, const double *x, const double *u, const double *d,
                          double *xdot) {
    const int nx = gm->nx, nu = gm->u.dim, nd = gm->d.dim;
    if (!gm->dyn) {
        memset(xdot, 0, (size_t)nx * sizeof *xdot);
        return;
    }
    double v[MAXE];
    eval(gm, x, v);
    for (int k = 0; k < nx; k++) {
        double r = v[k];
        if (u)
            for (int j = 0; j < nu; j++) r += v[nx + k * nu + j] * u[j];
        if (d)
            for (int j = 0; j < nd; j++) r += v[nx + nx * nu + k * nd + j] * d[j];
        xdot[k] = r;
    }
}
