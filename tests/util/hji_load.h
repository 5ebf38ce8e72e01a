/* A grid problem from YAML text, for the HJI tests. */
#ifndef DG_TESTS_HJI_LOAD_H
#define DG_TESTS_HJI_LOAD_H

#include <string.h>

#include "difgames/difgames.h"

/* Parses yaml (label "hji.yaml"), loads the problem and checks for unused keys; NULL with e set.
 * One thread unless the config says otherwise: ctest runs test files side by side, and threads
 * waiting at barriers on a busy machine only slow everything down. */
static inline dg_hji_problem *load(const char *yaml, dg_err *e) {
    memset(e, 0, sizeof *e);
    dg_cfg *c = dg_cfg_parse(yaml, strlen(yaml), "hji.yaml", e);
    if (!c) return NULL;
    dg_hji_problem *p = dg_hji_problem_load(c, e);
    if (p && dg_cfg_check_unused(c, e)) {
        dg_hji_problem_free(p);
        p = NULL;
    }
    if (p && p->opts.threads == 0) p->opts.threads = 1;
    dg_cfg_free(c);
    return p;
}

#endif
