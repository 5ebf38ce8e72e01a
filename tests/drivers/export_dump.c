/* The library's side of tests/export_test.sh: draws states (in and out of the grid, and a few
 * special ones) or observations, writes them, and writes what the library answers there, for the
 * test to compare byte for byte with what the exported C (difgames export) answers.
 *
 * usage: export_dump value CONFIG VALUE.safetensors N SEED MARGIN STATES.bin LIB.bin [LAYER]
 *   states (N, nx) doubles; per state: V, grad V (nx) (dg_hji_interp on the file's last time),
 *   u (nu), d (nd), V again (dg_hji_feedback at the file's horizon, with the boundary layer LAYER, by
 *   default 0: bang-bang), and the switch filter's u_safe (nu): the bang-bang u where V <= MARGIN, else the nominal input (0.25, -0.5, 0.75, -1)[j]; MARGIN qp:G:
 *   the qp filter's (dg_hji_filter_row with gamma G on that V and gradient) from the nominal action
 *   qp_nominal(i, j) of state i, in [-1.2, 1.2] (the exported reader draws the same). Prints how many
 *   states the qp filter changed and at how many the layer changed an input (u or d).
 * usage: export_dump policy CONFIG CKPT N SEED OBS.bin LIB.bin
 *   observations (N, obs) floats of player 0, then (N, obs2) of player 1 when there are two; per
 *   player the actions (N, act) of dg_mlp_forward, in batches of 4096 rows at one thread; the first
 *   2000 rows are also run one at a time and must give the same bits (exit 1 otherwise).
 * Exit 0, 1 on a disagreement, 2 with one line on stderr for bad input. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/difgames.h"

static const double NOMINAL[4] = {0.25, -0.5, 0.75, -1};

/* The qp filter's nominal action j at state i: spread over [-1.2, 1.2] (clipped ones too), exact in
 * any C compiler (integers, one division). */
static double qp_nominal(long i, int j) { return (double)((i * 7919 + j * 104729) % 2401) / 1000.0 - 1.2; }

static int fail(const char *what, const dg_err *e) {
    fprintf(stderr, "export_dump: %s: %s\n", what, e ? e->msg : "");
    return 2;
}

/* A uniform double in [lo, hi) from two draws (finer than one float's 24 bits). */
static double uniform(dg_rng *r, double lo, double hi) {
    const double u = ((double)dg_rng_uniform(r, 0, 1) + (double)dg_rng_uniform(r, 0, 1) / 16777216.0);
    return lo + (hi - lo) * u;
}

static int dump_value(int argc, char **argv) {
    if (argc != 9 && argc != 10) return fail("usage: value CONFIG VALUE N SEED MARGIN STATES LIB [LAYER]", NULL);
    const double layer = argc == 10 ? atof(argv[9]) : 0;
    const long n = atol(argv[4]);
    const int qp = !strncmp(argv[6], "qp:", 3);
    const double margin = atof(argv[6] + (qp ? 3 : 0));
    dg_err e = {0};
    dg_hji_learn_opts lo;
    dg_cfg *cfg = dg_cfg_load(argv[2], &e);
    dg_hji_problem *p = cfg ? dg_hji_problem_load(cfg, &e) : NULL;
    if (!p || dg_hji_learn_opts_read(cfg, &lo, &e) || dg_cfg_check_unused(cfg, &e)) return fail(argv[2], &e);
    dg_hji_value_slices vs;
    if (dg_hji_value_load(argv[3], p, argv[2], &vs, NULL, &e)) return fail(argv[3], &e);
    const dg_hji_grid *g = &p->grid;
    const int nx = g->ndim, nu = p->game.u.dim, nd = p->game.d.dim;
    const double T = vs.slices.t[vs.slices.nt - 1];
    const double *last = vs.v + (size_t)(vs.slices.nt - 1) * (size_t)g->nodes;
    FILE *fs = fopen(argv[7], "wb"), *fl = fopen(argv[8], "wb");
    if (!fs || !fl) return fail("cannot write the outputs", NULL);
    dg_rng r;
    dg_rng_seed(&r, (uint64_t)atol(argv[5]));
    long changed = 0, layered = 0;
    for (long i = 0; i < n; i++) {
        double x[DG_HJI_MAX_DIMS], out[1 + 3 * DG_HJI_MAX_DIMS + 3 * DG_HJI_MAX_INPUT];
        for (int k = 0; k < nx; k++) {
            const double w = g->hi[k] - g->lo[k];
            x[k] = uniform(&r, g->lo[k] - 0.25 * w, g->hi[k] + 0.25 * w);
            if (i < 64) {  /* the special states: nodes, edges, far away, not numbers */
                const int node = (int)(dg_rng_uniform(&r, 0, 1) * g->n[k]);
                const double sp[8] = {dg_hji_grid_coord(g, k, node < g->n[k] ? node : g->n[k] - 1), g->lo[k], g->hi[k],
                                      1e300, -1e300, NAN, INFINITY, -INFINITY};
                x[k] = sp[(i + k) % 8];
            }
        }
        int m = 0;
        out[m++] = dg_hji_interp(g, last, x, out + 1);
        m += nx;
        double u[DG_HJI_MAX_INPUT] = {0}, d[DG_HJI_MAX_INPUT] = {0};
        double ul[DG_HJI_MAX_INPUT] = {0}, dl[DG_HJI_MAX_INPUT] = {0};
        const double v = dg_hji_feedback(p, &vs.slices, T, 0, x, u, d);
        dg_hji_feedback(p, &vs.slices, T, layer, x, ul, dl);
        layered += memcmp(u, ul, sizeof u) || memcmp(d, dl, sizeof d);
        for (int j = 0; j < nu; j++) out[m++] = ul[j];
        for (int j = 0; j < nd; j++) out[m++] = dl[j];
        out[m++] = v;
        if (qp) {
            double a[DG_HJI_MAX_INPUT];
            for (int j = 0; j < nu; j++) a[j] = qp_nominal(i, j);
            changed += dg_hji_filter_row(&p->game, 0, DG_HJI_FILTER_QP, 0, margin, x, out[0], out + 1, a, out + m, NULL, NULL);
            m += nu;
        } else {
            for (int j = 0; j < nu; j++) out[m++] = v <= margin ? u[j] : NOMINAL[j];
        }
        if (fwrite(x, sizeof *x, (size_t)nx, fs) != (size_t)nx || fwrite(out, sizeof *out, (size_t)m, fl) != (size_t)m)
            return fail("cannot write the outputs", NULL);
    }
    if (fclose(fs) || fclose(fl)) return fail("cannot write the outputs", NULL);
    /* the states where the qp filter moved the nominal action, and where the layer changed an input */
    printf("%ld %ld\n", changed, layered);
    dg_hji_value_slices_free(&vs);
    dg_hji_problem_free(p);
    dg_cfg_free(cfg);
    return 0;
}

/* Player i's actions at the n observations obs (n, in) into act (n, out), rows at a time. */
static int forward(const dg_mlp *m, dg_params *p, long n, int rows, const float *obs, float *act) {
    const int in = m->sizes[0], out = m->sizes[m->nlayers];
    dg_ctx *ctx = dg_ctx_create(64u << 20);
    if (!ctx) return -1;
    for (long i0 = 0; i0 < n; i0 += rows) {
        const int B = (int)(n - i0 < rows ? n - i0 : rows);
        dg_ctx_reset(ctx);
        dg_tensor *y = dg_mlp_forward(ctx, m, p, dg_from(ctx, 2, (int[]){B, in}, obs + i0 * in));
        if (!y) {
            fprintf(stderr, "export_dump: forward: %s\n", dg_ctx_error(ctx));
            dg_ctx_free(ctx);
            return -1;
        }
        memcpy(act + i0 * out, y->data, (size_t)B * out * sizeof *act);
    }
    dg_ctx_free(ctx);
    return 0;
}

static int dump_policy(int argc, char **argv) {
    if (argc != 8) return fail("usage: policy CONFIG CKPT N SEED OBS LIB", NULL);
    const long n = atol(argv[4]);
    dg_err e = {0};
    dg_run s;
    dg_policy m;
    dg_params *p = NULL;
    if (dg_run_load(&s, argv[2], NULL, 0, &e) || dg_run_policy_load(&s, argv[3], &m, &p, &e)) return fail(argv[3], &e);
    FILE *fo = fopen(argv[6], "wb"), *fl = fopen(argv[7], "wb");
    if (!fo || !fl) return fail("cannot write the outputs", NULL);
    dg_rng r;
    dg_rng_seed(&r, (uint64_t)atol(argv[5]));
    int rc = 0;
    for (int i = 0; i < m.n && !rc; i++) {
        const int in = m.mlp[i].sizes[0], out = m.mlp[i].sizes[m.mlp[i].nlayers];
        float *obs = malloc((size_t)n * in * sizeof *obs), *act = malloc((size_t)n * out * sizeof *act),
              *one = malloc((size_t)2000 * out * sizeof *one);
        if (!obs || !act || !one) return fail("out of memory", NULL);
        for (long k = 0; k < n * in; k++) {
            obs[k] = dg_rng_uniform(&r, -3, 3);
            if (k < 64 * in) {  /* the special rows: zero, tiny, large (the tanh's ends) */
                const float sp[6] = {0, 1e-5f, -3e-4f, 40, -1e3f, 8};
                obs[k] = sp[(k / in + k) % 6];
            }
        }
        if (forward(&m.mlp[i], p, n, 4096, obs, act) || forward(&m.mlp[i], p, n < 2000 ? n : 2000, 1, obs, one))
            return fail("forward", NULL);
        if (memcmp(act, one, (size_t)(n < 2000 ? n : 2000) * out * sizeof *act)) {
            fprintf(stderr, "export_dump: player %d: a batch of 4096 and one row at a time differ\n", i);
            rc = 1;
        }
        if (fwrite(obs, sizeof *obs, (size_t)(n * in), fo) != (size_t)(n * in) ||
            fwrite(act, sizeof *act, (size_t)(n * out), fl) != (size_t)(n * out))
            return fail("cannot write the outputs", NULL);
        free(obs), free(act), free(one);
    }
    if (fclose(fo) || fclose(fl)) return fail("cannot write the outputs", NULL);
    dg_params_free(p);
    dg_run_free(&s);
    return rc;
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "value")) return dump_value(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "policy")) return dump_policy(argc, argv);
    return fail("usage: export_dump value|policy ...", NULL);
}
