/* PNG output through libpng, written atomically via dg_file. */
#include "difgames/fileio.h"
#include "difgames/image.h"

#include <png.h>
#include <stdio.h>
#include <string.h>

/* ----------------------------------------------------------------- types */

/* Where libpng's error callback leaves its message before it longjmps. */
typedef struct png_msg {
    char text[200];
} png_msg;

/* ----------------------------------------------------- internal helpers */

/* libpng must not print or return from an error: keep the text, jump back. */
static void on_png_error(png_structp png, png_const_charp msg) {
    png_msg *m = png_get_error_ptr(png);
    if (m) snprintf(m->text, sizeof m->text, "%s", msg ? msg : "libpng error");
    png_longjmp(png, 1);
}

static void on_png_warning(png_structp png, png_const_charp msg) {
    (void)png;
    (void)msg;
}

/* Encodes img as an 8-bit RGB PNG onto fp. Returns DG_OK, DG_ERR_NOMEM, or
 * DG_ERR_IO with m->text saying why. Everything png/info need is set up
 * before setjmp and not changed after it, so no local is clobbered. */
static dg_status png_encode(const dg_image *img, FILE *fp, png_msg *m) {
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, m, on_png_error, on_png_warning);
    if (!png) return DG_ERR_NOMEM;
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        return DG_ERR_NOMEM;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return DG_ERR_IO;
    }
    png_init_io(png, fp);
    png_set_IHDR(png, info, (png_uint_32)img->w, (png_uint_32)img->h, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < img->h; y++)
        png_write_row(png, img->rgb + (size_t)y * (size_t)img->w * 3);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return DG_OK;
}

/* ------------------------------------------------------ public functions */

/* Writes img to path as an 8-bit RGB PNG. The file appears whole or not at
 * all: it is written to a temporary file that is renamed into place. Returns
 * DG_OK, or DG_ERR_ARG (no image), DG_ERR_IO (cannot write), DG_ERR_NOMEM,
 * with a message in e naming path. img stays the caller's. */
dg_status dg_png_write(const dg_image *img, const char *path, dg_err *e) {
    if (!path || !*path) return dg_err_set(e, DG_ERR_ARG, "PNG output: no file name given");
    if (!img || !img->rgb || img->w < 1 || img->h < 1)
        return dg_err_set(e, DG_ERR_ARG, "%s: no image to write", path);
    dg_file f;
    dg_status st = dg_file_begin(&f, path, e);
    if (st != DG_OK) return st;
    png_msg m;
    memset(&m, 0, sizeof m);
    st = png_encode(img, f.fp, &m);
    if (st != DG_OK) {
        dg_file_abort(&f);
        if (st == DG_ERR_NOMEM) return dg_err_set(e, st, "%s: out of memory encoding PNG", path);
        return dg_err_set(e, st, "%s: PNG encoding failed: %s", path, m.text[0] ? m.text : "unknown error");
    }
    return dg_file_commit(&f, e);
}
