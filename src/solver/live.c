/* Live episodes: the trainer's step, one at a time, with a person's action and moved bodies. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/live.h"
#include "difgames/trainer.h"

struct dg_live {
    const dg_env    *env;
    const dg_policy *pol;
    dg_params       *p;
    int              B, t;
    dg_ctx          *ctx;     /* one step's tape, rewound every step               */
    size_t           arena;   /* its size                                           */
    dg_real           *traj;    /* (H + 1, B, S)                                      */
    dg_real           *aux;     /* (B, aux_dim), or NULL                              */
    dg_real           *auxh;    /* (H + 1, B, aux_dim): aux as it was at each step    */
    dg_real           *act;     /* (B, act_dim + act2_dim): the caller's, clamped     */
    dg_real            acc[DG_LOSS_MAX_TERMS];  /* Σ_t raw term_i,t, as dg_loss adds them */
    dg_noise           nz;      /* a noisy game's stream: {0, 0} unless dg_live_noise set it */
};

/* One step's arena for B rows: dg_rollout_memory of one step, and room to spare. */
static double step_bytes(const dg_env *env, const dg_policy *pol, int B) {
    int hidden[DG_MLP_MAX_LAYERS];
    const int nh = pol->mlp[0].nlayers - 1;
    for (int i = 0; i < nh; i++) hidden[i] = pol->mlp[0].sizes[i + 1];
    return 2 * dg_rollout_memory(env, hidden, nh, B, 1, 0) + 65536;
}

double dg_live_memory(const dg_env *env, const dg_policy *pol, int B) {
    const double H = env->horizon;
    return sizeof(dg_live) + step_bytes(env, pol, B) +
           ((H + 1) * env->state_dim + (H + 2) * env->aux_dim + env->act_dim + env->act2_dim) * (double)B * sizeof(dg_real);
}

dg_live *dg_live_create(const dg_env *env, const dg_policy *pol, dg_params *p, int B, dg_err *e) {
    if (!env || !pol || !p || B < 1 || B > DG_LIVE_MAX_ROWS || pol->n < 1 || pol->n != env->nplayers) {
        dg_err_set(e, DG_ERR_ARG, "live episode: needs a game, its players' policies and 1 to %d rows",
                   DG_LIVE_MAX_ROWS);
        return NULL;
    }
    const double need = dg_live_memory(env, pol, B);
    dg_live *l = need < 1e15 ? calloc(1, sizeof *l) : NULL;
    if (l) {
        l->env = env;
        l->pol = pol;
        l->p = p;
        l->B = B;
        l->arena = (size_t)step_bytes(env, pol, B);
        l->ctx = dg_ctx_create(l->arena);
        l->traj = malloc(((size_t)env->horizon + 1) * B * env->state_dim * sizeof(dg_real));
        l->aux = env->aux_dim ? calloc((size_t)B * env->aux_dim, sizeof(dg_real)) : NULL;
        l->auxh = env->aux_dim ? calloc(((size_t)env->horizon + 1) * B * env->aux_dim, sizeof(dg_real)) : NULL;
        l->act = calloc((size_t)B * (env->act_dim + env->act2_dim), sizeof(dg_real));
    }
    if (!l || !l->ctx || !l->traj || (env->aux_dim && (!l->aux || !l->auxh)) || !l->act) {
        dg_live_free(l);
        dg_err_set(e, DG_ERR_NOMEM, "live episode: out of memory for %d rows of horizon %d (%.0f bytes)", B,
                   env->horizon, need);
        return NULL;
    }
    memset(l->traj, 0, (size_t)B * env->state_dim * sizeof(dg_real));
    return l;
}

void dg_live_free(dg_live *l) {
    if (!l) return;
    dg_ctx_free(l->ctx);
    free(l->traj);
    free(l->aux);
    free(l->auxh);
    free(l->act);
    free(l);
}

dg_status dg_live_reset(dg_live *l, const dg_real *state, const dg_real *aux, dg_err *e) {
    if (!l || !state || (l->env->aux_dim && !aux))
        return dg_err_set(e, DG_ERR_ARG, "live episode: reset needs the states and their episode constants");
    memcpy(l->traj, state, (size_t)l->B * l->env->state_dim * sizeof(dg_real));
    if (l->env->aux_dim) {
        memcpy(l->aux, aux, (size_t)l->B * l->env->aux_dim * sizeof(dg_real));
        memcpy(l->auxh, aux, (size_t)l->B * l->env->aux_dim * sizeof(dg_real));
    }
    memset(l->acc, 0, sizeof l->acc);
    l->t = 0;
    return DG_OK;
}

/* The caller's action as a (B, dim) leaf, each value clamped to [-1, 1] (NaN: 0). */
static dg_tensor *given(dg_live *l, const dg_real *action, int dim) {
    for (size_t i = 0; i < (size_t)l->B * dim; i++) {
        const dg_real a = action[i];
        l->act[i] = a > 1 ? 1 : a < -1 ? -1 : a == a ? a : 0;
    }
    return dg_from(l->ctx, 2, (int[]){l->B, dim}, l->act);
}

dg_status dg_live_step(dg_live *l, int player, const dg_real *action, dg_err *e) {
    if (!l) return dg_err_set(e, DG_ERR_ARG, "live episode: none");
    const dg_env *env = l->env;
    const dg_game *g = env->game;
    const int S = env->state_dim, B = l->B;
    if (l->t >= env->horizon)
        return dg_err_set(e, DG_ERR_ARG, "live episode: the episode ended at its horizon (%d steps)", env->horizon);
    if (player < -1 || player >= env->nplayers || (player >= 0 && !action))
        return dg_err_set(e, DG_ERR_ARG, "live episode: %s has no player %d to act for", g->name, player);
    dg_ctx *ctx = l->ctx;
    dg_ctx_reset(ctx);
    dg_tensor *state = dg_from(ctx, 2, (int[]){B, S}, l->traj + (size_t)l->t * B * S);
    dg_tensor *ax = env->aux_dim ? dg_from(ctx, 2, (int[]){B, env->aux_dim}, l->aux) : NULL;
    const int n = l->pol->n, t = l->t + 1;  /* the trainer's step t, 1-based */
    dg_tensor *all[DG_MAX_PLAYERS] = {0}, *act = NULL;
    for (int i = 0; i < n && state; i++)  /* each player's action, side by side: [a_0, a_1, ...] */
        all[i] = player == i ? given(l, action, env->player_act[i])
                             : dg_policy_act(ctx, l->pol, l->p, i, t,
                                             l->pol->plan_steps ? NULL : dg_env_observe(ctx, env, i, state, ax), B);
    if (state) act = n == 1 ? all[0] : dg_concat(ctx, all, n, 1);
    if (act && l->pol->filter) act = l->pol->filter(ctx, l->pol->filter_user, t, state, act);  /* safety.h */
    dg_tensor *next = act ? dg_env_step_noise(ctx, env, t, state, ax, act, &l->nz) : NULL;
    dg_tensor *tm[DG_LOSS_MAX_TERMS] = {0};
    if (next) {
        g->step_cost(ctx, env, next, ax, act, 1.0f / (dg_real)B, tm);
        dg_env_add_terminal(ctx, env, t, next, ax, 1.0f / (dg_real)B, tm);
    }
    if (dg_ctx_status(ctx) != DG_OK || !next)
        return dg_err_set(e, dg_ctx_status(ctx) != DG_OK ? dg_ctx_status(ctx) : DG_ERR_NOMEM, "live episode: %s",
                          dg_ctx_error(ctx));
    for (int i = 0; i < env->nterms; i++) l->acc[i] += tm[i] ? tm[i]->data[0] : 0.0f;
    memcpy(l->traj + (size_t)(l->t + 1) * B * S, next->data, (size_t)B * S * sizeof(dg_real));
    if (env->aux_dim)
        memcpy(l->auxh + (size_t)(l->t + 1) * B * env->aux_dim, l->aux, (size_t)B * env->aux_dim * sizeof(dg_real));
    l->t++;
    return DG_OK;
}

void dg_live_noise(dg_live *l, const dg_noise *nz) {
    if (l) l->nz = nz ? *nz : (dg_noise){0, 0};
}

int dg_live_steps(const dg_live *l) { return l ? l->t : 0; }
int dg_live_rows(const dg_live *l) { return l ? l->B : 0; }
const dg_real *dg_live_traj(const dg_live *l) { return l ? l->traj : NULL; }
const dg_real *dg_live_aux(const dg_live *l) { return l ? l->aux : NULL; }

const dg_real *dg_live_aux_at(const dg_live *l, int t) {
    return l && l->auxh && t >= 0 && t <= l->t ? l->auxh + (size_t)t * l->B * l->env->aux_dim : NULL;
}

void dg_live_row(const dg_live *l, int b, dg_real *out) {
    if (!l || !out || b < 0 || b >= l->B) return;
    const int S = l->env->state_dim;
    for (int t = 0; t <= l->t; t++)
        memcpy(out + (size_t)t * S, l->traj + ((size_t)t * l->B + b) * S, (size_t)S * sizeof(dg_real));
}

/* Body k's position from a state row and an aux row; 0 when the game draws fewer bodies. */
static int body_at(const dg_env *env, const dg_real *s, const dg_real *a, int k, dg_real *x, dg_real *y) {
    dg_real xy[2 * DG_MAX_BODIES];
    int goal[DG_MAX_BODIES];
    const int n = env->game->bodies(env, s, a, xy, goal);
    if (k >= n || k >= DG_MAX_BODIES) return 0;
    *x = xy[2 * k];
    *y = xy[2 * k + 1];
    return 1;
}

/* The column of v (n values, a state or an aux row) that coordinate c (0: x, 1: y) of body k is a
 * copy of: setting it to two probe values moves the coordinate to each; -1 if none. */
static int probe(const dg_env *env, dg_real *s, dg_real *a, dg_real *v, int n, int k, int c) {
    static const dg_real PROBE[2] = {0.3125f, -0.671875f};
    for (int j = 0; j < n; j++) {
        const dg_real keep = v[j];
        int hits = 0;
        for (int q = 0; q < 2; q++) {
            dg_real xy[2];
            v[j] = PROBE[q];
            hits += body_at(env, s, a, k, &xy[0], &xy[1]) && xy[c] == PROBE[q];
        }
        v[j] = keep;
        if (hits == 2) return j;
    }
    return -1;
}

dg_status dg_live_place(dg_live *l, int b, int k, dg_real x, dg_real y, dg_err *e) {
    if (!l) return dg_err_set(e, DG_ERR_ARG, "live episode: none");
    const dg_env *env = l->env;
    const int S = env->state_dim, A = env->aux_dim;
    if (!env->game->bodies) return dg_err_set(e, DG_ERR_ARG, "%s has no bodies to move", env->game->name);
    if (b < 0 || b >= l->B || k < 0 || k >= DG_MAX_BODIES || !isfinite(x) || !isfinite(y))
        return dg_err_set(e, DG_ERR_ARG, "live episode: no body %d of row %d to move to (%g, %g)", k, b, x, y);
    dg_real *s = l->traj + ((size_t)l->t * l->B + b) * S;
    dg_real *a = A ? l->aux + (size_t)b * A : NULL;
    dg_real *row[2] = {s, a};
    const int len[2] = {S, A ? env->aux_user_dim : 0};
    for (int c = 0; c < 2; c++) {  /* x, then y */
        int done = 0;
        for (int r = 0; r < 2 && !done; r++) {
            const int j = row[r] ? probe(env, s, a, row[r], len[r], k, c) : -1;
            if (j < 0) continue;
            row[r][j] = c ? y : x;
            if (r == 1 && env->game->complete_aux) env->game->complete_aux(env, 1, a);
            if (r == 1) memcpy(l->auxh + ((size_t)l->t * l->B + b) * A, a, (size_t)A * sizeof(dg_real));
            done = 1;
        }
        if (!done)
            return dg_err_set(e, DG_ERR_ARG, "%s: body %d's %c is no copy of a state or goal column: it cannot be moved",
                              env->game->name, k, c ? 'y' : 'x');
    }
    return DG_OK;
}

void dg_live_terms(const dg_live *l, dg_real *weighted) {
    if (!l || !weighted) return;
    const dg_env *env = l->env;
    const dg_real inv = l->t ? 1.0f / (dg_real)l->t : 0.0f;
    for (int i = 0; i < env->nterms; i++) weighted[i] = l->acc[i] * (env->term_weights[i] * inv);
}

void dg_live_metrics(const dg_live *l, double *values) {
    if (!l || !values) return;
    const dg_env *env = l->env;
    for (int i = 0; i < env->nmetrics; i++) values[i] = NAN;
    if (env->game->metrics) env->game->metrics(env, l->traj, l->aux, l->B, l->t, values);
}
