/* difgames io: parameters to and from safetensors checkpoints.
 *
 * A checkpoint holds each parameter under its own name ("net.0.weight", ...)
 * as F32 with its shape, so PyTorch's load_state_dict and NumPy read it
 * unchanged; metadata (strings) carry the game, epoch and config.
 */
#ifndef DIFGAMES_CHECKPOINT_H
#define DIFGAMES_CHECKPOINT_H

#include "difgames/api.h"
#include "difgames/core.h"
#include "difgames/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes every parameter of p (values, or gradients when grads is 1) and the
 * nmeta key/value pairs, atomically. Values with a NaN or infinity are refused
 * (DG_ERR_NONFINITE, nothing written); gradients are written as they are. */
DG_API dg_status dg_checkpoint_save(const char *path, const dg_params *p, int grads,
                                    const char *const *meta_kv /* (nmeta, 2) */, int nmeta, dg_err *e);
/* Loads every parameter of p from path by name; a missing tensor, another
 * dtype or shape (e.g. a different hidden size) is an error naming the file
 * and tensor; a NaN or infinity is DG_ERR_NONFINITE naming the parameter.
 * p is unchanged on error. */
DG_API dg_status dg_checkpoint_load(const char *path, dg_params *p, dg_err *e);

#ifdef __cplusplus
}
#endif
#endif
