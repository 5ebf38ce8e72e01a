/* difgames solver: training a policy by backpropagation through time.
 *
 * Each epoch: draw a fresh batch of initial states, roll the policy out for
 * the whole horizon on the tape, one backward, global-norm clipping, Adam
 * (with optional linear warmup). The batch is split into one shard per
 * thread, each on its own arena; shard gradients are summed in a fixed
 * order, so a seed and a thread count give bit-identical results.
 *
 * A non-finite loss or gradient is never applied (the NaN guard): the last
 * good parameters and optimiser state come back, the learning rate halves,
 * and training goes on. The library reports through a callback; it prints
 * nothing.
 */
#ifndef DIFGAMES_TRAINER_H
#define DIFGAMES_TRAINER_H

#include <signal.h>  /* sig_atomic_t */

#include "difgames/api.h"
#include "difgames/config.h"
#include "difgames/core.h"
#include "difgames/env.h"
#include "difgames/policy.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_MAX_SNAPSHOTS 64
#define DG_MAX_EPOCHS 100000000   /* most epochs or iterations of a run: "no practical limit" */

typedef enum dg_game_solver {
    DG_GAME_SOLVER_GDA,           /* simultaneous gradient descent-ascent */
    DG_GAME_SOLVER_OPTIMISTIC,    /* optimistic GDA: steps on 2 g_t - g_{t-1} */
    DG_GAME_SOLVER_EXTRAGRADIENT, /* extra-Adam: a look-ahead step, then the real one */
} dg_game_solver;

typedef struct dg_train_opts {
    uint64_t seed;
    int    batch, epochs;
    double lr, beta1, beta2, eps, clip;   /* clip <= 0: no clipping              */
    int    warmup;                        /* epochs of linear LR warmup (0: none) */
    int    snapshots[DG_MAX_SNAPSHOTS];   /* epochs to snapshot (the last always) */
    int    nsnapshots;
    int    threads;                       /* batch shards run in parallel; train.threads: 0
                                             reads as OpenMP's default, one per core (or
                                             OMP_NUM_THREADS), as solver.threads of hji */
    int    hidden[DG_MLP_MAX_LAYERS];     /* policy hidden sizes                  */
    int    nhidden;
    int    nan_epoch;                     /* fault injection: loss NaN at this epoch (0: off) */
    int    nan_patience;                  /* guard firings in a row before DG_ERR_NONFINITE (>= 1) */
    int    fixed_batch;                   /* 1: every epoch the same initial batch (overfit test) */
    dg_game_solver game_solver;           /* two-player games (train.game_solver)  */
    int    exploit_every;                 /* measure exploitability every N epochs (0: never) */
    int    exploit_epochs;                /* best-response training budget for it  */
    int    resume_every;                  /* write resume.safetensors every N epochs (0: only
                                             at snapshots and the end)                  */
    int    checkpoint_every;              /* checkpointed BPTT every k steps; 0: auto (full
                                             tape unless it would pass 512 MiB, then every
                                             ceil(sqrt(H)) steps); -1: always the full tape */
    int    open_loop;                     /* train.mode: open_loop: the players are action
                                             sequences (dg_policy_create_plan) of one fixed
                                             initial batch (fixed_batch); 0: MLP policies      */
    int    truncate;                      /* truncated BPTT: windows of K steps, the state
                                             entering each a constant (dg_episode_grad);
                                             0 (or >= H): the whole episode                 */
    int    precision;                     /* train.precision: 0 f32, 1 f64 (the double tape: a
                                             program compiled with DG_F64, difgames/real.h;
                                             the float tape's dg_trainer_create refuses 1) */
} dg_train_opts;

/* Reads seed, train.* and policy.* from cfg (the keys and defaults of dg_train_keys in keys.h;
 * `difgames keys` lists them). */
DG_API dg_status dg_train_opts_read(dg_cfg *cfg, dg_train_opts *o, dg_err *e);
/* Fills o with the defaults of every option, as an empty config gives them (no YAML needed). */
DG_API void      dg_train_opts_default(dg_train_opts *o);
/* The keys dg_train_opts_read reads, as a table (`difgames keys` lists it); *n gets their number. */
DG_API const dg_key *dg_train_keys(int *n);

/* What a job will allocate, in bytes, by kind: to refuse sizes that cannot fit
 * (dg_mem_check) before allocating them. */
typedef struct dg_mem_parts {
    double params;   /* parameters, gradients, Adam moments, their saved copies, shard gradients */
    double tape;     /* the arenas: every shard's tape (the whole episode, or one segment)      */
    double data;     /* batches, episode constants (pixel: target images), trajectories         */
    double log;      /* the metrics rows of every epoch (metrics.csv, resume files)              */
    double total;    /* the sum                                                                  */
} dg_mem_parts;
/* A trainer for env with o (full or checkpointed BPTT as o and the budget decide); parts may be
 * NULL. Returns the total. */
DG_API double      dg_train_memory(const dg_env *env, const dg_train_opts *o, dg_mem_parts *parts);
/* The tape of steps steps of a B-row episode of env's policies (hidden sizes), with the
 * gradients of a backward when backward is 1 (eval, gradcheck, one arena of the trainer). */
DG_API double      dg_rollout_memory(const dg_env *env, const int *hidden, int nhidden, double B, double steps,
                                     int backward);
/* Bytes a run writes into its folder (snapshots, final and resume files, metrics.csv, loss.png):
 * to refuse a run the disk cannot hold before it starts. */
DG_API double      dg_train_output_bytes(const dg_env *env, const dg_train_opts *o);
/* The config key to lower when m does not fit: "train.epochs" when the metrics rows dominate,
 * "policy.hidden" when the parameters do,
 * the game's image size key (env->size_key) when its episode constants do, else "train.batch". */
DG_API const char *dg_train_memory_key(const dg_env *env, const dg_mem_parts *m);

/* One episode of B rows on ctx from state0 (B, state_dim) and aux (B, aux_dim):
 * returns the loss (1), Σ_t Σ_i w_i term_i,t / H with batch means taken as
 * sums · inv_batch. terms (if not NULL) gets each weighted term; traj (if not
 * NULL) the states, step t's B rows at traj + t·traj_ld·state_dim (traj_ld >= B:
 * rows per step, so shards of a batch can fill one trajectory). NULL on error
 * (see the context). */
DG_API dg_tensor *dg_rollout(dg_ctx *ctx, const dg_env *env, const dg_policy *pol, dg_params *p,
                             const dg_real *state0, const dg_real *aux, int B, dg_real inv_batch,
                             dg_real *terms, dg_real *traj, int traj_ld);
/* Loss and gradient of one episode: adds d loss / d parameter into p's
 * gradient block and sets *loss. every <= 0 (or >= H): one tape for the whole
 * episode. every = k: checkpointed BPTT: the forward keeps only the state
 * every k steps (in saved), the backward recomputes one segment at a time, so
 * the arena holds k steps, not H; loss and gradients are the same to the bit
 * as with the full tape.
 * truncate = K in [1, H): truncated BPTT. The episode is cut into windows of K
 * steps (1..K, K+1..2K, ...; the last may be shorter); each is rolled out from
 * the state the previous one ended in, which is a constant for its backward.
 * So the gradient is that of Σ_windows L_w(θ, x_{start of w} held fixed): a
 * step's cost reaches the parameters through the actions and states of its own
 * window only (at most K steps back), and the arena holds one window. The loss
 * and trajectory are those of the whole episode, to the bit. truncate <= 0 or
 * >= H: the full gradient (the same bits as without it).
 * saved: dg_episode_saved(H, every, truncate) blocks of B · state_dim floats
 * (NULL when that is 0). ctx is reset. */
DG_API dg_status  dg_episode_grad(dg_ctx *ctx, const dg_env *env, const dg_policy *pol, dg_params *p,
                                  const dg_real *state0, const dg_real *aux, int B, dg_real inv_batch,
                                  int every, int truncate, dg_real *saved, double *loss, dg_real *terms,
                                  dg_real *traj, int traj_ld);
/* dg_rollout and dg_episode_grad of a noisy game (dg_env.noise_dim > 0) with its draws from nz
 * (env.h's dg_noise: per global batch row and step; the rows here are nz->row0 ...); the plain
 * ones are these with nz NULL. The trainer's shards play the key of the epoch (dg_noise_key(seed,
 * epoch); train.fixed_batch: that of epoch 1) at their first row. */
DG_API dg_tensor *dg_rollout_noise(dg_ctx *ctx, const dg_env *env, const dg_policy *pol, dg_params *p,
                                   const dg_real *state0, const dg_real *aux, int B, dg_real inv_batch,
                                   dg_real *terms, dg_real *traj, int traj_ld, const dg_noise *nz);
DG_API dg_status  dg_episode_grad_noise(dg_ctx *ctx, const dg_env *env, const dg_policy *pol, dg_params *p,
                                        const dg_real *state0, const dg_real *aux, int B, dg_real inv_batch,
                                        int every, int truncate, dg_real *saved, double *loss, dg_real *terms,
                                        dg_real *traj, int traj_ld, const dg_noise *nz);
/* The blocks of (B, state_dim) floats dg_episode_grad's saved needs for a horizon H. */
DG_API int        dg_episode_saved(int H, int every, int truncate);

/* A Lyapunov-style diagnostic of an episode: the norm of d loss / d state_t,
 * the total derivative through every later step, at 1, 2, 5, 10, 20, 50, ...
 * steps back from the end and at t = 0. When it grows by orders of magnitude
 * going back, the dynamics amplify perturbations (chaos, stiff contacts) and
 * the full gradient is dominated by the earliest steps: train.truncate helps. */
#define DG_STATE_GRADS_MAX   16
#define DG_STATE_GRADS_CHAOS 1e3          /* growth above which the gradient is called exploding */
typedef struct dg_state_grads {
    int    n;                             /* times measured (0: not measured)                  */
    int    t[DG_STATE_GRADS_MAX];         /* the steps, latest first: H-1, H-2, H-5, ..., 0    */
    double norm[DG_STATE_GRADS_MAX];      /* |d loss / d state_t|, over the whole (B, S) block */
    int    ref;                           /* the first time with a non-zero norm (-1: none)    */
    double growth;                        /* the largest norm[i] / norm[ref] (0: none larger)  */
    int    growth_t;                      /* the step it is reached at                         */
    int    chaotic;                       /* growth > DG_STATE_GRADS_CHAOS                      */
    int    window;                        /* the most steps back (of those measured) the norm
                                             stays within 10x of norm[ref]: a train.truncate to try */
    int    rows;                          /* batch rows measured (the trainer: the first 16)   */
} dg_state_grads;
/* Measures r on the episode of B rows from state0/aux (the loss's batch mean over these rows), on
 * ctx (reset; it must hold the whole episode's tape: dg_rollout_memory); the parameter gradient is
 * added into p's gradient block (pass a view with a scratch block to keep yours). */
DG_API dg_status  dg_episode_state_grads(dg_ctx *ctx, const dg_env *env, const dg_policy *pol, dg_params *p,
                                         const dg_real *state0, const dg_real *aux, int B, dg_state_grads *r);

typedef struct dg_epoch_stats {
    int    epoch;                         /* 1-based                             */
    double loss;
    dg_real  terms[DG_LOSS_MAX_TERMS];           /* weighted, they add up to the loss    */
    double grad_norm;                     /* before clipping                      */
    double lr;                            /* the rate this epoch's step used      */
    double ms;                            /* wall time of the epoch               */
    double flops;                         /* FLOPs of its forward and backward    */
    double metrics[DG_MAX_METRICS];       /* the game's episode metrics           */
    double exploit[DG_MAX_PLAYERS];       /* zero-sum two players: exploitability of the pursuer
                                             and of the evader; general-sum: each player's NashConv
                                             term (dg_nash_conv); NaN when not measured      */
    double cost[DG_MAX_PLAYERS];          /* general-sum: each learned player's episode cost
                                             (dg_env_player_cost of terms); NaN otherwise   */
} dg_epoch_stats;

typedef enum dg_train_event_kind {
    DG_TRAIN_EV_INIT,      /* loss terms at initialisation (stats of epoch 1, before its step) */
    DG_TRAIN_EV_ZERO_GRAD, /* a parameter's gradient is exactly zero on the first batch (param) */
    DG_TRAIN_EV_EPOCH,     /* an epoch finished (stats) */
    DG_TRAIN_EV_NAN,       /* non-finite loss/gradient: rolled back, lr halved (stats, lr; param: what
                              went non-finite, "the loss term 'goal' is nan") */
    DG_TRAIN_EV_SNAPSHOT,  /* a file was written (path) */
    DG_TRAIN_EV_START,     /* dg_run_train: the trainer is ready (restored), the first epoch is next */
} dg_train_event_kind;

typedef struct dg_train_event {
    dg_train_event_kind   kind;
    const dg_epoch_stats *stats;
    const char           *param;         /* DG_TRAIN_EV_ZERO_GRAD: its name; DG_TRAIN_EV_NAN: what */
    const dg_state_grads *state_grads;   /* DG_TRAIN_EV_INIT: the state-gradient diagnostic of the
                                            first batch (n = 0: not measured)                    */
    const char           *path;          /* DG_TRAIN_EV_SNAPSHOT  */
    double                lr;            /* DG_TRAIN_EV_NAN: the new rate */
} dg_train_event;

typedef void (*dg_train_cb)(const dg_train_event *ev, void *user);

typedef struct dg_trainer dg_trainer;

/* A trainer for env with options o, writing into out_dir (made if missing;
 * NULL: write nothing). config_yaml (may be NULL) is stored in snapshots. */
DG_API dg_trainer *dg_trainer_create(const dg_env *env, const dg_train_opts *o, const char *out_dir,
                                     const char *config_yaml, dg_err *e);
DG_API void        dg_trainer_free(dg_trainer *t);                       /* NULL is harmless      */
/* Trains up to epoch o->epochs (from the restored epoch, if any); cb (may be
 * NULL) hears every event. Writes metrics.csv, snapshots, resume.safetensors,
 * final.safetensors and loss.png into out_dir.
 * *stop (may be NULL) is polled between epochs: set it to stop early
 * (a final snapshot is still written; returns DG_ERR_INTERRUPTED). */
DG_API dg_status   dg_trainer_run(dg_trainer *t, dg_train_cb cb, void *user, volatile sig_atomic_t *stop,
                               dg_err *e);
/* Restores a run from a resume.safetensors file (written into out_dir at
 * snapshot epochs, every resume_every epochs and at the end): parameters, Adam
 * moments and step, the NaN guard's state, the RNG, the batch, the metrics so
 * far. The run then goes on as if never stopped: same bits as an uninterrupted
 * run with the same seed and thread count. t is unchanged on error. */
DG_API dg_status   dg_trainer_restore(dg_trainer *t, const char *path, dg_err *e);
DG_API int         dg_trainer_epoch(const dg_trainer *t);                /* epochs done so far      */
DG_API dg_params  *dg_trainer_params(dg_trainer *t);                     /* the policy's parameters */
DG_API const dg_policy *dg_trainer_policy(const dg_trainer *t);
/* Every later rollout of t (its epochs, their snapshots and replays) steps with filter(ctx, user, t,
 * state, action) of the players' action (dg_policy.filter; a safety filter: dg_safety_attach's); NULL
 * removes it. user must outlive the training. */
DG_API void        dg_trainer_set_filter(dg_trainer *t, dg_tensor *(*filter)(dg_ctx *, void *, int, dg_tensor *,
                                                                               dg_tensor *), void *user);
/* The loss's weight on the filter's interventions (dg_policy.filter_penalty: w |filtered - action|^2
 * per row and step, a term after the game's). DG_OK, or DG_ERR_ARG when w is not finite and >= 0 or
 * the game's terms leave no room for it (DG_LOSS_MAX_TERMS). */
DG_API dg_status   dg_trainer_set_filter_penalty(dg_trainer *t, double w, dg_err *e);
DG_API const dg_epoch_stats *dg_trainer_last(const dg_trainer *t);       /* the last finished epoch */
DG_API size_t      dg_trainer_arena_peak(const dg_trainer *t);           /* most arena bytes of a shard */
DG_API int         dg_trainer_checkpoint_every(const dg_trainer *t);     /* segment length in use (0: full tape) */
DG_API int         dg_trainer_truncate(const dg_trainer *t);             /* truncation window in use (0: none) */

/* ------------------------------------------------------- best responses */
/* One episode of B rows of p from state and aux: *j its J; backward 1: p's gradient then holds
 * d J / d parameter (over every parameter, each player's block as J has it). */
typedef dg_status (*dg_episode_fn)(void *user, dg_params *p, const dg_real *state, const dg_real *aux, int B,
                                   int backward, double *j, dg_err *e);

/* The best-response half of exploitability (the trainer's exploit_every metric and dg_run_exploit):
 * for each learned player in turn (the evader first), a copy of p whose other player is frozen is
 * trained for epochs epochs (a fresh Adam at o's rate, betas and epsilon, o's clipping; the evader
 * ascends J; a batch of o->batch initial states an epoch drawn from rng; an episode whose J or
 * gradient is not finite is skipped), then played by fn on the B rows of state and aux:
 * j_best[0] is J with the evader's best response, j_best[1] with the pursuer's. ev0: where the
 * evader's parameters start in p. p is not changed. */
DG_API dg_status dg_best_responses(const dg_env *env, const dg_params *p, size_t ev0, const dg_train_opts *o, int epochs,
                                   dg_rng *rng, dg_episode_fn fn, void *user, const dg_real *state, const dg_real *aux, int B,
                                   double j_best[2], dg_err *e);

/* One general-sum episode of B rows of p from state and aux: costs[i] each learned player's episode
 * cost (dg_env_player_cost); backward 1: p's gradient then holds in each player's block the
 * gradient of that player's own cost (dg_episode_grad's, general-sum). */
typedef dg_status (*dg_episode_costs_fn)(void *user, dg_params *p, const dg_real *state, const dg_real *aux, int B,
                                         int backward, double *costs, dg_err *e);

/* NashConv's terms of a general-sum game (OpenSpiel's NashConv, a lower bound each): for each learned
 * player i in turn, a copy of p whose other players are frozen is trained by BPTT on the B rows of
 * state and aux for epochs epochs from p (a fresh Adam at o's rate, betas and epsilon, o's clipping),
 * descending player i's own cost; the best response is the iterate of least cost, the start
 * included (an iterate whose cost or gradient is not finite is skipped), so gain[i] = cost[i] - that
 * least cost is >= 0 by construction, 0 when no iterate improved. cost (may be NULL) gets each
 * player's cost at p. npl: the learned players; first[i]: where player i's parameters start in p
 * (they end where the next player's start, the last at p->total). p is not changed. */
DG_API dg_status dg_nash_conv(const dg_params *p, int npl, const size_t *first, const dg_train_opts *o, int epochs,
                              dg_episode_costs_fn fn, void *user, const dg_real *state, const dg_real *aux, int B,
                              double *cost, double *gain, dg_err *e);

/* ------------------------------------------------------- a game's gradcheck */
/* Backward against central finite differences (dg_gradcheck, Richardson) for a game: 1. its step
 * and step_cost w.r.t. the state and the action, at states the game's own step reaches (two steps
 * from reset states under a random action), at steps eps, eps/4 and eps/16 (dg_gradcheck_scales); 2. a short episode w.r.t. every policy parameter. */
#define DG_ENV_GRADCHECK_MAX_ZERO 8
typedef struct dg_env_gradcheck_opts {
    int      batch;                       /* episodes (rows); default 4                        */
    int      horizon;                     /* steps of the episode; 0: min(10, env->horizon)    */
    uint64_t seed;                        /* states, actions and parameters                    */
    dg_real    eps;                         /* step (and eps/2), in (0, 1); default 0.1          */
    int64_t  max_per_param;               /* policy elements checked per parameter (0: all); 24 */
    int      unit_weights;                /* 1: every loss term weighs 1 (none can hide)       */
    int      hidden[DG_MLP_MAX_LAYERS];   /* the policy's hidden sizes; default 64, 64         */
    int      nhidden;
    int      open_loop;                   /* 1: the players are open-loop plans (train.mode), which
                                             start at zero (dg_policy_reset_params)            */
} dg_env_gradcheck_opts;

typedef struct dg_env_gradcheck_result {
    dg_gradcheck_report step, episode;    /* worst relative errors and where                   */
    char step_worst[64], episode_worst[64];  /* the worst elements' parameters ("-": none)     */
    int  horizon;                         /* the episode's steps                               */
    int  nzero;                           /* policy parameters with an exactly zero gradient   */
    char zero[DG_ENV_GRADCHECK_MAX_ZERO][64];  /* their names (the first 8)                    */
} dg_env_gradcheck_result;

DG_API dg_env_gradcheck_opts dg_env_gradcheck_opts_default(void);
/* Runs both checks on env into r; the caller judges r against a tolerance (1e-3 passes in float32).
 * Returns DG_OK, DG_ERR_ARG (bad options), DG_ERR_NOMEM or a step's error. */
DG_API dg_status dg_env_gradcheck(const dg_env *env, const dg_env_gradcheck_opts *o, dg_env_gradcheck_result *r,
                                  dg_err *e);

#ifdef __cplusplus
}
#endif
#endif
