/* fishwar: the great fish war (Levhari & Mirman 1980), a general-sum game of two learned countries.
 *
 * A fish stock x > 0 grows as x' = (x - c_1 - c_2)^alpha; country i catches c_i and enjoys log c_i,
 * discounted by beta a step. Each country's action requests a fraction of the stock; the feedback
 * Nash equilibrium is c_i = (1 - alpha beta) / (2 - alpha beta) x, the cooperative total
 * (1 - alpha beta) x (docs/economics.md derives both and the values). Each country has its own
 * cost: env->general_sum and player_share give country i the term utility_i alone, or with
 * env.cooperative both terms (the joint cost both descend: the cooperative solution). */
#include <tgmath.h>
#include <stdlib.h>
#include <string.h>

#include "envs/games.h"

typedef struct fishwar {
    float alpha, beta;
    float request[2];     /* an action a in [-1, 1] requests the fraction lo + (hi - lo)(a + 1)/2 */
    float ration[2];      /* requests totalling above lo are rationed, the total granted below hi */
    float stock[2];       /* initial stock ~ U(stock)                                          */
    int   cooperative;    /* each country's cost the sum of both utilities (the planner's)     */
} fishwar;

static const dg_key KEYS[] = {
    DG_K_F32("env.alpha", fishwar, alpha, 0.5f, 0, 1, 0, 0, "growth exponent: the stock x - c_1 - c_2 left grows to (x - c_1 - c_2)^alpha"),
    DG_K_F32("env.beta", fishwar, beta, 0.95f, 0, 1, 0, 0, "discount factor a step of each country's utility sum_t beta^t log c_i"),
    DG_K_SPAN("env.request", fishwar, request, 0.01f, 0.99f,
              "a country's action a in [-1, 1] requests the fraction lo + (hi - lo)(a + 1)/2 of the stock, 0 < lo <= hi <= 1"),
    DG_K_SPAN("env.ration", fishwar, ration, 0.9f, 0.99f,
              "requests totalling R > lo of the stock are granted lo + (hi - lo) tanh((R - lo)/(hi - lo)) in all, "
              "below hi, shared in proportion to the requests; 0 < lo < hi < 1"),
    DG_K_SPAN("env.stock", fishwar, stock, 0.1f, 1.0f, "initial stock ~ U(lo, hi), 0 < lo <= hi"),
    DG_K_BOOL("env.cooperative", fishwar, cooperative, 0,
              "each country's cost is the sum of both utilities (the cooperative solution; false: its own, the Nash game)"),
};

/* the two terms are in step_cost's order; term i is country i's own cost (player_share) */
static const dg_loss_term LOSS[] = {
    {"loss.utility_1", 1.0f, NULL, 0, "mean_b of -beta^(t-1) log c_1 at step t: country 1's cost (its share 1, country 2's 0; with env.cooperative 1 in both)"},
    {"loss.utility_2", 1.0f, NULL, 0, "mean_b of -beta^(t-1) log c_2 at step t: country 2's cost (its share 1, country 1's 0; with env.cooperative 1 in both)"},
};

/* the state's columns: the stock, the discount beta^t of the next catch, and the last step's catches */
enum { X, DISC, C1, C2, S };

static dg_status fishwar_create(dg_env *env, dg_cfg *cfg, dg_err *e) {
    const fishwar *f = env->impl;
    if (!(f->request[0] > 0 && f->request[0] <= f->request[1] && f->request[1] <= 1))
        return dg_cfg_error(cfg, "env.request", e, "must be [lo, hi] with 0 < lo <= hi <= 1, got [%g, %g]",
                            f->request[0], f->request[1]);
    if (!(f->ration[0] > 0 && f->ration[0] < f->ration[1] && f->ration[1] < 1))
        return dg_cfg_error(cfg, "env.ration", e, "must be [lo, hi] with 0 < lo < hi < 1, got [%g, %g]", f->ration[0],
                            f->ration[1]);
    if (!(f->stock[0] > 0 && f->stock[0] <= f->stock[1] && f->stock[1] <= DG_MAX_MAGNITUDE))
        return dg_cfg_error(cfg, "env.stock", e, "must be [lo, hi] with 0 < lo <= hi <= %g, got [%g, %g]",
                            DG_MAX_MAGNITUDE, f->stock[0], f->stock[1]);
    env->state_dim = S;
    env->state_names = "stock,discount,catch_1,catch_2";
    env->obs_dim = 1;     /* country 1: [log x] (the equilibrium catches the same fraction at every stock) */
    env->act_dim = 1;
    env->nplayers = 2;
    env->obs2_dim = 1;    /* country 2: [log x] */
    env->act2_dim = 1;
    env->general_sum = 1; /* each country descends its own discounted utility, negated */
    env->player_share[0][0] = 1;
    env->player_share[1][1] = 1;
    if (f->cooperative)  /* both descend the joint cost: a team, whose optimum is the planner's catch */
        env->player_share[0][1] = env->player_share[1][0] = 1;
    env->player_names[0] = "country_1";
    env->player_names[1] = "country_2";
    env->gradcheck_eps = 0.01f;  /* the log's scale: stocks from 0.1 */
    env->nmetrics = 3;
    env->metric_names[0] = "catch_fraction_1";
    env->metric_names[1] = "catch_fraction_2";
    env->metric_names[2] = "nash_fraction";
    env->metric_undefined[0] = env->metric_undefined[1] = "no step was played (a mean over the steps)";
    return DG_OK;
}

static dg_status fishwar_reset(const dg_env *env, dg_rng *rng, int B, dg_real *state, dg_real *aux, dg_err *e) {
    const fishwar *f = env->impl;
    (void)aux;
    (void)e;
    for (int b = 0; b < B; b++) {
        dg_real *s = state + (size_t)b * S;
        s[X] = dg_rng_uniform(rng, f->stock[0], f->stock[1]);
        s[DISC] = 1;  /* the first catch counts undiscounted */
        s[C1] = s[C2] = 0;
    }
    return DG_OK;
}

static dg_tensor *fishwar_observe(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux) {
    (void)env;
    (void)aux;
    return dg_log(ctx, dg_cols(ctx, state, X, 1));
}

/* Requests r_i = lo + (hi - lo)(a_i + 1)/2 (fractions of the stock, env.request), R = r_1 + r_2 in all;
 * granted G = R - e + w tanh(e / w) in all, e = relu(R - l), w = h - l ([l, h] env.ration): R itself up
 * to l, then rising towards h, never reaching it (twice differentiable at l: a hard cap's kink would
 * break the gradient there), shared in proportion to the requests: g_i = r_i G / R. c_i = g_i x,
 * x' = ((1 - G) x)^alpha, the discount times beta. */
static dg_tensor *fishwar_step(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux,
                               dg_tensor *action) {
    const fishwar *f = env->impl;
    (void)aux;
    const dg_real half = 0.5f * (f->request[1] - f->request[0]);
    dg_tensor *r = dg_add_scalar(ctx, dg_scale(ctx, dg_cols(ctx, action, 0, 2), half), f->request[0] + half);
    const dg_real w = f->ration[1] - f->ration[0];
    dg_tensor *R = dg_sum_axis(ctx, r, 1);                                     /* (B, 1) */
    dg_tensor *ex = dg_relu(ctx, dg_add_scalar(ctx, R, -f->ration[0]));
    dg_tensor *G = dg_add(ctx, dg_sub(ctx, R, ex), dg_scale(ctx, dg_tanh(ctx, dg_scale(ctx, ex, 1 / w)), w));
    dg_tensor *g = dg_mul(ctx, r, dg_div(ctx, G, R));                          /* (B, 2) */
    dg_tensor *x = dg_cols(ctx, state, X, 1);
    dg_tensor *c = dg_mul(ctx, g, x);
    dg_tensor *left = dg_mul(ctx, dg_add_scalar(ctx, dg_neg(ctx, G), 1.0f), x);
    dg_tensor *next = dg_pow(ctx, left, f->alpha);
    dg_tensor *disc = dg_scale(ctx, dg_cols(ctx, state, DISC, 1), f->beta);
    return dg_concat(ctx, (dg_tensor *[]){next, disc, c}, 3, 1);
}

/* per row: utility_i = -beta^(t-1) log c_i of step t's catch; the new state's discount is beta^t */
static void fishwar_step_cost_rows(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux,
                                   dg_tensor *action, dg_tensor **rows) {
    const fishwar *f = env->impl;
    (void)aux;
    (void)action;
    dg_tensor *w = dg_scale(ctx, dg_cols(ctx, next, DISC, 1), -1.0f / f->beta);
    for (int i = 0; i < 2; i++) rows[i] = dg_mul(ctx, w, dg_log(ctx, dg_cols(ctx, next, C1 + i, 1)));
}

/* catch_fraction_i: the mean over episodes and steps of c_i,t / x_(t-1); nash_fraction: the feedback
 * Nash fraction (1 - alpha beta) / (2 - alpha beta) to compare them with */
static void fishwar_metrics(const dg_env *env, const dg_real *traj, const dg_real *aux, int B, int H,
                            double *values) {
    const fishwar *f = env->impl;
    (void)aux;
    double sum[2] = {0, 0};
    for (int t = 1; t <= H; t++)
        for (int b = 0; b < B; b++) {
            const dg_real *prev = traj + ((int64_t)(t - 1) * B + b) * S, *s = traj + ((int64_t)t * B + b) * S;
            for (int i = 0; i < 2; i++) sum[i] += (double)s[C1 + i] / prev[X];
        }
    for (int i = 0; i < 2; i++) values[i] = B && H ? sum[i] / ((double)B * H) : NAN;
    const double ab = (double)f->alpha * f->beta;
    values[2] = (1 - ab) / (2 - ab);
}

/* Replays: the two countries' last catches at x = -0.6 and 0.6 (bodies 0 and 1, the players': `play --as
 * country_1` drives country 1, its left and right keys requesting the least and the most) and the stock
 * at x = 0, each at height -1 + 2 v / hi (hi: the reset's largest stock; clamped to the frame) */
static int fishwar_bodies(const dg_env *env, const dg_real *s, const dg_real *aux, dg_real *xy, int *is_goal) {
    const fishwar *f = env->impl;
    (void)aux;
    const dg_real v[3] = {s[C1], s[C2], s[X]}, at[3] = {-0.6f, 0.6f, 0.0f};
    for (int k = 0; k < 3; k++) {
        const dg_real y = -1 + 2 * v[k] / f->stock[1];
        xy[2 * k] = at[k];
        xy[2 * k + 1] = y < -1 ? -1 : y > 1 ? 1 : y;
        is_goal[k] = 0;
    }
    return 3;
}

const dg_game dg_game_fishwar = {
    .name = "fishwar",
    .summary = "the great fish war (Levhari & Mirman): two countries share a stock, general-sum, against the "
               "closed-form feedback Nash catch",
    .dt = 1.0f,
    .horizon = 200,
    DG_GAME_DECLARE(KEYS, fishwar, LOSS),
    .create = fishwar_create,
    .reset = fishwar_reset,
    .observe = fishwar_observe,
    .observe2 = fishwar_observe,
    .step = fishwar_step,
    .step_cost = dg_env_step_cost_from_rows,
    .step_cost_rows = fishwar_step_cost_rows,
    .metrics = fishwar_metrics,
    .bodies = fishwar_bodies,
    .body_names = "country_1,country_2,stock",
};
