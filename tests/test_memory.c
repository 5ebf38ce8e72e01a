/* Memory estimates and checked counts: the one checked multiply, the process's
 * memory limit (RAM, ulimit -v), the tape estimate held against the arena each
 * shipped game really fills (forward, and forward + backward), the trainer's and
 * the HJI solver's estimates growing with what they should. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/internal.h"  /* dg_mem_cgroup_left */
#include "core/internal.h"
#include "difgames/difgames.h"
#include "util/check.h"

static void test_mul_ok(void **state) {
    (void)state;
    int64_t r = -1;
    assert_true(dg_mul_ok(3, 4, 12, &r));
    assert_int_equal(r, 12);
    assert_false(dg_mul_ok(3, 5, 14, &r));
    assert_int_equal(r, 12);                                   /* untouched on refusal */
    assert_true(dg_mul_ok(0, INT64_MAX, 0, &r));
    assert_int_equal(r, 0);
    assert_false(dg_mul_ok(-1, 2, 100, NULL));
    assert_false(dg_mul_ok(INT64_MAX / 2 + 1, 2, INT64_MAX, NULL));  /* past the type */
    assert_false(dg_mul_ok((int64_t)1 << 32, (int64_t)1 << 32, INT64_MAX, NULL));
    assert_true(dg_mul_ok((int64_t)1 << 31, (int64_t)1 << 31, INT64_MAX, &r));
    assert_int_equal(r, (int64_t)1 << 62);
}

static void test_mem_limit(void **state) {
    (void)state;
    const char *src = NULL;
    const double have = dg_mem_limit(&src);
    assert_non_null(src);
    assert_true(have > 0);
    dg_err e = {0};
    assert_int_equal(dg_mem_check(1024, &e), DG_OK);
    assert_int_equal(dg_mem_check(1e30, &e), DG_ERR_NOMEM);
    assert_non_null(strstr(e.msg, "needs about"));
    /* the refusal names the job and what to lower */
    dg_err r = {0};
    assert_int_equal(dg_mem_require(1024, "batch 2", "--batch", &r), DG_OK);
    assert_int_equal(dg_mem_require(1e30, "batch 9 x horizon 9", "--batch or --horizon", &r), DG_ERR_NOMEM);
    assert_non_null(strstr(r.msg, "batch 9 x horizon 9 needs about"));
    assert_non_null(strstr(r.msg, "; lower --batch or --horizon"));
    /* under an address-space limit (in a child: the limit stays there) the limit wins */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *fp = fopen("/proc/self/statm", "r");
        unsigned long pages = 0;
        if (!fp || fscanf(fp, "%lu", &pages) != 1) _exit(3);
        fclose(fp);
        const double now = (double)pages * (double)sysconf(_SC_PAGESIZE);
        struct rlimit rl = {.rlim_cur = (rlim_t)(now + 256.0 * 1048576), .rlim_max = RLIM_INFINITY};
        getrlimit(RLIMIT_AS, &rl);
        rl.rlim_cur = (rlim_t)(now + 256.0 * 1048576);
        if (setrlimit(RLIMIT_AS, &rl) != 0) _exit(0);           /* not allowed here: nothing to test */
        const char *s = NULL;
        const double l = dg_mem_limit(&s);
        dg_err e2 = {0};
        _exit(strcmp(s, "ulimit -v") == 0 && l <= 257.0 * 1048576 && l > 200.0 * 1048576 &&
                      dg_mem_check(512.0 * 1048576, &e2) == DG_ERR_NOMEM && strstr(e2.msg, "(ulimit -v)")
                  ? 0 : 4);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* The arena a B-row episode of cfg's game really fills against dg_rollout_memory. */
static void tape_of(const char *yaml, int B) {
    dg_err e = {0};
    dg_cfg *cfg;
    dg_train_opts o;
    dg_env *env = check_env(yaml, &cfg, &o);
    dg_policy pol;
    dg_params *p = NULL;
    assert_int_equal(dg_policy_create(env, o.hidden, o.nhidden, &pol, &p, &e), DG_OK);
    float *st = malloc((size_t)B * env->state_dim * sizeof(float));
    float *aux = malloc((size_t)B * (env->aux_dim ? env->aux_dim : 1) * sizeof(float));
    assert_true(st && aux);
    dg_rng rng;
    dg_rng_seed(&rng, 1);
    assert_int_equal(env->game->reset(env, &rng, B, st, aux, NULL), DG_OK);
    for (int backward = 0; backward < 2; backward++) {
        dg_ctx *ctx = dg_ctx_create((size_t)256 << 20);
        assert_non_null(ctx);
        float terms[DG_LOSS_MAX_TERMS];
        dg_tensor *loss = dg_rollout(ctx, env, &pol, p, st, aux, B, 1.0f / (float)B, terms, NULL, B);
        assert_non_null(loss);
        if (backward) dg_backward(ctx, loss);
        assert_int_equal(dg_ctx_status(ctx), DG_OK);
        const double peak = (double)dg_ctx_peak(ctx);
        const double est = dg_rollout_memory(env, o.hidden, o.nhidden, B, env->horizon, backward);
        printf("  %-10s B %3d H %3d %-17s arena %8.2f MB, estimate %8.2f MB (x%.2f)\n", env->game->name, B,
               env->horizon, backward ? "forward+backward" : "forward", peak / 1e6, est / 1e6, est / peak);
        assert_true(est >= peak);        /* never under: a job that fits the estimate fits */
        /* and not so far over that it refuses what fits: the generic formula is the estimate's
         * floor, 2.14x reach's B 64 forward+backward arena since its observation and cost terms
         * became the ops reach_obs and reach_cost (three tape nodes a step fewer) */
        assert_true(est <= 2.2 * peak);
        dg_ctx_free(ctx);
    }
    dg_mem_parts m;
    const double total = dg_train_memory(env, &o, &m);
    assert_true(total == m.total && m.params > 0 && m.tape > 0 && m.data > 0);
    o.batch *= 4;
    assert_true(dg_train_memory(env, &o, NULL) > total);
    free(st);
    free(aux);
    dg_params_free(p);
    dg_env_free(env);
    dg_cfg_free(cfg);
}

/* a large arena (16 MiB and more: a value network's tape) starts on a 2 MiB boundary and covers whole
 * 2 MiB pages, so that the kernel can back it with huge pages (context.c asks with madvise) */
static void test_arena_huge_aligned(void **state) {
    (void)state;
#if defined(__linux__)
    dg_ctx *ctx = dg_ctx_create((size_t)40 << 20);
    assert_non_null(ctx);
    assert_int_equal((uintptr_t)ctx->base % ((uintptr_t)2 << 20), 0);
    assert_int_equal(ctx->cap % ((size_t)2 << 20), 0);
    assert_true(ctx->cap >= ((size_t)40 << 20));
    dg_ctx_free(ctx);
#endif
}

static void test_tape_estimate(void **state) {
    (void)state;
    tape_of("game: reach\n", 64);
    tape_of("game: reach\npolicy: {hidden: [256, 256, 256]}\nenv: {horizon: 20}\n", 64);
    tape_of("game: reach\n", 3);
    tape_of("game: chase\n", 64);
    tape_of("game: chase\nenv: {evader: policy}\n", 64);
    tape_of("game: duel_simple\nenv: {horizon: 50}\n", 64);
    tape_of("game: pixel\n", 32);
    tape_of("game: pixel\nrender: {size: 64}\nenv: {horizon: 10}\n", 16);
    tape_of("game: billiards\ntrain: {mode: policy}\n", 64);
    tape_of("game: billiards\ntrain: {mode: policy}\nenv: {contact: soft}\n", 64);
    tape_of("game: billiards\ntrain: {mode: policy}\nenv: {contact: hard}\n", 3);
    tape_of("game: racing\n", 64);
    tape_of("game: racing\n", 3);
    tape_of("game: racing\nenv: {spline: false, lookahead: 8}\n", 16);
    tape_of("game: pong\n", 32);
    tape_of("game: pong\nenv: {substeps: 16, horizon: 40}\n", 3);
}

static void test_train_memory_key(void **state) {
    (void)state;
    const char *cases[][2] = {
        {"game: reach\ntrain: {batch: 1000000}\nenv: {horizon: 100000}\n", "train.batch"},
        {"game: reach\npolicy: {hidden: [65536, 65536]}\n", "policy.hidden"},
        {"game: pixel\nrender: {size: 1024}\ntrain: {batch: 100000}\n", "render.size"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dg_err e = {0};
        dg_cfg *cfg;
        dg_train_opts o;
        dg_env *env = check_env(cases[i][0], &cfg, &o);
        dg_mem_parts m;
        dg_train_memory(env, &o, &m);
        assert_string_equal(dg_train_memory_key(env, &m), cases[i][1]);
        assert_int_equal(dg_mem_check(m.total, &e), DG_ERR_NOMEM);
        dg_env_free(env);
        dg_cfg_free(cfg);
    }
}

static void test_hji_memory(void **state) {
    (void)state;
    dg_err e = {0};
    const char *yaml = "game: air3d\ngrid: {n: [41, 41, 31]}\n";
    dg_cfg *cfg = dg_cfg_parse(yaml, strlen(yaml), "air3d.yaml", &e);
    dg_hji_problem *p = cfg ? dg_hji_problem_load(cfg, &e) : NULL;
    assert_non_null(p);
    const double N = (double)p->grid.nodes;
    dg_hji_opts o = p->opts;
    o.threads = 1;
    const double rk3 = dg_hji_solve_memory(&p->grid, &p->game, &o, 1);
    assert_true(rk3 >= 4 * N * sizeof(double));   /* U, A, B and the output at least */
    assert_true(rk3 <= 12 * N * sizeof(double));  /* air3d keeps a few tables, not one per entry */
    const double more = dg_hji_solve_memory(&p->grid, &p->game, &o, 4) - rk3;  /* three more output times */
    assert_true(more >= 3 * (N + 16) * sizeof(double) && more <= 3.1 * (N + 16) * sizeof(double));
    dg_hji_opts lo = o;
    dg_hji_opts_accuracy(&lo, DG_HJI_ACCURACY_LOW);
    assert_true(dg_hji_solve_memory(&p->grid, &p->game, &lo, 1) < rk3);  /* Euler: no third array */
    dg_hji_opts f = o;
    f.real = DG_HJI_REAL_F32;
    assert_true(dg_hji_solve_memory(&p->grid, &p->game, &f, 1) < rk3);
    /* the estimate holds: the solve runs within it (as measured in peak RSS by the bench) */
    double *out = malloc((size_t)N * sizeof(double));
    assert_non_null(out);
    p->t_end = 0.05;
    p->opts.threads = 1;
    assert_int_equal(dg_hji_problem_solve(p, out, NULL, &e), DG_OK);
    free(out);
    dg_hji_problem_free(p);
    dg_cfg_free(cfg);
}

static void test_disk(void **state) {
    (void)state;
    const double root = dg_disk_free("/");
    assert_true(root > 0);
    const double deep = dg_disk_free("/no/such/folder/deeper");  /* its nearest existing parent: / */
    assert_true(deep > 0 && deep < 2 * root + 1e9);
    assert_true(dg_disk_free("/proc/no/such") == -1);             /* a pseudo file system: unknown */
    assert_true(dg_disk_free("") == -1);
    dg_cfg *cfg;
    dg_train_opts o;
    dg_env *env = check_env("game: reach\ntrain: {epochs: 60}\n", &cfg, &o);
    const double base = dg_train_output_bytes(env, &o);
    assert_true(base > 0);
    o.nsnapshots = 0;
    assert_true(dg_train_output_bytes(env, &o) < base);                /* fewer snapshot files */
    o.hidden[0] = o.hidden[1] = 1024;
    assert_true(dg_train_output_bytes(env, &o) > base);                /* larger snapshots */
    dg_env_free(env);
    dg_cfg_free(cfg);
}

/* Writes text into the file dir/name (dir made first). */
static void put(const char *dir, const char *name, const char *text) {
    char path[600];
    snprintf(path, sizeof path, "mkdir -p '%s'", dir);
    assert_int_equal(system(path), 0);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

/* The cgroup bound on a fake tree: the working set (use less inactive page cache) counts, not the
 * page cache; the tightest of the cgroup and its parents wins; missing files are skipped. */
static void test_cgroup_left(void **state) {
    (void)state;
    char t[] = "/tmp/dg_cgroup_XXXXXX", v2[64], v1[64], proc[64], a[128], b[128];
    assert_non_null(mkdtemp(t));
    snprintf(v2, sizeof v2, "%s/v2", t);
    snprintf(v1, sizeof v1, "%s/v1", t);
    snprintf(proc, sizeof proc, "%s/cgroup", t);
    snprintf(a, sizeof a, "%s/a", v2);
    snprintf(b, sizeof b, "%s/a/b", v2);
    assert_true(dg_mem_cgroup_left(proc, v2, v1) == -1);                 /* no /proc file: no bound */
    put(t, "cgroup", "0::/a/b\n");
    put(v2, "cgroup.procs", "");                                         /* the root: no memory.max */
    put(a, "memory.max", "1000\n");
    put(a, "memory.current", "900\n");
    put(a, "memory.stat", "anon 300\nfile 600\ninactive_file 600\n");
    put(b, "memory.max", "max\n");
    put(b, "memory.current", "500\n");
    assert_true(dg_mem_cgroup_left(proc, v2, v1) == 700);                /* the parent's, cache not counted */
    put(b, "memory.max", "600\n");
    put(b, "memory.stat", "inactive_file 400\n");
    assert_true(dg_mem_cgroup_left(proc, v2, v1) == 500);                /* the cgroup's own is tighter */
    put(a, "memory.stat", "anon 900\n");                               /* no inactive_file: all of it used */
    put(a, "memory.max", "1000\n");
    assert_true(dg_mem_cgroup_left(proc, v2, v1) == 100);
    put(b, "memory.current", "900\n");                                 /* over the limit: nothing left */
    put(b, "memory.stat", "inactive_file 0\n");
    assert_true(dg_mem_cgroup_left(proc, v2, v1) == 0);
    /* a cgroup namespace: the cgroup named is not under the mount, its own is the root */
    put(t, "cgroup", "0::/elsewhere\n");
    put(v2, "memory.max", "3000\n");
    put(v2, "memory.current", "2500\n");
    put(v2, "memory.stat", "inactive_file 1500\n");
    assert_true(dg_mem_cgroup_left(proc, v2, v1) == 2000);
    /* v1: memory.limit_in_bytes, usage_in_bytes, total_inactive_file (the hierarchy's) */
    char x[128];
    snprintf(x, sizeof x, "%s/x", v1);
    put(t, "cgroup", "4:memory:/x\n0::/\n");
    put(x, "memory.limit_in_bytes", "5000\n");
    put(x, "memory.usage_in_bytes", "4000\n");
    put(x, "memory.stat", "inactive_file 10\ntotal_inactive_file 3000\n");
    put(v1, "memory.limit_in_bytes", "9223372036854771712\n");          /* v1's "no limit" */
    assert_true(dg_mem_cgroup_left(proc, v2, v1) == 2000);              /* min(v1 4000, v2 root 2000) */
    put(v2, "memory.max", "max\n");
    assert_true(dg_mem_cgroup_left(proc, v2, v1) == 4000);
    char rm[400];
    snprintf(rm, sizeof rm, "rm -rf '%s'", t);
    assert_int_equal(system(rm), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mul_ok),
        cmocka_unit_test(test_mem_limit),
        cmocka_unit_test(test_cgroup_left),
        cmocka_unit_test(test_tape_estimate),
        cmocka_unit_test(test_arena_huge_aligned),
        cmocka_unit_test(test_train_memory_key),
        cmocka_unit_test(test_hji_memory),
        cmocka_unit_test(test_disk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
