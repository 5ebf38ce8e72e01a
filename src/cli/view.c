/* difgames view, play and hji view: their options, parsed here and handed to the viewer's entries
 * (src/viewer/viewer.h), which open the windows; the JSON line they fill is printed here. Built
 * with the viewer only (SDL2). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "difgames/hji_learn.h"
#include "viewer/viewer.h"
#include "viewer/window.h"

/* The viewer's error lines (viewer/window.h) are the command's: cli_error's and cli_fail's. */
void vw_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    cli_verror(cmd, fmt, ap);
    va_end(ap);
}

int vw_fail(const char *cmd, const dg_err *e, int rc) { return cli_fail(cmd, e, rc); }

static const char VIEW_HELP[] =
    "usage: difgames view --config FILE --ckpt FILE [options]\n"
    "       difgames view --run DIR [options]\n"
    "\n"
    "Opens a window and plays the policy live, drawn as in replays (soft render under\n"
    "crisp shapes, bodies, goal, trails), with a side panel of the loss so far term by\n"
    "term and the game's metrics. Keys: space pause, left/right step back and forth,\n"
    "+/- speed, R new initial state (next seed), B the batch (the other rows, faded),\n"
    "S screenshot (screenshot-NNN.png), Q/Esc quit. The mouse drags the goal (reach)\n"
    "or the evader (chase) and the policy reacts live. Without a display, run it under\n"
    "xvfb-run with --frames. With --run DIR it follows a training run (its newest snapshot,\n"
    "its loss curve), the config read from the run's snapshots unless --config is given.\n"
    "Prints one JSON line at the end (frames, fps, render ms).\n"
    "\n"
    "options:\n";

static const char PLAY_HELP[] =
    "usage: difgames play --config FILE --ckpt FILE --as ROLE [options]\n"
    "\n"
    "You drive one body with the arrow keys (or WASD; two keys for a diagonal; each\n"
    "axis at full scale) against the learned other player. ROLE is a body of the game:\n"
    "agent (reach, pixel), pursuer, or evader (a two-player game: duel, duel_simple);\n"
    "a model file's game: a body its draw.bodies names (configs/models/reach.yaml: agent).\n"
    "The panel shows the time, the capture, and for duel_simple the exact equilibrium\n"
    "capture time from the start state: the score to beat. Keys: space pause, R new\n"
    "state, F12 screenshot, Q/Esc quit. Prints one JSON line at the end.\n"
    "\n"
    "options:\n";

static const char HJI_VIEW_HELP[] =
    "usage: difgames hji view --value FILE [--config FILE] [options]\n"
    "\n"
    "Opens a window on a value of hji solve: the slice through the first two axes as a\n"
    "colour map with its zero level set (white), the target (dashed red) and obstacles\n"
    "(grey) of --config, and for games of degree contours of the value. Keys: left/right\n"
    "the stored time, tab the next other axis, up/down its value (one grid step), space\n"
    "pause the play, R clear the path, S screenshot, Q/Esc quit; the panel's sliders\n"
    "(time, the other axes) drag with the mouse. With --config a click plays both players'\n"
    "equilibrium strategies from that point (the other axes at their slider values) and\n"
    "draws the path as it goes. Prints one JSON line at the end.\n"
    "--value may be a network of hji learn (value.safetensors) with --config: its value\n"
    "at 11 times-to-go from 0 to its t_end on the config's grid, and the strategies from\n"
    "the network's own gradient (evaluated in the precision it was trained in).\n"
    "\n"
    "options:\n";

/* The options of all three windows */
#define CLI_FRAMES(p) CLI_INT("--frames", p, "N", 1, 10000000, "show N frames (60 a second), then exit", \
                              .otherwise = "until Q")
#define CLI_SCREENSHOT(p) CLI_OUT("--screenshot", p, "FILE", "write the last frame as a PNG")
#define CLI_RECORD(p) CLI_OUT("--record", p, "FILE", "write every frame into an animated GIF")

/* The options view and play share, into the vw_view_opts o. */
#define VIEW_OPTS(o)                                                                                                  \
    CLI_KEY("--seed", "seed", .otherwise = "the config's"),                                                           \
    CLI_INT("--size", &(o).size, "N", 128, 2048, "width and height of the arena view in pixels", .def = "480"),       \
    CLI_DOUBLE("--speed", &(o).speed, "X", 1.0 / 16, 16, "simulated seconds a real second (+/- halve or double it)",  \
               .def = "1"),                                                                                           \
    CLI_FRAMES(&(o).frames),                                                                                          \
    CLI_SCREENSHOT(&(o).screenshot), CLI_RECORD(&(o).record),                                                         \
    CLI_FLAG("--bench", &(o).bench, "frames as fast as they come (no 60 Hz pacing): the JSON line's fps"),       \
    CLI_KEY("--safety", "safety.value", .otherwise = "the config's safety.value (none: no filter)"),               \
    CLI_KEY("--safety-config", "safety.config", .otherwise = "the config's (a grid's value file: its own)")

/* vw_view_opts' load: cli_load with the keys the options set (user: the option table). */
static int view_load(void *user, dg_run *r, const char *path, const char *text, size_t len) {
    dg_run_set sets[CLI_MAX_OPTS];
    return cli_load(r, path, text, len, sets, cli_sets(user, sets));
}

/* The viewer's window for the parsed options o of table opts; its JSON line printed. */
static int view_run(vw_view_opts *o, cli_opt *opts) {
    struct stat st;
    if (o->ckpt && o->run_dir) {
        cli_error(o->cmd, "--ckpt and --run: one policy or one run, not both");
        return EXIT_USAGE;
    }
    if (o->run_dir && (stat(o->run_dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
        cli_error(o->cmd, "--run %s: not a folder", o->run_dir);
        return EXIT_USAGE;
    }
    o->load = view_load;
    o->load_user = opts;
    dg_json j = {cJSON_CreateObject(), 0};
    const int rc = vw_view(o, &j);
    if (rc) {
        cJSON_Delete(j.root);
        return rc;
    }
    return cli_json_print(&j, o->cmd);
}

int cmd_view(int argc, char **argv) {
    vw_view_opts o = {.cmd = "view"};
    int rc;
    cli_opt opts[] = {
        CLI_CONFIG(&o.config, .unless = "--run"), CLI_CKPT(&o.ckpt, .unless = "--run"),
        VIEW_OPTS(o),
        CLI_INT("--rows", &o.rows, "N", 1, 256, "episodes played at once (B shows the others)", .def = "8"),
        CLI_FLAG("--batch", &o.batch, "start with the batch shown (as B does)"),
        CLI_IN("--input", &o.input, "FILE", "keys pressed, one line a frame (space left right plus minus r b s q) and "
               "the mouse at a point of the world (click X Y, press X Y, move X Y, release)",
               .otherwise = "the keyboard"),
        CLI_OUT("--trajectory", &o.trajectory, "FILE", "write t and each body's x, y a step of the episode shown (CSV)"),
        CLI_STR("--run", &o.run_dir, "DIR", "follow a training run in DIR instead of --ckpt: its newest snapshot, "
                "reloaded as it appears, and its loss curve (the config: --config, or the one stored in the run's "
                "snapshots)"),
        CLI_END,
    };
    if (!cli_parse(&rc, "view", argc, argv, opts, VIEW_HELP)) return rc;
    return view_run(&o, opts);
}

int cmd_play(int argc, char **argv) {
    vw_view_opts o = {.cmd = "play", .play = 1};
    int rc;
    cli_opt opts[] = {
        CLI_CONFIG(&o.config), CLI_CKPT(&o.ckpt),
        VIEW_OPTS(o),
        CLI_STR("--as", &o.as, "ROLE", "the body you drive: agent, pursuer or evader (a model file's: as it names "
                "them)", .req = 1),
        CLI_IN("--input", &o.input, "FILE", "held keys, one line a frame (e.g. 'up left')", .otherwise = "the keyboard"),
        CLI_OUT("--trajectory", &o.trajectory, "FILE", "write t and each body's x, y a step (CSV)"),
        CLI_END,
    };
    if (!cli_parse(&rc, "play", argc, argv, opts, PLAY_HELP)) return rc;
    o.rows = 1;  /* the person's episode */
    return view_run(&o, opts);
}

int cmd_hji_view(int argc, char **argv) {
    vw_hji_opts o = {0};
    cli_list from;
    int rc;
    cli_opt opts[] = {
        CLI_IN("--value", &o.value, "FILE", "the value file of hji solve, or a network of hji learn (with --config)",
               .req = 1),
        CLI_IN("--config", &o.config, "FILE", "its game's config: target, obstacles, clicks play"),
        CLI_AT(&o.at),
        CLI_LIST("--from", &from, "X1,X2,...", -INFINITY, INFINITY, "play from this state at the start (as a click "
                 "does; needs --config)"),
        CLI_INT("--contours", &o.levels, "N", 0, 64, "contours of the value besides its zero set",
                .otherwise = "8 for games of degree, else 0"),
        CLI_DOUBLE("--speed", &o.speed, "X", 1.0 / 64, 64, "seconds of play a real second", .def = "1"),
        CLI_FRAMES(&o.frames),
        CLI_SCREENSHOT(&o.screenshot), CLI_RECORD(&o.record),
        CLI_FLAG("--bench", &o.bench, "frames as fast as they come (no 60 Hz pacing)"),
        CLI_IN("--input", &o.input, "FILE", "keys pressed, one line a frame (left right up down tab r space s q) and "
               "the mouse at a window pixel (click X Y, press X Y, move X Y, release)",
               .otherwise = "the keyboard and mouse"),
        CLI_END,
    };
    if (!cli_parse(&rc, "hji view", argc, argv, opts, HJI_VIEW_HELP)) return rc;
    if (from.v && !o.config) {
        cli_error("hji view", "--from needs --config (the game's strategies come from it)");
        free(from.v);
        return EXIT_USAGE;
    }
    int f64 = 0;
    if (dg_hji_learn_probe(o.value, &f64) && f64 && !DG_REAL_F64) {  /* an f64 network: the double copy (main.c) */
        free(from.v);
        return CLI_RERUN_F64;
    }
    if (!cli_given(opts, "--contours")) o.levels = -1;
    o.from = from.v;
    o.nfrom = from.n;
    o.from_text = from.text;
    dg_json j = {cJSON_CreateObject(), 0};
    rc = vw_hji_view(&o, &j);
    free(from.v);
    if (rc) {
        cJSON_Delete(j.root);
        return rc;
    }
    return cli_json_print(&j, "hji view");
}
