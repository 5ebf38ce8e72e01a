/* Soft signed distances and smooth penalties. */
#include <tgmath.h>
#include <string.h>

#include "difgames/physics.h"

#define SDF_MAX_CIRCLES 64

typedef struct circles_state {
    int   k;
    dg_real c[SDF_MAX_CIRCLES][3];
} circles_state;

/* d = sqrt(|p - c|² + 1e-9) - r;  dd/dp = (p - c) / sqrt(...) */
static void circles_backward(dg_ctx *ctx, dg_tensor *out) {
    const circles_state *s = out->state;
    dg_tensor *pos = out->srcs[0];
    dg_real *gp = dg_grad_of(ctx, pos);
    if (!gp) return;
    const int B = pos->shape[0];
    for (int b = 0; b < B; b++) {
        const dg_real px = pos->data[2 * b], py = pos->data[2 * b + 1];
        dg_real gx = 0.0f, gy = 0.0f;
        for (int j = 0; j < s->k; j++) {
            const dg_real dx = px - s->c[j][0], dy = py - s->c[j][1];
            const dg_real inv = 1.0f / sqrt(dx * dx + dy * dy + 1e-9f);
            const dg_real g = out->grad[(int64_t)b * s->k + j];
            gx += g * dx * inv;
            gy += g * dy * inv;
        }
        gp[2 * b] += gx;
        gp[2 * b + 1] += gy;
    }
}

dg_tensor *dg_sdf_circles(dg_ctx *ctx, dg_tensor *pos, const float *circles, int k) {
    if (!pos || dg_ctx_status(ctx) != DG_OK) return NULL;
    if (pos->ndim != 2 || pos->shape[1] != 2 || k < 1 || k > SDF_MAX_CIRCLES)
        return dg_ctx_fail(ctx, DG_ERR_SHAPE, "sdf_circles: positions must be (B,2) and 1..%d circles",
                           SDF_MAX_CIRCLES);
    circles_state s = {.k = k};
    for (int j = 0; j < 3 * k; j++) s.c[j / 3][j % 3] = circles[j];
    const int B = pos->shape[0];
    dg_tensor *out = dg_custom(ctx, "sdf_circles", 2, (int[]){B, k}, &pos, 1, circles_backward,
                               &s, sizeof s);
    if (!out) return NULL;
    for (int b = 0; b < B; b++)
        for (int j = 0; j < k; j++) {
            const dg_real dx = pos->data[2 * b] - s.c[j][0], dy = pos->data[2 * b + 1] - s.c[j][1];
            out->data[(int64_t)b * k + j] = sqrt(dx * dx + dy * dy + 1e-9f) - s.c[j][2];
        }
    return out;
}

dg_tensor *dg_sdf_boxes(dg_ctx *ctx, dg_tensor *pos, const float *boxes, int k) {
    if (!pos) return NULL;
    if (k < 1 || k > SDF_MAX_CIRCLES)
        return dg_ctx_fail(ctx, DG_ERR_ARG, "sdf_boxes: 1..%d boxes, not %d", SDF_MAX_CIRCLES, k);
    dg_tensor *cols[SDF_MAX_CIRCLES];
    for (int j = 0; j < k; j++) {
        const float *bx = boxes + 4 * j;
        dg_tensor *c = dg_from(ctx, 2, (int[]){1, 2}, (const dg_real[]){bx[0], bx[1]});
        dg_tensor *h = dg_from(ctx, 2, (int[]){1, 2}, (const dg_real[]){bx[2], bx[3]});
        dg_tensor *q = dg_sub(ctx, dg_abs(ctx, dg_sub(ctx, pos, c)), h);        /* (B,2) */
        dg_tensor *qx = dg_cols(ctx, q, 0, 1), *qy = dg_cols(ctx, q, 1, 1);
        dg_tensor *outside = dg_sqrt(ctx, dg_add_scalar(ctx,
            dg_sum_axis(ctx, dg_square(ctx, dg_relu(ctx, q)), 1), 1e-12f));    /* |max(q,0)| */
        dg_tensor *mx = dg_add(ctx, qy, dg_relu(ctx, dg_sub(ctx, qx, qy)));    /* max(qx,qy) */
        dg_tensor *inside = dg_neg(ctx, dg_relu(ctx, dg_neg(ctx, mx)));        /* min(.,0)   */
        cols[j] = dg_add(ctx, outside, inside);                                /* (B,1)      */
    }
    return k == 1 ? cols[0] : dg_concat(ctx, cols, k, 1);
}

dg_tensor *dg_sdf_walls(dg_ctx *ctx, dg_tensor *pos, dg_real half) {
    return dg_add_scalar(ctx, dg_neg(ctx, dg_abs(ctx, pos)), half);
}

/* scale · Σ (a - b)²; the chain it fuses (sub, square, sum, scale) stored each intermediate as a
 * float, and summed in double in the flat order: the same operations here, so the same bits.
 * Backward: each step of that chain's backward in turn, each onto a zero buffer (the 0.0f +). */
typedef struct sqdiff_state {
    dg_real scale;
} sqdiff_state;

static void sqdiff_backward(dg_ctx *ctx, dg_tensor *out) {
    const dg_real scale = ((const sqdiff_state *)out->state)->scale;
    dg_tensor *a = out->srcs[0], *b = out->iparam[1] > 1 ? out->srcs[1] : NULL;
    dg_real *ga = a->requires_grad ? dg_grad_of(ctx, a) : NULL;
    dg_real *gb = b && b->requires_grad ? dg_grad_of(ctx, b) : NULL;
    if (!ga && !gb) return;
    const dg_real gs = 0.0f + out->grad[0] * scale;  /* scale's backward, then sum's */
    const dg_real gq = 0.0f + gs;
    for (int64_t i = 0; i < a->n; i++) {
        const dg_real d = b ? a->data[i] - b->data[i] : a->data[i];
        const dg_real gd = 0.0f + gq * 2.0f * d;      /* square's */
        if (ga) ga[i] += gd;                         /* sub's */
        if (gb) gb[i] += -gd;
    }
}

dg_tensor *dg_sum_sq_diff(dg_ctx *ctx, dg_tensor *a, dg_tensor *b, dg_real scale) {
    if (!a || dg_ctx_status(ctx) != DG_OK) return NULL;
    if (b && (b->ndim != a->ndim || memcmp(b->shape, a->shape, (size_t)a->ndim * sizeof(int))))
        return dg_ctx_fail(ctx, DG_ERR_SHAPE, "sum_sq_diff: a and b must have the same shape");
    const sqdiff_state s = {scale};
    dg_tensor *srcs[2] = {a, b};
    dg_tensor *out = dg_custom(ctx, "sum_sq_diff", 1, (int[]){1}, srcs, b ? 2 : 1, sqdiff_backward,
                               &s, sizeof s);
    if (!out) return NULL;
    double acc = 0.0;
    for (int64_t i = 0; i < a->n; i++) {
        const dg_real d = b ? a->data[i] - b->data[i] : a->data[i];
        const dg_real q = d * d;
        acc += q;
    }
    out->data[0] = (dg_real)acc * scale;
    return out;
}

/* One op with the bits of the chain it replaced, sum_axis(square(relu(add_scalar(neg(d), margin))),
 * -1): each intermediate rounded to float, each row summed in float from k = 0, and backward
 * each step of that chain in turn onto a zero buffer (the 0.0f +). The square is a volatile
 * float so that -ffp-contract cannot fuse it into the row's add (the chain rounded it). */
typedef struct margin_state {
    dg_real margin;
} margin_state;

static void margin_backward(dg_ctx *ctx, dg_tensor *out) {
    const dg_real margin = ((const margin_state *)out->state)->margin;
    dg_tensor *dist = out->srcs[0];
    dg_real *gd = dg_grad_of(ctx, dist);
    if (!gd) return;
    const int64_t B = out->n, k = dist->n / (out->n ? out->n : 1);
    for (int64_t o = 0; o < B; o++)
        for (int64_t j = 0; j < k; j++) {
            const int64_t i = o * k + j;
            const dg_real a = -dist->data[i] + margin, r = a > 0.0f ? a : 0.0f;
            const dg_real gq = 0.0f + out->grad[o] * 1.0f;      /* sum_axis's backward */
            const dg_real gr = 0.0f + gq * 2.0f * r;             /* square's */
            const dg_real ga = 0.0f + (a > 0.0f ? gr : 0.0f);    /* relu's */
            const dg_real gn = 0.0f + ga;                        /* add_scalar's */
            gd[i] -= gn;                                       /* neg's */
        }
}

dg_tensor *dg_penalty_margin(dg_ctx *ctx, dg_tensor *dist, dg_real margin) {
    if (!dist || dg_ctx_status(ctx) != DG_OK) return NULL;
    if (dist->ndim < 1 || dist->shape[dist->ndim - 1] < 1)
        return dg_ctx_fail(ctx, DG_ERR_SHAPE, "penalty_margin: distances need a last axis of 1 or more");
    int shape[DG_MAX_DIMS];
    memcpy(shape, dist->shape, (size_t)dist->ndim * sizeof(int));
    const int64_t k = shape[dist->ndim - 1], B = dist->n / k;
    shape[dist->ndim - 1] = 1;
    const margin_state s = {margin};
    dg_tensor *out = dg_custom(ctx, "penalty_margin", dist->ndim, shape, &dist, 1, margin_backward,
                               &s, sizeof s);
    if (!out) return NULL;
    for (int64_t o = 0; o < B; o++) {
        dg_real y = 0.0f;
        for (int64_t j = 0; j < k; j++) {
            const dg_real a = -dist->data[o * k + j] + margin, r = a > 0.0f ? a : 0.0f;
            volatile dg_real q = r * r;
            y += q;
        }
        out->data[o] = y * 1.0f;
    }
    return out;
}

dg_tensor *dg_penalty_outside(dg_ctx *ctx, dg_tensor *pos, dg_real half) {
    dg_tensor *r = dg_relu(ctx, dg_add_scalar(ctx, dg_abs(ctx, pos), -half));
    return dg_sum_axis(ctx, dg_square(ctx, r), -1);
}

dg_tensor *dg_wall_push(dg_ctx *ctx, dg_tensor *pos, dg_real half, dg_real k, dg_real m) {
    dg_tensor *hi = dg_softplus(ctx, dg_scale(ctx, dg_add_scalar(ctx, pos, -(half - m)), k));
    dg_tensor *lo = dg_softplus(ctx, dg_scale(ctx, dg_add_scalar(ctx, dg_neg(ctx, pos), -(half - m)), k));
    return dg_sub(ctx, lo, hi);
}
