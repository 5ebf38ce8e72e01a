/* Optimisers with PyTorch's exact update rules (torch.optim.Adam, torch.optim.SGD). */
#include <tgmath.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/core.h"

dg_status dg_adam_init(dg_adam *opt, const dg_params *p, double lr, double beta1, double beta2,
                       double eps, double weight_decay) {
    memset(opt, 0, sizeof *opt);
    if (!(lr >= 0.0) || !(beta1 >= 0.0 && beta1 < 1.0) || !(beta2 >= 0.0 && beta2 < 1.0) ||
        !(eps >= 0.0) || !(weight_decay >= 0.0))
        return DG_ERR_ARG;
    *opt = (dg_adam){.lr = lr, .beta1 = beta1, .beta2 = beta2, .eps = eps, .weight_decay = weight_decay,
                     .total = p->total};
    opt->m = calloc(p->total ? p->total : 1, sizeof(dg_real));
    opt->v = calloc(p->total ? p->total : 1, sizeof(dg_real));
    if (!opt->m || !opt->v) {
        dg_adam_free(opt);
        return DG_ERR_NOMEM;
    }
    return DG_OK;
}

void dg_adam_step(dg_adam *opt, dg_params *p) {
    opt->step++;
    /* as torch: bias corrections in double from Python floats, then
     * step_size = lr / bc1, denom = sqrt(v) / sqrt(bc2) + eps */
    const double bc1 = 1.0 - pow(opt->beta1, (double)opt->step);
    const double bc2 = 1.0 - pow(opt->beta2, (double)opt->step);
    const dg_real step_size = (dg_real)(opt->lr / bc1);
    const dg_real bc2_sqrt = (dg_real)sqrt(bc2);
    /* scalars rounded to float from the double expressions, as torch does */
    const dg_real b1 = (dg_real)opt->beta1, one_b1 = (dg_real)(1.0 - opt->beta1);
    const dg_real b2 = (dg_real)opt->beta2, one_b2 = (dg_real)(1.0 - opt->beta2);
    const dg_real eps = (dg_real)opt->eps, wd = (dg_real)opt->weight_decay;
    dg_real *restrict w = p->data, *restrict m = opt->m, *restrict v = opt->v;
    const dg_real *restrict g = p->grad;
    for (size_t i = 0; i < opt->total; i++) {
        dg_real gi = wd != 0.0f ? g[i] + wd * w[i] : g[i];
        m[i] = m[i] * b1 + one_b1 * gi;                    /* torch: m.mul_(b1).add_(g, alpha=1 - b1) */
        v[i] = v[i] * b2 + one_b2 * gi * gi;          /* torch: v.mul_(b2).addcmul_(g, g, 1 - b2) */
        dg_real denom = sqrt(v[i]) / bc2_sqrt + eps;
        w[i] -= step_size * (m[i] / denom);
    }
}

void dg_adam_free(dg_adam *opt) {
    if (!opt) return;
    free(opt->m);
    free(opt->v);
    opt->m = opt->v = NULL;
}

dg_status dg_sgd_init(dg_sgd *opt, const dg_params *p, double lr, double momentum,
                      double dampening, double weight_decay, int nesterov) {
    memset(opt, 0, sizeof *opt);
    if (!(lr >= 0.0) || !(momentum >= 0.0) || !(weight_decay >= 0.0) || !(dampening >= 0.0) ||
        (nesterov && (momentum <= 0.0 || dampening != 0.0)))
        return DG_ERR_ARG;
    *opt = (dg_sgd){.lr = lr, .momentum = momentum, .dampening = dampening, .weight_decay = weight_decay,
                    .nesterov = nesterov, .total = p->total};
    if (momentum != 0.0) {
        opt->buf = calloc(p->total ? p->total : 1, sizeof(dg_real));
        if (!opt->buf) return DG_ERR_NOMEM;
    }
    return DG_OK;
}

void dg_sgd_step(dg_sgd *opt, dg_params *p) {
    dg_real *restrict w = p->data, *restrict buf = opt->buf;
    const dg_real *restrict g = p->grad;
    const dg_real lr = (dg_real)opt->lr, mu = (dg_real)opt->momentum, wd = (dg_real)opt->weight_decay;
    const dg_real one_damp = (dg_real)(1.0 - opt->dampening);
    for (size_t i = 0; i < opt->total; i++) {
        dg_real d = wd != 0.0f ? g[i] + wd * w[i] : g[i];
        if (buf) {
            buf[i] = opt->has_buf ? buf[i] * mu + one_damp * d : d;
            d = opt->nesterov ? d + mu * buf[i] : buf[i];
        }
        w[i] -= lr * d;
    }
    opt->has_buf = 1;
}

void dg_sgd_free(dg_sgd *opt) {
    if (!opt) return;
    free(opt->buf);
    opt->buf = NULL;
}
