/* Tanh MLP policies with PyTorch's layout, names and initialisation. */
#include <tgmath.h>
#include <stdio.h>
#include <string.h>

#include "difgames/policy.h"

dg_status dg_mlp_init(dg_mlp *m, dg_params *p, const char *prefix, int in, const int *hidden,
                      int nhidden, int out, dg_err *e) {
    memset(m, 0, sizeof *m);
    if (nhidden < 0 || nhidden + 1 > DG_MLP_MAX_LAYERS)
        return dg_err_set(e, DG_ERR_ARG, "policy: %d hidden layers (0 to %d allowed)", nhidden,
                          DG_MLP_MAX_LAYERS - 1);
    m->nlayers = nhidden + 1;
    m->sizes[0] = in;
    for (int l = 0; l < nhidden; l++) m->sizes[l + 1] = hidden[l];
    m->sizes[m->nlayers] = out;
    for (int l = 0; l <= m->nlayers; l++)
        if (m->sizes[l] <= 0 || m->sizes[l] > 65536)
            return dg_err_set(e, DG_ERR_ARG, "policy: layer size %d out of range (1 to 65536)", m->sizes[l]);
    for (int l = 0; l < m->nlayers; l++) {
        char name[64];
        snprintf(name, sizeof name, "%s.%d.weight", prefix, 2 * l);
        m->w[l] = dg_params_add(p, name, 2, (int[]){m->sizes[l + 1], m->sizes[l]}, e);
        if (m->w[l] < 0) return e ? e->status : DG_ERR_ARG;
        snprintf(name, sizeof name, "%s.%d.bias", prefix, 2 * l);
        m->b[l] = dg_params_add(p, name, 1, (int[]){m->sizes[l + 1]}, e);
        if (m->b[l] < 0) return e ? e->status : DG_ERR_ARG;
    }
    return DG_OK;
}

void dg_mlp_reset_params(const dg_mlp *m, dg_params *p, dg_rng *rng) {
    for (int l = 0; l < m->nlayers; l++) {
        const dg_real k = 1.0f / sqrt((dg_real)m->sizes[l]);
        dg_real *w = dg_params_data(p, m->w[l]), *b = dg_params_data(p, m->b[l]);
        for (int64_t i = 0; i < p->info[m->w[l]].n; i++) w[i] = dg_rng_uniform(rng, -k, k);
        for (int64_t i = 0; i < p->info[m->b[l]].n; i++) b[i] = dg_rng_uniform(rng, -k, k);
    }
}

dg_tensor *dg_mlp_forward(dg_ctx *ctx, const dg_mlp *m, dg_params *p, dg_tensor *x) {
    for (int l = 0; l < m->nlayers && x; l++)
        x = dg_linear_tanh(ctx, x, dg_param(ctx, p, m->w[l]), dg_param(ctx, p, m->b[l]));
    return x;
}

int64_t dg_mlp_macs(const dg_mlp *m, int B) {
    int64_t macs = 0;
    for (int l = 0; l < m->nlayers; l++) macs += (int64_t)B * m->sizes[l] * m->sizes[l + 1];
    return macs;
}

/* ------------------------------------------------------------ players */

/* The players' MLPs for a game of shape s into a new *p (see policy.h); DG_OK, or *p NULL and e set. */
dg_status dg_policy_create_shape(const dg_policy_shape *s, const int *hidden, int nhidden, dg_policy *pol,
                                 dg_params **p, dg_err *e) {
    memset(pol, 0, sizeof *pol);
    *p = dg_params_create();
    if (!*p) return dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    pol->n = s->nplayers > 1 ? 2 : 1;
    dg_status st = dg_mlp_init(&pol->mlp[0], *p, "net", s->obs_dim, hidden, nhidden, s->act_dim, e);
    if (st == DG_OK && pol->n == 2)
        st = dg_mlp_init(&pol->mlp[1], *p, "evader", s->obs2_dim, hidden, nhidden, s->act2_dim, e);
    if (st != DG_OK) {
        dg_params_free(*p);
        *p = NULL;
    }
    return st;
}

/* The players' open-loop plans for a game of shape s into a new *p (see policy.h); DG_OK, or *p NULL
 * and e set. */
dg_status dg_policy_create_plan_shape(const dg_policy_shape *s, dg_policy *pol, dg_params **p, dg_err *e) {
    memset(pol, 0, sizeof *pol);
    *p = dg_params_create();
    if (!*p) return dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    pol->n = s->nplayers > 1 ? 2 : 1;
    pol->plan_steps = s->plan_steps > 0 && s->plan_steps < s->horizon ? s->plan_steps : s->horizon;
    for (int i = 0; i < pol->n; i++) {
        pol->plan[i] = dg_params_add(*p, i ? "evader_plan" : "plan", 2,
                                     (int[]){pol->plan_steps, i ? s->act2_dim : s->act_dim}, e);
        if (pol->plan[i] < 0) {
            dg_params_free(*p);
            *p = NULL;
            return e ? e->status : DG_ERR_ARG;
        }
    }
    return DG_OK;
}

void dg_policy_reset_params(const dg_policy *pol, dg_params *p, dg_rng *rng) {
    for (int i = 0; i < pol->n; i++)
        if (pol->plan_steps) memset(dg_params_data(p, pol->plan[i]), 0, p->info[pol->plan[i]].n * sizeof(dg_real));
        else dg_mlp_reset_params(&pol->mlp[i], p, rng);
}

dg_tensor *dg_policy_act(dg_ctx *ctx, const dg_policy *pol, dg_params *p, int i, int t, dg_tensor *obs, int B) {
    if (pol->fn[i]) return pol->fn[i](ctx, pol->fn_user[i], t, obs, B);
    if (!pol->plan_steps) return dg_mlp_forward(ctx, &pol->mlp[i], p, obs);
    const int A = p->info[pol->plan[i]].shape[1];
    if (t > pol->plan_steps) return dg_zeros(ctx, 2, (int[]){B, A});
    dg_tensor *row = dg_tanh(ctx, dg_rows(ctx, dg_param(ctx, p, pol->plan[i]), t - 1, 1));  /* (1, A) */
    return B == 1 ? row : dg_add(ctx, dg_zeros(ctx, 2, (int[]){B, A}), row);            /* (B, A) */
}

int dg_policy_first_param(const dg_policy *pol, int i) { return pol->plan_steps ? pol->plan[i] : pol->mlp[i].w[0]; }
