/* difgames certify: learned players held against the grid solver's equilibrium. The four pairings
 * of a learned pair and the HJI feedback (dg_hji_versus), the learned pair's cost against V(x0)
 * (dg_certify, dg_certify_cost), and each learned player's exact exploitability: its network
 * tabulated on a grid and the other player's best response solved there (dg_certify_exploit).
 * Bounds with a sign that need no grid (dg_certify_bounds): per start, an optimised open-loop plan
 * (one player) or best response to a frozen player (two). docs/certify.md explains them. These sit
 * above both solvers: the grid solver's header (hji.h) knows nothing of them.
 */
#ifndef DIFGAMES_CERTIFY_H
#define DIFGAMES_CERTIFY_H

#include <stdint.h>

#include "difgames/api.h"
#include "difgames/config.h"
#include "difgames/core.h"
#include "difgames/certify_dp.h"
#include "difgames/certify_sampling.h"
#include "difgames/hji.h"

#ifdef __cplusplus
extern "C" {
#endif

struct dg_env;
struct dg_policy;
struct dg_params;
struct dg_train_opts;

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
/* DG_OK unless p's game has noise (dg_hji_game_noisy): DG_ERR_ARG in one line naming p, as certify
 * defines no promise for noisy games yet. Every certify check below calls it first. */
DG_API dg_status   dg_certify_noise_check(const dg_hji_problem *p, dg_err *e);
/* DG_OK when env is the learning game p->link maps onto p; else DG_ERR_ARG saying what is needed. */
DG_API dg_status   dg_hji_link_check(const dg_hji_problem *p, const struct dg_env *env, dg_err *e);
/* Plays the pairings over env->horizon steps (pol, params: env's policies, both players); the HJBI
 * players' feedback from the value source V (hji_sim.h: a grid's slices, dg_hji_source_slices, or a
 * network, dg_hji_learn_source) at the time-to-go V->horizon - t, one evaluation a step for the B
 * rows. A play is captured where the relative position is within p's capture_radius, or, when p's
 * target moves in time (dg_hji_problem_target_moves), where it is in the target of its time t (past t_end,
 * where it ends; dg_hji_problem_sets_at). Returns DG_OK, DG_ERR_ARG (dg_hji_link_check, B < 1, bad slices or layer), DG_ERR_NOMEM or
 * the source's error. */
DG_API dg_status   dg_hji_versus(const dg_hji_problem *p, const dg_hji_source *V, double layer,
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
/* DG_OK unless env's game is general-sum (dg_env.general_sum): then DG_ERR_CONFIG naming the game in
 * one line, as certify does not yet define what it promises for such a game. */
DG_API dg_status dg_certify_general_sum_check(const struct dg_env *env, dg_err *e);
/* DG_OK unless env's game has Brownian noise (dg_env.noise_dim > 0: reach with env.noise > 0, merton, a
 * model file's diffusion): then DG_ERR_CONFIG in one line naming the game and where its noise is
 * declared, as certify does not yet define what it promises for a noisy game. */
DG_API dg_status dg_certify_env_noise_check(const struct dg_env *env, dg_err *e);
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

/* The statistics certify prints. A quarter of the starts by V(x0): its starts, the range of V(x0) over
 * them, the means of V(x0) and of the policy's cost, and the mean relative gap (cost - V) / |V|. */
typedef struct dg_certify_quarter {
    int    n;                           /* starts (0: an empty quarter, the rest unset) */
    double v_lo, v_hi;                  /* V(x0) of its first and last start            */
    double value_mean, cost_mean, gap;  /* means over its starts                        */
} dg_certify_quarter;
/* rows (B pairs: V(x0), the policy's cost at one start, as certify gives them) sorted by V(x0) in
 * place (ties in their order of qsort's choosing), and q[0..3] its quarters (rows [k B / 4, (k + 1) B /
 * 4)), q[4] all B rows. */
DG_API void dg_certify_quarters(double *rows, int B, dg_certify_quarter q[5]);
/* What the frozen player loses to a best response, mean over B starts: the value V(x0) at each start
 * and w the best response's capture time there (dg_certify_exploit); the frozen pursuer (evader 0)
 * loses w - V, the frozen evader V - w. *mean: in seconds, *rel: relative to |V|. */
DG_API void dg_certify_exploit_loss(const double *value, const double *w, int B, int evader, double *mean,
                                   double *rel);

/* ------------------------------------------------------------ bounds with a sign */
/* Per-start bounds that hold in any dimension (src/certify/bounds.c, issue 26 section 2), in the
 * learner's own game: the same step, costs, weights, horizon and loss averaging as training (each
 * start's cost is its own episode loss, a batch of one). The action sequence itself is optimised
 * from each start by BPTT (open loop: one pre-tanh row a step, the action tanh of it, so a plan has
 * the action set of a network's tanh output), restarts x iters steps of Adam, every start's plan
 * apart from the others' (rows of a batch are independent in a game's costs: the gradient of the
 * batch mean times B is each row's own; Adam is elementwise and nothing is clipped). What any plan
 * realises is a cost some strategy reaches from that start, so:
 * - one player: in a deterministic game from a known start the best plan is as good as the best
 *   feedback, so plan_cost >= V(x0) (an upper bound of the value), and policy_cost - plan_cost is a
 *   lower bound on how far the policy is from optimal there;
 * - two players: with learned player P frozen (its network on the tape, reacting to the state; its
 *   parameters unchanged), the other player's best realised cost br_cost_P over the routes (a plan
 *   per start, and the trainer's BPTT best response, dg_best_responses) bounds its regret from
 *   below: the evader's (pursuer frozen) by br_cost - pair_cost, the pursuer's (evader frozen) by
 *   pair_cost - br_cost. Never exact: a better response may exist.
 * Each bound is >= 0 by construction: the learned player's own action sequence from a start is a
 * plan whose cost is the policy's (pair's) cost there, so it is a candidate (and restart 0 starts
 * from it, so that the optimised plan begins no worse). */
#define DG_CERTIFY_MAX_RESTARTS 8
typedef enum dg_certify_route {
    DG_CERTIFY_ROUTE_PLAN,                /* an open-loop plan per start (or the policy's own actions) */
    DG_CERTIFY_ROUTE_BPTT,                /* the trainer's BPTT best response, a network          */
    DG_CERTIFY_ROUTE_GRID,                /* the grid's feedback against the frozen player
                                             (dg_dp_best_response; dg_certify_discrete only)       */
} dg_certify_route;
DG_API const char *dg_certify_route_name(int route);   /* "plan", "bptt", "grid"; NULL past */

typedef struct dg_certify_plan_opts {
    int      restarts;                    /* 1..DG_CERTIFY_MAX_RESTARTS: restart 0 from the learned
                                             player's own actions along its trajectory, 1 from the
                                             neutral action (pre-tanh 0), the rest random           */
    int      iters;                       /* Adam steps per restart (>= 0)                          */
    double   lr;                          /* Adam's rate on the pre-tanh actions; it falls to lr/10 by
                                             the last step (a cosine), so the last plan is settled  */
    double   init_std;                    /* random restarts: pre-tanh actions ~ N(0, init_std)     */
    uint64_t seed;                        /* of the random restarts                                 */
    int      bptt_epochs;                 /* two players: epochs of the trainer's best responses
                                             (dg_best_responses; 0: plans only; needs networks)    */
} dg_certify_plan_opts;
/* restarts 3, iters 300, lr 0.05, init_std 0.5, seed 0, bptt_epochs 50 */
DG_API dg_certify_plan_opts dg_certify_plan_opts_default(void);

/* Per start, the caller's arrays of B (each may be NULL). One player: policy_cost, plan_cost,
 * suboptimal. Two players: policy_cost (the pair's), and per frozen player k (0 the pursuer, 1 the
 * evader) br_cost[k], br_route[k] and regret[k] (the other player's). */
typedef struct dg_certify_bound_rows {
    double *policy_cost;                  /* the learned policy's (pair's) episode loss            */
    double *plan_cost;                    /* the best plan's loss: >= V(x0), <= policy_cost        */
    double *suboptimal;                   /* policy_cost - plan_cost >= 0: the policy's shortfall, at least */
    double *br_cost[2];                   /* br_cost_pursuer, br_cost_evader: [0] the pursuer frozen:
                                             the evader's best J (>= the pair's); [1] the evader
                                             frozen: the pursuer's best J (<= the pair's)         */
    int    *br_route[2];                  /* the dg_certify_route that found it                    */
    double *regret[2];                    /* [0] br_cost[0] - policy_cost: the evader's regret, at
                                             least; [1] policy_cost - br_cost[1]: the pursuer's; >= 0 */
} dg_certify_bound_rows;

/* What a dg_certify_bounds did: means over the starts and the time it took. */
typedef struct dg_certify_bound_stats {
    int    episodes, restarts, iters;
    double policy_cost;                   /* means over the starts                                 */
    double plan_cost, suboptimal;         /* one player                                            */
    double br_cost[2], regret[2];         /* two players, by frozen player                         */
    int    bptt_best[2];                  /* two players: starts where the BPTT route did better   */
    int    kept[2];                       /* starts where no plan beat the learned player's own
                                             actions ([0] one player or pursuer frozen, [1] evader frozen) */
    int    restart_best[2][DG_CERTIFY_MAX_RESTARTS];  /* starts whose best plan restart k found  */
    double restart_cost[2][DG_CERTIFY_MAX_RESTARTS];  /* mean cost of restart k's last plan     */
    double seconds;                       /* all of it                                             */
    double seconds_restart;               /* mean wall time of one restart (all B starts, one batch) */
    double seconds_bptt;                  /* two players: the trainer's best responses             */
} dg_certify_bound_stats;

/* The bounds from the B starts state (B, state_dim) and aux (B, aux_dim; NULL when the game has
 * none) of env's learned player(s) pol/params (unchanged), as dg_certify_bound_rows says; train:
 * the BPTT route's options (Adam's rate, betas, epsilon, clipping, batch, seed; NULL: the
 * defaults). Returns DG_OK, DG_ERR_ARG (bad arguments or options, a policy that is not env's), or
 * DG_ERR_NOMEM. */
DG_API dg_status dg_certify_bounds(const struct dg_env *env, const struct dg_policy *pol, struct dg_params *params,
                                   const dg_real *state, const dg_real *aux, int B, const dg_certify_plan_opts *o,
                                   const struct dg_train_opts *train, dg_certify_bound_rows *rows,
                                   dg_certify_bound_stats *stats, dg_err *e);
/* Bytes dg_certify_bounds allocates beyond its arguments (its tapes grow past this if short). */
DG_API double    dg_certify_bounds_memory(const struct dg_env *env, const struct dg_policy *pol, int B);

/* ------------------------------------------------ the learner's own game, certified */
/* What `difgames certify` does by default (issue 26, sections 1 to 5; docs/certify.md): the value of
 * the learner's own discrete game by dynamic programming (certify_dp.h) at B held-out starts, with its
 * refinement study; the learned policy's (pair's) episode loss from each start; the per-start bounds
 * of dg_certify_bounds; and where they sit against the value:
 *
 *   gap      = 0 for a cost inside [V-, V+], else (cost - V+) / |V+| above it, (cost - V-) / |V-|
 *              below it (dg_certify_interval_gap); abs_gap = |gap|
 *   exploit  = br_cost[0] - V+ (the pursuer frozen: what a best-responding evader gains over the upper
 *              value) and V- - br_cost[1] (the evader frozen); estimates, since V is the grid's
 *
 * A game with an adversarial input no one learns (dg_env_free_inputs) is a game of two values whose
 * maximiser is that input: the policy's cost is then its loss against the grid's worst-case answer
 * (dg_dp_play), and its loss with the input held (what BPTT trained on) is reported beside it; the
 * plan bounds, whose game holds the input, are not computed there. A game with episode constants is
 * solved for one of them: a model file's model.episode.grid, else the first start's; every start
 * plays it. The grid's box: o->dp's where given, else a model file's declared state box, else the
 * reset's support widened (dg_dp_box) and, on an axis the reset leaves fixed (a velocity that starts
 * at 0), the support of the game's episodes under constant actions drawn at random, widened alike. */
typedef struct dg_certify_discrete_opts {
    int      episodes;                  /* B held-out starts (>= 1)                                  */
    uint64_t seed;                      /* their draw by the game's reset                            */
    dg_dp_opts        dp;               /* the grids' box, search, threads, memory; dp.nodes[k] the
                                           coarsest grid's (0: dg_certify_discrete_nodes)            */
    dg_dp_refine_opts refine;           /* tol (> 0), ratio, min/max grids (refine.keep is the call's) */
    int      bounds;                    /* 1: the per-start bounds (dg_certify_bounds)               */
    int      grid_br;                   /* two players, with the bounds: 1 the grid route of each best
                                           response too (dg_dp_best_response on the finest grid of the
                                           study), where the frozen player acts on the value state
                                           alone (dg_dp_frozen_fits at the starts)                  */
    dg_certify_plan_opts plan;          /* their options                                             */
    const struct dg_train_opts *train;  /* the BPTT route's (NULL: the defaults)                     */
} dg_certify_discrete_opts;

/* The defaults: 64 starts, tol 0.01, the bounds with dg_certify_plan_opts_game's plan. */
DG_API dg_certify_discrete_opts dg_certify_discrete_opts_default(const struct dg_env *env);
/* The coarsest grid's nodes per value axis by their number d: 21 (d <= 2), 13 (3), 9 (4 and more):
 * three grids of a 4-D state at ratio 1.5 are then 9^4, 13^4 and 19^4 nodes. */
DG_API int dg_certify_discrete_nodes(int d);
/* dg_certify_plan_opts_default with per-game iterations: 3000 for reach (measured: 300 leave the plan
 * several percent above its optimum), else 300. */
DG_API dg_certify_plan_opts dg_certify_plan_opts_game(const struct dg_env *env);
/* The gap of cost against the interval [lower, upper] (see above); NaN when an end is 0 and the cost
 * lies off the interval, or an argument is NaN. */
DG_API double dg_certify_interval_gap(double cost, double lower, double upper);

/* The box dg_certify_discrete solves on, into dp->lo, hi (every value axis): dp's own where given; else
 * a model file's declared state box; else the reset's support widened (dg_dp_box) and, on an axis the
 * reset leaves fixed, the support of 256 episodes under constant random actions, widened alike.
 * DG_ERR_ARG (dg_dp_check; an axis nothing moves), or the game's error. */
DG_API dg_status dg_certify_discrete_box(const struct dg_env *env, dg_dp_opts *dp, dg_err *e);

/* Per start (B each; any may be NULL). NaN where a number does not apply. */
typedef struct dg_certify_discrete_rows {
    double *state;                      /* (B, state_dim) the starts                                  */
    double *value_upper, *value_lower;  /* V+ and V- (equal for one value): extrapolated where the
                                           refinement's order allows, else the finest grid's          */
    double *policy_cost;                /* the learned policy's (pair's) episode loss                 */
    double *policy_cost_held;           /* an adversarial input: the loss with it held (BPTT's game)  */
    double *gap, *abs_gap;
    double *plan_cost;                  /* one learned player: the best plan's loss (>= V(x0))         */
    double *br_cost[2];                 /* two: [0] the pursuer frozen, [1] the evader frozen          */
    int    *br_route[2];                /* dg_certify_route_name                                       */
    double *exploit[2];                 /* br_cost[0] - V+, V- - br_cost[1]                            */
} dg_certify_discrete_rows;

typedef struct dg_certify_discrete_result {
    int    episodes, players, nvalues;  /* learned players; values (2: V+ and V-)                     */
    int    adversarial;                 /* an adversarial input played the grid's answer               */
    int    ninputs;                     /* inputs no one learns (dg_env_free_inputs)                   */
    dg_env_input inputs[2];
    dg_dp_refinement ref;               /* the study: grids, means, order, extrapolated, converged     */
    double outside;                     /* the finest grid's off-box fraction                         */
    double value_upper, value_lower;    /* means over the starts                                       */
    double policy_cost, policy_cost_held, gap, abs_gap;
    double plan_cost, br_cost[2], exploit[2];
    int    weak[2];                     /* starts whose best response stayed short of the value by more
                                           than the grid's last change (relative, ref.change)          */
    int    bounds;                      /* the bounds were computed                                    */
    int    grid_route[2];               /* per frozen player: 1 the grid route ran; 0 off; -1 the frozen
                                           player sees more than the value state; -2 the grid did not
                                           fit the memory estimate                                     */
    int    grid_best[2];                /* starts where the grid route did best                        */
    int    route_starts[2][3];          /* per frozen player, starts whose best response each route
                                           (dg_certify_route) found                                     */
    double seconds_grid;
    dg_certify_bound_stats bound_stats;
    double seconds_dp, seconds_play, seconds_bounds;
} dg_certify_discrete_result;

/* Certifies env's learned player(s) pol/params (unchanged) by o, filling rows and r. DG_OK; DG_ERR_ARG
 * (a game the grid cannot solve, dg_dp_check's line: no per-row costs, an input no one learns left
 * undeclared, an open-loop plan; bad options), DG_ERR_NOMEM (fewer than three grids fit the memory
 * estimate, or an allocation), or a tape error. A study that did not converge is no error: r->ref says
 * so, and its values are estimates. */
DG_API dg_status dg_certify_discrete(const struct dg_env *env, const struct dg_policy *pol, struct dg_params *params,
                                     const dg_certify_discrete_opts *o, dg_certify_discrete_rows *rows,
                                     dg_certify_discrete_result *r, dg_err *e);

#ifdef __cplusplus
}
#endif
#endif
