/* difgames: differentiable games in C11.
 *
 * A two-minute tutorial: build a tiny graph, run backward, read a gradient.
 *
 *     #include <difgames/difgames.h>
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
 * From a config file to a trained policy and its numbers, what `difgames train` and
 * `difgames eval` do (run.h; every call returns a dg_status and fills e):
 *
 *     dg_err e = {0};
 *     dg_run r;
 *     dg_run_load(&r, "configs/reach.yaml", NULL, 0, &e);              // the game, every key checked
 *     dg_run_train_result tr;
 *     dg_run_train(&r, "runs/reach", NULL, 0, NULL, NULL, NULL, &tr, &e); // BPTT: runs/reach/final.safetensors
 *     dg_policy m;
 *     dg_params *p;
 *     dg_run_policy_load(&r, "runs/reach/final.safetensors", &m, &p, &e);
 *     dg_real *state, *aux;
 *     dg_run_init_draw(r.env, r.opts.seed, 64, &state, &aux, &e);      // 64 initial states
 *     dg_eval_result res;
 *     dg_run_eval(r.env, &m, p, state, aux, 64, 0, &res, &e);           // res.loss, res.terms, res.metrics
 *     free(state); free(aux); dg_params_free(p); dg_run_free(&r);
 *
 * The grid solver from a config: dg_hji_problem_load + dg_hji_problem_solve (hji.h's opening);
 * a trained policy held against its value: certify.h. examples/ holds complete programs.
 */
#ifndef DIFGAMES_H
#define DIFGAMES_H

#include "difgames/status.h"    /* dg_status, dg_err                                  */
#include "difgames/base.h"      /* rng, clock, number parsing                          */
#include "difgames/core.h"      /* tensors, context, ops, params, Adam/SGD, gradcheck */
#include "difgames/memory.h"    /* memory limits, checked counts                       */
#include "difgames/fileio.h"    /* atomic writes, regular-file reads, paths, run locks */
#include "difgames/safetensors.h" /* safetensors files                                */
#include "difgames/checkpoint.h" /* parameters to and from safetensors                 */
#include "difgames/config.h"    /* YAML configs with typed access                      */
#include "difgames/keys.h"      /* config keys declared in tables, read by one function */
#include "difgames/image.h"     /* canvas, PNG, GIF, plots                             */
#include "difgames/physics.h"   /* semi-implicit Euler, soft signed distances          */
#include "difgames/render.h"    /* Gaussian soft-point renderer                        */
#include "difgames/policy.h"    /* tanh MLPs and the players' policies (dg_policy)      */
#include "difgames/losses.h"    /* weighted cost terms                                 */
#include "difgames/env.h"       /* the game interface and registry                     */
#include "difgames/replay.h"    /* an episode's frames as pictures                     */
#include "difgames/trainer.h"   /* BPTT training                                       */
#include "difgames/pg.h"        /* policy-gradient baseline                            */
#include "difgames/run.h"       /* a run from a config: its policy, states, episodes    */
#include "difgames/live.h"      /* episodes one step at a time: a person's action, moved bodies */
#include "difgames/hji.h"       /* HJBI grid solver for differential games             */
#include "difgames/hji_part.h"  /* a grid cut in boxes: the solver's parts (MPI's blocks)  */
#include "difgames/certify.h"   /* learned players against the grid solver's equilibrium */
#include "difgames/certify_dp.h" /* the learner's own discrete game solved by dynamic programming */
#include "difgames/sweep.h"     /* studies: a config trained over keys' values and seeds   */
#include "difgames/dist.h"      /* MPI ranks (one rank without MPI): halos, reductions, queues */

#endif
