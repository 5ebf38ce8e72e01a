/* Level sets of 3-D fields by marching tetrahedra (dg_hji_iso_make, what `difgames hji plot --3d`
 * draws) on analytic fields: a sphere's vertices lie on it to within linear interpolation's error, its
 * surface is closed and oriented and its area within a percent of 4 pi r^2; a plane's vertices lie on
 * the plane to rounding; a field above the level gives no triangles; a cylinder around a periodic axis
 * closes into a tube across the wrap (and stays open without it); the 3-D slice of a 4-D value. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "difgames/difgames.h"

static const double PI = 3.141592653589793;

static dg_hji_grid grid3(double lo, double hi, int n, int periodic2, double lo2, double hi2, int n2) {
    dg_hji_grid g;
    const double l[3] = {lo, lo, lo2}, h[3] = {hi, hi, hi2};
    const int nn[3] = {n, n, n2}, per[3] = {0, 0, periodic2};
    dg_err e = {0};
    if (dg_hji_grid_init(&g, 3, l, h, nn, per, &e) != DG_OK) fail_msg("%s", e.msg);
    return g;
}

/* f(x) at every node of g */
static double *field(const dg_hji_grid *g, double (*f)(const double *x)) {
    double *v = malloc((size_t)g->nodes * sizeof *v), x[3];
    for (int64_t j = 0; j < g->nodes; j++) {
        dg_hji_grid_point(g, j, x);
        v[j] = f(x);
    }
    return v;
}

static double sphere(const double *x) { return sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]) - 0.6; }
static double plane(const double *x) { return x[0] + 0.5 * x[1] - 0.25 * x[2] - 0.3; }
static double positive(const double *x) { return 1 + x[0] * x[0]; }
static double cylinder(const double *x) { return sqrt(x[0] * x[0] + x[1] * x[1]) - 0.5; }

/* An undirected edge of a triangle, its vertex ids low first, and which way the triangle runs on it. */
typedef struct edge { int64_t a, b; int dir; } edge;

static int by_edge(const void *p, const void *q) {
    const edge *x = p, *y = q;
    if (x->a != y->a) return x->a < y->a ? -1 : 1;
    if (x->b != y->b) return x->b < y->b ? -1 : 1;
    return x->dir - y->dir;
}

/* How many edges are not shared by exactly two triangles running opposite ways on it (0: the surface
 * is closed and consistently oriented). */
static int64_t open_edges(const dg_hji_iso *iso) {
    edge *es = malloc((size_t)iso->ntri * 3 * sizeof *es);
    for (int64_t i = 0; i < iso->ntri; i++)
        for (int c = 0; c < 3; c++) {
            const int64_t u = iso->vertex[3 * i + c], w = iso->vertex[3 * i + (c + 1) % 3];
            es[3 * i + c] = (edge){u < w ? u : w, u < w ? w : u, u < w ? 1 : -1};
        }
    const int64_t n = iso->ntri * 3;
    qsort(es, (size_t)n, sizeof *es, by_edge);
    int64_t bad = 0;
    for (int64_t i = 0; i < n;) {
        int64_t j = i;
        while (j < n && es[j].a == es[i].a && es[j].b == es[i].b) j++;
        if (j - i != 2 || es[i].dir == es[i + 1].dir) bad++;
        i = j;
    }
    free(es);
    return bad;
}

/* The triangle's area and its normal (b - a) x (c - a) into n. */
static double tri_area(const double *p, double *n) {
    double u[3], w[3];
    for (int k = 0; k < 3; k++) { u[k] = p[3 + k] - p[k]; w[k] = p[6 + k] - p[k]; }
    n[0] = u[1] * w[2] - u[2] * w[1];
    n[1] = u[2] * w[0] - u[0] * w[2];
    n[2] = u[0] * w[1] - u[1] * w[0];
    return 0.5 * sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
}

static void test_sphere(void **state) {
    (void)state;
    const int n = 41;                       /* h = 0.05 */
    const dg_hji_grid g = grid3(-1, 1, n, 0, -1, 1, n);
    double *v = field(&g, sphere);
    dg_hji_iso iso;
    dg_err e = {0};
    assert_int_equal(dg_hji_iso_make(&g, v, 0, &iso, &e), DG_OK);
    assert_true(iso.ntri > 1000);
    /* linear interpolation along an edge of length L misses the zero of |x| - r by at most about
     * L^2 / 8 times the curvature 1/r (the field's second derivative across the edge over its first):
     * L <= sqrt(3) h, the main diagonal's */
    const double h = g.dx[0], r = 0.6, tol = 3 * h * h / (8 * (r - sqrt(3) * h));
    double worst = 0, area = 0, worst_normal = 1, outward = INFINITY;
    for (int64_t i = 0; i < iso.ntri; i++) {
        const double *p = iso.xyz + 9 * i;
        double fn[3], mid[3] = {0};
        const double a = tri_area(p, fn);
        area += a;
        for (int c = 0; c < 3; c++) {
            const double *x = p + 3 * c, rad = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
            const float *nv = iso.normal + 9 * i + 3 * c;
            worst = fmax(worst, fabs(rad - r));
            worst_normal = fmin(worst_normal, (nv[0] * x[0] + nv[1] * x[1] + nv[2] * x[2]) / rad);
            for (int k = 0; k < 3; k++) mid[k] += x[k] / 3;
        }
        /* (a node exactly on the level makes triangles of no area: no way to turn) */
        if (a > 1e-12) outward = fmin(outward, (fn[0] * mid[0] + fn[1] * mid[1] + fn[2] * mid[2]) / (2 * a));
    }
    printf("# sphere r 0.6, h %.3g: %lld triangles, worst |x| - r %.2e (bound %.2e), area %.4f (4 pi r^2 %.4f), "
           "least normal . x/|x| %.4f, least face normal . x %.3f\n", h, (long long)iso.ntri, worst, tol, area,
           4 * PI * r * r, worst_normal, outward);
    assert_true(worst <= tol);
    assert_true(fabs(area - 4 * PI * r * r) < 0.01 * 4 * PI * r * r);
    assert_true(worst_normal > 0.99);       /* the gradient's normals: outward, radial */
    assert_true(outward > 0.5);             /* every triangle turned counter-clockwise seen from outside */
    assert_int_equal(open_edges(&iso), 0);  /* closed: each edge in exactly two triangles, opposite ways */
    dg_hji_iso_free(&iso);
    /* O(h^2): on a grid of twice the spacing, the worst miss about four times larger */
    const dg_hji_grid g2 = grid3(-1, 1, 21, 0, -1, 1, 21);
    double *v2 = field(&g2, sphere), worst2 = 0;
    assert_int_equal(dg_hji_iso_make(&g2, v2, 0, &iso, &e), DG_OK);
    for (int64_t j = 0; j < iso.ntri * 3; j++) {
        const double *x = iso.xyz + 3 * j;
        worst2 = fmax(worst2, fabs(sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]) - r));
    }
    printf("# h %.3g: worst %.2e, ratio %.2f\n", g2.dx[0], worst2, worst2 / worst);
    assert_true(worst2 / worst > 2.5 && worst2 / worst < 6);
    assert_int_equal(open_edges(&iso), 0);
    dg_hji_iso_free(&iso);
    free(v2);
    /* another level: the sphere of radius 0.8 */
    assert_int_equal(dg_hji_iso_make(&g, v, 0.2, &iso, &e), DG_OK);
    for (int64_t j = 0; j < iso.ntri * 3; j++) {
        const double *x = iso.xyz + 3 * j;
        assert_true(fabs(sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]) - 0.8) <= tol);
    }
    dg_hji_iso_free(&iso);
    free(v);
}

static void test_plane(void **state) {
    (void)state;
    const dg_hji_grid g = grid3(-1, 1, 17, 0, -1, 1, 13);
    double *v = field(&g, plane);
    dg_hji_iso iso;
    dg_err e = {0};
    assert_int_equal(dg_hji_iso_make(&g, v, 0, &iso, &e), DG_OK);
    assert_true(iso.ntri > 100);
    double worst = 0;
    for (int64_t i = 0; i < iso.ntri; i++)
        for (int c = 0; c < 3; c++) {
            const double *x = iso.xyz + 9 * i + 3 * c;
            const float *nv = iso.normal + 9 * i + 3 * c;
            worst = fmax(worst, fabs(plane(x)));
            /* the normal: the plane's, (1, 0.5, -0.25) / |.| */
            assert_true(fabs(nv[0] - 1 / sqrt(1.3125)) < 1e-6 && fabs(nv[1] - 0.5 / sqrt(1.3125)) < 1e-6);
        }
    assert_true(worst < 1e-14);  /* a linear field's crossings are exact, to rounding */
    assert_true(open_edges(&iso) > 0);  /* the plane leaves the box: its rim is open */
    dg_hji_iso_free(&iso);
    free(v);
}

static void test_nothing(void **state) {
    (void)state;
    const dg_hji_grid g = grid3(-1, 1, 9, 0, -1, 1, 9);
    double *v = field(&g, positive);
    dg_hji_iso iso;
    dg_err e = {0};
    assert_int_equal(dg_hji_iso_make(&g, v, 0, &iso, &e), DG_OK);
    assert_int_equal(iso.ntri, 0);
    assert_null(iso.xyz);
    dg_hji_iso_free(&iso);
    dg_hji_iso_free(&iso);  /* twice: harmless */
    /* a grid of other than 3 axes is refused */
    dg_hji_grid g2;
    const double lo[2] = {0, 0}, hi[2] = {1, 1};
    const int n[2] = {4, 4};
    assert_int_equal(dg_hji_grid_init(&g2, 2, lo, hi, n, NULL, &e), DG_OK);
    assert_int_equal(dg_hji_iso_make(&g2, v, 0, &iso, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "3 axes"));
    free(v);
}

/* The tube r = 0.5 along axis 2; tri.vertex ids of the two ends match across the wrap. */
static void test_periodic_tube(void **state) {
    (void)state;
    const dg_hji_grid g = grid3(-1, 1, 31, 1, 0, 2 * PI, 24);
    double *v = field(&g, cylinder);
    dg_hji_iso iso;
    dg_err e = {0};
    assert_int_equal(dg_hji_iso_make(&g, v, 0, &iso, &e), DG_OK);
    assert_int_equal(open_edges(&iso), 0);  /* closed around the wrap */
    double zlo = INFINITY, zhi = -INFINITY, area = 0, fn[3];
    for (int64_t i = 0; i < iso.ntri; i++) {
        area += tri_area(iso.xyz + 9 * i, fn);
        for (int c = 0; c < 3; c++) {
            const double *x = iso.xyz + 9 * i + 3 * c;
            zlo = fmin(zlo, x[2]);
            zhi = fmax(zhi, x[2]);
            assert_true(x[2] >= 0 && x[2] <= 2 * PI + 1e-12);
        }
    }
    /* the wrap cell lies at [hi - dx, hi], not across the box: the tube spans the whole period */
    assert_true(zlo == 0 && fabs(zhi - 2 * PI) < 1e-12);
    assert_true(fabs(area - 2 * PI * 0.5 * 2 * PI) < 0.01 * 2 * PI * 0.5 * 2 * PI);
    dg_hji_iso_free(&iso);
    /* the same field on an axis that does not wrap: open at both ends */
    const dg_hji_grid h = grid3(-1, 1, 31, 0, 0, 2 * PI, 24);
    double *w = field(&h, cylinder);
    assert_int_equal(dg_hji_iso_make(&h, w, 0, &iso, &e), DG_OK);
    assert_true(open_edges(&iso) > 0);
    dg_hji_iso_free(&iso);
    free(w);
    free(v);
}

/* The 3-D slice of a 4-D value at x3 = 0.25: V = x0 + 2 x1 - x2 + 4 x3 there, exactly (multilinear
 * interpolation of a linear field). */
static void test_slice3d(void **state) {
    (void)state;
    dg_hji_grid g, g3;
    const double lo[4] = {-1, -1, -1, 0}, hi[4] = {1, 1, 1, 1};
    const int n[4] = {5, 6, 7, 5};
    dg_err e = {0};
    assert_int_equal(dg_hji_grid_init(&g, 4, lo, hi, n, NULL, &e), DG_OK);
    double *v = malloc((size_t)g.nodes * sizeof *v), x[4];
    for (int64_t j = 0; j < g.nodes; j++) {
        dg_hji_grid_point(&g, j, x);
        v[j] = x[0] + 2 * x[1] - x[2] + 4 * x[3];
    }
    dg_hji_grid_first3(&g, &g3);
    assert_int_equal(g3.ndim, 3);
    assert_int_equal(g3.nodes, 5 * 6 * 7);
    double *s = malloc((size_t)g3.nodes * sizeof *s);
    const double at[4] = {0, 0, 0, 0.3};
    dg_hji_slice3d(&g, v, at, s);
    for (int64_t j = 0; j < g3.nodes; j++) {
        dg_hji_grid_point(&g3, j, x);
        assert_true(fabs(s[j] - (x[0] + 2 * x[1] - x[2] + 1.2)) < 1e-12);
    }
    free(s);
    free(v);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sphere),
        cmocka_unit_test(test_plane),
        cmocka_unit_test(test_nothing),
        cmocka_unit_test(test_periodic_tube),
        cmocka_unit_test(test_slice3d),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
