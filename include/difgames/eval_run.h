/* difgames eval run: `difgames eval`'s whole computation, from a loaded run (dg_run) to its JSON line,
 * for any caller (the command prints it; the Python package's dg.eval reads it through
 * dg_flat_eval_run). Part of the solver layer (compiled twice).
 *
 *     dg_eval_run_opts o = dg_eval_run_opts_default();
 *     o.ckpt = "runs/reach/final.safetensors";
 *     dg_eval_run_result res;
 *     if (dg_eval_run(&run, &o, &res, &e) == DG_OK) puts(res.json);  // {"game":"reach","loss":...}
 *     dg_eval_run_free(&res);
 */
#ifndef DIFGAMES_EVAL_RUN_H
#define DIFGAMES_EVAL_RUN_H

#include "difgames/api.h"
#include "difgames/run.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The command's options (its --init, --grad-out, --adversary, --noise-draws, --no-exploit; the
 * config keys it sets are the run's). */
typedef struct dg_eval_run_opts {
    const char    *ckpt;          /* the policy's checkpoint (required)                                */
    const char    *init;          /* a file of initial states (dg_run_init_load), or NULL ...          */
    const dg_real *state, *aux;   /* ... or B rows of them (state NULL: train.batch drawn from the seed) */
    int            B;
    const char    *grad_out;      /* d loss / d parameter written here as safetensors (NULL: none)     */
    const char    *adversary;     /* a value file whose worst case the game's adversarial input plays  */
    int            noise_draws;   /* a noisy game's noise draws (1 .. 100000; default 10)              */
    int            exploit;       /* 1 (default): two players' exploitability, general-sum NashConv    */
} dg_eval_run_opts;
DG_API dg_eval_run_opts dg_eval_run_opts_default(void);

typedef struct dg_eval_run_result {
    int   usage;                  /* on failure: 1 when the input is at fault (the command's exit 2)  */
    char *json;                   /* the JSON line (no newline)                                       */
    char  bad[96];                /* not "": a number that is not finite and not undefined by
                                     construction ("the loss term 'distance'"): the episode diverged;
                                     json still holds it (null there), the command exits 1           */
} dg_eval_run_result;

/* One episode of o->ckpt's policy on r's game from the initial states o gives, as `difgames eval`:
 * loss, terms and metrics (a metric undefined by construction null with its reason under
 * "undefined"), with o->exploit a two-player zero-sum game's exploitability (dg_run_exploit) or a
 * general-sum game's NashConv (dg_run_nash_conv), a noisy game's means and spreads over
 * o->noise_draws draws (dg_run_eval_noise), through r's safety filter and o->adversary
 * (dg_safety_eval), and o->grad_out's gradient file; res->json the JSON line. Memory is estimated
 * before the episode and the best responses (refused, naming what to lower). DG_OK (also when
 * res->bad says a number diverged); else e says why and res->usage whether it is the input's fault.
 * Free res with dg_eval_run_free either way. */
DG_API dg_status dg_eval_run(const dg_run *r, const dg_eval_run_opts *o, dg_eval_run_result *res, dg_err *e);
DG_API void      dg_eval_run_free(dg_eval_run_result *res);  /* a zeroed result is harmless */

#ifdef __cplusplus
}
#endif
#endif
