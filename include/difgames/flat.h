/* difgames flat: a run behind one handle, its numbers in caller-owned flat arrays.
 *
 * What a program that cannot see C structs needs of a run (a foreign-function caller: the Python
 * package, python/difgames, calls it through ctypes): open a config with overrides, ask its sizes
 * and names, draw initial states, observe and step on arrays, play one episode for given parameters
 * and initial states with its loss, terms and parameter gradient (the trainer's BPTT), load and
 * save checkpoints, and train it (dg_run_train). Every array is row-major dg_real (float32, or
 * double in the double copy: dg64_flat_*, difgames/real.h) and the caller's; nothing here keeps a
 * pointer to one after the call.
 *
 *     dg_err e = {0};
 *     dg_flat *f = dg_flat_open("configs/reach.yaml", (const char *[]){"env.horizon"}, (const char *[]){"10"}, 1, &e);
 *     const int64_t S = dg_flat_dim(f, DG_FLAT_STATE), A = dg_flat_dim(f, DG_FLAT_AUX), P = dg_flat_dim(f, DG_FLAT_TOTAL);
 *     float *state = malloc(64 * S * 4), *aux = malloc(64 * (A ? A : 1) * 4), *w = malloc(P * 4), *g = malloc(P * 4);
 *     double loss;
 *     dg_flat_init(f, 0, w, 0, 0, NULL, NULL, &e);             // the parameters `difgames train` starts from
 *     dg_flat_reset(f, 0, 64, state, aux, &e);
 *     dg_flat_episode(f, w, state, aux, 64, 1, &loss, NULL, g, NULL, NULL, &e);  // g = d loss / d w
 *     dg_flat_free(f);
 */
#ifndef DIFGAMES_FLAT_H
#define DIFGAMES_FLAT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "difgames/api.h"
#include "difgames/real.h"
#include "difgames/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dg_flat dg_flat;  /* a run (dg_run), its policy and parameters, a tape; opaque */

/* What dg_flat_dim tells. */
typedef enum dg_flat_what {
    DG_FLAT_STATE,     /* state columns                                              */
    DG_FLAT_AUX,       /* episode-constant columns (0: none; arrays still get one)   */
    DG_FLAT_OBS,       /* the agent's (pursuer's) observation columns                */
    DG_FLAT_ACT,       /* its action columns                                         */
    DG_FLAT_PLAYERS,   /* learned players: 1 or 2                                    */
    DG_FLAT_OBS2,      /* the evader's observation columns (two players)             */
    DG_FLAT_ACT2,      /* its action columns                                         */
    DG_FLAT_HORIZON,   /* steps of an episode                                        */
    DG_FLAT_TERMS,     /* loss terms                                                 */
    DG_FLAT_METRICS,   /* episode metrics                                            */
    DG_FLAT_PARAMS,    /* parameter tensors                                          */
    DG_FLAT_TOTAL,     /* parameter elements, all tensors side by side               */
    DG_FLAT_BATCH,     /* train.batch                                                */
    DG_FLAT_EPOCHS,    /* train.epochs                                               */
    DG_FLAT_SEED,      /* seed                                                       */
    DG_FLAT_OPEN_LOOP, /* 1: train.mode open_loop (the parameters are plans)         */
    DG_FLAT_REAL,      /* bytes of a dg_real: 4, or 8 in the double copy             */
    DG_FLAT_AUX_USER,  /* the aux columns a user gives (the rest the game completes) */
    DG_FLAT_THREADS,   /* train.threads as read (0: one per core)                    */
    DG_FLAT_GENERAL_SUM, /* 1: a general-sum game (each player its own cost)          */
    DG_FLAT_EXPLOIT_EPOCHS, /* train.exploit_epochs                                    */
    DG_FLAT_NOISE,     /* the game's noise columns (0: deterministic)                 */
} dg_flat_what;

/* What dg_flat_name names. */
typedef enum dg_flat_kind {
    DG_FLAT_TERM,      /* loss term i                                                 */
    DG_FLAT_METRIC,    /* episode metric i                                            */
    DG_FLAT_PARAM,     /* parameter tensor i ("net.0.weight": the checkpoint's names) */
    DG_FLAT_GAME,      /* the game's name (i unused)                                  */
    DG_FLAT_SOURCE,    /* where it comes from: builtin, model, plugin (dg_env_source) */
    DG_FLAT_AUX_NAME,  /* the aux tensor's name in an initial-states file ("goal")    */
    DG_FLAT_CONFIG,    /* the config's path or label                                  */
    DG_FLAT_PLAYER,    /* player i's name ("pursuer", a model's model.players name)   */
    DG_FLAT_SAFETY_MODE, /* safety.mode's name when safety.value is set, else NULL     */
    DG_FLAT_METRIC_UNDEFINED, /* why metric i may be undefined (NaN by construction), else NULL */
} dg_flat_kind;

/* Every key name a config may set, one a line (each ends with '\n') into buf (n bytes, NUL-terminated
 * when it fits): the keys of the key tables that read it (a training config: seed, train.*, policy.*,
 * pg.*, safety.*, env.dt, env.horizon and its game's keys; an HJI config: the grid solver's and its
 * game's) and every key written in the file. Returns the bytes it needs, NUL included (call again
 * with more room when that is above n), or -1 with e set (the file cannot be read or parsed). */
DG_API int64_t dg_flat_keys(const char *path, char *buf, size_t n, dg_err *e);
/* train.precision of the config at path with the n keys set to values (dg_run_doc_read): 0 (f32) or
 * 1 (f64), which copy opens it; -1 with e set. */
DG_API int dg_flat_precision(const char *path, const char *const *keys, const char *const *values, int n, dg_err *e);
/* Opens the config at path with the n keys set to values (in order): its game, options, policy
 * (parameters reset from seed) and a tape. NULL with e set: the config's error, or
 * DG_ERR_CONFIG when train.precision is not this copy's (open it with the other). */
DG_API dg_flat *dg_flat_open(const char *path, const char *const *keys, const char *const *values, int n, dg_err *e);
DG_API void     dg_flat_free(dg_flat *f);                              /* NULL is harmless */
/* A size or option of f (dg_flat_what); -1 for an unknown what. */
DG_API int64_t     dg_flat_dim(const dg_flat *f, int what);
/* A name of f (dg_flat_kind), owned by f; NULL past the last or for an unknown kind. */
DG_API const char *dg_flat_name(const dg_flat *f, int kind, int i);
/* Parameter tensor i's shape into shape (room for 8); returns its dimensions, or -1 past the last.
 * Its elements start at dg_flat_offset(f, i) in the flat parameter array. */
DG_API int         dg_flat_param_shape(const dg_flat *f, int i, int *shape);
DG_API int64_t     dg_flat_offset(const dg_flat *f, int i);

/* What `difgames train` starts from with this seed: the policy's parameters (params, DG_FLAT_TOTAL;
 * may be NULL) and then nbatch batches of B rows drawn one after the other from the same generator
 * (state (nbatch, B, state), aux (nbatch, B, max(aux, 1))), the batches of its first nbatch epochs
 * (train.fixed_batch: the first is every epoch's). DG_OK, or the game's reset error. */
DG_API dg_status dg_flat_init(dg_flat *f, uint64_t seed, dg_real *params, int nbatch, int B, dg_real *state,
                              dg_real *aux, dg_err *e);
/* B initial states drawn by the game's reset from seed (dg_run_init_draw): state (B, state), aux
 * (B, max(aux, 1)). */
DG_API dg_status dg_flat_reset(const dg_flat *f, uint64_t seed, int B, dg_real *state, dg_real *aux, dg_err *e);
/* The players' observations of B states: obs (B, obs) and, with two players, obs2 (B, obs2) (may be
 * NULL with one). */
DG_API dg_status dg_flat_observe(dg_flat *f, int B, const dg_real *state, const dg_real *aux, dg_real *obs,
                                 dg_real *obs2, dg_err *e);
/* One step of the game from B states with action (B, act + act2: both players' columns side by side)
 * into next (B, state). */
DG_API dg_status dg_flat_step(dg_flat *f, int B, const dg_real *state, const dg_real *aux, const dg_real *action,
                              dg_real *next, dg_err *e);
/* Step t (1..horizon) of B games, each row on its own: next (B, state) as dg_flat_step gives it, and
 * cost (B) each row's weighted step cost, sum_k weight_k term_k of that row alone (the game's step
 * cost on the new state, plus at t = horizon H times its terminal cost: dg_env_add_terminal), so the
 * episode loss of one row is the sum of its costs over t = 1..H divided by H. For per-agent rewards
 * (python/difgames/parallel.py). */
DG_API dg_status dg_flat_step_cost(dg_flat *f, int B, int t, const dg_real *state, const dg_real *aux,
                                   const dg_real *action, dg_real *next, double *cost, dg_err *e);
/* One episode of B rows from state (B, state) and aux with the parameters params (DG_FLAT_TOTAL), as
 * the trainer plays it (train.truncate's windows too; inv_batch 1/B): *loss, terms (DG_FLAT_TERMS
 * weighted terms; may be NULL), metrics (DG_FLAT_METRICS; may be NULL), traj ((H + 1, B, state); may
 * be NULL) and, when backward is 1, grad (DG_FLAT_TOTAL) = d loss / d params (the library's BPTT;
 * not negated for an evader: the loss's own gradient). scale (DG_FLAT_TERMS; may be NULL): this
 * episode's loss weighs term k scale[k] times the config's weight, so grad is that of
 * sum_k scale[k] term_k (the gradient of any combination of the terms: an autograd backward from
 * the loss and the terms at once). A non-finite loss is returned as it is, not refused. */
DG_API dg_status dg_flat_episode(dg_flat *f, const dg_real *params, const dg_real *state, const dg_real *aux, int B,
                                 int backward, double *loss, dg_real *terms, dg_real *grad, double *metrics,
                                 dg_real *traj, const double *scale, dg_err *e);
/* The parameters of checkpoint path into params (dg_run_policy_load's checks and messages). */
DG_API dg_status dg_flat_load(dg_flat *f, const char *path, dg_real *params, dg_err *e);
/* params as a checkpoint at path (atomic; metadata game and config, as the trainer's). */
DG_API dg_status dg_flat_save(dg_flat *f, const char *path, const dg_real *params, dg_err *e);

/* dg_flat_train's progress: after each epoch (kind 0) and once at the start (kind 1: epoch is the
 * epochs done before, 0 on a fresh run); v holds loss, grad_norm, lr, ms, then the terms and metrics. */
typedef void (*dg_flat_progress)(void *user, int kind, int epoch, const double *v);
/* Trains f's config into dir as `difgames train --out dir` does (dg_run_train: the same files);
 * cb (may be NULL) hears each epoch; *stop as there. out (4): the epochs done, the final loss, the
 * seconds, the step that failed (dg_run_step; -1 on success). DG_OK or the run's error (an
 * interrupted run: DG_ERR_INTERRUPTED, its files written). */
DG_API dg_status dg_flat_train(dg_flat *f, const char *dir, dg_flat_progress cb, void *user,
                               volatile sig_atomic_t *stop, double *out, dg_err *e);

/* What `difgames eval` adds for a game of two or more players, for params on the B rows of state and
 * aux (f's parameters are set to params): a zero-sum pair's exploitability (dg_run_exploit: out[0] J,
 * out[1..2] j_best, out[3..4] exploit of the pursuer, the evader), or a general-sum game's players
 * (dg_run_nash_conv: out[i] each player's cost, out[n + i] its NashConv term, n players), each best
 * response trained epochs epochs (< 0: train.exploit_epochs). DG_ERR_ARG for one learned player;
 * DG_ERR_NOMEM (the memory estimate names what to lower), or an episode's error. */
DG_API dg_status dg_flat_exploit(dg_flat *f, const dg_real *params, const dg_real *state, const dg_real *aux, int B,
                                 int epochs, double *out, dg_err *e);
/* One episode of params from the B rows with the policy's action through the safety filter of the
 * config's safety.value (safety.* keys) and/or the game's adversarial input playing adversary's worst
 * case (a value file; NULL: held), as `difgames eval --safety` (dg_safety_eval): *loss, terms
 * (nterms), metrics (nmetrics; either may be NULL), out[0] interventions (the fraction of steps the
 * filter changed), out[1] violations (episodes that entered the target), out[2] min_target.
 * DG_ERR_ARG when neither is given; the value file's errors (dg_safety_open); an episode's. */
DG_API dg_status dg_flat_safety_eval(dg_flat *f, const dg_real *params, const dg_real *state, const dg_real *aux,
                                     int B, const char *adversary, double *loss, double *terms, double *metrics,
                                     double *out, dg_err *e);

/* `difgames eval --config CONFIG --ckpt ckpt` on f's run (dg_eval_run, include/difgames/eval_run.h):
 * from the B rows state and aux (state NULL: train.batch drawn from the run's seed), grad_out (NULL:
 * none) and adversary (NULL: none) as the command's --grad-out and --adversary, noise_draws a noisy
 * game's draws, exploit 0 as --no-exploit. Returns the JSON line, f's until the next call or
 * dg_flat_free (*diverged, may be NULL, 1 when a number in it is not finite by divergence, the
 * command's exit 1: e says which), or NULL with e set and *usage (may be NULL) 1 when the input is at
 * fault. */
DG_API const char *dg_flat_eval_run(dg_flat *f, const char *ckpt, const dg_real *state, const dg_real *aux, int B,
                                    const char *grad_out, const char *adversary, int noise_draws, int exploit,
                                    int *usage, int *diverged, dg_err *e);

/* `difgames certify --config CONFIG --ckpt ckpt [--hji hji]` on f's run (dg_certify_run): the n
 * options names[i] (the command's, "episodes", "no_bounds", ...) set to values[i]'s text
 * (dg_certify_run_set). Returns the JSON line, f's until the next call or dg_flat_free, or NULL
 * with e set and *usage (may be NULL) 1 when the input is at fault (the command's exit 2). */
DG_API const char *dg_flat_certify(dg_flat *f, const char *ckpt, const char *hji, const char *const *names,
                                   const char *const *values, int n, int *usage, dg_err *e);
/* `difgames certify --sampling --config config --value value [--grid grid]` (dg_certify_sampling_run),
 * no run needed: the n options (the command's, "epsilon", "beta", "seed", ...) set to values[i]'s
 * text. Returns the JSON line (malloc'd: free it with dg_flat_text_free), or NULL with e set and
 * *usage (may be NULL) 1 when the input is at fault. An f64 network is read in this copy's
 * precision: call the double copy's (dg64_flat_certify_sampling) for it, as the command does. */
DG_API char *dg_flat_certify_sampling(const char *config, const char *value, const char *grid,
                                      const char *const *names, const char *const *values, int n, int *usage,
                                      dg_err *e);
DG_API void  dg_flat_text_free(char *text);  /* NULL is harmless */

#ifdef __cplusplus
}
#endif
#endif
