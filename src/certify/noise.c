/* certify's refusal of noisy games: a game with noise has a random payoff, and certify defines no
 * promise for it yet (a bound that holds with a probability, over noise draws), so every certify entry
 * that takes an HJI problem refuses one in a line first. */
#include "difgames/certify.h"

dg_status dg_certify_noise_check(const dg_hji_problem *p, dg_err *e) {
    if (p && dg_hji_game_noisy(&p->game))
        return dg_err_set(e, DG_ERR_ARG, "certify: %s has noise (a diffusion term): certify does not define what it "
                          "promises for noisy games yet (docs/hji.md, diffusion)", p->name);
    return DG_OK;
}
