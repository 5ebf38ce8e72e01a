/* difgames run: what a program does around the solvers, from a config to its numbers.
 *
 *     dg_run r;
 *     dg_run_set sets[] = {{"train.epochs", "3"}};            // overrides, as `--epochs 3`
 *     if (dg_run_load(&r, "configs/reach.yaml", sets, 1, &e) != DG_OK) fail(e.msg);
 *     dg_policy m;
 *     dg_params *p;
 *     dg_run_policy_load(&r, "runs/reach/final.safetensors", &m, &p, &e);
 *     float *state, *aux;
 *     dg_run_init_draw(r.env, r.opts.seed, 64, &state, &aux, &e);  // or dg_run_init_load
 *     dg_eval_result res;
 *     dg_run_eval(r.env, &m, p, state, aux, 64, 0, &res, &e);     // res.loss, res.terms, res.metrics
 *     free(state); free(aux); dg_params_free(p); dg_run_free(&r);
 *
 * A run is a config with its game (dg_env), the trainer's options and those of the
 * policy-gradient baseline, every key checked. The rest are the steps the `difgames`
 * subcommands share: the default run folder of a config, a checkpoint's policy, initial
 * states from a file or drawn, one episode on a context sized for it, an episode's loss,
 * terms and metrics, the speed of training, the disk a run will fill, the files of a
 * policy-gradient run, and a median over seeds. Nothing here prints.
 */
#ifndef DIFGAMES_RUN_H
#define DIFGAMES_RUN_H

#include "difgames/api.h"
#include "difgames/config.h"
#include "difgames/env.h"
#include "difgames/keys.h"
#include "difgames/pg.h"
#include "difgames/safety.h"
#include "difgames/trainer.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_INIT_MAX_ROWS (1 << 20)  /* initial states in one dg_run_init_load file */

typedef struct dg_run {
    dg_cfg        *cfg;      /* the config (its keys all read)                          */
    dg_env        *env;      /* its game                                                */
    dg_train_opts  opts;     /* seed, train.*, policy.*                                 */
    dg_pg_opts     pg;       /* pg.* (every config may have them; `difgames pg` runs them) */
    dg_pg_schedule pg_run;   /* pg.* of the schedule: iterations, evaluations            */
    dg_safety_opts safety;   /* safety.* (a filter around the policy, safety.h)           */
} dg_run;

typedef struct dg_run_set {
    const char *key, *value;  /* a config key and its value's text (value NULL: not given) */
} dg_run_set;

/* A config read once, its overrides set and its train.precision learned, before its game is made:
 * which copy of the library runs it (difgames/real.h) is known before a game or plugin (of one
 * precision) exists. dg_run_open makes the run of it. It holds no dg_real, so one copy may read it
 * and the other open it: the command's float copy hands an f64 config to its double copy so. */
typedef struct dg_run_doc {
    dg_cfg *cfg;        /* the config, overrides set (NULL once opened or freed) */
    int     precision;  /* train.precision: 0 f32, 1 f64                          */
} dg_run_doc;

/* Reads the config at path (text NULL), or parses text (len bytes, named path in messages), sets the
 * nsets keys of sets over it (in order; those with a NULL value are skipped) and reads
 * train.precision. DG_OK with *d filled, or the config's error (d zeroed): the file, its YAML, an
 * override, or train.precision's value. */
DG_API dg_status dg_run_doc_read(dg_run_doc *d, const char *path, const char *text, size_t len, const dg_run_set *sets,
                                 int nsets, dg_err *e);
/* Makes the run of d: the game, the options, every key checked as used. A game of the HJI grid
 * solver is refused (it has its own configs). Takes d's config (d is zeroed, also on error); r is
 * zeroed first, and freed on error. */
DG_API dg_status dg_run_open(dg_run *r, dg_run_doc *d, dg_err *e);
DG_API void      dg_run_doc_free(dg_run_doc *d);                       /* a zeroed document is harmless */
/* dg_run_doc_read of the config at path, then dg_run_open: one read, one parse. */
DG_API dg_status dg_run_load(dg_run *r, const char *path, const dg_run_set *sets, int nsets, dg_err *e);
/* The same from config text (e.g. the config stored in a resume file); label names it in errors. */
DG_API dg_status dg_run_parse(dg_run *r, const char *text, size_t len, const char *label, const dg_run_set *sets,
                              int nsets, dg_err *e);
DG_API void      dg_run_free(dg_run *r);                               /* a zeroed run is harmless */
/* DG_OK when training r's config fits in memory (dg_train_memory, dg_mem_check); else a config
 * error naming the key to lower ("batch B x horizon H needs about ...; lower train.batch ..."). */
DG_API dg_status dg_run_memory_check(const dg_run *r, dg_err *e);
/* The key named name that every training config may set: seed, train.*, policy.* (dg_train_keys),
 * pg.* (dg_pg_keys), safety.* (dg_safety_keys), env.dt and env.horizon (dg_env_keys); NULL when none
 * is (a game's own key). */
DG_API const dg_key *dg_run_key(const char *name);
/* Makes the config's policy (policy.hidden) and loads the checkpoint ckpt into it; *p is the
 * caller's (dg_params_free), NULL on error: DG_ERR_NOMEM, or the checkpoint's (DG_ERR_IO,
 * DG_ERR_NOT_FOUND for a missing tensor, DG_ERR_FORMAT for one of another shape, ...). A checkpoint
 * whose metadata name another game than r's says so first ("checkpoint FILE was trained on game
 * 'chase' (this config: 'reach'): tensor ..."). */
DG_API dg_status dg_run_policy_load(const dg_run *r, const char *ckpt, dg_policy *m, dg_params **p, dg_err *e);
/* The default run folder of a config file: runs/<name>, name being the config's path below its
 * last configs/ folder without .yaml (configs/duel.yaml -> runs/duel, configs/bench/reach.yaml
 * -> runs/bench/reach), or else its file name without .yaml (my/hover.yaml -> runs/hover), so
 * that no two configs of configs/ share one. Returns 0, or -1 if it does not fit in buf (n bytes). */
DG_API int       dg_run_dir(const char *config, char *buf, size_t n);

/* Initial states from the safetensors file at path: "state" (B, state_dim) and, when the game
 * has episode constants, env->aux_name (B, aux_user_dim), completed by the game. Returns B (at
 * most DG_INIT_MAX_ROWS) with malloc'd *state (B, state_dim) and *aux (B, aux_dim, at least one
 * float), or -1 with e set (a missing or misshapen tensor, too many rows for memory, ...). */
DG_API int       dg_run_init_load(const dg_env *env, const char *path, dg_real **state, dg_real **aux, dg_err *e);
/* B initial states drawn by the game's reset from seed into malloc'd *state and *aux (as
 * dg_run_init_load gives them; the caller frees both, also on error). DG_ERR_NOMEM, or the
 * reset's error. */
DG_API dg_status dg_run_init_draw(const dg_env *env, uint64_t seed, int B, dg_real **state, dg_real **aux, dg_err *e);

/* One episode of B rows from state0 and aux (dg_rollout, inv_batch 1/B), and its backward when
 * backward is 1 (the gradient adds into p), on a context made for it (sized by dg_rollout_memory,
 * grown once by dg_ctx_run if short). Returns the context (the caller frees it; it holds the
 * loss, *loss), or NULL with e set. terms and traj as dg_rollout's (traj_ld B; both may be NULL). */
DG_API dg_ctx   *dg_run_episode(const dg_env *env, const dg_policy *m, dg_params *p, const dg_real *state0,
                                const dg_real *aux, int B, int backward, dg_real *terms, dg_real *traj, dg_tensor **loss,
                                dg_err *e);

/* One episode's numbers: what `difgames eval` prints. */
typedef struct dg_eval_result {
    double loss;                          /* the episode loss (dg_rollout)              */
    dg_real  terms[DG_LOSS_MAX_TERMS];      /* each weighted term (env->nterms)           */
    double metrics[DG_MAX_METRICS];       /* the game's metrics (env->nmetrics)         */
    double grad_norm;                     /* grad: the gradient's global norm, else 0  */
} dg_eval_result;
/* The spread of an episode's numbers over the noise of a noisy game (dg_env.noise_dim > 0): the
 * sample standard deviation, over draws independent noise streams from the same initial states, of
 * the batch mean of each (the standard error of their mean over the draws is it / sqrt(draws)). */
typedef struct dg_eval_spread {
    int    draws;                         /* the noise streams played (1: no noise)     */
    double loss;
    double terms[DG_LOSS_MAX_TERMS];      /* each weighted term (env->nterms)           */
    double metrics[DG_MAX_METRICS];       /* the game's metrics (env->nmetrics)         */
} dg_eval_spread;
/* dg_run_eval of a noisy game over draws >= 1 noise streams (dg_noise_key(seed, d), d = 1 .. draws,
 * each at row 0) from the same initial states: r gets the means over the draws (grad: the mean
 * gradient, and its norm), sp their spreads. A game without noise plays one draw (sp->draws 1, its
 * spreads 0). Same errors as dg_run_eval, and DG_ERR_ARG for draws < 1. */
DG_API dg_status dg_run_eval_noise(const dg_env *env, const dg_policy *m, dg_params *p, const dg_real *state,
                                   const dg_real *aux, int B, int grad, int draws, uint64_t seed,
                                   dg_eval_result *r, dg_eval_spread *sp, dg_err *e);
/* Bytes dg_run_eval needs for B rows with the config's policy (hidden sizes of o), and p's
 * parameters and gradients: the tape, the batch and its constants, the trajectory. */
DG_API double    dg_run_eval_memory(const dg_env *env, const dg_train_opts *o, const dg_params *p, int B, int grad);
/* Plays one episode of B rows from state and aux with p and fills r. grad 1: p's gradient is
 * zeroed, then holds d loss / d parameter (dg_checkpoint_save with grads 1 writes it). */
DG_API dg_status dg_run_eval(const dg_env *env, const dg_policy *m, dg_params *p, const dg_real *state,
                             const dg_real *aux, int B, int grad, dg_eval_result *r, dg_err *e);

/* DG_OK when the files a training run writes into dir (dg_train_output_bytes) fit in the space
 * free there (or that cannot be measured); else DG_ERR_ARG naming dir and the keys to lower. */
DG_API dg_status dg_run_disk_check(const dg_run *r, const char *dir, dg_err *e);

/* The step of dg_run_train that failed: which input the caller names in its message. */
typedef enum dg_run_step {
    DG_RUN_STEP_CONFIG,   /* train.epochs is 0 on a fresh run, or the run does not fit in memory (e names the key) */
    DG_RUN_STEP_DIR,      /* dir: too little disk, or another run writes into it (e names dir)                   */
    DG_RUN_STEP_TRAINER,  /* the trainer could not be made (out of memory, ...)                                 */
    DG_RUN_STEP_RESUME,   /* the resume file cannot be read or does not fit the config                         */
    DG_RUN_STEP_EPOCHS,   /* go_on: the resumed run has done r->opts.epochs epochs or more already              */
    DG_RUN_STEP_TRAIN,    /* the training: interrupted (DG_ERR_INTERRUPTED) or failed                          */
    DG_RUN_STEP_SEEDS,    /* dg_run_seeds: a seed given twice, or no memory for the seeds                       */
    DG_RUN_STEP_FOLDER,   /* dg_run_seeds: a seed's folder name does not fit (e: the path's error)             */
    DG_RUN_STEP_CALLER,   /* dg_run_seeds: the caller's on_seed refused the seed                               */
    DG_RUN_STEP_SAVE,     /* dg_run_pg: the files of its folder could not be written                           */
} dg_run_step;

/* What dg_run_train did. */
typedef struct dg_run_train_result {
    dg_run_step step;              /* on failure: the step that failed                              */
    int         epochs_before;     /* a resumed run: the epochs it had done (else 0)                */
    int         checkpoint_every;  /* the trainer's BPTT segment length (0: the full tape)          */
    int         epochs;            /* the epoch it ended at                                         */
    double      loss;              /* that epoch's loss                                             */
    double      seconds;           /* the training's wall time                                      */
} dg_run_train_result;

/* Trains r's config into dir (dg_trainer: metrics.csv, snapshots, final.safetensors,
 * resume.safetensors and loss.png, the config stored in them). Refuses train.epochs 0 on a fresh
 * run, a run that does not fit in memory (dg_run_memory_check) or on dir's disk (dg_run_disk_check);
 * holds dir (dg_dir_lock) until the run ends, and once it holds it removes the temporary files of
 * an earlier run killed there (dg_dir_clean). resume (a resume.safetensors, may be NULL): go on
 * from it; go_on 1: r->opts.epochs was asked for, and must be more than the run has done. cb hears
 * DG_TRAIN_EV_START once the trainer is ready (res->epochs_before, res->checkpoint_every set), then
 * dg_trainer_run's events; *stop as there. On failure res->step says which step failed (res->epochs
 * and res->loss hold where an interrupted or failed training stopped). */
DG_API dg_status dg_run_train(const dg_run *r, const char *dir, const char *resume, int go_on, dg_train_cb cb, void *user,
                              volatile sig_atomic_t *stop, dg_run_train_result *res, dg_err *e);

/* Called by dg_run_seeds for seed k: before its training (res NULL; r is its run, dir its folder),
 * where a status other than DG_OK refuses the seed and ends the sweep with that status; and after
 * a training that succeeded (res set). */
typedef dg_status (*dg_run_seed_cb)(int k, const dg_run *r, const char *dir, const dg_run_train_result *res,
                                    void *user);

/* A sweep over seeds (`difgames train --seeds`): the config trained once per seed. */
typedef struct dg_run_seed_sweep {
    const char            *config;    /* the config file                                          */
    const dg_run_set      *sets;      /* keys set over it, after seed (dg_run_load)               */
    int                    nsets;
    const char            *base;      /* seed N trains into base/seed_N                            */
    const int             *seeds;     /* (n) seeds, each at most once                              */
    int                    n;
    dg_run_seed_cb         on_seed;   /* may be NULL                                               */
    dg_train_cb            on_event;  /* each training's events (dg_run_train); may be NULL        */
    void                  *user;      /* of both                                                   */
    volatile sig_atomic_t *stop;      /* as dg_run_train's                                         */
    double                *losses;    /* out (n): each seed's final loss (the caller's array)       */
    double                 median;    /* out: their median                                          */
    double                 seconds;   /* out: the trainings' wall time                              */
    int                    epochs;    /* out: the last training's epochs                            */
    int                    failed;    /* out: the index of the seed that failed, or -1              */
    dg_run_train_result    res;       /* out: the last training's (res.step: where a failure was)   */
} dg_run_seed_sweep;
/* Trains w->config once per seed, seeds[k] into base/seed_<seeds[k]> (dg_run_load with seed set,
 * then w->sets; dg_run_train), in order, and sets the outputs. Stops at the first seed that fails:
 * w->failed, w->res.step (DG_RUN_STEP_CONFIG also for a config that does not load) and e say why. */
DG_API dg_status dg_run_seeds(dg_run_seed_sweep *w, dg_err *e);

/* The speed of training r's config: warmup epochs untimed, then epochs timed epochs (r->opts.epochs
 * is not used; nothing is written). What `difgames bench` prints. */
typedef struct dg_bench_result {
    int    epochs;            /* timed epochs                                              */
    double ms, ms_min;        /* the middle (the upper of the two middle ones) and least ms an epoch */
    double flops;             /* FLOPs of the last epoch's forward and backward             */
    double steps_per_s;       /* batch x horizon / the middle epoch's time, backward included */
    double tape_bytes;        /* the arena peak of a shard times the shards                */
    double saved_bytes;       /* checkpointed BPTT: the states it keeps (0: full tape)       */
    int    shards;            /* min(threads, batch)                                         */
    int    checkpoint_every;  /* segment length in use (0: the full tape)                    */
} dg_bench_result;
DG_API dg_status dg_run_bench(const dg_run *r, int warmup, int epochs, dg_bench_result *b, dg_err *e);

/* What `difgames pg --out dir` writes: dir (made if missing), dir/curve.csv (dg_pg_curve_save_csv)
 * and, when pg is not NULL, the learner's dir/policy.safetensors (net.*, log_std) and
 * dir/value.safetensors, with the game's name in their metadata. */
DG_API dg_status dg_run_pg_save(const char *dir, const dg_pg_curve *c, int seed, dg_pg *pg, const char *game, dg_err *e);

/* What dg_run_pg did. */
typedef struct dg_run_pg_result {
    dg_run_step  step;           /* on failure: DIR (out is another run's), TRAINER (the evaluation batch
                                    or the learner not made), CONFIG (BPTT does not fit in memory), TRAIN
                                    (a phase failed, or fn stopped it), SAVE (out's files)              */
    dg_pg_result bptt, pg;       /* each phase's summary (NaN losses: it did not run)                    */
    double       bptt_seconds, pg_seconds;
    int64_t      pg_env_steps;   /* env steps the policy gradient sampled                               */
} dg_run_pg_result;
/* What `difgames pg` runs on r's config: the evaluation batch (pg.eval_batch, pg.eval_seed), then
 * when bptt is 1 BPTT (dg_pg_run_bptt with r->opts, refused if it does not fit in memory), then when
 * pg is 1 policy gradient (dg_pg_run under r->pg_run), both curves in one. out (may be NULL) is held
 * locked (dg_dir_lock) from the start and gets dg_run_pg_save's files at the end. fn hears each
 * phase's start (p->start "bptt" or "pg", once its learner is made), evaluations and iterations. */
DG_API dg_status dg_run_pg(const dg_run *r, const char *out, int bptt, int pg, dg_pg_progress_fn fn, void *user,
                           dg_run_pg_result *res, dg_err *e);

/* Each learned player's exploitability in a two-player game (`difgames eval` reports it): freeze one
 * player, train the other alone against it for epochs epochs starting from its current parameters
 * (Adam at o's rate, betas, epsilon and clipping; a fresh batch of o->batch initial states an epoch,
 * drawn from o->seed apart from training's), and compare J on the B rows of state and aux. */
typedef struct dg_exploit_result {
    double j;            /* J of the pair                                                          */
    double j_best[2];    /* J against a best response to the frozen player k: [0] the pursuer frozen,
                            the evader trained; [1] the evader frozen, the pursuer trained          */
    double exploit[2];   /* what each frozen player gives away: [0] the pursuer's j_best[0] - j, [1]
                            the evader's j - j_best[1]; >= 0 up to noise, 0 at an equilibrium       */
} dg_exploit_result;
/* DG_OK with r filled; DG_ERR_ARG for a one-player or general-sum game or bad sizes, DG_ERR_NOMEM, or an episode's
 * error. p is not changed. Deterministic for a seed. */
DG_API dg_status dg_run_exploit(const dg_env *env, const dg_policy *m, const dg_params *p, const dg_train_opts *o,
                                int epochs, const dg_real *state, const dg_real *aux, int B, dg_exploit_result *r, dg_err *e);
/* A general-sum game's players on the B rows of state and aux (what `difgames eval` reports for
 * one): cost[i] each learned player's episode cost (dg_env_player_cost) and gain[i] its NashConv
 * term, the gain of a best response trained by BPTT for epochs epochs from p, the others frozen
 * (dg_nash_conv: >= 0 by construction, the current strategy a candidate). DG_OK, DG_ERR_ARG for a
 * game that is not general-sum, DG_ERR_NOMEM, or an episode's error. p is not changed. */
DG_API dg_status dg_run_nash_conv(const dg_env *env, const dg_policy *m, const dg_params *p, const dg_train_opts *o,
                                  int epochs, const dg_real *state, const dg_real *aux, int B, double *cost,
                                  double *gain, dg_err *e);
/* Bytes dg_run_exploit needs beyond p and the B rows: the larger tape, a copy of p with its Adam
 * moments, a training batch. */
DG_API double    dg_run_exploit_memory(const dg_env *env, const dg_train_opts *o, const dg_params *p, int B);

/* The median of v's n values (n >= 1; the mean of the middle two when n is even), sorting v. */
DG_API double    dg_median(double *v, int n);

#ifdef __cplusplus
}
#endif
#endif
