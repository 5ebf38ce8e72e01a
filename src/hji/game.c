/* Games at a single state: checks, the players' optimal inputs, the Hamiltonian, the dynamics.
 * These are what a simulation of the equilibrium feedback strategies calls at every step. */
#include <math.h>
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
    if (in->set == DG_HJI_SET_BALL) {
        if (!(in->radius >= 0) || !isfinite(in->radius))
            return dg_err_set(e, DG_ERR_ARG, "hji game: %s ball radius %g, expected >= 0", who, in->radius);
        for (int j = 0; j < in->dim; j++)
            if (!isfinite(in->center[j]))
                return dg_err_set(e, DG_ERR_ARG, "hji game: %s ball centre[%d] is not finite", who, j);
    } else if (in->set == DG_HJI_SET_BOX) {
        for (int j = 0; j < in->dim; j++)
            if (!isfinite(in->lo[j]) || !isfinite(in->hi[j]) || in->lo[j] > in->hi[j])
                return dg_err_set(e, DG_ERR_ARG, "hji game: %s box [%g, %g] on component %d is empty or "
                                  "not finite", who, in->lo[j], in->hi[j], j);
    } else {
        return dg_err_set(e, DG_ERR_ARG, "hji game: %s set must be DG_HJI_SET_BOX or DG_HJI_SET_BALL", who);
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

/* The input that takes s.v to its extreme for the player's role, into v; returns s.v there. */
static double best(const dg_hji_input *in, const double *s, double *v) {
    const double sg = in->role == DG_HJI_ROLE_MAX ? 1 : -1;
    double val = 0;
    if (in->set == DG_HJI_SET_BALL) {
        double n2 = 0;
        for (int j = 0; j < in->dim; j++) n2 += s[j] * s[j];
        const double nrm = sqrt(n2);
        for (int j = 0; j < in->dim; j++) {
            const double vj = in->center[j] + (nrm > 0 ? sg * in->radius * s[j] / nrm : 0);
            if (v) v[j] = vj;
            val += s[j] * vj;
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

/* -------------------------------------------------------------------- games */

dg_status dg_hji_game_check(const dg_hji_game *gm, int ndim, dg_err *e) {
    if (!gm) return dg_err_set(e, DG_ERR_ARG, "hji game: NULL");
    if (gm->nx < 1 || gm->nx > DG_HJI_MAX_DIMS)
        return dg_err_set(e, DG_ERR_ARG, "hji game: nx = %d, expected 1 to %d", gm->nx, DG_HJI_MAX_DIMS);
    if (ndim > 0 && gm->nx != ndim)
        return dg_err_set(e, DG_ERR_ARG, "hji game: nx = %d but the grid has %d axes", gm->nx, ndim);
    if (gm->dyn) {
        dg_status rc = check_input(&gm->u, "control u", e);
        return rc ? rc : check_input(&gm->d, "disturbance d", e);
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
    double r = 0;
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
