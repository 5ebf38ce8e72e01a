/* hji_degree: games of degree against their exact values (the tables of docs/hji.md, "Games of
 * degree"): the five configs configs/hji/{pursuit2d_time, zermelo_time, double_integrator_time,
 * lq_game, lq_discounted}.yaml. A benchmark built with the rest (build/bench/hji_degree); `check`
 * also runs as the ctest hji_degree_configs.
 *
 *     ./build/bench/hji_degree check     each config on its default grid: errors, steps, seconds;
 *                                        exits 1 when a mean relative error reaches 2 %
 *     ./build/bench/hji_degree table     errors at 3 grid sizes per accuracy, with observed orders
 *     ./build/bench/hji_degree sweep     stationary configs: time-marching against fast sweeping
 *     ./build/bench/hji_degree chauffeur the homicidal chauffeur's capture time (chauffeur_time.yaml):
 *                                        the straight chase ahead of the car, and {T <= tau} against
 *                                        the game of kind's tube (chauffeur.yaml on the same grid)
 *
 * The configs are found next to this file (../configs/hji), so it runs from any directory. One
 * thread; errors over each config's region (tests/util/hji_degree.h): rel L1 = sum |V - V*| / sum
 * |V*|, mean rel = the mean of |V - V*| / V* where V* >= 0.5 (time) or 0.05 (LQ).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/util/hji_degree.h"

static void config_path(const char *name, char *out, size_t size) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", __FILE__);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    else snprintf(dir, sizeof dir, "bench");
    snprintf(out, size, "%s/../configs/hji/%s.yaml", dir, name);
}

static int check(void) {
    int bad = 0;
    printf("| config | grid | accuracy | rel L1 | mean rel | max abs | steps | converged | residual | seconds |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < DEG_NCASES; i++) {
        char path[1200], msg[512];
        config_path(DEG_CASES[i].name, path, sizeof path);
        deg_error r;
        dg_hji_stats st;
        dg_err e = {0};
        dg_cfg *cfg = dg_cfg_load(path, &e);
        dg_hji_problem *p = cfg ? dg_hji_problem_load(cfg, &e) : NULL;
        if (!p) {
            fprintf(stderr, "%s\n", e.msg);
            dg_cfg_free(cfg);
            return 1;
        }
        const int n = p->grid.n[0];
        const char *acc = dg_hji_accuracy_name(dg_hji_accuracy_of(&p->opts));
        const int stationary = p->stationary;
        dg_hji_problem_free(p);
        dg_cfg_free(cfg);
        if (deg_run(path, &DEG_CASES[i], 0, NULL, NULL, &r, &st, NULL, msg, sizeof msg)) {
            fprintf(stderr, "%s\n", msg);
            return 1;
        }
        const int fail = !(r.rel_l1 < 0.02) || !(r.mean_rel < 0.02) || (stationary && !st.converged);
        printf("| %s | %d^2 | %s | %.2e | %.2e | %.2e | %lld | %s | %.2e | %.2f |%s\n", DEG_CASES[i].name, n, acc,
               r.rel_l1, r.mean_rel, r.max_abs, (long long)st.steps, stationary ? (st.converged ? "yes" : "NO") : "-",
               stationary ? st.residual : 0.0, st.seconds, fail ? "  FAILED" : "");
        bad |= fail;
    }
    return bad;
}

static void order(char out[32], double prev, double now, double ratio) {
    out[0] = 0;
    if (prev > 0 && now > 0) snprintf(out, 32, "%.2f", log(prev / now) / log(ratio));
}

static int table(void) {
    static const int N[][3] = {{41, 81, 161}, {41, 81, 161}, {121, 241, 481}, {21, 41, 81}, {21, 41, 81}};
    static const char *const ACC[] = {"low", "medium", "veryHigh"};
    printf("| config | accuracy | grid | rel L1 | order | mean rel | max abs | steps | seconds |\n");
    printf("|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < DEG_NCASES; i++)
        for (int a = 0; a < 3; a++) {
            double prev = 0;
            for (int k = 0; k < 3; k++) {
                char path[1200], msg[512], o[32];
                deg_error r;
                dg_hji_stats st;
                config_path(DEG_CASES[i].name, path, sizeof path);
                if (deg_run(path, &DEG_CASES[i], N[i][k], ACC[a], NULL, &r, &st, NULL, msg, sizeof msg)) {
                    fprintf(stderr, "%s\n", msg);
                    return 1;
                }
                order(o, prev, r.rel_l1, (N[i][k] - 1.0) / (N[i][k > 0 ? k - 1 : 0] - 1.0));
                printf("| %s | %s | %d^2 | %.2e | %s | %.2e | %.2e | %lld | %.2f |\n", DEG_CASES[i].name, ACC[a], N[i][k],
                       r.rel_l1, o, r.mean_rel, r.max_abs, (long long)st.steps, st.seconds);
                fflush(stdout);
                prev = r.rel_l1;
            }
        }
    return 0;
}

static dg_hji_problem *load_at(const char *path, int n, dg_cfg **cfg);

/* rel L1 difference of a and b over the n values */
static double rel_diff(const double *a, const double *b, int64_t n) {
    double num = 0, den = 0;
    for (int64_t j = 0; j < n; j++) {
        num += fabs(a[j] - b[j]);
        den += fabs(a[j]);
    }
    return den > 0 ? num / den : 0;
}

/* The stationary configs by time-marching (their accuracy, and low: upwind1 + Euler, the sweep's
 * first-order discretisation) and by fast sweeping; the sweep's rel L1 difference from each march
 * over the whole grid. */
static int sweep(void) {
    static const int STAT[] = {0, 1, 4};
    static const char *const M[] = {"march", "march", "sweep"}, *const A[] = {NULL, "low", NULL};
    printf("| config | grid | method | accuracy | iterations | residual | seconds | rel L1 | mean rel | sweep vs this |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|\n");
    for (int s = 0; s < 3; s++) {
        const deg_case *c = &DEG_CASES[STAT[s]];
        char path[1200], msg[512];
        config_path(c->name, path, sizeof path);
        double *V[3] = {NULL, NULL, NULL};
        deg_error r[3];
        dg_hji_stats st[3];
        int rc = 0;
        for (int m = 0; m < 3 && !rc; m++)
            if ((rc = deg_run(path, c, 0, A[m], M[m], &r[m], &st[m], &V[m], msg, sizeof msg))) fprintf(stderr, "%s\n", msg);
        dg_cfg *cfg = NULL;
        dg_hji_problem *p = rc ? NULL : load_at(path, 0, &cfg);
        for (int m = 0; p && m < 3; m++)
            printf("| %s | %d^2 | %s | %s | %lld | %.2e | %.2f | %.2e | %.2e | %.2e |\n", c->name, p->grid.n[0], M[m],
                   m == 2 ? "first order" : A[m] ? A[m] : dg_hji_accuracy_name(dg_hji_accuracy_of(&p->opts)),
                   (long long)st[m].iterations, st[m].residual, st[m].seconds, r[m].rel_l1, r[m].mean_rel,
                   rel_diff(V[m], V[2], p->grid.nodes));
        rc |= !p;
        dg_hji_problem_free(p);
        dg_cfg_free(cfg);
        for (int m = 0; m < 3; m++) free(V[m]);
        if (rc) return 1;
    }
    return 0;
}

/* path loaded as a problem (grid n per axis if n > 0), one thread; NULL after printing the error */
static dg_hji_problem *load_at(const char *path, int n, dg_cfg **cfg) {
    dg_err e = {0};
    char buf[32];
    snprintf(buf, sizeof buf, "%d", n);
    *cfg = dg_cfg_load(path, &e);
    if (*cfg && n > 0 && (dg_cfg_set(*cfg, "grid.n[0]", buf, &e) || dg_cfg_set(*cfg, "grid.n[1]", buf, &e))) {
        dg_cfg_free(*cfg);
        *cfg = NULL;
    }
    dg_hji_problem *p = *cfg ? dg_hji_problem_load(*cfg, &e) : NULL;
    if (!p) fprintf(stderr, "%s\n", e.msg);
    else p->opts.threads = 1;
    return p;
}

static int chauffeur(void) {
    static const double TAU[] = {1, 2, 3, 4};
    char pt[1200], pk[1200];
    config_path("chauffeur_time", pt, sizeof pt);
    config_path("chauffeur", pk, sizeof pk);
    printf("| grid | tau | nodes T <= tau | nodes V_kind <= 0 | disagree | of them, T off tau by > 0.05 |\n|---|---|---|---|---|---|\n");
    for (int g = 0; g < 2; g++) {
        dg_cfg *ct = NULL, *ck = NULL;
        const int n = g ? 241 : 121;
        dg_hji_problem *p = load_at(pt, n, &ct), *q = p ? load_at(pk, n, &ck) : NULL;
        const int64_t N = p ? p->grid.nodes : 0;
        double *T = q ? malloc((size_t)N * sizeof *T) : NULL, *K = T ? malloc(4 * (size_t)N * sizeof *K) : NULL;
        dg_err e = {0};
        dg_hji_stats st;
        int rc = !K || dg_hji_problem_solve(p, T, &st, &e) || dg_hji_problem_solve_at(q, 4, TAU, K, NULL, &e);
        for (int k = 0; !rc && k < 4; k++) {
            int64_t a = 0, b = 0, dis = 0, far = 0;
            for (int64_t j = 0; j < N; j++) {
                const int in_t = T[j] <= TAU[k], in_k = K[(int64_t)k * N + j] <= 0;
                a += in_t;
                b += in_k;
                dis += in_t != in_k;
                far += in_t != in_k && fabs(T[j] - TAU[k]) > 0.05;
            }
            printf("| %d^2 | %g | %lld | %lld | %lld | %lld |\n", n, TAU[k], (long long)a, (long long)b, (long long)dis,
                   (long long)far);
        }
        if (!rc) {
            printf("\n%d^2 (%.2f s): ahead of the car, T against the straight chase (y - r)/(v_p - v_e):", n, st.seconds);
            const double r = dg_hji_problem_param(p, "capture_radius"),
                         c = dg_hji_problem_param(p, "speed_pursuer") - dg_hji_problem_param(p, "speed_evader");
            for (double y = 0.5; y <= 2.51; y += 0.5) {
                const double x[2] = {0, y};
                printf(" y %.1f: %.4f / %.4f;", y, dg_hji_interp(&p->grid, T, x, NULL), (y - r) / c);
            }
            printf("\n\n");
        } else if (K) {
            fprintf(stderr, "%s\n", e.msg);
        }
        free(T);
        free(K);
        dg_hji_problem_free(p);
        dg_hji_problem_free(q);
        dg_cfg_free(ct);
        dg_cfg_free(ck);
        if (rc) return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "check";
    if (!strcmp(what, "check")) return check();
    if (!strcmp(what, "table")) return table();
    if (!strcmp(what, "sweep")) return sweep();
    if (!strcmp(what, "chauffeur")) return chauffeur();
    fprintf(stderr, "usage: hji_degree [check | table | sweep | chauffeur]\n");
    return 2;
}
