/* Tests for images: canvas drawing, PNG and GIF output read back with libpng
 * and giflib, line plots, atomic writes on failure, clipping far outside. */
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

    dg_image_pixel_blend(img, 3, 4, 0xff0000, 1.0f);
    assert_int_equal(dg_image_get(img, 3, 4), 0xff0000);
    dg_image_clear(img, 0x000000);
    dg_image_pixel_blend(img, 3, 4, 0xffffff, 0.5f);
    assert_int_equal(dg_image_get(img, 3, 4), 0x808080);
    dg_image_pixel_blend(img, 3, 4, 0xffffff, NAN);
    assert_int_equal(dg_image_get(img, 3, 4), 0x808080);

    /* a 1-pixel horizontal line on y = 5 covers row 5 only, fully */
    dg_image_clear(img, 0xffffff);
    dg_image_line(img, 2.0f, 5.0f, 17.0f, 5.0f, 0x000000, 1.0f);
    assert_int_equal(dg_image_get(img, 10, 5), 0x000000);
    assert_int_equal(dg_image_get(img, 10, 4), 0xffffff);
    assert_int_equal(dg_image_get(img, 10, 6), 0xffffff);

    /* a disc covers its centre, not far corners; edges are partial */
    dg_image_clear(img, 0xffffff);
    dg_image_circle_fill(img, 10.0f, 5.0f, 3.0f, 0x0000ff, 1.0f);
    assert_int_equal(dg_image_get(img, 10, 5), 0x0000ff);
    assert_int_equal(dg_image_get(img, 0, 0), 0xffffff);
    uint32_t edge = dg_image_get(img, 12, 7);  /* distance ~2.8 from the centre: partial */
    assert_true(edge != 0xffffff && edge != 0x0000ff);

    /* text draws something inside its box, nothing outside */
    dg_image_clear(img, 0xffffff);
    assert_int_equal(dg_image_text_width("ab", 1), 11);
    assert_int_equal(dg_image_text_width("", 3), 0);
    assert_int_equal(dg_image_text_width(NULL, 1), 0);
    int w = dg_image_text(img, 1, 1, "E", 0x000000, 1);
    assert_int_equal(w, 5);
    assert_int_equal(dg_image_get(img, 1, 1), 0x000000);      /* top-left of 'E' */
    assert_int_equal(dg_image_get(img, 8, 1), 0xffffff);
    dg_image_free(img);
}

static void test_heat_and_colormap(void **state) {
    (void)state;
    assert_int_equal(dg_colormap_viridis(0.0f), 0x440154);
    assert_int_equal(dg_colormap_viridis(1.0f), 0xfde725);
    assert_int_equal(dg_colormap_viridis(7.0f), 0xfde725);
    assert_int_equal(dg_colormap_viridis(-1.0f), 0x440154);
    assert_int_equal(dg_colormap_viridis(NAN), 0x808080);

    float v[4] = {0.0f, 1.0f, NAN, 0.5f};  /* (2, 2) */
    dg_image *img = dg_image_create(40, 40, 0);
    dg_image_heat(img, v, 2, 2, 0.0f, 1.0f);
    assert_int_equal(dg_image_get(img, 0, 0), 0x440154);
    assert_int_equal(dg_image_get(img, 39, 0), 0xfde725);
    assert_int_equal(dg_image_get(img, 0, 39), 0x808080);    /* NaN corner */
    dg_image_heat(img, v, 2, 2, 1.0f, 1.0f);                  /* auto range */
    assert_int_equal(dg_image_get(img, 39, 0), 0xfde725);
    dg_image_free(img);
}

static void test_png_roundtrip(void **state) {
    (void)state;
    char path[512];
    out_path(path, sizeof path, "a.png");
    dg_image *img = dg_image_create(17, 11, 0x336699);
    assert_non_null(img);
    dg_image_pixel_blend(img, 0, 0, 0xff0000, 1.0f);
    dg_image_pixel_blend(img, 16, 10, 0x00ff00, 1.0f);
    dg_image_rect_fill(img, 5, 3, 4, 2, 0xabcdef, 1.0f);
    dg_err e = {0};
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
        dg_image_clear(img, 0xffffff);
        dg_image_circle_fill(img, 6.0f + 8.0f * f, 12.0f, 4.0f, 0xff0000, 1.0f);
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

static void test_draw_far_outside(void **state) {
    (void)state;
    dg_image *img = dg_image_create(16, 12, 0xffffff);
    const float far[] = {-1e30f, -1e9f, -100.0f, 1e9f, 1e30f, INFINITY, -INFINITY, NAN};
    int nf = (int)(sizeof far / sizeof far[0]);
    for (int i = 0; i < nf; i++)
        for (int j = 0; j < nf; j++) {
            dg_image_line(img, far[i], far[j], 8.0f, 6.0f, 0xff0000, 3.0f);
            dg_image_line(img, far[i], 5.0f, far[j], 7.0f, 0xff0000, 1.0f);
            dg_image_circle_fill(img, far[i], far[j], 5.0f, 0x00ff00, 0.5f);
            dg_image_circle_outline(img, 8.0f, 6.0f, fabsf(far[i]), 0x0000ff, 2.0f);
        }
    dg_image_circle_fill(img, 8.0f, 6.0f, 1e30f, 0x00ff00, 1.0f);  /* covers everything */
    assert_int_equal(dg_image_get(img, 0, 0), 0x00ff00);
    dg_image_line(img, 0.0f, 0.0f, 15.0f, 11.0f, 0x000000, 1e9f);
    dg_image_line(img, 3.0f, 3.0f, 3.0f, 3.0f, 0x000000, 2.0f);    /* zero length: a dot */
    dg_image_line(img, 3.0f, 3.0f, 9.0f, 3.0f, 0x000000, -1.0f);   /* bad width: nothing */
    dg_image_rect_fill(img, -2147483647, -2147483647, 2147483647, 2147483647, 0x123456, 1.0f);
    dg_image_rect_fill(img, 2147483647, 2147483647, 2147483647, 2147483647, 0x123456, 1.0f);
    dg_image_rect_outline(img, 2147483647, -5, 2147483647, 2147483647, 0x123456);
    dg_image_rect_fill(img, 5, 5, -3, 4, 0x123456, 1.0f);
    for (int x = -2000; x <= 2000; x += 97)
        dg_image_text(img, x, x / 2, "Hello, world! 1e-3 (x=2)", 0x000000, 3);
    dg_image_text(img, 2, 2, "\x01\xff~", 0x000000, 0);
    dg_image_text_up(img, -5, -500, "vertical text", 0x000000, 2);
    dg_image_text_up(img, 10, 10, "vertical text", 0x000000, 2);
    dg_image_pixel_blend(img, -1, 0, 0, 1.0f);
    dg_image_pixel_blend(img, 16, 0, 0, 1.0f);
    dg_image_pixel_blend(img, 0, 12, 0, 1.0f);
    float v[6] = {1, 2, 3, 4, 5, NAN};
    dg_image_heat_rect(img, -100, -100, 1000, 1000, v, 3, 2, 0.0f, 0.0f);
    dg_image_heat_rect(img, 2147483000, 5, 2000, 2000, v, 3, 2, 0.0f, 5.0f);
    dg_image_heat(img, v, 0, 2, 0.0f, 1.0f);
    dg_image_heat(NULL, v, 3, 2, 0.0f, 1.0f);
    dg_image_line(NULL, 0, 0, 1, 1, 0, 1);
    dg_image_text(NULL, 0, 0, "x", 0, 1);
    dg_image_free(img);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_canvas_basics),
        cmocka_unit_test(test_heat_and_colormap),
        cmocka_unit_test_setup_teardown(test_png_roundtrip, setup_dir, teardown_dir),
        cmocka_unit_test(test_png_bad_path),
        cmocka_unit_test_setup_teardown(test_gif_three_frames, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_gif_abort_and_empty, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_plot_log_with_nan_and_zero, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_plot_empty_and_bad, setup_dir, teardown_dir),
        cmocka_unit_test(test_draw_far_outside),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
