/* difgames: the type of every value on the tape (dg_real).
 *
 * float (float32) by default. A translation unit compiled with DG_F64 defined gets the double
 * tape: the same API names, double data. Every function of the tape's layers then resolves to
 * its double copy (those layers are built twice, the second time over double, each global dg_
 * symbol renamed dg64_: difgames/f64_names.h, generated from the float build, dg_ names only;
 * the layers without dg_real, e.g. configs, files, images and the grid solver, are built once
 * and their headers do not include this one), so one program can hold both, and one
 * translation unit uses one. train.precision: f64 in a config selects the double
 * copy in the `difgames` command (docs/long_horizon.md, "Double precision").
 *
 * What stays float32 in both: config values read by DG_K_F32 keys, random draws
 * (dg_rng_uniform), images, and the grid solver's float32 kernel. Math on the tape uses
 * double's libm in the double copy (tanh, exp, ...), float's in the float copy.
 */
#ifndef DIFGAMES_REAL_H
#define DIFGAMES_REAL_H

#include <float.h>

#ifdef DG_F64
#include "difgames/f64_names.h"
typedef double dg_real;
#define DG_REAL_F64 1
#define DG_REAL_EPSILON DBL_EPSILON
#define DG_REAL_NAME "f64"
#else
typedef float dg_real;
#define DG_REAL_F64 0
#define DG_REAL_EPSILON FLT_EPSILON
#define DG_REAL_NAME "f32"
#endif

#endif
