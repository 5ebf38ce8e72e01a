/* chase: a learned pursuer against a scripted, differentiable fleeing evader
 * in the arena [-1, 1]² (docs/games/chase.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/physics.h"
#include "envs/games.h"

#define DEF_CONTACT 1.0f        /* env.wall_contact */
#define DEF_CONTACT_WALL 0.97f  /* env.contact_wall */

typedef struct chase {
    float accel[2];               /* pursuer, evader */
    float damping;
    float flee_k, flee_m;         /* wall push sharpness and margin */
    float capture_radius;
    float init_lo, init_hi, min_sep;
    int   learned;                /* evader: policy (a second learned player) */
    int   walls;                  /* 0: the open plane (no wall terms, no wall push) */
    int   disk;                   /* actions bounded to the unit disk, not the box [-1, 1]^2 */
    float contact, contact_wall;  /* soft walls: stiffness in [0, 1] (0: none), at ±contact_wall */
} chase;

static dg_status chase_create(dg_env *env, dg_cfg *cfg, dg_err *e) {
    chase *c = calloc(1, sizeof *c);
    if (!c) return dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    env->impl = c;
    *c = (chase){.accel = {5.0f, 3.5f}, .damping = 0.98f, .flee_k = 20.0f, .flee_m = 0.15f,
                 .capture_radius = 0.1f, .init_lo = -0.8f, .init_hi = 0.8f, .min_sep = 0.5f,
                 .contact = DEF_CONTACT, .contact_wall = DEF_CONTACT_WALL};
    float w[5] = {1.0f, 10.0f, 0.01f, 10.0f, 0.01f};
    float init[2] = {c->init_lo, c->init_hi};
    const char *evader = "flee", *aset = "box";
    dg_status st;
    if ((st = dg_cfg_get_f32_range(cfg, "env.dt", &env->dt, 0.05f, 0, 10, 0, 1, e)) ||
        (st = dg_cfg_get_f32_range(cfg, "env.damping", &c->damping, 0.98f, 0, 1, 0, 1, e)) ||
        (st = dg_cfg_get_f32_range(cfg, "env.accel_pursuer", &c->accel[0], 5.0f, 0, DG_MAX_MAGNITUDE, 0, 1, e)) ||
        (st = dg_cfg_get_f32_range(cfg, "env.accel_evader", &c->accel[1], 3.5f, 0, DG_MAX_MAGNITUDE, 1, 1, e)) ||
        (st = dg_cfg_get_int_range(cfg, "env.horizon", &env->horizon, 80, 1, DG_MAX_HORIZON, e)) ||
        (st = dg_cfg_get_str(cfg, "env.evader", &evader, "flee", e)) ||
        (st = dg_cfg_get_bool(cfg, "env.walls", &c->walls, 1, e)) ||
        (st = dg_cfg_get_str(cfg, "env.action_set", &aset, "box", e)) ||
        (st = dg_cfg_get_f32_range(cfg, "env.wall_contact", &c->contact, DEF_CONTACT, 0, 1, 1, 1, e)) ||
        (st = dg_cfg_get_f32_range(cfg, "env.contact_wall", &c->contact_wall, DEF_CONTACT_WALL, 0, 1, 0, 1, e)) ||
        (st = dg_cfg_get_f32_range(cfg, "env.flee_k", &c->flee_k, 20.0f, 0, 1e4f, 0, 1, e)) ||
        (st = dg_cfg_get_f32_range(cfg, "env.flee_margin", &c->flee_m, 0.15f, 0, 1, 1, 0, e)) ||
        (st = dg_cfg_get_f32_range(cfg, "env.capture_radius", &c->capture_radius, 0.1f, 0, 2, 0, 1, e)) ||
        (st = dg__cfg_range(cfg, "env.init", init, e)) ||
        (st = dg_cfg_get_f32_range(cfg, "env.min_separation", &c->min_sep, 0.5f, 0, 2, 1, 1, e)) ||
        (st = dg_cfg_get_f32_range(cfg, "loss.chase", &w[0], w[0], 0, INFINITY, 1, 0, e)) ||
        (st = dg_cfg_get_f32_range(cfg, "loss.wall", &w[1], w[1], 0, INFINITY, 1, 0, e)) ||
        (st = dg_cfg_get_f32_range(cfg, "loss.energy", &w[2], w[2], 0, INFINITY, 1, 0, e)))
        return st;
    c->disk = !strcmp(aset, "disk");
    if (!c->disk && strcmp(aset, "box") != 0)
        return dg_cfg_error(cfg, "env.action_set", e, "unknown action set '%s' (known: box, disk)", aset);
    c->learned = !strcmp(evader, "policy");
    if (!c->learned && strcmp(evader, "flee") != 0)
        return dg_cfg_error(cfg, "env.evader", e, "unknown evader '%s' (known: flee, policy)", evader);
    if (c->learned &&
        ((st = dg_cfg_get_f32_range(cfg, "loss.evader_wall", &w[3], w[1], 0, INFINITY, 1, 0, e)) ||
         (st = dg_cfg_get_f32_range(cfg, "loss.evader_energy", &w[4], w[2], 0, INFINITY, 1, 0, e))))
        return st;
    c->init_lo = init[0];
    c->init_hi = init[1];
    if (!(init[0] >= -1.0f && init[1] <= 1.0f))
        return dg_cfg_error(cfg, "env.init", e, "must lie inside the arena [-1, 1]");
    if (c->walls && c->contact > 0.0f && !(init[0] >= -c->contact_wall && init[1] <= c->contact_wall))
        return dg_cfg_error(cfg, "env.contact_wall", e, "the contact walls at +-%g must enclose env.init [%g, %g]",
                            (double)c->contact_wall, (double)init[0], (double)init[1]);
    if (c->min_sep >= 0.9f * sqrtf(2.0f) * (init[1] - init[0]))  /* near the box diagonal */
        return dg_cfg_error(cfg, "env.min_separation", e, "cannot be met inside env.init");

    env->state_dim = 8;
    env->aux_dim = 0;
    env->obs_dim = 8;
    env->act_dim = 2;
    env->nterms = 3;
    env->term_names[0] = "chase";
    env->term_names[1] = "wall";
    env->term_names[2] = "energy";
    memcpy(env->term_weights, w, 3 * sizeof(float));
    if (c->learned) {  /* zero-sum J: the evader's own costs enter with a minus */
        env->nplayers = 2;
        env->obs2_dim = 8;
        env->act2_dim = 2;
        env->nterms = 5;
        env->term_names[3] = "evader_wall";
        env->term_names[4] = "evader_energy";
        env->term_weights[3] = -w[3];
        env->term_weights[4] = -w[4];
    }
    env->nmetrics = c->walls ? 3 : 2;  /* left_arena: only where there is an arena */
    env->metric_names[0] = "capture_rate";
    env->metric_names[1] = "capture_time";
    env->metric_names[2] = "left_arena";
    env->violation_label = "left the arena";
    env->nshapes = c->walls;
    env->shapes[0] = (dg_shape){DG_SHAPE_BOX, 0.0f, 0.0f, 1.0f, 1.0f};  /* the arena walls */
    return DG_OK;
}

static void chase_destroy(dg_env *env) { free(env->impl); }

/* Each row's positions are re-drawn until min_separation apart: create() refused separations
 * near the box diagonal, so a draw succeeds with a fair probability; DG_RESET_MAX_TRIES bounds it. */
static dg_status chase_reset(const dg_env *env, dg_rng *rng, int B, float *state, float *aux,
                             dg_err *e) {
    const chase *c = env->impl;
    for (int b = 0; b < B; b++) {
        float *s = state + (size_t)b * env->state_dim;
        float dx, dy;
        int tries = 0;
        do {
            if (tries++ == DG_RESET_MAX_TRIES)
                return dg_err_set(e, DG_ERR_ARG, "chase: no initial state with env.min_separation %g "
                                  "in env.init after %d draws", (double)c->min_sep, DG_RESET_MAX_TRIES);
            s[0] = dg_rng_uniform(rng, c->init_lo, c->init_hi);
            s[1] = dg_rng_uniform(rng, c->init_lo, c->init_hi);
            s[4] = dg_rng_uniform(rng, c->init_lo, c->init_hi);
            s[5] = dg_rng_uniform(rng, c->init_lo, c->init_hi);
            dx = s[4] - s[0];
            dy = s[5] - s[1];
        } while (dx * dx + dy * dy < c->min_sep * c->min_sep);
        s[2] = s[3] = s[6] = s[7] = 0.0f;
    }
    (void)aux;
    return DG_OK;
}

/* [px, py, pvx, pvy, ex - px, ey - py, evx, evy] */
static dg_tensor *chase_observe(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux) {
    dg_tensor *p = dg_cols(ctx, state, 0, 4);
    dg_tensor *rel = dg_sub(ctx, dg_cols(ctx, state, 4, 2), dg_cols(ctx, state, 0, 2));
    dg_tensor *ev = dg_cols(ctx, state, 6, 2);
    return dg_concat(ctx, (dg_tensor *[]){p, rel, ev}, 3, 1);
}

/* The evader flees: b = tanh(2 (away + wall)), differentiable in the state. */
static dg_tensor *flee_action(dg_ctx *ctx, const chase *c, dg_tensor *state) {
    dg_tensor *p = dg_cols(ctx, state, 0, 2), *ep = dg_cols(ctx, state, 4, 2);
    dg_tensor *d = dg_sub(ctx, ep, p);
    dg_tensor *len = dg_sqrt(ctx, dg_add_scalar(ctx, dg_sum_axis(ctx, dg_square(ctx, d), 1), 1e-4f));
    dg_tensor *away = dg_div(ctx, d, len);
    if (!c->walls) return dg_tanh(ctx, dg_scale(ctx, away, 2.0f));
    dg_tensor *wall = dg_wall_push(ctx, ep, 1.0f, c->flee_k, c->flee_m);
    return dg_tanh(ctx, dg_scale(ctx, dg_add(ctx, away, wall), 2.0f));
}

/* the evader's view: [ex, ey, evx, evy, px - ex, py - ey, pvx, pvy] */
static dg_tensor *chase_observe2(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux) {
    dg_tensor *ev = dg_cols(ctx, state, 4, 4);
    dg_tensor *rel = dg_sub(ctx, dg_cols(ctx, state, 0, 2), dg_cols(ctx, state, 4, 2));
    dg_tensor *pv = dg_cols(ctx, state, 2, 2);
    return dg_concat(ctx, (dg_tensor *[]){ev, rel, pv}, 3, 1);
}

/* action: the pursuer's a (B,2), or with a learned evader [a, b] (B,4) */
static dg_tensor *chase_step(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux,
                             dg_tensor *action) {
    const chase *c = env->impl;
    dg_tensor *both = c->learned ? action
                                 : dg_concat(ctx, (dg_tensor *[]){action, flee_action(ctx, c, state)}, 2, 1);
    if (c->disk)  /* each body's acceleration within the unit disk, as the 4-D HJBI game has it */
        both = dg_concat(ctx, (dg_tensor *[]){dg_unit_disk(ctx, dg_cols(ctx, both, 0, 2)),
                                               dg_unit_disk(ctx, dg_cols(ctx, both, 2, 2))}, 2, 1);
    if (c->walls && c->contact > 0.0f)
        return dg_phys_step_walls(ctx, state, both, 2, c->accel, env->dt, c->damping, c->contact_wall,
                                  c->contact);
    return dg_phys_step(ctx, state, both, 2, c->accel, env->dt, c->damping);
}

/* chase: mean_b |p' - e'|²; wall: mean_b Σ relu(|p'| - 1)²; energy: mean_b |a|² */
static void chase_step_cost(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux,
                            dg_tensor *action, float inv_batch, dg_tensor **terms) {
    const chase *c = env->impl;
    dg_tensor *p = dg_cols(ctx, next, 0, 2), *ep = dg_cols(ctx, next, 4, 2);
    dg_tensor *a = c->learned ? dg_cols(ctx, action, 0, 2) : action;
    terms[0] = dg__batch_mean(ctx, dg_square(ctx, dg_sub(ctx, p, ep)), inv_batch);
    terms[1] = c->walls ? dg__batch_mean(ctx, dg_penalty_outside(ctx, p, 1.0f), inv_batch) : dg_scalar(ctx, 0.0f);
    terms[2] = dg__batch_mean(ctx, dg_square(ctx, a), inv_batch);
    if (c->learned) {  /* the evader stays in the arena too, and pays for its effort */
        terms[3] = c->walls ? dg__batch_mean(ctx, dg_penalty_outside(ctx, ep, 1.0f), inv_batch)
                            : dg_scalar(ctx, 0.0f);
        terms[4] = dg__batch_mean(ctx, dg_square(ctx, dg_cols(ctx, action, 2, 2)), inv_batch);
    }
}

/* bit 0: the pursuer outside the arena [-1, 1]², bit 1: the evader (with walls only) */
static unsigned chase_violation(const dg_env *env, const float *s, const float *aux) {
    const chase *c = env->impl;
    if (!c->walls) return 0;
    return (unsigned)(fabsf(s[0]) > 1.0f || fabsf(s[1]) > 1.0f) |
           (unsigned)(fabsf(s[4]) > 1.0f || fabsf(s[5]) > 1.0f) << 1;
}

/* capture_rate: episodes whose distance falls below the capture radius at
 * some step 1..H; capture_time: mean first such time (s) over those (NaN if none);
 * left_arena (with walls only): episodes in which a body is outside [-1, 1]² at
 * some step 1..H */
static void chase_metrics(const dg_env *env, const float *traj, const float *aux, int B, int H,
                          double *values) {
    const chase *c = env->impl;
    int captured = 0, left = 0;
    double tsum = 0.0;
    for (int b = 0; b < B; b++) {
        int got = 0, out = 0;
        for (int t = 1; t <= H && !(got && out); t++) {
            const float *s = traj + ((int64_t)t * B + b) * env->state_dim;
            const float dx = s[4] - s[0], dy = s[5] - s[1];
            if (!got && dx * dx + dy * dy < c->capture_radius * c->capture_radius) {
                got = 1;
                tsum += t * env->dt;
            }
            out |= chase_violation(env, s, NULL) != 0;
        }
        captured += got;
        left += out;
    }
    values[0] = B ? (double)captured / B : 0.0;
    values[1] = captured ? tsum / captured : NAN;
    if (c->walls) values[2] = B ? (double)left / B : 0.0;
}

static int chase_bodies(const dg_env *env, const float *s, const float *aux, float *xy, int *is_goal) {
    xy[0] = s[0];
    xy[1] = s[1];
    xy[2] = s[4];
    xy[3] = s[5];
    is_goal[0] = 0;
    is_goal[1] = 0;
    return 2;
}

const dg_game dg_game_chase = {
    .name = "chase",
    .summary = "a pursuer learns to catch a slower evader (scripted flee, or learned: evader: policy)",
    .create = chase_create,
    .destroy = chase_destroy,
    .reset = chase_reset,
    .observe = chase_observe,
    .observe2 = chase_observe2,
    .step = chase_step,
    .step_cost = chase_step_cost,
    .metrics = chase_metrics,
    .bodies = chase_bodies,
    .violation = chase_violation,
};
