/* Gradient check: backward against central finite differences. */
#include <float.h>
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

/* Richardson estimate of d loss / d w[j] at step h: (4 D(h/2) - D(h)) / 3 cancels the h² error
 * term; the actual float steps are used, not the nominal ones. NAN when the loss is not finite. */
static double richardson(dg_ctx *ctx, dg_params *p, dg_loss_fn fn, void *user, dg_real *w, int64_t j, dg_real h) {
    const dg_real x0 = w[j];
    const dg_real steps[4] = {h, -h, h * 0.5f, -h * 0.5f};
    double f[4];
    for (int s = 0; s < 4; s++) {
        w[j] = x0 + steps[s];
        f[s] = eval_loss(ctx, p, fn, user);
    }
    w[j] = x0;
    const double h1 = (double)(x0 + steps[0]) - (double)(x0 + steps[1]);
    const double h2 = (double)(x0 + steps[2]) - (double)(x0 + steps[3]);
    const double d1 = (f[0] - f[1]) / h1, d2 = (f[2] - f[3]) / h2;
    return (4.0 * d2 - d1) / 3.0;
}

dg_status dg_gradcheck(dg_ctx *ctx, dg_params *p, dg_loss_fn fn, void *user, dg_real eps,
                       double floor, int64_t max_per_param, dg_gradcheck_report *out,
                       dg_err *e) {
    return dg_gradcheck_scales(ctx, p, fn, user, eps, 1, floor, max_per_param, out, e);
}

dg_status dg_gradcheck_scales(dg_ctx *ctx, dg_params *p, dg_loss_fn fn, void *user, dg_real eps, int nscales,
                              double floor, int64_t max_per_param, dg_gradcheck_report *out,
                              dg_err *e) {
    memset(out, 0, sizeof *out);
    out->worst_param = -1;
    if (nscales < 1 || nscales > DG_GRADCHECK_MAX_SCALES)
        return dg_err_set(e, DG_ERR_ARG, "gradcheck: %d step scales (1 to %d)", nscales, DG_GRADCHECK_MAX_SCALES);
    dg_params_zero_grad(p);
    dg_ctx_reset(ctx);
    dg_tensor *loss = fn(ctx, p, user);
    if (!loss || dg_ctx_status(ctx) != DG_OK)
        return dg_err_set(e, dg_ctx_status(ctx) ? dg_ctx_status(ctx) : DG_ERR_ARG,
                          "gradcheck: building the loss failed: %s", dg_ctx_error(ctx));
    if (dg_backward(ctx, loss) != DG_OK)
        return dg_err_set(e, dg_ctx_status(ctx), "gradcheck: backward failed: %s", dg_ctx_error(ctx));
    /* The rounding of a dg_real loss L is taken as 4 |L| DG_REAL_EPSILON (4 to 8 ulps: a loss is many ops
     * deep); Richardson's (4 D(h/2) - D(h)) / 3 turns it into at most 3 |δL| / h of the estimate.
     * That much of |analytic - numeric| is not counted: it says nothing about backward. */
    const double rounding = 3.0 * 4.0 * DG_REAL_EPSILON * fabs((double)loss->data[0]);
    double worst_raw = 0;  /* the worst element's |analytic - numeric| / den, allowance not taken off */

    for (int pi = 0; pi < p->count; pi++) {
        const int64_t n = p->info[pi].n;
        const int64_t count = max_per_param > 0 && n > max_per_param ? max_per_param : n;
        dg_real *w = dg_params_data(p, pi);
        const dg_real *g = dg_params_grad(p, pi);
        for (int64_t k = 0; k < count; k++) {
            const int64_t j = count == n ? k : k * n / count;
            double est[DG_GRADCHECK_MAX_SCALES];
            dg_real h = eps;
            for (int s = 0; s < nscales; s++, h *= 0.25f) est[s] = richardson(ctx, p, fn, user, w, j, h);
            /* several scales: the estimate of the neighbouring pair that agrees best (their
             * difference estimates the error; the analytic value plays no part in the choice) */
            double num = est[0], hnum = eps;
            if (nscales > 1) {
                double best = INFINITY;
                for (int s = 0; s + 1 < nscales; s++)
                    if (fabs(est[s] - est[s + 1]) < best) {
                        best = fabs(est[s] - est[s + 1]);
                        num = est[s + 1];
                        hnum = ldexp((double)eps, -2 * (s + 1));
                    }
            }
            const double ana = g[j];
            if (!isfinite(num))
                return dg_err_set(e, DG_ERR_NONFINITE, "gradcheck: loss not finite near %s[%lld]",
                                  p->info[pi].name, (long long)j);
            if (!isfinite(ana))  /* fmax below would read a NaN error as 0: a pass */
                return dg_err_set(e, DG_ERR_NONFINITE, "gradcheck: the backward gradient of %s[%lld] is %g "
                                  "(finite differences give %g)", p->info[pi].name, (long long)j, isnan(ana) ? NAN : ana, num);
            const double abs_err = fabs(ana - num);
            double den = fmax(fabs(ana), fabs(num));
            if (den < floor) den = floor;
            const double allowance = rounding / hnum, rel = fmax(abs_err - allowance, 0.0) / den;
            /* ties (every error within its allowance: all 0) go to the largest raw error, so that the
             * element shown is the one that differs most, not merely the first */
            if (rel > out->max_rel_err || (rel == out->max_rel_err && abs_err / den > worst_raw) ||
                out->worst_param < 0) {
                out->max_rel_err = rel;
                out->worst_param = pi;
                out->worst_index = j;
                out->worst_analytic = ana;
                out->worst_numeric = num;
                out->worst_abs_err = abs_err;
                out->worst_allowance = allowance;
                worst_raw = abs_err / den;
            }
            if (abs_err > out->max_abs_err) out->max_abs_err = abs_err;
            if (allowance > out->rounding) out->rounding = allowance;
            out->checked++;
        }
    }
    dg_ctx_reset(ctx);
    return DG_OK;
}
