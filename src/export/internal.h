/* What the exporters (value.c, policy.c) share (export.c): the two files of an export, written
 * atomically, and numbers printed exactly. */
#ifndef DG_EXPORT_INTERNAL_H
#define DG_EXPORT_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "difgames/export.h"

/* An export's two files, each a temporary until dg__ex_commit. */
typedef struct ex_out {
    dg_file h, c;
    int     open;                          /* how many of h, c are open */
} ex_out;

/* Checks prefix, makes dir and opens dir/prefix.h and dir/prefix.c as temporaries. DG_OK, or
 * DG_ERR_ARG (a bad prefix, a path too long), DG_ERR_IO; nothing left behind on failure. */
dg_status dg__ex_open(ex_out *o, const char *dir, const char *prefix, dg_err *e);
/* Renames both into place and fills out (may be NULL) with their paths and sizes. */
dg_status dg__ex_commit(ex_out *o, dg_export_files *out, dg_err *e);
/* Removes the temporaries (after a failure). */
void      dg__ex_abort(ex_out *o);
/* n numbers as C99 hexadecimal literals (exact), comma-separated, a few a line; dg__ex_floats with the
 * f suffix (float literals). */
void      dg__ex_doubles(FILE *fp, const double *v, int64_t n);
void      dg__ex_floats(FILE *fp, const float *v, int64_t n);
/* The header's guard, opening comment and extern "C" lines around body (printf-style, prefix
 * substituted by the caller). */
void      dg__ex_header_open(FILE *fp, const char *prefix, const char *what);
void      dg__ex_header_close(FILE *fp, const char *prefix);
/* 1 when this library build fuses a * b + c into one rounding (-ffp-contract=fast on a CPU with
 * FMA): the exported code then calls fma() where the library's source writes a * b + c. */
int       dg__ex_fused(void);

#endif
