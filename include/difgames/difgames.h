/* difgames: differentiable games in C11. One include for all of it: #include <difgames/difgames.h>
 *
 * From a config file to a trained policy and its numbers in three calls, what `difgames train`
 * and `difgames eval` do (run.h; every call returns a dg_status and fills e):
 *
 *     dg_err e = {0};
 *     dg_run r;
 *     dg_run_train_result tr;
 *     dg_policy m;
 *     dg_params *p = NULL;
 *     dg_real *state = NULL, *aux = NULL;
 *     dg_eval_result res;
 *     if (dg_run_load(&r, "configs/reach.yaml", NULL, 0, &e) == DG_OK &&                 // 1. the game, keys checked
 *         dg_run_train(&r, "runs/reach", NULL, 0, NULL, NULL, NULL, &tr, &e) == DG_OK && // 2. BPTT into runs/reach
 *         dg_run_policy_load(&r, "runs/reach/final.safetensors", &m, &p, &e) == DG_OK && // 3. the trained policy
 *         dg_run_init_draw(r.env, r.opts.seed, 64, &state, &aux, &e) == DG_OK &&         //    eval'd on 64 states
 *         dg_run_eval(r.env, &m, p, state, aux, 64, 0, &res, &e) == DG_OK)               //    drawn from the seed
 *         printf("loss %g\n", res.loss);                                                 // res.terms, res.metrics
 *     else
 *         puts(e.msg);                                                                   // what failed, and where
 *     free(state); free(aux); dg_params_free(p); dg_run_free(&r);
 *
 * A two-minute tutorial: build a tiny graph, run backward, read a gradient.
 *
 *     dg_params *p = dg_params_create();
 *     int w = dg_params_add(p, "w", 1, (int[]){3}, NULL);    // a parameter of 3 floats
 *     dg_params_data(p, w)[0] = 1.0f;                          // (its values live outside the arena)
 *
 *     dg_ctx *ctx = dg_ctx_create(1 << 20);                    // 1 MiB arena for one graph
 *     dg_tensor *x = dg_param(ctx, p, w);                      // a leaf viewing the parameter
 *     dg_tensor *loss = dg_sum(ctx, dg_square(ctx, x));        // loss = sum(w²)
 *     if (dg_ctx_status(ctx) != DG_OK) puts(dg_ctx_error(ctx));// errors are sticky: check once
 *
 *     dg_params_zero_grad(p);
 *     dg_backward(ctx, loss);                                  // one reverse walk of the tape
 *     printf("%g\n", dg_params_grad(p, w)[0]);                 // d loss / d w[0] = 2
 *
 *     dg_ctx_reset(ctx);                                       // next episode: rewind the arena
 *     dg_ctx_free(ctx);
 *     dg_params_free(p);
 *
 * Training a policy by BPTT is the same loop: reset the context, roll the game
 * out for a whole episode with ops, backward once, clip, dg_adam_step.
 * examples/core_fit_mlp.c fits a small MLP with the core alone.
 *
 * The grid solver from a config: dg_hji_problem_load + dg_hji_problem_solve (hji.h's opening);
 * a trained policy held against its value: certify.h. examples/ holds complete programs. Both
 * code blocks above compile in a test (tests/snippets_test.sh), so they stay true.
 *
 * The public headers, one line each, the layers from the bottom (docs/architecture.md). The
 * shared library exports exactly the functions they declare (DG_API, api.h).
 */
#ifndef DIFGAMES_H
#define DIFGAMES_H

#include "difgames/api.h"         /* DG_API: what the shared library exports                      */
#include "difgames/real.h"        /* dg_real: float, or double in a unit built with DG_F64          */
#include "difgames/status.h"      /* dg_status, dg_err: every call's result and message             */
#include "difgames/base.h"        /* random numbers, clock, number parsing                          */
#include "difgames/memory.h"      /* memory limits, counts that cannot overflow                     */
#include "difgames/dist.h"        /* MPI ranks (one rank without MPI): halos, reductions, queues    */
#include "difgames/fileio.h"      /* atomic writes, regular-file reads, paths, run locks            */
#include "difgames/config.h"      /* YAML configs with typed access and file:line errors            */
#include "difgames/keys.h"        /* config keys declared in tables, read by one function           */
#include "difgames/safetensors.h" /* safetensors files                                              */
#include "difgames/image.h"       /* canvas, PNG, GIF, plots                                        */
#include "difgames/core.h"        /* the tape: tensors, context, ops, params, Adam/SGD, gradcheck   */
#include "difgames/checkpoint.h"  /* parameters to and from safetensors                             */
#include "difgames/physics.h"     /* semi-implicit Euler, soft signed distances                     */
#include "difgames/render.h"      /* Gaussian soft-point renderer                                   */
#include "difgames/policy.h"      /* tanh MLPs and the players' policies (dg_policy)                */
#include "difgames/losses.h"      /* weighted cost terms                                            */
#include "difgames/env.h"         /* the game interface, the registry, game plugins                 */
#include "difgames/replay.h"      /* an episode's frames as pictures                                */
#include "difgames/trainer.h"     /* BPTT training                                                  */
#include "difgames/pg.h"          /* policy-gradient baseline (PPO, REINFORCE)                      */
#include "difgames/safety.h"      /* a safety filter around a policy, from a reachability value     */
#include "difgames/run.h"         /* a run from a config: train, its policy, states, eval           */
#include "difgames/live.h"        /* episodes one step at a time: a person's action, moved bodies   */
#include "difgames/sweep.h"       /* studies: a config trained over keys' values and seeds          */
#include "difgames/flat.h"        /* a run behind one handle on flat arrays (the Python package)    */
#include "difgames/hji.h"         /* the HJBI grid solver: its overview, and all of these parts:    */
#include "difgames/hji_grid.h"    /*   the grid, targets as signed distances                        */
#include "difgames/hji_game.h"    /*   a game: dynamics, input sets, roles, payoff, optimal inputs  */
#include "difgames/hji_solve.h"   /*   the solver, its options and numbers, gradients, interpolation */
#include "difgames/hji_problem.h" /*   a game from a config: the built-in games, their keys, solves  */
#include "difgames/hji_sim.h"     /*   both players' equilibrium feedback simulated                 */
#include "difgames/hji_value.h"   /*   the value file: read, checked, written                       */
#include "difgames/hji_figure.h"  /*   slices, level sets, the plot and view figure, a play's GIF   */
#include "difgames/hji_file.h"    /*   `difgames hji solve|play|versus` as calls                    */
#include "difgames/hji_learn.h"   /*   the HJI residual as a loss on the tape, for value networks    */
#include "difgames/hji_part.h"    /* a grid cut in boxes: the solver's parts over MPI ranks         */
#include "difgames/hji_flat.h"    /* a grid value behind one handle, read at arrays of states        */
#include "difgames/certify.h"     /* learned players against the grid solver's equilibrium          */
#include "difgames/certify_dp.h"  /* the learner's own discrete game solved by dynamic programming   */
#include "difgames/certify_run.h" /* `difgames certify` from a run to its JSON line                */
#include "difgames/eval_run.h"    /* `difgames eval` from a run to its JSON line                   */
#include "difgames/certify_sampling.h" /* a learned value's safe set certified by sampling     */
#include "difgames/export.h"      /* a grid value and a policy written as plain C (difgames export) */
#include "difgames/lq_nash.h"     /* the feedback Nash equilibrium of a linear-quadratic game      */

#endif
