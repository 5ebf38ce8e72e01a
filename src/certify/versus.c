/* Learned players against the HJI equilibrium feedback, in the learning game's own dynamics, through
 * the state mapping the HJI game declares (dg_hji_link). In the solver layer: it joins envs, policy
 * and hji (hji itself never uses the trainer). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/certify.h"
#include "difgames/physics.h"  /* dg_unit_disk: duel_simple's bound on an action, for the frozen player */
#include "difgames/run.h"
#include "difgames/trainer.h"

static const char *const PAIRINGS[DG_HJI_PAIRINGS] = {"learned vs learned", "learned pursuer vs HJBI evader",
                                                      "HJBI pursuer vs learned evader", "HJBI vs HJBI"};

const char *dg_hji_pairing_name(int k) { return k >= 0 && k < DG_HJI_PAIRINGS ? PAIRINGS[k] : NULL; }

dg_status dg_hji_link_check(const dg_hji_problem *p, const dg_env *env, dg_err *e) {
    if (dg_certify_noise_check(p, e)) return DG_ERR_ARG;
    const dg_hji_link *l = p ? p->link : NULL;
    if (!l) {
        char list[128] = "";
        for (int i = 0; dg_hji_problem_name(i); i++)  /* the HJI games a learning game maps onto */
            if (dg_hji_game_link(dg_hji_problem_name(i)))
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? " or " : "",
                         dg_hji_problem_name(i));
        return dg_err_set(e, DG_ERR_ARG, "no learning game maps onto %s's state: needs %s", p ? p->name : "?", list);
    }
    if (!env || env->nplayers != 2 || env->nplayers != l->nplayers || env->state_dim != l->state_dim ||
        strcmp(env->game->name, l->env_game) != 0 || strcmp(dg_env_source(env), "builtin") != 0)
        return dg_err_set(e, DG_ERR_ARG, "needs %s", l->need);
    return DG_OK;
}

/* The HJI state of row s of the learning game's state (float32 differences, as the game's). */
static void map_state(const dg_hji_link *l, int nx, const dg_real *s, double *x) {
    for (int k = 0; k < nx; k++) x[k] = s[l->plus[k]] - s[l->minus[k]];
}

/* The capture distance: |x| over the link's axes, from the state in double precision. */
static double capture_dist(const dg_hji_link *l, int nx, const dg_real *s) {
    double a = 0, b = 0;
    int m = 0;
    for (int k = 0; k < nx; k++)
        if (l->capture_axes >> k & 1u) {
            const double dk = (double)s[l->plus[k]] - s[l->minus[k]];
            if (m++ == 0) a = dk;
            else b = hypot(b, dk);
        }
    return m == 1 ? fabs(a) : hypot(a, b);
}

/* Whether the state s is in p's moving target at the game's time t (past t_end, at t_end: the value
 * read there, time-to-go 0, was solved against it), l < 0 as capture_dist < radius, the HJI state
 * from s in double precision as capture_dist's; into *hit. DG_OK or the target's error. */
static dg_status capture_moving(const dg_hji_problem *p, double t, const dg_real *s, int *hit, dg_err *e) {
    const dg_hji_link *l = p->link;
    double x[DG_HJI_MAX_DIMS], lv = 0;
    for (int k = 0; k < p->grid.ndim; k++) x[k] = (double)s[l->plus[k]] - s[l->minus[k]];
    const dg_status rc = dg_hji_problem_sets_at(p, fmin(t, p->t_end), 1, x, &lv, NULL, e);
    *hit = rc == DG_OK && lv < 0;
    return rc;
}

dg_status dg_hji_versus(const dg_hji_problem *p, const dg_hji_source *V, double layer, const dg_env *env,
                        const dg_policy *pol, dg_params *params, int B, uint64_t seed, dg_hji_versus_result *r,
                        dg_err *e) {
    dg_status rc = dg_hji_link_check(p, env, e);
    if (rc != DG_OK) return rc;
    if (!V || !V->eval || !pol || !params || !r || B < 1 || !(layer >= 0 && layer <= 1))
        return dg_err_set(e, DG_ERR_ARG, "hji versus: bad arguments");
    if (pol->plan_steps)  /* a plan is one action sequence, not a feedback: nothing to play from new states */
        return dg_err_set(e, DG_ERR_ARG, "hji versus: needs feedback players (train.mode: policy), not open-loop plans");
    const dg_hji_slices *VS = V->grid ? &V->slices : NULL;  /* a grid's slices: their times must increase */
    for (int i = 1; VS && i < VS->nt; i++)
        if (!(VS->t[i] > VS->t[i - 1])) return dg_err_set(e, DG_ERR_ARG, "hji versus: the value's times must increase");
    const dg_hji_link *l = p->link;
    const int S = env->state_dim, nx = p->grid.ndim, A1 = env->act_dim, A = env->act_dim + env->act2_dim;
    const double radius = dg_hji_problem_param(p, l->capture_param);
    const int moving = dg_hji_problem_target_moves(p);   /* capture against the target of each time */
    int hit = 0;
    dg_real *st0 = malloc((size_t)B * S * sizeof(dg_real)), *st = malloc((size_t)B * S * sizeof(dg_real));
    unsigned char *done = malloc((size_t)B);
    /* the HJI states of a step's rows, their inputs (each player's input of its own value) and V */
    double *xs = malloc((size_t)B * nx * sizeof *xs), *us = malloc((size_t)B * (p->game.u.dim + 1) * sizeof *us);
    double *ds = malloc((size_t)B * (p->game.d.dim + 1) * sizeof *ds), *vs = malloc((size_t)B * sizeof *vs);
    double *taus = malloc((size_t)B * sizeof *taus);
    /* one step of both policies on B rows at a time (the arena is reset every step) */
    const dg_mlp *m0 = &pol->mlp[0];
    dg_ctx *ctx = dg_ctx_create((size_t)(1.25 * dg_rollout_memory(env, m0->sizes + 1, m0->nlayers - 1, B, 1, 0)) +
                                ((size_t)1 << 20));
    if (!st0 || !st || !done || !ctx || !xs || !us || !ds || !vs || !taus) {
        rc = dg_err_set(e, DG_ERR_NOMEM, "hji versus: out of memory");
        goto out;
    }
    dg_rng rng;
    dg_rng_seed(&rng, seed);
    if ((rc = env->game->reset(env, &rng, B, st0, NULL, e)) != DG_OK) goto out;
    int inside = 0;  /* starts from which the value says the pursuer can force capture by t_end */
    for (int i = 0; i < B; i++) {
        map_state(l, nx, st0 + (size_t)S * i, xs + (size_t)nx * i);
        taus[i] = V->horizon;
    }
    if ((rc = dg_hji_source_eval(V, B, xs, taus, vs, NULL, e)) != DG_OK) goto out;
    for (int i = 0; i < B; i++) inside += vs[i] <= 0.0;
    *r = (dg_hji_versus_result){.episodes = B, .inside = (double)inside / B};
    for (int k = 0; k < DG_HJI_PAIRINGS; k++) {
        const int hji_p = k >= 2, hji_e = k == 1 || k == 3;
        memcpy(st, st0, (size_t)B * S * sizeof(dg_real));
        memset(done, 0, (size_t)B);
        double tsum = 0;
        int captured = 0;
        for (int t = 1; t <= env->horizon; t++) {
            const double tt = (t - 1) * env->dt;  /* the inputs act over [(t-1) dt, t dt] */
            dg_ctx_reset(ctx);
            dg_tensor *state = dg_from(ctx, 2, (int[]){B, S}, st);
            dg_tensor *a = dg_mlp_forward(ctx, &pol->mlp[0], params, env->game->observe(ctx, env, state, NULL));
            dg_tensor *b = dg_mlp_forward(ctx, &pol->mlp[1], params, env->game->observe2(ctx, env, state, NULL));
            dg_tensor *act = dg_new(ctx, 2, (int[]){B, A});
            if (!a || !b || !act) {
                rc = dg_err_set(e, DG_ERR_NOMEM, "hji versus: %s", dg_ctx_error(ctx));
                goto out;
            }
            for (int i = 0; (hji_p || hji_e) && i < B; i++) map_state(l, nx, st + (size_t)S * i, xs + (size_t)nx * i);
            if ((hji_p || hji_e) && (rc = dg_hji_feedback_batch(p, V, NULL, tt, layer, B, xs, us, ds, NULL, e)) != DG_OK)
                goto out;
            for (int i = 0; i < B; i++) {
                const double *u = us + (size_t)p->game.u.dim * i, *d = ds + (size_t)p->game.d.dim * i;
                dg_real *ac = act->data + (size_t)A * i;
                for (int j = 0; j < A1; j++) ac[j] = a->data[(size_t)A1 * i + j];
                for (int j = 0; j < env->act2_dim; j++) ac[A1 + j] = b->data[(size_t)env->act2_dim * i + j];
                for (int j = 0; j < p->game.u.dim && hji_p; j++) ac[l->u_act[j]] = (dg_real)u[j];
                for (int j = 0; j < p->game.d.dim && hji_e; j++) ac[l->d_act[j]] = (dg_real)d[j];
            }
            dg_tensor *next = env->game->step(ctx, env, state, NULL, act);
            if (!next) {
                rc = dg_err_set(e, DG_ERR_NOMEM, "hji versus: %s", dg_ctx_error(ctx));
                goto out;
            }
            memcpy(st, next->data, (size_t)B * S * sizeof(dg_real));
            for (int i = 0; i < B; i++) {
                if (done[i]) continue;
                if (moving && (rc = capture_moving(p, t * env->dt, st + (size_t)S * i, &hit, e)) != DG_OK) goto out;
                if (moving ? hit : capture_dist(l, nx, st + (size_t)S * i) < radius) {
                    done[i] = 1;
                    captured++;
                    tsum += t * env->dt;
                }
            }
        }
        r->capture_rate[k] = (double)captured / B;
        r->capture_time[k] = captured ? tsum / captured : NAN;
    }
out:
    dg_ctx_free(ctx);
    free(st0);
    free(st);
    free(done);
    free(xs), free(us), free(ds), free(vs), free(taus);
    return rc;
}

/* The learning config's value of env.<name> (the game's default when the config leaves it out), or NaN. */
static double env_constant(const dg_env *env, dg_cfg *cfg, const char *name) {
    char key[96];
    snprintf(key, sizeof key, "env.%s", name);
    double v = NAN;
    if (dg_cfg_has(cfg, key)) return dg_cfg_get(cfg, key, DG_CFG_F64, &v, NULL) == DG_OK ? v : NAN;
    dg_key keys[64];
    const int n = dg_game_keys(env->game, keys, 64);
    for (int i = 0; i < n && i < 64; i++)
        if (!strcmp(keys[i].name, key)) return keys[i].def;
    return NAN;
}

dg_status dg_certify_check(const dg_hji_problem *p, const dg_env *env, dg_cfg *cfg, dg_err *e) {
    dg_status rc = dg_hji_link_check(p, env, e);
    if (rc != DG_OK) return rc;
    if (!cfg) return dg_err_set(e, DG_ERR_ARG, "certify: no learning config");
    if (p->payoff != DG_HJI_PAYOFF_TIME)
        return dg_err_set(e, DG_ERR_ARG, "certify: %s's value must be the time to capture (payoff: time), the "
                          "payoff of the learned game", p->name);
    const dg_hji_link *l = p->link;
    for (int k = 0; l->same && l->same[k]; k++) {
        const double want = dg_hji_problem_param(p, l->same[k]), got = env_constant(env, cfg, l->same[k]);
        if (!(fabs(got - want) <= 1e-6 * fmax(1.0, fabs(want))))
            return dg_err_set(e, DG_ERR_ARG, "certify: env.%s is %g in %s, but %s is %g in the HJI game %s: they "
                              "must be one game", l->same[k], got, dg_cfg_path(cfg), l->same[k], want, p->name);
    }
    return DG_OK;
}

dg_status dg_certify(const dg_hji_problem *p, const dg_hji_slices *V, const dg_env *env, dg_cfg *cfg,
                     const dg_policy *pol, dg_params *params, const dg_certify_opts *o, dg_certify_result *r,
                     double *value, double *cost, dg_err *e) {
    dg_status rc = dg_certify_check(p, env, cfg, e);
    if (rc != DG_OK) return rc;
    if (!V || V->nt < 1 || !V->t || !V->v || !pol || !params || !o || !r || o->episodes < 1 ||
        o->episodes > DG_INIT_MAX_ROWS)
        return dg_err_set(e, DG_ERR_ARG, "certify: bad arguments");
    const dg_hji_link *l = p->link;
    const int B = o->episodes, S = env->state_dim, H = env->horizon, nx = p->grid.ndim;
    const double T = V->t[V->nt - 1], radius = dg_hji_problem_param(p, l->capture_param);
    dg_real *state = NULL, *aux = NULL, *traj = malloc((size_t)(H + 1) * B * S * sizeof(dg_real));
    dg_ctx *ctx = NULL;
    if (!traj) {
        rc = dg_err_set(e, DG_ERR_NOMEM, "certify: out of memory for %d episodes of %d steps", B, H);
        goto out;
    }
    if ((rc = dg_run_init_draw(env, o->seed, B, &state, &aux, e)) != DG_OK) goto out;
    for (int i = 0; i < B; i++) {  /* every start on the grid: the value is not extrapolated */
        double x[DG_HJI_MAX_DIMS];
        map_state(l, nx, state + (size_t)S * i, x);
        for (int k = 0; k < nx; k++)
            if (p->grid.bc[k] != DG_HJI_BC_PERIODIC && !(x[k] >= p->grid.lo[k] && x[k] <= p->grid.hi[k])) {
                rc = dg_err_set(e, DG_ERR_ARG, "certify: initial state %d maps to x%d = %g, off %s's grid [%g, %g] "
                                "(widen grid.min/grid.max)", i, k, x[k], p->name, p->grid.lo[k], p->grid.hi[k]);
                goto out;
            }
    }
    dg_tensor *loss;
    if (!(ctx = dg_run_episode(env, pol, params, state, aux, B, 0, NULL, traj, &loss, e))) {
        rc = e->status;
        goto out;
    }
    *r = (dg_certify_result){.episodes = B, .step_bias = env->dt};
    for (int i = 0; i < B; i++) {
        double x[DG_HJI_MAX_DIMS];
        map_state(l, nx, state + (size_t)S * i, x);
        const double v = dg_hji_slices_interp(&p->grid, V, T, x, NULL);
        double c = H * (double)env->dt;  /* not captured: the horizon */
        for (int t = 1; t <= H; t++)
            if (capture_dist(l, nx, traj + ((size_t)t * B + i) * S) < radius) {
                c = t * (double)env->dt;
                r->captured++;
                break;
            }
        if (value) value[i] = v;
        if (cost) cost[i] = c;
        r->value_mean += v / B;
        r->policy_cost_mean += c / B;
        r->gap += (c - v) / fabs(v) / B;
        r->gap_abs += fabs(c - v) / fabs(v) / B;
    }
out:
    dg_ctx_free(ctx);
    free(state);
    free(aux);
    free(traj);
    return rc;
}

/* ------------------------------------------------------- games of degree: costs */

dg_status dg_certify_cost_check(const dg_hji_problem *p, const dg_env *env, dg_err *e) {
    if (!p || !env) return dg_err_set(e, DG_ERR_ARG, "certify: needs a problem and a game");
    if (dg_certify_noise_check(p, e)) return DG_ERR_ARG;
    if (!p->model || p->payoff != DG_HJI_PAYOFF_COST || strcmp(dg_env_source(env), "model") != 0)
        return dg_err_set(e, DG_ERR_ARG, "certify: the learning game's own cost on the grid needs a model file with "
                          "payoff: cost (game: model; docs/certify.md)");
    if (env->state_dim != p->grid.ndim)
        return dg_err_set(e, DG_ERR_ARG, "certify: the game has %d state variables, the grid %d axes",
                          env->state_dim, p->grid.ndim);
    const double T = env->horizon * (double)env->dt;
    if (!(fabs(p->t_end - T) <= 1e-6 * T))
        return dg_err_set(e, DG_ERR_ARG, "certify: t_end is %g but an episode lasts env.horizon x env.dt = %g: the "
                          "value must cover the episode", p->t_end, T);
    double aux[16];
    if (dg_hji_problem_episode(p, aux) != env->aux_dim)
        return dg_err_set(e, DG_ERR_ARG, "certify: the grid and the game have other episode variables");
    return DG_OK;
}

dg_status dg_certify_cost(const dg_hji_problem *p, const dg_hji_slices *V, const dg_env *env, const dg_policy *pol,
                          dg_params *params, const dg_certify_opts *o, dg_certify_result *r, double *value,
                          double *cost, dg_err *e) {
    dg_status rc = dg_certify_cost_check(p, env, e);
    if (rc != DG_OK) return rc;
    if (!V || V->nt < 1 || !V->t || !V->v || !pol || !params || !o || !r || o->episodes < 1 ||
        o->episodes > DG_INIT_MAX_ROWS || pol->plan_steps)
        return dg_err_set(e, DG_ERR_ARG, "certify: bad arguments");
    const int B = o->episodes, S = env->state_dim, X = env->aux_dim, nx = p->grid.ndim, H = env->horizon;
    const double T = V->t[V->nt - 1];
    dg_real *state = NULL, *aux = NULL, *traj = malloc((size_t)(H + 1) * S * sizeof(dg_real));
    if (!traj) {
        rc = dg_err_set(e, DG_ERR_NOMEM, "certify: out of memory for an episode of %d steps", H);
        goto out;
    }
    if ((rc = dg_run_init_draw(env, o->seed, B, &state, &aux, e)) != DG_OK) goto out;
    double fixed[16];
    dg_hji_problem_episode(p, fixed);
    *r = (dg_certify_result){.episodes = B};
    for (int i = 0; i < B; i++) {
        double x[DG_HJI_MAX_DIMS], xh[DG_HJI_MAX_DIMS];
        for (int j = 0; j < X; j++) aux[(size_t)i * X + j] = (dg_real)fixed[j];   /* the grid's episode */
        for (int k = 0; k < nx; k++) {
            x[k] = state[(size_t)S * i + k];
            if (p->grid.bc[k] != DG_HJI_BC_PERIODIC && !(x[k] >= p->grid.lo[k] && x[k] <= p->grid.hi[k])) {
                rc = dg_err_set(e, DG_ERR_ARG, "certify: initial state %d has x%d = %g, off the grid [%g, %g] "
                                "(widen the model's state box or grid.min/grid.max)", i, k, x[k], p->grid.lo[k],
                                p->grid.hi[k]);
                goto out;
            }
        }
        /* the row's own episode loss: a batch of one, the loss the gradient solver minimised */
        dg_tensor *loss;
        dg_ctx *ctx = dg_run_episode(env, pol, params, state + (size_t)S * i, X ? aux + (size_t)X * i : NULL, 1, 0,
                                     NULL, traj, &loss, e);
        if (!ctx) {
            rc = e->status;
            goto out;
        }
        const double c = loss->data[0];
        dg_ctx_free(ctx);
        const double v = dg_hji_slices_interp(&p->grid, V, T, x, NULL);
        /* the loss adds each step's cost at its end (right endpoints): the trapezoid rule, what the
         * continuous value integrates, adds dt/2 (l(x_0) - l(x_H)), l the state's running cost */
        for (int k = 0; k < nx; k++) xh[k] = traj[(size_t)H * S + k];
        const dg_hji_payoff *pf = &p->game.payoff;
        const double bias = pf->cost ? 0.5 * env->dt * (pf->cost(p->game.user, x) - pf->cost(p->game.user, xh)) : 0;
        if (value) value[i] = v;
        if (cost) cost[i] = c;
        r->value_mean += v / B;
        r->policy_cost_mean += c / B;
        r->step_bias += bias / B;
        r->gap += (c - v) / fabs(v) / B;
        r->gap_abs += fabs(c - v) / fabs(v) / B;
        r->gap_trapezoid += (c + bias - v) / fabs(v) / B;
    }
out:
    free(state);
    free(aux);
    free(traj);
    return rc;
}

/* ------------------------------------------------------------ exploitability */
/* One learned player of duel_simple frozen: its action tabulated over a 4-D grid of (its own position,
 * x = evader - pursuer), and the other player's best response, the one-sided time to capture W on that
 * grid. The frozen pursuer: z = (p, x), p' = v_p a(z), x' = v_e d - v_p a(z) (d: the evader, MAX).
 * The frozen evader: z = (e, x), e' = v_e b(z), x' = v_e b(z) - v_p u (u: the pursuer, MIN). */
typedef struct frozen {
    const dg_hji_grid *g;
    const dg_real *act;       /* (nodes, 2): the frozen player's action on the unit disk at each node */
    int evader;             /* 1: the evader is frozen */
    double vp, ve;          /* duel_simple's speeds, chase's accelerations */
    int chase;              /* chase4d: z = (x, v) relative, v' = -c v - ap a + ae b */
    double c;               /* chase4d's damping rate */
} frozen;

static void dyn_frozen(void *user, const double *z, double *f, double *G, double *D) {
    const frozen *fr = user;
    int64_t j = 0;
    for (int k = 0; k < 4; k++) {  /* the solver asks at nodes: the nearest one */
        long i = lround((z[k] - fr->g->lo[k]) / fr->g->dx[k]);
        i = i < 0 ? 0 : i >= fr->g->n[k] ? fr->g->n[k] - 1 : i;
        j += (int64_t)i * fr->g->stride[k];
    }
    const dg_real *a = fr->act + 2 * j;
    if (fr->chase) {
        f[0] = z[2], f[1] = z[3];
        f[2] = -fr->c * z[2] + (fr->evader ? fr->ve * a[0] : -fr->vp * a[0]);
        f[3] = -fr->c * z[3] + (fr->evader ? fr->ve * a[1] : -fr->vp * a[1]);
        if (fr->evader) G[2 * 2 + 0] = -fr->vp, G[3 * 2 + 1] = -fr->vp;
        else D[2 * 2 + 0] = fr->ve, D[3 * 2 + 1] = fr->ve;
        return;
    }
    if (!fr->evader) {
        f[0] = fr->vp * a[0], f[1] = fr->vp * a[1], f[2] = -fr->vp * a[0], f[3] = -fr->vp * a[1];
        D[2 * 2 + 0] = fr->ve, D[3 * 2 + 1] = fr->ve;
    } else {
        f[0] = fr->ve * a[0], f[1] = fr->ve * a[1], f[2] = fr->ve * a[0], f[3] = fr->ve * a[1];
        G[2 * 2 + 0] = -fr->vp, G[3 * 2 + 1] = -fr->vp;
    }
}

static dg_status relative_needed(dg_err *e) {
    return dg_err_set(e, DG_ERR_ARG, "certify: chase's exact exploitability needs players that see the relative "
                      "state only (env.observe: relative): a network of all 8 numbers needs an 8-D grid");
}

dg_status dg_certify_tabulate(const dg_env *env, const dg_policy *pol, dg_params *params, int evader,
                              const dg_hji_grid *g, dg_real *act, dg_err *e) {
    enum { CHUNK = 16384 };
    /* the built-ins by these names (a model file may call its game so) */
    const int builtin = env && strcmp(dg_env_source(env), "builtin") == 0;
    const int chase = builtin && strcmp(env->game->name, "chase") == 0;
    if (!builtin || (!chase && strcmp(env->game->name, "duel_simple") != 0) || env->nplayers != 2 || !pol || !params ||
        !g || g->ndim != 4 || !act || (evader != 0 && evader != 1))
        return dg_err_set(e, DG_ERR_ARG, "certify: a duel_simple or chase pair and a 4-D grid are needed to tabulate "
                          "a player");
    if (chase && (evader ? env->obs2_dim : env->obs_dim) != 4)
        return relative_needed(e);
    const int S = env->state_dim;
    const dg_mlp *m = &pol->mlp[evader];
    dg_ctx *ctx = dg_ctx_create((size_t)(1.25 * dg_rollout_memory(env, m->sizes + 1, m->nlayers - 1, CHUNK, 1, 0)) +
                                ((size_t)1 << 20));
    dg_real *s = malloc((size_t)CHUNK * S * sizeof *s);
    dg_status rc = DG_OK;
    if (!ctx || !s) {
        rc = dg_err_set(e, DG_ERR_NOMEM, "certify: out of memory to tabulate a player");
        goto out;
    }
    for (int64_t j0 = 0; j0 < g->nodes; j0 += CHUNK) {
        const int n = (int)(g->nodes - j0 < CHUNK ? g->nodes - j0 : CHUNK);
        for (int i = 0; i < n; i++) {
            double z[DG_HJI_MAX_DIMS];
            dg_hji_grid_point(g, j0 + i, z);
            if (chase) {  /* the pursuer at rest at the origin, the evader at z (a relative view sees only z) */
                dg_real *r = s + (size_t)S * i;
                for (int k = 0; k < 4; k++) r[k] = 0.0f, r[4 + k] = (dg_real)z[k];
                continue;
            }
            dg_real *r = s + 4 * i;  /* duel_simple: (pursuer, evader); z: (the frozen one, evader - pursuer) */
            const double own[2] = {z[0], z[1]}, other[2] = {evader ? z[0] - z[2] : z[0] + z[2],
                                                            evader ? z[1] - z[3] : z[1] + z[3]};
            r[evader ? 2 : 0] = (dg_real)own[0], r[evader ? 3 : 1] = (dg_real)own[1];
            r[evader ? 0 : 2] = (dg_real)other[0], r[evader ? 1 : 3] = (dg_real)other[1];
        }
        dg_ctx_reset(ctx);
        dg_tensor *state = dg_from(ctx, 2, (int[]){n, S}, s);
        dg_tensor *obs = state ? (evader ? env->game->observe2 : env->game->observe)(ctx, env, state, NULL) : NULL;
        dg_tensor *a = obs ? dg_unit_disk(ctx, dg_mlp_forward(ctx, m, params, obs)) : NULL;
        if (!a) {
            rc = dg_err_set(e, DG_ERR_NOMEM, "certify: %s", dg_ctx_error(ctx));
            goto out;
        }
        memcpy(act + 2 * j0, a->data, (size_t)n * 2 * sizeof(dg_real));
    }
out:
    dg_ctx_free(ctx);
    free(s);
    return rc;
}

/* 1 for chase against chase4d (the frozen player's grid is p's own), 0 for duel_simple against pursuit2d */
static int exploit_chase(const dg_hji_problem *p) { return p->link && strcmp(p->link->env_game, "chase") == 0; }

static dg_status exploit_check(const dg_hji_problem *p, dg_err *e) {
    if (!p || !p->link || p->payoff != DG_HJI_PAYOFF_TIME ||
        !((strcmp(p->link->env_game, "duel_simple") == 0 && p->grid.ndim == 2) ||
          (exploit_chase(p) && p->grid.ndim == 4)))
        return dg_err_set(e, DG_ERR_ARG, "certify: exploitability is exact for duel_simple against pursuit2d and "
                          "chase (env.observe: relative) against chase4d, payoff: time: the frozen player's network "
                          "needs a grid over everything it sees");
    return DG_OK;
}

dg_status dg_certify_exploit_check(const dg_hji_problem *p, const dg_env *env, dg_err *e) {
    dg_status rc = dg_hji_link_check(p, env, e);
    if (rc == DG_OK) rc = exploit_check(p, e);
    if (rc == DG_OK && exploit_chase(p) && (env->obs_dim != 4 || env->obs2_dim != 4)) rc = relative_needed(e);
    return rc;
}

dg_status dg_certify_exploit_grid(const dg_hji_problem *p, const dg_certify_exploit_opts *o, dg_hji_grid *g,
                                  dg_err *e) {
    dg_status rc = exploit_check(p, e);
    if (rc != DG_OK) return rc;
    if (g && exploit_chase(p)) {  /* a relative view: the frozen network on chase4d's own grid */
        *g = p->grid;
        return DG_OK;
    }
    if (!o || o->n_own < 2 || !(o->own_half > 0) || !g)
        return dg_err_set(e, DG_ERR_ARG, "certify: bad exploitability options");
    const int n[4] = {o->n_own, o->n_own, p->grid.n[0], p->grid.n[1]};  /* x: V's own nodes */
    const double lo[4] = {-o->own_half, -o->own_half, p->grid.lo[0], p->grid.lo[1]};
    const double hi[4] = {o->own_half, o->own_half, p->grid.hi[0], p->grid.hi[1]};
    return dg_hji_grid_init(g, 4, lo, hi, n, NULL, e);
}

dg_status dg_certify_best_response(const dg_hji_problem *p, const dg_hji_grid *g, int evader, const dg_real *act,
                                   int B, const dg_real *state0, double *w, dg_hji_stats *stats, dg_err *e) {
    dg_status rc = exploit_check(p, e);
    if (rc != DG_OK) return rc;
    if (!g || g->ndim != 4 || !act || B < 0 || (B > 0 && (!state0 || !w)) || (evader != 0 && evader != 1))
        return dg_err_set(e, DG_ERR_ARG, "certify: bad best-response arguments");
    const int chase = exploit_chase(p);
    if (chase && (g->nodes != p->grid.nodes || !p->initial || !p->stop))
        return dg_err_set(e, DG_ERR_ARG, "certify: chase's best response is solved on chase4d's own grid");
    const double vp = dg_hji_problem_param(p, chase ? "accel_pursuer" : "speed_pursuer");
    const double ve = dg_hji_problem_param(p, chase ? "accel_evader" : "speed_evader");
    const double r = dg_hji_problem_param(p, "capture_radius");
    const int64_t N = g->nodes;
    double *v0 = malloc((size_t)N * sizeof *v0), *stop = malloc((size_t)N * sizeof *stop);
    double *out = malloc((size_t)N * sizeof *out);
    if (!v0 || !stop || !out) {
        rc = dg_err_set(e, DG_ERR_NOMEM, "certify: out of memory for a 4-D grid of %lld nodes", (long long)N);
        goto out;
    }
    if (chase) {  /* the same target, its held set and v0 as the value's own */
        memcpy(v0, p->initial, (size_t)N * sizeof *v0);
        memcpy(stop, p->stop, (size_t)N * sizeof *stop);
    } else {
        dg_hji_sdf_ball(g, (const double[]){0, 0, 0, 0}, r, 0xCu, stop);  /* |x| - r over axes 2, 3 */
        for (int64_t j = 0; j < N; j++) {  /* inside: the time to the rim at the closing speed, as pursuit2d's */
            v0[j] = stop[j] <= 0 ? stop[j] / (vp - ve) : 0;
            stop[j] = stop[j] <= 0 ? -1 : 1;
        }
    }
    frozen fr = {.g = g, .act = act, .evader = evader, .vp = vp, .ve = ve, .chase = chase,
                 .c = chase ? dg_hji_problem_param(p, "drag") : 0};  /* -ln(damping) / dt */
    dg_hji_game gm = {.nx = 4, .dyn = dyn_frozen, .user = &fr, .payoff = {.on = 1, .running = 1}};
    dg_hji_input *free_player = evader ? &gm.u : &gm.d;
    *free_player = (dg_hji_input){.dim = 2, .set = DG_HJI_SET_BALL, .role = evader ? DG_HJI_ROLE_MIN : DG_HJI_ROLE_MAX,
                                  .radius = 1};
    dg_hji_opts opts = p->opts;
    opts.stop = stop;
    opts.cap = p->t_end;
    opts.progress = NULL;
    const double twice = 2 * p->t_end;  /* stationary: march until max |phi_tau| < tol, as pursuit2d's */
    if ((rc = dg_hji_solve(g, &gm, &opts, v0, NULL, 1, opts.tol > 0 ? &twice : &p->t_end, out, stats, e)) != DG_OK)
        goto out;
    for (int64_t j = 0; j < N; j++) out[j] = out[j] > 0 ? out[j] : 0;
    for (int i = 0; i < B; i++) {
        const dg_real *s = state0 + (chase ? 8 : 4) * i;
        double z[4];
        if (chase)  /* chase4d's x = evader - pursuer (CHASE4D_LINK) */
            for (int k = 0; k < 4; k++) z[k] = (double)s[4 + k] - s[k];
        else
            z[0] = evader ? s[2] : s[0], z[1] = evader ? s[3] : s[1], z[2] = (double)s[2] - s[0],
            z[3] = (double)s[3] - s[1];
        w[i] = dg_hji_interp(g, out, z, NULL);
    }
out:
    free(v0);
    free(stop);
    free(out);
    return rc;
}

dg_status dg_certify_exploit(const dg_hji_problem *p, const dg_env *env, const dg_policy *pol, dg_params *params,
                             int evader, const dg_certify_exploit_opts *o, int B, const dg_real *state0,
                             double *w, dg_hji_stats *stats, dg_err *e) {
    dg_status rc = dg_hji_link_check(p, env, e);
    dg_hji_grid g;
    if (rc != DG_OK || (rc = dg_certify_exploit_grid(p, o, &g, e)) != DG_OK) return rc;
    dg_real *act = malloc((size_t)g.nodes * 2 * sizeof *act);
    if (!act) return dg_err_set(e, DG_ERR_NOMEM, "certify: out of memory for a 4-D grid of %lld nodes",
                                (long long)g.nodes);
    if ((rc = dg_certify_tabulate(env, pol, params, evader, &g, act, e)) == DG_OK)
        rc = dg_certify_best_response(p, &g, evader, act, B, state0, w, stats, e);
    free(act);
    return rc;
}

double dg_certify_exploit_memory(const dg_hji_problem *p, const dg_certify_exploit_opts *o) {
    dg_err e = {0};
    dg_hji_grid g;
    if (dg_certify_exploit_grid(p, o, &g, &e) != DG_OK) return 0;
    /* the solve (its dynamics tables judged full), the frozen actions, v0 and the stop set */
    return dg_hji_solve_memory(&g, NULL, &p->opts, 1) + (double)g.nodes * (2 * sizeof(dg_real) + 2 * sizeof(double));
}
