/* difgames io: images for people to look at.
 *
 * An RGB canvas with anti-aliased drawing, PNG output, streamed animated GIF
 * output and line plots (e.g. every loss term against epoch, log-scale y).
 *
 *     dg_image *img = dg_image_create(320, 240, 0xffffff);
 *     dg_image_circle_fill(img, 160.0f, 120.0f, 20.0f, 0xd62728, 1.0f);
 *     dg_image_text(img, 4, 4, "epoch 12", 0x000000, 2);
 *     dg_err e = {0};
 *     if (dg_png_write(img, "frame.png", &e) != DG_OK) { ... e.msg ... }
 *     dg_image_free(img);
 *
 * Coordinates are pixels, x to the right and y down; pixel (i, j) is centred
 * on the point (i, j), so a 1-pixel line along y = 10.0 covers row 10 exactly.
 * Colours are 0xRRGGBB. Every drawing call clips to the canvas: anything,
 * anywhere (huge, negative, NaN or infinite coordinates) is safe to draw, and
 * a shape with a non-finite coordinate is simply not drawn.
 *
 * Files are written atomically (a temporary file renamed into place): after a
 * failure nothing half-written is left behind.
 */
#ifndef DIFGAMES_IMAGE_H
#define DIFGAMES_IMAGE_H

#include <stdint.h>

#include "difgames/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- canvas */

typedef struct dg_image {
    int            w, h;
    unsigned char *rgb;            /* (h, w, 3) row-major, 8 bits a channel   */
} dg_image;

#define DG_IMAGE_MAX_SIDE 16384    /* largest width or height dg_image_create accepts */
#define DG_FONT_ADVANCE   6        /* text cell width at scale 1 (5-pixel glyph + gap) */
#define DG_FONT_HEIGHT    8        /* glyph height at scale 1 (7 rows + descender)      */
#define DG_FONT_LINE      10       /* line spacing at scale 1                           */

dg_image *dg_image_create(int w, int h, uint32_t bg_rgb);          /* NULL on bad size or OOM; free with dg_image_free */
void      dg_image_free(dg_image *img);                            /* NULL is harmless                     */
void      dg_image_clear(dg_image *img, uint32_t rgb);             /* fills the whole canvas               */
uint32_t  dg_image_get(const dg_image *img, int x, int y);         /* 0xRRGGBB, 0 outside the canvas       */

/* ---------------------------------------------------------------- drawing */
void dg_image_pixel_blend(dg_image *img, int x, int y, uint32_t rgb, float alpha);           /* mixes one pixel, alpha in [0,1] */
void dg_image_line(dg_image *img, float x0, float y0, float x1, float y1, uint32_t rgb, float width); /* round caps, anti-aliased */
void dg_image_circle_fill(dg_image *img, float cx, float cy, float r, uint32_t rgb, float alpha);     /* anti-aliased disc       */
void dg_image_circle_outline(dg_image *img, float cx, float cy, float r, uint32_t rgb, float width);  /* anti-aliased ring       */
void dg_image_rect_fill(dg_image *img, int x, int y, int w, int h, uint32_t rgb, float alpha);        /* pixels [x,x+w) x [y,y+h) */
void dg_image_rect_outline(dg_image *img, int x, int y, int w, int h, uint32_t rgb);                  /* 1-pixel border of that box */
int  dg_image_text(dg_image *img, int x, int y, const char *s, uint32_t rgb, int scale);     /* top-left at (x,y); returns width drawn */
int  dg_image_text_up(dg_image *img, int x, int y, const char *s, uint32_t rgb, int scale);  /* rotated to read upwards; returns height */
int  dg_image_text_width(const char *s, int scale);                                          /* pixels dg_image_text would advance */
uint32_t dg_colormap_viridis(float t);                                                        /* t in [0,1] -> colour; NaN -> grey */
void dg_image_heat(dg_image *img, const float *values, int vw, int vh, float vmin, float vmax); /* values (vh, vw) over the whole canvas */
void dg_image_heat_rect(dg_image *img, int x, int y, int w, int h,
                        const float *values, int vw, int vh, float vmin, float vmax);        /* the same, into one box    */

/* ------------------------------------------------------------------ files */
dg_status dg_png_write(const dg_image *img, const char *path, dg_err *e);  /* 8-bit RGB PNG, atomic */

typedef struct dg_gif dg_gif;      /* an animated GIF being written, one frame at a time */

dg_gif   *dg_gif_begin(const char *path, int w, int h, int delay_cs, dg_err *e); /* NULL (see e) on failure       */
dg_status dg_gif_add_frame(dg_gif *g, const dg_image *img, dg_err *e);          /* quantises and writes one frame */
dg_status dg_gif_end(dg_gif *g, dg_err *e);                                     /* finishes, renames into place, frees g */
void      dg_gif_abort(dg_gif *g);                                              /* frees g, leaves no file; NULL harmless */
int       dg_gif_frames(const dg_gif *g);                                       /* frames written so far           */

/* ------------------------------------------------------------------ plots */

typedef struct dg_plot_series {
    const char  *label;            /* legend text; NULL: not in the legend      */
    const float *x;                /* (n) x values; NULL: 0, 1, ..., n-1        */
    const float *y;                /* (n) y values                              */
    int          n;
    uint32_t     rgb;              /* line colour, e.g. dg_plot_color(i)        */
} dg_plot_series;

uint32_t  dg_plot_color(int i);    /* i-th colour of a 10-colour cycle (any i, wraps) */
dg_status dg_plot_draw(dg_image *img, const char *title, const char *xlabel, const char *ylabel,
                       int log_y, const dg_plot_series *s, int count, dg_err *e);   /* onto a canvas */
dg_status dg_plot_lines(const char *path, int w, int h, const char *title, const char *xlabel,
                        const char *ylabel, int log_y, const dg_plot_series *s, int count,
                        dg_err *e);                                               /* to a PNG file */

#ifdef __cplusplus
}
#endif
#endif
