/* The built-in games of configs/hji (pursuit2d, air3d, chauffeur, chase4d, linear, collision9d, and the
 * noisy merton1d and lqg1d): each
 * one's constants as config keys, dynamics, inputs and target, in one table (hji_games); docs/hji.md
 * describes each game. problem.c reads a config into a problem of one of them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/keys.h"
#include "hji/internal.h"
#include "hji/problem_internal.h"

#define TWO_PI 6.283185307179586
#define PI 3.141592653589793

/* A game's constants are config keys of its name (DG_KEY_F64) into p->param[i].value; each kind of
 * constant has its bounds once: */
#define RATE(nm, i, d, doc) DG_K_F64(nm, dg_hji_problem, param[i].value, d, 0, INFINITY, 1, 0, doc) /* >= 0 */
#define SIZE(nm, i, d, doc) DG_K_F64(nm, dg_hji_problem, param[i].value, d, 0, INFINITY, 0, 0, doc) /* > 0 */
#define RADIUS(i, d) SIZE("capture_radius", i, d, "captured within this distance (the target's radius)")

/* ------------------------------------------------------------------- games */

/* The ball of radius r at the origin over axes at the point x (gradient into grad unless NULL); the
 * games' targets have the arguments (p, x, grad) these pass on. */
static double target_ball0(const dg_hji_problem *p, unsigned axes, double r, const double *x, double *grad) {
    const double c[DG_HJI_MAX_DIMS] = {0};
    return hji_sdf_ball_at(&p->grid, c, r, axes, x, grad);
}

/* pursuit2d: x = x_E - x_P, x' = v_e b - v_p a, |a|, |b| <= 1. u = a (pursuer, min), d = b. */
enum { PU_VP, PU_VE, PU_R };
static const dg_key PURSUIT_KEYS[] = {
    RATE("speed_pursuer", PU_VP, 1.0, "pursuer's speed v_p"),
    RATE("speed_evader", PU_VE, 0.5, "evader's speed v_e"),
    RADIUS(PU_R, 0.25),
};

static void dyn_pursuit(void *user, const double *x, double *f, double *G, double *D) {
    const dg_hji_param *q = user;
    (void)x;
    (void)f;
    G[0] = -q[PU_VP].value;
    G[3] = -q[PU_VP].value;
    D[0] = q[PU_VE].value;
    D[3] = q[PU_VE].value;
}

static void read_pursuit(dg_hji_problem *p) {
    p->game.dyn = dyn_pursuit;
    p->game.u = (dg_hji_input){.dim = 2, .set = DG_HJI_SET_BALL, .role = DG_HJI_ROLE_MIN, .radius = 1};
    p->game.d = (dg_hji_input){.dim = 2, .set = DG_HJI_SET_BALL, .role = DG_HJI_ROLE_MAX, .radius = 1};
}

static double target_pursuit(TARGET_ARGS) { return target_ball0(p, 0, p->param[PU_R].value, x, grad); }

/* air3d (helperOC Air3D, the evader's frame): x' = -v_a + v_b cos psi + a y, y' = v_b sin psi - a x,
 * psi' = b - a; a the evader's turn (u, max), b the pursuer's (d, min). */
enum { AIR_VA, AIR_VB, AIR_A, AIR_B, AIR_R };
static const dg_key AIR3D_KEYS[] = {
    RATE("speed_evader", AIR_VA, 5, "evader's speed v_a"),
    RATE("speed_pursuer", AIR_VB, 5, "pursuer's speed v_b"),
    RATE("turn_evader", AIR_A, 1, "evader's largest turn rate |a|"),
    RATE("turn_pursuer", AIR_B, 1, "pursuer's largest turn rate |b|"),
    RADIUS(AIR_R, 5),
};

static void dyn_air3d(void *user, const double *x, double *f, double *G, double *D) {
    const dg_hji_param *q = user;
    f[0] = -q[AIR_VA].value + q[AIR_VB].value * cos(x[2]);
    f[1] = q[AIR_VB].value * sin(x[2]);
    G[0] = x[1];
    G[1] = -x[0];
    G[2] = -1;
    D[2] = 1;
}

static void read_air3d(dg_hji_problem *p) {
    const double a = p->param[AIR_A].value, b = p->param[AIR_B].value;
    p->game.dyn = dyn_air3d;
    p->game.u = (dg_hji_input){.dim = 1, .set = DG_HJI_SET_BOX, .role = DG_HJI_ROLE_MAX, .lo = {-a}, .hi = {a}};
    p->game.d = (dg_hji_input){.dim = 1, .set = DG_HJI_SET_BOX, .role = DG_HJI_ROLE_MIN, .lo = {-b}, .hi = {b}};
}

static double target_air3d(TARGET_ARGS) { return target_ball0(p, 3u, p->param[AIR_R].value, x, grad); }

/* chauffeur (Isaacs 1965, Basar-Olsder 8.5), the pursuer's frame, pursuer moving along +y:
 * x' = -w u y + v_e b_x, y' = w u x - v_p + v_e b_y; u in [-1, 1] the pursuer's turn (min),
 * |b| <= 1 the evader's heading (max). */
enum { CH_VP, CH_W, CH_VE, CH_R };
static const dg_key CHAUFFEUR_KEYS[] = {
    RATE("speed_pursuer", CH_VP, 1, "pursuer's (the car's) speed v_p"),
    RATE("turn_rate", CH_W, 1, "pursuer's largest turn rate w"),
    RATE("speed_evader", CH_VE, 0.5, "evader's speed v_e"),
    RADIUS(CH_R, 0.3),
};

static void dyn_chauffeur(void *user, const double *x, double *f, double *G, double *D) {
    const dg_hji_param *q = user;
    f[1] = -q[CH_VP].value;
    G[0] = -q[CH_W].value * x[1];
    G[1] = q[CH_W].value * x[0];
    D[0] = q[CH_VE].value;
    D[3] = q[CH_VE].value;
}

static void read_chauffeur(dg_hji_problem *p) {
    p->game.dyn = dyn_chauffeur;
    p->game.u = (dg_hji_input){.dim = 1, .set = DG_HJI_SET_BOX, .role = DG_HJI_ROLE_MIN, .lo = {-1}, .hi = {1}};
    p->game.d = (dg_hji_input){.dim = 2, .set = DG_HJI_SET_BALL, .role = DG_HJI_ROLE_MAX, .radius = 1};
}

static double target_chauffeur(TARGET_ARGS) { return target_ball0(p, 0, p->param[CH_R].value, x, grad); }

/* chase4d: the chase game's bodies without walls, relative (evader minus pursuer) position and
 * velocity: x' = v, v' = -c v - A_p a + A_e b, c = -ln(damping)/dt (the constant drag). */
enum { C4_AP, C4_AE, C4_DRAG, C4_R, C4_DAMP, C4_DT };
static const dg_key CHASE4D_KEYS[] = {
    RATE("accel_pursuer", C4_AP, 5, "pursuer's largest acceleration A_p"),
    RATE("accel_evader", C4_AE, 3.5, "evader's largest acceleration A_e"),
    RADIUS(C4_R, 0.1),
    DG_K_F64("damping", dg_hji_problem, param[C4_DAMP].value, 0.98, 0, 1, 0, 1,
             "chase's velocity factor per step: drag = -ln(damping)/dt"),
    SIZE("dt", C4_DT, 0.05, "chase's step (seconds) the damping is per"),
};

/* duel_simple: state (pursuer x, y, evader x, y), joint action (pursuer a, evader b on the unit disk);
 * pursuit2d's x = evader - pursuer, u = a, d = b; the same speeds and capture radius (dg_certify). */
static const char *const PURSUIT2D_SAME[] = {"speed_pursuer", "speed_evader", "capture_radius", NULL};
static const dg_hji_link PURSUIT2D_LINK = {
    .env_game = "duel_simple", .need = "duel_simple (two learned players, simple motion)", .nplayers = 2,
    .state_dim = 4, .plus = {2, 3}, .minus = {0, 1}, .u_act = {0, 1}, .d_act = {2, 3}, .capture_axes = 3u,
    .capture_param = "capture_radius", .same = PURSUIT2D_SAME,
};

/* chase (env.evader: policy, no walls): state (pursuer x, y, vx, vy, evader x, y, vx, vy), joint
 * action (pursuer ax, ay, evader ax, ay); chase4d's x = evader - pursuer, u the pursuer's, d the
 * evader's; captured within capture_radius of the relative position. */
/* what dg_certify requires to be chase's env.<name> too */
static const char *const CHASE4D_SAME[] = {"accel_pursuer", "accel_evader", "damping", "dt", "capture_radius", NULL};
static const dg_hji_link CHASE4D_LINK = {
    .env_game = "chase", .need = "chase with a learned evader (env.evader: policy)", .nplayers = 2, .state_dim = 8,
    .plus = {4, 5, 6, 7}, .minus = {0, 1, 2, 3}, .u_act = {0, 1}, .d_act = {2, 3}, .capture_axes = 3u,
    .capture_param = "capture_radius", .same = CHASE4D_SAME,
};

static void dyn_chase4d(void *user, const double *x, double *f, double *G, double *D) {
    const dg_hji_param *q = user;
    f[0] = x[2];
    f[1] = x[3];
    f[2] = -q[C4_DRAG].value * x[2];
    f[3] = -q[C4_DRAG].value * x[3];
    G[2 * 2 + 0] = -q[C4_AP].value;
    G[3 * 2 + 1] = -q[C4_AP].value;
    D[2 * 2 + 0] = q[C4_AE].value;
    D[3 * 2 + 1] = q[C4_AE].value;
}

static void read_chase4d(dg_hji_problem *p) {
    dg_hji_param *q = p->param;
    q[C4_DRAG].value = -log(q[C4_DAMP].value) / q[C4_DT].value;  /* c = -ln(damping) / dt */
    p->game.dyn = dyn_chase4d;
    p->game.u = (dg_hji_input){.dim = 2, .set = DG_HJI_SET_BALL, .role = DG_HJI_ROLE_MIN, .radius = 1};
    p->game.d = (dg_hji_input){.dim = 2, .set = DG_HJI_SET_BALL, .role = DG_HJI_ROLE_MAX, .radius = 1};
}

static double target_chase4d(TARGET_ARGS) { return target_ball0(p, 3u, p->param[C4_R].value, x, grad); }

/* linear: x' = A x + drift + B u + D d, every term declared in the config (two axes); u minimises,
 * d maximises, each in a box |v_j| <= bound, a ball |v| <= bound, or unbounded at a quadratic
 * running cost (payoff: cost). The target: a disk at the origin. */
enum { LIN_R };
static const char *const LIN_SET[] = {"box", "ball", "quadratic", NULL};
static const char *const LIN_DSET[] = {"none", "box", "ball", "quadratic", NULL};
#define LIN_ARRAY(nm, F, mn, mx, doc_)                                                                        \
    {.name = nm, .type = DG_KEY_F64_ARRAY, .offset = offsetof(dg_hji_problem, lin.F), .lo = -INFINITY,        \
     .hi = INFINITY, .min_n = mn, .max_n = mx, .def_str = "0", .doc = doc_}
static const double LIN_EYE[] = {1, 0, 0, 1};
#define LIN_INPUT(who, W, role, F, dv, dn, ds)                                                                 \
    {.name = who ".matrix", .type = DG_KEY_F64_ARRAY, .offset = offsetof(dg_hji_problem, lin.F),                \
     .count_offset = offsetof(dg_hji_problem, lin.n##F), .lo = -INFINITY, .hi = INFINITY, .min_n = 2,            \
     .max_n = 2 * DG_HJI_MAX_INPUT, .def_v = dv, .def_n = dn, .def_str = ds,                                    \
     .doc = "its matrix (2 x m row-major, m = items / 2): " who "'s term of x'"},                               \
    DG_K_F64(who ".bound", dg_hji_problem, lin.W##_bound, 1, 0, INFINITY, 1, 0,                                 \
             "box: |" role "_j| <= bound; ball: |" role "| <= bound"),                                          \
    DG_K_F64(who ".weight", dg_hji_problem, lin.W##_weight, 1, 0, INFINITY, 0, 0,                               \
             "quadratic: the running cost weight |" role "|^2 (payoff: cost)")
static const dg_key LINEAR_KEYS[] = {
    SIZE("target_radius", LIN_R, 0.2, "the target: the disk of this radius at the origin"),
    LIN_ARRAY("dynamics.A", A, 4, 4, "A (2 x 2 row-major) in x' = A x + drift + B u + D d"),
    LIN_ARRAY("dynamics.drift", drift, 2, 2, "the constant term of x' (a current)"),
    DG_K_ENUM("control.set", dg_hji_problem, lin.u_set, 0, LIN_SET, NULL,
              "the control u (minimises): box, ball, or quadratic (unbounded, at a running cost)"),
    LIN_INPUT("control", u, "u", B, LIN_EYE, 4, NULL),
    DG_K_ENUM("disturbance.set", dg_hji_problem, lin.d_set, 0, LIN_DSET, NULL,
              "the disturbance d (maximises): none, box, ball, or quadratic (at a running cost -weight |d|^2)"),
    LIN_INPUT("disturbance", d, "d", D, NULL, 0, "none"),
};

static void dyn_linear(void *user, const double *x, double *f, double *G, double *D) {
    const dg_hji_linear *l = &((const dg_hji_problem *)user)->lin;
    const int nx = 2;
    for (int k = 0; k < nx; k++) {
        f[k] = l->drift[k];
        for (int j = 0; j < nx; j++) f[k] += l->A[k * nx + j] * x[j];
    }
    for (int q = 0; q < l->nB; q++) G[q] = l->B[q];
    for (int q = 0; q < l->nD; q++) D[q] = l->D[q];
}

/* One input of the linear game: set (a dg_hji_set), n matrix items, bound, weight. */
static dg_hji_input linear_input(int set, int n, double bound, double weight, dg_hji_role role) {
    dg_hji_input in = {.dim = n / 2, .set = (dg_hji_set)set, .role = role, .radius = bound, .weight = weight};
    for (int j = 0; j < in.dim; j++) {
        in.lo[j] = -bound;
        in.hi[j] = bound;
    }
    return in;
}

static void read_linear(dg_hji_problem *p) {
    const dg_hji_linear *l = &p->lin;
    p->game.dyn = dyn_linear;
    p->game.user = p;
    p->game.u = linear_input(l->u_set, l->nB, l->u_bound, l->u_weight, DG_HJI_ROLE_MIN);
    if (l->d_set) p->game.d = linear_input(l->d_set - 1, l->nD, l->d_bound, l->d_weight, DG_HJI_ROLE_MAX);
}

static dg_status check_linear(const dg_hji_problem *p, dg_cfg *c, dg_err *e) {
    const dg_hji_linear *l = &p->lin;
    if (l->nB % 2) return dg_cfg_error(c, "control.matrix", e, "%d items: expected 2 x m (an even count)", l->nB);
    if (l->d_set && !l->nD)
        return dg_cfg_error(c, "disturbance.matrix", e, "missing: the disturbance's matrix D (2 x m, row-major)");
    if (l->nD % 2) return dg_cfg_error(c, "disturbance.matrix", e, "%d items: expected 2 x m (an even count)", l->nD);
    if (!l->d_set && l->nD) return dg_cfg_error(c, "disturbance.matrix", e, "given, but disturbance.set is none");
    if ((l->u_set == DG_HJI_SET_QUAD || l->d_set == DG_HJI_SET_QUAD + 1) && p->payoff != DG_HJI_PAYOFF_COST)
        return dg_cfg_error(c, l->u_set == DG_HJI_SET_QUAD ? "control.set" : "disturbance.set", e,
                            "a quadratic (unbounded) input needs payoff: cost");
    return DG_OK;
}

static double target_linear(TARGET_ARGS) { return target_ball0(p, 0, p->param[LIN_R].value, x, grad); }

/* collision9d (DeepReach's multi-vehicle collision, Bansal & Tomlin 2021): three Dubins aircraft
 * i = 1, 2, 3 at the same speed v, state (x1, y1, x2, y2, x3, y3, th1, th2, th3):
 *     x_i' = v cos th_i,  y_i' = v sin th_i,  th_i' = u_i,  |u_i| <= w,
 * every vehicle's turn rate a component of u (role MAX: each steers away from the collision set;
 * no disturbance). Target: l(x) = min over the pairs of |p_i - p_j| - R, <= 0 at a collision. */
enum { MV_V, MV_W, MV_R };
static const dg_key COLLISION9D_KEYS[] = {
    RATE("speed", MV_V, 0.6, "every vehicle's speed v"),
    RATE("turn_rate", MV_W, 1.1, "every vehicle's largest turn rate w"),
    SIZE("collision_radius", MV_R, 0.25, "two vehicles collide within this distance (the target's radius)"),
};

static void dyn_collision9d(void *user, const double *x, double *f, double *G, double *D) {
    const dg_hji_param *q = user;
    (void)D;
    for (int i = 0; i < 3; i++) {
        f[2 * i] = q[MV_V].value * cos(x[6 + i]);
        f[2 * i + 1] = q[MV_V].value * sin(x[6 + i]);
        G[(6 + i) * 3 + i] = 1;   /* G (9, 3): th_i' = u_i */
    }
}

static void read_collision9d(dg_hji_problem *p) {
    const double w = p->param[MV_W].value;
    p->game.dyn = dyn_collision9d;
    p->game.u = (dg_hji_input){.dim = 3, .set = DG_HJI_SET_BOX, .role = DG_HJI_ROLE_MAX, .lo = {-w, -w, -w},
                               .hi = {w, w, w}};
}

/* The smallest of the three pairwise distances minus R; its gradient that of the first nearest pair
 * ((p_i - p_j) / |p_i - p_j| on p_i, its negative on p_j; 0 where the two coincide, the least
 * subgradient, as a ball's at its centre), 0 along the headings. */
static double target_collision9d(TARGET_ARGS) {
    static const int PAIRS[3][2] = {{0, 1}, {0, 2}, {1, 2}};
    double best = INFINITY, dx = 0, dy = 0;
    int bi = 0;
    for (int k = 0; k < 3; k++) {
        const int i = PAIRS[k][0], j = PAIRS[k][1];
        const double ex = x[2 * i] - x[2 * j], ey = x[2 * i + 1] - x[2 * j + 1], d = sqrt(ex * ex + ey * ey);
        if (d < best) best = d, dx = ex, dy = ey, bi = k;
    }
    if (grad) {
        memset(grad, 0, 9 * sizeof *grad);
        const int i = PAIRS[bi][0], j = PAIRS[bi][1];
        const double gx = best > 0 ? dx / best : 0, gy = best > 0 ? dy / best : 0;
        grad[2 * i] = gx, grad[2 * i + 1] = gy, grad[2 * j] = -gx, grad[2 * j + 1] = -gy;
    }
    return best - p->param[MV_R].value;
}

/* merton1d (Merton 1969, the portfolio problem): wealth w, a fraction pi of it in a risky asset of drift mu
 * and volatility sigma, the rest at the rate r:
 *     dw = (r + pi (mu - r)) w dt + pi sigma w dW,
 * the investor (u = pi in [pi_min, pi_max], role MAX) maximises the expected utility of the wealth at
 * the horizon, w^gamma / gamma (CRRA, 0 < gamma < 1). The value is that expected utility itself:
 * payoff: cost with no running cost and this terminal value; the noise scheme solves it. */
enum { ME_MU, ME_R, ME_SIGMA, ME_GAMMA, ME_PILO, ME_PIHI };
static const dg_key MERTON_KEYS[] = {
    DG_K_F64("mu", dg_hji_problem, param[ME_MU].value, 0.1, -INFINITY, INFINITY, 0, 0,
             "the risky asset's expected return (drift) per unit time"),
    DG_K_F64("r", dg_hji_problem, param[ME_R].value, 0.03, -INFINITY, INFINITY, 0, 0,
             "the riskless rate per unit time"),
    SIZE("sigma", ME_SIGMA, 0.25, "the risky asset's volatility"),
    DG_K_F64("gamma", dg_hji_problem, param[ME_GAMMA].value, 0.5, 0, 1, 0, 0,
             "the utility's exponent: w^gamma / gamma (CRRA, relative risk aversion 1 - gamma)"),
    DG_K_F64("pi_min", dg_hji_problem, param[ME_PILO].value, 0, -INFINITY, INFINITY, 0, 0,
             "the least risky fraction (the box of the control)"),
    DG_K_F64("pi_max", dg_hji_problem, param[ME_PIHI].value, 3, -INFINITY, INFINITY, 0, 0,
             "the largest risky fraction (above pi_min; 1 and more: borrowing at r)"),
};

static void dyn_merton(void *user, const double *x, double *f, double *G, double *D) {
    const dg_hji_param *q = user;
    (void)D;
    f[0] = q[ME_R].value * x[0];
    G[0] = (q[ME_MU].value - q[ME_R].value) * x[0];
}

/* sigma sigma^T = (pi sigma w)^2 */
static void diffusion_merton(void *user, const double *x, const double *u, const double *d, double *a) {
    const dg_hji_param *q = user;
    (void)d;
    const double s = u[0] * q[ME_SIGMA].value * x[0];
    a[0] = s * s;
}

/* Past the wealth range the value scales as CRRA utility does, V(k w) = k^gamma V(w) (the dynamics
 * are linear in w, the utility homogeneous): the ghost k^gamma v_edge, k = (w +- dw) / w, increasing
 * in v_edge (monotone). At w = 0 the drift and the diffusion vanish and no ghost is read. */
static double ghost_merton(void *user, int axis, int upper, const double *x, double dx, double v_edge, double v_in) {
    const dg_hji_param *q = user;
    (void)axis;
    const double w = x[0], w1 = upper ? w + dx : w - dx;
    if (w > 0 && w1 > 0) return pow(w1 / w, q[ME_GAMMA].value) * v_edge;
    return 2 * v_edge - v_in;
}

static void read_merton(dg_hji_problem *p) {
    p->game.dyn = dyn_merton;
    p->game.diffusion = diffusion_merton;
    p->game.ghost = ghost_merton;
    p->game.u = (dg_hji_input){.dim = 1, .set = DG_HJI_SET_BOX, .role = DG_HJI_ROLE_MAX,
                               .lo = {p->param[ME_PILO].value}, .hi = {p->param[ME_PIHI].value}};
}

/* w^gamma / gamma, its gradient w^(gamma - 1) (0 at w <= 0, where utility is 0) */
static double terminal_merton(const dg_hji_problem *p, const double *x, double *grad) {
    const double g = p->param[ME_GAMMA].value, w = x[0] > 0 ? x[0] : 0;
    if (grad) grad[0] = w > 0 ? pow(w, g - 1) : 0;
    return pow(w, g) / g;
}

/* No target: payoff: cost (the node array stays unused at 1). */
static double target_none(TARGET_ARGS) {
    (void)p;
    (void)x;
    if (grad) grad[0] = 0;
    return 1;
}

/* What a noisy game of degree takes from the config: payoff: cost (its default); name the game. */
static dg_status check_noisy(const dg_hji_problem *p, dg_cfg *c, const char *what, dg_err *e) {
    if (p->payoff != DG_HJI_PAYOFF_COST)
        return dg_cfg_error(c, "payoff", e, "%s is a game of degree with noise: payoff: cost (%s)", p->name, what);
    return DG_OK;
}

static dg_status check_merton(const dg_hji_problem *p, dg_cfg *c, dg_err *e) {
    dg_status rc = check_noisy(p, c, "the expected utility of the wealth at t_end, maximised", e);
    if (rc) return rc;
    if (dg_cfg_has(c, "cost.terminal") || dg_cfg_has(c, "cost.state") || dg_cfg_has(c, "cost.running"))
        return dg_cfg_error(c, dg_cfg_has(c, "cost.terminal") ? "cost.terminal" : dg_cfg_has(c, "cost.state")
                            ? "cost.state" : "cost.running", e,
                            "merton1d's payoff is the utility w^gamma / gamma at t_end alone (keys gamma, ...)");
    if (!(p->param[ME_PIHI].value > p->param[ME_PILO].value))
        return dg_cfg_error(c, "pi_max", e, "%g must exceed pi_min %g", p->param[ME_PIHI].value,
                            p->param[ME_PILO].value);
    if (p->grid.lo[0] < 0)
        return dg_cfg_error(c, "grid.min", e, "merton1d's wealth starts at %g: expected >= 0 (utility of w >= 0)",
                            p->grid.lo[0]);
    return DG_OK;
}

/* lqg1d: the scalar linear-quadratic-Gaussian problem
 *     dx = (a x + b u) dt + sigma dW,  cost int (q x^2 + weight u^2) dt + q_T x(tau)^2,
 * q and q_T the common keys cost.state and cost.terminal, the control u in [-bound, bound] at the
 * running cost weight u^2 (a box at a cost, role MIN). Value: P(tau) x^2 + sigma^2 int_0^tau P, P the
 * Riccati solution P' = q + 2 a P - b^2 P^2 / weight, P(0) = q_T (docs/hji.md, "Diffusion"). */
enum { LQ_A, LQ_B, LQ_SIGMA, LQ_W, LQ_BOUND };
static const dg_key LQG_KEYS[] = {
    DG_K_F64("a", dg_hji_problem, param[LQ_A].value, 0.5, -INFINITY, INFINITY, 0, 0, "x' = a x + b u (+ noise)"),
    DG_K_F64("b", dg_hji_problem, param[LQ_B].value, 1, -INFINITY, INFINITY, 0, 0, "the control's gain b"),
    SIZE("sigma", LQ_SIGMA, 0.5, "the additive noise's sigma: dx = (a x + b u) dt + sigma dW"),
    SIZE("weight", LQ_W, 1, "the running cost weight u^2"),
    SIZE("bound", LQ_BOUND, 6, "the control's box |u| <= bound (wide enough for the optimum -b P x / weight)"),
};

static void dyn_lqg(void *user, const double *x, double *f, double *G, double *D) {
    const dg_hji_param *q = user;
    (void)D;
    f[0] = q[LQ_A].value * x[0];
    G[0] = q[LQ_B].value;
}

static void diffusion_lqg(void *user, const double *x, const double *u, const double *d, double *a) {
    const dg_hji_param *q = user;
    (void)x, (void)u, (void)d;
    a[0] = q[LQ_SIGMA].value * q[LQ_SIGMA].value;
}

static void read_lqg(dg_hji_problem *p) {
    const double b = p->param[LQ_BOUND].value;
    p->game.dyn = dyn_lqg;
    p->game.diffusion = diffusion_lqg;
    p->game.u = (dg_hji_input){.dim = 1, .set = DG_HJI_SET_BOX_COST, .role = DG_HJI_ROLE_MIN, .lo = {-b}, .hi = {b},
                               .weight = p->param[LQ_W].value};
}

static dg_status check_lqg(const dg_hji_problem *p, dg_cfg *c, dg_err *e) {
    return check_noisy(p, c, "the expected quadratic cost, minimised", e);
}

/* The games, in the order of their names. */
const char *const hji_game_names[] = {"pursuit2d", "air3d", "chauffeur", "chase4d", "linear", "collision9d",
                                      "merton1d", "lqg1d", NULL};
const game_def hji_games[] = {
    {.summary = "Simple-motion pursuit-evasion; the state: the evader's position relative to the pursuer's",
     .nx = 2, .u_name = "pursuer", .d_name = "evader", KEYS(PURSUIT_KEYS),
     .t_end = 1, .lo = {-2, -2}, .hi = {2, 2}, .n = {81, 81},
     .read = read_pursuit, .target = target_pursuit, .link = &PURSUIT2D_LINK},
    {.summary = "Collision avoidance of two planes (helperOC's Air3D) in the evader's frame: x, y and the "
                "heading psi (periodic)",
     .nx = 3, .u_name = "evader", .d_name = "pursuer", KEYS(AIR3D_KEYS),
     .t_end = 2.8, .lo = {-6, -10, 0}, .hi = {20, 10, TWO_PI}, .n = {51, 40, 50}, .periodic = {0, 0, 1},
     .read = read_air3d, .target = target_air3d},
    {.summary = "The homicidal chauffeur (Isaacs) in the pursuer's frame; the state: the evader's position",
     .nx = 2, .u_name = "pursuer", .d_name = "evader", KEYS(CHAUFFEUR_KEYS),
     .t_end = 8, .lo = {-3, -3}, .hi = {3, 3}, .n = {121, 121},
     .read = read_chauffeur, .target = target_chauffeur},
    {.summary = "The chase game's bodies without walls: relative position and velocity; hji versus plays it "
                "against chase",
     .nx = 4, .u_name = "pursuer", .d_name = "evader", KEYS(CHASE4D_KEYS), .derived = "drag", .derived_at = C4_DRAG,
     .t_end = 0.5, .lo = {-1, -1, -2, -2}, .hi = {1, 1, 2, 2}, .n = {31, 31, 31, 31},
     .read = read_chase4d, .target = target_chase4d, .link = &CHASE4D_LINK},
    {.summary = "A linear game declared in the config: x' = A x + drift + B u + D d on two axes, each input in a "
                "box, a ball, or unbounded at a quadratic cost",
     .nx = 2, .u_name = "control", .d_name = "disturbance", KEYS(LINEAR_KEYS),
     .t_end = 1, .lo = {-2, -2}, .hi = {2, 2}, .n = {81, 81},
     .read = read_linear, .check = check_linear, .target = target_linear},
    {.summary = "Three Dubins aircraft avoiding each other (DeepReach's multi-vehicle collision): positions and "
                "headings (periodic), 9-D: hji learn only",
     .nx = 9, .u_name = "vehicles", .d_name = "none", KEYS(COLLISION9D_KEYS),
     .t_end = 1, .lo = {-1, -1, -1, -1, -1, -1, -PI, -PI, -PI}, .hi = {1, 1, 1, 1, 1, 1, PI, PI, PI},
     .n = {11, 11, 11, 11, 11, 11, 11, 11, 11}, .periodic = {0, 0, 0, 0, 0, 0, 1, 1, 1},
     .read = read_collision9d, .target = target_collision9d},
    {.summary = "Merton's portfolio problem with noise: wealth w, the risky fraction pi maximises the expected "
                "utility w^gamma / gamma at the horizon",
     .nx = 1, .u_name = "investor", .d_name = "none", KEYS(MERTON_KEYS),
     .t_end = 1, .lo = {0}, .hi = {10}, .n = {201},
     .read = read_merton, .check = check_merton, .target = target_none, .terminal = terminal_merton,
     .cost_only = 1},
    {.summary = "A scalar linear-quadratic-Gaussian problem: dx = (a x + b u) dt + sigma dW, the control minimises "
                "the expected quadratic cost",
     .nx = 1, .u_name = "control", .d_name = "none", KEYS(LQG_KEYS),
     .t_end = 1, .lo = {-3}, .hi = {3}, .n = {121},
     .read = read_lqg, .check = check_lqg, .target = target_none, .cost_only = 1},
};
#define NGAMES ((int)(sizeof hji_games / sizeof hji_games[0]))
_Static_assert(sizeof hji_game_names / sizeof hji_game_names[0] == NGAMES + 1, "a name for each game");

/* Each game's state variables in axis order (the axes of its figures: dg_hji_axis_name). */
static const struct { const char *game, *axis[DG_HJI_MAX_DIMS]; } AXES[] = {
    {"pursuit2d", {"x", "y"}},
    {"air3d", {"x", "y", "psi"}},
    {"chauffeur", {"x", "y"}},
    {"chase4d", {"x", "y", "vx", "vy"}},
    {"linear", {"x1", "x2"}},
    {"collision9d", {"x1", "y1", "x2", "y2", "x3", "y3", "th1", "th2", "th3"}},
    {"merton1d", {"w"}},
    {"lqg1d", {"x"}},
};

const char *dg_hji_axis_name(const char *game, int axis) {
    for (size_t i = 0; game && axis >= 0 && axis < DG_HJI_MAX_DIMS && i < sizeof AXES / sizeof AXES[0]; i++)
        if (strcmp(AXES[i].game, game) == 0) return AXES[i].axis[axis];
    return NULL;
}

const char *dg_hji_problem_name(int i) { return i >= 0 && i < NGAMES ? hji_game_names[i] : NULL; }

/* The built-in game named game, or NULL. */
const game_def *hji_game_find(const char *game) {
    for (int i = 0; game && i < NGAMES; i++)
        if (strcmp(hji_game_names[i], game) == 0) return &hji_games[i];
    return NULL;
}

const dg_hji_link *dg_hji_game_link(const char *game) {
    const game_def *gd = hji_game_find(game);
    return gd ? gd->link : NULL;
}

const char *dg_hji_game_summary(const char *game) {
    const game_def *gd = hji_game_find(game);
    return gd ? gd->summary : NULL;
}
