/* hji_degree: games of degree against their exact values (the tables of docs/hji.md, "Games of
 * degree"): the five configs configs/hji/{pursuit2d_time, zermelo_time, double_integrator_time,
 * lq_game, lq_discounted}.yaml. A benchmark built with the rest (build/bench/hji_degree); `all`
 * runs in the ctest docs (docs/measurements/hji.json), which fails when check fails.
 *
 *     ./build/bench/hji_degree check     each config on its default grid: errors, steps, seconds;
 *                                        exits 1 when a mean relative error reaches 2 %
 *     ./build/bench/hji_degree table     errors at 3 grid sizes per accuracy, with observed orders
 *     ./build/bench/hji_degree sweep     stationary configs: time-marching against fast sweeping
 *     ./build/bench/hji_degree all       check, table and sweep in one run, each solve once (check's
 *                                        and sweep's marches are rows of the table): each table under a
 *                                        "## mode" line; exits 1 when check would (the docs' rerun)
 *     ./build/bench/hji_degree chauffeur the homicidal chauffeur's capture time (chauffeur_time.yaml) on
 *                                        121^2 and 241^2: its lower bound at every node, its jump
 *                                        against the barrier traced by characteristics, and {T <= tau}
 *                                        against the game of kind's tube (chauffeur.yaml, same grid)
 *     ./build/bench/hji_degree barrier [N...]  the bound and the barrier on 241^2 (or N^2 each, the
 *                                        last one checked; the ctest hji_chauffeur_barrier runs 241);
 *                                        exits 1 when either fails
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

/* The solves of this process, each (config, grid, accuracy, method) once: check, table and sweep
 * (all) share the grids where they meet. */
typedef struct deg_solved {
    int          i, n;          /* the case (DEG_CASES) and grid nodes per axis                   */
    char         acc[16], method[8];
    deg_error    r;
    dg_hji_stats st;
    double      *V;             /* the value (nodes)                                              */
} deg_solved;
static deg_solved *g_solved;
static int g_nsolved, g_capsolved;

/* The case i's config at path on n^2 (0: its own grid) at accuracy acc and by method (NULL: the
 * config's), solved once (deg_run) or found among the earlier solves: its errors and stats into r
 * and st, its value into *V (memo's own, may be NULL). Returns 0, or 1 with the reason in msg. */
static int deg_solve(const char *path, int i, int n, const char *acc, const char *method, deg_error *r,
                     dg_hji_stats *st, const double **V, char *msg, size_t size) {
    dg_err e = {0};
    dg_cfg *cfg = dg_cfg_load(path, &e);
    dg_hji_problem *p = cfg ? dg_hji_problem_load(cfg, &e) : NULL;
    if (!p) {
        snprintf(msg, size, "%.200s: %.300s", path, e.msg);
        dg_cfg_free(cfg);
        return 1;
    }
    deg_solved k = {.i = i, .n = n > 0 ? n : p->grid.n[0]};  /* the key, the config's own values filled in */
    snprintf(k.acc, sizeof k.acc, "%s", acc ? acc : dg_hji_accuracy_name(dg_hji_accuracy_of(&p->opts)));
    snprintf(k.method, sizeof k.method, "%s", method ? method : p->opts.method == DG_HJI_METHOD_SWEEP ? "sweep" : "march");
    dg_hji_problem_free(p);
    dg_cfg_free(cfg);
    for (int j = 0; j < g_nsolved; j++) {
        const deg_solved *d = &g_solved[j];
        if (d->i == k.i && d->n == k.n && !strcmp(d->acc, k.acc) && !strcmp(d->method, k.method)) {
            *r = d->r;
            *st = d->st;
            if (V) *V = d->V;
            return 0;
        }
    }
    if (g_nsolved == g_capsolved) {
        deg_solved *more = realloc(g_solved, (size_t)(g_capsolved + 16) * sizeof *more);
        if (!more) {
            snprintf(msg, size, "out of memory");
            return 1;
        }
        g_solved = more;
        g_capsolved += 16;
    }
    if (deg_run(path, &DEG_CASES[i], n, acc, method, &k.r, &k.st, &k.V, msg, size)) return 1;
    g_solved[g_nsolved++] = k;
    *r = k.r;
    *st = k.st;
    if (V) *V = k.V;
    return 0;
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
        if (deg_solve(path, i, 0, NULL, NULL, &r, &st, NULL, msg, sizeof msg)) {
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
                if (deg_solve(path, i, N[i][k], ACC[a], NULL, &r, &st, NULL, msg, sizeof msg)) {
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
        const double *V[3] = {NULL, NULL, NULL};
        deg_error r[3];
        dg_hji_stats st[3];
        int rc = 0;
        for (int m = 0; m < 3 && !rc; m++)
            if ((rc = deg_solve(path, STAT[s], 0, A[m], M[m], &r[m], &st[m], &V[m], msg, sizeof msg)))
                fprintf(stderr, "%s\n", msg);
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

/* The chauffeur's right barrier traced by retrograde characteristics, independently of the solver:
 * with the costate n normal to it, H(x, n) = -w |n_y x - n_x y| - v_p n_y + v_e |n| = 0 along it;
 * x' = -dH/dn, n' = dH/dx in retrograde time tau from the boundary of the usable part of the
 * capture circle, (r sqrt(1 - k^2), r k), k = v_e / v_p, where n is the circle's normal. RK4 in
 * steps of 1e-4; the branch that leaves into x > 0 (the sign of n_y x - n_x y is -1 along it). Fills
 * pt and nrm (unit) at tau = taus[0..m) (increasing). Returns 0, or 1 if k is not in (0, 1). */
static int barrier_trace(double vp, double w, double ve, double r, const double *taus, int m, double (*pt)[2],
                         double (*nrm)[2]) {
    const double k = ve / vp;
    if (!(k > 0 && k < 1)) return 1;
    double z[4] = {r * sqrt(1 - k * k), r * k, sqrt(1 - k * k), k}, t = 0;
    const double h = 1e-4, s = -1;
    for (int q = 0; q < m; q++) {
        while (t < taus[q] - h / 2) {
            double kk[4][4], y[4];
            for (int st = 0; st < 4; st++) {
                const double c = st == 0 ? 0 : st == 3 ? 1 : 0.5;
                for (int i = 0; i < 4; i++) y[i] = z[i] + (st ? c * h * kk[st - 1][i] : 0);
                const double nn = hypot(y[2], y[3]);
                kk[st][0] = -(w * s * y[1] + ve * y[2] / nn);
                kk[st][1] = -(-w * s * y[0] - vp + ve * y[3] / nn);
                kk[st][2] = -w * s * y[3];
                kk[st][3] = w * s * y[2];
            }
            for (int i = 0; i < 4; i++) z[i] += h / 6 * (kk[0][i] + 2 * kk[1][i] + 2 * kk[2][i] + kk[3][i]);
            t += h;
        }
        const double nn = hypot(z[2], z[3]);
        pt[q][0] = z[0];
        pt[q][1] = z[1];
        nrm[q][0] = z[2] / nn;
        nrm[q][1] = z[3] / nn;
    }
    return 0;
}

/* Where T jumps across the line x + s n, s in [-6 dx, 6 dx]: the s (in cells, dx) of the largest
 * change of T between samples dx/8 apart, and that change into *jump. */
static double jump_offset(const dg_hji_grid *g, const double *T, const double *x, const double *n, double *jump) {
    const double dx = (g->hi[0] - g->lo[0]) / (g->n[0] - 1);
    double best = -1, at = 0, prev = 0;
    for (int i = -48; i <= 48; i++) {
        const double y[2] = {x[0] + i * dx / 8 * n[0], x[1] + i * dx / 8 * n[1]};
        const double v = dg_hji_interp(g, T, y, NULL);
        if (i > -48 && fabs(v - prev) > best) {
            best = fabs(v - prev);
            at = (i - 0.5) / 8;
        }
        prev = v;
    }
    *jump = best * 8;
    return at;
}

/* The homicidal chauffeur's capture time T (chauffeur_time.yaml) on the grids ns[0..nn): the lower
 * bound every state has (the pedestrian running straight away closes the distance at v_p - v_e at
 * most: T >= (|x| - r)/(v_p - v_e), equal only ahead of the car, a 1-D chase), the barrier (T's jump
 * against the traced barrier at tau = 1.5 .. 3, both sides) and, with kind, {T <= tau} against the
 * game of kind's capture tube (chauffeur.yaml on the same grid). Returns 1 when, on the finest grid,
 * T is below the bound by more than 1 % of the bound plus a cell's time, or a barrier point is more
 * than 4 cells from T's jump (first order: 1 to 3 cells at 121^2 to 361^2) or T changes there by
 * less than 4 cells' time (dx / (v_p - v_e)) a cell
 * (no jump); 0 otherwise. */
static int chauffeur(const int *ns, int nn, int kind) {
    static const double TAU[] = {1, 2, 3, 4}, BTAU[] = {1.5, 2, 2.5, 3};
    enum { NB = 4 };
    char pt[1200], pk[1200];
    config_path("chauffeur_time", pt, sizeof pt);
    config_path("chauffeur", pk, sizeof pk);
    int bad = 0;
    for (int g = 0; g < nn; g++) {
        dg_cfg *ct = NULL, *ck = NULL;
        const int n = ns[g];
        dg_hji_problem *p = load_at(pt, n, &ct), *q = p && kind ? load_at(pk, n, &ck) : NULL;
        const int64_t N = p ? p->grid.nodes : 0;
        double *T = p ? malloc((size_t)N * sizeof *T) : NULL, *K = T && q ? malloc(4 * (size_t)N * sizeof *K) : NULL;
        dg_err e = {0};
        dg_hji_stats st;
        int rc = !T || (kind && !K) || dg_hji_problem_solve(p, T, &st, &e) ||
                 (kind && dg_hji_problem_solve_at(q, 4, TAU, K, NULL, &e));
        if (rc) {
            if (T) fprintf(stderr, "%s\n", e.msg);
            bad = 1;
        }
        if (!rc && kind) {
            printf("| grid | tau | nodes T <= tau | nodes V_kind <= 0 | disagree | of them, T off tau by > 0.05 |\n"
                   "|---|---|---|---|---|---|\n");
            for (int k = 0; k < 4; k++) {
                int64_t a = 0, b = 0, dis = 0, far = 0;
                for (int64_t j = 0; j < N; j++) {
                    const int in_t = T[j] <= TAU[k], in_k = K[(int64_t)k * N + j] <= 0;
                    a += in_t;
                    b += in_k;
                    dis += in_t != in_k;
                    far += in_t != in_k && fabs(T[j] - TAU[k]) > 0.05;
                }
                printf("| %d^2 | %g | %lld | %lld | %lld | %lld |\n", n, TAU[k], (long long)a, (long long)b,
                       (long long)dis, (long long)far);
            }
            printf("\n");
        }
        if (!rc) {
            const double r = dg_hji_problem_param(p, "capture_radius"), vp = dg_hji_problem_param(p, "speed_pursuer"),
                         ve = dg_hji_problem_param(p, "speed_evader"), w = dg_hji_problem_param(p, "turn_rate");
            const dg_hji_grid *G = &p->grid;
            const double dx = (G->hi[0] - G->lo[0]) / (G->n[0] - 1), cell_t = dx / (vp - ve);
            /* the lower bound at every node below the cap (the cap cuts it off where it exceeds t_end) */
            double worst = 0;
            int64_t under = 0, counted = 0;
            int idx[2];
            for (idx[0] = 0; idx[0] < G->n[0]; idx[0]++)
                for (idx[1] = 0; idx[1] < G->n[1]; idx[1]++) {
                    const double x = G->lo[0] + idx[0] * dx, y = G->lo[1] + idx[1] * (G->hi[1] - G->lo[1]) / (G->n[1] - 1);
                    const double lb = (hypot(x, y) - r) / (vp - ve), v = T[(int64_t)idx[0] * G->n[1] + idx[1]];
                    if (lb <= 0 || lb >= p->t_end) continue;
                    counted++;
                    if (lb - v > worst) worst = lb - v;
                    under += v < lb - 0.01 * lb - cell_t;
                }
            printf("%d^2 (%.2f s): T >= (|x| - r)/(v_p - v_e) at %lld nodes: largest shortfall %.4f s (a cell's time "
                   "%.4f s), %lld nodes short by more than 1 %% + a cell's time.", n, st.seconds, (long long)counted,
                   worst, cell_t, (long long)under);
            printf(" On the axis ahead of the car, where it is the 1-D chase:");
            for (double y = 0.5; y <= 2.51; y += 0.5) {
                const double x[2] = {0, y};
                printf(" y %.1f: %.4f / %.4f;", y, dg_hji_interp(G, T, x, NULL), (y - r) / (vp - ve));
            }
            printf("\n");
            double bp[NB][2], bn[NB][2];
            const int trace_bad = barrier_trace(vp, w, ve, r, BTAU, NB, bp, bn);
            int far = trace_bad;
            printf("%d^2: the barrier traced by characteristics against T's jump across it (offset in cells along "
                   "its normal, jump of T):", n);
            for (int k = 0; k < NB && !trace_bad; k++)
                for (int side = 0; side < 2; side++) {
                    const double x[2] = {side ? -bp[k][0] : bp[k][0], bp[k][1]},
                                 nv[2] = {side ? -bn[k][0] : bn[k][0], bn[k][1]};
                    double jump;
                    const double off = jump_offset(G, T, x, nv, &jump);
                    printf(" tau %.1f (%+.3f, %.3f): %+.2f cells (%.3f), %.2f s a cell;", BTAU[k], x[0], x[1], off,
                           off * dx, jump);
                    far |= fabs(off) > 4 || jump < 4 * cell_t;
                }
            printf("\n\n");
            if (g == nn - 1) bad |= under > 0 || far;
        }
        free(T);
        free(K);
        dg_hji_problem_free(p);
        dg_hji_problem_free(q);
        dg_cfg_free(ct);
        dg_cfg_free(ck);
    }
    return bad;
}

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "check";
    if (!strcmp(what, "check")) return check();
    if (!strcmp(what, "table")) return table();
    if (!strcmp(what, "sweep")) return sweep();
    if (!strcmp(what, "all")) {  /* each table under its heading; the status is check's (the others': 1 on an error) */
        printf("## check\n");
        int rc = check();
        printf("\n## table\n");
        rc |= table();
        printf("\n## sweep\n");
        rc |= sweep();
        return rc;
    }
    static const int BOTH[] = {121, 241}, FINE[] = {241};
    if (!strcmp(what, "chauffeur")) return chauffeur(BOTH, 2, 1);
    if (!strcmp(what, "barrier") && argc > 2) {
        int ns[8], nn = 0;
        for (int i = 2; i < argc && nn < 8; i++)
            if ((ns[nn++] = atoi(argv[i])) < 5 || ns[nn - 1] > 2001) {
                fprintf(stderr, "hji_degree barrier: a grid size is an integer in [5, 2001]: %s\n", argv[i]);
                return 2;
            }
        return chauffeur(ns, nn, 0);
    }
    if (!strcmp(what, "barrier")) return chauffeur(FINE, 1, 0);
    fprintf(stderr, "usage: hji_degree [check | table | sweep | chauffeur | barrier]\n");
    return 2;
}
