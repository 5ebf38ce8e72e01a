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
 * at opts.warm (a warm start, below the cap), else at the cap when there is one (the iteration then
 * decreases to the value), else at v0.
 * Converged when every sweep of a whole cycle of 2^d orderings changed no free node by more than
 * tol / (rho + sum_k alpha_k / dx_k), i.e. left |rho phi + H^| < tol. First order; one thread.
 *
 * Across MPI ranks (a dg_hji_part): each rank sweeps its block of axis 0 in the same ordering,
 * Gauss-Seidel inside it and from the ghost layers across the cuts (exchanged before every sweep
 * and before the edges' extrapolation: block Jacobi between blocks); the p floor, the residual,
 * non-finite values and a stop are combined over the ranks. It converges to the same tolerance
 * but not to the same bits as one process: the nodes by a cut see their neighbours' values of the
 * sweep before, not of this one, so the iterates differ and with them the p floors (a max over the
 * iterates) that set the Lax-Friedrichs alphas of the converged value. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/base.h"  /* dg_clock_s */
#include "hji/internal.h"

#define SWEEPS_DEFAULT 100000

/* The sweeps' view of the grid: the whole of it, or one rank's block of axis 0 ([i0, i0 + n0)
 * of its layers) inside a buffer with GW ghost layers on both sides (neighbours across a cut
 * and, periodic, around the ring: the block's own index arithmetic reaches them). */
#define GW 2   /* a neighbour (1) and the second node of a plain edge's extrapolation (2) */
typedef struct sweep_view {
    const dg_hji_grid *g;
    int     i0, n0;      /* the block's first layer of axis 0 and its layer count */
    int64_t nodes;       /* n0 x stride[0]                                         */
    int64_t node0;       /* its first node in the grid                             */
    int     dec;         /* split over more than one rank                          */
    const dg_hji_part *pt;
} sweep_view;

/* Node j's index along each axis (global) from its place in the block. */
static void index_of(const sweep_view *sv, int64_t j, int *idx) {
    const dg_hji_grid *g = sv->g;
    int64_t r = j;
    for (int k = g->ndim - 1; k >= 1; k--) {
        idx[k] = (int)(r % g->n[k]);
        r /= g->n[k];
    }
    idx[0] = sv->i0 + (int)r;
}

/* phi at node j's neighbour along axis k (i its index there, dir -1 or +1); NAN past a plain edge. */
static double neighbour(const sweep_view *sv, const double *v, int64_t j, int k, int i, int dir) {
    const dg_hji_grid *g = sv->g;
    const int n = g->n[k], ii = i + dir;
    if (ii >= 0 && ii < n) return v[j + dir * g->stride[k]];   /* across a cut: the ghost layer */
    if (g->bc[k] == DG_HJI_BC_PERIODIC)
        return k == 0 && sv->dec ? v[j + dir * g->stride[0]]   /* the ring's ghost layer */
                                 : v[j + (int64_t)(hji_wrap(ii, n) - i) * g->stride[k]];
    return NAN;
}

/* P_k = max over the grid of |one-sided difference| / dx_k. */
static void p_bound(const sweep_view *sv, const double *v, double *P) {
    const dg_hji_grid *g = sv->g;
    for (int k = 0; k < g->ndim; k++) P[k] = 0;
    int idx[DG_HJI_GRID_MAX_DIMS];
    for (int64_t j = 0; j < sv->nodes; j++) {
        index_of(sv, j, idx);
        for (int k = 0; k < g->ndim; k++) {
            const double b = neighbour(sv, v, j, k, idx[k], 1);
            if (!isnan(b)) {
                const double d = fabs(b - v[j]) / g->dx[k];
                if (d > P[k]) P[k] = d;
            }
        }
    }
    if (sv->dec) dg_dist_max(P, g->ndim);
}

/* Plain edges: phi_0 = 2 phi_1 - phi_2 and likewise at the top, axis by axis (axis 0's inner
 * nodes may be ghosts: exchanged before this). */
static void extrapolate(const sweep_view *sv, double *v, const unsigned char *held) {
    const dg_hji_grid *g = sv->g;
    for (int k = 0; k < g->ndim; k++) {
        if (g->bc[k] == DG_HJI_BC_PERIODIC || g->n[k] < 3) continue;
        const int64_t st = g->stride[k], n = g->n[k];
        for (int64_t j = 0; j < sv->nodes; j++) {
            const int64_t i = k == 0 ? sv->i0 + j / st : (j / st) % n;
            if (held[j]) continue;
            if (i == 0) v[j] = 2 * v[j + st] - v[j + 2 * st];
            else if (i == n - 1) v[j] = 2 * v[j - st] - v[j - 2 * st];
        }
    }
}

/* The ghost layers of a split grid, from the neighbouring blocks. */
static void exchange(const sweep_view *sv, double *v) {
    if (!sv->dec) return;
    const int64_t h = (int64_t)GW * sv->g->stride[0];
    dg_dist_halo_start(v - h, v, v + sv->nodes - h, v + sv->nodes, (size_t)h, sizeof *v, sv->pt->left,
                       sv->pt->right);
    dg_dist_halo_wait();
}

dg_status hji_fast_sweep(const dg_hji_grid *g, const dg_hji_game *gm, const dg_hji_opts *o, const double *v0,
                    double *res_out, dg_hji_stats *stats, const dg_hji_part *pt, dg_err *e) {
    const double t0 = dg_clock_s();
    const int nd = g->ndim;
    sweep_view sv = {.g = g, .i0 = 0, .n0 = g->n[0], .nodes = g->nodes, .pt = pt};
    if (pt && pt->size > 1) {
        if ((int64_t)GW * g->stride[0] >= INT_MAX)
            return dg_err_set(e, DG_ERR_ARG, "hji: a ghost slab of %d x %lld nodes passes MPI's 2^31 counts", GW,
                              (long long)g->stride[0]);
        if (g->bc[0] == DG_HJI_BC_PERIODIC && g->n[0] < GW)
            return dg_err_set(e, DG_ERR_ARG, "hji: periodic axis 0 has %d nodes: too few to split", g->n[0]);
        sv = (sweep_view){.g = g, .i0 = pt->i0, .n0 = pt->i1 - pt->i0, .nodes = pt->nodes, .node0 = pt->node0,
                          .dec = 1, .pt = pt};
    }
    const int64_t N = sv.nodes, h = sv.dec ? (int64_t)GW * g->stride[0] : 0;
    dg_hji_game wrapped;
    if (gm->dyn) {
        if (!gm->payoff.on)
            return dg_err_set(e, DG_ERR_ARG, "hji: fast sweeping solves games of degree (payoff.on)");
        hji_degree_wrap(gm, &wrapped);
        gm = &wrapped;
    }
    const double rho = gm->payoff.on ? gm->payoff.discount : 0;
    const double cap = o->cap > 0 ? o->cap : INFINITY;
    double alpha[DG_HJI_GRID_MAX_DIMS];
    unsigned char *held = calloc((size_t)N, 1);
    /* a split grid sweeps a copy with ghost layers; the whole grid sweeps out itself */
    double *buf = sv.dec ? calloc((size_t)(N + 2 * h), sizeof *buf) : NULL;
    const int nomem = !held || (sv.dec && !buf);
    if (sv.dec ? dg_dist_or(nomem) : nomem) {
        free(held);
        free(buf);
        return dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory for the sweeps' tables (%lld nodes)", (long long)N);
    }
    double *out = sv.dec ? buf + h : res_out;
    for (int64_t j = 0; j < N; j++) {
        held[j] = o->stop && o->stop[j] <= 0;
        out[j] = held[j] ? v0[j] : o->warm ? fmin(o->warm[j], cap) : isfinite(cap) ? cap : v0[j];
    }
    const int64_t max_sweeps = o->max_sweeps > 0 ? o->max_sweeps : SWEEPS_DEFAULT;
    dg_hji_stats st = {.stages = 1, .nodes = N, .threads = 1, .residual = INFINITY};
    dg_status rc = DG_OK;
    const int orders = 1 << nd;
    int quiet = 0;
    double P[DG_HJI_GRID_MAX_DIMS];
    {   /* a first bound on |p|: the values' scale over the grid's width (below it the first sweep
         * can be far from monotone, and a quadratic input's H then blows up along the sweep) */
        double m[2] = {0, 0};   /* max |v0|, max |H(x, 0)| */
        for (int64_t j = 0; j < N; j++) {
            double x[DG_HJI_GRID_MAX_DIMS], p0[DG_HJI_GRID_MAX_DIMS] = {0}, hx;
            dg_hji_grid_point(g, sv.node0 + j, x);
            gm->ham(gm->user, 0, 1, x, p0, &hx);   /* -L0(x) */
            m[0] = fmax(m[0], fabs(v0[j]));
            m[1] = fmax(m[1], fabs(hx));
        }
        if (sv.dec) dg_dist_max(m, 2);
        const double vs = m[0] + (isfinite(cap) ? cap : m[1] / (rho > 0 ? rho : 1));
        for (int k = 0; k < nd; k++) P[k] = 0.2 * vs / (g->n[k] * g->dx[k]);
    }
    while (!st.converged && st.iterations < max_sweeps) {
        const int c = (int)(st.iterations % orders);   /* this sweep's ordering: bit k reverses axis k */
        exchange(&sv, out);
        /* the floor of the p boxes: a twentieth of the p range of the current phi, never lowered */
        double Pn[DG_HJI_GRID_MAX_DIMS];
        p_bound(&sv, out, Pn);
        for (int k = 0; k < nd; k++) P[k] = fmax(P[k], 0.05 * Pn[k]);
        double res = 0;
        int idx[DG_HJI_GRID_MAX_DIMS];
        for (int64_t m = 0; m < N; m++) {
            int64_t r = m, j = 0;
            for (int k = nd - 1; k >= 0; k--) {
                const int n = k ? g->n[k] : sv.n0;
                int i = (int)(r % n);
                r /= n;
                if ((c >> k) & 1) i = n - 1 - i;
                j += (int64_t)i * g->stride[k];
                idx[k] = k ? i : sv.i0 + i;
            }
            if (held[j]) continue;
            double x[DG_HJI_GRID_MAX_DIMS], pb[DG_HJI_GRID_MAX_DIMS], nb[2][DG_HJI_GRID_MAX_DIMS], hx;
            double num = 0, den = rho;
            int edge = 0;
            for (int k = 0; k < nd && !edge; k++) {
                nb[0][k] = neighbour(&sv, out, j, k, idx[k], -1);
                nb[1][k] = neighbour(&sv, out, j, k, idx[k], 1);
                edge = isnan(nb[0][k]) || isnan(nb[1][k]);
            }
            if (edge) continue;   /* edges: extrapolated below */
            dg_hji_grid_point(g, sv.node0 + j, x);
            {   /* alpha over this node's one-sided differences with a margin, at least the floor */
                double lo[DG_HJI_GRID_MAX_DIMS], hi[DG_HJI_GRID_MAX_DIMS];
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
            gm->ham(gm->user, 0, 1, x, pb, &hx);
            double v = (num - hx) / den;
            if (v > cap) v = cap;
            const double d = fabs(v - out[j]) * den;   /* |rho phi + H^| before the update */
            if (out[j] < cap && d > res) res = d;
            out[j] = v;
        }
        exchange(&sv, out);   /* axis 0's edges read the layers next to them */
        extrapolate(&sv, out, held);
        int bad = 0;
        for (int64_t j = 0; j < N; j++) {
            bad |= !(out[j] - out[j] == 0);
            if (out[j] > cap) out[j] = cap;
        }
        if (sv.dec) {
            bad = dg_dist_or(bad);
            dg_dist_max(&res, 1);
        }
        if (bad) {
            rc = dg_err_set(e, DG_ERR_NONFINITE, "hji: the value became non-finite at sweep %lld",
                            (long long)st.iterations + 1);
            goto cleanup;
        }
        st.iterations++;
        st.residual = res;
        quiet = res < o->tol ? quiet + 1 : 0;
        st.converged = quiet >= orders;   /* a whole cycle of orderings below tol */
        if (o->progress) {
            const dg_hji_progress pr = {.t = (double)st.iterations, .t_end = (double)max_sweeps,
                                        .step = st.iterations, .seconds = dg_clock_s() - t0};
            int stop = o->progress(o->progress_user, &pr) != 0;
            if (sv.dec) stop = dg_dist_or(stop);   /* every rank stops after the same sweep */
            if (stop) {
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
    if (sv.dec && (rc == DG_OK || rc == DG_ERR_INTERRUPTED)) memcpy(res_out, out, (size_t)N * sizeof *out);
    free(held);
    free(buf);
    return rc;
}
