/* The double tape's math (include/difgames/real.h): in the DG_F64 copy of the tape's layers, the
 * float functions their code calls are double's, so the float copy's sources compile unchanged
 * into the double copy (CMakeLists.txt includes this header first in each of them). */
#ifndef DG_REAL_MATH_H
#define DG_REAL_MATH_H
#ifdef DG_F64
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L  /* what the tape's sources ask for (the same value: no redefinition) */
#endif
#include <math.h>  /* declared first, then the float names become double's */
#define fabsf(x) fabs(x)
#define sqrtf(x) sqrt(x)
#define expf(x) exp(x)
#define logf(x) log(x)
#define log1pf(x) log1p(x)
#define powf(x, y) pow(x, y)
#define tanhf(x) tanh(x)
#define atanhf(x) atanh(x)
#define tanf(x) tan(x)
#define sinf(x) sin(x)
#define cosf(x) cos(x)
#define hypotf(x, y) hypot(x, y)
#define fmaxf(x, y) fmax(x, y)
#define fminf(x, y) fmin(x, y)
#define copysignf(x, y) copysign(x, y)
#define ceilf(x) ceil(x)
#define floorf(x) floor(x)
#define roundf(x) round(x)
#define lroundf(x) lround(x)
#define atan2f(y, x) atan2(y, x)
#define asinf(x) asin(x)
#define acosf(x) acos(x)
#define atanf(x) atan(x)
#define expm1f(x) expm1(x)
#endif
#endif
