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

/* Replay bodies of games with an agent at state[0:2] and a goal at aux[0:2]. */
int dg__bodies_agent_goal(const dg_env *env, const float *s, const float *aux, float *xy, int *is_goal);

#endif
