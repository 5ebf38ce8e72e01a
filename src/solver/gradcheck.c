/* A game's finite-difference check: backward against central differences for the game's step and
 * step_cost (w.r.t. state and action) and for a short episode (w.r.t. the policy parameters). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/memory.h"
#include "difgames/trainer.h"

typedef struct step_case {
    const dg_env *env;
    const dg_real  *aux;
    int           B, unit;
} step_case;

/* loss = Σ_i w_i term_i(step(state, action), action); w_i = 1 with unit weights */
static dg_tensor *step_loss(dg_ctx *ctx, dg_params *p, void *user) {
    const step_case *c = user;
    const dg_env *env = c->env;
    dg_tensor *state = dg_param(ctx, p, 0), *action = dg_param(ctx, p, 1);
    dg_tensor *aux = env->aux_dim ? dg_from(ctx, 2, (int[]){c->B, env->aux_dim}, c->aux) : NULL;
    /* a noisy game's step with fixed draws (the default stream's, step 1): the reparameterised step */
    dg_tensor *next = dg_env_step_noise(ctx, env, 1, state, aux, action, NULL);
    if (!next) return NULL;
    dg_tensor *terms[DG_LOSS_MAX_TERMS] = {0};
    env->game->step_cost(ctx, env, next, aux, action, 1.0f / (dg_real)c->B, terms);
    dg_env_add_terminal(ctx, env, env->horizon, next, aux, 1.0f / (dg_real)c->B, terms);  /* and the terminal cost */
    dg_tensor *total = NULL;
    for (int i = 0; i < env->nterms; i++) {
        dg_tensor *w = c->unit ? terms[i] : dg_scale(ctx, terms[i], env->term_weights[i]);
        total = total ? dg_add(ctx, total, w) : w;
    }
    return total;
}

typedef struct episode_case {
    const dg_env    *env;
    const dg_policy *m;
    const dg_real     *state, *aux;
    int              B;
} episode_case;

static dg_tensor *episode_loss(dg_ctx *ctx, dg_params *p, void *user) {
    const episode_case *c = user;
    return dg_rollout(ctx, c->env, c->m, p, c->state, c->aux, c->B, 1.0f / (dg_real)c->B, NULL, NULL, 0);
}

static void worst_name(const dg_params *p, const dg_gradcheck_report *r, char *out) {
    snprintf(out, 64, "%s", r->worst_param >= 0 ? p->info[r->worst_param].name : "-");
}

dg_env_gradcheck_opts dg_env_gradcheck_opts_default(void) {
    return (dg_env_gradcheck_opts){.batch = 4, .eps = 0.1f, .max_per_param = 24, .hidden = {64, 64}, .nhidden = 2};
}

dg_status dg_env_gradcheck(const dg_env *env_in, const dg_env_gradcheck_opts *o, dg_env_gradcheck_result *r,
                           dg_err *e) {
    if (!env_in || !o || !r) return dg_err_set(e, DG_ERR_ARG, "gradcheck: needs a game, options and a result");
    if (o->batch < 1 || o->horizon < 0 || !(o->eps > 0 && o->eps < 1) || o->max_per_param < 0)
        return dg_err_set(e, DG_ERR_ARG, "gradcheck: batch >= 1, horizon >= 0, eps in (0, 1) needed");
    memset(r, 0, sizeof *r);
    dg_env env = *env_in;  /* a copy whose horizon may be shortened */
    if (o->horizon) env.horizon = o->horizon;
    else if (env.horizon > 10) env.horizon = 10;
    r->horizon = env.horizon;
    const int B = o->batch, S = env.state_dim, A = dg_env_action_col(&env, env.nplayers);  /* every learned player's columns */
    const int AX = env.aux_dim ? env.aux_dim : 1;
    const double tape = 1.25 * dg_rollout_memory(&env, o->hidden, o->nhidden, B, env.horizon, 1);
    dg_err me = {0};
    if (dg_mem_check(tape, &me) != DG_OK)  /* the episode's tape, refused before anything is allocated */
        return dg_err_set(e, DG_ERR_ARG, "batch %d x horizon %d: the episode %s; lower the batch or the horizon", B,
                          env.horizon, me.msg);
    dg_real *state = malloc((size_t)B * S * sizeof(dg_real)), *aux = malloc((size_t)B * AX * sizeof(dg_real));
    dg_params *sp = dg_params_create(), *pp = NULL;
    dg_ctx *ctx = dg_ctx_create(tape > (double)((size_t)256 << 20) ? (size_t)tape : (size_t)256 << 20);
    dg_policy m;
    dg_status rc = DG_OK;
    if (!state || !aux || !sp || !ctx) {
        rc = dg_err_set(e, DG_ERR_NOMEM, "gradcheck: out of memory");
        goto done;
    }
    dg_rng rng;
    dg_rng_seed(&rng, o->seed);
    if ((rc = env.game->reset(&env, &rng, B, state, aux, e)) != DG_OK) goto done;

    /* 1. step + step_cost w.r.t. state and action, at a state the game reaches with its bodies
     * moving: WARM steps from the reset states under a constant random action per episode. The
     * game's own step, not random numbers put into columns taken for velocities: that put
     * duel_simple's evader (whose columns 2, 3 are a position) next to the pursuer, at the kink
     * of |p - e|. */
    if (dg_params_add(sp, "state", 2, (int[]){B, S}, e) < 0 || dg_params_add(sp, "action", 2, (int[]){B, A}, e) < 0) {
        rc = e ? e->status : DG_ERR_NOMEM;
        goto done;
    }
    enum { WARM = 2 };
    dg_real *x = dg_params_data(sp, 0), *u = dg_params_data(sp, 1);
    memcpy(x, state, (size_t)B * S * sizeof(dg_real));
    for (int i = 0; i < B * A; i++) u[i] = dg_rng_uniform(&rng, -0.6f, 0.6f);
    for (int k = 0; k < WARM; k++) {
        dg_ctx_reset(ctx);
        dg_tensor *xt = dg_from(ctx, 2, (int[]){B, S}, x), *ut = dg_from(ctx, 2, (int[]){B, A}, u);
        dg_tensor *at = env.aux_dim ? dg_from(ctx, 2, (int[]){B, env.aux_dim}, aux) : NULL;
        dg_tensor *next = xt && ut ? env.game->step(ctx, &env, xt, at, ut) : NULL;
        if (!next) {
            rc = dg_err_set(e, DG_ERR_NOMEM, "step: %s", dg_ctx_error(ctx));
            goto done;
        }
        memcpy(x, next->data, (size_t)B * S * sizeof(dg_real));
    }
    dg_ctx_reset(ctx);
    for (int i = 0; i < B * A; i++)  /* inside the unit disk, away from its edge (a kink) */
        u[i] = dg_rng_uniform(&rng, -0.6f, 0.6f);
    /* The step's features can be narrower than eps (chase's fleeing evader pushes off the walls
     * through softplus(20 (|e| - 0.85)): width 0.05), where Richardson's error term is not small,
     * while float rounding dominates a much smaller step: the 40-odd elements are cheap, so each
     * is differenced at eps, eps/4 and eps/16 and the best-agreeing pair is used. */
    step_case sc = {&env, aux, B, o->unit_weights};
    if ((rc = dg_gradcheck_scales(ctx, sp, step_loss, &sc, o->eps, 3, 1e-2, 0, &r->step, e)) != DG_OK) {
        dg_err_prefix(e, "step_cost");
        goto done;
    }
    worst_name(sp, &r->step, r->step_worst);

    /* 2. a short episode w.r.t. the policy parameters */
    if ((rc = o->open_loop ? dg_policy_create_plan(&env, &m, &pp, e)
                           : dg_policy_create(&env, o->hidden, o->nhidden, &m, &pp, e)) != DG_OK) goto done;
    dg_policy_reset_params(&m, pp, &rng);
    episode_case ec = {&env, &m, state, aux, B};
    if ((rc = dg_gradcheck(ctx, pp, episode_loss, &ec, o->eps, 1e-2, o->max_per_param, &r->episode, e)) != DG_OK) {
        dg_err_prefix(e, "episode");
        goto done;
    }
    worst_name(pp, &r->episode, r->episode_worst);
    /* a parameter with an exactly zero gradient after one whole backward: a cut chain */
    dg_params_zero_grad(pp);
    dg_ctx_reset(ctx);
    dg_tensor *l = episode_loss(ctx, pp, &ec);
    if (l) dg_backward(ctx, l);
    int zero[DG_ENV_GRADCHECK_MAX_ZERO];
    r->nzero = dg_params_find_zero_grads(pp, zero, DG_ENV_GRADCHECK_MAX_ZERO);
    for (int i = 0; i < r->nzero && i < DG_ENV_GRADCHECK_MAX_ZERO; i++)
        snprintf(r->zero[i], sizeof r->zero[i], "%s", pp->info[zero[i]].name);
done:
    dg_ctx_free(ctx);
    dg_params_free(sp);
    dg_params_free(pp);
    free(state);
    free(aux);
    return rc;
}
