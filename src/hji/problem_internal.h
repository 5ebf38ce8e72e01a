/* What the problem's files share (src/hji: problem.c reads configs, problem_games.c holds the
 * built-in games, problem_nodes.c builds the node arrays). Private: not installed. */
#ifndef DG_HJI_PROBLEM_INTERNAL_H
#define DG_HJI_PROBLEM_INTERNAL_H

#include "difgames/hji.h"
#include "difgames/keys.h"

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
    /* the target l at the point x (nx), its gradient into grad (nx) unless NULL */
    double (*target)(const dg_hji_problem *p, const double *x, double *grad);
    const dg_hji_link *link;              /* a learning game whose state maps onto this one's, or NULL */
    /* or NULL: a game of degree's own terminal value g(x) (instead of x'Q_T x), its gradient into grad
       unless NULL */
    double (*terminal)(const dg_hji_problem *p, const double *x, double *grad);
    int         cost_only;                /* a game of degree alone (noise): payoff defaults to cost */
} game_def;
#define KEYS(t) t, (int)(sizeof t / sizeof t[0])

/* The arguments (p, x, grad) of a game's target: l at the point x, its gradient into grad unless NULL. */
#define TARGET_ARGS const dg_hji_problem *p, const double *x, double *grad

/* An obstacle of the config: a ball (center a, radius) or a box [a, b] over the axes in mask, at the
 * game's time 0; moving, it is shifted by vel t at time t. */
typedef struct obstacle_shape {
    int      ball, moving;
    unsigned mask;
    double   a[DG_HJI_MAX_DIMS], b[DG_HJI_MAX_DIMS], radius, vel[DG_HJI_MAX_DIMS];
} obstacle_shape;

/* What builds a problem's node arrays over any range of nodes (p->build): the whole grid when
 * loaded, or a rank's block (dg_hji_problem_load_split, dg_hji_problem_keep_block). */
typedef struct problem_build {
    /* the game's target at nodes at the game's time t, and at a point (at t_end: tau = 0) */
    void (*target)(const dg_hji_problem *p, double t, int64_t j0, int64_t n, double *out);
    double (*target_at)(const dg_hji_problem *p, const double *x, double *grad);
    double (*game_target_at)(const dg_hji_problem *p, const double *x, double *grad);  /* unmoved */
    /* the target at a point at the game's time t (target_at is it at t_end) */
    double (*target_time)(const dg_hji_problem *p, double t, const double *x, double *grad);
    double          tvel[DG_HJI_MAX_DIMS];   /* target_velocity: l(x - tvel t) at time t        */
    int             tmoving;             /* target_velocity was given                           */
    int             moving, target_moves, obstacle_moves;   /* the sets (the target, the obstacle)
                                                               depend on time                  */
    obstacle_shape *shape;               /* the config's obstacles                              */
    int             nshape;
    double          cmax;                /* payoff: time: the largest front speed on the target */
    int             built;               /* the arrays are there                                */
    int             whole;               /* ... and hold the whole grid                         */
} problem_build;

/* The built-in games (problem_games.c), in the order of their names (hji_game_names, NULL-ended:
 * the values of the config's game key), and the one named game (NULL: none). */
extern const char *const hji_game_names[];
extern const game_def hji_games[];
const game_def *hji_game_find(const char *game);

/* Builds p's node arrays over the box lo, nb of its grid (problem_nodes.c; split: a rank's box,
 * collective), refusing what cannot fit. */
dg_status hji_problem_build_arrays(dg_hji_problem *p, const int *lo, const int *nb, int split, dg_err *e);

/* The time-varying sets (dg_hji_opts.sets) of a problem loaded whole: at the time-to-go tau (the game's
 * time t_end - tau) the target (brt_target: l(x, t); else the target at tau = 0, which the others
 * read) and, unless obstacle is NULL, the obstacle field into (nodes) arrays; scratch (nodes) is needed
 * with more than one obstacle shape. payoff: time: v0 (the held values) into target and the stop field
 * into obstacle, work (2 nodes) holding the target and obstacles of that time. DG_ERR_ARG for a problem
 * kept as a rank's block. */
dg_status hji_problem_sets(const dg_hji_problem *p, double tau, double *target, double *obstacle, double *scratch,
                           double *work);

#endif
