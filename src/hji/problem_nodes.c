/* A problem's node arrays (target, obstacle field, a game of degree's initial value and where it
 * stops) over the whole grid or a rank's block, each node's values from its coordinates alone. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/dist.h"
#include "difgames/memory.h"
#include "hji/internal.h"
#include "hji/model_problem.h"
#include "hji/problem_internal.h"

/* The target at node j: from target (nodes [j0, j0 + n)) when it holds j, else evaluated there. */
static double target_at(const dg_hji_problem *p, const double *target, int64_t j0, int64_t n, int64_t j) {
    if (j >= j0 && j < j0 + n) return target[j - j0];
    double t;
    ((const problem_build *)p->build)->target(p, p->t_end, j, 1, &t);
    return t;
}

/* The target's normal speed at node j: c = -ext_{u,d} n.f(x, u, d), n the unit gradient of the
 * target's signed distance (central differences; target holds nodes [j0, j0 + n), the neighbours
 * outside it are evaluated), c = H(x, n) + 1 for the time to reach (L = 1). (A moving target's own
 * rate is left out: with it, the moving anchor of tests/test_hji_tvary.c was 2.5x less accurate.) */
static double front_speed(const dg_hji_problem *p, const double *target, int64_t j0, int64_t nn, int64_t j) {
    const dg_hji_grid *g = &p->grid;
    double x[DG_HJI_MAX_DIMS], n[DG_HJI_MAX_DIMS], n2 = 0;
    dg_hji_grid_point(g, j, x);
    const double tj = target_at(p, target, j0, nn, j);
    for (int k = 0; k < g->ndim; k++) {
        const int64_t st = g->stride[k];
        const int i = (int)((j / st) % g->n[k]);
        const double lo = i > 0 ? target_at(p, target, j0, nn, j - st) : tj,
                     hi = i < g->n[k] - 1 ? target_at(p, target, j0, nn, j + st) : tj;
        n[k] = (hi - lo) / ((i > 0) + (i < g->n[k] - 1)) / g->dx[k];
        n2 += n[k] * n[k];
    }
    if (!(n2 > 0)) return 0;
    for (int k = 0; k < g->ndim; k++) n[k] /= sqrt(n2);
    return dg_hji_game_hamiltonian(&p->game, x, n) + p->game.payoff.running;
}

/* The largest front speed on the target over nodes [j0, j0 + n) (target holds them), at least 0. */
static double front_max(const dg_hji_problem *p, const double *target, int64_t j0, int64_t n) {
    double cmax = 0;
    for (int64_t i = 0; i < n; i++)
        if (target[i] <= 0) {
            const double v = front_speed(p, target, j0, n, j0 + i);
            if (v > cmax) cmax = v;
        }
    return cmax;
}

/* A shape's center (a ball's, into lo) or corners (a box's, lo and hi) at the game's time t: where it
 * was declared, moved by its velocity times t (the same numbers when it does not move). */
static void shape_at(const obstacle_shape *sh, double t, double *lo, double *hi) {
    for (int k = 0; k < DG_HJI_MAX_DIMS; k++) {
        lo[k] = sh->moving ? sh->a[k] + sh->vel[k] * t : sh->a[k];
        hi[k] = sh->moving ? sh->b[k] + sh->vel[k] * t : sh->b[k];
    }
}

/* Nodes [j0, j0 + n) of p's node arrays into the n-node arrays given: the target; the obstacle
 * field (when the problem has one; NULL else); a game of degree's v0 (initial) and where it is over
 * (stop, payoff: time; NULL else). cmax: the largest front speed on the whole grid's target
 * (front_max; payoff: time). Every node's values are computed from its coordinates (and, for v0,
 * its neighbours' target) alone, so a block's are the whole grid's bits there.
 * cost: v0 = x'Q_T x everywhere, nothing held (no obstacles). time: the cap (t_end), held, in the
 * obstacles; held on the target at d / c <= 0, d its signed distance and c the front's normal speed
 * there (front_speed, at least a tenth of its largest on the target): the time to reach extended
 * linearly inside, so that the value outside sees the target's true rim and not the nodes'
 * staircase (dg_hji_problem_solve_at reports 0 there); 0 elsewhere. */
static void build_nodes(const dg_hji_problem *p, double t, int64_t j0, int64_t n, double cmax, int have_target,
                        double *target, double *obstacle, double *scratch, double *initial, double *stop) {
    const problem_build *b = p->build;
    const dg_hji_grid *g = &p->grid;
    if (!have_target) b->target(p, t, j0, n, target);
    for (int i = 0; obstacle && i < b->nshape; i++) {  /* their union (min), negated: > 0 inside */
        const obstacle_shape *sh = &b->shape[i];
        double *to = i == 0 ? obstacle : scratch, lo[DG_HJI_MAX_DIMS], hi[DG_HJI_MAX_DIMS];
        shape_at(sh, t, lo, hi);
        if (sh->ball) hji_sdf_ball_nodes(g, lo, sh->radius, sh->mask, j0, n, to);
        else hji_sdf_box_nodes(g, lo, hi, sh->mask, j0, n, to);
        if (i > 0) dg_hji_sdf_union(n, scratch, obstacle);
    }
    if (obstacle && b->nshape > 0) dg_hji_sdf_complement(n, obstacle);
    if (obstacle && p->model) dg_hji_model_avoid(p->model, g, j0, n, t, b->nshape > 0, obstacle);
    if (p->payoff == DG_HJI_PAYOFF_KIND) return;
    for (int64_t i = 0; i < n; i++) {
        if (p->payoff == DG_HJI_PAYOFF_TIME) {
            const int obst = obstacle && obstacle[i] > 0;
            double v = 0;
            if (target[i] <= 0 && cmax > 0) {
                double cj = front_speed(p, target, j0, n, j0 + i);
                if (cj < 0.1 * cmax) cj = 0.1 * cmax;
                v = target[i] / cj;
            }
            initial[i] = obst ? p->t_end : v;
            stop[i] = obst || target[i] <= 0 ? -1 : 1;
        } else {
            double x[DG_HJI_MAX_DIMS];
            dg_hji_grid_point(g, j0 + i, x);
            initial[i] = dg_hji_problem_terminal_cost(p, x);
        }
    }
}

int hji_problem_has_obstacle(const dg_hji_problem *p) {
    const problem_build *b = p ? p->build : NULL;
    if (!p || p->obstacle) return p && p->obstacle;
    return b && !b->built && p->payoff == DG_HJI_PAYOFF_KIND && (b->nshape > 0 || dg_hji_model_has_avoid(p->model));
}

/* Builds p's node arrays over a box of the grid (lo, n: the whole grid, or a rank's box, row-major:
 * then the largest front speed is reduced over the ranks, collective), refusing what cannot fit.
 * The box is built run by run (hji_box_runs), each a range of the grid's nodes. */
dg_status hji_problem_build_arrays(dg_hji_problem *p, const int *lo, const int *nb, int split, dg_err *e) {
    int64_t len, n = 1;
    const int64_t runs = hji_box_runs(&p->grid, lo, nb, &len);
    for (int k = 0; k < p->grid.ndim; k++) n *= nb[k];
    problem_build *b = p->build;
    const int obst = b->nshape > 0 || dg_hji_model_has_avoid(p->model);
    const int degree = p->payoff != DG_HJI_PAYOFF_KIND, time = p->payoff == DG_HJI_PAYOFF_TIME;
    dg_err me = {0};
    /* a block's target, the obstacles' field and a scratch array, initial and stop (the whole
     * grid's: checked by problem_load, naming the key) */
    const int fits = !split || dg_mem_check((double)n * sizeof(double) * ((obst ? 3 : 1) + 2 * degree), &me) == DG_OK;
    double *scratch = fits && obst && b->nshape > 1 ? malloc((size_t)n * sizeof *scratch) : NULL;
    if (fits) {
        p->target = malloc((size_t)n * sizeof *p->target);
        if (obst) p->obstacle = malloc((size_t)n * sizeof *p->obstacle);
        if (degree) p->initial = malloc((size_t)n * sizeof *p->initial);
        if (time) p->stop = malloc((size_t)n * sizeof *p->stop);
    }
    const int bad = !fits || !p->target || (obst && !p->obstacle) || (obst && b->nshape > 1 && !scratch) ||
                    (degree && !p->initial) || (time && !p->stop);
    /* every rank learns of a failure on any (the max below is collective) */
    const int any = split ? dg_dist_or(bad) : bad;
    if (any) {
        free(scratch);
        free(p->target);
        free(p->obstacle);
        free(p->initial);
        free(p->stop);
        p->target = p->obstacle = p->initial = p->stop = NULL;
        if (!fits) return dg_err_set(e, me.status, "hji: a block of %lld nodes %s; lower grid.n", (long long)n, me.msg);
        if (bad) return dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory for %lld nodes", (long long)n);
        return dg_err_set(e, DG_ERR_NOMEM, "hji: another rank could not hold its block's target");
    }
    if (time) {  /* the largest front speed, over the whole grid's target */
        b->cmax = 0;
        for (int64_t i = 0; i < runs; i++) {
            const int64_t j0 = hji_box_run_at(&p->grid, lo, nb, i);
            b->target(p, p->t_end, j0, len, p->target + i * len);
            const double c = front_max(p, p->target + i * len, j0, len);
            if (c > b->cmax) b->cmax = c;
        }
        if (split) dg_dist_max(&b->cmax, 1);   /* a max: exact, whatever the blocks */
    }
    for (int64_t i = 0; i < runs; i++) {
        const int64_t j0 = hji_box_run_at(&p->grid, lo, nb, i), at = i * len;
        build_nodes(p, p->t_end, j0, len, b->cmax, time, p->target + at, p->obstacle ? p->obstacle + at : NULL, scratch,
                    p->initial ? p->initial + at : NULL, p->stop ? p->stop + at : NULL);
    }
    free(scratch);
    b->built = 1;
    b->whole = n == p->grid.nodes;
    p->opts.stop = p->stop;
    if (degree) {   /* held at the cap in p->stop */
        free(p->obstacle);
        p->obstacle = NULL;
    }
    return DG_OK;
}

void hji_problem_node(const dg_hji_problem *p, int64_t j, double *v0, double *mark) {
    const problem_build *b = p->build;
    if (b && b->moving) {   /* time-varying sets: a moving one's at tau = 0 plus at t = 0 */
        const int obst = b->nshape > 0 || dg_hji_model_has_avoid(p->model), time = p->payoff == DG_HJI_PAYOFF_TIME;
        double t0, o0 = 0, i0 = 0, s0 = 0, scratch, t1, o1 = 0, i1 = 0, s1 = 0;
        build_nodes(p, 0, j, 1, b->cmax, 0, &t0, obst ? &o0 : NULL, &scratch, &i0, &s0);
        build_nodes(p, p->t_end, j, 1, b->cmax, 0, &t1, obst ? &o1 : NULL, &scratch, &i1, &s1);
        if (time) {   /* v0 and the stop field: the target's and the obstacles' */
            t0 = i0, t1 = i1, o0 = s0, o1 = s1;
        }
        *v0 = b->target_moves ? t0 + t1 : t1;
        *mark = b->obstacle_moves || (time && b->target_moves) ? o0 + o1 : o1;
        return;
    }
    if (!b || b->whole) {
        *v0 = dg_hji_problem_v0(p)[j];
        *mark = p->obstacle ? p->obstacle[j] : p->stop ? p->stop[j] : 0;
        return;
    }
    const int obst = b->nshape > 0 || dg_hji_model_has_avoid(p->model);
    double t, o, scratch, init = 0, st = 0;
    build_nodes(p, p->t_end, j, 1, b->cmax, 0, &t, obst ? &o : NULL, &scratch, &init, &st);
    *v0 = p->payoff == DG_HJI_PAYOFF_KIND ? t : init;
    *mark = p->payoff == DG_HJI_PAYOFF_KIND ? (obst ? o : 0) : p->payoff == DG_HJI_PAYOFF_TIME ? st : 0;
}

dg_status hji_problem_build_block(dg_hji_problem *p, const int *lo, const int *n, dg_err *e) {
    problem_build *b = p ? p->build : NULL;
    if (!b || b->built) return dg_err_set(e, DG_ERR_ARG, "hji: build_block needs a problem loaded without its arrays");
    int64_t node0 = 0, nodes = 1;
    for (int k = 0; k < p->grid.ndim; k++) {
        if (lo[k] < 0 || n[k] < 1 || lo[k] + n[k] > p->grid.n[k])
            return dg_err_set(e, DG_ERR_ARG, "hji: axis %d's nodes [%d, %d) outside the grid's %d", k, lo[k],
                              lo[k] + n[k], p->grid.n[k]);
        node0 += (int64_t)lo[k] * p->grid.stride[k];
        nodes *= n[k];
    }
    dg_status rc = hji_problem_build_arrays(p, lo, n, nodes < p->grid.nodes, e);
    if (rc) return rc;
    p->nprint = 0;
    p->nprint = dg_hji_game_print(p, p->print);  /* the whole grid's samples, each evaluated alone */
    p->block0 = node0;
    p->block_nodes = nodes < p->grid.nodes ? nodes : 0;
    return DG_OK;
}

/* ------------------------------------------------------------- at points */

/* The obstacle field at the point x at the game's time t, as build_nodes makes it at a node (the
 * config's shapes' union (min, the first on ties) negated, then the max with the model's avoid set,
 * the shapes' on ties), the active piece's gradient into grad (nx) unless NULL; -INFINITY (gradient
 * 0) without one. */
static double obstacle_point(const dg_hji_problem *p, double t, const double *x, double *grad) {
    const problem_build *b = p->build;
    const dg_hji_grid *g = &p->grid;
    const int nx = g->ndim;
    double m = INFINITY, gs[DG_HJI_MAX_DIMS], gm[DG_HJI_MAX_DIMS] = {0};
    for (int i = 0; i < b->nshape; i++) {
        const obstacle_shape *sh = &b->shape[i];
        double lo[DG_HJI_MAX_DIMS], hi[DG_HJI_MAX_DIMS];
        shape_at(sh, t, lo, hi);
        const double s = sh->ball ? hji_sdf_ball_at(g, lo, sh->radius, sh->mask, x, grad ? gs : NULL)
                                  : hji_sdf_box_at(g, lo, hi, sh->mask, x, grad ? gs : NULL);
        if (i == 0 || s < m) {
            m = s;
            if (grad) memcpy(gm, gs, sizeof gs);
        }
    }
    double o = b->nshape > 0 ? -m : -INFINITY;
    for (int k = 0; k < nx; k++) gm[k] = -gm[k];
    if (dg_hji_model_has_avoid(p->model)) {
        double y[DG_HJI_MAX_DIMS];
        hji_wrap_point(g, x, y);
        const double a = dg_hji_model_avoid_at(p->model, y, t, grad ? gs : NULL);
        if (b->nshape == 0 || a > o) memcpy(gm, gs, sizeof gs);
        o = b->nshape > 0 ? fmax(o, a) : a;
    }
    if (grad) memcpy(grad, gm, (size_t)nx * sizeof *grad);
    return o;
}

/* payoff: time's v0 at the point x (l its target there, obst its obstacle field), as build_nodes
 * makes it at a node: the cap in the obstacles, l / c inside the target (c the front's normal speed
 * from the target's central differences, at least a tenth of the largest, cmax), 0 elsewhere. Along
 * an axis on which x is a node, the differences are the node's (its neighbours, one-sided at the
 * grid's edge), so a node gets its array's bits; off the nodes, x -+ dx on that axis. */
static double time_point(const dg_hji_problem *p, const double *x, double l, double obst) {
    const problem_build *b = p->build;
    const dg_hji_grid *g = &p->grid;
    if (obst > 0) return p->t_end;
    if (!(l <= 0 && b->cmax > 0)) return 0;
    double n[DG_HJI_MAX_DIMS], y[DG_HJI_MAX_DIMS], n2 = 0;
    memcpy(y, x, (size_t)g->ndim * sizeof *y);
    for (int k = 0; k < g->ndim; k++) {
        const double r = floor((x[k] - g->lo[k]) / g->dx[k] + 0.5);
        const int i = r >= 0 && r < g->n[k] ? (int)r : -1;
        const int node = i >= 0 && dg_hji_grid_coord(g, k, i) == x[k];
        const int below = !node || i > 0, above = !node || i < g->n[k] - 1;
        y[k] = node ? dg_hji_grid_coord(g, k, i - 1) : x[k] - g->dx[k];
        const double lo = below ? b->target_at(p, y, NULL) : l;
        y[k] = node ? dg_hji_grid_coord(g, k, i + 1) : x[k] + g->dx[k];
        const double hi = above ? b->target_at(p, y, NULL) : l;
        y[k] = x[k];
        n[k] = (hi - lo) / (below + above) / g->dx[k];
        n2 += n[k] * n[k];
    }
    double c = 0;
    if (n2 > 0) {
        for (int k = 0; k < g->ndim; k++) n[k] /= sqrt(n2);
        c = dg_hji_game_hamiltonian(&p->game, x, n) + p->game.payoff.running;
    }
    if (c < 0.1 * b->cmax) c = 0.1 * b->cmax;
    return l / c;
}

/* Checks the arguments of the pointwise functions below (what names the function in messages). */
static dg_status point_args(const dg_hji_problem *p, int n, const double *x, const double *out, const char *what,
                            dg_err *e) {
    if (!p || n < 0 || (n > 0 && (!x || !out)))
        return dg_err_set(e, DG_ERR_ARG, "hji: %s: needs a problem, n >= 0, the points and room for the values", what);
    if (!p->build || !((const problem_build *)p->build)->target_at)
        return dg_err_set(e, DG_ERR_ARG, "hji: %s: the problem %s was not loaded from a config", what, p->name);
    return DG_OK;
}

dg_status dg_hji_problem_target_at(const dg_hji_problem *p, int n, const double *x, double *l, double *grad,
                                   dg_err *e) {
    dg_status rc = point_args(p, n, x, l, "target_at", e);
    if (rc) return rc;
    const problem_build *b = p->build;
    const int nx = p->grid.ndim;
    for (int i = 0; i < n; i++) l[i] = b->target_at(p, x + (int64_t)i * nx, grad ? grad + (int64_t)i * nx : NULL);
    return DG_OK;
}

dg_status dg_hji_problem_obstacle_at(const dg_hji_problem *p, int n, const double *x, double *g, double *grad,
                                     dg_err *e) {
    dg_status rc = point_args(p, n, x, g, "obstacle_at", e);
    if (rc) return rc;
    const int nx = p->grid.ndim;
    for (int i = 0; i < n; i++)
        g[i] = obstacle_point(p, p->t_end, x + (int64_t)i * nx, grad ? grad + (int64_t)i * nx : NULL);
    return DG_OK;
}

dg_status dg_hji_problem_sets_at(const dg_hji_problem *p, double t, int n, const double *x, double *l, double *g,
                                 dg_err *e) {
    dg_status rc = point_args(p, n, x, l, "sets_at", e);
    if (rc) return rc;
    if (!isfinite(t)) return dg_err_set(e, DG_ERR_ARG, "hji: sets_at: the time %g is not finite", t);
    const problem_build *b = p->build;
    const int nx = p->grid.ndim;
    for (int i = 0; i < n; i++) {
        const double *xi = x + (int64_t)i * nx;
        l[i] = b->target_time(p, t, xi, NULL);
        if (g) g[i] = obstacle_point(p, t, xi, NULL);
    }
    return DG_OK;
}

/* payoff: time's v0 at x (its obstacle field first, then its target only when needed). */
static double time_v0(const dg_hji_problem *p, const double *x) {
    const problem_build *b = p->build;
    const double o = b->nshape > 0 || dg_hji_model_has_avoid(p->model) ? obstacle_point(p, p->t_end, x, NULL) : -INFINITY;
    return time_point(p, x, b->target_at(p, x, NULL), o);
}

dg_status dg_hji_problem_v0_at(const dg_hji_problem *p, int n, const double *x, double *v, double *grad, dg_err *e) {
    dg_status rc = point_args(p, n, x, v, "v0_at", e);
    if (rc) return rc;
    const problem_build *b = p->build;
    const int nx = p->grid.ndim;
    if (p->payoff == DG_HJI_PAYOFF_TIME && !b->built)
        return dg_err_set(e, DG_ERR_ARG, "hji: v0_at: payoff: time's v0 needs the problem's arrays built (the "
                          "largest front speed on the target)");
    for (int i = 0; i < n; i++) {
        const double *xi = x + (int64_t)i * nx;
        double *gi = grad ? grad + (int64_t)i * nx : NULL;
        if (p->payoff == DG_HJI_PAYOFF_KIND) {
            v[i] = b->target_at(p, xi, gi);
        } else if (p->payoff == DG_HJI_PAYOFF_COST) {
            v[i] = dg_hji_problem_terminal_cost(p, xi);
            if (!gi) continue;
            const game_def *gd = p->model ? NULL : hji_game_find(p->name);
            if (gd && gd->terminal) {   /* a game's own terminal value (merton's utility) */
                gd->terminal(p, xi, gi);
                continue;
            }
            if (p->model) dg_hji_model_terminal_grad(p->model, xi, gi);
            else
                for (int a = 0; a < nx; a++) gi[a] = 0;
            for (int a = 0; a < nx; a++)   /* d/dx x'Q x = (Q + Q') x */
                for (int c = 0; c < nx; c++) gi[a] += (p->terminal[a * nx + c] + p->terminal[c * nx + a]) * xi[c];
        } else {
            v[i] = time_v0(p, xi);
            for (int k = 0; gi && k < nx; k++) {   /* central differences, step 1e-6 dx_k */
                double y[DG_HJI_MAX_DIMS];
                const double h = 1e-6 * p->grid.dx[k];
                memcpy(y, xi, (size_t)nx * sizeof *y);
                y[k] = xi[k] + h;
                const double up = time_v0(p, y);
                y[k] = xi[k] - h;
                gi[k] = (up - time_v0(p, y)) / (2 * h);
            }
        }
    }
    return DG_OK;
}

dg_status dg_hji_problem_stop_at(const dg_hji_problem *p, int n, const double *x, double *stop, dg_err *e) {
    dg_status rc = point_args(p, n, x, stop, "stop_at", e);
    if (rc) return rc;
    const problem_build *b = p->build;
    const int nx = p->grid.ndim, obst = b->nshape > 0 || dg_hji_model_has_avoid(p->model);
    for (int i = 0; i < n; i++) {
        const double *xi = x + (int64_t)i * nx;
        stop[i] = 1;
        if (p->payoff == DG_HJI_PAYOFF_TIME)
            stop[i] = (obst && obstacle_point(p, p->t_end, xi, NULL) > 0) || b->target_at(p, xi, NULL) <= 0 ? -1 : 1;
    }
    return DG_OK;
}

/* ------------------------------------------------------- time-varying sets */

dg_status hji_problem_sets(const dg_hji_problem *p, double tau, double *target, double *obstacle, double *scratch,
                           double *work) {
    const problem_build *b = p->build;
    const double t = p->t_end - tau;   /* the game's time: the solve marches in time-to-go */
    if (p->block_nodes || !b) return DG_ERR_ARG;   /* the whole grid's nodes only */
    if (p->payoff == DG_HJI_PAYOFF_TIME) {   /* the held values (as v0) and the stop field of time t */
        const int obst = b->nshape > 0 || dg_hji_model_has_avoid(p->model);
        build_nodes(p, t, 0, p->grid.nodes, b->cmax, 0, work, obst ? work + p->grid.nodes : NULL, scratch, target,
                    obstacle);
        return DG_OK;
    }
    /* the target matters after tau = 0 only to brt_target (min with l(x, t)); brs and brt read v0. A
     * set that does not move is the node array's (tau = 0) */
    const size_t bytes = (size_t)p->grid.nodes * sizeof *target;
    const int still = p->opts.mode != DG_HJI_MODE_BRT_TARGET || !b->target_moves;
    if (still) memcpy(target, p->target, bytes);
    if (obstacle && !b->obstacle_moves) memcpy(obstacle, p->obstacle, bytes);
    if (!still || (obstacle && b->obstacle_moves))
        build_nodes(p, t, 0, p->grid.nodes, 0, still, target, b->obstacle_moves ? obstacle : NULL, scratch, NULL,
                    NULL);
    return DG_OK;
}
