/* Gaussian soft points: forward and backward of the fused render op, side by
 * side, plus the plain-C renderer for previews.
 *
 * One splat is inten · gy(i) · gx(j) with gx(j) = exp(-(x_j - px)² c),
 * gy(i) = exp(-(y_i - py)² c), c = 1/(2σ²). Columns are processed in tiles of
 * TILE so gx lives on the stack (no allocation anywhere); gy is recomputed per
 * row of a tile, so an object costs W + H·ceil(W/TILE) exponentials.
 */
#include <tgmath.h>
#include <string.h>

#include "difgames/render.h"

#define TILE 256  /* columns per tile */

/* Constants of one render op, copied into the arena by dg_custom. */
typedef struct points_state {
    const dg_render_grid *g;       /* read again by backward                     */
    const dg_real *intensity;        /* (count) in the arena                        */
    int          count;
    dg_real        c;                /* 1 / (2σ²)                                   */
} points_state;

/* ------------------------------------------------------------ helpers */

static int min_int(int a, int b) { return a < b ? a : b; }

/* c = 1/(2σ²), or 0 when sigma is not positive and finite or c would overflow. */
static dg_real sigma_coef(dg_real sigma) {
    if (!(sigma > 0.0f) || !isfinite(sigma)) return 0.0f;
    const dg_real c = 0.5f / (sigma * sigma);
    return isfinite(c) ? c : 0.0f;
}

/* v[j] = scale · exp(-(xs[j] - p)² c) for j in [0, n). On return v is zero
 * outside [*lo, *hi) (lo >= hi when all of it underflowed). */
static void gauss_tile(const dg_real *xs, int n, dg_real p, dg_real c, dg_real scale, dg_real *v,
                       int *lo, int *hi) {
    int a = n, b = 0;
    for (int j = 0; j < n; j++) {
        const dg_real d = xs[j] - p;
        v[j] = scale * exp(-d * d * c);
        if (v[j] != 0.0f) {  /* NaN counts as non-zero: it must reach the image */
            if (a == n) a = j;
            b = j + 1;
        }
    }
    *lo = a;
    *hi = b;
}

/* Forward of one splat: img (h, w) += inten · gy(i) · gx(j). */
static void splat_add(const dg_render_grid *g, dg_real px, dg_real py, dg_real inten, dg_real c,
                      dg_real *img) {
    dg_real gx[TILE];  /* (TILE) inten · gx of the tile's columns */
    for (int j0 = 0; j0 < g->w; j0 += TILE) {
        int lo, hi;
        gauss_tile(g->xs + j0, min_int(TILE, g->w - j0), px, c, inten, gx, &lo, &hi);
        if (lo >= hi) continue;
        for (int i = 0; i < g->h; i++) {
            const dg_real dy = g->ys[i] - py;
            const dg_real gy = exp(-dy * dy * c);
            if (gy == 0.0f) continue;
            dg_real *row = img + (size_t)i * g->w + j0;
            for (int j = lo; j < hi; j++) row[j] += gy * gx[j];
        }
    }
}

/* Backward of one splat (unit intensity): with G = d loss/d img (h, w),
 *   d/dpx = Σ_ij G·gy·gx·(x_j - px)/σ² = 2c Σ_j gx(j)(x_j - px) u(j),  u(j) = Σ_i G(i,j) gy(i)
 *   d/dpy = Σ_ij G·gy·gx·(y_i - py)/σ² = 2c Σ_j gx(j) v(j),           v(j) = Σ_i G(i,j) gy(i)(y_i - py)
 * u and v are built row by row (axpy, vectorises); the short sums over j are
 * taken in double. */
static void splat_grad(const dg_render_grid *g, dg_real px, dg_real py, dg_real c, const dg_real *G,
                       double *dpx, double *dpy) {
    dg_real gx[TILE];  /* (TILE) gx of the tile's columns */
    dg_real u[TILE];   /* (TILE) Σ_i G·gy */
    dg_real v[TILE];   /* (TILE) Σ_i G·gy·(y_i - py) */
    double sx = 0.0, sy = 0.0;
    for (int j0 = 0; j0 < g->w; j0 += TILE) {
        int lo, hi;
        gauss_tile(g->xs + j0, min_int(TILE, g->w - j0), px, c, 1.0f, gx, &lo, &hi);
        if (lo >= hi) continue;
        for (int j = lo; j < hi; j++) u[j] = v[j] = 0.0f;
        for (int i = 0; i < g->h; i++) {
            const dg_real dy = g->ys[i] - py;
            const dg_real gy = exp(-dy * dy * c);
            if (gy == 0.0f) continue;
            const dg_real gyd = gy * dy;
            const dg_real *row = G + (size_t)i * g->w + j0;
            for (int j = lo; j < hi; j++) {
                u[j] += row[j] * gy;
                v[j] += row[j] * gyd;
            }
        }
        for (int j = lo; j < hi; j++) {
            sx += (double)gx[j] * ((double)g->xs[j0 + j] - px) * u[j];
            sy += (double)gx[j] * v[j];
        }
    }
    *dpx = 2.0 * c * sx;
    *dpy = 2.0 * c * sy;
}

/* Checks the op's arguments; 1 if good, else 0 with ctx's error set. */
static int check_args(dg_ctx *ctx, const char *op, const dg_render_grid *g, int count,
                      dg_real sigma) {
    if (!g) {
        dg_ctx_fail(ctx, DG_ERR_ARG, "%s: grid is NULL", op);
        return 0;
    }
    if (count < 1) {
        dg_ctx_fail(ctx, DG_ERR_ARG, "%s: count must be at least 1, not %d", op, count);
        return 0;
    }
    if (sigma_coef(sigma) == 0.0f) {
        dg_ctx_fail(ctx, DG_ERR_ARG, "%s: sigma must be a positive finite number, not %g", op,
                    (double)sigma);
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------ render op */

/* Backward: d loss/d pos[k] for every pos[k] that requires a gradient. */
static void points_backward(dg_ctx *ctx, dg_tensor *out) {
    const points_state *s = out->state;
    const dg_render_grid *g = s->g;
    const int B = out->shape[0];
    const size_t hw = (size_t)g->w * g->h;
    for (int k = 0; k < s->count; k++) {
        dg_tensor *p = out->srcs[k];
        if (!p->requires_grad) continue;
        dg_real *gp = dg_grad_of(ctx, p);  /* (B, 2) */
        if (!gp) return;
        const double inten = s->intensity[k];
        if (inten == 0.0) continue;
        for (int b = 0; b < B; b++) {
            double dpx, dpy;
            splat_grad(g, p->data[2 * b], p->data[2 * b + 1], s->c, out->grad + (size_t)b * hw,
                       &dpx, &dpy);
            gp[2 * b] += (dg_real)(inten * dpx);
            gp[2 * b + 1] += (dg_real)(inten * dpy);
        }
    }
}

dg_tensor *dg_render_points(dg_ctx *ctx, const dg_render_grid *g, dg_tensor *const *pos,
                            int count, const dg_real *intensity, dg_real sigma) {
    static const char *const OP = "render_points";
    if (dg_ctx_status(ctx) != DG_OK) return NULL;
    if (!check_args(ctx, OP, g, count, sigma)) return NULL;
    if (!pos) return dg_ctx_fail(ctx, DG_ERR_ARG, "%s: positions are NULL", OP);
    for (int k = 0; k < count; k++) {
        const dg_tensor *p = pos[k];
        if (!p) return dg_ctx_fail(ctx, DG_ERR_ARG, "%s: pos[%d] is NULL", OP, k);
        if (p->ndim != 2 || p->shape[1] != 2)
            return dg_ctx_fail(ctx, DG_ERR_SHAPE, "%s: pos[%d] must be (B,2), has %d dims (%d,%d,...)",
                               OP, k, p->ndim, p->shape[0], p->shape[1]);
        if (p->shape[0] != pos[0]->shape[0])
            return dg_ctx_fail(ctx, DG_ERR_SHAPE, "%s: pos[%d] has batch %d, pos[0] has %d", OP, k,
                               p->shape[0], pos[0]->shape[0]);
    }
    const int B = pos[0]->shape[0];

    dg_real *inten = dg_ctx_alloc(ctx, (size_t)count * sizeof *inten);  /* (count) */
    if (!inten) return NULL;
    for (int k = 0; k < count; k++) inten[k] = intensity ? intensity[k] : 1.0f;
    const points_state s = {.g = g, .intensity = inten, .count = count, .c = sigma_coef(sigma)};
    dg_tensor *out = dg_custom(ctx, OP, 4, (int[]){B, 1, g->h, g->w}, pos, count,
                               points_backward, &s, sizeof s);
    if (!out) return NULL;

    const size_t hw = (size_t)g->w * g->h;
    memset(out->data, 0, (size_t)out->n * sizeof(dg_real));
    for (int b = 0; b < B; b++)  /* one image at a time stays in cache across objects */
        for (int k = 0; k < count; k++)
            if (inten[k] != 0.0f)
                splat_add(g, pos[k]->data[2 * b], pos[k]->data[2 * b + 1], inten[k], s.c,
                          out->data + (size_t)b * hw);
    return out;
}

/* ------------------------------------------------------------ constants */

dg_tensor *dg_render_target(dg_ctx *ctx, const dg_render_grid *g, const dg_real *pos, int batch,
                            int count, const dg_real *intensity, dg_real sigma) {
    static const char *const OP = "render_target";
    if (dg_ctx_status(ctx) != DG_OK) return NULL;
    if (!check_args(ctx, OP, g, count, sigma)) return NULL;
    if (!pos) return dg_ctx_fail(ctx, DG_ERR_ARG, "%s: positions are NULL", OP);
    if (batch < 1) return dg_ctx_fail(ctx, DG_ERR_ARG, "%s: batch must be at least 1, not %d", OP, batch);
    dg_tensor *out = dg_new(ctx, 4, (int[]){batch, 1, g->h, g->w});
    if (!out) return NULL;
    const size_t hw = (size_t)g->w * g->h;
    for (int b = 0; b < batch; b++)
        dg_render_points_f32(g, pos + (size_t)b * count * 2, count, intensity, sigma,
                             out->data + (size_t)b * hw);
    return out;
}

void dg_render_points_f32(const dg_render_grid *g, const dg_real *pos_xy, int count,
                          const dg_real *intensity, dg_real sigma, dg_real *out) {
    if (!g || !out) return;
    memset(out, 0, (size_t)g->w * g->h * sizeof *out);
    const dg_real c = sigma_coef(sigma);
    if (c == 0.0f || count <= 0 || !pos_xy) return;
    for (int k = 0; k < count; k++) {
        const dg_real inten = intensity ? intensity[k] : 1.0f;
        if (inten != 0.0f) splat_add(g, pos_xy[2 * k], pos_xy[2 * k + 1], inten, c, out);
    }
}
