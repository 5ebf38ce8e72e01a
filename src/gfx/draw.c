/* Drawing on a dg_image through cairo: antialiased shapes, text in a real face, heat maps, axis ticks. */
#include "gfx/draw.h"

#include <cairo-pdf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------- internal helpers */

/* viridis sampled at t = 0, 0.1, ..., 1 (matplotlib's colormap). */
static const uint32_t VIRIDIS[11] = {
    0x440154, 0x482475, 0x414487, 0x355f8d, 0x2a788e, 0x21918c,
    0x22a884, 0x44bf70, 0x7ad151, 0xbddf26, 0xfde725,
};

#define NAN_GREY 0x808080u
#define PI 3.14159265358979323846
#define FAR 1e6  /* coordinates beyond +-FAR (pixels) are clipped before cairo sees them */

static int live(const dg_draw *d) {
    return d && d->cr && cairo_status(d->cr) == CAIRO_STATUS_SUCCESS;
}

static void set_rgb(cairo_t *cr, uint32_t rgb, double alpha) {
    cairo_set_source_rgba(cr, ((rgb >> 16) & 0xff) / 255.0, ((rgb >> 8) & 0xff) / 255.0, (rgb & 0xff) / 255.0,
                          alpha);
}

static int finite4(double a, double b, double c, double e) {
    return isfinite(a) && isfinite(b) && isfinite(c) && isfinite(e);
}

/* Liang-Barsky: clips the segment to [xmin,xmax] x [ymin,ymax] in place; 0 when it misses the box. */
static int clip_segment(double *x0, double *y0, double *x1, double *y1, double xmin, double ymin, double xmax,
                        double ymax) {
    double dx = *x1 - *x0, dy = *y1 - *y0;
    double p[4] = {-dx, dx, -dy, dy};
    double q[4] = {*x0 - xmin, xmax - *x0, *y0 - ymin, ymax - *y0};
    double t0 = 0.0, t1 = 1.0;
    for (int i = 0; i < 4; i++) {
        if (p[i] == 0.0) {
            if (q[i] < 0.0) return 0;
            continue;
        }
        double t = q[i] / p[i];
        if (p[i] < 0.0) { if (t > t1) return 0; if (t > t0) t0 = t; }
        else            { if (t < t0) return 0; if (t < t1) t1 = t; }
    }
    double ax = *x0, ay = *y0;
    *x0 = ax + t0 * dx; *y0 = ay + t0 * dy;
    *x1 = ax + t1 * dx; *y1 = ay + t1 * dy;
    return 1;
}

/* Clips a segment to the canvas grown by reach; 0 when nothing of it shows. */
static int clip_to_canvas(const dg_draw *d, double *x0, double *y0, double *x1, double *y1, double reach) {
    return clip_segment(x0, y0, x1, y1, -reach, -reach, d->w - 1 + reach, d->h - 1 + reach);
}

/* s as printable ASCII (other bytes '?'), at most cap - 1 characters, into buf. */
static const char *printable(const char *s, char *buf, size_t cap) {
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && n + 1 < cap; p++)
        buf[n++] = *p >= 32 && *p <= 126 ? (char)*p : '?';
    buf[n] = 0;
    return buf;
}

static void font(cairo_t *cr, double size) {
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size > 0 && size < 4096 ? size : 10);
}

/* Bilinear read of values at a real grid position; the nearest sample where a neighbour is not finite. */
static float sample_bilinear(const float *v, int vw, int vh, double gx, double gy) {
    if (gx < 0.0) gx = 0.0;
    if (gy < 0.0) gy = 0.0;
    if (gx > vw - 1) gx = vw - 1;
    if (gy > vh - 1) gy = vh - 1;
    int ix = (int)gx, iy = (int)gy;
    int jx = ix + 1 < vw ? ix + 1 : ix, jy = iy + 1 < vh ? iy + 1 : iy;
    float fx = (float)(gx - ix), fy = (float)(gy - iy);
    float a = v[(size_t)iy * vw + ix], b = v[(size_t)iy * vw + jx];
    float c = v[(size_t)jy * vw + ix], e = v[(size_t)jy * vw + jx];
    float r = (a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + e * fx) * fy;
    if (isfinite(r)) return r;
    int nx = fx < 0.5f ? ix : jx, ny = fy < 0.5f ? iy : jy;
    return v[(size_t)ny * vw + nx];
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

/* ------------------------------------------------------ functions */

/* Starts drawing on img: a cairo surface of its size holding its pixels. */
dg_status dg_draw_begin(dg_draw *d, dg_image *img, dg_err *e) {
    *d = (dg_draw){0};
    if (!img || !img->rgb || img->w < 1 || img->h < 1) return dg_err_set(e, DG_ERR_ARG, "draw: no image");
    d->img = img;
    d->w = img->w;
    d->h = img->h;
    d->s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, img->w, img->h);
    if (cairo_surface_status(d->s) != CAIRO_STATUS_SUCCESS) {
        dg_draw_abort(d);
        return dg_err_set(e, DG_ERR_NOMEM, "draw: out of memory for a %dx%d surface", img->w, img->h);
    }
    unsigned char *data = cairo_image_surface_get_data(d->s);
    const int stride = cairo_image_surface_get_stride(d->s);
    for (int y = 0; y < img->h; y++) {
        uint32_t *row = (uint32_t *)(void *)(data + (size_t)y * stride);
        const unsigned char *p = img->rgb + (size_t)y * img->w * 3;
        for (int x = 0; x < img->w; x++, p += 3)
            row[x] = ((uint32_t)p[0] << 16) | ((uint32_t)p[1] << 8) | p[2];
    }
    cairo_surface_mark_dirty(d->s);
    d->cr = cairo_create(d->s);
    if (cairo_status(d->cr) != CAIRO_STATUS_SUCCESS) {
        dg_draw_abort(d);
        return dg_err_set(e, DG_ERR_NOMEM, "draw: out of memory for a drawing context");
    }
    cairo_translate(d->cr, 0.5, 0.5);  /* pixel (i, j) centred on (i, j) */
    cairo_set_line_cap(d->cr, CAIRO_LINE_CAP_ROUND);
    cairo_set_line_join(d->cr, CAIRO_LINE_JOIN_ROUND);
    return DG_OK;
}

/* cairo's PDF output into the temporary file; a short write stops cairo with a write error. */
static cairo_status_t pdf_write(void *closure, const unsigned char *data, unsigned int length) {
    const dg_file *f = closure;
    return fwrite(data, 1, length, f->fp) == length ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

/* Starts a PDF page of w x h points written into path's temporary file. */
dg_status dg_draw_begin_pdf(dg_draw *d, const char *path, int w, int h, dg_err *e) {
    *d = (dg_draw){0};
    if (w < 1 || h < 1 || w > DG_IMAGE_MAX_SIDE || h > DG_IMAGE_MAX_SIDE)
        return dg_err_set(e, DG_ERR_ARG, "draw: a PDF page of %dx%d points", w, h);
    if (!(d->pdf = malloc(sizeof *d->pdf))) return dg_err_set(e, DG_ERR_NOMEM, "draw: out of memory for a PDF");
    const dg_status st = dg_file_begin(d->pdf, path, e);
    if (st != DG_OK) {
        free(d->pdf);
        d->pdf = NULL;
        return st;
    }
    d->w = w;
    d->h = h;
    d->s = cairo_pdf_surface_create_for_stream(pdf_write, d->pdf, w, h);
    cairo_pdf_surface_set_metadata(d->s, CAIRO_PDF_METADATA_CREATOR, "difgames");
    d->cr = cairo_create(d->s);
    if (cairo_surface_status(d->s) != CAIRO_STATUS_SUCCESS || cairo_status(d->cr) != CAIRO_STATUS_SUCCESS) {
        dg_draw_abort(d);
        return dg_err_set(e, DG_ERR_NOMEM, "%s: out of memory for a PDF surface", path);
    }
    cairo_translate(d->cr, 0.5, 0.5);  /* as an image's: point (i, j) is pixel (i, j)'s centre */
    cairo_set_line_cap(d->cr, CAIRO_LINE_CAP_ROUND);
    cairo_set_line_join(d->cr, CAIRO_LINE_JOIN_ROUND);
    return DG_OK;
}

/* Finishes a PDF: cairo writes the rest, then the file is renamed into place. */
static dg_status pdf_end(dg_draw *d, dg_err *e) {
    cairo_destroy(d->cr);
    d->cr = NULL;
    cairo_surface_finish(d->s);
    const cairo_status_t cs = cairo_surface_status(d->s);
    cairo_surface_destroy(d->s);
    d->s = NULL;
    dg_status st = DG_OK;
    if (cs != CAIRO_STATUS_SUCCESS) {
        st = dg_err_set(e, cs == CAIRO_STATUS_NO_MEMORY ? DG_ERR_NOMEM : DG_ERR_IO, "%s: %s", d->pdf->path,
                        cairo_status_to_string(cs));
        dg_file_abort(d->pdf);
    } else {
        st = dg_file_commit(d->pdf, e);
    }
    free(d->pdf);
    d->pdf = NULL;
    return st;
}

/* Copies the surface back into the image's pixels and frees it (a PDF: finishes and writes it). */
dg_status dg_draw_end(dg_draw *d, dg_err *e) {
    if (!d->s) return dg_err_set(e, DG_ERR_ARG, "draw: not begun");
    cairo_status_t cs = d->cr ? cairo_status(d->cr) : CAIRO_STATUS_NULL_POINTER;
    if (cs != CAIRO_STATUS_SUCCESS) {
        dg_draw_abort(d);
        return dg_err_set(e, cs == CAIRO_STATUS_NO_MEMORY ? DG_ERR_NOMEM : DG_ERR_ARG, "draw: %s",
                          cairo_status_to_string(cs));
    }
    if (d->pdf) return pdf_end(d, e);
    cairo_surface_flush(d->s);
    const unsigned char *data = cairo_image_surface_get_data(d->s);
    const int stride = cairo_image_surface_get_stride(d->s);
    for (int y = 0; y < d->img->h; y++) {
        const uint32_t *row = (const uint32_t *)(const void *)(data + (size_t)y * stride);
        unsigned char *p = d->img->rgb + (size_t)y * d->img->w * 3;
        for (int x = 0; x < d->img->w; x++, p += 3) {
            p[0] = (unsigned char)(row[x] >> 16);
            p[1] = (unsigned char)(row[x] >> 8);
            p[2] = (unsigned char)row[x];
        }
    }
    dg_draw_abort(d);
    return DG_OK;
}

/* Frees the surface without touching the image (a PDF: removes its temporary file). */
void dg_draw_abort(dg_draw *d) {
    if (!d) return;
    if (d->cr) cairo_destroy(d->cr);
    if (d->s) cairo_surface_destroy(d->s);
    d->cr = NULL;
    d->s = NULL;
    if (d->pdf) {
        dg_file_abort(d->pdf);
        free(d->pdf);
        d->pdf = NULL;
    }
}

/* An antialiased segment of the given width with round caps. */
void dg_draw_line(dg_draw *d, double x0, double y0, double x1, double y1, uint32_t rgb, double width) {
    if (!live(d) || !finite4(x0, y0, x1, y1) || !(width > 0.0) || !(width < FAR)) return;
    if (!clip_to_canvas(d, &x0, &y0, &x1, &y1, width + 2.0)) return;
    set_rgb(d->cr, rgb, 1.0);
    cairo_set_line_width(d->cr, width);
    cairo_move_to(d->cr, x0, y0);
    cairo_line_to(d->cr, x1, y1);
    cairo_stroke(d->cr);
}

/* One stroked path through the finite points; a non-finite one (or a piece clipped away) breaks it. */
void dg_draw_polyline(dg_draw *d, const double *x, const double *y, int n, uint32_t rgb, double width) {
    if (!live(d) || !x || !y || n < 1 || !(width > 0.0) || !(width < FAR)) return;
    cairo_t *cr = d->cr;
    set_rgb(cr, rgb, 1.0);
    cairo_set_line_width(cr, width);
    cairo_new_path(cr);
    double ex = NAN, ey = NAN;  /* where the path now ends */
    for (int i = 1; i < n; i++) {
        double ax = x[i - 1], ay = y[i - 1], bx = x[i], by = y[i];
        if (!finite4(ax, ay, bx, by) || !clip_to_canvas(d, &ax, &ay, &bx, &by, width + 2.0)) continue;
        if (!(ax == ex && ay == ey)) cairo_move_to(cr, ax, ay);
        cairo_line_to(cr, bx, by);
        ex = bx;
        ey = by;
    }
    cairo_stroke(cr);
}

/* A filled triangle, its edges stroked in its colour (seam wide) to close the antialiasing gaps. */
void dg_draw_triangle(dg_draw *d, const double *x, const double *y, uint32_t rgb, double seam) {
    if (!live(d) || !finite4(x[0], y[0], x[1], y[1]) || !finite4(x[2], y[2], seam, 0)) return;
    for (int i = 0; i < 3; i++)
        if (fabs(x[i]) > FAR || fabs(y[i]) > FAR) return;
    cairo_t *cr = d->cr;
    set_rgb(cr, rgb, 1.0);
    cairo_new_path(cr);
    cairo_move_to(cr, x[0], y[0]);
    cairo_line_to(cr, x[1], y[1]);
    cairo_line_to(cr, x[2], y[2]);
    cairo_close_path(cr);
    if (!(seam > 0)) {
        cairo_fill(cr);
        return;
    }
    cairo_fill_preserve(cr);
    cairo_set_line_width(cr, seam);
    cairo_stroke(cr);
}

/* Where a circle of radius r (ring half-width hw) stands to the canvas: 0 it misses it, 1 cairo draws
 * it, 2 its disc covers the whole canvas (too large for cairo's fixed point, or not). */
static int circle_case(const dg_draw *d, double cx, double cy, double r, double hw) {
    if (!live(d) || !finite4(cx, cy, r, hw) || !(r >= 0)) return 0;
    const double w = d->w, h = d->h;
    const double nx = fmin(fmax(cx, -1), w), ny = fmin(fmax(cy, -1), h);  /* nearest point of the canvas */
    const double fx = fmax(fabs(cx + 1), fabs(cx - w)), fy = fmax(fabs(cy + 1), fabs(cy - h));  /* farthest */
    const double dmin = hypot(cx - nx, cy - ny), dmax = hypot(fx, fy);
    if (dmin > r + hw + 1) return 0;
    if (dmax < r - hw - 1) return 2;
    return r < FAR && fabs(cx) < FAR && fabs(cy) < FAR ? 1 : 0;  /* a far, huge arc: a straight edge, left out */
}

/* An antialiased disc of radius r mixed in with opacity alpha. */
void dg_draw_circle_fill(dg_draw *d, double cx, double cy, double r, uint32_t rgb, double alpha) {
    if (!(r > 0) || !(alpha > 0)) return;
    const int c = circle_case(d, cx, cy, r, 0);
    if (c == 2) dg_draw_rect_fill(d, 0, 0, d->w, d->h, rgb, alpha);
    if (c != 1) return;
    set_rgb(d->cr, rgb, alpha > 1 ? 1 : alpha);
    cairo_new_path(d->cr);
    cairo_arc(d->cr, cx, cy, r, 0, 2 * PI);
    cairo_fill(d->cr);
}

/* An antialiased ring of radius r, its stroke of the given width centred on the circle. */
void dg_draw_circle_outline(dg_draw *d, double cx, double cy, double r, uint32_t rgb, double width) {
    if (!(width > 0) || !(width < FAR) || circle_case(d, cx, cy, r, width / 2) != 1) return;
    set_rgb(d->cr, rgb, 1.0);
    cairo_set_line_width(d->cr, width);
    cairo_new_path(d->cr);
    cairo_arc(d->cr, cx, cy, r, 0, 2 * PI);
    cairo_stroke(d->cr);
}

/* Clamps a box to the canvas (plus a pixel); 0 when empty or not finite. */
static int clamp_box(const dg_draw *d, double *x, double *y, double *w, double *h) {
    if (!finite4(*x, *y, *w, *h) || !(*w > 0) || !(*h > 0)) return 0;
    double x0 = fmax(*x, -1), y0 = fmax(*y, -1);
    double x1 = fmin(*x + *w, d->w + 1), y1 = fmin(*y + *h, d->h + 1);
    if (!(x1 > x0 && y1 > y0)) return 0;
    *x = x0; *y = y0; *w = x1 - x0; *h = y1 - y0;
    return 1;
}

/* Fills the pixels [x, x+w) x [y, y+h) with opacity alpha. */
void dg_draw_rect_fill(dg_draw *d, double x, double y, double w, double h, uint32_t rgb, double alpha) {
    if (!live(d) || !(alpha > 0) || !clamp_box(d, &x, &y, &w, &h)) return;
    set_rgb(d->cr, rgb, alpha > 1 ? 1 : alpha);
    cairo_new_path(d->cr);
    cairo_rectangle(d->cr, x - 0.5, y - 0.5, w, h);
    cairo_fill(d->cr);
}

/* A border of the given width just inside the box [x, x+w) x [y, y+h). */
void dg_draw_rect_outline(dg_draw *d, double x, double y, double w, double h, uint32_t rgb, double width) {
    if (!live(d) || !finite4(x, y, w, h) || !(width > 0)) return;
    if (w <= 2 * width || h <= 2 * width) { dg_draw_rect_fill(d, x, y, w, h, rgb, 1); return; }
    dg_draw_rect_fill(d, x, y, w, width, rgb, 1);
    dg_draw_rect_fill(d, x, y + h - width, w, width, rgb, 1);
    dg_draw_rect_fill(d, x, y + width, width, h - 2 * width, rgb, 1);
    dg_draw_rect_fill(d, x + w - width, y + width, width, h - 2 * width, rgb, 1);
}

double dg_draw_text_width(dg_draw *d, const char *s, double size) {
    if (!live(d) || !s || !*s) return 0;
    char buf[512];
    cairo_text_extents_t te;
    font(d->cr, size);
    cairo_text_extents(d->cr, printable(s, buf, sizeof buf), &te);
    return te.x_advance;
}

double dg_draw_text_height(dg_draw *d, double size) {
    if (!live(d)) return size;
    cairo_font_extents_t fe;
    font(d->cr, size);
    cairo_font_extents(d->cr, &fe);
    return fe.ascent + fe.descent;
}

/* Draws s anchored at (x, y): align's horizontal flag places the text's start, middle or end there, its
 * vertical flag the top of the face's ascent, the middle of ascent + descent, the baseline or the bottom
 * of the descent. Upright (up = 0) or reading upwards. Returns the advance width. */
double dg_draw_text(dg_draw *d, double x, double y, const char *s, uint32_t rgb, double size, int align, int up) {
    if (!live(d) || !s || !*s || !finite4(x, y, size, 0) || fabs(x) > FAR || fabs(y) > FAR) return 0;
    char buf[512];
    printable(s, buf, sizeof buf);
    cairo_t *cr = d->cr;
    font(cr, size);
    cairo_text_extents_t te;
    cairo_font_extents_t fe;
    cairo_text_extents(cr, buf, &te);
    cairo_font_extents(cr, &fe);
    const int h = align & 3, v = align & 12;
    const double dx = h == DG_TEXT_CENTER ? -te.x_advance / 2 : h == DG_TEXT_RIGHT ? -te.x_advance : 0;
    const double dy = v == DG_TEXT_TOP ? fe.ascent : v == DG_TEXT_MIDDLE ? (fe.ascent - fe.descent) / 2
                    : v == DG_TEXT_BOTTOM ? -fe.descent : 0;
    cairo_save(cr);
    cairo_translate(cr, x - 0.5, y - 0.5);  /* text in cairo's own pixel-edge coordinates */
    if (up) cairo_rotate(cr, -PI / 2);
    set_rgb(cr, rgb, 1.0);
    cairo_move_to(cr, dx, dy);
    cairo_show_text(cr, buf);
    cairo_new_path(cr);
    cairo_restore(cr);
    return te.x_advance;
}

/* VIRIDIS as floats, each channel's start and its step to the next anchor (the packed colours'
 * channels, so that viridis below converts nothing at a pixel; test_image checks the anchors). */
typedef struct viridis_seg {
    float a[3], d[3];  /* r, g, b */
} viridis_seg;

static const viridis_seg VIRIDIS_SEG[10] = {
    {{68, 1, 84}, {4, 35, 33}},
    {{72, 36, 117}, {-7, 32, 18}},
    {{65, 68, 135}, {-12, 27, 6}},
    {{53, 95, 141}, {-11, 25, 1}},
    {{42, 120, 142}, {-9, 25, -2}},
    {{33, 145, 140}, {1, 23, -8}},
    {{34, 168, 132}, {34, 23, -20}},
    {{68, 191, 112}, {54, 18, -31}},
    {{122, 209, 81}, {67, 14, -43}},
    {{189, 223, 38}, {64, 8, -1}},
};

/* The same by channel (r, g, b) for the heat map's loop to vectorise. */
static const float VIRIDIS_A[3][10] = {
    {68, 72, 65, 53, 42, 33, 34, 68, 122, 189},
    {1, 36, 68, 95, 120, 145, 168, 191, 209, 223},
    {84, 117, 135, 141, 142, 140, 132, 112, 81, 38},
};
static const float VIRIDIS_D[3][10] = {
    {4, -7, -12, -11, -9, 1, 34, 54, 67, 64},
    {35, 32, 27, 25, 25, 23, 23, 18, 14, 8},
    {33, 18, 6, 1, -2, -8, -20, -31, -43, -1},
};

/* Maps t in [0, 1] (clamped) to viridis (dark purple -> blue -> green -> yellow); NaN gives grey. */
static inline uint32_t viridis(float t) {
    if (isnan(t)) return NAN_GREY;
    t = (t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t) * 10.0f;
    int i = (int)t;
    if (i >= 10) return VIRIDIS[10];
    const float f = t - (float)i;
    const viridis_seg *g = &VIRIDIS_SEG[i];
    return (uint32_t)(g->a[0] + g->d[0] * f + 0.5f) << 16 | (uint32_t)(g->a[1] + g->d[1] * f + 0.5f) << 8 |
           (uint32_t)(g->a[2] + g->d[2] * f + 0.5f);
}

uint32_t dg_colormap_viridis(float t) { return viridis(t); }

/* Where a pixel centre falls between the grid's samples along one axis: what sample_bilinear
 * computes for it, made once per column (and row) instead of once per pixel. */
typedef struct heat_at {
    int   i, j;   /* the two samples */
    float f;      /* the weight of j */
} heat_at;

static heat_at heat_locate(double g, int n) {
    if (g < 0.0) g = 0.0;
    if (g > n - 1) g = n - 1;
    heat_at a = {(int)g, 0, 0.0f};
    a.j = a.i + 1 < n ? a.i + 1 : a.i;
    a.f = (float)(g - a.i);
    return a;
}

#define HEAT_COLS 65536  /* columns located once a call (wider heat maps locate each pixel) */

/* Writes the heat map's pixels straight into the surface (no antialiasing needed: it fills a box). */
void dg_draw_heat(dg_draw *d, int x, int y, int w, int h, const float *values, int vw, int vh, float vmin,
                  float vmax, int nodes) {
    if (!live(d) || !d->img || !values || vw < 1 || vh < 1 || w < 1 || h < 1) return;
    if (!(isfinite(vmin) && isfinite(vmax) && vmin < vmax)) {
        vmin = INFINITY;
        vmax = -INFINITY;
        for (size_t i = 0; i < (size_t)vw * (size_t)vh; i++) {
            if (!isfinite(values[i])) continue;
            vmin = fminf(vmin, values[i]);
            vmax = fmaxf(vmax, values[i]);
        }
        if (!(vmin <= vmax)) { vmin = 0.0f; vmax = 1.0f; }
    }
    const double span = (double)vmax - (double)vmin;
    const long long c0 = x < 0 ? 0 : x, r0 = y < 0 ? 0 : y;
    const long long xe = (long long)x + w + (nodes != 0), ye = (long long)y + h + (nodes != 0);
    const long long c1 = xe > d->w ? d->w : xe, r1 = ye > d->h ? d->h : ye;
    if (c0 >= c1 || r0 >= r1) return;
    cairo_surface_flush(d->s);
    unsigned char *data = cairo_image_surface_get_data(d->s);
    const int stride = cairo_image_surface_get_stride(d->s);
    /* room for each column's two samples and weight, and a row of values and of colour-scale places */
    const int n = (int)(c1 - c0);
    void *room = c1 - c0 <= HEAT_COLS ? malloc((size_t)n * (2 * sizeof(int) + 3 * sizeof(float))) : NULL;
    if (!room) {  /* wider than the columns kept (or no memory): each pixel located on its own */
        for (long long j = r0; j < r1; j++) {
            uint32_t *row = (uint32_t *)(void *)(data + (size_t)j * stride);
            const double gy = nodes ? (double)(j - y) * (vh - 1) / h : ((double)(j - y) + 0.5) * vh / h - 0.5;
            for (long long i = c0; i < c1; i++) {
                const double gx = nodes ? (double)(i - x) * (vw - 1) / w : ((double)(i - x) + 0.5) * vw / w - 0.5;
                const float v = sample_bilinear(values, vw, vh, gx, gy);
                row[i] = !isfinite(v) ? NAN_GREY : viridis(span > 0.0 ? (float)((v - (double)vmin) / span) : 0.5f);
            }
        }
        cairo_surface_mark_dirty_rectangle(d->s, (int)c0, (int)r0, (int)(c1 - c0), (int)(r1 - r0));
        return;
    }
    /* Each column's two samples and weight, located once (sample_bilinear's), then row by row the
     * values in one pass (no branch: vectorised), their place on the colour scale in another, the
     * colours in a third: sample_bilinear's arithmetic term for term, so the same pixels. */
    int *ci = room, *cj = ci + n;
    float *fxs = (float *)(void *)(cj + n), *vrow = fxs + n, *trow = vrow + n;
    for (int k = 0; k < n; k++) {
        const long long i = c0 + k;
        const heat_at a = heat_locate(nodes ? (double)(i - x) * (vw - 1) / w : ((double)(i - x) + 0.5) * vw / w - 0.5, vw);
        ci[k] = a.i;
        cj[k] = a.j;
        fxs[k] = a.f;
    }
    for (long long j = r0; j < r1; j++) {
        uint32_t *row = (uint32_t *)(void *)(data + (size_t)j * stride) + c0;
        /* the pixel's centre in grid coordinates */
        const double gy = nodes ? (double)(j - y) * (vh - 1) / h : ((double)(j - y) + 0.5) * vh / h - 0.5;
        const heat_at ry = heat_locate(gy, vh);
        const float *top = values + (size_t)ry.i * vw, *bot = values + (size_t)ry.j * vw;
        const float fy = ry.f;
        for (int k = 0; k < n; k++) {
            const float fx = fxs[k];
            vrow[k] = (top[ci[k]] * (1 - fx) + top[cj[k]] * fx) * (1 - fy) + (bot[ci[k]] * (1 - fx) + bot[cj[k]] * fx) * fy;
        }
        for (int k = 0; k < n; k++) {
            if (!isfinite(vrow[k])) vrow[k] = (fy < 0.5f ? top : bot)[fxs[k] < 0.5f ? ci[k] : cj[k]];
        }
        for (int k = 0; k < n; k++) trow[k] = span > 0.0 ? (float)((vrow[k] - (double)vmin) / span) : 0.5f;
        for (int k = 0; k < n; k++) {  /* viridis, branch free: t = 1 is segment 9 at its end */
            float t = trow[k];
            t = (t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t) * 10.0f;
            int s = (int)t;
            s = s > 9 ? 9 : s < 0 ? 0 : s;
            const float f = t - (float)s;
            row[k] = (uint32_t)(VIRIDIS_A[0][s] + VIRIDIS_D[0][s] * f + 0.5f) << 16 |
                     (uint32_t)(VIRIDIS_A[1][s] + VIRIDIS_D[1][s] * f + 0.5f) << 8 |
                     (uint32_t)(VIRIDIS_A[2][s] + VIRIDIS_D[2][s] * f + 0.5f);
        }
        for (int k = 0; k < n; k++)
            if (!isfinite(vrow[k]) || !isfinite(trow[k])) row[k] = NAN_GREY;
    }
    free(room);
    cairo_surface_mark_dirty_rectangle(d->s, (int)c0, (int)r0, (int)(c1 - c0), (int)(r1 - r0));
}

/* Ticks at multiples of a round step inside [lo, hi], aiming for target of them, labelled with just
 * enough digits to tell them apart. */
void dg_axis_linear(dg_axis *a, int target) {
    double step = nice_step(a->hi - a->lo, target < 1 ? 1 : target);
    double big = fmax(fabs(a->lo), fabs(a->hi));
    int sci = big >= 1e5 || big < 1e-3;
    int sig = (int)(floor(log10(big)) - floor(log10(step)));  /* digits after the point, scientific */
    int dec = step >= 1.0 ? 0 : (int)ceil(-log10(step) - 1e-9);
    if (sig < 0) sig = 0;
    if (sig > 6) sig = 6;
    if (dec > 9) dec = 9;
    a->n = 0;
    a->nminor = 0;
    for (double k = ceil(a->lo / step - 1e-9); a->n < DG_AXIS_MAX_TICKS; k += 1.0) {
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

/* Decade ticks on [lo, hi] (whole decades), every k-th one labelled so that at most max_labels show,
 * with 2..9 x 10^d minor ticks when few decades. */
void dg_axis_log(dg_axis *a, int max_labels) {
    int dlo = (int)a->lo, dhi = (int)a->hi, nd = dhi - dlo;
    if (max_labels < 1) max_labels = 1;
    int every = (nd + max_labels - 1) / max_labels;
    if (every < 1) every = 1;
    a->n = 0;
    a->nminor = 0;
    for (int k = dlo; k <= dhi && a->n < DG_AXIS_MAX_TICKS; k++) {
        if (((k % every) + every) % every != 0) continue;
        a->tick[a->n] = k;
        if (k >= -2 && k <= 3) snprintf(a->label[a->n], sizeof a->label[0], "%g", pow(10.0, k));
        else snprintf(a->label[a->n], sizeof a->label[0], "1e%d", k);
        a->n++;
    }
    if (nd > 12) return;
    for (int k = dlo; k < dhi; k++)
        for (int m = 2; m <= 9 && a->nminor < DG_AXIS_MAX_MINOR; m++) a->minor[a->nminor++] = k + log10((double)m);
}

double dg_axis_widest(dg_draw *d, const dg_axis *a, double size) {
    double m = 0;
    for (int i = 0; i < a->n; i++) m = fmax(m, dg_draw_text_width(d, a->label[i], size));
    return m;
}
