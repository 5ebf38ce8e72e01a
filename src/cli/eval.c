/* difgames eval: one episode's loss, terms and metrics as JSON (and its gradient). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "difgames/checkpoint.h"

static const char HELP[] =
    "usage: difgames eval --config FILE --ckpt FILE [options]\n"
    "\n"
    "Rolls the checkpoint's policy out for one episode and prints one JSON object:\n"
    "game, batch, horizon, loss, each weighted loss term, and the game's metrics.\n"
    "\n"
    "options:\n";

/* 1 when an episode of B rows fits in memory: its batch and episode constants, the tape (and
 * gradients), the trajectory; else prints what to lower and returns 0. */
static int fits(const dg_env *env, const dg_train_opts *o, const dg_params *p, int B, int grad, const char *lower) {
    const double need = dg_rollout_memory(env, o->hidden, o->nhidden, B, env->horizon, grad) +
                        (double)p->total * sizeof(float) * 2 +
                        (double)B * (env->state_dim + env->aux_dim) * sizeof(float) +
                        (double)(env->horizon + 1) * B * env->state_dim * sizeof(float) * (env->nmetrics > 0);
    char what[96];
    snprintf(what, sizeof what, "batch %d x horizon %d%s", B, env->horizon, grad ? " with gradients" : "");
    char low[128];  /* pixel games: the image size first */
    snprintf(low, sizeof low, "%s%s%s", env->size_key ? env->size_key : "", env->size_key ? ", " : "", lower);
    return cli_mem_ok("eval", need, what, low);
}

int cmd_eval(int argc, char **argv) {
    const char *config, *ckpt, *init, *grad_out;
    cli_overrides ov = {0};
    const cli_opt opts[] = {
        {"--config", &config, NULL, "FILE", "the game's YAML config", "required"},
        {"--ckpt", &ckpt, NULL, "FILE", "policy parameters (.safetensors)", "required"},
        {"--init", &init, NULL, "FILE", "initial states from safetensors: 'state' (B, state_dim) and, for games "
         "with a goal, 'goal' (B, 2)", "drawn from --seed"},
        {"--grad-out", &grad_out, NULL, "FILE", "write d loss / d parameter for every parameter, under the "
         "parameter's own name, as safetensors", NULL},
        {"--seed", &ov.seed, NULL, "N", "seed for drawn initial states", "the config's seed"},
        {"--batch", &ov.batch, NULL, "N", "episodes drawn", "the config's train.batch"},
        {"--horizon", &ov.horizon, NULL, "N", "steps per episode (env.horizon)", NULL},
        {NULL, NULL, NULL, NULL, NULL, NULL},
    };
    const int prc = cli_parse("eval", argc, argv, opts, HELP);
    if (prc) return prc == CLI_HELP ? 0 : prc;
    if (!config || !ckpt) {
        cli_error("eval", "--config FILE and --ckpt FILE are required (see --help)");
        return EXIT_USAGE;
    }
    const cli_path ins[] = {{"--config", config}, {"--ckpt", ckpt}, {"--init", init}};
    const cli_path outs[] = {{"--grad-out", grad_out}};
    if (cli_check_outputs("eval", outs, 1, ins, 3)) return EXIT_USAGE;
    cli_setup s;
    int rc = cli_setup_load(&s, config, &ov);
    if (rc) return rc;
    const dg_env *env = s.env;
    dg_policy m;
    dg_params *p = NULL;
    float *state = NULL, *aux = NULL, *traj = NULL;
    dg_ctx *ctx = NULL;
    if ((rc = cli_load_policy("eval", &s, ckpt, &m, &p))) goto done;
    int B;
    if (init) {
        B = cli_load_init("eval", env, init, &state, &aux);
        if (B < 0) {
            rc = EXIT_USAGE;
            goto done;
        }
    } else {
        B = s.opts.batch;
        if (!fits(env, &s.opts, p, B, grad_out != NULL, "--batch or --horizon")) {
            rc = EXIT_USAGE;
            goto done;
        }
        state = malloc((size_t)B * env->state_dim * sizeof(float));
        aux = malloc((size_t)B * (env->aux_dim ? env->aux_dim : 1) * sizeof(float));
        if (!state || !aux) {
            cli_error("eval", "out of memory");
            rc = EXIT_FAIL;
            goto done;
        }
        dg_rng rng;
        dg_rng_seed(&rng, s.opts.seed);
        dg_err re = {0};
        if (env->game->reset(env, &rng, B, state, aux, &re) != DG_OK) {
            cli_error("eval", "%s", re.msg);
            rc = EXIT_FAIL;
            goto done;
        }
    }
    if (init && !fits(env, &s.opts, p, B, grad_out != NULL, "the rows of --init or --horizon")) {
        rc = EXIT_USAGE;
        goto done;
    }
    if (env->nmetrics) {
        traj = malloc((size_t)(env->horizon + 1) * B * env->state_dim * sizeof(float));
        if (!traj) {
            cli_error("eval", "out of memory for the trajectory");
            rc = EXIT_FAIL;
            goto done;
        }
    }
    float terms[DG_LOSS_MAX_TERMS];
    dg_tensor *loss;
    dg_params_zero_grad(p);
    ctx = cli_rollout("eval", env, &m, p, state, aux, B, grad_out != NULL, terms, traj, &loss);
    if (!ctx) {
        rc = EXIT_FAIL;
        goto done;
    }
    if (grad_out) {
        dg_err e = {0};
        const char *meta[] = {"format", "difgames-gradient", "game", env->game->name};
        if (dg_checkpoint_save(grad_out, p, 1, meta, 2, &e) != DG_OK) {
            cli_error("eval", "%s", e.msg);
            rc = cli_exit_for(e.status);
            goto done;
        }
    }
    double metrics[DG_MAX_METRICS];
    if (env->nmetrics) env->game->metrics(env, traj, aux, B, env->horizon, metrics);
    cli_json j = {cJSON_CreateObject(), 0};
    cli_json_add(&j, j.root, "game", cJSON_CreateString(env->game->name));
    cli_json_add(&j, j.root, "batch", cli_json_number("%.0f", B));
    cli_json_add(&j, j.root, "horizon", cli_json_number("%.0f", env->horizon));
    cli_json_add(&j, j.root, "loss", cli_json_number("%.9g", loss->data[0]));
    for (int i = 0; i < env->nterms; i++)
        cli_json_add(&j, j.root, env->term_names[i], cli_json_number("%.9g", terms[i]));
    for (int i = 0; i < env->nmetrics; i++)
        cli_json_add(&j, j.root, env->metric_names[i], cli_json_number("%.9g", metrics[i]));
    if (grad_out) cli_json_add(&j, j.root, "grad_norm", cli_json_number("%.9g", dg_grad_norm(p)));
    rc = cli_json_print(&j, "eval");
done:
    dg_ctx_free(ctx);
    free(state);
    free(aux);
    free(traj);
    dg_params_free(p);
    cli_setup_free(&s);
    return rc;
}
