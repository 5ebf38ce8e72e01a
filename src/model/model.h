/* Games defined in a model file: the `model:` section of a config (docs/models.md).
 *
 * Expressions are parsed and differentiated symbolically by libmatheval: its
 * trees hold the numbers at double precision, and its derivative trees give
 * the exact partial derivatives that the gradient solver's backward pass
 * multiplies (no finite differences). A model file is data: an expression is
 * a string of names, numbers, + - * / ^ and parentheses, and one-argument
 * functions of libmatheval's fixed set (exp log sqrt sin cos tan ... abs step);
 * anything else is refused with the file, line and key. */
#ifndef DG_MODEL_MODEL_H
#define DG_MODEL_MODEL_H

#include <pthread.h>

#include "difgames/config.h"
#include "difgames/base.h"
#include "difgames/keys.h"

#define DG_MODEL_MAX_NAMES 64    /* state + episode + input components + constants + dt */
#define DG_MODEL_MAX_STATE 16
#define DG_MODEL_MAX_INPUT 8     /* components of one player's input                    */
#define DG_MODEL_MAX_EXPR_CHARS 4096
#define DG_MODEL_MAX_TERMS 8
#define DG_MODEL_MAX_OBS 32
#define DG_MODEL_MAX_RESET 8
#define DG_MODEL_MAX_PLAYERS 4   /* general-sum (model.players): learned players; also inputs at most */

typedef double (*dg_model_fn)(const double *v);  /* a compiled expression of all the values */

/* DG_MV_TIME: t, the game's time, which only the grid solver's target and avoid read (docs/hji.md) */
typedef enum { DG_MV_STATE, DG_MV_AUX, DG_MV_INPUT, DG_MV_CONST, DG_MV_DT, DG_MV_TIME } dg_model_kind;

/* One parsed expression: its tree, the names it reads (as indices into the model's values) and
 * the derivative tree for each of them that can vary (state, episode, input). */
typedef struct dg_model_expr {
    void  *f;
    int    nv;
    int    var[DG_MODEL_MAX_NAMES];
    char **names;                          /* owned by f                                 */
    void  *d[DG_MODEL_MAX_NAMES];          /* NULL for constants and dt                  */
    int    direct;                         /* >= 0: the expression is this one name      */
    signed char dkind[DG_MODEL_MAX_NAMES]; /* derivative k: 0 zero, 1 constant dval, 2 evaluated */
    double dval[DG_MODEL_MAX_NAMES];
    char   key[96];                        /* its config key, for messages               */
    dg_model_fn fn;                        /* compiled value, or NULL: libmatheval's      */
    dg_model_fn dfn[DG_MODEL_MAX_NAMES];   /* compiled derivatives (dkind 2), or NULL     */
} dg_model_expr;

/* How an input no learned player controls is played (model.inputs.NAME.play; the game's view of it is
 * env.h's DG_INPUT_*, which src/envs/model_game.c maps these onto) */
enum { DG_MODEL_PLAY_UNDECLARED, DG_MODEL_PLAY_HOLD, DG_MODEL_PLAY_ADVERSARIAL };

typedef struct dg_model_input {
    char   name[32];
    int    dim, first;                     /* components; index of the first in the values */
    double lo[DG_MODEL_MAX_INPUT], hi[DG_MODEL_MAX_INPUT];
    int    learned, role_max;              /* role: min (0) or max (1)                   */
    int    ball;                           /* set: ball of radius (centre 0), else the box */
    double radius;
    int    play;                           /* no learned player: DG_MODEL_PLAY_* (play:); a learned
                                              input: DG_MODEL_PLAY_UNDECLARED                     */
    double hold[DG_MODEL_MAX_INPUT];       /* no learned player: the value BPTT plays (hold:; default
                                              the box centre, 0.5 (lo + hi))                      */
} dg_model_input;

typedef struct dg_model_reset {
    int    n, var[DG_MODEL_MAX_STATE * 2];
    double lo[DG_MODEL_MAX_STATE * 2], hi[DG_MODEL_MAX_STATE * 2];
    int    has_where;
    dg_model_expr where;                   /* redraw the group until where >= 0          */
} dg_model_reset;

typedef struct dg_model {
    char   game[32];                       /* model.name: the game's name in every output ("model": none given) */
    int    nnames;
    char   name[DG_MODEL_MAX_NAMES][32];
    int    kind[DG_MODEL_MAX_NAMES];
    double cval[DG_MODEL_MAX_NAMES];       /* constants' values (and dt's)               */
    int    ns, naux, nin_total;            /* state, episode and input components            */
    int    s0, a0;                         /* index of the first state and episode value     */
    char   aux_name[32];
    double box_lo[DG_MODEL_MAX_STATE], box_hi[DG_MODEL_MAX_STATE];  /* the grid's box    */
    int    ninputs;
    dg_model_input in[DG_MODEL_MAX_PLAYERS];  /* two, or with model.players up to DG_MODEL_MAX_PLAYERS */
    int    ndyn;                           /* == ns: one derivative per state, update order */
    int    dyn_var[DG_MODEL_MAX_STATE];
    dg_model_expr dyn[DG_MODEL_MAX_STATE];
    int    ndiff;                          /* model.diffusion: states with a noise (0: none), each  */
    int    diff_var[DG_MODEL_MAX_STATE];   /* x_i += sigma_i(values before the step) sqrt(dt) z_i,    */
    dg_model_expr diff[DG_MODEL_MAX_STATE];/* z_i an independent standard normal per state listed  */
    int    nobs[DG_MODEL_MAX_PLAYERS];     /* [0] observe, [1] observe2; with model.players, [q] player
                                              q's own observe (when it gives one)                   */
    dg_model_expr obs[DG_MODEL_MAX_PLAYERS][DG_MODEL_MAX_OBS];
    /* General-sum (model.players, docs/models.md): the learned players in the map's order, each with
     * its input and the weight of each cost term in its own cost; 0 players: not general-sum. */
    int    nplayers;
    char   player_name[DG_MODEL_MAX_PLAYERS][32];
    int    player_input[DG_MODEL_MAX_PLAYERS];     /* index into in[]                          */
    int    player_obs[DG_MODEL_MAX_PLAYERS];       /* which obs[] it sees: its own q, or 0     */
    double player_weight[DG_MODEL_MAX_PLAYERS][DG_MODEL_MAX_TERMS];  /* cost k's weight in its cost */
    int    ncost;                          /* loss terms: the running ones, then the terminal */
    int    nrun;                           /* costs[0 .. nrun): running, per step; the rest:  */
    char   cost_key[DG_MODEL_MAX_TERMS][48];   /* "loss.goal"   costs.terminal, at the end   */
    dg_model_expr cost[DG_MODEL_MAX_TERMS];
    int    nmetric;
    char   metric_name[4][32];
    dg_model_expr metric[4];
    int    nreset;
    dg_model_reset reset[DG_MODEL_MAX_RESET];
    int    nbodies;
    dg_model_expr body[4][2];
    char   body_names[4 * 24 + 8];         /* draw.bodies as a map: "agent" or "pursuer,evader" (then ",goal"
                                              with a goal), what `difgames play --as` names; "": unnamed */
    int    has_goal;
    dg_model_expr goal[2];
    int    ncircles;
    float  circle[16][3];
    int    periodic[DG_MODEL_MAX_STATE];   /* the grid wraps this state's axis           */
    int    has_target, has_avoid;          /* the grid solver's sets, signed distances of the state */
    dg_model_expr target, avoid;
    int    t_var;                          /* the name t (DG_MV_TIME) the sets may read, or -1     */
    int    target_moves, avoid_moves;      /* the set's expression reads t                         */
    double aux_grid[DG_MODEL_MAX_STATE];   /* the episode variables' values on the grid (episode.grid) */
    int    has_aux_grid;                   /* episode.grid was given                        */
    int    grid_horizon;                   /* the grid solver's: env.horizon, for payoff: cost  */
    int    grid_cost;                      /* payoff: cost: the costs weighted by grid_w        */
    double grid_w[DG_MODEL_MAX_TERMS];     /* loss.<name> / (H dt) running, loss.<name> terminal */
    void  *lib;                            /* the compiled expressions (dg_model_compile)  */
    int    ncompiled;                      /* functions of it in use                      */
    int    interpreted;                    /* expressions left to libmatheval (not thread-safe) */
    pthread_mutex_t lock;                  /* libmatheval writes into its trees as it evaluates */
} dg_model;

/* model.name and model.compile: the section's keys of one value (the rest is docs/models.md's format) */
#define DG_MODEL_NKEYS 2
extern const dg_key dg_model_key_table[DG_MODEL_NKEYS];
/* Reads cfg's `model:` section (dt: the time step, a name expressions may read). Returns a new
 * model or NULL with e naming file, line and key. */
dg_model *dg_model_load(dg_cfg *cfg, double dt, dg_err *e);
void      dg_model_free(dg_model *m);
/* A model file holds the sections of both solvers: the one reading it (grid: 1 for the grid solver)
 * marks the other's top-level sections as known (dg_cfg_check_unused), unread. */
void      dg_model_mark_other(dg_cfg *cfg, int grid);
/* Compiles m's expressions and derivatives into a cached shared object and loads it (src/model/
 * compile.c); returns how many are compiled (0: none, the model stays interpreted). */
int    dg_model_compile(dg_model *m);
/* Around evaluations: serialises libmatheval's (it writes into its trees); nothing when every
 * expression is compiled. */
void   dg_model_lock(const dg_model *m);
void   dg_model_unlock(const dg_model *m);
/* Value of x at the model's values v (all names, nnames). Call with m->lock held. */
double dg_model_eval(const dg_model_expr *x, const double *v);
/* Partial derivative of x with respect to the k-th name it reads (0 for constants). */
double dg_model_eval_d(const dg_model_expr *x, int k, const double *v);
/* Draws one initial row: state (ns) and aux (naux) into v; 0 when a group's rejection failed. */
int    dg_model_draw(const dg_model *m, dg_rng *rng, double *v);
/* v's constant part (constants, dt) filled from the model; states, aux and inputs set to 0. */
void   dg_model_values(const dg_model *m, double *v);

#endif
