/* difgames hji value-file flows: what `difgames hji solve|play|versus` do, as calls: solve a problem
 * into a value file, load a value file's slices for a problem, play the equilibrium against them.
 * Each says which step or input failed (dg_hji_file_step), so that a caller can name its own option
 * or key in its message; e->msg names neither. Part of difgames/hji.h. */
#ifndef DIFGAMES_HJI_FILE_H
#define DIFGAMES_HJI_FILE_H

#include "difgames/api.h"
#include "difgames/hji_sim.h"
#include "difgames/hji_value.h"

#ifdef __cplusplus
extern "C" {
#endif

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
    int           cuts[DG_HJI_GRID_MAX_DIMS];  /* solve under mpirun: the boxes along each axis (hji_part.h) */
} dg_hji_file_result;

/* The checks of dg_hji_solve_file that need no disk and no solve: the count of times (COUNT), the
 * times (TIMES, STATIONARY), the memory (MEMORY); r->nt and r->memory set. */
DG_API dg_status dg_hji_solve_plan(const dg_hji_problem *p, const dg_hji_file_opts *o, dg_hji_file_result *r, dg_err *e);
/* Solves p (its opts: progress, threads, precision) and writes the value file at path (atomically;
 * dg_hji_value_write): t_end, o's times and the slices' samples, flagged as such. Checks as
 * dg_hji_solve_plan, then the disk (DISK) before the solve. Under mpirun (dg_dist_size() > 1) the
 * grid is split over the ranks (hji_part.h: p keeps only this rank's box afterwards) and every
 * rank writes its box into the file (MPI-IO, collective); the file has the same bytes as one
 * process's. Returns
 * DG_OK or the failed step's status. */
DG_API dg_status dg_hji_solve_file(dg_hji_problem *p, const dg_hji_file_opts *o, const char *path, dg_hji_file_result *r,
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
DG_API dg_status dg_hji_value_load(const char *path, const dg_hji_problem *p, const char *config, dg_hji_value_slices *vs,
                                   dg_hji_file_step *step, dg_err *e);
DG_API void      dg_hji_value_slices_free(dg_hji_value_slices *vs);              /* NULL and twice are harmless */

/* Whether the value file v (its value at its t_end) may warm-start p (config names p's file in
 * messages; docs/hji.md, warm starts): DG_OK with *warm_t the time-to-go the solve starts at, else
 * DG_ERR_ARG with a line naming the file and why.
 * - Always: the same game and constants on the same grid (dg_hji_value_check's first checks).
 * - A stationary problem (p->stationary): also the same payoff type; the rest may differ (an
 *   obstacle moved, another target, running cost or discount, a config-declared game's terms): the
 *   steady value is the fixed point whatever the start, so any start on the grid is valid (it only
 *   changes the iterations). *warm_t = 0.
 * - A finite horizon (a tube, a set, a game of degree to t_end): valid only from the same problem
 *   (the whole fingerprint; and, from the config the file stores, the mode and the target,
 *   obstacles, held nodes and initial value node by node) at an earlier or equal time-to-go s, a
 *   value that is not stationary: the solve goes on from s to t_end and gives the value at t_end
 *   (the semigroup property). From another problem's value the result lies between that value's
 *   continuation and the new tube, a conservative approximation at best (Herbert et al. 2019), not
 *   the value: refused. A time to reach with obstacles holds them at the cap, t_end: from another
 *   t_end it is another problem. *warm_t = s. */
DG_API dg_status dg_hji_warm_check(const dg_hji_value *v, const dg_hji_problem *p, const char *config, double *warm_t,
                                   dg_err *e);
/* Opens the value file at path, checks it (dg_hji_warm_check), reads its value at t_end into a new
 * array *warm (nodes; free() it after the solve) and points p->opts.warm and warm_t at it: the next
 * solve of p (dg_hji_solve_file, dg_hji_problem_solve_at, ...) starts there. A warm solve keeps no
 * time-slice samples (nothing before its start) and takes only --times after warm_t. Returns DG_OK,
 * DG_ERR_ARG (refused: e names the file and why), or the file's errors (DG_ERR_IO, DG_ERR_FORMAT,
 * DG_ERR_NONFINITE, DG_ERR_NOMEM); on failure p is unchanged and *warm NULL. */
DG_API dg_status dg_hji_warm_load(const char *path, dg_hji_problem *p, const char *config, double **warm, dg_err *e);

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
DG_API dg_status dg_hji_play(const dg_hji_problem *p, const dg_hji_slices *V, const double *x0, const dg_hji_play_opts *o,
                             dg_hji_sim_result *r, dg_hji_file_step *step, dg_err *e);
/* dg_hji_play with u following su and d following sd (NULL: su), dg_hji_simulate_sources; the GIF
 * shows su's value at its horizon (a slices source's last slice; another source tabulated on p's
 * grid in one evaluation). A source's error in the automatic step is SIM. A problem of more than
 * DG_HJI_GRID_MAX_DIMS axes (dg_hji_problem_load_points: no grid) plays too, its target from its
 * formula (dg_hji_simulate_sources), but draws no GIF: a gif_path is refused (GIF, DG_ERR_ARG). */
DG_API dg_status dg_hji_play_sources(const dg_hji_problem *p, const dg_hji_source *su, const dg_hji_source *sd,
                                     const double *x0, const dg_hji_play_opts *o, dg_hji_sim_result *r,
                                     dg_hji_file_step *step, dg_err *e);

#ifdef __cplusplus
}
#endif
#endif
