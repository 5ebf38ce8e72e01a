/* Weighted composition of cost terms over an episode. */
#include <string.h>

#include "difgames/losses.h"

dg_status dg_loss_begin(dg_loss *l, int nterms, const dg_real *weights) {
    memset(l, 0, sizeof *l);
    if (nterms < 1 || nterms > DG_LOSS_MAX_TERMS) {  /* refused, never truncated */
        l->refused = nterms;
        return DG_ERR_ARG;
    }
    l->nterms = nterms;
    memcpy(l->weights, weights, (size_t)nterms * sizeof(dg_real));
    return DG_OK;
}

void dg_loss_add(dg_ctx *ctx, dg_loss *l, dg_tensor *const *terms) {
    for (int i = 0; i < l->nterms; i++)  /* a NULL term adds nothing (one added on its own, dg_loss_add_term) */
        if (terms[i]) l->acc[i] = l->acc[i] ? dg_add(ctx, l->acc[i], terms[i]) : terms[i];
    l->steps++;
}

void dg_loss_add_term(dg_ctx *ctx, dg_loss *l, int i, dg_tensor *term) {
    if (i < 0 || i >= l->nterms || !term) return;
    l->acc[i] = l->acc[i] ? dg_add(ctx, l->acc[i], term) : term;
}

dg_tensor *dg_loss_finish(dg_ctx *ctx, dg_loss *l, dg_real *weighted) {
    if (l->refused)
        return dg_ctx_fail(ctx, DG_ERR_ARG, "loss: %d terms (1 to %d)", l->refused, DG_LOSS_MAX_TERMS);
    if (!l->steps || !l->nterms)
        return dg_ctx_fail(ctx, DG_ERR_ARG, "loss: no steps or no terms to compose");
    const dg_real inv = 1.0f / (dg_real)l->steps;
    dg_tensor *total = NULL;
    for (int i = 0; i < l->nterms; i++) {
        if (!l->acc[i]) return dg_ctx_fail(ctx, DG_ERR_ARG, "loss: term %d was never added", i);
        dg_tensor *w = dg_scale(ctx, l->acc[i], l->weights[i] * inv);
        if (!w) return NULL;
        if (weighted) weighted[i] = w->data[0];
        total = total ? dg_add(ctx, total, w) : w;
    }
    return total;
}
