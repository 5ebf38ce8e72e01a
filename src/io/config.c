/* YAML configs on libyaml's document API: one pass over the events refuses what a config may not
 * hold, yaml_parser_load builds the tree, getters read it and remember what they read, dg_cfg_set
 * edits it, and yaml_emitter_dump writes a copy of it back. */
#define _POSIX_C_SOURCE 200809L
#include "difgames/config.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "difgames/base.h"  /* dg_parse_long, dg_parse_double */
#include "difgames/fileio.h"
#include "base/text.h"  /* dg_utf8_check, dg_text_append */

/* ------------------------------------------------------------------ types */

#if defined(__GNUC__)
#define PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF(f, a)
#endif

enum {
    F_USED     = 1u << 0,  /* a getter read this node: it and its subtree are known */
    F_VISITED  = 1u << 1,  /* a getter's path went through this map or list         */
    F_OVERRIDE = 1u << 2,  /* made by dg_cfg_set, not read from the file            */
};

/* What a config knows of a node beyond libyaml's: one per node of the document, at id - 1. Lines
 * fit an int: a file has at most DG_CFG_MAX_BYTES. */
typedef struct meta {
    unsigned flags;  /* F_*                                                                    */
    int      line;   /* 1-based; a map value carries its key's position; 0: none or command line */
    int      col;
} meta;

#define ROOT      1          /* the document's first node: the top-level map        */
#define MAX_ASKED 256        /* missing keys remembered for "did you mean"          */
#define PATH_CAP  512        /* longest key path shown in a message                 */
#define MAX_NODES (1 << 20)  /* values one parse may hold: bounds the tree's memory */
#define CMDLINE   "command line"

struct dg_cfg {
    char           *label;             /* file path or caller's label                    */
    yaml_document_t doc;               /* node ROOT is always a map                      */
    meta           *m;                 /* (n_m) per node                                 */
    size_t          n_m;
    char           *asked[MAX_ASKED];  /* paths a getter asked for and did not find      */
    int             n_asked;
};

/* One step of a key path: a name ("env") or an index ("[2]", or a name of digits). */
typedef struct step {
    const char *start;   /* where the step begins in the path (its '.' or '[') */
    const char *name;
    size_t      nlen;
    int         index;   /* written [i]                                        */
    int         numeric; /* the name is all digits (usable as a list index)    */
    size_t      idx;
} step;

/* Reads one YAML text: a file's, or the value of a dg_cfg_set (override). */
typedef struct parser {
    const char          *label;     /* file mode: the name in "FILE:LINE"               */
    const unsigned char *text;
    size_t               len;
    const char          *key;       /* override mode: the key being set (no lines)      */
    char                 path[PATH_CAP]; /* path of the node being checked, for messages */
    size_t               plen;
    dg_err              *e;
} parser;

/* ------------------------------------------------------- internal helpers */

static yaml_node_t *node(const dg_cfg *c, int id) {
    return yaml_document_get_node((yaml_document_t *)&c->doc, id);
}

static size_t n_kids(const yaml_node_t *n) {  /* entries of a map, items of a list */
    return n->type == YAML_MAPPING_NODE ? (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start)
         : n->type == YAML_SEQUENCE_NODE ? (size_t)(n->data.sequence.items.top - n->data.sequence.items.start) : 0;
}

/* The slot of entry i's value (map) or item i (list): an id, re-read after adding nodes (they move). */
static int *kid(const yaml_node_t *n, size_t i) {
    return n->type == YAML_MAPPING_NODE ? &n->data.mapping.pairs.start[i].value : &n->data.sequence.items.start[i];
}

static int key_at(const yaml_node_t *n, size_t i) { return n->data.mapping.pairs.start[i].key; }

static const char *text_of(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

static int quoted(const yaml_node_t *n) {  /* quoted or block scalar: a string, never a number */
    return n->type == YAML_SCALAR_NODE && n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
}

/* 1 for a plain scalar that YAML reads as null: "", "~", "null". */
static int is_null(const yaml_node_t *n) {
    if (n->type != YAML_SCALAR_NODE || quoted(n)) return 0;
    const char *s = text_of(n);
    return strlen(s) == n->data.scalar.length &&
           (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL"));
}

/* Index of key name in map node n, or -1. */
static long map_index(const dg_cfg *c, const yaml_node_t *n, const char *name, size_t nlen) {
    for (size_t i = 0; i < n_kids(n); i++) {
        const yaml_node_t *k = node(c, key_at(n, i));
        if (k->data.scalar.length == nlen && !memcmp(k->data.scalar.value, name, nlen)) return (long)i;
    }
    return -1;
}

/* Describes what a node holds, for "got ...": "'abc'", "the quoted string \"5\"", "a list", "nothing". */
static void describe(const yaml_node_t *n, char *buf, size_t cap) {
    char t[64];
    size_t p = 0;
    if (!n || is_null(n)) snprintf(buf, cap, "nothing");
    else if (n->type != YAML_SCALAR_NODE) snprintf(buf, cap, "%s", n->type == YAML_MAPPING_NODE ? "a map" : "a list");
    else {
        dg_text_append(t, sizeof t, &p, text_of(n), n->data.scalar.length);
        snprintf(buf, cap, quoted(n) ? "the quoted string \"%s\"" : "'%s'", t);
    }
}

/* Sets e to "WHERE: <fmt>", WHERE being node id's "FILE:LINE", "command line", or "FILE" (id 0). */
PRINTF(5, 6) static dg_status node_err(const dg_cfg *c, int id, dg_status st, dg_err *e, const char *fmt, ...) {
    char body[DG_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    const meta *m = id ? &c->m[id - 1] : NULL;
    if (m && (m->flags & F_OVERRIDE)) return dg_err_set(e, st, CMDLINE ": %s", body);
    if (m && m->line > 0) return dg_err_set(e, st, "%.400s:%d: %s", c->label, m->line, body);
    return dg_err_set(e, st, "%.400s: %s", c->label, body);
}

/* Reads the next step of a path (first: at its start). Returns 1 for a step, 0 at the end, -1 when
 * malformed. */
static int next_step(const char **pp, int first, step *s) {
    const char *p = *pp;
    memset(s, 0, sizeof *s);
    s->start = p;
    if (*p == 0) return 0;
    if (*p == '[') s->index = 1;
    if ((s->index && first) || (!s->index && !first && *p != '.')) return -1;  /* the top level is a map */
    s->name = p += !first || s->index;
    p += strcspn(p, ".[]");
    s->nlen = (size_t)(p - s->name);
    long v = 0;  /* digits alone, not too large: usable as a list index */
    s->numeric = strspn(s->name, "0123456789") == s->nlen && dg_parse_long(s->name, s->nlen, 10, &v);
    s->idx = (size_t)v;
    if (s->nlen == 0 || (s->index && (!s->numeric || *p++ != ']'))) return -1;
    *pp = p;
    return 1;
}

/* Number of steps in path ("" has none), or -1 when malformed. */
static int path_steps(const char *path) {
    step s;
    int n = 0, r;
    for (const char *p = path; (r = next_step(&p, n == 0, &s)) == 1 && n < INT_MAX;) n++;
    return r != 0 ? -1 : n;
}

/* Finds the node at path. Returns DG_OK with *out 0 when a key on the way is missing (*deepest:
 * the last node found), or an error when the path is malformed or runs into a scalar. An empty
 * ("env:") value reads as an empty map. Marks the maps and lists passed through when mark. */
static dg_status walk(dg_cfg *c, const char *path, int mark, int *out, int *deepest, dg_err *e) {
    int cur = ROOT;
    *out = 0;
    if (deepest) *deepest = cur;
    if (!path || path_steps(path) < 0)
        return dg_err_set(e, DG_ERR_ARG, "%.400s: invalid config key '%.64s'", c->label, path ? path : "(null)");
    step s;
    for (const char *p = path; next_step(&p, p == path, &s) == 1;) {
        const yaml_node_t *n = node(c, cur);
        int map = n->type == YAML_MAPPING_NODE, seq = n->type == YAML_SEQUENCE_NODE, child = 0;
        if ((map && s.index) || (seq && !s.numeric) || (!map && !seq && !is_null(n))) {  /* "expected a list, ..." */
            char got[96];
            describe(n, got, sizeof got);
            return node_err(c, cur, DG_ERR_CONFIG, e, "key '%.*s': expected a %s, got %s", (int)(s.start - path), path,
                            s.index ? "list" : "map", got);
        }
        long i = map ? map_index(c, n, s.name, s.nlen) : seq && s.idx < n_kids(n) ? (long)s.idx : -1;
        if (i >= 0) child = *kid(n, (size_t)i);
        if (mark) c->m[cur - 1].flags |= F_VISITED;
        if (!child) return DG_OK;
        cur = child;
        if (deepest) *deepest = cur;
    }
    *out = cur;
    return DG_OK;
}

/* The node a getter reads: marks it used; *out 0 when missing (remembered for "did you mean"
 * hints; an error when req). */
static dg_status find(dg_cfg *c, const char *path, int req, int *out, dg_err *e) {
    int deep = 0;
    *out = 0;
    if (!c) return dg_err_set(e, DG_ERR_ARG, "config is NULL");
    dg_status st = walk(c, path, 1, out, &deep, e);
    if (st != DG_OK) return st;
    if (*out) {
        c->m[*out - 1].flags |= F_USED;
        return DG_OK;
    }
    int known = 0;
    for (int i = 0; i < c->n_asked && !known; i++) known = !strcmp(c->asked[i], path);
    if (!known && c->n_asked < MAX_ASKED && (c->asked[c->n_asked] = strdup(path))) c->n_asked++;  /* else: no hint */
    return req ? node_err(c, deep, DG_ERR_CONFIG, e, "missing required key '%.200s'", path) : DG_OK;
}

/* The node at path without marking it, or 0 (missing, or the path is bad). */
static int look(dg_cfg *c, const char *path) {
    int id = 0;
    return c && walk(c, path, 0, &id, NULL, NULL) == DG_OK ? id : 0;
}

/* Sets e to "WHERE: key 'path': expected <what>, got <node>". */
static dg_status type_err(const dg_cfg *c, int id, const char *path, const char *what, dg_err *e) {
    char got[96];
    describe(node(c, id), got, sizeof got);
    return node_err(c, id, DG_ERR_CONFIG, e, "key '%.200s': expected %s, got %s", path, what, got);
}

/* 1 if s reads as an infinity or NaN (".inf", "-.Inf", ".nan", "inf", "NaN", "infinity"), or as a
 * decimal number beyond a double's range ("1e999"). */
static int nonfinite_text(const char *s, size_t n) {
    size_t i = (n > 0 && (s[0] == '+' || s[0] == '-'));
    i += (i < n && s[i] == '.');
    return (n - i == 3 && (!strncasecmp(s + i, "inf", 3) || !strncasecmp(s + i, "nan", 3))) ||
           (n - i == 8 && !strncasecmp(s + i, "infinity", 8)) ||
           (n > 0 && strspn(s, "0123456789+-.eE") == n && isinf(strtod(s, NULL)));
}

/* Converts node id to type t into out (written only on success); errors show path as given.
 * Numbers are plain decimal text ("0x10", "1_000" and ".inf" are not); quoted scalars are strings. */
static dg_status conv(const dg_cfg *c, int id, const char *path, dg_cfg_type t, void *out, dg_err *e) {
    static const char *const bools[] = {"false", "False", "FALSE", "no",  "No",  "NO",  "off", "Off", "OFF",
                                        "true",  "True",  "TRUE",  "yes", "Yes", "YES", "on",  "On",  "ON"};
    static const char *const what[] = {"a number", "a number", "an integer", "true or false", "a string"};
    const yaml_node_t *n = node(c, id);
    const char *s = n->type == YAML_SCALAR_NODE && !is_null(n) ? text_of(n) : NULL;
    size_t len = s ? n->data.scalar.length : 0, sign = s && (*s == '+' || *s == '-');
    long l;
    double d;
    if ((unsigned)t > DG_CFG_STR) return dg_err_set(e, DG_ERR_ARG, "config: unknown type %d", (int)t);
    if (!s || (t != DG_CFG_STR && quoted(n))) return type_err(c, id, path, what[t], e);
    if (strlen(s) != len)
        return node_err(c, id, DG_ERR_CONFIG, e, "key '%.200s': expected %s without NUL characters", path, what[t]);
    switch (t) {
    case DG_CFG_STR: *(const char **)out = s; return DG_OK;
    case DG_CFG_BOOL:
        for (size_t k = 0; k < sizeof bools / sizeof bools[0]; k++)
            if (!strcmp(s, bools[k])) { *(int *)out = k >= 9; return DG_OK; }
        return type_err(c, id, path, what[t], e);
    case DG_CFG_INT:
        if (len == sign || strspn(s + sign, "0123456789") != len - sign)
            return type_err(c, id, path, what[t], e);
        if (!dg_parse_long(s, len, 10, &l) || l < INT_MIN || l > INT_MAX)  /* s: digits and a sign */
            return node_err(c, id, DG_ERR_CONFIG, e, "key '%.200s': '%.60s' is out of the integer range [%d, %d]",
                            path, s, INT_MIN, INT_MAX);
        *(int *)out = (int)l;
        return DG_OK;
    default:
        if (!dg_parse_double(s, len, &d))
            return type_err(c, id, path, nonfinite_text(s, len) ? "a finite number" : what[t], e);
        if (t == DG_CFG_F64) { *(double *)out = d; return DG_OK; }
        if (fabs(d) > FLT_MAX) return type_err(c, id, path, "a finite number within the 32-bit float range", e);
        *(float *)out = (float)d;
        return DG_OK;
    }
}

/* Reads list id into out (nothing written unless every item is valid; out NULL: check only): items
 * of type t or, cols > 0, rows of cols items. *count (if not NULL) gets the length. */
static dg_status read_list(dg_cfg *c, int id, const char *path, dg_cfg_type t, int cols, void *out, int min_n,
                           int max_n, int *count, dg_err *e) {
    const yaml_node_t *n = node(c, id);
    const char *noun = t == DG_CFG_INT ? "integer" : "number";
    size_t size = t == DG_CFG_F64 ? sizeof(double) : t == DG_CFG_F32 ? sizeof(float) : sizeof(int);
    char what[64];
    if (cols) snprintf(what, sizeof what, "a list of rows of %d %ss", cols, noun);
    else snprintf(what, sizeof what, "a list of %ss", noun);
    if (n->type != YAML_SEQUENCE_NODE) return type_err(c, id, path, what, e);
    size_t cnt = n_kids(n);
    if (cnt < (size_t)min_n || cnt > (size_t)max_n) {  /* "expected 2 integers", "at most 4 rows", "1 to 3 ..." */
        if (min_n == max_n) snprintf(what, sizeof what, "%d", min_n);
        else if (min_n == 0) snprintf(what, sizeof what, "at most %d", max_n);
        else snprintf(what, sizeof what, "%d to %d", min_n, max_n);
        return node_err(c, id, DG_ERR_CONFIG, e, "key '%.200s': expected %s %s%s, got %zu", path, what,
                        cols ? "row" : noun, (min_n == max_n || min_n == 0) && max_n == 1 ? "" : "s", cnt);
    }
    dg_status st = DG_OK;
    for (int pass = 0; st == DG_OK && pass < (out ? 2 : 1); pass++) {  /* check all, then write */
        for (size_t i = 0; st == DG_OK && i < cnt; i++) {
            char ipath[PATH_CAP];
            double scratch;
            void *dst = pass ? (char *)out + i * (size_t)(cols ? cols : 1) * size : (void *)&scratch;
            snprintf(ipath, sizeof ipath, "%.200s[%zu]", path, i);
            st = cols ? read_list(c, *kid(n, i), ipath, t, 0, pass ? dst : NULL, cols, cols, NULL, e)
                      : conv(c, *kid(n, i), ipath, t, dst, e);
        }
    }
    if (st == DG_OK && count) *count = (int)cnt;
    return st;
}

/* Edit distance between two byte strings of at most 64 bytes (INT_MAX when longer). */
static int edit_distance(const char *a, size_t na, const char *b, size_t nb) {
    int row[65];
    if (na > 64 || nb > 64) return INT_MAX;
    for (size_t j = 0; j <= nb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= na; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= nb; j++) {
            int best = diag + (a[i - 1] != b[j - 1]), del = (row[j] < row[j - 1] ? row[j] : row[j - 1]) + 1;
            diag = row[j];
            row[j] = best < del ? best : del;
        }
    }
    return row[nb];
}

/* The word text most likely misspells (config.h): the first of the least edit distance within the
 * bound for its length; its index, or -1. */
int dg_cfg_nearest(const char *text, size_t len, const char *const *words, int n) {
    int best = -1, best_d = INT_MAX;
    for (int i = 0; i < n; i++) {
        const size_t wl = strlen(words[i]);
        const int d = edit_distance(words[i], wl, text, len);
        if (d <= (wl < 4 ? 1 : wl < 8 ? 2 : 3) && d < best_d) { best = i; best_d = d; }
    }
    return best;
}

/* A missing key the program asked for that looks like a typo of key under parent, or NULL. */
static const char *suggest(const dg_cfg *c, const char *parent, size_t plen, const char *key, size_t klen) {
    const char *last[MAX_ASKED];  /* the asked keys under parent: their last names */
    int from[MAX_ASKED], n = 0;
    for (int i = 0; i < c->n_asked; i++) {
        const char *a = c->asked[i], *dot = strrchr(a, '.');
        const size_t alen = dot ? (size_t)(dot - a) : 0;
        if (alen != plen || memcmp(a, parent, plen) != 0 || strchr(dot ? dot + 1 : a, '[')) continue;
        last[n] = dot ? dot + 1 : a;
        from[n++] = i;
    }
    const int k = dg_cfg_nearest(key, klen, last, n);
    return k < 0 ? NULL : c->asked[from[k]];
}

/* Appends ".key" (key: its node) or "[i]" (key NULL) to the path in buf at *pos, for messages. */
static void path_push(char *buf, size_t *pos, const yaml_node_t *key, size_t i) {
    char ix[32];
    if (!key) snprintf(ix, sizeof ix, "[%zu]", i);
    if (key && *pos > 0) dg_text_append(buf, PATH_CAP, pos, ".", 1);
    dg_text_append(buf, PATH_CAP, pos, key ? text_of(key) : ix, key ? key->data.scalar.length : strlen(ix));
}

/* Finds the first unread entry under node id (which was visited, not used), in file order. */
static dg_status unused_in(const dg_cfg *c, int id, char *path, size_t plen, dg_err *e) {
    const yaml_node_t *n = node(c, id);
    int is_map = n->type == YAML_MAPPING_NODE;
    for (size_t i = 0; i < n_kids(n); i++) {
        int k = is_map ? key_at(n, i) : 0, v = *kid(n, i);
        const yaml_node_t *kn = k ? node(c, k) : NULL;
        size_t p = plen;
        path_push(path, &p, kn, i);
        unsigned fl = c->m[v - 1].flags;
        if (!(fl & (F_USED | F_VISITED))) {
            if (!is_map) return node_err(c, v, DG_ERR_CONFIG, e, "unused list item '%s'", path);
            const char *hint = suggest(c, path, plen, text_of(kn), kn->data.scalar.length);
            if (hint) return node_err(c, k, DG_ERR_CONFIG, e, "unknown key '%s' (did you mean '%.200s'?)", path, hint);
            return node_err(c, k, DG_ERR_CONFIG, e, "unknown key '%s'", path);
        }
        dg_status st = fl & F_USED ? DG_OK : unused_in(c, v, path, p, e);
        if (st != DG_OK) return st;
        path[plen] = 0;
    }
    return DG_OK;
}

/* Grows the per-node data to the document's size; new nodes come from dg_cfg_set. 0: out of memory. */
static int meta_sync(dg_cfg *c) {
    size_t n = (size_t)(c->doc.nodes.top - c->doc.nodes.start);
    if (n <= c->n_m) return 1;
    meta *m = realloc(c->m, n * sizeof *m);
    if (!m) return 0;
    for (size_t i = c->n_m; i < n; i++) m[i] = (meta){F_OVERRIDE, 0, 0};
    c->m = m;
    c->n_m = n;
    return 1;
}

/* Copies node id of src into dst as a tree (libyaml would anchor a node met twice): quoted scalars
 * single-quoted (libyaml turns to double quotes when it must) so "5" stays a string, nulls "null"
 * (an empty plain scalar in a flow list reads back as ''). Returns the new id, 0: out of memory. */
static int copy_node(yaml_document_t *dst, yaml_document_t *src, int id, int is_key) {
    const yaml_node_t *n = yaml_document_get_node(src, id);
    if (n->type == YAML_SCALAR_NODE && !is_key && is_null(n))
        return yaml_document_add_scalar(dst, NULL, (const yaml_char_t *)"null", 4, YAML_PLAIN_SCALAR_STYLE);
    if (n->type == YAML_SCALAR_NODE)  /* lengths fit an int: a file has at most DG_CFG_MAX_BYTES */
        return yaml_document_add_scalar(dst, NULL, n->data.scalar.value, (int)n->data.scalar.length,
                                        quoted(n) ? YAML_SINGLE_QUOTED_SCALAR_STYLE : YAML_PLAIN_SCALAR_STYLE);
    int is_map = n->type == YAML_MAPPING_NODE;
    int to = is_map ? yaml_document_add_mapping(dst, NULL, n->data.mapping.style)
                    : yaml_document_add_sequence(dst, NULL, n->data.sequence.style);
    for (size_t i = 0; to && i < n_kids(n); i++) {
        int k = is_map ? copy_node(dst, src, key_at(n, i), 1) : 0;
        int v = k || !is_map ? copy_node(dst, src, *kid(n, i), 0) : 0;
        if (!v || !(is_map ? yaml_document_append_mapping_pair(dst, to, k, v)
                           : yaml_document_append_sequence_item(dst, to, v)))
            to = 0;
    }
    return to;
}

/* ----------------------------------------------------------- the parser */

/* Sets e to "FILE:LINE: <fmt>" (file) or "command line: key 'K': <fmt>" (a dg_cfg_set value). */
PRINTF(4, 5) static dg_status perr(parser *p, dg_status st, int line, const char *fmt, ...) {
    char body[DG_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    if (p->key) return dg_err_set(p->e, st, CMDLINE ": key '%.200s': %s", p->key, body);
    if (line > 0) return dg_err_set(p->e, st, "%.400s:%d: %s", p->label, line, body);
    return dg_err_set(p->e, st, "%.400s: %s", p->label, body);
}

/* Turns libyaml's error state into "FILE:LINE: problem (context at line N)". */
static dg_status syntax_error(parser *p, const yaml_parser_t *y) {
    if (y->error == YAML_MEMORY_ERROR) return perr(p, DG_ERR_NOMEM, 0, "out of memory while reading YAML");
    char extra[160] = "";
    size_t line0 = y->problem_mark.line, i = 0;
    if (y->error == YAML_READER_ERROR) {  /* encoding errors carry a byte offset, not a mark */
        line0 = 0;
        for (size_t k = 0; k < y->problem_offset && k < p->len; k++) line0 += p->text[k] == '\n';
        if (y->problem_value >= 0) snprintf(extra, sizeof extra, " (byte 0x%02X)", (unsigned)y->problem_value);
    } else if (y->context) {
        int cline = (int)y->context_mark.line + 1;
        snprintf(extra, sizeof extra, !p->key && cline != (int)line0 + 1 ? " (%.100s at line %d)" : " (%.100s)",
                 y->context, cline);
    }
    if (y->error == YAML_SCANNER_ERROR) {  /* a tab in the problem line's indentation */
        for (size_t l = 0; l < line0 && i < p->len; i++) l += p->text[i] == '\n';
        while (i < p->len && p->text[i] == ' ') i++;
        if (i < p->len && p->text[i] == '\t')
            snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "; YAML indents with spaces, not tabs");
    }
    return perr(p, DG_ERR_CONFIG, (int)line0 + 1, "%s%s", y->problem ? y->problem : "invalid YAML", extra);
}

/* Starts a libyaml parser on p's text. Returns 0 when out of memory. */
static int yaml_open(yaml_parser_t *y, const parser *p) {
    if (!yaml_parser_initialize(y)) return 0;
    yaml_parser_set_input_string(y, p->text ? p->text : (const unsigned char *)"", p->text ? p->len : 0);
    yaml_parser_set_encoding(y, YAML_UTF8_ENCODING);
    return 1;
}

/* The first pass, over libyaml's events: refuses syntax errors, aliases (which yaml_parser_load
 * would resolve into shared, even cyclic, nodes), anchors, tags, nesting deeper than
 * DG_CFG_MAX_DEPTH (the root at depth), more than MAX_NODES values and a second document. It stops
 * at the first, so junk costs no more than a few events' memory. */
static dg_status scan(parser *p, int depth) {
    yaml_parser_t y;
    int open = 0, docs = 0, done = 0;
    size_t nodes = 0;
    if (!yaml_open(&y, p)) return perr(p, DG_ERR_NOMEM, 0, "out of memory while reading YAML");
    dg_status st = DG_OK;
    while (st == DG_OK && !done) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&y, &ev)) { st = syntax_error(p, &y); break; }
        yaml_event_type_t t = ev.type;
        int line = p->key ? 0 : (int)ev.start_mark.line + 1;
        int coll = t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT;
        const yaml_char_t *anchor = NULL, *tag = NULL;
        if (t == YAML_ALIAS_EVENT) anchor = ev.data.alias.anchor;
        if (t == YAML_SCALAR_EVENT) anchor = ev.data.scalar.anchor, tag = ev.data.scalar.tag;
        if (t == YAML_SEQUENCE_START_EVENT) anchor = ev.data.sequence_start.anchor, tag = ev.data.sequence_start.tag;
        if (t == YAML_MAPPING_START_EVENT) anchor = ev.data.mapping_start.anchor, tag = ev.data.mapping_start.tag;
        const char *what = (const char *)(anchor ? anchor : tag);
        char name[64] = "";
        size_t k = 0;
        if (what) dg_text_append(name, sizeof name, &k, what, strlen(what));
        if (t == YAML_ALIAS_EVENT)
            st = perr(p, DG_ERR_CONFIG, line, "aliases (*%s) are not supported; write the value out", name);
        else if (anchor)
            st = perr(p, DG_ERR_CONFIG, line, "anchors (&%s) are not supported; write the value out", name);
        else if (tag)
            st = perr(p, DG_ERR_CONFIG, line, "tags (%s) are not supported; quote a value to make it a string", name);
        else if (t == YAML_DOCUMENT_START_EVENT && docs++)
            st = perr(p, DG_ERR_CONFIG, line, "only one YAML document is allowed (a second one starts here)");
        else if ((coll || t == YAML_SCALAR_EVENT) && ++nodes > MAX_NODES)
            st = perr(p, DG_ERR_CONFIG, line, "more than %d keys and values in one config", MAX_NODES);
        else if (coll && depth + open++ > DG_CFG_MAX_DEPTH)
            st = perr(p, DG_ERR_CONFIG, line, "nesting deeper than %d levels", DG_CFG_MAX_DEPTH);
        open -= t == YAML_SEQUENCE_END_EVENT || t == YAML_MAPPING_END_EVENT;
        done = t == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&y);
    return st;
}

static int key_cmp(const void *a, const void *b) {  /* key nodes: by text, then file order */
    const yaml_node_t *x = *(yaml_node_t *const *)a, *y = *(yaml_node_t *const *)b;
    size_t nx = x->data.scalar.length, ny = y->data.scalar.length;
    int r = memcmp(x->data.scalar.value, y->data.scalar.value, nx < ny ? nx : ny);
    return r ? r : nx != ny ? (nx < ny ? -1 : 1) : (x > y) - (x < y);
}

/* Walks the tree under node id (depth-first, as a reader meets the maps' ends): refuses keys that
 * are lists or maps and repeated keys (the first in file order, naming both lines; O(n log n)), and
 * fills m (NULL: not wanted) with each node's position, a map value taking its key's. */
static dg_status check_tree(parser *p, yaml_document_t *d, int id, int key, meta *m) {
    const yaml_node_t *n = yaml_document_get_node(d, id), *at = key ? yaml_document_get_node(d, key) : n;
    if (m) m[id - 1] = (meta){0, (int)at->start_mark.line + 1, (int)at->start_mark.column + 1};
    int is_map = n->type == YAML_MAPPING_NODE;
    size_t cnt = n_kids(n), old = p->plen;
    for (size_t i = 0; i < cnt; i++) {
        int k = is_map ? key_at(n, i) : 0;
        const yaml_node_t *kn = k ? yaml_document_get_node(d, k) : NULL;
        if (kn && kn->type != YAML_SCALAR_NODE)
            return perr(p, DG_ERR_CONFIG, (int)kn->start_mark.line + 1,
                        "map keys must be plain values, not lists or maps");
        if (kn && m) m[k - 1] = (meta){0, (int)kn->start_mark.line + 1, (int)kn->start_mark.column + 1};
        path_push(p->path, &p->plen, kn, i);
        dg_status st = check_tree(p, d, *kid(n, i), k, m);
        p->path[p->plen = old] = 0;
        if (st != DG_OK) return st;
    }
    if (!is_map || cnt < 2) return DG_OK;
    const yaml_node_t **ix = malloc(cnt * sizeof *ix), *dup = NULL, *first = NULL;
    if (!ix) return perr(p, DG_ERR_NOMEM, 0, "out of memory while reading YAML");
    for (size_t i = 0; i < cnt; i++) ix[i] = yaml_document_get_node(d, key_at(n, i));  /* in file order */
    qsort(ix, cnt, sizeof *ix, key_cmp);
    for (size_t j = 1, run = 0; j < cnt; j++) {
        const yaml_node_t *a = ix[run], *b = ix[j];
        if (a->data.scalar.length != b->data.scalar.length || memcmp(a->data.scalar.value, b->data.scalar.value,
                                                                      a->data.scalar.length)) run = j;
        else if (!dup || b < dup) { dup = b; first = a; }
    }
    free(ix);
    if (!dup) return DG_OK;
    path_push(p->path, &p->plen, dup, 0);
    if (p->key) return perr(p, DG_ERR_CONFIG, 0, "duplicate key '%s'", p->path);
    return perr(p, DG_ERR_CONFIG, (int)dup->start_mark.line + 1, "duplicate key '%s' (first at line %d)", p->path,
                (int)first->start_mark.line + 1);
}

/* Parses text into doc (no nodes when the text holds no document) after scan; *m (if m) gets the
 * per-node data, malloc'd. On error doc holds nothing to free. */
static dg_status parse_text(const char *text, size_t len, const char *label, const char *key, int depth,
                            yaml_document_t *doc, meta **m, dg_err *e) {
    parser p = {.label = label, .text = (const unsigned char *)text, .len = len, .key = key, .e = e};
    yaml_parser_t y;
    if (key) dg_text_append(p.path, PATH_CAP, &p.plen, key, strlen(key));
    dg_status st = scan(&p, depth);
    if (st != DG_OK) return st;
    if (!yaml_open(&y, &p)) return perr(&p, DG_ERR_NOMEM, 0, "out of memory while reading YAML");
    if (!yaml_parser_load(&y, doc)) st = syntax_error(&p, &y);  /* only memory: scan passed */
    yaml_parser_delete(&y);
    size_t n = (size_t)(doc->nodes.top - doc->nodes.start);
    if (st == DG_OK && m && !(*m = calloc(n ? n : 1, sizeof **m)))
        st = perr(&p, DG_ERR_NOMEM, 0, "out of memory while reading YAML");
    if (st == DG_OK && n) st = check_tree(&p, doc, ROOT, 0, m ? *m : NULL);
    if (st != DG_OK) {
        yaml_document_delete(doc);  /* harmless on the empty document a failed load leaves */
        if (m) { free(*m); *m = NULL; }
    }
    return st;
}

/* ------------------------------------------------------ public functions */

dg_cfg *dg_cfg_parse(const char *text, size_t len, const char *label, dg_err *e) {
    if (!label) label = "<memory>";
    dg_cfg *c = calloc(1, sizeof *c);
    if (!c || !(c->label = strdup(label))) goto nomem;
    if (parse_text(text, len, label, NULL, 1, &c->doc, &c->m, e) != DG_OK) goto fail;
    c->n_m = (size_t)(c->doc.nodes.top - c->doc.nodes.start);
    yaml_node_t *root = yaml_document_get_root_node(&c->doc);
    if (root && root->type != YAML_MAPPING_NODE && !is_null(root)) {
        char got[96];
        describe(root, got, sizeof got);
        node_err(c, ROOT, DG_ERR_CONFIG, e, "the top level must be a map of keys, got %s", got);
        goto fail;
    }
    if (!root || root->type != YAML_MAPPING_NODE) {  /* no document, or "---" alone: an empty map */
        yaml_document_delete(&c->doc);
        c->n_m = 0;
        if (!yaml_document_initialize(&c->doc, NULL, NULL, NULL, 1, 1) ||
            !yaml_document_add_mapping(&c->doc, NULL, YAML_BLOCK_MAPPING_STYLE) || !meta_sync(c))
            goto nomem;
    }
    c->m[0] = (meta){0, 0, 0};  /* "missing key" at the top level names the file only */
    return c;
nomem:
    dg_err_set(e, DG_ERR_NOMEM, "%.400s: out of memory", label);
fail:
    dg_cfg_free(c);
    return NULL;
}

dg_cfg *dg_cfg_load(const char *path, dg_err *e) {
    unsigned char *buf = NULL;
    size_t len = 0;
    if (!path) { dg_err_set(e, DG_ERR_ARG, "config path is NULL"); return NULL; }
    if (dg_file_read_max(path, DG_CFG_MAX_BYTES, &buf, &len, e) != DG_OK) return NULL;
    dg_cfg *c = dg_cfg_parse((const char *)buf, len, path, e);
    free(buf);
    return c;
}

void dg_cfg_free(dg_cfg *c) {
    if (!c) return;
    yaml_document_delete(&c->doc);
    free(c->m);
    for (int i = 0; i < c->n_asked; i++) free(c->asked[i]);
    free(c->label);
    free(c);
}

const char *dg_cfg_path(const dg_cfg *c) {
    return c ? c->label : "";
}

dg_status dg_cfg_get(dg_cfg *c, const char *path, dg_cfg_type type, void *out, dg_err *e) {
    int id;
    dg_status st = find(c, path, 0, &id, e);
    return st != DG_OK || !id ? st : conv(c, id, path, type, out, e);
}

dg_status dg_cfg_require(dg_cfg *c, const char *path, dg_err *e) {
    int id;
    return find(c, path, 1, &id, e);
}

dg_status dg_cfg_get_list(dg_cfg *c, const char *path, dg_cfg_type type, int cols, void *out, int min_n,
                          int max_n, int *n, dg_err *e) {
    int id = 0;
    if ((type != DG_CFG_F32 && type != DG_CFG_F64 && type != DG_CFG_INT) || cols < 0 || min_n < 0 ||
        max_n < min_n || (max_n > 0 && !out) || (!n && min_n != max_n))
        return dg_err_set(e, DG_ERR_ARG, "config list '%.200s': bad arguments (type %d, cols %d, min %d, max %d)",
                          path ? path : "", (int)type, cols, min_n, max_n);
    dg_status st = find(c, path, 0, &id, e);
    return st != DG_OK || !id ? st : read_list(c, id, path, type, cols, out, min_n, max_n, n, e);
}

int dg_cfg_has(dg_cfg *c, const char *path) {
    return look(c, path) != 0;
}

int dg_cfg_len(dg_cfg *c, const char *path) {
    int id = look(c, path);
    const yaml_node_t *n = id ? node(c, id) : NULL;
    return !n ? -1 : n->type != YAML_SCALAR_NODE ? (int)n_kids(n) : is_null(n) ? 0 : -1;  /* n_kids <= MAX_NODES */
}

const char *dg_cfg_key(dg_cfg *c, const char *path, int i) {
    int id = look(c, path);
    const yaml_node_t *n = id ? node(c, id) : NULL;
    if (!n || n->type != YAML_MAPPING_NODE || i < 0 || (size_t)i >= n_kids(n)) return NULL;
    return text_of(node(c, key_at(n, (size_t)i)));
}

int dg_cfg_line(dg_cfg *c, const char *path, int *col) {
    int id = look(c, path);
    int ok = id && !(c->m[id - 1].flags & F_OVERRIDE);
    if (col) *col = ok ? c->m[id - 1].col : 0;
    return ok ? c->m[id - 1].line : 0;
}

dg_status dg_cfg_error(dg_cfg *c, const char *path, dg_err *e, const char *fmt, ...) {
    char body[DG_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    if (!c) return dg_err_set(e, DG_ERR_CONFIG, "key '%.200s': %s", path ? path : "", body);
    return node_err(c, look(c, path), DG_ERR_CONFIG, e, "key '%.200s': %s", path ? path : "", body);
}

void dg_cfg_mark_used(dg_cfg *c, const char *path) {
    int id = 0;
    if (c && walk(c, path, 1, &id, NULL, NULL) == DG_OK && id) c->m[id - 1].flags |= F_USED;
}

dg_status dg_cfg_check_unused(dg_cfg *c, dg_err *e) {
    char path[PATH_CAP] = "";
    if (!c) return dg_err_set(e, DG_ERR_ARG, "config is NULL");
    if (c->m[ROOT - 1].flags & F_USED) return DG_OK;
    return unused_in(c, ROOT, path, 0, e);
}

/* A value replaced stays in the document, unreachable, until dg_cfg_free: a libyaml document cannot
 * drop nodes (they are numbered by position), and overrides are few. */
dg_status dg_cfg_set(dg_cfg *c, const char *path, const char *value_text, dg_err *e) {
    if (!c || !path || !value_text) return dg_err_set(e, DG_ERR_ARG, "dg_cfg_set: NULL argument");
    int nsteps = path_steps(path);
    size_t vlen = strlen(value_text);
    if (nsteps <= 0 || dg_utf8_check((const unsigned char *)path, strlen(path)) != strlen(path))
        return dg_err_set(e, DG_ERR_CONFIG, CMDLINE ": invalid key '%.200s' (write keys as a.b.c or a.b[0])", path);
    if (nsteps > DG_CFG_MAX_DEPTH)
        return dg_err_set(e, DG_ERR_CONFIG, CMDLINE ": key '%.200s' is nested deeper than %d levels", path,
                          DG_CFG_MAX_DEPTH);
    if (dg_utf8_check((const unsigned char *)value_text, vlen) != vlen)
        return dg_err_set(e, DG_ERR_CONFIG, CMDLINE ": key '%.200s': the value is not valid UTF-8", path);

    /* 1: find the place, checking the key can be set before changing anything. The value goes in
     * entry pi of node par, or, from step rest on, into new maps under cur (a map, or a null entry
     * that becomes one: "env:") */
    int par = 0, cur = ROOT;
    size_t pi = 0;
    const char *p = path, *rest = NULL;
    step s;
    while (next_step(&p, p == path, &s) == 1) {
        const yaml_node_t *n = rest ? NULL : node(c, cur);
        int null = !n || is_null(n), map = !null && n->type == YAML_MAPPING_NODE;
        int seq = !null && n->type == YAML_SEQUENCE_NODE;
        size_t cnt = seq ? n_kids(n) : 0;
        char many[64];
        snprintf(many, sizeof many, "has %zu item%s (indices start at 0)", cnt, cnt == 1 ? "" : "s");
        const char *why = null && s.index ? "does not exist" : map && s.index ? "is a map, not a list"
                        : seq && !s.numeric ? "is a list, not a map" : seq && s.idx >= cnt ? many
                        : !null && !map && !seq ? "is a value, not a map" : NULL;
        if (why)
            return dg_err_set(e, DG_ERR_CONFIG, CMDLINE ": cannot set '%.200s': %s'%.*s' %s", path, null ? "list " : "",
                              (int)(s.start - path), path, why);
        long i = map ? map_index(c, n, s.name, s.nlen) : seq ? (long)s.idx : -1;
        if (i < 0 && !rest) rest = s.start;
        if (i >= 0) { par = cur; pi = (size_t)i; cur = *kid(n, pi); }
    }

    /* 2: build the new value, a node nothing points to yet */
    int val = 0;
    const char *t = value_text + strspn(value_text, " \t");
    if (*t == '[' || *t == '{') {
        yaml_document_t tmp;
        dg_status st = parse_text(value_text, vlen, CMDLINE, path, nsteps + 1, &tmp, NULL, e);
        if (st != DG_OK) return st;
        val = copy_node(&c->doc, &tmp, ROOT, 0);  /* a flow list or map that parses: never empty */
        yaml_document_delete(&tmp);
    } else if (vlen <= INT_MAX) {
        val = yaml_document_add_scalar(&c->doc, NULL, (const yaml_char_t *)value_text, (int)vlen,
                                       YAML_PLAIN_SCALAR_STYLE);
    }

    /* 3: put it in place */
    int ok = val && meta_sync(c);
    if (ok && !rest) *kid(node(c, par), pi) = val;
    if (ok && rest && is_null(node(c, cur))) {
        int m = yaml_document_add_mapping(&c->doc, NULL, YAML_BLOCK_MAPPING_STYLE);
        if ((ok = m && meta_sync(c))) {
            c->m[m - 1] = c->m[cur - 1];  /* where the empty value was */
            *kid(node(c, par), pi) = cur = m;
        }
    }
    for (p = rest; ok && rest && next_step(&p, p == path, &s) == 1;) {
        int k = yaml_document_add_scalar(&c->doc, NULL, (const yaml_char_t *)s.name, (int)s.nlen,
                                         YAML_PLAIN_SCALAR_STYLE);
        int v = *p == 0 ? val : k ? yaml_document_add_mapping(&c->doc, NULL, YAML_BLOCK_MAPPING_STYLE) : 0;
        ok = k && v && meta_sync(c) && yaml_document_append_mapping_pair(&c->doc, cur, k, v);
        cur = v;
    }
    return ok ? DG_OK : dg_err_set(e, DG_ERR_NOMEM, CMDLINE ": key '%.200s': out of memory", path);
}

dg_status dg_cfg_to_yaml(const dg_cfg *c, char **out, size_t *len, dg_err *e) {
    yaml_emitter_t em;
    yaml_document_t d;
    char *buf = NULL;
    size_t n = 0;
    if (!c || !out) return dg_err_set(e, DG_ERR_ARG, "dg_cfg_to_yaml: a config and out are required");
    *out = NULL;
    if (len) *len = 0;
    FILE *f = open_memstream(&buf, &n);
    const int made = f && yaml_emitter_initialize(&em);
    int ok = made;
    if (made) {
        yaml_emitter_set_output_file(&em, f);
        yaml_emitter_set_unicode(&em, 1);
        yaml_emitter_set_width(&em, -1);  /* never fold long lines */
        yaml_emitter_set_indent(&em, 2);
        ok = yaml_emitter_open(&em) && yaml_document_initialize(&d, NULL, NULL, NULL, 1, 1);
    }
    if (ok && !copy_node(&d, (yaml_document_t *)&c->doc, ROOT, 0)) { yaml_document_delete(&d); ok = 0; }
    ok = ok && yaml_emitter_dump(&em, &d) && yaml_emitter_close(&em) && yaml_emitter_flush(&em);  /* dump frees d */
    const char *problem = made && !ok && em.error == YAML_EMITTER_ERROR ? em.problem : NULL;  /* a static string */
    if (made) yaml_emitter_delete(&em);
    if ((f && fclose(f) != 0) || !ok) {
        free(buf);
        if (problem) return dg_err_set(e, DG_ERR_FORMAT, "%.400s: cannot write YAML: %s", c->label, problem);
        return dg_err_set(e, DG_ERR_NOMEM, "%.400s: out of memory while writing YAML", c->label);
    }
    *out = buf;
    if (len) *len = n;
    return DG_OK;
}
