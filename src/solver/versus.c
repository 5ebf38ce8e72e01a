/* Learned players against the HJI equilibrium feedback, in the learning game's own dynamics, through
 * the state mapping the HJI game declares (dg_hji_link). In the solver layer: it joins envs, policy
 * and hji (hji itself never uses the trainer). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/hji.h"
#include "difgames/trainer.h"

static const char *const PAIRINGS[DG_HJI_PAIRINGS] = {"learned vs learned", "learned pursuer vs HJBI evader",
                                                      "HJBI pursuer vs learned evader", "HJBI vs HJBI"};

const char *dg_hji_pairing_name(int k) { return k >= 0 && k < DG_HJI_PAIRINGS ? PAIRINGS[k] : NULL; }

dg_status dg_hji_link_check(const dg_hji_problem *p, const dg_env *env, dg_err *e) {
    const dg_hji_link *l = p ? p->link : NULL;
    if (!l) {
        char list[128] = "";
        for (int i = 0; dg_hji_problem_name(i); i++)  /* the HJI games a learning game maps onto */
            if (dg_hji_game_link(dg_hji_problem_name(i)))
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? " or " : "",
                         dg_hji_problem_name(i));
        return dg_err_set(e, DG_ERR_ARG, "no learning game maps onto %s's state: needs %s", p ? p->name : "?", list);
    }
    if (!env || env->nplayers != 2 || env->nplayers != l->nplayers || env->state_dim != l->state_dim ||
        strcmp(env->game->name, l->env_game) != 0)
        return dg_err_set(e, DG_ERR_ARG, "needs %s", l->need);
    return DG_OK;
}

/* The HJI state of row s of the learning game's state (float32 differences, as the game's). */
static void map_state(const dg_hji_link *l, int nx, const float *s, double *x) {
    for (int k = 0; k < nx; k++) x[k] = s[l->plus[k]] - s[l->minus[k]];
}

/* The capture distance: |x| over the link's axes, from the state in double precision. */
static double capture_dist(const dg_hji_link *l, int nx, const float *s) {
    double a = 0, b = 0;
    int m = 0;
    for (int k = 0; k < nx; k++)
        if (l->capture_axes >> k & 1u) {
            const double dk = (double)s[l->plus[k]] - s[l->minus[k]];
            if (m++ == 0) a = dk;
            else b = hypot(b, dk);
        }
    return m == 1 ? fabs(a) : hypot(a, b);
}

dg_status dg_hji_versus(const dg_hji_problem *p, const dg_hji_slices *V, double layer, const dg_env *env,
                        const dg_policy *pol, dg_params *params, int B, uint64_t seed, dg_hji_versus_result *r,
                        dg_err *e) {
    dg_status rc = dg_hji_link_check(p, env, e);
    if (rc != DG_OK) return rc;
    if (!V || V->nt < 1 || !V->t || !V->v || !pol || !params || !r || B < 1 || !(layer >= 0 && layer <= 1))
        return dg_err_set(e, DG_ERR_ARG, "hji versus: bad arguments");
    if (pol->plan_steps)  /* a plan is one action sequence, not a feedback: nothing to play from new states */
        return dg_err_set(e, DG_ERR_ARG, "hji versus: needs feedback players (train.mode: policy), not open-loop plans");
    for (int i = 1; i < V->nt; i++)
        if (!(V->t[i] > V->t[i - 1])) return dg_err_set(e, DG_ERR_ARG, "hji versus: the value's times must increase");
    const double T = V->t[V->nt - 1];  /* the horizon: at step t the time-to-go is T - t dt (0 past T) */
    const dg_hji_link *l = p->link;
    const int S = env->state_dim, nx = p->grid.ndim, A1 = env->act_dim, A = env->act_dim + env->act2_dim;
    const double radius = dg_hji_problem_param(p, l->capture_param);
    float *st0 = malloc((size_t)B * S * sizeof(float)), *st = malloc((size_t)B * S * sizeof(float));
    unsigned char *done = malloc((size_t)B);
    /* one step of both policies on B rows at a time (the arena is reset every step) */
    const dg_mlp *m0 = &pol->mlp[0];
    dg_ctx *ctx = dg_ctx_create((size_t)(1.25 * dg_rollout_memory(env, m0->sizes + 1, m0->nlayers - 1, B, 1, 0)) +
                                ((size_t)1 << 20));
    if (!st0 || !st || !done || !ctx) {
        rc = dg_err_set(e, DG_ERR_NOMEM, "hji versus: out of memory");
        goto out;
    }
    dg_rng rng;
    dg_rng_seed(&rng, seed);
    if ((rc = env->game->reset(env, &rng, B, st0, NULL, e)) != DG_OK) goto out;
    int inside = 0;  /* starts from which the value says the pursuer can force capture by t_end */
    for (int i = 0; i < B; i++) {
        double x[DG_HJI_MAX_DIMS];
        map_state(l, nx, st0 + (size_t)S * i, x);
        inside += dg_hji_slices_interp(&p->grid, V, T, x, NULL) <= 0.0;
    }
    *r = (dg_hji_versus_result){.episodes = B, .inside = (double)inside / B};
    for (int k = 0; k < DG_HJI_PAIRINGS; k++) {
        const int hji_p = k >= 2, hji_e = k == 1 || k == 3;
        memcpy(st, st0, (size_t)B * S * sizeof(float));
        memset(done, 0, (size_t)B);
        double tsum = 0;
        int captured = 0;
        for (int t = 1; t <= env->horizon; t++) {
            const double tau = fmax(T - (t - 1) * env->dt, 0);  /* the inputs act over [(t-1) dt, t dt] */
            dg_ctx_reset(ctx);
            dg_tensor *state = dg_from(ctx, 2, (int[]){B, S}, st);
            dg_tensor *a = dg_mlp_forward(ctx, &pol->mlp[0], params, env->game->observe(ctx, env, state, NULL));
            dg_tensor *b = dg_mlp_forward(ctx, &pol->mlp[1], params, env->game->observe2(ctx, env, state, NULL));
            dg_tensor *act = dg_new(ctx, 2, (int[]){B, A});
            if (!a || !b || !act) {
                rc = dg_err_set(e, DG_ERR_NOMEM, "hji versus: %s", dg_ctx_error(ctx));
                goto out;
            }
            for (int i = 0; i < B; i++) {
                double x[DG_HJI_MAX_DIMS], u[DG_HJI_MAX_INPUT], d[DG_HJI_MAX_INPUT];
                map_state(l, nx, st + (size_t)S * i, x);
                dg_hji_feedback(p, V, tau, layer, x, u, d);
                float *ac = act->data + (size_t)A * i;
                for (int j = 0; j < A1; j++) ac[j] = a->data[(size_t)A1 * i + j];
                for (int j = 0; j < env->act2_dim; j++) ac[A1 + j] = b->data[(size_t)env->act2_dim * i + j];
                for (int j = 0; j < p->game.u.dim && hji_p; j++) ac[l->u_act[j]] = (float)u[j];
                for (int j = 0; j < p->game.d.dim && hji_e; j++) ac[l->d_act[j]] = (float)d[j];
            }
            dg_tensor *next = env->game->step(ctx, env, state, NULL, act);
            if (!next) {
                rc = dg_err_set(e, DG_ERR_NOMEM, "hji versus: %s", dg_ctx_error(ctx));
                goto out;
            }
            memcpy(st, next->data, (size_t)B * S * sizeof(float));
            for (int i = 0; i < B; i++)
                if (!done[i] && capture_dist(l, nx, st + (size_t)S * i) < radius) {
                    done[i] = 1;
                    captured++;
                    tsum += t * env->dt;
                }
        }
        r->capture_rate[k] = (double)captured / B;
        r->capture_time[k] = captured ? tsum / captured : NAN;
    }
out:
    dg_ctx_free(ctx);
    free(st0);
    free(st);
    free(done);
    return rc;
}
