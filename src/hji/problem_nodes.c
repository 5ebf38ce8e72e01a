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
    ((const problem_build *)p->build)->target(p, j, 1, &t);
    return t;
}

/* The target's normal speed at node j: c = -ext_{u,d} n.f(x, u, d), n the unit gradient of the
 * target's signed distance (central differences; target holds nodes [j0, j0 + n), the neighbours
 * outside it are evaluated), c = H(x, n) + 1 for the time to reach (L = 1). */
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
static void build_nodes(const dg_hji_problem *p, int64_t j0, int64_t n, double cmax, int have_target, double *target,
                        double *obstacle, double *scratch, double *initial, double *stop) {
    const problem_build *b = p->build;
    const dg_hji_grid *g = &p->grid;
    if (!have_target) b->target(p, j0, n, target);
    for (int i = 0; obstacle && i < b->nshape; i++) {  /* their union (min), negated: > 0 inside */
        const obstacle_shape *sh = &b->shape[i];
        double *to = i == 0 ? obstacle : scratch;
        if (sh->ball) hji_sdf_ball_nodes(g, sh->a, sh->radius, sh->mask, j0, n, to);
        else hji_sdf_box_nodes(g, sh->a, sh->b, sh->mask, j0, n, to);
        if (i > 0) dg_hji_sdf_union(n, scratch, obstacle);
    }
    if (obstacle && b->nshape > 0) dg_hji_sdf_complement(n, obstacle);
    if (obstacle && p->model) dg_hji_model_avoid(p->model, g, j0, n, b->nshape > 0, obstacle);
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
            b->target(p, j0, len, p->target + i * len);
            const double c = front_max(p, p->target + i * len, j0, len);
            if (c > b->cmax) b->cmax = c;
        }
        if (split) dg_dist_max(&b->cmax, 1);   /* a max: exact, whatever the blocks */
    }
    for (int64_t i = 0; i < runs; i++) {
        const int64_t j0 = hji_box_run_at(&p->grid, lo, nb, i), at = i * len;
        build_nodes(p, j0, len, b->cmax, time, p->target + at, p->obstacle ? p->obstacle + at : NULL, scratch,
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
    if (!b || b->whole) {
        *v0 = dg_hji_problem_v0(p)[j];
        *mark = p->obstacle ? p->obstacle[j] : p->stop ? p->stop[j] : 0;
        return;
    }
    const int obst = b->nshape > 0 || dg_hji_model_has_avoid(p->model);
    double t, o, scratch, init = 0, st = 0;
    build_nodes(p, j, 1, b->cmax, 0, &t, obst ? &o : NULL, &scratch, &init, &st);
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
