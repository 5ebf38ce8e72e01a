/* difgames eval: one episode's loss, terms and metrics as JSON (and its gradient). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "difgames/checkpoint.h"

static const char HELP[] =
    "usage: difgames eval --config FILE --ckpt FILE [options]\n"
    "\n"
    "Rolls the checkpoint's policy out for one episode and prints one JSON object:\n"
    "game, source (builtin, or model: a model file's game, named by its model.name),\n"
    "batch, horizon, loss, each weighted loss term, and the game's metrics;\n"
    "for two-player games also each player's exploitability (exploit_pursuer,\n"
    "exploit_evader: what a best response trained against the frozen player for\n"
    "train.exploit_epochs epochs wins from it on the same states); for general-sum\n"
    "games (a model file's model.players) each player's own cost (cost_<player>) and\n"
    "NashConv term (nash_conv_<player>: the gain of a best response trained by BPTT\n"
    "from the checkpoint, the others frozen; >= 0, as the current strategy is a\n"
    "candidate) and their sum nash_conv.\n"
    "With --safety (or safety.value) the policy's action goes through the safety\n"
    "filter of that value (safety.mode: switch or qp; docs/safety.md) and the JSON\n"
    "adds safety, interventions (the fraction of steps the filter changed) and\n"
    "violations (episodes that entered the value's target: the set to avoid);\n"
    "--adversary makes the game's adversarial input play that value's worst case.\n"
    "\n"
    "options:\n";

/* 1 when dg_run_eval of B rows fits in memory; else prints what to lower and returns 0. */
static int fits(const dg_env *env, const dg_train_opts *o, const dg_params *p, int B, int grad, const char *lower) {
    char what[96], low[128];  /* pixel games: the image size first */
    snprintf(what, sizeof what, "batch %d x horizon %d%s", B, env->horizon, grad ? " with gradients" : "");
    snprintf(low, sizeof low, "%s%s%s", env->size_key ? env->size_key : "", env->size_key ? ", " : "", lower);
    return cli_mem_ok("eval", dg_run_eval_memory(env, o, p, B, grad), what, low);
}

int cmd_eval(int argc, char **argv) {
    const char *config, *ckpt, *init, *grad_out, *adversary;
    int no_exploit, rc, draws;
    cli_opt opts[] = {
        CLI_CONFIG(&config), CLI_PLUGIN, CLI_CKPT(&ckpt),
        CLI_IN("--init", &init, "FILE", "initial states from safetensors: 'state' (B, state_dim) and, for games "
               "with a goal, 'goal' (B, 2)", .otherwise = "drawn from --seed"),
        CLI_OUT("--grad-out", &grad_out, "FILE", "write d loss / d parameter for every parameter, under the "
                "parameter's own name, as safetensors"),
        CLI_KEY("--seed", "seed", .otherwise = "the config's"),
        CLI_KEY("--batch", "train.batch", .otherwise = "the config's"), CLI_KEY("--horizon", "env.horizon"),
        CLI_KEY("--exploit-epochs", "train.exploit_epochs", .otherwise = "the config's"),
        CLI_KEY("--precision", "train.precision", .otherwise = "the config's"),
        CLI_KEY("--safety", "safety.value", .otherwise = "the config's safety.value (none: no filter)"),
        CLI_KEY("--safety-mode", "safety.mode", .otherwise = "the config's"),
        CLI_KEY("--safety-config", "safety.config", .otherwise = "the config's (a grid's value file: its own)"),
        CLI_KEY("--safety-margin", "safety.margin", .otherwise = "the config's"),
        CLI_KEY("--safety-gamma", "safety.gamma", .otherwise = "the config's"),
        CLI_IN("--adversary", &adversary, "V.safetensors", "a value of hji solve whose worst-case disturbance the "
               "game's adversarial input (model.inputs.<w>.play: adversarial) plays", .otherwise = "held (training's "
               "game)"),
        CLI_INT("--noise-draws", &draws, "N", 1, 100000, "a noisy game (env.noise, a model's diffusion:): the "
                "episode is played under N independent noise draws from the same initial states; the numbers are "
                "their means, and \"spread\" holds each one's standard deviation over the draws", .def = "10"),
        CLI_FLAG("--no-exploit", &no_exploit, "two players: skip the exploitability (two best-response trainings "
                 "of --batch rows an epoch; general-sum: the NashConv terms, one a player)"),
        CLI_END,
    };
    if (!cli_parse(&rc, "eval", argc, argv, opts, HELP)) return rc;
    dg_run s;
    if ((rc = cli_load_opts(&s, config, opts))) return rc;
    const dg_env *env = s.env;
    dg_policy m;
    dg_params *p = NULL;
    dg_real *state = NULL, *aux = NULL;
    dg_err e = {0};
    const int grad = grad_out != NULL;
    int B = s.opts.batch;
    dg_eval_result r;
    dg_eval_spread sp = {0};
    dg_safety guard = {0};
    dg_safety_result sr;
    const int safe = s.safety.value != NULL, guarded = safe || adversary;
    if (guarded && dg_safety_open(&guard, env, &s.safety, adversary, &e) != DG_OK) {
        rc = cli_fail("eval", &e, e.status == DG_ERR_NOMEM ? EXIT_FAIL : EXIT_USAGE);
        goto done;
    }
    if (dg_run_policy_load(&s, ckpt, &m, &p, &e) != DG_OK) {
        rc = cli_fail("eval", &e, 0);
    } else if (init) {  /* the file's states, then the episode's memory */
        if ((B = dg_run_init_load(env, init, &state, &aux, &e)) < 0) rc = cli_fail("eval", &e, EXIT_USAGE);
        else if (!fits(env, &s.opts, p, B, grad, "the rows of --init or --horizon")) rc = EXIT_USAGE;
    } else if (!fits(env, &s.opts, p, B, grad, "--batch or --horizon")) {
        rc = EXIT_USAGE;
    } else if (dg_run_init_draw(env, s.opts.seed, B, &state, &aux, &e) != DG_OK) {
        rc = cli_fail("eval", &e, EXIT_FAIL);
    }
    const int exploit = env->nplayers == 2 && !env->general_sum && !no_exploit;
    const int nash = env->general_sum && !no_exploit;  /* general-sum: each player's NashConv term */
    if (!rc && (exploit || nash) && !cli_mem_ok("eval", dg_run_exploit_memory(env, &s.opts, p, B), "the exploitability's best "
                                      "responses", "--batch or --horizon (or --no-exploit)"))
        rc = EXIT_USAGE;
    if (rc) goto done;
    double cost[DG_MAX_PLAYERS], gain[DG_MAX_PLAYERS];
    if (nash && dg_run_nash_conv(env, &m, p, &s.opts, s.opts.exploit_epochs, state, aux, B, cost, gain, &e) != DG_OK) {
        rc = cli_fail("eval", &e, EXIT_FAIL);
        goto done;
    }
    dg_exploit_result x;
    if (exploit && dg_run_exploit(env, &m, p, &s.opts, s.opts.exploit_epochs, state, aux, B, &x, &e) != DG_OK) {
        rc = cli_fail("eval", &e, EXIT_FAIL);
        goto done;
    }
    if (guarded ? dg_safety_eval(env, &m, p, &guard, state, aux, B, grad, &r, &sr, &e) != DG_OK
                : env->noise_dim > 0 ? dg_run_eval_noise(env, &m, p, state, aux, B, grad, draws, s.opts.seed, &r, &sp, &e) != DG_OK
                : dg_run_eval(env, &m, p, state, aux, B, grad, &r, &e) != DG_OK) {
        rc = cli_fail("eval", &e, EXIT_FAIL);
        goto done;
    }
    const char *meta[] = {"format", "difgames-gradient", "game", env->game->name, "source", dg_env_source(env)};
    if (grad && dg_checkpoint_save(grad_out, p, 1, meta, 3, &e) != DG_OK) { rc = cli_fail("eval", &e, 0); goto done; }
    dg_json j = {cJSON_CreateObject(), 0};
    dg_json_game(&j, env->game->name, dg_env_source(env));
    dg_json_add(&j, j.root, "batch", dg_json_number("%.0f", B));
    dg_json_add(&j, j.root, "horizon", dg_json_number("%.0f", env->horizon));
    dg_json_add(&j, j.root, "loss", dg_json_number("%.9g", r.loss));
    for (int i = 0; i < env->nterms; i++)
        dg_json_add(&j, j.root, env->term_names[i], dg_json_number("%.9g", r.terms[i]));
    for (int i = 0; i < env->nmetrics; i++)
        dg_json_add(&j, j.root, env->metric_names[i], dg_json_number("%.9g", r.metrics[i]));
    /* a metric undefined by construction (a mean over no captured episode) is null with its reason;
     * any other non-finite number is the episode's failure: exit 1, naming it */
    char bad[96] = "";
    cJSON *why = NULL;
    for (int i = 0; i < env->nterms && !bad[0]; i++)
        if (!isfinite(r.terms[i])) snprintf(bad, sizeof bad, "the loss term '%s'", env->term_names[i]);
    if (!bad[0] && !isfinite(r.loss)) snprintf(bad, sizeof bad, "the loss");
    for (int i = 0; i < env->nmetrics; i++) {
        if (isfinite(r.metrics[i])) continue;
        if (!env->metric_undefined[i]) {
            if (!bad[0]) snprintf(bad, sizeof bad, "the metric '%s'", env->metric_names[i]);
        } else if (why || (why = dg_json_add(&j, j.root, "undefined", cJSON_CreateObject()))) {
            dg_json_add(&j, why, env->metric_names[i], cJSON_CreateString(env->metric_undefined[i]));
        }
    }
    cJSON *spread = sp.draws > 0 ? dg_json_add(&j, j.root, "spread", cJSON_CreateObject()) : NULL;
    if (spread) {  /* a noisy game: the numbers above are means over the draws, these their spreads */
        dg_json_add(&j, spread, "draws", dg_json_number("%.0f", sp.draws));
        dg_json_add(&j, spread, "of", cJSON_CreateString("standard deviation over noise draws of the batch mean"));
        dg_json_add(&j, spread, "loss", dg_json_number("%.9g", sp.loss));
        for (int i = 0; i < env->nterms; i++)
            dg_json_add(&j, spread, env->term_names[i], dg_json_number("%.9g", sp.terms[i]));
        for (int i = 0; i < env->nmetrics; i++)
            dg_json_add(&j, spread, env->metric_names[i], dg_json_number("%.9g", sp.metrics[i]));
    }
    if (exploit) {
        dg_json_add(&j, j.root, "exploit_pursuer", dg_json_number("%.9g", x.exploit[0]));
        dg_json_add(&j, j.root, "exploit_evader", dg_json_number("%.9g", x.exploit[1]));
        dg_json_add(&j, j.root, "exploit_epochs", dg_json_number("%.0f", s.opts.exploit_epochs));
    }
    for (int i = 0; env->general_sum && i < env->nplayers; i++) {  /* each player's own cost, its NashConv term */
        char nm[32], key[48];
        dg_env_player_name(env, i, nm, sizeof nm);
        snprintf(key, sizeof key, "cost_%s", nm);
        dg_json_add(&j, j.root, key, dg_json_number("%.9g", dg_env_player_cost(env, i, r.terms)));
        if (!nash) continue;
        snprintf(key, sizeof key, "nash_conv_%s", nm);
        dg_json_add(&j, j.root, key, dg_json_number("%.9g", gain[i]));
    }
    if (nash) {
        double sum = 0;
        for (int i = 0; i < env->nplayers; i++) sum += gain[i];
        dg_json_add(&j, j.root, "nash_conv", dg_json_number("%.9g", sum));
        dg_json_add(&j, j.root, "exploit_epochs", dg_json_number("%.0f", s.opts.exploit_epochs));
    }
    if (grad) dg_json_add(&j, j.root, "grad_norm", dg_json_number("%.9g", r.grad_norm));
    if (safe) {
        dg_json_add(&j, j.root, "safety", cJSON_CreateString(dg_safety_mode_name(s.safety.mode)));
        dg_json_add(&j, j.root, "interventions", dg_json_number("%.9g", sr.interventions));
    }
    if (adversary) dg_json_add(&j, j.root, "adversary", cJSON_CreateString(adversary));
    if (guarded) {
        dg_json_add(&j, j.root, "violations", dg_json_number("%.0f", (double)sr.violations));
        dg_json_add(&j, j.root, "min_target", dg_json_number("%.9g", sr.min_target));
    }
    rc = cli_json_print(&j, "eval");
    if (!rc && bad[0]) {
        cli_error("eval", "%s is not finite (the episode diverged: see the null values above)", bad);
        rc = EXIT_FAIL;
    }
done:
    dg_safety_close(&guard);
    free(state);
    free(aux);
    dg_params_free(p);
    dg_run_free(&s);
    return rc;
}
