/* Both players' equilibrium feedback from a value: the bang-bang inputs of the value's gradient,
 * held over each step of an RK2 (midpoint) integration, until the target is reached or t_max. */
#include <math.h>
#include <stdio.h>

#include "difgames/fileio.h"
#include "hji/internal.h"

double dg_hji_feedback(const dg_hji_problem *p, const double *V, const double *x, double *u, double *d) {
    double grad[DG_HJI_MAX_DIMS];
    const double v = dg_hji_interp(&p->grid, V, x, grad);
    dg_hji_game_optimal(&p->game, x, grad, u, d);
    return v;
}

double dg_hji_sim_dt(const dg_hji_problem *p, const double *V, const double *x0, double t_max) {
    const dg_hji_grid *g = &p->grid;
    double u[DG_HJI_MAX_INPUT], d[DG_HJI_MAX_INPUT], xd[DG_HJI_MAX_DIMS], sp = 0;
    dg_hji_feedback(p, V, x0, u, d);
    dg_hji_game_dynamics(&p->game, x0, u, d, xd);
    for (int k = 0; k < g->ndim; k++) sp = fmax(sp, fabs(xd[k]) / g->dx[k]);
    double dt = sp > 0 ? 0.25 / sp : 0.01;  /* a quarter of a cell per step at the game's speed */
    if (dt > t_max / 200) dt = t_max / 200;
    return dt;
}

/* One CSV row of a step (the header's columns). */
static void csv_row(FILE *f, const dg_hji_problem *p, const dg_hji_sim_step *s) {
    fprintf(f, "%.6g", s->t);
    for (int k = 0; k < p->grid.ndim; k++) fprintf(f, ",%.9g", s->x[k]);
    for (int k = 0; k < p->game.u.dim; k++) fprintf(f, ",%.6g", s->u[k]);
    for (int k = 0; k < p->game.d.dim; k++) fprintf(f, ",%.6g", s->d[k]);
    fprintf(f, ",%.9g,%.9g\n", s->value, s->target);
}

dg_status dg_hji_simulate(const dg_hji_problem *p, const double *V, const double *x0, const dg_hji_sim_opts *o,
                          dg_hji_sim_result *r, dg_err *e) {
    if (!p || !V || !x0 || !o || !r)
        return dg_err_set(e, DG_ERR_ARG, "hji simulate: needs a problem, a value, a start, options and a result");
    if (!p->game.dyn) return dg_err_set(e, DG_ERR_ARG, "hji simulate: %s has no dynamics to simulate", p->name);
    const dg_hji_grid *g = &p->grid;
    const int nx = g->ndim;
    for (int k = 0; k < nx; k++)
        if (!isfinite(x0[k])) return dg_err_set(e, DG_ERR_ARG, "hji simulate: start coordinate %d is not finite", k);
    if (!(o->t_max > 0) || !isfinite(o->t_max) || !(o->dt >= 0) || !isfinite(o->dt) || o->max_steps < 1)
        return dg_err_set(e, DG_ERR_ARG, "hji simulate: t_max > 0, dt >= 0 and max_steps >= 1 needed "
                          "(t_max %g, dt %g, max_steps %lld)", o->t_max, o->dt, (long long)o->max_steps);
    const double dt = o->dt > 0 ? o->dt : dg_hji_sim_dt(p, V, x0, o->t_max);
    if (!(o->t_max / dt <= (double)o->max_steps))  /* the steps (CSV rows), bounded before anything is written */
        return dg_err_set(e, DG_ERR_ARG, "hji simulate: t_max %g / dt %g is %.3g steps, more than max_steps %lld",
                          o->t_max, dt, o->t_max / dt, (long long)o->max_steps);
    dg_file f = {0};
    if (o->csv_path) {
        dg_status s = dg_file_begin(&f, o->csv_path, e);
        if (s != DG_OK) return s;
        fprintf(f.fp, "t");
        for (int k = 0; k < nx; k++) fprintf(f.fp, ",x%d", k);
        for (int k = 0; k < p->game.u.dim; k++) fprintf(f.fp, ",u%d", k);
        for (int k = 0; k < p->game.d.dim; k++) fprintf(f.fp, ",d%d", k);
        fprintf(f.fp, ",value,target\n");
    }
    double x[DG_HJI_MAX_DIMS];
    for (int k = 0; k < nx; k++) x[k] = x0[k];
    const int64_t steps = (int64_t)ceil(o->t_max / dt);
    *r = (dg_hji_sim_result){.captured = 0, .capture_time = -1, .dt = dt, .steps = steps};
    for (int64_t s = 0; s <= steps; s++) {
        double u[DG_HJI_MAX_INPUT] = {0}, d[DG_HJI_MAX_INPUT] = {0};
        const dg_hji_sim_step st = {.step = s, .steps = steps, .t = (double)s * dt, .x = x, .u = u, .d = d,
                                    .value = dg_hji_feedback(p, V, x, u, d),
                                    .target = dg_hji_interp(g, p->target, x, NULL)};
        if (f.fp) csv_row(f.fp, p, &st);
        r->rows = s + 1;
        if (o->on_step && o->on_step(o->user, &st)) {
            dg_file_abort(&f);
            return dg_err_set(e, DG_ERR_INTERRUPTED, "hji simulate: stopped by the caller at step %lld", (long long)s);
        }
        if (st.target <= 0) {
            r->captured = 1;
            r->capture_time = st.t;
            break;
        }
        /* RK2 (midpoint) with the inputs held over the step, as a sampled feedback */
        double xd[DG_HJI_MAX_DIMS], xm[DG_HJI_MAX_DIMS];
        dg_hji_game_dynamics(&p->game, x, u, d, xd);
        for (int k = 0; k < nx; k++) xm[k] = x[k] + 0.5 * dt * xd[k];
        dg_hji_game_dynamics(&p->game, xm, u, d, xd);
        for (int k = 0; k < nx; k++) {
            x[k] += dt * xd[k];
            if (g->bc[k] == DG_HJI_BC_PERIODIC) {  /* keep angles in [lo, hi) */
                const double per = g->hi[k] - g->lo[k];
                x[k] = g->lo[k] + fmod(fmod(x[k] - g->lo[k], per) + per, per);
            }
        }
    }
    return f.fp ? dg_file_commit(&f, e) : DG_OK;
}
