/* The one small-matrix kernel behind linear and matmul, forward and backward:
 *     C[m, n] += Σ_k A[m·a_rs + k·a_cs] · B[k·ldb + n]
 * with B's rows and C's rows contiguous in n. Register-blocked (4 rows × 32
 * columns of C live in 8 vector accumulators across the whole k loop), so C
 * is loaded and stored once, not once per k. Each C element sums its k terms
 * in order, whatever the blocking: results do not depend on the shapes' split. */
#include <string.h>

#include "core/internal.h"

typedef float v16 __attribute__((vector_size(64)));

static inline v16 ld(const float *p) {
    v16 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void st(float *p, v16 v) { memcpy(p, &v, sizeof v); }

/* rows m0..m0+R (R <= 4), columns n0..n0+32 */
static inline void block_4x32(int R, int K, const float *A, int64_t a_rs, int64_t a_cs,
                              const float *B, int64_t ldb, float *C, int64_t ldc) {
    v16 c0[4], c1[4];
    for (int r = 0; r < R; r++) {
        c0[r] = ld(C + r * ldc);
        c1[r] = ld(C + r * ldc + 16);
    }
    if (R == 4) {
        for (int k = 0; k < K; k++) {
            const v16 b0 = ld(B + k * ldb), b1 = ld(B + k * ldb + 16);
            const float a0 = A[k * a_cs], a1 = A[a_rs + k * a_cs];
            const float a2 = A[2 * a_rs + k * a_cs], a3 = A[3 * a_rs + k * a_cs];
            c0[0] += a0 * b0; c1[0] += a0 * b1;
            c0[1] += a1 * b0; c1[1] += a1 * b1;
            c0[2] += a2 * b0; c1[2] += a2 * b1;
            c0[3] += a3 * b0; c1[3] += a3 * b1;
        }
    } else {
        for (int k = 0; k < K; k++) {
            const v16 b0 = ld(B + k * ldb), b1 = ld(B + k * ldb + 16);
            for (int r = 0; r < R; r++) {
                const float a = A[r * a_rs + k * a_cs];
                c0[r] += a * b0;
                c1[r] += a * b1;
            }
        }
    }
    for (int r = 0; r < R; r++) {
        st(C + r * ldc, c0[r]);
        st(C + r * ldc + 16, c1[r]);
    }
}

/* rows m0..m0+R (R <= 4), columns n0..n0+N (N < 32): one vector or scalars */
static inline void block_4xn(int R, int N, int K, const float *A, int64_t a_rs, int64_t a_cs,
                             const float *B, int64_t ldb, float *C, int64_t ldc) {
    int n = 0;
    if (N >= 16) {
        v16 c[4];
        for (int r = 0; r < R; r++) c[r] = ld(C + r * ldc);
        for (int k = 0; k < K; k++) {
            const v16 b = ld(B + k * ldb);
            for (int r = 0; r < R; r++) c[r] += A[r * a_rs + k * a_cs] * b;
        }
        for (int r = 0; r < R; r++) st(C + r * ldc, c[r]);
        n = 16;
    }
    for (int r = 0; r < R; r++)
        for (int j = n; j < N; j++) {
            float acc = C[r * ldc + j];
            for (int k = 0; k < K; k++) acc += A[r * a_rs + k * a_cs] * B[k * ldb + j];
            C[r * ldc + j] = acc;
        }
}

void dg__gemm_acc(int M, int N, int K, const float *A, int64_t a_rs, int64_t a_cs,
                  const float *B, int64_t ldb, float *C, int64_t ldc) {
    for (int m = 0; m < M; m += 4) {
        const int R = M - m < 4 ? M - m : 4;
        const float *Am = A + m * a_rs;
        float *Cm = C + m * ldc;
        int n = 0;
        for (; n + 32 <= N; n += 32) block_4x32(R, K, Am, a_rs, a_cs, B + n, ldb, Cm + n, ldc);
        if (n < N) block_4xn(R, N - n, K, Am, a_rs, a_cs, B + n, ldb, Cm + n, ldc);
    }
}
