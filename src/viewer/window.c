/* The viewer's window: SDL2 shows the frames the library draws. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <time.h>

#include "cli/cli.h"
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
        cli_error(cmd, "out of memory for a %dx%d window", width, height);
        return EXIT_FAIL;
    }
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        cli_error(cmd, "cannot open a window: %s (no display? run it under xvfb-run)", SDL_GetError());
        return EXIT_FAIL;
    }
    w->win = SDL_CreateWindow(title, SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, width, height, 0);
    if (w->win) w->ren = SDL_CreateRenderer(w->win, -1, 0);
    if (w->win && !w->ren) w->ren = SDL_CreateRenderer(w->win, -1, SDL_RENDERER_SOFTWARE);
    if (w->ren) w->tex = SDL_CreateTexture(w->ren, SDL_PIXELFORMAT_RGB24, SDL_TEXTUREACCESS_STREAMING, width, height);
    if (!w->tex) {
        cli_error(cmd, "cannot open a window: %s", SDL_GetError());
        return EXIT_FAIL;
    }
    dg_err e = {0};
    if (record && !(w->gif = dg_gif_begin(record, width, height, 2, &e))) {
        cli_error(cmd, "--record: %s", e.msg);
        return EXIT_USAGE;
    }
    w->wall0 = w->next = vw_now();
    return 0;
}

int vw_show(vw_window *w, double render_ms, double cpu_ms) {
    SDL_UpdateTexture(w->tex, NULL, w->img->rgb, w->img->w * 3);
    SDL_RenderClear(w->ren);
    SDL_RenderCopy(w->ren, w->tex, NULL, NULL);
    SDL_RenderPresent(w->ren);
    dg_err e = {0};
    if (w->gif && dg_gif_add_frame(w->gif, w->img, &e) != DG_OK) return cli_fail(w->cmd, &e, 0);
    w->frames++;
    w->render_ms_sum += render_ms;
    w->cpu_ms_sum += cpu_ms;
    if (render_ms > w->render_ms_max) w->render_ms_max = render_ms;
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
    if (dg_png_write(w->img, path, &e) != DG_OK) fprintf(stderr, "difgames %s: %s\n", w->cmd, e.msg);
    else fprintf(stderr, "wrote %s\n", path);
}

int vw_finish(vw_window *w, const char *screenshot) {
    dg_err e = {0};
    if (screenshot && dg_png_write(w->img, screenshot, &e) != DG_OK) {
        cli_error(w->cmd, "--screenshot: %s", e.msg);
        return EXIT_USAGE;
    }
    if (w->gif) {
        dg_gif *g = w->gif;
        w->gif = NULL;
        if (dg_gif_end(g, &e) != DG_OK) return cli_fail(w->cmd, &e, 0);
    }
    return 0;
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
