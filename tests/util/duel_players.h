/* duel_simple's players written as C functions (dg_policy.fn), for the frozen-player anchors of
 * tests/test_certify_dp.c and tests/test_certify_discrete.c: throttle x dg_unit_disk(scale x the
 * relative position the player observes: the pursuer's e - p, the evader's p - e), the game's own
 * bound on an action. */
#ifndef DG_TEST_DUEL_PLAYERS_H
#define DG_TEST_DUEL_PLAYERS_H

#include "difgames/difgames.h"

typedef struct exact_player { double scale, throttle; } exact_player;

static inline dg_tensor *exact_act(dg_ctx *ctx, void *user, int t, dg_tensor *obs, int B) {
    const exact_player *x = user;
    (void)t;
    (void)B;
    return dg_scale(ctx, dg_unit_disk(ctx, dg_scale(ctx, dg_cols(ctx, obs, 2, 2), x->scale)), x->throttle);
}

#endif
