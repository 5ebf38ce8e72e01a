/* Which games certify certifies: what it promises is defined for one learned player or a zero-sum
 * pair (a value of the game, bounds on one loss); a game outside that is refused in one line until
 * certify says what it promises for it. */
#include "difgames/certify.h"
#include "difgames/env.h"

dg_status dg_certify_general_sum_check(const dg_env *env, dg_err *e) {
    if (!env || !env->general_sum) return DG_OK;
    return dg_err_set(e, DG_ERR_CONFIG, "%s is a general-sum game (each player its own cost): certify's value and "
                      "bounds are defined for one player or a zero-sum pair, not yet for it (eval reports each "
                      "player's cost and NashConv term instead)", env->game->name);
}
