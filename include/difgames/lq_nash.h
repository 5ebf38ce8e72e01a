/* difgames feedback LQ Nash: the stationary feedback Nash equilibrium of a discrete-time N-player
 * linear-quadratic game with discount, from the coupled algebraic Riccati equations (Basar & Olsder,
 * Dynamic Noncooperative Game Theory, ch. 6), in double precision.
 *
 *     x' = A x + sum_j B_j u_j,   player i's cost  sum_t beta^t (x'Q_i x + sum_j u_j'R_ij u_j)
 *
 * Each player plays u_i = -K_i x and pays x0'P_i x0 from x0. At the equilibrium, with F = A - sum_j B_j K_j,
 *
 *     (R_ii + beta B_i'P_i B_i) K_i + beta B_i'P_i sum_(j != i) B_j K_j = beta B_i'P_i A    (i's best response)
 *     P_i = Q_i + sum_j K_j'R_ij K_j + beta F'P_i F                                        (i's value)
 *
 * dg_lq_nash_solve finds them by the backward Riccati recursion: P_i = 0 (the game of no step), then
 * again and again the one-step game's gains from the current P (the first equations, one linear system
 * in every K_j) and the values of playing them one step before it (the second): P after k rounds is the
 * k-step game's feedback Nash value; it stops when it stops changing. Matrices are row-major doubles.
 */
#ifndef DIFGAMES_LQ_NASH_H
#define DIFGAMES_LQ_NASH_H

#include "difgames/api.h"
#include "difgames/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_LQ_MAX_PLAYERS 8   /* players of an LQ game (its own bound: not the learner's DG_MAX_PLAYERS) */
#define DG_LQ_MAX_DIM 64      /* the state's dimension n, and the players' inputs together, at most */

typedef struct dg_lq_game {
    int n;                                     /* state dimension, 1 .. DG_LQ_MAX_DIM                  */
    int nplayers;                              /* N, 1 .. DG_LQ_MAX_PLAYERS                            */
    int m[DG_LQ_MAX_PLAYERS];                  /* player i's input dimension (>= 1; their sum <= DG_LQ_MAX_DIM) */
    const double *A;                           /* (n, n)                                               */
    const double *B[DG_LQ_MAX_PLAYERS];        /* B_i (n, m_i)                                         */
    const double *Q[DG_LQ_MAX_PLAYERS];        /* Q_i (n, n), symmetric                                */
    const double *R[DG_LQ_MAX_PLAYERS][DG_LQ_MAX_PLAYERS]; /* R[i][j] (m_j, m_j): what u_j costs player i;
                                                  R[i][i] required (symmetric, positive definite),
                                                  R[i][j] NULL for 0 when j != i                        */
    double beta;                               /* discount, in (0, 1]                                  */
} dg_lq_game;

typedef struct dg_lq_nash_opts {
    int    max_iter;   /* rounds of the recursion before it gives up (0: 100000)                          */
    double tol;        /* converged when no entry of any P_i changes by more than tol (1 + max |P|) in a
                          round (0: 1e-14)                                                                 */
} dg_lq_nash_opts;

typedef struct dg_lq_nash_info {
    int    iterations; /* rounds done                                                                     */
    double change;     /* the last round's largest change of an entry of a P_i                            */
    int    converged;  /* 1 when change met the tolerance                                                 */
} dg_lq_nash_info;

/* The stationary feedback Nash gains K[i] (m_i, n) and values P[i] (n, n) of g (the caller's arrays), by
 * the recursion above; o may be NULL (the defaults), info may be NULL. DG_OK when it converged; else
 * DG_ERR_ARG for a bad game (dimensions, a missing matrix, beta outside (0, 1]), for a singular stacked
 * system of the gains (no unique best responses), or for no convergence in max_iter rounds (info says
 * how far it got: the game may have no stationary feedback equilibrium this recursion reaches);
 * DG_ERR_NONFINITE when the values diverge; DG_ERR_NOMEM. K and P then hold the last round's. */
DG_API dg_status dg_lq_nash_solve(const dg_lq_game *g, const dg_lq_nash_opts *o, double *const *K, double *const *P,
                                  dg_lq_nash_info *info, dg_err *e);

/* The largest absolute residual of the coupled equations above at K, P (both the best-response and the
 * value equations, every entry of every player's) into *residual. DG_OK, or DG_ERR_ARG / DG_ERR_NOMEM. */
DG_API dg_status dg_lq_nash_residual(const dg_lq_game *g, const double *const *K, const double *const *P,
                                     double *residual, dg_err *e);

/* Each player's cost from x0 (n) when every player j plays u_j = -K[j] x, by simulation: cost[i] =
 * sum_(t < steps) beta^t (x_t'Q_i x_t + sum_j u_j,t'R_ij u_j,t) (the infinite sum's tail is below
 * beta^steps times the cost of x_steps' start, small for a stable closed loop); cost has nplayers
 * entries. DG_OK, or DG_ERR_ARG (bad game, steps < 1), DG_ERR_NONFINITE (the state blew up), DG_ERR_NOMEM. */
DG_API dg_status dg_lq_nash_cost(const dg_lq_game *g, const double *const *K, const double *x0, int steps,
                                 double *cost, dg_err *e);

#ifdef __cplusplus
}
#endif
#endif
