/* The statistics of the sampling certificate (difgames/certify_sampling.h): the binomial tail, the
 * samples a test needs, the failures it may allow, the bound a count supports and the scenario
 * program's level. All in double, whatever the tape's dg_real. */
#include <math.h>
#include <stdlib.h>

#include "difgames/certify.h"

/* the largest N the searches go to: integers exact in double */
#define SCENARIO_N_MAX ((int64_t)1 << 53)

double dg_scenario_tail(int64_t N, int64_t k, double eps) {
    if (k < 0) return 0;
    if (k >= N) return 1;
    if (!(eps > 0)) return 1;
    if (!(eps < 1)) return 0;
    /* log t_i, t_i = C(N, i) eps^i (1 - eps)^(N - i), by t_{i+1} = t_i (N - i) / (i + 1) eps / (1 - eps);
     * the terms rise to the mode and fall after: the sum is taken relative to the largest */
    const double lr = log(eps) - log1p(-eps), Nd = (double)N;
    double lt = Nd * log1p(-eps), lmax = lt;
    for (int64_t i = 0; i < k; i++) {
        lt += log((Nd - (double)i) / (double)(i + 1)) + lr;
        if (lt > lmax) lmax = lt;
    }
    double s = 0;
    lt = Nd * log1p(-eps);
    for (int64_t i = 0; i <= k; i++) {
        s += exp(lt - lmax);
        lt += log((Nd - (double)i) / (double)(i + 1)) + lr;
    }
    const double t = exp(lmax + log(s));
    return t < 1 ? t : 1;
}

int64_t dg_scenario_samples(double eps, double beta, int64_t k) {
    if (!(eps > 0 && eps < 1 && beta > 0 && beta < 1) || k < 0) return -1;
    /* the tail falls as N grows (k fixed): double an upper end, then bisect */
    int64_t lo = k + 1, hi = k + 1;
    while (dg_scenario_tail(hi, k, eps) > beta) {
        lo = hi + 1;
        if (hi > SCENARIO_N_MAX / 2) return -1;
        hi *= 2;
    }
    while (lo < hi) {
        const int64_t m = lo + (hi - lo) / 2;
        if (dg_scenario_tail(m, k, eps) <= beta) hi = m;
        else lo = m + 1;
    }
    return lo;
}

int64_t dg_scenario_failures(int64_t N, double eps, double beta) {
    if (N < 1 || !(eps > 0 && eps < 1 && beta > 0 && beta < 1)) return -1;
    if (dg_scenario_tail(N, 0, eps) > beta) return -1;
    int64_t lo = 0, hi = N - 1;  /* tail(N, lo) <= beta; the tail rises with k, and is 1 at k = N */
    while (lo < hi) {
        const int64_t m = lo + (hi - lo + 1) / 2;
        if (dg_scenario_tail(N, m, eps) <= beta) lo = m;
        else hi = m - 1;
    }
    return lo;
}

double dg_scenario_epsilon(int64_t N, int64_t m, double beta) {
    if (m >= N || N < 1) return 1;
    if (m < 0) m = 0;
    /* the tail falls as eps grows: bisect on [0, 1] for tail = beta */
    double lo = 0, hi = 1;
    for (int it = 0; it < 200 && hi - lo > 1e-12 * hi; it++) {
        const double mid = 0.5 * (lo + hi);
        if (dg_scenario_tail(N, m, mid) <= beta) hi = mid;
        else lo = mid;
    }
    return hi;
}

/* qsort's order: decreasing */
static int cmp_down(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

dg_status dg_scenario_level(const double *v, const unsigned char *fail, int64_t n, int64_t j, double *delta,
                            dg_err *e) {
    if (n < 0 || j < 0 || !delta || (n && (!v || !fail)))
        return dg_err_set(e, DG_ERR_ARG, "certify: scenario level: bad arguments");
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) m += fail[i] != 0;
    *delta = -INFINITY;
    if (m <= j) return DG_OK;
    double *w = malloc((size_t)m * sizeof *w);
    if (!w) return dg_err_set(e, DG_ERR_NOMEM, "certify: out of memory for %lld failures", (long long)m);
    m = 0;
    for (int64_t i = 0; i < n; i++)
        if (fail[i]) w[m++] = v[i];
    qsort(w, (size_t)m, sizeof *w, cmp_down);
    *delta = w[j];  /* j of them above it (or tied with it: "> delta" leaves ties out) */
    free(w);
    return DG_OK;
}
