/* difgames losses: weighted composition of per-step cost terms.
 *
 * Episode loss = (1/H) Σ_t Σ_i w_i · term_i,t. Each term is also reported on
 * its own, weighted and averaged over the episode, so the reported terms add
 * up to the loss (the seed's advice: balance terms by their initial values).
 */
#ifndef DIFGAMES_LOSSES_H
#define DIFGAMES_LOSSES_H

#include "difgames/api.h"
#include "difgames/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_LOSS_MAX_TERMS 8   /* cost terms of a game (dg_env.nterms) and of a dg_loss */

typedef struct dg_loss {
    int        nterms;                      /* 0 after dg_loss_begin refused a count */
    int        refused;                     /* the count refused (dg_loss_finish reports it) */
    dg_real      weights[DG_LOSS_MAX_TERMS];
    dg_tensor *acc[DG_LOSS_MAX_TERMS];      /* Σ_t term_i,t, each (1) */
    int        steps;
} dg_loss;

/* Before the first step. Returns DG_OK, or DG_ERR_ARG when nterms is not 1 to
 * DG_LOSS_MAX_TERMS (nothing is dropped: dg_loss_finish then fails through its context). */
DG_API dg_status  dg_loss_begin(dg_loss *l, int nterms, const dg_real *weights);
/* One step's raw terms (a NULL one adds nothing to its sum); counts the step. */
DG_API void       dg_loss_add(dg_ctx *ctx, dg_loss *l, dg_tensor *const *terms);
/* Adds term (1) to term i's sum without counting a step (a term that is not the game's: the
 * safety filter's penalty, dg_policy.filter_penalty). */
DG_API void       dg_loss_add_term(dg_ctx *ctx, dg_loss *l, int i, dg_tensor *term);
/* (1/steps) Σ_i w_i acc_i as a (1) tensor; weighted[i] (if not NULL) gets
 * w_i · acc_i / steps. NULL on error (see the context). */
DG_API dg_tensor *dg_loss_finish(dg_ctx *ctx, dg_loss *l, dg_real *weighted);

#ifdef __cplusplus
}
#endif
#endif
