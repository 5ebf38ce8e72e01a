/* difgames base: what every layer uses and that knows nothing of tensors: an explicit-state random
 * generator, a monotonic clock, and the one strict number parser and formatter. The rest of the
 * base layer has its own headers: status.h (status codes, error messages), memory.h (memory and
 * disk limits), fileio.h (whole-file reads and atomic writes). core.h includes this header.
 */
#ifndef DIFGAMES_BASE_H
#define DIFGAMES_BASE_H

#include <stddef.h>
#include <stdint.h>

#include "difgames/api.h"
#include "difgames/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- RNG */

/* xoshiro128+-style generator with explicit state (no global state). */
typedef struct dg_rng {
    uint64_t s[2];
} dg_rng;

DG_API void     dg_rng_seed(dg_rng *r, uint64_t seed);            /* seeds via splitmix64          */
DG_API uint64_t dg_rng_u64(dg_rng *r);                            /* 64 random bits                */
DG_API float    dg_rng_uniform(dg_rng *r, float lo, float hi);    /* U[lo, hi), 24-bit resolution  */
DG_API float    dg_rng_normal(dg_rng *r, float mean, float std);  /* Box-Muller, one draw per call */

/* ---------------------------------------------------------------- clock */

DG_API double   dg_clock_s(void);  /* monotonic seconds from an arbitrary start: for timings, never for results */
DG_API double   dg_cpu_clock_s(void);  /* the process's CPU seconds (all its threads): timings on a shared machine */
/* The one strict number parser: 1 and *out when all of text[0, len) (len (size_t)-1: up to the NUL)
 * is one number, else 0. Longs in base 10 or 16 (digits and a sign only, no overflow); doubles
 * finite and decimal (no hex floats, inf, nan, blanks or overflow). */
DG_API int      dg_parse_long(const char *text, size_t len, int base, long *out);
DG_API int      dg_parse_double(const char *text, size_t len, double *out);
/* A comma-separated list of numbers of any length ("1,2.5,3"), each in [lo, hi] (whole numbers when
 * integer is 1), into a malloc'd *out (the caller frees it). Returns the count (>= 1), or -1 with e
 * naming the item that is not a number or out of range (*out NULL). */
DG_API int      dg_parse_list(const char *text, double lo, double hi, int integer, double **out, dg_err *e);
/* snprintf(buf, size, fmt, v) for a fmt of one double conversion ("%.4g", "%.2f"), except that a
 * value printed as zero has no minus sign: -0.0, or -0.001 in "%.2f", prints "0", "0.00", never
 * "-0" (JSON readers and people take it for a different number). Returns snprintf's count. */
DG_API int      dg_format_double(char *buf, size_t size, const char *fmt, double v);

#ifdef __cplusplus
}
#endif
#endif
