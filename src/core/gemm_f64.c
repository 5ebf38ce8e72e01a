/* The double tape's small-matrix kernel (include/difgames/real.h), the same contract as gemm_f32.c's:
 *     C[m, n] += Σ_k A[m·a_rs + k·a_cs] · B[k·ldb + n]
 * 8-lane AVX-512 kernels, or portable C, in a fixed order (compiled in the double copy of the
 * library only). */
#include <string.h>

#include "core/internal.h"

#ifdef DG_F64  /* the double tape: 8-lane AVX-512 kernels, or portable C, in a fixed order */

#if defined(__AVX512F__)  /* 8-lane vectors of double; the portable code below is the fallback */

/* rows m0..m0+R (R <= 8), columns n0..n0+8·NV (NV <= 3; the last vector's lanes cut to the mask last):
 * R·NV accumulators (at most 24 of the 32 vector registers, each a named variable: GCC keeps arrays of
 * them in memory) live across the whole k loop, each k loading NV vectors of B and R scalars of A
 * (broadcast); C[m, n] gets its k terms in the order k = 0, 1, ... by fma, from C's value (init 0), or
 * from bias[n] (init 1, bias NULL: zero). R and NV are constants at each call (always_inline), so the
 * unused accumulators vanish. */
static inline __attribute__((always_inline)) void blk(int R, int NV, __mmask8 last, int K, const double *A, int64_t a_rs,
                                                      int64_t a_cs, const double *B, int64_t ldb, double *C, int64_t ldc,
                                                      int init, const double *bias) {
    const __mmask8 m0 = NV == 1 ? last : 0xff, m1 = NV == 2 ? last : 0xff, m2 = last;
    const __m512d z = _mm512_setzero_pd();
    const __m512d i0 = init && bias ? _mm512_maskz_loadu_pd(m0, bias) : z;
    const __m512d i1 = NV > 1 && init && bias ? _mm512_maskz_loadu_pd(m1, bias + 8) : z;
    const __m512d i2 = NV > 2 && init && bias ? _mm512_maskz_loadu_pd(m2, bias + 16) : z;
#define DG_INIT(r)                                                                    \
    __m512d c##r##0 = i0, c##r##1 = i1, c##r##2 = i2;                                 \
    if (!init && R > r) {                                                             \
        c##r##0 = _mm512_maskz_loadu_pd(m0, C + r * ldc);                             \
        if (NV > 1) c##r##1 = _mm512_maskz_loadu_pd(m1, C + r * ldc + 8);             \
        if (NV > 2) c##r##2 = _mm512_maskz_loadu_pd(m2, C + r * ldc + 16);            \
    }
    DG_INIT(0) DG_INIT(1) DG_INIT(2) DG_INIT(3) DG_INIT(4) DG_INIT(5) DG_INIT(6) DG_INIT(7)
#undef DG_INIT
    for (int k = 0; k < K; k++) {
        const double *b = B + k * ldb, *a = A + k * a_cs;
        const __m512d b0 = _mm512_maskz_loadu_pd(m0, b);
        const __m512d b1 = NV > 1 ? _mm512_maskz_loadu_pd(m1, b + 8) : z;
        const __m512d b2 = NV > 2 ? _mm512_maskz_loadu_pd(m2, b + 16) : z;
#define DG_FMA(r)                                                        \
        if (R > r) {                                                     \
            const __m512d ar = _mm512_set1_pd(a[r * a_rs]);              \
            c##r##0 = _mm512_fmadd_pd(ar, b0, c##r##0);                  \
            if (NV > 1) c##r##1 = _mm512_fmadd_pd(ar, b1, c##r##1);      \
            if (NV > 2) c##r##2 = _mm512_fmadd_pd(ar, b2, c##r##2);      \
        }
        DG_FMA(0) DG_FMA(1) DG_FMA(2) DG_FMA(3) DG_FMA(4) DG_FMA(5) DG_FMA(6) DG_FMA(7)
#undef DG_FMA
    }
#define DG_STORE(r)                                                                                  \
    if (R > r) {                                                                                     \
        _mm512_mask_storeu_pd(C + r * ldc, m0, c##r##0);                                             \
        if (NV > 1) _mm512_mask_storeu_pd(C + r * ldc + 8, m1, c##r##1);                             \
        if (NV > 2) _mm512_mask_storeu_pd(C + r * ldc + 16, m2, c##r##2);                            \
    }
    DG_STORE(0) DG_STORE(1) DG_STORE(2) DG_STORE(3) DG_STORE(4) DG_STORE(5) DG_STORE(6) DG_STORE(7)
#undef DG_STORE
}

/* R rows of C (a constant in each instance below) over all N columns: blocks of 24 columns, then the
 * rest (1 to 23) as one block of 1 to 3 vectors, the last one masked */
static inline __attribute__((always_inline)) void rows_R(int R, int N, int K, const double *A, int64_t a_rs,
                                                         int64_t a_cs, const double *B, int64_t ldb, double *C,
                                                         int64_t ldc, int init, const double *bias) {
    int n = 0;
    for (; n + 24 <= N; n += 24) blk(R, 3, 0xff, K, A, a_rs, a_cs, B + n, ldb, C + n, ldc, init, bias ? bias + n : NULL);
    if (n == N) return;
    const int rest = N - n, nv = (rest + 7) / 8;
    const __mmask8 last = (__mmask8)(0xff >> (8 * nv - rest));
    const double *bi = bias ? bias + n : NULL;
    if (nv == 1) blk(R, 1, last, K, A, a_rs, a_cs, B + n, ldb, C + n, ldc, init, bi);
    else if (nv == 2) blk(R, 2, last, K, A, a_rs, a_cs, B + n, ldb, C + n, ldc, init, bi);
    else blk(R, 3, last, K, A, a_rs, a_cs, B + n, ldb, C + n, ldc, init, bi);
}

typedef void rows_fn(int N, int K, const double *A, int64_t a_rs, int64_t a_cs, const double *B, int64_t ldb,
                     double *C, int64_t ldc, int init, const double *bias);
#define DG_ROWS(R)                                                                                                  \
    static void rows_##R(int N, int K, const double *A, int64_t a_rs, int64_t a_cs, const double *B, int64_t ldb, \
                         double *C, int64_t ldc, int init, const double *bias) {                          \
        rows_R(R, N, K, A, a_rs, a_cs, B, ldb, C, ldc, init, bias);                                           \
    }
DG_ROWS(1) DG_ROWS(2) DG_ROWS(3) DG_ROWS(4) DG_ROWS(5) DG_ROWS(6) DG_ROWS(7) DG_ROWS(8)
#undef DG_ROWS
static rows_fn *const rows_of[9] = {NULL, rows_1, rows_2, rows_3, rows_4, rows_5, rows_6, rows_7, rows_8};

/* every row block of C: 8 rows at a time, then the 1 to 7 left as one block (the path depends only
 * on the shape) */
#define PACK_K 512  /* the most k of a packed panel of A (8 · 512 doubles on the stack) */

/* A's rows m..m+R (R <= 8) as a panel ap[k·8 + r]: with A's rows contiguous (a_cs 1), a block's eight
 * broadcasts of A per k would come from eight rows a_rs apart (eight address registers, spilled), at half
 * the speed of a panel's eight neighbours. The same values, so the same sums. */
static void pack_rows(int R, int K, const double *A, int64_t a_rs, double *ap) {
    int k = 0;
    if (R == 8)
        for (; k + 8 <= K; k += 8) {  /* an 8 x 8 tile, transposed in registers */
            __m512d t[8], u[8];
            for (int r = 0; r < 8; r++) t[r] = _mm512_loadu_pd(A + r * a_rs + k);
            for (int r = 0; r < 8; r += 2) {
                u[r] = _mm512_unpacklo_pd(t[r], t[r + 1]);
                u[r + 1] = _mm512_unpackhi_pd(t[r], t[r + 1]);
            }
            const __m512i lo = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13), hi = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
            for (int q = 0; q < 8; q += 4)
                for (int j = 0; j < 2; j++) {
                    t[q + j] = _mm512_permutex2var_pd(u[q + j], lo, u[q + 2 + j]);
                    t[q + 2 + j] = _mm512_permutex2var_pd(u[q + j], hi, u[q + 2 + j]);
                }
            const __m512i lo2 = _mm512_setr_epi64(0, 1, 2, 3, 8, 9, 10, 11), hi2 = _mm512_setr_epi64(4, 5, 6, 7, 12, 13, 14, 15);
            for (int j = 0; j < 4; j++) {
                _mm512_storeu_pd(ap + (k + (j & 1) + 2 * (j >> 1)) * 8, _mm512_permutex2var_pd(t[j], lo2, t[4 + j]));
                _mm512_storeu_pd(ap + (k + 4 + (j & 1) + 2 * (j >> 1)) * 8, _mm512_permutex2var_pd(t[j], hi2, t[4 + j]));
            }
        }
    for (; k < K; k++)
        for (int r = 0; r < R; r++) ap[k * 8 + r] = A[r * a_rs + k];
}

/* The tanh (act) goes over each block of 8 rows just computed (in L1), a row at a time, or over all of C at
 * the end where C is narrow and contiguous (a policy's output layer: its masked rows, stored and reloaded
 * row by row, would stall the loads); in registers before the store, the tanh's constants and temporaries
 * next to 24 accumulators spill. dg__tanh_n gives every element dg__tanhf's bits either way. */
static void gemm8(int M, int N, int K, const double *A, int64_t a_rs, int64_t a_cs, const double *B, int64_t ldb,
                  double *C, int64_t ldc, int init, const double *bias, int act) {
    /* a long k (a weight's gradient, summed over the batch) in chunks of 64, each chunk's rows of B (at most
     * 64 x N) reused from L1 by every block of rows; C holds the sums between chunks (stored and reloaded
     * exactly: the same bits) */
    const int KC = M > 8 && K > 256 ? 64 : K > 0 ? K : 1;
    const int pack = a_cs == 1 && a_rs != 1 && KC <= PACK_K && N > 8, late = act && ldc == N && N <= 8;
    double ap[8 * PACK_K];
    for (int k0 = 0; k0 == 0 || k0 < K; k0 += KC) {  /* once at least: K 0 still sets C to the bias */
        const int kc = K - k0 < KC ? K - k0 : KC, first = k0 == 0, now = act && !late && k0 + kc == K;
        const double *Ak = A + k0 * a_cs, *Bk = B + k0 * ldb;
        for (int m = 0; m < M; m += 8) {
            const int R = M - m < 8 ? M - m : 8;
            double *c = C + m * ldc;
            if (R == 8 && pack) {
                pack_rows(8, kc, Ak + m * a_rs, a_rs, ap);
                rows_8(N, kc, ap, 1, 8, Bk, ldb, c, ldc, first && init, bias);
            } else
                rows_of[R](N, kc, Ak + m * a_rs, a_rs, a_cs, Bk, ldb, c, ldc, first && init, bias);
            if (now)
                for (int r = 0; r < R; r++) dg__tanh_n(N, c + r * ldc, c + r * ldc);
        }
    }
    if (late) dg__tanh_n((int64_t)M * N, C, C);
}

void dg__gemm_acc(int M, int N, int K, const dg_real *A, int64_t a_rs, int64_t a_cs,
                  const dg_real *B, int64_t ldb, dg_real *C, int64_t ldc) {
    gemm8(M, N, K, A, a_rs, a_cs, B, ldb, C, ldc, 0, NULL, 0);
}

/* the same blocks and order as dg__gemm_acc, the accumulators starting from the bias: the same bits as
 * dg__gemm_acc onto a C that holds the bias, then dg__tanhf */
void dg__gemm_bias_act(int M, int N, int K, const dg_real *A, int64_t a_rs, const dg_real *B, int64_t ldb,
                       const dg_real *bias, int tanh, dg_real *C, int64_t ldc) {
    gemm8(M, N, K, A, a_rs, 1, B, ldb, C, ldc, 1, bias, tanh);
}

/* d *= 1 - y² (one fnmadd, then the product) and gb[n] += Σ_m d[m, n] in the order m = 0, 1, ...:
 * strips of 32 columns (the last masked), their sums in registers down the rows */
void dg__tanh_grad_colsum(int M, int N, const dg_real *y, dg_real *d, dg_real *gb) {
    const __m512d one = _mm512_set1_pd(1.0);
    for (int n = 0; n < N; n += 32) {
        __mmask8 mk[4];
        for (int j = 0; j < 4; j++) {
            const int left = N - n - 8 * j;
            mk[j] = left >= 8 ? 0xff : left > 0 ? (__mmask8)(0xff >> (8 - left)) : 0;
        }
        __m512d s[4];
        for (int j = 0; j < 4; j++) s[j] = gb ? _mm512_maskz_loadu_pd(mk[j], gb + n + 8 * j) : _mm512_setzero_pd();
        for (int m = 0; m < M; m++) {
            double *dr = d + (int64_t)m * N + n;
            for (int j = 0; j < 4; j++) {
                if (!mk[j]) continue;
                __m512d v = _mm512_maskz_loadu_pd(mk[j], dr + 8 * j);
                if (y) {
                    const __m512d yv = _mm512_maskz_loadu_pd(mk[j], y + (int64_t)m * N + n + 8 * j);
                    v = _mm512_mul_pd(v, _mm512_fnmadd_pd(yv, yv, one));
                    _mm512_mask_storeu_pd(dr + 8 * j, mk[j], v);
                }
                s[j] = _mm512_add_pd(s[j], v);
            }
        }
        if (gb)
            for (int j = 0; j < 4; j++) _mm512_mask_storeu_pd(gb + n + 8 * j, mk[j], s[j]);
    }
}

/* 8 lanes at a time, the rest as one masked vector: every element dg__tanhf's bits */
void dg__tanh_n(int64_t n, const dg_real *x, dg_real *y) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm512_storeu_pd(y + i, dg__tanh8(_mm512_loadu_pd(x + i)));
    if (i < n) {
        const __mmask8 mk = (__mmask8)(0xff >> (8 - (n - i)));
        _mm512_mask_storeu_pd(y + i, mk, dg__tanh8(_mm512_maskz_loadu_pd(mk, x + i)));
    }
}

#else  /* portable */

/* Each C[m, n] gets its k terms added in the order k = 0, 1, ... whatever the path (the same bits for
 * a given shape): 32 columns at a time in an accumulator the compiler keeps in vector registers, the
 * rest one column at a time. */
void dg__gemm_acc(int M, int N, int K, const dg_real *A, int64_t a_rs, int64_t a_cs,
                  const dg_real *B, int64_t ldb, dg_real *C, int64_t ldc) {
    enum { W = 32 };
    const int Nw = N - N % W;
    for (int m = 0; m < M; m++) {
        dg_real *restrict c = C + (int64_t)m * ldc;
        const dg_real *restrict a = A + (int64_t)m * a_rs;
        for (int n0 = 0; n0 < Nw; n0 += W) {
            dg_real acc[W];
            for (int j = 0; j < W; j++) acc[j] = c[n0 + j];
            for (int k = 0; k < K; k++) {
                const dg_real ak = a[(int64_t)k * a_cs];
                const dg_real *restrict b = B + (int64_t)k * ldb + n0;
                for (int j = 0; j < W; j++) acc[j] += ak * b[j];
            }
            for (int j = 0; j < W; j++) c[n0 + j] = acc[j];
        }
        for (int n = Nw; n < N; n++) {
            dg_real s = c[n];
            for (int k = 0; k < K; k++) s += a[(int64_t)k * a_cs] * B[(int64_t)k * ldb + n];
            c[n] = s;
        }
    }
}

void dg__gemm_bias_act(int M, int N, int K, const dg_real *A, int64_t a_rs, const dg_real *B, int64_t ldb,
                       const dg_real *bias, int tanh, dg_real *C, int64_t ldc) {
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) C[(int64_t)m * ldc + n] = bias ? bias[n] : 0.0;
    dg__gemm_acc(M, N, K, A, a_rs, 1, B, ldb, C, ldc);
    if (tanh)
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++) C[(int64_t)m * ldc + n] = dg__tanhf(C[(int64_t)m * ldc + n]);
}

void dg__tanh_grad_colsum(int M, int N, const dg_real *y, dg_real *d, dg_real *gb) {
    for (int m = 0; m < M; m++) {
        dg_real *restrict dr = d + (int64_t)m * N;
        if (y) {
            const dg_real *restrict yr = y + (int64_t)m * N;
            for (int c = 0; c < N; c++) dr[c] *= 1.0 - yr[c] * yr[c];
        }
        if (gb)
            for (int c = 0; c < N; c++) gb[c] += dr[c];
    }
}

void dg__tanh_n(int64_t n, const dg_real *x, dg_real *y) {
    for (int64_t i = 0; i < n; i++) y[i] = dg__tanhf(x[i]);
}
#endif  /* __AVX512F__ */
#endif  /* DG_F64 */
