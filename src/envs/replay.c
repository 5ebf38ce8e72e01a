/* One frame of an episode: header, soft render, shapes, goal, bodies and trails. */
#include <tgmath.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/replay.h"
#include "gfx/draw.h"

#define VIEW 1.08f  /* half-extent of the world shown */
#define MAX_BODIES 8
#define TRAIL_SEGMENTS 2048  /* trail segments drawn per body and frame, at most */

static const uint32_t BODY_COLORS[] = {0xff8c1a, 0x33c3ff, 0xa0e060, 0xff5fd0};

/* World to pixels through the view a frame shows. */
static dg_real wx(const dg_replay_view *W, dg_real x, int size) { return (x - W->cx + W->half) / (2 * W->half) * (dg_real)size; }
static dg_real wy(const dg_replay_view *W, dg_real y, int size) {
    return DG_REPLAY_HEADER + (W->half - (y - W->cy)) / (2 * W->half) * (dg_real)size;
}

/* The bodies of state row t into xy / is_goal; their count, 0 to MAX_BODIES. */
static int bodies_at(const dg_env *env, const dg_real *traj, const dg_real *aux, int t, dg_real *xy, int *is_goal) {
    const int n = env->game->bodies(env, traj + (size_t)t * env->state_dim, aux, xy, is_goal);
    return n < 0 ? 0 : n > MAX_BODIES ? MAX_BODIES : n;
}

struct dg_replay_track {
    int            steps;             /* states held: 0 .. steps-1                               */
    unsigned char *nb;                /* (steps) bodies at each step                             */
    unsigned char *goal;              /* (steps) bit k: body k is a goal                         */
    dg_real         *xy;                /* (steps, MAX_BODIES, 2) positions                        */
    unsigned char *red;               /* (steps) bit k: body k broke the rule at a step 1..s of
                                       * its trail (and, where its trail ends, at that step)     */
    int            end[MAX_BODIES];   /* first step whose segment body k lacks (steps: none)     */
};

static void draw_shapes(dg_draw *d, const dg_env *env, const dg_replay_view *W, int size) {
    for (int k = 0; k < env->nshapes; k++) {
        const dg_shape *sh = &env->shapes[k];
        if (sh->kind == DG_SHAPE_CIRCLE) {
            const dg_real r = sh->a / (2 * W->half) * size;
            dg_draw_circle_fill(d, wx(W, sh->x, size), wy(W, sh->y, size), r, 0x808890, 0.85f);
            dg_draw_circle_outline(d, wx(W, sh->x, size), wy(W, sh->y, size), r, 0xe0e0e0, 1.5f);
        } else {
            const dg_real x0 = wx(W, sh->x - sh->a, size), x1 = wx(W, sh->x + sh->a, size);
            const dg_real y0 = wy(W, sh->y + sh->b, size), y1 = wy(W, sh->y - sh->b, size);
            dg_draw_line(d, x0, y0, x1, y0, 0xe0e0e0, 2);
            dg_draw_line(d, x1, y0, x1, y1, 0xe0e0e0, 2);
            dg_draw_line(d, x1, y1, x0, y1, 0xe0e0e0, 2);
            dg_draw_line(d, x0, y1, x0, y0, 0xe0e0e0, 2);
        }
    }
    for (int k = 0; k < env->nlines && env->lines; k++) {
        const float *l = env->lines + 4 * k;
        dg_draw_line(d, wx(W, l[0], size), wy(W, l[1], size), wx(W, l[2], size), wy(W, l[3], size), 0xe0e0e0, 1.5f);
    }
}

double dg_replay_track_memory(int steps) {
    return steps < 1 ? 0 : (double)steps * (3 + 2 * MAX_BODIES * sizeof(dg_real)) + sizeof(dg_replay_track);
}

dg_replay_track *dg_replay_track_create(const dg_env *env, const dg_real *traj, const dg_real *aux, int steps,
                                        dg_err *e) {
    if (!env || !traj || steps < 1) {
        dg_err_set(e, DG_ERR_ARG, "replay track: needs a game, a trajectory and at least one step");
        return NULL;
    }
    dg_replay_track *tr = calloc(1, sizeof *tr);
    if (tr) {
        tr->steps = steps;
        tr->nb = calloc((size_t)steps, 1);
        tr->goal = calloc((size_t)steps, 1);
        tr->red = calloc((size_t)steps, 1);
        tr->xy = calloc((size_t)steps * 2 * MAX_BODIES, sizeof(dg_real));
    }
    if (!tr || !tr->nb || !tr->goal || !tr->red || !tr->xy) {
        dg_replay_track_free(tr);
        dg_err_set(e, DG_ERR_NOMEM, "replay track: out of memory for %d steps", steps);
        return NULL;
    }
    for (int k = 0; k < MAX_BODIES; k++) tr->end[k] = steps;
    if (!env->game->bodies) return tr;  /* no bodies: nothing but the header and shapes */
    unsigned frozen = 0;  /* bodies whose trail has ended: their red no longer changes */
    for (int s = 0; s < steps; s++) {
        int g[MAX_BODIES];
        dg_real *xy = tr->xy + (size_t)s * 2 * MAX_BODIES;
        const int n = bodies_at(env, traj, aux, s, xy, g);
        tr->nb[s] = (unsigned char)n;
        for (int k = 0; k < n; k++) tr->goal[s] |= (unsigned char)((g[k] != 0) << k);
        if (s == 0) continue;
        const unsigned v = env->game->violation ? env->game->violation(env, traj + (size_t)s * env->state_dim, aux)
                                                : 0u;
        tr->red[s] = (unsigned char)((tr->red[s - 1] | (v & ~frozen)) & 0xffu);
        for (int k = 0; k < MAX_BODIES; k++)
            if (!((frozen >> k) & 1u) && (tr->nb[s - 1] <= k || n <= k)) {
                frozen |= 1u << k;
                tr->end[k] = s;
            }
    }
    return tr;
}

void dg_replay_track_free(dg_replay_track *tr) {
    if (!tr) return;
    free(tr->nb);
    free(tr->goal);
    free(tr->red);
    free(tr->xy);
    free(tr);
}

void dg_replay_view_fit(const dg_replay_track *tr, int t0, int t1, dg_replay_view *view) {
    view->cx = view->cy = 0;
    view->half = VIEW;
    if (!tr) return;
    dg_real lo[2] = {-VIEW, -VIEW}, hi[2] = {VIEW, VIEW};
    int out = 0;
    for (int t = t0 < 0 ? 0 : t0; t <= t1 && t < tr->steps; t++)
        for (int k = 0; k < tr->nb[t]; k++)
            for (int c = 0; c < 2; c++) {
                const dg_real v = tr->xy[((size_t)t * MAX_BODIES + k) * 2 + c];
                if (!isfinite(v)) continue;
                out |= v < -VIEW + 0.03f || v > VIEW - 0.03f;
                lo[c] = fmin(lo[c], v);
                hi[c] = fmax(hi[c], v);
            }
    if (!out) return;  /* all inside: the arena's view */
    view->cx = (lo[0] + hi[0]) / 2;
    view->cy = (lo[1] + hi[1]) / 2;
    view->half = fmax(hi[0] - lo[0], hi[1] - lo[1]) / 2 + 0.08f;
}

void dg_replay_draw(dg_image *img, const dg_env *env, const dg_replay_track *tr, const dg_render_grid *grid,
                    dg_real sigma, int t, dg_real *heat) {
    dg_replay_view v;
    dg_replay_view_fit(tr, 0, t, &v);
    dg_replay_draw_view(img, env, tr, grid, sigma, t, heat, &v);
}

void dg_replay_draw_view(dg_image *img, const dg_env *env, const dg_replay_track *tr, const dg_render_grid *grid,
                         dg_real sigma, int t, dg_real *heat, const dg_replay_view *view) {
    if (!img || !env || !tr || t < 0 || t >= tr->steps) return;
    static const dg_replay_view ARENA = {0, 0, VIEW};
    const dg_replay_view *W =
        view && isfinite(view->cx) && isfinite(view->cy) && isfinite(view->half) && view->half > 0 ? view : &ARENA;
    dg_draw d;
    if (dg_draw_begin(&d, img, NULL) != DG_OK) return;
    const int size = img->w;
    const dg_real *xy = tr->xy + (size_t)t * 2 * MAX_BODIES;
    const int nb = tr->nb[t];
    dg_draw_rect_fill(&d, 0, 0, img->w, img->h, 0x101018, 1);
    if (nb > 0 && grid && heat) {
        dg_render_points_f32(grid, xy, nb, NULL, sigma, heat);
        /* the soft render covers the arena [-1, 1]^2, where its grid's pixel centres lie */
        const int x0 = (int)lround(wx(W, -1, size)), x1 = (int)lround(wx(W, 1, size));
        const int y0 = (int)lround(wy(W, 1, size)), y1 = (int)lround(wy(W, -1, size));
#if DG_REAL_F64  /* the picture's float32, in place: float i lies below double i, which is read first */
        for (int64_t i = 0; i < (int64_t)grid->w * grid->h; i++) {
            const float v = (float)heat[i];
            memcpy((char *)heat + i * (int64_t)sizeof v, &v, sizeof v);
        }
#endif
        dg_draw_heat(&d, x0, y0, x1 - x0, y1 - y0, (const float *)(const void *)heat, grid->w, grid->h, 0.0f, 1.5f, 0);
    }
    draw_shapes(&d, env, W, size);
    unsigned broken = 0;  /* bodies that broke the rule at some step 1..t */
    int body = 0;
    /* at most TRAIL_SEGMENTS segments a frame: every ceil(t / TRAIL_SEGMENTS)-th step (each one up to there) */
    const int stride = t > TRAIL_SEGMENTS ? (t + TRAIL_SEGMENTS - 1) / TRAIL_SEGMENTS : 1;
    for (int k = 0; k < nb; k++) {
        const dg_real x = wx(W, xy[2 * k], size), y = wy(W, xy[2 * k + 1], size);
        if ((tr->goal[t] >> k) & 1u) {  /* a ring with a cross */
            dg_draw_circle_outline(&d, x, y, 7, 0xff3030, 2);
            dg_draw_line(&d, x - 5, y, x + 5, y, 0xff3030, 1.5f);
            dg_draw_line(&d, x, y - 5, x, y + 5, 0xff3030, 1.5f);
            continue;
        }
        const uint32_t c = BODY_COLORS[body++ % 4];
        const int last = t < tr->end[k] - 1 ? t : tr->end[k] - 1;  /* this body's trail so far */
        for (int s0 = 0; s0 < last;) {  /* red from where it broke the rule */
            const int s1 = s0 + stride < last ? s0 + stride : last;
            const dg_real *a = tr->xy + (size_t)s0 * 2 * MAX_BODIES, *b = tr->xy + (size_t)s1 * 2 * MAX_BODIES;
            const int r = (tr->red[s1] >> k) & 1u;
            dg_draw_line(&d, wx(W, a[2 * k], size), wy(W, a[2 * k + 1], size), wx(W, b[2 * k], size),
                          wy(W, b[2 * k + 1], size), r ? DG_REPLAY_VIOLATION : c, r ? 2.0f : 1.5f);
            s0 = s1;
        }
        const int red = (tr->red[t] >> k) & 1u;
        broken |= (unsigned)red << k;
        dg_draw_circle_fill(&d, x, y, 5, red ? DG_REPLAY_VIOLATION : c, 1.0f);
        dg_draw_circle_outline(&d, x, y, 5, 0xffffff, 1);
    }
    char text[160];
    snprintf(text, sizeof text, "%s  step %d/%d  t=%.2fs%s%s", env->game->name, t, env->horizon, t * env->dt,
             broken ? "  red: " : "", broken ? (env->violation_label ? env->violation_label : "broke the rule") : "");
    dg_draw_rect_fill(&d, 0, 0, img->w, DG_REPLAY_HEADER, 0x202030, 1);
    const double room = img->w - 12, tw = dg_draw_text_width(&d, text, 13);  /* smaller to fit, down to 7 px */
    const double fsize = tw > room ? fmax(7, 13 * room / tw) : 13;
    dg_draw_text(&d, 6, DG_REPLAY_HEADER / 2.0, text, 0xffffff, fsize, DG_TEXT_LEFT | DG_TEXT_MIDDLE, 0);
    dg_draw_end(&d, NULL);
}

void dg_replay_frame(dg_image *img, const dg_env *env, const dg_render_grid *grid, dg_real sigma,
                     const dg_real *traj, const dg_real *aux, int t, dg_real *heat) {
    if (!img || !env || !traj || t < 0) return;
    dg_replay_track *tr = dg_replay_track_create(env, traj, aux, t + 1, NULL);
    dg_replay_draw(img, env, tr, grid, sigma, t, heat);
    dg_replay_track_free(tr);
}

dg_status dg_replay_gif(const char *path, const dg_env *env, const dg_real *traj, const dg_real *aux, int steps,
                        int size, int frames, dg_err *e) {
    if (steps < 2 || size < 16) return dg_err_set(e, DG_ERR_ARG, "%s: replay of %d steps at %d pixels", path, steps,
                                                  size);
    if (frames <= 0 || frames > steps) frames = steps;
    const int H = steps - 1, gw = size / 4;
    dg_render_grid *grid = dg_render_grid_create(gw, gw, e);
    dg_real *heat = malloc((size_t)gw * gw * sizeof(dg_real));
    dg_image *img = dg_image_create(size, size + DG_REPLAY_HEADER, 0);
    dg_replay_track *track = NULL;
    dg_gif *gif = NULL;
    dg_status st = DG_OK;
    if (!grid || !heat || !img) st = grid ? dg_err_set(e, DG_ERR_NOMEM, "out of memory") : DG_ERR_NOMEM;
    const int delay = (int)lround(100.0f * env->dt * (dg_real)H / (dg_real)(frames - 1));  /* real time */
    if (st == DG_OK && !(gif = dg_gif_begin(path, img->w, img->h, delay < 2 ? 2 : delay, e)))
        st = e ? e->status : DG_ERR_IO;
    if (st == DG_OK && !(track = dg_replay_track_create(env, traj, aux, steps, e)))  /* the bodies, once */
        st = e ? e->status : DG_ERR_NOMEM;
    for (int f = 0; f < frames && st == DG_OK; f++) {
        dg_replay_draw(img, env, track, grid, 0.08f, (int)((int64_t)f * H / (frames - 1)), heat);
        st = dg_gif_add_frame(gif, img, e);
    }
    if (st == DG_OK) st = dg_gif_end(gif, e);
    else dg_gif_abort(gif);
    dg_replay_track_free(track);
    dg_image_free(img);
    free(heat);
    dg_render_grid_free(grid);
    return st;
}
