/* Episodes on the tape: the rollout, checkpointed and truncated BPTT, the state-gradient
 * diagnostic, and a trainer's batch cut into shards run in parallel (and over MPI ranks). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/dist.h"
#include "difgames/losses.h"
#include "solver/trainer_internal.h"

/* ------------------------------------------------------------ rollout */

/* The safety filter's penalty of one step: filter_penalty * Σ_rows |filtered - action|^2 / B over
 * the players' columns (the filter's output may carry an adversary's after them), on ctx. Its
 * gradient reaches the players' action both directly and through the filter's op (its Jacobian). */
static dg_tensor *filter_penalty(dg_ctx *ctx, const dg_policy *pol, dg_tensor *action, dg_tensor *filtered,
                                 dg_real inv_batch) {
    const int A = action->shape[1];
    dg_tensor *f = filtered->shape[1] == A ? filtered : dg_cols(ctx, filtered, 0, A);
    return dg_scale(ctx, dg_sum(ctx, dg_square(ctx, dg_sub(ctx, f, action))),
                    (dg_real)pol->filter_penalty * inv_batch);
}

/* dg_loss_begin with env's terms and, when pol's filter is penalised, the penalty's after them
 * (weight 1: filter_penalty is in the term). */
static void loss_begin(dg_loss *l, const dg_env *env, const dg_policy *pol) {
    dg_real w[DG_LOSS_MAX_TERMS + 1];
    const int pen = pol->filter && pol->filter_penalty > 0, n = env->nterms + pen;
    memcpy(w, env->term_weights, (size_t)(env->nterms < DG_LOSS_MAX_TERMS ? env->nterms : DG_LOSS_MAX_TERMS) * sizeof *w);
    if (pen && env->nterms < DG_LOSS_MAX_TERMS) w[env->nterms] = 1;
    dg_loss_begin(l, n, w);
}

/* The tape's loss of an episode's (or window's) sums l: dg_loss_finish's, weighted getting its
 * weighted terms and *plain its value; share not NULL (a general-sum player's row of
 * env->player_share): that player's own cost, sum_k share[k] w_k acc_k / steps (a penalty term after
 * the game's, the safety filter's, at its own weight: every player pays it), as the tensor to
 * differentiate. NULL on error (see the context). */
static dg_tensor *loss_target(dg_ctx *ctx, const dg_env *env, dg_loss *l, const dg_real *share, dg_real *weighted,
                              double *plain) {
    dg_tensor *lt = dg_loss_finish(ctx, l, weighted);
    if (lt && plain) *plain = lt->data[0];
    if (!share || !lt) return lt;
    dg_loss own = *l;
    for (int k = 0; k < env->nterms && k < own.nterms; k++) own.weights[k] *= share[k];
    return dg_loss_finish(ctx, &own, NULL);
}

/* Steps t0+1..t1 from state on ctx, adding each step's terms to loss; traj
 * (if not NULL) gets the states, row t at traj + t·ld·S; keep (if not NULL)
 * the state tensors, keep[t] after step t; a noisy game's draws come from nz
 * (dg_noise: per global row and step). Returns the state after step t1,
 * NULL on error. */
static dg_tensor *run_steps(dg_ctx *ctx, const dg_env *env, const dg_policy *pol, dg_params *p,
                            dg_tensor *state, dg_tensor *ax, int t0, int t1, dg_real inv_batch,
                            dg_loss *loss, dg_real *traj, int ld, dg_tensor **keep, const dg_noise *nz) {
    const dg_game *g = env->game;
    const int S = env->state_dim, B = state->shape[0];
    for (int t = t0 + 1; t <= t1; t++) {
        dg_tensor *obs = pol->plan_steps ? NULL : g->observe(ctx, env, state, ax);
        dg_tensor *act = dg_policy_act(ctx, pol, p, 0, t, obs, B);
        if (pol->n == 2) {  /* the evader's action follows the pursuer's: [a, b] */
            dg_tensor *b = dg_policy_act(ctx, pol, p, 1, t, pol->plan_steps ? NULL : g->observe2(ctx, env, state, ax), B);
            act = dg_concat(ctx, (dg_tensor *[]){act, b}, 2, 1);
        } else if (pol->n > 2) {  /* every player's action side by side: [a_0, a_1, a_2, ...] */
            dg_tensor *all[DG_MAX_PLAYERS] = {act};
            for (int i = 1; i < pol->n; i++)
                all[i] = dg_policy_act(ctx, pol, p, i, t, pol->plan_steps ? NULL : dg_env_observe(ctx, env, i, state, ax), B);
            act = dg_concat(ctx, all, pol->n, 1);
        }
        dg_tensor *pen = NULL;
        if (pol->filter) {
            dg_tensor *a0 = act;
            if (!(act = pol->filter(ctx, pol->filter_user, t, state, act))) return NULL;
            if (pol->filter_penalty > 0 && !(pen = filter_penalty(ctx, pol, a0, act, inv_batch))) return NULL;
        }
        if (!(state = dg_env_advance_noise(ctx, env, t, state, ax, act, nz, inv_batch, loss))) return NULL;
        if (pen) dg_loss_add_term(ctx, loss, env->nterms, pen);
        if (traj) memcpy(traj + (size_t)t * ld * S, state->data, (size_t)B * S * sizeof(dg_real));
        if (keep) keep[t] = state;
    }
    return state;
}

dg_tensor *dg_rollout(dg_ctx *ctx, const dg_env *env, const dg_policy *pol, dg_params *p,
                      const dg_real *state0, const dg_real *aux, int B, dg_real inv_batch,
                      dg_real *terms, dg_real *traj, int traj_ld) {
    return dg_rollout_noise(ctx, env, pol, p, state0, aux, B, inv_batch, terms, traj, traj_ld, NULL);
}

dg_tensor *dg_rollout_noise(dg_ctx *ctx, const dg_env *env, const dg_policy *pol, dg_params *p,
                            const dg_real *state0, const dg_real *aux, int B, dg_real inv_batch,
                            dg_real *terms, dg_real *traj, int traj_ld, const dg_noise *nz) {
    const int S = env->state_dim;
    dg_tensor *state = dg_from(ctx, 2, (int[]){B, S}, state0);
    dg_tensor *ax = env->aux_dim ? dg_from(ctx, 2, (int[]){B, env->aux_dim}, aux) : NULL;
    if (!state) return NULL;
    if (traj_ld < B) traj_ld = B;
    if (traj) memcpy(traj, state0, (size_t)B * S * sizeof(dg_real));
    dg_loss loss;
    loss_begin(&loss, env, pol);
    if (!run_steps(ctx, env, pol, p, state, ax, 0, env->horizon, inv_batch, &loss, traj, traj_ld, NULL, nz))
        return NULL;
    return dg_loss_finish(ctx, &loss, terms);
}

/* The accumulators' values after a segment, to seed the next one. */
static void loss_values(const dg_loss *l, dg_real *acc) {
    for (int i = 0; i < l->nterms; i++) acc[i] = l->acc[i]->data[0];
}

/* Seeds l as if steps steps had been added with sums acc (constants). */
static void loss_seed(dg_ctx *ctx, dg_loss *l, const dg_real *acc, int steps) {
    for (int i = 0; i < l->nterms; i++) l->acc[i] = dg_scalar(ctx, acc[i]);
    l->steps = steps;
}

int dg_episode_saved(int H, int every, int truncate) {
    const int T = truncate > 0 && truncate < H ? truncate : H;  /* steps of one window */
    return (every > 0 && every < T ? (T + every - 1) / every : 0) + (T < H);
}

/* Loss and gradient of the window of steps T0+1..T1 from the state start (a constant: the
 * gradient stops there), on ctx; every = k < T1 - T0: checkpointed BPTT inside it, the segment
 * starts in saved (ceil((T1 - T0)/k) blocks of (B, S)). acc holds the loss sums of steps 1..T0 on
 * entry (unused when T0 = 0), of steps 1..T1 on return. The last window (T1 = H) sets *loss_out
 * and terms; the others copy the state after step T1 into end. The float operations are those
 * of the whole episode's tape, so the loss is the same to the bit. */
static dg_status window_grad(dg_ctx *ctx, const dg_env *env, const dg_policy *pol, dg_params *p,
                             const dg_real *start, const dg_real *aux, int B, dg_real inv_batch, int T0, int T1,
                             int every, dg_real *saved, dg_real *acc, dg_real *end, double *loss_out, dg_real *terms,
                             dg_real *traj, int traj_ld, const dg_real *share, const dg_noise *nz) {
    const int H = env->horizon, S = env->state_dim, last = T1 == H;
    if (every <= 0 || every >= T1 - T0) {  /* the window on one tape: forward, then its backward */
        dg_ctx_reset(ctx);
        dg_tensor *st = dg_from(ctx, 2, (int[]){B, S}, start);
        dg_tensor *ax = env->aux_dim ? dg_from(ctx, 2, (int[]){B, env->aux_dim}, aux) : NULL;
        if (!st) return dg_ctx_status(ctx);
        dg_loss l;
        loss_begin(&l, env, pol);
        if (T0 > 0) loss_seed(ctx, &l, acc, T0);
        dg_tensor *e1 = run_steps(ctx, env, pol, p, st, ax, T0, T1, inv_batch, &l, traj, traj_ld, NULL, nz);
        if (!e1) return dg_ctx_status(ctx);
        loss_values(&l, acc);
        if (!last) memcpy(end, e1->data, (size_t)B * S * sizeof(dg_real));
        l.steps = H;  /* scale by 1/H, as the full episode does (the last window counts H already) */
        double plain = NAN;
        dg_tensor *lt = loss_target(ctx, env, &l, share, last ? terms : NULL, &plain);
        if (!lt) return dg_ctx_status(ctx);
        if (last) *loss_out = plain;
        return dg_backward(ctx, lt);
    }
    /* Checkpointed BPTT. Forward: segment by segment on a rewound arena,
     * keeping the state at each segment start (saved, (nseg, B, S)) and the
     * running loss sums. The float operations are those of the full tape, so
     * the loss is the same to the bit. */
    const int nseg = (T1 - T0 + every - 1) / every;
    memcpy(saved, start, (size_t)B * S * sizeof(dg_real));
    for (int j = 0; j < nseg; j++) {
        const int t0 = T0 + j * every, t1 = t0 + every < T1 ? t0 + every : T1;
        dg_ctx_reset(ctx);
        dg_tensor *st = dg_from(ctx, 2, (int[]){B, S}, saved + (size_t)j * B * S);
        dg_tensor *ax = env->aux_dim ? dg_from(ctx, 2, (int[]){B, env->aux_dim}, aux) : NULL;
        if (!st) return dg_ctx_status(ctx);
        dg_loss l;
        loss_begin(&l, env, pol);
        if (t0 > 0) loss_seed(ctx, &l, acc, t0);
        dg_tensor *e1 = run_steps(ctx, env, pol, p, st, ax, t0, t1, inv_batch, &l, traj, traj_ld, NULL, nz);
        if (!e1) return dg_ctx_status(ctx);
        loss_values(&l, acc);
        if (j + 1 < nseg) memcpy(saved + (size_t)(j + 1) * B * S, e1->data, (size_t)B * S * sizeof(dg_real));
        else if (!last) memcpy(end, e1->data, (size_t)B * S * sizeof(dg_real));
        else {
            dg_tensor *lt = dg_loss_finish(ctx, &l, terms);
            if (!lt) return dg_ctx_status(ctx);
            *loss_out = lt->data[0];
        }
    }
    /* Backward: last segment first. Each is rebuilt from its saved start
     * state (a leaf needing a gradient, except the window's first); its loss
     * is its own weighted terms plus sum(end · G), G the gradient that the
     * later segments sent back to its end state. Gradients reach every node
     * in the order of the full tape, so they are the same to the bit. */
    dg_real *adj = NULL;  /* G, (B, S), in the arena of the segment being built */
    dg_real *g_next = NULL;
    for (int j = nseg - 1; j >= 0; j--) {
        const int t0 = T0 + j * every, t1 = t0 + every < T1 ? t0 + every : T1;
        if (g_next) {  /* keep G across the arena rewind */
            memcpy(saved + (size_t)(j + 1) * B * S, g_next, (size_t)B * S * sizeof(dg_real));
            adj = saved + (size_t)(j + 1) * B * S;  /* that start state is no longer needed */
        }
        dg_ctx_reset(ctx);
        dg_tensor *st = dg_from(ctx, 2, (int[]){B, S}, saved + (size_t)j * B * S);
        dg_tensor *ax = env->aux_dim ? dg_from(ctx, 2, (int[]){B, env->aux_dim}, aux) : NULL;
        if (!st) return dg_ctx_status(ctx);
        if (j > 0) dg_set_requires_grad(st);
        dg_loss l;
        loss_begin(&l, env, pol);
        if (t0 > 0) loss_seed(ctx, &l, acc, t0);  /* constants: no effect on gradients */
        l.steps = t0;
        dg_tensor *e1 = run_steps(ctx, env, pol, p, st, ax, t0, t1, inv_batch, &l, NULL, 0, NULL, nz);
        if (!e1) return dg_ctx_status(ctx);
        l.steps = H;  /* scale by 1/H, as the full episode does */
        dg_tensor *seg = loss_target(ctx, env, &l, share, NULL, NULL);
        if (adj) {
            dg_tensor *G = dg_from(ctx, 2, (int[]){B, S}, adj);
            seg = dg_add(ctx, seg, dg_sum(ctx, dg_mul(ctx, e1, G)));
        }
        if (!seg || dg_backward(ctx, seg) != DG_OK) return dg_ctx_status(ctx);
        g_next = j > 0 ? st->grad : NULL;
        if (j > 0 && !g_next) {  /* the loss does not depend on this segment's start */
            memset(saved + (size_t)j * B * S, 0, (size_t)B * S * sizeof(dg_real));
            g_next = saved + (size_t)j * B * S;
        }
    }
    return DG_OK;
}

/* dg_episode_grad_noise for the loss, or (share not NULL) for one general-sum player's own cost:
 * the same forward, the same loss and terms, the gradient of that cost. */
static dg_status episode_grad(dg_ctx *ctx, const dg_env *env, const dg_policy *pol, dg_params *p,
                              const dg_real *state0, const dg_real *aux, int B, dg_real inv_batch, int every,
                              int truncate, dg_real *saved, double *loss_out, dg_real *terms, dg_real *traj,
                              int traj_ld, const dg_real *share, const dg_noise *nz) {
    const int H = env->horizon, S = env->state_dim;
    if (traj_ld < B) traj_ld = B;
    const int T = truncate > 0 && truncate < H ? truncate : H;  /* steps of one window */
    if (T == H && (every <= 0 || every >= H) && !share) {  /* the whole episode on one tape */
        dg_ctx_reset(ctx);
        dg_tensor *l = dg_rollout_noise(ctx, env, pol, p, state0, aux, B, inv_batch, terms, traj, traj_ld, nz);
        if (l) dg_backward(ctx, l);
        *loss_out = l && dg_ctx_status(ctx) == DG_OK ? l->data[0] : NAN;
        return dg_ctx_status(ctx);
    }
    /* Truncated BPTT (T < H): windows of T steps, each rolled out from the state the last one
     * ended in and differentiated on its own, that start state a constant. The checkpointed
     * segments (if any) use the first blocks of saved, the state between windows the last. */
    dg_real acc[DG_LOSS_MAX_TERMS] = {0};
    dg_real *end = T < H ? saved + (size_t)(dg_episode_saved(H, every, truncate) - 1) * B * S : NULL;
    if (traj) memcpy(traj, state0, (size_t)B * S * sizeof(dg_real));
    for (int T0 = 0; T0 < H; T0 += T) {
        const int T1 = T0 + T < H ? T0 + T : H;
        const dg_status st = window_grad(ctx, env, pol, p, T0 ? end : state0, aux, B, inv_batch, T0, T1, every,
                                         saved, acc, end, loss_out, terms, traj, traj_ld, share, nz);
        if (st != DG_OK) return st;
    }
    return DG_OK;
}

/* The parameters [lo, hi) of pol's player i in p (its block of p's data and gradient). */
static void player_block(const dg_policy *pol, const dg_params *p, int i, size_t *lo, size_t *hi) {
    *lo = p->info[dg_policy_first_param(pol, i)].offset;
    *hi = i + 1 < pol->n ? p->info[dg_policy_first_param(pol, i + 1)].offset : p->total;
}

/* A general-sum episode on one tape: one forward, then one backward per player of its own cost,
 * each keeping that player's block of the gradient (added into p's, as dg_episode_grad adds).
 * Measured against one episode_grad per player (a forward each) in docs/two_player.md. */
static dg_status general_sum_one_tape(dg_ctx *ctx, const dg_env *env, const dg_policy *pol, dg_params *p,
                                      const dg_real *state0, const dg_real *aux, int B, dg_real inv_batch,
                                      double *loss_out, dg_real *terms, dg_real *traj, int traj_ld,
                                      const dg_noise *nz) {
    const int S = env->state_dim;
    *loss_out = NAN;
    dg_ctx_reset(ctx);
    dg_real *keep = dg_ctx_alloc(ctx, p->total * sizeof(dg_real));  /* the gradient, block by block */
    dg_tensor *state = keep ? dg_from(ctx, 2, (int[]){B, S}, state0) : NULL;
    dg_tensor *ax = state && env->aux_dim ? dg_from(ctx, 2, (int[]){B, env->aux_dim}, aux) : NULL;
    if (!state || (env->aux_dim && !ax)) return dg_ctx_status(ctx);
    memcpy(keep, p->grad, p->total * sizeof(dg_real));
    if (traj) memcpy(traj, state0, (size_t)B * S * sizeof(dg_real));
    dg_loss l;
    loss_begin(&l, env, pol);
    if (!run_steps(ctx, env, pol, p, state, ax, 0, env->horizon, inv_batch, &l, traj, traj_ld, NULL, nz))
        return dg_ctx_status(ctx);
    double plain = NAN;
    dg_tensor *own[DG_MAX_PLAYERS];
    for (int i = 0; i < pol->n; i++)
        if (!(own[i] = loss_target(ctx, env, &l, env->player_share[i], i ? NULL : terms, i ? NULL : &plain)))
            return dg_ctx_status(ctx);
    for (int i = 0; i < pol->n; i++) {
        size_t lo, hi;
        player_block(pol, p, i, &lo, &hi);
        memset(p->grad, 0, p->total * sizeof(dg_real));
        if (dg_backward(ctx, own[i]) != DG_OK) return dg_ctx_status(ctx);
        for (size_t j = lo; j < hi; j++) keep[j] += p->grad[j];
    }
    memcpy(p->grad, keep, p->total * sizeof(dg_real));
    *loss_out = plain;
    return DG_OK;
}

dg_status dg_episode_grad(dg_ctx *ctx, const dg_env *env, const dg_policy *pol, dg_params *p,
                          const dg_real *state0, const dg_real *aux, int B, dg_real inv_batch,
                          int every, int truncate, dg_real *saved, double *loss_out, dg_real *terms,
                          dg_real *traj, int traj_ld) {
    return dg_episode_grad_noise(ctx, env, pol, p, state0, aux, B, inv_batch, every, truncate, saved, loss_out, terms,
                                 traj, traj_ld, NULL);
}

dg_status dg_episode_grad_noise(dg_ctx *ctx, const dg_env *env, const dg_policy *pol, dg_params *p,
                                const dg_real *state0, const dg_real *aux, int B, dg_real inv_batch,
                                int every, int truncate, dg_real *saved, double *loss_out, dg_real *terms,
                                dg_real *traj, int traj_ld, const dg_noise *nz) {
    if (!env->general_sum || pol->n < 2)
        return episode_grad(ctx, env, pol, p, state0, aux, B, inv_batch, every, truncate, saved, loss_out, terms,
                            traj, traj_ld, NULL, nz);
    /* General-sum: each player's block is the gradient of its own cost. */
    const int H = env->horizon, T = truncate > 0 && truncate < H ? truncate : H;
    if (T == H && (every <= 0 || every >= H))
        return general_sum_one_tape(ctx, env, pol, p, state0, aux, B, inv_batch, loss_out, terms, traj,
                                    traj_ld < B ? B : traj_ld, nz);
    /* checkpointed or truncated: the episode once per player (its segments' seeds are that player's) */
    dg_real *keep = malloc(p->total * sizeof(dg_real));
    if (!keep) return dg_ctx_fail(ctx, DG_ERR_NOMEM, "out of memory for the players' gradients"), dg_ctx_status(ctx);
    memcpy(keep, p->grad, p->total * sizeof(dg_real));
    dg_status st = DG_OK;
    for (int i = 0; i < pol->n && st == DG_OK; i++) {
        size_t lo, hi;
        player_block(pol, p, i, &lo, &hi);
        memset(p->grad, 0, p->total * sizeof(dg_real));
        st = episode_grad(ctx, env, pol, p, state0, aux, B, inv_batch, every, truncate, saved, loss_out, terms,
                          i ? NULL : traj, traj_ld, env->player_share[i], nz);
        for (size_t j = lo; j < hi && st == DG_OK; j++) keep[j] += p->grad[j];
    }
    if (st == DG_OK) memcpy(p->grad, keep, p->total * sizeof(dg_real));
    free(keep);
    return st;
}

/* ------------------------------------------------------------ state gradients */

dg_status dg_episode_state_grads(dg_ctx *ctx, const dg_env *env, const dg_policy *pol, dg_params *p,
                         const dg_real *state0, const dg_real *aux, int B, dg_state_grads *r) {
    const int H = env->horizon, S = env->state_dim;
    memset(r, 0, sizeof *r);
    r->rows = B;
    dg_ctx_reset(ctx);
    dg_tensor **keep = dg_ctx_alloc(ctx, (size_t)(H + 1) * sizeof *keep);  /* keep[t]: the state after step t */
    dg_tensor *st = keep ? dg_from(ctx, 2, (int[]){B, S}, state0) : NULL;
    dg_tensor *ax = st && env->aux_dim ? dg_from(ctx, 2, (int[]){B, env->aux_dim}, aux) : NULL;
    if (!st || (env->aux_dim && !ax)) return dg_ctx_status(ctx);
    memset(keep, 0, (size_t)(H + 1) * sizeof *keep);
    dg_set_requires_grad(st);  /* the initial state too (t = 0) */
    keep[0] = st;
    dg_loss l;
    loss_begin(&l, env, pol);
    if (!run_steps(ctx, env, pol, p, st, ax, 0, H, 1.0f / (dg_real)B, &l, NULL, 0, keep, NULL))
        return dg_ctx_status(ctx);
    dg_tensor *lt = dg_loss_finish(ctx, &l, NULL);
    for (int t = 1; t <= H; t++) dg_retain_grad(keep[t]);  /* intermediates: read after backward */
    if (!lt || dg_backward(ctx, lt) != DG_OK) return dg_ctx_status(ctx);
    /* 1, 2, 5, 10, 20, 50, ... steps back from the end, then the initial state */
    for (int k = 0, back = 1; r->n < DG_STATE_GRADS_MAX && back <= H; k++) {
        const dg_tensor *x = keep[H - back];
        double ss = 0.0;
        for (int64_t i = 0; x && x->grad && i < x->n; i++) ss += (double)x->grad[i] * x->grad[i];
        r->t[r->n] = H - back;
        r->norm[r->n++] = sqrt(ss);
        if (back == H) break;
        back = (k % 3 == 1 ? 5 : 2) * back / (k % 3 == 1 ? 2 : 1);  /* 1 2 5 10 20 50 100 ... */
        if (back > H) back = H;
    }
    /* growth against the latest time with a gradient (the last steps may not reach the loss) */
    int ref = 0;
    while (ref < r->n && r->norm[ref] == 0.0) ref++;
    for (int i = ref + 1; i < r->n; i++)
        if (r->norm[i] / r->norm[ref] > r->growth) {
            r->growth = r->norm[i] / r->norm[ref];
            r->growth_t = r->t[i];
        }
    r->ref = ref < r->n ? ref : -1;
    for (int i = ref; i < r->n && r->norm[i] <= 10.0 * r->norm[ref]; i++) r->window = env->horizon - r->t[i];
    r->chaotic = r->growth > DG_STATE_GRADS_CHAOS;
    return DG_OK;
}

/* ------------------------------------------------------------ shards */

/* One shard's episode on its arena, for dg_ctx_run. */
typedef struct shard_job {
    const dg_trainer *t;
    shard           *sh;
    dg_params       *view;
    const dg_real     *state0, *aux;
    dg_real           *traj, inv_batch;
    uint64_t         flops0;          /* the arena's FLOP count when the run began */
    dg_noise         noise;           /* a noisy game's draws: the epoch's key, the shard's rows */
} shard_job;

static dg_status shard_episode(dg_ctx *ctx, void *user) {
    shard_job *j = user;
    shard *sh = j->sh;
    j->flops0 = dg_ctx_flops(ctx);
    memset(sh->grad, 0, j->t->p->total * sizeof(dg_real));
    return dg_episode_grad_noise(ctx, j->t->env, &j->t->mlp, j->view, j->state0, j->aux, sh->rows, j->inv_batch,
                                 j->t->o.checkpoint_every, j->t->o.truncate, sh->saved, &sh->loss, sh->terms, j->traj,
                                 j->t->o.batch, &j->noise);
}

/* What travels of one shard (then its gradient). */
typedef struct shard_msg {
    double    loss, flops;
    uint64_t  peak;
    int32_t   status, pad;
    dg_real     terms[DG_LOSS_MAX_TERMS];
    char      err[256];
} shard_msg;

/* Under MPI: every rank's shards' results (loss, terms, gradient, flops, arena peak; with traj, the
 * trajectory rows) to every rank, in place in t->shards (MPI_Allgatherv: exact copies). */
static dg_status exchange_shards(dg_trainer *t, dg_real *traj, double *sflops, size_t *speak, dg_err *e) {
    const int R = dg_dist_size(), me = dg_dist_rank(), B = t->o.batch, S = t->env->state_dim;
    const int H1 = traj ? t->env->horizon + 1 : 0;
    const size_t total = t->p->total, one = sizeof(shard_msg) + total * sizeof(dg_real);
    size_t bytes[MAX_THREADS], cap = 0, at = 0;
    int lo[MAX_THREADS + 1], row0[MAX_THREADS], rows[MAX_THREADS];
    for (int r = 0; r <= R; r++) lo[r] = (int)((int64_t)r * t->nshards / R);
    for (int r = 0; r < R; r++) {   /* rank r's shards, and their rows of the trajectory */
        const shard *a = &t->shards[lo[r]], *z = &t->shards[lo[r + 1] - 1];
        row0[r] = lo[r + 1] > lo[r] ? a->row0 : 0;
        rows[r] = lo[r + 1] > lo[r] ? z->row0 + z->rows - a->row0 : 0;
        bytes[r] = (size_t)(lo[r + 1] - lo[r]) * one + (size_t)H1 * (size_t)rows[r] * (size_t)S * sizeof(dg_real);
        if (r < me) at += bytes[r];
        cap += bytes[r];
    }
    if (cap > t->xcap) {
        unsigned char *b = realloc(t->xbuf, cap);
        if (!b) return dg_err_set(e, DG_ERR_NOMEM, "out of memory for the shards' exchange (%zu bytes)", cap);
        t->xbuf = b;
        t->xcap = cap;
    }
    unsigned char *q = t->xbuf + at;   /* this rank's part, in place */
    for (int s = t->sh_lo; s < t->sh_hi; s++, q += one) {
        const shard *sh = &t->shards[s];
        shard_msg m = {.loss = sh->loss, .flops = sflops[s], .peak = speak[s], .status = (int32_t)sh->status};
        memcpy(m.terms, sh->terms, sizeof m.terms);
        memcpy(m.err, sh->err, sizeof m.err);
        memcpy(q, &m, sizeof m);
        memcpy(q + sizeof m, sh->grad, total * sizeof(dg_real));
    }
    const size_t rb = (size_t)rows[me] * (size_t)S * sizeof(dg_real);   /* one step's rows */
    for (int h = 0; h < H1; h++, q += rb) memcpy(q, traj + ((size_t)h * B + (size_t)row0[me]) * S, rb);
    dg_status st = dg_dist_allgatherv(t->xbuf + at, bytes[me], t->xbuf, bytes, e);
    if (st != DG_OK) return st;
    q = t->xbuf;
    for (int r = 0; r < R; r++) {
        for (int s = lo[r]; s < lo[r + 1]; s++, q += one) {
            shard *sh = &t->shards[s];
            shard_msg m;
            memcpy(&m, q, sizeof m);
            if (r != me) {
                sh->loss = m.loss;
                sh->status = (dg_status)m.status;
                memcpy(sh->terms, m.terms, sizeof m.terms);
                memcpy(sh->err, m.err, sizeof m.err);
                memcpy(sh->grad, q + sizeof m, total * sizeof(dg_real));
            }
            sflops[s] = m.flops;
            speak[s] = (size_t)m.peak;
        }
        const size_t rrb = (size_t)rows[r] * (size_t)S * sizeof(dg_real);
        for (int h = 0; h < H1; h++, q += rrb)
            if (r != me) memcpy(traj + ((size_t)h * B + (size_t)row0[r]) * S, q, rrb);
    }
    return DG_OK;
}

/* Forward and backward of every shard in parallel; sums into t->p->grad. */
/* Loss and gradient (into p->grad) of the batch state0/aux under parameters p,
 * one shard per thread; traj (may be NULL) gets the trajectory. */
dg_status dg__trainer_run_shards(dg_trainer *t, dg_params *p, const dg_real *state0, const dg_real *aux,
                            dg_real *traj_all, double *loss, dg_real *terms, double *flops, dg_err *e) {
    const dg_env *env = t->env;
    const int B = t->o.batch, S = env->state_dim, A = env->aux_dim;
    const dg_real inv_batch = 1.0f / (dg_real)B;
    const size_t total = t->p->total;
    uint64_t flops0[MAX_THREADS];
    double sflops[MAX_THREADS];
    size_t speak[MAX_THREADS];
    const int nloc = t->sh_hi - t->sh_lo;
    /* a noisy game's draws: one stream per epoch (train.fixed_batch: the first epoch's, the same
     * sample every epoch), indexed by the global batch row, so that the shards' split of the batch
     * over threads and ranks does not change them */
    const uint64_t noise_key = dg_noise_key(t->o.seed, t->o.fixed_batch ? 1u : (uint64_t)t->epoch + 1u);
    /* an arena too small grows in the first epoch (dg_ctx_run): the next epochs allocate nothing */
#pragma omp parallel for num_threads(nloc > 0 ? nloc : 1) schedule(static, 1)
    for (int s = t->sh_lo; s < t->sh_hi; s++) {
        shard *sh = &t->shards[s];
        dg_params view = *p;  /* same values, this shard's gradient block */
        view.grad = sh->grad;
        /* each shard writes its rows of the shared trajectory (for metrics) */
        shard_job j = {t, sh, &view, state0 + (size_t)sh->row0 * S, A ? aux + (size_t)sh->row0 * A : NULL,
                       traj_all ? traj_all + (size_t)sh->row0 * S : NULL, inv_batch, 0, {noise_key, sh->row0}};
        sh->status = dg_ctx_run(&sh->ctx, DG_ARENA_MAX, shard_episode, &j);
        flops0[s] = j.flops0;
        snprintf(sh->err, sizeof sh->err, "%s", dg_ctx_error(sh->ctx));
    }
    for (int s = t->sh_lo; s < t->sh_hi; s++) {
        sflops[s] = (double)(dg_ctx_flops(t->shards[s].ctx) - flops0[s]);
        speak[s] = dg_ctx_peak(t->shards[s].ctx);
    }
    if (dg_dist_size() > 1) {   /* every rank gets every shard's results, then sums them as one process */
        dg_status st = exchange_shards(t, traj_all, sflops, speak, e);
        if (st != DG_OK) return st;
    }
    *loss = 0.0;
    *flops = 0.0;
    memset(terms, 0, DG_LOSS_MAX_TERMS * sizeof(dg_real));
    memset(p->grad, 0, total * sizeof(dg_real));
    for (int s = 0; s < t->nshards; s++) {  /* fixed order: deterministic sums */
        shard *sh = &t->shards[s];
        if (sh->status != DG_OK)
            return dg_err_set(e, sh->status, "rollout failed: %s", sh->err);
        *loss += sh->loss;
        *flops += sflops[s];
        for (int i = 0; i < env->nterms; i++) terms[i] += sh->terms[i];
        for (size_t i = 0; i < total; i++) p->grad[i] += sh->grad[i];
        size_t peak = speak[s];
        if (peak > t->arena_peak) t->arena_peak = peak;
    }
    return DG_OK;
}

/* The state-gradient diagnostic (dg_episode_state_grads) of the first rows of the batch in t->state0
 * (dg__train_state_grad_rows), on shard 0's arena, grown to hold their whole episode (dg_train_memory counts
 * it); under MPI on the rank that holds shard 0, the others get n = 0. The parameter gradient lands
 * in shard 0's block, which the next epoch zeroes. */
dg_status dg__trainer_state_grads(dg_trainer *t, dg_state_grads *r, dg_err *e) {
    const dg_env *env = t->env;
    memset(r, 0, sizeof *r);
    if (t->sh_lo != 0) return DG_OK;
    shard *sh = &t->shards[0];
    const int rows = t->sg_rows;
    if (rows == 0) return DG_OK;
    if (dg_ctx_reserve(&sh->ctx, (size_t)t->sg_bytes) != DG_OK)
        return dg_err_set(e, DG_ERR_NOMEM, "out of memory for the state-gradient diagnostic's %.0f-byte arena",
                          t->sg_bytes);
    dg_params view = *t->p;
    view.grad = sh->grad;
    const dg_status st = dg_episode_state_grads(sh->ctx, env, &t->mlp, &view, t->state0, t->aux, rows, r);
    if (st == DG_ERR_ARENA_FULL) {  /* the estimate fell short: no diagnostic, training goes on */
        memset(r, 0, sizeof *r);
        return DG_OK;
    }
    if (st != DG_OK) return dg_err_set(e, st, "state-gradient diagnostic: %s", dg_ctx_error(sh->ctx));
    return DG_OK;
}
