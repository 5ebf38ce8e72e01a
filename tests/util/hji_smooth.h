/* The HJI solver's smooth benchmark, phi_t + (phi_x + 1)^2/2 = 0 on the periodic [-1, 1) from
 * phi0 = -cos(pi x), with its exact solution: shared by tests/test_hji.c (orders asserted) and
 * bench/hji_convergence.c (the order table of docs/hji.md). Static inline, header-only. */
#ifndef DG_TESTS_UTIL_HJI_SMOOTH_H
#define DG_TESTS_UTIL_HJI_SMOOTH_H

#include <math.h>
#include <stdlib.h>

#include "difgames/hji.h"

#ifndef PI
#define PI 3.141592653589793
#endif

/* H(p) = (p + 1)^2 / 2 in 1-D. */
static inline void smooth_ham(void *user, double t, int n, const double *x, const double *p, double *h) {
    (void)user; (void)t; (void)x;
    for (int i = 0; i < n; i++) h[i] = 0.5 * (p[i] + 1) * (p[i] + 1);
}

static inline void smooth_alpha(void *user, double t, int n, const double *x, const double *pmin,
                                const double *pmax, double *a) {
    (void)user; (void)t; (void)x;
    for (int i = 0; i < n; i++) a[i] = fmax(fabs(pmin[i] + 1), fabs(pmax[i] + 1));
}

/* phi(x, t) for phi0 = -cos(pi x): along x = x0 + t (1 + pi sin(pi x0)) (Newton; the map is monotone
 * for t <= 1/pi^2) phi_x stays u0 = pi sin(pi x0) and phi grows by t (u0^2 - 1)/2. */
static inline double smooth_exact(double x, double t) {
    double x0 = x - t;
    for (int it = 0; it < 100; it++) {
        const double F = x0 + t * (1 + PI * sin(PI * x0)) - x;
        x0 -= F / (1 + t * PI * PI * cos(PI * x0));
        if (fabs(F) < 1e-15) break;
    }
    const double u = PI * sin(PI * x0);
    return -cos(PI * x0) + 0.5 * t * (u * u - 1);
}

/* Solves the benchmark to t = 0.5/pi^2 on n nodes with the options o (and the fixed step
 * dt = dtc dx^(5/3) when dtc > 0); writes the L1 (mean abs) and Linf errors. DG_OK, or the
 * solver's status with e set. */
static inline dg_status smooth_errors(int n, dg_hji_opts o, double dtc, double *l1, double *linf,
                                      dg_err *e) {
    *l1 = *linf = 0;
    dg_hji_grid g;
    dg_status rc = dg_hji_grid_init(&g, 1, (double[]){-1}, (double[]){1}, &n, (int[]){1}, e);
    if (rc != DG_OK) return rc;
    const dg_hji_game gm = {.nx = 1, .ham = smooth_ham, .alpha = smooth_alpha};
    if (dtc > 0) o.dt = dtc * pow(g.dx[0], 5.0 / 3.0);
    double *v = malloc((size_t)n * sizeof *v), *out = malloc((size_t)n * sizeof *out);
    if (!v || !out) rc = dg_err_set(e, DG_ERR_NOMEM, "smooth benchmark: out of memory");
    for (int i = 0; rc == DG_OK && i < n; i++) v[i] = -cos(PI * dg_hji_grid_coord(&g, 0, i));
    const double T = 0.5 / (PI * PI);
    if (rc == DG_OK) rc = dg_hji_solve(&g, &gm, &o, v, NULL, 1, &T, out, NULL, e);
    for (int i = 0; rc == DG_OK && i < n; i++) {
        const double err = fabs(out[i] - smooth_exact(dg_hji_grid_coord(&g, 0, i), T));
        *l1 += err / n;
        if (err > *linf) *linf = err;
    }
    free(v);
    free(out);
    return rc;
}

#endif
