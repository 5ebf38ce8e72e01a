/* The safety filter of one state on a grid game (include/difgames/hji_game.h, dg_hji_filter_row): the
 * switch filter and the qp (HJ control-barrier) filter's closed form, in the filtered player's action
 * coordinates. What the trainer's safety filter (src/solver/safety.c), the Python package's dg.hji
 * filter (src/hji/flat.c) and the plain-C export (src/export/value.c writes the same statements) run. */
#include <math.h>
#include <string.h>

#include "difgames/hji_game.h"

/* The action coordinate ([-1, 1]) of value w in the box [lo, hi]. */
static double to_action(double w, double lo, double hi) { return hi > lo ? (2 * w - lo - hi) / (hi - lo) : 0.0; }

/* The projection of a (n, [-1, 1]) onto {b in [-1, 1]^n : g.b >= c} into out: clip(a + lambda g)
 * with the least lambda >= 0 that meets the constraint, found along the breakpoints where the
 * components saturate (g.clip(a + lambda g) is piecewise linear and nondecreasing in lambda);
 * when even lambda -> infinity (b_j = sign g_j) misses it, that maximiser of g.b. jac (n, n; may be
 * NULL) gets d out / d a: I - g_F g_F' / |g_F|^2 on the free components F when the constraint is
 * active, the identity when not. jx (n, nx; may be NULL) gets d out / d x through c alone (dcdx,
 * nx: the bound's derivative in the state): g_F dcdx' / |g_F|^2 on F when active, else 0. Returns 1
 * when it moved a. */
static int project_box(int n, const double *a, const double *g, double c, double *out, double *jac, int nx,
                       const double *dcdx, double *jx) {
    double dot = 0, l[DG_HJI_MAX_INPUT], bp[DG_HJI_MAX_INPUT];
    int nb = 0;
    for (int j = 0; j < n; j++) {
        out[j] = a[j] < -1 ? -1 : a[j] > 1 ? 1 : a[j];
        dot += g[j] * out[j];
        l[j] = g[j] != 0 ? ((g[j] > 0 ? 1 : -1) - out[j]) / g[j] : 0;  /* where j saturates (0: never moves) */
        if (l[j] > 0) bp[nb++] = l[j];
    }
    if (jac) {
        memset(jac, 0, (size_t)n * n * sizeof *jac);
        for (int j = 0; j < n; j++) jac[j * n + j] = a[j] > -1 && a[j] < 1;
    }
    if (jx) memset(jx, 0, (size_t)n * nx * sizeof *jx);
    if (dot >= c) return 0;
    for (int i = 1; i < nb; i++)  /* insertion sort: n is small */
        for (int k = i; k > 0 && bp[k] < bp[k - 1]; k--) {
            const double t = bp[k];
            bp[k] = bp[k - 1], bp[k - 1] = t;
        }
    double lam = 0, phi = dot;
    int done = 0;
    for (int i = 0; i < nb && !done; i++) {  /* on [lam, bp[i]): the slope |g_F|^2 of those not saturated */
        double slope = 0;
        for (int j = 0; j < n; j++)
            if (l[j] > lam) slope += g[j] * g[j];
        if (phi + slope * (bp[i] - lam) >= c) {
            lam += (c - phi) / slope;
            done = 1;
        } else {
            phi += slope * (bp[i] - lam);
            lam = bp[i];
        }
    }
    double gf2 = 0;
    int fr[DG_HJI_MAX_INPUT], nfree = 0;
    for (int j = 0; j < n; j++) {
        if (!done) {
            out[j] = g[j] > 0 ? 1 : g[j] < 0 ? -1 : out[j];  /* no action meets it: the nearest, g's maximiser */
        } else if (l[j] > lam) {
            out[j] += lam * g[j];
            fr[nfree++] = j, gf2 += g[j] * g[j];
        } else if (l[j] > 0) {
            out[j] = g[j] > 0 ? 1 : -1;
        }
    }
    if (jac) {
        for (int j = 0; j < n; j++)  /* saturated components no longer follow a */
            if (g[j] != 0 && !(done && l[j] > lam)) jac[j * n + j] = 0;
        if (done && gf2 > 0)
            for (int i = 0; i < nfree; i++)
                for (int k = 0; k < nfree; k++) jac[fr[i] * n + fr[k]] -= g[fr[i]] * g[fr[k]] / gf2;
    }
    if (jx && done && gf2 > 0)  /* lambda = (c - g.out_saturated) / |g_F|^2: out_F moves with c */
        for (int i = 0; i < nfree; i++)
            for (int k = 0; k < nx; k++) jx[fr[i] * nx + k] = g[fr[i]] / gf2 * dcdx[k];
    return 1;
}

/* qp's row for the player who (0: u, 1: d) and, jx (A, nx; may be NULL), d out / d x through the bound
 * c(x) = -gamma V(x) - grad V . (f(x) + M_o(x) o*) (o the other player, M_o its block of G or D, o* its
 * optimal input) with grad V and o* held (the grid's interpolation has no second derivative to give;
 * f's and M_o's by central differences), so the bound's pull on the action reaches the state (the
 * policy learns to keep where the barrier holds, safety.penalty). out and jac are the same bits with
 * or without jx. */
static int qp_row(const dg_hji_game *gm, int who, const double *x, double V, const double *grad, double gamma,
                  const double *a, double *out, double *jac, double *jx) {
    const dg_hji_input *me = who ? &gm->d : &gm->u, *ot = who ? &gm->u : &gm->d;
    const int nx = gm->nx, A = me->dim, no = ot->dim;
    double os[DG_HJI_MAX_INPUT];
    dg_hji_game_optimal(gm, x, grad, who ? os : NULL, who ? NULL : os);
    /* grad V . (f + M_me a + M_o o*) >= -gamma V, in the action's coordinates a = c + h a'; f zeroed
       first: a game's dyn writes only the drift's nonzero components (chauffeur's f[1]) */
    double f[DG_HJI_MAX_DIMS] = {0}, G[DG_HJI_MAX_DIMS * DG_HJI_MAX_INPUT] = {0},
           D[DG_HJI_MAX_DIMS * DG_HJI_MAX_INPUT] = {0};
    gm->dyn(gm->user, x, f, G, D);
    const double *Mm = who ? D : G, *Mo = who ? G : D;
    double c = -gamma * V, g[DG_HJI_MAX_INPUT];
    for (int i = 0; i < nx; i++) {
        double di = f[i];
        for (int k = 0; k < no; k++) di += Mo[i * no + k] * os[k];
        c -= grad[i] * di;
    }
    for (int j = 0; j < A; j++) {
        double gj = 0;
        for (int i = 0; i < nx; i++) gj += grad[i] * Mm[i * A + j];
        const double h = 0.5 * (me->hi[j] - me->lo[j]), cen = 0.5 * (me->hi[j] + me->lo[j]);
        c -= gj * cen;
        g[j] = gj * h;
    }
    double dcdx[DG_HJI_MAX_DIMS] = {0};
    for (int k = 0; jx && k < nx; k++) {  /* d c / d x_k: -gamma V_k - grad V . d(f + M_o o*)/dx_k */
        double xp[DG_HJI_MAX_DIMS], fp[DG_HJI_MAX_DIMS] = {0}, fm[DG_HJI_MAX_DIMS] = {0};
        double Gp[DG_HJI_MAX_DIMS * DG_HJI_MAX_INPUT] = {0}, Dp[DG_HJI_MAX_DIMS * DG_HJI_MAX_INPUT] = {0};
        const double *Mp = who ? Gp : Dp;
        const double h = 1e-6 * (1 + fabs(x[k]));
        memcpy(xp, x, (size_t)nx * sizeof *xp);
        xp[k] = x[k] + h;
        gm->dyn(gm->user, xp, fp, Gp, Dp);
        for (int i = 0; i < nx; i++)
            for (int q = 0; q < no; q++) fp[i] += Mp[i * no + q] * os[q];
        xp[k] = x[k] - h;
        memset(Gp, 0, sizeof Gp);
        memset(Dp, 0, sizeof Dp);
        gm->dyn(gm->user, xp, fm, Gp, Dp);
        for (int i = 0; i < nx; i++)
            for (int q = 0; q < no; q++) fm[i] += Mp[i * no + q] * os[q];
        dcdx[k] = -gamma * grad[k];
        for (int i = 0; i < nx; i++) dcdx[k] -= grad[i] * (fp[i] - fm[i]) / (2 * h);
    }
    return project_box(A, a, g, c, out, jac, nx, dcdx, jx);
}

int dg_hji_filter_row(const dg_hji_game *gm, int player, int mode, double margin, double gamma, const double *x,
                      double V, const double *grad, const double *a, double *out, double *jac, double *jx) {
    const dg_hji_input *me = player ? &gm->d : &gm->u;
    const int A = me->dim, nx = gm->nx;
    if (mode == DG_HJI_FILTER_QP) return qp_row(gm, player, x, V, grad, gamma, a, out, jac, jx);
    memcpy(out, a, (size_t)A * sizeof *out);
    if (jx) memset(jx, 0, (size_t)A * nx * sizeof *jx);
    if (jac) {
        memset(jac, 0, (size_t)A * A * sizeof *jac);
        for (int j = 0; j < A; j++) jac[j * A + j] = 1;
    }
    if (!(V <= margin)) return 0;
    double best[DG_HJI_MAX_INPUT];
    dg_hji_game_optimal(gm, x, grad, player ? NULL : best, player ? best : NULL);
    for (int j = 0; j < A; j++) out[j] = to_action(best[j], me->lo[j], me->hi[j]);
    if (jac) memset(jac, 0, (size_t)A * A * sizeof *jac);
    return 1;
}
