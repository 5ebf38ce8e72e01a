/* Writing a CSV table, whole or not at all (internal: metrics.csv, pg's curve.csv, hji play's
 * trajectory).
 *
 *     dg_csv w;
 *     if (dg_csv_begin(&w, "runs/reach/metrics.csv", e) != DG_OK) return e->status;
 *     dg_csv_col(&w, "epoch", DG_CSV_INT);
 *     dg_csv_cols(&w, env->term_names, NULL, env->nterms, DG_CSV_G9);  // goal,collision,energy
 *     dg_csv_cols(&w, NULL, "x", 3, DG_CSV_G9);                        // x0,x1,x2
 *     for (...) {                                                     // a row ends at its last column
 *         dg_csv_num(&w, epoch);
 *         for (int i = 0; i < env->nterms; i++) dg_csv_num(&w, terms[i]);
 *         ...
 *     }
 *     return dg_csv_commit(&w, e);  // or dg_csv_abort(&w): nothing is left behind
 *
 * The header is the columns' names; each column declares its number format once (DG_CSV_*), so
 * every row is written alike. The file goes through dg_file_begin/commit (a temporary file,
 * fsync, rename): a reader sees the old table or the new one, whole. Names and text cells holding
 * a comma, a quote or a line break are quoted as RFC 4180 says. A row with a cell too many or of
 * the wrong kind, or a row left unfinished, is a caller's mistake that dg_csv_commit reports
 * (DG_ERR_ARG) instead of writing the file.
 */
#ifndef DG_IO_CSV_H
#define DG_IO_CSV_H

#include "difgames/fileio.h"

#define DG_CSV_MAX_COLS 256  /* most columns of a table */

typedef enum dg_csv_fmt {
    DG_CSV_INT,  /* "%lld" of the value: counts, epochs, seeds (exact up to 2^53)          */
    DG_CSV_G9,   /* "%.9g": every digit a float carries (losses, states, rates)            */
    DG_CSV_G6,   /* "%.6g": for reading (times, inputs, a game's metrics)                  */
    DG_CSV_F3,   /* "%.3f": milliseconds to the microsecond                                */
    DG_CSV_STR,  /* text, written with dg_csv_str                                          */
} dg_csv_fmt;

typedef struct dg_csv {
    dg_file       f;
    unsigned char fmt[DG_CSV_MAX_COLS];  /* (ncols) dg_csv_fmt of each column                   */
    int           ncols;                 /* columns declared                                    */
    int           col;                   /* cells written in the current row                    */
    int           body;                  /* 1 once the first cell is written (the header ended) */
    const char   *bad;                   /* the caller's first mistake, reported by commit      */
} dg_csv;

dg_status dg_csv_begin(dg_csv *w, const char *path, dg_err *e);     /* opens path's temporary file  */
void      dg_csv_col(dg_csv *w, const char *name, dg_csv_fmt fmt);  /* one column: its name, format */
/* n columns of one format, named names[0..n) or, names NULL, prefix0 .. prefix<n-1> ("x0", "x1"). */
void      dg_csv_cols(dg_csv *w, const char *const *names, const char *prefix, int n, dg_csv_fmt fmt);
void      dg_csv_num(dg_csv *w, double v);                          /* the next cell (numeric column) */
void      dg_csv_str(dg_csv *w, const char *s);                     /* the next cell (DG_CSV_STR)     */
/* Ends the table (a table without rows is its header), then dg_file_commit: DG_OK, or an error
 * with the temporary file removed. */
dg_status dg_csv_commit(dg_csv *w, dg_err *e);
void      dg_csv_abort(dg_csv *w);                                  /* removes the temporary file   */

/* Reading a line back: the cells of one CSV line (its line break dropped) into cell[0..max), in
 * place, as dg_csv_str wrote them: a quoted cell's quotes taken off and its doubled quotes undone,
 * so a cell may hold commas. Returns the count of cells (the first max when there are more), or -1
 * for a quoted cell that does not end where a cell ends. */
int       dg_csv_split(char *line, char **cell, int max);

#endif
