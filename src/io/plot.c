/* Line plots: several series against a shared x axis, linear or log-scale y,
 * with ticks, numeric labels, grid, legend and title, drawn onto a canvas (with
 * cairo, io/draw.h) or written as a PNG. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/core.h"
#include "difgames/fileio.h"
#include "difgames/image.h"
#include "io/draw.h"

/* ----------------------------------------------------- internal helpers */

/* Matplotlib's "tab10" cycle: distinct, colour-blind-friendlier than pure hues. */
static const uint32_t CYCLE[10] = {
    0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd,
    0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf,
};

#define INK      0x000000u
#define GRID     0xe4e4e4u
#define NOTE_INK 0x808080u

/* Reads point i of s in plotted units; 0 when it must be skipped (non-finite,
 * or not positive on a log axis). */
static int point(const dg_plot_series *s, int i, int log_y, double *x, double *y) {
    double xv = s->x ? (double)s->x[i] : (double)i;
    double yv = s->y[i];
    if (!isfinite(xv) || !isfinite(yv)) return 0;
    if (log_y) {
        if (!(yv > 0.0)) return 0;
        yv = log10(yv);
    }
    *x = xv;
    *y = yv;
    return 1;
}

/* Widens a degenerate range and adds a margin of frac of the span each side. */
static void pad_range(double *lo, double *hi, double frac) {
    double span = *hi - *lo;
    if (!(span > 1e-12 * fmax(fabs(*lo), fabs(*hi)))) {
        double c = 0.5 * (*lo + *hi), half = c != 0.0 ? 0.1 * fabs(c) : 1.0;
        *lo = c - half;
        *hi = c + half;
        return;
    }
    *lo -= frac * span;
    *hi += frac * span;
}

/* ------------------------------------------------------ public functions */

/* Returns the i-th colour of a 10-colour cycle (matplotlib's tab10); any i,
 * negative too, wraps around. */
uint32_t dg_plot_color(int i) {
    return CYCLE[((i % 10) + 10) % 10];
}

/* Draws a line plot over the whole of img (cleared to white first): a framed
 * plot area with grid, outward ticks with numeric labels (log_y != 0: y on a
 * log scale with decades labelled), the series as antialiased polylines in
 * their colours, a legend (top right) of those with a label, the title on top
 * and the axis labels (any of the three texts may be NULL). Points that are
 * not finite, or not positive on a log axis, are skipped and break the line;
 * a point with no drawable neighbour shows as a dot. With nothing to draw the
 * axes still appear with a "no data" note. Returns DG_OK, or DG_ERR_ARG with
 * e set (canvas too small, a series with n < 0 or no y), DG_ERR_NOMEM. Nothing
 * is retained. */
dg_status dg_plot_draw(dg_image *img, const char *title, const char *xlabel, const char *ylabel,
                       int log_y, const dg_plot_series *s, int count, dg_err *e) {
    if (!img || !img->rgb || img->w < 1 || img->h < 1) return dg_err_set(e, DG_ERR_ARG, "plot: no canvas");
    if (count < 0 || (count > 0 && !s)) return dg_err_set(e, DG_ERR_ARG, "plot: %d series given", count);
    for (int k = 0; k < count; k++)
        if (s[k].n < 0 || (s[k].n > 0 && !s[k].y))
            return dg_err_set(e, DG_ERR_ARG, "plot: series %d (%s) has n = %d and %s y values", k,
                              s[k].label ? s[k].label : "unlabelled", s[k].n, s[k].y ? "some" : "no");

    /* Data range in plotted units. */
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    long drawn = 0;
    int longest = 0;
    for (int k = 0; k < count; k++) {
        if (s[k].n > longest) longest = s[k].n;
        for (int i = 0; i < s[k].n; i++) {
            double x, y;
            if (!point(&s[k], i, log_y, &x, &y)) continue;
            xlo = fmin(xlo, x); xhi = fmax(xhi, x);
            ylo = fmin(ylo, y); yhi = fmax(yhi, y);
            drawn++;
        }
    }
    if (!drawn) {
        xlo = 0.0; xhi = 1.0;
        ylo = log_y ? -1.0 : 0.0; yhi = 1.0;
    }

    dg_draw d;
    dg_status st = dg_draw_begin(&d, img, e);
    if (st != DG_OK) return st;
    /* Sizes scale with the canvas: 1x up to 1280x960, then 2x, ... */
    int fs = img->w / 640 < img->h / 480 ? img->w / 640 : img->h / 480;
    if (fs < 1) fs = 1;
    const double font = 12.0 * fs, pad = 8.0 * fs, tick = 5.0 * fs, gap = 3.0 * fs;
    const double ch = dg_draw_text_height(&d, font);
    double ts = 16.0 * fs;
    if (title && dg_draw_text_width(&d, title, ts) > img->w - 2 * pad) ts = font;

    const double top = pad + (title && *title ? dg_draw_text_height(&d, ts) + pad : 0);
    const double bottom = tick + gap + ch + (xlabel && *xlabel ? gap + ch : 0) + pad;
    const double ph = floor(img->h - top - bottom);

    dg_axis ya = {.log = log_y};
    if (log_y) {
        ya.lo = floor(ylo);
        ya.hi = ceil(yhi);
        if (ya.hi - ya.lo < 1.0) { ya.lo -= 1.0; ya.hi += 1.0; }
        int max_labels = (int)(ph / (2.5 * ch));
        dg_axis_log(&ya, max_labels < 2 ? 2 : max_labels);
    } else {
        ya.lo = ylo;
        ya.hi = yhi;
        pad_range(&ya.lo, &ya.hi, 0.05);
        int target = (int)(ph / (3.5 * ch));
        dg_axis_linear(&ya, target < 2 ? 2 : target > 10 ? 10 : target);
    }
    const double left = floor(pad + (ylabel && *ylabel ? ch + gap : 0) + dg_axis_widest(&d, &ya, font) + gap + tick);

    dg_axis xa = {.lo = xlo, .hi = xhi};
    pad_range(&xa.lo, &xa.hi, 0.02);
    double right = 2 * pad;
    double pw = floor(img->w - left - right);
    /* Most x ticks whose labels still fit side by side with room between. */
    for (int target = 10; target >= 2; target--) {
        dg_axis_linear(&xa, target);
        double need = (dg_axis_widest(&d, &xa, font) + 3 * font) * xa.n;
        if (need <= pw) break;
    }
    double half_last = xa.n ? dg_draw_text_width(&d, xa.label[xa.n - 1], font) / 2 + pad / 2 : 0;
    if (half_last > right) { right = half_last; pw = floor(img->w - left - right); }

    if (pw < 20 || ph < 20) {
        dg_draw_abort(&d);
        return dg_err_set(e, DG_ERR_ARG, "plot: %dx%d canvas too small for axes and labels", img->w, img->h);
    }

    double sx = pw / (xa.hi - xa.lo), sy = ph / (ya.hi - ya.lo);
#define MAPX(v) (left + ((v) - xa.lo) * sx)
#define MAPY(v) (top + ph - ((v) - ya.lo) * sy)

    dg_draw_rect_fill(&d, 0, 0, img->w, img->h, 0xffffff, 1);
    /* grid at labelled ticks, under everything */
    for (int i = 0; i < xa.n; i++) {
        const double x = round(MAPX(xa.tick[i]));
        dg_draw_line(&d, x, top, x, top + ph, GRID, 1);
    }
    for (int i = 0; i < ya.n; i++) {
        const double y = round(MAPY(ya.tick[i]));
        dg_draw_line(&d, left, y, left + pw, y, GRID, 1);
    }

    /* series: runs of drawable points as polylines, a lone point as a dot */
    const double lw = 1.6 * fs;
    double *px = longest ? malloc((size_t)longest * 2 * sizeof(double)) : NULL;
    if (longest && !px) {
        dg_draw_abort(&d);
        return dg_err_set(e, DG_ERR_NOMEM, "plot: out of memory for %d points", longest);
    }
    double *py = px ? px + longest : NULL;
    for (int k = 0; k < count; k++) {
        int run = 0;
        for (int i = 0; i <= s[k].n; i++) {
            double x, y;
            if (i < s[k].n && point(&s[k], i, log_y, &x, &y)) {
                px[run] = MAPX(x);
                py[run] = MAPY(y);
                run++;
                continue;
            }
            if (run == 1) dg_draw_circle_fill(&d, px[0], py[0], lw, s[k].rgb, 1.0);
            else if (run > 1) dg_draw_polyline(&d, px, py, run, s[k].rgb, lw);
            run = 0;
        }
    }
    free(px);

    /* frame, ticks and their labels */
    dg_draw_rect_outline(&d, left - 0.5, top - 0.5, pw + 2, ph + 2, INK, 1);
    for (int i = 0; i < xa.n; i++) {
        double x = round(MAPX(xa.tick[i]));
        dg_draw_line(&d, x, top + ph + 1, x, top + ph + tick, INK, 1);
        dg_draw_text(&d, x, top + ph + 1 + tick + gap, xa.label[i], INK, font, DG_TEXT_CENTER | DG_TEXT_TOP, 0);
    }
    for (int i = 0; i < ya.n; i++) {
        double y = round(MAPY(ya.tick[i]));
        dg_draw_line(&d, left - tick, y, left - 1, y, INK, 1);
        dg_draw_text(&d, left - tick - gap, y, ya.label[i], INK, font, DG_TEXT_RIGHT | DG_TEXT_MIDDLE, 0);
    }
    for (int i = 0; i < ya.nminor; i++) {
        double y = round(MAPY(ya.minor[i]));
        dg_draw_line(&d, left - tick / 2, y, left - 1, y, INK, 1);
    }

    /* title and axis labels */
    if (title && *title) dg_draw_text(&d, left + pw / 2, pad, title, INK, ts, DG_TEXT_CENTER | DG_TEXT_TOP, 0);
    if (xlabel && *xlabel)
        dg_draw_text(&d, left + pw / 2, img->h - pad, xlabel, INK, font, DG_TEXT_CENTER | DG_TEXT_BOTTOM, 0);
    if (ylabel && *ylabel)
        dg_draw_text(&d, pad, top + ph / 2, ylabel, INK, font, DG_TEXT_CENTER | DG_TEXT_TOP, 1);

    /* legend: a translucent box in the top-right corner of the plot area */
    int nleg = 0;
    double legw = 0;
    for (int k = 0; k < count; k++)
        if (s[k].label) {
            nleg++;
            legw = fmax(legw, dg_draw_text_width(&d, s[k].label, font));
        }
    if (nleg) {
        const double sample = 24.0 * fs, lh = ch + 2.0 * fs, sgap = pad;
        const double bw = round(pad + sample + sgap + legw + pad), bh = round(nleg * lh + pad);
        const double bx = round(left + pw - pad - bw), by = round(top + pad);
        dg_draw_rect_fill(&d, bx, by, bw, bh, 0xffffff, 0.85);
        dg_draw_rect_outline(&d, bx, by, bw, bh, 0xb0b0b0, 1);
        int row = 0;
        for (int k = 0; k < count; k++) {
            if (!s[k].label) continue;
            const double ly = by + pad / 2 + row * lh + lh / 2;
            dg_draw_line(&d, bx + pad, ly, bx + pad + sample, ly, s[k].rgb, 2.0 * fs);
            dg_draw_text(&d, bx + pad + sample + sgap, ly, s[k].label, INK, font, DG_TEXT_LEFT | DG_TEXT_MIDDLE, 0);
            row++;
        }
    }

    if (!drawn) {
        const char *note = log_y ? "no data (no finite positive values)" : "no data (no finite values)";
        dg_draw_text(&d, left + pw / 2, top + ph / 2, note, NOTE_INK, font, DG_TEXT_CENTER | DG_TEXT_MIDDLE, 0);
    }
#undef MAPX
#undef MAPY
    return dg_draw_end(&d, e);
}

/* Draws the plot described at dg_plot_draw on a w x h white canvas and writes
 * it to path as a PNG (atomically). Returns DG_OK, or DG_ERR_ARG (bad size or
 * series), DG_ERR_NOMEM, DG_ERR_IO with e set; on failure no file is left.
 * The series stay the caller's. */
double dg_plot_memory(int w, int h, double n) {
    return 4.0 * (1 << 20) + (double)w * h * (4 + 4) + n * 2 * sizeof(double);
}

dg_status dg_plot_lines(const char *path, int w, int h, const char *title, const char *xlabel,
                        const char *ylabel, int log_y, const dg_plot_series *s, int count,
                        dg_err *e) {
    if (w < 1 || h < 1 || w > DG_IMAGE_MAX_SIDE || h > DG_IMAGE_MAX_SIDE)
        return dg_err_set(e, DG_ERR_ARG, "%s: plot size %dx%d out of range (1..%d each)",
                          path ? path : "plot", w, h, DG_IMAGE_MAX_SIDE);
    dg_image *img = dg_image_create(w, h, 0xffffff);
    if (!img) return dg_err_set(e, DG_ERR_NOMEM, "%s: out of memory for a %dx%d plot", path ? path : "plot", w, h);
    dg_status st = dg_plot_draw(img, title, xlabel, ylabel, log_y, s, count, e);
    if (st == DG_OK) st = dg_png_write(img, path, e);
    else if (path) dg_err_prefix(e, path);
    dg_image_free(img);
    return st;
}

/* --------------------------------------------------- curves from a CSV */

typedef struct csv_series {
    char     panel[64], key[64], label[64];
    uint32_t rgb;
    int      n, cap;
    float   *x, *y;
} csv_series;


/* Reads the rows panel,series,label,color,steps,loss of csv (a first line starting "panel," is a
 * header; empty lines are skipped; color is 6 hex digits or empty for the colour cycle; loss "nan" is
 * a point not drawn) and draws one panel per distinct panel name (at most 8), in order of first
 * appearance, side by side, each 760 x 560: log10(steps) against the loss on a log scale, titled
 * "panel: title" (or "panel" when title is NULL). Writes png atomically. Returns DG_OK, or
 * DG_ERR_FORMAT (a bad row, no rows, too many panels), DG_ERR_NOMEM, DG_ERR_IO (and what
 * dg_file_open_read returns) with e set; on failure no file is left. */
dg_status dg_plot_curves_csv(const char *csv, const char *png, const char *title, dg_err *e) {
    FILE *fp;
    dg_status st = dg_file_open_read(csv, &fp, NULL, e);
    if (st != DG_OK) return st;
    csv_series *ss = NULL;
    int ns = 0, cap = 0, line_no = 0;
    char line[512];
    char panels[8][64];  /* distinct panel names, in order */
    int np = 0;
    while (st == DG_OK && fgets(line, sizeof line, fp)) {
        line_no++;
        line[strcspn(line, "\r\n")] = 0;
        if (line_no == 1 && !strncmp(line, "panel,", 6)) continue;
        if (!line[0]) continue;
        char *f[6];
        int nf = 0;
        char *p = line;
        for (; nf < 6; nf++) {
            f[nf] = p;
            char *c = strchr(p, ',');
            if (!c) {
                nf++;
                break;
            }
            *c = 0;
            p = c + 1;
        }
        double steps = NAN, loss = NAN;  /* loss "nan": a diverged run's point, not drawn */
        long rgb = -1;
        if (nf != 6 || !dg_parse_double(f[4], (size_t)-1, &steps) ||
            (strcmp(f[5], "nan") && !dg_parse_double(f[5], (size_t)-1, &loss)) ||
            (f[3][0] && (!dg_parse_long(f[3], (size_t)-1, 16, &rgb) || rgb < 0 || rgb > 0xffffff))) {
            st = dg_err_set(e, DG_ERR_FORMAT,
                            "%s:%d: expected panel,series,label,color,steps,loss (color: 6 hex digits or empty)",
                            csv, line_no);
            break;
        }
        int k = 0;
        while (k < ns && (strncmp(ss[k].panel, f[0], 63) || strncmp(ss[k].key, f[1], 63))) k++;
        if (k == ns) {
            int pi = 0;
            while (pi < np && strncmp(panels[pi], f[0], 63)) pi++;
            if (pi == np) {
                if (np == 8) {
                    st = dg_err_set(e, DG_ERR_FORMAT, "%s: at most 8 panels", csv);
                    break;
                }
                snprintf(panels[np++], sizeof panels[0], "%.63s", f[0]);
            }
            if (ns == cap) {
                cap = cap ? 2 * cap : 16;
                csv_series *q = realloc(ss, (size_t)cap * sizeof *q);
                if (!q) {
                    st = dg_err_set(e, DG_ERR_NOMEM, "out of memory");
                    break;
                }
                ss = q;
            }
            memset(&ss[ns], 0, sizeof ss[ns]);
            snprintf(ss[ns].panel, sizeof ss[ns].panel, "%.63s", f[0]);
            snprintf(ss[ns].key, sizeof ss[ns].key, "%.63s", f[1]);
            snprintf(ss[ns].label, sizeof ss[ns].label, "%.63s", f[2]);
            ss[ns].rgb = rgb >= 0 ? (uint32_t)rgb : dg_plot_color(ns);
            ns++;
        }
        csv_series *s = &ss[k];
        if (s->n == s->cap) {
            s->cap = s->cap ? 2 * s->cap : 64;
            float *x = realloc(s->x, (size_t)s->cap * sizeof *x);
            if (x) s->x = x;
            float *y = realloc(s->y, (size_t)s->cap * sizeof *y);
            if (y) s->y = y;
            if (!x || !y) {
                st = dg_err_set(e, DG_ERR_NOMEM, "out of memory");
                break;
            }
        }
        s->x[s->n] = steps > 0 ? (float)log10(steps) : NAN;
        s->y[s->n] = (float)loss;
        s->n++;
    }
    fclose(fp);
    if (st == DG_OK && np == 0) st = dg_err_set(e, DG_ERR_FORMAT, "%s: no rows", csv);
    const int pw = 760, ph = 560;
    dg_image *img = NULL, *sub = NULL;
    dg_plot_series *ds = NULL;
    if (st == DG_OK) {
        img = dg_image_create(pw * np, ph, 0xffffff);
        sub = dg_image_create(pw, ph, 0xffffff);
        ds = malloc((size_t)ns * sizeof *ds);
        if (!img || !sub || !ds) st = dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    }
    for (int pi = 0; pi < np && st == DG_OK; pi++) {
        int n = 0;
        for (int k = 0; k < ns; k++)
            if (!strcmp(ss[k].panel, panels[pi]))
                ds[n++] = (dg_plot_series){ss[k].label[0] ? ss[k].label : NULL, ss[k].x, ss[k].y, ss[k].n, ss[k].rgb};
        char t[160];
        if (title) snprintf(t, sizeof t, "%.63s: %.90s", panels[pi], title);
        else snprintf(t, sizeof t, "%.63s", panels[pi]);
        st = dg_plot_draw(sub, t, "log10(environment steps)", "evaluation episode loss (log scale)", 1, ds, n, e);
        for (int yy = 0; yy < ph && st == DG_OK; yy++)
            memcpy(img->rgb + ((size_t)yy * img->w + (size_t)pi * pw) * 3, sub->rgb + (size_t)yy * pw * 3,
                   (size_t)pw * 3);
    }
    if (st == DG_OK) st = dg_png_write(img, png, e);
    dg_image_free(img);
    dg_image_free(sub);
    free(ds);
    for (int k = 0; k < ns; k++) {
        free(ss[k].x);
        free(ss[k].y);
    }
    free(ss);
    return st;
}
