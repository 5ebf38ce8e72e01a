/* One frame of an episode: header, soft render, shapes, goal, bodies and trails. */
#include <stdio.h>

#include "difgames/replay.h"

#define VIEW 1.08f  /* half-extent of the world shown */
#define MAX_BODIES 8

static const uint32_t BODY_COLORS[] = {0xff8c1a, 0x33c3ff, 0xa0e060, 0xff5fd0};

static float wx(float x, int size) { return (x + VIEW) / (2 * VIEW) * (float)size; }
static float wy(float y, int size) { return DG_REPLAY_HEADER + (VIEW - y) / (2 * VIEW) * (float)size; }

static int bodies_at(const dg_env *env, const float *traj, const float *aux, int t, float *xy, int *is_goal) {
    const int n = env->game->bodies(env, traj + (size_t)t * env->state_dim, aux, xy, is_goal);
    return n < 0 ? 0 : n > MAX_BODIES ? MAX_BODIES : n;
}

static unsigned violation_at(const dg_env *env, const float *traj, const float *aux, int t) {
    return env->game->violation ? env->game->violation(env, traj + (size_t)t * env->state_dim, aux) : 0u;
}

static void draw_shapes(dg_image *img, const dg_env *env, int size) {
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
}

void dg_replay_frame(dg_image *img, const dg_env *env, const dg_render_grid *grid, float sigma,
                     const float *traj, const float *aux, int t, float *heat) {
    if (!img || !env || !traj || t < 0) return;
    const int size = img->w;
    float xy[2 * MAX_BODIES];
    int is_goal[MAX_BODIES];
    const int nb = env->game->bodies ? bodies_at(env, traj, aux, t, xy, is_goal) : 0;
    dg_image_clear(img, 0x101018);
    if (nb > 0 && grid && heat) {
        dg_render_points_f32(grid, xy, nb, NULL, sigma, heat);
        dg_image_heat_rect(img, (int)wx(-VIEW, size), DG_REPLAY_HEADER, size, size, heat, grid->w, grid->h,
                           0.0f, 1.5f);
    }
    draw_shapes(img, env, size);
    unsigned broken = 0;  /* bodies that broke the rule at some step 1..s */
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
        int red = 0;
        for (int s = 1; s <= t; s++) {  /* this body's trail so far, red from where it broke the rule */
            float a[2 * MAX_BODIES], b[2 * MAX_BODIES];
            int g2[MAX_BODIES];
            red |= (violation_at(env, traj, aux, s) >> k) & 1u;
            if (bodies_at(env, traj, aux, s - 1, a, g2) <= k || bodies_at(env, traj, aux, s, b, g2) <= k) break;
            dg_image_line(img, wx(a[2 * k], size), wy(a[2 * k + 1], size), wx(b[2 * k], size),
                          wy(b[2 * k + 1], size), red ? DG_REPLAY_VIOLATION : c, red ? 2.0f : 1.5f);
        }
        broken |= (unsigned)red << k;
        dg_image_circle_fill(img, x, y, 5, red ? DG_REPLAY_VIOLATION : c, 1.0f);
        dg_image_circle_outline(img, x, y, 5, 0xffffff, 1);
    }
    char text[160];
    snprintf(text, sizeof text, "%s  step %d/%d  t=%.2fs%s%s", env->game->name, t, env->horizon, t * env->dt,
             broken ? "  red: " : "", broken ? (env->violation_label ? env->violation_label : "broke the rule") : "");
    dg_image_rect_fill(img, 0, 0, img->w, DG_REPLAY_HEADER, 0x202030, 1.0f);
    dg_image_text(img, 6, 7, text, 0xffffff, 1);
}
