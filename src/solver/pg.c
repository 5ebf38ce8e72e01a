/* The policy-gradient baseline (PPO or REINFORCE with a learned value): the learner, sampling on
 * plain data, GAE, minibatch Adam on the tape's gradient of the likelihood-ratio objective. Its
 * options are in pg_keys.c, the fixed evaluation batch and the learning curves in pg_curve.c. */
#include <tgmath.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "difgames/pg.h"
#include "difgames/trainer.h"
#include "solver/pg_internal.h"

#define LOG_2PI 1.8378770664093453

/* ------------------------------------------------------------------ types */

typedef struct pg_shard {
    dg_ctx   *ctx;
    dg_real    *gpi, *gv;                /* (policy total), (value total) this shard's gradients */
    double    pi_loss, v_loss, kl;     /* sums over the shard's samples of one step            */
    int       nclip;                   /* samples whose ratio left [1-c, 1+c]                  */
    dg_status status;
    char      err[256];
} pg_shard;

struct dg_pg {
    const dg_env *env;
    dg_pg_opts  o;
    dg_policy   pol;                   /* one player: pol.mlp[0] "net.*", obs -> mean action  */
    dg_params  *pp;                    /* net.*, log_std                                      */
    int         ilogstd;
    dg_mlp      vf;                    /* "value.*" hidden layers (tanh)                      */
    int         vw, vb;                /* the value's last, linear layer                      */
    dg_params  *pv;                    /* value.*                                             */
    dg_adam     adam_pi, adam_v;
    dg_rng      rng;
    int         nshards;
    pg_shard    sh[MAX_SHARDS];
    int         N;                     /* samples a batch: H · B, sample n = t · B + b         */
    dg_real      *state, *aux;           /* (B, S), (B, X): the episodes' current states        */
    dg_real      *noise;                 /* (N, A) ε of the batch                               */
    dg_real      *obs;                   /* (N, O)                                              */
    dg_real      *act;                   /* (N, A) unclipped sampled actions                    */
    dg_real      *logp;                  /* (N) log-probability when sampled                    */
    dg_real      *vraw;                  /* (N) the value net's output when sampled             */
    dg_real      *rew;                   /* (N) -Σ_i w_i term_i of that episode's step          */
    dg_real      *adv, *ret;             /* (N) normalised advantage, return target             */
    int        *perm;                  /* (N) minibatch order                                 */
    double      v_mean, v_std;         /* value = v_mean + v_std · net output (set on batch 1) */
    int         v_norm_set;
    int64_t     env_steps;
    int         iter;
};

/* ------------------------------------------------------- internal helpers */

/* The value of inputs x (M, O + 1): tanh hidden layers, then a linear layer -> (M, 1). */
static dg_tensor *value_forward(dg_ctx *ctx, const dg_pg *pg, dg_params *pv, dg_tensor *x) {
    dg_tensor *h = dg_mlp_forward(ctx, &pg->vf, pv, x);
    return dg_linear(ctx, h, dg_param(ctx, pv, pg->vw), dg_param(ctx, pv, pg->vb));
}

static int grads_finite(const dg_params *p) {
    dg_real acc = 0.0f;
    for (size_t i = 0; i < p->total; i++) acc += p->grad[i] * 0.0f;  /* NaN/inf poison the sum */
    return acc == 0.0f;
}

/* One sampled step t of rows [r0, r0 + rows), for dg_ctx_run: its tensors stay in the arena. */
typedef struct step_job {
    dg_pg       *pg;
    int          r0, rows, t;
    const dg_real *sigma;
    dg_tensor   *ob, *act, *lp, *v, *nx;
} step_job;

static dg_status rollout_step(dg_ctx *ctx, void *user) {
    step_job *jb = user;
    dg_pg *pg = jb->pg;
    const dg_env *env = pg->env;
    const dg_game *g = env->game;
    const int B = pg->o.batch, H = env->horizon, S = env->state_dim, X = env->aux_dim, A = env->act_dim;
    const int r0 = jb->r0, rows = jb->rows, t = jb->t;
    const size_t n0 = (size_t)t * B + r0;
    dg_tensor *st = dg_from(ctx, 2, (int[]){rows, S}, pg->state + (size_t)r0 * S);
    dg_tensor *ax = X ? dg_from(ctx, 2, (int[]){rows, X}, pg->aux + (size_t)r0 * X) : NULL;
    dg_tensor *ob = st ? g->observe(ctx, env, st, ax) : NULL;
    dg_tensor *mu = dg_mlp_forward(ctx, &pg->pol.mlp[0], pg->pp, ob);
    dg_tensor *tc = dg_full(ctx, 2, (int[]){rows, 1}, (dg_real)t / (dg_real)H);
    dg_tensor *v = value_forward(ctx, pg, pg->pv, dg_concat(ctx, (dg_tensor *[]){ob, tc}, 2, 1));
    dg_tensor *act = dg_new(ctx, 2, (int[]){rows, A});
    dg_tensor *acl = dg_new(ctx, 2, (int[]){rows, A});
    if (mu && act && acl) {
        for (int j = 0; j < rows; j++)
            for (int a = 0; a < A; a++) {
                const size_t k = (size_t)j * A + a;
                const dg_real x = mu->data[k] + jb->sigma[a] * pg->noise[(n0 + j) * A + a];
                act->data[k] = x;
                acl->data[k] = x < -1.0f ? -1.0f : x > 1.0f ? 1.0f : x;  /* what the game gets */
            }
    }
    dg_tensor *lp = dg_pg_log_prob(ctx, mu, dg_param(ctx, pg->pp, pg->ilogstd), act);
    /* a noisy game: the draws of step t + 1 of these batch rows, a new stream every iteration */
    const dg_noise nz = {dg_noise_key(pg->o.seed, (uint64_t)pg->iter + 1u), r0};
    dg_tensor *nx = lp && v ? dg_env_step_noise(ctx, env, t + 1, st, ax, acl, &nz) : NULL;
    if (nx) dg_pg_step_rewards(ctx, env, nx, ax, acl, pg->rew + n0);
    if (nx && t + 1 == H && g->terminal_cost)  /* the last step: each row's terminal cost, H times (as BPTT's) */
        for (int j = 0; j < rows && dg_ctx_status(ctx) == DG_OK; j++) {
            dg_tensor *tm[DG_LOSS_MAX_TERMS] = {0};
            g->terminal_cost(ctx, env, dg_rows(ctx, nx, j, 1), X ? dg_rows(ctx, ax, j, 1) : NULL, 1.0f, tm);
            double c = 0.0;
            for (int i = 0; i < env->nterms && dg_ctx_status(ctx) == DG_OK; i++)
                if (tm[i]) c += (double)env->term_weights[i] * tm[i]->data[0];
            pg->rew[n0 + j] -= (dg_real)(H * c);
        }
    *jb = (step_job){pg, r0, rows, t, jb->sigma, ob, act, lp, v, nx};
    return dg_ctx_status(ctx);
}

/* Rows [r0, r0 + rows) of the batch for the whole horizon, one step per arena
 * rewind: the states are plain data, so nothing flows back through the game.
 * Writes obs, act, logp, vraw, rew of those rows and advances pg->state. */
static dg_status rollout_shard(dg_pg *pg, pg_shard *sh, int r0, int rows) {
    const dg_env *env = pg->env;
    const int B = pg->o.batch, H = env->horizon, S = env->state_dim;
    const int O = env->obs_dim, A = env->act_dim;
    dg_real sigma[64];
    const dg_real *ls = dg_params_data(pg->pp, pg->ilogstd);
    for (int a = 0; a < A; a++) sigma[a] = exp(ls[a]);
    for (int t = 0; t < H; t++) {
        const size_t n0 = (size_t)t * B + r0;
        step_job jb = {pg, r0, rows, t, sigma, NULL, NULL, NULL, NULL, NULL};
        const dg_status st = dg_ctx_run(&sh->ctx, DG_ARENA_MAX, rollout_step, &jb);  /* a failed step keeps nothing */
        if (st != DG_OK) return st;
        memcpy(pg->obs + n0 * O, jb.ob->data, (size_t)rows * O * sizeof(dg_real));
        memcpy(pg->act + n0 * A, jb.act->data, (size_t)rows * A * sizeof(dg_real));
        for (int j = 0; j < rows; j++) {
            pg->logp[n0 + j] = jb.lp->data[j];
            pg->vraw[n0 + j] = jb.v->data[j];
        }
        memcpy(pg->state + (size_t)r0 * S, jb.nx->data, (size_t)rows * S * sizeof(dg_real));
    }
    return DG_OK;
}

/* Gradient of one minibatch part on a shard: samples idx[0..m) of the batch,
 * the policy objective (pi) or the value regression (not pi), each a sum over
 * the part scaled by inv_m (so the shards add up to the minibatch mean). */
typedef struct update_job {
    dg_pg      *pg;
    pg_shard   *sh;
    int         pi, m, add_entropy;
    const int  *idx;
    dg_real       inv_m;
} update_job;

static dg_status update_part(dg_ctx *ctx, void *user) {
    const update_job *jb = user;
    dg_pg *pg = jb->pg;
    pg_shard *sh = jb->sh;
    const int pi = jb->pi, m = jb->m, add_entropy = jb->add_entropy;
    const int *idx = jb->idx;
    const dg_real inv_m = jb->inv_m;
    const dg_env *env = pg->env;
    const int O = env->obs_dim, A = env->act_dim, H = env->horizon, B = pg->o.batch;
    dg_params pv = *pg->pv, pp = *pg->pp;  /* same values, this shard's gradient blocks */
    pp.grad = sh->gpi;
    pv.grad = sh->gv;
    memset(sh->gpi, 0, pg->pp->total * sizeof(dg_real));
    memset(sh->gv, 0, pg->pv->total * sizeof(dg_real));
    sh->pi_loss = sh->v_loss = sh->kl = 0.0;
    sh->nclip = 0;
    dg_tensor *ob = dg_new(ctx, 2, (int[]){m, O});
    dg_real *f1 = dg_ctx_alloc(ctx, (size_t)m * sizeof(dg_real));
    dg_real *f2 = dg_ctx_alloc(ctx, (size_t)m * sizeof(dg_real));
    if (!ob || !f1 || !f2) goto check;
    for (int j = 0; j < m; j++)
        memcpy(ob->data + (size_t)j * O, pg->obs + (size_t)idx[j] * O, (size_t)O * sizeof(dg_real));
    dg_tensor *loss = NULL;
    if (pi) {
        dg_tensor *act = dg_new(ctx, 2, (int[]){m, A});
        if (!act) goto check;
        for (int j = 0; j < m; j++) {
            memcpy(act->data + (size_t)j * A, pg->act + (size_t)idx[j] * A, (size_t)A * sizeof(dg_real));
            f1[j] = pg->logp[idx[j]];
            f2[j] = pg->adv[idx[j]];
        }
        dg_tensor *ls = dg_param(ctx, &pp, pg->ilogstd);
        dg_tensor *lp = dg_pg_log_prob(ctx, dg_mlp_forward(ctx, &pg->pol.mlp[0], &pp, ob), ls, act);
        loss = dg_pg_policy_loss(ctx, lp, f1, f2, (dg_real)pg->o.clip, inv_m);
        if (add_entropy && pg->o.ent_coef > 0.0) {  /* entropy Σ log σ + A/2 (1 + log 2π), once */
            dg_tensor *ent = dg_add_scalar(ctx, dg_sum(ctx, ls), (dg_real)(0.5 * A * (1.0 + LOG_2PI)));
            loss = dg_sub(ctx, loss, dg_scale(ctx, ent, (dg_real)pg->o.ent_coef));
        }
        if (lp && loss) {
            const double c = pg->o.clip;
            for (int j = 0; j < m; j++) {
                const double d = (double)f1[j] - lp->data[j];
                sh->kl += d;
                if (c > 0.0 && fabs(exp(-d) - 1.0) > c) sh->nclip++;
            }
            sh->pi_loss = loss->data[0];
        }
    } else {
        dg_tensor *tc = dg_new(ctx, 2, (int[]){m, 1});
        dg_tensor *tg = dg_new(ctx, 2, (int[]){m, 1});
        if (!tc || !tg) goto check;
        for (int j = 0; j < m; j++) {
            tc->data[j] = (dg_real)(idx[j] / B) / (dg_real)H;  /* sample n = t · B + b */
            tg->data[j] = (dg_real)((pg->ret[idx[j]] - pg->v_mean) / pg->v_std);
        }
        dg_tensor *v = value_forward(ctx, pg, &pv, dg_concat(ctx, (dg_tensor *[]){ob, tc}, 2, 1));
        loss = dg_scale(ctx, dg_sum(ctx, dg_square(ctx, dg_sub(ctx, v, tg))), inv_m);
        if (loss) sh->v_loss = loss->data[0];
    }
    if (loss) dg_backward(ctx, loss);
check:
    return dg_ctx_status(ctx);
}

static dg_status update_shard(dg_pg *pg, pg_shard *sh, int pi, const int *idx, int m, dg_real inv_m,
                              int add_entropy) {
    update_job jb = {pg, sh, pi, m, add_entropy, idx, inv_m};
    return dg_ctx_run(&sh->ctx, DG_ARENA_MAX, update_part, &jb);
}

/* One Adam step of the policy (pi) or the value on minibatch idx[0..m):
 * shards in parallel, gradients summed in shard order, clipped, applied
 * unless non-finite. Adds the objective and statistics into the sums. */
static dg_status update_step(dg_pg *pg, int pi, const int *idx, int m, double *loss_sum, double *kl_sum,
                             int *nclip, int *skipped, dg_err *e) {
    const int ns = pg->nshards < m ? pg->nshards : m;
    const dg_real inv_m = 1.0f / (dg_real)m;
#pragma omp parallel for num_threads(ns) schedule(static, 1)
    for (int s = 0; s < ns; s++) {
        const int a = (int)((int64_t)m * s / ns), b = (int)((int64_t)m * (s + 1) / ns);
        pg_shard *sh = &pg->sh[s];
        sh->status = update_shard(pg, sh, pi, idx + a, b - a, inv_m, s == 0);
        if (sh->status != DG_OK) snprintf(sh->err, sizeof sh->err, "%s", dg_ctx_error(sh->ctx));
    }
    dg_params *p = pi ? pg->pp : pg->pv;
    memset(p->grad, 0, p->total * sizeof(dg_real));
    for (int s = 0; s < ns; s++) {
        pg_shard *sh = &pg->sh[s];
        if (sh->status != DG_OK) return dg_err_set(e, sh->status, "policy gradient update: %s", sh->err);
        const dg_real *g = pi ? sh->gpi : sh->gv;
        for (size_t i = 0; i < p->total; i++) p->grad[i] += g[i];
        *loss_sum += pi ? sh->pi_loss : sh->v_loss;
        *kl_sum += sh->kl;
        *nclip += sh->nclip;
    }
    if (pi && !pg->o.learn_std)
        memset(dg_params_grad(p, pg->ilogstd), 0, (size_t)p->info[pg->ilogstd].n * sizeof(dg_real));
    if (!grads_finite(p)) {
        (*skipped)++;
        return DG_OK;
    }
    if (pg->o.max_grad_norm > 0) dg_clip_grad_norm(p, (dg_real)pg->o.max_grad_norm);
    dg_adam_step(pi ? &pg->adam_pi : &pg->adam_v, p);
    return DG_OK;
}

/* Fisher-Yates shuffle of pg->perm with the learner's RNG. */
static void shuffle(dg_pg *pg) {
    for (int i = pg->N - 1; i > 0; i--) {
        const int j = (int)(dg_rng_u64(&pg->rng) % (uint64_t)(i + 1));
        const int tmp = pg->perm[i];
        pg->perm[i] = pg->perm[j];
        pg->perm[j] = tmp;
    }
}

/* epochs passes over the batch in minibatches of about mb samples (0: all). */
static dg_status update_passes(dg_pg *pg, int pi, int epochs, int mb, dg_pg_stats *s, dg_err *e) {
    const int N = pg->N;
    const int nmb = mb <= 0 || mb >= N ? 1 : N / mb;
    for (int ep = 0; ep < epochs; ep++) {
        if (nmb > 1) shuffle(pg);
        double loss = 0.0, kl = 0.0;
        int nclip = 0;
        for (int k = 0; k < nmb; k++) {
            const int a = (int)((int64_t)N * k / nmb), b = (int)((int64_t)N * (k + 1) / nmb);
            dg_status st = update_step(pg, pi, pg->perm + a, b - a, &loss, &kl, &nclip, &s->skipped, e);
            if (st != DG_OK) return st;
        }
        if (pi) {
            s->pi_loss = loss / nmb;
            s->approx_kl = kl / N;
            s->clip_frac = (double)nclip / N;
        } else {
            s->v_loss = loss / nmb;
        }
    }
    return DG_OK;
}

/* Returns (value targets), advantages by GAE(γ, λ), advantages normalised. */
static void advantages(dg_pg *pg) {
    const int B = pg->o.batch, H = pg->env->horizon, N = pg->N;
    const double gamma = pg->o.gamma, lam = pg->o.lambda;
    if (!pg->v_norm_set) {
        /* the value's scale: mean and std of the first batch's discounted returns */
        double sum = 0.0, sq = 0.0;
        for (int b = 0; b < B; b++) {
            double G = 0.0;
            for (int t = H - 1; t >= 0; t--) {
                G = pg->rew[(size_t)t * B + b] + gamma * G;
                sum += G;
                sq += G * G;
            }
        }
        const double mean = sum / N, var = sq / N - mean * mean;
        pg->v_mean = mean;
        pg->v_std = var > 1e-12 ? sqrt(var) : 1.0;
        pg->v_norm_set = 1;
    }
    for (int b = 0; b < B; b++) {
        double gae = 0.0, v_next = 0.0;  /* the episode ends at H: nothing after it */
        for (int t = H - 1; t >= 0; t--) {
            const size_t n = (size_t)t * B + b;
            const double v = pg->v_mean + pg->v_std * pg->vraw[n];
            const double delta = pg->rew[n] + gamma * v_next - v;
            gae = delta + gamma * lam * gae;
            pg->adv[n] = (dg_real)gae;
            pg->ret[n] = (dg_real)(gae + v);
            v_next = v;
        }
    }
    double sum = 0.0, sq = 0.0;
    for (int n = 0; n < N; n++) sum += pg->adv[n];
    const double mean = sum / N;
    for (int n = 0; n < N; n++) sq += (pg->adv[n] - mean) * (pg->adv[n] - mean);
    const double sd = sqrt(sq / N);
    for (int n = 0; n < N; n++) pg->adv[n] = (dg_real)((pg->adv[n] - mean) / (sd + 1e-8));
}

/* ------------------------------------------------------- public functions */

void dg_pg_free(dg_pg *pg) {
    if (!pg) return;
    for (int s = 0; s < pg->nshards; s++) {
        dg_ctx_free(pg->sh[s].ctx);
        free(pg->sh[s].gpi);
        free(pg->sh[s].gv);
    }
    dg_adam_free(&pg->adam_pi);
    dg_adam_free(&pg->adam_v);
    dg_params_free(pg->pp);
    dg_params_free(pg->pv);
    free(pg->state);
    free(pg->aux);
    free(pg->noise);
    free(pg->obs);
    free(pg->act);
    free(pg->logp);
    free(pg->vraw);
    free(pg->rew);
    free(pg->adv);
    free(pg->ret);
    free(pg->perm);
    free(pg);
}

/* The arena of one of shards shards, with a quarter to spare: it holds one sampled step of its rows
 * (forward), or the gradient of its part of a minibatch through the policy or the value: per sample
 * about three floats a layer width (value, gradient, tanh's output) and a few for the
 * log-probability and the clipped objective. dg_pg_create sizes the arenas with it, dg_pg_memory
 * counts it. */
static double shard_arena(const dg_env *env, const dg_pg_opts *o, double shards) {
    const double B = o->batch, N = B * env->horizon, O = env->obs_dim, A = env->act_dim;
    double hid = 0;
    for (int i = 0; i < o->nhidden; i++) hid += o->hidden[i];
    const double m = fmax(o->minibatch > 0 && o->minibatch < N ? o->minibatch : N,
                          o->vf_minibatch > 0 && o->vf_minibatch < N ? o->vf_minibatch : N);
    /* a step's rewards come from step_cost on each row alone: its tensors (headers, alignment)
     * once a row, measured about 9 KiB */
    const double step = dg_rollout_memory(env, o->hidden, o->nhidden, ceil(B / shards), 1, 0) + ceil(B / shards) * 12288.0;
    const double upd = ceil(m / shards) * (3 * (O + 1 + hid + A) + 8 * A + 16) * sizeof(dg_real) + 65536;
    return 1.25 * fmax(step, upd);
}

double dg_pg_memory(const dg_env *env, const dg_pg_opts *o, int eval_batch) {
    const double B = o->batch, H = env->horizon, N = B * H, O = env->obs_dim, A = env->act_dim;
    const double S = env->state_dim, X = env->aux_dim ? env->aux_dim : 1;
    const double shards = fmin(o->threads < o->batch ? (o->threads > 0 ? o->threads : 1) : o->batch, MAX_SHARDS);
    /* the batch: samples (noise, obs, act, logp, vraw, rew, adv, ret, perm) and states */
    double bytes = N * (O + 2 * A + 6) * sizeof(dg_real) + B * (S + X) * sizeof(dg_real);
    bytes += shards * shard_arena(env, o, shards);
    /* parameters (policy and value), gradients, Adam moments, one gradient per shard */
    double params = 0, in = O;
    for (int i = 0; i < o->nhidden; i++) {
        params += 2 * (in * o->hidden[i] + o->hidden[i]);  /* policy and value */
        in = o->hidden[i];
    }
    params += in * A + 2 * A + in + 1 + (O + 1) * (o->nhidden ? o->hidden[0] : 0);
    bytes += params * sizeof(dg_real) * (4 + shards);
    /* the fixed evaluation batch: its states, and each shard's whole-episode forward tape */
    if (eval_batch > 0)
        bytes += (double)eval_batch * (S + X) * sizeof(dg_real) * 2 +
                 shards * eval_arena(env, o->hidden, o->nhidden, ceil(eval_batch / shards));
    return bytes + 1048576.0;
}

dg_pg *dg_pg_create(const dg_env *env, const dg_pg_opts *o, dg_err *e) {
    if (o->batch < 1 || o->nhidden < 1 || o->nhidden >= DG_MLP_MAX_LAYERS || o->threads < 1 ||
        o->pi_epochs < 0 || o->vf_epochs < 0 || o->minibatch < 0 || o->vf_minibatch < 0 ||
        !(o->lr >= 0) || !(o->vf_lr >= 0) || !(o->gamma >= 0 && o->gamma <= 1) ||
        !(o->lambda >= 0 && o->lambda <= 1) || !isfinite(o->log_std0) || !(o->clip < 1.0)) {
        dg_err_set(e, DG_ERR_ARG, "policy gradient: invalid options (batch %d, %d hidden layers, "
                   "threads %d, epochs %d/%d, lr %g/%g, gamma %g, lambda %g, clip %g)", o->batch,
                   o->nhidden, o->threads, o->pi_epochs, o->vf_epochs, o->lr, o->vf_lr, o->gamma,
                   o->lambda, o->clip);
        return NULL;
    }
    if (env->nplayers > 1) {
        dg_err_set(e, DG_ERR_ARG, "policy gradient: %s has a learned second player; only "
                   "one-player games are supported", env->game->name);
        return NULL;
    }
    if (env->act_dim > 64) {
        dg_err_set(e, DG_ERR_ARG, "policy gradient: at most 64 action dimensions, not %d", env->act_dim);
        return NULL;
    }
    const double n = (double)o->batch * env->horizon;
    if (n * (env->obs_dim + 3.0 * env->act_dim + 8) * sizeof(dg_real) > 8e9 || n > 2e9) {
        dg_err_set(e, DG_ERR_ARG, "policy gradient: batch %d x horizon %d is too large", o->batch,
                   env->horizon);
        return NULL;
    }
    dg_pg *pg = calloc(1, sizeof *pg);
    if (!pg) {
        dg_err_set(e, DG_ERR_NOMEM, "out of memory");
        return NULL;
    }
    pg->env = env;
    pg->o = *o;
    pg->N = o->batch * env->horizon;
    const int O = env->obs_dim, A = env->act_dim, N = pg->N, nh = o->nhidden;
    dg_rng_seed(&pg->rng, o->seed);
    /* the policy first, from the fresh RNG: the BPTT trainer's initial policy */
    pg->pp = dg_params_create();
    pg->pv = dg_params_create();
    if (!pg->pp || !pg->pv) {
        dg_err_set(e, DG_ERR_NOMEM, "out of memory");
        goto fail;
    }
    if (dg_mlp_init(&pg->pol.mlp[0], pg->pp, "net", O, o->hidden, nh, A, e) != DG_OK) goto fail;
    dg_mlp_reset_params(&pg->pol.mlp[0], pg->pp, &pg->rng);
    if ((pg->ilogstd = dg_params_add(pg->pp, "log_std", 1, (int[]){A}, e)) < 0) goto fail;
    for (int a = 0; a < A; a++) dg_params_data(pg->pp, pg->ilogstd)[a] = (dg_real)o->log_std0;
    /* value.0 ... value.2(nh-1) tanh layers, value.2nh linear to one output (PyTorch init) */
    if (dg_mlp_init(&pg->vf, pg->pv, "value", O + 1, o->hidden, nh - 1, o->hidden[nh - 1], e) != DG_OK)
        goto fail;
    char name[64];
    snprintf(name, sizeof name, "value.%d.weight", 2 * nh);
    if ((pg->vw = dg_params_add(pg->pv, name, 2, (int[]){1, o->hidden[nh - 1]}, e)) < 0) goto fail;
    snprintf(name, sizeof name, "value.%d.bias", 2 * nh);
    if ((pg->vb = dg_params_add(pg->pv, name, 1, (int[]){1}, e)) < 0) goto fail;
    dg_mlp_reset_params(&pg->vf, pg->pv, &pg->rng);
    const dg_real k = 1.0f / sqrt((dg_real)o->hidden[nh - 1]);
    for (int i = 0; i < o->hidden[nh - 1]; i++) dg_params_data(pg->pv, pg->vw)[i] = dg_rng_uniform(&pg->rng, -k, k);
    dg_params_data(pg->pv, pg->vb)[0] = dg_rng_uniform(&pg->rng, -k, k);
    if (dg_adam_init(&pg->adam_pi, pg->pp, o->lr, 0.9, 0.999, 1e-5, 0.0) != DG_OK ||
        dg_adam_init(&pg->adam_v, pg->pv, o->vf_lr, 0.9, 0.999, 1e-5, 0.0) != DG_OK) {
        dg_err_set(e, DG_ERR_NOMEM, "out of memory for Adam");
        goto fail;
    }
    const int X = env->aux_dim ? env->aux_dim : 1;
    pg->state = malloc((size_t)o->batch * env->state_dim * sizeof(dg_real));
    pg->aux = malloc((size_t)o->batch * X * sizeof(dg_real));
    pg->noise = malloc((size_t)N * A * sizeof(dg_real));
    pg->obs = malloc((size_t)N * O * sizeof(dg_real));
    pg->act = malloc((size_t)N * A * sizeof(dg_real));
    pg->logp = malloc((size_t)N * sizeof(dg_real));
    pg->vraw = malloc((size_t)N * sizeof(dg_real));
    pg->rew = malloc((size_t)N * sizeof(dg_real));
    pg->adv = malloc((size_t)N * sizeof(dg_real));
    pg->ret = malloc((size_t)N * sizeof(dg_real));
    pg->perm = malloc((size_t)N * sizeof(int));
    if (!pg->state || !pg->aux || !pg->noise || !pg->obs || !pg->act || !pg->logp || !pg->vraw ||
        !pg->rew || !pg->adv || !pg->ret || !pg->perm) {
        dg_err_set(e, DG_ERR_NOMEM, "out of memory for a batch of %d samples", N);
        goto fail;
    }
    for (int i = 0; i < N; i++) pg->perm[i] = i;
    pg->nshards = o->threads < o->batch ? o->threads : o->batch;
    if (pg->nshards > MAX_SHARDS) pg->nshards = MAX_SHARDS;
    /* what dg_pg_memory counts; dg_ctx_run grows it if it falls short */
    const size_t arena = (size_t)fmin(shard_arena(env, o, pg->nshards), (double)DG_ARENA_MAX);
    for (int s = 0; s < pg->nshards; s++) {
        pg_shard *sh = &pg->sh[s];
        sh->ctx = dg_ctx_create(arena > ARENA0 ? arena : ARENA0);
        sh->gpi = malloc(pg->pp->total * sizeof(dg_real));
        sh->gv = malloc(pg->pv->total * sizeof(dg_real));
        if (!sh->ctx || !sh->gpi || !sh->gv) {
            dg_err_set(e, DG_ERR_NOMEM, "out of memory for a shard");
            pg->nshards = s + 1;
            goto fail;
        }
    }
    return pg;
fail:
    dg_pg_free(pg);
    return NULL;
}

dg_status dg_pg_iterate(dg_pg *pg, dg_pg_stats *out, dg_err *e) {
    const double t0 = 1e3 * dg_clock_s();
    const dg_env *env = pg->env;
    const int B = pg->o.batch, A = env->act_dim, N = pg->N;
    dg_pg_stats s = {.iter = pg->iter + 1};
    /* everything random is drawn here, in one order, whatever the thread count */
    dg_status st0 = env->game->reset(env, &pg->rng, B, pg->state, pg->aux, e);
    if (st0 != DG_OK) return st0;
    for (size_t i = 0; i < (size_t)N * A; i++) pg->noise[i] = dg_rng_normal(&pg->rng, 0.0f, 1.0f);
    const int ns = pg->nshards;
#pragma omp parallel for num_threads(ns) schedule(static, 1)
    for (int k = 0; k < ns; k++) {
        const int r0 = (int)((int64_t)B * k / ns), r1 = (int)((int64_t)B * (k + 1) / ns);
        pg_shard *sh = &pg->sh[k];
        sh->status = rollout_shard(pg, sh, r0, r1 - r0);
        if (sh->status != DG_OK) snprintf(sh->err, sizeof sh->err, "%s", dg_ctx_error(sh->ctx));
    }
    for (int k = 0; k < ns; k++)
        if (pg->sh[k].status != DG_OK)
            return dg_err_set(e, pg->sh[k].status, "policy gradient rollout: %s", pg->sh[k].err);
    double cost = 0.0;
    for (int n = 0; n < N; n++) cost -= pg->rew[n];
    s.sample_loss = cost / N;  /* Σ_t mean_b cost / H */
    pg->env_steps += N;
    advantages(pg);
    dg_status st = update_passes(pg, 1, pg->o.pi_epochs, pg->o.minibatch, &s, e);
    if (st == DG_OK) st = update_passes(pg, 0, pg->o.vf_epochs, pg->o.vf_minibatch, &s, e);
    if (st != DG_OK) return st;
    double sd = 0.0;
    for (int a = 0; a < A; a++) sd += exp((double)dg_params_data(pg->pp, pg->ilogstd)[a]);
    s.std = sd / A;
    s.env_steps = pg->env_steps;
    s.ms = 1e3 * dg_clock_s() - t0;
    pg->iter++;
    if (out) *out = s;
    return DG_OK;
}

int64_t dg_pg_env_steps(const dg_pg *pg) { return pg->env_steps; }
const dg_policy *dg_pg_policy(const dg_pg *pg) { return &pg->pol; }
dg_params *dg_pg_policy_params(dg_pg *pg) { return pg->pp; }
dg_params *dg_pg_value_params(dg_pg *pg) { return pg->pv; }

dg_status dg_pg_step_rewards(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux,
                             dg_tensor *action, dg_real *rew) {
    if (!next || !action || (env->aux_dim && !aux)) {
        dg_ctx_fail(ctx, DG_ERR_ARG, "policy gradient rewards: missing input");
        return dg_ctx_status(ctx);
    }
    const int B = next->shape[0];
    /* the game's step_cost on each row alone: a batch of one, so its means are that row's costs */
    for (int j = 0; j < B && dg_ctx_status(ctx) == DG_OK; j++) {
        dg_tensor *tm[DG_LOSS_MAX_TERMS] = {0};
        env->game->step_cost(ctx, env, dg_rows(ctx, next, j, 1), env->aux_dim ? dg_rows(ctx, aux, j, 1) : NULL,
                             dg_rows(ctx, action, j, 1), 1.0f, tm);
        if (dg_ctx_status(ctx) != DG_OK) break;
        double c = 0.0;
        for (int i = 0; i < env->nterms; i++) c += (double)env->term_weights[i] * tm[i]->data[0];
        rew[j] = (dg_real)-c;
    }
    return dg_ctx_status(ctx);
}

dg_tensor *dg_pg_log_prob(dg_ctx *ctx, dg_tensor *mean, dg_tensor *log_std, dg_tensor *action) {
    if (!mean || !log_std || !action) return NULL;
    const int A = mean->shape[mean->ndim - 1];
    dg_tensor *z = dg_mul(ctx, dg_sub(ctx, action, mean), dg_exp(ctx, dg_neg(ctx, log_std)));
    dg_tensor *q = dg_scale(ctx, dg_sum_axis(ctx, dg_square(ctx, z), 1), -0.5f);
    return dg_add_scalar(ctx, dg_sub(ctx, q, dg_sum(ctx, log_std)), (dg_real)(-0.5 * A * LOG_2PI));
}

dg_tensor *dg_pg_policy_loss(dg_ctx *ctx, dg_tensor *logp, const dg_real *logp_old, const dg_real *adv,
                             dg_real clip, dg_real inv_m) {
    if (!logp) return NULL;
    const int m = logp->shape[0];
    dg_tensor *old = dg_from(ctx, 2, (int[]){m, 1}, logp_old);
    dg_tensor *A = dg_from(ctx, 2, (int[]){m, 1}, adv);
    dg_tensor *r = dg_exp(ctx, dg_sub(ctx, logp, old));
    dg_tensor *s1 = dg_mul(ctx, r, A);
    dg_tensor *obj = s1;
    if (clip > 0.0f) {
        /* clip(r, 1-c, 1+c) = (1-c) + relu(r - (1-c)) - relu(r - (1+c)); min(x, y) = x - relu(x - y) */
        dg_tensor *rc = dg_add_scalar(ctx, dg_sub(ctx, dg_relu(ctx, dg_add_scalar(ctx, r, -(1.0f - clip))),
                                                  dg_relu(ctx, dg_add_scalar(ctx, r, -(1.0f + clip)))),
                                      1.0f - clip);
        dg_tensor *s2 = dg_mul(ctx, rc, A);
        obj = dg_sub(ctx, s1, dg_relu(ctx, dg_sub(ctx, s1, s2)));
    }
    return dg_scale(ctx, dg_sum(ctx, obj), -inv_m);
}
