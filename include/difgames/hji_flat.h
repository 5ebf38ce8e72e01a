/* difgames hji flat: a grid value behind one handle, read at arrays of states (for callers through a
 * foreign-function interface: the Python package's dg.hji, python/difgames/hji.py). Part of the grid
 * solver's layer (compiled once: doubles throughout).
 *
 *     dg_err e = {0};
 *     dg_hji_flat *h = dg_hji_flat_solve("configs/hji/pursuit2d.yaml", NULL, NULL, 0, &e);
 *     double x[2] = {0.5, 0.2}, v, g[2], u[1], d[1];
 *     dg_hji_flat_eval(h, 1, x, &v, g, u, d, &e);    // value, gradient and both players' inputs at x
 *     dg_hji_flat_free(h);
 */
#ifndef DIFGAMES_HJI_FLAT_H
#define DIFGAMES_HJI_FLAT_H

#include <stdint.h>

#include "difgames/api.h"
#include "difgames/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dg_hji_flat dg_hji_flat;  /* a problem and its solved value V(x, t_end); opaque */

/* What dg_hji_flat_name names. */
typedef enum dg_hji_flat_kind {
    DG_HJI_FLAT_GAME,   /* the game's name ("pursuit2d")                           */
    DG_HJI_FLAT_U,      /* who plays u ("pursuer")                                  */
    DG_HJI_FLAT_D,      /* who plays d ("evader"; "" when none)                     */
    DG_HJI_FLAT_AXIS,   /* axis i's name ("psi"; "" when unnamed)                   */
} dg_hji_flat_kind;

/* Reads the HJI config at path, sets the n keys to values (in order), builds its problem and solves it
 * to t_end (dg_hji_problem_solve, the solver's options as the config gives them). Its learn: section
 * (hji learn's) is left unread. NULL with e set: the config's error (file:line), DG_ERR_NOMEM, the
 * solver's. */
DG_API dg_hji_flat  *dg_hji_flat_solve(const char *path, const char *const *keys, const char *const *values, int n,
                                       dg_err *e);
DG_API void          dg_hji_flat_free(dg_hji_flat *h);  /* NULL is harmless */
/* The grid: returns its axes; n (nodes per axis), lo and hi (first and last node) get one item per axis
 * (room for 8 each; any may be NULL). */
DG_API int           dg_hji_flat_grid(const dg_hji_flat *h, int64_t *n, double *lo, double *hi);
/* The value at every node, (n0, n1, ...) row-major, the last axis fastest: h's own array (valid until
 * dg_hji_flat_free). */
DG_API const double *dg_hji_flat_values(const dg_hji_flat *h);
/* The players' input sizes: u's into *nu, d's into *nd (0: none); returns the time t_end solved to. */
DG_API double        dg_hji_flat_inputs(const dg_hji_flat *h, int *nu, int *nd);
/* A name of h (dg_hji_flat_kind; i: the axis), owned by h; NULL past the last axis or an unknown kind. */
DG_API const char   *dg_hji_flat_name(const dg_hji_flat *h, int kind, int i);
/* At B states x (B, axes): value (B) interpolated (multilinear) in V, its gradient grad (B, axes) and
 * the equilibrium inputs u (B, nu) and d (B, nd) there (dg_hji_game_optimal); any output may be NULL.
 * Outside the grid the value is extrapolated linearly from the edge (dg_hji_interp). DG_OK, or
 * DG_ERR_ARG for B < 1 or a non-finite state (naming its row). */
DG_API dg_status     dg_hji_flat_eval(const dg_hji_flat *h, int64_t B, const double *x, double *value, double *grad,
                                      double *u, double *d, dg_err *e);

#ifdef __cplusplus
}
#endif
#endif
