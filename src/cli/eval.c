/* difgames eval: one episode's loss, terms and metrics as JSON (and its gradient). */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "difgames/eval_run.h"

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
    dg_eval_run_opts o = dg_eval_run_opts_default();
    o.ckpt = ckpt;
    o.init = init;
    o.grad_out = grad_out;
    o.adversary = adversary;
    o.noise_draws = draws;
    o.exploit = !no_exploit;
    dg_err e = {0};
    dg_eval_run_result r;
    if (dg_eval_run(&s, &o, &r, &e) != DG_OK) {
        cli_error("eval", "%s", e.msg);
        rc = r.usage ? EXIT_USAGE : EXIT_FAIL;
    } else {
        puts(r.json);
        fflush(stdout);
        if (r.bad[0]) {
            cli_error("eval", "%s is not finite (the episode diverged: see the null values above)", r.bad);
            rc = EXIT_FAIL;
        }
    }
    dg_eval_run_free(&r);
    dg_run_free(&s);
    return rc;
}
