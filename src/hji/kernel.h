/* The grid solver's kernels, written once for a real type. solve.c includes this file twice:
 *   REAL double, SFX f64, RABS fabs,  RSQRT sqrt
 *   REAL float,  SFX f32, RABS fabsf, RSQRT sqrtf
 * Sections: types, derivative kernels, stencils and ghost cells, rows, Hamiltonians, passes over
 * the grid, setup, the solve, gradients, interpolation.
 *
 * Work is organised by rows: a row is the line of nodes along the last (contiguous) axis, so
 * every inner loop runs over contiguous memory and vectorises. A row's neighbours along a slower
 * axis k are the rows +-j stride[k] away (wrapped, or extrapolated into per-thread ghost rows at
 * the edges); along the last axis the row is copied into a padded buffer with its ghost cells.
 * Rows are split between OpenMP threads statically; each node is computed by exactly one thread
 * the same way whatever the thread count, so results do not depend on it. */

#define HJI_CAT2(a, b) a##_##b
#define HJI_CAT(a, b) HJI_CAT2(a, b)
#define F(name) HJI_CAT(name, SFX)

/* ------------------------------------------------------------------- types */

typedef struct F(coef) {   /* one tabulated entry of f, G or D */
    int   kind;            /* HJI_ZERO, HJI_CONST, HJI_AXIS, HJI_FULL */
    int   axis;            /* HJI_AXIS: the axis it varies along */
    REAL  c;               /* HJI_CONST: the value */
    REAL *tab;             /* HJI_AXIS: (n[axis]); HJI_FULL: (nodes) */
} F(coef);

typedef struct F(tws) {    /* one thread's workspace, allocated once per solve; cache-line aligned so
                              that one thread's row index never shares a line with another's */
    _Alignas(64) REAL *pad;          /* (gw + nlp + gw) the fast-axis row with its ghost cells */
    REAL   *ghost;         /* (nd, 2 gw, nlp) ghost rows of the slower axes */
    REAL   *pl, *pr;       /* (nd, nlp) p- and p+; then (p+ + p-)/2 and (p+ - p-)/2 */
    REAL   *rhs;           /* (nlp) d phi / d tau of the row */
    REAL   *alpha;         /* (nd, nlp) per-node dissipation */
    REAL   *tmp;           /* (3, nlp) scratch */
    double *xd, *pd, *ad, *qmin, *qmax;  /* generic Hamiltonian: (nd, nlp) each */
    double *hd;            /* (nlp) */
    double  red[2 * DG_HJI_MAX_DIMS + 2];  /* reductions of a pass */
    int     bad;           /* a non-finite value was written */
    int     idx[DG_HJI_MAX_DIMS];          /* the current row's multi-index (axes 0 .. nd-2) */
    void   *block;         /* the one allocation behind all of the above */
} F(tws);

typedef struct F(solver) {
    const dg_hji_grid *g;
    const dg_hji_game *gm;
    dg_hji_opts o;
    int      nd, nl, nlp, gw, nthreads, affine, nu, ndd, ncoef;
    int      nv;                        /* nodes a row's vector loops run over: nlp when the
                                           arrays are padded (no scalar tails), else nl */
    int64_t  rows, nodes;
    F(coef) *coef;                      /* (ncoef): f (nx), G (nx, nu), D (nx, nd) row-major */
    REAL    *tabs;                      /* storage of the AXIS and FULL tables */
    double  *xlast;                     /* (nl) coordinates along the fast axis */
    double   alpha_max[DG_HJI_MAX_DIMS];/* static alpha: max over the grid per axis */
    double   bound;                     /* static alpha: sum_i max over the grid of alpha_i/dx_i */
    /* static alpha, tabulated once: HJI_A_ROW one value a row (arow (rows)), HJI_A_LINE the same
     * line in every row (aline (nlp)), HJI_A_FULL every node (afull (nodes + 16)), or
     * HJI_A_COMPUTE recomputed per row (when a full table would not fit the memory budget) */
    int      akind[DG_HJI_MAX_DIMS];
    REAL    *arow[DG_HJI_MAX_DIMS], *aline[DG_HJI_MAX_DIMS], *afull[DG_HJI_MAX_DIMS];
    REAL    *atabs;                     /* storage of arow and aline */
    REAL    *afulls;                    /* storage of afull */
    REAL     wsc[DG_HJI_MAX_DIMS];      /* WENO: 1 / max over the grid of d^2 (undivided) */
    REAL     weps[DG_HJI_MAX_DIMS];     /* WENO: epsilon in those normalised units */
    double   pmin[DG_HJI_MAX_DIMS], pmax[DG_HJI_MAX_DIMS]; /* generic: p range of the stage */
    F(tws)  *tw;                        /* (nthreads) */
} F(solver);

/* One stage of a Runge-Kutta step: out = a u0 + b (src + dt rhs(src)), then, on the last stage,
 * the tube / target / obstacle rules. dt <= 0: not known yet, out = rhs(src). */
typedef struct F(stage) {
    const REAL *src, *u0;
    REAL       *out;
    REAL        a, b;
    double      dt, t;
    int         finish;
    const REAL *v0, *obst;
} F(stage);

/* --------------------------------------------------------- derivative kernels */
/* Each takes the 2 gw + 1 rows P[0 .. 2gw] (P[gw] is the row itself), n nodes, h = 1/dx, and
 * writes the left and right derivatives. Undivided differences d_j = phi_{i+j+1} - phi_{i+j}. */

static void F(d_up1)(const REAL *const *P, int n, REAL h, REAL *restrict pl, REAL *restrict pr) {
    const REAL *p0 = P[0], *p1 = P[1], *p2 = P[2];
    for (int i = 0; i < n; i++) {
        pl[i] = (p1[i] - p0[i]) * h;
        pr[i] = (p2[i] - p1[i]) * h;
    }
}

/* O&F 3.3: first difference plus the smaller (in magnitude) second difference times dx/2. */
static void F(d_eno2)(const REAL *const *P, int n, REAL h, REAL *restrict pl, REAL *restrict pr) {
    const REAL *p0 = P[0], *p1 = P[1], *p2 = P[2], *p3 = P[3], *p4 = P[4];
    for (int i = 0; i < n; i++) {
        const REAL dm2 = p1[i] - p0[i], dm1 = p2[i] - p1[i], d0 = p3[i] - p2[i], d1 = p4[i] - p3[i];
        const REAL em = dm1 - dm2, e0 = d0 - dm1, ep = d1 - d0;
        const REAL sl = RABS(em) <= RABS(e0) ? em : e0;
        const REAL sr = RABS(e0) <= RABS(ep) ? e0 : ep;
        pl[i] = (dm1 + (REAL)0.5 * sl) * h;
        pr[i] = (d0 - (REAL)0.5 * sr) * h;
    }
}

/* O&F 3.3, third order: the ENO stencil is grown twice, each time towards the smaller divided
 * difference. With e_j the undivided second and g the undivided third differences,
 * phi_x = (d_k + e (2(i-k)-1)/2 + g (3m^2 - 6m + 2)/6) / dx, m = i - k*. */
static void F(d_eno3)(const REAL *const *P, int n, REAL h, REAL *restrict pl, REAL *restrict pr) {
    const REAL *p0 = P[0], *p1 = P[1], *p2 = P[2], *p3 = P[3], *p4 = P[4], *p5 = P[5], *p6 = P[6];
    const REAL third = (REAL)(1.0 / 3.0), sixth = (REAL)(1.0 / 6.0);
    for (int i = 0; i < n; i++) {
        const REAL dm3 = p1[i] - p0[i], dm2 = p2[i] - p1[i], dm1 = p3[i] - p2[i];
        const REAL d0 = p4[i] - p3[i], d1 = p5[i] - p4[i], d2 = p6[i] - p5[i];
        const REAL em2 = dm2 - dm3, em1 = dm1 - dm2, e0 = d0 - dm1, e1 = d1 - d0, e2 = d2 - d1;
        const REAL gm = em1 - em2, g0 = e0 - em1, g1 = e1 - e0, g2 = e2 - e1;
        /* left: k = i-1 */
        const int  lsm = RABS(em1) <= RABS(e0);
        const REAL la = RABS(gm) <= RABS(g0) ? gm : g0;   /* k* = i-2 */
        const REAL lb = RABS(g0) <= RABS(g1) ? g0 : g1;   /* k* = i-1 */
        const REAL lq = lsm ? (REAL)0.5 * em1 + third * la : (REAL)0.5 * e0 - sixth * lb;
        pl[i] = (dm1 + lq) * h;
        /* right: k = i */
        const int  rsm = RABS(e0) <= RABS(e1);
        const REAL ra = RABS(g0) <= RABS(g1) ? g0 : g1;   /* k* = i-1 */
        const REAL rb = RABS(g1) <= RABS(g2) ? g1 : g2;   /* k* = i */
        const REAL rq = rsm ? -(REAL)0.5 * e0 - sixth * ra : -(REAL)0.5 * e1 + third * rb;
        pr[i] = (d0 + rq) * h;
    }
}

/* Jiang-Peng WENO5 (O&F 3.4) from the five differences v1..v5: the numerator N and denominator
 * D of sum_k w_k q_k / sum_k w_k. sc scales the smoothness indicators S_k to O(1) (1/max d^2 over
 * the grid) and eps is in those units, so with a_k = (S_k sc + eps)^2 in [1e-12, ~1e12] the
 * weights w_k = c_k / a_k can be multiplied through by a1 a2 a3 without leaving float32's range;
 * the ideal weights c = (0.1, 0.6, 0.3) are folded into the three ENO candidates q_k. */
static inline void F(weno)(REAL v1, REAL v2, REAL v3, REAL v4, REAL v5, REAL sc, REAL eps, REAL *num,
                           REAL *den) {
    const REAL q1 = (REAL)(0.1 / 3.0) * v1 - (REAL)(0.7 / 6.0) * v2 + (REAL)(1.1 / 6.0) * v3;
    const REAL q2 = -(REAL)(0.1) * v2 + (REAL)(0.5) * v3 + (REAL)(0.2) * v4;
    const REAL q3 = (REAL)(0.1) * v3 + (REAL)(0.25) * v4 - (REAL)(0.05) * v5;
    const REAL t1 = v1 - 2 * v2 + v3, u1 = v1 - 4 * v2 + 3 * v3;
    const REAL t2 = v2 - 2 * v3 + v4, u2 = v2 - v4;
    const REAL t3 = v3 - 2 * v4 + v5, u3 = 3 * v3 - 4 * v4 + v5;
    const REAL s1 = ((REAL)(13.0 / 12.0) * t1 * t1 + (REAL)0.25 * u1 * u1) * sc + eps;
    const REAL s2 = ((REAL)(13.0 / 12.0) * t2 * t2 + (REAL)0.25 * u2 * u2) * sc + eps;
    const REAL s3 = ((REAL)(13.0 / 12.0) * t3 * t3 + (REAL)0.25 * u3 * u3) * sc + eps;
    const REAL a1 = s1 * s1, a2 = s2 * s2, a3 = s3 * s3;
    const REAL p23 = a2 * a3;
    /* w1 = 0.1 a2 a3, w2 = 0.6 a1 a3, w3 = 0.3 a1 a2 */
    *num = p23 * q1 + a1 * (a3 * q2 + a2 * q3);
    *den = (REAL)0.1 * p23 + a1 * ((REAL)0.6 * a3 + (REAL)0.3 * a2);
}

static void F(d_weno5)(const REAL *const *P, int n, REAL h, REAL sc, REAL eps, REAL *restrict pl,
                       REAL *restrict pr) {
    const REAL *p0 = P[0], *p1 = P[1], *p2 = P[2], *p3 = P[3], *p4 = P[4], *p5 = P[5], *p6 = P[6];
    for (int i = 0; i < n; i++) {
        const REAL dm3 = p1[i] - p0[i], dm2 = p2[i] - p1[i], dm1 = p3[i] - p2[i];
        const REAL d0 = p4[i] - p3[i], d1 = p5[i] - p4[i], d2 = p6[i] - p5[i];
        REAL nl, dl, nr, dr;
        F(weno)(dm3, dm2, dm1, d0, d1, sc, eps, &nl, &dl);
        F(weno)(d2, d1, d0, dm1, dm2, sc, eps, &nr, &dr);
#if HJI_PAIR_DIV
        /* one division for both sides: dl dr stays well inside double's range */
        const REAL r = h / (dl * dr);
        pl[i] = nl * dr * r;
        pr[i] = nr * dl * r;
#else
        pl[i] = nl / dl * h;
        pr[i] = nr / dr * h;
#endif
    }
}

/* ---------------------------------------------------- stencils and ghost cells */

/* The ghost value m cells beyond an edge whose node is b0 and inner neighbour b1. */
static inline REAL F(extrap)(REAL b0, REAL b1, int m, int away) {
    const REAL s = away ? RABS(b0 - b1) * (REAL)((b0 > 0) - (b0 < 0)) : b0 - b1;
    return b0 + (REAL)m * s;
}

/* Points P[0 .. 2gw] at the rows around row (offset ro) along axis k, building ghost rows
 * in w->ghost and, for the last axis, the padded row in w->pad. */
static void F(stencil)(const F(solver) *s, F(tws) *w, const REAL *V, int64_t ro, int k, const REAL **P) {
    const dg_hji_grid *g = s->g;
    const int gw = s->gw, nl = s->nl, nk = g->n[k];
    const int periodic = g->bc[k] == DG_HJI_BC_PERIODIC, away = g->bc[k] == DG_HJI_BC_AWAY;
    const REAL *row = V + ro;
    if (k == s->nd - 1) {
        REAL *pad = w->pad;
        for (int i = 0; i < nl; i++) pad[gw + i] = row[i];
        for (int m = 1; m <= gw; m++) {
            if (periodic) {
                pad[gw - m] = row[hji_wrap(-m, nl)];
                pad[gw + nl - 1 + m] = row[hji_wrap(nl - 1 + m, nl)];
            } else {
                pad[gw - m] = F(extrap)(row[0], row[1], m, away);
                pad[gw + nl - 1 + m] = F(extrap)(row[nl - 1], row[nl - 2], m, away);
            }
        }
        for (int j = 0; j <= 2 * gw; j++) P[j] = pad + j;
        return;
    }
    const int64_t st = g->stride[k];
    const int ik = w->idx[k];
    for (int j = -gw; j <= gw; j++) {
        const int ii = ik + j;
        if (ii >= 0 && ii < nk) {
            P[j + gw] = row + (int64_t)j * st;
        } else if (periodic) {
            P[j + gw] = row + (int64_t)(hji_wrap(ii, nk) - ik) * st;
        } else {
            const int slot = j < 0 ? j + gw : j + gw - 1;
            REAL *gr = w->ghost + ((int64_t)k * 2 * gw + slot) * s->nlp;
            const REAL *b0, *b1;
            int m;
            if (ii < 0) {
                b0 = row - (int64_t)ik * st;
                b1 = b0 + st;
                m = -ii;
            } else {
                b0 = row + (int64_t)(nk - 1 - ik) * st;
                b1 = b0 - st;
                m = ii - (nk - 1);
            }
            for (int i = 0; i < s->nv; i++) gr[i] = F(extrap)(b0[i], b1[i], m, away);
            P[j + gw] = gr;
        }
    }
}

/* ------------------------------------------------------------------------ rows */

static void F(decode)(const F(solver) *s, F(tws) *w, int64_t row) {
    for (int k = s->nd - 2; k >= 0; k--) {
        w->idx[k] = (int)(row % s->g->n[k]);
        row /= s->g->n[k];
    }
}

/* p- and p+ of row along every axis into w->pl, w->pr. */
static void F(row_derivs)(const F(solver) *s, F(tws) *w, const REAL *V, int64_t row) {
    const REAL *P[7];
    const int64_t ro = row * s->nl;
    for (int k = 0; k < s->nd; k++) {
        F(stencil)(s, w, V, ro, k, P);
        const REAL h = (REAL)(1.0 / s->g->dx[k]);
        REAL *pl = w->pl + (int64_t)k * s->nlp, *pr = w->pr + (int64_t)k * s->nlp;
        switch (s->o.deriv) {
        case DG_HJI_DERIV_UPWIND1: F(d_up1)(P, s->nv, h, pl, pr); break;
        case DG_HJI_DERIV_ENO2:    F(d_eno2)(P, s->nv, h, pl, pr); break;
        case DG_HJI_DERIV_ENO3:    F(d_eno3)(P, s->nv, h, pl, pr); break;
        default:             F(d_weno5)(P, s->nv, h, s->wsc[k], s->weps[k], pl, pr); break;
        }
    }
}

/* A coefficient over a row: a tabulated row p, or (p NULL) one value c for the whole row. */
typedef struct F(cview) {
    const REAL *p;
    REAL        c;
} F(cview);

static F(cview) F(cget)(const F(solver) *s, const F(tws) *w, int e, int64_t row) {
    const F(coef) *c = &s->coef[e];
    F(cview) v = {NULL, c->c};
    if (c->kind == HJI_FULL) v.p = c->tab + row * s->nl;
    else if (c->kind == HJI_AXIS && c->axis == s->nd - 1) v.p = c->tab;
    else if (c->kind == HJI_AXIS) v.c = c->tab[w->idx[c->axis]];
    return v;
}

/* acc = (first ? 0 : acc) + c pb over n */
static void F(axpy)(REAL *restrict acc, F(cview) c, const REAL *restrict pb, int n, int first) {
    if (c.p) {
        const REAL *restrict cp = c.p;
        if (first)
            for (int i = 0; i < n; i++) acc[i] = cp[i] * pb[i];
        else
            for (int i = 0; i < n; i++) acc[i] += cp[i] * pb[i];
    } else {
        const REAL cc = c.c;
        if (first)
            for (int i = 0; i < n; i++) acc[i] = cc * pb[i];
        else
            for (int i = 0; i < n; i++) acc[i] += cc * pb[i];
    }
}

/* ------------------------------------------------------------- Hamiltonians */

/* The common case of ham_input in one pass: every component j of the input meets one state axis
 * k_j with a coefficient c_j that is one value over the row (G = diag-like and constant along the
 * row). Returns 0 (nothing done) when the block is not of that form. */
static int F(ham_input_sparse)(const F(solver) *s, F(tws) *w, int64_t row, const dg_hji_input *in,
                               int off, REAL *restrict rhs) {
    const int m = in->dim, n = s->nv, nx = s->nd;
    const REAL *pk[DG_HJI_MAX_INPUT];
    REAL c[DG_HJI_MAX_INPUT], lin[DG_HJI_MAX_INPUT];
    int any_lin = 0;
    if (m > 3) return 0;
    for (int j = 0; j < m; j++) {
        int found = -1;
        for (int k = 0; k < nx; k++) {
            if (s->coef[off + k * m + j].kind == HJI_ZERO) continue;
            if (found >= 0) return 0;
            found = k;
        }
        if (found < 0) return 0;
        const F(cview) v = F(cget)(s, w, off + found * m + j, row);
        if (v.p) return 0;
        pk[j] = w->pl + (int64_t)found * s->nlp;
        c[j] = v.c;
        const double cen = in->set == DG_HJI_SET_BALL ? in->center[j] : 0.5 * (in->lo[j] + in->hi[j]);
        lin[j] = (REAL)cen * v.c;
        any_lin |= cen != 0;
    }
    const REAL sg = in->role == DG_HJI_ROLE_MAX ? 1 : -1;
    if (in->set == DG_HJI_SET_BALL) {
        const REAL r = sg * (REAL)in->radius;
        if (m == 1) {
            const REAL a = r * RABS(c[0]);
            for (int i = 0; i < n; i++) rhs[i] += a * RABS(pk[0][i]);
        } else if (m == 2) {
            for (int i = 0; i < n; i++) {
                const REAL t0 = c[0] * pk[0][i], t1 = c[1] * pk[1][i];
                rhs[i] += r * RSQRT(t0 * t0 + t1 * t1);
            }
        } else {
            for (int i = 0; i < n; i++) {
                const REAL t0 = c[0] * pk[0][i], t1 = c[1] * pk[1][i], t2 = c[2] * pk[2][i];
                rhs[i] += r * RSQRT(t0 * t0 + t1 * t1 + t2 * t2);
            }
        }
    } else {
        for (int j = 0; j < m; j++) {
            const REAL a = sg * (REAL)(0.5 * (in->hi[j] - in->lo[j])) * RABS(c[j]);
            const REAL *restrict p = pk[j];
            for (int i = 0; i < n; i++) rhs[i] += a * RABS(p[i]);
        }
    }
    if (any_lin)
        for (int j = 0; j < m; j++) {
            const REAL *restrict p = pk[j];
            for (int i = 0; i < n; i++) rhs[i] += lin[j] * p[i];
        }
    return 1;
}

/* Adds ext_v (p.M v) over the player's bounds to rhs, M the coefficient block at off (nx, m). */
static void F(ham_input)(const F(solver) *s, F(tws) *w, int64_t row, const dg_hji_input *in, int off,
                         REAL *restrict rhs) {
    const int m = in->dim, n = s->nv, nx = s->nd;
    if (m == 0 || F(ham_input_sparse)(s, w, row, in, off, rhs)) return;
    const REAL sg = in->role == DG_HJI_ROLE_MAX ? 1 : -1;
    REAL *restrict sv = w->tmp, *restrict acc = w->tmp + s->nlp;
    const int ball = in->set == DG_HJI_SET_BALL;
    int any_ball = 0;
    for (int j = 0; j < m; j++) {
        int any = 0;
        for (int k = 0; k < nx; k++) {
            const int e = off + k * m + j;
            if (s->coef[e].kind == HJI_ZERO) continue;
            F(axpy)(sv, F(cget)(s, w, e, row), w->pl + (int64_t)k * s->nlp, n, !any);
            any = 1;
        }
        if (!any) continue;
        if (ball) {
            const REAL cj = (REAL)in->center[j];
            if (!any_ball)
                for (int i = 0; i < n; i++) acc[i] = sv[i] * sv[i];
            else
                for (int i = 0; i < n; i++) acc[i] += sv[i] * sv[i];
            if (cj != 0)
                for (int i = 0; i < n; i++) rhs[i] += cj * sv[i];
            any_ball = 1;
        } else {
            const REAL cj = (REAL)(0.5 * (in->lo[j] + in->hi[j]));
            const REAL rj = sg * (REAL)(0.5 * (in->hi[j] - in->lo[j]));
            if (cj != 0)
                for (int i = 0; i < n; i++) rhs[i] += rj * RABS(sv[i]) + cj * sv[i];
            else
                for (int i = 0; i < n; i++) rhs[i] += rj * RABS(sv[i]);
        }
    }
    if (any_ball) {
        const REAL r = sg * (REAL)in->radius;
        for (int i = 0; i < n; i++) rhs[i] += r * RSQRT(acc[i]);
    }
}

/* Adds the player's bound on |(M v)_k|, |M_k.centre| + sum_j |M_kj| r_j (box) or
 * + radius |M_k.| (ball), to alpha: to the scalar *S when every coefficient is one value over the
 * row (the usual case: one pass less), else to the row a (n), which *init says holds values. */
static void F(alpha_input)(const F(solver) *s, F(tws) *w, int64_t row, const dg_hji_input *in,
                           int off, int k, REAL *restrict a, REAL *S, int *init) {
    const int m = in->dim, n = s->nv;
    if (m == 0) return;
    const int ball = in->set == DG_HJI_SET_BALL;
    F(cview) c[DG_HJI_MAX_INPUT];
    int rows = 0, any = 0;
    for (int j = 0; j < m; j++) {
        const int e = off + k * m + j;
        c[j] = s->coef[e].kind == HJI_ZERO ? (F(cview)){NULL, 0} : F(cget)(s, w, e, row);
        rows |= c[j].p != NULL;
        any |= s->coef[e].kind != HJI_ZERO;
    }
    if (!any) return;
    if (!rows) {
        REAL cen = 0, rad = 0;
        for (int j = 0; j < m; j++) {
            const REAL cj = (REAL)(ball ? in->center[j] : 0.5 * (in->lo[j] + in->hi[j]));
            cen += c[j].c * cj;
            rad += ball ? c[j].c * c[j].c : RABS(c[j].c) * (REAL)(0.5 * (in->hi[j] - in->lo[j]));
        }
        *S += RABS(cen) + (ball ? (REAL)in->radius * RSQRT(rad) : rad);
        return;
    }
    REAL *restrict cen = w->tmp, *restrict rad = w->tmp + s->nlp;
    for (int i = 0; i < n; i++) cen[i] = rad[i] = 0;
    for (int j = 0; j < m; j++) {
        const REAL cj = (REAL)(ball ? in->center[j] : 0.5 * (in->lo[j] + in->hi[j]));
        const REAL rj = (REAL)(0.5 * (in->hi[j] - in->lo[j]));
        for (int i = 0; i < n; i++) {
            const REAL ci = c[j].p ? c[j].p[i] : c[j].c;
            cen[i] += ci * cj;
            rad[i] += ball ? ci * ci : RABS(ci) * rj;
        }
    }
    const REAL r = (REAL)in->radius;
    for (int i = 0; i < n; i++) {
        const REAL v = RABS(cen[i]) + (ball ? r * RSQRT(rad[i]) : rad[i]);
        a[i] = *init ? a[i] + v : v;
    }
    *init = 1;
}

/* alpha_k (x) >= |dH/dp_k| for an affine game, into w->alpha (nd, nlp): |f_k| plus both players'
 * bounds. It holds for every p, so ToolboxLS's global, local and local-local dissipation all
 * reduce to it; DG_HJI_DISS_GLOBAL_MAX takes its max over the grid instead. */
static void F(alpha_affine)(const F(solver) *s, F(tws) *w, int64_t row) {
    const int n = s->nv, nx = s->nd;
    for (int k = 0; k < nx; k++) {
        REAL *restrict a = w->alpha + (int64_t)k * s->nlp;
        REAL S = 0;
        int init = 0;
        if (s->coef[k].kind != HJI_ZERO) {
            const F(cview) c = F(cget)(s, w, k, row);
            if (c.p) {
                for (int i = 0; i < n; i++) a[i] = RABS(c.p[i]);
                init = 1;
            } else {
                S = RABS(c.c);
            }
        }
        F(alpha_input)(s, w, row, &s->gm->u, nx, k, a, &S, &init);
        F(alpha_input)(s, w, row, &s->gm->d, nx + nx * s->nu, k, a, &S, &init);
        if (!init)
            for (int i = 0; i < n; i++) a[i] = S;
        else if (S != 0)
            for (int i = 0; i < n; i++) a[i] += S;
    }
}

/* Turns p-, p+ into their mean (in pl) and half difference (in pr). */
static void F(mean_diff)(const F(solver) *s, F(tws) *w) {
    for (int k = 0; k < s->nd; k++) {
        REAL *restrict pl = w->pl + (int64_t)k * s->nlp, *restrict pr = w->pr + (int64_t)k * s->nlp;
        for (int i = 0; i < s->nv; i++) {
            const REAL a = pl[i], b = pr[i];
            pl[i] = (REAL)0.5 * (a + b);
            pr[i] = (REAL)0.5 * (b - a);
        }
    }
}

/* For one axis, in one pass: pl <- (p- + p+)/2 and rhs += f pbar + alpha (p+ - p-)/2, f a
 * coefficient view (or zero), alpha a row (arow) or one value (as). */
static void F(axis_terms)(REAL *restrict rhs, REAL *restrict pl, const REAL *restrict pr, F(cview) f, int fzero,
                          const REAL *restrict arow, REAL as, int n) {
    const REAL h = (REAL)0.5;
    if (!fzero && f.p) {
        const REAL *restrict fp = f.p;
        if (arow)
            for (int i = 0; i < n; i++) {
                const REAL pb = h * (pl[i] + pr[i]);
                rhs[i] += fp[i] * pb + arow[i] * h * (pr[i] - pl[i]);
                pl[i] = pb;
            }
        else
            for (int i = 0; i < n; i++) {
                const REAL pb = h * (pl[i] + pr[i]);
                rhs[i] += fp[i] * pb + as * h * (pr[i] - pl[i]);
                pl[i] = pb;
            }
    } else {
        const REAL fc = fzero ? 0 : f.c;
        if (arow)
            for (int i = 0; i < n; i++) {
                const REAL pb = h * (pl[i] + pr[i]);
                rhs[i] += fc * pb + arow[i] * h * (pr[i] - pl[i]);
                pl[i] = pb;
            }
        else
            for (int i = 0; i < n; i++) {
                const REAL pb = h * (pl[i] + pr[i]);
                rhs[i] += fc * pb + as * h * (pr[i] - pl[i]);
                pl[i] = pb;
            }
    }
}

/* rhs = -H^ for an affine game: p.f + ext_u + ext_d + sum_k alpha_k (p+ - p-)/2. */
static void F(ham_affine)(const F(solver) *s, F(tws) *w, int64_t row) {
    const int n = s->nv, nx = s->nd;
    REAL *restrict rhs = w->rhs;
    const int global = s->o.diss == DG_HJI_DISS_GLOBAL_MAX;
    int compute = 0;
    for (int k = 0; k < nx; k++) compute |= !global && s->akind[k] == HJI_A_COMPUTE;
    if (compute) F(alpha_affine)(s, w, row);
    for (int i = 0; i < n; i++) rhs[i] = 0;
    for (int k = 0; k < nx; k++) {
        const int fz = s->coef[k].kind == HJI_ZERO;
        const F(cview) f = fz ? (F(cview)){NULL, 0} : F(cget)(s, w, k, row);
        const REAL *arow = NULL;
        REAL as = (REAL)s->alpha_max[k];
        if (!global) {
            switch (s->akind[k]) {
            case HJI_A_ROW:  as = s->arow[k][row]; break;
            case HJI_A_LINE: arow = s->aline[k]; break;
            case HJI_A_FULL: arow = s->afull[k] + row * s->nl; break;
            default:         arow = w->alpha + (int64_t)k * s->nlp; break;
            }
        }
        F(axis_terms)(rhs, w->pl + (int64_t)k * s->nlp, w->pr + (int64_t)k * s->nlp, f, fz, arow, as, n);
    }
    F(ham_input)(s, w, row, &s->gm->u, nx, rhs);
    F(ham_input)(s, w, row, &s->gm->d, nx + nx * s->nu, rhs);
}

/* The row's coordinates as (nd, n) doubles for the generic callbacks. */
static void F(row_coords)(const F(solver) *s, F(tws) *w) {
    const int n = s->nl, nd = s->nd;
    for (int k = 0; k < nd - 1; k++) {
        const double c = dg_hji_grid_coord(s->g, k, w->idx[k]);
        for (int i = 0; i < n; i++) w->xd[(int64_t)k * s->nlp + i] = c;
    }
    for (int i = 0; i < n; i++) w->xd[(int64_t)(nd - 1) * s->nlp + i] = s->xlast[i];
}

/* Fills the (nd, n) boxes of p for the alpha callback: axis k's from the node's [min(p-, p+),
 * max(p-, p+)] when local[k], else the grid's range. */
static void F(pboxes)(const F(solver) *s, F(tws) *w, const int *local) {
    const int n = s->nl;
    const int64_t q = s->nlp;
    for (int64_t k = 0; k < s->nd; k++)
        for (int i = 0; i < n; i++) {
            if (local[k]) {
                const double a = w->pl[k * q + i], b = w->pr[k * q + i];
                w->qmin[k * n + i] = a < b ? a : b;
                w->qmax[k * n + i] = a < b ? b : a;
            } else {
                w->qmin[k * n + i] = s->pmin[k];
                w->qmax[k * n + i] = s->pmax[k];
            }
        }
}

/* rhs = -H^ for a generic Hamiltonian; raises w->red[k] to the row's max of alpha_k. */
static void F(ham_generic)(const F(solver) *s, F(tws) *w, double t) {
    const int n = s->nl, nd = s->nd;
    const int64_t q = s->nlp;
    const dg_hji_game *gm = s->gm;
    double *xd = w->xd, *ad = w->ad;
    F(row_coords)(s, w);
    for (int64_t k = 1; k < nd; k++)          /* the callbacks see (nd, n) arrays */
        for (int i = 0; i < n; i++) xd[k * n + i] = xd[k * q + i];
    int local[DG_HJI_MAX_DIMS];
    const dg_hji_diss diss = s->o.diss;
    /* alpha at every node from the boxes of p (before p-, p+ become their mean and difference) */
    if (diss == DG_HJI_DISS_LOCAL) {
        /* ToolboxLS LLF: alpha_k with axis k's box local and the others the grid's */
        for (int k = 0; k < nd; k++) {
            for (int j = 0; j < nd; j++) local[j] = j == k;
            F(pboxes)(s, w, local);
            gm->alpha(gm->user, t, n, xd, w->qmin, w->qmax, w->pd);   /* pd: scratch until below */
            for (int i = 0; i < n; i++) ad[(int64_t)k * n + i] = w->pd[(int64_t)k * n + i];
        }
    } else if (diss != DG_HJI_DISS_GLOBAL_MAX) {
        for (int j = 0; j < nd; j++) local[j] = diss == DG_HJI_DISS_LOCAL_LOCAL;
        F(pboxes)(s, w, local);
        gm->alpha(gm->user, t, n, xd, w->qmin, w->qmax, ad);
    } else {
        for (int64_t k = 0; k < nd; k++)
            for (int i = 0; i < n; i++) ad[k * n + i] = s->alpha_max[k];
    }
    F(mean_diff)(s, w);
    for (int64_t k = 0; k < nd; k++)
        for (int i = 0; i < n; i++) w->pd[k * n + i] = w->pl[k * q + i];
    gm->ham(gm->user, t, n, xd, w->pd, w->hd);
    for (int i = 0; i < n; i++) {
        double r = -w->hd[i];
        for (int64_t k = 0; k < nd; k++) {
            const double a = fabs(ad[k * n + i]);
            r += a * (double)w->pr[k * q + i];
            if (a > w->red[k]) w->red[k] = a;
        }
        w->rhs[i] = (REAL)r;
    }
}

/* --------------------------------------------------------- passes over the grid */

static inline REAL F(finish)(const F(solver) *s, const F(stage) *st, int64_t j, REAL v, REAL before, int *bad) {
    if (s->o.mode == DG_HJI_MODE_BRT && before < v) v = before;    /* the tube never shrinks (rounding) */
    if (s->o.mode == DG_HJI_MODE_BRT_TARGET && st->v0[j] < v) v = st->v0[j];
    if (st->obst && st->obst[j] > v) v = st->obst[j];
    if (!(v - v == 0)) *bad = 1;
    return v;
}

/* acc[l] = max(acc[l], |b[i] - a[i]|) over i = l mod 16: lanes, so nothing is reduced per row. */
static void F(maxacc)(REAL *restrict acc, const REAL *a, const REAL *b, int n) {
    int i = 0;
    for (; i + 16 <= n; i += 16) {
#pragma omp simd
        for (int l = 0; l < 16; l++) {
            const REAL d = RABS(b[i + l] - a[i + l]);
            acc[l] = d > acc[l] ? d : acc[l];
        }
    }
    for (int l = 0; i < n; i++, l++) {
        const REAL d = RABS(b[i] - a[i]);
        acc[l] = d > acc[l] ? d : acc[l];
    }
}

/* WENO epsilon: max over the grid of the undivided differences along each axis. */
static void F(pass_eps)(F(solver) *s, const REAL *V) {
    const int nd = s->nd, nl = s->nl;
    const dg_hji_grid *g = s->g;
#pragma omp parallel num_threads(s->nthreads)
    {
        F(tws) *w = &s->tw[omp_get_thread_num()];
        REAL acc[DG_HJI_MAX_DIMS][16];
        memset(acc, 0, sizeof acc);
#pragma omp for schedule(static)
        for (int64_t r = 0; r < s->rows; r++) {
            F(decode)(s, w, r);
            const REAL *row = V + r * nl;
            for (int k = 0; k < nd - 1; k++) {
                const REAL *nb;
                if (w->idx[k] < g->n[k] - 1) nb = row + g->stride[k];
                else if (g->bc[k] == DG_HJI_BC_PERIODIC) nb = row - (int64_t)(g->n[k] - 1) * g->stride[k];
                else continue;
                F(maxacc)(acc[k], row, nb, nl);
            }
            F(maxacc)(acc[nd - 1], row, row + 1, nl - 1);
            if (g->bc[nd - 1] == DG_HJI_BC_PERIODIC) F(maxacc)(acc[nd - 1], row + nl - 1, row, 1);
        }
        for (int k = 0; k < nd; k++) {
            REAL m = 0;
            for (int l = 0; l < 16; l++) m = acc[k][l] > m ? acc[k][l] : m;
            w->red[k] = m;
        }
    }
    for (int k = 0; k < nd; k++) {
        double m = 0;
        for (int t = 0; t < s->nthreads; t++) m = s->tw[t].red[k] > m ? s->tw[t].red[k] : m;
        const double m2 = m * m;
        if (!(m2 > 0) || !isfinite(1.0 / m2)) {
            s->wsc[k] = 1;
            s->weps[k] = (REAL)1e-6;
        } else if (s->o.weno_eps == DG_HJI_WENO_EPS_GRID) {
            s->wsc[k] = (REAL)(1.0 / m2);
            s->weps[k] = (REAL)1e-6;  /* 1e-6 max D1^2; the +1e-99 only guards 0/0, avoided here */
        } else {
            const double e = 1e-6 * g->dx[k] * g->dx[k] / m2;  /* 1e-6 in divided units */
            s->wsc[k] = (REAL)(1.0 / m2);
            s->weps[k] = (REAL)(e < 1e6 ? e : 1e6);
        }
    }
}

/* Generic Hamiltonians with global or local dissipation: the range of p- and p+ over the grid,
 * then (GLOBAL_MAX) the max over the grid of alpha for that range. */
static void F(pass_prange)(F(solver) *s, const REAL *V, double t) {
    const int nd = s->nd, nl = s->nl;
    const int64_t q = s->nlp;
#pragma omp parallel num_threads(s->nthreads)
    {
        F(tws) *w = &s->tw[omp_get_thread_num()];
        for (int k = 0; k < nd; k++) {
            w->red[k] = INFINITY;
            w->red[DG_HJI_MAX_DIMS + k] = -INFINITY;
        }
#pragma omp for schedule(static)
        for (int64_t r = 0; r < s->rows; r++) {
            F(decode)(s, w, r);
            F(row_derivs)(s, w, V, r);
            for (int k = 0; k < nd; k++) {
                double lo = w->red[k], hi = w->red[DG_HJI_MAX_DIMS + k];
                for (int i = 0; i < nl; i++) {
                    const double a = w->pl[k * q + i], b = w->pr[k * q + i];
                    lo = a < lo ? a : lo;
                    lo = b < lo ? b : lo;
                    hi = a > hi ? a : hi;
                    hi = b > hi ? b : hi;
                }
                w->red[k] = lo;
                w->red[DG_HJI_MAX_DIMS + k] = hi;
            }
        }
    }
    for (int k = 0; k < nd; k++) {
        s->pmin[k] = INFINITY;
        s->pmax[k] = -INFINITY;
        for (int t2 = 0; t2 < s->nthreads; t2++) {
            if (s->tw[t2].red[k] < s->pmin[k]) s->pmin[k] = s->tw[t2].red[k];
            if (s->tw[t2].red[DG_HJI_MAX_DIMS + k] > s->pmax[k]) s->pmax[k] = s->tw[t2].red[DG_HJI_MAX_DIMS + k];
        }
    }
    if (s->o.diss != DG_HJI_DISS_GLOBAL_MAX) return;
    const dg_hji_game *gm = s->gm;
#pragma omp parallel num_threads(s->nthreads)
    {
        F(tws) *w = &s->tw[omp_get_thread_num()];
        for (int k = 0; k < nd; k++) w->red[k] = 0;
#pragma omp for schedule(static)
        for (int64_t r = 0; r < s->rows; r++) {
            F(decode)(s, w, r);
            F(row_coords)(s, w);
            for (int64_t k = 0; k < nd; k++)
                for (int i = 0; i < nl; i++) {
                    w->xd[k * nl + i] = w->xd[k * q + i];
                    w->qmin[k * nl + i] = s->pmin[k];
                    w->qmax[k * nl + i] = s->pmax[k];
                }
            gm->alpha(gm->user, t, nl, w->xd, w->qmin, w->qmax, w->ad);
            for (int k = 0; k < nd; k++)
                for (int i = 0; i < nl; i++) {
                    const double a = fabs(w->ad[(int64_t)k * nl + i]);
                    if (a > w->red[k]) w->red[k] = a;
                }
        }
    }
    for (int k = 0; k < nd; k++) {
        s->alpha_max[k] = 0;
        for (int t2 = 0; t2 < s->nthreads; t2++)
            if (s->tw[t2].red[k] > s->alpha_max[k]) s->alpha_max[k] = s->tw[t2].red[k];
    }
}

/* One Runge-Kutta stage over the whole grid. Returns the CFL bound sum_k max alpha_k/dx_k of a
 * generic Hamiltonian (0 for a game) and sets *bad if a non-finite value was written. */
static double F(pass_stage)(F(solver) *s, const F(stage) *st, int *bad) {
    if (s->o.deriv == DG_HJI_DERIV_WENO5) F(pass_eps)(s, st->src);
    if (!s->affine && s->o.diss != DG_HJI_DISS_LOCAL_LOCAL) F(pass_prange)(s, st->src, st->t);
    const int nl = s->nl;
#pragma omp parallel num_threads(s->nthreads)
    {
        F(tws) *w = &s->tw[omp_get_thread_num()];
        for (int k = 0; k < s->nd; k++) w->red[k] = 0;
        w->bad = 0;
#pragma omp for schedule(static)
        for (int64_t r = 0; r < s->rows; r++) {
            F(decode)(s, w, r);
            F(row_derivs)(s, w, st->src, r);
            if (s->affine) F(ham_affine)(s, w, r);
            else F(ham_generic)(s, w, st->t);
            REAL *restrict rhs = w->rhs;
            if (s->o.mode == DG_HJI_MODE_BRT)
                for (int i = 0; i < s->nv; i++) rhs[i] = rhs[i] < 0 ? rhs[i] : 0;
            const int64_t ro = r * nl;
            REAL *out = st->out + ro;
            if (st->dt <= 0) {
                for (int i = 0; i < nl; i++) out[i] = rhs[i];
                continue;
            }
            const REAL *src = st->src + ro, *u0 = st->u0 + ro;
            const REAL a = st->a, b = st->b, dt = (REAL)st->dt;
            if (!st->finish) {
                if (a == 0)
                    for (int i = 0; i < nl; i++) out[i] = b * (src[i] + dt * rhs[i]);
                else
                    for (int i = 0; i < nl; i++) out[i] = a * u0[i] + b * (src[i] + dt * rhs[i]);
            } else {
                for (int i = 0; i < nl; i++) {
                    const REAL before = u0[i];
                    const REAL v = a * before + b * (src[i] + dt * rhs[i]);
                    out[i] = F(finish)(s, st, ro + i, v, before, &w->bad);
                }
            }
        }
    }
    /* the CFL bound of a generic Hamiltonian, as ToolboxLS: sum_k max_x alpha_k / dx_k */
    double bound = 0;
    for (int k = 0; k < s->nd; k++) {
        double m = 0;
        for (int t = 0; t < s->nthreads; t++) m = s->tw[t].red[k] > m ? s->tw[t].red[k] : m;
        bound += m / s->g->dx[k];
    }
    for (int t = 0; t < s->nthreads; t++)
        if (s->tw[t].bad) *bad = 1;
    return s->affine ? 0 : bound;
}

/* The first stage once dt is known: out = src + dt out (out held rhs). */
static void F(pass_apply)(F(solver) *s, const F(stage) *st, int *bad) {
    const REAL dt = (REAL)st->dt;
    int b = 0;
#pragma omp parallel for schedule(static) num_threads(s->nthreads) reduction(| : b)
    for (int64_t j = 0; j < s->nodes; j++) {
        const REAL before = st->src[j];
        REAL v = before + dt * st->out[j];
        if (st->finish) v = F(finish)(s, st, j, v, before, &b);
        st->out[j] = v;
    }
    if (b) *bad = 1;
}

/* ------------------------------------------------------------------------ setup */

static void F(solver_free)(F(solver) *s) {
    if (s->tw)
        for (int t = 0; t < s->nthreads; t++) free(s->tw[t].block);
    free(s->tw);
    free(s->coef);
    free(s->tabs);
    free(s->atabs);
    free(s->afulls);
    free(s->xlast);
}

static size_t F(round64)(size_t b) { return (b + 63) & ~(size_t)63; }

/* Allocates one thread's workspace as one 64-byte aligned block. */
static dg_status F(tws_alloc)(F(solver) *s, F(tws) *w) {
    const size_t q = (size_t)s->nlp, nd = (size_t)s->nd, gw = (size_t)s->gw;
    const size_t R = sizeof(REAL);
    const size_t sz[] = {
        F(round64)((q + 2 * gw + 16) * R),   /* pad   */
        F(round64)(nd * 2 * gw * q * R),     /* ghost */
        F(round64)(nd * q * R),              /* pl    */
        F(round64)(nd * q * R),              /* pr    */
        F(round64)(q * R),                   /* rhs   */
        F(round64)(nd * q * R),              /* alpha */
        F(round64)(3 * q * R),               /* tmp   */
        F(round64)(nd * q * sizeof(double)), /* xd    */
        F(round64)(nd * q * sizeof(double)), /* pd    */
        F(round64)(nd * q * sizeof(double)), /* ad    */
        F(round64)(nd * q * sizeof(double)), /* qmin  */
        F(round64)(nd * q * sizeof(double)), /* qmax  */
        F(round64)(q * sizeof(double)),      /* hd    */
    };
    size_t total = 0;
    for (size_t i = 0; i < sizeof sz / sizeof sz[0]; i++) total += sz[i];
    char *b = aligned_alloc(64, total);
    if (!b) return DG_ERR_NOMEM;
    memset(b, 0, total);
    w->block = b;
    /* the fast-axis row starts 64-byte aligned after its gw low ghost cells */
    w->pad = (REAL *)b + (64 / R - gw % (64 / R)) % (64 / R);
    b += sz[0];
    w->ghost = (REAL *)b;  b += sz[1];
    w->pl = (REAL *)b;     b += sz[2];
    w->pr = (REAL *)b;     b += sz[3];
    w->rhs = (REAL *)b;    b += sz[4];
    w->alpha = (REAL *)b;  b += sz[5];
    w->tmp = (REAL *)b;    b += sz[6];
    w->xd = (double *)b;   b += sz[7];
    w->pd = (double *)b;   b += sz[8];
    w->ad = (double *)b;   b += sz[9];
    w->qmin = (double *)b; b += sz[10];
    w->qmax = (double *)b; b += sz[11];
    w->hd = (double *)b;
    return DG_OK;
}

/* Tabulates the affine dynamics: evaluates dyn at every node once, classifies every entry of
 * f, G, D as zero, constant, varying along one axis only, or full, and keeps the smallest
 * table that reproduces it exactly. */
static dg_status F(tabulate)(F(solver) *s, dg_err *e) {
    const dg_hji_grid *g = s->g;
    const dg_hji_game *gm = s->gm;
    const int nd = s->nd, E = s->ncoef, nt = s->nthreads;
    dg_status rc = DG_OK;
    int64_t linelen = 0;
    for (int k = 0; k < nd; k++) linelen += g->n[k];
    double *ref = calloc((size_t)E, sizeof *ref);
    double *line = calloc((size_t)(linelen * E), sizeof *line);   /* per axis (n[k], E) */
    unsigned char *flags = calloc((size_t)nt * (size_t)(nd + 1) * (size_t)E, 1);
    double *tbuf = calloc((size_t)nt * (size_t)(nd + E), sizeof *tbuf);
    int *nonfinite = calloc((size_t)nt, sizeof *nonfinite);
    if (!ref || !line || !flags || !tbuf || !nonfinite) {
        rc = dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory tabulating the dynamics");
        goto cleanup;
    }
    const int nu = s->nu;
    double x[DG_HJI_MAX_DIMS];
    for (int k = 0; k < nd; k++) x[k] = g->lo[k];
    gm->dyn(gm->user, x, ref, ref + nd, ref + nd + nd * nu);
    int64_t lo = 0;
    for (int k = 0; k < nd; k++) {
        for (int i = 0; i < g->n[k]; i++) {
            for (int q = 0; q < nd; q++) x[q] = g->lo[q];
            x[k] = dg_hji_grid_coord(g, k, i);
            double *v = line + (lo + i) * E;
            gm->dyn(gm->user, x, v, v + nd, v + nd + nd * nu);
        }
        lo += g->n[k];
    }
    memset(flags, 1, (size_t)nt * (size_t)(nd + 1) * (size_t)E);
#pragma omp parallel num_threads(nt)
    {
        const int t = omp_get_thread_num();
        unsigned char *cst = flags + (size_t)t * (size_t)(nd + 1) * (size_t)E;  /* (nd + 1, E) */
        double *xx = tbuf + (size_t)t * (size_t)(nd + E), *v = xx + nd;
#pragma omp for schedule(static)
        for (int64_t j = 0; j < s->nodes; j++) {
            dg_hji_grid_point(g, j, xx);
            memset(v, 0, (size_t)E * sizeof *v);
            gm->dyn(gm->user, xx, v, v + nd, v + nd + nd * nu);
            int64_t rest = j, off;
            int idx[DG_HJI_MAX_DIMS];
            for (int k = nd - 1; k >= 0; k--) {
                idx[k] = (int)(rest % g->n[k]);
                rest /= g->n[k];
            }
            for (int q = 0; q < E; q++) {
                if (!isfinite(v[q])) nonfinite[t] = 1;
                if (cst[q] && v[q] != ref[q]) cst[q] = 0;
            }
            off = 0;
            for (int k = 0; k < nd; k++) {
                unsigned char *ax = cst + (size_t)(k + 1) * (size_t)E;
                const double *lv = line + (off + idx[k]) * E;
                for (int q = 0; q < E; q++)
                    if (ax[q] && v[q] != lv[q]) ax[q] = 0;
                off += g->n[k];
            }
        }
    }
    for (int t = 0; t < nt; t++)
        if (nonfinite[t]) {
            rc = dg_err_set(e, DG_ERR_NONFINITE, "hji: the dynamics are not finite somewhere on the grid");
            goto cleanup;
        }
    /* classify (AND over threads) and size the tables */
    int64_t need = 0;
    for (int q = 0; q < E; q++) {
        int is_c = 1, axis = -1;
        for (int t = 0; t < nt; t++) is_c &= flags[(size_t)t * (size_t)(nd + 1) * (size_t)E + (size_t)q];
        for (int k = 0; k < nd && !is_c && axis < 0; k++) {
            int ok = 1;
            for (int t = 0; t < nt; t++)
                ok &= flags[((size_t)t * (size_t)(nd + 1) + (size_t)(k + 1)) * (size_t)E + (size_t)q];
            if (ok) axis = k;
        }
        F(coef) *c = &s->coef[q];
        if (is_c) {
            c->kind = ref[q] == 0 ? HJI_ZERO : HJI_CONST;
            c->c = (REAL)ref[q];
        } else if (axis >= 0) {
            c->kind = HJI_AXIS;
            c->axis = axis;
            need += g->n[axis] + 16;   /* padded: rows are read in whole vectors */
        } else {
            c->kind = HJI_FULL;
            need += s->nodes + 16;
        }
    }
    if (need) {
        s->tabs = calloc((size_t)need, sizeof(REAL));
        if (!s->tabs) {
            rc = dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory for the dynamics tables (%lld values)",
                            (long long)need);
            goto cleanup;
        }
    }
    int64_t at = 0, nfull = 0;
    for (int q = 0; q < E; q++) {
        F(coef) *c = &s->coef[q];
        if (c->kind == HJI_AXIS) {
            c->tab = s->tabs + at;
            int64_t off = 0;
            for (int k = 0; k < c->axis; k++) off += g->n[k];
            for (int i = 0; i < g->n[c->axis]; i++) c->tab[i] = (REAL)line[(off + i) * E + q];
            at += g->n[c->axis] + 16;
        } else if (c->kind == HJI_FULL) {
            c->tab = s->tabs + at;
            at += s->nodes + 16;
            nfull++;
        }
    }
    if (nfull) {
#pragma omp parallel num_threads(nt)
        {
            const int t = omp_get_thread_num();
            double *xx = tbuf + (size_t)t * (size_t)(nd + E), *v = xx + nd;
#pragma omp for schedule(static)
            for (int64_t j = 0; j < s->nodes; j++) {
                dg_hji_grid_point(g, j, xx);
                memset(v, 0, (size_t)E * sizeof *v);
                gm->dyn(gm->user, xx, v, v + nd, v + nd + nd * nu);
                for (int q = 0; q < E; q++)
                    if (s->coef[q].kind == HJI_FULL) s->coef[q].tab[j] = (REAL)v[q];
            }
        }
    }
cleanup:
    free(ref);
    free(line);
    free(flags);
    free(tbuf);
    free(nonfinite);
    return rc;
}

/* Static dissipation of an affine game: alpha_max per axis, the CFL bound, and alpha itself
 * tabulated in the cheapest exact form (one value a row, one line for all rows, or a full table
 * within a budget of two value arrays; else it is recomputed per row). */
static dg_status F(static_alpha)(F(solver) *s, dg_err *e) {
    const int nd = s->nd, nl = s->nl;
    const int64_t q = s->nlp;
    s->atabs = calloc((size_t)nd * (size_t)(s->rows + q), sizeof(REAL));
    if (!s->atabs) return dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory for the dissipation tables");
    for (int k = 0; k < nd; k++) {
        s->arow[k] = s->atabs + (int64_t)k * (s->rows + q);
        s->aline[k] = s->arow[k] + s->rows;
    }
    /* row 0 is the reference line */
    F(decode)(s, &s->tw[0], 0);
    F(alpha_affine)(s, &s->tw[0], 0);
    for (int k = 0; k < nd; k++)
        for (int i = 0; i < q; i++) s->aline[k][i] = s->tw[0].alpha[(int64_t)k * q + i];
    int row_ok[DG_HJI_MAX_DIMS], line_ok[DG_HJI_MAX_DIMS];
    for (int k = 0; k < nd; k++) row_ok[k] = line_ok[k] = 1;
#pragma omp parallel num_threads(s->nthreads)
    {
        F(tws) *w = &s->tw[omp_get_thread_num()];
        int rok[DG_HJI_MAX_DIMS], lok[DG_HJI_MAX_DIMS];
        for (int k = 0; k < nd; k++) {
            w->red[k] = 0;
            rok[k] = lok[k] = 1;
        }
#pragma omp for schedule(static)
        for (int64_t r = 0; r < s->rows; r++) {
            F(decode)(s, w, r);
            F(alpha_affine)(s, w, r);
            for (int k = 0; k < nd; k++) {
                const REAL *a = w->alpha + (int64_t)k * q;
                for (int i = 0; i < nl; i++) {
                    if (a[i] > w->red[k]) w->red[k] = a[i];
                    rok[k] &= a[i] == a[0];
                    lok[k] &= a[i] == s->aline[k][i];
                }
                s->arow[k][r] = a[0];
            }
        }
#pragma omp critical
        for (int k = 0; k < nd; k++) {
            row_ok[k] &= rok[k];
            line_ok[k] &= lok[k];
        }
    }
    for (int k = 0; k < nd; k++) s->alpha_max[k] = 0;
    for (int t = 0; t < s->nthreads; t++)
        for (int k = 0; k < nd; k++)
            if (s->tw[t].red[k] > s->alpha_max[k]) s->alpha_max[k] = s->tw[t].red[k];
    /* as ToolboxLS (and hj_reachability): sum over axes of the max over the grid */
    s->bound = 0;
    for (int k = 0; k < nd; k++) s->bound += s->alpha_max[k] / s->g->dx[k];
    int nfull = 0;
    for (int k = 0; k < nd; k++) {
        s->akind[k] = row_ok[k] ? HJI_A_ROW : line_ok[k] ? HJI_A_LINE : HJI_A_FULL;
        nfull += s->akind[k] == HJI_A_FULL;
    }
    if (!nfull || s->o.diss == DG_HJI_DISS_GLOBAL_MAX) return DG_OK;
    if (nfull <= 2) s->afulls = malloc((size_t)(nfull * (s->nodes + 16)) * sizeof(REAL));
    if (!s->afulls) {   /* over budget (or no memory): recompute per row */
        for (int k = 0; k < nd; k++)
            if (s->akind[k] == HJI_A_FULL) s->akind[k] = HJI_A_COMPUTE;
        return DG_OK;
    }
    int at = 0;
    for (int k = 0; k < nd; k++)
        if (s->akind[k] == HJI_A_FULL) {
            s->afull[k] = s->afulls + (int64_t)at++ * (s->nodes + 16);
            for (int i = 0; i < 16; i++) s->afull[k][s->nodes + i] = 0;
        }
#pragma omp parallel num_threads(s->nthreads)
    {
        F(tws) *w = &s->tw[omp_get_thread_num()];
#pragma omp for schedule(static)
        for (int64_t r = 0; r < s->rows; r++) {
            F(decode)(s, w, r);
            F(alpha_affine)(s, w, r);
            for (int k = 0; k < nd; k++)
                if (s->akind[k] == HJI_A_FULL)
                    memcpy(s->afull[k] + r * nl, w->alpha + (int64_t)k * q, (size_t)nl * sizeof(REAL));
        }
    }
    return DG_OK;
}

/* Everything a solve or a gradient needs except the value arrays. */
static dg_status F(solver_init)(F(solver) *s, const dg_hji_grid *g, const dg_hji_game *gm,
                                const dg_hji_opts *o, dg_err *e) {
    memset(s, 0, sizeof *s);
    s->g = g;
    s->gm = gm;
    s->o = *o;
    s->nd = g->ndim;
    s->nl = g->n[g->ndim - 1];
    s->nlp = (s->nl + 15) & ~15;
    s->nv = s->nlp;
    s->gw = hji_ghost_width(o->deriv);
    s->nodes = g->nodes;
    s->rows = g->nodes / s->nl;
    /* threads = 0: OpenMP's count, but at least ~16k nodes a thread: below that a stage is a few
     * microseconds and the barriers between stages cost more than they save (and far more on a
     * busy machine, where a barrier waits for a descheduled thread) */
    int nt = o->threads > 0 ? o->threads : omp_get_max_threads();
    if (o->threads <= 0 && nt > 1 + s->nodes / 16384) nt = (int)(1 + s->nodes / 16384);
    if (nt > s->rows) nt = (int)s->rows;
    if (nt < 1) nt = 1;
    s->nthreads = nt;
    s->affine = gm && gm->dyn;
    if (s->affine) {
        s->nu = gm->u.dim;
        s->ndd = gm->d.dim;
        s->ncoef = s->nd * (1 + s->nu + s->ndd);
        s->coef = calloc((size_t)s->ncoef, sizeof *s->coef);
        if (!s->coef) return dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory");
        dg_status rc = F(tabulate)(s, e);
        if (rc) return rc;
    }
    s->xlast = calloc((size_t)s->nlp, sizeof *s->xlast);
    s->tw = aligned_alloc(64, (size_t)nt * sizeof *s->tw);  /* sizeof is a multiple of 64 */
    if (s->tw) memset(s->tw, 0, (size_t)nt * sizeof *s->tw);
    if (!s->xlast || !s->tw) return dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory");
    for (int i = 0; i < s->nl; i++) s->xlast[i] = dg_hji_grid_coord(g, s->nd - 1, i);
    for (int t = 0; t < nt; t++)
        if (F(tws_alloc)(s, &s->tw[t]))
            return dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory for the thread workspaces");
    for (int k = 0; k < s->nd; k++) {
        s->wsc[k] = 1;
        s->weps[k] = (REAL)1e-6;
    }
    return s->affine ? F(static_alpha)(s, e) : DG_OK;
}

/* ------------------------------------------------------------------------ solve */

dg_status F(hji_solve)(const dg_hji_grid *g, const dg_hji_game *gm, const dg_hji_opts *o,
                       const REAL *v0, const REAL *obstacle, int nt, const double *times, REAL *out,
                       dg_hji_stats *stats, dg_err *e) {
    const double t_start = omp_get_wtime();
    dg_status rc = hji_check_solve(g, gm, o, nt, times, e);
    if (rc) return rc;
    F(solver) s;
    REAL *U = NULL, *A = NULL, *B = NULL;
    rc = F(solver_init)(&s, g, gm, o, e);
    if (rc) goto cleanup;
    const int64_t N = g->nodes;
    const int stages = o->time == DG_HJI_TIME_EULER ? 1 : o->time == DG_HJI_TIME_RK2 ? 2 : 3;
    /* 16 spare zeros at the end: the last row is read in whole vectors */
    U = malloc((size_t)(N + 16) * sizeof *U);
    A = malloc((size_t)(N + 16) * sizeof *A);
    if (stages == 3) B = malloc((size_t)(N + 16) * sizeof *B);
    if (!U || !A || (stages == 3 && !B)) {
        rc = dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory for %lld nodes", (long long)N);
        goto cleanup;
    }
    for (int i = 0; i < 16; i++) {
        U[N + i] = A[N + i] = 0;
        if (B) B[N + i] = 0;
    }
    int bad = 0;
#pragma omp parallel for schedule(static) num_threads(s.nthreads) reduction(| : bad)
    for (int64_t j = 0; j < N; j++) {
        REAL v = v0[j];
        if (obstacle && obstacle[j] > v) v = obstacle[j];
        if (!(v - v == 0)) bad = 1;
        U[j] = v;
    }
    if (bad) {
        rc = dg_err_set(e, DG_ERR_NONFINITE, "hji: the initial value (or obstacle) is not finite");
        goto cleanup;
    }
    dg_hji_stats st = {.stages = stages, .nodes = N, .threads = s.nthreads, .dt_min = INFINITY};
    const int dynamic = !s.affine && !(o->dt > 0);  /* dt known only after stage 1 */
    double t = 0;
    if (!dynamic) {  /* the step count, from user numbers: bounded before the first step */
        const double dmax = o->dt > 0 ? o->dt : (s.bound > 0 ? o->cfl / s.bound : INFINITY);
        const double total = times[nt - 1] / dmax;
        if (!(total <= DG_HJI_MAX_STEPS)) {
            rc = dg_err_set(e, DG_ERR_ARG, "hji: t_end %g at steps of %g is %.3g steps, more than %d "
                            "(raise dt or cfl, or lower t_end)", times[nt - 1], dmax, total, DG_HJI_MAX_STEPS);
            goto cleanup;
        }
    }
    for (int k = 0; k < nt; k++) {
        const double T = times[k];
        int64_t left = 0;   /* static steps: equal steps that land on T */
        double dt_eq = 0;
        if (!dynamic && T > t) {
            const double dmax = o->dt > 0 ? o->dt : (s.bound > 0 ? o->cfl / s.bound : INFINITY);
            const double q = (T - t) / dmax;
            left = isfinite(q) ? (int64_t)ceil(q * (1 - 1e-12)) : 1;
            if (left < 1) left = 1;
            dt_eq = (T - t) / (double)left;
        }
        while (t < T) {
            double dt = dt_eq;
            int last = 0;
            F(stage) sg = {.src = U, .u0 = U, .out = A, .a = 0, .b = 1, .t = t, .finish = stages == 1,
                           .v0 = v0, .obst = obstacle};
            if (dynamic) {
                sg.dt = -1;
                const double b = F(pass_stage)(&s, &sg, &bad);
                dt = b > 0 ? o->cfl / b : INFINITY;
                if (dt >= (T - t) * (1 - 1e-12)) {
                    dt = T - t;
                    last = 1;
                }
                sg.dt = dt;
                F(pass_apply)(&s, &sg, &bad);
            } else {
                last = --left == 0;
                sg.dt = dt;
                F(pass_stage)(&s, &sg, &bad);
            }
            if (stages == 1) {
                REAL *tmp = U; U = A; A = tmp;
            } else if (stages == 2) {
                F(stage) s2 = {.src = A, .u0 = U, .out = U, .a = 0.5, .b = 0.5, .dt = dt, .t = t + dt,
                               .finish = 1, .v0 = v0, .obst = obstacle};
                F(pass_stage)(&s, &s2, &bad);
            } else {
                F(stage) s2 = {.src = A, .u0 = U, .out = B, .a = 0.75, .b = 0.25, .dt = dt, .t = t + dt,
                               .v0 = v0, .obst = obstacle};
                F(pass_stage)(&s, &s2, &bad);
                F(stage) s3 = {.src = B, .u0 = U, .out = U, .a = (REAL)(1.0 / 3.0), .b = (REAL)(2.0 / 3.0),
                               .dt = dt, .t = t + 0.5 * dt, .finish = 1, .v0 = v0, .obst = obstacle};
                F(pass_stage)(&s, &s3, &bad);
            }
            t = last ? T : t + dt;
            if (++st.steps > DG_HJI_MAX_STEPS) {
                rc = dg_err_set(e, DG_ERR_ARG, "hji: more than %d steps before t = %g (dt %g): raise cfl",
                                DG_HJI_MAX_STEPS, T, dt);
                goto cleanup;
            }
            if (dt < st.dt_min) st.dt_min = dt;
            if (dt > st.dt_max) st.dt_max = dt;
            if (bad) {
                rc = dg_err_set(e, DG_ERR_NONFINITE,
                                "hji: the value became non-finite at step %lld (t = %g, dt = %g); "
                                "try a smaller cfl or dt", (long long)st.steps, t, dt);
                goto cleanup;
            }
            if (o->progress) {
                const dg_hji_progress pr = {.t = t, .t_end = times[nt - 1], .step = st.steps, .dt = dt,
                                            .seconds = omp_get_wtime() - t_start};
                if (o->progress(o->progress_user, &pr)) {
                    rc = dg_err_set(e, DG_ERR_INTERRUPTED, "hji: stopped at t = %g of %g", t, times[nt - 1]);
                    if (t >= T) memcpy(out + (int64_t)k * N, U, (size_t)N * sizeof *U);
                    goto cleanup;
                }
            }
        }
        memcpy(out + (int64_t)k * N, U, (size_t)N * sizeof *U);
    }
    st.seconds = omp_get_wtime() - t_start;
    st.cell_updates = (double)st.steps * stages * (double)N;
    st.updates_per_s = st.seconds > 0 ? st.cell_updates / st.seconds : 0;
    if (!st.steps) st.dt_min = 0;
    if (stats) *stats = st;
cleanup:
    free(U);
    free(A);
    free(B);
    F(solver_free)(&s);
    return rc;
}

/* -------------------------------------------------------------------- gradient */

/* p- (left), p+ (right) and their mean (grad), each (ndim, nodes) or NULL, of the caller's v. */
dg_status F(hji_derivs)(const dg_hji_grid *g, const dg_hji_opts *o, const REAL *v, REAL *left, REAL *right,
                        REAL *grad, dg_err *e) {
    dg_status rc = hji_check_grid(g, e);
    if (rc) return rc;
    F(solver) s;
    rc = F(solver_init)(&s, g, NULL, o, e);
    if (rc) goto cleanup;
    s.nv = s.nl;  /* v is the caller's: no reading past its end */
    if (o->deriv == DG_HJI_DERIV_WENO5) F(pass_eps)(&s, v);
#pragma omp parallel num_threads(s.nthreads)
    {
        F(tws) *w = &s.tw[omp_get_thread_num()];
#pragma omp for schedule(static)
        for (int64_t r = 0; r < s.rows; r++) {
            F(decode)(&s, w, r);
            F(row_derivs)(&s, w, v, r);
            for (int k = 0; k < s.nd; k++) {
                const int64_t at = (int64_t)k * s.nodes + r * s.nl;
                const REAL *pl = w->pl + (int64_t)k * s.nlp, *pr = w->pr + (int64_t)k * s.nlp;
                for (int i = 0; i < s.nl; i++) {
                    if (left) left[at + i] = pl[i];
                    if (right) right[at + i] = pr[i];
                    if (grad) grad[at + i] = (REAL)0.5 * (pl[i] + pr[i]);
                }
            }
        }
    }
cleanup:
    F(solver_free)(&s);
    return rc;
}

/* --------------------------------------------------------------- interpolation */

/* Central difference of v along axis k at the node with multi-index idx (one-sided at a plain edge). */
static double F(node_grad)(const dg_hji_grid *g, const REAL *v, const int *idx, int64_t j, int k) {
    const int n = g->n[k], i = idx[k];
    const int64_t st = g->stride[k];
    if (g->bc[k] == DG_HJI_BC_PERIODIC) {
        const int64_t jp = j + (int64_t)(hji_wrap(i + 1, n) - i) * st;
        const int64_t jm = j + (int64_t)(hji_wrap(i - 1, n) - i) * st;
        return ((double)v[jp] - (double)v[jm]) / (2 * g->dx[k]);
    }
    if (i == 0) return ((double)v[j + st] - (double)v[j]) / g->dx[k];
    if (i == n - 1) return ((double)v[j] - (double)v[j - st]) / g->dx[k];
    return ((double)v[j + st] - (double)v[j - st]) / (2 * g->dx[k]);
}

double F(hji_interp)(const dg_hji_grid *g, const REAL *v, const double *x, double *grad) {
    const int nd = g->ndim;
    int i0[DG_HJI_MAX_DIMS], i1[DG_HJI_MAX_DIMS];
    double t[DG_HJI_MAX_DIMS], off[DG_HJI_MAX_DIMS], gl[DG_HJI_MAX_DIMS];
    int outside = 0;
    for (int k = 0; k < nd; k++) {
        const int n = g->n[k];
        off[k] = 0;
        if (g->bc[k] == DG_HJI_BC_PERIODIC) {
            double u = (x[k] - g->lo[k]) / g->dx[k];
            if (!isfinite(u)) u = 0;
            u = fmod(u, (double)n);
            if (u < 0) u += n;
            int i = (int)floor(u);
            if (i < 0) i = 0;
            if (i > n - 1) i = n - 1;
            double f = u - i;
            t[k] = f < 0 ? 0 : f > 1 ? 1 : f;
            i0[k] = i;
            i1[k] = (i + 1) % n;
        } else {
            const double top = g->lo[k] + (n - 1) * g->dx[k];
            double c = x[k];
            if (isnan(c)) c = g->lo[k];
            if (c < g->lo[k]) c = g->lo[k];
            if (c > top) c = top;
            if (isfinite(x[k]) && x[k] != c) {
                off[k] = x[k] - c;
                outside = 1;
            }
            const double u = (c - g->lo[k]) / g->dx[k];
            int i = (int)floor(u);
            if (i < 0) i = 0;
            if (i > n - 2) i = n - 2;
            double f = u - i;
            t[k] = f < 0 ? 0 : f > 1 ? 1 : f;
            i0[k] = i;
            i1[k] = i + 1;
        }
    }
    const int want_grad = grad || outside;
    double val = 0;
    for (int k = 0; k < nd; k++) gl[k] = 0;
    for (int c = 0; c < (1 << nd); c++) {
        double w = 1;
        int idx[DG_HJI_MAX_DIMS];
        int64_t j = 0;
        for (int k = 0; k < nd; k++) {
            const int hi = (c >> k) & 1;
            idx[k] = hi ? i1[k] : i0[k];
            w *= hi ? t[k] : 1 - t[k];
            j += (int64_t)idx[k] * g->stride[k];
        }
        if (w == 0) continue;
        val += w * (double)v[j];
        if (want_grad)
            for (int k = 0; k < nd; k++) gl[k] += w * F(node_grad)(g, v, idx, j, k);
    }
    for (int k = 0; k < nd; k++) val += gl[k] * off[k];
    if (grad)
        for (int k = 0; k < nd; k++) grad[k] = gl[k];
    return val;
}

#undef F
#undef HJI_CAT
#undef HJI_CAT2
