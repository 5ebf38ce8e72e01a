/* difgames hji across MPI ranks: the grid split into blocks (docs/scale.md).
 *
 * The grid is cut along one or several axes (never the last: it holds the kernel's contiguous
 * rows) into a Cartesian topology of boxes, the cut that exchanges the least halo
 * (dg_hji_part_cuts) unless opts.split asks for axis 0 only. Every rank owns one box, stored
 * row-major as a grid of its own (pt->n nodes along each axis, from the grid's pt->lo), and keeps
 * ghost layers as wide as the scheme's stencil (1, 2, 3 for upwind, ENO2, ENO3 / WENO5) across
 * each cut face, exchanged with its neighbours at every Runge-Kutta stage. Cut along axis 0 only,
 * a box is axis 0's [i0, i1): a contiguous block of the grid's array (global nodes [node0, node0 +
 * nodes)), and a block narrower than the ghost layers takes them from as many ranks as hold them.
 * The Lax-Friedrichs bounds, the WENO scales, the CFL step, a stationary solve's residual and the tabulation's classification
 * are combined with max / min / and over the ranks, which are exact: the value is the same bits
 * as one process's whatever the rank count.
 *
 *     dg_dist_init(&argc, &argv);
 *     dg_hji_part pt;
 *     if (dg_hji_part_init(&pt, &p->grid, &p->opts, &e)) ...;
 *     if (dg_hji_problem_keep_block(p, &pt, &e)) ...;             // p keeps this rank's box
 *     double *mine = malloc(pt.nodes * sizeof *mine);             // this rank's box
 *     if (dg_hji_problem_solve_part(p, &pt, 1, &p->t_end, mine, &st, &e)) ...;
 *     dg_hji_part_gather(&pt, &p->grid, 1, mine, rank 0 ? whole : NULL, &e); // or each rank uses its box
 */
#ifndef DIFGAMES_HJI_PART_H
#define DIFGAMES_HJI_PART_H

#include "difgames/api.h"
#include "difgames/hji_problem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dg_hji_part {
    int     rank, size;          /* this rank of size (dg_dist_rank, dg_dist_size)               */
    int     i0, i1;              /* axis 0's nodes [i0, i1) are this rank's                     */
    int64_t node0, nodes;        /* the box: its first node's index in the grid, its node count */
    int     left, right;         /* the ranks owning the boxes below and above along axis 0 (-1: none) */
    int     multi;               /* cut along another axis than 0 (then cuts[0] may be 1)        */
    int     cuts[DG_HJI_GRID_MAX_DIMS];   /* boxes along each axis (1: not cut); their product is size */
    int     coords[DG_HJI_GRID_MAX_DIMS]; /* this rank's box along each axis (rank = row-major coords) */
    int     lo[DG_HJI_GRID_MAX_DIMS], n[DG_HJI_GRID_MAX_DIMS]; /* the box: axis k's nodes [lo[k], lo[k] + n[k]) */
    int     down[DG_HJI_GRID_MAX_DIMS], up[DG_HJI_GRID_MAX_DIMS]; /* the neighbours along axis k (-1: none) */
} dg_hji_part;

/* This rank's box of g for a solve with options o (its ghost width and o->split): each cut axis k
 * split as evenly as it goes (box c owns [c n_k / cuts_k, (c + 1) n_k / cuts_k)), the cut
 * dg_hji_part_cuts chooses (DG_HJI_SPLIT_AUTO), or axis 0 alone when o->split is
 * DG_HJI_SPLIT_AXIS0, when no cut into boxes of at least gw layers exists, or for fast sweeping
 * (it sweeps blocks of axis 0); along axis 0 alone a block narrower than the ghost layers takes
 * them from as many ranks as hold them. DG_ERR_ARG when a rank would own no layer (R > n0), a
 * periodic axis 0 is shorter than the ghost layers, or a halo would pass 2^31 nodes. Collective
 * (the topology). */
DG_API dg_status dg_hji_part_init(dg_hji_part *pt, const dg_hji_grid *g, const dg_hji_opts *o, dg_err *e);
/* dg_hji_part_init with the caller's cut (cuts: boxes along each axis, their product the rank
 * count, the last axis 1; NULL: as dg_hji_part_init). DG_ERR_ARG when it does not fit: a cut
 * along several axes needs boxes of at least the ghost width and no fast sweeping. */
DG_API dg_status dg_hji_part_init_cut(dg_hji_part *pt, const dg_hji_grid *g, const dg_hji_opts *o, const int *cuts,
                                      dg_err *e);

/* dg_hji_solve on this rank's block (collective: every rank calls it with the same grid, game,
 * options and times): v0, obstacle (or NULL), o->stop (or NULL) and out are the block's
 * (pt->nodes each; out nt blocks), the progress hook sees the block. Fast sweeping (method
 * SWEEP) sweeps each block with ghost layers exchanged between sweeps: it converges to the same
 * tolerance, not to one process's bits (src/hji/fast_sweep.c says why). On one rank of one this is
 * dg_hji_solve. */
DG_API dg_status dg_hji_solve_part(const dg_hji_part *pt, const dg_hji_grid *g, const dg_hji_game *gm,
                                   const dg_hji_opts *o, const double *v0, const double *obstacle, int nt,
                                   const double *times, double *out, dg_hji_stats *stats, dg_err *e);

/* dg_hji_problem_solve_at and dg_hji_problem_solve_slices on this rank's block (out: nt blocks of
 * pt->nodes; times as theirs). Collective. A cut along several axes needs p to keep the box
 * (dg_hji_problem_keep_block); along axis 0 alone p may hold the whole grid. */
DG_API dg_status dg_hji_problem_solve_part(const dg_hji_problem *p, const dg_hji_part *pt, int nt, const double *times,
                                           double *out, dg_hji_stats *stats, dg_err *e);
DG_API dg_status dg_hji_problem_solve_slices_part(const dg_hji_problem *p, const dg_hji_part *pt, int slices, int nreq,
                                                  const double *req, int *nt, double *times, double *out,
                                                  dg_hji_stats *stats, dg_err *e);

/* Keeps only this rank's box of p's node arrays (target, obstacle, initial, stop: each
 * pt->nodes, row-major), freeing the rest, so that a rank holds 1/R of them; afterwards p serves the _part
 * solves above with this part only (not dg_hji_problem_solve, plots or simulations). For a problem
 * from dg_hji_problem_load_split it builds the block's arrays instead, each node's values the
 * bits a whole-grid load gives there (collective: a time to reach's largest front speed is a max
 * over the ranks). */
DG_API dg_status dg_hji_problem_keep_block(dg_hji_problem *p, const dg_hji_part *pt, dg_err *e);

/* dg_hji_problem_load without the node arrays (target, obstacle, initial, stop) and the game's
 * fingerprint: dg_hji_problem_keep_block builds the block's, so that no rank ever holds a whole
 * array. Until then p serves dg_hji_solve_plan and dg_hji_solve_file (which keeps the block) only. */
DG_API dg_hji_problem *dg_hji_problem_load_split(dg_cfg *cfg, dg_err *e);

/* Rank 0 assembles nt whole arrays (nt x nodes, into all; NULL on the other ranks) from every
 * rank's nt boxes (mine: nt x pt->nodes, each box row-major). Collective. */
DG_API dg_status dg_hji_part_gather(const dg_hji_part *pt, const dg_hji_grid *g, int nt, const double *mine, double *all,
                                    dg_err *e);

/* The cut of g over R ranks that exchanges the least halo: cuts[k] blocks along axis k (their
 * product R; cuts[k] = 1: axis k not cut), chosen over every factorisation of R into axes 0 ..
 * d-2 (the last axis holds the kernel's contiguous rows) with blocks at least gw layers along a
 * cut axis. The cost, *halo, is the ghost nodes the largest block receives in a face exchange:
 * sum over cut axes k of gw x (its faces: 2, or 1 for an open axis cut in two) x the block's
 * largest cross-section across k. Ties go to the cut with fewer blocks along the later axes.
 * DG_ERR_ARG when no cut fits (R too large for the grid). dg_hji_part_init takes this cut. */
DG_API dg_status dg_hji_part_cuts(const dg_hji_grid *g, int gw, int R, int *cuts, double *halo, dg_err *e);

/* Box c of cuts along an axis of n nodes: its first node (c n / cuts) and, for c = cuts, n. */
DG_API int dg_hji_part_start(int n, int c, int cuts);

/* Rank r's box of pt's cut of g: lo[k], n[k] along each axis, and its first node's index. */
DG_API int64_t dg_hji_part_box(const dg_hji_part *pt, const dg_hji_grid *g, int r, int *lo, int *n);

/* Bytes one rank's solve of its block keeps (dg_hji_solve_memory's estimate for the block). */
DG_API double dg_hji_solve_part_memory(const dg_hji_part *pt, const dg_hji_grid *g, const dg_hji_game *gm,
                                       const dg_hji_opts *o, int nt);

#ifdef __cplusplus
}
#endif
#endif
