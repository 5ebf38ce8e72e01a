/* difgames solver: a policy-gradient baseline (PPO or REINFORCE) in the same
 * engine, to measure what the exact BPTT gradient buys in samples.
 *
 * The policy is the game's tanh MLP ("net.*", the mean action μ(s) in
 * [-1, 1]) plus a state-independent log standard deviation ("log_std",
 * (act_dim), learned). An action is sampled as a = μ(s) + σ·ε, ε ~ N(0, I);
 * the game gets clip(a, -1, 1) and the log-probability is that of the
 * unclipped Gaussian sample (as Stable-Baselines3 does for Box actions). A
 * value MLP ("value.*", obs plus the fraction of the episode elapsed, t/H, as
 * input; the last layer is linear) is the baseline. Rollouts use the game's
 * reset/observe/step/step_cost on plain data, without gradients through the
 * dynamics; the reward of a step is -Σ_i w_i term_i of that episode alone.
 * One-player games only (a learned second player is refused).
 *
 *     dg_pg_opts o;
 *     dg_pg_opts_default(&o, DG_PG_ALGO_PPO);         // or dg_pg_opts_read(cfg, &o, NULL, &e)
 *     dg_pg *pg = dg_pg_create(env, &o, &e);
 *     dg_pg_eval *ev = dg_pg_eval_create(env, 256, 12345, 1, &e);
 *     for (int i = 0; i < 100; i++) {
 *         dg_pg_stats s;
 *         if (dg_pg_iterate(pg, &s, &e) != DG_OK) break;            // sample, then update
 *         double loss;
 *         dg_pg_eval_loss(ev, dg_pg_policy(pg), dg_pg_policy_params(pg), &loss, NULL, &e);
 *     }
 *     dg_pg_eval_free(ev);
 *     dg_pg_free(pg);
 *
 * One iteration: a fresh batch of episodes from reset, the whole horizon
 * sampled, generalised advantage estimates (GAE) and returns, advantages
 * normalised over the batch, then epochs of minibatch Adam steps on the
 * objective below (policy and value each with their own Adam and global-norm
 * clipping). The objective's gradient comes from the tape (dg_backward):
 *
 *     PPO:       -mean min(r A, clip(r, 1-c, 1+c) A),  r = exp(logp - logp_old)
 *     REINFORCE: -mean r A   (one full-batch step, so its gradient is -mean ∇logp A)
 *
 * Work is split into shards of the batch, one per thread, each on its own
 * arena; the noise is drawn on one RNG before the shards run and gradients
 * are summed in a fixed order, so a seed and a thread count give the same
 * bits. The library prints nothing.
 */
#ifndef DIFGAMES_PG_H
#define DIFGAMES_PG_H

#include "difgames/api.h"
#include "difgames/core.h"
#include "difgames/env.h"
#include "difgames/keys.h"
#include "difgames/policy.h"
#include "difgames/trainer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dg_pg_algo {
    DG_PG_ALGO_PPO,        /* clipped surrogate, GAE(λ), several epochs of minibatches */
    DG_PG_ALGO_REINFORCE,  /* reward-to-go minus a learned value, one step a batch     */
} dg_pg_algo;

typedef struct dg_pg_opts {
    dg_pg_algo algo;
    uint64_t seed;
    int    batch;              /* episodes per iteration (batch × horizon samples)     */
    int    hidden[DG_MLP_MAX_LAYERS];  /* policy and value hidden sizes                */
    int    nhidden;
    double lr, vf_lr;          /* Adam learning rates: policy (with log_std), value   */
    double gamma, lambda;      /* discount, GAE λ (1: reward-to-go minus the value)   */
    double clip;               /* PPO ratio clip c; <= 0: unclipped ratio objective    */
    int    pi_epochs;          /* passes over the batch for the policy                */
    int    vf_epochs;          /* passes over the batch for the value                 */
    int    minibatch;          /* samples per policy Adam step (0: the whole batch)   */
    int    vf_minibatch;       /* samples per value Adam step (0: the whole batch)    */
    double log_std0;           /* initial log σ                                       */
    int    learn_std;          /* 1: log σ is learned; 0: stays log_std0              */
    double ent_coef;           /* entropy bonus weight (0: none)                      */
    double max_grad_norm;      /* global-norm clipping of each network (<= 0: none)   */
    int    threads;            /* shards of the batch run in parallel                 */
} dg_pg_opts;

/* How long a run goes on and how it is evaluated (the pg.* keys beside dg_pg_opts's; the loop of
 * `difgames pg` follows them). */
typedef struct dg_pg_schedule {
    int      iters;            /* iterations (0: no limit)                            */
    int64_t  max_steps;        /* sampled env steps to stop after (0: no limit)       */
    double   stop_below;       /* stop once the evaluation loss is <= this ...        */
    int      stop_after;       /* ... at this many evaluations in a row               */
    int      eval_batch;       /* episodes of the fixed evaluation batch              */
    uint64_t eval_seed;        /* its seed (the same for every training seed)         */
    int      evals_per_decade; /* evaluations at env steps 10^(k / this)              */
} dg_pg_schedule;

typedef struct dg_pg_stats {
    int     iter;              /* 1-based                                             */
    int64_t env_steps;         /* sampled env steps so far (batch × horizon a batch)  */
    double  sample_loss;       /* the batch's episode loss, Σ_t cost / H, noisy actions */
    double  pi_loss, v_loss;   /* objectives of the last epoch (means over minibatches) */
    double  approx_kl;         /* mean(logp_old - logp) over the last epoch           */
    double  clip_frac;         /* fraction of samples whose ratio left [1-c, 1+c]     */
    double  std;               /* mean σ after the update                             */
    int     skipped;           /* minibatch steps not applied (non-finite gradient)   */
    double  ms;                /* wall time of the iteration                          */
} dg_pg_stats;

typedef struct dg_pg dg_pg;
typedef struct dg_pg_eval dg_pg_eval;

DG_API void        dg_pg_opts_default(dg_pg_opts *o, dg_pg_algo algo);  /* the defaults of algo (see pg.c) */
/* Reads seed, train.threads and policy.hidden (as dg_train_opts_read does) and the pg.* keys
 * (dg_pg_keys) into o and s (s may be NULL). A pg.* key the config leaves out takes pg.algo's
 * default: REINFORCE's lr, lambda, clip_ratio, epochs_per_iter and minibatch differ from the
 * table's, which are PPO's; pg.iters left out means no limit when pg.max_steps is set. */
DG_API dg_status   dg_pg_opts_read(dg_cfg *cfg, dg_pg_opts *o, dg_pg_schedule *s, dg_err *e);
/* The pg.* keys dg_pg_opts_read reads, as a table (`difgames keys` lists it); *n gets their number. */
DG_API const dg_key *dg_pg_keys(int *n);
DG_API const char *dg_pg_algo_name(dg_pg_algo algo);                   /* "ppo", "reinforce"             */
DG_API int         dg_pg_algo_parse(const char *name, dg_pg_algo *algo); /* 1 if name is one of them      */

/* Bytes a learner for env with o and an evaluation batch of eval_batch episodes (0: none) will
 * allocate, to refuse what cannot fit (dg_mem_check) before allocating it. */
DG_API double      dg_pg_memory(const dg_env *env, const dg_pg_opts *o, int eval_batch);
/* A learner for env; initialises "net.*" exactly as the BPTT trainer does for
 * the same seed (dg_trainer_create), so both start from one policy. NULL with
 * e set on bad options or OOM; free with dg_pg_free. */
DG_API dg_pg      *dg_pg_create(const dg_env *env, const dg_pg_opts *o, dg_err *e);
DG_API void        dg_pg_free(dg_pg *pg);                              /* NULL is harmless               */
/* One iteration: samples o->batch episodes, then updates; fills s (may be NULL). */
DG_API dg_status   dg_pg_iterate(dg_pg *pg, dg_pg_stats *s, dg_err *e);
DG_API int64_t     dg_pg_env_steps(const dg_pg *pg);                   /* env steps sampled so far       */
DG_API const dg_policy *dg_pg_policy(const dg_pg *pg);                 /* the mean action: mlp[0] "net.*" */
DG_API dg_params  *dg_pg_policy_params(dg_pg *pg);                     /* net.* and log_std              */
DG_API dg_params  *dg_pg_value_params(dg_pg *pg);                      /* value.*                        */

/* Rewards of one step, one per episode: rew[b] = -Σ_i w_i term_i of row b
 * alone (the game's step_cost on a batch of that one row), for next (B, S),
 * aux (B, X) (NULL without), action (B, A) as the game got it. Returns the
 * context's status. */
DG_API dg_status   dg_pg_step_rewards(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux,
                                      dg_tensor *action, dg_real *rew);
/* log N(action; mean, diag(exp(log_std))²) summed over the action axis:
 * mean, action (M, A), log_std (A) -> (M, 1). Tape ops. */
DG_API dg_tensor  *dg_pg_log_prob(dg_ctx *ctx, dg_tensor *mean, dg_tensor *log_std, dg_tensor *action);
/* -Σ_j min(r_j A_j, clip(r_j, 1-c, 1+c) A_j) · inv_m with r = exp(logp - logp_old);
 * clip <= 0: -Σ_j r_j A_j · inv_m. logp (M, 1) on the tape; logp_old, adv (M). */
DG_API dg_tensor  *dg_pg_policy_loss(dg_ctx *ctx, dg_tensor *logp, const dg_real *logp_old, const dg_real *adv,
                                     dg_real clip, dg_real inv_m);

/* A fixed evaluation batch: B episodes drawn once from seed (dg_run_init_draw's starts). The loss of a
 * policy on it is its deterministic (mean-action) BPTT episode loss, the
 * number dg_rollout gives (docs/games/reach.md), summed over shards of the batch. */
DG_API dg_pg_eval *dg_pg_eval_create(const dg_env *env, int B, uint64_t seed, int threads, dg_err *e);
DG_API void        dg_pg_eval_free(dg_pg_eval *ev);                    /* NULL is harmless               */
/* The episode loss of policy m (parameters p) on the batch, and its weighted
 * terms (terms may be NULL). */
DG_API dg_status   dg_pg_eval_loss(dg_pg_eval *ev, const dg_policy *m, dg_params *p, double *loss, dg_real *terms,
                                   dg_err *e);


/* --------------------------------------------------- learning curves
 * BPTT and policy gradient measured on one number: every evaluation (at env steps on the grid
 * 10^(k / evals_per_decade), and at the end) rolls the mean action out on a fixed evaluation batch
 * (dg_pg_eval) and records a point (method, iter, env steps, loss) in a dg_pg_curve. BPTT counts
 * batch x horizon env steps an epoch (the backward pass counts none).
 *
 *     dg_pg_curve c = {0};
 *     dg_pg_eval *ev = dg_pg_eval_create(env, 256, 1000003, threads, &e);
 *     dg_pg_run_bptt(env, &train_opts, ev, 40, &c, NULL, NULL, NULL, &e);     // "bptt" points
 *     dg_pg *pg = dg_pg_create(env, &pg_opts, &e);
 *     dg_pg_run(pg, ev, &schedule, &c, NULL, NULL, NULL, &e);                 // "pg" points
 *     dg_pg_curve_save_csv(&c, seed, "curve.csv", &e);
 *     dg_pg_curve_free(&c);
 */
typedef struct dg_pg_point {
    char    method[8];         /* "bptt" or "pg"                                      */
    int     iter;              /* epoch or iteration (0: before training)             */
    int64_t steps;             /* env steps so far                                    */
    double  loss;              /* the evaluation batch's episode loss                 */
    double  sample_loss;       /* the training batch's (NaN at iter 0)                */
} dg_pg_point;

typedef struct dg_pg_curve {   /* zero-initialise; dg_pg_curve_free                   */
    dg_pg_point *pts;
    int          n, cap;
} dg_pg_curve;

typedef struct dg_pg_result {  /* one run's summary                                   */
    double  best, final;       /* lowest and last evaluation loss                     */
    int64_t steps;             /* env steps at the last evaluation                    */
    int     iters;             /* epochs or iterations done                           */
} dg_pg_result;

/* What a progress callback sees: an evaluation (point set), or a policy-gradient iteration done
 * (stats set; point set too when it was evaluated); from dg_run_pg also a phase's start (start set
 * alone). */
typedef struct dg_pg_progress {
    const dg_pg_point *point;  /* the evaluation just recorded, or NULL               */
    const dg_pg_stats *stats;  /* dg_pg_run's iterations; NULL otherwise              */
    const char        *start;  /* dg_run_pg: "bptt" or "pg" begins; NULL otherwise     */
} dg_pg_progress;
/* Returns DG_OK to go on; anything else stops the run, which returns that status. */
typedef dg_status (*dg_pg_progress_fn)(const dg_pg_progress *p, void *user);

/* Trains a fresh BPTT trainer (dg_trainer_create(env, o, NULL, ...)) for o->epochs, evaluating on
 * ev before the first epoch and on the grid; appends "bptt" points to c (may be NULL) and calls fn
 * (may be NULL) with each. res (may be NULL) gets the summary. */
DG_API dg_status   dg_pg_run_bptt(const dg_env *env, const dg_train_opts *o, dg_pg_eval *ev, int evals_per_decade,
                                  dg_pg_curve *c, dg_pg_progress_fn fn, void *user, dg_pg_result *res, dg_err *e);
/* Iterates pg under schedule s (iters, max_steps, stop_below/stop_after, evals_per_decade; ev is
 * the evaluation batch, s->eval_* are the caller's business), appending "pg" points to c. */
DG_API dg_status   dg_pg_run(dg_pg *pg, dg_pg_eval *ev, const dg_pg_schedule *s, dg_pg_curve *c, dg_pg_progress_fn fn,
                             void *user, dg_pg_result *res, dg_err *e);
/* Writes c as CSV (method,seed,iter,env_steps,eval_loss,sample_loss; %.9g) to path, atomically. */
DG_API dg_status   dg_pg_curve_save_csv(const dg_pg_curve *c, int seed, const char *path, dg_err *e);
DG_API void        dg_pg_curve_free(dg_pg_curve *c);                   /* frees the points; c is empty again */

#ifdef __cplusplus
}
#endif
#endif
