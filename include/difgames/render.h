/* difgames render: Gaussian soft points, differentiable with respect to positions.
 *
 * The arena is the square [-1, 1]² (x to the right, y up). An image is
 * (B,1,H,W) float32 with row 0 at the top (the y = +1 side), so it displays
 * upright. Pixel centres:
 *     x_j = -1 + (j + 0.5) · 2/W,    y_i = 1 - (i + 0.5) · 2/H.
 * Object k at (px, py) with brightness I_k adds a Gaussian splat:
 *     img[b,0,i,j] = Σ_k I_k · exp(-((x_j - px)² + (y_i - py)²) / (2σ²)).
 *
 *     dg_render_grid *g = dg_render_grid_create(64, 64, &e);   // once per size
 *     ...per step:
 *     dg_tensor *img = dg_render_points(ctx, g, (dg_tensor *[]){agent, goal}, 2, NULL, 0.08f);
 *     dg_tensor *loss = dg_mean(ctx, dg_square(ctx, dg_sub(ctx, img, target)));
 *     ...
 *     dg_render_grid_free(g);
 *
 * The Gaussian is separable, so a splat is the outer product of a column
 * vector gy (H) and a row vector gx (W): W + H exponentials per object and
 * batch row, never one per pixel. Forward and backward cost O(B·count·H·W)
 * multiply-adds; columns and rows where the splat underflows to zero are skipped.
 */
#ifndef DIFGAMES_RENDER_H
#define DIFGAMES_RENDER_H

#include "difgames/api.h"
#include "difgames/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_RENDER_MAX_SIDE 16384   /* largest width or height of a grid */

/* Pixel-centre coordinates for one image size, outside any arena; build once
 * per size and reuse it every step. Read-only once made. */
typedef struct dg_render_grid {
    int    w, h;
    dg_real *xs;                     /* (w) x of each column, left to right    */
    dg_real *ys;                     /* (h) y of each row, top (+1) to bottom  */
} dg_render_grid;

/* ------------------------------------------------------------------- grid */

/* Makes the coordinates of a w × h image (1..DG_RENDER_MAX_SIDE each). Returns
 * a grid the caller owns (free with dg_render_grid_free), or NULL with e set
 * (DG_ERR_ARG for a bad size, DG_ERR_NOMEM). */
DG_API dg_render_grid *dg_render_grid_create(int w, int h, dg_err *e);  /* NULL + e on bad size or OOM */
DG_API void            dg_render_grid_free(dg_render_grid *g);           /* NULL is harmless            */

/* ------------------------------------------------------------------- ops */

/* Renders count objects as one fused op on ctx's tape (backward gives
 * d loss/d px, py for every pos[k] that requires a gradient). pos[k] is a (B,2)
 * tensor, all with the same B; intensity is (count) or NULL for all 1; sigma > 0.
 * Returns a (B,1,H,W) tensor in ctx's arena, or NULL with ctx's error set (bad
 * sigma, count, shapes or a full arena) or when an input is NULL after an
 * earlier error. g must outlive backward on this graph (it is read there). */
DG_API dg_tensor *dg_render_points(dg_ctx *ctx, const dg_render_grid *g, dg_tensor *const *pos,
                                   int count, const dg_real *intensity, dg_real sigma);  /* (B,1,H,W), differentiable in pos */

/* Renders constant positions (a target image, say): pos is (batch, count, 2)
 * floats, intensity (count) or NULL. Returns a (batch,1,H,W) leaf in ctx's
 * arena that needs no gradient (nothing is taped), or NULL with ctx's error set. */
DG_API dg_tensor *dg_render_target(dg_ctx *ctx, const dg_render_grid *g, const dg_real *pos, int batch,
                                   int count, const dg_real *intensity, dg_real sigma);  /* (batch,1,H,W) leaf  */

/* Plain C, no context: renders one image of count objects at pos_xy
 * (count × [x, y]) with intensity (count) or NULL into out (H × W, row 0 at the
 * top; the caller owns it), overwriting it. Writes zeros when count <= 0 or
 * sigma is not a positive finite number; does nothing if g or out is NULL. */
DG_API void dg_render_points_f32(const dg_render_grid *g, const dg_real *pos_xy, int count,
                                 const dg_real *intensity, dg_real sigma, dg_real *out);  /* previews, one image */

#ifdef __cplusplus
}
#endif
#endif
