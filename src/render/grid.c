/* The coordinate grid: pixel centres of one image size, built once and reused. */
#include <stdlib.h>

#include "difgames/render.h"

dg_render_grid *dg_render_grid_create(int w, int h, dg_err *e) {
    if (w < 1 || h < 1 || w > DG_RENDER_MAX_SIDE || h > DG_RENDER_MAX_SIDE) {
        dg_err_set(e, DG_ERR_ARG, "render grid: size %dx%d (each side 1..%d)", w, h,
                   DG_RENDER_MAX_SIDE);
        return NULL;
    }
    dg_render_grid *g = calloc(1, sizeof *g);
    if (!g) goto nomem;
    g->w = w;
    g->h = h;
    g->xs = malloc((size_t)w * sizeof *g->xs);
    g->ys = malloc((size_t)h * sizeof *g->ys);
    if (!g->xs || !g->ys) goto nomem;
    /* computed in double so every centre is the correctly rounded float */
    for (int j = 0; j < w; j++) g->xs[j] = (dg_real)(-1.0 + (j + 0.5) * 2.0 / w);
    for (int i = 0; i < h; i++) g->ys[i] = (dg_real)(1.0 - (i + 0.5) * 2.0 / h);
    return g;

nomem:
    dg_render_grid_free(g);
    dg_err_set(e, DG_ERR_NOMEM, "render grid: out of memory for %dx%d", w, h);
    return NULL;
}

void dg_render_grid_free(dg_render_grid *g) {
    if (!g) return;
    free(g->xs);
    free(g->ys);
    free(g);
}
