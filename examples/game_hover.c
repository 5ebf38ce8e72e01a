/* game_hover: a complete game of your own, defined outside the library, and
 * trained by BPTT. Shows everything the README's "Add your own game" needs.
 *
 * The game: a point mass under gravity must rise from the ground and hover at
 * a target height (the episode constant), with thrust in [-1, 1]² from the
 * policy. Cost per step: (y' - target)² + 0.1 x'² + 0.01 |a|².
 *
 *     ./build/examples/game_hover [epochs]       (default 150)
 *
 * The same file built as a shared object (cc -shared -fPIC -DDG_GAME_PLUGIN, the build's
 * build/examples/hover.so) is a plugin the difgames command plays like a built-in game:
 *
 *     difgames train --plugin build/examples/hover.so --config examples/hover.yaml
 *
 * Prints the loss at the start and the end; exits 1 if training did not cut
 * the loss by at least 5×.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/difgames.h"

typedef struct hover {
    float accel, gravity, damping;
} hover;

/* 1. declare: the game's keys (read into its impl, which the library allocates)
 *    and its loss terms with their default weights (keys loss.height, ...) */
static const dg_key HOVER_KEYS[] = {
    DG_K_F32("env.gravity", hover, gravity, 2.0f, -INFINITY, INFINITY, 0, 0, "downward acceleration"),
    DG_K_F32("env.accel_scale", hover, accel, 5.0f, 0, 1e6f, 0, 1, "action [-1, 1] -> acceleration"),
    DG_K_F32("env.damping", hover, damping, 0.98f, 0, 1, 0, 1, "velocity kept per step"),
};
static const dg_loss_term HOVER_LOSS[] = {
    {"loss.height", 1.0f, NULL, 0, "mean_b (y' - target)^2"},
    {"loss.drift", 0.1f, NULL, 0, "mean_b x'^2"},
    {"loss.energy", 0.01f, NULL, 0, "mean_b |a|^2"},
};

/* 2. create: check the keys read into env->impl, set the dims */
static dg_status hover_create(dg_env *env, dg_cfg *cfg, dg_err *e) {
    (void)cfg;
    (void)e;
    env->state_dim = 4;            /* [x, y, vx, vy] */
    env->aux_dim = 1;              /* target height   */
    env->aux_user_dim = 1;
    env->aux_name = "target";
    env->obs_dim = 5;              /* state + target  */
    env->act_dim = 2;
    return DG_OK;
}

/* 3. reset: initial states and episode constants, from the trainer's RNG */
static dg_status hover_reset(const dg_env *env, dg_rng *rng, int B, dg_real *state, dg_real *aux,
                             dg_err *e) {
    (void)e;
    for (int b = 0; b < B; b++) {
        state[4 * b + 0] = dg_rng_uniform(rng, -0.3f, 0.3f);
        state[4 * b + 1] = -0.8f;  /* on the ground */
        state[4 * b + 2] = state[4 * b + 3] = 0.0f;
        aux[b] = dg_rng_uniform(rng, 0.0f, 0.6f);
    }
    return DG_OK;
}

/* 4. observe: what the policy sees, as tape ops */
static dg_tensor *hover_observe(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux) {
    return dg_concat(ctx, (dg_tensor *[]){state, aux}, 2, 1);
}

/* 5. step: motion only. Gravity is a constant acceleration added to the thrust. */
static dg_tensor *hover_step(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux,
                             dg_tensor *action) {
    const hover *h = env->impl;
    const dg_real g[2] = {0.0f, -h->gravity / h->accel};  /* in action units */
    dg_tensor *a = dg_add(ctx, action, dg_from(ctx, 2, (int[]){1, 2}, g));
    return dg_phys_step(ctx, state, a, 1, &h->accel, env->dt, h->damping);
}

/* 6. step_cost: raw terms, each a batch mean (sum · inv_batch), on the new state */
static void hover_step_cost(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux,
                            dg_tensor *action, dg_real inv_batch, dg_tensor **terms) {
    dg_tensor *y = dg_cols(ctx, next, 1, 1), *x = dg_cols(ctx, next, 0, 1);
    terms[0] = dg_scale(ctx, dg_sum(ctx, dg_square(ctx, dg_sub(ctx, y, aux))), inv_batch);
    terms[1] = dg_scale(ctx, dg_sum(ctx, dg_square(ctx, x)), inv_batch);
    terms[2] = dg_scale(ctx, dg_sum(ctx, dg_square(ctx, action)), inv_batch);
}

/* optional: what a replay draws (the body, and the target height as a goal) */
static int hover_bodies(const dg_env *env, const dg_real *s, const dg_real *aux, dg_real *xy, int *is_goal) {
    xy[0] = s[0];
    xy[1] = s[1];
    xy[2] = 0.0f;
    xy[3] = aux[0];
    is_goal[0] = 0;
    is_goal[1] = 1;
    return 2;
}

/* 7. the descriptor. Exported as difgames_game (DG_GAME_SYMBOL) with its ABI, it is also a plugin. */
const dg_game difgames_game = {
    .abi = DG_GAME_ABI,
    .name = "hover",
    .summary = "rise against gravity and hover at a target height",
    .dt = 0.05f,
    .horizon = 50,
    DG_GAME_DECLARE(HOVER_KEYS, hover, HOVER_LOSS),
    .create = hover_create,
    .reset = hover_reset,
    .observe = hover_observe,
    .step = hover_step,
    .step_cost = hover_step_cost,
    .bodies = hover_bodies,
};

#ifndef DG_GAME_PLUGIN  /* the program: train the game in-process */
static void on_event(const dg_train_event *ev, void *user) {
    double *first = user;
    if (ev->kind == DG_TRAIN_EV_INIT) *first = ev->stats->loss;
}

int main(int argc, char **argv) {
    char text[256];
    snprintf(text, sizeof text,
             "env: {horizon: 50, gravity: 2.0}\n"
             "policy: {hidden: [32, 32]}\n"
             "train: {batch: 32, epochs: %d, lr: 0.005, snapshots: []}\n",
             argc > 1 ? atoi(argv[1]) : 150);
    dg_err e = {0};
    dg_cfg *cfg = dg_cfg_parse(text, strlen(text), "game_hover", &e);
    dg_env *env = cfg ? dg_env_create_game(&difgames_game, cfg, &e) : NULL;
    dg_train_opts o;
    if (!env || dg_train_opts_read(cfg, &o, &e) || dg_cfg_check_unused(cfg, &e)) {
        fprintf(stderr, "game_hover: %s\n", e.msg);
        return 2;
    }
    dg_trainer *t = dg_trainer_create(env, &o, NULL, NULL, &e);  /* NULL: write no files */
    double first = NAN;
    if (!t || dg_trainer_run(t, on_event, &first, NULL, &e) != DG_OK) {
        fprintf(stderr, "game_hover: %s\n", e.msg);
        return 1;
    }
    const double last = dg_trainer_last(t)->loss;
    printf("hover: loss %.4f at initialisation, %.4f after %d epochs\n", first, last, o.epochs);
    dg_trainer_free(t);
    dg_env_free(env);
    dg_cfg_free(cfg);
    return last < first / 5 ? 0 : 1;
}
#endif
