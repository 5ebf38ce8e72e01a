/* A window that shows dg_image frames (SDL2), paced at 60 a second, with the frame files every
 * viewer command writes: --screenshot (the last frame, PNG) and --record (every frame, GIF). */
#ifndef DG_VIEWER_WINDOW_H
#define DG_VIEWER_WINDOW_H

#include <SDL.h>

#include "difgames/image.h"

#define VW_FPS 60

typedef struct vw_window {
    const char   *cmd;                /* for messages                                       */
    SDL_Window   *win;
    SDL_Renderer *ren;
    SDL_Texture  *tex;
    dg_image     *img;                /* the frame to show, the window's size               */
    dg_gif       *gif;                /* --record                                           */
    int           bench;              /* 1: no pacing                                       */
    int           shots;              /* screenshots taken by the key                       */
    double        next, wall0;        /* pacing: when the next frame is due; the first frame */
    int64_t       frames;
    double        render_ms_sum, render_ms_max;
    double        cpu_ms_sum;         /* the drawing's CPU time (this thread's): what load does not inflate */
} vw_window;

double vw_now(void);                                          /* seconds, monotonic */
double vw_cpu(void);                                          /* this thread's CPU seconds */
/* Opens a w x h window titled title (and the GIF of record, may be NULL); 0, or the exit status
 * after one error line (no display: EXIT_FAIL; the GIF: EXIT_USAGE). */
int  vw_open(vw_window *w, const char *cmd, const char *title, int width, int height, const char *record, int bench);
/* Shows w->img, adds it to the GIF, counts the frame (render_ms, cpu_ms: the wall and CPU time drawing
 * it took) and waits for the next 60th of a second unless benching; 0 or the exit status after an
 * error line. */
int  vw_show(vw_window *w, double render_ms, double cpu_ms);
/* The screenshot key: screenshot-NNN.png in the current folder, a line on stderr. */
void vw_screenshot_key(vw_window *w);
/* Writes --screenshot (may be NULL) and ends the GIF; 0 or the exit status after an error line. */
int  vw_finish(vw_window *w, const char *screenshot);
/* Frames a second since the first frame. */
double vw_fps(const vw_window *w);
void vw_close(vw_window *w);                                  /* a zeroed window is harmless */

#endif
