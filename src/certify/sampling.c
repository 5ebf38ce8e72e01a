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
    if (dg_certify_noise_check(p, e)) return DG_ERR_ARG;
    const char *n = p->name;
    if (p->payoff != DG_HJI_PAYOFF_KIND || dg_hji_game_degree(&p->game))
        return dg_err_set(e, DG_ERR_ARG, "certify --sampling: %s is a game of degree (payoff: %s): the sampling "
                          "certificate is for a tube of a game of kind (mode: brt)", n,
                          p->payoff == DG_HJI_PAYOFF_TIME ? "time" : "cost");
    if (p->opts.mode == DG_HJI_MODE_BRS)
        return dg_err_set(e, DG_ERR_ARG, "certify --sampling: %s has mode: brs (a set reached at exactly t_end): the "
                          "sampling certificate is for a tube (mode: brt or brt_target), whose safe set is V > 0", n);
    if (p->obstacle || dg_hji_problem_has_obstacle(p))  /* (more than 6 axes: the field, no array) */
        return dg_err_set(e, DG_ERR_ARG, "certify --sampling: %s has obstacles (a reach-avoid game): the sampling "
                          "certificate is for an avoid tube only", n);
    if (!p->game.dyn)
        return dg_err_set(e, DG_ERR_ARG, "certify --sampling: %s has no dynamics to roll out (a generic Hamiltonian)", n);
    if (dg_hji_problem_moving(p))   /* the network it certifies is hji learn's, of fixed sets */
        return dg_err_set(e, DG_ERR_ARG, "certify --sampling: %s: %s moves in time: the sampling certificate is for "
                          "a network of hji learn, which learns fixed sets", n, dg_hji_problem_moving(p));
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

dg_status dg_certify_rollout(const dg_hji_problem *p, const dg_hji_learn_net *net, const dg_hji_source *other,
                             int64_t B, const double *x0, double dt, int64_t steps, unsigned char *fail, double *when,
                             dg_err *e) {
    dg_status s = dg_certify_sampling_check(p, e);
    if (s != DG_OK) return s;
    if (!net || net->nx != p->grid.ndim || B < 0 || (B && (!x0 || !fail)) || !(dt > 0) || !isfinite(dt) || steps < 1)
        return dg_err_set(e, DG_ERR_ARG, "certify: rollout: bad arguments (a network of %s's %d axes, B >= 0, dt > 0, "
                          "steps >= 1)", p->name, p->grid.ndim);
    dg_hji_source mine;
    if ((s = dg_hji_learn_source(net, p, &mine, e)) != DG_OK) return s;
    mine.horizon = (double)steps * dt;  /* both players read the time-to-go T - t of this rollout */
    dg_hji_source theirs = other ? *other : mine;
    theirs.horizon = mine.horizon;
    /* the avoider plays V_theta, the other its own value; B plays in lockstep, one evaluation of
     * each source a step (dg_hji_simulate_batch), stopped where they reach l <= 0 */
    const int u_avoids = avoider(&p->game) == 0;
    const dg_hji_sim_opts so = {.t_max = mine.horizon, .dt = dt, .max_steps = steps};
    double *t = when ? when : malloc((size_t)(B > 0 ? B : 1) * sizeof *t);
    if (!t) return dg_err_set(e, DG_ERR_NOMEM, "certify: out of memory for %lld paths", (long long)B);
    s = dg_hji_simulate_batch(p, u_avoids ? &mine : &theirs, u_avoids ? &theirs : &mine, B, x0, &so, t, NULL, e);
    for (int64_t b = 0; s == DG_OK && b < B; b++) fail[b] = t[b] >= 0;
    if (t != when) free(t);
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
