/* A value's slice drawn again and again into an image (dg_hji_figure, what `difgames hji view`
 * shows): colours where the value is, its zero set where the value crosses 0, the path's end where
 * the path ends, pixels and points of the plot box both ways, contours, target and obstacles. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "difgames/difgames.h"
#include "gfx/draw.h"  /* dg_colormap_viridis */

static const char YAML[] = "game: pursuit2d\ncapture_radius: 0.5\nt_end: 1\ngrid: {min: [-2, -2], max: [2, 2], "
                           "n: [41, 41]}\n";

static dg_hji_problem *load(void) {
    dg_err e = {0};
    dg_cfg *c = dg_cfg_parse(YAML, strlen(YAML), "fig.yaml", &e);
    dg_hji_problem *p = c ? dg_hji_problem_load(c, &e) : NULL;
    if (!p) fail_msg("%s", e.msg);
    dg_cfg_free(c);
    return p;
}

static int channel_gap(uint32_t a, uint32_t b) {
    int d = 0;
    for (int s = 0; s < 24; s += 8) {
        const int x = abs((int)((a >> s) & 255) - (int)((b >> s) & 255));
        d = x > d ? x : d;
    }
    return d;
}

/* the least channel gap to rgb within r pixels of (x, y) */
static int near(const dg_image *img, double x, double y, uint32_t rgb, int r) {
    int best = 255;
    for (int j = (int)y - r; j <= (int)y + r; j++)
        for (int i = (int)x - r; i <= (int)x + r; i++) {
            const int d = channel_gap(dg_image_get(img, i, j), rgb);
            best = d < best ? d : best;
        }
    return best;
}

static void test_slice_picture(void **state) {
    (void)state;
    dg_hji_problem *p = load();
    const dg_hji_grid *g = &p->grid;
    dg_err e = {0};
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t j = 0; j < g->nodes; j++) {
        lo = fmin(lo, p->target[j]);
        hi = fmax(hi, p->target[j]);
    }
    dg_hji_figure *f = dg_hji_figure_create(g, p->name, lo, hi, "V", &e);
    assert_non_null(f);
    const int w = dg_hji_figure_width(f), h = dg_hji_figure_height(f);
    assert_true(w > 300 && h > 300);
    dg_image *img = dg_image_create(w, h, 0);
    /* the value |x| - 0.5 at the middle of the other axes (none here), a path to (1, -1) */
    const double at[2] = {0, 0}, path[6] = {1.5, 1.5, 1.2, 0.2, 1.0, -1.0};
    dg_hji_figure_layer L = {.v = p->target, .at = at, .path = path, .npath = 3};
    assert_int_equal(dg_hji_figure_draw(f, img, &L, "test", &e), DG_OK);
    double px, py, x[2] = {9, 9};
    /* the centre: the lowest value, viridis' dark end */
    dg_hji_figure_pixel(f, 0, 0, &px, &py);
    assert_true(near(img, px, py, dg_colormap_viridis(0.0f), 1) < 24);
    /* the corner (2, 2): near the highest value, viridis' yellow end */
    dg_hji_figure_pixel(f, 1.9, 1.9, &px, &py);
    assert_true(near(img, px, py, dg_colormap_viridis(1.0f), 2) < 40);
    /* the zero set: white on the circle of radius 0.5 */
    dg_hji_figure_pixel(f, 0.5, 0, &px, &py);
    assert_true(near(img, px, py, 0xffffff, 2) < 30);
    dg_hji_figure_pixel(f, 0, -0.5, &px, &py);
    assert_true(near(img, px, py, 0xffffff, 2) < 30);
    /* the path's end: an orange disk */
    dg_hji_figure_pixel(f, 1.0, -1.0, &px, &py);
    assert_int_equal(near(img, px, py, 0xff8c1a, 1), 0);
    /* pixels and points both ways; outside the plot box no point */
    assert_int_equal(dg_hji_figure_point(f, px, py, x), 1);
    assert_float_equal(x[0], 1.0, 1e-9);
    assert_float_equal(x[1], -1.0, 1e-9);
    x[0] = 9;
    assert_int_equal(dg_hji_figure_point(f, 1, 1, x), 0);
    assert_true(x[0] == 9);
    /* contours: more dark lines over the slice */
    int64_t dark0 = 0, dark1 = 0;
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) dark0 += channel_gap(dg_image_get(img, i, j), 0x202020) < 16;
    L.levels = 6;
    assert_int_equal(dg_hji_figure_draw(f, img, &L, "test", &e), DG_OK);
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) dark1 += channel_gap(dg_image_get(img, i, j), 0x202020) < 16;
    assert_true(dark1 > dark0 + 500);
    /* a target drawn dashed red on its rim, an obstacle veiled grey */
    double *obst = malloc((size_t)g->nodes * sizeof(double)), *target = malloc((size_t)g->nodes * sizeof(double));
    for (int64_t n = 0; n < g->nodes; n++) {
        double xy[2];
        dg_hji_grid_point(g, n, xy);
        obst[n] = 0.4 - hypot(xy[0] + 1, xy[1] - 1);  /* a disk at (-1, 1) */
        target[n] = hypot(xy[0], xy[1]) - 1.0;         /* the unit disk */
    }
    L = (dg_hji_figure_layer){.v = p->target, .at = at};
    assert_int_equal(dg_hji_figure_draw(f, img, &L, NULL, &e), DG_OK);
    dg_hji_figure_pixel(f, -1, 1, &px, &py);
    const uint32_t bare = dg_image_get(img, (int)px, (int)py);
    L.target = target;
    L.obstacle = obst;
    assert_int_equal(dg_hji_figure_draw(f, img, &L, NULL, &e), DG_OK);
    const uint32_t veiled = dg_image_get(img, (int)px, (int)py);
    print_message("obstacle pixel 0x%06x, bare 0x%06x\n", (unsigned)veiled, (unsigned)bare);
    assert_true(channel_gap(veiled, 0x606068) < channel_gap(bare, 0x606068) / 2);
    int red = 0;  /* dashes: red pixels somewhere on the rim */
    for (int k = 0; k < 64; k++) {
        dg_hji_figure_pixel(f, cos(k * 0.0982), sin(k * 0.0982), &px, &py);
        red += near(img, px, py, 0xff3030, 1) < 40;
    }
    assert_true(red > 8 && red < 64);  /* dashed: some, not all */
    free(obst);
    free(target);
    /* the image must be the figure's size */
    dg_image *small = dg_image_create(10, 10, 0);
    assert_int_equal(dg_hji_figure_draw(f, small, &L, NULL, &e), DG_ERR_ARG);
    dg_image_free(small);
    dg_image_free(img);
    dg_hji_figure_free(f);
    dg_hji_figure_free(NULL);
    /* a 1-D grid has no slice */
    dg_hji_grid g1 = *g;
    g1.ndim = 1;
    assert_null(dg_hji_figure_create(&g1, "x", 0, 1, "V", &e));
    assert_int_equal(e.status, DG_ERR_ARG);
    dg_hji_problem_free(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slice_picture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
