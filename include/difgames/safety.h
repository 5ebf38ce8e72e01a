/* difgames safety: a safety filter around a learned policy, from a reachability value.
 *
 * A value V of an avoid problem (a config of configs/hji: {V <= 0} the states from which the
 * disturbance can force the target, the set to avoid) wraps the learned player's action
 * (docs/safety.md):
 *   - switch (the least-restrictive filter): where V(x) <= margin, the value's optimal safe action
 *     (its u player's, bang-bang) replaces the policy's;
 *   - qp (the HJ control-barrier filter): the action closest to the policy's (in the action's
 *     [-1, 1] coordinates) with grad V . f(x, u, d*) >= -gamma V(x), d* the value's worst-case
 *     disturbance; closed form for box inputs of control-affine games (one linear constraint on a
 *     box: the projection is clip(a + lambda g), lambda found among the breakpoints); where no action
 *     of the box satisfies it, the one that comes nearest (the value's optimal action).
 * The value may also play the game's adversarial input (an input no player learns, declared
 * play: adversarial, docs/models.md): its worst case d*, the value's minimiser.
 *
 *     dg_safety_value *v;  dg_safety s;  dg_safety_result sr;  dg_eval_result r;
 *     dg_safety_value_open(env, "runs/hji/avoid.safetensors", NULL, &v, &e);
 *     dg_safety_init(&s, env, v, v, &run.safety);                 // filter and adversary
 *     dg_safety_eval(env, &m, p, &s, state, aux, B, 0, &r, &sr, &e);  // sr.interventions, sr.violations
 *
 * The value's state is the game's, axis by axis by name (the value file's axes against the game's
 * state names), its u the learned player's action (its box mapped onto [-1, 1]) and its d the
 * adversarial input. Nothing here prints. */
#ifndef DIFGAMES_SAFETY_H
#define DIFGAMES_SAFETY_H

#include "difgames/api.h"
#include "difgames/config.h"
#include "difgames/core.h"
#include "difgames/env.h"
#include "difgames/hji_game.h"
#include "difgames/keys.h"
#include "difgames/policy.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dg_safety_mode {
    DG_SAFETY_SWITCH = DG_HJI_FILTER_SWITCH,  /* V <= margin: the value's optimal action        */
    DG_SAFETY_QP = DG_HJI_FILTER_QP,          /* the nearest action with dV/dt >= -gamma V       */
} dg_safety_mode;

/* The safety.* keys (dg_safety_keys). */
typedef struct dg_safety_opts {
    const char *value;                    /* the value file (NULL: no filter; --safety sets it)   */
    const char *config;                   /* a network's HJI config (a grid's file stores its own) */
    int         mode;                     /* dg_safety_mode                                       */
    double      margin;                   /* switch: filter where V(x) <= margin                  */
    double      gamma;                    /* qp: the decay rate of the barrier condition          */
    int         train;                    /* 1: train with the filter on the tape                 */
    double      penalty;                  /* train: the loss's weight on |filtered - policy|^2    */
} dg_safety_opts;

/* Reads the safety.* keys of cfg into o (a key left out: its default). DG_OK or the key's error. */
DG_API dg_status     dg_safety_opts_read(dg_cfg *cfg, dg_safety_opts *o, dg_err *e);
/* The safety.* keys as a table (`difgames keys` lists it); *n gets their number. */
DG_API const dg_key *dg_safety_keys(int *n);
/* The name of a dg_safety_mode ("switch", "qp"); NULL past them. */
DG_API const char   *dg_safety_mode_name(int mode);

/* A value (a grid value file of `difgames hji solve`, or a network of `hji learn`) mapped onto a
 * game's state and inputs. */
typedef struct dg_safety_value dg_safety_value;
/* Opens the value at path and maps it onto env: a grid's value file (its problem rebuilt from the
 * config the file stores; config unused) or a network of hji learn (dg_hji_learn_probe; its problem
 * from config, the HJI config it was trained on: needed, DG_ERR_ARG without). It maps it onto env: every axis of the value a state of env's by name, its u the learned player's action
 * (u.dim = act_dim, a box), its d (if any) env's adversarial input (dg_env_free_inputs, a box of
 * the same size). A game of one learned player. DG_OK with *out (free with dg_safety_value_free),
 * else DG_ERR_IO/FORMAT (the file), DG_ERR_CONFIG (its stored config), DG_ERR_ARG (it does not map
 * onto env: the message names the axis or input) or DG_ERR_NOMEM. */
DG_API dg_status dg_safety_value_open(const dg_env *env, const char *path, const char *config,
                                      dg_safety_value **out, dg_err *e);
DG_API void      dg_safety_value_free(dg_safety_value *v);                 /* NULL is harmless */
/* V, grad V (nx), the value's optimal inputs u (u.dim) and d (d.dim, may be NULL) at env state s
 * (state_dim), at the value's horizon (its source: a grid's slices or the network, one row); returns
 * V (NaN on the source's error). The state is the value's by v's axis map. */
DG_API double    dg_safety_value_at(const dg_safety_value *v, const double *s, double *grad, double *u, double *d);
/* The first action column (after the learned player's) of the game's adversarial input that v's d
 * plays, or -1 when the game has none. */
DG_API int       dg_safety_value_adversary(const dg_safety_value *v);
/* The value's target l(x) at env state s (<= 0: inside the set to avoid). */
DG_API double    dg_safety_value_target(const dg_safety_value *v, const double *s);

/* A filter (and/or an adversary) around a policy. */
typedef struct dg_safety {
    const dg_env           *env;
    const dg_safety_value  *filter;       /* the filter's value, or NULL (no filter)               */
    const dg_safety_value  *adversary;    /* plays the adversarial input (its d*), or NULL         */
    dg_safety_opts          o;
    int64_t                 steps;        /* rows x steps filtered so far (dg_safety_filter)       */
    int64_t                 filtered;     /* ... of them changed by the filter                     */
    dg_safety_value        *owned[2];     /* what dg_safety_open opened (dg_safety_close frees)    */
} dg_safety;
/* Opens the filter's value (o->value; NULL: no filter) and the adversary's (adversary, a path; NULL:
 * none; the filter's own file: read once) and inits s with them and o (dg_safety_init). An adversary
 * on a game without an adversarial input is refused (DG_ERR_ARG, naming the game). DG_OK, or
 * dg_safety_value_open's error naming the file; on error s holds nothing. Free with
 * dg_safety_close. */
DG_API dg_status  dg_safety_open(dg_safety *s, const dg_env *env, const dg_safety_opts *o, const char *adversary,
                                 dg_err *e);
DG_API void       dg_safety_close(dg_safety *s);                          /* a zeroed s is harmless */
/* s with its values (either may be NULL) and options, counters zero. */
DG_API void       dg_safety_init(dg_safety *s, const dg_env *env, const dg_safety_value *filter,
                                 const dg_safety_value *adversary, const dg_safety_opts *o);
/* The action the game steps with at step t (1-based) from state (B, state_dim) and the learned
 * player's action (B, act_dim), an op on ctx: the filtered action (or the policy's, no filter),
 * and with an adversary the adversarial input's columns (its d* mapped onto [-1, 1]) after it.
 * Its gradient flows to action: the filter's Jacobian in it (switch: identity where it does not
 * intervene, 0 where it does; qp: the projection's, exact where the active set does not change);
 * and to state: switch 0 (its action is piecewise constant in the state), qp through its bound
 * c(x) = -gamma V(x) - grad V . (f + D d*) with grad V and d* held (V is a grid's piecewise
 * multilinear interpolation: no second derivative). Counts steps and interventions into s
 * (atomically). NULL with ctx's error. */
DG_API dg_tensor *dg_safety_filter(dg_ctx *ctx, dg_safety *s, int t, dg_tensor *state, dg_tensor *action);
/* The filter of one row in double: the action a (act_dim, in [-1, 1]) at env state x into out
 * (act_dim) and, when jac is not NULL, d out / d a into jac (act_dim, act_dim, row-major). Returns
 * 1 when it changed the action, else 0 (out = a). What dg_safety_filter does row by row. */
DG_API int        dg_safety_filter_row(const dg_safety *s, const double *x, const double *a, double *out,
                                       double *jac);
/* dg_safety_filter with s (a dg_safety) as dg_policy.filter takes it (dg_trainer_set_filter). */
DG_API dg_tensor *dg_safety_policy_filter(dg_ctx *ctx, void *s, int t, dg_tensor *state, dg_tensor *action);
/* Puts s between pol's players and the game's step (dg_policy.filter): every rollout of pol
 * (training, eval) then steps with dg_safety_filter's action. */
DG_API void       dg_safety_attach(dg_safety *s, dg_policy *pol);

struct dg_eval_result;  /* run.h */

/* What the filter did over an episode. */
typedef struct dg_safety_result {
    double  interventions;                /* the fraction of rows x steps the filter changed       */
    int64_t violations;                   /* episodes that entered the value's target (l(x) <= 0 at
                                             any step, the start included)                         */
    int64_t episodes;                     /* B                                                     */
    double  min_target;                   /* the least l(x) over every row and step                */
} dg_safety_result;
/* dg_run_eval (run.h) with s around m: one episode of B rows from state and aux, its numbers into r
 * and the filter's into sr (violations by the filter's value's target, else the adversary's).
 * DG_OK, DG_ERR_NOMEM, or the episode's error. */
DG_API dg_status  dg_safety_eval(const dg_env *env, const dg_policy *m, dg_params *p, dg_safety *s,
                                 const dg_real *state, const dg_real *aux, int B, int grad,
                                 struct dg_eval_result *r, dg_safety_result *sr, dg_err *e);

#ifdef __cplusplus
}
#endif
#endif
