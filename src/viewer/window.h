/* A window that shows dg_image frames (SDL2), paced at 60 a second, with the frame files every
 * viewer command writes: --screenshot (the last frame, PNG) and --record (every frame, GIF). */
#ifndef DG_VIEWER_WINDOW_H
#define DG_VIEWER_WINDOW_H

#include <SDL.h>

#include "difgames/image.h"
#include "io/json.h"

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
    int64_t       frames, drawn;      /* frames shown; those drawn anew (the rest showed no change) */
    double        render_ms_sum, render_ms_max;   /* drawing a frame anew, wall ms (max: past the first) */
    double        cpu_ms_sum;         /* the drawing's CPU time (this thread's): what load does not inflate */
    double        frame_t0;           /* when the frame being made began (vw_frame_begin)           */
    double        frame_ms_sum, frame_ms_max;     /* a whole frame's work, wall ms: events, stepping,
                                                     drawing, showing; not the wait for the next 60th */
} vw_window;

/* --input scripts of view and hji view: one line a frame, the keys pressed at that frame (names of
 * the command's table) and at most one mouse action: "click X Y" (press and release), "press X Y"
 * (the left button down), "move X Y" (the mouse moved there, dragging while pressed), "release".
 * X, Y are the command's coordinates (view: the world; hji view: window pixels), turned into
 * pixels by the command when the frame's events are pushed. */
enum { VW_MOUSE_NONE, VW_MOUSE_CLICK, VW_MOUSE_PRESS, VW_MOUSE_MOVE, VW_MOUSE_RELEASE };
typedef struct vw_key_name {
    const char *name;
    SDL_Keycode key;
} vw_key_name;
typedef struct vw_script {
    int            n;            /* frames scripted                           */
    unsigned      *press;        /* (n) bit k: key k of the table pressed     */
    unsigned char *mouse;        /* (n) VW_MOUSE_*                            */
    float         *xy;           /* (n, 2) the mouse action's point           */
    const vw_key_name *keys;
    int            nkeys;
    int            down;         /* pushing: the button is held               */
    int            mx, my;       /* pushing: the mouse's last pixel           */
} vw_script;
/* Reads path (at most 64 MiB) with the key names keys[0 .. nkeys - 1] (at most 32); 0, or the
 * exit status after one line naming the file, the line and the word. */
int  vw_script_read(vw_script *s, const char *cmd, const char *path, const vw_key_name *keys, int nkeys);
/* Pushes frame f's events into SDL's queue as a person's would come (keys down, then the mouse);
 * to_px turns a point of the script into window pixels. Frames past the script push nothing. */
void vw_script_push(vw_script *s, int64_t f, void (*to_px)(void *user, float x, float y, int *px, int *py),
                    void *user);
void vw_script_free(vw_script *s);

#if defined(__GNUC__)
#define VW_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))  /* checks the arguments */
#else
#define VW_PRINTF(fmt, args)
#endif
/* The viewer's error line: "difgames <cmd>: <msg>" on stderr (its exit codes: DG_EXIT_*, status.h).
 * Defined by the command that builds the viewer (src/cli/view.c), as its own cli_error and
 * cli_fail: one error line for both, and the viewer includes no header of the command's. */
void vw_error(const char *cmd, const char *fmt, ...) VW_PRINTF(2, 3);
/* vw_error of e's message; returns rc, or when rc is 0 the exit code of e's status (dg_status_exit). */
int  vw_fail(const char *cmd, const dg_err *e, int rc);

double vw_now(void);                                          /* seconds, monotonic */
double vw_cpu(void);                                          /* this thread's CPU seconds */
/* Opens a w x h window titled title (and the GIF of record, may be NULL); 0, or the exit status
 * after one error line (no display: EXIT_FAIL; the GIF: EXIT_USAGE). */
int  vw_open(vw_window *w, const char *cmd, const char *title, int width, int height, const char *record, int bench);
/* Marks the start of a frame's work (what frame_ms measures). */
void vw_frame_begin(vw_window *w);
/* Shows w->img (drawn: it was drawn anew, render_ms and cpu_ms the wall and CPU time that took; 0:
 * it is the last frame unchanged, and the window keeps showing it), adds it to the GIF, counts the
 * frame and waits for the next 60th of a second unless benching; 0 or the exit status after an
 * error line. */
int  vw_show(vw_window *w, int drawn, double render_ms, double cpu_ms);
/* The speed of the frames shown into the command's JSON line: fps, frames_drawn, render_ms (mean
 * wall ms of drawing a frame anew), render_ms_max (past the first frame, which loads the fonts),
 * render_cpu_ms (its CPU time), frame_ms and frame_ms_max (a whole frame's work, past the first). */
void vw_json_speed(const vw_window *w, dg_json *j, cJSON *root);
/* The screenshot key: screenshot-NNN.png in the current folder, a line on stderr. */
void vw_screenshot_key(vw_window *w);
/* Writes --screenshot (may be NULL) and ends the GIF; 0 or the exit status after an error line. */
int  vw_finish(vw_window *w, const char *screenshot);
/* Frames a second since the first frame. */
double vw_fps(const vw_window *w);
void vw_close(vw_window *w);                                  /* a zeroed window is harmless */

#endif
