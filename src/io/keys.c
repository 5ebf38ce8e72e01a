/* Config keys declared once: a table read by one function (see keys.h). */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/keys.h"

/* ------------------------------------------------------------ helpers */

#define AT(base, off, T) ((T *)((char *)(base) + (off)))

/* appends printf text to buf (size), keeping it NUL-terminated and truncated */
static void cat(char *buf, size_t size, const char *fmt, ...) {
    size_t len = strlen(buf);
    if (len + 1 >= size) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, size - len, fmt, ap);
    va_end(ap);
}

/* "0.05" for a float as it is stored (the shortest %g that reads back the same float) */
static void cat_f32(char *buf, size_t size, double v) {
    if (isinf(v)) {
        cat(buf, size, v < 0 ? "-inf" : "inf");
        return;
    }
    char t[32];
    if (v == floor(v) && fabs(v) < 1e9) {  /* 1000000, not 1e+06 */
        cat(buf, size, "%.0f", v);
        return;
    }
    for (int p = 6; p <= 9; p++) {
        snprintf(t, sizeof t, "%.*g", p, v);
        if ((float)strtod(t, NULL) == (float)v) break;
    }
    cat(buf, size, "%s", t);
}

/* "6.283185307179586" for a double (the shortest %g that reads back the same double) */
static void cat_f64(char *buf, size_t size, double v) {
    char t[32];
    if (isinf(v) || (v == floor(v) && fabs(v) < 1e9)) {
        cat_f32(buf, size, v);
        return;
    }
    for (int p = 6; p <= 17; p++) {
        snprintf(t, sizeof t, "%.*g", p, v);
        if (strtod(t, NULL) == v) break;
    }
    cat(buf, size, "%s", t);
}

static int is_array(const dg_key *k) {
    return k->type == DG_KEY_F32_ARRAY || k->type == DG_KEY_INT_ARRAY || k->type == DG_KEY_F32_ROWS ||
           k->type == DG_KEY_F64_ARRAY;
}

/* "1000000" for a whole number, else "%g" */
static void cat_num(char *buf, size_t size, double v) {
    cat(buf, size, v == floor(v) && fabs(v) < 1e15 ? "%.0f" : "%g", v);
}

/* k's range check of v read from path: "FILE:LINE: key 'env.damping': 1.5 is out of range, expected
 * (0, 1]" (or "> 0", "<= 5"), the value as written there; DG_ERR_ARG when the key is missing (the
 * default is out of range). A float key's bounds are floats ((float)0.1), an int key's INT_MIN and
 * INT_MAX no bound. */
static dg_status check(dg_cfg *cfg, const dg_key *k, const char *path, double v, dg_err *e) {
    const int is_int = k->type == DG_KEY_INT || k->type == DG_KEY_INT_ARRAY;
    double lo = k->type == DG_KEY_F32 ? (float)k->lo : k->lo, hi = k->type == DG_KEY_F32 ? (float)k->hi : k->hi;
    if (is_int && lo <= INT_MIN) lo = -INFINITY;
    if (is_int && hi >= INT_MAX) hi = INFINITY;
    if ((k->lo_open ? v > lo : v >= lo) && (k->hi_open ? v < hi : v <= hi)) return DG_OK;
    char a[40] = "", b[40] = "", want[96] = "", got[40] = "";
    const char *text = NULL;
    cat_num(a, sizeof a, lo);
    cat_num(b, sizeof b, hi);
    if (isinf(lo) && isinf(hi)) cat(want, sizeof want, "a finite number");
    else if (isinf(lo)) cat(want, sizeof want, "%s %s", k->hi_open ? "<" : "<=", b);
    else if (isinf(hi)) cat(want, sizeof want, "%s %s", k->lo_open ? ">" : ">=", a);
    else cat(want, sizeof want, "%c%s, %s%c", k->lo_open ? '(' : '[', a, b, k->hi_open ? ')' : ']');
    if (dg_cfg_get(cfg, path, DG_CFG_STR, &text, NULL) == DG_OK && text)
        return dg_cfg_error(cfg, path, e, "%s is out of range, expected %s", text, want);
    cat_num(got, sizeof got, v);
    return dg_err_set(e, DG_ERR_ARG, "%.400s: key '%.200s': default %s is out of range, expected %s", dg_cfg_path(cfg),
                      path, got, want);
}

/* ------------------------------------------------------------ public */

void dg_keys_defaults(const dg_key *keys, int n, void *base) {
    for (int i = 0; i < n; i++) {
        const dg_key *k = &keys[i];
        switch (k->type) {
        case DG_KEY_INT:
        case DG_KEY_BOOL:
        case DG_KEY_ENUM: *AT(base, k->offset, int) = (int)k->def; break;
        case DG_KEY_F32: *AT(base, k->offset, float) = (float)k->def; break;
        case DG_KEY_F64: *AT(base, k->offset, double) = k->def; break;
        case DG_KEY_F64_ARRAY:
            for (int j = 0; j < k->def_n; j++) AT(base, k->offset, double)[j] = k->def_v[j];
            break;
        case DG_KEY_STR: *AT(base, k->offset, const char *) = k->def_str; break;
        case DG_KEY_INT_ARRAY:
            for (int j = 0; j < k->def_n; j++) AT(base, k->offset, int)[j] = (int)k->def_v[j];
            break;
        case DG_KEY_F32_SPAN:
        case DG_KEY_F32_ARRAY:
            for (int j = 0; j < k->def_n; j++) AT(base, k->offset, float)[j] = (float)k->def_v[j];
            break;
        case DG_KEY_F32_ROWS:
            for (int j = 0; j < k->def_n * k->cols; j++) AT(base, k->offset, float)[j] = (float)k->def_v[j];
            break;
        }
        if (is_array(k) && k->count_offset) *AT(base, k->count_offset, int) = k->def_n;
    }
}

dg_status dg_key_read(dg_cfg *cfg, const dg_key *k, void *base, dg_err *e) {
    dg_keys_defaults(k, 1, base);
    void *p = AT(base, k->offset, char);
    int *count = is_array(k) && k->count_offset ? AT(base, k->count_offset, int) : NULL;
    dg_status st = DG_OK;
    if (k->req && (st = dg_cfg_require(cfg, k->name, e))) return st;  /* "missing required key 'game'" */
    switch (k->type) {
    case DG_KEY_INT:
    case DG_KEY_F32:
    case DG_KEY_F64: {
        const dg_cfg_type t = k->type == DG_KEY_INT ? DG_CFG_INT : k->type == DG_KEY_F32 ? DG_CFG_F32 : DG_CFG_F64;
        if ((st = dg_cfg_get(cfg, k->name, t, p, e))) return st;
        return check(cfg, k, k->name, k->type == DG_KEY_INT ? *(int *)p : k->type == DG_KEY_F32 ? *(float *)p
                                                                                             : *(double *)p, e);
    }
    case DG_KEY_BOOL: return dg_cfg_get(cfg, k->name, DG_CFG_BOOL, p, e);
    case DG_KEY_STR: return dg_cfg_get(cfg, k->name, DG_CFG_STR, p, e);
    case DG_KEY_ENUM: {
        const char *s = k->values[(int)k->def];
        if ((st = dg_cfg_get(cfg, k->name, DG_CFG_STR, &s, e))) return st;
        char known[256] = "";
        for (int j = 0; k->values[j]; j++) {
            if (!strcmp(s, k->values[j])) {
                *(int *)p = j;
                return DG_OK;
            }
            cat(known, sizeof known, "%s%s", j ? ", " : "", k->values[j]);
        }
        if (!k->what) return dg_cfg_error(cfg, k->name, e, "'%s' is not one of: %s", s, known);
        return dg_cfg_error(cfg, k->name, e, "unknown %s '%s' (known: %s)", k->what, s, known);
    }
    case DG_KEY_F64_ARRAY:
    case DG_KEY_F32_ARRAY:
    case DG_KEY_INT_ARRAY: {
        const dg_cfg_type t = k->type == DG_KEY_INT_ARRAY ? DG_CFG_INT : k->type == DG_KEY_F32_ARRAY ? DG_CFG_F32
                                                                                                     : DG_CFG_F64;
        int n = k->def_n;
        if ((st = dg_cfg_get_list(cfg, k->name, t, 0, p, k->min_n, k->max_n, &n, e))) return st;
        if (count) *count = n;
        for (int j = 0; j < n; j++) {
            const double v = t == DG_CFG_INT ? ((int *)p)[j] : t == DG_CFG_F32 ? ((float *)p)[j] : ((double *)p)[j];
            char ipath[256];
            snprintf(ipath, sizeof ipath, "%s[%d]", k->name, j);
            if (!k->what) {  /* the item's own range error */
                if ((st = check(cfg, k, ipath, v, e))) return st;
            } else if (!((k->lo_open ? v > k->lo : v >= k->lo) && (k->hi_open ? v < k->hi : v <= k->hi))) {
                if (t != DG_CFG_INT)
                    return dg_cfg_error(cfg, k->name, e, "each %s must be in %c%g, %g%c", k->what,
                                        k->lo_open ? '(' : '[', k->lo, k->hi, k->hi_open ? ')' : ']');
                if (k->hi >= 2147483647.0)
                    return dg_cfg_error(cfg, k->name, e, "%s must be >= %d, not %d", k->what, (int)k->lo, (int)v);
                return dg_cfg_error(cfg, k->name, e, "%s must be %d to %d, not %d", k->what, (int)k->lo, (int)k->hi,
                                    (int)v);
            }
        }
        return DG_OK;
    }
    case DG_KEY_F32_SPAN: {
        float *r = p;
        if ((st = dg_cfg_get_list(cfg, k->name, DG_CFG_F32, 0, r, 2, 2, NULL, e))) return st;
        if (!(r[0] <= r[1])) return dg_cfg_error(cfg, k->name, e, "expected [lo, hi] with lo <= hi");
        return DG_OK;
    }
    case DG_KEY_F32_ROWS: {
        int n = k->def_n;
        if (k->cols < 1) return dg_err_set(e, DG_ERR_ARG, "key '%s': rows of %d items", k->name, k->cols);
        if ((st = dg_cfg_get_list(cfg, k->name, DG_CFG_F32, k->cols, p, k->min_n, k->max_n, &n, e))) return st;
        if (count) *count = n;
        return DG_OK;
    }
    }
    return dg_err_set(e, DG_ERR_ARG, "key '%s': unknown key type %d", k->name, (int)k->type);
}

dg_status dg_key_check(const dg_key *k, const char *text, dg_err *e) {
    dg_err local = {0};
    if (!e) e = &local;
    /* a config of this one key: the conversion and range check are dg_key_read's own */
    dg_key one = *k;
    one.offset = 0;
    one.count_offset = 0;
    const size_t items = is_array(k) ? (size_t)(k->max_n > 0 ? k->max_n : 1) * (size_t)(k->cols > 0 ? k->cols : 1) : 2;
    double *buf = calloc(items, sizeof *buf);
    dg_cfg *cfg = buf ? dg_cfg_parse("{}", 2, "command line", e) : NULL;
    dg_status st = !buf ? dg_err_set(e, DG_ERR_NOMEM, "key '%.200s': out of memory", k->name)
                 : !cfg ? e->status
                 : dg_cfg_set(cfg, k->name, text, e) != DG_OK ? e->status : dg_key_read(cfg, &one, buf, e);
    dg_cfg_free(cfg);
    free(buf);
    char prefix[256];  /* "command line: key 'train.batch': ": the caller names where the value came from */
    snprintf(prefix, sizeof prefix, "command line: key '%s': ", k->name);
    const size_t pl = strlen(prefix);
    if (st != DG_OK && !strncmp(e->msg, prefix, pl)) memmove(e->msg, e->msg + pl, strlen(e->msg + pl) + 1);
    return st;
}

dg_status dg_keys_read(dg_cfg *cfg, const dg_key *keys, int n, void *base, dg_err *e) {
    for (int i = 0; i < n; i++) {
        dg_status st = dg_key_read(cfg, &keys[i], base, e);
        if (st) return st;
    }
    return DG_OK;
}

const char *dg_key_type_str(const dg_key *k, char *buf, size_t size) {
    static const char *const NAMES[] = {"int",           "float",       "bool",         "string",
                                        "enum",          "[float, float]", "list of float", "list of int",
                                        "list of rows",  "float64",     "list of float64"};
    snprintf(buf, size, "%s", NAMES[k->type]);
    if (k->type == DG_KEY_F32_ROWS) snprintf(buf, size, "list of [float x %d]", k->cols);
    return buf;
}

const char *dg_key_default_str(const dg_key *k, char *buf, size_t size) {
    buf[0] = '\0';
    if (k->req || (k->def_str && k->type != DG_KEY_STR)) {
        cat(buf, size, "%s", k->req ? "required" : k->def_str);
        return buf;
    }
    switch (k->type) {
    case DG_KEY_INT: cat(buf, size, "%d", (int)k->def); break;
    case DG_KEY_F64: cat_f64(buf, size, k->def); break;
    case DG_KEY_F32: cat_f32(buf, size, k->def); break;
    case DG_KEY_BOOL: cat(buf, size, k->def ? "true" : "false"); break;
    case DG_KEY_STR: cat(buf, size, "%s", k->def_str ? k->def_str : "~"); break;
    case DG_KEY_ENUM: cat(buf, size, "%s", k->values[(int)k->def]); break;
    case DG_KEY_F32_SPAN:
    case DG_KEY_F32_ARRAY:
    case DG_KEY_INT_ARRAY:
    case DG_KEY_F64_ARRAY:
    case DG_KEY_F32_ROWS: {
        const int cols = k->type == DG_KEY_F32_ROWS ? k->cols : 1, n = k->def_n * cols;
        cat(buf, size, "[");
        for (int j = 0; j < n; j++) {
            if (cols > 1 && j % cols == 0) cat(buf, size, "%s[", j ? ", " : "");
            else if (j) cat(buf, size, ", ");
            if (k->type == DG_KEY_INT_ARRAY) cat(buf, size, "%d", (int)k->def_v[j]);
            else if (k->type == DG_KEY_F64_ARRAY) cat_f64(buf, size, k->def_v[j]);
            else cat_f32(buf, size, k->def_v[j]);
            if (cols > 1 && j % cols == cols - 1) cat(buf, size, "]");
        }
        cat(buf, size, "]");
        break;
    }
    }
    return buf;
}

const char *dg_key_range_str(const dg_key *k, char *buf, size_t size) {
    buf[0] = '\0';
    if (k->type == DG_KEY_ENUM) {
        for (int j = 0; k->values[j]; j++) cat(buf, size, "%s%s", j ? " | " : "", k->values[j]);
        return buf;
    }
    if (k->type == DG_KEY_F32_SPAN) {
        cat(buf, size, "lo <= hi");
        return buf;
    }
    if (is_array(k)) {
        if (k->min_n == k->max_n) cat(buf, size, "%d %s", k->max_n, k->type == DG_KEY_F32_ROWS ? "rows" : "items");
        else cat(buf, size, "%d to %d %s", k->min_n, k->max_n, k->type == DG_KEY_F32_ROWS ? "rows" : "items");
        if (k->type == DG_KEY_F32_ROWS) return buf;
        cat(buf, size, ", each ");
    }
    if (k->type == DG_KEY_INT || k->type == DG_KEY_INT_ARRAY) {
        cat(buf, size, "[%d, %d]", (int)k->lo, (int)k->hi);
    } else if (k->type == DG_KEY_F32 || k->type == DG_KEY_F32_ARRAY || k->type == DG_KEY_F64 ||
               k->type == DG_KEY_F64_ARRAY) {
        const int f64 = k->type == DG_KEY_F64 || k->type == DG_KEY_F64_ARRAY;
        if (isinf(k->lo) && isinf(k->hi)) {
            cat(buf, size, "any");
            return buf;
        }
        cat(buf, size, "%c", k->lo_open || isinf(k->lo) ? '(' : '[');  /* an infinite end is never in */
        (f64 ? cat_f64 : cat_f32)(buf, size, k->lo);
        cat(buf, size, ", ");
        (f64 ? cat_f64 : cat_f32)(buf, size, k->hi);
        cat(buf, size, "%c", k->hi_open || isinf(k->hi) ? ')' : ']');
    }
    return buf;
}
