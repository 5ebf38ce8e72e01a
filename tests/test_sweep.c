/* A sweep's settings (include/difgames/sweep.h): --set values split at the commas outside
 * brackets, so a list is one value; and the labels a reader sees on summary.png. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "difgames/difgames.h"
#include "difgames/sweep.h"

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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_values),
        cmocka_unit_test(test_labels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
