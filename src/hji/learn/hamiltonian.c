/* A game's Hamiltonian as an op on the tape: H(x, p) at sampled states x for costates p = grad_x V
 * that a value network computes (hji_learn.h). The value and its gradient in p come from the grid
 * solver's own functions at each point (src/hji/game.c): the Hamiltonian with the players' extrema
 * in closed form, and by the envelope theorem dH/dp = -(f + G u* + D d*), the dynamics at the
 * players' optimal inputs. So the learned value solves the same equation as the grid's, to the bit
 * in double, and no second copy of the input sets' formulas exists to drift apart from the first.
 * The states are data (sampled, not functions of the weights): f, G and D are constants here. */
#include <string.h>

#include "difgames/hji_learn.h"

dg_status dg_hji_learn_check(const dg_hji_game *gm, const char *name, dg_err *e) {
    const char *nm = name && *name ? name : "(unnamed)";
    dg_err ge = {0};
    if (dg_hji_game_check(gm, 0, &ge) != DG_OK)
        return dg_err_set(e, ge.status, "hji learn: game %s: %s", nm, ge.msg);
    if (!gm->dyn)
        return dg_err_set(e, DG_ERR_ARG, "hji learn: game %s is given by a generic Hamiltonian (no dynamics "
                          "f, G, D): its Hamiltonian has no form on the tape; only control- and "
                          "disturbance-affine games can be learned", nm);
    return DG_OK;
}

/* The op's constants: dH/dp per point (B, nx), kept for the backward (NULL when p needs none). */
typedef struct ham_state {
    int      B, nx;
    dg_real *dhdp;
} ham_state;

/* p's gradient += dL/dH (B) times dH/dp (B, nx), row by row. */
static void ham_backward(dg_ctx *ctx, dg_tensor *out) {
    const ham_state *s = out->state;
    dg_tensor *p = out->srcs[0];
    if (!p->requires_grad || !s->dhdp) return;
    dg_real *gp = dg_grad_of(ctx, p);
    if (!gp) return;
    const dg_real *g = out->grad;
    for (int b = 0; b < s->B; b++)
        for (int k = 0; k < s->nx; k++) gp[(int64_t)b * s->nx + k] += g[b] * s->dhdp[(int64_t)b * s->nx + k];
}

dg_tensor *dg_hji_learn_hamiltonian(dg_ctx *ctx, const dg_hji_game *gm, dg_tensor *x, dg_tensor *p) {
    if (!x || !p || dg_ctx_status(ctx) != DG_OK) return NULL;
    dg_err e = {0};
    if (dg_hji_learn_check(gm, NULL, &e) != DG_OK) return dg_ctx_fail(ctx, e.status, "%s", e.msg);
    const int nx = gm->nx, B = p->ndim == 2 ? p->shape[0] : -1;
    if (p->ndim != 2 || p->shape[1] != nx || x->ndim != 2 || x->shape[0] != B || x->shape[1] < nx)
        return dg_ctx_fail(ctx, DG_ERR_SHAPE, "hji learn: hamiltonian: p (B, %d) and x (B, >= %d) needed", nx, nx);
    ham_state s = {B, nx, NULL};
    if (p->requires_grad) {
        s.dhdp = dg_ctx_alloc(ctx, (size_t)B * (size_t)nx * sizeof *s.dhdp);
        if (!s.dhdp) return NULL;
    }
    dg_tensor *out = dg_custom(ctx, "hji_hamiltonian", 2, (int[]){B, 1}, (dg_tensor *[]){p}, 1, ham_backward, &s,
                               sizeof s);
    if (!out) return NULL;
    const int xs = x->shape[1];
    for (int b = 0; b < B; b++) {
        double xb[DG_HJI_MAX_DIMS], pb[DG_HJI_MAX_DIMS], u[DG_HJI_MAX_INPUT], d[DG_HJI_MAX_INPUT];
        double xdot[DG_HJI_MAX_DIMS];
        for (int k = 0; k < nx; k++) {
            xb[k] = (double)x->data[(int64_t)b * xs + k];
            pb[k] = (double)p->data[(int64_t)b * nx + k];
        }
        out->data[b] = (dg_real)dg_hji_game_hamiltonian(gm, xb, pb);
        if (!s.dhdp) continue;
        dg_hji_game_optimal(gm, xb, pb, u, d);
        dg_hji_game_dynamics(gm, xb, gm->u.dim ? u : NULL, gm->d.dim ? d : NULL, xdot);
        for (int k = 0; k < nx; k++) s.dhdp[(int64_t)b * nx + k] = (dg_real)-xdot[k];
    }
    return out;
}
