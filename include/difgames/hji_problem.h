/* difgames hji problem: a ready-to-solve game built from a config (dg_hji_problem_load): grid, game,
 * target, obstacles and options, the built-in games' table and keys, and its solves. Part of
 * difgames/hji.h (its opening shows a problem loaded, solved and read). */
#ifndef DIFGAMES_HJI_PROBLEM_H
#define DIFGAMES_HJI_PROBLEM_H

#include "difgames/api.h"
#include "difgames/config.h"
#include "difgames/hji_solve.h"

#ifdef __cplusplus
extern "C" {
#endif

struct dg_key;     /* difgames/keys.h    */

#define DG_HJI_PRINT_NODES 16             /* nodes a game's fingerprint samples                */
#define DG_HJI_PRINT_MAX (2 + 3 * DG_HJI_PRINT_NODES)

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
DG_API dg_hji_problem *dg_hji_problem_load(dg_cfg *cfg, dg_err *e);
/* As dg_hji_problem_load, for work at points alone (hji learn): a problem of up to DG_HJI_MAX_DIMS
 * state dimensions. Of at most DG_HJI_GRID_MAX_DIMS it is dg_hji_problem_load's, node arrays and
 * all; of more, its grid is a box whose n^d nodes are never allocated: target, obstacle, initial
 * and stop are NULL (dg_hji_problem_has_obstacle and _has_stop say what it has; the *_at functions
 * answer at any point) and payoff: time is refused (its v0 needs the grid). dg_hji_problem_load and
 * dg_hji_problem_load_split refuse more than DG_HJI_GRID_MAX_DIMS, naming the config's grid.n. */
DG_API dg_hji_problem *dg_hji_problem_load_points(dg_cfg *cfg, dg_err *e);
/* 1 when p has an obstacle field (a game of kind with obstacles or a model's avoid set: reach-avoid;
 * a game of degree holds its obstacles in v0 and the stop set), or a stop set (payoff: time), whether
 * or not its node arrays are built. */
DG_API int             dg_hji_problem_has_obstacle(const dg_hji_problem *p);
DG_API int             dg_hji_problem_has_stop(const dg_hji_problem *p);
/* The config key that makes p's sets time-varying ("target_velocity", "obstacles", "model.target",
 * "model.avoid"), or NULL when they are fixed. Such a problem's node arrays (target, obstacle) and the
 * *_at functions below hold the sets at tau = 0 (the game's time t_end); dg_hji_problem_solve_at asks
 * for the sets of every step's time (docs/hji.md, time-varying sets). */
DG_API const char     *dg_hji_problem_moving(const dg_hji_problem *p);
/* 1 when p's target moves in time (target_velocity, or a model's target of t), 0 else: a play tests
 * capture against the target of its time then (dg_hji_problem_sets_at), else as fixed sets. */
DG_API int             dg_hji_problem_target_moves(const dg_hji_problem *p);
DG_API void            dg_hji_problem_free(dg_hji_problem *p);                /* NULL is harmless             */
DG_API const char     *dg_hji_problem_name(int i);                            /* i-th known game; NULL past   */
/* Where p's game comes from: "model" (game: model; p->name is the file's model.name, which may be a
 * built-in's) or "builtin". */
DG_API const char     *dg_hji_problem_source(const dg_hji_problem *p);
DG_API double          dg_hji_problem_param(const dg_hji_problem *p, const char *name);  /* NaN: no such   */
DG_API const dg_hji_link *dg_hji_game_link(const char *game);                 /* NULL: none, or no such game  */
/* The config keys (difgames/keys.h; `difgames keys hji [GAME]`): dg_hji_keys, those of every game
 * (game, accuracy, mode, solver.*, obstacles[i].*; *n gets the count); dg_hji_game_keys, game's own
 * with its defaults (t_end, grid.min/max/n with one item per axis, then its constants) into out (room
 * for max), returning their count (more than max: some left out), or -1 for no such game. */
DG_API const struct dg_key *dg_hji_keys(int *n);
DG_API int             dg_hji_game_keys(const char *game, struct dg_key *out, int max);
DG_API const char     *dg_hji_game_summary(const char *game);                 /* a line; NULL: no such game    */
DG_API const char     *dg_hji_axis_name(const char *game, int axis);          /* "psi" (air3d, 2); NULL: none   */
/* Solves p to p->t_end with p->opts (float32 inside if p->opts.real says so) into out (nodes). */
DG_API dg_status       dg_hji_problem_solve(const dg_hji_problem *p, double *out, dg_hji_stats *stats, dg_err *e);
/* Solves p to p->t_end and keeps the value at several times-to-go, for strategies that need
 * V(x, t_end - t) (dg_hji_slices): at the nreq increasing times req[] in (0, t_end) (the steps land
 * on them, as dg_hji_solve's times), at t_end, and at the first step reached at or past each of the
 * marks k t_end / (slices - 1), k = 0 .. slices - 1 (the mark 0 is the initial value; these samples
 * do not change the steps, so V(., t_end) has the same bits as without them). slices 0 or 1: no
 * marks. *nt gets the count (at most slices + nreq + 1, <= DG_HJI_MAX_TIMES), times (room for
 * slices + nreq + 1) the increasing times, out (room for (slices + nreq + 1) * nodes) the values.
 * Returns dg_hji_solve's statuses; DG_ERR_ARG for bad times or too many. */
DG_API dg_status       dg_hji_problem_solve_slices(const dg_hji_problem *p, int slices, int nreq, const double *req,
                                                   int *nt, double *times, double *out, dg_hji_stats *stats,
                                                   dg_err *e);
/* The same at nt increasing times (the last p->t_end; a stationary problem: nt = 1) into out (nt, nodes),
 * from the problem's v0 (dg_hji_problem_v0) with its obstacle (games of kind). */
DG_API dg_status       dg_hji_problem_solve_at(const dg_hji_problem *p, int nt, const double *times, double *out,
                                               dg_hji_stats *stats, dg_err *e);
/* The value at tau = 0 the solve starts from: the target (a game of kind) or p->initial. */
DG_API const double   *dg_hji_problem_v0(const dg_hji_problem *p);
/* The problem's sets at any n points x (n, nx) row-major, not only the grid's nodes (a learned value
 * needs them where no grid is): each value has the bits its node array holds at a node (the same
 * formula, in the same order), and grad (n, nx), unless NULL, gets its gradient in x. DG_ERR_ARG for
 * bad arguments or a problem not loaded from a config. They hold no arrays: a rank's block answers
 * everywhere too.
 * target_at: the target l(x) (<= 0 in the target set; p->target): a built-in game's ball, or a model
 * file's model.target (1, gradient 0, without one). Gradients: a ball's (x - c) / |x - c| on its
 * axes, 0 at its centre (the least subgradient); a model's the expression's symbolic derivatives
 * (libmatheval: exact, with its functions' own values at their kinks, e.g. abs' = sign). A model's
 * periodic axes are wrapped into the grid's [lo, lo + period) first (the built-ins' balls wrap
 * their distance). */
DG_API dg_status       dg_hji_problem_target_at(const dg_hji_problem *p, int n, const double *x, double *l,
                                                double *grad, dg_err *e);
/* obstacle_at: the obstacle field g(x) (> 0 inside; p->obstacle, reach-avoid): the config's
 * obstacles' union negated, max'd with a model's model.avoid; the gradient of the piece that is
 * active (the first shape on ties). A ball as target_at's; a box's: outside, the gradient of its
 * distance (smooth there); inside and on its faces, edges and corners, the outward normal of the
 * first face nearest (an element of the Clarke subdifferential), 0 along an axis where x is at the
 * box's middle. No obstacles: -INFINITY, gradient 0 (max(V, g) = V). At a game of degree, the
 * obstacles' field its v0 and stop are made from. */
DG_API dg_status       dg_hji_problem_obstacle_at(const dg_hji_problem *p, int n, const double *x, double *g,
                                                  double *grad, dg_err *e);
/* sets_at: the target l(x, t) (target_at's formula) and, unless g is NULL, the obstacle field g(x, t)
 * (obstacle_at's) at the game's time t (0 at a play's start, t_end at the horizon: the sets a value
 * read at the time-to-go t_end - t was solved against); for fixed sets target_at's and obstacle_at's
 * bits at any t, for moving ones the sets moved to t (docs/hji.md, time-varying sets). What a
 * simulation tests capture against. */
DG_API dg_status       dg_hji_problem_sets_at(const dg_hji_problem *p, double t, int n, const double *x, double *l,
                                              double *g, dg_err *e);
/* v0_at: the solve's initial value (dg_hji_problem_v0): a game of kind's target (target_at); payoff:
 * cost's terminal cost (dg_hji_problem_terminal_cost; its gradient (Q_T + Q_T') x plus a model's
 * costs' symbolic derivatives); payoff: time's the cap in the obstacles, d / c inside the target
 * (its front speed c from the target's central differences, the node's own on the axes where x is
 * a node, x -+ dx elsewhere), 0 elsewhere, its gradient by central differences of step 1e-6 dx_k
 * (payoff: time needs the arrays built, for the largest front speed: DG_ERR_ARG before). */
DG_API dg_status       dg_hji_problem_v0_at(const dg_hji_problem *p, int n, const double *x, double *v,
                                            double *grad, dg_err *e);
/* stop_at: where a game of degree is over (p->stop, payoff: time): -1 in the target and the
 * obstacles, 1 elsewhere; 1 everywhere for the others (they have no stop set). */
DG_API dg_status       dg_hji_problem_stop_at(const dg_hji_problem *p, int n, const double *x, double *stop,
                                              dg_err *e);
/* The terminal cost g(x) of a payoff: cost problem, x'Q_T x (0 for the others): what a simulation of
 * the finite horizon adds at t_end (times e^{-rho t_end}) to the running cost it has added up. */
DG_API double          dg_hji_problem_terminal_cost(const dg_hji_problem *p, const double *x);
/* A model game's episode variables as the grid holds them (model.episode.grid; docs/models.md) into
 * aux (room for 16); returns their count (0 for another game). */
DG_API int             dg_hji_problem_episode(const dg_hji_problem *p, double *aux);

#ifdef __cplusplus
}
#endif
#endif
