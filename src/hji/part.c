/* The grid split over MPI ranks (include/difgames/hji_part.h): each rank's block of axis 0, a
 * problem's solve on it, and the blocks gathered on rank 0. The kernel (kernel.inc) does the
 * exchanges and the reductions. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hji/internal.h"

/* The first node of axis 0 that rank r of R owns: [r n0 / R, (r + 1) n0 / R). */
static int block_start(int n0, int r, int R) { return (int)((int64_t)r * n0 / R); }

dg_status dg_hji_part_init(dg_hji_part *pt, const dg_hji_grid *g, const dg_hji_opts *o, dg_err *e) {
    if (!pt || !o) return dg_err_set(e, DG_ERR_ARG, "hji: part_init needs a part and options");
    dg_status rc = hji_check_grid(g, e);
    if (rc) return rc;
    memset(pt, 0, sizeof *pt);
    pt->rank = dg_dist_rank();
    pt->size = dg_dist_size();
    const int R = pt->size, n0 = g->n[0], gw = hji_ghost_width(o->deriv);
    /* a block of one layer takes its ghost layers from as many ranks as hold them */
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
    return DG_OK;
}

dg_status dg_hji_problem_solve_part(const dg_hji_problem *p, const dg_hji_part *pt, int nt, const double *times,
                                    double *out, dg_hji_stats *stats, dg_err *e) {
    if (!p || !pt || !out) return dg_err_set(e, DG_ERR_ARG, "hji: problem_solve_part needs a problem, a part and out");
    /* as dg_hji_problem_solve_at: a stationary time to reach marches up to twice the cap */
    const double twice = 2 * (nt > 0 ? times[nt - 1] : 0);
    const int longer = p->stationary && p->payoff == DG_HJI_PAYOFF_TIME && nt == 1;
    if (p->block0 != 0 && p->block0 != pt->node0)
        return dg_err_set(e, DG_ERR_ARG, "hji: the problem keeps the block from node %lld, not this part's",
                          (long long)p->block0);
    const int64_t at = pt->node0 - p->block0;   /* the block in p's node arrays */
    dg_hji_opts o = p->opts;
    if (o.stop) o.stop += at;
    dg_status rc = dg_hji_solve_part(pt, &p->grid, &p->game, &o, dg_hji_problem_v0(p) + at,
                                     p->obstacle ? p->obstacle + at : NULL, nt, longer ? &twice : times, out,
                                     stats, e);
    if (p->payoff == DG_HJI_PAYOFF_TIME && (rc == DG_OK || rc == DG_ERR_INTERRUPTED))
        for (int64_t j = 0; j < (int64_t)nt * pt->nodes; j++) out[j] = out[j] > 0 ? out[j] : 0;  /* the target: 0 */
    return rc;
}

/* A copy of nodes [at, at + n) of *a in place of *a (NULL stays NULL). */
static int keep(double **a, int64_t at, int64_t n) {
    if (!*a) return 0;
    double *b = malloc((size_t)n * sizeof *b);
    if (!b) return -1;
    memcpy(b, *a + at, (size_t)n * sizeof *b);
    free(*a);
    *a = b;
    return 0;
}

dg_status dg_hji_problem_keep_block(dg_hji_problem *p, const dg_hji_part *pt, dg_err *e) {
    if (!p || !pt) return dg_err_set(e, DG_ERR_ARG, "hji: keep_block needs a problem and a part");
    if (!p->target) return hji_problem_build_block(p, pt->node0, pt->nodes, e);   /* loaded split */
    if (p->block0 != 0 || pt->nodes == p->grid.nodes) return DG_OK;   /* kept already, or the whole grid */
    if (keep(&p->target, pt->node0, pt->nodes) || keep(&p->obstacle, pt->node0, pt->nodes) ||
        keep(&p->initial, pt->node0, pt->nodes) || keep(&p->stop, pt->node0, pt->nodes))
        return dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory for a block of %lld nodes", (long long)pt->nodes);
    p->opts.stop = p->stop;
    p->block0 = pt->node0;
    if (pt->node0 == 0) p->block0 = 0;   /* rank 0: the block's indices are the grid's */
    return DG_OK;
}

dg_status dg_hji_part_gather(const dg_hji_part *pt, const dg_hji_grid *g, int nt, const double *mine, double *all,
                             dg_err *e) {
    if (!pt || !g || !mine || nt < 1 || (pt->rank == 0 && !all))
        return dg_err_set(e, DG_ERR_ARG, "hji: part_gather needs a part, a grid, nt >= 1, the blocks and (rank 0) "
                          "the whole arrays");
    size_t *bytes = calloc((size_t)pt->size, sizeof *bytes);
    if (!bytes) return dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory");
    for (int r = 0; r < pt->size; r++)
        bytes[r] = (size_t)(block_start(g->n[0], r + 1, pt->size) - block_start(g->n[0], r, pt->size)) *
                   (size_t)g->stride[0] * sizeof(double);
    dg_status rc = DG_OK;
    for (int k = 0; k < nt && rc == DG_OK; k++)
        rc = dg_dist_gatherv(mine + (size_t)k * (size_t)pt->nodes, (size_t)pt->nodes * sizeof(double),
                             all ? all + (size_t)k * (size_t)g->nodes : NULL, bytes, e);
    free(bytes);
    return rc;
}

double dg_hji_solve_part_memory(const dg_hji_part *pt, const dg_hji_grid *g, const dg_hji_game *gm,
                                const dg_hji_opts *o, int nt) {
    if (!pt || !g || !o || g->ndim < 1) return 0;
    dg_hji_grid b = *g;   /* the block with its ghost slabs, as a grid of its own */
    b.n[0] = pt->i1 - pt->i0 + (pt->size > 1 ? 2 * hji_ghost_width(o->deriv) : 0);
    b.nodes = (int64_t)b.n[0] * g->stride[0];
    /* the ghost slabs are not in the output nor the tables: a slight overestimate */
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
    int c[DG_HJI_MAX_DIMS], best[DG_HJI_MAX_DIMS];
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
