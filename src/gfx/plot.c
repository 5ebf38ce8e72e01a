/* Line plots: several series against a shared x axis, linear or log-scale y,
 * with ticks, numeric labels, grid, legend and title, drawn onto a canvas (with
 * cairo, gfx/draw.h) or written as a PNG. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/base.h"  /* dg_parse_long, dg_parse_double */
#include "difgames/fileio.h"
#include "difgames/image.h"
#include "gfx/draw.h"

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

/* What a plot is asked to draw. */
typedef struct plot_in {
    const char *title, *xlabel, *ylabel;
    int         log_y;
    const char *const *cat;        /* (ncat) category names, or NULL: a numeric x axis */
    int         ncat;
    const dg_plot_series *s;
    int         count;
} plot_in;

/* Where it goes on the canvas. */
typedef struct plot_box {
    double font, pad, tick, gap, ch, ts, fs;
    double left, top, pw, ph;      /* the plot area                             */
    dg_axis xa, ya;
    int    up;                     /* categories: labels read upwards           */
    int    flat;                   /* categories: a label's lines on one line   */
    int    every;                  /* categories: every k-th labelled           */
    double depth;                  /* the x labels' height under the ticks      */
    double lx, ly, lw, lh;         /* the legend's box (lw = 0: no legend)      */
} plot_box;

#define CAT_LINE 160               /* longest category label line, bytes        */
#define LINE 1.6                   /* the series' lines' width (px at 1x)       */
#define DOT 2.5                    /* a lone point's radius (px at 1x)          */

/* Line i of label s (lines broken at '\n'; past the last: "") into out; returns the count of lines. */
static int label_line(const char *s, int i, char *out, size_t cap) {
    int n = 0;
    out[0] = '\0';
    for (const char *p = s;; n++) {
        const size_t len = strcspn(p, "\n");
        if (n == i) snprintf(out, cap, "%.*s", (int)(len < cap ? len : cap - 1), p);
        if (!p[len]) return n + 1;
        p += len + 1;
    }
}

/* Label s on one line (its lines joined by ", "), cut with "..." to at most width px at size. */
static void label_flat(dg_draw *d, const char *s, double size, double width, char *out, size_t cap) {
    size_t at = 0;
    out[0] = '\0';
    for (const char *p = s; *p && at + 2 < cap; p++) {
        if (*p == '\n') {
            out[at++] = ',';
            out[at++] = ' ';
        } else {
            out[at++] = *p;
        }
    }
    out[at] = '\0';
    while (at > 3 && dg_draw_text_width(d, out, size) > width) memcpy(out + (at -= 1) - 3, "...", 4);
}

/* Line k of label s, cut with "..." to at most width px at size, into out. */
static void label_cut(dg_draw *d, const char *s, int k, double size, double width, char *out, size_t cap) {
    label_line(s, k, out, cap);
    for (size_t at = strlen(out); at > 3 && dg_draw_text_width(d, out, size) > width;)
        memcpy(out + (at -= 1) - 3, "...", 4);
}

/* The category axis under a plot area pw wide, in the first way that fits: labels side by side,
 * each its lines stacked, when the widest line fits a category's slot; else read upwards, each
 * line a column, when the columns fit; else each on one line read upwards, every k-th when even
 * those would touch. Lines read upwards are cut to a third of the canvas's height. Sets b->up,
 * flat, every, depth. */
static void cat_plan(plot_box *b, dg_draw *d, const plot_in *in, double img_h) {
    const double slot = b->pw / in->ncat, most = img_h / 3;
    double widest = 0, longest = 0, flat = 0;
    int lines = 1;
    char line[CAT_LINE];
    for (int i = 0; i < in->ncat; i++) {
        const int n = label_line(in->cat[i], 0, line, sizeof line);
        lines = n > lines ? n : lines;
        for (int k = 0; k < n; k++) {
            label_line(in->cat[i], k, line, sizeof line);
            widest = fmax(widest, dg_draw_text_width(d, line, b->font));
            label_cut(d, in->cat[i], k, b->font, most, line, sizeof line);
            longest = fmax(longest, dg_draw_text_width(d, line, b->font));
        }
        label_flat(d, in->cat[i], b->font, most, line, sizeof line);
        flat = fmax(flat, dg_draw_text_width(d, line, b->font));
    }
    b->every = 1;
    b->up = b->flat = 0;
    if (widest + 2 * b->gap <= slot) {
        b->depth = lines * b->ch;
        return;
    }
    b->up = 1;
    if (lines * b->ch + b->gap <= slot) {
        b->depth = longest;
        return;
    }
    b->flat = 1;
    b->depth = flat;
    b->every = (int)ceil((b->ch + b->gap) / slot);
    if (b->every < 1) b->every = 1;
}

/* Lays the plot out on img with right pixels right of the plot area (the legend's room when it is
 * outside; < 0: two paddings), the data's range [xlo, xhi] x [ylo, yhi] in plotted units. */
static void lay_out(plot_box *b, dg_draw *d, const dg_image *img, const plot_in *in, double right, double xlo,
                    double xhi, double ylo, double yhi) {
    /* sizes scale with the canvas: 1x up to 1280x960, then 2x, ... */
    int fs = img->w / 640 < img->h / 480 ? img->w / 640 : img->h / 480;
    if (fs < 1) fs = 1;
    b->fs = fs;
    b->font = 12.0 * fs, b->pad = 8.0 * fs, b->tick = 5.0 * fs, b->gap = 3.0 * fs;
    b->ch = dg_draw_text_height(d, b->font);
    b->ts = 16.0 * fs;
    if (in->title && dg_draw_text_width(d, in->title, b->ts) > img->w - 2 * b->pad) b->ts = b->font;
    if (right < 0) right = 2 * b->pad;
    b->top = b->pad + (in->title && *in->title ? dg_draw_text_height(d, b->ts) + b->pad : 0);
    b->depth = b->ch;
    b->up = b->flat = 0;
    b->every = 1;
    /* the categories' labels depend on the width, which depends on the y labels, which depend on
     * the height left under the labels: a few rounds settle it */
    for (int round = 0; round < 3; round++) {
        const double depth = b->depth;
        const double bottom = b->tick + b->gap + b->depth + (in->xlabel && *in->xlabel ? b->gap + b->ch : 0) + b->pad;
        b->ph = floor(img->h - b->top - bottom);
        b->ya = (dg_axis){.log = in->log_y};
        if (in->log_y) {
            b->ya.lo = floor(ylo);
            b->ya.hi = ceil(yhi);
            if (b->ya.hi - b->ya.lo < 1.0) { b->ya.lo -= 1.0; b->ya.hi += 1.0; }
            const int max_labels = (int)(b->ph / (2.5 * b->ch));
            dg_axis_log(&b->ya, max_labels < 2 ? 2 : max_labels);
        } else {
            b->ya.lo = ylo;
            b->ya.hi = yhi;
            pad_range(&b->ya.lo, &b->ya.hi, 0.05);
            const int target = (int)(b->ph / (3.5 * b->ch));
            dg_axis_linear(&b->ya, target < 2 ? 2 : target > 10 ? 10 : target);
        }
        b->left = floor(b->pad + (in->ylabel && *in->ylabel ? b->ch + b->gap : 0) + dg_axis_widest(d, &b->ya, b->font) +
                        b->gap + b->tick);
        b->pw = floor(img->w - b->left - right);
        if (!in->cat) {
            b->xa = (dg_axis){.lo = xlo, .hi = xhi};
            pad_range(&b->xa.lo, &b->xa.hi, 0.02);
            /* most x ticks whose labels still fit side by side with room between */
            for (int target = 10; target >= 2; target--) {
                dg_axis_linear(&b->xa, target);
                if ((dg_axis_widest(d, &b->xa, b->font) + 3 * b->font) * b->xa.n <= b->pw) break;
            }
            const double half_last = b->xa.n ? dg_draw_text_width(d, b->xa.label[b->xa.n - 1], b->font) / 2 + b->pad / 2 : 0;
            if (half_last > right) b->pw = floor(img->w - b->left - half_last);
            return;
        }
        /* categories: one tick at each index, from -0.5 to ncat - 0.5 */
        b->xa = (dg_axis){.lo = -0.5, .hi = in->ncat - 0.5};
        cat_plan(b, d, in, img->h);
        if (b->depth == depth) return;
    }
}

/* 1 when the segment (ax, ay)-(bx, by) meets the box [x0, x1] x [y0, y1] (Liang-Barsky). */
static int seg_hits_box(double ax, double ay, double bx, double by, double x0, double y0, double x1, double y1) {
    const double dx = bx - ax, dy = by - ay;
    const double p[4] = {-dx, dx, -dy, dy}, q[4] = {ax - x0, x1 - ax, ay - y0, y1 - ay};
    double t0 = 0, t1 = 1;
    for (int i = 0; i < 4; i++) {
        if (p[i] == 0) {
            if (q[i] < 0) return 0;
            continue;
        }
        const double r = q[i] / p[i];
        if (p[i] < 0) t0 = fmax(t0, r);
        else t1 = fmin(t1, r);
        if (t0 > t1) return 0;
    }
    return 1;
}

/* The series' points in pixels of b: point i of s into (*px, *py); 0 when it is not drawn. */
static int pixel(const plot_box *b, const dg_plot_series *s, int i, int log_y, double *px, double *py) {
    double x, y;
    if (!point(s, i, log_y, &x, &y)) return 0;
    *px = b->left + (x - b->xa.lo) * b->pw / (b->xa.hi - b->xa.lo);
    *py = b->top + b->ph - (y - b->ya.lo) * b->ph / (b->ya.hi - b->ya.lo);
    return 1;
}

/* 1 when no line or dot of the series comes within two paddings of the box (x, y, w, h). */
static int box_clear(const plot_box *b, const plot_in *in, double x, double y, double w, double h) {
    const double m = 2 * b->pad + DOT * b->fs;  /* two paddings and a dot's radius (more than half a line's width) */
    const double x0 = x - m, y0 = y - m, x1 = x + w + m, y1 = y + h + m;
    for (int k = 0; k < in->count; k++) {
        const dg_plot_series *s = &in->s[k];
        double ax = 0, ay = 0;
        int have = 0;  /* the previous point was drawn: the segment to this one is */
        for (int i = 0; i < s->n; i++) {
            double px, py;
            if (!pixel(b, s, i, in->log_y, &px, &py)) {
                have = 0;
                continue;
            }
            if (seg_hits_box(have ? ax : px, have ? ay : py, px, py, x0, y0, x1, y1)) return 0;
            ax = px, ay = py, have = 1;
        }
    }
    return 1;
}

/* 1 when series s is lone points only (no drawn point beside another): drawn as dots. */
static int dots_only(const dg_plot_series *s, int log_y) {
    double x, y;
    for (int i = 0; i + 1 < s->n; i++)
        if (point(s, i, log_y, &x, &y) && point(s, i + 1, log_y, &x, &y)) return 0;
    return 1;
}

/* The legend's size (b->lw, b->lh; 0 without a labelled series). */
static void legend_size(plot_box *b, dg_draw *d, const plot_in *in) {
    int nleg = 0;
    double legw = 0;
    for (int k = 0; k < in->count; k++)
        if (in->s[k].label) {
            nleg++;
            legw = fmax(legw, dg_draw_text_width(d, in->s[k].label, b->font));
        }
    const double sample = 24.0 * b->fs, lh = b->ch + 2.0 * b->fs;
    b->lw = nleg ? round(b->pad + sample + b->pad + legw + b->pad) : 0;
    b->lh = nleg ? round(nleg * lh + b->pad) : 0;
}

/* Places the legend (b->lx, ly) in the first corner of the plot area that no line or dot crosses:
 * top right, top left, bottom right, bottom left; 0 when none is clear. */
static int legend_inside(plot_box *b, const plot_in *in) {
    const double l = round(b->left + b->pad), r = round(b->left + b->pw - b->pad - b->lw);
    const double t = round(b->top + b->pad), u = round(b->top + b->ph - b->pad - b->lh);
    const double spot[4][2] = {{r, t}, {l, t}, {r, u}, {l, u}};
    if (b->lw > b->pw - 2 * b->pad || b->lh > b->ph - 2 * b->pad) return 0;
    for (int c = 0; c < 4; c++)
        if (box_clear(b, in, spot[c][0], spot[c][1], b->lw, b->lh)) {
            b->lx = spot[c][0];
            b->ly = spot[c][1];
            return 1;
        }
    return 0;
}

/* DG_OK when in is a plot that can be drawn on img; else DG_ERR_ARG naming what is wrong. */
static dg_status plot_check(const dg_image *img, const plot_in *in, dg_err *e) {
    if (!img || !img->rgb || img->w < 1 || img->h < 1) return dg_err_set(e, DG_ERR_ARG, "plot: no canvas");
    if (in->count < 0 || (in->count > 0 && !in->s)) return dg_err_set(e, DG_ERR_ARG, "plot: %d series given", in->count);
    if (in->cat && in->ncat < 1) return dg_err_set(e, DG_ERR_ARG, "plot: %d categories", in->ncat);
    const dg_plot_series *s = in->s;
    for (int k = 0; k < in->count; k++)
        if (s[k].n < 0 || (s[k].n > 0 && !s[k].y))
            return dg_err_set(e, DG_ERR_ARG, "plot: series %d (%s) has n = %d and %s y values", k,
                              s[k].label ? s[k].label : "unlabelled", s[k].n, s[k].y ? "some" : "no");
    return DG_OK;
}

/* The data's range in plotted units (lo[0], hi[0]: x; lo[1], hi[1]: y; [0, 1] x [0 or -1, 1] with
 * nothing drawable) and the longest series' length; returns the count of drawable points. */
static long data_range(const plot_in *in, double lo[2], double hi[2], int *longest) {
    const dg_plot_series *s = in->s;
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    long drawn = 0;
    *longest = 0;
    for (int k = 0; k < in->count; k++) {
        if (s[k].n > *longest) *longest = s[k].n;
        for (int i = 0; i < s[k].n; i++) {
            double x, y;
            if (!point(&s[k], i, in->log_y, &x, &y)) continue;
            xlo = fmin(xlo, x); xhi = fmax(xhi, x);
            ylo = fmin(ylo, y); yhi = fmax(yhi, y);
            drawn++;
        }
    }
    if (!drawn) {
        xlo = 0.0; xhi = 1.0;
        ylo = in->log_y ? -1.0 : 0.0; yhi = 1.0;
    }
    lo[0] = xlo, hi[0] = xhi, lo[1] = ylo, hi[1] = yhi;
    return drawn;
}

/* An x of the data (plotted units) in pixels of b: the distance from the axis' low end times the
 * plot area's scale, one factor (its width over the axis' span; pixel()'s order of operations
 * rounds differently in the last bits, and the images keep their pixels). */
static double map_x(const plot_box *b, double v) {
    const double sx = b->pw / (b->xa.hi - b->xa.lo);
    return b->left + (v - b->xa.lo) * sx;
}

/* A y of the data in pixels of b, upwards from the plot area's bottom (as map_x). */
static double map_y(const plot_box *b, double v) {
    const double sy = b->ph / (b->ya.hi - b->ya.lo);
    return b->top + b->ph - (v - b->ya.lo) * sy;
}

/* The white canvas and the grid at the labelled ticks, under everything. */
static void draw_grid(dg_draw *d, const dg_image *img, const plot_box *b, const plot_in *in) {
    dg_draw_rect_fill(d, 0, 0, img->w, img->h, 0xffffff, 1);
    const int nx = in->cat ? in->ncat : b->xa.n;
    for (int i = 0; i < nx; i++) {
        if (in->cat && i % b->every) continue;
        const double x = round(map_x(b, in->cat ? i : b->xa.tick[i]));
        dg_draw_line(d, x, b->top, x, b->top + b->ph, GRID, 1);
    }
    for (int i = 0; i < b->ya.n; i++) {
        const double y = round(map_y(b, b->ya.tick[i]));
        dg_draw_line(d, b->left, y, b->left + b->pw, y, GRID, 1);
    }
}

/* The series: runs of drawable points as polylines, a lone point as a dot. px and py hold the
 * longest series' points. */
static void draw_series(dg_draw *d, const plot_box *b, const plot_in *in, double *px, double *py) {
    const dg_plot_series *s = in->s;
    const double lw = LINE * b->fs, dot = DOT * b->fs;
    for (int k = 0; k < in->count; k++) {
        int run = 0;
        for (int i = 0; i <= s[k].n; i++) {
            double x, y;
            if (i < s[k].n && point(&s[k], i, in->log_y, &x, &y)) {
                px[run] = map_x(b, x);
                py[run] = map_y(b, y);
                run++;
                continue;
            }
            if (run == 1) dg_draw_circle_fill(d, px[0], py[0], dot, s[k].rgb, 1.0);
            else if (run > 1) dg_draw_polyline(d, px, py, run, s[k].rgb, lw);
            run = 0;
        }
    }
}

/* The category axis' ticks and labels (cat_plan's way: side by side, columns read upwards, or one
 * line read upwards, every b->every-th). */
static void draw_categories(dg_draw *d, const dg_image *img, const plot_box *b, const plot_in *in) {
    const double font = b->font, ch = b->ch, bottom = b->top + b->ph;
    char line[CAT_LINE];
    for (int i = 0; i < in->ncat; i++) {
        const double x = round(map_x(b, i)), y = bottom + 1 + b->tick + b->gap;
        dg_draw_line(d, x, bottom + 1, x, bottom + b->tick, INK, 1);
        if (i % b->every) continue;
        if (b->flat) {  /* read upwards, its end at the tick */
            label_flat(d, in->cat[i], font, img->h / 3.0, line, sizeof line);
            dg_draw_text(d, x, y, line, INK, font, DG_TEXT_RIGHT | DG_TEXT_MIDDLE, 1);
            continue;
        }
        const int n = label_line(in->cat[i], 0, line, sizeof line);
        for (int k = 0; k < n; k++) {
            if (b->up) {  /* a column each, the first at the left, their ends at the tick */
                label_cut(d, in->cat[i], k, font, img->h / 3.0, line, sizeof line);
                dg_draw_text(d, x + (k - (n - 1) / 2.0) * ch, y, line, INK, font, DG_TEXT_RIGHT | DG_TEXT_MIDDLE, 1);
            } else {
                label_line(in->cat[i], k, line, sizeof line);
                dg_draw_text(d, x, y + k * ch, line, INK, font, DG_TEXT_CENTER | DG_TEXT_TOP, 0);
            }
        }
    }
}

/* The frame, the ticks and their labels, the title and the axis labels. */
static void draw_axes(dg_draw *d, const dg_image *img, const plot_box *b, const plot_in *in) {
    const double pad = b->pad, tick = b->tick, gap = b->gap, font = b->font;
    const double left = b->left, top = b->top, pw = b->pw, ph = b->ph;
    const dg_axis *xa = &b->xa, *ya = &b->ya;
    dg_draw_rect_outline(d, left - 0.5, top - 0.5, pw + 2, ph + 2, INK, 1);
    if (!in->cat) {
        for (int i = 0; i < xa->n; i++) {
            const double x = round(map_x(b, xa->tick[i]));
            dg_draw_line(d, x, top + ph + 1, x, top + ph + tick, INK, 1);
            dg_draw_text(d, x, top + ph + 1 + tick + gap, xa->label[i], INK, font, DG_TEXT_CENTER | DG_TEXT_TOP, 0);
        }
    } else {
        draw_categories(d, img, b, in);
    }
    for (int i = 0; i < ya->n; i++) {
        const double y = round(map_y(b, ya->tick[i]));
        dg_draw_line(d, left - tick, y, left - 1, y, INK, 1);
        dg_draw_text(d, left - tick - gap, y, ya->label[i], INK, font, DG_TEXT_RIGHT | DG_TEXT_MIDDLE, 0);
    }
    for (int i = 0; i < ya->nminor; i++) {
        const double y = round(map_y(b, ya->minor[i]));
        dg_draw_line(d, left - tick / 2, y, left - 1, y, INK, 1);
    }
    if (in->title && *in->title)
        dg_draw_text(d, left + pw / 2, pad, in->title, INK, b->ts, DG_TEXT_CENTER | DG_TEXT_TOP, 0);
    if (in->xlabel && *in->xlabel)
        dg_draw_text(d, left + pw / 2, img->h - pad, in->xlabel, INK, font, DG_TEXT_CENTER | DG_TEXT_BOTTOM, 0);
    if (in->ylabel && *in->ylabel)
        dg_draw_text(d, pad, top + ph / 2, in->ylabel, INK, font, DG_TEXT_CENTER | DG_TEXT_TOP, 1);
}

/* The legend, when a series has a label: a translucent box where no data is (legend_inside), or
 * right of the plot area; a line sample each, or a dot for a series of lone points. */
static void draw_legend(dg_draw *d, const plot_box *b, const plot_in *in) {
    if (b->lw <= 0) return;
    const dg_plot_series *s = in->s;
    const double pad = b->pad, sample = 24.0 * b->fs, lh = b->ch + 2.0 * b->fs, dot = DOT * b->fs;
    dg_draw_rect_fill(d, b->lx, b->ly, b->lw, b->lh, 0xffffff, 0.85);
    dg_draw_rect_outline(d, b->lx, b->ly, b->lw, b->lh, 0xb0b0b0, 1);
    int row = 0;
    for (int k = 0; k < in->count; k++) {
        if (!s[k].label) continue;
        const double ly = b->ly + pad / 2 + row * lh + lh / 2, lx = b->lx + pad;
        if (dots_only(&s[k], in->log_y)) dg_draw_circle_fill(d, lx + sample / 2, ly, dot, s[k].rgb, 1.0);
        else dg_draw_line(d, lx, ly, lx + sample, ly, s[k].rgb, 2.0 * b->fs);
        dg_draw_text(d, lx + sample + pad, ly, s[k].label, INK, b->font, DG_TEXT_LEFT | DG_TEXT_MIDDLE, 0);
        row++;
    }
}

/* Draws the plot of in over the whole of img (see dg_plot_draw): checks it, lays it out (the
 * legend inside the plot area where no data is, else at its right), then draws the grid, the
 * series, the axes and texts, and the legend, in that order. */
static dg_status plot_draw(dg_image *img, const plot_in *in, dg_err *e) {
    dg_status st = plot_check(img, in, e);
    if (st != DG_OK) return st;
    double lo[2], hi[2];
    int longest;
    const long drawn = data_range(in, lo, hi, &longest);
    dg_draw d;
    if ((st = dg_draw_begin(&d, img, e)) != DG_OK) return st;
    plot_box b;
    lay_out(&b, &d, img, in, -1, lo[0], hi[0], lo[1], hi[1]);
    legend_size(&b, &d, in);
    if (b.lw > 0 && !legend_inside(&b, in)) {  /* no clear corner: at the right of the plot area */
        lay_out(&b, &d, img, in, b.pad + b.lw + b.pad, lo[0], hi[0], lo[1], hi[1]);
        b.lx = b.left + b.pw + b.pad;
        b.ly = b.top;
    }
    if (b.pw < 20 || b.ph < 20) {
        dg_draw_abort(&d);
        return dg_err_set(e, DG_ERR_ARG, "plot: %dx%d canvas too small for axes and labels", img->w, img->h);
    }
    double *px = longest ? malloc((size_t)longest * 2 * sizeof(double)) : NULL;
    if (longest && !px) {
        dg_draw_abort(&d);
        return dg_err_set(e, DG_ERR_NOMEM, "plot: out of memory for %d points", longest);
    }
    draw_grid(&d, img, &b, in);
    draw_series(&d, &b, in, px, px ? px + longest : NULL);
    free(px);
    draw_axes(&d, img, &b, in);
    draw_legend(&d, &b, in);
    if (!drawn) {
        const char *note = in->log_y ? "no data (no finite positive values)" : "no data (no finite values)";
        dg_draw_text(&d, b.left + b.pw / 2, b.top + b.ph / 2, note, NOTE_INK, b.font, DG_TEXT_CENTER | DG_TEXT_MIDDLE, 0);
    }
    return dg_draw_end(&d, e);
}

/* Draws a line plot over the whole of img (cleared to white first): a framed
 * plot area with grid, outward ticks with numeric labels (log_y != 0: y on a
 * log scale with decades labelled), the series as antialiased polylines in
 * their colours, a legend of those with a label (in the first corner of the
 * plot area that no line or dot crosses: top right, top left, bottom right,
 * bottom left; else right of the plot area), the title on top and the axis
 * labels (any of the three texts may be NULL). Points that are not finite, or
 * not positive on a log axis, are skipped and break the line; a point with no
 * drawable neighbour shows as a dot (a series of such points has a dot in the
 * legend). With nothing to draw the axes still appear with a "no data" note.
 * Returns DG_OK, or DG_ERR_ARG with e set (canvas too small, a series with
 * n < 0 or no y), DG_ERR_NOMEM. Nothing is retained. */
dg_status dg_plot_draw(dg_image *img, const char *title, const char *xlabel, const char *ylabel,
                       int log_y, const dg_plot_series *s, int count, dg_err *e) {
    const plot_in in = {title, xlabel, ylabel, log_y, NULL, 0, s, count};
    return plot_draw(img, &in, e);
}

/* The peak memory of a w x h plot of n points (image.h). */
double dg_plot_memory(int w, int h, double n) {
    return 4.0 * (1 << 20) + (double)w * h * (4 + 4) + n * 2 * sizeof(double);
}

/* Draws the plot of in (dg_plot_lines, dg_plot_categories) on a w x h white canvas and writes
 * it to path as a PNG (atomically). Returns DG_OK, or DG_ERR_ARG (bad size or
 * series), DG_ERR_NOMEM, DG_ERR_IO with e set; on failure no file is left.
 * The series stay the caller's. */
static dg_status plot_file(const char *path, int w, int h, const plot_in *in, dg_err *e) {
    if (w < 1 || h < 1 || w > DG_IMAGE_MAX_SIDE || h > DG_IMAGE_MAX_SIDE)
        return dg_err_set(e, DG_ERR_ARG, "%s: plot size %dx%d out of range (1..%d each)",
                          path ? path : "plot", w, h, DG_IMAGE_MAX_SIDE);
    dg_image *img = dg_image_create(w, h, 0xffffff);
    if (!img) return dg_err_set(e, DG_ERR_NOMEM, "%s: out of memory for a %dx%d plot", path ? path : "plot", w, h);
    dg_status st = plot_draw(img, in, e);
    if (st == DG_OK) st = dg_png_write(img, path, e);
    else if (path) dg_err_prefix(e, path);
    dg_image_free(img);
    return st;
}

dg_status dg_plot_lines(const char *path, int w, int h, const char *title, const char *xlabel,
                        const char *ylabel, int log_y, const dg_plot_series *s, int count,
                        dg_err *e) {
    const plot_in in = {title, xlabel, ylabel, log_y, NULL, 0, s, count};
    return plot_file(path, w, h, &in, e);
}

dg_status dg_plot_categories(const char *path, int w, int h, const char *title, const char *xlabel,
                             const char *ylabel, int log_y, const char *const *names, int ncat,
                             const dg_plot_series *s, int count, dg_err *e) {
    if (!names || ncat < 1)
        return dg_err_set(e, DG_ERR_ARG, "%s: a plot of %d categories", path ? path : "plot", ncat);
    const plot_in in = {title, xlabel, ylabel, log_y, names, ncat, s, count};
    return plot_file(path, w, h, &in, e);
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
