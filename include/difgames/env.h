/* difgames envs: one interface for every game, and a registry of games.
 *
 * An episode is a batch of B parallel games. Its state is a (B, state_dim)
 * tensor that the game's step advances; aux (B, aux_dim) holds what is fixed
 * for the episode (reach: the goal). The trainer rolls a policy out:
 *
 *     obs    = observe(state, aux)                 (B, obs_dim)
 *     action = policy(obs)                         (B, act_dim), in [-1, 1]
 *     state  = step(state, aux, action)            motion only
 *     cost  += step_cost(state, aux, action)       evaluation only, on the new state
 *
 * step_cost fills one raw term per loss term (each (1): a batch mean, as
 * sum_b(...) * inv_batch so that batch shards add up), and losses/ weighs
 * them. All of it is tape ops: gradients flow through the whole episode.
 * A game declares its keys (read into its impl, which the registry allocates
 * and frees) and its loss terms; the registry reads env.dt, env.horizon and
 * loss.* for every game, then calls create, which checks and sets the dims.
 * Adding a game: one file in src/envs/, a line in registry.c, a config, a test.
 */
#ifndef DIFGAMES_ENV_H
#define DIFGAMES_ENV_H

#include "difgames/api.h"
#include "difgames/config.h"
#include "difgames/core.h"
#include "difgames/keys.h"
#include "difgames/losses.h"  /* DG_LOSS_MAX_TERMS */
#include "difgames/policy.h"  /* dg_policy, dg_policy_shape: the players' policies for a game */

#ifdef __cplusplus
extern "C" {
#endif

#define DG_MAX_METRICS 4
#define DG_MAX_HORIZON 10000000   /* most steps of an episode (env.horizon): "no practical limit" */
#define DG_MAX_MAGNITUDE 1e6f     /* largest speed, acceleration or length a game's keys take   */
#define DG_RESET_MAX_TRIES 1000000 /* draws of a rejection sampler in reset() before it fails   */
#define DG_MAX_SHAPES 16
#define DG_MAX_BODIES 8     /* bodies a game's bodies hook may return */

typedef struct dg_env dg_env;

/* Something to draw in a replay frame (world coordinates, [-1, 1]²). */
typedef enum dg_shape_kind { DG_SHAPE_CIRCLE, DG_SHAPE_BOX } dg_shape_kind;
typedef struct dg_shape {
    dg_shape_kind kind;
    dg_real x, y, a, b;       /* circle: centre, radius (a); box: centre, half sizes (a, b) */
} dg_shape;

/* A loss term: its weight is the key loss.<name>, a float >= 0. */
typedef struct dg_loss_term {
    const char *key;        /* "loss.goal"; the term's name is what follows "loss."          */
    dg_real weight;           /* default weight                                                */
    const char *like;       /* or NULL: the default is the weight read for this earlier term */
    int evader;             /* 1: the evader's own cost, entering J with a minus (zero-sum)  */
    const char *doc;        /* one line: what the term measures                              */
} dg_loss_term;

/* The layout of dg_game and dg_env a plugin is built against: a game loaded from a shared object
 * (dg_game_plugin_open) must say .abi = DG_GAME_ABI. Raised whenever either struct changes. */
#define DG_GAME_ABI (5u + (DG_REAL_F64 ? DG_GAME_ABI_F64 : 0u))
#define DG_GAME_ABI_F64 0x10000u  /* added for the double tape: a plugin of train.precision: f64 is compiled
                                     with -DDG_F64 (its dg_real double, its calls the double copy's) */
/* The symbol a plugin exports: its descriptor, `const dg_game difgames_game = {.abi = DG_GAME_ABI, ...}`. */
#define DG_GAME_SYMBOL "difgames_game"

typedef struct dg_game {
    unsigned abi;           /* DG_GAME_ABI in a plugin (first, so any plugin's can be read); 0 built in */
    const char *name;       /* registry key and config `game:` value     */
    const char *summary;    /* one line for `difgames games`             */
    /* What the game reads, declared once (`difgames keys NAME` lists it): */
    float dt;                /* default of env.dt, in (0, 10]                       */
    int   horizon;          /* default of env.horizon, in [1, 10000000]            */
    const dg_key *keys;     /* the game's own keys, read into impl before create   */
    int   nkeys;
    size_t impl_size;       /* bytes of impl the registry allocates (zeroed) and frees;
                               0: create may allocate impl itself and destroy free it */
    const dg_loss_term *loss;  /* its loss terms, in step_cost's order            */
    int   nloss;
    /* Checks the keys read into env->impl (env->dt, env->horizon set), fills
     * env's dims and constants; may set env->nterms below nloss to use only the
     * first terms (0: all). The weights are read after it. */
    dg_status (*create)(dg_env *env, dg_cfg *cfg, dg_err *e);
    void (*destroy)(dg_env *env);           /* frees what create allocated; may be NULL */
    /* Draws B initial states (B, state_dim) and episode constants (B, aux_dim). */
    /* Draws B initial states (B, state_dim) and aux rows; DG_OK, or an error in e (a bounded
     * rejection sampler that found no state). */
    dg_status (*reset)(const dg_env *env, dg_rng *rng, int B, dg_real *state, dg_real *aux, dg_err *e);
    dg_tensor *(*observe)(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux);
    /* Two-player games (NULL in others): the second player's (evader's) observation, (B, obs2_dim);
     * step and step_cost then get the actions of both, [a, b] (B, act_dim + act2_dim). */
    dg_tensor *(*observe2)(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux);
    dg_tensor *(*step)(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux,
                       dg_tensor *action);
    /* Raw (unweighted) cost terms of one step into terms[0..nterms), each (1). */
    void (*step_cost)(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux,
                      dg_tensor *action, dg_real inv_batch, dg_tensor **terms);
    /* Episode metrics from a trajectory traj (H+1, B, state_dim); may be NULL
     * when the game declares none (nmetrics 0). */
    void (*metrics)(const dg_env *env, const dg_real *traj, const dg_real *aux, int B, int H,
                    double *values);
    /* Optional: fills the derived part of aux rows from the first aux_user_dim
     * columns a user gave (pixel: renders the target image at the goal). */
    void (*complete_aux)(const dg_env *env, int B, dg_real *aux);
    /* Optional (replay needs it): bodies of one batch row to draw: positions
     * of the moving bodies (agent first) and the fixed goal, if any; returns
     * their number, at most DG_MAX_BODIES. */
    int (*bodies)(const dg_env *env, const dg_real *state_row, const dg_real *aux_row,
                  dg_real *xy /* (n, 2) */, int *is_goal /* (n) */);
    /* Optional: which bodies of a batch row break the game's rule in this state
     * (reach: the agent inside an obstacle; chase: a body outside the arena), as
     * a bit mask in the order of bodies() (bit k: body k); 0 when none does.
     * Replays draw a body red from the first step it broke the rule. */
    unsigned (*violation)(const dg_env *env, const dg_real *state_row, const dg_real *aux_row);
    /* Optional: the capture time from this state when both players play the equilibrium, where
     * it is known exactly (duel_simple: (d - r) / (v_p - v_e)); what `difgames play` shows as the
     * score to beat. */
    double (*equilibrium_time)(const dg_env *env, const dg_real *state_row, const dg_real *aux_row);
    /* Optional: the names of the bodies hook's bodies, comma-separated ("agent,goal"), for the
     * columns of a trajectory (`difgames play --trajectory`); NULL: body0, body1, ... */
    const char *body_names;
    /* Optional: terminal costs of the episode's final state (after step H), raw terms like
     * step_cost's (a batch mean each): terms[k] for a term that has one, left NULL for the others.
     * dg_env_add_terminal adds H times each to step H's terms (the loss is the mean over the H
     * steps), so it counts once in the episode loss. A term may have a running and a terminal part. */
    void (*terminal_cost)(dg_ctx *ctx, const dg_env *env, dg_tensor *final, dg_tensor *aux,
                          dg_real inv_batch, dg_tensor **terms);
    /* Optional (the value of the learner's game by dynamic programming, certify_dp.h, needs them):
     * the same raw terms per row, before the batch mean. rows[k] (B, m_k), m_k >= 1, for term k:
     * row b of the batch costs the sum of row b of rows[k]; rows[k] left NULL: the term is 0 (a
     * terminal part: the term has none). Declared once: a game that has them sets step_cost to
     * dg_env_step_cost_from_rows and terminal_cost to dg_env_terminal_cost_from_rows, which take
     * the batch mean sum(rows[k]) inv_batch of each (a game whose mean is a fused op of its own,
     * the model game and reach, or scaled otherwise, pixel's image term, evaluates both from one
     * per-row function). */
    void (*step_cost_rows)(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux, dg_tensor *action,
                           dg_tensor **rows);
    void (*terminal_cost_rows)(dg_ctx *ctx, const dg_env *env, dg_tensor *final, dg_tensor *aux,
                               dg_tensor **rows);
    /* General-sum games of more than two players (NULL in others): learned player p >= 2's
     * observation, (B, env->player_obs[p]); step and step_cost then get every player's action side
     * by side, [a_0, a_1, a_2, ...] (B, the sum of their act dims). DG_GAME_ABI 5 and later. */
    dg_tensor *(*observe_player)(dg_ctx *ctx, const dg_env *env, int p, dg_tensor *state, dg_tensor *aux);
    /* Optional (a noisy game: its create set dg_env.noise_dim > 0): the step of the stochastic
     * dynamics dx = f dt + sigma(x, u) dW, given z (B, noise_dim), this step's independent standard
     * normal draws (constants: the gradient flows through sigma(x, u) and the state, not into z, the
     * reparameterisation; dW = sqrt(dt) z). step is the same step with z = 0. */
    dg_tensor *(*step_noise)(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux,
                             dg_tensor *action, dg_tensor *z);
} dg_game;

#define DG_VALUE_MAX_DIMS 8  /* axes of a reduced value state (dg_env.value_dim) */

struct dg_env {
    const dg_game *game;
    int   state_dim, aux_dim, obs_dim, act_dim;
    int   nplayers;                             /* 1, or 2: a learned evader too (0: 1); a
                                                   general-sum game up to DG_MAX_PLAYERS */
    int   obs2_dim, act2_dim;                   /* the evader's, when nplayers is 2  */
    int   player_obs[DG_MAX_PLAYERS];           /* every learned player's observation and action
                                                   sizes: create sets those of players p >= 2, the
                                                   registry copies 0 and 1 from obs_dim, act_dim,
                                                   obs2_dim, act2_dim */
    int   player_act[DG_MAX_PLAYERS];
    const char *player_names[DG_MAX_PLAYERS];   /* general-sum: each player's name for outputs
                                                   (metrics.csv's cost_<name>); NULL: player<p> */
    int   horizon;                              /* H: steps per episode              */
    float dt;                                     /* seconds per step                  */
    const char *aux_name;                       /* aux tensor name for --init ("goal") */
    int   aux_user_dim;                         /* columns of it a user gives (<= aux_dim) */
    int   nterms;
    const char *term_names[DG_LOSS_MAX_TERMS];       /* "goal", "collision", "energy"     */
    dg_real term_weights[DG_LOSS_MAX_TERMS];
    /* General-sum games (the game's create sets them; 0: zero-sum, or one player): each learned player
     * p < nplayers has its own episode cost, sum over k of player_share[p][k] * term_weights[k] *
     * term_k, and descends it. A zero-sum pair is the special case share {+1...}, {-1...}. */
    int   general_sum;
    dg_real player_share[DG_MAX_PLAYERS][DG_LOSS_MAX_TERMS];
    int   nmetrics;
    const char *metric_names[DG_MAX_METRICS];   /* "capture_rate", ...               */
    /* why a metric is NaN when it is undefined by construction ("no episode was captured": a mean
     * over none); NULL: a NaN there means the episode itself went non-finite */
    const char *metric_undefined[DG_MAX_METRICS];
    const char *size_key;                       /* config key of a per-row image size
                                                   (pixel: "render.size"), or NULL     */
    int   nshapes;
    dg_shape shapes[DG_MAX_SHAPES];             /* static obstacles, for replays     */
    const char *violation_label;                /* what game->violation flags, for replays */
    dg_real gradcheck_eps;                        /* finite-difference step its features are smooth
                                                   at (gradcheck's default; 0: 0.1)              */
    int   nlines;                               /* static line segments drawn in replays */
    const float *lines;                           /* (nlines, 4) [x0, y0, x1, y1], owned by the game
                                                   (racing: the track's edges); NULL when none   */
    int   plan_steps;                           /* open loop: steps that take a planned action
                                                   (billiards: 1, the shot); 0: every step */
    void *impl;                                 /* the game's own data               */
    void *plugin;                               /* the shared object game came from (dg_env_free
                                                   closes it), or NULL                 */
    /* Optional (create sets it): a reduced value state. The game's value depends on a state s only
     * through x_k = s[value_plus[k]] - s[value_minus[k]] (value_minus[k] < 0: s[value_plus[k]]
     * alone), k < value_dim, and the state with s[value_plus[k]] = x_k and every other entry 0
     * plays (step and costs) as any state with the same x: duel_simple's x = evader - pursuer.
     * 0: the value state is the whole state. */
    int   value_dim;
    int   value_plus[DG_VALUE_MAX_DIMS], value_minus[DG_VALUE_MAX_DIMS];
    /* Optional (create sets it): the state's columns by name, comma-separated ("px,py,ex,ey"), what
     * certify's --csv heads them with (dg_env_state_name); NULL: x0, x1, ... */
    const char *state_names;
    /* Noise (create sets it; 0: deterministic dynamics): standard normal draws per row and step
     * that game->step_noise takes (dg_env_advance_noise draws them). */
    int   noise_dim;
};

/* In a dg_game initialiser: the tables KEYS and LOSS (arrays) and the impl struct type IMPL:
 *     .dt = 0.05f, .horizon = 60, DG_GAME_DECLARE(KEYS, reach, LOSS), .create = ... */
#define DG_GAME_DECLARE(KEYS, IMPL, LOSS)                                                    \
    .keys = (KEYS), .nkeys = (int)(sizeof(KEYS) / sizeof((KEYS)[0])), .impl_size = sizeof(IMPL), \
    .loss = (LOSS), .nloss = (int)(sizeof(LOSS) / sizeof((LOSS)[0]))

DG_API const dg_game *dg_game_find(const char *name);         /* NULL if not registered           */
DG_API int            dg_game_count(void);                    /* registered games                 */
DG_API const dg_game *dg_game_at(int i);                      /* i-th game, in registry order     */
/* The model game (`game: model`, docs/models.md) as listings show it (`difgames games`, `difgames keys
 * model`): its summary, the defaults of env.dt and env.horizon and its keys of one value (model.name,
 * model.compile). Not in the registry and not playable itself: dg_env_create makes each model file's game,
 * named by its model.name. */
DG_API const dg_game *dg_game_model(void);
/* Where env's game comes from, for outputs where a name could mean two games (a model file may call its
 * game "reach"): "builtin" (the registry), "model" (a model file), "plugin" (a shared object) or "custom"
 * (a descriptor of the caller's, dg_env_create_game). */
DG_API const char    *dg_env_source(const dg_env *env);

/* An input of env's game that no learned player controls (a model file's input with learned: false,
 * docs/models.md): how it was declared to be treated by both sides, the learner's and certify's. */
enum {
    DG_INPUT_UNDECLARED = 0,  /* BPTT holds it at `hold`; certify refuses the game until it is declared */
    DG_INPUT_HOLD,            /* held at `hold`, by BPTT and by certify's grid alike                      */
    DG_INPUT_ADVERSARIAL,     /* BPTT holds it at `hold`; certify lets it maximise the loss over its box */
};
#define DG_INPUT_MAX_DIM 8
typedef struct dg_env_input {
    const char *name;                     /* the input's name in the model file                   */
    int         dim;                      /* its components                                       */
    int         play;                     /* DG_INPUT_*                                           */
    double      hold[DG_INPUT_MAX_DIM];   /* the value BPTT plays                                 */
    double      lo[DG_INPUT_MAX_DIM], hi[DG_INPUT_MAX_DIM];  /* its box                       */
} dg_env_input;
/* Name of a DG_INPUT_* ("undeclared", "hold", "adversarial"); NULL past them. */
DG_API const char *dg_env_input_play_name(int play);
/* The inputs of env's game that no learned player controls, into in[0 .. max); returns their count
 * (0 for a built-in game or a plugin: their inputs are all their players'). Such an input's value
 * comes from the action's columns after the learned players' when the action tensor step and the
 * costs get has them (act_dim + act2_dim + dim columns, each in [-1, 1] mapped onto its box), else
 * from `hold`: how certify's grid lets an adversarial input play. */
DG_API int dg_env_free_inputs(const dg_env *env, dg_env_input *in, int max);
/* The episode constants (aux_dim values) a grid fixes for env's game: a model file's
 * model.episode.grid. Returns 1 with aux filled when the game declares them, else 0. */
DG_API int dg_env_episode_grid(const dg_env *env, double *aux);
/* The box a model file declares for its state (model.state: name: [lo, hi]) into lo, hi (state_dim
 * each): 1 when env's game is a model file's, else 0. */
DG_API int dg_env_state_box(const dg_env *env, double *lo, double *hi);
/* The name of env's state column k into buf (size bytes): its dg_env.state_names entry, else "x<k>". */
DG_API void dg_env_state_name(const dg_env *env, int k, char *buf, size_t size);

/* Every key of game g, in the order they are read: env.dt, env.horizon, its
 * keys, its loss.* terms (as float keys >= 0). Fills out[0..max) and returns
 * the count (which may exceed max: then call again with more room). */
DG_API int dg_game_keys(const dg_game *g, dg_key *out, int max);
/* env.dt and env.horizon, the keys every game reads (their defaults are the first game's; dg_game_keys
 * gives each game's own), then plugin (a string: the shared object dg_env_create loads); *n = 3. */
DG_API const dg_key *dg_env_keys(int *n);

/* After step t's step_cost (terms: its raw terms, t in 1..env->horizon): at t = env->horizon adds
 * H times the game's terminal_cost of state into them (an op on ctx); nothing otherwise, or when the
 * game has no terminal cost. Every program that plays whole episodes calls it. */
DG_API void dg_env_add_terminal(dg_ctx *ctx, const dg_env *env, int t, dg_tensor *state, dg_tensor *aux,
                                dg_real inv_batch, dg_tensor **terms);
/* Step t (1..env->horizon) of an episode on ctx, as every program that plays one on the tape
 * makes it: the game's step from state with action (its players' columns side by side), then
 * its step_cost on the new state with dg_env_add_terminal's terminal cost at t = H, added to loss
 * (dg_loss_begin'd with env's nterms and term_weights). Returns the state after the step, NULL on
 * error (see the context; loss then has nothing of this step). */
DG_API dg_tensor *dg_env_advance(dg_ctx *ctx, const dg_env *env, int t, dg_tensor *state, dg_tensor *aux,
                                 dg_tensor *action, dg_real inv_batch, dg_loss *loss);

/* Where the noise of an episode comes from: draw z[b, k] of step t for the batch row b of a caller
 * is a function of (key, row0 + b, t, k) alone (a counter-based draw, dg_noise_fill), so a row gets
 * the same draws whichever shard, thread or MPI rank plays it, and a recomputed step (checkpointed
 * or truncated BPTT) the same as the first time. The trainer's key changes every epoch (seed and
 * epoch); a NULL dg_noise is the stream {key 0, row0 0}: every program that plays a noisy game
 * plays it with noise, the same noise on every call. */
typedef struct dg_noise {
    uint64_t key;   /* the stream (dg_noise_key)                        */
    int64_t  row0;  /* the global batch row of the caller's first row   */
} dg_noise;
/* The key of draw number draw of seed's streams (the trainer: draw = epoch; eval: its draws). */
DG_API uint64_t dg_noise_key(uint64_t seed, uint64_t draw);
/* z (B, dim), row-major: the standard normal draws of step t for rows nz->row0 .. + B - 1. */
DG_API void dg_noise_fill(const dg_noise *nz, int t, int B, int dim, dg_real *z);
/* The game's step with the noise of step t: step_noise with z drawn from nz (dg_noise_fill) when
 * env->noise_dim > 0, else game->step. NULL on error (see the context). */
DG_API dg_tensor *dg_env_step_noise(dg_ctx *ctx, const dg_env *env, int t, dg_tensor *state, dg_tensor *aux,
                                    dg_tensor *action, const dg_noise *nz);
/* dg_env_advance with the noise of step t drawn from nz (dg_env_step_noise); dg_env_advance is it
 * with nz NULL. */
DG_API dg_tensor *dg_env_advance_noise(dg_ctx *ctx, const dg_env *env, int t, dg_tensor *state, dg_tensor *aux,
                                       dg_tensor *action, const dg_noise *nz, dg_real inv_batch, dg_loss *loss);

/* The step_cost and terminal_cost of a game that declares its costs per row (step_cost_rows,
 * terminal_cost_rows): terms[k] = sum(rows[k]) inv_batch, a (1) tensor (dg_scalar 0 for a running
 * term left NULL; a terminal term left NULL stays NULL). */
DG_API void dg_env_step_cost_from_rows(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux,
                                       dg_tensor *action, dg_real inv_batch, dg_tensor **terms);
DG_API void dg_env_terminal_cost_from_rows(dg_ctx *ctx, const dg_env *env, dg_tensor *final, dg_tensor *aux,
                                           dg_real inv_batch, dg_tensor **terms);

/* Learned player p's observation of state on ctx, (B, env->player_obs[p]): the game's observe (p 0),
 * observe2 (p 1) or observe_player (p >= 2); NULL with the context's error set for a player the game
 * does not have. */
DG_API dg_tensor *dg_env_observe(dg_ctx *ctx, const dg_env *env, int p, dg_tensor *state, dg_tensor *aux);
/* The first column of learned player p's action in the action tensor step and step_cost get (the
 * sum of the act dims of the players before it); p = env->nplayers: the learned players' width. */
DG_API int dg_env_action_col(const dg_env *env, int p);
/* Learned player p's name into buf (size bytes): env->player_names[p], else "player<p>". */
DG_API const char *dg_env_player_name(const dg_env *env, int p, char *buf, size_t size);
/* Learned player p's episode cost from the weighted terms of an episode (weighted[k] =
 * term_weights[k] * term_k, what dg_loss_finish reports): sum_k player_share[p][k] weighted[k] in a
 * general-sum game; in another, the loss for player 0 and its negative for a zero-sum evader. */
DG_API double dg_env_player_cost(const dg_env *env, int p, const dg_real *weighted);

/* Creates the game named by cfg's `game:` key (reads its env./loss. keys).
 * Returns a new env (free with dg_env_free) or NULL with e set. */
DG_API dg_env *dg_env_create(dg_cfg *cfg, dg_err *e);
/* Creates an env for a game of your own (not in the registry), e.g. one an
 * application defines; cfg's `game:` key, if present, is not checked. */
DG_API dg_env *dg_env_create_game(const dg_game *g, dg_cfg *cfg, dg_err *e);
DG_API void    dg_env_free(dg_env *env);                      /* NULL is harmless                 */

/* The players' policies for env: what the policy layer needs of a game (its players, observation
 * and action sizes, horizon, plan steps), and dg_policy_create_shape / dg_policy_create_plan_shape
 * of it (policy.h says what they make). */
DG_API dg_policy_shape dg_env_policy_shape(const dg_env *env);
DG_API dg_status dg_policy_create(const dg_env *env, const int *hidden, int nhidden, dg_policy *pol,
                                  dg_params **p, dg_err *e);
DG_API dg_status dg_policy_create_plan(const dg_env *env, dg_policy *pol, dg_params **p, dg_err *e);

/* A game from a shared object: a plugin is code, and runs with the caller's rights. path must name
 * the file with a '/' (an absolute path, or ./game.so: never a bare name that dlopen would search
 * for); it must export DG_GAME_SYMBOL, a dg_game with .abi = DG_GAME_ABI. On success *g is its
 * descriptor and *handle the open object (close it with dg_game_plugin_close once no env uses the
 * game). DG_ERR_ARG for a bare name, DG_ERR_IO when it cannot be opened (no such file, not a shared
 * object, an undefined symbol: dlerror's words), DG_ERR_FORMAT for a missing symbol or another ABI.
 * dg_env_create does this for a config's `plugin:` key (the env then closes it). */
DG_API dg_status dg_game_plugin_open(const char *path, const dg_game **g, void **handle, dg_err *e);
DG_API void      dg_game_plugin_close(void *handle);          /* NULL is harmless                 */

#ifdef __cplusplus
}
#endif
#endif
