/* Drawing on a dg_image with cairo (internal: the library's plots, value figures and replay frames),
 * or the same calls into a PDF (dg_draw_begin_pdf: vector output, the units points).
 *
 *     dg_draw d;
 *     if (dg_draw_begin(&d, img, e) != DG_OK) return e->status;
 *     dg_draw_line(&d, 10, 10, 100, 40, 0xd62728, 2);
 *     dg_draw_text(&d, 160, 4, "epoch 12", 0x000000, 14, DG_TEXT_CENTER | DG_TEXT_TOP, 0);
 *     st = dg_draw_end(&d, e);  // the pixels are back in img
 *
 * Between begin and end the picture lives in a cairo image surface; end copies it back into the
 * image's RGB pixels. Coordinates are pixels, x to the right and y down; pixel (i, j) is centred on
 * the point (i, j), so a 1-pixel line along y = 10.0 covers row 10 exactly. Colours are 0xRRGGBB.
 * Every call clips to the canvas: huge coordinates are safe, and a shape with a non-finite
 * coordinate is not drawn. Text is cairo's sans-serif face (through fontconfig), ASCII 32..126
 * (other bytes show as '?'), sizes in pixels (the em height).
 */
#ifndef DG_GFX_DRAW_H
#define DG_GFX_DRAW_H

#include <cairo.h>
#include <stdint.h>

#include "difgames/fileio.h"
#include "difgames/image.h"

typedef struct dg_draw {
    dg_image        *img;          /* NULL when drawing a PDF        */
    int              w, h;         /* the canvas (img's size, or the PDF page's in points) */
    cairo_surface_t *s;            /* CAIRO_FORMAT_RGB24, img's size; or the PDF surface */
    cairo_t         *cr;
    dg_file         *pdf;          /* the PDF's temporary file, renamed into place by dg_draw_end */
} dg_draw;

/* Text anchors: one horizontal and one vertical flag, or'ed. */
enum {
    DG_TEXT_LEFT = 0, DG_TEXT_CENTER = 1, DG_TEXT_RIGHT = 2,
    DG_TEXT_TOP = 0, DG_TEXT_MIDDLE = 4, DG_TEXT_BASELINE = 8, DG_TEXT_BOTTOM = 12,
};

dg_status dg_draw_begin(dg_draw *d, dg_image *img, dg_err *e);  /* DG_ERR_ARG (no image), DG_ERR_NOMEM   */
dg_status dg_draw_end(dg_draw *d, dg_err *e);                   /* back into img; frees; DG_ERR_NOMEM    */
void dg_draw_abort(dg_draw *d);                                 /* frees, img unchanged; twice harmless  */
/* A one-page PDF of w x h points at path, drawn with the same calls (dg_draw_heat excepted: it paints
 * an image's pixels, and draws nothing on a PDF); dg_draw_end finishes it and renames it into place
 * (atomically, dg_file_commit), dg_draw_abort leaves no file. DG_ERR_ARG (bad size), the file's
 * DG_ERR_IO, DG_ERR_NOMEM. */
dg_status dg_draw_begin_pdf(dg_draw *d, const char *path, int w, int h, dg_err *e);

void dg_draw_line(dg_draw *d, double x0, double y0, double x1, double y1, uint32_t rgb, double width);
/* The polyline through n points (x[i], y[i]); a non-finite point breaks it. Round joins and caps. */
void dg_draw_polyline(dg_draw *d, const double *x, const double *y, int n, uint32_t rgb, double width);
void dg_draw_circle_fill(dg_draw *d, double cx, double cy, double r, uint32_t rgb, double alpha);
void dg_draw_circle_outline(dg_draw *d, double cx, double cy, double r, uint32_t rgb, double width);
/* The triangle (x[0], y[0]), (x[1], y[1]), (x[2], y[2]) filled, its edges stroked in the same colour
 * seam wide (about a pixel) so that triangles sharing an edge leave no antialiasing seam between them
 * (a shaded surface of many, painted back to front); seam 0: filled only. */
void dg_draw_triangle(dg_draw *d, const double *x, const double *y, uint32_t rgb, double seam);
/* Fills the pixels [x, x+w) x [y, y+h); the outline is a border of the given width inside that box. */
void dg_draw_rect_fill(dg_draw *d, double x, double y, double w, double h, uint32_t rgb, double alpha);
void dg_draw_rect_outline(dg_draw *d, double x, double y, double w, double h, uint32_t rgb, double width);

/* Draws s (one line) at size px anchored at (x, y) by align (DG_TEXT_*), rotated a quarter turn
 * anticlockwise (reading upwards) when up; returns its advance width in pixels. */
double dg_draw_text(dg_draw *d, double x, double y, const char *s, uint32_t rgb, double size, int align, int up);
double dg_draw_text_width(dg_draw *d, const char *s, double size);  /* what dg_draw_text returns         */
double dg_draw_text_height(dg_draw *d, double size);               /* ascent + descent of the face      */

uint32_t dg_colormap_viridis(float t);                          /* t in [0,1] -> colour; NaN -> grey     */
/* Paints values (vh rows of vw, row 0 at the top), bilinearly resampled, coloured with viridis from
 * vmin (dark) to vmax (yellow); vmin >= vmax (or not finite): the values' finite range; non-finite
 * values grey. nodes = 0: the values are cells covering the pixels [x, x+w) x [y, y+h); nodes = 1:
 * they are samples on nodes, the first at pixel (x, y), the last at (x + w, y + h), and the pixels
 * [x, x+w] x [y, y+h] are painted. */
void dg_draw_heat(dg_draw *d, int x, int y, int w, int h, const float *values, int vw, int vh, float vmin,
                  float vmax, int nodes);

/* Axis ticks at round numbers (1, 2 or 5 times a power of ten), as the line plots and value figures use. */
#define DG_AXIS_MAX_TICKS 32
#define DG_AXIS_MAX_MINOR 160
typedef struct dg_axis {
    double lo, hi;                 /* visible range (log10 units on a log axis)  */
    int    log;
    int    n;                      /* labelled ticks                             */
    double tick[DG_AXIS_MAX_TICKS];
    char   label[DG_AXIS_MAX_TICKS][24];
    int    nminor;                 /* unlabelled ticks (log axes: 2..9 x 10^k)  */
    double minor[DG_AXIS_MAX_MINOR];
} dg_axis;
void dg_axis_linear(dg_axis *a, int target);      /* about target ticks inside [lo, hi] */
void dg_axis_log(dg_axis *a, int max_labels);     /* decades of [lo, hi] (whole decades) */
double dg_axis_widest(dg_draw *d, const dg_axis *a, double size);  /* widest label at size px */

#endif
