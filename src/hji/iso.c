/* Isosurfaces of 3-D values: a level set of a field on a grid's nodes as triangles by marching
 * tetrahedra, and its picture, a shaded surface in a fixed orthographic view, as a PNG or a PDF (the
 * figure of `difgames hji plot --3d`, helperOC's visSetIm). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/image.h"
#include "difgames/memory.h"
#include "hji/internal.h"
#include "gfx/draw.h"

#define PI 3.141592653589793

/* ------------------------------------------------------------- slices */

void dg_hji_slice3d(const dg_hji_grid *g, const double *v, const double *at, double *out) {
    const int64_t n = (int64_t)g->n[0] * g->n[1] * g->n[2];
    if (g->ndim == 3) {
        memcpy(out, v, (size_t)n * sizeof(double));
        return;
    }
    double x[DG_HJI_MAX_DIMS];
    for (int k = 3; k < g->ndim; k++) x[k] = at[k];
    for (int i = 0; i < g->n[0]; i++)
        for (int j = 0; j < g->n[1]; j++)
            for (int k = 0; k < g->n[2]; k++) {
                x[0] = dg_hji_grid_coord(g, 0, i);
                x[1] = dg_hji_grid_coord(g, 1, j);
                x[2] = dg_hji_grid_coord(g, 2, k);
                out[((int64_t)i * g->n[1] + j) * g->n[2] + k] = dg_hji_interp(g, v, x, NULL);
            }
}

void dg_hji_grid_first3(const dg_hji_grid *g, dg_hji_grid *g3) {
    int periodic[3];
    for (int k = 0; k < 3; k++) periodic[k] = g->bc[k] == DG_HJI_BC_PERIODIC;
    dg_hji_grid_init(g3, 3, g->lo, g->hi, g->n, periodic, NULL);  /* a valid grid's axes: cannot fail */
    for (int k = 0; k < 3; k++) {
        g3->bc[k] = g->bc[k];
        memcpy(g3->name[k], g->name[k], sizeof g->name[k]);
    }
}

/* ------------------------------------------------- marching tetrahedra */

/* Marching tetrahedra after Doi, A. and Koide, A. (1991), "An efficient method of triangulating
 * equi-valued surfaces by using tetrahedral cells", IEICE Transactions E74(1), 214-224. A cell's
 * corner c (0..7) sits at the offset (c & 1, c >> 1 & 1, c >> 2 & 1) along axes 0, 1, 2. The cell is
 * cut along its main diagonal, corner 0 to corner 7, into the six tetrahedra of the monotone paths
 * 0 -> e_a -> e_a + e_b -> 7 (one a permutation of the axes). Every edge of them joins a corner to
 * one whose offsets are as large on every axis, so an edge is its lower node and a direction (the
 * bits the upper corner adds, 1..7); a cell face's diagonal runs from its lower corner to its upper
 * one, seen from either cell that shares it, so neighbouring cells' tetrahedra meet face to face and
 * the surface has no cracks. Each tetrahedron's corners are listed along its path (lower first). */
static const int TETS[6][4] = {{0, 1, 3, 7}, {0, 1, 5, 7}, {0, 2, 3, 7}, {0, 2, 6, 7}, {0, 4, 5, 7}, {0, 4, 6, 7}};

/* A grid of 3 axes, walked cell by cell. */
typedef struct cells {
    const dg_hji_grid *g;
    const double      *v;
    double             level;
    int                per[3];     /* 1: the axis wraps (its last cell joins node n-1 to node 0) */
    int                nc[3];      /* cells along each axis: n - 1, or n when periodic           */
} cells;

static void cells_init(cells *c, const dg_hji_grid *g, const double *v, double level) {
    *c = (cells){.g = g, .v = v, .level = level};
    for (int k = 0; k < 3; k++) {
        c->per[k] = g->bc[k] == DG_HJI_BC_PERIODIC;
        c->nc[k] = c->per[k] ? g->n[k] : g->n[k] - 1;
    }
}

/* The node of cell (i, j, k)'s corner q (wrapped across a periodic axis). */
static int64_t corner_node(const cells *c, const int *ijk, int q) {
    int64_t node = 0;
    for (int a = 0; a < 3; a++) {
        int i = ijk[a] + (q >> a & 1);
        if (i == c->g->n[a]) i = 0;  /* only a periodic axis's last cell reaches n */
        node += i * c->g->stride[a];
    }
    return node;
}

/* The bits of a tetrahedron's corners inside the level set ({V <= level}), from the cell's values. */
static int tet_inside(const double *cv, const int *tet, double level) {
    int m = 0;
    for (int q = 0; q < 4; q++) m |= (cv[tet[q]] <= level) << q;
    return m;
}

/* Triangles a tetrahedron's inside corners (bits of its 4) make: 1 or 3 inside, one; 2, two. */
static int tet_triangles(int inside) {
    const int k = (inside & 1) + (inside >> 1 & 1) + (inside >> 2 & 1) + (inside >> 3 & 1);
    return k == 2 ? 2 : k == 1 || k == 3 ? 1 : 0;
}

/* The triangles of the level set over every cell, counted (none allocated). */
static int64_t iso_count(const cells *c) {
    int64_t count = 0;
    int ijk[3];
    for (ijk[0] = 0; ijk[0] < c->nc[0]; ijk[0]++)
        for (ijk[1] = 0; ijk[1] < c->nc[1]; ijk[1]++)
            for (ijk[2] = 0; ijk[2] < c->nc[2]; ijk[2]++) {
                double cv[8];
                for (int q = 0; q < 8; q++) cv[q] = c->v[corner_node(c, ijk, q)];
                for (int t = 0; t < 6; t++) count += tet_triangles(tet_inside(cv, TETS[t], c->level));
            }
    return count;
}

/* The field's gradient at a node by central differences (one-sided at a plain axis's ends; a
 * periodic axis wraps), in the axes' units. */
static void node_gradient(const cells *c, int64_t node, double *grad) {
    const dg_hji_grid *g = c->g;
    for (int a = 0; a < 3; a++) {
        const int64_t s = g->stride[a];
        const int i = (int)(node / s % g->n[a]), n = g->n[a];
        int64_t lo = node - s, hi = node + s;
        double span = 2 * g->dx[a];
        if (i == 0) {
            if (c->per[a]) lo = node + (int64_t)(n - 1) * s;
            else { lo = node; span = g->dx[a]; }
        }
        if (i == n - 1) {
            if (c->per[a]) hi = node - (int64_t)(n - 1) * s;
            else { hi = node; span = g->dx[a]; }
        }
        grad[a] = (c->v[hi] - c->v[lo]) / span;
    }
}

/* One crossing: the point on the edge from the cell's corner qa to qb (qb's offsets the larger) where
 * the field crosses the level, its normal (the gradient interpolated as the point is) and its vertex
 * id (qa's node, the direction's bits). */
typedef struct crossing {
    double  x[3];
    double  n[3];
    int64_t id;
} crossing;

static crossing edge_crossing(const cells *c, const int *ijk, const int64_t *node, const double *cv, int qa, int qb) {
    const dg_hji_grid *g = c->g;
    crossing x;
    const double t = (cv[qa] - c->level) / (cv[qa] - cv[qb]);
    double ga[3], gb[3];
    node_gradient(c, node[qa], ga);
    node_gradient(c, node[qb], gb);
    for (int a = 0; a < 3; a++) {
        const int ia = ijk[a] + (qa >> a & 1), ib = ijk[a] + (qb >> a & 1);  /* unwrapped: a wrap cell at hi */
        x.x[a] = g->lo[a] + (ia + t * (ib - ia)) * g->dx[a];
        x.n[a] = ga[a] + t * (gb[a] - ga[a]);
    }
    x.id = node[qa] * 7 + ((qa ^ qb) - 1);
    return x;
}

/* The normal (b - a) x (c - a) into n. */
static void cross3(const double *a, const double *b, const double *c, double *n) {
    double u[3], w[3];
    for (int k = 0; k < 3; k++) { u[k] = b[k] - a[k]; w[k] = c[k] - a[k]; }
    n[0] = u[1] * w[2] - u[2] * w[1];
    n[1] = u[2] * w[0] - u[0] * w[2];
    n[2] = u[0] * w[1] - u[1] * w[0];
}

/* Appends the triangle (a, b, c), or (a, c, b) when flip, its corners' normals unit (a zero gradient:
 * the triangle's own normal, turned as the triangle is). */
static void emit(dg_hji_iso *iso, const crossing *a, const crossing *b, const crossing *c, int flip) {
    const crossing *p[3] = {a, flip ? c : b, flip ? b : c};
    double fn[3];
    cross3(p[0]->x, p[1]->x, p[2]->x, fn);
    const double fl = sqrt(fn[0] * fn[0] + fn[1] * fn[1] + fn[2] * fn[2]);
    const int64_t i = iso->ntri++;
    for (int q = 0; q < 3; q++) {
        const double *n = p[q]->n, len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (int k = 0; k < 3; k++) {
            iso->xyz[9 * i + 3 * q + k] = p[q]->x[k];
            iso->normal[9 * i + 3 * q + k] = (float)(len > 0 ? n[k] / len : fl > 0 ? fn[k] / fl : 0);
        }
        iso->vertex[3 * i + q] = p[q]->id;
    }
}

/* The middle of the edge between a cell's corners qa and qb (offsets, in cells). */
static void edge_middle(int qa, int qb, double *m) {
    for (int a = 0; a < 3; a++) m[a] = 0.5 * ((qa >> a & 1) + (qb >> a & 1));
}

/* 1 when the triangle on the edges (e[0], e[1]), (e[2], e[3]), (e[4], e[5]) (cell corners, an inside
 * one first) runs clockwise seen from outside ({V > level}): decided on the edges' middles, never a
 * degenerate triangle (the crossings may meet at a node that lies on the level), so that every
 * triangle turns the same way whatever the values. The middles' triangle and the crossings' have the
 * same turn: the crossings move along the edges and never through the plane of the others. */
static int tri_flip(const int *e, const int *tet, int inside) {
    double m[3][3], n[3], cin[3] = {0}, cout[3] = {0};
    int ni = 0;
    for (int q = 0; q < 3; q++) edge_middle(e[2 * q], e[2 * q + 1], m[q]);
    cross3(m[0], m[1], m[2], n);
    for (int q = 0; q < 4; q++) {
        const int in = inside >> q & 1;
        ni += in;
        for (int a = 0; a < 3; a++) (in ? cin : cout)[a] += tet[q] >> a & 1;
    }
    double s = 0;  /* the normal against the way from the inside corners' centre to the outside ones' */
    for (int a = 0; a < 3; a++) s += n[a] * (cout[a] / (4 - ni) - cin[a] / ni);
    return s < 0;
}

/* A tetrahedron's triangles: corners in (inside, by path position) against the others. */
static void tet_emit(const cells *c, dg_hji_iso *iso, const int *ijk, const int64_t *node, const double *cv,
                     const int *tet, int inside) {
    int in[4], out[4], ni = 0, no = 0;
    for (int q = 0; q < 4; q++) {
        if (inside >> q & 1) in[ni++] = q;
        else out[no++] = q;
    }
    /* the edge between path positions p and q, its lower corner first */
#define LO(p, q) tet[(p) < (q) ? (p) : (q)]
#define HI(p, q) tet[(p) < (q) ? (q) : (p)]
#define CROSS(p, q) edge_crossing(c, ijk, node, cv, LO(p, q), HI(p, q))
    if (ni == 1 || ni == 3) {  /* the lone corner's three edges */
        const int lone = ni == 1 ? in[0] : out[0];
        const int *rest = ni == 1 ? out : in;
        const int e[6] = {tet[lone], tet[rest[0]], tet[lone], tet[rest[1]], tet[lone], tet[rest[2]]};
        const crossing a = CROSS(lone, rest[0]), b = CROSS(lone, rest[1]), d = CROSS(lone, rest[2]);
        emit(iso, &a, &b, &d, tri_flip(e, tet, inside));
    } else {  /* a quadrilateral: edges in0-out0, in0-out1, in1-out1, in1-out0 around it */
        const int e[6] = {tet[in[0]], tet[out[0]], tet[in[0]], tet[out[1]], tet[in[1]], tet[out[1]]};
        const crossing a = CROSS(in[0], out[0]), b = CROSS(in[0], out[1]), d = CROSS(in[1], out[1]),
                       f = CROSS(in[1], out[0]);
        const int flip = tri_flip(e, tet, inside);
        emit(iso, &a, &b, &d, flip);
        emit(iso, &a, &d, &f, flip);
    }
#undef CROSS
#undef HI
#undef LO
}

#define TRI_BYTES (9 * sizeof(double) + 9 * sizeof(float) + 3 * sizeof(int64_t))

dg_status dg_hji_iso_make(const dg_hji_grid *g, const double *v, double level, dg_hji_iso *iso, dg_err *e) {
    memset(iso, 0, sizeof *iso);
    if (!g || g->ndim != 3 || !v)
        return dg_err_set(e, DG_ERR_ARG, "isosurface: needs a field on a grid of 3 axes (%d given)", g ? g->ndim : 0);
    if (!isfinite(level)) return dg_err_set(e, DG_ERR_ARG, "isosurface: the level %g is not finite", level);
    cells c;
    cells_init(&c, g, v, level);
    const int64_t ntri = iso_count(&c);
    dg_err me = {0};
    if (dg_mem_check((double)ntri * TRI_BYTES, &me) != DG_OK)
        return dg_err_set(e, DG_ERR_NOMEM, "isosurface: %lld triangles: %s", (long long)ntri, me.msg);
    if (ntri == 0) return DG_OK;
    iso->xyz = malloc((size_t)ntri * 9 * sizeof(double));
    iso->normal = malloc((size_t)ntri * 9 * sizeof(float));
    iso->vertex = malloc((size_t)ntri * 3 * sizeof(int64_t));
    if (!iso->xyz || !iso->normal || !iso->vertex) {
        dg_hji_iso_free(iso);
        return dg_err_set(e, DG_ERR_NOMEM, "isosurface: out of memory for %lld triangles", (long long)ntri);
    }
    int ijk[3];
    for (ijk[0] = 0; ijk[0] < c.nc[0]; ijk[0]++)
        for (ijk[1] = 0; ijk[1] < c.nc[1]; ijk[1]++)
            for (ijk[2] = 0; ijk[2] < c.nc[2]; ijk[2]++) {
                int64_t node[8];
                double cv[8];
                for (int q = 0; q < 8; q++) cv[q] = v[node[q] = corner_node(&c, ijk, q)];
                for (int t = 0; t < 6; t++) {
                    const int inside = tet_inside(cv, TETS[t], level);
                    if (tet_triangles(inside)) tet_emit(&c, iso, ijk, node, cv, TETS[t], inside);
                }
            }
    return DG_OK;
}

void dg_hji_iso_free(dg_hji_iso *iso) {
    if (!iso) return;
    free(iso->xyz);
    free(iso->normal);
    free(iso->vertex);
    memset(iso, 0, sizeof *iso);
}

/* ------------------------------------------------------------- picture */

#define FIG_W 820                  /* the figure (pixels, or points in a PDF)     */
#define FIG_H 740
#define FONT 13.0
#define TITLE_FONT 15.0
#define PAD 10.0
#define TICK 5.0
#define GAP 4.0
#define MARGIN 90.0                /* room for ticks and names around the box     */
#define SURFACE 0xd2452eu          /* the surface's colour, lit fully (helperOC's red, softened) */
#define AMBIENT 0.35               /* the share of the colour unlit faces keep     */
#define SEAM 1.0                   /* each triangle's edge stroked this wide in its own colour */
#define BOX_BACK 0xb4b4b4u         /* the box's edges behind the surface           */
#define BOX_FRONT 0x404040u

/* An orthographic camera: the box scaled to the cube [-1/2, 1/2]^3, then onto the screen. */
typedef struct camera {
    double lo[3], span[3];         /* the box: first node, and its extent (a periodic axis: its period) */
    double right[3], up[3], eye[3];  /* screen axes, and the direction towards the viewer (unit)       */
    double light[3];               /* towards the light: beside the viewer, up and to the right         */
    double scale, cx, cy;          /* pixels a cube unit, and the cube centre's pixel                   */
} camera;

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* MATLAB's view(az, el): the viewer towards (sin az cos el, -cos az cos el, sin el). */
static void camera_init(camera *cam, const dg_hji_grid *g, double az_deg, double el_deg) {
    const double az = az_deg * PI / 180, el = el_deg * PI / 180;
    for (int k = 0; k < 3; k++) {
        cam->lo[k] = g->lo[k];
        cam->span[k] = g->hi[k] - g->lo[k];
    }
    const double eye[3] = {sin(az) * cos(el), -cos(az) * cos(el), sin(el)};
    const double right[3] = {cos(az), sin(az), 0};
    const double up[3] = {-sin(az) * sin(el), cos(az) * sin(el), cos(el)};
    double light[3], ll = 0;
    for (int k = 0; k < 3; k++) {
        cam->eye[k] = eye[k];
        cam->right[k] = right[k];
        cam->up[k] = up[k];
        light[k] = eye[k] + 0.35 * right[k] + 0.45 * up[k];
        ll += light[k] * light[k];
    }
    for (int k = 0; k < 3; k++) cam->light[k] = light[k] / sqrt(ll);
}

/* A point of the grid's coordinates in the cube. */
static void to_cube(const camera *cam, const double *x, double *q) {
    for (int k = 0; k < 3; k++) q[k] = (x[k] - cam->lo[k]) / cam->span[k] - 0.5;
}

static void project(const camera *cam, const double *q, double *px, double *py) {
    *px = cam->cx + cam->scale * dot3(q, cam->right);
    *py = cam->cy - cam->scale * dot3(q, cam->up);
}

/* Fits the cube's picture into the box [x0, x0 + w] x [y0, y0 + h] of the figure. */
static void camera_fit(camera *cam, double x0, double y0, double w, double h) {
    double sx0 = INFINITY, sx1 = -INFINITY, sy0 = INFINITY, sy1 = -INFINITY;
    for (int c = 0; c < 8; c++) {
        const double q[3] = {(c & 1) - 0.5, (c >> 1 & 1) - 0.5, (c >> 2 & 1) - 0.5};
        const double sx = dot3(q, cam->right), sy = dot3(q, cam->up);
        sx0 = fmin(sx0, sx); sx1 = fmax(sx1, sx); sy0 = fmin(sy0, sy); sy1 = fmax(sy1, sy);
    }
    cam->scale = fmin(w / (sx1 - sx0), h / (sy1 - sy0));
    cam->cx = x0 + w / 2 - cam->scale * (sx0 + sx1) / 2;
    cam->cy = y0 + h / 2 + cam->scale * (sy0 + sy1) / 2;
}

/* A triangle's place in the painting order: its depth towards the viewer (the far ones first). */
typedef struct tri_depth { double depth; int64_t i; } tri_depth;

static int by_depth(const void *a, const void *b) {
    const tri_depth *x = a, *y = b;
    if (x->depth != y->depth) return x->depth < y->depth ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* The brightness (0..1) of a corner whose unit normal n is in the grid's coordinates: Lambert's cosine
 * to the light plus the ambient share, the normal taken to the cube (scaled by each axis's span) and
 * turned towards the viewer (both sides of the surface lit alike). */
static double corner_light(const camera *cam, const float *n) {
    double m[3];
    for (int k = 0; k < 3; k++) m[k] = n[k] * cam->span[k];
    const double len = sqrt(dot3(m, m));
    if (!(len > 0)) return AMBIENT;
    const double s = dot3(m, cam->eye) < 0 ? -1 / len : 1 / len;
    const double c = s * dot3(m, cam->light);
    return AMBIENT + (1 - AMBIENT) * (c > 0 ? c : 0);
}

static uint32_t shade(double b) {
    const int r = (int)lround(((SURFACE >> 16) & 255) * b), g = (int)lround(((SURFACE >> 8) & 255) * b),
              bl = (int)lround((SURFACE & 255) * b);
    return (uint32_t)r << 16 | (uint32_t)g << 8 | (uint32_t)bl;
}

/* The surface's triangles painted back to front, each in the mean brightness of its corners. */
static dg_status paint_surface(dg_draw *d, const camera *cam, const dg_hji_iso *iso, dg_err *e) {
    if (iso->ntri == 0) return DG_OK;
    dg_status s = dg_mem_check((double)iso->ntri * sizeof(tri_depth), e);
    if (s != DG_OK) return s;
    tri_depth *order = malloc((size_t)iso->ntri * sizeof *order);
    if (!order) return dg_err_set(e, DG_ERR_NOMEM, "hji plot --3d: out of memory for %lld triangles",
                                  (long long)iso->ntri);
    for (int64_t i = 0; i < iso->ntri; i++) {
        double depth = 0, q[3];
        for (int c = 0; c < 3; c++) {
            to_cube(cam, iso->xyz + 9 * i + 3 * c, q);
            depth += dot3(q, cam->eye);
        }
        order[i] = (tri_depth){depth, i};
    }
    qsort(order, (size_t)iso->ntri, sizeof *order, by_depth);
    for (int64_t k = 0; k < iso->ntri; k++) {
        const int64_t i = order[k].i;
        double px[3], py[3], q[3], b = 0;
        for (int c = 0; c < 3; c++) {
            to_cube(cam, iso->xyz + 9 * i + 3 * c, q);
            project(cam, q, &px[c], &py[c]);
            b += corner_light(cam, iso->normal + 9 * i + 3 * c) / 3;
        }
        dg_draw_triangle(d, px, py, shade(b), SEAM);
    }
    free(order);
    return DG_OK;
}

/* The cube's corner c (bit k: the high end of axis k). */
static void cube_corner(int c, double *q) {
    for (int k = 0; k < 3; k++) q[k] = (c >> k & 1) - 0.5;
}

/* The corner farthest from the viewer, and the nearest. */
static int far_corner(const camera *cam, int nearest) {
    int best = 0;
    double bd = 0;
    for (int c = 0; c < 8; c++) {
        double q[3];
        cube_corner(c, q);
        const double dep = dot3(q, cam->eye) * (nearest ? -1 : 1);
        if (c == 0 || dep < bd) { best = c; bd = dep; }
    }
    return best;
}

/* The box's twelve edges: behind (those of the far corner, under the surface) or the others. */
static void paint_box(dg_draw *d, const camera *cam, int behind) {
    const int back = far_corner(cam, 0);
    for (int c = 0; c < 8; c++)
        for (int k = 0; k < 3; k++) {
            if (c >> k & 1) continue;  /* each edge once, from its low end */
            const int c2 = c | 1 << k;
            if ((c == back || c2 == back) != behind) continue;
            double q0[3], q1[3], x0, y0, x1, y1;
            cube_corner(c, q0);
            cube_corner(c2, q1);
            project(cam, q0, &x0, &y0);
            project(cam, q1, &x1, &y1);
            dg_draw_line(d, x0, y0, x1, y1, behind ? BOX_BACK : BOX_FRONT, 1);
        }
}

/* The edge along axis k that carries its ticks: one of the outline's (touching neither the nearest
 * corner nor the farthest), the lower on the screen for axes 0 and 1, the further left for axis 2: the
 * corner at its low end. */
static int tick_edge(const camera *cam, int k) {
    const int back = far_corner(cam, 0), front = far_corner(cam, 1);
    int best = -1;
    double bs = 0;
    for (int c = 0; c < 8; c++) {
        if (c >> k & 1) continue;
        const int c2 = c | 1 << k;
        if (c == back || c2 == back || c == front || c2 == front) continue;
        double q0[3], q1[3], x0, y0, x1, y1;
        cube_corner(c, q0);
        cube_corner(c2, q1);
        project(cam, q0, &x0, &y0);
        project(cam, q1, &x1, &y1);
        const double s = k < 2 ? (y0 + y1) : -(x0 + x1);
        if (best < 0 || s > bs) { best = c; bs = s; }
    }
    return best < 0 ? 0 : best;
}

/* Text anchored at (x, y) on the side out points to (a unit screen direction). */
static int anchor_towards(double ox, double oy) {
    const int h = ox > 0.35 ? DG_TEXT_LEFT : ox < -0.35 ? DG_TEXT_RIGHT : DG_TEXT_CENTER;
    const int v = oy > 0.35 ? DG_TEXT_TOP : oy < -0.35 ? DG_TEXT_BOTTOM : DG_TEXT_MIDDLE;
    return h | v;
}

/* The tick labels drawn so far, as boxes (x0, y0, x1, y1): a label that would overlap one is left
 * out (two axes' ends meet at a corner of the box). */
typedef struct label_boxes { int n; double box[3 * DG_AXIS_MAX_TICKS][4]; } label_boxes;

/* The box text w wide and h high anchored at (x, y) by align takes (dg_draw_text's anchors). */
static void text_box(double x, double y, double w, double h, int align, double *b) {
    const int ha = align & 3, va = align & 12;
    b[0] = ha == DG_TEXT_CENTER ? x - w / 2 : ha == DG_TEXT_RIGHT ? x - w : x;
    b[1] = va == DG_TEXT_MIDDLE ? y - h / 2 : va == DG_TEXT_BOTTOM ? y - h : y;
    b[2] = b[0] + w;
    b[3] = b[1] + h;
}

/* 1 when box b overlaps a label already drawn by more than a pixel (a face's box holds some blank
 * above and below its letters), else 0 and b kept as drawn. */
static int label_clash(label_boxes *lb, const double *b) {
    for (int i = 0; i < lb->n; i++) {
        const double *o = lb->box[i];
        if (b[0] + 1 < o[2] && o[0] < b[2] - 1 && b[1] + 1 < o[3] && o[1] < b[3] - 1) return 1;
    }
    if (lb->n < 3 * DG_AXIS_MAX_TICKS) memcpy(lb->box[lb->n++], b, sizeof lb->box[0]);
    return 0;
}

/* Axis k's ticks (round numbers of its range) along its tick edge, and its name with the range. */
static void paint_axis(dg_draw *d, const camera *cam, const dg_hji_grid *g, const char *name, int k,
                       label_boxes *lb) {
    const int c = tick_edge(cam, k);
    double q0[3], q1[3], x0, y0, x1, y1;
    cube_corner(c, q0);
    cube_corner(c | 1 << k, q1);
    project(cam, q0, &x0, &y0);
    project(cam, q1, &x1, &y1);
    /* outward: across the edge on the screen, away from the cube's centre */
    const double ex = x1 - x0, ey = y1 - y0, el = hypot(ex, ey);
    double ox = el > 0 ? -ey / el : 0, oy = el > 0 ? ex / el : 1;
    if (ox * ((x0 + x1) / 2 - cam->cx) + oy * ((y0 + y1) / 2 - cam->cy) < 0) { ox = -ox; oy = -oy; }
    const uint32_t ink = 0x000000;
    dg_axis a = {.lo = g->lo[k], .hi = g->hi[k]};
    dg_axis_linear(&a, 5);
    const int align = anchor_towards(ox, oy);
    const double ch = dg_draw_text_height(d, FONT);
    double widest = 0;
    for (int i = 0; i < a.n; i++) {
        const double t = (a.tick[i] - a.lo) / (a.hi - a.lo), x = x0 + t * ex, y = y0 + t * ey;
        const double lx = x + (TICK + GAP) * ox, ly = y + (TICK + GAP) * oy, w = dg_draw_text_width(d, a.label[i], FONT);
        double b[4];
        text_box(lx, ly, w, ch, align, b);
        dg_draw_line(d, x, y, x + TICK * ox, y + TICK * oy, ink, 1);
        if (!label_clash(lb, b)) widest = fmax(widest, dg_draw_text(d, lx, ly, a.label[i], ink, FONT, align, 0));
    }
    char label[96], lo[24], hi[24];
    snprintf(lo, sizeof lo, "%.4g", g->lo[k]);
    snprintf(hi, sizeof hi, "%.4g", g->hi[k]);
    snprintf(label, sizeof label, "%s in [%s, %s]", name, lo, hi);
    const double off = TICK + 2 * GAP + fabs(ox) * widest + fabs(oy) * ch + GAP + ch / 2;
    dg_draw_text(d, (x0 + x1) / 2 + off * ox, (y0 + y1) / 2 + off * oy, label, ink, FONT, align, 0);
}

/* The whole figure: title lines, the box behind, the surface, the box in front, the axes. */
static dg_status paint_figure(dg_draw *d, const dg_hji_grid *g3, const char *const *names, const dg_hji_iso *iso,
                              double az, double el, const char *title, const char *note, dg_err *e) {
    camera cam;
    camera_init(&cam, g3, az, el);
    const double th = dg_draw_text_height(d, TITLE_FONT), ch = dg_draw_text_height(d, FONT);
    const double top = PAD + th + GAP + ch + PAD;
    camera_fit(&cam, MARGIN, top + MARGIN * 0.6, FIG_W - 2 * MARGIN, FIG_H - top - MARGIN * 1.6);
    dg_draw_rect_fill(d, 0, 0, FIG_W, FIG_H, 0xffffff, 1);
    dg_draw_text(d, FIG_W / 2.0, PAD, title, 0x000000, TITLE_FONT, DG_TEXT_CENTER | DG_TEXT_TOP, 0);
    dg_draw_text(d, FIG_W / 2.0, PAD + th + GAP, note, 0x505050, FONT, DG_TEXT_CENTER | DG_TEXT_TOP, 0);
    paint_box(d, &cam, 1);
    const dg_status s = paint_surface(d, &cam, iso, e);
    if (s != DG_OK) return s;
    paint_box(d, &cam, 0);
    label_boxes lb = {0};
    for (int k = 0; k < 3; k++) paint_axis(d, &cam, g3, names[k], k, &lb);
    return DG_OK;
}

/* 1 when path ends in ".pdf" (any case). */
static int is_pdf(const char *path) {
    const size_t n = strlen(path);
    if (n < 4) return 0;
    const char *s = path + n - 4;
    return s[0] == '.' && (s[1] | 32) == 'p' && (s[2] | 32) == 'd' && (s[3] | 32) == 'f';
}

/* Draws the figure into path: a PDF page, or a PNG of an image drawn the same way. */
static dg_status write_figure(const char *path, const dg_hji_grid *g3, const char *const *names,
                              const dg_hji_iso *iso, double az, double el, const char *title, const char *note,
                              dg_err *e) {
    dg_draw d;
    if (is_pdf(path)) {
        dg_status s = dg_draw_begin_pdf(&d, path, FIG_W, FIG_H, e);
        if (s == DG_OK) s = paint_figure(&d, g3, names, iso, az, el, title, note, e);
        if (s == DG_OK) return dg_draw_end(&d, e);
        dg_draw_abort(&d);
        return s;
    }
    dg_image *img = dg_image_create(FIG_W, FIG_H, 0xffffff);
    if (!img) return dg_err_set(e, DG_ERR_NOMEM, "hji plot --3d: out of memory for a %dx%d figure", FIG_W, FIG_H);
    dg_status s = dg_draw_begin(&d, img, e);
    if (s == DG_OK) {
        s = paint_figure(&d, g3, names, iso, az, el, title, note, e);
        if (s == DG_OK) s = dg_draw_end(&d, e);
        else dg_draw_abort(&d);
    }
    if (s == DG_OK) s = dg_png_write(img, path, e);
    dg_image_free(img);
    return s;
}

/* The title: "air3d: the zero level set of V at t = 2.8" (a slice's other axes named after it). */
static void iso_title(char *title, size_t cap, const dg_hji_value *vf, const double *at, double level) {
    const dg_hji_grid *g = &vf->grid;
    const double t_end = vf->times[vf->nt > 0 ? vf->nt - 1 : 0];
    int n = level == 0 ? snprintf(title, cap, "%s: the zero level set of V at t = %.3g", vf->game[0] ? vf->game : "value",
                                  t_end)
                       : snprintf(title, cap, "%s: the level set V = %.4g at t = %.3g", vf->game[0] ? vf->game : "value",
                                  level, t_end);
    for (int k = 3; k < g->ndim && n >= 0 && (size_t)n < cap; k++) {
        char name[32];
        dg_hji_grid_axis_name(g, k, name, sizeof name);
        n += snprintf(title + n, cap - (size_t)n, ", %s = %.3g", name, at[k]);
    }
}

dg_status dg_hji_plot_iso(const dg_hji_value *vf, const double *at_in, const dg_hji_iso_view *view, const char *path,
                          dg_err *e) {
    const dg_hji_grid *g = &vf->grid;
    const dg_hji_iso_view vw = view ? *view
                                    : (dg_hji_iso_view){.azimuth = DG_HJI_ISO_AZIMUTH,
                                                        .elevation = DG_HJI_ISO_ELEVATION};
    if (g->ndim < 3)
        return dg_err_set(e, DG_ERR_ARG, "hji plot --3d: %s has %d axes: a 3-D figure needs 3 or more (hji plot "
                          "without --3d draws it)", vf->game[0] ? vf->game : "the value", g->ndim);
    if (!isfinite(vw.level) || !isfinite(vw.azimuth) || !isfinite(vw.elevation))
        return dg_err_set(e, DG_ERR_ARG, "hji plot --3d: the level and the view must be finite numbers");
    double at[DG_HJI_MAX_DIMS];
    for (int k = 0; k < g->ndim; k++) at[k] = at_in && k >= 3 ? at_in[k] : 0.5 * (g->lo[k] + g->hi[k]);
    dg_hji_grid g3;
    dg_hji_grid_first3(g, &g3);
    /* the value at t_end, and its 3-D slice where it has more axes */
    const double need = (double)g->nodes * sizeof(double) + (g->ndim > 3 ? (double)g3.nodes * sizeof(double) : 0);
    dg_status s = dg_mem_check(need, e);
    if (s != DG_OK) return s;
    double *v = malloc((size_t)g->nodes * sizeof(double));
    double *v3 = g->ndim > 3 ? malloc((size_t)g3.nodes * sizeof(double)) : v;
    if (!v || !v3) s = dg_err_set(e, DG_ERR_NOMEM, "hji plot --3d: out of memory for the value");
    if (s == DG_OK) s = dg_hji_value_read(vf, vf->nt - 1, v, e);
    if (s == DG_OK && v3 != v) dg_hji_slice3d(g, v, at, v3);
    if (v3 != v) {  /* the slice alone is needed from here */
        free(v);
        v = NULL;
    }
    dg_hji_iso iso = {0};
    if (s == DG_OK) s = dg_hji_iso_make(&g3, v3, vw.level, &iso, e);
    if (s == DG_OK) {
        char names[3][24], title[192], note[192];
        const char *np[3] = {names[0], names[1], names[2]};
        for (int k = 0; k < 3; k++) {
            const char *n = g->name[k][0] ? NULL : dg_hji_axis_name(vf->game, k);  /* a grid made by hand */
            if (n) snprintf(names[k], sizeof names[k], "%s", n);
            else dg_hji_grid_axis_name(g, k, names[k], sizeof names[k]);
        }
        iso_title(title, sizeof title, vf, at, vw.level);
        if (iso.ntri > 0)
            snprintf(note, sizeof note, "%lld triangles, view azimuth %.4g, elevation %.4g", (long long)iso.ntri,
                     vw.azimuth, vw.elevation);
        else
            snprintf(note, sizeof note, "no surface: V is on one side of %.4g everywhere", vw.level);
        s = write_figure(path, &g3, np, &iso, vw.azimuth, vw.elevation, title, note, e);
    }
    dg_hji_iso_free(&iso);
    free(v);
    if (v3 != v) free(v3);
    return s;
}
