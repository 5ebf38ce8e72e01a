/* difgames hji figures: a value's 2-D slice, its zero level set, the figure of `difgames hji plot` and
 * `hji view`, the GIF of a simulation, and a 3-D value's level set as a shaded surface (`hji plot
 * --3d`). Part of difgames/hji.h. */
#ifndef DIFGAMES_HJI_FIGURE_H
#define DIFGAMES_HJI_FIGURE_H

#include "difgames/api.h"
#include "difgames/hji_sim.h"
#include "difgames/hji_value.h"
#include "difgames/image.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The 2-D slice of v (g's nodes) through axes 0 and 1 at the other axes' coordinates at[] (ndim;
 * at[0], at[1] unused), by interpolation, into out (n1, n0): rows from axis 1's high end down
 * (image order), columns along axis 0. */
DG_API void    dg_hji_slice2d(const dg_hji_grid *g, const double *v, const double *at, double *out);
/* One segment of a contour, in index coordinates of the field (column i, row j, fractional). */
typedef void (*dg_hji_segment_fn)(void *user, float i0, float j0, float i1, float j1);
/* The zero level set of a 2-D field v (ny rows of nx) by marching squares: for every cell whose
 * corners change sign ({v <= 0} against {v > 0}), the segment between the edge crossings (linear
 * interpolation), two at a saddle. seg (may be NULL) gets each; returns how many. */
DG_API int64_t dg_hji_contour(const double *v, int nx, int ny, dg_hji_segment_fn seg, void *user);
/* A value's slice as a picture, drawn again and again (what `difgames hji view` shows): the layout of
 * dg_hji_plot_value's figure for grid g of game (axes 0 and 1 named by dg_hji_axis_name, a colour
 * bar over [vlo, vhi], vname naming it), made once; each dg_hji_figure_draw paints a slice into an
 * image of the figure's size.
 *
 *     dg_hji_figure *f = dg_hji_figure_create(&vf.grid, vf.game, lo, hi, "V", &e);
 *     dg_image *img = dg_image_create(dg_hji_figure_width(f), dg_hji_figure_height(f), 0xffffff);
 *     dg_hji_figure_draw(f, img, &(dg_hji_figure_layer){.v = value, .at = at}, "air3d", &e);
 */
typedef struct dg_hji_figure dg_hji_figure;
typedef struct dg_hji_figure_layer {
    const double *v;                      /* (nodes) the value to paint (colours, zero set)    */
    const double *at;                     /* (ndim) the other axes' coordinates (at[2..])      */
    int           levels;                 /* > 0: that many more contours of the slice, evenly
                                             spaced inside its range (games of degree)         */
    const double *target;                 /* (nodes) or NULL: its zero set drawn dashed red    */
    const double *obstacle;               /* (nodes) or NULL: where > 0, hatched grey          */
    const double *path;                   /* (npath, 2) points on axes 0 and 1, or NULL         */
    int           npath;
} dg_hji_figure_layer;
/* NULL with e set (DG_ERR_ARG: fewer than 2 axes or 2 nodes on one; DG_ERR_NOMEM). */
DG_API dg_hji_figure *dg_hji_figure_create(const dg_hji_grid *g, const char *game, double vlo, double vhi,
                                           const char *vname, dg_err *e);
DG_API void           dg_hji_figure_free(dg_hji_figure *f);                /* NULL is harmless */
DG_API int            dg_hji_figure_width(const dg_hji_figure *f);
DG_API int            dg_hji_figure_height(const dg_hji_figure *f);
/* Paints the slice of layer->v through axes 0 and 1 at layer->at as a heat map with its zero level
 * set (white), the contours, target, obstacles and path of the layer, the axes, the colour bar and
 * title over img (which must be the figure's size: else DG_ERR_ARG). DG_ERR_NOMEM, else DG_OK. */
DG_API dg_status      dg_hji_figure_draw(dg_hji_figure *f, dg_image *img, const dg_hji_figure_layer *layer,
                                         const char *title, dg_err *e);
/* The point of axes 0 and 1 (x[0], x[1]) at pixel (px, py) of the figure: 1 inside the plot box,
 * 0 outside (x untouched). */
DG_API int            dg_hji_figure_point(const dg_hji_figure *f, double px, double py, double *x);
/* The pixel of the point (x0, x1) of axes 0 and 1 (px, py), inside the plot box or not. */
DG_API void           dg_hji_figure_pixel(const dg_hji_figure *f, double x0, double x1, double *px, double *py);

/* An animated GIF of a simulation: pass dg_hji_play_gif_step as dg_hji_sim_opts.on_step with the GIF
 * as user. A frame every ceil(steps / 120)-th step, at capture and at the last (at most 122), laid out
 * as dg_hji_plot_value's figure (one colour scale, V's range): the slice of V (at t_end) through the
 * state's axes 2.. with its zero set, the path so far over axes 0 and 1, the time and V in the title. */
typedef struct dg_hji_play_gif dg_hji_play_gif;
/* NULL with e set (DG_ERR_NOMEM, the file's DG_ERR_IO); p and V must outlive the GIF. */
DG_API dg_hji_play_gif *dg_hji_play_gif_begin(const char *path, const dg_hji_problem *p, const double *V, double t_end,
                                              dg_err *e);
DG_API int              dg_hji_play_gif_step(void *user, const dg_hji_sim_step *s);  /* non-zero: failed   */
DG_API const dg_err    *dg_hji_play_gif_error(const dg_hji_play_gif *g);             /* why a step failed  */
DG_API dg_status        dg_hji_play_gif_end(dg_hji_play_gif *g, dg_err *e);         /* writes it, frees g */
DG_API void             dg_hji_play_gif_abort(dg_hji_play_gif *g);                   /* no file; NULL ok   */

/* The figure of `difgames hji plot` as a PNG at path (atomically): the heat map of the value at t_end
 * with a colour bar, axes with ticks named by the game's state variables (dg_hji_axis_name), on the
 * slice through axes 0 and 1 at at[2..] (at NULL, or at[0], at[1]: unused; NULL: the middle of each
 * other axis), and over the heat map (dg_hji_plot_describe says which, with the title and the colour
 * bar's name): a game of kind's zero level sets of the stored times asked for (t_end and solve's
 * times, not the strategies' time-slice samples) with a legend of the times; a game of degree's
 * level sets of the value at t_end at the colour bar's labelled values. Returns DG_OK,
 * dg_hji_value_read's errors, DG_ERR_NOMEM or the PNG's DG_ERR_IO. */
DG_API dg_status dg_hji_plot_value(const dg_hji_value *v, const double *at, const char *path, dg_err *e);
/* dg_hji_plot_value with a learned value beside the grid's: learned (v's grid's nodes; NULL: none),
 * the network's value at v's t_end tabulated on v's grid (dg_hji_source_tabulate), its zero set (a
 * game of degree: its level sets at the same levels) drawn in magenta over the grid's, named in the
 * legend ("learned, t = ..."). */
DG_API dg_status dg_hji_plot_learned(const dg_hji_value *v, const double *at, const double *learned, const char *path,
                                     dg_err *e);
/* ------------------------------------------------------- 3-D: isosurfaces */
/* The 3-D slice of v (g's nodes, 3 axes or more) through axes 0, 1 and 2 at the other axes'
 * coordinates at[] (ndim; at[0..2] unused), by interpolation, into out (n0 n1 n2, laid out as a grid
 * of those three axes: axis 2 fastest); a grid of 3 axes: a copy. dg_hji_slice2d's 3-D analogue. */
DG_API void      dg_hji_slice3d(const dg_hji_grid *g, const double *v, const double *at, double *out);
/* The grid of g's first three axes (their nodes, bounds, periodic axes and names) into g3. */
DG_API void      dg_hji_grid_first3(const dg_hji_grid *g, dg_hji_grid *g3);
/* A level set {V = level} of a field on a grid of 3 axes as triangles (dg_hji_iso_make), a triangle
 * soup: corner c of triangle i is xyz[9 i + 3 c ..], its normal normal[9 i + 3 c ..], its vertex id
 * vertex[3 i + c]. Each triangle runs counter-clockwise seen from the side where V > level. */
typedef struct dg_hji_iso {
    int64_t  ntri;
    double  *xyz;      /* (ntri, 3, 3) the corners' coordinates on axes 0, 1, 2; a periodic axis's last
                          cell (node n-1 to node 0 again) lies at [hi - dx, hi], not across the box  */
    float   *normal;   /* (ntri, 3, 3) unit normals at the corners, towards V > level: the field's
                          gradient (central differences at the nodes) interpolated along the edge,
                          the same at every triangle that meets there (smooth shading)             */
    int64_t *vertex;   /* (ntri, 3) each corner's vertex: the grid edge it lies on (its lower node *
                          7 + its direction - 1), shared by every triangle that meets there; across a
                          periodic axis's wrap, the vertex at hi is the one at lo                   */
} dg_hji_iso;
/* The level set {V = level} of v (g's nodes; g of exactly 3 axes) by marching tetrahedra (Doi and
 * Koide 1991): every grid cell (a periodic axis's last one wrapping to node 0) cut into six
 * tetrahedra along its main diagonal, each crossing linear along the edges ({V <= level} against
 * {V > level}), one triangle where one corner of a tetrahedron differs from the other three, two
 * where two differ: no ambiguous cases, and the surface is closed wherever it does not meet the box's
 * faces. The triangles (at most two a tetrahedron, twelve a cell) are counted first and the memory
 * checked (dg_mem_check) before anything is allocated. Returns DG_OK (iso filled; no triangles when
 * the level is not crossed), DG_ERR_ARG (not 3 axes), DG_ERR_NOMEM. Free with dg_hji_iso_free. */
DG_API dg_status dg_hji_iso_make(const dg_hji_grid *g, const double *v, double level, dg_hji_iso *iso, dg_err *e);
DG_API void      dg_hji_iso_free(dg_hji_iso *iso);                     /* NULL and twice are harmless */
/* How a 3-D figure is viewed: MATLAB's view(az, el) (helperOC's visSetIm), orthographic. */
typedef struct dg_hji_iso_view {
    double level;      /* the surface {V = level} (0: the zero level set, a game of kind's set)    */
    double azimuth;    /* degrees, about axis 2, from the side of axis 1's low end: -37.5 (view(3)) */
    double elevation;  /* degrees above the plane of axes 0 and 1: 30 (view(3))                  */
} dg_hji_iso_view;
#define DG_HJI_ISO_AZIMUTH   (-37.5)
#define DG_HJI_ISO_ELEVATION 30.0
/* The figure of `difgames hji plot --3d` at path (atomically): the level set of the value at t_end (a
 * value of more than 3 axes: its 3-D slice through axes 0, 1, 2 at at[3..]; at NULL: the middle of
 * each other axis) as a shaded surface (dg_hji_iso_make; Lambert shading of the corners' normals
 * plus an ambient term, lit from beside the viewer, triangles painted back to front, no edges
 * drawn), orthographic at view (NULL: level 0, view(3)), the three axes scaled to a cube, the grid's
 * box as a wire frame with axes 0, 1, 2 ticked and named (dg_hji_axis_name) with their ranges, a
 * title naming the game, the level and the time. A PDF (vector) when path ends in ".pdf", else a
 * PNG. Returns DG_OK, DG_ERR_ARG (fewer than 3 axes, a view not finite), dg_hji_value_read's errors,
 * DG_ERR_NOMEM (the memory checked before the value, its slice and the surface are allocated), the
 * file's DG_ERR_IO. */
DG_API dg_status dg_hji_plot_iso(const dg_hji_value *v, const double *at, const dg_hji_iso_view *view,
                                 const char *path, dg_err *e);

/* About how many level sets dg_hji_plot_value draws of a game of degree. */
#define DG_HJI_PLOT_LEVELS 8
/* What dg_hji_plot_value draws of a value file's slice. */
typedef struct dg_hji_plot_spec {
    char   title[192];                    /* "air3d: zero level sets of V, psi = 3.14",
                                             "pursuit2d: level sets of V, the time to reach the target" */
    char   bar[64];                       /* the colour bar's name: what V is, its unit, its time  */
    int    nlevels;                       /* a game of degree: the values whose level sets are drawn,
                                             round numbers inside (lo, hi), increasing, the colour
                                             bar's labelled ticks; 0 for a game of kind (the zero
                                             level sets of its times)                              */
    double level[32];
} dg_hji_plot_spec;
/* Fills s for v's slice at at (as dg_hji_plot_value's) whose values at t_end span [lo, hi], by what
 * v is (v->payoff): the title naming the game, the slice's other axes and what is drawn, the colour
 * bar's name, a game of degree's levels (about DG_HJI_PLOT_LEVELS). */
DG_API void      dg_hji_plot_describe(const dg_hji_value *v, const double *at, double lo, double hi, dg_hji_plot_spec *s);

#ifdef __cplusplus
}
#endif
#endif
