/* The learner's own discrete game solved by dynamic programming (certify_dp.h; issue 26, sections 1,
 * 3 and 6). Two exact anchors: duel_simple's discrete distance game, whose upper and lower values
 * follow d' = max(d - v_p dt, 0) + v_e dt and d' = max(d - (v_p - v_e) dt, 0) with the game's own
 * cost sqrt(d'^2 + 1e-6) / H per step; and a damped point mass with quadratic costs written as a
 * model file (tests/data/lq_mass.yaml), whose value is the finite-horizon Riccati recursion of its
 * own dt step. The quick group solves small versions; the slow group runs the refinement studies at
 * the anchors' tolerances. Also: the per-row costs are the batch means' rows, and what the solver
 * refuses. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "difgames/difgames.h"
#include "util/duel_players.h"
#include "util/tier.h"

/* duel_simple's discrete game at test scale: steps of 0.2 s, so that capture (the pursuer within a
 * step of the evader) shows in a few steps and on grids of tens of nodes an axis */
#define DUEL(H) "game: duel_simple\nenv: {dt: 0.2, horizon: " #H ", distance: [0.4, 0.6]}\n"

static dg_env *env_of(const char *text) {
    dg_err e = {0};
    dg_cfg *cfg = dg_cfg_parse(text, strlen(text), "test", &e);
    dg_env *env = cfg ? dg_env_create(cfg, &e) : NULL;
    if (!env) fail_msg("%s", e.msg);
    dg_cfg_free(cfg);
    return env;
}

/* tests/data/NAME, from DG_TEST_DATA (set by ctest) or the source tree */
static dg_env *env_file(const char *name) {
    char path[1024];
    const char *dir = getenv("DG_TEST_DATA");
    snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : "tests/data", name);
    dg_err e = {0};
    dg_cfg *cfg = dg_cfg_load(path, &e);
    dg_env *env = cfg ? dg_env_create(cfg, &e) : NULL;
    if (!env) fail_msg("%s", e.msg);
    dg_cfg_free(cfg);
    return env;
}

/* the duel's exact discrete value from distance d: upper (the pursuer commits first) or lower */
static double duel_exact(const dg_env *env, double d, int upper) {
    const double vp = 1.0, ve = 0.6, dt = env->dt;  /* duel_simple's default speeds */
    const int H = env->horizon;
    double s = 0;
    for (int t = 0; t < H; t++) {
        d = upper ? fmax(d - vp * dt, 0) + ve * dt : fmax(d - (vp - ve) * dt, 0);
        s += sqrt(d * d + 1e-6) / H;
    }
    return s;
}

/* lq_mass's exact value s' P_0 s from the Riccati recursion of its own step (v' = damping v + dt
 * accel u, x' = x + dt v'; per step (goal x'^2 + energy u^2) / H, terminal final (x^2 + v^2)); umax
 * (may be NULL) gets the largest |u| the optimal feedback takes on the way from s. */
static double lq_exact(const dg_env *env, const dg_real *s0, double *umax) {
    const double dt = env->dt, d = 0.9, k = 2.0, wg = 1.0, we = 0.05, wf = 1.0;
    const int H = env->horizon;
    const double A[2][2] = {{1, dt * d}, {0, d}}, B[2] = {dt * dt * k, dt * k};
    double P[2][2] = {{wf, 0}, {0, wf}}, K[10000][2];
    for (int t = H - 1; t >= 0; t--) {  /* state (x, v); Q = P + (wg / H) e1 e1' */
        const double Q[2][2] = {{P[0][0] + wg / H, P[0][1]}, {P[1][0], P[1][1]}};
        double QA[2][2], QB[2], BQB = 0, BQA[2];
        for (int i = 0; i < 2; i++) {
            for (int j = 0; j < 2; j++) QA[i][j] = Q[i][0] * A[0][j] + Q[i][1] * A[1][j];
            QB[i] = Q[i][0] * B[0] + Q[i][1] * B[1];
        }
        for (int i = 0; i < 2; i++) BQB += B[i] * QB[i];
        for (int j = 0; j < 2; j++) BQA[j] = B[0] * QA[0][j] + B[1] * QA[1][j];
        const double r = BQB + we / H;
        K[t][0] = BQA[0] / r;  /* u = -K s */
        K[t][1] = BQA[1] / r;
        double N[2][2];
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) N[i][j] = A[0][i] * QA[0][j] + A[1][i] * QA[1][j] - BQA[i] * BQA[j] / r;
        memcpy(P, N, sizeof P);
    }
    double x = s0[0], v = s0[1], top = 0;  /* the model's columns: x, v (its state's order) */
    const double value = P[0][0] * x * x + 2 * P[0][1] * x * v + P[1][1] * v * v;
    for (int t = 0; t < H; t++) {  /* the optimal path, for the largest input it takes */
        const double u = -(K[t][0] * x + K[t][1] * v);
        top = fmax(top, fabs(u));
        v = d * v + dt * k * u;
        x = x + dt * v;
    }
    if (umax) *umax = top;
    return value;
}

/* ------------------------------------------------------------------ per-row costs */

/* step_cost's terms are the batch means of step_cost_rows (declared once): each game that has rows,
 * from random states and actions with the episode constants of its reset. Where the mean is taken
 * from the rows by the same ops in the same order (dg_env_step_cost_from_rows; reach's fused op sums
 * its rows' squares in double in row order) the term is the rows' sum times inv_batch to the bit;
 * elsewhere (the model game rounds each row's cost to the tape's precision, the batch mean does not;
 * pixel at a size whose pixel count is not a power of two scales by 1 / n before the sum) within 1e-6. */
static void test_rows_mean(void **state) {
    (void)state;
    /* exact: to the bit; live: a term these states must make nonzero somewhere (-1: none named) */
    static const struct { const char *text; int exact, live; } games[] = {
        {DUEL(5), 1, 0},
        {"game: chase\nenv: {evader: policy}\n", 1, 1},
        {"game: chase\nenv: {walls: false}\n", 1, 0},
        {"game: chase\nenv: {evader: policy, walls: false}\n", 1, 4},
        {NULL, 0, 0},  /* tests/data/lq_mass.yaml */
        /* states over [-1.5, 1.5]: inside the obstacles' margins too (collision) */
        {"game: reach\nenv: {obstacles: [[0, 0, 0.25], [0.5, 0.2, 0.3]]}\n", 1, 1},
        {"game: pixel\nrender: {size: 8}\n", 1, 0},
        {"game: pixel\nrender: {size: 5}\n", 0, 0},
        /* horizon 1: the step column (uniform over [-1.5, 1.5]) rounds to H in a third of the rows (target) */
        {"game: billiards\nenv: {horizon: 1}\n", 1, 0},
        {"game: racing\n", 1, 1},  /* off the track (bounds) */
        {"game: pong\n", 1, 0},    /* past the left goal line (miss) */
    };
    const int ngames = (int)(sizeof games / sizeof games[0]);
    for (int gi = 0; gi < ngames; gi++) {
        dg_env *env = games[gi].text ? env_of(games[gi].text) : env_file("lq_mass.yaml");
        assert_non_null(env->game->step_cost_rows);
        const int B = 37, S = env->state_dim, A = env->act_dim + (env->nplayers == 2 ? env->act2_dim : 0);
        const dg_real inv = 1.0f / B;
        dg_real *st0, *aux0;
        dg_err e = {0};
        if (dg_run_init_draw(env, 5, B, &st0, &aux0, &e) != DG_OK) fail_msg("%s", e.msg);
        dg_rng rng;
        dg_rng_seed(&rng, 3);
        dg_ctx *ctx = dg_ctx_create((size_t)1 << 24);
        dg_tensor *st = dg_new(ctx, 2, (int[]){B, S}), *act = dg_new(ctx, 2, (int[]){B, A});
        dg_tensor *aux = env->aux_dim ? dg_from(ctx, 2, (int[]){B, env->aux_dim}, aux0) : NULL;
        for (int i = 0; i < B * S; i++) st->data[i] = dg_rng_uniform(&rng, -1.5f, 1.5f);
        for (int i = 0; i < B * A; i++) act->data[i] = dg_rng_uniform(&rng, -1.0f, 1.0f);
        dg_tensor *terms[DG_LOSS_MAX_TERMS] = {0}, *rows[DG_LOSS_MAX_TERMS] = {0};
        env->game->step_cost(ctx, env, st, aux, act, inv, terms);
        env->game->step_cost_rows(ctx, env, st, aux, act, rows);
        assert_int_equal(dg_ctx_status(ctx), DG_OK);
        for (int k = 0; k < env->nterms; k++) {
            double sum = 0;
            for (int64_t i = 0; rows[k] && i < rows[k]->n; i++) sum += rows[k]->data[i];
            if (rows[k]) assert_int_equal(rows[k]->shape[0], B);
            const dg_real mean = (dg_real)sum * inv;
            if (games[gi].exact && terms[k]->data[0] != mean)
                fail_msg("%s term %s: step_cost %.9g, the rows' mean %.9g", env->game->name, env->term_names[k],
                         (double)terms[k]->data[0], (double)mean);
            assert_true(fabs(terms[k]->data[0] - sum / B) <= 1e-6 * fmax(1.0, fabs(sum / B)));
        }
        const int live = games[gi].live;  /* the check is not one of zeros */
        assert_true(rows[live] && terms[live]->data[0] != 0);
        dg_ctx_free(ctx);
        free(st0);
        free(aux0);
        dg_env_free(env);
    }
}

/* steps B rows of states s (B, S) with actions a (B, A) into next (may be NULL) and each row's
 * weighted step cost into cost (B) */
static void step_rows(const dg_env *env, const dg_real *s, const dg_real *a, const dg_real *aux, int B, dg_real *next,
                      double *cost) {
    const int S = env->state_dim, A = env->act_dim + (env->nplayers == 2 ? env->act2_dim : 0);
    dg_ctx *ctx = dg_ctx_create((size_t)1 << 24);
    dg_tensor *st = dg_from(ctx, 2, (int[]){B, S}, s), *act = dg_from(ctx, 2, (int[]){B, A}, a);
    dg_tensor *ax = env->aux_dim ? dg_from(ctx, 2, (int[]){B, env->aux_dim}, aux) : NULL;
    dg_tensor *nx = env->game->step(ctx, env, st, ax, act), *rows[DG_LOSS_MAX_TERMS] = {0};
    env->game->step_cost_rows(ctx, env, nx, ax, act, rows);
    assert_int_equal(dg_ctx_status(ctx), DG_OK);
    if (next) memcpy(next, nx->data, sizeof(dg_real) * (size_t)B * S);
    for (int b = 0; b < B && cost; b++) {
        cost[b] = 0;
        for (int k = 0; k < env->nterms; k++) {
            const int m = rows[k] ? (int)(rows[k]->n / B) : 0;
            for (int j = 0; j < m; j++) cost[b] += env->term_weights[k] * rows[k]->data[(size_t)b * m + j];
        }
    }
    dg_ctx_free(ctx);
}

/* A declared value state is the game's: from states a few random steps into an episode, the state
 * that keeps only the value columns (every other entry 0, as the solver lifts it) steps to the same
 * value state and costs the same, within rounding (duel_simple and the open chase: the relative
 * position; racing: all but the progress and the last step's ds) */
static void test_value_state(void **state) {
    (void)state;
    static const struct { const char *text; int dim; } games[] = {
        {DUEL(5), 2},
        {"game: chase\nenv: {walls: false}\n", 4},
        {"game: chase\nenv: {evader: policy, walls: false}\n", 4},
        {"game: racing\n", 6},
    };
    enum { B = 16 };
    for (int gi = 0; gi < (int)(sizeof games / sizeof games[0]); gi++) {
        dg_env *env = env_of(games[gi].text);
        assert_int_equal(env->value_dim, games[gi].dim);
        const int S = env->state_dim, A = env->act_dim + (env->nplayers == 2 ? env->act2_dim : 0), d = dg_dp_dims(env);
        dg_real *st, *aux, act[B * 4], red[B * 16], n1[B * 16], n2[B * 16];
        dg_err e = {0};
        if (dg_run_init_draw(env, 9, B, &st, &aux, &e) != DG_OK) fail_msg("%s", e.msg);
        dg_rng rng;
        dg_rng_seed(&rng, 2);
        for (int t = 0; t < 4; t++) {  /* into the episode (racing: progress and ds no longer 0) */
            for (int i = 0; i < B * A; i++) act[i] = dg_rng_uniform(&rng, -1.0f, 1.0f);
            if (t == 3) break;
            step_rows(env, st, act, aux, B, st, NULL);
        }
        for (int b = 0; b < B; b++) {
            double x[DG_DP_MAX_DIMS];
            dg_dp_state(env, st + (size_t)b * S, x);
            memset(red + (size_t)b * S, 0, sizeof(dg_real) * S);
            for (int k = 0; k < d; k++) red[(size_t)b * S + env->value_plus[k]] = (dg_real)x[k];
        }
        assert_memory_not_equal(st, red, sizeof(dg_real) * B * S);  /* the columns dropped are not 0 already */
        double c1[B], c2[B];
        step_rows(env, st, act, aux, B, n1, c1);
        step_rows(env, red, act, aux, B, n2, c2);
        for (int b = 0; b < B; b++) {
            double x1[DG_DP_MAX_DIMS], x2[DG_DP_MAX_DIMS];
            dg_dp_state(env, n1 + (size_t)b * S, x1);
            dg_dp_state(env, n2 + (size_t)b * S, x2);
            for (int k = 0; k < d; k++) assert_true(fabs(x1[k] - x2[k]) <= 1e-5 * fmax(1.0, fabs(x1[k])));
            assert_true(fabs(c1[b] - c2[b]) <= 1e-5 * fmax(1.0, fabs(c1[b])));
        }
        free(st);
        free(aux);
        dg_env_free(env);
    }
}

/* ------------------------------------------------------------------ the duel anchor */

/* The error at B held-out starts (seed 4242) of V+ (w 0) or V- (w 1) from values (nvalues x B), or
 * from v when values is NULL: mean_i |V_i - exact_i| / mean_i |exact_i| (the refinement's relative
 * measure); max gets the largest |V_i - exact_i| / exact_i. */
static double duel_error(const dg_env *env, const dg_dp_value *v, const double *values, int B, int w, double *max) {
    dg_real *st, *aux;
    dg_err e = {0};
    assert_int_equal(dg_run_init_draw(env, 4242, B, &st, &aux, &e), DG_OK);
    double err = 0, sum = 0;
    *max = 0;
    for (int b = 0; b < B; b++) {
        const dg_real *s = st + 4 * b;
        const double x = duel_exact(env, hypot(s[2] - s[0], s[3] - s[1]), w == 0);
        const double y = values ? values[(size_t)w * B + b] : dg_dp_value_at(env, v, w, s);
        err += fabs(y - x);
        sum += fabs(x);
        *max = fmax(*max, fabs(y - x) / x);
    }
    free(st);
    free(aux);
    return err / sum;
}

/* a small grid: both values near the exact ones, the upper above the lower as the exact ones are (a
 * solver that swapped them, or searched the answering player only near the committing one's best,
 * misses by the O(dt) gap, 4 % here) */
static void test_duel_small(void **state) {
    (void)state;
    dg_env *env = env_of(DUEL(3));
    dg_dp_opts o = {.nodes = {41, 41}, .margin = 0.1};
    dg_dp_value v;
    dg_err e = {0};
    if (dg_dp_solve(env, &o, &v, &e) != DG_OK) fail_msg("%s", e.msg);
    assert_int_equal(v.nvalues, 2);
    assert_int_equal(v.ndim, 2);  /* duel_simple's reduced value state, e - p */
    double mx[2];
    const double eu = duel_error(env, &v, NULL, 16, 0, &mx[0]), el = duel_error(env, &v, NULL, 16, 1, &mx[1]);
    print_message("duel H 3, 41^2: V+ mean error %.3f%% (max %.3f%%), V- %.3f%% (max %.3f%%), %.2f s\n", 100 * eu,
                  100 * mx[0], 100 * el, 100 * mx[1], v.seconds);
    assert_true(eu < 0.01 && el < 0.01);
    /* at distance 0.25 the pursuer is caught up within a step in the lower value only */
    const dg_real s[4] = {0, 0, 0.25f, 0};
    const double up = dg_dp_value_at(env, &v, 0, s), lo = dg_dp_value_at(env, &v, 1, s);
    print_message("at d 0.25: V+ %.5f (exact %.5f), V- %.5f (exact %.5f)\n", up, duel_exact(env, 0.25, 1), lo,
                  duel_exact(env, 0.25, 0));
    assert_true(fabs(up - duel_exact(env, 0.25, 1)) < 0.01 * duel_exact(env, 0.25, 1));
    assert_true(fabs(lo - duel_exact(env, 0.25, 0)) < 0.05 * duel_exact(env, 0.25, 0));
    assert_true(up > lo);
    dg_dp_value_free(&v);
    dg_env_free(env);
}

/* the refinement study at the anchor's tol 0.002: V+ and V- at held-out starts within 1 % */
static void test_duel_anchor(void **state) {
    (void)state;
    dg_env *env = env_of(DUEL(5));
    enum { B = 32 };
    dg_real *st, *aux;
    dg_err e = {0};
    assert_int_equal(dg_run_init_draw(env, 4242, B, &st, &aux, &e), DG_OK);
    dg_dp_opts o = {.nodes = {21, 21}, .margin = 0.1};
    dg_dp_refine_opts ro = {.tol = 0.002, .max_grids = 6};
    dg_dp_refinement r;
    double value[2 * B], finest[2 * B];
    if (dg_dp_refine(env, &o, &ro, st, B, &r, value, finest, &e) != DG_OK) fail_msg("%s", e.msg);
    double ex[2] = {0, 0}, mx[2];
    for (int b = 0; b < B; b++)
        for (int w = 0; w < 2; w++) ex[w] += duel_exact(env, hypot(st[4 * b + 2] - st[4 * b], st[4 * b + 3] - st[4 * b + 1]), !w) / B;
    for (int i = 0; i < r.ngrids; i++)
        print_message("duel H 5, %3d^2: V+ %.6f (%+.3f%%)  V- %.6f (%+.3f%%)  %.1f s\n", r.nodes[i][0], r.mean[i][0],
                      100 * (r.mean[i][0] / ex[0] - 1), r.mean[i][1], 100 * (r.mean[i][1] / ex[1] - 1), r.seconds[i]);
    for (int w = 0; w < 2; w++) {
        const double err = duel_error(env, NULL, value, B, w, &mx[w]);
        print_message("%s exact %.6f: error %.3f%% (max %.3f%%), order %.2f, extrapolated %d, change %.4f\n",
                      w ? "V-" : "V+", ex[w], 100 * err, 100 * mx[w], r.order[w], r.extrapolated[w], r.change[w]);
        assert_true(err < 0.01);
    }
    print_message("converged %d (%s)\n", r.converged, r.stopped);
    assert_true(r.converged);
    free(st);
    free(aux);
    dg_env_free(env);
}

/* ------------------------------------------------------------------ the linear-quadratic anchor */

/* lq_mass's box: its optimal paths from the reset's starts (x ~ U(-1, 1), v ~ U(-0.5, 0.5)) reach
 * |x| 0.96 and |v| 1.44 (the reset's support alone leaves them off the grid) */
#define LQ_BOX .lo = {-1.2, -1.8}, .hi = {1.2, 1.8}

/* as duel_error; max: the largest |V_i - exact_i| over mean_i |exact_i| (the value vanishes at the
 * origin) */
static double lq_error(const dg_env *env, const dg_dp_value *v, const double *values, int B, double *max) {
    dg_real *st, *aux;
    dg_err e = {0};
    assert_int_equal(dg_run_init_draw(env, 4242, B, &st, &aux, &e), DG_OK);
    double err = 0, sum = 0, top = 0;
    for (int b = 0; b < B; b++) {
        double umax;
        const double x = lq_exact(env, st + 2 * b, &umax);
        assert_true(umax < 6.0);  /* the input box does not bind: the Riccati value is the game's */
        const double y = values ? values[b] : dg_dp_value_at(env, v, 0, st + 2 * b);
        err += fabs(y - x);
        sum += fabs(x);
        top = fmax(top, fabs(y - x));
    }
    free(st);
    free(aux);
    *max = top / (sum / B);
    return err / sum;
}

static void test_lq_small(void **state) {
    (void)state;
    dg_env *env = env_file("lq_mass.yaml");
    dg_dp_opts o = {.nodes = {103, 103}, LQ_BOX, .keep = 1};
    dg_dp_value v;
    dg_err e = {0};
    if (dg_dp_solve(env, &o, &v, &e) != DG_OK) fail_msg("%s", e.msg);
    assert_int_equal(v.nvalues, 1);
    /* kept: V_H is the terminal cost final (x^2 + v^2) at every node, once; V_0 the value */
    const int H = env->horizon;
    for (int64_t i = 0; i < v.nodes; i += 97) {
        const double x = v.lo[0] + (double)(i / v.n[1]) * (v.hi[0] - v.lo[0]) / (v.n[0] - 1);
        const double u = v.lo[1] + (double)(i % v.n[1]) * (v.hi[1] - v.lo[1]) / (v.n[1] - 1);
        assert_true(fabs(v.all[0][(size_t)H * v.nodes + i] - (x * x + u * u)) < 1e-5);
        assert_true(v.all[0][i] == (float)v.v[0][i]);
    }
    double mx;
    const double err = lq_error(env, &v, NULL, 16, &mx);
    print_message("lq 103^2: error %.3f%% (max %.3f%%), off the box %.4f, %.2f s\n", 100 * err, 100 * mx, v.outside,
                  v.seconds);
    assert_true(err < 0.015);
    dg_dp_value_free(&v);
    dg_env_free(env);
}

/* at tol 0.001: within 0.5 % (bilinear interpolation of a quadratic: order 2, extrapolated) */
static void test_lq_anchor(void **state) {
    (void)state;
    dg_env *env = env_file("lq_mass.yaml");
    enum { B = 32 };
    dg_real *st, *aux;
    dg_err e = {0};
    assert_int_equal(dg_run_init_draw(env, 4242, B, &st, &aux, &e), DG_OK);
    dg_dp_opts o = {.nodes = {21, 21}, LQ_BOX};
    dg_dp_refine_opts ro = {.tol = 0.001};
    dg_dp_refinement r;
    double value[B], finest[B];
    if (dg_dp_refine(env, &o, &ro, st, B, &r, value, finest, &e) != DG_OK) fail_msg("%s", e.msg);
    double ex = 0, mx, mf;
    for (int b = 0; b < B; b++) ex += lq_exact(env, st + 2 * b, NULL) / B;
    for (int i = 0; i < r.ngrids; i++)
        print_message("lq %3d^2: V %.6f (%+.3f%%)  %.1f s\n", r.nodes[i][0], r.mean[i][0], 100 * (r.mean[i][0] / ex - 1),
                      r.seconds[i]);
    const double err = lq_error(env, NULL, value, B, &mx), ef = lq_error(env, NULL, finest, B, &mf);
    print_message("exact %.6f: error %.3f%% (max %.3f%%; finest %.3f%%), order %.2f, extrapolated %d, change %.5f, "
                  "converged %d (%s)\n", ex, 100 * err, 100 * mx, 100 * ef, r.order[0], r.extrapolated[0], r.change[0],
                  r.converged, r.stopped);
    assert_true(err < 0.005);
    assert_true(r.converged);
    free(st);
    free(aux);
    dg_env_free(env);
}

/* ------------------------------------------------------------------ reach, 4-D */

/* reach's own discrete game (4-D: position and velocity) on a coarse grid, an estimate: its test is
 * what holds on any grid. The action 0 is a candidate of the full search (every step: refresh 1), and
 * from a node at rest it stays on that node, so the value there is at most the cost of standing
 * still, |p - g|^2 (+ the collision's) each step; from a start left of the obstacle, moving towards
 * the goal does better. At the goal at rest the value is the lowest of the three. */
static void test_reach_small(void **state) {
    (void)state;
    dg_env *env = env_of("game: reach\nenv: {dt: 0.2, horizon: 8}\n");
    const dg_real goal[2] = {0.75f, 0.0f};
    /* spacing 0.25 in position, 0.5 in velocity: the nodes below lie on the grid */
    dg_dp_opts o = {.nodes = {9, 9, 9, 9}, .lo = {-1, -1, -2, -2}, .hi = {1, 1, 2, 2}, .aux = goal, .refresh = 1,
                    .rounds = 4};
    dg_dp_value v;
    dg_err e = {0};
    if (dg_dp_solve(env, &o, &v, &e) != DG_OK) fail_msg("%s", e.msg);
    assert_int_equal(v.ndim, 4);
    assert_int_equal(v.nvalues, 1);
    for (int64_t i = 0; i < v.nodes; i++) assert_true(isfinite(v.v[0][i]) && v.v[0][i] >= 0);
    const dg_real far[4] = {-0.75f, 0.5f, 0, 0}, near[4] = {0.5f, 0.0f, 0, 0}, at[4] = {0.75f, 0.0f, 0, 0};
    const double vfar = dg_dp_value_at(env, &v, 0, far), vnear = dg_dp_value_at(env, &v, 0, near);
    const double vat = dg_dp_value_at(env, &v, 0, at);
    const double sfar = 1.5 * 1.5 + 0.5 * 0.5, snear = 0.25 * 0.25;  /* standing still (outside the margins) */
    print_message("reach 9^4, H 8: V %.4f (still %.4f), %.4f (still %.4f), at the goal %.5f; off the box %.4f, "
                  "%.2f s\n", vfar, sfar, vnear, snear, vat, v.outside, v.seconds);
    assert_true(vfar <= sfar * (1 + 1e-6) && vnear <= snear * (1 + 1e-6));
    assert_true(vfar < 0.8 * sfar);
    assert_true(vat < vnear && vnear < vfar);
    dg_dp_value_free(&v);
    dg_env_free(env);
}

/* ------------------------------------------------------------------ the study's grids and extrapolation */

/* From --nodes 3 (and 4) every grid is strictly finer than the one before on every axis, by an even
 * number of nodes (the parity kept), the coarsest the one asked for: rounding once gave 3, 5, 5 (and
 * 6, 6, 8 from 4), two equal grids whose change, 0, read as converged at any tol. At tol 0.9 the
 * study converges between different grids; at 1e-6 it does not. */
static void test_refine_grids(void **state) {
    (void)state;
    dg_env *env = env_of(DUEL(3));
    enum { B = 8 };
    dg_real *st, *aux;
    dg_err e = {0};
    assert_int_equal(dg_run_init_draw(env, 4242, B, &st, &aux, &e), DG_OK);
    dg_dp_opts o = {.nodes = {3, 4}, .margin = 0.1, .rounds = 2};
    dg_dp_refine_opts ro = {.tol = 0.9, .max_grids = 3};
    dg_dp_refinement r;
    if (dg_dp_refine(env, &o, &ro, st, B, &r, NULL, NULL, &e) != DG_OK) fail_msg("%s", e.msg);
    for (int i = 0; i < r.ngrids; i++)
        print_message("grid %d: %d x %d, mean V+ %.5f, V- %.5f\n", i, r.nodes[i][0], r.nodes[i][1], r.mean[i][0],
                      r.mean[i][1]);
    print_message("changes %.4f %.4f, converged %d (%s)\n", r.change[0], r.change[1], r.converged, r.stopped);
    assert_int_equal(r.ngrids, 3);
    assert_true(r.nodes[0][0] == 3 && r.nodes[0][1] == 4);
    for (int i = 1; i < r.ngrids; i++)
        for (int k = 0; k < 2; k++) {
            assert_true(r.nodes[i][k] >= r.nodes[i - 1][k] + 2);
            assert_int_equal((r.nodes[i][k] - r.nodes[i - 1][k]) % 2, 0);
        }
    assert_true(r.change[0] > 0 && r.change[1] > 0);  /* two different grids: their values move */
    /* 3 x 3 at tol 1e-6: far from converged (its grids were 3, 5, 5 and it read converged at once) */
    o.nodes[1] = 3;
    ro.tol = 1e-6;
    if (dg_dp_refine(env, &o, &ro, st, B, &r, NULL, NULL, &e) != DG_OK) fail_msg("%s", e.msg);
    print_message("3 x 3: grids %d, %d, %d nodes an axis, changes %.4f %.4f, converged %d (%s)\n", r.nodes[0][0],
                  r.nodes[1][0], r.nodes[2][0], r.change[0], r.change[1], r.converged, r.stopped);
    assert_int_equal(r.ngrids, 3);
    assert_true(r.nodes[2][0] == 7 && r.nodes[2][1] == 7);
    assert_false(r.converged);
    assert_string_equal(r.stopped, "max_grids");
    free(st);
    free(aux);
    dg_env_free(env);
}

/* dg_dp_richardson: the asymptotic range only (spacings 1/2, 1/3, 1/4.5: ratio 1.5) */
static void test_richardson(void **state) {
    (void)state;
    const double h[3] = {1.0 / 2, 1.0 / 3, 1.0 / 4.5};
    enum { B = 2 };
    double v[3][B], out[B], p;
    /* V + C h^2 at each start (C 1 and 3): order 2, extrapolated to V */
    for (int i = 0; i < 3; i++) v[i][0] = 0.5 + h[i] * h[i], v[i][1] = 0.25 + 3 * h[i] * h[i];
    assert_int_equal(dg_dp_richardson(h[0], h[1], h[2], v[0], v[1], v[2], B, &p, out), 1);
    assert_true(fabs(p - 2) < 1e-6);
    assert_true(fabs(out[0] - 0.5) < 1e-9 && fabs(out[1] - 0.25) < 1e-9);
    /* the means fall as order 1 (1.0, 0.7, 0.5), but the starts move more on the finer step (sums of
     * |dV| 0.6, then 0.8): not the asymptotic range, the finest grid's values stand (the order alone
     * extrapolated these) */
    const double a[3][B] = {{1.0, 1.0}, {0.7, 0.7}, {0.9, 0.1}};
    assert_int_equal(dg_dp_richardson(h[0], h[1], h[2], a[0], a[1], a[2], B, &p, out), 0);
    assert_true(fabs(p - 1) < 1e-6);
    assert_true(out[0] == 0.9 && out[1] == 0.1);
    /* changes that grow (0.1, then 0.2 at both starts): no order, no extrapolation */
    const double g[3][B] = {{1.0, 2.0}, {0.9, 1.9}, {0.7, 1.7}};
    assert_int_equal(dg_dp_richardson(h[0], h[1], h[2], g[0], g[1], g[2], B, &p, out), 0);
    assert_true(isnan(p) && out[0] == 0.7 && out[1] == 1.7);
    /* an order past 2.5 (changes 0.9, then 0.01): the finest grid's */
    const double f[3][B] = {{2.0, 2.0}, {1.1, 1.1}, {1.09, 1.09}};
    assert_int_equal(dg_dp_richardson(h[0], h[1], h[2], f[0], f[1], f[2], B, &p, out), 0);
    assert_true(p > 2.5 && out[0] == 1.09);
    /* the same grid twice (h2 = h3, change 0): no order */
    assert_int_equal(dg_dp_richardson(h[0], h[1], h[1], v[0], v[1], v[1], B, &p, out), 0);
    assert_true(isnan(p) && out[0] == v[1][0]);
}

/* ------------------------------------------------------------------ refusals and memory */

static void test_refused(void **state) {
    (void)state;
    dg_err e = {0};
    dg_dp_value v;
    /* a game of the caller's that declares no per-row costs (every built-in one does) */
    dg_game norows = *dg_game_find("reach");
    norows.step_cost_rows = NULL;
    dg_cfg *cfg = dg_cfg_parse("game: reach\n", strlen("game: reach\n"), "test", &e);
    dg_env *reach = cfg ? dg_env_create_game(&norows, cfg, &e) : NULL;
    dg_cfg_free(cfg);
    if (!reach) fail_msg("%s", e.msg);
    dg_dp_opts o = {.nodes = {5, 5, 5, 5}};
    assert_int_equal(dg_dp_solve(reach, &o, &v, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "step_cost_rows"));
    dg_env_free(reach);
    dg_env *billiards = env_of("game: billiards\n");  /* rows, but played by an open-loop plan */
    assert_int_equal(dg_dp_check(billiards, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "open-loop plan"));
    dg_env_free(billiards);

    dg_env *duel = env_of(DUEL(3));
    duel->value_plus[1] = 4;  /* a declaration off the state (a plugin's): refused, not read past the row */
    o = (dg_dp_opts){.nodes = {21, 21}};
    assert_int_equal(dg_dp_solve(duel, &o, &v, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "value axis 1"));
    duel->value_plus[1] = 3;
    o = (dg_dp_opts){.nodes = {2, 21}};
    assert_int_equal(dg_dp_solve(duel, &o, &v, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "nodes[0]"));
    o = (dg_dp_opts){.nodes = {21, 21}, .max_bytes = 1e5};  /* the estimate is over the limit: refused */
    const double need = dg_dp_memory(duel, &o, &e);
    assert_true(need > 1e5);
    assert_int_equal(dg_dp_solve(duel, &o, &v, &e), DG_ERR_NOMEM);
    o.max_bytes = need;
    assert_int_equal(dg_dp_solve(duel, &o, &v, &e), DG_OK);
    dg_dp_value_free(&v);
    o = (dg_dp_opts){.nodes = {1000000, 1000000}};  /* 10^12 nodes: refused by the estimate, never allocated */
    assert_int_equal(dg_dp_solve(duel, &o, &v, &e), DG_ERR_NOMEM);
    assert_non_null(strstr(e.msg, "GiB"));
    dg_dp_value_free(&v);
    dg_env_free(duel);

    dg_env *lq = env_file("lq_mass.yaml");  /* bounds: declared, or the reset's support */
    o = (dg_dp_opts){.nodes = {11, 11}, .lo = {0, -3}, .hi = {0, 3}};
    double lo[2], hi[2];
    assert_int_equal(dg_dp_box(lq, &o, lo, hi, &e), DG_OK);
    assert_true(lo[1] == -3 && hi[1] == 3);
    assert_true(lo[0] < -1.45 && lo[0] >= -1.5 && hi[0] > 1.45 && hi[0] <= 1.5);  /* x ~ U(-1, 1) widened by 0.25 x 2 */
    dg_env_free(lq);

    /* a velocity 0 at every reset: its axis needs bounds */
    dg_env *still = env_of("game: model\nmodel:\n  name: still\n  state: {x: [-1, 1], v: [-1, 1]}\n"
                           "  inputs: {u: {dim: 1, lo: -1, hi: 1, role: min}}\n  dynamics: {v: u, x: v}\n"
                           "  observe: [x, v]\n  costs: {goal: x^2}\n  reset: [{x: [-1, 1], v: 0}]\n");
    o = (dg_dp_opts){.nodes = {3, 3}};
    assert_int_equal(dg_dp_box(still, &o, lo, hi, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "axis 1"));
    o.lo[1] = -1;
    o.hi[1] = 1;
    assert_int_equal(dg_dp_box(still, &o, lo, hi, &e), DG_OK);
    dg_env_free(still);
}

/* ------------------------------------------------------------------ frozen players (section 6) */

/* duel_simple's players written as functions of their observations (the pursuer sees (p, e - p), the
 * evader (e, p - e)): throttle x dg_unit_disk(scale x the relative position), the game's own bound.
 * The pursuer with scale 1 / (v_p dt) and throttle 1 moves toward the evader by min(v_p dt, d), the
 * upper value's commitment (it stops on the evader when it can reach it); with scale 1e6 and
 * throttle 0.5 it heads at the evader at half speed. The evader with scale -1e6 flies straight away
 * from the pursuer, the lower value's commitment. (exact_player, exact_act: tests/util/duel_players.h) */

/* the evader's loss in straight flight from a pursuer at half throttle, from distance d: the distance
 * grows by (v_e - v_p / 2) dt a step */
static double half_throttle_exact(const dg_env *env, double d) {
    const double vp = 1.0, ve = 0.6, dt = env->dt;
    double s = 0;
    for (int t = 0; t < env->horizon; t++) {
        d += (ve - 0.5 * vp) * dt;
        s += sqrt(d * d + 1e-6) / env->horizon;
    }
    return s;
}

/* The grid route of a best response (dg_dp_best_response) against frozen exact players: the evader's
 * best response to the exact pursuer realises the upper value (never more: no evader does better
 * against it), the pursuer's to the exact evader the lower (never less), the evader's to the
 * half-throttle pursuer the straight flight's loss (never more); each within 1 % on a 61^2 grid. An
 * MLP that reads the absolute position does not fit the value state (dg_dp_frozen_fits). */
static void test_frozen_exact(void **state) {
    (void)state;
    dg_env *env = env_of(DUEL(8));
    enum { B = 16 };
    dg_real *st, *aux;
    dg_err e = {0};
    assert_int_equal(dg_run_init_draw(env, 4242, B, &st, &aux, &e), DG_OK);
    dg_policy pol;
    dg_params *params;
    const int hidden[] = {8};
    assert_int_equal(dg_policy_create(env, hidden, 1, &pol, &params, &e), DG_OK);
    dg_rng rng;
    dg_rng_seed(&rng, 5);
    dg_policy_reset_params(&pol, params, &rng);
    assert_false(dg_dp_frozen_fits(env, &pol, params, 0, st, aux, B, 1e-5));  /* a network sees p itself */
    exact_player pursuer = {1.0 / (1.0 * env->dt), 1.0}, half = {1e6, 0.5}, evader = {-1e6, 1.0};
    pol.fn[1] = exact_act;
    pol.fn_user[1] = &evader;
    dg_dp_opts o = {.nodes = {61, 61}, .margin = 0.1};
    double cost[B];
    for (int c = 0; c < 3; c++) {
        pol.fn[0] = exact_act;
        pol.fn_user[0] = c == 2 ? &half : &pursuer;
        const int k = c == 1;  /* the frozen player: the pursuer, the evader, the half-throttle pursuer */
        assert_true(dg_dp_frozen_fits(env, &pol, params, k, st, aux, B, 1e-5));
        if (dg_dp_best_response(env, &o, &pol, params, k, st, aux, B, cost, &e) != DG_OK) fail_msg("%s", e.msg);
        double worst = 0, mc = 0, mx = 0;
        for (int b = 0; b < B; b++) {
            const double d = hypot(st[4 * b + 2] - st[4 * b], st[4 * b + 3] - st[4 * b + 1]);
            const double x = c == 2 ? half_throttle_exact(env, d) : duel_exact(env, d, c == 0);
            /* no response beats the exact optimum: the evader's stays at or below it, the pursuer's above */
            if (k == 0) assert_true(cost[b] <= x * (1 + 1e-5));
            else assert_true(cost[b] >= x * (1 - 1e-5));
            worst = fmax(worst, fabs(cost[b] - x) / x);
            mc += cost[b] / B;
            mx += x / B;
        }
        print_message("%s frozen: the grid's best response %.6f, exact %.6f (worst start %.3f%%)\n",
                      c == 0 ? "exact pursuer" : c == 1 ? "exact evader" : "half-throttle pursuer", mc, mx, 100 * worst);
        assert_true(worst < 0.01);
    }
    dg_params_free(params);
    free(st);
    free(aux);
    dg_env_free(env);
}

int main(void) {
    const struct CMUnitTest unit[] = {
        cmocka_unit_test(test_rows_mean),
        cmocka_unit_test(test_value_state),
        cmocka_unit_test(test_duel_small),
        cmocka_unit_test(test_lq_small),
        cmocka_unit_test(test_reach_small),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_refine_grids),
        cmocka_unit_test(test_richardson),
        cmocka_unit_test(test_frozen_exact),
    };
    const struct CMUnitTest slow[] = {
        cmocka_unit_test(test_duel_anchor),
        cmocka_unit_test(test_lq_anchor),
    };
    return dg_test_run_tiers(unit, slow, NULL, NULL);
}
