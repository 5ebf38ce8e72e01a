/* merton: Merton's portfolio problem (1969), one learned investor. Wealth w is held in a bond at rate
 * r and a stock of drift mu and volatility sigma; the action is the fraction pi of wealth in the
 * stock, and the loss minus the expected CRRA utility w_T^gamma / gamma at the horizon T (= env.horizon
 * env.dt years). The wealth is log-normal over a step of any length (the exact step, no Euler bias):
 *     w' = w exp((r + pi (mu - r) - pi^2 sigma^2 / 2) dt + pi sigma sqrt(dt) z),   z ~ N(0, 1),
 * the diffusion pi sigma w (noise_dim 1, dg_env.step_noise). The optimum is the constant fraction
 * (mu - r) / ((1 - gamma) sigma^2), whatever the wealth and time to go, with the value
 *     w^gamma / gamma exp(gamma (r + (mu - r)^2 / (2 sigma^2 (1 - gamma))) T):
 * the anchor of BPTT with noise (docs/economics.md). */
#include <tgmath.h>
#include <stdlib.h>

#include "envs/games.h"

typedef struct merton {
    float mu, r, sigma, gamma;
    float frac[2];        /* action [-1, 1] -> fraction [lo, hi] */
    float wealth[2];      /* initial wealth ~ U(lo, hi) */
} merton;

static const dg_key KEYS[] = {
    DG_K_F32("env.mu", merton, mu, 0.1f, -10, 10, 1, 1, "the stock's expected return per year (drift)"),
    DG_K_F32("env.r", merton, r, 0.03f, -10, 10, 1, 1, "the bond's rate per year"),
    DG_K_F32("env.sigma", merton, sigma, 0.25f, 0, 10, 0, 1, "the stock's volatility per sqrt(year)"),
    DG_K_F32("env.gamma", merton, gamma, 0.5f, -100, 1, 1, 0,
             "CRRA exponent of the utility w^gamma / gamma (below 1, not 0; 1 - gamma is the relative risk aversion)"),
    DG_K_SPAN("env.fraction", merton, frac, 0.0f, 4.0f,
              "the action [-1, 1] maps onto the risky fraction [lo, hi] (may hold Merton's fraction)"),
    DG_K_SPAN("env.wealth", merton, wealth, 0.5f, 2.0f, "initial wealth ~ U(lo, hi), lo > 0"),
};

static const dg_loss_term LOSS[] = {
    {"loss.utility", 1.0f, NULL, 0, "minus mean_b w_T^gamma / gamma, the CRRA utility of the final wealth"},
};

static dg_status merton_create(dg_env *env, dg_cfg *cfg, dg_err *e) {
    const merton *m = env->impl;
    if (m->gamma == 0.0f) return dg_cfg_error(cfg, "env.gamma", e, "must not be 0 (w^gamma / gamma; log utility is its limit)");
    if (!(m->frac[0] < m->frac[1])) return dg_cfg_error(cfg, "env.fraction", e, "needs lo < hi");
    if (!(m->wealth[0] > 0.0f && m->wealth[0] <= m->wealth[1]) || !isfinite(m->wealth[1]))
        return dg_cfg_error(cfg, "env.wealth", e, "needs 0 < lo <= hi, finite");
    env->state_dim = 3;   /* [w, tau (time to go), pi (the fraction of the last step: the metric's)] */
    env->state_names = "w,tau,pi";
    env->obs_dim = 2;     /* [log w, tau / T] */
    env->act_dim = 1;
    env->noise_dim = 1;   /* the stock's Brownian motion */
    env->nmetrics = 4;
    env->metric_names[0] = "risky_fraction";
    env->metric_names[1] = "merton_fraction";
    env->metric_names[2] = "fraction_error";
    env->metric_names[3] = "expected_utility";
    return DG_OK;
}

/* (mu - r) / ((1 - gamma) sigma^2) */
static double merton_fraction(const merton *m) {
    return ((double)m->mu - m->r) / ((1.0 - m->gamma) * (double)m->sigma * m->sigma);
}

static dg_status merton_reset(const dg_env *env, dg_rng *rng, int B, dg_real *state, dg_real *aux, dg_err *e) {
    const merton *m = env->impl;
    (void)aux, (void)e;
    for (int b = 0; b < B; b++) {
        dg_real *s = state + (size_t)b * 3;
        s[0] = m->wealth[0] < m->wealth[1] ? dg_rng_uniform(rng, m->wealth[0], m->wealth[1]) : m->wealth[0];
        s[1] = (dg_real)env->horizon * env->dt;
        s[2] = 0;
    }
    return DG_OK;
}

/* [log w, tau / T]: what the optimum could depend on (with CRRA it depends on neither) */
static dg_tensor *merton_observe(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux) {
    (void)aux;
    dg_tensor *lw = dg_log(ctx, dg_cols(ctx, state, 0, 1));
    dg_tensor *tau = dg_scale(ctx, dg_cols(ctx, state, 1, 1), 1.0f / ((dg_real)env->horizon * env->dt));
    return dg_concat(ctx, (dg_tensor *[]){lw, tau}, 2, 1);
}

/* The exact log-normal step with the draws z (B, 1); z NULL: the step with z = 0. */
static dg_tensor *merton_advance(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *action, dg_tensor *z) {
    const merton *m = env->impl;
    const dg_real dt = env->dt;
    dg_tensor *pi = dg_add_scalar(ctx, dg_scale(ctx, dg_cols(ctx, action, 0, 1), 0.5f * (m->frac[1] - m->frac[0])),
                                  0.5f * (m->frac[0] + m->frac[1]));
    /* (r + pi (mu - r) - pi^2 sigma^2 / 2) dt */
    dg_tensor *x = dg_add_scalar(ctx, dg_sub(ctx, dg_scale(ctx, pi, (m->mu - m->r) * dt),
                                             dg_scale(ctx, dg_square(ctx, pi), 0.5f * m->sigma * m->sigma * dt)),
                                 m->r * dt);
    if (z) x = dg_add(ctx, x, dg_mul(ctx, dg_scale(ctx, pi, m->sigma * sqrt(dt)), z));  /* + pi sigma dW */
    dg_tensor *w = dg_mul(ctx, dg_cols(ctx, state, 0, 1), dg_exp(ctx, x));
    dg_tensor *tau = dg_add_scalar(ctx, dg_cols(ctx, state, 1, 1), -dt);
    return dg_concat(ctx, (dg_tensor *[]){w, tau, pi}, 3, 1);
}

static dg_tensor *merton_step(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux, dg_tensor *action) {
    (void)aux;
    return merton_advance(ctx, env, state, action, NULL);
}

static dg_tensor *merton_step_noise(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux,
                                    dg_tensor *action, dg_tensor *z) {
    (void)aux;
    return merton_advance(ctx, env, state, action, z);
}

/* no running cost: the utility is terminal */
static void merton_step_cost_rows(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux, dg_tensor *action,
                                  dg_tensor **rows) {
    (void)ctx, (void)env, (void)next, (void)aux, (void)action, (void)rows;
}

/* -w_T^gamma / gamma per row */
static void merton_terminal_cost_rows(dg_ctx *ctx, const dg_env *env, dg_tensor *final, dg_tensor *aux,
                                      dg_tensor **rows) {
    const merton *m = env->impl;
    (void)aux;
    rows[0] = dg_scale(ctx, dg_pow(ctx, dg_cols(ctx, final, 0, 1), m->gamma), -1.0f / m->gamma);
}

/* risky_fraction: the mean fraction played over the rows and steps; merton_fraction: the optimum;
 * fraction_error: (risky_fraction - merton_fraction) / merton_fraction; expected_utility: mean w_T^gamma / gamma */
static void merton_metrics(const dg_env *env, const dg_real *traj, const dg_real *aux, int B, int H, double *values) {
    const merton *m = env->impl;
    (void)aux;
    double pi = 0, u = 0;
    for (int t = 1; t <= H; t++)
        for (int b = 0; b < B; b++) pi += traj[((size_t)t * B + b) * 3 + 2];
    for (int b = 0; b < B; b++) u += pow((double)traj[((size_t)H * B + b) * 3], (double)m->gamma) / m->gamma;
    const double ref = merton_fraction(m);
    values[0] = pi / ((double)B * H);
    values[1] = ref;
    values[2] = (values[0] - ref) / ref;
    values[3] = u / B;
}

/* Replays: the investor as one body, time running left to right (x = 1 - 2 tau / T, T the horizon in
 * years) and wealth upwards (y = -1 + w / hi, hi the reset's largest wealth: the reset's range in the
 * lower half, twice hi at the top; clamped to the frame), and its risky fraction as a second body at the
 * right edge (y = -1 + 2 pi / the fraction range's top). Returns 2. */
static int merton_bodies(const dg_env *env, const dg_real *s, const dg_real *aux, dg_real *xy, int *is_goal) {
    const merton *m = env->impl;
    (void)aux;
    const double T = (double)env->horizon * env->dt;
    const double y[2] = {-1.0 + s[0] / m->wealth[1], -1.0 + 2.0 * s[2] / (m->frac[1] > 0 ? m->frac[1] : 1.0f)};
    xy[0] = (dg_real)(1.0 - 2.0 * s[1] / (T > 0 ? T : 1.0));
    xy[2] = 0.95f;
    for (int k = 0; k < 2; k++) {
        xy[2 * k + 1] = (dg_real)(y[k] < -1 ? -1 : y[k] > 1 ? 1 : y[k]);
        is_goal[k] = 0;
    }
    if (xy[0] < -1) xy[0] = -1;
    if (xy[0] > 1) xy[0] = 1;
    return 2;
}

const dg_game dg_game_merton = {
    .name = "merton",
    .summary = "Merton's portfolio, noisy wealth (exact log-normal step): the risky fraction against (mu - r)/((1 - gamma) sigma^2)",
    .dt = 1.0f / 12.0f,
    .horizon = 12,
    DG_GAME_DECLARE(KEYS, merton, LOSS),
    .create = merton_create,
    .reset = merton_reset,
    .observe = merton_observe,
    .step = merton_step,
    .step_noise = merton_step_noise,
    .step_cost = dg_env_step_cost_from_rows,
    .step_cost_rows = merton_step_cost_rows,
    .terminal_cost = dg_env_terminal_cost_from_rows,
    .terminal_cost_rows = merton_terminal_cost_rows,
    .metrics = merton_metrics,
    .bodies = merton_bodies,
    .body_names = "investor,fraction",
};
