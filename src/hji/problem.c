/* Problems from configs: the built-in games (pursuit2d, air3d, chauffeur, chase4d) as dynamics,
 * bounds and targets, and the common keys (grid, horizon, accuracy, solver options, obstacles).
 * Every key is declared once, in a table (difgames/keys.h): `difgames keys hji [GAME]` lists them
 * (docs/config.md); docs/hji.md describes each game. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/keys.h"
#include "difgames/memory.h"
#include "hji/internal.h"
#include "hji/model.h"

#define TWO_PI 6.283185307179586

/* ------------------------------------------------------------------- types */

/* A game's constants are config keys of its name (DG_KEY_F64) into p->param[i].value; each kind of
 * constant has its bounds once: */
#define RATE(nm, i, d, doc) DG_K_F64(nm, dg_hji_problem, param[i].value, d, 0, INFINITY, 1, 0, doc) /* >= 0 */
#define SIZE(nm, i, d, doc) DG_K_F64(nm, dg_hji_problem, param[i].value, d, 0, INFINITY, 0, 0, doc) /* > 0 */
#define RADIUS(i, d) SIZE("capture_radius", i, d, "captured within this distance (the target's radius)")

typedef struct game_def {
    const char *summary;                  /* a line for listings                                    */
    int         nx;
    const char *u_name, *d_name;
    const dg_key *keys;                   /* the game's constants as keys, into p->param[i].value   */
    int         nkeys;
    const char *derived;                  /* a constant the game's read derives (into param[derived_at]), */
    int         derived_at;               /* or NULL                                                */
    double      t_end;                    /* the default horizon and grid                           */
    double      lo[DG_HJI_MAX_DIMS], hi[DG_HJI_MAX_DIMS];
    double      n[DG_HJI_MAX_DIMS];       /* (node counts, as the keys' defaults are)               */
    int         periodic[DG_HJI_MAX_DIMS];
    const char *axis[DG_HJI_MAX_DIMS];    /* the axes' names (a model's state); NULL: dg_hji_axis_name's */
    /* derives constants, sets p->game's dynamics and inputs */
    void (*read)(dg_hji_problem *p);
    /* or NULL: checks what read took from the config (config-declared terms), naming the key */
    dg_status (*check)(const dg_hji_problem *p, dg_cfg *c, dg_err *e);
    /* the target at nodes [j0, j0 + n) into out (n) */
    void (*target)(const dg_hji_problem *p, int64_t j0, int64_t n, double *out);
    const dg_hji_link *link;              /* a learning game whose state maps onto this one's, or NULL */
} game_def;
#define KEYS(t) t, (int)(sizeof t / sizeof t[0])

/* An obstacle of the config: a ball (center a, radius) or a box [a, b] over the axes in mask. */
typedef struct obstacle_shape {
    int      ball;
    unsigned mask;
    double   a[DG_HJI_MAX_DIMS], b[DG_HJI_MAX_DIMS], radius;
} obstacle_shape;

/* What builds a problem's node arrays over any range of nodes (p->build): the whole grid when
 * loaded, or a rank's block (dg_hji_problem_load_split, dg_hji_problem_keep_block). */
typedef struct problem_build {
    void (*target)(const dg_hji_problem *p, int64_t j0, int64_t n, double *out);  /* the game's */
    obstacle_shape *shape;               /* the config's obstacles                              */
    int             nshape;
    double          cmax;                /* payoff: time: the largest front speed on the target */
    int             built;               /* the arrays are there                                */
    int             whole;               /* ... and hold the whole grid                         */
} problem_build;

/* ------------------------------------------------------------------- games */

/* The ball of radius r at the origin over axes at nodes [j0, j0 + n); the games' targets have the
 * arguments (p, j0, n, out) these pass on. */
static void target_ball0(const dg_hji_problem *p, unsigned axes, double r, int64_t j0, int64_t n, double *out) {
    const double c[DG_HJI_MAX_DIMS] = {0};
    hji_sdf_ball_nodes(&p->grid, c, r, axes, j0, n, out);
}
#define TARGET_ARGS const dg_hji_problem *p, int64_t j0, int64_t n, double *out

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

static void target_pursuit(TARGET_ARGS) { target_ball0(p, 0, p->param[PU_R].value, j0, n, out); }

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

static void target_air3d(TARGET_ARGS) { target_ball0(p, 3u, p->param[AIR_R].value, j0, n, out); }

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

static void target_chauffeur(TARGET_ARGS) { target_ball0(p, 0, p->param[CH_R].value, j0, n, out); }

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

static void target_chase4d(TARGET_ARGS) { target_ball0(p, 3u, p->param[C4_R].value, j0, n, out); }

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

static void target_linear(TARGET_ARGS) { target_ball0(p, 0, p->param[LIN_R].value, j0, n, out); }

/* The games, in the order of their names. */
static const char *const GAME_NAMES[] = {"pursuit2d", "air3d", "chauffeur", "chase4d", "linear", NULL};
static const game_def GAMES[] = {
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
};
#define NGAMES ((int)(sizeof GAMES / sizeof GAMES[0]))
_Static_assert(sizeof GAME_NAMES / sizeof GAME_NAMES[0] == NGAMES + 1, "a name for each game");

/* Each game's state variables in axis order (the axes of its figures: dg_hji_axis_name). */
static const struct { const char *game, *axis[DG_HJI_MAX_DIMS]; } AXES[] = {
    {"pursuit2d", {"x", "y"}},
    {"air3d", {"x", "y", "psi"}},
    {"chauffeur", {"x", "y"}},
    {"chase4d", {"x", "y", "vx", "vy"}},
    {"linear", {"x1", "x2"}},
};

const char *dg_hji_axis_name(const char *game, int axis) {
    for (size_t i = 0; game && axis >= 0 && axis < DG_HJI_MAX_DIMS && i < sizeof AXES / sizeof AXES[0]; i++)
        if (strcmp(AXES[i].game, game) == 0) return AXES[i].axis[axis];
    return NULL;
}

/* ------------------------------------------------------------- common keys */

/* The keys every game reads; the game's default horizon and grid (game_keys fills them in). */
typedef struct span_keys {
    double t_end, lo[DG_HJI_MAX_DIMS], hi[DG_HJI_MAX_DIMS];
    int    n[DG_HJI_MAX_DIMS];
} span_keys;
static const dg_key SPAN_KEYS[] = {
    DG_K_F64("t_end", span_keys, t_end, 0, 0, INFINITY, 1, 0, "horizon (time-to-go)"),
    {.name = "grid.min", .type = DG_KEY_F64_ARRAY, .offset = offsetof(span_keys, lo), .lo = -INFINITY,
     .hi = INFINITY, .doc = "the grid's lower corner, one number per axis"},
    {.name = "grid.max", .type = DG_KEY_F64_ARRAY, .offset = offsetof(span_keys, hi), .lo = -INFINITY,
     .hi = INFINITY, .doc = "the grid's upper corner (above grid.min; a periodic axis wraps there)"},
    {.name = "grid.n", .type = DG_KEY_INT_ARRAY, .offset = offsetof(span_keys, n), .lo = 2, .hi = 100000,
     .doc = "nodes per axis"},
};
#define NSPAN ((int)(sizeof SPAN_KEYS / sizeof SPAN_KEYS[0]))

/* the game's index, then accuracy, mode and solver.* (into p->opts) */
typedef struct solver_keys {
    int    game, accuracy, mode, diss, real, weno_eps, bc, threads, split;
    double cfl, dt;
} solver_keys;
static const char *const ACCURACY[] = {"low", "medium", "high", "veryHigh", NULL};
static const char *const MODE[] = {"brs", "brt", "brt_target", NULL};
static const char *const DISS[] = {"global", "local", "locallocal", "globalmax", NULL};
static const char *const PREC[] = {"f64", "f32", NULL};
static const char *const EPS[] = {"grid", "const", NULL};
static const char *const BC[] = {"away", "linear", NULL};
static const char *const SHAPES[] = {"ball", "box", NULL};

/* one obstacle: obstacles[i].* */
typedef struct obstacle_keys {
    int    shape, axes[DG_HJI_MAX_DIMS], naxes;
    double center[DG_HJI_MAX_DIMS], radius, min[DG_HJI_MAX_DIMS], max[DG_HJI_MAX_DIMS];
} obstacle_keys;
enum { K_SHAPE, K_AXES, K_CENTER, K_RADIUS, K_MIN, K_MAX };
#define OBST "obstacles[i]"
#define OBST_ARRAY(nm, F, doc_)                                                                            \
    {.name = OBST "." nm, .type = DG_KEY_F64_ARRAY, .offset = offsetof(obstacle_keys, F), .lo = -INFINITY, \
     .hi = INFINITY, .min_n = 1, .max_n = DG_HJI_MAX_DIMS, .req = 1, .doc = doc_}

/* games of degree: payoff, cost.*, stationary, solver.{tol,method,max_sweeps} */
typedef struct degree_keys {
    int    payoff, stationary, method, max_sweeps;
    double running, discount, tol;
    double Q[DG_HJI_MAX_DIMS * DG_HJI_MAX_DIMS], QT[DG_HJI_MAX_DIMS * DG_HJI_MAX_DIMS];
} degree_keys;
static const char *const PAYOFF[] = {"kind", "time", "cost", NULL};
static const char *const METHOD[] = {"march", "sweep", NULL};
static const char *const SPLIT[] = {"auto", "axis0", NULL};
enum { D_PAYOFF, D_RUNNING, D_STATE, D_TERMINAL, D_DISCOUNT, D_STATIONARY, D_TOL, D_METHOD, D_SWEEPS, D_COUNT };
#define COST_MATRIX(nm, F, doc_)                                                                              \
    {.name = nm, .type = DG_KEY_F64_ARRAY, .offset = offsetof(degree_keys, F), .lo = -INFINITY,               \
     .hi = INFINITY, .min_n = 1, .max_n = DG_HJI_MAX_DIMS * DG_HJI_MAX_DIMS, .def_str = "0", .doc = doc_}

/* COMMON_KEYS: the game, accuracy .. solver.threads, then an obstacle's, then games of degree's */
enum { K_GAME = 0, K_SOLVER = 1, K_OBSTACLE = 11, K_DEGREE = 17 };
static const dg_key COMMON_KEYS[] = {
    {.name = "game", .type = DG_KEY_ENUM, .offset = offsetof(solver_keys, game), .values = GAME_NAMES,
     .what = "hji game", .req = 1, .doc = "the game (its constants: difgames keys hji GAME)"},
    DG_K_ENUM("accuracy", solver_keys, accuracy, DG_HJI_ACCURACY_VERY_HIGH, ACCURACY, NULL,
              "ToolboxLS preset: derivatives and time integration"),
    DG_K_ENUM("mode", solver_keys, mode, DG_HJI_MODE_BRT, MODE, NULL,
              "brs: the set at t_end; brt: the tube, H frozen at 0 (helperOC 'zero'); brt_target: the tube, V = min(V, target) each step"),
    DG_K_ENUM("solver.dissipation", solver_keys, diss, DG_HJI_DISS_GLOBAL, DISS, NULL,
              "Lax-Friedrichs alpha per node, p over the grid's range (GLF), narrowed to the node's (LLF, LLLF), or GLF's max over the grid"),
    DG_K_ENUM("solver.precision", solver_keys, real, DG_HJI_REAL_F64, PREC, NULL, "the value's precision"),
    DG_K_ENUM("solver.weno_eps", solver_keys, weno_eps, DG_HJI_WENO_EPS_GRID, EPS, NULL,
              "WENO5 epsilon: scaled by the grid's derivatives, or 1e-6"),
    DG_K_ENUM("solver.boundary", solver_keys, bc, DG_HJI_BC_AWAY, BC, NULL,
              "ghost cells of the plain axes: extrapolate away from zero, or linearly"),
    DG_K_F64("solver.cfl", solver_keys, cfl, 0.75, 0, INFINITY, 0, 0, "CFL number: dt = cfl / sum_i max alpha_i/dx_i"),
    DG_K_F64("solver.dt", solver_keys, dt, 0, 0, INFINITY, 1, 0, "a fixed time step instead of the CFL's (0: none)"),
    DG_K_INT("solver.threads", solver_keys, threads, 0, 0, 4096, "OpenMP threads (0: OpenMP's default)"),
    DG_K_ENUM("solver.split", solver_keys, split, DG_HJI_SPLIT_AUTO, SPLIT, NULL,
              "under mpirun: cut the grid along the axes that exchange the least halo (auto), or along axis 0 "
              "alone (axis0); the value is the same bits either way - docs/scale.md"),
    {.name = OBST ".shape", .type = DG_KEY_ENUM, .offset = offsetof(obstacle_keys, shape), .values = SHAPES,
     .req = 1, .doc = "obstacles: a list of shapes the game avoids (reach-avoid), each a ball or a box"},
    {.name = OBST ".axes", .type = DG_KEY_INT_ARRAY, .offset = offsetof(obstacle_keys, axes),
     .count_offset = offsetof(obstacle_keys, naxes), .lo = 0, .hi = DG_HJI_MAX_DIMS - 1, .min_n = 1,
     .max_n = DG_HJI_MAX_DIMS, .def_str = "every axis",
     .doc = "the distinct axes it spans (unbounded along the others)"},
    OBST_ARRAY("center", center, "a ball's center, one number per axis"),
    {.name = OBST ".radius", .type = DG_KEY_F64, .offset = offsetof(obstacle_keys, radius), .lo = 0,
     .hi = INFINITY, .lo_open = 1, .hi_open = 1, .req = 1, .doc = "a ball's radius"},
    OBST_ARRAY("min", min, "a box's lower corner, one number per axis"),
    OBST_ARRAY("max", max, "a box's upper corner, above min"),
    DG_K_ENUM("payoff", degree_keys, payoff, DG_HJI_PAYOFF_KIND, PAYOFF, NULL,
              "kind: the target's signed distance (reachability); time: the time to reach the target, capped at "
              "t_end; cost: running and terminal costs (cost.*) - docs/hji.md, games of degree"),
    DG_K_F64("cost.running", degree_keys, running, 0, -INFINITY, INFINITY, 0, 0,
             "payoff cost: a constant running cost L0"),
    COST_MATRIX("cost.state", Q, "payoff cost: the state cost x'Qx, Q (nx x nx, row-major)"),
    COST_MATRIX("cost.terminal", QT, "payoff cost: the terminal cost g(x) = x'Q_T x, Q_T (nx x nx, row-major)"),
    DG_K_F64("cost.discount", degree_keys, discount, 0, 0, INFINITY, 1, 0,
             "payoff time or cost: the discount rate rho (e^{-rho t})"),
    DG_K_BOOL("stationary", degree_keys, stationary, 0,
              "payoff time or cost: solve the infinite-horizon (steady) value; the march stops at t_end (cost) or 2 t_end (time)"),
    DG_K_F64("solver.tol", degree_keys, tol, 1e-6, 0, INFINITY, 0, 0,
             "stationary: converged when max |rho V + H| over the free nodes is below it"),
    DG_K_ENUM("solver.method", degree_keys, method, DG_HJI_METHOD_MARCH, METHOD, NULL,
              "stationary: time-marching (accuracy's scheme) or fast sweeping (first order, Gauss-Seidel)"),
    DG_K_INT("solver.max_sweeps", degree_keys, max_sweeps, 100000, 1, 100000000, "method sweep: the most sweeps"),
};
#define NCOMMON ((int)(sizeof COMMON_KEYS / sizeof COMMON_KEYS[0]))
_Static_assert(K_DEGREE == K_OBSTACLE + K_MAX + 1, "the game, solver keys, then an obstacle's");
_Static_assert(NCOMMON == K_DEGREE + D_COUNT, "then games of degree's");

/* COMMON_KEYS[k] for obstacles[i]: its name with i, bounds of nx axes and na items per point */
static dg_key obstacle_key(int k, int i, int nx, int na, char *name, size_t size) {
    dg_key key = COMMON_KEYS[K_OBSTACLE + k];
    snprintf(name, size, "obstacles[%d]%s", i, key.name + strlen(OBST));
    key.name = name;
    key.max_n = k == K_AXES ? nx : key.max_n;
    if (key.type == DG_KEY_F64_ARRAY) key.min_n = key.max_n = na;
    return key;
}

/* grid.{min,max,n} over the game's defaults. */
static dg_status read_grid(dg_cfg *c, dg_hji_problem *p, const game_def *gd, const dg_key *span, dg_err *e) {
    const int nx = p->game.nx;
    span_keys g;
    dg_status rc = dg_keys_read(c, span, NSPAN, &g, e);
    if (rc) return rc;
    p->t_end = g.t_end;
    for (int k = 0; k < nx; k++) {
        char path[32];
        if (!(g.hi[k] > g.lo[k])) {
            snprintf(path, sizeof path, "grid.max[%d]", k);
            return dg_cfg_error(c, dg_cfg_has(c, path) ? path : "grid", e,
                                "axis %d spans [%g, %g], expected min < max", k, g.lo[k], g.hi[k]);
        }
    }
    dg_err ge = {0};
    if (dg_hji_grid_init(&p->grid, nx, g.lo, g.hi, g.n, gd->periodic, &ge))
        return dg_cfg_error(c, "grid", e, "%s", ge.msg);
    for (int k = 0; k < nx; k++) {  /* what figures and value files call each axis */
        const char *nm = gd->axis[k] ? gd->axis[k] : dg_hji_axis_name(p->name, k);
        snprintf(p->grid.name[k], sizeof p->grid.name[k], "%s", nm ? nm : "");
    }
    return DG_OK;
}

/* accuracy, mode and solver.* into p->opts. */
static dg_status read_solver(dg_cfg *c, dg_hji_problem *p, dg_err *e) {
    dg_hji_opts *o = &p->opts;
    solver_keys k;
    dg_status rc = dg_keys_read(c, COMMON_KEYS + K_SOLVER, K_OBSTACLE - K_SOLVER, &k, e);
    if (rc) return rc;
    *o = dg_hji_opts_default();
    dg_hji_opts_accuracy(o, (dg_hji_accuracy)k.accuracy);
    o->mode = (dg_hji_mode)k.mode;
    o->diss = (dg_hji_diss)k.diss;
    o->real = (dg_hji_real)k.real;
    o->weno_eps = (dg_hji_weno_eps)k.weno_eps;
    o->cfl = k.cfl;
    o->dt = k.dt;
    o->threads = k.threads;
    o->split = (dg_hji_split)k.split;
    for (int i = 0; i < p->grid.ndim; i++)
        if (p->grid.bc[i] != DG_HJI_BC_PERIODIC) p->grid.bc[i] = (dg_hji_bc)k.bc;
    return DG_OK;
}

/* obstacles[i] into ob: its keys, and what a ball or a box needs */
static dg_status read_obstacle(dg_cfg *c, int i, int nx, obstacle_keys *ob, dg_err *e) {
    char path[96];
    dg_key k = obstacle_key(K_SHAPE, i, nx, 0, path, sizeof path);
    const char *shape = NULL;  /* the way to it first: "key 'obstacles[0]': expected a map" */
    dg_status rc = dg_cfg_get(c, path, DG_CFG_STR, &shape, e);
    if (rc) return rc;
    if (!shape) return dg_cfg_error(c, path, e, "missing: expected ball or box");
    if ((rc = dg_key_read(c, &k, ob, e))) return rc;
    for (int j = 0; j < nx; j++) ob->axes[j] = j;
    k = obstacle_key(K_AXES, i, nx, 0, path, sizeof path);
    rc = dg_key_read(c, &k, ob, e);
    if (!rc && !dg_cfg_has(c, path)) ob->naxes = nx;  /* default: every axis */
    unsigned mask = 0;
    for (int j = 0; !rc && j < ob->naxes; j++) {
        if (ob->axes[j] >= nx || (mask >> ob->axes[j] & 1u))
            return dg_cfg_error(c, path, e, "axes must be distinct, in 0..%d", nx - 1);
        mask |= 1u << ob->axes[j];
    }
    static const char *const MISSING[] = {"a ball needs a center (one number per axis)", "a ball needs a radius",
                                          "a box needs min and max (one number per axis)",
                                          "a box needs min and max (one number per axis)"};
    const int first = ob->shape == 0 ? K_CENTER : K_MIN;
    for (int j = first; !rc && j < first + 2; j++) {
        k = obstacle_key(j, i, nx, ob->naxes, path, sizeof path);
        if (!dg_cfg_has(c, path)) return dg_cfg_error(c, path, e, "missing: %s", MISSING[j - K_CENTER]);
        rc = dg_key_read(c, &k, ob, e);
    }
    for (int j = 0; !rc && ob->shape == 1 && j < ob->naxes; j++)
        if (!(ob->max[j] > ob->min[j]))
            return dg_cfg_error(c, path, e, "max[%d] = %g must exceed min[%d] = %g", j, ob->max[j], j, ob->min[j]);
    return rc;
}

/* obstacles: a list of {shape: ball|box, center, radius | min, max, axes} into p's build (their
 * union, negated, is the obstacle field: build_nodes). */
static dg_status read_obstacles(dg_cfg *c, dg_hji_problem *p, dg_err *e) {
    const int m = dg_cfg_len(c, "obstacles");
    if (m < 0 && dg_cfg_has(c, "obstacles"))
        return dg_cfg_error(c, "obstacles", e, "expected a list of shapes");
    if (m <= 0) {
        if (m == 0) dg_cfg_mark_used(c, "obstacles");
        return DG_OK;
    }
    problem_build *b = p->build;
    const int nx = p->grid.ndim;
    if (!(b->shape = calloc((size_t)m, sizeof *b->shape))) return dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory");
    for (int i = 0; i < m; i++) {
        obstacle_keys ob = {0};
        dg_status rc = read_obstacle(c, i, nx, &ob, e);
        if (rc) return rc;
        obstacle_shape *sh = &b->shape[b->nshape++];
        sh->ball = ob.shape == 0;
        sh->radius = ob.radius;
        for (int k = 0; k < ob.naxes; k++) {
            sh->mask |= 1u << ob.axes[k];
            sh->a[ob.axes[k]] = ob.shape == 0 ? ob.center[k] : ob.min[k];
            sh->b[ob.axes[k]] = ob.max[k];
        }
    }
    return DG_OK;
}

/* COMMON_KEYS[K_DEGREE + k], its matrices of nx x nx items */
static dg_key degree_key(int k, int nx) {
    dg_key key = COMMON_KEYS[K_DEGREE + k];
    if (k == D_STATE || k == D_TERMINAL) key.min_n = key.max_n = nx * nx;
    return key;
}

/* payoff and, for a game of degree, cost.*, stationary and solver.{tol,method,max_sweeps} into
 * p->payoff, p->game.payoff, p->terminal, p->stationary and p->opts (after read_solver). For a game
 * of kind the others stay unread (dg_cfg_check_unused names them). */
static dg_status read_degree(dg_cfg *c, dg_hji_problem *p, dg_err *e) {
    const int nx = p->game.nx;
    degree_keys d;
    memset(&d, 0, sizeof d);
    dg_key k = degree_key(D_PAYOFF, nx);
    dg_status rc = dg_key_read(c, &k, &d, e);
    if (rc) return rc;
    p->payoff = (dg_hji_payoff_type)d.payoff;
    if (p->payoff == DG_HJI_PAYOFF_KIND) return DG_OK;
    const int time = p->payoff == DG_HJI_PAYOFF_TIME;
    for (int i = D_RUNNING; i < D_COUNT; i++) {
        if (time && (i == D_RUNNING || i == D_STATE || i == D_TERMINAL)) continue;  /* time: L = 1, g = 0 */
        k = degree_key(i, nx);
        if ((rc = dg_key_read(c, &k, &d, e))) return rc;
    }
    if (dg_cfg_has(c, "mode") && p->opts.mode != DG_HJI_MODE_BRS)
        return dg_cfg_error(c, "mode", e, "a game of degree (payoff: %s) solves the plain equation: brs or no mode",
                            PAYOFF[p->payoff]);
    p->opts.mode = DG_HJI_MODE_BRS;
    dg_hji_payoff *pf = &p->game.payoff;
    pf->on = 1;
    pf->running = time ? 1 : d.running;
    pf->discount = d.discount;
    if (!time) {
        memcpy(pf->Q, d.Q, sizeof d.Q);
        memcpy(p->terminal, d.QT, sizeof d.QT);
    }
    p->stationary = d.stationary;
    p->opts.tol = d.stationary ? d.tol : 0;
    p->opts.method = (dg_hji_method)d.method;
    p->opts.max_sweeps = d.max_sweeps;
    p->opts.cap = time ? p->t_end : 0;
    if (d.method == DG_HJI_METHOD_SWEEP && !d.stationary)
        return dg_cfg_error(c, "solver.method", e, "sweep solves stationary problems (stationary: true)");
    return DG_OK;
}

/* The target at node j: from target (nodes [j0, j0 + n)) when it holds j, else evaluated there. */
static double target_at(const dg_hji_problem *p, const double *target, int64_t j0, int64_t n, int64_t j) {
    if (j >= j0 && j < j0 + n) return target[j - j0];
    double t;
    ((const problem_build *)p->build)->target(p, j, 1, &t);
    return t;
}

/* The target's normal speed at node j: c = -ext_{u,d} n.f(x, u, d), n the unit gradient of the
 * target's signed distance (central differences; target holds nodes [j0, j0 + n), the neighbours
 * outside it are evaluated), c = H(x, n) + 1 for the time to reach (L = 1). */
static double front_speed(const dg_hji_problem *p, const double *target, int64_t j0, int64_t nn, int64_t j) {
    const dg_hji_grid *g = &p->grid;
    double x[DG_HJI_MAX_DIMS], n[DG_HJI_MAX_DIMS], n2 = 0;
    dg_hji_grid_point(g, j, x);
    const double tj = target_at(p, target, j0, nn, j);
    for (int k = 0; k < g->ndim; k++) {
        const int64_t st = g->stride[k];
        const int i = (int)((j / st) % g->n[k]);
        const double lo = i > 0 ? target_at(p, target, j0, nn, j - st) : tj,
                     hi = i < g->n[k] - 1 ? target_at(p, target, j0, nn, j + st) : tj;
        n[k] = (hi - lo) / ((i > 0) + (i < g->n[k] - 1)) / g->dx[k];
        n2 += n[k] * n[k];
    }
    if (!(n2 > 0)) return 0;
    for (int k = 0; k < g->ndim; k++) n[k] /= sqrt(n2);
    return dg_hji_game_hamiltonian(&p->game, x, n) + p->game.payoff.running;
}

/* The largest front speed on the target over nodes [j0, j0 + n) (target holds them), at least 0. */
static double front_max(const dg_hji_problem *p, const double *target, int64_t j0, int64_t n) {
    double cmax = 0;
    for (int64_t i = 0; i < n; i++)
        if (target[i] <= 0) {
            const double v = front_speed(p, target, j0, n, j0 + i);
            if (v > cmax) cmax = v;
        }
    return cmax;
}

/* A game of degree: refuses obstacles at payoff: cost. */
static dg_status check_degree(dg_cfg *c, const dg_hji_problem *p, dg_err *e) {
    const problem_build *b = p->build;
    if (p->payoff == DG_HJI_PAYOFF_COST && (b->nshape > 0 || dg_hji_model_has_avoid(p->model)))
        return dg_cfg_error(c, "obstacles", e, "apply to games of kind and to payoff: time, not to payoff: cost");
    return DG_OK;
}

/* Nodes [j0, j0 + n) of p's node arrays into the n-node arrays given: the target; the obstacle
 * field (when the problem has one; NULL else); a game of degree's v0 (initial) and where it is over
 * (stop, payoff: time; NULL else). cmax: the largest front speed on the whole grid's target
 * (front_max; payoff: time). Every node's values are computed from its coordinates (and, for v0,
 * its neighbours' target) alone, so a block's are the whole grid's bits there.
 * cost: v0 = x'Q_T x everywhere, nothing held (no obstacles). time: the cap (t_end), held, in the
 * obstacles; held on the target at d / c <= 0, d its signed distance and c the front's normal speed
 * there (front_speed, at least a tenth of its largest on the target): the time to reach extended
 * linearly inside, so that the value outside sees the target's true rim and not the nodes'
 * staircase (dg_hji_problem_solve_at reports 0 there); 0 elsewhere. */
static void build_nodes(const dg_hji_problem *p, int64_t j0, int64_t n, double cmax, int have_target, double *target,
                        double *obstacle, double *scratch, double *initial, double *stop) {
    const problem_build *b = p->build;
    const dg_hji_grid *g = &p->grid;
    if (!have_target) b->target(p, j0, n, target);
    for (int i = 0; obstacle && i < b->nshape; i++) {  /* their union (min), negated: > 0 inside */
        const obstacle_shape *sh = &b->shape[i];
        double *to = i == 0 ? obstacle : scratch;
        if (sh->ball) hji_sdf_ball_nodes(g, sh->a, sh->radius, sh->mask, j0, n, to);
        else hji_sdf_box_nodes(g, sh->a, sh->b, sh->mask, j0, n, to);
        if (i > 0) dg_hji_sdf_union(n, scratch, obstacle);
    }
    if (obstacle && b->nshape > 0) dg_hji_sdf_complement(n, obstacle);
    if (obstacle && p->model) dg_hji_model_avoid(p->model, g, j0, n, b->nshape > 0, obstacle);
    if (p->payoff == DG_HJI_PAYOFF_KIND) return;
    for (int64_t i = 0; i < n; i++) {
        if (p->payoff == DG_HJI_PAYOFF_TIME) {
            const int obst = obstacle && obstacle[i] > 0;
            double v = 0;
            if (target[i] <= 0 && cmax > 0) {
                double cj = front_speed(p, target, j0, n, j0 + i);
                if (cj < 0.1 * cmax) cj = 0.1 * cmax;
                v = target[i] / cj;
            }
            initial[i] = obst ? p->t_end : v;
            stop[i] = obst || target[i] <= 0 ? -1 : 1;
        } else {
            double x[DG_HJI_MAX_DIMS];
            dg_hji_grid_point(g, j0 + i, x);
            initial[i] = dg_hji_problem_terminal_cost(p, x);
        }
    }
}

int hji_problem_has_obstacle(const dg_hji_problem *p) {
    const problem_build *b = p ? p->build : NULL;
    if (!p || p->obstacle) return p && p->obstacle;
    return b && !b->built && p->payoff == DG_HJI_PAYOFF_KIND && (b->nshape > 0 || dg_hji_model_has_avoid(p->model));
}

/* Builds p's node arrays over a box of the grid (lo, n: the whole grid, or a rank's box, row-major:
 * then the largest front speed is reduced over the ranks, collective), refusing what cannot fit.
 * The box is built run by run (hji_box_runs), each a range of the grid's nodes. */
static dg_status build_arrays(dg_hji_problem *p, const int *lo, const int *nb, int split, dg_err *e) {
    int64_t len, n = 1;
    const int64_t runs = hji_box_runs(&p->grid, lo, nb, &len);
    for (int k = 0; k < p->grid.ndim; k++) n *= nb[k];
    problem_build *b = p->build;
    const int obst = b->nshape > 0 || dg_hji_model_has_avoid(p->model);
    const int degree = p->payoff != DG_HJI_PAYOFF_KIND, time = p->payoff == DG_HJI_PAYOFF_TIME;
    dg_err me = {0};
    /* a block's target, the obstacles' field and a scratch array, initial and stop (the whole
     * grid's: checked by problem_load, naming the key) */
    const int fits = !split || dg_mem_check((double)n * sizeof(double) * ((obst ? 3 : 1) + 2 * degree), &me) == DG_OK;
    double *scratch = fits && obst && b->nshape > 1 ? malloc((size_t)n * sizeof *scratch) : NULL;
    if (fits) {
        p->target = malloc((size_t)n * sizeof *p->target);
        if (obst) p->obstacle = malloc((size_t)n * sizeof *p->obstacle);
        if (degree) p->initial = malloc((size_t)n * sizeof *p->initial);
        if (time) p->stop = malloc((size_t)n * sizeof *p->stop);
    }
    const int bad = !fits || !p->target || (obst && !p->obstacle) || (obst && b->nshape > 1 && !scratch) ||
                    (degree && !p->initial) || (time && !p->stop);
    /* every rank learns of a failure on any (the max below is collective) */
    const int any = split ? dg_dist_or(bad) : bad;
    if (any) {
        free(scratch);
        free(p->target);
        free(p->obstacle);
        free(p->initial);
        free(p->stop);
        p->target = p->obstacle = p->initial = p->stop = NULL;
        if (!fits) return dg_err_set(e, me.status, "hji: a block of %lld nodes %s; lower grid.n", (long long)n, me.msg);
        if (bad) return dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory for %lld nodes", (long long)n);
        return dg_err_set(e, DG_ERR_NOMEM, "hji: another rank could not hold its block's target");
    }
    if (time) {  /* the largest front speed, over the whole grid's target */
        b->cmax = 0;
        for (int64_t i = 0; i < runs; i++) {
            const int64_t j0 = hji_box_run_at(&p->grid, lo, nb, i);
            b->target(p, j0, len, p->target + i * len);
            const double c = front_max(p, p->target + i * len, j0, len);
            if (c > b->cmax) b->cmax = c;
        }
        if (split) dg_dist_max(&b->cmax, 1);   /* a max: exact, whatever the blocks */
    }
    for (int64_t i = 0; i < runs; i++) {
        const int64_t j0 = hji_box_run_at(&p->grid, lo, nb, i), at = i * len;
        build_nodes(p, j0, len, b->cmax, time, p->target + at, p->obstacle ? p->obstacle + at : NULL, scratch,
                    p->initial ? p->initial + at : NULL, p->stop ? p->stop + at : NULL);
    }
    free(scratch);
    b->built = 1;
    b->whole = n == p->grid.nodes;
    p->opts.stop = p->stop;
    if (degree) {   /* held at the cap in p->stop */
        free(p->obstacle);
        p->obstacle = NULL;
    }
    return DG_OK;
}

void hji_problem_node(const dg_hji_problem *p, int64_t j, double *v0, double *mark) {
    const problem_build *b = p->build;
    if (!b || b->whole) {
        *v0 = dg_hji_problem_v0(p)[j];
        *mark = p->obstacle ? p->obstacle[j] : p->stop ? p->stop[j] : 0;
        return;
    }
    const int obst = b->nshape > 0 || dg_hji_model_has_avoid(p->model);
    double t, o, scratch, init = 0, st = 0;
    build_nodes(p, j, 1, b->cmax, 0, &t, obst ? &o : NULL, &scratch, &init, &st);
    *v0 = p->payoff == DG_HJI_PAYOFF_KIND ? t : init;
    *mark = p->payoff == DG_HJI_PAYOFF_KIND ? (obst ? o : 0) : p->payoff == DG_HJI_PAYOFF_TIME ? st : 0;
}

dg_status hji_problem_build_block(dg_hji_problem *p, const int *lo, const int *n, dg_err *e) {
    problem_build *b = p ? p->build : NULL;
    if (!b || b->built) return dg_err_set(e, DG_ERR_ARG, "hji: build_block needs a problem loaded without its arrays");
    int64_t node0 = 0, nodes = 1;
    for (int k = 0; k < p->grid.ndim; k++) {
        if (lo[k] < 0 || n[k] < 1 || lo[k] + n[k] > p->grid.n[k])
            return dg_err_set(e, DG_ERR_ARG, "hji: axis %d's nodes [%d, %d) outside the grid's %d", k, lo[k],
                              lo[k] + n[k], p->grid.n[k]);
        node0 += (int64_t)lo[k] * p->grid.stride[k];
        nodes *= n[k];
    }
    dg_status rc = build_arrays(p, lo, n, nodes < p->grid.nodes, e);
    if (rc) return rc;
    p->nprint = 0;
    p->nprint = dg_hji_game_print(p, p->print);  /* the whole grid's samples, each evaluated alone */
    p->block0 = node0;
    p->block_nodes = nodes < p->grid.nodes ? nodes : 0;
    return DG_OK;
}

/* gd's horizon and grid keys (its defaults, nx items) then its constants; the count */
static int game_keys(const game_def *gd, dg_key *out, int max) {
    int n = 0;
    for (int i = 0; i < NSPAN; i++, n++) {
        if (n >= max) continue;
        out[n] = SPAN_KEYS[i];
        if (i == 0) out[n].def = gd->t_end;
        else {
            out[n].min_n = out[n].max_n = out[n].def_n = gd->nx;
            out[n].def_v = i == 1 ? gd->lo : i == 2 ? gd->hi : gd->n;
        }
    }
    for (int i = 0; i < gd->nkeys; i++, n++)
        if (n < max) out[n] = gd->keys[i];
    return n;
}

/* ---------------------------------------------------------------- problems */

const char *dg_hji_problem_name(int i) { return i >= 0 && i < NGAMES ? GAME_NAMES[i] : NULL; }

const char *dg_hji_problem_source(const dg_hji_problem *p) { return p && p->model ? "model" : "builtin"; }

static const game_def *find_game(const char *game) {
    for (int i = 0; game && i < NGAMES; i++)
        if (strcmp(GAME_NAMES[i], game) == 0) return &GAMES[i];
    return NULL;
}

const dg_hji_link *dg_hji_game_link(const char *game) {
    const game_def *gd = find_game(game);
    return gd ? gd->link : NULL;
}

double dg_hji_problem_param(const dg_hji_problem *p, const char *name) {
    for (int i = 0; p && name && i < p->nparam; i++)
        if (strcmp(p->param[i].name, name) == 0) return p->param[i].value;
    return NAN;
}

const dg_key *dg_hji_keys(int *n) {
    if (n) *n = NCOMMON;
    return COMMON_KEYS;
}

const char *dg_hji_game_summary(const char *game) {
    const game_def *gd = find_game(game);
    return gd ? gd->summary : NULL;
}

int dg_hji_game_keys(const char *game, dg_key *out, int max) {
    const game_def *gd = find_game(game);
    return gd ? game_keys(gd, out, max) : -1;
}

/* game: model (src/hji/model.c): the model file's state box, inputs and sets */
static void read_model(dg_hji_problem *p) { dg_hji_model_game(p->model, &p->game); }
static void target_model(TARGET_ARGS) { dg_hji_model_target(p->model, &p->grid, j0, n, out); }

/* dg_hji_problem_load, building the node arrays when whole (else dg_hji_problem_build_block does) */
static dg_hji_problem *problem_load(dg_cfg *cfg, int whole, dg_err *e) {
    if (!cfg) {
        dg_err_set(e, DG_ERR_ARG, "hji: no config");
        return NULL;
    }
    solver_keys sk;
    const char *gname = NULL;
    game_def gdm;
    const game_def *gd = &gdm;
    dg_hji_model_def md = {0};
    if (dg_cfg_has(cfg, "game") && dg_cfg_len(cfg, "game") < 0 && dg_cfg_get(cfg, "game", DG_CFG_STR, &gname, e) == DG_OK &&
        gname && strcmp(gname, "model") == 0) {
        if (dg_hji_model_load(cfg, &md, e)) {
            dg_hji_model_free(md.model);
            return NULL;
        }
        gdm = (game_def){.summary = "a model file's game", .nx = md.nx, .u_name = md.u_name, .d_name = md.d_name,
                         .t_end = md.t_end, .read = read_model, .target = target_model};
        for (int k = 0; k < md.nx; k++) {
            gdm.lo[k] = md.lo[k];
            gdm.hi[k] = md.hi[k];
            gdm.n[k] = 51;
            gdm.periodic[k] = md.periodic[k];
            gdm.axis[k] = md.axis[k];
        }
    } else {
        if (dg_key_read(cfg, &COMMON_KEYS[K_GAME], &sk, e)) return NULL;
        gd = &GAMES[sk.game];
    }
    dg_hji_problem *p = calloc(1, sizeof *p);
    if (!p) {
        dg_hji_model_free(md.model);
        dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory");
        return NULL;
    }
    p->model = md.model;
    problem_build *build = calloc(1, sizeof *build);
    if (!(p->build = build)) {
        dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory");
        goto fail;
    }
    build->target = gd->target;
    snprintf(p->name, sizeof p->name, "%s", md.model ? md.name : GAME_NAMES[sk.game]);
    p->game.nx = gd->nx;
    p->game.user = p->param;
    p->u_name = gd->u_name;
    p->d_name = gd->d_name;
    p->link = gd->link;
    p->nparam = gd->derived != NULL;
    for (int i = 0; i < gd->nkeys; i++) {  /* the game's constants, by name (config-declared arrays aside) */
        const size_t off = gd->keys[i].offset;
        if (gd->keys[i].type != DG_KEY_F64 || off < offsetof(dg_hji_problem, param) ||
            off >= offsetof(dg_hji_problem, param) + sizeof p->param)
            continue;
        p->param[(off - offsetof(dg_hji_problem, param)) / sizeof(dg_hji_param)].name = gd->keys[i].name;
        p->nparam++;
    }
    if (gd->derived) p->param[gd->derived_at].name = gd->derived;
    dg_key span[NSPAN];
    game_keys(gd, span, NSPAN);
    if (dg_keys_read(cfg, gd->keys, gd->nkeys, p, e)) goto fail;
    gd->read(p);
    if (read_grid(cfg, p, gd, span, e) || read_solver(cfg, p, e) || read_degree(cfg, p, e)) goto fail;
    if (p->model && dg_hji_model_payoff(p->model, cfg, p->payoff == DG_HJI_PAYOFF_COST, &p->game, e)) goto fail;
    if (gd->check && gd->check(p, cfg, e)) goto fail;
    if (p->opts.dt > 0 && !(p->t_end / p->opts.dt <= DG_HJI_MAX_STEPS)) {
        dg_cfg_error(cfg, "solver.dt", e, "t_end %g / dt %g is %.3g steps, more than %d", p->t_end, p->opts.dt,
                     p->t_end / p->opts.dt, DG_HJI_MAX_STEPS);
        goto fail;
    }
    if (read_obstacles(cfg, p, e) || check_degree(cfg, p, e)) goto fail;
    if (whole) {
        {   /* the target, and with obstacles their field and a scratch array: refused if they cannot fit */
            dg_err me = {0};
            const int obst = dg_cfg_len(cfg, "obstacles") > 0;
            const int degree = p->payoff != DG_HJI_PAYOFF_KIND ? 2 : 0;  /* initial and stop */
            if (dg_mem_check((double)p->grid.nodes * sizeof(double) * ((obst ? 3 : 1) + degree), &me) != DG_OK) {
                dg_cfg_error(cfg, "grid.n", e, "a grid of %lld nodes %s; lower grid.n", (long long)p->grid.nodes,
                             me.msg);
                goto fail;
            }
        }
        const int zero[DG_HJI_MAX_DIMS] = {0};
        if (build_arrays(p, zero, p->grid.n, 0, e)) goto fail;
        p->nprint = dg_hji_game_print(p, p->print);  /* now, while the arrays hold the whole grid */
    }
    return p;
fail:
    dg_hji_problem_free(p);
    return NULL;
}

dg_hji_problem *dg_hji_problem_load(dg_cfg *cfg, dg_err *e) { return problem_load(cfg, 1, e); }
dg_hji_problem *dg_hji_problem_load_split(dg_cfg *cfg, dg_err *e) { return problem_load(cfg, 0, e); }

void dg_hji_problem_free(dg_hji_problem *p) {
    if (!p) return;
    problem_build *b = p->build;
    if (b) free(b->shape);
    free(b);
    dg_hji_model_free(p->model);
    free(p->target);
    free(p->obstacle);
    free(p->initial);
    free(p->stop);
    free(p);
}

dg_status dg_hji_problem_solve(const dg_hji_problem *p, double *out, dg_hji_stats *stats, dg_err *e) {
    if (!p || !out) return dg_err_set(e, DG_ERR_ARG, "hji: problem_solve needs a problem and out");
    const double T = p->t_end;
    return dg_hji_problem_solve_at(p, 1, &T, out, stats, e);
}

const double *dg_hji_problem_v0(const dg_hji_problem *p) { return p->initial ? p->initial : p->target; }

double dg_hji_problem_terminal_cost(const dg_hji_problem *p, const double *x) {
    if (!p || p->payoff != DG_HJI_PAYOFF_COST) return 0;
    const int nx = p->grid.ndim;
    double g = 0;
    for (int a = 0; a < nx; a++)
        for (int b = 0; b < nx; b++) g += x[a] * p->terminal[a * nx + b] * x[b];
    return p->model ? g + dg_hji_model_terminal(p->model, x) : g;
}

int dg_hji_problem_episode(const dg_hji_problem *p, double *aux) {
    return p && p->model ? dg_hji_model_episode(p->model, aux) : 0;
}

dg_status dg_hji_problem_solve_at(const dg_hji_problem *p, int nt, const double *times, double *out,
                                  dg_hji_stats *stats, dg_err *e) {
    if (!p || !out) return dg_err_set(e, DG_ERR_ARG, "hji: problem_solve needs a problem and out");
    /* a stationary time to reach marches up to twice the cap: a time that cannot be forced reaches
     * the cap (and stops counting in the residual) only when the march does */
    const double twice = 2 * (nt > 0 ? times[nt - 1] : 0);
    const int longer = p->stationary && p->payoff == DG_HJI_PAYOFF_TIME && nt == 1;
    dg_status rc = dg_hji_solve(&p->grid, &p->game, &p->opts, dg_hji_problem_v0(p), p->obstacle, nt,
                                longer ? &twice : times, out, stats, e);
    if (p->payoff == DG_HJI_PAYOFF_TIME && (rc == DG_OK || rc == DG_ERR_INTERRUPTED))
        for (int64_t j = 0; j < (int64_t)nt * p->grid.nodes; j++) out[j] = out[j] > 0 ? out[j] : 0;  /* the target: 0 */
    return rc;
}
