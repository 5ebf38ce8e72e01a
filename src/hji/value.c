/* Value files: what `difgames hji solve` writes (safetensors: 'value' at t_end, 'value_k' at
 * earlier times, the grid, times, game and its constants in the metadata), read back and held
 * against the config they are used with. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/base.h"
#include "difgames/memory.h"
#include "difgames/safetensors.h"
#include "hji/internal.h"

/* ----------------------------------------------------------------- helpers */

/* Up to max comma-separated finite numbers of text into out (dg_parse_list; "" is none): their
 * count, or -1. */
static int parse_list(const char *text, double *out, int max) {
    if (!*text) return 0;
    double *v = NULL;
    dg_err e = {0};
    int n = dg_parse_list(text, -INFINITY, INFINITY, 0, &v, &e);
    if (n > max) n = -1;
    if (n > 0) memcpy(out, v, (size_t)n * sizeof *out);
    free(v);
    return n;
}

/* Appends the ndim numbers x to buf as "a,b,c". */
static void join(char *buf, size_t cap, const double *x, int n) {
    int o = 0;
    buf[0] = 0;
    for (int i = 0; i < n && (size_t)o < cap; i++) o += snprintf(buf + o, cap - (size_t)o, i ? ",%.17g" : "%.17g", x[i]);
}

/* The tensor name of time index i of nt: value_1 .. value_{nt-1}, then value. */
static void key_of(int i, int nt, char *key, size_t cap) {
    if (i == nt - 1) snprintf(key, cap, "value");
    else snprintf(key, cap, "value_%d", i + 1);
}

/* The grid's axis names from the metadata axes ("x,y,psi"; absent in files of earlier versions: the
 * game's, dg_hji_axis_name) into v->grid. */
static dg_status read_axes(dg_hji_value *v, const char *axes, const char *path, dg_err *e) {
    dg_hji_grid *g = &v->grid;
    for (int k = 0; k < g->ndim; k++) {
        const char *nm = axes ? NULL : dg_hji_axis_name(v->game, k);
        size_t len = nm ? strlen(nm) : 0;
        if (axes) {
            nm = axes;
            len = strcspn(axes, ",");
            axes += len + (axes[len] == ',');
        }
        if (len >= sizeof g->name[k] || (axes && len == 0))
            return dg_err_set(e, DG_ERR_FORMAT, "%s: metadata 'axes' needs %d names of 1 to %zu characters", path,
                              g->ndim, sizeof g->name[k] - 1);
        snprintf(g->name[k], sizeof g->name[k], "%.*s", (int)len, nm ? nm : "");
    }
    if (axes && *axes)
        return dg_err_set(e, DG_ERR_FORMAT, "%s: metadata 'axes' names more than the grid's %d axes", path, g->ndim);
    return DG_OK;
}

/* Checks a parsed file's metadata and rebuilds its grid into v (v->f set). */
static dg_status validate(dg_hji_value *v, const char *path, dg_err *e) {
    const dg_st_file *f = v->f;
    const char *fmt = dg_st_meta(f, "format");
    double lo[DG_HJI_MAX_DIMS], hi[DG_HJI_MAX_DIMS], n[DG_HJI_MAX_DIMS], per[DG_HJI_MAX_DIMS];
    const char *m[4] = {dg_st_meta(f, "lo"), dg_st_meta(f, "hi"), dg_st_meta(f, "n"), dg_st_meta(f, "periodic")};
    double *dst[4] = {lo, hi, n, per};
    int cnt[4], nd = -1;
    for (int k = 0; k < 4; k++) cnt[k] = m[k] ? parse_list(m[k], dst[k], DG_HJI_MAX_DIMS) : -1;
    if (cnt[2] > DG_HJI_GRID_MAX_DIMS)   /* (never written: the grid solver stops there) */
        return dg_err_set(e, DG_ERR_FORMAT, "%s: a value file of %d axes: the grid solver's files have at most %d",
                          path, cnt[2], DG_HJI_GRID_MAX_DIMS);
    if (cnt[0] > 0 && cnt[0] == cnt[1] && cnt[1] == cnt[2] && cnt[2] == cnt[3]) nd = cnt[0];
    const char *t = dg_st_meta(f, "times");
    v->nt = t ? parse_list(t, v->times, DG_HJI_MAX_TIMES) : -1;
    if (!fmt || strcmp(fmt, "difgames-hji-value") || nd < 1 || v->nt < 1)
        return dg_err_set(e, DG_ERR_FORMAT, "%s: not a value file of 'difgames hji solve' (metadata format, lo, "
                          "hi, n, periodic, times)", path);
    int ni[DG_HJI_MAX_DIMS], pi[DG_HJI_MAX_DIMS];
    for (int k = 0; k < nd; k++) {
        if (!(n[k] >= 2 && n[k] <= 1e9) || n[k] != floor(n[k]))
            return dg_err_set(e, DG_ERR_FORMAT, "%s: metadata 'n': axis %d has %g nodes", path, k, n[k]);
        ni[k] = (int)n[k];
        pi[k] = per[k] != 0;
    }
    dg_err ge = {0};
    if (dg_hji_grid_init(&v->grid, nd, lo, hi, ni, pi, &ge) != DG_OK)
        return dg_err_set(e, DG_ERR_FORMAT, "%s: %s", path, ge.msg);
    for (int i = 0; i < v->nt; i++)
        if (!(v->times[i] >= 0) || (i && !(v->times[i] > v->times[i - 1])))
            return dg_err_set(e, DG_ERR_FORMAT, "%s: metadata 'times' must be increasing and >= 0", path);
    const char *sm = dg_st_meta(f, "sampled");  /* absent in files without time-slice samples */
    double flags[DG_HJI_MAX_TIMES];
    if (sm && parse_list(sm, flags, DG_HJI_MAX_TIMES) != v->nt)
        return dg_err_set(e, DG_ERR_FORMAT, "%s: metadata 'sampled' must have one 0/1 flag per time", path);
    for (int i = 0; i < v->nt; i++) v->sampled[i] = sm && flags[i] != 0;
    if (v->sampled[v->nt - 1])
        return dg_err_set(e, DG_ERR_FORMAT, "%s: metadata 'sampled' flags t_end, which is always asked for", path);
    const char *g = dg_st_meta(f, "game");
    if (g && strlen(g) >= sizeof v->game)  /* no game has such a name: refused, never cut */
        return dg_err_set(e, DG_ERR_FORMAT, "%s: metadata 'game' is %zu characters long, more than %zu", path,
                          strlen(g), sizeof v->game - 1);
    snprintf(v->game, sizeof v->game, "%s", g ? g : "");
    const char *src = dg_st_meta(f, "source");  /* absent in files of earlier versions */
    if (src && strcmp(src, "model") && strcmp(src, "builtin"))
        return dg_err_set(e, DG_ERR_FORMAT, "%s: metadata 'source' is neither model nor builtin", path);
    snprintf(v->source, sizeof v->source, "%s", src ? src : !strcmp(v->game, "model") ? "model" : "builtin");
    dg_status st = read_axes(v, dg_st_meta(f, "axes"), path, e);
    if (st) return st;
    const char *gp = dg_st_meta(f, "game_print");  /* absent in files of earlier versions */
    v->nprint = gp ? parse_list(gp, v->print, DG_HJI_PRINT_MAX) : 0;
    if (gp && v->nprint <= 0)
        return dg_err_set(e, DG_ERR_FORMAT, "%s: metadata 'game_print' is not a list of numbers", path);
    /* the fingerprint starts with the payoff type and the discount (dg_hji_game_print) */
    const double pay = v->nprint > 0 ? v->print[0] : DG_HJI_PAYOFF_KIND;
    if (pay != DG_HJI_PAYOFF_KIND && pay != DG_HJI_PAYOFF_TIME && pay != DG_HJI_PAYOFF_COST)
        return dg_err_set(e, DG_ERR_FORMAT, "%s: metadata 'game_print' starts with payoff type %g (0 kind, 1 time, "
                          "2 cost)", path, pay);
    v->payoff = (int)pay;
    v->discount = v->nprint > 1 ? v->print[1] : 0;
    const char *pm = dg_st_meta(f, "param");
    v->nparam = pm ? parse_list(pm, v->param, DG_HJI_MAX_PARAMS) : -1;
    if (pm && v->nparam < 0) return dg_err_set(e, DG_ERR_FORMAT, "%s: metadata 'param' is not a list of numbers", path);
    /* every time's tensor is there with the grid's shape */
    for (int i = 0; i < v->nt; i++) {
        char key[32];
        key_of(i, v->nt, key, sizeof key);
        const dg_st_tensor *ts = dg_st_find(f, key);
        int ok = ts && ts->ndim == nd && (ts->dtype == DG_DTYPE_F32 || ts->dtype == DG_DTYPE_F64);
        for (int k = 0; ok && k < nd; k++) ok = ts->shape[k] == ni[k];
        if (!ok)
            return dg_err_set(e, DG_ERR_FORMAT, "%s: tensor '%s' missing, or not F32/F64 of the grid's shape", path, key);
    }
    return DG_OK;
}

/* ------------------------------------------------------------------ public */

dg_status dg_hji_value_open(const char *path, dg_hji_value *v, dg_err *e) {
    memset(v, 0, sizeof *v);
    if (!path) return dg_err_set(e, DG_ERR_ARG, "hji value: a NULL path");
    snprintf(v->path, sizeof v->path, "%s", path);
    v->f = dg_st_load(path, e);
    if (!v->f) return e ? e->status : DG_ERR_IO;
    dg_status rc = validate(v, path, e);
    if (rc) dg_hji_value_close(v);
    return rc;
}

dg_status dg_hji_value_parse(const void *buf, size_t len, const char *label, dg_hji_value *v, dg_err *e) {
    memset(v, 0, sizeof *v);
    if (!label) label = "<memory>";
    snprintf(v->path, sizeof v->path, "%s", label);
    v->f = dg_st_parse(buf, len, label, e);
    if (!v->f) return e ? e->status : DG_ERR_FORMAT;
    dg_status rc = validate(v, label, e);
    if (rc) dg_hji_value_close(v);
    return rc;
}

void dg_hji_value_close(dg_hji_value *v) {
    if (!v) return;
    dg_st_free(v->f);
    v->f = NULL;
}

dg_status dg_hji_value_read(const dg_hji_value *v, int i, double *out, dg_err *e) {
    if (!v || !v->f || !out)
        return dg_err_set(e, DG_ERR_ARG, "%s: read of a value file not open, or into NULL",
                          v && v->path[0] ? v->path : "hji value");
    if (i < 0 || i >= v->nt)
        return dg_err_set(e, DG_ERR_ARG, "%s: time index %d, but the file holds %d times (0 to %d)", v->path, i,
                          v->nt, v->nt - 1);
    char key[32];
    key_of(i, v->nt, key, sizeof key);
    const dg_st_tensor *t = dg_st_find(v->f, key);
    int64_t shape[DG_HJI_MAX_DIMS];
    const int64_t N = v->grid.nodes;
    for (int k = 0; k < v->grid.ndim; k++) shape[k] = v->grid.n[k];
    dg_err re = {0};
    if (t && t->dtype == DG_DTYPE_F32) {
        float *tmp = malloc((size_t)N * sizeof(float));
        if (!tmp) return dg_err_set(e, DG_ERR_NOMEM, "%s: out of memory for %lld values", v->path, (long long)N);
        dg_status s = dg_st_read_f32(v->f, key, v->grid.ndim, shape, tmp, &re);
        if (s == DG_OK)
            for (int64_t j = 0; j < N; j++) out[j] = tmp[j];
        free(tmp);
        if (s) return dg_err_set(e, s, "%s: %s", v->path, re.msg);
    } else if (dg_st_read(v->f, key, DG_DTYPE_F64, v->grid.ndim, shape, out, &re) != DG_OK) {
        return dg_err_set(e, re.status, "%s: %s", v->path, re.msg);
    }
    for (int64_t j = 0; j < N; j++)
        if (!isfinite(out[j]))
            return dg_err_set(e, DG_ERR_NONFINITE, "%s: tensor '%s' has a non-finite value (%g at node %lld)", v->path,
                              key, out[j], (long long)j);
    return DG_OK;
}

dg_status dg_hji_value_read_all(const dg_hji_value *v, double *out, dg_err *e) {
    dg_status s = DG_OK;
    for (int i = 0; v && out && i < v->nt && s == DG_OK; i++)
        s = dg_hji_value_read(v, i, out + (size_t)i * (size_t)v->grid.nodes, e);
    return v && out ? s : dg_hji_value_read(v, 0, out, e);
}

/* dg_hji_value_check comparing the first upto numbers of the fingerprint (all of them: -1). */
dg_status hji_value_check_upto(const dg_hji_value *v, const dg_hji_problem *p, const char *config, int upto,
                               dg_err *e) {
    const dg_hji_grid *a = &v->grid, *b = &p->grid;
    const char *src = dg_hji_problem_source(p);
    /* a model's file before the source was stored calls its game "model" (so does a model without a name):
     * any model's, which the fingerprint below tells apart */
    const int old_model = !strcmp(v->game, "model") && !strcmp(v->source, "model") && !strcmp(src, "model");
    const int other_src = strcmp(v->source, src) != 0;
    if (v->game[0] && !old_model && (strcmp(v->game, p->name) || other_src))
        return dg_err_set(e, DG_ERR_ARG, "%s: solved for game '%s'%s, but %s is '%s'%s", v->path, v->game,
                          !other_src ? "" : !strcmp(v->source, "model") ? " (a model file's)" : " (the built-in)",
                          config, p->name, !other_src ? "" : !strcmp(src, "model") ? " (a model file's)" : " (the built-in)");
    if (a->ndim != b->ndim)
        return dg_err_set(e, DG_ERR_ARG, "%s: a %d-axis grid, but %s's has %d axes", v->path, a->ndim, config, b->ndim);
    for (int k = 0; k < a->ndim; k++) {
        const int per_a = a->bc[k] == DG_HJI_BC_PERIODIC, per_b = b->bc[k] == DG_HJI_BC_PERIODIC;
        if (a->n[k] != b->n[k] || a->lo[k] != b->lo[k] || a->hi[k] != b->hi[k] || per_a != per_b) {
            /* the same axes in another order reads as a transposed grid */
            int other = -1;
            for (int j = 0; j < a->ndim && other < 0; j++)
                if (j != k && a->n[k] == b->n[j] && a->lo[k] == b->lo[j] && a->hi[k] == b->hi[j]) other = j;
            return dg_err_set(e, DG_ERR_ARG, "%s: grid axis %d is %d nodes over [%g, %g]%s, but %s's is %d nodes over "
                              "[%g, %g]%s%s", v->path, k, a->n[k], a->lo[k], a->hi[k], per_a ? " periodic" : "", config,
                              b->n[k], b->lo[k], b->hi[k], per_b ? " periodic" : "",
                              other >= 0 ? " (axes in another order: transposed)" : "");
        }
    }
    if (v->nparam >= 0)
        for (int i = 0; i < DG_HJI_MAX_PARAMS; i++) {
            const double x = i < v->nparam ? v->param[i] : 0;
            const double y = i < p->nparam ? p->param[i].value : 0;
            if (x != y)
                return dg_err_set(e, DG_ERR_ARG, "%s: solved with game constant %d = %.9g, but %s sets %.9g", v->path, i,
                                  x, config, y);
        }
    if (v->nprint > 0) {  /* the same game: dynamics, inputs, costs, target and obstacles sampled */
        static const char *const WHAT[] = {"the payoff type", "the discount", "the dynamics, inputs or running costs",
                                           "the target or terminal cost", "the obstacles"};
        double q[DG_HJI_PRINT_MAX];
        int n = dg_hji_game_print(p, q);
        if (upto >= 0 && upto < n) n = upto;
        for (int i = 0; i < n; i++) {
            const double x = i < v->nprint ? v->print[i] : NAN;
            if (!(fabs(x - q[i]) <= 1e-9 * fmax(1.0, fmax(fabs(x), fabs(q[i])))) && !(isinf(x) && x == q[i]))
                return dg_err_set(e, DG_ERR_ARG, "%s: solved for another game than %s's (they differ in %s)", v->path,
                                  config, WHAT[i < 2 ? i : 2 + (i - 2) / DG_HJI_PRINT_NODES]);
        }
    }
    return DG_OK;
}

dg_status dg_hji_value_check(const dg_hji_value *v, const dg_hji_problem *p, const char *config, dg_err *e) {
    return hji_value_check_upto(v, p, config, -1, e);
}

int dg_hji_game_print(const dg_hji_problem *p, double *out) {
    if (p->nprint > 0) {  /* taken when loaded (a rank's block no longer holds the whole grid) */
        memcpy(out, p->print, (size_t)p->nprint * sizeof *out);
        return p->nprint;
    }
    const dg_hji_grid *g = &p->grid;
    const int64_t N = g->nodes;
    int n = 0;
    out[n++] = p->payoff;
    out[n++] = p->game.payoff.on ? p->game.payoff.discount : 0;
    for (int part = 0; part < 3; part++)
        for (int k = 0; k < DG_HJI_PRINT_NODES; k++) {
            const int64_t j = (int64_t)((double)(N - 1) * k / (DG_HJI_PRINT_NODES - 1) + 0.5);
            double x[DG_HJI_MAX_DIMS], grad[DG_HJI_MAX_DIMS];
            dg_hji_grid_point(g, j, x);
            for (int a = 0; a < g->ndim; a++) grad[a] = cos(1.0 + k + 2.0 * a);  /* a fixed gradient */
            double v0, mark;
            if (part) hji_problem_node(p, j, &v0, &mark);
            out[n++] = part == 0 ? dg_hji_game_hamiltonian(&p->game, x, grad) : part == 1 ? v0 : mark;
        }
    return n;
}

dg_status hji_value_writer(const dg_hji_problem *p, int nt, const double *times, const unsigned char *sampled,
                           const double *vals, int f32, const char *config_yaml, dg_st_writer **out, dg_err *e) {
    const dg_hji_grid *g = &p->grid;
    const int64_t N = g->nodes;
    *out = NULL;
    if (nt < 1 || nt > DG_HJI_MAX_TIMES) return dg_err_set(e, DG_ERR_ARG, "hji value: 1 to %d times", DG_HJI_MAX_TIMES);
    if (g->ndim > DG_HJI_GRID_MAX_DIMS)
        return dg_err_set(e, DG_ERR_ARG, "hji value: a grid of %d axes (value files hold at most %d)", g->ndim,
                          DG_HJI_GRID_MAX_DIMS);
    int64_t shape[DG_HJI_MAX_DIMS];
    for (int k = 0; k < g->ndim; k++) shape[k] = g->n[k];
    dg_st_writer *w = dg_st_writer_create();
    float *f = f32 && vals ? malloc((size_t)N * sizeof(float)) : NULL;
    dg_status s = w && (!f32 || !vals || f) ? DG_OK : dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    char key[32], meta[DG_HJI_MAX_TIMES * 26];
    for (int i = 0; i < nt && s == DG_OK; i++) {
        key_of(i, nt, key, sizeof key);
        const dg_dtype dt = f32 ? DG_DTYPE_F32 : DG_DTYPE_F64;
        if (!vals) {   /* the layout: the bytes are written by the ranks (dg_hji_solve_file) */
            s = dg_st_writer_add_layout(w, key, dt, g->ndim, shape, e);
            continue;
        }
        const double *v = vals + (size_t)i * (size_t)N;
        if (f32) {
            for (int64_t j = 0; j < N; j++) f[j] = (float)v[j];
            s = dg_st_writer_add(w, key, dt, g->ndim, shape, f, e);
        } else {
            s = dg_st_writer_add(w, key, dt, g->ndim, shape, v, e);
        }
    }
    free(f);
    join(meta, sizeof meta, times, nt);
    if (s == DG_OK) s = dg_st_writer_meta(w, "times", meta, e);
    int nsampled = 0;
    double flags[DG_HJI_MAX_TIMES];
    for (int i = 0; i < nt; i++) nsampled += (flags[i] = sampled && sampled[i]) != 0;
    if (nsampled) join(meta, sizeof meta, flags, nt);
    if (s == DG_OK && nsampled) s = dg_st_writer_meta(w, "sampled", meta, e);
    const char *names[] = {"lo", "hi", "n", "periodic"};
    for (int m = 0; m < 4 && s == DG_OK; m++) {
        double x[DG_HJI_MAX_DIMS];
        for (int k = 0; k < g->ndim; k++)
            x[k] = m == 0 ? g->lo[k] : m == 1 ? g->hi[k] : m == 2 ? g->n[k] : g->bc[k] == DG_HJI_BC_PERIODIC;
        join(meta, sizeof meta, x, g->ndim);
        s = dg_st_writer_meta(w, names[m], meta, e);
    }
    double q[DG_HJI_MAX_PARAMS] = {0};
    for (int i = 0; i < p->nparam; i++) q[i] = p->param[i].value;
    join(meta, sizeof meta, q, DG_HJI_MAX_PARAMS);
    if (s == DG_OK) s = dg_st_writer_meta(w, "param", meta, e);
    double print[DG_HJI_PRINT_MAX];
    const int np = dg_hji_game_print(p, print);
    join(meta, sizeof meta, print, np);
    if (s == DG_OK) s = dg_st_writer_meta(w, "game_print", meta, e);
    if (s == DG_OK) s = dg_st_writer_meta(w, "format", "difgames-hji-value", e);
    if (s == DG_OK) s = dg_st_writer_meta(w, "game", p->name, e);
    if (s == DG_OK) s = dg_st_writer_meta(w, "source", dg_hji_problem_source(p), e);
    meta[0] = 0;
    for (int k = 0; k < g->ndim; k++) {
        const size_t used = strlen(meta);
        if (p->grid.name[k][0]) snprintf(meta + used, sizeof meta - used, "%s%s", k ? "," : "", p->grid.name[k]);
        else snprintf(meta + used, sizeof meta - used, "%sx%d", k ? "," : "", k);
    }
    if (s == DG_OK) s = dg_st_writer_meta(w, "axes", meta, e);
    if (s == DG_OK && config_yaml) s = dg_st_writer_meta(w, "config", config_yaml, e);
    if (s != DG_OK) {
        dg_st_writer_free(w);
        return s;
    }
    *out = w;
    return DG_OK;
}

dg_status dg_hji_value_write(const char *path, const dg_hji_problem *p, int nt, const double *times,
                             const unsigned char *sampled, const double *vals, int f32, const char *config_yaml,
                             dg_err *e) {
    if (!vals) return dg_err_set(e, DG_ERR_ARG, "hji value: no values to write");
    dg_st_writer *w;
    dg_status s = hji_value_writer(p, nt, times, sampled, vals, f32, config_yaml, &w, e);
    if (s == DG_OK) s = dg_st_writer_write(w, path, e);
    dg_st_writer_free(w);
    return s;
}

dg_status dg_hji_value_make(const dg_hji_problem *p, int nt, const double *times, const double *vals,
                            const char *label, dg_hji_value *v, dg_err *e) {
    memset(v, 0, sizeof *v);
    if (!p || !times || !vals) return dg_err_set(e, DG_ERR_ARG, "hji value: a problem, times and values needed");
    dg_st_writer *w;
    dg_status s = hji_value_writer(p, nt, times, NULL, NULL, 0, NULL, &w, e);  /* the layout: header only */
    unsigned char *head = NULL, *buf = NULL;
    size_t len = 0;
    const size_t bytes = (size_t)nt * (size_t)p->grid.nodes * sizeof(double);
    if (s == DG_OK) s = dg_st_writer_header(w, &head, &len, e);
    if (s == DG_OK && !(buf = malloc(len + bytes))) s = dg_err_set(e, DG_ERR_NOMEM, "hji value: out of memory");
    if (s == DG_OK) {  /* the tensors back to back in the order added, little-endian */
        memcpy(buf, head, len);
        const uint16_t one = 1;
        const int le = *(const unsigned char *)&one == 1;
        for (size_t i = 0; i < bytes; i++)  /* a big-endian host's doubles byte-reversed */
            buf[len + i] = ((const unsigned char *)vals)[le ? i : (i & ~(size_t)7) + 7 - (i & 7)];
        s = dg_hji_value_parse(buf, len + bytes, label, v, e);
    }
    free(head);
    free(buf);
    dg_st_writer_free(w);
    return s;
}

double dg_hji_value_memory(const dg_hji_problem *p, int nt, int f32) {
    const double N = (double)p->grid.nodes;
    /* the writer's copies of every tensor, and the float32 conversion buffer */
    return 1.02 * (nt * N * (f32 ? sizeof(float) : sizeof(double)) + (f32 ? N * sizeof(float) : 0)) + 1048576.0;
}

double dg_hji_value_file_bytes(const dg_hji_problem *p, int nt, int f32, double config_bytes) {
    /* the tensors, then the header: each tensor's entry, the metadata (times, grid, param: at
     * most 26 characters a number) and the config */
    return (double)nt * (double)p->grid.nodes * (f32 ? sizeof(float) : sizeof(double)) + nt * 128.0 +
           26.0 * (DG_HJI_MAX_TIMES + 4 * DG_HJI_GRID_MAX_DIMS + DG_HJI_MAX_PARAMS) + config_bytes + 4096;
}

double dg_hji_problem_memory(const dg_hji_problem *p, int nt, int nland, int f32) {
    const int64_t N = p->grid.nodes;
    /* the target and obstacle throughout; then the solve (its nland outputs included) with the
     * sampled values beside it, then the nt values and the file's copies */
    const double out_b = (double)nt * (double)(N + 16) * sizeof(double);
    const double sampled = nt > nland ? out_b : 0;
    return (double)N * sizeof(double) * (hji_problem_has_obstacle(p) ? 2 : 1) +
           fmax(dg_hji_solve_memory(&p->grid, &p->game, &p->opts, nland) + sampled,
                out_b + dg_hji_value_memory(p, nt, f32));
}
