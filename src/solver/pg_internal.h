/* What the policy-gradient baseline's files share (pg.c the learner, pg_curve.c the evaluation
 * batch and the learning curves): the shard limit, the arenas' sizes and the evaluation batch. */
#ifndef DG_SOLVER_PG_INTERNAL_H
#define DG_SOLVER_PG_INTERNAL_H

#include "difgames/pg.h"

#define MAX_SHARDS 64
#define ARENA0 ((size_t)1 << 20)       /* smallest arena of a shard (sized from the estimates)   */

struct dg_pg_eval {
    const dg_env *env;
    int     B, nshards;
    int     row0[MAX_SHARDS], rows[MAX_SHARDS];
    dg_ctx *ctx[MAX_SHARDS];
    dg_real  *state, *aux;               /* (B, S), (B, X)                                      */
};

/* The whole-episode forward tape of rows rows of the evaluation batch, with a quarter to spare. */
static inline double eval_arena(const dg_env *env, const int *hidden, int nhidden, double rows) {
    return 1.25 * dg_rollout_memory(env, hidden, nhidden, rows, env->horizon, 0);
}

#endif
