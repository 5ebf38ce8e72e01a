/* difgames replay: an animated GIF of one episode of a trained policy. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "difgames/fileio.h"
#include "difgames/memory.h"
#include "difgames/replay.h"

static const char HELP[] =
    "usage: difgames replay --config FILE --ckpt FILE [options]\n"
    "\n"
    "Rolls the policy out for one episode and writes an animated GIF: the soft render\n"
    "of the bodies (what a pixel loss sees) with crisp obstacles, goal and trajectory\n"
    "drawn over it. A body and its trail turn red from the step it breaks the game's\n"
    "rule (reach: enters an obstacle; chase: leaves the arena). --safety and\n"
    "--adversary as in difgames eval: the episode with the safety filter of a value\n"
    "and/or the adversarial input playing its worst case (docs/safety.md).\n"
    "\n"
    "options:\n";

int cmd_replay(int argc, char **argv) {
    const char *config, *ckpt, *out, *adversary;
    int frames, size, max_mb, rc;
    cli_opt opts[] = {
        CLI_CONFIG(&config), CLI_PLUGIN, CLI_CKPT(&ckpt),
        CLI_OUT("--out", &out, "FILE", "the GIF", .otherwise = "runs/<config name>/replay.gif"),
        CLI_INT("--frames", &frames, "N", 2, 100000, "frames, spread evenly over the episode", .otherwise = "every step"),
        CLI_KEY("--seed", "seed", .otherwise = "the config's"),
        CLI_INT("--size", &size, "N", 64, 2048, "width and height of the arena view in pixels", .def = "320"),
        CLI_INT("--max-mb", &max_mb, "N", 1, 1 << 20, "refuse a GIF whose frames hold more than N MiB of pixels",
                .def = "256"),
        CLI_KEY("--safety", "safety.value", .otherwise = "the config's safety.value (none: no filter)"),
        CLI_KEY("--safety-mode", "safety.mode", .otherwise = "the config's"),
        CLI_KEY("--safety-config", "safety.config", .otherwise = "the config's (a grid's value file: its own)"),
        CLI_IN("--adversary", &adversary, "V.safetensors", "a value of hji solve whose worst-case disturbance the "
               "game's adversarial input plays", .otherwise = "held"),
        CLI_END,
    };
    if (!cli_parse(&rc, "replay", argc, argv, opts, HELP)) return rc;
    dg_run s;
    if ((rc = cli_load_opts(&s, config, opts))) return rc;
    const dg_env *env = s.env;
    const int S = env->state_dim, H = env->horizon;
    if (frames <= 0 || frames > H + 1) frames = H + 1;
    int64_t px = 0;
    if (!env->game->bodies) {  /* an optional hook: without it there is nothing to draw */
        cli_error("replay", "game '%s' has no bodies hook (the positions to draw): it cannot be replayed",
                  env->game->name);
        rc = EXIT_USAGE;
    } else if (!dg_mul_ok(frames, (int64_t)size * (size + DG_REPLAY_HEADER), (int64_t)max_mb << 20, &px)) {
        /* the GIF's size, bounded before anything is rolled out or written */
        cli_error("replay", "%lld frames of %dx%d pixels pass --max-mb %d (lower --frames or --size)",
                  (long long)frames, size, size + DG_REPLAY_HEADER, max_mb);
        rc = EXIT_USAGE;
    }
    if (rc) {
        dg_run_free(&s);
        return rc;
    }
    dg_policy m;
    dg_params *p = NULL;
    dg_real *state = NULL, *aux = NULL;
    dg_real *traj = malloc((size_t)(H + 1) * S * sizeof(dg_real));
    dg_ctx *ctx = NULL;
    dg_err e = {0};
    dg_tensor *loss;
    dg_safety guard = {0};
    char path[DG_PATH_MAX], def[DG_PATH_MAX], what[64];  /* one episode's tape: refused before it is made */
    snprintf(what, sizeof what, "an episode of horizon %d", H);
    if (!traj) {
        cli_error("replay", "out of memory");
        rc = EXIT_FAIL;
    } else if (dg_run_policy_load(&s, ckpt, &m, &p, &e) != DG_OK) {
        rc = cli_fail("replay", &e, 0);
    } else if (dg_run_init_draw(env, s.opts.seed, 1, &state, &aux, &e) != DG_OK) {
        rc = cli_fail("replay", &e, EXIT_FAIL);
    } else if (!cli_mem_ok("replay", dg_rollout_memory(env, s.opts.hidden, s.opts.nhidden, 1, H, 0) +
                           dg_replay_track_memory(H + 1), what, "env.horizon")) {
        rc = EXIT_USAGE;
    } else if ((s.safety.value || adversary) && dg_safety_open(&guard, env, &s.safety, adversary, &e) != DG_OK) {
        rc = cli_fail("replay", &e, e.status == DG_ERR_NOMEM ? EXIT_FAIL : EXIT_USAGE);
    } else if (!(ctx = (dg_safety_attach(&guard, &m),  /* (no value opened: no filter) */
                        dg_run_episode(env, &m, p, state, aux, 1, 0, NULL, traj, &loss, &e)))) {
        rc = cli_fail("replay", &e, EXIT_FAIL);
    } else if (out ? dg_path_join(path, sizeof path, NULL, out, &e) != DG_OK
                   : dg_run_dir(config, def, sizeof def) != 0 ||
                     dg_path_join(path, sizeof path, def, "replay.gif", &e) != DG_OK) {  /* train's folder */
        cli_error("replay", out ? "--out: %s" : "--config: %s",
                  out ? e.msg : "path too long to name the default --out");
        rc = EXIT_USAGE;
    } else if (!(rc = cli_make_parent("replay", "--out", path))) {
        if (dg_replay_gif(path, env, traj, aux, H + 1, size, frames, &e) != DG_OK) rc = cli_fail("replay", &e, 0);
        else fprintf(stderr, "wrote %s (%d frames, episode loss %.4g)\n", path, frames, loss->data[0]);
    }
    dg_ctx_free(ctx);
    dg_safety_close(&guard);
    dg_params_free(p);
    free(state);
    free(aux);
    free(traj);
    dg_run_free(&s);
    return rc;
}
