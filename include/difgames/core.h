/* difgames core: tensors on an arena tape, ops with backward, parameters,
 * optimisers, gradient checks (the RNG, clock and number parsing it uses: base.h).
 *
 * A graph context (dg_ctx) is an arena: every tensor an op makes is bump-
 * allocated in it, and every op that reads a tensor needing a gradient records
 * itself on the context's tape. dg_backward() walks the tape once, in reverse,
 * and accumulates gradients. dg_ctx_reset() rewinds the arena for the next
 * episode; dg_ctx_free() frees it once.
 *
 * Errors are sticky, as in a stream: an op that fails (arena full, shapes that
 * do not broadcast) returns NULL and records the first error in the context;
 * every op given a NULL input returns NULL. Build a whole graph, then check
 * dg_ctx_status() once.
 */
#ifndef DIFGAMES_CORE_H
#define DIFGAMES_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "difgames/api.h"
#include "difgames/base.h"  /* rng, clock, numbers (and status.h) */
#include "difgames/real.h"  /* dg_real; with DG_F64, the double copy's names */
#include "difgames/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_MAX_DIMS 4

/* ------------------------------------------------------------- tensors */

typedef enum dg_op {
    DG_OP_NONE = 0,  /* leaf: data, constant or parameter */
    DG_OP_ADD, DG_OP_SUB, DG_OP_MUL, DG_OP_DIV,           /* broadcasting binary       */
    DG_OP_NEG, DG_OP_SCALE, DG_OP_ADD_SCALAR,
    DG_OP_MATMUL, DG_OP_LINEAR,
    DG_OP_TANH, DG_OP_RELU, DG_OP_SOFTPLUS, DG_OP_SIGMOID,
    DG_OP_EXP, DG_OP_LOG, DG_OP_SQRT, DG_OP_SQUARE, DG_OP_POW, DG_OP_ABS,
    DG_OP_SUM, DG_OP_MEAN,                                /* over all elements         */
    DG_OP_SUM_AXIS, DG_OP_MEAN_AXIS,                      /* over one axis (keepdim)   */
    DG_OP_CONCAT, DG_OP_SLICE, DG_OP_RESHAPE,
    DG_OP_LINEAR_TANH,                                    /* fused tanh(x·Wᵀ + b)      */
    DG_OP_CUSTOM,                                         /* a layer's fused op (dg_custom) */
    DG_OP_SIN, DG_OP_COS,                                 /* after custom: the older ops keep their numbers */
    DG_OP_LINEAR_TANGENT,                                 /* a layer and its tangents (dg_linear_tangent) */
    DG_OP_COUNT
} dg_op;

typedef struct dg_tensor dg_tensor;
typedef struct dg_ctx dg_ctx;
/* Backward of a custom op: reads out->grad, adds into dg_grad_of(ctx, operand)
 * for each operand that requires a gradient. */
typedef void (*dg_backward_fn)(dg_ctx *ctx, dg_tensor *out);

struct dg_tensor {
    int      ndim;
    int      shape[DG_MAX_DIMS];  /* row-major; unused dims are 1                  */
    int64_t  n;                   /* number of elements                            */
    dg_real   *data;                /* (n) values                                    */
    dg_real   *grad;                /* (n) gradient; NULL until backward touches it;
                                     an intermediate's is NULL again once backward
                                     passed it (its buffer serves a later node),
                                     unless dg_retain_grad marked it              */
    int      requires_grad;       /* 1 when a parameter flows into this value      */
    int      is_param;            /* grad points into a dg_params block            */
    int      retain_grad;         /* 1: backward leaves its gradient in place      */
    dg_op    op;
    dg_tensor *src[3];            /* operands (NULL when unused)                   */
    dg_tensor **srcs;             /* concat, custom: all iparam[1] operands        */
    dg_backward_fn backward;      /* custom: its backward                          */
    void    *state;               /* custom: op constants, copied into the arena   */
    const char *name;             /* custom: the op's name for messages            */
    dg_real    fparam[2];           /* op constants (scale, exponent, ...)           */
    int      iparam[3];           /* op integers (axis, start, ...)                */
    dg_tensor *tape_prev;         /* previous node on the tape                     */
};

/* ------------------------------------------------------- graph context */

DG_API dg_ctx   *dg_ctx_create(size_t arena_bytes);   /* NULL if malloc fails; free with dg_ctx_free */
DG_API void      dg_ctx_free(dg_ctx *ctx);            /* NULL is harmless                            */
DG_API void      dg_ctx_reset(dg_ctx *ctx);           /* rewinds arena and tape, clears the error    */
DG_API size_t    dg_ctx_used(const dg_ctx *ctx);      /* bytes in use now                            */
DG_API size_t    dg_ctx_peak(const dg_ctx *ctx);      /* most bytes ever in use                      */
DG_API size_t    dg_ctx_capacity(const dg_ctx *ctx);  /* arena size                                  */
DG_API dg_status dg_ctx_status(const dg_ctx *ctx);    /* first error since the last reset, or DG_OK  */
DG_API const char *dg_ctx_error(const dg_ctx *ctx);   /* its message ("" when none)                  */
DG_API size_t    dg_ctx_tape_len(const dg_ctx *ctx);  /* nodes recorded on the tape                  */
DG_API uint64_t  dg_ctx_flops(const dg_ctx *ctx);     /* FLOPs of ops and backward since creation:
                                                         matrix products exactly (2·M·N·K), elementwise
                                                         ops one a element (two in backward)          */
DG_API void     *dg_ctx_alloc(dg_ctx *ctx, size_t bytes);  /* 64-byte-aligned scratch; NULL + error when full */

/* Arena sizing (as ggml's allocator reserves): size a context from an estimate, then let one run
 * measure. dg_ctx_run rewinds *ctx and runs job on it; when the arena is too small
 * (DG_ERR_ARENA_FULL) it replaces *ctx once by one of max(4 x the size, the failed run's need)
 * bytes, at most max, and runs the job again, so the context settles on the first run and later
 * runs allocate nothing. job must be repeatable (keep nothing from a run that fails) and return
 * the context's status. Returns the job's last status; DG_ERR_ARENA_FULL when max is not enough,
 * DG_ERR_NOMEM when a larger arena cannot be allocated (*ctx's error says which). */
#define DG_ARENA_MAX ((size_t)1 << 34)  /* 16 GiB: the largest arena dg_ctx_run grows to     */
typedef dg_status (*dg_ctx_job)(dg_ctx *ctx, void *user);
DG_API dg_status dg_ctx_run(dg_ctx **ctx, size_t max, dg_ctx_job job, void *user);
/* Makes *ctx an arena of at least bytes: replaced (contents lost) when smaller. DG_OK, or
 * DG_ERR_NOMEM with *ctx kept and its error set. */
DG_API dg_status dg_ctx_reserve(dg_ctx **ctx, size_t bytes);
/* Records an error on ctx (the first one sticks) and returns NULL: how ops
 * defined outside the core report bad arguments. */
DG_API dg_tensor *dg_ctx_fail(dg_ctx *ctx, dg_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Tensors made directly (leaves: no gradient unless they wrap a parameter). */
DG_API dg_tensor *dg_new(dg_ctx *ctx, int ndim, const int *shape);       /* uninitialised         */
DG_API dg_tensor *dg_zeros(dg_ctx *ctx, int ndim, const int *shape);
DG_API dg_tensor *dg_full(dg_ctx *ctx, int ndim, const int *shape, dg_real v);
DG_API dg_tensor *dg_new_2d(dg_ctx *ctx, int rows, int cols);            /* uninitialised (rows, cols) */
DG_API dg_tensor *dg_from(dg_ctx *ctx, int ndim, const int *shape, const dg_real *src); /* copies src */
DG_API dg_tensor *dg_scalar(dg_ctx *ctx, dg_real v);                       /* shape (1)              */
/* Marks a leaf as needing a gradient (a free variable for gradcheck). */
DG_API void       dg_set_requires_grad(dg_tensor *t);
DG_API void       dg_retain_grad(dg_tensor *t);   /* keep an intermediate's gradient after backward */

/* ------------------------------------------------------------------ ops */
/* Binary ops broadcast numpy-style over right-aligned dimensions. */
DG_API dg_tensor *dg_add(dg_ctx *ctx, dg_tensor *a, dg_tensor *b);
DG_API dg_tensor *dg_sub(dg_ctx *ctx, dg_tensor *a, dg_tensor *b);
DG_API dg_tensor *dg_mul(dg_ctx *ctx, dg_tensor *a, dg_tensor *b);
DG_API dg_tensor *dg_div(dg_ctx *ctx, dg_tensor *a, dg_tensor *b);
DG_API dg_tensor *dg_neg(dg_ctx *ctx, dg_tensor *a);
DG_API dg_tensor *dg_scale(dg_ctx *ctx, dg_tensor *a, dg_real s);          /* a * s                  */
DG_API dg_tensor *dg_add_scalar(dg_ctx *ctx, dg_tensor *a, dg_real s);     /* a + s                  */
DG_API dg_tensor *dg_matmul(dg_ctx *ctx, dg_tensor *a, dg_tensor *b);    /* (M,K)·(K,N) -> (M,N)   */
DG_API dg_tensor *dg_linear(dg_ctx *ctx, dg_tensor *x, dg_tensor *w, dg_tensor *b); /* x(B,I)·w(O,I)ᵀ + b(O); b may be NULL */
DG_API dg_tensor *dg_linear_tanh(dg_ctx *ctx, dg_tensor *x, dg_tensor *w, dg_tensor *b); /* fused tanh(linear) */
DG_API dg_tensor *dg_tanh(dg_ctx *ctx, dg_tensor *a);
DG_API dg_tensor *dg_relu(dg_ctx *ctx, dg_tensor *a);
DG_API dg_tensor *dg_softplus(dg_ctx *ctx, dg_tensor *a);                /* log(1 + exp(a)), stable */
DG_API dg_tensor *dg_sigmoid(dg_ctx *ctx, dg_tensor *a);
DG_API dg_tensor *dg_exp(dg_ctx *ctx, dg_tensor *a);
DG_API dg_tensor *dg_log(dg_ctx *ctx, dg_tensor *a);
DG_API dg_tensor *dg_sqrt(dg_ctx *ctx, dg_tensor *a);
DG_API dg_tensor *dg_square(dg_ctx *ctx, dg_tensor *a);
DG_API dg_tensor *dg_pow(dg_ctx *ctx, dg_tensor *a, dg_real p);            /* a^p, p constant         */
DG_API dg_tensor *dg_abs(dg_ctx *ctx, dg_tensor *a);                     /* |a|, gradient sign(a)   */
DG_API dg_tensor *dg_sin(dg_ctx *ctx, dg_tensor *a);                     /* sin(a), gradient cos(a) */
DG_API dg_tensor *dg_cos(dg_ctx *ctx, dg_tensor *a);                     /* cos(a), gradient -sin(a) */
/* The activation of dg_linear_tangent: none, tanh, or sin(omega0 z) (SIREN). */
typedef enum dg_tangent_act { DG_TANGENT_LINEAR = 0, DG_TANGENT_TANH = 1, DG_TANGENT_SINE = 2 } dg_tangent_act;
/* One MLP layer and its forward-mode tangents as one op over stacked rows. z (R, I) holds B = R / k
 * points: their B value rows h first, then their tangents dh/dx_j, k - 1 rows a point (row
 * B + b·(k - 1) + j: point b's tangent j). The result (R, O) is stacked alike: act(p) with
 * p = h·wᵀ + b (b (O) or NULL; a value row is dg_linear's and its activation's to the bit), and
 * each tangent act'(p) ⊙ (t·wᵀ): one matrix product over all the rows (no copies), the activation
 * and its derivative in one pass. act' is 1 - tanh² for tanh and omega0 cos(omega0 p) for sine;
 * the backward carries act'' to the value row. */
DG_API dg_tensor *dg_linear_tangent(dg_ctx *ctx, dg_tensor *z, dg_tensor *w, dg_tensor *b, int k,
                                    dg_tangent_act act, dg_real omega0);
/* A one-output MLP's value and its input gradient in one op, by reverse mode: x (B, I) through
 * nlayers layers h_{l+1} = act(h_l w[l]ᵀ + b[l]) (w[l] (O_l, I_l), b[l] (O_l); the last layer's O is 1
 * and, with linear_out, it has no activation; act as dg_linear_tangent's). The result (B, 1 + I)
 * holds y (column 0: dg_linear's and its activation's bits) and dy/dx (columns 1 .. I). Its
 * backward is the exact gradient of any loss of both with respect to x, the weights and biases
 * (a second-order reverse pass): six matrix products a layer in all whatever I is, where
 * dg_linear_tangent's I + 1 stacked rows cost 3 (I + 1). */
DG_API dg_tensor *dg_mlp_value_grad(dg_ctx *ctx, dg_tensor *x, int nlayers, dg_tensor *const *w,
                                    dg_tensor *const *b, dg_tangent_act act, int linear_out, dg_real omega0);
DG_API dg_tensor *dg_sum(dg_ctx *ctx, dg_tensor *a);                     /* over all -> (1)         */
DG_API dg_tensor *dg_mean(dg_ctx *ctx, dg_tensor *a);                    /* over all -> (1)         */
DG_API dg_tensor *dg_sum_axis(dg_ctx *ctx, dg_tensor *a, int axis);      /* keeps the axis as size 1 */
DG_API dg_tensor *dg_mean_axis(dg_ctx *ctx, dg_tensor *a, int axis);     /* keeps the axis as size 1 */
DG_API dg_tensor *dg_concat(dg_ctx *ctx, dg_tensor *const *xs, int count, int axis);
DG_API dg_tensor *dg_slice(dg_ctx *ctx, dg_tensor *a, int axis, int start, int len); /* a[..., start:start+len, ...] */
DG_API dg_tensor *dg_cols(dg_ctx *ctx, dg_tensor *a, int start, int len); /* slice of the last axis */
DG_API dg_tensor *dg_rows(dg_ctx *ctx, dg_tensor *a, int start, int len); /* slice of axis 0        */
DG_API dg_tensor *dg_reshape(dg_ctx *ctx, dg_tensor *a, int ndim, const int *shape); /* same count */

DG_API const char *dg_op_name(dg_op op);                                 /* "add", "matmul", ...    */

/* A fused op defined outside the core (physics, render): makes the result
 * tensor (values uninitialised: the caller fills out->data), records it on the
 * tape with its operands srcs[0..nsrc) and backward fn, and copies state_bytes
 * of state into the arena (out->state). NULL on error, as any op. */
DG_API dg_tensor *dg_custom(dg_ctx *ctx, const char *name, int ndim, const int *shape,
                            dg_tensor *const *srcs, int nsrc, dg_backward_fn backward,
                            const void *state, size_t state_bytes);
/* In a backward fn: t's gradient buffer, allocated zero on first use; NULL
 * (and the context's error set) when the arena is full. */
DG_API dg_real     *dg_grad_of(dg_ctx *ctx, dg_tensor *t);

/* Backward from a scalar (n == 1) loss: seeds d loss = 1, walks the tape once
 * in reverse, accumulates into every tensor that needs a gradient; parameter
 * gradients add onto their dg_params block (zero it first with
 * dg_params_zero_grad). Returns the context's status. */
DG_API dg_status dg_backward(dg_ctx *ctx, dg_tensor *loss);

/* ----------------------------------------------------------- parameters */

typedef struct dg_param_info {
    char    name[64];              /* checkpoint name, e.g. "net.0.weight"     */
    int     ndim;
    int     shape[DG_MAX_DIMS];
    int64_t n;
    size_t  offset;                /* first element in the contiguous blocks    */
} dg_param_info;

/* All parameters of a model: values, gradients and optimiser moments are each
 * one contiguous float block (zero-grad is one memset, a checkpoint one write). */
typedef struct dg_params {
    int            count;
    int            cap;
    dg_param_info *info;           /* (count)                                    */
    size_t         total;          /* elements in all parameters                 */
    dg_real         *data;           /* (total)                                    */
    dg_real         *grad;           /* (total)                                    */
} dg_params;

DG_API dg_params *dg_params_create(void);                                 /* NULL on OOM            */
DG_API void       dg_params_free(dg_params *p);                           /* NULL is harmless       */
/* Adds a zero-filled parameter; returns its index or -1 (see e). Invalidates
 * data/grad pointers of tensors made earlier from p. */
DG_API int        dg_params_add(dg_params *p, const char *name, int ndim, const int *shape, dg_err *e);
DG_API int        dg_params_find(const dg_params *p, const char *name);   /* index or -1            */
DG_API dg_real     *dg_params_data(dg_params *p, int i);                    /* values of parameter i  */
DG_API dg_real     *dg_params_grad(dg_params *p, int i);                    /* gradient of parameter i */
DG_API void       dg_params_zero_grad(dg_params *p);
DG_API dg_tensor *dg_param(dg_ctx *ctx, dg_params *p, int i);             /* a leaf on ctx viewing parameter i */
/* The first parameter of p with a NaN or infinity in block, a buffer laid out as p->data (p->data,
 * p->grad, an optimiser's moments); -1 when all are finite. *elem (may be NULL) gets the element's
 * index within that parameter. */
DG_API int        dg_params_first_nonfinite(const dg_params *p, const dg_real *block, int64_t *elem);
/* Copies every value (and shapes must match) from src into dst. */
DG_API dg_status  dg_params_copy(dg_params *dst, const dg_params *src, dg_err *e);

/* ----------------------------------------------------------- optimisers */

typedef struct dg_adam {
    double  lr, beta1, beta2, eps, weight_decay;  /* double, as PyTorch's Python floats */
    int64_t step;                  /* steps taken (PyTorch's state['step'])      */
    size_t  total;
    dg_real  *m;                     /* (total) first moment                        */
    dg_real  *v;                     /* (total) second moment                       */
} dg_adam;

/* torch.optim.Adam semantics: bias correction, eps added after the sqrt,
 * L2 weight decay added to the gradient. */
DG_API dg_status dg_adam_init(dg_adam *opt, const dg_params *p, double lr, double beta1, double beta2,
                              double eps, double weight_decay);
DG_API void      dg_adam_step(dg_adam *opt, dg_params *p);
DG_API void      dg_adam_free(dg_adam *opt);

typedef struct dg_sgd {
    double lr, momentum, dampening, weight_decay;  /* double, as PyTorch's Python floats */
    int    nesterov;
    int    has_buf;                /* momentum buffer initialised (first step)   */
    size_t total;
    dg_real *buf;                    /* (total) momentum buffer, NULL without momentum */
} dg_sgd;

/* torch.optim.SGD semantics (momentum buffer = grad on the first step). */
DG_API dg_status dg_sgd_init(dg_sgd *opt, const dg_params *p, double lr, double momentum,
                             double dampening, double weight_decay, int nesterov);
DG_API void      dg_sgd_step(dg_sgd *opt, dg_params *p);
DG_API void      dg_sgd_free(dg_sgd *opt);

/* torch.nn.utils.clip_grad_norm_ (L2): returns the total norm before clipping;
 * scales every gradient by max_norm / (total + 1e-6) when that is below 1. */
DG_API dg_real     dg_clip_grad_norm(dg_params *p, dg_real max_norm);
DG_API dg_real     dg_grad_norm(const dg_params *p);                       /* L2 norm of all gradients */

/* ------------------------------------------------------ gradient checks */

/* Builds a scalar loss on ctx from parameters p (ctx is reset before each call). */
typedef dg_tensor *(*dg_loss_fn)(dg_ctx *ctx, dg_params *p, void *user);

typedef struct dg_gradcheck_report {
    double max_rel_err;            /* worst (|analytic - numeric| - r) / max(|a|, |n|, floor),
                                      r: the loss's float rounding through the difference  */
    double max_abs_err;
    int    worst_param;            /* index of the parameter holding the worst element (of
                                      equal relative errors, e.g. all 0: the one of the largest
                                      |analytic - numeric| / max(|a|, |n|, floor))        */
    int64_t worst_index;           /* element within it                                 */
    double worst_analytic, worst_numeric;
    double worst_abs_err;          /* its |analytic - numeric|, all of it               */
    double worst_allowance;        /* its r, the part of that not counted               */
    int64_t checked;               /* elements compared                                 */
    double rounding;               /* the largest r not counted (absolute)              */
} dg_gradcheck_report;

/* Compares backward with central finite differences (Richardson-extrapolated,
 * steps eps and eps/2) for up to max_per_param elements of each parameter
 * (0 = all). floor guards the relative error of near-zero gradients; the part of an
 * error that the loss's own dg_real rounding explains (4 |loss| DG_REAL_EPSILON, through the difference
 * quotient) is not counted. A NaN or infinite gradient, or loss near an element, is
 * DG_ERR_NONFINITE naming the element. */
DG_API dg_status dg_gradcheck(dg_ctx *ctx, dg_params *p, dg_loss_fn fn, void *user, dg_real eps,
                              double floor, int64_t max_per_param, dg_gradcheck_report *out,
                              dg_err *e);

/* The same at nscales steps eps, eps/4, eps/16, ... (Ridders' idea): for each element, the
 * estimate of the neighbouring pair of steps that agrees best, for functions whose features are
 * narrower than eps at some points and float rounding dominates a small step at others.
 * nscales 1 is dg_gradcheck. */
#define DG_GRADCHECK_MAX_SCALES 6
DG_API dg_status dg_gradcheck_scales(dg_ctx *ctx, dg_params *p, dg_loss_fn fn, void *user, dg_real eps, int nscales,
                                     double floor, int64_t max_per_param, dg_gradcheck_report *out,
                                     dg_err *e);

/* Chain check: writes up to max indices of parameters whose whole gradient is
 * exactly zero (a cut gradient chain) into zero_idx; returns how many there are. */
DG_API int       dg_params_find_zero_grads(const dg_params *p, int *zero_idx, int max);

#ifdef __cplusplus
}
#endif
#endif
