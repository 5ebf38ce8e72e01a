/* MLPs with PyTorch's layout, names and initialisation: the policies' tanh networks, and sine
 * (SIREN) or tanh value networks whose input gradient is on the tape.
 *
 * The input gradient (dg_mlp_forward_grad) of a one-output value network is taken by reverse mode
 * in one fused op (dg_mlp_value_grad): the forward, then g_l = (g_{l+1} ⊙ act'(z_l)) W_l down the
 * layers, and the op's own backward is the second-order reverse pass (the weights' gradient of any
 * loss of V and grad V, the HJI residual). That is six matrix products a layer whatever the input's
 * size, and the tape needs no general double backward. A network of several outputs carries the
 * input gradient forward instead: each layer z = h Wᵀ + b, h' = act(z) also maps the tangents
 * T = dh/dx (one row of `hidden` numbers for each input dimension and batch row) to
 * T' = act'(z) ⊙ (T Wᵀ), the value and tangent rows stacked through one fused op
 * (dg_linear_tangent, whose backward carries act'' to the value row): 3 (d + 1) products a layer
 * for d + 1 inputs, which is why the one-output path does not use it (air3d's 4 inputs: 15
 * against 6). */
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

dg_status dg_mlp_set_activation(dg_mlp *m, dg_mlp_act act, int linear_out, dg_err *e) {
    if (act != DG_MLP_TANH && act != DG_MLP_SINE)
        return dg_err_set(e, DG_ERR_ARG, "policy: activation %d (tanh %d or sine %d)", (int)act, DG_MLP_TANH,
                          DG_MLP_SINE);
    m->act = act;
    m->linear_out = linear_out != 0;
    m->omega0 = act == DG_MLP_SINE ? DG_MLP_SIREN_OMEGA0 : 0.0;
    return DG_OK;
}

void dg_mlp_reset_params(const dg_mlp *m, dg_params *p, dg_rng *rng) {
    for (int l = 0; l < m->nlayers; l++) {
        const dg_real k = 1.0f / sqrt((dg_real)m->sizes[l]);
        dg_real kw = k;
        if (m->act == DG_MLP_SINE)
            kw = l == 0 ? 1.0 / m->sizes[0] : sqrt(6.0 / m->sizes[l]) / m->omega0;
        dg_real *w = dg_params_data(p, m->w[l]), *b = dg_params_data(p, m->b[l]);
        for (int64_t i = 0; i < p->info[m->w[l]].n; i++) w[i] = dg_rng_uniform(rng, -kw, kw);
        for (int64_t i = 0; i < p->info[m->b[l]].n; i++) b[i] = dg_rng_uniform(rng, -k, k);
    }
}

/* Layer l of m on h: act(h Wᵀ + b), or h Wᵀ + b for a linear last layer (the bits that
 * dg_linear_tangent's value rows repeat) */
static dg_tensor *mlp_layer(dg_ctx *ctx, const dg_mlp *m, dg_params *p, int l, dg_tensor *h) {
    dg_tensor *w = dg_param(ctx, p, m->w[l]), *b = dg_param(ctx, p, m->b[l]);
    if (m->linear_out && l == m->nlayers - 1) return dg_linear(ctx, h, w, b);
    if (m->act == DG_MLP_SINE) return dg_sin(ctx, dg_scale(ctx, dg_linear(ctx, h, w, b), (dg_real)m->omega0));
    return dg_linear_tanh(ctx, h, w, b);  /* the policies' fused layer: their bits */
}

dg_tensor *dg_mlp_forward(dg_ctx *ctx, const dg_mlp *m, dg_params *p, dg_tensor *x) {
    for (int l = 0; l < m->nlayers && x; l++) x = mlp_layer(ctx, m, p, l, x);
    return x;
}

/* The value and its tangents are kept stacked, (B·(in + 1), width): the B value rows h, then
 * d h / d x_j of point b at row B + b·in + j, so that each layer is one dg_linear_tangent (one matrix
 * product over all the rows, the activation and its derivative in one pass, no copies). The input's
 * stack is x, then the unit rows e_j (dx/dx_j); the output's is y (B, out), then dy (B, in·out). */
dg_tensor *dg_mlp_forward_grad(dg_ctx *ctx, const dg_mlp *m, dg_params *p, dg_tensor *x, dg_tensor **dy) {
    *dy = NULL;
    if (!x) return NULL;
    const int in = m->sizes[0], k = in + 1, out = m->sizes[m->nlayers];
    if (x->ndim != 2 || x->shape[1] != in)
        return dg_ctx_fail(ctx, DG_ERR_SHAPE, "mlp forward_grad: x needs shape (B, %d)", in);
    const int B = x->shape[0];
    if (out == 1) {  /* a value network: reverse mode, one op (dg_mlp_value_grad) */
        dg_tensor *w[DG_MLP_MAX_LAYERS], *b[DG_MLP_MAX_LAYERS];
        for (int l = 0; l < m->nlayers; l++) w[l] = dg_param(ctx, p, m->w[l]), b[l] = dg_param(ctx, p, m->b[l]);
        dg_tensor *r = dg_mlp_value_grad(ctx, x, m->nlayers, w, b, m->act == DG_MLP_SINE ? DG_TANGENT_SINE : DG_TANGENT_TANH,
                                         m->linear_out, (dg_real)m->omega0);
        dg_tensor *y = dg_cols(ctx, r, 0, 1);
        *dy = dg_cols(ctx, r, 1, in);
        if (!y || !*dy) return *dy = NULL;
        return y;
    }
    if ((int64_t)B * k > 0x7fffffff) return dg_ctx_fail(ctx, DG_ERR_SHAPE, "mlp forward_grad: %d rows too many", B);
    dg_tensor *z = dg_new_2d(ctx, B * k, in);
    if (!z) return NULL;
    memset(z->data + (int64_t)B * in, 0, (size_t)B * in * in * sizeof(dg_real));
    for (int64_t r = 0; r < (int64_t)B * in; r++) z->data[(B + r) * in + r % in] = 1.0f;
    if (x->requires_grad)  /* x on the tape: its rows through a concat */
        z = dg_concat(ctx, (dg_tensor *[]){x, dg_rows(ctx, z, B, B * in)}, 2, 0);
    else
        memcpy(z->data, x->data, (size_t)B * in * sizeof(dg_real));
    for (int l = 0; l < m->nlayers && z; l++) {
        dg_tangent_act act = m->act == DG_MLP_SINE ? DG_TANGENT_SINE : DG_TANGENT_TANH;
        if (m->linear_out && l == m->nlayers - 1) act = DG_TANGENT_LINEAR;
        z = dg_linear_tangent(ctx, z, dg_param(ctx, p, m->w[l]), dg_param(ctx, p, m->b[l]), k, act, (dg_real)m->omega0);
    }
    dg_tensor *y = dg_rows(ctx, z, 0, B);
    *dy = dg_reshape(ctx, dg_rows(ctx, z, B, B * in), 2, (int[]){B, in * out});
    if (!y || !*dy) return *dy = NULL;
    return y;
}

int64_t dg_mlp_macs(const dg_mlp *m, int B) {
    int64_t macs = 0;
    for (int l = 0; l < m->nlayers; l++) macs += (int64_t)B * m->sizes[l] * m->sizes[l + 1];
    return macs;
}

/* ------------------------------------------------------------ players */

/* Player i's parameter prefix: "net" (the agent or pursuer), "evader", then "player2", "player3"
 * (names old checkpoints keep); plan 1: its open-loop plan's name ("plan", "evader_plan",
 * "player2_plan", ...), into buf (size bytes). */
static const char *player_name(int i, int plan, char *buf, size_t size) {
    if (i == 0) return plan ? "plan" : "net";
    if (i == 1) return plan ? "evader_plan" : "evader";
    snprintf(buf, size, "player%d%s", i, plan ? "_plan" : "");
    return buf;
}

/* Player i's observation and action sizes in shape s. */
static void player_dims(const dg_policy_shape *s, int i, int *obs, int *act) {
    *obs = i == 0 ? s->obs_dim : i == 1 ? s->obs2_dim : s->obs_dims[i];
    *act = i == 0 ? s->act_dim : i == 1 ? s->act2_dim : s->act_dims[i];
}

/* The players of shape s: 1 (nplayers 0 or 1) to DG_MAX_PLAYERS; -1 past it. */
static int player_count(const dg_policy_shape *s) {
    return s->nplayers <= 1 ? 1 : s->nplayers <= DG_MAX_PLAYERS ? s->nplayers : -1;
}

/* The players' MLPs for a game of shape s into a new *p (see policy.h); DG_OK, or *p NULL and e set. */
dg_status dg_policy_create_shape(const dg_policy_shape *s, const int *hidden, int nhidden, dg_policy *pol,
                                 dg_params **p, dg_err *e) {
    memset(pol, 0, sizeof *pol);
    if ((pol->n = player_count(s)) < 0)
        return dg_err_set(e, DG_ERR_ARG, "policy: %d players (1 to %d)", s->nplayers, DG_MAX_PLAYERS);
    *p = dg_params_create();
    if (!*p) return dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    dg_status st = DG_OK;
    for (int i = 0; i < pol->n && st == DG_OK; i++) {
        char buf[32];
        int obs, act;
        player_dims(s, i, &obs, &act);
        st = dg_mlp_init(&pol->mlp[i], *p, player_name(i, 0, buf, sizeof buf), obs, hidden, nhidden, act, e);
    }
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
    if ((pol->n = player_count(s)) < 0)
        return dg_err_set(e, DG_ERR_ARG, "policy: %d players (1 to %d)", s->nplayers, DG_MAX_PLAYERS);
    *p = dg_params_create();
    if (!*p) return dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    pol->plan_steps = s->plan_steps > 0 && s->plan_steps < s->horizon ? s->plan_steps : s->horizon;
    for (int i = 0; i < pol->n; i++) {
        char buf[32];
        int obs, act;
        player_dims(s, i, &obs, &act);
        pol->plan[i] = dg_params_add(*p, player_name(i, 1, buf, sizeof buf), 2, (int[]){pol->plan_steps, act}, e);
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
