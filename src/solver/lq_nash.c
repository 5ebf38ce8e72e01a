/* The stationary feedback Nash equilibrium of a discounted discrete-time N-player LQ game: the
 * coupled Riccati equations solved by the backward recursion (include/difgames/lq_nash.h). All in
 * double, whatever the tape's precision: nothing here is on the tape. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/lq_nash.h"

/* C (r, c) = op(A) (r, k) · B (k, c), op(A) = A, or Aᵀ when ta (A then stored (k, r)) */
static void mm(double *C, const double *A, const double *B, int r, int k, int c, int ta) {
    for (int i = 0; i < r; i++)
        for (int j = 0; j < c; j++) {
            double s = 0;
            for (int l = 0; l < k; l++) s += (ta ? A[(size_t)l * r + i] : A[(size_t)i * k + l]) * B[(size_t)l * c + j];
            C[(size_t)i * c + j] = s;
        }
}

/* DG_OK when g is a game dg_lq_nash_solve takes; *M: the inputs together */
static dg_status check_game(const dg_lq_game *g, int *M, dg_err *e) {
    if (!g) return dg_err_set(e, DG_ERR_ARG, "lq nash: no game");
    if (g->n < 1 || g->n > DG_LQ_MAX_DIM)
        return dg_err_set(e, DG_ERR_ARG, "lq nash: the state dimension n is %d, not 1 to %d", g->n, DG_LQ_MAX_DIM);
    if (g->nplayers < 1 || g->nplayers > DG_LQ_MAX_PLAYERS)
        return dg_err_set(e, DG_ERR_ARG, "lq nash: %d players, not 1 to %d", g->nplayers, DG_LQ_MAX_PLAYERS);
    if (!(g->beta > 0 && g->beta <= 1))
        return dg_err_set(e, DG_ERR_ARG, "lq nash: the discount beta is %g, not in (0, 1]", g->beta);
    if (!g->A) return dg_err_set(e, DG_ERR_ARG, "lq nash: no matrix A");
    *M = 0;
    for (int i = 0; i < g->nplayers; i++) {
        if (g->m[i] < 1 || g->m[i] > DG_LQ_MAX_DIM - *M)
            return dg_err_set(e, DG_ERR_ARG, "lq nash: player %d's input dimension is %d (1 or more, at most %d for "
                              "all players together)", i + 1, g->m[i], DG_LQ_MAX_DIM);
        if (!g->B[i] || !g->Q[i] || !g->R[i][i])
            return dg_err_set(e, DG_ERR_ARG, "lq nash: player %d lacks %s", i + 1,
                              !g->B[i] ? "B_i" : !g->Q[i] ? "Q_i" : "R_ii");
        *M += g->m[i];
    }
    return DG_OK;
}

/* player i's rows of the stacked gains start at off[i] */
static void offsets(const dg_lq_game *g, int *off) {
    off[0] = 0;
    for (int i = 1; i < g->nplayers; i++) off[i] = off[i - 1] + g->m[i - 1];
}

/* The stacked best-response system of the gains at values P: S (M, M) K (M, n) = Rhs (M, n), block (i, j) of S
 * = delta_ij R_ii + beta B_i'P_i B_j, rows i of Rhs beta B_i'P_i A. T (DG_LQ_MAX_DIM, n) and BP scratch. */
static void gain_system(const dg_lq_game *g, const double *const *P, const int *off, int M, double *S, double *Rhs,
                        double *T, double *BP) {
    const int n = g->n;
    for (int i = 0; i < g->nplayers; i++) {
        mm(T, g->B[i], P[i], g->m[i], n, n, 1);  /* B_i'P_i (m_i, n) */
        for (int k = 0; k < g->m[i] * n; k++) T[k] *= g->beta;
        mm(Rhs + (size_t)off[i] * n, T, g->A, g->m[i], n, n, 0);
        for (int j = 0; j < g->nplayers; j++) {
            mm(BP, T, g->B[j], g->m[i], n, g->m[j], 0);
            for (int r = 0; r < g->m[i]; r++)
                for (int c = 0; c < g->m[j]; c++)
                    S[(size_t)(off[i] + r) * M + off[j] + c] =
                        BP[(size_t)r * g->m[j] + c] + (i == j ? g->R[i][i][(size_t)r * g->m[i] + c] : 0.0);
        }
    }
}

/* Solves S X = Rhs in place (Rhs becomes X; S is destroyed), Gaussian elimination with partial pivoting;
 * 0, or -1 when a pivot is below 1e-13 of S's largest entry (singular) */
static int solve(double *S, double *Rhs, int M, int n) {
    double big = 0;
    for (int k = 0; k < M * M; k++) big = fmax(big, fabs(S[k]));
    for (int c = 0; c < M; c++) {
        int p = c;
        for (int r = c + 1; r < M; r++)
            if (fabs(S[(size_t)r * M + c]) > fabs(S[(size_t)p * M + c])) p = r;
        if (!(fabs(S[(size_t)p * M + c]) > 1e-13 * big)) return -1;
        if (p != c) {
            for (int k = 0; k < M; k++) {
                const double t = S[(size_t)c * M + k];
                S[(size_t)c * M + k] = S[(size_t)p * M + k];
                S[(size_t)p * M + k] = t;
            }
            for (int k = 0; k < n; k++) {
                const double t = Rhs[(size_t)c * n + k];
                Rhs[(size_t)c * n + k] = Rhs[(size_t)p * n + k];
                Rhs[(size_t)p * n + k] = t;
            }
        }
        for (int r = c + 1; r < M; r++) {
            const double f = S[(size_t)r * M + c] / S[(size_t)c * M + c];
            if (f == 0) continue;
            for (int k = c; k < M; k++) S[(size_t)r * M + k] -= f * S[(size_t)c * M + k];
            for (int k = 0; k < n; k++) Rhs[(size_t)r * n + k] -= f * Rhs[(size_t)c * n + k];
        }
    }
    for (int c = M - 1; c >= 0; c--)
        for (int k = 0; k < n; k++) {
            double s = Rhs[(size_t)c * n + k];
            for (int j = c + 1; j < M; j++) s -= S[(size_t)c * M + j] * Rhs[(size_t)j * n + k];
            Rhs[(size_t)c * n + k] = s / S[(size_t)c * M + c];
        }
    return 0;
}

/* F = A - sum_j B_j K_j (n, n); K stacked (M, n) */
static void closed_loop(const dg_lq_game *g, const double *Kst, const int *off, double *F, double *BK) {
    const int n = g->n;
    memcpy(F, g->A, (size_t)n * n * sizeof *F);
    for (int j = 0; j < g->nplayers; j++) {
        mm(BK, g->B[j], Kst + (size_t)off[j] * n, n, g->m[j], n, 0);
        for (int k = 0; k < n * n; k++) F[k] -= BK[k];
    }
}

/* Pn = Q_i + sum_j K_j'R_ij K_j + beta F'P_i F (n, n); U (DG_LQ_MAX_DIM, n) and V (n, n) scratch */
static void value_of(const dg_lq_game *g, int i, const double *Kst, const int *off, const double *F, const double *Pi,
                     double *Pn, double *U, double *V) {
    const int n = g->n;
    memcpy(Pn, g->Q[i], (size_t)n * n * sizeof *Pn);
    for (int j = 0; j < g->nplayers; j++) {
        if (!g->R[i][j]) continue;
        mm(U, g->R[i][j], Kst + (size_t)off[j] * n, g->m[j], g->m[j], n, 0);  /* R_ij K_j */
        mm(V, Kst + (size_t)off[j] * n, U, n, g->m[j], n, 1);                   /* K_j'R_ij K_j */
        for (int k = 0; k < n * n; k++) Pn[k] += V[k];
    }
    mm(U, Pi, F, n, n, n, 0);     /* P_i F */
    mm(V, F, U, n, n, n, 1);      /* F'P_i F */
    for (int k = 0; k < n * n; k++) Pn[k] += g->beta * V[k];
}

/* scratch of one solve or residual: every buffer of DG_LQ_MAX_DIM² doubles */
enum { NBUF = 8 };

dg_status dg_lq_nash_solve(const dg_lq_game *g, const dg_lq_nash_opts *o, double *const *K, double *const *P,
                           dg_lq_nash_info *info, dg_err *e) {
    int M, off[DG_LQ_MAX_PLAYERS];
    dg_status st = check_game(g, &M, e);
    if (st) return st;
    if (!K || !P) return dg_err_set(e, DG_ERR_ARG, "lq nash: no arrays for the gains and values");
    for (int i = 0; i < g->nplayers; i++)
        if (!K[i] || !P[i]) return dg_err_set(e, DG_ERR_ARG, "lq nash: no arrays for player %d's gains and values", i + 1);
    const int max_iter = o && o->max_iter > 0 ? o->max_iter : 100000;
    const double tol = o && o->tol > 0 ? o->tol : 1e-14;
    const int n = g->n, N = g->nplayers;
    const size_t sq = (size_t)DG_LQ_MAX_DIM * DG_LQ_MAX_DIM;
    double *w = malloc((NBUF + (size_t)N) * sq * sizeof *w);
    if (!w) return dg_err_set(e, DG_ERR_NOMEM, "lq nash: out of memory");
    double *S = w, *Kst = w + sq, *T = w + 2 * sq, *X = w + 3 * sq, *F = w + 4 * sq, *U = w + 5 * sq,
           *V = w + 6 * sq, *Pn = w + NBUF * sq;
    offsets(g, off);
    dg_lq_nash_info in = {0};
    for (int i = 0; i < N; i++) memset(P[i], 0, (size_t)n * n * sizeof *P[i]);  /* the game of no step */
    st = DG_OK;
    for (in.iterations = 1; in.iterations <= max_iter; in.iterations++) {
        gain_system(g, (const double *const *)P, off, M, S, Kst, T, X);
        if (solve(S, Kst, M, n)) {
            st = dg_err_set(e, DG_ERR_ARG, "lq nash: the players' best responses are not unique at round %d (the "
                            "stacked gain system is singular)", in.iterations);
            break;
        }
        closed_loop(g, Kst, off, F, U);
        double change = 0, size = 0;
        for (int i = 0; i < N; i++) {
            value_of(g, i, Kst, off, F, P[i], Pn + (size_t)i * sq, U, V);
            for (int r = 0; r < n; r++)  /* symmetric by construction: keep rounding from making it less so */
                for (int c = 0; c < r; c++) {
                    double *a = Pn + (size_t)i * sq + (size_t)r * n + c, *b = Pn + (size_t)i * sq + (size_t)c * n + r;
                    *a = *b = 0.5 * (*a + *b);
                }
            for (int k = 0; k < n * n; k++) {
                change = fmax(change, fabs(Pn[(size_t)i * sq + k] - P[i][k]));
                size = fmax(size, fabs(Pn[(size_t)i * sq + k]));
            }
            memcpy(P[i], Pn + (size_t)i * sq, (size_t)n * n * sizeof *P[i]);
        }
        for (int i = 0; i < N; i++) memcpy(K[i], Kst + (size_t)off[i] * n, (size_t)g->m[i] * n * sizeof *K[i]);
        in.change = change;
        if (!isfinite(size) || size > 1e300) {
            st = dg_err_set(e, DG_ERR_NONFINITE, "lq nash: the values diverge at round %d (no stationary equilibrium "
                            "with finite cost: is every player's closed loop stabilisable?)", in.iterations);
            break;
        }
        if (change <= tol * (1 + size)) {
            in.converged = 1;
            break;
        }
    }
    if (!in.converged && st == DG_OK) {
        in.iterations = max_iter;
        st = dg_err_set(e, DG_ERR_ARG, "lq nash: not converged in %d rounds (the values still change by %.3g)",
                        max_iter, in.change);
    }
    if (info) *info = in;
    free(w);
    return st;
}

dg_status dg_lq_nash_residual(const dg_lq_game *g, const double *const *K, const double *const *P, double *residual,
                              dg_err *e) {
    int M, off[DG_LQ_MAX_PLAYERS];
    dg_status st = check_game(g, &M, e);
    if (st) return st;
    if (!K || !P || !residual) return dg_err_set(e, DG_ERR_ARG, "lq nash: no gains, values or result");
    const int n = g->n, N = g->nplayers;
    const size_t sq = (size_t)DG_LQ_MAX_DIM * DG_LQ_MAX_DIM;
    double *w = malloc(NBUF * sq * sizeof *w);
    if (!w) return dg_err_set(e, DG_ERR_NOMEM, "lq nash: out of memory");
    double *S = w, *Rhs = w + sq, *T = w + 2 * sq, *X = w + 3 * sq, *F = w + 4 * sq, *U = w + 5 * sq, *V = w + 6 * sq,
           *Kst = w + 7 * sq;
    offsets(g, off);
    for (int i = 0; i < N; i++) memcpy(Kst + (size_t)off[i] * n, K[i], (size_t)g->m[i] * n * sizeof *Kst);
    double res = 0;
    gain_system(g, P, off, M, S, Rhs, T, X);
    mm(X, S, Kst, M, M, n, 0);  /* S K - Rhs */
    for (int k = 0; k < M * n; k++) res = fmax(res, fabs(X[k] - Rhs[k]));
    closed_loop(g, Kst, off, F, U);
    for (int i = 0; i < N; i++) {
        value_of(g, i, Kst, off, F, P[i], S, U, V);
        for (int k = 0; k < n * n; k++) res = fmax(res, fabs(S[k] - P[i][k]));
    }
    *residual = res;
    free(w);
    return DG_OK;
}

dg_status dg_lq_nash_cost(const dg_lq_game *g, const double *const *K, const double *x0, int steps, double *cost,
                          dg_err *e) {
    int M;
    dg_status st = check_game(g, &M, e);
    if (st) return st;
    if (!K || !x0 || !cost || steps < 1) return dg_err_set(e, DG_ERR_ARG, "lq nash: cost needs gains, a start, a result "
                                                           "and steps >= 1");
    const int n = g->n, N = g->nplayers;
    double x[DG_LQ_MAX_DIM], xn[DG_LQ_MAX_DIM], u[DG_LQ_MAX_DIM], Ru[DG_LQ_MAX_DIM], Qx[DG_LQ_MAX_DIM];
    int off[DG_LQ_MAX_PLAYERS];
    offsets(g, off);
    memcpy(x, x0, (size_t)n * sizeof *x);
    for (int i = 0; i < N; i++) cost[i] = 0;
    double disc = 1;
    for (int t = 0; t < steps; t++) {
        for (int j = 0; j < N; j++) {  /* u_j = -K_j x */
            mm(u + off[j], K[j], x, g->m[j], n, 1, 0);
            for (int k = 0; k < g->m[j]; k++) u[off[j] + k] = -u[off[j] + k];
        }
        for (int i = 0; i < N; i++) {
            double c = 0;
            mm(Qx, g->Q[i], x, n, n, 1, 0);
            for (int k = 0; k < n; k++) c += x[k] * Qx[k];
            for (int j = 0; j < N; j++) {
                if (!g->R[i][j]) continue;
                mm(Ru, g->R[i][j], u + off[j], g->m[j], g->m[j], 1, 0);
                for (int k = 0; k < g->m[j]; k++) c += u[off[j] + k] * Ru[k];
            }
            cost[i] += disc * c;
        }
        mm(xn, g->A, x, n, n, 1, 0);
        for (int j = 0; j < N; j++) {
            mm(Ru, g->B[j], u + off[j], n, g->m[j], 1, 0);
            for (int k = 0; k < n; k++) xn[k] += Ru[k];
        }
        memcpy(x, xn, (size_t)n * sizeof *x);
        for (int k = 0; k < n; k++)
            if (!isfinite(x[k])) return dg_err_set(e, DG_ERR_NONFINITE, "lq nash: the state blows up at step %d", t + 1);
        disc *= g->beta;
    }
    return DG_OK;
}
