/* pixel: move a point so that its soft render matches a target image rendered
 * at the goal. The loss looks only at pixels, so the renderer is inside the
 * gradient chain: d loss / d image -> d image / d position -> physics -> policy. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/physics.h"
#include "difgames/render.h"
#include "envs/games.h"

typedef struct pixel {
    float accel, damping, sigma;
    int   size;                   /* images are size × size */
    float start[2], goal[2];      /* both coordinates drawn from these ranges */
    dg_render_grid *grid;         /* built once, reused every step */
} pixel;

static const dg_key KEYS[] = {
    DG__KEY_DAMPING(pixel, damping, 0.98f),
    DG__KEY_ACCEL("env.accel_scale", pixel, accel, 5.0f, "action [-1, 1] -> acceleration"),
    DG_K_F32("render.sigma", pixel, sigma, 0.3f, 0, 10, 0, 1, "width (sigma) of the soft point drawn"),
    DG_K_INT("render.size", pixel, size, 32, 2, 1024, "images are size x size pixels"),
    DG_K_SPAN("env.start", pixel, start, -0.6f, 0.6f, "both start coordinates ~ U(lo, hi)"),
    DG_K_SPAN("env.goal", pixel, goal, -0.6f, 0.6f, "both goal coordinates ~ U(lo, hi)"),
};

static const dg_loss_term LOSS[] = {
    {"loss.image", 10.0f, NULL, 0, "mean_b of the mean squared pixel difference to the target image"},
    {"loss.energy", 0.01f, NULL, 0, "mean_b |a|^2"},
};

static dg_status pixel_create(dg_env *env, dg_cfg *cfg, dg_err *e) {
    (void)cfg;
    pixel *px = env->impl;
    px->grid = dg_render_grid_create(px->size, px->size, e);
    if (!px->grid) return e ? e->status : DG_ERR_NOMEM;
    env->state_dim = 4;
    env->aux_dim = 2 + px->size * px->size;  /* goal, then the target image rendered once */
    env->obs_dim = 6;
    env->act_dim = 2;
    env->aux_name = "goal";
    env->aux_user_dim = 2;
    env->size_key = "render.size";
    return DG_OK;
}

static void pixel_destroy(dg_env *env) {
    const pixel *px = env->impl;
    if (px) dg_render_grid_free(px->grid);
}

static dg_status pixel_reset(const dg_env *env, dg_rng *rng, int B, dg_real *state, dg_real *aux,
                             dg_err *e) {
    const pixel *px = env->impl;
    (void)e;
    for (int b = 0; b < B; b++) {
        dg_real *s = state + (size_t)b * env->state_dim, *a = aux + (size_t)b * env->aux_dim;
        s[0] = dg_rng_uniform(rng, px->start[0], px->start[1]);
        s[1] = dg_rng_uniform(rng, px->start[0], px->start[1]);
        s[2] = s[3] = 0.0f;
        a[0] = dg_rng_uniform(rng, px->goal[0], px->goal[1]);
        a[1] = dg_rng_uniform(rng, px->goal[0], px->goal[1]);
    }
    env->game->complete_aux(env, B, aux);
    return DG_OK;
}

/* the target image of each row, rendered once an episode at its goal */
static void pixel_complete_aux(const dg_env *env, int B, dg_real *aux) {
    const pixel *px = env->impl;
    for (int b = 0; b < B; b++) {
        dg_real *a = aux + (size_t)b * env->aux_dim;
        dg_render_points_f32(px->grid, a, 1, NULL, px->sigma, a + 2);
    }
}

/* [x, y, vx, vy, gx, gy]: the policy sees the goal; the loss sees only pixels */
static dg_tensor *pixel_observe(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux) {
    return dg_concat(ctx, (dg_tensor *[]){state, dg_cols(ctx, aux, 0, 2)}, 2, 1);
}

static dg_tensor *pixel_step(dg_ctx *ctx, const dg_env *env, dg_tensor *state, dg_tensor *aux,
                             dg_tensor *action) {
    const pixel *px = env->impl;
    return dg_phys_step(ctx, state, action, 1, &px->accel, env->dt, px->damping);
}

/* (render(p') - target)² of each row and pixel, (B, 1, size, size): the image term's one formula */
static dg_tensor *image_sq(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux) {
    const pixel *px = env->impl;
    const int B = next->shape[0], n = px->size * px->size;
    dg_tensor *p = dg_cols(ctx, next, 0, 2);
    dg_tensor *img = dg_render_points(ctx, px->grid, &p, 1, NULL, px->sigma);       /* (B,1,H,W) */
    dg_tensor *target = dg_reshape(ctx, dg_cols(ctx, aux, 2, n), 4, (int[]){B, 1, px->size, px->size});
    return dg_square(ctx, dg_sub(ctx, img, target));
}

/* image: mean_b mean_pixels of image_sq; energy: mean_b |a|². Not dg_env_step_cost_from_rows: the
 * image's batch mean scales the sum of the squares by inv_batch / n, one product (its rows scale
 * each square by 1 / n first, which rounds differently unless n is a power of two) */
static void pixel_step_cost(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux,
                            dg_tensor *action, dg_real inv_batch, dg_tensor **terms) {
    const pixel *px = env->impl;
    const int n = px->size * px->size;
    terms[0] = dg__batch_mean(ctx, image_sq(ctx, env, next, aux), inv_batch / (dg_real)n);
    terms[1] = dg__batch_mean(ctx, dg_square(ctx, action), inv_batch);
}

/* per row: image the squares of image_sq over n (B, 1, size, size: their sum the row's mean over the
 * pixels); energy |a|² */
static void pixel_step_cost_rows(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux, dg_tensor *action,
                                 dg_tensor **rows) {
    const pixel *px = env->impl;
    rows[0] = dg_scale(ctx, image_sq(ctx, env, next, aux), 1.0f / (dg_real)(px->size * px->size));
    rows[1] = dg_square(ctx, action);
}

const dg_game dg_game_pixel = {
    .name = "pixel",
    .summary = "match a rendered target image: the loss sees only pixels (renderer in the chain)",
    .dt = 0.05f,
    .horizon = 40,
    DG_GAME_DECLARE(KEYS, pixel, LOSS),
    .create = pixel_create,
    .destroy = pixel_destroy,
    .reset = pixel_reset,
    .observe = pixel_observe,
    .step = pixel_step,
    .step_cost = pixel_step_cost,
    .step_cost_rows = pixel_step_cost_rows,
    .complete_aux = pixel_complete_aux,
    .bodies = dg__bodies_agent_goal,
    .body_names = "agent,goal",
};
