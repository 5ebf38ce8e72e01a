/* billiards: one cue shot sends a chosen object ball to a target point; the
 * game is defined in docs/games/billiards.md. Balls of equal mass on a table
 * with cushions, elastic contacts by one of three models: soft (a stiff spring
 * while two balls overlap), hard (the velocities reflect at the end of a step
 * that overlaps, no correction) and toi (hard, with the time of impact inside
 * the step: the ball moves to the contact, reflects, and travels the rest of
 * the step; its gradient is the true one, the hard model's is not). */
#include <tgmath.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "envs/games.h"

#define MAX_BALLS (DG_MAX_BODIES - 1)  /* and the target, in a replay */

typedef enum contact { CONTACT_SOFT, CONTACT_HARD, CONTACT_TOI } contact;
static const char *const CONTACTS[] = {"soft", "hard", "toi", NULL};  /* contact order */

typedef struct billiards {
    float balls[MAX_BALLS][2];   /* initial positions; ball 0 is the cue ball */
    int   nballs;                /* (not the first field: a count at offset 0 reads as none) */
    int   target_ball;           /* the ball to send to the target (0: the cue ball itself) */
    int   aim_ball;              /* the zero aim is at this ball               */
    float target[2];             /* its target point                           */
    float table[2];              /* half width, half height of the cushions    */
    float radius, damping, shot_speed, aim_range, stiffness, jitter;
    int   substeps, model;
} billiards;

/* state columns: ball i at 4i..4i+3 [x, y, vx, vy]; then the shot still to take (1 before the
 * first step, 0 after) and the steps done */
#define COL_PENDING(n) (4 * (n))
#define COL_STEP(n)    (4 * (n) + 1)

static const dg_key KEYS[] = {
    {.name = "env.balls", .type = DG_KEY_F32_ROWS, .offset = offsetof(billiards, balls),
     .count_offset = offsetof(billiards, nballs), .cols = 2, .min_n = 2, .max_n = MAX_BALLS,
     .def_v = (const double[]){-0.35, 0.0, 0.0, 0.0, 0.45, -0.3, -0.2, 0.3}, .def_n = 4,
     .doc = "initial positions [x, y]; the first is the cue ball"},
    DG_K_INT("env.target_ball", billiards, target_ball, 1, 0, MAX_BALLS - 1,
             "the ball sent to the target (0: the cue ball itself)"),
    DG_K_INT("env.aim_ball", billiards, aim_ball, 1, 1, MAX_BALLS - 1, "the shot's zero aim is at this object ball"),
    {.name = "env.target", .type = DG_KEY_F32_ARRAY, .offset = offsetof(billiards, target), .min_n = 2,
     .max_n = 2, .lo = -DG_MAX_MAGNITUDE, .hi = DG_MAX_MAGNITUDE, .def_v = (const double[]){0.6, 0.25},
     .def_n = 2, .what = "coordinates", .doc = "the target point [x, y] of the target ball"},
    {.name = "env.table", .type = DG_KEY_F32_ARRAY, .offset = offsetof(billiards, table), .min_n = 2,
     .max_n = 2, .lo = 0, .hi = DG_MAX_MAGNITUDE, .lo_open = 1, .def_v = (const double[]){1.0, 0.5},
     .def_n = 2, .what = "half sizes", .doc = "half width and half height of the table inside the cushions"},
    DG_K_F32("env.radius", billiards, radius, 0.05f, 0, 1, 0, 1, "ball radius"),
    DG__KEY_DAMPING(billiards, damping, 0.97f),
    DG_K_F32("env.shot_speed", billiards, shot_speed, 4.0f, 0, DG_MAX_MAGNITUDE, 0, 1,
             "cue ball speed of the strongest shot (action[1] = 1; 0 gives half of it)"),
    DG_K_F32("env.aim_range", billiards, aim_range, 1.0f, 0, 100, 0, 1,
             "aim: the shot's direction is u + action[0]·aim_range·u_perp, u towards the aim ball"),
    DG_K_ENUM("env.contact", billiards, model, CONTACT_TOI, CONTACTS, "contact model",
              "soft (a push with the overlap squared), hard (reflect at the step's end) or toi (time of impact inside the step)"),
    DG_K_F32("env.stiffness", billiards, stiffness, 2e4f, 0, 1e9f, 0, 1,
             "soft contacts: acceleration per unit of overlap at an overlap of one radius (it grows as its square)"),
    DG_K_INT("env.substeps", billiards, substeps, 1, 1, 64, "physics substeps per step"),
    DG_K_F32("env.jitter", billiards, jitter, 0.0f, 0, 1, 1, 1, "initial positions ~ given + U(-jitter, jitter)^2"),
};

static const dg_loss_term LOSS[] = {
    {"loss.target", 1.0f, NULL, 0, "mean_b |p_H - target|^2 of the target ball at the end of the episode"},
    {"loss.track", 0.0f, NULL, 0, "mean_b |p - target|^2 of the target ball, every step"},
};

/* ------------------------------------------------------------ helpers */

/* the balls of one batch as per-ball (B, 1) columns */
typedef struct balls {
    dg_tensor *x[MAX_BALLS], *y[MAX_BALLS], *vx[MAX_BALLS], *vy[MAX_BALLS];
} balls;

/* a (B, 1) constant (a contact mask the caller fills from the values) */
static dg_tensor *mask_new(dg_ctx *ctx, int B) { return dg_new_2d(ctx, B, 1); }

/* x where m is 1, 1 where it is 0: keeps sqrt and division finite on rows a mask leaves out */
static dg_tensor *safe(dg_ctx *ctx, dg_tensor *x, dg_tensor *m) {
    return dg_add_scalar(ctx, dg_mul(ctx, m, dg_add_scalar(ctx, x, -1.0f)), 1.0f);
}

/* (k)·(relu(x - l)² - relu(-l - x)²): a soft cushion's push on coordinate x (B, 1) */
static dg_tensor *cushion(dg_ctx *ctx, dg_tensor *x, dg_real l, dg_real k) {
    return dg_scale(ctx, dg_sub(ctx, dg_square(ctx, dg_relu(ctx, dg_add_scalar(ctx, x, -l))),
                                dg_square(ctx, dg_relu(ctx, dg_add_scalar(ctx, dg_neg(ctx, x), -l)))), k);
}

/* Soft contacts over one substep h: springs between overlapping balls and from the cushions
 * change the velocities, then the balls move (semi-implicit Euler). */
static void substep_soft(dg_ctx *ctx, const billiards *g, balls *s, dg_real h) {
    const int n = g->nballs;
    const dg_real k = g->stiffness * h, d2 = 2 * g->radius;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            dg_tensor *dx = dg_sub(ctx, s->x[i], s->x[j]), *dy = dg_sub(ctx, s->y[i], s->y[j]);
            dg_tensor *d = dg_sqrt(ctx, dg_add_scalar(ctx, dg_add(ctx, dg_square(ctx, dx), dg_square(ctx, dy)), 1e-12f));
            /* k·relu(2r - d)²/(r·d): the push along (dx, dy)/d, growing with the square of the overlap
             * so that the force and its slope are continuous where a contact starts */
            dg_tensor *f = dg_div(ctx, dg_scale(ctx, dg_square(ctx, dg_relu(ctx, dg_add_scalar(ctx, dg_neg(ctx, d), d2))),
                                                k / g->radius), d);
            dg_tensor *fx = dg_mul(ctx, f, dx), *fy = dg_mul(ctx, f, dy);
            s->vx[i] = dg_add(ctx, s->vx[i], fx);
            s->vy[i] = dg_add(ctx, s->vy[i], fy);
            s->vx[j] = dg_sub(ctx, s->vx[j], fx);
            s->vy[j] = dg_sub(ctx, s->vy[j], fy);
        }
    const dg_real lx = g->table[0] - g->radius, ly = g->table[1] - g->radius;
    for (int i = 0; i < n; i++) {
        /* v -= (k/r)·(relu(x - l)² - relu(-l - x)²), the cushions' push */
        s->vx[i] = dg_sub(ctx, s->vx[i], cushion(ctx, s->x[i], lx, k / g->radius));
        s->vy[i] = dg_sub(ctx, s->vy[i], cushion(ctx, s->y[i], ly, k / g->radius));
        s->x[i] = dg_add(ctx, s->x[i], dg_scale(ctx, s->vx[i], h));
        s->y[i] = dg_add(ctx, s->y[i], dg_scale(ctx, s->vy[i], h));
    }
}

/* Hard contacts over one substep h. Balls fly straight from their start positions p0 with
 * velocities v; each pair that meets (in pair order) exchanges the normal part of its relative
 * velocity. toi: at the time of impact tau in [0, h), found from |dp + dv·tau| = 2r; the ball
 * keeps the displacement (v - v')·tau it made before the impact, so it ends at
 * p0 + v'·h + (v - v')·tau, as a ball that reflects at the impact does. hard: the pairs that
 * overlap at the step's end reflect there, no displacement is kept. Cushions then reflect the
 * positions that crossed them (toi: x -> 2L - x, exact for straight flight) or only the
 * velocities (hard). The contact masks are read from the values: constants, so the gradient is
 * that of the branch each row took. */
static void substep_hard(dg_ctx *ctx, const billiards *g, balls *s, dg_real h, int toi) {
    const int n = g->nballs, B = s->x[0]->shape[0];
    const dg_real d2 = 2 * g->radius;
    dg_tensor *cx[MAX_BALLS], *cy[MAX_BALLS];  /* displacement kept from before an impact */
    for (int i = 0; i < n; i++) cx[i] = cy[i] = NULL;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            dg_tensor *m = mask_new(ctx, B), *tm = mask_new(ctx, B);
            if (!m || !tm || !s->x[i] || !s->x[j] || !s->y[i] || !s->y[j]) return;
            /* where the pair is (toi: at the step's start, hard: at its end) */
            dg_tensor *dx = dg_sub(ctx, s->x[i], s->x[j]), *dy = dg_sub(ctx, s->y[i], s->y[j]);
            dg_tensor *dvx = dg_sub(ctx, s->vx[i], s->vx[j]), *dvy = dg_sub(ctx, s->vy[i], s->vy[j]);
            if (!toi) {
                dx = dg_add(ctx, dx, dg_scale(ctx, dvx, h));
                dy = dg_add(ctx, dy, dg_scale(ctx, dvy, h));
            }
            if (!dx || !dy || !dvx || !dvy) return;
            int any = 0;
            for (int b = 0; b < B; b++) {
                const double px = dx->data[b], py = dy->data[b], vx = dvx->data[b], vy = dvy->data[b];
                const double c = px * px + py * py - (double)d2 * d2, bb = 2 * (px * vx + py * vy);
                const double a = vx * vx + vy * vy, disc = bb * bb - 4 * a * c;
                int hit = 0, early = 0;
                if (bb < 0 && c < 0) hit = 1;  /* overlapping and approaching: reflect now */
                else if (toi && bb < 0 && a > 0 && disc >= 0) {
                    const double tau = (-bb - sqrt(disc)) / (2 * a);
                    hit = early = tau >= 0 && tau < h;
                }
                m->data[b] = (dg_real)hit;
                tm->data[b] = (dg_real)early;
                any |= hit;
            }
            if (!any) continue;
            dg_tensor *tau = NULL;
            if (toi) {  /* the earlier root tau = (-b - sqrt(b² - 4ac)) / 2a, as 2c / (-b + sqrt(b² - 4ac)):
                           b < 0, so no cancellation when c is small (the pair about to touch);
                           on the rows that meet inside the step, else 0 */
                dg_tensor *a = dg_add(ctx, dg_square(ctx, dvx), dg_square(ctx, dvy));
                dg_tensor *bb = dg_scale(ctx, dg_add(ctx, dg_mul(ctx, dx, dvx), dg_mul(ctx, dy, dvy)), 2.0f);
                dg_tensor *c = dg_add_scalar(ctx, dg_add(ctx, dg_square(ctx, dx), dg_square(ctx, dy)), -d2 * d2);
                dg_tensor *disc = dg_sub(ctx, dg_square(ctx, bb), dg_scale(ctx, dg_mul(ctx, a, c), 4.0f));
                dg_tensor *den = dg_sub(ctx, dg_sqrt(ctx, safe(ctx, disc, tm)), bb);
                tau = dg_mul(ctx, tm, dg_div(ctx, dg_scale(ctx, c, 2.0f), safe(ctx, den, tm)));
                dx = dg_add(ctx, dx, dg_mul(ctx, dvx, tau));  /* the pair at the impact */
                dy = dg_add(ctx, dy, dg_mul(ctx, dvy, tau));
            }
            /* the normal n = (dx, dy)/|.|, the exchanged speed k = dv·n, on the rows that hit */
            dg_tensor *len = dg_sqrt(ctx, safe(ctx, dg_add(ctx, dg_square(ctx, dx), dg_square(ctx, dy)), m));
            dg_tensor *nx = dg_div(ctx, dx, len), *ny = dg_div(ctx, dy, len);
            dg_tensor *k = dg_mul(ctx, m, dg_add(ctx, dg_mul(ctx, dvx, nx), dg_mul(ctx, dvy, ny)));
            dg_tensor *jx = dg_mul(ctx, k, nx), *jy = dg_mul(ctx, k, ny);  /* v_i' = v_i - j, v_j' = v_j + j */
            s->vx[i] = dg_sub(ctx, s->vx[i], jx);
            s->vy[i] = dg_sub(ctx, s->vy[i], jy);
            s->vx[j] = dg_add(ctx, s->vx[j], jx);
            s->vy[j] = dg_add(ctx, s->vy[j], jy);
            if (toi) {  /* (v - v')·tau: +j·tau for i, -j·tau for j */
                dg_tensor *ox = dg_mul(ctx, jx, tau), *oy = dg_mul(ctx, jy, tau);
                cx[i] = cx[i] ? dg_add(ctx, cx[i], ox) : ox;
                cy[i] = cy[i] ? dg_add(ctx, cy[i], oy) : oy;
                cx[j] = cx[j] ? dg_sub(ctx, cx[j], ox) : dg_neg(ctx, ox);
                cy[j] = cy[j] ? dg_sub(ctx, cy[j], oy) : dg_neg(ctx, oy);
            }
        }
    const dg_real L[2] = {g->table[0] - g->radius, g->table[1] - g->radius};
    for (int i = 0; i < n; i++) {
        dg_tensor **pos[2] = {&s->x[i], &s->y[i]}, **vel[2] = {&s->vx[i], &s->vy[i]}, *corr[2] = {cx[i], cy[i]};
        for (int ax = 0; ax < 2; ax++) {
            dg_tensor *p = dg_add(ctx, *pos[ax], dg_scale(ctx, *vel[ax], h));
            if (corr[ax]) p = dg_add(ctx, p, corr[ax]);
            dg_tensor *m = mask_new(ctx, B);
            if (!p || !m || !*vel[ax]) return;  /* the arena is full: the context has the error */
            int any = 0;
            for (int b = 0; b < B; b++) {  /* crossed a cushion moving outwards: +1 right/top, -1 left/bottom */
                const dg_real x = p->data[b], v = (*vel[ax])->data[b];
                m->data[b] = x > L[ax] && v > 0 ? 1.0f : x < -L[ax] && v < 0 ? -1.0f : 0.0f;
                any |= m->data[b] != 0;
            }
            if (any) {
                dg_tensor *hit = dg_square(ctx, m);  /* 1 on the rows that cross */
                /* v' = v - 2·hit·v; toi: x' = x + hit·(2·m·L - 2x) (the mirror image 2·(±L) - x) */
                *vel[ax] = dg_sub(ctx, *vel[ax], dg_scale(ctx, dg_mul(ctx, hit, *vel[ax]), 2.0f));
                if (toi)
                    p = dg_add(ctx, p, dg_mul(ctx, hit, dg_sub(ctx, dg_scale(ctx, m, 2 * L[ax]), dg_scale(ctx, p, 2.0f))));
            }
            *pos[ax] = p;
        }
    }
}

/* ------------------------------------------------------------ hooks */

static dg_status billiards_create(dg_env *env, dg_cfg *cfg, dg_err *e) {
    billiards *g = env->impl;
    const int n = g->nballs;
    if (g->target_ball >= n)
        return dg_cfg_error(cfg, "env.target_ball", e, "is %d, but env.balls has only %d balls (0 is the cue ball)",
                            g->target_ball, n);
    if (g->aim_ball >= n)
        return dg_cfg_error(cfg, "env.aim_ball", e, "is %d, but env.balls has only %d balls (0 is the cue ball)",
                            g->aim_ball, n);
    const dg_real r = g->radius, lx = g->table[0] - r, ly = g->table[1] - r;
    if (!(lx > 0 && ly > 0)) return dg_cfg_error(cfg, "env.radius", e, "a ball of radius %g does not fit the table", r);
    for (int i = 0; i < n; i++) {
        if (fabs((dg_real)g->balls[i][0]) > lx - g->jitter || fabs((dg_real)g->balls[i][1]) > ly - g->jitter)
            return dg_cfg_error(cfg, "env.balls", e, "ball %d (with env.jitter %g) is not on the table", i, g->jitter);
        for (int j = 0; j < i; j++)
            if (hypot((dg_real)(g->balls[i][0] - g->balls[j][0]), (dg_real)(g->balls[i][1] - g->balls[j][1])) < 2 * (r + g->jitter))
                return dg_cfg_error(cfg, "env.balls", e, "balls %d and %d overlap (radius %g, env.jitter %g)", j, i, r,
                                    g->jitter);
    }
    env->state_dim = 4 * n + 2;
    env->obs_dim = 2 * n + 3;  /* positions, the target, the shot still to take */
    env->act_dim = 2;          /* [aim offset, strength] */
    env->plan_steps = 1;       /* open loop: one shot */
    /* the rails beyond the cushions, within the replay's [-1, 1]² */
    if (g->table[1] < 1) {
        const dg_real hh = 0.5f * (1 - g->table[1]);
        env->shapes[env->nshapes++] = (dg_shape){DG_SHAPE_BOX, 0, 1 - hh, 1, hh};
        env->shapes[env->nshapes++] = (dg_shape){DG_SHAPE_BOX, 0, -1 + hh, 1, hh};
    }
    if (g->table[0] < 1) {
        const dg_real hw = 0.5f * (1 - g->table[0]);
        env->shapes[env->nshapes++] = (dg_shape){DG_SHAPE_BOX, 1 - hw, 0, hw, 1};
        env->shapes[env->nshapes++] = (dg_shape){DG_SHAPE_BOX, -1 + hw, 0, hw, 1};
    }
    env->nmetrics = 2;
    env->metric_names[0] = "target_dist";
    env->metric_names[1] = "target_moved";
    return DG_OK;
}

static dg_status billiards_reset(const dg_env *env, dg_rng *rng, int B, dg_real *state, dg_real *aux, dg_err *e) {
    const billiards *g = env->impl;
    (void)aux;
    (void)e;
    for (int b = 0; b < B; b++) {
        dg_real *s = state + (size_t)b * env->state_dim;
        memset(s, 0, (size_t)env->state_dim * sizeof(dg_real));
        for (int i = 0; i < g->nballs; i++) {
            s[4 * i] = g->balls[i][0] + (g->jitter > 0 ? dg_rng_uniform(rng, -g->jitter, g->jitter) : 0.0f);
            s[4 * i + 1] = g->balls[i][1] + (g->jitter > 0 ? dg_rng_uniform(rng, -g->jitter, g->jitter) : 0.0f);
        }
        s[COL_PENDING(g->nballs)] = 1.0f;
    }
    return DG_OK;
}

/* [x_0, y_0, ..., x_n-1, y_n-1, target x, target y, shot still to take] */
static dg_tensor *billiards_observe(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux) {
    const billiards *g = env->impl;
    const int B = state->shape[0];
    dg_tensor *parts[MAX_BALLS + 2];
    for (int i = 0; i < g->nballs; i++) parts[i] = dg_cols(ctx, state, 4 * i, 2);
    parts[g->nballs] = dg_add(ctx, dg_zeros(ctx, 2, (int[]){B, 2}), dg_from(ctx, 1, (int[]){2}, (const dg_real[]){g->target[0], g->target[1]}));
    parts[g->nballs + 1] = dg_cols(ctx, state, COL_PENDING(g->nballs), 1);
    return dg_concat(ctx, parts, g->nballs + 2, 1);
}

/* The shot (while it is pending): the cue ball gets speed shot_speed·(1 + a1)/2 along
 * (u + s·u_perp)/sqrt(1 + s²), s = a0·aim_range, u the unit vector towards the aim ball; then
 * damping and the contacts, in substeps. */
static dg_tensor *billiards_step(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux,
                                 dg_tensor *action) {
    const billiards *g = env->impl;
    const int n = g->nballs, tb = g->aim_ball;
    balls s;
    for (int i = 0; i < n; i++) {
        s.x[i] = dg_cols(ctx, state, 4 * i, 1);
        s.y[i] = dg_cols(ctx, state, 4 * i + 1, 1);
        s.vx[i] = dg_cols(ctx, state, 4 * i + 2, 1);
        s.vy[i] = dg_cols(ctx, state, 4 * i + 3, 1);
    }
    dg_tensor *pending = dg_cols(ctx, state, COL_PENDING(n), 1);
    if (dg_ctx_status(ctx) != DG_OK) return NULL;
    {
        dg_tensor *ux = dg_sub(ctx, s.x[tb], s.x[0]), *uy = dg_sub(ctx, s.y[tb], s.y[0]);
        dg_tensor *ul = dg_sqrt(ctx, dg_add_scalar(ctx, dg_add(ctx, dg_square(ctx, ux), dg_square(ctx, uy)), 1e-12f));
        ux = dg_div(ctx, ux, ul);
        uy = dg_div(ctx, uy, ul);
        dg_tensor *sa = dg_scale(ctx, dg_cols(ctx, action, 0, 1), g->aim_range);
        dg_tensor *norm = dg_sqrt(ctx, dg_add_scalar(ctx, dg_square(ctx, sa), 1.0f));
        dg_tensor *dx = dg_div(ctx, dg_sub(ctx, ux, dg_mul(ctx, sa, uy)), norm);  /* u + s·(-uy, ux) */
        dg_tensor *dy = dg_div(ctx, dg_add(ctx, uy, dg_mul(ctx, sa, ux)), norm);
        dg_tensor *speed = dg_mul(ctx, pending,
                                  dg_scale(ctx, dg_add_scalar(ctx, dg_cols(ctx, action, 1, 1), 1.0f), 0.5f * g->shot_speed));
        s.vx[0] = dg_add(ctx, s.vx[0], dg_mul(ctx, speed, dx));
        s.vy[0] = dg_add(ctx, s.vy[0], dg_mul(ctx, speed, dy));
    }
    const dg_real h = env->dt / (dg_real)g->substeps, damp = pow((dg_real)g->damping, 1.0f / (dg_real)g->substeps);
    for (int k = 0; k < g->substeps; k++) {
        for (int i = 0; i < n; i++) {
            s.vx[i] = dg_scale(ctx, s.vx[i], damp);
            s.vy[i] = dg_scale(ctx, s.vy[i], damp);
        }
        if (dg_ctx_status(ctx) != DG_OK) return NULL;  /* the arena is full: no values to read */
        if (g->model == CONTACT_SOFT) substep_soft(ctx, g, &s, h);
        else substep_hard(ctx, g, &s, h, g->model == CONTACT_TOI);
        if (dg_ctx_status(ctx) != DG_OK) return NULL;
    }
    dg_tensor *cols[4 * MAX_BALLS + 2];
    for (int i = 0; i < n; i++) {
        cols[4 * i] = s.x[i];
        cols[4 * i + 1] = s.y[i];
        cols[4 * i + 2] = s.vx[i];
        cols[4 * i + 3] = s.vy[i];
    }
    cols[4 * n] = dg_scale(ctx, pending, 0.0f);  /* the shot is taken */
    cols[4 * n + 1] = dg_add_scalar(ctx, dg_cols(ctx, state, COL_STEP(n), 1), 1.0f);
    return dg_concat(ctx, cols, 4 * n + 2, 1);
}

/* per row: target H·|p - target|² on the episode's last step (the loss divides by H), 0 before;
 * track: the same every step. The target term stays a running term masked by the step count (a
 * state column) rather than a terminal_cost: as a terminal cost its batch mean would be taken before
 * the factor H, which rounds differently (training's bits) */
static void billiards_step_cost_rows(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux,
                                     dg_tensor *action, dg_tensor **rows) {
    const billiards *g = env->impl;
    const int B = next->shape[0], n = g->nballs;
    dg_tensor *d = dg_sub(ctx, dg_cols(ctx, next, 4 * g->target_ball, 2), dg_from(ctx, 1, (int[]){2}, (const dg_real[]){g->target[0], g->target[1]}));
    dg_tensor *d2 = dg_sum_axis(ctx, dg_square(ctx, d), 1);  /* (B, 1) */
    dg_tensor *last = mask_new(ctx, B);
    if (!d2 || !last) return;
    for (int b = 0; b < B; b++)  /* the step count carries no gradient: a constant mask */
        last->data[b] = lround(next->data[(size_t)b * env->state_dim + COL_STEP(n)]) == env->horizon
                        ? (dg_real)env->horizon : 0.0f;
    rows[0] = dg_mul(ctx, last, d2);
    rows[1] = d2;
}

/* target_dist: median over episodes of the target ball's final distance to the target;
 * target_moved: episodes whose target ball moved more than a radius */
static void billiards_metrics(const dg_env *env, const dg_real *traj, const dg_real *aux, int B, int H, double *values) {
    const billiards *g = env->impl;
    const int S = env->state_dim, c = 4 * g->target_ball;
    double *dist = malloc((size_t)(B > 0 ? B : 1) * sizeof(double));
    int moved = 0;
    for (int b = 0; b < B; b++) {
        const dg_real *s0 = traj + (size_t)b * S, *sh = traj + ((int64_t)H * B + b) * S;
        if (dist) dist[b] = hypot((double)sh[c] - g->target[0], (double)sh[c + 1] - g->target[1]);
        moved += hypot((double)sh[c] - s0[c], (double)sh[c + 1] - s0[c + 1]) > g->radius;
    }
    values[0] = dist && B > 0 ? dg__median(dist, B) : NAN;
    values[1] = B > 0 ? (double)moved / B : 0.0;
    free(dist);
}

/* the balls (cue ball first) and the target point */
static int billiards_bodies(const dg_env *env, const dg_real *s, const dg_real *aux, dg_real *xy, int *is_goal) {
    const billiards *g = env->impl;
    int k = 0;
    for (int i = 0; i < g->nballs; i++, k++) {
        xy[2 * k] = s[4 * i];
        xy[2 * k + 1] = s[4 * i + 1];
        is_goal[k] = 0;
    }
    xy[2 * k] = g->target[0];
    xy[2 * k + 1] = g->target[1];
    is_goal[k] = 1;
    return k + 1;
}

const dg_game dg_game_billiards = {
    .name = "billiards",
    .summary = "one cue shot sends an object ball to a target; soft, hard or time-of-impact contacts "
               "(docs/games/billiards.md)",
    .dt = 0.02f,
    .horizon = 100,
    DG_GAME_DECLARE(KEYS, billiards, LOSS),
    .create = billiards_create,
    .reset = billiards_reset,
    .observe = billiards_observe,
    .step = billiards_step,
    .step_cost = dg_env_step_cost_from_rows,
    .step_cost_rows = billiards_step_cost_rows,
    .metrics = billiards_metrics,
    .bodies = billiards_bodies,
};
