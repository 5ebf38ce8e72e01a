/* difgames live: episodes played one step at a time, for programs that show or steer them
 * (`difgames view` and `difgames play` are built on it).
 *
 *     dg_live *l = dg_live_create(env, &pol, p, 8, &e);      // 8 rows: row 0 shown, the rest a batch
 *     dg_run_init_draw(env, seed, 8, &state, &aux, &e);
 *     dg_live_reset(l, state, aux, &e);
 *     while (dg_live_steps(l) < env->horizon) {
 *         float human[2] = {1, 0};                             // the agent pushed to the right ...
 *         dg_live_step(l, 0, human, &e);                       // ... in place of its policy
 *         dg_live_place(l, 0, 1, mouse_x, mouse_y, &e);        // the goal (body 1) moved by the mouse
 *     }
 *     dg_live_terms(l, terms);  dg_live_metrics(l, metrics);
 *     dg_live_free(l);
 *
 * A step is the trainer's step (observe, each learned player's policy, the game's step and
 * step_cost) on B rows, so that H steps from the same states (and, in a noisy game, the same noise
 * stream) give dg_rollout's trajectory to the bit and its loss terms. Any player's action may come from the caller instead of its policy
 * (a person at the keyboard), and any body that is a plain copy of state or aux columns may be
 * moved between steps (the goal of reach, the evader of chase). Nothing here prints or draws.
 */
#ifndef DIFGAMES_LIVE_H
#define DIFGAMES_LIVE_H

#include "difgames/api.h"
#include "difgames/env.h"
#include "difgames/policy.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_LIVE_MAX_ROWS 4096   /* rows of one live episode */

typedef struct dg_live dg_live;  /* opaque */

/* A live episode of B rows (1..DG_LIVE_MAX_ROWS) of env played by pol with p (both the caller's,
 * read at every step; p may be reloaded in place between steps). It holds room for env->horizon
 * steps and a context for one step. NULL with e set: DG_ERR_ARG, DG_ERR_NOMEM (the bytes named). */
DG_API dg_live *dg_live_create(const dg_env *env, const dg_policy *pol, dg_params *p, int B, dg_err *e);
DG_API void     dg_live_free(dg_live *l);                                /* NULL is harmless */
/* Bytes dg_live_create takes for B rows of env with pol. */
DG_API double   dg_live_memory(const dg_env *env, const dg_policy *pol, int B);

/* Starts a new episode at step 0 from state (B, state_dim) and aux (B, aux_dim; may be NULL when
 * the game has none); both are copied. */
DG_API dg_status dg_live_reset(dg_live *l, const dg_real *state, const dg_real *aux, dg_err *e);
/* One step of every row. player -1: every learned player acts by its policy (dg_policy_act: its
 * MLP, its function or its plan); i in 0 .. nplayers - 1: player i's action is action
 * ((B, env->player_act[i]), each value clamped to [-1, 1]) instead. The policy's filter
 * (dg_policy.filter: a safety filter, safety.h) then takes the joint action, a person's too. A noisy
 * game (env->noise_dim > 0) steps with the draws of the live episode's stream (dg_live_noise).
 * DG_ERR_ARG past the horizon or for a player the game has not; a game's error from its context. */
DG_API dg_status dg_live_step(dg_live *l, int player, const dg_real *action, dg_err *e);
/* The noise stream of the steps that follow (NULL: {key 0, row0 0}, dg_rollout's): row b of step t
 * draws what row nz->row0 + b of step t of any episode on that stream draws (env.h). */
DG_API void      dg_live_noise(dg_live *l, const dg_noise *nz);
DG_API int       dg_live_steps(const dg_live *l);                        /* steps done, 0 .. horizon */
DG_API int       dg_live_rows(const dg_live *l);                         /* B */
/* The states of steps 0 .. dg_live_steps: (steps + 1, B, state_dim), step t's rows at
 * t * B * state_dim; valid until the next reset. */
DG_API const dg_real *dg_live_traj(const dg_live *l);
DG_API const dg_real *dg_live_aux(const dg_live *l);                       /* (B, aux_dim), or NULL */
/* The aux rows as they were at step t (0 .. dg_live_steps; (B, aux_dim)): what dg_live_place
 * moved shows from the step it was moved at on (reach's goal dragged along). NULL when the game has
 * no aux or t is out of range; valid until the next reset. */
DG_API const dg_real *dg_live_aux_at(const dg_live *l, int t);
/* Copies row b's states of steps 0 .. dg_live_steps into out ((steps + 1, state_dim)), what
 * dg_replay_track_create reads. */
DG_API void      dg_live_row(const dg_live *l, int b, dg_real *out);
/* Moves body k (in the order of the game's bodies hook) of row b to (x, y), now: the state or
 * aux columns that body k's position is a copy of are found by probing the bodies hook, and set
 * (aux rows are completed again by the game's complete_aux). DG_ERR_ARG when the game has no
 * bodies hook, b or k is out of range, or the body's position is not a copy of two columns. */
DG_API dg_status dg_live_place(dg_live *l, int b, int k, dg_real x, dg_real y, dg_err *e);
/* Each weighted loss term of the steps so far (env->nterms values, as dg_rollout's terms with
 * dg_live_steps in place of the horizon: they add up to the loss so far); zeros at step 0. */
DG_API void      dg_live_terms(const dg_live *l, dg_real *weighted);
/* The game's metrics of the episode so far (env->nmetrics values; the game's metrics hook over
 * steps 0 .. dg_live_steps); NaN each when the game has none. */
DG_API void      dg_live_metrics(const dg_live *l, double *values);

#ifdef __cplusplus
}
#endif
#endif
