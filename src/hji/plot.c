/* Pictures of values: 2-D slices of N-d values, their zero level sets by marching squares, and a
 * slice's heat map with the zero sets of several times over it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/image.h"
#include "hji/internal.h"
#include "gfx/draw.h"

void dg_hji_slice2d(const dg_hji_grid *g, const double *v, const double *at, double *out) {
    const int nx = g->n[0], ny = g->n[1];
    double x[DG_HJI_MAX_DIMS];
    for (int k = 2; k < g->ndim; k++) x[k] = at[k];
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++) {
            x[0] = dg_hji_grid_coord(g, 0, i);
            x[1] = dg_hji_grid_coord(g, 1, ny - 1 - j);
            out[j * nx + i] = dg_hji_interp(g, v, x, NULL);
        }
}

int64_t dg_hji_contour(const double *v, int nx, int ny, dg_hji_segment_fn seg, void *user) {
    int64_t count = 0;
    for (int j = 0; j + 1 < ny; j++)
        for (int i = 0; i + 1 < nx; i++) {
            /* the cell's corners counter-clockwise in index space, and where each edge crosses 0 */
            const double c[4] = {v[j * nx + i], v[j * nx + i + 1], v[(j + 1) * nx + i + 1], v[(j + 1) * nx + i]};
            const float cx[4] = {(float)i, (float)(i + 1), (float)(i + 1), (float)i};
            const float cy[4] = {(float)j, (float)j, (float)(j + 1), (float)(j + 1)};
            float px[4], py[4];
            int k = 0;
            for (int e = 0; e < 4 && k < 4; e++) {
                const double a = c[e], b = c[(e + 1) % 4];
                if ((a <= 0) != (b <= 0)) {
                    const float t = (float)(a / (a - b));
                    px[k] = cx[e] + t * (cx[(e + 1) % 4] - cx[e]);
                    py[k] = cy[e] + t * (cy[(e + 1) % 4] - cy[e]);
                    k++;
                }
            }
            for (int s = 0; s + 1 < k; s += 2) {  /* two crossings: one segment; four (a saddle): two */
                if (seg) seg(user, px[s], py[s], px[s + 1], py[s + 1]);
                count++;
            }
        }
    return count;
}

/* ------------------------------------------------------------- figures */

#define FONT 13.0                  /* tick labels and axis names (px)           */
#define TITLE_FONT 15.0
#define PAD 10.0
#define TICK 5.0
#define GAP 4.0
#define BAR_W 16.0                 /* the colour bar's width                     */
#define PLOT_SIDE 520.0            /* the plot box's longer side                 */

/* Contours of the stored times in order (cycling), the last one (t_end) white. */
static const uint32_t LEVEL_COLORS[] = {0xff7043, 0x4dd0e1, 0xffd54f, 0xf06292, 0x81c784, 0xba68c8};
#define LAST_COLOR 0xffffffu
#define LEVEL_LINE 0xffffffu       /* a game of degree's level sets                             */
#define LEARNED_COLOR 0xff40ffu    /* a learned value's zero set (or level sets) beside the grid's */

/* A value figure's layout: the plot box (axes 0 and 1 of the grid at equal scale, unless that would
 * make a side shorter than a third of the other), the colour bar at its right, all in pixels. */
typedef struct figure {
    const dg_hji_grid *g;
    int    w, h;                   /* the canvas                                 */
    double x0, y0, pw, ph;         /* the plot box                               */
    double bx;                     /* the colour bar's left edge (top y0, height ph) */
    double xlo, xhi, ylo, yhi;     /* axes 0 and 1: first and last node          */
    double vlo, vhi;               /* the colour bar's range                     */
    dg_axis xa, ya, va;
    char   xname[24], yname[24], vname[48];
} figure;

static double fig_x(const figure *f, double v) { return f->x0 + (v - f->xlo) / (f->xhi - f->xlo) * f->pw; }
static double fig_y(const figure *f, double v) { return f->y0 + (f->yhi - v) / (f->yhi - f->ylo) * f->ph; }

/* axis k's name: the grid's (the game's state variable, a model's too), else the built-in game's, else xk */
static void axis_name(char *out, size_t cap, const dg_hji_grid *g, const char *game, int k) {
    const char *n = g->name[k][0] ? NULL : dg_hji_axis_name(game, k);  /* a grid made by hand: the game's */
    if (n) snprintf(out, cap, "%s", n);
    else dg_hji_grid_axis_name(g, k, out, cap);
}

/* Lays a figure out for grid g of game, the colour bar over [vlo, vhi] named vname with about vticks
 * labelled ticks (0: as many as its height holds), with a title line. d measures text (any canvas). */
static void fig_layout(figure *f, dg_draw *d, const dg_hji_grid *g, const char *game, double vlo, double vhi,
                       const char *vname, int vticks) {
    *f = (figure){.g = g, .vlo = vlo, .vhi = vhi};
    f->xlo = dg_hji_grid_coord(g, 0, 0);
    f->xhi = dg_hji_grid_coord(g, 0, g->n[0] - 1);
    f->ylo = dg_hji_grid_coord(g, 1, 0);
    f->yhi = dg_hji_grid_coord(g, 1, g->n[1] - 1);
    axis_name(f->xname, sizeof f->xname, g, game, 0);
    axis_name(f->yname, sizeof f->yname, g, game, 1);
    snprintf(f->vname, sizeof f->vname, "%s", vname);
    const double xr = f->xhi - f->xlo, yr = f->yhi - f->ylo;
    f->pw = xr >= yr ? PLOT_SIDE : fmax(PLOT_SIDE / 3, round(PLOT_SIDE * xr / yr));
    f->ph = yr >= xr ? PLOT_SIDE : fmax(PLOT_SIDE / 3, round(PLOT_SIDE * yr / xr));
    if (!(f->vhi > f->vlo)) { f->vlo -= 0.5; f->vhi += 0.5; }
    f->xa = (dg_axis){.lo = f->xlo, .hi = f->xhi};
    f->ya = (dg_axis){.lo = f->ylo, .hi = f->yhi};
    f->va = (dg_axis){.lo = f->vlo, .hi = f->vhi};
    dg_axis_linear(&f->xa, (int)(f->pw / 75));
    dg_axis_linear(&f->ya, (int)(f->ph / 55));
    dg_axis_linear(&f->va, vticks > 0 ? vticks : (int)(f->ph / 55));
    const double ch = dg_draw_text_height(d, FONT);
    f->x0 = round(PAD + ch + GAP + dg_axis_widest(d, &f->ya, FONT) + GAP + TICK);
    f->y0 = round(PAD + dg_draw_text_height(d, TITLE_FONT) + PAD);
    f->bx = f->x0 + f->pw + 2 * PAD;
    f->w = (int)ceil(f->bx + BAR_W + TICK + GAP + dg_axis_widest(d, &f->va, FONT) + GAP + ch + PAD);
    f->h = (int)ceil(f->y0 + f->ph + TICK + GAP + ch + GAP + ch + PAD);
}

typedef struct seg_box { dg_draw *d; const figure *f; double sx, sy; uint32_t rgb; double width; } seg_box;

static void draw_segment(void *user, float ai, float aj, float bi, float bj) {
    const seg_box *b = user;
    dg_draw_line(b->d, b->f->x0 + ai * b->sx, b->f->y0 + aj * b->sy, b->f->x0 + bi * b->sx, b->f->y0 + bj * b->sy,
                 b->rgb, b->width);
}

/* Ticks with labels and the axis names around the plot box and along the colour bar. */
static void fig_axes(dg_draw *d, const figure *f) {
    const uint32_t ink = 0x000000;
    const double ch = dg_draw_text_height(d, FONT), bottom = f->y0 + f->ph;
    dg_draw_rect_outline(d, f->x0 - 1, f->y0 - 1, f->pw + 3, f->ph + 3, ink, 1);
    for (int i = 0; i < f->xa.n; i++) {
        const double x = round(fig_x(f, f->xa.tick[i]));
        dg_draw_line(d, x, bottom + 2, x, bottom + 1 + TICK, ink, 1);
        dg_draw_text(d, x, bottom + 1 + TICK + GAP, f->xa.label[i], ink, FONT, DG_TEXT_CENTER | DG_TEXT_TOP, 0);
    }
    for (int i = 0; i < f->ya.n; i++) {
        const double y = round(fig_y(f, f->ya.tick[i]));
        dg_draw_line(d, f->x0 - 1 - TICK, y, f->x0 - 2, y, ink, 1);
        dg_draw_text(d, f->x0 - 1 - TICK - GAP, y, f->ya.label[i], ink, FONT, DG_TEXT_RIGHT | DG_TEXT_MIDDLE, 0);
    }
    dg_draw_text(d, f->x0 + f->pw / 2, bottom + 1 + TICK + GAP + ch + GAP, f->xname, ink, FONT,
                 DG_TEXT_CENTER | DG_TEXT_TOP, 0);
    dg_draw_text(d, PAD, f->y0 + f->ph / 2, f->yname, ink, FONT, DG_TEXT_CENTER | DG_TEXT_TOP, 1);
    /* the colour bar: vhi at the top, vlo at the bottom */
    float ramp[256];
    for (int i = 0; i < 256; i++) ramp[i] = (float)(f->vhi - (f->vhi - f->vlo) * i / 255.0);
    dg_draw_heat(d, (int)f->bx, (int)f->y0, (int)BAR_W, (int)f->ph, ramp, 1, 256, (float)f->vlo, (float)f->vhi, 1);
    dg_draw_rect_outline(d, f->bx - 1, f->y0 - 1, BAR_W + 3, f->ph + 3, ink, 1);
    const double br = f->bx + BAR_W + 1;
    double widest = 0;
    for (int i = 0; i < f->va.n; i++) {
        const double y = round(f->y0 + (f->vhi - f->va.tick[i]) / (f->vhi - f->vlo) * f->ph);
        dg_draw_line(d, br + 1, y, br + TICK, y, ink, 1);
        widest = fmax(widest, dg_draw_text(d, br + TICK + GAP, y, f->va.label[i], ink, FONT,
                                           DG_TEXT_LEFT | DG_TEXT_MIDDLE, 0));
    }
    dg_draw_text(d, br + TICK + GAP + widest + GAP, f->y0 + f->ph / 2, f->vname, ink, FONT,
                 DG_TEXT_CENTER | DG_TEXT_TOP, 1);
}

/* The heat map of slices[nt - 1] over the plot box with the zero sets of every slice over it, the axes,
 * the colour bar and (nt > 1 or legend) a legend of times[] in the plot box's top-right corner. */
static dg_status fig_draw(dg_draw *d, const figure *f, double *const *slices, int nt, const double *times,
                          int legend, const double *learned, dg_err *e) {
    const dg_hji_grid *g = f->g;
    const int nx = g->n[0], ny = g->n[1];
    float *heat = malloc((size_t)nx * ny * sizeof(float));
    if (!heat) return dg_err_set(e, DG_ERR_NOMEM, "hji plot: out of memory for a %d x %d heat map", nx, ny);
    for (int j = 0; j < nx * ny; j++) heat[j] = (float)slices[nt - 1][j];
    dg_draw_heat(d, (int)f->x0, (int)f->y0, (int)f->pw, (int)f->ph, heat, nx, ny, (float)f->vlo, (float)f->vhi, 1);
    free(heat);
    for (int i = nt - 1; i >= 0; i--) {  /* the later (larger, thicker) sets under the earlier ones */
        seg_box b = {d, f, f->pw / (nx - 1), f->ph / (ny - 1), i == nt - 1 ? LAST_COLOR : LEVEL_COLORS[i % 6],
                     i == nt - 1 ? 2.5 : 2.0};
        dg_hji_contour(slices[i], nx, ny, draw_segment, &b);
    }
    if (learned) {  /* over the grid's: where the two differ, both show */
        seg_box b = {d, f, f->pw / (nx - 1), f->ph / (ny - 1), LEARNED_COLOR, 2.0};
        dg_hji_contour(learned, nx, ny, draw_segment, &b);
    }
    fig_axes(d, f);
    if (!legend) return DG_OK;
    char s[48];
    const double ch = dg_draw_text_height(d, FONT), sample = 24, lh = ch + 3;
    double tw = 0;
    for (int i = 0; i < nt; i++) {
        snprintf(s, sizeof s, "t = %.3g", times[i]);
        tw = fmax(tw, dg_draw_text_width(d, s, FONT));
    }
    snprintf(s, sizeof s, "learned, t = %.3g", times[nt - 1]);
    if (learned) tw = fmax(tw, dg_draw_text_width(d, s, FONT));
    const int rows = nt + (learned != NULL);
    const double bw = round(PAD + sample + GAP * 2 + tw + PAD), bh = round(rows * lh + PAD);
    const double bx = round(f->x0 + f->pw - PAD - bw), by = round(f->y0 + PAD);
    dg_draw_rect_fill(d, bx, by, bw, bh, 0x202028, 0.8);
    for (int i = 0; i < nt; i++) {
        const double y = by + PAD / 2 + i * lh + lh / 2;
        const uint32_t c = i == nt - 1 ? LAST_COLOR : LEVEL_COLORS[i % 6];
        dg_draw_line(d, bx + PAD, y, bx + PAD + sample, y, c, i == nt - 1 ? 2.5 : 2.0);
        snprintf(s, sizeof s, "t = %.3g", times[i]);
        dg_draw_text(d, bx + PAD + sample + 2 * GAP, y, s, 0xffffff, FONT, DG_TEXT_LEFT | DG_TEXT_MIDDLE, 0);
    }
    if (learned) {
        const double y = by + PAD / 2 + nt * lh + lh / 2;
        dg_draw_line(d, bx + PAD, y, bx + PAD + sample, y, LEARNED_COLOR, 2.0);
        snprintf(s, sizeof s, "learned, t = %.3g", times[nt - 1]);
        dg_draw_text(d, bx + PAD + sample + 2 * GAP, y, s, 0xffffff, FONT, DG_TEXT_LEFT | DG_TEXT_MIDDLE, 0);
    }
    return DG_OK;
}

/* A game of degree's figure: the heat map of slice over the plot box with the level sets at sp's
 * levels over it (white), the axes, and the same levels marked across the colour bar beside their
 * labels (they are its ticks), so that each line reads as the value its tick names. */
static dg_status fig_levels(dg_draw *d, const figure *f, const double *slice, const dg_hji_plot_spec *sp,
                            const double *learned, dg_err *e) {
    const int nx = f->g->n[0], ny = f->g->n[1];
    float *heat = malloc((size_t)nx * ny * sizeof(float));
    double *shifted = malloc((size_t)nx * ny * sizeof(double));
    if (!heat || !shifted) {
        free(heat);
        free(shifted);
        return dg_err_set(e, DG_ERR_NOMEM, "hji plot: out of memory for a %d x %d heat map", nx, ny);
    }
    for (int j = 0; j < nx * ny; j++) heat[j] = (float)slice[j];
    dg_draw_heat(d, (int)f->x0, (int)f->y0, (int)f->pw, (int)f->ph, heat, nx, ny, (float)f->vlo, (float)f->vhi, 1);
    seg_box b = {d, f, f->pw / (nx - 1), f->ph / (ny - 1), LEVEL_LINE, 1.5};
    for (int k = 0; k < sp->nlevels; k++) {  /* the level set of c is the zero set of V - c */
        for (int j = 0; j < nx * ny; j++) shifted[j] = slice[j] - sp->level[k];
        dg_hji_contour(shifted, nx, ny, draw_segment, &b);
    }
    b.rgb = LEARNED_COLOR;  /* a learned value's level sets at the same levels, over the grid's */
    for (int k = 0; learned && k < sp->nlevels; k++) {
        for (int j = 0; j < nx * ny; j++) shifted[j] = learned[j] - sp->level[k];
        dg_hji_contour(shifted, nx, ny, draw_segment, &b);
    }
    free(heat);
    free(shifted);
    fig_axes(d, f);
    for (int k = 0; k < sp->nlevels; k++) {
        const double y = round(f->y0 + (f->vhi - sp->level[k]) / (f->vhi - f->vlo) * f->ph);
        dg_draw_line(d, f->bx, y, f->bx + BAR_W, y, LEVEL_LINE, 1.5);
    }
    if (learned) {  /* which lines are which */
        const double ch = dg_draw_text_height(d, FONT), bw = round(PAD + 24 + 2 * GAP + dg_draw_text_width(d, "learned",
                                                                                                         FONT) + PAD);
        const double bx = round(f->x0 + f->pw - PAD - bw), by = round(f->y0 + PAD), y = by + PAD / 2 + (ch + 3) / 2;
        dg_draw_rect_fill(d, bx, by, bw, round(ch + 3 + PAD), 0x202028, 0.8);
        dg_draw_line(d, bx + PAD, y, bx + PAD + 24, y, LEARNED_COLOR, 1.5);
        dg_draw_text(d, bx + PAD + 24 + 2 * GAP, y, "learned", 0xffffff, FONT, DG_TEXT_LEFT | DG_TEXT_MIDDLE, 0);
    }
    return DG_OK;
}

/* Lays out a figure (fig_layout), measuring its text on a scratch canvas. */
static dg_status fig_plan(figure *f, const dg_hji_grid *g, const char *game, double vlo, double vhi,
                          const char *vname, int vticks, dg_err *e) {
    dg_image *scratch = dg_image_create(1, 1, 0);
    if (!scratch) return dg_err_set(e, DG_ERR_NOMEM, "hji plot: out of memory");
    dg_draw d;
    dg_status s = dg_draw_begin(&d, scratch, e);
    if (s == DG_OK) {
        fig_layout(f, &d, g, game, vlo, vhi, vname, vticks);
        dg_draw_abort(&d);
    }
    dg_image_free(scratch);
    return s;
}

/* "air3d: zero level sets of V, psi = 3.14" into title (the slice's other axes named). */
static void slice_title(char *title, size_t cap, const char *game, const char *what, const dg_hji_grid *g,
                        const double *at) {
    int n = snprintf(title, cap, "%s: %s", game[0] ? game : "value", what);
    for (int k = 2; k < g->ndim && n >= 0 && (size_t)n < cap; k++) {
        char name[32];
        axis_name(name, sizeof name, g, game, k);
        n += snprintf(title + n, cap - (size_t)n, ", %s = %.3g", name, at[k]);
    }
}

/* The colour bar's range of a game of degree's slice: [lo, hi] as it is, or widened as fig_layout
 * widens a flat one, so that the levels and the bar's ticks are the same numbers. */
static void bar_range(double *lo, double *hi) {
    if (!(*hi > *lo)) { *lo -= 0.5; *hi += 0.5; }
}

void dg_hji_plot_describe(const dg_hji_value *v, const double *at, double lo, double hi, dg_hji_plot_spec *s) {
    memset(s, 0, sizeof *s);
    const double t_end = v->times[v->nt > 0 ? v->nt - 1 : 0];
    const char *what = "zero level sets of V";
    if (v->payoff == DG_HJI_PAYOFF_TIME) {
        what = "level sets of V, the time to reach the target";
        snprintf(s->bar, sizeof s->bar, "V: time to reach the target (s), at most %.3g", t_end);
    } else if (v->payoff == DG_HJI_PAYOFF_COST) {
        what = "level sets of V, the cost to go";
        if (v->discount > 0) snprintf(s->bar, sizeof s->bar, "V: discounted cost to go (rho = %.3g)", v->discount);
        else snprintf(s->bar, sizeof s->bar, "V: cost to go over a horizon of %.3g", t_end);
    } else {
        snprintf(s->bar, sizeof s->bar, "V at t = %.3g", t_end);
    }
    double mid[DG_HJI_MAX_DIMS];  /* at NULL: the middle of each other axis, as dg_hji_plot_value's */
    for (int k = 0; k < v->grid.ndim; k++) mid[k] = at && k >= 2 ? at[k] : 0.5 * (v->grid.lo[k] + v->grid.hi[k]);
    slice_title(s->title, sizeof s->title, v->game, what, &v->grid, mid);
    if (v->payoff == DG_HJI_PAYOFF_KIND) return;
    /* a game of degree: the colour bar's round ticks inside the range; not at its ends, nor a
     * rounding error away (a level set there is a point, a loop of noise around the minimum, the
     * target's rim or the cap's edge, which the colours show already) */
    bar_range(&lo, &hi);
    dg_axis a = {.lo = lo, .hi = hi};
    dg_axis_linear(&a, DG_HJI_PLOT_LEVELS);
    const double eps = 1e-3 * (hi - lo);
    for (int i = 0; i < a.n && s->nlevels < (int)(sizeof s->level / sizeof s->level[0]); i++)
        if (a.tick[i] > lo + eps && a.tick[i] < hi - eps) s->level[s->nlevels++] = a.tick[i];
}

dg_status dg_hji_plot_value(const dg_hji_value *vf, const double *at_in, const char *path, dg_err *e) {
    return dg_hji_plot_learned(vf, at_in, NULL, path, e);
}

dg_status dg_hji_plot_learned(const dg_hji_value *vf, const double *at_in, const double *learned, const char *path,
                              dg_err *e) {
    const dg_hji_grid *g = &vf->grid;
    if (g->ndim < 2)   /* (merton1d, lqg1d) a curve would be the figure: not drawn yet */
        return dg_err_set(e, DG_ERR_ARG, "hji plot: %s has one axis: the figure is a heat map of two axes (a value "
                          "of one axis is not drawn yet)", vf->game[0] ? vf->game : "the value");
    double at[DG_HJI_MAX_DIMS];
    for (int k = 0; k < g->ndim; k++) at[k] = at_in && k >= 2 ? at_in[k] : 0.5 * (g->lo[k] + g->hi[k]);
    const int nx = g->n[0], ny = g->n[1];
    const int kind = vf->payoff == DG_HJI_PAYOFF_KIND;
    double *v = malloc((size_t)g->nodes * sizeof(double));
    double *slices[DG_HJI_MAX_TIMES] = {0}, times[DG_HJI_MAX_TIMES];
    /* the times asked for (t_end last), not the strategies' samples; a game of degree: t_end alone */
    int idx[DG_HJI_MAX_TIMES], ns = 0;
    for (int i = kind ? 0 : vf->nt - 1; i < vf->nt; i++)
        if (!vf->sampled[i]) times[ns] = vf->times[i], idx[ns++] = i;
    double *lslice = learned ? malloc((size_t)nx * ny * sizeof(double)) : NULL;
    int ok = v != NULL && (!learned || lslice);
    for (int i = 0; i < ns && ok; i++) ok = (slices[i] = malloc((size_t)nx * ny * sizeof(double))) != NULL;
    if (ok && learned) dg_hji_slice2d(g, learned, at, lslice);
    dg_status s = ok ? DG_OK : dg_err_set(e, DG_ERR_NOMEM, "hji plot: out of memory");
    for (int i = 0; i < ns && s == DG_OK; i++)
        if ((s = dg_hji_value_read(vf, idx[i], v, e)) == DG_OK) dg_hji_slice2d(g, v, at, slices[i]);
    figure f;
    dg_hji_plot_spec spec;
    dg_image *img = NULL;
    if (s == DG_OK) {
        double lo = INFINITY, hi = -INFINITY;
        const double *fin = slices[ns - 1];
        for (int j = 0; j < nx * ny; j++) { lo = fmin(lo, fin[j]); hi = fmax(hi, fin[j]); }
        dg_hji_plot_describe(vf, at, lo, hi, &spec);
        if (!kind) bar_range(&lo, &hi);
        s = fig_plan(&f, g, vf->game, lo, hi, spec.bar, kind ? 0 : DG_HJI_PLOT_LEVELS, e);
    }
    if (s == DG_OK && !(img = dg_image_create(f.w, f.h, 0xffffff)))
        s = dg_err_set(e, DG_ERR_NOMEM, "hji plot: out of memory for a %dx%d figure", f.w, f.h);
    dg_draw d;
    if (s == DG_OK) s = dg_draw_begin(&d, img, e);
    if (s == DG_OK) {
        dg_draw_text(&d, f.x0 + f.pw / 2, PAD, spec.title, 0x000000, TITLE_FONT, DG_TEXT_CENTER | DG_TEXT_TOP, 0);
        s = kind ? fig_draw(&d, &f, slices, ns, times, 1, lslice, e) : fig_levels(&d, &f, slices[0], &spec, lslice, e);
        if (s == DG_OK) s = dg_draw_end(&d, e);
        else dg_draw_abort(&d);
    }
    if (s == DG_OK) s = dg_png_write(img, path, e);
    dg_image_free(img);
    for (int i = 0; i < ns; i++) free(slices[i]);
    free(v);
    free(lslice);
    return s;
}

/* ------------------------------------------------------- figures to redraw */

struct dg_hji_figure {
    figure f;
    double *slice, *aux;           /* (n0 n1) a slice, and a second one for target and obstacle */
    float  *heat;                  /* (n0 n1)                                                    */
};

dg_hji_figure *dg_hji_figure_create(const dg_hji_grid *g, const char *game, double vlo, double vhi,
                                    const char *vname, dg_err *e) {
    if (!g || g->ndim < 2 || g->n[0] < 2 || g->n[1] < 2) {
        dg_err_set(e, DG_ERR_ARG, "value figure: needs a grid of 2 axes or more, 2 nodes or more on each");
        return NULL;
    }
    dg_hji_figure *hf = calloc(1, sizeof *hf);
    const size_t n = (size_t)g->n[0] * g->n[1];
    if (hf) {
        hf->slice = malloc(n * sizeof(double));
        hf->aux = malloc(n * sizeof(double));
        hf->heat = malloc(n * sizeof(float));
    }
    if (!hf || !hf->slice || !hf->aux || !hf->heat) {
        dg_hji_figure_free(hf);
        dg_err_set(e, DG_ERR_NOMEM, "value figure: out of memory for a %d x %d slice", g->n[0], g->n[1]);
        return NULL;
    }
    if (fig_plan(&hf->f, g, game ? game : "", vlo, vhi, vname ? vname : "V", 0, e) != DG_OK) {
        dg_hji_figure_free(hf);
        return NULL;
    }
    return hf;
}

void dg_hji_figure_free(dg_hji_figure *hf) {
    if (!hf) return;
    free(hf->slice);
    free(hf->aux);
    free(hf->heat);
    free(hf);
}

int dg_hji_figure_width(const dg_hji_figure *hf) { return hf ? hf->f.w : 0; }
int dg_hji_figure_height(const dg_hji_figure *hf) { return hf ? hf->f.h : 0; }

int dg_hji_figure_point(const dg_hji_figure *hf, double px, double py, double *x) {
    const figure *f = &hf->f;
    if (!(px >= f->x0 && px <= f->x0 + f->pw && py >= f->y0 && py <= f->y0 + f->ph)) return 0;
    x[0] = f->xlo + (px - f->x0) / f->pw * (f->xhi - f->xlo);
    x[1] = f->yhi - (py - f->y0) / f->ph * (f->yhi - f->ylo);
    return 1;
}

void dg_hji_figure_pixel(const dg_hji_figure *hf, double x0, double x1, double *px, double *py) {
    *px = fig_x(&hf->f, x0);
    *py = fig_y(&hf->f, x1);
}

/* A dashed segment (the target's rim). */
static void draw_dashed(void *user, float ai, float aj, float bi, float bj) {
    const seg_box *b = user;
    const double x0 = b->f->x0 + ai * b->sx, y0 = b->f->y0 + aj * b->sy;
    const double x1 = b->f->x0 + bi * b->sx, y1 = b->f->y0 + bj * b->sy;
    const double len = hypot(x1 - x0, y1 - y0);
    /* dashes of 5 pixels every 10 along the figure, by the segment's position */
    const double phase = fmod(fabs(x0) + fabs(y0), 10.0);
    for (double s = phase < 5 ? 0 : 10 - phase; s < len; s += 10) {
        const double e = fmin(len, s + 5);
        dg_draw_line(b->d, x0 + (x1 - x0) * s / len, y0 + (y1 - y0) * s / len, x0 + (x1 - x0) * e / len,
                     y0 + (y1 - y0) * e / len, b->rgb, b->width);
    }
}

dg_status dg_hji_figure_draw(dg_hji_figure *hf, dg_image *img, const dg_hji_figure_layer *L, const char *title,
                             dg_err *e) {
    const figure *f = &hf->f;
    const dg_hji_grid *g = f->g;
    if (!img || img->w != f->w || img->h != f->h || !L || !L->v || !L->at)
        return dg_err_set(e, DG_ERR_ARG, "value figure: needs an image of %dx%d pixels, a value and its slice",
                          f->w, f->h);
    const int nx = g->n[0], ny = g->n[1];
    dg_hji_slice2d(g, L->v, L->at, hf->slice);
    dg_draw d;
    if (dg_draw_begin(&d, img, e) != DG_OK) return e ? e->status : DG_ERR_NOMEM;
    dg_draw_rect_fill(&d, 0, 0, img->w, img->h, 0xffffff, 1);
    for (int j = 0; j < nx * ny; j++) hf->heat[j] = (float)hf->slice[j];
    dg_draw_heat(&d, (int)f->x0, (int)f->y0, (int)f->pw, (int)f->ph, hf->heat, nx, ny, (float)f->vlo, (float)f->vhi,
                 1);
    seg_box b = {&d, f, f->pw / (nx - 1), f->ph / (ny - 1), 0xd0d0d0, 1.0};
    if (L->obstacle) {  /* the obstacles' rims, and a grey veil inside */
        dg_hji_slice2d(g, L->obstacle, L->at, hf->aux);
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++)
                if (hf->aux[j * nx + i] > 0)
                    dg_draw_rect_fill(&d, fig_x(f, dg_hji_grid_coord(g, 0, i)) - b.sx / 2,
                                      f->y0 + j * b.sy - b.sy / 2, b.sx, b.sy, 0x606068, 0.6);
        for (int j = 0; j < nx * ny; j++) hf->aux[j] = -hf->aux[j];
        b.rgb = 0x303038;
        b.width = 2;
        dg_hji_contour(hf->aux, nx, ny, draw_segment, &b);
    }
    if (L->levels > 0) {  /* more contours, evenly inside the slice's range (games of degree) */
        double lo = INFINITY, hi = -INFINITY;
        for (int j = 0; j < nx * ny; j++)
            if (isfinite(hf->slice[j])) { lo = fmin(lo, hf->slice[j]); hi = fmax(hi, hf->slice[j]); }
        for (int k = 1; k <= L->levels && hi > lo; k++) {
            const double c = lo + (hi - lo) * k / (L->levels + 1);
            for (int j = 0; j < nx * ny; j++) hf->aux[j] = hf->slice[j] - c;
            b.rgb = 0x202020;
            b.width = 1;
            dg_hji_contour(hf->aux, nx, ny, draw_segment, &b);
        }
    }
    if (L->target) {
        dg_hji_slice2d(g, L->target, L->at, hf->aux);
        b.rgb = 0xff3030;
        b.width = 2;
        dg_hji_contour(hf->aux, nx, ny, draw_dashed, &b);
    }
    b.rgb = LAST_COLOR;
    b.width = 2.5;
    dg_hji_contour(hf->slice, nx, ny, draw_segment, &b);
    if (L->path && L->npath > 0) {
        double px[4096], py[4096];
        const int every = L->npath > 4096 ? (L->npath + 4095) / 4096 : 1;
        int n = 0;
        for (int k = 0; k < L->npath && n < 4096; k += every, n++) {
            px[n] = fig_x(f, L->path[2 * k]);
            py[n] = fig_y(f, L->path[2 * k + 1]);
        }
        dg_draw_polyline(&d, px, py, n, 0xff8c1a, 2);
        const double *last = L->path + 2 * (L->npath - 1);
        dg_draw_circle_fill(&d, fig_x(f, last[0]), fig_y(f, last[1]), 4.5, 0xff8c1a, 1);
        dg_draw_circle_outline(&d, fig_x(f, last[0]), fig_y(f, last[1]), 4.5, 0xffffff, 1);
    }
    fig_axes(&d, f);
    if (title) dg_draw_text(&d, f->x0 + f->pw / 2, PAD, title, 0x000000, TITLE_FONT, DG_TEXT_CENTER | DG_TEXT_TOP, 0);
    return dg_draw_end(&d, e);
}

/* ------------------------------------------------------------- play GIFs */

struct dg_hji_play_gif {
    dg_gif *gf;
    dg_image *img;
    figure fig;
    double *slice, t_end, xs[2][4096];
    const dg_hji_problem *p;
    const double *V;
    int trail;
    dg_err e;
};

dg_hji_play_gif *dg_hji_play_gif_begin(const char *path, const dg_hji_problem *p, const double *V, double t_end,
                                       dg_err *e) {
    dg_hji_play_gif *pg = calloc(1, sizeof *pg);
    if (pg) {
        *pg = (dg_hji_play_gif){.p = p, .V = V, .t_end = t_end};
        pg->slice = malloc((size_t)p->grid.n[0] * p->grid.n[1] * sizeof(double));
    }
    if (!pg || !pg->slice) {
        dg_err_set(e, DG_ERR_NOMEM, "out of memory");
        dg_hji_play_gif_abort(pg);
        return NULL;
    }
    double lo = INFINITY, hi = -INFINITY;  /* one colour scale for every frame: V's range */
    for (int64_t j = 0; j < p->grid.nodes; j++) { lo = fmin(lo, V[j]); hi = fmax(hi, V[j]); }
    char vname[48];
    snprintf(vname, sizeof vname, "V at t = %.3g", t_end);
    if (fig_plan(&pg->fig, &p->grid, p->name, lo, hi, vname, 0, e) != DG_OK) {
        dg_hji_play_gif_abort(pg);
        return NULL;
    }
    if (!(pg->img = dg_image_create(pg->fig.w, pg->fig.h, 0xffffff))) {
        dg_err_set(e, DG_ERR_NOMEM, "out of memory");
        dg_hji_play_gif_abort(pg);
        return NULL;
    }
    if (!(pg->gf = dg_gif_begin(path, pg->img->w, pg->img->h, 6, e))) {
        dg_hji_play_gif_abort(pg);
        return NULL;
    }
    return pg;
}

int dg_hji_play_gif_step(void *user, const dg_hji_sim_step *s) {
    dg_hji_play_gif *pg = user;
    const dg_hji_grid *g = &pg->p->grid;
    const figure *f = &pg->fig;
    if (pg->trail < 4096) { pg->xs[0][pg->trail] = s->x[0]; pg->xs[1][pg->trail] = s->x[1]; pg->trail++; }
    const int64_t every = s->steps > 120 ? (s->steps + 119) / 120 : 1;  /* at most 121 frames, and the last */
    if (!(s->step % every == 0 || s->target <= 0 || s->step == s->steps)) return 0;
    dg_hji_slice2d(g, pg->V, s->x, pg->slice);
    dg_draw d;
    if (dg_draw_begin(&d, pg->img, &pg->e) != DG_OK) return 1;
    dg_draw_rect_fill(&d, 0, 0, pg->img->w, pg->img->h, 0xffffff, 1);
    double *sl[1] = {pg->slice};
    if (fig_draw(&d, f, sl, 1, &pg->t_end, 0, NULL, &pg->e) != DG_OK) {
        dg_draw_abort(&d);
        return 1;
    }
    double px[4096], py[4096];  /* the path so far (its first 4096 steps) */
    for (int k = 0; k < pg->trail; k++) {
        px[k] = fig_x(f, pg->xs[0][k]);
        py[k] = fig_y(f, pg->xs[1][k]);
    }
    dg_draw_polyline(&d, px, py, pg->trail, 0xff8c1a, 2);
    dg_draw_circle_fill(&d, fig_x(f, s->x[0]), fig_y(f, s->x[1]), 4, 0xff8c1a, 1);
    dg_draw_circle_outline(&d, fig_x(f, s->x[0]), fig_y(f, s->x[1]), 4, 0xffffff, 1);
    char what[96], title[192];
    snprintf(what, sizeof what, "t = %.2f s, V = %.3f%s", s->t, s->value, s->target <= 0 ? ", captured" : "");
    slice_title(title, sizeof title, pg->p->name, what, g, s->x);
    dg_draw_text(&d, f->x0 + f->pw / 2, PAD, title, 0x000000, TITLE_FONT, DG_TEXT_CENTER | DG_TEXT_TOP, 0);
    if (dg_draw_end(&d, &pg->e) != DG_OK) return 1;
    return dg_gif_add_frame(pg->gf, pg->img, &pg->e) != DG_OK;
}

const dg_err *dg_hji_play_gif_error(const dg_hji_play_gif *pg) { return &pg->e; }

dg_status dg_hji_play_gif_end(dg_hji_play_gif *pg, dg_err *e) {
    const dg_status s = dg_gif_end(pg->gf, e);
    pg->gf = NULL;
    dg_hji_play_gif_abort(pg);
    return s;
}

void dg_hji_play_gif_abort(dg_hji_play_gif *pg) {
    if (!pg) return;
    if (pg->gf) dg_gif_abort(pg->gf);
    dg_image_free(pg->img);
    free(pg->slice);
    free(pg);
}
