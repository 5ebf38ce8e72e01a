/* The statistics of difgames certify (include/difgames/certify.h): the table by quarter of V(x0) and
 * the exploitability's means. */
#include <math.h>
#include <stdlib.h>

#include "difgames/certify.h"

/* qsort's order of (V, cost) pairs: by V */
static int cmp_by_value(const void *a, const void *b) {
    const double x = ((const double *)a)[0], y = ((const double *)b)[0];
    return (x > y) - (x < y);
}

void dg_certify_quarters(double *rows, int B, dg_certify_quarter q[5]) {
    qsort(rows, (size_t)B, 2 * sizeof *rows, cmp_by_value);
    for (int k = 0; k <= 4; k++) {
        const int i0 = k < 4 ? k * B / 4 : 0, i1 = k < 4 ? (k + 1) * B / 4 : B;
        double v = 0, c = 0, g = 0;
        for (int i = i0; i < i1; i++) {
            v += rows[2 * i];
            c += rows[2 * i + 1];
            g += (rows[2 * i + 1] - rows[2 * i]) / fabs(rows[2 * i]);
        }
        q[k] = (dg_certify_quarter){.n = i1 - i0};
        if (i1 == i0) continue;
        q[k].v_lo = rows[2 * i0];
        q[k].v_hi = rows[2 * (i1 - 1)];
        q[k].value_mean = v / (i1 - i0);
        q[k].cost_mean = c / (i1 - i0);
        q[k].gap = g / (i1 - i0);
    }
}

void dg_certify_exploit_loss(const double *value, const double *w, int B, int evader, double *mean, double *rel) {
    *mean = *rel = 0;
    for (int i = 0; i < B; i++) {
        const double loss = evader ? value[i] - w[i] : w[i] - value[i];
        *mean += loss / B;
        *rel += loss / fabs(value[i]) / B;
    }
}
