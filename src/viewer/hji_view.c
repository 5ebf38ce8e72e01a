/* difgames hji view: a value function in a window. The slice through the first two axes (colour map,
 * zero level set, the target, obstacles; contours for games of degree) with keys for the other axes
 * and the stored time; a click plays both players' equilibrium strategies from that point. The
 * pictures are the library's (dg_hji_figure); SDL2 shows them. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "difgames/hji.h"
#include "gfx/draw.h"
#include "viewer/viewer.h"
#include "viewer/window.h"

#define PANEL_W 280
#define PATH_MAX_POINTS 200000   /* steps of a played path kept (the simulation's own bound is larger) */
#define SLIDER_TOP 40            /* the panel's first slider label, pixels from its top       */
#define SLIDER_STEP 40           /* pixels from one slider to the next                        */
#define SLIDER_MARGIN 18         /* each track's ends, pixels in from the panel's sides       */
#define SLIDER_GRAB 9            /* pixels above and below a track that still grab it         */

typedef struct hview {
    const char *cmd;
    dg_hji_value vf;
    dg_hji_problem *p;           /* with --config: target, obstacles, the strategies; else NULL */
    dg_cfg *cfg;
    double *V;                   /* (nt, nodes) every stored time */
    dg_hji_figure *fig;
    dg_image *plot, *panel;
    vw_window w;
    int ti, axis, levels, quit, paused;
    int grab;                    /* the slider held by the mouse (0: time, k >= 2: axis k), -1: none */
    int force;                   /* redraw the next frame (the window was exposed) */
    struct shown {               /* what the frame shows: a frame is drawn anew when it changes */
        int ti, axis, grab, npath, steps;
        double at[DG_HJI_MAX_DIMS], t, x0[2];
    } last;
    vw_script script;            /* --input: keys and the mouse, frame by frame */
    double at[DG_HJI_MAX_DIMS];
    /* the played path */
    double *path;                /* (npath, 2) axes 0 and 1 */
    double *full;                /* (npath, ndim) the whole state at each step */
    int npath;
    double dt, shown;            /* the path's step; simulated seconds revealed so far */
    dg_hji_sim_result res;
    double speed;
} hview;

static int on_step(void *user, const dg_hji_sim_step *s) {
    hview *h = user;
    const int nd = h->vf.grid.ndim;
    if (h->npath >= PATH_MAX_POINTS) return 0;
    h->path[2 * h->npath] = s->x[0];
    h->path[2 * h->npath + 1] = s->x[1];
    memcpy(h->full + (size_t)h->npath * nd, s->x, (size_t)nd * sizeof(double));
    h->npath++;
    return 0;
}

/* Both players' equilibrium play from x (ndim), with every stored time as the strategies' slices. */
static int play_from(hview *h, const double *x) {
    if (!h->p) return 0;
    const dg_hji_slices VS = {.nt = h->vf.nt, .t = h->vf.times, .v = h->V};
    const int cost = dg_hji_game_degree(&h->p->game) && h->p->payoff == DG_HJI_PAYOFF_COST && !h->p->stationary;
    dg_hji_sim_opts o = {.t_max = cost ? h->p->t_end : 2 * h->p->t_end, .max_steps = 10 * PATH_MAX_POINTS,
                         .on_step = on_step, .user = h};
    o.dt = dg_hji_sim_dt(h->p, &VS, x, o.t_max);
    h->npath = 0;
    h->shown = 0;
    dg_err e = {0};
    if (dg_hji_simulate(h->p, &VS, x, &o, &h->res, &e) != DG_OK) return cli_fail(h->cmd, &e, EXIT_FAIL);
    h->dt = h->res.dt;
    fprintf(stderr, "hji view: from (%g, %g): %s at %.4g s, V(x0) %.4g\n", x[0], x[1],
            h->res.captured ? "captured" : "not captured", h->res.captured ? h->res.capture_time : o.t_max,
            h->res.value0);
    return 0;
}

static void panel_text(dg_draw *d, double *y, uint32_t rgb, double size, const char *fmt, double a, double b) {
    char s[160];
    snprintf(s, sizeof s, fmt, a, b);
    dg_draw_text(d, 12, *y, s, rgb, size, DG_TEXT_LEFT | DG_TEXT_TOP, 0);
    *y += size * 1.5;
}

/* ----------------------------------------------------------------- the sliders */

/* The panel's sliders: 0 the stored time, then one per axis after the first two (k = i + 1). */
static int nsliders(const hview *h) { return 1 + (h->vf.grid.ndim > 2 ? h->vf.grid.ndim - 2 : 0); }
static int slider_axis(int i) { return i == 0 ? 0 : i + 1; }

/* Slider i's track in window pixels: from x0 to x1 at height y (its label sits above it). */
static void slider_track(const hview *h, int i, double *x0, double *x1, double *y) {
    *x0 = h->plot->w + SLIDER_MARGIN;
    *x1 = h->plot->w + PANEL_W - SLIDER_MARGIN;
    *y = SLIDER_TOP + i * SLIDER_STEP + 24;
}

/* The grid steps of slider i (time: the stored times; axis k: its nodes) and where it stands. */
static int slider_steps(const hview *h, int i) {
    const int k = slider_axis(i);
    return k == 0 ? h->vf.nt : h->vf.grid.n[k];
}
static int slider_index(const hview *h, int i) {
    const int k = slider_axis(i);
    if (k == 0) return h->ti;
    const dg_hji_grid *g = &h->vf.grid;
    const long idx = lround((h->at[k] - g->lo[k]) / g->dx[k]);
    return (int)(idx < 0 ? 0 : idx >= g->n[k] ? g->n[k] - 1 : idx);
}

/* The mouse at pixel x on slider i: the nearest grid step there. A moved axis clears the path. */
static void slider_set(hview *h, int i, double x) {
    double x0, x1, y;
    slider_track(h, i, &x0, &x1, &y);
    const int n = slider_steps(h, i), k = slider_axis(i);
    const double f = fmin(1, fmax(0, (x - x0) / (x1 - x0)));
    const int idx = n > 1 ? (int)lround(f * (n - 1)) : 0;
    if (k == 0) {
        h->ti = idx;
        return;
    }
    h->axis = k;
    const double v = h->vf.grid.lo[k] + idx * h->vf.grid.dx[k];
    if (v != h->at[k]) h->npath = 0;
    h->at[k] = v;
}

/* The slider under pixel (x, y), or -1. */
static int slider_at(const hview *h, double x, double y) {
    for (int i = 0; i < nsliders(h); i++) {
        double x0, x1, ty;
        slider_track(h, i, &x0, &x1, &ty);
        if (x >= x0 - SLIDER_GRAB && x <= x1 + SLIDER_GRAB && fabs(y - ty) <= SLIDER_GRAB) return i;
    }
    return -1;
}

static void draw_sliders(hview *h, dg_draw *d) {
    const dg_hji_grid *g = &h->vf.grid;
    const double off = h->plot->w;  /* the panel's pixels are the window's less the plot's width */
    for (int i = 0; i < nsliders(h); i++) {
        const int k = slider_axis(i), n = slider_steps(h, i), idx = slider_index(h, i);
        double x0, x1, y;
        slider_track(h, i, &x0, &x1, &y);
        x0 -= off;
        x1 -= off;
        char s[160], name[32];
        if (k == 0) snprintf(s, sizeof s, "time t = %.4g  (%d of %d stored)", h->vf.times[h->ti], h->ti + 1, h->vf.nt);
        else snprintf(s, sizeof s, "%s = %.4g", dg_hji_grid_axis_name(&h->vf.grid, k, name, sizeof name), h->at[k]);
        const int active = k == 0 ? 0 : k == h->axis;
        dg_draw_text(d, 12, y - 22, s, k == 0 ? 0xffd060 : active ? 0xffffff : 0xb0b0c0, 13,
                     DG_TEXT_LEFT | DG_TEXT_TOP, 0);
        const double kx = x0 + (n > 1 ? (double)idx / (n - 1) : 0) * (x1 - x0);
        dg_draw_line(d, x0, y, x1, y, 0x505060, 4);
        dg_draw_line(d, x0, y, kx, y, k == 0 ? 0xd0a030 : 0x4fc3f7, 4);
        dg_draw_circle_fill(d, kx, y, h->grab == i ? 8 : 6.5, active || h->grab == i ? 0xffffff : 0xd8d8e0, 1);
    }
    (void)g;
}

static void draw_panel(hview *h) {
    const dg_hji_grid *g = &h->vf.grid;
    dg_draw d;
    if (dg_draw_begin(&d, h->panel, NULL) != DG_OK) return;
    dg_draw_rect_fill(&d, 0, 0, h->panel->w, h->panel->h, 0x181822, 1);
    double y = 10;
    dg_draw_text(&d, 12, y, h->vf.game[0] ? h->vf.game : "value", 0xffffff, 16, DG_TEXT_LEFT | DG_TEXT_TOP, 0);
    draw_sliders(h, &d);
    y = SLIDER_TOP + nsliders(h) * SLIDER_STEP + 4;
    y += 8;
    if (h->npath > 0) {
        const double t = fmin(h->shown, (h->npath - 1) * h->dt);
        const double *x = h->full + (size_t)(int)fmin(h->npath - 1, floor(t / h->dt + 1e-9)) * g->ndim;
        panel_text(&d, &y, 0xff8c1a, 13, "played from (%.3g, %.3g)", h->full[0], h->full[1]);
        panel_text(&d, &y, 0xffffff, 13, "t = %.3f s  at (%.3g, ...)", t, x[0]);
        if (h->res.captured) panel_text(&d, &y, 0xff6060, 13, "captured at %.3f s", h->res.capture_time, 0);
        else panel_text(&d, &y, 0x80ff80, 13, "not captured", 0, 0);
        panel_text(&d, &y, 0xc0c0d0, 13, "V(x0) = %.4g", h->res.value0, 0);
        if (isfinite(h->res.payoff)) panel_text(&d, &y, 0xc0c0d0, 13, "payoff along it = %.4g", h->res.payoff, 0);
    } else if (h->p) {
        panel_text(&d, &y, 0xc0c0d0, 12, "click: both players' equilibrium", 0, 0);
        panel_text(&d, &y, 0xc0c0d0, 12, "play from that point", 0, 0);
    } else {
        panel_text(&d, &y, 0xc0c0d0, 12, "give --config to play from a click", 0, 0);
    }
    static const char *const KEYS[] = {"sliders: drag, or left/right: time", "tab: next axis, up/down: its value",
                                       "R clear the path", "S screenshot   Q/Esc quit"};
    double ky = h->panel->h - 10 - 4 * 16;
    for (int i = 0; i < 4; i++, ky += 16)
        dg_draw_text(&d, 12, ky, KEYS[i], 0x9090a0, 11, DG_TEXT_LEFT | DG_TEXT_TOP, 0);
    dg_draw_end(&d, NULL);
}

static int render(hview *h, double *ms) {
    const double t0 = vw_now();
    const dg_hji_grid *g = &h->vf.grid;
    int shown = 0;
    if (h->npath > 0) {  /* the path revealed at the speed of its own time */
        shown = (int)fmin(h->npath, floor(h->shown / h->dt + 1e-9) + 1);
        /* a 3-D or 4-D slice follows the path's other coordinates */
        for (int k = 2; k < g->ndim; k++) h->at[k] = h->full[(size_t)(shown - 1) * g->ndim + k];
    }
    const dg_hji_figure_layer L = {
        .v = h->V + (size_t)h->ti * g->nodes, .at = h->at, .levels = h->levels,
        .target = h->p ? h->p->target : NULL, .obstacle = h->p ? h->p->obstacle : NULL,
        .path = h->npath ? h->path : NULL, .npath = shown,
    };
    char title[96];
    snprintf(title, sizeof title, "%s: V at t = %.3g", h->vf.game[0] ? h->vf.game : "value", h->vf.times[h->ti]);
    dg_err e = {0};
    if (dg_hji_figure_draw(h->fig, h->plot, &L, title, &e) != DG_OK) return cli_fail(h->cmd, &e, EXIT_FAIL);
    draw_panel(h);
    dg_image *img = h->w.img;
    for (int y = 0; y < img->h; y++) {
        memset(img->rgb + (size_t)y * img->w * 3, 0xff, (size_t)img->w * 3);
        if (y < h->plot->h) memcpy(img->rgb + (size_t)y * img->w * 3, h->plot->rgb + (size_t)y * h->plot->w * 3,
                                   (size_t)h->plot->w * 3);
        if (y < h->panel->h)
            memcpy(img->rgb + ((size_t)y * img->w + h->plot->w) * 3, h->panel->rgb + (size_t)y * h->panel->w * 3,
                   (size_t)h->panel->w * 3);
    }
    *ms = (vw_now() - t0) * 1e3;
    return 0;
}

static int events(hview *h) {
    const dg_hji_grid *g = &h->vf.grid;
    SDL_Event ev;
    while (SDL_PollEvent(&ev)) {
        if (ev.type == SDL_QUIT) h->quit = 1;
        else if (ev.type == SDL_WINDOWEVENT) h->force = 1;
        else if (ev.type == SDL_MOUSEBUTTONDOWN && ev.button.button == SDL_BUTTON_LEFT &&
                 (h->grab = slider_at(h, ev.button.x, ev.button.y)) >= 0)
            slider_set(h, h->grab, ev.button.x);
        else if (ev.type == SDL_MOUSEMOTION && h->grab >= 0) slider_set(h, h->grab, ev.motion.x);
        else if (ev.type == SDL_MOUSEBUTTONUP && ev.button.button == SDL_BUTTON_LEFT) h->grab = -1;
        else if (ev.type == SDL_MOUSEBUTTONDOWN && ev.button.button == SDL_BUTTON_LEFT) {
            double x[DG_HJI_MAX_DIMS];
            memcpy(x, h->at, sizeof x);
            if (dg_hji_figure_point(h->fig, ev.button.x, ev.button.y, x)) {
                const int rc = play_from(h, x);
                if (rc) return rc;
            }
        } else if (ev.type == SDL_KEYDOWN) {
            const SDL_Keycode k = ev.key.keysym.sym;
            if (k == SDLK_q || k == SDLK_ESCAPE) h->quit = 1;
            else if (k == SDLK_LEFT && h->ti > 0) h->ti--;
            else if (k == SDLK_RIGHT && h->ti + 1 < h->vf.nt) h->ti++;
            else if ((k == SDLK_UP || k == SDLK_DOWN) && h->axis >= 2) {
                const int a = h->axis;
                const double v = h->at[a] + (k == SDLK_UP ? 1 : -1) * g->dx[a];
                h->at[a] = fmin(g->lo[a] + (g->n[a] - 1) * g->dx[a], fmax(g->lo[a], v));
                h->npath = 0;
            } else if (k == SDLK_TAB && g->ndim > 2) h->axis = h->axis + 1 < g->ndim ? h->axis + 1 : 2;
            else if (k == SDLK_r) h->npath = 0;
            else if (k == SDLK_SPACE) h->paused = !h->paused;
            else if (k == SDLK_s) vw_screenshot_key(&h->w);
        }
    }
    return 0;
}

/* --input: the keys a line may press, in bit order; its points are window pixels */
static const vw_key_name KEYS_IN[] = {
    {"left", SDLK_LEFT}, {"right", SDLK_RIGHT}, {"up", SDLK_UP}, {"down", SDLK_DOWN}, {"tab", SDLK_TAB},
    {"r", SDLK_r}, {"space", SDLK_SPACE}, {"s", SDLK_s}, {"q", SDLK_q},
};

static void pixel_px(void *user, float x, float y, int *px, int *py) {
    (void)user;
    *px = (int)lround(x);
    *py = (int)lround(y);
}

static void hview_free(hview *h) {
    vw_close(&h->w);
    dg_image_free(h->plot);
    dg_image_free(h->panel);
    dg_hji_figure_free(h->fig);
    vw_script_free(&h->script);
    free(h->V);
    free(h->path);
    free(h->full);
    dg_hji_value_close(&h->vf);
    dg_hji_problem_free(h->p);
    dg_cfg_free(h->cfg);
}

/* "x2=V,x3=W" or "V,W" of --at: the other axes' coordinates (by index or the game's names). */
static int parse_at(hview *h, const char *s) {
    const dg_hji_grid *g = &h->vf.grid;
    int k = 2;
    for (const char *tok = s; *tok;) {
        const size_t len = strcspn(tok, ",");
        char item[64];
        snprintf(item, sizeof item, "%.*s", (int)(len < 63 ? len : 63), tok);
        char *eq = strchr(item, '=');
        const char *num = item;
        if (eq) {
            *eq = '\0';
            num = eq + 1;
            k = -1;
            for (int a = 2; a < g->ndim; a++) {
                char nm[16];
                snprintf(nm, sizeof nm, "x%d", a);
                if (!strcmp(item, nm) || (g->name[a][0] && !strcmp(item, g->name[a]))) k = a;
            }
        }
        double v;
        if (k < 2 || k >= g->ndim || !cli_double(h->cmd, "--at", num, -INFINITY, INFINITY, 0, &v)) {
            if (k < 2 || k >= g->ndim)
                cli_error(h->cmd, "--at: names no axis after the first two of this %d-D value: %s", g->ndim,
                          DG_ECHO_N(tok, len));
            return EXIT_USAGE;
        }
        h->at[k++] = v;
        tok += len + (tok[len] == ',');
    }
    return 0;
}

int cmd_hji_view(int argc, char **argv) {
    const char *value, *config, *frames_s, *at_s, *from_s, *levels_s, *screenshot, *record, *speed_s, *input;
    int bench = 0;
    static const char HELP[] =
        "usage: difgames hji view --value FILE [--config FILE] [options]\n"
        "\n"
        "Opens a window on a value of hji solve: the slice through the first two axes as a\n"
        "colour map with its zero level set (white), the target (dashed red) and obstacles\n"
        "(grey) of --config, and for games of degree contours of the value. Keys: left/right\n"
        "the stored time, tab the next other axis, up/down its value (one grid step), space\n"
        "pause the play, R clear the path, S screenshot, Q/Esc quit; the panel's sliders\n"
        "(time, the other axes) drag with the mouse. With --config a click plays both players'\n"
        "equilibrium strategies from that point (the other axes at their slider values) and\n"
        "draws the path as it goes. Prints one JSON line at the end.\n"
        "\n"
        "options:\n";
    const cli_opt opts[] = {
        {"--value", &value, NULL, "FILE", "the value file of hji solve", "required"},
        {"--config", &config, NULL, "FILE", "its game's config: target, obstacles, clicks play", NULL},
        {"--at", &at_s, NULL, "x2=V,...", "3-D and more: the other axes' values (names or x2, x3, ...)", "their middle"},
        {"--from", &from_s, NULL, "X1,X2,...", "play from this state at the start (as a click does; needs --config)", NULL},
        {"--contours", &levels_s, NULL, "N", "contours of the value besides its zero set", "8 for games of degree, else 0"},
        {"--speed", &speed_s, NULL, "X", "seconds of play a real second", "1"},
        {"--frames", &frames_s, NULL, "N", "show N frames (60 a second), then exit", "until Q"},
        {"--screenshot", &screenshot, NULL, "FILE", "write the last frame as a PNG", NULL},
        {"--record", &record, NULL, "FILE", "write every frame into an animated GIF", NULL},
        {"--bench", NULL, &bench, NULL, "frames as fast as they come (no 60 Hz pacing)", NULL},
        {"--input", &input, NULL, "FILE", "keys pressed, one line a frame (left right up down tab r space s q) and the "
         "mouse at a window pixel (click X Y, press X Y, move X Y, release)", "the keyboard and mouse"},
        CLI_END,
    };
    const int prc = cli_parse("hji view", argc, argv, opts, HELP);
    if (prc) return prc == CLI_HELP ? 0 : prc;
    if (!value) {
        cli_error("hji view", "--value FILE is required (see --help)");
        return EXIT_USAGE;
    }
    if (from_s && !config) {
        cli_error("hji view", "--from needs --config (the game's strategies come from it)");
        return EXIT_USAGE;
    }
    const cli_path ins[] = {{"--value", value}, {"--config", config}, {"--input", input}};
    const cli_path outs[] = {{"--screenshot", screenshot}, {"--record", record}};
    if (cli_check_outputs("hji view", outs, 2, ins, 3)) return EXIT_USAGE;
    hview h = {.cmd = "hji view", .speed = 1, .levels = -1, .grab = -1};
    int frames_max = 0, rc = 0;
    if ((frames_s && !cli_int(h.cmd, "--frames", frames_s, 1, 10000000, &frames_max)) ||
        (levels_s && !cli_int(h.cmd, "--contours", levels_s, 0, 64, &h.levels)) ||
        (speed_s && !cli_double(h.cmd, "--speed", speed_s, 1.0 / 64, 64, 0, &h.speed)))
        return EXIT_USAGE;
    dg_err e = {0};
    if (input && (rc = vw_script_read(&h.script, h.cmd, input, KEYS_IN, (int)(sizeof KEYS_IN / sizeof KEYS_IN[0]))))
        goto done;
    if (dg_hji_value_open(value, &h.vf, &e) != DG_OK) {
        rc = cli_fail(h.cmd, &e, EXIT_USAGE);
        goto done;
    }
    const dg_hji_grid *g = &h.vf.grid;
    if (g->ndim < 2) {
        cli_error(h.cmd, "--value %s: a %d-D value has no 2-D slice to show", value, g->ndim);
        rc = EXIT_USAGE;
        goto done;
    }
    if (config) {  /* the game: its target, obstacles and strategies */
        h.cfg = dg_cfg_load(config, &e);
        h.p = h.cfg ? dg_hji_problem_load(h.cfg, &e) : NULL;
        if (!h.p || dg_cfg_check_unused(h.cfg, &e) != DG_OK || dg_hji_value_check(&h.vf, h.p, config, &e) != DG_OK) {
            rc = cli_fail(h.cmd, &e, EXIT_USAGE);
            goto done;
        }
    }
    char what[600];
    snprintf(what, sizeof what, "%.500s: %d times of %lld nodes", value, h.vf.nt, (long long)g->nodes);
    if (!cli_mem_ok(h.cmd, (double)h.vf.nt * (double)g->nodes * sizeof(double) + PATH_MAX_POINTS * 8.0 * (2 + g->ndim),
                    what, "the value file's times (hji solve --slices)")) {
        rc = EXIT_USAGE;
        goto done;
    }
    h.V = malloc((size_t)h.vf.nt * (size_t)g->nodes * sizeof(double));
    h.path = malloc((size_t)PATH_MAX_POINTS * 2 * sizeof(double));
    h.full = malloc((size_t)PATH_MAX_POINTS * g->ndim * sizeof(double));
    if (!h.V || !h.path || !h.full) {
        cli_error(h.cmd, "out of memory");
        rc = EXIT_FAIL;
        goto done;
    }
    if (dg_hji_value_read_all(&h.vf, h.V, &e) != DG_OK) {
        rc = cli_fail(h.cmd, &e, EXIT_USAGE);
        goto done;
    }
    for (int k = 0; k < g->ndim; k++) h.at[k] = 0.5 * (g->lo[k] + g->lo[k] + (g->n[k] - 1) * g->dx[k]);
    if (at_s && (rc = parse_at(&h, at_s))) goto done;
    h.ti = h.vf.nt - 1;
    h.axis = g->ndim > 2 ? 2 : -1;
    if (h.levels < 0) h.levels = h.p && dg_hji_game_degree(&h.p->game) ? 8 : 0;
    /* one colour scale for every time: the stored values' range */
    double lo = INFINITY, hi = -INFINITY;
    for (size_t j = 0; j < (size_t)h.vf.nt * (size_t)g->nodes; j++)
        if (isfinite(h.V[j])) { lo = fmin(lo, h.V[j]); hi = fmax(hi, h.V[j]); }
    if (!(h.fig = dg_hji_figure_create(g, h.vf.game, lo, hi, "V", &e))) {
        rc = cli_fail(h.cmd, &e, EXIT_FAIL);
        goto done;
    }
    const int fw = dg_hji_figure_width(h.fig), fh = dg_hji_figure_height(h.fig);
    h.plot = dg_image_create(fw, fh, 0xffffff);
    h.panel = dg_image_create(PANEL_W, fh, 0);
    if (!h.plot || !h.panel) {
        cli_error(h.cmd, "out of memory");
        rc = EXIT_FAIL;
        goto done;
    }
    if (from_s) {
        double x[DG_HJI_MAX_DIMS];
        double *vals = NULL;
        const int nv = cli_list(h.cmd, "--from", from_s, -INFINITY, INFINITY, 0, &vals);
        if (nv != g->ndim) {
            if (nv >= 0) cli_error(h.cmd, "--from: %s needs %d coordinates; got %s", value, g->ndim, DG_ECHO(from_s));
            free(vals);
            rc = EXIT_USAGE;
            goto done;
        }
        memcpy(x, vals, (size_t)nv * sizeof(double));
        free(vals);
        if ((rc = play_from(&h, x))) goto done;
    }
    char title[128];
    snprintf(title, sizeof title, "difgames hji view: %s", h.vf.game[0] ? h.vf.game : value);
    if ((rc = vw_open(&h.w, h.cmd, title, fw + PANEL_W, fh, record, bench))) goto done;
    while (!h.quit && !rc && (frames_max <= 0 || h.w.frames < frames_max)) {
        vw_frame_begin(&h.w);
        vw_script_push(&h.script, h.w.frames, pixel_px, NULL);
        if ((rc = events(&h)) || h.quit) break;
        if (!h.paused && h.npath > 0) h.shown += h.speed / VW_FPS;
        struct shown now;
        memset(&now, 0, sizeof now);  /* compared byte for byte: no stray padding */
        now.ti = h.ti;
        now.axis = h.axis;
        now.grab = h.grab;
        now.npath = h.npath;
        memcpy(now.at, h.at, sizeof now.at);
        if (h.npath > 0) {  /* the path's part shown and the time the panel prints */
            now.steps = (int)fmin(h.npath, floor(h.shown / h.dt + 1e-9) + 1);
            now.t = fmin(h.shown, (h.npath - 1) * h.dt);
            now.x0[0] = h.full[0];
            now.x0[1] = h.full[1];
        }
        if (h.w.frames > 0 && !h.force && !memcmp(&now, &h.last, sizeof now)) {
            rc = vw_show(&h.w, 0, 0, 0);
            continue;
        }
        h.last = now;
        h.force = 0;
        double ms = 0;
        const double c0 = vw_cpu();
        if (!(rc = render(&h, &ms))) rc = vw_show(&h.w, 1, ms, (vw_cpu() - c0) * 1e3);
    }
    if (rc || (rc = vw_finish(&h.w, screenshot))) goto done;
    cli_json j = {cJSON_CreateObject(), 0};
    cli_json_game(&j, h.vf.game, h.vf.source);
    cli_json_add(&j, j.root, "frames", cli_json_number("%.0f", (double)h.w.frames));
    cli_json_add(&j, j.root, "time", cli_json_number("%.6g", h.vf.times[h.ti]));
    cJSON *at = g->ndim > 2 ? cli_json_add(&j, j.root, "at", cJSON_CreateArray()) : NULL;
    for (int k = 2; at && k < g->ndim; k++) cli_json_add(&j, at, NULL, cli_json_number("%.6g", h.at[k]));
    /* the sliders' tracks in window pixels, for scripts (--input) to aim at */
    cJSON *sl = cli_json_add(&j, j.root, "sliders", cJSON_CreateArray());
    for (int i = 0; sl && i < nsliders(&h); i++) {
        double x0, x1, y;
        slider_track(&h, i, &x0, &x1, &y);
        cJSON *o = cli_json_add(&j, sl, NULL, cJSON_CreateObject());
        if (!o) break;
        char nm[32] = "time";
        if (i) dg_hji_grid_axis_name(&h.vf.grid, slider_axis(i), nm, sizeof nm);
        cli_json_add(&j, o, "name", cJSON_CreateString(nm));
        cli_json_add(&j, o, "x0", cli_json_number("%.9g", x0));
        cli_json_add(&j, o, "x1", cli_json_number("%.9g", x1));
        cli_json_add(&j, o, "y", cli_json_number("%.9g", y));
    }
    cli_json_add(&j, j.root, "path_steps", cli_json_number("%.0f", h.npath));
    if (h.npath) {
        cli_json_add(&j, j.root, "captured", cJSON_CreateBool(h.res.captured));
        cli_json_add(&j, j.root, "capture_time", cli_json_number("%.6g", h.res.captured ? h.res.capture_time : NAN));
        cli_json_add(&j, j.root, "value0", cli_json_number("%.6g", h.res.value0));
        /* where the path shown ends, in the state and on the screenshot */
        const int shown = (int)fmin(h.npath, floor(h.shown / h.dt + 1e-9) + 1);
        const double *end = h.path + 2 * (shown - 1);
        double px, py;
        dg_hji_figure_pixel(h.fig, end[0], end[1], &px, &py);
        cJSON *a = cli_json_add(&j, j.root, "end", cJSON_CreateArray());
        if (a) {
            cli_json_add(&j, a, NULL, cli_json_number("%.6g", end[0]));
            cli_json_add(&j, a, NULL, cli_json_number("%.6g", end[1]));
        }
        cJSON *b = cli_json_add(&j, j.root, "end_px", cJSON_CreateArray());
        if (b) {
            cli_json_add(&j, b, NULL, cli_json_number("%.0f", round(px)));
            cli_json_add(&j, b, NULL, cli_json_number("%.0f", round(py)));
        }
    }
    vw_json_speed(&h.w, &j, j.root);
    rc = cli_json_print(&j, h.cmd);
done:
    hview_free(&h);
    return rc;
}
