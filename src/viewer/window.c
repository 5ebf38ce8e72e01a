/* The viewer's window: SDL2 shows the frames the library draws. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "difgames/base.h"
#include "difgames/fileio.h"
#include "viewer/window.h"

double vw_now(void) { return (double)SDL_GetPerformanceCounter() / (double)SDL_GetPerformanceFrequency(); }

double vw_cpu(void) {
    struct timespec ts;
    return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0 ? (double)ts.tv_sec + ts.tv_nsec * 1e-9 : 0;
}

int vw_open(vw_window *w, const char *cmd, const char *title, int width, int height, const char *record, int bench) {
    w->cmd = cmd;
    w->bench = bench;
    if (!(w->img = dg_image_create(width, height, 0))) {
        vw_error(cmd, "out of memory for a %dx%d window", width, height);
        return DG_EXIT_FAIL;
    }
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        vw_error(cmd, "cannot open a window: %s (no display? run it under xvfb-run)", SDL_GetError());
        return DG_EXIT_FAIL;
    }
    w->win = SDL_CreateWindow(title, SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, width, height, 0);
    if (w->win) w->ren = SDL_CreateRenderer(w->win, -1, 0);
    if (w->win && !w->ren) w->ren = SDL_CreateRenderer(w->win, -1, SDL_RENDERER_SOFTWARE);
    if (w->ren) w->tex = SDL_CreateTexture(w->ren, SDL_PIXELFORMAT_RGB24, SDL_TEXTUREACCESS_STREAMING, width, height);
    if (!w->tex) {
        vw_error(cmd, "cannot open a window: %s", SDL_GetError());
        return DG_EXIT_FAIL;
    }
    dg_err e = {0};
    if (record && !(w->gif = dg_gif_begin(record, width, height, 2, &e))) {
        vw_error(cmd, "--record: %s", e.msg);
        return DG_EXIT_USAGE;
    }
    w->wall0 = w->next = vw_now();
    return 0;
}

void vw_frame_begin(vw_window *w) { w->frame_t0 = vw_now(); }

int vw_show(vw_window *w, int drawn, double render_ms, double cpu_ms) {
    if (drawn || w->frames == 0) {  /* an unchanged frame stays on the screen as it is */
        SDL_UpdateTexture(w->tex, NULL, w->img->rgb, w->img->w * 3);
        SDL_RenderClear(w->ren);
        SDL_RenderCopy(w->ren, w->tex, NULL, NULL);
        SDL_RenderPresent(w->ren);
    }
    dg_err e = {0};
    if (w->gif && dg_gif_add_frame(w->gif, w->img, &e) != DG_OK) return vw_fail(w->cmd, &e, 0);
    if (drawn) {
        w->drawn++;
        w->render_ms_sum += render_ms;
        w->cpu_ms_sum += cpu_ms;
        if (w->frames > 0 && render_ms > w->render_ms_max) w->render_ms_max = render_ms;
    }
    const double work = (vw_now() - (w->frame_t0 > 0 ? w->frame_t0 : vw_now())) * 1e3;
    w->frame_ms_sum += work;
    if (w->frames > 0 && work > w->frame_ms_max) w->frame_ms_max = work;
    w->frames++;
    if (!w->bench) {  /* 60 frames a second */
        w->next += 1.0 / VW_FPS;
        const double wait = w->next - vw_now();
        if (wait > 0) SDL_Delay((Uint32)(wait * 1e3));
        else if (wait < -0.25) w->next = vw_now();  /* far behind: no burst to catch up */
    }
    return 0;
}

void vw_screenshot_key(vw_window *w) {
    char path[64];
    dg_err e = {0};
    snprintf(path, sizeof path, "screenshot-%03d.png", ++w->shots);
    if (dg_png_write(w->img, path, &e) != DG_OK) vw_error(w->cmd, "%s", e.msg);
    else fprintf(stderr, "wrote %s\n", path);
}

int vw_finish(vw_window *w, const char *screenshot) {
    dg_err e = {0};
    if (screenshot && dg_png_write(w->img, screenshot, &e) != DG_OK) {
        vw_error(w->cmd, "--screenshot: %s", e.msg);
        return DG_EXIT_USAGE;
    }
    if (w->gif) {
        dg_gif *g = w->gif;
        w->gif = NULL;
        if (dg_gif_end(g, &e) != DG_OK) return vw_fail(w->cmd, &e, 0);
    }
    return 0;
}

void vw_json_speed(const vw_window *w, dg_json *j, cJSON *root) {
    const double nd = w->drawn ? (double)w->drawn : 1, nf = w->frames ? (double)w->frames : 1;
    dg_json_add(j, root, "fps", dg_json_number("%.1f", vw_fps(w)));
    dg_json_add(j, root, "frames_drawn", dg_json_number("%.0f", (double)w->drawn));
    dg_json_add(j, root, "render_ms", dg_json_number("%.3f", w->render_ms_sum / nd));
    dg_json_add(j, root, "render_ms_max", dg_json_number("%.3f", w->render_ms_max));
    dg_json_add(j, root, "render_cpu_ms", dg_json_number("%.3f", w->cpu_ms_sum / nd));
    dg_json_add(j, root, "frame_ms", dg_json_number("%.3f", w->frame_ms_sum / nf));
    dg_json_add(j, root, "frame_ms_max", dg_json_number("%.3f", w->frame_ms_max));
}

double vw_fps(const vw_window *w) {
    const double wall = vw_now() - w->wall0;
    return wall > 0 ? (double)w->frames / wall : 0;
}

void vw_close(vw_window *w) {
    if (w->gif) dg_gif_abort(w->gif);
    if (w->tex) SDL_DestroyTexture(w->tex);
    if (w->ren) SDL_DestroyRenderer(w->ren);
    if (w->win) SDL_DestroyWindow(w->win);
    if (w->cmd) SDL_Quit();
    dg_image_free(w->img);
    *w = (vw_window){0};
}

/* ------------------------------------------------------------------ --input scripts */

static const char *const MOUSE_WORDS[] = {NULL, "click", "press", "move", "release"};

int vw_script_read(vw_script *s, const char *cmd, const char *path, const vw_key_name *keys, int nkeys) {
    unsigned char *text = NULL;
    size_t len = 0;
    dg_err e = {0};
    *s = (vw_script){.keys = keys, .nkeys = nkeys};
    if (dg_file_read_max(path, (size_t)64 << 20, &text, &len, &e) != DG_OK) {
        vw_error(cmd, "--input: %s", e.msg);
        return DG_EXIT_USAGE;
    }
    int lines = 1;
    for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
    s->press = calloc((size_t)lines, sizeof *s->press);
    s->mouse = calloc((size_t)lines, 1);
    s->xy = calloc((size_t)lines * 2, sizeof(float));
    if (!s->press || !s->mouse || !s->xy) {
        free(text);
        vw_error(cmd, "out of memory for --input %s", path);
        return DG_EXIT_FAIL;
    }
    int line = 0, rc = 0;
    for (size_t i = 0; i <= len && !rc; line++) {
        size_t end = i;
        while (end < len && text[end] != '\n') end++;
        if (end == len && i == len && line > 0) break;  /* the newline of the last line */
        char buf[256];
        if (end - i >= sizeof buf) {
            vw_error(cmd, "--input %s:%d: a line of %zu bytes (at most %zu)", path, line + 1, end - i, sizeof buf - 1);
            rc = DG_EXIT_USAGE;
            break;
        }
        snprintf(buf, sizeof buf, "%.*s", (int)(end - i), (const char *)text + i);
        char *save = NULL;
        for (char *tok = strtok_r(buf, " \t\r", &save); tok && !rc; tok = strtok_r(NULL, " \t\r", &save)) {
            int k = 0;
            while (k < nkeys && strcmp(tok, keys[k].name)) k++;
            if (k < nkeys) {
                s->press[line] |= 1u << k;
                continue;
            }
            int m = VW_MOUSE_CLICK;
            while (m <= VW_MOUSE_RELEASE && strcmp(tok, MOUSE_WORDS[m])) m++;
            const char *xs = m < VW_MOUSE_RELEASE ? strtok_r(NULL, " \t\r", &save) : NULL;
            const char *ys = xs ? strtok_r(NULL, " \t\r", &save) : NULL;
            double x = 0, y = 0;
            if (m > VW_MOUSE_RELEASE || s->mouse[line] ||
                (m < VW_MOUSE_RELEASE && (!ys || !dg_parse_double(xs, (size_t)-1, &x) ||
                                          !dg_parse_double(ys, (size_t)-1, &y) || fabs(x) > 1e6 || fabs(y) > 1e6))) {
                char names[256] = "";
                for (int q = 0; q < nkeys; q++)
                    snprintf(names + strlen(names), sizeof names - strlen(names), "%s, ", keys[q].name);
                vw_error(cmd, "--input %s:%d: '%.20s' is no key (%s) nor one mouse action (click X Y, press X Y, "
                          "move X Y, release)", path, line + 1, tok, names);
                rc = DG_EXIT_USAGE;
                break;
            }
            s->mouse[line] = (unsigned char)m;
            s->xy[2 * line] = (float)x;
            s->xy[2 * line + 1] = (float)y;
        }
        i = end + 1;
    }
    s->n = line;
    free(text);
    return rc;
}

void vw_script_push(vw_script *s, int64_t f, void (*to_px)(void *user, float x, float y, int *px, int *py),
                    void *user) {
    if (!s->press || f < 0 || f >= s->n) return;
    for (int k = 0; k < s->nkeys; k++)
        if ((s->press[f] >> k) & 1u) {
            SDL_Event ev = {0};
            ev.type = SDL_KEYDOWN;
            ev.key.keysym.sym = s->keys[k].key;
            SDL_PushEvent(&ev);
        }
    const int m = s->mouse[f];
    if (m == VW_MOUSE_NONE) return;
    if (m != VW_MOUSE_RELEASE) to_px(user, s->xy[2 * f], s->xy[2 * f + 1], &s->mx, &s->my);
    SDL_Event ev = {0};
    if (m == VW_MOUSE_MOVE) {
        ev.type = SDL_MOUSEMOTION;
        ev.motion.x = s->mx;
        ev.motion.y = s->my;
        ev.motion.state = s->down ? SDL_BUTTON_LMASK : 0;
        SDL_PushEvent(&ev);
        return;
    }
    ev.button.button = SDL_BUTTON_LEFT;
    ev.button.x = s->mx;
    ev.button.y = s->my;
    if (m == VW_MOUSE_CLICK || m == VW_MOUSE_PRESS) {
        ev.type = SDL_MOUSEBUTTONDOWN;
        ev.button.state = SDL_PRESSED;
        SDL_PushEvent(&ev);
        s->down = 1;
    }
    if (m == VW_MOUSE_CLICK || m == VW_MOUSE_RELEASE) {
        ev.type = SDL_MOUSEBUTTONUP;
        ev.button.state = SDL_RELEASED;
        SDL_PushEvent(&ev);
        s->down = 0;
    }
}

void vw_script_free(vw_script *s) {
    free(s->press);
    free(s->mouse);
    free(s->xy);
    *s = (vw_script){0};
}
