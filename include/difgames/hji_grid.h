/* difgames hji grid: the Cartesian grid the HJI solver works on, and targets on it as signed distances.
 *
 * Arrays over a grid are row-major, axis 0 slowest, the last axis fastest (contiguous): node
 * (i0, .., i_{d-1}) sits at sum_k i_k * grid.stride[k]. Part of difgames/hji.h (its opening says how
 * the parts fit together). */
#ifndef DIFGAMES_HJI_GRID_H
#define DIFGAMES_HJI_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "difgames/api.h"
#include "difgames/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A problem's state may have up to DG_HJI_MAX_DIMS dimensions (its grid then a box: hji learn samples
 * it), but the grid solver holds n^d nodes and stops at DG_HJI_GRID_MAX_DIMS axes: solves, fast
 * sweeping, the ranks' boxes, value files and the viewer refuse more. */
#define DG_HJI_MAX_DIMS       12  /* most state dimensions of a problem (its grid's axes)        */
#define DG_HJI_GRID_MAX_DIMS   6  /* most axes of a grid of nodes (the grid solver, value files) */

typedef enum dg_hji_bc {           /* boundary of a grid axis (ghost cells)                          */
    DG_HJI_BC_AWAY = 0,            /* extrapolate away from zero (ToolboxLS addGhostExtrapolate)      */
    DG_HJI_BC_LINEAR,              /* plain linear extrapolation of the two edge nodes                */
    DG_HJI_BC_PERIODIC             /* the axis wraps (angles); set by dg_hji_grid_init                */
} dg_hji_bc;

/* ------------------------------------------------------------------- grid */
/* Axis k has n[k] nodes lo[k] + i dx[k]. A plain axis spans [lo, hi] with dx = (hi - lo)/(n - 1);
 * a periodic one spans [lo, hi) with dx = (hi - lo)/n (hi is node 0 again). */
typedef struct dg_hji_grid {
    int       ndim;                       /* 1 .. DG_HJI_MAX_DIMS (nodes: .. GRID_MAX_DIMS)     */
    int       n[DG_HJI_MAX_DIMS];         /* nodes per axis, >= 2                              */
    double    lo[DG_HJI_MAX_DIMS];        /* first node                                        */
    double    hi[DG_HJI_MAX_DIMS];        /* last node, or the period's end if periodic        */
    double    dx[DG_HJI_MAX_DIMS];        /* spacing                                           */
    dg_hji_bc bc[DG_HJI_MAX_DIMS];        /* AWAY (default) or LINEAR; PERIODIC if periodic    */
    int64_t   stride[DG_HJI_MAX_DIMS];    /* elements between neighbours along the axis        */
    int64_t   nodes;                      /* product of n (0, strides 0: more than
                                             DG_HJI_GRID_MAX_DIMS axes, a box without nodes)  */
    char      name[DG_HJI_MAX_DIMS][24];  /* each axis's name, the game's state variable ("psi"):
                                             what figures label it; "" unnamed (x0, x1, ...).
                                             dg_hji_grid_init leaves them "", a problem names them */
} dg_hji_grid;

/* Fills g. periodic (ndim flags) may be NULL (none). Returns DG_OK, or DG_ERR_ARG naming the bad axis
 * (ndim out of range, n < 2, hi <= lo, non-finite, more than 2^40 nodes). Of more than
 * DG_HJI_GRID_MAX_DIMS axes g is a box: nodes and strides 0 (no node functions on it). */
DG_API dg_status dg_hji_grid_init(dg_hji_grid *g, int ndim, const double *lo, const double *hi, const int *n,
                                  const int *periodic, dg_err *e);
DG_API double  dg_hji_grid_coord(const dg_hji_grid *g, int axis, int i);            /* lo + i dx                   */
DG_API void    dg_hji_grid_point(const dg_hji_grid *g, int64_t node, double *x);   /* node's coordinates (ndim)   */
DG_API int64_t dg_hji_grid_node(const dg_hji_grid *g, const int *idx);             /* multi-index -> flat index   */
/* Axis k's name into buf (cap bytes): g->name[k], or "x<k>" when it has none; returns buf. */
DG_API const char *dg_hji_grid_axis_name(const dg_hji_grid *g, int k, char *buf, size_t cap);
/* The point a slice through axes 0 and 1 passes through (hji plot --at, hji view --at), into at
 * (ndim): each axis's middle, 0.5 (lo + hi), then the values text gives the axes after the first
 * two: "x2=V,x3=W" (an axis by its index or its name, "psi=1.5"), or "V,W" (a value without a name
 * goes to the axis after the one before it, the first to axis 2). text NULL: the middles. DG_OK, or
 * DG_ERR_ARG naming the item that names no such axis or gives no number. */
DG_API dg_status dg_hji_grid_slice_at(const dg_hji_grid *g, const char *text, double *at, dg_err *e);

/* --------------------------------------------------------- targets, sets */
/* Signed distances over the grid (negative inside) into out (nodes). axes is a bit mask of the axes
 * that count (0: all; ball over some axes = a cylinder over the others); center, lo, hi have ndim
 * entries (those of uncounted axes are ignored). Periodic axes use the wrapped difference. */
DG_API void dg_hji_sdf_ball(const dg_hji_grid *g, const double *center, double radius, unsigned axes, double *out);
DG_API void dg_hji_sdf_box(const dg_hji_grid *g, const double *lo, const double *hi, unsigned axes, double *out);
DG_API void dg_hji_sdf_union(int64_t n, const double *a, double *out);      /* out = min(out, a)              */
DG_API void dg_hji_sdf_intersect(int64_t n, const double *a, double *out);  /* out = max(out, a)              */
DG_API void dg_hji_sdf_complement(int64_t n, double *out);                  /* out = -out                     */

#ifdef __cplusplus
}
#endif
#endif
