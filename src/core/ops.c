/* Ops: each forward records what it is and what it reads; its backward sits
 * next to it. dg__backward_node is the one switch over the op enum. */
#include <tgmath.h>  /* dg_real's maths: float's functions in the float copy, double's in the double */
#undef I             /* its <complex.h> defines I: here, as in the shapes (O,I), a weight's input size */
#include <stdio.h>
#include <string.h>

#include "core/internal.h"

static const char *const OP_NAMES[] = {
    "leaf", "add", "sub", "mul", "div", "neg", "scale", "add_scalar", "matmul", "linear",
    "tanh", "relu", "softplus", "sigmoid", "exp", "log", "sqrt", "square", "pow", "abs",
    "sum", "mean", "sum_axis", "mean_axis", "concat", "slice", "reshape", "linear_tanh",
    "custom", "sin", "cos", "linear_tangent",
};
_Static_assert(sizeof(OP_NAMES) / sizeof(OP_NAMES[0]) == DG_OP_COUNT,
               "OP_NAMES must name every dg_op");

const char *dg_op_name(dg_op op) {
    return (int)op >= 0 && op < DG_OP_COUNT ? OP_NAMES[op] : "unknown";
}

/* Shape as "(2,3)" for error messages. */
static const char *shape_str(const dg_tensor *t, char *buf, size_t len) {
    int o = snprintf(buf, len, "(");
    for (int i = 0; i < t->ndim && o < (int)len; i++)
        o += snprintf(buf + o, len - (size_t)o, i ? ",%d" : "%d", t->shape[i]);
    if (o < (int)len) snprintf(buf + o, len - (size_t)o, ")");
    return buf;
}

#define NEED(ctx, x) do { if (!(x) || (ctx)->status != DG_OK) return NULL; } while (0)

/* ------------------------------------------------------- broadcasting */

/* Right-aligned numpy broadcasting over 4 padded dims. */
typedef struct bcast {
    int     shape[4];   /* output, padded to 4 dims */
    int64_t sa[4];      /* strides into a (0 where broadcast) */
    int64_t sb[4];
} bcast;

static void pad4(const dg_tensor *t, int *s) {
    int off = 4 - t->ndim;
    for (int k = 0; k < 4; k++) s[k] = k < off ? 1 : t->shape[k - off];
}

static void strides4(const int *s, int64_t *st) {
    int64_t acc = 1;
    for (int k = 3; k >= 0; k--) {
        st[k] = s[k] == 1 ? 0 : acc;  /* a size-1 dim always reads index 0 */
        acc *= s[k];
    }
}

static int bcast_make(dg_ctx *ctx, const char *op, const dg_tensor *a, const dg_tensor *b,
                      bcast *bc, int *ndim) {
    int pa[4], pb[4];
    pad4(a, pa);
    pad4(b, pb);
    for (int k = 0; k < 4; k++) {
        if (pa[k] != pb[k] && pa[k] != 1 && pb[k] != 1) {
            char s1[64], s2[64];
            dg_ctx_fail(ctx, DG_ERR_SHAPE, "%s: shapes %s and %s do not broadcast", op,
                     shape_str(a, s1, sizeof s1), shape_str(b, s2, sizeof s2));
            return 0;
        }
        bc->shape[k] = pa[k] == 1 ? pb[k] : pa[k];
    }
    strides4(pa, bc->sa);
    strides4(pb, bc->sb);
    *ndim = a->ndim > b->ndim ? a->ndim : b->ndim;
    return 1;
}

static void out_shape(const bcast *bc, int ndim, int *shape) {
    for (int i = 0; i < ndim; i++) shape[i] = bc->shape[4 - ndim + i];
}

/* Runs body(pa, pb, po, n, sa, sb) over each innermost row of the broadcast. */
#define BCAST_LOOP(bc, A, B, O, BODY)                                                  \
    do {                                                                               \
        int64_t _o = 0;                                                                \
        for (int i0 = 0; i0 < (bc).shape[0]; i0++)                                     \
            for (int i1 = 0; i1 < (bc).shape[1]; i1++)                                 \
                for (int i2 = 0; i2 < (bc).shape[2]; i2++) {                           \
                    int64_t _a = i0 * (bc).sa[0] + i1 * (bc).sa[1] + i2 * (bc).sa[2];  \
                    int64_t _b = i0 * (bc).sb[0] + i1 * (bc).sb[1] + i2 * (bc).sb[2];  \
                    const int n = (bc).shape[3];                                       \
                    const int64_t sa = (bc).sa[3], sb = (bc).sb[3];                    \
                    dg_real *pa = (A) + _a;                                              \
                    dg_real *pb = (B) + _b;                                              \
                    dg_real *po = (O) + _o;                                              \
                    BODY;                                                              \
                    _o += n;                                                           \
                }                                                                      \
    } while (0)

/* Inner loop specialised for the stride pattern so the compiler vectorises. */
#define INNER(EXPR)                                                                    \
    do {                                                                               \
        if (sa == 1 && sb == 1) for (int j = 0; j < n; j++) { dg_real x = pa[j], y = pb[j]; po[j] = (EXPR); } \
        else if (sa == 1)       for (int j = 0; j < n; j++) { dg_real x = pa[j], y = pb[0]; po[j] = (EXPR); } \
        else if (sb == 1)       for (int j = 0; j < n; j++) { dg_real x = pa[0], y = pb[j]; po[j] = (EXPR); } \
        else                    for (int j = 0; j < n; j++) { dg_real x = pa[0], y = pb[0]; po[j] = (EXPR); } \
    } while (0)

static dg_tensor *binary(dg_ctx *ctx, dg_op op, dg_tensor *a, dg_tensor *b) {
    NEED(ctx, a);
    NEED(ctx, b);
    bcast bc;
    int ndim, shape[4];
    if (!bcast_make(ctx, dg_op_name(op), a, b, &bc, &ndim)) return NULL;
    out_shape(&bc, ndim, shape);
    dg_tensor *t = dg__node(ctx, op, ndim, shape, a, b, NULL);
    if (!t) return NULL;
    ctx->flops += (uint64_t)t->n;
    switch (op) {
    case DG_OP_ADD: BCAST_LOOP(bc, a->data, b->data, t->data, INNER(x + y)); break;
    case DG_OP_SUB: BCAST_LOOP(bc, a->data, b->data, t->data, INNER(x - y)); break;
    case DG_OP_MUL: BCAST_LOOP(bc, a->data, b->data, t->data, INNER(x * y)); break;
    case DG_OP_DIV: BCAST_LOOP(bc, a->data, b->data, t->data, INNER(x / y)); break;
    default: break;
    }
    return t;
}

dg_tensor *dg_add(dg_ctx *ctx, dg_tensor *a, dg_tensor *b) { return binary(ctx, DG_OP_ADD, a, b); }
dg_tensor *dg_sub(dg_ctx *ctx, dg_tensor *a, dg_tensor *b) { return binary(ctx, DG_OP_SUB, a, b); }
dg_tensor *dg_mul(dg_ctx *ctx, dg_tensor *a, dg_tensor *b) { return binary(ctx, DG_OP_MUL, a, b); }
dg_tensor *dg_div(dg_ctx *ctx, dg_tensor *a, dg_tensor *b) { return binary(ctx, DG_OP_DIV, a, b); }

/* Adds ga_expr into the gradient of a (reduced over its broadcast dims); the
 * expression sees g (upstream gradient), x (a's value), y (b's value). */
#define ACCUM(GPTR, STRIDE_IS_A, EXPR)                                                 \
    do {                                                                               \
        dg_real *gg = (GPTR);                                                            \
        const int64_t s_self = (STRIDE_IS_A) ? sa : sb;                               \
        if (s_self == 1) {                                                             \
            for (int j = 0; j < n; j++) {                                              \
                dg_real g = pg[j], x = pa[j * sa], y = pb[j * sb];                       \
                (void)x; (void)y;                                                      \
                gg[j] += (EXPR);                                                       \
            }                                                                          \
        } else {                                                                       \
            dg_real acc = 0.0f;                                                          \
            for (int j = 0; j < n; j++) {                                              \
                dg_real g = pg[j], x = pa[j * sa], y = pb[j * sb];                       \
                (void)x; (void)y;                                                      \
                acc += (EXPR);                                                         \
            }                                                                          \
            gg[0] += acc;                                                              \
        }                                                                              \
    } while (0)

static void binary_backward(dg_ctx *ctx, dg_tensor *t) {
    dg_tensor *a = t->src[0], *b = t->src[1];
    bcast bc;
    int ndim;
    bcast_make(ctx, "backward", a, b, &bc, &ndim);
    dg_real *ga = a->requires_grad ? dg__grad(ctx, a) : NULL;
    dg_real *gb = b->requires_grad ? dg__grad(ctx, b) : NULL;
    if (ctx->status != DG_OK) return;
    dg_real *tg = t->grad;
    ctx->flops += 2 * (uint64_t)t->n;
    int64_t _o = 0;
    for (int i0 = 0; i0 < bc.shape[0]; i0++)
        for (int i1 = 0; i1 < bc.shape[1]; i1++)
            for (int i2 = 0; i2 < bc.shape[2]; i2++) {
                int64_t oa = i0 * bc.sa[0] + i1 * bc.sa[1] + i2 * bc.sa[2];
                int64_t ob = i0 * bc.sb[0] + i1 * bc.sb[1] + i2 * bc.sb[2];
                const int n = bc.shape[3];
                const int64_t sa = bc.sa[3], sb = bc.sb[3];
                const dg_real *pa = a->data + oa, *pb = b->data + ob, *pg = tg + _o;
                switch (t->op) {
                case DG_OP_ADD:
                    if (ga) ACCUM(ga + oa, 1, g);
                    if (gb) ACCUM(gb + ob, 0, g);
                    break;
                case DG_OP_SUB:
                    if (ga) ACCUM(ga + oa, 1, g);
                    if (gb) ACCUM(gb + ob, 0, -g);
                    break;
                case DG_OP_MUL:
                    if (ga) ACCUM(ga + oa, 1, g * y);
                    if (gb) ACCUM(gb + ob, 0, g * x);
                    break;
                case DG_OP_DIV:
                    if (ga) ACCUM(ga + oa, 1, g / y);
                    if (gb) ACCUM(gb + ob, 0, -g * x / (y * y));
                    break;
                default: break;
                }
                _o += n;
            }
}

/* ------------------------------------------------------- unary */

#ifndef DG_F64
/* y[i] = sin(x[i]) (cos 0) or cos(x[i]) (cos 1) for the float tape, in a loop the compiler
 * vectorises (libm's sinf is a call an element, and was four fifths of a sine network's forward):
 * x = k·π/2 + r, k the nearest integer (the 1.5·2²³ shifter), r by Cody-Waite in three fmas
 * (π/2's three float parts), |r| <= π/4; then Cephes' sinf and cosf polynomials on r and the
 * quadrant k (+1 for cos) picks one and its sign. Within 2.5e-7 of the exact values for
 * |x| <= 1e5 (tests/test_ops.c); larger or non-finite x go to libm afterwards. */
/* one element of both: the quadrant q of x and sin, cos of its remainder r (|r| <= π/4) */
static inline int sincos_reduce(float x, float *sn, float *cs) {
    const float shift = 0x1.8p23f, two_over_pi = 0.636619772367581343f;
    const float p1 = 1.5703125f, p2 = 4.837512969970703125e-4f, p3 = 7.54978995489188216e-8f;
    const float kf = fmaf(x, two_over_pi, shift) - shift;
    float r = fmaf(-kf, p1, x);
    r = fmaf(-kf, p2, r);
    r = fmaf(-kf, p3, r);
    const float z = r * r;
    *sn = fmaf(fmaf(fmaf(-1.9515295891e-4f, z, 8.3321608736e-3f), z, -1.6666654611e-1f) * z, r, r);
    *cs = fmaf(fmaf(fmaf(2.443315711809948e-5f, z, -1.388731625493765e-3f), z, 4.166664568298827e-2f) * z, z,
               fmaf(-0.5f, z, 1.0f));
    return (int)kf;
}

static void sincos_n(int64_t n, const float *restrict x, float *restrict y, int cos) {
    for (int64_t i = 0; i < n; i++) {
        float sn, cs;
        const int q = sincos_reduce(x[i], &sn, &cs) + cos;
        const float v = (q & 1) ? cs : sn;
        y[i] = (q & 2) ? -v : v;
    }
    for (int64_t i = 0; i < n; i++)
        if (!(fabsf(x[i]) <= 1e5f)) y[i] = cos ? cosf(x[i]) : sinf(x[i]);
}
#define DG_SIN_N(n, x, y) sincos_n(n, x, y, 0)
#define DG_COS_N(n, x, y) sincos_n(n, x, y, 1)
#else  /* the double tape: libm's, to double's rounding */
#define DG_SIN_N(n, x, y) for (int64_t i_ = 0; i_ < (n); i_++) (y)[i_] = sin((x)[i_])
#define DG_COS_N(n, x, y) for (int64_t i_ = 0; i_ < (n); i_++) (y)[i_] = cos((x)[i_])
#endif

static dg_tensor *unary(dg_ctx *ctx, dg_op op, dg_tensor *a, dg_real p) {
    NEED(ctx, a);
    dg_tensor *t = dg__node(ctx, op, a->ndim, a->shape, a, NULL, NULL);
    if (!t) return NULL;
    t->fparam[0] = p;
    ctx->flops += (uint64_t)a->n;
    const dg_real *restrict x = a->data;
    dg_real *restrict y = t->data;
    const int64_t n = a->n;
    switch (op) {
    case DG_OP_NEG:        for (int64_t i = 0; i < n; i++) y[i] = -x[i]; break;
    case DG_OP_SCALE:      for (int64_t i = 0; i < n; i++) y[i] = x[i] * p; break;
    case DG_OP_ADD_SCALAR: for (int64_t i = 0; i < n; i++) y[i] = x[i] + p; break;
    case DG_OP_TANH:       dg__tanh_n(n, x, y); break;
    case DG_OP_RELU:       for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : 0.0f; break;
    case DG_OP_SOFTPLUS:
        for (int64_t i = 0; i < n; i++) y[i] = fmax(x[i], 0.0f) + log1p(exp(-fabs(x[i])));
        break;
    case DG_OP_SIGMOID:
        for (int64_t i = 0; i < n; i++) {
            dg_real e = exp(-fabs(x[i]));
            y[i] = x[i] >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
        }
        break;
    case DG_OP_EXP:    for (int64_t i = 0; i < n; i++) y[i] = exp(x[i]); break;
    case DG_OP_LOG:    for (int64_t i = 0; i < n; i++) y[i] = log(x[i]); break;
    case DG_OP_SQRT:   for (int64_t i = 0; i < n; i++) y[i] = sqrt(x[i]); break;
    case DG_OP_SQUARE: for (int64_t i = 0; i < n; i++) y[i] = x[i] * x[i]; break;
    case DG_OP_POW:    for (int64_t i = 0; i < n; i++) y[i] = pow(x[i], p); break;
    case DG_OP_ABS:    for (int64_t i = 0; i < n; i++) y[i] = fabs(x[i]); break;
    case DG_OP_SIN:    DG_SIN_N(n, x, y); break;
    case DG_OP_COS:    DG_COS_N(n, x, y); break;
    default: break;
    }
    return t;
}

static void unary_backward(dg_ctx *ctx, dg_tensor *t) {
    dg_tensor *a = t->src[0];
    if (!a->requires_grad) return;
    dg_real *restrict ga = dg__grad(ctx, a);
    if (!ga) return;
    const dg_real *restrict x = a->data, *restrict y = t->data, *restrict g = t->grad;
    const dg_real p = t->fparam[0];
    const int64_t n = a->n;
    ctx->flops += 2 * (uint64_t)n;
    switch (t->op) {
    case DG_OP_NEG:        for (int64_t i = 0; i < n; i++) ga[i] -= g[i]; break;
    case DG_OP_SCALE:      for (int64_t i = 0; i < n; i++) ga[i] += g[i] * p; break;
    case DG_OP_ADD_SCALAR: for (int64_t i = 0; i < n; i++) ga[i] += g[i]; break;
    case DG_OP_TANH:       for (int64_t i = 0; i < n; i++) ga[i] += g[i] * (1.0f - y[i] * y[i]); break;
    case DG_OP_RELU:       for (int64_t i = 0; i < n; i++) ga[i] += x[i] > 0.0f ? g[i] : 0.0f; break;
    case DG_OP_SOFTPLUS:
        for (int64_t i = 0; i < n; i++) {
            dg_real e = exp(-fabs(x[i]));  /* sigmoid(x), stably */
            dg_real s = x[i] >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
            ga[i] += g[i] * s;
        }
        break;
    case DG_OP_SIGMOID: for (int64_t i = 0; i < n; i++) ga[i] += g[i] * y[i] * (1.0f - y[i]); break;
    case DG_OP_EXP:     for (int64_t i = 0; i < n; i++) ga[i] += g[i] * y[i]; break;
    case DG_OP_LOG:     for (int64_t i = 0; i < n; i++) ga[i] += g[i] / x[i]; break;
    case DG_OP_SQRT:    for (int64_t i = 0; i < n; i++) ga[i] += g[i] * 0.5f / y[i]; break;
    case DG_OP_SQUARE:  for (int64_t i = 0; i < n; i++) ga[i] += g[i] * 2.0f * x[i]; break;
    case DG_OP_POW:
        for (int64_t i = 0; i < n; i++) ga[i] += g[i] * p * pow(x[i], p - 1.0f);
        break;
    case DG_OP_ABS:
        for (int64_t i = 0; i < n; i++)
            ga[i] += x[i] > 0.0f ? g[i] : (x[i] < 0.0f ? -g[i] : 0.0f);
        break;
    case DG_OP_SIN: case DG_OP_COS: {  /* g cos(x), or -g sin(x): the forward's kernel a block at a time */
        dg_real d[256];
        for (int64_t i0 = 0; i0 < n; i0 += 256) {
            const int64_t m = n - i0 < 256 ? n - i0 : 256;
            if (t->op == DG_OP_SIN) DG_COS_N(m, x + i0, d);
            else DG_SIN_N(m, x + i0, d);
            const dg_real sg = t->op == DG_OP_SIN ? 1.0f : -1.0f;
            for (int64_t i = 0; i < m; i++) ga[i0 + i] += sg * g[i0 + i] * d[i];
        }
        break;
    }
    default: break;
    }
}

dg_tensor *dg_neg(dg_ctx *ctx, dg_tensor *a) { return unary(ctx, DG_OP_NEG, a, 0); }
dg_tensor *dg_scale(dg_ctx *ctx, dg_tensor *a, dg_real s) { return unary(ctx, DG_OP_SCALE, a, s); }
dg_tensor *dg_add_scalar(dg_ctx *ctx, dg_tensor *a, dg_real s) { return unary(ctx, DG_OP_ADD_SCALAR, a, s); }
dg_tensor *dg_tanh(dg_ctx *ctx, dg_tensor *a) { return unary(ctx, DG_OP_TANH, a, 0); }
dg_tensor *dg_relu(dg_ctx *ctx, dg_tensor *a) { return unary(ctx, DG_OP_RELU, a, 0); }
dg_tensor *dg_softplus(dg_ctx *ctx, dg_tensor *a) { return unary(ctx, DG_OP_SOFTPLUS, a, 0); }
dg_tensor *dg_sigmoid(dg_ctx *ctx, dg_tensor *a) { return unary(ctx, DG_OP_SIGMOID, a, 0); }
dg_tensor *dg_exp(dg_ctx *ctx, dg_tensor *a) { return unary(ctx, DG_OP_EXP, a, 0); }
dg_tensor *dg_log(dg_ctx *ctx, dg_tensor *a) { return unary(ctx, DG_OP_LOG, a, 0); }
dg_tensor *dg_sqrt(dg_ctx *ctx, dg_tensor *a) { return unary(ctx, DG_OP_SQRT, a, 0); }
dg_tensor *dg_square(dg_ctx *ctx, dg_tensor *a) { return unary(ctx, DG_OP_SQUARE, a, 0); }
dg_tensor *dg_pow(dg_ctx *ctx, dg_tensor *a, dg_real p) { return unary(ctx, DG_OP_POW, a, p); }
dg_tensor *dg_abs(dg_ctx *ctx, dg_tensor *a) { return unary(ctx, DG_OP_ABS, a, 0); }
dg_tensor *dg_sin(dg_ctx *ctx, dg_tensor *a) { return unary(ctx, DG_OP_SIN, a, 0); }
dg_tensor *dg_cos(dg_ctx *ctx, dg_tensor *a) { return unary(ctx, DG_OP_COS, a, 0); }

/* ------------------------------------------------------- matmul, linear */

/* (M,K)·(K,N) -> (M,N) */
dg_tensor *dg_matmul(dg_ctx *ctx, dg_tensor *a, dg_tensor *b) {
    NEED(ctx, a);
    NEED(ctx, b);
    if (a->ndim != 2 || b->ndim != 2 || a->shape[1] != b->shape[0]) {
        char s1[64], s2[64];
        return dg_ctx_fail(ctx, DG_ERR_SHAPE, "matmul: shapes %s and %s (need (M,K) and (K,N))",
                        shape_str(a, s1, sizeof s1), shape_str(b, s2, sizeof s2));
    }
    const int M = a->shape[0], K = a->shape[1], N = b->shape[1];
    int shape[2] = {M, N};
    dg_tensor *t = dg__node(ctx, DG_OP_MATMUL, 2, shape, a, b, NULL);
    if (!t) return NULL;
    memset(t->data, 0, (size_t)t->n * sizeof(dg_real));
    dg__gemm_acc(M, N, K, a->data, K, 1, b->data, N, t->data, N);
    ctx->flops += 2 * (uint64_t)M * N * K;
    return t;
}

static void matmul_backward(dg_ctx *ctx, dg_tensor *t) {
    dg_tensor *a = t->src[0], *b = t->src[1];
    const int M = a->shape[0], K = a->shape[1], N = b->shape[1];
    dg_real *ga = a->requires_grad ? dg__grad(ctx, a) : NULL;
    dg_real *gb = b->requires_grad ? dg__grad(ctx, b) : NULL;
    dg_real *bt = ga ? dg_ctx_alloc(ctx, (size_t)N * K * sizeof(dg_real)) : NULL;  /* Bᵀ (N,K) */
    if (ctx->status != DG_OK) return;
    if (ga) {  /* dA (M,K) += dC (M,N) · Bᵀ (N,K) */
        for (int k = 0; k < K; k++)
            for (int n = 0; n < N; n++) bt[(int64_t)n * K + k] = b->data[(int64_t)k * N + n];
        dg__gemm_acc(M, K, N, t->grad, N, 1, bt, K, ga, K);
    }
    if (gb)  /* dB (K,N) += Aᵀ (K,M) · dC (M,N) */
        dg__gemm_acc(K, N, M, a->data, 1, K, t->grad, N, gb, N);
    ctx->flops += 2 * (uint64_t)M * N * K * ((ga != NULL) + (gb != NULL));
}

/* w (O,I) transposed to (I,O) in the arena. Parameters do not change between
 * two resets of the arena (an optimiser steps between episodes), so a
 * parameter's transpose is made once per reset and reused by every step. */
static const dg_real *transposed(dg_ctx *ctx, const dg_tensor *w) {
    const int O = w->shape[0], I = w->shape[1];
    if (w->is_param)
        for (int i = 0; i < ctx->nwt; i++)
            if (ctx->wt[i].src == w->data && ctx->wt[i].rows == O && ctx->wt[i].cols == I)
                return ctx->wt[i].wt;
    dg_real *restrict wt = dg_ctx_alloc(ctx, (size_t)I * O * sizeof(dg_real));
    if (!wt) return NULL;
    for (int o = 0; o < O; o++)
        for (int i = 0; i < I; i++) wt[(int64_t)i * O + o] = w->data[(int64_t)o * I + i];
    if (w->is_param && ctx->nwt < DG_WT_CACHE)
        ctx->wt[ctx->nwt++] = (dg_wt_entry){w->data, O, I, wt};
    return wt;
}

/* y(B,O) = x(B,I) · w(O,I)ᵀ + b(O). The kernel reads w transposed (I,O) so
 * its inner loop runs over outputs. */
static dg_tensor *linear_impl(dg_ctx *ctx, dg_op op, dg_tensor *x, dg_tensor *w, dg_tensor *b) {
    NEED(ctx, x);
    NEED(ctx, w);
    if (x->ndim != 2 || w->ndim != 2 || x->shape[1] != w->shape[1] ||
        (b && (b->n != w->shape[0]))) {
        char s1[64], s2[64], s3[64] = "none";
        if (b) shape_str(b, s3, sizeof s3);
        return dg_ctx_fail(ctx, DG_ERR_SHAPE, "%s: x %s, weight %s, bias %s (need (B,I), (O,I), (O))",
                        dg_op_name(op), shape_str(x, s1, sizeof s1), shape_str(w, s2, sizeof s2), s3);
    }
    const int B = x->shape[0], I = x->shape[1], O = w->shape[0];
    int shape[2] = {B, O};
    dg_tensor *t = dg__node(ctx, op, 2, shape, x, w, b);
    if (!t) return NULL;
    const dg_real *wt = transposed(ctx, w);  /* (I,O) */
    if (!wt) return NULL;
    dg__gemm_bias_act(B, O, I, x->data, I, wt, O, b ? b->data : NULL, op == DG_OP_LINEAR_TANH, t->data, O);
    ctx->flops += 2 * (uint64_t)B * O * I + (uint64_t)t->n;
    return t;
}

dg_tensor *dg_linear(dg_ctx *ctx, dg_tensor *x, dg_tensor *w, dg_tensor *b) {
    return linear_impl(ctx, DG_OP_LINEAR, x, w, b);
}

dg_tensor *dg_linear_tanh(dg_ctx *ctx, dg_tensor *x, dg_tensor *w, dg_tensor *b) {
    return linear_impl(ctx, DG_OP_LINEAR_TANH, x, w, b);
}

static void linear_backward(dg_ctx *ctx, dg_tensor *t) {
    dg_tensor *x = t->src[0], *w = t->src[1], *b = t->src[2];
    const int B = x->shape[0], I = x->shape[1], O = w->shape[0];
    int gx_fresh = 0;  /* x's gradient buffer is new: dx is stored into it, not added (32 or more columns) */
    dg_real *gx = x->requires_grad ? dg__grad_fresh(ctx, x, &gx_fresh) : NULL;
    if (gx && gx_fresh && (I < 32 || x == w || x == b)) memset(gx, 0, (size_t)x->n * sizeof *gx), gx_fresh = 0;
    dg_real *gw = w->requires_grad ? dg__grad(ctx, w) : NULL;
    dg_real *gb = b && b->requires_grad ? dg__grad(ctx, b) : NULL;
    /* through the tanh, dz = dy (1 - y²), in place: t's gradient is read by
     * this backward only, once; the bias sums dz */
    dg_real *restrict dz = t->grad;
    if (ctx->status != DG_OK) return;
    dg__tanh_grad_colsum(B, O, t->op == DG_OP_LINEAR_TANH ? t->data : NULL, dz, gb);
    /* dx before dW (two separate results, so the order changes no bit): at a large batch x lies
       far back in the tape, and the stored dx's blocks prefetch it into L2 for dW */
    if (gx && gx_fresh)  /* dx (B,I) = dz (B,O) · W (O,I) */
#ifndef DG_F64
        if (gw && B >= 256) dg__gemm_store_prefetch(B, I, O, dz, O, w->data, I, gx, I, x->data, x->n);
        else
#endif
        dg__gemm_bias_act(B, I, O, dz, O, w->data, I, NULL, 0, gx, I);
    else if (gx)  /* dx (B,I) += dz (B,O) · W (O,I) */
        dg__gemm_acc(B, I, O, dz, O, 1, w->data, I, gx, I);
    if (gw)  /* dW (O,I) += dzᵀ (O,B) · x (B,I) */
        dg__gemm_acc(O, I, B, dz, 1, O, x->data, I, gw, I);
    ctx->flops += 2 * (uint64_t)B * I * O * ((gw != NULL) + (gx != NULL)) + 2 * (uint64_t)t->n;
}

/* ------------------------------------------------------- a layer and its tangents */

#ifndef DG_F64
/* s[i] = sin(x[i]), c[i] = cos(x[i]) from one reduction (sincos_n's polynomials and bits) */
static void sincos_pair_n(int64_t n, const float *restrict x, float *restrict s, float *restrict c) {
    for (int64_t i = 0; i < n; i++) {
        float sn, cs;
        const int q = sincos_reduce(x[i], &sn, &cs);
        const float vs = (q & 1) ? cs : sn, vc = (q & 1) ? sn : cs;
        s[i] = (q & 2) ? -vs : vs;
        c[i] = ((q + 1) & 2) ? -vc : vc;
    }
    int far = 0;  /* any x beyond the reduction's range (or NaN): an OR over the row, vectorised,
                     before the scalar pass that was a third of this function's time */
    for (int64_t i = 0; i < n; i++) far |= !(fabsf(x[i]) <= 1e5f);
    if (far)
        for (int64_t i = 0; i < n; i++)
            if (!(fabsf(x[i]) <= 1e5f)) s[i] = sinf(x[i]), c[i] = cosf(x[i]);
}
#else
static void sincos_pair_n(int64_t n, const double *x, double *s, double *c) {
    for (int64_t i = 0; i < n; i++) s[i] = sin(x[i]), c[i] = cos(x[i]);
}
#endif

/* points a panel of dg_linear_tangent: about 256 rows in all, so that a panel's pre-activations are
 * still in L2 when the activation reads them */
static int tangent_panel(int k) { return k >= 64 ? 4 : 8 * ((256 / k + 7) / 8); }

/* the activation's value and first two derivatives at the n pre-activations p of one value row:
 * h, d = act'(p), d2 = act''(p) (into three rows of scratch) */
static void tangent_act(dg_tangent_act act, dg_real omega0, int n, const dg_real *p, dg_real *h, dg_real *d, dg_real *d2) {
    if (act == DG_TANGENT_SINE) {
        for (int o = 0; o < n; o++) d2[o] = omega0 * p[o];
        sincos_pair_n(n, d2, h, d);
        for (int o = 0; o < n; o++) {
            d2[o] = -omega0 * omega0 * h[o];
            d[o] *= omega0;
        }
    } else if (act == DG_TANGENT_TANH) {
#ifndef DG_F64
        dg__tanh_n(n, p, h);
#else
        for (int o = 0; o < n; o++) h[o] = dg__tanhf(p[o]);
#endif
        for (int o = 0; o < n; o++) {
            d[o] = 1.0f - h[o] * h[o];
            d2[o] = -2.0f * h[o] * d[o];
        }
    } else
        for (int o = 0; o < n; o++) h[o] = p[o], d[o] = 1, d2[o] = 0;
}

dg_tensor *dg_linear_tangent(dg_ctx *ctx, dg_tensor *z, dg_tensor *w, dg_tensor *b, int k, dg_tangent_act act,
                             dg_real omega0) {
    NEED(ctx, z);
    NEED(ctx, w);
    if (z->ndim != 2 || w->ndim != 2 || z->shape[1] != w->shape[1] || (b && b->n != w->shape[0]) || k < 1 ||
        z->shape[0] % k) {
        char s1[64], s2[64];
        return dg_ctx_fail(ctx, DG_ERR_SHAPE, "linear_tangent: z %s, weight %s, %d rows a point (need (R,I) with R a "
                           "multiple of k >= 1, (O,I), bias (O))", shape_str(z, s1, sizeof s1), shape_str(w, s2, sizeof s2), k);
    }
    if (act != DG_TANGENT_LINEAR && act != DG_TANGENT_TANH && act != DG_TANGENT_SINE)
        return dg_ctx_fail(ctx, DG_ERR_ARG, "linear_tangent: activation %d (linear 0, tanh 1, sine 2)", (int)act);
    const int R = z->shape[0], I = z->shape[1], O = w->shape[0], np = R / k, nt = k - 1;
    dg_tensor *t = dg__node(ctx, DG_OP_LINEAR_TANGENT, 2, (int[]){R, O}, z, w, b);
    if (!t) return NULL;
    t->iparam[0] = k;
    t->iparam[1] = (int)act;
    t->fparam[0] = omega0;
    /* the pre-activations, kept for the backward (a linear layer's are its result) */
    dg_real *P = act == DG_TANGENT_LINEAR ? t->data : dg_ctx_alloc(ctx, (size_t)R * O * sizeof(dg_real));
    dg_real *tmp = dg_ctx_alloc(ctx, 3 * (size_t)O * sizeof(dg_real));
    const dg_real *wt = transposed(ctx, w);  /* (I,O) */
    if (!P || !tmp || !wt) return NULL;
    t->state = P;
    const int pp = tangent_panel(k);
    for (int p0 = 0; p0 < np; p0 += pp) {
        const int n = np - p0 < pp ? np - p0 : pp;
        const int64_t v0 = p0, t0 = (int64_t)np + (int64_t)p0 * nt;  /* the panel's first value and tangent rows */
        /* the value rows as dg_linear computes them (so the value is dg_linear's, and its
           activation's, to the bit), the tangent rows' products without the bias */
        dg__gemm_bias_act(n, O, I, z->data + v0 * I, I, wt, O, b ? b->data : NULL, 0, P + v0 * O, O);
        if (nt) dg__gemm_bias_act(n * nt, O, I, z->data + t0 * I, I, wt, O, NULL, 0, P + t0 * O, O);
        for (int q = 0; q < n && act != DG_TANGENT_LINEAR; q++) {
            const dg_real *pv = P + (v0 + q) * O, *pt = P + (t0 + (int64_t)q * nt) * O;
            dg_real *yv = t->data + (v0 + q) * O, *yt = t->data + (t0 + (int64_t)q * nt) * O;
            tangent_act(act, omega0, O, pv, yv, tmp, tmp + O);
            for (int64_t i = 0; i < (int64_t)nt * O; i += O)
                for (int o = 0; o < O; o++) yt[i + o] = tmp[o] * pt[i + o];
        }
    }
    ctx->flops += 2 * (uint64_t)R * O * I + (uint64_t)t->n;
    return t;
}

/* dP (the gradient of the pre-activations) in place of t's gradient G, a panel at a time, each panel
 * then taken through the products: dz += dP w, dw += dPᵀ z, db += the value rows' sum of dP */
static void linear_tangent_backward(dg_ctx *ctx, dg_tensor *t) {
    dg_tensor *z = t->src[0], *w = t->src[1], *b = t->src[2];
    const int R = z->shape[0], I = z->shape[1], O = w->shape[0], k = t->iparam[0], np = R / k, nt = k - 1;
    const dg_tangent_act act = (dg_tangent_act)t->iparam[1];
    const dg_real omega0 = t->fparam[0];
    int gz_fresh = 0;  /* z's gradient buffer is new: dz is stored into it, not added (32 or more columns) */
    dg_real *gz = z->requires_grad ? dg__grad_fresh(ctx, z, &gz_fresh) : NULL;
    if (gz && gz_fresh && (I < 32 || z == w || z == b)) memset(gz, 0, (size_t)z->n * sizeof *gz), gz_fresh = 0;
    dg_real *gw = w->requires_grad ? dg__grad(ctx, w) : NULL;
    dg_real *gb = b && b->requires_grad ? dg__grad(ctx, b) : NULL;
    dg_real *tmp = dg_ctx_alloc(ctx, 4 * (size_t)O * sizeof(dg_real));
    if (ctx->status != DG_OK || !tmp) return;
    const dg_real *P = t->state;
    dg_real *G = t->grad;
    const int pp = tangent_panel(k);
    for (int p0 = 0; p0 < np; p0 += pp) {
        const int n = np - p0 < pp ? np - p0 : pp;
        const int64_t v0 = p0, t0 = (int64_t)np + (int64_t)p0 * nt;
        for (int q = 0; q < n && act != DG_TANGENT_LINEAR; q++) {
            const dg_real *pv = P + (v0 + q) * O, *pt = P + (t0 + (int64_t)q * nt) * O;
            dg_real *gv = G + (v0 + q) * O, *gt = G + (t0 + (int64_t)q * nt) * O;
            dg_real *h = tmp, *d = tmp + O, *d2 = tmp + 2 * O, *acc = tmp + 3 * O;
            tangent_act(act, omega0, O, pv, h, d, d2);
            for (int o = 0; o < O; o++) acc[o] = 0;
            for (int64_t i = 0; i < (int64_t)nt * O; i += O)  /* dq = act' g; the value row gets act'' q g */
                for (int o = 0; o < O; o++) {
                    acc[o] += gt[i + o] * pt[i + o];
                    gt[i + o] *= d[o];
                }
            for (int o = 0; o < O; o++) gv[o] = d[o] * gv[o] + d2[o] * acc[o];
        }
        if (gb)
            for (int q = 0; q < n; q++)
                for (int o = 0; o < O; o++) gb[o] += G[(v0 + q) * O + o];
        const int64_t r0[2] = {v0, t0};
        const int rows[2] = {n, n * nt};
        for (int part = 0; part < 2; part++) {  /* the value rows, then the tangent rows */
            if (!rows[part]) continue;
            const dg_real *Gp = G + r0[part] * O;
            if (gz && gz_fresh)  /* dz (rows, I) = dP (rows, O) · w (O, I) */
                dg__gemm_bias_act(rows[part], I, O, Gp, O, w->data, I, NULL, 0, gz + r0[part] * I, I);
            else if (gz)
                dg__gemm_acc(rows[part], I, O, Gp, O, 1, w->data, I, gz + r0[part] * I, I);
            if (gw)  /* dw (O, I) += dPᵀ (O, rows) · z (rows, I) */
                dg__gemm_acc(O, I, rows[part], Gp, 1, O, z->data + r0[part] * I, I, gw, I);
        }
    }
    ctx->flops += 2 * (uint64_t)R * I * O * ((gw != NULL) + (gz != NULL)) + 2 * (uint64_t)t->n;
}

/* ------------------------------------------------------- a one-output MLP's value and input gradient */

#define VG_MAX_LAYERS 8
#define VG_PANEL 256  /* rows a panel: its activations stay in L2 through every layer */

/* what dg_mlp_value_grad keeps for its backward (in the arena) */
typedef struct vg_state {
    int L, size[VG_MAX_LAYERS + 1], act, linear_out;
    dg_real omega0;
    const dg_real *wt[VG_MAX_LAYERS];  /* each weight transposed (I, O)                              */
    dg_real *H[VG_MAX_LAYERS];         /* (B, O_l): layer l's output h_{l+1} (the last: y)            */
    dg_real *D[VG_MAX_LAYERS];         /* (B, O_l): act'(p_l)                                        */
    dg_real *G[VG_MAX_LAYERS];         /* (B, I_l): g_l = dy/dh_l, layer l's input (l >= 1)            */
} vg_state;

static dg_tangent_act vg_act(const vg_state *v, int l) {
    return v->linear_out && l == v->L - 1 ? DG_TANGENT_LINEAR : (dg_tangent_act)v->act;
}

/* act''(p) from the activation's value h and derivative d (sine: -omega0² sin; tanh: -2 h (1 - h²)) */
static void vg_d2(dg_tangent_act act, dg_real omega0, int n, const dg_real *h, const dg_real *d, dg_real *d2) {
    for (int o = 0; o < n; o++)
        d2[o] = act == DG_TANGENT_SINE ? -omega0 * omega0 * h[o] : act == DG_TANGENT_TANH ? -2 * h[o] * d[o] : 0;
}

/* The backward: with Y = the result's gradient (its column 0: dL/dy; columns 1..: dL/d(dy/dx) =
 * gbar_0), a panel at a time. The input gradient was g_l = q_l W_l with q_l = g_{l+1} ⊙ act'(p_l),
 * so going up the layers: qbar_l = gbar_l W_lᵀ, dW_l += q_lᵀ gbar_l, gbar_{l+1} = qbar_l ⊙ act'(p_l),
 * and p_l's share pbar_l = qbar_l ⊙ g_{l+1} ⊙ act''(p_l); then down them as an ordinary backward of
 * the forward, pbar_l += hbar_{l+1} ⊙ act'(p_l) (hbar_L = dL/dy), dW_l += pbar_lᵀ h_l, db_l +=
 * Σ pbar_l, hbar_l = pbar_l W_l. Six products a layer in all (two forward, four here), whatever the
 * input's size. */
static void mlp_value_grad_backward(dg_ctx *ctx, dg_tensor *t) {
    const vg_state *v = t->state;
    const int L = v->L, S0 = v->size[0], B = t->shape[0], ld = S0 + 1;
    dg_tensor *x = t->srcs[0];
    int W = 0;
    for (int l = 0; l <= L; l++) W = v->size[l] > W ? v->size[l] : W;
    const int pr = B < VG_PANEL ? B : VG_PANEL;
    /* scratch: pbar of every layer (kept from the way up to the way down), and four rows' blocks */
    dg_real *PB[VG_MAX_LAYERS];
    for (int l = 0; l < L; l++) PB[l] = dg_ctx_alloc(ctx, (size_t)pr * v->size[l + 1] * sizeof(dg_real));
    dg_real *gbar = dg_ctx_alloc(ctx, (size_t)pr * W * sizeof(dg_real));
    dg_real *gbar2 = dg_ctx_alloc(ctx, (size_t)pr * W * sizeof(dg_real));
    dg_real *q = dg_ctx_alloc(ctx, (size_t)pr * W * sizeof(dg_real));
    dg_real *hbar = dg_ctx_alloc(ctx, (size_t)pr * W * sizeof(dg_real));
    dg_real *d2 = dg_ctx_alloc(ctx, (size_t)W * sizeof(dg_real));
    dg_real *gw[VG_MAX_LAYERS], *gb[VG_MAX_LAYERS];
    for (int l = 0; l < L; l++) {
        dg_tensor *w = t->srcs[1 + 2 * l], *b = t->srcs[2 + 2 * l];
        gw[l] = w->requires_grad ? dg__grad(ctx, w) : NULL;
        gb[l] = b->requires_grad ? dg__grad(ctx, b) : NULL;
    }
    dg_real *gx = x->requires_grad ? dg__grad(ctx, x) : NULL;
    if (ctx->status != DG_OK || !gbar || !gbar2 || !q || !hbar || !d2) return;
    for (int l = 0; l < L; l++)
        if (!PB[l]) return;
    const dg_real *Y = t->grad;
    uint64_t flops = 0;
    for (int r0 = 0; r0 < B; r0 += pr) {
        const int n = B - r0 < pr ? B - r0 : pr;
        /* up: gbar_l (n, I) at gin with row stride gld */
        const dg_real *gin = Y + (int64_t)r0 * ld + 1;
        int64_t gld = ld;
        for (int l = 0; l < L; l++) {
            const int I = v->size[l], O = v->size[l + 1];
            const dg_tangent_act act = vg_act(v, l);
            const dg_real *D = v->D[l] + (int64_t)r0 * O, *H = v->H[l] + (int64_t)r0 * O;
            const dg_real *G = l < L - 1 ? v->G[l + 1] + (int64_t)r0 * O : NULL;  /* g_{l+1}; the seed 1 at the top */
            /* qbar_l (n, O) = gbar_l (n, I) · W_lᵀ, into PB[l] for now */
            dg__gemm_bias_act(n, O, I, gin, gld, v->wt[l], O, NULL, 0, PB[l], O);
            /* q_l = g_{l+1} ⊙ act'(p_l); dW_l += q_lᵀ gbar_l */
            for (int64_t i = 0; i < (int64_t)n * O; i++) q[i] = (G ? G[i] : 1) * D[i];
            if (gw[l]) dg__gemm_acc(O, I, n, q, 1, O, gin, gld, gw[l], I);
            /* gbar_{l+1} = qbar_l ⊙ act'(p_l); pbar_l = qbar_l ⊙ g_{l+1} ⊙ act''(p_l) */
            dg_real *gnext = (l & 1) ? gbar2 : gbar;
            for (int r = 0; r < n; r++) {
                const int64_t o0 = (int64_t)r * O;
                vg_d2(act, v->omega0, O, H + o0, D + o0, d2);
                for (int o = 0; o < O; o++) {
                    const dg_real qb = PB[l][o0 + o];
                    gnext[o0 + o] = qb * D[o0 + o];
                    PB[l][o0 + o] = qb * (G ? G[o0 + o] : 1) * d2[o];
                }
            }
            flops += 4 * (uint64_t)n * I * O;
            gin = gnext;
            gld = O;
        }
        /* down: the forward's own backward, hbar_L = dL/dy */
        for (int r = 0; r < n; r++) hbar[r] = Y[(int64_t)(r0 + r) * ld];
        for (int l = L - 1; l >= 0; l--) {
            const int I = v->size[l], O = v->size[l + 1];
            dg_tensor *w = t->srcs[1 + 2 * l];
            const dg_real *D = v->D[l] + (int64_t)r0 * O;
            for (int64_t i = 0; i < (int64_t)n * O; i++) PB[l][i] += hbar[i] * D[i];
            const dg_real *hin = l ? v->H[l - 1] + (int64_t)r0 * I : x->data + (int64_t)r0 * I;
            if (gw[l]) dg__gemm_acc(O, I, n, PB[l], 1, O, hin, I, gw[l], I);
            if (gb[l])
                for (int r = 0; r < n; r++)
                    for (int o = 0; o < O; o++) gb[l][o] += PB[l][(int64_t)r * O + o];
            if (l) dg__gemm_bias_act(n, I, O, PB[l], O, w->data, I, NULL, 0, hbar, I);  /* hbar_l = pbar_l W_l */
            else if (gx) dg__gemm_acc(n, I, O, PB[l], O, 1, w->data, I, gx + (int64_t)r0 * I, I);
            flops += 2 * (uint64_t)n * I * O * ((gw[l] != NULL) + (l || gx));
        }
    }
    ctx->flops += flops;
}

dg_tensor *dg_mlp_value_grad(dg_ctx *ctx, dg_tensor *x, int nlayers, dg_tensor *const *w, dg_tensor *const *b,
                             dg_tangent_act act, int linear_out, dg_real omega0) {
    NEED(ctx, x);
    if (nlayers < 1 || nlayers > VG_MAX_LAYERS || !w || !b)
        return dg_ctx_fail(ctx, DG_ERR_ARG, "mlp_value_grad: %d layers (1 to %d, each with a weight and a bias)",
                           nlayers, VG_MAX_LAYERS);
    if (act != DG_TANGENT_LINEAR && act != DG_TANGENT_TANH && act != DG_TANGENT_SINE)
        return dg_ctx_fail(ctx, DG_ERR_ARG, "mlp_value_grad: activation %d (linear 0, tanh 1, sine 2)", (int)act);
    vg_state v;
    memset(&v, 0, sizeof v);
    v.L = nlayers;
    v.act = (int)act;
    v.linear_out = linear_out != 0;
    v.omega0 = omega0;
    if (x->ndim != 2) return dg_ctx_fail(ctx, DG_ERR_SHAPE, "mlp_value_grad: x must be (B, I)");
    const int B = x->shape[0];
    v.size[0] = x->shape[1];
    dg_tensor *srcs[1 + 2 * VG_MAX_LAYERS];
    srcs[0] = x;
    for (int l = 0; l < nlayers; l++) {
        NEED(ctx, w[l]);
        NEED(ctx, b[l]);
        if (w[l]->ndim != 2 || w[l]->shape[1] != v.size[l] || b[l]->n != w[l]->shape[0] ||
            (l == nlayers - 1 && w[l]->shape[0] != 1)) {
            char s1[64];
            return dg_ctx_fail(ctx, DG_ERR_SHAPE, "mlp_value_grad: layer %d's weight %s, bias of %lld (need (O,%d), "
                               "bias (O), and O 1 in the last layer)", l, shape_str(w[l], s1, sizeof s1),
                               (long long)b[l]->n, v.size[l]);
        }
        v.size[l + 1] = w[l]->shape[0];
        srcs[1 + 2 * l] = w[l];
        srcs[2 + 2 * l] = b[l];
    }
    int W = 0;
    for (int l = 0; l <= nlayers; l++) W = v.size[l] > W ? v.size[l] : W;
    const int S0 = v.size[0], pr = B < VG_PANEL ? B : VG_PANEL;
    dg_real *P = dg_ctx_alloc(ctx, (size_t)pr * W * sizeof(dg_real));
    dg_real *q = dg_ctx_alloc(ctx, (size_t)pr * W * sizeof(dg_real));
    for (int l = 0; l < nlayers && ctx->status == DG_OK; l++) {
        const size_t bytes = (size_t)B * v.size[l + 1] * sizeof(dg_real);
        v.wt[l] = transposed(ctx, w[l]);
        v.H[l] = dg_ctx_alloc(ctx, bytes);
        v.D[l] = dg_ctx_alloc(ctx, bytes);
        v.G[l] = l ? dg_ctx_alloc(ctx, (size_t)B * v.size[l] * sizeof(dg_real)) : NULL;  /* slot 0: the result's */
    }
    if (ctx->status != DG_OK || !P || !q) return NULL;
    dg_tensor *t = dg_custom(ctx, "mlp_value_grad", 2, (int[]){B, S0 + 1}, srcs, 1 + 2 * nlayers,
                             mlp_value_grad_backward, &v, sizeof v);
    if (!t) return NULL;
    for (int r0 = 0; r0 < B; r0 += pr) {
        const int n = B - r0 < pr ? B - r0 : pr;
        /* forward: p_l = h_l W_lᵀ + b_l (dg_linear's bits), h_{l+1} = act(p_l), act'(p_l) kept */
        for (int l = 0; l < nlayers; l++) {
            const int I = v.size[l], O = v.size[l + 1];
            const dg_real *hin = l ? v.H[l - 1] + (int64_t)r0 * I : x->data + (int64_t)r0 * I;
            dg__gemm_bias_act(n, O, I, hin, I, v.wt[l], O, b[l]->data, 0, P, O);
            dg_real *H = v.H[l] + (int64_t)r0 * O, *D = v.D[l] + (int64_t)r0 * O;
            for (int r = 0; r < n; r++) {
                const int64_t o0 = (int64_t)r * O;
                tangent_act(vg_act(&v, l), omega0, O, P + o0, H + o0, D + o0, q);
            }
        }
        /* the input gradient, down: q_l = g_{l+1} ⊙ act'(p_l), g_l = q_l W_l (g_L = 1) */
        for (int l = nlayers - 1; l >= 0; l--) {
            const int I = v.size[l], O = v.size[l + 1];
            const dg_real *D = v.D[l] + (int64_t)r0 * O;
            const dg_real *G = l < nlayers - 1 ? v.G[l + 1] + (int64_t)r0 * O : NULL;
            for (int64_t i = 0; i < (int64_t)n * O; i++) q[i] = (G ? G[i] : 1) * D[i];
            if (l) dg__gemm_bias_act(n, I, O, q, O, w[l]->data, I, NULL, 0, v.G[l] + (int64_t)r0 * I, I);
            else dg__gemm_bias_act(n, I, O, q, O, w[l]->data, I, NULL, 0, t->data + (int64_t)r0 * (S0 + 1) + 1, S0 + 1);
        }
        const dg_real *y = v.H[nlayers - 1] + (int64_t)r0;
        for (int r = 0; r < n; r++) t->data[(int64_t)(r0 + r) * (S0 + 1)] = y[r];
    }
    for (int l = 0; l < nlayers; l++) ctx->flops += 4 * (uint64_t)B * v.size[l] * v.size[l + 1];
    return t;
}

/* ------------------------------------------------------- reductions */

dg_tensor *dg_sum(dg_ctx *ctx, dg_tensor *a) {
    NEED(ctx, a);
    int one = 1;
    dg_tensor *t = dg__node(ctx, DG_OP_SUM, 1, &one, a, NULL, NULL);
    if (!t) return NULL;
    double acc = 0.0;  /* double: the loss is summed over many terms */
    for (int64_t i = 0; i < a->n; i++) acc += a->data[i];
    t->data[0] = (dg_real)acc;
    return t;
}

dg_tensor *dg_mean(dg_ctx *ctx, dg_tensor *a) {
    NEED(ctx, a);
    int one = 1;
    dg_tensor *t = dg__node(ctx, DG_OP_MEAN, 1, &one, a, NULL, NULL);
    if (!t) return NULL;
    double acc = 0.0;
    for (int64_t i = 0; i < a->n; i++) acc += a->data[i];
    t->data[0] = a->n ? (dg_real)(acc / (double)a->n) : 0.0f;
    return t;
}

static void sum_backward(dg_ctx *ctx, dg_tensor *t) {
    dg_tensor *a = t->src[0];
    if (!a->requires_grad || !a->n) return;
    dg_real *ga = dg__grad(ctx, a);
    if (!ga) return;
    const dg_real g = t->op == DG_OP_MEAN ? t->grad[0] / (dg_real)a->n : t->grad[0];
    for (int64_t i = 0; i < a->n; i++) ga[i] += g;
}

/* outer × len × inner decomposition of a tensor around one axis */
static void split_axis(const dg_tensor *a, int axis, int64_t *outer, int64_t *inner) {
    *outer = 1;
    *inner = 1;
    for (int i = 0; i < axis; i++) *outer *= a->shape[i];
    for (int i = axis + 1; i < a->ndim; i++) *inner *= a->shape[i];
}

static int fix_axis(dg_ctx *ctx, const char *op, const dg_tensor *a, int *axis) {
    int ax = *axis < 0 ? *axis + a->ndim : *axis;
    if (ax < 0 || ax >= a->ndim) {
        dg_ctx_fail(ctx, DG_ERR_ARG, "%s: axis %d out of range for %d dims", op, *axis, a->ndim);
        return 0;
    }
    *axis = ax;
    return 1;
}

static dg_tensor *reduce_axis(dg_ctx *ctx, dg_op op, dg_tensor *a, int axis) {
    NEED(ctx, a);
    if (!fix_axis(ctx, dg_op_name(op), a, &axis)) return NULL;
    int shape[DG_MAX_DIMS];
    memcpy(shape, a->shape, sizeof shape);
    const int len = shape[axis];
    shape[axis] = 1;
    dg_tensor *t = dg__node(ctx, op, a->ndim, shape, a, NULL, NULL);
    if (!t) return NULL;
    t->iparam[0] = axis;
    int64_t outer, inner;
    split_axis(a, axis, &outer, &inner);
    const dg_real s = op == DG_OP_MEAN_AXIS && len ? 1.0f / (dg_real)len : 1.0f;
    if (inner == 1) {  /* the last axis (a row's sum): the same adds, without a call per row */
        for (int64_t o = 0; o < outer; o++) {
            const dg_real *restrict x = a->data + o * len;
            dg_real y = 0.0f;
            for (int k = 0; k < len; k++) y += x[k];
            t->data[o] = y * s;
        }
        return t;
    }
    for (int64_t o = 0; o < outer; o++) {
        dg_real *restrict y = t->data + o * inner;
        memset(y, 0, (size_t)inner * sizeof(dg_real));
        for (int k = 0; k < len; k++) {
            const dg_real *restrict x = a->data + (o * len + k) * inner;
            for (int64_t i = 0; i < inner; i++) y[i] += x[i];
        }
        for (int64_t i = 0; i < inner; i++) y[i] *= s;
    }
    return t;
}

static void reduce_axis_backward(dg_ctx *ctx, dg_tensor *t) {
    dg_tensor *a = t->src[0];
    if (!a->requires_grad) return;
    dg_real *ga = dg__grad(ctx, a);
    if (!ga) return;
    const int axis = t->iparam[0], len = a->shape[axis];
    int64_t outer, inner;
    split_axis(a, axis, &outer, &inner);
    const dg_real s = t->op == DG_OP_MEAN_AXIS && len ? 1.0f / (dg_real)len : 1.0f;
    for (int64_t o = 0; o < outer; o++) {
        const dg_real *restrict g = t->grad + o * inner;
        for (int k = 0; k < len; k++) {
            dg_real *restrict gx = ga + (o * len + k) * inner;
            for (int64_t i = 0; i < inner; i++) gx[i] += g[i] * s;
        }
    }
}

dg_tensor *dg_sum_axis(dg_ctx *ctx, dg_tensor *a, int axis) { return reduce_axis(ctx, DG_OP_SUM_AXIS, a, axis); }
dg_tensor *dg_mean_axis(dg_ctx *ctx, dg_tensor *a, int axis) { return reduce_axis(ctx, DG_OP_MEAN_AXIS, a, axis); }

/* ------------------------------------------------------- concat, slice, reshape */

dg_tensor *dg_concat(dg_ctx *ctx, dg_tensor *const *xs, int count, int axis) {
    if (ctx->status != DG_OK) return NULL;
    if (count < 1) return dg_ctx_fail(ctx, DG_ERR_ARG, "concat: no inputs");
    for (int k = 0; k < count; k++) NEED(ctx, xs[k]);
    const dg_tensor *x0 = xs[0];
    if (!fix_axis(ctx, "concat", x0, &axis)) return NULL;
    int shape[DG_MAX_DIMS];
    memcpy(shape, x0->shape, sizeof shape);
    shape[axis] = 0;
    int need_grad = 0;
    for (int k = 0; k < count; k++) {
        const dg_tensor *x = xs[k];
        int ok = x->ndim == x0->ndim;
        for (int d = 0; ok && d < x0->ndim; d++) ok = d == axis || x->shape[d] == x0->shape[d];
        if (!ok) {
            char s1[64], s2[64];
            return dg_ctx_fail(ctx, DG_ERR_SHAPE, "concat: input %d has shape %s, input 0 has %s (axis %d)",
                            k, shape_str(x, s1, sizeof s1), shape_str(x0, s2, sizeof s2), axis);
        }
        shape[axis] += x->shape[axis];
        need_grad |= x->requires_grad;
    }
    /* any number of operands: an arena array in srcs */
    dg_tensor **list = dg_ctx_alloc(ctx, (size_t)count * sizeof *list);
    if (!list) return NULL;
    memcpy(list, xs, (size_t)count * sizeof *list);
    dg_tensor *t = dg__node(ctx, DG_OP_CONCAT, x0->ndim, shape, NULL, NULL, NULL);
    if (!t) return NULL;
    t->iparam[0] = axis;
    t->iparam[1] = count;
    t->srcs = list;
    if (need_grad) {
        t->requires_grad = 1;
        t->tape_prev = ctx->tape;
        ctx->tape = t;
        ctx->tape_len++;
    }
    int64_t outer, inner;
    split_axis(t, axis, &outer, &inner);
    for (int64_t o = 0; o < outer; o++) {
        dg_real *y = t->data + o * shape[axis] * inner;
        for (int k = 0; k < count; k++) {
            int64_t chunk = (int64_t)xs[k]->shape[axis] * inner;
            memcpy(y, xs[k]->data + o * chunk, (size_t)chunk * sizeof(dg_real));
            y += chunk;
        }
    }
    return t;
}

static void concat_backward(dg_ctx *ctx, dg_tensor *t) {
    dg_tensor **list = t->srcs;
    const int axis = t->iparam[0], count = t->iparam[1];
    int64_t outer, inner;
    split_axis(t, axis, &outer, &inner);
    int64_t off = 0;  /* offset of input k's chunk inside one outer row */
    for (int k = 0; k < count; k++) {
        dg_tensor *x = list[k];
        int64_t chunk = (int64_t)x->shape[axis] * inner;
        if (x->requires_grad) {
            dg_real *gx = dg__grad(ctx, x);
            if (!gx) return;
            for (int64_t o = 0; o < outer; o++) {
                const dg_real *restrict g = t->grad + o * t->shape[axis] * inner + off;
                dg_real *restrict d = gx + o * chunk;
                for (int64_t i = 0; i < chunk; i++) d[i] += g[i];
            }
        }
        off += chunk;
    }
}

dg_tensor *dg_slice(dg_ctx *ctx, dg_tensor *a, int axis, int start, int len) {
    NEED(ctx, a);
    if (!fix_axis(ctx, "slice", a, &axis)) return NULL;
    if (start < 0 || len < 0 || start > a->shape[axis] || len > a->shape[axis] - start)
        return dg_ctx_fail(ctx, DG_ERR_ARG, "slice: [%d, %d) out of range for axis %d of size %d",
                        start, start + len, axis, a->shape[axis]);
    int shape[DG_MAX_DIMS];
    memcpy(shape, a->shape, sizeof shape);
    shape[axis] = len;
    dg_tensor *t = dg__node(ctx, DG_OP_SLICE, a->ndim, shape, a, NULL, NULL);
    if (!t) return NULL;
    t->iparam[0] = axis;
    t->iparam[1] = start;
    int64_t outer, inner;
    split_axis(a, axis, &outer, &inner);
    const int64_t full = (int64_t)a->shape[axis] * inner, part = (int64_t)len * inner;
    for (int64_t o = 0; o < outer; o++)
        memcpy(t->data + o * part, a->data + o * full + (int64_t)start * inner,
               (size_t)part * sizeof(dg_real));
    return t;
}

static void slice_backward(dg_ctx *ctx, dg_tensor *t) {
    dg_tensor *a = t->src[0];
    if (!a->requires_grad) return;
    dg_real *ga = dg__grad(ctx, a);
    if (!ga) return;
    const int axis = t->iparam[0], start = t->iparam[1];
    int64_t outer, inner;
    split_axis(a, axis, &outer, &inner);
    const int64_t full = (int64_t)a->shape[axis] * inner, part = (int64_t)t->shape[axis] * inner;
    for (int64_t o = 0; o < outer; o++) {
        dg_real *restrict d = ga + o * full + (int64_t)start * inner;
        const dg_real *restrict g = t->grad + o * part;
        for (int64_t i = 0; i < part; i++) d[i] += g[i];
    }
}

dg_tensor *dg_cols(dg_ctx *ctx, dg_tensor *a, int start, int len) {
    NEED(ctx, a);
    return dg_slice(ctx, a, a->ndim - 1, start, len);
}

dg_tensor *dg_rows(dg_ctx *ctx, dg_tensor *a, int start, int len) { return dg_slice(ctx, a, 0, start, len); }

dg_tensor *dg_reshape(dg_ctx *ctx, dg_tensor *a, int ndim, const int *shape) {
    NEED(ctx, a);
    int64_t n = 1;
    for (int i = 0; i < ndim && i < DG_MAX_DIMS; i++) n *= shape[i];
    if (ndim < 1 || ndim > DG_MAX_DIMS || n != a->n)
        return dg_ctx_fail(ctx, DG_ERR_SHAPE, "reshape: %lld elements into %d dims of %lld",
                        (long long)a->n, ndim, (long long)n);
    dg_tensor *t = dg__node(ctx, DG_OP_RESHAPE, ndim, shape, a, NULL, NULL);
    if (!t) return NULL;
    memcpy(t->data, a->data, (size_t)a->n * sizeof(dg_real));
    return t;
}

static void reshape_backward(dg_ctx *ctx, dg_tensor *t) {
    dg_tensor *a = t->src[0];
    if (!a->requires_grad) return;
    dg_real *ga = dg__grad(ctx, a);
    if (!ga) return;
    for (int64_t i = 0; i < a->n; i++) ga[i] += t->grad[i];
}

/* ------------------------------------------------------- custom ops */

dg_tensor *dg_custom(dg_ctx *ctx, const char *name, int ndim, const int *shape,
                     dg_tensor *const *srcs, int nsrc, dg_backward_fn backward,
                     const void *state, size_t state_bytes) {
    if (ctx->status != DG_OK) return NULL;
    if (nsrc < 0 || (nsrc && !srcs) || !backward)
        return dg_ctx_fail(ctx, DG_ERR_ARG, "%s: invalid custom op", name ? name : "custom");
    int need_grad = 0;
    for (int k = 0; k < nsrc; k++) {
        NEED(ctx, srcs[k]);
        need_grad |= srcs[k]->requires_grad;
    }
    dg_tensor **list = nsrc ? dg_ctx_alloc(ctx, (size_t)nsrc * sizeof *list) : NULL;
    void *st = state_bytes ? dg_ctx_alloc(ctx, state_bytes) : NULL;
    if ((nsrc && !list) || (state_bytes && !st)) return NULL;
    if (nsrc) memcpy(list, srcs, (size_t)nsrc * sizeof *list);
    if (state_bytes) memcpy(st, state, state_bytes);
    dg_tensor *t = dg__node(ctx, DG_OP_CUSTOM, ndim, shape, NULL, NULL, NULL);
    if (!t) return NULL;
    t->srcs = list;
    t->iparam[1] = nsrc;
    t->backward = backward;
    t->state = st;
    t->name = name;
    if (need_grad) {
        t->requires_grad = 1;
        t->tape_prev = ctx->tape;
        ctx->tape = t;
        ctx->tape_len++;
    }
    return t;
}

dg_real *dg_grad_of(dg_ctx *ctx, dg_tensor *t) { return dg__grad(ctx, t); }

/* ------------------------------------------------------- dispatch */

void dg__backward_node(dg_ctx *ctx, dg_tensor *t) {
    switch (t->op) {
    case DG_OP_NONE: break;
    case DG_OP_ADD: case DG_OP_SUB: case DG_OP_MUL: case DG_OP_DIV:
        binary_backward(ctx, t);
        break;
    case DG_OP_NEG: case DG_OP_SCALE: case DG_OP_ADD_SCALAR: case DG_OP_TANH: case DG_OP_RELU:
    case DG_OP_SOFTPLUS: case DG_OP_SIGMOID: case DG_OP_EXP: case DG_OP_LOG: case DG_OP_SQRT:
    case DG_OP_SQUARE: case DG_OP_POW: case DG_OP_ABS: case DG_OP_SIN: case DG_OP_COS:
        unary_backward(ctx, t);
        break;
    case DG_OP_MATMUL: matmul_backward(ctx, t); break;
    case DG_OP_LINEAR: case DG_OP_LINEAR_TANH: linear_backward(ctx, t); break;
    case DG_OP_SUM: case DG_OP_MEAN: sum_backward(ctx, t); break;
    case DG_OP_SUM_AXIS: case DG_OP_MEAN_AXIS: reduce_axis_backward(ctx, t); break;
    case DG_OP_CONCAT: concat_backward(ctx, t); break;
    case DG_OP_SLICE: slice_backward(ctx, t); break;
    case DG_OP_RESHAPE: reshape_backward(ctx, t); break;
    case DG_OP_CUSTOM: t->backward(ctx, t); break;
    case DG_OP_LINEAR_TANGENT: linear_tangent_backward(ctx, t); break;
    case DG_OP_COUNT: break;
    }
}
