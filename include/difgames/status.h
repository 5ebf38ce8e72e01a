/* difgames: status codes and error messages.
 *
 * Library code never prints and never exits. A function that can fail returns
 * a dg_status and, where the caller passed a dg_err, writes one human-readable
 * line into it (naming the file, field or op that failed). The CLI prints it.
 */
#ifndef DIFGAMES_STATUS_H
#define DIFGAMES_STATUS_H

#include <stddef.h>

#include "difgames/real.h"  /* dg_real; with DG_F64, the double copy's names */

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dg_status {
    DG_OK = 0,
    DG_ERR_NOMEM,       /* malloc failed                                     */
    DG_ERR_ARENA_FULL,  /* the graph context's arena has no room left        */
    DG_ERR_SHAPE,       /* shapes do not match or cannot broadcast           */
    DG_ERR_ARG,         /* an argument or value out of range                 */
    DG_ERR_IO,          /* a file could not be opened, read or written       */
    DG_ERR_FORMAT,      /* a file is malformed (truncated, corrupt, bad field)*/
    DG_ERR_NOT_FOUND,   /* a named thing (tensor, key, game) does not exist  */
    DG_ERR_CONFIG,      /* a config is invalid (unknown key, wrong type, ...) */
    DG_ERR_NONFINITE,   /* a NaN or infinity where a finite value is needed  */
    DG_ERR_INTERRUPTED, /* stopped on request (SIGINT)                        */
    DG_STATUS_COUNT
} dg_status;

#define DG_ERR_LEN 512

/* A message buffer filled by a failing call; zero-initialise it. */
typedef struct dg_err {
    dg_status status;
    char msg[DG_ERR_LEN];
} dg_err;

const char *dg_status_str(dg_status s);  /* "ok", "out of memory", ... never NULL */

/* Sets e (if not NULL) to status s and a printf-style message; returns s. */
dg_status dg_err_set(dg_err *e, dg_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Prefixes e's message with "prefix: " (e.g. a file name); returns e->status. */
dg_status dg_err_prefix(dg_err *e, const char *prefix);

#ifdef __cplusplus
}
#endif
#endif
