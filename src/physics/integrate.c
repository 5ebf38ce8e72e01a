/* Semi-implicit Euler with damping, as one fused op, in the open or inside contact walls. */
#include "difgames/physics.h"

typedef struct step_state {
    int   nb, walls;              /* bodies; whether the contact walls act */
    dg_real accel[DG_MAX_BODIES];
    dg_real dt, damping;
    dg_real wall, stiff;            /* contact walls at ±wall; fraction of a penetration removed */
} step_state;

/* With c = accel·dt, per body and axis:  v' = (v + c a) d,  p' = p + v' dt.  Reverse:
 *   gv' (total) = gv' + gp' dt;  gp += gp';  gv += gv' d;  ga += gv' d c.
 * Inside walls (w = wall, κ = stiff):
 *   v* = (v + c a) d,  p* = p + v* dt,  q = relu(p* - w) - relu(-w - p*),
 *   v' = v* - κ q / dt,  p' = p + v' dt  (= p* - κ q).
 * Reverse: gv' (total) = gv' + gp' dt;  gq = -κ/dt gv';  gp* = gq [|p*| > w];
 *   gv* = gv' + gp* dt;  gp += gp' + gp*;  gv += gv* d;  ga += gv* d c */
static void step_backward(dg_ctx *ctx, dg_tensor *out) {
    const step_state *s = out->state;
    dg_tensor *st = out->srcs[0], *act = out->srcs[1];
    dg_real *gs = st->requires_grad ? dg_grad_of(ctx, st) : NULL;
    dg_real *ga = act->requires_grad ? dg_grad_of(ctx, act) : NULL;
    if ((st->requires_grad && !gs) || (act->requires_grad && !ga)) return;
    const int B = st->shape[0], S = 4 * s->nb, A = 2 * s->nb;
    if (s->nb == 1 && !s->walls && gs && ga) {  /* one body in the open: the same operations in a loop
                                                   of constant width, which the compiler vectorises */
        const dg_real c = s->accel[0] * s->dt, dt = s->dt, dmp = s->damping;
        for (int b = 0; b < B; b++)
            for (int d = 0; d < 2; d++) {
                const dg_real gp = out->grad[4 * b + d];
                const dg_real gv = out->grad[4 * b + 2 + d] + gp * dt;
                gs[4 * b + d] += gp;
                gs[4 * b + 2 + d] += gv * dmp;
                ga[2 * b + d] += gv * dmp * c;
            }
        return;
    }
    for (int b = 0; b < B; b++) {
        const dg_real *g = out->grad + (int64_t)b * S;
        const dg_real *x = st->data + (int64_t)b * S, *a = act->data + (int64_t)b * A;
        for (int k = 0; k < s->nb; k++) {
            const dg_real c = s->accel[k] * s->dt;
            for (int d = 0; d < 2; d++) {
                const dg_real gp = g[4 * k + d];
                const dg_real gv1 = g[4 * k + 2 + d] + gp * s->dt;
                dg_real gv = gv1, gpf = 0.0f;
                if (s->walls) {
                    const dg_real vf = (x[4 * k + 2 + d] + c * a[2 * k + d]) * s->damping;
                    const dg_real pf = x[4 * k + d] + vf * s->dt;
                    gpf = (pf > s->wall || pf < -s->wall) ? -s->stiff / s->dt * gv1 : 0.0f;
                    gv = gv1 + gpf * s->dt;
                }
                if (gs) {
                    gs[(int64_t)b * S + 4 * k + d] += s->walls ? gp + gpf : gp;
                    gs[(int64_t)b * S + 4 * k + 2 + d] += gv * s->damping;
                }
                if (ga) ga[(int64_t)b * A + 2 * k + d] += gv * s->damping * c;
            }
        }
    }
}

/* The op of s (named name) on state and action, after checking their shapes. */
static dg_tensor *step_op(dg_ctx *ctx, const char *name, dg_tensor *state, dg_tensor *action,
                          step_state *s, const float *accel) {
    const int nb = s->nb;
    const int ok = nb >= 1 && nb <= DG_MAX_BODIES && state->ndim == 2 && action->ndim == 2 &&
                   state->shape[1] == 4 * nb && action->shape[1] == 2 * nb &&
                   state->shape[0] == action->shape[0];
    if (!ok)
        return dg_ctx_fail(ctx, DG_ERR_SHAPE,
                           "%s: state (%d,%d) and action (%d,%d) for %d bodies "
                           "(need (B,%d) and (B,%d))", name, state->shape[0], state->shape[1],
                           action->shape[0], action->shape[1], nb, 4 * nb, 2 * nb);
    if (s->walls && (!(s->dt > 0.0f) || !(s->wall >= 0.0f) || !(s->stiff >= 0.0f && s->stiff <= 1.0f)))
        return dg_ctx_fail(ctx, DG_ERR_ARG, "%s: need dt > 0, wall >= 0 and stiffness in "
                           "[0, 1] (got %g, %g, %g)", name, (double)s->dt, (double)s->wall, (double)s->stiff);
    for (int k = 0; k < nb; k++) s->accel[k] = accel[k];
    dg_tensor *out = dg_custom(ctx, name, 2, state->shape, (dg_tensor *[]){state, action}, 2,
                               step_backward, s, sizeof *s);
    if (!out) return NULL;
    const dg_real dt = s->dt, damping = s->damping, wall = s->wall, stiff = s->stiff;
    const int B = state->shape[0], S = 4 * nb, A = 2 * nb;
    if (nb == 1 && !s->walls) {  /* one body in the open: as below, in a loop the compiler vectorises */
        const dg_real c = s->accel[0] * dt;
        for (int b = 0; b < B; b++)
            for (int d = 0; d < 2; d++) {
                const dg_real v = (state->data[4 * b + 2 + d] + c * action->data[2 * b + d]) * damping;
                out->data[4 * b + 2 + d] = v;
                out->data[4 * b + d] = state->data[4 * b + d] + v * dt;
            }
        return out;
    }
    for (int b = 0; b < B; b++) {
        const dg_real *x = state->data + (int64_t)b * S, *a = action->data + (int64_t)b * A;
        dg_real *y = out->data + (int64_t)b * S;
        for (int k = 0; k < nb; k++) {
            const dg_real c = s->accel[k] * dt;
            for (int d = 0; d < 2; d++) {
                dg_real v = (x[4 * k + 2 + d] + c * a[2 * k + d]) * damping;
                if (s->walls) {
                    const dg_real pf = x[4 * k + d] + v * dt;
                    const dg_real q = pf > wall ? pf - wall : pf < -wall ? pf + wall : 0.0f;
                    v = v - stiff * q / dt;
                }
                y[4 * k + 2 + d] = v;
                y[4 * k + d] = x[4 * k + d] + v * dt;
            }
        }
    }
    return out;
}

dg_tensor *dg_phys_step(dg_ctx *ctx, dg_tensor *state, dg_tensor *action, int nb,
                        const float *accel, dg_real dt, dg_real damping) {
    if (!state || !action || dg_ctx_status(ctx) != DG_OK) return NULL;
    step_state s = {.nb = nb, .dt = dt, .damping = damping};
    return step_op(ctx, "phys_step", state, action, &s, accel);
}

dg_tensor *dg_phys_step_walls(dg_ctx *ctx, dg_tensor *state, dg_tensor *action, int nb,
                              const float *accel, dg_real dt, dg_real damping, dg_real wall, dg_real stiff) {
    if (!state || !action || dg_ctx_status(ctx) != DG_OK) return NULL;
    step_state s = {.nb = nb, .walls = 1, .dt = dt, .damping = damping, .wall = wall, .stiff = stiff};
    return step_op(ctx, "phys_step_walls", state, action, &s, accel);
}

/* min(1, 1/|a|) written as u - relu(u - 1) with u = 1/|a|, so no branch */
dg_tensor *dg_unit_disk(dg_ctx *ctx, dg_tensor *a) {
    dg_tensor *inv = dg_div(ctx, dg_scalar(ctx, 1.0f),
                            dg_sqrt(ctx, dg_add_scalar(ctx, dg_sum_axis(ctx, dg_square(ctx, a), 1), 1e-12f)));
    return dg_mul(ctx, a, dg_sub(ctx, inv, dg_relu(ctx, dg_add_scalar(ctx, inv, -1.0f))));
}
