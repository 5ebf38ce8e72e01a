/* Live episodes (include/difgames/live.h): one step at a time, they are dg_rollout's episode to the
 * bit; a person's action replaces a player's; bodies move where the mouse puts them. And the replay
 * view that keeps an episode's bodies in sight (dg_replay_view_fit). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "difgames/difgames.h"

static const char REACH[] = "game: reach\nseed: 3\nenv: {horizon: 12}\npolicy: {hidden: [8, 8]}\n";
static const char DUEL[] = "game: duel_simple\nseed: 1\nenv: {horizon: 30}\npolicy: {hidden: [8]}\n";
static const char CHASE[] = "game: chase\nseed: 1\nenv: {horizon: 10}\npolicy: {hidden: [8]}\n";
static const char MERTON[] = "game: merton\nseed: 1\nenv: {horizon: 6}\npolicy: {hidden: [8]}\n";
/* three learned players of a general-sum model game */
static const char NASH3[] =
    "game: model\nseed: 0\nmodel:\n  name: three\n  state: {x: [-2, 2], y: [-2, 2], z: [-2, 2]}\n"
    "  inputs: {u: {lo: -4, hi: 4}, v: {lo: -4, hi: 4}, w: {lo: -4, hi: 4}}\n"
    "  dynamics: {x: 0.2*x + u, y: 0.2*y + 0.4*x + v, z: 0.2*z - 0.4*y + w}\n  observe: [x, y, z]\n"
    "  costs: {xx: x^2, yy: y^2, zz: z^2}\n  players:\n    p1: {input: u, costs: {xx: 1}}\n"
    "    p2: {input: v, costs: {yy: 1}}\n    p3: {input: w, costs: {zz: 1}}\n"
    "  reset:\n    - {x: [-1, 1], y: [-1, 1], z: [-1, 1]}\n"
    "env: {dt: 0.1, horizon: 8}\nloss: {xx: 1, yy: 1, zz: 1}\npolicy: {hidden: [8]}\n";
static const char PIXEL[] = "game: pixel\nseed: 1\nenv: {horizon: 6}\npolicy: {hidden: [8]}\n";

typedef struct game {
    dg_run     r;
    dg_policy  m;
    dg_params *p;
    float     *state, *aux;
} game;

static void load(game *g, const char *text, int B) {
    dg_err e = {0};
    if (dg_run_parse(&g->r, text, strlen(text), "live.yaml", NULL, 0, &e) != DG_OK) fail_msg("%s", e.msg);
    assert_int_equal(dg_policy_create(g->r.env, g->r.opts.hidden, g->r.opts.nhidden, &g->m, &g->p, &e), DG_OK);
    dg_rng rng;
    dg_rng_seed(&rng, 5);
    dg_policy_reset_params(&g->m, g->p, &rng);
    assert_int_equal(dg_run_init_draw(g->r.env, 11, B, &g->state, &g->aux, &e), DG_OK);
}

static void unload(game *g) {
    free(g->state);
    free(g->aux);
    dg_params_free(g->p);
    dg_run_free(&g->r);
}

/* H steps played one at a time on the noise stream nz (NULL: the default one): dg_rollout_noise's
 * trajectory and terms to the bit; with the default stream also dg_run_eval's metrics */
static void same_as_rollout_noise(const char *text, int B, const dg_noise *nz) {
    game g;
    load(&g, text, B);
    const dg_env *env = g.r.env;
    const int H = env->horizon, S = env->state_dim;
    dg_err e = {0};
    dg_live *l = dg_live_create(env, &g.m, g.p, B, &e);
    assert_non_null(l);
    assert_int_equal(dg_live_reset(l, g.state, g.aux, &e), DG_OK);
    if (nz) dg_live_noise(l, nz);
    float terms0[DG_LOSS_MAX_TERMS] = {1};
    dg_live_terms(l, terms0);
    for (int i = 0; i < env->nterms; i++) assert_true(terms0[i] == 0.0f);
    for (int t = 0; t < H; t++) assert_int_equal(dg_live_step(l, -1, NULL, &e), DG_OK);
    assert_int_equal(dg_live_steps(l), H);
    assert_int_equal(dg_live_step(l, -1, NULL, &e), DG_ERR_ARG);  /* past the horizon */

    dg_ctx *ctx = dg_ctx_create((size_t)64 << 20);
    float *traj = malloc((size_t)(H + 1) * B * S * sizeof(float)), terms[DG_LOSS_MAX_TERMS], live[DG_LOSS_MAX_TERMS];
    dg_tensor *loss = dg_rollout_noise(ctx, env, &g.m, g.p, g.state, g.aux, B, 1.0f / B, terms, traj, B, nz);
    assert_non_null(loss);
    assert_memory_equal(dg_live_traj(l), traj, (size_t)(H + 1) * B * S * sizeof(float));
    dg_live_terms(l, live);
    assert_memory_equal(live, terms, (size_t)env->nterms * sizeof(float));
    if (env->noise_dim > 0) {  /* another stream is another episode */
        dg_ctx_reset(ctx);
        const dg_noise other = {nz ? nz->key + 1 : 1, 0};
        float *alt = malloc((size_t)(H + 1) * B * S * sizeof(float));
        assert_non_null(dg_rollout_noise(ctx, env, &g.m, g.p, g.state, g.aux, B, 1.0f / B, terms, alt, B, &other));
        assert_true(memcmp(alt + (size_t)H * B * S, traj + (size_t)H * B * S, (size_t)B * S * sizeof(float)) != 0);
        free(alt);
    }
    dg_eval_result res;
    assert_int_equal(dg_run_eval(env, &g.m, g.p, g.state, g.aux, B, 0, &res, &e), DG_OK);
    double m[DG_MAX_METRICS];
    dg_live_metrics(l, m);
    for (int i = 0; i < env->nmetrics && !nz; i++)  /* dg_run_eval plays the default stream */
        assert_true(m[i] == res.metrics[i] || (isnan(m[i]) && isnan(res.metrics[i])));
    /* one row's states, as a replay track reads them */
    float *row = malloc((size_t)(H + 1) * S * sizeof(float));
    dg_live_row(l, B - 1, row);
    for (int t = 0; t <= H; t++)
        assert_memory_equal(row + (size_t)t * S, traj + ((size_t)t * B + B - 1) * S, (size_t)S * sizeof(float));
    /* a reset starts over */
    assert_int_equal(dg_live_reset(l, g.state, g.aux, &e), DG_OK);
    assert_int_equal(dg_live_steps(l), 0);
    free(row);
    free(traj);
    dg_ctx_free(ctx);
    dg_live_free(l);
    unload(&g);
}

static void same_as_rollout(const char *text, int B) { same_as_rollout_noise(text, B, NULL); }

static void test_one_player_as_rollout(void **state) {
    (void)state;
    same_as_rollout(REACH, 3);
}

static void test_two_players_as_rollout(void **state) {
    (void)state;
    same_as_rollout(DUEL, 4);
}

/* three learned players act side by side, as the trainer's episode has them */
static void test_three_players_as_rollout(void **state) {
    (void)state;
    same_as_rollout(NASH3, 3);
}

/* a noisy game steps with noise: the default stream's, then another key's */
static void test_noise_as_rollout(void **state) {
    (void)state;
    same_as_rollout(MERTON, 5);
    const dg_noise nz = {dg_noise_key(7, 1), 0};
    same_as_rollout_noise(MERTON, 5, &nz);
}

/* a person's action: reach's agent pushed right accelerates right only; duel's evader, held up,
 * climbs v_e dt a step while the learned pursuer plays on; values beyond [-1, 1] are clamped */
static void test_person_acts(void **state) {
    (void)state;
    game g;
    dg_err e = {0};
    load(&g, REACH, 1);
    dg_live *l = dg_live_create(g.r.env, &g.m, g.p, 1, &e);
    assert_int_equal(dg_live_reset(l, g.state, g.aux, &e), DG_OK);
    const float right[2] = {7.0f, 0.0f};  /* clamped to 1 */
    for (int t = 0; t < 4; t++) assert_int_equal(dg_live_step(l, 0, right, &e), DG_OK);
    const float *tr = dg_live_traj(l), *s4 = tr + 4 * g.r.env->state_dim;
    assert_true(s4[0] > tr[0] + 0.05f);
    assert_true(s4[1] == tr[1]);
    assert_int_equal(dg_live_step(l, 1, right, &e), DG_ERR_ARG);  /* reach has one player */
    assert_int_equal(dg_live_step(l, 0, NULL, &e), DG_ERR_ARG);
    dg_live_free(l);
    /* a clamped push is the push of 1 */
    l = dg_live_create(g.r.env, &g.m, g.p, 1, &e);
    assert_int_equal(dg_live_reset(l, g.state, g.aux, &e), DG_OK);
    const float one[2] = {1.0f, 0.0f};
    for (int t = 0; t < 4; t++) assert_int_equal(dg_live_step(l, 0, one, &e), DG_OK);
    assert_memory_equal(dg_live_traj(l) + 4 * g.r.env->state_dim, s4, 4 * sizeof(float));
    dg_live_free(l);
    unload(&g);

    load(&g, DUEL, 1);
    l = dg_live_create(g.r.env, &g.m, g.p, 1, &e);
    assert_int_equal(dg_live_reset(l, g.state, g.aux, &e), DG_OK);
    const float up[2] = {0.0f, 1.0f};
    for (int t = 1; t <= 5; t++) {
        assert_int_equal(dg_live_step(l, 1, up, &e), DG_OK);
        const float *a = dg_live_traj(l) + (size_t)(t - 1) * 4, *b = a + 4;
        assert_true(b[2] == a[2]);
        assert_float_equal(b[3] - a[3], 0.6f * 0.02f, 1e-6);
        assert_true(b[0] != a[0] || b[1] != a[1]);  /* the pursuer's policy moves it */
    }
    /* the exact capture time of duel_simple from the start */
    const float *s0 = dg_live_traj(l);
    assert_non_null(g.r.env->game->equilibrium_time);
    const double d0 = hypot((double)s0[2] - s0[0], (double)s0[3] - s0[1]);
    assert_float_equal(g.r.env->game->equilibrium_time(g.r.env, s0, NULL), (d0 - 0.1) / 0.4, 1e-12);
    dg_live_free(l);
    unload(&g);
}

/* dg_live_place finds the columns a body copies: reach's goal (aux), chase's evader (state), pixel's
 * goal (aux, and the target image completed again); a body of no columns is refused */
static void test_place_bodies(void **state) {
    (void)state;
    game g;
    dg_err e = {0};
    float xy[2 * DG_MAX_BODIES];
    int goal[DG_MAX_BODIES];
    load(&g, REACH, 2);
    dg_live *l = dg_live_create(g.r.env, &g.m, g.p, 2, &e);
    assert_int_equal(dg_live_reset(l, g.state, g.aux, &e), DG_OK);
    assert_int_equal(dg_live_step(l, -1, NULL, &e), DG_OK);
    assert_int_equal(dg_live_place(l, 1, 1, 0.5f, -0.25f, &e), DG_OK);
    const float *a = dg_live_aux(l) + g.r.env->aux_dim;
    assert_true(a[0] == 0.5f && a[1] == -0.25f);
    assert_true(dg_live_aux(l)[0] == g.aux[0]);  /* row 0 untouched */
    /* the history: step 0 keeps the drawn goal, step 1 (where it was moved) and later the new one */
    const int A = g.r.env->aux_dim;
    assert_memory_equal(dg_live_aux_at(l, 0), g.aux, 2 * (size_t)A * sizeof(float));
    assert_true(dg_live_aux_at(l, 1)[A] == 0.5f && dg_live_aux_at(l, 1)[A + 1] == -0.25f);
    assert_true(dg_live_aux_at(l, 1)[0] == g.aux[0]);
    assert_null(dg_live_aux_at(l, 2));
    assert_null(dg_live_aux_at(l, -1));
    assert_int_equal(dg_live_step(l, -1, NULL, &e), DG_OK);
    assert_memory_equal(dg_live_aux_at(l, 2), dg_live_aux(l), 2 * (size_t)A * sizeof(float));
    assert_int_equal(dg_live_place(l, 1, 1, -0.125f, 0.375f, &e), DG_OK);  /* moved again at step 2 */
    assert_true(dg_live_aux_at(l, 1)[A] == 0.5f && dg_live_aux_at(l, 2)[A] == -0.125f);
    assert_int_equal(dg_live_place(l, 0, 0, -0.5f, 0.75f, &e), DG_OK);  /* the agent: state columns */
    const float *s = dg_live_traj(l) + 2 * 2 * g.r.env->state_dim;  /* step 2, row 0 */
    assert_true(s[0] == -0.5f && s[1] == 0.75f);
    assert_int_equal(dg_live_place(l, 0, 5, 0, 0, &e), DG_ERR_ARG);
    assert_int_equal(dg_live_place(l, 2, 0, 0, 0, &e), DG_ERR_ARG);
    assert_int_equal(dg_live_place(l, 0, 0, NAN, 0, &e), DG_ERR_ARG);
    dg_live_free(l);
    unload(&g);

    load(&g, CHASE, 1);
    l = dg_live_create(g.r.env, &g.m, g.p, 1, &e);
    assert_int_equal(dg_live_reset(l, g.state, g.aux, &e), DG_OK);
    assert_int_equal(dg_live_place(l, 0, 1, 0.25f, 0.5f, &e), DG_OK);
    g.r.env->game->bodies(g.r.env, dg_live_traj(l), dg_live_aux(l), xy, goal);
    assert_true(xy[2] == 0.25f && xy[3] == 0.5f);
    dg_live_free(l);
    unload(&g);

    load(&g, PIXEL, 1);
    const dg_env *env = g.r.env;
    l = dg_live_create(env, &g.m, g.p, 1, &e);
    assert_int_equal(dg_live_reset(l, g.state, g.aux, &e), DG_OK);
    assert_int_equal(dg_live_place(l, 0, 1, 0.5f, 0.5f, &e), DG_OK);
    float *want = malloc((size_t)env->aux_dim * sizeof(float));
    want[0] = want[1] = 0.5f;
    env->game->complete_aux(env, 1, want);  /* the target image of a goal there */
    assert_memory_equal(dg_live_aux(l), want, (size_t)env->aux_dim * sizeof(float));
    assert_memory_equal(dg_live_aux_at(l, 0), want, (size_t)env->aux_dim * sizeof(float));
    free(want);
    dg_live_free(l);
    unload(&g);
}

static void test_bad_arguments(void **state) {
    (void)state;
    game g;
    dg_err e = {0};
    load(&g, REACH, 1);
    assert_null(dg_live_create(g.r.env, &g.m, g.p, 0, &e));
    assert_int_equal(e.status, DG_ERR_ARG);
    assert_null(dg_live_create(NULL, &g.m, g.p, 1, &e));
    dg_policy two = g.m;
    two.n = 2;  /* policies that are not the game's */
    assert_null(dg_live_create(g.r.env, &two, g.p, 1, &e));
    dg_live *l = dg_live_create(g.r.env, &g.m, g.p, 1, &e);
    assert_int_equal(dg_live_reset(l, g.state, NULL, &e), DG_ERR_ARG);  /* reach has a goal */
    dg_live_free(l);
    dg_live_free(NULL);
    assert_true(dg_live_memory(g.r.env, &g.m, 8) > dg_live_memory(g.r.env, &g.m, 1));
    unload(&g);
}

/* the replay's view: the arena while the bodies stay in it, else a square around all of them */
static void test_view_fit(void **state) {
    (void)state;
    game g;
    dg_err e = {0};
    load(&g, DUEL, 1);
    const dg_env *env = g.r.env;
    float traj[3 * 4] = {0, 0, 0.5f, 0.5f, 0.1f, 0, 0.6f, 0.5f, 0.2f, 0, 2.5f, -1.5f};
    dg_replay_track *tr = dg_replay_track_create(env, traj, NULL, 3, &e);
    assert_non_null(tr);
    dg_replay_view v;
    dg_replay_view_fit(tr, 0, 1, &v);
    assert_true(v.cx == 0 && v.cy == 0 && v.half == 1.08f);
    dg_replay_view_fit(tr, 0, 2, &v);
    assert_true(v.cx - v.half < -1.08f && v.cx + v.half > 2.5f);  /* every body of steps 0..2 inside */
    assert_true(v.cy - v.half < -1.5f && v.cy + v.half > 1.08f);
    /* a frame through it draws the body that left the arena: its disk at its pixel */
    dg_image *img = dg_image_create(200, 200 + DG_REPLAY_HEADER, 0);
    dg_replay_draw_view(img, env, tr, NULL, 0.08f, 2, NULL, &v);
    const int px = (int)((2.5f - v.cx + v.half) / (2 * v.half) * 200);
    const int py = DG_REPLAY_HEADER + (int)((v.half - (-1.5f - v.cy)) / (2 * v.half) * 200);
    assert_int_equal(dg_image_get(img, px, py), 0x33c3ff);  /* the evader's colour */
    /* dg_replay_draw: the same frame (it fits steps 0..t) */
    dg_image *img2 = dg_image_create(200, 200 + DG_REPLAY_HEADER, 0);
    dg_replay_draw(img2, env, tr, NULL, 0.08f, 2, NULL);
    assert_memory_equal(img->rgb, img2->rgb, (size_t)img->w * img->h * 3);
    dg_image_free(img);
    dg_image_free(img2);
    dg_replay_track_free(tr);
    unload(&g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_player_as_rollout), cmocka_unit_test(test_two_players_as_rollout),
        cmocka_unit_test(test_three_players_as_rollout), cmocka_unit_test(test_noise_as_rollout),
        cmocka_unit_test(test_person_acts),           cmocka_unit_test(test_place_bodies),
        cmocka_unit_test(test_bad_arguments),         cmocka_unit_test(test_view_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
