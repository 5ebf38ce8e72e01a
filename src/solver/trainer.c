/* The BPTT training loop: rollout, one backward, clipping, Adam, warmup,
 * snapshots, NaN guard, metrics. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>  /* malloc_trim */
#endif

#include <omp.h>

#include "difgames/checkpoint.h"
#include "difgames/dist.h"
#include "difgames/fileio.h"
#include "difgames/image.h"
#include "difgames/keys.h"
#include "difgames/losses.h"
#include "difgames/safetensors.h"
#include "difgames/trainer.h"
#include "io/csv.h"

#define MAX_THREADS 64
#define ROW_COLS (2 + DG_LOSS_MAX_TERMS + 4 + DG_MAX_METRICS + 2)  /* epoch loss, terms, grad_norm lr ms flops, metrics, exploit */
#define DG_TAPE_BUDGET (512.0 * 1024 * 1024)  /* bytes of tape before auto checkpointing */
#define LOSS_PLOT_W 800  /* loss.png */
#define LOSS_PLOT_H 500

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

/* Floats of parameters the policies of env with these hidden sizes have (exact). */
static double param_count(const dg_env *env, const int *hidden, int nhidden) {
    double n = 0;
    if (nhidden < 0) {  /* open-loop plans (dg_policy_create_plan) */
        const int steps = env->plan_steps > 0 && env->plan_steps < env->horizon ? env->plan_steps : env->horizon;
        return (double)steps * (env->act_dim + (env->nplayers > 1 ? env->act2_dim : 0));
    }
    for (int pl = 0; pl < (env->nplayers > 1 ? 2 : 1); pl++) {
        int in = pl ? env->obs2_dim : env->obs_dim;
        for (int i = 0; i <= nhidden; i++) {
            const int out = i < nhidden ? hidden[i] : pl ? env->act2_dim : env->act_dim;
            n += (double)in * out + out;
            in = out;
        }
    }
    return n;
}

/* Tape bytes of one batch row a step, from what a row's floats are (the arena peak of
 * dg_episode_grad at B = 64 and 128 on every shipped game, tests/test_memory.c keeps it honest):
 * about 2-3 floats per policy width (forward value, gradient, tanh's saved output), 8-9 per float
 * of episode constants (pixel: the target image, its rendered twin, the difference, their
 * gradients) and a dozen per state float. What a step takes whatever the batch (tensor headers,
 * alignment, a game's small tensors: billiards' contacts, racing's track projection; from 8 KiB
 * to over 30 KiB) is measured on the game itself (game_tape), else TAPE_PER_STEP; each hidden
 * layer adds TAPE_PER_LAYER of it (its nodes' headers) a player. */
#define TAPE_PER_POLICY_WIDTH 3.0
#define TAPE_PER_AUX          9.0
#define TAPE_PER_STATE        12.0
#define TAPE_PER_STEP         (12.0 * 1024)
#define TAPE_PER_LAYER        2048.0
#define TAPE_MEASURE_MAX      (32.0 * 1024 * 1024)  /* measure a game only when 32 rows of 2 steps take less */

/* The per-row part of the tape of one step, in bytes (the formula above). */
static double tape_row(const dg_env *env, const int *hidden, int nhidden) {
    double pw = 0;
    for (int pl = 0; pl < (env->nplayers > 1 ? 2 : 1); pl++) {
        pw += pl ? env->obs2_dim + env->act2_dim : env->obs_dim + env->act_dim;
        for (int i = 0; i < nhidden; i++) pw += hidden[i];  /* nhidden < 0: plans, no MLP */
    }
    return (TAPE_PER_POLICY_WIDTH * pw + TAPE_PER_AUX * env->aux_dim + TAPE_PER_STATE * env->state_dim) *
           sizeof(dg_real);
}

/* The game's own tape, measured: episodes of 16 and 32 rows, 1 and 2 steps each, under a policy
 * without hidden layers (with their backward when backward is 1), on an arena of its own. At
 * multiples of 16 rows every (B, c) buffer fills its 64-byte alignment, so the arena is exactly
 * linear in rows and steps: g gets the bytes a step takes (fixed, and per row) and those the
 * episode takes besides its steps (fixed, per row; the first step's one-time work). Returns 0
 * (nothing measured) when 32 rows of 2 steps would pass TAPE_MEASURE_MAX by the formula, or the
 * game fails to reset or step. */
typedef struct game_tape_fit { double step, step_row, base, base_row; } game_tape_fit;

static int game_tape(const dg_env *env, int backward, game_tape_fit *g) {
    const double players = env->nplayers > 1 ? 2 : 1;
    if (2 * (32 * tape_row(env, NULL, 0) + TAPE_PER_STEP * players) + 32 * env->aux_dim * (double)sizeof(dg_real) > TAPE_MEASURE_MAX)
        return 0;
    const int Bs[2] = {16, 32};
    dg_err e = {0};
    dg_policy pol;
    dg_params *p = NULL;
    dg_real *st = malloc((size_t)32 * env->state_dim * sizeof(dg_real));
    dg_real *aux = malloc((size_t)32 * (env->aux_dim ? env->aux_dim : 1) * sizeof(dg_real));
    /* one arena for the four episodes, twice the formula's guess (grown if short): after a run
     * on a reset arena, what it used is that run's peak */
    const double guess = 2 * 2 * (32 * tape_row(env, NULL, 0) + TAPE_PER_STEP * players) + (1 << 20);
    dg_ctx *ctx = dg_ctx_create((size_t)guess);
    double m[2][2] = {{0, 0}, {0, 0}};  /* [rows][steps] */
    int ok = st && aux && ctx && dg_policy_create(env, NULL, 0, &pol, &p, &e) == DG_OK;
    dg_rng rng;
    dg_rng_seed(&rng, 1);
    if (ok) dg_policy_reset_params(&pol, p, &rng);
    ok = ok && env->game->reset(env, &rng, 32, st, aux, &e) == DG_OK;
    for (int b = 0; b < 2 && ok; b++)
        for (int k = 0; k < 2 && ok; k++) {
            dg_env w = *env;
            w.horizon = 1 + k;
            for (int tries = 0;; tries++) {
                dg_ctx_reset(ctx);
                dg_tensor *l = dg_rollout(ctx, &w, &pol, p, st, aux, Bs[b], 1.0f / (dg_real)Bs[b], NULL, NULL, Bs[b]);
                if (l && backward) dg_backward(ctx, l);
                if (dg_ctx_status(ctx) != DG_ERR_ARENA_FULL || tries == 4) break;
                if (dg_ctx_reserve(&ctx, 4 * dg_ctx_capacity(ctx)) != DG_OK) break;
            }
            ok = dg_ctx_status(ctx) == DG_OK;
            m[b][k] = (double)dg_ctx_used(ctx);
        }
    if (ok) {
        const double s16 = m[0][1] - m[0][0], s32 = m[1][1] - m[1][0];
        const double b16 = m[0][0] - s16, b32 = m[1][0] - s32;
        g->step_row = (s32 - s16) / 16;
        g->step = s16 - 16 * g->step_row;
        g->base_row = (b32 - b16) / 16;
        g->base = b16 - 16 * g->base_row;
        ok = g->step > 0 && g->step_row >= 0;  /* a game whose steps take no tape is not linear */
        if (g->base_row < 0) g->base_row = 0;
        if (g->base < 0) g->base = 0;
    }
    dg_ctx_free(ctx);
    dg_params_free(p);
    free(st);
    free(aux);
#ifdef __GLIBC__
    malloc_trim(0);  /* the measurement's pages back to the system, not left resident under the job */
#endif
    return ok;
}

double dg_rollout_memory(const dg_env *env, const int *hidden, int nhidden, double B, double steps,
                         int backward) {
    const double players = env->nplayers > 1 ? 2 : 1;
    /* the forward's tape: measured 55-60 % of what forward and backward took before backward
     * reused the gradient buffers of the nodes it has passed (dg__grad); with that reuse the
     * backward adds a few gradients in flight */
    const double fwd = backward ? 0.65 : 0.6;
    const double P = fwd * param_count(env, hidden, nhidden) * sizeof(dg_real) + 65536.0;
    const double formula = steps * fwd * (B * tape_row(env, hidden, nhidden) + TAPE_PER_STEP * players) + P;
    game_tape_fit g;
    if (!game_tape(env, backward, &g)) return formula;
    /* the game and a policy without hidden layers as measured, at a multiple of 16 rows (fewer
     * fill their alignment all the same); the hidden layers' floats and headers by the formula.
     * Never below the formula: what a job holds besides its arena (pixel's render caches, the
     * heap the measurement leaves) has been covered by its margin. */
    const double B16 = ceil(B / 16) * 16;
    double hid = 0;
    for (int i = 0; i < nhidden; i++) hid += hidden[i];
    const double layers = steps * players * (fwd * B * TAPE_PER_POLICY_WIDTH * hid * sizeof(dg_real) +
                                             (nhidden > 0 ? nhidden : 0) * TAPE_PER_LAYER);
    const double measured = steps * (g.step + B16 * g.step_row) + g.base + B16 * g.base_row + layers + P;
    return measured > formula ? measured : formula;
}

/* The state-gradient diagnostic of a trainer (trainer_state_grads): the first 16 rows of the
 * batch, fewer when their whole episode's tape would pass STATE_GRAD_BUDGET (0: not measured), and
 * *bytes of that arena. The same for every thread count. */
#define STATE_GRAD_ROWS 16
#define STATE_GRAD_BUDGET (64.0 * 1024 * 1024)
static int state_grad_rows(const dg_env *env, const dg_train_opts *o, double *bytes) {
    const int hid = o->open_loop ? -1 : o->nhidden;
    int rows = o->batch < STATE_GRAD_ROWS ? o->batch : STATE_GRAD_ROWS;
    double b = 0;
    for (; rows > 0; rows /= 2) {
        b = dg_rollout_memory(env, o->hidden, hid, rows, env->horizon, 1) + (env->horizon + 1.0) * sizeof(void *) +
            65536.0;
        if (b <= STATE_GRAD_BUDGET) break;
    }
    *bytes = rows ? b : 0;
    return rows;
}

/* The checkpointed-BPTT segment length a trainer with o uses on windows of T steps (the horizon,
 * or train.truncate's): checkpoint_every, or 0 auto: none unless one window's tape would pass
 * DG_TAPE_BUDGET, then ceil(sqrt(T)); 0 when the window is one tape. */
static int tape_every(const dg_env *env, const dg_train_opts *o, int T) {
    int every = o->checkpoint_every;
    if (every == 0 && dg_rollout_memory(env, o->hidden, o->nhidden, o->batch, T, 1) > DG_TAPE_BUDGET)
        every = (int)ceil(sqrt((double)T));
    return every > 0 && every < T ? every : 0;
}

double dg_train_memory(const dg_env *env, const dg_train_opts *o, dg_mem_parts *parts) {
    const double B = o->batch, H = env->horizon, S = env->state_dim, X = env->aux_dim;
    const double shards = o->threads < o->batch ? (o->threads > 0 ? o->threads : 1) : o->batch;
    const double two = env->nplayers > 1;
    dg_mem_parts m = {0};
    /* weights, gradient, Adam m and v, the NaN guard's copies (3), a gradient per shard;
     * two players: the previous gradient and three more copies; a resume file's writer copies
     * six of them while it writes */
    m.params = param_count(env, o->hidden, o->open_loop ? -1 : o->nhidden) * sizeof(dg_real) * (13 + shards + 4 * two);
    /* steps on one tape: all of them, a truncation window, or a segment (checkpointed BPTT) */
    const int T = o->truncate > 0 && o->truncate < H ? o->truncate : (int)H;
    double steps = T;
    const int every = tape_every(env, o, T);
    if (every > 0) steps = every;
    m.tape = shards * dg_rollout_memory(env, o->hidden, o->nhidden, ceil(B / shards), steps, 1);
    double diag;  /* shard 0's arena grows to the state-gradient diagnostic's if that is larger */
    state_grad_rows(env, o, &diag);
    const double tape0 = m.tape / shards + (1 << 20);
    if (diag > tape0) m.tape += diag - tape0;
    /* initial batch and its constants (two players: a second copy), the trajectory for the
     * metrics, the checkpointed states and the state between truncation windows */
    m.data = B * (S + X) * sizeof(dg_real) * (2 + two);  /* and the resume file's copy */
    if (env->game->metrics) m.data += (H + 1) * B * S * sizeof(dg_real);
    m.data += dg_episode_saved((int)H, every, o->truncate) * B * S * sizeof(dg_real);
    /* a metrics row an epoch, kept for metrics.csv and the resume file (packed, then copied) */
    m.log = (double)o->epochs * (sizeof(dg_epoch_stats) + 2 * ROW_COLS * sizeof(double) + 64);
    /* loss.png at the end: the plot, and its points copied into floats */
    m.log += dg_plot_memory(LOSS_PLOT_W, LOSS_PLOT_H, (double)o->epochs * (env->nterms + 1)) +
             (double)o->epochs * (env->nterms + 2) * sizeof(dg_real);
    m.total = m.params + m.tape + m.data + m.log;
    if (parts) *parts = m;
    return m.total;
}

double dg_train_output_bytes(const dg_env *env, const dg_train_opts *o) {
    const double P = param_count(env, o->hidden, o->open_loop ? -1 : o->nhidden) * sizeof(dg_real);
    int snaps = 1;  /* the final snapshot, and each snapshot epoch within the run */
    for (int i = 0; i < o->nsnapshots; i++) snaps += o->snapshots[i] <= o->epochs;
    const double batch = (double)o->batch * (env->state_dim + env->aux_dim) * sizeof(dg_real);
    /* snapshots (+ final.safetensors), resume.safetensors (parameters, Adam, the guard's copies,
     * the batch, metrics rows), metrics.csv (a line an epoch), loss.png, the config in each */
    return snaps * (P + 16384) + 6 * P + batch + (double)o->epochs * (ROW_COLS * 8 + 400) + 2e6;
}

const char *dg_train_memory_key(const dg_env *env, const dg_mem_parts *m) {
    if (m->log >= m->params && m->log >= m->tape && m->log >= m->data) return "train.epochs";
    if (m->params >= m->tape && m->params >= m->data) return "policy.hidden";
    if (env->size_key && env->aux_dim > 64) return env->size_key;
    return "train.batch";
}

/* ------------------------------------------------------------ rollout */

/* Steps t0+1..t1 from state on ctx, adding each step's terms to loss; traj
 * (if not NULL) gets the states, row t at traj + t·ld·S; keep (if not NULL)
 * the state tensors, keep[t] after step t. Returns the state after step t1,
 * NULL on error. */
static dg_tensor *run_steps(dg_ctx *ctx, const dg_env *env, const dg_policy *pol, dg_params *p,
                            dg_tensor *state, dg_tensor *ax, int t0, int t1, dg_real inv_batch,
                            dg_loss *loss, dg_real *traj, int ld, dg_tensor **keep) {
    const dg_game *g = env->game;
    const int S = env->state_dim, B = state->shape[0];
    for (int t = t0 + 1; t <= t1; t++) {
        dg_tensor *obs = pol->plan_steps ? NULL : g->observe(ctx, env, state, ax);
        dg_tensor *act = dg_policy_act(ctx, pol, p, 0, t, obs, B);
        if (pol->n == 2) {  /* the evader's action follows the pursuer's: [a, b] */
            dg_tensor *b = dg_policy_act(ctx, pol, p, 1, t, pol->plan_steps ? NULL : g->observe2(ctx, env, state, ax), B);
            act = dg_concat(ctx, (dg_tensor *[]){act, b}, 2, 1);
        }
        state = g->step(ctx, env, state, ax, act);
        if (!state) return NULL;
        dg_tensor *tm[DG_LOSS_MAX_TERMS] = {0};
        g->step_cost(ctx, env, state, ax, act, inv_batch, tm);
        dg_env_add_terminal(ctx, env, t, state, ax, inv_batch, tm);
        if (dg_ctx_status(ctx) != DG_OK) return NULL;
        dg_loss_add(ctx, loss, tm);
        if (traj) memcpy(traj + (size_t)t * ld * S, state->data, (size_t)B * S * sizeof(dg_real));
        if (keep) keep[t] = state;
    }
    return state;
}

dg_tensor *dg_rollout(dg_ctx *ctx, const dg_env *env, const dg_policy *pol, dg_params *p,
                      const dg_real *state0, const dg_real *aux, int B, dg_real inv_batch,
                      dg_real *terms, dg_real *traj, int traj_ld) {
    const int S = env->state_dim;
    dg_tensor *state = dg_from(ctx, 2, (int[]){B, S}, state0);
    dg_tensor *ax = env->aux_dim ? dg_from(ctx, 2, (int[]){B, env->aux_dim}, aux) : NULL;
    if (!state) return NULL;
    if (traj_ld < B) traj_ld = B;
    if (traj) memcpy(traj, state0, (size_t)B * S * sizeof(dg_real));
    dg_loss loss;
    dg_loss_begin(&loss, env->nterms, env->term_weights);
    if (!run_steps(ctx, env, pol, p, state, ax, 0, env->horizon, inv_batch, &loss, traj, traj_ld, NULL))
        return NULL;
    return dg_loss_finish(ctx, &loss, terms);
}

/* The accumulators' values after a segment, to seed the next one. */
static void loss_values(const dg_loss *l, dg_real *acc) {
    for (int i = 0; i < l->nterms; i++) acc[i] = l->acc[i]->data[0];
}

/* Seeds l as if steps steps had been added with sums acc (constants). */
static void loss_seed(dg_ctx *ctx, dg_loss *l, const dg_real *acc, int steps) {
    for (int i = 0; i < l->nterms; i++) l->acc[i] = dg_scalar(ctx, acc[i]);
    l->steps = steps;
}

int dg_episode_saved(int H, int every, int truncate) {
    const int T = truncate > 0 && truncate < H ? truncate : H;  /* steps of one window */
    return (every > 0 && every < T ? (T + every - 1) / every : 0) + (T < H);
}

/* Loss and gradient of the window of steps T0+1..T1 from the state start (a constant: the
 * gradient stops there), on ctx; every = k < T1 - T0: checkpointed BPTT inside it, the segment
 * starts in saved (ceil((T1 - T0)/k) blocks of (B, S)). acc holds the loss sums of steps 1..T0 on
 * entry (unused when T0 = 0), of steps 1..T1 on return. The last window (T1 = H) sets *loss_out
 * and terms; the others copy the state after step T1 into end. The float operations are those
 * of the whole episode's tape, so the loss is the same to the bit. */
static dg_status window_grad(dg_ctx *ctx, const dg_env *env, const dg_policy *pol, dg_params *p,
                             const dg_real *start, const dg_real *aux, int B, dg_real inv_batch, int T0, int T1,
                             int every, dg_real *saved, dg_real *acc, dg_real *end, double *loss_out, dg_real *terms,
                             dg_real *traj, int traj_ld) {
    const int H = env->horizon, S = env->state_dim, last = T1 == H;
    if (every <= 0 || every >= T1 - T0) {  /* the window on one tape: forward, then its backward */
        dg_ctx_reset(ctx);
        dg_tensor *st = dg_from(ctx, 2, (int[]){B, S}, start);
        dg_tensor *ax = env->aux_dim ? dg_from(ctx, 2, (int[]){B, env->aux_dim}, aux) : NULL;
        if (!st) return dg_ctx_status(ctx);
        dg_loss l;
        dg_loss_begin(&l, env->nterms, env->term_weights);
        if (T0 > 0) loss_seed(ctx, &l, acc, T0);
        dg_tensor *e1 = run_steps(ctx, env, pol, p, st, ax, T0, T1, inv_batch, &l, traj, traj_ld, NULL);
        if (!e1) return dg_ctx_status(ctx);
        loss_values(&l, acc);
        if (!last) memcpy(end, e1->data, (size_t)B * S * sizeof(dg_real));
        l.steps = H;  /* scale by 1/H, as the full episode does (the last window counts H already) */
        dg_tensor *lt = dg_loss_finish(ctx, &l, last ? terms : NULL);
        if (!lt) return dg_ctx_status(ctx);
        if (last) *loss_out = lt->data[0];
        return dg_backward(ctx, lt);
    }
    /* Checkpointed BPTT. Forward: segment by segment on a rewound arena,
     * keeping the state at each segment start (saved, (nseg, B, S)) and the
     * running loss sums. The float operations are those of the full tape, so
     * the loss is the same to the bit. */
    const int nseg = (T1 - T0 + every - 1) / every;
    memcpy(saved, start, (size_t)B * S * sizeof(dg_real));
    for (int j = 0; j < nseg; j++) {
        const int t0 = T0 + j * every, t1 = t0 + every < T1 ? t0 + every : T1;
        dg_ctx_reset(ctx);
        dg_tensor *st = dg_from(ctx, 2, (int[]){B, S}, saved + (size_t)j * B * S);
        dg_tensor *ax = env->aux_dim ? dg_from(ctx, 2, (int[]){B, env->aux_dim}, aux) : NULL;
        if (!st) return dg_ctx_status(ctx);
        dg_loss l;
        dg_loss_begin(&l, env->nterms, env->term_weights);
        if (t0 > 0) loss_seed(ctx, &l, acc, t0);
        dg_tensor *e1 = run_steps(ctx, env, pol, p, st, ax, t0, t1, inv_batch, &l, traj, traj_ld, NULL);
        if (!e1) return dg_ctx_status(ctx);
        loss_values(&l, acc);
        if (j + 1 < nseg) memcpy(saved + (size_t)(j + 1) * B * S, e1->data, (size_t)B * S * sizeof(dg_real));
        else if (!last) memcpy(end, e1->data, (size_t)B * S * sizeof(dg_real));
        else {
            dg_tensor *lt = dg_loss_finish(ctx, &l, terms);
            if (!lt) return dg_ctx_status(ctx);
            *loss_out = lt->data[0];
        }
    }
    /* Backward: last segment first. Each is rebuilt from its saved start
     * state (a leaf needing a gradient, except the window's first); its loss
     * is its own weighted terms plus sum(end · G), G the gradient that the
     * later segments sent back to its end state. Gradients reach every node
     * in the order of the full tape, so they are the same to the bit. */
    dg_real *adj = NULL;  /* G, (B, S), in the arena of the segment being built */
    dg_real *g_next = NULL;
    for (int j = nseg - 1; j >= 0; j--) {
        const int t0 = T0 + j * every, t1 = t0 + every < T1 ? t0 + every : T1;
        if (g_next) {  /* keep G across the arena rewind */
            memcpy(saved + (size_t)(j + 1) * B * S, g_next, (size_t)B * S * sizeof(dg_real));
            adj = saved + (size_t)(j + 1) * B * S;  /* that start state is no longer needed */
        }
        dg_ctx_reset(ctx);
        dg_tensor *st = dg_from(ctx, 2, (int[]){B, S}, saved + (size_t)j * B * S);
        dg_tensor *ax = env->aux_dim ? dg_from(ctx, 2, (int[]){B, env->aux_dim}, aux) : NULL;
        if (!st) return dg_ctx_status(ctx);
        if (j > 0) dg_set_requires_grad(st);
        dg_loss l;
        dg_loss_begin(&l, env->nterms, env->term_weights);
        if (t0 > 0) loss_seed(ctx, &l, acc, t0);  /* constants: no effect on gradients */
        l.steps = t0;
        dg_tensor *e1 = run_steps(ctx, env, pol, p, st, ax, t0, t1, inv_batch, &l, NULL, 0, NULL);
        if (!e1) return dg_ctx_status(ctx);
        l.steps = H;  /* scale by 1/H, as the full episode does */
        dg_tensor *seg = dg_loss_finish(ctx, &l, NULL);
        if (adj) {
            dg_tensor *G = dg_from(ctx, 2, (int[]){B, S}, adj);
            seg = dg_add(ctx, seg, dg_sum(ctx, dg_mul(ctx, e1, G)));
        }
        if (!seg || dg_backward(ctx, seg) != DG_OK) return dg_ctx_status(ctx);
        g_next = j > 0 ? st->grad : NULL;
        if (j > 0 && !g_next) {  /* the loss does not depend on this segment's start */
            memset(saved + (size_t)j * B * S, 0, (size_t)B * S * sizeof(dg_real));
            g_next = saved + (size_t)j * B * S;
        }
    }
    return DG_OK;
}

dg_status dg_episode_grad(dg_ctx *ctx, const dg_env *env, const dg_policy *pol, dg_params *p,
                          const dg_real *state0, const dg_real *aux, int B, dg_real inv_batch,
                          int every, int truncate, dg_real *saved, double *loss_out, dg_real *terms,
                          dg_real *traj, int traj_ld) {
    const int H = env->horizon, S = env->state_dim;
    if (traj_ld < B) traj_ld = B;
    const int T = truncate > 0 && truncate < H ? truncate : H;  /* steps of one window */
    if (T == H && (every <= 0 || every >= H)) {  /* the whole episode on one tape */
        dg_ctx_reset(ctx);
        dg_tensor *l = dg_rollout(ctx, env, pol, p, state0, aux, B, inv_batch, terms, traj, traj_ld);
        if (l) dg_backward(ctx, l);
        *loss_out = l && dg_ctx_status(ctx) == DG_OK ? l->data[0] : NAN;
        return dg_ctx_status(ctx);
    }
    /* Truncated BPTT (T < H): windows of T steps, each rolled out from the state the last one
     * ended in and differentiated on its own, that start state a constant. The checkpointed
     * segments (if any) use the first blocks of saved, the state between windows the last. */
    dg_real acc[DG_LOSS_MAX_TERMS] = {0};
    dg_real *end = T < H ? saved + (size_t)(dg_episode_saved(H, every, truncate) - 1) * B * S : NULL;
    if (traj) memcpy(traj, state0, (size_t)B * S * sizeof(dg_real));
    for (int T0 = 0; T0 < H; T0 += T) {
        const int T1 = T0 + T < H ? T0 + T : H;
        const dg_status st = window_grad(ctx, env, pol, p, T0 ? end : state0, aux, B, inv_batch, T0, T1, every,
                                         saved, acc, end, loss_out, terms, traj, traj_ld);
        if (st != DG_OK) return st;
    }
    return DG_OK;
}

/* ------------------------------------------------------------ state gradients */

dg_status dg_episode_state_grads(dg_ctx *ctx, const dg_env *env, const dg_policy *pol, dg_params *p,
                         const dg_real *state0, const dg_real *aux, int B, dg_state_grads *r) {
    const int H = env->horizon, S = env->state_dim;
    memset(r, 0, sizeof *r);
    r->rows = B;
    dg_ctx_reset(ctx);
    dg_tensor **keep = dg_ctx_alloc(ctx, (size_t)(H + 1) * sizeof *keep);  /* keep[t]: the state after step t */
    dg_tensor *st = keep ? dg_from(ctx, 2, (int[]){B, S}, state0) : NULL;
    dg_tensor *ax = st && env->aux_dim ? dg_from(ctx, 2, (int[]){B, env->aux_dim}, aux) : NULL;
    if (!st || (env->aux_dim && !ax)) return dg_ctx_status(ctx);
    memset(keep, 0, (size_t)(H + 1) * sizeof *keep);
    dg_set_requires_grad(st);  /* the initial state too (t = 0) */
    keep[0] = st;
    dg_loss l;
    dg_loss_begin(&l, env->nterms, env->term_weights);
    if (!run_steps(ctx, env, pol, p, st, ax, 0, H, 1.0f / (dg_real)B, &l, NULL, 0, keep))
        return dg_ctx_status(ctx);
    dg_tensor *lt = dg_loss_finish(ctx, &l, NULL);
    for (int t = 1; t <= H; t++) dg_retain_grad(keep[t]);  /* intermediates: read after backward */
    if (!lt || dg_backward(ctx, lt) != DG_OK) return dg_ctx_status(ctx);
    /* 1, 2, 5, 10, 20, 50, ... steps back from the end, then the initial state */
    for (int k = 0, back = 1; r->n < DG_STATE_GRADS_MAX && back <= H; k++) {
        const dg_tensor *x = keep[H - back];
        double ss = 0.0;
        for (int64_t i = 0; x && x->grad && i < x->n; i++) ss += (double)x->grad[i] * x->grad[i];
        r->t[r->n] = H - back;
        r->norm[r->n++] = sqrt(ss);
        if (back == H) break;
        back = (k % 3 == 1 ? 5 : 2) * back / (k % 3 == 1 ? 2 : 1);  /* 1 2 5 10 20 50 100 ... */
        if (back > H) back = H;
    }
    /* growth against the latest time with a gradient (the last steps may not reach the loss) */
    int ref = 0;
    while (ref < r->n && r->norm[ref] == 0.0) ref++;
    for (int i = ref + 1; i < r->n; i++)
        if (r->norm[i] / r->norm[ref] > r->growth) {
            r->growth = r->norm[i] / r->norm[ref];
            r->growth_t = r->t[i];
        }
    r->ref = ref < r->n ? ref : -1;
    for (int i = ref; i < r->n && r->norm[i] <= 10.0 * r->norm[ref]; i++) r->window = env->horizon - r->t[i];
    r->chaotic = r->growth > DG_STATE_GRADS_CHAOS;
    return DG_OK;
}

/* ------------------------------------------------------------ trainer */

typedef struct shard {
    dg_ctx *ctx;
    dg_real  *grad;                    /* (params total) this shard's gradient */
    dg_real  *saved;                   /* checkpointed BPTT: segment start states */
    int     row0, rows;
    double  loss;
    dg_real   terms[DG_LOSS_MAX_TERMS];
    dg_status status;
    char    err[256];
} shard;

typedef struct metrics_row {
    dg_epoch_stats s;
} metrics_row;

struct dg_trainer {
    const dg_env *env;
    dg_train_opts o;
    dg_policy   mlp;
    dg_params  *p;
    dg_adam     adam;
    dg_rng      rng;
    int         nshards;              /* over every MPI rank (ranks x threads, at most the batch) */
    int         sh_lo, sh_hi;         /* this rank's shards [sh_lo, sh_hi) (all of them alone)   */
    unsigned char *xbuf;              /* under MPI: the shards' results as they travel           */
    size_t      xcap;
    shard       shards[MAX_THREADS];
    dg_real      *state0, *aux, *traj;  /* (B,S), (B,A), (H+1,B,S) */
    dg_real      *good_w, *good_m, *good_v;  /* last parameters that gave a finite loss */
    int64_t     good_step;
    int         good_set;              /* good_* hold a state (the start's, a resume's, an epoch's) */
    int         nan_run;               /* epochs in a row the NaN guard fired */
    double      lr_scale;              /* halved by the NaN guard */
    char        out_dir[DG_PATH_MAX - 64]; /* leaves room for "/<name>" under DG_PATH_MAX */
    char       *config_yaml;
    metrics_row *rows;
    int          nrows, caprows;
    dg_epoch_stats last;
    size_t       arena_peak;
    int          epoch;                /* epochs done (restored on resume)            */
    size_t       ev0;                  /* two players: the evader's first parameter    */
    dg_real       *prev_g;               /* optimistic GDA: last epoch's gradient        */
    dg_real       *save_w, *save_m, *save_v;  /* extragradient: the point it leaves from */
    dg_real       *x_state, *x_aux;      /* exploitability: its evaluation batch         */
    int          sg_rows;              /* the state-gradient diagnostic's rows (0: none) */
    double       sg_bytes;             /* and its arena                                 */
};

void dg_trainer_free(dg_trainer *t) {
    if (!t) return;
    for (int i = 0; i < t->nshards; i++) {
        dg_ctx_free(t->shards[i].ctx);
        free(t->shards[i].grad);
        free(t->shards[i].saved);
    }
    free(t->xbuf);
    dg_adam_free(&t->adam);
    dg_params_free(t->p);
    free(t->state0);
    free(t->aux);
    free(t->traj);
    free(t->good_w);
    free(t->good_m);
    free(t->good_v);
    free(t->config_yaml);
    free(t->rows);
    free(t->prev_g);
    free(t->save_w);
    free(t->save_m);
    free(t->save_v);
    free(t->x_state);
    free(t->x_aux);
    free(t);
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
    const size_t total = t->p->total;
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
    t->state0 = malloc((size_t)B * S * sizeof(dg_real));
    t->aux = malloc((size_t)B * (env->aux_dim ? env->aux_dim : 1) * sizeof(dg_real));
    t->traj = env->game->metrics ? malloc((size_t)(H + 1) * B * S * sizeof(dg_real)) : NULL;
    t->good_w = malloc(total * sizeof(dg_real));
    t->good_m = malloc(total * sizeof(dg_real));
    t->good_v = malloc(total * sizeof(dg_real));
    if (t->mlp.n == 2) {
        t->ev0 = t->p->info[dg_policy_first_param(&t->mlp, 1)].offset;
        t->prev_g = calloc(total, sizeof(dg_real));
        t->save_w = malloc(total * sizeof(dg_real));
        t->save_m = malloc(total * sizeof(dg_real));
        t->save_v = malloc(total * sizeof(dg_real));
        t->x_state = malloc((size_t)B * S * sizeof(dg_real));
        t->x_aux = malloc((size_t)B * (env->aux_dim ? env->aux_dim : 1) * sizeof(dg_real));
        if (!t->prev_g || !t->save_w || !t->save_m || !t->save_v || !t->x_state || !t->x_aux) {
            dg_err_set(e, DG_ERR_NOMEM, "out of memory for the two players' state");
            goto fail;
        }
    }
    if (!t->state0 || !t->aux || (env->game->metrics && !t->traj) || !t->good_w || !t->good_m ||
        !t->good_v) {
        dg_err_set(e, DG_ERR_NOMEM, "out of memory for batch %d", B);
        goto fail;
    }
    /* an arena per shard, sized from a rough per-step estimate; grown during
     * the first epoch if that overflows it */
    /* checkpoint_every 0 = auto: the whole episode (or truncation window) on one tape unless
     * that tape would pass DG_TAPE_BUDGET; then segments of ceil(sqrt(T)) steps (memory ~
     * sqrt(T), one extra forward; gradients identical) */
    if (t->o.truncate >= H) t->o.truncate = 0;
    const int T = t->o.truncate ? t->o.truncate : H;
    t->o.checkpoint_every = tape_every(env, o, T);
    const int nsaved = dg_episode_saved(H, t->o.checkpoint_every, t->o.truncate);
    t->sg_rows = state_grad_rows(env, &t->o, &t->sg_bytes);  /* measured now, before any arena fills */
    /* the measured tape of the largest shard (never short for a shipped game; grown in the first
     * epoch if it is) */
    const int ck = t->o.checkpoint_every, max_rows = (B + t->nshards - 1) / t->nshards;
    const double tape = dg_rollout_memory(env, o->hidden, o->nhidden, max_rows, ck ? ck : T, 1) + (1 << 20);
    for (int s = 0; s < t->nshards; s++) {
        shard *sh = &t->shards[s];
        sh->rows = B / t->nshards + (s < B % t->nshards);
        sh->row0 = s ? t->shards[s - 1].row0 + t->shards[s - 1].rows : 0;
        size_t cap = (size_t)tape;
        sh->grad = calloc(total ? total : 1, sizeof(dg_real));
        if (!sh->grad) {
            dg_err_set(e, DG_ERR_NOMEM, "out of memory for the shards' gradients");
            goto fail;
        }
        if (s < t->sh_lo || s >= t->sh_hi) continue;   /* another rank's: its results only */
        if (nsaved) {
            sh->saved = malloc((size_t)nsaved * sh->rows * S * sizeof(dg_real));
            if (!sh->saved) {
                dg_err_set(e, DG_ERR_NOMEM, "out of memory for checkpointed states");
                goto fail;
            }
        }
        if (cap > ((size_t)1 << 33)) cap = (size_t)1 << 33;
        sh->ctx = dg_ctx_create(cap);
        if (!sh->ctx) {
            dg_err_set(e, DG_ERR_NOMEM, "out of memory for a %zu-byte arena", cap);
            goto fail;
        }
    }
    if (config_yaml && !(t->config_yaml = strdup(config_yaml))) {
        dg_err_set(e, DG_ERR_NOMEM, "out of memory");
        goto fail;
    }
    if (out_dir) {
        if (strlen(out_dir) >= sizeof t->out_dir - 64) {
            dg_err_set(e, DG_ERR_ARG, "%s: output folder path too long", out_dir);
            goto fail;
        }
        strcpy(t->out_dir, out_dir);
        if (dg_mkdirs(out_dir, e) != DG_OK) goto fail;
        /* find an unwritable folder now, not after hours of training */
        char probe[DG_PATH_MAX];
        snprintf(probe, sizeof probe, "%s/.write_test", out_dir);
        dg_file f;
        if (dg_file_begin(&f, probe, e) != DG_OK) goto fail;
        dg_file_abort(&f);
    }
    return t;
fail:
    dg_trainer_free(t);
    return NULL;
}

dg_params *dg_trainer_params(dg_trainer *t) { return t->p; }
const dg_policy *dg_trainer_policy(const dg_trainer *t) { return &t->mlp; }
const dg_epoch_stats *dg_trainer_last(const dg_trainer *t) { return &t->last; }
size_t dg_trainer_arena_peak(const dg_trainer *t) { return t->arena_peak; }
int dg_trainer_checkpoint_every(const dg_trainer *t) { return t->o.checkpoint_every; }
int dg_trainer_truncate(const dg_trainer *t) { return t->o.truncate; }

/* One shard's episode on its arena, for dg_ctx_run. */
typedef struct shard_job {
    const dg_trainer *t;
    shard           *sh;
    dg_params       *view;
    const dg_real     *state0, *aux;
    dg_real           *traj, inv_batch;
    uint64_t         flops0;          /* the arena's FLOP count when the run began */
} shard_job;

static dg_status shard_episode(dg_ctx *ctx, void *user) {
    shard_job *j = user;
    shard *sh = j->sh;
    j->flops0 = dg_ctx_flops(ctx);
    memset(sh->grad, 0, j->t->p->total * sizeof(dg_real));
    return dg_episode_grad(ctx, j->t->env, &j->t->mlp, j->view, j->state0, j->aux, sh->rows, j->inv_batch,
                           j->t->o.checkpoint_every, j->t->o.truncate, sh->saved, &sh->loss, sh->terms, j->traj,
                           j->t->o.batch);
}

/* What travels of one shard (then its gradient). */
typedef struct shard_msg {
    double    loss, flops;
    uint64_t  peak;
    int32_t   status, pad;
    dg_real     terms[DG_LOSS_MAX_TERMS];
    char      err[256];
} shard_msg;

/* Under MPI: every rank's shards' results (loss, terms, gradient, flops, arena peak; with traj, the
 * trajectory rows) to every rank, in place in t->shards (MPI_Allgatherv: exact copies). */
static dg_status exchange_shards(dg_trainer *t, dg_real *traj, double *sflops, size_t *speak, dg_err *e) {
    const int R = dg_dist_size(), me = dg_dist_rank(), B = t->o.batch, S = t->env->state_dim;
    const int H1 = traj ? t->env->horizon + 1 : 0;
    const size_t total = t->p->total, one = sizeof(shard_msg) + total * sizeof(dg_real);
    size_t bytes[MAX_THREADS], cap = 0, at = 0;
    int lo[MAX_THREADS + 1], row0[MAX_THREADS], rows[MAX_THREADS];
    for (int r = 0; r <= R; r++) lo[r] = (int)((int64_t)r * t->nshards / R);
    for (int r = 0; r < R; r++) {   /* rank r's shards, and their rows of the trajectory */
        const shard *a = &t->shards[lo[r]], *z = &t->shards[lo[r + 1] - 1];
        row0[r] = lo[r + 1] > lo[r] ? a->row0 : 0;
        rows[r] = lo[r + 1] > lo[r] ? z->row0 + z->rows - a->row0 : 0;
        bytes[r] = (size_t)(lo[r + 1] - lo[r]) * one + (size_t)H1 * (size_t)rows[r] * (size_t)S * sizeof(dg_real);
        if (r < me) at += bytes[r];
        cap += bytes[r];
    }
    if (cap > t->xcap) {
        unsigned char *b = realloc(t->xbuf, cap);
        if (!b) return dg_err_set(e, DG_ERR_NOMEM, "out of memory for the shards' exchange (%zu bytes)", cap);
        t->xbuf = b;
        t->xcap = cap;
    }
    unsigned char *q = t->xbuf + at;   /* this rank's part, in place */
    for (int s = t->sh_lo; s < t->sh_hi; s++, q += one) {
        const shard *sh = &t->shards[s];
        shard_msg m = {.loss = sh->loss, .flops = sflops[s], .peak = speak[s], .status = (int32_t)sh->status};
        memcpy(m.terms, sh->terms, sizeof m.terms);
        memcpy(m.err, sh->err, sizeof m.err);
        memcpy(q, &m, sizeof m);
        memcpy(q + sizeof m, sh->grad, total * sizeof(dg_real));
    }
    const size_t rb = (size_t)rows[me] * (size_t)S * sizeof(dg_real);   /* one step's rows */
    for (int h = 0; h < H1; h++, q += rb) memcpy(q, traj + ((size_t)h * B + (size_t)row0[me]) * S, rb);
    dg_status st = dg_dist_allgatherv(t->xbuf + at, bytes[me], t->xbuf, bytes, e);
    if (st != DG_OK) return st;
    q = t->xbuf;
    for (int r = 0; r < R; r++) {
        for (int s = lo[r]; s < lo[r + 1]; s++, q += one) {
            shard *sh = &t->shards[s];
            shard_msg m;
            memcpy(&m, q, sizeof m);
            if (r != me) {
                sh->loss = m.loss;
                sh->status = (dg_status)m.status;
                memcpy(sh->terms, m.terms, sizeof m.terms);
                memcpy(sh->err, m.err, sizeof m.err);
                memcpy(sh->grad, q + sizeof m, total * sizeof(dg_real));
            }
            sflops[s] = m.flops;
            speak[s] = (size_t)m.peak;
        }
        const size_t rrb = (size_t)rows[r] * (size_t)S * sizeof(dg_real);
        for (int h = 0; h < H1; h++, q += rrb)
            if (r != me) memcpy(traj + ((size_t)h * B + (size_t)row0[r]) * S, q, rrb);
    }
    return DG_OK;
}

/* Forward and backward of every shard in parallel; sums into t->p->grad. */
/* Loss and gradient (into p->grad) of the batch state0/aux under parameters p,
 * one shard per thread; traj (may be NULL) gets the trajectory. */
static dg_status run_shards(dg_trainer *t, dg_params *p, const dg_real *state0, const dg_real *aux,
                            dg_real *traj_all, double *loss, dg_real *terms, double *flops, dg_err *e) {
    const dg_env *env = t->env;
    const int B = t->o.batch, S = env->state_dim, A = env->aux_dim;
    const dg_real inv_batch = 1.0f / (dg_real)B;
    const size_t total = t->p->total;
    uint64_t flops0[MAX_THREADS];
    double sflops[MAX_THREADS];
    size_t speak[MAX_THREADS];
    const int nloc = t->sh_hi - t->sh_lo;
    /* an arena too small grows in the first epoch (dg_ctx_run): the next epochs allocate nothing */
#pragma omp parallel for num_threads(nloc > 0 ? nloc : 1) schedule(static, 1)
    for (int s = t->sh_lo; s < t->sh_hi; s++) {
        shard *sh = &t->shards[s];
        dg_params view = *p;  /* same values, this shard's gradient block */
        view.grad = sh->grad;
        /* each shard writes its rows of the shared trajectory (for metrics) */
        shard_job j = {t, sh, &view, state0 + (size_t)sh->row0 * S, A ? aux + (size_t)sh->row0 * A : NULL,
                       traj_all ? traj_all + (size_t)sh->row0 * S : NULL, inv_batch, 0};
        sh->status = dg_ctx_run(&sh->ctx, DG_ARENA_MAX, shard_episode, &j);
        flops0[s] = j.flops0;
        snprintf(sh->err, sizeof sh->err, "%s", dg_ctx_error(sh->ctx));
    }
    for (int s = t->sh_lo; s < t->sh_hi; s++) {
        sflops[s] = (double)(dg_ctx_flops(t->shards[s].ctx) - flops0[s]);
        speak[s] = dg_ctx_peak(t->shards[s].ctx);
    }
    if (dg_dist_size() > 1) {   /* every rank gets every shard's results, then sums them as one process */
        dg_status st = exchange_shards(t, traj_all, sflops, speak, e);
        if (st != DG_OK) return st;
    }
    *loss = 0.0;
    *flops = 0.0;
    memset(terms, 0, DG_LOSS_MAX_TERMS * sizeof(dg_real));
    memset(p->grad, 0, total * sizeof(dg_real));
    for (int s = 0; s < t->nshards; s++) {  /* fixed order: deterministic sums */
        shard *sh = &t->shards[s];
        if (sh->status != DG_OK)
            return dg_err_set(e, sh->status, "rollout failed: %s", sh->err);
        *loss += sh->loss;
        *flops += sflops[s];
        for (int i = 0; i < env->nterms; i++) terms[i] += sh->terms[i];
        for (size_t i = 0; i < total; i++) p->grad[i] += sh->grad[i];
        size_t peak = speak[s];
        if (peak > t->arena_peak) t->arena_peak = peak;
    }
    return DG_OK;
}

/* The state-gradient diagnostic (dg_episode_state_grads) of the first rows of the batch in t->state0
 * (state_grad_rows), on shard 0's arena, grown to hold their whole episode (dg_train_memory counts
 * it); under MPI on the rank that holds shard 0, the others get n = 0. The parameter gradient lands
 * in shard 0's block, which the next epoch zeroes. */
static dg_status trainer_state_grads(dg_trainer *t, dg_state_grads *r, dg_err *e) {
    const dg_env *env = t->env;
    memset(r, 0, sizeof *r);
    if (t->sh_lo != 0) return DG_OK;
    shard *sh = &t->shards[0];
    const int rows = t->sg_rows;
    if (rows == 0) return DG_OK;
    if (dg_ctx_reserve(&sh->ctx, (size_t)t->sg_bytes) != DG_OK)
        return dg_err_set(e, DG_ERR_NOMEM, "out of memory for the state-gradient diagnostic's %.0f-byte arena",
                          t->sg_bytes);
    dg_params view = *t->p;
    view.grad = sh->grad;
    const dg_status st = dg_episode_state_grads(sh->ctx, env, &t->mlp, &view, t->state0, t->aux, rows, r);
    if (st == DG_ERR_ARENA_FULL) {  /* the estimate fell short: no diagnostic, training goes on */
        memset(r, 0, sizeof *r);
        return DG_OK;
    }
    if (st != DG_OK) return dg_err_set(e, st, "state-gradient diagnostic: %s", dg_ctx_error(sh->ctx));
    return DG_OK;
}

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

/* metrics.csv: epoch, loss, each term, grad_norm, lr, ms, game metrics */
static dg_status write_metrics(const dg_trainer *t, dg_err *e) {
    char path[DG_PATH_MAX];
    snprintf(path, sizeof path, "%s/metrics.csv", t->out_dir);
    dg_csv w;
    const dg_status st = dg_csv_begin(&w, path, e);
    if (st != DG_OK) return st;
    const dg_env *env = t->env;
    dg_csv_col(&w, "epoch", DG_CSV_INT);
    dg_csv_col(&w, "loss", DG_CSV_G9);
    dg_csv_cols(&w, env->term_names, NULL, env->nterms, DG_CSV_G9);
    dg_csv_col(&w, "grad_norm", DG_CSV_G9);
    dg_csv_col(&w, "lr", DG_CSV_G9);
    dg_csv_col(&w, "ms", DG_CSV_F3);
    dg_csv_cols(&w, env->metric_names, NULL, env->nmetrics, DG_CSV_G6);
    if (t->mlp.n == 2) {
        dg_csv_col(&w, "evader_loss", DG_CSV_G9);
        dg_csv_cols(&w, (const char *const[]){"exploit_pursuer", "exploit_evader"}, NULL, 2, DG_CSV_G6);
    }
    for (int r = 0; r < t->nrows; r++) {
        const dg_epoch_stats *s = &t->rows[r].s;
        dg_csv_num(&w, s->epoch);
        dg_csv_num(&w, s->loss);
        for (int i = 0; i < env->nterms; i++) dg_csv_num(&w, s->terms[i]);
        dg_csv_num(&w, s->grad_norm);
        dg_csv_num(&w, s->lr);
        dg_csv_num(&w, s->ms);
        for (int i = 0; i < env->nmetrics; i++) dg_csv_num(&w, s->metrics[i]);
        if (t->mlp.n == 2) {
            dg_csv_num(&w, -s->loss);
            dg_csv_num(&w, s->exploit[0]);
            dg_csv_num(&w, s->exploit[1]);
        }
    }
    return dg_csv_commit(&w, e);
}

static dg_status write_plot(const dg_trainer *t, dg_err *e) {
    const dg_env *env = t->env;
    const int n = t->nrows;
    if (n == 0) return DG_OK;
    float *buf = malloc((size_t)n * (env->nterms + 2) * sizeof(float));
    if (!buf) return dg_err_set(e, DG_ERR_NOMEM, "out of memory for the plot");
    float *x = buf;
    dg_plot_series s[DG_LOSS_MAX_TERMS + 1];
    for (int r = 0; r < n; r++) x[r] = (float)t->rows[r].s.epoch;
    for (int i = 0; i <= env->nterms; i++) {
        float *y = buf + (size_t)(i + 1) * n;
        for (int r = 0; r < n; r++) y[r] = i == 0 ? (float)t->rows[r].s.loss : t->rows[r].s.terms[i - 1];
        s[i] = (dg_plot_series){i == 0 ? "loss" : env->term_names[i - 1], x, y, n, dg_plot_color(i)};
    }
    char path[DG_PATH_MAX], title[128];
    snprintf(path, sizeof path, "%s/loss.png", t->out_dir);
    snprintf(title, sizeof title, "%s: episode loss and its terms", env->game->name);
    dg_status st = dg_plot_lines(path, LOSS_PLOT_W, LOSS_PLOT_H, title, "epoch", "loss (log scale)", 1, s,
                                 env->nterms + 1, e);
    free(buf);
    return st;
}

/* DG_OK when every parameter, Adam moment and the guard's copies are finite; else refuses to write
 * `name` (the last line of defence, as dg_checkpoint_save's for the snapshots: no file a run writes
 * holds a non-finite number to train on). */
static dg_status check_finite(const dg_trainer *t, const char *name, dg_err *e) {
    const struct { const char *what; const dg_real *block; } b[] = {
        {"parameter", t->p->data}, {"Adam first moment of", t->adam.m}, {"Adam second moment of", t->adam.v},
        {"last good parameter", t->good_w}, {"last good first moment of", t->good_m},
        {"last good second moment of", t->good_v}};
    for (size_t k = 0; k < sizeof b / sizeof b[0]; k++) {
        int64_t j = 0;
        const int i = dg_params_first_nonfinite(t->p, b[k].block, &j);
        if (i >= 0)
            return dg_err_set(e, DG_ERR_NONFINITE, "%s/%s not written: the %s %s[%lld] is not finite", t->out_dir,
                              name, b[k].what, t->p->info[i].name, (long long)j);
    }
    return DG_OK;
}

/* 1 when file f (a resume file) is a run of env's game: the same name and source (dg_env_source); files
 * written before the source was stored called every model file's game "model" */
static int same_game(const dg_st_file *f, const dg_env *env) {
    const char *game = dg_st_meta(f, "game"), *src = dg_st_meta(f, "source");
    const char *mine = dg_env_source(env);
    if (!game) return 0;
    if (!src) return !strcmp(mine, "model") ? !strcmp(game, "model") : !strcmp(game, env->game->name);
    return !strcmp(game, env->game->name) && !strcmp(src, mine);
}

static dg_status write_snapshot(dg_trainer *t, const char *name, int epoch, dg_train_cb cb,
                                void *user, dg_err *e) {
    char path[DG_PATH_MAX], ep[32], step[32], lr[64];
    snprintf(path, sizeof path, "%s/%s", t->out_dir, name);
    snprintf(ep, sizeof ep, "%d", epoch);
    snprintf(step, sizeof step, "%lld", (long long)t->adam.step);
    snprintf(lr, sizeof lr, "%.9g", t->o.lr * t->lr_scale);
    const char *meta[] = {"format", "difgames", "game", t->env->game->name, "source", dg_env_source(t->env),
                          "epoch", ep, "adam_step", step, "lr", lr, "config", t->config_yaml ? t->config_yaml : ""};
    dg_status st = dg_checkpoint_save(path, t->p, 0, meta, 7, e);
    if (st == DG_OK && cb) {
        dg_train_event ev = {.kind = DG_TRAIN_EV_SNAPSHOT, .path = path};
        cb(&ev, user);
    }
    return st;
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
    if (t->mlp.n != 2) return;
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
    if (t->mlp.n != 2 || t->o.game_solver == DG_GAME_SOLVER_GDA) {
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
    dg_status st = run_shards(t, t->p, t->state0, t->aux, NULL, &loss, terms, &flops, e);
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
    return run_shards(t, p, state, aux, NULL, j, terms, &flops, e);
}

/* Exploitability: freeze one player, train a best response of the other for
 * o.exploit_epochs epochs (dg_best_responses: a fresh Adam on a copy, its own batches), and
 * measure on a fixed batch how much the frozen player loses:
 *   pursuer: J(pursuer, best evader) - J(now);  evader: J(now) - J(best pursuer, evader).
 * Both are >= 0 up to noise and 0 at an equilibrium. The training RNG is untouched. */
static dg_status exploitability(dg_trainer *t, int epoch, double *ex_p, double *ex_e, dg_err *e) {
    const dg_env *env = t->env;
    dg_rng xr;
    dg_rng_seed(&xr, t->o.seed * 7919u + (uint64_t)epoch);
    dg_status st = env->game->reset(env, &xr, t->o.batch, t->x_state, t->x_aux, e);
    double j0, jbr[2];
    if (st == DG_OK) st = batch_episode(t, t->p, t->x_state, t->x_aux, t->o.batch, 0, &j0, e);
    if (st == DG_OK)
        st = dg_best_responses(env, t->p, t->ev0, &t->o, t->o.exploit_epochs, &xr, batch_episode, t, t->x_state,
                               t->x_aux, t->o.batch, jbr, e);
    if (st != DG_OK) return st;
    *ex_p = jbr[0] - j0;
    *ex_e = j0 - jbr[1];
    return DG_OK;
}

/* ------------------------------------------------------------ resume */


static void row_pack(const dg_epoch_stats *s, double *r) {
    int k = 0;
    r[k++] = s->epoch;
    r[k++] = s->loss;
    for (int i = 0; i < DG_LOSS_MAX_TERMS; i++) r[k++] = s->terms[i];
    r[k++] = s->grad_norm;
    r[k++] = s->lr;
    r[k++] = s->ms;
    r[k++] = s->flops;
    for (int i = 0; i < DG_MAX_METRICS; i++) r[k++] = s->metrics[i];
    r[k++] = s->exploit[0];
    r[k++] = s->exploit[1];
}

static void row_unpack(const double *r, dg_epoch_stats *s) {
    int k = 0;
    s->epoch = (int)r[k++];
    s->loss = r[k++];
    for (int i = 0; i < DG_LOSS_MAX_TERMS; i++) s->terms[i] = (dg_real)r[k++];
    s->grad_norm = r[k++];
    s->lr = r[k++];
    s->ms = r[k++];
    s->flops = r[k++];
    for (int i = 0; i < DG_MAX_METRICS; i++) s->metrics[i] = r[k++];
    s->exploit[0] = r[k++];
    s->exploit[1] = r[k++];
}

/* Everything a run needs to go on as if never stopped: parameters (under their
 * own names), Adam moments and step, the NaN guard's last good state, the RNG,
 * the episode batch (fixed_batch), the metrics so far, the config. */
static dg_status write_resume(dg_trainer *t, dg_err *e) {
    const dg_status fin = check_finite(t, "resume.safetensors", e);
    if (fin != DG_OK) return fin;
    char path[DG_PATH_MAX], ep[32], step[32], gstep[32], scale[40], rng[64], rows[32];
    snprintf(path, sizeof path, "%s/resume.safetensors", t->out_dir);
    snprintf(ep, sizeof ep, "%d", t->epoch);
    snprintf(step, sizeof step, "%lld", (long long)t->adam.step);
    snprintf(gstep, sizeof gstep, "%lld", (long long)t->good_step);
    snprintf(scale, sizeof scale, "%.17g", t->lr_scale);
    snprintf(rng, sizeof rng, "%016llx%016llx", (unsigned long long)t->rng.s[0],
             (unsigned long long)t->rng.s[1]);
    snprintf(rows, sizeof rows, "%d", t->nrows);
    dg_st_writer *w = dg_st_writer_create();
    if (!w) return dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    const dg_params *p = t->p;
    const int64_t total = (int64_t)p->total;
    const dg_env *env = t->env;
    double *table = malloc(((size_t)t->nrows + 1) * ROW_COLS * sizeof(double));
    dg_status st = table ? DG_OK : dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    for (int r = 0; r < t->nrows && st == DG_OK; r++) row_pack(&t->rows[r].s, table + (size_t)r * ROW_COLS);
    for (int i = 0; i < p->count && st == DG_OK; i++) {
        int64_t shape[DG_MAX_DIMS];
        for (int d = 0; d < p->info[i].ndim; d++) shape[d] = p->info[i].shape[d];
        st = dg_st_writer_add(w, p->info[i].name, DG_DTYPE_REAL, p->info[i].ndim, shape, p->data + p->info[i].offset, e);
    }
    const struct { const char *name; const dg_real *data; } flat[] = {
        {"optim.adam.m", t->adam.m}, {"optim.adam.v", t->adam.v}, {"optim.good.w", t->good_w},
        {"optim.good.m", t->good_m}, {"optim.good.v", t->good_v}};
    for (size_t i = 0; i < sizeof flat / sizeof flat[0] && st == DG_OK; i++)
        st = dg_st_writer_add(w, flat[i].name, DG_DTYPE_REAL, 1, &total, flat[i].data, e);
    if (st == DG_OK)
        st = dg_st_writer_add(w, "episode.state", DG_DTYPE_REAL, 2, (int64_t[]){t->o.batch, env->state_dim}, t->state0, e);
    if (st == DG_OK && env->aux_dim)
        st = dg_st_writer_add(w, "episode.aux", DG_DTYPE_REAL, 2, (int64_t[]){t->o.batch, env->aux_dim}, t->aux, e);
    if (st == DG_OK)
        st = dg_st_writer_add(w, "metrics", DG_DTYPE_F64, 2, (int64_t[]){t->nrows, ROW_COLS}, table, e);
    const char *meta[][2] = {{"format", "difgames-resume"}, {"game", env->game->name},
                             {"source", dg_env_source(env)}, {"epoch", ep},
                             {"adam_step", step}, {"good_step", gstep}, {"lr_scale", scale},
                             {"rng", rng}, {"rows", rows}, {"config", t->config_yaml ? t->config_yaml : ""}};
    for (size_t i = 0; i < sizeof meta / sizeof meta[0] && st == DG_OK; i++)
        st = dg_st_writer_meta(w, meta[i][0], meta[i][1], e);
    if (st == DG_OK) st = dg_st_writer_write(w, path, e);
    dg_st_writer_free(w);
    free(table);
    return st;
}

static dg_status meta_i64(const dg_st_file *f, const char *path, const char *key, long long lo,
                          long long hi, long long *out, dg_err *e) {
    const char *v = dg_st_meta(f, key);
    char *end;
    if (!v) return dg_err_set(e, DG_ERR_FORMAT, "%s: metadata '%s' missing", path, key);
    long long x = strtoll(v, &end, 10);
    if (*v == 0 || *end || x < lo || x > hi)
        return dg_err_set(e, DG_ERR_FORMAT, "%s: metadata '%s' = '%.40s' is not an integer in [%lld, %lld]",
                          path, key, v, lo, hi);
    *out = x;
    return DG_OK;
}

dg_status dg_trainer_restore(dg_trainer *t, const char *path, dg_err *e) {
    dg_st_file *f = dg_st_load(path, e);
    if (!f) return e ? e->status : DG_ERR_IO;
    const dg_env *env = t->env;
    const size_t total = t->p->total;
    dg_status st = DG_OK;
    long long epoch = 0, step = 0, gstep = 0, rows = 0;
    const char *fmt = dg_st_meta(f, "format"), *game = dg_st_meta(f, "game");
    const char *scale = dg_st_meta(f, "lr_scale"), *rng = dg_st_meta(f, "rng");
    dg_real *buf = malloc((total ? total : 1) * 6 * sizeof(dg_real));
    double *table = NULL;
    if (!buf) { st = dg_err_set(e, DG_ERR_NOMEM, "out of memory"); goto done; }
    if (!fmt || strcmp(fmt, "difgames-resume") != 0) {
        st = dg_err_set(e, DG_ERR_FORMAT, "%s: not a difgames resume file (metadata 'format')", path);
        goto done;
    }
    if (!same_game(f, env)) {
        const char *src = dg_st_meta(f, "source");
        st = dg_err_set(e, DG_ERR_FORMAT, "%s: a run of game '%s'%s%s%s, not '%s' (%s)", path, game ? game : "?",
                        src ? " (" : "", src ? src : "", src ? ")" : "", env->game->name, dg_env_source(env));
        goto done;
    }
    if ((st = meta_i64(f, path, "epoch", 0, DG_MAX_EPOCHS, &epoch, e)) ||
        (st = meta_i64(f, path, "adam_step", 0, (long long)1 << 40, &step, e)) ||
        (st = meta_i64(f, path, "good_step", 0, (long long)1 << 40, &gstep, e)) ||
        (st = meta_i64(f, path, "rows", 0, DG_MAX_EPOCHS, &rows, e)))
        goto done;
    char *end = NULL;
    double ls = scale ? strtod(scale, &end) : NAN;
    if (!scale || *end || !(ls > 0.0 && ls <= 1.0)) {
        st = dg_err_set(e, DG_ERR_FORMAT, "%s: metadata 'lr_scale' missing or not in (0, 1]", path);
        goto done;
    }
    unsigned long long s0 = 0, s1 = 0;
    if (!rng || strlen(rng) != 32 || sscanf(rng, "%16llx%16llx", &s0, &s1) != 2) {
        st = dg_err_set(e, DG_ERR_FORMAT, "%s: metadata 'rng' missing or malformed", path);
        goto done;
    }
    /* the tape's precision: a resume goes on in the one the run started in (train.precision) */
    const dg_st_tensor *t0 = t->p->count ? dg_st_find(f, t->p->info[0].name) : NULL;
    if (t0 && t0->dtype != DG_DTYPE_REAL && (t0->dtype == DG_DTYPE_F32 || t0->dtype == DG_DTYPE_F64)) {
        st = dg_err_set(e, DG_ERR_CONFIG, "%s: a train.precision: %s run's resume file, but this run is %s: resume it "
                        "with the precision it started with", path, t0->dtype == DG_DTYPE_F64 ? "f64" : "f32", DG_REAL_NAME);
        goto done;
    }
    /* parameters by name and shape, then the flat optimiser blocks */
    for (int i = 0; i < t->p->count && st == DG_OK; i++) {
        int64_t shape[DG_MAX_DIMS];
        for (int d = 0; d < t->p->info[i].ndim; d++) shape[d] = t->p->info[i].shape[d];
        st = dg_st_read(f, t->p->info[i].name, DG_DTYPE_REAL, t->p->info[i].ndim, shape, buf + t->p->info[i].offset, e);
    }
    const char *flat[] = {"optim.adam.m", "optim.adam.v", "optim.good.w", "optim.good.m", "optim.good.v"};
    for (int i = 0; i < 5 && st == DG_OK; i++)
        st = dg_st_read(f, flat[i], DG_DTYPE_REAL, 1, (int64_t[]){(int64_t)total}, buf + (size_t)(i + 1) * total, e);
    if (st == DG_OK)
        st = dg_st_read(f, "episode.state", DG_DTYPE_REAL, 2, (int64_t[]){t->o.batch, env->state_dim}, t->state0, e);
    if (st == DG_OK && env->aux_dim)
        st = dg_st_read(f, "episode.aux", DG_DTYPE_REAL, 2, (int64_t[]){t->o.batch, env->aux_dim}, t->aux, e);
    if (st == DG_OK && !(table = malloc(((size_t)rows + 1) * ROW_COLS * sizeof(double))))
        st = dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    if (st == DG_OK) st = dg_st_read(f, "metrics", DG_DTYPE_F64, 2, (int64_t[]){rows, ROW_COLS}, table, e);
    if (st != DG_OK) goto done;
    if (rows > t->caprows) {
        metrics_row *r = realloc(t->rows, (size_t)rows * sizeof *r);
        if (!r) { st = dg_err_set(e, DG_ERR_NOMEM, "out of memory"); goto done; }
        t->rows = r;
        t->caprows = (int)rows;
    }
    /* all read and checked: now change the trainer */
    memcpy(t->p->data, buf, total * sizeof(dg_real));
    memcpy(t->adam.m, buf + total, total * sizeof(dg_real));
    memcpy(t->adam.v, buf + 2 * total, total * sizeof(dg_real));
    memcpy(t->good_w, buf + 3 * total, total * sizeof(dg_real));
    memcpy(t->good_m, buf + 4 * total, total * sizeof(dg_real));
    memcpy(t->good_v, buf + 5 * total, total * sizeof(dg_real));
    t->adam.step = step;
    t->good_step = gstep;
    t->good_set = 1;
    t->lr_scale = ls;
    t->rng.s[0] = s0;
    t->rng.s[1] = s1;
    t->epoch = (int)epoch;
    t->nrows = (int)rows;
    for (int r = 0; r < rows; r++) row_unpack(table + (size_t)r * ROW_COLS, &t->rows[r].s);
    if (rows) t->last = t->rows[rows - 1].s;
done:
    free(buf);
    free(table);
    dg_st_free(f);
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
        if ((st = run_shards(t, t->p, t->state0, t->aux, t->traj, &s.loss, s.terms, &s.flops, e)) != DG_OK)
            break;
        zero_sum(t, t->p);
        if (t->o.nan_epoch == epoch) s.loss = NAN;  /* fault injection (tests) */
        if (epoch == 1) {
            if (cb) {
                dg_state_grads sg;
                if ((st = trainer_state_grads(t, &sg, e)) != DG_OK) break;
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
            /* NaN guard: never apply; go back to the last good state (the start's before any) */
            memcpy(t->p->data, t->good_w, total * sizeof(dg_real));
            memcpy(t->adam.m, t->good_m, total * sizeof(dg_real));
            memcpy(t->adam.v, t->good_v, total * sizeof(dg_real));
            t->adam.step = t->good_step;
            t->lr_scale *= 0.5;
            t->nan_run++;
            char what[160];
            nonfinite_what(t, &s, what, sizeof what);
            s.grad_norm = NAN;
            s.lr = t->o.lr * t->lr_scale;
            s.ms = 1e3 * dg_clock_s() - t0;
            if (cb) {
                dg_train_event ev = {.kind = DG_TRAIN_EV_NAN, .stats = &s, .lr = s.lr, .param = what};
                cb(&ev, user);
            }
            if (t->nan_run >= t->o.nan_patience) {
                t->rows[t->nrows++].s = s;
                t->last = s;
                t->epoch = epoch;
                char kept[64] = "the initial parameters";
                if (t->good_step > 0) snprintf(kept, sizeof kept, "those after Adam step %lld", (long long)t->good_step);
                st = dg_err_set(e, DG_ERR_NONFINITE, "epoch %d: %s, %d epochs in a row (the learning rate halved each "
                                "time, to %g); the files keep %s", epoch, what, t->nan_run, s.lr, kept);
                break;
            }
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
        s.exploit[0] = s.exploit[1] = NAN;
        if (t->mlp.n == 2 && t->o.exploit_every > 0 && (epoch % t->o.exploit_every == 0 || epoch == t->o.epochs))
            if ((st = exploitability(t, epoch, &s.exploit[0], &s.exploit[1], e)) != DG_OK) break;
        const int last = epoch == t->o.epochs;
        t->rows[t->nrows++].s = s;
        t->last = s;
        t->epoch = epoch;
        if (cb) {
            dg_train_event ev = {.kind = DG_TRAIN_EV_EPOCH, .stats = &s};
            cb(&ev, user);
        }
        if (t->out_dir[0] && (is_snapshot_epoch(&t->o, epoch) || last)) {
            char name[64];
            snprintf(name, sizeof name, "epoch_%04d.safetensors", epoch);
            if ((st = write_snapshot(t, name, epoch, cb, user, e)) != DG_OK) break;
            if ((st = write_metrics(t, e)) != DG_OK) break;
        }
        if (t->out_dir[0] && !last &&
            (is_snapshot_epoch(&t->o, epoch) || (t->o.resume_every > 0 && epoch % t->o.resume_every == 0)))
            if ((st = write_resume(t, e)) != DG_OK) break;
    }
    if (t->out_dir[0] && (st == DG_OK || st == DG_ERR_INTERRUPTED || st == DG_ERR_NONFINITE)) {
        dg_err e2 = {0};
        dg_status s2 = write_snapshot(t, "final.safetensors", t->last.epoch, cb, user, &e2);
        if (s2 == DG_OK) s2 = write_resume(t, &e2);
        if (s2 == DG_OK) s2 = write_metrics(t, &e2);
        if (s2 == DG_OK) s2 = write_plot(t, &e2);
        if (s2 != DG_OK && st != DG_ERR_NONFINITE) {  /* the run's own failure is the one to tell */
            if (e) *e = e2;
            st = s2;
        }
    }
    return st;
}
