/* hji internals shared by the module's files (not installed). */
#ifndef DG_HJI_INTERNAL_H
#define DG_HJI_INTERNAL_H

#include <math.h>
#include <stdint.h>

#include "difgames/dist.h"
#include "difgames/hji.h"
#include "difgames/hji_part.h"

/* How a tabulated dynamics entry (an f_i, G_ij or D_ij) varies over the grid. */
enum { HJI_ZERO = 0, HJI_CONST, HJI_AXIS, HJI_FULL };
/* How a game's static dissipation alpha_i(x) is kept (see kernel.inc, static_alpha). */
enum { HJI_A_ROW = 0, HJI_A_LINE, HJI_A_FULL, HJI_A_COMPUTE };

/* Wraps i into [0, n). */
static inline int hji_wrap(int i, int n) {
    int r = i % n;
    return r < 0 ? r + n : r;
}

/* sign(x) with sign(0) = 0, as MATLAB's. */
static inline double hji_sgn(double x) { return (double)((x > 0) - (x < 0)); }

/* Number of ghost cells a scheme needs on each side. */
static inline int hji_ghost_width(dg_hji_deriv d) {
    return d == DG_HJI_DERIV_UPWIND1 ? 1 : d == DG_HJI_DERIV_ENO2 ? 2 : 3;
}

/* Checks grid, game and options for a solve; DG_OK or DG_ERR_ARG with e set. */
dg_status hji_check_solve(const dg_hji_grid *g, const dg_hji_game *gm, const dg_hji_opts *o, int nt,
                          const double *times, dg_err *e);
/* Checks grid and options for dg_hji_gradient. */
dg_status hji_check_grid(const dg_hji_grid *g, dg_err *e);

/* A game of degree with dynamics as the generic Hamiltonian the kernel solves (its ham and alpha
 * read gm, which must outlive out; game.c). */
void hji_degree_wrap(const dg_hji_game *gm, dg_hji_game *out);
/* 1 when an affine game of degree has an input whose extreme is not bang-bang (QUAD, or a box at a
 * running cost): its Hamiltonian is the generic one (hji_degree_wrap). */
int  hji_game_smooth_inputs(const dg_hji_game *gm);
/* 1 when s is a slices source (dg_hji_source_slices) on grid g: its slices are g's node values. */
int  hji_source_on_grid(const dg_hji_source *s, const dg_hji_grid *g);
/* 1 when an input is unbounded at a quadratic cost (QUAD): its dissipation grows with |p|, the
 * generic Hamiltonian's passes find it (a BOX_COST input stays on the affine kernel). */
int  hji_game_quad_inputs(const dg_hji_game *gm);

/* Fast sweeping (fast_sweep.c): a stationary solve of gm (checked) from v0 into out (nodes), on the
 * whole grid (pt NULL) or a rank's block (v0, o->stop and out the block's; collective). */
dg_status hji_fast_sweep(const dg_hji_grid *g, const dg_hji_game *gm, const dg_hji_opts *o, const double *v0,
                    double *out, dg_hji_stats *stats, const dg_hji_part *pt, dg_err *e);

/* A game with noise (gm->diffusion, diffusion.c): the explicit monotone scheme from v0 (or o->warm)
 * into out (nt, nodes) at the increasing times, double, the whole grid. */
dg_status hji_noise_solve(const dg_hji_grid *g, const dg_hji_game *gm, const dg_hji_opts *o, const double *v0,
                          const double *obstacle, int nt, const double *times, double *out, dg_hji_stats *stats,
                          dg_err *e);

/* The kernel's instances, on the whole grid (pt NULL) or a rank's block (kernel.inc in kernel_f64.c, kernel_f32.c; derivatives in double only) */
dg_status hji_solve_f64(const dg_hji_grid *g, const dg_hji_game *gm, const dg_hji_opts *o,
                        const double *v0, const double *obstacle, int nt, const double *times,
                        double *out, dg_hji_stats *stats, const dg_hji_part *pt, dg_err *e);
dg_status hji_solve_f32(const dg_hji_grid *g, const dg_hji_game *gm, const dg_hji_opts *o,
                        const float *v0, const float *obstacle, int nt, const double *times,
                        float *out, dg_hji_stats *stats, const dg_hji_part *pt, dg_err *e);
dg_status hji_derivs_f64(const dg_hji_grid *g, const dg_hji_opts *o, const double *v, double *left,
                         double *right, double *grad, dg_err *e);
double    hji_interp_f64(const dg_hji_grid *g, const double *v, const double *x, double *grad);
double    hji_interp_f32(const dg_hji_grid *g, const float *v, const double *x, double *grad);

/* x (ndim) into y with g's periodic axes wrapped into [lo, lo + period); a coordinate already there
 * (every node's) is copied as is. */
void hji_wrap_point(const dg_hji_grid *g, const double *x, double *y);
/* dg_hji_sdf_ball and dg_hji_sdf_box at one point x (ndim) of g's space, with the gradient into grad
 * (ndim) unless NULL (grid.c says what at the kinks); the node functions below call these. */
double hji_sdf_ball_at(const dg_hji_grid *g, const double *center, double radius, unsigned axes, const double *x,
                       double *grad);
double hji_sdf_box_at(const dg_hji_grid *g, const double *lo, const double *hi, unsigned axes, const double *x,
                      double *grad);
/* dg_hji_sdf_ball and dg_hji_sdf_box at nodes [j0, j0 + n) of g only, into out (n) (grid.c). */
void hji_sdf_ball_nodes(const dg_hji_grid *g, const double *center, double radius, unsigned axes, int64_t j0,
                        int64_t n, double *out);
void hji_sdf_box_nodes(const dg_hji_grid *g, const double *lo, const double *hi, unsigned axes, int64_t j0, int64_t n,
                       double *out);
/* A problem's value at node j (v0: initial or target) and its mark there (obstacle, else stop, else
 * 0), as dg_hji_game_print samples them: from its arrays when they hold the whole grid, else
 * evaluated at j alone (problem_nodes.c); a set that moves in time, the sum of its values at the
 * game's times 0 and t_end (so that a value file of moving sets is not taken for one of fixed sets). */
void hji_problem_node(const dg_hji_problem *p, int64_t j, double *v0, double *mark);
/* A box of g (axis k's nodes [lo[k], lo[k] + n[k])) stored row-major is a sequence of runs that
 * are contiguous in the grid's array too: hji_box_runs gives their count and *len (nodes each),
 * hji_box_run_at the grid's index of run i's first node (the box's node i *len). */
int64_t hji_box_runs(const dg_hji_grid *g, const int *lo, const int *n, int64_t *len);
int64_t hji_box_run_at(const dg_hji_grid *g, const int *lo, const int *n, int64_t i);
/* Builds the node arrays of a problem from dg_hji_problem_load_split over a box of the grid (lo,
 * n as hji_box_runs; a rank's: collective, the largest front speed of a time to reach reduced
 * over the ranks), stored row-major, and its fingerprint (each sample node evaluated alone);
 * p->block0 = the box's first node. */
dg_status hji_problem_build_block(dg_hji_problem *p, const int *lo, const int *n, dg_err *e);
/* 1 when p has (or, built per block, will have) an obstacle array. */
int  hji_problem_has_obstacle(const dg_hji_problem *p);

/* A time to reach as reported (payoff: time), nt values of n nodes from node0 in out: 0 where the
 * game is over (the target's held values d / c < 0), elsewhere as solved (a free node by the rim
 * may read a few 1e-5 below 0: kept, so that the value file is the solver's state and a warm start
 * from it goes on where the solve stopped). Without a stop set, 0 wherever negative. */
void hji_problem_time_report(const dg_hji_problem *p, int64_t node0, int64_t n, int nt, double *out);

/* dg_hji_value_check comparing only the first upto numbers of the game's fingerprint (-1: all of
 * them; 1: the payoff type alone, not the discount, dynamics, costs, target or obstacles). */
struct dg_hji_value;
dg_status hji_value_check_upto(const struct dg_hji_value *v, const dg_hji_problem *p, const char *config, int upto,
                               dg_err *e);

/* A value file's writer (value.c): the nt values' tensors (vals NULL: their layout only, the
 * bytes written elsewhere) and the metadata of dg_hji_value_write. */
struct dg_st_writer;
dg_status hji_value_writer(const dg_hji_problem *p, int nt, const double *times, const unsigned char *sampled,
                           const double *vals, int f32, const char *config_yaml, struct dg_st_writer **out,
                           dg_err *e);

#endif
