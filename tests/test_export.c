/* difgames export's library side (include/difgames/export.h): the prefix, what a value export
 * refuses, and the two files written (or none) for a value and for a policy. The exported code's bits
 * against the library's are tests/export_test.sh's (it compiles them with plain cc). */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "difgames/difgames.h"
#include "util/hji_load.h"
#include "util/tmpdir.h"

static char g_dir[64];

static int make_dir(void **state) {
    (void)state;
    return check_tmpdir(g_dir, "dg_export_");
}

static int remove_dir(void **state) {
    (void)state;
    return check_rmdir(g_dir);
}

/* The whole of file path (NUL-terminated, the caller frees), or NULL. */
static char *slurp(const char *path) {
    unsigned char *buf = NULL;
    size_t len = 0;
    return dg_file_read_all(path, &buf, &len, NULL) == DG_OK ? (char *)buf : NULL;
}

static int exists(const char *dir, const char *name) {
    char path[256];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0;
}

static void test_prefix(void **state) {
    (void)state;
    assert_true(dg_export_prefix_ok("air3d"));
    assert_true(dg_export_prefix_ok("_x9"));
    assert_true(dg_export_prefix_ok("abcdefghijklmnopqrstuvwxyzABCDEF"));   /* 32 */
    assert_false(dg_export_prefix_ok("abcdefghijklmnopqrstuvwxyzABCDEFG")); /* 33 */
    assert_false(dg_export_prefix_ok(""));
    assert_false(dg_export_prefix_ok(NULL));
    assert_false(dg_export_prefix_ok("9x"));
    assert_false(dg_export_prefix_ok("a-b"));
    assert_false(dg_export_prefix_ok("a b"));
}

/* pursuit2d solved on a small grid into a value file, exported: both files, the functions, no
 * difgames include; then a game with a quadratic input refused, nothing written. */
static void test_value(void **state) {
    (void)state;
    dg_err e;
    dg_hji_problem *p = load("game: pursuit2d\nt_end: 0.1\naccuracy: low\ngrid:\n  min: [-1, -1]\n  max: [1, 1]\n"
                             "  n: [11, 11]\n", &e);
    assert_non_null(p);
    assert_null(dg_export_value_refusal(p));
    double *v = malloc((size_t)p->grid.nodes * sizeof *v);
    assert_int_equal(dg_hji_problem_solve(p, v, NULL, &e), DG_OK);
    char path[128], out[128];
    snprintf(path, sizeof path, "%s/v.safetensors", g_dir);
    snprintf(out, sizeof out, "%s/value", g_dir);
    assert_int_equal(dg_hji_value_write(path, p, 1, &p->t_end, NULL, v, 0, NULL, &e), DG_OK);
    dg_export_files f;
    assert_int_equal(dg_export_value(p, "hji.yaml", path, out, "pur", &(dg_export_value_opts){.margin = 0.5}, &f, &e), DG_OK);
    char *c = slurp(f.c), *h = slurp(f.h);
    assert_non_null(c);
    assert_non_null(h);
    assert_true(f.c_bytes == (long long)strlen(c) && f.h_bytes == (long long)strlen(h));
    for (int i = 0; i < 4; i++) {
        const char *fn[4] = {"double pur_value(", "double pur_grad(", "double pur_control(", "double pur_filter("};
        assert_non_null(strstr(c, fn[i]));
        assert_non_null(strstr(h, fn[i]));
    }
    assert_non_null(strstr(h, "#define pur_NX 2"));
    assert_null(strstr(c, "difgames/"));
    assert_null(strstr(h, "difgames/"));
    free(c), free(h);
    /* a bad prefix and a margin that is not a number: refused before anything is written */
    assert_int_equal(dg_export_value(p, "hji.yaml", path, out, "9x", NULL, NULL, &e), DG_ERR_ARG);
    assert_int_equal(dg_export_value(p, "hji.yaml", path, out, "nan", &(dg_export_value_opts){.margin = NAN}, NULL, &e), DG_ERR_ARG);
    /* the qp filter on pursuit2d's ball control (the library's closed form is a box's), and a gamma
       that is not a number: refused, nothing written */
    assert_non_null(dg_export_filter_refusal(p, DG_SAFETY_QP));
    assert_null(dg_export_filter_refusal(p, DG_SAFETY_SWITCH));
    assert_int_equal(dg_export_value(p, "hji.yaml", path, out, "qp", &(dg_export_value_opts){.mode = DG_SAFETY_QP, .gamma = 1},
                                     NULL, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "box control"));
    assert_int_equal(dg_export_value(p, "hji.yaml", path, out, "g", &(dg_export_value_opts){.gamma = NAN}, NULL, &e),
                     DG_ERR_ARG);
    assert_false(exists(out, "9x.c") || exists(out, "nan.c") || exists(out, "qp.c") || exists(out, "g.c"));
    free(v);
    dg_hji_problem_free(p);
    p = load("game: linear\npayoff: cost\nt_end: 0.1\ncontrol:\n  set: quadratic\n", &e);
    assert_non_null(p);
    assert_non_null(dg_export_value_refusal(p));
    assert_int_equal(dg_export_value(p, "hji.yaml", path, out, "lq", NULL, NULL, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "boxes and balls"));
    assert_false(exists(out, "lq.c") || exists(out, "lq.h"));
    dg_hji_problem_free(p);
}

/* A small two-player policy exported: both players' functions; an open-loop plan refused. */
static void test_policy(void **state) {
    (void)state;
    dg_err e = {0};
    const dg_policy_shape s = {.nplayers = 2, .obs_dim = 3, .act_dim = 2, .obs2_dim = 5, .act2_dim = 1, .horizon = 4};
    dg_policy pol;
    dg_params *p = NULL;
    assert_int_equal(dg_policy_create_shape(&s, (const int[]){7, 33}, 2, &pol, &p, &e), DG_OK);
    dg_rng r;
    dg_rng_seed(&r, 1);
    dg_policy_reset_params(&pol, p, &r);
    char out[128];
    snprintf(out, sizeof out, "%s/policy", g_dir);
    dg_export_files f;
    assert_int_equal(dg_export_policy(&pol, p, "test", out, "pol", &f, &e), DG_OK);
    char *c = slurp(f.c), *h = slurp(f.h);
    assert_non_null(c);
    assert_non_null(h);
    assert_non_null(strstr(h, "void pol_policy(const float *obs, float *act);"));
    assert_non_null(strstr(h, "void pol_policy2(const float *obs, float *act);"));
    assert_non_null(strstr(h, "#define pol_OBS2 5"));
    assert_non_null(strstr(c, "static const float W1_2["));
    assert_null(strstr(c, "difgames/"));
    free(c), free(h);
    dg_params_free(p);
    assert_int_equal(dg_policy_create_plan_shape(&s, &pol, &p, &e), DG_OK);
    assert_int_equal(dg_export_policy(&pol, p, "test", out, "plan", NULL, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "open-loop"));
    assert_false(exists(out, "plan.c"));
    dg_params_free(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefix),
        cmocka_unit_test(test_value),
        cmocka_unit_test(test_policy),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
