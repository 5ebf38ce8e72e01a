/* The graph context: an arena for tensors and a tape of the ops that need a
 * gradient, walked once in reverse by dg_backward. */
#define _DEFAULT_SOURCE  /* madvise's MADV_HUGEPAGE (sys/mman.h) */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "core/internal.h"

#define ALIGN 64

/* ------------------------------------------------------------ helpers */

static void vfail(dg_ctx *ctx, dg_status s, const char *fmt, va_list ap) {
    if (ctx->status != DG_OK) return;  /* the first error sticks */
    ctx->status = s;
    vsnprintf(ctx->err, sizeof ctx->err, fmt, ap);
}

/* Records the first error on ctx (later ones are dropped); returns NULL. The core's ops
 * report through it as the ops defined outside it do. */
dg_tensor *dg_ctx_fail(dg_ctx *ctx, dg_status s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfail(ctx, s, fmt, ap);
    va_end(ap);
    return NULL;
}

void *dg_ctx_alloc(dg_ctx *ctx, size_t bytes) {
    size_t need = (bytes + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    if (need < bytes || need > ctx->cap - ctx->used) {
        if (!ctx->need) ctx->need = need < bytes ? SIZE_MAX : ctx->used + need;  /* what would have fitted */
        dg_ctx_fail(ctx, DG_ERR_ARENA_FULL,
                 "arena full: %zu bytes requested, %zu of %zu in use (enlarge the context)",
                 bytes, ctx->used, ctx->cap);
        return NULL;
    }
    void *p = ctx->base + ctx->used;
    ctx->used += need;
    if (ctx->used > ctx->peak) ctx->peak = ctx->used;
    return p;
}

static int check_shape(dg_ctx *ctx, int ndim, const int *shape, int64_t *n) {
    if (ndim < 1 || ndim > DG_MAX_DIMS) {
        dg_ctx_fail(ctx, DG_ERR_SHAPE, "tensor with %d dims (1 to %d allowed)", ndim, DG_MAX_DIMS);
        return 0;
    }
    int64_t count = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0 || (shape[i] && count > INT64_MAX / 4 / shape[i])) {
            dg_ctx_fail(ctx, DG_ERR_SHAPE, "invalid size %d in dim %d", shape[i], i);
            return 0;
        }
        count *= shape[i];
    }
    *n = count;
    return 1;
}

static dg_tensor *tensor_alloc(dg_ctx *ctx, int ndim, const int *shape) {
    if (ctx->status != DG_OK) return NULL;
    int64_t n;
    if (!check_shape(ctx, ndim, shape, &n)) return NULL;
    dg_tensor *t = dg_ctx_alloc(ctx, sizeof *t);
    dg_real *data = t ? dg_ctx_alloc(ctx, (size_t)(n ? n : 1) * sizeof(dg_real)) : NULL;
    if (!data) return NULL;
    memset(t, 0, sizeof *t);
    t->ndim = ndim;
    for (int i = 0; i < DG_MAX_DIMS; i++) t->shape[i] = i < ndim ? shape[i] : 1;
    t->n = n;
    t->data = data;
    return t;
}

dg_tensor *dg__node(dg_ctx *ctx, dg_op op, int ndim, const int *shape, dg_tensor *a,
                    dg_tensor *b, dg_tensor *c) {
    dg_tensor *t = tensor_alloc(ctx, ndim, shape);
    if (!t) return NULL;
    t->op = op;
    t->src[0] = a;
    t->src[1] = b;
    t->src[2] = c;
    t->requires_grad = (a && a->requires_grad) || (b && b->requires_grad) ||
                       (c && c->requires_grad);
    if (t->requires_grad) {
        t->tape_prev = ctx->tape;
        ctx->tape = t;
        ctx->tape_len++;
    }
    return t;
}

dg_real *dg__grad_fresh(dg_ctx *ctx, dg_tensor *t, int *fresh) {
    *fresh = !t->grad;
    if (!t->grad) {
        for (int i = ctx->nfree - 1; i >= 0; i--)  /* the most recently freed first */
            if (ctx->gfree[i].n == t->n) {
                t->grad = ctx->gfree[i].p;
                ctx->gfree[i] = ctx->gfree[--ctx->nfree];
                break;
            }
        if (!t->grad) t->grad = dg_ctx_alloc(ctx, (size_t)t->n * sizeof(dg_real));
        if (t->op != DG_OP_NONE) ctx->tape_grads = 1;
    }
    return t->grad;
}

dg_real *dg__grad(dg_ctx *ctx, dg_tensor *t) {
    int fresh;
    dg_real *g = dg__grad_fresh(ctx, t, &fresh);
    if (g && fresh) memset(g, 0, (size_t)t->n * sizeof *g);
    return g;
}

/* ------------------------------------------------------------ context */

dg_ctx *dg_ctx_create(size_t arena_bytes) {
    dg_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return NULL;
    size_t cap = (arena_bytes + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    if (cap < ALIGN) cap = ALIGN;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    /* a large arena (a value network's tape at many points: gigabytes, streamed through each
       iteration) in 2 MiB pages where the kernel grants them: a TLB entry covers 512 times as much,
       and the first touch faults once per 2 MiB instead of per 4 KiB. A hint: refused, it is 4 KiB. */
    const size_t huge = (size_t)2 << 20;
    if (cap >= 8 * huge) {
        cap = (cap + huge - 1) & ~(huge - 1);
        ctx->base = aligned_alloc(huge, cap);
        if (ctx->base) (void)madvise(ctx->base, cap, MADV_HUGEPAGE);
    } else
#endif
        ctx->base = aligned_alloc(ALIGN, cap);
    if (!ctx->base) { free(ctx); return NULL; }
    ctx->cap = cap;
    return ctx;
}

void dg_ctx_free(dg_ctx *ctx) {
    if (!ctx) return;
    free(ctx->base);
    free(ctx);
}

void dg_ctx_reset(dg_ctx *ctx) {
    ctx->used = 0;
    ctx->need = 0;
    ctx->tape = NULL;
    ctx->tape_len = 0;
    ctx->nwt = 0;
    ctx->nfree = 0;
    ctx->tape_grads = 0;
    ctx->status = DG_OK;
    ctx->err[0] = 0;
}

dg_status dg_ctx_reserve(dg_ctx **ctx, size_t bytes) {
    if ((*ctx)->cap >= bytes) return DG_OK;
    dg_ctx *n = dg_ctx_create(bytes);
    if (!n) {
        dg_ctx_reset(*ctx);
        dg_ctx_fail(*ctx, DG_ERR_NOMEM, "out of memory for a %zu-byte arena", bytes);
        return DG_ERR_NOMEM;
    }
    n->flops = (*ctx)->flops;  /* the count goes on across the swap */
    dg_ctx_free(*ctx);
    *ctx = n;
    return DG_OK;
}

dg_status dg_ctx_run(dg_ctx **ctx, size_t max, dg_ctx_job job, void *user) {
    for (;;) {
        dg_ctx_reset(*ctx);
        const dg_status st = job(*ctx, user);
        const size_t cap = (*ctx)->cap, need = (*ctx)->need;
        if (st != DG_ERR_ARENA_FULL || cap >= max) return st;
        /* the failed run is the measure: at least what it asked for, at least four times the old */
        size_t next = cap > max / 4 ? max : cap * 4;
        if (need > next) next = need < max ? need : max;
        if (dg_ctx_reserve(ctx, next) != DG_OK) return DG_ERR_NOMEM;
    }
}

size_t dg_ctx_used(const dg_ctx *ctx) { return ctx->used; }
size_t dg_ctx_peak(const dg_ctx *ctx) { return ctx->peak; }
size_t dg_ctx_capacity(const dg_ctx *ctx) { return ctx->cap; }
dg_status dg_ctx_status(const dg_ctx *ctx) { return ctx->status; }
const char *dg_ctx_error(const dg_ctx *ctx) { return ctx->err; }
size_t dg_ctx_tape_len(const dg_ctx *ctx) { return ctx->tape_len; }
uint64_t dg_ctx_flops(const dg_ctx *ctx) { return ctx->flops; }

/* ------------------------------------------------------------ leaves */

dg_tensor *dg_new(dg_ctx *ctx, int ndim, const int *shape) { return tensor_alloc(ctx, ndim, shape); }

dg_tensor *dg_new_2d(dg_ctx *ctx, int rows, int cols) {
    int shape[2] = {rows, cols};
    return tensor_alloc(ctx, 2, shape);
}

dg_tensor *dg_full(dg_ctx *ctx, int ndim, const int *shape, dg_real v) {
    dg_tensor *t = tensor_alloc(ctx, ndim, shape);
    if (t)
        for (int64_t i = 0; i < t->n; i++) t->data[i] = v;
    return t;
}

dg_tensor *dg_zeros(dg_ctx *ctx, int ndim, const int *shape) {
    dg_tensor *t = tensor_alloc(ctx, ndim, shape);
    if (t) memset(t->data, 0, (size_t)t->n * sizeof(dg_real));
    return t;
}

dg_tensor *dg_from(dg_ctx *ctx, int ndim, const int *shape, const dg_real *src) {
    dg_tensor *t = tensor_alloc(ctx, ndim, shape);
    if (t && t->n) memcpy(t->data, src, (size_t)t->n * sizeof(dg_real));
    return t;
}

dg_tensor *dg_scalar(dg_ctx *ctx, dg_real v) {
    int one = 1;
    return dg_full(ctx, 1, &one, v);
}

void dg_set_requires_grad(dg_tensor *t) {
    /* leaves made by dg_new live in the arena; their gradient is allocated by
     * the first backward that reaches them (see dg__grad) and accumulates */
    if (t) t->requires_grad = 1;
}

void dg_retain_grad(dg_tensor *t) {
    if (t) t->retain_grad = 1;
}

/* ------------------------------------------------------------ backward */

dg_status dg_backward(dg_ctx *ctx, dg_tensor *loss) {
    if (ctx->status != DG_OK) return ctx->status;
    if (!loss) return dg_ctx_fail(ctx, DG_ERR_ARG, "backward: loss is NULL"), ctx->status;
    if (loss->n != 1) {
        dg_ctx_fail(ctx, DG_ERR_SHAPE, "backward: loss must have one element, has %lld",
                 (long long)loss->n);
        return ctx->status;
    }
    if (!loss->requires_grad) return DG_OK;  /* nothing depends on a parameter */
    /* intermediate gradients start from zero on every backward (a walk over the whole tape, skipped
       when no node on it can hold one: the first backward after a reset, or a backward that
       handed every node's buffer on) */
    if (ctx->tape_grads)
        for (dg_tensor *t = ctx->tape; t; t = t->tape_prev)
            if (t->grad) memset(t->grad, 0, (size_t)t->n * sizeof(dg_real));
    int kept = 0;  /* a node keeps its gradient buffer after this backward */
    dg_real *g = dg__grad(ctx, loss);
    if (!g) return ctx->status;
    g[0] += 1.0f;
    for (dg_tensor *t = ctx->tape; t; t = t->tape_prev) {
        if (!t->grad) continue;  /* does not reach the loss */
        dg__backward_node(ctx, t);
        if (ctx->status != DG_OK) return ctx->status;
        /* every node that reads t's gradient came later on the tape and is done: the buffer
         * serves the next gradient of its size, while it is still in cache (the tape of a long
         * episode is larger than the caches; fresh gradient memory would come from DRAM) */
        if (!t->is_param && !t->retain_grad && t->op != DG_OP_NONE && ctx->nfree < DG_GRAD_FREE) {
            ctx->gfree[ctx->nfree].n = t->n;
            ctx->gfree[ctx->nfree++].p = t->grad;
            t->grad = NULL;
        } else if (t->op != DG_OP_NONE)
            kept = 1;
    }
    ctx->tape_grads = kept;
    return DG_OK;
}
