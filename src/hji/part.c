/* The grid split over MPI ranks (include/difgames/hji_part.h): each rank's block of axis 0, a
 * problem's solve on it, and the blocks gathered on rank 0. The kernel (kernel.inc) does the
 * exchanges and the reductions. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hji/internal.h"

int dg_hji_part_start(int n, int c, int cuts) { return (int)((int64_t)c * n / cuts); }

/* The first node of axis 0 that rank r of R owns: [r n0 / R, (r + 1) n0 / R). */
static int block_start(int n0, int r, int R) { return dg_hji_part_start(n0, r, R); }

/* The last axis a box does not span (0 when it spans every axis). */
static int box_last(const dg_hji_grid *g, const int *lo, const int *n) {
    int m = 0;
    for (int k = 0; k < g->ndim; k++)
        if (n[k] != g->n[k] || lo[k] != 0) m = k;
    return m;
}

int64_t hji_box_runs(const dg_hji_grid *g, const int *lo, const int *n, int64_t *len) {
    const int m = box_last(g, lo, n);
    int64_t runs = 1;
    for (int k = 0; k < m; k++) runs *= n[k];
    *len = (int64_t)n[m] * g->stride[m];
    return runs;
}

int64_t hji_box_run_at(const dg_hji_grid *g, const int *lo, const int *n, int64_t i) {
    const int m = box_last(g, lo, n);
    int64_t at = (int64_t)lo[m] * g->stride[m];
    for (int k = m - 1; k >= 0; k--) {
        at += (int64_t)(lo[k] + i % n[k]) * g->stride[k];
        i /= n[k];
    }
    return at;
}

int64_t dg_hji_part_box(const dg_hji_part *pt, const dg_hji_grid *g, int r, int *lo, int *n) {
    int64_t node0 = 0;
    for (int k = g->ndim - 1; k >= 0; k--) {   /* rank r's coordinates, row-major (MPI_Cart_create) */
        const int c = r % pt->cuts[k];
        r /= pt->cuts[k];
        lo[k] = dg_hji_part_start(g->n[k], c, pt->cuts[k]);
        n[k] = dg_hji_part_start(g->n[k], c + 1, pt->cuts[k]) - lo[k];
        node0 += (int64_t)lo[k] * g->stride[k];
    }
    return node0;
}

dg_status dg_hji_part_init(dg_hji_part *pt, const dg_hji_grid *g, const dg_hji_opts *o, dg_err *e) {
    return dg_hji_part_init_cut(pt, g, o, NULL, e);
}

dg_status dg_hji_part_init_cut(dg_hji_part *pt, const dg_hji_grid *g, const dg_hji_opts *o, const int *cuts,
                               dg_err *e) {
    if (!pt || !o) return dg_err_set(e, DG_ERR_ARG, "hji: part_init needs a part and options");
    dg_status rc = hji_check_grid(g, e);
    if (rc) return rc;
    memset(pt, 0, sizeof *pt);
    pt->rank = dg_dist_rank();
    pt->size = dg_dist_size();
    const int R = pt->size, n0 = g->n[0], gw = hji_ghost_width(o->deriv), nd = g->ndim;
    for (int k = 0; k < nd; k++) pt->cuts[k] = 1;
    pt->cuts[0] = R;
    const int sweep = o->tol > 0 && o->method == DG_HJI_METHOD_SWEEP;
    int c[DG_HJI_GRID_MAX_DIMS];
    if (cuts) {   /* the caller's cut: boxes of at least gw layers (along axis 0 alone: any) */
        int prod = 1, multi = 0;
        for (int k = 0; k < nd; k++) {
            prod *= cuts[k] >= 1 ? cuts[k] : 0;
            multi |= k > 0 && cuts[k] > 1;
        }
        if (prod != R || cuts[nd - 1] != 1)
            return dg_err_set(e, DG_ERR_ARG, "hji: a cut over %d ranks needs blocks along each axis multiplying to %d, "
                              "the last axis not cut", R, R);
        for (int k = 0; k < nd && multi; k++)
            if (cuts[k] > 1 && g->n[k] / cuts[k] < gw)
                return dg_err_set(e, DG_ERR_ARG, "hji: axis %d of %d nodes in %d blocks: blocks narrower than the "
                                  "scheme's %d ghost layers (only axis 0 alone may be cut so)", k, g->n[k], cuts[k], gw);
        if (multi && sweep)
            return dg_err_set(e, DG_ERR_ARG, "hji: fast sweeping sweeps blocks of axis 0: cut axis 0 alone");
        if (multi) {
            memcpy(pt->cuts, cuts, (size_t)nd * sizeof *cuts);
            pt->multi = 1;
        }
    } else if (R > 1 && o->split == DG_HJI_SPLIT_AUTO && !sweep && dg_hji_part_cuts(g, gw, R, c, NULL, NULL) == DG_OK) {
        /* the cut with the least halo, unless axis 0 alone is asked for (or swept: blocks of axis 0) */
        for (int k = 1; k < nd; k++)
            if (c[k] > 1) {
                memcpy(pt->cuts, c, (size_t)nd * sizeof *c);
                pt->multi = 1;
                break;
            }
    }
    if (pt->multi) {
        double halo = 0;   /* the largest box's faces: gw layers of its cross-section (ints for MPI) */
        for (int k = 0; k < nd; k++) {
            double cross = gw;
            for (int j = 0; j < nd; j++)
                if (j != k) cross *= (g->n[j] + pt->cuts[j] - 1) / pt->cuts[j];
            halo = cross > halo ? cross : halo;
        }
        if (halo >= (double)INT_MAX)
            return dg_err_set(e, DG_ERR_ARG, "hji: a ghost face of %.0f nodes passes MPI's 2^31 counts: use more "
                              "ranks", halo);
        int per[DG_HJI_GRID_MAX_DIMS];
        for (int k = 0; k < nd; k++) per[k] = g->bc[k] == DG_HJI_BC_PERIODIC;
        dg_dist_cart(nd, pt->cuts, per, pt->coords, pt->down, pt->up);
        for (int k = 0; k < nd; k++)
            if (pt->cuts[k] == 1) pt->down[k] = pt->up[k] = -1;   /* a periodic axis not cut wraps in the box */
        pt->node0 = dg_hji_part_box(pt, g, pt->rank, pt->lo, pt->n);
        pt->nodes = 1;
        for (int k = 0; k < nd; k++) pt->nodes *= pt->n[k];
        pt->i0 = pt->lo[0];
        pt->i1 = pt->lo[0] + pt->n[0];
        pt->left = pt->down[0];
        pt->right = pt->up[0];
        return DG_OK;
    }
    /* axis 0 alone: a block of one layer takes its ghost layers from as many ranks as hold them */
    if (R > n0)
        return dg_err_set(e, DG_ERR_ARG, "hji: axis 0 has %d nodes: %d ranks would leave a rank without a layer "
                          "of the grid (use at most %d ranks, or more nodes on axis 0)", n0, R, n0);
    if (R > 1 && g->bc[0] == DG_HJI_BC_PERIODIC && n0 < gw)
        return dg_err_set(e, DG_ERR_ARG, "hji: periodic axis 0 has %d nodes, fewer than the scheme's %d ghost "
                          "layers: it cannot be split", n0, gw);
    if (R > 1 && (double)gw * (double)g->stride[0] >= (double)INT_MAX)
        return dg_err_set(e, DG_ERR_ARG, "hji: a ghost slab of %d x %lld nodes passes MPI's 2^31 counts: put the "
                          "longest axis first", gw, (long long)g->stride[0]);
    pt->i0 = block_start(n0, pt->rank, R);
    pt->i1 = block_start(n0, pt->rank + 1, R);
    pt->node0 = (int64_t)pt->i0 * g->stride[0];
    pt->nodes = (int64_t)(pt->i1 - pt->i0) * g->stride[0];
    dg_dist_cart1(g->bc[0] == DG_HJI_BC_PERIODIC, &pt->left, &pt->right);
    for (int k = 0; k < nd; k++) {
        pt->lo[k] = 0;
        pt->n[k] = g->n[k];
        pt->down[k] = pt->up[k] = -1;
    }
    pt->lo[0] = pt->i0;
    pt->n[0] = pt->i1 - pt->i0;
    pt->coords[0] = pt->rank;
    pt->down[0] = pt->left;
    pt->up[0] = pt->right;
    return DG_OK;
}

dg_status dg_hji_problem_solve_part(const dg_hji_problem *p, const dg_hji_part *pt, int nt, const double *times,
                                    double *out, dg_hji_stats *stats, dg_err *e) {
    if (!p || !pt || !out) return dg_err_set(e, DG_ERR_ARG, "hji: problem_solve_part needs a problem, a part and out");
    /* as dg_hji_problem_solve_at: a stationary time to reach marches up to twice the cap */
    const double twice = 2 * (nt > 0 ? times[nt - 1] : 0);
    const int longer = p->stationary && p->payoff == DG_HJI_PAYOFF_TIME && nt == 1;
    if ((p->block0 != 0 && p->block0 != pt->node0) || (pt->multi && p->block_nodes != pt->nodes))
        return dg_err_set(e, DG_ERR_ARG, "hji: the problem keeps the block from node %lld, not this part's "
                          "(dg_hji_problem_keep_block)", (long long)p->block0);
    if (p->opts.warm && pt->size > 1)   /* its array is the whole grid's: not kept per block */
        return dg_err_set(e, DG_ERR_ARG, "hji: a warm start solves in one process, not split over %d ranks", pt->size);
    const int64_t at = pt->node0 - p->block0;   /* the block in p's node arrays (a box: 0) */
    dg_hji_opts o = p->opts;
    if (o.stop) o.stop += at;
    dg_status rc = dg_hji_solve_part(pt, &p->grid, &p->game, &o, dg_hji_problem_v0(p) + at,
                                     p->obstacle ? p->obstacle + at : NULL, nt, longer ? &twice : times, out,
                                     stats, e);
    if (p->payoff == DG_HJI_PAYOFF_TIME && (rc == DG_OK || rc == DG_ERR_INTERRUPTED))
        hji_problem_time_report(p, pt->node0, pt->nodes, nt, out);  /* the target: 0 */
    return rc;
}

/* A copy of the box (lo, n) of the whole grid's *a in place of *a (NULL stays NULL). */
static int keep(double **a, const dg_hji_grid *g, const int *lo, const int *n, int64_t nodes) {
    if (!*a) return 0;
    double *b = malloc((size_t)nodes * sizeof *b);
    if (!b) return -1;
    int64_t len;
    const int64_t runs = hji_box_runs(g, lo, n, &len);
    for (int64_t i = 0; i < runs; i++)
        memcpy(b + i * len, *a + hji_box_run_at(g, lo, n, i), (size_t)len * sizeof *b);
    free(*a);
    *a = b;
    return 0;
}

dg_status dg_hji_problem_keep_block(dg_hji_problem *p, const dg_hji_part *pt, dg_err *e) {
    if (!p || !pt) return dg_err_set(e, DG_ERR_ARG, "hji: keep_block needs a problem and a part");
    if (!p->target) return hji_problem_build_block(p, pt->lo, pt->n, e);   /* loaded split */
    if (p->block0 != 0 || p->block_nodes || pt->nodes == p->grid.nodes) return DG_OK;   /* kept, or whole */
    const dg_hji_grid *g = &p->grid;
    if (keep(&p->target, g, pt->lo, pt->n, pt->nodes) || keep(&p->obstacle, g, pt->lo, pt->n, pt->nodes) ||
        keep(&p->initial, g, pt->lo, pt->n, pt->nodes) || keep(&p->stop, g, pt->lo, pt->n, pt->nodes))
        return dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory for a block of %lld nodes", (long long)pt->nodes);
    p->opts.stop = p->stop;
    p->block0 = pt->node0;
    p->block_nodes = pt->nodes;
    if (pt->node0 == 0 && !pt->multi) p->block0 = 0;   /* rank 0 of axis 0: the block's indices are the grid's */
    return DG_OK;
}

dg_status dg_hji_part_gather(const dg_hji_part *pt, const dg_hji_grid *g, int nt, const double *mine, double *all,
                             dg_err *e) {
    if (!pt || !g || !mine || nt < 1 || (pt->rank == 0 && !all))
        return dg_err_set(e, DG_ERR_ARG, "hji: part_gather needs a part, a grid, nt >= 1, the blocks and (rank 0) "
                          "the whole arrays");
    size_t *bytes = calloc((size_t)pt->size, sizeof *bytes);
    double *boxes = NULL;   /* a cut along several axes: every box in rank order, then put in place */
    if (!bytes) return dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory");
    for (int r = 0; r < pt->size; r++) {
        int lo[DG_HJI_GRID_MAX_DIMS], n[DG_HJI_GRID_MAX_DIMS];
        dg_hji_part_box(pt, g, r, lo, n);
        int64_t nodes = 1;
        for (int k = 0; k < g->ndim; k++) nodes *= n[k];
        bytes[r] = (size_t)nodes * sizeof(double);
    }
    if (!pt->multi) {   /* axis 0's blocks lie in rank order */
        for (int r = 0; r < pt->size; r++)
            bytes[r] = (size_t)(block_start(g->n[0], r + 1, pt->size) - block_start(g->n[0], r, pt->size)) *
                       (size_t)g->stride[0] * sizeof(double);
    } else if (pt->rank == 0 && !(boxes = malloc((size_t)g->nodes * sizeof *boxes))) {
        free(bytes);
        return dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory for %lld nodes", (long long)g->nodes);
    }
    dg_status rc = DG_OK;
    for (int k = 0; k < nt && rc == DG_OK; k++) {
        double *whole = all ? all + (size_t)k * (size_t)g->nodes : NULL;
        rc = dg_dist_gatherv(mine + (size_t)k * (size_t)pt->nodes, (size_t)pt->nodes * sizeof(double),
                             boxes ? boxes : whole, bytes, e);
        if (rc || !boxes) continue;
        const double *b = boxes;
        for (int r = 0; r < pt->size; r++) {   /* each box's runs into place */
            int lo[DG_HJI_GRID_MAX_DIMS], n[DG_HJI_GRID_MAX_DIMS];
            dg_hji_part_box(pt, g, r, lo, n);
            int64_t len;
            const int64_t runs = hji_box_runs(g, lo, n, &len);
            for (int64_t i = 0; i < runs; i++, b += len)
                memcpy(whole + hji_box_run_at(g, lo, n, i), b, (size_t)len * sizeof *b);
        }
    }
    free(boxes);
    free(bytes);
    return rc;
}

double dg_hji_solve_part_memory(const dg_hji_part *pt, const dg_hji_grid *g, const dg_hji_game *gm,
                                const dg_hji_opts *o, int nt) {
    if (!pt || !g || !o || g->ndim < 1) return 0;
    dg_hji_grid b = *g;   /* the box with its ghost layers, as a grid of its own */
    b.nodes = 1;
    for (int k = g->ndim - 1; k >= 0; k--) {
        b.n[k] = pt->n[k] + (pt->cuts[k] > 1 ? 2 * hji_ghost_width(o->deriv) : 0);
        if (k == 0 && !pt->multi) b.n[0] = pt->i1 - pt->i0 + (pt->size > 1 ? 2 * hji_ghost_width(o->deriv) : 0);
        b.nodes *= b.n[k];
    }
    /* the ghost layers are not in the output nor the tables: a slight overestimate */
    return dg_hji_solve_memory(&b, gm, o, nt);
}

/* ------------------------------------------------------------ the cut */

/* The halo of the largest block of g cut into c[k] blocks along each axis. */
static double cut_halo(const dg_hji_grid *g, int gw, const int *c) {
    double h = 0;
    for (int k = 0; k < g->ndim; k++) {
        if (c[k] == 1) continue;
        const int faces = g->bc[k] == DG_HJI_BC_PERIODIC || c[k] > 2 ? 2 : 1;
        double cross = 1;
        for (int j = 0; j < g->ndim; j++)
            if (j != k) cross *= (g->n[j] + c[j] - 1) / c[j];   /* the largest block's layers */
        h += (double)gw * faces * cross;
    }
    return h;
}

/* Every factorisation of rem over axes k .. d-2 into c; the best (least halo, then the
 * lexicographically largest c: the earlier axes cut more) into best. */
static void cut_search(const dg_hji_grid *g, int gw, int k, int rem, int *c, int *best, double *best_h) {
    const int nd = g->ndim;
    if (k == nd - 1) {
        if (rem != 1) return;
        c[k] = 1;
        const double h = cut_halo(g, gw, c);
        int better = h < *best_h;
        if (h == *best_h)
            for (int j = 0; j < nd; j++)
                if (c[j] != best[j]) {
                    better = c[j] > best[j];
                    break;
                }
        if (better) {
            *best_h = h;
            memcpy(best, c, (size_t)nd * sizeof *c);
        }
        return;
    }
    for (int f = 1; f <= rem; f++) {
        if (rem % f) continue;
        if (f > 1 && g->n[k] / f < gw) break;   /* blocks narrower than the ghost layers: more cuts are too */
        c[k] = f;
        cut_search(g, gw, k + 1, rem / f, c, best, best_h);
    }
}

dg_status dg_hji_part_cuts(const dg_hji_grid *g, int gw, int R, int *cuts, double *halo, dg_err *e) {
    dg_status rc = hji_check_grid(g, e);
    if (rc) return rc;
    if (!cuts || R < 1 || gw < 1)
        return dg_err_set(e, DG_ERR_ARG, "hji: part_cuts needs cuts, R >= 1 and gw >= 1 (got R %d, gw %d)", R, gw);
    int c[DG_HJI_GRID_MAX_DIMS], best[DG_HJI_GRID_MAX_DIMS];
    double best_h = INFINITY;
    for (int k = 0; k < g->ndim; k++) best[k] = 0;
    cut_search(g, gw, 0, R, c, best, &best_h);
    if (!(best_h < INFINITY))
        return dg_err_set(e, DG_ERR_ARG, "hji: %d ranks: no cut of the grid's axes (but the last) into blocks of at "
                          "least %d layers multiplies to %d", R, gw, R);
    memcpy(cuts, best, (size_t)g->ndim * sizeof *cuts);
    if (halo) *halo = best_h;
    return DG_OK;
}
