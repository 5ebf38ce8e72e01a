/* Internal to envs: the registered games and helpers they share. */
#ifndef DG_ENVS_GAMES_H
#define DG_ENVS_GAMES_H

#include "difgames/env.h"

extern const dg_game dg_game_reach;
extern const dg_game dg_game_chase;
extern const dg_game dg_game_pixel;
extern const dg_game dg_game_duel_simple;

/* sum(x) · inv_batch: a batch mean that shards of the batch add up to. */
dg_tensor *dg__batch_mean(dg_ctx *ctx, dg_tensor *x, float inv_batch);
/* Reads "env.<key>: [lo, hi]" into r (keeps r's default when missing); lo <= hi. */
dg_status dg__cfg_range(dg_cfg *cfg, const char *path, float *r, dg_err *e);

#endif
