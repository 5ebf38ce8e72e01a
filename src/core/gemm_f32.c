/* The one small-matrix kernel behind linear and matmul, forward and backward:
 *     C[m, n] += Σ_k A[m·a_rs + k·a_cs] · B[k·ldb + n]
 * with B's rows and C's rows contiguous in n. Register-blocked (8 rows × 32
 * columns of C live in 16 vector accumulators across the whole k loop), so C
 * is loaded and stored once, not once per k. Narrow C (fewer than 16
 * columns left: a policy's output layer, the input layer's gradients) is
 * vectorised over m when A's columns are contiguous, or as dot products over
 * k when A's rows are. The path depends only on the shapes and strides, so a
 * given call always sums in the same order: results are reproducible.
 * The float tape's kernels (16-lane vectors of float; compiled in the float copy of the library
 * only); the double tape's are in gemm_f64.c. */
#include <string.h>
#if defined(__AVX512F__) && !defined(DG_F64)
#include <immintrin.h>
#endif

#include "core/internal.h"

#ifndef DG_F64  /* the float tape's kernels (16-lane vectors of float) */

typedef float v16 __attribute__((vector_size(64)));

static inline v16 ld(const float *p) {
    v16 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void st(float *p, v16 v) { memcpy(p, &v, sizeof v); }

typedef float v8 __attribute__((vector_size(32)));
typedef float v4 __attribute__((vector_size(16)));

/* Sum of the 16 lanes as a tree (4 dependent adds, not 15), in registers. */
static inline float hsum(v16 v) {
    v8 h = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
           __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
    v4 q = __builtin_shufflevector(h, h, 0, 1, 2, 3) + __builtin_shufflevector(h, h, 4, 5, 6, 7);
    return (q[0] + q[2]) + (q[1] + q[3]);
}

/* hsum of each of 16 vectors at once: lane j of the result is hsum(v[j]), by the same tree of
 * adds (so the same bits), with the shuffles shared: 15 vector adds instead of 16 x 4 */
static inline v16 hsum16x(const v16 *v) {
    v16 t[8], u[4], w[2];
    for (int i = 0; i < 8; i++)  /* lanes 0..7: h of v[2i]; 8..15: h of v[2i+1] */
        t[i] = __builtin_shufflevector(v[2 * i], v[2 * i + 1], 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
               __builtin_shufflevector(v[2 * i], v[2 * i + 1], 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
    for (int i = 0; i < 4; i++)  /* q (4 lanes) of 4 vectors */
        u[i] = __builtin_shufflevector(t[2 * i], t[2 * i + 1], 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27) +
               __builtin_shufflevector(t[2 * i], t[2 * i + 1], 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
    for (int i = 0; i < 2; i++)  /* (q0 + q2, q1 + q3) of 8 vectors */
        w[i] = __builtin_shufflevector(u[2 * i], u[2 * i + 1], 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29) +
               __builtin_shufflevector(u[2 * i], u[2 * i + 1], 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31);
    return __builtin_shufflevector(w[0], w[1], 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30) +
           __builtin_shufflevector(w[0], w[1], 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
}

/* rows m0..m0+R (R <= 8), columns n0..n0+32: 2R accumulators stay in
 * registers for the whole k loop; each k loads two vectors of B and R scalars of A */
typedef int vi16 __attribute__((vector_size(64)));

static inline v16 sel(vi16 m, v16 a, v16 b) { return (v16)((m & (vi16)a) | (~m & (vi16)b)); }

/* dg__tanhf on 16 lanes: the same operations in the same order, so the same bits (internal.h) */
static inline v16 tanh16(v16 x) {
#if defined(__AVX512F__) && !defined(DG_F64)
    const v16 c = (v16)_mm512_max_ps(_mm512_set1_ps(-DG_TANH_LIM), _mm512_min_ps(_mm512_set1_ps(DG_TANH_LIM), (__m512)x));
    v16 p, q;
    DG_TANH_PQ(v16, c, p, q);
    const __m512 r = _mm512_rcp14_ps((__m512)q);
    return p * (v16)_mm512_fmadd_ps(r, _mm512_fnmadd_ps((__m512)q, r, _mm512_set1_ps(1.0f)), r);
#else
    const v16 ax = (v16)((vi16)x & 0x7fffffff);
    const v16 one = (v16)(((vi16)x & (int)0x80000000) | 0x3f800000);  /* ±1, x's sign */
    v16 y;
#define DG_TANH_ENDS(x, r) sel(ax < 0.0004f, (x), sel(ax > DG_TANH_LIM, one, (r)))
    DG_TANH_BODY(v16, x, y);
#undef DG_TANH_ENDS
    return y;
#endif
}

void dg__tanh_n(int64_t n, const float *x, float *y) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) st(y + i, tanh16(ld(x + i)));
    for (; i < n; i++) y[i] = dg__tanhf(x[i]);
}

/* the accumulators start from C, or from bias (NULL: zero) when init is set; tanh16 is applied
 * before the store when act is set (the fused forward of linear_tanh) */
static inline void block_8x32(int R, int K, const float *A, int64_t a_rs, int64_t a_cs,
                              const float *B, int64_t ldb, float *C, int64_t ldc, int init,
                              const float *bias, int act) {
    v16 c0[8], c1[8];
    const v16 i0 = init && bias ? ld(bias) : (v16){0}, i1 = init && bias ? ld(bias + 16) : (v16){0};
    for (int r = 0; r < R; r++) {
        c0[r] = init ? i0 : ld(C + r * ldc);
        c1[r] = init ? i1 : ld(C + r * ldc + 16);
    }
    if (R == 8) {
        for (int k = 0; k < K; k++) {
            const v16 b0 = ld(B + k * ldb), b1 = ld(B + k * ldb + 16);
            const float *a = A + k * a_cs;
#pragma GCC unroll 8
            for (int r = 0; r < 8; r++) {
                const float ar = a[r * a_rs];
                c0[r] += ar * b0;
                c1[r] += ar * b1;
            }
        }
    } else {
        for (int k = 0; k < K; k++) {
            const v16 b0 = ld(B + k * ldb), b1 = ld(B + k * ldb + 16);
            for (int r = 0; r < R; r++) {
                const float ar = A[r * a_rs + k * a_cs];
                c0[r] += ar * b0;
                c1[r] += ar * b1;
            }
        }
    }
    if (act)
        for (int r = 0; r < R; r++) {
            c0[r] = tanh16(c0[r]);
            c1[r] = tanh16(c1[r]);
        }
    for (int r = 0; r < R; r++) {
        st(C + r * ldc, c0[r]);
        st(C + r * ldc + 16, c1[r]);
    }
}

/* block_8x32 for a full block of 8 rows, its 16 accumulators named (no array, no row count to
 * test) and the k loop unrolled by 4: the same sums in the same order, about 5 % faster on the
 * 64-wide layers than the loop over r (bench/roofline.c) */
static inline __attribute__((always_inline)) void full_8x32_impl(int K, const float *A, int64_t a_rs, int64_t a_cs,
                                                                  const float *B, int64_t ldb, float *C, int64_t ldc,
                                                                  int init, const float *bias, int act, const int has_pf,
                                                                  const float *pf, int pf_lines, int64_t pf_ld, int pf_w) {
    v16 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51, c60, c61, c70, c71;
    if (init) {
        const v16 i0 = bias ? ld(bias) : (v16){0}, i1 = bias ? ld(bias + 16) : (v16){0};
        c00 = c10 = c20 = c30 = c40 = c50 = c60 = c70 = i0;
        c01 = c11 = c21 = c31 = c41 = c51 = c61 = c71 = i1;
    } else {
        c00 = ld(C), c01 = ld(C + 16), c10 = ld(C + ldc), c11 = ld(C + ldc + 16);
        c20 = ld(C + 2 * ldc), c21 = ld(C + 2 * ldc + 16), c30 = ld(C + 3 * ldc), c31 = ld(C + 3 * ldc + 16);
        c40 = ld(C + 4 * ldc), c41 = ld(C + 4 * ldc + 16), c50 = ld(C + 5 * ldc), c51 = ld(C + 5 * ldc + 16);
        c60 = ld(C + 6 * ldc), c61 = ld(C + 6 * ldc + 16), c70 = ld(C + 7 * ldc), c71 = ld(C + 7 * ldc + 16);
    }
#pragma GCC unroll 4
    for (int k = 0; k < K; k++) {
        const v16 b0 = ld(B + k * ldb), b1 = ld(B + k * ldb + 16);
        const float *a = A + k * a_cs;
        if (has_pf && k < pf_lines) {  /* a prefetch a k: line k / 8 of row k % 8 of pf (rows pf_ld apart) */
            const float *q = pf + (k & 7) * pf_ld + (k >> 3) * 16;
            if (pf_w) __builtin_prefetch(q, 1, 3);  /* for writing, into L1 */
            else __builtin_prefetch(q, 0, 2);       /* for reading, into L2 */
        }
        float ar;
        ar = a[0], c00 += ar * b0, c01 += ar * b1;
        ar = a[a_rs], c10 += ar * b0, c11 += ar * b1;
        ar = a[2 * a_rs], c20 += ar * b0, c21 += ar * b1;
        ar = a[3 * a_rs], c30 += ar * b0, c31 += ar * b1;
        ar = a[4 * a_rs], c40 += ar * b0, c41 += ar * b1;
        ar = a[5 * a_rs], c50 += ar * b0, c51 += ar * b1;
        ar = a[6 * a_rs], c60 += ar * b0, c61 += ar * b1;
        ar = a[7 * a_rs], c70 += ar * b0, c71 += ar * b1;
    }
    if (act) {
        c00 = tanh16(c00), c01 = tanh16(c01), c10 = tanh16(c10), c11 = tanh16(c11);
        c20 = tanh16(c20), c21 = tanh16(c21), c30 = tanh16(c30), c31 = tanh16(c31);
        c40 = tanh16(c40), c41 = tanh16(c41), c50 = tanh16(c50), c51 = tanh16(c51);
        c60 = tanh16(c60), c61 = tanh16(c61), c70 = tanh16(c70), c71 = tanh16(c71);
    }
    st(C, c00), st(C + 16, c01), st(C + ldc, c10), st(C + ldc + 16, c11);
    st(C + 2 * ldc, c20), st(C + 2 * ldc + 16, c21), st(C + 3 * ldc, c30), st(C + 3 * ldc + 16, c31);
    st(C + 4 * ldc, c40), st(C + 4 * ldc + 16, c41), st(C + 5 * ldc, c50), st(C + 5 * ldc + 16, c51);
    st(C + 6 * ldc, c60), st(C + 6 * ldc + 16, c61), st(C + 7 * ldc, c70), st(C + 7 * ldc + 16, c71);
}

static void full_8x32(int K, const float *A, int64_t a_rs, int64_t a_cs, const float *B, int64_t ldb, float *C,
                      int64_t ldc, int init, const float *bias, int act) {
    full_8x32_impl(K, A, a_rs, a_cs, B, ldb, C, ldc, init, bias, act, 0, NULL, 0, 0, 0);
}

/* full_8x32 issuing one prefetch a k for its first pf_lines values of k (line k / 8 of row k % 8 of
 * pf, rows pf_ld floats apart; for writing when pf_w is set): a stream from memory spread over
 * the multiply-adds. A separate copy, so that the loop without prefetches stays as it was. */
static void full_8x32_pf(int K, const float *A, int64_t a_rs, int64_t a_cs, const float *B, int64_t ldb, float *C,
                         int64_t ldc, int init, const float *bias, int act, const float *pf, int pf_lines, int64_t pf_ld,
                         int pf_w) {
    full_8x32_impl(K, A, a_rs, a_cs, B, ldb, C, ldc, init, bias, act, 1, pf, pf_lines, pf_ld, pf_w);
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

/* N < 16 columns, A[m, k] = A[m + k·a_cs] (contiguous in m): 16 rows of C at
 * a time, one vector accumulator per column. */
static inline __attribute__((always_inline)) void narrow_over_m_n(int M, int N, int K, const float *A, int64_t a_cs,
                                                                   const float *B, int64_t ldb, float *C, int64_t ldc) {
    int m = 0;
    for (; m + 16 <= M; m += 16) {
        v16 acc[16];
        for (int n = 0; n < N; n++) {  /* column n of 16 rows of C, gathered */
            float col[16];
            for (int j = 0; j < 16; j++) col[j] = C[(int64_t)(m + j) * ldc + n];
            acc[n] = ld(col);
        }
        for (int k = 0; k < K; k++) {
            const v16 a = ld(A + k * a_cs + m);
            const float *b = B + k * ldb;
            for (int n = 0; n < N; n++) acc[n] += b[n] * a;
        }
        for (int n = 0; n < N; n++)
            for (int j = 0; j < 16; j++) C[(int64_t)(m + j) * ldc + n] = acc[n][j];
    }
    for (; m < M; m++)
        for (int n = 0; n < N; n++) {
            float acc = C[(int64_t)m * ldc + n];
            for (int k = 0; k < K; k++) acc += A[m + k * a_cs] * B[k * ldb + n];
            C[(int64_t)m * ldc + n] = acc;
        }
}

/* narrow_over_m_n for N <= 6 columns, 64 rows of C at a time: 4N accumulators (at most 24 of the
 * 32 vector registers), so each multiply-add's broadcast of B serves four vectors of A instead of
 * one (the input layer's weight gradient, 64 x 6 over the batch). Every element is summed in the
 * same order as narrow_over_m_n's, from C's value and k = 0 up, so the same bits. */
static inline __attribute__((always_inline)) void narrow_over_m64_n(int M, int N, int K, const float *A, int64_t a_cs,
                                                                     const float *B, int64_t ldb, float *C, int64_t ldc) {
    for (int m = 0; m + 64 <= M; m += 64) {
        v16 acc[4][6];
#if defined(__AVX512F__) && !defined(DG_F64)  /* a column of 16 rows: one gather, not 16 stores and a load */
        const __m512i rows = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                                _mm512_set1_epi32((int)ldc));
        for (int n = 0; n < N; n++)
            for (int v = 0; v < 4; v++) acc[v][n] = (v16)_mm512_i32gather_ps(rows, C + (int64_t)(m + 16 * v) * ldc + n, 4);
#else
        for (int n = 0; n < N; n++)
            for (int v = 0; v < 4; v++) {
                float col[16];
                for (int j = 0; j < 16; j++) col[j] = C[(int64_t)(m + 16 * v + j) * ldc + n];
                acc[v][n] = ld(col);
            }
#endif
        for (int k = 0; k < K; k++) {
            const float *a = A + k * a_cs + m, *b = B + k * ldb;
            const v16 a0 = ld(a), a1 = ld(a + 16), a2 = ld(a + 32), a3 = ld(a + 48);
            for (int n = 0; n < N; n++) {
                const float bn = b[n];
                acc[0][n] += bn * a0;
                acc[1][n] += bn * a1;
                acc[2][n] += bn * a2;
                acc[3][n] += bn * a3;
            }
        }
#if defined(__AVX512F__) && !defined(DG_F64)
        for (int n = 0; n < N; n++)
            for (int v = 0; v < 4; v++) _mm512_i32scatter_ps(C + (int64_t)(m + 16 * v) * ldc + n, rows, (__m512)acc[v][n], 4);
#else
        for (int n = 0; n < N; n++)
            for (int v = 0; v < 4; v++)
                for (int j = 0; j < 16; j++) C[(int64_t)(m + 16 * v + j) * ldc + n] = acc[v][n][j];
#endif
    }
    const int done = M & ~63;
    if (done < M) narrow_over_m_n(M - done, N, K, A + done, a_cs, B, ldb, C + (int64_t)done * ldc, ldc);
}

/* narrow_over_m with N a constant in each case: the N accumulators stay in registers (with N a
 * variable the compiler keeps them on the stack, a load and a store per multiply-add) */
static void narrow_over_m(int M, int N, int K, const float *A, int64_t a_cs, const float *B, int64_t ldb,
                          float *C, int64_t ldc) {
    switch (N) {
#define NARROW(n) case n: narrow_over_m_n(M, n, K, A, a_cs, B, ldb, C, ldc); break;
#define NARROW64(n) case n:                                                    \
        if (M >= 64) narrow_over_m64_n(M, n, K, A, a_cs, B, ldb, C, ldc);      \
        else narrow_over_m_n(M, n, K, A, a_cs, B, ldb, C, ldc);                \
        break;
    NARROW64(1) NARROW64(2) NARROW64(3) NARROW64(4) NARROW64(5) NARROW64(6)
#undef NARROW64
    NARROW(7) NARROW(8)
    NARROW(9) NARROW(10) NARROW(11) NARROW(12) NARROW(13) NARROW(14) NARROW(15)
#undef NARROW
    default: narrow_over_m_n(M, N, K, A, a_cs, B, ldb, C, ldc); break;
    }
}

#define DOT_CHUNK 512  /* k values of Bᵀ packed at a time (N·512 floats on the stack) */

/* N < 16 columns, A's rows contiguous (a_cs == 1), K >= 16: C[m, n] is a dot
 * product of A's row m and B's column n, packed contiguous first. */
static void narrow_dot(int M, int N, int K, const float *A, int64_t a_rs, const float *B,
                       int64_t ldb, float *C, int64_t ldc) {
    float bt[16 * DOT_CHUNK];  /* Bᵀ chunk: (N, kc) */
    for (int k0 = 0; k0 < K; k0 += DOT_CHUNK) {
        const int kc = K - k0 < DOT_CHUNK ? K - k0 : DOT_CHUNK;
        int kt = 0;
#if defined(__AVX512F__) && !defined(DG_F64)  /* 16 values of a column of B as one gather */
        if (ldb <= (1 << 26)) {
            const __m512i rows = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                                    _mm512_set1_epi32((int)ldb));
            for (; kt + 16 <= kc; kt += 16)
                for (int n = 0; n < N; n++)
                    st(bt + n * kc + kt, (v16)_mm512_i32gather_ps(rows, B + (int64_t)(k0 + kt) * ldb + n, 4));
        }
#endif
        for (int k = kt; k < kc; k++)
            for (int n = 0; n < N; n++) bt[n * kc + k] = B[(int64_t)(k0 + k) * ldb + n];
        const int kv = kc & ~15;
        int m = 0;
        if (N == 6 && ldc == 6 && kv == kc)  /* six columns (the 6-wide input layer's gradient): 4 rows x 6
                                                columns at a time share every load of A and of Bᵀ, and their
                                                24 outputs are 24 contiguous floats of C */
            for (; m + 4 <= M; m += 4) {
                const float *a = A + m * a_rs + k0;
                v16 c[32];
                for (int i = 0; i < 32; i++) c[i] = (v16){0};
                for (int k = 0; k < kv; k += 16) {
                    const v16 a0 = ld(a + k), a1 = ld(a + a_rs + k), a2 = ld(a + 2 * a_rs + k), a3 = ld(a + 3 * a_rs + k);
#pragma GCC unroll 6
                    for (int n = 0; n < 6; n++) {
                        const v16 bv = ld(bt + n * kc + k);
                        c[n] += a0 * bv;
                        c[6 + n] += a1 * bv;
                        c[12 + n] += a2 * bv;
                        c[18 + n] += a3 * bv;
                    }
                }
                const v16 s0 = hsum16x(c), s1 = hsum16x(c + 16);  /* lane i: row m + i / 6, column i % 6 */
                float *cm = C + (int64_t)m * 6;
                st(cm, ld(cm) + s0);
                for (int i = 0; i < 8; i++) cm[16 + i] += s1[i];
            }
        if (N % 2 == 0 && kv == kc)  /* an even count of columns (a 2-wide output layer, the 6-wide input
                                        layer's gradient): 8 rows x 2 columns at a time share the loads of A */
            for (; m + 8 <= M; m += 8) {
                const float *a = A + m * a_rs + k0;
                for (int n = 0; n < N; n += 2) {
                    const float *b = bt + n * kc;
                    v16 c[16];
                    for (int r = 0; r < 16; r++) c[r] = (v16){0};
                    for (int k = 0; k < kv; k += 16) {
                        const v16 b0 = ld(b + k), b1 = ld(b + kc + k);
#pragma GCC unroll 8
                        for (int r = 0; r < 8; r++) {
                            const v16 av = ld(a + r * a_rs + k);
                            c[2 * r] += av * b0;
                            c[2 * r + 1] += av * b1;
                        }
                    }
                    const v16 sum = hsum16x(c);  /* lane 2r + j: row m + r, column n + j */
                    float *cm = C + (int64_t)m * ldc + n;
                    if (N == 2 && ldc == 2) st(cm, ld(cm) + sum);  /* 16 contiguous floats of C */
                    else
                        for (int r = 0; r < 8; r++) {
                            cm[r * ldc] += sum[2 * r];
                            cm[r * ldc + 1] += sum[2 * r + 1];
                        }
                }
            }
        for (; m + 16 <= M; m += 16) {  /* sixteen rows share each load of Bᵀ and one reduction */
            const float *a = A + m * a_rs + k0;
            for (int n = 0; n < N; n++) {
                const float *b = bt + n * kc;
                v16 c[16];
                for (int r = 0; r < 16; r++) c[r] = (v16){0};
                for (int k = 0; k < kv; k += 16) {
                    const v16 bv = ld(b + k);
#pragma GCC unroll 16
                    for (int r = 0; r < 16; r++) c[r] += ld(a + r * a_rs + k) * bv;
                }
                const v16 sum = hsum16x(c);
                for (int r = 0; r < 16; r++) {
                    float sr = sum[r];
                    for (int k = kv; k < kc; k++) sr += a[r * a_rs + k] * b[k];
                    C[(int64_t)(m + r) * ldc + n] += sr;
                }
            }
        }
        for (; m + 4 <= M; m += 4) {  /* four rows share each load of Bᵀ */
            const float *a = A + m * a_rs + k0;
            for (int n = 0; n < N; n++) {
                const float *b = bt + n * kc;
                v16 c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0};
                for (int k = 0; k < kv; k += 16) {
                    const v16 bv = ld(b + k);
                    c0 += ld(a + k) * bv;
                    c1 += ld(a + a_rs + k) * bv;
                    c2 += ld(a + 2 * a_rs + k) * bv;
                    c3 += ld(a + 3 * a_rs + k) * bv;
                }
                float sum[4] = {hsum(c0), hsum(c1), hsum(c2), hsum(c3)};
                for (int r = 0; r < 4; r++) {
                    for (int k = kv; k < kc; k++) sum[r] += a[r * a_rs + k] * b[k];
                    C[(int64_t)(m + r) * ldc + n] += sum[r];
                }
            }
        }
        for (; m < M; m++) {
            const float *a = A + m * a_rs + k0;
            for (int n = 0; n < N; n++) {
                const float *b = bt + n * kc;
                v16 acc = {0};
                for (int k = 0; k < kv; k += 16) acc += ld(a + k) * ld(b + k);
                float sum = hsum(acc);
                for (int k = kv; k < kc; k++) sum += a[k] * b[k];
                C[(int64_t)m * ldc + n] += sum;
            }
        }
    }
}

/* one or two rows of C (R <= 2), 64 columns: the weight gradient of a policy's 2-wide output
 * layer, whose long reduction over the batch is a chain of dependent multiply-adds per
 * accumulator; 8 chains in flight instead of block_8x32's 4, each element summed in the same order */
static void rows2_x64(int R, int K, const float *A, int64_t a_rs, int64_t a_cs, const float *B, int64_t ldb,
                      float *C, int64_t ldc) {
    v16 c00 = ld(C), c01 = ld(C + 16), c02 = ld(C + 32), c03 = ld(C + 48), c10 = {0}, c11 = {0}, c12 = {0}, c13 = {0};
    if (R == 2) c10 = ld(C + ldc), c11 = ld(C + ldc + 16), c12 = ld(C + ldc + 32), c13 = ld(C + ldc + 48);
    if (R == 2)
        for (int k = 0; k < K; k++) {
            const float *b = B + k * ldb;
            const v16 b0 = ld(b), b1 = ld(b + 16), b2 = ld(b + 32), b3 = ld(b + 48);
            const float a0 = A[k * a_cs], a1 = A[a_rs + k * a_cs];
            c00 += a0 * b0, c01 += a0 * b1, c02 += a0 * b2, c03 += a0 * b3;
            c10 += a1 * b0, c11 += a1 * b1, c12 += a1 * b2, c13 += a1 * b3;
        }
    else
        for (int k = 0; k < K; k++) {
            const float *b = B + k * ldb;
            const float a0 = A[k * a_cs];
            c00 += a0 * ld(b), c01 += a0 * ld(b + 16), c02 += a0 * ld(b + 32), c03 += a0 * ld(b + 48);
        }
    st(C, c00), st(C + 16, c01), st(C + 32, c02), st(C + 48, c03);
    if (R == 2) st(C + ldc, c10), st(C + ldc + 16, c11), st(C + ldc + 32, c12), st(C + ldc + 48, c13);
}

#define KC 256  /* the k values of a long reduction taken at a time (see dg__gemm_acc) */

void dg__gemm_acc(int M, int N, int K, const float *A, int64_t a_rs, int64_t a_cs,
                  const float *B, int64_t ldb, float *C, int64_t ldc) {
    const int Nw = N & ~31;  /* columns done in 32-wide blocks */
    /* A long reduction (a weight gradient, k over the batch) over a C of many blocks: KC values of
       k at a time, so the KC rows of B and of A that every block of C reads stay in L2 while all the
       blocks pass, instead of each block streaming all of B from memory. Each element of C still
       adds its k = 0, 1, ... in order onto its stored value (a store and a load are exact), so the
       bits are those of one pass. */
    if (K > 2 * KC && Nw && M > 8) {
        for (int k0 = 0; k0 < K; k0 += KC) {
            const int kc = K - k0 < KC ? K - k0 : KC;
            dg__gemm_acc(M, Nw, kc, A + k0 * a_cs, a_rs, a_cs, B + k0 * ldb, ldb, C, ldc);
        }
        /* the narrow columns left in one pass: their paths (dot products) sum in their own order */
        if (Nw < N) dg__gemm_acc(M, N - Nw, K, A, a_rs, a_cs, B + Nw, ldb, C + Nw, ldc);
        return;
    }
    if (M <= 2 && Nw >= 64) {
        int n = 0;
        for (; n + 64 <= Nw; n += 64) rows2_x64(M, K, A, a_rs, a_cs, B + n, ldb, C + n, ldc);
        if (n < Nw) block_8x32(M, K, A, a_rs, a_cs, B + n, ldb, C + n, ldc, 0, NULL, 0);
    } else if (Nw)
        for (int m = 0; m < M; m += 8) {
            const int R = M - m < 8 ? M - m : 8;
            for (int n = 0; n < Nw; n += 32)
                if (R == 8) full_8x32(K, A + m * a_rs, a_rs, a_cs, B + n, ldb, C + m * ldc + n, ldc, 0, NULL, 0);
                else block_8x32(R, K, A + m * a_rs, a_rs, a_cs, B + n, ldb, C + m * ldc + n, ldc, 0, NULL, 0);
        }
    if (Nw == N) return;
    const int Nr = N - Nw;  /* 1..31 columns left */
    if (Nr < 16 && a_rs == 1 && M >= 16) {
        narrow_over_m(M, Nr, K, A, a_cs, B + Nw, ldb, C + Nw, ldc);
    } else if (Nr < 16 && a_cs == 1 && K >= 16) {
        narrow_dot(M, Nr, K, A, a_rs, B + Nw, ldb, C + Nw, ldc);
    } else {
        for (int m = 0; m < M; m += 4) {
            const int R = M - m < 4 ? M - m : 4;
            block_4xn(R, Nr, K, A + m * a_rs, a_rs, a_cs, B + Nw, ldb, C + m * ldc + Nw, ldc);
        }
    }
}

/* dg__gemm_bias_act; with pre (pre_n floats, far from the caches) prefetched into L2 meanwhile,
 * a share of its lines in each 8 x 32 block, one a k, so that the stream overlaps the
 * multiply-adds (the weight gradient after a layer's input gradient then finds the input there) */
static void gemm_bias_act_pf(int M, int N, int K, const float *A, int64_t a_rs, const float *B, int64_t ldb,
                             const float *bias, int tanh, float *C, int64_t ldc, const float *pre, int64_t pre_n) {
    const int Nw = N & ~31;
    const int64_t lines = (pre_n + 15) / 16, blocks = (int64_t)(M / 8) * (Nw / 32);
    /* lines per block, a multiple of 8 (8 rows of pf, pf_ld apart): one a k, those beyond K (a short
       reduction: the output layer's dx, K 2) before the block */
    const int share = pre && blocks ? (int)(8 * ((lines + 8 * blocks - 1) / (8 * blocks))) : 0;
    const int in_k = share < (K & ~7) ? share : K & ~7;
    const int64_t pf_ld = (share / 8) * 16;
    int64_t next = 0;  /* the next line of pre to prefetch */
    for (int m = 0; m < M; m += 8) {
        const int R = M - m < 8 ? M - m : 8;
        /* at a large batch C is tape memory far from the caches: the first block of each 8 rows
           prefetches the next 8 rows of C for writing, one line a k (the stores then find them) */
        const int pfw = !pre && M >= 256 && m + 16 <= M && ldc == N ? 8 * ((N + 15) / 16) : 0;
        for (int n = 0; n < Nw; n += 32)
            if (R == 8 && share && next < lines) {
                for (int j = in_k; j < share; j++) __builtin_prefetch(pre + next * 16 + (j & 7) * pf_ld + (j >> 3) * 16, 0, 2);
                full_8x32_pf(K, A + m * a_rs, a_rs, 1, B + n, ldb, C + m * ldc + n, ldc, 1, bias ? bias + n : NULL, tanh,
                             pre + next * 16, in_k, pf_ld, 0);
                next += share;
            } else if (R == 8 && n == 0 && pfw)
                full_8x32_pf(K, A + m * a_rs, a_rs, 1, B + n, ldb, C + m * ldc + n, ldc, 1, bias ? bias + n : NULL, tanh,
                             C + (m + 8) * ldc, pfw, ldc, 1);
            else if (R == 8)
                full_8x32(K, A + m * a_rs, a_rs, 1, B + n, ldb, C + m * ldc + n, ldc, 1, bias ? bias + n : NULL, tanh);
            else block_8x32(R, K, A + m * a_rs, a_rs, 1, B + n, ldb, C + m * ldc + n, ldc, 1, bias ? bias + n : NULL, tanh);
    }
    if (Nw == N) return;
    /* the narrow rest: onto the bias, as dg__gemm_acc would do it, then the tanh */
    for (int m = 0; m < M; m++)
        for (int n = Nw; n < N; n++) C[(int64_t)m * ldc + n] = bias ? bias[n] : 0.0f;
    dg__gemm_acc(M, N - Nw, K, A, a_rs, 1, B + Nw, ldb, C + Nw, ldc);
    if (!tanh) return;
    if (Nw == 0 && ldc == N) {  /* all of C narrow and contiguous (a policy's output layer): 16 at a
                                   time, tanh16 giving dg__tanhf's bits */
        const int64_t n16 = (int64_t)M * N;
        int64_t i = 0;
        for (; i + 16 <= n16; i += 16) st(C + i, tanh16(ld(C + i)));
        for (; i < n16; i++) C[i] = dg__tanhf(C[i]);
        return;
    }
    for (int m = 0; m < M; m++)
        for (int n = Nw; n < N; n++) C[(int64_t)m * ldc + n] = dg__tanhf(C[(int64_t)m * ldc + n]);
}

void dg__gemm_bias_act(int M, int N, int K, const float *A, int64_t a_rs, const float *B, int64_t ldb,
                       const float *bias, int tanh, float *C, int64_t ldc) {
    gemm_bias_act_pf(M, N, K, A, a_rs, B, ldb, bias, tanh, C, ldc, NULL, 0);
}

void dg__gemm_store_prefetch(int M, int N, int K, const float *A, int64_t a_rs, const float *B, int64_t ldb,
                             float *C, int64_t ldc, const float *pre, int64_t pre_n) {
    gemm_bias_act_pf(M, N, K, A, a_rs, B, ldb, NULL, 0, C, ldc, pre, pre_n);
}

void dg__tanh_grad_colsum(int M, int N, const float *y, float *d, float *gb) {
    int n = 0;
    for (; n + 64 <= N; n += 64) {  /* 4 vector sums per strip, in registers down the rows */
        v16 s[4] = {{0}};
        if (gb)
            for (int j = 0; j < 4; j++) s[j] = ld(gb + n + 16 * j);
        for (int m = 0; m < M; m++) {
            float *dr = d + (int64_t)m * N + n;
            for (int j = 0; j < 4; j++) {
                v16 v = ld(dr + 16 * j);
                if (y) {
                    const v16 yv = ld(y + (int64_t)m * N + n + 16 * j);
                    v *= 1.0f - yv * yv;
                    st(dr + 16 * j, v);
                }
                s[j] += v;
            }
        }
        if (gb)
            for (int j = 0; j < 4; j++) st(gb + n + 16 * j, s[j]);
    }
    if (n == N) return;
    if (n == 0 && y) {  /* all columns narrow (a policy's output layer): d *= 1 - y² over the whole
                           (M, N) at once, vectorised (each element's own product, so the same bits), then
                           the column sums row by row in the same order */
        float *restrict dd = d;
        const float *restrict yy = y;
        for (int64_t i = 0; i < (int64_t)M * N; i++) dd[i] *= 1.0f - yy[i] * yy[i];
        if (gb)
            for (int m = 0; m < M; m++)
                for (int c = 0; c < N; c++) gb[c] += d[(int64_t)m * N + c];
        return;
    }
    for (int m = 0; m < M; m++) {  /* the rest of the columns, row by row */
        float *restrict dr = d + (int64_t)m * N;
        if (y) {
            const float *restrict yr = y + (int64_t)m * N;
            for (int c = n; c < N; c++) dr[c] *= 1.0f - yr[c] * yr[c];
        }
        if (gb)
            for (int c = n; c < N; c++) gb[c] += dr[c];
    }
}

#endif  /* !DG_F64 */
