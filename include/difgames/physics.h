/* difgames physics: semi-implicit Euler, soft signed distances, smooth penalties.
 *
 * Bodies are point masses in the plane. A state row holds nb bodies as
 * [x, y, vx, vy] each (B, 4·nb); an action row holds [ax, ay] per body
 * (B, 2·nb). Nothing here branches on a value: every penalty is smooth or
 * piecewise-smooth, so gradients flow through contacts.
 */
#ifndef DIFGAMES_PHYSICS_H
#define DIFGAMES_PHYSICS_H

#include "difgames/api.h"
#include "difgames/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_MAX_BODIES 8

/* One step for every body k (a fused op):
 *   v' = (v + accel[k] · a · dt) · damping,   p' = p + v' · dt
 * state (B, 4·nb), action (B, 2·nb) -> new state (B, 4·nb). */
DG_API dg_tensor *dg_phys_step(dg_ctx *ctx, dg_tensor *state, dg_tensor *action, int nb,
                               const float *accel, dg_real dt, dg_real damping);

/* dg_phys_step inside soft walls: a contact force keeps every body within
 * [-wall, wall]² (differentiable almost everywhere). Per body and axis, the free step
 *   v* = (v + accel[k] · a · dt) · damping,   p* = p + v* · dt
 * penetrates the walls by q = relu(p* - wall) - relu(-wall - p*); the contact force
 * f = -stiff · q / dt² (a penalty spring on the predicted position) gives
 *   v' = v* + f · dt,   p' = p + v' · dt = p* - stiff · q.
 * stiff in [0, 1] is the fraction of a penetration removed in one step (stable for
 * every speed: 1 stops a body on the wall, 0 is dg_phys_step). */
DG_API dg_tensor *dg_phys_step_walls(dg_ctx *ctx, dg_tensor *state, dg_tensor *action, int nb,
                                     const float *accel, dg_real dt, dg_real damping, dg_real wall, dg_real stiff);

/* Each row of a (B,2) onto the unit disk: a · min(1, 1/|a|) (a ball bound
 * on an action; differentiable almost everywhere). */
DG_API dg_tensor *dg_unit_disk(dg_ctx *ctx, dg_tensor *a);

/* Soft signed distance from positions (B,2) to k circles (k × [cx, cy, r]):
 * sqrt(|p - c|² + 1e-9) - r, (B, k); negative inside. A fused op. */
DG_API dg_tensor *dg_sdf_circles(dg_ctx *ctx, dg_tensor *pos, const float *circles, int k);
/* Signed distance to k axis-aligned boxes (k × [cx, cy, half_w, half_h]), (B, k):
 * |max(q, 0)| + min(max(qx, qy), 0) with q = |p - c| - half, built from ops. */
DG_API dg_tensor *dg_sdf_boxes(dg_ctx *ctx, dg_tensor *pos, const float *boxes, int k);
/* Distance to the walls of the square [-half, half]², per axis: half - |p|, (B, 2). */
DG_API dg_tensor *dg_sdf_walls(dg_ctx *ctx, dg_tensor *pos, dg_real half);

/* scale · Σ (a - b)² over every element, a (1) tensor; b NULL: scale · Σ a². One fused op with
 * the bits of dg_scale(dg_sum(dg_square(dg_sub(a, b))), scale) (a cost term's batch mean). */
DG_API dg_tensor *dg_sum_sq_diff(dg_ctx *ctx, dg_tensor *a, dg_tensor *b, dg_real scale);
/* sum over the last axis of relu(margin - d)²: (B, k) distances -> (B, 1). A fused op. */
DG_API dg_tensor *dg_penalty_margin(dg_ctx *ctx, dg_tensor *dist, dg_real margin);
/* sum over axes of relu(|p| - half)²: (B, 2) positions -> (B, 1) (leaving the arena). */
DG_API dg_tensor *dg_penalty_outside(dg_ctx *ctx, dg_tensor *pos, dg_real half);
/* Softplus wall push: per axis -softplus(k (p - (half - m))) + softplus(k (-(half - m) - p)),
 * (B, 2): zero-ish in the middle, pointing inward near a wall. */
DG_API dg_tensor *dg_wall_push(dg_ctx *ctx, dg_tensor *pos, dg_real half, dg_real k, dg_real m);

#ifdef __cplusplus
}
#endif
#endif
