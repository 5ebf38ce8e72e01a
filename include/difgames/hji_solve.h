/* difgames hji solve: the level-set solver (dg_hji_solve), its options and numbers, gradients and
 * interpolation of a value anywhere. Part of difgames/hji.h.
 *
 * Conventions (docs/hji.md has the details and the measurements):
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
 */
#ifndef DIFGAMES_HJI_SOLVE_H
#define DIFGAMES_HJI_SOLVE_H

#include "difgames/api.h"
#include "difgames/hji_game.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_HJI_MAX_STEPS 100000000  /* most time steps of a solve (t_end / dt): refused past it */

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
typedef enum dg_hji_method {       /* how a stationary problem (opts.tol > 0) is solved                */
    DG_HJI_METHOD_MARCH = 0,       /* time-marching (the scheme of the finite horizon) to steady state */
    DG_HJI_METHOD_SWEEP            /* fast sweeping: Lax-Friedrichs Gauss-Seidel, 2^d orderings       */
} dg_hji_method;

typedef enum {                    /* under MPI (hji_part.h): how the grid is cut over the ranks  */
    DG_HJI_SPLIT_AUTO = 0,        /* the cut with the least halo (dg_hji_part_cuts), any axes but the last */
    DG_HJI_SPLIT_AXIS0            /* axis 0 alone (blocks may be narrower than the ghost layers) */
} dg_hji_split;

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
/* Time-varying sets: fills, at every node, the target l(x) (target: what BRT_TARGET takes the min
 * with) and, when the solve has an obstacle, the obstacle field (obstacle; NULL otherwise) at the
 * time-to-go tau. Called from the calling thread once a step, with the time the step reaches, before
 * the step's last stage applies the rules (Fisac et al. 2015's variational inequality with
 * time-varying sets, discretised as phi = max(min(phi, l(., tau)), g(., tau))). For a time to reach
 * (a game of degree with opts.stop) it fills instead the values the held nodes keep (target: as v0)
 * and the stop field (obstacle: <= 0 where the game is over). Returns 0, or non-zero to stop the
 * solve with DG_ERR_ARG. */
typedef int (*dg_hji_sets_fn)(void *user, double tau, double *target, double *obstacle);

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
    /* a warm start (dg_hji_warm_load): the solve starts from warm (nodes; NULL: from v0, the cold
       start) at time-to-go warm_t (>= 0, at most times[0]) instead of from v0 at 0; v0 still gives
       the held nodes and brt_target's min. A stationary solve: warm_t 0 (any start converges to
       the same steady value); a finite horizon: the same problem's value at warm_t (the solve goes
       on from there: Herbert et al. 2019, docs/hji.md) */
    const double      *warm;
    double             warm_t;
    dg_hji_progress_fn progress;          /* may be NULL                                       */
    void              *progress_user;
    /* time-varying target and obstacle (NULL: v0 and obstacle hold for every tau). v0 and obstacle
       (stop) must be the sets at tau = 0. Games of kind and times to reach (stop), not stationary, not
       split over ranks. */
    dg_hji_sets_fn     sets;
    void              *sets_user;
    /* a game with noise (gm->diffusion): candidate points per input component, evenly over its box
       (0: 101); the best is refined by a parabola through it and its neighbours when one player has one component */
    int                controls;
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

DG_API dg_hji_opts dg_hji_opts_default(void);                                 /* veryHigh, GLF, BRS, cfl 0.75   */
DG_API void        dg_hji_opts_accuracy(dg_hji_opts *o, dg_hji_accuracy a);   /* sets deriv and time            */
DG_API const char *dg_hji_accuracy_name(dg_hji_accuracy a);                   /* "low" .. "veryHigh"; "?"       */
DG_API dg_hji_accuracy dg_hji_accuracy_of(const dg_hji_opts *o);             /* the preset of o->deriv         */
DG_API int         dg_hji_accuracy_from_name(const char *s);                  /* a dg_hji_accuracy, or -1       */

/* Solves from v0 (nodes) and writes phi at the nt increasing times-to-go times[] (>= 0) into
 * out (nt, nodes). obstacle (nodes) may be NULL. All arrays are the caller's; the workspace
 * (about 3-4 value arrays plus tabulated dynamics) is allocated here once and freed before
 * returning. Deterministic: the same inputs and thread count give the same bits (and the
 * thread count does not change them either: every node is computed the same way by one thread).
 * Returns DG_OK, DG_ERR_ARG, DG_ERR_NOMEM, DG_ERR_NONFINITE (a NaN appeared) or DG_ERR_INTERRUPTED
 * (out holds the times reached). stats may be NULL. */
DG_API dg_status dg_hji_solve(const dg_hji_grid *g, const dg_hji_game *gm, const dg_hji_opts *o,
                              const double *v0, const double *obstacle, int nt, const double *times,
                              double *out, dg_hji_stats *stats, dg_err *e);
/* The same in float32 throughout (o->real is ignored): half the memory, 1.4-1.7x the speed. */
DG_API dg_status dg_hji_solve_f32(const dg_hji_grid *g, const dg_hji_game *gm, const dg_hji_opts *o,
                                  const float *v0, const float *obstacle, int nt, const double *times,
                                  float *out, dg_hji_stats *stats, dg_err *e);
/* Bytes dg_hji_solve (or dg_hji_solve_f32, as o->real says) will allocate for nt output times,
 * the caller's output array included: the value arrays the time scheme keeps, the dynamics tables
 * (judged from gm's dynamics at 65 nodes: gm may be NULL), dissipation tables, the threads'
 * workspaces. To refuse a grid that cannot fit (dg_mem_check) before allocating anything. */
DG_API double    dg_hji_solve_memory(const dg_hji_grid *g, const dg_hji_game *gm, const dg_hji_opts *o, int nt);
/* Nodal gradient (p- + p+)/2 of v (nodes) with the scheme o->deriv (and o->weno_eps, o->threads)
 * into grad (ndim, nodes), the caller's. Returns DG_OK, DG_ERR_ARG or DG_ERR_NOMEM. */
DG_API dg_status dg_hji_gradient(const dg_hji_grid *g, const dg_hji_opts *o, const double *v, double *grad,
                                 dg_err *e);
/* The one-sided derivatives themselves, as ToolboxLS's upwindFirst*: left = p-, right = p+, each
 * (ndim, nodes) or NULL (not both), with the grid's ghost cells. Returns as dg_hji_gradient. */
DG_API dg_status dg_hji_upwind(const dg_hji_grid *g, const dg_hji_opts *o, const double *v, double *left,
                               double *right, dg_err *e);

/* A game with noise (gm->diffusion): the inputs that optimise the diffusion scheme's discrete
 * Hamiltonian at node `node` of the value v (nodes), as the solver chose them (the candidates of
 * o->controls, refined), into u (gm->u.dim) and d (gm->d.dim; either may be NULL). For a game of
 * degree whose optimum depends on the Hessian (Merton's fraction: -(mu - r) V_w / (sigma^2 w V_ww)),
 * which the bang-bang dg_hji_game_optimal cannot give. Returns DG_OK or DG_ERR_ARG. */
DG_API dg_status dg_hji_noise_inputs(const dg_hji_grid *g, const dg_hji_game *gm, const dg_hji_opts *o,
                                     const double *v, int64_t node, double *u, double *d, dg_err *e);

/* ---------------------------------------------------------- interpolation */
/* The value of v (nodes) at any point x (ndim), multilinear, and its gradient into grad (ndim; may be
 * NULL): the multilinear blend of nodal central differences (one-sided at plain edges). Periodic
 * axes wrap; outside a plain axis the point is clamped to the edge and the value extrapolated
 * linearly with that gradient. Never NaN for a finite v (a NaN coordinate reads as the low edge). */
DG_API double dg_hji_interp(const dg_hji_grid *g, const double *v, const double *x, double *grad);
DG_API double dg_hji_interp_f32(const dg_hji_grid *g, const float *v, const double *x, double *grad);

#ifdef __cplusplus
}
#endif
#endif
