/* pong: two learned paddles and a ball, zero-sum; the game is defined in docs/games/pong.md.
 * The left paddle (the pursuer, "net.*") minimises the episode cost J, the right one (the evader,
 * "evader.*") maximises it. The ball bounces off the walls and the paddles through soft contacts
 * (a stiff spring while it overlaps them, in substeps), so the gradient flows through every hit;
 * where a paddle meets the ball off centre the ball leaves at an angle (the player's aim). J counts
 * how far each paddle falls short of the ball as it arrives, and how far the ball flies past each
 * goal line: each player's shortfall and miss against it, the other's in its favour. */
#include <tgmath.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "envs/games.h"

typedef struct pong {
    float court[2];          /* half width (the goal lines at ±x), half height (the walls at ±y) */
    float paddle_x;          /* the paddles' faces at ±paddle_x                                  */
    float paddle_half;       /* half length of a paddle                                          */
    float paddle_speed;      /* a paddle's top speed                                             */
    float radius;            /* the ball's                                                       */
    float serve_speed;       /* the ball's speed at the serve                                    */
    float serve_angle;       /* its direction ~ U(-a, a) radians from the horizontal             */
    float serve_y;           /* its height ~ U(-s, s)                                            */
    float paddle_start;      /* the paddles' start ~ U(-p, p)                                    */
    float stiffness;         /* the contact spring k (the ball's mass is 1)                      */
    float depth;             /* a paddle's thickness: the spring acts while the overlap is below it */
    float softness;          /* width of the paddle's soft edge (its ends and its back)          */
    float spin;              /* the aim: sideways impulse per unit of offset from the centre     */
    float reach_width;       /* width of the window around a paddle's face where reach counts    */
    int   substeps;
    float lines[4][4];       /* the walls and goal lines, for replays                            */
} pong;

/* state columns: the ball [x, y, vx, vy], then the paddles' unbounded coordinates u_l, u_r: a paddle
 * is at y = Y·tanh(u), Y the walls' height, so it never leaves the court */
enum { BX, BY, VX, VY, UL, UR, NSTATE };

static const dg_key KEYS[] = {
    {.name = "env.court", .type = DG_KEY_F32_ARRAY, .offset = offsetof(pong, court), .min_n = 2, .max_n = 2,
     .lo = 0, .hi = DG_MAX_MAGNITUDE, .lo_open = 1, .def_v = (const double[]){1.0, 0.6}, .def_n = 2,
     .what = "half sizes", .doc = "half width (the goal lines at ±x) and half height (the walls at ±y)"},
    DG_K_F32("env.paddle_x", pong, paddle_x, 0.9f, 0, DG_MAX_MAGNITUDE, 0, 1,
             "the paddles' faces at x = ±paddle_x, inside the goal lines"),
    DG_K_F32("env.paddle_half", pong, paddle_half, 0.15f, 0, DG_MAX_MAGNITUDE, 0, 1, "half length of a paddle"),
    DG_K_F32("env.paddle_speed", pong, paddle_speed, 1.5f, 0, DG_MAX_MAGNITUDE, 0, 1,
             "a paddle's top speed (action ±1)"),
    DG_K_F32("env.radius", pong, radius, 0.03f, 0, 1, 0, 1, "the ball's radius"),
    DG_K_F32("env.serve_speed", pong, serve_speed, 1.2f, 0, DG_MAX_MAGNITUDE, 0, 1, "the ball's speed at the serve"),
    DG_K_F32("env.serve_angle", pong, serve_angle, 0.5f, 0, 1.2f, 1, 1,
             "the serve's direction ~ U(-a, a) radians from the horizontal, towards either paddle"),
    DG_K_F32("env.serve_y", pong, serve_y, 0.3f, 0, DG_MAX_MAGNITUDE, 1, 1, "the serve's height ~ U(-s, s)"),
    DG_K_F32("env.paddle_start", pong, paddle_start, 0.3f, 0, DG_MAX_MAGNITUDE, 1, 1,
             "each paddle's start ~ U(-p, p)"),
    DG_K_F32("env.stiffness", pong, stiffness, 4000.0f, 0, 1e9f, 0, 1,
             "the contact spring k of walls and paddles (the ball's mass is 1)"),
    DG_K_F32("env.depth", pong, depth, 0.06f, 0, DG_MAX_MAGNITUDE, 0, 1,
             "a paddle's thickness: its spring acts while the ball overlaps it by less"),
    DG_K_F32("env.softness", pong, softness, 0.01f, 1e-4f, DG_MAX_MAGNITUDE, 1, 1,
             "width of a paddle's soft ends and back (a sigmoid's scale); the contacts' overlap is rounded over a "
             "quarter of it"),
    DG_K_F32("env.spin", pong, spin, 0.5f, 0, DG_MAX_MAGNITUDE, 1, 1,
             "the aim: sideways impulse per unit of normal impulse at a paddle's end"),
    DG_K_F32("env.reach_width", pong, reach_width, 0.25f, 0, DG_MAX_MAGNITUDE, 0, 1,
             "width of the Gaussian window around a paddle's face where its reach counts"),
    DG_K_INT("env.substeps", pong, substeps, 4, 1, 64, "contact substeps a step"),
};

static const dg_loss_term LOSS[] = {
    {"loss.miss", 1.0f, NULL, 0, "left: mean_b relu(-x - X), how far the ball is past the left goal line"},
    {"loss.reach", 10.0f, NULL, 0,
     "left: mean_b w_l(x) relu(|y - y_l| - L)^2, the left paddle's shortfall as the ball arrives"},
    {"loss.evader_miss", 1.0f, "loss.miss", 1, "right: mean_b relu(x - X) (its own; default: loss.miss)"},
    {"loss.evader_reach", 10.0f, "loss.reach", 1,
     "right: mean_b w_r(x) relu(|y - y_r| - L)^2 (its own; default: loss.reach)"},
};

/* ------------------------------------------------------------ physics */

/* the overlap c·softplus(z / c), c = softness / 4: relu(z) with its corner rounded, so that the
 * trajectory is smooth in every input (finite differences then agree with backward through a hit) */
static dg_tensor *overlap(dg_ctx *ctx, const pong *g, dg_tensor *z) {
    const dg_real c = 0.25f * g->softness;
    return dg_scale(ctx, dg_softplus(ctx, dg_scale(ctx, z, 1.0f / c)), c);
}

/* a paddle's height Y·tanh(u), (B, 1) */
static dg_tensor *paddle_y(dg_ctx *ctx, const pong *g, dg_tensor *u) {
    return dg_scale(ctx, dg_tanh(ctx, u), g->court[1]);
}

/* The soft contact of the ball with the paddle at height yp whose face is at x = side·paddle_x (side
 * -1: left, +1: right): the overlap o = srelu(r + side·(x - side·X_p)) past the face, its spring
 * k·o, faded out past the paddle's thickness (sigmoid((depth - o)/s)) and beyond its ends
 * (sigmoid((L + r - |y - yp|)/s)). Returns the force on the ball's x (pointing back to the court);
 * *fy gets the sideways push spin·f·(y - yp)/L, the aim. */
static dg_tensor *paddle_force(dg_ctx *ctx, const pong *g, dg_tensor *x, dg_tensor *y, dg_tensor *yp, dg_real side,
                               dg_tensor **fy) {
    const dg_real s = g->softness;
    dg_tensor *o = overlap(ctx, g, dg_add_scalar(ctx, dg_scale(ctx, x, side), g->radius - g->paddle_x));
    dg_tensor *dy = dg_sub(ctx, y, yp);
    dg_tensor *ady = dg_sqrt(ctx, dg_add_scalar(ctx, dg_square(ctx, dy), 1e-6f));
    dg_tensor *along = dg_sigmoid(ctx, dg_scale(ctx, dg_add_scalar(ctx, dg_neg(ctx, ady), g->paddle_half + g->radius),
                                                1.0f / s));
    dg_tensor *thick = dg_sigmoid(ctx, dg_scale(ctx, dg_add_scalar(ctx, dg_neg(ctx, o), g->depth), 1.0f / s));
    dg_tensor *f = dg_mul(ctx, dg_scale(ctx, o, g->stiffness), dg_mul(ctx, along, thick));
    *fy = dg_mul(ctx, f, dg_scale(ctx, dy, g->spin / g->paddle_half));
    return dg_scale(ctx, f, -side);
}

/* the walls' spring on the ball's y: k·(srelu(-Y - y + r) - srelu(y + r - Y)) */
static dg_tensor *wall_force(dg_ctx *ctx, const pong *g, dg_tensor *y) {
    const dg_real c = g->radius - g->court[1];
    dg_tensor *below = overlap(ctx, g, dg_add_scalar(ctx, dg_neg(ctx, y), c));
    dg_tensor *above = overlap(ctx, g, dg_add_scalar(ctx, y, c));
    return dg_scale(ctx, dg_sub(ctx, below, above), g->stiffness);
}

/* ------------------------------------------------------------ hooks */

static dg_status pong_create(dg_env *env, dg_cfg *cfg, dg_err *e) {
    pong *g = env->impl;
    const dg_real X = g->court[0], Y = g->court[1];
    if (!(g->paddle_x + g->depth < X))
        return dg_cfg_error(cfg, "env.paddle_x", e, "is %g: a paddle (with env.depth %g) must stand inside the goal "
                            "lines at ±%g (env.court)", g->paddle_x, g->depth, X);
    if (!(g->paddle_x > g->radius))
        return dg_cfg_error(cfg, "env.paddle_x", e, "is %g: the paddles must stand apart by more than the ball "
                            "(env.radius %g)", g->paddle_x, g->radius);
    if (!(2 * g->radius < Y) || !(g->paddle_half < Y))
        return dg_cfg_error(cfg, "env.court", e, "a half height of %g is too low for the ball (env.radius %g) and a "
                            "paddle (env.paddle_half %g)", Y, g->radius, g->paddle_half);
    if (!(g->serve_y < Y - g->radius))
        return dg_cfg_error(cfg, "env.serve_y", e, "is %g: the serve must start inside the walls (%g)", g->serve_y,
                            Y - g->radius);
    if (!(g->paddle_start < 0.9f * Y))
        return dg_cfg_error(cfg, "env.paddle_start", e, "is %g: the paddles must start inside 0.9 of the walls' "
                            "height (%g)", g->paddle_start, 0.9f * Y);
    const dg_real wh = sqrt((dg_real)g->stiffness) * env->dt / (dg_real)g->substeps;  /* the spring's ω times the substep */
    if (!(wh <= 1.0f))
        return dg_cfg_error(cfg, "env.stiffness", e, "is %g: with env.dt %g and env.substeps %d a substep is %.3g of the "
                            "spring's period over 2π (at most 1 keeps the contacts stable); raise env.substeps to %d or "
                            "lower the stiffness", g->stiffness, env->dt, g->substeps, wh,
                            (int)ceil(sqrt((dg_real)g->stiffness) * env->dt));
    env->state_dim = NSTATE;
    env->obs_dim = 6;     /* left:  [y_l, y_r, x, y, vx, vy] */
    env->act_dim = 1;
    env->nplayers = 2;
    env->obs2_dim = 6;    /* right: [y_r, y_l, -x, y, -vx, vy], the court seen from its side */
    env->act2_dim = 1;
    const float lines[4][4] = {{-X, Y, X, Y}, {-X, -Y, X, -Y}, {-X, -Y, -X, Y}, {X, -Y, X, Y}};  /* walls, goals */
    memcpy(g->lines, lines, sizeof lines);
    env->nlines = 4;
    env->lines = &g->lines[0][0];
    env->violation_label = "past a goal line";
    env->nmetrics = 4;
    env->metric_names[0] = "hits";
    env->metric_names[1] = "rally_time";
    env->metric_names[2] = "miss_left";
    env->metric_names[3] = "miss_right";
    return DG_OK;
}

static dg_status pong_reset(const dg_env *env, dg_rng *rng, int B, dg_real *state, dg_real *aux, dg_err *e) {
    const pong *g = env->impl;
    (void)aux;
    (void)e;
    const dg_real Y = g->court[1];
    for (int b = 0; b < B; b++) {
        dg_real *s = state + (size_t)b * NSTATE;
        const dg_real ang = dg_rng_uniform(rng, -g->serve_angle, g->serve_angle);
        const dg_real dir = dg_rng_uniform(rng, 0.0f, 1.0f) < 0.5f ? -1.0f : 1.0f;
        s[BX] = 0.0f;
        s[BY] = g->serve_y > 0 ? dg_rng_uniform(rng, -g->serve_y, g->serve_y) : 0.0f;
        s[VX] = dir * g->serve_speed * cos(ang);
        s[VY] = g->serve_speed * sin(ang);
        for (int k = 0; k < 2; k++)
            s[UL + k] = atanh((g->paddle_start > 0 ? dg_rng_uniform(rng, -g->paddle_start, g->paddle_start) : 0.0f) /
                               Y);
    }
    return DG_OK;
}

/* side -1: the left player's view; +1: the right one's, mirrored so that it too plays from the left */
static dg_tensor *observe_side(dg_ctx *ctx, const pong *g, dg_tensor *state, dg_real side) {
    dg_tensor *yl = paddle_y(ctx, g, dg_cols(ctx, state, UL, 1)), *yr = paddle_y(ctx, g, dg_cols(ctx, state, UR, 1));
    const dg_real m = -side;  /* x and vx as the player sees them */
    dg_tensor *parts[6] = {side < 0 ? yl : yr, side < 0 ? yr : yl, dg_scale(ctx, dg_cols(ctx, state, BX, 1), m),
                           dg_cols(ctx, state, BY, 1), dg_scale(ctx, dg_cols(ctx, state, VX, 1), m / g->serve_speed),
                           dg_scale(ctx, dg_cols(ctx, state, VY, 1), 1.0f / g->serve_speed)};
    return dg_concat(ctx, parts, 6, 1);
}

static dg_tensor *pong_observe(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux) {
    return observe_side(ctx, env->impl, state, -1.0f);
}

static dg_tensor *pong_observe2(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux) {
    return observe_side(ctx, env->impl, state, 1.0f);
}

/* The paddles move first, u' = u + (v_p / Y)·a·dt with the actions [a_l, a_r]; then the ball, in
 * substeps of semi-implicit Euler under the springs of the walls and both paddles (at their new
 * heights). */
static dg_tensor *pong_step(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux, dg_tensor *action) {
    const pong *g = env->impl;
    const dg_real du = g->paddle_speed / g->court[1] * env->dt, h = env->dt / (dg_real)g->substeps;
    dg_tensor *ul = dg_add(ctx, dg_cols(ctx, state, UL, 1), dg_scale(ctx, dg_cols(ctx, action, 0, 1), du));
    dg_tensor *ur = dg_add(ctx, dg_cols(ctx, state, UR, 1), dg_scale(ctx, dg_cols(ctx, action, 1, 1), du));
    dg_tensor *yl = paddle_y(ctx, g, ul), *yr = paddle_y(ctx, g, ur);
    dg_tensor *x = dg_cols(ctx, state, BX, 1), *y = dg_cols(ctx, state, BY, 1);
    dg_tensor *vx = dg_cols(ctx, state, VX, 1), *vy = dg_cols(ctx, state, VY, 1);
    for (int k = 0; k < g->substeps; k++) {
        dg_tensor *fyl, *fyr;
        dg_tensor *fx = dg_add(ctx, paddle_force(ctx, g, x, y, yl, -1.0f, &fyl),
                               paddle_force(ctx, g, x, y, yr, 1.0f, &fyr));
        dg_tensor *fy = dg_add(ctx, wall_force(ctx, g, y), dg_add(ctx, fyl, fyr));
        vx = dg_add(ctx, vx, dg_scale(ctx, fx, h));
        vy = dg_add(ctx, vy, dg_scale(ctx, fy, h));
        x = dg_add(ctx, x, dg_scale(ctx, vx, h));
        y = dg_add(ctx, y, dg_scale(ctx, vy, h));
    }
    return dg_concat(ctx, (dg_tensor *[]){x, y, vx, vy, ul, ur}, NSTATE, 1);
}

/* w(x) relu(|y - yp| - L)²: the paddle's shortfall, weighted by a Gaussian window around its face */
static dg_tensor *reach(dg_ctx *ctx, const pong *g, dg_tensor *x, dg_tensor *y, dg_tensor *yp, dg_real side) {
    dg_tensor *dx = dg_scale(ctx, dg_add_scalar(ctx, x, -side * g->paddle_x), 1.0f / g->reach_width);
    dg_tensor *w = dg_exp(ctx, dg_neg(ctx, dg_square(ctx, dx)));
    dg_tensor *ady = dg_sqrt(ctx, dg_add_scalar(ctx, dg_square(ctx, dg_sub(ctx, y, yp)), 1e-6f));
    return dg_mul(ctx, w, dg_square(ctx, dg_relu(ctx, dg_add_scalar(ctx, ady, -g->paddle_half))));
}

/* per row: miss relu(-x - X), evader_miss relu(x - X); reach, evader_reach: each paddle's shortfall */
static void pong_step_cost_rows(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux, dg_tensor *action,
                                dg_tensor **rows) {
    const pong *g = env->impl;
    dg_tensor *x = dg_cols(ctx, next, BX, 1), *y = dg_cols(ctx, next, BY, 1);
    dg_tensor *yl = paddle_y(ctx, g, dg_cols(ctx, next, UL, 1)), *yr = paddle_y(ctx, g, dg_cols(ctx, next, UR, 1));
    rows[0] = dg_relu(ctx, dg_add_scalar(ctx, dg_neg(ctx, x), -g->court[0]));
    rows[1] = reach(ctx, g, x, y, yl, -1.0f);
    rows[2] = dg_relu(ctx, dg_add_scalar(ctx, x, -g->court[0]));
    rows[3] = reach(ctx, g, x, y, yr, 1.0f);
}

/* hits: mean over episodes of the returns (vx turning from towards a paddle to away from it, on that
 * paddle's half) before the ball first passes a goal line; rally_time: mean seconds until it does
 * (the whole episode when it never does); miss_left, miss_right: the episodes lost by each side */
static void pong_metrics(const dg_env *env, const dg_real *traj, const dg_real *aux, int B, int H, double *values) {
    const pong *g = env->impl;
    double hits = 0, time = 0;
    int miss[2] = {0, 0};
    for (int b = 0; b < B; b++) {
        int t = 1;
        for (; t <= H; t++) {
            const dg_real *p = traj + ((int64_t)(t - 1) * B + b) * NSTATE, *s = traj + ((int64_t)t * B + b) * NSTATE;
            if (fabs(s[BX]) > g->court[0]) {
                miss[s[BX] > 0]++;
                break;
            }
            hits += (p[VX] < 0 && s[VX] >= 0 && s[BX] < 0) || (p[VX] > 0 && s[VX] <= 0 && s[BX] > 0);
        }
        time += (t <= H ? t : H) * (double)env->dt;
    }
    values[0] = B ? hits / B : 0.0;
    values[1] = B ? time / B : 0.0;
    values[2] = B ? (double)miss[0] / B : 0.0;
    values[3] = B ? (double)miss[1] / B : 0.0;
}

/* the ends of the left paddle (top, bottom), the ball, the ends of the right paddle: the ball third,
 * so that its colour in a replay is its own */
static int pong_bodies(const dg_env *env, const dg_real *s, const dg_real *aux, dg_real *xy, int *is_goal) {
    const pong *g = env->impl;
    for (int k = 0; k < 2; k++) {
        const dg_real yp = g->court[1] * tanh(s[UL + k]), xp = (k ? 1.0f : -1.0f) * g->paddle_x;
        dg_real *q = xy + (k ? 6 : 0);
        q[0] = q[2] = xp;
        q[1] = yp + g->paddle_half;
        q[3] = yp - g->paddle_half;
    }
    xy[4] = s[BX];
    xy[5] = s[BY];
    for (int i = 0; i < 5; i++) is_goal[i] = 0;
    return 5;
}

/* the ball (bit 2) once it is past a goal line */
static unsigned pong_violation(const dg_env *env, const dg_real *s, const dg_real *aux) {
    const pong *g = env->impl;
    return fabs(s[BX]) > g->court[0] ? 1u << 2 : 0u;
}

const dg_game dg_game_pong = {
    .name = "pong",
    .summary = "two learned paddles and a ball, zero-sum, soft contacts: rallies and each player's exploitability "
               "(docs/games/pong.md)",
    .dt = 0.02f,
    .horizon = 200,
    DG_GAME_DECLARE(KEYS, pong, LOSS),
    .create = pong_create,
    .reset = pong_reset,
    .observe = pong_observe,
    .observe2 = pong_observe2,
    .step = pong_step,
    .step_cost = dg_env_step_cost_from_rows,
    .step_cost_rows = pong_step_cost_rows,
    .metrics = pong_metrics,
    .bodies = pong_bodies,
    .violation = pong_violation,
    .body_names = "left_top,left_bottom,ball,right_top,right_bottom",
};
