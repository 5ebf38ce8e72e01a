/* A run behind one handle (include/difgames/flat.h): its sizes and names, the trainer's start, an
 * episode's loss, terms and gradient against dg_run_eval and against central differences, observe and
 * step against the game's own, checkpoints both ways, training into a folder, and bad inputs refused. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "difgames/difgames.h"
#include "difgames/certify_run.h"
#include "difgames/flat.h"
#include "difgames/run.h"
#include "util/tmpdir.h"

static const char REACH[] = "game: reach\nseed: 3\nenv: {horizon: 8}\npolicy: {hidden: [8, 8]}\n"
                            "train: {batch: 4, epochs: 3, threads: 1, snapshots: []}\n";
static char g_dir[64], g_cfg[96];

static int setup(void **state) {
    (void)state;
    if (check_tmpdir(g_dir, "dg_flat_")) return -1;
    snprintf(g_cfg, sizeof g_cfg, "%s/reach.yaml", g_dir);
    FILE *f = fopen(g_cfg, "w");
    if (!f) return -1;
    fputs(REACH, f);
    return fclose(f);
}

static int teardown(void **state) {
    (void)state;
    return check_rmdir(g_dir);
}

static dg_flat *open_reach(int n, const char *const *k, const char *const *v) {
    dg_err e = {0};
    dg_flat *f = dg_flat_open(g_cfg, k, v, n, &e);
    if (!f) fail_msg("%s", e.msg);
    return f;
}

/* sizes, names, overrides, and the key listing the Python keyword rule resolves against */
static void test_dims_names_keys(void **state) {
    (void)state;
    dg_flat *f = open_reach(1, (const char *[]){"env.horizon"}, (const char *[]){"5"});
    assert_int_equal(dg_flat_dim(f, DG_FLAT_HORIZON), 5);
    assert_int_equal(dg_flat_dim(f, DG_FLAT_STATE), 4);
    assert_int_equal(dg_flat_dim(f, DG_FLAT_ACT), 2);
    assert_int_equal(dg_flat_dim(f, DG_FLAT_PLAYERS), 1);
    assert_int_equal(dg_flat_dim(f, DG_FLAT_REAL), sizeof(float));
    assert_int_equal(dg_flat_dim(f, 999), -1);
    assert_string_equal(dg_flat_name(f, DG_FLAT_GAME, 0), "reach");
    assert_string_equal(dg_flat_name(f, DG_FLAT_PARAM, 0), "net.0.weight");
    assert_null(dg_flat_name(f, DG_FLAT_PARAM, 99));
    int shape[8];
    assert_int_equal(dg_flat_param_shape(f, 0, shape), 2);
    assert_int_equal(shape[0], 8);
    assert_int_equal(dg_flat_offset(f, 1), 8 * shape[1]);
    dg_flat_free(f);
    dg_err e = {0};
    const int64_t need = dg_flat_keys(g_cfg, NULL, 0, &e);
    assert_true(need > 100);
    char *buf = malloc((size_t)need);
    assert_int_equal(dg_flat_keys(g_cfg, buf, (size_t)need, &e), need);
    assert_non_null(strstr(buf, "\ntrain.lr\n"));
    assert_non_null(strstr(buf, "\nenv.horizon\n"));
    assert_non_null(strstr(buf, "\nenv.damping\n"));  /* the game's own */
    free(buf);
    assert_int_equal(dg_flat_keys("/nonexistent.yaml", NULL, 0, &e), -1);
}

/* dg_flat_init gives the parameters and first batch the trainer starts from */
static void test_init_is_trainers(void **state) {
    (void)state;
    dg_flat *f = open_reach(0, NULL, NULL);
    const int64_t P = dg_flat_dim(f, DG_FLAT_TOTAL);
    float *w = malloc((size_t)P * sizeof *w), st[2 * 4 * 4], aux[2 * 4 * 2];
    dg_err e = {0};
    assert_int_equal(dg_flat_init(f, 3, w, 2, 4, st, aux, &e), DG_OK);
    dg_run r;
    assert_int_equal(dg_run_load(&r, g_cfg, NULL, 0, &e), DG_OK);
    dg_trainer *t = dg_trainer_create(r.env, &r.opts, NULL, NULL, &e);
    assert_non_null(t);
    assert_memory_equal(w, dg_trainer_params(t)->data, (size_t)P * sizeof *w);
    dg_trainer_free(t);
    dg_run_free(&r);
    assert_int_not_equal(memcmp(st, st + 16, 16 * sizeof *st), 0);  /* two different batches */
    assert_int_equal(dg_flat_init(f, 3, w, 1, 0, st, aux, &e), DG_ERR_ARG);
    free(w);
    dg_flat_free(f);
}

/* the episode's loss, terms and gradient are dg_run_eval's; the gradient matches central differences */
static void test_episode(void **state) {
    (void)state;
    dg_flat *f = open_reach(0, NULL, NULL);
    const int64_t P = dg_flat_dim(f, DG_FLAT_TOTAL);
    float *w = malloc((size_t)P * sizeof *w), *g = malloc((size_t)P * sizeof *g), st[4 * 4], aux[4 * 2], terms[8];
    dg_err e = {0};
    double loss, loss2, metrics[4];
    assert_int_equal(dg_flat_init(f, 3, w, 0, 0, NULL, NULL, &e), DG_OK);
    assert_int_equal(dg_flat_reset(f, 7, 4, st, aux, &e), DG_OK);
    assert_int_equal(dg_flat_episode(f, w, st, aux, 4, 1, &loss, terms, g, metrics, NULL, NULL, &e), DG_OK);
    assert_int_equal(dg_flat_episode(f, w, st, aux, 4, 0, &loss2, NULL, NULL, NULL, NULL, NULL, &e), DG_OK);
    assert_true(loss == loss2 && loss > 0);
    /* against dg_run_eval on the same policy */
    dg_run r;
    assert_int_equal(dg_run_load(&r, g_cfg, NULL, 0, &e), DG_OK);
    dg_policy m;
    dg_params *p;
    assert_int_equal(dg_policy_create(r.env, r.opts.hidden, r.opts.nhidden, &m, &p, &e), DG_OK);
    memcpy(p->data, w, (size_t)P * sizeof *w);
    dg_eval_result res;
    assert_int_equal(dg_run_eval(r.env, &m, p, st, aux, 4, 1, &res, &e), DG_OK);
    assert_true(res.loss == loss);
    assert_memory_equal(p->grad, g, (size_t)P * sizeof *g);
    assert_true(res.terms[0] == terms[0]);
    dg_params_free(p);
    dg_run_free(&r);
    /* central differences on a few elements */
    for (int64_t i = 0; i < P; i += P / 5) {
        const float w0 = w[i], h = 1e-2f;
        double lp, lm;
        w[i] = w0 + h;
        dg_flat_episode(f, w, st, aux, 4, 0, &lp, NULL, NULL, NULL, NULL, NULL, &e);
        w[i] = w0 - h;
        dg_flat_episode(f, w, st, aux, 4, 0, &lm, NULL, NULL, NULL, NULL, NULL, &e);
        w[i] = w0;
        assert_float_equal((lp - lm) / (2 * h), g[i], 2e-2 * fabs(g[i]) + 1e-3);
    }
    /* repeated backward gives the same bits (the tape is reused, the gradient not accumulated) */
    float *g2 = malloc((size_t)P * sizeof *g2);
    assert_int_equal(dg_flat_episode(f, w, st, aux, 4, 1, &loss2, NULL, g2, NULL, NULL, NULL, &e), DG_OK);
    assert_memory_equal(g, g2, (size_t)P * sizeof *g);
    assert_int_equal(dg_flat_episode(f, w, st, aux, 0, 1, &loss2, NULL, g2, NULL, NULL, NULL, &e), DG_ERR_ARG);
    free(g2);
    free(w);
    free(g);
    dg_flat_free(f);
}

/* observe and step are the game's: reach observes [p, v, g - p]-like features; a step moves the state */
static void test_observe_step(void **state) {
    (void)state;
    dg_flat *f = open_reach(0, NULL, NULL);
    float st[2 * 4], aux[2 * 2], obs[2 * 8], next[2 * 4], act[2 * 2] = {0};
    dg_err e = {0};
    assert_int_equal(dg_flat_reset(f, 1, 2, st, aux, &e), DG_OK);
    assert_int_equal(dg_flat_observe(f, 2, st, aux, obs, NULL, &e), DG_OK);
    assert_int_equal(dg_flat_step(f, 2, st, aux, act, next, &e), DG_OK);
    /* zero action from rest: the position stays (velocities start at 0) */
    assert_float_equal(next[0], st[0], 1e-6);
    act[0] = 1;
    assert_int_equal(dg_flat_step(f, 2, st, aux, act, next, &e), DG_OK);
    assert_true(next[2] > 0 || next[0] > st[0]);
    dg_flat_free(f);
}

/* per-row step costs add up to the episode loss: an open-loop plan of zeros plays action 0 at every
 * step, so (1/H) sum_t mean_b cost(b, t) of zero actions is that episode's loss */
static void test_step_cost(void **state) {
    (void)state;
    dg_flat *f = open_reach(2, (const char *[]){"train.mode", "env.horizon"}, (const char *[]){"open_loop", "6"});
    const int64_t P = dg_flat_dim(f, DG_FLAT_TOTAL);
    assert_int_equal(dg_flat_dim(f, DG_FLAT_OPEN_LOOP), 1);
    float *w = calloc((size_t)P, sizeof *w), st[3 * 4], aux[3 * 2], nx[3 * 4], act[3 * 2] = {0};
    dg_err e = {0};
    double loss, cost[3], sum = 0;
    assert_int_equal(dg_flat_reset(f, 2, 3, st, aux, &e), DG_OK);
    assert_int_equal(dg_flat_episode(f, w, st, aux, 3, 0, &loss, NULL, NULL, NULL, NULL, NULL, &e), DG_OK);
    for (int t = 1; t <= 6; t++) {
        assert_int_equal(dg_flat_step_cost(f, 3, t, st, aux, act, nx, cost, &e), DG_OK);
        sum += (cost[0] + cost[1] + cost[2]) / 3;
        memcpy(st, nx, sizeof st);
    }
    assert_float_equal(sum / 6, loss, 1e-5 * loss);
    assert_int_equal(dg_flat_step_cost(f, 3, 7, st, aux, act, nx, cost, &e), DG_ERR_ARG);
    free(w);
    dg_flat_free(f);
}

/* a checkpoint saved loads back; a missing one and another game's are refused */
static void test_checkpoint(void **state) {
    (void)state;
    dg_flat *f = open_reach(0, NULL, NULL);
    const int64_t P = dg_flat_dim(f, DG_FLAT_TOTAL);
    float *w = malloc((size_t)P * sizeof *w), *w2 = malloc((size_t)P * sizeof *w2);
    dg_err e = {0};
    char path[128];
    snprintf(path, sizeof path, "%s/w.safetensors", g_dir);
    assert_int_equal(dg_flat_init(f, 5, w, 0, 0, NULL, NULL, &e), DG_OK);
    assert_int_equal(dg_flat_save(f, path, w, &e), DG_OK);
    assert_int_equal(dg_flat_load(f, path, w2, &e), DG_OK);
    assert_memory_equal(w, w2, (size_t)P * sizeof *w);
    assert_int_equal(dg_flat_load(f, "/nonexistent.safetensors", w2, &e), DG_ERR_IO);
    free(w);
    free(w2);
    dg_flat_free(f);
}

typedef struct seen {
    int start, epochs;
    double last;
} seen;

static void on_progress(void *user, int kind, int epoch, const double *v) {
    seen *s = user;
    if (kind == 1) s->start++;
    else s->epochs = epoch, s->last = v[0];
}

/* training writes the command's files and reports each epoch */
static void test_train(void **state) {
    (void)state;
    dg_flat *f = open_reach(0, NULL, NULL);
    char dir[128], file[160];
    snprintf(dir, sizeof dir, "%s/run", g_dir);
    seen s = {0};
    double out[4];
    dg_err e = {0};
    assert_int_equal(dg_flat_train(f, dir, on_progress, &s, NULL, out, &e), DG_OK);
    assert_int_equal(s.start, 1);
    assert_int_equal(s.epochs, 3);
    assert_true(out[0] == 3 && out[1] == s.last && out[3] == -1);
    snprintf(file, sizeof file, "%s/final.safetensors", dir);
    FILE *fp = fopen(file, "rb");
    assert_non_null(fp);
    fclose(fp);
    dg_flat_free(f);
}

/* bad configs and overrides: the config's one-line error, no handle */
static void test_refused(void **state) {
    (void)state;
    dg_err e = {0};
    assert_null(dg_flat_open("/nonexistent.yaml", NULL, NULL, 0, &e));
    assert_int_equal(e.status, DG_ERR_IO);
    assert_null(dg_flat_open(g_cfg, (const char *[]){"train.lr"}, (const char *[]){"abc"}, 1, &e));
    assert_non_null(strstr(e.msg, "train.lr"));
    assert_null(dg_flat_open(g_cfg, (const char *[]){"train.precision"}, (const char *[]){"f64"}, 1, &e));
    assert_non_null(strstr(e.msg, "double"));
    assert_int_equal(dg_flat_precision(g_cfg, (const char *[]){"train.precision"}, (const char *[]){"f64"}, 1, &e), 1);
    assert_int_equal(dg_flat_precision(g_cfg, NULL, NULL, 0, &e), 0);
    dg_flat_free(NULL);
}

/* an HJI value behind a handle: pursuit2d's capture value is about |x| - r - (v_p - v_e) t_end far
 * from the origin; its gradient points away from the pursuer; the grid and overrides are the config's */
static void test_hji(void **state) {
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/p2d.yaml", g_dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("game: pursuit2d\nspeed_pursuer: 1.0\nspeed_evader: 0.5\ncapture_radius: 0.25\nt_end: 1.0\n"
          "mode: brt\naccuracy: medium\ngrid: {min: [-2, -2], max: [2, 2], n: [41, 41]}\n", f);
    fclose(f);
    dg_err e = {0};
    dg_hji_flat *h = dg_hji_flat_solve(path, (const char *[]){"t_end"}, (const char *[]){"0.5"}, 1, &e);
    if (!h) fail_msg("%s", e.msg);
    int64_t n[8];
    double lo[8], hi[8];
    assert_int_equal(dg_hji_flat_grid(h, n, lo, hi), 2);
    assert_true(n[0] == 41 && lo[0] == -2 && hi[1] == 2);
    int nu, nd;
    assert_true(dg_hji_flat_inputs(h, &nu, &nd) == 0.5);
    assert_true(nu >= 1);
    assert_string_equal(dg_hji_flat_name(h, DG_HJI_FLAT_GAME, 0), "pursuit2d");
    double x[4] = {1.5, 0, 0, 1.2}, v[2], g[4], u[8], d[8];
    assert_int_equal(dg_hji_flat_eval(h, 2, x, v, g, u, d, &e), DG_OK);
    assert_float_equal(v[0], 1.5 - 0.25 - 0.5 * 0.5, 0.05);
    assert_true(g[0] > 0.9 && fabs(g[1]) < 0.1);
    /* its grid value at a node is the array's */
    const double *V = dg_hji_flat_values(h, &e);
    double node[2] = {lo[0], lo[1]};
    assert_int_equal(dg_hji_flat_eval(h, 1, node, v, NULL, NULL, NULL, &e), DG_OK);
    assert_float_equal(v[0], V[0], 1e-12);
    x[0] = NAN;
    assert_int_equal(dg_hji_flat_eval(h, 2, x, v, g, u, d, &e), DG_ERR_ARG);
    assert_int_equal(dg_hji_flat_eval(h, 0, x, v, g, u, d, &e), DG_ERR_ARG);
    dg_hji_flat_free(h);
    assert_null(dg_hji_flat_solve(path, (const char *[]){"grid.nn"}, (const char *[]){"3"}, 1, &e));
    assert_non_null(strstr(e.msg, "grid.nn"));
    dg_hji_flat_free(NULL);
}

/* certify in the library: dg_certify_run's JSON line (the command's stdout), the same through the
 * flat handle, and the options refused by name */
static void test_certify(void **state) {
    (void)state;
    dg_flat *f = open_reach(0, NULL, NULL);
    const int64_t P = dg_flat_dim(f, DG_FLAT_TOTAL);
    float *w = malloc((size_t)P * sizeof *w);
    dg_err e = {0};
    char ck[128];
    snprintf(ck, sizeof ck, "%s/c.safetensors", g_dir);
    assert_int_equal(dg_flat_init(f, 5, w, 0, 0, NULL, NULL, &e), DG_OK);
    assert_int_equal(dg_flat_save(f, ck, w, &e), DG_OK);
    free(w);
    const char *names[] = {"episodes", "nodes", "max-grids", "--tol", "no_bounds"}, *values[] = {"2", "5", "3", "0.5", "1"};
    int usage = -1;
    const char *json = dg_flat_certify(f, ck, NULL, names, values, 5, &usage, &e);
    if (!json) fail_msg("%s", e.msg);
    assert_int_equal(usage, 0);
    assert_non_null(strstr(json, "\"game\":\"reach\""));
    assert_non_null(strstr(json, "\"certifies\":\"the learner's discrete game\",\"episodes\":2,\"players\":1"));
    assert_null(strstr(json, "plan_cost"));  /* no bounds */
    assert_null(dg_flat_certify(f, "/nonexistent.safetensors", NULL, names, values, 5, &usage, &e));
    assert_int_equal(usage, 0);
    assert_non_null(strstr(e.msg, "/nonexistent.safetensors"));
    dg_flat_free(f);

    dg_run r;
    assert_int_equal(dg_run_load(&r, g_cfg, NULL, 0, &e), DG_OK);
    dg_certify_run_opts o = dg_certify_run_opts_default();
    o.ckpt = ck;
    for (int i = 0; i < 5; i++) assert_int_equal(dg_certify_run_set(&o, names[i], values[i], &e), DG_OK);
    assert_true(o.episodes == 2 && o.nodes == 5 && o.max_grids == 3 && o.tol == 0.5 && !o.bounds);
    dg_certify_run_result res;
    assert_int_equal(dg_certify_run(&r, &o, &res, &e), DG_OK);
    assert_true(res.episodes == 2 && res.own.players == 1 && res.own.ref.ngrids == 3 && res.rows.value_upper);
    assert_true(strstr(res.json, "\"episodes\":2"));
    dg_certify_run_free(&res);
    o.nbox = 2;  /* one axis of reach's two */
    o.box[0] = -1, o.box[1] = 1;
    assert_int_equal(dg_certify_run(&r, &o, &res, &e), DG_ERR_ARG);
    assert_true(res.usage && strstr(e.msg, "box") && !res.json);
    dg_certify_run_free(&res);
    dg_run_free(&r);
    assert_int_equal(dg_certify_run_set(&o, "episodez", "2", &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "unknown option 'episodez'"));
    assert_int_equal(dg_certify_run_set(&o, "episodes", "0", &e), DG_ERR_ARG);
    assert_int_equal(dg_certify_run_set(&o, "tol", "abc", &e), DG_ERR_ARG);
    assert_int_equal(dg_certify_run_set(&o, "no_bounds", "maybe", &e), DG_ERR_ARG);
    assert_int_equal(dg_certify_run_set(&o, "exploit_own", "3", &e), DG_ERR_ARG);  /* --hji's, not here */
    o.hji = "x.yaml";
    assert_int_equal(dg_certify_run_set(&o, "exploit_own", "3", &e), DG_OK);
    assert_int_equal(dg_certify_run_set(&o, "tol", "0.1", &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "not with --hji"));
}

/* certify's options declared once (dg_certify_run_options): each default is what
 * dg_certify_run_opts_default holds, each bound is enforced by dg_certify_run_set, each path's
 * options are refused on the others */
static void test_certify_options(void **state) {
    (void)state;
    int n = 0;
    const dg_certify_opt *t = dg_certify_run_options(&n);
    assert_true(n >= 20);
    const dg_certify_run_opts d = dg_certify_run_opts_default();
    assert_true(d.tol == 0.01 && d.max_grids == 8 && d.plan_restarts == 3 && d.bptt_epochs == 50 && d.bounds &&
                d.exploit && d.xo.n_own == 9 && d.xo.own_half == 4.5 && d.sampling.epsilon == 1e-3 &&
                d.sampling.beta == 1e-6 && d.sampling.failures == 10 && d.sampling.rounds == 3 &&
                d.sampling.coverage_samples == 100000 && d.sampling.min_fraction == 1e-3 && d.plan_iters == -1);
    dg_err e = {0};
    char buf[64];
    for (int k = 0; k < n; k++) {
        dg_certify_run_opts o = dg_certify_run_opts_default();
        const int path = t[k].paths & DG_CERTIFY_OWN ? DG_CERTIFY_OWN : t[k].paths & DG_CERTIFY_HJI ? DG_CERTIFY_HJI
                                                                                                    : DG_CERTIFY_SAMPLING;
        o.hji = path == DG_CERTIFY_HJI ? "h.yaml" : NULL;
        o.value = path == DG_CERTIFY_SAMPLING ? "v.safetensors" : NULL;
        if (t[k].def) {  /* its default given again changes nothing */
            dg_certify_run_opts g = o;
            assert_int_equal(dg_certify_run_set(&g, t[k].name, t[k].def, &e), DG_OK);
            assert_memory_equal(&g, &o, sizeof g);
        }
        if (t[k].type == DG_CERTIFY_OPT_INT || t[k].type == DG_CERTIFY_OPT_DOUBLE) {
            snprintf(buf, sizeof buf, "%.17g", t[k].hi + (t[k].type == DG_CERTIFY_OPT_INT ? 1 : t[k].hi * 1e-9 + 1e-9));
            assert_int_equal(dg_certify_run_set(&o, t[k].name, buf, &e), DG_ERR_ARG);
            assert_non_null(strstr(e.msg, t[k].name));
            snprintf(buf, sizeof buf, "%.17g", t[k].lo);
            assert_int_equal(dg_certify_run_set(&o, t[k].name, buf, &e),
                             t[k].open & DG_CERTIFY_OPEN_LO ? DG_ERR_ARG : DG_OK);
        }
        for (int q = 0; q < 3; q++) {  /* another path refuses it */
            const int other = 1 << q;
            if (t[k].paths & other) continue;
            dg_certify_run_opts x = dg_certify_run_opts_default();
            x.hji = other == DG_CERTIFY_HJI ? "h.yaml" : NULL;
            x.value = other == DG_CERTIFY_SAMPLING ? "v.safetensors" : NULL;
            assert_int_equal(dg_certify_run_set(&x, t[k].name, t[k].type == DG_CERTIFY_OPT_LIST ? "0,1" : "1", &e),
                             DG_ERR_ARG);
        }
    }
    dg_certify_run_opts o = dg_certify_run_opts_default();
    o.value = "v.safetensors";
    assert_int_equal(dg_certify_run_set(&o, "--coverage-samples", "500", &e), DG_OK);
    assert_int_equal(o.sampling.coverage_samples, 500);
    assert_int_equal(dg_certify_run_set(&o, "seed", "7", &e), DG_OK);
    assert_true(o.seed == 7 && o.seed_set);
    assert_int_equal(dg_certify_run_set(&o, "--tol", "0.1", &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "not with --tol"));
    dg_certify_run_result res;
    assert_int_equal(dg_certify_sampling_run("/nonexistent.yaml", &o, &res, &e) != DG_OK, 1);
    assert_true(res.usage && !res.json && strstr(e.msg, "/nonexistent.yaml"));
    dg_certify_run_free(&res);
}

/* eval's extras refused where they do not apply: one learned player has no exploitability, and an
 * episode through the safety filter needs a filter or an adversary */
static void test_eval_extras_refused(void **state) {
    (void)state;
    dg_flat *f = open_reach(0, NULL, NULL);
    const int64_t P = dg_flat_dim(f, DG_FLAT_TOTAL), S = dg_flat_dim(f, DG_FLAT_STATE), A = dg_flat_dim(f, DG_FLAT_AUX);
    float *w = malloc((size_t)P * sizeof *w), *s = malloc(4 * (size_t)S * sizeof *s), *a = malloc(4 * (size_t)(A ? A : 1) * sizeof *a);
    double out[8], loss;
    dg_err e = {0};
    assert_int_equal(dg_flat_init(f, 1, w, 0, 0, NULL, NULL, &e), DG_OK);
    assert_int_equal(dg_flat_reset(f, 0, 4, s, a, &e), DG_OK);
    assert_int_equal(dg_flat_dim(f, DG_FLAT_GENERAL_SUM), 0);
    assert_null(dg_flat_name(f, DG_FLAT_SAFETY_MODE, 0));
    assert_int_equal(dg_flat_exploit(f, w, s, a, 4, 1, out, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "one learned player"));
    assert_int_equal(dg_flat_safety_eval(f, w, s, a, 4, NULL, &loss, NULL, NULL, out, &e), DG_ERR_ARG);
    assert_int_equal(dg_flat_safety_eval(f, w, s, a, 4, "/nonexistent.safetensors", &loss, NULL, NULL, out, &e), DG_ERR_IO);
    assert_non_null(strstr(e.msg, "/nonexistent.safetensors"));
    free(w);
    free(s);
    free(a);
    dg_flat_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dims_names_keys), cmocka_unit_test(test_init_is_trainers),
        cmocka_unit_test(test_episode),         cmocka_unit_test(test_observe_step),
        cmocka_unit_test(test_checkpoint),      cmocka_unit_test(test_train),
        cmocka_unit_test(test_refused),         cmocka_unit_test(test_hji),
        cmocka_unit_test(test_step_cost),       cmocka_unit_test(test_certify),
        cmocka_unit_test(test_eval_extras_refused), cmocka_unit_test(test_certify_options),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
