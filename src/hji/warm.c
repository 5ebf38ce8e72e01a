/* Warm starts (include/difgames/hji_file.h, docs/hji.md): whether a value file may start a solve of a
 * problem, and loading it as the solve's start (dg_hji_opts.warm). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/memory.h"
#include "difgames/safetensors.h"
#include "hji/internal.h"

/* The problem of the config stored in v (its metadata 'config'), loaded; NULL when it has none or it
 * does not load here (a model file's relative path, say): the fingerprint is then all there is. */
static dg_hji_problem *stored_problem(const dg_hji_value *v) {
    const char *yaml = dg_st_meta(v->f, "config");
    if (!yaml) return NULL;
    dg_err e = {0};
    dg_cfg *c = dg_cfg_parse(yaml, strlen(yaml), v->path, &e);
    dg_hji_problem *q = c ? dg_hji_problem_load(c, &e) : NULL;
    dg_cfg_free(c);
    return q;
}

/* 1 when the node arrays a and b (n nodes, either may be NULL) hold the same bits. */
static int same_nodes(const double *a, const double *b, int64_t n) {
    if (!a || !b) return a == b;
    return memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

/* What differs between the stored problem q and p for a finite horizon's warm start, node by node
 * (the fingerprint samples 16 nodes: an obstacle moved by a cell may miss them), or NULL. */
static const char *differs(const dg_hji_problem *q, const dg_hji_problem *p) {
    const int64_t n = p->grid.nodes;
    if (q->opts.mode != p->opts.mode) return "the mode";
    if (q->grid.nodes != n || q->block_nodes || p->block_nodes || q->block0 || p->block0) return NULL;
    if (!same_nodes(q->target, p->target, n)) return "the target";
    if (!same_nodes(q->obstacle, p->obstacle, n)) return "the obstacles";
    if (!same_nodes(q->stop, p->stop, n)) return "the obstacles or the target's held nodes";
    if (!same_nodes(q->initial, p->initial, n))
        return p->payoff == DG_HJI_PAYOFF_TIME ? "the value held in the obstacles, the cap t_end"
                                               : "the terminal cost";
    return NULL;
}

/* Whether v may warm-start p (hji_file.h): DG_OK and *warm_t, or DG_ERR_ARG naming the file and why. */
dg_status dg_hji_warm_check(const dg_hji_value *v, const dg_hji_problem *p, const char *config, double *warm_t,
                            dg_err *e) {
    if (!v || !p || !warm_t) return dg_err_set(e, DG_ERR_ARG, "hji: warm_check needs a value file, a problem and warm_t");
    if (!config) config = p->name;
    const double s = v->times[v->nt - 1];   /* the file's t_end: the value a warm start reads */
    if (p->stationary) {   /* the same game and payoff type: the steady value is reached from any start */
        dg_status rc = hji_value_check_upto(v, p, config, 1, e);
        if (rc) return rc;
        *warm_t = 0;
        return DG_OK;
    }
    /* a finite horizon: only the same problem's value at an earlier time-to-go continues to its value */
    dg_err why = {0};
    if (hji_value_check_upto(v, p, config, -1, &why) != DG_OK) {
        if (strstr(why.msg, "solved for another game than") == NULL) {   /* another game, constants, grid */
            *e = why;
            return why.status;
        }
        const char *part = strstr(why.msg, "(they differ in ");
        char differ[160] = "another problem";
        if (part) snprintf(differ, sizeof differ, "%.*s", (int)strcspn(part + 1, ")"), part + 1);
        return dg_err_set(e, DG_ERR_ARG, "%s: solved for another problem than %s's (%s): a finite horizon starts warm "
                          "only from its own value at an earlier t_end (from another's the result is an "
                          "approximation, not the value: Herbert et al. 2019)", v->path, config, differ);
    }
    dg_hji_problem *q = stored_problem(v);
    const int steady = q && q->stationary;
    const char *what = q && !steady ? differs(q, p) : NULL;
    dg_hji_problem_free(q);
    if (steady)
        return dg_err_set(e, DG_ERR_ARG, "%s: a stationary (steady) value, not one at a time-to-go: it cannot start "
                          "%s's finite-horizon solve (set stationary: true there, or solve it cold)", v->path, config);
    if (what)
        return dg_err_set(e, DG_ERR_ARG, "%s: solved for another problem than %s's (they differ in %s): a finite "
                          "horizon starts warm only from its own value at an earlier t_end (from another's the result "
                          "is an approximation, not the value: Herbert et al. 2019)", v->path, config, what);
    if (!(s <= p->t_end))
        return dg_err_set(e, DG_ERR_ARG, "%s: solved to t_end %g, past %s's t_end %g: a warm start goes on to a "
                          "longer horizon, never back", v->path, s, config, p->t_end);
    *warm_t = s;
    return DG_OK;
}

/* Opens, checks and reads path's value at its t_end as p's warm start (hji_file.h); DG_OK or the error. */
dg_status dg_hji_warm_load(const char *path, dg_hji_problem *p, const char *config, double **warm, dg_err *e) {
    if (!warm) return dg_err_set(e, DG_ERR_ARG, "hji: warm_load needs warm");
    *warm = NULL;
    if (!path || !p) return dg_err_set(e, DG_ERR_ARG, "hji: warm_load needs a path and a problem");
    if (p->block_nodes || p->block0 || !dg_hji_problem_v0(p))
        return dg_err_set(e, DG_ERR_ARG, "%s: a warm start solves in one process, with the whole grid's arrays", path);
    dg_hji_value v;
    memset(&v, 0, sizeof v);
    dg_status rc = dg_hji_value_open(path, &v, e);
    if (rc) return rc;
    double t0 = 0;
    rc = dg_hji_warm_check(&v, p, config, &t0, e);
    if (rc == DG_OK) {
        dg_err me = {0};
        const double bytes = (double)p->grid.nodes * sizeof(double);
        if (dg_mem_check(bytes, &me) != DG_OK)
            rc = dg_err_set(e, me.status, "%s: the warm start's %lld values: %s", path, (long long)p->grid.nodes, me.msg);
        else if (!(*warm = malloc((size_t)p->grid.nodes * sizeof **warm)))
            rc = dg_err_set(e, DG_ERR_NOMEM, "%s: out of memory for %lld values", path, (long long)p->grid.nodes);
        else
            rc = dg_hji_value_read(&v, v.nt - 1, *warm, e);
    }
    dg_hji_value_close(&v);
    if (rc) {
        free(*warm);
        *warm = NULL;
        return rc;
    }
    p->opts.warm = *warm;
    p->opts.warm_t = t0;
    return DG_OK;
}
