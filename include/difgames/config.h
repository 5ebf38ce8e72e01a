/* difgames io: YAML configs with typed access and precise errors.
 *
 * A config is a tree of maps, lists and scalars read from one YAML document
 * (block or flow style, comments, quoted strings; no anchors, aliases or
 * tags). Every node remembers its line, so every error names the place:
 *
 *     dg_err e = {0};
 *     dg_cfg *c = dg_cfg_load("configs/reach.yaml", &e);
 *     if (!c) { fprintf(stderr, "%s\n", e.msg); return 1; }
 *     float dt = 0.05f, damping = 0.98f, lr = 1e-3f;  // the defaults, kept when a key is missing
 *     int epochs;
 *     float obst[16 * 3]; int n_obst = 0;             // (n_obst, 3) circles: x, y, r
 *     if (dg_cfg_get(c, "env.dt", DG_CFG_F32, &dt, &e)
 *      || dg_cfg_get(c, "env.damping", DG_CFG_F32, &damping, &e)
 *      || dg_cfg_get_list(c, "env.obstacles", DG_CFG_F32, 3, obst, 0, 16, &n_obst, &e)
 *      || dg_cfg_require(c, "train.epochs", &e) || dg_cfg_get(c, "train.epochs", DG_CFG_INT, &epochs, &e)
 *      || dg_cfg_set(c, "train.lr", "0.01", &e)      // --lr 0.01 from the command line
 *      || dg_cfg_get(c, "train.lr", DG_CFG_F32, &lr, &e)
 *      || dg_cfg_check_unused(c, &e))                  // "configs/reach.yaml:7: unknown key 'env.dampng'"
 *         ...print e.msg, dg_cfg_free(c), fail...
 *
 * Paths join map keys with dots and pick list items with [i] (or .i):
 * "env.dt", "env.obstacles[0]", "env.obstacles[0][2]", "policy.hidden.1";
 * "" is the top-level map. A key holding nothing ("env:") reads as an empty
 * map on the way to a deeper key.
 *
 * Getters: a missing key leaves the caller's value (its default) alone; a
 * present key of the wrong kind is DG_ERR_CONFIG with "FILE:LINE: key
 * 'train.epochs': expected an integer, got 'abc'". Numbers must be plain
 * (unquoted) and finite; quoted scalars are strings. Each getter records that
 * the key was used, so dg_cfg_check_unused() can name the first key nobody
 * asked for. Values set by dg_cfg_set() report "command line" instead of
 * FILE:LINE. Config keys are best declared in a table (difgames/keys.h) that
 * one function reads with these getters.
 *
 * A config is not thread-safe: getters write the "used" marks.
 */
#ifndef DIFGAMES_CONFIG_H
#define DIFGAMES_CONFIG_H

#include <stddef.h>

#include "difgames/api.h"
#include "difgames/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_CFG_MAX_BYTES (16 << 20)  /* largest config file dg_cfg_load reads (16 MiB); larger is refused */
#define DG_CFG_MAX_DEPTH 64  /* deepest nesting of maps and lists accepted (the top-level map is 1) */

typedef struct dg_cfg dg_cfg;  /* a parsed config; opaque */

/* --------------------------------------------------------- load and free */

/* Reads and parses a YAML file. Returns a new config (free with dg_cfg_free) or NULL with e set:
 * DG_ERR_IO (cannot read), DG_ERR_ARG (more than DG_CFG_MAX_BYTES), DG_ERR_CONFIG ("FILE:LINE:
 * problem"), DG_ERR_NOMEM. */
DG_API dg_cfg     *dg_cfg_load(const char *path, dg_err *e);                                 /* file -> config              */
/* Parses len bytes of text (need not be NUL-terminated; any bytes are safe); label names it in
 * messages (NULL: "<memory>"). Returns a new config or NULL with e set, as dg_cfg_load. */
DG_API dg_cfg     *dg_cfg_parse(const char *text, size_t len, const char *label, dg_err *e); /* buffer -> config            */
/* Frees the config and every string it handed out. */
DG_API void        dg_cfg_free(dg_cfg *c);                                                   /* NULL is harmless            */
/* Returns the file path or label given at load/parse time; owned by c. */
DG_API const char *dg_cfg_path(const dg_cfg *c);                                             /* for the caller's messages   */

/* ---------------------------------------------------------------- values */
/* The getters read one key as a type; a missing key leaves *out as it was (pre-fill it with the
 * default) and returns DG_OK; a present key of the wrong kind is DG_ERR_CONFIG with *out unchanged.
 * Each records that the key was used (dg_cfg_check_unused) or, missing, that it was asked for (the
 * "did you mean" hints). */
typedef enum dg_cfg_type {
    DG_CFG_F32,   /* float: a finite number within float's range ("0.05", "1e-3", "3")               */
    DG_CFG_F64,   /* double: any finite number, read at full precision (e.g. pg.*'s rates)             */
    DG_CFG_INT,   /* int: a decimal integer within int's range ("300", "-2"; not "2.5" or "1e3")       */
    DG_CFG_BOOL,  /* int 0/1: true/false, yes/no, on/off (lower, Capitalised or UPPER case)            */
    DG_CFG_STR,   /* const char *: any scalar, a plain number too; owned by c, valid until dg_cfg_free
                     or a dg_cfg_set of that key                                                       */
} dg_cfg_type;

/* One scalar into *out: a float, double, int (INT and BOOL) or const char *, as type says. A
 * malformed path ("env..dt") is the program's error, DG_ERR_ARG. Bounds belong to the key's
 * declaration (difgames/keys.h), which checks them with the line and the text written there. */
DG_API dg_status dg_cfg_get(dg_cfg *c, const char *path, dg_cfg_type type, void *out, dg_err *e);  /* "env.dt" */
/* DG_OK when the key exists, else DG_ERR_CONFIG "FILE:LINE: missing required key 'train.lr'" (LINE:
 * the deepest enclosing map that exists). */
DG_API dg_status dg_cfg_require(dg_cfg *c, const char *path, dg_err *e);
/* A list of min_n..max_n items of type (DG_CFG_F32, F64 or INT) into out, room for max_n (min_n ==
 * max_n: exactly that many; then n may be NULL); *n gets the count. cols > 0: a list of rows, each
 * a list of exactly cols items, into out (max_n, cols) row-major. Nothing is written unless every
 * item is valid. "[64, 64]", "[[x, y, r], ...]". */
DG_API dg_status dg_cfg_get_list(dg_cfg *c, const char *path, dg_cfg_type type, int cols, void *out, int min_n,
                                 int max_n, int *n, dg_err *e);

/* -------------------------------------------------- structure, no marks */
/* These look and do not mark anything used. */
DG_API int         dg_cfg_has(dg_cfg *c, const char *path);               /* 1 if the key exists (even if empty), else 0      */
DG_API int         dg_cfg_len(dg_cfg *c, const char *path);               /* entries of a map / items of a list; 0 if empty;
                                                                             -1 if missing or a scalar                         */
DG_API const char *dg_cfg_key(dg_cfg *c, const char *path, int i);        /* i-th key of the map at path (file order), owned
                                                                             by c; NULL if not a map or i out of range         */
DG_API int         dg_cfg_line(dg_cfg *c, const char *path, int *col);    /* 1-based line (col if not NULL) of the key; 0 if
                                                                             missing or set by dg_cfg_set                      */

/* ------------------------------------------------------ checks and errors */
/* Returns DG_ERR_CONFIG "FILE:LINE: key 'path': <message>" for a caller's own check (e.g. "hidden
 * sizes must be positive"); without a line when the key is missing. Never DG_OK. */
DG_API dg_status dg_cfg_error(dg_cfg *c, const char *path, dg_err *e, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Marks the key and everything under it as known to dg_cfg_check_unused ("" marks all). */
DG_API void      dg_cfg_mark_used(dg_cfg *c, const char *path);                     /* e.g. a section another module reads */
/* Returns DG_OK when every key was read by a getter (or marked), else DG_ERR_CONFIG naming the first
 * unread one in file order: "FILE:LINE: unknown key 'env.dampng' (did you mean 'env.damping'?)". */
DG_API dg_status dg_cfg_check_unused(dg_cfg *c, dg_err *e);                         /* call after reading everything    */
/* The "did you mean" of dg_cfg_check_unused, for any list of names (a command's options): the index
 * of the word of words[0, n) that text[0, len) most likely misspells, the nearest by edit distance
 * when within 1, 2 or 3 edits (for a word of under 4, under 8, or more bytes); -1 when none is. */
DG_API int       dg_cfg_nearest(const char *text, size_t len, const char *const *words, int n);

/* ------------------------------------------------ overrides and output */
/* Sets the key to value_text, replacing what was there or adding it (and any missing maps on the
 * way). The text is a plain scalar, typed when read ("0.01", "reach", "true"), or, when it starts
 * with '[' or '{', a YAML flow list or map ("[32, 32]"). Errors (DG_ERR_CONFIG) name the key and
 * "command line": a path that is malformed, runs through a value or list index that does not
 * exist, nests too deep, or a flow value that does not parse. Strings handed out for the
 * replaced value become invalid. */
DG_API dg_status dg_cfg_set(dg_cfg *c, const char *path, const char *value_text, dg_err *e); /* "train.lr", "0.01" */
/* Writes the config (with overrides) as YAML text into *out: malloc'd, NUL-terminated, the caller
 * frees it; *len (if not NULL) gets its length. Parsing it gives the same values. */
DG_API dg_status dg_cfg_to_yaml(const dg_cfg *c, char **out, size_t *len, dg_err *e);        /* for checkpoints  */

#ifdef __cplusplus
}
#endif
#endif
