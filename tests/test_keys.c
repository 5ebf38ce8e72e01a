/* Tests for config keys declared in tables (keys.h): reading into a struct,
 * defaults, every error message the table reader writes, the listings of
 * `difgames keys`, the games' declarations (one key, one set of bounds, in
 * every game, learning or HJI) and dg_train_opts_default against an empty config. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "difgames/difgames.h"

typedef struct thing {
    int   n, flag, mode;
    float x, span[2], arr[3];
    int   sizes[4], nsizes;
    float rows[4][2];
    int   nrows;
    const char *label;
} thing;

static const char *const MODES[] = {"fast", "exact", NULL};

static const dg_key KEYS[] = {
    DG_K_INT("a.n", thing, n, 7, 1, 100, "a count"),
    DG_K_BOOL("a.flag", thing, flag, 1, "a switch"),
    DG_K_ENUM("a.mode", thing, mode, 1, MODES, "mode", "how"),
    DG_K_F32("a.x", thing, x, 0.25f, 0, 1, 0, 1, "a fraction"),
    DG_K_SPAN("a.span", thing, span, -1.0f, 2.0f, "an interval"),
    {.name = "a.arr", .type = DG_KEY_F32_ARRAY, .offset = offsetof(thing, arr), .min_n = 3, .max_n = 3, .lo = 0,
     .hi = 1, .hi_open = 1, .def_v = (const double[]){0.5f, 0.25f, 0.125f}, .def_n = 3, .what = "item", .doc = "d"},
    {.name = "a.sizes", .type = DG_KEY_INT_ARRAY, .offset = offsetof(thing, sizes),
     .count_offset = offsetof(thing, nsizes), .min_n = 0, .max_n = 4, .lo = 1, .hi = 64,
     .def_v = (const double[]){8, 16}, .def_n = 2, .what = "sizes", .doc = "d"},
    {.name = "a.rows", .type = DG_KEY_F32_ROWS, .offset = offsetof(thing, rows),
     .count_offset = offsetof(thing, nrows), .cols = 2, .min_n = 0, .max_n = 4,
     .def_v = (const double[]){1.5f, -2.0f}, .def_n = 1, .doc = "d"},
    {.name = "a.label", .type = DG_KEY_STR, .offset = offsetof(thing, label), .def_str = "none", .doc = "d"},
};
#define NKEYS ((int)(sizeof KEYS / sizeof KEYS[0]))

static dg_cfg *parse_ok(const char *text) {
    dg_err e = {0};
    dg_cfg *c = dg_cfg_parse(text, strlen(text), "t.yaml", &e);
    if (!c) fail_msg("parse failed: %s", e.msg);
    return c;
}

/* reads KEYS from text; returns the status, the message in e */
static dg_status read_text(const char *text, thing *t, dg_err *e) {
    dg_cfg *c = parse_ok(text);
    memset(t, 0, sizeof *t);
    dg_status st = dg_keys_read(c, KEYS, NKEYS, t, e);
    if (st == DG_OK) st = dg_cfg_check_unused(c, e);
    dg_cfg_free(c);
    return st;
}

static void test_defaults_and_values(void **state) {
    (void)state;
    thing t, d;
    dg_err e = {0};
    assert_int_equal(read_text("other: 1\n", &t, &e), DG_ERR_CONFIG);  /* unknown key still caught */
    assert_int_equal(read_text("a: {}\n", &t, &e), DG_OK);
    memset(&d, 0, sizeof d);
    dg_keys_defaults(KEYS, NKEYS, &d);
    assert_int_equal(t.n, 7);
    assert_int_equal(t.flag, 1);
    assert_int_equal(t.mode, 1);
    assert_true(t.x == 0.25f && t.span[0] == -1.0f && t.span[1] == 2.0f && t.arr[2] == 0.125f);
    assert_int_equal(t.nsizes, 2);
    assert_int_equal(t.sizes[1], 16);
    assert_int_equal(t.nrows, 1);
    assert_true(t.rows[0][0] == 1.5f && t.rows[0][1] == -2.0f);
    assert_string_equal(t.label, "none");
    assert_memory_equal(&t, &d, offsetof(thing, label));
    assert_int_equal(read_text("a: {n: 3, flag: false, mode: fast, x: 1, span: [0, 0], arr: [0, 0.5, 0.75],\n"
                               "     sizes: [4], rows: [[1, 2], [3, 4]], label: hi}\n", &t, &e), DG_OK);
    assert_int_equal(t.n, 3);
    assert_int_equal(t.flag, 0);
    assert_int_equal(t.mode, 0);
    assert_true(t.x == 1.0f && t.span[1] == 0.0f && t.arr[2] == 0.75f);
    assert_int_equal(t.nsizes, 1);
    assert_int_equal(t.sizes[0], 4);
    assert_int_equal(t.nrows, 2);
    assert_true(t.rows[1][1] == 4.0f);
}

static void expect_error(const char *text, const char *msg) {
    thing t;
    dg_err e = {0};
    assert_int_equal(read_text(text, &t, &e), DG_ERR_CONFIG);
    if (!strstr(e.msg, msg)) fail_msg("expected '%s' in '%s'", msg, e.msg);
}

static void test_errors(void **state) {
    (void)state;
    expect_error("a: {n: 0}\n", "t.yaml:1: key 'a.n'");
    expect_error("a: {x: 0}\n", "expected (0, 1]");
    expect_error("a: {mode: slow}\n", "unknown mode 'slow' (known: fast, exact)");
    expect_error("a: {span: [2, 1]}\n", "key 'a.span': expected [lo, hi] with lo <= hi");
    expect_error("a: {arr: [0, 1, 0]}\n", "each item must be in [0, 1)");
    expect_error("a: {arr: [0, 0.5]}\n", "a.arr");
    expect_error("a: {sizes: [4, 65]}\n", "sizes must be 1 to 64, not 65");
    expect_error("a: {rows: [[1, 2, 3]]}\n", "a.rows");
    expect_error("a: {flag: maybe}\n", "a.flag");
}

static void test_listing(void **state) {
    (void)state;
    char b[128];
    assert_string_equal(dg_key_range_str(&KEYS[3], b, sizeof b), "(0, 1]");
    assert_string_equal(dg_key_default_str(&KEYS[3], b, sizeof b), "0.25");
    assert_string_equal(dg_key_range_str(&KEYS[2], b, sizeof b), "fast | exact");
    assert_string_equal(dg_key_default_str(&KEYS[2], b, sizeof b), "exact");
    assert_string_equal(dg_key_default_str(&KEYS[5], b, sizeof b), "[0.5, 0.25, 0.125]");
    assert_string_equal(dg_key_range_str(&KEYS[6], b, sizeof b), "0 to 4 items, each [1, 64]");
    assert_string_equal(dg_key_default_str(&KEYS[7], b, sizeof b), "[[1.5, -2]]");
    assert_string_equal(dg_key_type_str(&KEYS[7], b, sizeof b), "list of [float x 2]");
    int n;
    const dg_key *tk = dg_train_keys(&n);
    for (int i = 0; i < n; i++)
        if (!strcmp(tk[i].name, "train.eps")) assert_string_equal(dg_key_default_str(&tk[i], b, sizeof b), "1e-08");
}

/* dg_key_check: a value's own check, the message without a place (a command-line option names it) */
static void test_check_text(void **state) {
    (void)state;
    dg_err e = {0};
    assert_int_equal(dg_key_check(&KEYS[0], "42", &e), DG_OK);
    assert_int_equal(dg_key_check(&KEYS[0], "0", &e), DG_ERR_CONFIG);
    assert_string_equal(e.msg, "0 is out of range, expected [1, 100]");
    assert_int_equal(dg_key_check(&KEYS[0], "1e3", &e), DG_ERR_CONFIG);
    assert_string_equal(e.msg, "expected an integer, got '1e3'");
    assert_int_equal(dg_key_check(&KEYS[3], "0", &e), DG_ERR_CONFIG);
    assert_string_equal(e.msg, "0 is out of range, expected (0, 1]");
    assert_int_equal(dg_key_check(&KEYS[2], "slow", &e), DG_ERR_CONFIG);
    assert_string_equal(e.msg, "unknown mode 'slow' (known: fast, exact)");
    assert_int_equal(dg_key_check(&KEYS[6], "[4, 8, 16]", &e), DG_OK);
    assert_int_equal(dg_key_check(&KEYS[6], "[4, 65]", &e), DG_ERR_CONFIG);
    assert_string_equal(e.msg, "sizes must be 1 to 64, not 65");
    /* the keys every training config may set, found by name; a game's own key is not one */
    const dg_key *k = dg_run_key("train.batch");
    assert_non_null(k);
    assert_int_equal(dg_key_check(k, "0", &e), DG_ERR_CONFIG);
    assert_string_equal(e.msg, "0 is out of range, expected [1, 1048576]");
    assert_non_null(dg_run_key("pg.algo"));
    assert_non_null(dg_run_key("env.horizon"));
    assert_non_null(dg_run_key("seed"));
    assert_null(dg_run_key("env.damping"));
    assert_null(dg_run_key(NULL));
}

/* a key that two games read has the same type and bounds in both */
static void test_games_agree(void **state) {
    (void)state;
    dg_key all[16][64];
    int n[16];
    assert_true(dg_game_count() <= 16);
    for (int g = 0; g < dg_game_count(); g++) {
        n[g] = dg_game_keys(dg_game_at(g), all[g], 64);
        assert_true(n[g] > 2 && n[g] <= 64);
        assert_string_equal(all[g][0].name, "env.dt");
        assert_string_equal(all[g][1].name, "env.horizon");
        for (int i = 0; i < n[g]; i++)
            for (int j = 0; j < i; j++)
                if (!strcmp(all[g][i].name, all[g][j].name)) fail_msg("%s twice", all[g][i].name);
    }
    for (int g = 0; g < dg_game_count(); g++)
        for (int h = 0; h < g; h++)
            for (int i = 0; i < n[g]; i++)
                for (int j = 0; j < n[h]; j++) {
                    const dg_key *a = &all[g][i], *b = &all[h][j];
                    if (strcmp(a->name, b->name) != 0) continue;
                    if (a->type != b->type || a->lo != b->lo || a->hi != b->hi || a->lo_open != b->lo_open ||
                        a->hi_open != b->hi_open || a->min_n != b->min_n || a->max_n != b->max_n)
                        fail_msg("%s: %s and %s declare different bounds", a->name, dg_game_at(g)->name,
                                 dg_game_at(h)->name);
                }
}

/* each game created from `game: NAME` alone gets its declared defaults */
static void test_games_defaults(void **state) {
    (void)state;
    for (int g = 0; g < dg_game_count(); g++) {
        const dg_game *game = dg_game_at(g);
        char text[64];
        snprintf(text, sizeof text, "game: %s\n", game->name);
        dg_cfg *c = parse_ok(text);
        dg_err e = {0};
        dg_env *env = dg_env_create(c, &e);
        if (!env) fail_msg("%s: %s", game->name, e.msg);
        assert_true(env->dt == game->dt);
        assert_int_equal(env->horizon, game->horizon);
        assert_true(env->nterms >= 1 && env->nterms <= game->nloss);
        for (int k = 0; k < env->nterms; k++) {
            assert_string_equal(env->term_names[k], game->loss[k].key + 5);
            assert_true(env->term_weights[k] == (game->loss[k].evader ? -game->loss[k].weight : game->loss[k].weight));
        }
        dg_env_free(env);
        dg_cfg_free(c);
    }
}

/* loss.evader_wall defaults to the weight read for loss.wall, and enters with a minus */
static void test_loss_like(void **state) {
    (void)state;
    static const char TEXT[] = "game: chase\nenv: {evader: policy}\nloss: {wall: 3.5, evader_energy: 2}\n";
    dg_cfg *c = parse_ok(TEXT);
    dg_err e = {0};
    dg_env *env = dg_env_create(c, &e);
    if (!env) fail_msg("%s", e.msg);
    assert_int_equal(env->nterms, 5);
    assert_string_equal(env->term_names[3], "evader_wall");
    assert_true(env->term_weights[1] == 3.5f && env->term_weights[3] == -3.5f && env->term_weights[4] == -2.0f);
    dg_env_free(env);
    dg_cfg_free(c);
    /* a flee evader reads no evader terms: the key is unknown */
    c = parse_ok("game: chase\nloss: {evader_wall: 1}\n");
    env = dg_env_create(c, &e);
    assert_non_null(env);
    assert_int_equal(dg_cfg_check_unused(c, &e), DG_ERR_CONFIG);
    assert_non_null(strstr(e.msg, "loss.evader_wall"));
    dg_env_free(env);
    dg_cfg_free(c);
}

/* the types with double values, required keys and the messages without a noun */
typedef struct wide {
    double x, y, v[3];
    int    nv, mode, n[2], req, axes[2], naxes;
} wide;

static const dg_key WIDE[] = {
    DG_K_F64("b.x", wide, x, 0.1, 0, INFINITY, 0, 0, "above 0"),
    DG_K_F64("b.y", wide, y, 6.283185307179586, 0, 7, 0, 1, "in (0, 7]"),
    {.name = "b.v", .type = DG_KEY_F64_ARRAY, .offset = offsetof(wide, v), .count_offset = offsetof(wide, nv),
     .min_n = 1, .max_n = 3, .lo = -1, .hi = INFINITY, .def_v = (const double[]){0.1, 0.2}, .def_n = 2, .doc = "d"},
    DG_K_ENUM("b.mode", wide, mode, 0, MODES, NULL, "how"),
    {.name = "b.n", .type = DG_KEY_INT_ARRAY, .offset = offsetof(wide, n), .min_n = 2, .max_n = 2, .lo = 2,
     .hi = 10, .def_v = (const double[]){3, 4}, .def_n = 2, .doc = "d"},
    {.name = "b.req", .type = DG_KEY_ENUM, .offset = offsetof(wide, req), .values = MODES, .req = 1, .doc = "d"},
    {.name = "b.axes", .type = DG_KEY_INT_ARRAY, .offset = offsetof(wide, axes), .count_offset = offsetof(wide, naxes),
     .min_n = 1, .max_n = 2, .lo = 0, .hi = 1, .def_str = "every axis", .doc = "d"},
};
#define NWIDE ((int)(sizeof WIDE / sizeof WIDE[0]))

static dg_status read_wide(const char *text, wide *w, dg_err *e) {
    dg_cfg *c = parse_ok(text);
    memset(w, 0, sizeof *w);
    dg_status st = dg_keys_read(c, WIDE, NWIDE, w, e);
    if (st == DG_OK) st = dg_cfg_check_unused(c, e);
    dg_cfg_free(c);
    return st;
}

static void expect_wide_error(const char *text, const char *msg) {
    wide w;
    dg_err e = {0};
    assert_int_equal(read_wide(text, &w, &e), DG_ERR_CONFIG);
    if (!strstr(e.msg, msg)) fail_msg("expected '%s' in '%s'", msg, e.msg);
}

static void test_f64_and_required(void **state) {
    (void)state;
    wide w;
    dg_err e = {0};
    assert_int_equal(read_wide("b: {req: fast}\n", &w, &e), DG_OK);
    assert_true(w.x == 0.1 && w.y == 6.283185307179586);  /* doubles, not floats */
    assert_true(w.nv == 2 && w.v[0] == 0.1 && w.v[1] == 0.2);
    assert_true(w.mode == 0 && w.n[0] == 3 && w.n[1] == 4 && w.req == 0 && w.naxes == 0);
    assert_int_equal(read_wide("b: {req: exact, x: 0.30000000000000004, y: 7, v: [1e-40, -1, 2.5],\n"
                               "     n: [2, 10], axes: [1]}\n", &w, &e), DG_OK);
    assert_true(w.x == 0.30000000000000004 && w.x != 0.3 && w.y == 7);
    assert_true(w.nv == 3 && w.v[0] == 1e-40 && w.v[1] == -1 && w.v[2] == 2.5);  /* 1e-40: not a float's */
    assert_true(w.req == 1 && w.n[1] == 10 && w.naxes == 1 && w.axes[0] == 1);
    expect_wide_error("b: {x: 1}\n", "t.yaml:1: missing required key 'b.req'");
    expect_wide_error("b: {req: fast, x: 0}\n", "t.yaml:1: key 'b.x': 0 is out of range, expected > 0");
    expect_wide_error("b: {req: fast, y: 7.5}\n", "key 'b.y': 7.5 is out of range, expected (0, 7]");
    expect_wide_error("b: {req: fast, x: [1]}\n", "key 'b.x': expected a number");
    expect_wide_error("b: {req: fast, v: [0, -2]}\n", "key 'b.v[1]': -2 is out of range, expected >= -1");
    expect_wide_error("b: {req: fast, v: []}\n", "key 'b.v': expected 1 to 3 numbers, got 0");
    expect_wide_error("b: {req: fast, v: [0, x]}\n", "key 'b.v[1]': expected a number");
    expect_wide_error("b: {req: fast, mode: slow}\n", "key 'b.mode': 'slow' is not one of: fast, exact");
    expect_wide_error("b:\n  req: fast\n  n:\n    - 2\n    - 11\n",
                      "t.yaml:5: key 'b.n[1]': 11 is out of range, expected [2, 10]");
    char b[128];
    assert_string_equal(dg_key_type_str(&WIDE[0], b, sizeof b), "float64");
    assert_string_equal(dg_key_default_str(&WIDE[0], b, sizeof b), "0.1");
    assert_string_equal(dg_key_range_str(&WIDE[0], b, sizeof b), "(0, inf)");
    assert_string_equal(dg_key_default_str(&WIDE[1], b, sizeof b), "6.283185307179586");
    assert_string_equal(dg_key_range_str(&WIDE[1], b, sizeof b), "(0, 7]");
    assert_string_equal(dg_key_type_str(&WIDE[2], b, sizeof b), "list of float64");
    assert_string_equal(dg_key_default_str(&WIDE[2], b, sizeof b), "[0.1, 0.2]");
    assert_string_equal(dg_key_range_str(&WIDE[2], b, sizeof b), "1 to 3 items, each [-1, inf)");
    assert_string_equal(dg_key_default_str(&WIDE[5], b, sizeof b), "required");
    assert_string_equal(dg_key_default_str(&WIDE[6], b, sizeof b), "every axis");
}

/* the HJI games' keys: one declaration per name (the same type and bounds in every game), and a
 * problem made from `game: NAME` alone has the declared defaults */
static void test_hji_keys(void **state) {
    (void)state;
    int nc;
    const dg_key *common = dg_hji_keys(&nc);
    assert_true(nc > 10);
    assert_string_equal(common[0].name, "game");
    dg_key all[16][64];
    int n[8], ng = 0;
    for (; dg_hji_problem_name(ng); ng++) {
        assert_true(ng < 8);
        n[ng] = dg_hji_game_keys(dg_hji_problem_name(ng), all[ng], 64);
        assert_true(n[ng] > 4 && n[ng] <= 64);
        for (int i = 0; i < n[ng]; i++) {
            for (int j = 0; j < i; j++)
                if (!strcmp(all[ng][i].name, all[ng][j].name)) fail_msg("%s twice", all[ng][i].name);
            for (int j = 0; j < nc; j++)
                if (!strcmp(all[ng][i].name, common[j].name)) fail_msg("%s twice", common[j].name);
        }
    }
    assert_int_equal(dg_hji_game_keys("checkers", all[0], 64), -1);
    assert_null(dg_hji_game_summary("checkers"));
    assert_non_null(dg_hji_game_summary("air3d"));
    for (int g = 0; g < ng; g++)
        for (int h = 0; h < g; h++)
            for (int i = 0; i < n[g]; i++)
                for (int j = 0; j < n[h]; j++) {
                    const dg_key *a = &all[g][i], *b = &all[h][j];
                    if (strcmp(a->name, b->name) != 0 || !strncmp(a->name, "grid.", 5)) continue;
                    if (a->type != b->type || a->lo != b->lo || a->hi != b->hi || a->lo_open != b->lo_open ||
                        a->hi_open != b->hi_open)
                        fail_msg("%s: %s and %s declare different bounds", a->name, dg_hji_problem_name(g),
                                 dg_hji_problem_name(h));
                }
    for (int g = 0; g < ng; g++) {
        char text[64];
        snprintf(text, sizeof text, "game: %s\ngrid: {n: [", dg_hji_problem_name(g));
        const dg_key *k = all[g];  /* t_end, grid.min, grid.max, grid.n, then the constants */
        assert_string_equal(k[3].name, "grid.n");
        for (int i = 0; i < k[3].def_n; i++) strcat(text, i ? ", 3" : "3");  /* a small grid */
        strcat(text, "]}\n");
        dg_cfg *c = parse_ok(text);
        dg_err e = {0};
        dg_hji_problem *p = dg_hji_problem_load_points(c, &e);   /* (collision9d: 9 axes, hji learn's) */
        if (!p) fail_msg("%s: %s", text, e.msg);
        assert_true(p->t_end == k[0].def);
        assert_int_equal(p->grid.ndim, k[1].def_n);
        for (int i = 0; i < p->grid.ndim; i++) assert_true(p->grid.lo[i] == k[1].def_v[i]);
        for (int i = 4; i < n[g]; i++)   /* the constants (a linear game's matrices aside) */
            if (k[i].type == DG_KEY_F64 && k[i].offset >= offsetof(dg_hji_problem, param) &&
                k[i].offset < offsetof(dg_hji_problem, param) + sizeof p->param)
                assert_true(dg_hji_problem_param(p, k[i].name) == k[i].def);
        /* a game of kind's tube by default; the noisy games (merton, lqg) are games of degree: brs */
        assert_true(p->opts.cfl == 0.75 &&
                    p->opts.mode == (p->payoff == DG_HJI_PAYOFF_KIND ? DG_HJI_MODE_BRT : DG_HJI_MODE_BRS));
        dg_hji_problem_free(p);
        dg_cfg_free(c);
    }
}

static void test_train_opts_default(void **state) {
    (void)state;
    dg_train_opts a, b;
    dg_train_opts_default(&a);
    dg_cfg *c = parse_ok("game: reach\n");
    dg_err e = {0};
    assert_int_equal(dg_train_opts_read(c, &b, &e), DG_OK);
    assert_memory_equal(&a, &b, sizeof a);
    assert_int_equal(a.batch, 64);
    assert_int_equal(a.nhidden, 2);
    assert_true(a.lr == (double)1e-3f);
    dg_cfg_free(c);
}

/* A double key: read as written (no float rounding), beyond the float range, open ends, listed. */
typedef struct dthing {
    double d;
} dthing;

static void test_f64_key(void **state) {
    (void)state;
    static const dg_key K = DG_K_F64("b.d", dthing, d, 0.1, 0, INFINITY, 0, 0, "a rate");
    static const struct { const char *text; dg_status st; double want; } cases[] = {
        {"b: {}\n", DG_OK, 0.1},           {"b: {d: 0.3}\n", DG_OK, 0.3},
        {"b: {d: 1e300}\n", DG_OK, 1e300}, {"b: {d: 0}\n", DG_ERR_CONFIG, 0},
        {"b: {d: x}\n", DG_ERR_CONFIG, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dg_cfg *c = parse_ok(cases[i].text);
        dthing t = {-1};
        dg_err e = {0};
        assert_int_equal(dg_keys_read(c, &K, 1, &t, &e), cases[i].st);
        if (cases[i].st == DG_OK) assert_true(t.d == cases[i].want);
        else assert_non_null(strstr(e.msg, "b.d"));
        dg_cfg_free(c);
    }
    char buf[64];
    assert_string_equal(dg_key_type_str(&K, buf, sizeof buf), "float64");
    assert_string_equal(dg_key_default_str(&K, buf, sizeof buf), "0.1");
    assert_string_equal(dg_key_range_str(&K, buf, sizeof buf), "(0, inf)");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f64_key),
        cmocka_unit_test(test_defaults_and_values), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_listing),             cmocka_unit_test(test_games_agree),
        cmocka_unit_test(test_games_defaults),      cmocka_unit_test(test_loss_like),
        cmocka_unit_test(test_train_opts_default), cmocka_unit_test(test_f64_and_required),
        cmocka_unit_test(test_hji_keys),           cmocka_unit_test(test_check_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
