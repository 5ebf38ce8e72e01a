/* Tests for images: the canvas, drawing on it with cairo (gfx/draw.h), PNG and GIF output read back
 * with libpng and giflib, line plots, atomic writes on failure, clipping far outside. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <gif_lib.h>
#include <png.h>

#include "difgames/image.h"
#include "gfx/draw.h"

/* ---------------------------------------------------------------- helpers */

static char g_dir[256];

static int setup_dir(void **state) {
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/dg_test_image_XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown_dir(void **state) {
    (void)state;
    DIR *d = opendir(g_dir);
    if (d) {
        struct dirent *de;
        char p[512];
        while ((de = readdir(d))) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
            snprintf(p, sizeof p, "%s/%s", g_dir, de->d_name);
            remove(p);
        }
        closedir(d);
    }
    rmdir(g_dir);
    return 0;
}

static void out_path(char *buf, size_t n, const char *name) {
    snprintf(buf, n, "%s/%s", g_dir, name);
}

/* Entries in g_dir other than . and .. (temporary files included). */
static int dir_entries(void) {
    DIR *d = opendir(g_dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) n++;
    closedir(d);
    return n;
}

/* Reads a PNG of w x h pixels as 8-bit RGB with libpng's simplified API (the test fails on
 * another size); caller frees. */
static unsigned char *read_png(const char *path, int w, int h) {
    png_image im;
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    assert_true(png_image_begin_read_from_file(&im, path));
    im.format = PNG_FORMAT_RGB;
    unsigned char *rgb = malloc(PNG_IMAGE_SIZE(im));
    assert_non_null(rgb);
    assert_true(png_image_finish_read(&im, NULL, rgb, 0, NULL));
    assert_int_equal(im.width, w);
    assert_int_equal(im.height, h);
    return rgb;
}

/* Begins a GIF of w x h pixels at g_dir/name (written into path); the test fails when it cannot. */
static dg_gif *gif_begin_ok(char path[512], const char *name, int w, int h, int delay) {
    out_path(path, 512, name);
    dg_err e = {0};
    dg_gif *g = dg_gif_begin(path, w, h, delay, &e);
    if (!g) fail_msg("%s", e.msg);
    return g;
}

static uint32_t rgb_at(const unsigned char *rgb, int w, int x, int y) {
    const unsigned char *p = rgb + ((size_t)y * w + x) * 3;
    return ((uint32_t)p[0] << 16) | ((uint32_t)p[1] << 8) | p[2];
}

/* ------------------------------------------------------------------ tests */

/* Pixels of img in [x0, x1] x [y0, y1] that are not bg, and (outside) those beyond that box. */
static int count_ink(const dg_image *img, uint32_t bg, int x0, int y0, int x1, int y1, int *outside) {
    int in = 0, out = 0;
    for (int y = 0; y < img->h; y++)
        for (int x = 0; x < img->w; x++) {
            if (dg_image_get(img, x, y) == bg) continue;
            if (x >= x0 && x <= x1 && y >= y0 && y <= y1) in++;
            else out++;
        }
    if (outside) *outside = out;
    return in;
}

static void test_canvas_basics(void **state) {
    (void)state;
    assert_null(dg_image_create(0, 10, 0));
    assert_null(dg_image_create(10, -1, 0));
    assert_null(dg_image_create(DG_IMAGE_MAX_SIDE + 1, 1, 0));
    dg_image_free(NULL);

    dg_image *img = dg_image_create(20, 10, 0x102030);
    assert_non_null(img);
    assert_int_equal(dg_image_get(img, 0, 0), 0x102030);
    assert_int_equal(dg_image_get(img, 19, 9), 0x102030);
    assert_int_equal(dg_image_get(img, 20, 0), 0);
    dg_image_clear(img, 0xabcdef);
    assert_int_equal(dg_image_get(img, 7, 3), 0xabcdef);

    /* begin/end keeps what is there; a translucent fill mixes */
    dg_draw d;
    dg_err e = {0};
    assert_int_equal(dg_draw_begin(&d, NULL, &e), DG_ERR_ARG);
    assert_int_equal(dg_draw_end(&d, &e), DG_ERR_ARG);
    dg_image_clear(img, 0x000000);
    assert_int_equal(dg_draw_begin(&d, img, &e), DG_OK);
    dg_draw_rect_fill(&d, 3, 4, 1, 1, 0xffffff, 0.5);
    dg_draw_rect_fill(&d, 5, 4, 2, 1, 0xff0000, 1.0);
    dg_draw_rect_fill(&d, 8, 4, 1, 1, 0xff0000, NAN);
    assert_int_equal(dg_draw_end(&d, &e), DG_OK);
    assert_int_equal(dg_image_get(img, 3, 4) >> 16, 0x80);
    assert_int_equal(dg_image_get(img, 5, 4), 0xff0000);
    assert_int_equal(dg_image_get(img, 6, 4), 0xff0000);
    assert_int_equal(dg_image_get(img, 7, 4), 0x000000);
    assert_int_equal(dg_image_get(img, 8, 4), 0x000000);
    assert_int_equal(dg_image_get(img, 0, 0), 0x000000);
    /* abort leaves the image as it was */
    assert_int_equal(dg_draw_begin(&d, img, &e), DG_OK);
    dg_draw_rect_fill(&d, 0, 0, 20, 10, 0xffffff, 1.0);
    dg_draw_abort(&d);
    dg_draw_abort(&d);
    assert_int_equal(dg_image_get(img, 0, 0), 0x000000);

    /* a 1-pixel horizontal line on y = 5 covers row 5 only, fully */
    dg_image_clear(img, 0xffffff);
    assert_int_equal(dg_draw_begin(&d, img, &e), DG_OK);
    dg_draw_line(&d, 2, 5, 17, 5, 0x000000, 1);
    assert_int_equal(dg_draw_end(&d, &e), DG_OK);
    assert_int_equal(dg_image_get(img, 10, 5), 0x000000);
    assert_int_equal(dg_image_get(img, 10, 4), 0xffffff);
    assert_int_equal(dg_image_get(img, 10, 6), 0xffffff);
    /* a diagonal is antialiased: partly covered pixels beside it */
    dg_image_clear(img, 0xffffff);
    assert_int_equal(dg_draw_begin(&d, img, &e), DG_OK);
    dg_draw_line(&d, 1, 1, 18, 8, 0x000000, 1.5);
    assert_int_equal(dg_draw_end(&d, &e), DG_OK);
    int partial = 0;
    for (int y = 0; y < 10; y++)
        for (int x = 0; x < 20; x++) {
            uint32_t c = dg_image_get(img, x, y);
            partial += c != 0xffffff && c != 0x000000;
        }
    assert_true(partial > 5);
    assert_int_equal(dg_image_get(img, 0, 9), 0xffffff);

    /* a disc covers its centre, not far corners; edges are partial */
    dg_image_clear(img, 0xffffff);
    assert_int_equal(dg_draw_begin(&d, img, &e), DG_OK);
    dg_draw_circle_fill(&d, 10, 5, 3, 0x0000ff, 1);
    assert_int_equal(dg_draw_end(&d, &e), DG_OK);
    assert_int_equal(dg_image_get(img, 10, 5), 0x0000ff);
    assert_int_equal(dg_image_get(img, 0, 0), 0xffffff);
    uint32_t edge = dg_image_get(img, 12, 7);  /* distance ~2.8 from the centre: partial */
    assert_true(edge != 0xffffff && edge != 0x0000ff);
    dg_image_free(img);
}

static void test_text(void **state) {
    (void)state;
    dg_image *img = dg_image_create(120, 80, 0xffffff);
    dg_draw d;
    dg_err e = {0};
    assert_int_equal(dg_draw_begin(&d, img, &e), DG_OK);
    const double wa = dg_draw_text_width(&d, "a", 14), wab = dg_draw_text_width(&d, "ab", 14);
    assert_true(wa > 2 && wab > wa);
    assert_true(dg_draw_text_width(&d, "ab", 28) > 1.5 * wab);
    assert_true(dg_draw_text_width(&d, "", 14) == 0 && dg_draw_text_width(&d, NULL, 14) == 0);
    const double th = dg_draw_text_height(&d, 20);
    assert_true(th > 15 && th < 40);
    /* "Eg" anchored top-left at (10, 10): ink inside its box (a pixel of antialiasing spare), none out */
    const double w = dg_draw_text(&d, 10, 10, "Eg", 0x000000, 20, DG_TEXT_LEFT | DG_TEXT_TOP, 0);
    assert_true(w > 10);
    assert_int_equal(dg_draw_end(&d, &e), DG_OK);
    int out = 0, in = count_ink(img, 0xffffff, 9, 9, 11 + (int)ceil(w), 11 + (int)ceil(th), &out);
    assert_true(in > 40);
    assert_int_equal(out, 0);
    /* centred and right-anchored text ends where it is anchored */
    dg_image_clear(img, 0xffffff);
    assert_int_equal(dg_draw_begin(&d, img, &e), DG_OK);
    dg_draw_text(&d, 100, 40, "right", 0x000000, 14, DG_TEXT_RIGHT | DG_TEXT_MIDDLE, 0);
    assert_int_equal(dg_draw_end(&d, &e), DG_OK);
    in = count_ink(img, 0xffffff, 0, 25, 101, 55, &out);
    assert_true(in > 20);
    assert_int_equal(out, 0);
    /* reading upwards from (30, 70), its top at x = 30: a column of ink above the anchor */
    dg_image_clear(img, 0xffffff);
    assert_int_equal(dg_draw_begin(&d, img, &e), DG_OK);
    const double wu = dg_draw_text(&d, 30, 70, "up", 0x000000, 16, DG_TEXT_LEFT | DG_TEXT_TOP, 1);
    const double hu = dg_draw_text_height(&d, 16);
    assert_int_equal(dg_draw_end(&d, &e), DG_OK);
    in = count_ink(img, 0xffffff, 29, 69 - (int)ceil(wu), 31 + (int)ceil(hu), 71, &out);
    assert_true(in > 20);
    assert_int_equal(out, 0);
    /* bytes outside ASCII still draw (as '?') */
    dg_image_clear(img, 0xffffff);
    assert_int_equal(dg_draw_begin(&d, img, &e), DG_OK);
    assert_true(dg_draw_text(&d, 5, 5, "\x01\xff", 0x000000, 14, 0, 0) > 0);
    assert_int_equal(dg_draw_end(&d, &e), DG_OK);
    assert_true(count_ink(img, 0xffffff, 0, 0, 119, 79, NULL) > 5);
    dg_image_free(img);
}

static void test_heat_and_colormap(void **state) {
    (void)state;
    assert_int_equal(dg_colormap_viridis(0.0f), 0x440154);
    assert_int_equal(dg_colormap_viridis(1.0f), 0xfde725);
    assert_int_equal(dg_colormap_viridis(7.0f), 0xfde725);
    assert_int_equal(dg_colormap_viridis(-1.0f), 0x440154);
    assert_int_equal(dg_colormap_viridis(NAN), 0x808080);
    /* every anchor (t = k / 10), and halfway between the first two each channel rounded */
    static const uint32_t ANCHOR[11] = {0x440154, 0x482475, 0x414487, 0x355f8d, 0x2a788e, 0x21918c,
                                        0x22a884, 0x44bf70, 0x7ad151, 0xbddf26, 0xfde725};
    for (int k = 0; k <= 10; k++) assert_int_equal(dg_colormap_viridis((float)k / 10.0f), ANCHOR[k]);
    assert_int_equal(dg_colormap_viridis(0.05f), 0x461365);

    float v[4] = {0.0f, 1.0f, NAN, 0.5f};  /* (2, 2) */
    dg_image *img = dg_image_create(40, 40, 0);
    dg_draw d;
    dg_err e = {0};
    assert_int_equal(dg_draw_begin(&d, img, &e), DG_OK);
    dg_draw_heat(&d, 0, 0, 40, 40, v, 2, 2, 0.0f, 1.0f, 0);
    assert_int_equal(dg_draw_end(&d, &e), DG_OK);
    assert_int_equal(dg_image_get(img, 0, 0), 0x440154);
    assert_int_equal(dg_image_get(img, 39, 0), 0xfde725);
    assert_int_equal(dg_image_get(img, 0, 39), 0x808080);    /* NaN corner */
    assert_int_equal(dg_draw_begin(&d, img, &e), DG_OK);
    dg_draw_heat(&d, 0, 0, 40, 40, v, 2, 2, 1.0f, 1.0f, 0);  /* auto range */
    assert_int_equal(dg_draw_end(&d, &e), DG_OK);
    assert_int_equal(dg_image_get(img, 39, 0), 0xfde725);
    /* on nodes: the samples sit on the box's corners, the pixel between them is their mean */
    float r[2] = {0.0f, 1.0f};  /* (1 row, 2 columns) */
    dg_image_clear(img, 0xffffff);
    assert_int_equal(dg_draw_begin(&d, img, &e), DG_OK);
    dg_draw_heat(&d, 10, 5, 20, 0, r, 2, 1, 0.0f, 1.0f, 1);  /* h 0: one row */
    dg_draw_heat(&d, 10, 20, 20, 10, r, 2, 1, 0.0f, 1.0f, 1);
    assert_int_equal(dg_draw_end(&d, &e), DG_OK);
    assert_int_equal(dg_image_get(img, 10, 20), 0x440154);
    assert_int_equal(dg_image_get(img, 30, 30), 0xfde725);
    assert_int_equal(dg_image_get(img, 20, 25), dg_colormap_viridis(0.5f));
    assert_int_equal(dg_image_get(img, 31, 25), 0xffffff);
    assert_int_equal(dg_image_get(img, 20, 31), 0xffffff);
    dg_image_free(img);
}

static void test_png_roundtrip(void **state) {
    (void)state;
    char path[512];
    out_path(path, sizeof path, "a.png");
    dg_image *img = dg_image_create(17, 11, 0x336699);
    assert_non_null(img);
    img->rgb[0] = 0xff; img->rgb[1] = 0; img->rgb[2] = 0;
    unsigned char *last = img->rgb + (10 * 17 + 16) * 3;
    last[0] = 0; last[1] = 0xff; last[2] = 0;
    dg_draw d;
    dg_err e = {0};
    assert_int_equal(dg_draw_begin(&d, img, &e), DG_OK);
    dg_draw_rect_fill(&d, 5, 3, 4, 2, 0xabcdef, 1);
    assert_int_equal(dg_draw_end(&d, &e), DG_OK);
    assert_int_equal(dg_png_write(img, path, &e), DG_OK);
    dg_image_free(img);

    const int w = 17, h = 11;
    unsigned char *rgb = read_png(path, w, h);
    assert_int_equal(rgb_at(rgb, w, 0, 0), 0xff0000);
    assert_int_equal(rgb_at(rgb, w, 16, 10), 0x00ff00);
    assert_int_equal(rgb_at(rgb, w, 6, 4), 0xabcdef);
    assert_int_equal(rgb_at(rgb, w, 9, 4), 0x336699);
    free(rgb);
    assert_int_equal(dir_entries(), 1);  /* no temporary left beside it */
    remove(path);
}

static void test_png_bad_path(void **state) {
    (void)state;
    dg_image *img = dg_image_create(4, 4, 0);
    dg_err e = {0};
    assert_int_equal(dg_png_write(img, "/nonexistent/dir/x.png", &e), DG_ERR_IO);
    assert_int_equal(e.status, DG_ERR_IO);
    assert_non_null(strstr(e.msg, "/nonexistent/dir/x.png"));
    struct stat sb;
    assert_int_not_equal(stat("/nonexistent/dir/x.png", &sb), 0);
    assert_int_not_equal(stat("/nonexistent/dir", &sb), 0);

    dg_err e2 = {0};
    assert_int_equal(dg_png_write(NULL, "/tmp/never.png", &e2), DG_ERR_ARG);
    dg_image_free(img);

    dg_err e3 = {0};
    assert_null(dg_gif_begin("/nonexistent/dir/x.gif", 8, 8, 10, &e3));
    assert_int_equal(e3.status, DG_ERR_IO);
    dg_err e4 = {0};
    assert_int_equal(dg_plot_lines("/nonexistent/dir/p.png", 320, 240, "t", "x", "y", 0, NULL, 0, &e4),
                     DG_ERR_IO);
}

static void test_gif_three_frames(void **state) {
    (void)state;
    char path[512];
    dg_gif *g = gif_begin_ok(path, "anim.gif", 32, 24, 7);
    dg_err e = {0};
    dg_image *img = dg_image_create(32, 24, 0xffffff);
    for (int f = 0; f < 3; f++) {
        dg_draw d;
        dg_image_clear(img, 0xffffff);
        assert_int_equal(dg_draw_begin(&d, img, &e), DG_OK);
        dg_draw_circle_fill(&d, 6.0 + 8.0 * f, 12.0, 4.0, 0xff0000, 1.0);
        assert_int_equal(dg_draw_end(&d, &e), DG_OK);
        assert_int_equal(dg_gif_add_frame(g, img, &e), DG_OK);
    }
    assert_int_equal(dg_gif_frames(g), 3);
    dg_image *wrong = dg_image_create(31, 24, 0);
    assert_int_equal(dg_gif_add_frame(g, wrong, &e), DG_ERR_SHAPE);
    dg_image_free(wrong);
    assert_int_equal(dg_gif_end(g, &e), DG_OK);
    dg_image_free(img);
    assert_int_equal(dir_entries(), 1);

    int err = 0;
    GifFileType *gf = DGifOpenFileName(path, &err);
    assert_non_null(gf);
    assert_int_equal(DGifSlurp(gf), GIF_OK);
    assert_int_equal(gf->ImageCount, 3);
    assert_int_equal(gf->SWidth, 32);
    assert_int_equal(gf->SHeight, 24);
    /* first frame whole; later ones only the changed box, inside the screen */
    assert_int_equal(gf->SavedImages[0].ImageDesc.Width, 32);
    assert_int_equal(gf->SavedImages[0].ImageDesc.Height, 24);
    for (int i = 0; i < 3; i++) {
        GifImageDesc *d = &gf->SavedImages[i].ImageDesc;
        assert_true(d->Left + d->Width <= 32 && d->Top + d->Height <= 24);
        GraphicsControlBlock gcb;
        assert_int_equal(DGifSavedExtensionToGCB(gf, i, &gcb), GIF_OK);
        assert_int_equal(gcb.DelayTime, 7);
    }
    /* pixel colours come through the palette */
    ColorMapObject *cm = gf->SColorMap;
    assert_non_null(cm);
    GifColorType c0 = cm->Colors[gf->SavedImages[0].RasterBits[0]];
    assert_int_equal(c0.Red, 255); assert_int_equal(c0.Green, 255); assert_int_equal(c0.Blue, 255);
    GifColorType c1 = cm->Colors[gf->SavedImages[0].RasterBits[12 * 32 + 6]];
    assert_int_equal(c1.Red, 255); assert_int_equal(c1.Green, 0); assert_int_equal(c1.Blue, 0);
    /* loops: a NETSCAPE2.0 application block before the first frame */
    int looping = 0;
    SavedImage *s0 = &gf->SavedImages[0];
    for (int k = 0; k < s0->ExtensionBlockCount; k++) {
        ExtensionBlock *b = &s0->ExtensionBlocks[k];
        if (b->Function == APPLICATION_EXT_FUNC_CODE && b->ByteCount == 11 &&
            !memcmp(b->Bytes, "NETSCAPE2.0", 11))
            looping = 1;
    }
    assert_true(looping);
    DGifCloseFile(gf, &err);
    remove(path);
}

static void test_gif_abort_and_empty(void **state) {
    (void)state;
    char path[512];
    dg_gif *g = gif_begin_ok(path, "gone.gif", 8, 8, 10);
    dg_image *img = dg_image_create(8, 8, 0x00ff00);
    dg_err e = {0};
    assert_int_equal(dg_gif_add_frame(g, img, &e), DG_OK);
    dg_gif_abort(g);
    dg_gif_abort(NULL);
    assert_int_equal(dir_entries(), 0);

    g = dg_gif_begin(path, 8, 8, 10, &e);
    assert_non_null(g);
    assert_int_equal(dg_gif_end(g, &e), DG_ERR_ARG);  /* no frames: no file */
    assert_int_equal(dir_entries(), 0);

    assert_null(dg_gif_begin(path, 0, 8, 10, &e));
    assert_int_equal(e.status, DG_ERR_ARG);
    assert_null(dg_gif_begin(path, 8, 8, 0, &e));
    assert_int_equal(dir_entries(), 0);
    dg_image_free(img);
}

static void test_plot_log_with_nan_and_zero(void **state) {
    (void)state;
    char path[512];
    out_path(path, sizeof path, "loss.png");
    float x[6] = {0, 1, 2, 3, 4, 5};
    float a[6] = {10.0f, 3.0f, NAN, 0.5f, 0.2f, 0.1f};
    float b[6] = {0.5f, 0.0f, 0.02f, -1.0f, 0.003f, INFINITY};
    dg_plot_series s[2] = {
        {"goal", x, a, 6, dg_plot_color(0)},
        {"collision", NULL, b, 6, dg_plot_color(1)},
    };
    dg_err e = {0};
    assert_int_equal(dg_plot_lines(path, 400, 300, "loss", "epoch", "value", 1, s, 2, &e), DG_OK);
    const int w = 400, h = 300;
    unsigned char *rgb = read_png(path, w, h);
    /* the first series' colour appears somewhere */
    int seen = 0;
    for (int i = 0; i < w * h && !seen; i++) seen = rgb_at(rgb, w, i % w, i / w) == dg_plot_color(0);
    assert_true(seen);
    free(rgb);
    remove(path);
}

static void test_plot_empty_and_bad(void **state) {
    (void)state;
    char path[512];
    out_path(path, sizeof path, "empty.png");
    float nan1[1] = {NAN};
    dg_plot_series s[2] = {
        {"nothing", NULL, NULL, 0, dg_plot_color(0)},
        {"nan", NULL, nan1, 1, dg_plot_color(1)},
    };
    dg_err e = {0};
    assert_int_equal(dg_plot_lines(path, 320, 240, NULL, NULL, NULL, 1, s, 2, &e), DG_OK);
    assert_int_equal(dg_plot_lines(path, 320, 240, "t", "x", "y", 0, NULL, 0, &e), DG_OK);
    free(read_png(path, 320, 240));

    /* one point, a constant series, huge values: still a plot */
    float one[1] = {3.0f}, flat[3] = {2.0f, 2.0f, 2.0f}, huge[2] = {-3e38f, 3e38f};
    dg_plot_series t[3] = {
        {"one", NULL, one, 1, 0xff0000}, {"flat", NULL, flat, 3, 0x00ff00}, {"huge", NULL, huge, 2, 0x0000ff}};
    assert_int_equal(dg_plot_lines(path, 320, 240, "t", "x", "y", 0, t, 3, &e), DG_OK);
    assert_int_equal(dg_plot_lines(path, 320, 240, "t", "x", "y", 1, t, 3, &e), DG_OK);

    dg_plot_series bad = {"bad", NULL, NULL, 5, 0};
    assert_int_equal(dg_plot_lines(path, 320, 240, "t", "x", "y", 0, &bad, 1, &e), DG_ERR_ARG);
    assert_int_equal(dg_plot_lines(path, 20, 20, "t", "x", "y", 0, t, 3, &e), DG_ERR_ARG);
    assert_int_equal(dg_plot_lines(path, 0, 20, "t", "x", "y", 0, t, 3, &e), DG_ERR_ARG);
    remove(path);
    assert_int_equal(dir_entries(), 0);
}

/* The box of the plot's legend: every horizontal run of 30 or more pixels of its outline's grey
 * (0xb0b0b0: no text, grid or series has it); 0 when there is none. */
static int legend_box(const dg_image *img, int *x0, int *y0, int *x1, int *y1) {
    *x0 = *y0 = 1 << 30;
    *x1 = *y1 = -1;
    for (int y = 0; y < img->h; y++)
        for (int x = 0, run = 0; x < img->w; x++) {
            run = dg_image_get(img, x, y) == 0xb0b0b0 ? run + 1 : 0;
            if (run == 30) {
                *x0 = x - 29 < *x0 ? x - 29 : *x0;
                *y0 = y < *y0 ? y : *y0;
                *y1 = y > *y1 ? y : *y1;
            }
            if (run >= 30 && x > *x1) *x1 = x;
        }
    return *x1 >= 0;
}

/* The plot area's right edge: the rightmost column dark (its frame's grey or black) for a third of
 * the canvas's height. */
static int frame_right(const dg_image *img) {
    int right = -1;
    for (int x = 0; x < img->w; x++) {
        int n = 0;
        for (int y = 0; y < img->h; y++) {
            const uint32_t c = dg_image_get(img, x, y);
            n += (c >> 16) < 0x90 && ((c >> 8) & 255) < 0x90 && (c & 255) < 0x90;
        }
        if (n >= img->h / 3) right = x;
    }
    return right;
}

/* The legend stays off the data: in the first corner of the plot area no line crosses (top left
 * when a line runs to the top right), right of the plot area when lines reach every corner; a
 * series of lone points shows a dot in the legend. */
static void test_plot_legend_off_the_data(void **state) {
    (void)state;
    float x[4] = {0, 0, 1, 1}, y[4] = {0, 1, 0, 1}, diag[2] = {0, 1}, mid[1] = {0.5f};
    const dg_plot_series corners[2] = {{NULL, x, y, 4, 0x00c000}, {"the middle", mid, mid, 1, 0x0000ff}};
    const dg_plot_series rising[2] = {{NULL, diag, diag, 2, 0x00c000}, {"the middle", mid, mid, 1, 0x0000ff}};
    dg_image *img = dg_image_create(400, 300, 0xffffff);
    assert_non_null(img);
    dg_err e = {0};
    int x0, y0, x1, y1;
    /* a line up to the top right: the legend at the top left, nothing green under it */
    assert_int_equal(dg_plot_draw(img, "t", "x", "y", 0, rising, 2, &e), DG_OK);
    assert_true(legend_box(img, &x0, &y0, &x1, &y1));
    const int right = frame_right(img);
    assert_true(right > img->w / 2);
    if (!(x1 < right && x0 < img->w / 3 && y0 < img->h / 3))
        fail_msg("legend at [%d, %d] x [%d, %d], the plot area's right edge at %d", x0, x1, y0, y1, right);
    for (int j = y0; j <= y1; j++)
        for (int i = x0; i <= x1; i++) {
            const uint32_t c = dg_image_get(img, i, j);
            if ((int)((c >> 8) & 255) > (int)(c >> 16) + 40) fail_msg("green under the legend at (%d, %d)", i, j);
        }
    /* lines in every corner: the legend right of the plot area */
    assert_int_equal(dg_plot_draw(img, "t", "x", "y", 0, corners, 2, &e), DG_OK);
    assert_true(legend_box(img, &x0, &y0, &x1, &y1));
    if (!(x0 > frame_right(img))) fail_msg("legend from x = %d, the plot area's right edge at %d", x0, frame_right(img));
    /* a lone point's sample is a dot: no blue line across the legend's sample */
    int blue_run = 0;
    for (int j = y0; j <= y1; j++)
        for (int i = x0, run = 0; i <= x1; i++) {
            run = dg_image_get(img, i, j) == 0x0000ff ? run + 1 : 0;
            blue_run = run > blue_run ? run : blue_run;
        }
    assert_true(blue_run > 0 && blue_run < 8);
    dg_image_free(img);
}

/* A plot of categories: one tick under the plot area per category and none between (a numeric
 * axis over 0 .. 2 would tick 0.0, 0.5, ...); no names is refused. */
static void test_plot_categories(void **state) {
    (void)state;
    char path[512];
    out_path(path, sizeof path, "cats.png");
    float x[3] = {0, 1, 2}, y[3] = {3, 1, 2};
    const dg_plot_series s = {"loss", x, y, 3, dg_plot_color(0)};
    const char *names[3] = {"lr=0.001\nhidden=[16,16]", "lr=0.003\nhidden=[16,16]", "lr=0.01\nhidden=[32,32]"};
    dg_err e = {0};
    const int w = 500, h = 360;
    assert_int_equal(dg_plot_categories(path, w, h, "t", "setting", "loss", 0, names, 3, &s, 1, &e), DG_OK);
    unsigned char *rgb = read_png(path, w, h);
    int bottom = -1;  /* the plot area's lowest row dark for a third of the width: its frame */
    for (int j = 0; j < h; j++) {
        int n = 0;
        for (int i = 0; i < w; i++) n += (rgb_at(rgb, w, i, j) & 0x808080) == 0;  /* channels under 128 */
        if (n >= w / 3) bottom = j;
    }
    assert_true(bottom > h / 2);
    int ticks = 0;  /* black runs in the row just under the frame */
    for (int i = 1; i < w; i++)
        ticks += rgb_at(rgb, w, i, bottom + 2) == 0 && rgb_at(rgb, w, i - 1, bottom + 2) != 0;
    free(rgb);
    assert_int_equal(ticks, 3);
    assert_int_equal(dg_plot_categories(path, w, h, "t", "x", "y", 0, NULL, 0, &s, 1, &e), DG_ERR_ARG);
    remove(path);
}

static void write_text(const char *path, const char *text) {
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void test_plot_curves_csv(void **state) {
    (void)state;
    char csv[512], png[512];
    out_path(csv, sizeof csv, "curves.csv");
    out_path(png, sizeof png, "curves.png");
    /* two panels, side by side; the second's one series in its given colour, a "nan" point skipped */
    write_text(csv, "panel,series,label,color,steps,loss\n"
                    "reach,bptt,BPTT,,1,2.5\nreach,bptt,BPTT,,100,0.5\nreach,pg,PPO,,10,3\nreach,pg,PPO,,1000,nan\n"
                    "\nchase,pg,PPO,00ff00,10,4\nchase,pg,PPO,00ff00,10000,0.1\n");
    dg_err e = {0};
    assert_int_equal(dg_plot_curves_csv(csv, png, "test", &e), DG_OK);
    unsigned char *rgb = read_png(png, 2 * 760, 560);
    int green_left = 0, green_right = 0;
    for (int y = 0; y < 560; y++)
        for (int x = 0; x < 2 * 760; x++)
            if (rgb_at(rgb, 2 * 760, x, y) == 0x00ff00) *(x < 760 ? &green_left : &green_right) += 1;
    assert_int_equal(green_left, 0);
    assert_true(green_right > 0);
    free(rgb);
    remove(png);

    /* bad rows: the file and line named, no picture left */
    const char *bad[] = {
        "panel,series,label,color,steps,loss\nreach,a,A,,1,2\nreach,a,A,,x,2\n",   /* steps not a number */
        "reach,a,A,,1,2\nreach,a,A,,1\n",                                            /* five fields */
        "reach,a,A,1000000,1,2\n",                                                    /* colour over 0xffffff */
        "reach,a,A,,1,inf\n",                                                         /* loss not finite */
    };
    for (int i = 0; i < 4; i++) {
        write_text(csv, bad[i]);
        assert_int_equal(dg_plot_curves_csv(csv, png, NULL, &e), DG_ERR_FORMAT);
        assert_non_null(strstr(e.msg, "curves.csv:"));
        assert_non_null(strstr(e.msg, "expected panel,series,label,color,steps,loss"));
    }
    write_text(csv, "panel,series,label,color,steps,loss\n\n");
    assert_int_equal(dg_plot_curves_csv(csv, png, NULL, &e), DG_ERR_FORMAT);
    assert_non_null(strstr(e.msg, "no rows"));
    write_text(csv, "p1,a,,,1,1\np2,a,,,1,1\np3,a,,,1,1\np4,a,,,1,1\np5,a,,,1,1\np6,a,,,1,1\np7,a,,,1,1\n"
                    "p8,a,,,1,1\np9,a,,,1,1\n");
    assert_int_equal(dg_plot_curves_csv(csv, png, NULL, &e), DG_ERR_FORMAT);
    assert_non_null(strstr(e.msg, "at most 8 panels"));
    remove(csv);
    assert_int_not_equal(dg_plot_curves_csv(csv, png, NULL, &e), DG_OK);  /* no such file */
    assert_int_equal(dir_entries(), 0);
}

static void test_draw_far_outside(void **state) {
    (void)state;
    dg_image *img = dg_image_create(16, 12, 0xffffff);
    dg_draw d;
    dg_err e = {0};
    assert_int_equal(dg_draw_begin(&d, img, &e), DG_OK);
    const double far[] = {-1e300, -1e30, -1e9, -100.0, 1e9, 1e30, INFINITY, -INFINITY, NAN};
    int nf = (int)(sizeof far / sizeof far[0]);
    for (int i = 0; i < nf; i++)
        for (int j = 0; j < nf; j++) {
            dg_draw_line(&d, far[i], far[j], 8, 6, 0xff0000, 3);
            dg_draw_line(&d, far[i], 5, far[j], 7, 0xff0000, 1);
            dg_draw_circle_fill(&d, far[i], far[j], 5, 0x00ff00, 0.5);
            dg_draw_circle_fill(&d, far[i], far[j], fabs(far[i]), 0x00ff00, 0.5);
            dg_draw_circle_outline(&d, 8, 6, fabs(far[i]), 0x0000ff, 2);
            dg_draw_rect_fill(&d, far[i], far[j], fabs(far[j]), 3, 0x00ffff, 0.5);
            const double px[3] = {far[i], 8, far[j]}, py[3] = {0, far[j], 11};
            dg_draw_polyline(&d, px, py, 3, 0xff00ff, 2);
            dg_draw_text(&d, far[i], far[j], "far", 0, 12, 0, j & 1);
        }
    assert_int_equal(dg_draw_end(&d, &e), DG_OK);
    assert_int_equal(dg_draw_begin(&d, img, &e), DG_OK);
    dg_draw_circle_fill(&d, 8, 6, 1e30, 0x00ff00, 1);  /* covers everything */
    assert_int_equal(dg_draw_end(&d, &e), DG_OK);
    assert_int_equal(dg_image_get(img, 0, 0), 0x00ff00);
    assert_int_equal(dg_image_get(img, 15, 11), 0x00ff00);
    assert_int_equal(dg_draw_begin(&d, img, &e), DG_OK);
    dg_draw_line(&d, 0, 0, 15, 11, 0x000000, 1e9);                /* too wide: nothing */
    dg_draw_line(&d, 3, 3, 9, 3, 0x000000, -1);                   /* bad width: nothing */
    dg_draw_line(&d, 3, 3, 9, 3, 0x000000, NAN);
    dg_draw_rect_fill(&d, 5, 5, -3, 4, 0x123456, 1);
    dg_draw_rect_outline(&d, 2147483647.0, -5, 2147483647.0, 2147483647.0, 0x123456, 1);
    assert_int_equal(dg_draw_end(&d, &e), DG_OK);
    assert_int_equal(count_ink(img, 0x00ff00, 0, 0, 15, 11, NULL), 0);
    assert_int_equal(dg_draw_begin(&d, img, &e), DG_OK);
    dg_draw_line(&d, 3, 3, 3, 3, 0x000000, 2);                    /* zero length: a round dot */
    assert_int_equal(dg_draw_end(&d, &e), DG_OK);
    assert_int_not_equal(dg_image_get(img, 3, 3), 0x00ff00);
    assert_int_equal(dg_draw_begin(&d, img, &e), DG_OK);
    for (int x = -2000; x <= 2000; x += 97) dg_draw_text(&d, x, x / 2.0, "Hello, world! 1e-3 (x=2)", 0, 30, 0, 0);
    dg_draw_text(&d, 2, 2, "\x01\xff~", 0x000000, 0, 0, 0);
    dg_draw_text(&d, -5, -500, "vertical text", 0x000000, 20, 0, 1);
    float v[6] = {1, 2, 3, 4, 5, NAN};
    dg_draw_heat(&d, -100, -100, 1000, 1000, v, 3, 2, 0.0f, 0.0f, 0);
    dg_draw_heat(&d, 2147483000, 5, 2000, 2000, v, 3, 2, 0.0f, 5.0f, 1);
    dg_draw_heat(&d, 0, 0, 16, 12, v, 0, 2, 0.0f, 1.0f, 0);
    dg_draw_heat(NULL, 0, 0, 16, 12, v, 3, 2, 0.0f, 1.0f, 0);
    dg_draw_line(NULL, 0, 0, 1, 1, 0, 1);
    dg_draw_text(NULL, 0, 0, "x", 0, 1, 0, 0);
    assert_int_equal(dg_draw_end(&d, &e), DG_OK);
    dg_image_free(img);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_canvas_basics),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_heat_and_colormap),
        cmocka_unit_test_setup_teardown(test_png_roundtrip, setup_dir, teardown_dir),
        cmocka_unit_test(test_png_bad_path),
        cmocka_unit_test_setup_teardown(test_gif_three_frames, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_gif_abort_and_empty, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_plot_log_with_nan_and_zero, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_plot_empty_and_bad, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_plot_curves_csv, setup_dir, teardown_dir),
        cmocka_unit_test(test_plot_legend_off_the_data),
        cmocka_unit_test_setup_teardown(test_plot_categories, setup_dir, teardown_dir),
        cmocka_unit_test(test_draw_far_outside),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
