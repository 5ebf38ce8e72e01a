/* The safety filter around a learned policy (include/difgames/safety.h, docs/safety.md): a grid
 * value mapped onto a game, the switch and qp filters row by row and as a tape op, the adversarial
 * input's worst case, and an evaluation that counts interventions and violations. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/hji.h"
#include "difgames/hji_learn.h"
#include "difgames/run.h"
#include "difgames/safety.h"
#include "difgames/safetensors.h"

/* ------------------------------------------------------------ keys */

static const char *const MODES[] = {"switch", "qp", NULL};  /* dg_safety_mode order */

static const dg_key SAFETY_KEYS[] = {
    {.name = "safety.value", .type = DG_KEY_STR, .offset = offsetof(dg_safety_opts, value), .def_str = NULL,
     .doc = "the filter's value, a value file of difgames hji solve (~: no filter; --safety of train, eval, replay, "
             "view and play sets it)"},
    {.name = "safety.config", .type = DG_KEY_STR, .offset = offsetof(dg_safety_opts, config), .def_str = NULL,
     .doc = "the HJI config a network of hji learn was trained on (safety.value a network: needed; a grid's "
            "value file stores its own)"},
    DG_K_ENUM("safety.mode", dg_safety_opts, mode, DG_SAFETY_SWITCH, MODES, "safety mode",
              "switch: the value's optimal action where V <= safety.margin; qp: the nearest action with "
              "dV/dt >= -safety.gamma V"),
    DG_K_F64("safety.margin", dg_safety_opts, margin, 0.1, 0, INFINITY, 1, 0,
             "switch: the filter acts where V(x) <= this (a margin for the game's time step)"),
    DG_K_F64("safety.gamma", dg_safety_opts, gamma, 2.0, 0, INFINITY, 1, 0,
             "qp: the barrier's decay rate (1/s): grad V . f(x, u, d*) >= -gamma V(x)"),
    DG_K_BOOL("safety.train", dg_safety_opts, train, 0,
              "train with the filter on the tape (needs safety.value); with safety.penalty the policy learns to "
              "need it less"),
    DG_K_F64("safety.penalty", dg_safety_opts, penalty, 0.0, 0, INFINITY, 1, 0,
             "safety.train: the loss gains this times |a_filtered - a_policy|^2 (the action's [-1, 1] "
             "coordinates) per row and step, a term of its own after the game's (0: none)"),
};
#define NKEYS ((int)(sizeof SAFETY_KEYS / sizeof SAFETY_KEYS[0]))

const dg_key *dg_safety_keys(int *n) {
    *n = NKEYS;
    return SAFETY_KEYS;
}

const char *dg_safety_mode_name(int mode) { return mode >= 0 && mode < 2 ? MODES[mode] : NULL; }

dg_status dg_safety_opts_read(dg_cfg *cfg, dg_safety_opts *o, dg_err *e) {
    memset(o, 0, sizeof *o);
    dg_status st = dg_keys_read(cfg, SAFETY_KEYS, NKEYS, o, e);
    if (st != DG_OK) return st;
    if (o->train && !o->value)
        return dg_cfg_error(cfg, "safety.train", e, "the filter on the tape needs its value: set safety.value");
    return DG_OK;
}

/* ------------------------------------------------------------ a value on a game */

struct dg_safety_value {
    dg_cfg             *cfg;              /* the config the file stores (a network: config's)   */
    dg_hji_problem     *p;
    dg_hji_value_slices vs;               /* a grid's value file                                */
    dg_hji_learn_net    net;              /* or a network of hji learn (net.params not NULL)    */
    dg_hji_source       src;              /* either, read in batches                            */
    double              tau;              /* the time-to-go read: the value's horizon (its last) */
    int                 nx;
    int                 axis[DG_HJI_MAX_DIMS];  /* env's state column of value axis k           */
    int                 free_col;         /* the adversarial input's first action column after
                                             the learned player's (-1: the game has none)        */
    int                 nfree;            /* the free inputs' columns                            */
    double              free_hold[4 * DG_INPUT_MAX_DIM];  /* each free column's held action     */
};

/* The action coordinate ([-1, 1]) of value w in the box [lo, hi]. */
static double to_action(double w, double lo, double hi) { return hi > lo ? (2 * w - lo - hi) / (hi - lo) : 0.0; }

dg_status dg_safety_value_open(const dg_env *env, const char *path, const char *config, dg_safety_value **out,
                               dg_err *e) {
    *out = NULL;
    if (!env || !path) return dg_err_set(e, DG_ERR_ARG, "safety: no game or no value file");
    if (env->nplayers >= 2)
        return dg_err_set(e, DG_ERR_ARG, "safety: %s has %d learned players; the filter wraps a game of one",
                          env->game->name, env->nplayers);
    dg_safety_value *v = calloc(1, sizeof *v);
    if (!v) return dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    dg_status st = DG_OK;
    char label[600];
    if (dg_hji_learn_probe(path, NULL)) {  /* a network: its problem from the config it was trained on */
        if (!config) {
            free(v);
            return dg_err_set(e, DG_ERR_ARG, "%.400s: a network of hji learn: give the HJI config it was trained on "
                              "(safety.config)", path);
        }
        if (!(v->cfg = dg_cfg_load(config, e)) || !(v->p = dg_hji_problem_load(v->cfg, e))) {
            st = e->status ? e->status : DG_ERR_CONFIG;
            goto fail;
        }
        if ((st = dg_hji_learn_load(path, v->p, &v->net, e)) != DG_OK ||
            (st = dg_hji_learn_source(&v->net, v->p, &v->src, e)) != DG_OK)
            goto fail;
    } else {  /* a grid's value file: the problem it was solved for, from the config the file stores */
        dg_st_file *f = dg_st_load(path, e);
        if (!f) {
            free(v);
            return e->status;
        }
        const char *yaml = dg_st_meta(f, "config"), *fmt = dg_st_meta(f, "format");
        if (!fmt || strcmp(fmt, "difgames-hji-value") != 0 || !yaml || !*yaml) {
            dg_st_free(f);
            free(v);
            return dg_err_set(e, DG_ERR_FORMAT, "%.400s: not a value file of difgames hji solve with its config "
                              "(format difgames-hji-value, metadata 'config'), nor a network of hji learn", path);
        }
        snprintf(label, sizeof label, "%.500s (stored config)", path);
        v->cfg = dg_cfg_parse(yaml, strlen(yaml), label, e);
        dg_st_free(f);
        if (!v->cfg || !(v->p = dg_hji_problem_load(v->cfg, e))) {
            st = e->status ? e->status : DG_ERR_CONFIG;
            goto fail;
        }
        if ((st = dg_hji_value_load(path, v->p, label, &v->vs, NULL, e)) != DG_OK) goto fail;
        v->src = dg_hji_source_slices(&v->p->grid, &v->vs.slices);
    }
    const dg_hji_problem *p = v->p;
    v->tau = v->src.horizon;
    v->nx = p->grid.ndim;
    if (!p->game.dyn) {
        st = dg_err_set(e, DG_ERR_ARG, "%.400s: the filter needs a control-affine game (f, G, D)", path);
        goto fail;
    }
    for (int k = 0; k < v->nx; k++) {  /* each axis a state of env's, by name */
        char an[32], sn[64];
        dg_hji_grid_axis_name(&p->grid, k, an, sizeof an);
        v->axis[k] = -1;
        for (int i = 0; i < env->state_dim && v->axis[k] < 0; i++) {
            dg_env_state_name(env, i, sn, sizeof sn);
            if (!strcmp(an, sn)) v->axis[k] = i;
        }
        if (v->axis[k] < 0) {
            st = dg_err_set(e, DG_ERR_ARG, "%.400s: the value's axis '%s' is not a state of %s", path, an,
                            env->game->name);
            goto fail;
        }
    }
    const dg_hji_input *u = &p->game.u, *d = &p->game.d;
    if (u->dim != env->act_dim || u->set != DG_HJI_SET_BOX) {
        st = dg_err_set(e, DG_ERR_ARG, "%.400s: the value's u (%d inputs%s) is not the learned player's action of "
                        "%s (%d)", path, u->dim, u->set == DG_HJI_SET_BOX ? "" : ", not a box", env->game->name,
                        env->act_dim);
        goto fail;
    }
    /* the inputs no player learns: the adversarial one takes d, the others their hold */
    dg_env_input in[4];
    const int nf = dg_env_free_inputs(env, in, 4);
    v->free_col = -1;
    for (int k = 0, col = 0; k < nf && k < 4; k++) {
        for (int j = 0; j < in[k].dim && col + j < 4 * DG_INPUT_MAX_DIM; j++)
            v->free_hold[col + j] = to_action(in[k].hold[j], in[k].lo[j], in[k].hi[j]);
        if (in[k].play == DG_INPUT_ADVERSARIAL && v->free_col < 0) {
            if (d->dim != in[k].dim || d->set != DG_HJI_SET_BOX) {
                st = dg_err_set(e, DG_ERR_ARG, "%.400s: the value's d (%d inputs%s) is not %s's adversarial input "
                                "'%s' (%d)", path, d->dim, d->set == DG_HJI_SET_BOX || !d->dim ? "" : ", not a box",
                                env->game->name, in[k].name, in[k].dim);
                goto fail;
            }
            v->free_col = col;
        }
        col += in[k].dim;
        v->nfree = col;
    }
    *out = v;
    return DG_OK;
fail:
    dg_safety_value_free(v);
    return st;
}

void dg_safety_value_free(dg_safety_value *v) {
    if (!v) return;
    dg_hji_value_slices_free(&v->vs);
    dg_hji_learn_net_free(&v->net);
    dg_hji_problem_free(v->p);
    dg_cfg_free(v->cfg);
    free(v);
}

/* env state s (state_dim) -> the value's state x (nx) */
static void value_state(const dg_safety_value *v, const double *s, double *x) {
    for (int k = 0; k < v->nx; k++) x[k] = s[v->axis[k]];
}

/* V (B; may be NULL) and grad V (B, nx) of v at the B env states rows (B, S) at its horizon, in one
 * evaluation of its source; xv (B, nx) gets the value's states. DG_OK or the source's error. */
static dg_status value_batch(const dg_safety_value *v, int64_t B, int S, const double *rows, double *xv, double *V,
                             double *grad, dg_err *e) {
    double *tau = malloc((size_t)(B ? B : 1) * sizeof *tau);
    if (!tau) return dg_err_set(e, DG_ERR_NOMEM, "safety: out of memory");
    for (int64_t b = 0; b < B; b++) {
        value_state(v, rows + b * S, xv + b * v->nx);
        tau[b] = v->tau;
    }
    const dg_status st = dg_hji_source_eval(&v->src, B, xv, tau, V, grad, e);
    free(tau);
    return st;
}

double dg_safety_value_at(const dg_safety_value *v, const double *s, double *grad, double *u, double *d) {
    double x[DG_HJI_MAX_DIMS], g[DG_HJI_MAX_DIMS] = {0}, V = NAN;
    dg_err e = {0};
    /* one row: the env state's own columns are all value_state reads (S = 0: rows of one) */
    if (value_batch(v, 1, 0, s, x, &V, g, &e) != DG_OK) return NAN;
    if (grad) memcpy(grad, g, (size_t)v->nx * sizeof *g);
    if (u || d) dg_hji_game_optimal(&v->p->game, x, g, u, d);
    return V;
}

int dg_safety_value_adversary(const dg_safety_value *v) { return v ? v->free_col : -1; }

double dg_safety_value_target(const dg_safety_value *v, const double *s) {
    double x[DG_HJI_MAX_DIMS], l = INFINITY;
    value_state(v, s, x);
    dg_err e = {0};
    if (dg_hji_problem_target_at(v->p, 1, x, &l, NULL, &e) != DG_OK) return NAN;
    return l;
}

/* ------------------------------------------------------------ the filter */

void dg_safety_init(dg_safety *s, const dg_env *env, const dg_safety_value *filter, const dg_safety_value *adversary,
                    const dg_safety_opts *o) {
    memset(s, 0, sizeof *s);
    s->env = env;
    s->filter = filter;
    s->adversary = adversary;
    if (o) s->o = *o;
}

dg_status dg_safety_open(dg_safety *s, const dg_env *env, const dg_safety_opts *o, const char *adversary, dg_err *e) {
    memset(s, 0, sizeof *s);
    dg_safety_value *vf = NULL, *va = NULL;
    dg_status st = DG_OK;
    if (o && o->value) st = dg_safety_value_open(env, o->value, o->config, &vf, e);
    if (st == DG_OK && adversary && !(vf && !strcmp(adversary, o->value)))
        st = dg_safety_value_open(env, adversary, o ? o->config : NULL, &va, e);
    const dg_safety_value *adv = adversary ? (va ? va : vf) : NULL;
    if (st == DG_OK && adv && adv->free_col < 0)
        st = dg_err_set(e, DG_ERR_ARG, "%.400s: %s has no adversarial input for it to play (model.inputs.<w>.play: "
                        "adversarial)", adversary, env->game->name);
    if (st != DG_OK) {
        dg_safety_value_free(vf);
        dg_safety_value_free(va);
        return st;
    }
    dg_safety_init(s, env, vf, adv, o);
    s->owned[0] = vf, s->owned[1] = va;
    return DG_OK;
}

void dg_safety_close(dg_safety *s) {
    if (!s) return;
    dg_safety_value_free(s->owned[0]);
    dg_safety_value_free(s->owned[1]);
    memset(s, 0, sizeof *s);
}

/* The filter of one row from the filter's value V and gradient grad at the value's state xv (nx):
 * what dg_safety_filter_row does once it has them. jx (A, nx; may be NULL) gets d out / d xv: qp's
 * as qp_row says; switch's 0 (its action is piecewise constant in the state). */
static int filter_vg(const dg_safety *s, const double *xv, double V, const double *grad, const double *a, double *out,
                     double *jac, double *jx) {
    const int A = s->env->act_dim;
    const dg_safety_value *v = s->filter;
    if (v) return dg_hji_filter_row(&v->p->game, 0, s->o.mode, s->o.margin, s->o.gamma, xv, V, grad, a, out, jac, jx);
    memcpy(out, a, (size_t)A * sizeof *out);
    if (jac) {
        memset(jac, 0, (size_t)A * A * sizeof *jac);
        for (int j = 0; j < A; j++) jac[j * A + j] = 1;
    }
    return 0;
}

int dg_safety_filter_row(const dg_safety *s, const double *x, const double *a, double *out, double *jac) {
    double xv[DG_HJI_MAX_DIMS] = {0}, grad[DG_HJI_MAX_DIMS] = {0}, V = INFINITY;
    dg_err e = {0};
    if (s->filter && value_batch(s->filter, 1, 0, x, xv, &V, grad, &e) != DG_OK) V = NAN;
    return filter_vg(s, xv, V, grad, a, out, jac, NULL);
}

/* The tape op's constants: the Jacobian in the action of every row (B, A, A) follows in the
 * arena, then the one in the state (B, A, S) */
typedef struct filter_state {
    int B, A, W, S;                       /* rows, the filtered columns, the output's columns, the state's */
} filter_state;

/* d action += J' d out and d state += Jx' d out over the filtered columns (the adversary's columns
 * are constants) */
static void filter_backward(dg_ctx *ctx, dg_tensor *out) {
    const filter_state *fs = out->state;
    const int A = fs->A, W = fs->W, S = fs->S;
    const dg_real *jac = (const dg_real *)(fs + 1), *jxs = jac + (size_t)fs->B * A * A;
    dg_tensor *act = out->srcs[0], *st = out->srcs[1];
    dg_real *ga = act->requires_grad ? dg_grad_of(ctx, act) : NULL;
    dg_real *gs = st->requires_grad ? dg_grad_of(ctx, st) : NULL;
    for (int b = 0; ga && b < fs->B; b++) {
        const dg_real *J = jac + (size_t)b * A * A, *go = out->grad + (size_t)b * W;
        for (int k = 0; k < A; k++) {
            dg_real acc = 0;
            for (int j = 0; j < A; j++) acc += J[j * A + k] * go[j];
            ga[(size_t)b * A + k] += acc;
        }
    }
    for (int b = 0; gs && b < fs->B; b++) {
        const dg_real *J = jxs + (size_t)b * A * S, *go = out->grad + (size_t)b * W;
        for (int i = 0; i < S; i++) {
            dg_real acc = 0;
            for (int j = 0; j < A; j++) acc += J[j * S + i] * go[j];
            gs[(size_t)b * S + i] += acc;
        }
    }
}

dg_tensor *dg_safety_filter(dg_ctx *ctx, dg_safety *s, int t, dg_tensor *state, dg_tensor *action) {
    (void)t;
    if (!state || !action) return NULL;
    const dg_env *env = s->env;
    const int B = state->shape[0], S = env->state_dim, A = env->act_dim;
    if (action->ndim != 2 || action->shape[0] != B || action->shape[1] != A)
        return dg_ctx_fail(ctx, DG_ERR_ARG, "safety: the action is not (%d, %d)", B, A);
    const dg_safety_value *adv = s->adversary;
    const int F = adv && adv->free_col >= 0 ? adv->nfree : 0, W = A + F;
    const size_t bytes = sizeof(filter_state) + (size_t)B * A * (A + S) * sizeof(dg_real);
    filter_state *fs = malloc(bytes);
    if (!fs) return dg_ctx_fail(ctx, DG_ERR_NOMEM, "safety: out of memory for the filter's Jacobians");
    *fs = (filter_state){B, A, W, S};
    dg_real *jac = (dg_real *)(fs + 1), *jxs = jac + (size_t)B * A * A;
    dg_real *outv = malloc((size_t)B * W * sizeof *outv);
    if (!outv) {
        free(fs);
        return dg_ctx_fail(ctx, DG_ERR_NOMEM, "safety: out of memory for the filtered actions");
    }
    /* every row's values in one evaluation of each source (a network evaluates the batch together) */
    const dg_safety_value *fv = s->filter;
    const int nf = fv ? fv->nx : 0, na = F ? adv->nx : 0;
    double *xf = calloc((size_t)B * (nf + 1) * 2 + (size_t)B * (na + 1) * 2, sizeof *xf);
    double *Vf = xf + (size_t)B * nf, *gf = Vf + B, *xa = gf + (size_t)B * nf, *ga = xa + (size_t)B * na;
    dg_err e = {0};
    if (!xf) {
        free(fs), free(outv);
        return dg_ctx_fail(ctx, DG_ERR_NOMEM, "safety: out of memory for the values");
    }
    double *rows = malloc((size_t)B * S * sizeof *rows);
    dg_status st = rows ? DG_OK : DG_ERR_NOMEM;
    for (int64_t i = 0; rows && i < (int64_t)B * S; i++) rows[i] = state->data[i];
    if (st == DG_OK && fv) st = value_batch(fv, B, S, rows, xf, Vf, gf, &e);
    if (st == DG_OK && F) st = value_batch(adv, B, S, rows, xa, NULL, ga, &e);
    if (st != DG_OK) {
        free(fs), free(outv), free(xf), free(rows);
        return dg_ctx_fail(ctx, st, "safety: %s", e.msg[0] ? e.msg : "out of memory");
    }
    int64_t changed = 0;
    for (int b = 0; b < B; b++) {
        double a[DG_HJI_MAX_INPUT], o[DG_HJI_MAX_INPUT], J[DG_HJI_MAX_INPUT * DG_HJI_MAX_INPUT];
        double Jx[DG_HJI_MAX_INPUT * DG_HJI_MAX_DIMS];
        for (int j = 0; j < A; j++) a[j] = action->data[(size_t)b * A + j];
        changed += filter_vg(s, xf + (size_t)b * nf, fv ? Vf[b] : INFINITY, gf + (size_t)b * nf, a, o, J, Jx);
        for (int j = 0; j < A; j++) outv[(size_t)b * W + j] = (dg_real)o[j];
        for (int k = 0; k < A * A; k++) jac[(size_t)b * A * A + k] = (dg_real)J[k];
        dg_real *jxb = jxs + (size_t)b * A * S;  /* the value's axes onto the env state's columns */
        memset(jxb, 0, (size_t)A * S * sizeof *jxb);
        for (int j = 0; j < A; j++)
            for (int k = 0; k < nf; k++) jxb[j * S + fv->axis[k]] += (dg_real)Jx[j * nf + k];
        if (F) {
            double ds[DG_HJI_MAX_INPUT];
            dg_hji_game_optimal(&adv->p->game, xa + (size_t)b * na, ga + (size_t)b * na, NULL, ds);
            const dg_hji_input *d = &adv->p->game.d;
            for (int k = 0; k < F; k++) outv[(size_t)b * W + A + k] = (dg_real)adv->free_hold[k];
            for (int k = 0; k < d->dim; k++)
                outv[(size_t)b * W + A + adv->free_col + k] = (dg_real)to_action(ds[k], d->lo[k], d->hi[k]);
        }
    }
    free(xf);
    free(rows);
    if (s->filter) {
        __atomic_fetch_add(&s->steps, (int64_t)B, __ATOMIC_RELAXED);
        __atomic_fetch_add(&s->filtered, changed, __ATOMIC_RELAXED);
    }
    dg_tensor *out = dg_custom(ctx, "safety_filter", 2, (int[]){B, W}, (dg_tensor *[]){action, state}, 2,
                               filter_backward, fs, bytes);
    if (out) memcpy(out->data, outv, (size_t)B * W * sizeof *outv);
    free(fs);
    free(outv);
    return out;
}

dg_tensor *dg_safety_policy_filter(dg_ctx *ctx, void *user, int t, dg_tensor *state, dg_tensor *action) {
    return dg_safety_filter(ctx, user, t, state, action);
}

void dg_safety_attach(dg_safety *s, dg_policy *pol) {
    pol->filter = s && (s->filter || s->adversary) ? dg_safety_policy_filter : NULL;
    pol->filter_user = s;
}

/* ------------------------------------------------------------ evaluation */

dg_status dg_safety_eval(const dg_env *env, const dg_policy *m, dg_params *p, dg_safety *s, const dg_real *state,
                         const dg_real *aux, int B, int grad, dg_eval_result *r, dg_safety_result *sr, dg_err *e) {
    dg_err local = {0};
    if (!e) e = &local;
    memset(r, 0, sizeof *r);
    memset(sr, 0, sizeof *sr);
    const int H = env->horizon, S = env->state_dim;
    dg_real *traj = malloc((size_t)(H + 1) * B * S * sizeof(dg_real));
    if (!traj) return dg_err_set(e, DG_ERR_NOMEM, "out of memory for the trajectory");
    dg_policy pol = *m;
    dg_safety_attach(s, &pol);
    s->steps = s->filtered = 0;
    dg_tensor *loss;
    dg_params_zero_grad(p);
    dg_ctx *ctx = dg_run_episode(env, &pol, p, state, aux, B, grad, r->terms, traj, &loss, e);
    if (!ctx) {
        free(traj);
        return e->status;
    }
    r->loss = loss->data[0];
    if (env->nmetrics) env->game->metrics(env, traj, aux, B, H, r->metrics);
    if (grad) r->grad_norm = dg_grad_norm(p);
    dg_ctx_free(ctx);
    const dg_safety_value *v = s->filter ? s->filter : s->adversary;
    double *x = malloc((size_t)S * sizeof *x);
    if (!x) {
        free(traj);
        return dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    }
    sr->episodes = B;
    sr->interventions = s->steps ? (double)s->filtered / (double)s->steps : 0.0;
    sr->min_target = INFINITY;
    for (int b = 0; v && b < B; b++) {
        int hit = 0;
        for (int t = 0; t <= H; t++) {
            for (int i = 0; i < S; i++) x[i] = traj[((size_t)t * B + b) * S + i];
            const double l = dg_safety_value_target(v, x);
            if (l < sr->min_target) sr->min_target = l;
            hit |= l <= 0;
        }
        sr->violations += hit;
    }
    free(x);
    free(traj);
    return DG_OK;
}
