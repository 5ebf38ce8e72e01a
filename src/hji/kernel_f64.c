/* The grid solver's kernels in double (kernel.inc instantiated for one precision). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/base.h"  /* dg_clock_s */
#include "hji/internal.h"

#define REAL double
#define RABS fabs
#define RSQRT sqrt
#define HJI_PAIR_DIV 1
#define HJI_WITH_DERIVS 1
#define hji_solve_real hji_solve_f64
#define hji_interp_real hji_interp_f64
#define hji_derivs_real hji_derivs_f64
#include "hji/kernel.inc"
