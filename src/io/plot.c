/* Line plots: several series against a shared x axis, linear or log-scale y,
 * with ticks, numeric labels, grid, legend and title, drawn onto a canvas or
 * written as a PNG. */
#include "difgames/image.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ----------------------------------------------------------------- types */

#define MAX_TICKS 32
#define MAX_MINOR 160

/* One axis in plotted units (log10(y) for a log axis). */
typedef struct axis {
    double lo, hi;                 /* visible range                              */
    int    log;
    int    n;                      /* labelled ticks                             */
    double tick[MAX_TICKS];
    char   label[MAX_TICKS][24];
    int    nminor;                 /* unlabelled ticks (log axes: 2..9 x 10^k)  */
    double minor[MAX_MINOR];
} axis;

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

/* Rewrites C's "1.5e+06" as "1.5e6" and "2e-05" as "2e-5". */
static void compact_exponent(char *s) {
    char *e = strchr(s, 'e');
    if (!e) return;
    char *r = e + 1, *w = e + 1;
    if (*r == '+') r++;
    else if (*r == '-') *w++ = *r++;
    while (*r == '0' && r[1]) r++;
    memmove(w, r, strlen(r) + 1);
}

/* A 1, 2 or 5 times a power of ten near span / target. */
static double nice_step(double span, int target) {
    double raw = span / target;
    double mag = pow(10.0, floor(log10(raw)));
    double f = raw / mag;
    return (f < 1.5 ? 1.0 : f < 3.0 ? 2.0 : f < 7.0 ? 5.0 : 10.0) * mag;
}

/* Ticks at multiples of a round step inside [lo, hi], aiming for target of
 * them, labelled with just enough digits to tell them apart. */
static void linear_ticks(axis *a, int target) {
    double step = nice_step(a->hi - a->lo, target);
    double big = fmax(fabs(a->lo), fabs(a->hi));
    int sci = big >= 1e5 || big < 1e-3;
    int sig = (int)(floor(log10(big)) - floor(log10(step)));  /* digits after the point, scientific */
    int dec = step >= 1.0 ? 0 : (int)ceil(-log10(step) - 1e-9);
    if (sig < 0) sig = 0;
    if (sig > 6) sig = 6;
    if (dec > 9) dec = 9;
    a->n = 0;
    a->nminor = 0;
    for (double k = ceil(a->lo / step - 1e-9); a->n < MAX_TICKS; k += 1.0) {
        double v = k * step;
        if (v > a->hi + step * 1e-9) break;
        if (fabs(v) < step * 1e-9) v = 0.0;  /* no "-0" or "1e-17" at zero */
        a->tick[a->n] = v;
        if (v == 0.0 && sci) snprintf(a->label[a->n], sizeof a->label[0], "0");
        else if (sci) snprintf(a->label[a->n], sizeof a->label[0], "%.*e", sig, v);
        else snprintf(a->label[a->n], sizeof a->label[0], "%.*f", dec, v);
        compact_exponent(a->label[a->n]);
        a->n++;
    }
}

/* Decade ticks on [lo, hi] (whole decades), every k-th one labelled so that
 * at most max_labels show, with 2..9 x 10^d minor ticks when few decades. */
static void log_ticks(axis *a, int max_labels) {
    int dlo = (int)a->lo, dhi = (int)a->hi, nd = dhi - dlo;
    int every = (nd + max_labels - 1) / max_labels;
    if (every < 1) every = 1;
    a->n = 0;
    a->nminor = 0;
    for (int d = dlo; d <= dhi && a->n < MAX_TICKS; d++) {
        if (((d % every) + every) % every != 0) continue;
        a->tick[a->n] = d;
        if (d >= -2 && d <= 3) snprintf(a->label[a->n], sizeof a->label[0], "%g", pow(10.0, d));
        else snprintf(a->label[a->n], sizeof a->label[0], "1e%d", d);
        a->n++;
    }
    if (nd > 12) return;
    for (int d = dlo; d < dhi; d++)
        for (int m = 2; m <= 9 && a->nminor < MAX_MINOR; m++) a->minor[a->nminor++] = d + log10((double)m);
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

static int widest_label(const axis *a, int scale) {
    int m = 0;
    for (int i = 0; i < a->n; i++) {
        int w = dg_image_text_width(a->label[i], scale);
        if (w > m) m = w;
    }
    return m;
}

static int round_px(double v) {
    return (int)floor(v + 0.5);
}

/* ------------------------------------------------------ public functions */

/* Returns the i-th colour of a 10-colour cycle (matplotlib's tab10); any i,
 * negative too, wraps around. */
uint32_t dg_plot_color(int i) {
    return CYCLE[((i % 10) + 10) % 10];
}

/* Draws a line plot over the whole of img (cleared to white first): a framed
 * plot area with grid, outward ticks with numeric labels (log_y != 0: y on a
 * log scale with decades labelled), the series as anti-aliased polylines in
 * their colours, a legend (top right) of those with a label, the title on top
 * and the axis labels (any of the three texts may be NULL). Points that are
 * not finite, or not positive on a log axis, are skipped and break the line;
 * a point with no drawable neighbour shows as a dot. With nothing to draw the
 * axes still appear with a "no data" note. Returns DG_OK, or DG_ERR_ARG with
 * e set (canvas too small, a series with n < 0 or no y). Nothing is retained. */
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
    for (int k = 0; k < count; k++)
        for (int i = 0; i < s[k].n; i++) {
            double x, y;
            if (!point(&s[k], i, log_y, &x, &y)) continue;
            xlo = fmin(xlo, x); xhi = fmax(xhi, x);
            ylo = fmin(ylo, y); yhi = fmax(yhi, y);
            drawn++;
        }
    if (!drawn) {
        xlo = 0.0; xhi = 1.0;
        ylo = log_y ? -1.0 : 0.0; yhi = 1.0;
    }

    /* Sizes scale with the canvas: 1x up to 1280x960, then 2x, ... */
    int fs = img->w / 640 < img->h / 480 ? img->w / 640 : img->h / 480;
    if (fs < 1) fs = 1;
    int pad = 8 * fs, tick = 5 * fs, gap = 3 * fs, ch = DG_FONT_HEIGHT * fs;
    int ts = 2 * fs;
    if (title && dg_image_text_width(title, ts) > img->w - 2 * pad) ts = fs;

    int top = pad + (title && *title ? DG_FONT_HEIGHT * ts + pad : 0);
    int bottom = tick + gap + ch + (xlabel && *xlabel ? pad + ch : 0) + pad;
    int ph = img->h - top - bottom;

    axis ya = {.log = log_y};
    if (log_y) {
        ya.lo = floor(ylo);
        ya.hi = ceil(yhi);
        if (ya.hi - ya.lo < 1.0) { ya.lo -= 1.0; ya.hi += 1.0; }
        int max_labels = ph / (3 * DG_FONT_LINE * fs);
        log_ticks(&ya, max_labels < 2 ? 2 : max_labels);
    } else {
        ya.lo = ylo;
        ya.hi = yhi;
        pad_range(&ya.lo, &ya.hi, 0.05);
        int target = ph / (4 * DG_FONT_LINE * fs);
        linear_ticks(&ya, target < 2 ? 2 : target > 10 ? 10 : target);
    }
    int left = pad + (ylabel && *ylabel ? ch + pad : 0) + widest_label(&ya, fs) + gap + tick;

    axis xa = {.lo = xlo, .hi = xhi};
    pad_range(&xa.lo, &xa.hi, 0.02);
    int right = 2 * pad;
    int pw = img->w - left - right;
    /* Most x ticks whose labels still fit side by side with room between. */
    for (int target = 10; target >= 2; target--) {
        linear_ticks(&xa, target);
        int need = (widest_label(&xa, fs) + 4 * DG_FONT_ADVANCE * fs) * xa.n;
        if (need <= pw) break;
    }
    int half_last = xa.n ? dg_image_text_width(xa.label[xa.n - 1], fs) / 2 + pad / 2 : 0;
    if (half_last > right) { right = half_last; pw = img->w - left - right; }

    if (pw < 20 || ph < 20)
        return dg_err_set(e, DG_ERR_ARG, "plot: %dx%d canvas too small for axes and labels", img->w, img->h);

    double sx = pw / (xa.hi - xa.lo), sy = ph / (ya.hi - ya.lo);
#define MAPX(v) (left + ((v) - xa.lo) * sx)
#define MAPY(v) (top + ph - ((v) - ya.lo) * sy)

    dg_image_clear(img, 0xffffff);
    /* grid at labelled ticks, under everything */
    for (int i = 0; i < xa.n; i++) dg_image_rect_fill(img, round_px(MAPX(xa.tick[i])), top, 1, ph, GRID, 1.0f);
    for (int i = 0; i < ya.n; i++) dg_image_rect_fill(img, left, round_px(MAPY(ya.tick[i])), pw, 1, GRID, 1.0f);

    /* series */
    float lw = 1.6f * (float)fs;
    for (int k = 0; k < count; k++) {
        double px = 0, py = 0;
        int have_prev = 0, prev_alone = 0;
        for (int i = 0; i < s[k].n; i++) {
            double x, y;
            if (!point(&s[k], i, log_y, &x, &y)) {
                if (have_prev && prev_alone)
                    dg_image_circle_fill(img, (float)MAPX(px), (float)MAPY(py), lw, s[k].rgb, 1.0f);
                have_prev = 0;
                continue;
            }
            if (have_prev) {
                dg_image_line(img, (float)MAPX(px), (float)MAPY(py), (float)MAPX(x), (float)MAPY(y), s[k].rgb, lw);
                prev_alone = 0;
            } else {
                prev_alone = 1;
            }
            px = x;
            py = y;
            have_prev = 1;
        }
        if (have_prev && prev_alone)
            dg_image_circle_fill(img, (float)MAPX(px), (float)MAPY(py), lw, s[k].rgb, 1.0f);
    }

    /* frame, ticks and their labels */
    dg_image_rect_outline(img, left, top, pw + 1, ph + 1, INK);
    for (int i = 0; i < xa.n; i++) {
        int x = round_px(MAPX(xa.tick[i]));
        dg_image_rect_fill(img, x, top + ph + 1, 1, tick, INK, 1.0f);
        int tw = dg_image_text_width(xa.label[i], fs);
        dg_image_text(img, x - tw / 2, top + ph + 1 + tick + gap, xa.label[i], INK, fs);
    }
    for (int i = 0; i < ya.n; i++) {
        int y = round_px(MAPY(ya.tick[i]));
        dg_image_rect_fill(img, left - tick, y, tick, 1, INK, 1.0f);
        int tw = dg_image_text_width(ya.label[i], fs);
        dg_image_text(img, left - tick - gap - tw, y - (7 * fs) / 2, ya.label[i], INK, fs);
    }
    for (int i = 0; i < ya.nminor; i++) {
        int y = round_px(MAPY(ya.minor[i]));
        dg_image_rect_fill(img, left - tick / 2, y, tick / 2 > 0 ? tick / 2 : 1, 1, INK, 1.0f);
    }

    /* title and axis labels */
    if (title && *title) {
        int tw = dg_image_text_width(title, ts);
        dg_image_text(img, left + (pw - tw) / 2, pad, title, INK, ts);
    }
    if (xlabel && *xlabel) {
        int tw = dg_image_text_width(xlabel, fs);
        dg_image_text(img, left + (pw - tw) / 2, img->h - pad - ch, xlabel, INK, fs);
    }
    if (ylabel && *ylabel) {
        int th = dg_image_text_width(ylabel, fs);
        dg_image_text_up(img, pad, top + (ph - th) / 2, ylabel, INK, fs);
    }

    /* legend: a translucent box in the top-right corner of the plot area */
    int nleg = 0, legw = 0;
    for (int k = 0; k < count; k++)
        if (s[k].label) {
            nleg++;
            int tw = dg_image_text_width(s[k].label, fs);
            if (tw > legw) legw = tw;
        }
    if (nleg) {
        int sample = 20 * fs, lh = DG_FONT_LINE * fs + 2 * fs;
        int sgap = pad / 2 + 2 * fs;  /* room for the sample's round cap */
        int bw = pad + sample + sgap + legw + pad, bh = nleg * lh + pad;
        int bx = left + pw - pad / 2 - bw, by = top + pad / 2;
        dg_image_rect_fill(img, bx, by, bw, bh, 0xffffff, 0.85f);
        dg_image_rect_outline(img, bx, by, bw, bh, 0xb0b0b0);
        int row = 0;
        for (int k = 0; k < count; k++) {
            if (!s[k].label) continue;
            int ty = by + pad / 2 + row * lh + fs;
            float ly = (float)(ty + (7 * fs) / 2);
            dg_image_line(img, (float)(bx + pad), ly, (float)(bx + pad + sample), ly, s[k].rgb, 2.0f * (float)fs);
            dg_image_text(img, bx + pad + sample + sgap, ty, s[k].label, INK, fs);
            row++;
        }
    }

    if (!drawn) {
        const char *note = log_y ? "no data (no finite positive values)" : "no data (no finite values)";
        int tw = dg_image_text_width(note, fs);
        dg_image_text(img, left + (pw - tw) / 2, top + (ph - ch) / 2, note, NOTE_INK, fs);
    }
#undef MAPX
#undef MAPY
    return DG_OK;
}

/* Draws the plot described at dg_plot_draw on a w x h white canvas and writes
 * it to path as a PNG (atomically). Returns DG_OK, or DG_ERR_ARG (bad size or
 * series), DG_ERR_NOMEM, DG_ERR_IO with e set; on failure no file is left.
 * The series stay the caller's. */
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
