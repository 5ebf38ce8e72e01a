/* difgames replay: an animated GIF of one episode of a trained policy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "difgames/fileio.h"
#include "difgames/memory.h"
#include "difgames/image.h"
#include "difgames/render.h"
#include "difgames/replay.h"

static const char HELP[] =
    "usage: difgames replay --config FILE --ckpt FILE [options]\n"
    "\n"
    "Rolls the policy out for one episode and writes an animated GIF: the soft render\n"
    "of the bodies (what a pixel loss sees) with crisp obstacles, goal and trajectory\n"
    "drawn over it. A body and its trail turn red from the step it breaks the game's\n"
    "rule (reach: enters an obstacle; chase: leaves the arena).\n"
    "\n"
    "options:\n";

int cmd_replay(int argc, char **argv) {
    const char *config, *ckpt, *out, *frames_s, *size_s, *maxmb_s;
    cli_overrides ov = {0};
    const cli_opt opts[] = {
        {"--config", &config, NULL, "FILE", "the game's YAML config", "required"},
        {"--ckpt", &ckpt, NULL, "FILE", "policy parameters (.safetensors)", "required"},
        {"--out", &out, NULL, "FILE", "the GIF", "runs/<config name>/replay.gif"},
        {"--frames", &frames_s, NULL, "N", "frames, spread evenly over the episode", "every step"},
        {"--seed", &ov.seed, NULL, "N", "which initial state to draw", "the config's seed"},
        {"--size", &size_s, NULL, "N", "width and height of the arena view in pixels", "320"},
        {"--max-mb", &maxmb_s, NULL, "N", "refuse a GIF whose frames hold more than N MiB of pixels", "256"},
        {NULL, NULL, NULL, NULL, NULL, NULL},
    };
    const int prc = cli_parse("replay", argc, argv, opts, HELP);
    if (prc) return prc == CLI_HELP ? 0 : prc;
    if (!config || !ckpt) {
        cli_error("replay", "--config FILE and --ckpt FILE are required (see --help)");
        return EXIT_USAGE;
    }
    const cli_path ins[] = {{"--config", config}, {"--ckpt", ckpt}};
    const cli_path outs[] = {{"--out", out}};
    if (cli_check_outputs("replay", outs, 1, ins, 2)) return EXIT_USAGE;
    int size = 320, frames = 0;
    if (size_s && !cli_int("replay", "--size", size_s, 64, 2048, &size)) return EXIT_USAGE;
    if (frames_s && !cli_int("replay", "--frames", frames_s, 2, 100000, &frames)) return EXIT_USAGE;
    int max_mb = 256;
    if (maxmb_s && !cli_int("replay", "--max-mb", maxmb_s, 1, 1 << 20, &max_mb)) return EXIT_USAGE;
    cli_setup s;
    int rc = cli_setup_load(&s, config, &ov);
    if (rc) return rc;
    const dg_env *env = s.env;
    if (!env->game->bodies) {  /* an optional hook: without it there is nothing to draw */
        cli_error("replay", "game '%s' has no bodies hook (the positions to draw): it cannot be replayed",
                  env->game->name);
        cli_setup_free(&s);
        return EXIT_USAGE;
    }
    const int S = env->state_dim, H = env->horizon;
    {   /* the GIF's size, bounded before anything is rolled out or written */
        const int64_t nf = frames > 0 && frames <= H + 1 ? frames : (int64_t)H + 1;
        int64_t px = 0;
        if (!dg_mul_ok(nf, (int64_t)size * (size + DG_REPLAY_HEADER), (int64_t)max_mb << 20, &px)) {
            cli_error("replay", "%lld frames of %dx%d pixels pass --max-mb %d (lower --frames or --size)",
                      (long long)nf, size, size + DG_REPLAY_HEADER, max_mb);
            cli_setup_free(&s);
            return EXIT_USAGE;
        }
    }
    dg_policy m;
    dg_params *p = NULL;
    float *state = malloc((size_t)S * sizeof(float));
    float *aux = malloc((size_t)(env->aux_dim ? env->aux_dim : 1) * sizeof(float));
    float *traj = malloc((size_t)(H + 1) * S * sizeof(float));
    dg_render_grid *grid = NULL;
    float *heat = NULL;
    dg_image *img = NULL;
    dg_replay_track *track = NULL;
    dg_gif *gif = NULL;
    dg_ctx *ctx = NULL;
    dg_err e = {0};
    char path[DG_PATH_MAX], def[DG_PATH_MAX];
    if (!state || !aux || !traj) {
        cli_error("replay", "out of memory");
        rc = EXIT_FAIL;
        goto done;
    }
    if ((rc = cli_load_policy("replay", &s, ckpt, &m, &p))) goto done;
    dg_rng rng;
    dg_rng_seed(&rng, s.opts.seed);
    if (env->game->reset(env, &rng, 1, state, aux, &e) != DG_OK) {
        cli_error("replay", "%s", e.msg);
        rc = EXIT_FAIL;
        goto done;
    }
    dg_tensor *loss;
    float terms[DG_LOSS_MAX_TERMS];
    char what[64];  /* one episode's tape: refused before it is allocated */
    snprintf(what, sizeof what, "an episode of horizon %d", H);
    if (!cli_mem_ok("replay", dg_rollout_memory(env, s.opts.hidden, s.opts.nhidden, 1, H, 0) + dg_replay_track_memory(H + 1),
                    what, "env.horizon")) {
        rc = EXIT_USAGE;
        goto done;
    }
    ctx = cli_rollout("replay", env, &m, p, state, aux, 1, 0, terms, traj, &loss);
    if (!ctx) {
        rc = EXIT_FAIL;
        goto done;
    }
    const float loss_v = loss->data[0];
    if (out ? dg_path_join(path, sizeof path, NULL, out, &e) != DG_OK
            : cli_run_dir(config, def, sizeof def) != 0 ||
              dg_path_join(path, sizeof path, def, "replay.gif", &e) != DG_OK) {  /* train's folder */
        cli_error("replay", out ? "--out: %s" : "--config: %s", out ? e.msg : "path too long to name the default --out");
        rc = EXIT_USAGE;
        goto done;
    }
    const int gw = size / 4;
    grid = dg_render_grid_create(gw, gw, &e);
    heat = malloc((size_t)gw * gw * sizeof(float));
    img = dg_image_create(size, size + DG_REPLAY_HEADER, 0);
    if (!grid || !heat || !img) {
        cli_error("replay", "%s", grid ? "out of memory" : e.msg);
        rc = EXIT_FAIL;
        goto done;
    }
    if ((rc = cli_make_parent("replay", "--out", path))) goto done;
    if (frames <= 0 || frames > H + 1) frames = H + 1;
    const int delay = (int)lroundf(100.0f * env->dt * (float)H / (float)(frames - 1));
    gif = dg_gif_begin(path, img->w, img->h, delay < 2 ? 2 : delay, &e);
    if (!gif) {
        cli_error("replay", "%s", e.msg);
        rc = EXIT_USAGE;
        goto done;
    }
    if (!(track = dg_replay_track_create(env, traj, aux, H + 1, &e))) {  /* the bodies at each step, once */
        cli_error("replay", "%s", e.msg);
        dg_gif_abort(gif);
        gif = NULL;
        rc = cli_exit_for(e.status);
        goto done;
    }
    for (int f = 0; f < frames; f++) {
        const int t = (int)((int64_t)f * H / (frames - 1));
        dg_replay_draw(img, env, track, grid, 0.08f, t, heat);
        if (dg_gif_add_frame(gif, img, &e) != DG_OK) {
            cli_error("replay", "%s", e.msg);
            dg_gif_abort(gif);
            gif = NULL;
            rc = cli_exit_for(e.status);
            goto done;
        }
    }
    dg_status st = dg_gif_end(gif, &e);
    gif = NULL;
    if (st != DG_OK) {
        cli_error("replay", "%s", e.msg);
        rc = cli_exit_for(st);
        goto done;
    }
    fprintf(stderr, "wrote %s (%d frames, episode loss %.4g)\n", path, frames, loss_v);
done:
    if (gif) dg_gif_abort(gif);
    dg_replay_track_free(track);
    dg_image_free(img);
    free(heat);
    dg_render_grid_free(grid);
    dg_ctx_free(ctx);
    dg_params_free(p);
    free(state);
    free(aux);
    free(traj);
    cli_setup_free(&s);
    return rc;
}
