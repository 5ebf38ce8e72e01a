/* racing: a car with kinematic bicycle dynamics laps a closed track; the game
 * is defined in docs/games/racing.md. The track's centre line is a closed
 * Catmull-Rom spline through the given points (or the polyline itself),
 * resampled into a dense polyline; the car's arc-length coordinate s and
 * signed distance d come from projecting it on the nearest segment (chosen
 * from the values, a constant on the tape; the projection is on the tape). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "envs/games.h"

#define MAX_CTRL 64
#define MAX_RES 64
#define MAX_PTS (MAX_CTRL * MAX_RES)
#define MAX_LOOK 8

typedef struct racing {
    float ctrl[MAX_CTRL][2];      /* the track's control points, in order around it */
    int   nctrl;                  /* (not the first field: a count at offset 0 reads as none) */
    int   spline, res, nlook, random_start;
    float width, wheelbase, max_steer, accel, drag, start_speed, start_offset, look_gap;
    /* derived by create: the centre polyline, closed (point m is point 0) */
    int   m;                      /* points (and segments)                         */
    float P[MAX_PTS][2];          /* segment k runs from P[k] to P[k+1 mod m]       */
    float T[MAX_PTS][2];          /* its unit tangent                               */
    float S[MAX_PTS + 1];         /* arc length at P[k]; S[m] the lap's length      */
    float lines[2 * MAX_PTS][4];  /* the edges, for replays                         */
} racing;

/* state columns */
enum { C_X, C_Y, C_HX, C_HY, C_V, C_S, C_PROG, C_DS, NSTATE };

static const dg_key KEYS[] = {
    {.name = "env.track", .type = DG_KEY_F32_ROWS, .offset = offsetof(racing, ctrl), .count_offset = offsetof(racing, nctrl),
     .cols = 2, .min_n = 3, .max_n = MAX_CTRL,
     .def_v = (const double[]){0.0, -0.65, 0.6, -0.6, 0.85, -0.2, 0.7, 0.35, 0.3, 0.55, 0.0, 0.2, -0.35, 0.6, -0.8, 0.4,
                               -0.85, -0.2, -0.5, -0.6},
     .def_n = 10, .doc = "points [x, y] of the closed centre line, in driving order"},
    DG_K_BOOL("env.spline", racing, spline, 1, "the centre line is a Catmull-Rom spline through the points (else the polyline)"),
    DG_K_INT("env.resolution", racing, res, 16, 1, MAX_RES, "polyline points per spline piece"),
    DG_K_F32("env.width", racing, width, 0.12f, 0, 10, 0, 1, "half width of the track"),
    DG_K_F32("env.wheelbase", racing, wheelbase, 0.1f, 0, 10, 0, 1, "wheelbase L of the bicycle"),
    DG_K_F32("env.max_steer", racing, max_steer, 0.5f, 0, 1.5f, 0, 1, "steering angle limit, radians (action[0] = ±1)"),
    DG__KEY_ACCEL("env.accel", racing, accel, 3.0f, "action[1] = 1 -> acceleration"),
    DG_K_F32("env.drag", racing, drag, 1.0f, 0, DG_MAX_MAGNITUDE, 1, 1, "speed lost per second per unit of speed (top speed accel/drag)"),
    DG_K_F32("env.start_speed", racing, start_speed, 0.5f, 0, DG_MAX_MAGNITUDE, 1, 1, "initial speed"),
    DG_K_F32("env.start_offset", racing, start_offset, 0.05f, 0, 10, 1, 1, "initial distance from the centre line ~ U(-o, o)"),
    DG_K_BOOL("env.random_start", racing, random_start, 1, "start anywhere along the track (else at the first point)"),
    DG_K_INT("env.lookahead", racing, nlook, 4, 1, MAX_LOOK, "centre-line points the car sees ahead"),
    DG_K_F32("env.lookahead_gap", racing, look_gap, 0.2f, 0, 10, 0, 1, "arc length between them"),
};

static const dg_loss_term LOSS[] = {
    {"loss.progress", 1.0f, NULL, 0, "-mean_b of the arc length gained along the centre line this step"},
    {"loss.off_track", 100.0f, NULL, 0, "mean_b relu(|d| - width)^2, d the signed distance to the centre line"},
    {"loss.energy", 0.001f, NULL, 0, "mean_b |a|^2"},
};

/* ------------------------------------------------------------ the track */

/* the closed Catmull-Rom spline (uniform) through the control points, or the polyline */
static void build_track(racing *r) {
    const int n = r->nctrl, res = r->spline ? r->res : 1;
    r->m = 0;
    for (int i = 0; i < n; i++) {
        const float *p0 = r->ctrl[(i + n - 1) % n], *p1 = r->ctrl[i], *p2 = r->ctrl[(i + 1) % n],
                    *p3 = r->ctrl[(i + 2) % n];
        for (int j = 0; j < res; j++) {
            const float t = (float)j / res, t2 = t * t, t3 = t2 * t;
            for (int c = 0; c < 2; c++)
                r->P[r->m][c] = r->spline ? 0.5f * (2 * p1[c] + (-p0[c] + p2[c]) * t +
                                                    (2 * p0[c] - 5 * p1[c] + 4 * p2[c] - p3[c]) * t2 +
                                                    (-p0[c] + 3 * p1[c] - 3 * p2[c] + p3[c]) * t3)
                                          : p1[c];
            r->m++;
        }
    }
    r->S[0] = 0;
    for (int k = 0; k < r->m; k++) {
        const float *a = r->P[k], *b = r->P[(k + 1) % r->m];
        const float dx = b[0] - a[0], dy = b[1] - a[1], len = sqrtf(dx * dx + dy * dy);
        r->T[k][0] = len > 0 ? dx / len : 1.0f;
        r->T[k][1] = len > 0 ? dy / len : 0.0f;
        r->S[k + 1] = r->S[k] + len;
    }
    /* the edges: the points moved by ±width along the mean normal of their two segments */
    for (int k = 0; k < r->m; k++)
        for (int side = 0; side < 2; side++) {
            float q[2][2];
            for (int e = 0; e < 2; e++) {
                const int i = (k + e) % r->m, prev = (i + r->m - 1) % r->m;
                float nx = -(r->T[i][1] + r->T[prev][1]), ny = r->T[i][0] + r->T[prev][0];
                const float l = sqrtf(nx * nx + ny * ny);
                nx = l > 0 ? nx / l : 0;
                ny = l > 0 ? ny / l : 0;
                const float w = side ? -r->width : r->width;
                q[e][0] = r->P[i][0] + w * nx;
                q[e][1] = r->P[i][1] + w * ny;
            }
            memcpy(r->lines[2 * k + side], q, sizeof q);
        }
}

/* the segment nearest to (x, y) */
static int nearest_seg(const racing *r, float x, float y) {
    int best = 0;
    float bd = INFINITY;
    for (int k = 0; k < r->m; k++) {
        const float *a = r->P[k];
        const float len = r->S[k + 1] - r->S[k];
        float u = (x - a[0]) * r->T[k][0] + (y - a[1]) * r->T[k][1];
        u = u < 0 ? 0 : u > len ? len : u;
        const float dx = x - a[0] - u * r->T[k][0], dy = y - a[1] - u * r->T[k][1], d = dx * dx + dy * dy;
        if (d < bd) {
            bd = d;
            best = k;
        }
    }
    return best;
}

/* the segment holding arc length s (taken modulo the lap) */
static int seg_at(const racing *r, float s, float *wrapped) {
    const float L = r->S[r->m];
    s -= L * floorf(s / L);
    int lo = 0, hi = r->m - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (r->S[mid] <= s) lo = mid;
        else hi = mid - 1;
    }
    *wrapped = s;
    return lo;
}

/* The projection of positions p (B, 2) on the nearest segments: arc length s (B, 1) and signed
 * distance d (B, 1, left of the driving direction positive). The segments are constants. */
static void project(dg_ctx *ctx, const racing *r, dg_tensor *p, dg_tensor **s, dg_tensor **d) {
    const int B = p->shape[0];
    dg_tensor *a = dg_new_2d(ctx, B, 2), *t = dg_new_2d(ctx, B, 2), *nrm = dg_new_2d(ctx, B, 2), *s0 = dg_new_2d(ctx, B, 1);
    if (!a || !t || !nrm || !s0) {
        *s = *d = NULL;
        return;
    }
    for (int b = 0; b < B; b++) {
        const int k = nearest_seg(r, p->data[2 * b], p->data[2 * b + 1]);
        a->data[2 * b] = r->P[k][0];
        a->data[2 * b + 1] = r->P[k][1];
        t->data[2 * b] = r->T[k][0];
        t->data[2 * b + 1] = r->T[k][1];
        nrm->data[2 * b] = -r->T[k][1];
        nrm->data[2 * b + 1] = r->T[k][0];
        s0->data[b] = r->S[k];
    }
    dg_tensor *q = dg_sub(ctx, p, a);
    *s = dg_add(ctx, s0, dg_sum_axis(ctx, dg_mul(ctx, q, t), 1));
    if (d) *d = dg_sum_axis(ctx, dg_mul(ctx, q, nrm), 1);
}

/* ------------------------------------------------------------ hooks */

static dg_status racing_create(dg_env *env, dg_cfg *cfg, dg_err *e) {
    racing *r = env->impl;
    build_track(r);
    const float L = r->S[r->m];
    for (int k = 0; k < r->m; k++)
        if (!(r->S[k + 1] - r->S[k] > 1e-6f))
            return dg_cfg_error(cfg, "env.track", e, "two consecutive points of the centre line coincide");
    if (!(L > 4 * r->width)) return dg_cfg_error(cfg, "env.width", e, "the track (length %g) is too short for its width", L);
    if (r->start_offset >= r->width)
        return dg_cfg_error(cfg, "env.start_offset", e, "must be below env.width (%g): the car starts on the track",
                            r->width);
    env->state_dim = NSTATE;
    env->obs_dim = 2 + 2 * r->nlook;
    env->act_dim = 2;  /* [steering, throttle] */
    env->nmetrics = 2;
    env->metric_names[0] = "progress";
    env->metric_names[1] = "off_track";
    env->violation_label = "off the track";
    env->nlines = 2 * r->m;
    env->lines = &r->lines[0][0];
    return DG_OK;
}

static dg_status racing_reset(const dg_env *env, dg_rng *rng, int B, float *state, float *aux, dg_err *e) {
    const racing *r = env->impl;
    (void)aux;
    (void)e;
    for (int b = 0; b < B; b++) {
        float *st = state + (size_t)b * NSTATE, s;
        const float s0 = r->random_start ? dg_rng_uniform(rng, 0.0f, r->S[r->m]) : 0.0f;
        const float off = r->start_offset > 0 ? dg_rng_uniform(rng, -r->start_offset, r->start_offset) : 0.0f;
        const int k = seg_at(r, s0, &s);
        const float u = s - r->S[k];
        st[C_X] = r->P[k][0] + u * r->T[k][0] - off * r->T[k][1];
        st[C_Y] = r->P[k][1] + u * r->T[k][1] + off * r->T[k][0];
        st[C_HX] = r->T[k][0];
        st[C_HY] = r->T[k][1];
        st[C_V] = r->start_speed;
        st[C_S] = s;
        st[C_PROG] = 0;
        st[C_DS] = 0;
    }
    return DG_OK;
}

/* [v, d, then for each look-ahead point c_j = centre(s + j·gap) - p in the car's frame: (c·h, c·h_perp)] */
static dg_tensor *racing_observe(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux) {
    const racing *r = env->impl;
    const int B = state->shape[0];
    dg_tensor *p = dg_cols(ctx, state, C_X, 2), *hx = dg_cols(ctx, state, C_HX, 1), *hy = dg_cols(ctx, state, C_HY, 1);
    dg_tensor *s = dg_cols(ctx, state, C_S, 1), *sp, *d;
    project(ctx, r, p, &sp, &d);
    dg_tensor *parts[2 + MAX_LOOK];
    parts[0] = dg_cols(ctx, state, C_V, 1);
    parts[1] = d;
    for (int j = 1; j <= r->nlook; j++) {
        dg_tensor *sj = dg_add_scalar(ctx, s, j * r->look_gap);
        dg_tensor *a = dg_new_2d(ctx, B, 2), *t = dg_new_2d(ctx, B, 2), *base = dg_new_2d(ctx, B, 1);
        if (!sj || !a || !t || !base) return NULL;
        for (int b = 0; b < B; b++) {
            float w;
            const int k = seg_at(r, sj->data[b], &w);
            a->data[2 * b] = r->P[k][0];
            a->data[2 * b + 1] = r->P[k][1];
            t->data[2 * b] = r->T[k][0];
            t->data[2 * b + 1] = r->T[k][1];
            base->data[b] = sj->data[b] - w + r->S[k];  /* the segment's start, on sj's lap */
        }
        /* c = a + (sj - base)·t - p */
        dg_tensor *c = dg_sub(ctx, dg_add(ctx, a, dg_mul(ctx, dg_sub(ctx, sj, base), t)), p);
        dg_tensor *cx = dg_cols(ctx, c, 0, 1), *cy = dg_cols(ctx, c, 1, 1);
        dg_tensor *fwd = dg_add(ctx, dg_mul(ctx, cx, hx), dg_mul(ctx, cy, hy));
        dg_tensor *left = dg_sub(ctx, dg_mul(ctx, cy, hx), dg_mul(ctx, cx, hy));
        parts[1 + j] = dg_concat(ctx, (dg_tensor *[]){fwd, left}, 2, 1);
    }
    (void)sp;
    return dg_concat(ctx, parts, 2 + r->nlook, 1);
}

/* Kinematic bicycle (rear axle): curvature k = tan(max_steer)·a0 / L (the steering angle
 * atan(a0·tan(max_steer)) within ±max_steer); the heading h (a unit vector) turns by atan(v k dt):
 * h' = normalize(h + v k dt · h_perp); v' = relu(v + (accel·a1 - drag·v) dt); p' = p + v' h' dt;
 * then the arc length gained along the centre line, across the start line too. */
static dg_tensor *racing_step(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux, dg_tensor *action) {
    const racing *r = env->impl;
    const int B = state->shape[0];
    const float dt = env->dt, L = r->S[r->m];
    dg_tensor *p = dg_cols(ctx, state, C_X, 2), *hx = dg_cols(ctx, state, C_HX, 1), *hy = dg_cols(ctx, state, C_HY, 1);
    dg_tensor *v = dg_cols(ctx, state, C_V, 1), *s = dg_cols(ctx, state, C_S, 1);
    dg_tensor *turn = dg_mul(ctx, v, dg_scale(ctx, dg_cols(ctx, action, 0, 1), tanf(r->max_steer) / r->wheelbase * dt));
    dg_tensor *nx = dg_sub(ctx, hx, dg_mul(ctx, turn, hy)), *ny = dg_add(ctx, hy, dg_mul(ctx, turn, hx));
    dg_tensor *nl = dg_sqrt(ctx, dg_add(ctx, dg_square(ctx, nx), dg_square(ctx, ny)));
    nx = dg_div(ctx, nx, nl);
    ny = dg_div(ctx, ny, nl);
    dg_tensor *acc = dg_sub(ctx, dg_scale(ctx, dg_cols(ctx, action, 1, 1), r->accel), dg_scale(ctx, v, r->drag));
    dg_tensor *v2 = dg_relu(ctx, dg_add(ctx, v, dg_scale(ctx, acc, dt)));
    dg_tensor *h2 = dg_concat(ctx, (dg_tensor *[]){nx, ny}, 2, 1);
    dg_tensor *p2 = dg_add(ctx, p, dg_mul(ctx, dg_scale(ctx, v2, dt), h2));
    dg_tensor *s2, *d2;
    project(ctx, r, p2, &s2, &d2);
    dg_tensor *wrap = dg_new_2d(ctx, B, 1);
    if (!s2 || !s || !wrap) return NULL;
    for (int b = 0; b < B; b++)  /* crossing the start line: s jumps by a lap, the gain does not */
        wrap->data[b] = L * roundf((s->data[b] - s2->data[b]) / L);
    dg_tensor *ds = dg_add(ctx, dg_sub(ctx, s2, s), wrap);
    dg_tensor *prog = dg_add(ctx, dg_cols(ctx, state, C_PROG, 1), ds);
    return dg_concat(ctx, (dg_tensor *[]){p2, h2, v2, s2, prog, ds}, 6, 1);
}

/* progress: -mean_b ds; off_track: mean_b (relu(d - w)² + relu(-d - w)²); energy: mean_b |a|² */
static void racing_step_cost(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux, dg_tensor *action,
                             float inv_batch, dg_tensor **terms) {
    const racing *r = env->impl;
    dg_tensor *s, *d;
    project(ctx, r, dg_cols(ctx, next, C_X, 2), &s, &d);
    if (!d) return;
    terms[0] = dg__batch_mean(ctx, dg_neg(ctx, dg_cols(ctx, next, C_DS, 1)), inv_batch);
    dg_tensor *out = dg_add(ctx, dg_square(ctx, dg_relu(ctx, dg_add_scalar(ctx, d, -r->width))),
                            dg_square(ctx, dg_relu(ctx, dg_add_scalar(ctx, dg_neg(ctx, d), -r->width))));
    terms[1] = dg__batch_mean(ctx, out, inv_batch);
    terms[2] = dg__batch_mean(ctx, dg_square(ctx, action), inv_batch);
}

/* |signed distance| of (x, y) to the centre line, on its nearest segment's line */
static float track_dist(const racing *r, float x, float y) {
    const int k = nearest_seg(r, x, y);
    return fabsf(-(x - r->P[k][0]) * r->T[k][1] + (y - r->P[k][1]) * r->T[k][0]);
}

static unsigned racing_violation(const dg_env *env, const float *s, const float *aux) {
    const racing *r = env->impl;
    return track_dist(r, s[C_X], s[C_Y]) > r->width ? 1u : 0u;
}

/* progress: mean over episodes of the laps gained (arc length / lap length); off_track: the
 * fraction of steps 1..H, over all episodes, with the car outside the track */
static void racing_metrics(const dg_env *env, const float *traj, const float *aux, int B, int H, double *values) {
    const racing *r = env->impl;
    double prog = 0;
    int64_t off = 0;
    for (int b = 0; b < B; b++) {
        prog += traj[((int64_t)H * B + b) * NSTATE + C_PROG] / r->S[r->m];
        for (int t = 1; t <= H; t++) off += racing_violation(env, traj + ((int64_t)t * B + b) * NSTATE, NULL);
    }
    values[0] = B > 0 ? prog / B : NAN;
    values[1] = B > 0 && H > 0 ? (double)off / ((double)B * H) : NAN;
}

/* the car */
static int racing_bodies(const dg_env *env, const float *s, const float *aux, float *xy, int *is_goal) {
    xy[0] = s[C_X];
    xy[1] = s[C_Y];
    is_goal[0] = 0;
    return 1;
}

const dg_game dg_game_racing = {
    .name = "racing",
    .summary = "a kinematic bicycle laps a closed track: progress along it, a soft penalty off it "
               "(docs/games/racing.md)",
    .dt = 0.05f,
    .horizon = 100,
    DG_GAME_DECLARE(KEYS, racing, LOSS),
    .create = racing_create,
    .reset = racing_reset,
    .observe = racing_observe,
    .step = racing_step,
    .step_cost = racing_step_cost,
    .metrics = racing_metrics,
    .bodies = racing_bodies,
    .violation = racing_violation,
};
