/* The RGB canvas: made, cleared, read and freed (drawing on it: gfx/draw.c). */
#include "difgames/image.h"

#include <stdlib.h>
#include <string.h>

static int img_ok(const dg_image *img) {
    return img && img->rgb && img->w > 0 && img->h > 0;
}

/* Makes a w x h canvas filled with bg_rgb. Returns NULL when a side is not in
 * 1..DG_IMAGE_MAX_SIDE or memory runs out; the caller owns the image and frees
 * it with dg_image_free. */
dg_image *dg_image_create(int w, int h, uint32_t bg_rgb) {
    if (w < 1 || h < 1 || w > DG_IMAGE_MAX_SIDE || h > DG_IMAGE_MAX_SIDE) return NULL;
    dg_image *img = malloc(sizeof *img);
    if (!img) return NULL;
    img->w = w;
    img->h = h;
    img->rgb = malloc((size_t)w * (size_t)h * 3);
    if (!img->rgb) { free(img); return NULL; }
    dg_image_clear(img, bg_rgb);
    return img;
}

/* Frees an image made by dg_image_create and its pixels; NULL is harmless. */
void dg_image_free(dg_image *img) {
    if (!img) return;
    free(img->rgb);
    free(img);
}

/* Sets every pixel to rgb. */
void dg_image_clear(dg_image *img, uint32_t rgb) {
    if (!img_ok(img)) return;
    unsigned char c[3] = {(unsigned char)(rgb >> 16), (unsigned char)(rgb >> 8), (unsigned char)rgb};
    size_t n = (size_t)img->w * (size_t)img->h;
    if (c[0] == c[1] && c[1] == c[2]) { memset(img->rgb, c[0], n * 3); return; }
    for (size_t i = 0; i < n; i++) memcpy(img->rgb + i * 3, c, 3);
}

/* Returns pixel (x, y) as 0xRRGGBB, or 0 when it lies outside the canvas. */
uint32_t dg_image_get(const dg_image *img, int x, int y) {
    if (!img_ok(img) || x < 0 || y < 0 || x >= img->w || y >= img->h) return 0;
    const unsigned char *p = img->rgb + ((size_t)y * (size_t)img->w + (size_t)x) * 3;
    return ((uint32_t)p[0] << 16) | ((uint32_t)p[1] << 8) | p[2];
}
