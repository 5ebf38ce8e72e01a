/* difgames hji learn: the HJI equation's residual as a loss on the tape, for a value network
 * V_theta(x, tau) trained at sampled states (DeepReach's method, Bansal & Tomlin 2021) on the grid
 * solver's games (hji_game.h) and modes (hji_solve.h), in the grid solver's sign convention.
 * Compiled twice, like the tape (dg_real: float, or double with DG_F64).
 *
 * Conventions (docs/hji.md): tau >= 0 is the time to go, V(x, 0) = v0(x) = l(x) (the target's
 * signed distance, negative inside; a game of degree's terminal cost), and the solver integrates
 *     V_tau = F(x, V, grad V),   F = -(rho V + H(x, grad V)),
 * H(x, p) = -(L0(x) + p.f(x) + ext_u p.G(x)u + ext_d p.D(x)d) (dg_hji_game_hamiltonian: ext = max
 * for a DG_HJI_ROLE_MAX player, min for a MIN one; the running cost L0 and the discount rho only for a
 * game of degree, 0 otherwise). The residual r of each mode is zero where V solves the equation the
 * grid solves, and r > 0 where V is too high (or rises too fast in tau):
 *     BRS         r = V_tau - F                              (the PDE as is)
 *     BRT         r = V_tau - min(0, F)                      (the frozen tube: the solver's
 *                                                            phi_tau = min(0, -H^), minWith 'zero')
 *     BRT_TARGET  r = max(V - l, V_tau - F)                  (the variational inequality of the
 *                                                            solver's phi = min(phi, v0) after each
 *                                                            step; -min{l - V, H_theory - V_tau}, the
 *                                                            issue's and DeepReach's form, H_theory = -H)
 * then, in the solver's order:
 *     obstacle g  r = min(V - g, r)                          (reach-avoid: phi = max(phi, g), g > 0
 *                                                            inside the obstacles)
 *     cap c > 0   r = max(V - c, r)                          (a capped time to reach: phi = min(phi, c))
 *     stop        r = V - l where stop <= 0                  (a game of degree is over there: the
 *                                                            solver holds V at v0)
 * Each max / min is b + relu(a - b) / a - relu(a - b) on the tape: its gradient takes one side (the
 * second where the two are equal). The Hamiltonian is exact in double at each point; on the float
 * tape it is rounded once to float.
 *
 * The boundary condition V(x, 0) = l(x), two ways (dg_hji_learn_value): penalised, V = N(x, tau)
 * the network's output and a term mean (V(x, 0) - l(x))^2 (dg_hji_learn_boundary) added to the
 * loss; or exact, V = l(x) + tau N(x, tau), so that V_tau = N + tau N_tau and
 * grad_x V = grad l + tau grad_x N (DeepReach's form). The network's input is (x, tau), tau its last
 * column, and its input gradient dy = (grad_x N, N_tau) comes from dg_mlp_forward_grad (policy.h):
 * a loss made of these tensors gets its exact weight gradient from dg_backward.
 *
 * Only control- and disturbance-affine games (game.dyn) have a tape form: the players' extrema are
 * in closed form. A game given by a generic Hamiltonian (game.ham, no dynamics) is refused
 * (dg_hji_learn_check; the ops fail with the context's error). */
#ifndef DIFGAMES_HJI_LEARN_H
#define DIFGAMES_HJI_LEARN_H

#include "difgames/api.h"
#include "difgames/core.h"
#include "difgames/hji_game.h"
#include "difgames/hji_problem.h"
#include "difgames/hji_sim.h"
#include "difgames/hji_solve.h"
#include "difgames/policy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What equation a residual is of: the grid solver's mode, obstacles, cap and stop set, each per point
 * as data tensors (B, 1) (or NULL when the problem has none). */
typedef struct dg_hji_learn_eq {
    dg_hji_mode mode;       /* BRS, BRT or BRT_TARGET, as the grid solves them              */
    dg_tensor  *l;          /* (B, 1) l(x) = V(x, 0) = v0(x): BRT_TARGET and stop need it    */
    dg_tensor  *obstacle;   /* (B, 1) or NULL: reach-avoid, > 0 inside the obstacles         */
    dg_tensor  *stop;       /* (B, 1) or NULL: a game of degree, <= 0 where it is over       */
    double      cap;        /* > 0: V <= cap (payoff: time capped at t_end); 0: none         */
} dg_hji_learn_eq;

/* DG_OK when gm (name: the game's name, for the message; may be NULL) has a tape form: checked by
 * dg_hji_game_check and affine (dynamics, not a generic Hamiltonian); else DG_ERR_ARG naming it. */
DG_API dg_status  dg_hji_learn_check(const dg_hji_game *gm, const char *name, dg_err *e);

/* H(x, p) (B, 1), as dg_hji_game_hamiltonian, at the B states x (B, >= nx: its first nx columns,
 * read as data: no gradient flows into x) for the costates p (B, nx), a tape tensor. f, G, D are
 * evaluated per point in double by the game's callback. Its gradient dH/dp = -(f + G u* + D d*) at
 * the players' optimal inputs (dg_hji_game_optimal; the envelope theorem), which is the derivative of
 * each closed-form extremum where it is smooth: a box player's sum_j (c_j (G^T p)_j +- r_j
 * |(G^T p)_j|) and a ball player's (G^T p).c +- R |G^T p| take the centre's where (G^T p)_j or
 * |G^T p| is 0 (the middle of the subdifferential: |s| gets gradient 0 at s = 0, as dg_abs); QUAD
 * (+-|G^T p|^2 / (4 weight)) and BOX_COST (clipped) are smooth. NULL with the context's error set on
 * bad shapes or a game without a tape form. */
DG_API dg_tensor *dg_hji_learn_hamiltonian(dg_ctx *ctx, const dg_hji_game *gm, dg_tensor *x, dg_tensor *p);

/* The residual r (B, 1) of eq's equation (the header's table) at the B states x (B, >= nx) for V
 * (B, 1), V_tau = dV/dtau (B, 1) and grad = grad_x V (B, nx), tape tensors. The game's discount rho
 * (payoff.on) enters as rho V. The games here are autonomous, so tau itself does not enter. NULL with
 * the context's error set on bad shapes, a missing eq->l where the mode needs it, or a game without a
 * tape form. */
DG_API dg_tensor *dg_hji_learn_residual(dg_ctx *ctx, const dg_hji_game *gm, const dg_hji_learn_eq *eq,
                                        dg_tensor *x, dg_tensor *V, dg_tensor *V_tau, dg_tensor *grad);
/* mean(r^2) (1) of dg_hji_learn_residual's r: the loss. */
DG_API dg_tensor *dg_hji_learn_loss(dg_ctx *ctx, const dg_hji_game *gm, const dg_hji_learn_eq *eq,
                                    dg_tensor *x, dg_tensor *V, dg_tensor *V_tau, dg_tensor *grad);
/* The boundary penalty mean((V0 - l)^2) (1) for V0 = V(x, 0) (B, 1) and l = l(x) (B, 1). */
DG_API dg_tensor *dg_hji_learn_boundary(dg_ctx *ctx, dg_tensor *V0, dg_tensor *l);

/* V (B, 1), V_tau (B, 1) and grad_x V (B, nx) from a network's output y = N(x, tau) (B, 1) and its
 * input gradient dy (B, nx + 1) (dg_mlp_forward_grad on the input (x, tau), tau last). l NULL:
 * penalised, V = N. l (B, 1), grad_l (B, nx) and tau (B, 1) given: exact, V = l + tau N. Returns
 * DG_OK, or the context's error (the outputs NULL). */
DG_API dg_status  dg_hji_learn_value(dg_ctx *ctx, int nx, dg_tensor *y, dg_tensor *dy, dg_tensor *tau,
                                     dg_tensor *l, dg_tensor *grad_l, dg_tensor **V, dg_tensor **V_tau,
                                     dg_tensor **grad);

/* l(x) = v0(x) (l, B) and its gradient (grad, (B, nx), or NULL) at the B states x (B, nx) of problem p:
 * the grid solve's initial value at any point (dg_hji_problem_v0_at: the target's signed distance,
 * or a game of degree's initial value), by the problem's own formulas, not interpolated: the bits of
 * the grid's v0 at a node, the analytic value and gradient between nodes and where no grid could be
 * (hji_problem.h says what at the kinks). Its statuses. */
DG_API dg_status  dg_hji_learn_target(const dg_hji_problem *p, int B, const double *x, double *l, double *grad,
                                      dg_err *e);


/* ------------------------------------------------------------------ training (learn.c) */

/* The most shards an iteration's points are cut into (learn.threads). */
#define DG_HJI_LEARN_MAX_SHARDS 64

/* The options of a training run (the config's learn.* keys, dg_hji_learn_keys). */
typedef struct dg_hji_learn_opts {
    int      hidden[DG_MLP_MAX_LAYERS - 1];  /* hidden layer sizes (learn.hidden)              */
    int      nhidden;
    int      activation;       /* dg_mlp_act: DG_MLP_SINE (SIREN) or DG_MLP_TANH             */
    int      points;           /* states sampled each iteration (the batch)                  */
    int      iterations;       /* Adam steps                                                 */
    int      pretrain;         /* the first iterations at tau = 0 only                       */
    int      curriculum;       /* then tau's range grows linearly to T over these iterations */
    int      exact;            /* 1: V = l + tau N (boundary exact); 0: penalised             */
    double   boundary_weight;  /* penalised: the boundary term's weight in the loss          */
    double   lr;               /* Adam's learning rate (betas 0.9, 0.999, eps 1e-8)           */
    double   margin;           /* states sampled in the grid box widened by margin x its width  */
                               /* on each side of each non-periodic axis (learn.margin)          */
    double   focus;            /* the fraction of points drawn near the learned zero set         */
                               /* (learn.focus): of 4x as many candidates, the least |V|          */
    int      schedule;         /* 0: lr constant; 1: cosine, lr down to 0 after the curriculum */
    uint64_t seed;             /* initial weights and samples: the same seed, the same bits   */
    int      threads;          /* shards of the points (1..DG_HJI_LEARN_MAX_SHARDS), run on as  */
                               /* many threads as OpenMP allows (omp_get_max_threads)          */
    int      resume_every;     /* the command writes resume.safetensors every N iterations      */
    int      precision;        /* learn.precision: 0 f32, 1 f64: the tape (dg_real) this copy of   */
                               /* the library has; the command runs the copy the config asks for */
} dg_hji_learn_opts;

/* Adam's learning rate at step it (0-based) of a run with options o: o->lr (schedule 0), or with the cosine
 * schedule o->lr while it < pretrain + curriculum, then o->lr (1 + cos(pi f)) / 2 with f = (it - pretrain -
 * curriculum) / (iterations - pretrain - curriculum) the fraction of the remaining steps done (o->lr at the
 * first of them, 0 from the step after the last). */
DG_API double    dg_hji_learn_lr(const dg_hji_learn_opts *o, int it);
/* The learn.* keys (difgames/keys.h: name, default, bounds, doc); *n gets their count. */
DG_API const struct dg_key *dg_hji_learn_keys(int *n);
/* o from the keys' defaults. */
DG_API void      dg_hji_learn_opts_default(dg_hji_learn_opts *o);
/* o from cfg's learn.* keys (their defaults where missing); DG_ERR_CONFIG "FILE:LINE: key ..." on a
 * bad value. */
DG_API dg_status dg_hji_learn_opts_read(dg_cfg *cfg, dg_hji_learn_opts *o, dg_err *e);

/* A value network V(x, tau) of a problem: an MLP on the input ((x - mid) / half, tau / t_end) (each
 * state axis scaled to [-1, 1] over the box it was trained on, the grid box widened by learn.margin,
 * and tau to [0, 1]: the scales SIREN's initialisation assumes), output N; V = N (penalised) or
 * l(x) + tau N (exact). */
typedef struct dg_hji_learn_net {
    dg_mlp     mlp;
    dg_params *params;                    /* owned                                          */
    int        nx;
    int        exact;
    int        mode;                      /* dg_hji_mode it was trained for                 */
    double     t_end;
    double     mid[DG_HJI_MAX_DIMS], half[DG_HJI_MAX_DIMS];
    char       game[32];
} dg_hji_learn_net;

/* A new network for problem p with o's shape, activation and boundary form, its weights drawn from
 * o->seed (dg_mlp_reset_params). DG_ERR_ARG for a problem without a tape form or held as a rank's
 * block. Free with dg_hji_learn_net_free. */
DG_API dg_status dg_hji_learn_net_init(dg_hji_learn_net *net, const dg_hji_problem *p, const dg_hji_learn_opts *o,
                                       dg_err *e);
DG_API void      dg_hji_learn_net_free(dg_hji_learn_net *net);   /* zeroed; twice is harmless */
/* Writes net as safetensors (atomically): its weights as dg_checkpoint_save names them (F32 or F64,
 * the tape's dg_real) and metadata format "difgames-hji-learn", game, nx, hidden, activation, exact,
 * mode, t_end, mid, half and precision ("f32" or "f64", the tape it was trained on). */
DG_API dg_status dg_hji_learn_save(const dg_hji_learn_net *net, const char *path, dg_err *e);
/* Rebuilds a network written by dg_hji_learn_save for problem p (the same game and state size;
 * DG_ERR_ARG naming the file otherwise), DG_ERR_FORMAT for a file that is not one. Either precision
 * loads in either copy (the weights converted to this copy's dg_real: an f64 network in the float copy
 * is rounded once); the command evaluates a network in the copy of its file's precision. */
DG_API dg_status dg_hji_learn_load(const char *path, const dg_hji_problem *p, dg_hji_learn_net *net, dg_err *e);
/* V(x_b, tau_b) into V (B) at the B states x (B, nx) and times-to-go tau (B) of problem p (for l(x) in
 * the exact form), in batches on its own tape. */
DG_API dg_status dg_hji_learn_eval(const dg_hji_learn_net *net, const dg_hji_problem *p, int64_t B, const double *x,
                                   const double *tau, double *V, dg_err *e);
/* As dg_hji_learn_eval, with the value's derivatives: V (B), V_tau = dV/dtau (B) and grad_x V (B, nx)
 * at the B states x and times-to-go tau, each output may be NULL. They are the tape's exact derivatives
 * of the network (forward-mode tangents, dg_mlp_forward_grad), in the problem's own units: the feedback
 * strategies of a learned value (dg_hji_game_optimal at p = grad_x V) come from them. */
DG_API dg_status dg_hji_learn_eval_grad(const dg_hji_learn_net *net, const dg_hji_problem *p, int64_t B,
                                        const double *x, const double *tau, double *V, double *V_tau, double *grad,
                                        dg_err *e);

/* A value source (hji_sim.h) reading net for problem p: V and grad_x V by dg_hji_learn_eval_grad (V
 * alone by dg_hji_learn_eval), the batch in one evaluation, in this copy's precision; horizon
 * net->t_end. The feedback strategies of dg_hji_feedback_batch, dg_hji_simulate_sources and
 * dg_hji_play_sources then come from the network's own gradient. net and p must outlive s. DG_ERR_ARG
 * for a network of another state size. */
DG_API dg_status dg_hji_learn_source(const dg_hji_learn_net *net, const dg_hji_problem *p, dg_hji_source *s,
                                     dg_err *e);

/* 1 when path is a network written by dg_hji_learn_save (metadata format "difgames-hji-learn"),
 * its precision into *f64 (may be NULL: 1 for "f64", 0 for "f32" or none); 0 for anything else (a
 * grid's value file, a file that cannot be read: its reader says why). */
DG_API int       dg_hji_learn_probe(const char *path, int *f64);

struct dg_hji_flat;  /* hji_flat.h */
/* The flat value handle (hji_flat.h) of the value at path: a network of hji learn (config: the HJI
 * config it was trained on, needed; its problem built for points, so a game of more axes than a grid
 * holds opens too), read in this copy's precision (an f64 network: the double copy's,
 * dg64_hji_flat_open), or else a value file of hji solve (dg_hji_flat_file). The n keys are set on the
 * config first. NULL with e set: the file's, the config's or the network's error (DG_ERR_ARG: a
 * network without its config, or of another game). */
DG_API struct dg_hji_flat *dg_hji_flat_open(const char *path, const char *config, const char *const *keys,
                                            const char *const *values, int n, dg_err *e);

/* One iteration's numbers. */
typedef struct dg_hji_learn_metrics {
    int    iteration;                     /* 1-based                                         */
    double loss;                          /* what was minimised                              */
    double residual;                      /* mean |r| (0 in penalised pretraining: not computed) */
    double boundary;                      /* penalised: mean (V(x, 0) - l)^2; exact: 0       */
    double tau_max;                       /* the curriculum's range [0, tau_max] this iteration */
    double seconds;                       /* this iteration's wall time                      */
} dg_hji_learn_metrics;

/* A training run on problem p: each step samples o->points states uniformly in p's grid box
 * (widened by o->margin times its width on each side of each non-periodic axis; after the pretraining
 * a fraction o->focus of them are the candidates nearest the learned zero set) and times-to-go in [0, tau_max] (DeepReach's curriculum: tau_max 0 for the first o->pretrain steps,
 * then growing linearly to t_end over o->curriculum steps), takes the residual loss (the penalised
 * form adds the boundary term at the same states at tau = 0; its pretraining minimises that term
 * alone), one backward and one Adam step. The points, drawn from one stream, are cut into
 * o->threads shards (train's cut), each run on its own arena on as many threads as OpenMP allows, and
 * their gradients summed in shard order: the same seed and shard count give the same bits, whatever
 * the number of threads (another shard count sums in another order: other bits, the same loss).
 * NULL with DG_ERR_ARG for bad options or sets that move in time (dg_hji_problem_moving: the
 * residual and boundary term read the sets of one time). */
typedef struct dg_hji_learner dg_hji_learner;
DG_API dg_hji_learner *dg_hji_learner_create(const dg_hji_problem *p, const dg_hji_learn_opts *o, dg_err *e);
/* One iteration; its numbers into m (may be NULL). DG_ERR_NONFINITE when the loss is NaN or infinite
 * (the weights are left as they were before the step). */
DG_API dg_status dg_hji_learner_step(dg_hji_learner *L, dg_hji_learn_metrics *m, dg_err *e);
DG_API dg_hji_learn_net *dg_hji_learner_net(dg_hji_learner *L);  /* the network being trained */
/* FLOPs of the last step (the tape's count: matrix products exactly, elementwise ops one an element). */
DG_API double    dg_hji_learner_flops(const dg_hji_learner *L);
/* The shards each iteration's points are cut into: o->threads, at most one a point. */
DG_API int       dg_hji_learner_shards(const dg_hji_learner *L);
/* The last step's points: *x (points, nx) their states and *tau (points) their times-to-go, owned by
 * L and valid until its next step; the learn.focus rows last. Returns the count, o->points (0 and
 * NULLs for a NULL L). */
DG_API int       dg_hji_learner_points(const dg_hji_learner *L, const double **x, const dg_real **tau);
DG_API void      dg_hji_learner_free(dg_hji_learner *L);           /* NULL is harmless */
/* Iterations taken (restored by dg_hji_learner_restore). */
DG_API int       dg_hji_learner_iteration(const dg_hji_learner *L);
/* Writes L's whole state to path (atomically), for dg_hji_learner_restore: the weights (as
 * dg_checkpoint_save names them), Adam's moments "optim.adam.m" / "optim.adam.v", the n metrics rows m
 * ("metrics", F64 (n, 6)) and metadata format "difgames-hji-learn-resume", game, iteration, adam_step,
 * rng (the samples' stream), points, threads and config (the run's config text, may be NULL). */
DG_API dg_status dg_hji_learner_save(const dg_hji_learner *L, const char *path, const char *config,
                                     const dg_hji_learn_metrics *m, int n, dg_err *e);
/* L (created with the options the file was written with) back to the state in path: the next step is
 * the bits the run that wrote it would have taken. Its metrics rows into m (room for cap; *n their
 * count). DG_ERR_FORMAT naming the file for one that is not a resume file of L's game, shape and
 * shard count (L unchanged then). */
DG_API dg_status dg_hji_learner_restore(dg_hji_learner *L, const char *path, dg_hji_learn_metrics *m, int cap, int *n,
                                        dg_err *e);

#ifdef __cplusplus
}
#endif
#endif
