/* The double tape (train.precision: f64): this test is compiled with DG_F64, so every dg_ call
 * below is the library's double copy (dg64_, difgames/real.h). Its gradients match central finite
 * differences to double's rounding, far below what float32 allows (reach and racing at eps 1e-4,
 * where the float tape's racing check fails); a trainer gives the same bits for the same seed and
 * shard count (1 and 2 threads); its checkpoints are F64 safetensors, and an F32 checkpoint loads
 * into it exactly; memory estimates cover its 8-byte tape. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/internal.h"
#include "difgames/difgames.h"
#include "util/check.h"
#include "util/tmpdir.h"

static char g_dir[64];

static int setup(void **state) {
    (void)state;
    return check_tmpdir(g_dir, "dg_f64_");
}

static int teardown(void **state) {
    (void)state;
    return check_rmdir(g_dir);
}

static void test_real_is_double(void **state) {
    (void)state;
    assert_int_equal(sizeof(dg_real), sizeof(double));
    assert_int_equal(DG_REAL_F64, 1);
    assert_int_equal(DG_DTYPE_REAL, DG_DTYPE_F64);
    dg_ctx *ctx = dg_ctx_create(1 << 16);
    assert_non_null(ctx);
    dg_tensor *t = dg_scalar(ctx, 0.1);
    assert_true(t->data[0] == 0.1);  /* a double, not 0.1f */
    /* tanh to a few ulps of libm's (the float tape's rational approximation errs by 3e-7) */
    dg_tensor *y = dg_tanh(ctx, dg_scalar(ctx, 0.7));
    if (!(fabs(y->data[0] - tanh(0.7)) <= 1e-15)) fail_msg("tanh(0.7) %.17g, libm %.17g", y->data[0], tanh(0.7));
    dg_ctx_free(ctx);
}

/* |a - b| in units of b's last place */
static double ulps_off(double a, double b) {
    if (a == b) return 0;
    return fabs(a - b) / (nextafter(fabs(b), INFINITY) - fabs(b));
}

/* The double tape's tanh (core/internal.h: expm1 by range reduction and a polynomial, 8 lanes with
 * AVX-512) against libm's: a dense sweep over [-25, 25] and every binade from the smallest subnormal
 * up, within 4 ulp (measured: 3.0); the ends exact (dg__tanhf, this file's scalar form, too); dg__tanh_n
 * (the library's 8 lanes, a masked rest) gives each value the bits it gives it alone, whatever the
 * length's remainder mod 8. */
static void test_tanh_f64(void **state) {
    (void)state;
    enum { CH = 4096 };
    static double xs[CH], ys[CH];
    double worst = 0, at = 0;
    int nx = 0;
    /* the library's dg__tanh_n (its 8-lane form with AVX-512) over chunks of the sweep */
#define SWEEP_FLUSH()                                                   \
    do {                                                                \
        dg__tanh_n(nx, xs, ys);                                         \
        for (int i_ = 0; i_ < nx; i_++) {                               \
            const double u_ = ulps_off(ys[i_], tanh(xs[i_]));           \
            if (u_ > worst) worst = u_, at = xs[i_];                    \
        }                                                               \
        nx = 0;                                                         \
    } while (0)
    for (double x = -25; x <= 25; x += 0x1p-14 + 1e-13) {
        xs[nx++] = x;
        if (nx == CH) SWEEP_FLUSH();
    }
    for (int e = -1074; e < 6; e++)
        for (int j = 0; j < 64; j++)
            for (int sgn = -1; sgn <= 1; sgn += 2) {
                xs[nx++] = sgn * ldexp(1.0 + j / 64.0, e);
                if (nx == CH) SWEEP_FLUSH();
            }
    SWEEP_FLUSH();
#undef SWEEP_FLUSH
    if (worst > 4.0) fail_msg("tanh: %.2f ulp from libm's at %.17g", worst, at);
    /* tiny |x|: x itself; large: ±1 exactly; NaN stays NaN; -0 keeps its sign */
    const double tiny[] = {0x1p-27, -0x1p-27, 1e-10, -3e-300, 0x1p-1074};
    const double big[] = {19.1, 20.0, 20.5, 1e10, 1e308, INFINITY};
    double ends[18], out[18];
    for (int i = 0; i < 5; i++) ends[i] = tiny[i];
    for (int i = 0; i < 6; i++) ends[5 + i] = big[i], ends[11 + i] = -big[i];
    ends[17] = NAN;
    dg__tanh_n(18, ends, out);
    for (int i = 0; i < 5; i++) assert_true(out[i] == tiny[i] && dg__tanhf(tiny[i]) == tiny[i]);
    for (int i = 0; i < 6; i++) {
        assert_true(out[5 + i] == 1.0 && dg__tanhf(big[i]) == 1.0);
        assert_true(out[11 + i] == -1.0 && dg__tanhf(-big[i]) == -1.0);
    }
    assert_true(isnan(out[17]) && isnan(dg__tanhf(NAN)));
    assert_true(dg__tanhf(-0.0) == 0.0 && signbit(dg__tanhf(-0.0)));
    enum { N = 4099 };
    static double x[N], y[N];
    for (int i = 0; i < N; i++) x[i] = (i % 13 == 0 ? 1e-6 : 1.0) * 24.0 * sin(0.37 * i) + (i % 101 == 0 ? NAN : 0.0);
    for (int off = 0; off < 9; off++) {  /* lengths N - off: every remainder mod 8, against each value alone */
        dg__tanh_n(N - off, x + off, y);
        for (int i = 0; i < N - off; i++) {
            double s;
            dg__tanh_n(1, x + i + off, &s);
            if (memcmp(&s, &y[i], sizeof s)) fail_msg("tanh_n[%d] of %d: %.17g, alone %.17g", i, N - off, y[i], s);
        }
    }
}

/* The double gemm (AVX-512 register blocks, or portable C) against C[m, n] += Σ_k A·B summed in the order
 * k = 0, 1, ... by fma (close_to), over the policy's shapes
 * (6- and 2-wide layers, batch remainders) and random ones, both layouts of A; dg__gemm_bias_act gives
 * dg__gemm_acc-onto-the-bias's bits then dg__tanh_n's (bit for bit); dg__tanh_grad_colsum d *= 1 - y², column sums in
 * row order. */
static uint64_t g_lcg = 88172645463325252ULL;
static double rnd(void) {
    g_lcg = g_lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(g_lcg >> 11) * 0x1p-53 - 0.5;
}

/* got within K²·10⁻¹⁵ of want (the rounding of K products of values below 0.5 in any order): the
 * AVX-512 kernels match the reference's fma order bit for bit, the portable ones as the compiler
 * contracts them; an element read or written in the wrong place is off by ~0.1 */
static void close_to(const char *what, int M, int N, int K, double got, double want) {
    if (!(fabs(got - want) <= 1e-15 * (1.0 + (double)K * K)))
        fail_msg("%s M %d N %d K %d: %.17g, want %.17g", what, M, N, K, got, want);
}

static void gemm_case(int M, int N, int K, int trans) {
    const int64_t ldb = N + (M % 3), ldc = N + (K % 2), a_rs = trans ? 1 : K, a_cs = trans ? M : 1;
    double *A = malloc(sizeof(double) * M * K), *B = malloc(sizeof(double) * K * ldb), *C = malloc(sizeof(double) * M * ldc);
    double *R = malloc(sizeof(double) * M * ldc), *bias = malloc(sizeof(double) * N), *d = malloc(sizeof(double) * M * N);
    double *d2 = malloc(sizeof(double) * M * N), *g = malloc(sizeof(double) * N), *g2 = malloc(sizeof(double) * N);
    assert_true(A && B && C && R && bias && d && d2 && g && g2);
    for (int i = 0; i < M * K; i++) A[i] = rnd();
    for (int64_t i = 0; i < K * ldb; i++) B[i] = rnd();
    for (int64_t i = 0; i < M * ldc; i++) R[i] = C[i] = rnd();
    for (int i = 0; i < N; i++) bias[i] = rnd();
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            double s = R[m * ldc + n];
            for (int k = 0; k < K; k++) s = fma(A[m * a_rs + k * a_cs], B[k * ldb + n], s);
            R[m * ldc + n] = s;
        }
    dg__gemm_acc(M, N, K, A, a_rs, a_cs, B, ldb, C, ldc);
    for (int64_t i = 0; i < M * ldc; i++) close_to("gemm_acc", M, N, K, C[i], R[i]);  /* the gaps too */
    if (!trans)
        for (int act = 0; act <= 1; act++)
            for (int hb = 0; hb <= 1; hb++) {
                for (int m = 0; m < M; m++)
                    for (int n = 0; n < N; n++) C[m * ldc + n] = hb ? bias[n] : 0.0;
                dg__gemm_acc(M, N, K, A, K, 1, B, ldb, C, ldc);
                for (int m = 0; m < M; m++)
                    if (act) dg__tanh_n(N, C + m * ldc, R + m * ldc);
                    else memcpy(R + m * ldc, C + m * ldc, sizeof(double) * N);
                dg__gemm_bias_act(M, N, K, A, K, B, ldb, hb ? bias : NULL, act, C, ldc);
                for (int m = 0; m < M; m++)
                    for (int n = 0; n < N; n++) {
                        const double got = C[m * ldc + n], want = R[m * ldc + n];
                        if (memcmp(&got, &want, sizeof got)) fail_msg("bias_act M %d N %d K %d: %.17g, gemm_acc %.17g", M, N, K, got, want);
                    }
            }
    for (int use_y = 0; use_y <= 1; use_y++) {
        for (int i = 0; i < M * N; i++) d[i] = d2[i] = rnd();
        for (int n = 0; n < N; n++) g[n] = g2[n] = bias[n];
        const double *y = use_y ? A : NULL;  /* any values in (-0.5, 0.5) */
        if (M * N > M * K) y = NULL;
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++) {
                if (y) d2[m * N + n] *= fma(-y[m * N + n], y[m * N + n], 1.0);
                g2[n] += d2[m * N + n];
            }
        dg__tanh_grad_colsum(M, N, y, d, g);
        for (int i = 0; i < M * N; i++) close_to("tanh_grad d", M, N, K, d[i], d2[i]);
        for (int n = 0; n < N; n++) close_to("tanh_grad gb", M, N, K, g[n], g2[n]);
    }
    free(A), free(B), free(C), free(R), free(bias), free(d), free(d2), free(g), free(g2);
}

static void test_gemm_f64(void **state) {
    (void)state;
    const int policy[][3] = {{64, 64, 6}, {64, 2, 64}, {64, 6, 64}, {64, 64, 2}, {64, 6, 64}, {2, 64, 64},
                             {67, 64, 6}, {67, 2, 64}, {13, 64, 64}, {64, 64, 67}, {2, 64, 67}, {1, 64, 5},
                             {64, 64, 300}, {64, 6, 300}, {2, 64, 300}, {19, 30, 517}};  /* k in chunks */
    for (int i = 0; i < 16; i++)
        for (int trans = 0; trans <= 1; trans++) gemm_case(policy[i][0], policy[i][1], policy[i][2], trans);
    for (int i = 0; i < 300; i++) {
        const int M = 1 + (int)((rnd() + 0.5) * 40), N = 1 + (int)((rnd() + 0.5) * 80), K = 1 + (int)((rnd() + 0.5) * 40);
        gemm_case(M, N, K, i % 2);
    }
}

/* loss = Σ tanh(x·Wᵀ + b)² over a small batch: the policy's ops, with the gemm's double path */
typedef struct mlp_case { dg_real x[3 * 5]; } mlp_case;

static dg_tensor *mlp_loss(dg_ctx *ctx, dg_params *p, void *user) {
    mlp_case *c = user;
    dg_tensor *x = dg_from(ctx, 2, (int[]){3, 5}, c->x);
    dg_tensor *h = dg_linear_tanh(ctx, x, dg_param(ctx, p, 0), dg_param(ctx, p, 1));
    return dg_sum(ctx, dg_square(ctx, dg_linear(ctx, h, dg_param(ctx, p, 2), NULL)));
}

static void test_core_gradcheck_tight(void **state) {
    (void)state;
    dg_err e = {0};
    dg_params *p = dg_params_create();
    assert_int_equal(dg_params_add(p, "w1", 2, (int[]){40, 5}, &e), 0);
    assert_int_equal(dg_params_add(p, "b1", 1, (int[]){40}, &e), 1);
    assert_int_equal(dg_params_add(p, "w2", 2, (int[]){3, 40}, &e), 2);
    for (size_t i = 0; i < p->total; i++) p->data[i] = 0.3 * sin(1.3 * (double)i + 0.2);
    mlp_case c;
    for (int i = 0; i < 15; i++) c.x[i] = cos(0.9 * i);
    dg_ctx *ctx = dg_ctx_create(1 << 20);
    dg_gradcheck_report rep;
    assert_int_equal(dg_gradcheck(ctx, p, mlp_loss, &c, 1e-4, 1e-6, 0, &rep, &e), DG_OK);
    /* float32 needs eps ~1e-2 and passes at ~1e-3; double agrees to ~1e-10 at a step of 1e-4 */
    check_gradcheck("mlp (f64)", p, &rep, 1e-8);
    assert_true(rep.checked == (int64_t)p->total);
    dg_ctx_free(ctx);
    dg_params_free(p);
}

/* A game's own finite-difference check (step, step_cost, a 10-step episode) at eps 1e-4. */
static void env_gradcheck(const char *yaml, double tol) {
    dg_cfg *cfg;
    dg_train_opts o;
    dg_env *env = check_env(yaml, &cfg, &o);
    dg_env_gradcheck_opts go = dg_env_gradcheck_opts_default();
    go.eps = 1e-4;
    go.hidden[0] = go.hidden[1] = 16;
    dg_env_gradcheck_result r;
    dg_err e = {0};
    assert_int_equal(dg_env_gradcheck(env, &go, &r, &e), DG_OK);
    if (r.step.max_rel_err > tol || r.episode.max_rel_err > tol)
        fail_msg("%s: step %.3e (%s), episode %.3e (%s)", env->game->name, r.step.max_rel_err, r.step_worst,
                 r.episode.max_rel_err, r.episode_worst);
    assert_int_equal(r.nzero, 0);
    dg_env_free(env);
    dg_cfg_free(cfg);
}

static void test_games_gradcheck_tight(void **state) {
    (void)state;
    /* float32 at eps 1e-4: racing's episode check fails (2e-2: rounding through the difference) */
    env_gradcheck("game: reach\n", 1e-5);
    env_gradcheck("game: racing\n", 1e-5);
}

/* A short training on 1 or 2 shards: its parameters, and the last epoch's loss. */
static double train_once(int threads, dg_params **out) {
    static const char YAML[] = "game: reach\nseed: 3\nenv: {horizon: 20}\npolicy: {hidden: [16, 16]}\n"
                               "train: {batch: 32, epochs: 4, precision: f64}\n";
    dg_cfg *cfg;
    dg_train_opts o;
    dg_env *env = check_env(YAML, &cfg, &o);
    assert_int_equal(o.precision, 1);
    o.threads = threads;
    dg_err e = {0};
    dg_trainer *t = dg_trainer_create(env, &o, NULL, NULL, &e);
    if (!t) fail_msg("%s", e.msg);
    assert_int_equal(dg_trainer_run(t, NULL, NULL, NULL, &e), DG_OK);
    const double loss = dg_trainer_last(t)->loss;
    dg_params *p = dg_params_create();
    const dg_params *tp = dg_trainer_params(t);
    for (int i = 0; i < tp->count; i++)
        assert_true(dg_params_add(p, tp->info[i].name, tp->info[i].ndim, tp->info[i].shape, &e) >= 0);
    assert_int_equal(dg_params_copy(p, tp, &e), DG_OK);
    dg_trainer_free(t);
    dg_env_free(env);
    dg_cfg_free(cfg);
    *out = p;
    return loss;
}

static void test_train_determinism(void **state) {
    (void)state;
    for (int threads = 1; threads <= 2; threads++) {
        dg_params *a, *b;
        const double la = train_once(threads, &a), lb = train_once(threads, &b);
        assert_true(la == lb && isfinite(la));
        assert_memory_equal(a->data, b->data, a->total * sizeof(dg_real));  /* the same bits */
        dg_params_free(a);
        dg_params_free(b);
    }
}

static void test_checkpoint_f64(void **state) {
    (void)state;
    dg_err e = {0};
    dg_params *p = dg_params_create();
    assert_int_equal(dg_params_add(p, "w", 2, (int[]){2, 3}, &e), 0);
    for (int i = 0; i < 6; i++) p->data[i] = 1.0 / (i + 3.0);  /* not float32 values */
    char path[128];
    snprintf(path, sizeof path, "%s/p64.safetensors", g_dir);
    assert_int_equal(dg_checkpoint_save(path, p, 0, NULL, 0, &e), DG_OK);
    dg_st_file *f = dg_st_load(path, &e);
    assert_non_null(f);
    assert_int_equal(dg_st_find(f, "w")->dtype, DG_DTYPE_F64);
    dg_st_free(f);
    dg_params *q = dg_params_create();
    assert_int_equal(dg_params_add(q, "w", 2, (int[]){2, 3}, &e), 0);
    assert_int_equal(dg_checkpoint_load(path, q, &e), DG_OK);
    assert_memory_equal(p->data, q->data, 6 * sizeof(dg_real));
    /* a float32 checkpoint (a float run's) loads converted, exactly */
    const float w32[6] = {0.5f, -1.25f, 0.1f, 3.0f, -0.3f, 1e-3f};
    dg_st_writer *w = dg_st_writer_create();
    assert_int_equal(dg_st_writer_add(w, "w", DG_DTYPE_F32, 2, (int64_t[]){2, 3}, w32, &e), DG_OK);
    snprintf(path, sizeof path, "%s/p32.safetensors", g_dir);
    assert_int_equal(dg_st_writer_write(w, path, &e), DG_OK);
    dg_st_writer_free(w);
    assert_int_equal(dg_checkpoint_load(path, q, &e), DG_OK);
    for (int i = 0; i < 6; i++) assert_true(q->data[i] == (double)w32[i]);
    dg_params_free(p);
    dg_params_free(q);
}

/* Memory estimates count 8-byte values: the double tape's arena against dg_rollout_memory (as
 * tests/test_memory.c does for the float tape). */
static void tape_of(const char *yaml, int B) {
    dg_err e = {0};
    dg_cfg *cfg;
    dg_train_opts o;
    dg_env *env = check_env(yaml, &cfg, &o);
    dg_policy pol;
    dg_params *p = NULL;
    assert_int_equal(dg_policy_create(env, o.hidden, o.nhidden, &pol, &p, &e), DG_OK);
    dg_real *st = malloc((size_t)B * env->state_dim * sizeof(dg_real));
    dg_real *aux = malloc((size_t)B * (env->aux_dim ? env->aux_dim : 1) * sizeof(dg_real));
    assert_true(st && aux);
    dg_rng rng;
    dg_rng_seed(&rng, 1);
    assert_int_equal(env->game->reset(env, &rng, B, st, aux, NULL), DG_OK);
    dg_ctx *ctx = dg_ctx_create((size_t)256 << 20);
    assert_non_null(ctx);
    dg_real terms[DG_LOSS_MAX_TERMS];
    dg_tensor *loss = dg_rollout(ctx, env, &pol, p, st, aux, B, 1.0 / B, terms, NULL, B);
    assert_non_null(loss);
    dg_backward(ctx, loss);
    assert_int_equal(dg_ctx_status(ctx), DG_OK);
    const double peak = (double)dg_ctx_peak(ctx);
    const double est = dg_rollout_memory(env, o.hidden, o.nhidden, B, env->horizon, 1);
    printf("  %-10s B %3d H %3d f64 arena %8.2f MB, estimate %8.2f MB (x%.2f)\n", env->game->name, B, env->horizon,
           peak / 1e6, est / 1e6, est / peak);
    /* (2.2: the generic formula is the floor, as in test_memory.c) */
    assert_true(est >= peak && est <= 2.2 * peak);
    dg_ctx_free(ctx);
    free(st);
    free(aux);
    dg_params_free(p);
    dg_env_free(env);
    dg_cfg_free(cfg);
}

static void test_tape_estimate(void **state) {
    (void)state;
    tape_of("game: reach\n", 64);
    tape_of("game: racing\n", 64);
    tape_of("game: pixel\n", 32);
    tape_of("game: billiards\ntrain: {mode: policy}\n", 64);
    tape_of("game: pong\n", 32);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_is_double),
        cmocka_unit_test(test_tanh_f64),
        cmocka_unit_test(test_gemm_f64),
        cmocka_unit_test(test_core_gradcheck_tight),
        cmocka_unit_test(test_games_gradcheck_tight),
        cmocka_unit_test(test_train_determinism),
        cmocka_unit_test(test_checkpoint_f64),
        cmocka_unit_test(test_tape_estimate),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
