/* RGB canvas: anti-aliased shapes, a 5x7 bitmap font and heat maps. */
#include "difgames/image.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------------------- types */

/* A clip box in pixel indices, inclusive. */
typedef struct box {
    int x0, y0, x1, y1;
} box;

/* ----------------------------------------------------- internal helpers */

/* Glyphs for ASCII 32..126: 8 rows of 5 bits each (bit 4 is the leftmost
 * column); rows 0-6 are the body, row 7 the descender of g, j, p, q, y, ',' and ';'. */
static const unsigned char FONT[95][8] = {
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, /* ' ' */
    {0x04, 0x04, 0x04, 0x04, 0x04, 0x00, 0x04, 0x00}, /* '!' */
    {0x0A, 0x0A, 0x0A, 0x00, 0x00, 0x00, 0x00, 0x00}, /* '"' */
    {0x0A, 0x0A, 0x1F, 0x0A, 0x1F, 0x0A, 0x0A, 0x00}, /* '#' */
    {0x04, 0x0F, 0x14, 0x0E, 0x05, 0x1E, 0x04, 0x00}, /* '$' */
    {0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03, 0x00}, /* '%' */
    {0x0C, 0x12, 0x14, 0x08, 0x15, 0x12, 0x0D, 0x00}, /* '&' */
    {0x04, 0x04, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00}, /* ''' */
    {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02, 0x00}, /* '(' */
    {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08, 0x00}, /* ')' */
    {0x00, 0x04, 0x15, 0x0E, 0x15, 0x04, 0x00, 0x00}, /* '*' */
    {0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00, 0x00}, /* '+' */
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x04, 0x08}, /* ',' */
    {0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00, 0x00}, /* '-' */
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C, 0x00}, /* '.' */
    {0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00, 0x00}, /* '/' */
    {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E, 0x00}, /* '0' */
    {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E, 0x00}, /* '1' */
    {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F, 0x00}, /* '2' */
    {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E, 0x00}, /* '3' */
    {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02, 0x00}, /* '4' */
    {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E, 0x00}, /* '5' */
    {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E, 0x00}, /* '6' */
    {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08, 0x00}, /* '7' */
    {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E, 0x00}, /* '8' */
    {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C, 0x00}, /* '9' */
    {0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00, 0x00}, /* ':' */
    {0x00, 0x0C, 0x0C, 0x00, 0x00, 0x0C, 0x04, 0x08}, /* ';' */
    {0x02, 0x04, 0x08, 0x10, 0x08, 0x04, 0x02, 0x00}, /* '<' */
    {0x00, 0x00, 0x1F, 0x00, 0x1F, 0x00, 0x00, 0x00}, /* '=' */
    {0x08, 0x04, 0x02, 0x01, 0x02, 0x04, 0x08, 0x00}, /* '>' */
    {0x0E, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04, 0x00}, /* '?' */
    {0x0E, 0x11, 0x01, 0x0D, 0x15, 0x15, 0x0E, 0x00}, /* '@' */
    {0x0E, 0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x00}, /* 'A' */
    {0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E, 0x00}, /* 'B' */
    {0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E, 0x00}, /* 'C' */
    {0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C, 0x00}, /* 'D' */
    {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F, 0x00}, /* 'E' */
    {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10, 0x00}, /* 'F' */
    {0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F, 0x00}, /* 'G' */
    {0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11, 0x00}, /* 'H' */
    {0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E, 0x00}, /* 'I' */
    {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C, 0x00}, /* 'J' */
    {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11, 0x00}, /* 'K' */
    {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F, 0x00}, /* 'L' */
    {0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11, 0x00}, /* 'M' */
    {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11, 0x00}, /* 'N' */
    {0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E, 0x00}, /* 'O' */
    {0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10, 0x00}, /* 'P' */
    {0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D, 0x00}, /* 'Q' */
    {0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11, 0x00}, /* 'R' */
    {0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E, 0x00}, /* 'S' */
    {0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x00}, /* 'T' */
    {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E, 0x00}, /* 'U' */
    {0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04, 0x00}, /* 'V' */
    {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A, 0x00}, /* 'W' */
    {0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11, 0x00}, /* 'X' */
    {0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04, 0x00}, /* 'Y' */
    {0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F, 0x00}, /* 'Z' */
    {0x0E, 0x08, 0x08, 0x08, 0x08, 0x08, 0x0E, 0x00}, /* '[' */
    {0x00, 0x10, 0x08, 0x04, 0x02, 0x01, 0x00, 0x00}, /* '\' */
    {0x0E, 0x02, 0x02, 0x02, 0x02, 0x02, 0x0E, 0x00}, /* ']' */
    {0x04, 0x0A, 0x11, 0x00, 0x00, 0x00, 0x00, 0x00}, /* '^' */
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1F, 0x00}, /* '_' */
    {0x08, 0x04, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00}, /* '`' */
    {0x00, 0x00, 0x0E, 0x01, 0x0F, 0x11, 0x0F, 0x00}, /* 'a' */
    {0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x1E, 0x00}, /* 'b' */
    {0x00, 0x00, 0x0E, 0x10, 0x10, 0x11, 0x0E, 0x00}, /* 'c' */
    {0x01, 0x01, 0x0D, 0x13, 0x11, 0x11, 0x0F, 0x00}, /* 'd' */
    {0x00, 0x00, 0x0E, 0x11, 0x1F, 0x10, 0x0E, 0x00}, /* 'e' */
    {0x06, 0x09, 0x08, 0x1C, 0x08, 0x08, 0x08, 0x00}, /* 'f' */
    {0x00, 0x00, 0x0F, 0x11, 0x11, 0x0F, 0x01, 0x0E}, /* 'g' */
    {0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x11, 0x00}, /* 'h' */
    {0x04, 0x00, 0x0C, 0x04, 0x04, 0x04, 0x0E, 0x00}, /* 'i' */
    {0x02, 0x00, 0x06, 0x02, 0x02, 0x02, 0x12, 0x0C}, /* 'j' */
    {0x10, 0x10, 0x12, 0x14, 0x18, 0x14, 0x12, 0x00}, /* 'k' */
    {0x0C, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E, 0x00}, /* 'l' */
    {0x00, 0x00, 0x1A, 0x15, 0x15, 0x11, 0x11, 0x00}, /* 'm' */
    {0x00, 0x00, 0x16, 0x19, 0x11, 0x11, 0x11, 0x00}, /* 'n' */
    {0x00, 0x00, 0x0E, 0x11, 0x11, 0x11, 0x0E, 0x00}, /* 'o' */
    {0x00, 0x00, 0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10}, /* 'p' */
    {0x00, 0x00, 0x0F, 0x11, 0x11, 0x0F, 0x01, 0x01}, /* 'q' */
    {0x00, 0x00, 0x16, 0x19, 0x10, 0x10, 0x10, 0x00}, /* 'r' */
    {0x00, 0x00, 0x0E, 0x10, 0x0E, 0x01, 0x1E, 0x00}, /* 's' */
    {0x08, 0x08, 0x1C, 0x08, 0x08, 0x09, 0x06, 0x00}, /* 't' */
    {0x00, 0x00, 0x11, 0x11, 0x11, 0x13, 0x0D, 0x00}, /* 'u' */
    {0x00, 0x00, 0x11, 0x11, 0x11, 0x0A, 0x04, 0x00}, /* 'v' */
    {0x00, 0x00, 0x11, 0x11, 0x15, 0x15, 0x0A, 0x00}, /* 'w' */
    {0x00, 0x00, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x00}, /* 'x' */
    {0x00, 0x00, 0x11, 0x11, 0x11, 0x0F, 0x01, 0x0E}, /* 'y' */
    {0x00, 0x00, 0x1F, 0x02, 0x04, 0x08, 0x1F, 0x00}, /* 'z' */
    {0x02, 0x04, 0x04, 0x08, 0x04, 0x04, 0x02, 0x00}, /* '{' */
    {0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x00}, /* '|' */
    {0x08, 0x04, 0x04, 0x02, 0x04, 0x04, 0x08, 0x00}, /* '}' */
    {0x00, 0x00, 0x08, 0x15, 0x02, 0x00, 0x00, 0x00}, /* '~' */
};
_Static_assert(sizeof FONT / sizeof FONT[0] == 126 - 32 + 1, "FONT covers ASCII 32..126");

/* viridis sampled at t = 0, 0.1, ..., 1 (matplotlib's colormap). */
static const uint32_t VIRIDIS[11] = {
    0x440154, 0x482475, 0x414487, 0x355f8d, 0x2a788e, 0x21918c,
    0x22a884, 0x44bf70, 0x7ad151, 0xbddf26, 0xfde725,
};

#define NAN_GREY 0x808080u

static int img_ok(const dg_image *img) {
    return img && img->rgb && img->w > 0 && img->h > 0;
}

static int finite4(float a, float b, float c, float d) {
    return isfinite(a) && isfinite(b) && isfinite(c) && isfinite(d);
}

/* Clamps a real coordinate range [lo, hi] to pixel indices [0, n-1];
 * returns 0 when nothing is left. Works in double so no cast overflows. */
static int clip_range(double lo, double hi, int n, int *i0, int *i1) {
    if (!(lo <= hi)) return 0;
    if (hi < 0.0 || lo > (double)(n - 1)) return 0;
    if (lo < 0.0) lo = 0.0;
    if (hi > (double)(n - 1)) hi = (double)(n - 1);
    *i0 = (int)ceil(lo);
    *i1 = (int)floor(hi);
    return *i0 <= *i1;
}

/* Mixes rgb into pixel p with weight a in [0, 1]. */
static void blend(unsigned char *p, uint32_t rgb, float a) {
    if (a >= 1.0f) {
        p[0] = (unsigned char)(rgb >> 16);
        p[1] = (unsigned char)(rgb >> 8);
        p[2] = (unsigned char)rgb;
        return;
    }
    if (!(a > 0.0f)) return;
    float src[3] = {(float)((rgb >> 16) & 0xff), (float)((rgb >> 8) & 0xff), (float)(rgb & 0xff)};
    for (int c = 0; c < 3; c++) {
        float v = (float)p[c] + ((src[c] - (float)p[c]) * a);
        p[c] = (unsigned char)(v + 0.5f);
    }
}

static unsigned char *px(dg_image *img, int x, int y) {
    return img->rgb + ((size_t)y * (size_t)img->w + (size_t)x) * 3;
}

static int clamp_int(long long v) {
    return v > INT_MAX ? INT_MAX : v < INT_MIN ? INT_MIN : (int)v;
}

static float clamp01(float v) {
    return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
}

/* Distance from (x, y) to the segment a-b (len2 = |b - a|^2). */
static double seg_dist(double x, double y, double ax, double ay, double dx, double dy, double len2) {
    double t = len2 > 0.0 ? ((x - ax) * dx + (y - ay) * dy) / len2 : 0.0;
    if (t < 0.0) t = 0.0;
    if (t > 1.0) t = 1.0;
    double ex = x - (ax + t * dx), ey = y - (ay + t * dy);
    return sqrt(ex * ex + ey * ey);
}

/* Liang-Barsky: clips the segment to [xmin,xmax] x [ymin,ymax] in place;
 * returns 0 when it misses the box entirely. */
static int clip_segment(double *x0, double *y0, double *x1, double *y1,
                        double xmin, double ymin, double xmax, double ymax) {
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

/* Draws one glyph row by row, rotated when up != 0 (see dg_image_text_up). */
static void draw_glyph(dg_image *img, int ox, int oy, int up, int tw, int gx0, unsigned char ch,
                       uint32_t rgb, int scale) {
    if (ch < 32 || ch > 126) ch = '?';
    const unsigned char *g = FONT[ch - 32];
    for (int row = 0; row < DG_FONT_HEIGHT; row++) {
        for (int col = 0; col < 5; col++) {
            if (!(g[row] & (0x10 >> col))) continue;
            /* one font pixel becomes a scale x scale block */
            int tx = (gx0 + col) * scale, ty = row * scale;
            int bx, by, bw, bh;
            if (!up) { bx = ox + tx; by = oy + ty; bw = scale; bh = scale; }
            else     { bx = ox + ty; by = oy + tw - tx - scale; bw = scale; bh = scale; }
            dg_image_rect_fill(img, bx, by, bw, bh, rgb, 1.0f);
        }
    }
}

static int text_draw(dg_image *img, int x, int y, const char *s, uint32_t rgb, int scale, int up) {
    if (!s) return 0;
    if (scale < 1) scale = 1;
    int tw = dg_image_text_width(s, scale);
    if (!img_ok(img)) return tw;
    int col = 0, line = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '\n') { col = 0; line++; continue; }
        int lx = up ? x + line * DG_FONT_LINE * scale : x;
        int ly = up ? y : y + line * DG_FONT_LINE * scale;
        if (*p != ' ') draw_glyph(img, lx, ly, up, tw, col * DG_FONT_ADVANCE, *p, rgb, scale);
        col++;
    }
    return tw;
}

/* Reads values at a real grid position with bilinear weights; falls back to
 * the nearest sample when a neighbour is not finite. */
static float sample_bilinear(const float *v, int vw, int vh, double gx, double gy) {
    if (gx < 0.0) gx = 0.0;
    if (gy < 0.0) gy = 0.0;
    if (gx > vw - 1) gx = vw - 1;
    if (gy > vh - 1) gy = vh - 1;
    int ix = (int)gx, iy = (int)gy;
    int jx = ix + 1 < vw ? ix + 1 : ix, jy = iy + 1 < vh ? iy + 1 : iy;
    float fx = (float)(gx - ix), fy = (float)(gy - iy);
    float a = v[(size_t)iy * vw + ix], b = v[(size_t)iy * vw + jx];
    float c = v[(size_t)jy * vw + ix], d = v[(size_t)jy * vw + jx];
    float r = (a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + d * fx) * fy;
    if (isfinite(r)) return r;
    int nx = fx < 0.5f ? ix : jx, ny = fy < 0.5f ? iy : jy;
    return v[(size_t)ny * vw + nx];
}

/* ------------------------------------------------------ public functions */

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

/* Mixes rgb into pixel (x, y): alpha 1 replaces it, 0 (or NaN) leaves it;
 * outside the canvas nothing happens. */
void dg_image_pixel_blend(dg_image *img, int x, int y, uint32_t rgb, float alpha) {
    if (!img_ok(img) || x < 0 || y < 0 || x >= img->w || y >= img->h) return;
    if (!(alpha > 0.0f)) return;
    blend(px(img, x, y), rgb, alpha > 1.0f ? 1.0f : alpha);
}

/* Draws an anti-aliased segment of the given width (pixels; below 1 it is
 * drawn 1 wide and fainter) with round caps. */
void dg_image_line(dg_image *img, float x0, float y0, float x1, float y1, uint32_t rgb, float width) {
    if (!img_ok(img) || !finite4(x0, y0, x1, y1) || !isfinite(width) || !(width > 0.0f)) return;
    float fade = width < 1.0f ? width : 1.0f;
    double hw = (width < 1.0f ? 1.0 : (double)width) * 0.5;
    double reach = hw + 1.0;  /* beyond it coverage is zero */
    double ax = x0, ay = y0, bx = x1, by = y1;
    /* Clip to the canvas first: keeps huge coordinates precise and loops short. */
    if (!clip_segment(&ax, &ay, &bx, &by, -reach, -reach, img->w - 1 + reach, img->h - 1 + reach))
        return;
    double dx = bx - ax, dy = by - ay, len2 = dx * dx + dy * dy;
    int r0, r1;
    if (!clip_range(fmin(ay, by) - reach, fmax(ay, by) + reach, img->h, &r0, &r1)) return;
    for (int y = r0; y <= r1; y++) {
        /* x-extent of the segment within the rows [y - reach, y + reach] */
        double ta = 0.0, tb = 1.0;
        if (dy != 0.0) {
            double t0 = (y - reach - ay) / dy, t1 = (y + reach - ay) / dy;
            if (t0 > t1) { double t = t0; t0 = t1; t1 = t; }
            ta = fmax(ta, t0);
            tb = fmin(tb, t1);
            if (ta > tb) continue;
        }
        double xa = ax + ta * dx, xb = ax + tb * dx;
        int c0, c1;
        if (!clip_range(fmin(xa, xb) - reach, fmax(xa, xb) + reach, img->w, &c0, &c1)) continue;
        for (int x = c0; x <= c1; x++) {
            double d = seg_dist(x, y, ax, ay, dx, dy, len2);
            float cov = clamp01((float)(hw + 0.5 - d)) * fade;
            if (cov > 0.0f) blend(px(img, x, y), rgb, cov);
        }
    }
}

/* Paints the pixels within reach of (cx, cy) with coverage clamp01(hw + 0.5 - d) times scale,
 * d the distance to the centre (ring < 0) or to the circle of radius ring. */
static void round_paint(dg_image *img, float cx, float cy, double reach, double ring, double hw, float scale,
                        uint32_t rgb) {
    int x0, x1, y0, y1;
    if (!clip_range(cx - reach, cx + reach, img->w, &x0, &x1)) return;
    if (!clip_range(cy - reach, cy + reach, img->h, &y0, &y1)) return;
    for (int y = y0; y <= y1; y++) {
        double ey = y - (double)cy;
        for (int x = x0; x <= x1; x++) {
            double ex = x - (double)cx;
            double d = sqrt(ex * ex + ey * ey);
            if (ring >= 0.0) d = fabs(d - ring);
            float cov = clamp01((float)(hw + 0.5 - d));
            if (cov > 0.0f) blend(px(img, x, y), rgb, cov * scale);
        }
    }
}

/* Fills an anti-aliased disc of radius r (pixels) centred on (cx, cy),
 * mixed in with opacity alpha. */
void dg_image_circle_fill(dg_image *img, float cx, float cy, float r, uint32_t rgb, float alpha) {
    if (!img_ok(img) || !finite4(cx, cy, r, alpha) || !(r > 0.0f) || !(alpha > 0.0f)) return;
    if (alpha > 1.0f) alpha = 1.0f;
    round_paint(img, cx, cy, (double)r + 1.0, -1.0, (double)r, alpha, rgb);
}

/* Draws an anti-aliased circle of radius r with a stroke of the given width
 * centred on the circle. */
void dg_image_circle_outline(dg_image *img, float cx, float cy, float r, uint32_t rgb, float width) {
    if (!img_ok(img) || !finite4(cx, cy, r, width) || !(r >= 0.0f) || !(width > 0.0f)) return;
    float fade = width < 1.0f ? width : 1.0f;
    double hw = (width < 1.0f ? 1.0 : (double)width) * 0.5;
    round_paint(img, cx, cy, (double)r + hw + 1.0, (double)r, hw, fade, rgb);
}

/* Fills the pixels [x, x+w) x [y, y+h), clipped, mixed in with opacity alpha. */
void dg_image_rect_fill(dg_image *img, int x, int y, int w, int h, uint32_t rgb, float alpha) {
    if (!img_ok(img) || w <= 0 || h <= 0 || !(alpha > 0.0f)) return;
    if (alpha > 1.0f) alpha = 1.0f;
    /* 64-bit ends so x + w cannot overflow */
    long long xa = x, ya = y, xb = (long long)x + w, yb = (long long)y + h;
    if (xa < 0) xa = 0;
    if (ya < 0) ya = 0;
    if (xb > img->w) xb = img->w;
    if (yb > img->h) yb = img->h;
    for (long long j = ya; j < yb; j++)
        for (long long i = xa; i < xb; i++) blend(px(img, (int)i, (int)j), rgb, alpha);
}

/* Draws the 1-pixel border of the box [x, x+w) x [y, y+h). */
void dg_image_rect_outline(dg_image *img, int x, int y, int w, int h, uint32_t rgb) {
    if (w <= 0 || h <= 0) return;
    int right = clamp_int((long long)x + w - 1), bottom = clamp_int((long long)y + h - 1);
    dg_image_rect_fill(img, x, y, w, 1, rgb, 1.0f);
    dg_image_rect_fill(img, x, bottom, w, 1, rgb, 1.0f);
    dg_image_rect_fill(img, x, y, 1, h, rgb, 1.0f);
    dg_image_rect_fill(img, right, y, 1, h, rgb, 1.0f);
}

/* Returns how many pixels wide s is at the given scale (its longest line;
 * each character advances DG_FONT_ADVANCE * scale, the last one's gap is not
 * counted). NULL is 0 wide. */
int dg_image_text_width(const char *s, int scale) {
    if (!s) return 0;
    if (scale < 1) scale = 1;
    long long best = 0, cur = 0;
    for (const char *p = s;; p++) {
        if (*p == '\n' || *p == 0) {
            if (cur > best) best = cur;
            cur = 0;
            if (!*p) break;
        } else {
            cur++;
        }
    }
    long long px_w = best > 0 ? (best * DG_FONT_ADVANCE - 1) * scale : 0;
    return px_w > 1000000000LL ? 1000000000 : (int)px_w;
}

/* Draws s with the built-in 5x7 font, its cell's top-left at (x, y), each font
 * pixel a scale x scale block; '\n' starts a new line, characters outside
 * ASCII 32..126 show as '?'. Returns the width in pixels (as dg_image_text_width). */
int dg_image_text(dg_image *img, int x, int y, const char *s, uint32_t rgb, int scale) {
    return text_draw(img, x, y, s, rgb, scale, 0);
}

/* Draws s rotated a quarter turn anticlockwise, reading from bottom to top
 * (a y-axis label): its bounding box has top-left (x, y), is
 * DG_FONT_HEIGHT * scale wide and dg_image_text_width(s, scale) tall, which is
 * what it returns. */
int dg_image_text_up(dg_image *img, int x, int y, const char *s, uint32_t rgb, int scale) {
    return text_draw(img, x, y, s, rgb, scale, 1);
}

/* Maps t in [0, 1] (clamped) to a colour of the viridis colormap (dark
 * purple -> blue -> green -> yellow); NaN gives mid grey. */
uint32_t dg_colormap_viridis(float t) {
    if (isnan(t)) return NAN_GREY;
    t = clamp01(t) * 10.0f;
    int i = (int)t;
    if (i >= 10) return VIRIDIS[10];
    float f = t - (float)i;
    uint32_t a = VIRIDIS[i], b = VIRIDIS[i + 1], out = 0;
    for (int sh = 16; sh >= 0; sh -= 8) {
        float ca = (float)((a >> sh) & 0xff), cb = (float)((b >> sh) & 0xff);
        out |= (uint32_t)(ca + (cb - ca) * f + 0.5f) << sh;
    }
    return out;
}

/* Paints values (vh rows of vw, row 0 at the top) over the box
 * [x, x+w) x [y, y+h), bilinearly resampled and coloured with viridis from
 * vmin (dark) to vmax (yellow). When vmin >= vmax (or either is not finite)
 * the finite range of values is used. Non-finite values show grey. The
 * caller keeps ownership of values. */
void dg_image_heat_rect(dg_image *img, int x, int y, int w, int h,
                        const float *values, int vw, int vh, float vmin, float vmax) {
    if (!img_ok(img) || !values || vw < 1 || vh < 1 || w < 1 || h < 1) return;
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
    double span = (double)vmax - (double)vmin;
    int r0, r1, c0, c1;
    if (!clip_range(y, (double)y + h - 1, img->h, &r0, &r1)) return;
    if (!clip_range(x, (double)x + w - 1, img->w, &c0, &c1)) return;
    for (int j = r0; j <= r1; j++) {
        /* centre of canvas pixel j in grid coordinates (sample centres at integers) */
        double gy = ((j - y) + 0.5) * vh / h - 0.5;
        for (int i = c0; i <= c1; i++) {
            double gx = ((i - x) + 0.5) * vw / w - 0.5;
            float v = sample_bilinear(values, vw, vh, gx, gy);
            uint32_t c;
            if (!isfinite(v)) c = NAN_GREY;
            else c = dg_colormap_viridis(span > 0.0 ? (float)((v - (double)vmin) / span) : 0.5f);
            blend(px(img, i, j), c, 1.0f);
        }
    }
}

/* dg_image_heat_rect over the whole canvas. */
void dg_image_heat(dg_image *img, const float *values, int vw, int vh, float vmin, float vmax) {
    if (!img_ok(img)) return;
    dg_image_heat_rect(img, 0, 0, img->w, img->h, values, vw, vh, vmin, vmax);
}
