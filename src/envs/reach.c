/* reach: drive a point mass to a goal around circular obstacles; the game and
 * its benchmark task are defined in docs/games/reach.md. */
#include <tgmath.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/physics.h"
#include "envs/games.h"

#define MAX_OBST 16
#define MAX_TRIES DG_RESET_MAX_TRIES

typedef struct reach {
    float accel, damping, margin;
    int   nobst;
    float obst[MAX_OBST][3];      /* (cx, cy, r) */
    float start_x[2], start_y[2], goal_x[2], goal_y[2];
    float noise;                  /* env.noise: sigma of dv = accel a dt + sigma dW */
} reach;

/* distance from (x, y) to the nearest obstacle surface (inf without obstacles) */
static dg_real obst_dist(const reach *r, dg_real x, dg_real y) {
    dg_real best = INFINITY;
    for (int k = 0; k < r->nobst; k++) {
        dg_real d = sqrt((x - r->obst[k][0]) * (x - r->obst[k][0]) +
                        (y - r->obst[k][1]) * (y - r->obst[k][1]) + 1e-9f) - r->obst[k][2];
        if (d < best) best = d;
    }
    return best;
}

static int draw_start(const reach *r, dg_rng *rng, dg_real *x, dg_real *y) {
    for (int t = 0; t < MAX_TRIES; t++) {
        *x = dg_rng_uniform(rng, r->start_x[0], r->start_x[1]);
        *y = dg_rng_uniform(rng, r->start_y[0], r->start_y[1]);
        if (obst_dist(r, *x, *y) >= r->margin) return 1;
    }
    return 0;
}

static int draw_goal(const reach *r, dg_rng *rng, dg_real *x, dg_real *y) {
    for (int t = 0; t < MAX_TRIES; t++) {
        *x = dg_rng_uniform(rng, r->goal_x[0], r->goal_x[1]);
        *y = dg_rng_uniform(rng, r->goal_y[0], r->goal_y[1]);
        if (obst_dist(r, *x, *y) >= 0.0f) return 1;
    }
    return 0;
}

static const dg_key KEYS[] = {
    DG__KEY_DAMPING(reach, damping, 0.98f),
    DG__KEY_ACCEL("env.accel_scale", reach, accel, 5.0f, "action [-1, 1] -> acceleration"),
    DG_K_F32("env.margin", reach, margin, 0.1f, 0, 10, 1, 1, "collision penalty starts this far from an obstacle"),
    {.name = "env.obstacles", .type = DG_KEY_F32_ROWS, .offset = offsetof(reach, obst),
     .count_offset = offsetof(reach, nobst), .cols = 3, .min_n = 0, .max_n = MAX_OBST,
     .def_v = (const double[]){0.0f, 0.0f, 0.25f}, .def_n = 1, .doc = "circles [cx, cy, r], r > 0"},
    DG_K_SPAN("env.start.x", reach, start_x, -0.9f, -0.6f, "start x ~ U(lo, hi)"),
    DG_K_SPAN("env.start.y", reach, start_y, -0.5f, 0.5f, "start y ~ U(lo, hi)"),
    DG_K_SPAN("env.goal.x", reach, goal_x, 0.6f, 0.9f, "goal x ~ U(lo, hi)"),
    DG_K_SPAN("env.goal.y", reach, goal_y, -0.5f, 0.5f, "goal y ~ U(lo, hi)"),
    DG_K_F32("env.noise", reach, noise, 0.0f, 0, DG_MAX_MAGNITUDE, 1, 1,
             "Brownian noise on the velocity: dv = accel a dt + noise dW per axis (Euler-Maruyama, seeded per batch "
             "row and step; 0: deterministic)"),
};

static const dg_loss_term LOSS[] = {
    {"loss.goal", 1.0f, NULL, 0, "mean_b |p' - g|^2"},
    {"loss.collision", 500.0f, NULL, 0, "mean_b sum_k relu(margin - dist_k)^2"},
    {"loss.energy", 0.01f, NULL, 0, "mean_b |a|^2"},
};

static dg_status reach_create(dg_env *env, dg_cfg *cfg, dg_err *e) {
    reach *r = env->impl;
    for (int k = 0; k < r->nobst; k++)
        if (!(r->obst[k][2] > 0.0f))
            return dg_cfg_error(cfg, "env.obstacles", e, "obstacle %d: radius must be > 0", k);
    /* rejection sampling must be able to succeed */
    dg_rng probe;
    dg_rng_seed(&probe, 1);
    dg_real x, y;
    int ok_s = 0, ok_g = 0;
    for (int t = 0; t < 4096 && !(ok_s && ok_g); t++) {
        x = dg_rng_uniform(&probe, r->start_x[0], r->start_x[1]);
        y = dg_rng_uniform(&probe, r->start_y[0], r->start_y[1]);
        ok_s |= obst_dist(r, x, y) >= r->margin;
        x = dg_rng_uniform(&probe, r->goal_x[0], r->goal_x[1]);
        y = dg_rng_uniform(&probe, r->goal_y[0], r->goal_y[1]);
        ok_g |= obst_dist(r, x, y) >= 0.0f;
    }
    if (!ok_s) return dg_cfg_error(cfg, "env.start", e, "the start box lies within the margin of an obstacle");
    if (!ok_g) return dg_cfg_error(cfg, "env.goal", e, "the goal box lies inside an obstacle");

    env->state_dim = 4;
    env->state_names = "x,y,vx,vy";
    env->aux_dim = 2;
    env->obs_dim = 6;
    env->act_dim = 2;
    env->aux_name = "goal";
    env->aux_user_dim = 2;
    env->noise_dim = r->noise > 0.0f ? 2 : 0;  /* one Brownian motion per axis */
    env->nmetrics = 2;
    env->metric_names[0] = "obstacle_hit_rate";
    env->metric_names[1] = "final_dist";
    env->violation_label = "inside an obstacle";
    env->nshapes = r->nobst;
    for (int k = 0; k < r->nobst; k++)
        env->shapes[k] = (dg_shape){DG_SHAPE_CIRCLE, r->obst[k][0], r->obst[k][1], r->obst[k][2], 0};
    return DG_OK;
}

static dg_status reach_reset(const dg_env *env, dg_rng *rng, int B, dg_real *state, dg_real *aux,
                             dg_err *e) {
    const reach *r = env->impl;
    for (int b = 0; b < B; b++) {
        dg_real *s = state + (size_t)b * env->state_dim, *g = aux + (size_t)b * env->aux_dim;
        /* create() checked that draws succeed: a failure here is a row in a tiny free area */
        if (!draw_start(r, rng, &s[0], &s[1]))
            return dg_err_set(e, DG_ERR_ARG, "reach: no start outside the obstacles after %d draws", MAX_TRIES);
        s[2] = s[3] = 0.0f;
        if (!draw_goal(r, rng, &g[0], &g[1]))
            return dg_err_set(e, DG_ERR_ARG, "reach: no goal outside the obstacles after %d draws", MAX_TRIES);
    }
    return DG_OK;
}

/* [x, y, vx, vy, gx, gy]: the concat of state (B,4) and aux (B,2) as one op with the
 * concat's additions (each row's first 4 gradients into the state's, the last 2 into aux's when
 * it has a gradient), in loops of a constant width instead of a copy and a loop per row and input */
static void obs_backward(dg_ctx *ctx, dg_tensor *out) {
    dg_tensor *st = out->srcs[0], *ax = out->srcs[1];
    dg_real *gs = st->requires_grad ? dg_grad_of(ctx, st) : NULL;
    dg_real *ga = ax->requires_grad ? dg_grad_of(ctx, ax) : NULL;
    if ((st->requires_grad && !gs) || (ax->requires_grad && !ga)) return;
    const int B = st->shape[0];
    const dg_real *g = out->grad;
    if (gs)
        for (int b = 0; b < B; b++)
            for (int j = 0; j < 4; j++) gs[4 * b + j] += g[6 * b + j];
    if (ga)
        for (int b = 0; b < B; b++)
            for (int j = 0; j < 2; j++) ga[2 * b + j] += g[6 * b + 4 + j];
}

static dg_tensor *reach_observe(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux) {
    (void)env;
    if (!state || !aux || dg_ctx_status(ctx) != DG_OK) return NULL;
    const int B = state->shape[0];
    if (state->ndim != 2 || state->shape[1] != 4 || aux->ndim != 2 || aux->shape[0] != B || aux->shape[1] != 2)
        return dg_ctx_fail(ctx, DG_ERR_SHAPE, "reach_obs: state (B,4) and goal (B,2) needed");
    dg_tensor *out = dg_custom(ctx, "reach_obs", 2, (int[]){B, 6}, (dg_tensor *[]){state, aux}, 2,
                               obs_backward, NULL, 0);
    if (!out) return NULL;
    for (int b = 0; b < B; b++) {
        for (int j = 0; j < 4; j++) out->data[6 * b + j] = state->data[4 * b + j];
        for (int j = 0; j < 2; j++) out->data[6 * b + 4 + j] = aux->data[2 * b + j];
    }
    return out;
}

static dg_tensor *reach_step(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux,
                             dg_tensor *action) {
    const reach *r = env->impl;
    return dg_phys_step(ctx, state, action, 1, &r->accel, env->dt, r->damping);
}

/* The step with noise, Euler-Maruyama: v' = (v + accel a dt + noise sqrt(dt) z) damping, p' = p + v' dt,
 * as dg_phys_step of the action a + noise z / (accel sqrt(dt)) (the costs see the action played) */
static dg_tensor *reach_step_noise(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux,
                                   dg_tensor *action, dg_tensor *z) {
    const reach *r = env->impl;
    (void)aux;
    dg_tensor *a = dg_add(ctx, action, dg_scale(ctx, z, r->noise / (r->accel * sqrt((dg_real)env->dt))));
    return dg_phys_step(ctx, state, a, 1, &r->accel, env->dt, r->damping);
}

/* The three cost terms of a step as one op, out (3,) = [goal, collision, energy]:
 *   goal      = inv_batch Σ_b |p_b - g_b|²                (p: next's first two columns)
 *   collision = inv_batch Σ_b Σ_k relu(margin - d_bk)²,   d_bk = sqrt(|p_b - c_k|² + 1e-9) - r_k
 *   energy    = inv_batch Σ_b |a_b|²
 * It does the operations of the chain it replaced (cols; sum_sq_diff; sdf_circles,
 * penalty_margin, sum, scale; sum_sq_diff: seven nodes, each intermediate a dg_real, the batch sums
 * in double) in that chain's order, forward and backward (each backward step onto a zero buffer:
 * the 0.0f +, and p's gradient the collision's then the goal's before it reaches next's), so the
 * bits are the chain's (tests/test_games.c: test_reach_cost_bits). The same op with rows set gives
 * each row's terms instead, out (B, 5) = [dx², dy², Σ_k relu(margin - d_k)², a_x², a_y²] (what the
 * discrete game's dynamic programming needs, certify_dp.h): both evaluate cost_block, the one
 * per-row formula, and share the backward. */
typedef struct cost_state {
    dg_real inv_batch, margin;
    int   nobst, rows;            /* rows: out (B, 5), each row's terms; else (3), the batch means */
    float obst[MAX_OBST][3];
} cost_state;

#define ROW_TERMS 5  /* a row's columns in the rows op: the goal's two squares, the collision, the energy's two */

/* rows are taken 16 at a time, each loop over the 16 (no dependence from row to row) so that the
 * compiler vectorises it: vector square roots and divisions round as the scalar ones do */
#define ROWS 16

/* The terms of the n <= ROWS rows from b0: qg (2n) the goal's squares dx², dy², y (n) the collision
 * Σ_k relu(margin - d_k)², qe (2n) the energy's squares a_x², a_y² (nd, gd, ad: next, goal and action
 * data, 4, 2 and 2 a row). */
static inline void cost_block(const cost_state *c, const dg_real *nd, const dg_real *gd, const dg_real *ad, int b0,
                              int n, dg_real *qg, dg_real *y, dg_real *qe) {
    for (int j = 0; j < n; j++) {
        const int b = b0 + j;
        const dg_real dx = nd[4 * b] - gd[2 * b], dy = nd[4 * b + 1] - gd[2 * b + 1];
        const dg_real qx = dx * dx, qy = dy * dy;
        qg[2 * j] = qx, qg[2 * j + 1] = qy;
        const dg_real ax = ad[2 * b], ay = ad[2 * b + 1];
        const dg_real ex = ax * ax, ey = ay * ay;
        qe[2 * j] = ex, qe[2 * j + 1] = ey;
        y[j] = 0.0f;
    }
    for (int k = 0; k < c->nobst; k++) {
        const dg_real cx = c->obst[k][0], cy = c->obst[k][1], cr = c->obst[k][2];
        if (k == 0)  /* 0 + rl², one rounding with or without a fused multiply-add */
            for (int j = 0; j < n; j++) {
                const dg_real dx = nd[4 * (b0 + j)] - cx, dy = nd[4 * (b0 + j) + 1] - cy;
                const dg_real d = sqrt(dx * dx + dy * dy + 1e-9f) - cr;
                const dg_real a = -d + c->margin, rl = a > 0.0f ? a : 0.0f;
                y[j] += rl * rl;
            }
        else
            for (int j = 0; j < n; j++) {
                const dg_real dx = nd[4 * (b0 + j)] - cx, dy = nd[4 * (b0 + j) + 1] - cy;
                const dg_real d = sqrt(dx * dx + dy * dy + 1e-9f) - cr;
                const dg_real a = -d + c->margin, rl = a > 0.0f ? a : 0.0f;
                volatile dg_real q = rl * rl;  /* rounded before the row's add, as the chain did */
                y[j] += q;
            }
    }
}

/* The gradient reaching each row's terms: the batch means' (one value a term, scaled by inv_batch
 * as the chain's scale and sums did) or the rows op's own (B, 5). G(col, b) reads it. */
#define G(col, b) (c->rows ? out->grad[ROW_TERMS * (b) + (col)] : gt[col])

static void cost_backward(dg_ctx *ctx, dg_tensor *out) {
    const cost_state *c = out->state;
    dg_tensor *next = out->srcs[0], *aux = out->srcs[1], *act = out->srcs[2];
    dg_real *gn = next->requires_grad ? dg_grad_of(ctx, next) : NULL;
    dg_real *gg = aux->requires_grad ? dg_grad_of(ctx, aux) : NULL;
    dg_real *ga = act->requires_grad ? dg_grad_of(ctx, act) : NULL;
    if ((next->requires_grad && !gn) || (aux->requires_grad && !gg) || (act->requires_grad && !ga)) return;
    const int B = next->shape[0];
    const dg_real s = c->inv_batch;
    dg_real gt[ROW_TERMS] = {0};  /* the batch means' gradient at each row's terms, the same for every row */
    if (!c->rows) {
        const dg_real gse = 0.0f + out->grad[2] * s;           /* energy: sum_sq_diff's backward */
        gt[3] = gt[4] = 0.0f + gse;
        const dg_real gsc = 0.0f + out->grad[1] * s;           /* collision: scale's backward */
        const dg_real grow = 0.0f + gsc;                       /* sum's, the same for every row */
        gt[2] = 0.0f + grow * 1.0f;                            /* penalty_margin's: the row's sum */
        const dg_real gs = 0.0f + out->grad[0] * s;            /* goal: sum_sq_diff's */
        gt[0] = gt[1] = 0.0f + gs;
    }
    if (ga) {  /* energy: sum_sq_diff's backward */
        for (int i = 0; i < 2 * B; i++) {
            const dg_real d = act->data[i];
            const dg_real gd = 0.0f + G(3 + i % 2, i / 2) * 2.0f * d;
            ga[i] += gd;
        }
    }
    if (!gn && !gg) return;
    const dg_real *nd = next->data, *gd = aux->data;
    for (int b0 = 0; b0 < B; b0 += ROWS) {
        const int n = B - b0 < ROWS ? B - b0 : ROWS;
        dg_real px[ROWS], py[ROWS], gx[ROWS], gy[ROWS], g1[ROWS];
        for (int j = 0; j < n; j++) {
            px[j] = nd[4 * (b0 + j)], py[j] = nd[4 * (b0 + j) + 1];
            gx[j] = 0.0f, gy[j] = 0.0f;
            g1[j] = G(2, b0 + j);
        }
        for (int k = 0; k < c->nobst; k++) {
            const dg_real cx = c->obst[k][0], cy = c->obst[k][1], cr = c->obst[k][2];
            for (int j = 0; j < n; j++) {
                const dg_real dx = px[j] - cx, dy = py[j] - cy;
                const dg_real d = sqrt(dx * dx + dy * dy + 1e-9f) - cr;
                const dg_real a = -d + c->margin, r = a > 0.0f ? a : 0.0f;  /* penalty_margin's backward */
                const dg_real gr = 0.0f + g1[j] * 2.0f * r;
                const dg_real gra = 0.0f + (a > 0.0f ? gr : 0.0f);
                const dg_real gng = 0.0f + gra;
                const dg_real gdist = 0.0f - gng;
                const dg_real inv = 1.0f / sqrt(dx * dx + dy * dy + 1e-9f);  /* sdf_circles' backward */
                gx[j] += gdist * dx * inv;
                gy[j] += gdist * dy * inv;
            }
        }
        for (int j = 0; j < n; j++) {
            const int b = b0 + j;
            const dg_real gpx = (0.0f + gx[j]), gpy = (0.0f + gy[j]);  /* p's gradient: the collision's, */
            const dg_real dxg = px[j] - gd[2 * b], dyg = py[j] - gd[2 * b + 1];  /* then the goal's */
            const dg_real gdx = 0.0f + G(0, b) * 2.0f * dxg, gdy = 0.0f + G(1, b) * 2.0f * dyg;
            if (gn) gn[4 * b] += gpx + gdx, gn[4 * b + 1] += gpy + gdy;  /* cols' backward */
            if (gg) gg[2 * b] += -gdx, gg[2 * b + 1] += -gdy;
        }
    }
}
#undef G

/* The cost op on next, aux and action: with rows each row's terms (B, 5), else the batch means (3);
 * NULL (the context's error set) on bad shapes */
static dg_tensor *cost_op(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux, dg_tensor *action,
                          dg_real inv_batch, int rows) {
    const reach *r = env->impl;
    if (!next || !aux || !action || dg_ctx_status(ctx) != DG_OK) return NULL;
    const int B = next->shape[0];
    if (next->ndim != 2 || next->shape[1] != 4 || aux->ndim != 2 || aux->shape[0] != B || aux->shape[1] != 2 ||
        action->ndim != 2 || action->shape[0] != B || action->shape[1] != 2)
        return dg_ctx_fail(ctx, DG_ERR_SHAPE, "reach_cost: state (B,4), goal (B,2) and action (B,2) needed");
    cost_state c = {.inv_batch = inv_batch, .margin = r->margin, .nobst = r->nobst, .rows = rows};
    memcpy(c.obst, r->obst, sizeof c.obst);
    dg_tensor *srcs[3] = {next, aux, action};
    dg_tensor *out = rows ? dg_custom(ctx, "reach_cost_rows", 2, (int[]){B, ROW_TERMS}, srcs, 3, cost_backward, &c,
                                      sizeof c)
                          : dg_custom(ctx, "reach_cost", 1, (int[]){3}, srcs, 3, cost_backward, &c, sizeof c);
    if (!out) return NULL;
    /* the squares and each row's penalty 16 rows at a time (vectorised), then the three sums in
     * double in the chain's order, one loop so that their dependent adds overlap (or each row's terms) */
    double goal = 0.0, coll = 0.0, energy = 0.0;
    const dg_real *nd = next->data, *gd = aux->data, *ad = action->data;
    for (int b0 = 0; b0 < B; b0 += ROWS) {
        const int n = B - b0 < ROWS ? B - b0 : ROWS;
        dg_real qg[2 * ROWS], qe[2 * ROWS], y[ROWS];
        cost_block(&c, nd, gd, ad, b0, n, qg, y, qe);
        if (rows) {
            for (int j = 0; j < n; j++) {
                dg_real *o = out->data + (size_t)ROW_TERMS * (b0 + j);
                o[0] = qg[2 * j], o[1] = qg[2 * j + 1], o[2] = y[j], o[3] = qe[2 * j], o[4] = qe[2 * j + 1];
            }
            continue;
        }
        for (int j = 0; j < n; j++) {
            goal += qg[2 * j];
            goal += qg[2 * j + 1];
            coll += y[j] * 1.0f;
            energy += qe[2 * j];
            energy += qe[2 * j + 1];
        }
    }
    if (!rows) {
        out->data[0] = (dg_real)goal * inv_batch;
        out->data[1] = (dg_real)coll * inv_batch;
        out->data[2] = (dg_real)energy * inv_batch;
    }
    return out;
}

/* goal, collision, energy: the batch means of the rows below, in one op (cost_op) */
static void reach_step_cost(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux,
                            dg_tensor *action, dg_real inv_batch, dg_tensor **terms) {
    dg_tensor *out = cost_op(ctx, env, next, aux, action, inv_batch, 0);
    if (!out) return;
    for (int i = 0; i < 3; i++) terms[i] = dg_slice(ctx, out, 0, i, 1);
}

/* per row: goal [dx², dy²] (B, 2); collision Σ_k relu(margin - d_k)² (B, 1); energy [a_x², a_y²] (B, 2) */
static void reach_step_cost_rows(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux, dg_tensor *action,
                                 dg_tensor **rows) {
    dg_tensor *out = cost_op(ctx, env, next, aux, action, 1.0f, 1);
    if (!out) return;
    rows[0] = dg_cols(ctx, out, 0, 2);
    rows[1] = dg_cols(ctx, out, 2, 1);
    rows[2] = dg_cols(ctx, out, 3, 2);
}

/* the agent inside an obstacle: a distance to its surface below 0 (bit 0: the agent) */
static unsigned reach_violation(const dg_env *env, const dg_real *s, const dg_real *aux) {
    const reach *r = env->impl;
    for (int k = 0; k < r->nobst; k++) {
        const dg_real dx = s[0] - r->obst[k][0], dy = s[1] - r->obst[k][1];
        if (dx * dx + dy * dy < r->obst[k][2] * r->obst[k][2]) return 1u;
    }
    return 0u;
}

/* |p_H - g|² of episode b */
static dg_real final_d2(const dg_env *env, const dg_real *traj, const dg_real *aux, int B, int H, int b) {
    const dg_real *s = traj + ((int64_t)H * B + b) * env->state_dim, *g = aux + (size_t)b * env->aux_dim;
    return (s[0] - g[0]) * (s[0] - g[0]) + (s[1] - g[1]) * (s[1] - g[1]);
}

/* the k-th smallest (from 0) of n floats, reordering v (Hoare's selection) */
static dg_real select_kth(dg_real *v, int n, int k) {
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        const dg_real pivot = v[lo + (hi - lo) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot) i++;
            while (v[j] > pivot) j--;
            if (i <= j) {
                const dg_real t = v[i];
                v[i++] = v[j];
                v[j--] = t;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else break;
    }
    return v[k];
}

/* the k-th smallest final |p_H - g|² over a batch too large for the stack
 * buffer, by bisection on the float bits (they order like the values for
 * numbers >= 0): 32 passes, no allocation (metrics run every epoch) */
static dg_real kth_final_d2(const dg_env *env, const dg_real *traj, const dg_real *aux, int B, int H, int k) {
    uint32_t lo = 0, hi = UINT32_MAX;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        int n = 0;
        for (int b = 0; b < B; b++) {
            const float d2 = final_d2(env, traj, aux, B, H, b);
            uint32_t u;
            memcpy(&u, &d2, sizeof u);
            n += u <= mid;
        }
        if (n > k) hi = mid;
        else lo = mid + 1;
    }
    float d2;
    memcpy(&d2, &lo, sizeof d2);
    return d2;
}

/* median over the batch of |p_H - g| (the two middle ones averaged for even B) */
static double median_final_dist(const dg_env *env, const dg_real *traj, const dg_real *aux, int B, int H) {
    enum { STACK = 1024 };
    dg_real buf[STACK], lo2, hi2;
    if (B <= STACK) {
        for (int b = 0; b < B; b++) {
            buf[b] = final_d2(env, traj, aux, B, H, b);
            if (buf[b] != buf[b]) return NAN;  /* a diverged episode: no order to take a median in */
        }
        hi2 = select_kth(buf, B, B / 2);
        lo2 = B % 2 ? hi2 : select_kth(buf, B / 2, B / 2 - 1);  /* the rest below B/2 stays left of it */
    } else {
        hi2 = kth_final_d2(env, traj, aux, B, H, B / 2);
        lo2 = B % 2 ? hi2 : kth_final_d2(env, traj, aux, B, H, B / 2 - 1);
    }
    return 0.5 * (sqrt((double)lo2) + sqrt((double)hi2));
}

/* obstacle_hit_rate: episodes whose agent is inside an obstacle at some step 1..H;
 * final_dist: median over episodes of |p_H - g| */
static void reach_metrics(const dg_env *env, const dg_real *traj, const dg_real *aux, int B, int H,
                          double *values) {
    int hit = 0;
    for (int b = 0; b < B; b++)
        for (int t = 1; t <= H; t++)
            if (reach_violation(env, traj + ((int64_t)t * B + b) * env->state_dim, aux + (size_t)b * env->aux_dim)) {
                hit++;
                break;
            }
    values[0] = B > 0 ? (double)hit / B : 0.0;
    values[1] = B > 0 ? median_final_dist(env, traj, aux, B, H) : NAN;
}

const dg_game dg_game_reach = {
    .name = "reach",
    .summary = "drive a point mass to a goal around circular obstacles (docs/games/reach.md)",
    .dt = 0.05f,
    .horizon = 60,
    DG_GAME_DECLARE(KEYS, reach, LOSS),
    .create = reach_create,
    .reset = reach_reset,
    .observe = reach_observe,
    .step = reach_step,
    .step_noise = reach_step_noise,
    .step_cost = reach_step_cost,
    .step_cost_rows = reach_step_cost_rows,
    .metrics = reach_metrics,
    .bodies = dg__bodies_agent_goal,
    .body_names = "agent,goal",
    .violation = reach_violation,
};
