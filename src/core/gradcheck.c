/* Gradient check: backward against central finite differences. */
#include <math.h>
#include <string.h>

#include "core/internal.h"

/* Loss at the current parameter values (forward only); NAN on error. */
static double eval_loss(dg_ctx *ctx, dg_params *p, dg_loss_fn fn, void *user) {
    dg_ctx_reset(ctx);
    dg_tensor *l = fn(ctx, p, user);
    if (!l || dg_ctx_status(ctx) != DG_OK || l->n != 1) return NAN;
    return (double)l->data[0];
}

dg_status dg_gradcheck(dg_ctx *ctx, dg_params *p, dg_loss_fn fn, void *user, float eps,
                       double floor, int64_t max_per_param, dg_gradcheck_report *out,
                       dg_err *e) {
    memset(out, 0, sizeof *out);
    out->worst_param = -1;
    dg_params_zero_grad(p);
    dg_ctx_reset(ctx);
    dg_tensor *loss = fn(ctx, p, user);
    if (!loss || dg_ctx_status(ctx) != DG_OK)
        return dg_err_set(e, dg_ctx_status(ctx) ? dg_ctx_status(ctx) : DG_ERR_ARG,
                          "gradcheck: building the loss failed: %s", dg_ctx_error(ctx));
    if (dg_backward(ctx, loss) != DG_OK)
        return dg_err_set(e, dg_ctx_status(ctx), "gradcheck: backward failed: %s", dg_ctx_error(ctx));

    for (int pi = 0; pi < p->count; pi++) {
        const int64_t n = p->info[pi].n;
        const int64_t count = max_per_param > 0 && n > max_per_param ? max_per_param : n;
        float *w = dg_params_data(p, pi);
        const float *g = dg_params_grad(p, pi);
        for (int64_t k = 0; k < count; k++) {
            const int64_t j = count == n ? k : k * n / count;
            const float x0 = w[j];
            double f[4];
            const float steps[4] = {eps, -eps, eps * 0.5f, -eps * 0.5f};
            for (int s = 0; s < 4; s++) {
                w[j] = x0 + steps[s];
                f[s] = eval_loss(ctx, p, fn, user);
            }
            w[j] = x0;
            /* Richardson: (4 D(h/2) - D(h)) / 3 cancels the h² error term; the
             * actual float steps are used, not the nominal ones */
            const double h1 = (double)(x0 + steps[0]) - (double)(x0 + steps[1]);
            const double h2 = (double)(x0 + steps[2]) - (double)(x0 + steps[3]);
            const double d1 = (f[0] - f[1]) / h1, d2 = (f[2] - f[3]) / h2;
            const double num = (4.0 * d2 - d1) / 3.0;
            const double ana = g[j];
            if (!isfinite(num))
                return dg_err_set(e, DG_ERR_NONFINITE, "gradcheck: loss not finite near %s[%lld]",
                                  p->info[pi].name, (long long)j);
            const double abs_err = fabs(ana - num);
            double den = fmax(fabs(ana), fabs(num));
            if (den < floor) den = floor;
            const double rel = abs_err / den;
            if (rel > out->max_rel_err || out->worst_param < 0) {
                out->max_rel_err = rel;
                out->worst_param = pi;
                out->worst_index = j;
                out->worst_analytic = ana;
                out->worst_numeric = num;
            }
            if (abs_err > out->max_abs_err) out->max_abs_err = abs_err;
            out->checked++;
        }
    }
    dg_ctx_reset(ctx);
    return DG_OK;
}
