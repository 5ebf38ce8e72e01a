/* difgames hji simulation: both players follow the equilibrium feedback of a solved value (its
 * slices over time-to-go) from a start state. Part of difgames/hji.h. */
#ifndef DIFGAMES_HJI_SIM_H
#define DIFGAMES_HJI_SIM_H

#include "difgames/api.h"
#include "difgames/hji_problem.h"

#ifdef __cplusplus
extern "C" {
#endif

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
DG_API double dg_hji_slices_interp(const dg_hji_grid *g, const dg_hji_slices *V, double tau, const double *x,
                                   double *grad);

/* A value the strategies read, whatever holds it: the grid's slices (dg_hji_source_slices), a learned
 * network (dg_hji_learn_source, hji_learn.h), or a caller's own. eval fills V (B; may be NULL) and
 * grad_x V (B, nx; may be NULL) at the B states x (B, nx) and times-to-go tau (B, >= 0), the whole
 * batch in one call (a network evaluates its points together: one evaluation a step for every state
 * of a batch rollout), and returns DG_OK or its error in e. The library's grid code never calls the
 * learner: a network comes in through eval (the learner is compiled twice, the grid solver once). */
typedef struct dg_hji_source dg_hji_source;
typedef dg_status (*dg_hji_source_fn)(const dg_hji_source *s, int64_t B, const double *x, const double *tau,
                                      double *V, double *grad, dg_err *e);
struct dg_hji_source {
    dg_hji_source_fn      eval;
    double                horizon;        /* T: the time-to-go at time 0 of a play (the slices' last time,
                                             a network's t_end); at time t a player reads max(T - t, 0) */
    const void           *user;           /* eval's own (a network)                                 */
    const dg_hji_problem *problem;        /* eval's problem (a network's l(x)), or NULL             */
    const dg_hji_grid    *grid;           /* dg_hji_source_slices: the slices' grid ...             */
    dg_hji_slices         slices;         /* ... and the slices (their arrays, not copied, must outlive it) */
};
/* A source reading V on grid g (dg_hji_slices_interp, so every strategy built on it is the slices'
 * own, bit for bit); horizon V's last time. */
DG_API dg_hji_source dg_hji_source_slices(const dg_hji_grid *g, const dg_hji_slices *V);
/* s->eval, after checking its arguments (DG_ERR_ARG: no source or eval, B < 0, no x or tau). */
DG_API dg_status dg_hji_source_eval(const dg_hji_source *s, int64_t B, const double *x, const double *tau,
                                    double *V, double *grad, dg_err *e);

/* s's value at the time-to-go tau at every node of grid g (g->ndim the source's state size) into out
 * (nodes), in one evaluation (a learned value on a grid: hji tabulate, plot, view). DG_OK,
 * DG_ERR_NOMEM or the source's error. */
DG_API dg_status dg_hji_source_tabulate(const dg_hji_source *s, const dg_hji_grid *g, double tau, double *out,
                                        dg_err *e);

/* Both players follow the equilibrium feedback of a value V (p's grid) at the current time-to-go:
 * at time t the inputs of grad V(x, T - t) (T = V's last time; past T, time-to-go 0: V's first
 * slice; one slice: that one throughout), bang-bang (dg_hji_game_optimal) or with a boundary layer,
 * held over an RK2 (midpoint) step of dt; periodic axes wrap into [lo, hi). Stops when the target
 * is reached (l(x) <= 0: p->target interpolated, or where p holds no array of the whole grid, a
 * problem of more than DG_HJI_GRID_MAX_DIMS axes among them, its formula dg_hji_problem_target_at;
 * a target that moves in time, dg_hji_problem_target_moves: l(x, t) of the game's time t, the one
 * the value read at T - t was solved against, from dg_hji_problem_sets_at, past t_end at t_end):
 * capture, else escape after t_max. */
typedef struct dg_hji_sim_step {
    int64_t       step, steps;            /* this step (0 .. steps) and the most there can be  */
    double        t;                      /* step * dt                                         */
    const double *x, *u, *d;              /* the state (nx) and both players' inputs there     */
    double        value, target;          /* V(x, T - t) and the target's l(x) at t (<= 0: captured) */
    double        obstacle;               /* the obstacle field g(x) at t (> 0 inside; -INFINITY
                                             without obstacles: a game of degree holds them in its
                                             value); sets that move, from dg_hji_problem_sets_at */
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
    double  obstacle_time;                /* the first step's time inside an obstacle of its time
                                             (step.obstacle > 0), or -1: the play goes on (the
                                             value keeps the equilibrium out; this says if not)  */
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
DG_API double    dg_hji_feedback(const dg_hji_problem *p, const dg_hji_slices *V, double tau, double layer,
                                 const double *x, double *u, double *d);
/* Both players' inputs at time t of a play at the B states x (B, nx), as dg_hji_feedback, each from
 * its own value: u (B, u.dim; may be NULL) from the gradient of su at its time-to-go max(su->horizon -
 * t, 0), d (B, d.dim; may be NULL) from sd's at its own (sd NULL or su: the same evaluation, so a
 * slices source gives dg_hji_feedback's inputs bit for bit); V (B; may be NULL) gets su's value. One
 * evaluation of each source for the whole batch. DG_OK, DG_ERR_ARG, DG_ERR_NOMEM or a source's
 * error. */
DG_API dg_status dg_hji_feedback_batch(const dg_hji_problem *p, const dg_hji_source *su, const dg_hji_source *sd,
                                       double t, double layer, int64_t B, const double *x, double *u, double *d,
                                       double *V, dg_err *e);
/* The automatic step from x0 (nx): a quarter of a cell per step at the speed the equilibrium inputs
 * of V(., T) give there (0.01 when still), at most t_max / 200. */
DG_API double    dg_hji_sim_dt(const dg_hji_problem *p, const dg_hji_slices *V, const double *x0, double t_max);
/* Simulates from x0 (nx) with V (p's grid) into r. A game of degree with a running cost is not over
 * at the target; over a finite horizon it ends at t_end (t_max is not used; dt is shortened so the
 * last step lands on t_end), so that r->payoff and r->value0 measure the same game. Returns DG_OK, DG_ERR_ARG (bad options or slices,
 * too many steps: nothing written), DG_ERR_IO (the CSV), DG_ERR_INTERRUPTED (on_step stopped it; no
 * CSV). */
DG_API dg_status dg_hji_simulate(const dg_hji_problem *p, const dg_hji_slices *V, const double *x0,
                                 const dg_hji_sim_opts *o, dg_hji_sim_result *r, dg_err *e);
/* dg_hji_sim_dt with each player's value its own source (sd NULL: su's) into *dt; DG_OK or a source's
 * error. */
DG_API dg_status dg_hji_sim_dt_sources(const dg_hji_problem *p, const dg_hji_source *su, const dg_hji_source *sd,
                                       const double *x0, double t_max, double *dt, dg_err *e);
/* dg_hji_simulate with the controller u following su and the disturbance d following sd (NULL: su),
 * each at its own time-to-go (dg_hji_feedback_batch); the value column and r->value0 are su's. A
 * slices source gives dg_hji_simulate's bits. A source's error stops it (nothing written). */
DG_API dg_status dg_hji_simulate_sources(const dg_hji_problem *p, const dg_hji_source *su, const dg_hji_source *sd,
                                         const double *x0, const dg_hji_sim_opts *o, dg_hji_sim_result *r,
                                         dg_err *e);
/* B plays in lockstep from the states x0 (B, nx), u following su and d following sd (NULL: su), one
 * evaluation of each source a step for all of them (dg_hji_feedback_batch), RK2 steps of o->dt (> 0;
 * 0: the least of the states' automatic steps) for o->t_max, o->layer as in dg_hji_simulate (its CSV,
 * on_step and a game of degree's payoff are not used: a game with a running cost, payoff: cost, is
 * refused). A play stops where it reaches the target (l <= 0, as dg_hji_simulate reads it: on a
 * problem without a grid, its formula; a moving target, at the step's time). capture_time (B; may be NULL) gets
 * when, or -1; min_target (B; may be NULL) the least l(x) along the path (> 0: never captured).
 * DG_OK, DG_ERR_ARG (bad options, o->t_max / dt above o->max_steps), DG_ERR_NOMEM or a source's
 * error. */
DG_API dg_status dg_hji_simulate_batch(const dg_hji_problem *p, const dg_hji_source *su, const dg_hji_source *sd,
                                       int64_t B, const double *x0, const dg_hji_sim_opts *o, double *capture_time,
                                       double *min_target, dg_err *e);

#ifdef __cplusplus
}
#endif
#endif
