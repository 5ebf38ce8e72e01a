/* difgames hji: a Hamilton-Jacobi-Bellman-Isaacs level-set grid solver.
 *
 * Solve a game from its config, then read the value, its gradient and both
 * players' equilibrium inputs anywhere:
 *
 *     dg_err e = {0};
 *     dg_cfg *cfg = dg_cfg_load("configs/hji/air3d.yaml", &e);
 *     dg_hji_problem *p = cfg ? dg_hji_problem_load(cfg, &e) : NULL;
 *     if (!p || dg_cfg_check_unused(cfg, &e)) ...print e.msg, free, fail...
 *     double *V = malloc(p->grid.nodes * sizeof *V);          // (n0, n1, n2), last axis fastest
 *     dg_hji_stats st;
 *     if (dg_hji_problem_solve(p, V, &st, &e)) ...;            // V(x, t_end)
 *     double x[3] = {10, 2, 3.1}, grad[3], u[1], d[1];
 *     double v = dg_hji_interp(&p->grid, V, x, grad);          // value and gradient at x
 *     dg_hji_game_optimal(&p->game, x, grad, u, d);            // equilibrium control and disturbance
 *     free(V); dg_hji_problem_free(p); dg_cfg_free(cfg);
 *
 * Over an episode of horizon T the equilibrium feedback reads V(x, T - t): dg_hji_problem_solve_slices
 * keeps V at several times-to-go (a dg_hji_slices), dg_hji_feedback and dg_hji_simulate read it.
 *
 * Or build the pieces by hand: dg_hji_grid_init, a dg_hji_game (dynamics
 * x' = f(x) + G(x) u + D(x) d with box or ball bounds and a role per player,
 * or a generic Hamiltonian), dg_hji_opts, a target from dg_hji_sdf_*, then
 * dg_hji_solve.
 *
 * Conventions (docs/hji.md has the details and the measurements):
 * - Arrays over a grid are row-major, axis 0 slowest, the last axis fastest
 *   (contiguous): node (i0, .., i_{d-1}) sits at sum_k i_k * grid.stride[k].
 * - Time is time-to-go tau >= 0. The solver integrates
 *       phi_tau + H(x, grad phi) = 0,   phi(x, 0) = v0(x)     (BRS)
 *   forward in tau. For a game, H(x, p) = -(p.f(x) + ext_u p.G(x)u + ext_d p.D(x)d),
 *   ext = max for a DG_HJI_ROLE_MAX player and min for a DG_HJI_ROLE_MIN one, so
 *   phi(x, tau) is the value of the game whose payoff is v0(x(tau)): the
 *   maximiser pushes it up, the minimiser down. {phi <= 0} is the set from
 *   which the minimiser can force the state into {v0 <= 0} at time tau.
 *   BRT (tube): phi_tau = min(0, -H) (helperOC minWith 'zero', hj_reachability's
 *   tube): {phi <= 0} only grows. BRT_TARGET: after each step phi = min(phi, v0)
 *   (helperOC 'minVWithL'); the two share {phi <= 0}, not their values.
 *   Obstacles: after each step phi = max(phi, obstacle), obstacle > 0 inside
 *   (the negated signed distance): reach-avoid.
 * - Numerical Hamiltonian (Lax-Friedrichs, as ToolboxLS):
 *       H^ = H(x, (p+ + p-)/2) - sum_i alpha_i (p+_i - p-_i)/2
 * - Every function is re-entrant; nothing is global. Callbacks may be
 *   called from several OpenMP threads at once.
 */
#ifndef DIFGAMES_HJI_H
#define DIFGAMES_HJI_H

#include <stdint.h>

#include "difgames/config.h"
#include "difgames/image.h"
#include "difgames/status.h"

#ifdef __cplusplus
extern "C" {
#endif

struct dg_key;     /* difgames/keys.h    */

#define DG_HJI_MAX_DIMS  6   /* most grid axes (= state dimension)                    */
#define DG_HJI_MAX_INPUT 4   /* most components of the control u or the disturbance d */
#define DG_HJI_MAX_TIMES 64  /* most output times of a solve (--times) kept in a value file */
#define DG_HJI_PRINT_NODES 16             /* nodes a game's fingerprint samples                */
#define DG_HJI_PRINT_MAX (2 + 3 * DG_HJI_PRINT_NODES)
#define DG_HJI_MAX_STEPS 100000000  /* most time steps of a solve (t_end / dt): refused past it */

/* ------------------------------------------------------------------ enums */
typedef enum dg_hji_bc {           /* boundary of a grid axis (ghost cells)                          */
    DG_HJI_BC_AWAY = 0,            /* extrapolate away from zero (ToolboxLS addGhostExtrapolate)      */
    DG_HJI_BC_LINEAR,              /* plain linear extrapolation of the two edge nodes                */
    DG_HJI_BC_PERIODIC             /* the axis wraps (angles); set by dg_hji_grid_init                */
} dg_hji_bc;
typedef enum dg_hji_deriv {        /* one-sided spatial derivatives p-, p+                            */
    DG_HJI_DERIV_UPWIND1 = 0,      /* first order (ToolboxLS upwindFirstFirst)                        */
    DG_HJI_DERIV_ENO2,             /* second order ENO (upwindFirstENO2)                              */
    DG_HJI_DERIV_ENO3,             /* third order ENO (upwindFirstENO3)                               */
    DG_HJI_DERIV_WENO5             /* fifth order WENO, Jiang-Peng (upwindFirstWENO5)                 */
} dg_hji_deriv;
typedef enum dg_hji_time {         /* time integration                                                */
    DG_HJI_TIME_EULER = 0,         /* forward Euler                                                   */
    DG_HJI_TIME_RK2,               /* TVD Runge-Kutta 2 (Heun)                                        */
    DG_HJI_TIME_RK3                /* TVD Runge-Kutta 3 (Shu-Osher)                                   */
} dg_hji_time;
typedef enum dg_hji_accuracy {     /* ToolboxLS presets                                               */
    DG_HJI_ACCURACY_LOW = 0,       /* UPWIND1 + EULER                                                 */
    DG_HJI_ACCURACY_MEDIUM,        /* ENO2 + RK2                                                      */
    DG_HJI_ACCURACY_HIGH,          /* ENO3 + RK3                                                      */
    DG_HJI_ACCURACY_VERY_HIGH,     /* WENO5 + RK3                                                     */
    DG_HJI_ACCURACY_COUNT
} dg_hji_accuracy;
typedef enum dg_hji_diss {         /* Lax-Friedrichs dissipation alpha_i(x), as ToolboxLS:            */
    DG_HJI_DISS_GLOBAL = 0,        /* p over the whole grid's range (artificialDissipationGLF)        */
    DG_HJI_DISS_LOCAL,             /* p_i over the node's [p-, p+], others global (...LLF)            */
    DG_HJI_DISS_LOCAL_LOCAL,       /* every p_i over the node's [p-, p+] (...LLLF)                    */
    DG_HJI_DISS_GLOBAL_MAX         /* GLOBAL's alpha maxed over the grid (the textbook global LF)     */
} dg_hji_diss;
typedef enum dg_hji_mode {         /* what is computed                                                */
    DG_HJI_MODE_BRS = 0,           /* reachable set: the plain PDE                                    */
    DG_HJI_MODE_BRT,               /* reachable tube: phi_tau = min(0, -H)                            */
    DG_HJI_MODE_BRT_TARGET         /* reachable tube: phi = min(phi, v0) after each step              */
} dg_hji_mode;
typedef enum dg_hji_weno_eps {     /* WENO5 smoothness epsilon                                        */
    DG_HJI_WENO_EPS_GRID = 0,      /* 1e-6 max_grid(D1^2) + 1e-99, per axis (ToolboxLS default)       */
    DG_HJI_WENO_EPS_CONST          /* 1e-6 (Jiang-Peng)                                               */
} dg_hji_weno_eps;
typedef enum dg_hji_real { DG_HJI_REAL_F64 = 0, DG_HJI_REAL_F32 } dg_hji_real;  /* value precision          */
typedef enum dg_hji_role { DG_HJI_ROLE_MIN = 0, DG_HJI_ROLE_MAX } dg_hji_role;  /* a player's aim             */
typedef enum dg_hji_set  {        /* a player's input set                                            */
    DG_HJI_SET_BOX = 0,            /* lo <= u <= hi                                                   */
    DG_HJI_SET_BALL,               /* |u - center| <= radius                                          */
    DG_HJI_SET_QUAD,               /* unbounded, at a running cost weight |u|^2 (games of degree)     */
    DG_HJI_SET_BOX_COST            /* a box at a running cost weight |u|^2 (games of degree)          */
} dg_hji_set;
typedef enum dg_hji_method {       /* how a stationary problem (opts.tol > 0) is solved                */
    DG_HJI_METHOD_MARCH = 0,       /* time-marching (the scheme of the finite horizon) to steady state */
    DG_HJI_METHOD_SWEEP            /* fast sweeping: Lax-Friedrichs Gauss-Seidel, 2^d orderings       */
} dg_hji_method;

typedef enum {                    /* under MPI (hji_part.h): how the grid is cut over the ranks  */
    DG_HJI_SPLIT_AUTO = 0,        /* the cut with the least halo (dg_hji_part_cuts), any axes but the last */
    DG_HJI_SPLIT_AXIS0            /* axis 0 alone (blocks may be narrower than the ghost layers) */
} dg_hji_split;

/* ------------------------------------------------------------------- grid */
/* Axis k has n[k] nodes lo[k] + i dx[k]. A plain axis spans [lo, hi] with dx = (hi - lo)/(n - 1);
 * a periodic one spans [lo, hi) with dx = (hi - lo)/n (hi is node 0 again). */
typedef struct dg_hji_grid {
    int       ndim;                       /* 1 .. DG_HJI_MAX_DIMS                              */
    int       n[DG_HJI_MAX_DIMS];         /* nodes per axis, >= 2                              */
    double    lo[DG_HJI_MAX_DIMS];        /* first node                                        */
    double    hi[DG_HJI_MAX_DIMS];        /* last node, or the period's end if periodic        */
    double    dx[DG_HJI_MAX_DIMS];        /* spacing                                           */
    dg_hji_bc bc[DG_HJI_MAX_DIMS];        /* AWAY (default) or LINEAR; PERIODIC if periodic    */
    int64_t   stride[DG_HJI_MAX_DIMS];    /* elements between neighbours along the axis        */
    int64_t   nodes;                      /* product of n                                      */
    char      name[DG_HJI_MAX_DIMS][24];  /* each axis's name, the game's state variable ("psi"):
                                             what figures label it; "" unnamed (x0, x1, ...).
                                             dg_hji_grid_init leaves them "", a problem names them */
} dg_hji_grid;

/* Fills g. periodic (ndim flags) may be NULL (none). Returns DG_OK, or DG_ERR_ARG naming the bad axis
 * (ndim out of range, n < 2, hi <= lo, non-finite, more than 2^40 nodes). */
dg_status dg_hji_grid_init(dg_hji_grid *g, int ndim, const double *lo, const double *hi, const int *n,
                           const int *periodic, dg_err *e);
double  dg_hji_grid_coord(const dg_hji_grid *g, int axis, int i);            /* lo + i dx                   */
void    dg_hji_grid_point(const dg_hji_grid *g, int64_t node, double *x);   /* node's coordinates (ndim)   */
int64_t dg_hji_grid_node(const dg_hji_grid *g, const int *idx);             /* multi-index -> flat index   */
/* Axis k's name into buf (cap bytes): g->name[k], or "x<k>" when it has none; returns buf. */
const char *dg_hji_grid_axis_name(const dg_hji_grid *g, int k, char *buf, size_t cap);
/* The point a slice through axes 0 and 1 passes through (hji plot --at, hji view --at), into at
 * (ndim): each axis's middle, 0.5 (lo + hi), then the values text gives the axes after the first
 * two: "x2=V,x3=W" (an axis by its index or its name, "psi=1.5"), or "V,W" (a value without a name
 * goes to the axis after the one before it, the first to axis 2). text NULL: the middles. DG_OK, or
 * DG_ERR_ARG naming the item that names no such axis or gives no number. */
dg_status dg_hji_grid_slice_at(const dg_hji_grid *g, const char *text, double *at, dg_err *e);

/* ------------------------------------------------------------------- game */
/* At one state x (nx): f (nx), G (nx, nu), D (nx, nd) row-major, zeroed before the call. Must depend on
 * x only (the solver tabulates it once per solve) and be finite. */
typedef void (*dg_hji_dyn_fn)(void *user, const double *x, double *f, double *G, double *D);
/* Generic H(t, x, p) at n points: x, p (ndim, n), h (n). */
typedef void (*dg_hji_ham_fn)(void *user, double t, int n, const double *x, const double *p, double *h);
/* Dissipation bounds at n points: alpha (ndim, n) >= |dH/dp_i| for p in the box [pmin, pmax] (ndim, n). */
typedef void (*dg_hji_alpha_fn)(void *user, double t, int n, const double *x, const double *pmin,
                                const double *pmax, double *alpha);

/* One player's input: u (the control) or d (the disturbance). */
typedef struct dg_hji_input {
    int         dim;                      /* components; 0: absent                             */
    dg_hji_set  set;                      /* BOX: lo <= u <= hi;  BALL: |u - center| <= radius;
                                             QUAD: any u, running cost +weight |u|^2 for a MIN
                                             player, -weight |u|^2 for a MAX one (payoff.on);
                                             BOX_COST: the box's u at QUAD's running cost      */
    dg_hji_role role;                     /* MIN or MAX: what the player does to the value     */
    double      lo[DG_HJI_MAX_INPUT];     /* box                                               */
    double      hi[DG_HJI_MAX_INPUT];
    double      center[DG_HJI_MAX_INPUT]; /* ball                                              */
    double      radius;
    double      weight;                   /* QUAD and BOX_COST: > 0                            */
} dg_hji_input;

/* A game of degree's payoff (payoff.on): the minimiser pays, the maximiser receives
 *     J = int_0^tau e^{-rho s} L(x, u, d) ds + e^{-rho tau} g(x(tau)),
 *     L = running + x'Qx + sum over QUAD players of (+-) weight |input|^2,
 * g the initial value v0 (the terminal cost), tau the time-to-go. The value solves
 *     phi_tau + rho phi + H(x, grad phi) = 0,  H = -(L0(x) + p.f + ext_u + ext_d),
 * ext over each player's set of (p.G u) or, for QUAD, of (p.G u +- weight |u|^2): in closed form
 * -|G^T p|^2 / (4 weight) for a MIN player (u* = -G^T p / (2 weight)), +|D^T p|^2 / (4 weight)
 * for a MAX one (d* = D^T p / (2 weight)). A game of kind (payoff.on = 0) is the case L = 0,
 * rho = 0. */
typedef struct dg_hji_payoff {
    int    on;                                   /* 1: a game of degree                        */
    double running;                              /* L0: a constant running cost (1: time)      */
    double Q[DG_HJI_MAX_DIMS * DG_HJI_MAX_DIMS]; /* (nx, nx) row-major: the state cost x'Qx     */
    double discount;                             /* rho >= 0                                   */
    double (*cost)(void *user, const double *x); /* or NULL: a running cost L1(x) of the state,
                                                    added to running + x'Qx (user: the game's)  */
} dg_hji_payoff;

/* A game: control- and disturbance-affine dynamics (dyn set), or a generic Hamiltonian (ham and alpha
 * set, dyn NULL) for phi_tau + ham(t, x, grad phi) = 0. The struct is the caller's; user is passed
 * to every callback. */
typedef struct dg_hji_game {
    int             nx;                   /* state dimension (= grid.ndim)                     */
    dg_hji_dyn_fn   dyn;                  /* x' = f(x) + G(x) u + D(x) d                       */
    dg_hji_input    u, d;                 /* the players' bounds and roles                     */
    dg_hji_payoff   payoff;               /* a game of degree's running cost and discount      */
    dg_hji_ham_fn   ham;                  /* or: a generic Hamiltonian ...                     */
    dg_hji_alpha_fn alpha;                /* ... and its dissipation bounds                    */
    void           *user;
} dg_hji_game;

/* Returns DG_OK or DG_ERR_ARG naming what is wrong (dimensions, empty box, negative radius, a QUAD
 * input without a payoff or a positive weight, no dynamics and no Hamiltonian, nx != ndim when
 * ndim > 0). */
dg_status dg_hji_game_check(const dg_hji_game *gm, int ndim, dg_err *e);
/* The players' optimal inputs at x for the value gradient p (nx), bang-bang: a box player takes the
 * bound matching the sign of (G^T p)_j (the centre where it is 0), a ball player centre +- radius
 * along G^T p; a QUAD player -+ G^T p / (2 weight). u (u.dim) and d (d.dim) may be NULL. Affine
 * games only (zeros otherwise). */
void   dg_hji_game_optimal(const dg_hji_game *gm, const double *x, const double *p, double *u, double *d);
/* H(x, p) in the solver's convention (phi_tau + rho phi + H = 0): -(L0(x) + p.f + ext_u + ext_d) for
 * an affine game (L0 = 0 for a game of kind), ham(0, x, p) for a generic one. */
double dg_hji_game_hamiltonian(const dg_hji_game *gm, const double *x, const double *p);
/* xdot (nx) = f(x) + G(x) u + D(x) d; u or d NULL counts as 0. Affine games only. */
void   dg_hji_game_dynamics(const dg_hji_game *gm, const double *x, const double *u, const double *d,
                            double *xdot);
/* The running cost L(x, u, d) of a game of degree (0 for a game of kind): what a simulation adds up,
 * e^{-rho t} L dt along the path, to compare with V(x0). u or d NULL counts as 0. */
double dg_hji_game_running_cost(const dg_hji_game *gm, const double *x, const double *u, const double *d);
/* 1 when gm is a game of degree (payoff.on). */
int    dg_hji_game_degree(const dg_hji_game *gm);

/* --------------------------------------------------------- targets, sets */
/* Signed distances over the grid (negative inside) into out (nodes). axes is a bit mask of the axes
 * that count (0: all; ball over some axes = a cylinder over the others); center, lo, hi have ndim
 * entries (those of uncounted axes are ignored). Periodic axes use the wrapped difference. */
void dg_hji_sdf_ball(const dg_hji_grid *g, const double *center, double radius, unsigned axes, double *out);
void dg_hji_sdf_box(const dg_hji_grid *g, const double *lo, const double *hi, unsigned axes, double *out);
void dg_hji_sdf_union(int64_t n, const double *a, double *out);      /* out = min(out, a)              */
void dg_hji_sdf_intersect(int64_t n, const double *a, double *out);  /* out = max(out, a)              */
void dg_hji_sdf_complement(int64_t n, double *out);                  /* out = -out                     */

/* ---------------------------------------------------------------- solving */
typedef struct dg_hji_progress {
    double  t, t_end;                     /* time-to-go reached, last requested time           */
    int64_t step;                         /* steps so far                                      */
    double  dt;                           /* the last step                                     */
    double  seconds;                      /* wall time so far                                  */
    const double *value;                  /* the value at t (nodes), valid during the call:    */
    const float  *value_f32;              /* value in a double solve, value_f32 in a float32   */
} dg_hji_progress;                        /* one (the other NULL)                              */
/* Called on the calling thread after every step; a non-zero return stops with DG_ERR_INTERRUPTED. */
typedef int (*dg_hji_progress_fn)(void *user, const dg_hji_progress *pr);

typedef struct dg_hji_opts {
    dg_hji_deriv       deriv;             /* default WENO5                                     */
    dg_hji_time        time;              /* default RK3                                       */
    dg_hji_diss        diss;              /* default GLOBAL                                    */
    dg_hji_mode        mode;              /* default BRS                                       */
    dg_hji_weno_eps    weno_eps;          /* default EPS_GRID                                  */
    dg_hji_real        real;              /* F64 (default) or F32 (dg_hji_solve converts)      */
    double             cfl;               /* default 0.75: dt = cfl / sum_i max_x alpha_i/dx_i */
    double             dt;                /* > 0: fixed step instead (rounded down to land)    */
    int                threads;           /* OpenMP threads; 0: OpenMP's, at most 1 per 16k nodes */
    /* games of degree */
    const double      *stop;              /* (nodes) or NULL: where <= 0 the game is over (the
                                             target of a time to reach): phi stays v0 there    */
    double             cap;               /* > 0: phi = min(phi, cap) after each step (a time to
                                             reach that cannot be forced within cap reads cap) */
    double             tol;               /* > 0: stationary: stop once max |phi_tau| < tol
                                             over the nodes not held by stop or cap (the last
                                             time is then the most time marched)               */
    dg_hji_method      method;            /* stationary: MARCH (default) or SWEEP              */
    int64_t            max_sweeps;        /* SWEEP: the most Gauss-Seidel sweeps (0: 100000)   */
    dg_hji_split       split;             /* under MPI: the cut (default AUTO; hji_part.h)     */
    dg_hji_progress_fn progress;          /* may be NULL                                       */
    void              *progress_user;
} dg_hji_opts;

typedef struct dg_hji_stats {
    int64_t steps;                        /* time steps taken                                  */
    int     stages;                       /* per step (1, 2, 3)                                */
    int64_t nodes;                        /* grid nodes                                        */
    double  cell_updates;                 /* steps * stages * nodes                            */
    double  seconds;                      /* wall time of the solve (setup included)           */
    double  updates_per_s;                /* cell_updates / seconds                            */
    double  dt_min, dt_max;               /* smallest and largest step                         */
    int     threads;                      /* threads used                                      */
    /* stationary solves (opts.tol > 0) */
    int     converged;                    /* 1: residual < tol                                 */
    int64_t iterations;                   /* time steps (MARCH) or sweeps (SWEEP)              */
    double  residual;                     /* the last max |phi_tau| (MARCH) or max change of a
                                             sweep cycle (SWEEP) over the free nodes           */
    double  t;                            /* MARCH: the time marched                           */
} dg_hji_stats;

dg_hji_opts dg_hji_opts_default(void);                                 /* veryHigh, GLF, BRS, cfl 0.75   */
void        dg_hji_opts_accuracy(dg_hji_opts *o, dg_hji_accuracy a);   /* sets deriv and time            */
const char *dg_hji_accuracy_name(dg_hji_accuracy a);                   /* "low" .. "veryHigh"; "?"       */
dg_hji_accuracy dg_hji_accuracy_of(const dg_hji_opts *o);             /* the preset of o->deriv         */
int         dg_hji_accuracy_from_name(const char *s);                  /* a dg_hji_accuracy, or -1       */

/* Solves from v0 (nodes) and writes phi at the nt increasing times-to-go times[] (>= 0) into
 * out (nt, nodes). obstacle (nodes) may be NULL. All arrays are the caller's; the workspace
 * (about 3-4 value arrays plus tabulated dynamics) is allocated here once and freed before
 * returning. Deterministic: the same inputs and thread count give the same bits (and the
 * thread count does not change them either: every node is computed the same way by one thread).
 * Returns DG_OK, DG_ERR_ARG, DG_ERR_NOMEM, DG_ERR_NONFINITE (a NaN appeared) or DG_ERR_INTERRUPTED
 * (out holds the times reached). stats may be NULL. */
dg_status dg_hji_solve(const dg_hji_grid *g, const dg_hji_game *gm, const dg_hji_opts *o,
                       const double *v0, const double *obstacle, int nt, const double *times,
                       double *out, dg_hji_stats *stats, dg_err *e);
/* The same in float32 throughout (o->real is ignored): half the memory, 1.4-1.7x the speed. */
dg_status dg_hji_solve_f32(const dg_hji_grid *g, const dg_hji_game *gm, const dg_hji_opts *o,
                           const float *v0, const float *obstacle, int nt, const double *times,
                           float *out, dg_hji_stats *stats, dg_err *e);
/* Bytes dg_hji_solve (or dg_hji_solve_f32, as o->real says) will allocate for nt output times,
 * the caller's output array included: the value arrays the time scheme keeps, the dynamics tables
 * (judged from gm's dynamics at 65 nodes: gm may be NULL), dissipation tables, the threads'
 * workspaces. To refuse a grid that cannot fit (dg_mem_check) before allocating anything. */
double    dg_hji_solve_memory(const dg_hji_grid *g, const dg_hji_game *gm, const dg_hji_opts *o, int nt);
/* Nodal gradient (p- + p+)/2 of v (nodes) with the scheme o->deriv (and o->weno_eps, o->threads)
 * into grad (ndim, nodes), the caller's. Returns DG_OK, DG_ERR_ARG or DG_ERR_NOMEM. */
dg_status dg_hji_gradient(const dg_hji_grid *g, const dg_hji_opts *o, const double *v, double *grad,
                          dg_err *e);
/* The one-sided derivatives themselves, as ToolboxLS's upwindFirst*: left = p-, right = p+, each
 * (ndim, nodes) or NULL (not both), with the grid's ghost cells. Returns as dg_hji_gradient. */
dg_status dg_hji_upwind(const dg_hji_grid *g, const dg_hji_opts *o, const double *v, double *left,
                        double *right, dg_err *e);

/* ---------------------------------------------------------- interpolation */
/* The value of v (nodes) at any point x (ndim), multilinear, and its gradient into grad (ndim; may be
 * NULL): the multilinear blend of nodal central differences (one-sided at plain edges). Periodic
 * axes wrap; outside a plain axis the point is clamped to the edge and the value extrapolated
 * linearly with that gradient. Never NaN for a finite v (a NaN coordinate reads as the low edge). */
double dg_hji_interp(const dg_hji_grid *g, const double *v, const double *x, double *grad);
double dg_hji_interp_f32(const dg_hji_grid *g, const float *v, const double *x, double *grad);

/* --------------------------------------------------- problems from configs */
#define DG_HJI_MAX_PARAMS 16  /* most constants of a game */
/* A game's constant: its config key (or, derived from others, its name) and value. */
typedef struct dg_hji_param {
    const char *name;                     /* e.g. "speed_pursuer", "capture_radius"            */
    double      value;
} dg_hji_param;

/* How a learning game's state and actions map onto an HJI game's, declared next to the HJI game
 * (for `difgames hji versus`): a learned player and the HJI equilibrium can then play each other
 * in the learning game's own dynamics. */
typedef struct dg_hji_link {
    const char *env_game;                 /* the learning game's name, e.g. "chase"            */
    const char *need;                     /* what a config must give, for messages             */
    int         nplayers, state_dim;      /* the learning game's players and state size        */
    int         plus[DG_HJI_MAX_DIMS];    /* HJI x_k = s[plus[k]] - s[minus[k]] (float32 math) */
    int         minus[DG_HJI_MAX_DIMS];   /* of the learning game's state s                    */
    int         u_act[DG_HJI_MAX_INPUT];  /* joint-action column taking u_j (act_dim + act2_dim) */
    int         d_act[DG_HJI_MAX_INPUT];  /* ... and d_j                                       */
    unsigned    capture_axes;             /* captured when |x over these HJI axes| (in double)  */
    const char *capture_param;            /* ... is below this constant                        */
    const char *const *same;              /* constants that must equal the learning config's
                                             env.<name> (NULL-terminated; may be NULL)          */
} dg_hji_link;

/* What a problem's value is (config key payoff). */
typedef enum dg_hji_payoff_type {
    DG_HJI_PAYOFF_KIND = 0,               /* a game of kind: v0 is the target's signed distance */
    DG_HJI_PAYOFF_TIME,                   /* the time to reach the target (running cost 1, the
                                             game over there), capped at t_end                  */
    DG_HJI_PAYOFF_COST                    /* running cost, terminal cost x'Q_T x, discount     */
} dg_hji_payoff_type;

/* The linear game's config-declared terms: x' = A x + drift + B u + D d (game: linear). */
typedef struct dg_hji_linear {
    double A[DG_HJI_MAX_DIMS * DG_HJI_MAX_DIMS];   /* (nx, nx) row-major                       */
    double drift[DG_HJI_MAX_DIMS];                 /* a constant term (a current, a wind)      */
    double B[DG_HJI_MAX_DIMS * DG_HJI_MAX_INPUT];  /* (nx, nu) row-major                       */
    double D[DG_HJI_MAX_DIMS * DG_HJI_MAX_INPUT];  /* (nx, nd)                                 */
    int    nB, nD;                                 /* items given (nx nu, nx nd)               */
    int    u_set, d_set;                           /* d_set 0: none; else a dg_hji_set + 1     */
    double u_bound, d_bound;                       /* box half-width or ball radius            */
    double u_weight, d_weight;                     /* quadratic cost weights                   */
} dg_hji_linear;

/* A ready-to-solve game built from a config (configs/hji/<game>.yaml). */
typedef struct dg_hji_problem {
    char         name[32];                /* "pursuit2d", "air3d", "chauffeur", "chase4d"      */
    dg_hji_grid  grid;
    dg_hji_game  game;                    /* game.user points at param below                   */
    dg_hji_opts  opts;                    /* accuracy, mode, solver.* keys                     */
    double       t_end;                   /* horizon (time-to-go)                              */
    double      *target;                  /* (nodes) l(x), <= 0 in the target set; owned       */
    double      *obstacle;                /* (nodes) > 0 inside obstacles, or NULL; owned      */
    int          nparam;                  /* the game's constants, by name, in its order       */
    dg_hji_param param[DG_HJI_MAX_PARAMS];  /* (dg_hji_problem_param reads one by name)        */
    const char  *u_name, *d_name;         /* who plays u and d, e.g. "pursuer", "evader"       */
    const dg_hji_link *link;              /* a learning game mapped onto this one, or NULL     */
    /* games of degree (payoff: time or cost) */
    dg_hji_payoff_type payoff;
    double      *initial;                 /* (nodes) v0: the terminal cost, 0 on the target and
                                             cap in obstacles; NULL for a game of kind; owned  */
    double      *stop;                    /* (nodes) <= 0 where the game is over (target,
                                             obstacles), or NULL; opts.stop points here; owned */
    double       terminal[DG_HJI_MAX_DIMS * DG_HJI_MAX_DIMS];  /* Q_T: g(x) = x'Q_T x (cost) */
    int          stationary;              /* solve to steady state (opts.tol)                  */
    dg_hji_linear lin;                    /* game: linear's terms                              */
    void        *model;                   /* game: model's expressions (docs/models.md); owned  */
    int          nprint;                  /* the game's fingerprint (dg_hji_game_print), taken
                                             when loaded, before a rank keeps its block; 0: none */
    double       print[DG_HJI_PRINT_MAX];
    int64_t      block0;                  /* 0; or after dg_hji_problem_keep_block (hji_part.h),
                                             target .. stop hold a rank's block from this node */
    int64_t      block_nodes;             /* 0: the arrays are the whole grid's; else a rank's box's
                                             (row-major, block_nodes nodes) */
    void        *build;                   /* what builds the node arrays over any nodes (problem.c);
                                             owned */
} dg_hji_problem;

/* Builds grid, game, target and options from cfg: key 'game' names the game; t_end, mode,
 * accuracy, grid.{min,max,n}, solver.{cfl,dt,dissipation,threads,precision,weno_eps,boundary},
 * obstacles and the game's own keys are read with file:line errors (DG_ERR_CONFIG). It does not
 * call dg_cfg_check_unused: the caller does, after reading its own keys. Returns a new problem
 * (free with dg_hji_problem_free) or NULL with e set. */
dg_hji_problem *dg_hji_problem_load(dg_cfg *cfg, dg_err *e);
void            dg_hji_problem_free(dg_hji_problem *p);                /* NULL is harmless             */
const char     *dg_hji_problem_name(int i);                            /* i-th known game; NULL past   */
/* Where p's game comes from: "model" (game: model; p->name is the file's model.name, which may be a
 * built-in's) or "builtin". */
const char     *dg_hji_problem_source(const dg_hji_problem *p);
double          dg_hji_problem_param(const dg_hji_problem *p, const char *name);  /* NaN: no such   */
const dg_hji_link *dg_hji_game_link(const char *game);                 /* NULL: none, or no such game  */
/* The config keys (difgames/keys.h; `difgames keys hji [GAME]`): dg_hji_keys, those of every game
 * (game, accuracy, mode, solver.*, obstacles[i].*; *n gets the count); dg_hji_game_keys, game's own
 * with its defaults (t_end, grid.min/max/n with one item per axis, then its constants) into out (room
 * for max), returning their count (more than max: some left out), or -1 for no such game. */
const struct dg_key *dg_hji_keys(int *n);
int             dg_hji_game_keys(const char *game, struct dg_key *out, int max);
const char     *dg_hji_game_summary(const char *game);                 /* a line; NULL: no such game    */
const char     *dg_hji_axis_name(const char *game, int axis);          /* "psi" (air3d, 2); NULL: none   */
/* Solves p to p->t_end with p->opts (float32 inside if p->opts.real says so) into out (nodes). */
dg_status       dg_hji_problem_solve(const dg_hji_problem *p, double *out, dg_hji_stats *stats, dg_err *e);
/* Solves p to p->t_end and keeps the value at several times-to-go, for strategies that need
 * V(x, t_end - t) (dg_hji_slices): at the nreq increasing times req[] in (0, t_end) (the steps land
 * on them, as dg_hji_solve's times), at t_end, and at the first step reached at or past each of the
 * marks k t_end / (slices - 1), k = 0 .. slices - 1 (the mark 0 is the initial value; these samples
 * do not change the steps, so V(., t_end) has the same bits as without them). slices 0 or 1: no
 * marks. *nt gets the count (at most slices + nreq + 1, <= DG_HJI_MAX_TIMES), times (room for
 * slices + nreq + 1) the increasing times, out (room for (slices + nreq + 1) * nodes) the values.
 * Returns dg_hji_solve's statuses; DG_ERR_ARG for bad times or too many. */
dg_status       dg_hji_problem_solve_slices(const dg_hji_problem *p, int slices, int nreq, const double *req,
                                            int *nt, double *times, double *out, dg_hji_stats *stats,
                                            dg_err *e);
/* The same at nt increasing times (the last p->t_end; a stationary problem: nt = 1) into out (nt, nodes),
 * from the problem's v0 (dg_hji_problem_v0) with its obstacle (games of kind). */
dg_status       dg_hji_problem_solve_at(const dg_hji_problem *p, int nt, const double *times, double *out,
                                        dg_hji_stats *stats, dg_err *e);
/* The value at tau = 0 the solve starts from: the target (a game of kind) or p->initial. */
const double   *dg_hji_problem_v0(const dg_hji_problem *p);
/* The terminal cost g(x) of a payoff: cost problem, x'Q_T x (0 for the others): what a simulation of
 * the finite horizon adds at t_end (times e^{-rho t_end}) to the running cost it has added up. */
double          dg_hji_problem_terminal_cost(const dg_hji_problem *p, const double *x);
/* A model game's episode variables as the grid holds them (model.episode.grid; docs/models.md) into
 * aux (room for 16); returns their count (0 for another game). */
int             dg_hji_problem_episode(const dg_hji_problem *p, double *aux);

/* ------------------------------------------------------------- simulation */
/* The value over time-to-go that strategies read: nt slices v (nt, nodes; the grid's) at the
 * increasing times-to-go t[] (>= 0), the last one the horizon T (t_end). nt = 1: one value for every
 * time (a stationary value: a game of degree, a converged tube, or a file of one time). */
typedef struct dg_hji_slices {
    int           nt;
    const double *t;                      /* (nt) times-to-go                                  */
    const double *v;                      /* (nt, nodes)                                       */
} dg_hji_slices;
/* V(x, tau) and its gradient (grad: ndim, may be NULL): dg_hji_interp in space on the two slices
 * around tau, linear between them in time; tau is clamped into [t[0], t[nt - 1]]. */
double dg_hji_slices_interp(const dg_hji_grid *g, const dg_hji_slices *V, double tau, const double *x,
                            double *grad);

/* Both players follow the equilibrium feedback of a value V (p's grid) at the current time-to-go:
 * at time t the inputs of grad V(x, T - t) (T = V's last time; past T, time-to-go 0: V's first
 * slice; one slice: that one throughout), bang-bang (dg_hji_game_optimal) or with a boundary layer,
 * held over an RK2 (midpoint) step of dt; periodic axes wrap into [lo, hi). Stops when the target
 * (p->target <= 0) is reached: capture, else escape after t_max. */
typedef struct dg_hji_sim_step {
    int64_t       step, steps;            /* this step (0 .. steps) and the most there can be  */
    double        t;                      /* step * dt                                         */
    const double *x, *u, *d;              /* the state (nx) and both players' inputs there     */
    double        value, target;          /* V(x, T - t) and the target's l(x) (<= 0: captured) */
} dg_hji_sim_step;
/* Called at every step (the capture step included); a non-zero return stops the simulation. */
typedef int (*dg_hji_sim_fn)(void *user, const dg_hji_sim_step *s);

typedef struct dg_hji_sim_opts {
    double        t_max;                  /* > 0: the horizon (s)                              */
    double        dt;                     /* > 0: the step; 0: dg_hji_sim_dt                   */
    int64_t       max_steps;              /* t_max / dt above this is refused (DG_ERR_ARG)     */
    double        layer;                  /* >= 0: the boundary layer (dg_hji_feedback); 0: bang-bang */
    const char   *csv_path;               /* non-NULL: one CSV row per step, written atomically:
                                             t,x0..,u0..,d0..,value,target                     */
    dg_hji_sim_fn on_step;                /* may be NULL                                       */
    void         *user;
} dg_hji_sim_opts;

typedef struct dg_hji_sim_result {
    int     captured;                     /* 1: the target was reached                         */
    double  capture_time;                 /* when (s), or -1                                   */
    double  dt;                           /* the step used                                     */
    int64_t steps;                        /* ceil(t_max / dt)                                  */
    int64_t rows;                         /* steps simulated (CSV rows)                        */
    double  value0;                       /* V(x0) at the time-to-go T, to compare with payoff  */
    double  payoff;                       /* a game of degree: the payoff along the path (NAN for a
                                             game of kind): int e^{-rho t} L dt by the midpoint
                                             rule, plus e^{-rho T} g(x(T)) (cost, finite horizon),
                                             or plus e^{-rho t_max} V(x(t_max)), the value of the
                                             rest (cost, stationary); payoff: time: the time
                                             to where the path crosses the target's rim (l
                                             linear over the last step; t_max when not
                                             captured)                                         */
} dg_hji_sim_result;

/* Both players' equilibrium inputs at x (nx) from the gradient p of V(x, tau) (dg_hji_slices_interp)
 * into u (u.dim) and d (d.dim); returns V(x, tau). layer 0: bang-bang (dg_hji_game_optimal). layer
 * in (0, 1]: a boundary layer against chattering: with s = G^T p (D^T p for d), a box input j moves
 * linearly from its centre to the bound when |s_j| < layer |p| |G e_j| (the switching function is
 * within about asin(layer) of changing sign), a ball input takes centre +- radius s / max(|s|,
 * layer |p| |G|_F). Affine games only (zeros otherwise). */
double    dg_hji_feedback(const dg_hji_problem *p, const dg_hji_slices *V, double tau, double layer,
                          const double *x, double *u, double *d);
/* The automatic step from x0 (nx): a quarter of a cell per step at the speed the equilibrium inputs
 * of V(., T) give there (0.01 when still), at most t_max / 200. */
double    dg_hji_sim_dt(const dg_hji_problem *p, const dg_hji_slices *V, const double *x0, double t_max);
/* Simulates from x0 (nx) with V (p's grid) into r. A game of degree with a running cost is not over
 * at the target; over a finite horizon it ends at t_end (t_max is not used; dt is shortened so the
 * last step lands on t_end), so that r->payoff and r->value0 measure the same game. Returns DG_OK, DG_ERR_ARG (bad options or slices,
 * too many steps: nothing written), DG_ERR_IO (the CSV), DG_ERR_INTERRUPTED (on_step stopped it; no
 * CSV). */
dg_status dg_hji_simulate(const dg_hji_problem *p, const dg_hji_slices *V, const double *x0,
                          const dg_hji_sim_opts *o, dg_hji_sim_result *r, dg_err *e);

/* ---------------------------------------------------------------- pictures */
/* The 2-D slice of v (g's nodes) through axes 0 and 1 at the other axes' coordinates at[] (ndim;
 * at[0], at[1] unused), by interpolation, into out (n1, n0): rows from axis 1's high end down
 * (image order), columns along axis 0. */
void    dg_hji_slice2d(const dg_hji_grid *g, const double *v, const double *at, double *out);
/* One segment of a contour, in index coordinates of the field (column i, row j, fractional). */
typedef void (*dg_hji_segment_fn)(void *user, float i0, float j0, float i1, float j1);
/* The zero level set of a 2-D field v (ny rows of nx) by marching squares: for every cell whose
 * corners change sign ({v <= 0} against {v > 0}), the segment between the edge crossings (linear
 * interpolation), two at a saddle. seg (may be NULL) gets each; returns how many. */
int64_t dg_hji_contour(const double *v, int nx, int ny, dg_hji_segment_fn seg, void *user);
/* A value's slice as a picture, drawn again and again (what `difgames hji view` shows): the layout of
 * dg_hji_plot_value's figure for grid g of game (axes 0 and 1 named by dg_hji_axis_name, a colour
 * bar over [vlo, vhi], vname naming it), made once; each dg_hji_figure_draw paints a slice into an
 * image of the figure's size.
 *
 *     dg_hji_figure *f = dg_hji_figure_create(&vf.grid, vf.game, lo, hi, "V", &e);
 *     dg_image *img = dg_image_create(dg_hji_figure_width(f), dg_hji_figure_height(f), 0xffffff);
 *     dg_hji_figure_draw(f, img, &(dg_hji_figure_layer){.v = value, .at = at}, "air3d", &e);
 */
typedef struct dg_hji_figure dg_hji_figure;
typedef struct dg_hji_figure_layer {
    const double *v;                      /* (nodes) the value to paint (colours, zero set)    */
    const double *at;                     /* (ndim) the other axes' coordinates (at[2..])      */
    int           levels;                 /* > 0: that many more contours of the slice, evenly
                                             spaced inside its range (games of degree)         */
    const double *target;                 /* (nodes) or NULL: its zero set drawn dashed red    */
    const double *obstacle;               /* (nodes) or NULL: where > 0, hatched grey          */
    const double *path;                   /* (npath, 2) points on axes 0 and 1, or NULL         */
    int           npath;
} dg_hji_figure_layer;
/* NULL with e set (DG_ERR_ARG: fewer than 2 axes or 2 nodes on one; DG_ERR_NOMEM). */
dg_hji_figure *dg_hji_figure_create(const dg_hji_grid *g, const char *game, double vlo, double vhi,
                                    const char *vname, dg_err *e);
void           dg_hji_figure_free(dg_hji_figure *f);                /* NULL is harmless */
int            dg_hji_figure_width(const dg_hji_figure *f);
int            dg_hji_figure_height(const dg_hji_figure *f);
/* Paints the slice of layer->v through axes 0 and 1 at layer->at as a heat map with its zero level
 * set (white), the contours, target, obstacles and path of the layer, the axes, the colour bar and
 * title over img (which must be the figure's size: else DG_ERR_ARG). DG_ERR_NOMEM, else DG_OK. */
dg_status      dg_hji_figure_draw(dg_hji_figure *f, dg_image *img, const dg_hji_figure_layer *layer,
                                  const char *title, dg_err *e);
/* The point of axes 0 and 1 (x[0], x[1]) at pixel (px, py) of the figure: 1 inside the plot box,
 * 0 outside (x untouched). */
int            dg_hji_figure_point(const dg_hji_figure *f, double px, double py, double *x);
/* The pixel of the point (x0, x1) of axes 0 and 1 (px, py), inside the plot box or not. */
void           dg_hji_figure_pixel(const dg_hji_figure *f, double x0, double x1, double *px, double *py);

/* An animated GIF of a simulation: pass dg_hji_play_gif_step as dg_hji_sim_opts.on_step with the GIF
 * as user. A frame every ceil(steps / 120)-th step, at capture and at the last (at most 122), laid out
 * as dg_hji_plot_value's figure (one colour scale, V's range): the slice of V (at t_end) through the
 * state's axes 2.. with its zero set, the path so far over axes 0 and 1, the time and V in the title. */
typedef struct dg_hji_play_gif dg_hji_play_gif;
/* NULL with e set (DG_ERR_NOMEM, the file's DG_ERR_IO); p and V must outlive the GIF. */
dg_hji_play_gif *dg_hji_play_gif_begin(const char *path, const dg_hji_problem *p, const double *V, double t_end,
                                       dg_err *e);
int              dg_hji_play_gif_step(void *user, const dg_hji_sim_step *s);  /* non-zero: failed   */
const dg_err    *dg_hji_play_gif_error(const dg_hji_play_gif *g);             /* why a step failed  */
dg_status        dg_hji_play_gif_end(dg_hji_play_gif *g, dg_err *e);         /* writes it, frees g */
void             dg_hji_play_gif_abort(dg_hji_play_gif *g);                   /* no file; NULL ok   */

/* --------------------------------------------------------------- value files */
/* A game's fingerprint, what two solves of the same game share whatever the config's spelling:
 * the payoff type and discount, then at DG_HJI_PRINT_NODES nodes spread over p's grid the
 * Hamiltonian at a fixed gradient (dynamics, input sets and roles, running costs), the value the
 * solve starts from (target or terminal cost) and the obstacle (or held nodes). Into out
 * (DG_HJI_PRINT_MAX); returns the count. A value file stores it (metadata 'game_print') and
 * dg_hji_value_check compares it, so a file solved for another game of the same name (game:
 * linear or model with other terms, other costs or obstacles) is refused. */
int dg_hji_game_print(const dg_hji_problem *p, double *out);
/* A value file of `difgames hji solve`: safetensors with 'value' (the grid's shape) at t_end,
 * 'value_1' .. at earlier times, and metadata format, game, param (its constants' values in the
 * game's order, zeros up to 16), lo, hi, n,
 * periodic, times, config. */
typedef struct dg_hji_value {
    struct dg_st_file *f;                 /* the loaded file                                   */
    char        path[512];                /* for messages                                      */
    dg_hji_grid grid;                     /* rebuilt from the metadata                         */
    char        game[32];                 /* "" if the file does not say                       */
    char        source[16];               /* "model" or "builtin" (dg_hji_problem_source); files
                                             before it: "model" for game "model", else "builtin" */
    double      param[16];                /* the game's constants (nparam of them; -1: absent) */
    int         nparam;
    int         nt;                       /* stored times                                      */
    double      times[DG_HJI_MAX_TIMES];
    unsigned char sampled[DG_HJI_MAX_TIMES]; /* 1: a time-slice sample for the strategies (solve's
                                           * --slices), not a time asked for; plots leave it out */
    int         nprint;                   /* the game's fingerprint (dg_hji_game_print); 0: absent */
    double      print[DG_HJI_PRINT_MAX];
    int         payoff;                   /* what the value is (dg_hji_payoff_type), from the
                                             fingerprint's first number: KIND when it is absent */
    double      discount;                 /* a game of degree's discount (the fingerprint's second) */
} dg_hji_value;

/* Loads path and checks its metadata and tensors (DG_ERR_FORMAT naming the file and what is wrong).
 * dg_hji_value_parse does the same from memory (label names it). Close with dg_hji_value_close. */
dg_status dg_hji_value_open(const char *path, dg_hji_value *v, dg_err *e);
dg_status dg_hji_value_parse(const void *buf, size_t len, const char *label, dg_hji_value *v, dg_err *e);
void      dg_hji_value_close(dg_hji_value *v);                            /* NULL and twice are harmless */
/* Time index i (0 .. nt-1, the last is t_end) into out (grid.nodes doubles); DG_ERR_NONFINITE when a
 * value is NaN or infinite. */
dg_status dg_hji_value_read(const dg_hji_value *v, int i, double *out, dg_err *e);
/* Every stored time into out (nt * grid.nodes doubles, time index 0 first), as dg_hji_value_read;
 * with v->times, the slices strategies read (dg_hji_slices). */
dg_status dg_hji_value_read_all(const dg_hji_value *v, double *out, dg_err *e);
/* DG_OK when v was solved for p (config names p's file in messages): the same game and constants,
 * the same grid axis by axis (nodes, bounds, periodic); else DG_ERR_ARG saying what differs
 * (another game, another grid, transposed axes). */
dg_status dg_hji_value_check(const dg_hji_value *v, const dg_hji_problem *p, const char *config, dg_err *e);
/* The figure of `difgames hji plot` as a PNG at path (atomically): the heat map of the value at t_end
 * with a colour bar, axes with ticks named by the game's state variables (dg_hji_axis_name), on the
 * slice through axes 0 and 1 at at[2..] (at NULL, or at[0], at[1]: unused; NULL: the middle of each
 * other axis), and over the heat map (dg_hji_plot_describe says which, with the title and the colour
 * bar's name): a game of kind's zero level sets of the stored times asked for (t_end and solve's
 * times, not the strategies' time-slice samples) with a legend of the times; a game of degree's
 * level sets of the value at t_end at the colour bar's labelled values. Returns DG_OK,
 * dg_hji_value_read's errors, DG_ERR_NOMEM or the PNG's DG_ERR_IO. */
dg_status dg_hji_plot_value(const dg_hji_value *v, const double *at, const char *path, dg_err *e);
/* About how many level sets dg_hji_plot_value draws of a game of degree. */
#define DG_HJI_PLOT_LEVELS 8
/* What dg_hji_plot_value draws of a value file's slice. */
typedef struct dg_hji_plot_spec {
    char   title[192];                    /* "air3d: zero level sets of V, psi = 3.14",
                                             "pursuit2d: level sets of V, the time to reach the target" */
    char   bar[64];                       /* the colour bar's name: what V is, its unit, its time  */
    int    nlevels;                       /* a game of degree: the values whose level sets are drawn,
                                             round numbers inside (lo, hi), increasing, the colour
                                             bar's labelled ticks; 0 for a game of kind (the zero
                                             level sets of its times)                              */
    double level[32];
} dg_hji_plot_spec;
/* Fills s for v's slice at at (as dg_hji_plot_value's) whose values at t_end span [lo, hi], by what
 * v is (v->payoff): the title naming the game, the slice's other axes and what is drawn, the colour
 * bar's name, a game of degree's levels (about DG_HJI_PLOT_LEVELS). */
void      dg_hji_plot_describe(const dg_hji_value *v, const double *at, double lo, double hi, dg_hji_plot_spec *s);
/* Writes nt values (nt, nodes) at times[] of problem p into path (atomically), as float32 when f32;
 * sampled (NULL: none) flags the times that are only time-slice samples for the strategies (plots
 * leave them out); config_yaml (may be NULL) is stored too. */
dg_status dg_hji_value_write(const char *path, const dg_hji_problem *p, int nt, const double *times,
                             const unsigned char *sampled, const double *vals, int f32, const char *config_yaml,
                             dg_err *e);
/* Bytes dg_hji_value_write allocates for nt times (the writer's copies). */
double    dg_hji_value_memory(const dg_hji_problem *p, int nt, int f32);
/* Bytes of the value file of nt times (float32 when f32), metadata included (config_bytes: the
 * config's YAML): to refuse a file the disk cannot hold (dg_disk_free) before the solve. */
double    dg_hji_value_file_bytes(const dg_hji_problem *p, int nt, int f32, double config_bytes);
/* Bytes at the peak of solving p for nt stored times, nland of them landed on by the solve (the
 * rest sampled: dg_hji_problem_solve_slices; nland = nt for a plain dg_hji_solve), and writing its
 * value file (float32 when f32): the target and obstacle, then the larger of the solve
 * (dg_hji_solve_memory, its output included) with the nt stored values, and the nt values with the
 * file's copies. To refuse a grid that cannot fit (dg_mem_check) up front. */
double    dg_hji_problem_memory(const dg_hji_problem *p, int nt, int nland, int f32);

/* ------------------------------------------------------ value-file flows */
/* What `difgames hji solve|play|versus` do, as calls: solve a problem into a value file, load a value
 * file's slices for a problem, play the equilibrium against them. Each says which step or input
 * failed (dg_hji_file_step), so that a caller can name its own option or key in its message; e->msg
 * names neither. */
typedef enum dg_hji_file_step {
    DG_HJI_FILE_OK = 0,
    DG_HJI_FILE_COUNT,       /* the times, the slices and t_end: more than DG_HJI_MAX_TIMES (DG_ERR_ARG) */
    DG_HJI_FILE_TIMES,       /* the times are not increasing inside (0, t_end) (DG_ERR_ARG)            */
    DG_HJI_FILE_STATIONARY,  /* times asked of a stationary problem (one value; DG_ERR_ARG)            */
    DG_HJI_FILE_MEMORY,      /* more than dg_mem_limit (DG_ERR_NOMEM; e says what needs how much): the
                                grid, the slices and times (a solve), the file's times (a load)      */
    DG_HJI_FILE_DISK,        /* the value file would not fit on its disk (DG_ERR_IO)                 */
    DG_HJI_FILE_SOLVE,       /* the solve failed (dg_hji_solve's status; e starts with the label)    */
    DG_HJI_FILE_WRITE,       /* the file: the config's YAML, out of memory, writing it               */
    DG_HJI_FILE_READ,        /* the file cannot be read, or was not solved for the problem           */
    DG_HJI_FILE_STEPS,       /* play: t_max / dt more than max_steps, or bad options (DG_ERR_ARG)    */
    DG_HJI_FILE_GIF,         /* play: the GIF (DG_ERR_NOMEM, DG_ERR_IO)                              */
    DG_HJI_FILE_SIM          /* play: the simulation or its CSV (dg_hji_simulate's statuses)         */
} dg_hji_file_step;

/* A solve into a value file. */
typedef struct dg_hji_file_opts {
    int           slices;                 /* time-slice samples for the strategies: the first step past each
                                             of slices evenly spaced times-to-go 0 .. t_end; < 2: none */
    int           ntimes;                 /* times asked for besides t_end, landed on: increasing in */
    const double *times;                  /* (0, t_end); none for a stationary problem             */
    int           f32;                    /* the file in float32 (set p->opts.real to solve in it too) */
    const char   *label;                  /* names the problem in messages (its config's path); NULL: p->name */
    const dg_cfg *cfg;                    /* the config, stored in the file as YAML; may be NULL   */
} dg_hji_file_opts;

typedef struct dg_hji_file_result {
    dg_hji_file_step step;                /* on failure: what failed                               */
    int           nt;                     /* plan: the most times stored; solve: the times stored  */
    double        times[DG_HJI_MAX_TIMES];/* solve: the stored times, increasing, the last t_end   */
    double        memory;                 /* bytes at the peak (dg_hji_problem_memory)             */
    dg_hji_stats  stats;                  /* solve: the solver's numbers                           */
    int           cuts[DG_HJI_MAX_DIMS];  /* solve under mpirun: the boxes along each axis (hji_part.h) */
} dg_hji_file_result;

/* The checks of dg_hji_solve_file that need no disk and no solve: the count of times (COUNT), the
 * times (TIMES, STATIONARY), the memory (MEMORY); r->nt and r->memory set. */
dg_status dg_hji_solve_plan(const dg_hji_problem *p, const dg_hji_file_opts *o, dg_hji_file_result *r, dg_err *e);
/* Solves p (its opts: progress, threads, precision) and writes the value file at path (atomically;
 * dg_hji_value_write): t_end, o's times and the slices' samples, flagged as such. Checks as
 * dg_hji_solve_plan, then the disk (DISK) before the solve. Under mpirun (dg_dist_size() > 1) the
 * grid is split over the ranks (hji_part.h: p keeps only this rank's box afterwards) and every
 * rank writes its box into the file (MPI-IO, collective); the file has the same bytes as one
 * process's. Returns
 * DG_OK or the failed step's status. */
dg_status dg_hji_solve_file(dg_hji_problem *p, const dg_hji_file_opts *o, const char *path, dg_hji_file_result *r,
                            dg_err *e);

/* A value file's stored times for a problem, the slices strategies read. slices points into the
 * struct: do not copy it. */
typedef struct dg_hji_value_slices {
    dg_hji_value  file;                   /* the open file: grid, times, metadata                  */
    double       *v;                      /* (file.nt, nodes): every stored time, owned            */
    dg_hji_slices slices;                 /* {file.nt, file.times, v}                              */
} dg_hji_value_slices;
/* Opens path, checks it was solved for p (dg_hji_value_check; config names p's file), checks the
 * memory of its times in double (MEMORY) and reads them all. step (may be NULL) gets what failed
 * (READ, MEMORY); on failure nothing is left to free. Free with dg_hji_value_slices_free. */
dg_status dg_hji_value_load(const char *path, const dg_hji_problem *p, const char *config, dg_hji_value_slices *vs,
                            dg_hji_file_step *step, dg_err *e);
void      dg_hji_value_slices_free(dg_hji_value_slices *vs);              /* NULL and twice are harmless */

/* A play of both players' equilibrium feedback from a start state. */
typedef struct dg_hji_play_opts {
    double      t_max;                    /* > 0: the horizon (s)                                  */
    double      dt;                       /* > 0: the step; 0: dg_hji_sim_dt                       */
    int64_t     max_steps;                /* t_max / dt above this is refused (STEPS), nothing written */
    double      layer;                    /* the boundary layer (dg_hji_feedback); 0: bang-bang    */
    const char *csv_path;                 /* the trajectory as CSV (dg_hji_sim_opts), or NULL      */
    const char *gif_path;                 /* the game as a GIF (dg_hji_play_gif_*), or NULL        */
} dg_hji_play_opts;
/* The step (o->dt, or dg_hji_sim_dt from x0: r->dt, set even when STEPS refuses it), the bound on
 * steps, then dg_hji_simulate from x0 (nx) with V, drawing the GIF. step (may be NULL) gets what
 * failed (STEPS, GIF, SIM). */
dg_status dg_hji_play(const dg_hji_problem *p, const dg_hji_slices *V, const double *x0, const dg_hji_play_opts *o,
                      dg_hji_sim_result *r, dg_hji_file_step *step, dg_err *e);

#ifdef __cplusplus
}
#endif
#endif
