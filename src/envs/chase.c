/* chase: a learned pursuer against a scripted, differentiable fleeing evader
 * in the arena [-1, 1]² (docs/games/chase.md). */
#include <tgmath.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/physics.h"
#include "envs/games.h"

typedef struct chase {
    float accel[2];               /* pursuer, evader */
    float damping;
    float flee_k, flee_m;         /* wall push sharpness and margin */
    float capture_radius;
    float init[2], min_sep;       /* positions ~ U(init), bodies at least min_sep apart */
    int   learned;                /* evader: policy (a second learned player) */
    int   walls;                  /* 0: the open plane (no wall terms, no wall push) */
    int   disk;                   /* actions bounded to the unit disk, not the box [-1, 1]^2 */
    float contact, contact_wall;  /* soft walls: stiffness in [0, 1] (0: none), at ±contact_wall */
    int   relative;               /* observe: each player sees only the other's relative position and
                                     velocity (the open plane's state, chase4d's axes) */
} chase;

static const char *const EVADERS[] = {"flee", "policy", NULL};   /* index: c->learned */
static const char *const ACTION_SETS[] = {"box", "disk", NULL};  /* index: c->disk */
static const char *const OBSERVE[] = {"full", "relative", NULL};  /* index: c->relative */

static const dg_key KEYS[] = {
    DG__KEY_DAMPING(chase, damping, 0.98f),
    DG__KEY_ACCEL("env.accel_pursuer", chase, accel[0], 5.0f, "pursuer's action [-1, 1] -> acceleration"),
    DG_K_F32("env.accel_evader", chase, accel[1], 3.5f, 0, DG_MAX_MAGNITUDE, 1, 1, "evader's action -> acceleration"),
    DG_K_ENUM("env.evader", chase, learned, 0, EVADERS, "evader",
              "flee: scripted and differentiable; policy: a second learned player"),
    DG_K_BOOL("env.walls", chase, walls, 1, "the arena [-1, 1]^2 has walls (false: the open plane)"),
    DG_K_ENUM("env.action_set", chase, disk, 0, ACTION_SETS, "action set",
              "actions bounded to the box [-1, 1]^2 or the unit disk"),
    DG_K_F32("env.wall_contact", chase, contact, 1.0f, 0, 1, 1, 1, "soft-wall stiffness (0: none)"),
    DG_K_F32("env.contact_wall", chase, contact_wall, 0.97f, 0, 1, 0, 1, "where the soft walls stand (+-)"),
    DG_K_F32("env.flee_k", chase, flee_k, 20.0f, 0, 1e4f, 0, 1, "sharpness of the fleeing evader's wall push"),
    DG_K_F32("env.flee_margin", chase, flee_m, 0.15f, 0, 1, 1, 0, "distance from a wall where the push starts"),
    DG__KEY_CAPTURE_RADIUS(chase, capture_radius, 0.1f),
    DG_K_SPAN("env.init", chase, init, -0.8f, 0.8f, "both bodies' coordinates ~ U(lo, hi)"),
    DG_K_F32("env.min_separation", chase, min_sep, 0.5f, 0, 2, 1, 1, "initial distance between the bodies"),
    DG_K_ENUM("env.observe", chase, relative, 0, OBSERVE, "observation",
              "full: own position and velocity, the other's relative position and velocity (8); relative: the "
              "other's relative position and velocity only (4; the open plane: difgames certify's exact "
              "exploitability on chase4d's grid)"),
};

static const dg_loss_term LOSS[] = {
    {"loss.chase", 1.0f, NULL, 0, "mean_b |p_pursuer - p_evader|^2"},
    {"loss.wall", 10.0f, NULL, 0, "mean_b of the pursuer's squared distance outside the arena"},
    {"loss.energy", 0.01f, NULL, 0, "mean_b |a|^2 of the pursuer"},
    {"loss.evader_wall", 10.0f, "loss.wall", 1, "evader: policy only; the evader's wall term (default: loss.wall)"},
    {"loss.evader_energy", 0.01f, "loss.energy", 1,
     "evader: policy only; the evader's energy (default: loss.energy)"},
};

static dg_status chase_create(dg_env *env, dg_cfg *cfg, dg_err *e) {
    chase *c = env->impl;
    const float *init = c->init;
    if (!(init[0] >= -1.0f && init[1] <= 1.0f))
        return dg_cfg_error(cfg, "env.init", e, "must lie inside the arena [-1, 1]");
    if (c->walls && c->contact > 0.0f && !(init[0] >= -c->contact_wall && init[1] <= c->contact_wall))
        return dg_cfg_error(cfg, "env.contact_wall", e, "the contact walls at +-%g must enclose env.init [%g, %g]",
                            (double)c->contact_wall, (double)init[0], (double)init[1]);
    if (c->min_sep >= 0.9f * sqrt((dg_real)2) * (init[1] - init[0]))  /* near the box diagonal */
        return dg_cfg_error(cfg, "env.min_separation", e, "cannot be met inside env.init");

    if (c->relative && c->walls)
        return dg_cfg_error(cfg, "env.observe", e, "relative needs the open plane (env.walls: false): walls are "
                            "where a body is, which a relative view does not see");
    env->state_dim = 8;
    env->state_names = "px,py,pvx,pvy,ex,ey,evx,evy";
    env->aux_dim = 0;
    env->obs_dim = c->relative ? 4 : 8;
    env->act_dim = 2;
    env->nterms = 3;
    if (c->learned) {  /* zero-sum J: the evader's own costs enter with a minus */
        env->nplayers = 2;
        env->obs2_dim = c->relative ? 4 : 8;
        env->act2_dim = 2;
        env->nterms = 5;
    }
    if (!c->walls) {  /* the open plane: the value depends on the relative position and velocity alone */
        env->value_dim = 4;
        for (int k = 0; k < 4; k++) {
            env->value_plus[k] = 4 + k;
            env->value_minus[k] = k;
        }
    }
    env->nmetrics = c->walls ? 3 : 2;  /* left_arena: only where there is an arena */
    env->metric_names[0] = "capture_rate";
    env->metric_names[1] = "capture_time";
    env->metric_undefined[1] = "no episode was captured (a mean over captured episodes)";
    env->metric_names[2] = "left_arena";
    env->violation_label = "left the arena";
    env->nshapes = c->walls;
    env->shapes[0] = (dg_shape){DG_SHAPE_BOX, 0.0f, 0.0f, 1.0f, 1.0f};  /* the arena walls */
    return DG_OK;
}

/* Each row's positions are re-drawn until min_separation apart: create() refused separations
 * near the box diagonal, so a draw succeeds with a fair probability; DG_RESET_MAX_TRIES bounds it. */
static dg_status chase_reset(const dg_env *env, dg_rng *rng, int B, dg_real *state, dg_real *aux,
                             dg_err *e) {
    const chase *c = env->impl;
    for (int b = 0; b < B; b++) {
        dg_real *s = state + (size_t)b * env->state_dim;
        dg_real dx, dy;
        int tries = 0;
        do {
            if (tries++ == DG_RESET_MAX_TRIES)
                return dg_err_set(e, DG_ERR_ARG, "chase: no initial state with env.min_separation %g "
                                  "in env.init after %d draws", (double)c->min_sep, DG_RESET_MAX_TRIES);
            s[0] = dg_rng_uniform(rng, c->init[0], c->init[1]);
            s[1] = dg_rng_uniform(rng, c->init[0], c->init[1]);
            s[4] = dg_rng_uniform(rng, c->init[0], c->init[1]);
            s[5] = dg_rng_uniform(rng, c->init[0], c->init[1]);
            dx = s[4] - s[0];
            dy = s[5] - s[1];
        } while (dx * dx + dy * dy < c->min_sep * c->min_sep);
        s[2] = s[3] = s[6] = s[7] = 0.0f;
    }
    (void)aux;
    return DG_OK;
}

/* [px, py, pvx, pvy, ex - px, ey - py, evx, evy]; relative: [ex - px, ey - py, evx - pvx, evy - pvy] */
static dg_tensor *chase_observe(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux) {
    if (((const chase *)env->impl)->relative) return dg_sub(ctx, dg_cols(ctx, state, 4, 4), dg_cols(ctx, state, 0, 4));
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

/* the evader's view: [ex, ey, evx, evy, px - ex, py - ey, pvx, pvy]; relative: [px - ex, ..., pvy - evy] */
static dg_tensor *chase_observe2(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux) {
    if (((const chase *)env->impl)->relative) return dg_sub(ctx, dg_cols(ctx, state, 0, 4), dg_cols(ctx, state, 4, 4));
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

/* per row: chase |p' - e'|²; wall Σ relu(|p'| - 1)²; energy |a|² (and the learned evader's wall and
 * energy) */
static void chase_step_cost_rows(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux, dg_tensor *action,
                                 dg_tensor **rows) {
    const chase *c = env->impl;
    dg_tensor *p = dg_cols(ctx, next, 0, 2), *ep = dg_cols(ctx, next, 4, 2);
    dg_tensor *a = c->learned ? dg_cols(ctx, action, 0, 2) : action;
    rows[0] = dg_square(ctx, dg_sub(ctx, p, ep));
    rows[1] = c->walls ? dg_penalty_outside(ctx, p, 1.0f) : NULL;
    rows[2] = dg_square(ctx, a);
    if (c->learned) {  /* the evader stays in the arena too, and pays for its effort */
        rows[3] = c->walls ? dg_penalty_outside(ctx, ep, 1.0f) : NULL;
        rows[4] = dg_square(ctx, dg_cols(ctx, action, 2, 2));
    }
}

/* bit 0: the pursuer outside the arena [-1, 1]², bit 1: the evader (with walls only) */
static unsigned chase_violation(const dg_env *env, const dg_real *s, const dg_real *aux) {
    const chase *c = env->impl;
    if (!c->walls) return 0;
    return (unsigned)(fabs(s[0]) > 1.0f || fabs(s[1]) > 1.0f) |
           (unsigned)(fabs(s[4]) > 1.0f || fabs(s[5]) > 1.0f) << 1;
}

/* capture_rate: episodes whose distance falls below the capture radius at
 * some step 1..H; capture_time: mean first such time (s) over those (NaN if none);
 * left_arena (with walls only): episodes in which a body is outside [-1, 1]² at
 * some step 1..H */
static void chase_metrics(const dg_env *env, const dg_real *traj, const dg_real *aux, int B, int H,
                          double *values) {
    const chase *c = env->impl;
    int captured = 0, left = 0;
    double tsum = 0.0;
    for (int b = 0; b < B; b++) {
        int got = 0, out = 0;
        for (int t = 1; t <= H && !(got && out); t++) {
            const dg_real *s = traj + ((int64_t)t * B + b) * env->state_dim;
            const dg_real dx = s[4] - s[0], dy = s[5] - s[1];
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

static int chase_bodies(const dg_env *env, const dg_real *s, const dg_real *aux, dg_real *xy, int *is_goal) {
    return dg__bodies_two(s, s + 4, 0, xy, is_goal);  /* pursuer, evader */
}

const dg_game dg_game_chase = {
    .name = "chase",
    .summary = "a pursuer learns to catch a slower evader (scripted flee, or learned: evader: policy)",
    .dt = 0.05f,
    .horizon = 80,
    DG_GAME_DECLARE(KEYS, chase, LOSS),
    .create = chase_create,
    .reset = chase_reset,
    .observe = chase_observe,
    .observe2 = chase_observe2,
    .step = chase_step,
    .step_cost = dg_env_step_cost_from_rows,
    .step_cost_rows = chase_step_cost_rows,
    .metrics = chase_metrics,
    .bodies = chase_bodies,
    .body_names = "pursuer,evader",
    .violation = chase_violation,
};
