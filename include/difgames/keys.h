/* difgames keys: config keys declared once, in a table, read by one function.
 *
 * Each key is one dg_key: its name, type, default, bounds (open or closed
 * ends), and a line of documentation. dg_keys_read reads a table from a config
 * into a struct (each key at its offset in it); dg_keys_defaults fills the
 * struct from the table alone, for a C caller without YAML. `difgames keys`
 * prints the tables, and docs/config.md is generated from it.
 *
 *     typedef struct hover { float gravity; } hover;
 *     static const dg_key KEYS[] = {
 *         DG_K_F32("env.gravity", hover, gravity, 2.0f, 0, 100, 1, 1, "downward acceleration"),
 *     };
 *     hover h;
 *     dg_keys_read(cfg, KEYS, 1, &h, &e);     // h.gravity: the config's, or 2
 */
#ifndef DIFGAMES_KEYS_H
#define DIFGAMES_KEYS_H

#include <math.h>
#include <stddef.h>

#include "difgames/api.h"
#include "difgames/config.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_KEY_MAX_ITEMS 64  /* most items of a F64_ARRAY key */

typedef enum dg_key_type {
    DG_KEY_INT,         /* int in [lo, hi] (closed ends)                                  */
    DG_KEY_F32,         /* float between lo and hi, each end open or closed               */
    DG_KEY_BOOL,        /* int 0/1                                                        */
    DG_KEY_STR,         /* const char * (owned by the config)                             */
    DG_KEY_ENUM,        /* int: index of the value in values[]                            */
    DG_KEY_F32_SPAN,    /* float[2]: [lo, hi] with lo <= hi                               */
    DG_KEY_F32_ARRAY,   /* float[max_n], min_n..max_n items, each between lo and hi       */
    DG_KEY_INT_ARRAY,   /* int[max_n], min_n..max_n items, each in [lo, hi]               */
    DG_KEY_F32_ROWS,    /* float[max_n][cols], min_n..max_n rows of cols floats           */
    DG_KEY_F64,         /* double between lo and hi, each end open or closed (read at full
                           double precision from the text; float32 range)                 */
    DG_KEY_F64_ARRAY,   /* double[max_n], min_n..max_n items, each between lo and hi      */
} dg_key_type;

typedef struct dg_key {
    const char *name;           /* full path: "env.dt", "train.lr"                          */
    dg_key_type type;
    size_t offset;              /* where the value goes in the struct read into             */
    size_t count_offset;        /* arrays and rows of variable length: int count (else 0)   */
    double lo, hi;              /* bounds (scalars; array items; -INFINITY/INFINITY: none)   */
    int lo_open, hi_open;       /* F32, F64 and their arrays: 1 when the end is excluded     */
    int req;                    /* 1: the key must be given (no default)                     */
    int min_n, max_n, cols;     /* arrays and rows: item or row counts; rows: floats a row  */
    double def;                 /* INT, F32, F64, BOOL, ENUM (the value's index)             */
    const char *def_str;        /* STR; others: the default as listings show it, when it is
                                   not a value of the table ("every axis")                    */
    const double *def_v;        /* arrays, spans, rows: def_n values (rows: def_n rows)      */
    int def_n;
    const char *const *values;  /* ENUM: its values, NULL-terminated                          */
    const char *what;           /* ENUM: noun of the error ("unknown evader 'x'"; NULL: "'x'
                                   is not one of: a, b"); INT_ARRAY: noun of an item error
                                   ("sizes must be 1 to 65536, not 0"; NULL: the item's own
                                   range error, "key 'grid.n[1]': 1 is out of range, ...")   */
    const char *doc;            /* one line                                                  */
} dg_key;

/* Table entries: S is the struct type, F the field; lo_c/hi_c: 1 when that end is allowed. A float
 * key's field is a float (not dg_real: config values are float32 in both tapes), checked here. */
#define DG_K_SIZE_(S, F, size) (0 * sizeof(char[sizeof(((S *)0)->F) == (size) ? 1 : -1]))
#define DG_K_INT(nm, S, F, d, l, h, doc_) \
    {.name = nm, .type = DG_KEY_INT, .offset = offsetof(S, F), .def = (d), .lo = (l), .hi = (h), .doc = doc_}
#define DG_K_F32(nm, S, F, d, l, h, lo_c, hi_c, doc_)                                              \
    {.name = nm, .type = DG_KEY_F32, .offset = offsetof(S, F) + DG_K_SIZE_(S, F, sizeof(float)), .def = (d), .lo = (l), .hi = (h), \
     .lo_open = !(lo_c), .hi_open = !(hi_c), .doc = doc_}
#define DG_K_F64(nm, S, F, d, l, h, lo_c, hi_c, doc_)                                              \
    {.name = nm, .type = DG_KEY_F64, .offset = offsetof(S, F), .def = (d), .lo = (l), .hi = (h), \
     .lo_open = !(lo_c), .hi_open = !(hi_c), .doc = doc_}
#define DG_K_BOOL(nm, S, F, d, doc_) \
    {.name = nm, .type = DG_KEY_BOOL, .offset = offsetof(S, F), .def = (d), .doc = doc_}
#define DG_K_ENUM(nm, S, F, d, vals, what_, doc_)                                                   \
    {.name = nm, .type = DG_KEY_ENUM, .offset = offsetof(S, F), .def = (d), .values = vals, \
     .what = what_, .doc = doc_}
#define DG_K_SPAN(nm, S, F, l, h, doc_)                                                            \
    {.name = nm, .type = DG_KEY_F32_SPAN, .offset = offsetof(S, F) + DG_K_SIZE_(S, F, 2 * sizeof(float)), .lo = -INFINITY, .hi = INFINITY, \
     .def_v = (const double[]){l, h}, .def_n = 2, .doc = doc_}

/* Fills base's fields from the table's defaults. */
DG_API void      dg_keys_defaults(const dg_key *keys, int n, void *base);
/* Reads each key of the table from cfg into base (its default when missing), in table order; stops
 * at the first error (DG_ERR_CONFIG "FILE:LINE: key 'env.damping': ...", e set). */
DG_API dg_status dg_keys_read(dg_cfg *cfg, const dg_key *keys, int n, void *base, dg_err *e);
/* Reads one key into base (as dg_keys_read does for each). */
DG_API dg_status dg_key_read(dg_cfg *cfg, const dg_key *k, void *base, dg_err *e);

/* Checks text as the value of key k, as a dg_cfg_set of k and dg_key_read would (the same
 * conversion and range check), e.g. for a command-line option that sets k. On error e's message
 * says what is wrong with the value alone ("0 is out of range, expected [1, 1048576]", "expected an
 * integer, got 'x'"): the caller names the option or key. */
DG_API dg_status dg_key_check(const dg_key *k, const char *text, dg_err *e);

/* For listings (`difgames keys`): the type ("float", "enum", "[float; 2]"), the default as YAML
 * ("0.05", "[64, 64]", "flee"; "required"; def_str) and the range ("(0, 10]", "flee | policy",
 * "" when none). Each writes
 * a NUL-terminated string into buf (truncated to size) and returns buf. */
DG_API const char *dg_key_type_str(const dg_key *k, char *buf, size_t size);
DG_API const char *dg_key_default_str(const dg_key *k, char *buf, size_t size);
DG_API const char *dg_key_range_str(const dg_key *k, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
