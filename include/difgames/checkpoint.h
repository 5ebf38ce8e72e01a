/* difgames core: parameters to and from safetensors checkpoints (src/core/checkpoint.c, next to
 * the tape: compiled in both of its precisions, as its values are dg_real).
 *
 * A checkpoint holds each parameter under its own name ("net.0.weight", ...)
 * as F32 (F64 from the double tape) with its shape, so PyTorch's load_state_dict
 * and NumPy read it unchanged; metadata (strings) carry the game, epoch and config.
 */
#ifndef DIFGAMES_CHECKPOINT_H
#define DIFGAMES_CHECKPOINT_H

#include "difgames/api.h"
#include "difgames/core.h"
#include "difgames/safetensors.h"
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

/* The tape's values (dg_real, include/difgames/real.h): F32 in the float tape's files, F64 in the
 * double's. dg_st_read_real reads an F32 or an F64 tensor into dg_real (converting: a float32
 * checkpoint loads into the double tape exactly, a double one into the float tape rounded);
 * dg_st_read's errors otherwise (another dtype: DG_ERR_FORMAT). */
#define DG_DTYPE_REAL (DG_REAL_F64 ? DG_DTYPE_F64 : DG_DTYPE_F32)
DG_API dg_status dg_st_read_real(const dg_st_file *f, const char *name, int ndim, const int64_t *shape,
                                 dg_real *out, dg_err *e);

#ifdef __cplusplus
}
#endif
#endif
