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
