/* difgames hji view: a value function in a window. The slice through the first two axes (colour map,
 * zero level set, the target, obstacles; contours for games of degree) with keys for the other axes
 * and the stored time; a click plays both players' equilibrium strategies from that point. The
 * pictures are the library's (dg_hji_figure); SDL2 shows them. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/hji.h"
#include "difgames/hji_learn.h"
#include "difgames/memory.h"
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
    /* a network of hji learn as the value (--value NET): tabulated at the times shown, the
     * strategies from its own gradient */
    int net;
    dg_hji_learn_net ln;
    dg_hji_source src;
    /* sets that move in time: the target and obstacle field (2, nodes) of the game's time at the
     * time-to-go shown (sets_ti), drawn in place of the node arrays (where they end) */
    double *sets;
    int sets_ti;
} hview;

#define NET_TIMES 11             /* a network's times-to-go shown: 0, T/10, .., T */

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
    const dg_hji_source src = h->net ? h->src : dg_hji_source_slices(&h->p->grid, &VS);
    const int cost = dg_hji_game_degree(&h->p->game) && h->p->payoff == DG_HJI_PAYOFF_COST && !h->p->stationary;
    dg_hji_sim_opts o = {.t_max = cost ? h->p->t_end : 2 * h->p->t_end, .max_steps = 10 * PATH_MAX_POINTS,
                         .on_step = on_step, .user = h};
    h->npath = 0;
    h->shown = 0;
    dg_err e = {0};
    if (dg_hji_sim_dt_sources(h->p, &src, NULL, x, o.t_max, &o.dt, &e) != DG_OK ||
        dg_hji_simulate_sources(h->p, &src, NULL, x, &o, &h->res, &e) != DG_OK)
        return vw_fail(h->cmd, &e, DG_EXIT_FAIL);
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

/* Fills h->sets with the moving sets of the game's time t_end - tau, tau the time-to-go shown, unless
 * they are already there; DG_OK or the formula's error. */
static dg_status moving_sets(hview *h, dg_err *e) {
    if (h->sets_ti == h->ti) return DG_OK;
    const dg_hji_grid *g = &h->vf.grid;
    const double t = fmax(h->p->t_end - h->vf.times[h->ti], 0);
    double x[(1 << 10) * DG_HJI_MAX_DIMS];
    for (int64_t j0 = 0; j0 < g->nodes; j0 += 1 << 10) {  /* a block of nodes at a time */
        const int m = (int)(g->nodes - j0 < (1 << 10) ? g->nodes - j0 : 1 << 10);
        for (int i = 0; i < m; i++) dg_hji_grid_point(g, j0 + i, x + (size_t)i * g->ndim);
        dg_status s = dg_hji_problem_sets_at(h->p, t, m, x, h->sets + j0, h->p->obstacle ? h->sets + g->nodes + j0
                                                                                        : NULL, e);
        if (s != DG_OK) return s;
    }
    h->sets_ti = h->ti;
    return DG_OK;
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
    dg_err e = {0};
    if (h->sets && moving_sets(h, &e) != DG_OK) return vw_fail(h->cmd, &e, DG_EXIT_FAIL);
    const dg_hji_figure_layer L = {
        .v = h->V + (size_t)h->ti * g->nodes, .at = h->at, .levels = h->levels,
        .target = h->sets ? h->sets : h->p ? h->p->target : NULL,
        .obstacle = h->sets && h->p->obstacle ? h->sets + g->nodes : h->p ? h->p->obstacle : NULL,
        .path = h->npath ? h->path : NULL, .npath = shown,
    };
    char title[96];
    snprintf(title, sizeof title, "%s: V at t = %.3g", h->vf.game[0] ? h->vf.game : "value", h->vf.times[h->ti]);
    if (dg_hji_figure_draw(h->fig, h->plot, &L, title, &e) != DG_OK) return vw_fail(h->cmd, &e, DG_EXIT_FAIL);
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
    free(h->sets);
    dg_hji_value_close(&h->vf);
    dg_hji_learn_net_free(&h->ln);
    dg_hji_problem_free(h->p);
    dg_cfg_free(h->cfg);
}

/* A network (o->value) of the game h->p: its value at NET_TIMES times-to-go on the config's grid, as
 * a value file in memory (h->vf, h->V), and its source for the strategies; 0, or the exit status after
 * one error line. */
static int hview_net(hview *h, const vw_hji_opts *o) {
    dg_err e = {0};
    const dg_hji_grid *g = &h->p->grid;
    if (dg_hji_learn_load(o->value, h->p, &h->ln, &e) != DG_OK || dg_hji_learn_source(&h->ln, h->p, &h->src, &e) != DG_OK)
        return vw_fail(h->cmd, &e, e.status == DG_ERR_NOMEM ? DG_EXIT_FAIL : DG_EXIT_USAGE);
    h->net = 1;
    if (dg_mem_check((double)NET_TIMES * (double)g->nodes * 3 * sizeof(double), &e) != DG_OK) {
        vw_error(h->cmd, "--value %.500s: %d times of %lld nodes %s", o->value, NET_TIMES, (long long)g->nodes, e.msg);
        return DG_EXIT_USAGE;
    }
    double times[NET_TIMES];
    if (!(h->V = malloc((size_t)NET_TIMES * (size_t)g->nodes * sizeof(double)))) {
        vw_error(h->cmd, "out of memory");
        return DG_EXIT_FAIL;
    }
    for (int i = 0; i < NET_TIMES; i++) {
        times[i] = h->src.horizon * i / (NET_TIMES - 1);
        if (dg_hji_source_tabulate(&h->src, g, times[i], h->V + (size_t)i * (size_t)g->nodes, &e) != DG_OK)
            return vw_fail(h->cmd, &e, DG_EXIT_FAIL);
    }
    return dg_hji_value_make(h->p, NET_TIMES, times, h->V, o->value, &h->vf, &e) == DG_OK
               ? 0 : vw_fail(h->cmd, &e, DG_EXIT_FAIL);
}

/* The value file o->value, its game (o->config: target, obstacles, strategies) and every stored time
 * into h; 0, or the exit status after one error line. */
static int hview_load(hview *h, const vw_hji_opts *o) {
    dg_err e = {0};
    if (dg_hji_learn_probe(o->value, NULL)) {  /* a network: its game's config gives the grid it is shown on */
        if (!o->config) {
            vw_error(h->cmd, "--value %.500s is a network of hji learn: it needs --config FILE (its game and grid)",
                     o->value);
            return DG_EXIT_USAGE;
        }
        h->cfg = dg_cfg_load(o->config, &e);
        h->p = h->cfg ? dg_hji_problem_load(h->cfg, &e) : NULL;
        dg_hji_learn_opts lo;
        if (!h->p || dg_hji_learn_opts_read(h->cfg, &lo, &e) != DG_OK || dg_cfg_check_unused(h->cfg, &e) != DG_OK)
            return vw_fail(h->cmd, &e, DG_EXIT_USAGE);
        if (h->p->grid.ndim < 2) {
            vw_error(h->cmd, "--config %s: a %d-D value has no 2-D slice to show", o->config, h->p->grid.ndim);
            return DG_EXIT_USAGE;
        }
        int rc = hview_net(h, o);
        if (!rc && (!(h->path = malloc((size_t)PATH_MAX_POINTS * 2 * sizeof(double))) ||
                    !(h->full = malloc((size_t)PATH_MAX_POINTS * h->p->grid.ndim * sizeof(double))))) {
            vw_error(h->cmd, "out of memory");
            rc = DG_EXIT_FAIL;
        }
        return rc;
    }
    if (dg_hji_value_open(o->value, &h->vf, &e) != DG_OK) return vw_fail(h->cmd, &e, DG_EXIT_USAGE);
    const dg_hji_grid *g = &h->vf.grid;
    if (g->ndim < 2) {
        vw_error(h->cmd, "--value %s: a %d-D value has no 2-D slice to show", o->value, g->ndim);
        return DG_EXIT_USAGE;
    }
    if (o->config) {  /* the game: its target, obstacles and strategies */
        h->cfg = dg_cfg_load(o->config, &e);
        h->p = h->cfg ? dg_hji_problem_load(h->cfg, &e) : NULL;
        dg_hji_learn_opts lo;  /* a config that also learns the value: its learn.* keys are read, not used */
        if (!h->p || dg_hji_learn_opts_read(h->cfg, &lo, &e) != DG_OK || dg_cfg_check_unused(h->cfg, &e) != DG_OK || dg_hji_value_check(&h->vf, h->p, o->config, &e) != DG_OK)
            return vw_fail(h->cmd, &e, DG_EXIT_USAGE);
    }
    const int sets = h->p && dg_hji_problem_moving(h->p) ? 2 : 0;  /* (moving_sets) */
    if (dg_mem_check((double)(h->vf.nt + sets) * (double)g->nodes * sizeof(double) + PATH_MAX_POINTS * 8.0 * (2 + g->ndim),
                     &e) != DG_OK) {
        vw_error(h->cmd, "%.500s: %d times of %lld nodes %s; lower the value file's times (hji solve --slices)",
                 o->value, h->vf.nt, (long long)g->nodes, e.msg);
        return DG_EXIT_USAGE;
    }
    h->V = malloc((size_t)h->vf.nt * (size_t)g->nodes * sizeof(double));
    h->path = malloc((size_t)PATH_MAX_POINTS * 2 * sizeof(double));
    h->full = malloc((size_t)PATH_MAX_POINTS * g->ndim * sizeof(double));
    h->sets_ti = -1;
    if (h->p && dg_hji_problem_moving(h->p)) h->sets = malloc(2 * (size_t)g->nodes * sizeof(double));
    if (!h->V || !h->path || !h->full || (h->p && dg_hji_problem_moving(h->p) && !h->sets)) {
        vw_error(h->cmd, "out of memory");
        return DG_EXIT_FAIL;
    }
    return dg_hji_value_read_all(&h->vf, h->V, &e) == DG_OK ? 0 : vw_fail(h->cmd, &e, DG_EXIT_USAGE);
}

/* The slice shown first (o->at, the last time), the figure with one colour scale for every time (the
 * stored values' range) and the panel, then o->from's play; 0, or the exit status after one error
 * line. */
static int hview_setup(hview *h, const vw_hji_opts *o) {
    const dg_hji_grid *g = &h->vf.grid;
    dg_err e = {0};
    if (dg_hji_grid_slice_at(g, o->at, h->at, &e) != DG_OK) {
        vw_error(h->cmd, "--at: %s", e.msg);
        return DG_EXIT_USAGE;
    }
    h->ti = h->vf.nt - 1;
    h->axis = g->ndim > 2 ? 2 : -1;
    if (h->levels < 0) h->levels = h->p && dg_hji_game_degree(&h->p->game) ? 8 : 0;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t j = 0; j < (size_t)h->vf.nt * (size_t)g->nodes; j++)
        if (isfinite(h->V[j])) { lo = fmin(lo, h->V[j]); hi = fmax(hi, h->V[j]); }
    if (!(h->fig = dg_hji_figure_create(g, h->vf.game, lo, hi, "V", &e))) return vw_fail(h->cmd, &e, DG_EXIT_FAIL);
    const int fh = dg_hji_figure_height(h->fig);
    h->plot = dg_image_create(dg_hji_figure_width(h->fig), fh, 0xffffff);
    h->panel = dg_image_create(PANEL_W, fh, 0);
    if (!h->plot || !h->panel) {
        vw_error(h->cmd, "out of memory");
        return DG_EXIT_FAIL;
    }
    if (!o->from) return 0;
    if (o->nfrom != g->ndim) {
        vw_error(h->cmd, "--from: %s needs %d coordinates; got %s", o->value, g->ndim, DG_ECHO(o->from_text));
        return DG_EXIT_USAGE;
    }
    double x[DG_HJI_MAX_DIMS];
    memcpy(x, o->from, (size_t)o->nfrom * sizeof(double));
    return play_from(h, x);
}

/* One frame: the script's events, the path's time advanced, the picture drawn anew when what it
 * shows changed; 0, or the exit status after one error line. */
static int hview_frame(hview *h) {
    vw_frame_begin(&h->w);
    vw_script_push(&h->script, h->w.frames, pixel_px, NULL);
    int rc = events(h);
    if (rc || h->quit) return rc;
    if (!h->paused && h->npath > 0) h->shown += h->speed / VW_FPS;
    struct shown now;
    memset(&now, 0, sizeof now);  /* compared byte for byte: no stray padding */
    now.ti = h->ti;
    now.axis = h->axis;
    now.grab = h->grab;
    now.npath = h->npath;
    memcpy(now.at, h->at, sizeof now.at);
    if (h->npath > 0) {  /* the path's part shown and the time the panel prints */
        now.steps = (int)fmin(h->npath, floor(h->shown / h->dt + 1e-9) + 1);
        now.t = fmin(h->shown, (h->npath - 1) * h->dt);
        now.x0[0] = h->full[0];
        now.x0[1] = h->full[1];
    }
    if (h->w.frames > 0 && !h->force && !memcmp(&now, &h->last, sizeof now)) return vw_show(&h->w, 0, 0, 0);
    h->last = now;
    h->force = 0;
    double ms = 0;
    const double c0 = vw_cpu();
    return (rc = render(h, &ms)) ? rc : vw_show(&h->w, 1, ms, (vw_cpu() - c0) * 1e3);
}

/* The JSON line's fields of a view that ran to its end: the slice, the sliders' tracks in window
 * pixels (for --input scripts to aim at), the path shown and where it ends, and the speed. */
static void hview_report(const hview *h, dg_json *j) {
    const dg_hji_grid *g = &h->vf.grid;
    dg_json_game(j, h->vf.game, h->vf.source);
    dg_json_add(j, j->root, "frames", dg_json_number("%.0f", (double)h->w.frames));
    dg_json_add(j, j->root, "time", dg_json_number("%.6g", h->vf.times[h->ti]));
    cJSON *at = g->ndim > 2 ? dg_json_add(j, j->root, "at", cJSON_CreateArray()) : NULL;
    for (int k = 2; at && k < g->ndim; k++) dg_json_add(j, at, NULL, dg_json_number("%.6g", h->at[k]));
    cJSON *sl = dg_json_add(j, j->root, "sliders", cJSON_CreateArray());
    for (int i = 0; sl && i < nsliders(h); i++) {
        double x0, x1, y;
        slider_track(h, i, &x0, &x1, &y);
        cJSON *o = dg_json_add(j, sl, NULL, cJSON_CreateObject());
        if (!o) break;
        char nm[32] = "time";
        if (i) dg_hji_grid_axis_name(g, slider_axis(i), nm, sizeof nm);
        dg_json_add(j, o, "name", cJSON_CreateString(nm));
        dg_json_add(j, o, "x0", dg_json_number("%.9g", x0));
        dg_json_add(j, o, "x1", dg_json_number("%.9g", x1));
        dg_json_add(j, o, "y", dg_json_number("%.9g", y));
    }
    dg_json_add(j, j->root, "path_steps", dg_json_number("%.0f", h->npath));
    if (h->npath) {
        dg_json_add(j, j->root, "captured", cJSON_CreateBool(h->res.captured));
        dg_json_add(j, j->root, "capture_time", dg_json_number("%.6g", h->res.captured ? h->res.capture_time : NAN));
        dg_json_add(j, j->root, "value0", dg_json_number("%.6g", h->res.value0));
        /* where the path shown ends, in the state and on the screenshot */
        const int shown = (int)fmin(h->npath, floor(h->shown / h->dt + 1e-9) + 1);
        const double *end = h->path + 2 * (shown - 1);
        double px, py;
        dg_hji_figure_pixel(h->fig, end[0], end[1], &px, &py);
        cJSON *a = dg_json_add(j, j->root, "end", cJSON_CreateArray());
        if (a) {
            dg_json_add(j, a, NULL, dg_json_number("%.6g", end[0]));
            dg_json_add(j, a, NULL, dg_json_number("%.6g", end[1]));
        }
        cJSON *b = dg_json_add(j, j->root, "end_px", cJSON_CreateArray());
        if (b) {
            dg_json_add(j, b, NULL, dg_json_number("%.0f", round(px)));
            dg_json_add(j, b, NULL, dg_json_number("%.0f", round(py)));
        }
    }
    vw_json_speed(&h->w, j, j->root);
}

int vw_hji_view(const vw_hji_opts *o, dg_json *j) {
    hview h = {.cmd = "hji view", .speed = o->speed, .levels = o->levels, .grab = -1};
    int rc = o->input ? vw_script_read(&h.script, h.cmd, o->input, KEYS_IN, (int)(sizeof KEYS_IN / sizeof KEYS_IN[0]))
                      : 0;
    if (!rc) rc = hview_load(&h, o);
    if (!rc) rc = hview_setup(&h, o);
    if (!rc) {
        char title[128];
        snprintf(title, sizeof title, "difgames hji view: %s", h.vf.game[0] ? h.vf.game : o->value);
        rc = vw_open(&h.w, h.cmd, title, h.plot->w + PANEL_W, h.plot->h, o->record, o->bench);
    }
    while (!rc && !h.quit && (o->frames <= 0 || h.w.frames < o->frames)) rc = hview_frame(&h);
    if (!rc) rc = vw_finish(&h.w, o->screenshot);
    if (!rc) hview_report(&h, j);
    hview_free(&h);
    return rc;
}
