/* difgames replay: an animated GIF of one episode of a trained policy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "difgames/memory.h"
#include "difgames/image.h"
#include "difgames/render.h"

static const char HELP[] =
    "usage: difgames replay --config FILE --ckpt FILE [options]\n"
    "\n"
    "Rolls the policy out for one episode and writes an animated GIF: the soft render\n"
    "of the bodies (what a pixel loss sees) with crisp obstacles, goal and trajectory\n"
    "drawn over it.\n"
    "\n"
    "options:\n"
    "  --config FILE   the game's YAML config                      required\n"
    "  --ckpt FILE     policy parameters (.safetensors)            required\n"
    "  --out FILE      the GIF                     default runs/<game>/replay.gif\n"
    "  --frames N      frames, spread evenly over the episode      default every step\n"
    "  --seed N        which initial state to draw                 default the config's seed\n"
    "  --size N        width and height of the arena view in pixels  default 320\n"
    "  --max-mb N      refuse a GIF whose frames hold more than N MiB of pixels  default 256\n";

#define HEADER 22
#define VIEW 1.08f  /* half-extent of the world shown */

static const uint32_t BODY_COLORS[] = {0xff8c1a, 0x33c3ff, 0xa0e060, 0xff5fd0};

static float wx(float x, int size) { return (x + VIEW) / (2 * VIEW) * (float)size; }
static float wy(float y, int size) { return HEADER + (VIEW - y) / (2 * VIEW) * (float)size; }

/* One frame: soft render, obstacles, trajectory up to step t, bodies, header. */
static void draw_frame(dg_image *img, const dg_env *env, const dg_render_grid *grid, float sigma,
                       const float *traj, const float *aux, int t, int size, float *heat) {
    const int S = env->state_dim;
    float xy[16];
    int is_goal[8];
    const int nb = env->game->bodies(env, traj + (size_t)t * S, aux, xy, is_goal);
    dg_render_points_f32(grid, xy, nb, NULL, sigma, heat);
    dg_image_clear(img, 0x101018);
    dg_image_heat_rect(img, (int)wx(-VIEW, size), HEADER, size, size, heat, grid->w, grid->h, 0.0f, 1.5f);
    for (int k = 0; k < env->nshapes; k++) {
        const dg_shape *sh = &env->shapes[k];
        if (sh->kind == DG_SHAPE_CIRCLE) {
            const float r = sh->a / (2 * VIEW) * size;
            dg_image_circle_fill(img, wx(sh->x, size), wy(sh->y, size), r, 0x808890, 0.85f);
            dg_image_circle_outline(img, wx(sh->x, size), wy(sh->y, size), r, 0xe0e0e0, 1.5f);
        } else {
            const float x0 = wx(sh->x - sh->a, size), x1 = wx(sh->x + sh->a, size);
            const float y0 = wy(sh->y + sh->b, size), y1 = wy(sh->y - sh->b, size);
            dg_image_line(img, x0, y0, x1, y0, 0xe0e0e0, 2);
            dg_image_line(img, x1, y0, x1, y1, 0xe0e0e0, 2);
            dg_image_line(img, x1, y1, x0, y1, 0xe0e0e0, 2);
            dg_image_line(img, x0, y1, x0, y0, 0xe0e0e0, 2);
        }
    }
    int body = 0;
    for (int k = 0; k < nb; k++) {
        const float x = wx(xy[2 * k], size), y = wy(xy[2 * k + 1], size);
        if (is_goal[k]) {  /* a ring with a cross */
            dg_image_circle_outline(img, x, y, 7, 0xff3030, 2);
            dg_image_line(img, x - 5, y, x + 5, y, 0xff3030, 1.5f);
            dg_image_line(img, x, y - 5, x, y + 5, 0xff3030, 1.5f);
            continue;
        }
        const uint32_t c = BODY_COLORS[body++ % 4];
        for (int s = 1; s <= t; s++) {  /* this body's trajectory so far */
            float a[16], b[16];
            int g2[8];
            env->game->bodies(env, traj + (size_t)(s - 1) * S, aux, a, g2);
            env->game->bodies(env, traj + (size_t)s * S, aux, b, g2);
            dg_image_line(img, wx(a[2 * k], size), wy(a[2 * k + 1], size), wx(b[2 * k], size),
                          wy(b[2 * k + 1], size), c, 1.5f);
        }
        dg_image_circle_fill(img, x, y, 5, c, 1.0f);
        dg_image_circle_outline(img, x, y, 5, 0xffffff, 1);
    }
    char text[128];
    snprintf(text, sizeof text, "%s  step %d/%d  t=%.2fs", env->game->name, t, env->horizon, t * env->dt);
    dg_image_rect_fill(img, 0, 0, img->w, HEADER, 0x202030, 1.0f);
    dg_image_text(img, 6, 7, text, 0xffffff, 1);
}

int cmd_replay(int argc, char **argv) {
    const char *config = NULL, *ckpt = NULL, *out = NULL, *frames_s = NULL, *size_s = NULL,
               *maxmb_s = NULL;
    cli_overrides ov = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = !strcmp(a, "--config") ? &config : !strcmp(a, "--ckpt") ? &ckpt
                          : !strcmp(a, "--out") ? &out : !strcmp(a, "--frames") ? &frames_s
                          : !strcmp(a, "--seed") ? &ov.seed : !strcmp(a, "--size") ? &size_s
                          : !strcmp(a, "--max-mb") ? &maxmb_s : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(HELP, stdout);
            return 0;
        } else if (slot && i + 1 < argc) {
            *slot = argv[++i];
        } else {
            cli_error("replay", slot ? "%s needs a value" : "unknown option '%s' (see --help)", a);
            return EXIT_USAGE;
        }
    }
    if (!config || !ckpt) {
        cli_error("replay", "--config FILE and --ckpt FILE are required (see --help)");
        return EXIT_USAGE;
    }
    int size = 320, frames = 0;
    if (size_s && !cli_int("replay", "--size", size_s, 64, 2048, &size)) return EXIT_USAGE;
    if (frames_s && !cli_int("replay", "--frames", frames_s, 2, 100000, &frames)) return EXIT_USAGE;
    int max_mb = 256;
    if (maxmb_s && !cli_int("replay", "--max-mb", maxmb_s, 1, 1 << 20, &max_mb)) return EXIT_USAGE;
    cli_setup s;
    int rc = cli_setup_load(&s, config, &ov);
    if (rc) return rc;
    const dg_env *env = s.env;
    const int S = env->state_dim, H = env->horizon;
    {   /* the GIF's size, bounded before anything is rolled out or written */
        const int64_t nf = frames > 0 && frames <= H + 1 ? frames : (int64_t)H + 1;
        int64_t px = 0;
        if (!dg_mul_ok(nf, (int64_t)size * (size + HEADER), (int64_t)max_mb << 20, &px)) {
            cli_error("replay", "%lld frames of %dx%d pixels pass --max-mb %d (lower --frames or --size)",
                      (long long)nf, size, size + HEADER, max_mb);
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
    dg_gif *gif = NULL;
    dg_ctx *ctx = NULL;
    dg_err e = {0};
    char path[1024];
    if (!state || !aux || !traj) {
        cli_error("replay", "out of memory");
        rc = EXIT_FAIL;
        goto done;
    }
    if ((rc = cli_load_policy("replay", &s, ckpt, &m, &p))) goto done;
    dg_rng rng;
    dg_rng_seed(&rng, s.opts.seed);
    env->game->reset(env, &rng, 1, state, aux);
    dg_tensor *loss;
    float terms[DG_MAX_TERMS];
    char what[64];  /* one episode's tape: refused before it is allocated */
    snprintf(what, sizeof what, "an episode of horizon %d", H);
    if (!cli_mem_ok("replay", dg_rollout_memory(env, s.opts.hidden, s.opts.nhidden, 1, H, 0), what, "env.horizon")) {
        rc = EXIT_USAGE;
        goto done;
    }
    ctx = cli_rollout("replay", env, &m, p, state, aux, 1, 0, terms, traj, &loss);
    if (!ctx) {
        rc = EXIT_FAIL;
        goto done;
    }
    const float loss_v = loss->data[0];
    if (out) snprintf(path, sizeof path, "%s", out);
    else snprintf(path, sizeof path, "runs/%s/replay.gif", env->game->name);
    const int gw = size / 4;
    grid = dg_render_grid_create(gw, gw, &e);
    heat = malloc((size_t)gw * gw * sizeof(float));
    img = dg_image_create(size, size + HEADER, 0);
    if (!grid || !heat || !img) {
        cli_error("replay", "%s", grid ? "out of memory" : e.msg);
        rc = EXIT_FAIL;
        goto done;
    }
    if (frames <= 0 || frames > H + 1) frames = H + 1;
    const int delay = (int)lroundf(100.0f * env->dt * (float)H / (float)(frames - 1));
    gif = dg_gif_begin(path, img->w, img->h, delay < 2 ? 2 : delay, &e);
    if (!gif) {
        cli_error("replay", "%s", e.msg);
        rc = EXIT_USAGE;
        goto done;
    }
    for (int f = 0; f < frames; f++) {
        const int t = (int)((int64_t)f * H / (frames - 1));
        draw_frame(img, env, grid, 0.08f, traj, aux, t, size, heat);
        if (dg_gif_add_frame(gif, img, &e) != DG_OK) {
            cli_error("replay", "%s", e.msg);
            dg_gif_abort(gif);
            gif = NULL;
            rc = EXIT_FAIL;
            goto done;
        }
    }
    dg_status st = dg_gif_end(gif, &e);
    gif = NULL;
    if (st != DG_OK) {
        cli_error("replay", "%s", e.msg);
        rc = EXIT_FAIL;
        goto done;
    }
    fprintf(stderr, "wrote %s (%d frames, episode loss %.4g)\n", path, frames, loss_v);
done:
    if (gif) dg_gif_abort(gif);
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
