/* The one strict number parser: the whole text must be the number, nothing around it; and the one
 * number printer for what a user reads (no "-0"). */
#define _POSIX_C_SOURCE 200809L  /* newlocale, uselocale */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/base.h"

/* text[0, len) copied into buf (n bytes) when it holds only characters of ok, and at least one;
 * else 0. */
static int number_text(const char *text, size_t len, const char *ok, char *buf, size_t n) {
    if (len == (size_t)-1) len = strlen(text);
    if (len == 0 || len >= n || strspn(text, ok) < len) return 0;
    memcpy(buf, text, len);
    buf[len] = 0;
    return 1;
}

int dg_parse_long(const char *text, size_t len, int base, long *out) {
    char buf[64], *end;
    if (!number_text(text, len, base == 16 ? "+-0123456789abcdefABCDEF" : "+-0123456789", buf, sizeof buf))
        return 0;
    errno = 0;
    const long v = strtol(buf, &end, base);
    if (errno || end == buf || *end) return 0;
    *out = v;
    return 1;
}

int dg_parse_double(const char *text, size_t len, double *out) {
    char buf[128], *end;
    /* decimal only: no hex floats, inf, nan or leading blanks */
    if (!number_text(text, len, "+-0123456789.eE", buf, sizeof buf)) return 0;
    locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0), old = c ? uselocale(c) : (locale_t)0;
    errno = 0;
    const double v = strtod(buf, &end);  /* '.' is the decimal point whatever the program's locale */
    const int err = errno;
    if (c) { uselocale(old); freelocale(c); }
    if (err == ERANGE || end == buf || *end || !isfinite(v)) return 0;
    *out = v;
    return 1;
}

int dg_parse_list(const char *text, double lo, double hi, int integer, double **out, dg_err *e) {
    *out = NULL;
    size_t cap = 1;
    for (const char *c = text; *c; c++) cap += *c == ',';
    double *v = malloc(cap * sizeof *v);
    if (!v) {
        dg_err_set(e, DG_ERR_NOMEM, "out of memory for a list of %zu numbers", cap);
        return -1;
    }
    int n = 0;
    for (const char *s = text;; s += strcspn(s, ",") + 1) {
        const size_t len = strcspn(s, ",");
        double x;
        if (!dg_parse_double(s, len, &x)) {  /* the reason first, the item echoed short (DG_ECHO) */
            dg_err_set(e, DG_ERR_ARG, "item %d is not a number: %s (expected numbers separated by commas, like 1,2,3)",
                       n + 1, DG_ECHO_N(s, len));
            break;
        }
        if (!(x >= lo && x <= hi) || (integer && x != floor(x))) {
            dg_err_set(e, DG_ERR_ARG, "item %d is %s; expected %s from %.17g to %.17g", n + 1, DG_ECHO_N(s, len),
                       integer ? "a whole number" : "a number", lo, hi);
            break;
        }
        v[n++] = x;
        if (!s[len]) {
            *out = v;
            return n;
        }
    }
    free(v);
    return -1;
}

int dg_format_double(char *buf, size_t size, const char *fmt, double v) {
    const int n = snprintf(buf, size, fmt, v);
    if (n < 1 || (size_t)n >= size || buf[0] != '-') return n;
    /* "-0", "-0.000", "-0e+00": a zero (-0.0, or a small negative rounded to none of its digits)
     * reads as 0; the sign alone would say it is below zero */
    size_t i = 1;
    while (buf[i] == '0' || buf[i] == '.') i++;
    if (buf[i] && buf[i] != 'e' && buf[i] != 'E') return n;
    memmove(buf, buf + 1, (size_t)n);  /* n bytes: the text less its sign, and the NUL */
    return n - 1;
}
