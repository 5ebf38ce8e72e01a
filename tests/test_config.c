/* Tests for the YAML config reader: the reach example, every error class
 * (file label + line + key in the message), overrides, the YAML round trip,
 * deep nesting and garbage input. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include <cmocka.h>

#include "difgames/config.h"
#include "difgames/keys.h"

static const char REACH[] =
    "game: reach\n"                    /* 1 */
    "seed: 0\n"                        /* 2 */
    "env:\n"                           /* 3 */
    "  dt: 0.05\n"                     /* 4 */
    "  damping: 0.98\n"                /* 5 */
    "  obstacles:\n"                   /* 6 */
    "    - [0.0, 0.0, 0.25]\n"         /* 7 */
    "policy:\n"                        /* 8 */
    "  hidden: [64, 64]\n"             /* 9 */
    "train:\n"                         /* 10 */
    "  epochs: 300\n"                  /* 11 */
    "  lr: 1.0e-3\n"                   /* 12 */
    "  snapshots: [5, 20, 50]\n";      /* 13 */

/* Parses text (label "t.yaml"); fails the test if it does not parse. */
static dg_cfg *parse_ok(const char *text) {
    dg_err e = {0};
    dg_cfg *c = dg_cfg_parse(text, strlen(text), "t.yaml", &e);
    if (!c) fail_msg("parse failed: %s", e.msg);
    return c;
}

/* Parses text expecting failure; returns the message in e. */
static void parse_fails(const char *text, size_t len, dg_err *e) {
    memset(e, 0, sizeof *e);
    dg_cfg *c = dg_cfg_parse(text, len, "t.yaml", e);
    if (c) {
        dg_cfg_free(c);
        fail_msg("parse of \"%.60s\" should have failed", text);
    }
    assert_int_equal(e->status, DG_ERR_CONFIG);
}

/* Asserts that msg contains every one of the NULL-terminated strings. */
static void has_all(const char *msg, ...) {
    va_list ap;
    va_start(ap, msg);
    for (const char *s = va_arg(ap, const char *); s; s = va_arg(ap, const char *))
        if (!strstr(msg, s)) {
            va_end(ap);
            fail_msg("message \"%s\" lacks \"%s\"", msg, s);
        }
    va_end(ap);
}

/* A text the parser must refuse (len 0: strlen), with the words its message must hold. */
typedef struct bad_text {
    const char *text;
    size_t len;
    const char *want[4];
} bad_text;

static void check_bad_texts(const bad_text *b, size_t n) {
    for (size_t k = 0; k < n; k++) {
        dg_err e;
        parse_fails(b[k].text, b[k].len ? b[k].len : strlen(b[k].text), &e);
        for (int j = 0; j < 4 && b[k].want[j]; j++)
            if (!strstr(e.msg, b[k].want[j])) fail_msg("message \"%s\" lacks \"%s\"", e.msg, b[k].want[j]);
    }
}

/* Reads key of c as a string and checks that it is want. */
static void str_is(dg_cfg *c, const char *key, const char *want) {
    dg_err e = {0};
    const char *s = NULL;
    assert_int_equal(dg_cfg_get(c, key, DG_CFG_STR, &s, &e), DG_OK);
    assert_string_equal(s, want);
}

/* Reads a float key between lo and hi (lo_c, hi_c: 1 when that end is allowed), default def, as a
 * declared key (difgames/keys.h) is read. */
static dg_status read_f32(dg_cfg *c, const char *path, float def, double lo, double hi, int lo_c, int hi_c,
                          float *out, dg_err *e) {
    const dg_key k = {.name = path, .type = DG_KEY_F32, .def = def, .lo = lo, .hi = hi, .lo_open = !lo_c,
                      .hi_open = !hi_c};
    return dg_key_read(c, &k, out, e);
}

/* The same for an int key in [lo, hi]. */
static dg_status read_int(dg_cfg *c, const char *path, int def, int lo, int hi, int *out, dg_err *e) {
    const dg_key k = {.name = path, .type = DG_KEY_INT, .def = def, .lo = lo, .hi = hi};
    return dg_key_read(c, &k, out, e);
}

/* Reads everything the reach program knows; returns the first error. */
static dg_status read_reach(dg_cfg *c, dg_err *e) {
    const char *game;
    int seed = 1, epochs, hidden[8], nh = 0, snaps[16], ns = 0, nobst = 0;
    float dt, damping, lr = 1e-2f, obst[4 * 3];
    dg_status st;
    if ((st = dg_cfg_require(c, "game", e)) || (st = dg_cfg_get(c, "game", DG_CFG_STR, &game, e)) ||
        (st = dg_cfg_get(c, "seed", DG_CFG_INT, &seed, e)) ||
        (st = read_f32(c, "env.dt", 0.1f, 0, 1, 0, 1, &dt, e)) ||
        (st = read_f32(c, "env.damping", 1, 0, 1, 0, 1, &damping, e)) ||
        (st = dg_cfg_get_list(c, "env.obstacles", DG_CFG_F32, 3, obst, 0, 4, &nobst, e)) ||
        (st = dg_cfg_get_list(c, "policy.hidden", DG_CFG_INT, 0, hidden, 1, 8, &nh, e)) ||
        (st = read_int(c, "train.epochs", 10, 1, 1000000, &epochs, e)) ||
        (st = dg_cfg_get(c, "train.lr", DG_CFG_F32, &lr, e)) ||
        (st = dg_cfg_get_list(c, "train.snapshots", DG_CFG_INT, 0, snaps, 0, 16, &ns, e)))
        return st;
    return DG_OK;
}

/* ---------------------------------------------------------------- tests */

static void test_example_reads_back(void **state) {
    (void)state;
    dg_err e = {0};
    dg_cfg *c = parse_ok(REACH);
    const char *game = NULL;
    int seed = -1, epochs = 0, hidden[8] = {0}, snaps[8] = {0}, ns = 0, nobst = 0;
    float dt = 0, damping = 0, lr = 0, obst[4 * 3] = {0};
    assert_int_equal(dg_cfg_get(c, "game", DG_CFG_STR, &game, &e), DG_OK);
    assert_string_equal(game, "reach");
    assert_int_equal(dg_cfg_get(c, "seed", DG_CFG_INT, &seed, &e), DG_OK);
    assert_int_equal(seed, 0);
    assert_int_equal(dg_cfg_get(c, "env.dt", DG_CFG_F32, &dt, &e), DG_OK);
    assert_true(dt == 0.05f);
    assert_int_equal(read_f32(c, "env.damping", 1, 0, 1, 0, 1, &damping, &e), DG_OK);
    assert_true(damping == 0.98f);
    assert_int_equal(dg_cfg_get_list(c, "env.obstacles", DG_CFG_F32, 3, obst, 0, 4, &nobst, &e), DG_OK);
    assert_int_equal(nobst, 1);
    assert_true(obst[0] == 0.0f && obst[1] == 0.0f && obst[2] == 0.25f);
    assert_int_equal(dg_cfg_get_list(c, "policy.hidden", DG_CFG_INT, 0, hidden, 2, 2, NULL, &e), DG_OK);
    assert_int_equal(hidden[0], 64);
    assert_int_equal(hidden[1], 64);
    assert_int_equal(dg_cfg_require(c, "train.epochs", &e), DG_OK);
    assert_int_equal(dg_cfg_get(c, "train.epochs", DG_CFG_INT, &epochs, &e), DG_OK);
    assert_int_equal(epochs, 300);
    assert_int_equal(dg_cfg_get(c, "train.lr", DG_CFG_F32, &lr, &e), DG_OK);
    assert_true(lr == 1.0e-3f);
    assert_int_equal(dg_cfg_get_list(c, "train.snapshots", DG_CFG_INT, 0, snaps, 0, 8, &ns, &e), DG_OK);
    assert_int_equal(ns, 3);
    assert_int_equal(snaps[0], 5);
    assert_int_equal(snaps[2], 50);
    assert_int_equal(dg_cfg_check_unused(c, &e), DG_OK);

    /* structure queries */
    assert_int_equal(dg_cfg_len(c, ""), 5);
    assert_string_equal(dg_cfg_key(c, "", 2), "env");
    assert_string_equal(dg_cfg_key(c, "env", 1), "damping");
    assert_null(dg_cfg_key(c, "env", 3));
    assert_null(dg_cfg_key(c, "game", 0));
    assert_int_equal(dg_cfg_len(c, "env.obstacles"), 1);
    assert_int_equal(dg_cfg_len(c, "env.obstacles[0]"), 3);
    assert_int_equal(dg_cfg_len(c, "game"), -1);
    assert_int_equal(dg_cfg_len(c, "nope"), -1);
    assert_true(dg_cfg_has(c, "train.lr"));
    assert_false(dg_cfg_has(c, "train.momentum"));
    int col = 0;
    assert_int_equal(dg_cfg_line(c, "train.lr", &col), 12);
    assert_int_equal(col, 3);
    assert_int_equal(dg_cfg_line(c, "env.obstacles[0][2]", NULL), 7);
    /* index written as .i works too */
    float r = 0;
    assert_int_equal(dg_cfg_get(c, "env.obstacles.0.2", DG_CFG_F32, &r, &e), DG_OK);
    assert_true(r == 0.25f);
    assert_string_equal(dg_cfg_path(c), "t.yaml");
    dg_cfg_free(c);
}

static void test_load_file(void **state) {
    (void)state;
    char path[] = "/tmp/dg_test_config_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    assert_non_null(fp);
    fputs(REACH, fp);
    fputs("  momentun: 0.9\n", fp);  /* line 14: a typo nobody reads */
    fclose(fp);

    dg_err e = {0};
    dg_cfg *c = dg_cfg_load(path, &e);
    assert_non_null(c);
    assert_string_equal(dg_cfg_path(c), path);
    assert_int_equal(read_reach(c, &e), DG_OK);
    float mom = 0.5f;
    assert_int_equal(dg_cfg_get(c, "train.momentum", DG_CFG_F32, &mom, &e), DG_OK);
    assert_true(mom == 0.5f);
    assert_int_equal(dg_cfg_check_unused(c, &e), DG_ERR_CONFIG);
    has_all(e.msg, path, ":14:", "unknown key 'train.momentun'", "did you mean 'train.momentum'", NULL);
    dg_cfg_free(c);
    unlink(path);

    memset(&e, 0, sizeof e);
    assert_null(dg_cfg_load("/nonexistent/dir/x.yaml", &e));
    assert_int_equal(e.status, DG_ERR_IO);
    has_all(e.msg, "/nonexistent/dir/x.yaml", NULL);
    dg_cfg_free(NULL);
}

static void test_defaults_and_required(void **state) {
    (void)state;
    dg_err e = {0};
    dg_cfg *c = parse_ok(REACH);
    /* a missing key leaves the caller's default alone */
    float f = 0.9f;
    int i = 42, b = 1;
    const char *s = "runs";
    assert_int_equal(dg_cfg_get(c, "train.momentum", DG_CFG_F32, &f, &e), DG_OK);
    assert_true(f == 0.9f);
    assert_int_equal(dg_cfg_get(c, "nothing.here.at.all", DG_CFG_INT, &i, &e), DG_OK);
    assert_int_equal(i, 42);
    assert_int_equal(dg_cfg_get(c, "render", DG_CFG_BOOL, &b, &e), DG_OK);
    assert_int_equal(b, 1);
    assert_int_equal(dg_cfg_get(c, "out_dir", DG_CFG_STR, &s, &e), DG_OK);
    assert_string_equal(s, "runs");
    i = 3;
    assert_int_equal(dg_cfg_get(c, "policy.hidden[5]", DG_CFG_INT, &i, &e), DG_OK);  /* past the end: missing */
    assert_int_equal(i, 3);

    /* and so does a missing list */
    float arr[3] = {1, 2, 3};
    int n = 3;
    assert_int_equal(dg_cfg_get_list(c, "env.goal", DG_CFG_F32, 0, arr, 0, 3, &n, &e), DG_OK);
    assert_int_equal(n, 3);
    assert_true(arr[2] == 3);

    /* required and missing: names the key and the line of the enclosing map */
    assert_int_equal(dg_cfg_require(c, "train.momentum", &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:10:", "missing required key 'train.momentum'", NULL);
    assert_int_equal(dg_cfg_require(c, "batch", &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml", "missing required key 'batch'", NULL);
    assert_int_equal(dg_cfg_require(c, "env.walls", &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:3:", "'env.walls'", NULL);
    assert_int_equal(dg_cfg_require(c, "policy.act", &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:8:", "'policy.act'", NULL);
    dg_cfg_free(c);

    /* an empty section reads as an empty map */
    c = parse_ok("env:\n# dt: 0.1\ntrain: {}\n");
    f = 0.25f;
    i = 9;
    assert_int_equal(dg_cfg_get(c, "env.dt", DG_CFG_F32, &f, &e), DG_OK);
    assert_true(f == 0.25f);
    assert_int_equal(dg_cfg_get(c, "train.epochs", DG_CFG_INT, &i, &e), DG_OK);
    assert_int_equal(i, 9);
    assert_int_equal(dg_cfg_check_unused(c, &e), DG_OK);
    dg_cfg_free(c);
}

static void test_wrong_types(void **state) {
    (void)state;
    dg_err e = {0};
    dg_cfg *c = parse_ok("train:\n"            /* 1 */
                         "  epochs: abc\n"     /* 2 */
                         "  steps: 2.5\n"      /* 3 */
                         "  batch: 1e3\n"      /* 4 */
                         "  n: \"5\"\n"        /* 5 */
                         "  lr:\n"             /* 6 */
                         "env:\n"              /* 7 */
                         "  dt: [1]\n"         /* 8 */
                         "  render: maybe\n"   /* 9 */
                         "  name: {a: 1}\n"    /* 10 */
                         "  big: 99999999999\n" /* 11 */
                         "  neg: -2147483649\n" /* 12 */
                         "  ok: -2147483648\n" /* 13 */
                         "  nul: \"a\\0b\"\n"); /* 14 */
    int i = 0, b = 0;
    float f = 0;
    const char *s = NULL;
    assert_int_equal(dg_cfg_get(c, "train.epochs", DG_CFG_INT, &i, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:2: key 'train.epochs': expected an integer, got 'abc'", NULL);
    assert_int_equal(dg_cfg_get(c, "train.steps", DG_CFG_INT, &i, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:3:", "'train.steps'", "expected an integer, got '2.5'", NULL);
    assert_int_equal(dg_cfg_get(c, "train.batch", DG_CFG_INT, &i, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:4:", "'train.batch'", "integer", NULL);
    assert_int_equal(dg_cfg_get(c, "train.n", DG_CFG_INT, &i, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:5:", "'train.n'", "quoted string \"5\"", NULL);
    assert_int_equal(dg_cfg_get(c, "train.lr", DG_CFG_F32, &f, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:6:", "'train.lr'", "got nothing", NULL);
    assert_int_equal(dg_cfg_get(c, "env.dt", DG_CFG_F32, &f, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:8: key 'env.dt': expected a number, got a list", NULL);
    assert_int_equal(dg_cfg_get(c, "env.render", DG_CFG_BOOL, &b, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:9:", "'env.render'", "true or false", "'maybe'", NULL);
    assert_int_equal(dg_cfg_get(c, "env.name", DG_CFG_STR, &s, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:10:", "'env.name'", "expected a string, got a map", NULL);
    assert_int_equal(dg_cfg_get(c, "env.big", DG_CFG_INT, &i, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:11:", "'env.big'", "99999999999", "out of the integer range", NULL);
    assert_int_equal(dg_cfg_get(c, "env.neg", DG_CFG_INT, &i, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:12:", "out of the integer range", NULL);
    assert_int_equal(dg_cfg_get(c, "env.ok", DG_CFG_INT, &i, &e), DG_OK);
    assert_int_equal(i, -2147483647 - 1);
    assert_int_equal(dg_cfg_get(c, "env.nul", DG_CFG_STR, &s, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:14:", "'env.nul'", "NUL", NULL);
    /* a path through a scalar */
    assert_int_equal(dg_cfg_get(c, "train.epochs.x", DG_CFG_F32, &f, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:2:", "key 'train.epochs': expected a map, got 'abc'", NULL);
    assert_int_equal(dg_cfg_get(c, "env.dt.x", DG_CFG_F32, &f, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:8:", "key 'env.dt': expected a map, got a list", NULL);
    assert_int_equal(dg_cfg_get(c, "env[0]", DG_CFG_F32, &f, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:7:", "key 'env': expected a list, got a map", NULL);
    /* a malformed path is the program's fault */
    assert_int_equal(dg_cfg_get(c, "env..dt", DG_CFG_F32, &f, &e), DG_ERR_ARG);
    assert_int_equal(dg_cfg_get(c, "env.dt[x]", DG_CFG_F32, &f, &e), DG_ERR_ARG);
    assert_int_equal(dg_cfg_get(c, NULL, DG_CFG_F32, &f, &e), DG_ERR_ARG);
    /* failed reads leave the output alone */
    i = 77;
    assert_int_equal(dg_cfg_get(c, "train.epochs", DG_CFG_INT, &i, &e), DG_ERR_CONFIG);
    assert_int_equal(i, 77);
    dg_cfg_free(c);

    /* strings and bools that do parse */
    c = parse_ok("a: 2048\nb: 'quoted: yes'\nc: yes\nd: Off\ne: \"\"\nf: |\n  two\n  lines\n");
    str_is(c, "a", "2048");
    str_is(c, "b", "quoted: yes");
    assert_int_equal(dg_cfg_get(c, "c", DG_CFG_BOOL, &b, &e), DG_OK);
    assert_int_equal(b, 1);
    assert_int_equal(dg_cfg_get(c, "d", DG_CFG_BOOL, &b, &e), DG_OK);
    assert_int_equal(b, 0);
    str_is(c, "e", "");
    str_is(c, "f", "two\nlines\n");
    dg_cfg_free(c);
}

static void test_nonfinite(void **state) {
    (void)state;
    const char *bad[] = {".nan", ".inf", "-.inf", ".NaN", "+.Inf", "1e999", "-1e400", "inf", "nan", "Infinity"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char text[64];
        snprintf(text, sizeof text, "env:\n  dt: %s\n", bad[k]);
        dg_cfg *c = parse_ok(text);
        dg_err e = {0};
        float f = 1;
        assert_int_equal(dg_cfg_get(c, "env.dt", DG_CFG_F32, &f, &e), DG_ERR_CONFIG);
        has_all(e.msg, "t.yaml:2:", "'env.dt'", "expected a finite number", bad[k], NULL);
        assert_true(f == 1);
        dg_cfg_free(c);
    }
    dg_cfg *c = parse_ok("a: 1e39\nb: 1e-50\nc: -.5\nd: 3\ne: 1.\nf: 0x10\ng: 1_000\n");
    dg_err e = {0};
    float f = 0;
    assert_int_equal(dg_cfg_get(c, "a", DG_CFG_F32, &f, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:1:", "'a'", "32-bit float", NULL);
    assert_int_equal(dg_cfg_get(c, "b", DG_CFG_F32, &f, &e), DG_OK);
    assert_true(f == 0);
    assert_int_equal(dg_cfg_get(c, "c", DG_CFG_F32, &f, &e), DG_OK);
    assert_true(f == -0.5f);
    assert_int_equal(dg_cfg_get(c, "d", DG_CFG_F32, &f, &e), DG_OK);
    assert_true(f == 3);
    assert_int_equal(dg_cfg_get(c, "e", DG_CFG_F32, &f, &e), DG_OK);
    assert_true(f == 1);
    assert_int_equal(dg_cfg_get(c, "f", DG_CFG_F32, &f, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:6:", "expected a number, got '0x10'", NULL);
    assert_int_equal(dg_cfg_get(c, "g", DG_CFG_F32, &f, &e), DG_ERR_CONFIG);
    dg_cfg_free(c);
}

/* Ranges are the key table's (difgames/keys.h): the message cites the line and the text written. */
static void test_ranges(void **state) {
    (void)state;
    dg_err e = {0};
    dg_cfg *c = parse_ok("env:\n  damping: 1.5\n  dt: 0\n  k: -3\ntrain:\n  epochs: 0\n");
    float f = 7;
    int i = 7;
    assert_int_equal(read_f32(c, "env.damping", 0.9f, 0, 1, 0, 1, &f, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:2: key 'env.damping': 1.5 is out of range, expected (0, 1]", NULL);
    assert_int_equal(read_f32(c, "env.dt", 0.1f, 0, INFINITY, 0, 0, &f, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:3:", "'env.dt'", "0 is out of range, expected > 0", NULL);
    assert_int_equal(read_f32(c, "env.dt", 0.1f, 0, 1, 1, 0, &f, &e), DG_OK);
    assert_true(f == 0);
    assert_int_equal(read_f32(c, "env.k", 0, -INFINITY, -5, 0, 1, &f, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:4:", "-3 is out of range, expected <= -5", NULL);
    assert_int_equal(read_int(c, "train.epochs", 10, 1, 100000, &i, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:6: key 'train.epochs': 0 is out of range, expected [1, 100000]", NULL);
    assert_int_equal(read_f32(c, "env.damping", 0.9f, 0, 1, 0, 0, &f, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:2:", "expected (0, 1)", NULL);
    assert_int_equal(read_int(c, "train.epochs", 10, 1, 2147483647, &i, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:6:", "expected >= 1", NULL);
    /* a default out of range is the program's bug */
    assert_int_equal(read_f32(c, "env.gain", 5, 0, 1, 1, 1, &f, &e), DG_ERR_ARG);
    has_all(e.msg, "t.yaml", "'env.gain'", "default 5", NULL);
    /* the caller's own check */
    assert_int_equal(dg_cfg_error(c, "env.k", &e, "must be positive (got %d)", -3), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:4: key 'env.k': must be positive (got -3)", NULL);
    dg_cfg_free(c);
}

static void test_arrays(void **state) {
    (void)state;
    dg_err e = {0};
    dg_cfg *c = parse_ok("policy:\n"                       /* 1 */
                         "  hidden: [64, 64, 64]\n"        /* 2 */
                         "  bad:\n"                        /* 3 */
                         "    - 1\n"                       /* 4 */
                         "    - x\n"                       /* 5 */
                         "  scalar: 5\n"                   /* 6 */
                         "env:\n"                          /* 7 */
                         "  obstacles:\n"                  /* 8 */
                         "    - [0.0, 0.0, 0.25]\n"        /* 9 */
                         "    - [1.0, 0.5]\n"              /* 10 */
                         "  walls:\n"                      /* 11 */
                         "    - [0, 0, 1]\n"               /* 12 */
                         "    - [1, .nan, 1]\n"            /* 13 */
                         "  many: [[1], [2], [3]]\n"       /* 14 */
                         "  flat: [1, 2]\n");              /* 15 */
    int h[4] = {9, 9, 9, 9}, n = -1;
    float f[12];
    assert_int_equal(dg_cfg_get_list(c, "policy.hidden", DG_CFG_INT, 0, h, 2, 2, NULL, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:2: key 'policy.hidden': expected 2 integers, got 3", NULL);
    assert_int_equal(dg_cfg_get_list(c, "policy.hidden", DG_CFG_INT, 0, h, 0, 2, &n, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:2:", "expected at most 2 integers, got 3", NULL);
    assert_int_equal(dg_cfg_get_list(c, "policy.hidden", DG_CFG_INT, 0, h, 4, 4, &n, &e), DG_ERR_CONFIG);
    assert_int_equal(dg_cfg_get_list(c, "policy.hidden", DG_CFG_INT, 0, h, 1, 2, &n, &e), DG_ERR_CONFIG);
    has_all(e.msg, "expected 1 to 2 integers, got 3", NULL);
    assert_int_equal(dg_cfg_get_list(c, "policy.bad", DG_CFG_INT, 0, h, 0, 4, &n, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:5: key 'policy.bad[1]': expected an integer, got 'x'", NULL);
    assert_int_equal(h[0], 9);  /* nothing written */
    assert_int_equal(n, -1);
    assert_int_equal(dg_cfg_get_list(c, "policy.scalar", DG_CFG_F32, 0, f, 0, 4, &n, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:6:", "'policy.scalar'", "expected a list of numbers, got '5'", NULL);
    assert_int_equal(dg_cfg_get_list(c, "policy.hidden", DG_CFG_INT, 0, h, 0, 4, &n, &e), DG_OK);
    assert_int_equal(n, 3);
    assert_int_equal(h[2], 64);

    int rows = -1;
    assert_int_equal(dg_cfg_get_list(c, "env.obstacles", DG_CFG_F32, 3, f, 0, 4, &rows, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:10: key 'env.obstacles[1]': expected 3 numbers, got 2", NULL);
    assert_int_equal(rows, -1);
    assert_int_equal(dg_cfg_get_list(c, "env.walls", DG_CFG_F32, 3, f, 0, 4, &rows, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:13: key 'env.walls[1][1]': expected a finite number, got '.nan'", NULL);
    assert_int_equal(dg_cfg_get_list(c, "env.many", DG_CFG_F32, 1, f, 0, 2, &rows, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:14:", "'env.many'", "at most 2 rows, got 3", NULL);
    assert_int_equal(dg_cfg_get_list(c, "env.flat", DG_CFG_F32, 2, f, 0, 2, &rows, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:15:", "'env.flat[0]'", "expected a list of numbers, got '1'", NULL);
    assert_int_equal(dg_cfg_get_list(c, "env.many", DG_CFG_F32, 1, f, 0, 4, &rows, &e), DG_OK);
    assert_int_equal(rows, 3);
    assert_true(f[0] == 1 && f[1] == 2 && f[2] == 3);
    /* bad arguments */
    assert_int_equal(dg_cfg_get_list(c, "env.many", DG_CFG_F32, -1, f, 0, 4, &rows, &e), DG_ERR_ARG);
    assert_int_equal(dg_cfg_get_list(c, "env.many", DG_CFG_BOOL, 0, f, 0, 4, &rows, &e), DG_ERR_ARG);
    assert_int_equal(dg_cfg_get_list(c, "policy.hidden", DG_CFG_INT, 0, h, 3, 2, &n, &e), DG_ERR_ARG);
    assert_int_equal(dg_cfg_get_list(c, "policy.hidden", DG_CFG_INT, 0, h, 1, 2, NULL, &e), DG_ERR_ARG);
    dg_cfg_free(c);
}

/* the "did you mean" of any list of names: the nearest within 1, 2 or 3 edits by the word's length */
static void test_nearest(void **state) {
    (void)state;
    const char *const opts[] = {"config", "epochs", "out", "seed", "seeds", "batch"};
    const int n = sizeof opts / sizeof opts[0];
    assert_int_equal(dg_cfg_nearest("epoch", 5, opts, n), 1);     /* one letter short */
    assert_int_equal(dg_cfg_nearest("epohcs", 6, opts, n), 1);    /* two swapped: 2 edits */
    assert_int_equal(dg_cfg_nearest("epoch=10", 5, opts, n), 1);  /* len bytes only */
    assert_int_equal(dg_cfg_nearest("conf", 4, opts, n), 0);
    assert_int_equal(dg_cfg_nearest("seedz", 5, opts, n), 3);     /* a tie (seed, seeds): the first */
    assert_int_equal(dg_cfg_nearest("ou", 2, opts, n), 2);        /* a word of 3: one edit */
    assert_int_equal(dg_cfg_nearest("o", 1, opts, n), -1);        /* ... not two */
    assert_int_equal(dg_cfg_nearest("bogus", 5, opts, n), -1);
    assert_int_equal(dg_cfg_nearest("", 0, opts, n), -1);
    assert_int_equal(dg_cfg_nearest("epoch", 5, opts, 0), -1);
}

static void test_unknown_keys(void **state) {
    (void)state;
    dg_err e = {0};
    /* the reach example with a typo on line 5 */
    char text[sizeof REACH + 16];
    snprintf(text, sizeof text, "%s", REACH);
    char *p = strstr(text, "damping");
    memmove(p + 4, p + 5, strlen(p + 5) + 1);  /* "damping" -> "dampng" */
    dg_err le = {0};
    dg_cfg *c = dg_cfg_parse(text, strlen(text), "configs/reach.yaml", &le);
    assert_non_null(c);
    assert_int_equal(read_reach(c, &e), DG_OK);
    assert_int_equal(dg_cfg_check_unused(c, &e), DG_ERR_CONFIG);
    has_all(e.msg, "configs/reach.yaml:5: unknown key 'env.dampng' (did you mean 'env.damping'?)", NULL);
    dg_cfg_free(c);

    /* a key nobody asked about, no hint; deeper keys get their full path */
    c = parse_ok("a: 1\nb:\n  c:\n    d: 2\n    e: 3\n");
    int i;
    assert_int_equal(dg_cfg_get(c, "a", DG_CFG_INT, &i, &e), DG_OK);
    assert_int_equal(dg_cfg_get(c, "b.c.d", DG_CFG_INT, &i, &e), DG_OK);
    assert_int_equal(dg_cfg_check_unused(c, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:5: unknown key 'b.c.e'", NULL);
    assert_null(strstr(e.msg, "did you mean"));
    /* marking the subtree known */
    dg_cfg_mark_used(c, "b.c");
    assert_int_equal(dg_cfg_check_unused(c, &e), DG_OK);
    dg_cfg_free(c);

    /* nothing read at all: the first key */
    c = parse_ok("# header\n\nfirst: 1\nsecond: 2\n");
    assert_int_equal(dg_cfg_check_unused(c, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:3: unknown key 'first'", NULL);
    dg_cfg_mark_used(c, "");
    assert_int_equal(dg_cfg_check_unused(c, &e), DG_OK);
    dg_cfg_free(c);

    /* list items read one by one */
    c = parse_ok("pts:\n  - {x: 1}\n  - {x: 2, y: 3}\n");
    float f;
    assert_int_equal(dg_cfg_len(c, "pts"), 2);
    assert_int_equal(dg_cfg_get(c, "pts[0].x", DG_CFG_F32, &f, &e), DG_OK);
    assert_int_equal(dg_cfg_check_unused(c, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:3: unused list item 'pts[1]'", NULL);
    assert_int_equal(dg_cfg_get(c, "pts[1].x", DG_CFG_F32, &f, &e), DG_OK);
    assert_int_equal(dg_cfg_check_unused(c, &e), DG_ERR_CONFIG);
    has_all(e.msg, "t.yaml:3: unknown key 'pts[1].y'", NULL);
    dg_cfg_free(c);
}

static void test_duplicates_and_syntax(void **state) {
    (void)state;
    static const bad_text BAD[] = {
        {"env:\n  dt: 0.05\n  damping: 0.9\n  dt: 0.1\n", 0, {"t.yaml:4: duplicate key 'env.dt' (first at line 2)"}},
        {"a: 1\nb: {x: 1, y: 2, x: 3}\n", 0, {"t.yaml:2:", "duplicate key 'b.x'", "first at line 2"}},
        {"a: 1\nb: [1, 2\nc: 3\n", 0, {"t.yaml:", "flow sequence"}},                 /* unclosed */
        {"a:\n  b: 1\n c: 2\n", 0, {"t.yaml:3:"}},                                    /* bad indent */
        {"a:\n\tb: 1\n", 0, {"t.yaml:2:", "not tabs"}},
        {"a: 1\nb: \xff\xfe\n", 0, {"t.yaml:2:", "UTF-8"}},
        {"a: 1\nb: x\0y\n", sizeof "a: 1\nb: x\0y\n" - 1, {"t.yaml:2:"}},            /* a NUL byte */
        {"a: 1\n---\nb: 2\n", 0, {"t.yaml:2:", "only one YAML document"}},
        {"base: &b {x: 1}\nother: *b\n", 0, {"t.yaml:1:", "anchors (&b) are not supported"}},
        {"a:\n  - *x\n", 0, {"t.yaml:2:", "alias"}},
        {"a: !!float 1\n", 0, {"t.yaml:1:", "tags"}},
        {"? [a, b]\n: 1\n", 0, {"t.yaml:1:", "map keys must be plain values"}},      /* a complex key */
        {"- 1\n- 2\n", 0, {"t.yaml:1:", "top level must be a map", "a list"}},
        {"just text\n", 0, {"t.yaml:1:", "top level must be a map", "'just text'"}},
    };
    check_bad_texts(BAD, sizeof BAD / sizeof BAD[0]);
    dg_err e;
    /* the NULL label */
    memset(&e, 0, sizeof e);
    assert_null(dg_cfg_parse("[", 1, NULL, &e));
    has_all(e.msg, "<memory>:", NULL);
}

static void test_empty(void **state) {
    (void)state;
    const char *texts[] = {"", "# only a comment\n", "---\n", "\n\n   \n", "---\n...\n", "{}", "\xef\xbb\xbf"};
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
        dg_err e = {0};
        dg_cfg *c = dg_cfg_parse(texts[k], strlen(texts[k]), "t.yaml", &e);
        if (!c) fail_msg("\"%s\": %s", texts[k], e.msg);
        assert_int_equal(dg_cfg_len(c, ""), 0);
        assert_int_equal(dg_cfg_check_unused(c, &e), DG_OK);
        int i = 5;
        assert_int_equal(dg_cfg_get(c, "x.y", DG_CFG_INT, &i, &e), DG_OK);
        assert_int_equal(i, 5);
        char *y = NULL;
        assert_int_equal(dg_cfg_to_yaml(c, &y, NULL, &e), DG_OK);
        dg_cfg *c2 = dg_cfg_parse(y, strlen(y), "dump", &e);
        assert_non_null(c2);
        assert_int_equal(dg_cfg_len(c2, ""), 0);
        dg_cfg_free(c2);
        free(y);
        dg_cfg_free(c);
    }
    dg_err e = {0};
    dg_cfg *c = dg_cfg_parse(NULL, 0, "null", &e);
    assert_non_null(c);
    dg_cfg_free(c);
}

static void test_overrides(void **state) {
    (void)state;
    dg_err e = {0};
    dg_cfg *c = parse_ok(REACH);
    float f = 0;
    int i = 0, h[4], n = 0;
    assert_int_equal(dg_cfg_set(c, "train.lr", "0.01", &e), DG_OK);
    assert_int_equal(dg_cfg_get(c, "train.lr", DG_CFG_F32, &f, &e), DG_OK);
    assert_true(f == 0.01f);
    assert_int_equal(dg_cfg_line(c, "train.lr", NULL), 0);
    assert_int_equal(dg_cfg_set(c, "game", "chase", &e), DG_OK);
    str_is(c, "game", "chase");
    /* new keys and new maps on the way */
    assert_int_equal(dg_cfg_set(c, "render.size.width", "64", &e), DG_OK);
    assert_int_equal(dg_cfg_get(c, "render.size.width", DG_CFG_INT, &i, &e), DG_OK);
    assert_int_equal(i, 64);
    /* a flow list replaces a list */
    assert_int_equal(dg_cfg_set(c, "policy.hidden", " [32, 16, 8]", &e), DG_OK);
    assert_int_equal(dg_cfg_get_list(c, "policy.hidden", DG_CFG_INT, 0, h, 1, 4, &n, &e), DG_OK);
    assert_int_equal(n, 3);
    assert_int_equal(h[2], 8);
    /* one list item */
    assert_int_equal(dg_cfg_set(c, "env.obstacles[0][2]", "0.5", &e), DG_OK);
    assert_int_equal(dg_cfg_get(c, "env.obstacles[0][2]", DG_CFG_F32, &f, &e), DG_OK);
    assert_true(f == 0.5f);
    assert_int_equal(dg_cfg_set(c, "env.obstacles.0.1", "0.125", &e), DG_OK);
    assert_int_equal(dg_cfg_get(c, "env.obstacles[0][1]", DG_CFG_F32, &f, &e), DG_OK);
    assert_true(f == 0.125f);

    /* a bad override value names the command line and the key, no file line */
    assert_int_equal(dg_cfg_set(c, "train.epochs", "lots", &e), DG_OK);
    assert_int_equal(dg_cfg_get(c, "train.epochs", DG_CFG_INT, &i, &e), DG_ERR_CONFIG);
    has_all(e.msg, "command line: key 'train.epochs': expected an integer, got 'lots'", NULL);
    assert_null(strstr(e.msg, "t.yaml"));
    assert_int_equal(dg_cfg_set(c, "train.epochs", "200", &e), DG_OK);
    assert_int_equal(dg_cfg_set(c, "train.lr", ".nan", &e), DG_OK);
    assert_int_equal(dg_cfg_get(c, "train.lr", DG_CFG_F32, &f, &e), DG_ERR_CONFIG);
    has_all(e.msg, "command line: key 'train.lr': expected a finite number", NULL);
    assert_int_equal(dg_cfg_set(c, "train.lr", "2", &e), DG_OK);
    assert_int_equal(read_f32(c, "train.lr", 0, 0, 1, 0, 1, &f, &e), DG_ERR_CONFIG);
    has_all(e.msg, "command line: key 'train.lr': 2 is out of range, expected (0, 1]", NULL);
    assert_int_equal(dg_cfg_set(c, "train.lr", "0.001", &e), DG_OK);

    /* overrides that cannot be applied */
    assert_int_equal(dg_cfg_set(c, "train.lr.x", "1", &e), DG_ERR_CONFIG);
    has_all(e.msg, "command line", "'train.lr.x'", "'train.lr' is a value", NULL);
    assert_int_equal(dg_cfg_set(c, "env.obstacles[3]", "1", &e), DG_ERR_CONFIG);
    has_all(e.msg, "command line", "'env.obstacles[3]'", "has 1 item", NULL);
    assert_int_equal(dg_cfg_set(c, "env.obstacles.x", "1", &e), DG_ERR_CONFIG);
    has_all(e.msg, "command line", "'env.obstacles' is a list", NULL);
    assert_int_equal(dg_cfg_set(c, "env[0]", "1", &e), DG_ERR_CONFIG);
    has_all(e.msg, "command line", "'env' is a map", NULL);
    assert_int_equal(dg_cfg_set(c, "newlist[0]", "1", &e), DG_ERR_CONFIG);
    has_all(e.msg, "command line", "'newlist' does not exist", NULL);
    assert_int_equal(dg_cfg_set(c, "a..b", "1", &e), DG_ERR_CONFIG);
    has_all(e.msg, "command line", "invalid key 'a..b'", NULL);
    assert_int_equal(dg_cfg_set(c, "", "1", &e), DG_ERR_CONFIG);
    assert_int_equal(dg_cfg_set(c, "policy.hidden", "[1, 2", &e), DG_ERR_CONFIG);
    has_all(e.msg, "command line: key 'policy.hidden':", NULL);
    assert_int_equal(dg_cfg_set(c, "policy.hidden", "{a: 1, a: 2}", &e), DG_ERR_CONFIG);
    has_all(e.msg, "command line", "duplicate key 'policy.hidden.a'", NULL);
    assert_int_equal(dg_cfg_set(c, "policy.hidden", "[*x]", &e), DG_ERR_CONFIG);
    has_all(e.msg, "command line", "alias", NULL);
    assert_int_equal(dg_cfg_set(c, "game", "\xff", &e), DG_ERR_CONFIG);
    has_all(e.msg, "command line", "'game'", "UTF-8", NULL);
    assert_int_equal(dg_cfg_set(c, "game", NULL, &e), DG_ERR_ARG);
    /* failed overrides changed nothing */
    assert_int_equal(dg_cfg_get_list(c, "policy.hidden", DG_CFG_INT, 0, h, 1, 4, &n, &e), DG_OK);
    assert_int_equal(n, 3);
    assert_false(dg_cfg_has(c, "newlist"));
    assert_false(dg_cfg_has(c, "a"));

    /* an override nobody reads is reported as coming from the command line */
    assert_int_equal(read_reach(c, &e), DG_OK);
    assert_int_equal(dg_cfg_get(c, "render.size.width", DG_CFG_INT, &i, &e), DG_OK);
    assert_int_equal(dg_cfg_set(c, "train.lrr", "0.1", &e), DG_OK);
    assert_int_equal(dg_cfg_check_unused(c, &e), DG_ERR_CONFIG);
    has_all(e.msg, "command line: unknown key 'train.lrr'", NULL);
    dg_cfg_free(c);

    /* an empty section becomes a map */
    c = parse_ok("env:\nlist: [~]\n");
    assert_int_equal(dg_cfg_set(c, "env.dt", "0.2", &e), DG_OK);
    assert_int_equal(dg_cfg_get(c, "env.dt", DG_CFG_F32, &f, &e), DG_OK);
    assert_true(f == 0.2f);
    assert_int_equal(dg_cfg_set(c, "list[0].k", "v", &e), DG_OK);
    str_is(c, "list[0].k", "v");
    dg_cfg_free(c);
}

/* Dumps c, re-parses the text, and checks a second dump gives the same text. Returns the re-parse. */
static dg_cfg *round_trip(dg_cfg *c) {
    dg_err e = {0};
    char *y1 = NULL, *y2 = NULL;
    size_t n1 = 0;
    assert_int_equal(dg_cfg_to_yaml(c, &y1, &n1, &e), DG_OK);
    assert_int_equal(strlen(y1), n1);
    dg_cfg *c2 = dg_cfg_parse(y1, n1, "dump", &e);
    if (!c2) fail_msg("re-parse failed: %s\n--- text:\n%s", e.msg, y1);
    assert_int_equal(dg_cfg_to_yaml(c2, &y2, NULL, &e), DG_OK);
    if (strcmp(y1, y2) != 0) fail_msg("dump not stable:\n%s\n---\n%s", y1, y2);
    free(y1);
    free(y2);
    return c2;
}

static void test_round_trip(void **state) {
    (void)state;
    dg_err e = {0};
    dg_cfg *c = parse_ok(REACH);
    assert_int_equal(dg_cfg_set(c, "train.lr", "0.01", &e), DG_OK);
    assert_int_equal(dg_cfg_set(c, "policy.hidden", "[32, 32]", &e), DG_OK);
    assert_int_equal(dg_cfg_set(c, "notes.text", "a: b # not a comment", &e), DG_OK);
    assert_int_equal(dg_cfg_set(c, "notes.dash", "- x", &e), DG_OK);
    assert_int_equal(dg_cfg_set(c, "notes.empty", "", &e), DG_OK);
    assert_int_equal(dg_cfg_set(c, "notes.map", "{k: v, n: [1, {z: 2}]}", &e), DG_OK);
    dg_cfg *c2 = round_trip(c);
    assert_int_equal(read_reach(c2, &e), DG_OK);
    float lr;
    int h[4], n = 0;
    const char *s;
    assert_int_equal(dg_cfg_get(c2, "train.lr", DG_CFG_F32, &lr, &e), DG_OK);
    assert_true(lr == 0.01f);
    assert_int_equal(dg_cfg_get_list(c2, "policy.hidden", DG_CFG_INT, 0, h, 0, 4, &n, &e), DG_OK);
    assert_int_equal(n, 2);
    assert_int_equal(h[0], 32);
    str_is(c2, "notes.text", "a: b # not a comment");
    str_is(c2, "notes.dash", "- x");
    assert_int_equal(dg_cfg_get(c2, "notes.empty", DG_CFG_STR, &s, &e), DG_ERR_CONFIG);  /* null stays null */
    str_is(c2, "notes.map.n[1].z", "2");
    float obst[3];
    int rows = 0;
    assert_int_equal(dg_cfg_get_list(c2, "env.obstacles", DG_CFG_F32, 3, obst, 1, 1, &rows, &e), DG_OK);
    assert_true(obst[2] == 0.25f);
    dg_cfg_free(c2);
    dg_cfg_free(c);

    /* strings that need care: quoting keeps "5" a string, escapes, unicode, long text, odd keys */
    char longs[3000];
    memset(longs, 'x', sizeof longs - 1);
    for (size_t k = 50; k < sizeof longs - 1; k += 50) longs[k] = ' ';
    longs[sizeof longs - 1] = 0;
    char text[4000];
    snprintf(text, sizeof text,
             "q: \"5\"\n"
             "esc: \"tab\\there\\nnew \\\"q\\\" \\x01 \\u00e9\"\n"
             "uni: héllo wörld ✓\n"
             "lit: |\n  line one\n  line two\n"
             "\"key with: colon\": 1\n"
             "\"\": empty key\n"
             "'true': quoted key\n"
             "nul: ~\n"
             "t: true\n"
             "neg: -.5e-3\n"
             "long: %s\n"
             "nest: {a: [1, [2, [3]]], b: {}}\n"
             "emptylist: []\n"
             "? explicit\n"
             ": value\n",
             longs);
    c = parse_ok(text);
    c2 = round_trip(c);
    str_is(c2, "q", "5");
    int qi = 0;
    assert_int_equal(dg_cfg_get(c2, "q", DG_CFG_INT, &qi, &e), DG_ERR_CONFIG);  /* still a string */
    str_is(c2, "esc", "tab\there\nnew \"q\" \x01 \xc3\xa9");
    str_is(c2, "uni", "héllo wörld ✓");
    str_is(c2, "lit", "line one\nline two\n");
    assert_int_equal(dg_cfg_get(c2, "key with: colon", DG_CFG_INT, &qi, &e), DG_OK);
    assert_int_equal(qi, 1);
    assert_string_equal(dg_cfg_key(c2, "", 5), "");
    assert_string_equal(dg_cfg_key(c2, "", 6), "true");
    assert_int_equal(dg_cfg_get(c2, "nul", DG_CFG_F32, &lr, &e), DG_ERR_CONFIG);
    int t = 0;
    assert_int_equal(dg_cfg_get(c2, "t", DG_CFG_BOOL, &t, &e), DG_OK);
    assert_int_equal(t, 1);
    assert_int_equal(dg_cfg_get(c2, "neg", DG_CFG_F32, &lr, &e), DG_OK);
    assert_true(lr == -0.5e-3f);
    assert_int_equal(dg_cfg_get(c2, "long", DG_CFG_STR, &s, &e), DG_OK);
    assert_string_equal(s, longs);
    assert_int_equal(dg_cfg_len(c2, "nest.a[1][1]"), 1);
    assert_int_equal(dg_cfg_len(c2, "nest.b"), 0);
    assert_int_equal(dg_cfg_len(c2, "emptylist"), 0);
    str_is(c2, "explicit", "value");
    dg_cfg_free(c2);
    dg_cfg_free(c);
}

static void test_deep_nesting(void **state) {
    (void)state;
    dg_err e;
    /* block maps: 64 levels parse, 65 do not */
    for (int depth = 63; depth <= 66; depth++) {
        char *t = malloc((size_t)depth * (size_t)depth * 2 + 64);
        size_t p = 0;
        for (int d = 0; d < depth; d++) {
            for (int k = 0; k < d; k++) t[p++] = ' ';
            p += (size_t)sprintf(t + p, "k:\n");
        }
        for (int k = 0; k < depth; k++) t[p++] = ' ';
        p += (size_t)sprintf(t + p, "v: 1\n");
        t[p] = 0;
        memset(&e, 0, sizeof e);
        dg_cfg *c = dg_cfg_parse(t, p, "t.yaml", &e);
        if (depth + 1 <= DG_CFG_MAX_DEPTH) {  /* the top-level map plus `depth` nested maps */
            if (!c) fail_msg("depth %d: %s", depth, e.msg);
            dg_cfg *c2 = round_trip(c);
            dg_cfg_free(c2);
        } else {
            assert_null(c);
            has_all(e.msg, "t.yaml:", "nesting deeper than 64 levels", NULL);
        }
        dg_cfg_free(c);
        free(t);
    }
    /* flow lists, far too deep */
    size_t n = 100000;
    char *t = malloc(2 * n + 8);
    memcpy(t, "a: ", 3);
    memset(t + 3, '[', n);
    memset(t + 3 + n, ']', n);
    parse_fails(t, 3 + 2 * n, &e);
    has_all(e.msg, "t.yaml:1:", "nesting deeper than 64", NULL);
    free(t);
    /* overrides are held to the same limit */
    dg_cfg *c = parse_ok("a: 1\n");
    char path[300] = "";
    for (int d = 0; d < 70; d++) strcat(path, d ? ".k" : "k");
    assert_int_equal(dg_cfg_set(c, path, "1", &e), DG_ERR_CONFIG);
    has_all(e.msg, "command line", "deeper than 64", NULL);
    char deep[200] = "";
    for (int d = 0; d < 70; d++) strcat(deep, "[");
    assert_int_equal(dg_cfg_set(c, "b", deep, &e), DG_ERR_CONFIG);
    has_all(e.msg, "command line: key 'b':", NULL);
    path[2 * 62 - 1] = 0;  /* 62 steps: 61 maps under the top level, the value at depth 63 */
    assert_int_equal(dg_cfg_set(c, path, "[[[1]]]", &e), DG_ERR_CONFIG);
    has_all(e.msg, "command line", "nesting deeper than 64", NULL);
    assert_int_equal(dg_cfg_set(c, path, "[[1]]", &e), DG_OK);
    dg_cfg *c2 = round_trip(c);
    dg_cfg_free(c2);
    dg_cfg_free(c);
}

/* Asserts that path reads the same in a and b: the same keys in order, the same items, and scalars
 * that read the same as strings, numbers, integers and booleans. */
static void same_values(dg_cfg *a, dg_cfg *b, const char *path, const char *file) {
    dg_err e = {0};
    int n = dg_cfg_len(a, path);
    if (n != dg_cfg_len(b, path)) fail_msg("%s: '%s' has %d entries, %d after the round trip", file, path, n,
                                           dg_cfg_len(b, path));
    for (int i = 0; i < n; i++) {
        char sub[512];
        const char *k = dg_cfg_key(a, path, i), *k2 = dg_cfg_key(b, path, i);
        if ((k == NULL) != (k2 == NULL) || (k && strcmp(k, k2) != 0))
            fail_msg("%s: key %d of '%s' differs: '%s', '%s'", file, i, path, k ? k : "-", k2 ? k2 : "-");
        if (k) snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "", k);
        else snprintf(sub, sizeof sub, "%s[%d]", path, i);
        same_values(a, b, sub, file);
    }
    if (n >= 0 && dg_cfg_key(a, path, 0)) return;
    const char *s1 = NULL, *s2 = NULL;
    float f1 = 0, f2 = 0;
    int i1 = 0, i2 = 0, b1 = 0, b2 = 0;
    assert_int_equal(dg_cfg_get(a, path, DG_CFG_STR, &s1, &e), dg_cfg_get(b, path, DG_CFG_STR, &s2, &e));
    if ((s1 == NULL) != (s2 == NULL) || (s1 && strcmp(s1, s2) != 0)) fail_msg("%s: '%s' differs", file, path);
    assert_int_equal(dg_cfg_get(a, path, DG_CFG_F32, &f1, &e), dg_cfg_get(b, path, DG_CFG_F32, &f2, &e));
    assert_int_equal(dg_cfg_get(a, path, DG_CFG_INT, &i1, &e), dg_cfg_get(b, path, DG_CFG_INT, &i2, &e));
    assert_int_equal(dg_cfg_get(a, path, DG_CFG_BOOL, &b1, &e), dg_cfg_get(b, path, DG_CFG_BOOL, &b2, &e));
    if (memcmp(&f1, &f2, sizeof f1) != 0 || i1 != i2 || b1 != b2) fail_msg("%s: '%s' reads differently", file, path);
}

/* Every shipped config (configs/, configs/hji/, configs/bench/) written back and read again holds
 * the same values, and writing it again gives the same text. */
static void test_shipped_configs(void **state) {
    (void)state;
    static const char *const DIRS[] = {"configs", "configs/hji", "configs/bench"};
    char root[1024];
    snprintf(root, sizeof root, "%s", __FILE__);
    char *slash = strrchr(root, '/');
    if (slash) *slash = 0;
    int files = 0;
    for (size_t d = 0; d < sizeof DIRS / sizeof DIRS[0]; d++) {
        char dir[1200];
        snprintf(dir, sizeof dir, "%s/../%s", root, DIRS[d]);
        DIR *dp = opendir(dir);
        if (!dp) fail_msg("cannot open %s", dir);
        for (struct dirent *de; (de = readdir(dp));) {
            size_t nl = strlen(de->d_name);
            if (nl < 6 || strcmp(de->d_name + nl - 5, ".yaml") != 0) continue;
            char path[1500];
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
            dg_err e = {0};
            dg_cfg *c = dg_cfg_load(path, &e);
            if (!c) fail_msg("%s", e.msg);
            dg_cfg *c2 = round_trip(c);
            same_values(c, c2, "", path);
            dg_cfg_free(c2);
            dg_cfg_free(c);
            files++;
        }
        closedir(dp);
    }
    assert_true(files >= 10);
}

/* Anchors and aliases are refused before the tree is built (libyaml's loader would share the
 * node, even with itself), and so are more than 2^20 keys and values (the top-level map, the key,
 * the list and 2^20 + 1 items here), which bounds the tree's memory (about 300 MiB at most). */
static void test_aliases_and_size(void **state) {
    (void)state;
    static const bad_text BAD[] = {
        {"a: &x [1, *x]\n", 0, {"t.yaml:1:", "anchors (&x) are not supported"}},
        {"a: 1\n*x : 2\n", 0, {"t.yaml:2:", "aliases (*x)"}},
    };
    check_bad_texts(BAD, sizeof BAD / sizeof BAD[0]);
    dg_err e;
    size_t n = (1u << 20) + 1, len = 4 + 2 * n;
    char *t = malloc(len + 1);
    memcpy(t, "a: [", 4);
    for (size_t i = 0; i < n; i++) memcpy(t + 4 + 2 * i, i + 1 < n ? "0," : "0]", 2);
    parse_fails(t, len, &e);
    has_all(e.msg, "t.yaml:1:", "more than 1048576 keys and values", NULL);
    free(t);
}

/* xorshift for reproducible garbage */
static uint64_t rng_next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Exercises a parsed config: queries, getters, check_unused, dump and re-parse. */
static void poke(dg_cfg *c, uint64_t *rs) {
    dg_err e = {0};
    float f, arr[8];
    int i, n, rows;
    const char *s;
    for (int k = 0; k < dg_cfg_len(c, "") && k < 4; k++) {
        const char *key = dg_cfg_key(c, "", k);
        if (!key || strchr(key, '.') || strchr(key, '[') || strchr(key, ']') || !key[0]) continue;
        dg_cfg_get(c, key, DG_CFG_F32, &f, &e);
        dg_cfg_get(c, key, DG_CFG_INT, &i, &e);
        dg_cfg_get(c, key, DG_CFG_STR, &s, &e);
        dg_cfg_get_list(c, key, DG_CFG_F32, 0, arr, 0, 8, &n, &e);
        dg_cfg_get_list(c, key, DG_CFG_F32, 2, arr, 0, 4, &rows, &e);
        char sub[128];
        snprintf(sub, sizeof sub, "%s[0]", key);
        dg_cfg_get(c, sub, DG_CFG_BOOL, &i, &e);
        if (rng_next(rs) % 4 == 0) dg_cfg_set(c, key, "[1, {x: 2}]", &e);
    }
    dg_cfg_check_unused(c, &e);
    dg_cfg *c2 = round_trip(c);
    dg_cfg_free(c2);
}

static void test_garbage(void **state) {
    (void)state;
    static const char *const frag[] = {
        "a", ":", " ", "\n", "  ", "- ", "[", "]", "{", "}", ",", "\"", "'", "#", "&x", "*x", "!t",
        "---\n", "...\n", "? ", "|\n", ">\n", "1.5", "-3", ".nan", "~", "null", "\\", "\t", "\xc3\xa9",
        "\xff", "k: ", "\n  ", "\n    - ", "%YAML 1.1\n", "\"\\u00e9\"", "\0", "\r\n", "\xef\xbb\xbf"};
    uint64_t rs = 0x9E3779B97F4A7C15ull;
    int ok = 0;
    char buf[512];
    for (int it = 0; it < 20000; it++) {
        size_t len = 0;
        int mode = (int)(rng_next(&rs) % 3);
        size_t want = (size_t)(rng_next(&rs) % 200);
        if (mode == 0) {  /* raw bytes */
            for (; len < want; len++) buf[len] = (char)rng_next(&rs);
        } else if (mode == 1) {  /* YAML-ish fragments */
            while (len < want) {
                const char *f = frag[rng_next(&rs) % (sizeof frag / sizeof frag[0])];
                size_t fl = f[0] ? strlen(f) : 1;
                if (len + fl > sizeof buf) break;
                memcpy(buf + len, f, fl);
                len += fl;
            }
        } else {  /* the example with a few bytes flipped */
            len = strlen(REACH);
            memcpy(buf, REACH, len);
            int flips = 1 + (int)(rng_next(&rs) % 4);
            for (int k = 0; k < flips; k++) buf[rng_next(&rs) % len] = (char)rng_next(&rs);
        }
        dg_err e = {0};
        dg_cfg *c = dg_cfg_parse(buf, len, "fuzz", &e);
        if (c) {
            ok++;
            poke(c, &rs);
            dg_cfg_free(c);
        } else {
            assert_true(e.status != DG_OK);
            assert_true(strncmp(e.msg, "fuzz", 4) == 0);
        }
    }
    assert_true(ok > 100);  /* some inputs parse, so the getters and the dump were exercised */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_example_reads_back),
        cmocka_unit_test(test_load_file),
        cmocka_unit_test(test_defaults_and_required),
        cmocka_unit_test(test_wrong_types),
        cmocka_unit_test(test_nonfinite),
        cmocka_unit_test(test_ranges),
        cmocka_unit_test(test_arrays),
        cmocka_unit_test(test_nearest),
        cmocka_unit_test(test_unknown_keys),
        cmocka_unit_test(test_duplicates_and_syntax),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_overrides),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_shipped_configs),
        cmocka_unit_test(test_aliases_and_size),
        cmocka_unit_test(test_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
