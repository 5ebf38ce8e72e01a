/* Parameters outside the arena: values and gradients in one contiguous block
 * each, with named views (dg_param_info). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

dg_params *dg_params_create(void) { return calloc(1, sizeof(dg_params)); }

void dg_params_free(dg_params *p) {
    if (!p) return;
    free(p->info);
    free(p->data);
    free(p->grad);
    free(p);
}

int dg_params_add(dg_params *p, const char *name, int ndim, const int *shape, dg_err *e) {
    if (!name || !*name || strlen(name) >= sizeof p->info[0].name) {
        dg_err_set(e, DG_ERR_ARG, "parameter name '%s' empty or longer than 63 characters",
                   name ? name : "");
        return -1;
    }
    if (dg_params_find(p, name) >= 0) {
        dg_err_set(e, DG_ERR_ARG, "parameter '%s' added twice", name);
        return -1;
    }
    if (ndim < 1 || ndim > DG_MAX_DIMS) {
        dg_err_set(e, DG_ERR_SHAPE, "parameter '%s': %d dims (1 to %d allowed)", name, ndim, DG_MAX_DIMS);
        return -1;
    }
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] <= 0 || n > ((int64_t)1 << 40) / shape[i]) {
            dg_err_set(e, DG_ERR_SHAPE, "parameter '%s': invalid size %d in dim %d", name, shape[i], i);
            return -1;
        }
        n *= shape[i];
    }
    if (p->count == p->cap) {
        int cap = p->cap ? p->cap * 2 : 8;
        dg_param_info *info = realloc(p->info, (size_t)cap * sizeof *info);
        if (!info) { dg_err_set(e, DG_ERR_NOMEM, "out of memory adding parameter '%s'", name); return -1; }
        p->info = info;
        p->cap = cap;
    }
    size_t total = p->total + (size_t)n;
    dg_real *data = realloc(p->data, total * sizeof(dg_real));
    if (data) p->data = data;
    dg_real *grad = data ? realloc(p->grad, total * sizeof(dg_real)) : NULL;
    if (!data || !grad) {
        dg_err_set(e, DG_ERR_NOMEM, "out of memory adding parameter '%s' (%lld floats)", name, (long long)n);
        return -1;
    }
    p->grad = grad;
    memset(p->data + p->total, 0, (size_t)n * sizeof(dg_real));
    memset(p->grad + p->total, 0, (size_t)n * sizeof(dg_real));
    dg_param_info *pi = &p->info[p->count];
    memset(pi, 0, sizeof *pi);
    strcpy(pi->name, name);
    pi->ndim = ndim;
    for (int i = 0; i < DG_MAX_DIMS; i++) pi->shape[i] = i < ndim ? shape[i] : 1;
    pi->n = n;
    pi->offset = p->total;
    p->total = total;
    return p->count++;
}

int dg_params_find(const dg_params *p, const char *name) {
    for (int i = 0; i < p->count; i++)
        if (strcmp(p->info[i].name, name) == 0) return i;
    return -1;
}

dg_real *dg_params_data(dg_params *p, int i) { return p->data + p->info[i].offset; }
dg_real *dg_params_grad(dg_params *p, int i) { return p->grad + p->info[i].offset; }

void dg_params_zero_grad(dg_params *p) {
    if (p->total) memset(p->grad, 0, p->total * sizeof(dg_real));
}

dg_tensor *dg_param(dg_ctx *ctx, dg_params *p, int i) {
    if (ctx->status != DG_OK) return NULL;
    if (i < 0 || i >= p->count) return dg_ctx_fail(ctx, DG_ERR_ARG, "parameter index %d of %d", i, p->count);
    dg_param_info *pi = &p->info[i];
    dg_tensor *t = dg_ctx_alloc(ctx, sizeof *t);
    if (!t) return NULL;
    memset(t, 0, sizeof *t);
    t->ndim = pi->ndim;
    memcpy(t->shape, pi->shape, sizeof t->shape);
    t->n = pi->n;
    t->data = p->data + pi->offset;   /* a view: the arena holds only the header */
    t->grad = p->grad + pi->offset;   /* backward accumulates straight into the block */
    t->requires_grad = 1;
    t->is_param = 1;
    return t;
}

dg_status dg_params_copy(dg_params *dst, const dg_params *src, dg_err *e) {
    if (dst->count != src->count || dst->total != src->total)
        return dg_err_set(e, DG_ERR_SHAPE, "parameter sets differ (%d vs %d tensors)", dst->count, src->count);
    for (int i = 0; i < src->count; i++)
        if (dst->info[i].n != src->info[i].n || strcmp(dst->info[i].name, src->info[i].name))
            return dg_err_set(e, DG_ERR_SHAPE, "parameter %d differs: '%s' vs '%s'", i,
                              dst->info[i].name, src->info[i].name);
    if (src->total) memcpy(dst->data, src->data, src->total * sizeof(dg_real));
    return DG_OK;
}

int dg_params_find_zero_grads(const dg_params *p, int *zero_idx, int max) {
    int count = 0;
    for (int i = 0; i < p->count; i++) {
        const dg_real *g = p->grad + p->info[i].offset;
        int64_t j = 0;
        while (j < p->info[i].n && g[j] == 0.0f) j++;
        if (j == p->info[i].n) {
            if (zero_idx && count < max) zero_idx[count] = i;
            count++;
        }
    }
    return count;
}

int dg_params_first_nonfinite(const dg_params *p, const dg_real *block, int64_t *elem) {
    for (int i = 0; i < p->count; i++) {
        const dg_real *v = block + p->info[i].offset;
        for (int64_t j = 0; j < p->info[i].n; j++)
            if (!isfinite(v[j])) {
                if (elem) *elem = j;
                return i;
            }
    }
    return -1;
}

dg_real dg_grad_norm(const dg_params *p) {
    double acc = 0.0;
    for (size_t i = 0; i < p->total; i++) acc += (double)p->grad[i] * p->grad[i];
    return (dg_real)sqrt(acc);
}

dg_real dg_clip_grad_norm(dg_params *p, dg_real max_norm) {
    /* torch: total = ||(||g_1||, ..., ||g_k||)||_2, coef = max_norm / (total + 1e-6),
     * clamped to 1, and the gradients multiplied by it */
    const dg_real total = dg_grad_norm(p);
    const dg_real coef = max_norm / (total + 1e-6f);
    if (coef < 1.0f)
        for (size_t i = 0; i < p->total; i++) p->grad[i] *= coef;
    return total;
}
