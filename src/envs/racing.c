/* racing: a car with kinematic bicycle dynamics laps a closed track; the game
 * is defined in docs/games/racing.md. The track's centre line is a closed
 * curve through the given points: a periodic quintic spline (smooth to its
 * fourth derivative, so the projection below is smooth to its third) or the
 * polyline itself. The car's arc-length coordinate s and its signed distance d
 * come from its projection on the curve, found by Newton's method in double
 * precision and put on the tape as its linearisation at the solution: the
 * value is the projection's, the gradient the implicit function theorem's,
 * ds/dp = |C'| C' / (|C'|² - (p - C)·C''), dd/dp = the unit normal. */
#include <tgmath.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "envs/games.h"

#define MAX_CTRL 64
#define MAX_RES 32
#define MAX_PTS (MAX_CTRL * MAX_RES)
#define MAX_LOOK 8

typedef struct racing {
    float ctrl[MAX_CTRL][2];      /* the track's control points, in order around it */
    int   nctrl;                  /* (not the first field: a count at offset 0 reads as none) */
    int   spline, res, nlook, random_start;
    float width, softness, wheelbase, max_steer, accel, drag, start_speed, start_offset, look_gap;
    /* derived by create. The curve C(σ), σ in [0, n): piece i joins point i to point i + 1 */
    double D[MAX_CTRL][2];        /* the spline's de Boor points (uniform quintic B-spline)  */
    int    m;                     /* samples, res a piece                                   */
    double rmin;                  /* the smallest radius of curvature                       */
    double A[MAX_PTS + 1];        /* arc length at σ = j / res; A[m] the lap's length        */
    float  Q[MAX_PTS][2];         /* the centre line at σ = j / res (the nearest-point search) */
    float  lines[2 * MAX_PTS][4]; /* the edges, for replays                                 */
} racing;

/* state columns */
enum { C_X, C_Y, C_HX, C_HY, C_V, C_S, C_PROG, C_DS, NSTATE };

static const dg_key KEYS[] = {
    {.name = "env.track", .type = DG_KEY_F32_ROWS, .offset = offsetof(racing, ctrl), .count_offset = offsetof(racing, nctrl),
     .cols = 2, .min_n = 3, .max_n = MAX_CTRL,
     .def_v = (const double[]){0.0, -0.65, 0.6, -0.6, 0.85, -0.15, 0.7, 0.4, 0.3, 0.6, -0.1, 0.45, -0.45, 0.65, -0.8, 0.35,
                               -0.8, -0.2, -0.5, -0.6},
     .def_n = 10, .doc = "points [x, y] of the closed centre line, in driving order"},
    DG_K_BOOL("env.spline", racing, spline, 1, "the centre line is a periodic quintic spline through the points (else the polyline)"),
    DG_K_INT("env.resolution", racing, res, 16, 2, MAX_RES, "samples per piece (arc-length table, nearest-point search, replays)"),
    DG_K_F32("env.width", racing, width, 0.1f, 0, 10, 0, 1, "half width of the track"),
    DG_K_F32("env.edge_softness", racing, softness, 0.03f, 0, 1, 0, 1,
             "the off-track penalty's smooth relu: softness·softplus((|d| - width)/softness)"),
    DG_K_F32("env.wheelbase", racing, wheelbase, 0.1f, 0, 10, 0, 1, "wheelbase L of the bicycle"),
    DG_K_F32("env.max_steer", racing, max_steer, 0.5f, 0, 1.5f, 0, 1, "steering angle limit, radians (action[0] = ±1)"),
    DG__KEY_ACCEL("env.accel", racing, accel, 3.0f, "action[1] = 1 -> acceleration"),
    DG_K_F32("env.drag", racing, drag, 1.0f, 0, DG_MAX_MAGNITUDE, 1, 1, "speed lost per second per unit of speed (top speed accel/drag)"),
    DG_K_F32("env.start_speed", racing, start_speed, 0.5f, 0, DG_MAX_MAGNITUDE, 1, 1, "initial speed"),
    DG_K_F32("env.start_offset", racing, start_offset, 0.05f, 0, 10, 1, 1, "initial distance from the centre line ~ U(-o, o)"),
    DG_K_BOOL("env.random_start", racing, random_start, 1, "start anywhere along the track (else at the first point)"),
    DG_K_INT("env.lookahead", racing, nlook, 4, 1, MAX_LOOK, "centre-line points the car sees ahead"),
    DG_K_F32("env.lookahead_gap", racing, look_gap, 0.2f, 0, 10, 0, 1, "arc length between them"),
};

static const dg_loss_term LOSS[] = {
    {"loss.advance", 1.0f, NULL, 0, "-mean_b of the arc length gained along the centre line this step"},
    {"loss.bounds", 100.0f, NULL, 0, "mean_b srelu(|d| - width)^2, d the signed distance to the centre line"},
    {"loss.energy", 0.001f, NULL, 0, "mean_b |a|^2"},
};

/* ------------------------------------------------------------ the track */

/* the cardinal B-splines of degrees 0..5 at t + i, t in [0, 1): b[k][i] = B_k(t + i) for i = 0..k
 * (zero elsewhere), by B_k(x) = (x B_{k-1}(x) + (k + 1 - x) B_{k-1}(x - 1)) / k */
static void bsplines(double t, double b[6][7]) {
    memset(b, 0, 6 * 7 * sizeof(double));
    b[0][0] = 1;
    for (int k = 1; k <= 5; k++)
        for (int i = 0; i <= k; i++) {
            const double x = t + i;
            b[k][i] = (x * b[k - 1][i] + (k + 1 - x) * (i > 0 ? b[k - 1][i - 1] : 0.0)) / k;
        }
}

/* C(σ), C'(σ), C''(σ) (any may be NULL); σ taken modulo n. The spline: Σ_j D_j B5(σ - j + 3);
 * B5' (x) = B4(x) - B4(x - 1), B5''(x) = B3(x) - 2 B3(x - 1) + B3(x - 2). */
static void curve(const racing *r, double sg, double *c, double *d1, double *d2) {
    const int n = r->nctrl;
    sg -= n * floor(sg / n);
    const double f = floor(sg), t = sg - f;
    const int i = (int)f % n;
    double cc[2] = {0, 0}, c1[2] = {0, 0}, c2[2] = {0, 0};
    if (!r->spline) {
        const int j = (i + 1) % n;
        for (int k = 0; k < 2; k++) {
            cc[k] = (1 - t) * r->ctrl[i][k] + t * r->ctrl[j][k];
            c1[k] = r->ctrl[j][k] - r->ctrl[i][k];
        }
    } else {
        double bs[6][7];
        bsplines(t, bs);
#define B_AT(k, ix) ((ix) >= 0 && (ix) <= (k) ? bs[k][ix] : 0.0)
        for (int o = -2; o <= 3; o++) {
            const int ix = 3 - o;  /* σ - j + 3 = t + ix with j = i + o */
            const double w = B_AT(5, ix), w1 = B_AT(4, ix) - B_AT(4, ix - 1),
                         w2 = B_AT(3, ix) - 2 * B_AT(3, ix - 1) + B_AT(3, ix - 2);
            const double *dj = r->D[((i + o) % n + n) % n];
            for (int k = 0; k < 2; k++) {
                cc[k] += w * dj[k];
                c1[k] += w1 * dj[k];
                c2[k] += w2 * dj[k];
            }
        }
#undef B_AT
    }
    for (int k = 0; k < 2; k++) {
        if (c) c[k] = cc[k];
        if (d1) d1[k] = c1[k];
        if (d2) d2[k] = c2[k];
    }
}

static double speed_at(const racing *r, double sg) {
    double d[2];
    curve(r, sg, NULL, d, NULL);
    return hypot(d[0], d[1]);
}

/* arc length from σ = 0 to σ in [0, n] (the table, then Simpson's rule on the rest) */
static double arc(const racing *r, double sg) {
    int j = (int)floor(sg * r->res);
    if (j < 0) j = 0;
    if (j > r->m - 1) j = r->m - 1;
    const double a = (double)j / r->res;
    return r->A[j] + (sg - a) / 6 * (speed_at(r, a) + 4 * speed_at(r, 0.5 * (a + sg)) + speed_at(r, sg));
}

/* σ in [0, n) whose arc length is s (taken modulo the lap) */
static double sigma_at(const racing *r, double s) {
    const double L = r->A[r->m];
    s -= L * floor(s / L);
    int lo = 0, hi = r->m - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (r->A[mid] <= s) lo = mid;
        else hi = mid - 1;
    }
    double sg = (double)lo / r->res;
    for (int it = 0; it < 6; it++) {  /* Newton on A(σ) = s within the sample (quadratic: a few suffice) */
        const double step = (arc(r, sg) - s) / speed_at(r, sg);
        sg -= step;
        if (sg < (double)lo / r->res) sg = (double)lo / r->res;
        if (sg > (double)(lo + 1) / r->res) sg = (double)(lo + 1) / r->res;
        if (fabs(step) < 1e-13) break;
    }
    return sg;
}

/* the σ of the point of the centre line nearest to (x, y): the nearest sample, then Newton on
 * |C(σ) - p|² within the samples next to it; *pinned is 1 when it stops at a polyline's corner
 * (where s does not move with p) */
static double nearest(const racing *r, double x, double y, int *pinned) {
    int best = 0;
    double bd = INFINITY;
    for (int j = 0; j < r->m; j++) {
        const double d = (r->Q[j][0] - x) * (r->Q[j][0] - x) + (r->Q[j][1] - y) * (r->Q[j][1] - y);
        if (d < bd) {
            bd = d;
            best = j;
        }
    }
    const double lo = (best - 1.0) / r->res, hi = (best + 1.0) / r->res;
    double sg = (double)best / r->res;
    *pinned = 0;
    for (int it = 0; it < 12; it++) {
        double c[2], d1[2], d2[2];
        curve(r, sg, c, d1, d2);
        const double g = (c[0] - x) * d1[0] + (c[1] - y) * d1[1];
        double h = d1[0] * d1[0] + d1[1] * d1[1] + (c[0] - x) * d2[0] + (c[1] - y) * d2[1];
        if (!(h > 1e-9)) h = 1e-9;
        double next = sg - g / h;
        /* a polyline's corner: the pieces meet at whole σ; stay on this side of it */
        if (!r->spline) {
            const double f = floor(sg + 1e-12);
            if (next < f) next = f, *pinned = 1;
            else if (next > f + 1) next = f + 1, *pinned = 1;
            else *pinned = 0;
        }
        next = next < lo ? lo : next > hi ? hi : next;
        if (fabs(next - sg) < 1e-12) break;
        sg = next;
    }
    const double n = r->nctrl;
    return sg - n * floor(sg / n);
}

/* the de Boor points of the periodic quintic spline through the points (Σ_j B5(i - j + 3) D_j = P_i:
 * weights 1/120, 26/120, 66/120, 26/120, 1/120, strictly diagonally dominant, so Gauss-Seidel
 * converges), the arc-length table and the edges */
static void build_track(racing *r) {
    const int n = r->nctrl;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 2; k++) r->D[i][k] = r->ctrl[i][k];
    if (r->spline)
        for (int it = 0; it < 400; it++)
            for (int i = 0; i < n; i++)
                for (int k = 0; k < 2; k++) {
                    const double *a = r->D[(i + n - 1) % n], *b = r->D[(i + 1) % n], *a2 = r->D[(i + n - 2) % n],
                                 *b2 = r->D[(i + 2) % n];
                    r->D[i][k] = (120.0 * r->ctrl[i][k] - 26.0 * (a[k] + b[k]) - (a2[k] + b2[k])) / 66.0;
                }
    r->m = n * r->res;
    for (int j = 0; j < r->m; j++) {
        double c[2];
        curve(r, (double)j / r->res, c, NULL, NULL);
        r->Q[j][0] = (dg_real)c[0];
        r->Q[j][1] = (dg_real)c[1];
    }
    r->A[0] = 0;
    for (int j = 0; j < r->m; j++) {
        const double a = (double)j / r->res, b = (double)(j + 1) / r->res;
        r->A[j + 1] = r->A[j] + (b - a) / 6 * (speed_at(r, a) + 4 * speed_at(r, 0.5 * (a + b)) + speed_at(r, b));
    }
    for (int j = 0; j < r->m; j++)
        for (int side = 0; side < 2; side++)
            for (int e = 0; e < 2; e++) {
                double c[2], d[2];
                curve(r, (double)((j + e) % r->m) / r->res, c, d, NULL);
                const double l = hypot(d[0], d[1]), w = side ? -r->width : r->width;
                r->lines[2 * j + side][2 * e] = (dg_real)(c[0] - w * d[1] / l);
                r->lines[2 * j + side][2 * e + 1] = (dg_real)(c[1] + w * d[0] / l);
            }
}

/* signed distance (left of the driving direction positive) and arc length of (x, y) */
static double dist_arc(const racing *r, double x, double y, double *s) {
    int pinned;
    const double sg = nearest(r, x, y, &pinned);
    double c[2], d[2];
    curve(r, sg, c, d, NULL);
    const double l = hypot(d[0], d[1]);
    if (s) *s = arc(r, sg);
    return (-(x - c[0]) * d[1] + (y - c[1]) * d[0]) / l;
}

/* The projection of positions p (B, 2) on the centre line, on the tape: arc length s (B, 1) and
 * signed distance d (B, 1) as linear functions of p with the projection's value and gradient,
 * s = (p - p̄)·G + s̄, d = (p - p̄)·N + d̄ (p̄ p's value, a constant: p - p̄ is exactly 0 but carries
 * the gradient), G = |C'| C' / (|C'|² - (p - C)·C''), N the unit left normal. With prev (the
 * previous arc length, (B, 1)), ds (if not NULL) gets the arc length gained, across the start line
 * too, as (p - p̄)·G + (s̄ - prev̄ + wrap) - (prev - prev̄): the difference taken in double, not
 * between two float32 arc lengths of up to a lap (whose rounding would be all of a step's gain). */
static void project(dg_ctx *ctx, const racing *r, dg_tensor *p, dg_tensor *prev, dg_tensor **s, dg_tensor **d,
                    dg_tensor **ds) {
    const int B = p ? p->shape[0] : 0;
    const double L = r->A[r->m];
    dg_tensor *p0 = dg_new_2d(ctx, B, 2), *G = dg_new_2d(ctx, B, 2), *N = dg_new_2d(ctx, B, 2);
    dg_tensor *sv = dg_new_2d(ctx, B, 1), *dv = dg_new_2d(ctx, B, 1), *dsv = dg_new_2d(ctx, B, 1);
    dg_tensor *pv = prev ? dg_new_2d(ctx, B, 1) : NULL;
    if (s) *s = NULL;
    if (d) *d = NULL;
    if (ds) *ds = NULL;
    if (!p || !p0 || !G || !N || !sv || !dv || !dsv || (prev && !pv)) return;
    for (int b = 0; b < B; b++) {
        const double x = p->data[2 * b], y = p->data[2 * b + 1];
        int pinned;
        const double sg = nearest(r, x, y, &pinned);
        double c[2], d1[2], d2[2];
        curve(r, sg, c, d1, d2);
        const double sp = hypot(d1[0], d1[1]), den = sp * sp - ((x - c[0]) * d2[0] + (y - c[1]) * d2[1]);
        const double k = pinned || !(den > 1e-9) ? 0.0 : sp / den, a = arc(r, sg);
        const double nx = -d1[1] / sp, ny = d1[0] / sp;
        p0->data[2 * b] = p->data[2 * b];
        p0->data[2 * b + 1] = p->data[2 * b + 1];
        G->data[2 * b] = (dg_real)(k * d1[0]);
        G->data[2 * b + 1] = (dg_real)(k * d1[1]);
        N->data[2 * b] = (dg_real)nx;
        N->data[2 * b + 1] = (dg_real)ny;
        sv->data[b] = (dg_real)a;
        dv->data[b] = (dg_real)((x - c[0]) * nx + (y - c[1]) * ny);
        if (prev) {
            const double g = a - prev->data[b];
            pv->data[b] = prev->data[b];
            dsv->data[b] = (dg_real)(g + L * round(-g / L));  /* across the start line: a lap back */
        }
    }
    dg_tensor *q = dg_sub(ctx, p, p0);
    dg_tensor *qg = dg_sum_axis(ctx, dg_mul(ctx, q, G), 1);
    if (s) *s = dg_add(ctx, qg, sv);
    if (d) *d = dg_add(ctx, dg_sum_axis(ctx, dg_mul(ctx, q, N), 1), dv);
    if (ds && prev) *ds = dg_sub(ctx, dg_add(ctx, qg, dsv), dg_sub(ctx, prev, pv));
}

/* ------------------------------------------------------------ hooks */

static dg_status racing_create(dg_env *env, dg_cfg *cfg, dg_err *e) {
    racing *r = env->impl;
    for (int i = 0; i < r->nctrl; i++) {
        const float *a = r->ctrl[i], *b = r->ctrl[(i + 1) % r->nctrl];
        if (!(hypot((dg_real)(b[0] - a[0]), (dg_real)(b[1] - a[1])) > 1e-4f))
            return dg_cfg_error(cfg, "env.track", e, "points %d and %d coincide", i, (i + 1) % r->nctrl);
    }
    build_track(r);
    const double L = r->A[r->m];
    for (int j = 0; j < r->m; j++)
        if (!(speed_at(r, (double)j / r->res) > 1e-6))
            return dg_cfg_error(cfg, "env.track", e, "the spline through these points stops (a cusp near point %d)",
                                j / r->res);
    /* the projection on the centre line is unique within its smallest radius of curvature: the
     * track must be narrower */
    double rmin = INFINITY;
    int at = 0;
    for (int j = 0; j < r->m && r->spline; j++) {
        double d1[2], d2[2];
        curve(r, (double)j / r->res, NULL, d1, d2);
        const double sp = hypot(d1[0], d1[1]), k = fabs(d1[0] * d2[1] - d1[1] * d2[0]) / (sp * sp * sp);
        if (k > 0 && 1 / k < rmin) {
            rmin = 1 / k;
            at = j;
        }
    }
    r->rmin = rmin;
    if (!(r->width < rmin))
        return dg_cfg_error(cfg, "env.width", e, "%g is not below the centre line's smallest radius of curvature, %.3g "
                            "(after point %d): the track would overlap itself there", r->width, rmin, at / r->res);
    if (!(L > 4 * r->width)) return dg_cfg_error(cfg, "env.width", e, "the track (length %g) is too short for its width", L);
    if (r->start_offset >= r->width)
        return dg_cfg_error(cfg, "env.start_offset", e, "must be below env.width (%g): the car starts on the track",
                            r->width);
    env->state_dim = NSTATE;
    /* the value state: the car (x, y, heading, speed) and its arc length s, which the next step's ds
     * is measured from; the progress so far and the last step's ds enter neither the step nor the
     * costs (the step recomputes ds from s), so the value does not depend on them */
    static const int VALUE_COLS[] = {C_X, C_Y, C_HX, C_HY, C_V, C_S};
    env->value_dim = (int)(sizeof VALUE_COLS / sizeof VALUE_COLS[0]);
    for (int k = 0; k < env->value_dim; k++) {
        env->value_plus[k] = VALUE_COLS[k];
        env->value_minus[k] = -1;
    }
    env->obs_dim = 2 + 2 * r->nlook;
    env->act_dim = 2;  /* [steering, throttle] */
    env->nmetrics = 2;
    env->metric_names[0] = "progress";
    env->metric_names[1] = "off_track";
    env->violation_label = "off the track";
    env->nlines = 2 * r->m;
    env->gradcheck_eps = 0.01f;  /* the track is 2 · width wide: a step of 0.1 crosses it */
    env->lines = &r->lines[0][0];
    return DG_OK;
}

static dg_status racing_reset(const dg_env *env, dg_rng *rng, int B, dg_real *state, dg_real *aux, dg_err *e) {
    const racing *r = env->impl;
    (void)aux;
    (void)e;
    for (int b = 0; b < B; b++) {
        dg_real *st = state + (size_t)b * NSTATE;
        const double s0 = r->random_start ? dg_rng_uniform(rng, 0.0f, (dg_real)r->A[r->m]) : 0.0;
        const dg_real off = r->start_offset > 0 ? dg_rng_uniform(rng, -r->start_offset, r->start_offset) : 0.0f;
        double c[2], d[2], s;
        curve(r, sigma_at(r, s0), c, d, NULL);
        const double l = hypot(d[0], d[1]);
        st[C_X] = (dg_real)(c[0] - off * d[1] / l);
        st[C_Y] = (dg_real)(c[1] + off * d[0] / l);
        st[C_HX] = (dg_real)(d[0] / l);
        st[C_HY] = (dg_real)(d[1] / l);
        st[C_V] = r->start_speed;
        dist_arc(r, st[C_X], st[C_Y], &s);  /* the car's own projection, as the step computes it */
        st[C_S] = (dg_real)s;
        st[C_PROG] = 0;
        st[C_DS] = 0;
    }
    return DG_OK;
}

/* [v, d, then for each look-ahead point c_j = centre(s + j·gap) - p in the car's frame: (c·h, c·h_perp)] */
static dg_tensor *racing_observe(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux) {
    const racing *r = env->impl;
    const int B = state->shape[0];
    dg_tensor *p = dg_cols(ctx, state, C_X, 2), *hx = dg_cols(ctx, state, C_HX, 1), *hy = dg_cols(ctx, state, C_HY, 1);
    dg_tensor *s = dg_cols(ctx, state, C_S, 1), *d;
    project(ctx, r, p, NULL, NULL, &d, NULL);
    dg_tensor *parts[2 + MAX_LOOK];
    parts[0] = dg_cols(ctx, state, C_V, 1);
    parts[1] = d;
    for (int j = 1; j <= r->nlook; j++) {
        dg_tensor *sj = dg_add_scalar(ctx, s, j * r->look_gap);
        dg_tensor *a = dg_new_2d(ctx, B, 2), *t = dg_new_2d(ctx, B, 2), *s0 = dg_new_2d(ctx, B, 1);
        if (!sj || !a || !t || !s0) return NULL;
        for (int b = 0; b < B; b++) {  /* the centre point at arc length sj: C* + T*·(sj - its value) */
            double c[2], tg[2];
            curve(r, sigma_at(r, sj->data[b]), c, tg, NULL);
            const double l = hypot(tg[0], tg[1]);
            t->data[2 * b] = (dg_real)(tg[0] / l);
            t->data[2 * b + 1] = (dg_real)(tg[1] / l);
            a->data[2 * b] = (dg_real)c[0];
            a->data[2 * b + 1] = (dg_real)c[1];
            s0->data[b] = sj->data[b];
        }
        /* c = C* + (sj - sj's value)·T* - p */
        dg_tensor *c = dg_sub(ctx, dg_add(ctx, a, dg_mul(ctx, dg_sub(ctx, sj, s0), t)), p);
        dg_tensor *cx = dg_cols(ctx, c, 0, 1), *cy = dg_cols(ctx, c, 1, 1);
        dg_tensor *fwd = dg_add(ctx, dg_mul(ctx, cx, hx), dg_mul(ctx, cy, hy));
        dg_tensor *left = dg_sub(ctx, dg_mul(ctx, cy, hx), dg_mul(ctx, cx, hy));
        parts[1 + j] = dg_concat(ctx, (dg_tensor *[]){fwd, left}, 2, 1);
    }
    return dg_concat(ctx, parts, 2 + r->nlook, 1);
}

/* Kinematic bicycle (rear axle): curvature k = tan(max_steer)·a0 / L (the steering angle
 * atan(a0·tan(max_steer)) within ±max_steer); the heading h (a unit vector) turns by atan(v k dt):
 * h' = normalize(h + v k dt · h_perp); v' = srelu(v + (accel·a1 - drag·v) dt); p' = p + v' h' dt;
 * then the arc length gained along the centre line, across the start line too. */
static dg_tensor *racing_step(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux, dg_tensor *action) {
    const racing *r = env->impl;
    const dg_real dt = env->dt;
    dg_tensor *p = dg_cols(ctx, state, C_X, 2), *hx = dg_cols(ctx, state, C_HX, 1), *hy = dg_cols(ctx, state, C_HY, 1);
    dg_tensor *v = dg_cols(ctx, state, C_V, 1), *s = dg_cols(ctx, state, C_S, 1);
    dg_tensor *turn = dg_mul(ctx, v, dg_scale(ctx, dg_cols(ctx, action, 0, 1), tan((dg_real)r->max_steer) / r->wheelbase * dt));
    dg_tensor *nx = dg_sub(ctx, hx, dg_mul(ctx, turn, hy)), *ny = dg_add(ctx, hy, dg_mul(ctx, turn, hx));
    dg_tensor *nl = dg_sqrt(ctx, dg_add(ctx, dg_square(ctx, nx), dg_square(ctx, ny)));
    nx = dg_div(ctx, nx, nl);
    ny = dg_div(ctx, ny, nl);
    dg_tensor *acc = dg_sub(ctx, dg_scale(ctx, dg_cols(ctx, action, 1, 1), r->accel), dg_scale(ctx, v, r->drag));
    /* the speed stays >= 0 through a smooth relu (0.01·softplus(x/0.01): no kink where the car stops) */
    dg_tensor *v2 = dg_scale(ctx, dg_softplus(ctx, dg_scale(ctx, dg_add(ctx, v, dg_scale(ctx, acc, dt)), 100.0f)), 0.01f);
    dg_tensor *h2 = dg_concat(ctx, (dg_tensor *[]){nx, ny}, 2, 1);
    dg_tensor *p2 = dg_add(ctx, p, dg_mul(ctx, dg_scale(ctx, v2, dt), h2));
    dg_tensor *s2, *ds;
    project(ctx, r, p2, s, &s2, NULL, &ds);
    if (!s2 || !ds) return NULL;
    dg_tensor *prog = dg_add(ctx, dg_cols(ctx, state, C_PROG, 1), ds);
    return dg_concat(ctx, (dg_tensor *[]){p2, h2, v2, s2, prog, ds}, 6, 1);
}

/* per row: advance -ds; bounds sr(d - w)² + sr(-d - w)², sr(x) = softness·softplus(x/softness) a
 * smooth relu; energy |a|² */
static void racing_step_cost_rows(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux, dg_tensor *action,
                                  dg_tensor **rows) {
    const racing *r = env->impl;
    dg_tensor *d;
    project(ctx, r, dg_cols(ctx, next, C_X, 2), NULL, NULL, &d, NULL);
    if (!d) return;
    rows[0] = dg_neg(ctx, dg_cols(ctx, next, C_DS, 1));
    /* a smooth relu: softness·softplus((x - w) / softness), the same outside by more than a few
     * softness, and no kink at the edge */
    const dg_real k = 1.0f / r->softness;
    dg_tensor *o1 = dg_scale(ctx, dg_softplus(ctx, dg_scale(ctx, dg_add_scalar(ctx, d, -r->width), k)), r->softness);
    dg_tensor *o2 = dg_scale(ctx, dg_softplus(ctx, dg_scale(ctx, dg_add_scalar(ctx, dg_neg(ctx, d), -r->width), k)),
                             r->softness);
    rows[1] = dg_add(ctx, dg_square(ctx, o1), dg_square(ctx, o2));
    rows[2] = dg_square(ctx, action);
}

static unsigned racing_violation(const dg_env *env, const dg_real *s, const dg_real *aux) {
    const racing *r = env->impl;
    return fabs(dist_arc(r, s[C_X], s[C_Y], NULL)) > r->width ? 1u : 0u;
}

/* progress: mean over episodes of the laps gained (arc length / lap length); off_track: the
 * fraction of steps 1..H, over all episodes, with the car outside the track */
static void racing_metrics(const dg_env *env, const dg_real *traj, const dg_real *aux, int B, int H, double *values) {
    const racing *r = env->impl;
    double prog = 0;
    int64_t off = 0;
    for (int b = 0; b < B; b++) {
        prog += traj[((int64_t)H * B + b) * NSTATE + C_PROG] / r->A[r->m];
        for (int t = 1; t <= H; t++) off += racing_violation(env, traj + ((int64_t)t * B + b) * NSTATE, NULL);
    }
    values[0] = B > 0 ? prog / B : NAN;
    values[1] = B > 0 && H > 0 ? (double)off / ((double)B * H) : NAN;
}

/* the car */
static int racing_bodies(const dg_env *env, const dg_real *s, const dg_real *aux, dg_real *xy, int *is_goal) {
    xy[0] = s[C_X];
    xy[1] = s[C_Y];
    is_goal[0] = 0;
    return 1;
}

const dg_game dg_game_racing = {
    .name = "racing",
    .summary = "a kinematic bicycle laps a closed track: progress along it, a soft penalty off it "
               "(docs/games/racing.md)",
    .dt = 0.05f,
    .horizon = 100,
    DG_GAME_DECLARE(KEYS, racing, LOSS),
    .create = racing_create,
    .reset = racing_reset,
    .observe = racing_observe,
    .step = racing_step,
    .step_cost = dg_env_step_cost_from_rows,
    .step_cost_rows = racing_step_cost_rows,
    .metrics = racing_metrics,
    .bodies = racing_bodies,
    .violation = racing_violation,
};
