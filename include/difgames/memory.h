/* difgames memory: how much a job may use, and counts that cannot overflow.
 *
 * Every command estimates what it will allocate before it allocates it
 * (dg_train_memory, dg_rollout_memory, dg_pg_memory, dg_hji_solve_memory)
 * and compares that with dg_mem_limit: a job that cannot fit is refused with
 * a message, never killed by the kernel halfway.
 *
 * Counts derived from user numbers (batch x horizon x width, the product of
 * grid sizes, frames x pixels) go through dg_mul_ok, the one checked multiply.
 */
#ifndef DIFGAMES_MEMORY_H
#define DIFGAMES_MEMORY_H

#include <stdint.h>

#include "difgames/api.h"
#include "difgames/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* *out = a * b when a, b >= 0 and the product is at most max; returns 1. Otherwise (negative, past
 * max, or past INT64_MAX) returns 0 and leaves *out alone. out may be NULL (only check). */
DG_API int    dg_mul_ok(int64_t a, int64_t b, int64_t max, int64_t *out);

/* Bytes this process may still allocate: the least of the machine's physical memory, the
 * address-space limit (RLIMIT_AS, `ulimit -v`) less what is mapped already, and the cgroup's
 * memory.max less its current use. *source (may be NULL) names the bound that wins:
 * "physical memory", "ulimit -v" or "cgroup memory.max". Never 0: at least one page. */
DG_API double dg_mem_limit(const char **source);

/* DG_OK when need bytes fit under dg_mem_limit; otherwise DG_ERR_NOMEM with e set to
 * "needs about X GiB, more than the Y GiB this process may use (<source>)". */
DG_API dg_status dg_mem_check(double need, dg_err *e);

/* dg_mem_check with the refusal a user can act on: DG_OK when need bytes fit; otherwise
 * DG_ERR_NOMEM with e set to "<what> needs about X GiB, more than ...; lower <lower>", what naming
 * the job (e.g. "batch 64 x horizon 200") and lower the keys or options that shrink it. */
DG_API dg_status dg_mem_require(double need, const char *what, const char *lower, dg_err *e);

/* Bytes free for an unprivileged user on the file system that holds path (or, if path does not
 * exist yet, its nearest existing parent folder); -1 if unknown (or a pseudo file system, /proc). */
DG_API double dg_disk_free(const char *path);

#ifdef __cplusplus
}
#endif
#endif
