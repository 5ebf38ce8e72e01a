/* Internal to the core: the graph context and helpers that ops share. */
#ifndef DG_CORE_INTERNAL_H
#define DG_CORE_INTERNAL_H

#include <math.h>

#include "difgames/core.h"

#define DG_WT_CACHE 16
#define DG_GRAD_FREE 32  /* gradient buffers that backward hands on to later nodes */

/* A transposed copy of a parameter's weight, made once per arena reset. */
typedef struct dg_wt_entry {
    const dg_real *src;        /* the parameter's values (O, I)  */
    int          rows, cols; /* O, I                            */
    dg_real       *wt;         /* (I, O), in the arena            */
} dg_wt_entry;

struct dg_ctx {
    unsigned char *base;     /* arena, 64-byte aligned                     */
    size_t         cap;      /* bytes                                      */
    size_t         used;     /* bump pointer                               */
    size_t         peak;     /* most bytes ever used                       */
    size_t         need;     /* bytes the first failed allocation needed in all (0: none) */
    dg_tensor     *tape;     /* last recorded node (walk via tape_prev)    */
    size_t         tape_len;
    dg_status      status;   /* first error since reset                    */
    uint64_t       flops;    /* floating-point operations since creation    */
    int            nwt;      /* transposed weights cached since the reset   */
    int            nfree;    /* gradient buffers free for reuse (see dg__grad) */
    int            tape_grads; /* a node on the tape may hold a gradient buffer (0: none can) */
    struct { int64_t n; dg_real *p; } gfree[DG_GRAD_FREE];
    dg_wt_entry    wt[DG_WT_CACHE];
    char           err[256];
};

/* A new result tensor for op with operands src[0..nsrc); records it on the tape
 * when any operand needs a gradient. NULL (and the error) on arena overflow. */
dg_tensor *dg__node(dg_ctx *ctx, dg_op op, int ndim, const int *shape, dg_tensor *a,
                    dg_tensor *b, dg_tensor *c);
/* Gradient buffer of t, allocated zero on first use during backward: the buffer of a node
 * that backward has passed, when one of t's size is free (still in cache), else new. */
dg_real *dg__grad(dg_ctx *ctx, dg_tensor *t);
/* dg__grad without the zeroing: *fresh is 1 when t had no gradient buffer yet, and then the
 * caller writes every element before anything reads it (a product stored instead of added: no
 * memset and no load of the zeros; the same bits, as 0 + x is x) */
dg_real *dg__grad_fresh(dg_ctx *ctx, dg_tensor *t, int *fresh);
/* C[m, n] += Σ_k A[m·a_rs + k·a_cs] · B[k·ldb + n], m < M, n < N, k < K
 * (gemm_f32.c, gemm_f64.c): the kernel behind linear and matmul, forward and backward. */
void dg__gemm_acc(int M, int N, int K, const dg_real *A, int64_t a_rs, int64_t a_cs,
                  const dg_real *B, int64_t ldb, dg_real *C, int64_t ldc);
/* C[m, n] = act(bias[n] + Σ_k A[m·a_rs + k] · B[k·ldb + n]) (A's rows contiguous), act tanh
 * (dg__tanhf) when tanh is set, else none; bias may be NULL (zero). The forward of linear and
 * linear_tanh: the bias starts each accumulator and the tanh is applied in registers before the
 * one store, so the output is written once. Sums in the same order as dg__gemm_acc onto a C that
 * holds the bias, so the two give the same bits. */
void dg__gemm_bias_act(int M, int N, int K, const dg_real *A, int64_t a_rs, const dg_real *B, int64_t ldb,
                       const dg_real *bias, int tanh, dg_real *C, int64_t ldc);
#ifndef DG_F64
/* dg__gemm_bias_act without bias or tanh (C = A·B stored), prefetching the pre_n floats at pre
 * into L2 meanwhile, spread over its blocks: linear's backward stores dx so while its input (far
 * in a long tape) comes in for the weight gradient that follows. The same bits as without. */
void dg__gemm_store_prefetch(int M, int N, int K, const float *A, int64_t a_rs, const float *B, int64_t ldb,
                             float *C, int64_t ldc, const float *pre, int64_t pre_n);
#endif
/* The first half of linear_tanh's backward over d (M, N) in place: d *= 1 - y² (skipped when y
 * is NULL), then gb[n] += Σ_m d[m, n] in the order m = 0, 1, ... (skipped when gb is NULL). One
 * pass, each 64-column strip's sums kept in registers down the rows. */
void dg__tanh_grad_colsum(int M, int N, const dg_real *y, dg_real *d, dg_real *gb);
/* Rational approximation of tanh (the 13/6 minimax form used by Eigen and
 * XLA): max error about 3e-7 on float32, and it vectorises, unlike tanhf.
 * DG_TANH_PQ is its one definition of numerator and denominator, for a float or a vector of
 * floats (the same operations in the same order, so the scalar and the 16-lane forms give the
 * same bits).
 * With AVX-512, x is clamped to ±DG_TANH_LIM (a min and a max whose NaN operand is x, so a NaN
 * stays NaN; the rational gives exactly ±1 there) and p/q is p · (1/q), 1/q as a 14-bit
 * reciprocal (vrcp14) and one Newton step: a 16-lane division costs about 16 cycles, the
 * reciprocal and its step about 2, and the tanh was a third of a linear_tanh forward. Max error
 * 3.1e-7 (every float checked), |tanh| <= 1. Without AVX-512 (and in the double build), the
 * division, with the ends explicit: DG_TANH_ENDS (x itself where |x| < 0.0004, ±1 where
 * |x| > DG_TANH_LIM) is defined by each user, so that no compiler's constant folding can make
 * the scalar and the vector forms differ. */
#define DG_TANH_PQ(T, x, p_, q_)                                                                 \
    do {                                                                                         \
        const T x2_ = (x) * (x);                                                                 \
        p_ = x2_ * -2.76076847742355e-16f + 2.00018790482477e-13f;                               \
        p_ = p_ * x2_ + -8.60467152213735e-11f;                                                  \
        p_ = p_ * x2_ + 5.12229709037114e-08f;                                                   \
        p_ = p_ * x2_ + 1.48572235717979e-05f;                                                   \
        p_ = p_ * x2_ + 6.37261928875436e-04f;                                                   \
        p_ = p_ * x2_ + 4.89352455891786e-03f;                                                   \
        p_ = p_ * (x);                                                                           \
        q_ = x2_ * 1.19825839466702e-06f + 1.18534705686654e-04f;                                \
        q_ = q_ * x2_ + 2.26843463243900e-03f;                                                   \
        q_ = q_ * x2_ + 4.89352518554385e-03f;                                                   \
    } while (0)
/* The portable form: the rational on x itself (every lane a clamp would change, |x| > DG_TANH_LIM,
 * is replaced by ±1 at the end, and a NaN goes through the same operations either way) */
#define DG_TANH_BODY(T, x, out)                                                                  \
    do {                                                                                         \
        T p_, q_;                                                                                \
        DG_TANH_PQ(T, x, p_, q_);                                                                \
        (out) = DG_TANH_ENDS(x, p_ / q_);                                                        \
    } while (0)
#define DG_TANH_LIM 7.90531110763549805f
#ifdef DG_F64  /* the double tape: its own tanh, to a few ulp of double (the rational is float32's) */
/* tanh(x) = −sign(x) · e / (e + 2), e = expm1(−2|x|) ∈ (−1, 0]: −2|x| = k·ln 2 + r (k the
 * nearest integer, by the 1.5·2⁵² shifter; r by Cody-Waite in two fmas, |r| <= ln 2 / 2),
 * expm1(r) = r + r²·Σ_{n=2..13} rⁿ⁻²/n! (Horner in fmas; the truncation is below 1.2·10⁻¹⁷ relative),
 * e = 2^k·expm1(r) + (2^k − 1) in one fma (2^k − 1 exact). |x| is clamped to 20, where tanh is ±1
 * in double (the formula gives exactly 1); |x| < 2⁻²⁶ returns x (tanh's correct rounding there);
 * a NaN returns itself. Every step is one IEEE operation (fma, add, divide, each correctly
 * rounded) in a fixed order, none a product that a compiler could contract, so the scalar form
 * and the 8-lane AVX-512 form below give the same bits. Within 3 ulp of libm's tanh (tests/test_f64.c).
 * A build without fma instructions uses libm's tanh. */
#define DG_TANH64_SHIFT 0x1.8p52
#define DG_TANH64_INVLN2 0x1.71547652b82fep0
#define DG_TANH64_LN2HI 0x1.62e42fee00000p-1
#define DG_TANH64_LN2LO 0x1.a39ef35793c76p-33
#define DG_TANH64_MAX 20.0
#define DG_TANH64_TINY 0x1p-26
/* 1/13!, 1/12!, ..., 1/2!: the Horner coefficients, highest first */
#define DG_TANH64_C(i) ((const double[12]){1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0,           \
                                           1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0,     \
                                           1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5})[i]
#if defined(__AVX512F__)
#include <immintrin.h>
/* dg__tanhf on 8 lanes */
static inline __m512d dg__tanh8(__m512d x) {
    const __m512d sign = _mm512_castsi512_pd(_mm512_set1_epi64((long long)0x8000000000000000ULL));
    const __m512d ax = _mm512_andnot_pd(sign, x);
    const __m512d a = _mm512_min_pd(ax, _mm512_set1_pd(DG_TANH64_MAX));
    const __m512d u = _mm512_mul_pd(a, _mm512_set1_pd(-2.0));
    const __m512d t = _mm512_fmadd_pd(u, _mm512_set1_pd(DG_TANH64_INVLN2), _mm512_set1_pd(DG_TANH64_SHIFT));
    const __m512d kd = _mm512_sub_pd(t, _mm512_set1_pd(DG_TANH64_SHIFT));
    __m512d r = _mm512_fnmadd_pd(kd, _mm512_set1_pd(DG_TANH64_LN2HI), u);
    r = _mm512_fnmadd_pd(kd, _mm512_set1_pd(DG_TANH64_LN2LO), r);
    __m512d q = _mm512_set1_pd(DG_TANH64_C(0));
    for (int i = 1; i < 12; i++) q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(DG_TANH64_C(i)));
    const __m512d p = _mm512_fmadd_pd(_mm512_mul_pd(r, r), q, r);
    const __m512d s = _mm512_castsi512_pd(
        _mm512_add_epi64(_mm512_slli_epi64(_mm512_castpd_si512(t), 52), _mm512_set1_epi64(1023LL << 52)));
    const __m512d e = _mm512_fmadd_pd(s, p, _mm512_sub_pd(s, _mm512_set1_pd(1.0)));
    const __m512d y = _mm512_div_pd(e, _mm512_add_pd(e, _mm512_set1_pd(2.0)));  /* -tanh|x| */
    const __m512d sy = _mm512_castsi512_pd(  /* x's sign bit, y's other bits (0xca: sign ? x : y) */
        _mm512_ternarylogic_epi64(_mm512_castpd_si512(sign), _mm512_castpd_si512(x), _mm512_castpd_si512(y), 0xca));
    const __mmask8 keep = _mm512_cmp_pd_mask(ax, _mm512_set1_pd(DG_TANH64_TINY), _CMP_NGE_UQ);  /* tiny or NaN */
    return _mm512_mask_blend_pd(keep, sy, x);
}
/* the scalar form: the 8-lane one on a broadcast (the same instructions, so the same bits) */
static inline dg_real dg__tanhf(dg_real x) { return _mm512_cvtsd_f64(dg__tanh8(_mm512_set1_pd(x))); }
#elif defined(__FMA__)  /* the same steps in scalar fmas (the same bits as the 8-lane form) */
static inline dg_real dg__tanhf(dg_real x) {
    const double ax = fabs(x);
    if (!(ax >= DG_TANH64_TINY)) return x;  /* tiny, or NaN */
    const double a = ax < DG_TANH64_MAX ? ax : DG_TANH64_MAX, u = a * -2.0;
    const double t = fma(u, DG_TANH64_INVLN2, DG_TANH64_SHIFT), kd = t - DG_TANH64_SHIFT;
    double r = fma(-kd, DG_TANH64_LN2HI, u);
    r = fma(-kd, DG_TANH64_LN2LO, r);
    double q = DG_TANH64_C(0);
    for (int i = 1; i < 12; i++) q = fma(q, r, DG_TANH64_C(i));
    const double p = fma(r * r, q, r);
    union { double d; uint64_t u; } s = {t};  /* 2^k: k is t's low bits */
    s.u = (s.u << 52) + (1023ULL << 52);
    const double e = fma(s.d, p, s.d - 1.0), y = e / (e + 2.0);  /* -tanh|x| */
    return copysign(y, x);
}
#else  /* no fma instruction (fma() would be a slow library call): libm's tanh */
static inline dg_real dg__tanhf(dg_real x) { return tanh(x); }
#endif
#elif defined(__AVX512F__)  /* the float tape with AVX-512 */
#include <immintrin.h>
static inline float dg__tanhf(float x) {
    const __m128 xc = _mm_max_ss(_mm_set_ss(-DG_TANH_LIM), _mm_min_ss(_mm_set_ss(DG_TANH_LIM), _mm_set_ss(x)));
    const float c = _mm_cvtss_f32(xc);
    float p, q;
    DG_TANH_PQ(float, c, p, q);
    const __m128 qv = _mm_set_ss(q), r = _mm_rcp14_ss(qv, qv);
    return p * _mm_cvtss_f32(_mm_fmadd_ss(r, _mm_fnmadd_ss(qv, r, _mm_set_ss(1.0f)), r));
}
#else
static inline float dg__tanhf(float x) {
#define DG_TANH_ENDS(x, r) (fabsf(x) < 0.0004f ? (x) : (fabsf(x) > DG_TANH_LIM ? copysignf(1.0f, x) : (r)))
    float y;
    DG_TANH_BODY(float, x, y);
    return y;
#undef DG_TANH_ENDS
}
#endif
/* y[i] = dg__tanhf(x[i]), i < n, 16 lanes at a time where the build has them (the same bits) */
void dg__tanh_n(int64_t n, const dg_real *x, dg_real *y);
/* Backward of one tape node: adds into the gradients of its operands. */
void dg__backward_node(dg_ctx *ctx, dg_tensor *t);

#endif
