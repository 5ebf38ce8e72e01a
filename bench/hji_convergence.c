/* hji_convergence: measures the HJI grid solver's accuracy and speed (the tables of docs/hji.md).
 * A benchmark, not an example: built with the rest (build/bench/hji_convergence), run by hand.
 *
 *     ./build/bench/hji_convergence smooth [PNG]      order table of phi_t + (phi_x + 1)^2/2 = 0 (and,
 *                                                     with PNG, its mean errors against n, log-log, each
 *                                                     scheme's least-squares order in the legend)
 *     ./build/bench/hji_convergence pursuit           pursuit2d against its exact value, every preset
 *     ./build/bench/hji_convergence air3d [CSV]       air3d at the Merz barrier, 1 and 2 threads
 *     ./build/bench/hji_convergence games             solve times of chauffeur, chase4d, a 5-d game
 *     ./build/bench/hji_convergence all [CSV]         everything
 *
 * CSV is the analytic barrier of the game of two identical cars (columns x,y,psi; see
 * tests/data/README.md); the default is the repository's tests/data/air3d_merz_barrier.csv,
 * found by an absolute path compiled in (DG_MERZ_CSV), so it runs from any working directory.
 * Prints markdown tables; exits 1 on a solver error or an unreadable CSV.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/config.h"
#include "difgames/hji.h"
#include "difgames/image.h"
#include "../tests/util/hji_smooth.h"

#ifndef DG_MERZ_CSV
#define DG_MERZ_CSV "tests/data/air3d_merz_barrier.csv"  /* relative: run from the repository root */
#endif

/* ------------------------------------------------------ the smooth benchmark */

/* Solves the benchmark on n nodes of [-1, 1) with accuracy a at CFL cfl, or with the fixed step
 * dt = dtc dx^(5/3) if dtc > 0. */
static int smooth_run(int n, dg_hji_accuracy a, double cfl, double dtc, dg_hji_weno_eps eps, double *l1,
                      double *linf) {
    dg_hji_opts o = dg_hji_opts_default();
    dg_hji_opts_accuracy(&o, a);
    o.weno_eps = eps;
    o.cfl = cfl;
    o.threads = 1;
    dg_err e = {0};
    if (smooth_errors(n, o, dtc, l1, linf, &e) == DG_OK) return 0;
    fprintf(stderr, "smooth: %s\n", e.msg);
    return 1;
}

/* The order between two errors of grids n and 2n, as text ("" for the first grid, prev 0). */
static void order(char out[32], double prev, double now) {
    out[0] = 0;
    if (prev > 0) snprintf(out, 32, "%.2f", log(prev / now) / log(2.0));
}

/* The least-squares slope of log(err) against log(n) over m points, negated: the observed order. */
static double fitted_order(const int *n, const double *err, int m) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int k = 0; k < m; k++) {
        const double x = log((double)n[k]), y = log(err[k]);
        sx += x, sy += y, sxx += x * x, sxy += x * y;
    }
    return -(m * sxy - sx * sy) / (m * sxx - sx * sx);
}

static int smooth_table(const char *png) {
    static const int N[] = {40, 80, 160, 320};
    static const struct {
        dg_hji_accuracy a;
        double cfl, dtc;
        dg_hji_weno_eps eps;
        const char *step;
    } R[] = {
        {DG_HJI_ACCURACY_LOW, 0.75, 0, DG_HJI_WENO_EPS_GRID, "CFL 0.75"},
        {DG_HJI_ACCURACY_MEDIUM, 0.75, 0, DG_HJI_WENO_EPS_GRID, "CFL 0.75"},
        {DG_HJI_ACCURACY_HIGH, 0.75, 0, DG_HJI_WENO_EPS_GRID, "CFL 0.75"},
        {DG_HJI_ACCURACY_HIGH, 0.5, 0, DG_HJI_WENO_EPS_GRID, "CFL 0.5"},
        {DG_HJI_ACCURACY_VERY_HIGH, 0.75, 0, DG_HJI_WENO_EPS_GRID, "CFL 0.75"},
        {DG_HJI_ACCURACY_VERY_HIGH, 0.75, 0.5, DG_HJI_WENO_EPS_GRID, "0.5 dx^(5/3), eps grid"},
        {DG_HJI_ACCURACY_VERY_HIGH, 0.75, 0.5, DG_HJI_WENO_EPS_CONST, "0.5 dx^(5/3), eps const"},
    };
    printf("\n### Smooth benchmark phi_t + (phi_x + 1)^2/2 = 0, phi0 = -cos(pi x), periodic [-1, 1), "
           "t = 0.5/pi^2\n\n");
    printf("| preset | time step | n | mean abs error | order | max abs error | order |\n"
           "|---|---|---|---|---|---|---|\n");
    enum { NR = sizeof R / sizeof R[0] };
    float px[NR][4], py[NR][4];
    char label[NR][96];
    dg_plot_series ser[NR];
    for (size_t r = 0; r < NR; r++) {
        double p1 = 0, pi = 0, err[4];
        for (int k = 0; k < 4; k++) {
            double l1, li;
            if (smooth_run(N[k], R[r].a, R[r].cfl, R[r].dtc, R[r].eps, &l1, &li)) return 1;
            err[k] = l1;
            px[r][k] = (float)log10((double)N[k]);
            py[r][k] = (float)l1;
            char o1[32], oi[32];
            order(o1, p1, l1);
            order(oi, pi, li);
            printf("| %s | %s | %d | %.3e | %s | %.3e | %s |\n", dg_hji_accuracy_name(R[r].a), R[r].step,
                   N[k], l1, o1, li, oi);
            p1 = l1;
            pi = li;
        }
        snprintf(label[r], sizeof label[r], "%s, %s: order %.2f", dg_hji_accuracy_name(R[r].a), R[r].step,
                 fitted_order(N, err, 4));
        ser[r] = (dg_plot_series){label[r], px[r], py[r], 4, dg_plot_color((int)r)};
    }
    if (png) {
        dg_err e = {0};
        if (dg_plot_lines(png, 900, 640, "phi_t + (phi_x + 1)^2/2 = 0: mean |error| at t = 0.5/pi^2 (fitted order)",
                          "log10(nodes n)", "mean abs error (log scale)", 1, ser, NR, &e) != DG_OK) {
            fprintf(stderr, "smooth: %s\n", e.msg);
            return 1;
        }
        printf("\nwrote %s\n", png);
    }
    return 0;
}

/* --------------------------------------------------------------- pursuit2d */

/* Loads the problem of yaml (unused keys refused) and solves it into a new array V of its nodes;
 * NULL after printing the error. The caller frees V and *p. */
static double *solve_text(const char *yaml, dg_hji_problem **p, dg_hji_stats *st) {
    dg_err e = {0};
    dg_cfg *c = dg_cfg_parse(yaml, strlen(yaml), "inline.yaml", &e);
    *p = c ? dg_hji_problem_load(c, &e) : NULL;
    double *V = NULL;
    if (*p && dg_cfg_check_unused(c, &e) == DG_OK) {
        V = malloc((size_t)(*p)->grid.nodes * sizeof *V);
        if (!V) dg_err_set(&e, DG_ERR_NOMEM, "out of memory for the value");
        else if (dg_hji_problem_solve(*p, V, st, &e) != DG_OK) {
            free(V);
            V = NULL;
        }
    }
    dg_cfg_free(c);
    if (V) return V;
    fprintf(stderr, "%s\n", e.msg);
    dg_hji_problem_free(*p);
    *p = NULL;
    return NULL;
}

static int pursuit_table(void) {
    static const int N[] = {41, 81, 161};
    printf("\n### pursuit2d against V = max(|x| - (v_p - v_e) t, 0) - r (v_p 1, v_e 0.5, r 0.25, t 1, "
           "[-2, 2]^2, BRT)\n\n");
    printf("| preset | grid | mean abs error | order | max abs error | order | steps | seconds |\n"
           "|---|---|---|---|---|---|---|---|\n");
    for (int a = 0; a < DG_HJI_ACCURACY_COUNT; a++) {
        double pm = 0, px = 0;
        for (int k = 0; k < 3; k++) {
            char yaml[512];
            snprintf(yaml, sizeof yaml, "game: pursuit2d\naccuracy: %s\ngrid: {n: [%d, %d]}\nsolver: {threads: 1}\n",
                     dg_hji_accuracy_name((dg_hji_accuracy)a), N[k], N[k]);
            dg_hji_problem *p;
            dg_hji_stats st;
            double *V = solve_text(yaml, &p, &st);
            if (!V) return 1;
            double mean = 0, mx = 0, x[2];
            const double c = dg_hji_problem_param(p, "speed_pursuer") - dg_hji_problem_param(p, "speed_evader");
            for (int64_t j = 0; j < p->grid.nodes; j++) {
                dg_hji_grid_point(&p->grid, j, x);
                const double r = sqrt(x[0] * x[0] + x[1] * x[1]) - c * p->t_end;
                const double ex = (r > 0 ? r : 0) - dg_hji_problem_param(p, "capture_radius");
                const double err = fabs(V[j] - ex);
                mean += err / (double)p->grid.nodes;
                if (err > mx) mx = err;
            }
            char o1[32], o2[32];
            order(o1, pm, mean);
            order(o2, px, mx);
            printf("| %s | %d^2 | %.3e | %s | %.3e | %s | %lld | %.3f |\n",
                   dg_hji_accuracy_name((dg_hji_accuracy)a), N[k], mean, o1, mx, o2, (long long)st.steps,
                   st.seconds);
            pm = mean;
            px = mx;
            free(V);
            dg_hji_problem_free(p);
        }
    }
    return 0;
}

/* ------------------------------------------------------------------- air3d */

static double *read_barrier(const char *path, int *n) {
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    int cap = 4096, k = 0;
    double *pts = malloc((size_t)cap * 3 * sizeof *pts);
    char line[256];
    while (pts && fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        double a, b, c;
        if (sscanf(line, "%lf,%lf,%lf", &a, &b, &c) != 3) continue;
        if (k == cap) break;
        pts[3 * k] = a;
        pts[3 * k + 1] = b;
        pts[3 * k + 2] = c;
        k++;
    }
    fclose(f);
    *n = k;
    return pts;
}

static int air3d_table(const char *csv) {
    int npts = 0;
    double *pts = read_barrier(csv, &npts);
    if (!pts || !npts) {
        fprintf(stderr, "air3d: cannot read %s (pass the CSV path)\n", csv);
        free(pts);
        return 1;
    }
    printf("\n### air3d: |V| at the %d Merz barrier points (BRT, t = 2.8, CFL 0.75)\n\n", npts);
    printf("| preset | grid | mean abs V | max abs V | steps | threads | seconds | cell updates/s |\n"
           "|---|---|---|---|---|---|---|---|\n");
    static const char *const GRID[] = {"[51, 40, 50]", "[101, 80, 100]"};
    static const int ACC[] = {DG_HJI_ACCURACY_MEDIUM, DG_HJI_ACCURACY_VERY_HIGH};
    /* the default grid, the fine one, the default in float32, the default with alpha maxed over
     * the grid (hj_reachability's global Lax-Friedrichs) */
    static const char *const TAG[] = {"", "", " f32", " globalmax"};
    for (int gi = 0; gi < 4; gi++)
        for (int ai = 0; ai < 2; ai++)
            for (int th = 1; th <= 2; th++) {
                char yaml[256];
                snprintf(yaml, sizeof yaml, "game: air3d\naccuracy: %s\ngrid: {n: %s}\n"
                         "solver: {threads: %d, precision: %s, dissipation: %s}\n",
                         dg_hji_accuracy_name((dg_hji_accuracy)ACC[ai]), GRID[gi == 1], th, gi == 2 ? "f32" : "f64",
                         gi == 3 ? "globalmax" : "global");
                dg_hji_problem *p;
                dg_hji_stats st;
                double *V = solve_text(yaml, &p, &st);
                if (!V) return 1;
                double mean = 0, mx = 0;
                for (int i = 0; i < npts; i++) {
                    const double v = fabs(dg_hji_interp(&p->grid, V, pts + 3 * i, NULL));
                    mean += v / npts;
                    if (v > mx) mx = v;
                }
                printf("| %s | %dx%dx%d%s | %.4f | %.4f | %lld | %d | %.3f | %.3g |\n",
                       dg_hji_accuracy_name((dg_hji_accuracy)ACC[ai]), p->grid.n[0], p->grid.n[1], p->grid.n[2],
                       TAG[gi], mean, mx, (long long)st.steps, st.threads, st.seconds,
                       st.updates_per_s);
                fflush(stdout);
                free(V);
                dg_hji_problem_free(p);
            }
    free(pts);
    return 0;
}

/* ------------------------------------------------------------ other games */

/* 5-d simple motion: x' = u + d, |u| <= 1 on the first four axes (min), d in [-0.5, 0.5] on the last. */
static void dyn5(void *user, const double *x, double *f, double *G, double *D) {
    (void)user; (void)x; (void)f;
    for (int k = 0; k < 4; k++) G[k * 4 + k] = 1;
    D[4] = 1;
}

static int games_table(void) {
    printf("\n### Other games (defaults of configs/hji/*.yaml unless noted)\n\n");
    printf("| game | preset | grid | steps | threads | seconds | cell updates/s | volume V <= 0 |\n"
           "|---|---|---|---|---|---|---|---|\n");
    static const char *const YAML[] = {
        "game: chauffeur\naccuracy: veryHigh\n",
        "game: chase4d\naccuracy: medium\n",
        "game: chase4d\naccuracy: veryHigh\n",
    };
    for (int gi = 0; gi < 3; gi++)
        for (int th = 1; th <= 2; th++) {
            char yaml[256];
            snprintf(yaml, sizeof yaml, "%ssolver: {threads: %d}\n", YAML[gi], th);
            dg_hji_problem *p;
            dg_hji_stats st;
            double *V = solve_text(yaml, &p, &st);
            if (!V) return 1;
            int64_t in = 0;
            for (int64_t j = 0; j < p->grid.nodes; j++) in += V[j] <= 0;
            char grid[64] = "";
            for (int k = 0; k < p->grid.ndim; k++)
                snprintf(grid + strlen(grid), sizeof grid - strlen(grid), "%s%d", k ? "x" : "", p->grid.n[k]);
            printf("| %s | %s | %s | %lld | %d | %.3f | %.3g | %.3f |\n", p->name,
                   dg_hji_accuracy_name(p->opts.deriv == DG_HJI_DERIV_WENO5 ? DG_HJI_ACCURACY_VERY_HIGH : DG_HJI_ACCURACY_MEDIUM), grid,
                   (long long)st.steps, st.threads, st.seconds, st.updates_per_s, (double)in / (double)p->grid.nodes);
            fflush(stdout);
            free(V);
            dg_hji_problem_free(p);
        }
    /* a 5-d game: 21^5 nodes, BRT of a ball */
    for (int real = 0; real < 2; real++) {
        dg_hji_grid g;
        dg_err e = {0};
        const int n5[5] = {21, 21, 21, 21, 21};
        const double lo[5] = {-1, -1, -1, -1, -1}, hi[5] = {1, 1, 1, 1, 1};
        if (dg_hji_grid_init(&g, 5, lo, hi, n5, NULL, &e)) return 1;
        dg_hji_game gm = {.nx = 5, .dyn = dyn5,
                          .u = {.dim = 4, .set = DG_HJI_SET_BALL, .role = DG_HJI_ROLE_MIN, .radius = 1},
                          .d = {.dim = 1, .set = DG_HJI_SET_BOX, .role = DG_HJI_ROLE_MAX, .lo = {-0.5}, .hi = {0.5}}};
        dg_hji_opts o = dg_hji_opts_default();
        dg_hji_opts_accuracy(&o, DG_HJI_ACCURACY_MEDIUM);
        o.mode = DG_HJI_MODE_BRT;
        o.threads = 2;
        o.real = real ? DG_HJI_REAL_F32 : DG_HJI_REAL_F64;
        double *v0 = malloc((size_t)g.nodes * sizeof *v0), *V = malloc((size_t)g.nodes * sizeof *V);
        const double c[5] = {0};
        dg_hji_sdf_ball(&g, c, 0.3, 0, v0);
        const double T = 0.3;
        dg_hji_stats st;
        if (dg_hji_solve(&g, &gm, &o, v0, NULL, 1, &T, V, &st, &e)) {
            fprintf(stderr, "%s\n", e.msg);
            return 1;
        }
        int64_t in = 0;
        for (int64_t j = 0; j < g.nodes; j++) in += V[j] <= 0;
        printf("| 5-d simple motion (%s) | medium | 21^5 | %lld | %d | %.3f | %.3g | %.3f |\n",
               real ? "f32" : "f64", (long long)st.steps, st.threads, st.seconds, st.updates_per_s,
               (double)in / (double)g.nodes);
        free(v0);
        free(V);
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "all";
    const char *csv = argc > 2 ? argv[2] : DG_MERZ_CSV;
    const int all = strcmp(mode, "all") == 0;
    if (!all && strcmp(mode, "smooth") && strcmp(mode, "pursuit") && strcmp(mode, "air3d") &&
        strcmp(mode, "games")) {
        fprintf(stderr, "usage: hji_convergence [smooth|pursuit|air3d|games|all] [CSV]\n");
        return 2;
    }
    int rc = 0;
    if (all || strcmp(mode, "smooth") == 0) rc |= smooth_table(!all && argc > 2 ? argv[2] : NULL);
    if (all || strcmp(mode, "pursuit") == 0) rc |= pursuit_table();
    if (all || strcmp(mode, "air3d") == 0) rc |= air3d_table(csv);
    if (all || strcmp(mode, "games") == 0) rc |= games_table();
    return rc ? 1 : 0;
}
