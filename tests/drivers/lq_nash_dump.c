/* The library's side of tests/lq_feedback_ref.py: the stationary feedback Nash gains and values of an
 * LQ game given on the command line, by dg_lq_nash_solve (include/difgames/lq_nash.h), with the
 * coupled equations' residual (dg_lq_nash_residual), for the script to compare learned policies with.
 *
 * usage: lq_nash_dump N NPLAYERS BETA A(N*N) then per player i: M_i B_i(N*M_i) Q_i(N*N) R_ii(M_i*M_i)
 *   matrices row-major, every number its own argument; R_ij = 0 for j != i.
 * Prints one line per matrix, "K i v..." (M_i x N) and "P i v..." (N x N) with 17 significant digits,
 * then "residual r" and "rounds k". Exit 0; 1 when the solver fails; 2 with one line on stderr for bad
 * arguments. */
#include <stdio.h>
#include <stdlib.h>

#include "difgames/difgames.h"
#include "difgames/lq_nash.h"

/* The next argument as a double into *v; 0, or 1 when there is none or it is not a number. */
static int next_number(int argc, char **argv, int *k, double *v) {
    char *end = NULL;
    if (*k >= argc) return 1;
    *v = strtod(argv[*k], &end);
    if (end == argv[*k] || *end) return 1;
    (*k)++;
    return 0;
}

/* Reads count numbers into a new array *out; 0, or 1 (missing or bad numbers, no memory). */
static int next_matrix(int argc, char **argv, int *k, int count, double **out) {
    *out = malloc((size_t)count * sizeof **out);
    if (!*out) return 1;
    for (int i = 0; i < count; i++)
        if (next_number(argc, argv, k, &(*out)[i])) return 1;
    return 0;
}

/* Prints name, the player's index and the matrix's count numbers on one line. */
static void print_matrix(const char *name, int i, const double *v, int count) {
    printf("%s %d", name, i);
    for (int j = 0; j < count; j++) printf(" %.17g", v[j]);
    printf("\n");
}

int main(int argc, char **argv) {
    dg_lq_game g = {0};
    double *K[DG_LQ_MAX_PLAYERS] = {0}, *P[DG_LQ_MAX_PLAYERS] = {0}, *A = NULL, beta = 0, v = 0;
    int k = 1;
    if (next_number(argc, argv, &k, &v) || v < 1 || v > DG_LQ_MAX_DIM) goto usage;
    g.n = (int)v;
    if (next_number(argc, argv, &k, &v) || v < 1 || v > DG_LQ_MAX_PLAYERS) goto usage;
    g.nplayers = (int)v;
    if (next_number(argc, argv, &k, &beta) || next_matrix(argc, argv, &k, g.n * g.n, &A)) goto usage;
    g.beta = beta;
    g.A = A;
    for (int i = 0; i < g.nplayers; i++) {
        double *B = NULL, *Q = NULL, *R = NULL;
        if (next_number(argc, argv, &k, &v) || v < 1 || v > DG_LQ_MAX_DIM) goto usage;
        g.m[i] = (int)v;
        if (next_matrix(argc, argv, &k, g.n * g.m[i], &B) || next_matrix(argc, argv, &k, g.n * g.n, &Q) ||
            next_matrix(argc, argv, &k, g.m[i] * g.m[i], &R))
            goto usage;
        g.B[i] = B, g.Q[i] = Q, g.R[i][i] = R;
        K[i] = calloc((size_t)(g.m[i] * g.n), sizeof(double));
        P[i] = calloc((size_t)(g.n * g.n), sizeof(double));
        if (!K[i] || !P[i]) goto usage;
    }
    if (k != argc) goto usage;
    dg_err e = {0};
    dg_lq_nash_info info = {0};
    double residual = 0;
    if (dg_lq_nash_solve(&g, NULL, K, P, &info, &e) || dg_lq_nash_residual(&g, (const double *const *)K,
                                                                            (const double *const *)P, &residual, &e)) {
        fprintf(stderr, "lq_nash_dump: %s\n", e.msg);
        return 1;
    }
    for (int i = 0; i < g.nplayers; i++) {
        print_matrix("K", i, K[i], g.m[i] * g.n);
        print_matrix("P", i, P[i], g.n * g.n);
    }
    printf("residual %.3g\nrounds %d\n", residual, info.iterations);
    return 0;   /* the arrays go with the process */
usage:
    fprintf(stderr, "lq_nash_dump: usage: lq_nash_dump N NPLAYERS BETA A then per player M B Q R (numbers)\n");
    return 2;
}
