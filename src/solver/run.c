/* A run from a config: its game and options, a checkpoint's policy, initial states, one
 * episode and its numbers (include/difgames/run.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/checkpoint.h"
#include "difgames/dist.h"
#include "difgames/fileio.h"
#include "difgames/hji.h"
#include "difgames/memory.h"
#include "difgames/run.h"
#include "difgames/safetensors.h"
#include "base/text.h"  /* dg_text_append */

/* ------------------------------------------------------- internal helpers */

/* e may be NULL: then errors go to a local message nobody reads */
#define DG_ERR_LOCAL(e) dg_err e##_local = {0}; if (!(e)) (e) = &e##_local

/* Makes the env, reads the options, checks unused keys; r->cfg is the config, its overrides set. */
static dg_status run_finish(dg_run *r, dg_err *e) {
    const char *game = NULL;
    if (dg_cfg_get(r->cfg, "game", DG_CFG_STR, &game, NULL) == DG_OK && game)
        for (int i = 0; dg_hji_problem_name(i); i++)
            if (!strcmp(game, dg_hji_problem_name(i)))
                return dg_cfg_error(r->cfg, "game", e, "'%s' is a game of the HJBI grid solver: use difgames hji "
                                    "solve|learn|plot|play (this command trains and checks learned policies)", game);
    if (!(r->env = dg_env_create(r->cfg, e))) return e->status;
    if (dg_train_opts_read(r->cfg, &r->opts, e) != DG_OK) return e->status;
    if (dg_pg_opts_read(r->cfg, &r->pg, &r->pg_run, e) != DG_OK) return e->status;
    if (dg_safety_opts_read(r->cfg, &r->safety, e) != DG_OK) return e->status;
    return dg_cfg_check_unused(r->cfg, e);
}

typedef struct episode_job {
    const dg_env *env;
    const dg_policy *m;
    dg_params *p;
    const dg_real *state0, *aux;
    int B, backward;
    dg_real *terms, *traj;
    dg_tensor *loss;
    const dg_noise *noise;  /* a noisy game's draws (NULL: the default stream) */
} episode_job;

static dg_status run_episode_job(dg_ctx *ctx, void *user) {
    episode_job *j = user;
    j->loss = dg_rollout_noise(ctx, j->env, j->m, j->p, j->state0, j->aux, j->B, 1.0f / (dg_real)j->B, j->terms,
                               j->traj, j->B, j->noise);
    if (j->loss && j->backward) dg_backward(ctx, j->loss);
    return dg_ctx_status(ctx);
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* dg_run_bench: the timed epochs' milliseconds and FLOPs */
typedef struct bench_timing {
    double *ms, *flops;
    int     n, cap, warmup;
} bench_timing;

static void bench_event(const dg_train_event *ev, void *user) {
    bench_timing *t = user;
    if (ev->kind != DG_TRAIN_EV_EPOCH || ev->stats->epoch <= t->warmup || t->n == t->cap) return;
    t->ms[t->n] = ev->stats->ms;
    t->flops[t->n] = ev->stats->flops;
    t->n++;
}

/* ------------------------------------------------------- public functions */

dg_status dg_run_doc_read(dg_run_doc *d, const char *path, const char *text, size_t len, const dg_run_set *sets,
                          int nsets, dg_err *e) {
    DG_ERR_LOCAL(e);
    memset(d, 0, sizeof *d);
    dg_cfg *c = text ? dg_cfg_parse(text, len, path, e) : dg_cfg_load(path, e);
    if (!c) return e->status;
    dg_status st = DG_OK;
    for (int i = 0; i < nsets && st == DG_OK; i++)
        if (sets[i].value) st = dg_cfg_set(c, sets[i].key, sets[i].value, e);
    dg_key k = *dg_run_key("train.precision");  /* the one declaration, read into an int of its own */
    k.offset = 0;
    if (st == DG_OK) st = dg_key_read(c, &k, &d->precision, e);
    if (st != DG_OK) {
        dg_cfg_free(c);
        d->precision = 0;
        return st;
    }
    d->cfg = c;
    return DG_OK;
}

void dg_run_doc_free(dg_run_doc *d) {
    dg_cfg_free(d->cfg);
    memset(d, 0, sizeof *d);
}

dg_status dg_run_open(dg_run *r, dg_run_doc *d, dg_err *e) {
    DG_ERR_LOCAL(e);
    memset(r, 0, sizeof *r);
    if (!d->cfg) return dg_err_set(e, DG_ERR_ARG, "dg_run_open: no config (read it with dg_run_doc_read)");
    r->cfg = d->cfg;  /* the run's now, also on error (dg_run_free) */
    memset(d, 0, sizeof *d);
    const dg_status st = run_finish(r, e);
    if (st != DG_OK) dg_run_free(r);
    return st;
}

dg_status dg_run_load(dg_run *r, const char *path, const dg_run_set *sets, int nsets, dg_err *e) {
    DG_ERR_LOCAL(e);
    memset(r, 0, sizeof *r);
    dg_run_doc d;
    const dg_status st = dg_run_doc_read(&d, path, NULL, 0, sets, nsets, e);
    return st == DG_OK ? dg_run_open(r, &d, e) : st;
}

dg_status dg_run_parse(dg_run *r, const char *text, size_t len, const char *label, const dg_run_set *sets,
                       int nsets, dg_err *e) {
    DG_ERR_LOCAL(e);
    memset(r, 0, sizeof *r);
    dg_run_doc d;  /* text NULL: no bytes (doc_read would read a file named label) */
    const dg_status st = dg_run_doc_read(&d, label, text ? text : "", len, sets, nsets, e);
    return st == DG_OK ? dg_run_open(r, &d, e) : st;
}

void dg_run_free(dg_run *r) {
    dg_env_free(r->env);
    dg_cfg_free(r->cfg);
    memset(r, 0, sizeof *r);
}

dg_status dg_run_memory_check(const dg_run *r, dg_err *e) {
    dg_mem_parts m;
    dg_err me = {0};
    if (dg_mem_check(dg_train_memory(r->env, &r->opts, &m), &me) == DG_OK) return DG_OK;
    const char *key = dg_train_memory_key(r->env, &m);
    const char *hint = !strcmp(key, "policy.hidden") ? "lower policy.hidden"
                     : !strcmp(key, "train.epochs") ? "lower train.epochs"
                     : !strcmp(key, "train.batch") ? "lower train.batch or env.horizon" : NULL;
    if (hint)
        return dg_cfg_error(r->cfg, key, e, "batch %d x horizon %d %s; %s", r->opts.batch, r->env->horizon, me.msg,
                            hint);
    return dg_cfg_error(r->cfg, key, e, "batch %d x horizon %d %s; lower %s, train.batch or env.horizon",
                        r->opts.batch, r->env->horizon, me.msg, key);
}

const dg_key *dg_run_key(const char *name) {
    const dg_key *(*const tables[])(int *) = {dg_train_keys, dg_pg_keys, dg_safety_keys, dg_env_keys};
    for (size_t t = 0; name && t < sizeof tables / sizeof tables[0]; t++) {
        int n;
        const dg_key *k = tables[t](&n);
        for (int i = 0; i < n; i++)
            if (!strcmp(k[i].name, name)) return &k[i];
    }
    return NULL;
}

/* A checkpoint whose tensors do not fit r's policy: when its metadata name another game than r's,
 * e's message (about the tensor) is put after that, the likelier reason ("checkpoint FILE was
 * trained on game 'chase' (this config: 'reach'): tensor ..."); else e is left as it is. */
static void policy_load_game(const dg_run *r, const char *ckpt, dg_err *e) {
    dg_err me = {0};  /* it was read once: a failure now only leaves e as it is */
    dg_st_file *f = dg_st_load(ckpt, &me);
    const char *game = dg_st_meta(f, "game"), *mine = r->env->game->name;
    if (game && strcmp(game, mine) != 0) {
        char name[80], why[DG_ERR_LEN];
        size_t k = 0;
        dg_text_append(name, sizeof name, &k, game, strlen(game));  /* the file's text: made safe to show */
        const size_t lc = strlen(ckpt);
        /* the tensor's message less the file's name it starts with, now said first */
        const char *rest = !strncmp(e->msg, ckpt, lc) && !strncmp(e->msg + lc, ": ", 2) ? e->msg + lc + 2 : e->msg;
        snprintf(why, sizeof why, "%s", rest);
        dg_err_set(e, e->status, "checkpoint %s was trained on game '%s' (this config: '%s'): %s", ckpt, name, mine,
                   why);
    }
    dg_st_free(f);
}

dg_status dg_run_policy_load(const dg_run *r, const char *ckpt, dg_policy *m, dg_params **p, dg_err *e) {
    DG_ERR_LOCAL(e);
    dg_status st = r->opts.open_loop ? dg_policy_create_plan(r->env, m, p, e)
                                     : dg_policy_create(r->env, r->opts.hidden, r->opts.nhidden, m, p, e);
    if (st != DG_OK) return st;
    if ((st = dg_checkpoint_load(ckpt, *p, e)) == DG_OK) return DG_OK;
    dg_params_free(*p);
    *p = NULL;
    if (st == DG_ERR_SHAPE || st == DG_ERR_NOT_FOUND) policy_load_game(r, ckpt, e);
    /* a tensor of another shape: a checkpoint of another game or policy, a bad input file */
    return st == DG_ERR_SHAPE ? (e->status = DG_ERR_FORMAT) : st;
}

int dg_run_dir(const char *config, char *buf, size_t n) {
    const char *name = config, *p = config;
    for (const char *hit; (hit = strstr(p, "configs/")) != NULL; p = hit + 1)
        if (hit == config || hit[-1] == '/') name = hit + 8;
    /* not under a configs/ folder, or a path that climbs out of it: the file name alone */
    if (name == config || strstr(name, "..") || name[0] == '/') {
        const char *slash = strrchr(config, '/');
        name = slash ? slash + 1 : config;
    }
    size_t len = strlen(name);
    if (len > 5 && !strcmp(name + len - 5, ".yaml")) len -= 5;
    else if (len > 4 && !strcmp(name + len - 4, ".yml")) len -= 4;
    /* "..yaml" or "...yaml" would give runs/. or runs/.., a folder that is not the run's own */
    const int dots = (len == 1 && name[0] == '.') || (len == 2 && !strncmp(name, "..", 2));
    const int w = len && !dots ? snprintf(buf, n, "runs/%.*s", (int)len, name) : snprintf(buf, n, "runs/run");
    return w >= 0 && (size_t)w < n ? 0 : -1;
}

int dg_run_init_load(const dg_env *env, const char *path, dg_real **state, dg_real **aux, dg_err *e) {
    DG_ERR_LOCAL(e);
    *state = *aux = NULL;
    dg_st_file *f = dg_st_load(path, e);
    if (!f) return -1;
    const dg_st_tensor *ts = dg_st_find(f, "state");
    dg_status st = DG_OK;
    int B = 0;
    if (!ts || ts->ndim != 2 || ts->shape[1] != env->state_dim || ts->shape[0] < 1)
        st = dg_err_set(e, DG_ERR_FORMAT, "%s: needs a tensor 'state' of shape (B, %d)", path, env->state_dim);
    else if (ts->shape[0] > DG_INIT_MAX_ROWS)
        st = dg_err_set(e, DG_ERR_FORMAT, "%s: tensor 'state' has %lld rows, more than the %d initial states a file "
                        "may hold", path, (long long)ts->shape[0], DG_INIT_MAX_ROWS);
    dg_err me = {0};
    if (st == DG_OK) {
        B = (int)ts->shape[0];
        if (dg_mem_check((double)B * (env->state_dim + env->aux_dim + env->aux_user_dim) * sizeof(dg_real), &me) != DG_OK)
            st = dg_err_set(e, me.status, "%.200s: %d initial states %s; lower the rows of the file", path, B, me.msg);
    }
    if (st == DG_OK) {
        *state = malloc((size_t)B * env->state_dim * sizeof(dg_real));
        *aux = malloc((size_t)B * (env->aux_dim ? env->aux_dim : 1) * sizeof(dg_real));
        if (!*state || !*aux) st = dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    }
    if (st == DG_OK) st = dg_st_read_real(f, "state", 2, (int64_t[]){B, env->state_dim}, *state, e);
    if (st == DG_OK && env->aux_dim) {
        const int ud = env->aux_user_dim ? env->aux_user_dim : env->aux_dim;
        dg_real *tmp = malloc((size_t)B * ud * sizeof(dg_real));
        st = tmp ? dg_st_read_real(f, env->aux_name, 2, (int64_t[]){B, ud}, tmp, e)
                 : dg_err_set(e, DG_ERR_NOMEM, "out of memory");
        for (int b = 0; b < B && st == DG_OK; b++)
            memcpy(*aux + (size_t)b * env->aux_dim, tmp + (size_t)b * ud, (size_t)ud * sizeof(dg_real));
        free(tmp);
        if (st == DG_OK && env->game->complete_aux) env->game->complete_aux(env, B, *aux);
    }
    dg_st_free(f);
    if (st == DG_OK) return B;
    free(*state);
    free(*aux);
    *state = *aux = NULL;
    return -1;
}

dg_status dg_run_init_draw(const dg_env *env, uint64_t seed, int B, dg_real **state, dg_real **aux, dg_err *e) {
    *state = malloc((size_t)B * env->state_dim * sizeof(dg_real));
    *aux = malloc((size_t)B * (env->aux_dim ? env->aux_dim : 1) * sizeof(dg_real));
    if (!*state || !*aux) return dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    dg_rng rng;
    dg_rng_seed(&rng, seed);
    return env->game->reset(env, &rng, B, *state, *aux, e);
}

/* dg_run_episode with a noisy game's draws from nz (NULL: the default stream) */
static dg_ctx *run_episode_noise(const dg_env *env, const dg_policy *m, dg_params *p, const dg_real *state0,
                                 const dg_real *aux, int B, int backward, dg_real *terms, dg_real *traj,
                                 dg_tensor **loss, const dg_noise *nz, dg_err *e) {
    int hidden[DG_MLP_MAX_LAYERS];
    for (int i = 0; i + 1 < m->mlp[0].nlayers; i++) hidden[i] = m->mlp[0].sizes[i + 1];
    /* the measured tape (never short for a shipped game; dg_ctx_run grows it if it is) */
    size_t cap = (size_t)dg_rollout_memory(env, hidden, m->mlp[0].nlayers - 1, B, env->horizon, backward);
    if (cap < ((size_t)1 << 20)) cap = (size_t)1 << 20;
    dg_ctx *ctx = dg_ctx_create(cap);
    if (!ctx) {
        dg_err_set(e, DG_ERR_NOMEM, "out of memory for a %zu MiB arena", cap >> 20);
        return NULL;
    }
    episode_job j = {env, m, p, state0, aux, B, backward, terms, traj, NULL, nz};
    const dg_status st = dg_ctx_run(&ctx, DG_ARENA_MAX, run_episode_job, &j);
    if (st != DG_OK) {
        dg_err_set(e, st, "%s", dg_ctx_error(ctx));
        dg_ctx_free(ctx);
        return NULL;
    }
    *loss = j.loss;
    return ctx;
}

dg_ctx *dg_run_episode(const dg_env *env, const dg_policy *m, dg_params *p, const dg_real *state0,
                       const dg_real *aux, int B, int backward, dg_real *terms, dg_real *traj, dg_tensor **loss,
                       dg_err *e) {
    return run_episode_noise(env, m, p, state0, aux, B, backward, terms, traj, loss, NULL, e);
}

double dg_run_eval_memory(const dg_env *env, const dg_train_opts *o, const dg_params *p, int B, int grad) {
    return dg_rollout_memory(env, o->hidden, o->nhidden, B, env->horizon, grad) +
           (double)p->total * sizeof(dg_real) * 2 + (double)B * (env->state_dim + env->aux_dim) * sizeof(dg_real) +
           (double)(env->horizon + 1) * B * env->state_dim * sizeof(dg_real) * (env->nmetrics > 0);
}

dg_status dg_run_eval(const dg_env *env, const dg_policy *m, dg_params *p, const dg_real *state,
                      const dg_real *aux, int B, int grad, dg_eval_result *r, dg_err *e) {
    DG_ERR_LOCAL(e);
    memset(r, 0, sizeof *r);
    dg_real *traj = NULL;
    if (env->nmetrics && !(traj = malloc((size_t)(env->horizon + 1) * B * env->state_dim * sizeof(dg_real))))
        return dg_err_set(e, DG_ERR_NOMEM, "out of memory for the trajectory");
    dg_tensor *loss;
    dg_params_zero_grad(p);
    dg_ctx *ctx = dg_run_episode(env, m, p, state, aux, B, grad, r->terms, traj, &loss, e);
    if (ctx) {
        r->loss = loss->data[0];
        if (env->nmetrics) env->game->metrics(env, traj, aux, B, env->horizon, r->metrics);
        if (grad) r->grad_norm = dg_grad_norm(p);
    }
    dg_ctx_free(ctx);
    free(traj);
    return ctx ? DG_OK : e->status;
}

/* Adds x into the running mean and sum of squared deviations (Welford) of draw n (1, 2, ...). */
static void welford(double x, int n, double *mean, double *m2) {
    const double d = x - *mean;
    *mean += d / n;
    *m2 += d * (x - *mean);
}

dg_status dg_run_eval_noise(const dg_env *env, const dg_policy *m, dg_params *p, const dg_real *state,
                            const dg_real *aux, int B, int grad, int draws, uint64_t seed, dg_eval_result *r,
                            dg_eval_spread *sp, dg_err *e) {
    DG_ERR_LOCAL(e);
    memset(r, 0, sizeof *r);
    memset(sp, 0, sizeof *sp);
    if (draws < 1) return dg_err_set(e, DG_ERR_ARG, "dg_run_eval_noise: draws %d, want >= 1", draws);
    if (env->noise_dim <= 0) draws = 1;  /* no noise: one draw is every draw */
    sp->draws = draws;
    dg_real *traj = NULL;
    if (env->nmetrics && !(traj = malloc((size_t)(env->horizon + 1) * B * env->state_dim * sizeof(dg_real))))
        return dg_err_set(e, DG_ERR_NOMEM, "out of memory for the trajectory");
    dg_params_zero_grad(p);
    dg_status st = DG_OK;
    double m2_loss = 0, m2_terms[DG_LOSS_MAX_TERMS] = {0}, m2_metrics[DG_MAX_METRICS] = {0};
    double terms_mean[DG_LOSS_MAX_TERMS] = {0};
    for (int d = 1; d <= draws && st == DG_OK; d++) {
        const dg_noise nz = {dg_noise_key(seed, (uint64_t)d), 0};
        dg_real terms[DG_LOSS_MAX_TERMS] = {0};
        double metrics[DG_MAX_METRICS] = {0};
        dg_tensor *loss;
        dg_ctx *ctx = run_episode_noise(env, m, p, state, aux, B, grad, terms, traj,
                                        &loss, env->noise_dim > 0 ? &nz : NULL, e);
        if (!ctx) {
            st = e->status;
            break;
        }
        welford(loss->data[0], d, &r->loss, &m2_loss);
        for (int i = 0; i < env->nterms; i++) welford(terms[i], d, &terms_mean[i], &m2_terms[i]);
        if (env->nmetrics) env->game->metrics(env, traj, aux, B, env->horizon, metrics);
        for (int i = 0; i < env->nmetrics; i++) welford(metrics[i], d, &r->metrics[i], &m2_metrics[i]);
        dg_ctx_free(ctx);
    }
    free(traj);
    if (st != DG_OK) return st;
    const double n1 = draws > 1 ? draws - 1 : 1;  /* the sample standard deviation (0 for one draw) */
    sp->loss = sqrt(m2_loss / n1);
    for (int i = 0; i < env->nterms; i++) {
        r->terms[i] = (dg_real)terms_mean[i];
        sp->terms[i] = sqrt(m2_terms[i] / n1);
    }
    for (int i = 0; i < env->nmetrics; i++) sp->metrics[i] = sqrt(m2_metrics[i] / n1);
    if (grad) {  /* the mean gradient over the draws */
        for (size_t k = 0; k < p->total; k++) p->grad[k] /= (dg_real)draws;
        r->grad_norm = dg_grad_norm(p);
    }
    return DG_OK;
}

double dg_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

dg_status dg_run_disk_check(const dg_run *r, const char *dir, dg_err *e) {
    const double need = dg_train_output_bytes(r->env, &r->opts), avail = dg_disk_free(dir);
    if (avail < 0 || need <= avail) return DG_OK;
    return dg_err_set(e, DG_ERR_ARG, "%s: the run writes about %.1f MiB (snapshots of %s, metrics), more than the "
                      "%.1f MiB free there; lower train.snapshots, train.epochs or policy.hidden", dir,
                      need / 1048576.0, r->env->game->name, avail / 1048576.0);
}

dg_status dg_run_train(const dg_run *r, const char *dir, const char *resume, int go_on, dg_train_cb cb, void *user,
                       volatile sig_atomic_t *stop, dg_run_train_result *res, dg_err *e) {
    DG_ERR_LOCAL(e);
    memset(res, 0, sizeof *res);
    res->step = DG_RUN_STEP_CONFIG;
    if (!resume && r->opts.epochs < 1)
        return dg_cfg_error(r->cfg, "train.epochs", e, "0 epochs would train nothing; give at least 1");
    dg_status st = dg_run_memory_check(r, e);
    if (st != DG_OK) return st;
    res->step = DG_RUN_STEP_DIR;
    /* under MPI the ranks share the batch (dg_trainer_create) and rank 0 alone writes the folder */
    const int writer = dg_dist_rank() == 0;
    /* the run's files must fit on the disk: refused before the first epoch, not at the last */
    if (writer && (st = dg_run_disk_check(r, dir, e)) != DG_OK) return st;
    /* the folder is this run's until it ends: a second run into it is refused */
    const int lock = writer ? dg_dir_lock(dir, e) : -1;
    if (writer && lock < 0) return e->status;
    /* a run killed here before (kill -9) left its temporaries ("<file>.tmp.<pid>"): the folder is this
     * run's now, so those of processes that are gone go (a resumed run, a sweep's run started again) */
    if (writer && dg_dir_clean(dir, e) < 0) {
        dg_dir_unlock(dir, lock);
        return e->status;
    }
    char *yaml = NULL;
    dg_trainer *t = NULL;
    dg_safety_value *sv = NULL;
    dg_safety guard;
    res->step = DG_RUN_STEP_TRAINER;
    if ((st = dg_cfg_to_yaml(r->cfg, &yaml, NULL, e)) != DG_OK) goto done;
    if (!(t = dg_trainer_create(r->env, &r->opts, writer ? dir : NULL, yaml, e))) { st = e->status; goto done; }
    if (r->safety.train) {  /* the filter on the tape of every epoch */
        if ((st = dg_safety_value_open(r->env, r->safety.value, r->safety.config, &sv, e)) != DG_OK) goto done;
        dg_safety_init(&guard, r->env, sv, NULL, &r->safety);
        dg_trainer_set_filter(t, dg_safety_policy_filter, &guard);
        if ((st = dg_trainer_set_filter_penalty(t, r->safety.penalty, e)) != DG_OK) {  /* learns to need it less */
            char why[sizeof e->msg];
            snprintf(why, sizeof why, "%s", e->msg);
            st = dg_cfg_error(r->cfg, "safety.penalty", e, "%s", why);
            goto done;
        }
    }
    res->step = DG_RUN_STEP_RESUME;
    if (resume && (st = dg_trainer_restore(t, resume, e)) != DG_OK) goto done;
    res->epochs_before = dg_trainer_epoch(t);
    res->checkpoint_every = dg_trainer_checkpoint_every(t);
    res->step = DG_RUN_STEP_EPOCHS;
    if (resume && go_on && r->opts.epochs <= res->epochs_before) {
        st = dg_err_set(e, DG_ERR_ARG, "train.epochs %d: the run has done %d epochs already; give more to go on",
                        r->opts.epochs, res->epochs_before);
        goto done;
    }
    res->step = DG_RUN_STEP_TRAIN;
    if (cb) cb(&(dg_train_event){.kind = DG_TRAIN_EV_START}, user);
    const double t0 = dg_clock_s();
    st = dg_trainer_run(t, cb, user, stop, e);
    res->seconds = dg_clock_s() - t0;
    res->epochs = dg_trainer_last(t)->epoch;
    res->loss = dg_trainer_last(t)->loss;
done:
    dg_trainer_free(t);
    dg_safety_value_free(sv);
    free(yaml);
    dg_dir_unlock(dir, lock);
    return st;
}

dg_status dg_run_seeds(dg_run_seed_sweep *w, dg_err *e) {
    DG_ERR_LOCAL(e);
    memset(&w->res, 0, sizeof w->res);
    w->res.step = DG_RUN_STEP_SEEDS;
    w->median = NAN;
    w->seconds = 0;
    w->epochs = 0;
    w->failed = -1;
    for (int k = 0; k < w->n; k++)
        for (int j = 0; j < k; j++)
            if (w->seeds[j] == w->seeds[k])
                return dg_err_set(e, DG_ERR_ARG, "seed %d given twice (each seed trains into its own folder)",
                                  w->seeds[k]);
    dg_run_set *sets = malloc(((size_t)w->nsets + 1) * sizeof *sets);
    double *sorted = malloc((size_t)(w->n > 0 ? w->n : 1) * sizeof *sorted);
    dg_status st = sets && sorted ? DG_OK : dg_err_set(e, DG_ERR_NOMEM, "out of memory for %d seeds", w->n);
    for (int k = 0; st == DG_OK && k < w->n; k++) {
        char seed_s[32], name[48], dir[DG_PATH_MAX - 128];  /* the trainer adds file names */
        snprintf(seed_s, sizeof seed_s, "%d", w->seeds[k]);
        snprintf(name, sizeof name, "seed_%d", w->seeds[k]);
        sets[0] = (dg_run_set){"seed", seed_s};  /* first: the config stores the keys in the order set */
        if (w->nsets) memcpy(sets + 1, w->sets, (size_t)w->nsets * sizeof *sets);
        w->failed = k;
        memset(&w->res, 0, sizeof w->res);
        w->res.step = DG_RUN_STEP_FOLDER;
        if ((st = dg_path_join(dir, sizeof dir, w->base, name, e)) != DG_OK) break;
        dg_run r;
        w->res.step = DG_RUN_STEP_CONFIG;
        if ((st = dg_run_load(&r, w->config, sets, w->nsets + 1, e)) != DG_OK) break;
        w->res.step = DG_RUN_STEP_CALLER;
        if (!w->on_seed || (st = w->on_seed(k, &r, dir, NULL, w->user)) == DG_OK)
            st = dg_run_train(&r, dir, NULL, 0, w->on_event, w->user, w->stop, &w->res, e);
        w->seconds += w->res.seconds;
        w->epochs = w->res.epochs;
        w->losses[k] = sorted[k] = w->res.loss;
        if (st == DG_OK && w->on_seed) w->on_seed(k, &r, dir, &w->res, w->user);
        dg_run_free(&r);
    }
    if (st == DG_OK) {
        w->failed = -1;
        w->median = w->n > 0 ? dg_median(sorted, w->n) : NAN;
    }
    free(sets);
    free(sorted);
    return st;
}

dg_status dg_run_bench(const dg_run *r, int warmup, int epochs, dg_bench_result *b, dg_err *e) {
    memset(b, 0, sizeof *b);
    dg_train_opts o = r->opts;
    o.epochs = warmup + epochs;
    o.nsnapshots = 0;
    dg_trainer *t = dg_trainer_create(r->env, &o, NULL, NULL, e);
    bench_timing tm = {.ms = calloc((size_t)epochs, sizeof(double)), .flops = calloc((size_t)epochs, sizeof(double)),
                       .cap = epochs, .warmup = warmup};
    dg_status st = !t                    ? (e ? e->status : DG_ERR_NOMEM)
                 : !tm.ms || !tm.flops ? dg_err_set(e, DG_ERR_NOMEM, "out of memory")
                                       : DG_OK;
    if (st == DG_OK) st = dg_trainer_run(t, bench_event, &tm, NULL, e);
    if (st == DG_OK && tm.n < 1) st = dg_err_set(e, DG_ERR_ARG, "no epoch was timed");
    if (st == DG_OK) {
        const int B = o.batch, H = r->env->horizon;
        b->epochs = tm.n;
        b->flops = tm.flops[tm.n - 1];
        qsort(tm.ms, (size_t)tm.n, sizeof(double), cmp_double);
        b->ms = tm.ms[tm.n / 2];
        b->ms_min = tm.ms[0];
        b->steps_per_s = (double)B * H / (b->ms / 1e3);
        b->shards = o.threads < B ? o.threads : B;
        b->tape_bytes = (double)dg_trainer_arena_peak(t) * b->shards;
        b->checkpoint_every = dg_trainer_checkpoint_every(t);
        const int k = b->checkpoint_every;
        b->saved_bytes = k ? (double)((H + k - 1) / k) * B * r->env->state_dim * sizeof(dg_real) : 0;
    }
    free(tm.ms);
    free(tm.flops);
    dg_trainer_free(t);
    return st;
}

dg_status dg_run_pg(const dg_run *r, const char *out, int bptt, int pg, dg_pg_progress_fn fn, void *user,
                    dg_run_pg_result *res, dg_err *e) {
    DG_ERR_LOCAL(e);
    memset(res, 0, sizeof *res);
    res->bptt = res->pg = (dg_pg_result){.best = NAN, .final = NAN};
    res->step = DG_RUN_STEP_CONFIG;
    if (r->safety.train)  /* the filter sits on BPTT's tape; the policy-gradient learner samples without it */
        return dg_cfg_error(r->cfg, "safety.train", e, "difgames pg does not train with the safety filter (BPTT, "
                            "difgames train, does); leave safety.train out");
    res->step = DG_RUN_STEP_DIR;
    const int lock = out ? dg_dir_lock(out, e) : -1;  /* the folder is this run's until it ends */
    if (out && lock < 0) return e->status;
    dg_pg *learner = NULL;
    dg_pg_curve curve = {0};
    dg_status st = DG_OK;
    res->step = DG_RUN_STEP_TRAINER;
    dg_pg_eval *ev = dg_pg_eval_create(r->env, r->pg_run.eval_batch, r->pg_run.eval_seed, r->pg.threads, e);
    if (!ev) { st = e->status; goto done; }
    if (bptt) {
        res->step = DG_RUN_STEP_CONFIG;
        if ((st = dg_run_memory_check(r, e)) != DG_OK) goto done;
        res->step = DG_RUN_STEP_TRAIN;
        if (fn && (st = fn(&(dg_pg_progress){.start = "bptt"}, user)) != DG_OK) goto done;
        const double t0 = dg_clock_s();
        st = dg_pg_run_bptt(r->env, &r->opts, ev, r->pg_run.evals_per_decade, &curve, fn, user, &res->bptt, e);
        res->bptt_seconds = dg_clock_s() - t0;
        if (st != DG_OK) goto done;
    }
    if (pg) {
        res->step = DG_RUN_STEP_TRAINER;
        if (!(learner = dg_pg_create(r->env, &r->pg, e))) { st = e->status; goto done; }
        res->step = DG_RUN_STEP_TRAIN;
        if (fn && (st = fn(&(dg_pg_progress){.start = "pg"}, user)) != DG_OK) goto done;
        const double t0 = dg_clock_s();
        st = dg_pg_run(learner, ev, &r->pg_run, &curve, fn, user, &res->pg, e);
        res->pg_seconds = dg_clock_s() - t0;
        res->pg_env_steps = dg_pg_env_steps(learner);
        if (st != DG_OK) goto done;
    }
    res->step = DG_RUN_STEP_SAVE;
    if (out) st = dg_run_pg_save(out, &curve, (int)r->opts.seed, learner, r->env->game->name, e);
done:
    dg_dir_unlock(out, lock);
    dg_pg_free(learner);
    dg_pg_eval_free(ev);
    dg_pg_curve_free(&curve);
    return st;
}

dg_status dg_run_pg_save(const char *dir, const dg_pg_curve *c, int seed, dg_pg *pg, const char *game, dg_err *e) {
    char path[DG_PATH_MAX];
    dg_status st = dg_mkdirs(dir, e);
    if (st == DG_OK) st = dg_path_join(path, sizeof path, dir, "curve.csv", e);
    if (st == DG_OK) st = dg_pg_curve_save_csv(c, seed, path, e);
    if (st != DG_OK || !pg) return st;
    const char *meta[] = {"format", "difgames", "game", game, "trainer", "policy-gradient"};
    if ((st = dg_path_join(path, sizeof path, dir, "policy.safetensors", e)) == DG_OK &&
        (st = dg_checkpoint_save(path, dg_pg_policy_params(pg), 0, meta, 3, e)) == DG_OK &&
        (st = dg_path_join(path, sizeof path, dir, "value.safetensors", e)) == DG_OK)
        st = dg_checkpoint_save(path, dg_pg_value_params(pg), 0, meta, 3, e);
    return st;
}
