/* The HJI residual of each of the grid solver's modes as a loss on the tape, and the value, its
 * time derivative and its gradient from a network's output and input gradient (hji_learn.h has the
 * equations and their signs). Everything is composed of the tape's ops, so dg_backward gives the
 * loss's exact weight gradient. */
#include "difgames/hji_learn.h"

/* max(a, b) = b + relu(a - b): the gradient goes to b where a == b */
static dg_tensor *tmax(dg_ctx *ctx, dg_tensor *a, dg_tensor *b) { return dg_add(ctx, b, dg_relu(ctx, dg_sub(ctx, a, b))); }
/* min(a, b) = a - relu(a - b): the gradient goes to a where a == b */
static dg_tensor *tmin(dg_ctx *ctx, dg_tensor *a, dg_tensor *b) { return dg_sub(ctx, a, dg_relu(ctx, dg_sub(ctx, a, b))); }

/* 1 when t is a (B, 1) tensor (NULL: not) */
static int col(const dg_tensor *t, int B) { return t && t->ndim == 2 && t->shape[0] == B && t->shape[1] == 1; }

dg_tensor *dg_hji_learn_residual(dg_ctx *ctx, const dg_hji_game *gm, const dg_hji_learn_eq *eq,
                                 dg_tensor *x, dg_tensor *V, dg_tensor *V_tau, dg_tensor *grad) {
    if (!x || !V || !V_tau || !grad || dg_ctx_status(ctx) != DG_OK) return NULL;
    if (!eq) return dg_ctx_fail(ctx, DG_ERR_ARG, "hji learn: residual: no equation (eq NULL)");
    const int B = V->ndim == 2 ? V->shape[0] : -1;
    if (!col(V, B) || !col(V_tau, B))
        return dg_ctx_fail(ctx, DG_ERR_SHAPE, "hji learn: residual: V and V_tau must be (B, 1)");
    if ((eq->l && !col(eq->l, B)) || (eq->obstacle && !col(eq->obstacle, B)) || (eq->stop && !col(eq->stop, B)))
        return dg_ctx_fail(ctx, DG_ERR_SHAPE, "hji learn: residual: l, obstacle and stop must be (B, 1) with V's B = %d",
                           B);
    if (eq->mode != DG_HJI_MODE_BRS && eq->mode != DG_HJI_MODE_BRT && eq->mode != DG_HJI_MODE_BRT_TARGET)
        return dg_ctx_fail(ctx, DG_ERR_ARG, "hji learn: residual: unknown mode %d", (int)eq->mode);
    if (!eq->l && (eq->mode == DG_HJI_MODE_BRT_TARGET || eq->stop))
        return dg_ctx_fail(ctx, DG_ERR_ARG, "hji learn: residual: mode brt_target and a stop set need l(x) (eq->l)");
    dg_tensor *H = dg_hji_learn_hamiltonian(ctx, gm, x, grad);
    if (!H) return NULL;
    const double rho = gm->payoff.on ? gm->payoff.discount : 0;
    dg_tensor *negF = rho != 0 ? dg_add(ctx, H, dg_scale(ctx, V, (dg_real)rho)) : H;   /* -F = rho V + H */
    dg_tensor *r;
    if (eq->mode == DG_HJI_MODE_BRT) r = dg_add(ctx, V_tau, dg_relu(ctx, negF));  /* V_tau - min(0, F) */
    else r = dg_add(ctx, V_tau, negF);                                               /* V_tau - F        */
    if (eq->mode == DG_HJI_MODE_BRT_TARGET) r = tmax(ctx, dg_sub(ctx, V, eq->l), r);
    if (eq->obstacle) r = tmin(ctx, dg_sub(ctx, V, eq->obstacle), r);
    if (eq->cap > 0) r = tmax(ctx, dg_add_scalar(ctx, V, (dg_real)-eq->cap), r);
    if (eq->stop && r) {   /* r = V - l where the game is over, through 0/1 masks (constants) */
        dg_tensor *over = dg_new_2d(ctx, B, 1), *play = dg_new_2d(ctx, B, 1);
        if (!over || !play) return NULL;
        for (int b = 0; b < B; b++) {
            over->data[b] = eq->stop->data[b] <= 0 ? 1 : 0;
            play->data[b] = 1 - over->data[b];
        }
        r = dg_add(ctx, dg_mul(ctx, r, play), dg_mul(ctx, dg_sub(ctx, V, eq->l), over));
    }
    return r;
}

dg_tensor *dg_hji_learn_loss(dg_ctx *ctx, const dg_hji_game *gm, const dg_hji_learn_eq *eq, dg_tensor *x,
                             dg_tensor *V, dg_tensor *V_tau, dg_tensor *grad) {
    return dg_mean(ctx, dg_square(ctx, dg_hji_learn_residual(ctx, gm, eq, x, V, V_tau, grad)));
}

dg_tensor *dg_hji_learn_boundary(dg_ctx *ctx, dg_tensor *V0, dg_tensor *l) {
    if (!V0 || !l || dg_ctx_status(ctx) != DG_OK) return NULL;
    if (!col(V0, V0->shape[0]) || !col(l, V0->shape[0]))
        return dg_ctx_fail(ctx, DG_ERR_SHAPE, "hji learn: boundary: V(x, 0) and l(x) must be (B, 1)");
    return dg_mean(ctx, dg_square(ctx, dg_sub(ctx, V0, l)));
}

dg_status dg_hji_learn_value(dg_ctx *ctx, int nx, dg_tensor *y, dg_tensor *dy, dg_tensor *tau, dg_tensor *l,
                             dg_tensor *grad_l, dg_tensor **V, dg_tensor **V_tau, dg_tensor **grad) {
    *V = *V_tau = *grad = NULL;
    if (!y || !dy || dg_ctx_status(ctx) != DG_OK) return dg_ctx_status(ctx) ? dg_ctx_status(ctx) : DG_ERR_ARG;
    const int B = y->ndim == 2 ? y->shape[0] : -1;
    if (!col(y, B) || dy->ndim != 2 || dy->shape[0] != B || dy->shape[1] != nx + 1 || nx < 1) {
        dg_ctx_fail(ctx, DG_ERR_SHAPE, "hji learn: value: y (B, 1) and dy (B, %d) needed (the input (x, tau), tau last)",
                    nx + 1);
        return dg_ctx_status(ctx);
    }
    dg_tensor *gN = dg_cols(ctx, dy, 0, nx), *Nt = dg_cols(ctx, dy, nx, 1);
    dg_tensor *v, *vt, *g;
    if (!l) {   /* penalised: V = N */
        v = y;
        vt = Nt;
        g = gN;
    } else {    /* exact: V = l + tau N */
        if (!col(l, B) || !col(tau, B) || !grad_l || grad_l->ndim != 2 || grad_l->shape[0] != B ||
            grad_l->shape[1] != nx) {
            dg_ctx_fail(ctx, DG_ERR_SHAPE, "hji learn: value: the exact form needs l (B, 1), grad_l (B, %d) and tau "
                        "(B, 1)", nx);
            return dg_ctx_status(ctx);
        }
        v = dg_add(ctx, l, dg_mul(ctx, tau, y));
        vt = dg_add(ctx, y, dg_mul(ctx, tau, Nt));
        g = dg_add(ctx, grad_l, dg_mul(ctx, tau, gN));
    }
    if (dg_ctx_status(ctx) != DG_OK) return dg_ctx_status(ctx);
    *V = v;
    *V_tau = vt;
    *grad = g;
    return DG_OK;
}

dg_status dg_hji_learn_target(const dg_hji_problem *p, int B, const double *x, double *l, double *grad, dg_err *e) {
    return dg_hji_problem_v0_at(p, B, x, l, grad, e);
}
