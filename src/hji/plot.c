/* Pictures of values: 2-D slices of N-d values, their zero level sets by marching squares, and a
 * slice's heat map with the zero sets of several times over it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "difgames/image.h"
#include "hji/internal.h"

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

typedef struct line_box { dg_image *img; int x0, y0; float sx, sy; uint32_t rgb; float width; } line_box;

static void draw_segment(void *user, float ax, float ay, float bx, float by) {
    const line_box *b = user;
    dg_image_line(b->img, b->x0 + ax * b->sx, b->y0 + ay * b->sy, b->x0 + bx * b->sx, b->y0 + by * b->sy, b->rgb,
                  b->width);
}

static const uint32_t LEVEL_COLORS[] = {0x4dd0e1, 0x81c784, 0xffd54f, 0xff8a65, 0xf06292, 0xba68c8};

dg_status dg_hji_draw_slices(dg_image *img, const dg_hji_grid *g, double *const *slices, int nt, const double *times,
                             int x0, int y0, int w, int h, dg_err *e) {
    const int nx = g->n[0], ny = g->n[1];
    float *heat = malloc((size_t)nx * ny * sizeof(float));
    if (!heat) return dg_err_set(e, DG_ERR_NOMEM, "hji plot: out of memory for a %d x %d heat map", nx, ny);
    const double *fin = slices[nt - 1];
    double lo = INFINITY, hi = -INFINITY;
    for (int j = 0; j < nx * ny; j++) { lo = fmin(lo, fin[j]); hi = fmax(hi, fin[j]); }
    for (int j = 0; j < nx * ny; j++) heat[j] = (float)fin[j];
    dg_image_heat_rect(img, x0, y0, w, h, heat, nx, ny, (float)lo, (float)hi);
    free(heat);
    for (int i = 0; i < nt; i++) {
        line_box b = {img, x0, y0, (float)w / (float)(nx - 1), (float)h / (float)(ny - 1),
                      i == nt - 1 ? 0xffffff : LEVEL_COLORS[i % 6], i == nt - 1 ? 2.5f : 1.5f};
        dg_hji_contour(slices[i], nx, ny, draw_segment, &b);
    }
    char s[64];
    snprintf(s, sizeof s, "x0 %.3g .. %.3g", g->lo[0], g->hi[0]);
    dg_image_text(img, x0, y0 + h + 6, s, 0xdddddd, 1);
    snprintf(s, sizeof s, "x1 %.3g .. %.3g (up)", g->lo[1], g->hi[1]);
    dg_image_text(img, x0 + w / 2, y0 + h + 6, s, 0xdddddd, 1);
    for (int i = 0; i < nt; i++) {
        snprintf(s, sizeof s, "t = %.3g", times[i]);
        dg_image_text(img, x0 + w + 12, y0 + 14 * i, s, i == nt - 1 ? 0xffffff : LEVEL_COLORS[i % 6], 1);
    }
    return DG_OK;
}

dg_status dg_hji_plot_value(const dg_hji_value *vf, const double *at_in, const char *path, dg_err *e) {
    const dg_hji_grid *g = &vf->grid;
    double at[DG_HJI_MAX_DIMS];
    for (int k = 0; k < g->ndim; k++) at[k] = at_in && k >= 2 ? at_in[k] : 0.5 * (g->lo[k] + g->hi[k]);
    const int nx = g->n[0], ny = g->n[1];
    double *v = malloc((size_t)g->nodes * sizeof(double));
    double *slices[DG_HJI_MAX_TIMES] = {0};
    int ok = v != NULL;
    for (int i = 0; i < vf->nt && ok; i++) ok = (slices[i] = malloc((size_t)nx * ny * sizeof(double))) != NULL;
    dg_status s = DG_OK;
    for (int i = 0; i < vf->nt && ok && s == DG_OK; i++)
        if ((s = dg_hji_value_read(vf, i, v, e)) == DG_OK) dg_hji_slice2d(g, v, at, slices[i]);
    dg_image *img = ok && s == DG_OK ? dg_image_create(640, 560, 0x15151e) : NULL;
    if (s == DG_OK && !img) s = dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    const int w = 480, h = (int)fmin(480, 480.0 * (g->hi[1] - g->lo[1]) / (g->hi[0] - g->lo[0]));
    if (s == DG_OK) s = dg_hji_draw_slices(img, g, slices, vf->nt, vf->times, 20, 40, w, h < 120 ? 120 : h, e);
    if (s == DG_OK) {
        char title[160];
        int n = snprintf(title, sizeof title, "%s: zero level sets of V", vf->game[0] ? vf->game : "value");
        for (int k = 2; k < g->ndim && n >= 0 && (size_t)n < sizeof title; k++)
            n += snprintf(title + n, sizeof title - (size_t)n, ", x%d = %.3g", k, at[k]);
        dg_image_text(img, 20, 12, title, 0xffffff, 2);
        s = dg_png_write(img, path, e);
    }
    dg_image_free(img);
    for (int i = 0; i < vf->nt; i++) free(slices[i]);
    free(v);
    return s;
}

/* ------------------------------------------------------------- play GIFs */

struct dg_hji_play_gif {
    dg_gif *gf;
    dg_image *img;
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
        pg->img = dg_image_create(560, 520, 0x15151e);
        pg->slice = malloc((size_t)p->grid.n[0] * p->grid.n[1] * sizeof(double));
    }
    if (!pg || !pg->img || !pg->slice) {
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
    if (pg->trail < 4096) { pg->xs[0][pg->trail] = s->x[0]; pg->xs[1][pg->trail] = s->x[1]; pg->trail++; }
    const int64_t every = s->steps > 120 ? (s->steps + 119) / 120 : 1;  /* at most 121 frames, and the last */
    if (!(s->step % every == 0 || s->target <= 0 || s->step == s->steps)) return 0;
    dg_hji_slice2d(g, pg->V, s->x, pg->slice);
    dg_image_clear(pg->img, 0x15151e);
    const int w = 440, h = (int)fmin(440, 440.0 * (g->hi[1] - g->lo[1]) / (g->hi[0] - g->lo[0]));
    double *sl[1] = {pg->slice};
    if (dg_hji_draw_slices(pg->img, g, sl, 1, &pg->t_end, 20, 40, w, h, &pg->e) != DG_OK) return 1;
    for (int k = 1; k < pg->trail; k++) {  /* the path so far (its first 4096 steps) */
        const float ax = 20 + (float)((pg->xs[0][k - 1] - g->lo[0]) / (g->hi[0] - g->lo[0]) * w);
        const float ay = 40 + (float)((g->hi[1] - pg->xs[1][k - 1]) / (g->hi[1] - g->lo[1]) * h);
        const float bx = 20 + (float)((pg->xs[0][k] - g->lo[0]) / (g->hi[0] - g->lo[0]) * w);
        const float by = 40 + (float)((g->hi[1] - pg->xs[1][k]) / (g->hi[1] - g->lo[1]) * h);
        dg_image_line(pg->img, ax, ay, bx, by, 0xff8c1a, 2);
    }
    char title[128];
    snprintf(title, sizeof title, "%s  t = %.2f s  V = %.3f%s", pg->p->name, s->t, s->value,
             s->target <= 0 ? "  CAPTURE" : "");
    dg_image_text(pg->img, 20, 12, title, 0xffffff, 2);
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
