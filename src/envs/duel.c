/* duel_simple: simple-motion pursuit-evasion between two learned players.
 * Velocity-controlled bodies in the open plane, speeds v_p > v_e, capture at
 * distance r. Its equilibrium is known exactly (Isaacs): the pursuer runs
 * straight at the evader, the evader straight away, and capture from distance
 * d takes (d - r) / (v_p - v_e); a check of what two gradient players learn. */
#include <tgmath.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/physics.h"
#include "envs/games.h"

typedef struct duel {
    float vp, ve, r;
    float dist[2];        /* initial distance ~ U(dist) */
    float box;            /* pursuer start ~ U(-box, box)^2 */
} duel;

static const dg_key KEYS[] = {
    DG_K_F32("env.speed_pursuer", duel, vp, 1.0f, 0, DG_MAX_MAGNITUDE, 0, 1, "pursuer's speed v_p"),
    DG_K_F32("env.speed_evader", duel, ve, 0.6f, 0, DG_MAX_MAGNITUDE, 1, 1, "evader's speed v_e, below v_p"),
    DG__KEY_CAPTURE_RADIUS(duel, r, 0.1f),
    DG_K_SPAN("env.distance", duel, dist, 0.5f, 1.5f, "initial distance ~ U(lo, hi), lo above the capture radius"),
    DG_K_F32("env.start_box", duel, box, 0.5f, 0, DG_MAX_MAGNITUDE, 1, 1, "pursuer's start ~ U(-start_box, start_box)^2"),
};

static const dg_loss_term LOSS[] = {
    {"loss.distance", 1.0f, NULL, 0, "mean_b of the distance between the players, each step"},
    {"loss.energy", 0.0f, NULL, 0, "mean_b |a|^2 of the pursuer"},
    {"loss.evader_energy", 0.0f, NULL, 1, "mean_b |b|^2 of the evader (its own cost)"},
};

static dg_status duel_create(dg_env *env, dg_cfg *cfg, dg_err *e) {
    const duel *d = env->impl;
    if (!(d->ve < d->vp))
        return dg_cfg_error(cfg, "env.speed_evader", e, "must be below env.speed_pursuer (%g) for capture", d->vp);
    if (!(d->dist[0] > d->r))
        return dg_cfg_error(cfg, "env.distance", e, "must start beyond the capture radius %g", d->r);
    env->state_dim = 4;   /* [px, py, ex, ey] */
    env->state_names = "px,py,ex,ey";
    env->obs_dim = 4;     /* pursuer: [px, py, ex - px, ey - py] */
    env->act_dim = 2;
    env->nplayers = 2;
    env->obs2_dim = 4;    /* evader: [ex, ey, px - ex, py - ey] */
    env->act2_dim = 2;
    env->value_dim = 2;   /* the value depends on x = e - p alone (pursuit2d's state, dg_hji_link) */
    env->value_plus[0] = 2;
    env->value_plus[1] = 3;
    env->value_minus[0] = 0;
    env->value_minus[1] = 1;
    env->nmetrics = 4;
    env->metric_names[0] = "capture_rate";
    env->metric_names[1] = "capture_time";
    env->metric_names[2] = "reference_capture_time";
    env->metric_names[3] = "capture_time_error";
    for (int k = 1; k <= 3; k++) env->metric_undefined[k] = "no episode was captured (a mean over captured episodes)";
    return DG_OK;
}

static dg_status duel_reset(const dg_env *env, dg_rng *rng, int B, dg_real *state, dg_real *aux,
                            dg_err *e) {
    const duel *d = env->impl;
    (void)aux;
    (void)e;
    for (int b = 0; b < B; b++) {
        dg_real *s = state + (size_t)b * env->state_dim;
        s[0] = dg_rng_uniform(rng, -d->box, d->box);
        s[1] = dg_rng_uniform(rng, -d->box, d->box);
        const dg_real dist = dg_rng_uniform(rng, d->dist[0], d->dist[1]);
        const dg_real ang = dg_rng_uniform(rng, 0.0f, 6.2831853f);
        s[2] = s[0] + dist * cos(ang);
        s[3] = s[1] + dist * sin(ang);
    }
    return DG_OK;
}

static dg_tensor *duel_observe(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux) {
    dg_tensor *p = dg_cols(ctx, state, 0, 2), *ev = dg_cols(ctx, state, 2, 2);
    return dg_concat(ctx, (dg_tensor *[]){p, dg_sub(ctx, ev, p)}, 2, 1);
}

static dg_tensor *duel_observe2(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux) {
    dg_tensor *p = dg_cols(ctx, state, 0, 2), *ev = dg_cols(ctx, state, 2, 2);
    return dg_concat(ctx, (dg_tensor *[]){ev, dg_sub(ctx, p, ev)}, 2, 1);
}

/* p' = p + v_p â dt, e' = e + v_e b̂ dt, with â, b̂ the actions on the unit disk */
static dg_tensor *duel_step(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux,
                            dg_tensor *action) {
    const duel *d = env->impl;
    dg_tensor *a = dg_unit_disk(ctx, dg_cols(ctx, action, 0, 2));
    dg_tensor *b = dg_unit_disk(ctx, dg_cols(ctx, action, 2, 2));
    dg_tensor *p = dg_add(ctx, dg_cols(ctx, state, 0, 2), dg_scale(ctx, a, d->vp * env->dt));
    dg_tensor *ev = dg_add(ctx, dg_cols(ctx, state, 2, 2), dg_scale(ctx, b, d->ve * env->dt));
    return dg_concat(ctx, (dg_tensor *[]){p, ev}, 2, 1);
}

/* per row: distance |p' - e'| (the pursuer shortens it, the evader keeps it; smoothed by 1e-6 under
 * the root); energy |a|²; evader_energy |b|² (weighted negatively) */
static void duel_step_cost_rows(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux, dg_tensor *action,
                                dg_tensor **rows) {
    dg_tensor *diff = dg_sub(ctx, dg_cols(ctx, next, 0, 2), dg_cols(ctx, next, 2, 2));
    rows[0] = dg_sqrt(ctx, dg_add_scalar(ctx, dg_sum_axis(ctx, dg_square(ctx, diff), 1), 1e-6f));
    rows[1] = dg_square(ctx, dg_cols(ctx, action, 0, 2));
    rows[2] = dg_square(ctx, dg_cols(ctx, action, 2, 2));
}

/* capture from distance d under both players' equilibrium: (d - r) / (v_p - v_e) */
static double duel_equilibrium_time(const dg_env *env, const dg_real *s, const dg_real *aux) {
    const duel *d = env->impl;
    return (hypot((double)s[2] - s[0], (double)s[3] - s[1]) - d->r) / (d->vp - d->ve);
}

/* capture_rate; capture_time (mean over captured); reference_capture_time:
 * the exact (d0 - r) / (v_p - v_e) of the same episodes; capture_time_error:
 * mean |t - t*| / t* over them */
static void duel_metrics(const dg_env *env, const dg_real *traj, const dg_real *aux, int B, int H,
                         double *values) {
    const duel *d = env->impl;
    int captured = 0;
    double tsum = 0, refsum = 0, errsum = 0;
    for (int b = 0; b < B; b++) {
        const dg_real *s0 = traj + (int64_t)b * env->state_dim;
        const double tref = duel_equilibrium_time(env, s0, aux);
        for (int t = 1; t <= H; t++) {
            const dg_real *s = traj + ((int64_t)t * B + b) * env->state_dim;
            if (hypot((double)s[2] - s[0], (double)s[3] - s[1]) <= d->r) {
                captured++;
                tsum += t * env->dt;
                refsum += tref;
                errsum += fabs(t * env->dt - tref) / tref;
                break;
            }
        }
    }
    values[0] = B ? (double)captured / B : 0.0;
    values[1] = captured ? tsum / captured : NAN;
    values[2] = captured ? refsum / captured : NAN;
    values[3] = captured ? errsum / captured : NAN;
}

static int duel_bodies(const dg_env *env, const dg_real *s, const dg_real *aux, dg_real *xy, int *is_goal) {
    return dg__bodies_two(s, s + 2, 0, xy, is_goal);  /* pursuer, evader */
}

const dg_game dg_game_duel_simple = {
    .name = "duel_simple",
    .summary = "two learned players, simple motion: capture time against the exact (d - r)/(vp - ve)",
    .dt = 0.02f,
    .horizon = 200,
    DG_GAME_DECLARE(KEYS, duel, LOSS),
    .create = duel_create,
    .reset = duel_reset,
    .observe = duel_observe,
    .observe2 = duel_observe2,
    .step = duel_step,
    .step_cost = dg_env_step_cost_from_rows,
    .step_cost_rows = duel_step_cost_rows,
    .metrics = duel_metrics,
    .bodies = duel_bodies,
    .body_names = "pursuer,evader",
    .equilibrium_time = duel_equilibrium_time,
};
