/* Both players' equilibrium feedback from a value at the current time-to-go: the inputs of the
 * gradient of V(x, T - t) (bang-bang, or with a boundary layer), held over each step of an RK2
 * (midpoint) integration, until the target is reached or t_max. */
#include <math.h>
#include <string.h>

#include "hji/internal.h"
#include "io/csv.h"

double dg_hji_slices_interp(const dg_hji_grid *g, const dg_hji_slices *V, double tau, const double *x,
                            double *grad) {
    const int nt = V->nt;
    if (nt == 1 || !(tau > V->t[0])) return dg_hji_interp(g, V->v, x, grad);
    if (tau >= V->t[nt - 1]) return dg_hji_interp(g, V->v + (size_t)(nt - 1) * (size_t)g->nodes, x, grad);
    int i = 0;  /* t[i] < tau <= t[i + 1] */
    while (i + 2 < nt && V->t[i + 1] < tau) i++;
    const double w = (tau - V->t[i]) / (V->t[i + 1] - V->t[i]);
    double g0[DG_HJI_MAX_DIMS], g1[DG_HJI_MAX_DIMS];
    const double v0 = dg_hji_interp(g, V->v + (size_t)i * (size_t)g->nodes, x, g0);
    const double v1 = dg_hji_interp(g, V->v + (size_t)(i + 1) * (size_t)g->nodes, x, g1);
    if (grad)
        for (int k = 0; k < g->ndim; k++) grad[k] = (1 - w) * g0[k] + w * g1[k];
    return (1 - w) * v0 + w * v1;
}

/* One player's input with a boundary layer (layer > 0) at the switching function s = M^T p (M: the
 * player's (nx, m) block of G or D at x): the bang-bang choice of dg_hji_game_optimal where |s| is
 * large against layer |p| |M e_j|, linear in s inside. */
static void layer_input(const dg_hji_input *in, const double *M, int nx, const double *p, double pn,
                        double layer, double *v) {
    const double sg = in->role == DG_HJI_ROLE_MAX ? 1 : -1;
    double s[DG_HJI_MAX_INPUT], cn[DG_HJI_MAX_INPUT], s2 = 0, c2 = 0;
    for (int j = 0; j < in->dim; j++) {
        s[j] = cn[j] = 0;
        for (int k = 0; k < nx; k++) {
            s[j] += M[k * in->dim + j] * p[k];
            cn[j] += M[k * in->dim + j] * M[k * in->dim + j];
        }
        s2 += s[j] * s[j];
        c2 += cn[j];
        cn[j] = sqrt(cn[j]);
    }
    if (in->set == DG_HJI_SET_BALL) {
        const double den = fmax(sqrt(s2), layer * pn * sqrt(c2));
        for (int j = 0; j < in->dim; j++) v[j] = in->center[j] + (den > 0 ? sg * in->radius * s[j] / den : 0);
        return;
    }
    for (int j = 0; j < in->dim; j++) {
        const double w = layer * pn * cn[j];
        const double r = w > 0 ? fmax(-1, fmin(1, sg * s[j] / w)) : sg * s[j] > 0 ? 1 : sg * s[j] < 0 ? -1 : 0;
        v[j] = 0.5 * (in->lo[j] + in->hi[j]) + 0.5 * r * (in->hi[j] - in->lo[j]);
    }
}

double dg_hji_feedback(const dg_hji_problem *p, const dg_hji_slices *V, double tau, double layer,
                       const double *x, double *u, double *d) {
    double grad[DG_HJI_MAX_DIMS];
    const double v = dg_hji_slices_interp(&p->grid, V, tau, x, grad);
    const dg_hji_game *gm = &p->game;
    if (!(layer > 0) || !gm->dyn || hji_game_smooth_inputs(gm)) {  /* smooth inputs: no chattering */
        dg_hji_game_optimal(gm, x, grad, u, d);
        return v;
    }
    const int nx = gm->nx, nu = gm->u.dim, nd = gm->d.dim;
    double f[DG_HJI_MAX_DIMS] = {0}, G[DG_HJI_MAX_DIMS * DG_HJI_MAX_INPUT] = {0};
    double D[DG_HJI_MAX_DIMS * DG_HJI_MAX_INPUT] = {0}, pn = 0;
    gm->dyn(gm->user, x, f, G, D);
    for (int k = 0; k < nx; k++) pn = hypot(pn, grad[k]);
    if (u && nu) layer_input(&gm->u, G, nx, grad, pn, layer, u);
    if (d && nd) layer_input(&gm->d, D, nx, grad, pn, layer, d);
    return v;
}

/* The time-to-go at time t of a simulation with V: T - t (T: V's last time), 0 past T. */
static double time_to_go(const dg_hji_slices *V, double t) {
    const double tau = V->t[V->nt - 1] - t;
    return tau > 0 ? tau : 0;
}

/* DG_OK when V is a usable set of slices. */
static dg_status check_slices(const dg_hji_slices *V, dg_err *e) {
    if (!V || V->nt < 1 || !V->t || !V->v)
        return dg_err_set(e, DG_ERR_ARG, "hji: a value needs nt >= 1 slices, their times and values");
    for (int i = 0; i < V->nt; i++)
        if (!(V->t[i] >= 0) || !isfinite(V->t[i]) || (i && !(V->t[i] > V->t[i - 1])))
            return dg_err_set(e, DG_ERR_ARG, "hji: a value's times must be finite, >= 0 and increasing "
                              "(t[%d] = %g)", i, V->t[i]);
    return DG_OK;
}

double dg_hji_sim_dt(const dg_hji_problem *p, const dg_hji_slices *V, const double *x0, double t_max) {
    const dg_hji_grid *g = &p->grid;
    double u[DG_HJI_MAX_INPUT], d[DG_HJI_MAX_INPUT], xd[DG_HJI_MAX_DIMS], sp = 0;
    dg_hji_feedback(p, V, time_to_go(V, 0), 0, x0, u, d);
    dg_hji_game_dynamics(&p->game, x0, u, d, xd);
    for (int k = 0; k < g->ndim; k++) sp = fmax(sp, fabs(xd[k]) / g->dx[k]);
    double dt = sp > 0 ? 0.25 / sp : 0.01;  /* a quarter of a cell per step at the game's speed */
    if (dt > t_max / 200) dt = t_max / 200;
    return dt;
}

/* One CSV row of a step (the header's columns). */
static void csv_row(dg_csv *w, const dg_hji_problem *p, const dg_hji_sim_step *s) {
    dg_csv_num(w, s->t);
    for (int k = 0; k < p->grid.ndim; k++) dg_csv_num(w, s->x[k]);
    for (int k = 0; k < p->game.u.dim; k++) dg_csv_num(w, s->u[k]);
    for (int k = 0; k < p->game.d.dim; k++) dg_csv_num(w, s->d[k]);
    dg_csv_num(w, s->value);
    dg_csv_num(w, s->target);
}

dg_status dg_hji_simulate(const dg_hji_problem *p, const dg_hji_slices *V, const double *x0,
                          const dg_hji_sim_opts *o, dg_hji_sim_result *r, dg_err *e) {
    if (!p || !V || !x0 || !o || !r)
        return dg_err_set(e, DG_ERR_ARG, "hji simulate: needs a problem, a value, a start, options and a result");
    dg_status sc = check_slices(V, e);
    if (sc != DG_OK) return sc;
    if (!(o->layer >= 0 && o->layer <= 1))
        return dg_err_set(e, DG_ERR_ARG, "hji simulate: the boundary layer must be in [0, 1], got %g", o->layer);
    if (!p->game.dyn) return dg_err_set(e, DG_ERR_ARG, "hji simulate: %s has no dynamics to simulate", p->name);
    const dg_hji_grid *g = &p->grid;
    const int nx = g->ndim;
    for (int k = 0; k < nx; k++)
        if (!isfinite(x0[k])) return dg_err_set(e, DG_ERR_ARG, "hji simulate: start coordinate %d is not finite", k);
    if (!(o->t_max > 0) || !isfinite(o->t_max) || !(o->dt >= 0) || !isfinite(o->dt) || o->max_steps < 1)
        return dg_err_set(e, DG_ERR_ARG, "hji simulate: t_max > 0, dt >= 0 and max_steps >= 1 needed "
                          "(t_max %g, dt %g, max_steps %lld)", o->t_max, o->dt, (long long)o->max_steps);
    /* a game of degree adds up its payoff; one with a running cost over a finite horizon ends at
     * t_end (then pays its terminal cost), and is not over at the target */
    const int degree = dg_hji_game_degree(&p->game), cost = degree && p->payoff == DG_HJI_PAYOFF_COST;
    const int horizon = cost && !p->stationary;
    const double t_max = horizon ? p->t_end : o->t_max, rho = degree ? p->game.payoff.discount : 0;
    double dt = o->dt > 0 ? o->dt : dg_hji_sim_dt(p, V, x0, t_max);
    if (!(t_max / dt <= (double)o->max_steps))  /* the steps (CSV rows), bounded before anything is written */
        return dg_err_set(e, DG_ERR_ARG, "hji simulate: t_max %g / dt %g is %.3g steps, more than max_steps %lld",
                          t_max, dt, t_max / dt, (long long)o->max_steps);
    const int64_t steps = (int64_t)ceil(t_max / dt - 1e-9);
    if (horizon) dt = t_max / (double)steps;  /* the last step lands on t_end */
    dg_csv w = {0};
    if (o->csv_path) {
        dg_status s = dg_csv_begin(&w, o->csv_path, e);
        if (s != DG_OK) return s;
        dg_csv_col(&w, "t", DG_CSV_G6);
        dg_csv_cols(&w, NULL, "x", nx, DG_CSV_G9);
        dg_csv_cols(&w, NULL, "u", p->game.u.dim, DG_CSV_G6);
        dg_csv_cols(&w, NULL, "d", p->game.d.dim, DG_CSV_G6);
        dg_csv_col(&w, "value", DG_CSV_G9);
        dg_csv_col(&w, "target", DG_CSV_G9);
    }
    double x[DG_HJI_MAX_DIMS];
    for (int k = 0; k < nx; k++) x[k] = x0[k];
    *r = (dg_hji_sim_result){.captured = 0, .capture_time = -1, .dt = dt, .steps = steps, .payoff = NAN,
                             .value0 = NAN};
    double J = 0, inc = 0, l_prev = 0;  /* the payoff so far (a game of degree), its last step, l before it */
    for (int64_t s = 0; s <= steps; s++) {
        double u[DG_HJI_MAX_INPUT] = {0}, d[DG_HJI_MAX_INPUT] = {0};
        const dg_hji_sim_step st = {.step = s, .steps = steps, .t = (double)s * dt, .x = x, .u = u, .d = d,
                                    .value = dg_hji_feedback(p, V, time_to_go(V, (double)s * dt), o->layer, x, u, d),
                                    .target = dg_hji_interp(g, p->target, x, NULL)};
        if (o->csv_path) csv_row(&w, p, &st);
        r->rows = s + 1;
        if (o->on_step && o->on_step(o->user, &st)) {
            dg_csv_abort(&w);
            return dg_err_set(e, DG_ERR_INTERRUPTED, "hji simulate: stopped by the caller at step %lld", (long long)s);
        }
        if (s == 0) r->value0 = st.value;
        if (!cost && st.target <= 0) {
            r->captured = 1;
            r->capture_time = st.t;
            if (s > 0 && l_prev > 0)  /* the payoff up to where the path crossed the target's rim */
                J -= inc * (1 - l_prev / (l_prev - st.target));
            break;
        }
        l_prev = st.target;
        if (s == steps) {  /* the end: a finite horizon's terminal cost, or the value of the rest */
            if (horizon) J += exp(-rho * st.t) * dg_hji_problem_terminal_cost(p, x);
            else if (cost) J += exp(-rho * st.t) * st.value;
            break;
        }
        /* RK2 (midpoint) with the inputs held over the step, as a sampled feedback; the running
         * cost by the midpoint rule */
        double xd[DG_HJI_MAX_DIMS], xm[DG_HJI_MAX_DIMS];
        dg_hji_game_dynamics(&p->game, x, u, d, xd);
        for (int k = 0; k < nx; k++) xm[k] = x[k] + 0.5 * dt * xd[k];
        if (degree) J += (inc = exp(-rho * (st.t + 0.5 * dt)) * dg_hji_game_running_cost(&p->game, xm, u, d) * dt);
        dg_hji_game_dynamics(&p->game, xm, u, d, xd);
        for (int k = 0; k < nx; k++) {
            x[k] += dt * xd[k];
            if (g->bc[k] == DG_HJI_BC_PERIODIC) {  /* keep angles in [lo, hi) */
                const double per = g->hi[k] - g->lo[k];
                x[k] = g->lo[k] + fmod(fmod(x[k] - g->lo[k], per) + per, per);
            }
        }
    }
    if (degree) r->payoff = J;
    return o->csv_path ? dg_csv_commit(&w, e) : DG_OK;
}
