/* difgames losses: weighted composition of per-step cost terms.
 *
 * Episode loss = (1/H) Σ_t Σ_i w_i · term_i,t. Each term is also reported on
 * its own, weighted and averaged over the episode, so the reported terms add
 * up to the loss (the seed's advice: balance terms by their initial values).
 */
#ifndef DIFGAMES_LOSSES_H
#define DIFGAMES_LOSSES_H

#include "difgames/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_LOSS_MAX_TERMS 8

typedef struct dg_loss {
    int        nterms;
    float      weights[DG_LOSS_MAX_TERMS];
    dg_tensor *acc[DG_LOSS_MAX_TERMS];      /* Σ_t term_i,t, each (1) */
    int        steps;
} dg_loss;

void       dg_loss_begin(dg_loss *l, int nterms, const float *weights);      /* before the first step     */
void       dg_loss_add(dg_ctx *ctx, dg_loss *l, dg_tensor *const *terms);    /* one step's raw terms      */
/* (1/steps) Σ_i w_i acc_i as a (1) tensor; weighted[i] (if not NULL) gets
 * w_i · acc_i / steps. NULL on error (see the context). */
dg_tensor *dg_loss_finish(dg_ctx *ctx, dg_loss *l, float *weighted);

#ifdef __cplusplus
}
#endif
#endif
