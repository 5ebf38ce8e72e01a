/* difgames io: pictures for people to look at, as files.
 *
 * An RGB canvas (what a replay frame or a plot is drawn into), PNG output,
 * streamed animated GIF output and line plots (e.g. every loss term against
 * epoch, log-scale y). The drawing itself (antialiased lines, text, heat maps)
 * is the library's own business, done with cairo inside it; what a user gets
 * are the pictures:
 *
 *     dg_plot_series s = {"loss", NULL, y, n, dg_plot_color(0)};
 *     dg_err e = {0};
 *     if (dg_plot_lines("loss.png", 800, 500, "training", "epoch", "loss", 1, &s, 1, &e) != DG_OK) { ... e.msg ... }
 *
 *     dg_image *img = dg_image_create(320, 320 + DG_REPLAY_HEADER, 0);   // difgames/replay.h draws into it
 *     dg_replay_frame(img, env, grid, 0.08f, traj, aux, t, heat);
 *     dg_png_write(img, "frame.png", &e);
 *     dg_image_free(img);
 *
 * Pixels are 8-bit RGB, row-major from the top-left; dg_image_get reads one
 * as 0xRRGGBB. Files are written atomically (a temporary file renamed into
 * place): after a failure nothing half-written is left behind.
 */
#ifndef DIFGAMES_IMAGE_H
#define DIFGAMES_IMAGE_H

#include <stdint.h>

#include "difgames/api.h"
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

DG_API dg_image *dg_image_create(int w, int h, uint32_t bg_rgb);          /* NULL on bad size or OOM; free with dg_image_free */
DG_API void      dg_image_free(dg_image *img);                            /* NULL is harmless                     */
DG_API void      dg_image_clear(dg_image *img, uint32_t rgb);             /* fills the whole canvas               */
DG_API uint32_t  dg_image_get(const dg_image *img, int x, int y);         /* 0xRRGGBB, 0 outside the canvas       */

/* ------------------------------------------------------------------ files */
DG_API dg_status dg_png_write(const dg_image *img, const char *path, dg_err *e);  /* 8-bit RGB PNG, atomic */

typedef struct dg_gif dg_gif;      /* an animated GIF being written, one frame at a time */

DG_API dg_gif   *dg_gif_begin(const char *path, int w, int h, int delay_cs, dg_err *e); /* NULL (see e) on failure       */
DG_API dg_status dg_gif_add_frame(dg_gif *g, const dg_image *img, dg_err *e);          /* quantises and writes one frame */
DG_API dg_status dg_gif_end(dg_gif *g, dg_err *e);                                     /* finishes, renames into place, frees g */
DG_API void      dg_gif_abort(dg_gif *g);                                              /* frees g, leaves no file; NULL harmless */
DG_API int       dg_gif_frames(const dg_gif *g);                                       /* frames written so far           */

/* ------------------------------------------------------------------ plots */

typedef struct dg_plot_series {
    const char  *label;            /* legend text; NULL: not in the legend      */
    const float *x;                /* (n) x values; NULL: 0, 1, ..., n-1        */
    const float *y;                /* (n) y values                              */
    int          n;
    uint32_t     rgb;              /* line colour, e.g. dg_plot_color(i)        */
} dg_plot_series;

DG_API uint32_t  dg_plot_color(int i);    /* i-th colour of a 10-colour cycle (any i, wraps) */
DG_API dg_status dg_plot_draw(dg_image *img, const char *title, const char *xlabel, const char *ylabel,
                              int log_y, const dg_plot_series *s, int count, dg_err *e);   /* over a whole canvas */
DG_API dg_status dg_plot_lines(const char *path, int w, int h, const char *title, const char *xlabel,
                               const char *ylabel, int log_y, const dg_plot_series *s, int count,
                               dg_err *e);                                               /* to a PNG file */
/* dg_plot_lines over ncat categories (e.g. a sweep's settings): the series' x values are category
 * indices 0 .. ncat-1, the x axis has one tick at each and none between, labelled names[i] ('\n'
 * breaks a label into lines): side by side when each label's widest line fits its category's width,
 * else each on one line (its lines joined by ", ", cut with "..." to a third of the canvas's height)
 * read upwards, every k-th labelled when even those would touch. DG_ERR_ARG for no names. */
DG_API dg_status dg_plot_categories(const char *path, int w, int h, const char *title, const char *xlabel,
                                    const char *ylabel, int log_y, const char *const *names, int ncat,
                                    const dg_plot_series *s, int count, dg_err *e);
/* Memory a w x h dg_plot_lines call of n points in all takes at its peak (bytes): the image, cairo's
 * surface over it, the PNG writer's rows, the points in double, and text's fixed cost (fontconfig's
 * configuration and caches, cairo's font face: 3.5 MiB measured for a 600x500 value plot, taken as 4). */
DG_API double    dg_plot_memory(int w, int h, double n);
/* Learning curves from a CSV of rows panel,series,label,color,steps,loss (e.g. `difgames pg` curves):
 * one 760x560 panel per distinct panel name (at most 8), side by side, log10(steps) against the loss
 * on a log scale, written to png. DG_ERR_FORMAT names the file and line of a bad row. */
DG_API dg_status dg_plot_curves_csv(const char *csv, const char *png, const char *title, dg_err *e);

#ifdef __cplusplus
}
#endif
#endif
