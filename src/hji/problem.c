/* Problems from configs: the common keys (grid, horizon, accuracy, solver options, obstacles, games
 * of degree) read into a problem of a built-in game (problem_games.c) or a model file's (model_problem.c);
 * problem_nodes.c builds its node arrays. Every key is declared once, in a table (difgames/keys.h):
 * `difgames keys hji [GAME]` lists them (docs/config.md); docs/hji.md describes each game. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/keys.h"
#include "difgames/memory.h"
#include "hji/internal.h"
#include "hji/model_problem.h"
#include "hji/problem_internal.h"

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
    int    game, accuracy, mode, diss, real, weno_eps, bc, threads, split, ntvel;
    double cfl, dt, tvel[DG_HJI_MAX_DIMS];
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
    double center[DG_HJI_MAX_DIMS], radius, min[DG_HJI_MAX_DIMS], max[DG_HJI_MAX_DIMS], vel[DG_HJI_MAX_DIMS];
} obstacle_keys;
enum { K_SHAPE, K_AXES, K_CENTER, K_RADIUS, K_MIN, K_MAX, K_VELOCITY };
#define OBST "obstacles[i]"
#define OBST_ARRAY(nm, F, doc_)                                                                            \
    {.name = OBST "." nm, .type = DG_KEY_F64_ARRAY, .offset = offsetof(obstacle_keys, F), .lo = -INFINITY, \
     .hi = INFINITY, .min_n = 1, .max_n = DG_HJI_MAX_DIMS, .req = 1, .doc = doc_}

/* games of degree: payoff, cost.*, stationary, solver.{tol,method,max_sweeps} */
typedef struct degree_keys {
    int    payoff, stationary, method, max_sweeps, controls;
    double running, discount, tol;
    double Q[DG_HJI_MAX_DIMS * DG_HJI_MAX_DIMS], QT[DG_HJI_MAX_DIMS * DG_HJI_MAX_DIMS];
} degree_keys;
static const char *const PAYOFF[] = {"kind", "time", "cost", NULL};
static const char *const METHOD[] = {"march", "sweep", NULL};
static const char *const SPLIT[] = {"auto", "axis0", NULL};
enum { D_PAYOFF, D_RUNNING, D_STATE, D_TERMINAL, D_DISCOUNT, D_STATIONARY, D_TOL, D_METHOD, D_SWEEPS, D_CONTROLS,
       D_COUNT };
#define COST_MATRIX(nm, F, doc_)                                                                              \
    {.name = nm, .type = DG_KEY_F64_ARRAY, .offset = offsetof(degree_keys, F), .lo = -INFINITY,               \
     .hi = INFINITY, .min_n = 1, .max_n = DG_HJI_MAX_DIMS * DG_HJI_MAX_DIMS, .def_str = "0", .doc = doc_}

/* COMMON_KEYS: the game, accuracy .. solver.threads, then an obstacle's, then games of degree's */
enum { K_GAME = 0, K_SOLVER = 1, K_OBSTACLE = 12, K_DEGREE = 19 };
static const dg_key COMMON_KEYS[] = {
    {.name = "game", .type = DG_KEY_ENUM, .offset = offsetof(solver_keys, game), .values = hji_game_names,
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
    {.name = "target_velocity", .type = DG_KEY_F64_ARRAY, .offset = offsetof(solver_keys, tvel),
     .count_offset = offsetof(solver_keys, ntvel), .lo = -INFINITY, .hi = INFINITY, .min_n = 1,
     .max_n = DG_HJI_MAX_DIMS, .def_str = "none (the target stays)",
     .doc = "a built-in game's target moves at this velocity, one number per axis: at the game's time t (0 at "
            "the start of the horizon, t_end at its end) it is l(x - velocity t); mode brs or brt_target - "
            "docs/hji.md, time-varying sets"},
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
    {.name = OBST ".velocity", .type = DG_KEY_F64_ARRAY, .offset = offsetof(obstacle_keys, vel), .lo = -INFINITY,
     .hi = INFINITY, .min_n = 1, .max_n = DG_HJI_MAX_DIMS, .def_str = "0 (it stays)",
     .doc = "a moving obstacle: its velocity, one number per axis; the center or corners given are at the "
            "game's time 0 (the start of the horizon) and move by velocity t - docs/hji.md, time-varying sets"},
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
    DG_K_INT("solver.controls", degree_keys, controls, 101, 2, 20000,
             "a game with noise (merton1d, lqg1d): candidate inputs per component, evenly over its box; the best is "
             "refined by a parabola through it and its neighbours - docs/hji.md, diffusion"),
};
#define NCOMMON ((int)(sizeof COMMON_KEYS / sizeof COMMON_KEYS[0]))
_Static_assert(K_DEGREE == K_OBSTACLE + K_VELOCITY + 1, "the game, solver keys, then an obstacle's");
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
    if (k.ntvel) {   /* a moving target */
        problem_build *b = p->build;
        if (p->model)
            return dg_cfg_error(c, "target_velocity", e, "a model file's target moves through its expression of t "
                                "(model.target)");
        if (k.ntvel != p->grid.ndim)
            return dg_cfg_error(c, "target_velocity", e, "expected %d numbers (one per axis), got %d", p->grid.ndim,
                                k.ntvel);
        memcpy(b->tvel, k.tvel, sizeof b->tvel);
        b->tmoving = 1;
    }
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
    k = obstacle_key(K_VELOCITY, i, nx, ob->naxes, path, sizeof path);
    if (!rc && dg_cfg_has(c, path)) rc = dg_key_read(c, &k, ob, e);   /* a moving obstacle */
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
            sh->vel[ob.axes[k]] = ob.vel[k];
            sh->moving |= ob.vel[k] != 0;
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
    const game_def *gd = p->model ? NULL : hji_game_find(p->name);
    if (gd && gd->cost_only) k.def = DG_HJI_PAYOFF_COST;   /* a noisy game: no game of kind to default to */
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
    p->opts.controls = d.controls;
    p->opts.cap = time ? p->t_end : 0;
    if (d.method == DG_HJI_METHOD_SWEEP && !d.stationary)
        return dg_cfg_error(c, "solver.method", e, "sweep solves stationary problems (stationary: true)");
    return DG_OK;
}

/* The config key that makes p's sets time-varying (for messages). */
static const char *moving_key(const dg_hji_problem *p) {
    const problem_build *b = p->build;
    int model_target = 0, shapes = 0;
    dg_hji_model_moving(p->model, &model_target, NULL);
    for (int i = 0; i < b->nshape; i++) shapes |= b->shape[i].moving;
    return b->tmoving ? "target_velocity" : model_target ? "model.target" : shapes ? "obstacles" : "model.avoid";
}

/* A game of degree: refuses obstacles at payoff: cost. Time-varying sets (docs/hji.md): notes them in
 * p's build, and refuses them where they are not solved: a game of degree, the tube of mode brt with a
 * moving target (its rule freezes the set of the target at tau = 0: brt_target takes the min with
 * the target of every time). */
static dg_status check_degree(dg_cfg *c, const dg_hji_problem *p, dg_err *e) {
    problem_build *b = p->build;
    if (p->payoff == DG_HJI_PAYOFF_COST && (b->nshape > 0 || dg_hji_model_has_avoid(p->model)))
        return dg_cfg_error(c, "obstacles", e, "apply to games of kind and to payoff: time, not to payoff: cost");
    int model_target = 0, model_avoid = 0, shapes = 0;
    dg_hji_model_moving(p->model, &model_target, &model_avoid);
    for (int i = 0; i < b->nshape; i++) shapes |= b->shape[i].moving;
    b->target_moves = b->tmoving || model_target;
    b->obstacle_moves = shapes || model_avoid;
    b->moving = b->target_moves || b->obstacle_moves;
    if (!b->moving) return DG_OK;
    const char *key = moving_key(p);
    if (p->payoff == DG_HJI_PAYOFF_COST)
        return dg_cfg_error(c, key, e, "time-varying sets are solved for games of kind and payoff: time, not payoff: "
                            "cost (it has no target)");
    if (p->stationary)
        return dg_cfg_error(c, key, e, "time-varying sets have no steady value: stationary: false (a finite horizon)");
    if (b->target_moves && p->opts.mode == DG_HJI_MODE_BRT)
        return dg_cfg_error(c, key, e, "a moving target needs mode: brt_target (the tube, V = min(V, l(x, t)) each "
                            "step) or brs; mode brt freezes the target of tau = 0");
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

const char *dg_hji_problem_source(const dg_hji_problem *p) { return p && p->model ? "model" : "builtin"; }

double dg_hji_problem_param(const dg_hji_problem *p, const char *name) {
    for (int i = 0; p && name && i < p->nparam; i++)
        if (strcmp(p->param[i].name, name) == 0) return p->param[i].value;
    return NAN;
}

const dg_key *dg_hji_keys(int *n) {
    if (n) *n = NCOMMON;
    return COMMON_KEYS;
}

int dg_hji_game_keys(const char *game, dg_key *out, int max) {
    const game_def *gd = hji_game_find(game);
    return gd ? game_keys(gd, out, max) : -1;
}

/* game: model (src/hji/model_problem.c): the model file's state box, inputs and sets */
static void read_model(dg_hji_problem *p) { dg_hji_model_game(p->model, &p->game); }
static void target_model(const dg_hji_problem *p, double t, int64_t j0, int64_t n, double *out) {
    dg_hji_model_target(p->model, &p->grid, j0, n, t, out);
}
/* the model's target at x at the game's time t, its periodic axes wrapped into the grid's [lo, lo +
 * period) as the grid sees the state (a point inside is left as is, so a node's bits are tabulate's) */
static double target_model_time(const dg_hji_problem *p, double t, const double *x, double *grad) {
    double y[DG_HJI_MAX_DIMS];
    hji_wrap_point(&p->grid, x, y);
    return dg_hji_model_target_at(p->model, y, t, grad);
}
/* the model's target at x at tau = 0 (the game's time t_end), as the node array */
static double target_model_at(TARGET_ARGS) { return target_model_time(p, p->t_end, x, grad); }

/* A built-in game's target at a point x at the game's time t: its formula at x, or, moving at
 * target_velocity w, at x - w t. */
static double target_moved(const dg_hji_problem *p, double t, const double *x, double *grad) {
    const problem_build *b = p->build;
    if (!b->tmoving) return b->game_target_at(p, x, grad);
    double y[DG_HJI_MAX_DIMS];
    for (int k = 0; k < p->grid.ndim; k++) y[k] = x[k] - b->tvel[k] * t;
    return b->game_target_at(p, y, grad);
}
/* ... at a point at tau = 0 (the game's time t_end), as the node arrays hold it */
static double target_end_at(TARGET_ARGS) { return target_moved(p, p->t_end, x, grad); }

/* A built-in game's target at nodes [j0, j0 + n) at the game's time t into out (n). */
static void target_nodes(const dg_hji_problem *p, double t, int64_t j0, int64_t n, double *out) {
    double x[DG_HJI_MAX_DIMS];
    for (int64_t i = 0; i < n; i++) {
        dg_hji_grid_point(&p->grid, j0 + i, x);
        out[i] = target_moved(p, t, x, NULL);
    }
}

/* How a problem is loaded: its node arrays built (whole), left to each rank's block (split), or none
 * for work at points (hji learn: any number of axes up to DG_HJI_MAX_DIMS). */
enum { LOAD_SPLIT = 0, LOAD_WHOLE = 1, LOAD_POINTS = 2 };

/* dg_hji_problem_load, building the node arrays when whole (else dg_hji_problem_build_block does) */
static dg_hji_problem *problem_load(dg_cfg *cfg, int how, dg_err *e) {
    const int whole = how == LOAD_WHOLE || how == LOAD_POINTS;
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
                         .t_end = md.t_end, .read = read_model, .target = target_model_at};
        for (int k = 0; k < md.nx; k++) {
            gdm.lo[k] = md.lo[k];
            gdm.hi[k] = md.hi[k];
            gdm.n[k] = 51;
            gdm.periodic[k] = md.periodic[k];
            gdm.axis[k] = md.axis[k];
        }
    } else {
        if (dg_key_read(cfg, &COMMON_KEYS[K_GAME], &sk, e)) return NULL;
        gd = &hji_games[sk.game];
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
    build->target = md.model ? target_model : target_nodes;
    build->target_at = md.model ? gd->target : target_end_at;
    build->game_target_at = gd->target;
    build->target_time = md.model ? target_model_time : target_moved;
    snprintf(p->name, sizeof p->name, "%s", md.model ? md.name : hji_game_names[sk.game]);
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
    const int nodes = p->grid.ndim <= DG_HJI_GRID_MAX_DIMS;  /* else a box alone: no n^d array, ever */
    if (!nodes && how != LOAD_POINTS) {
        dg_cfg_error(cfg, dg_cfg_has(cfg, "grid.n") ? "grid.n" : "grid", e,
                     "%d state dimensions: the grid solver takes at most %d (its memory grows as n^d); a problem of "
                     "more is learned (hji learn, docs/neural.md)", p->grid.ndim, DG_HJI_GRID_MAX_DIMS);
        goto fail;
    }
    if (p->model && dg_hji_model_payoff(p->model, cfg, p->payoff == DG_HJI_PAYOFF_COST, &p->game, e)) goto fail;
    if (gd->check && gd->check(p, cfg, e)) goto fail;
    if (p->opts.dt > 0 && !(p->t_end / p->opts.dt <= DG_HJI_MAX_STEPS)) {
        dg_cfg_error(cfg, "solver.dt", e, "t_end %g / dt %g is %.3g steps, more than %d", p->t_end, p->opts.dt,
                     p->t_end / p->opts.dt, DG_HJI_MAX_STEPS);
        goto fail;
    }
    if (read_obstacles(cfg, p, e) || check_degree(cfg, p, e)) goto fail;
    if (build->moving && how == LOAD_SPLIT) {   /* each step's sets are built over the whole grid */
        dg_cfg_error(cfg, moving_key(p), e, "time-varying sets are solved on the whole grid by hji solve; "
                     "not split over ranks");
        goto fail;
    }
    if (!nodes && p->payoff == DG_HJI_PAYOFF_TIME) {   /* its v0 needs the target's front speed over the nodes */
        dg_cfg_error(cfg, "payoff", e, "time, with %d state dimensions: its initial value needs the grid "
                     "(at most %d axes)", p->grid.ndim, DG_HJI_GRID_MAX_DIMS);
        goto fail;
    }
    if (whole && nodes) {
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
        if (hji_problem_build_arrays(p, zero, p->grid.n, 0, e)) goto fail;
        p->nprint = dg_hji_game_print(p, p->print);  /* now, while the arrays hold the whole grid */
    }
    return p;
fail:
    dg_hji_problem_free(p);
    return NULL;
}

dg_hji_problem *dg_hji_problem_load(dg_cfg *cfg, dg_err *e) { return problem_load(cfg, LOAD_WHOLE, e); }
dg_hji_problem *dg_hji_problem_load_split(dg_cfg *cfg, dg_err *e) { return problem_load(cfg, LOAD_SPLIT, e); }
dg_hji_problem *dg_hji_problem_load_points(dg_cfg *cfg, dg_err *e) { return problem_load(cfg, LOAD_POINTS, e); }

int dg_hji_problem_has_obstacle(const dg_hji_problem *p) {
    const problem_build *b = p ? p->build : NULL;   /* (a game of degree holds its obstacles in v0 and stop) */
    return b && p->payoff == DG_HJI_PAYOFF_KIND && (b->nshape > 0 || dg_hji_model_has_avoid(p->model));
}

const char *dg_hji_problem_moving(const dg_hji_problem *p) {
    const problem_build *b = p ? p->build : NULL;
    return b && b->moving ? moving_key(p) : NULL;
}

int dg_hji_problem_target_moves(const dg_hji_problem *p) {
    const problem_build *b = p ? p->build : NULL;
    return b && b->target_moves;
}

int dg_hji_problem_has_stop(const dg_hji_problem *p) { return p && p->payoff == DG_HJI_PAYOFF_TIME; }

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
    const game_def *gd = p->model ? NULL : hji_game_find(p->name);
    if (gd && gd->terminal) return gd->terminal(p, x, NULL);   /* a game's own (merton's utility) */
    const int nx = p->grid.ndim;
    double g = 0;
    for (int a = 0; a < nx; a++)
        for (int b = 0; b < nx; b++) g += x[a] * p->terminal[a * nx + b] * x[b];
    return p->model ? g + dg_hji_model_terminal(p->model, x) : g;
}

int dg_hji_problem_episode(const dg_hji_problem *p, double *aux) {
    return p && p->model ? dg_hji_model_episode(p->model, aux) : 0;
}

/* 0 on the target, the rest as solved (internal.h). */
void hji_problem_time_report(const dg_hji_problem *p, int64_t node0, int64_t n, int nt, double *out) {
    const double *stop = p->stop ? p->stop + (node0 - p->block0) : NULL;
    for (int k = 0; k < nt; k++, out += n)
        for (int64_t j = 0; j < n; j++)
            if (out[j] < 0 && (!stop || stop[j] <= 0)) out[j] = 0;
}

/* The time-varying sets' callback (dg_hji_opts.sets): the problem's at tau (hji_problem_sets). */
typedef struct moving_sets {
    const dg_hji_problem *p;
    double *scratch;                      /* (nodes) with more than one obstacle shape, else NULL */
    double *work;                         /* payoff: time: (2 nodes) its target and obstacles     */
} moving_sets;
static int moving_sets_at(void *user, double tau, double *target, double *obstacle) {
    const moving_sets *m = user;
    return hji_problem_sets(m->p, tau, target, obstacle, m->scratch, m->work) != DG_OK;
}

/* dg_hji_problem_solve_at for time-varying sets: the solver asks for them at every step's time. */
static dg_status solve_moving(const dg_hji_problem *p, int nt, const double *times, double *out, dg_hji_stats *stats,
                              dg_err *e) {
    const problem_build *b = p->build;
    if (p->block_nodes || !p->target)
        return dg_err_set(e, DG_ERR_ARG, "hji: %s: time-varying sets are solved on the whole grid (not split over "
                          "ranks)", p->name);
    moving_sets m = {.p = p};
    const size_t N = (size_t)p->grid.nodes;
    const int time = p->payoff == DG_HJI_PAYOFF_TIME;
    if ((b->nshape > 1 && !(m.scratch = malloc(N * sizeof *m.scratch))) || (time && !(m.work = malloc(2 * N * sizeof *m.work)))) {
        free(m.scratch);
        return dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory for %lld nodes", (long long)p->grid.nodes);
    }
    dg_hji_opts o = p->opts;
    o.sets = moving_sets_at;
    o.sets_user = &m;
    dg_status rc = dg_hji_solve(&p->grid, &p->game, &o, dg_hji_problem_v0(p), p->obstacle, nt, times, out, stats, e);
    if (time && (rc == DG_OK || rc == DG_ERR_INTERRUPTED))   /* the target: 0, as dg_hji_problem_solve_at */
        for (int64_t j = 0; j < (int64_t)nt * p->grid.nodes; j++) out[j] = out[j] > 0 ? out[j] : 0;
    free(m.scratch);
    free(m.work);
    return rc;
}

dg_status dg_hji_problem_solve_at(const dg_hji_problem *p, int nt, const double *times, double *out,
                                  dg_hji_stats *stats, dg_err *e) {
    if (!p || !out) return dg_err_set(e, DG_ERR_ARG, "hji: problem_solve needs a problem and out");
    /* a stationary time to reach marches up to twice the cap: a time that cannot be forced reaches
     * the cap (and stops counting in the residual) only when the march does */
    const double twice = 2 * (nt > 0 ? times[nt - 1] : 0);
    const int longer = p->stationary && p->payoff == DG_HJI_PAYOFF_TIME && nt == 1;
    const problem_build *b = p->build;
    if (b && b->moving) return solve_moving(p, nt, times, out, stats, e);
    dg_status rc = dg_hji_solve(&p->grid, &p->game, &p->opts, dg_hji_problem_v0(p), p->obstacle, nt,
                                longer ? &twice : times, out, stats, e);
    if (p->payoff == DG_HJI_PAYOFF_TIME && (rc == DG_OK || rc == DG_ERR_INTERRUPTED))
        hji_problem_time_report(p, 0, p->grid.nodes, nt, out);  /* the target: 0 */
    return rc;
}
