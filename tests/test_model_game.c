/* A game written as a model file (docs/models.md) is named as its file says: the env's descriptor and
 * the grid problem carry model.name and the state's names, so every output that prints a game's name
 * or an axis (JSON, loss.png, replays, the viewer, value files, hji plot) prints them; its source
 * ("model") tells it from a built-in of the same name; draw.bodies may name the bodies (play --as). */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "difgames/difgames.h"

/* A small model game: a point mass to a goal; interpreted (compile: false), so nothing is written to
 * the compiled expressions' cache. NAME and DRAW are its model.name line and its draw section. */
#define MODEL(NAME, DRAW)                                                                             \
    "game: model\n"                                                                                   \
    "model:\n" NAME                                                                                   \
    "  compile: false\n"                                                                              \
    "  state: {x: [-1, 1], y: [-1, 1]}\n"                                                             \
    "  episode: {name: goal, vars: [gx, gy]}\n"                                                       \
    "  inputs: {u: {dim: 2}}\n"                                                                       \
    "  dynamics: {x: u1, y: u2}\n"                                                                    \
    "  observe: [x, y, gx, gy]\n"                                                                     \
    "  costs: {goal: (x - gx)^2 + (y - gy)^2}\n"                                                      \
    "  reset:\n"                                                                                      \
    "    - {x: [-0.9, -0.6], y: [-0.5, 0.5], gx: [0.6, 0.9], gy: [-0.5, 0.5]}\n" DRAW                  \
    "env: {dt: 0.05, horizon: 60}\n"
#define DRAW_NAMED "  draw: {bodies: {agent: [x, y]}, goal: [gx, gy]}\n"

static dg_cfg *cfg_of(const char *text) {
    dg_err e = {0};
    dg_cfg *c = dg_cfg_parse(text, strlen(text), "m.yaml", &e);
    if (!c) fail_msg("config: %s", e.msg);
    return c;
}

/* the env of yaml (fails the test when it cannot be made); its config in *cfg */
static dg_env *env_of(const char *yaml, dg_cfg **cfg) {
    dg_err e = {0};
    *cfg = cfg_of(yaml);
    dg_env *env = dg_env_create(*cfg, &e);
    if (!env) fail_msg("env: %s", e.msg);
    return env;
}

/* the message of the error that yaml's env gives (the env must fail) */
static void env_error(const char *yaml, char *msg, size_t cap) {
    dg_err e = {0};
    dg_cfg *c = cfg_of(yaml);
    dg_env *env = dg_env_create(c, &e);
    if (env) fail_msg("expected an error for:\n%s", yaml);
    snprintf(msg, cap, "%s", e.msg);
    dg_cfg_free(c);
}

/* model.name is the game's name; without it the game is "model"; the source says where it comes from */
static void test_model_named(void **state) {
    (void)state;
    dg_cfg *c;
    dg_env *env = env_of(MODEL("  name: cart\n", DRAW_NAMED), &c);
    assert_string_equal(env->game->name, "cart");
    assert_string_equal(dg_env_source(env), "model");
    dg_env_free(env);
    dg_cfg_free(c);
    env = env_of(MODEL("", DRAW_NAMED), &c);
    assert_string_equal(env->game->name, "model");
    assert_string_equal(dg_env_source(env), "model");
    dg_env_free(env);
    dg_cfg_free(c);
    env = env_of("game: reach\n", &c);  /* a built-in of that name stays the built-in */
    assert_string_equal(dg_env_source(env), "builtin");
    dg_env_free(env);
    dg_cfg_free(c);
    char msg[DG_ERR_LEN];
    env_error(MODEL("  name: two words\n", DRAW_NAMED), msg, sizeof msg);
    assert_non_null(strstr(msg, "key 'model.name': 'two words' is not a game's name"));
    env_error(MODEL("  name: a_name_of_more_than_31_characters\n", DRAW_NAMED), msg, sizeof msg);
    assert_non_null(strstr(msg, "key 'model.name'"));
}

/* the header of step 0 of env's replay into img (22 rows: DG_REPLAY_HEADER) */
static void header_of(const dg_env *env, dg_image *img) {
    dg_err e = {0};
    dg_render_grid *g = dg_render_grid_create(16, 16, &e);
    assert_non_null(g);
    dg_real traj[16] = {0}, aux[16] = {0}, heat[256];
    dg_replay_frame(img, env, g, 0.08f, traj, aux, 0, heat);
    dg_render_grid_free(g);
}

/* a replay's header line names the game as its model file does: a model called reach reads as the
 * built-in reach does (the same pixels), one called cart otherwise */
static void test_model_replay_header(void **state) {
    (void)state;
    dg_cfg *cb, *cm, *cc;
    dg_env *builtin = env_of("game: reach\n", &cb);
    dg_env *model = env_of(MODEL("  name: reach\n", DRAW_NAMED), &cm);
    dg_env *cart = env_of(MODEL("  name: cart\n", DRAW_NAMED), &cc);
    dg_image *a = dg_image_create(160, 160 + DG_REPLAY_HEADER, 0), *b = dg_image_create(160, 160 + DG_REPLAY_HEADER, 0);
    dg_image *c = dg_image_create(160, 160 + DG_REPLAY_HEADER, 0);
    assert_true(a && b && c);
    header_of(builtin, a);
    header_of(model, b);
    header_of(cart, c);
    const size_t band = (size_t)DG_REPLAY_HEADER * 160 * 3;
    assert_memory_equal(a->rgb, b->rgb, band);
    assert_memory_not_equal(a->rgb, c->rgb, band);
    dg_image_free(a);
    dg_image_free(b);
    dg_image_free(c);
    dg_env_free(builtin);
    dg_env_free(model);
    dg_env_free(cart);
    dg_cfg_free(cb);
    dg_cfg_free(cm);
    dg_cfg_free(cc);
}

/* draw.bodies as a map names the bodies (the goal last, as "goal"); the list form of earlier files
 * stays valid, unnamed; a body cannot be called goal */
static void test_model_bodies(void **state) {
    (void)state;
    dg_cfg *c;
    dg_env *env = env_of(MODEL("  name: cart\n", DRAW_NAMED), &c);
    assert_non_null(env->game->body_names);
    assert_string_equal(env->game->body_names, "agent,goal");
    dg_env_free(env);
    dg_cfg_free(c);
    env = env_of(MODEL("  name: cart\n", "  draw: {bodies: {pursuer: [x, y], evader: [gx, gy]}}\n"), &c);
    assert_string_equal(env->game->body_names, "pursuer,evader");
    dg_real xy[2 * DG_MAX_BODIES], s[2] = {0.25f, 0.5f}, aux[2] = {-0.5f, 0.75f};
    int goal[DG_MAX_BODIES];
    assert_int_equal(env->game->bodies(env, s, aux, xy, goal), 2);
    assert_true(xy[0] == 0.25f && xy[1] == 0.5f && xy[2] == -0.5f && xy[3] == 0.75f && !goal[0] && !goal[1]);
    dg_env_free(env);
    dg_cfg_free(c);
    env = env_of(MODEL("  name: cart\n", "  draw: {bodies: [[x, y]], goal: [gx, gy]}\n"), &c);
    assert_null(env->game->body_names);
    assert_non_null(env->game->bodies);
    dg_env_free(env);
    dg_cfg_free(c);
    char msg[DG_ERR_LEN];
    env_error(MODEL("", "  draw: {bodies: {goal: [x, y]}}\n"), msg, sizeof msg);
    assert_non_null(strstr(msg, "key 'model.draw.bodies.goal': 'goal' names draw.goal"));
    env_error(MODEL("", "  draw: {bodies: {9lives: [x, y]}}\n"), msg, sizeof msg);
    assert_non_null(strstr(msg, "key 'model.draw.bodies.9lives': a body's name is"));
}

/* the model game as listings show it: env.dt and env.horizon, then model.name and model.compile */
static void test_model_listing(void **state) {
    (void)state;
    const dg_game *g = dg_game_model();
    assert_string_equal(g->name, "model");
    assert_null(dg_game_find("model"));  /* not in the registry: no game of its own to make */
    dg_key keys[8];
    const int n = dg_game_keys(g, keys, 8);
    assert_int_equal(n, 4);
    assert_string_equal(keys[2].name, "model.name");
    assert_string_equal(keys[3].name, "model.compile");
}

/* The grid solver's side: the problem is named by model.name, its grid's axes by the state's names,
 * and a value file keeps both with the source: a model called air3d is not the built-in air3d. */
static void test_model_hji_names(void **state) {
    (void)state;
    static const char MODEL_AIR3D[] =
        "game: model\n"
        "model:\n"
        "  name: air3d\n"
        "  compile: false\n"
        "  constants: {va: 5, vb: 5, radius: 5}\n"
        "  state: {x: [-6, 20], y: [-10, 10], psi: [0, 6.283185307179586]}\n"
        "  periodic: [psi]\n"
        "  inputs:\n"
        "    a: {dim: 1, lo: -1, hi: 1, role: max}\n"
        "    b: {dim: 1, lo: -1, hi: 1, role: min}\n"
        "  dynamics:\n"
        "    x: -va + vb*cos(psi) + a*y\n"
        "    y: vb*sin(psi) - a*x\n"
        "    psi: b - a\n"
        "  target: sqrt(x^2 + y^2) - radius\n"
        "t_end: 1\n"
        "grid: {min: [-6, -10, 0], max: [20, 10, 6.283185307179586], n: [9, 8, 7]}\n";
    static const char BUILTIN_AIR3D[] = "game: air3d\nt_end: 1\ngrid: {n: [9, 8, 7]}\n";
    dg_err e = {0};
    dg_cfg *cm = cfg_of(MODEL_AIR3D), *cb = cfg_of(BUILTIN_AIR3D);
    dg_hji_problem *pm = dg_hji_problem_load(cm, &e);
    if (!pm) fail_msg("model: %s", e.msg);
    dg_hji_problem *pb = dg_hji_problem_load(cb, &e);
    if (!pb) fail_msg("built-in: %s", e.msg);
    assert_string_equal(pm->name, "air3d");
    assert_string_equal(dg_hji_problem_source(pm), "model");
    assert_string_equal(dg_hji_problem_source(pb), "builtin");
    const char *want[] = {"x", "y", "psi"};
    char buf[32];
    for (int k = 0; k < 3; k++) {
        assert_string_equal(pm->grid.name[k], want[k]);
        assert_string_equal(pb->grid.name[k], want[k]);
        assert_string_equal(dg_hji_grid_axis_name(&pm->grid, k, buf, sizeof buf), want[k]);
    }
    char dir[] = "/tmp/dg_model_game_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/v.safetensors", dir);
    double *v = calloc((size_t)pm->grid.nodes, sizeof *v);
    assert_non_null(v);
    const double t = 1;
    if (dg_hji_value_write(path, pm, 1, &t, NULL, v, 0, NULL, &e) != DG_OK) fail_msg("write: %s", e.msg);
    dg_hji_value vf;
    if (dg_hji_value_open(path, &vf, &e) != DG_OK) fail_msg("open: %s", e.msg);
    assert_string_equal(vf.game, "air3d");
    assert_string_equal(vf.source, "model");
    for (int k = 0; k < 3; k++) assert_string_equal(vf.grid.name[k], want[k]);
    assert_int_equal(dg_hji_value_check(&vf, pm, "m.yaml", &e), DG_OK);
    assert_int_equal(dg_hji_value_check(&vf, pb, "b.yaml", &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "solved for game 'air3d' (a model file's), but b.yaml is 'air3d' (the built-in)"));
    dg_hji_value_close(&vf);
    unlink(path);
    rmdir(dir);
    free(v);
    dg_hji_problem_free(pm);
    dg_hji_problem_free(pb);
    dg_cfg_free(cm);
    dg_cfg_free(cb);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_named),
        cmocka_unit_test(test_model_replay_header),
        cmocka_unit_test(test_model_bodies),
        cmocka_unit_test(test_model_listing),
        cmocka_unit_test(test_model_hji_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
