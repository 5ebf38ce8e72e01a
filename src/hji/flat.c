/* A grid value behind one handle (include/difgames/hji_flat.h): what the Python package's dg.hji
 * calls, so that no caller outside C mirrors the problem's struct. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/config.h"
#include "difgames/hji.h"
#include "difgames/hji_flat.h"

struct dg_hji_flat {
    dg_hji_problem *p;
    double         *V;  /* (nodes) */
};

dg_hji_flat *dg_hji_flat_solve(const char *path, const char *const *keys, const char *const *values, int n,
                               dg_err *e) {
    dg_err local = {0};
    if (!e) e = &local;
    dg_cfg *cfg = path ? dg_cfg_load(path, e) : NULL;
    if (!path) dg_err_set(e, DG_ERR_ARG, "dg_hji_flat_solve: no config path");
    if (!cfg) return NULL;
    dg_hji_flat *h = calloc(1, sizeof *h);
    dg_status st = h ? DG_OK : dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n && st == DG_OK; i++) st = dg_cfg_set(cfg, keys[i], values[i], e);
    if (st == DG_OK && !(h->p = dg_hji_problem_load(cfg, e))) st = e->status;
    /* hji learn's keys: the solve does not use them (the command's hji solve checks them with it) */
    if (st == DG_OK) dg_cfg_mark_used(cfg, "learn");
    if (st == DG_OK) st = dg_cfg_check_unused(cfg, e);
    if (st == DG_OK && !(h->V = malloc((size_t)h->p->grid.nodes * sizeof *h->V)))
        st = dg_err_set(e, DG_ERR_NOMEM, "out of memory for %lld grid nodes", (long long)h->p->grid.nodes);
    if (st == DG_OK) {
        dg_hji_stats stats;
        st = dg_hji_problem_solve(h->p, h->V, &stats, e);
    }
    dg_cfg_free(cfg);
    if (st == DG_OK) return h;
    dg_hji_flat_free(h);
    return NULL;
}

void dg_hji_flat_free(dg_hji_flat *h) {
    if (!h) return;
    dg_hji_problem_free(h->p);
    free(h->V);
    free(h);
}

int dg_hji_flat_grid(const dg_hji_flat *h, int64_t *n, double *lo, double *hi) {
    const dg_hji_grid *g = &h->p->grid;
    for (int k = 0; k < g->ndim; k++) {
        if (n) n[k] = g->n[k];
        if (lo) lo[k] = g->lo[k];
        if (hi) hi[k] = g->hi[k];
    }
    return g->ndim;
}

const double *dg_hji_flat_values(const dg_hji_flat *h) { return h->V; }

double dg_hji_flat_inputs(const dg_hji_flat *h, int *nu, int *nd) {
    if (nu) *nu = h->p->game.u.dim;
    if (nd) *nd = h->p->game.d.dim;
    return h->p->t_end;
}

const char *dg_hji_flat_name(const dg_hji_flat *h, int kind, int i) {
    switch (kind) {
    case DG_HJI_FLAT_GAME: return h->p->name;
    case DG_HJI_FLAT_U: return h->p->u_name ? h->p->u_name : "";
    case DG_HJI_FLAT_D: return h->p->d_name ? h->p->d_name : "";
    case DG_HJI_FLAT_AXIS: return i >= 0 && i < h->p->grid.ndim ? h->p->grid.name[i] : NULL;
    default: return NULL;
    }
}

dg_status dg_hji_flat_eval(const dg_hji_flat *h, int64_t B, const double *x, double *value, double *grad, double *u,
                           double *d, dg_err *e) {
    const int nx = h->p->grid.ndim, nu = h->p->game.u.dim, nd = h->p->game.d.dim;
    if (B < 1) return dg_err_set(e, DG_ERR_ARG, "states: %lld rows, expected at least 1", (long long)B);
    for (int64_t b = 0; b < B; b++)
        for (int k = 0; k < nx; k++)
            if (!isfinite(x[b * nx + k]))
                return dg_err_set(e, DG_ERR_ARG, "states: row %lld is not finite", (long long)b);
    for (int64_t b = 0; b < B; b++) {
        double g[DG_HJI_MAX_DIMS], uu[DG_HJI_MAX_INPUT], dd[DG_HJI_MAX_INPUT];
        const double v = dg_hji_interp(&h->p->grid, h->V, x + b * nx, g);
        if (value) value[b] = v;
        if (grad) memcpy(grad + b * nx, g, (size_t)nx * sizeof *g);
        if (u || d) {
            dg_hji_game_optimal(&h->p->game, x + b * nx, g, nu ? uu : NULL, nd ? dd : NULL);
            if (u && nu) memcpy(u + b * nu, uu, (size_t)nu * sizeof *uu);
            if (d && nd) memcpy(d + b * nd, dd, (size_t)nd * sizeof *dd);
        }
    }
    return DG_OK;
}
