/* difgames: status codes and error messages.
 *
 * Library code never prints and never exits. A function that can fail returns
 * a dg_status and, where the caller passed a dg_err, writes one human-readable
 * line into it (naming the file, field or op that failed). The CLI prints it.
 */
#ifndef DIFGAMES_STATUS_H
#define DIFGAMES_STATUS_H

#include <stddef.h>

#include "difgames/api.h"

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

DG_API const char *dg_status_str(dg_status s);  /* "ok", "out of memory", ... never NULL */

/* The exit status of a program for a status, as the difgames command gives it (README "Exit
 * status"): 0 for DG_OK; DG_EXIT_USAGE for what the user fixes in the command, config or files (a
 * bad value, a file that cannot be read, parsed or written); DG_EXIT_INTERRUPTED; else DG_EXIT_FAIL
 * (out of memory, non-finite numbers, ...). */
#define DG_EXIT_FAIL        1    /* the job ran and failed                           */
#define DG_EXIT_USAGE       2    /* bad command line, config or input file           */
#define DG_EXIT_INTERRUPTED 130  /* stopped by SIGINT / SIGTERM (what was done is saved) */
DG_API int dg_status_exit(dg_status s);

/* Sets e (if not NULL) to status s and a printf-style message; returns s. */
DG_API dg_status dg_err_set(dg_err *e, dg_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Prefixes e's message with "prefix: " (e.g. a file name); returns e->status. */
DG_API dg_status dg_err_prefix(dg_err *e, const char *prefix);

/* How a message echoes a user's value (an option's text, a list): a value of up to DG_ECHO_SHOW
 * bytes whole, 'train.lr=0.1'; a longer one cut after its last comma within DG_ECHO_SHOW bytes (or
 * at that many bytes, on a character boundary), with its count: '0.0001,0.0002,...' (100 values), or
 * 'xxxx...' (3000 characters). Control bytes and invalid UTF-8 become '?', so the line stays one
 * line. Messages put the reason first and the echo after it ("--set train.lr: more than 32 values;
 * got '0.0001,...' (100 values)"): a value, however long, can no longer push the reason past the
 * end of dg_err's DG_ERR_LEN bytes. */
#define DG_ECHO_SHOW 48
#define DG_ECHO_LEN  128  /* room for any echo, quotes and count included */
/* The echo of len bytes of text ((size_t)-1: up to its NUL) into buf (size bytes; DG_ECHO_LEN is
 * enough), quotes included; returns buf. (Defined in src/base/text.c with the other message text.) */
DG_API const char *dg_err_echo(char *buf, size_t size, const char *text, size_t len);
/* dg_err_echo into a buffer living to the end of the enclosing block, for an argument of
 * dg_err_set or printf (C only: a compound literal). DG_ECHO_N: the first n bytes of text. */
#define DG_ECHO(text)      dg_err_echo((char[DG_ECHO_LEN]){0}, DG_ECHO_LEN, (text), (size_t)-1)
#define DG_ECHO_N(text, n) dg_err_echo((char[DG_ECHO_LEN]){0}, DG_ECHO_LEN, (text), (n))

#ifdef __cplusplus
}
#endif
#endif
