/* CSV tables through the atomic file writer: a header of column names, rows of cells formatted
 * by their column (see csv.h). */
#include "io/csv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------- internal helpers */

/* Writes s as one field: as is, or quoted (quotes doubled) when it holds a comma, quote or line
 * break. */
static void put_text(FILE *fp, const char *s) {
    if (!s[strcspn(s, ",\"\r\n")]) {
        fputs(s, fp);
        return;
    }
    fputc('"', fp);
    for (; *s; s++) {
        if (*s == '"') fputc('"', fp);
        fputc(*s, fp);
    }
    fputc('"', fp);
}

/* The separator before the next cell, after checking it fits the row and is of kind str (1) or
 * a number (0). Returns 0 (and remembers the mistake) when it does not. */
static int next_cell(dg_csv *w, int str) {
    if (w->bad) return 0;
    if (w->ncols == 0) w->bad = "a row before any column";
    else if ((w->fmt[w->col] == DG_CSV_STR) != str)
        w->bad = str ? "text in a numeric column" : "a number in a text column";
    if (w->bad) return 0;
    if (!w->body) fputc('\n', w->f.fp);  /* the header ends at the first cell */
    w->body = 1;
    if (w->col > 0) fputc(',', w->f.fp);
    return 1;
}

/* After a cell: a full row ends its line. */
static void end_cell(dg_csv *w) {
    if (++w->col < w->ncols) return;
    fputc('\n', w->f.fp);
    w->col = 0;
}

/* ------------------------------------------------------ public functions */

dg_status dg_csv_begin(dg_csv *w, const char *path, dg_err *e) {
    memset(w, 0, sizeof *w);
    const dg_status st = dg_file_begin(&w->f, path, e);
    if (st != DG_OK) w->bad = "the file did not open";  /* later calls do nothing */
    return st;
}

void dg_csv_col(dg_csv *w, const char *name, dg_csv_fmt fmt) {
    if (w->bad) return;
    if (w->body) w->bad = "a column after the first row";
    else if (w->ncols == DG_CSV_MAX_COLS) w->bad = "more columns than DG_CSV_MAX_COLS";
    else if ((unsigned)fmt > DG_CSV_STR) w->bad = "an unknown column format";
    if (w->bad) return;
    if (w->ncols > 0) fputc(',', w->f.fp);
    put_text(w->f.fp, name ? name : "");
    w->fmt[w->ncols++] = (unsigned char)fmt;
}

void dg_csv_cols(dg_csv *w, const char *const *names, const char *prefix, int n, dg_csv_fmt fmt) {
    for (int i = 0; i < n; i++) {
        char name[64];
        if (!names) snprintf(name, sizeof name, "%s%d", prefix, i);
        dg_csv_col(w, names ? names[i] : name, fmt);
    }
}

void dg_csv_num(dg_csv *w, double v) {
    if (!next_cell(w, 0)) return;
    switch ((dg_csv_fmt)w->fmt[w->col]) {
    case DG_CSV_INT:
        if (fabs(v) < 9e18) fprintf(w->f.fp, "%lld", (long long)v);
        else fprintf(w->f.fp, "%.9g", v);  /* nan, inf: as a number would be */
        break;
    case DG_CSV_G9: fprintf(w->f.fp, "%.9g", v); break;
    case DG_CSV_G6: fprintf(w->f.fp, "%.6g", v); break;
    default: fprintf(w->f.fp, "%.3f", v); break;  /* DG_CSV_F3 */
    }
    end_cell(w);
}

void dg_csv_str(dg_csv *w, const char *s) {
    if (!next_cell(w, 1)) return;
    put_text(w->f.fp, s ? s : "");
    end_cell(w);
}

dg_status dg_csv_commit(dg_csv *w, dg_err *e) {
    if (!w->bad && w->col != 0) w->bad = "a row left unfinished";
    if (w->bad) {
        dg_file_abort(&w->f);
        return dg_err_set(e, DG_ERR_ARG, "%s: CSV not written: %s", w->f.path, w->bad);
    }
    if (!w->body) fputc('\n', w->f.fp);
    return dg_file_commit(&w->f, e);
}

void dg_csv_abort(dg_csv *w) {
    dg_file_abort(&w->f);
}

int dg_csv_split(char *line, char **cell, int max) {
    line[strcspn(line, "\r\n")] = '\0';
    int n = 0;
    for (char *r = line; n < max;) {
        char *w = r;  /* the cell is written over itself: unquoting only shortens it */
        cell[n++] = w;
        if (*r == '"') {
            for (r++;; r++) {
                if (!*r) return -1;                         /* no closing quote */
                if (*r == '"' && r[1] != '"') break;
                if (*r == '"') r++;                         /* a doubled quote: one */
                *w++ = *r;
            }
            r++;                                            /* past the closing quote */
            if (*r && *r != ',') return -1;                 /* text after it */
        } else {
            while (*r && *r != ',') *w++ = *r++;
        }
        const int more = *r == ',';
        *w = '\0';
        if (!more) break;
        r++;
    }
    return n;
}
