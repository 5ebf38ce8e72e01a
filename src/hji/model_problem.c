/* The grid solver's side of a model file (docs/models.md): the dynamics as x' = f(x) + G(x) u +
 * D(x) d, where f is the model's dynamics at zero inputs and G, D their exact partial derivatives in
 * the inputs (libmatheval's symbolic derivatives); the inputs' boxes or balls and roles; the target
 * and the sets to avoid as signed distances. The dynamics must be affine in the inputs: checked at
 * load, at spread states and inputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hji/internal.h"
#include "hji/model_problem.h"
#include "model/model.h"

/* the model's values at the state x and inputs (u, d), NULL meaning 0 */
static void values(const dg_model *m, const double *x, const double *u, const double *d, double *v) {
    dg_model_values(m, v);
    for (int i = 0; i < m->ns; i++) v[m->s0 + i] = x[i];
    for (int j = 0; j < m->naux; j++) v[m->a0 + j] = m->aux_grid[j];  /* the episode, fixed on the grid */
    for (int p = 0; p < m->ninputs; p++) {
        const double *in = p == 0 ? u : d;
        for (int j = 0; j < m->in[p].dim; j++) v[m->in[p].first + j] = in ? in[j] : 0.0;
    }
}

/* f (nx), G (nx, u.dim) and D (nx, d.dim), row-major: each state's derivative in the state's order */
static void model_dyn(void *user, const double *x, double *f, double *G, double *D) {
    dg_model *m = user;
    double v[DG_MODEL_MAX_NAMES];
    dg_model_lock(m);
    values(m, x, NULL, NULL, v);
    for (int k = 0; k < m->ndyn; k++) {
        const dg_model_expr *ex = &m->dyn[k];
        const int i = m->dyn_var[k] - m->s0;
        f[i] = dg_model_eval(ex, v);
        for (int j = 0; j < ex->nv; j++) {
            const int var = ex->var[j];
            for (int p = 0; p < m->ninputs; p++) {
                const dg_model_input *in = &m->in[p];
                if (var >= in->first && var < in->first + in->dim)
                    (p == 0 ? G : D)[i * in->dim + (var - in->first)] = dg_model_eval_d(ex, j, v);
            }
        }
    }
    dg_model_unlock(m);
}

static dg_hji_input input_of(const dg_model_input *in) {
    dg_hji_input r = {.dim = in->dim, .role = in->role_max ? DG_HJI_ROLE_MAX : DG_HJI_ROLE_MIN};
    if (in->ball) {
        r.set = DG_HJI_SET_BALL;
        r.radius = in->radius;
    } else {
        r.set = DG_HJI_SET_BOX;
        for (int j = 0; j < in->dim; j++) r.lo[j] = in->lo[j], r.hi[j] = in->hi[j];
    }
    return r;
}

dg_status dg_hji_model_load(dg_cfg *cfg, dg_hji_model_def *def, dg_err *e) {
    memset(def, 0, sizeof *def);
    double dt = 0.05;
    float dtf = 0.05f;
    if (dg_cfg_has(cfg, "env.dt")) {
        dg_status st = dg_cfg_get(cfg, "env.dt", DG_CFG_F32, &dtf, e);
        if (st) return st;
        dt = dtf;
    }
    dg_model *m = dg_model_load(cfg, dt, e);
    if (!m) return e->status ? e->status : DG_ERR_CONFIG;
    def->model = m;
    dg_model_mark_other(cfg, 1);
    if (m->ns > DG_HJI_MAX_DIMS)
        return dg_cfg_error(cfg, "model.state", e, "at most %d state variables (the grid solver takes %d, hji "
                            "learn %d)", DG_HJI_MAX_DIMS, DG_HJI_GRID_MAX_DIMS, DG_HJI_MAX_DIMS);
    int H = 60;  /* the default horizon: that of the gradient solver's episode, H dt */
    if (dg_cfg_has(cfg, "env.horizon")) {
        dg_status st = dg_cfg_get(cfg, "env.horizon", DG_CFG_INT, &H, e);
        if (st) return st;
        if (H < 1) return dg_cfg_error(cfg, "env.horizon", e, "must be >= 1");
    }
    def->t_end = H * dt;
    m->grid_horizon = H;
    for (int p = 0; p < m->ninputs; p++)
        if (m->in[p].dim > DG_HJI_MAX_INPUT) {
            char path[64];
            snprintf(path, sizeof path, "model.inputs.%s.dim", m->in[p].name);
            return dg_cfg_error(cfg, path, e, "the grid solver takes inputs of at most %d components", DG_HJI_MAX_INPUT);
        }
    def->nx = m->ns;
    def->name = m->game;
    for (int i = 0; i < m->ns; i++) {
        def->axis[i] = m->name[m->s0 + i];
        def->lo[i] = m->box_lo[i];
        def->hi[i] = m->box_hi[i];
        def->periodic[i] = m->periodic[i];
    }
    def->u = input_of(&m->in[0]);
    if (m->ninputs > 1) def->d = input_of(&m->in[1]);
    def->u_name = m->in[0].name;
    def->d_name = m->ninputs > 1 ? m->in[1].name : "none";
    def->dyn = model_dyn;
    /* affine in the inputs: f(x, u, d) = f(x, 0, 0) + G u + D d at spread states and inputs */
    uint64_t h = 0x243f6a8885a308d3ull;
    for (int s = 0; s < 64; s++) {
        double x[DG_HJI_MAX_DIMS], u[DG_HJI_MAX_INPUT] = {0}, d[DG_HJI_MAX_INPUT] = {0};
        double f[DG_HJI_MAX_DIMS] = {0}, G[DG_HJI_MAX_DIMS * DG_HJI_MAX_INPUT] = {0};
        double D[DG_HJI_MAX_DIMS * DG_HJI_MAX_INPUT] = {0}, v[DG_MODEL_MAX_NAMES];
        for (int i = 0; i < m->ns; i++) {
            h = h * 6364136223846793005ull + 1442695040888963407ull;
            x[i] = m->box_lo[i] + (m->box_hi[i] - m->box_lo[i]) * (double)(h >> 11) / 9007199254740992.0;
        }
        for (int p = 0; p < m->ninputs; p++)
            for (int j = 0; j < m->in[p].dim; j++) {
                h = h * 6364136223846793005ull + 1442695040888963407ull;
                const double r = (double)(h >> 11) / 9007199254740992.0;
                const double lo = m->in[p].ball ? -m->in[p].radius : m->in[p].lo[j];
                const double hi = m->in[p].ball ? m->in[p].radius : m->in[p].hi[j];
                (p == 0 ? u : d)[j] = lo + (hi - lo) * r;
            }
        model_dyn(m, x, f, G, D);
        values(m, x, u, d, v);
        for (int k = 0; k < m->ndyn; k++) {
            const int i = m->dyn_var[k] - m->s0;
            double lin = f[i];
            for (int j = 0; j < m->in[0].dim; j++) lin += G[i * m->in[0].dim + j] * u[j];
            for (int j = 0; m->ninputs > 1 && j < m->in[1].dim; j++) lin += D[i * m->in[1].dim + j] * d[j];
            const double full = dg_model_eval(&m->dyn[k], v);
            if (!isfinite(full) || !isfinite(lin))
                return dg_cfg_error(cfg, m->dyn[k].key, e, "evaluates to %g inside the grid's box: a division by zero "
                                    "or a function outside its domain", full);
            if (fabs(full - lin) > 1e-9 * (1.0 + fabs(full)))
                return dg_cfg_error(cfg, m->dyn[k].key, e, "not affine in the inputs (the grid solver needs x' = f(x) "
                                    "+ G(x) u + D(x) d): %g at an input, %g from the derivatives", full, lin);
        }
    }
    return DG_OK;
}

/* the expression x at nodes [j0, j0 + n) of g at the game's time t into out (n) */
static void tabulate(dg_model *m, const dg_hji_grid *g, const dg_model_expr *x, int64_t j0, int64_t n, double t,
                     double *out) {
    dg_model_lock(m);
    double v[DG_MODEL_MAX_NAMES], pt[DG_HJI_MAX_DIMS];
    for (int64_t i = 0; i < n; i++) {
        dg_hji_grid_point(g, j0 + i, pt);
        values(m, pt, NULL, NULL, v);
        if (m->t_var >= 0) v[m->t_var] = t;
        out[i] = dg_model_eval(x, v);
    }
    dg_model_unlock(m);
}

/* a = sigma sigma^T at the state x and inputs (u, d) (nx by nx, row-major, zeroed by the caller): the
 * model's diffusion, diagonal, each listed state's sigma_i(x, u, d)^2, as its Euler-Maruyama step
 * x_i += sigma_i sqrt(dt) z_i has (the grid has no episode time: the time reads its default) */
static void model_diffusion(void *user, const double *x, const double *u, const double *d, double *a) {
    dg_model *m = user;
    double v[DG_MODEL_MAX_NAMES];
    dg_model_lock(m);
    values(m, x, u, d, v);
    for (int k = 0; k < m->ndiff; k++) {
        const int i = m->diff_var[k] - m->s0;
        const double s = dg_model_eval(&m->diff[k], v);
        a[i * m->ns + i] = s * s;
    }
    dg_model_unlock(m);
}

void dg_hji_model_game(void *model, dg_hji_game *gm) {
    const dg_model *m = model;
    gm->dyn = model_dyn;
    if (m->ndiff > 0) gm->diffusion = model_diffusion;   /* model.diffusion: the grid's noise */
    gm->u = input_of(&m->in[0]);
    if (m->ninputs > 1) gm->d = input_of(&m->in[1]);
    gm->user = model;
}

void dg_hji_model_target(void *model, const dg_hji_grid *g, int64_t j0, int64_t n, double t, double *target) {
    dg_model *m = model;
    if (m->has_target) tabulate(m, g, &m->target, j0, n, t, target);
    else
        for (int64_t i = 0; i < n; i++) target[i] = 1.0;   /* none (payoff: cost) */
}

/* The expression ex at the state x (the inputs 0, the episode at its grid values), as tabulate takes
 * it at a node; grad (m->ns) unless NULL gets its partial derivatives in the state (libmatheval's
 * symbolic ones: exact, with the functions' own conventions at their kinks, e.g. abs's sign). */
static double eval_at(dg_model *m, const dg_model_expr *ex, const double *x, double t, double *grad) {
    double v[DG_MODEL_MAX_NAMES];
    dg_model_lock(m);
    values(m, x, NULL, NULL, v);
    if (m->t_var >= 0) v[m->t_var] = t;
    const double r = dg_model_eval(ex, v);
    for (int i = 0; grad && i < m->ns; i++) grad[i] = 0;
    for (int j = 0; grad && j < ex->nv; j++)
        if (m->kind[ex->var[j]] == DG_MV_STATE) grad[ex->var[j] - m->s0] += dg_model_eval_d(ex, j, v);
    dg_model_unlock(m);
    return r;
}

double dg_hji_model_target_at(void *model, const double *x, double t, double *grad) {
    dg_model *m = model;
    if (m->has_target) return eval_at(m, &m->target, x, t, grad);
    for (int i = 0; grad && i < m->ns; i++) grad[i] = 0;
    return 1.0;   /* none (payoff: cost), as dg_hji_model_target */
}

double dg_hji_model_avoid_at(void *model, const double *x, double t, double *grad) {
    dg_model *m = model;
    const double a = -eval_at(m, &m->avoid, x, t, grad);   /* > 0 inside, as dg_hji_model_avoid */
    for (int i = 0; grad && i < m->ns; i++) grad[i] = -grad[i];
    return a;
}

/* sum_k w_k cost_k at v over the costs [k0, k1) */
static double cost_sum(const dg_model *m, const double *v, int k0, int k1) {
    double r = 0;
    for (int k = k0; k < k1; k++)
        if (m->grid_w[k] != 0) r += m->grid_w[k] * dg_model_eval(&m->cost[k], v);
    return r;
}

/* the running cost at the state x with the inputs at 0 (payoff.cost; user: the model) */
static double model_running(void *user, const double *x) {
    dg_model *m = user;
    double v[DG_MODEL_MAX_NAMES];
    dg_model_lock(m);
    values(m, x, NULL, NULL, v);
    const double r = cost_sum(m, v, 0, m->nrun);
    dg_model_unlock(m);
    return r;
}

double dg_hji_model_terminal(void *model, const double *x) {
    dg_model *m = model;
    if (!m->grid_cost) return 0;
    double v[DG_MODEL_MAX_NAMES];
    dg_model_lock(m);
    values(m, x, NULL, NULL, v);
    const double r = cost_sum(m, v, m->nrun, m->ncost);
    dg_model_unlock(m);
    return r;
}

void dg_hji_model_terminal_grad(void *model, const double *x, double *grad) {
    dg_model *m = model;
    for (int i = 0; i < m->ns; i++) grad[i] = 0;
    if (!m->grid_cost) return;
    double g[DG_HJI_MAX_DIMS];
    for (int k = m->nrun; k < m->ncost; k++)
        if (m->grid_w[k] != 0) {
            eval_at(m, &m->cost[k], x, 0, g);
            for (int i = 0; i < m->ns; i++) grad[i] += m->grid_w[k] * g[i];
        }
}

int dg_hji_model_episode(void *model, double *aux) {
    const dg_model *m = model;
    for (int j = 0; j < m->naux; j++) aux[j] = m->aux_grid[j];
    return m->naux;
}

dg_status dg_hji_model_payoff(void *model, dg_cfg *cfg, int cost, dg_hji_game *gm, dg_err *e) {
    dg_model *m = model;
    if (m->ndiff > 0 && (!cost || m->has_target || m->has_avoid))   /* what the grid's noise scheme solves */
        return dg_cfg_error(cfg, "model.diffusion", e, "noise on the grid is solved for games of degree (payoff: cost) "
                            "without a target or sets to avoid: a noisy game of kind's tube would be a probability of "
                            "reaching, not yet defined");
    if (!cost) {
        if (!m->has_target)
            return dg_cfg_error(cfg, "model.target", e, "missing: the grid solver needs the target set (or payoff: "
                                "cost, the model's costs)");
        return DG_OK;
    }
    if (!m->ncost) return dg_cfg_error(cfg, "model.costs", e, "missing: payoff: cost solves the model's costs");
    /* the gradient solver's loss, (1/H) sum_t sum_k w_k c_k + sum_k w_k g_k, in continuous time: the
     * running costs times w_k / (H dt), the terminal ones times w_k */
    const double dt = m->cval[m->s0 - 1], scale = 1.0 / (m->grid_horizon * dt);
    for (int k = 0; k < m->ncost; k++) {
        float w = 1.0f;
        dg_status st = dg_cfg_has(cfg, m->cost_key[k]) ? dg_cfg_get(cfg, m->cost_key[k], DG_CFG_F32, &w, e) : DG_OK;
        if (st) return st;
        if (!(w >= 0) || !isfinite(w)) return dg_cfg_error(cfg, m->cost_key[k], e, "a weight is >= 0");
        m->grid_w[k] = k < m->nrun ? (double)w * scale : (double)w;
    }
    /* the running cost as L1(x) + a_u |u|^2 + a_d |d|^2, a constant a per player: checked at spread
     * states and inputs; a_u the cost of the unit input (1, 0, ...) */
    double a[2] = {0, 0};
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int s = 0; s < 65; s++) {
        double x[DG_HJI_MAX_DIMS], in[2][DG_HJI_MAX_INPUT] = {{0}}, v[DG_MODEL_MAX_NAMES];
        for (int i = 0; i < m->ns; i++) {
            h = h * 6364136223846793005ull + 1442695040888963407ull;
            x[i] = m->box_lo[i] + (m->box_hi[i] - m->box_lo[i]) * (double)(h >> 11) / 9007199254740992.0;
        }
        double n2[2] = {0, 0};
        for (int p = 0; p < m->ninputs; p++)
            for (int j = 0; j < m->in[p].dim; j++) {
                h = h * 6364136223846793005ull + 1442695040888963407ull;
                const double r = (double)(h >> 11) / 9007199254740992.0;
                const double lo = m->in[p].ball ? -m->in[p].radius : m->in[p].lo[j];
                const double hi = m->in[p].ball ? m->in[p].radius : m->in[p].hi[j];
                in[p][j] = s == 0 ? (j == 0) : lo + (hi - lo) * r;   /* the first: unit inputs */
                n2[p] += in[p][j] * in[p][j];
            }
        dg_model_lock(m);
        values(m, x, NULL, NULL, v);
        const double l0 = cost_sum(m, v, 0, m->nrun);
        double full;
        if (s == 0) {   /* each player's a from its unit input alone */
            for (int p = 0; p < m->ninputs; p++) {
                values(m, x, p == 0 ? in[0] : NULL, p == 1 ? in[1] : NULL, v);
                a[p] = cost_sum(m, v, 0, m->nrun) - l0;
            }
            dg_model_unlock(m);
            continue;
        }
        values(m, x, in[0], m->ninputs > 1 ? in[1] : NULL, v);
        full = cost_sum(m, v, 0, m->nrun);
        dg_model_unlock(m);
        const double want = l0 + a[0] * n2[0] + a[1] * n2[1];
        if (!isfinite(full) || fabs(full - want) > 1e-9 * (1.0 + fabs(full)))
            return dg_cfg_error(cfg, "model.costs", e, "payoff: cost needs running costs of the form L(x) + a |u|^2 "
                                "(a constant a per player; the gradient solver's energy terms are): %g at an input, "
                                "%g from that form", full, want);
    }
    gm->payoff.cost = model_running;
    for (int p = 0; p < m->ninputs; p++) {
        dg_hji_input *gi = p == 0 ? &gm->u : &gm->d;
        const double w = m->in[p].role_max ? -a[p] : a[p];  /* what the player pays for its input */
        char path[64];
        snprintf(path, sizeof path, "model.inputs.%s", m->in[p].name);
        if (a[p] == 0) continue;
        if (w < 0)
            return dg_cfg_error(cfg, "model.costs", e, "the %s player %s is paid for its input (a cost of %g |%s|^2): "
                                "the game has no value", m->in[p].role_max ? "max" : "min", m->in[p].name, a[p],
                                m->in[p].name);
        if (m->in[p].ball)
            return dg_cfg_error(cfg, path, e, "an input with a cost on the grid needs set: box");
        gi->set = DG_HJI_SET_BOX_COST;
        gi->weight = w;
    }
    m->grid_cost = 1;
    return DG_OK;
}

int dg_hji_model_has_avoid(const void *model) { return model && ((const dg_model *)model)->has_avoid; }

int dg_hji_model_moving(const void *model, int *target, int *avoid) {
    const dg_model *m = model;
    if (target) *target = m && m->target_moves;
    if (avoid) *avoid = m && m->avoid_moves;
    return m && (m->target_moves || m->avoid_moves);
}

void dg_hji_model_avoid(void *model, const dg_hji_grid *g, int64_t j0, int64_t n, double t, int have,
                        double *obstacle) {
    dg_model *m = model;
    if (!m->has_avoid) return;
    dg_model_lock(m);
    double v[DG_MODEL_MAX_NAMES], pt[DG_HJI_MAX_DIMS];
    for (int64_t i = 0; i < n; i++) {
        dg_hji_grid_point(g, j0 + i, pt);
        values(m, pt, NULL, NULL, v);
        if (m->t_var >= 0) v[m->t_var] = t;
        const double a = -dg_model_eval(&m->avoid, v);   /* > 0 inside, as obstacles are */
        obstacle[i] = have ? fmax(obstacle[i], a) : a;
    }
    dg_model_unlock(m);
}

void dg_hji_model_free(void *model) { dg_model_free(model); }
