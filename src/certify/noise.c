/* certify's refusal of noisy games: a game with noise has a random payoff, and certify defines no
 * promise for it yet (a bound that holds with a probability, over noise draws), so every certify entry
 * refuses one in a line first: an HJI problem with a diffusion term, and a learner's game with
 * Brownian noise (dg_env.noise_dim > 0). */
#include <string.h>

#include "difgames/certify.h"
#include "difgames/env.h"

dg_status dg_certify_noise_check(const dg_hji_problem *p, dg_err *e) {
    if (p && dg_hji_game_noisy(&p->game))
        return dg_err_set(e, DG_ERR_ARG, "certify: %s has noise (a diffusion term): certify does not define what it "
                          "promises for noisy games yet (docs/hji.md, diffusion)", p->name);
    return DG_OK;
}

/* Where env's noise is declared, for the refusal to name: the game's key env.noise when it has one
 * (reach), model.diffusion for a model file, else the game itself (merton is always noisy). */
static const char *noise_source(const dg_env *env) {
    for (int k = 0; env->game->keys && k < env->game->nkeys; k++)
        if (env->game->keys[k].name && strcmp(env->game->keys[k].name, "env.noise") == 0) return "env.noise > 0";
    if (strcmp(dg_env_source(env), "model") == 0) return "model.diffusion";
    return "its dynamics are always noisy";
}

dg_status dg_certify_env_noise_check(const dg_env *env, dg_err *e) {
    if (!env || env->noise_dim <= 0) return DG_OK;
    return dg_err_set(e, DG_ERR_CONFIG, "%s has Brownian noise (%s): certify's value and bounds are defined for "
                      "deterministic games, not yet for noisy ones (eval --noise-draws reports the means and spreads "
                      "over noise draws instead)", env->game->name, noise_source(env));
}
