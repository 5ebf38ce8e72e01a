/* Internal to envs: the registered games and helpers they share. */
#ifndef DG_ENVS_GAMES_H
#define DG_ENVS_GAMES_H

#include "difgames/env.h"

extern const dg_game dg_game_reach;
extern const dg_game dg_game_chase;
extern const dg_game dg_game_pixel;
extern const dg_game dg_game_duel_simple;
extern const dg_game dg_game_billiards;
extern const dg_game dg_game_racing;
extern const dg_game dg_game_pong;
extern const dg_game dg_game_fishwar;
extern const dg_game dg_game_merton;

/* sum(x) · inv_batch: a batch mean that shards of the batch add up to. */
dg_tensor *dg__batch_mean(dg_ctx *ctx, dg_tensor *x, dg_real inv_batch);
/* The median of v[0..n) (n >= 1; reorders v; NaN if any is NaN). */
double dg__median(double *v, int n);
/* Keys that several games read: the same name, bounds and doc in each (S: the
 * game's struct, F: the field; the default is the game's). */
#define DG__KEY_DAMPING(S, F, d) DG_K_F32("env.damping", S, F, d, 0, 1, 0, 1, "velocity kept per step")
#define DG__KEY_ACCEL(nm, S, F, d, doc) DG_K_F32(nm, S, F, d, 0, DG_MAX_MAGNITUDE, 0, 1, doc)
#define DG__KEY_CAPTURE_RADIUS(S, F, d) \
    DG_K_F32("env.capture_radius", S, F, d, 0, DG_MAX_MAGNITUDE, 0, 1, "capture when the players are this close")

/* Replay bodies of a two-body game: one at a[0:2], the other at b[0:2] (a goal when b_is_goal);
 * returns 2. */
int dg__bodies_two(const dg_real *a, const dg_real *b, int b_is_goal, dg_real *xy, int *is_goal);
/* Replay bodies of games with an agent at state[0:2] and a goal at aux[0:2]. */
int dg__bodies_agent_goal(const dg_env *env, const dg_real *s, const dg_real *aux, dg_real *xy, int *is_goal);

#endif
