/* Problems from configs: the built-in games (pursuit2d, air3d, chauffeur, chase4d) as dynamics,
 * bounds and targets, and the common keys (grid, horizon, accuracy, solver options, obstacles).
 * docs/hji.md describes each game and its keys. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/memory.h"
#include "hji/internal.h"

#define TWO_PI 6.283185307179586

/* ------------------------------------------------------------------- types */

/* A game's constant: read from the config key of its name (default def, at least lo, or above lo
 * when !incl), or derived from the others by the game's read (derived = 1). */
typedef struct param_def {
    const char *name;
    double      def, lo;
    int         incl, derived;
} param_def;

typedef struct game_def {
    const char *name;
    int         nx;
    const char *u_name, *d_name;
    const param_def *params;              /* the game's constants, in p->param's order; NULL-named end */
    /* derives constants, checks them together, sets p->game, the default grid and horizon */
    dg_status (*read)(dg_cfg *cfg, dg_hji_problem *p, double *lo, double *hi, int *n, int *periodic,
                      dg_err *e);
    /* fills p->target */
    void (*target)(dg_hji_problem *p);
    const dg_hji_link *link;              /* a learning game whose state maps onto this one's, or NULL */
} game_def;

/* ------------------------------------------------------------ config helpers */

/* A number at full double precision (the config's getters are float32): validated by the float
 * getter (type errors with file:line), then re-read from its text. */
static dg_status cfg_f64(dg_cfg *c, const char *path, double *out, double def, dg_err *e) {
    if (!dg_cfg_has(c, path)) {
        *out = def;
        return DG_OK;
    }
    float f;
    const char *s;
    dg_status rc = dg_cfg_get_f32(c, path, &f, 0, e);
    if (rc) return rc;
    rc = dg_cfg_get_str(c, path, &s, NULL, e);
    if (rc) return rc;
    char *end = NULL;
    const double v = s ? strtod(s, &end) : NAN;
    *out = (s && end != s && isfinite(v)) ? v : (double)f;
    return DG_OK;
}

/* A number > lo (or >= lo when incl) with a default. */
static dg_status cfg_f64_min(dg_cfg *c, const char *path, double *out, double def, double lo, int incl,
                             dg_err *e) {
    dg_status rc = cfg_f64(c, path, out, def, e);
    if (rc) return rc;
    if (incl ? !(*out >= lo) : !(*out > lo))
        return dg_cfg_error(c, path, e, "%g is out of range, expected %s %g", *out, incl ? ">=" : ">", lo);
    return DG_OK;
}

/* A list of exactly n numbers at double precision; missing: out untouched. */
static dg_status cfg_f64_list(dg_cfg *c, const char *path, double *out, int n, dg_err *e) {
    if (!dg_cfg_has(c, path)) return DG_OK;
    float tmp[DG_HJI_MAX_DIMS];
    dg_status rc = dg_cfg_get_f32_array(c, path, tmp, n, n, NULL, e);
    if (rc) return rc;
    for (int i = 0; i < n; i++) {
        char p[256];
        snprintf(p, sizeof p, "%s[%d]", path, i);
        rc = cfg_f64(c, p, &out[i], tmp[i], e);
        if (rc) return rc;
    }
    return DG_OK;
}

/* One of names[] (NULL-terminated) -> its index; missing: def. */
static dg_status cfg_choice(dg_cfg *c, const char *path, const char *const *names, int *out, int def,
                            dg_err *e) {
    const char *s;
    dg_status rc = dg_cfg_get_str(c, path, &s, NULL, e);
    if (rc) return rc;
    if (!s) {
        *out = def;
        return DG_OK;
    }
    char list[256] = "";
    for (int i = 0; names[i]; i++) {
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return DG_OK;
        }
        if (i) strncat(list, ", ", sizeof list - strlen(list) - 1);
        strncat(list, names[i], sizeof list - strlen(list) - 1);
    }
    return dg_cfg_error(c, path, e, "'%s' is not one of: %s", s, list);
}

/* ------------------------------------------------------------------- games */

/* pursuit2d: x = x_E - x_P, x' = v_e b - v_p a, |a|, |b| <= 1. u = a (pursuer, min), d = b. */
enum { PU_VP, PU_VE, PU_R };
static const param_def PURSUIT_PARAMS[] = {
    {"speed_pursuer", 1.0, 0, 1, 0}, {"speed_evader", 0.5, 0, 1, 0}, {"capture_radius", 0.25, 0, 0, 0},
    {NULL, 0, 0, 0, 0},
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

static dg_status read_pursuit(dg_cfg *c, dg_hji_problem *p, double *lo, double *hi, int *n, int *per,
                              dg_err *e) {
    (void)c;
    (void)e;
    p->game.dyn = dyn_pursuit;
    p->game.u = (dg_hji_input){.dim = 2, .set = DG_HJI_SET_BALL, .role = DG_HJI_ROLE_MIN, .radius = 1};
    p->game.d = (dg_hji_input){.dim = 2, .set = DG_HJI_SET_BALL, .role = DG_HJI_ROLE_MAX, .radius = 1};
    p->t_end = 1.0;
    for (int k = 0; k < 2; k++) {
        lo[k] = -2;
        hi[k] = 2;
        n[k] = 81;
        per[k] = 0;
    }
    return DG_OK;
}

static void target_ball0(dg_hji_problem *p, unsigned axes, double r) {
    const double c[DG_HJI_MAX_DIMS] = {0};
    dg_hji_sdf_ball(&p->grid, c, r, axes, p->target);
}

static void target_pursuit(dg_hji_problem *p) { target_ball0(p, 0, p->param[PU_R].value); }

/* air3d (helperOC Air3D, the evader's frame): x' = -v_a + v_b cos psi + a y, y' = v_b sin psi - a x,
 * psi' = b - a; a the evader's turn (u, max), b the pursuer's (d, min). */
enum { AIR_VA, AIR_VB, AIR_A, AIR_B, AIR_R };
static const param_def AIR3D_PARAMS[] = {
    {"speed_evader", 5, 0, 1, 0}, {"speed_pursuer", 5, 0, 1, 0}, {"turn_evader", 1, 0, 1, 0},
    {"turn_pursuer", 1, 0, 1, 0}, {"capture_radius", 5, 0, 0, 0}, {NULL, 0, 0, 0, 0},
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

static dg_status read_air3d(dg_cfg *c, dg_hji_problem *p, double *lo, double *hi, int *n, int *per,
                            dg_err *e) {
    (void)c;
    (void)e;
    const double a = p->param[AIR_A].value, b = p->param[AIR_B].value;
    p->game.dyn = dyn_air3d;
    p->game.u = (dg_hji_input){.dim = 1, .set = DG_HJI_SET_BOX, .role = DG_HJI_ROLE_MAX, .lo = {-a}, .hi = {a}};
    p->game.d = (dg_hji_input){.dim = 1, .set = DG_HJI_SET_BOX, .role = DG_HJI_ROLE_MIN, .lo = {-b}, .hi = {b}};
    p->t_end = 2.8;
    const double L[3] = {-6, -10, 0}, H[3] = {20, 10, TWO_PI};
    const int N[3] = {51, 40, 50};
    for (int k = 0; k < 3; k++) {
        lo[k] = L[k];
        hi[k] = H[k];
        n[k] = N[k];
        per[k] = k == 2;
    }
    return DG_OK;
}

static void target_air3d(dg_hji_problem *p) { target_ball0(p, 3u, p->param[AIR_R].value); }

/* chauffeur (Isaacs 1965, Basar-Olsder 8.5), the pursuer's frame, pursuer moving along +y:
 * x' = -w u y + v_e b_x, y' = w u x - v_p + v_e b_y; u in [-1, 1] the pursuer's turn (min),
 * |b| <= 1 the evader's heading (max). */
enum { CH_VP, CH_W, CH_VE, CH_R };
static const param_def CHAUFFEUR_PARAMS[] = {
    {"speed_pursuer", 1, 0, 1, 0}, {"turn_rate", 1, 0, 1, 0}, {"speed_evader", 0.5, 0, 1, 0},
    {"capture_radius", 0.3, 0, 0, 0}, {NULL, 0, 0, 0, 0},
};

static void dyn_chauffeur(void *user, const double *x, double *f, double *G, double *D) {
    const dg_hji_param *q = user;
    f[1] = -q[CH_VP].value;
    G[0] = -q[CH_W].value * x[1];
    G[1] = q[CH_W].value * x[0];
    D[0] = q[CH_VE].value;
    D[3] = q[CH_VE].value;
}

static dg_status read_chauffeur(dg_cfg *c, dg_hji_problem *p, double *lo, double *hi, int *n, int *per,
                                dg_err *e) {
    (void)c;
    (void)e;
    p->game.dyn = dyn_chauffeur;
    p->game.u = (dg_hji_input){.dim = 1, .set = DG_HJI_SET_BOX, .role = DG_HJI_ROLE_MIN, .lo = {-1}, .hi = {1}};
    p->game.d = (dg_hji_input){.dim = 2, .set = DG_HJI_SET_BALL, .role = DG_HJI_ROLE_MAX, .radius = 1};
    p->t_end = 4;
    for (int k = 0; k < 2; k++) {
        lo[k] = -3;
        hi[k] = 3;
        n[k] = 121;
        per[k] = 0;
    }
    return DG_OK;
}

static void target_chauffeur(dg_hji_problem *p) { target_ball0(p, 0, p->param[CH_R].value); }

/* chase4d: the chase game's bodies without walls, relative (evader minus pursuer) position and
 * velocity: x' = v, v' = -c v - A_p a + A_e b, c = -ln(damping)/dt. */
enum { C4_AP, C4_AE, C4_DRAG, C4_R, C4_DAMP, C4_DT };
static const param_def CHASE4D_PARAMS[] = {
    {"accel_pursuer", 5, 0, 1, 0}, {"accel_evader", 3.5, 0, 1, 0}, {"drag", 0, 0, 1, 1},
    {"capture_radius", 0.1, 0, 0, 0}, {"damping", 0.98, 0, 0, 0}, {"dt", 0.05, 0, 0, 0}, {NULL, 0, 0, 0, 0},
};

/* chase (env.evader: policy, no walls): state (pursuer x, y, vx, vy, evader x, y, vx, vy), joint
 * action (pursuer ax, ay, evader ax, ay); chase4d's x = evader - pursuer, u the pursuer's, d the
 * evader's; captured within capture_radius of the relative position. */
static const dg_hji_link CHASE4D_LINK = {
    .env_game = "chase", .need = "chase with a learned evader (env.evader: policy)", .nplayers = 2, .state_dim = 8,
    .plus = {4, 5, 6, 7}, .minus = {0, 1, 2, 3}, .u_act = {0, 1}, .d_act = {2, 3}, .capture_axes = 3u,
    .capture_param = "capture_radius",
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

static dg_status read_chase4d(dg_cfg *c, dg_hji_problem *p, double *lo, double *hi, int *n, int *per,
                              dg_err *e) {
    dg_hji_param *q = p->param;
    if (q[C4_DAMP].value > 1)
        return dg_cfg_error(c, "damping", e, "%g is out of range, expected (0, 1]", q[C4_DAMP].value);
    q[C4_DRAG].value = -log(q[C4_DAMP].value) / q[C4_DT].value;  /* c = -ln(damping) / dt */
    p->game.dyn = dyn_chase4d;
    p->game.u = (dg_hji_input){.dim = 2, .set = DG_HJI_SET_BALL, .role = DG_HJI_ROLE_MIN, .radius = 1};
    p->game.d = (dg_hji_input){.dim = 2, .set = DG_HJI_SET_BALL, .role = DG_HJI_ROLE_MAX, .radius = 1};
    p->t_end = 0.5;
    for (int k = 0; k < 4; k++) {
        lo[k] = k < 2 ? -1 : -2;
        hi[k] = k < 2 ? 1 : 2;
        n[k] = 31;
        per[k] = 0;
    }
    return DG_OK;
}

static void target_chase4d(dg_hji_problem *p) { target_ball0(p, 3u, p->param[C4_R].value); }

static const game_def GAMES[] = {
    {"pursuit2d", 2, "pursuer", "evader", PURSUIT_PARAMS, read_pursuit, target_pursuit, NULL},
    {"air3d", 3, "evader", "pursuer", AIR3D_PARAMS, read_air3d, target_air3d, NULL},
    {"chauffeur", 2, "pursuer", "evader", CHAUFFEUR_PARAMS, read_chauffeur, target_chauffeur, NULL},
    {"chase4d", 4, "pursuer", "evader", CHASE4D_PARAMS, read_chase4d, target_chase4d, &CHASE4D_LINK},
};
#define NGAMES ((int)(sizeof GAMES / sizeof GAMES[0]))

/* Each game's state variables in axis order (the axes of its figures: dg_hji_axis_name). */
static const struct { const char *game, *axis[DG_HJI_MAX_DIMS]; } AXES[] = {
    {"pursuit2d", {"x", "y"}},
    {"air3d", {"x", "y", "psi"}},
    {"chauffeur", {"x", "y"}},
    {"chase4d", {"x", "y", "vx", "vy"}},
};

const char *dg_hji_axis_name(const char *game, int axis) {
    for (size_t i = 0; game && axis >= 0 && axis < DG_HJI_MAX_DIMS && i < sizeof AXES / sizeof AXES[0]; i++)
        if (strcmp(AXES[i].game, game) == 0) return AXES[i].axis[axis];
    return NULL;
}

/* ---------------------------------------------------------- common sections */

/* solver.* keys and accuracy/mode into p->opts. */
static dg_status read_solver(dg_cfg *c, dg_hji_problem *p, dg_err *e) {
    static const char *const ACC[] = {"low", "medium", "high", "veryHigh", NULL};
    static const char *const MODE[] = {"brs", "brt", "brt_target", NULL};
    static const char *const DISS[] = {"global", "local", "locallocal", "globalmax", NULL};
    static const char *const PREC[] = {"f64", "f32", NULL};
    static const char *const EPS[] = {"grid", "const", NULL};
    static const char *const BC[] = {"away", "linear", NULL};
    dg_hji_opts *o = &p->opts;
    *o = dg_hji_opts_default();
    int acc, mode, diss, prec, eps, bc;
    dg_status rc;
    if ((rc = cfg_choice(c, "accuracy", ACC, &acc, DG_HJI_ACCURACY_VERY_HIGH, e)) ||
        (rc = cfg_choice(c, "mode", MODE, &mode, DG_HJI_MODE_BRT, e)) ||
        (rc = cfg_choice(c, "solver.dissipation", DISS, &diss, DG_HJI_DISS_GLOBAL, e)) ||
        (rc = cfg_choice(c, "solver.precision", PREC, &prec, DG_HJI_REAL_F64, e)) ||
        (rc = cfg_choice(c, "solver.weno_eps", EPS, &eps, DG_HJI_WENO_EPS_GRID, e)) ||
        (rc = cfg_choice(c, "solver.boundary", BC, &bc, DG_HJI_BC_AWAY, e)) ||
        (rc = cfg_f64_min(c, "solver.cfl", &o->cfl, 0.75, 0, 0, e)) ||
        (rc = cfg_f64_min(c, "solver.dt", &o->dt, 0, 0, 1, e)) ||
        (rc = dg_cfg_get_int_range(c, "solver.threads", &o->threads, 0, 0, 4096, e)))
        return rc;
    dg_hji_opts_accuracy(o, (dg_hji_accuracy)acc);
    o->mode = (dg_hji_mode)mode;
    o->diss = (dg_hji_diss)diss;
    o->real = (dg_hji_real)prec;
    o->weno_eps = (dg_hji_weno_eps)eps;
    for (int k = 0; k < p->grid.ndim; k++)
        if (p->grid.bc[k] != DG_HJI_BC_PERIODIC) p->grid.bc[k] = (dg_hji_bc)bc;
    return DG_OK;
}

/* grid.{min,max,n} over the game's defaults. */
static dg_status read_grid(dg_cfg *c, dg_hji_problem *p, double *lo, double *hi, int *n, const int *per,
                           dg_err *e) {
    const int nx = p->game.nx;
    dg_status rc;
    if ((rc = cfg_f64_list(c, "grid.min", lo, nx, e)) || (rc = cfg_f64_list(c, "grid.max", hi, nx, e)) ||
        (rc = dg_cfg_get_int_array(c, "grid.n", n, nx, nx, NULL, e)))
        return rc;
    for (int k = 0; k < nx; k++) {
        char path[32];
        if (n[k] < 2 || n[k] > 100000) {
            snprintf(path, sizeof path, "grid.n[%d]", k);
            return dg_cfg_error(c, path, e, "%d nodes, expected 2 to 100000", n[k]);
        }
        if (!(hi[k] > lo[k])) {
            snprintf(path, sizeof path, "grid.max[%d]", k);
            return dg_cfg_error(c, dg_cfg_has(c, path) ? path : "grid", e,
                                "axis %d spans [%g, %g], expected min < max", k, lo[k], hi[k]);
        }
    }
    dg_err ge = {0};
    if (dg_hji_grid_init(&p->grid, nx, lo, hi, n, per, &ge))
        return dg_cfg_error(c, "grid", e, "%s", ge.msg);
    return DG_OK;
}

/* obstacles: a list of {shape: ball|box, center, radius | min, max, axes}; their union, negated,
 * into p->obstacle (> 0 inside). */
static dg_status read_obstacles(dg_cfg *c, dg_hji_problem *p, dg_err *e) {
    const int m = dg_cfg_len(c, "obstacles");
    if (m < 0 && dg_cfg_has(c, "obstacles"))
        return dg_cfg_error(c, "obstacles", e, "expected a list of shapes");
    if (m <= 0) {
        if (m == 0) dg_cfg_mark_used(c, "obstacles");
        return DG_OK;
    }
    static const char *const SHAPES[] = {"ball", "box", NULL};
    const int nx = p->grid.ndim;
    const int64_t N = p->grid.nodes;
    double *tmp = malloc((size_t)N * sizeof *tmp);
    p->obstacle = malloc((size_t)N * sizeof *p->obstacle);
    if (!tmp || !p->obstacle) {
        free(tmp);
        return dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory for obstacles");
    }
    dg_status rc = DG_OK;
    for (int i = 0; i < m && !rc; i++) {
        char base[64], path[96];
        snprintf(base, sizeof base, "obstacles[%d]", i);
        int shape, axes[DG_HJI_MAX_DIMS], na = 0;
        snprintf(path, sizeof path, "%s.shape", base);
        if ((rc = cfg_choice(c, path, SHAPES, &shape, -1, e))) break;
        if (shape < 0) {
            rc = dg_cfg_error(c, path, e, "missing: expected ball or box");
            break;
        }
        snprintf(path, sizeof path, "%s.axes", base);
        for (int k = 0; k < nx; k++) axes[k] = k;
        na = nx;
        if ((rc = dg_cfg_get_int_array(c, path, axes, 1, nx, &na, e))) break;
        unsigned mask = 0;
        for (int k = 0; k < na; k++) {
            if (axes[k] < 0 || axes[k] >= nx || (mask >> axes[k] & 1u)) {
                rc = dg_cfg_error(c, path, e, "axes must be distinct, in 0..%d", nx - 1);
                break;
            }
            mask |= 1u << axes[k];
        }
        if (rc) break;
        double a[DG_HJI_MAX_DIMS] = {0}, b[DG_HJI_MAX_DIMS] = {0}, full_a[DG_HJI_MAX_DIMS] = {0},
               full_b[DG_HJI_MAX_DIMS] = {0};
        if (shape == 0) {
            double r;
            snprintf(path, sizeof path, "%s.center", base);
            if (!dg_cfg_has(c, path)) {
                rc = dg_cfg_error(c, path, e, "missing: a ball needs a center (one number per axis)");
                break;
            }
            if ((rc = cfg_f64_list(c, path, a, na, e))) break;
            snprintf(path, sizeof path, "%s.radius", base);
            if (!dg_cfg_has(c, path)) {
                rc = dg_cfg_error(c, path, e, "missing: a ball needs a radius");
                break;
            }
            if ((rc = cfg_f64_min(c, path, &r, 0, 0, 0, e))) break;
            for (int k = 0; k < na; k++) full_a[axes[k]] = a[k];
            dg_hji_sdf_ball(&p->grid, full_a, r, mask, tmp);
        } else {
            snprintf(path, sizeof path, "%s.min", base);
            if (!dg_cfg_has(c, path)) {
                rc = dg_cfg_error(c, path, e, "missing: a box needs min and max (one number per axis)");
                break;
            }
            if ((rc = cfg_f64_list(c, path, a, na, e))) break;
            snprintf(path, sizeof path, "%s.max", base);
            if (!dg_cfg_has(c, path)) {
                rc = dg_cfg_error(c, path, e, "missing: a box needs min and max (one number per axis)");
                break;
            }
            if ((rc = cfg_f64_list(c, path, b, na, e))) break;
            for (int k = 0; k < na; k++) {
                if (!(b[k] > a[k])) {
                    rc = dg_cfg_error(c, path, e, "max[%d] = %g must exceed min[%d] = %g", k, b[k], k, a[k]);
                    break;
                }
                full_a[axes[k]] = a[k];
                full_b[axes[k]] = b[k];
            }
            if (rc) break;
            dg_hji_sdf_box(&p->grid, full_a, full_b, mask, tmp);
        }
        if (i == 0) memcpy(p->obstacle, tmp, (size_t)N * sizeof *tmp);
        else dg_hji_sdf_union(N, tmp, p->obstacle);
    }
    free(tmp);
    if (!rc) dg_hji_sdf_complement(N, p->obstacle);
    return rc;
}

/* ---------------------------------------------------------------- problems */

const char *dg_hji_problem_name(int i) { return i >= 0 && i < NGAMES ? GAMES[i].name : NULL; }

const dg_hji_link *dg_hji_game_link(const char *game) {
    for (int i = 0; game && i < NGAMES; i++)
        if (strcmp(GAMES[i].name, game) == 0) return GAMES[i].link;
    return NULL;
}

double dg_hji_problem_param(const dg_hji_problem *p, const char *name) {
    for (int i = 0; p && name && i < p->nparam; i++)
        if (strcmp(p->param[i].name, name) == 0) return p->param[i].value;
    return NAN;
}

dg_hji_problem *dg_hji_problem_load(dg_cfg *cfg, dg_err *e) {
    const char *name;
    if (!cfg) {
        dg_err_set(e, DG_ERR_ARG, "hji: no config");
        return NULL;
    }
    if (dg_cfg_get_str_req(cfg, "game", &name, e)) return NULL;
    const game_def *gd = NULL;
    for (int i = 0; i < NGAMES; i++)
        if (strcmp(GAMES[i].name, name) == 0) gd = &GAMES[i];
    if (!gd) {
        char list[128] = "";
        for (int i = 0; i < NGAMES; i++) {
            if (i) strncat(list, ", ", sizeof list - strlen(list) - 1);
            strncat(list, GAMES[i].name, sizeof list - strlen(list) - 1);
        }
        dg_cfg_error(cfg, "game", e, "unknown hji game '%s' (known: %s)", name, list);
        return NULL;
    }
    dg_hji_problem *p = calloc(1, sizeof *p);
    if (!p) {
        dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory");
        return NULL;
    }
    snprintf(p->name, sizeof p->name, "%s", gd->name);
    p->game.nx = gd->nx;
    p->game.user = p->param;
    p->u_name = gd->u_name;
    p->d_name = gd->d_name;
    double lo[DG_HJI_MAX_DIMS], hi[DG_HJI_MAX_DIMS];
    int n[DG_HJI_MAX_DIMS], per[DG_HJI_MAX_DIMS];
    for (const param_def *d = gd->params; d->name; d++) {  /* the game's constants, by name */
        dg_hji_param *q = &p->param[p->nparam++];
        q->name = d->name;
        q->value = d->def;
        if (!d->derived && cfg_f64_min(cfg, d->name, &q->value, d->def, d->lo, d->incl, e)) goto fail;
    }
    p->link = gd->link;
    if (gd->read(cfg, p, lo, hi, n, per, e) || cfg_f64_min(cfg, "t_end", &p->t_end, p->t_end, 0, 1, e) ||
        read_grid(cfg, p, lo, hi, n, per, e) || read_solver(cfg, p, e))
        goto fail;
    if (p->opts.dt > 0 && !(p->t_end / p->opts.dt <= DG_HJI_MAX_STEPS)) {
        dg_cfg_error(cfg, "solver.dt", e, "t_end %g / dt %g is %.3g steps, more than %d", p->t_end, p->opts.dt,
                     p->t_end / p->opts.dt, DG_HJI_MAX_STEPS);
        goto fail;
    }
    {   /* the target, and with obstacles their field and a scratch array: refused if they cannot fit */
        dg_err me = {0};
        const int obst = dg_cfg_len(cfg, "obstacles") > 0;
        if (dg_mem_check((double)p->grid.nodes * sizeof(double) * (obst ? 3 : 1), &me) != DG_OK) {
            dg_cfg_error(cfg, "grid.n", e, "a grid of %lld nodes %s; lower grid.n", (long long)p->grid.nodes, me.msg);
            goto fail;
        }
    }
    p->target = malloc((size_t)p->grid.nodes * sizeof *p->target);
    if (!p->target) {
        dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory for %lld nodes", (long long)p->grid.nodes);
        goto fail;
    }
    gd->target(p);
    if (read_obstacles(cfg, p, e)) goto fail;
    return p;
fail:
    dg_hji_problem_free(p);
    return NULL;
}

void dg_hji_problem_free(dg_hji_problem *p) {
    if (!p) return;
    free(p->target);
    free(p->obstacle);
    free(p);
}

dg_status dg_hji_problem_solve(const dg_hji_problem *p, double *out, dg_hji_stats *stats, dg_err *e) {
    if (!p || !out) return dg_err_set(e, DG_ERR_ARG, "hji: problem_solve needs a problem and out");
    const double T = p->t_end;
    return dg_hji_solve(&p->grid, &p->game, &p->opts, p->target, p->obstacle, 1, &T, out, stats, e);
}
