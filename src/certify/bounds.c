/* Bounds with a sign, per held-out start and in any dimension (certify.h: dg_certify_bounds; issue
 * 26 section 2): an open-loop plan optimised from each start by BPTT through the learner's own game,
 * and for two players the other player's best response to a frozen one, by a plan and by the
 * trainer's BPTT best response (dg_best_responses). Every cost here is a start's own episode loss
 * (a batch of one), as the learner's game computes it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/certify.h"
#include "difgames/run.h"
#include "difgames/trainer.h"

static const char *const ROUTES[] = {"plan", "bptt", "grid"};

const char *dg_certify_route_name(int route) { return route >= 0 && route < 3 ? ROUTES[route] : NULL; }

dg_certify_plan_opts dg_certify_plan_opts_default(void) {
    return (dg_certify_plan_opts){.restarts = 3, .iters = 300, .lr = 0.05, .init_std = 0.5, .seed = 0,
                                  .bptt_epochs = 50};
}

/* ------------------------------------------------------------------ episodes */

/* An episode in which player `planned` (-1: none) plays the rows of plan, (H B, A): step t's row b
 * at (t-1) B + b, its action the tanh of it; the others play pol. params is a view whose gradient block is scratch: the frozen network is on the tape, but
 * nothing of it is updated. */
typedef struct play {
    const dg_env    *env;
    const dg_policy *pol;
    dg_params       *params;
    int              planned;
} play;

/* The episode loss of B rows from state0 and aux on ctx, as dg_rollout makes it (inv_batch 1/B, the
 * game's terms and weights, the terminal cost, the mean over H steps); plan a tensor on ctx (NULL
 * when no player is planned); record (may be NULL): the actions both players played, (H, B, A)
 * with A all players' columns. NULL on error (see the context). */
static dg_tensor *play_episode(dg_ctx *ctx, const play *pl, dg_tensor *plan, const dg_real *state0,
                               const dg_real *aux, int B, dg_real *record) {
    const dg_env *env = pl->env;
    const dg_game *g = env->game;
    const dg_policy *pol = pl->pol;
    const int H = env->horizon, A = env->act_dim + (pol->n == 2 ? env->act2_dim : 0);
    dg_tensor *state = dg_from(ctx, 2, (int[]){B, env->state_dim}, state0);
    dg_tensor *ax = env->aux_dim ? dg_from(ctx, 2, (int[]){B, env->aux_dim}, aux) : NULL;
    if (!state || (env->aux_dim && !ax)) return NULL;
    dg_loss loss;
    dg_loss_begin(&loss, env->nterms, env->term_weights);
    const dg_real inv_batch = 1 / (dg_real)B;
    for (int t = 1; t <= H; t++) {
        dg_tensor *act[2] = {NULL, NULL};
        for (int i = 0; i < pol->n; i++) {
            if (i == pl->planned) {
                act[i] = dg_tanh(ctx, dg_rows(ctx, plan, (t - 1) * B, B));
                continue;
            }
            dg_tensor *obs = pol->plan_steps ? NULL : (i ? g->observe2 : g->observe)(ctx, env, state, ax);
            act[i] = dg_policy_act(ctx, pol, pl->params, i, t, obs, B);
        }
        dg_tensor *a = pol->n == 2 ? dg_concat(ctx, act, 2, 1) : act[0];
        if (!(state = dg_env_advance(ctx, env, t, state, ax, a, inv_batch, &loss))) return NULL;
        if (record) memcpy(record + (size_t)(t - 1) * B * A, a->data, (size_t)B * A * sizeof(dg_real));
    }
    return dg_loss_finish(ctx, &loss, NULL);
}

/* One dg_ctx_run job: an episode of B rows, its loss in x->j; backward: its gradient into the
 * plan's block, or the players' (pl->params, zeroed first) when no player is planned. */
typedef struct job {
    const play    *pl;
    dg_params     *plan;       /* the planned player's rows as a parameter (NULL: none)     */
    const dg_real *state, *aux;
    int            B, backward;
    dg_real       *record;
    double         j;
} job;

static dg_status job_run(dg_ctx *ctx, void *user) {
    job *x = user;
    dg_tensor *plan = NULL;
    /* repeatable: a run the arena cut short added nothing */
    if (x->backward) dg_params_zero_grad(x->plan ? x->plan : x->pl->params);
    if (x->plan && !(plan = dg_param(ctx, x->plan, 0))) return dg_ctx_status(ctx);
    dg_tensor *loss = play_episode(ctx, x->pl, plan, x->state, x->aux, x->B, x->record);
    if (loss && x->backward) dg_backward(ctx, loss);
    if (loss && dg_ctx_status(ctx) == DG_OK) x->j = loss->data[0];
    return dg_ctx_status(ctx);
}

static dg_status run_job(dg_ctx **ctx, job *x, dg_err *e) {
    x->j = NAN;
    const dg_status st = dg_ctx_run(ctx, DG_ARENA_MAX, job_run, x);
    return st == DG_OK ? DG_OK : dg_err_set(e, st, "certify bounds: %s", dg_ctx_error(*ctx));
}

/* ------------------------------------------------------------------ the search */

/* What one search needs: the game, the policy, the starts, the planned player and its sign. */
typedef struct search {
    const dg_env    *env;
    const dg_policy *pol;
    dg_params       *view;          /* the policy's values, a scratch gradient block         */
    const dg_real   *state, *aux;
    int              B, S, X, H, Aall;
    const dg_certify_plan_opts *o;
    dg_ctx         **big, **one;    /* the batch's tape, a start's                            */
} search;

/* Start b's cost with player i playing its rows of plan (H B, A, pre-tanh): a batch of one, the
 * rows copied into one (a parameter (H, A)), so that the same tanh op makes the actions. */
static dg_status row_cost(const search *s, int i, const dg_real *plan, int A, int b, dg_params *one, double *c,
                          dg_err *e) {
    for (int t = 0; t < s->H; t++)
        memcpy(one->data + (size_t)t * A, plan + ((size_t)t * s->B + b) * A, A * sizeof(dg_real));
    const play pl = {s->env, s->pol, s->view, i};
    job x = {.pl = &pl, .plan = one, .state = s->state + (size_t)b * s->S,
             .aux = s->X ? s->aux + (size_t)b * s->X : NULL, .B = 1};
    const dg_status st = run_job(s->one, &x, e);
    *c = x.j;
    return st;
}

/* Whether cost c beats best for a player of sign (+1 minimises, -1 maximises): a NaN never wins, and
 * anything finite beats a NaN (a policy whose episode went non-finite). */
static int better(double sign, double c, double best) {
    return !isnan(c) && (isnan(best) || sign * c < sign * best);
}

/* Player i's plan from every start: restarts x iters Adam steps on sign x the episode loss (sign
 * +1: i minimises J, -1: i maximises it), the batch of B starts at once. best (B) holds each start's
 * best cost so far on entry (the learned player's own actions') and on return; which (B) gets the
 * restart that found it (-1: none beat the entry). init (H, B, Aall): the actions played by the
 * learned players, restart 0's start. */
static dg_status plan_search(const search *s, int i, double sign, const dg_real *init, double *best, int *which,
                             int slot, dg_certify_bound_stats *stats, dg_err *e) {
    const dg_certify_plan_opts *o = s->o;
    const int B = s->B, H = s->H, A = i ? s->env->act2_dim : s->env->act_dim, a0 = i ? s->env->act_dim : 0;
    const size_t n = (size_t)H * B * A;
    dg_params *pp = dg_params_create(), *p1 = dg_params_create();  /* the batch's plan, one start's */
    dg_adam adam = {0};
    dg_status st = DG_OK;
    dg_err le = {0};
    if (!pp || !p1 || dg_params_add(pp, "plan", 2, (int[]){H * B, A}, &le) < 0 ||
        dg_params_add(p1, "plan", 2, (int[]){H, A}, &le) < 0) {
        st = dg_err_set(e, DG_ERR_NOMEM, "certify bounds: out of memory for plans of %d starts x %d steps", B, H);
        goto out;
    }
    for (int b = 0; b < B; b++) which[b] = -1;
    dg_rng rng;
    dg_rng_seed(&rng, o->seed * 2654435761u + 97u * (uint64_t)(slot + 1));
    const play pl = {s->env, s->pol, s->view, i};
    for (int r = 0; r < o->restarts; r++) {
        const double t0 = dg_clock_s();
        for (size_t k = 0; k < n; k++) {
            if (r == 0) {  /* the learned player's own action, pre-tanh, held inside |a| <= 0.995 (|z| < 3):
                              * from a saturated tanh (|z| ~ 7) Adam needs ~150 steps to move at all; the
                              * exact actions stay a candidate (best's entry) */
                const size_t tb = k / A;  /* (t, b) */
                const double a = init[tb * s->Aall + a0 + k % A], lim = 0.995;
                pp->data[k] = (dg_real)atanh(a > lim ? lim : a < -lim ? -lim : a);
            } else
                pp->data[k] = r == 1 ? 0 : (dg_real)dg_rng_normal(&rng, 0.0f, (float)o->init_std);
        }
        if ((st = dg_adam_init(&adam, pp, o->lr, 0.9, 0.999, 1e-8, 0.0)) != DG_OK) {
            st = dg_err_set(e, st, "certify bounds: bad plan options (lr %g)", o->lr);
            goto out;
        }
        for (int it = 0; it < o->iters; it++) {
            job x = {.pl = &pl, .plan = pp, .state = s->state, .aux = s->aux, .B = B, .backward = 1};
            if ((st = run_job(s->big, &x, e)) != DG_OK) goto out;
            /* the batch mean's gradient is each start's own over B: times B, each start's step does not
             * depend on B; Adam is elementwise, so the starts' plans never mix (no clipping here) */
            const dg_real scale = (dg_real)(sign * B);
            for (size_t k = 0; k < n; k++) pp->grad[k] *= scale;
            adam.lr = o->lr * (0.1 + 0.45 * (1 + cos(3.14159265358979 * it / (o->iters > 1 ? o->iters - 1 : 1))));
            dg_adam_step(&adam, pp);
        }
        dg_adam_free(&adam);
        double mean = 0;
        for (int b = 0; b < B; b++) {  /* the last plan of this restart, each start on its own */
            double c;
            if ((st = row_cost(s, i, pp->data, A, b, p1, &c, e)) != DG_OK) goto out;
            mean += c / B;
            if (better(sign, c, best[b])) {
                best[b] = c;
                which[b] = r;
            }
        }
        stats->restart_cost[slot][r] = mean;
        stats->seconds_restart += dg_clock_s() - t0;  /* a sum here; the mean at the end */
    }
    for (int b = 0; b < B; b++) {
        if (which[b] >= 0) stats->restart_best[slot][which[b]]++;
        else stats->kept[slot]++;
    }
out:
    dg_adam_free(&adam);
    dg_params_free(pp);
    dg_params_free(p1);
    return st;
}

/* The learned players' own episodes, a start at a time: cost (B) and the actions they played into
 * record (H, B, Aall). */
static dg_status policy_rows(const search *s, double *cost, dg_real *record, dg_err *e) {
    dg_real *one = malloc((size_t)s->H * s->Aall * sizeof *one);
    if (!one) return dg_err_set(e, DG_ERR_NOMEM, "certify bounds: out of memory");
    const play pl = {s->env, s->pol, s->view, -1};
    dg_status st = DG_OK;
    for (int b = 0; b < s->B && st == DG_OK; b++) {
        job x = {.pl = &pl, .state = s->state + (size_t)b * s->S, .aux = s->X ? s->aux + (size_t)b * s->X : NULL,
                 .B = 1, .record = one};
        st = run_job(s->one, &x, e);
        cost[b] = x.j;
        for (int t = 0; t < s->H; t++)
            memcpy(record + ((size_t)t * s->B + b) * s->Aall, one + (size_t)t * s->Aall, s->Aall * sizeof(dg_real));
    }
    free(one);
    return st;
}

/* The BPTT route: dg_best_responses' episodes on one kept context; its last episode of each player
 * (on the held-out starts) is played a start at a time into cost[k]. */
typedef struct bptt_eval {
    const search *s;
    int           k;               /* held-out episodes seen: 0 the evader's best response, 1 the pursuer's */
    double       *cost[2];
} bptt_eval;

static dg_status bptt_episode(void *user, dg_params *p, const dg_real *state, const dg_real *aux, int B, int backward,
                              double *j, dg_err *e) {
    bptt_eval *x = user;
    const search *s = x->s;
    const play pl = {s->env, s->pol, p, -1};
    if (state != s->state || backward || x->k > 1) {  /* a training batch */
        job jb = {.pl = &pl, .state = state, .aux = aux, .B = B, .backward = backward};
        dg_status st = run_job(s->big, &jb, e);
        *j = jb.j;
        return st;
    }
    *j = 0;
    for (int b = 0; b < B; b++) {
        job jb = {.pl = &pl, .state = state + (size_t)b * s->S, .aux = s->X ? aux + (size_t)b * s->X : NULL, .B = 1};
        dg_status st = run_job(s->one, &jb, e);
        if (st != DG_OK) return st;
        x->cost[x->k][b] = jb.j;
        *j += jb.j / B;
    }
    x->k++;
    return DG_OK;
}

static int mlp_hidden(const dg_policy *pol, int *hidden) {
    int nh = 0;
    for (; pol->plan_steps == 0 && nh + 1 < pol->mlp[0].nlayers; nh++) hidden[nh] = pol->mlp[0].sizes[nh + 1];
    return nh;
}

double dg_certify_bounds_memory(const dg_env *env, const dg_policy *pol, int B) {
    if (!env || !pol || B < 1) return 0;
    int hidden[DG_MLP_MAX_LAYERS];
    const int nh = mlp_hidden(pol, hidden), A = env->act_dim + (pol->n == 2 ? env->act2_dim : 0);
    /* the batch's tape with its backward, a start's, the plan with its gradient and Adam's moments, the
     * recorded actions, the costs */
    return dg_rollout_memory(env, hidden, nh, B, env->horizon, 1) + dg_rollout_memory(env, hidden, nh, 1, env->horizon, 0) +
           (double)env->horizon * B * A * 5 * sizeof(dg_real) + (double)B * 8 * sizeof(double);
}

dg_status dg_certify_bounds(const dg_env *env, const dg_policy *pol, dg_params *params, const dg_real *state,
                            const dg_real *aux, int B, const dg_certify_plan_opts *o, const dg_train_opts *train,
                            dg_certify_bound_rows *rows, dg_certify_bound_stats *stats, dg_err *e) {
    if (!env || !pol || !params || !state || (env->aux_dim && !aux) || B < 1 || !o || !rows || !stats)
        return dg_err_set(e, DG_ERR_ARG, "certify bounds: bad arguments");
    if (o->restarts < 1 || o->restarts > DG_CERTIFY_MAX_RESTARTS || o->iters < 0 || !(o->lr > 0) ||
        !(o->init_std >= 0) || o->bptt_epochs < 0)
        return dg_err_set(e, DG_ERR_ARG, "certify bounds: restarts must be 1 to %d, iters and bptt epochs >= 0, lr > 0, "
                          "init_std >= 0", DG_CERTIFY_MAX_RESTARTS);
    if (pol->n != (env->nplayers == 2 ? 2 : 1))
        return dg_err_set(e, DG_ERR_ARG, "certify bounds: the policy has %d players, %s %d", pol->n, env->game->name,
                          env->nplayers == 2 ? 2 : 1);
    const double t0 = dg_clock_s();
    const int two = pol->n == 2, H = env->horizon, Aall = env->act_dim + (two ? env->act2_dim : 0);
    *stats = (dg_certify_bound_stats){.episodes = B, .restarts = o->restarts, .iters = o->iters};
    int hidden[DG_MLP_MAX_LAYERS];
    const int nh = mlp_hidden(pol, hidden);
    dg_ctx *big = dg_ctx_create((size_t)fmax(dg_rollout_memory(env, hidden, nh, B, H, 1), 1 << 20));
    dg_ctx *one = dg_ctx_create((size_t)fmax(dg_rollout_memory(env, hidden, nh, 1, H, 1), 1 << 20));
    dg_params view = *params;  /* the frozen player's gradient goes to scratch: params is unchanged */
    view.grad = calloc(params->total ? params->total : 1, sizeof(dg_real));
    dg_real *record = malloc((size_t)H * B * Aall * sizeof *record);
    double *cost = malloc((size_t)B * 5 * sizeof *cost), *best[2] = {cost + B, cost + 2 * (size_t)B};
    double *bptt[2] = {cost + 3 * (size_t)B, cost + 4 * (size_t)B};
    int *which = malloc((size_t)B * sizeof *which);
    dg_status st = DG_OK;
    if (!big || !one || !view.grad || !record || !cost || !which) {
        st = dg_err_set(e, DG_ERR_NOMEM, "certify bounds: out of memory for %d starts x %d steps", B, H);
        goto out;
    }
    const search s = {env, pol, &view, state, aux, B, env->state_dim, env->aux_dim, H, Aall, o, &big, &one};
    if ((st = policy_rows(&s, cost, record, e)) != DG_OK) goto out;
    /* the free player of each search: one player itself; two players the other of the frozen one */
    for (int k = 0; k < (two ? 2 : 1); k++) {
        const int free_player = two ? 1 - k : 0;
        const double sign = free_player == 1 ? -1 : 1;  /* the evader maximises J */
        memcpy(best[k], cost, (size_t)B * sizeof(double));  /* the learned player's own actions: a plan */
        if ((st = plan_search(&s, free_player, sign, record, best[k], which, k, stats, e)) != DG_OK) goto out;
    }
    int bptt_ok = 0;
    if (two && o->bptt_epochs > 0 && !pol->plan_steps && !pol->fn[0] && !pol->fn[1]) {  /* networks to train */
        const double tb = dg_clock_s();
        dg_train_opts d;
        if (!train) dg_train_opts_default(&d);
        const dg_train_opts *to = train ? train : &d;
        dg_rng rng;
        dg_rng_seed(&rng, to->seed * 7919u + 104729u);  /* as dg_run_exploit's */
        bptt_eval x = {&s, 0, {bptt[0], bptt[1]}};
        double jb[2];
        const size_t ev0 = params->info[dg_policy_first_param(pol, 1)].offset;
        if ((st = dg_best_responses(env, params, ev0, to, o->bptt_epochs, &rng, bptt_episode, &x, state, aux, B, jb,
                                    e)) != DG_OK)
            goto out;
        bptt_ok = x.k == 2;
        stats->seconds_bptt = dg_clock_s() - tb;
    }
    for (int b = 0; b < B; b++) {
        const double pc = cost[b];
        if (rows->policy_cost) rows->policy_cost[b] = pc;
        stats->policy_cost += pc / B;
        if (!two) {
            if (rows->plan_cost) rows->plan_cost[b] = best[0][b];
            if (rows->suboptimal) rows->suboptimal[b] = pc - best[0][b];
            stats->plan_cost += best[0][b] / B;
            stats->suboptimal += (pc - best[0][b]) / B;
            continue;
        }
        for (int k = 0; k < 2; k++) {
            const double sign = k == 0 ? -1 : 1;  /* frozen pursuer: the evader maximises; frozen evader: min */
            double c = best[k][b];
            int route = DG_CERTIFY_ROUTE_PLAN;
            if (bptt_ok && better(sign, bptt[k][b], c)) {
                c = bptt[k][b];
                route = DG_CERTIFY_ROUTE_BPTT;
                stats->bptt_best[k]++;
            }
            const double regret = k == 0 ? c - pc : pc - c;
            if (rows->br_cost[k]) rows->br_cost[k][b] = c;
            if (rows->br_route[k]) rows->br_route[k][b] = route;
            if (rows->regret[k]) rows->regret[k][b] = regret;
            stats->br_cost[k] += c / B;
            stats->regret[k] += regret / B;
        }
    }
out:
    stats->seconds_restart /= (two ? 2 : 1) * o->restarts;
    stats->seconds = dg_clock_s() - t0;
    dg_ctx_free(big);
    dg_ctx_free(one);
    free(view.grad);
    free(record);
    free(cost);
    free(which);
    return st;
}
