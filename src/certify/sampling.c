/* certify --sampling (difgames/certify_sampling.h): states drawn uniformly from a learned value's safe
 * set, rolled out in lockstep under its own feedback against the other player's, and the level
 * delta whose set keeps the promise with confidence 1 - beta. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/certify.h"

/* V(x, T) is evaluated this many box points at a time by the rejection sampler */
#define SAMPLING_CHUNK 65536

dg_certify_sampling_opts dg_certify_sampling_opts_default(void) {
    return (dg_certify_sampling_opts){.epsilon = 1e-3, .beta = 1e-6, .failures = 10, .rounds = 3, .dt = 0,
                                      .coverage_samples = 100000, .min_fraction = 1e-3, .seed = 0, .other = NULL};
}

/* Which player avoids the target (role max: wants V high): 0 u, 1 d, -1 none (or both: no game to
 * certify one side of). */
static int avoider(const dg_hji_game *gm) {
    const int u = gm->u.dim > 0 && gm->u.role == DG_HJI_ROLE_MAX, d = gm->d.dim > 0 && gm->d.role == DG_HJI_ROLE_MAX;
    return u == d ? -1 : u ? 0 : 1;
}

dg_status dg_certify_sampling_check(const dg_hji_problem *p, dg_err *e) {
    if (!p) return dg_err_set(e, DG_ERR_ARG, "certify --sampling: no problem");
    const char *n = p->name;
    if (p->payoff != DG_HJI_PAYOFF_KIND || dg_hji_game_degree(&p->game))
        return dg_err_set(e, DG_ERR_ARG, "certify --sampling: %s is a game of degree (payoff: %s): the sampling "
                          "certificate is for a tube of a game of kind (mode: brt)", n,
                          p->payoff == DG_HJI_PAYOFF_TIME ? "time" : "cost");
    if (p->opts.mode == DG_HJI_MODE_BRS)
        return dg_err_set(e, DG_ERR_ARG, "certify --sampling: %s has mode: brs (a set reached at exactly t_end): the "
                          "sampling certificate is for a tube (mode: brt or brt_target), whose safe set is V > 0", n);
    if (p->obstacle)
        return dg_err_set(e, DG_ERR_ARG, "certify --sampling: %s has obstacles (a reach-avoid game): the sampling "
                          "certificate is for an avoid tube only", n);
    if (!p->game.dyn)
        return dg_err_set(e, DG_ERR_ARG, "certify --sampling: %s has no dynamics to roll out (a generic Hamiltonian)", n);
    if (avoider(&p->game) < 0)
        return dg_err_set(e, DG_ERR_ARG, "certify --sampling: %s needs exactly one player of role max (the one who "
                          "avoids the target, playing V's feedback)", n);
    return DG_OK;
}

/* a uniform double in [0, 1) of 53 bits */
static double uniform01(dg_rng *r) {
    return (double)(dg_rng_u64(r) >> 11) * 0x1p-53;
}

/* n points uniform in p's grid box into x (n, nx) */
static void draw_box(const dg_hji_problem *p, dg_rng *r, int64_t n, double *x) {
    const dg_hji_grid *g = &p->grid;
    const int nx = g->ndim;
    for (int64_t i = 0; i < n; i++)
        for (int k = 0; k < nx; k++) x[i * nx + k] = g->lo[k] + (g->hi[k] - g->lo[k]) * uniform01(r);
}

dg_status dg_certify_rollout(const dg_hji_problem *p, const dg_hji_learn_net *net, const dg_hji_slices *other,
                             int64_t B, const double *x0, double dt, int64_t steps, unsigned char *fail, double *when,
                             dg_err *e) {
    dg_status s = dg_certify_sampling_check(p, e);
    if (s != DG_OK) return s;
    const dg_hji_game *gm = &p->game;
    const dg_hji_grid *g = &p->grid;
    const int nx = g->ndim, side = avoider(gm);
    if (!net || net->nx != nx || B < 0 || B > INT_MAX || (B && (!x0 || !fail)) || !(dt > 0) || !isfinite(dt) ||
        steps < 0)
        return dg_err_set(e, DG_ERR_ARG, "certify: rollout: bad arguments (a network of %s's %d axes, B in [0, %d], "
                          "dt > 0, steps >= 0)", p->name, nx, INT_MAX);
    if (other && (other->nt < 1 || !other->t || !other->v || p->block_nodes))
        return dg_err_set(e, DG_ERR_ARG, "certify: rollout: the other player's value needs slices on %s's whole grid",
                          p->name);
    const size_t n0 = (size_t)B;
    double *x = malloc(n0 * nx * sizeof *x), *grad = malloc(n0 * nx * sizeof *grad);
    double *tau = malloc(n0 * sizeof *tau), *l = malloc(n0 * sizeof *l);
    int64_t *idx = malloc(n0 * sizeof *idx);
    if (B && (!x || !grad || !tau || !l || !idx)) {
        s = dg_err_set(e, DG_ERR_NOMEM, "certify: out of memory for %lld paths", (long long)B);
        goto done;
    }
    if (B) memcpy(x, x0, n0 * nx * sizeof *x);
    for (int64_t b = 0; b < B; b++) {
        idx[b] = b;
        fail[b] = 0;
        if (when) when[b] = -1;
    }
    const double T = (double)steps * dt;
    int64_t n = B;  /* the paths still going, packed at the front */
    for (int64_t st = 0; st <= steps && n > 0; st++) {
        const double t = (double)st * dt;
        if ((s = dg_hji_problem_target_at(p, (int)n, x, l, NULL, e)) != DG_OK) goto done;
        int64_t m = 0;
        for (int64_t i = 0; i < n; i++) {
            if (l[i] <= 0) {  /* in the target: failed, and done */
                fail[idx[i]] = 1;
                if (when) when[idx[i]] = t;
                continue;
            }
            if (m != i) {
                memmove(x + m * nx, x + i * nx, (size_t)nx * sizeof *x);
                idx[m] = idx[i];
            }
            m++;
        }
        n = m;
        if (st == steps || !n) break;
        const double tg = T - t > 0 ? T - t : 0;
        for (int64_t i = 0; i < n; i++) tau[i] = tg;
        /* the one evaluation of the step: grad V_theta at every path still going */
        if ((s = dg_hji_learn_eval_grad(net, p, n, x, tau, NULL, NULL, grad, e)) != DG_OK) goto done;
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++) {
            double *xi = x + i * nx, go[DG_HJI_MAX_DIMS], xd[DG_HJI_MAX_DIMS], xm[DG_HJI_MAX_DIMS];
            double u[DG_HJI_MAX_INPUT] = {0}, d[DG_HJI_MAX_INPUT] = {0};
            const double *gi = grad + i * nx, *gother = gi;
            if (other) {
                dg_hji_slices_interp(g, other, tg, xi, go);
                gother = go;
            }
            /* the avoider from V_theta, the other player from its own value */
            dg_hji_game_optimal(gm, xi, gi, side == 0 ? u : NULL, side == 1 ? d : NULL);
            dg_hji_game_optimal(gm, xi, gother, side == 1 ? u : NULL, side == 0 ? d : NULL);
            /* RK2 (midpoint), the inputs held over the step: dg_hji_simulate's sampled feedback */
            dg_hji_game_dynamics(gm, xi, u, d, xd);
            for (int k = 0; k < nx; k++) xm[k] = xi[k] + 0.5 * dt * xd[k];
            dg_hji_game_dynamics(gm, xm, u, d, xd);
            for (int k = 0; k < nx; k++) {
                xi[k] += dt * xd[k];
                if (g->bc[k] == DG_HJI_BC_PERIODIC) {
                    const double per = g->hi[k] - g->lo[k];
                    xi[k] = g->lo[k] + fmod(fmod(xi[k] - g->lo[k], per) + per, per);
                }
            }
        }
    }
done:
    free(x), free(grad), free(tau), free(l), free(idx);
    return s;
}

/* N states uniform in {V(x, T) > delta} by rejection from the box into xs (N, nx) and their values
 * into vs (N); *draws grows by the box points examined. *sparse = 1 (and fewer than N taken) when
 * more than max_draws would be needed. */
static dg_status draw_set(const dg_hji_problem *p, const dg_hji_learn_net *net, dg_rng *rng, double delta, int64_t N,
                          int64_t max_draws, double *xs, double *vs, double *buf, double *vbuf, double *tbuf,
                          int64_t *draws, int *sparse, dg_err *e) {
    const int nx = p->grid.ndim;
    int64_t got = 0, seen = 0;
    *sparse = 0;
    for (int i = 0; i < SAMPLING_CHUNK; i++) tbuf[i] = p->t_end;
    while (got < N) {
        if (seen >= max_draws) {
            *sparse = 1;
            break;
        }
        draw_box(p, rng, SAMPLING_CHUNK, buf);
        dg_status s = dg_hji_learn_eval(net, p, SAMPLING_CHUNK, buf, tbuf, vbuf, e);
        if (s != DG_OK) return s;
        for (int i = 0; i < SAMPLING_CHUNK && got < N && seen < max_draws; i++) {
            seen++;
            if (!(vbuf[i] > delta)) continue;
            memcpy(xs + got * nx, buf + (size_t)i * nx, (size_t)nx * sizeof *xs);
            vs[got++] = vbuf[i];
        }
    }
    *draws += seen;
    return DG_OK;
}

dg_status dg_certify_sampling(const dg_hji_problem *p, const dg_hji_learn_net *net, const dg_certify_sampling_opts *o,
                              dg_certify_sampling_result *r, dg_err *e) {
    const double t0 = dg_clock_s();
    dg_status s = dg_certify_sampling_check(p, e);
    if (s != DG_OK) return s;
    if (!net || !o || !r || net->nx != p->grid.ndim)
        return dg_err_set(e, DG_ERR_ARG, "certify --sampling: needs a network of %s, options and a result", p->name);
    if (!(o->epsilon > 0 && o->epsilon < 1) || !(o->beta > 0 && o->beta < 1) || o->failures < 0 || o->rounds < 1 ||
        !(o->dt >= 0) || !isfinite(o->dt) || o->coverage_samples < 1 || !(o->min_fraction > 0 && o->min_fraction <= 1))
        return dg_err_set(e, DG_ERR_ARG, "certify --sampling: bad options (epsilon and beta in (0, 1), failures >= 0, "
                          "rounds >= 1, dt >= 0, coverage samples >= 1, min fraction in (0, 1])");
    const double T = p->t_end;
    memset(r, 0, sizeof *r);
    r->epsilon = o->epsilon;
    r->beta = o->beta;
    r->beta_round = o->beta / o->rounds;
    r->k = o->failures;
    r->N = dg_scenario_samples(o->epsilon, r->beta_round, o->failures);
    if (r->N < 1 || r->N > INT_MAX)
        return dg_err_set(e, DG_ERR_ARG, "certify --sampling: epsilon %g, beta %g over %d rounds and %d failures need "
                          "more than %d samples a round", o->epsilon, o->beta, o->rounds, o->failures, INT_MAX);
    r->steps = o->dt > 0 ? (int64_t)ceil(T / o->dt - 1e-9) : 200;
    if (r->steps < 1) r->steps = 1;
    r->dt = T / (double)r->steps;  /* the last step lands on t_end */
    const int nx = p->grid.ndim;
    const int64_t N = r->N, M = o->coverage_samples;
    const int64_t max_draws = (int64_t)ceil((double)N / o->min_fraction);
    const size_t chunk = SAMPLING_CHUNK;
    double *xs = malloc((size_t)N * nx * sizeof *xs), *vs = malloc((size_t)N * sizeof *vs);
    double *buf = malloc(chunk * nx * sizeof *buf), *vbuf = malloc(chunk * sizeof *vbuf);
    double *tbuf = malloc(chunk * sizeof *tbuf), *vbox = malloc((size_t)M * sizeof *vbox);
    unsigned char *fail = malloc((size_t)N);
    if (!xs || !vs || !buf || !vbuf || !tbuf || !vbox || !fail) {
        s = dg_err_set(e, DG_ERR_NOMEM, "certify --sampling: out of memory for %lld samples", (long long)N);
        goto done;
    }
    /* the coverage's box points, a stream apart from the rounds' */
    dg_rng rc, rs;
    dg_rng_seed(&rc, o->seed ^ 0x5851f42d4c957f2dull);
    dg_rng_seed(&rs, o->seed);
    for (int64_t i0 = 0; i0 < M; i0 += SAMPLING_CHUNK) {
        const int64_t n = M - i0 < SAMPLING_CHUNK ? M - i0 : SAMPLING_CHUNK;
        draw_box(p, &rc, n, buf);
        for (int64_t i = 0; i < n; i++) tbuf[i] = T;
        if ((s = dg_hji_learn_eval(net, p, n, buf, tbuf, vbox + i0, e)) != DG_OK) goto done;
    }
    int64_t pos = 0;
    for (int64_t i = 0; i < M; i++) pos += vbox[i] > 0;
    r->safe_fraction = (double)pos / (double)M;
    double delta = 0;
    for (int round = 1; round <= o->rounds; round++) {
        int sparse = 0;
        r->delta = delta;
        r->rounds = round;
        if ((s = draw_set(p, net, &rs, delta, N, max_draws, xs, vs, buf, vbuf, tbuf, &r->draws, &sparse, e)) != DG_OK)
            goto done;
        if (sparse) {  /* too small a set to sample: nothing certified */
            r->sparse = 1;
            r->failures = -1;
            break;
        }
        if ((s = dg_certify_rollout(p, net, o->other, N, xs, r->dt, r->steps, fail, NULL, e)) != DG_OK) goto done;
        int64_t m = 0;
        for (int64_t i = 0; i < N; i++) m += fail[i];
        r->failures = m;
        if (round == 1) {  /* the samples of S_0: the failure rate of the uncertified safe set */
            r->uncertified_rate = (double)m / (double)N;
            r->uncertified_se = sqrt(r->uncertified_rate * (1 - r->uncertified_rate) / (double)N);
        }
        if (m <= o->failures) {
            r->certified = 1;
            break;
        }
        /* the next level: the scenario program on this round's samples, k / 4 of its failures
         * discarded. The failures left above it have a mass of about (k / 4 + 1) / N in this round's
         * set, so the fresh round expects about k / 4 + 1 of its k allowed: likely to pass */
        double next;
        if ((s = dg_scenario_level(vs, fail, N, o->failures / 4, &next, e)) != DG_OK) goto done;
        if (next > delta) delta = next;
    }
    r->epsilon_bound = r->failures >= 0 ? dg_scenario_epsilon(N, r->failures, r->beta_round) : 1;
    int64_t in = 0;
    for (int64_t i = 0; i < M; i++) in += vbox[i] > r->delta;
    r->coverage = (double)in / (double)M;
    r->coverage_se = sqrt(r->coverage * (1 - r->coverage) / (double)M);
    r->seconds = dg_clock_s() - t0;
done:
    free(xs), free(vs), free(buf), free(vbuf), free(tbuf), free(vbox), free(fail);
    return s;
}
