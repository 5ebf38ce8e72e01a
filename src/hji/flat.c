/* A value behind one handle (include/difgames/hji_flat.h): a grid solved here, a value file of hji
 * solve, or (src/hji/learn/flat.c) a network of hji learn, read at arrays of states and used as a
 * safety filter. What the Python package's dg.hji calls, so that no caller outside C mirrors the
 * problem's struct. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/safetensors.h"
#include "flat_internal.h"

dg_hji_flat *dg_hji_flat_begin(const char *path, const char *stored_yaml, const char *label,
                               const char *const *keys, const char *const *values, int n, int points, dg_err *e) {
    dg_hji_flat *h = calloc(1, sizeof *h);
    if (!h) {
        dg_err_set(e, DG_ERR_NOMEM, "out of memory");
        return NULL;
    }
    h->cfg = path ? dg_cfg_load(path, e) : dg_cfg_parse(stored_yaml, strlen(stored_yaml), label, e);
    dg_status st = h->cfg ? DG_OK : (e->status ? e->status : DG_ERR_CONFIG);
    for (int i = 0; i < n && st == DG_OK; i++) st = dg_cfg_set(h->cfg, keys[i], values[i], e);
    if (st == DG_OK && !(h->p = points ? dg_hji_problem_load_points(h->cfg, e) : dg_hji_problem_load(h->cfg, e)))
        st = e->status ? e->status : DG_ERR_CONFIG;
    /* hji learn's keys: a grid's reads do not use them (the command's hji solve checks them with it) */
    if (st == DG_OK) dg_cfg_mark_used(h->cfg, "learn");
    if (st == DG_OK) st = dg_cfg_check_unused(h->cfg, e);
    if (st == DG_OK) return h;
    dg_hji_flat_free(h);
    return NULL;
}

dg_hji_flat *dg_hji_flat_solve(const char *path, const char *const *keys, const char *const *values, int n,
                               dg_err *e) {
    dg_err local = {0};
    if (!e) e = &local;
    if (!path) {
        dg_err_set(e, DG_ERR_ARG, "dg_hji_flat_solve: no config path");
        return NULL;
    }
    dg_hji_flat *h = dg_hji_flat_begin(path, NULL, NULL, keys, values, n, 0, e);
    if (!h) return NULL;
    dg_status st = DG_OK;
    if (!(h->V = malloc((size_t)h->p->grid.nodes * sizeof *h->V)))
        st = dg_err_set(e, DG_ERR_NOMEM, "out of memory for %lld grid nodes", (long long)h->p->grid.nodes);
    if (st == DG_OK) {
        dg_hji_stats stats;
        st = dg_hji_problem_solve(h->p, h->V, &stats, e);
    }
    if (st != DG_OK) {
        dg_hji_flat_free(h);
        return NULL;
    }
    h->t = h->p->t_end;
    h->one = (dg_hji_slices){.nt = 1, .t = &h->t, .v = h->V};
    h->src = dg_hji_source_slices(&h->p->grid, &h->one);
    h->kind = DG_HJI_FLAT_SOLVED;
    return h;
}

dg_hji_flat *dg_hji_flat_file(const char *path, const char *config, const char *const *keys,
                              const char *const *values, int n, dg_err *e) {
    dg_err local = {0};
    if (!e) e = &local;
    if (!path) {
        dg_err_set(e, DG_ERR_ARG, "dg_hji_flat_file: no value file");
        return NULL;
    }
    char label[600];
    dg_hji_flat *h = NULL;
    if (config) {
        h = dg_hji_flat_begin(config, NULL, NULL, keys, values, n, 0, e);
    } else {  /* the problem it was solved for, from the config the file stores */
        dg_st_file *f = dg_st_load(path, e);
        if (!f) return NULL;
        const char *yaml = dg_st_meta(f, "config"), *fmt = dg_st_meta(f, "format");
        if (!fmt || strcmp(fmt, "difgames-hji-value") != 0 || !yaml || !*yaml)
            dg_err_set(e, DG_ERR_FORMAT, "%.400s: not a value file of difgames hji solve with its config (format "
                       "difgames-hji-value, metadata 'config'), nor a network of hji learn", path);
        else {
            snprintf(label, sizeof label, "%.500s (stored config)", path);
            h = dg_hji_flat_begin(NULL, yaml, label, keys, values, n, 0, e);
        }
        dg_st_free(f);
    }
    if (!h) return NULL;
    if (h->p->grid.ndim > DG_HJI_GRID_MAX_DIMS ||
        dg_hji_value_load(path, h->p, config ? config : label, &h->vs, NULL, e) != DG_OK) {
        if (h->p->grid.ndim > DG_HJI_GRID_MAX_DIMS)
            dg_err_set(e, DG_ERR_ARG, "%.400s: %s has %d state dimensions: no grid value holds it (a network of hji "
                       "learn does)", path, h->p->name, h->p->grid.ndim);
        dg_hji_flat_free(h);
        return NULL;
    }
    h->src = dg_hji_source_slices(&h->p->grid, &h->vs.slices);
    h->kind = DG_HJI_FLAT_FILE;
    return h;
}

void dg_hji_flat_free(dg_hji_flat *h) {
    if (!h) return;
    if (h->net && h->net_free) h->net_free(h->net);
    dg_hji_value_slices_free(&h->vs);
    dg_hji_problem_free(h->p);
    dg_cfg_free(h->cfg);
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

int dg_hji_flat_source(const dg_hji_flat *h) { return h->kind; }

const double *dg_hji_flat_values(dg_hji_flat *h, dg_err *e) {
    dg_err local = {0};
    if (!e) e = &local;
    if (h->kind == DG_HJI_FLAT_FILE) return h->vs.slices.v + (size_t)(h->vs.slices.nt - 1) * h->p->grid.nodes;
    if (h->V) return h->V;
    if (h->p->grid.ndim > DG_HJI_GRID_MAX_DIMS) {
        dg_err_set(e, DG_ERR_ARG, "%s: %d state dimensions: no grid to tabulate the network on", h->p->name,
                   h->p->grid.ndim);
        return NULL;
    }
    if (!(h->V = malloc((size_t)h->p->grid.nodes * sizeof *h->V))) {
        dg_err_set(e, DG_ERR_NOMEM, "out of memory for %lld grid nodes", (long long)h->p->grid.nodes);
        return NULL;
    }
    if (dg_hji_source_tabulate(&h->src, &h->p->grid, h->src.horizon, h->V, e) != DG_OK) {
        free(h->V);
        h->V = NULL;
    }
    return h->V;
}

double dg_hji_flat_inputs(const dg_hji_flat *h, int *nu, int *nd) {
    if (nu) *nu = h->p->game.u.dim;
    if (nd) *nd = h->p->game.d.dim;
    return h->src.horizon;
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

/* V (B) and grad V (B, nx) at the B states x at the value's horizon, in one read of its source. */
static dg_status read_batch(const dg_hji_flat *h, int64_t B, const double *x, double *V, double *grad, dg_err *e) {
    const int nx = h->p->grid.ndim;
    if (B < 1) return dg_err_set(e, DG_ERR_ARG, "states: %lld rows, expected at least 1", (long long)B);
    for (int64_t b = 0; b < B; b++)
        for (int k = 0; k < nx; k++)
            if (!isfinite(x[b * nx + k]))
                return dg_err_set(e, DG_ERR_ARG, "states: row %lld is not finite", (long long)b);
    double *tau = malloc((size_t)B * sizeof *tau);
    if (!tau) return dg_err_set(e, DG_ERR_NOMEM, "out of memory for %lld states", (long long)B);
    for (int64_t b = 0; b < B; b++) tau[b] = h->src.horizon;
    const dg_status st = dg_hji_source_eval(&h->src, B, x, tau, V, grad, e);
    free(tau);
    return st;
}

dg_status dg_hji_flat_eval(const dg_hji_flat *h, int64_t B, const double *x, double *value, double *grad, double *u,
                           double *d, dg_err *e) {
    dg_err local = {0};
    if (!e) e = &local;
    const int nx = h->p->grid.ndim, nu = h->p->game.u.dim, nd = h->p->game.d.dim;
    double *g = grad;
    if (!g && (u || d) && !(g = malloc((size_t)(B > 0 ? B : 1) * nx * sizeof *g)))
        return dg_err_set(e, DG_ERR_NOMEM, "out of memory for %lld states", (long long)B);
    dg_status st = read_batch(h, B, x, value, g, e);
    for (int64_t b = 0; st == DG_OK && (u || d) && b < B; b++) {
        double uu[DG_HJI_MAX_INPUT], dd[DG_HJI_MAX_INPUT];
        dg_hji_game_optimal(&h->p->game, x + b * nx, g + b * nx, nu ? uu : NULL, nd ? dd : NULL);
        if (u && nu) memcpy(u + b * nu, uu, (size_t)nu * sizeof *uu);
        if (d && nd) memcpy(d + b * nd, dd, (size_t)nd * sizeof *dd);
    }
    if (g != grad) free(g);
    return st;
}

int dg_hji_flat_safe_player(const dg_hji_flat *h) {
    const dg_hji_game *gm = &h->p->game;
    if (!gm->dyn || dg_hji_game_degree(gm)) return -1;
    for (int k = 0; k < 2; k++) {
        const dg_hji_input *in = k ? &gm->d : &gm->u;
        if (in->dim >= 1 && in->role == DG_HJI_ROLE_MAX) return in->set == DG_HJI_SET_BOX ? k : -1;
    }
    return -1;
}

dg_status dg_hji_flat_filter(const dg_hji_flat *h, int mode, double margin, double gamma, int64_t B, const double *x,
                             const double *nominal, double *out, int32_t *changed, dg_err *e) {
    dg_err local = {0};
    if (!e) e = &local;
    const dg_hji_game *gm = &h->p->game;
    const int who = dg_hji_flat_safe_player(h);
    if (mode != DG_HJI_FILTER_SWITCH && mode != DG_HJI_FILTER_QP)
        return dg_err_set(e, DG_ERR_ARG, "filter: mode %d: expected switch (0) or qp (1)", mode);
    if (!(margin >= 0 && isfinite(margin)) || !(gamma >= 0 && isfinite(gamma)))
        return dg_err_set(e, DG_ERR_ARG, "filter: margin and gamma must be finite and >= 0 (got %g, %g)", margin,
                          gamma);
    if (who < 0)
        return dg_err_set(e, DG_ERR_ARG, "filter: %s has no player to filter for (a control-affine game of kind "
                          "whose maximiser, the player that keeps V high, has a box input)", h->p->name);
    const dg_hji_input *in = who ? &gm->d : &gm->u;
    const int nx = h->p->grid.ndim, A = in->dim;
    for (int64_t b = 0; b < B; b++)
        for (int j = 0; j < A; j++)
            if (!isfinite(nominal[b * A + j]))
                return dg_err_set(e, DG_ERR_ARG, "nominal: row %lld is not finite", (long long)b);
    double *V = malloc((size_t)(B > 0 ? B : 1) * sizeof *V), *g = malloc((size_t)(B > 0 ? B : 1) * nx * sizeof *g);
    dg_status st = V && g ? DG_OK : dg_err_set(e, DG_ERR_NOMEM, "out of memory for %lld states", (long long)B);
    if (st == DG_OK) st = read_batch(h, B, x, V, g, e);
    for (int64_t b = 0; st == DG_OK && b < B; b++) {
        double a[DG_HJI_MAX_INPUT], o[DG_HJI_MAX_INPUT];
        for (int j = 0; j < A; j++) {  /* the input's units <-> its box's [-1, 1] */
            const double c = 0.5 * (in->hi[j] + in->lo[j]), hw = 0.5 * (in->hi[j] - in->lo[j]);
            a[j] = hw > 0 ? (nominal[b * A + j] - c) / hw : 0;
        }
        const int ch = dg_hji_filter_row(gm, who, mode, margin, gamma, x + b * nx, V[b], g + b * nx, a, o, NULL, NULL);
        for (int j = 0; j < A; j++) {
            const double c = 0.5 * (in->hi[j] + in->lo[j]), hw = 0.5 * (in->hi[j] - in->lo[j]);
            out[b * A + j] = ch ? c + hw * o[j] : nominal[b * A + j];
        }
        if (changed) changed[b] = ch;
    }
    free(V), free(g);
    return st;
}
