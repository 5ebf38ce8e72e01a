/* The BPTT training loop: options, the trainer, clipping, Adam, warmup, the two players' update
 * rules, exploitability, the NaN guard (rollout.c runs the episodes, trainer_files.c writes and
 * reads the files, trainer_memory.c estimates the memory). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "difgames/dist.h"
#include "difgames/fileio.h"
#include "difgames/keys.h"
#include "solver/trainer_internal.h"

/* ------------------------------------------------------------ options */

/* The keys as read (floats as the config gives them); dg_train_opts widens them. */
typedef struct train_keys {
    int   seed, batch, epochs, warmup, threads, nan_epoch, nan_patience, fixed_batch, resume_every;
    int   solver, exploit_every, exploit_epochs, checkpoint_every, mode, truncate, precision;
    float lr, betas[2], eps, clip;
    int   snapshots[DG_MAX_SNAPSHOTS], nsnapshots;
    int   hidden[DG_MLP_MAX_LAYERS], nhidden;
} train_keys;

static const char *const SOLVERS[] = {"gda", "optimistic", "extragradient", NULL};  /* dg_game_solver order */
static const char *const MODES[] = {"policy", "open_loop", NULL};  /* dg_train_opts.open_loop 0, 1 */
static const char *const PRECISIONS[] = {"f32", "f64", NULL};  /* dg_train_opts.precision 0, 1 */

static const dg_key TRAIN_KEYS[] = {
    DG_K_INT("seed", train_keys, seed, 0, 0, 2147483647, "random seed: initial weights and episode draws"),
    DG_K_INT("train.batch", train_keys, batch, 64, 1, 1 << 20, "parallel episodes per epoch"),
    DG_K_INT("train.epochs", train_keys, epochs, 300, 0, DG_MAX_EPOCHS, "epochs (one Adam step each)"),
    DG_K_F32("train.lr", train_keys, lr, 1e-3f, 0, 10, 0, 1, "Adam learning rate"),
    {.name = "train.betas", .type = DG_KEY_F32_ARRAY, .offset = offsetof(train_keys, betas), .min_n = 2, .max_n = 2,
     .lo = 0, .hi = 1, .hi_open = 1, .def_v = (const double[]){0.9f, 0.999f}, .def_n = 2, .what = "beta",
     .doc = "Adam's moment decays [beta1, beta2]"},
    DG_K_F32("train.eps", train_keys, eps, 1e-8f, 0, 1, 1, 1, "Adam's epsilon"),
    DG_K_F32("train.clip", train_keys, clip, 1.0f, 0, INFINITY, 1, 0, "global gradient-norm clipping (0: off)"),
    DG_K_INT("train.warmup", train_keys, warmup, 0, 0, DG_MAX_EPOCHS, "epochs of linear learning-rate warmup"),
    {.name = "train.snapshots", .type = DG_KEY_INT_ARRAY, .offset = offsetof(train_keys, snapshots),
     .count_offset = offsetof(train_keys, nsnapshots), .min_n = 0, .max_n = DG_MAX_SNAPSHOTS, .lo = 1,
     .hi = 2147483647, .def_v = (const double[]){5, 20, 50}, .def_n = 3, .what = "epochs",
     .doc = "epochs to snapshot (and the last)"},
    DG_K_INT("train.threads", train_keys, threads, 1, 0, MAX_THREADS,
             "shards of the batch trained in parallel (0: one per core)"),
    DG_K_INT("train.fault_nan_epoch", train_keys, nan_epoch, 0, 0, DG_MAX_EPOCHS,
             "fault injection: the loss is NaN at this epoch (0: off)"),
    DG_K_INT("train.nan_patience", train_keys, nan_patience, 5, 1, 1000,
             "epochs in a row the NaN guard may fire (each restores the last finite state and halves the "
             "learning rate) before the run stops with exit status 1, naming the term that went non-finite"),
    DG_K_BOOL("train.fixed_batch", train_keys, fixed_batch, 0, "every epoch the same initial batch"),
    DG_K_INT("train.resume_every", train_keys, resume_every, 10, 0, DG_MAX_EPOCHS,
             "write resume.safetensors every N epochs (0: at snapshots and the end)"),
    DG_K_ENUM("train.game_solver", train_keys, solver, 0, SOLVERS, "solver", "two-player games: the update rule"),
    DG_K_INT("train.exploit_every", train_keys, exploit_every, 0, 0, DG_MAX_EPOCHS,
             "measure exploitability every N epochs (0: never)"),
    DG_K_INT("train.exploit_epochs", train_keys, exploit_epochs, 50, 1, DG_MAX_EPOCHS,
             "best-response training epochs of each exploitability measure"),
    DG_K_INT("train.checkpoint_every", train_keys, checkpoint_every, 0, -1, DG_MAX_HORIZON,
             "BPTT segments: 0 auto, k every k steps, -1 never"),
    DG_K_ENUM("train.mode", train_keys, mode, 0, MODES, "mode",
              "policy: MLP players; open_loop: each player's action sequence of one fixed initial batch"),
    DG_K_INT("train.truncate", train_keys, truncate, 0, 0, DG_MAX_HORIZON,
             "truncated BPTT: windows of K steps, the state entering each held constant, so gradients "
             "flow back at most K steps while the rollout goes on (0: off, the whole episode)"),
    DG_K_ENUM("train.precision", train_keys, precision, 0, PRECISIONS, "precision",
              "the tape's numbers: f32 (float32) or f64 (double, every value on the tape: to tell chaos from "
              "rounding; slower, docs/long_horizon.md)"),
    {.name = "policy.hidden", .type = DG_KEY_INT_ARRAY, .offset = offsetof(train_keys, hidden),
     .count_offset = offsetof(train_keys, nhidden), .min_n = 0, .max_n = DG_MLP_MAX_LAYERS - 1, .lo = 1,
     .hi = 65536, .def_v = (const double[]){64, 64}, .def_n = 2, .what = "sizes",
     .doc = "hidden layer sizes of each player's MLP (tanh after every layer)"},
};

const dg_key *dg_train_keys(int *n) {
    *n = (int)(sizeof TRAIN_KEYS / sizeof TRAIN_KEYS[0]);
    return TRAIN_KEYS;
}

static void opts_from_keys(const train_keys *k, dg_train_opts *o) {
    memset(o, 0, sizeof *o);
    o->seed = (uint64_t)k->seed;
    o->batch = k->batch;
    o->epochs = k->epochs;
    o->lr = k->lr;
    o->beta1 = k->betas[0];
    o->beta2 = k->betas[1];
    o->eps = k->eps;
    o->clip = k->clip;
    o->warmup = k->warmup;
    memcpy(o->snapshots, k->snapshots, sizeof o->snapshots);
    o->nsnapshots = k->nsnapshots;
    o->threads = k->threads;
    if (o->threads == 0) {  /* 0: OpenMP's default, one per core (or OMP_NUM_THREADS), as solver.threads */
        const int n = omp_get_max_threads();
        o->threads = n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : n;
    }
    memcpy(o->hidden, k->hidden, sizeof o->hidden);
    o->nhidden = k->nhidden;
    o->nan_epoch = k->nan_epoch;
    o->nan_patience = k->nan_patience;
    o->fixed_batch = k->fixed_batch;
    o->game_solver = (dg_game_solver)k->solver;
    o->exploit_every = k->exploit_every;
    o->exploit_epochs = k->exploit_epochs;
    o->resume_every = k->resume_every;
    o->checkpoint_every = k->checkpoint_every;
    o->open_loop = k->mode == 1;
    o->truncate = k->truncate;
    o->precision = k->precision;
    if (o->open_loop) o->fixed_batch = 1;  /* a plan belongs to its initial state */
}

void dg_train_opts_default(dg_train_opts *o) {
    train_keys k;
    memset(&k, 0, sizeof k);
    dg_keys_defaults(TRAIN_KEYS, (int)(sizeof TRAIN_KEYS / sizeof TRAIN_KEYS[0]), &k);
    opts_from_keys(&k, o);
}

dg_status dg_train_opts_read(dg_cfg *cfg, dg_train_opts *o, dg_err *e) {
    train_keys k;
    memset(&k, 0, sizeof k);
    dg_status st = dg_keys_read(cfg, TRAIN_KEYS, (int)(sizeof TRAIN_KEYS / sizeof TRAIN_KEYS[0]), &k, e);
    if (st) return st;
    opts_from_keys(&k, o);
    return DG_OK;
}

void dg_trainer_free(dg_trainer *t) {
    if (!t) return;
    for (int i = 0; i < t->nshards; i++) dg_ctx_free(t->shards[i].ctx);
    free(t->block);
    free(t->xbuf);
    dg_adam_free(&t->adam);
    dg_params_free(t->p);
    free(t->config_yaml);
    free(t->rows);
    free(t);
}

/* The trainer's arrays as views of one zeroed allocation (llm.c's malloc_and_point habit: every
 * size first, one block, named views at 64-byte boundaries): the batch and its constants, the
 * trajectory for the metrics, the NaN guard's copies, the two players' state, and each shard's
 * gradient and (its rank's shards) checkpointed states, nsaved a row. The arenas stay apart: each
 * grows on its own. Returns DG_OK, or DG_ERR_NOMEM with e set. */
static dg_status trainer_alloc(dg_trainer *t, int nsaved, dg_err *e) {
    const dg_env *env = t->env;
    const size_t B = (size_t)t->o.batch, S = (size_t)env->state_dim, H = (size_t)env->horizon;
    const size_t A = env->aux_dim ? (size_t)env->aux_dim : 1, total = t->p->total, R = sizeof(dg_real);
    const int two = t->mlp.n >= 2;  /* the game solvers' and exploitability's arrays */
    dg_real **view[13 + 2 * MAX_THREADS];
    size_t bytes[13 + 2 * MAX_THREADS];
    int n = 0;
#define DG_VIEW(ptr, count) (view[n] = &(ptr), bytes[n++] = (count) * R)
    DG_VIEW(t->state0, B * S);
    DG_VIEW(t->aux, B * A);
    DG_VIEW(t->traj, env->game->metrics ? (H + 1) * B * S : 0);
    DG_VIEW(t->good_w, total);
    DG_VIEW(t->good_m, total);
    DG_VIEW(t->good_v, total);
    DG_VIEW(t->prev_g, two ? total : 0);
    DG_VIEW(t->save_w, two ? total : 0);
    DG_VIEW(t->save_m, two ? total : 0);
    DG_VIEW(t->save_v, two ? total : 0);
    DG_VIEW(t->x_state, two ? B * S : 0);
    DG_VIEW(t->x_aux, two ? B * A : 0);
    for (int s = 0; s < t->nshards; s++) {
        shard *sh = &t->shards[s];
        const int mine = s >= t->sh_lo && s < t->sh_hi;  /* another rank's shard: its results only */
        DG_VIEW(sh->grad, total ? total : 1);
        DG_VIEW(sh->saved, mine ? (size_t)nsaved * (size_t)sh->rows * S : 0);
    }
#undef DG_VIEW
    size_t size = 64;  /* room to align the first view */
    for (int i = 0; i < n; i++) size += (bytes[i] + 63) & ~(size_t)63;
    t->block = calloc(1, size);
    if (!t->block)
        return dg_err_set(e, DG_ERR_NOMEM, "out of memory for batch %d: %zu bytes of batch, copies and gradients",
                          t->o.batch, size);
    char *at = (char *)(((uintptr_t)t->block + 63) & ~(uintptr_t)63);
    for (int i = 0; i < n; i++) {
        *view[i] = bytes[i] ? (dg_real *)at : NULL;
        at += (bytes[i] + 63) & ~(size_t)63;
    }
    return DG_OK;
}

/* Each shard's rows of the batch, and an arena for this rank's shards sized for the measured tape
 * of the largest one on T steps (never short for a shipped game; grown in the first epoch if it is). */
static dg_status trainer_arenas(dg_trainer *t, int T, dg_err *e) {
    const dg_train_opts *o = &t->o;
    const int B = o->batch, ck = o->checkpoint_every, max_rows = (B + t->nshards - 1) / t->nshards;
    const double tape = dg_rollout_memory(t->env, o->hidden, o->nhidden, max_rows, ck ? ck : T, 1) + (1 << 20);
    for (int s = 0; s < t->nshards; s++) {
        shard *sh = &t->shards[s];
        sh->rows = B / t->nshards + (s < B % t->nshards);
        sh->row0 = s ? t->shards[s - 1].row0 + t->shards[s - 1].rows : 0;
    }
    for (int s = t->sh_lo; s < t->sh_hi; s++) {
        size_t cap = (size_t)tape;
        if (cap > ((size_t)1 << 33)) cap = (size_t)1 << 33;
        if (!(t->shards[s].ctx = dg_ctx_create(cap)))
            return dg_err_set(e, DG_ERR_NOMEM, "out of memory for a %zu-byte arena", cap);
    }
    return DG_OK;
}

/* Keeps out_dir (and config_yaml) for the files; an unwritable folder is found now, not after
 * hours of training. */
static dg_status trainer_out_dir(dg_trainer *t, const char *out_dir, const char *config_yaml, dg_err *e) {
    if (config_yaml && !(t->config_yaml = strdup(config_yaml))) return dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    if (!out_dir) return DG_OK;
    if (strlen(out_dir) >= sizeof t->out_dir - 64)
        return dg_err_set(e, DG_ERR_ARG, "%s: output folder path too long", out_dir);
    strcpy(t->out_dir, out_dir);
    dg_status st = dg_mkdirs(out_dir, e);
    if (st != DG_OK) return st;
    char probe[DG_PATH_MAX];
    snprintf(probe, sizeof probe, "%s/.write_test", out_dir);
    dg_file f;
    if ((st = dg_file_begin(&f, probe, e)) != DG_OK) return st;
    dg_file_abort(&f);
    return DG_OK;
}

dg_trainer *dg_trainer_create(const dg_env *env, const dg_train_opts *o, const char *out_dir,
                              const char *config_yaml, dg_err *e) {
    if (o->precision && !DG_REAL_F64) {  /* asked for the double tape, given the float one (difgames/real.h) */
        dg_err_set(e, DG_ERR_CONFIG, "train.precision: f64, but this program's tape is float32 (a C program gets "
                   "the double tape by compiling with -DDG_F64; docs/long_horizon.md)");
        return NULL;
    }
    dg_trainer *t = calloc(1, sizeof *t);
    if (!t) {
        dg_err_set(e, DG_ERR_NOMEM, "out of memory");
        return NULL;
    }
    t->env = env;
    t->o = *o;
    t->lr_scale = 1.0;
    dg_rng_seed(&t->rng, o->seed);
    if ((o->open_loop ? dg_policy_create_plan(env, &t->mlp, &t->p, e)
                      : dg_policy_create(env, o->hidden, o->nhidden, &t->mlp, &t->p, e)) != DG_OK) goto fail;
    dg_policy_reset_params(&t->mlp, t->p, &t->rng);
    if (dg_adam_init(&t->adam, t->p, o->lr, o->beta1, o->beta2, o->eps, 0.0) != DG_OK) {
        dg_err_set(e, DG_ERR_ARG, "invalid Adam settings (lr %g, betas %g %g, eps %g)", o->lr,
                   o->beta1, o->beta2, o->eps);
        goto fail;
    }
    const int B = o->batch, S = env->state_dim, H = env->horizon;
    /* under MPI the ranks split the shards of ranks x threads (the shards one process with that
     * many threads would have: the same rows, the same sums in the same order) */
    const int R = dg_dist_size(), rank = dg_dist_rank();
    if ((int64_t)o->threads * R > MAX_THREADS) {
        dg_err_set(e, DG_ERR_ARG, "%d ranks x %d threads: more than %d shards", R, o->threads, MAX_THREADS);
        goto fail;
    }
    t->nshards = o->threads * R < B ? o->threads * R : B;
    if (t->nshards < 1) t->nshards = 1;
    t->sh_lo = (int)((int64_t)rank * t->nshards / R);
    t->sh_hi = (int)((int64_t)(rank + 1) * t->nshards / R);
    if ((double)(H + 1) * B * S > 4e9 / sizeof(dg_real)) {
        dg_err_set(e, DG_ERR_ARG, "batch %d × horizon %d is too large to keep in memory", B, H);
        goto fail;
    }
    if (t->mlp.n >= 2) t->ev0 = t->p->info[dg_policy_first_param(&t->mlp, 1)].offset;
    /* checkpoint_every 0 = auto: the whole episode (or truncation window) on one tape unless
     * that tape would pass DG_TAPE_BUDGET; then segments of ceil(sqrt(T)) steps (memory ~
     * sqrt(T), one extra forward; gradients identical) */
    if (t->o.truncate >= H) t->o.truncate = 0;
    const int T = t->o.truncate ? t->o.truncate : H;
    t->o.checkpoint_every = dg__train_tape_every(env, o, T);
    t->sg_rows = dg__train_state_grad_rows(env, &t->o, &t->sg_bytes);  /* measured now, before any arena fills */
    if (trainer_arenas(t, T, e) != DG_OK ||
        trainer_alloc(t, dg_episode_saved(H, t->o.checkpoint_every, t->o.truncate), e) != DG_OK ||
        trainer_out_dir(t, out_dir, config_yaml, e) != DG_OK)
        goto fail;
    return t;
fail:
    dg_trainer_free(t);
    return NULL;
}

dg_params *dg_trainer_params(dg_trainer *t) { return t->p; }
const dg_policy *dg_trainer_policy(const dg_trainer *t) { return &t->mlp; }

void dg_trainer_set_filter(dg_trainer *t, dg_tensor *(*filter)(dg_ctx *, void *, int, dg_tensor *, dg_tensor *),
                           void *user) {
    t->mlp.filter = filter;
    t->mlp.filter_user = filter ? user : NULL;
}

dg_status dg_trainer_set_filter_penalty(dg_trainer *t, double w, dg_err *e) {
    if (!(w >= 0 && isfinite(w)))
        return dg_err_set(e, DG_ERR_ARG, "the filter's penalty %g is not a finite weight >= 0", w);
    if (w > 0 && t->env->nterms >= DG_LOSS_MAX_TERMS)  /* the penalty is one more term of the loss */
        return dg_err_set(e, DG_ERR_ARG, "%s has %d loss terms already: no room for the filter's penalty (%d at most)",
                          t->env->game->name, t->env->nterms, DG_LOSS_MAX_TERMS);
    t->mlp.filter_penalty = w;
    return DG_OK;
}
const dg_epoch_stats *dg_trainer_last(const dg_trainer *t) { return &t->last; }
size_t dg_trainer_arena_peak(const dg_trainer *t) { return t->arena_peak; }
int dg_trainer_checkpoint_every(const dg_trainer *t) { return t->o.checkpoint_every; }
int dg_trainer_truncate(const dg_trainer *t) { return t->o.truncate; }

/* What made an epoch non-finite, for the guard's message: the first loss term that is ("loss term
 * 'goal' is nan"), the total when every term is finite, else the first parameter's gradient. */
static void nonfinite_what(const dg_trainer *t, const dg_epoch_stats *s, char *buf, size_t n) {
    const dg_env *env = t->env;
    if (!isfinite(s->loss)) {
        for (int i = 0; i < env->nterms; i++)
            if (!isfinite(s->terms[i])) {
                snprintf(buf, n, "the loss term '%s' is %s", env->term_names[i], isnan(s->terms[i]) ? "nan" : "infinite");
                return;
            }
        snprintf(buf, n, "the loss is %s (every term finite)", isnan(s->loss) ? "nan" : "infinite");
        return;
    }
    int64_t j = 0;
    const int i = dg_params_first_nonfinite(t->p, t->p->grad, &j);
    if (i >= 0) snprintf(buf, n, "the gradient of %s[%lld] is non-finite", t->p->info[i].name, (long long)j);
    else snprintf(buf, n, "the loss or its gradient is non-finite");
}

static int grads_finite(const dg_params *p) {
    dg_real acc = 0.0f;
    for (size_t i = 0; i < p->total; i++) acc += p->grad[i] * 0.0f;  /* NaN/inf poison the sum */
    return acc == 0.0f;
}

static int is_snapshot_epoch(const dg_train_opts *o, int epoch) {
    for (int i = 0; i < o->nsnapshots; i++)
        if (o->snapshots[i] == epoch) return 1;
    return 0;
}

/* ------------------------------------------------------------ two players */

/* Zero-sum: the pursuer descends the loss J, the evader ascends it, so the
 * evader's gradient block is negated before the (shared) optimiser step. */
static void zero_sum(const dg_trainer *t, dg_params *p) {
    if (t->mlp.n != 2 || t->env->general_sum) return;  /* general-sum: each block is its own cost's already */
    for (size_t i = t->ev0; i < p->total; i++) p->grad[i] = -p->grad[i];
}

/* Clipping and one Adam step at rate lr on p's gradient; returns the norm. */
static double clip_step(dg_trainer *t, double lr) {
    const double gn = t->o.clip > 0 ? dg_clip_grad_norm(t->p, (dg_real)t->o.clip) : dg_grad_norm(t->p);
    t->adam.lr = lr;
    dg_adam_step(&t->adam, t->p);
    return gn;
}

/* The update of one epoch, from the gradient in t->p->grad:
 *   gda           simultaneous gradient descent-ascent (one player: plain Adam);
 *   optimistic    Adam on 2 g_t - g_{t-1} (optimistic GDA, Daskalakis et al. 2018);
 *   extragradient Adam to a look-ahead point, the gradient there, then Adam from
 *                 the original point with it (extra-Adam, Gidel et al. 2019). */
static dg_status update(dg_trainer *t, double lr, double *grad_norm, dg_err *e) {
    const size_t total = t->p->total;
    if (t->mlp.n < 2 || t->o.game_solver == DG_GAME_SOLVER_GDA) {
        *grad_norm = clip_step(t, lr);
        return DG_OK;
    }
    if (t->o.game_solver == DG_GAME_SOLVER_OPTIMISTIC) {
        dg_real *g = t->p->grad;
        for (size_t i = 0; i < total; i++) {
            const dg_real gi = g[i];
            g[i] = t->adam.step ? 2.0f * gi - t->prev_g[i] : gi;
            t->prev_g[i] = gi;
        }
        *grad_norm = clip_step(t, lr);
        return DG_OK;
    }
    memcpy(t->save_w, t->p->data, total * sizeof(dg_real));
    memcpy(t->save_m, t->adam.m, total * sizeof(dg_real));
    memcpy(t->save_v, t->adam.v, total * sizeof(dg_real));
    const int64_t step = t->adam.step;
    *grad_norm = clip_step(t, lr);
    double loss, flops;
    dg_real terms[DG_LOSS_MAX_TERMS];
    dg_status st = dg__trainer_run_shards(t, t->p, t->state0, t->aux, NULL, &loss, terms, &flops, e);
    if (st != DG_OK) return st;
    zero_sum(t, t->p);
    memcpy(t->p->data, t->save_w, total * sizeof(dg_real));
    memcpy(t->adam.m, t->save_m, total * sizeof(dg_real));
    memcpy(t->adam.v, t->save_v, total * sizeof(dg_real));
    t->adam.step = step;
    if (!isfinite(loss) || !grads_finite(t->p)) return DG_OK;  /* keep the point; the guard sees the next */
    clip_step(t, lr);
    return DG_OK;
}

/* dg_best_responses' episodes: the trainer's shards, threads and fixed-order sums */
static dg_status batch_episode(void *user, dg_params *p, const dg_real *state, const dg_real *aux, int B, int backward,
                               double *j, dg_err *e) {
    dg_trainer *t = user;
    (void)B, (void)backward;  /* always the trainer's batch; the gradient comes with the loss */
    dg_real terms[DG_LOSS_MAX_TERMS];
    double flops;
    return dg__trainer_run_shards(t, p, state, aux, NULL, j, terms, &flops, e);
}

/* A general-sum episode of the trainer's batch for dg_nash_conv: each player's cost and own gradient */
static dg_status batch_costs(void *user, dg_params *p, const dg_real *state, const dg_real *aux, int B, int backward,
                             double *costs, dg_err *e) {
    dg_trainer *t = user;
    (void)B, (void)backward;
    dg_real terms[DG_LOSS_MAX_TERMS];
    double j, flops;
    dg_status st = dg__trainer_run_shards(t, p, state, aux, NULL, &j, terms, &flops, e);
    for (int i = 0; i < t->mlp.n; i++) costs[i] = st == DG_OK ? dg_env_player_cost(t->env, i, terms) : NAN;
    return st;
}

/* Exploitability: freeze one player, train a best response of the other for
 * o.exploit_epochs epochs (dg_best_responses: a fresh Adam on a copy, its own batches), and
 * measure on a fixed batch how much the frozen player loses:
 *   pursuer: J(pursuer, best evader) - J(now);  evader: J(now) - J(best pursuer, evader).
 * Both are >= 0 up to noise and 0 at an equilibrium. A general-sum game: each player's NashConv
 * term (dg_nash_conv) on that batch (the training batch in open-loop mode: the plans are its).
 * The training RNG is untouched. */
static dg_status exploitability(dg_trainer *t, int epoch, double *ex, dg_err *e) {
    const dg_env *env = t->env;
    dg_rng xr;
    dg_rng_seed(&xr, t->o.seed * 7919u + (uint64_t)epoch);
    dg_status st = env->game->reset(env, &xr, t->o.batch, t->x_state, t->x_aux, e);
    if (st == DG_OK && env->general_sum) {
        size_t first[DG_MAX_PLAYERS];
        for (int i = 0; i < t->mlp.n; i++) first[i] = t->p->info[dg_policy_first_param(&t->mlp, i)].offset;
        const int own = t->o.open_loop;
        return dg_nash_conv(t->p, t->mlp.n, first, &t->o, t->o.exploit_epochs, batch_costs, t,
                            own ? t->state0 : t->x_state, own ? t->aux : t->x_aux, t->o.batch, NULL, ex, e);
    }
    double j0, jbr[2];
    if (st == DG_OK) st = batch_episode(t, t->p, t->x_state, t->x_aux, t->o.batch, 0, &j0, e);
    if (st == DG_OK)
        st = dg_best_responses(env, t->p, t->ev0, &t->o, t->o.exploit_epochs, &xr, batch_episode, t, t->x_state,
                               t->x_aux, t->o.batch, jbr, e);
    if (st != DG_OK) return st;
    ex[0] = jbr[0] - j0;
    ex[1] = j0 - jbr[1];
    return DG_OK;
}

/* The NaN guard, after an epoch whose loss or gradient (stats s, begun at t0 ms) is not finite:
 * never applies it; goes back to the last good state (the start's before any) at half the
 * learning rate, tells cb; DG_ERR_NONFINITE (the epoch kept in the metrics) after
 * train.nan_patience such epochs in a row, else DG_OK. */
static dg_status nan_guard(dg_trainer *t, dg_epoch_stats *s, double t0, dg_train_cb cb, void *user, dg_err *e) {
    const size_t total = t->p->total;
    memcpy(t->p->data, t->good_w, total * sizeof(dg_real));
    memcpy(t->adam.m, t->good_m, total * sizeof(dg_real));
    memcpy(t->adam.v, t->good_v, total * sizeof(dg_real));
    t->adam.step = t->good_step;
    t->lr_scale *= 0.5;
    t->nan_run++;
    char what[160];
    nonfinite_what(t, s, what, sizeof what);
    s->grad_norm = NAN;
    s->lr = t->o.lr * t->lr_scale;
    s->ms = 1e3 * dg_clock_s() - t0;
    if (cb) {
        dg_train_event ev = {.kind = DG_TRAIN_EV_NAN, .stats = s, .lr = s->lr, .param = what};
        cb(&ev, user);
    }
    if (t->nan_run < t->o.nan_patience) return DG_OK;
    t->rows[t->nrows++].s = *s;
    t->last = *s;
    t->epoch = s->epoch;
    char kept[64] = "the initial parameters";
    if (t->good_step > 0) snprintf(kept, sizeof kept, "those after Adam step %lld", (long long)t->good_step);
    return dg_err_set(e, DG_ERR_NONFINITE, "epoch %d: %s, %d epochs in a row (the learning rate halved each "
                      "time, to %g); the files keep %s", s->epoch, what, t->nan_run, s->lr, kept);
}

/* The files of a finished epoch: a snapshot and metrics.csv at snapshot epochs and the last;
 * resume.safetensors at snapshot epochs and every train.resume_every (the end writes its own). */
static dg_status epoch_files(dg_trainer *t, int epoch, dg_train_cb cb, void *user, dg_err *e) {
    const int last = epoch == t->o.epochs;
    dg_status st = DG_OK;
    if (is_snapshot_epoch(&t->o, epoch) || last) {
        char name[64];
        snprintf(name, sizeof name, "epoch_%04d.safetensors", epoch);
        if ((st = dg__trainer_write_snapshot(t, name, epoch, cb, user, e)) != DG_OK) return st;
        if ((st = dg__trainer_write_metrics(t, e)) != DG_OK) return st;
    }
    if (!last && (is_snapshot_epoch(&t->o, epoch) || (t->o.resume_every > 0 && epoch % t->o.resume_every == 0)))
        st = dg__trainer_write_resume(t, e);
    return st;
}

int dg_trainer_epoch(const dg_trainer *t) { return t->epoch; }

dg_status dg_trainer_run(dg_trainer *t, dg_train_cb cb, void *user, volatile sig_atomic_t *stop,
                         dg_err *e) {
    const dg_env *env = t->env;
    const size_t total = t->p->total;
    dg_status st = DG_OK;
    if (t->o.epochs + 1 > t->caprows) {
        metrics_row *r = realloc(t->rows, (size_t)(t->o.epochs + 1) * sizeof *r);
        if (!r) return dg_err_set(e, DG_ERR_NOMEM, "out of memory for metrics");
        t->rows = r;
        t->caprows = t->o.epochs + 1;
    }
    if (!t->good_set) {  /* the guard's first fallback: the state training starts from */
        memcpy(t->good_w, t->p->data, total * sizeof(dg_real));
        memcpy(t->good_m, t->adam.m, total * sizeof(dg_real));
        memcpy(t->good_v, t->adam.v, total * sizeof(dg_real));
        t->good_step = t->adam.step;
        t->good_set = 1;
    }
    for (int epoch = t->epoch + 1; epoch <= t->o.epochs; epoch++) {
        int halt = stop && *stop;
        if (dg_dist_size() > 1) halt = dg_dist_or(halt);   /* every rank stops after the same epoch */
        if (halt) {
            st = dg_err_set(e, DG_ERR_INTERRUPTED, "interrupted after epoch %d", epoch - 1);
            break;
        }
        const double t0 = 1e3 * dg_clock_s();
        dg_epoch_stats s = {.epoch = epoch};
        if ((!t->o.fixed_batch || epoch == 1) &&
            (st = env->game->reset(env, &t->rng, t->o.batch, t->state0, t->aux, e)) != DG_OK)
            break;
        if ((st = dg__trainer_run_shards(t, t->p, t->state0, t->aux, t->traj, &s.loss, s.terms, &s.flops, e)) != DG_OK)
            break;
        zero_sum(t, t->p);
        if (t->o.nan_epoch == epoch) s.loss = NAN;  /* fault injection (tests) */
        if (epoch == 1) {
            if (cb) {
                dg_state_grads sg;
                if ((st = dg__trainer_state_grads(t, &sg, e)) != DG_OK) break;
                dg_train_event ev = {.kind = DG_TRAIN_EV_INIT, .stats = &s, .state_grads = &sg};
                cb(&ev, user);
            }
            int zero[64];
            int nz = dg_params_find_zero_grads(t->p, zero, 64);
            for (int i = 0; i < nz && i < 64 && cb; i++) {
                dg_train_event ev = {.kind = DG_TRAIN_EV_ZERO_GRAD, .param = t->p->info[zero[i]].name};
                cb(&ev, user);
            }
        }
        /* the game's metrics, from the states of this epoch's own rollout */
        for (int i = 0; i < env->nmetrics; i++) s.metrics[i] = NAN;
        if (env->nmetrics) env->game->metrics(env, t->traj, t->aux, t->o.batch, env->horizon, s.metrics);
        if (!isfinite(s.loss) || !grads_finite(t->p)) {
            if ((st = nan_guard(t, &s, t0, cb, user, e)) != DG_OK) break;
        } else {
            t->nan_run = 0;
            memcpy(t->good_w, t->p->data, total * sizeof(dg_real));
            memcpy(t->good_m, t->adam.m, total * sizeof(dg_real));
            memcpy(t->good_v, t->adam.v, total * sizeof(dg_real));
            t->good_step = t->adam.step;
            double warm = t->o.warmup > 0 && epoch < t->o.warmup ? (double)epoch / t->o.warmup : 1.0;
            s.lr = t->o.lr * t->lr_scale * warm;
            if ((st = update(t, s.lr, &s.grad_norm, e)) != DG_OK) break;
            s.ms = 1e3 * dg_clock_s() - t0;
        }
        for (int i = 0; i < DG_MAX_PLAYERS; i++)
            s.exploit[i] = NAN, s.cost[i] = env->general_sum && i < t->mlp.n ? dg_env_player_cost(env, i, s.terms) : NAN;
        if (t->mlp.n >= 2 && t->o.exploit_every > 0 && (epoch % t->o.exploit_every == 0 || epoch == t->o.epochs))
            if ((st = exploitability(t, epoch, s.exploit, e)) != DG_OK) break;
        t->rows[t->nrows++].s = s;
        t->last = s;
        t->epoch = epoch;
        if (cb) {
            dg_train_event ev = {.kind = DG_TRAIN_EV_EPOCH, .stats = &s};
            cb(&ev, user);
        }
        if (t->out_dir[0] && (st = epoch_files(t, epoch, cb, user, e)) != DG_OK) break;
    }
    if (t->out_dir[0] && (st == DG_OK || st == DG_ERR_INTERRUPTED || st == DG_ERR_NONFINITE)) {
        dg_err e2 = {0};
        dg_status s2 = dg__trainer_write_snapshot(t, "final.safetensors", t->last.epoch, cb, user, &e2);
        if (s2 == DG_OK) s2 = dg__trainer_write_resume(t, &e2);
        if (s2 == DG_OK) s2 = dg__trainer_write_metrics(t, &e2);
        if (s2 == DG_OK) s2 = dg__trainer_write_plot(t, &e2);
        if (s2 != DG_OK && st != DG_ERR_NONFINITE) {  /* the run's own failure is the one to tell */
            if (e) *e = e2;
            st = s2;
        }
    }
    return st;
}
