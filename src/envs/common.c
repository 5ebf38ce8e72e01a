/* Helpers shared by the games. */
#include <math.h>
#include <stdlib.h>

#include "envs/games.h"

dg_tensor *dg__batch_mean(dg_ctx *ctx, dg_tensor *x, dg_real inv_batch) {
    return dg_scale(ctx, dg_sum(ctx, x), inv_batch);
}

void dg_env_step_cost_from_rows(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux, dg_tensor *action,
                                dg_real inv_batch, dg_tensor **terms) {
    dg_tensor *rows[DG_LOSS_MAX_TERMS] = {0};
    env->game->step_cost_rows(ctx, env, next, aux, action, rows);
    for (int k = 0; k < env->nterms; k++)
        terms[k] = rows[k] ? dg__batch_mean(ctx, rows[k], inv_batch) : dg_scalar(ctx, 0.0f);
}

void dg_env_terminal_cost_from_rows(dg_ctx *ctx, const dg_env *env, dg_tensor *final, dg_tensor *aux,
                                    dg_real inv_batch, dg_tensor **terms) {
    dg_tensor *rows[DG_LOSS_MAX_TERMS] = {0};
    env->game->terminal_cost_rows(ctx, env, final, aux, rows);
    for (int k = 0; k < env->nterms; k++)
        if (rows[k]) terms[k] = dg__batch_mean(ctx, rows[k], inv_batch);
}

int dg__bodies_two(const dg_real *a, const dg_real *b, int b_is_goal, dg_real *xy, int *is_goal) {
    xy[0] = a[0];
    xy[1] = a[1];
    xy[2] = b[0];
    xy[3] = b[1];
    is_goal[0] = 0;
    is_goal[1] = b_is_goal;
    return 2;
}

int dg__bodies_agent_goal(const dg_env *env, const dg_real *s, const dg_real *aux, dg_real *xy, int *is_goal) {
    return dg__bodies_two(s, aux, 1, xy, is_goal);
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double dg__median(double *v, int n) {
    for (int i = 0; i < n; i++)
        if (v[i] != v[i]) return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
