/* The policy-gradient baseline's evaluation and learning curves: the fixed evaluation batch (the
 * mean action rolled out on it), evaluations at env steps on a log grid for BPTT (dg_pg_run_bptt)
 * and policy gradient (dg_pg_run), and the curves' CSV. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/pg.h"
#include "difgames/run.h"
#include "difgames/trainer.h"
#include "io/csv.h"
#include "solver/pg_internal.h"

void dg_pg_eval_free(dg_pg_eval *ev) {
    if (!ev) return;
    for (int s = 0; s < ev->nshards; s++) dg_ctx_free(ev->ctx[s]);
    free(ev->state);
    free(ev->aux);
    free(ev);
}

dg_pg_eval *dg_pg_eval_create(const dg_env *env, int B, uint64_t seed, int threads, dg_err *e) {
    if (B < 1 || threads < 1) {
        dg_err_set(e, DG_ERR_ARG, "evaluation batch %d, threads %d: both must be >= 1", B, threads);
        return NULL;
    }
    dg_pg_eval *ev = calloc(1, sizeof *ev);
    if (!ev) {
        dg_err_set(e, DG_ERR_NOMEM, "out of memory");
        return NULL;
    }
    ev->env = env;
    ev->B = B;
    /* the batch every held-out draw of a run makes from a seed (eval's, certify's) */
    if (dg_run_init_draw(env, seed, B, &ev->state, &ev->aux, e) != DG_OK) {
        dg_pg_eval_free(ev);
        return NULL;
    }
    ev->nshards = threads < B ? threads : B;
    if (ev->nshards > MAX_SHARDS) ev->nshards = MAX_SHARDS;
    for (int s = 0; s < ev->nshards; s++) {
        ev->row0[s] = (int)((int64_t)B * s / ev->nshards);
        ev->rows[s] = (int)((int64_t)B * (s + 1) / ev->nshards) - ev->row0[s];
        ev->ctx[s] = dg_ctx_create(ARENA0);
        if (!ev->ctx[s]) {
            ev->nshards = s;
            break;
        }
    }
    if (ev->nshards == 0 || !ev->ctx[ev->nshards - 1]) {
        dg_err_set(e, DG_ERR_NOMEM, "out of memory for an evaluation batch of %d", B);
        dg_pg_eval_free(ev);
        return NULL;
    }
    return ev;
}

/* Shard s of an evaluation batch, for dg_ctx_run. */
typedef struct eval_job {
    const dg_pg_eval *ev;
    const dg_policy  *m;
    dg_params        *p;
    int               s;
    dg_real            *terms;
    dg_tensor        *loss;
} eval_job;

static dg_status eval_rollout(dg_ctx *ctx, void *user) {
    eval_job *jb = user;
    const dg_pg_eval *ev = jb->ev;
    const int S = ev->env->state_dim, X = ev->env->aux_dim, s = jb->s;
    const dg_noise nz = {0, ev->row0[s]};  /* a noisy game: the draws of the shard's rows of the batch */
    jb->loss = dg_rollout_noise(ctx, ev->env, jb->m, jb->p, ev->state + (size_t)ev->row0[s] * S,
                                X ? ev->aux + (size_t)ev->row0[s] * X : NULL, ev->rows[s], 1.0f / (dg_real)ev->B,
                                jb->terms, NULL, 0, &nz);
    return dg_ctx_status(ctx);
}

dg_status dg_pg_eval_loss(dg_pg_eval *ev, const dg_policy *m, dg_params *p, double *loss, dg_real *terms,
                          dg_err *e) {
    const dg_env *env = ev->env;
    double part[MAX_SHARDS];
    dg_real pterms[MAX_SHARDS][DG_LOSS_MAX_TERMS];
    dg_status status[MAX_SHARDS];
    int hidden[DG_MLP_MAX_LAYERS];
    const int nhidden = m->mlp[0].nlayers - 1;
    for (int i = 0; i < nhidden; i++) hidden[i] = m->mlp[0].sizes[i + 1];
#pragma omp parallel for num_threads(ev->nshards) schedule(static, 1)
    for (int s = 0; s < ev->nshards; s++) {
        eval_job jb = {ev, m, p, s, pterms[s], NULL};
        /* sized from the estimate dg_pg_memory counts on the first call; grown if it falls short */
        status[s] = dg_ctx_reserve(&ev->ctx[s], (size_t)fmin(eval_arena(env, hidden, nhidden, ev->rows[s]),
                                                             (double)DG_ARENA_MAX));
        if (status[s] == DG_OK) status[s] = dg_ctx_run(&ev->ctx[s], DG_ARENA_MAX, eval_rollout, &jb);
        part[s] = jb.loss && status[s] == DG_OK ? jb.loss->data[0] : NAN;
    }
    double total = 0.0;
    dg_real tsum[DG_LOSS_MAX_TERMS] = {0};
    for (int s = 0; s < ev->nshards; s++) {  /* fixed order */
        if (status[s] != DG_OK)
            return dg_err_set(e, status[s], "evaluation rollout: %s", dg_ctx_error(ev->ctx[s]));
        total += part[s];
        for (int i = 0; i < env->nterms; i++) tsum[i] += pterms[s][i];
    }
    *loss = total;
    if (terms) memcpy(terms, tsum, sizeof tsum);
    return DG_OK;
}

/* ---------------------------------------------------- learning curves */

typedef struct curve_run {
    dg_pg_eval       *ev;
    dg_pg_curve      *c;
    dg_pg_progress_fn fn;
    void             *user;
    const char       *method;
    int               epd;
    double            next_eval;       /* env steps of the next evaluation */
    dg_pg_result      res;
    /* BPTT */
    dg_trainer       *trainer;
    int64_t           epoch_steps;
    int               epochs;
    volatile sig_atomic_t stop;
    dg_status         status;
    dg_err            err;
} curve_run;

/* The first point of the grid 10^(k / epd) above steps. */
static double grid_next(double steps, int epd) {
    if (steps < 1.0) return 1.0;
    double k = floor(log10(steps) * epd + 1e-9) + 1.0;
    return pow(10.0, k / epd);
}

/* Evaluates policy (m, p) and records the point in *pt and r->c; r->status on failure. */
static dg_status curve_eval(curve_run *r, int iter, int64_t steps, double sample_loss, const dg_policy *m,
                            dg_params *p, dg_pg_point *pt) {
    double loss = NAN;
    dg_status st = dg_pg_eval_loss(r->ev, m, p, &loss, NULL, &r->err);
    if (st != DG_OK) return r->status = st;
    *pt = (dg_pg_point){.iter = iter, .steps = steps, .loss = loss, .sample_loss = sample_loss};
    snprintf(pt->method, sizeof pt->method, "%s", r->method);
    dg_pg_curve *c = r->c;
    if (c) {
        if (c->n == c->cap) {
            int cap = c->cap ? 2 * c->cap : 256;
            dg_pg_point *q = realloc(c->pts, (size_t)cap * sizeof *q);
            if (!q) return r->status = dg_err_set(&r->err, DG_ERR_NOMEM, "out of memory for a learning curve");
            c->pts = q;
            c->cap = cap;
        }
        c->pts[c->n++] = *pt;
    }
    if (loss < r->res.best) r->res.best = loss;
    r->res.final = loss;
    r->res.steps = steps;
    r->next_eval = grid_next((double)steps, r->epd);
    return DG_OK;
}

/* Calls the caller's progress function; r->status when it stops the run. */
static dg_status curve_report(curve_run *r, const dg_pg_point *pt, const dg_pg_stats *stats) {
    if (!r->fn) return DG_OK;
    const dg_pg_progress pr = {.point = pt, .stats = stats};
    dg_status st = r->fn(&pr, r->user);
    if (st != DG_OK) {
        r->status = st;
        dg_err_set(&r->err, st, "%s run stopped by its progress callback", r->method);
    }
    return st;
}

static void curve_init(curve_run *r, dg_pg_eval *ev, dg_pg_curve *c, dg_pg_progress_fn fn, void *user,
                       const char *method, int epd) {
    *r = (curve_run){.ev = ev, .c = c, .fn = fn, .user = user, .method = method, .epd = epd};
    r->res = (dg_pg_result){.best = INFINITY, .final = NAN};
}

/* BPTT epochs: evaluate on the grid of env steps (batch x horizon an epoch). */
static void on_bptt_epoch(const dg_train_event *ev, void *user) {
    curve_run *r = user;
    if (ev->kind != DG_TRAIN_EV_EPOCH || r->status != DG_OK) return;
    const int epoch = ev->stats->epoch;
    const int64_t steps = (int64_t)epoch * r->epoch_steps;
    r->res.iters = epoch;
    if ((double)steps >= r->next_eval || epoch == r->epochs) {
        dg_pg_point pt;
        if (curve_eval(r, epoch, steps, ev->stats->loss, dg_trainer_policy(r->trainer),
                       dg_trainer_params(r->trainer), &pt) == DG_OK)
            curve_report(r, &pt, NULL);
    }
    if (r->status != DG_OK) r->stop = 1;
}

/* Trains a fresh BPTT trainer on env with o, evaluating on ev (see pg.h). */
dg_status dg_pg_run_bptt(const dg_env *env, const dg_train_opts *o, dg_pg_eval *ev, int evals_per_decade,
                         dg_pg_curve *c, dg_pg_progress_fn fn, void *user, dg_pg_result *res, dg_err *e) {
    if (!env || !o || !ev || evals_per_decade < 1)
        return dg_err_set(e, DG_ERR_ARG, "dg_pg_run_bptt: env, options, an evaluation batch and "
                          "evals_per_decade >= 1 are required");
    curve_run r;
    curve_init(&r, ev, c, fn, user, "bptt", evals_per_decade);
    r.trainer = dg_trainer_create(env, o, NULL, NULL, e);
    if (!r.trainer) return e ? e->status : DG_ERR_NOMEM;
    r.epoch_steps = (int64_t)o->batch * env->horizon;
    r.epochs = o->epochs;
    dg_pg_point pt;
    if (curve_eval(&r, 0, 0, NAN, dg_trainer_policy(r.trainer), dg_trainer_params(r.trainer), &pt) == DG_OK)
        curve_report(&r, &pt, NULL);
    dg_status st = r.status != DG_OK ? r.status : dg_trainer_run(r.trainer, on_bptt_epoch, &r, &r.stop, e);
    dg_trainer_free(r.trainer);
    if (r.status != DG_OK) {
        if (e) *e = r.err;
        return r.status;
    }
    if (st == DG_OK && res) *res = r.res;
    return st;
}

/* Iterates pg under schedule s, evaluating on ev (see pg.h). */
dg_status dg_pg_run(dg_pg *pg, dg_pg_eval *ev, const dg_pg_schedule *s, dg_pg_curve *c, dg_pg_progress_fn fn,
                    void *user, dg_pg_result *res, dg_err *e) {
    if (!pg || !ev || !s || s->evals_per_decade < 1)
        return dg_err_set(e, DG_ERR_ARG, "dg_pg_run: a learner, an evaluation batch and a schedule with "
                          "evals_per_decade >= 1 are required");
    const int iters = s->iters;
    const int64_t max_steps = s->max_steps;
    curve_run r;
    curve_init(&r, ev, c, fn, user, "pg", s->evals_per_decade);
    dg_pg_point pt;
    if (curve_eval(&r, 0, 0, NAN, dg_pg_policy(pg), dg_pg_policy_params(pg), &pt) == DG_OK)
        curve_report(&r, &pt, NULL);
    int it = 0, below = r.res.final <= s->stop_below;  /* consecutive evaluations at or below stop_below */
    while (r.status == DG_OK && below < s->stop_after) {
        if (iters > 0 && it >= iters) break;
        if (max_steps > 0 && dg_pg_env_steps(pg) >= max_steps) break;
        dg_pg_stats st;
        dg_status ist = dg_pg_iterate(pg, &st, &r.err);
        if (ist != DG_OK) {
            r.status = ist;
            break;
        }
        r.res.iters = ++it;
        const int last = (iters > 0 && it >= iters) || (max_steps > 0 && st.env_steps >= max_steps);
        const int do_eval = (double)st.env_steps >= r.next_eval || last;
        if (do_eval) {
            if (curve_eval(&r, it, st.env_steps, st.sample_loss, dg_pg_policy(pg), dg_pg_policy_params(pg), &pt) !=
                DG_OK)
                break;
            below = r.res.final <= s->stop_below ? below + 1 : 0;
        }
        curve_report(&r, do_eval ? &pt : NULL, &st);
    }
    if (r.status != DG_OK) {
        if (e) *e = r.err;
        return r.status;
    }
    if (res) *res = r.res;
    return DG_OK;
}

/* Writes c as CSV to path, atomically (see pg.h). */
dg_status dg_pg_curve_save_csv(const dg_pg_curve *c, int seed, const char *path, dg_err *e) {
    if (!c || !path) return dg_err_set(e, DG_ERR_ARG, "dg_pg_curve_save_csv: a curve and a path are required");
    static const char *const COLS[] = {"method", "seed", "iter", "env_steps", "eval_loss", "sample_loss"};
    static const dg_csv_fmt FMT[] = {DG_CSV_STR, DG_CSV_INT, DG_CSV_INT, DG_CSV_INT, DG_CSV_G9, DG_CSV_G9};
    dg_csv w;
    dg_status st = dg_csv_begin(&w, path, e);
    if (st != DG_OK) return st;
    for (int k = 0; k < 6; k++) dg_csv_col(&w, COLS[k], FMT[k]);
    for (int i = 0; i < c->n; i++) {
        const dg_pg_point *p = &c->pts[i];
        dg_csv_str(&w, p->method);
        dg_csv_num(&w, seed);
        dg_csv_num(&w, p->iter);
        dg_csv_num(&w, (double)p->steps);
        dg_csv_num(&w, p->loss);
        dg_csv_num(&w, p->sample_loss);
    }
    return dg_csv_commit(&w, e);
}

void dg_pg_curve_free(dg_pg_curve *c) {
    if (!c) return;
    free(c->pts);
    *c = (dg_pg_curve){0};
}
