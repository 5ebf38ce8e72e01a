/* difgames replay: one frame of a game's episode as a picture (what
 * `difgames replay` writes into its GIF, frame by frame).
 *
 *     dg_image *img = dg_image_create(320, 320 + DG_REPLAY_HEADER, 0);
 *     dg_render_grid *g = dg_render_grid_create(80, 80, &e);
 *     float *heat = malloc(80 * 80 * sizeof(float));
 *     for (int t = 0; t <= H; t++) {
 *         dg_replay_frame(img, env, g, 0.08f, traj, aux, t, heat);
 *         dg_gif_add_frame(gif, img, &e);
 *     }
 *
 * A frame shows a header line (game, step, time), the soft render of the
 * bodies (what a pixel loss sees), the game's shapes (obstacles, walls), the
 * goal, and each moving body with its trail so far. A body and its trail turn
 * red from the first step the game's violation hook flags it (reach: inside an
 * obstacle; chase: outside the arena).
 */
#ifndef DIFGAMES_REPLAY_H
#define DIFGAMES_REPLAY_H

#include "difgames/env.h"
#include "difgames/image.h"
#include "difgames/render.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_REPLAY_HEADER 22        /* pixels of the header line above the arena view */
#define DG_REPLAY_VIOLATION 0xff2020u  /* the colour of a body that broke the rule */

/* Draws step t (0..H) of one episode into img, whose width is the arena view's
 * size and whose height is that plus DG_REPLAY_HEADER. traj holds the episode's
 * states (H + 1, state_dim) and aux its constants (aux_dim); the game needs a
 * bodies hook (nothing but the header and shapes is drawn without one). grid
 * (the soft render's resolution) and heat (grid->w · grid->h floats, scratch)
 * belong to the caller; sigma is the soft render's width. */
void dg_replay_frame(dg_image *img, const dg_env *env, const dg_render_grid *grid, float sigma,
                     const float *traj, const float *aux, int t, float *heat);

#ifdef __cplusplus
}
#endif
#endif
