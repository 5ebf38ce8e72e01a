/* Animated GIF output through giflib, streamed one frame at a time.
 *
 * Frames are mapped to one fixed 256-colour palette (a 6x7x6 RGB cube and 4
 * greys) by exact nearest colour, so output is deterministic and needs no
 * pass over all frames. Only the rectangle that changed since the previous
 * frame is stored (disposal "leave in place"), which keeps replays of a
 * small moving scene small. Memory is two index buffers of w*h bytes,
 * whatever the number of frames.
 */
#include "difgames/fileio.h"
#include "difgames/image.h"

#include <gif_lib.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------------------- types */

#define RB_LEVELS 6                /* red and blue levels in the cube */
#define G_LEVELS  7                /* green gets one more: the eye is most sensitive to it */
#define CUBE      (RB_LEVELS * G_LEVELS * RB_LEVELS)
#define GREYS     4

struct dg_gif {
    dg_file        f;              /* the temporary file being written             */
    GifFileType   *gif;            /* giflib's writer; its output goes to f.fp     */
    int            w, h, delay_cs;
    int            frames;         /* frames written                               */
    int            failed;         /* a write failed: only abort/end remain        */
    unsigned char *prev;           /* (h, w) palette indices on screen now         */
    unsigned char *cur;            /* (h, w) indices of the frame being added      */
    unsigned char  pal[256][3];
    unsigned char  rb_near[256];   /* nearest red/blue level for each 8-bit value  */
    unsigned char  g_near[256];    /* nearest green level                          */
};

_Static_assert(CUBE + GREYS == 256, "palette must have exactly 256 colours");

/* ----------------------------------------------------- internal helpers */

static unsigned char level(int k, int levels) {
    return (unsigned char)((k * 255 + (levels - 1) / 2) / (levels - 1));
}

/* Fills the palette and the per-channel nearest-level tables. */
static void palette_init(dg_gif *g) {
    int i = 0;
    for (int r = 0; r < RB_LEVELS; r++)
        for (int gg = 0; gg < G_LEVELS; gg++)
            for (int b = 0; b < RB_LEVELS; b++, i++) {
                g->pal[i][0] = level(r, RB_LEVELS);
                g->pal[i][1] = level(gg, G_LEVELS);
                g->pal[i][2] = level(b, RB_LEVELS);
            }
    /* The cube's only greys are black and white; these fill the gap. */
    for (int k = 0; k < GREYS; k++, i++)
        g->pal[i][0] = g->pal[i][1] = g->pal[i][2] = (unsigned char)(51 * (k + 1));
    for (int v = 0; v < 256; v++) {
        int best_rb = 0, best_g = 0;
        for (int k = 1; k < RB_LEVELS; k++)
            if (abs(v - level(k, RB_LEVELS)) < abs(v - level(best_rb, RB_LEVELS))) best_rb = k;
        for (int k = 1; k < G_LEVELS; k++)
            if (abs(v - level(k, G_LEVELS)) < abs(v - level(best_g, G_LEVELS))) best_g = k;
        g->rb_near[v] = (unsigned char)best_rb;
        g->g_near[v] = (unsigned char)best_g;
    }
}

static int dist2(const unsigned char *p, const unsigned char *q) {
    int dr = p[0] - q[0], dg = p[1] - q[1], db = p[2] - q[2];
    return dr * dr + dg * dg + db * db;
}

/* Exact nearest palette entry: on a separable grid the nearest cube colour is
 * the nearest level in each channel; then the greys compete with it. */
static unsigned char quantise(const dg_gif *g, const unsigned char *rgb) {
    int best = (g->rb_near[rgb[0]] * G_LEVELS + g->g_near[rgb[1]]) * RB_LEVELS + g->rb_near[rgb[2]];
    int bd = dist2(rgb, g->pal[best]);
    for (int k = CUBE; k < CUBE + GREYS; k++) {
        int d = dist2(rgb, g->pal[k]);
        if (d < bd) { bd = d; best = k; }
    }
    return (unsigned char)best;
}

/* giflib's output callback: everything goes to the dg_file's FILE*. */
static int gif_write(GifFileType *gf, const GifByteType *buf, int len) {
    if (len <= 0) return 0;
    return (int)fwrite(buf, 1, (size_t)len, (FILE *)gf->UserData);
}

static const char *gif_errstr(int code) {
    const char *s = code ? GifErrorString(code) : NULL;
    return s ? s : "write error";
}

static dg_status gif_fail(dg_gif *g, dg_err *e, const char *what) {
    g->failed = 1;
    return dg_err_set(e, DG_ERR_IO, "%s: GIF %s failed: %s", g->f.path, what,
                      gif_errstr(g->gif ? g->gif->Error : 0));
}

/* Frees everything g holds. giflib's close writes the trailer byte and frees
 * its state; it does not close f.fp (EGifOpen was given no file), so dg_file
 * owns that FILE* alone. Returns 0 if giflib reported an error. */
static int gif_release(dg_gif *g) {
    int ok = 1;
    if (g->gif) {
        int err = 0;
        if (EGifCloseFile(g->gif, &err) == GIF_ERROR) ok = 0;
        g->gif = NULL;
    }
    free(g->prev);
    free(g->cur);
    g->prev = g->cur = NULL;
    return ok;
}

/* ------------------------------------------------------ public functions */

/* Starts writing an animated, endlessly looping GIF of w x h pixels (1..65535
 * each) to a temporary file beside path, each frame shown for delay_cs
 * hundredths of a second (1 becomes 2: browsers slow faster GIFs to 10).
 * Returns a handle the caller must finish with dg_gif_end or dg_gif_abort,
 * or NULL with e set (DG_ERR_ARG, DG_ERR_IO, DG_ERR_NOMEM). */
dg_gif *dg_gif_begin(const char *path, int w, int h, int delay_cs, dg_err *e) {
    if (!path || !*path) { dg_err_set(e, DG_ERR_ARG, "GIF output: no file name given"); return NULL; }
    if (w < 1 || h < 1 || w > 65535 || h > 65535) {
        dg_err_set(e, DG_ERR_ARG, "%s: GIF size %dx%d out of range (1..65535 each)", path, w, h);
        return NULL;
    }
    if (delay_cs < 1 || delay_cs > 65535) {
        dg_err_set(e, DG_ERR_ARG, "%s: GIF frame delay %d out of range (1..65535 hundredths of a second)",
                   path, delay_cs);
        return NULL;
    }
    dg_gif *g = calloc(1, sizeof *g);
    if (!g) { dg_err_set(e, DG_ERR_NOMEM, "%s: out of memory", path); return NULL; }
    g->w = w;
    g->h = h;
    g->delay_cs = delay_cs < 2 ? 2 : delay_cs;
    palette_init(g);
    g->prev = malloc((size_t)w * (size_t)h);
    g->cur = malloc((size_t)w * (size_t)h);
    if (!g->prev || !g->cur) {
        dg_err_set(e, DG_ERR_NOMEM, "%s: out of memory for a %dx%d GIF", path, w, h);
        gif_release(g);
        free(g);
        return NULL;
    }
    if (dg_file_begin(&g->f, path, e) != DG_OK) {
        gif_release(g);
        free(g);
        return NULL;
    }
    int err = 0;
    g->gif = EGifOpen(g->f.fp, gif_write, &err);
    if (!g->gif) {
        dg_err_set(e, DG_ERR_NOMEM, "%s: cannot start GIF: %s", path, gif_errstr(err));
        dg_gif_abort(g);
        return NULL;
    }
    EGifSetGifVersion(g->gif, true);  /* GIF89a: needed for delays and looping */

    GifColorType colors[256];
    for (int i = 0; i < 256; i++) {
        colors[i].Red = g->pal[i][0];
        colors[i].Green = g->pal[i][1];
        colors[i].Blue = g->pal[i][2];
    }
    ColorMapObject *cmap = GifMakeMapObject(256, colors);
    if (!cmap) {
        dg_err_set(e, DG_ERR_NOMEM, "%s: out of memory", path);
        dg_gif_abort(g);
        return NULL;
    }
    int rc = EGifPutScreenDesc(g->gif, w, h, 8, 0, cmap);  /* copies cmap */
    GifFreeMapObject(cmap);
    if (rc == GIF_ERROR) { gif_fail(g, e, "header"); dg_gif_abort(g); return NULL; }

    /* NETSCAPE2.0 application extension: loop count 0 = forever. */
    static const GifByteType app[11] = {'N', 'E', 'T', 'S', 'C', 'A', 'P', 'E', '2', '.', '0'};
    static const GifByteType loop[3] = {1, 0, 0};
    if (EGifPutExtensionLeader(g->gif, APPLICATION_EXT_FUNC_CODE) == GIF_ERROR ||
        EGifPutExtensionBlock(g->gif, sizeof app, app) == GIF_ERROR ||
        EGifPutExtensionBlock(g->gif, sizeof loop, loop) == GIF_ERROR ||
        EGifPutExtensionTrailer(g->gif) == GIF_ERROR) {
        gif_fail(g, e, "loop extension");
        dg_gif_abort(g);
        return NULL;
    }
    return g;
}

/* Quantises img (which must be the GIF's size) to the palette and writes it
 * as the next frame. Returns DG_OK, or DG_ERR_ARG / DG_ERR_SHAPE / DG_ERR_IO
 * with e set; after an I/O error the GIF can only be ended (which then fails
 * and leaves no file) or aborted. img stays the caller's. */
dg_status dg_gif_add_frame(dg_gif *g, const dg_image *img, dg_err *e) {
    if (!g) return dg_err_set(e, DG_ERR_ARG, "GIF frame: no GIF open");
    if (g->failed) return dg_err_set(e, DG_ERR_IO, "%s: GIF already failed", g->f.path);
    if (!img || !img->rgb) return dg_err_set(e, DG_ERR_ARG, "%s: GIF frame: no image", g->f.path);
    if (img->w != g->w || img->h != g->h)
        return dg_err_set(e, DG_ERR_SHAPE, "%s: GIF frame is %dx%d, expected %dx%d", g->f.path,
                          img->w, img->h, g->w, g->h);
    size_t n = (size_t)g->w * (size_t)g->h;
    for (size_t i = 0; i < n; i++) g->cur[i] = quantise(g, img->rgb + i * 3);

    /* Bounding box of what changed; the first frame is stored whole. */
    int x0 = 0, y0 = 0, x1 = g->w - 1, y1 = g->h - 1;
    if (g->frames > 0) {
        x0 = g->w; y0 = g->h; x1 = -1; y1 = -1;
        for (int y = 0; y < g->h; y++) {
            const unsigned char *c = g->cur + (size_t)y * g->w, *p = g->prev + (size_t)y * g->w;
            if (!memcmp(c, p, (size_t)g->w)) continue;
            int l = 0, r = g->w - 1;
            while (c[l] == p[l]) l++;
            while (c[r] == p[r]) r--;
            if (l < x0) x0 = l;
            if (r > x1) x1 = r;
            if (y < y0) y0 = y;
            y1 = y;
        }
        if (x1 < 0) { x0 = y0 = x1 = y1 = 0; }  /* unchanged: one pixel keeps the timing */
    }

    GraphicsControlBlock gcb = {
        .DisposalMode = DISPOSE_DO_NOT,
        .UserInputFlag = false,
        .DelayTime = g->delay_cs,
        .TransparentColor = NO_TRANSPARENT_COLOR,
    };
    GifByteType ext[4];
    size_t ext_len = EGifGCBToExtension(&gcb, ext);
    if (EGifPutExtension(g->gif, GRAPHICS_EXT_FUNC_CODE, (int)ext_len, ext) == GIF_ERROR)
        return gif_fail(g, e, "frame control");
    int fw = x1 - x0 + 1, fh = y1 - y0 + 1;
    if (EGifPutImageDesc(g->gif, x0, y0, fw, fh, false, NULL) == GIF_ERROR)
        return gif_fail(g, e, "frame header");
    for (int y = y0; y <= y1; y++)
        if (EGifPutLine(g->gif, g->cur + (size_t)y * g->w + x0, fw) == GIF_ERROR)
            return gif_fail(g, e, "frame data");
    if (ferror(g->f.fp)) return gif_fail(g, e, "write");

    unsigned char *t = g->prev;
    g->prev = g->cur;
    g->cur = t;
    g->frames++;
    return DG_OK;
}

/* Returns how many frames have been written to g (0 for NULL). */
int dg_gif_frames(const dg_gif *g) {
    return g ? g->frames : 0;
}

/* Finishes the GIF, renames it into place and frees g (in every case). Returns
 * DG_OK, or with e set: DG_ERR_ARG when no frame was added, DG_ERR_IO when a
 * write failed; on failure no file is left behind. */
dg_status dg_gif_end(dg_gif *g, dg_err *e) {
    if (!g) return dg_err_set(e, DG_ERR_ARG, "GIF end: no GIF open");
    dg_status st = DG_OK;
    if (g->failed) {
        st = dg_err_set(e, DG_ERR_IO, "%s: GIF not written (an earlier write failed)", g->f.path);
    } else if (g->frames == 0) {
        st = dg_err_set(e, DG_ERR_ARG, "%s: GIF has no frames", g->f.path);
    }
    if (st != DG_OK) {
        dg_gif_abort(g);
        return st;
    }
    if (!gif_release(g)) {
        st = dg_err_set(e, DG_ERR_IO, "%s: GIF could not be finished", g->f.path);
        dg_file_abort(&g->f);
    } else {
        st = dg_file_commit(&g->f, e);
    }
    free(g);
    return st;
}

/* Stops writing: frees g and removes the temporary file, so nothing appears
 * at the path. NULL is harmless. */
void dg_gif_abort(dg_gif *g) {
    if (!g) return;
    gif_release(g);
    dg_file_abort(&g->f);
    free(g);
}
