/* The players' policies for a game: the policy layer takes sizes, not games (it sits below envs),
 * so the game's sizes are read here. */
#include "difgames/env.h"

/* env's players, observation and action sizes, horizon and plan steps. */
dg_policy_shape dg_env_policy_shape(const dg_env *env) {
    dg_policy_shape s = {.nplayers = env->nplayers, .obs_dim = env->obs_dim, .act_dim = env->act_dim,
                         .obs2_dim = env->obs2_dim, .act2_dim = env->act2_dim, .horizon = env->horizon,
                         .plan_steps = env->plan_steps};
    for (int p = 2; p < env->nplayers && p < DG_MAX_PLAYERS; p++)
        s.obs_dims[p] = env->player_obs[p], s.act_dims[p] = env->player_act[p];
    return s;
}

/* The MLP policies of env's players into a new *p: dg_policy_create_shape of env's shape. */
dg_status dg_policy_create(const dg_env *env, const int *hidden, int nhidden, dg_policy *pol,
                           dg_params **p, dg_err *e) {
    const dg_policy_shape s = dg_env_policy_shape(env);
    return dg_policy_create_shape(&s, hidden, nhidden, pol, p, e);
}

/* The open-loop plans of env's players into a new *p: dg_policy_create_plan_shape of env's shape. */
dg_status dg_policy_create_plan(const dg_env *env, dg_policy *pol, dg_params **p, dg_err *e) {
    const dg_policy_shape s = dg_env_policy_shape(env);
    return dg_policy_create_plan_shape(&s, pol, p, e);
}
