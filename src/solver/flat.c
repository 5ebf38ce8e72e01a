/* A run behind one handle, its numbers in flat arrays (include/difgames/flat.h): what the Python
 * package calls, so that no caller outside C mirrors a struct of the library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/checkpoint.h"
#include "difgames/eval_run.h"
#include "difgames/flat.h"
#include "difgames/hji.h"
#include "difgames/keys.h"
#include "difgames/memory.h"
#include "difgames/run.h"
#include "solver/flat_internal.h"

#define DG_ERR_LOCAL(e) dg_err e##_local = {0}; if (!(e)) (e) = &e##_local

struct dg_flat {
    dg_run     r;
    dg_policy  m;
    dg_params *p;
    dg_ctx    *ctx;      /* the episodes' tape, kept between calls (grown once by dg_ctx_run) */
    dg_real   *saved;    /* dg_episode_grad's saved states (truncated windows), saved_rows rows */
    int        saved_rows;
    char      *json;     /* dg_flat_certify's last JSON line */
    int        need_B, need_H, need_bw;  /* the episode whose tape estimate need holds (B 0: none yet) */
    double     need;     /* dg_rollout_memory of it: measured once (it plays small episodes), not a call */
    char       player[DG_MAX_PLAYERS][32];  /* the players' names (dg_env_player_name) */
};

/* ------------------------------------------------------------ keys */

typedef struct key_buf {
    char   *buf;
    size_t  n, len;  /* room; bytes written (or needed) so far, NUL not counted */
} key_buf;

/* Appends name and '\n' (what does not fit is counted, not written). */
static void key_add(key_buf *k, const char *name) {
    const size_t l = strlen(name);
    if (k->len + l + 1 < k->n) {
        memcpy(k->buf + k->len, name, l);
        k->buf[k->len + l] = '\n';
    }
    k->len += l + 1;
}

static void key_table(key_buf *k, const dg_key *t, int n) {
    for (int i = 0; i < n; i++) key_add(k, t[i].name);
}

/* Every key written under the map at path (its scalars and lists, by dotted path). */
static void key_walk(key_buf *k, dg_cfg *c, const char *path, int depth) {
    const int n = dg_cfg_len(c, path);
    for (int i = 0; i < n && depth < DG_CFG_MAX_DEPTH; i++) {
        const char *name = dg_cfg_key(c, path, i);
        if (!name) return;  /* a list: a leaf here */
        char sub[512];
        if ((size_t)snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", name) >= sizeof sub) continue;
        if (dg_cfg_key(c, sub, 0)) key_walk(k, c, sub, depth + 1);
        else key_add(k, sub);
    }
}

int64_t dg_flat_keys(const char *path, char *buf, size_t n, dg_err *e) {
    DG_ERR_LOCAL(e);
    dg_cfg *c = dg_cfg_load(path, e);
    if (!c) return -1;
    key_buf k = {buf, n, 0};
    const char *game = NULL;
    if (dg_cfg_get(c, "game", DG_CFG_STR, &game, NULL) != DG_OK) game = NULL;
    dg_key tmp[256];
    int nt, hji = 0;
    for (int i = 0; game && dg_hji_problem_name(i); i++) hji |= !strcmp(game, dg_hji_problem_name(i));
    if (hji) {
        const dg_key *t = dg_hji_keys(&nt);
        key_table(&k, t, nt);
        nt = dg_hji_game_keys(game, tmp, 256);
        key_table(&k, tmp, nt < 256 ? nt : 256);
    } else {
        const dg_key *(*const tables[])(int *) = {dg_train_keys, dg_pg_keys, dg_safety_keys, dg_env_keys};
        for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
            const dg_key *kt = tables[t](&nt);
            key_table(&k, kt, nt);
        }
        key_add(&k, "game");
        const dg_game *g = !game ? NULL : !strcmp(game, "model") ? dg_game_model() : dg_game_find(game);
        if (g) {
            nt = dg_game_keys(g, tmp, 256);
            key_table(&k, tmp, nt < 256 ? nt : 256);
        }
    }
    key_walk(&k, c, "", 0);
    dg_cfg_free(c);
    if (k.len < n) buf[k.len] = '\0';
    else if (n) buf[0] = '\0';
    return (int64_t)k.len + 1;
}

/* ------------------------------------------------------------ open */

/* The n keys and values as dg_run_set (a malloc'd array; NULL with e set). */
static dg_run_set *flat_sets(const char *const *keys, const char *const *values, int n, dg_err *e) {
    dg_run_set *s = malloc((size_t)(n > 0 ? n : 1) * sizeof *s);
    if (!s) {
        dg_err_set(e, DG_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (int i = 0; i < n; i++) s[i] = (dg_run_set){keys[i], values[i]};
    return s;
}

int dg_flat_precision(const char *path, const char *const *keys, const char *const *values, int n, dg_err *e) {
    DG_ERR_LOCAL(e);
    dg_run_set *s = flat_sets(keys, values, n, e);
    if (!s) return -1;
    dg_run_doc d;
    const dg_status st = dg_run_doc_read(&d, path, NULL, 0, s, n, e);
    free(s);
    if (st != DG_OK) return -1;
    const int prec = d.precision;
    dg_run_doc_free(&d);
    return prec;
}

dg_flat *dg_flat_open(const char *path, const char *const *keys, const char *const *values, int n, dg_err *e) {
    DG_ERR_LOCAL(e);
    if (!path) {
        dg_err_set(e, DG_ERR_ARG, "dg_flat_open: no config path");
        return NULL;
    }
    dg_flat *f = calloc(1, sizeof *f);
    dg_run_set *s = f ? flat_sets(keys, values, n, e) : NULL;
    if (!f || !s) {
        if (!f) dg_err_set(e, DG_ERR_NOMEM, "out of memory");
        free(f);
        return NULL;
    }
    dg_run_doc d;
    dg_status st = dg_run_doc_read(&d, path, NULL, 0, s, n, e);
    free(s);
    if (st == DG_OK && d.precision != DG_REAL_F64) {
        st = dg_err_set(e, DG_ERR_CONFIG, "%s: train.precision is %s: open it with the %s copy of the library", path,
                        d.precision ? "f64" : "f32", d.precision ? "double (dg64_)" : "float (dg_)");
        dg_run_doc_free(&d);
    }
    if (st == DG_OK) st = dg_run_open(&f->r, &d, e);
    if (st == DG_OK) {
        const dg_train_opts *o = &f->r.opts;
        st = o->open_loop ? dg_policy_create_plan(f->r.env, &f->m, &f->p, e)
                          : dg_policy_create(f->r.env, o->hidden, o->nhidden, &f->m, &f->p, e);
    }
    if (st == DG_OK && !(f->ctx = dg_ctx_create((size_t)1 << 20))) st = dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    for (int i = 0; st == DG_OK && i < f->r.env->nplayers && i < DG_MAX_PLAYERS; i++)
        dg_env_player_name(f->r.env, i, f->player[i], sizeof f->player[i]);
    if (st == DG_OK) {
        dg_rng rng;
        dg_rng_seed(&rng, f->r.opts.seed);
        dg_policy_reset_params(&f->m, f->p, &rng);
        return f;
    }
    dg_flat_free(f);
    return NULL;
}

void dg_flat_free(dg_flat *f) {
    if (!f) return;
    dg_ctx_free(f->ctx);
    dg_params_free(f->p);
    dg_run_free(&f->r);
    free(f->saved);
    free(f->json);
    free(f);
}

int64_t dg_flat_dim(const dg_flat *f, int what) {
    const dg_env *v = f->r.env;
    const dg_train_opts *o = &f->r.opts;
    switch (what) {
    case DG_FLAT_STATE: return v->state_dim;
    case DG_FLAT_AUX: return v->aux_dim;
    case DG_FLAT_OBS: return v->obs_dim;
    case DG_FLAT_ACT: return v->act_dim;
    case DG_FLAT_PLAYERS: return v->nplayers > 1 ? v->nplayers : 1;
    case DG_FLAT_OBS2: return v->nplayers > 1 ? v->obs2_dim : 0;
    case DG_FLAT_ACT2: return v->nplayers > 1 ? v->act2_dim : 0;
    case DG_FLAT_HORIZON: return v->horizon;
    case DG_FLAT_TERMS: return v->nterms;
    case DG_FLAT_METRICS: return v->nmetrics;
    case DG_FLAT_PARAMS: return f->p->count;
    case DG_FLAT_TOTAL: return (int64_t)f->p->total;
    case DG_FLAT_BATCH: return o->batch;
    case DG_FLAT_EPOCHS: return o->epochs;
    case DG_FLAT_SEED: return (int64_t)o->seed;
    case DG_FLAT_OPEN_LOOP: return o->open_loop;
    case DG_FLAT_REAL: return (int64_t)sizeof(dg_real);
    case DG_FLAT_AUX_USER: return v->aux_user_dim ? v->aux_user_dim : v->aux_dim;
    case DG_FLAT_THREADS: return o->threads;
    case DG_FLAT_GENERAL_SUM: return v->general_sum;
    case DG_FLAT_EXPLOIT_EPOCHS: return o->exploit_epochs;
    case DG_FLAT_NOISE: return v->noise_dim;
    default: return -1;
    }
}

const char *dg_flat_name(const dg_flat *f, int kind, int i) {
    const dg_env *v = f->r.env;
    switch (kind) {
    case DG_FLAT_TERM: return i >= 0 && i < v->nterms ? v->term_names[i] : NULL;
    case DG_FLAT_METRIC: return i >= 0 && i < v->nmetrics ? v->metric_names[i] : NULL;
    case DG_FLAT_PARAM: return i >= 0 && i < f->p->count ? f->p->info[i].name : NULL;
    case DG_FLAT_GAME: return v->game->name;
    case DG_FLAT_SOURCE: return dg_env_source(v);
    case DG_FLAT_AUX_NAME: return v->aux_name;
    case DG_FLAT_CONFIG: return dg_cfg_path(f->r.cfg);
    case DG_FLAT_PLAYER: return i >= 0 && i < v->nplayers && i < DG_MAX_PLAYERS ? f->player[i] : NULL;
    case DG_FLAT_METRIC_UNDEFINED: return i >= 0 && i < v->nmetrics ? v->metric_undefined[i] : NULL;
    case DG_FLAT_SAFETY_MODE: return f->r.safety.value ? dg_safety_mode_name(f->r.safety.mode) : NULL;
    default: return NULL;
    }
}

int dg_flat_param_shape(const dg_flat *f, int i, int *shape) {
    if (i < 0 || i >= f->p->count) return -1;
    const dg_param_info *in = &f->p->info[i];
    for (int d = 0; d < in->ndim; d++) shape[d] = in->shape[d];
    return in->ndim;
}

int64_t dg_flat_offset(const dg_flat *f, int i) {
    return i >= 0 && i < f->p->count ? (int64_t)f->p->info[i].offset : -1;
}

/* ------------------------------------------------------------ states */

static dg_status check_rows(int B, dg_err *e) {
    return B >= 1 && B <= DG_INIT_MAX_ROWS ? DG_OK
                                           : dg_err_set(e, DG_ERR_ARG, "batch %d: expected 1 to %d rows", B,
                                                        DG_INIT_MAX_ROWS);
}

dg_status dg_flat_init(dg_flat *f, uint64_t seed, dg_real *params, int nbatch, int B, dg_real *state, dg_real *aux,
                       dg_err *e) {
    DG_ERR_LOCAL(e);
    const dg_env *v = f->r.env;
    if (nbatch < 0 || (nbatch > 0 && check_rows(B, e) != DG_OK))
        return nbatch < 0 ? dg_err_set(e, DG_ERR_ARG, "batches %d: expected 0 or more", nbatch) : e->status;
    dg_rng rng;  /* the trainer's generator: the parameters, then each epoch's batch (trainer.c) */
    dg_rng_seed(&rng, seed);
    dg_params *p = NULL;
    dg_policy m;
    const dg_train_opts *o = &f->r.opts;
    dg_status st = o->open_loop ? dg_policy_create_plan(v, &m, &p, e)
                                : dg_policy_create(v, o->hidden, o->nhidden, &m, &p, e);
    if (st != DG_OK) return st;
    dg_policy_reset_params(&m, p, &rng);
    if (params) memcpy(params, p->data, p->total * sizeof(dg_real));
    dg_params_free(p);
    const size_t S = (size_t)v->state_dim, A = (size_t)(v->aux_dim ? v->aux_dim : 1);
    for (int k = 0; k < nbatch && st == DG_OK; k++)
        st = v->game->reset(v, &rng, B, state + (size_t)k * B * S, aux + (size_t)k * B * A, e);
    return st;
}

dg_status dg_flat_reset(const dg_flat *f, uint64_t seed, int B, dg_real *state, dg_real *aux, dg_err *e) {
    DG_ERR_LOCAL(e);
    if (check_rows(B, e) != DG_OK) return e->status;
    dg_rng rng;  /* as dg_run_init_draw */
    dg_rng_seed(&rng, seed);
    return f->r.env->game->reset(f->r.env, &rng, B, state, aux, e);
}

/* The inputs of an observe or step on ctx: B rows of state and aux. */
typedef struct step_job {
    dg_flat       *f;
    int            B;
    const dg_real *state, *aux, *action;
    dg_real       *out, *out2;
} step_job;

static dg_tensor *job_input(dg_ctx *ctx, int B, int cols, const dg_real *x) {
    return dg_from(ctx, 2, (int[]){B, cols > 0 ? cols : 1}, x);
}

/* The episode constants as the rollout gives them to the game: NULL for a game without (aux_dim 0)
 * (a full tape: NULL too, with the context's error set, which the callers check). */
static dg_tensor *job_aux(dg_ctx *ctx, const dg_env *v, int B, const dg_real *aux) {
    return v->aux_dim ? job_input(ctx, B, v->aux_dim, aux) : NULL;
}

static void job_output(const dg_tensor *t, dg_real *out, size_t n) {
    if (t) memcpy(out, t->data, n * sizeof(dg_real));
}

static dg_status observe_job(dg_ctx *ctx, void *user) {
    step_job *j = user;
    const dg_env *v = j->f->r.env;
    dg_tensor *s = job_input(ctx, j->B, v->state_dim, j->state), *a = job_aux(ctx, v, j->B, j->aux);
    dg_tensor *o = s && dg_ctx_status(ctx) == DG_OK ? v->game->observe(ctx, v, s, a) : NULL;
    if (o && dg_ctx_status(ctx) == DG_OK) job_output(o, j->out, (size_t)j->B * v->obs_dim);
    if (v->nplayers > 1 && v->game->observe2 && j->out2 && dg_ctx_status(ctx) == DG_OK) {
        dg_tensor *o2 = v->game->observe2(ctx, v, s, a);
        if (o2 && dg_ctx_status(ctx) == DG_OK) job_output(o2, j->out2, (size_t)j->B * v->obs2_dim);
    }
    return dg_ctx_status(ctx);
}

static dg_status step_job_run(dg_ctx *ctx, void *user) {
    step_job *j = user;
    const dg_env *v = j->f->r.env;
    const int act = v->act_dim + (v->nplayers > 1 ? v->act2_dim : 0);
    dg_tensor *s = job_input(ctx, j->B, v->state_dim, j->state), *a = job_aux(ctx, v, j->B, j->aux);
    dg_tensor *u = job_input(ctx, j->B, act, j->action);
    dg_tensor *n = s && u && dg_ctx_status(ctx) == DG_OK ? v->game->step(ctx, v, s, a, u) : NULL;
    if (n && dg_ctx_status(ctx) == DG_OK) job_output(n, j->out, (size_t)j->B * v->state_dim);
    return dg_ctx_status(ctx);
}

typedef struct cost_job {
    dg_flat       *f;
    int            t;
    const dg_real *state, *aux, *action;  /* one row each */
    dg_real       *next;
    double         cost;
} cost_job;

static dg_status cost_job_run(dg_ctx *ctx, void *user) {
    cost_job *j = user;
    const dg_env *v = j->f->r.env;
    const int act = v->act_dim + (v->nplayers > 1 ? v->act2_dim : 0);
    dg_tensor *s = job_input(ctx, 1, v->state_dim, j->state), *a = job_aux(ctx, v, 1, j->aux);
    dg_tensor *u = job_input(ctx, 1, act, j->action);
    dg_tensor *n = s && u && dg_ctx_status(ctx) == DG_OK ? v->game->step(ctx, v, s, a, u) : NULL;
    if (!n || dg_ctx_status(ctx) != DG_OK) return dg_ctx_status(ctx);
    dg_tensor *terms[DG_LOSS_MAX_TERMS] = {0};
    v->game->step_cost(ctx, v, n, a, u, 1, terms);
    dg_env_add_terminal(ctx, v, j->t, n, a, 1, terms);
    if (dg_ctx_status(ctx) != DG_OK) return dg_ctx_status(ctx);
    j->cost = 0;
    for (int k = 0; k < v->nterms; k++)
        if (terms[k]) j->cost += (double)v->term_weights[k] * terms[k]->data[0];
    memcpy(j->next, n->data, (size_t)v->state_dim * sizeof(dg_real));
    return DG_OK;
}

/* Runs job on f's tape (grown when short); DG_OK or the tape's error in e. */
static dg_status flat_run(dg_flat *f, dg_ctx_job job, void *user, dg_err *e) {
    const dg_status st = dg_ctx_run(&f->ctx, DG_ARENA_MAX, job, user);
    return st == DG_OK ? DG_OK : dg_err_set(e, st, "%s", dg_ctx_error(f->ctx));
}

dg_status dg_flat_observe(dg_flat *f, int B, const dg_real *state, const dg_real *aux, dg_real *obs, dg_real *obs2,
                          dg_err *e) {
    DG_ERR_LOCAL(e);
    if (check_rows(B, e) != DG_OK) return e->status;
    step_job j = {f, B, state, aux, NULL, obs, obs2};
    return flat_run(f, observe_job, &j, e);
}

dg_status dg_flat_step(dg_flat *f, int B, const dg_real *state, const dg_real *aux, const dg_real *action,
                       dg_real *next, dg_err *e) {
    DG_ERR_LOCAL(e);
    if (check_rows(B, e) != DG_OK) return e->status;
    step_job j = {f, B, state, aux, action, next, NULL};
    return flat_run(f, step_job_run, &j, e);
}

dg_status dg_flat_step_cost(dg_flat *f, int B, int t, const dg_real *state, const dg_real *aux, const dg_real *action,
                            dg_real *next, double *cost, dg_err *e) {
    DG_ERR_LOCAL(e);
    if (check_rows(B, e) != DG_OK) return e->status;
    const dg_env *v = f->r.env;
    if (t < 1 || t > v->horizon) return dg_err_set(e, DG_ERR_ARG, "step %d: expected 1 to %d", t, v->horizon);
    const size_t S = (size_t)v->state_dim, A = (size_t)(v->aux_dim ? v->aux_dim : 1);
    const size_t U = (size_t)(v->act_dim + (v->nplayers > 1 ? v->act2_dim : 0));
    for (int b = 0; b < B; b++) {
        cost_job j = {f, t, state + b * S, aux + b * A, action + b * U, next + b * S, 0};
        const dg_status st = flat_run(f, cost_job_run, &j, e);
        if (st != DG_OK) return st;
        cost[b] = j.cost;
    }
    return DG_OK;
}

/* ------------------------------------------------------------ episodes */

typedef struct episode_job {
    dg_flat       *f;
    const dg_real *state, *aux;
    int            B, backward;
    double         loss;
    dg_real       *terms, *traj;
} episode_job;

static dg_status episode_run(dg_ctx *ctx, void *user) {
    episode_job *j = user;
    dg_flat *f = j->f;
    const dg_real inv = 1.0f / (dg_real)j->B;
    if (j->backward) {
        dg_params_zero_grad(f->p);
        const dg_status st = dg_episode_grad(ctx, f->r.env, &f->m, f->p, j->state, j->aux, j->B, inv, 0,
                                             f->r.opts.truncate, f->saved, &j->loss, j->terms, j->traj, j->B);
        return st != DG_OK ? st : dg_ctx_status(ctx);
    }
    dg_tensor *l = dg_rollout(ctx, f->r.env, &f->m, f->p, j->state, j->aux, j->B, inv, j->terms, j->traj, j->B);
    if (l) j->loss = l->data[0];
    return dg_ctx_status(ctx);
}

dg_status dg_flat_episode(dg_flat *f, const dg_real *params, const dg_real *state, const dg_real *aux, int B,
                          int backward, double *loss, dg_real *terms, dg_real *grad, double *metrics, dg_real *traj,
                          const double *scale, dg_err *e) {
    DG_ERR_LOCAL(e);
    if (check_rows(B, e) != DG_OK) return e->status;
    const dg_env *v = f->r.env;
    const size_t S = (size_t)v->state_dim, H = (size_t)v->horizon;
    if (backward) {  /* truncated windows keep the state entering each (dg_episode_saved) */
        const int blocks = dg_episode_saved(v->horizon, 0, f->r.opts.truncate);
        if (blocks > 0 && f->saved_rows < B * blocks) {
            dg_real *s = realloc(f->saved, (size_t)B * blocks * S * sizeof(dg_real));
            if (!s) return dg_err_set(e, DG_ERR_NOMEM, "out of memory");
            f->saved = s;
            f->saved_rows = B * blocks;
        }
    }
    /* a first sizing from the measured tape, so the first call does not grow it several times; the
       measurement plays small episodes of its own, so it is made once for each episode's shape */
    if (f->need_B != B || f->need_H != v->horizon || f->need_bw != backward) {
        int hidden[DG_MLP_MAX_LAYERS];
        for (int i = 0; i + 1 < f->m.mlp[0].nlayers; i++) hidden[i] = f->m.mlp[0].sizes[i + 1];
        f->need = dg_rollout_memory(v, hidden, f->m.mlp[0].nlayers > 0 ? f->m.mlp[0].nlayers - 1 : 0, B, (double)H,
                                    backward);
        f->need_B = B, f->need_H = v->horizon, f->need_bw = backward;
    }
    const double need = f->need;
    if (dg_ctx_capacity(f->ctx) < need) {  /* a larger episode than before: refused if it cannot fit */
        dg_err me = {0};
        if (dg_mem_check(dg_run_eval_memory(v, &f->r.opts, f->p, B, backward), &me) != DG_OK || need > DG_ARENA_MAX)
            return dg_err_set(e, me.status ? me.status : DG_ERR_NOMEM, "an episode of %d rows x horizon %d %s; lower "
                              "the rows or env.horizon", B, v->horizon, me.status ? me.msg : "needs more than 16 GiB of tape");
        dg_ctx_reserve(&f->ctx, (size_t)need);
    }
    dg_real *own = NULL;
    if (metrics && v->nmetrics && !traj && !(traj = own = malloc((H + 1) * B * S * sizeof(dg_real))))
        return dg_err_set(e, DG_ERR_NOMEM, "out of memory for the trajectory");
    memcpy(f->p->data, params, f->p->total * sizeof(dg_real));
    dg_env *env = f->r.env;  /* f's own: its weights scaled for this episode, then put back */
    dg_real w[DG_LOSS_MAX_TERMS];
    memcpy(w, env->term_weights, sizeof w);
    for (int k = 0; scale && k < env->nterms; k++) env->term_weights[k] = (dg_real)(w[k] * scale[k]);
    episode_job j = {f, state, aux, B, backward, 0, terms, traj};
    dg_status st = flat_run(f, episode_run, &j, e);
    memcpy(env->term_weights, w, sizeof w);
    if (st == DG_OK) {
        *loss = j.loss;
        if (backward && grad) memcpy(grad, f->p->grad, f->p->total * sizeof(dg_real));
        if (metrics && v->nmetrics) v->game->metrics(v, traj, aux, B, v->horizon, metrics);
    }
    free(own);
    return st;
}

/* ------------------------------------------------------------ checkpoints and training */

dg_status dg_flat_load(dg_flat *f, const char *path, dg_real *params, dg_err *e) {
    DG_ERR_LOCAL(e);
    dg_policy m;
    dg_params *p = NULL;
    const dg_status st = dg_run_policy_load(&f->r, path, &m, &p, e);
    if (st != DG_OK) return st;
    if (p->total != f->p->total) {  /* cannot happen: both are the config's policy */
        const size_t got = p->total;
        dg_params_free(p);
        return dg_err_set(e, DG_ERR_FORMAT, "%s: %zu parameters, the config's policy has %zu", path, got, f->p->total);
    }
    memcpy(params, p->data, p->total * sizeof(dg_real));
    dg_params_free(p);
    return DG_OK;
}

dg_status dg_flat_save(dg_flat *f, const char *path, const dg_real *params, dg_err *e) {
    DG_ERR_LOCAL(e);
    char *yaml = NULL;
    dg_status st = dg_cfg_to_yaml(f->r.cfg, &yaml, NULL, e);
    if (st != DG_OK) return st;
    memcpy(f->p->data, params, f->p->total * sizeof(dg_real));
    const char *meta[] = {"format", "difgames", "game", f->r.env->game->name, "source", dg_env_source(f->r.env),
                          "config", yaml};
    st = dg_checkpoint_save(path, f->p, 0, meta, 4, e);
    free(yaml);
    return st;
}

typedef struct train_cb {
    const dg_flat   *f;
    dg_flat_progress cb;
    void            *user;
    const dg_run_train_result *res;
} train_cb;

static void on_train(const dg_train_event *ev, void *user) {
    train_cb *t = user;
    const dg_env *v = t->f->r.env;
    double x[4 + DG_LOSS_MAX_TERMS + DG_MAX_METRICS] = {0};
    if (ev->kind == DG_TRAIN_EV_START) {
        t->cb(t->user, 1, t->res->epochs_before, x);
    } else if (ev->kind == DG_TRAIN_EV_EPOCH) {
        const dg_epoch_stats *s = ev->stats;
        x[0] = s->loss, x[1] = s->grad_norm, x[2] = s->lr, x[3] = s->ms;
        for (int i = 0; i < v->nterms; i++) x[4 + i] = s->terms[i];
        for (int i = 0; i < v->nmetrics; i++) x[4 + v->nterms + i] = s->metrics[i];
        t->cb(t->user, 0, s->epoch, x);
    }
}

dg_status dg_flat_train(dg_flat *f, const char *dir, dg_flat_progress cb, void *user, volatile sig_atomic_t *stop,
                        double *out, dg_err *e) {
    DG_ERR_LOCAL(e);
    if (!dir) return dg_err_set(e, DG_ERR_ARG, "dg_flat_train: no output folder");
    dg_run_train_result res = {0};
    train_cb t = {f, cb, user, &res};
    const dg_status st = dg_run_train(&f->r, dir, NULL, 0, cb ? on_train : NULL, &t, stop, &res, e);
    if (out) {
        out[0] = res.epochs;
        out[1] = res.loss;
        out[2] = res.seconds;
        out[3] = st == DG_OK ? -1 : (double)res.step;
    }
    return st;
}


/* ------------------------------------------------------------ eval's extras */

dg_status dg_flat_exploit(dg_flat *f, const dg_real *params, const dg_real *state, const dg_real *aux, int B, int epochs,
                          double *out, dg_err *e) {
    DG_ERR_LOCAL(e);
    if (check_rows(B, e) != DG_OK) return e->status;
    const dg_env *v = f->r.env;
    if (v->nplayers != 2 && !v->general_sum)
        return dg_err_set(e, DG_ERR_ARG, "%s has one learned player: no exploitability", v->game->name);
    dg_err me = {0};
    if (dg_mem_check(dg_run_exploit_memory(v, &f->r.opts, f->p, B), &me) != DG_OK)
        return dg_err_set(e, me.status, "the exploitability's best responses %s; lower the rows or env.horizon", me.msg);
    memcpy(f->p->data, params, f->p->total * sizeof(dg_real));
    const int n = epochs >= 0 ? epochs : f->r.opts.exploit_epochs;
    if (v->general_sum) {
        double cost[DG_MAX_PLAYERS], gain[DG_MAX_PLAYERS];
        if (dg_run_nash_conv(v, &f->m, f->p, &f->r.opts, n, state, aux, B, cost, gain, e) != DG_OK) return e->status;
        for (int i = 0; i < v->nplayers; i++) out[i] = cost[i], out[v->nplayers + i] = gain[i];
        return DG_OK;
    }
    dg_exploit_result x;
    if (dg_run_exploit(v, &f->m, f->p, &f->r.opts, n, state, aux, B, &x, e) != DG_OK) return e->status;
    out[0] = x.j, out[1] = x.j_best[0], out[2] = x.j_best[1], out[3] = x.exploit[0], out[4] = x.exploit[1];
    return DG_OK;
}

dg_status dg_flat_safety_eval(dg_flat *f, const dg_real *params, const dg_real *state, const dg_real *aux, int B,
                              const char *adversary, double *loss, double *terms, double *metrics, double *out,
                              dg_err *e) {
    DG_ERR_LOCAL(e);
    if (check_rows(B, e) != DG_OK) return e->status;
    const dg_env *v = f->r.env;
    if (!f->r.safety.value && !adversary)
        return dg_err_set(e, DG_ERR_ARG, "no safety filter (safety.value) and no adversary: nothing to evaluate with");
    dg_err me = {0};
    if (dg_mem_check(dg_run_eval_memory(v, &f->r.opts, f->p, B, 0), &me) != DG_OK)
        return dg_err_set(e, me.status, "an episode of %d rows x horizon %d %s; lower the rows or env.horizon", B,
                          v->horizon, me.msg);
    dg_safety guard = {0};
    if (dg_safety_open(&guard, v, &f->r.safety, adversary, e) != DG_OK) return e->status;
    memcpy(f->p->data, params, f->p->total * sizeof(dg_real));
    dg_eval_result r;
    dg_safety_result sr;
    const dg_status st = dg_safety_eval(v, &f->m, f->p, &guard, state, aux, B, 0, &r, &sr, e);
    dg_safety_close(&guard);
    if (st != DG_OK) return st;
    *loss = r.loss;
    for (int k = 0; terms && k < v->nterms; k++) terms[k] = r.terms[k];
    for (int k = 0; metrics && k < v->nmetrics; k++) metrics[k] = r.metrics[k];
    out[0] = sr.interventions, out[1] = (double)sr.violations, out[2] = sr.min_target;
    return DG_OK;
}

/* ------------------------------------------------------------ for the layers above (flat_internal.h) */

dg_run *dg_flat_run(dg_flat *f) { return &f->r; }

const char *dg_flat_keep_text(dg_flat *f, char *text) {
    free(f->json);
    return f->json = text;
}

const char *dg_flat_eval_run(dg_flat *f, const char *ckpt, const dg_real *state, const dg_real *aux, int B,
                             const char *grad_out, const char *adversary, int noise_draws, int exploit, int *usage,
                             int *diverged, dg_err *e) {
    dg_eval_run_opts o = dg_eval_run_opts_default();
    o.ckpt = ckpt;
    o.state = state, o.aux = aux, o.B = B;
    o.grad_out = grad_out;
    o.adversary = adversary;
    o.noise_draws = noise_draws;
    o.exploit = exploit;
    if (usage) *usage = 0;
    if (diverged) *diverged = 0;
    dg_flat_keep_text(f, NULL);
    dg_eval_run_result r;
    const dg_status s = dg_eval_run(&f->r, &o, &r, e);
    if (s != DG_OK) {
        if (usage) *usage = r.usage;
        dg_eval_run_free(&r);
        return NULL;
    }
    if (r.bad[0]) {
        if (diverged) *diverged = 1;
        dg_err_set(e, DG_ERR_NONFINITE, "%s is not finite (the episode diverged)", r.bad);
    }
    const char *json = dg_flat_keep_text(f, r.json);
    r.json = NULL;
    dg_eval_run_free(&r);
    return json;
}
