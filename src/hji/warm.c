/* Warm starts (include/difgames/hji_file.h, docs/hji.md): whether a value file may start a solve of a
 * problem, and loading it as the solve's start (dg_hji_opts.warm). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/memory.h"
#include "difgames/safetensors.h"
#include "hji/internal.h"

/* 1 when the config stored in v says stationary: true (a steady value, not one at a time-to-go). */
static int file_stationary(const dg_hji_value *v) {
    const char *yaml = dg_st_meta(v->f, "config");
    if (!yaml) return 0;
    dg_err e = {0};
    dg_cfg *c = dg_cfg_parse(yaml, strlen(yaml), v->path, &e);
    int on = 0;
    if (c && dg_cfg_has(c, "stationary") && dg_cfg_get(c, "stationary", DG_CFG_BOOL, &on, &e) != DG_OK) on = 0;
    dg_cfg_free(c);
    return on;
}

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
    if (file_stationary(v))
        return dg_err_set(e, DG_ERR_ARG, "%s: a stationary (steady) value, not one at a time-to-go: it cannot start "
                          "%s's finite-horizon solve (set stationary: true there, or solve it cold)", v->path, config);
    if (!(s <= p->t_end))
        return dg_err_set(e, DG_ERR_ARG, "%s: solved to t_end %g, past %s's t_end %g: a warm start goes on to a "
                          "longer horizon, never back", v->path, s, config, p->t_end);
    *warm_t = s;
    return DG_OK;
}

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
