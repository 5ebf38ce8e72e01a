/* The grid solver's side of a model file (src/hji/model_problem.c). */
#ifndef DG_HJI_MODEL_PROBLEM_H
#define DG_HJI_MODEL_PROBLEM_H
#include "difgames/hji.h"

typedef struct dg_hji_model_def {
    void         *model;                  /* the dg_model; free with dg_hji_model_free, even on error */
    const char   *name;                   /* model.name: the game's name (in the model)               */
    int           nx;
    const char   *axis[DG_HJI_MAX_DIMS];  /* the state's names, in order (in the model)               */
    double        lo[DG_HJI_MAX_DIMS], hi[DG_HJI_MAX_DIMS];   /* the state's box: the default grid */
    int           periodic[DG_HJI_MAX_DIMS];
    dg_hji_input  u, d;
    const char   *u_name, *d_name;
    dg_hji_dyn_fn dyn;                    /* its user is model */
    double        t_end;                  /* the default horizon: env.horizon env.dt */
} dg_hji_model_def;

/* Reads cfg's model section for the grid solver; errors name file, line and key. */
dg_status dg_hji_model_load(dg_cfg *cfg, dg_hji_model_def *def, dg_err *e);
/* Sets gm's dynamics, inputs and user from the model. */
void      dg_hji_model_game(void *model, dg_hji_game *gm);
/* The target's signed distance at nodes [j0, j0 + n) of g at the game's time t (the name t of its
 * expression: 0 at the start of the horizon, t_end at its end) into target (n); 1 without one. */
void      dg_hji_model_target(void *model, const dg_hji_grid *g, int64_t j0, int64_t n, double t, double *target);
/* The target's signed distance at the point x (nx) and time t with its gradient in x into grad (nx)
 * unless NULL: the bits dg_hji_model_target gives at a node (1, gradient 0, without one). */
double    dg_hji_model_target_at(void *model, const double *x, double t, double *grad);
/* The avoid set's field (> 0 inside) at the point x and time t, as dg_hji_model_avoid gives it at a
 * node alone; gradient into grad unless NULL. Only for a model with an avoid set. */
double    dg_hji_model_avoid_at(void *model, const double *x, double t, double *grad);
/* 1 when the model's target or avoid set reads t (time-varying sets); *target and *avoid (unless
 * NULL) get 1 when that set does. */
int       dg_hji_model_moving(const void *model, int *target, int *avoid);
/* 1 when the model has an avoid set. */
int       dg_hji_model_has_avoid(const void *model);
/* The avoid set (if any; > 0 inside) at nodes [j0, j0 + n) of g at the game's time t into obstacle
 * (n): the max with what obstacle holds when have, else in place of it. */
void      dg_hji_model_avoid(void *model, const dg_hji_grid *g, int64_t j0, int64_t n, double t, int have,
                             double *obstacle);
/* After the payoff is read: for payoff: cost (cost 1), the model's costs as gm's running cost (a
 * state part and the inputs' quadratic weights) and terminal cost (dg_hji_model_terminal), weighted
 * by the config's loss.<name> so that the value is the gradient solver's episode loss; for the
 * others, checks the target is there. Errors name file, line and key. */
dg_status dg_hji_model_payoff(void *model, dg_cfg *cfg, int cost, dg_hji_game *gm, dg_err *e);
double    dg_hji_model_terminal(void *model, const double *x);   /* 0 before dg_hji_model_payoff */
/* dg_hji_model_terminal's gradient in the state at x into grad (nx): the costs' symbolic derivatives. */
void      dg_hji_model_terminal_grad(void *model, const double *x, double *grad);
/* The episode variables' values on the grid (model.episode.grid) into aux; returns their count. */
int       dg_hji_model_episode(void *model, double *aux);
void      dg_hji_model_free(void *model);
#endif
