/* The interactive viewer (SDL2): the windows of `difgames view`, `play` and `hji view`. It lives
 * outside the library (which stays free of SDL) and is linked into the command only. The command
 * parses the options (src/cli/view.c) and hands them to an entry below; the entry prints its error
 * lines itself and fills the command's JSON line, which the command prints. */
#ifndef DG_VIEWER_H
#define DG_VIEWER_H

#include "difgames/run.h"
#include "io/json.h"

/* The options of view and play. */
typedef struct vw_view_opts {
    const char *cmd;                  /* "view" or "play": for messages, the window's title   */
    int         play;                 /* 1: a person drives the body .as against the policy   */
    const char *config, *ckpt;        /* config NULL: the one stored in --run's snapshots     */
    const char *run_dir;              /* view --run DIR: follow a training run, not --ckpt     */
    const char *as;                   /* play: the body driven                                 */
    const char *input;                /* play: held keys; view: keys and the mouse (a script)  */
    const char *screenshot, *record, *trajectory;  /* output files, NULL: none                 */
    int         size, rows, frames;   /* arena pixels, episodes at once, frames (0: until Q)   */
    int         bench, batch;         /* no 60 Hz pacing; the batch shown from the start       */
    double      speed;                /* simulated seconds a real second                       */
    /* the command's config loading (cli_load with the keys its options set): the file path, or
     * with text the text of a config stored in a snapshot (path then names it for messages); 0,
     * or the exit status to end with after the error line */
    int       (*load)(void *user, dg_run *r, const char *path, const char *text, size_t len);
    void       *load_user;
} vw_view_opts;
/* Opens the window of view or play and runs it to the end; 0 with the JSON line's fields added to
 * j, or the exit status (DG_EXIT_*, or load's) after one error line. */
int vw_view(const vw_view_opts *o, dg_json *j);

/* The options of hji view. */
typedef struct vw_hji_opts {
    const char   *value, *config;     /* the value file; its game's config (NULL: no clicks)   */
    const char   *at;                 /* the other axes (dg_hji_grid_slice_at), NULL: middles   */
    const double *from;               /* a start state to play from (nfrom coordinates), NULL   */
    int           nfrom;
    const char   *from_text;          /* --from as given, for messages                          */
    const char   *screenshot, *record, *input;
    int           levels;             /* contours besides the zero set; -1: 8 for games of degree */
    int           frames, bench;      /* frames shown (0: until Q); no 60 Hz pacing             */
    double        speed;              /* seconds of play a real second                          */
} vw_hji_opts;
/* Opens the window of hji view and runs it to the end; 0 with the JSON line's fields added to j, or
 * the exit status after one error line. */
int vw_hji_view(const vw_hji_opts *o, dg_json *j);

#endif
