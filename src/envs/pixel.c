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

static dg_status pixel_create(dg_env *env, dg_cfg *cfg, dg_err *e) {
    pixel *px = calloc(1, sizeof *px);
    if (!px) return dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    env->impl = px;
    *px = (pixel){.accel = 5.0f, .damping = 0.98f, .sigma = 0.3f, .size = 32,
                  .start = {-0.6f, 0.6f}, .goal = {-0.6f, 0.6f}};
    float w[2] = {10.0f, 0.01f};
    dg_status st;
    if ((st = dg_cfg_get_f32_range(cfg, "env.dt", &env->dt, 0.05f, 0, 10, 0, 1, e)) ||
        (st = dg_cfg_get_f32_range(cfg, "env.damping", &px->damping, 0.98f, 0, 1, 0, 1, e)) ||
        (st = dg_cfg_get_f32_range(cfg, "env.accel_scale", &px->accel, 5.0f, 0, DG_MAX_MAGNITUDE, 0, 1, e)) ||
        (st = dg_cfg_get_int_range(cfg, "env.horizon", &env->horizon, 40, 1, DG_MAX_HORIZON, e)) ||
        (st = dg_cfg_get_f32_range(cfg, "render.sigma", &px->sigma, 0.3f, 0, 10, 0, 1, e)) ||
        (st = dg_cfg_get_int_range(cfg, "render.size", &px->size, 32, 2, 1024, e)) ||
        (st = dg__cfg_range(cfg, "env.start", px->start, e)) ||
        (st = dg__cfg_range(cfg, "env.goal", px->goal, e)) ||
        (st = dg_cfg_get_f32_range(cfg, "loss.image", &w[0], w[0], 0, INFINITY, 1, 0, e)) ||
        (st = dg_cfg_get_f32_range(cfg, "loss.energy", &w[1], w[1], 0, INFINITY, 1, 0, e)))
        return st;
    px->grid = dg_render_grid_create(px->size, px->size, e);
    if (!px->grid) return e ? e->status : DG_ERR_NOMEM;
    env->state_dim = 4;
    env->aux_dim = 2 + px->size * px->size;  /* goal, then the target image rendered once */
    env->obs_dim = 6;
    env->act_dim = 2;
    env->aux_name = "goal";
    env->aux_user_dim = 2;
    env->size_key = "render.size";
    env->nterms = 2;
    env->term_names[0] = "image";
    env->term_names[1] = "energy";
    memcpy(env->term_weights, w, sizeof w);
    return DG_OK;
}

static void pixel_destroy(dg_env *env) {
    pixel *px = env->impl;
    if (px) dg_render_grid_free(px->grid);
    free(px);
}

static dg_status pixel_reset(const dg_env *env, dg_rng *rng, int B, float *state, float *aux,
                             dg_err *e) {
    const pixel *px = env->impl;
    (void)e;
    for (int b = 0; b < B; b++) {
        float *s = state + (size_t)b * env->state_dim, *a = aux + (size_t)b * env->aux_dim;
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
static void pixel_complete_aux(const dg_env *env, int B, float *aux) {
    const pixel *px = env->impl;
    for (int b = 0; b < B; b++) {
        float *a = aux + (size_t)b * env->aux_dim;
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

/* image: mean_b mean_pixels (render(p') - target)²; energy: mean_b |a|² */
static void pixel_step_cost(dg_ctx *ctx, const dg_env *env, dg_tensor *next, dg_tensor *aux,
                            dg_tensor *action, float inv_batch, dg_tensor **terms) {
    const pixel *px = env->impl;
    const int B = next->shape[0], n = px->size * px->size;
    dg_tensor *p = dg_cols(ctx, next, 0, 2);
    dg_tensor *img = dg_render_points(ctx, px->grid, &p, 1, NULL, px->sigma);       /* (B,1,H,W) */
    dg_tensor *target = dg_reshape(ctx, dg_cols(ctx, aux, 2, n), 4, (int[]){B, 1, px->size, px->size});
    terms[0] = dg__batch_mean(ctx, dg_square(ctx, dg_sub(ctx, img, target)), inv_batch / (float)n);
    terms[1] = dg__batch_mean(ctx, dg_square(ctx, action), inv_batch);
}

const dg_game dg_game_pixel = {
    .name = "pixel",
    .summary = "match a rendered target image: the loss sees only pixels (renderer in the chain)",
    .create = pixel_create,
    .destroy = pixel_destroy,
    .reset = pixel_reset,
    .observe = pixel_observe,
    .step = pixel_step,
    .step_cost = pixel_step_cost,
    .complete_aux = pixel_complete_aux,
    .bodies = dg__bodies_agent_goal,
};
