/* The learner's own game, certified (certify.h: dg_certify_discrete; issue 26): the discrete game's
 * value by dynamic programming with its refinement study, the learned policy's loss from each held-out
 * start, the per-start bounds, and the gap of the loss against the interval [V-, V+]. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/certify.h"
#include "difgames/memory.h"
#include "difgames/run.h"
#include "difgames/trainer.h"

int dg_certify_discrete_nodes(int d) { return d <= 2 ? 21 : d == 3 ? 13 : 9; }

dg_certify_plan_opts dg_certify_plan_opts_game(const dg_env *env) {
    dg_certify_plan_opts o = dg_certify_plan_opts_default();
    /* reach (built in, or its model file): the plan's loss falls for thousands of Adam steps (the goal
     * term is flat far from the goal, the obstacle's margin sharp): ~3000 reach 1 % of the optimum */
    if (env && env->game && env->game->name && strcmp(env->game->name, "reach") == 0) o.iters = 3000;
    return o;
}

dg_certify_discrete_opts dg_certify_discrete_opts_default(const dg_env *env) {
    dg_certify_discrete_opts o;
    memset(&o, 0, sizeof o);
    o.episodes = 64;
    o.refine.tol = 0.01;
    o.bounds = 1;
    o.grid_br = 1;
    o.plan = dg_certify_plan_opts_game(env);
    return o;
}

double dg_certify_interval_gap(double cost, double lower, double upper) {
    if (isnan(cost) || isnan(lower) || isnan(upper)) return NAN;
    if (cost >= lower && cost <= upper) return 0;
    const double end = cost > upper ? upper : lower;
    return end != 0 ? (cost - end) / fabs(end) : NAN;
}

/* The episode constants the grid is solved for: a model file's episode.grid, else the first start's;
 * every start's aux row set to them (as dg_real). */
static void fix_aux(const dg_env *env, dg_real *aux, int B) {
    const int X = env->aux_dim;
    if (!X) return;
    double fixed[64];
    if (X <= 64 && dg_env_episode_grid(env, fixed))
        for (int j = 0; j < X; j++) aux[j] = (dg_real)fixed[j];
    for (int b = 1; b < B; b++) memcpy(aux + (size_t)b * X, aux, sizeof(dg_real) * X);
}

/* The episodes of path_box: R rows from state (R, S) and aux, each row's actions held at act (R, A)
 * for the H steps; the support of the value state on the axes of fixed[] into mn, mx. */
typedef struct path_job {
    const dg_env  *env;
    int            R, A;
    const dg_real *state, *aux, *act;
    const int     *fixed;
    double        *mn, *mx;
} path_job;

static dg_status path_run(dg_ctx *ctx, void *user) {
    path_job *x = user;
    const dg_env *env = x->env;
    const int S = env->state_dim, d = dg_dp_dims(env);
    dg_tensor *st = dg_from(ctx, 2, (int[]){x->R, S}, x->state);
    dg_tensor *ax = env->aux_dim ? dg_from(ctx, 2, (int[]){x->R, env->aux_dim}, x->aux) : NULL;
    dg_tensor *act = dg_from(ctx, 2, (int[]){x->R, x->A}, x->act);
    for (int t = 0; t < env->horizon && st && act && dg_ctx_status(ctx) == DG_OK; t++) {
        st = env->game->step(ctx, env, st, ax, act);
        for (int r = 0; st && r < x->R; r++) {
            double v[DG_DP_MAX_DIMS];
            dg_dp_state(env, st->data + (size_t)r * S, v);
            for (int k = 0; k < d; k++)
                if (x->fixed[k] && isfinite(v[k])) x->mn[k] = fmin(x->mn[k], v[k]), x->mx[k] = fmax(x->mx[k], v[k]);
        }
    }
    return dg_ctx_status(ctx) != DG_OK ? dg_ctx_status(ctx) : st ? DG_OK : DG_ERR_ARG;
}

/* The grid's box on the axes the reset leaves fixed (chase's and reach's velocities: 0 at every
 * start), where dp gives none: the support of the value state over 256 episodes of the game from
 * reset draws, each with every player's action held at a constant drawn uniformly from its box (a
 * velocity then runs to its limit, whatever the policy: the box is the game's, not the checkpoint's),
 * widened by dp's margin (0: a quarter) of its span on each side. The other axes are dg_dp_box's (the
 * reset's support); an axis the episodes leave fixed too stays unbounded (dg_dp_box refuses it). */
static dg_status path_box(const dg_env *env, dg_dp_opts *dp, dg_err *e) {
    enum { R = 256 };
    const int d = dg_dp_dims(env), S = env->state_dim;
    const int A = env->act_dim + (env->nplayers == 2 ? env->act2_dim : 0);
    double mn[DG_DP_MAX_DIMS], mx[DG_DP_MAX_DIMS], x[DG_DP_MAX_DIMS];
    int fixed[DG_DP_MAX_DIMS] = {0}, any = 0;
    dg_real *s = NULL, *a = NULL, *act = malloc(sizeof(dg_real) * (size_t)R * (A ? A : 1));
    dg_status st = act ? dg_run_init_draw(env, dp->seed, R, &s, &a, e) : dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    for (int k = 0; k < d; k++) mn[k] = INFINITY, mx[k] = -INFINITY;
    for (int i = 0; i < R && st == DG_OK; i++) {
        dg_dp_state(env, s + (size_t)i * S, x);
        for (int k = 0; k < d; k++) mn[k] = fmin(mn[k], x[k]), mx[k] = fmax(mx[k], x[k]);
    }
    for (int k = 0; k < d && st == DG_OK; k++) any |= fixed[k] = !(dp->lo[k] < dp->hi[k]) && !(mx[k] > mn[k]);
    if (st == DG_OK && any) {
        dg_rng rng;
        dg_rng_seed(&rng, dp->seed * 31u + 7u);
        for (int i = 0; i < R * A; i++) act[i] = (dg_real)dg_rng_uniform(&rng, -1.0f, 1.0f);
        double pmn[DG_DP_MAX_DIMS], pmx[DG_DP_MAX_DIMS];
        for (int k = 0; k < d; k++) pmn[k] = INFINITY, pmx[k] = -INFINITY;
        path_job j = {env, R, A, s, env->aux_dim ? a : NULL, act, fixed, pmn, pmx};
        dg_ctx *ctx = dg_ctx_create((size_t)1 << 22);
        st = ctx ? dg_ctx_run(&ctx, DG_ARENA_MAX, path_run, &j) : DG_ERR_NOMEM;
        if (st != DG_OK) dg_err_set(e, st, "certify: the game's step: %s", ctx ? dg_ctx_error(ctx) : "out of memory");
        dg_ctx_free(ctx);
        const double margin = dp->margin > 0 ? dp->margin : 0.25;
        for (int k = 0; k < d && st == DG_OK; k++) {
            if (!fixed[k] || !(pmx[k] > pmn[k])) continue;
            dp->lo[k] = pmn[k] - margin * (pmx[k] - pmn[k]);
            dp->hi[k] = pmx[k] + margin * (pmx[k] - pmn[k]);
        }
    }
    free(s);
    free(a);
    free(act);
    return st;
}

dg_status dg_certify_discrete_box(const dg_env *env, dg_dp_opts *dp, dg_err *e) {
    dg_status st = dg_dp_check(env, e);
    if (st != DG_OK || !dp) return st != DG_OK ? st : dg_err_set(e, DG_ERR_ARG, "certify: no options");
    const int d = dg_dp_dims(env);
    int boxed = 0;
    for (int k = 0; k < d; k++) boxed |= dp->lo[k] < dp->hi[k];
    double blo[DG_DP_MAX_DIMS], bhi[DG_DP_MAX_DIMS];
    if (!boxed && env->value_dim <= 0 && env->state_dim <= DG_DP_MAX_DIMS && dg_env_state_box(env, blo, bhi)) {
        for (int k = 0; k < d; k++) dp->lo[k] = blo[k], dp->hi[k] = bhi[k];  /* the model's own box */
        return DG_OK;
    }
    if ((st = path_box(env, dp, e)) != DG_OK || (st = dg_dp_box(env, dp, blo, bhi, e)) != DG_OK) return st;
    for (int k = 0; k < d; k++) dp->lo[k] = blo[k], dp->hi[k] = bhi[k];
    return DG_OK;
}

/* The grid route of the other player's best response to frozen player k (0 the pursuer): where the
 * frozen player acts on the value state alone, dg_dp_best_response on dp's grid; each start's cost
 * (into cost, scratch) replaces br[b] (route[b]) where it is better for the responding player (the
 * evader maximises). r->grid_route[k] and grid_best[k] say what happened; a grid over the memory
 * estimate skips the route. */
static dg_status grid_route(const dg_env *env, const dg_dp_opts *dp, const dg_policy *pol, dg_params *params, int k,
                            const dg_real *state, const dg_real *aux, int B, double *br, int *route, double *cost,
                            dg_certify_discrete_result *r, dg_err *e) {
    if (!dg_dp_frozen_fits(env, pol, params, k, state, aux, B, 1e-5)) {
        r->grid_route[k] = -1;
        return DG_OK;
    }
    dg_dp_opts q = *dp;
    q.frozen = pol;
    q.frozen_params = params;
    q.frozen_player = k;
    q.keep = 1;
    dg_err me = {0};
    const double need = dg_dp_memory(env, &q, &me);
    if (need < 0) return dg_err_set(e, me.status, "%s", me.msg);
    if ((q.max_bytes > 0 && need > q.max_bytes) || dg_mem_check(need, &me) != DG_OK) {
        r->grid_route[k] = -2;
        return DG_OK;
    }
    const dg_status st = dg_dp_best_response(env, &q, pol, params, k, state, aux, B, cost, e);
    if (st != DG_OK) return st;
    r->grid_route[k] = 1;
    const double sign = k == 0 ? -1 : 1;  /* the pursuer frozen: the evader's best is the largest */
    for (int b = 0; b < B; b++)
        if (!isnan(cost[b]) && sign * cost[b] < sign * br[b]) {
            br[b] = cost[b];
            route[b] = DG_CERTIFY_ROUTE_GRID;
            r->grid_best[k]++;
        }
    return DG_OK;
}

/* Per start, what dg_certify_discrete computes: the starts, the value (V+ then V-), the cost against
 * the game (cost), the cost with an adversarial input held (held), the plan's (one player) or the grid
 * route's scratch (tmp), each frozen player's best response, its route and exploit. */
typedef struct starts {
    int      B;
    dg_real *state, *aux;
    double  *value, *cost, *held, *tmp;
    double  *br[2], *bx[2];
    int     *route[2];
} starts;

static int starts_alloc(starts *w, int B) {
    memset(w, 0, sizeof *w);
    w->B = B;
    w->value = malloc(sizeof(double) * 2 * (size_t)B);
    w->cost = malloc(sizeof(double) * 3 * (size_t)B);
    int ok = w->value && w->cost;
    if (ok) w->held = w->cost + B, w->tmp = w->cost + 2 * (size_t)B;
    for (int k = 0; k < 2; k++) {
        ok &= (w->br[k] = malloc(sizeof(double) * (size_t)B)) != NULL;
        ok &= (w->bx[k] = malloc(sizeof(double) * (size_t)B)) != NULL;
        ok &= (w->route[k] = malloc(sizeof(int) * (size_t)B)) != NULL;
    }
    return ok;
}

static void starts_free(starts *w) {
    free(w->state);
    free(w->aux);
    free(w->value);
    free(w->cost);
    for (int k = 0; k < 2; k++) {
        free(w->br[k]);
        free(w->bx[k]);
        free(w->route[k]);
    }
}

/* Each start's numbers into rows (any array may be NULL) and their means into r: the gap against
 * [V-, V+], the exploits (br_cost[0] - V+, V- - br_cost[1]), weak best responses, the routes. */
static void tally(const dg_env *env, const starts *w, int bounds, dg_certify_discrete_rows *rows,
                  dg_certify_discrete_result *r) {
    const int B = w->B, S = env->state_dim, two = r->players == 2, nv = r->nvalues;
    r->policy_cost_held = r->adversarial ? 0 : NAN;
    r->plan_cost = bounds && !two ? 0 : NAN;
    for (int k = 0; k < 2; k++) r->br_cost[k] = r->exploit[k] = bounds && two ? 0 : NAN;
    for (int b = 0; b < B; b++) {
        const double vu = w->value[b], vl = nv == 2 ? w->value[B + b] : vu, c = w->cost[b];
        const double gap = dg_certify_interval_gap(c, vl, vu);
        r->value_upper += vu / B;
        r->value_lower += vl / B;
        r->policy_cost += c / B;
        r->gap += gap / B;
        r->abs_gap += fabs(gap) / B;
        if (r->adversarial) r->policy_cost_held += w->held[b] / B;
        if (bounds && !two) r->plan_cost += w->tmp[b] / B;
        for (int k = 0; k < 2 && bounds && two; k++) {
            w->bx[k][b] = k == 0 ? w->br[0][b] - vu : vl - w->br[1][b];
            r->br_cost[k] += w->br[k][b] / B;
            r->exploit[k] += w->bx[k][b] / B;
            const double err = r->ref.change[k] * fabs(k == 0 ? vu : vl);  /* the grid's last change */
            r->weak[k] += w->bx[k][b] < -err;
            if (w->route[k][b] >= 0 && w->route[k][b] < 3) r->route_starts[k][w->route[k][b]]++;
        }
        if (rows->state)
            for (int j = 0; j < S; j++) rows->state[(size_t)b * S + j] = w->state[(size_t)b * S + j];
        if (rows->value_upper) rows->value_upper[b] = vu;
        if (rows->value_lower) rows->value_lower[b] = vl;
        if (rows->policy_cost) rows->policy_cost[b] = c;
        if (rows->policy_cost_held) rows->policy_cost_held[b] = r->adversarial ? w->held[b] : NAN;
        if (rows->gap) rows->gap[b] = gap;
        if (rows->abs_gap) rows->abs_gap[b] = fabs(gap);
        if (rows->plan_cost) rows->plan_cost[b] = bounds && !two ? w->tmp[b] : NAN;
        for (int k = 0; k < 2; k++) {
            if (rows->br_cost[k]) rows->br_cost[k][b] = bounds && two ? w->br[k][b] : NAN;
            if (rows->br_route[k]) rows->br_route[k][b] = bounds && two ? w->route[k][b] : -1;
            if (rows->exploit[k]) rows->exploit[k][b] = bounds && two ? w->bx[k][b] : NAN;
        }
    }
    r->outside = r->ref.outside[r->ref.ngrids - 1];
}

dg_status dg_certify_discrete(const dg_env *env, const dg_policy *pol, dg_params *params,
                              const dg_certify_discrete_opts *o, dg_certify_discrete_rows *rows,
                              dg_certify_discrete_result *r, dg_err *e) {
    if (!env || !pol || !params || !o || !r || o->episodes < 1 || !(o->refine.tol > 0))
        return dg_err_set(e, DG_ERR_ARG, "certify: bad arguments (episodes >= 1, tol > 0)");
    dg_status st = dg_dp_check(env, e);
    if (st != DG_OK) return st;
    const int B = o->episodes, two = env->nplayers == 2, nv = dg_dp_nvalues(env);
    if (pol->n != (two ? 2 : 1))
        return dg_err_set(e, DG_ERR_ARG, "certify: the policy has %d players, %s %d", pol->n, env->game->name,
                          two ? 2 : 1);
    memset(r, 0, sizeof *r);
    r->episodes = B;
    r->players = two ? 2 : 1;
    r->nvalues = nv;
    r->ninputs = dg_env_free_inputs(env, r->inputs, 2);
    r->adversarial = nv == 2 && !two;
    dg_certify_discrete_rows none = {0};
    if (!rows) rows = &none;
    starts w;
    dg_dp_value kept = {0};
    if (!starts_alloc(&w, B)) {
        st = dg_err_set(e, DG_ERR_NOMEM, "certify: out of memory for %d starts", B);
        goto out;
    }
    if ((st = dg_run_init_draw(env, o->seed, B, &w.state, &w.aux, e)) != DG_OK) goto out;
    fix_aux(env, w.aux, B);

    /* the value: the refinement study at the starts */
    dg_dp_opts dp = o->dp;
    dp.aux = env->aux_dim ? w.aux : NULL;
    if ((st = dg_certify_discrete_box(env, &dp, e)) != DG_OK) goto out;
    for (int k = 0; k < dg_dp_dims(env); k++)
        if (!dp.nodes[k]) dp.nodes[k] = dg_certify_discrete_nodes(dg_dp_dims(env));
    dg_dp_refine_opts ro = o->refine;
    ro.keep = r->adversarial ? &kept : NULL;  /* the grid's answer is played on the finest grid */
    const double t0 = dg_clock_s();
    if ((st = dg_dp_refine(env, &dp, &ro, w.state, B, &r->ref, w.value, NULL, e)) != DG_OK) goto out;
    r->seconds_dp = dg_clock_s() - t0;

    /* the policy's loss (and the bounds) in the learner's game; an adversarial input held there */
    dg_certify_plan_opts plan = o->plan;
    const int bounds = o->bounds && !r->adversarial;
    if (!bounds) {  /* the learned player's own loss alone: no plan, no best response */
        plan.restarts = 1;
        plan.iters = 0;
        plan.bptt_epochs = 0;
    }
    dg_certify_bound_rows brow = {.policy_cost = w.held, .plan_cost = w.tmp, .br_cost = {w.br[0], w.br[1]},
                                  .br_route = {w.route[0], w.route[1]}};
    const double t1 = dg_clock_s();
    if ((st = dg_certify_bounds(env, pol, params, w.state, w.aux, B, &plan, o->train, &brow, &r->bound_stats, e)) !=
        DG_OK)
        goto out;
    r->seconds_bounds = dg_clock_s() - t1;
    r->bounds = bounds;
    if (bounds && two && o->grid_br) {  /* the grid route of each best response, on the finest grid */
        const double tg = dg_clock_s();
        for (int k = 0; k < DG_DP_MAX_DIMS; k++) dp.nodes[k] = r->ref.nodes[r->ref.ngrids - 1][k];
        for (int k = 0; k < 2; k++)
            if ((st = grid_route(env, &dp, pol, params, k, w.state, w.aux, B, w.br[k], w.route[k], w.tmp, r, e)) !=
                DG_OK)
                goto out;
        r->seconds_grid = dg_clock_s() - tg;
    }
    if (r->adversarial) {
        const double t2 = dg_clock_s();
        if ((st = dg_dp_play(env, &kept, &dp, pol, params, w.state, w.aux, B, w.cost, e)) != DG_OK) goto out;
        r->seconds_play = dg_clock_s() - t2;
    } else
        memcpy(w.cost, w.held, sizeof(double) * (size_t)B);
    tally(env, &w, bounds, rows, r);
out:
    dg_dp_value_free(&kept);
    starts_free(&w);
    return st;
}
