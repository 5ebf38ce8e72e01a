/* safetensors read/write: a validating parser (every header field is checked
 * before a tensor is handed out) and an atomic writer. */
#include "difgames/safetensors.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/fileio.h"
#include "base/text.h"

/* ---------------------------------------------------------------- types */

struct dg_st_file {
    char          *label;      /* file name or "<memory>", starts every message */
    unsigned char *buf;        /* the whole file, owned; NUL after the last byte */
    size_t         len;
    dg_st_tensor  *tensors;    /* count, header order; names owned               */
    int            count;
    const dg_st_tensor **by_name; /* count, sorted by name for dg_st_find        */
    char         **meta_key;   /* nmeta, header order; owned                     */
    char         **meta_val;
    int            nmeta;
};

typedef struct st_item {
    char          *name;
    dg_dtype       dtype;
    int            ndim;
    int64_t        shape[DG_ST_MAX_DIMS];
    unsigned char *data;       /* nbytes, little-endian copy                     */
    size_t         nbytes;
} st_item;

struct dg_st_writer {
    st_item *items;            /* count of cap, in the order added               */
    int      count, cap;
    char   **meta_key;         /* nmeta of meta_cap                              */
    char   **meta_val;
    int      nmeta, meta_cap;
};

/* A growable string for the header the writer builds. */
typedef struct st_buf {
    char  *p;
    size_t len, cap;
    int    oom;
} st_buf;

static const char *const DTYPE_NAME[] = {
    "F32", "F64", "F16", "BF16", "I64", "I32", "I16", "I8", "U64", "U32", "U16", "U8", "BOOL",
};
static const size_t DTYPE_SIZE[] = {4, 8, 2, 2, 8, 4, 2, 1, 8, 4, 2, 1, 1};
_Static_assert(sizeof(DTYPE_NAME) / sizeof(DTYPE_NAME[0]) == DG_DTYPE_COUNT,
               "DTYPE_NAME must name every dg_dtype");
_Static_assert(sizeof(DTYPE_SIZE) / sizeof(DTYPE_SIZE[0]) == DG_DTYPE_COUNT,
               "DTYPE_SIZE must size every dg_dtype");

/* JSON numbers are doubles: integers above 2^53 are not exact, so refuse them. */
#define ST_MAX_INT ((uint64_t)1 << 53)
#define ST_META "__metadata__"

/* ------------------------------------------------------ internal helpers */

static char *st_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static int host_is_le(void) {
    const uint16_t one = 1;
    unsigned char c;
    memcpy(&c, &one, 1);
    return c == 1;
}

/* Copies nbytes of elements of `size` bytes, swapping byte order on a
 * big-endian host (the file is little-endian; the same swap goes both ways). */
static void copy_le(void *dst, const void *src, size_t nbytes, size_t size) {
    if (nbytes == 0) return;
    if (size == 1 || host_is_le()) { memcpy(dst, src, nbytes); return; }
    unsigned char *d = dst;
    const unsigned char *s = src;
    for (size_t i = 0; i < nbytes; i += size)
        for (size_t k = 0; k < size; k++) d[i + k] = s[i + size - 1 - k];
}

static uint64_t rd_u64le(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* Copies a name into out for an error message (see dg_text_append). Returns out. */
static const char *safe_name(const char *name, char *out, size_t cap) {
    size_t o = 0;
    dg_text_append(out, cap, &o, name, strlen(name));
    return out;
}

static void fmt_shape(char *out, size_t cap, int ndim, const int64_t *shape) {
    size_t k = (size_t)snprintf(out, cap, "[");
    for (int i = 0; i < ndim && k < cap; i++)
        k += (size_t)snprintf(out + k, cap - k, i ? ", %" PRId64 : "%" PRId64, shape[i]);
    if (k < cap) snprintf(out + k, cap - k, "]");
}

/* Sets e to DG_ERR_FORMAT: "<label>: tensor '<name>': <message>", or
 * "<label>: <message>" when name is NULL. Returns DG_ERR_FORMAT. */
static dg_status st_fail(dg_err *e, const char *label, const char *name, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static dg_status st_fail(dg_err *e, const char *label, const char *name, const char *fmt, ...) {
    char msg[DG_ERR_LEN], nm[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (name)
        return dg_err_set(e, DG_ERR_FORMAT, "%s: tensor '%s': %s", label,
                          safe_name(name, nm, sizeof nm), msg);
    return dg_err_set(e, DG_ERR_FORMAT, "%s: %s", label, msg);
}

/* Reads a JSON number that must be an exact integer in [0, 2^53]. Returns
 * NULL and sets *out, or a phrase saying what is wrong with it. */
static const char *json_uint(const cJSON *v, uint64_t *out) {
    if (!cJSON_IsNumber(v)) return "not a number";
    double d = v->valuedouble;
    if (!isfinite(d)) return "not a finite number";
    if (d < 0) return "negative";
    if (d != floor(d)) return "not an integer";
    if (d > (double)ST_MAX_INT) return "larger than 2^53";
    *out = (uint64_t)d;
    return NULL;
}

/* *out = a * b; returns 0 (and leaves *out) if that overflows 64 bits. */
static int mul_ok(uint64_t a, uint64_t b, uint64_t *out) {
    if (a != 0 && b > UINT64_MAX / a) return 0;
    *out = a * b;
    return 1;
}

/* Sets numel and nbytes of a shape; returns 0 if they overflow (or exceed SIZE_MAX). */
static int shape_size(int ndim, const int64_t *shape, size_t elsize, uint64_t *numel,
                      uint64_t *nbytes) {
    uint64_t n = 1;
    int zero = 0;
    for (int i = 0; i < ndim; i++) if (shape[i] == 0) zero = 1;
    if (zero) n = 0;
    else
        for (int i = 0; i < ndim; i++)
            if (!mul_ok(n, (uint64_t)shape[i], &n)) return 0;
    uint64_t b;
    if (!mul_ok(n, elsize, &b) || b > SIZE_MAX) return 0;
    *numel = n;
    *nbytes = b;
    return 1;
}

static int cmp_name(const void *a, const void *b) {
    const dg_st_tensor *x = *(const dg_st_tensor *const *)a, *y = *(const dg_st_tensor *const *)b;
    return strcmp(x->name, y->name);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* By where the data starts, then by where it ends. */
static int cmp_offset(const void *a, const void *b) {
    const dg_st_tensor *x = *(const dg_st_tensor *const *)a, *y = *(const dg_st_tensor *const *)b;
    const unsigned char *xb = x->data, *yb = y->data;
    if (xb != yb) return xb < yb ? -1 : 1;
    if (x->nbytes != y->nbytes) return x->nbytes < y->nbytes ? -1 : 1;
    return 0;
}

/* Rejects an escaped NUL (\u0000) anywhere in the header: cJSON would cut
 * the string there, so "a\u0000b" would silently read as "a". Every
 * backslash in valid JSON starts an escape, so a plain scan is enough. */
static int has_escaped_nul(const unsigned char *h, size_t n) {
    for (size_t i = 0; i + 1 < n; i++) {
        if (h[i] != '\\') continue;
        if (h[i + 1] == 'u' && i + 5 < n && h[i + 2] == '0' && h[i + 3] == '0' &&
            h[i + 4] == '0' && h[i + 5] == '0')
            return 1;
        i++;  /* skip the escaped character, so "\\\\u0000" is not a match */
    }
    return 0;
}

/* Checks one header entry `it` (named it->string) and fills t, whose data
 * points into the data area (data_len bytes). Returns DG_OK or DG_ERR_FORMAT. */
static dg_status parse_entry(const cJSON *it, const unsigned char *data, size_t data_len,
                             dg_st_tensor *t, const char *label, dg_err *e) {
    const char *nm = it->string;
    if (!cJSON_IsObject(it)) return st_fail(e, label, nm, "entry is not an object");

    const cJSON *jdt = NULL, *jsh = NULL, *jof = NULL;
    for (const cJSON *c = it->child; c; c = c->next) {
        const cJSON **slot = !strcmp(c->string, "dtype")          ? &jdt
                             : !strcmp(c->string, "shape")        ? &jsh
                             : !strcmp(c->string, "data_offsets") ? &jof
                                                                  : NULL;
        if (!slot) continue;  /* unknown fields are ignored, as safetensors does */
        if (*slot) return st_fail(e, label, nm, "field '%s' appears twice", c->string);
        *slot = c;
    }
    if (!jdt) return st_fail(e, label, nm, "missing dtype");
    if (!jsh) return st_fail(e, label, nm, "missing shape");
    if (!jof) return st_fail(e, label, nm, "missing data_offsets");

    if (!cJSON_IsString(jdt)) return st_fail(e, label, nm, "dtype is not a string");
    int dt = dg_dtype_from_name(jdt->valuestring);
    if (dt < 0) {
        char s[40];
        return st_fail(e, label, nm, "unknown dtype '%s'", safe_name(jdt->valuestring, s, sizeof s));
    }

    if (!cJSON_IsArray(jsh)) return st_fail(e, label, nm, "shape is not an array");
    int nd = cJSON_GetArraySize(jsh);
    if (nd > DG_ST_MAX_DIMS)
        return st_fail(e, label, nm, "shape has %d dims (at most %d)", nd, DG_ST_MAX_DIMS);
    int k = 0;
    for (const cJSON *c = jsh->child; c; c = c->next, k++) {
        uint64_t v;
        const char *why = json_uint(c, &v);
        if (why) return st_fail(e, label, nm, "shape dim %d is %s", k, why);
        t->shape[k] = (int64_t)v;
    }
    t->ndim = nd;
    t->dtype = (dg_dtype)dt;

    if (!cJSON_IsArray(jof) || cJSON_GetArraySize(jof) != 2)
        return st_fail(e, label, nm, "data_offsets is not an array of two integers");
    uint64_t off[2];
    k = 0;
    for (const cJSON *c = jof->child; c; c = c->next, k++) {
        const char *why = json_uint(c, &off[k]);
        if (why) return st_fail(e, label, nm, "data_offsets[%d] is %s", k, why);
    }
    if (off[0] > off[1])
        return st_fail(e, label, nm, "data_offsets [%" PRIu64 ",%" PRIu64 "] begin after end",
                       off[0], off[1]);
    if (off[1] > data_len)
        return st_fail(e, label, nm,
                       "data_offsets [%" PRIu64 ",%" PRIu64 "] past the end of the data (%zu bytes)",
                       off[0], off[1], data_len);

    char sh[160];
    uint64_t numel, nbytes;
    if (!shape_size(nd, t->shape, DTYPE_SIZE[dt], &numel, &nbytes)) {
        fmt_shape(sh, sizeof sh, nd, t->shape);
        return st_fail(e, label, nm, "shape %s is too large", sh);
    }
    if (nbytes != off[1] - off[0]) {
        fmt_shape(sh, sizeof sh, nd, t->shape);
        return st_fail(e, label, nm,
                       "data_offsets [%" PRIu64 ",%" PRIu64 "] hold %" PRIu64
                       " bytes but %s shape %s needs %" PRIu64,
                       off[0], off[1], off[1] - off[0], DTYPE_NAME[dt], sh, nbytes);
    }
    t->numel = (size_t)numel;
    t->nbytes = (size_t)nbytes;
    t->data = data + off[0];
    return DG_OK;
}

/* Checks "__metadata__" and copies it into f. Returns DG_OK or an error. */
static dg_status parse_meta(const cJSON *m, dg_st_file *f, dg_err *e) {
    if (cJSON_IsNull(m)) return DG_OK;  /* Python writes None as null: no metadata */
    if (!cJSON_IsObject(m)) return st_fail(e, f->label, NULL, ST_META " is not an object");
    int n = cJSON_GetArraySize(m);
    if (n == 0) return DG_OK;
    f->meta_key = calloc((size_t)n, sizeof *f->meta_key);
    f->meta_val = calloc((size_t)n, sizeof *f->meta_val);
    if (!f->meta_key || !f->meta_val) return dg_err_set(e, DG_ERR_NOMEM, "%s: out of memory", f->label);
    for (const cJSON *c = m->child; c; c = c->next) {
        char s[80];
        if (!cJSON_IsString(c))
            return st_fail(e, f->label, NULL, ST_META ": value of '%s' is not a string",
                           safe_name(c->string, s, sizeof s));
        f->meta_key[f->nmeta] = st_strdup(c->string);
        f->meta_val[f->nmeta] = st_strdup(c->valuestring);
        f->nmeta++;
        if (!f->meta_key[f->nmeta - 1] || !f->meta_val[f->nmeta - 1])
            return dg_err_set(e, DG_ERR_NOMEM, "%s: out of memory", f->label);
    }
    /* cJSON keeps repeated keys; a repeated key would make dg_st_meta ambiguous. */
    char **sorted = malloc((size_t)n * sizeof *sorted);
    if (!sorted) return dg_err_set(e, DG_ERR_NOMEM, "%s: out of memory", f->label);
    memcpy(sorted, f->meta_key, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_str);
    dg_status st = DG_OK;
    for (int i = 1; i < n; i++)
        if (!strcmp(sorted[i - 1], sorted[i])) {
            char s[80];
            st = st_fail(e, f->label, NULL, ST_META ": key '%s' appears twice",
                         safe_name(sorted[i], s, sizeof s));
            break;
        }
    free(sorted);
    return st;
}

/* The file's framing (len bytes at buf): the 8-byte header length (into *n), within the file and
 * the limit, and a header that starts as a JSON object, in valid UTF-8, without an escaped NUL.
 * Returns DG_OK, or the error with e filled. */
static dg_status check_frame(const unsigned char *buf, size_t len, const char *label, uint64_t *n_out, dg_err *e) {
    if (len < 8)
        return st_fail(e, label, NULL, "file is %zu bytes, too short for the 8-byte header length", len);
    const uint64_t n = rd_u64le(buf);
    if (n == 0) return st_fail(e, label, NULL, "header length is 0");
    if (n > DG_ST_MAX_HEADER)
        return st_fail(e, label, NULL, "header length %" PRIu64 " is absurdly large (limit %u)", n,
                       DG_ST_MAX_HEADER);
    if (n > len - 8)
        return st_fail(e, label, NULL, "header length %" PRIu64 " runs past the end of the file (%zu bytes)",
                       n, len);
    const unsigned char *hdr = buf + 8;
    if (hdr[0] != '{') return st_fail(e, label, NULL, "header does not start with '{'");
    size_t bad = dg_utf8_check(hdr, (size_t)n);
    if (bad < n)
        return st_fail(e, label, NULL, "header is not valid UTF-8 (byte %zu of the header)", bad);
    if (has_escaped_nul(hdr, (size_t)n))
        return st_fail(e, label, NULL, "header holds an escaped NUL (\\u0000)");
    *n_out = n;
    return DG_OK;
}

/* f's tensors (by_off: the same, to be sorted by offset; data: where their bytes begin): no name
 * twice, no two overlapping. Returns DG_OK, or the error with e filled. */
static dg_status check_tensors(dg_st_file *f, const dg_st_tensor **by_off, const unsigned char *data, const char *label,
                               dg_err *e) {
    /* cJSON keeps repeated keys; two tensors with one name are corrupt. */
    if (f->count > 1) qsort(f->by_name, (size_t)f->count, sizeof *f->by_name, cmp_name);
    for (int i = 1; i < f->count; i++)
        if (!strcmp(f->by_name[i - 1]->name, f->by_name[i]->name))
            return st_fail(e, label, f->by_name[i]->name, "appears twice in the header");

    /* Sorted by start, a tensor overlaps an earlier one iff it starts before
     * the furthest end so far. Empty tensors hold no bytes and overlap nothing. */
    if (f->count > 1) qsort(by_off, (size_t)f->count, sizeof *by_off, cmp_offset);
    const dg_st_tensor *reach = NULL;  /* the tensor ending furthest so far */
    for (int i = 0; i < f->count; i++) {
        const dg_st_tensor *t = by_off[i];
        if (t->nbytes == 0) continue;
        const unsigned char *tb = t->data;
        if (reach && tb < (const unsigned char *)reach->data + reach->nbytes) {
            size_t rb = (size_t)((const unsigned char *)reach->data - data);
            size_t b = (size_t)(tb - data);
            char s1[96], s2[96];
            return st_fail(e, label, NULL, "tensors '%s' [%zu,%zu] and '%s' [%zu,%zu] overlap",
                           safe_name(reach->name, s1, sizeof s1), rb, rb + reach->nbytes,
                           safe_name(t->name, s2, sizeof s2), b, b + t->nbytes);
        }
        if (!reach || tb + t->nbytes > (const unsigned char *)reach->data + reach->nbytes) reach = t;
    }
    return DG_OK;
}

/* Parses buf (len bytes, with a NUL at buf[len]), taking ownership of it
 * whatever happens. Returns the file or NULL with e filled. */
static dg_st_file *parse_owned(unsigned char *buf, size_t len, const char *label, dg_err *e) {
    cJSON *root = NULL;
    const dg_st_tensor **by_off = NULL;
    dg_st_file *f = calloc(1, sizeof *f);
    if (!f) { free(buf); dg_err_set(e, DG_ERR_NOMEM, "%s: out of memory", label); return NULL; }
    f->buf = buf;
    f->len = len;
    f->label = st_strdup(label);
    if (!f->label) { dg_err_set(e, DG_ERR_NOMEM, "%s: out of memory", label); goto fail; }

    uint64_t n = 0;
    if (check_frame(buf, len, label, &n, e) != DG_OK) goto fail;
    const unsigned char *hdr = buf + 8;
    const unsigned char *data = hdr + n;
    size_t data_len = len - 8 - (size_t)n;

    const char *end = NULL;
    root = cJSON_ParseWithLengthOpts((const char *)hdr, (size_t)n, &end, 0);
    if (!root) {
        size_t at = end ? (size_t)((const unsigned char *)end - hdr) : 0;
        st_fail(e, label, NULL, "header is not valid JSON (near byte %zu of the header)", at);
        goto fail;
    }
    /* The writer pads with spaces; anything else after the object is corrupt. */
    for (const unsigned char *p = (const unsigned char *)end; p < data; p++)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            st_fail(e, label, NULL, "header has bytes after the JSON object (byte %zu of the header)",
                    (size_t)(p - hdr));
            goto fail;
        }
    if (!cJSON_IsObject(root)) { st_fail(e, label, NULL, "header is not a JSON object"); goto fail; }

    int total = 0;
    const cJSON *meta = NULL;
    for (const cJSON *c = root->child; c; c = c->next) {
        if (strcmp(c->string, ST_META) != 0) { total++; continue; }
        if (meta) { st_fail(e, label, NULL, ST_META " appears twice"); goto fail; }
        meta = c;
    }
    if (meta && parse_meta(meta, f, e) != DG_OK) goto fail;

    if (total > 0) {
        f->tensors = calloc((size_t)total, sizeof *f->tensors);
        f->by_name = malloc((size_t)total * sizeof *f->by_name);
        by_off = malloc((size_t)total * sizeof *by_off);
        if (!f->tensors || !f->by_name || !by_off) {
            dg_err_set(e, DG_ERR_NOMEM, "%s: out of memory", label);
            goto fail;
        }
    }
    for (const cJSON *c = root->child; c; c = c->next) {
        if (c == meta) continue;
        dg_st_tensor *t = &f->tensors[f->count];
        if (parse_entry(c, data, data_len, t, label, e) != DG_OK) goto fail;
        t->name = st_strdup(c->string);
        if (!t->name) { dg_err_set(e, DG_ERR_NOMEM, "%s: out of memory", label); goto fail; }
        f->by_name[f->count] = by_off[f->count] = t;
        f->count++;
    }

    if (check_tensors(f, by_off, data, label, e) != DG_OK) goto fail;

    free(by_off);
    cJSON_Delete(root);
    return f;
fail:
    free(by_off);
    cJSON_Delete(root);
    dg_st_free(f);
    return NULL;
}

static void sb_reserve(st_buf *b, size_t extra) {
    if (b->oom || b->len + extra + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) { b->oom = 1; return; }
    b->p = p;
    b->cap = cap;
}

static void sb_put(st_buf *b, const char *s, size_t n) {
    sb_reserve(b, n);
    if (b->oom) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

static void sb_puts(st_buf *b, const char *s) { sb_put(b, s, strlen(s)); }

/* Appends s as a JSON string: quotes, backslashes and control bytes escaped,
 * the rest (valid UTF-8, checked on the way in) copied as it is. */
static void sb_json_str(st_buf *b, const char *s) {
    sb_put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        if (*p == '"' || *p == '\\') { esc[0] = '\\'; esc[1] = (char)*p; sb_put(b, esc, 2); }
        else if (*p < 0x20) { snprintf(esc, sizeof esc, "\\u%04x", *p); sb_put(b, esc, 6); }
        else sb_put(b, (const char *)p, 1);
    }
    sb_put(b, "\"", 1);
}

static void sb_u64(st_buf *b, uint64_t v) {
    char s[24];
    snprintf(s, sizeof s, "%" PRIu64, v);
    sb_puts(b, s);
}

/* Builds the header JSON, padded with spaces so that 8 + length is a
 * multiple of 8 (the data area then starts 8-aligned). NULL if out of memory. */
static char *build_header(const dg_st_writer *w, size_t *len) {
    st_buf b = {0};
    sb_puts(&b, "{");
    if (w->nmeta > 0) {
        sb_puts(&b, "\"" ST_META "\":{");
        for (int i = 0; i < w->nmeta; i++) {
            if (i) sb_puts(&b, ",");
            sb_json_str(&b, w->meta_key[i]);
            sb_puts(&b, ":");
            sb_json_str(&b, w->meta_val[i]);
        }
        sb_puts(&b, "}");
    }
    uint64_t off = 0;
    for (int i = 0; i < w->count; i++) {
        const st_item *it = &w->items[i];
        if (i || w->nmeta > 0) sb_puts(&b, ",");
        sb_json_str(&b, it->name);
        sb_puts(&b, ":{\"dtype\":\"");
        sb_puts(&b, DTYPE_NAME[it->dtype]);
        sb_puts(&b, "\",\"shape\":[");
        for (int k = 0; k < it->ndim; k++) {
            if (k) sb_puts(&b, ",");
            sb_u64(&b, (uint64_t)it->shape[k]);
        }
        sb_puts(&b, "],\"data_offsets\":[");
        sb_u64(&b, off);
        sb_puts(&b, ",");
        off += it->nbytes;
        sb_u64(&b, off);
        sb_puts(&b, "]}");
    }
    sb_puts(&b, "}");
    while (!b.oom && (8 + b.len) % 8 != 0) sb_puts(&b, " ");
    if (b.oom) { free(b.p); return NULL; }
    *len = b.len;
    return b.p;
}

/* ------------------------------------------------------ public functions */

const char *dg_dtype_name(dg_dtype t) {
    if ((int)t < 0 || t >= DG_DTYPE_COUNT) return "?";
    return DTYPE_NAME[t];
}

size_t dg_dtype_size(dg_dtype t) {
    if ((int)t < 0 || t >= DG_DTYPE_COUNT) return 0;
    return DTYPE_SIZE[t];
}

int dg_dtype_from_name(const char *name) {
    if (!name) return -1;
    for (int i = 0; i < DG_DTYPE_COUNT; i++)
        if (!strcmp(name, DTYPE_NAME[i])) return i;
    return -1;
}

dg_st_file *dg_st_load(const char *path, dg_err *e) {
    unsigned char *buf;
    size_t len;
    if (dg_file_read_all(path, &buf, &len, e) != DG_OK) return NULL;
    return parse_owned(buf, len, path, e);
}

dg_st_file *dg_st_parse(const void *buf, size_t len, const char *label, dg_err *e) {
    if (!label) label = "<memory>";
    if (!buf && len) { dg_err_set(e, DG_ERR_ARG, "%s: NULL buffer of %zu bytes", label, len); return NULL; }
    if (len == SIZE_MAX) { dg_err_set(e, DG_ERR_NOMEM, "%s: out of memory", label); return NULL; }
    unsigned char *copy = malloc(len + 1);
    if (!copy) { dg_err_set(e, DG_ERR_NOMEM, "%s: out of memory", label); return NULL; }
    if (len) memcpy(copy, buf, len);
    copy[len] = 0;  /* as dg_file_read_all does: a guard for the JSON parser */
    return parse_owned(copy, len, label, e);
}

void dg_st_free(dg_st_file *f) {
    if (!f) return;
    for (int i = 0; i < f->count; i++) free((char *)f->tensors[i].name);
    for (int i = 0; i < f->nmeta; i++) { free(f->meta_key[i]); free(f->meta_val[i]); }
    free(f->meta_key);
    free(f->meta_val);
    free(f->tensors);
    free(f->by_name);
    free(f->buf);
    free(f->label);
    free(f);
}

int dg_st_count(const dg_st_file *f) { return f ? f->count : 0; }

const dg_st_tensor *dg_st_get(const dg_st_file *f, int i) {
    if (!f || i < 0 || i >= f->count) return NULL;
    return &f->tensors[i];
}

const dg_st_tensor *dg_st_find(const dg_st_file *f, const char *name) {
    if (!f || !name) return NULL;
    int lo = 0, hi = f->count - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int c = strcmp(name, f->by_name[mid]->name);
        if (c == 0) return f->by_name[mid];
        if (c < 0) hi = mid - 1; else lo = mid + 1;
    }
    return NULL;
}

int dg_st_meta_count(const dg_st_file *f) { return f ? f->nmeta : 0; }

const char *dg_st_meta_key(const dg_st_file *f, int i) {
    if (!f || i < 0 || i >= f->nmeta) return NULL;
    return f->meta_key[i];
}

const char *dg_st_meta(const dg_st_file *f, const char *key) {
    if (!f || !key) return NULL;
    for (int i = 0; i < f->nmeta; i++)
        if (!strcmp(f->meta_key[i], key)) return f->meta_val[i];
    return NULL;
}

dg_status dg_st_read(const dg_st_file *f, const char *name, dg_dtype dtype, int ndim,
                     const int64_t *shape, void *out, dg_err *e) {
    if (!f || !name || !out || (ndim > 0 && !shape))
        return dg_err_set(e, DG_ERR_ARG, "dg_st_read: NULL argument");
    char nm[96], want[160], got[160];
    safe_name(name, nm, sizeof nm);
    if (ndim < 0 || ndim > DG_ST_MAX_DIMS)
        return dg_err_set(e, DG_ERR_ARG, "%s: tensor '%s': asked for %d dims (at most %d)",
                          f->label, nm, ndim, DG_ST_MAX_DIMS);
    if ((int)dtype < 0 || dtype >= DG_DTYPE_COUNT)
        return dg_err_set(e, DG_ERR_ARG, "%s: tensor '%s': invalid dtype %d", f->label, nm, (int)dtype);
    const dg_st_tensor *t = dg_st_find(f, name);
    if (!t) return dg_err_set(e, DG_ERR_NOT_FOUND, "%s: no tensor '%s'", f->label, nm);
    if (t->dtype != dtype)
        return dg_err_set(e, DG_ERR_FORMAT, "%s: tensor '%s': expected dtype %s, found %s",
                          f->label, nm, DTYPE_NAME[dtype], DTYPE_NAME[t->dtype]);
    int same = t->ndim == ndim;
    for (int i = 0; same && i < ndim; i++) same = t->shape[i] == shape[i];
    if (!same) {
        fmt_shape(want, sizeof want, ndim, shape);
        fmt_shape(got, sizeof got, t->ndim, t->shape);
        return dg_err_set(e, DG_ERR_SHAPE, "%s: tensor '%s': expected shape %s, found %s",
                          f->label, nm, want, got);
    }
    copy_le(out, t->data, t->nbytes, DTYPE_SIZE[dtype]);
    return DG_OK;
}

dg_status dg_st_read_f32(const dg_st_file *f, const char *name, int ndim, const int64_t *shape,
                         float *out, dg_err *e) {
    return dg_st_read(f, name, DG_DTYPE_F32, ndim, shape, out, e);
}

dg_status dg_st_read_as(const dg_st_file *f, const char *name, dg_dtype dtype, int ndim, const int64_t *shape,
                        void *out, dg_err *e) {
    const dg_st_tensor *t = name ? dg_st_find(f, name) : NULL;
    const dg_dtype other = dtype == DG_DTYPE_F32 ? DG_DTYPE_F64 : DG_DTYPE_F32;
    if (!t || (dtype != DG_DTYPE_F32 && dtype != DG_DTYPE_F64) || t->dtype != other)
        return dg_st_read(f, name, dtype, ndim, shape, out, e);
    int64_t n = 1;  /* the other width: through a buffer of its own, then converted */
    for (int d = 0; d < ndim; d++) n *= shape[d] > 0 ? shape[d] : 0;
    void *tmp = malloc((size_t)(n ? n : 1) * (other == DG_DTYPE_F64 ? sizeof(double) : sizeof(float)));
    if (!tmp) return dg_err_set(e, DG_ERR_NOMEM, "%s: tensor '%s': out of memory", f->label, name);
    dg_status st = dg_st_read(f, name, other, ndim, shape, tmp, e);
    for (int64_t i = 0; st == DG_OK && i < n; i++) {
        if (dtype == DG_DTYPE_F64) ((double *)out)[i] = (double)((const float *)tmp)[i];
        else ((float *)out)[i] = (float)((const double *)tmp)[i];
    }
    free(tmp);
    return st;
}

dg_st_writer *dg_st_writer_create(void) { return calloc(1, sizeof(dg_st_writer)); }

/* dg_st_writer_add, or (layout) the tensor's name, type and shape only. */
static dg_status add_item(dg_st_writer *w, const char *name, dg_dtype dtype, int ndim, const int64_t *shape,
                          const void *data, int layout, dg_err *e) {
    if (!w || !name) return dg_err_set(e, DG_ERR_ARG, "safetensors writer: NULL argument");
    char nm[96];
    size_t nlen = strlen(name);
    if (nlen == 0) return dg_err_set(e, DG_ERR_ARG, "safetensors writer: empty tensor name");
    if (dg_utf8_check((const unsigned char *)name, nlen) < nlen)
        return dg_err_set(e, DG_ERR_ARG, "safetensors writer: tensor name '%s' is not valid UTF-8",
                          safe_name(name, nm, sizeof nm));
    safe_name(name, nm, sizeof nm);
    if (!strcmp(name, ST_META))
        return dg_err_set(e, DG_ERR_ARG, "safetensors writer: '" ST_META "' is not a tensor name");
    for (int i = 0; i < w->count; i++)
        if (!strcmp(w->items[i].name, name))
            return dg_err_set(e, DG_ERR_ARG, "safetensors writer: tensor '%s' added twice", nm);
    if ((int)dtype < 0 || dtype >= DG_DTYPE_COUNT)
        return dg_err_set(e, DG_ERR_ARG, "safetensors writer: tensor '%s': invalid dtype %d", nm,
                          (int)dtype);
    if (ndim < 0 || ndim > DG_ST_MAX_DIMS || (ndim > 0 && !shape))
        return dg_err_set(e, DG_ERR_ARG, "safetensors writer: tensor '%s': %d dims (0..%d allowed)",
                          nm, ndim, DG_ST_MAX_DIMS);
    for (int k = 0; k < ndim; k++)
        if (shape[k] < 0 || (uint64_t)shape[k] > ST_MAX_INT)
            return dg_err_set(e, DG_ERR_ARG,
                              "safetensors writer: tensor '%s': dim %d is %" PRId64, nm, k, shape[k]);
    uint64_t numel, nbytes;
    if (!shape_size(ndim, shape, DTYPE_SIZE[dtype], &numel, &nbytes) || nbytes > ST_MAX_INT)
        return dg_err_set(e, DG_ERR_ARG, "safetensors writer: tensor '%s': shape too large", nm);
    if (nbytes > 0 && !data && !layout)
        return dg_err_set(e, DG_ERR_ARG, "safetensors writer: tensor '%s': NULL data", nm);

    if (w->count == w->cap) {
        int cap = w->cap ? 2 * w->cap : 16;
        st_item *items = realloc(w->items, (size_t)cap * sizeof *items);
        if (!items) return dg_err_set(e, DG_ERR_NOMEM, "safetensors writer: out of memory");
        w->items = items;
        w->cap = cap;
    }
    st_item it = {0};
    it.name = st_strdup(name);
    it.data = layout ? NULL : malloc(nbytes ? (size_t)nbytes : 1);
    if (!it.name || (!layout && !it.data)) {
        free(it.name);
        free(it.data);
        return dg_err_set(e, DG_ERR_NOMEM, "safetensors writer: tensor '%s': out of memory (%" PRIu64
                          " bytes)", nm, nbytes);
    }
    it.dtype = dtype;
    it.ndim = ndim;
    for (int k = 0; k < ndim; k++) it.shape[k] = shape[k];
    it.nbytes = (size_t)nbytes;
    if (!layout) copy_le(it.data, data, it.nbytes, DTYPE_SIZE[dtype]);
    w->items[w->count++] = it;
    return DG_OK;
}

dg_status dg_st_writer_add(dg_st_writer *w, const char *name, dg_dtype dtype, int ndim,
                           const int64_t *shape, const void *data, dg_err *e) {
    return add_item(w, name, dtype, ndim, shape, data, 0, e);
}

dg_status dg_st_writer_add_layout(dg_st_writer *w, const char *name, dg_dtype dtype, int ndim,
                                  const int64_t *shape, dg_err *e) {
    return add_item(w, name, dtype, ndim, shape, NULL, 1, e);
}

dg_status dg_st_writer_header(const dg_st_writer *w, unsigned char **head, size_t *len, dg_err *e) {
    if (!w || !head || !len) return dg_err_set(e, DG_ERR_ARG, "safetensors writer: NULL argument");
    size_t hlen;
    char *hdr = build_header(w, &hlen);
    unsigned char *b = hdr ? malloc(8 + hlen) : NULL;
    if (!b) {
        free(hdr);
        return dg_err_set(e, DG_ERR_NOMEM, "safetensors writer: out of memory building the header");
    }
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)((uint64_t)hlen >> (8 * i));
    memcpy(b + 8, hdr, hlen);
    free(hdr);
    *head = b;
    *len = 8 + hlen;
    return DG_OK;
}

dg_status dg_st_writer_meta(dg_st_writer *w, const char *key, const char *value, dg_err *e) {
    if (!w || !key || !value) return dg_err_set(e, DG_ERR_ARG, "safetensors writer: NULL argument");
    char nm[96];
    size_t kl = strlen(key), vl = strlen(value);
    if (dg_utf8_check((const unsigned char *)key, kl) < kl)
        return dg_err_set(e, DG_ERR_ARG, "safetensors writer: metadata key '%s' is not valid UTF-8",
                          safe_name(key, nm, sizeof nm));
    if (dg_utf8_check((const unsigned char *)value, vl) < vl)
        return dg_err_set(e, DG_ERR_ARG,
                          "safetensors writer: metadata value for '%s' is not valid UTF-8",
                          safe_name(key, nm, sizeof nm));
    char *v = st_strdup(value);
    if (!v) return dg_err_set(e, DG_ERR_NOMEM, "safetensors writer: out of memory");
    for (int i = 0; i < w->nmeta; i++)
        if (!strcmp(w->meta_key[i], key)) {
            free(w->meta_val[i]);
            w->meta_val[i] = v;
            return DG_OK;
        }
    if (w->nmeta == w->meta_cap) {
        int cap = w->meta_cap ? 2 * w->meta_cap : 8;
        char **k2 = realloc(w->meta_key, (size_t)cap * sizeof *k2);
        if (k2) w->meta_key = k2;
        char **v2 = k2 ? realloc(w->meta_val, (size_t)cap * sizeof *v2) : NULL;
        if (v2) w->meta_val = v2;
        if (!k2 || !v2) { free(v); return dg_err_set(e, DG_ERR_NOMEM, "safetensors writer: out of memory"); }
        w->meta_cap = cap;
    }
    char *k = st_strdup(key);
    if (!k) { free(v); return dg_err_set(e, DG_ERR_NOMEM, "safetensors writer: out of memory"); }
    w->meta_key[w->nmeta] = k;
    w->meta_val[w->nmeta] = v;
    w->nmeta++;
    return DG_OK;
}

dg_status dg_st_writer_write(const dg_st_writer *w, const char *path, dg_err *e) {
    if (!w || !path) return dg_err_set(e, DG_ERR_ARG, "safetensors writer: NULL argument");
    for (int i = 0; i < w->count; i++)
        if (!w->items[i].data)
            return dg_err_set(e, DG_ERR_ARG, "%s: tensor '%s' has a layout but no data (dg_st_writer_add_layout: "
                              "its bytes are the caller's to write)", path, w->items[i].name);
    size_t hlen;
    char *hdr = build_header(w, &hlen);
    if (!hdr) return dg_err_set(e, DG_ERR_NOMEM, "%s: out of memory building the header", path);

    dg_file fl;
    dg_status st = dg_file_begin(&fl, path, e);
    if (st != DG_OK) goto done;
    unsigned char len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (unsigned char)((uint64_t)hlen >> (8 * i));
    int ok = fwrite(len8, 1, 8, fl.fp) == 8 && fwrite(hdr, 1, hlen, fl.fp) == hlen;
    for (int i = 0; ok && i < w->count; i++) {
        const st_item *it = &w->items[i];
        ok = it->nbytes == 0 || fwrite(it->data, 1, it->nbytes, fl.fp) == it->nbytes;
    }
    if (!ok) {
        int err = errno;
        dg_file_abort(&fl);
        st = dg_err_set(e, DG_ERR_IO, "%s: write failed: %s", path, strerror(err));
        goto done;
    }
    st = dg_file_commit(&fl, e);
done:
    free(hdr);
    return st;
}

void dg_st_writer_free(dg_st_writer *w) {
    if (!w) return;
    for (int i = 0; i < w->count; i++) { free(w->items[i].name); free(w->items[i].data); }
    for (int i = 0; i < w->nmeta; i++) { free(w->meta_key[i]); free(w->meta_val[i]); }
    free(w->items);
    free(w->meta_key);
    free(w->meta_val);
    free(w);
}
