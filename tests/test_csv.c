/* The CSV writer: a header of column names, each column's number format, quoting of odd text, a
 * table without rows, and a caller's mistake or an abort that leaves no file behind. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "difgames/fileio.h"
#include "io/csv.h"

static char g_dir[64];

static int make_dir(void **state) {
    (void)state;
    strcpy(g_dir, "/tmp/dg_csv_XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int remove_dir(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Asserts that path holds exactly want. */
static void assert_file(const char *path, const char *want) {
    unsigned char *buf = NULL;
    size_t len = 0;
    dg_err e = {0};
    assert_int_equal(dg_file_read_all(path, &buf, &len, &e), DG_OK);
    assert_string_equal((const char *)buf, want);
    assert_int_equal(len, strlen(want));
    free(buf);
}

/* Asserts that g_dir holds no file at all (neither the table nor a temporary file). */
static void assert_dir_empty(void) {
    char cmd[160];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s')\"", g_dir);
    assert_int_equal(system(cmd), 0);
}

/* Each column formats its cells the one way it declared; rows end at their last column. */
static void test_formats(void **state) {
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/t.csv", g_dir);
    dg_err e = {0};
    dg_csv w;
    assert_int_equal(dg_csv_begin(&w, path, &e), DG_OK);
    dg_csv_col(&w, "name", DG_CSV_STR);
    dg_csv_col(&w, "n", DG_CSV_INT);
    dg_csv_cols(&w, NULL, "x", 2, DG_CSV_G9);
    dg_csv_cols(&w, (const char *const[]){"rate", "ms"}, NULL, 1, DG_CSV_G6);
    dg_csv_col(&w, "ms", DG_CSV_F3);
    const float third = 1.0f / 3.0f;
    dg_csv_str(&w, "bptt");
    dg_csv_num(&w, 3840);
    dg_csv_num(&w, third);
    dg_csv_num(&w, -2.5e-7);
    dg_csv_num(&w, 1.0 / 3.0);
    dg_csv_num(&w, 12.3456);
    dg_csv_str(&w, "a,b \"q\"");
    dg_csv_num(&w, 1e15);
    dg_csv_num(&w, NAN);
    dg_csv_num(&w, INFINITY);
    dg_csv_num(&w, 1234567.0);
    dg_csv_num(&w, 0.0005);
    assert_int_equal(dg_csv_commit(&w, &e), DG_OK);
    assert_file(path, "name,n,x0,x1,rate,ms\n"
                      "bptt,3840,0.333333343,-2.5e-07,0.333333,12.346\n"
                      "\"a,b \"\"q\"\"\",1000000000000000,nan,inf,1.23457e+06,0.001\n");
    remove(path);
}

/* A table without rows is its header; names with a comma are quoted. */
static void test_header_only(void **state) {
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/h.csv", g_dir);
    dg_err e = {0};
    dg_csv w;
    assert_int_equal(dg_csv_begin(&w, path, &e), DG_OK);
    dg_csv_cols(&w, (const char *const[]){"t", "a,b"}, NULL, 2, DG_CSV_G6);
    assert_int_equal(dg_csv_commit(&w, &e), DG_OK);
    assert_file(path, "t,\"a,b\"\n");
    remove(path);
}

/* A caller's mistake is reported by commit, which then writes nothing; abort leaves nothing. */
static void test_mistakes_leave_nothing(void **state) {
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/bad.csv", g_dir);
    for (int k = 0; k < 5; k++) {
        dg_err e = {0};
        dg_csv w;
        assert_int_equal(dg_csv_begin(&w, path, &e), DG_OK);
        if (k != 4) dg_csv_col(&w, "x", DG_CSV_G9);
        if (k != 4) dg_csv_col(&w, "s", DG_CSV_STR);
        if (k == 0) dg_csv_num(&w, 1);                   /* row left unfinished */
        if (k == 1) dg_csv_str(&w, "text");              /* text in a numeric column */
        if (k == 2) { dg_csv_num(&w, 1); dg_csv_num(&w, 2); }  /* a number in a text column */
        if (k == 3) { dg_csv_num(&w, 1); dg_csv_str(&w, "a"); dg_csv_col(&w, "late", DG_CSV_G6); }
        if (k == 4) dg_csv_num(&w, 1);                   /* a row before any column */
        assert_int_equal(dg_csv_commit(&w, &e), DG_ERR_ARG);
        assert_non_null(strstr(e.msg, "bad.csv: CSV not written"));
        assert_dir_empty();
    }
    dg_err e = {0};
    dg_csv w;
    assert_int_equal(dg_csv_begin(&w, path, &e), DG_OK);
    dg_csv_col(&w, "x", DG_CSV_G9);
    dg_csv_num(&w, 1);
    dg_csv_abort(&w);
    assert_dir_empty();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_formats),
        cmocka_unit_test(test_header_only),
        cmocka_unit_test(test_mistakes_leave_nothing),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
