/* difgames certify: learned players held against the grid solver's equilibrium. The four pairings
 * of a learned pair and the HJI feedback (dg_hji_versus), the learned pair's cost against V(x0)
 * (dg_certify, dg_certify_cost), and each learned player's exact exploitability: its network
 * tabulated on a grid and the other player's best response solved there (dg_certify_exploit).
 * docs/certify.md explains them. These sit above both solvers: the grid solver's header (hji.h)
 * knows nothing of them.
 */
#ifndef DIFGAMES_CERTIFY_H
#define DIFGAMES_CERTIFY_H

#include <stdint.h>

#include "difgames/api.h"
#include "difgames/config.h"
#include "difgames/core.h"
#include "difgames/hji.h"

#ifdef __cplusplus
extern "C" {
#endif

struct dg_env;
struct dg_policy;
struct dg_params;

/* ------------------------------------------------ learned players against HJI */
/* The four pairings of a learned pursuer and evader (env's two policies) against p's equilibrium
 * feedback (dg_hji_feedback of V at time-to-go T - t, T = V's last time, with boundary layer layer),
 * from the same B initial states of env's reset (seed), in env's own discrete dynamics through
 * p->link's mapping: learned vs learned, learned pursuer vs HJI evader, HJI pursuer vs learned
 * evader, HJI vs HJI. */
#define DG_HJI_PAIRINGS 4
typedef struct dg_hji_versus_result {
    int    episodes;                      /* B                                                 */
    double inside;                        /* fraction of starts with V(x, T) <= 0 (in the tube) */
    double capture_rate[DG_HJI_PAIRINGS];
    double capture_time[DG_HJI_PAIRINGS]; /* mean over the captured (s); NaN when none         */
} dg_hji_versus_result;
DG_API const char *dg_hji_pairing_name(int k);   /* "learned vs learned" .. "HJBI vs HJBI"; NULL past */
/* DG_OK when env is the learning game p->link maps onto p; else DG_ERR_ARG saying what is needed. */
DG_API dg_status   dg_hji_link_check(const dg_hji_problem *p, const struct dg_env *env, dg_err *e);
/* Plays the pairings over env->horizon steps (pol, params: env's policies, both players). Returns
 * DG_OK, DG_ERR_ARG (dg_hji_link_check, B < 1, bad slices or layer) or DG_ERR_NOMEM. */
DG_API dg_status   dg_hji_versus(const dg_hji_problem *p, const dg_hji_slices *V, double layer,
                                 const struct dg_env *env, const struct dg_policy *pol, struct dg_params *params,
                                 int B, uint64_t seed, dg_hji_versus_result *r, dg_err *e);

/* How far a learned pair is from the equilibrium (dg_certify): the game of degree p (payoff: time) is
 * the learning game's capture time, mapped through p->link. */
typedef struct dg_certify_opts {
    int      episodes;                    /* held-out initial states (>= 1)                    */
    uint64_t seed;                        /* drawn by the game's reset from this seed          */
} dg_certify_opts;
typedef struct dg_certify_result {
    int    episodes, captured;            /* episodes; those the learned pursuer ended by capture */
    double value_mean;                    /* mean V(x0): the equilibrium capture time           */
    double policy_cost_mean;              /* mean capture time of the learned pair (an episode
                                             without capture counts its horizon, H dt)          */
    double gap;                           /* mean (cost - V(x0)) / |V(x0)|                     */
    double gap_abs;                       /* mean |cost - V(x0)| / |V(x0)|                     */
    double step_bias;                     /* the learning game's dt: capture is seen at the end
                                             of a step, so a cost is late by up to this. payoff:
                                             cost (dg_certify_cost): the mean of dt/2 (l(x_0) -
                                             l(x_H)), what the loss (each step's cost at its end)
                                             lacks of the trapezoid rule, l the state's running cost */
    double gap_trapezoid;                 /* payoff: cost: the gap of the policy's cost plus that */
} dg_certify_result;
/* Plays the learned pair pol/params in env's own dynamics from o->episodes initial states drawn by
 * its reset (o->seed), each to capture or the horizon, and compares its capture time with the value
 * V (p's grid, its last time) at the mapped initial state; value and cost (may be NULL; room for
 * o->episodes) get each episode's. cfg is the learning config: the constants p->link->same names
 * must have the same values there (env.<name>, or the game's default). Returns DG_OK, DG_ERR_ARG (no
 * link to env, a payoff other than time, a constant that differs, an initial state off p's grid,
 * bad options), DG_ERR_NOMEM. */
DG_API dg_status dg_certify(const dg_hji_problem *p, const dg_hji_slices *V, const struct dg_env *env, dg_cfg *cfg,
                            const struct dg_policy *pol, struct dg_params *params, const dg_certify_opts *o,
                            dg_certify_result *r, double *value, double *cost, dg_err *e);
/* A model game of degree (payoff: cost: the gradient solver's loss as the grid's running and terminal
 * costs, src/hji/model_problem.c): the learned policy (or pair) plays from o->episodes starts drawn by env's
 * reset (o->seed) with the episode variables at the grid's (model.episode.grid), each row's episode
 * loss against V at its start; value and cost as dg_certify's. DG_ERR_ARG when p is not env's model
 * with payoff: cost, t_end is not env.horizon env.dt, a start is off the grid; DG_ERR_NOMEM. */
DG_API dg_status dg_certify_cost(const dg_hji_problem *p, const dg_hji_slices *V, const struct dg_env *env,
                                 const struct dg_policy *pol, struct dg_params *params, const dg_certify_opts *o,
                                 dg_certify_result *r, double *value, double *cost, dg_err *e);
DG_API dg_status dg_certify_cost_check(const dg_hji_problem *p, const struct dg_env *env, dg_err *e);
/* What dg_certify checks first (before a solve is worth its time): the link, the payoff, the constants. */
DG_API dg_status dg_certify_check(const dg_hji_problem *p, const struct dg_env *env, dg_cfg *cfg, dg_err *e);

/* The exact exploitability of one learned player (dg_certify_exploit): its network tabulated over a
 * 4-D grid of (its own position, x = evader - pursuer; x on p's own grid, so that the best response's
 * value and V share their discretisation), the other player's best response solved on it. */
typedef struct dg_certify_exploit_opts {
    int    n_own;                         /* nodes per axis of the frozen player's position    */
    double own_half;                      /* ... over [-own_half, own_half]^2                  */
} dg_certify_exploit_opts;
/* Freezes the learned pursuer (evader 0) or evader (1) of duel_simple and solves the other player's
 * one-sided time to capture W (payoff: time, p's constants, accuracy, tolerance and cap t_end) on the
 * 4-D grid of o, then reads W at the B learning states state0 (B, 4) into w: the capture time the
 * best response forces against the frozen player (the frozen pursuer loses W - V, the frozen evader
 * V - W). DG_ERR_ARG for another game (an exact answer needs a grid over all the frozen network
 * sees), DG_ERR_NOMEM, or dg_hji_solve's. */
DG_API dg_status dg_certify_exploit(const dg_hji_problem *p, const struct dg_env *env, const struct dg_policy *pol,
                                    struct dg_params *params, int evader, const dg_certify_exploit_opts *o, int B,
                                    const dg_real *state0, double *w, dg_hji_stats *stats, dg_err *e);
/* Its steps, for a frozen player of your own. The 4-D grid (DG_ERR_ARG: not duel_simple's pursuit2d,
 * bad options). The frozen player's actions (on the unit disk) at every node of g into act (nodes, 2):
 * the learning state at the node, the game's observation, the network, the unit disk. The other
 * player's best response against the actions act (nodes, 2; the frozen pursuer's a, or evader's b,
 * at each node of g), read at the B learning states state0 into w. */
/* What dg_certify_exploit checks first (before a solve is worth its time): env is the game p links to,
 * duel_simple against pursuit2d or chase against chase4d (payoff: time), chase's players of the
 * relative state (env.observe: relative). DG_OK or DG_ERR_ARG saying what is needed. */
DG_API dg_status dg_certify_exploit_check(const dg_hji_problem *p, const struct dg_env *env, dg_err *e);
/* Bytes one dg_certify_exploit allocates (0 for options dg_certify_exploit_grid refuses). */
DG_API double    dg_certify_exploit_memory(const dg_hji_problem *p, const dg_certify_exploit_opts *o);
DG_API dg_status dg_certify_exploit_grid(const dg_hji_problem *p, const dg_certify_exploit_opts *o, dg_hji_grid *g,
                                         dg_err *e);
DG_API dg_status dg_certify_tabulate(const struct dg_env *env, const struct dg_policy *pol, struct dg_params *params,
                                     int evader, const dg_hji_grid *g, dg_real *act, dg_err *e);
DG_API dg_status dg_certify_best_response(const dg_hji_problem *p, const dg_hji_grid *g, int evader, const dg_real *act,
                                          int B, const dg_real *state0, double *w, dg_hji_stats *stats, dg_err *e);

#ifdef __cplusplus
}
#endif
#endif
