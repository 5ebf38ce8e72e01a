/* What a training run needs, before it starts: the tape of a rollout (a formula, checked against
 * the game's own measured tape), a trainer's parameters, arenas and data, and its files. */
#include <math.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>  /* malloc_trim */
#endif

#include "difgames/image.h"
#include "solver/trainer_internal.h"

#define DG_TAPE_BUDGET (512.0 * 1024 * 1024)  /* bytes of tape before auto checkpointing */

/* Floats of parameters the policies of env with these hidden sizes have (exact). */
static double param_count(const dg_env *env, const int *hidden, int nhidden) {
    double n = 0;
    if (nhidden < 0) {  /* open-loop plans (dg_policy_create_plan) */
        const int steps = env->plan_steps > 0 && env->plan_steps < env->horizon ? env->plan_steps : env->horizon;
        return (double)steps * dg_env_action_col(env, env->nplayers);
    }
    for (int pl = 0; pl < (env->nplayers > 1 ? env->nplayers : 1); pl++) {
        int in = env->player_obs[pl];
        for (int i = 0; i <= nhidden; i++) {
            const int out = i < nhidden ? hidden[i] : env->player_act[pl];
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
    for (int pl = 0; pl < (env->nplayers > 1 ? env->nplayers : 1); pl++) {
        pw += env->player_obs[pl] + env->player_act[pl];
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
    const double players = env->nplayers > 1 ? env->nplayers : 1;
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
    const double players = env->nplayers > 1 ? env->nplayers : 1;
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

/* The state-gradient diagnostic of a trainer (dg__trainer_state_grads): the first 16 rows of the
 * batch, fewer when their whole episode's tape would pass STATE_GRAD_BUDGET (0: not measured), and
 * *bytes of that arena. The same for every thread count. */
#define STATE_GRAD_ROWS 16
#define STATE_GRAD_BUDGET (64.0 * 1024 * 1024)
int dg__train_state_grad_rows(const dg_env *env, const dg_train_opts *o, double *bytes) {
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
int dg__train_tape_every(const dg_env *env, const dg_train_opts *o, int T) {
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
    const int every = dg__train_tape_every(env, o, T);
    if (every > 0) steps = every;
    m.tape = shards * dg_rollout_memory(env, o->hidden, o->nhidden, ceil(B / shards), steps, 1);
    double diag;  /* shard 0's arena grows to the state-gradient diagnostic's if that is larger */
    dg__train_state_grad_rows(env, o, &diag);
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
    m.log += dg_plot_memory(LOSS_PLOT_W, LOSS_PLOT_H, (double)o->epochs * (env->nterms + 1 + 2 * DG_MAX_PLAYERS)) +
             (double)o->epochs * (env->nterms + 2 + 2 * DG_MAX_PLAYERS) * sizeof(float);
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
