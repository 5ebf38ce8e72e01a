/* A sweep's settings (include/difgames/sweep.h): --set values split at the commas outside
 * brackets, so a list is one value; and the labels a reader sees on summary.png. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "difgames/difgames.h"
#include "difgames/sweep.h"
#include "util/tmpdir.h"

/* Adds each arg to a fresh sweep s; the test fails when one is refused. */
static void add_all(dg_sweep *s, const char *const *arg, int n) {
    memset(s, 0, sizeof *s);
    s->out = "/nonexistent";
    for (int i = 0; i < n; i++) {
        dg_err e = {0};
        if (dg_sweep_add(s, arg[i], &e) != DG_OK) fail_msg("'%s': %s", arg[i], e.msg);
    }
}

/* A list value in brackets is one setting; brackets nest; an unbalanced one is refused in one line
 * that says how a list is written. */
static void test_list_values(void **state) {
    (void)state;
    dg_sweep s;
    const char *args[] = {"policy.hidden=[16,16],[32,32]", "train.lr=0.1,0.2,0.3", "env.start={x: [0, 1], y: [2, 3]},[[1,2],[3]]"};
    add_all(&s, args, 3);
    assert_int_equal(s.nvalues[0], 2);
    assert_string_equal(s.value[0][0], "[16,16]");
    assert_string_equal(s.value[0][1], "[32,32]");
    assert_int_equal(s.nvalues[1], 3);
    assert_string_equal(s.value[1][2], "0.3");
    assert_int_equal(s.nvalues[2], 2);
    assert_string_equal(s.value[2][0], "{x: [0, 1], y: [2, 3]}");
    assert_string_equal(s.value[2][1], "[[1,2],[3]]");
    assert_int_equal(dg_sweep_count(&s), 12);
    const char *bad[] = {"policy.hidden=[16,16", "policy.hidden=16]", "policy.hidden=[16,16},[32]", "k=[1],,[2]"};
    for (int i = 0; i < 4; i++) {
        dg_sweep t = {0};
        dg_err e = {0};
        assert_int_equal(dg_sweep_add(&t, bad[i], &e), DG_ERR_ARG);
        if (i < 3 && !(strstr(e.msg, "unbalanced brackets") && strstr(e.msg, "KEY=[16,16],[32,32]")))
            fail_msg("'%s': %s", bad[i], e.msg);
        if (i == 3 && !strstr(e.msg, "an empty value")) fail_msg("'%s': %s", bad[i], e.msg);
        assert_null(strchr(e.msg, '\n'));
    }
}

/* Each setting is labelled by the values of the keys that vary, a key by its last part unless two
 * keys end alike; the keys of one value are the label of -1; long values and labels are cut. */
static void test_labels(void **state) {
    (void)state;
    dg_sweep s;
    char out[160];
    const char *args[] = {"train.lr=0.001,0.003,0.01", "train.batch=16", "policy.hidden=[16,16],[32,32]"};
    add_all(&s, args, 3);
    dg_sweep_seeds(&s, "0,1", NULL);
    const char *want[6] = {"lr=0.001, hidden=[16,16]", "lr=0.001, hidden=[32,32]", "lr=0.003, hidden=[16,16]",
                           "lr=0.003, hidden=[32,32]", "lr=0.01, hidden=[16,16]",  "lr=0.01, hidden=[32,32]"};
    for (int k = 0; k < 6; k++) {  /* in the runs' order: the first key slowest */
        dg_sweep_label(&s, k, NULL, out, sizeof out);
        assert_string_equal(out, want[k]);
    }
    dg_sweep_label(&s, 5, "\n", out, sizeof out);
    assert_string_equal(out, "lr=0.01\nhidden=[32,32]");
    dg_sweep_label(&s, -1, ", ", out, sizeof out);
    assert_string_equal(out, "batch=16");
    dg_sweep_label(&s, 6, ", ", out, sizeof out);  /* no such setting */
    assert_string_equal(out, "");
    dg_sweep_label(&s, 1, ", ", out, 12);          /* cut to its room */
    assert_string_equal(out, "lr=0.001...");

    const char *twins[] = {"train.lr=0.1,0.2", "pg.lr=0.5", "env.start.x=[-0.9,-0.60000000001],[0.1,0.2]"};
    add_all(&s, twins, 3);
    dg_sweep_label(&s, 0, ", ", out, sizeof out);
    /* pg.lr is fixed (under the axis) but ends alike: both in full; a value past 19 characters cut */
    assert_string_equal(out, "train.lr=0.1, x=[-0.9,-0.6000000...");
    dg_sweep_label(&s, -1, ", ", out, sizeof out);
    assert_string_equal(out, "pg.lr=0.5");
    /* the edge: 19 characters in full, 20 cut to 16 and "...", the longest value (47) too */
    const char *edge[] = {"train.lr=0.12345678901234567,0.123456789012345678,0.123456789012345678901234567890123456789012345"};
    add_all(&s, edge, 1);
    const char *want_edge[] = {"lr=0.12345678901234567", "lr=0.12345678901234...", "lr=0.12345678901234..."};
    for (int k = 0; k < 3; k++) {
        dg_sweep_label(&s, k, ", ", out, sizeof out);
        assert_string_equal(out, want_edge[k]);
    }
    const char *twins2[] = {"train.lr=0.1,0.2", "pg.lr=0.5,0.6"};
    add_all(&s, twins2, 2);
    dg_sweep_label(&s, 3, ", ", out, sizeof out);
    assert_string_equal(out, "train.lr=0.2, pg.lr=0.6");

    const char *fixed[] = {"train.epochs=5", "train.batch=8"};  /* nothing varies: every key */
    add_all(&s, fixed, 2);
    dg_sweep_label(&s, 0, ", ", out, sizeof out);
    assert_string_equal(out, "epochs=5, batch=8");
    dg_sweep_label(&s, -1, ", ", out, sizeof out);
    assert_string_equal(out, "");
    add_all(&s, NULL, 0);
    dg_sweep_label(&s, 0, ", ", out, sizeof out);
    assert_string_equal(out, "default");
}

/* on_run's reports in this process: runs trained, runs failed (the last message), pool failures */
typedef struct reports {
    int trained, failed, pool;
    char msg[DG_ERR_LEN];
} reports;

static void on_run(const dg_sweep *s, int i, int rank, dg_status st, double seconds, const dg_err *e, void *user) {
    reports *r = user;
    (void)s;
    (void)rank;
    (void)seconds;
    if (i < 0) r->pool++;
    else if (st == DG_OK) r->trained++;
    else r->failed++;
    if (st != DG_OK) snprintf(r->msg, sizeof r->msg, "%s", e->msg);
}

/* The pool: every run not done trained, one after another in this process or by forked jobs; a second
 * call skips them all; a run that fails is reported by the job that ran it, and its status ends the
 * pool. */
static void test_pool(void **state) {
    (void)state;
    char dir[64], config[128], out[128];
    assert_int_equal(check_tmpdir(dir, "dg_sweep_"), 0);
    snprintf(config, sizeof config, "%s/reach.yaml", dir);
    FILE *fp = fopen(config, "w");
    assert_non_null(fp);
    fputs("game: reach\nseed: 3\nenv: {horizon: 8}\npolicy: {hidden: [8, 8]}\ntrain: {batch: 4, epochs: 2}\n", fp);
    fclose(fp);
    for (int jobs = 1; jobs <= 2; jobs++) {
        dg_sweep s = {.config = config, .out = out};
        snprintf(out, sizeof out, "%s/jobs%d", dir, jobs);
        dg_err e = {0};
        assert_int_equal(dg_sweep_add(&s, "train.lr=0.01,0.02,0.03", &e), DG_OK);
        reports rep = {0};
        const dg_sweep_pool pool = {.jobs = jobs, .on_run = on_run, .user = &rep};
        dg_sweep_pool_result r;
        if (dg_sweep_run(&s, &pool, &r, &e) != DG_OK) fail_msg("jobs %d: %s", jobs, e.msg);
        assert_int_equal(r.trained, 3);
        assert_int_equal(r.skipped, 0);
        assert_int_equal(rep.trained, jobs == 1 ? 3 : 0);  /* forked jobs report in their own processes */
        for (int i = 0; i < 3; i++) assert_true(dg_sweep_done(&s, i));
        assert_int_equal(dg_sweep_run(&s, &pool, &r, &e), DG_OK);
        assert_int_equal(r.trained, 0);
        assert_int_equal(r.skipped, 3);
        assert_int_equal(dg_sweep_summary(&s, &e), DG_OK);
        /* a value its key refuses: the run fails, in this process or a job */
        dg_sweep bad = {.config = config, .out = out};
        snprintf(out, sizeof out, "%s/bad%d", dir, jobs);
        assert_int_equal(dg_sweep_add(&bad, "train.batch=0", &e), DG_OK);
        rep = (reports){0};
        e = (dg_err){0};
        assert_int_equal(dg_sweep_run(&bad, &pool, &r, &e), DG_ERR_CONFIG);
        assert_int_equal(r.trained, 0);
        if (jobs == 1) {
            assert_int_equal(rep.failed, 1);
            assert_non_null(strstr(rep.msg, "run 0 ("));
            assert_non_null(strstr(rep.msg, "train.batch"));
        } else {
            assert_non_null(strstr(e.msg, "job"));
        }
        assert_false(dg_sweep_done(&bad, 0));
    }
    volatile sig_atomic_t stop = 1;  /* stopped before the first run: none trained, resumable */
    dg_sweep s = {.config = config, .out = out};
    snprintf(out, sizeof out, "%s/stopped", dir);
    dg_err e = {0};
    assert_int_equal(dg_sweep_add(&s, "train.lr=0.01,0.02", &e), DG_OK);
    dg_sweep_pool_result r;
    assert_int_equal(dg_sweep_run(&s, &(dg_sweep_pool){.jobs = 2, .stop = &stop}, &r, &e), DG_ERR_INTERRUPTED);
    assert_int_equal(r.trained, 0);
    assert_int_equal(check_rmdir(dir), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_values),
        cmocka_unit_test(test_labels),
        cmocka_unit_test(test_pool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
