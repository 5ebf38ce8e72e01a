/* YAML configs on libyaml's document API: one pass over the events refuses what a config may not
 * hold, yaml_parser_load builds the tree, getters read it and remember what they read, dg_cfg_set
 * edits it, and yaml_emitter_dump writes a copy of it back. */
#define _POSIX_C_SOURCE 200809L
#include "difgames/config.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "difgames/fileio.h"

/* ------------------------------------------------------------------ types */

enum {
    F_USED     = 1u << 0,  /* a getter read this node: it and its subtree are known */
    F_VISITED  = 1u << 1,  /* a getter's path went through this map or list         */
    F_OVERRIDE = 1u << 2,  /* made by dg_cfg_set, not read from the file            */
};

/* What a config knows of a node beyond libyaml's: one per node of the document, at id - 1. */
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
    int                  override;  /* no lines; errors name the key being set           */
    const char          *key;
    char                 path[PATH_CAP]; /* path of the node being checked, for messages */
    size_t               plen;
    dg_err              *e;
} parser;

typedef struct sbuf {  /* growable output of the emitter */
    char  *buf;
    size_t len, cap;
} sbuf;

/* ------------------------------------------------------- internal helpers */

static yaml_node_t *node(const dg_cfg *c, int id) {
    return yaml_document_get_node((yaml_document_t *)&c->doc, id);
}

static size_t n_kids(const yaml_node_t *n) {  /* entries of a map, items of a list */
    if (n->type == YAML_MAPPING_NODE) return (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    if (n->type == YAML_SEQUENCE_NODE) return (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    return 0;
}

static const char *text_of(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

static int quoted(const yaml_node_t *n) {  /* quoted or block scalar: a string, never a number */
    return n->type == YAML_SCALAR_NODE && n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
}

/* 1 for a plain scalar that YAML reads as null: "", "~", "null". */
static int is_null(const yaml_node_t *n) {
    if (n->type != YAML_SCALAR_NODE || quoted(n)) return 0;
    const char *s = text_of(n);
    size_t len = n->data.scalar.length;
    return len == 0 || (len == 1 && s[0] == '~') ||
           (len == 4 && (!memcmp(s, "null", 4) || !memcmp(s, "Null", 4) || !memcmp(s, "NULL", 4)));
}

/* Index of key name in map node n, or -1. */
static long map_index(const dg_cfg *c, const yaml_node_t *n, const char *name, size_t nlen) {
    for (size_t i = 0; i < n_kids(n); i++) {
        const yaml_node_t *k = node(c, n->data.mapping.pairs.start[i].key);
        if (k->data.scalar.length == nlen && !memcmp(k->data.scalar.value, name, nlen)) return (long)i;
    }
    return -1;
}

/* Appends n bytes of s to buf (capacity cap, current length *pos), turning control characters into
 * '?' so a message stays on one line; truncates with "..." when full. */
static void put_clean(char *buf, size_t cap, size_t *pos, const char *s, size_t n) {
    size_t p = *pos, start = *pos;
    for (size_t i = 0; i < n; i++) {
        if (p + 4 >= cap) {
            while (p > start && ((unsigned char)buf[p - 1] & 0xC0) == 0x80) p--;  /* whole UTF-8 characters */
            if (p > start && ((unsigned char)buf[p - 1] & 0xC0) == 0xC0) p--;
            if (p + 4 <= cap) { memcpy(buf + p, "...", 3); p += 3; }
            break;
        }
        unsigned char ch = (unsigned char)s[i];
        buf[p++] = (ch < 0x20 || ch == 0x7F) ? '?' : (char)ch;
    }
    if (cap) buf[p < cap ? p : cap - 1] = 0;
    *pos = p;
}

/* Describes what a node holds, for "got ...": "'abc'", "the quoted string \"5\"", "a list", "nothing". */
static void describe(const yaml_node_t *n, char *buf, size_t cap) {
    char t[64];
    size_t p = 0;
    if (!n || is_null(n)) { snprintf(buf, cap, "nothing"); return; }
    if (n->type == YAML_MAPPING_NODE) { snprintf(buf, cap, "a map"); return; }
    if (n->type == YAML_SEQUENCE_NODE) { snprintf(buf, cap, "a list"); return; }
    put_clean(t, sizeof t, &p, text_of(n), n->data.scalar.length);
    if (quoted(n)) snprintf(buf, cap, "the quoted string \"%s\"", t);
    else snprintf(buf, cap, "'%s'", t);
}

/* Sets e to "WHERE: <fmt>", WHERE being node id's "FILE:LINE", "command line", or "FILE" (id 0). */
static dg_status node_err(const dg_cfg *c, int id, dg_status st, dg_err *e, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
static dg_status node_err(const dg_cfg *c, int id, dg_status st, dg_err *e, const char *fmt, ...) {
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

/* Reads the next step of a path. Returns 1 for a step, 0 at the end, -1 when malformed. */
static int next_step(const char **pp, int first, step *s) {
    const char *p = *pp;
    memset(s, 0, sizeof *s);
    s->start = p;
    if (*p == 0) return 0;
    if (*p == '[') {
        if (first) return -1;  /* the top level is a map */
        p++;
        if (*p < '0' || *p > '9') return -1;
        size_t v = 0;
        while (*p >= '0' && *p <= '9') {
            if (v > (SIZE_MAX - 9) / 10) return -1;
            v = v * 10 + (size_t)(*p++ - '0');
        }
        if (*p != ']') return -1;
        p++;
        s->index = 1;
        s->numeric = 1;
        s->idx = v;
    } else {
        if (!first) {
            if (*p != '.') return -1;
            p++;
        }
        s->name = p;
        while (*p && *p != '.' && *p != '[' && *p != ']') p++;
        s->nlen = (size_t)(p - s->name);
        if (s->nlen == 0) return -1;
        s->numeric = 1;
        size_t v = 0;
        for (size_t i = 0; i < s->nlen; i++) {
            char ch = s->name[i];
            if (ch < '0' || ch > '9' || v > (SIZE_MAX - 9) / 10) { s->numeric = 0; break; }
            v = v * 10 + (size_t)(ch - '0');
        }
        s->idx = v;
    }
    *pp = p;
    return 1;
}

/* Number of steps in path ("" has none), or -1 when malformed. */
static int path_steps(const char *path) {
    step s;
    int n = 0, r;
    const char *p = path;
    while ((r = next_step(&p, n == 0, &s)) == 1) {
        if (n == INT_MAX) return -1;
        n++;
    }
    return r < 0 ? -1 : n;
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
    const char *p = path;
    step s;
    int first = 1;
    while (next_step(&p, first, &s) == 1) {
        first = 0;
        const yaml_node_t *n = node(c, cur);
        int child = 0, plen = (int)(s.start - path);
        if (n->type == YAML_MAPPING_NODE) {
            if (s.index) return node_err(c, cur, DG_ERR_CONFIG, e, "key '%.*s': expected a list, got a map", plen, path);
            long i = map_index(c, n, s.name, s.nlen);
            if (i >= 0) child = n->data.mapping.pairs.start[i].value;
        } else if (n->type == YAML_SEQUENCE_NODE) {
            if (!s.numeric) return node_err(c, cur, DG_ERR_CONFIG, e, "key '%.*s': expected a map, got a list", plen, path);
            if (s.idx < n_kids(n)) child = n->data.sequence.items.start[s.idx];
        } else if (!is_null(n)) {
            char got[96];
            describe(n, got, sizeof got);
            return node_err(c, cur, DG_ERR_CONFIG, e, "key '%.*s': expected a %s, got %s", plen, path,
                            s.index ? "list" : "map", got);
        }
        if (mark) c->m[cur - 1].flags |= F_VISITED;
        if (!child) return DG_OK;
        cur = child;
        if (deepest) *deepest = cur;
    }
    *out = cur;
    return DG_OK;
}

/* Remembers a path a getter asked for and did not find (for "did you mean" hints). */
static void remember_missing(dg_cfg *c, const char *path) {
    for (int i = 0; i < c->n_asked; i++)
        if (!strcmp(c->asked[i], path)) return;
    if (c->n_asked == MAX_ASKED) return;
    size_t n = strlen(path);
    char *s = malloc(n + 1);
    if (!s) return;  /* only a hint is lost */
    memcpy(s, path, n + 1);
    c->asked[c->n_asked++] = s;
}

/* The node a getter reads: marks it used; *out 0 when missing (an error when req). */
static dg_status find(dg_cfg *c, const char *path, int req, int *out, dg_err *e) {
    int deep = 0;
    *out = 0;
    if (!c) return dg_err_set(e, DG_ERR_ARG, "config is NULL");
    dg_status st = walk(c, path, 1, out, &deep, e);
    if (st != DG_OK) return st;
    if (!*out) {
        remember_missing(c, path);
        if (req) return node_err(c, deep, DG_ERR_CONFIG, e, "missing required key '%.200s'", path);
        return DG_OK;
    }
    c->m[*out - 1].flags |= F_USED;
    return DG_OK;
}

/* Sets e to "WHERE: key 'path': expected <what>, got <node>". */
static dg_status type_err(const dg_cfg *c, int id, const char *path, const char *what, dg_err *e) {
    char got[96];
    describe(node(c, id), got, sizeof got);
    return node_err(c, id, DG_ERR_CONFIG, e, "key '%.200s': expected %s, got %s", path, what, got);
}

/* strtod and snprintf("%g") in the C locale, whatever the program's locale. */
typedef struct c_numeric {
    locale_t c, old;
} c_numeric;

static void c_numeric_begin(c_numeric *s) {
    s->c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    s->old = s->c ? uselocale(s->c) : (locale_t)0;
}

static void c_numeric_end(c_numeric *s) {
    if (!s->c) return;
    uselocale(s->old);
    freelocale(s->c);
}

static void fmt_g(char *buf, size_t cap, double v) {
    c_numeric cn;
    c_numeric_begin(&cn);
    snprintf(buf, cap, "%g", v);
    c_numeric_end(&cn);
}

/* 1 if s (n bytes) is a decimal number: [+-] digits [. digits] [e [+-] digits], or [+-] . digits ... */
static int is_decimal(const char *s, size_t n) {
    size_t i = 0, digits = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    while (i < n && s[i] >= '0' && s[i] <= '9') { i++; digits++; }
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') { i++; digits++; }
    }
    if (!digits) return 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        size_t ed = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') { i++; ed++; }
        if (!ed) return 0;
    }
    return i == n;
}

/* 1 if s reads as an infinity or NaN (".inf", "-.Inf", ".nan", "inf", "NaN", "infinity"). */
static int is_nonfinite_text(const char *s, size_t n) {
    size_t i = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    if (i < n && s[i] == '.') i++;
    size_t m = n - i;
    const char *w[] = {"inf", "nan", "infinity"};
    for (int k = 0; k < 3; k++) {
        size_t wl = strlen(w[k]);
        if (m != wl) continue;
        size_t j = 0;
        while (j < wl && (s[i + j] | 0x20) == w[k][j]) j++;
        if (j == wl) return 1;
    }
    return 0;
}

enum { T_F32, T_INT, T_BOOL, T_STR };

/* Converts node id to type T_* into out (written only on success); errors show path as given. */
static dg_status conv(const dg_cfg *c, int id, const char *path, int type, void *out, dg_err *e) {
    static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
    static const char *const no[]  = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"};
    static const char *const what[] = {"a number", "an integer", "true or false", "a string"};
    const yaml_node_t *n = node(c, id);
    int plain = n->type == YAML_SCALAR_NODE && !quoted(n) && !is_null(n);
    const char *s = n->type == YAML_SCALAR_NODE ? text_of(n) : NULL;
    size_t len = s ? n->data.scalar.length : 0;
    if (type == T_STR) {
        if (n->type != YAML_SCALAR_NODE || is_null(n)) return type_err(c, id, path, what[type], e);
        if (strlen(s) != len)
            return node_err(c, id, DG_ERR_CONFIG, e, "key '%.200s': expected a string without NUL characters", path);
        *(const char **)out = s;
        return DG_OK;
    }
    if (!plain) return type_err(c, id, path, what[type], e);
    if (type == T_BOOL) {
        for (size_t k = 0; k < sizeof yes / sizeof yes[0]; k++) {
            if (len == strlen(yes[k]) && !memcmp(s, yes[k], len)) { *(int *)out = 1; return DG_OK; }
            if (len == strlen(no[k]) && !memcmp(s, no[k], len)) { *(int *)out = 0; return DG_OK; }
        }
        return type_err(c, id, path, what[type], e);
    }
    if (type == T_INT) {
        size_t i = (s[0] == '+' || s[0] == '-');
        if (i == len) return type_err(c, id, path, what[type], e);
        for (; i < len; i++)
            if (s[i] < '0' || s[i] > '9') return type_err(c, id, path, what[type], e);
        errno = 0;
        long long v = strtoll(s, NULL, 10);
        if (errno == ERANGE || v < INT_MIN || v > INT_MAX) {
            char got[96];
            describe(n, got, sizeof got);
            return node_err(c, id, DG_ERR_CONFIG, e, "key '%.200s': %s is out of the integer range [%d, %d]",
                            path, got, INT_MIN, INT_MAX);
        }
        *(int *)out = (int)v;
        return DG_OK;
    }
    if (is_nonfinite_text(s, len)) return type_err(c, id, path, "a finite number", e);
    if (!is_decimal(s, len)) return type_err(c, id, path, what[type], e);
    c_numeric cn;
    c_numeric_begin(&cn);
    double d = strtod(s, NULL);
    c_numeric_end(&cn);
    if (!isfinite(d)) return type_err(c, id, path, "a finite number", e);
    if (fabs(d) > FLT_MAX) return type_err(c, id, path, "a finite number within the 32-bit float range", e);
    *(float *)out = (float)d;
    return DG_OK;
}

/* The scalar getters: def (of the type's size) when missing and not req. */
static dg_status get(dg_cfg *c, const char *path, int req, int type, void *out, const void *def, dg_err *e) {
    int id;
    dg_status st = find(c, path, req, &id, e);
    if (st != DG_OK) return st;
    if (id) return conv(c, id, path, type, out, e);
    memcpy(out, def, type == T_F32 ? sizeof(float) : type == T_STR ? sizeof(const char *) : sizeof(int));
    return DG_OK;
}

/* Formats the accepted interval: "(0, 1]", "> 0", "<= 5". */
static void fmt_interval(char *buf, size_t cap, double lo, double hi, int lo_in, int hi_in) {
    char a[40], b[40];
    fmt_g(a, sizeof a, lo);
    fmt_g(b, sizeof b, hi);
    int open_lo = isinf(lo) && lo < 0, open_hi = isinf(hi) && hi > 0;
    if (open_lo && open_hi) snprintf(buf, cap, "a finite number");
    else if (open_lo) snprintf(buf, cap, "%s %s", hi_in ? "<=" : "<", b);
    else if (open_hi) snprintf(buf, cap, "%s %s", lo_in ? ">=" : ">", a);
    else snprintf(buf, cap, "%c%s, %s%c", lo_in ? '[' : '(', a, b, hi_in ? ']' : ')');
}

/* The shared end of the range checks: value text from the node when there is one. */
static dg_status range_err(dg_cfg *c, const char *path, const char *vtext, const char *interval, dg_err *e) {
    int id = 0;
    dg_status st = walk(c, path, 0, &id, NULL, e);
    if (st != DG_OK) return st;
    if (!id)
        return node_err(c, 0, DG_ERR_ARG, e, "key '%.200s': default %s is out of range, expected %s",
                        path, vtext, interval);
    char got[96];
    const yaml_node_t *n = node(c, id);
    size_t p = 0;
    if (n->type == YAML_SCALAR_NODE && !is_null(n)) put_clean(got, sizeof got, &p, text_of(n), n->data.scalar.length);
    else snprintf(got, sizeof got, "%s", vtext);
    return node_err(c, id, DG_ERR_CONFIG, e, "key '%.200s': %s is out of range, expected %s", path, got, interval);
}

/* Checks the count arguments of the list getters. */
static dg_status list_args(const void *out, int min_n, int max_n, const int *n, dg_err *e) {
    if (min_n < 0 || max_n < min_n || (max_n > 0 && !out) || (!n && min_n != max_n))
        return dg_err_set(e, DG_ERR_ARG, "config list: bad arguments (min %d, max %d)", min_n, max_n);
    return DG_OK;
}

/* Checks that list id has min_n..max_n items; what is the item ("integer", "number", "row"). */
static dg_status count_check(const dg_cfg *c, int id, const char *path, const char *what, int min_n, int max_n,
                             dg_err *e) {
    size_t n = n_kids(node(c, id));
    if (n >= (size_t)min_n && n <= (size_t)max_n) return DG_OK;
    int one = min_n == max_n ? min_n : min_n == 0 ? max_n : 2;
    const char *s = one == 1 ? "" : "s";
    if (min_n == max_n)
        return node_err(c, id, DG_ERR_CONFIG, e, "key '%.200s': expected %d %s%s, got %zu", path, min_n, what, s, n);
    if (min_n == 0)
        return node_err(c, id, DG_ERR_CONFIG, e, "key '%.200s': expected at most %d %s%s, got %zu", path, max_n,
                        what, s, n);
    return node_err(c, id, DG_ERR_CONFIG, e, "key '%.200s': expected %d to %d %ss, got %zu", path, min_n, max_n,
                    what, n);
}

/* Reads a list of f32 (is_int 0) or int (is_int 1) items from node id into out; see the header. */
static dg_status read_list(dg_cfg *c, int id, const char *path, int is_int, void *out, int min_n, int max_n,
                           int *count, dg_err *e) {
    const yaml_node_t *n = node(c, id);
    if (n->type != YAML_SEQUENCE_NODE)
        return type_err(c, id, path, is_int ? "a list of integers" : "a list of numbers", e);
    dg_status st = count_check(c, id, path, is_int ? "integer" : "number", min_n, max_n, e);
    /* check every item first, so a bad item leaves out (the caller's default) untouched; out NULL: check only */
    for (int pass = 0; st == DG_OK && pass < (out ? 2 : 1); pass++) {
        for (size_t i = 0; st == DG_OK && i < n_kids(n); i++) {
            char ipath[PATH_CAP];
            snprintf(ipath, sizeof ipath, "%.200s[%zu]", path, i);
            int v;
            float f;
            st = conv(c, n->data.sequence.items.start[i], ipath, is_int ? T_INT : T_F32, is_int ? (void *)&v : &f, e);
            if (st == DG_OK && pass == 1) {
                if (is_int) ((int *)out)[i] = v;
                else ((float *)out)[i] = f;
            }
        }
    }
    if (st == DG_OK && count) *count = (int)n_kids(n);
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
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[nb];
}

/* A missing key the program asked for that looks like a typo of key under parent, or NULL. */
static const char *suggest(const dg_cfg *c, const char *parent, size_t plen, const char *key, size_t klen) {
    const char *best = NULL;
    int best_d = INT_MAX;
    for (int i = 0; i < c->n_asked; i++) {
        const char *a = c->asked[i];
        const char *dot = strrchr(a, '.');
        size_t alen = dot ? (size_t)(dot - a) : 0;
        const char *last = dot ? dot + 1 : a;
        if (alen != plen || memcmp(a, parent, plen) != 0 || strchr(last, '[')) continue;
        size_t ll = strlen(last);
        int d = edit_distance(last, ll, key, klen);
        int limit = ll < 4 ? 1 : ll < 8 ? 2 : 3;
        if (d <= limit && d < best_d) { best = a; best_d = d; }
    }
    return best;
}

/* Finds the first unread entry under node id (which was visited, not used), in file order. */
static dg_status unused_in(const dg_cfg *c, int id, char *path, size_t plen, dg_err *e) {
    const yaml_node_t *n = node(c, id);
    int is_map = n->type == YAML_MAPPING_NODE;
    for (size_t i = 0; i < n_kids(n); i++) {
        int k = is_map ? n->data.mapping.pairs.start[i].key : 0;
        int v = is_map ? n->data.mapping.pairs.start[i].value : n->data.sequence.items.start[i];
        const yaml_node_t *kn = k ? node(c, k) : NULL;
        size_t p = plen;
        if (is_map) {
            if (p > 0) put_clean(path, PATH_CAP, &p, ".", 1);
            put_clean(path, PATH_CAP, &p, text_of(kn), kn->data.scalar.length);
        } else {
            char ix[32];
            snprintf(ix, sizeof ix, "[%zu]", i);
            put_clean(path, PATH_CAP, &p, ix, strlen(ix));
        }
        unsigned fl = c->m[v - 1].flags;
        if (!(fl & (F_USED | F_VISITED))) {
            if (!is_map) return node_err(c, v, DG_ERR_CONFIG, e, "unused list item '%s'", path);
            const char *hint = suggest(c, path, plen, text_of(kn), kn->data.scalar.length);
            if (hint) return node_err(c, k, DG_ERR_CONFIG, e, "unknown key '%s' (did you mean '%.200s'?)", path, hint);
            return node_err(c, k, DG_ERR_CONFIG, e, "unknown key '%s'", path);
        }
        if (!(fl & F_USED) && node(c, v)->type != YAML_SCALAR_NODE) {
            dg_status st = unused_in(c, v, path, p, e);
            if (st != DG_OK) return st;
        }
        path[plen] = 0;
    }
    return DG_OK;
}

/* 1 if s (n bytes) is well-formed UTF-8 (no overlongs, surrogates or values past U+10FFFF). */
static int utf8_valid(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned c0 = s[i];
        size_t w;
        unsigned v;
        if (c0 < 0x80) { i++; continue; }
        else if ((c0 & 0xE0) == 0xC0) { w = 2; v = c0 & 0x1F; }
        else if ((c0 & 0xF0) == 0xE0) { w = 3; v = c0 & 0x0F; }
        else if ((c0 & 0xF8) == 0xF0) { w = 4; v = c0 & 0x07; }
        else return 0;
        if (n - i < w) return 0;
        for (size_t k = 1; k < w; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return 0;
            v = (v << 6) | (s[i + k] & 0x3F);
        }
        if ((w == 2 && v < 0x80) || (w == 3 && v < 0x800) || (w == 4 && v < 0x10000) || v > 0x10FFFF ||
            (v >= 0xD800 && v <= 0xDFFF))
            return 0;
        i += w;
    }
    return 1;
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

/* Copies node id of src into dst (a tree: libyaml anchors nodes met twice). out: in the dump's
 * styles (quoted scalars single-quoted, libyaml switching to double quotes when it must, so "5"
 * stays a string; nulls written "null"). Returns the new node's id, 0 when out of memory. */
static int copy_node(yaml_document_t *dst, yaml_document_t *src, int id, int out, int is_key) {
    const yaml_node_t *n = yaml_document_get_node(src, id);
    if (n->type == YAML_SCALAR_NODE) {
        yaml_scalar_style_t st = n->data.scalar.style;
        if (out && !is_key && is_null(n))
            return yaml_document_add_scalar(dst, NULL, (const yaml_char_t *)"null", 4, YAML_ANY_SCALAR_STYLE);
        if (out) st = quoted(n) ? YAML_SINGLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE;
        if (n->data.scalar.length > INT_MAX) return 0;
        return yaml_document_add_scalar(dst, NULL, n->data.scalar.value, (int)n->data.scalar.length, st);
    }
    int is_map = n->type == YAML_MAPPING_NODE;
    int flow = is_map ? n->data.mapping.style == YAML_FLOW_MAPPING_STYLE
                      : n->data.sequence.style == YAML_FLOW_SEQUENCE_STYLE;
    int to = is_map ? yaml_document_add_mapping(dst, NULL, flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE)
                    : yaml_document_add_sequence(dst, NULL, flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE);
    for (size_t i = 0; to && i < n_kids(n); i++) {
        if (is_map) {
            int k = copy_node(dst, src, n->data.mapping.pairs.start[i].key, out, 1);
            int v = k ? copy_node(dst, src, n->data.mapping.pairs.start[i].value, out, 0) : 0;
            if (!v || !yaml_document_append_mapping_pair(dst, to, k, v)) to = 0;
        } else {
            int v = copy_node(dst, src, n->data.sequence.items.start[i], out, 0);
            if (!v || !yaml_document_append_sequence_item(dst, to, v)) to = 0;
        }
    }
    return to;
}

/* ----------------------------------------------------------- the parser */

static int mark_line(size_t zero_based) {
    return zero_based >= (size_t)INT_MAX ? INT_MAX : (int)zero_based + 1;
}

/* Sets e to "FILE:LINE: <fmt>" (file) or "command line: key 'K': <fmt>" (a dg_cfg_set value). */
static dg_status perr(parser *p, dg_status st, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static dg_status perr(parser *p, dg_status st, int line, const char *fmt, ...) {
    char body[DG_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    if (p->override) return dg_err_set(p->e, st, CMDLINE ": key '%.200s': %s", p->key, body);
    if (line > 0) return dg_err_set(p->e, st, "%.400s:%d: %s", p->label, line, body);
    return dg_err_set(p->e, st, "%.400s: %s", p->label, body);
}

/* 1 if the indentation of line (0-based) of text contains a tab, which YAML forbids. */
static int indented_with_tab(const unsigned char *text, size_t len, size_t line) {
    size_t i = 0;
    for (size_t l = 0; l < line && i < len; i++)
        if (text[i] == '\n') l++;
    for (; i < len && (text[i] == ' ' || text[i] == '\t'); i++)
        if (text[i] == '\t') return 1;
    return 0;
}

/* Turns libyaml's error state into "FILE:LINE: problem (context at line N)". */
static dg_status syntax_error(parser *p, const yaml_parser_t *y) {
    if (y->error == YAML_MEMORY_ERROR) return perr(p, DG_ERR_NOMEM, 0, "out of memory while reading YAML");
    const char *problem = y->problem ? y->problem : "invalid YAML";
    char extra[160] = "";
    int line;
    if (y->error == YAML_READER_ERROR) {
        /* encoding errors carry a byte offset, not a mark */
        size_t end = y->problem_offset < p->len ? y->problem_offset : p->len;
        size_t nl = 0;
        for (size_t i = 0; i < end; i++) nl += p->text[i] == '\n';
        line = mark_line(nl);
        if (y->problem_value >= 0) snprintf(extra, sizeof extra, " (byte 0x%02X)", (unsigned)y->problem_value);
    } else {
        line = mark_line(y->problem_mark.line);
        int cline = mark_line(y->context_mark.line);
        if (y->context && !p->override && cline != line)
            snprintf(extra, sizeof extra, " (%.100s at line %d)", y->context, cline);
        else if (y->context)
            snprintf(extra, sizeof extra, " (%.100s)", y->context);
        if (y->error == YAML_SCANNER_ERROR && indented_with_tab(p->text, p->len, y->problem_mark.line)) {
            size_t k = strlen(extra);
            snprintf(extra + k, sizeof extra - k, "; YAML indents with spaces, not tabs");
        }
    }
    return perr(p, DG_ERR_CONFIG, line, "%s%s", problem, extra);
}

/* Refuses an anchor or a tag on a node. */
static dg_status refuse_props(parser *p, int line, const yaml_char_t *anchor, const yaml_char_t *tag) {
    char t[64];
    size_t n = 0;
    if (anchor) {
        put_clean(t, sizeof t, &n, (const char *)anchor, strlen((const char *)anchor));
        return perr(p, DG_ERR_CONFIG, line, "anchors (&%s) are not supported; write the value out", t);
    }
    if (tag) {
        put_clean(t, sizeof t, &n, (const char *)tag, strlen((const char *)tag));
        return perr(p, DG_ERR_CONFIG, line, "tags (%s) are not supported; quote a value to make it a string", t);
    }
    return DG_OK;
}

static int yaml_open(yaml_parser_t *y, const parser *p) {
    if (!yaml_parser_initialize(y)) return 0;
    yaml_parser_set_input_string(y, p->text ? p->text : (const unsigned char *)"", p->text ? p->len : 0);
    yaml_parser_set_encoding(y, YAML_UTF8_ENCODING);
    return 1;
}

/* The first pass, over libyaml's events: refuses syntax errors, aliases (which yaml_parser_load
 * would resolve into shared, even cyclic, nodes), anchors, tags, keys that are lists or maps,
 * nesting deeper than DG_CFG_MAX_DEPTH (the root at depth), more than MAX_NODES values and a second
 * document. It stops at the first, so junk costs no more than a few events' memory. */
static dg_status scan(parser *p, int depth) {
    yaml_parser_t y;
    unsigned char is_map[DG_CFG_MAX_DEPTH];  /* the open lists and maps... */
    size_t kids[DG_CFG_MAX_DEPTH];           /* ...and the nodes read in each */
    int open = 0, docs = 0, done = 0;
    size_t nodes = 0;
    if (!yaml_open(&y, p)) return perr(p, DG_ERR_NOMEM, 0, "out of memory while reading YAML");
    dg_status st = DG_OK;
    while (st == DG_OK && !done) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&y, &ev)) { st = syntax_error(p, &y); break; }
        yaml_event_type_t t = ev.type;
        int line = p->override ? 0 : mark_line(ev.start_mark.line);
        int coll = t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT;
        int is_node = coll || t == YAML_SCALAR_EVENT || t == YAML_ALIAS_EVENT;
        if (is_node && open > 0 && is_map[open - 1] && kids[open - 1] % 2 == 0 && coll)
            st = perr(p, DG_ERR_CONFIG, line, "map keys must be plain values, not lists or maps");
        else if (t == YAML_ALIAS_EVENT) {
            char a[64];
            size_t k = 0;
            put_clean(a, sizeof a, &k, (const char *)ev.data.alias.anchor, strlen((const char *)ev.data.alias.anchor));
            st = perr(p, DG_ERR_CONFIG, line, "aliases (*%s) are not supported; write the value out", a);
        } else if (t == YAML_SCALAR_EVENT)
            st = refuse_props(p, line, ev.data.scalar.anchor, ev.data.scalar.tag);
        else if (t == YAML_SEQUENCE_START_EVENT)
            st = refuse_props(p, line, ev.data.sequence_start.anchor, ev.data.sequence_start.tag);
        else if (t == YAML_MAPPING_START_EVENT)
            st = refuse_props(p, line, ev.data.mapping_start.anchor, ev.data.mapping_start.tag);
        else if (t == YAML_SEQUENCE_END_EVENT || t == YAML_MAPPING_END_EVENT) open--;
        else if (t == YAML_DOCUMENT_START_EVENT && docs++)
            st = perr(p, DG_ERR_CONFIG, line, "only one YAML document is allowed (a second one starts here)");
        else done = t == YAML_STREAM_END_EVENT;
        if (st == DG_OK && is_node && ++nodes > MAX_NODES)
            st = perr(p, DG_ERR_CONFIG, line, "more than %d keys and values in one config", MAX_NODES);
        if (st == DG_OK && is_node && open > 0) kids[open - 1]++;
        if (st == DG_OK && coll && depth + open > DG_CFG_MAX_DEPTH)
            st = perr(p, DG_ERR_CONFIG, line, "nesting deeper than %d levels", DG_CFG_MAX_DEPTH);
        else if (st == DG_OK && coll) {
            is_map[open] = t == YAML_MAPPING_START_EVENT;
            kids[open++] = 0;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&y);
    return st;
}

/* Appends ".key" or "[i]" to the path being checked; returns the old length to restore. */
static size_t path_push(parser *p, const char *s, size_t n, int is_key) {
    size_t old = p->plen;
    if (is_key && p->plen > 0) put_clean(p->path, PATH_CAP, &p->plen, ".", 1);
    put_clean(p->path, PATH_CAP, &p->plen, s, n);
    return old;
}

typedef struct key_ix {
    const yaml_node_t *k;
    size_t i;
} key_ix;

static int key_ix_cmp(const void *a, const void *b) {
    const key_ix *x = a, *y = b;
    size_t nx = x->k->data.scalar.length, ny = y->k->data.scalar.length;
    int r = memcmp(x->k->data.scalar.value, y->k->data.scalar.value, nx < ny ? nx : ny);
    if (r) return r;
    if (nx != ny) return nx < ny ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Reports the first repeated key of map n (in file order), naming both lines. O(n log n). */
static dg_status check_duplicates(parser *p, yaml_document_t *d, const yaml_node_t *n) {
    size_t cnt = n_kids(n), dup = SIZE_MAX, first = 0, run = 0;
    if (cnt < 2) return DG_OK;
    key_ix *ix = malloc(cnt * sizeof *ix);
    if (!ix) return perr(p, DG_ERR_NOMEM, 0, "out of memory while reading YAML");
    for (size_t i = 0; i < cnt; i++) ix[i] = (key_ix){yaml_document_get_node(d, n->data.mapping.pairs.start[i].key), i};
    qsort(ix, cnt, sizeof *ix, key_ix_cmp);
    for (size_t j = 1; j < cnt; j++) {
        if (key_ix_cmp(&(key_ix){ix[j].k, 0}, &(key_ix){ix[run].k, 0}) != 0) { run = j; continue; }
        if (ix[j].i < dup) { dup = ix[j].i; first = ix[run].i; }
    }
    free(ix);
    if (dup == SIZE_MAX) return DG_OK;
    const yaml_node_t *k = yaml_document_get_node(d, n->data.mapping.pairs.start[dup].key);
    const yaml_node_t *k0 = yaml_document_get_node(d, n->data.mapping.pairs.start[first].key);
    path_push(p, text_of(k), k->data.scalar.length, 1);
    if (p->override) return perr(p, DG_ERR_CONFIG, 0, "duplicate key '%s'", p->path);
    return perr(p, DG_ERR_CONFIG, mark_line(k->start_mark.line), "duplicate key '%s' (first at line %d)", p->path,
                mark_line(k0->start_mark.line));
}

/* Walks the tree under node id (depth-first, as a reader meets the maps' ends): refuses repeated
 * keys, and fills m (NULL: not wanted) with each node's position, a map value taking its key's. */
static dg_status check_tree(parser *p, yaml_document_t *d, int id, int key, meta *m) {
    const yaml_node_t *n = yaml_document_get_node(d, id);
    const yaml_node_t *at = key ? yaml_document_get_node(d, key) : n;
    if (m) m[id - 1] = (meta){0, mark_line(at->start_mark.line), mark_line(at->start_mark.column)};
    int is_map = n->type == YAML_MAPPING_NODE;
    for (size_t i = 0; i < n_kids(n); i++) {
        dg_status st;
        size_t old = p->plen;
        if (is_map) {
            const yaml_node_pair_t *pr = &n->data.mapping.pairs.start[i];
            const yaml_node_t *k = yaml_document_get_node(d, pr->key);
            if (m) m[pr->key - 1] = (meta){0, mark_line(k->start_mark.line), mark_line(k->start_mark.column)};
            path_push(p, text_of(k), k->data.scalar.length, 1);
            st = check_tree(p, d, pr->value, pr->key, m);
        } else {
            char ix[32];
            snprintf(ix, sizeof ix, "[%zu]", i);
            path_push(p, ix, strlen(ix), 0);
            st = check_tree(p, d, n->data.sequence.items.start[i], 0, m);
        }
        p->plen = old;
        p->path[old] = 0;
        if (st != DG_OK) return st;
    }
    return is_map ? check_duplicates(p, d, n) : DG_OK;
}

/* Parses text into doc (no nodes when the text holds no document) after scan; *m (if m) gets the
 * per-node data, malloc'd. On error doc is left empty. */
static dg_status parse_text(const char *text, size_t len, const char *label, const char *key, int depth,
                            yaml_document_t *doc, meta **m, dg_err *e) {
    parser p = {.label = label, .text = (const unsigned char *)text, .len = len, .override = key != NULL,
                .key = key, .e = e};
    yaml_parser_t y;
    memset(doc, 0, sizeof *doc);
    if (key) path_push(&p, key, strlen(key), 0);
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

static int sbuf_write(void *data, unsigned char *bytes, size_t size) {
    sbuf *b = data;
    if (size > SIZE_MAX - b->len - 1) return 0;
    if (b->len + size + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + size + 1) {
            if (cap > SIZE_MAX / 2) return 0;
            cap *= 2;
        }
        char *nb = realloc(b->buf, cap);
        if (!nb) return 0;
        b->buf = nb;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, bytes, size);
    b->len += size;
    b->buf[b->len] = 0;
    return 1;
}

/* ------------------------------------------------------ public functions */

dg_cfg *dg_cfg_parse(const char *text, size_t len, const char *label, dg_err *e) {
    if (!label) label = "<memory>";
    size_t ll = strlen(label);
    dg_cfg *c = calloc(1, sizeof *c);
    if (!c || !(c->label = malloc(ll + 1))) {
        free(c);
        dg_err_set(e, DG_ERR_NOMEM, "%.400s: out of memory", label);
        return NULL;
    }
    memcpy(c->label, label, ll + 1);
    if (parse_text(text, len, label, NULL, 1, &c->doc, &c->m, e) != DG_OK) {
        dg_cfg_free(c);
        return NULL;
    }
    c->n_m = (size_t)(c->doc.nodes.top - c->doc.nodes.start);
    yaml_node_t *root = yaml_document_get_root_node(&c->doc);
    if (root && is_null(root)) {  /* "---" alone: an empty document */
        yaml_document_delete(&c->doc);
        c->n_m = 0;
        root = NULL;
        if (!yaml_document_initialize(&c->doc, NULL, NULL, NULL, 1, 1)) goto nomem;
    }
    if (root && root->type != YAML_MAPPING_NODE) {
        char got[96];
        describe(root, got, sizeof got);
        node_err(c, ROOT, DG_ERR_CONFIG, e, "the top level must be a map of keys, got %s", got);
        dg_cfg_free(c);
        return NULL;
    }
    if (!root && (!yaml_document_add_mapping(&c->doc, NULL, YAML_BLOCK_MAPPING_STYLE) || !meta_sync(c))) goto nomem;
    c->m[0] = (meta){0, 0, 0};  /* "missing key" at the top level names the file only */
    return c;
nomem:
    dg_err_set(e, DG_ERR_NOMEM, "%.400s: out of memory", label);
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

dg_status dg_cfg_get_f32(dg_cfg *c, const char *path, float *out, float def, dg_err *e) {
    return get(c, path, 0, T_F32, out, &def, e);
}

dg_status dg_cfg_get_f32_req(dg_cfg *c, const char *path, float *out, dg_err *e) {
    return get(c, path, 1, T_F32, out, NULL, e);
}

dg_status dg_cfg_get_f32_range(dg_cfg *c, const char *path, float *out, float def,
                               float lo, float hi, int lo_inclusive, int hi_inclusive, dg_err *e) {
    float v;
    dg_status st = dg_cfg_get_f32(c, path, &v, def, e);
    if (st == DG_OK) st = dg_cfg_check_f32_range(c, path, v, lo, hi, lo_inclusive, hi_inclusive, e);
    if (st == DG_OK) *out = v;
    return st;
}

dg_status dg_cfg_get_int(dg_cfg *c, const char *path, int *out, int def, dg_err *e) {
    return get(c, path, 0, T_INT, out, &def, e);
}

dg_status dg_cfg_get_int_req(dg_cfg *c, const char *path, int *out, dg_err *e) {
    return get(c, path, 1, T_INT, out, NULL, e);
}

dg_status dg_cfg_get_int_range(dg_cfg *c, const char *path, int *out, int def, int lo, int hi, dg_err *e) {
    int v;
    dg_status st = dg_cfg_get_int(c, path, &v, def, e);
    if (st == DG_OK) st = dg_cfg_check_int_range(c, path, v, lo, hi, e);
    if (st == DG_OK) *out = v;
    return st;
}

dg_status dg_cfg_get_bool(dg_cfg *c, const char *path, int *out, int def, dg_err *e) {
    return get(c, path, 0, T_BOOL, out, &def, e);
}

dg_status dg_cfg_get_bool_req(dg_cfg *c, const char *path, int *out, dg_err *e) {
    return get(c, path, 1, T_BOOL, out, NULL, e);
}

dg_status dg_cfg_get_str(dg_cfg *c, const char *path, const char **out, const char *def, dg_err *e) {
    return get(c, path, 0, T_STR, (void *)out, (const void *)&def, e);
}

dg_status dg_cfg_get_str_req(dg_cfg *c, const char *path, const char **out, dg_err *e) {
    return get(c, path, 1, T_STR, (void *)out, NULL, e);
}

dg_status dg_cfg_check_f32_range(dg_cfg *c, const char *path, float v, float lo, float hi,
                                 int lo_inclusive, int hi_inclusive, dg_err *e) {
    if (!c) return dg_err_set(e, DG_ERR_ARG, "config is NULL");
    int ok = (lo_inclusive ? v >= lo : v > lo) && (hi_inclusive ? v <= hi : v < hi);
    if (ok) return DG_OK;
    char interval[96], vt[40];
    fmt_interval(interval, sizeof interval, lo, hi, lo_inclusive, hi_inclusive);
    fmt_g(vt, sizeof vt, v);
    return range_err(c, path, vt, interval, e);
}

dg_status dg_cfg_check_int_range(dg_cfg *c, const char *path, int v, int lo, int hi, dg_err *e) {
    if (!c) return dg_err_set(e, DG_ERR_ARG, "config is NULL");
    if (v >= lo && v <= hi) return DG_OK;
    char interval[96], vt[24];
    if (lo == INT_MIN) snprintf(interval, sizeof interval, "<= %d", hi);
    else if (hi == INT_MAX) snprintf(interval, sizeof interval, ">= %d", lo);
    else snprintf(interval, sizeof interval, "[%d, %d]", lo, hi);
    snprintf(vt, sizeof vt, "%d", v);
    return range_err(c, path, vt, interval, e);
}

dg_status dg_cfg_get_f32_array(dg_cfg *c, const char *path, float *out, int min_n, int max_n,
                               int *n, dg_err *e) {
    int id = 0;
    dg_status st = list_args(out, min_n, max_n, n, e);
    if (st == DG_OK) st = find(c, path, 0, &id, e);
    return st != DG_OK || !id ? st : read_list(c, id, path, 0, out, min_n, max_n, n, e);
}

dg_status dg_cfg_get_int_array(dg_cfg *c, const char *path, int *out, int min_n, int max_n,
                               int *n, dg_err *e) {
    int id = 0;
    dg_status st = list_args(out, min_n, max_n, n, e);
    if (st == DG_OK) st = find(c, path, 0, &id, e);
    return st != DG_OK || !id ? st : read_list(c, id, path, 1, out, min_n, max_n, n, e);
}

dg_status dg_cfg_get_f32_rows(dg_cfg *c, const char *path, float *out, int cols, int min_rows,
                              int max_rows, int *rows, dg_err *e) {
    int id;
    if (cols < 1 || !rows || min_rows < 0 || max_rows < min_rows || (max_rows > 0 && !out) ||
        (size_t)max_rows > SIZE_MAX / sizeof(float) / (size_t)cols)
        return dg_err_set(e, DG_ERR_ARG, "config rows: bad arguments (cols %d, min %d, max %d)", cols, min_rows,
                          max_rows);
    dg_status st = find(c, path, 0, &id, e);
    if (st != DG_OK || !id) return st;
    const yaml_node_t *n = node(c, id);
    if (n->type != YAML_SEQUENCE_NODE) {
        char what[64];
        snprintf(what, sizeof what, "a list of rows of %d numbers", cols);
        return type_err(c, id, path, what, e);
    }
    st = count_check(c, id, path, "row", min_rows, max_rows, e);
    for (int pass = 0; st == DG_OK && pass < 2; pass++) {  /* validate every row before writing any */
        for (size_t r = 0; st == DG_OK && r < n_kids(n); r++) {
            char rpath[PATH_CAP];
            snprintf(rpath, sizeof rpath, "%.200s[%zu]", path, r);
            st = read_list(c, n->data.sequence.items.start[r], rpath, 0, pass ? out + r * (size_t)cols : NULL,
                           cols, cols, NULL, e);
        }
    }
    if (st == DG_OK) *rows = (int)n_kids(n);
    return st;
}

int dg_cfg_has(dg_cfg *c, const char *path) {
    int id = 0;
    return c && walk(c, path, 0, &id, NULL, NULL) == DG_OK && id;
}

int dg_cfg_len(dg_cfg *c, const char *path) {
    int id = 0;
    if (!c || walk(c, path, 0, &id, NULL, NULL) != DG_OK || !id) return -1;
    const yaml_node_t *n = node(c, id);
    if (n->type == YAML_SCALAR_NODE) return is_null(n) ? 0 : -1;
    return n_kids(n) > INT_MAX ? INT_MAX : (int)n_kids(n);
}

const char *dg_cfg_key(dg_cfg *c, const char *path, int i) {
    int id = 0;
    if (!c || i < 0 || walk(c, path, 0, &id, NULL, NULL) != DG_OK || !id) return NULL;
    const yaml_node_t *n = node(c, id);
    if (n->type != YAML_MAPPING_NODE || (size_t)i >= n_kids(n)) return NULL;
    return text_of(node(c, n->data.mapping.pairs.start[i].key));
}

int dg_cfg_line(dg_cfg *c, const char *path, int *col) {
    int id = 0;
    if (col) *col = 0;
    if (!c || walk(c, path, 0, &id, NULL, NULL) != DG_OK || !id || (c->m[id - 1].flags & F_OVERRIDE)) return 0;
    if (col) *col = c->m[id - 1].col;
    return c->m[id - 1].line;
}

dg_status dg_cfg_error(dg_cfg *c, const char *path, dg_err *e, const char *fmt, ...) {
    char body[DG_ERR_LEN];
    int id = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    if (!c) return dg_err_set(e, DG_ERR_CONFIG, "key '%.200s': %s", path ? path : "", body);
    if (walk(c, path, 0, &id, NULL, NULL) != DG_OK) id = 0;
    return node_err(c, id, DG_ERR_CONFIG, e, "key '%.200s': %s", path ? path : "", body);
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

/* The slot holding entry i of map or list parent (re-read after each node added: the nodes move). */
static int *slot_of(dg_cfg *c, int parent, size_t i) {
    yaml_node_t *n = node(c, parent);
    return n->type == YAML_MAPPING_NODE ? &n->data.mapping.pairs.start[i].value : &n->data.sequence.items.start[i];
}

dg_status dg_cfg_set(dg_cfg *c, const char *path, const char *value_text, dg_err *e) {
    if (!c || !path || !value_text) return dg_err_set(e, DG_ERR_ARG, "dg_cfg_set: NULL argument");
    int nsteps = path_steps(path);
    if (nsteps <= 0 || !utf8_valid((const unsigned char *)path, strlen(path)))
        return dg_err_set(e, DG_ERR_CONFIG, CMDLINE ": invalid key '%.200s' (write keys as a.b.c or a.b[0])", path);
    if (nsteps > DG_CFG_MAX_DEPTH)
        return dg_err_set(e, DG_ERR_CONFIG, CMDLINE ": key '%.200s' is nested deeper than %d levels", path,
                          DG_CFG_MAX_DEPTH);
    size_t vlen = strlen(value_text);
    if (!utf8_valid((const unsigned char *)value_text, vlen))
        return dg_err_set(e, DG_ERR_CONFIG, CMDLINE ": key '%.200s': the value is not valid UTF-8", path);

    /* 1: check the key can be set, before changing anything */
    int cur = ROOT, first = 1, creating = 0;
    const char *p = path;
    step s;
    while (next_step(&p, first, &s) == 1) {
        int plen = (int)(s.start - path);
        const yaml_node_t *n = creating ? NULL : node(c, cur);
        first = 0;
        if (!n || is_null(n)) {
            if (s.index)
                return dg_err_set(e, DG_ERR_CONFIG, CMDLINE ": cannot set '%.200s': list '%.*s' does not exist",
                                  path, plen, path);
            creating = 1;
        } else if (n->type == YAML_MAPPING_NODE) {
            if (s.index)
                return dg_err_set(e, DG_ERR_CONFIG, CMDLINE ": cannot set '%.200s': '%.*s' is a map, not a list",
                                  path, plen, path);
            long i = map_index(c, n, s.name, s.nlen);
            if (i < 0) creating = 1;
            else cur = n->data.mapping.pairs.start[i].value;
        } else if (n->type == YAML_SEQUENCE_NODE) {
            if (!s.numeric)
                return dg_err_set(e, DG_ERR_CONFIG, CMDLINE ": cannot set '%.200s': '%.*s' is a list, not a map",
                                  path, plen, path);
            if (s.idx >= n_kids(n))
                return dg_err_set(e, DG_ERR_CONFIG,
                                  CMDLINE ": cannot set '%.200s': '%.*s' has %zu item%s (indices start at 0)",
                                  path, plen, path, n_kids(n), n_kids(n) == 1 ? "" : "s");
            cur = n->data.sequence.items.start[s.idx];
        } else {
            return dg_err_set(e, DG_ERR_CONFIG, CMDLINE ": cannot set '%.200s': '%.*s' is a value, not a map",
                              path, plen, path);
        }
    }

    /* 2: build the new value (a node nothing points to yet) */
    int val = 0;
    const char *t = value_text + strspn(value_text, " \t");
    if (*t == '[' || *t == '{') {
        yaml_document_t tmp;
        dg_status st = parse_text(value_text, vlen, CMDLINE, path, nsteps + 1, &tmp, NULL, e);
        if (st != DG_OK) return st;
        if (!yaml_document_get_root_node(&tmp)) {
            yaml_document_delete(&tmp);
            return dg_err_set(e, DG_ERR_CONFIG, CMDLINE ": key '%.200s': empty value", path);
        }
        val = copy_node(&c->doc, &tmp, ROOT, 0, 0);
        yaml_document_delete(&tmp);
    } else if (vlen <= INT_MAX) {
        val = yaml_document_add_scalar(&c->doc, NULL, (const yaml_char_t *)value_text, (int)vlen,
                                       YAML_PLAIN_SCALAR_STYLE);
    }
    if (!val || !meta_sync(c)) return dg_err_set(e, DG_ERR_NOMEM, CMDLINE ": key '%.200s': out of memory", path);

    /* 3: put it in place, making maps on the way (an empty "env:" becomes a map where it was) */
    cur = ROOT;
    p = path;
    first = 1;
    while (next_step(&p, first, &s) == 1) {
        int last = *p == 0;
        const yaml_node_t *n = node(c, cur);
        first = 0;
        long i = n->type == YAML_MAPPING_NODE ? map_index(c, n, s.name, s.nlen) : (long)s.idx;
        if (i < 0) {  /* a new key */
            int k = yaml_document_add_scalar(&c->doc, NULL, (const yaml_char_t *)s.name, (int)s.nlen,
                                             YAML_PLAIN_SCALAR_STYLE);
            int v = last ? val : k ? yaml_document_add_mapping(&c->doc, NULL, YAML_BLOCK_MAPPING_STYLE) : 0;
            if (!k || !v || !meta_sync(c) || !yaml_document_append_mapping_pair(&c->doc, cur, k, v))
                return dg_err_set(e, DG_ERR_NOMEM, CMDLINE ": key '%.200s': out of memory", path);
            cur = v;
            continue;
        }
        if (last) {
            *slot_of(c, cur, (size_t)i) = val;
            return DG_OK;
        }
        int child = *slot_of(c, cur, (size_t)i);
        if (is_null(node(c, child))) {
            int m = yaml_document_add_mapping(&c->doc, NULL, YAML_BLOCK_MAPPING_STYLE);
            if (!m || !meta_sync(c)) return dg_err_set(e, DG_ERR_NOMEM, CMDLINE ": key '%.200s': out of memory", path);
            c->m[m - 1] = c->m[child - 1];
            *slot_of(c, cur, (size_t)i) = child = m;
        }
        cur = child;
    }
    return DG_OK;
}

dg_status dg_cfg_to_yaml(const dg_cfg *c, char **out, size_t *len, dg_err *e) {
    yaml_emitter_t em;
    yaml_document_t d;
    sbuf b = {0};
    if (!out) return dg_err_set(e, DG_ERR_ARG, "dg_cfg_to_yaml: out is NULL");
    *out = NULL;
    if (len) *len = 0;
    if (!c) return dg_err_set(e, DG_ERR_ARG, "dg_cfg_to_yaml: config is NULL");
    int made = yaml_document_initialize(&d, NULL, NULL, NULL, 1, 1);
    if (!made || !copy_node(&d, (yaml_document_t *)&c->doc, ROOT, 1, 0) || !yaml_emitter_initialize(&em)) {
        if (made) yaml_document_delete(&d);
        return dg_err_set(e, DG_ERR_NOMEM, "%.400s: out of memory", c->label);
    }
    yaml_emitter_set_output(&em, sbuf_write, &b);
    yaml_emitter_set_encoding(&em, YAML_UTF8_ENCODING);
    yaml_emitter_set_unicode(&em, 1);
    yaml_emitter_set_width(&em, -1);  /* never fold long lines */
    yaml_emitter_set_indent(&em, 2);
    int opened = yaml_emitter_open(&em);
    if (!opened) yaml_document_delete(&d);  /* yaml_emitter_dump frees it, written or not */
    int ok = opened && yaml_emitter_dump(&em, &d) && yaml_emitter_close(&em) && yaml_emitter_flush(&em);
    dg_status st = DG_OK;
    if (!ok) {
        if (em.error == YAML_MEMORY_ERROR || em.error == YAML_WRITER_ERROR || em.error == YAML_NO_ERROR)
            st = dg_err_set(e, DG_ERR_NOMEM, "%.400s: out of memory while writing YAML", c->label);
        else
            st = dg_err_set(e, DG_ERR_FORMAT, "%.400s: cannot write YAML: %s", c->label,
                            em.problem ? em.problem : "emitter error");
        free(b.buf);
    } else if (!b.buf && !sbuf_write(&b, (unsigned char *)"", 0)) {
        st = dg_err_set(e, DG_ERR_NOMEM, "%.400s: out of memory while writing YAML", c->label);
    } else {
        *out = b.buf;
        if (len) *len = b.len;
    }
    yaml_emitter_delete(&em);
    return st;
}
