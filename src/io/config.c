/* YAML configs: a node tree built from libyaml events, typed getters that
 * remember which keys they read, command-line overrides and a YAML dump. */
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

enum { N_SCALAR, N_SEQ, N_MAP };

enum {
    F_USED     = 1u << 0,  /* a getter read this node: it and its subtree are known  */
    F_VISITED  = 1u << 1,  /* a getter's path went through this map or list          */
    F_QUOTED   = 1u << 2,  /* quoted or block scalar: a string, never a number       */
    F_NULL     = 1u << 3,  /* plain "", "~" or "null": nothing written               */
    F_OVERRIDE = 1u << 4,  /* made by dg_cfg_set, not read from the file             */
    F_FLOW     = 1u << 5,  /* written [a, b] or {a: b}; dumped the same way          */
};

typedef struct cnode cnode;
struct cnode {
    int      kind;    /* N_SCALAR, N_SEQ or N_MAP                                          */
    unsigned flags;   /* F_*                                                               */
    int      line;    /* 1-based; a map value carries its key's position; 0: command line */
    int      col;
    char    *text;    /* scalar: (len + 1) bytes, NUL-terminated; may hold "\0" escapes    */
    size_t   len;
    cnode  **keys;    /* map: (n) scalar keys in file order                               */
    cnode  **vals;    /* map: (n) values; list: (n) items                                 */
    size_t   n, cap;
};

#define MAX_ASKED 256   /* missing keys remembered for "did you mean" */
#define PATH_CAP  512   /* longest key path shown in a message        */
#define CMDLINE   "command line"

struct dg_cfg {
    char  *label;              /* file path or caller's label                    */
    cnode *root;               /* always a map                                   */
    char  *asked[MAX_ASKED];   /* paths a getter asked for and did not find      */
    int    n_asked;
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

/* Reads one YAML stream into nodes. */
typedef struct parser {
    yaml_parser_t        yp;
    const char          *label;     /* file mode: the name in "FILE:LINE"                   */
    const unsigned char *text;      /* input, for the line of a reader (encoding) error     */
    size_t               len;
    int                  override;  /* parsing a dg_cfg_set value: no lines, F_OVERRIDE    */
    const char          *key;       /* override mode: the key being set                     */
    char                 path[PATH_CAP]; /* path of the node being read, for messages      */
    size_t               plen;
    dg_err              *e;
} parser;

/* Growable output buffer for the emitter. */
typedef struct sbuf {
    char  *buf;
    size_t len, cap;
} sbuf;

/* ------------------------------------------------------- internal helpers */

static cnode *node_new(int kind, int line, int col, unsigned flags) {
    cnode *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    n->kind = kind;
    n->line = line;
    n->col = col;
    n->flags = flags;
    return n;
}

/* Depth is bounded by DG_CFG_MAX_DEPTH (plus one scalar level), so recursion is safe. */
static void node_free(cnode *n) {
    if (!n) return;
    for (size_t i = 0; i < n->n; i++) {
        if (n->keys) node_free(n->keys[i]);
        node_free(n->vals[i]);
    }
    free(n->keys);
    free(n->vals);
    free(n->text);
    free(n);
}

/* 1 for plain text that YAML reads as null. */
static int is_null_text(const char *s, size_t n) {
    return n == 0 || (n == 1 && s[0] == '~') ||
           (n == 4 && (!memcmp(s, "null", 4) || !memcmp(s, "Null", 4) || !memcmp(s, "NULL", 4)));
}

static cnode *scalar_new(const char *s, size_t len, int quoted, int line, int col, unsigned flags) {
    cnode *n = node_new(N_SCALAR, line, col, flags);
    if (!n) return NULL;
    n->text = malloc(len + 1);
    if (!n->text) { free(n); return NULL; }
    if (len) memcpy(n->text, s, len);
    n->text[len] = 0;
    n->len = len;
    if (quoted) n->flags |= F_QUOTED;
    else if (is_null_text(s, len)) n->flags |= F_NULL;
    return n;
}

/* Appends an item (key NULL) or a map entry; on failure the caller still owns key and val. */
static int node_push(cnode *n, cnode *key, cnode *val) {
    if (n->n == n->cap) {
        size_t cap = n->cap ? n->cap * 2 : 4;
        if (cap > SIZE_MAX / sizeof(cnode *)) return 0;
        cnode **v = realloc(n->vals, cap * sizeof *v);
        if (!v) return 0;
        n->vals = v;
        if (n->kind == N_MAP) {
            cnode **k = realloc(n->keys, cap * sizeof *k);
            if (!k) return 0;
            n->keys = k;
        }
        n->cap = cap;
    }
    if (n->kind == N_MAP) n->keys[n->n] = key;
    n->vals[n->n++] = val;
    return 1;
}

static size_t map_index(const cnode *m, const char *name, size_t nlen) {
    for (size_t i = 0; i < m->n; i++)
        if (m->keys[i]->len == nlen && !memcmp(m->keys[i]->text, name, nlen)) return i;
    return SIZE_MAX;
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
static void describe(const cnode *n, char *buf, size_t cap) {
    char t[64];
    size_t p = 0;
    if (!n) { snprintf(buf, cap, "nothing"); return; }
    if (n->kind == N_MAP) { snprintf(buf, cap, "a map"); return; }
    if (n->kind == N_SEQ) { snprintf(buf, cap, "a list"); return; }
    if (n->flags & F_NULL) { snprintf(buf, cap, "nothing"); return; }
    put_clean(t, sizeof t, &p, n->text, n->len);
    if (n->flags & F_QUOTED) snprintf(buf, cap, "the quoted string \"%s\"", t);
    else snprintf(buf, cap, "'%s'", t);
}

/* Where a node is, for messages: "FILE:LINE", "command line", or "FILE" (no node). */
static void where(const dg_cfg *c, const cnode *n, char *buf, size_t cap) {
    if (n && (n->flags & F_OVERRIDE)) snprintf(buf, cap, CMDLINE);
    else if (n && n->line > 0) snprintf(buf, cap, "%.400s:%d", c->label, n->line);
    else snprintf(buf, cap, "%.400s", c->label);
}

/* Sets e to "WHERE: <fmt>" with WHERE taken from node n; returns st. */
static dg_status node_err(const dg_cfg *c, const cnode *n, dg_status st, dg_err *e, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
static dg_status node_err(const dg_cfg *c, const cnode *n, dg_status st, dg_err *e, const char *fmt, ...) {
    char loc[448], body[DG_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    where(c, n, loc, sizeof loc);
    return dg_err_set(e, st, "%s: %s", loc, body);
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

/* Finds the node at path. Returns DG_OK with *out NULL when a key on the way is missing (*deepest:
 * the last node found), or an error when the path is malformed or runs into a scalar. An empty
 * ("env:") value reads as an empty map. Marks the maps and lists passed through when mark. */
static dg_status walk(dg_cfg *c, const char *path, int mark, cnode **out, cnode **deepest, dg_err *e) {
    cnode *cur = c->root;
    *out = NULL;
    if (deepest) *deepest = cur;
    if (!path || path_steps(path) < 0)
        return dg_err_set(e, DG_ERR_ARG, "%.400s: invalid config key '%.64s'", c->label, path ? path : "(null)");
    const char *p = path;
    step s;
    int first = 1;
    while (next_step(&p, first, &s) == 1) {
        first = 0;
        cnode *child = NULL;
        int plen = (int)(s.start - path);
        if (cur->kind == N_MAP) {
            if (s.index) return node_err(c, cur, DG_ERR_CONFIG, e, "key '%.*s': expected a list, got a map", plen, path);
            size_t i = map_index(cur, s.name, s.nlen);
            if (i != SIZE_MAX) child = cur->vals[i];
        } else if (cur->kind == N_SEQ) {
            if (!s.numeric) return node_err(c, cur, DG_ERR_CONFIG, e, "key '%.*s': expected a map, got a list", plen, path);
            if (s.idx < cur->n) child = cur->vals[s.idx];
        } else if (!(cur->flags & F_NULL)) {
            char got[96];
            describe(cur, got, sizeof got);
            return node_err(c, cur, DG_ERR_CONFIG, e, "key '%.*s': expected a %s, got %s", plen, path,
                            s.index ? "list" : "map", got);
        }
        if (mark) cur->flags |= F_VISITED;
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

/* The node a getter reads: marks it used; *out NULL when missing (an error when req). */
static dg_status get_node(dg_cfg *c, const char *path, int req, cnode **out, dg_err *e) {
    cnode *deep = NULL;
    *out = NULL;
    if (!c) return dg_err_set(e, DG_ERR_ARG, "config is NULL");
    dg_status st = walk(c, path, 1, out, &deep, e);
    if (st != DG_OK) return st;
    if (!*out) {
        remember_missing(c, path);
        if (req) return node_err(c, deep, DG_ERR_CONFIG, e, "missing required key '%.200s'", path);
        return DG_OK;
    }
    (*out)->flags |= F_USED;
    return DG_OK;
}

/* Sets e to "WHERE: key 'path': expected <what>, got <n>". */
static dg_status type_err(const dg_cfg *c, const cnode *n, const char *path, const char *what, dg_err *e) {
    char got[96];
    describe(n, got, sizeof got);
    return node_err(c, n, DG_ERR_CONFIG, e, "key '%.200s': expected %s, got %s", path, what, got);
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

/* Converts a scalar to a finite float; on failure sets e with path shown as given. */
static dg_status conv_f32(const dg_cfg *c, const cnode *n, const char *path, float *out, dg_err *e) {
    if (n->kind != N_SCALAR || (n->flags & (F_NULL | F_QUOTED))) return type_err(c, n, path, "a number", e);
    if (is_nonfinite_text(n->text, n->len)) return type_err(c, n, path, "a finite number", e);
    if (!is_decimal(n->text, n->len)) return type_err(c, n, path, "a number", e);
    c_numeric cn;
    c_numeric_begin(&cn);
    errno = 0;
    double d = strtod(n->text, NULL);
    c_numeric_end(&cn);
    if (!isfinite(d)) return type_err(c, n, path, "a finite number", e);
    if (fabs(d) > FLT_MAX) return type_err(c, n, path, "a finite number within the 32-bit float range", e);
    *out = (float)d;
    return DG_OK;
}

static dg_status conv_int(const dg_cfg *c, const cnode *n, const char *path, int *out, dg_err *e) {
    if (n->kind != N_SCALAR || (n->flags & (F_NULL | F_QUOTED))) return type_err(c, n, path, "an integer", e);
    size_t i = 0;
    if (i < n->len && (n->text[i] == '+' || n->text[i] == '-')) i++;
    if (i == n->len) return type_err(c, n, path, "an integer", e);
    for (; i < n->len; i++)
        if (n->text[i] < '0' || n->text[i] > '9') return type_err(c, n, path, "an integer", e);
    errno = 0;
    long long v = strtoll(n->text, NULL, 10);
    if (errno == ERANGE || v < INT_MIN || v > INT_MAX) {
        char got[96];
        describe(n, got, sizeof got);
        return node_err(c, n, DG_ERR_CONFIG, e, "key '%.200s': %s is out of the integer range [%d, %d]",
                        path, got, INT_MIN, INT_MAX);
    }
    *out = (int)v;
    return DG_OK;
}

static dg_status conv_bool(const dg_cfg *c, const cnode *n, const char *path, int *out, dg_err *e) {
    static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
    static const char *const no[]  = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"};
    if (n->kind == N_SCALAR && !(n->flags & (F_NULL | F_QUOTED))) {
        for (size_t k = 0; k < sizeof yes / sizeof yes[0]; k++) {
            if (n->len == strlen(yes[k]) && !memcmp(n->text, yes[k], n->len)) { *out = 1; return DG_OK; }
            if (n->len == strlen(no[k]) && !memcmp(n->text, no[k], n->len)) { *out = 0; return DG_OK; }
        }
    }
    return type_err(c, n, path, "true or false", e);
}

/* A scalar as a C string: not null, no NUL bytes inside. */
static dg_status conv_str(const dg_cfg *c, const cnode *n, const char *path, const char **out, dg_err *e) {
    if (n->kind != N_SCALAR || (n->flags & F_NULL)) return type_err(c, n, path, "a string", e);
    if (strlen(n->text) != n->len)
        return node_err(c, n, DG_ERR_CONFIG, e, "key '%.200s': expected a string without NUL characters", path);
    *out = n->text;
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
    cnode *n = NULL;
    dg_status st = walk(c, path, 0, &n, NULL, e);
    if (st != DG_OK) return st;
    if (!n)
        return node_err(c, NULL, DG_ERR_ARG, e, "key '%.200s': default %s is out of range, expected %s",
                        path, vtext, interval);
    char got[96];
    if (n->kind == N_SCALAR && !(n->flags & F_NULL)) {
        size_t p = 0;
        put_clean(got, sizeof got, &p, n->text, n->len);
    } else {
        snprintf(got, sizeof got, "%s", vtext);
    }
    return node_err(c, n, DG_ERR_CONFIG, e, "key '%.200s': %s is out of range, expected %s", path, got, interval);
}

/* Checks the count arguments of the list getters. */
static dg_status list_args(const void *out, int min_n, int max_n, const int *n, dg_err *e) {
    if (min_n < 0 || max_n < min_n || (max_n > 0 && !out) || (!n && min_n != max_n))
        return dg_err_set(e, DG_ERR_ARG, "config list: bad arguments (min %d, max %d)", min_n, max_n);
    return DG_OK;
}

/* Reads a list of f32 (is_int 0) or int (is_int 1) items from node n into out; see the header. */
static dg_status read_list(dg_cfg *c, const cnode *n, const char *path, int is_int, void *out,
                           int min_n, int max_n, int *count, dg_err *e) {
    const char *noun1 = is_int ? "integer" : "number", *nouns = is_int ? "integers" : "numbers";
    if (n->kind != N_SEQ) {
        char what[64];
        snprintf(what, sizeof what, "a list of %s", nouns);
        return type_err(c, n, path, what, e);
    }
    if (n->n < (size_t)min_n || n->n > (size_t)max_n) {
        if (min_n == max_n)
            return node_err(c, n, DG_ERR_CONFIG, e, "key '%.200s': expected %d %s, got %zu", path, min_n,
                            min_n == 1 ? noun1 : nouns, n->n);
        if (min_n == 0)
            return node_err(c, n, DG_ERR_CONFIG, e, "key '%.200s': expected at most %d %s, got %zu", path, max_n,
                            max_n == 1 ? noun1 : nouns, n->n);
        return node_err(c, n, DG_ERR_CONFIG, e, "key '%.200s': expected %d to %d %s, got %zu", path, min_n, max_n,
                        nouns, n->n);
    }
    /* check every item first, so a bad item leaves out (the caller's default) untouched;
     * out NULL: check only */
    for (int pass = 0; pass < (out ? 2 : 1); pass++) {
        for (size_t i = 0; i < n->n; i++) {
            char ipath[PATH_CAP];
            snprintf(ipath, sizeof ipath, "%.200s[%zu]", path, i);
            float f;
            int v;
            dg_status st = is_int ? conv_int(c, n->vals[i], ipath, &v, e) : conv_f32(c, n->vals[i], ipath, &f, e);
            if (st != DG_OK) return st;
            if (pass == 1) {
                if (is_int) ((int *)out)[i] = v;
                else ((float *)out)[i] = f;
            }
        }
    }
    if (count) *count = (int)n->n;
    return DG_OK;
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

/* Finds the first unread entry under n (which was visited, not used), in file order. */
static dg_status unused_in(const dg_cfg *c, const cnode *n, char *path, size_t plen, dg_err *e) {
    for (size_t i = 0; i < n->n; i++) {
        const cnode *v = n->vals[i];
        size_t p = plen;
        if (n->kind == N_MAP) {
            if (p > 0) put_clean(path, PATH_CAP, &p, ".", 1);
            put_clean(path, PATH_CAP, &p, n->keys[i]->text, n->keys[i]->len);
        } else {
            char ix[32];
            snprintf(ix, sizeof ix, "[%zu]", i);
            put_clean(path, PATH_CAP, &p, ix, strlen(ix));
        }
        if (!(v->flags & (F_USED | F_VISITED))) {
            if (n->kind == N_SEQ) return node_err(c, v, DG_ERR_CONFIG, e, "unused list item '%s'", path);
            const cnode *k = n->keys[i];
            const char *hint = suggest(c, path, plen, k->text, k->len);
            if (hint) return node_err(c, k, DG_ERR_CONFIG, e, "unknown key '%s' (did you mean '%.200s'?)", path, hint);
            return node_err(c, k, DG_ERR_CONFIG, e, "unknown key '%s'", path);
        }
        if (!(v->flags & F_USED) && v->kind != N_SCALAR) {
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

/* ----------------------------------------------------------- the parser */

static int mark_line(size_t zero_based) {
    return zero_based >= (size_t)INT_MAX ? INT_MAX : (int)zero_based + 1;
}

/* Sets e to "FILE:LINE: <fmt>" (file) or "command line: <fmt>" (a dg_cfg_set value); returns st. */
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
static dg_status syntax_error(parser *p) {
    yaml_parser_t *y = &p->yp;
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

static dg_status next_event(parser *p, yaml_event_t *ev) {
    if (!yaml_parser_parse(&p->yp, ev)) return syntax_error(p);
    return DG_OK;
}

/* Rejects anchors and tags on a node. */
static dg_status check_props(parser *p, int line, const yaml_char_t *anchor, const yaml_char_t *tag) {
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

/* Appends ".key" or "[i]" to the path being read; returns the old length to restore. */
static size_t path_push(parser *p, const char *s, size_t n, int is_key) {
    size_t old = p->plen;
    if (is_key && p->plen > 0) put_clean(p->path, PATH_CAP, &p->plen, ".", 1);
    put_clean(p->path, PATH_CAP, &p->plen, s, n);
    return old;
}

static void path_pop(parser *p, size_t old) {
    p->plen = old;
    p->path[old] = 0;
}

typedef struct key_ix {
    const cnode *k;
    size_t i;
} key_ix;

static int key_ix_cmp(const void *a, const void *b) {
    const key_ix *x = a, *y = b;
    size_t n = x->k->len < y->k->len ? x->k->len : y->k->len;
    int r = memcmp(x->k->text, y->k->text, n);
    if (r) return r;
    if (x->k->len != y->k->len) return x->k->len < y->k->len ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Reports the first repeated key of map m (in file order), naming both lines. O(n log n). */
static dg_status check_duplicates(parser *p, const cnode *m) {
    if (m->n < 2) return DG_OK;
    key_ix *ix = malloc(m->n * sizeof *ix);
    if (!ix) return perr(p, DG_ERR_NOMEM, 0, "out of memory while reading YAML");
    for (size_t i = 0; i < m->n; i++) { ix[i].k = m->keys[i]; ix[i].i = i; }
    qsort(ix, m->n, sizeof *ix, key_ix_cmp);
    size_t dup = SIZE_MAX, first = 0, run = 0;
    for (size_t j = 1; j < m->n; j++) {
        if (key_ix_cmp(&(key_ix){ix[j].k, 0}, &(key_ix){ix[run].k, 0}) != 0) { run = j; continue; }
        if (ix[j].i < dup) { dup = ix[j].i; first = ix[run].i; }
    }
    free(ix);
    if (dup == SIZE_MAX) return DG_OK;
    const cnode *k = m->keys[dup];
    size_t old = path_push(p, k->text, k->len, 1);
    dg_status st = p->override
        ? perr(p, DG_ERR_CONFIG, 0, "duplicate key '%s'", p->path)
        : perr(p, DG_ERR_CONFIG, k->line, "duplicate key '%s' (first at line %d)", p->path, m->keys[first]->line);
    path_pop(p, old);
    return st;
}

/* Builds the node that starts with event ev (which this function deletes) at nesting depth. */
static dg_status parse_node(parser *p, yaml_event_t *ev, int depth, cnode **out) {
    dg_status st = DG_OK;
    cnode *n = NULL;
    int line = p->override ? 0 : mark_line(ev->start_mark.line);
    int col = p->override ? 0 : mark_line(ev->start_mark.column);
    unsigned fl = p->override ? F_OVERRIDE : 0;
    *out = NULL;
    switch (ev->type) {
    case YAML_ALIAS_EVENT: {
        char t[64];
        size_t k = 0;
        put_clean(t, sizeof t, &k, (const char *)ev->data.alias.anchor, strlen((const char *)ev->data.alias.anchor));
        st = perr(p, DG_ERR_CONFIG, line, "aliases (*%s) are not supported; write the value out", t);
        break;
    }
    case YAML_SCALAR_EVENT:
        st = check_props(p, line, ev->data.scalar.anchor, ev->data.scalar.tag);
        if (st != DG_OK) break;
        n = scalar_new((const char *)ev->data.scalar.value, ev->data.scalar.length,
                       ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE, line, col, fl);
        if (!n) st = perr(p, DG_ERR_NOMEM, 0, "out of memory while reading YAML");
        break;
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        int is_map = ev->type == YAML_MAPPING_START_EVENT;
        st = is_map ? check_props(p, line, ev->data.mapping_start.anchor, ev->data.mapping_start.tag)
                    : check_props(p, line, ev->data.sequence_start.anchor, ev->data.sequence_start.tag);
        if (st != DG_OK) break;
        if (depth > DG_CFG_MAX_DEPTH) {
            st = perr(p, DG_ERR_CONFIG, line, "nesting deeper than %d levels", DG_CFG_MAX_DEPTH);
            break;
        }
        int flow = is_map ? ev->data.mapping_start.style == YAML_FLOW_MAPPING_STYLE
                          : ev->data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE;
        n = node_new(is_map ? N_MAP : N_SEQ, line, col, fl | (flow ? F_FLOW : 0));
        if (!n) { st = perr(p, DG_ERR_NOMEM, 0, "out of memory while reading YAML"); break; }
        yaml_event_type_t end = is_map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT;
        for (;;) {
            yaml_event_t child;
            yaml_event_delete(ev);  /* done with the start event (deleting twice is harmless) */
            if ((st = next_event(p, &child)) != DG_OK) break;
            if (child.type == end) { yaml_event_delete(&child); break; }
            cnode *key = NULL, *val = NULL;
            if (is_map) {
                if (child.type != YAML_SCALAR_EVENT && child.type != YAML_ALIAS_EVENT) {
                    st = perr(p, DG_ERR_CONFIG, p->override ? 0 : mark_line(child.start_mark.line),
                              "map keys must be plain values, not lists or maps");
                    yaml_event_delete(&child);
                    break;
                }
                if ((st = parse_node(p, &child, depth + 1, &key)) != DG_OK) break;
                if ((st = next_event(p, &child)) != DG_OK) { node_free(key); break; }
                size_t old = path_push(p, key->text, key->len, 1);
                st = parse_node(p, &child, depth + 1, &val);
                path_pop(p, old);
                if (st != DG_OK) { node_free(key); break; }
                val->line = key->line;  /* errors about a value point at its key */
                val->col = key->col;
            } else {
                char ix[32];
                snprintf(ix, sizeof ix, "[%zu]", n->n);
                size_t old = path_push(p, ix, strlen(ix), 0);
                st = parse_node(p, &child, depth + 1, &val);
                path_pop(p, old);
                if (st != DG_OK) break;
            }
            if (!node_push(n, key, val)) {
                node_free(key);
                node_free(val);
                st = perr(p, DG_ERR_NOMEM, 0, "out of memory while reading YAML");
                break;
            }
        }
        if (st == DG_OK && is_map) st = check_duplicates(p, n);
        break;
    }
    default:
        st = perr(p, DG_ERR_CONFIG, line, "unexpected YAML structure");
        break;
    }
    yaml_event_delete(ev);
    if (st != DG_OK) { node_free(n); return st; }
    *out = n;
    return DG_OK;
}

/* Reads a whole stream: nothing (NULL root), or one document whose root node starts at depth. */
static dg_status parse_stream(parser *p, int depth, cnode **out) {
    yaml_event_t ev;
    dg_status st;
    cnode *root = NULL;
    *out = NULL;
    if ((st = next_event(p, &ev)) != DG_OK) return st;  /* stream start */
    yaml_event_delete(&ev);
    if ((st = next_event(p, &ev)) != DG_OK) return st;
    if (ev.type == YAML_STREAM_END_EVENT) { yaml_event_delete(&ev); return DG_OK; }
    yaml_event_delete(&ev);  /* document start */
    if ((st = next_event(p, &ev)) != DG_OK) return st;
    if ((st = parse_node(p, &ev, depth, &root)) != DG_OK) return st;
    if ((st = next_event(p, &ev)) != DG_OK) goto fail;  /* document end */
    yaml_event_delete(&ev);
    if ((st = next_event(p, &ev)) != DG_OK) goto fail;
    if (ev.type != YAML_STREAM_END_EVENT) {
        int line = mark_line(ev.start_mark.line);
        yaml_event_delete(&ev);
        st = perr(p, DG_ERR_CONFIG, line, "only one YAML document is allowed (a second one starts here)");
        goto fail;
    }
    yaml_event_delete(&ev);
    *out = root;
    return DG_OK;
fail:
    node_free(root);
    return st;
}

/* Parses text into nodes; in override mode for the value of dg_cfg_set at key. */
static dg_status parse_text(const char *text, size_t len, const char *label, int override, const char *key,
                            int depth, cnode **out, dg_err *e) {
    parser p;
    memset(&p, 0, sizeof p);
    p.label = label;
    p.text = (const unsigned char *)text;
    p.len = len;
    p.override = override;
    p.key = key;
    p.e = e;
    if (override) {
        size_t k = 0;
        put_clean(p.path, PATH_CAP, &k, key, strlen(key));
        p.plen = k;
    }
    if (!yaml_parser_initialize(&p.yp)) return perr(&p, DG_ERR_NOMEM, 0, "out of memory while reading YAML");
    yaml_parser_set_input_string(&p.yp, (const unsigned char *)(text ? text : ""), text ? len : 0);
    yaml_parser_set_encoding(&p.yp, YAML_UTF8_ENCODING);
    dg_status st = parse_stream(&p, depth, out);
    yaml_parser_delete(&p.yp);
    return st;
}

/* ---------------------------------------------------------- the emitter */

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

static int emit_scalar(yaml_emitter_t *em, const char *text, size_t len, int quoted) {
    yaml_event_t ev;
    if (len > INT_MAX) return 0;
    if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)len, 1, 1,
                                      quoted ? YAML_SINGLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE))
        return 0;
    return yaml_emitter_emit(em, &ev);
}

/* Emits a node; quoted scalars stay quoted (so "5" stays a string; libyaml switches to double
 * quotes when single ones cannot hold the text), nulls become "null". */
static int emit_node(yaml_emitter_t *em, const cnode *n) {
    yaml_event_t ev;
    if (n->kind == N_SCALAR) {
        if (n->flags & F_NULL) return emit_scalar(em, "null", 4, 0);
        return emit_scalar(em, n->text, n->len, (n->flags & F_QUOTED) != 0);
    }
    int flow = (n->flags & F_FLOW) != 0;
    if (n->kind == N_MAP) {
        if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
                                                 flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE) ||
            !yaml_emitter_emit(em, &ev))
            return 0;
        for (size_t i = 0; i < n->n; i++) {
            const cnode *k = n->keys[i];
            if (!emit_scalar(em, k->text, k->len, (k->flags & F_QUOTED) != 0)) return 0;
            if (!emit_node(em, n->vals[i])) return 0;
        }
        return yaml_mapping_end_event_initialize(&ev) && yaml_emitter_emit(em, &ev);
    }
    if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
                                              flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE) ||
        !yaml_emitter_emit(em, &ev))
        return 0;
    for (size_t i = 0; i < n->n; i++)
        if (!emit_node(em, n->vals[i])) return 0;
    return yaml_sequence_end_event_initialize(&ev) && yaml_emitter_emit(em, &ev);
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
    cnode *root = NULL;
    if (parse_text(text, len, label, 0, NULL, 1, &root, e) != DG_OK) {
        dg_cfg_free(c);
        return NULL;
    }
    if (root && root->kind == N_SCALAR && (root->flags & F_NULL)) {  /* "---" alone: an empty document */
        node_free(root);
        root = NULL;
    }
    if (root && root->kind != N_MAP) {
        char got[96];
        describe(root, got, sizeof got);
        node_err(c, root, DG_ERR_CONFIG, e, "the top level must be a map of keys, got %s", got);
        node_free(root);
        dg_cfg_free(c);
        return NULL;
    }
    if (!root && !(root = node_new(N_MAP, 0, 0, 0))) {
        dg_err_set(e, DG_ERR_NOMEM, "%.400s: out of memory", label);
        dg_cfg_free(c);
        return NULL;
    }
    root->line = root->col = 0;  /* "missing key" at the top level names the file only */
    c->root = root;
    return c;
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
    node_free(c->root);
    for (int i = 0; i < c->n_asked; i++) free(c->asked[i]);
    free(c->label);
    free(c);
}

const char *dg_cfg_path(const dg_cfg *c) {
    return c ? c->label : "";
}

dg_status dg_cfg_get_f32(dg_cfg *c, const char *path, float *out, float def, dg_err *e) {
    cnode *n;
    float v = def;
    dg_status st = get_node(c, path, 0, &n, e);
    if (st == DG_OK && n) st = conv_f32(c, n, path, &v, e);
    if (st == DG_OK) *out = v;
    return st;
}

dg_status dg_cfg_get_f32_req(dg_cfg *c, const char *path, float *out, dg_err *e) {
    cnode *n;
    dg_status st = get_node(c, path, 1, &n, e);
    return st != DG_OK ? st : conv_f32(c, n, path, out, e);
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
    cnode *n;
    int v = def;
    dg_status st = get_node(c, path, 0, &n, e);
    if (st == DG_OK && n) st = conv_int(c, n, path, &v, e);
    if (st == DG_OK) *out = v;
    return st;
}

dg_status dg_cfg_get_int_req(dg_cfg *c, const char *path, int *out, dg_err *e) {
    cnode *n;
    dg_status st = get_node(c, path, 1, &n, e);
    return st != DG_OK ? st : conv_int(c, n, path, out, e);
}

dg_status dg_cfg_get_int_range(dg_cfg *c, const char *path, int *out, int def, int lo, int hi, dg_err *e) {
    int v;
    dg_status st = dg_cfg_get_int(c, path, &v, def, e);
    if (st == DG_OK) st = dg_cfg_check_int_range(c, path, v, lo, hi, e);
    if (st == DG_OK) *out = v;
    return st;
}

dg_status dg_cfg_get_bool(dg_cfg *c, const char *path, int *out, int def, dg_err *e) {
    cnode *n;
    int v = def;
    dg_status st = get_node(c, path, 0, &n, e);
    if (st == DG_OK && n) st = conv_bool(c, n, path, &v, e);
    if (st == DG_OK) *out = v;
    return st;
}

dg_status dg_cfg_get_bool_req(dg_cfg *c, const char *path, int *out, dg_err *e) {
    cnode *n;
    dg_status st = get_node(c, path, 1, &n, e);
    return st != DG_OK ? st : conv_bool(c, n, path, out, e);
}

dg_status dg_cfg_get_str(dg_cfg *c, const char *path, const char **out, const char *def, dg_err *e) {
    cnode *n;
    const char *v = def;
    dg_status st = get_node(c, path, 0, &n, e);
    if (st == DG_OK && n) st = conv_str(c, n, path, &v, e);
    if (st == DG_OK) *out = v;
    return st;
}

dg_status dg_cfg_get_str_req(dg_cfg *c, const char *path, const char **out, dg_err *e) {
    cnode *n;
    dg_status st = get_node(c, path, 1, &n, e);
    return st != DG_OK ? st : conv_str(c, n, path, out, e);
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
    cnode *node;
    dg_status st = list_args(out, min_n, max_n, n, e);
    if (st == DG_OK) st = get_node(c, path, 0, &node, e);
    if (st != DG_OK || !node) return st;
    return read_list(c, node, path, 0, out, min_n, max_n, n, e);
}

dg_status dg_cfg_get_int_array(dg_cfg *c, const char *path, int *out, int min_n, int max_n,
                               int *n, dg_err *e) {
    cnode *node;
    dg_status st = list_args(out, min_n, max_n, n, e);
    if (st == DG_OK) st = get_node(c, path, 0, &node, e);
    if (st != DG_OK || !node) return st;
    return read_list(c, node, path, 1, out, min_n, max_n, n, e);
}

dg_status dg_cfg_get_f32_rows(dg_cfg *c, const char *path, float *out, int cols, int min_rows,
                              int max_rows, int *rows, dg_err *e) {
    cnode *n;
    if (cols < 1 || !rows || min_rows < 0 || max_rows < min_rows || (max_rows > 0 && !out) ||
        (size_t)max_rows > SIZE_MAX / sizeof(float) / (size_t)cols)
        return dg_err_set(e, DG_ERR_ARG, "config rows: bad arguments (cols %d, min %d, max %d)", cols, min_rows,
                          max_rows);
    dg_status st = get_node(c, path, 0, &n, e);
    if (st != DG_OK || !n) return st;
    if (n->kind != N_SEQ) {
        char what[64];
        snprintf(what, sizeof what, "a list of rows of %d numbers", cols);
        return type_err(c, n, path, what, e);
    }
    if (n->n < (size_t)min_rows || n->n > (size_t)max_rows) {
        if (min_rows == max_rows)
            return node_err(c, n, DG_ERR_CONFIG, e, "key '%.200s': expected %d row%s, got %zu", path, min_rows,
                            min_rows == 1 ? "" : "s", n->n);
        if (min_rows == 0)
            return node_err(c, n, DG_ERR_CONFIG, e, "key '%.200s': expected at most %d row%s, got %zu", path,
                            max_rows, max_rows == 1 ? "" : "s", n->n);
        return node_err(c, n, DG_ERR_CONFIG, e, "key '%.200s': expected %d to %d rows, got %zu", path, min_rows,
                        max_rows, n->n);
    }
    /* validate every row before writing any */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t r = 0; r < n->n; r++) {
            char rpath[PATH_CAP];
            snprintf(rpath, sizeof rpath, "%.200s[%zu]", path, r);
            st = read_list(c, n->vals[r], rpath, 0, pass ? out + r * (size_t)cols : NULL, cols, cols, NULL, e);
            if (st != DG_OK) return st;
        }
    }
    *rows = (int)n->n;
    return DG_OK;
}

int dg_cfg_has(dg_cfg *c, const char *path) {
    cnode *n = NULL;
    return c && walk(c, path, 0, &n, NULL, NULL) == DG_OK && n != NULL;
}

int dg_cfg_len(dg_cfg *c, const char *path) {
    cnode *n = NULL;
    if (!c || walk(c, path, 0, &n, NULL, NULL) != DG_OK || !n) return -1;
    if (n->kind == N_SCALAR) return (n->flags & F_NULL) ? 0 : -1;
    return n->n > INT_MAX ? INT_MAX : (int)n->n;
}

const char *dg_cfg_key(dg_cfg *c, const char *path, int i) {
    cnode *n = NULL;
    if (!c || i < 0 || walk(c, path, 0, &n, NULL, NULL) != DG_OK || !n || n->kind != N_MAP) return NULL;
    return (size_t)i < n->n ? n->keys[i]->text : NULL;
}

int dg_cfg_line(dg_cfg *c, const char *path, int *col) {
    cnode *n = NULL;
    if (col) *col = 0;
    if (!c || walk(c, path, 0, &n, NULL, NULL) != DG_OK || !n || (n->flags & F_OVERRIDE)) return 0;
    if (col) *col = n->col;
    return n->line;
}

dg_status dg_cfg_error(dg_cfg *c, const char *path, dg_err *e, const char *fmt, ...) {
    char body[DG_ERR_LEN];
    cnode *n = NULL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    if (!c) return dg_err_set(e, DG_ERR_CONFIG, "key '%.200s': %s", path ? path : "", body);
    if (walk(c, path, 0, &n, NULL, NULL) != DG_OK) n = NULL;
    return node_err(c, n, DG_ERR_CONFIG, e, "key '%.200s': %s", path ? path : "", body);
}

void dg_cfg_mark_used(dg_cfg *c, const char *path) {
    cnode *n = NULL;
    if (c && walk(c, path, 1, &n, NULL, NULL) == DG_OK && n) n->flags |= F_USED;
}

dg_status dg_cfg_check_unused(dg_cfg *c, dg_err *e) {
    char path[PATH_CAP] = "";
    if (!c) return dg_err_set(e, DG_ERR_ARG, "config is NULL");
    if (c->root->flags & F_USED) return DG_OK;
    return unused_in(c, c->root, path, 0, e);
}

dg_status dg_cfg_set(dg_cfg *c, const char *path, const char *value_text, dg_err *e) {
    if (!c || !path || !value_text) return dg_err_set(e, DG_ERR_ARG, "dg_cfg_set: NULL argument");
    int nsteps = path_steps(path);
    if (nsteps <= 0 || !utf8_valid((const unsigned char *)path, strlen(path)))
        return dg_err_set(e, DG_ERR_CONFIG, CMDLINE ": invalid key '%.200s' (write keys as a.b.c or a.b[0])", path);
    if (nsteps > DG_CFG_MAX_DEPTH)
        return dg_err_set(e, DG_ERR_CONFIG, CMDLINE ": key '%.200s' is nested deeper than %d levels", path,
                          DG_CFG_MAX_DEPTH);
    if (!utf8_valid((const unsigned char *)value_text, strlen(value_text)))
        return dg_err_set(e, DG_ERR_CONFIG, CMDLINE ": key '%.200s': the value is not valid UTF-8", path);

    /* 1: check the key can be set, before changing anything */
    cnode *cur = c->root;
    const char *p = path;
    step s;
    int first = 1, creating = 0;
    while (next_step(&p, first, &s) == 1) {
        int plen = (int)(s.start - path);
        first = 0;
        if (creating || (cur->kind == N_SCALAR && (cur->flags & F_NULL))) {
            if (s.index)
                return dg_err_set(e, DG_ERR_CONFIG, CMDLINE ": cannot set '%.200s': list '%.*s' does not exist",
                                  path, plen, path);
            creating = 1;
        } else if (cur->kind == N_MAP) {
            if (s.index)
                return dg_err_set(e, DG_ERR_CONFIG, CMDLINE ": cannot set '%.200s': '%.*s' is a map, not a list",
                                  path, plen, path);
            size_t i = map_index(cur, s.name, s.nlen);
            if (i == SIZE_MAX) creating = 1;
            else cur = cur->vals[i];
        } else if (cur->kind == N_SEQ) {
            if (!s.numeric)
                return dg_err_set(e, DG_ERR_CONFIG, CMDLINE ": cannot set '%.200s': '%.*s' is a list, not a map",
                                  path, plen, path);
            if (s.idx >= cur->n)
                return dg_err_set(e, DG_ERR_CONFIG,
                                  CMDLINE ": cannot set '%.200s': '%.*s' has %zu item%s (indices start at 0)",
                                  path, plen, path, cur->n, cur->n == 1 ? "" : "s");
            cur = cur->vals[s.idx];
        } else {
            return dg_err_set(e, DG_ERR_CONFIG, CMDLINE ": cannot set '%.200s': '%.*s' is a value, not a map",
                              path, plen, path);
        }
    }

    /* 2: build the new value */
    cnode *val = NULL;
    const char *t = value_text;
    while (*t == ' ' || *t == '\t') t++;
    if (*t == '[' || *t == '{') {
        dg_status st = parse_text(value_text, strlen(value_text), CMDLINE, 1, path, nsteps + 1, &val, e);
        if (st != DG_OK) return st;
        if (!val) return dg_err_set(e, DG_ERR_CONFIG, CMDLINE ": key '%.200s': empty value", path);
    } else {
        val = scalar_new(value_text, strlen(value_text), 0, 0, 0, F_OVERRIDE);
        if (!val) return dg_err_set(e, DG_ERR_NOMEM, CMDLINE ": key '%.200s': out of memory", path);
    }

    /* 3: put it in place, making maps on the way (an empty "env:" becomes a map) */
    cur = c->root;
    p = path;
    first = 1;
    while (next_step(&p, first, &s) == 1) {
        int last = *p == 0;
        first = 0;
        if (cur->kind == N_SCALAR) {
            free(cur->text);
            cur->text = NULL;
            cur->len = 0;
            cur->kind = N_MAP;
            cur->flags &= ~(unsigned)(F_NULL | F_QUOTED);
        }
        cnode **slot;
        if (cur->kind == N_MAP) {
            size_t i = map_index(cur, s.name, s.nlen);
            if (i == SIZE_MAX) {
                cnode *key = scalar_new(s.name, s.nlen, 0, 0, 0, F_OVERRIDE);
                cnode *child = last ? val : node_new(N_MAP, 0, 0, F_OVERRIDE);
                if (key) key->flags &= ~(unsigned)F_NULL;  /* a key is text, even "null" */
                if (!key || !child || !node_push(cur, key, child)) {
                    node_free(key);
                    if (child != val) node_free(child);
                    node_free(val);
                    return dg_err_set(e, DG_ERR_NOMEM, CMDLINE ": key '%.200s': out of memory", path);
                }
                if (last) return DG_OK;
                cur = child;
                continue;
            }
            slot = &cur->vals[i];
        } else {
            slot = &cur->vals[s.idx];
        }
        if (last) {
            node_free(*slot);
            *slot = val;
            return DG_OK;
        }
        cur = *slot;
    }
    node_free(val);  /* not reached: a valid path has a last step */
    return dg_err_set(e, DG_ERR_ARG, "dg_cfg_set: internal error");
}

dg_status dg_cfg_to_yaml(const dg_cfg *c, char **out, size_t *len, dg_err *e) {
    yaml_emitter_t em;
    yaml_event_t ev;
    sbuf b = {0};
    if (!out) return dg_err_set(e, DG_ERR_ARG, "dg_cfg_to_yaml: out is NULL");
    *out = NULL;
    if (len) *len = 0;
    if (!c) return dg_err_set(e, DG_ERR_ARG, "dg_cfg_to_yaml: config is NULL");
    if (!yaml_emitter_initialize(&em)) return dg_err_set(e, DG_ERR_NOMEM, "%.400s: out of memory", c->label);
    yaml_emitter_set_output(&em, sbuf_write, &b);
    yaml_emitter_set_unicode(&em, 1);
    yaml_emitter_set_width(&em, -1);  /* never fold long lines */
    yaml_emitter_set_indent(&em, 2);
    int ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) && yaml_emitter_emit(&em, &ev) &&
             yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) && yaml_emitter_emit(&em, &ev) &&
             emit_node(&em, c->root) &&
             yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(&em, &ev) &&
             yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(&em, &ev) && yaml_emitter_flush(&em);
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
