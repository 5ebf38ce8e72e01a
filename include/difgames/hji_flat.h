/* difgames hji flat: a value behind one handle, read at arrays of states and used as a safety filter
 * (for callers through a foreign-function interface: the Python package's dg.hji,
 * python/difgames/hji.py): a grid solved here (dg_hji_flat_solve), a value file of `difgames hji
 * solve` (dg_hji_flat_file), or either of those or a network of `hji learn` (dg_hji_flat_open,
 * hji_learn.h: the learner's layer). Part of the grid solver's layer (compiled once: doubles
 * throughout).
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

typedef struct dg_hji_flat dg_hji_flat;  /* a problem and its value V(x, horizon); opaque */

/* Where a handle's value comes from (dg_hji_flat_source). */
typedef enum dg_hji_flat_from {
    DG_HJI_FLAT_SOLVED = 0,  /* solved by dg_hji_flat_solve                                     */
    DG_HJI_FLAT_FILE,        /* a value file of hji solve (its last stored time)                */
    DG_HJI_FLAT_NETWORK,     /* a network of hji learn (at its t_end)                            */
} dg_hji_flat_from;

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
/* A value file of hji solve at path: its problem from config (NULL: the config the file stores) with
 * the n keys set, the file checked against it (dg_hji_value_load: the same game, constants and grid);
 * the value read is its last stored time. NULL with e set (the file's or the config's error; a
 * network: DG_ERR_FORMAT, dg_hji_flat_open reads those). */
DG_API dg_hji_flat  *dg_hji_flat_file(const char *path, const char *config, const char *const *keys,
                                      const char *const *values, int n, dg_err *e);
DG_API void          dg_hji_flat_free(dg_hji_flat *h);  /* NULL is harmless */
DG_API int           dg_hji_flat_source(const dg_hji_flat *h);  /* dg_hji_flat_from */
/* The grid: returns its axes; n (nodes per axis), lo and hi (first and last node) get one item per axis
 * (room for 8 each; any may be NULL). */
DG_API int           dg_hji_flat_grid(const dg_hji_flat *h, int64_t *n, double *lo, double *hi);
/* The value at every node of the config's grid, (n0, n1, ...) row-major, the last axis fastest: h's
 * own array (valid until dg_hji_flat_free); a network's tabulated there at its horizon on the first
 * call (dg_hji_source_tabulate). NULL with e set: DG_ERR_NOMEM, the network's error, or DG_ERR_ARG
 * for a problem of more axes than a grid holds. */
DG_API const double *dg_hji_flat_values(dg_hji_flat *h, dg_err *e);
/* The players' input sizes: u's into *nu, d's into *nd (0: none); returns the value's horizon (the
 * time-to-go it is read at: t_end solved to, a file's last time, a network's t_end). */
DG_API double        dg_hji_flat_inputs(const dg_hji_flat *h, int *nu, int *nd);
/* A name of h (dg_hji_flat_kind; i: the axis), owned by h; NULL past the last axis or an unknown kind. */
DG_API const char   *dg_hji_flat_name(const dg_hji_flat *h, int kind, int i);
/* At B states x (B, axes): value (B) at the horizon, its gradient grad (B, axes) and the equilibrium
 * inputs u (B, nu) and d (B, nd) there (dg_hji_game_optimal); any output may be NULL. A grid's value is
 * interpolated (multilinear) and outside the grid extrapolated linearly from the edge (dg_hji_interp);
 * a network's is its own, with its exact gradient, the batch in one evaluation. DG_OK, DG_ERR_ARG for
 * B < 1 or a non-finite state (naming its row), DG_ERR_NOMEM, or a network's error. */
DG_API dg_status     dg_hji_flat_eval(const dg_hji_flat *h, int64_t B, const double *x, double *value, double *grad,
                                      double *u, double *d, dg_err *e);
/* The player a safety filter acts for: the maximiser (the one that keeps V high: {V <= 0} is what the
 * other can force), 0 for u, 1 for d; -1 when there is none to filter (a game of degree, no dynamics,
 * the maximiser's input not a box). */
DG_API int           dg_hji_flat_safe_player(const dg_hji_flat *h);
/* The safety filter (dg_hji_filter_row, mode DG_HJI_FILTER_SWITCH or _QP, margin and gamma as there) of
 * the safe player (dg_hji_flat_safe_player) around its nominal inputs: at B states x (B, axes) the
 * nominal (B, its dim, in its own units) into out (B, its dim), each row's 1 when it changed into
 * changed (B; may be NULL). Rows the filter leaves are nominal's bits. DG_OK; DG_ERR_ARG for a game with
 * no such player, a bad mode, margin or gamma, or non-finite states or inputs; DG_ERR_NOMEM; a
 * network's error. */
DG_API dg_status     dg_hji_flat_filter(const dg_hji_flat *h, int mode, double margin, double gamma, int64_t B,
                                        const double *x, const double *nominal, double *out, int32_t *changed,
                                        dg_err *e);

#ifdef __cplusplus
}
#endif
#endif
