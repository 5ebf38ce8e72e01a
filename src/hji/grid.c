/* Grids (axes, coordinates, indices) and signed-distance targets over them. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "difgames/base.h"
#include "difgames/memory.h"
#include "hji/internal.h"

/* ----------------------------------------------------------------- helpers */

/* x - c along axis k, wrapped into [-P/2, P/2) on a periodic axis of period P. */
static double axis_diff(const dg_hji_grid *g, int k, double x, double c) {
    double d = x - c;
    if (g->bc[k] == DG_HJI_BC_PERIODIC) {
        const double P = g->n[k] * g->dx[k];
        d -= P * floor(d / P + 0.5);
    }
    return d;
}

static int counts(unsigned axes, int k) { return axes == 0 || ((axes >> k) & 1u); }

/* ------------------------------------------------------------------- grids */

dg_status dg_hji_grid_init(dg_hji_grid *g, int ndim, const double *lo, const double *hi, const int *n,
                           const int *periodic, dg_err *e) {
    if (!g || !lo || !hi || !n) return dg_err_set(e, DG_ERR_ARG, "hji grid: NULL argument");
    if (ndim < 1 || ndim > DG_HJI_MAX_DIMS)
        return dg_err_set(e, DG_ERR_ARG, "hji grid: %d axes, expected 1 to %d", ndim, DG_HJI_MAX_DIMS);
    dg_hji_grid t;
    memset(&t, 0, sizeof t);
    t.ndim = ndim;
    int64_t nodes = 1;
    for (int k = 0; k < ndim; k++) {
        if (n[k] < 2)
            return dg_err_set(e, DG_ERR_ARG, "hji grid: axis %d has %d nodes, expected at least 2", k, n[k]);
        if (!isfinite(lo[k]) || !isfinite(hi[k]) || !(hi[k] > lo[k]))
            return dg_err_set(e, DG_ERR_ARG, "hji grid: axis %d spans [%g, %g], expected finite lo < hi", k,
                              lo[k], hi[k]);
        const int per = periodic && periodic[k];
        t.n[k] = n[k];
        t.lo[k] = lo[k];
        t.hi[k] = hi[k];
        t.dx[k] = (hi[k] - lo[k]) / (per ? n[k] : n[k] - 1);
        t.bc[k] = per ? DG_HJI_BC_PERIODIC : DG_HJI_BC_AWAY;
        if (ndim <= DG_HJI_GRID_MAX_DIMS && !dg_mul_ok(nodes, n[k], (int64_t)1 << 40, &nodes))
            return dg_err_set(e, DG_ERR_ARG, "hji grid: the product of the node counts passes 2^40 at axis %d", k);
    }
    if (ndim > DG_HJI_GRID_MAX_DIMS) {   /* a box (hji learn samples it): no nodes, no strides */
        *g = t;
        return DG_OK;
    }
    int64_t s = 1;
    for (int k = ndim - 1; k >= 0; k--) {
        t.stride[k] = s;
        s *= t.n[k];
    }
    t.nodes = s;
    *g = t;
    return DG_OK;
}

double dg_hji_grid_coord(const dg_hji_grid *g, int axis, int i) { return g->lo[axis] + i * g->dx[axis]; }

const char *dg_hji_grid_axis_name(const dg_hji_grid *g, int k, char *buf, size_t cap) {
    if (k >= 0 && k < DG_HJI_MAX_DIMS && g->name[k][0]) snprintf(buf, cap, "%s", g->name[k]);
    else snprintf(buf, cap, "x%d", k);
    return buf;
}

/* The axis item names (item[0, len) of "x2", "psi"): 2 .. ndim - 1, or -1. */
static int slice_axis(const dg_hji_grid *g, const char *item, size_t len) {
    long k = -1;
    if (item[0] == 'x' && len > 1 && dg_parse_long(item + 1, len - 1, 10, &k) && k >= 2 && k < g->ndim) return (int)k;
    for (int a = 2; a < g->ndim; a++)
        if (g->name[a][0] && strlen(g->name[a]) == len && !strncmp(item, g->name[a], len)) return a;
    return -1;
}

dg_status dg_hji_grid_slice_at(const dg_hji_grid *g, const char *text, double *at, dg_err *e) {
    for (int k = 0; k < g->ndim; k++) at[k] = 0.5 * (g->lo[k] + g->hi[k]);
    int k = 2;  /* the axis of a value without a name */
    for (const char *tok = text; tok && *tok;) {
        const size_t len = strcspn(tok, ",");
        const size_t eq = strcspn(tok, "=,");  /* NAME=V, or V */
        if (eq < len) k = slice_axis(g, tok, eq);
        const size_t v0 = eq < len ? eq + 1 : 0;
        double v;
        if (g->ndim <= 2)
            return dg_err_set(e, DG_ERR_ARG, "expected no values: this %d-D grid has no axes after the first two, got %s",
                              g->ndim, DG_ECHO_N(tok, len));
        if (k < 2 || k >= g->ndim || !dg_parse_double(tok + v0, len - v0, &v))
            return dg_err_set(e, DG_ERR_ARG, "expected x2=V,... or V,... for the axes after the first two (x2 to x%d, "
                              "or their names) of this %d-D grid, got %s", g->ndim - 1, g->ndim, DG_ECHO_N(tok, len));
        at[k++] = v;
        tok += len + (tok[len] == ',');
    }
    return DG_OK;
}

void dg_hji_grid_point(const dg_hji_grid *g, int64_t node, double *x) {
    for (int k = g->ndim - 1; k >= 0; k--) {
        x[k] = dg_hji_grid_coord(g, k, (int)(node % g->n[k]));
        node /= g->n[k];
    }
}

int64_t dg_hji_grid_node(const dg_hji_grid *g, const int *idx) {
    int64_t j = 0;
    for (int k = 0; k < g->ndim; k++) j += (int64_t)idx[k] * g->stride[k];
    return j;
}

void hji_wrap_point(const dg_hji_grid *g, const double *x, double *y) {
    for (int k = 0; k < g->ndim; k++) {
        const double P = g->n[k] * g->dx[k];
        y[k] = x[k];
        if (g->bc[k] == DG_HJI_BC_PERIODIC && !(x[k] >= g->lo[k] && x[k] < g->lo[k] + P))
            y[k] = x[k] - P * floor((x[k] - g->lo[k]) / P);
    }
}

/* ------------------------------------------------------- signed distances */

/* The ball's signed distance at the point x (|x - center| over the counted axes, wrapped on periodic
 * ones, minus radius); grad (ndim) unless NULL gets its gradient (x - center) / |x - center| on the
 * counted axes, 0 on the others, and 0 at the centre (the subdifferential's least element: the unit
 * ball's centre). The one formula of the ball's nodes and of a problem's target at a point. */
double hji_sdf_ball_at(const dg_hji_grid *g, const double *center, double radius, unsigned axes, const double *x,
                       double *grad) {
    double d[DG_HJI_MAX_DIMS] = {0}, r2 = 0;
    for (int k = 0; k < g->ndim; k++)
        if (counts(axes, k)) {
            d[k] = axis_diff(g, k, x[k], center[k]);
            r2 += d[k] * d[k];
        }
    const double r = sqrt(r2);
    for (int k = 0; grad && k < g->ndim; k++) grad[k] = r > 0 ? d[k] / r : 0;
    return r - radius;
}

void hji_sdf_ball_nodes(const dg_hji_grid *g, const double *center, double radius, unsigned axes, int64_t j0,
                        int64_t n, double *out) {
    double x[DG_HJI_MAX_DIMS];
    for (int64_t i = 0; i < n; i++) {
        dg_hji_grid_point(g, j0 + i, x);
        out[i] = hji_sdf_ball_at(g, center, radius, axes, x, NULL);
    }
}

void dg_hji_sdf_ball(const dg_hji_grid *g, const double *center, double radius, unsigned axes, double *out) {
    hji_sdf_ball_nodes(g, center, radius, axes, 0, g->nodes, out);
}

/* The box [lo, hi]'s signed distance at the point x: |max(q, 0)| + min(max_k q_k, 0) with q_k =
 * |x_k - mid_k| - half_k over the counted axes (wrapped on periodic ones). grad (ndim) unless NULL:
 * outside, sign(x_k - mid_k) q_k / |max(q, 0)| on the axes with q_k > 0 (smooth there); inside and
 * on the box's faces, edges and corners, sign(x_k - mid_k) e_k for the first axis k with the largest
 * q_k (one face's normal: an element of the Clarke subdifferential, the hull of the faces' normals
 * meeting there); sign(0) = 0 (the middle of |.|'s subdifferential). The one formula of the box's
 * nodes and of a problem's obstacle at a point. */
double hji_sdf_box_at(const dg_hji_grid *g, const double *lo, const double *hi, unsigned axes, const double *x,
                      double *grad) {
    double o2 = 0, qmax = -INFINITY, q[DG_HJI_MAX_DIMS], d[DG_HJI_MAX_DIMS];
    int kmax = -1;
    for (int k = 0; k < g->ndim; k++)
        if (counts(axes, k)) {
            const double mid = 0.5 * (lo[k] + hi[k]), half = 0.5 * (hi[k] - lo[k]);
            d[k] = axis_diff(g, k, x[k], mid);
            q[k] = fabs(d[k]) - half;
            if (q[k] > 0) o2 += q[k] * q[k];
            if (q[k] > qmax) qmax = q[k], kmax = k;
        }
    const double o = sqrt(o2);
    for (int k = 0; grad && k < g->ndim; k++) {
        const double s = d[k] > 0 ? 1 : d[k] < 0 ? -1 : 0;
        grad[k] = !counts(axes, k) ? 0 : o > 0 ? (q[k] > 0 ? s * q[k] / o : 0) : k == kmax ? s : 0;
    }
    return o + (qmax < 0 ? qmax : 0);
}

void hji_sdf_box_nodes(const dg_hji_grid *g, const double *lo, const double *hi, unsigned axes, int64_t j0, int64_t n,
                       double *out) {
    double x[DG_HJI_MAX_DIMS];
    for (int64_t i = 0; i < n; i++) {
        dg_hji_grid_point(g, j0 + i, x);
        out[i] = hji_sdf_box_at(g, lo, hi, axes, x, NULL);
    }
}

void dg_hji_sdf_box(const dg_hji_grid *g, const double *lo, const double *hi, unsigned axes, double *out) {
    hji_sdf_box_nodes(g, lo, hi, axes, 0, g->nodes, out);
}

void dg_hji_sdf_union(int64_t n, const double *a, double *out) {
    for (int64_t j = 0; j < n; j++) out[j] = a[j] < out[j] ? a[j] : out[j];
}

void dg_hji_sdf_intersect(int64_t n, const double *a, double *out) {
    for (int64_t j = 0; j < n; j++) out[j] = a[j] > out[j] ? a[j] : out[j];
}

void dg_hji_sdf_complement(int64_t n, double *out) {
    for (int64_t j = 0; j < n; j++) out[j] = -out[j];
}
