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
 * The parts, one header each (this one includes them all):
 *     hji_grid.h     the grid, targets as signed distances
 *     hji_game.h     a game: dynamics, input sets, roles, payoff; the optimal inputs
 *     hji_solve.h    the solver, its options and numbers (and the conventions), gradients, interpolation
 *     hji_problem.h  a game from a config: the built-in games, their keys, the problem's solves
 *     hji_sim.h      both players' equilibrium feedback simulated from a start state
 *     hji_value.h    the value file: read, checked, written; memory and disk of a solve
 *     hji_figure.h   slices, level sets, the plot and view figure, a simulation's GIF
 *     hji_file.h     the flows of `difgames hji solve|play|versus`: solve into a file, load, play
 *     hji_part.h     (not included here) the grid cut in boxes over MPI ranks
 *
 * Every function is re-entrant; nothing is global. Callbacks may be called from several OpenMP
 * threads at once.
 */
#ifndef DIFGAMES_HJI_H
#define DIFGAMES_HJI_H

#include "difgames/hji_grid.h"
#include "difgames/hji_game.h"
#include "difgames/hji_solve.h"
#include "difgames/hji_problem.h"
#include "difgames/hji_sim.h"
#include "difgames/hji_value.h"
#include "difgames/hji_figure.h"
#include "difgames/hji_file.h"

#endif
