/* Helpers shared by the games. */
#include "envs/games.h"

dg_tensor *dg__batch_mean(dg_ctx *ctx, dg_tensor *x, float inv_batch) {
    return dg_scale(ctx, dg_sum(ctx, x), inv_batch);
}

int dg__bodies_agent_goal(const dg_env *env, const float *s, const float *aux, float *xy, int *is_goal) {
    xy[0] = s[0];
    xy[1] = s[1];
    xy[2] = aux[0];
    xy[3] = aux[1];
    is_goal[0] = 0;
    is_goal[1] = 1;
    return 2;
}
