/* difgames certify --sampling: a learned value's safe set certified by sampling (Lin & Bansal 2023,
 * arXiv 2312.08604: scenario optimisation), for a tube (BRT) of a game of kind. Part of
 * difgames/certify.h; docs/neural.md ("The sampling certificate") states what it promises.
 *
 * The set. V_theta(x, T) (T = the problem's t_end) of a value network (hji_learn.h); its safe set at
 * level delta >= 0 is S_delta = {x in the grid's box : V_theta(x, T) > delta}.
 * The event. A state x fails when the path from x, the player who avoids (role max: wants V high)
 * playing V_theta's feedback (dg_hji_game_optimal at grad_x V_theta(x, T - t)) against the other
 * player's (the grid value's where one is given, else V_theta's), both held over each RK2 step of
 * dt as dg_hji_simulate does, has l(x(t)) <= 0 (the grid's target interpolated; a problem of more
 * than DG_HJI_GRID_MAX_DIMS axes, loaded without a grid, its formula) at some step t in
 * {0, dt, ..., T}. The certificate is about that closed loop, at that dt, in the box: not about every
 * disturbance the game allows.
 * The promise. With probability at least 1 - beta over the samples, if certified is set then
 *     P_{x ~ U(S_delta)} (x fails) <= epsilon,
 * the probability conditional on the certified set (a state drawn uniformly from S_delta), not the
 * joint probability over the box.
 * The procedure (dg_certify_sampling). Round r = 1 .. R tests a level delta_r (delta_1 = 0): N states
 * drawn uniformly from S_{delta_r} (rejection from the box), rolled out, m_r failures counted;
 * certified at delta_r when m_r <= k, where N = dg_scenario_samples(epsilon, beta / R, k) is the
 * least sample count whose binomial tail P(Bin(N, epsilon) <= k) is <= beta / R. Otherwise
 * delta_{r+1} is the scenario program's answer on round r's samples: the least level with at most
 * k / 4 of their failures above it (dg_scenario_level), and the next round tests it on fresh samples
 * (the failures left above it weigh about (k / 4 + 1) / N: the fresh round expects about k / 4 + 1
 * of its k; with k = 0 about one, so a round after the first passes only about e^-1 of the time:
 * hence k = 10 by default).
 * Why choosing delta from samples keeps it valid: delta_r is a function of earlier rounds' samples
 * only, so given them S_{delta_r} is a fixed set and round r's N states are i.i.d. uniform on it;
 * if its failure probability p_r exceeds epsilon, m_r <= k has probability P(Bin(N, p_r) <= k) <=
 * P(Bin(N, epsilon) <= k) <= beta / R. A wrong certificate needs some round r to pass with p_r >
 * epsilon: by the union bound over the R rounds, probability <= beta. Assumed: the failure of a
 * state is a deterministic function of it (the rollout has no randomness), the samples are exactly
 * uniform (rejection sampling is), and the rounds' random streams are independent of each other. The
 * round's own samples also give the scenario program's joint statement (Campi & Garatti's sampling
 * and discarding with one decision variable): with confidence 1 - beta', P_{x ~ U(S_{delta_r})}
 * (x fails and V_theta(x) > delta_{r+1}) <= eps' for P(Bin(N, eps') <= k / 4) <= beta'; that alone
 * bounds the failures inside S_{delta_{r+1}} only relative to S_{delta_r}, hence the fresh round. */
#ifndef DIFGAMES_CERTIFY_SAMPLING_H
#define DIFGAMES_CERTIFY_SAMPLING_H

#include <stdint.h>

#include "difgames/api.h"
#include "difgames/hji_learn.h"
#include "difgames/hji_sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------- statistics (scenario.c) */

/* P(Bin(N, eps) <= k) = sum_{i=0..k} C(N, i) eps^i (1 - eps)^(N - i), summed in logarithms (no
 * underflow of the single terms: a tail below about 1e-308 is 0). 0 for k < 0, 1 for k >= N. */
DG_API double    dg_scenario_tail(int64_t N, int64_t k, double eps);
/* The least N with dg_scenario_tail(N, k, eps) <= beta: the samples a test allowing k failures needs
 * (k = 0: ceil(log beta / log(1 - eps))). eps, beta in (0, 1), k >= 0; -1 for bad arguments or an N
 * beyond 2^53. */
DG_API int64_t   dg_scenario_samples(double eps, double beta, int64_t k);
/* The most failures k a test of N samples may allow at eps and beta (the largest k with
 * dg_scenario_tail(N, k, eps) <= beta), or -1 when even none is too many (N too small). */
DG_API int64_t   dg_scenario_failures(int64_t N, double eps, double beta);
/* The least eps' with dg_scenario_tail(N, m, eps') <= beta: after m failures in N samples, the
 * failure probability is below eps' with confidence 1 - beta (the one-sided Clopper-Pearson bound);
 * 1 when m >= N. To 1e-12 relative. */
DG_API double    dg_scenario_epsilon(int64_t N, int64_t m, double beta);
/* The scenario program's level: the least delta with at most j of the failing samples (fail[i] != 0)
 * having v[i] > delta, i.e. the (j + 1)-th largest v among them; -INFINITY when there are at most j.
 * DG_OK, DG_ERR_ARG (n or j negative), DG_ERR_NOMEM. */
DG_API dg_status dg_scenario_level(const double *v, const unsigned char *fail, int64_t n, int64_t j, double *delta,
                                   dg_err *e);

/* ------------------------------------------------------------ sampling (sampling.c) */

/* DG_OK when p's problem has a sampling certificate: a tube (mode brt or brt_target) of a game of
 * kind with dynamics, no obstacles (dg_hji_problem_has_obstacle: whether or not their array was
 * built), fixed sets (dg_hji_problem_moving: the network certified is hji learn's, which learns
 * fixed sets), and a player of role max (the one who avoids); else DG_ERR_ARG
 * with one line saying what is not (a BRS, a reach-avoid game, a game of degree, ...). */
DG_API dg_status dg_certify_sampling_check(const dg_hji_problem *p, dg_err *e);

/* B paths in lockstep from x0 (B, nx) over steps steps of dt (T = steps dt): the avoiding player
 * plays net's feedback, the other other's (a value source, hji_sim.h: the grid value's slices,
 * dg_hji_source_slices) or net's when other is NULL, both at the time-to-go T - t; the paths run by
 * dg_hji_simulate_batch (one evaluation of each source a step for every path still going; l the
 * grid's target interpolated, or its formula where p has no grid). fail[b] = 1 when path b reached l <= 0 at a step, else 0; when (may
 * be NULL) gets that step's time (or -1). DG_OK, DG_ERR_ARG, DG_ERR_NOMEM, a source's errors. */
DG_API dg_status dg_certify_rollout(const dg_hji_problem *p, const dg_hji_learn_net *net, const dg_hji_source *other,
                                    int64_t B, const double *x0, double dt, int64_t steps, unsigned char *fail,
                                    double *when, dg_err *e);

typedef struct dg_certify_sampling_opts {
    double      epsilon;                  /* in (0, 1): the failure probability promised (1e-3)  */
    double      beta;                     /* in (0, 1): the chance the promise is wrong (1e-6)   */
    int         failures;                 /* k >= 0: failures a round may have and pass (10)    */
    int         rounds;                   /* R >= 1: levels tested, each at beta / R (3)        */
    double      dt;                       /* > 0: the rollouts' step; 0: t_end / 200           */
    int64_t     coverage_samples;         /* >= 1: box points for the coverage estimate (1e5)   */
    double      min_fraction;             /* in (0, 1]: a set below this fraction of the box is not
                                             sampled (rejection would take N / fraction draws): the
                                             round stops there, not certified (1e-3)           */
    uint64_t    seed;
    const dg_hji_source *other;           /* the other player's value (dg_hji_source_slices of the
                                             grid's value), or NULL: V_theta's                  */
} dg_certify_sampling_opts;
/* The defaults above. */
DG_API dg_certify_sampling_opts dg_certify_sampling_opts_default(void);

typedef struct dg_certify_sampling_result {
    int     certified;                    /* 1: S_delta keeps the promise (the header's)         */
    double  delta;                        /* the level certified (or the last tested)            */
    double  epsilon, beta;                /* as asked                                            */
    double  beta_round;                   /* beta / R: each round's test                         */
    int     k;                            /* failures a round may have                           */
    int64_t N;                            /* samples a round                                     */
    int     rounds;                       /* rounds run                                          */
    int64_t failures;                     /* failures of the last round run                      */
    double  epsilon_bound;                /* dg_scenario_epsilon(N, failures, beta_round): the bound
                                             the last round's samples support (<= epsilon when
                                             certified)                                        */
    double  coverage, coverage_se;        /* fraction of the box in S_delta, and its standard
                                             error sqrt(f (1 - f) / M) over M box points        */
    double  safe_fraction;                /* fraction of the box with V_theta > 0 (same points)  */
    double  uncertified_rate;             /* failures among states with V_theta > 0 (round 1's  */
    double  uncertified_se;               /* N samples of S_0) and its standard error           */
    double  dt;                           /* the rollouts' step                                  */
    int64_t steps;                        /* T / dt                                              */
    int64_t draws;                        /* box points drawn by the rejection sampler, all rounds */
    int     sparse;                       /* 1: stopped at a set below min_fraction of the box   */
    double  seconds;
} dg_certify_sampling_result;

/* The procedure of the header on net (a network of p's game, hji_learn.h) with o: r gets the level,
 * the test's numbers and the estimates. DG_OK whether or not certified (r->certified says);
 * DG_ERR_ARG (dg_certify_sampling_check, bad options), DG_ERR_NOMEM, the network's errors. */
DG_API dg_status dg_certify_sampling(const dg_hji_problem *p, const dg_hji_learn_net *net,
                                     const dg_certify_sampling_opts *o, dg_certify_sampling_result *r, dg_err *e);

#ifdef __cplusplus
}
#endif
#endif
