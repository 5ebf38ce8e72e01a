/* difgames io: whole-file writes that never leave a half-written file.
 *
 * dg_file_begin opens "<path>.tmp.<pid>" in the target's folder; the caller
 * writes to f->fp; dg_file_commit flushes, fsyncs and renames it over path
 * (killed at any instant, path holds the old file or the new one, whole).
 * dg_file_abort removes the temporary file.
 */
#ifndef DIFGAMES_FILEIO_H
#define DIFGAMES_FILEIO_H

#include <stdio.h>

#include "difgames/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dg_file {
    FILE *fp;
    char  path[1024];      /* final name        */
    char  tmp[1100];       /* temporary name    */
} dg_file;

dg_status dg_file_begin(dg_file *f, const char *path, dg_err *e);  /* opens the temporary file */
dg_status dg_file_commit(dg_file *f, dg_err *e);                   /* flush, fsync, rename     */
void      dg_file_abort(dg_file *f);                               /* close and remove tmp     */
/* Reads a whole file into a malloc'd buffer (caller frees); adds a NUL after it. */
dg_status dg_file_read_all(const char *path, unsigned char **out, size_t *len, dg_err *e);
/* Makes a folder and its parents (like mkdir -p). */
dg_status dg_mkdirs(const char *path, dg_err *e);

#ifdef __cplusplus
}
#endif
#endif
