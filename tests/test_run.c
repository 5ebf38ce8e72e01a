/* A run from a config (include/difgames/run.h) and the small helpers the command shares with
 * library users: the config with overrides and its checks, a checkpoint's policy, initial states
 * from a file and drawn, one episode and its numbers against dg_rollout, the bench, pg's files,
 * the default run folder, the median, number lists, an output's folder, a replay GIF. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "difgames/difgames.h"
#include "difgames/run.h"
#include "difgames/sweep.h"
#include "util/tmpdir.h"

static const char REACH[] = "game: reach\nseed: 3\nenv: {horizon: 8}\npolicy: {hidden: [8, 8]}\n"
                            "train: {batch: 4, epochs: 2}\n";

static char g_dir[64];

static int setup(void **state) {
    (void)state;
    return check_tmpdir(g_dir, "dg_run_");
}

static int teardown(void **state) {
    (void)state;
    return check_rmdir(g_dir);
}

/* g_dir/name into buf */
static const char *at(char *buf, size_t n, const char *name) {
    snprintf(buf, n, "%s/%s", g_dir, name);
    return buf;
}

static void load_reach(dg_run *r) {
    dg_err e = {0};
    if (dg_run_parse(r, REACH, strlen(REACH), "reach.yaml", NULL, 0, &e) != DG_OK) fail_msg("%s", e.msg);
}

static void test_load_overrides_and_checks(void **state) {
    (void)state;
    char path[128];
    FILE *fp = fopen(at(path, sizeof path, "reach.yaml"), "w");
    assert_non_null(fp);
    fputs(REACH, fp);
    fclose(fp);
    dg_run r;
    dg_err e = {0};
    const dg_run_set sets[] = {{"seed", "7"}, {"train.batch", NULL}, {"env.horizon", "5"}};
    assert_int_equal(dg_run_load(&r, path, sets, 3, &e), DG_OK);
    assert_string_equal(r.env->game->name, "reach");
    assert_int_equal(r.opts.seed, 7);          /* set                    */
    assert_int_equal(r.opts.batch, 4);         /* NULL: the config's     */
    assert_int_equal(r.env->horizon, 5);
    assert_int_equal(r.opts.nhidden, 2);
    assert_int_equal(dg_run_memory_check(&r, &e), DG_OK);
    dg_run_free(&r);
    dg_run_free(&r);  /* a zeroed run is harmless */
    /* a bad override, an unknown key, a game of the grid solver: errors naming what */
    const dg_run_set bad[] = {{"train.batch", "0"}};
    assert_int_not_equal(dg_run_load(&r, path, bad, 1, &e), DG_OK);
    assert_non_null(strstr(e.msg, "train.batch"));
    assert_null(r.cfg);
    const char typo[] = "game: reach\ntrain: {batchh: 4}\n";
    assert_int_not_equal(dg_run_parse(&r, typo, strlen(typo), "typo.yaml", NULL, 0, &e), DG_OK);
    assert_non_null(strstr(e.msg, "batchh"));
    const char hji[] = "game: air3d\n";
    assert_int_equal(dg_run_parse(&r, hji, strlen(hji), "hji.yaml", NULL, 0, &e), DG_ERR_CONFIG);
    assert_non_null(strstr(e.msg, "difgames hji"));
    /* too large for memory: the key to lower */
    const dg_run_set huge[] = {{"train.batch", "1000000"}, {"env.horizon", "100000"}};
    assert_int_equal(dg_run_parse(&r, REACH, strlen(REACH), "reach.yaml", huge, 2, &e), DG_OK);
    assert_int_equal(dg_run_memory_check(&r, &e), DG_ERR_CONFIG);
    assert_non_null(strstr(e.msg, "lower train.batch"));
    dg_run_free(&r);
}

/* dg_run_doc_read reads the file once, sets the overrides and learns train.precision; dg_run_open
 * makes the run from the document alone (the file may be gone), taking it. */
static void test_doc_read_once(void **state) {
    (void)state;
    char path[128];
    FILE *fp = fopen(at(path, sizeof path, "doc.yaml"), "w");
    assert_non_null(fp);
    fputs("game: reach\nenv: {horizon: 8}\npolicy: {hidden: [8]}\ntrain: {batch: 4, precision: f64}\n", fp);
    fclose(fp);
    dg_run_doc d;
    dg_err e = {0};
    const dg_run_set sets[] = {{"seed", "9"}, {"train.batch", NULL}};
    assert_int_equal(dg_run_doc_read(&d, path, NULL, 0, sets, 2, &e), DG_OK);
    assert_int_equal(d.precision, 1);
    assert_non_null(d.cfg);
    dg_run_doc_free(&d);
    assert_null(d.cfg);
    dg_run_doc_free(&d);  /* a zeroed document is harmless */
    /* an override of train.precision is what the document says */
    const dg_run_set f32[] = {{"train.precision", "f32"}, {"seed", "9"}};
    assert_int_equal(dg_run_doc_read(&d, path, NULL, 0, f32, 2, &e), DG_OK);
    assert_int_equal(d.precision, 0);
    assert_int_equal(unlink(path), 0);  /* opened from the document: the file is not read again */
    dg_run r;
    assert_int_equal(dg_run_open(&r, &d, &e), DG_OK);
    assert_null(d.cfg);  /* the run's now */
    assert_int_equal(r.opts.seed, 9);
    assert_int_equal(r.opts.batch, 4);
    assert_int_equal(r.opts.precision, 0);
    assert_int_equal(r.env->horizon, 8);
    dg_run_free(&r);
    /* no document, a bad precision, a missing file: errors, nothing kept */
    assert_int_equal(dg_run_open(&r, &d, &e), DG_ERR_ARG);
    assert_null(r.cfg);
    const char bad[] = "game: reach\ntrain: {precision: f16}\n";
    assert_int_equal(dg_run_doc_read(&d, "bad.yaml", bad, strlen(bad), NULL, 0, &e), DG_ERR_CONFIG);
    assert_non_null(strstr(e.msg, "train.precision"));
    assert_null(d.cfg);
    assert_int_not_equal(dg_run_doc_read(&d, path, NULL, 0, NULL, 0, &e), DG_OK);
    assert_null(d.cfg);
    /* a value out of its bounds (checked when the run reads it) and a key the game does not take:
     * dg_run_open refuses them, and frees the document it took */
    const dg_run_set zero[] = {{"train.batch", "0"}};
    assert_int_equal(dg_run_doc_read(&d, "r.yaml", REACH, strlen(REACH), zero, 1, &e), DG_OK);
    assert_int_not_equal(dg_run_open(&r, &d, &e), DG_OK);
    assert_non_null(strstr(e.msg, "train.batch"));
    assert_null(d.cfg);
    const char typo[] = "game: reach\ntrain: {batchh: 4}\n";
    assert_int_equal(dg_run_doc_read(&d, "typo.yaml", typo, strlen(typo), NULL, 0, &e), DG_OK);
    assert_int_not_equal(dg_run_open(&r, &d, &e), DG_OK);
    assert_non_null(strstr(e.msg, "batchh"));
    assert_null(d.cfg);
    assert_null(r.cfg);
}

static void test_policy_load(void **state) {
    (void)state;
    dg_run r;
    load_reach(&r);
    dg_err e = {0};
    dg_policy m;
    dg_params *p = NULL, *q = NULL;
    assert_int_equal(dg_policy_create(r.env, r.opts.hidden, r.opts.nhidden, &m, &p, &e), DG_OK);
    dg_rng rng;
    dg_rng_seed(&rng, 11);
    dg_policy_reset_params(&m, p, &rng);
    char path[128], other[128];
    assert_int_equal(dg_checkpoint_save(at(path, sizeof path, "ck.safetensors"), p, 0, NULL, 0, &e), DG_OK);
    dg_policy m2;
    assert_int_equal(dg_run_policy_load(&r, path, &m2, &q, &e), DG_OK);
    assert_int_equal(q->total, p->total);
    assert_memory_equal(q->data, p->data, p->total * sizeof(float));
    dg_params_free(q);
    /* a missing file; a checkpoint of another policy (other hidden sizes): a bad input file */
    assert_int_equal(dg_run_policy_load(&r, at(other, sizeof other, "none.safetensors"), &m2, &q, &e), DG_ERR_IO);
    assert_null(q);
    dg_policy m3;
    dg_params *w = NULL;
    assert_int_equal(dg_policy_create(r.env, (int[]){5, 5}, 2, &m3, &w, &e), DG_OK);
    assert_int_equal(dg_checkpoint_save(at(other, sizeof other, "wide.safetensors"), w, 0, NULL, 0, &e), DG_OK);
    assert_int_equal(dg_run_policy_load(&r, other, &m2, &q, &e), DG_ERR_FORMAT);
    assert_null(q);
    assert_null(strstr(e.msg, "trained on game"));  /* no game in its metadata: the tensor alone */
    /* a checkpoint of another game: the message names both games first, then the tensor */
    const char *meta[] = {"game", "chase"};
    assert_int_equal(dg_checkpoint_save(other, w, 0, meta, 1, &e), DG_OK);
    assert_int_equal(dg_run_policy_load(&r, other, &m2, &q, &e), DG_ERR_FORMAT);
    char want[256];
    snprintf(want, sizeof want, "checkpoint %s was trained on game 'chase' (this config: 'reach'): tensor 'net.0.", other);
    if (strncmp(e.msg, want, strlen(want)) != 0) fail_msg("%s", e.msg);
    assert_non_null(strstr(e.msg, "expected shape"));
    dg_params_free(w);
    dg_params_free(p);
    dg_run_free(&r);
}

/* dg_run_episode, dg_run_eval and drawn states against dg_rollout on a context of our own */
static void test_episode_and_eval(void **state) {
    (void)state;
    dg_run r;
    load_reach(&r);
    const dg_env *env = r.env;
    dg_err e = {0};
    dg_policy m;
    dg_params *p = NULL;
    assert_int_equal(dg_policy_create(env, r.opts.hidden, r.opts.nhidden, &m, &p, &e), DG_OK);
    dg_rng rng;
    dg_rng_seed(&rng, 2);
    dg_policy_reset_params(&m, p, &rng);
    const int B = 5;
    float *state0, *aux;
    assert_int_equal(dg_run_init_draw(env, 9, B, &state0, &aux, &e), DG_OK);
    float ref_state[5 * 16], ref_aux[5 * 16];
    assert_true(env->state_dim <= 16 && env->aux_dim <= 16);
    dg_rng_seed(&rng, 9);
    assert_int_equal(env->game->reset(env, &rng, B, ref_state, ref_aux, &e), DG_OK);
    assert_memory_equal(state0, ref_state, (size_t)B * env->state_dim * sizeof(float));

    dg_ctx *own = dg_ctx_create((size_t)64 << 20);
    float terms[DG_LOSS_MAX_TERMS];
    dg_params_zero_grad(p);
    dg_tensor *ref = dg_rollout(own, env, &m, p, state0, aux, B, 1.0f / B, terms, NULL, B);
    assert_non_null(ref);
    dg_backward(own, ref);
    const double ref_norm = dg_grad_norm(p);
    assert_true(ref_norm > 0);

    dg_tensor *loss;
    float terms2[DG_LOSS_MAX_TERMS];
    dg_params_zero_grad(p);
    dg_ctx *ctx = dg_run_episode(env, &m, p, state0, aux, B, 1, terms2, NULL, &loss, &e);
    assert_non_null(ctx);
    assert_true(loss->data[0] == ref->data[0]);
    assert_memory_equal(terms2, terms, (size_t)env->nterms * sizeof(float));
    assert_true(dg_grad_norm(p) == ref_norm);
    dg_ctx_free(ctx);

    dg_eval_result res;
    assert_int_equal(dg_run_eval(env, &m, p, state0, aux, B, 1, &res, &e), DG_OK);
    assert_true(res.loss == ref->data[0]);
    assert_true(res.grad_norm == ref_norm);  /* zeroed first: the same gradient, not twice it */
    assert_memory_equal(res.terms, terms, (size_t)env->nterms * sizeof(float));
    for (int i = 0; i < env->nmetrics; i++) assert_true(isfinite(res.metrics[i]));
    assert_int_equal(dg_run_eval(env, &m, p, state0, aux, B, 0, &res, &e), DG_OK);
    assert_true(res.loss == ref->data[0] && res.grad_norm == 0);
    assert_true(dg_run_eval_memory(env, &r.opts, p, B, 1) > dg_run_eval_memory(env, &r.opts, p, B, 0));

    /* the same states from a file: the same episode */
    char path[128];
    dg_st_writer *w = dg_st_writer_create();
    assert_int_equal(dg_st_writer_add(w, "state", DG_DTYPE_F32, 2, (int64_t[]){B, env->state_dim}, state0, &e), DG_OK);
    if (env->aux_dim)
        assert_int_equal(dg_st_writer_add(w, env->aux_name, DG_DTYPE_F32, 2,
                                          (int64_t[]){B, env->aux_user_dim ? env->aux_user_dim : env->aux_dim}, aux,
                                          &e), DG_OK);
    assert_int_equal(dg_st_writer_write(w, at(path, sizeof path, "init.safetensors"), &e), DG_OK);
    dg_st_writer_free(w);
    float *s2, *a2;
    assert_int_equal(dg_run_init_load(env, path, &s2, &a2, &e), B);
    assert_memory_equal(s2, state0, (size_t)B * env->state_dim * sizeof(float));
    assert_int_equal(dg_run_eval(env, &m, p, s2, a2, B, 0, &res, &e), DG_OK);
    assert_true(res.loss == ref->data[0]);
    free(s2);
    free(a2);
    /* a file without 'state' (B, state_dim) */
    w = dg_st_writer_create();
    assert_int_equal(dg_st_writer_add(w, "state", DG_DTYPE_F32, 2, (int64_t[]){1, 3}, state0, &e), DG_OK);
    assert_int_equal(dg_st_writer_write(w, at(path, sizeof path, "bad.safetensors"), &e), DG_OK);
    dg_st_writer_free(w);
    assert_int_equal(dg_run_init_load(env, path, &s2, &a2, &e), -1);
    assert_null(s2);
    assert_non_null(strstr(e.msg, "needs a tensor 'state' of shape (B, "));

    dg_ctx_free(own);
    free(state0);
    free(aux);
    dg_params_free(p);
    dg_run_free(&r);
}

static void test_bench_disk_pg_save(void **state) {
    (void)state;
    dg_run r;
    load_reach(&r);
    dg_err e = {0};
    dg_bench_result b;
    assert_int_equal(dg_run_bench(&r, 1, 3, &b, &e), DG_OK);
    assert_int_equal(b.epochs, 3);
    assert_true(b.ms > 0 && b.ms_min <= b.ms && b.flops > 0 && b.tape_bytes > 0);
    assert_true(fabs(b.steps_per_s - 4.0 * 8 / (b.ms / 1e3)) <= 1e-9 * b.steps_per_s);
    assert_int_equal(dg_run_disk_check(&r, g_dir, &e), DG_OK);

    dg_pg *pg = dg_pg_create(r.env, &r.pg, &e);
    assert_non_null(pg);
    dg_pg_curve c = {0};
    char dir[128], path[160];
    at(dir, sizeof dir, "pg/out");
    assert_int_equal(dg_run_pg_save(dir, &c, 3, pg, "reach", &e), DG_OK);
    static const char *const FILES[] = {"curve.csv", "policy.safetensors", "value.safetensors"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, FILES[i]);
        assert_int_equal(access(path, R_OK), 0);
    }
    dg_pg_free(pg);
    dg_run_free(&r);
}

typedef struct train_events { int start, epochs, start_epochs_before; const dg_run_train_result *res; } train_events;

static void count_events(const dg_train_event *ev, void *user) {
    train_events *t = user;
    if (ev->kind == DG_TRAIN_EV_START) {
        t->start_epochs_before = t->epochs + t->res->epochs_before;  /* START comes before any epoch */
        t->start++;
    }
    if (ev->kind == DG_TRAIN_EV_EPOCH) t->epochs++;
}

/* REACH with sets, trained by dg_run_train into g_dir/name (resume: from its resume.safetensors) */
static dg_status train_into(const char *name, const dg_run_set *sets, int nsets, int resume, int go_on,
                            train_events *ev, dg_run_train_result *res, dg_err *e) {
    dg_run r;
    char dir[128], rpath[160];
    if (dg_run_parse(&r, REACH, strlen(REACH), "reach.yaml", sets, nsets, e) != DG_OK) fail_msg("%s", e->msg);
    at(dir, sizeof dir, name);
    snprintf(rpath, sizeof rpath, "%s/resume.safetensors", dir);
    memset(ev, 0, sizeof *ev);
    ev->res = res;
    const dg_status st = dg_run_train(&r, dir, resume ? rpath : NULL, go_on, count_events, ev, NULL, res, e);
    dg_run_free(&r);
    return st;
}

/* dg_run_train: a fresh run, a refused one (0 epochs; a resume that would not go on) and a resumed
 * one ending with the bits of a run never stopped */
static void test_train(void **state) {
    (void)state;
    dg_err e = {0};
    train_events ev;
    dg_run_train_result res;
    assert_int_equal(train_into("t2", NULL, 0, 0, 0, &ev, &res, &e), DG_OK);
    assert_int_equal(ev.start, 1);
    assert_int_equal(ev.epochs, 2);
    assert_int_equal(res.epochs, 2);
    assert_true(isfinite(res.loss) && res.seconds >= 0);
    const dg_run_set zero[] = {{"train.epochs", "0"}}, three[] = {{"train.epochs", "3"}};
    assert_int_equal(train_into("t0", zero, 1, 0, 0, &ev, &res, &e), DG_ERR_CONFIG);
    assert_int_equal(res.step, DG_RUN_STEP_CONFIG);
    assert_non_null(strstr(e.msg, "key 'train.epochs': 0 epochs would train nothing"));
    assert_int_equal(train_into("t2", NULL, 0, 1, 1, &ev, &res, &e), DG_ERR_ARG);  /* 2 asked, 2 done */
    assert_int_equal(res.step, DG_RUN_STEP_EPOCHS);
    assert_int_equal(res.epochs_before, 2);
    assert_int_equal(ev.start, 0);
    assert_int_equal(train_into("t2", three, 1, 1, 1, &ev, &res, &e), DG_OK);
    assert_int_equal(ev.start_epochs_before, 2);
    assert_int_equal(ev.epochs, 1);
    assert_int_equal(res.epochs, 3);
    assert_int_equal(train_into("t3", three, 1, 0, 0, &ev, &res, &e), DG_OK);
    char a[160], b[160];
    snprintf(a, sizeof a, "%s/t2/final.safetensors", g_dir);
    snprintf(b, sizeof b, "%s/t3/final.safetensors", g_dir);
    dg_params *pa = NULL, *pb = NULL;
    dg_run r;
    load_reach(&r);
    dg_policy ma, mb;
    assert_int_equal(dg_run_policy_load(&r, a, &ma, &pa, &e), DG_OK);
    assert_int_equal(dg_run_policy_load(&r, b, &mb, &pb, &e), DG_OK);
    assert_int_equal(pa->total, pb->total);
    assert_memory_equal(pa->data, pb->data, pa->total * sizeof(float));
    dg_params_free(pa);
    dg_params_free(pb);
    dg_run_free(&r);
}

static dg_status refuse_second(int k, const dg_run *r, const char *dir, const dg_run_train_result *res, void *user) {
    int *calls = user;
    if (!res) calls[0]++;
    else calls[1]++;
    assert_non_null(strstr(dir, k == 0 ? "seed_2" : "seed_1"));
    assert_int_equal(r->opts.seed, k == 0 ? 2 : 1);
    return !res && k == 1 ? DG_ERR_ARG : DG_OK;
}

/* dg_run_seeds: each seed into its folder, the median; two alike refused; the caller refusing one */
static void test_seeds(void **state) {
    (void)state;
    char path[192], base[128];
    FILE *fp = fopen(at(path, sizeof path, "sweep.yaml"), "w");
    assert_non_null(fp);
    fputs(REACH, fp);
    fclose(fp);
    const int seeds[] = {2, 1}, twice[] = {1, 1};
    const dg_run_set sets[] = {{"train.epochs", "1"}};
    double losses[2];
    dg_err e = {0};
    dg_run_seed_sweep w = {.config = path, .sets = sets, .nsets = 1, .base = at(base, sizeof base, "sweep"), .seeds = seeds,
                      .n = 2, .losses = losses};
    assert_int_equal(dg_run_seeds(&w, &e), DG_OK);
    assert_int_equal(w.failed, -1);
    assert_int_equal(w.epochs, 1);
    assert_true(isfinite(losses[0]) && isfinite(losses[1]) && losses[0] != losses[1]);
    assert_true(w.median == 0.5 * (losses[0] + losses[1]));
    char final[192];
    snprintf(final, sizeof final, "%s/seed_1/final.safetensors", base);
    assert_int_equal(access(final, R_OK), 0);
    w.seeds = twice;
    assert_int_equal(dg_run_seeds(&w, &e), DG_ERR_ARG);
    assert_int_equal(w.res.step, DG_RUN_STEP_SEEDS);
    assert_non_null(strstr(e.msg, "seed 1 given twice"));
    int calls[2] = {0, 0};
    w.seeds = seeds;
    w.base = at(base, sizeof base, "sweep2");
    w.on_seed = refuse_second;
    w.user = calls;
    assert_int_equal(dg_run_seeds(&w, &e), DG_ERR_ARG);
    assert_int_equal(w.failed, 1);
    assert_int_equal(w.res.step, DG_RUN_STEP_CALLER);
    assert_int_equal(calls[0], 2);
    assert_int_equal(calls[1], 1);
}

static dg_status pg_events(const dg_pg_progress *p, void *user) {
    char *seen = user;  /* "b" at BPTT's start, "p" at policy gradient's, "." for each evaluation */
    const size_t n = strlen(seen);
    if (n + 1 < 64) {
        seen[n] = p->start ? p->start[0] : p->point ? '.' : 0;
        seen[n + 1] = 0;
    }
    return DG_OK;
}

/* dg_run_pg: both phases into one curve and a folder, each phase announced before its evaluations */
static void test_pg_run(void **state) {
    (void)state;
    dg_run r;
    dg_err e = {0};
    const dg_run_set sets[] = {{"pg.iters", "2"}, {"pg.batch", "4"}, {"pg.eval_batch", "4"}};
    if (dg_run_parse(&r, REACH, strlen(REACH), "reach.yaml", sets, 3, &e) != DG_OK) fail_msg("%s", e.msg);
    char dir[128], path[192], seen[64] = "";
    dg_run_pg_result res;
    assert_int_equal(dg_run_pg(&r, at(dir, sizeof dir, "pgrun"), 1, 1, pg_events, seen, &res, &e), DG_OK);
    assert_int_equal(seen[0], 'b');
    assert_non_null(strchr(seen, 'p'));
    assert_true(strchr(seen + 1, '.') < strchr(seen, 'p'));  /* BPTT's evaluations before policy gradient */
    assert_true(isfinite(res.bptt.final) && isfinite(res.pg.final));
    assert_int_equal(res.pg.iters, 2);
    assert_int_equal(res.pg_env_steps, 2 * 4 * 8);
    snprintf(path, sizeof path, "%s/policy.safetensors", dir);
    assert_int_equal(access(path, R_OK), 0);
    assert_int_equal(dg_run_pg(&r, NULL, 0, 0, NULL, NULL, &res, &e), DG_OK);  /* neither: nothing to do */
    assert_true(isnan(res.bptt.final) && isnan(res.pg.final));
    dg_run_free(&r);
}

static void test_run_dir(void **state) {
    (void)state;
    static const char *const CASES[][2] = {
        {"configs/duel.yaml", "runs/duel"},          {"configs/bench/reach.yaml", "runs/bench/reach"},
        {"my/hover.yaml", "runs/hover"},             {"x/configs/a.yml", "runs/a"},
        {"configs/../up.yaml", "runs/up"},           {"..yaml", "runs/run"},
        {"/abs/myconfigs/z.yaml", "runs/z"},         {"plain", "runs/plain"},
    };
    char buf[64];
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        assert_int_equal(dg_run_dir(CASES[i][0], buf, sizeof buf), 0);
        assert_string_equal(buf, CASES[i][1]);
    }
    assert_int_equal(dg_run_dir("configs/a_long_name.yaml", buf, 8), -1);
}

/* a zero prints without its sign, whatever made it negative; nothing else changes */
static void test_format_double(void **state) {
    (void)state;
    const struct { const char *fmt; double v; const char *want; } cases[] = {
        {"%.4g", -0.0, "0"}, {"%.9g", 0.0, "0"}, {"%.2f", -0.001, "0.00"}, {"%.3e", -0.0, "0.000e+00"},
        {"%.0f", -0.4, "0"}, {"%.4g", -1e-30, "-1e-30"}, {"%.2f", -0.005001, "-0.01"}, {"%.4g", -2.5, "-2.5"},
        {"%.1f", -10.0, "-10.0"}, {"%.9g", 0.25, "0.25"}, {"%.0f", -0.6, "-1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[32];
        const int n = dg_format_double(buf, sizeof buf, cases[i].fmt, cases[i].v);
        assert_string_equal(buf, cases[i].want);
        assert_int_equal(n, (int)strlen(cases[i].want));
    }
    char small[3];  /* cut short: snprintf's count, and no sign taken from a number not seen whole */
    assert_int_equal(dg_format_double(small, sizeof small, "%.3f", -0.0001), 6);
    assert_string_equal(small, "-0");
}

/* The exit status of each status (README "Exit status"): 2 for what the user fixes, 130 interrupted,
 * 1 for the rest, 0 for DG_OK. */
static void test_status_exit(void **state) {
    (void)state;
    const int want[DG_STATUS_COUNT] = {
        [DG_OK] = 0, [DG_ERR_NOMEM] = 1, [DG_ERR_ARENA_FULL] = 1, [DG_ERR_SHAPE] = 1, [DG_ERR_ARG] = 2,
        [DG_ERR_IO] = 2, [DG_ERR_FORMAT] = 2, [DG_ERR_NOT_FOUND] = 2, [DG_ERR_CONFIG] = 2, [DG_ERR_NONFINITE] = 1,
        [DG_ERR_INTERRUPTED] = 130,
    };
    for (int s = 0; s < DG_STATUS_COUNT; s++) assert_int_equal(dg_status_exit((dg_status)s), want[s]);
    assert_int_equal(DG_EXIT_USAGE, 2);
    assert_int_equal(DG_EXIT_FAIL, 1);
}

static void test_median_and_list(void **state) {
    (void)state;
    double v[] = {5, 1, 4}, w[] = {4, 1, 3, 2};
    assert_true(dg_median(v, 3) == 4);
    assert_true(dg_median(w, 4) == 2.5);
    assert_true(w[0] == 1 && w[3] == 4);  /* sorted */
    dg_err e = {0};
    double *out = NULL;
    assert_int_equal(dg_parse_list("1,2.5,-3", -10, 10, 0, &out, &e), 3);
    assert_true(out[0] == 1 && out[1] == 2.5 && out[2] == -3);
    free(out);
    assert_int_equal(dg_parse_list("1,x", -10, 10, 0, &out, &e), -1);
    assert_null(out);
    assert_non_null(strstr(e.msg, "item 2 is not a number: 'x'"));
    assert_int_equal(dg_parse_list("1,2.5", 0, 10, 1, &out, &e), -1);
    assert_non_null(strstr(e.msg, "item 2 is '2.5'; expected a whole number"));
    assert_int_equal(dg_parse_list("11", 0, 10, 0, &out, &e), -1);
    assert_int_equal(dg_parse_list("1,,2", 0, 10, 0, &out, &e), -1);
    assert_int_equal(dg_parse_list("", 0, 10, 0, &out, &e), -1);
}

/* dg_err_echo: a short value whole, a long one cut after a comma (or on a character boundary) with
 * its count, control bytes as '?'; the library's list messages keep their reason before the echo */
static void test_err_echo(void **state) {
    (void)state;
    char buf[DG_ECHO_LEN], list[800] = "", big[3001];
    assert_string_equal(dg_err_echo(buf, sizeof buf, "train.lr=0.1", (size_t)-1), "'train.lr=0.1'");
    assert_string_equal(dg_err_echo(buf, sizeof buf, "a\nb", (size_t)-1), "'a?b'");
    assert_string_equal(dg_err_echo(buf, sizeof buf, "abcdef", 3), "'abc'");
    assert_string_equal(dg_err_echo(buf, sizeof buf, NULL, (size_t)-1), "''");
    for (int i = 1; i <= 100; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s0.%04d", i > 1 ? "," : "", i);
    assert_string_equal(DG_ECHO(list), "'0.0001,0.0002,0.0003,0.0004,0.0005,0.0006,...' (100 values)");
    memset(big, 'x', 3000);
    big[3000] = 0;
    dg_err_echo(buf, sizeof buf, big, (size_t)-1);
    assert_int_equal(strlen(buf), 1 + DG_ECHO_SHOW + strlen("...' (3000 characters)"));
    assert_non_null(strstr(buf, "xxx...' (3000 characters)"));
    memcpy(big + DG_ECHO_SHOW - 1, "\xc3\xa9", 2);  /* an e-acute across the cut: not split */
    dg_err_echo(buf, sizeof buf, big, (size_t)-1);
    assert_non_null(strstr(buf, "x...' (3000 characters)"));
    assert_null(strstr(buf, "\xc3..."));
    /* the sweep's --set of 100 values: the reason survives, the line is short */
    dg_sweep *sw = calloc(1, sizeof *sw);
    assert_non_null(sw);
    char arg[900];
    snprintf(arg, sizeof arg, "train.lr=%s", list);
    dg_err e = {0};
    assert_int_equal(dg_sweep_add(sw, arg, &e), DG_ERR_ARG);
    assert_string_equal(e.msg, "--set train.lr: more than 32 values; got '0.0001,0.0002,0.0003,0.0004,0.0005,0.0006,"
                               "...' (100 values)");
    assert_int_equal(dg_sweep_seeds(sw, big, &e), DG_ERR_ARG);
    assert_true(strlen(e.msg) < 160);
    assert_non_null(strstr(e.msg, "--seeds: expected integers"));
    free(sw);
}

static void test_file_parent_make(void **state) {
    (void)state;
    char path[160];
    dg_err e = {0};
    assert_int_equal(dg_file_parent_make(at(path, sizeof path, "a/b/c.png"), &e), DG_OK);
    at(path, sizeof path, "a/b");
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(dg_file_parent_make("plain.png", &e), DG_OK);  /* the working directory */
    assert_int_equal(dg_file_parent_make("", &e), DG_ERR_ARG);
    if (geteuid() != 0) {  /* root writes anywhere */
        char ro[128];
        at(ro, sizeof ro, "ro");
        assert_int_equal(mkdir(ro, 0500), 0);
        snprintf(path, sizeof path, "%s/x.png", ro);
        assert_int_equal(dg_file_parent_make(path, &e), DG_ERR_IO);
        assert_non_null(strstr(e.msg, "folder not writable"));
        chmod(ro, 0700);
    }
}

static void test_replay_gif(void **state) {
    (void)state;
    dg_run r;
    load_reach(&r);
    const dg_env *env = r.env;
    const int H = env->horizon;
    float *traj = calloc((size_t)(H + 1) * env->state_dim, sizeof(float)), *s0, *aux;
    dg_err e = {0};
    assert_int_equal(dg_run_init_draw(env, 1, 1, &s0, &aux, &e), DG_OK);
    for (int t = 0; t <= H; t++) memcpy(traj + (size_t)t * env->state_dim, s0, env->state_dim * sizeof(float));
    char path[128];
    assert_int_equal(dg_replay_gif(at(path, sizeof path, "r.gif"), env, traj, aux, H + 1, 64, 3, &e), DG_OK);
    unsigned char *bytes;
    size_t len;
    assert_int_equal(dg_file_read_all(path, &bytes, &len, &e), DG_OK);
    assert_true(len > 6 && !memcmp(bytes, "GIF89a", 6));
    free(bytes);
    /* a bad call writes nothing */
    assert_int_equal(dg_replay_gif(at(path, sizeof path, "bad.gif"), env, traj, aux, 1, 64, 3, &e), DG_ERR_ARG);
    assert_int_not_equal(access(path, F_OK), 0);
    free(traj);
    free(s0);
    free(aux);
    dg_run_free(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_overrides_and_checks),
        cmocka_unit_test(test_doc_read_once),
        cmocka_unit_test(test_policy_load),
        cmocka_unit_test(test_episode_and_eval),
        cmocka_unit_test(test_bench_disk_pg_save),
        cmocka_unit_test(test_run_dir),
        cmocka_unit_test(test_train),
        cmocka_unit_test(test_seeds),
        cmocka_unit_test(test_pg_run),
        cmocka_unit_test(test_median_and_list),
        cmocka_unit_test(test_err_echo),
        cmocka_unit_test(test_format_double),
        cmocka_unit_test(test_status_exit),
        cmocka_unit_test(test_file_parent_make),
        cmocka_unit_test(test_replay_gif),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
