/* Helpers the C tests share: each test is one program, so they are static and header-only.
 * Include after <cmocka.h> and the difgames headers a test uses. */
#ifndef DG_TESTS_UTIL_CHECK_H
#define DG_TESTS_UTIL_CHECK_H

#include <stdio.h>
#include <string.h>

#include "difgames/difgames.h"

/* The game of the YAML text yaml and, when o is not NULL, its training options; the test fails
 * on an error. The caller frees the game and *cfg. */
static inline dg_env *check_env(const char *yaml, dg_cfg **cfg, dg_train_opts *o) {
    dg_err e = {0};
    *cfg = dg_cfg_parse(yaml, strlen(yaml), "test.yaml", &e);
    if (!*cfg) fail_msg("%s", e.msg);
    dg_env *env = dg_env_create(*cfg, &e);
    if (!env) fail_msg("%s", e.msg);
    if (o && dg_train_opts_read(*cfg, o, &e) != DG_OK) fail_msg("%s", e.msg);
    return env;
}

/* Fails the test when a finite-difference check (rep, of the parameters p, for the case name)
 * is off by more than tol, naming the worst element, or when a parameter got no gradient. */
static inline void check_gradcheck(const char *name, const dg_params *p, const dg_gradcheck_report *rep,
                                   double tol) {
    if (rep->max_rel_err > tol)
        fail_msg("%s: rel err %.3e at %s[%lld]: analytic %.6g numeric %.6g", name, rep->max_rel_err,
                 p->info[rep->worst_param].name, (long long)rep->worst_index, rep->worst_analytic,
                 rep->worst_numeric);
    assert_int_equal(dg_params_find_zero_grads(p, NULL, 0), 0);
}

#endif
