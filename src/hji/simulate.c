/* Both players' equilibrium feedback from a value at the current time-to-go: the inputs of the
 * gradient of V(x, T - t) (bang-bang, or with a boundary layer), held over each step of an RK2
 * (midpoint) integration, until the target is reached or t_max. */
#include <math.h>
#include <stdlib.h>
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

/* --------------------------------------------------------------- value sources */

/* A slices source's eval: dg_hji_slices_interp at each point. */
static dg_status slices_eval(const dg_hji_source *s, int64_t B, const double *x, const double *tau, double *V,
                             double *grad, dg_err *e) {
    const int nx = s->grid->ndim;
    for (int64_t i = 0; i < B; i++) {
        const double v = dg_hji_slices_interp(s->grid, &s->slices, tau[i], x + i * nx, grad ? grad + i * nx : NULL);
        if (V) V[i] = v;
    }
    return DG_OK;
}

dg_hji_source dg_hji_source_slices(const dg_hji_grid *g, const dg_hji_slices *V) {
    return (dg_hji_source){.eval = slices_eval, .horizon = V && V->nt > 0 && V->t ? V->t[V->nt - 1] : 0, .grid = g,
                           .slices = V ? *V : (dg_hji_slices){0}};
}

int hji_source_on_grid(const dg_hji_source *s, const dg_hji_grid *g) {
    return s && s->eval == slices_eval && s->grid == g;
}

dg_status dg_hji_source_eval(const dg_hji_source *s, int64_t B, const double *x, const double *tau, double *V,
                             double *grad, dg_err *e) {
    if (!s || !s->eval || B < 0 || (B > 0 && (!x || !tau)))
        return dg_err_set(e, DG_ERR_ARG, "hji: a value source needs its eval, B >= 0, states and times-to-go");
    return s->eval(s, B, x, tau, V, grad, e);
}

dg_status dg_hji_source_tabulate(const dg_hji_source *s, const dg_hji_grid *g, double tau, double *out, dg_err *e) {
    if (!s || !g || !out) return dg_err_set(e, DG_ERR_ARG, "hji: tabulate needs a source, a grid and room");
    const int64_t N = g->nodes;
    const int nx = g->ndim;
    double *x = malloc((size_t)N * (size_t)nx * sizeof *x), *t = malloc((size_t)N * sizeof *t);
    dg_status rc = x && t ? DG_OK : dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory for %lld nodes", (long long)N);
    for (int64_t i = 0; rc == DG_OK && i < N; i++) {
        dg_hji_grid_point(g, i, x + i * nx);
        t[i] = tau;
    }
    if (rc == DG_OK) rc = dg_hji_source_eval(s, N, x, t, out, NULL, e);
    free(x), free(t);
    return rc;
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

/* Both players' inputs at x from the gradients gu (u's) and gd (d's; the same pointer when one value
 * serves both) as dg_hji_feedback takes them. */
static void inputs_at(const dg_hji_problem *p, double layer, const double *x, const double *gu, const double *gd,
                      double *u, double *d) {
    const dg_hji_game *gm = &p->game;
    if (!(layer > 0) || !gm->dyn || hji_game_smooth_inputs(gm)) {  /* smooth inputs: no chattering */
        if (gu == gd) dg_hji_game_optimal(gm, x, gu, u, d);
        else {  /* each player's input depends on its own gradient only */
            dg_hji_game_optimal(gm, x, gu, u, NULL);
            dg_hji_game_optimal(gm, x, gd, NULL, d);
        }
        return;
    }
    const int nx = gm->nx, nu = gm->u.dim, nd = gm->d.dim;
    double f[DG_HJI_MAX_DIMS] = {0}, G[DG_HJI_MAX_DIMS * DG_HJI_MAX_INPUT] = {0};
    double D[DG_HJI_MAX_DIMS * DG_HJI_MAX_INPUT] = {0}, pu = 0, pd = 0;
    gm->dyn(gm->user, x, f, G, D);
    for (int k = 0; k < nx; k++) pu = hypot(pu, gu[k]);
    for (int k = 0; k < nx && gd != gu; k++) pd = hypot(pd, gd[k]);
    if (gd == gu) pd = pu;
    if (u && nu) layer_input(&gm->u, G, nx, gu, pu, layer, u);
    if (d && nd) layer_input(&gm->d, D, nx, gd, pd, layer, d);
}

double dg_hji_feedback(const dg_hji_problem *p, const dg_hji_slices *V, double tau, double layer,
                       const double *x, double *u, double *d) {
    double grad[DG_HJI_MAX_DIMS];
    const double v = dg_hji_slices_interp(&p->grid, V, tau, x, grad);
    inputs_at(p, layer, x, grad, grad, u, d);
    return v;
}

/* The time-to-go at time t of a play with a value of horizon T: T - t, 0 past T. */
static double time_to_go(double T, double t) {
    const double tau = T - t;
    return tau > 0 ? tau : 0;
}

/* The target l at the n states x (n, nx) at the game's time t into l, as a play reads it: the grid's
 * target array interpolated (dg_hji_interp) where p holds the whole grid's, else its formula
 * (dg_hji_problem_target_at): a problem of more than DG_HJI_GRID_MAX_DIMS axes has no array (nor
 * does a rank's block hold the whole grid's). A target that moves in time is read at t from its
 * formula (dg_hji_problem_sets_at; the array holds it at t_end), past the horizon at t_end: the
 * value read there (time-to-go 0) was solved against that one. DG_OK or the formula's error. */
static dg_status target_here(const dg_hji_problem *p, double t, int64_t n, const double *x, double *l, dg_err *e) {
    const int nx = p->grid.ndim, moving = dg_hji_problem_target_moves(p);
    if (p->target && !p->block_nodes && !moving) {
        for (int64_t i = 0; i < n; i++) l[i] = dg_hji_interp(&p->grid, p->target, x + i * nx, NULL);
        return DG_OK;
    }
    for (int64_t i0 = 0; i0 < n; i0 += 1 << 20) {  /* target_at counts its points in an int */
        const int m = (int)(n - i0 < (1 << 20) ? n - i0 : 1 << 20);
        const dg_status s = moving ? dg_hji_problem_sets_at(p, fmin(t, p->t_end), m, x + i0 * nx, l + i0, NULL, e)
                                   : dg_hji_problem_target_at(p, m, x + i0 * nx, l + i0, NULL, e);
        if (s != DG_OK) return s;
    }
    return DG_OK;
}

/* The obstacle field g at the state x at the game's time t (past t_end, at t_end): the node array
 * interpolated where p holds the whole grid's and no set moves, else the formula
 * (dg_hji_problem_sets_at); -INFINITY without obstacles. DG_OK or the formula's error. */
static dg_status obstacle_here(const dg_hji_problem *p, double t, const double *x, double *g, dg_err *e) {
    *g = -INFINITY;
    if (!dg_hji_problem_has_obstacle(p)) return DG_OK;
    if (p->obstacle && !p->block_nodes && !dg_hji_problem_moving(p)) {
        *g = dg_hji_interp(&p->grid, p->obstacle, x, NULL);
        return DG_OK;
    }
    double l;
    return dg_hji_problem_sets_at(p, fmin(t, p->t_end), 1, x, &l, g, e);
}

/* dg_hji_feedback_batch's body, its work arrays given: gu, gd (B, nx) and tau (B). */
static dg_status feedback_work(const dg_hji_problem *p, const dg_hji_source *su, const dg_hji_source *sd, double t,
                               double layer, int64_t B, const double *x, double *u, double *d, double *V, double *gu,
                               double *gd, double *tau, dg_err *e) {
    const int nx = p->grid.ndim, nu = p->game.u.dim, nd = p->game.d.dim;
    const int two = sd && sd != su && d;  /* d reads a value of its own */
    for (int64_t i = 0; i < B; i++) tau[i] = time_to_go(su->horizon, t);
    dg_status s = dg_hji_source_eval(su, B, x, tau, V, gu, e);
    if (s != DG_OK) return s;
    if (two) {
        for (int64_t i = 0; i < B; i++) tau[i] = time_to_go(sd->horizon, t);
        if ((s = dg_hji_source_eval(sd, B, x, tau, NULL, gd, e)) != DG_OK) return s;
    }
    for (int64_t i = 0; i < B; i++)
        inputs_at(p, layer, x + i * nx, gu + i * nx, two ? gd + i * nx : gu + i * nx, u ? u + i * nu : NULL,
                  d ? d + i * nd : NULL);
    return DG_OK;
}

dg_status dg_hji_feedback_batch(const dg_hji_problem *p, const dg_hji_source *su, const dg_hji_source *sd, double t,
                                double layer, int64_t B, const double *x, double *u, double *d, double *V,
                                dg_err *e) {
    if (!p || !su || B < 0 || (B > 0 && !x) || !(layer >= 0 && layer <= 1))
        return dg_err_set(e, DG_ERR_ARG, "hji feedback: needs a problem, a source, B >= 0 states and a boundary "
                          "layer in [0, 1]");
    if (B == 0) return DG_OK;
    const size_t nx = (size_t)p->grid.ndim;
    double *gu = malloc((size_t)B * nx * sizeof *gu), *gd = malloc((size_t)B * nx * sizeof *gd);
    double *tau = malloc((size_t)B * sizeof *tau);
    dg_status s = gu && gd && tau ? feedback_work(p, su, sd, t, layer, B, x, u, d, V, gu, gd, tau, e)
                                  : dg_err_set(e, DG_ERR_NOMEM, "hji feedback: out of memory for %lld states",
                                               (long long)B);
    free(gu), free(gd), free(tau);
    return s;
}

/* One state's inputs at time t (dg_hji_feedback_batch with B = 1, on the stack); its value into *v. */
static dg_status feedback_one(const dg_hji_problem *p, const dg_hji_source *su, const dg_hji_source *sd, double t,
                              double layer, const double *x, double *u, double *d, double *v, dg_err *e) {
    double gu[DG_HJI_MAX_DIMS], gd[DG_HJI_MAX_DIMS], tau[1];
    return feedback_work(p, su, sd, t, layer, 1, x, u, d, v, gu, gd, tau, e);
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

/* The automatic step at x0 for the inputs u, d there (dg_hji_sim_dt). */
static double step_at(const dg_hji_problem *p, const double *x0, const double *u, const double *d, double t_max) {
    const dg_hji_grid *g = &p->grid;
    double xd[DG_HJI_MAX_DIMS], sp = 0;
    dg_hji_game_dynamics(&p->game, x0, u, d, xd);
    for (int k = 0; k < g->ndim; k++) sp = fmax(sp, fabs(xd[k]) / g->dx[k]);
    double dt = sp > 0 ? 0.25 / sp : 0.01;  /* a quarter of a cell per step at the game's speed */
    if (dt > t_max / 200) dt = t_max / 200;
    return dt;
}

double dg_hji_sim_dt(const dg_hji_problem *p, const dg_hji_slices *V, const double *x0, double t_max) {
    double u[DG_HJI_MAX_INPUT], d[DG_HJI_MAX_INPUT];
    dg_hji_feedback(p, V, time_to_go(V->t[V->nt - 1], 0), 0, x0, u, d);
    return step_at(p, x0, u, d, t_max);
}

dg_status dg_hji_sim_dt_sources(const dg_hji_problem *p, const dg_hji_source *su, const dg_hji_source *sd,
                                const double *x0, double t_max, double *dt, dg_err *e) {
    double u[DG_HJI_MAX_INPUT] = {0}, d[DG_HJI_MAX_INPUT] = {0}, v;
    if (!p || !su || !x0 || !dt) return dg_err_set(e, DG_ERR_ARG, "hji sim dt: bad arguments");
    dg_status s = feedback_one(p, su, sd, 0, 0, x0, u, d, &v, e);
    if (s == DG_OK) *dt = step_at(p, x0, u, d, t_max);
    return s;
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

/* one RK2 (midpoint) step of dt from x (in place), the inputs u, d held over it; xm gets the
 * midpoint. Periodic axes are kept in [lo, hi). */
static void rk2_step(const dg_hji_problem *p, double *x, const double *u, const double *d, double dt, double *xm) {
    const dg_hji_grid *g = &p->grid;
    double xd[DG_HJI_MAX_DIMS];
    dg_hji_game_dynamics(&p->game, x, u, d, xd);
    for (int k = 0; k < g->ndim; k++) xm[k] = x[k] + 0.5 * dt * xd[k];
    dg_hji_game_dynamics(&p->game, xm, u, d, xd);
    for (int k = 0; k < g->ndim; k++) {
        x[k] += dt * xd[k];
        if (g->bc[k] == DG_HJI_BC_PERIODIC) {
            const double per = g->hi[k] - g->lo[k];
            x[k] = g->lo[k] + fmod(fmod(x[k] - g->lo[k], per) + per, per);
        }
    }
}

/* A play of a game with noise: refused (its feedback needs the value's Hessian, dg_hji_noise_inputs, and
 * its payoff noise draws), in one line. */
static dg_status noisy_refused(const dg_hji_problem *p, dg_err *e) {
    return dg_err_set(e, DG_ERR_ARG, "hji simulate: %s has noise (a diffusion term): its plays (noise draws, the "
                      "feedback of dg_hji_noise_inputs) are not simulated yet", p->name);
}

dg_status dg_hji_simulate(const dg_hji_problem *p, const dg_hji_slices *V, const double *x0,
                          const dg_hji_sim_opts *o, dg_hji_sim_result *r, dg_err *e) {
    if (!p || !V) return dg_err_set(e, DG_ERR_ARG, "hji simulate: needs a problem and a value");
    const dg_hji_source src = dg_hji_source_slices(&p->grid, V);
    return dg_hji_simulate_sources(p, &src, NULL, x0, o, r, e);
}

/* DG_OK when s (and sd, may be NULL) can be played: an eval, a finite horizon >= 0, a slices source's
 * slices usable. */
static dg_status check_sources(const dg_hji_source *su, const dg_hji_source *sd, dg_err *e) {
    for (int q = 0; q < 2; q++) {
        const dg_hji_source *s = q ? sd : su;
        if (!s) continue;
        if (!s->eval || !(s->horizon >= 0) || !isfinite(s->horizon))
            return dg_err_set(e, DG_ERR_ARG, "hji: a value source needs its eval and a finite horizon >= 0");
        if (s->eval == slices_eval) {
            if (!s->grid) return dg_err_set(e, DG_ERR_ARG, "hji: a value's slices need their grid");
            dg_status sc = check_slices(&s->slices, e);
            if (sc != DG_OK) return sc;
        }
    }
    return DG_OK;
}

dg_status dg_hji_simulate_sources(const dg_hji_problem *p, const dg_hji_source *su, const dg_hji_source *sd,
                                  const double *x0, const dg_hji_sim_opts *o, dg_hji_sim_result *r, dg_err *e) {
    if (!p || !su || !x0 || !o || !r)
        return dg_err_set(e, DG_ERR_ARG, "hji simulate: needs a problem, a value, a start, options and a result");
    dg_status sc = check_sources(su, sd, e);
    if (sc != DG_OK) return sc;
    if (!(o->layer >= 0 && o->layer <= 1))
        return dg_err_set(e, DG_ERR_ARG, "hji simulate: the boundary layer must be in [0, 1], got %g", o->layer);
    if (!p->game.dyn) return dg_err_set(e, DG_ERR_ARG, "hji simulate: %s has no dynamics to simulate", p->name);
    if (dg_hji_game_noisy(&p->game)) return noisy_refused(p, e);
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
    double dt = o->dt;
    if (!(dt > 0) && (sc = dg_hji_sim_dt_sources(p, su, sd, x0, t_max, &dt, e)) != DG_OK) return sc;
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
                             .value0 = NAN, .obstacle_time = -1};
    double J = 0, inc = 0, l_prev = 0;  /* the payoff so far (a game of degree), its last step, l before it */
    for (int64_t s = 0; s <= steps; s++) {
        double u[DG_HJI_MAX_INPUT] = {0}, d[DG_HJI_MAX_INPUT] = {0}, v = 0;
        if ((sc = feedback_one(p, su, sd, (double)s * dt, o->layer, x, u, d, &v, e)) != DG_OK) {
            dg_csv_abort(&w);
            return sc;
        }
        double l = 0;
        if ((sc = target_here(p, (double)s * dt, 1, x, &l, e)) != DG_OK) {
            dg_csv_abort(&w);
            return sc;
        }
        double go = -INFINITY;
        if ((sc = obstacle_here(p, (double)s * dt, x, &go, e)) != DG_OK) {
            dg_csv_abort(&w);
            return sc;
        }
        if (go > 0 && r->obstacle_time < 0) r->obstacle_time = (double)s * dt;
        const dg_hji_sim_step st = {.step = s, .steps = steps, .t = (double)s * dt, .x = x, .u = u, .d = d,
                                    .value = v, .target = l, .obstacle = go};
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
        double xm[DG_HJI_MAX_DIMS];
        rk2_step(p, x, u, d, dt, xm);
        if (degree) J += (inc = exp(-rho * (st.t + 0.5 * dt)) * dg_hji_game_running_cost(&p->game, xm, u, d) * dt);
    }
    if (degree) r->payoff = J;
    return o->csv_path ? dg_csv_commit(&w, e) : DG_OK;
}

/* dg_hji_simulate_batch's lockstep loop, its work arrays given: x (B, nx) the states, u, d (B, dims),
 * xm (B, nx), live (B) the plays not yet over, l (B) their targets. */
static dg_status batch_run(const dg_hji_problem *p, const dg_hji_source *su, const dg_hji_source *sd, int64_t B,
                           double dt, int64_t steps, double layer, double *x, double *u, double *d, double *xm, unsigned char *live, double *l, double *capture_time, double *min_target,
                           dg_err *e) {
    const dg_hji_grid *g = &p->grid;
    const int nx = g->ndim, nu = p->game.u.dim, nd = p->game.d.dim;
    for (int64_t s = 0; s <= steps; s++) {
        const double t = (double)s * dt;
        int64_t n = 0;  /* the live plays' states, packed into xm in their order */
        for (int64_t i = 0; i < B; i++)
            if (live[i]) memcpy(xm + n++ * nx, x + i * nx, (size_t)nx * sizeof *x);
        dg_status sc = target_here(p, t, n, xm, l, e);  /* their targets, in one call */
        if (sc != DG_OK) return sc;
        int64_t j = 0;
        n = 0;  /* those still going after this check, packed again */
        for (int64_t i = 0; i < B; i++) {
            if (!live[i]) continue;
            const double li = l[j++];
            if (min_target && li < min_target[i]) min_target[i] = li;
            if (li <= 0) {
                live[i] = 0;
                if (capture_time) capture_time[i] = t;
                continue;
            }
            if (n != j - 1) memcpy(xm + n * nx, xm + (j - 1) * nx, (size_t)nx * sizeof *x);
            n++;
        }
        if (n == 0 || s == steps) break;
        if ((sc = dg_hji_feedback_batch(p, su, sd, t, layer, n, xm, u, d, NULL, e)) != DG_OK) return sc;
        int64_t k = 0;
        for (int64_t i = 0; i < B; i++) {  /* RK2 (midpoint), the inputs held over the step */
            if (!live[i]) continue;
            rk2_step(p, x + i * nx, u + k * nu, d + k * nd, dt, xm + k * nx);
            k++;
        }
    }
    return DG_OK;
}

dg_status dg_hji_simulate_batch(const dg_hji_problem *p, const dg_hji_source *su, const dg_hji_source *sd, int64_t B,
                                const double *x0, const dg_hji_sim_opts *o, double *capture_time, double *min_target,
                                dg_err *e) {
    if (!p || !su || B < 0 || (B > 0 && !x0) || !o)
        return dg_err_set(e, DG_ERR_ARG, "hji simulate: needs a problem, a value, B >= 0 starts and options");
    dg_status sc = check_sources(su, sd, e);
    if (sc != DG_OK) return sc;
    if (!p->game.dyn) return dg_err_set(e, DG_ERR_ARG, "hji simulate: %s has no dynamics to simulate", p->name);
    if (dg_hji_game_noisy(&p->game)) return noisy_refused(p, e);
    if (dg_hji_game_degree(&p->game) && p->payoff == DG_HJI_PAYOFF_COST)
        return dg_err_set(e, DG_ERR_ARG, "hji simulate: a batch plays to the target; %s has a running cost "
                          "(payoff: cost): play it with dg_hji_simulate", p->name);
    if (!(o->layer >= 0 && o->layer <= 1) || !(o->t_max > 0) || !isfinite(o->t_max) || !(o->dt >= 0) ||
        !isfinite(o->dt) || o->max_steps < 1)
        return dg_err_set(e, DG_ERR_ARG, "hji simulate: t_max > 0, dt >= 0, max_steps >= 1 and a boundary layer in "
                          "[0, 1] needed (t_max %g, dt %g, max_steps %lld, layer %g)", o->t_max, o->dt,
                          (long long)o->max_steps, o->layer);
    const int nx = p->grid.ndim;
    for (int64_t i = 0; i < B * nx; i++)
        if (!isfinite(x0[i]))
            return dg_err_set(e, DG_ERR_ARG, "hji simulate: start %lld's coordinate %d is not finite",
                              (long long)(i / nx), (int)(i % nx));
    const size_t n = (size_t)(B > 0 ? B : 1), nu = (size_t)p->game.u.dim + 1, nd = (size_t)p->game.d.dim + 1;
    double *x = malloc(n * nx * sizeof *x), *xm = malloc(n * nx * sizeof *xm), *u = malloc(n * nu * sizeof *u);
    double *d = malloc(n * nd * sizeof *d), *l = malloc(n * sizeof *l);
    unsigned char *live = malloc(n);
    if (!x || !xm || !u || !d || !l || !live) {
        sc = dg_err_set(e, DG_ERR_NOMEM, "hji simulate: out of memory for %lld states", (long long)B);
        goto out;
    }
    double dt = o->dt;
    if (!(dt > 0)) {  /* the least automatic step of the starts: one step for all */
        dt = INFINITY;
        if ((sc = dg_hji_feedback_batch(p, su, sd, 0, 0, B, x0, u, d, NULL, e)) != DG_OK) goto out;
        for (int64_t i = 0; i < B; i++)
            dt = fmin(dt, step_at(p, x0 + i * nx, u + i * p->game.u.dim, d + i * p->game.d.dim, o->t_max));
        if (B == 0) dt = o->t_max / 200;
    }
    if (!(o->t_max / dt <= (double)o->max_steps)) {
        sc = dg_err_set(e, DG_ERR_ARG, "hji simulate: t_max %g / dt %g is %.3g steps, more than max_steps %lld",
                        o->t_max, dt, o->t_max / dt, (long long)o->max_steps);
        goto out;
    }
    const int64_t steps = (int64_t)ceil(o->t_max / dt - 1e-9);
    memcpy(x, x0, (size_t)B * nx * sizeof *x);
    memset(live, 1, (size_t)B);
    for (int64_t i = 0; i < B; i++) {
        if (capture_time) capture_time[i] = -1;
        if (min_target) min_target[i] = INFINITY;
    }
    sc = batch_run(p, su, sd, B, dt, steps, o->layer, x, u, d, xm, live, l, capture_time, min_target, e);
out:
    free(x), free(xm), free(u), free(d), free(l), free(live);
    return sc;
}
