/* difgames certify: the value of the learner's own discrete game, by dynamic programming.
 *
 * The game is the one BPTT trains: the game's step and per-row costs exactly as the tape computes
 * them (its dt, integrator, update order and action bounds), the loss's weights and its 1/H mean
 * over the steps, the terminal costs once, the horizon H, the episode constants held fixed. On a
 * grid of the value state (the game's reduced state, dg_env.value_dim, or the whole state) the
 * Bellman-Isaacs recursion
 *
 *     V_H(x) = sum_k w_k g_k(x)                                   (terminal costs)
 *     V_k(x) = opt_{a, b} [ (1/H) sum_k w_k c_k(x', a, b) + V_{k+1}(x') ],   x' = step(x, a, b)
 *
 * runs backwards over the H steps, V_{k+1}(x') read by multilinear interpolation (monotone: the
 * scheme converges as the grid is refined, with an error like dx^2 / dt; a next state off the box
 * reads the nearest edge). With two learned players moving at the same instant the discrete game
 * has two values: the upper V+ (min_a max_b: the minimiser commits first) and the lower V-
 * (max_b min_a); V- <= V+, their difference an O(dt) fact of the game, not an error. One player:
 * one value, min_a. The learned policy is time-invariant while V_k depends on the steps left: an
 * episode starts at k = 0.
 *
 * Actions are searched per node over each player's action box [-1, 1]^m (what a policy outputs;
 * the game's step applies its own bounds, duel_simple's unit disk), each value on its own: the
 * committing player's candidates (a grid of `coarse` points per axis, then `rounds` rounds of the
 * 3^m stencil around its best at halving spacings; a player alone as a pattern search) are each
 * answered by the other player's best answer (its own coarse grid and rounds, or a warm start from
 * the best pair's answer). Between full searches (every `refresh` steps) a node starts from its best
 * pair of the step before and takes the last `warm` rounds. The answer to the committing player's
 * choice is a search, so the upper value can only come out above the candidates' min-max, the lower
 * below (search errors widen [V-, V+]); tests/test_certify_dp.c measures how much a finer search
 * moves V. dg_dp_refine measures a grid's error by refinement (issue 26, sections 1 and 3;
 * docs/certify.md).
 */
#ifndef DIFGAMES_CERTIFY_DP_H
#define DIFGAMES_CERTIFY_DP_H

#include <stdint.h>

#include "difgames/api.h"
#include "difgames/env.h"
#include "difgames/policy.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_DP_MAX_DIMS DG_VALUE_MAX_DIMS  /* value axes                                         */
#define DG_DP_MAX_ACT 4                   /* action components of one player the search covers  */
#define DG_DP_MAX_GRIDS 8                 /* grids of one refinement study                      */

typedef struct dg_dp_opts {
    int      nodes[DG_DP_MAX_DIMS];  /* nodes per value axis (>= 3); dg_dp_refine: the coarsest grid's (0:
                                        21) */
    double   lo[DG_DP_MAX_DIMS];     /* the grid's box; lo[k] >= hi[k] on an axis: that axis from the reset */
    double   hi[DG_DP_MAX_DIMS];     /* support (dg_dp_box)                                                 */
    double   margin;                 /* dg_dp_box: the reset support widened by margin x its span on each
                                        side (0: 0.25); what H steps reach beyond it is the caller's to
                                        declare (lo, hi): dg_dp_value.outside says how often it mattered  */
    int      coarse;                 /* points per action axis of the first search (0: 3; at least 2)    */
    int      rounds;                 /* local refinements after it, each halving the spacing: the finest
                                        is 2 / (coarse - 1) / 2^rounds (0: 8; -1: none)                  */
    int      refresh;                /* the full search (coarse, rounds) every refresh steps (0: 10; 1:
                                        every step); the steps between start from each node's best pair of
                                        the step before                                                   */
    int      warm;                   /* ... and take the last `warm` rounds alone (0: 3)                  */
    const dg_real *aux;              /* the episode constants (aux_dim), fixed; NULL when aux_dim is 0    */
    int      threads;                /* 0: one per core                                                   */
    uint64_t seed;                   /* the reset draws of dg_dp_box                                      */
    int      keep;                   /* 1: keep V_k of every step k (dg_dp_value.all)                     */
    double   max_bytes;              /* the most the solve may allocate (0: dg_mem_limit)                 */
    const struct dg_policy *frozen;  /* not NULL (two learned players): player frozen_player plays this
                                        policy's action at each node's learning state (dg_dp_state's
                                        representative, dg_dp_frozen_fits) and the other best-responds:
                                        one value, the other's best cost against it                       */
    struct dg_params *frozen_params; /* its parameters (unchanged; NULL for a function player)            */
    int      frozen_player;          /* 0: the pursuer is frozen, 1: the evader                           */
} dg_dp_opts;

typedef struct dg_dp_value {
    int      ndim;                       /* value axes                                          */
    int      n[DG_DP_MAX_DIMS];          /* nodes per axis                                      */
    double   lo[DG_DP_MAX_DIMS], hi[DG_DP_MAX_DIMS];
    int64_t  nodes;                      /* prod n                                              */
    int      horizon;                    /* H                                                   */
    int      nvalues;                    /* 1: one player, or one frozen; 2: [0] the upper V+, [1] the lower V- */
    const struct dg_policy *frozen;      /* opts.frozen: the other player's best response was solved */
    int      frozen_player;              /* ... against this player (-1: none)                   */
    double  *v[2];                       /* V_0 at the nodes, row-major (the last axis fastest) */
    float   *all[2];                     /* with opts.keep: (H + 1, nodes), V_k at row k; else NULL */
    double   outside;                    /* fraction of node-steps whose chosen next state fell off the
                                            box (it then read the edge's value)                 */
    int64_t  evaluations;                /* (node, action pair) evaluations of the step          */
    double   seconds;
} dg_dp_value;

/* DG_OK when env's game can be solved: per-row costs (dg_game.step_cost_rows), feedback players
 * (not a plan), 1 or 2 learned players with at most DG_DP_MAX_ACT action components each, at most
 * DG_DP_MAX_DIMS value axes; else DG_ERR_ARG saying what is missing. */
DG_API dg_status dg_dp_check(const struct dg_env *env, dg_err *e);
/* Values of env's discrete game: 2 (V+ and V-) with two learned players or an adversarial input no one
 * learns (dg_env_free_inputs: then it is the maximiser), else 1. */
DG_API int       dg_dp_nvalues(const struct dg_env *env);
/* The value state of a learning state s (env's state_dim): x (env's value axes; dg_dp_dims). */
DG_API int       dg_dp_dims(const struct dg_env *env);
DG_API void      dg_dp_state(const struct dg_env *env, const dg_real *s, double *x);
/* The box of o's axes (lo < hi given) and, for the others, the support of 4096 reset draws (seed
 * o->seed) in value coordinates widened by o->margin x its span on each side. DG_ERR_ARG when an axis
 * the reset leaves fixed (a span of 0) has no bounds in o. */
DG_API dg_status dg_dp_box(const struct dg_env *env, const dg_dp_opts *o, double *lo, double *hi, dg_err *e);
/* Bytes dg_dp_solve allocates for o (its box and nodes given), from a probe of the game's tape on a few
 * rows; -1 with e set when o is refused. */
DG_API double    dg_dp_memory(const struct dg_env *env, const dg_dp_opts *o, dg_err *e);
/* Solves the discrete game on o's grid (o->nodes; the box from dg_dp_box) into v (free with
 * dg_dp_value_free). DG_OK; DG_ERR_ARG (dg_dp_check, bad options), DG_ERR_NOMEM (the estimate over the
 * limit, or an allocation failed), or the game's tape error. */
DG_API dg_status dg_dp_solve(const struct dg_env *env, const dg_dp_opts *o, dg_dp_value *v, dg_err *e);
DG_API void      dg_dp_value_free(dg_dp_value *v);                 /* a zeroed value is harmless */
/* V_0 (which 0: V+ or the one value, 1: V-) at the learning state s, interpolated. */
DG_API double    dg_dp_value_at(const struct dg_env *env, const dg_dp_value *v, int which, const dg_real *s);

/* The learned player's episode loss from each of B starts (state (B, state_dim); aux: one row of the
 * episode constants, every start's, the one v was solved for) in env's game, its adversarial input
 * (dg_env_free_inputs) answering each step by the grid's worst case: at step t the answer b that
 * maximises c(x, a, b) / H + V+_t(x') for the policy's action a (pol's player 0, params unchanged), by
 * o's search (coarse, rounds) over the input's box; V+_t from v (solved with keep). cost (B): each
 * start's loss as BPTT counts it (the running terms' mean over the H steps, the terminal ones once).
 * A value solved against a frozen player (opts.frozen): pol's frozen player acts at the real states
 * (its network sees everything it sees in training) and the other answers each step by the grid's
 * best response, minimising (the pursuer) or maximising (the evader) c / H + V_t(x'); cost is what
 * that pair realises. DG_ERR_ARG (dg_dp_check, a game without an adversarial input or with two
 * learned players, a value that is not env's or not kept), DG_ERR_NOMEM, or the game's tape error. */
DG_API dg_status dg_dp_play(const struct dg_env *env, const dg_dp_value *v, const dg_dp_opts *o,
                            const struct dg_policy *pol, struct dg_params *params, const dg_real *state,
                            const dg_real *aux, int B, double *cost, dg_err *e);

/* Whether pol's player `player` acts the same (within tol, every action component) at each of the B
 * starts and at the learning state that stands for its value state (dg_dp_state's representative: the
 * declared columns, the rest 0): then a grid of the value state holds what that player sees, and a
 * best response solved on it against the frozen player (opts.frozen) is one in the learner's game. 1
 * when the value state is the whole state. A check on the starts, not a proof; whatever it says,
 * the cost dg_dp_best_response realises is a cost some strategy reaches. */
DG_API int       dg_dp_frozen_fits(const struct dg_env *env, const struct dg_policy *pol, struct dg_params *params,
                                   int player, const dg_real *state, const dg_real *aux, int B, double tol);
/* The grid route of a best response (issue 26, section 2): freezes pol's player frozen_player, solves
 * the other's one-sided Bellman recursion against it on o's grid (o->nodes, the box from dg_dp_box;
 * o->frozen* and keep are set here), and plays the grid's feedback against the real frozen network
 * from each of the B starts (dg_dp_play). cost (B): each start's realised episode loss (a cost the
 * other player can reach: the evader's regret is at least cost - the pair's cost with the pursuer
 * frozen, the pursuer's at least the pair's - cost with the evader frozen). dg_dp_solve's and
 * dg_dp_play's errors. */
DG_API dg_status dg_dp_best_response(const struct dg_env *env, const dg_dp_opts *o, const struct dg_policy *pol,
                                     struct dg_params *params, int frozen_player, const dg_real *state,
                                     const dg_real *aux, int B, double *cost, dg_err *e);

/* A refinement study (issue 26, section 3): the value at B starts on successively finer grids, nodes
 * per axis (n - 1) scaled by `ratio` each time from o->nodes (rounded to n - 1's parity there; each
 * grid at least 2 nodes more than the one before on every axis, so that no two grids are the same),
 * until the two finest differ by less than tol (relative: mean_i |V_i - V'_i| / mean_i |V_i| over the
 * starts, every value) with at least min_grids grids, or the next grid's memory estimate passes the
 * limit, or max_grids grids. */
typedef struct dg_dp_refine_opts {
    double tol;                          /* relative change that counts as converged (> 0)     */
    double ratio;                        /* (0: 1.5) spacing ratio between grids, > 1           */
    int    min_grids;                    /* (0: 3) at least this many, >= 3                     */
    int    max_grids;                    /* (0: DG_DP_MAX_GRIDS)                                */
    int64_t max_nodes;                   /* (0: no limit) the largest grid it may solve         */
    dg_dp_value *keep;                   /* not NULL: the finest grid's solve is left here, with V_k of
                                            every step (each grid solved with keep, dg_dp_play's
                                            need; the memory estimate counts it); free it with
                                            dg_dp_value_free                                     */
} dg_dp_refine_opts;
typedef struct dg_dp_refinement {
    int    ngrids, nvalues;
    int    nodes[DG_DP_MAX_GRIDS][DG_DP_MAX_DIMS];  /* each grid's nodes per axis                */
    double mean[DG_DP_MAX_GRIDS][2];     /* the mean value at the starts on each grid           */
    double seconds[DG_DP_MAX_GRIDS];
    double outside[DG_DP_MAX_GRIDS];     /* each grid's dg_dp_value.outside                     */
    double change[2];                    /* relative change between the two finest              */
    double order[2];                     /* observed order from the three finest (NaN: none)    */
    int    extrapolated[2];              /* 1: dg_dp_richardson's test held (the order in [0.5,
                                            2.5], the changes falling) and value holds the
                                            Richardson extrapolation; 0: the finest grid's      */
    int    converged;                    /* change < tol for every value, between two different
                                            grids                                              */
    const char *stopped;                 /* "converged", "memory", "max_grids" or "max_nodes"   */
} dg_dp_refinement;
/* Runs the study at the B starts states (B, state_dim) with o's options (the box fixed once, from
 * dg_dp_box) and writes each start's value into value (nvalues x B, V+ then V-; may be NULL): the
 * extrapolated one where r->extrapolated says so, else the finest grid's; finest (same layout, may be
 * NULL) gets the finest grid's. dg_dp_solve's errors; DG_ERR_NOMEM when not even min_grids fit. */
DG_API dg_status dg_dp_refine(const struct dg_env *env, const dg_dp_opts *o, const dg_dp_refine_opts *ro,
                              const dg_real *states, int B, dg_dp_refinement *r, double *value, double *finest,
                              dg_err *e);
/* A study's Richardson extrapolation from its three finest grids: spacings h1 > h2 > h3 and the values
 * at B starts on each (v1, v2, v3). The observed order p of their means into *order (may be NULL;
 * NaN: none, or spacings that do not fall). Returns 1 when the grids are in the asymptotic range, p in
 * [0.5, 2.5] and the changes falling both in the mean (|m3 - m2| < |m2 - m1|) and at the starts
 * (sum_b |v3 - v2| < sum_b |v2 - v1|): out (B, may be NULL) gets v3 + (v3 - v2) h3^p / (h2^p - h3^p);
 * else 0, and out gets v3 (the finest grid's values). */
DG_API int dg_dp_richardson(double h1, double h2, double h3, const double *v1, const double *v2, const double *v3,
                            int B, double *order, double *out);

#ifdef __cplusplus
}
#endif
#endif
