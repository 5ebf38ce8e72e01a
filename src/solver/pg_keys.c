/* The policy-gradient baseline's options: the pg.* keys (declared once, with their defaults,
 * bounds and docs), REINFORCE's own defaults, and the algorithms' names. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "difgames/keys.h"
#include "difgames/pg.h"
#include "difgames/trainer.h"

/* The pg.* keys as read; dg_pg_opts and dg_pg_schedule take them over. */
typedef struct pg_keys {
    int    algo, batch, learn_std, pi_epochs, vf_epochs, minibatch, vf_minibatch;
    int    iters, stop_after, eval_batch, eval_seed, evals_per_decade;
    double lr, vf_lr, log_std0, gamma, lambda, clip, ent_coef, max_grad_norm, max_steps, stop_below;
} pg_keys;

static const char *const ALGOS[] = {"ppo", "reinforce", NULL};  /* dg_pg_algo order */

/* Defaults are PPO's; REINFORCE's differ where REINFORCE_DEFAULTS says. */
static const dg_key PG_KEYS[] = {
    DG_K_ENUM("pg.algo", pg_keys, algo, DG_PG_ALGO_PPO, ALGOS, "algorithm",
              "policy-gradient algorithm: PPO, or REINFORCE with a learned value baseline"),
    DG_K_INT("pg.batch", pg_keys, batch, 32, 1, 1 << 20, "episodes per iteration (batch x horizon samples)"),
    DG_K_F64("pg.lr", pg_keys, lr, 3e-4, 0, 10, 1, 1, "policy Adam rate (reinforce: 0.001)"),
    DG_K_F64("pg.vf_lr", pg_keys, vf_lr, 1e-3, 0, 10, 1, 1, "value Adam rate"),
    DG_K_F64("pg.log_std", pg_keys, log_std0, -0.5, -20, 5, 1, 1, "initial log sigma of the Gaussian actions"),
    DG_K_BOOL("pg.learn_std", pg_keys, learn_std, 1, "learn log sigma (false: it stays pg.log_std)"),
    DG_K_F64("pg.gamma", pg_keys, gamma, 0.99, 0, 1, 1, 1, "discount"),
    DG_K_F64("pg.lambda", pg_keys, lambda, 0.95, 0, 1, 1, 1, "GAE lambda (reinforce: 1, reward-to-go)"),
    DG_K_F64("pg.clip_ratio", pg_keys, clip, 0.2, 0, 0.999, 1, 1, "PPO ratio clip (0: unclipped; reinforce: 0)"),
    DG_K_INT("pg.epochs_per_iter", pg_keys, pi_epochs, 10, 1, 1000, "policy passes over a batch (reinforce: 1)"),
    DG_K_INT("pg.vf_epochs", pg_keys, vf_epochs, 10, 0, 1000, "value passes over a batch"),
    DG_K_INT("pg.minibatch", pg_keys, minibatch, 256, 0, 1 << 30,
             "samples per policy step (0: the whole batch; reinforce: 0)"),
    DG_K_INT("pg.vf_minibatch", pg_keys, vf_minibatch, 256, 0, 1 << 30, "samples per value step (0: the whole batch)"),
    DG_K_F64("pg.ent_coef", pg_keys, ent_coef, 0, 0, 100, 1, 1, "entropy bonus weight"),
    DG_K_F64("pg.max_grad_norm", pg_keys, max_grad_norm, 0.5, 0, INFINITY, 1, 0,
             "global gradient-norm clipping of each network (0: off)"),
    DG_K_INT("pg.iters", pg_keys, iters, 500, 1, DG_MAX_EPOCHS,
             "iterations (left out: no limit when pg.max_steps is set)"),
    DG_K_F64("pg.max_steps", pg_keys, max_steps, 0, 0, 1e15, 1, 1,
             "stop after this many sampled env steps (0: no limit)"),
    DG_K_F64("pg.stop_below", pg_keys, stop_below, -INFINITY, -INFINITY, INFINITY, 1, 1,
             "stop once the evaluation loss is <= this ..."),
    DG_K_INT("pg.stop_after", pg_keys, stop_after, 1, 1, DG_MAX_EPOCHS, "... at this many evaluations in a row"),
    DG_K_INT("pg.eval_batch", pg_keys, eval_batch, 256, 1, 1 << 20, "episodes of the fixed evaluation batch"),
    DG_K_INT("pg.eval_seed", pg_keys, eval_seed, 1000003, 0, 2147483647,
             "seed of the evaluation batch (the same for every seed)"),
    DG_K_INT("pg.evals_per_decade", pg_keys, evals_per_decade, 40, 1, 1000,
             "evaluations at env steps 10^(k / this)"),
};
#define NKEYS ((int)(sizeof PG_KEYS / sizeof PG_KEYS[0]))

/* REINFORCE's defaults, where they are not the table's: lambda 1 (reward-to-go minus the value),
 * one full-batch, unclipped policy step a batch, lr 1e-3. */
static const struct {
    const char *name;
    size_t      offset;
    int         is_int;
    double      v;
} REINFORCE_DEFAULTS[] = {
    {"pg.lr", offsetof(pg_keys, lr), 0, 1e-3},         {"pg.lambda", offsetof(pg_keys, lambda), 0, 1.0},
    {"pg.clip_ratio", offsetof(pg_keys, clip), 0, 0.0}, {"pg.epochs_per_iter", offsetof(pg_keys, pi_epochs), 1, 1},
    {"pg.minibatch", offsetof(pg_keys, minibatch), 1, 0},
};

/* Sets the keys of REINFORCE_DEFAULTS that cfg (NULL: none) leaves out to REINFORCE's defaults. */
static void reinforce_defaults(pg_keys *k, dg_cfg *cfg) {
    for (size_t i = 0; i < sizeof REINFORCE_DEFAULTS / sizeof REINFORCE_DEFAULTS[0]; i++) {
        if (cfg && dg_cfg_has(cfg, REINFORCE_DEFAULTS[i].name)) continue;
        char *at = (char *)k + REINFORCE_DEFAULTS[i].offset;
        if (REINFORCE_DEFAULTS[i].is_int) *(int *)at = (int)REINFORCE_DEFAULTS[i].v;
        else *(double *)at = REINFORCE_DEFAULTS[i].v;
    }
}

static void opts_from_keys(const pg_keys *k, const dg_train_opts *t, dg_pg_opts *o) {
    memset(o, 0, sizeof *o);
    o->algo = (dg_pg_algo)k->algo;
    o->seed = t->seed;
    o->batch = k->batch;
    memcpy(o->hidden, t->hidden, sizeof o->hidden);
    o->nhidden = t->nhidden;
    o->lr = k->lr;
    o->vf_lr = k->vf_lr;
    o->gamma = k->gamma;
    o->lambda = k->lambda;
    o->clip = k->clip;
    o->pi_epochs = k->pi_epochs;
    o->vf_epochs = k->vf_epochs;
    o->minibatch = k->minibatch;
    o->vf_minibatch = k->vf_minibatch;
    o->log_std0 = k->log_std0;
    o->learn_std = k->learn_std;
    o->ent_coef = k->ent_coef;
    o->max_grad_norm = k->max_grad_norm;
    o->threads = t->threads;
}

/* Fills o with algo's defaults (the table's, REINFORCE_DEFAULTS for REINFORCE) and the training
 * defaults' seed 0, one thread and 64x64 networks: batch 32 episodes, Adam (policy 3e-4, value
 * 1e-3), gamma 0.99, sigma0 = exp(-0.5), learned, clipping 0.5; PPO: lambda 0.95, clip 0.2, 10
 * epochs of minibatches of 256 for both networks; REINFORCE: lambda 1 (reward-to-go minus the
 * value), one full-batch policy step, lr 1e-3, and 10 value epochs of minibatches of 256. */
void dg_pg_opts_default(dg_pg_opts *o, dg_pg_algo algo) {
    pg_keys k;
    memset(&k, 0, sizeof k);
    dg_keys_defaults(PG_KEYS, NKEYS, &k);
    k.algo = (int)algo;
    if (algo == DG_PG_ALGO_REINFORCE) reinforce_defaults(&k, NULL);
    dg_train_opts t;
    dg_train_opts_default(&t);
    opts_from_keys(&k, &t, o);
}

dg_status dg_pg_opts_read(dg_cfg *cfg, dg_pg_opts *o, dg_pg_schedule *s, dg_err *e) {
    dg_train_opts t;
    pg_keys k;
    memset(&k, 0, sizeof k);
    dg_status st = dg_train_opts_read(cfg, &t, e);
    if (st == DG_OK) st = dg_keys_read(cfg, PG_KEYS, NKEYS, &k, e);
    if (st != DG_OK) return st;
    if (k.algo == DG_PG_ALGO_REINFORCE) reinforce_defaults(&k, cfg);
    if (k.max_steps > 0 && !dg_cfg_has(cfg, "pg.iters")) k.iters = 0;  /* a budget of steps alone */
    opts_from_keys(&k, &t, o);
    if (s)
        *s = (dg_pg_schedule){.iters = k.iters, .max_steps = (int64_t)k.max_steps, .stop_below = k.stop_below,
                              .stop_after = k.stop_after, .eval_batch = k.eval_batch,
                              .eval_seed = (uint64_t)k.eval_seed, .evals_per_decade = k.evals_per_decade};
    return DG_OK;
}

const dg_key *dg_pg_keys(int *n) {
    *n = NKEYS;
    return PG_KEYS;
}

const char *dg_pg_algo_name(dg_pg_algo algo) { return ALGOS[algo == DG_PG_ALGO_REINFORCE]; }

int dg_pg_algo_parse(const char *name, dg_pg_algo *algo) {
    for (int i = 0; ALGOS[i]; i++)
        if (!strcmp(name, ALGOS[i])) {
            *algo = (dg_pg_algo)i;
            return 1;
        }
    return 0;
}
