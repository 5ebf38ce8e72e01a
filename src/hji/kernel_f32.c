/* The grid solver's kernels in float (kernel.inc instantiated for one precision). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/base.h"  /* dg_clock_s */
#include "hji/internal.h"

#define REAL float
#define RABS fabsf
#define RSQRT sqrtf
#define HJI_PAIR_DIV 0
#define HJI_WITH_DERIVS 0
#define hji_solve_real hji_solve_f32
#define hji_interp_real hji_interp_f32
#include "hji/kernel.inc"
