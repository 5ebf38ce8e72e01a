/* difgames hji: the HJBI grid solver from the command line: solve a game's
 * value function, plot its zero level sets, play both players' equilibrium
 * strategies from a start state. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef DG_HAVE_VIEWER
#include "viewer/viewer.h"
#endif
#include "cli/cli.h"
#include "difgames/dist.h"
#include "difgames/fileio.h"
#include "difgames/certify.h"  /* and hji.h */
#include "difgames/hji_part.h"

#define PLAY_MAX_STEPS 100000  /* default bound of hji play's steps (CSV rows) */
#define PLAY_MAX_STEPS_S "100000"
#define SOLVE_SLICES 11        /* default of hji solve --slices: time-to-go 0, t_end/10, .., t_end */
#define SOLVE_SLICES_S "11"

static const char HELP[] =
    "usage: difgames hji <solve|plot|play|versus|view> [options]\n"
    "\n"
    "  solve   solve a game's value function (configs/hji/*.yaml) and write it\n"
    "  plot    draw a value file: its zero level sets, or a game of degree's level sets\n"
    "  play    play both players' equilibrium strategies from a start state\n"
    "  versus  learned policies against the HJBI equilibrium strategies\n"
#ifdef DG_HAVE_VIEWER
    "  view    a window on a value: slices, sliders, equilibrium play from a click (SDL2)\n"
#endif
    "\n"
    "difgames hji <subcommand> --help lists its options.\n";

static const char SOLVE_HELP[] =
    "usage: difgames hji solve --config FILE --out FILE [options]\n"
    "\n"
    "Solves the config's game (configs/hji/*.yaml) to t_end and writes the value as\n"
    "safetensors: 'value' with the grid's shape at t_end, 'value_1', ... at earlier\n"
    "times-to-go (--slices evenly spaced ones, for the strategies of hji play and\n"
    "versus, and the --times), the grid and times in the metadata; prints a progress\n"
    "bar and a JSON line (steps, seconds, cell updates per second).\n"
    "\n"
    "options:\n";

static const char PLOT_HELP[] =
    "usage: difgames hji plot --value FILE [options]\n"
    "\n"
    "Draws the value at t_end as a heat map with a colour bar (2-D games; 3-D and 4-D:\n"
    "the slice through the first two axes at the other axes' values, default their\n"
    "middle) and over it: for a game of kind the zero level sets of t_end and of the\n"
    "times hji solve was given with --times, with a legend (not its --slices samples);\n"
    "for a game of degree (payoff: time or cost) the level sets of the value at t_end\n"
    "at the colour bar's labelled values.\n"
    "\n"
    "options:\n";

static const char PLAY_HELP[] =
    "usage: difgames hji play --config FILE --value FILE --from X1,X2,... [options]\n"
    "\n"
    "Simulates both players' equilibrium feedback strategies (bang-bang inputs from\n"
    "the gradient of the value at the time-to-go t_end - t, interpolated between the\n"
    "file's times; past t_end, time-to-go 0) from the start state; writes the\n"
    "trajectory as CSV and a GIF, and reports capture (the target reached) or\n"
    "escape, and the capture time.\n"
    "At most --max-steps steps (t-max / dt): one CSV row each, and at most 122 GIF\n"
    "frames, hji plot's figure (every ceil(steps / 120)-th step and the last).\n"
    "\n"
    "options:\n";

static const char VERSUS_HELP[] =
    "usage: difgames hji versus --config GAME.yaml --ckpt FILE --hji HJI.yaml\n"
    "                           --value FILE [options]\n"
    "\n"
    "Two-player chase without walls (configs/duel_open.yaml) against its 4-D HJBI\n"
    "solution (configs/hji/chase4d_open.yaml): the learned pursuer and evader and the\n"
    "HJBI equilibrium strategies play all four pairings from the same initial states\n"
    "in the game's own discrete dynamics; prints capture rate and mean capture time.\n"
    "The HJBI inputs come from the value at the time-to-go t_end - t (interpolated\n"
    "between the value file's times; past t_end, time-to-go 0).\n"
    "\n"
    "options:\n";

/* --------------------------------------------------------------- helpers */

/* The default output next to a value file: value's path without .safetensors,
 * then suffix (runs/hji/air3d.safetensors, ".png" -> runs/hji/air3d.png). Returns
 * 0, or -1 after printing an error if it does not fit in buf (n bytes). */
static int beside_value(const char *cmd, const char *value, const char *suffix, char *buf, size_t n) {
    const size_t len = strlen(value);
    const int stem = (int)(len > 12 && !strcmp(value + len - 12, ".safetensors") ? len - 12 : len);
    const int w = snprintf(buf, n, "%.*s%s", stem, value, suffix);
    if (w >= 0 && (size_t)w < n) return 0;
    cli_error(cmd, "--value: path too long to name the default --out");
    return -1;
}

/* A comma list of at most max finite numbers into out (cli_list); the count, or -1 after an error. */
static int parse_list(const char *cmd, const char *flag, const char *text, double *out, int max) {
    double *v = NULL;
    const int n = cli_list(cmd, flag, text, -INFINITY, INFINITY, 0, &v);
    if (n > max) cli_error(cmd, "%s: at most %d numbers; got %s", flag, max, DG_ECHO(text));
    if (n > 0 && n <= max) memcpy(out, v, (size_t)n * sizeof *out);
    free(v);
    return n > max ? -1 : n;
}

typedef struct bar { cli_bar bar; const char *banner; } bar;

static int on_progress(void *user, const dg_hji_progress *pr) {
    bar *b = user;
    if (b->banner) {  /* once the first step is taken: a refused solve prints only its error */
        fputs(b->banner, stderr);
        b->banner = NULL;
    }
    const double f = pr->t_end > 0 && pr->t < pr->t_end ? pr->t / pr->t_end : 1;
    const double eta = f > 0 ? pr->seconds * (1 - f) / f : 0;
    cli_bar_draw(&b->bar, f, 0, "t %.3f / %.3f  step %lld  ETA %.1fs  ", pr->t, pr->t_end, (long long)pr->step, eta);
    return 0;
}

/* Loads a config into a problem, applying --accuracy / --threads / --float32; split: without its
 * node arrays, which each rank builds for its block (dg_hji_problem_load_split). */
static dg_hji_problem *load_problem(const char *cmd, const char *config, const char *accuracy,
                                    int threads, int f32, int split, dg_cfg **cfg_out) {
    dg_err e = {0};
    dg_cfg *cfg = dg_cfg_load(config, &e);
    if (cfg && accuracy && dg_cfg_set(cfg, "accuracy", accuracy, &e) != DG_OK) {
        dg_cfg_free(cfg);
        cfg = NULL;
    }
    dg_hji_problem *p = !cfg ? NULL : split ? dg_hji_problem_load_split(cfg, &e) : dg_hji_problem_load(cfg, &e);
    if (!p || dg_cfg_check_unused(cfg, &e) != DG_OK) {
        fprintf(stderr, "difgames: %s\n", e.msg);
        dg_hji_problem_free(p);
        dg_cfg_free(cfg);
        return NULL;
    }
    if (threads >= 0) p->opts.threads = threads;
    if (f32) p->opts.real = DG_HJI_REAL_F32;
    *cfg_out = cfg;
    return p;
}

/* ----------------------------------------------------------------- solve */

static int hji_solve(int argc, char **argv) {
    const char *config, *out, *times_s, *slices_s, *accuracy, *threads_s;
    int f32;
    const cli_opt opts[] = {
        {"--config", &config, NULL, "FILE", "the game's HJI config (configs/hji/*.yaml)", "required"},
        {"--out", &out, NULL, "FILE", "the value file (.safetensors)", "required"},
        {"--times", &times_s, NULL, "T1,T2,...", "also store the value at these increasing earlier times, in "
         "(0, t_end)", NULL},
        {"--slices", &slices_s, NULL, "N", "also store the value at the first step past each of N evenly spaced "
         "times-to-go from 0 to t_end (1: t_end only, a stationary value)", SOLVE_SLICES_S},
        {"--accuracy", &accuracy, NULL, "A", "overrides the config's accuracy", NULL},
        {"--threads", &threads_s, NULL, "N", "overrides solver.threads (0: OpenMP's default, one per core)", NULL},
        {"--float32", NULL, &f32, NULL, "solve in single precision", NULL},
        {NULL, NULL, NULL, NULL, NULL, NULL},
    };
    const int prc = cli_parse("hji solve", argc, argv, opts, SOLVE_HELP);
    if (prc) return prc == CLI_HELP ? 0 : prc;
    if (!config || !out) {
        cli_error("hji solve", "--config FILE and --out FILE are required (see --help)");
        return EXIT_USAGE;
    }
    const cli_path ins[] = {{"--config", config}}, outs[] = {{"--out", out}};
    if (cli_check_outputs("hji solve", outs, 1, ins, 1)) return EXIT_USAGE;
    if (cli_make_parent("hji solve", "--out", out)) return EXIT_USAGE;  /* before the solve, not after */
    int threads = -1;  /* -1: the config's solver.threads; 0: one per core */
    if (threads_s && !cli_int("hji solve", "--threads", threads_s, 0, 4096, &threads)) return EXIT_USAGE;
    int slices = SOLVE_SLICES;
    if (slices_s && !cli_int("hji solve", "--slices", slices_s, 1, DG_HJI_MAX_TIMES - 1, &slices)) return EXIT_USAGE;
    double times[DG_HJI_MAX_TIMES];
    int nt = 0;
    if (times_s && (nt = parse_list("hji solve", "--times", times_s, times, DG_HJI_MAX_TIMES - 1)) < 0) return EXIT_USAGE;
    dg_cfg *cfg = NULL;
    dg_hji_problem *p = load_problem("hji solve", config, accuracy, threads, f32, dg_dist_size() > 1, &cfg);
    if (!p) return EXIT_USAGE;
    const dg_hji_file_opts fo = {.slices = slices, .ntimes = nt, .times = times, .f32 = f32, .label = config,
                                 .cfg = cfg};
    dg_hji_file_result r;
    dg_err e = {0};
    char banner[256], dims[96] = "";  /* " 101x101x51" */
    bar b = {.bar = {.tty = isatty(2)}, .banner = banner};
    dg_status s = dg_hji_solve_plan(p, &fo, &r, &e);
    if (s == DG_OK) {
        for (int k = 0; k < p->grid.ndim; k++) cli_catf(dims, sizeof dims, "%s%d", k ? "x" : " ", p->grid.n[k]);
        snprintf(banner, sizeof banner, "solving %s: grid%s, t_end %g, memory about %.1f MiB, %s\n", p->name, dims,
                 p->t_end, r.memory / 1048576.0, dg_hji_accuracy_name(dg_hji_accuracy_of(&p->opts)));
        if (dg_dist_rank() == 0) {  /* under mpirun the other ranks solve in silence */
            p->opts.progress = on_progress;
            p->opts.progress_user = &b;
        }
        s = dg_hji_solve_file(p, &fo, out, &r, &e);
    }
    int rc = cli_exit_for(s);
    switch (s == DG_OK ? DG_HJI_FILE_OK : r.step) {
    case DG_HJI_FILE_OK: break;
    case DG_HJI_FILE_COUNT: cli_error("hji solve", "--times and --slices: %s", e.msg); rc = EXIT_USAGE; break;
    case DG_HJI_FILE_TIMES: cli_error("hji solve", "--times: %s; got %s", e.msg, DG_ECHO(times_s)); break;
    case DG_HJI_FILE_STATIONARY: cli_error("hji solve", "--times: %s", e.msg); break;
    case DG_HJI_FILE_MEMORY:
        cli_error("hji solve", "%s; lower grid.n (or --slices, --times, or use --float32)", e.msg);
        rc = EXIT_USAGE;
        break;
    case DG_HJI_FILE_DISK: cli_error("hji solve", "%s; lower --slices or grid.n (or use --float32)", e.msg); break;
    case DG_HJI_FILE_SOLVE: rc = cli_fail("hji solve", &e, s == DG_ERR_ARG ? EXIT_USAGE : EXIT_FAIL); break;
    default: rc = cli_fail("hji solve", &e, 0); break;
    }
    if (rc || dg_dist_rank() != 0) goto done;  /* rank 0 wrote the file and prints */
    const dg_hji_stats st = r.stats;
    fprintf(stderr, "wrote %s\n", out);
    {
        cli_json j = {cJSON_CreateObject(), 0};
        cli_json_game(&j, p->name, dg_hji_problem_source(p));
        cli_json_add(&j, j.root, "nodes", cli_json_number("%.0f", (double)p->grid.nodes));
        cli_json_add(&j, j.root, "t_end", cli_json_number("%.9g", p->t_end));
        cli_json_add(&j, j.root, "times", cli_json_number("%.0f", r.nt));
        cli_json_add(&j, j.root, "steps", cli_json_number("%.0f", (double)st.steps));
        cli_json_add(&j, j.root, "stages", cli_json_number("%.0f", st.stages));
        cli_json_add(&j, j.root, "seconds", cli_json_number("%.4f", st.seconds));
        cli_json_add(&j, j.root, "cell_updates", cli_json_number("%.0f", st.cell_updates));
        cli_json_add(&j, j.root, "cell_updates_per_s", cli_json_number("%.4g", st.updates_per_s));
        cli_json_add(&j, j.root, "threads", cli_json_number("%.0f", st.threads));
        if (dg_dist_size() > 1) cli_json_add(&j, j.root, "ranks", cli_json_number("%.0f", dg_dist_size()));
        if (dg_dist_size() > 1) {   /* the boxes along each axis: "2x2x1" */
            char cut[8 * DG_HJI_MAX_DIMS] = "";
            for (int k = 0, w = 0; k < p->grid.ndim && w >= 0 && (size_t)w < sizeof cut; k++)
                w += snprintf(cut + w, sizeof cut - (size_t)w, "%s%d", k ? "x" : "", r.cuts[k]);
            cli_json_add(&j, j.root, "cut", cJSON_CreateString(cut));
        }
        if (p->stationary) {
            cli_json_add(&j, j.root, "method", cJSON_CreateString(p->opts.method == DG_HJI_METHOD_SWEEP ? "sweep" : "march"));
            cli_json_add(&j, j.root, "converged", cJSON_CreateBool(st.converged));
            cli_json_add(&j, j.root, "iterations", cli_json_number("%.0f", (double)st.iterations));
            cli_json_add(&j, j.root, "residual", cli_json_number("%.4g", st.residual));
            cli_json_add(&j, j.root, "tol", cli_json_number("%.4g", p->opts.tol));
            if (p->opts.method != DG_HJI_METHOD_SWEEP) cli_json_add(&j, j.root, "t", cli_json_number("%.6g", st.t));
        }
        rc = cli_json_print(&j, "hji solve");
        if (p->stationary && !st.converged)
            fprintf(stderr, "difgames: hji solve: warning: %s did not converge (residual %.3g, tol %.3g): raise t_end "
                    "(march) or solver.max_sweeps (sweep)\n", config, st.residual, p->opts.tol);
    }
done:
    dg_hji_problem_free(p);
    dg_cfg_free(cfg);
    return rc;
}

/* ----------------------------------------------------------- value files */

/* Opens a value file; prints the error and returns EXIT_USAGE on failure. */
static int value_open(const char *cmd, const char *path, dg_hji_value *vf) {
    dg_err e = {0};
    return dg_hji_value_open(path, vf, &e) == DG_OK ? 0 : cli_fail(cmd, &e, EXIT_USAGE);
}

/* The value file at path, solved for p (config names p's file): its slices into vs. 0, or the exit
 * status after printing the error. */
static int value_load(const char *cmd, const char *path, const dg_hji_problem *p, const char *config,
                      dg_hji_value_slices *vs) {
    dg_err e = {0};
    dg_hji_file_step step;
    const dg_status s = dg_hji_value_load(path, p, config, vs, &step, &e);
    if (s == DG_OK) return 0;
    if (step != DG_HJI_FILE_MEMORY) return cli_fail(cmd, &e, s == DG_ERR_NOMEM ? EXIT_FAIL : EXIT_USAGE);
    cli_error(cmd, "%s; lower the value file's times (hji solve --slices)", e.msg);
    return EXIT_USAGE;
}

static int hji_plot(int argc, char **argv) {
    const char *value, *out, *at_s;
    const cli_opt opts[] = {
        {"--value", &value, NULL, "FILE", "the value file of hji solve", "required"},
        {"--out", &out, NULL, "FILE.png", "the image", "the value file's path with .png for .safetensors"},
        {"--at", &at_s, NULL, "x2=V,...", "3-D and 4-D: the values of the axes after the first two", "their middle"},
        {NULL, NULL, NULL, NULL, NULL, NULL},
    };
    const int prc = cli_parse("hji plot", argc, argv, opts, PLOT_HELP);
    if (prc) return prc == CLI_HELP ? 0 : prc;
    if (!value) { cli_error("hji plot", "--value FILE is required (see --help)"); return EXIT_USAGE; }
    const cli_path ins[] = {{"--value", value}}, outs[] = {{"--out", out}};
    if (cli_check_outputs("hji plot", outs, 1, ins, 1)) return EXIT_USAGE;
    dg_hji_value vf;
    int rc = value_open("hji plot", value, &vf);
    if (rc) return rc;
    const dg_hji_grid *g = &vf.grid;
    double at[DG_HJI_MAX_DIMS];
    for (int k = 0; k < g->ndim; k++) at[k] = 0.5 * (g->lo[k] + g->hi[k]);
    if (at_s) {  /* x2=V,x3=W */
        for (const char *tok = at_s; *tok;) {
            const size_t len = strcspn(tok, ",");
            const size_t eq = strcspn(tok, "=,");  /* x<k>=<v> */
            long k = -1;
            double v;
            if (tok[0] != 'x' || eq >= len || !dg_parse_long(tok + 1, eq - 1, 10, &k) || k < 2 || k >= g->ndim ||
                !dg_parse_double(tok + eq + 1, len - eq - 1, &v)) {
                cli_error("hji plot", "--at: expected x2=V,... for axes 2..%d, got %s", g->ndim - 1,
                          DG_ECHO_N(tok, len));
                dg_hji_value_close(&vf);
                return EXIT_USAGE;
            }
            at[k] = v;
            tok += len + (tok[len] == ',');
        }
    }
    char path[DG_PATH_MAX];
    dg_err e = {0};
    if (out && dg_path_join(path, sizeof path, NULL, out, &e) != DG_OK) {
        cli_error("hji plot", "--out: %s", e.msg);
        rc = EXIT_USAGE;
    } else if (!out && beside_value("hji plot", value, ".png", path, sizeof path)) {
        rc = EXIT_USAGE;
    } else if (dg_hji_plot_value(&vf, at, path, &e) != DG_OK) {
        rc = cli_fail("hji plot", &e, e.status == DG_ERR_NOMEM ? EXIT_FAIL : EXIT_USAGE);
    } else {
        fprintf(stderr, "wrote %s\n", path);
    }
    dg_hji_value_close(&vf);
    return rc;
}

/* ------------------------------------------------------------------ play */

static int hji_play(int argc, char **argv) {
    const char *config, *value, *from_s, *out, *gif, *tmax_s, *dt_s, *maxsteps_s, *layer_s;
    const cli_opt opts[] = {
        {"--config", &config, NULL, "FILE", "the game's HJI config", "required"},
        {"--value", &value, NULL, "FILE", "its value file (hji solve)", "required"},
        {"--from", &from_s, NULL, "X1,X2,...", "the start state, one coordinate per axis", "required"},
        {"--out", &out, NULL, "FILE.csv", "the trajectory", "the value file's path with _play.csv for .safetensors"},
        {"--gif", &gif, NULL, "FILE.gif", "also draw the game as a GIF", NULL},
        {"--t-max", &tmax_s, NULL, "S", "seconds simulated at most", "2 t_end"},
        {"--dt", &dt_s, NULL, "S", "the time step", "automatic"},
        {"--max-steps", &maxsteps_s, NULL, "N", "refuse a t-max / dt above N steps", PLAY_MAX_STEPS_S},
        {"--boundary-layer", &layer_s, NULL, "EPS", "in [0, 1]: inputs saturate linearly where |(G^T p)_j| < EPS "
         "|p| |G e_j| (against chattering); 0: bang-bang", "0"},
        {NULL, NULL, NULL, NULL, NULL, NULL},
    };
    const int prc = cli_parse("hji play", argc, argv, opts, PLAY_HELP);
    if (prc) return prc == CLI_HELP ? 0 : prc;
    if (!config || !value || !from_s) {
        cli_error("hji play", "--config FILE, --value FILE and --from X1,X2,... are required (see --help)");
        return EXIT_USAGE;
    }
    char csv_path[DG_PATH_MAX];
    dg_err e = {0};
    if (out && dg_path_join(csv_path, sizeof csv_path, NULL, out, &e) != DG_OK) {
        cli_error("hji play", "--out: %s", e.msg);
        return EXIT_USAGE;
    }
    if (!out && beside_value("hji play", value, "_play.csv", csv_path, sizeof csv_path)) return EXIT_USAGE;
    /* the CSV that will be written, the default one included, against the inputs and --gif */
    const cli_path ins[] = {{"--config", config}, {"--value", value}};
    const cli_path outs[] = {{out ? "--out" : "--out (default)", csv_path}, {"--gif", gif}};
    if (cli_check_outputs("hji play", outs, 2, ins, 2)) return EXIT_USAGE;
    dg_cfg *cfg = NULL;
    dg_hji_problem *p = load_problem("hji play", config, NULL, -1, 0, 0, &cfg);
    if (!p) return EXIT_USAGE;
    const dg_hji_grid *g = &p->grid;
    double x[DG_HJI_MAX_DIMS];
    int rc = 0;
    double t_max = 2 * p->t_end, dt = 0, layer = 0;
    dg_hji_value_slices vs = {0};
    const int nfrom = parse_list("hji play", "--from", from_s, x, DG_HJI_MAX_DIMS);
    if (nfrom != g->ndim) {
        if (nfrom >= 0)
            cli_error("hji play", "--from: %s needs %d coordinates; got %s", p->name, g->ndim, DG_ECHO(from_s));
        rc = EXIT_USAGE;
        goto done;
    }
    if ((tmax_s && !cli_double("hji play", "--t-max", tmax_s, 0, INFINITY, CLI_OPEN_LO, &t_max)) ||
        (dt_s && !cli_double("hji play", "--dt", dt_s, 0, INFINITY, CLI_OPEN_LO, &dt)) ||
        (layer_s && !cli_double("hji play", "--boundary-layer", layer_s, 0, 1, 0, &layer))) {
        rc = EXIT_USAGE;
        goto done;
    }
    int max_steps = PLAY_MAX_STEPS;
    if (maxsteps_s && !cli_int("hji play", "--max-steps", maxsteps_s, 1, DG_HJI_MAX_STEPS, &max_steps)) {
        rc = EXIT_USAGE;
        goto done;
    }
    const int cost = dg_hji_game_degree(&p->game) && p->payoff == DG_HJI_PAYOFF_COST;
    if (cost && !p->stationary) {  /* a finite-horizon game of degree ends at t_end */
        if (tmax_s) {
            cli_error("hji play", "--t-max: %s is a game with a running cost over t_end = %g, which ends there",
                      config, p->t_end);
            rc = EXIT_USAGE;
            goto done;
        }
        t_max = p->t_end;
    }
    if ((rc = value_load("hji play", value, p, config, &vs))) goto done;
    const dg_hji_play_opts po = {.t_max = t_max, .dt = dt, .max_steps = max_steps, .layer = layer,
                                 .csv_path = csv_path, .gif_path = gif};
    dg_hji_sim_result res;
    dg_hji_file_step step;
    const dg_status s = dg_hji_play(p, &vs.slices, x, &po, &res, &step, &e);
    if (s != DG_OK && step == DG_HJI_FILE_STEPS) {  /* the CSV's rows, bounded before anything is written */
        cli_error("hji play", "--t-max %g / --dt %g is %.3g steps, more than --max-steps %d (one CSV row each)",
                  t_max, res.dt, t_max / res.dt, max_steps);
        rc = EXIT_USAGE;
        goto done;
    }
    if (s != DG_OK) {
        rc = cli_fail("hji play", &e, 0);
        goto done;
    }
    fprintf(stderr, "wrote %s%s%s\n", csv_path, gif ? " and " : "", gif ? gif : "");
    if (dg_hji_game_degree(&p->game))
        fprintf(stderr, "payoff along the path %.6g, V(x0) %.6g (difference %.3g)\n", res.payoff, res.value0,
                res.payoff - res.value0);
    cli_json j = {cJSON_CreateObject(), 0};
    cli_json_game(&j, p->name, dg_hji_problem_source(p));
    cli_json_add(&j, j.root, "outcome", cJSON_CreateString(cost ? "end" : res.captured ? "capture" : "escape"));
    cli_json_add(&j, j.root, "capture_time", cli_json_number("%.9g", res.captured ? res.capture_time : NAN));
    cli_json_add(&j, j.root, "payoff", cli_json_number("%.9g", res.payoff));
    cli_json_add(&j, j.root, "value_x0", cli_json_number("%.9g", res.value0));
    cli_json_add(&j, j.root, "t_max", cli_json_number("%.6g", t_max));
    cli_json_add(&j, j.root, "dt", cli_json_number("%.6g", res.dt));
    cli_json_add(&j, j.root, "value_times", cli_json_number("%.0f", vs.slices.nt));
    cli_json_add(&j, j.root, "boundary_layer", cli_json_number("%.6g", layer));
    cli_json_add(&j, j.root, "u_player", cJSON_CreateString(p->u_name ? p->u_name : "u"));
    cli_json_add(&j, j.root, "d_player", cJSON_CreateString(p->d_name ? p->d_name : "d"));
    rc = cli_json_print(&j, "hji play");
done:
    dg_hji_value_slices_free(&vs);
    dg_hji_problem_free(p);
    dg_cfg_free(cfg);
    return rc;
}

/* ---------------------------------------------------------------- versus */

static int hji_versus(int argc, char **argv) {
    const char *config, *ckpt, *hji, *value, *batch_s, *layer_s;
    const cli_opt opts[] = {
        {"--config", &config, NULL, "GAME.yaml", "the learning game's config", "required"},
        {"--ckpt", &ckpt, NULL, "FILE", "its policy parameters (.safetensors)", "required"},
        {"--hji", &hji, NULL, "HJI.yaml", "the HJI game's config", "required"},
        {"--value", &value, NULL, "FILE", "its value file (hji solve)", "required"},
        {"--batch", &batch_s, NULL, "N", "initial states", "256"},
        CLI_KEY_DEF("--seed", "seed", "the config's seed"),
        {"--boundary-layer", &layer_s, NULL, "EPS", "the HJBI inputs saturate linearly where |(G^T p)_j| < EPS "
         "|p| |G e_j| (as hji play); 0: bang-bang", "0"},
        {NULL, NULL, NULL, NULL, NULL, NULL},
    };
    const int prc = cli_parse("hji versus", argc, argv, opts, VERSUS_HELP);
    if (prc) return prc == CLI_HELP ? 0 : prc;
    if (!config || !ckpt || !hji || !value) {
        cli_error("hji versus", "--config, --ckpt, --hji and --value are required (see --help)");
        return EXIT_USAGE;
    }
    int B = 256;
    if (batch_s && !cli_int("hji versus", "--batch", batch_s, 1, 100000, &B)) return EXIT_USAGE;
    double layer = 0;
    if (layer_s && !cli_double("hji versus", "--boundary-layer", layer_s, 0, 1, 0, &layer)) return EXIT_USAGE;
    dg_run s;
    int rc = cli_load_opts(&s, config, opts);
    if (rc) return rc;
    dg_policy pol;
    dg_params *p = NULL;
    dg_cfg *hcfg = NULL;
    dg_hji_problem *hp = NULL;
    dg_hji_value_slices vs = {0};
    dg_err e = {0};
    if (!(hp = load_problem("hji versus", hji, NULL, -1, 0, 0, &hcfg))) { rc = EXIT_USAGE; goto done; }
    if (dg_hji_link_check(hp, s.env, &e) != DG_OK) {  /* the learning game the HJI game declares */
        cli_error("hji versus", "%s: %s", hp->link ? config : hji, e.msg);
        rc = EXIT_USAGE;
        goto done;
    }
    if (dg_run_policy_load(&s, ckpt, &pol, &p, &e) != DG_OK) { rc = cli_fail("hji versus", &e, 0); goto done; }
    if ((rc = value_load("hji versus", value, hp, hji, &vs))) goto done;
    dg_hji_versus_result r;
    if (dg_hji_versus(hp, &vs.slices, layer, s.env, &pol, p, B, s.opts.seed, &r, &e) != DG_OK) {
        cli_error("hji versus", "%s", e.msg);
        rc = cli_exit_for(e.status);
        goto done;
    }
    const double t_end = vs.slices.t[vs.slices.nt - 1];
    fprintf(stderr, "%d initial states; the HJBI value (t_end %g s) puts %.1f %% inside the capture tube\n", B,
            t_end, 100.0 * r.inside);
    cli_json j = {cJSON_CreateObject(), 0};
    cli_json_add(&j, j.root, "episodes", cli_json_number("%.0f", B));
    cli_json_add(&j, j.root, "inside_tube", cli_json_number("%.6g", r.inside));
    cli_json_add(&j, j.root, "t_end", cli_json_number("%.6g", t_end));
    cli_json_add(&j, j.root, "value_times", cli_json_number("%.0f", vs.slices.nt));
    cli_json_add(&j, j.root, "boundary_layer", cli_json_number("%.6g", layer));
    cli_json_add(&j, j.root, "horizon_s", cli_json_number("%.6g", s.env->horizon * s.env->dt));
    if ((rc = cli_json_print(&j, "hji versus"))) goto done;
    fprintf(stderr, "%-34s %12s %18s\n", "pursuer vs evader", "capture rate", "mean capture time");
    for (int k = 0; k < DG_HJI_PAIRINGS; k++) {
        fprintf(stderr, "%-34s %12.3f %16.3f s\n", dg_hji_pairing_name(k), r.capture_rate[k], r.capture_time[k]);
        cli_json jk = {cJSON_CreateObject(), 0};
        cli_json_add(&jk, jk.root, "pairing", cJSON_CreateString(dg_hji_pairing_name(k)));
        cli_json_add(&jk, jk.root, "capture_rate", cli_json_number("%.6g", r.capture_rate[k]));
        cli_json_add(&jk, jk.root, "capture_time", cli_json_number("%.9g", r.capture_time[k]));
        cli_json_add(&jk, jk.root, "episodes", cli_json_number("%.0f", B));
        if ((rc = cli_json_print(&jk, "hji versus"))) goto done;
    }
done:
    dg_hji_value_slices_free(&vs);
    dg_hji_problem_free(hp);
    dg_cfg_free(hcfg);
    dg_params_free(p);
    dg_run_free(&s);
    return rc;
}

int cmd_hji(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs(HELP, argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : 0;
    }
    if (!strcmp(argv[1], "solve")) return hji_solve(argc - 1, argv + 1);
    if (!strcmp(argv[1], "plot")) return hji_plot(argc - 1, argv + 1);
    if (!strcmp(argv[1], "play")) return hji_play(argc - 1, argv + 1);
    if (!strcmp(argv[1], "versus")) return hji_versus(argc - 1, argv + 1);
#ifdef DG_HAVE_VIEWER
    if (!strcmp(argv[1], "view")) return cmd_hji_view(argc - 1, argv + 1);
#endif
    cli_error("hji", "unknown subcommand %s (solve, plot, play, versus)", DG_ECHO(argv[1]));
    return EXIT_USAGE;
}
