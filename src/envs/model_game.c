/* model: a game read from a config's `model:` section (docs/models.md), played by the gradient
 * solver. The dynamics, observations and costs are expressions (src/model/); each is one fused op
 * on the tape whose backward multiplies the expressions' symbolic partial derivatives. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "envs/games.h"
#include "envs/model_game.h"
#include "model/model.h"

typedef struct holder {
    dg_game game;                              /* first: env->game points here */
    dg_loss_term loss[DG_MODEL_MAX_TERMS];
    dg_model *m;
    int learned[DG_MAX_PLAYERS];               /* the learned players' inputs: min first (general-sum:
                                                  model.players' order), -1 none */
    char state_names[DG_MODEL_MAX_STATE * 32]; /* the state's names, comma-separated (dg_env.state_names) */
} holder;

static holder *of(const dg_env *env) { return (holder *)(void *)env->game; }

/* The values of one row: v must hold the constants (dg_model_values, once per op); the state, aux
 * and the inputs the actions give (learned players) go in here. An input no one learns keeps its
 * `hold` (base_values) unless the action row is wider than the learned players' (aw columns): then
 * its value follows them, [-1, 1] onto its box (certify's grid searching an adversarial input). */
static void row_values(const holder *h, const dg_env *env, const dg_real *s, const dg_real *a, const dg_real *act,
                       int aw, double *v) {
    const dg_model *m = h->m;
    for (int i = 0; i < m->ns; i++) v[m->s0 + i] = s[i];
    for (int j = 0; j < m->naux; j++) v[m->a0 + j] = a[j];
    int off = 0;
    for (int q = 0; q < DG_MAX_PLAYERS; q++) {
        if (h->learned[q] < 0) continue;
        const dg_model_input *in = &m->in[h->learned[q]];
        for (int j = 0; j < in->dim; j++)
            v[in->first + j] = 0.5 * (in->lo[j] + in->hi[j]) + (act ? 0.5 * (in->hi[j] - in->lo[j]) * act[off + j] : 0.0);
        off += in->dim;
    }
    for (int p = 0; act && off < aw && p < m->ninputs; p++) {  /* the free inputs' columns, in input order */
        const dg_model_input *in = &m->in[p];
        if (in->learned) continue;
        for (int j = 0; j < in->dim && off + j < aw; j++)
            v[in->first + j] = 0.5 * (in->lo[j] + in->hi[j]) + 0.5 * (in->hi[j] - in->lo[j]) * act[off + j];
        off += in->dim;
    }
}

/* v's constants, and the held values of the inputs no one learns (by default their box centres) */
static void base_values(const holder *h, double *v) {
    const dg_model *m = h->m;
    dg_model_values(m, v);
    for (int p = 0; p < m->ninputs; p++)
        for (int j = 0; j < m->in[p].dim; j++)
            v[m->in[p].first + j] = m->in[p].learned ? 0.5 * (m->in[p].lo[j] + m->in[p].hi[j]) : m->in[p].hold[j];
}

/* adds the gradient G over the values into the operands' gradients of row b */
static void row_scatter(const holder *h, const double *G, dg_real *gs, dg_real *ga, dg_real *gact) {
    const dg_model *m = h->m;
    if (gs)
        for (int i = 0; i < m->ns; i++) gs[i] += (dg_real)G[m->s0 + i];
    if (ga)
        for (int j = 0; j < m->naux; j++) ga[j] += (dg_real)G[m->a0 + j];
    int off = 0;
    for (int q = 0; q < DG_MAX_PLAYERS && gact; q++) {
        if (h->learned[q] < 0) continue;
        const dg_model_input *in = &m->in[h->learned[q]];
        for (int j = 0; j < in->dim; j++) gact[off + j] += (dg_real)(G[in->first + j] * 0.5 * (in->hi[j] - in->lo[j]));
        off += in->dim;
    }
}

/* G += g * d x / d values at v (but for the episode's values when skip_aux: no gradient wanted there) */
static void expr_grad(const dg_model *m, const dg_model_expr *x, const double *v, double g, double *G, int skip_aux) {
    for (int k = 0; k < x->nv; k++)
        if (x->d[k] && x->dkind[k] && !(skip_aux && m->kind[x->var[k]] == DG_MV_AUX))
            G[x->var[k]] += g * dg_model_eval_d(x, k, v);
}

typedef struct op_state { const holder *h; int has_aux, has_act; dg_real scale; } op_state;

static void operands(dg_tensor *out, const op_state *s, dg_tensor **st, dg_tensor **aux, dg_tensor **act) {
    int i = 0;
    *st = out->srcs[i++];
    *aux = s->has_aux ? out->srcs[i++] : NULL;
    *act = s->has_act ? out->srcs[i++] : NULL;
}

static dg_real *grad_or_null(dg_ctx *ctx, dg_tensor *t) { return t && t->requires_grad ? dg_grad_of(ctx, t) : NULL; }

#define ROW(t, b) ((t) ? (t)->data + (int64_t)(b) * (t)->shape[1] : NULL)
#define GROW(g, t, b) ((g) ? (g) + (int64_t)(b) * (t)->shape[1] : NULL)

/* ----------------------------------------------------------------- step */

/* x_i <- x_i + dt f_i(values), in the order of the dynamics, each update reading those before it */
static void step_row(const dg_model *m, double *v, double snap[][DG_MODEL_MAX_NAMES]) {
    const double dt = m->cval[m->s0 - 1];
    for (int k = 0; k < m->ndyn; k++) {
        if (snap) memcpy(snap[k], v, sizeof(double) * (size_t)m->nnames);
        v[m->dyn_var[k]] += dt * dg_model_eval(&m->dyn[k], v);
    }
}

static void step_backward(dg_ctx *ctx, dg_tensor *out) {
    const op_state *s = out->state;
    const holder *h = s->h;
    const dg_model *m = h->m;
    dg_tensor *st, *aux, *act;
    operands(out, s, &st, &aux, &act);
    dg_real *gs = grad_or_null(ctx, st), *ga = grad_or_null(ctx, aux), *gact = grad_or_null(ctx, act);
    if (!gs && !ga && !gact) return;
    const double dt = m->cval[m->s0 - 1];
    dg_model_lock(m);
    double v[DG_MODEL_MAX_NAMES], G[DG_MODEL_MAX_NAMES], snap[DG_MODEL_MAX_STATE][DG_MODEL_MAX_NAMES];
    base_values(h, v);
    for (int b = 0; b < st->shape[0]; b++) {
        memset(G, 0, sizeof(double) * (size_t)m->nnames);
        row_values(h, NULL, ROW(st, b), ROW(aux, b), ROW(act, b), act ? act->shape[1] : 0, v);
        step_row(m, v, snap);
        for (int i = 0; i < m->ns; i++) G[m->s0 + i] = out->grad[(int64_t)b * m->ns + i];
        for (int k = m->ndyn - 1; k >= 0; k--) {
            const double gi = G[m->dyn_var[k]];
            if (gi != 0.0) expr_grad(m, &m->dyn[k], snap[k], gi * dt, G, !ga);
        }
        row_scatter(h, G, GROW(gs, st, b), GROW(ga, aux, b), GROW(gact, act, b));
    }
    dg_model_unlock(m);
}

/* one op over srcs {state, aux?, action?} of shape (B, ncols) or (1) */
static dg_tensor *model_op(dg_ctx *ctx, const char *name, const holder *h, dg_tensor *state, dg_tensor *aux,
                           dg_tensor *action, int ndim, const int *shape, dg_backward_fn bw, dg_real scale) {
    dg_tensor *srcs[3];
    int n = 0;
    srcs[n++] = state;
    if (h->m->naux > 0) srcs[n++] = aux;
    if (action) srcs[n++] = action;
    const op_state s = {h, h->m->naux > 0, action != NULL, scale};
    return dg_custom(ctx, name, ndim, shape, srcs, n, bw, &s, sizeof s);
}

static dg_tensor *model_step(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux, dg_tensor *action) {
    const holder *h = of(env);
    const dg_model *m = h->m;
    dg_tensor *out = model_op(ctx, "model_step", h, state, aux, action, 2, state->shape, step_backward, 1.0f);
    if (!out) return NULL;
    dg_model_lock(m);
    double v[DG_MODEL_MAX_NAMES];
    base_values(h, v);
    for (int b = 0; b < state->shape[0]; b++) {
        row_values(h, env, ROW(state, b), m->naux ? ROW(aux, b) : NULL, ROW(action, b), action ? action->shape[1] : 0, v);
        step_row(m, v, NULL);
        for (int i = 0; i < m->ns; i++) out->data[(int64_t)b * m->ns + i] = (dg_real)v[m->s0 + i];
    }
    dg_model_unlock(m);
    return out;
}

/* -------------------------------------------------------------- diffusion */

/* model.diffusion (docs/models.md): dx_i = f_i dt + sigma_i dW_i for the states it lists, Euler-Maruyama:
 * the drift's step (model_step), then x_i += sigma_i sqrt(dt) z_i, sigma_i at the values before the
 * step (the state, episode and inputs the step started from), z_i independent standard normals. */

/* d out / d values of the sigma_k at the row's values before the step */
static void diffusion_backward(dg_ctx *ctx, dg_tensor *out) {
    const op_state *s = out->state;
    const holder *h = s->h;
    const dg_model *m = h->m;
    dg_tensor *st, *aux, *act;
    operands(out, s, &st, &aux, &act);
    dg_real *gs = grad_or_null(ctx, st), *ga = grad_or_null(ctx, aux), *gact = grad_or_null(ctx, act);
    if (!gs && !ga && !gact) return;
    const int nd = m->ndiff;
    dg_model_lock(m);
    double v[DG_MODEL_MAX_NAMES], G[DG_MODEL_MAX_NAMES];
    base_values(h, v);
    for (int b = 0; b < st->shape[0]; b++) {
        memset(G, 0, sizeof(double) * (size_t)m->nnames);
        row_values(h, NULL, ROW(st, b), ROW(aux, b), ROW(act, b), act ? act->shape[1] : 0, v);
        for (int k = 0; k < nd; k++) {
            const double g = out->grad[(int64_t)b * nd + k];
            if (g != 0.0) expr_grad(m, &m->diff[k], v, g, G, !ga);
        }
        row_scatter(h, G, GROW(gs, st, b), GROW(ga, aux, b), GROW(gact, act, b));
    }
    dg_model_unlock(m);
}

/* sigma (B, ndiff): each listed state's diffusion at the row's values */
static dg_tensor *diffusion_op(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux, dg_tensor *action) {
    const holder *h = of(env);
    const dg_model *m = h->m;
    const int B = state->shape[0], nd = m->ndiff;
    dg_tensor *out = model_op(ctx, "model_diffusion", h, state, aux, action, 2, (int[]){B, nd}, diffusion_backward,
                              1.0f);
    if (!out) return NULL;
    dg_model_lock(m);
    double v[DG_MODEL_MAX_NAMES];
    base_values(h, v);
    for (int b = 0; b < B; b++) {
        row_values(h, env, ROW(state, b), m->naux ? ROW(aux, b) : NULL, ROW(action, b), action ? action->shape[1] : 0, v);
        for (int k = 0; k < nd; k++) out->data[(int64_t)b * nd + k] = (dg_real)dg_model_eval(&m->diff[k], v);
    }
    dg_model_unlock(m);
    return out;
}

/* the drift's step plus sigma sqrt(dt) z in the listed states' columns (z: (B, ndiff)) */
static dg_tensor *model_step_noise(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux, dg_tensor *action,
                                   dg_tensor *z) {
    const dg_model *m = of(env)->m;
    dg_tensor *next = model_step(ctx, env, state, aux, action);
    dg_tensor *sig = diffusion_op(ctx, env, state, aux, action);
    if (!next || !sig) return NULL;
    dg_tensor *dx = dg_mul(ctx, sig, dg_scale(ctx, z, (dg_real)sqrt(m->cval[m->s0 - 1])));
    dg_tensor *cols[DG_MODEL_MAX_STATE];
    for (int i = 0; i < m->ns; i++) {
        cols[i] = dg_cols(ctx, next, i, 1);
        for (int k = 0; k < m->ndiff; k++)
            if (m->diff_var[k] == m->s0 + i) cols[i] = dg_add(ctx, cols[i], dg_cols(ctx, dx, k, 1));
    }
    return dg_concat(ctx, cols, m->ns, 1);
}

/* ---------------------------------------------------------- observations */

static void obs_backward_p(dg_ctx *ctx, dg_tensor *out, int p) {
    const op_state *s = out->state;
    const holder *h = s->h;
    const dg_model *m = h->m;
    dg_tensor *st, *aux, *act;
    operands(out, s, &st, &aux, &act);
    dg_real *gs = grad_or_null(ctx, st), *ga = grad_or_null(ctx, aux);
    if (!gs && !ga) return;
    const int no = m->nobs[p];
    dg_model_lock(m);
    double v[DG_MODEL_MAX_NAMES], G[DG_MODEL_MAX_NAMES];
    base_values(h, v);
    for (int b = 0; b < st->shape[0]; b++) {
        memset(G, 0, sizeof(double) * (size_t)m->nnames);
        row_values(h, NULL, ROW(st, b), ROW(aux, b), NULL, 0, v);
        for (int k = 0; k < no; k++) {
            const double g = out->grad[(int64_t)b * no + k];
            if (g != 0.0) expr_grad(m, &m->obs[p][k], v, g, G, !ga);
        }
        row_scatter(h, G, GROW(gs, st, b), GROW(ga, aux, b), NULL);
    }
    dg_model_unlock(m);
}
static void obs_backward0(dg_ctx *ctx, dg_tensor *out) { obs_backward_p(ctx, out, 0); }
static void obs_backward1(dg_ctx *ctx, dg_tensor *out) { obs_backward_p(ctx, out, 1); }
static void obs_backward2(dg_ctx *ctx, dg_tensor *out) { obs_backward_p(ctx, out, 2); }
static void obs_backward3(dg_ctx *ctx, dg_tensor *out) { obs_backward_p(ctx, out, 3); }

static dg_tensor *observe_p(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux, int p) {
    const holder *h = of(env);
    const dg_model *m = h->m;
    const int B = state->shape[0], no = m->nobs[p];
    static void (*const BACKWARD[DG_MODEL_MAX_PLAYERS])(dg_ctx *, dg_tensor *) = {obs_backward0, obs_backward1,
                                                                                obs_backward2, obs_backward3};
    dg_tensor *out = model_op(ctx, p ? "model_observe2" : "model_observe", h, state, aux, NULL, 2,
                              (int[]){B, no}, BACKWARD[p], 1.0f);
    if (!out) return NULL;
    dg_model_lock(m);
    double v[DG_MODEL_MAX_NAMES];
    base_values(h, v);
    for (int b = 0; b < B; b++) {
        row_values(h, env, ROW(state, b), m->naux ? ROW(aux, b) : NULL, NULL, 0, v);
        for (int k = 0; k < no; k++) out->data[(int64_t)b * no + k] = (dg_real)dg_model_eval(&m->obs[p][k], v);
    }
    dg_model_unlock(m);
    return out;
}
static dg_tensor *model_observe(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux) {
    return observe_p(ctx, env, state, aux, 0);
}
static dg_tensor *model_observe2(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux) {
    const dg_model *m = of(env)->m;
    return observe_p(ctx, env, state, aux, m->nplayers ? m->player_obs[1] : 1);
}
/* general-sum player p (>= 2): its own observation, or model.observe */
static dg_tensor *model_observe_player(dg_ctx *ctx, const dg_env *env, int p, dg_tensor *state, dg_tensor *aux) {
    return observe_p(ctx, env, state, aux, of(env)->m->player_obs[p]);
}

/* ------------------------------------------------------------------ costs */

/* The terms k0 .. k0 + n of m->cost (running: k0 = 0, terminal: k0 = nrun) in one op of n values, one
 * pass over the batch each way */
typedef struct cost_state { op_state o; int k0, rows; } cost_state;  /* rows: one value per row and term */

static void cost_backward(dg_ctx *ctx, dg_tensor *out) {
    const cost_state *cs = out->state;
    const op_state *s = &cs->o;
    const holder *h = s->h;
    const dg_model *m = h->m;
    dg_tensor *st, *aux, *act;
    operands(out, s, &st, &aux, &act);
    dg_real *gs = grad_or_null(ctx, st), *ga = grad_or_null(ctx, aux), *gact = grad_or_null(ctx, act);
    if (!gs && !ga && !gact) return;
    const int nt = cs->rows ? out->shape[1] : (int)out->n;
    double g[DG_MODEL_MAX_TERMS], v[DG_MODEL_MAX_NAMES], G[DG_MODEL_MAX_NAMES];
    for (int k = 0; k < nt && !cs->rows; k++) g[k] = (double)out->grad[k] * s->scale;
    base_values(h, v);
    dg_model_lock(m);
    for (int b = 0; b < st->shape[0]; b++) {
        for (int k = 0; k < nt && cs->rows; k++) g[k] = (double)out->grad[(int64_t)b * nt + k];
        memset(G, 0, sizeof(double) * (size_t)m->nnames);
        row_values(h, NULL, ROW(st, b), ROW(aux, b), ROW(act, b), act ? act->shape[1] : 0, v);
        for (int k = 0; k < nt; k++)
            if (g[k] != 0.0) expr_grad(m, &m->cost[cs->k0 + k], v, g[k], G, !ga);
        row_scatter(h, G, GROW(gs, st, b), GROW(ga, aux, b), GROW(gact, act, b));
    }
    dg_model_unlock(m);
}

/* The costs k0 .. k0 + n of row b (the state, aux and action rows) into c: the per-row formula
 * both the batch means and the rows evaluate. v holds base_values. */
static void row_costs(const holder *h, const dg_env *env, dg_tensor *state, dg_tensor *aux, dg_tensor *action,
                      int64_t b, int k0, int n, double *v, double *c) {
    const dg_model *m = h->m;
    row_values(h, env, ROW(state, b), m->naux ? ROW(aux, b) : NULL, ROW(action, b), action ? action->shape[1] : 0, v);
    for (int k = 0; k < n; k++) c[k] = dg_model_eval(&m->cost[k0 + k], v);
}

/* terms[k0 .. k0 + n) of the batch (means: sums times inv_batch), or with rows the (B, n) costs of
 * each row; NULL on error */
static dg_tensor *cost_op(dg_ctx *ctx, const dg_env *env, const char *name, dg_tensor *state, dg_tensor *aux,
                          dg_tensor *action, dg_real inv_batch, int k0, int n, int rows) {
    const holder *h = of(env);
    const dg_model *m = h->m;
    dg_tensor *srcs[3];
    int ns = 0;
    srcs[ns++] = state;
    if (m->naux > 0) srcs[ns++] = aux;
    if (action) srcs[ns++] = action;
    const int B = state->shape[0];
    const cost_state cs = {{h, m->naux > 0, action != NULL, inv_batch}, k0, rows};
    dg_tensor *out = rows ? dg_custom(ctx, name, 2, (int[]){B, n}, srcs, ns, cost_backward, &cs, sizeof cs)
                          : dg_custom(ctx, name, 1, (int[]){n}, srcs, ns, cost_backward, &cs, sizeof cs);
    if (!out) return NULL;
    double sum[DG_MODEL_MAX_TERMS] = {0}, c[DG_MODEL_MAX_TERMS], v[DG_MODEL_MAX_NAMES];
    base_values(h, v);
    dg_model_lock(m);
    for (int b = 0; b < B; b++) {
        row_costs(h, env, state, aux, action, b, k0, n, v, c);
        for (int k = 0; k < n; k++)
            if (rows) out->data[(int64_t)b * n + k] = (dg_real)c[k];
            else sum[k] += c[k];
    }
    dg_model_unlock(m);
    for (int k = 0; k < n && !rows; k++) out->data[k] = (dg_real)sum[k] * inv_batch;
    return out;
}

/* the running terms on the new state; the terminal terms' slots hold 0 (their cost comes once, from
 * model_terminal_cost) */
static void model_step_cost(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux, dg_tensor *action,
                            dg_real inv_batch, dg_tensor **terms) {
    const dg_model *m = of(env)->m;
    const int nt = env->nterms, nr = m->nrun < nt ? m->nrun : nt;
    dg_tensor *out = nr ? cost_op(ctx, env, "model_costs", next, aux, action, inv_batch, 0, nr, 0) : NULL;
    for (int k = 0; k < nt; k++)  /* after the values: slices copy */
        terms[k] = k < nr ? (out ? dg_slice(ctx, out, 0, k, 1) : NULL) : dg_scalar(ctx, 0.0f);
}

/* the running terms of each row, (B, 1) each (the terminal terms' left NULL: 0 each step) */
static void model_step_cost_rows(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux, dg_tensor *action,
                                 dg_tensor **rows) {
    const dg_model *m = of(env)->m;
    const int nt = env->nterms, nr = m->nrun < nt ? m->nrun : nt;
    dg_tensor *out = nr ? cost_op(ctx, env, "model_cost_rows", next, aux, action, 1.0f, 0, nr, 1) : NULL;
    for (int k = 0; k < nr; k++) rows[k] = out ? dg_cols(ctx, out, k, 1) : NULL;
}

static void model_terminal_cost(dg_ctx *ctx, const dg_env *env, dg_tensor *final, dg_tensor *aux, dg_real inv_batch,
                                dg_tensor **terms) {
    const dg_model *m = of(env)->m;
    const int n = env->nterms - m->nrun;
    if (n <= 0) return;
    dg_tensor *out = cost_op(ctx, env, "model_terminal", final, aux, NULL, inv_batch, m->nrun, n, 0);
    for (int k = 0; k < n; k++) terms[m->nrun + k] = out ? dg_slice(ctx, out, 0, k, 1) : NULL;
}

static void model_terminal_cost_rows(dg_ctx *ctx, const dg_env *env, dg_tensor *final, dg_tensor *aux,
                                     dg_tensor **rows) {
    const dg_model *m = of(env)->m;
    const int n = env->nterms - m->nrun;
    if (n <= 0) return;
    dg_tensor *out = cost_op(ctx, env, "model_terminal_rows", final, aux, NULL, 1.0f, m->nrun, n, 1);
    for (int k = 0; k < n; k++) rows[m->nrun + k] = out ? dg_cols(ctx, out, k, 1) : NULL;
}

/* ---------------------------------------------------- reset, metrics, draw */

static dg_status model_reset(const dg_env *env, dg_rng *rng, int B, dg_real *state, dg_real *aux, dg_err *e) {
    const holder *h = of(env);
    const dg_model *m = h->m;
    dg_model_lock(m);
    for (int b = 0; b < B; b++) {
        double v[DG_MODEL_MAX_NAMES];
        dg_model_values(m, v);
        if (!dg_model_draw(m, rng, v)) {
            dg_model_unlock(m);
            return dg_err_set(e, DG_ERR_ARG, "model: no initial state satisfies a reset group's where after "
                              "1000000 draws");
        }
        for (int i = 0; i < m->ns; i++) state[(size_t)b * m->ns + i] = (dg_real)v[m->s0 + i];
        for (int j = 0; j < m->naux; j++) aux[(size_t)b * m->naux + j] = (dg_real)v[m->a0 + j];
    }
    dg_model_unlock(m);
    return DG_OK;
}

static void model_metrics(const dg_env *env, const dg_real *traj, const dg_real *aux, int B, int H, double *values) {
    const holder *h = of(env);
    const dg_model *m = h->m;
    dg_model_lock(m);
    for (int k = 0; k < m->nmetric; k++) {
        double sum = 0.0, v[DG_MODEL_MAX_NAMES];
        base_values(h, v);
        for (int b = 0; b < B; b++) {
            row_values(h, env, traj + ((int64_t)H * B + b) * m->ns, aux + (size_t)b * m->naux, NULL, 0, v);
            sum += dg_model_eval(&m->metric[k], v);
        }
        values[k] = B > 0 ? sum / B : NAN;
    }
    dg_model_unlock(m);
}

static int model_bodies(const dg_env *env, const dg_real *s, const dg_real *aux, dg_real *xy, int *is_goal) {
    const holder *h = of(env);
    const dg_model *m = h->m;
    double v[DG_MODEL_MAX_NAMES];
    int n = 0;
    base_values(h, v);
    dg_model_lock(m);
    row_values(h, env, s, aux, NULL, 0, v);
    for (int b = 0; b < m->nbodies; b++, n++) {
        xy[2 * n] = (dg_real)dg_model_eval(&m->body[b][0], v);
        xy[2 * n + 1] = (dg_real)dg_model_eval(&m->body[b][1], v);
        is_goal[n] = 0;
    }
    if (m->has_goal) {
        xy[2 * n] = (dg_real)dg_model_eval(&m->goal[0], v);
        xy[2 * n + 1] = (dg_real)dg_model_eval(&m->goal[1], v);
        is_goal[n++] = 1;
    }
    dg_model_unlock(m);
    return n;
}

/* ------------------------------------------------------------- creation */

/* every expression finite at a drawn initial state with the inputs at their centres: a division by
 * zero or a function outside its domain is named by its key here, not as a NaN in training */
static dg_status probe(const holder *h, dg_cfg *cfg, dg_err *e) {
    const dg_model *m = h->m;
    dg_rng rng;
    dg_rng_seed(&rng, 1);
    double v[DG_MODEL_MAX_NAMES];
    dg_model_values(m, v);
    if (!dg_model_draw(m, &rng, v))
        return dg_cfg_error(cfg, "model.reset", e, "no initial state satisfies a group's where after 1000000 draws");
    for (int p = 0; p < m->ninputs; p++)
        for (int j = 0; j < m->in[p].dim; j++) v[m->in[p].first + j] = 0.5 * (m->in[p].lo[j] + m->in[p].hi[j]);
    const dg_model_expr *all[DG_MODEL_MAX_STATE + DG_MODEL_MAX_PLAYERS * DG_MODEL_MAX_OBS + DG_MODEL_MAX_TERMS + 4];
    int n = 0;
    for (int k = 0; k < m->ndyn; k++) all[n++] = &m->dyn[k];
    for (int p = 0; p < DG_MODEL_MAX_PLAYERS; p++)
        for (int k = 0; k < m->nobs[p]; k++) all[n++] = &m->obs[p][k];
    for (int k = 0; k < m->ncost; k++) all[n++] = &m->cost[k];
    for (int k = 0; k < m->nmetric; k++) all[n++] = &m->metric[k];
    for (int i = 0; i < n; i++) {
        const double y = dg_model_eval(all[i], v);
        if (!isfinite(y)) {
            char at[256] = "";
            for (int j = 0; j < m->ns + m->naux && strlen(at) < 200; j++) {
                const int vi = j < m->ns ? m->s0 + j : m->a0 + j - m->ns;
                snprintf(at + strlen(at), sizeof at - strlen(at), "%s%s=%g", j ? ", " : "", m->name[vi], v[vi]);
            }
            return dg_cfg_error(cfg, all[i]->key, e, "evaluates to %g at an initial state (%s): a division by zero "
                                "or a function outside its domain", y, at);
        }
    }
    return DG_OK;
}

static dg_status model_create(dg_env *env, dg_cfg *cfg, dg_err *e) {
    holder *h = of(env);
    const dg_model *m = h->m;
    dg_status st = probe(h, cfg, e);
    if (st) return st;
    env->state_dim = m->ns;
    for (int i = 0; i < m->ns; i++) {
        const size_t len = strlen(h->state_names);
        snprintf(h->state_names + len, sizeof h->state_names - len, "%s%s", i ? "," : "", m->name[m->s0 + i]);
    }
    env->state_names = h->state_names;
    env->noise_dim = m->ndiff;  /* model.diffusion: one Brownian motion per state it lists */
    env->aux_dim = m->naux;
    env->aux_user_dim = m->naux;
    env->aux_name = m->naux ? m->aux_name : NULL;
    env->obs_dim = m->nobs[0];
    env->act_dim = m->in[h->learned[0]].dim;
    if (h->learned[1] >= 0) {
        env->nplayers = 2;
        env->obs2_dim = m->nobs[m->nplayers ? m->player_obs[1] : 1];
        env->act2_dim = m->in[h->learned[1]].dim;
    }
    if (m->nplayers) {  /* general-sum: each player's observation, input and share of each cost term */
        env->general_sum = 1;
        env->nplayers = m->nplayers;
        for (int q = 0; q < m->nplayers; q++) {
            env->player_obs[q] = m->nobs[m->player_obs[q]];
            env->player_act[q] = m->in[h->learned[q]].dim;
            env->player_names[q] = m->player_name[q];
            for (int k = 0; k < m->ncost; k++) env->player_share[q][k] = (dg_real)m->player_weight[q][k];
        }
    }
    env->nmetrics = m->nmetric;
    for (int k = 0; k < m->nmetric; k++) env->metric_names[k] = m->metric_name[k];
    env->nshapes = m->ncircles;
    for (int k = 0; k < m->ncircles; k++)
        env->shapes[k] = (dg_shape){DG_SHAPE_CIRCLE, m->circle[k][0], m->circle[k][1], m->circle[k][2], 0};
    return DG_OK;
}

static void model_destroy(dg_env *env) {
    holder *h = of(env);
    dg_model_free(h->m);
    free(h);
}

dg_env *dg_model_env_create(dg_cfg *cfg, dg_err *e) {
    float dt = 0.05f;
    if (dg_cfg_get(cfg, "env.dt", DG_CFG_F32, &dt, e)) return NULL;
    if (!(dt > 0.0f && dt <= 10.0f)) {
        dg_cfg_error(cfg, "env.dt", e, "must be in (0, 10]");
        return NULL;
    }
    holder *h = calloc(1, sizeof *h);
    if (!h) {
        dg_err_set(e, DG_ERR_NOMEM, "out of memory");
        return NULL;
    }
    if (!(h->m = dg_model_load(cfg, dt, e))) {
        free(h);
        return NULL;
    }
    dg_model *m = h->m;
    dg_model_mark_other(cfg, 0);
    for (int q = 0; q < DG_MAX_PLAYERS; q++) h->learned[q] = -1;
    if (m->nplayers)  /* general-sum: the players' order */
        for (int q = 0; q < m->nplayers; q++) h->learned[q] = m->player_input[q];
    else
        for (int p = 0; p < m->ninputs; p++)
            if (m->in[p].learned) h->learned[m->in[p].role_max] = p;
    const char *missing = !m->nobs[0] ? "model.observe" : !m->ncost ? "model.costs" : !m->nreset ? "model.reset" : NULL;
    if (missing) {
        dg_cfg_error(cfg, missing, e, "missing: the gradient solver needs the model's observe, costs and reset (a "
                     "model for the grid alone is solved by difgames hji solve)");
        dg_model_free(m);
        free(h);
        return NULL;
    }
    const char *why = h->learned[0] < 0 ? "a learned player of role min (learned: true)"
                    : (m->in[h->learned[0]].ball || (h->learned[1] >= 0 && m->in[h->learned[1]].ball))
                    ? "its learned players' inputs in boxes (set: box)" : NULL;
    if (why) {
        dg_cfg_error(cfg, "model.inputs", e, "the gradient solver needs %s", why);
        dg_model_free(m);
        free(h);
        return NULL;
    }
    if (!m->nplayers && h->learned[1] >= 0 && m->nobs[1] == 0) {
        dg_cfg_error(cfg, "model.observe2", e, "a learned max player needs its observation (observe2)");
        dg_model_free(m);
        free(h);
        return NULL;
    }
    for (int k = 0; k < m->ncost; k++)
        h->loss[k] = (dg_loss_term){m->cost_key[k], 1.0f, NULL, 0, m->cost[k].key};
    h->game = (dg_game){
        .name = m->game,  /* model.name: what every output calls the game (dg_env_source says "model") */
        .summary = dg_game_model()->summary,
        .dt = 0.05f,
        .horizon = 60,
        .loss = h->loss,
        .nloss = m->ncost,
        .create = model_create,
        .destroy = model_destroy,
        .reset = model_reset,
        .observe = model_observe,
        .observe2 = h->learned[1] >= 0 ? model_observe2 : NULL,
        .observe_player = m->nplayers > 2 ? model_observe_player : NULL,
        .step = model_step,
        .step_noise = m->ndiff ? model_step_noise : NULL,
        .step_cost = model_step_cost,
        .terminal_cost = m->ncost > m->nrun ? model_terminal_cost : NULL,
        .step_cost_rows = model_step_cost_rows,
        .terminal_cost_rows = m->ncost > m->nrun ? model_terminal_cost_rows : NULL,
        .metrics = m->nmetric ? model_metrics : NULL,
        .bodies = m->nbodies ? model_bodies : NULL,
        .body_names = m->body_names[0] ? m->body_names : NULL,
    };
    /* from here the env owns h: every failure frees it through destroy */
    return dg_env_create_game(&h->game, cfg, e);
}

/* what listings show of the model game: its summary and keys beside env.dt and env.horizon (the
 * defaults of a model's env); a model file's own game is made by dg_model_env_create */
static const dg_game MODEL_LISTING = {
    .name = "model",
    .summary = "a game written as a model file: game: model and a model: section of expressions (docs/models.md; "
               "the repository's are configs/models/*.yaml)",
    .dt = 0.05f,
    .horizon = 60,
    .keys = dg_model_key_table,
    .nkeys = DG_MODEL_NKEYS,
};

const dg_game *dg_game_model(void) { return &MODEL_LISTING; }

int dg_env_is_model(const dg_env *env) { return env && env->game && env->game->create == model_create; }

const char *dg_env_input_play_name(int play) {
    static const char *const NAMES[] = {"undeclared", "hold", "adversarial"};
    return play >= 0 && play < 3 ? NAMES[play] : NULL;
}

int dg_env_free_inputs(const dg_env *env, dg_env_input *in, int max) {
    if (!dg_env_is_model(env)) return 0;
    const dg_model *m = of(env)->m;
    int n = 0;
    for (int p = 0; p < m->ninputs; p++) {
        const dg_model_input *mi = &m->in[p];
        if (mi->learned) continue;
        if (in && n < max) {
            dg_env_input *x = &in[n];
            memset(x, 0, sizeof *x);
            x->name = mi->name;
            x->dim = mi->dim;
            x->play = mi->play == DG_MODEL_PLAY_HOLD ? DG_INPUT_HOLD
                    : mi->play == DG_MODEL_PLAY_ADVERSARIAL ? DG_INPUT_ADVERSARIAL : DG_INPUT_UNDECLARED;
            for (int j = 0; j < mi->dim && j < DG_INPUT_MAX_DIM; j++)
                x->hold[j] = mi->hold[j], x->lo[j] = mi->lo[j], x->hi[j] = mi->hi[j];
        }
        n++;
    }
    return n;
}

int dg_env_episode_grid(const dg_env *env, double *aux) {
    if (!dg_env_is_model(env) || !of(env)->m->has_aux_grid || !aux) return 0;
    const dg_model *m = of(env)->m;
    for (int j = 0; j < m->naux; j++) aux[j] = m->aux_grid[j];
    return 1;
}

int dg_env_state_box(const dg_env *env, double *lo, double *hi) {
    if (!dg_env_is_model(env) || !lo || !hi) return 0;
    const dg_model *m = of(env)->m;
    for (int i = 0; i < m->ns; i++) lo[i] = m->box_lo[i], hi[i] = m->box_hi[i];
    return 1;
}
