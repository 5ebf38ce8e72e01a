/* difgames replay: one frame of a game's episode as a picture (what
 * `difgames replay` writes into its GIF, frame by frame).
 *
 *     dg_image *img = dg_image_create(320, 320 + DG_REPLAY_HEADER, 0);
 *     dg_render_grid *g = dg_render_grid_create(80, 80, &e);
 *     float *heat = malloc(80 * 80 * sizeof(float));
 *     dg_replay_track *tr = dg_replay_track_create(env, traj, aux, H + 1, &e);
 *     for (int t = 0; t <= H; t++) {
 *         dg_replay_draw(img, env, tr, g, 0.08f, t, heat);
 *         dg_gif_add_frame(gif, img, &e);
 *     }
 *     dg_replay_track_free(tr);
 *
 * A frame shows a header line (game, step, time), the soft render of the
 * bodies (what a pixel loss sees), the game's shapes (obstacles, walls), the
 * goal, and each moving body with its trail so far. A body and its trail turn
 * red from the first step the game's violation hook flags it (reach: inside an
 * obstacle; chase: outside the arena).
 *
 * The track holds what every frame needs of the episode (the bodies at each
 * step, the running mask of who broke the rule), made once with one call of
 * the bodies and violation hooks per step, so that drawing all H + 1 frames
 * costs O(H) hook calls; a frame draws at most 2048 trail segments a body
 * (every ceil(t / 2048)-th step past step 2048).
 */
#ifndef DIFGAMES_REPLAY_H
#define DIFGAMES_REPLAY_H

#include "difgames/api.h"
#include "difgames/env.h"
#include "difgames/image.h"
#include "difgames/render.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_REPLAY_HEADER 22        /* pixels of the header line above the arena view */
#define DG_REPLAY_VIOLATION 0xff2020u  /* the colour of a body that broke the rule */

typedef struct dg_replay_track dg_replay_track;  /* an episode's bodies and rule breaks; opaque */

/* Reads steps states of traj ((steps, state_dim); aux the episode's constants) through the game's
 * bodies and violation hooks. Returns a new track (free with dg_replay_track_free), or NULL with e
 * set (DG_ERR_ARG, DG_ERR_NOMEM). */
DG_API dg_replay_track *dg_replay_track_create(const dg_env *env, const dg_real *traj, const dg_real *aux, int steps,
                                               dg_err *e);
DG_API void   dg_replay_track_free(dg_replay_track *tr);               /* NULL is harmless                 */
DG_API double dg_replay_track_memory(int steps);                       /* bytes a track of steps states holds */
/* Draws step t (0 .. steps-1) of the track's episode into img, as dg_replay_frame does (with cairo,
 * through a drawing surface of img's size, 4 bytes a pixel, made for the call: if that cannot be
 * allocated img is left as it was), through the view that fits the bodies of steps 0..t
 * (dg_replay_view_fit). */
DG_API void   dg_replay_draw(dg_image *img, const dg_env *env, const dg_replay_track *tr, const dg_render_grid *grid,
                             dg_real sigma, int t, dg_real *heat);

/* The square of the world a frame shows: centre (cx, cy), half its side. */
typedef struct dg_replay_view {
    dg_real cx, cy, half;
} dg_replay_view;
/* The arena's view (centre 0, half 1.08) when every body of steps t0..t1 of tr lies inside it,
 * else the smallest square around them all (games in the open plane: duel_simple) with a margin. */
DG_API void   dg_replay_view_fit(const dg_replay_track *tr, int t0, int t1, dg_replay_view *view);
/* dg_replay_draw through view (NULL: the arena's). The soft render covers the arena [-1, 1]^2,
 * where grid's pixel centres lie. */
DG_API void   dg_replay_draw_view(dg_image *img, const dg_env *env, const dg_replay_track *tr,
                                  const dg_render_grid *grid, dg_real sigma, int t, dg_real *heat,
                                  const dg_replay_view *view);

/* Draws step t (0..H) of one episode into img, whose width is the arena view's
 * size and whose height is that plus DG_REPLAY_HEADER. traj holds the episode's
 * states (H + 1, state_dim) and aux its constants (aux_dim); the game needs a
 * bodies hook (nothing but the header and shapes is drawn without one). grid
 * (the soft render's resolution) and heat (grid->w · grid->h floats, scratch)
 * belong to the caller; sigma is the soft render's width. It makes a track of steps 0..t for this
 * one frame (nothing is drawn if that cannot be allocated): to draw many frames of one episode,
 * make the track once and call dg_replay_draw. */
DG_API void dg_replay_frame(dg_image *img, const dg_env *env, const dg_render_grid *grid, dg_real sigma,
                            const dg_real *traj, const dg_real *aux, int t, dg_real *heat);

/* Writes an episode as an animated GIF at path (atomically: complete or not at all): frames
 * frames (0, or more than steps: every state) spread evenly over the steps states of traj (H + 1
 * of an H-step episode; aux its constants), each dg_replay_draw's picture of size x
 * (size + DG_REPLAY_HEADER) pixels with a soft render of size / 4 pixels, at the episode's real
 * speed (env->dt a step; at least 2 hundredths of a second a frame). The game needs a bodies hook.
 * DG_ERR_ARG (fewer than 2 steps, size below 16), DG_ERR_NOMEM, or the GIF writer's error. */
DG_API dg_status dg_replay_gif(const char *path, const dg_env *env, const dg_real *traj, const dg_real *aux, int steps,
                               int size, int frames, dg_err *e);

#ifdef __cplusplus
}
#endif
#endif
