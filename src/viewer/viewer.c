/* difgames view / play: a game's episodes in a window, played live by the learned policy, or by a
 * person at the keyboard against it. The frames are the replays' (dg_replay_draw) with a side panel;
 * SDL2 only shows them and reads the keys and the mouse. */
#define _POSIX_C_SOURCE 200809L
#include <SDL.h>
#include <dirent.h>
#include <math.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "difgames/checkpoint.h"
#include "difgames/fileio.h"
#include "difgames/live.h"
#include "difgames/memory.h"
#include "difgames/replay.h"
#include "difgames/safetensors.h"
#include "io/csv.h"
#include "gfx/draw.h"
#include "viewer/viewer.h"
#include "viewer/window.h"

#define PANEL_W 300
#define FPS VW_FPS
#define CURVE_MAX 2048          /* --run: points of the loss curve kept (every k-th row past that) */
#define RUN_POLL_FRAMES 30      /* --run: the folder is looked at twice a second */

enum { K_LEFT = 1, K_RIGHT = 2, K_UP = 4, K_DOWN = 8 };

typedef struct viewer {
    const char *cmd;
    /* options */
    int size, frames_max, bench, rows;
    double speed;
    const char *screenshot, *record, *traj_path;
    unsigned char *input;         /* play --input: held keys of each frame (K_*), ninput frames */
    int ninput;
    vw_script script;             /* view --input: keys pressed and the mouse, frame by frame */
    int player;                   /* play: the person's player (0, 1); view: -1 */
    /* the game */
    dg_run run;
    dg_policy pol;
    dg_params *p;
    dg_safety guard;              /* safety.value (--safety): the filter around pol (safety.h) */
    dg_live *live;
    dg_real *state, *aux, *row;     /* initial states, row 0's trajectory */
    uint64_t seed;
    int capture_metric;           /* index of the game's capture_time metric, or -1 */
    int drag_body;                /* the body the mouse moves (the goal, or else the last body), -1: none */
    /* the window */
    vw_window w;
    dg_image *arena, *panel;
    dg_render_grid *grid;
    dg_real *heat;
    /* state of play */
    int paused, cursor, batch, dragging, over, quit, shots;
    dg_replay_view view;          /* the world the frame shown shows */
    /* --run DIR: the newest snapshot, reloaded as training writes it; metrics.csv's loss curve */
    const char *run_dir;
    char snap[DG_PATH_MAX];       /* the snapshot in use ("" none yet) */
    struct timespec snap_mtime, csv_mtime;
    int reloads, run_epoch, ncurve;
    float curve_x[CURVE_MAX], curve_y[CURVE_MAX];
    double acc;                   /* simulated seconds not yet stepped */
    int changes;                  /* bodies moved, episodes begun, snapshots loaded: what else redraws */
    int force;                    /* redraw the next frame (the window was exposed, resized) */
    struct shown {                /* what the frame shows: a frame is drawn anew when it changes */
        int cursor, steps, paused, batch, changes, reloads, ncurve, run_epoch;
        uint64_t seed;
        double speed;
    } last;
    double t_start;               /* the equilibrium's capture time from the start (NaN: none) */
} viewer;

/* pixels of the arena view <-> the world, through the view of the frame shown */
static float world_x(const viewer *v, double px) { return (float)(v->view.cx + (px / v->size * 2 - 1) * v->view.half); }
static float world_y(const viewer *v, double py) {
    return (float)(v->view.cy + (1 - (py - DG_REPLAY_HEADER) / v->size * 2) * v->view.half);
}
static double pix_x(const viewer *v, float x) { return (x - v->view.cx + v->view.half) / (2 * v->view.half) * v->size; }
static double pix_y(const viewer *v, float y) {
    return DG_REPLAY_HEADER + (v->view.half - (y - v->view.cy)) / (2 * v->view.half) * v->size;
}

static void push_scripted(viewer *v);  /* view --input */

/* ------------------------------------------------------------------ episodes */

static int new_episode(viewer *v) {
    dg_err e = {0};
    free(v->state);
    free(v->aux);
    v->state = v->aux = NULL;
    if (dg_run_init_draw(v->run.env, v->seed, v->rows, &v->state, &v->aux, &e) != DG_OK ||
        dg_live_reset(v->live, v->state, v->aux, &e) != DG_OK)
        return vw_fail(v->cmd, &e, DG_EXIT_FAIL);
    /* a noisy game: the noise of eval --seed's first draw (dg_run_eval_noise), new with each seed */
    dg_live_noise(v->live, &(dg_noise){dg_noise_key(v->seed, 1), 0});
    const dg_game *g = v->run.env->game;
    v->t_start = g->equilibrium_time ? g->equilibrium_time(v->run.env, v->state, v->aux) : NAN;
    v->cursor = 0;
    v->acc = 0;
    v->over = 0;
    v->changes++;
    return 0;
}

/* The person's action from the held keys: each axis at full scale, -1, 0 or 1. */
static void key_action(unsigned keys, dg_real *a) {
    a[0] = (dg_real)(((keys & K_RIGHT) != 0) - ((keys & K_LEFT) != 0));
    a[1] = (dg_real)(((keys & K_UP) != 0) - ((keys & K_DOWN) != 0));
}

/* Has row 0 been captured (the game's capture_time metric is set)? */
static int captured(const viewer *v) {
    if (v->capture_metric < 0 || dg_live_rows(v->live) != 1) return 0;
    double m[DG_MAX_METRICS];
    dg_live_metrics(v->live, m);
    return isfinite(m[v->capture_metric]);
}

static int step_once(viewer *v, unsigned keys) {
    const dg_env *env = v->run.env;
    if (dg_live_steps(v->live) >= env->horizon || v->over) return 0;
    dg_real a[2 * DG_LIVE_MAX_ROWS];
    const int dim = v->player == 1 ? env->act2_dim : env->act_dim;
    if (v->player >= 0) {
        dg_real k[2];
        key_action(keys, k);
        for (int b = 0; b < v->rows; b++)
            for (int j = 0; j < dim; j++) a[b * dim + j] = j < 2 ? k[j] : 0;
    }
    dg_err e = {0};
    if (dg_live_step(v->live, v->player, v->player >= 0 ? a : NULL, &e) != DG_OK) return vw_fail(v->cmd, &e, DG_EXIT_FAIL);
    v->cursor = dg_live_steps(v->live);
    if (v->player >= 0 && captured(v)) v->over = 1;
    return 0;
}

/* -------------------------------------------------------------------- drawing */

static const uint32_t FADED[] = {0xff8c1a, 0x33c3ff, 0xa0e060, 0xff5fd0};

/* The other rows of the batch, faded, over the arena (their trails up to the cursor and bodies). */
static void draw_batch(viewer *v) {
    const dg_env *env = v->run.env;
    const int B = dg_live_rows(v->live), S = env->state_dim;
    const dg_real *traj = dg_live_traj(v->live), *aux = dg_live_aux(v->live);
    dg_draw d;
    if (dg_draw_begin(&d, v->arena, NULL) != DG_OK) return;
    cairo_rectangle(d.cr, 0, DG_REPLAY_HEADER, v->size, v->size);
    cairo_clip(d.cr);
    cairo_set_line_width(d.cr, 1.0);
    for (int b = 1; b < B; b++) {
        dg_real xy[2 * DG_MAX_BODIES];
        int goal[DG_MAX_BODIES];
        const dg_real *ab = aux ? aux + (size_t)b * env->aux_dim : NULL;
        const int n = env->game->bodies(env, traj + (size_t)b * S, ab, xy, goal);
        /* each moving body's trail as one path, stroked once */
        for (int k = 0, c = 0; k < n && k < DG_MAX_BODIES; k++) {
            if (goal[k]) continue;
            const uint32_t rgb = FADED[c++ % 4];
            for (int t = 0; t <= v->cursor; t++) {
                dg_real p[2 * DG_MAX_BODIES];
                int g[DG_MAX_BODIES];
                env->game->bodies(env, traj + ((size_t)t * B + b) * S, ab, p, g);
                if (t == 0) cairo_move_to(d.cr, pix_x(v, p[2 * k]), pix_y(v, p[2 * k + 1]));
                else cairo_line_to(d.cr, pix_x(v, p[2 * k]), pix_y(v, p[2 * k + 1]));
            }
            cairo_set_source_rgba(d.cr, (rgb >> 16) / 255.0, ((rgb >> 8) & 255) / 255.0, (rgb & 255) / 255.0, 0.35);
            cairo_stroke(d.cr);
        }
        env->game->bodies(env, traj + ((size_t)v->cursor * B + b) * S, ab, xy, goal);
        for (int k = 0, c = 0; k < n && k < DG_MAX_BODIES; k++) {
            const uint32_t rgb = goal[k] ? 0xff3030 : FADED[c++ % 4];
            cairo_set_source_rgba(d.cr, (rgb >> 16) / 255.0, ((rgb >> 8) & 255) / 255.0, (rgb & 255) / 255.0, 0.45);
            cairo_arc(d.cr, pix_x(v, xy[2 * k]), pix_y(v, xy[2 * k + 1]), goal[k] ? 4 : 3.5, 0, 6.2831853);
            cairo_fill(d.cr);
        }
    }
    dg_draw_end(&d, NULL);
}

static double panel_line(dg_draw *d, double y, const char *s, uint32_t rgb, double size) {
    dg_draw_text(d, 12, y, s, rgb, size, DG_TEXT_LEFT | DG_TEXT_TOP, 0);
    return y + size * 1.45;
}

static void draw_panel(viewer *v) {
    const dg_env *env = v->run.env;
    dg_draw d;
    if (dg_draw_begin(&d, v->panel, NULL) != DG_OK) return;
    dg_draw_rect_fill(&d, 0, 0, v->panel->w, v->panel->h, 0x181822, 1);
    dg_draw_line(&d, 0.5, 0, 0.5, v->panel->h, 0x404050, 1);
    char s[160];
    double y = 8;
    snprintf(s, sizeof s, "%s  seed %llu", env->game->name, (unsigned long long)v->seed);
    y = panel_line(&d, y, s, 0xffffff, 15);
    const int t = dg_live_steps(v->live);
    snprintf(s, sizeof s, "step %d/%d  t=%.2f s  x%.2g%s", v->cursor, env->horizon, v->cursor * env->dt, v->speed,
             v->paused ? "  paused" : "");
    y = panel_line(&d, y, s, 0xc8c8d0, 12);
    y += 6;
    /* the loss so far, term by term, with bars in proportion to the largest */
    dg_real terms[DG_LOSS_MAX_TERMS];
    dg_live_terms(v->live, terms);
    double total = 0, big = 1e-30;
    for (int i = 0; i < env->nterms; i++) {
        total += terms[i];
        big = fmax(big, fabs(terms[i]));
    }
    char num[32];  /* the numbers as dg_format_double prints them: a zero term reads 0, never -0 */
    dg_format_double(num, sizeof num, "%.4g", total);
    snprintf(s, sizeof s, "loss so far (%d steps): %s", t, num);
    y = panel_line(&d, y, s, 0xffffff, 13);
    for (int i = 0; i < env->nterms; i++) {
        dg_format_double(num, sizeof num, "%.4g", terms[i]);
        snprintf(s, sizeof s, "%-10s %s", env->term_names[i], num);
        dg_draw_text(&d, 18, y, s, 0xd0d0d8, 12, DG_TEXT_LEFT | DG_TEXT_TOP, 0);
        dg_draw_rect_fill(&d, 170, y + 2, fmax(1, 110 * fabs(terms[i]) / big), 10, dg_plot_color(i), 1);
        y += 17;
    }
    y += 6;
    double m[DG_MAX_METRICS];
    dg_live_metrics(v->live, m);
    if (env->nmetrics) y = panel_line(&d, y, dg_live_rows(v->live) > 1 ? "metrics (batch)" : "metrics", 0xffffff, 13);
    for (int i = 0; i < env->nmetrics; i++) {
        dg_format_double(num, sizeof num, "%.4g", m[i]);
        snprintf(s, sizeof s, "%s  %s", env->metric_names[i], num);
        y = panel_line(&d, y, s, 0xd0d0d8, 12);
    }
    if (v->run_dir) {  /* --run: the snapshot in use and the loss curve so far */
        y += 6;
        const char *base = strrchr(v->snap, '/');
        snprintf(s, sizeof s, "run: %.120s", v->snap[0] ? (base ? base + 1 : v->snap) : "waiting for a snapshot");
        y = panel_line(&d, y, s, 0xffd060, 12);
        if (v->ncurve > 1) {
            snprintf(s, sizeof s, "loss by epoch (log), last epoch %d", v->run_epoch);
            y = panel_line(&d, y, s, 0xc8c8d0, 11);
            const double x0 = 14, w = v->panel->w - 28, h = 90;
            double lo = INFINITY, hi = -INFINITY, px[CURVE_MAX], py[CURVE_MAX];
            for (int i = 0; i < v->ncurve; i++)
                if (v->curve_y[i] > 0) { lo = fmin(lo, log10(v->curve_y[i])); hi = fmax(hi, log10(v->curve_y[i])); }
            if (!(hi > lo)) hi = lo + 1;
            const double e0 = v->curve_x[0], e1 = fmax(v->curve_x[v->ncurve - 1], e0 + 1);
            for (int i = 0; i < v->ncurve; i++) {
                px[i] = x0 + (v->curve_x[i] - e0) / (e1 - e0) * w;
                py[i] = v->curve_y[i] > 0 ? y + (hi - log10(v->curve_y[i])) / (hi - lo) * h : NAN;
            }
            dg_draw_rect_outline(&d, x0 - 1, y - 1, w + 3, h + 3, 0x404050, 1);
            dg_draw_polyline(&d, px, py, v->ncurve, 0x4fc3f7, 1.5);
            y += h + 8;
        }
    }
    if (v->player >= 0) {  /* play: the time, the capture, the score to beat */
        y += 6;
        const char *names = env->game->body_names;
        char you[64] = "player";
        if (names) {  /* the name of body `player` */
            const char *q = names;
            for (int k = 0; k < v->player && q; k++) q = strchr(q, ',') ? strchr(q, ',') + 1 : NULL;
            if (q) snprintf(you, sizeof you, "%.*s", (int)(strchr(q, ',') ? strchr(q, ',') - q : (long)strlen(q)), q);
        }
        snprintf(s, sizeof s, "you play the %s (arrows or WASD)", you);
        y = panel_line(&d, y, s, 0xffd060, 13);
        snprintf(s, sizeof s, "time %.2f s", t * env->dt);
        y = panel_line(&d, y, s, 0xffffff, 13);
        if (v->capture_metric >= 0) {
            const int cap = isfinite(m[v->capture_metric]);
            if (cap) snprintf(s, sizeof s, "captured at %.2f s", m[v->capture_metric]);
            else snprintf(s, sizeof s, t >= env->horizon ? "not captured in %.2f s" : "not captured yet",
                          env->horizon * env->dt);
            y = panel_line(&d, y, s, cap ? 0xff6060 : 0x80ff80, 13);
        }
        if (isfinite(v->t_start)) {
            snprintf(s, sizeof s, "equilibrium capture: %.3f s", v->t_start);
            y = panel_line(&d, y, s, 0x80c0ff, 13);
            y = panel_line(&d, y, v->player == 1 ? "to beat: stay free longer than that" : "to beat: capture sooner",
                           0x8090a0, 11);
        }
    }
    /* the keys */
    static const char *const VIEW_KEYS[] = {"space pause   left/right step", "+/- speed   R new state",
                                            "B batch   S screenshot   Q quit", "mouse: drag the goal / evader"};
    static const char *const PLAY_KEYS[] = {"arrows/WASD move   space pause", "R new state   F12 screenshot",
                                            "Q/Esc quit"};
    const int nk = v->player >= 0 ? 3 : 4;
    double ky = v->panel->h - 8 - nk * 16;
    for (int i = 0; i < nk; i++, ky += 16)
        dg_draw_text(&d, 12, ky, v->player >= 0 ? PLAY_KEYS[i] : VIEW_KEYS[i], 0x9090a0, 11, DG_TEXT_LEFT | DG_TEXT_TOP, 0);
    (void)y;
    dg_draw_end(&d, NULL);
}

/* The frame at the cursor into v->w.img (arena | panel); returns the milliseconds it took. */
static double render(viewer *v) {
    const double t0 = vw_now();
    const dg_env *env = v->run.env;
    dg_live_row(v->live, 0, v->row);
    dg_replay_track *tr = dg_replay_track_create(env, v->row, dg_live_aux(v->live), v->cursor + 1, NULL);
    dg_replay_view_fit(tr, 0, v->cursor, &v->view);
    if (tr) dg_replay_draw_view(v->arena, env, tr, v->grid, 0.08f, v->cursor, v->heat, &v->view);
    dg_replay_track_free(tr);
    if (v->batch && dg_live_rows(v->live) > 1) draw_batch(v);
    draw_panel(v);
    const int W = v->w.img->w, aw = v->arena->w, pw = v->panel->w;
    for (int y = 0; y < v->w.img->h; y++) {
        memcpy(v->w.img->rgb + (size_t)y * W * 3, v->arena->rgb + (size_t)y * aw * 3, (size_t)aw * 3);
        memcpy(v->w.img->rgb + ((size_t)y * W + aw) * 3, v->panel->rgb + (size_t)y * pw * 3, (size_t)pw * 3);
    }
    return (vw_now() - t0) * 1e3;
}

/* ------------------------------------------------------------------- --run DIR */

static int newer(struct timespec a, struct timespec b) {
    return a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec > b.tv_nsec;
}

/* metrics.csv's epoch and loss columns into the curve (every k-th row when there are many). */
static void read_curve(viewer *v, const char *path) {
    unsigned char *text = NULL;
    size_t len = 0;
    if (dg_file_read_max(path, (size_t)256 << 20, &text, &len, NULL) != DG_OK) return;
    int rows = 0;
    for (size_t i = 0; i < len; i++) rows += text[i] == '\n';
    const int every = rows > CURVE_MAX ? (rows + CURVE_MAX - 1) / CURVE_MAX : 1;
    int col_epoch = -1, col_loss = -1, line = 0, n = 0;
    char *p = (char *)text, *end = (char *)text + len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) break;  /* a row without its end: not yet a row */
        *nl = '\0';
        double ep = NAN, lo = NAN;
        int c = 0;
        for (char *tok = p; tok; c++) {
            char *comma = strchr(tok, ',');
            if (comma) *comma = '\0';
            if (line == 0) {
                if (!strcmp(tok, "epoch")) col_epoch = c;
                if (!strcmp(tok, "loss")) col_loss = c;
            } else if (c == col_epoch) ep = strtod(tok, NULL);
            else if (c == col_loss) lo = strtod(tok, NULL);
            tok = comma ? comma + 1 : NULL;
        }
        if (line > 0 && isfinite(ep) && isfinite(lo) && ((line - 1) % every == 0) && n < CURVE_MAX) {
            v->curve_x[n] = (float)ep;
            v->curve_y[n++] = (float)lo;
            v->run_epoch = (int)ep;
        } else if (line > 0 && isfinite(ep)) v->run_epoch = (int)ep;
        line++;
        p = nl + 1;
    }
    v->ncurve = n;
    free(text);
}

/* The newest snapshot of the run in dir (epoch_*.safetensors, final.safetensors; by time, then by
 * name) into best (n bytes) and its time; 0 when there is none yet. */
static int newest_snapshot(const char *dir_path, char *best, size_t n, struct timespec *best_t) {
    DIR *dir = opendir(dir_path);
    best[0] = '\0';
    *best_t = (struct timespec){0, 0};
    if (!dir) return 0;
    struct dirent *de;
    while ((de = readdir(dir))) {
        const char *name = de->d_name;
        const size_t len = strlen(name);
        const int snap = (!strncmp(name, "epoch_", 6) || !strcmp(name, "final.safetensors")) && len > 12 &&
                         !strcmp(name + len - 12, ".safetensors");
        char path[DG_PATH_MAX];
        struct stat st;
        if (!snap || snprintf(path, sizeof path, "%s/%s", dir_path, name) >= (int)sizeof path || stat(path, &st) != 0)
            continue;
        if (!best[0] || newer(st.st_mtim, *best_t) || (!newer(*best_t, st.st_mtim) && strcmp(path, best) > 0)) {
            snprintf(best, n, "%s", path);
            *best_t = st.st_mtim;
        }
    }
    closedir(dir);
    return best[0] != '\0';
}

/* The newest snapshot of the run (epoch_*.safetensors, final.safetensors) into the policy when it
 * changed, and metrics.csv when it grew. A snapshot that does not load (another game's) is left. */
static void poll_run(viewer *v) {
    char best[DG_PATH_MAX];
    struct timespec best_t;
    newest_snapshot(v->run_dir, best, sizeof best, &best_t);
    if (best[0] && (strcmp(best, v->snap) || newer(best_t, v->snap_mtime))) {
        dg_err e = {0};
        if (dg_checkpoint_load(best, v->p, &e) == DG_OK) {
            snprintf(v->snap, sizeof v->snap, "%s", best);
            v->snap_mtime = best_t;
            v->reloads++;
            v->changes++;
        } else {
            vw_error(v->cmd, "%s (the policy in use stays)", e.msg);
            snprintf(v->snap, sizeof v->snap, "%s", best);  /* not tried again until it changes */
            v->snap_mtime = best_t;
        }
    }
    char csv[DG_PATH_MAX];
    struct stat st;
    if (snprintf(csv, sizeof csv, "%s/metrics.csv", v->run_dir) < (int)sizeof csv && stat(csv, &st) == 0 &&
        newer(st.st_mtim, v->csv_mtime)) {
        v->csv_mtime = st.st_mtim;
        read_curve(v, csv);
    }
}

/* --------------------------------------------------------------------- events */

static void drag_to(viewer *v, int mx, int my) {
    if (v->drag_body < 0 || mx >= v->size) return;
    dg_err e = {0};
    if (dg_live_place(v->live, 0, v->drag_body, world_x(v, mx), world_y(v, my), &e) != DG_OK) v->drag_body = -1;
    v->changes++;
}

static int events(viewer *v) {
    SDL_Event ev;
    while (SDL_PollEvent(&ev)) {
        if (ev.type == SDL_QUIT) v->quit = 1;
        else if (ev.type == SDL_WINDOWEVENT) v->force = 1;
        else if (ev.type == SDL_MOUSEBUTTONDOWN && ev.button.button == SDL_BUTTON_LEFT && v->player < 0) {
            v->dragging = ev.button.x < v->size;
            drag_to(v, ev.button.x, ev.button.y);
        } else if (ev.type == SDL_MOUSEBUTTONUP && ev.button.button == SDL_BUTTON_LEFT) v->dragging = 0;
        else if (ev.type == SDL_MOUSEMOTION && v->dragging) drag_to(v, ev.motion.x, ev.motion.y);
        else if (ev.type == SDL_KEYDOWN) {
            const SDL_Keycode k = ev.key.keysym.sym;
            const int t = dg_live_steps(v->live);
            int rc = 0;
            if (k == SDLK_q || k == SDLK_ESCAPE) v->quit = 1;
            else if (k == SDLK_SPACE) v->paused = !v->paused;
            else if (k == SDLK_r) {
                v->seed++;
                rc = new_episode(v);
            } else if (k == SDLK_F12 || (k == SDLK_s && v->player < 0)) vw_screenshot_key(&v->w);
            else if (v->player >= 0) continue;  /* the rest are view's keys */
            else if (k == SDLK_RIGHT) {
                v->paused = 1;
                if (v->cursor < t) v->cursor++;
                else rc = step_once(v, 0);
            } else if (k == SDLK_LEFT) {
                v->paused = 1;
                if (v->cursor > 0) v->cursor--;
            } else if (k == SDLK_PLUS || k == SDLK_EQUALS || k == SDLK_KP_PLUS) v->speed = fmin(16, v->speed * 2);
            else if (k == SDLK_MINUS || k == SDLK_KP_MINUS) v->speed = fmax(1.0 / 16, v->speed / 2);
            else if (k == SDLK_b) v->batch = !v->batch;
            if (rc) return rc;
        }
    }
    return 0;
}

static unsigned held_keys(viewer *v) {
    if (v->input) return v->w.frames < v->ninput ? v->input[v->w.frames] : 0;
    const Uint8 *ks = SDL_GetKeyboardState(NULL);
    unsigned k = 0;
    if (ks[SDL_SCANCODE_LEFT] || ks[SDL_SCANCODE_A]) k |= K_LEFT;
    if (ks[SDL_SCANCODE_RIGHT] || ks[SDL_SCANCODE_D]) k |= K_RIGHT;
    if (ks[SDL_SCANCODE_UP] || ks[SDL_SCANCODE_W]) k |= K_UP;
    if (ks[SDL_SCANCODE_DOWN] || ks[SDL_SCANCODE_S]) k |= K_DOWN;
    return k;
}

/* One frame: events, the simulation's time advanced by 1/60 s times the speed, the picture. */
static int frame(viewer *v) {
    vw_frame_begin(&v->w);
    push_scripted(v);
    int rc = events(v);
    if (rc || v->quit) return rc;
    if (v->run_dir && v->w.frames % RUN_POLL_FRAMES == 0) poll_run(v);
    const dg_env *env = v->run.env;
    const unsigned keys = held_keys(v);
    const int t = dg_live_steps(v->live);
    if (!v->paused && v->cursor < t) {  /* catching up after stepping back */
        v->cursor++;
    } else if (!v->paused) {
        v->acc += v->speed / FPS;
        while (v->acc >= env->dt && !rc) {
            v->acc -= env->dt;
            if (dg_live_steps(v->live) >= env->horizon || v->over) {
                v->acc = 0;
                /* view: a second's rest on the last frame, then the next initial state */
                if (v->player < 0 && (v->over += 1) > FPS) {
                    v->seed++;
                    rc = new_episode(v);
                }
                break;
            }
            rc = step_once(v, keys);
        }
    }
    if (rc) return rc;
    struct shown now;
    memset(&now, 0, sizeof now);  /* compared byte for byte: no stray padding */
    now.cursor = v->cursor;
    now.steps = dg_live_steps(v->live);
    now.paused = v->paused;
    now.batch = v->batch;
    now.changes = v->changes;
    now.reloads = v->reloads;
    now.ncurve = v->ncurve;
    now.run_epoch = v->run_epoch;
    now.seed = v->seed;
    now.speed = v->speed;
    if (v->w.frames > 0 && !v->force && !memcmp(&now, &v->last, sizeof now)) return vw_show(&v->w, 0, 0, 0);
    v->last = now;
    v->force = 0;
    const double c0 = vw_cpu(), ms = render(v);
    return vw_show(&v->w, 1, ms, (vw_cpu() - c0) * 1e3);
}

/* ----------------------------------------------------------------- the files */

/* view --input: the keys a line may press, in bit order */
static const vw_key_name PRESS[] = {
    {"space", SDLK_SPACE}, {"left", SDLK_LEFT}, {"right", SDLK_RIGHT}, {"plus", SDLK_PLUS}, {"minus", SDLK_MINUS},
    {"r", SDLK_r}, {"b", SDLK_b}, {"s", SDLK_s}, {"q", SDLK_q},
};
#define NPRESS ((int)(sizeof PRESS / sizeof PRESS[0]))

/* view --input's points are points of the world: the arena's pixel there now */
static void world_px(void *user, float x, float y, int *px, int *py) {
    const viewer *v = user;
    *px = (int)lround(pix_x(v, x));
    *py = (int)lround(pix_y(v, y));
}

static void push_scripted(viewer *v) { vw_script_push(&v->script, v->w.frames, world_px, v); }

/* An --input file (at most 64 MiB) into *text (len bytes; the caller frees it) and its line count;
 * 0, or the exit status after one error line. */
static int read_input_file(const viewer *v, const char *path, unsigned char **text, size_t *len, int *lines) {
    dg_err e = {0};
    if (dg_file_read_max(path, (size_t)64 << 20, text, len, &e) != DG_OK) {
        vw_error(v->cmd, "--input: %s", e.msg);
        return DG_EXIT_USAGE;
    }
    *lines = 1;
    for (size_t i = 0; i < *len; i++) *lines += (*text)[i] == '\n';
    return 0;
}

/* play --input: one line a frame, the keys held (left right up down, or w a s d), space-separated. */
static int read_input(viewer *v, const char *path) {
    unsigned char *text = NULL;
    size_t len = 0;
    int lines, rc = read_input_file(v, path, &text, &len, &lines);
    if (rc) return rc;
    v->input = calloc((size_t)lines, 1);
    if (!v->input) {
        free(text);
        vw_error(v->cmd, "out of memory");
        return DG_EXIT_FAIL;
    }
    static const struct { const char *name; unsigned key; } NAMES[] = {
        {"left", K_LEFT}, {"right", K_RIGHT}, {"up", K_UP}, {"down", K_DOWN},
        {"a", K_LEFT}, {"d", K_RIGHT}, {"w", K_UP}, {"s", K_DOWN},
    };
    size_t i = 0;
    int line = 0;
    while (i < len) {
        size_t end = i;
        while (end < len && text[end] != '\n') end++;
        unsigned keys = 0;
        for (size_t j = i; j < end;) {
            while (j < end && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r')) j++;
            size_t w = j;
            while (w < end && text[w] != ' ' && text[w] != '\t' && text[w] != '\r') w++;
            if (w == j) break;
            size_t n = 0;
            for (; n < sizeof NAMES / sizeof NAMES[0]; n++)
                if (strlen(NAMES[n].name) == w - j && !memcmp(NAMES[n].name, text + j, w - j)) break;
            if (n == sizeof NAMES / sizeof NAMES[0]) {
                vw_error(v->cmd, "--input %s:%d: '%.*s' is no key (left, right, up, down, or w, a, s, d)", path,
                          line + 1, (int)(w - j > 20 ? 20 : w - j), (const char *)text + j);
                free(text);
                return DG_EXIT_USAGE;
            }
            keys |= NAMES[n].key;
            j = w;
        }
        v->input[line++] = (unsigned char)keys;
        i = end + 1;
    }
    v->ninput = line;
    free(text);
    return 0;
}

/* play --trajectory: t and each body's x, y at every step of row 0. */
static int write_trajectory(viewer *v) {
    const dg_env *env = v->run.env;
    const int T = dg_live_steps(v->live), S = env->state_dim;
    dg_real xy[2 * DG_MAX_BODIES];
    int goal[DG_MAX_BODIES];
    dg_live_row(v->live, 0, v->row);
    const int n = env->game->bodies(env, v->row, dg_live_aux(v->live), xy, goal);
    char names[DG_MAX_BODIES][2][40];
    const char *q = env->game->body_names;
    for (int k = 0; k < n; k++) {
        int len = 0;
        char base[32];
        if (q) {
            const char *c = strchr(q, ',');
            len = c ? (int)(c - q) : (int)strlen(q);
            snprintf(base, sizeof base, "%.*s", len, q);
            q = c ? c + 1 : NULL;
        } else snprintf(base, sizeof base, "body%d", k);
        snprintf(names[k][0], sizeof names[k][0], "%s_x", base);
        snprintf(names[k][1], sizeof names[k][1], "%s_y", base);
    }
    dg_csv w;
    dg_err e = {0};
    if (dg_csv_begin(&w, v->traj_path, &e) != DG_OK) return vw_fail(v->cmd, &e, DG_EXIT_USAGE);
    dg_csv_col(&w, "t", DG_CSV_G9);
    for (int k = 0; k < n; k++) {
        dg_csv_col(&w, names[k][0], DG_CSV_G9);
        dg_csv_col(&w, names[k][1], DG_CSV_G9);
    }
    for (int t = 0; t <= T; t++) {  /* each step with the aux of that step (a goal dragged along) */
        const dg_real *aux = dg_live_aux_at(v->live, t);
        env->game->bodies(env, v->row + (size_t)t * S, aux ? aux : dg_live_aux(v->live), xy, goal);
        dg_csv_num(&w, t * (double)env->dt);
        for (int k = 0; k < 2 * n; k++) dg_csv_num(&w, xy[k]);
    }
    return dg_csv_commit(&w, &e) == DG_OK ? 0 : vw_fail(v->cmd, &e, DG_EXIT_USAGE);
}

/* ----------------------------------------------------------------- the command */

/* view --run DIR without --config: the config stored in the run's newest snapshot (the trainer keeps
 * it in each), loaded by o->load (with --seed set). Before the first snapshot it waits, looking twice
 * a second (at most o->frames / 60 seconds under --frames, else until one comes or the command is
 * stopped). */
static int run_config(viewer *v, const vw_view_opts *o) {
    char path[DG_PATH_MAX];
    struct timespec t;
    const double t0 = vw_now();
    const int frames = o->frames;
    for (int said = 0; !newest_snapshot(v->run_dir, path, sizeof path, &t); said = 1) {
        if (frames > 0 && vw_now() - t0 > frames / (double)FPS) {
            vw_error(v->cmd, "--run %s: no snapshot (epoch_*.safetensors, final.safetensors) in %.1f s to read the "
                     "config from; give --config", v->run_dir, frames / (double)FPS);
            return DG_EXIT_USAGE;
        }
        if (!said && frames <= 0) vw_error(v->cmd, "waiting for the first snapshot in %s", v->run_dir);
        const struct timespec half = {0, 500000000L};
        nanosleep(&half, NULL);
    }
    dg_err e = {0};
    dg_st_file *f = dg_st_load(path, &e);
    const char *yaml = f ? dg_st_meta(f, "config") : NULL;
    char label[DG_PATH_MAX + 32];
    snprintf(label, sizeof label, "%s (stored config)", path);
    int rc = DG_EXIT_USAGE;
    if (!f) vw_error(v->cmd, "--run: %s", e.msg);
    else if (!yaml || !*yaml) vw_error(v->cmd, "--run: %s has no config stored in it (metadata 'config'); give --config", path);
    else rc = o->load(o->load_user, &v->run, label, yaml, strlen(yaml));
    dg_st_free(f);
    return rc;
}

static void viewer_free(viewer *v) {
    vw_close(&v->w);
    dg_image_free(v->arena);
    dg_image_free(v->panel);
    dg_render_grid_free(v->grid);
    free(v->heat);
    dg_live_free(v->live);
    free(v->state);
    free(v->aux);
    free(v->row);
    free(v->input);
    vw_script_free(&v->script);
    dg_params_free(v->p);
    dg_safety_close(&v->guard);
    dg_run_free(&v->run);
}

/* The viewer's policy (ckpt, or --run's newest snapshot), episode and window, run to the last frame, and
 * the files written; 0, or the exit status after one error line. */
static int run_viewer(viewer *v, const char *ckpt) {
    const dg_env *env = v->run.env;
    dg_err e = {0};
    if (!env->game->bodies) {
        vw_error(v->cmd, "game '%s' has no bodies hook (the positions to draw): it cannot be shown", env->game->name);
        return DG_EXIT_USAGE;
    }
    if (ckpt) {
        if (dg_run_policy_load(&v->run, ckpt, &v->pol, &v->p, &e) != DG_OK) return vw_fail(v->cmd, &e, 0);
    } else {  /* --run: the policy as initialised until the run's first snapshot loads */
        if (dg_policy_create(env, v->run.opts.hidden, v->run.opts.nhidden, &v->pol, &v->p, &e) != DG_OK)
            return vw_fail(v->cmd, &e, DG_EXIT_FAIL);
        dg_rng rng;
        dg_rng_seed(&rng, v->run.opts.seed);
        dg_policy_reset_params(&v->pol, v->p, &rng);
        poll_run(v);
    }
    if (v->run.safety.value) {  /* the filter around the policy, the person's action too (play) */
        if (dg_safety_open(&v->guard, env, &v->run.safety, NULL, &e) != DG_OK)
            return vw_fail(v->cmd, &e, e.status == DG_ERR_NOMEM ? DG_EXIT_FAIL : DG_EXIT_USAGE);
        dg_safety_attach(&v->guard, &v->pol);
    }
    char what[96];
    snprintf(what, sizeof what, "a live episode of %d rows and horizon %d", v->rows, env->horizon);
    if (dg_mem_check(dg_live_memory(env, &v->pol, v->rows) + dg_replay_track_memory(env->horizon + 1) +
                     (double)(env->horizon + 1) * env->state_dim * sizeof(dg_real), &e) != DG_OK) {
        vw_error(v->cmd, "%s %s; lower env.horizon", what, e.msg);
        return DG_EXIT_USAGE;
    }
    if (!(v->live = dg_live_create(env, &v->pol, v->p, v->rows, &e))) return vw_fail(v->cmd, &e, DG_EXIT_FAIL);
    const int gw = v->size / 4;
    v->row = malloc(((size_t)env->horizon + 1) * env->state_dim * sizeof(dg_real));
    v->grid = dg_render_grid_create(gw, gw, &e);
    v->heat = malloc((size_t)gw * gw * sizeof(dg_real));
    v->arena = dg_image_create(v->size, v->size + DG_REPLAY_HEADER, 0);
    v->panel = dg_image_create(PANEL_W, v->size + DG_REPLAY_HEADER, 0);
    if (!v->row || !v->grid || !v->heat || !v->arena || !v->panel) {
        vw_error(v->cmd, "out of memory");
        return DG_EXIT_FAIL;
    }
    v->capture_metric = -1;
    for (int i = 0; i < env->nmetrics; i++)
        if (!strcmp(env->metric_names[i], "capture_time")) v->capture_metric = i;
    /* the body the mouse moves: the goal, or else the last body (chase: the evader) */
    dg_real xy[2 * DG_MAX_BODIES];
    int goal[DG_MAX_BODIES];
    int rc = new_episode(v);
    if (rc) return rc;
    const int nb = env->game->bodies(env, v->state, v->aux, xy, goal);
    v->drag_body = nb - 1;
    for (int k = 0; k < nb; k++)
        if (goal[k]) v->drag_body = k;
    char title[128];
    snprintf(title, sizeof title, "difgames %s: %s", v->cmd, env->game->name);
    if ((rc = vw_open(&v->w, v->cmd, title, v->size + PANEL_W, v->size + DG_REPLAY_HEADER, v->record, v->bench)))
        return rc;
    while (!v->quit && !rc && (v->frames_max <= 0 || v->w.frames < v->frames_max)) rc = frame(v);
    if (rc || (rc = vw_finish(&v->w, v->screenshot))) return rc;
    if (v->traj_path && (rc = write_trajectory(v))) return rc;
    return 0;
}

/* The JSON line's fields of a viewer that ran to its end: what was shown, and how fast. */
static void view_report(const viewer *v, dg_json *j) {
    const dg_env *env = v->run.env;
    dg_json_game(j, env->game->name, dg_env_source(env));
    dg_json_add(j, j->root, "frames", dg_json_number("%.0f", (double)v->w.frames));
    dg_json_add(j, j->root, "steps", dg_json_number("%.0f", dg_live_steps(v->live)));
    dg_json_add(j, j->root, "seed", dg_json_number("%.0f", (double)v->seed));
    dg_json_add(j, j->root, "batch", cJSON_CreateBool(v->batch));
    vw_json_speed(&v->w, j, j->root);
    dg_json_add(j, j->root, "arena_px", dg_json_number("%.0f", v->size));
    if (v->player >= 0) {
        double m[DG_MAX_METRICS];
        dg_live_metrics(v->live, m);
        if (v->capture_metric >= 0)
            dg_json_add(j, j->root, "capture_time", dg_json_number("%.4g", m[v->capture_metric]));
        if (isfinite(v->t_start)) dg_json_add(j, j->root, "equilibrium_time", dg_json_number("%.6g", v->t_start));
    }
    if (v->run_dir) {
        const char *base = strrchr(v->snap, '/');
        dg_json_add(j, j->root, "snapshot", cJSON_CreateString(v->snap[0] ? (base ? base + 1 : v->snap) : ""));
        dg_json_add(j, j->root, "reloads", dg_json_number("%.0f", v->reloads));
        dg_json_add(j, j->root, "run_epoch", dg_json_number("%.0f", v->run_epoch));
        dg_json_add(j, j->root, "curve_points", dg_json_number("%.0f", v->ncurve));
    }
}

/* play --as ROLE: the player of the body named role (a moving body of the game whose player is
 * learned) into v->player; 0, or the exit status after one error line. */
static int play_role(viewer *v, const char *as) {
    const dg_env *env = v->run.env;
    const char *q = env->game->body_names;
    int k = 0, found = -1;
    while (q && found < 0) {
        const char *c = strchr(q, ',');
        const size_t len = c ? (size_t)(c - q) : strlen(q);
        if (strlen(as) == len && !strncmp(as, q, len)) found = k;
        q = c ? c + 1 : NULL;
        k++;
    }
    v->player = found;
    if (found < 0 || !strcmp(as, "goal")) {
        vw_error(v->cmd, "--as %s: game '%s' has no such player (its bodies: %s)", as, env->game->name,
                 env->game->body_names ? env->game->body_names
                 : !strcmp(dg_env_source(env), "model") ? "unnamed; a model file names them as draw.bodies: "
                                                          "{NAME: [x, y], ...}, docs/models.md"
                 : "unnamed");
        return DG_EXIT_USAGE;
    }
    if (found >= env->nplayers) {
        vw_error(v->cmd, "--as %s: the %s of this config is scripted, not learned (play the other, or a config "
                 "with two learned players such as configs/duel.yaml)", as, as);
        return DG_EXIT_USAGE;
    }
    return 0;
}

int vw_view(const vw_view_opts *o, dg_json *j) {
    viewer v = {.cmd = o->cmd, .player = -1, .size = o->size, .rows = o->rows, .speed = o->speed,
                .frames_max = o->frames, .bench = o->bench, .batch = o->batch, .screenshot = o->screenshot,
                .record = o->record, .traj_path = o->trajectory, .run_dir = o->run_dir};
    int rc = o->config ? o->load(o->load_user, &v.run, o->config, NULL, 0) : run_config(&v, o);
    if (rc) return rc;
    v.seed = v.run.opts.seed;
    if (o->play) rc = play_role(&v, o->as);
    if (!rc && o->input)
        rc = o->play ? read_input(&v, o->input) : vw_script_read(&v.script, v.cmd, o->input, PRESS, NPRESS);
    const char *outs[][2] = {{"--screenshot", v.screenshot}, {"--record", v.record}, {"--trajectory", v.traj_path}};
    for (int i = 0; i < 3 && !rc; i++) {  /* their folders, before the window opens */
        dg_err e = {0};
        if (outs[i][1] && dg_file_parent_make(outs[i][1], &e) != DG_OK) {
            vw_error(v.cmd, "%s: %s", outs[i][0], e.msg);
            rc = DG_EXIT_USAGE;
        }
    }
    if (!rc) rc = run_viewer(&v, o->ckpt);
    if (!rc) view_report(&v, j);
    viewer_free(&v);
    return rc;
}
