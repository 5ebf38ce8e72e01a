/* Stationary games of degree by fast sweeping: Lax-Friedrichs Gauss-Seidel (Kao, Osher and Qian,
 * J. Comput. Phys. 196, 2004) over the 2^d orderings of the grid's axes, for any Hamiltonian the
 * time-marching solver takes (an affine game of degree through its generic form, or ham + alpha).
 *
 * At a node i, with the Lax-Friedrichs numerical Hamiltonian and central pbar_k = (phi_{i+1} -
 * phi_{i-1}) / (2 dx_k) (neither involves phi_i), rho phi_i + H^ = 0 solves for phi_i in closed form:
 *     phi_i = (sum_k alpha_k (phi_{i+1} + phi_{i-1}) / (2 dx_k) - H(x_i, pbar)) / (rho + sum_k alpha_k / dx_k)
 * alpha_k(x) >= |dH/dp_k| over the box |p_k| <= 1.5 max(|p-_k|, |p+_k|) + P_k of the node's own one-sided
 * differences (local Lax-Friedrichs: a global bound is far too diffusive once a quadratic-cost input
 * makes alpha grow with |p|), P_k a floor that keeps the first sweeps monotone: the values' scale over
 * the grid's width, raised to a twentieth of the grid's largest difference. A node is updated from its neighbours' newest values.
 * Plain edges are extrapolated linearly from the two nodes inside after every sweep (as KOQ);
 * periodic axes wrap. Held nodes (opts.stop) keep v0; opts.cap bounds phi above; free nodes start
 * at the cap when there is one (the iteration then decreases to the value), else at v0.
 * Converged when every sweep of a whole cycle of 2^d orderings changed no free node by more than
 * tol / (rho + sum_k alpha_k / dx_k), i.e. left |rho phi + H^| < tol. First order; sequential. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/core.h"  /* dg_clock_s */
#include "hji/internal.h"

#define SWEEPS_DEFAULT 100000

/* phi at node j's neighbour along axis k (i its index there, dir -1 or +1); NAN past a plain edge. */
static double neighbour(const dg_hji_grid *g, const double *v, int64_t j, int k, int i, int dir) {
    const int n = g->n[k], ii = i + dir;
    if (ii >= 0 && ii < n) return v[j + dir * g->stride[k]];
    if (g->bc[k] == DG_HJI_BC_PERIODIC) return v[j + (int64_t)(hji_wrap(ii, n) - i) * g->stride[k]];
    return NAN;
}

/* P_k = max over the grid of |one-sided difference| / dx_k. */
static void p_bound(const dg_hji_grid *g, const double *v, double *P) {
    for (int k = 0; k < g->ndim; k++) P[k] = 0;
    int idx[DG_HJI_MAX_DIMS];
    for (int64_t j = 0; j < g->nodes; j++) {
        int64_t r = j;
        for (int k = g->ndim - 1; k >= 0; k--) {
            idx[k] = (int)(r % g->n[k]);
            r /= g->n[k];
        }
        for (int k = 0; k < g->ndim; k++) {
            const double b = neighbour(g, v, j, k, idx[k], 1);
            if (!isnan(b)) {
                const double d = fabs(b - v[j]) / g->dx[k];
                if (d > P[k]) P[k] = d;
            }
        }
    }
}

/* Plain edges: phi_0 = 2 phi_1 - phi_2 and likewise at the top, axis by axis. */
static void extrapolate(const dg_hji_grid *g, double *v, const unsigned char *held) {
    for (int k = 0; k < g->ndim; k++) {
        if (g->bc[k] == DG_HJI_BC_PERIODIC || g->n[k] < 3) continue;
        const int64_t st = g->stride[k], n = g->n[k];
        for (int64_t j = 0; j < g->nodes; j++) {
            const int64_t i = (j / st) % n;
            if (held[j]) continue;
            if (i == 0) v[j] = 2 * v[j + st] - v[j + 2 * st];
            else if (i == n - 1) v[j] = 2 * v[j - st] - v[j - 2 * st];
        }
    }
}

dg_status hji_sweep(const dg_hji_grid *g, const dg_hji_game *gm, const dg_hji_opts *o, const double *v0,
                    double *out, dg_hji_stats *stats, dg_err *e) {
    const double t0 = dg_clock_s();
    const int nd = g->ndim;
    const int64_t N = g->nodes;
    dg_hji_game wrapped;
    if (gm->dyn) {
        if (!gm->payoff.on)
            return dg_err_set(e, DG_ERR_ARG, "hji: fast sweeping solves games of degree (payoff.on)");
        hji_degree_wrap(gm, &wrapped);
        gm = &wrapped;
    }
    const double rho = gm->payoff.on ? gm->payoff.discount : 0;
    const double cap = o->cap > 0 ? o->cap : INFINITY;
    double alpha[DG_HJI_MAX_DIMS];
    unsigned char *held = calloc((size_t)N, 1);
    if (!held) {
        return dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory for the sweeps' tables (%lld nodes)", (long long)N);
    }
    for (int64_t j = 0; j < N; j++) {
        held[j] = o->stop && o->stop[j] <= 0;
        out[j] = held[j] ? v0[j] : isfinite(cap) ? cap : v0[j];
    }
    const int64_t max_sweeps = o->max_sweeps > 0 ? o->max_sweeps : SWEEPS_DEFAULT;
    dg_hji_stats st = {.stages = 1, .nodes = N, .threads = 1, .residual = INFINITY};
    dg_status rc = DG_OK;
    const int orders = 1 << nd;
    int quiet = 0;
    double P[DG_HJI_MAX_DIMS];
    {   /* a first bound on |p|: the values' scale over the grid's width (below it the first sweep
         * can be far from monotone, and a quadratic input's H then blows up along the sweep) */
        double vs = 0, lmax = 0;
        for (int64_t j = 0; j < N; j++) {
            double x[DG_HJI_MAX_DIMS], p0[DG_HJI_MAX_DIMS] = {0}, h;
            dg_hji_grid_point(g, j, x);
            gm->ham(gm->user, 0, 1, x, p0, &h);   /* -L0(x) */
            vs = fmax(vs, fabs(v0[j]));
            lmax = fmax(lmax, fabs(h));
        }
        vs += isfinite(cap) ? cap : lmax / (rho > 0 ? rho : 1);
        for (int k = 0; k < nd; k++) P[k] = 0.2 * vs / (g->n[k] * g->dx[k]);
    }
    while (!st.converged && st.iterations < max_sweeps) {
        const int c = (int)(st.iterations % orders);   /* this sweep's ordering: bit k reverses axis k */
        /* the floor of the p boxes: a twentieth of the p range of the current phi, never lowered */
        double Pn[DG_HJI_MAX_DIMS];
        p_bound(g, out, Pn);
        for (int k = 0; k < nd; k++) P[k] = fmax(P[k], 0.05 * Pn[k]);
        double res = 0;
        int idx[DG_HJI_MAX_DIMS];
        for (int64_t m = 0; m < N; m++) {
            int64_t r = m, j = 0;
            for (int k = nd - 1; k >= 0; k--) {
                int i = (int)(r % g->n[k]);
                r /= g->n[k];
                if ((c >> k) & 1) i = g->n[k] - 1 - i;
                idx[k] = i;
                j += (int64_t)i * g->stride[k];
            }
            if (held[j]) continue;
            double x[DG_HJI_MAX_DIMS], pb[DG_HJI_MAX_DIMS], nb[2][DG_HJI_MAX_DIMS], h;
            double num = 0, den = rho;
            int edge = 0;
            for (int k = 0; k < nd && !edge; k++) {
                nb[0][k] = neighbour(g, out, j, k, idx[k], -1);
                nb[1][k] = neighbour(g, out, j, k, idx[k], 1);
                edge = isnan(nb[0][k]) || isnan(nb[1][k]);
            }
            if (edge) continue;   /* edges: extrapolated below */
            dg_hji_grid_point(g, j, x);
            {   /* alpha over this node's one-sided differences with a margin, at least the floor */
                double lo[DG_HJI_MAX_DIMS], hi[DG_HJI_MAX_DIMS];
                for (int k = 0; k < nd; k++) {
                    const double pm = fabs(out[j] - nb[0][k]) / g->dx[k], pp = fabs(nb[1][k] - out[j]) / g->dx[k];
                    hi[k] = 1.5 * fmax(pm, pp) + P[k];
                    lo[k] = -hi[k];
                }
                gm->alpha(gm->user, 0, 1, x, lo, hi, alpha);
            }
            for (int k = 0; k < nd; k++) {
                const double a = fabs(alpha[k]);
                pb[k] = (nb[1][k] - nb[0][k]) / (2 * g->dx[k]);
                num += a * (nb[1][k] + nb[0][k]) / (2 * g->dx[k]);
                den += a / g->dx[k];
            }
            if (!(den > 0)) continue;
            gm->ham(gm->user, 0, 1, x, pb, &h);
            double v = (num - h) / den;
            if (v > cap) v = cap;
            const double d = fabs(v - out[j]) * den;   /* |rho phi + H^| before the update */
            if (out[j] < cap && d > res) res = d;
            out[j] = v;
        }
        extrapolate(g, out, held);
        for (int64_t j = 0; j < N; j++) {
            if (!(out[j] - out[j] == 0)) {
                rc = dg_err_set(e, DG_ERR_NONFINITE, "hji: the value became non-finite at sweep %lld",
                                (long long)st.iterations + 1);
                goto cleanup;
            }
            if (out[j] > cap) out[j] = cap;
        }
        st.iterations++;
        st.residual = res;
        quiet = res < o->tol ? quiet + 1 : 0;
        st.converged = quiet >= orders;   /* a whole cycle of orderings below tol */
        if (o->progress) {
            const dg_hji_progress pr = {.t = (double)st.iterations, .t_end = (double)max_sweeps,
                                        .step = st.iterations, .seconds = dg_clock_s() - t0};
            if (o->progress(o->progress_user, &pr)) {
                rc = dg_err_set(e, DG_ERR_INTERRUPTED, "hji: stopped at sweep %lld", (long long)st.iterations);
                goto cleanup;
            }
        }
    }
    st.steps = st.iterations;
    st.cell_updates = (double)st.iterations * (double)N;
    st.seconds = dg_clock_s() - t0;
    st.updates_per_s = st.seconds > 0 ? st.cell_updates / st.seconds : 0;
    if (stats) *stats = st;
cleanup:
    free(held);
    return rc;
}
