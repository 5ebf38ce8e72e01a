/* dg_eval_run: `difgames eval`'s computation and JSON line from a run, for the command and the Python
 * package alike (include/difgames/eval_run.h). Nothing here prints. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/checkpoint.h"
#include "difgames/eval_run.h"
#include "difgames/memory.h"
#include "io/json.h"

dg_eval_run_opts dg_eval_run_opts_default(void) {
    dg_eval_run_opts o;
    memset(&o, 0, sizeof o);
    o.noise_draws = 10;
    o.exploit = 1;
    return o;
}

/* DG_OK when need bytes fit; else a usage error "what <the estimate>; lower <lower>" */
static dg_status mem_ok(dg_eval_run_result *res, double need, const char *what, const char *lower, dg_err *e) {
    const dg_status st = dg_mem_require(need, what, lower, e);
    if (st != DG_OK) res->usage = 1;
    return st;
}

/* the episode's memory for B rows: what to lower when it does not fit */
static dg_status fits(const dg_env *env, const dg_train_opts *o, const dg_params *p, int B, int grad,
                      const char *lower, dg_eval_run_result *res, dg_err *e) {
    char what[96], low[160];  /* pixel games: the image size first */
    snprintf(what, sizeof what, "batch %d x horizon %d%s", B, env->horizon, grad ? " with gradients" : "");
    snprintf(low, sizeof low, "%s%s%s", env->size_key ? env->size_key : "", env->size_key ? ", " : "", lower);
    return mem_ok(res, dg_run_eval_memory(env, o, p, B, grad), what, low, e);
}

/* The JSON line of the episode r (and its spread, exploitability, NashConv, filter) into res. */
static dg_status json_line(const dg_run *s, const dg_eval_run_opts *o, int B, int grad, const dg_eval_result *r,
                           const dg_eval_spread *sp, int exploit, const dg_exploit_result *x, int nash,
                           const double *gain, int safe, int guarded, const dg_safety_result *sr,
                           dg_eval_run_result *res, dg_err *e) {
    const dg_env *env = s->env;
    dg_json j = {cJSON_CreateObject(), 0};
    dg_json_game(&j, env->game->name, dg_env_source(env));
    dg_json_add(&j, j.root, "batch", dg_json_number("%.0f", B));
    dg_json_add(&j, j.root, "horizon", dg_json_number("%.0f", env->horizon));
    dg_json_add(&j, j.root, "loss", dg_json_number("%.9g", r->loss));
    for (int i = 0; i < env->nterms; i++)
        dg_json_add(&j, j.root, env->term_names[i], dg_json_number("%.9g", r->terms[i]));
    for (int i = 0; i < env->nmetrics; i++)
        dg_json_add(&j, j.root, env->metric_names[i], dg_json_number("%.9g", r->metrics[i]));
    /* a metric undefined by construction (a mean over no captured episode) is null with its reason;
     * any other non-finite number is the episode's failure, named in res->bad */
    cJSON *why = NULL;
    for (int i = 0; i < env->nterms && !res->bad[0]; i++)
        if (!isfinite(r->terms[i])) snprintf(res->bad, sizeof res->bad, "the loss term '%s'", env->term_names[i]);
    if (!res->bad[0] && !isfinite(r->loss)) snprintf(res->bad, sizeof res->bad, "the loss");
    for (int i = 0; i < env->nmetrics; i++) {
        if (isfinite(r->metrics[i])) continue;
        if (!env->metric_undefined[i]) {
            if (!res->bad[0]) snprintf(res->bad, sizeof res->bad, "the metric '%s'", env->metric_names[i]);
        } else if (why || (why = dg_json_add(&j, j.root, "undefined", cJSON_CreateObject()))) {
            dg_json_add(&j, why, env->metric_names[i], cJSON_CreateString(env->metric_undefined[i]));
        }
    }
    cJSON *spread = sp->draws > 0 ? dg_json_add(&j, j.root, "spread", cJSON_CreateObject()) : NULL;
    if (spread) {  /* a noisy game: the numbers above are means over the draws, these their spreads */
        dg_json_add(&j, spread, "draws", dg_json_number("%.0f", sp->draws));
        dg_json_add(&j, spread, "of", cJSON_CreateString("standard deviation over noise draws of the batch mean"));
        dg_json_add(&j, spread, "loss", dg_json_number("%.9g", sp->loss));
        for (int i = 0; i < env->nterms; i++)
            dg_json_add(&j, spread, env->term_names[i], dg_json_number("%.9g", sp->terms[i]));
        for (int i = 0; i < env->nmetrics; i++)
            dg_json_add(&j, spread, env->metric_names[i], dg_json_number("%.9g", sp->metrics[i]));
    }
    if (exploit) {
        dg_json_add(&j, j.root, "exploit_pursuer", dg_json_number("%.9g", x->exploit[0]));
        dg_json_add(&j, j.root, "exploit_evader", dg_json_number("%.9g", x->exploit[1]));
        dg_json_add(&j, j.root, "exploit_epochs", dg_json_number("%.0f", s->opts.exploit_epochs));
    }
    for (int i = 0; env->general_sum && i < env->nplayers; i++) {  /* each player's own cost, its NashConv term */
        char nm[32], key[48];
        dg_env_player_name(env, i, nm, sizeof nm);
        snprintf(key, sizeof key, "cost_%s", nm);
        dg_json_add(&j, j.root, key, dg_json_number("%.9g", dg_env_player_cost(env, i, r->terms)));
        if (!nash) continue;
        snprintf(key, sizeof key, "nash_conv_%s", nm);
        dg_json_add(&j, j.root, key, dg_json_number("%.9g", gain[i]));
    }
    if (nash) {
        double sum = 0;
        for (int i = 0; i < env->nplayers; i++) sum += gain[i];
        dg_json_add(&j, j.root, "nash_conv", dg_json_number("%.9g", sum));
        dg_json_add(&j, j.root, "exploit_epochs", dg_json_number("%.0f", s->opts.exploit_epochs));
    }
    if (grad) dg_json_add(&j, j.root, "grad_norm", dg_json_number("%.9g", r->grad_norm));
    if (safe) {
        dg_json_add(&j, j.root, "safety", cJSON_CreateString(dg_safety_mode_name(s->safety.mode)));
        dg_json_add(&j, j.root, "interventions", dg_json_number("%.9g", sr->interventions));
    }
    if (o->adversary) dg_json_add(&j, j.root, "adversary", cJSON_CreateString(o->adversary));
    if (guarded) {
        dg_json_add(&j, j.root, "violations", dg_json_number("%.0f", (double)sr->violations));
        dg_json_add(&j, j.root, "min_target", dg_json_number("%.9g", sr->min_target));
    }
    char *text = dg_json_line(&j);
    if (!text) return dg_err_set(e, DG_ERR_NOMEM, "out of memory for the JSON line");
    res->json = malloc(strlen(text) + 1);
    if (res->json) strcpy(res->json, text);
    cJSON_free(text);
    return res->json ? DG_OK : dg_err_set(e, DG_ERR_NOMEM, "out of memory for the JSON line");
}

dg_status dg_eval_run(const dg_run *s, const dg_eval_run_opts *o, dg_eval_run_result *res, dg_err *e) {
    memset(res, 0, sizeof *res);
    res->usage = 1;
    if (!s || !s->env || !o || !o->ckpt) return dg_err_set(e, DG_ERR_ARG, "eval: needs a run and a checkpoint");
    if (o->noise_draws < 1 || o->noise_draws > 100000)
        return dg_err_set(e, DG_ERR_ARG, "eval: noise draws %d: expected 1 to 100000", o->noise_draws);
    if (o->init && o->state) return dg_err_set(e, DG_ERR_ARG, "eval: initial states from a file or rows, not both");
    const dg_env *env = s->env;
    dg_policy m;
    dg_params *p = NULL;
    dg_real *state = NULL, *aux = NULL;
    const int grad = o->grad_out != NULL;
    int B = s->opts.batch;
    dg_eval_result r;
    dg_eval_spread sp = {0};
    dg_safety guard = {0};
    dg_safety_result sr = {0};
    dg_exploit_result x = {0};
    double cost[DG_MAX_PLAYERS], gain[DG_MAX_PLAYERS] = {0};
    const int safe = s->safety.value != NULL, guarded = safe || o->adversary;
    const int exploit = env->nplayers == 2 && !env->general_sum && o->exploit;
    const int nash = env->general_sum && o->exploit;  /* general-sum: each player's NashConv term */
    dg_status st = DG_OK;
    if (guarded && (st = dg_safety_open(&guard, env, &s->safety, o->adversary, e)) != DG_OK) {
        res->usage = st != DG_ERR_NOMEM;
        goto done;
    }
    if ((st = dg_run_policy_load(s, o->ckpt, &m, &p, e)) != DG_OK) {
        res->usage = dg_status_exit(st) == DG_EXIT_USAGE;  /* a file's fault; a NaN parameter is the run's */
        goto done;
    }
    if (o->init) {  /* the file's states, then the episode's memory */
        if ((B = dg_run_init_load(env, o->init, &state, &aux, e)) < 0) {
            st = e->status;
            goto done;
        }
        if ((st = fits(env, &s->opts, p, B, grad, "the rows of --init or --horizon", res, e)) != DG_OK) goto done;
    } else if (o->state) {
        B = o->B;
        if (B < 1) {
            st = dg_err_set(e, DG_ERR_ARG, "eval: %d initial states: expected at least 1", B);
            goto done;
        }
        if ((st = fits(env, &s->opts, p, B, grad, "the rows or --horizon", res, e)) != DG_OK) goto done;
    } else {
        if ((st = fits(env, &s->opts, p, B, grad, "--batch or --horizon", res, e)) != DG_OK) goto done;
        res->usage = 0;
        if ((st = dg_run_init_draw(env, s->opts.seed, B, &state, &aux, e)) != DG_OK) goto done;
    }
    const dg_real *st0 = o->state ? o->state : state, *ax0 = o->state ? o->aux : aux;
    if ((exploit || nash) && (st = mem_ok(res, dg_run_exploit_memory(env, &s->opts, p, B), "the exploitability's best "
                                          "responses", "--batch or --horizon (or --no-exploit)", e)) != DG_OK)
        goto done;
    res->usage = 0;
    if (nash && (st = dg_run_nash_conv(env, &m, p, &s->opts, s->opts.exploit_epochs, st0, ax0, B, cost, gain, e)) != DG_OK)
        goto done;
    if (exploit && (st = dg_run_exploit(env, &m, p, &s->opts, s->opts.exploit_epochs, st0, ax0, B, &x, e)) != DG_OK)
        goto done;
    st = guarded ? dg_safety_eval(env, &m, p, &guard, st0, ax0, B, grad, &r, &sr, e)
         : env->noise_dim > 0
             ? dg_run_eval_noise(env, &m, p, st0, ax0, B, grad, o->noise_draws, s->opts.seed, &r, &sp, e)
             : dg_run_eval(env, &m, p, st0, ax0, B, grad, &r, e);
    if (st != DG_OK) goto done;
    const char *meta[] = {"format", "difgames-gradient", "game", env->game->name, "source", dg_env_source(env)};
    if (grad && (st = dg_checkpoint_save(o->grad_out, p, 1, meta, 3, e)) != DG_OK) {
        res->usage = dg_status_exit(st) == DG_EXIT_USAGE;
        goto done;
    }
    st = json_line(s, o, B, grad, &r, &sp, exploit, &x, nash, gain, safe, guarded, &sr, res, e);
done:
    dg_safety_close(&guard);
    free(state);
    free(aux);
    dg_params_free(p);
    return st;
}

void dg_eval_run_free(dg_eval_run_result *res) {
    if (!res) return;
    free(res->json);
    memset(res, 0, sizeof *res);
}
