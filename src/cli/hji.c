/* difgames hji: the HJBI grid solver from the command line: solve a game's
 * value function, plot its zero level sets, play both players' equilibrium
 * strategies from a start state. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "difgames/dist.h"
#include "difgames/fileio.h"
#include "difgames/certify.h"  /* and hji.h */
#include "difgames/hji_part.h"
#include "difgames/hji_learn.h"
#include "difgames/safetensors.h"
#include "io/csv.h"

static const char HELP_HEAD[] = "usage: difgames hji <subcommand> [options]\n\n";
static const char HELP_TAIL[] = "\ndifgames hji <subcommand> --help lists its options.\n";

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
    "A network of hji learn (value.safetensors) is drawn on --config's grid at its t_end;\n"
    "--learned NET --config FILE draws a network's zero set (level sets for a game of\n"
    "degree) in magenta beside the value file's, at the file's t_end.\n"
    "--3d draws a value of 3 axes or more in three dimensions instead (helperOC's\n"
    "visSetIm): its level set {V = --level} at t_end through axes 0, 1, 2 (more\n"
    "axes: the 3-D slice at --at's values of the others) as a shaded surface by\n"
    "marching tetrahedra, orthographic at --view, in the grid's box with its axes\n"
    "named; a PDF (vector) when --out ends in .pdf, else a PNG. A value of 2 axes is\n"
    "refused.\n"
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
    "--value may be a network of hji learn (value.safetensors): the inputs then come\n"
    "from the network's own gradient at the time-to-go t_end - t (its t_end), evaluated\n"
    "in the precision it was trained in. A problem of more than six axes (collision9d)\n"
    "has no grid: it plays a network, the target l from its formula, without --gif.\n"
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
    "between the value file's times; past t_end, time-to-go 0), or from the gradient of\n"
    "a network of hji learn given as --value (evaluated in the learning game's precision,\n"
    "train.precision: one evaluation a step for the whole batch).\n"
    "\n"
    "options:\n";


static const char LEARN_HELP[] =
    "usage: difgames hji learn --config FILE --out DIR [options]\n"
    "       difgames hji learn --resume DIR [--iterations N]\n"
    "\n"
    "Trains a value network V(x, tau) on the config's game (configs/hji/*.yaml) by the\n"
    "HJI equation's residual at sampled states (DeepReach's method; its learn.* keys,\n"
    "docs/neural.md), its points cut into learn.threads shards run in parallel (the\n"
    "same seed and shard count, the same bits), and writes into DIR: value.safetensors (the\n"
    "network, for hji tabulate), metrics.csv (iteration, loss, residual, boundary,\n"
    "tau_max, seconds) and resume.safetensors (every learn.resume_every iterations and\n"
    "at the end, for --resume). Prints a progress line and a JSON line.\n"
    "Under mpirun the ranks split the shards (the same bits as one process with the\n"
    "same learn.threads); rank 0 alone writes and prints.\n"
    "learn.precision: f64 trains on the double tape (as train.precision; the network\n"
    "file then says f64, and hji tabulate evaluates it in double).\n"
    "--bench: times the config's iterations as given and prints one JSON line\n"
    "(ms_per_iteration, cpu_ms_per_iteration: the process's CPU time, gflops), writing\n"
    "nothing.\n"
    "\n"
    "options:\n";

static const char TABULATE_HELP[] =
    "usage: difgames hji tabulate --value NET --config FILE --out FILE [options]\n"
    "\n"
    "Writes a learned value (hji learn's value.safetensors) at tau = t_end on the\n"
    "config's grid as a value file, as hji solve writes one (hji plot, play read it).\n"
    "The network is evaluated in the precision it was trained in (its file's precision:\n"
    "f32, or f64 for learn.precision: f64).\n"
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

/* Loads a config into a problem, applying --accuracy / --threads / --float32; split 1: without its
 * node arrays, which each rank builds for its block (dg_hji_problem_load_split); 2: for work at points
 * (hji learn: up to DG_HJI_MAX_DIMS axes, dg_hji_problem_load_points). Its learn.* keys
 * (hji learn's) are read too, into lo when not NULL: every hji command takes a config that has them. */
static dg_hji_problem *load_problem_learn(const char *cmd, const char *config, const char *accuracy,
                                          int threads, int f32, int split, dg_cfg **cfg_out, dg_hji_learn_opts *lo,
                                          const char *yaml) {
    dg_err e = {0};
    dg_hji_learn_opts lo_;
    dg_cfg *cfg = yaml ? dg_cfg_parse(yaml, strlen(yaml), config, &e) : dg_cfg_load(config, &e);
    if (cfg && accuracy && dg_cfg_set(cfg, "accuracy", accuracy, &e) != DG_OK) {
        dg_cfg_free(cfg);
        cfg = NULL;
    }
    dg_hji_problem *p = !cfg        ? NULL
                        : split == 2 ? dg_hji_problem_load_points(cfg, &e)
                        : split      ? dg_hji_problem_load_split(cfg, &e)
                                     : dg_hji_problem_load(cfg, &e);
    if (!p || dg_hji_learn_opts_read(cfg, lo ? lo : &lo_, &e) != DG_OK || dg_cfg_check_unused(cfg, &e) != DG_OK) {
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

static dg_hji_problem *load_problem(const char *cmd, const char *config, const char *accuracy,
                                    int threads, int f32, int split, dg_cfg **cfg_out) {
    return load_problem_learn(cmd, config, accuracy, threads, f32, split, cfg_out, NULL, NULL);
}

/* ----------------------------------------------------------------- solve */

/* The message and exit status of a dg_hji_solve_plan / dg_hji_solve_file that failed with s at step;
 * times: --times's text. */
static int solve_failed(dg_status s, dg_hji_file_step step, const dg_err *e, const char *times) {
    switch (step) {
    case DG_HJI_FILE_COUNT: cli_error("hji solve", "--times and --slices: %s", e->msg); return EXIT_USAGE;
    case DG_HJI_FILE_TIMES: cli_error("hji solve", "--times: %s; got %s", e->msg, DG_ECHO(times)); break;
    case DG_HJI_FILE_STATIONARY: cli_error("hji solve", "--times: %s", e->msg); break;
    case DG_HJI_FILE_MEMORY:
        cli_error("hji solve", "%s; lower grid.n (or --slices, --times, or use --float32)", e->msg);
        return EXIT_USAGE;
    case DG_HJI_FILE_DISK: cli_error("hji solve", "%s; lower --slices or grid.n (or use --float32)", e->msg); break;
    case DG_HJI_FILE_SOLVE: return cli_fail("hji solve", e, s == DG_ERR_ARG ? EXIT_USAGE : EXIT_FAIL);
    default: return cli_fail("hji solve", e, 0);
    }
    return dg_status_exit(s);
}

/* The JSON line of a solve of p into a file (r) (rank 0): its game, size, times and speed; a stationary
 * game's convergence. */
static int solve_report(const dg_hji_problem *p, const dg_hji_file_result *r, const char *config) {
    const dg_hji_stats st = r->stats;
    dg_json j = {cJSON_CreateObject(), 0};
    dg_json_game(&j, p->name, dg_hji_problem_source(p));
    dg_json_add(&j, j.root, "nodes", dg_json_number("%.0f", (double)p->grid.nodes));
    dg_json_add(&j, j.root, "t_end", dg_json_number("%.9g", p->t_end));
    dg_json_add(&j, j.root, "times", dg_json_number("%.0f", r->nt));
    dg_json_add(&j, j.root, "steps", dg_json_number("%.0f", (double)st.steps));
    dg_json_add(&j, j.root, "stages", dg_json_number("%.0f", st.stages));
    dg_json_add(&j, j.root, "seconds", dg_json_number("%.4f", st.seconds));
    dg_json_add(&j, j.root, "cell_updates", dg_json_number("%.0f", st.cell_updates));
    dg_json_add(&j, j.root, "cell_updates_per_s", dg_json_number("%.4g", st.updates_per_s));
    dg_json_add(&j, j.root, "threads", dg_json_number("%.0f", st.threads));
    if (dg_dist_size() > 1) {   /* the ranks, and the boxes along each axis: "2x2x1" */
        char cut[8 * DG_HJI_MAX_DIMS] = "";
        for (int k = 0; k < p->grid.ndim; k++) cli_catf(cut, sizeof cut, "%s%d", k ? "x" : "", r->cuts[k]);
        dg_json_add(&j, j.root, "ranks", dg_json_number("%.0f", dg_dist_size()));
        dg_json_add(&j, j.root, "cut", cJSON_CreateString(cut));
    }
    if (p->opts.warm) dg_json_add(&j, j.root, "warm_t", dg_json_number("%.9g", p->opts.warm_t));  /* --warm's start */
    if (p->stationary) {
        dg_json_add(&j, j.root, "method", cJSON_CreateString(p->opts.method == DG_HJI_METHOD_SWEEP ? "sweep" : "march"));
        dg_json_add(&j, j.root, "converged", cJSON_CreateBool(st.converged));
        dg_json_add(&j, j.root, "iterations", dg_json_number("%.0f", (double)st.iterations));
        dg_json_add(&j, j.root, "residual", dg_json_number("%.4g", st.residual));
        dg_json_add(&j, j.root, "tol", dg_json_number("%.4g", p->opts.tol));
        if (p->opts.method != DG_HJI_METHOD_SWEEP) dg_json_add(&j, j.root, "t", dg_json_number("%.6g", st.t));
    }
    const int rc = cli_json_print(&j, "hji solve");
    if (p->stationary && !st.converged)
        fprintf(stderr, "difgames: hji solve: warning: %s did not converge (residual %.3g, tol %.3g): raise t_end "
                "(march) or solver.max_sweeps (sweep)\n", config, st.residual, p->opts.tol);
    return rc;
}

static int hji_solve(int argc, char **argv) {
    const char *config, *out, *accuracy, *warm;
    cli_list times;
    int slices, threads, f32, rc;
    cli_opt opts[] = {
        CLI_IN("--config", &config, "FILE", "the game's HJI config (configs/hji/*.yaml)", .req = 1),
        CLI_OUT("--out", &out, "FILE", "the value file (.safetensors)", .req = 1),
        CLI_LIST("--times", &times, "T1,T2,...", -INFINITY, INFINITY, "also store the value at these increasing "
                 "earlier times, in (0, t_end)", .max = DG_HJI_MAX_TIMES - 1),
        /* 11: time-to-go 0, t_end/10, .., t_end */
        CLI_INT("--slices", &slices, "N", 1, DG_HJI_MAX_TIMES - 1, "also store the value at the first step past each "
                "of N evenly spaced times-to-go from 0 to t_end (1: t_end only, a stationary value)", .def = "11"),
        CLI_STR("--accuracy", &accuracy, "A", "overrides the config's accuracy"),
        CLI_INT("--threads", &threads, "N", 0, 4096, "overrides solver.threads (0: OpenMP's default, one per core)"),
        CLI_FLAG("--float32", &f32, "solve in single precision"),
        CLI_IN("--warm", &warm, "V0", "start from this value file's value (hji solve's, same game and grid): a "
               "stationary solve from any such value (e.g. before an obstacle moved); a finite horizon only from its "
               "own value at an earlier t_end, going on from there (no --slices samples then)"),
        CLI_END,
    };
    if (!cli_parse(&rc, "hji solve", argc, argv, opts, SOLVE_HELP)) return rc;
    dg_cfg *cfg = NULL;
    dg_hji_problem *p = NULL;
    if (cli_make_parent("hji solve", "--out", out) ||   /* before the solve, not after */
        !(p = load_problem("hji solve", config, accuracy, cli_given(opts, "--threads") ? threads : -1, f32,
                           dg_dist_size() > 1, &cfg))) {
        free(times.v);
        return EXIT_USAGE;
    }
    double *w0 = NULL;   /* --warm's value, p->opts.warm */
    if (warm) {
        dg_err we = {0};
        const dg_status ws = dg_dist_size() > 1
                                 ? dg_err_set(&we, DG_ERR_ARG, "a warm start solves in one process, not under mpirun")
                                 : dg_hji_warm_load(warm, p, config, &w0, &we);
        if (ws != DG_OK) {
            cli_error("hji solve", "--warm: %s", we.msg);
            rc = ws == DG_ERR_NOMEM ? dg_status_exit(ws) : EXIT_USAGE;   /* a bad file is bad input */
            free(times.v);
            dg_hji_problem_free(p);
            dg_cfg_free(cfg);
            return rc;
        }
    }
    const dg_hji_file_opts fo = {.slices = slices, .ntimes = times.n, .times = times.v, .f32 = f32, .label = config,
                                 .cfg = cfg};
    dg_hji_file_result r;
    dg_err e = {0};
    char banner[256], dims[96] = "";  /* " 101x101x51" */
    bar b = {.bar = {.tty = isatty(2)}, .banner = banner};
    dg_status s = dg_hji_solve_plan(p, &fo, &r, &e);
    if (s == DG_OK) {
        for (int k = 0; k < p->grid.ndim; k++) cli_catf(dims, sizeof dims, "%s%d", k ? "x" : " ", p->grid.n[k]);
        /* the scheme that runs: a noisy game's is the diffusion scheme, where accuracy does not apply */
        char scheme[96];
        if (dg_hji_game_noisy(&p->game))
            snprintf(scheme, sizeof scheme, "the monotone diffusion scheme, %d candidates per input component",
                     p->opts.controls);
        else snprintf(scheme, sizeof scheme, "%s", dg_hji_accuracy_name(dg_hji_accuracy_of(&p->opts)));
        snprintf(banner, sizeof banner, "solving %s: grid%s, t_end %g, memory about %.1f MiB, %s\n", p->name, dims,
                 p->t_end, r.memory / 1048576.0, scheme);
        if (dg_dist_rank() == 0) {  /* under mpirun the other ranks solve in silence */
            p->opts.progress = on_progress;
            p->opts.progress_user = &b;
        }
        s = dg_hji_solve_file(p, &fo, out, &r, &e);
    }
    if (s != DG_OK) {
        rc = solve_failed(s, r.step, &e, times.text ? times.text : "");
    } else if (dg_dist_rank() == 0) {  /* rank 0 wrote the file and prints */
        fprintf(stderr, "wrote %s\n", out);
        rc = solve_report(p, &r, config);
    }
    free(w0);
    free(times.v);
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

/* A value the strategies read, from --value: a grid's value file (hji solve, tabulate) or a network
 * (hji learn's value.safetensors, recognised by its metadata format), as a source. */
typedef struct value_in {
    int                 net;              /* 1: a network                                          */
    dg_hji_value_slices vs;               /* a grid's: its stored times                            */
    dg_hji_learn_net    ln;               /* a network, evaluated in this copy's precision         */
    dg_hji_source       src;
} value_in;

/* CLI_RERUN_F64 when path is a network trained in f64 and this is the float copy (as hji tabulate:
 * the double copy evaluates it, main.c), else 0. */
static int value_rerun(const char *path) {
    int f64 = 0;
    return path && dg_hji_learn_probe(path, &f64) && f64 && !DG_REAL_F64 ? CLI_RERUN_F64 : 0;
}

/* The value at path (option opt) for p (config names p's file) into v: 0, or the exit status after
 * one error line. */
static int value_in_load(const char *cmd, const char *opt, const char *path, const dg_hji_problem *p,
                         const char *config, value_in *v) {
    memset(v, 0, sizeof *v);
    if (!dg_hji_learn_probe(path, NULL)) {
        if (p->grid.ndim > DG_HJI_GRID_MAX_DIMS) {  /* (hji play loads such a problem for a network) */
            cli_error(cmd, "%s %s is not a network of hji learn: %s has %d state dimensions and no grid (a grid's "
                      "value has at most %d)", opt, path, p->name, p->grid.ndim, DG_HJI_GRID_MAX_DIMS);
            return EXIT_USAGE;
        }
        const int rc = value_load(cmd, path, p, config, &v->vs);
        if (!rc) v->src = dg_hji_source_slices(&p->grid, &v->vs.slices);
        return rc;
    }
    dg_err e = {0};
    v->net = 1;
    if (dg_hji_learn_load(path, p, &v->ln, &e) == DG_OK && dg_hji_learn_source(&v->ln, p, &v->src, &e) == DG_OK)
        return 0;
    cli_error(cmd, "%s: %s", opt, e.msg);
    return e.status == DG_ERR_NOMEM ? EXIT_FAIL : EXIT_USAGE;
}

static void value_in_free(value_in *v) {
    dg_hji_value_slices_free(&v->vs);
    dg_hji_learn_net_free(&v->ln);
    memset(v, 0, sizeof *v);
}

/* The JSON fields that say what value a command read: a grid's stored times, or "value": "network". */
static void value_in_json(dg_json *j, const value_in *v) {
    if (v->net) dg_json_add(j, j->root, "value", cJSON_CreateString("network"));
    else dg_json_add(j, j->root, "value_times", dg_json_number("%.0f", v->vs.slices.nt));
}

/* A network at path (option opt) for p tabulated at its horizon on p's grid into a value in memory
 * (vf) and, when out is not NULL, the node values alone into *out (malloc'd): 0, or the exit status
 * after one error line. */
static int net_tabulate(const char *cmd, const char *opt, const char *path, const dg_hji_problem *p, double tau,
                        dg_hji_value *vf, double **out) {
    value_in v;
    int rc = value_in_load(cmd, opt, path, p, NULL, &v);
    if (rc) return rc;
    dg_err e = {0};
    double *vals = malloc((size_t)p->grid.nodes * sizeof *vals);
    const double t = tau >= 0 ? tau : v.src.horizon;
    if (!vals) {
        cli_error(cmd, "out of memory for %lld nodes", (long long)p->grid.nodes);
        rc = EXIT_FAIL;
    } else if (dg_hji_source_tabulate(&v.src, &p->grid, t, vals, &e) != DG_OK ||
               (vf && dg_hji_value_make(p, 1, &t, vals, path, vf, &e) != DG_OK)) {
        rc = cli_fail(cmd, &e, 0);
    }
    value_in_free(&v);
    if (!rc && out) *out = vals;
    else free(vals);
    return rc;
}

/* --3d's view from --level and --view (AZ,EL): 0, or EXIT_USAGE after one error line. */
static int plot_view(const cli_opt *opts, int three, double level, const cli_list *view, dg_hji_iso_view *vw) {
    *vw = (dg_hji_iso_view){.level = level, .azimuth = DG_HJI_ISO_AZIMUTH, .elevation = DG_HJI_ISO_ELEVATION};
    if (!three && (cli_given(opts, "--view") || cli_given(opts, "--level"))) {
        cli_error("hji plot", "--%s is for the 3-D figure: add --3d", cli_given(opts, "--view") ? "view" : "level");
        return EXIT_USAGE;
    }
    if (!view->v) return 0;
    if (view->n != 2 || fabs(view->v[1]) > 90) {
        cli_error("hji plot", "--view %s: want AZ,EL, an azimuth and an elevation in degrees (the elevation in "
                  "[-90, 90])", DG_ECHO(view->text));
        return EXIT_USAGE;
    }
    vw->azimuth = view->v[0];
    vw->elevation = view->v[1];
    return 0;
}

static int hji_plot(int argc, char **argv) {
    const char *value, *out, *at_s, *config, *learned;
    int rc, three = 0;
    double level = 0;
    cli_list view = {0};
    cli_opt opts[] = {
        CLI_IN("--value", &value, "FILE", "the value file of hji solve (or hji tabulate), or a network of hji learn "
               "(value.safetensors, with --config)", .req = 1),
        CLI_IN("--learned", &learned, "NET", "a network of hji learn whose zero set is drawn beside --value's (with "
               "--config)"),
        CLI_IN("--config", &config, "FILE", "the game's HJI config a network was trained on: its grid (a network "
               "alone is drawn on it), its game"),
        CLI_OUT("--out", &out, "FILE.png", "the image (--3d: a PDF when FILE ends in .pdf)",
                .otherwise = "the value file's path with .png (--3d: _3d.png) for .safetensors"),
        CLI_AT(&at_s),
        CLI_FLAG("--3d", &three, "draw the level set of a value of 3 axes or more as a shaded surface in three "
                 "dimensions (axes 0, 1, 2; more axes: the slice at --at, the axes after the first three)"),
        CLI_DOUBLE("--level", &level, "X", -INFINITY, INFINITY, "--3d: the level set {V = X} drawn", .def = "0"),
        CLI_LIST("--view", &view, "AZ,EL", -360, 360, "--3d: the view's azimuth and elevation in degrees, as "
                 "MATLAB's view(AZ, EL)", .max = 2, .otherwise = "-37.5,30 (view(3))"),
        CLI_END,
    };
    if (!cli_parse(&rc, "hji plot", argc, argv, opts, PLOT_HELP)) return rc;
    dg_hji_iso_view vw;
    if ((rc = plot_view(opts, three, level, &view, &vw))) {
        free(view.v);
        return rc;
    }
    free(view.v);
    if (three && learned) {
        cli_error("hji plot", "--learned draws a network's zero set beside a value's on the 2-D figure: not with --3d");
        return EXIT_USAGE;
    }
    const int value_net = dg_hji_learn_probe(value, NULL);
    if ((value_net || learned) && !config) {
        cli_error("hji plot", "%s is a network of hji learn: it needs --config FILE (its game and grid)",
                  value_net ? "--value" : "--learned");
        return EXIT_USAGE;
    }
    if (value_net && learned) {
        cli_error("hji plot", "--learned draws a network beside a grid's value: --value %s is a network too",
                  DG_ECHO(value));
        return EXIT_USAGE;
    }
    if (config && !value_net && !learned) {
        cli_error("hji plot", "--config is for a network (--value NET or --learned NET)");
        return EXIT_USAGE;
    }
    if ((rc = value_rerun(value)) || (rc = value_rerun(learned))) return rc;  /* an f64 network: the double copy */
    dg_cfg *cfg = NULL;
    dg_hji_problem *p = NULL;
    if (config && !(p = load_problem("hji plot", config, NULL, -1, 0, 0, &cfg))) return EXIT_USAGE;
    dg_hji_value vf = {0};
    double *lv = NULL;
    dg_err e = {0};
    if (value_net) {
        rc = net_tabulate("hji plot", "--value", value, p, -1, &vf, NULL);
    } else if (!(rc = value_open("hji plot", value, &vf)) && learned) {
        if (dg_hji_value_check(&vf, p, config, &e) != DG_OK) rc = cli_fail("hji plot", &e, EXIT_USAGE);
        else rc = net_tabulate("hji plot", "--learned", learned, p, vf.times[vf.nt - 1], NULL, &lv);
    }
    double at[DG_HJI_MAX_DIMS];
    char path[DG_PATH_MAX];
    if (rc) {
    } else if (dg_hji_grid_slice_at(&vf.grid, at_s, at, &e) != DG_OK) {
        cli_error("hji plot", "--at: %s", e.msg);
        rc = EXIT_USAGE;
    } else if (out && dg_path_join(path, sizeof path, NULL, out, &e) != DG_OK) {
        cli_error("hji plot", "--out: %s", e.msg);
        rc = EXIT_USAGE;
    } else if (!out && beside_value("hji plot", value, three ? "_3d.png" : ".png", path, sizeof path)) {
        rc = EXIT_USAGE;
    } else if (three ? dg_hji_plot_iso(&vf, at, &vw, path, &e) != DG_OK
                     : dg_hji_plot_learned(&vf, at, lv, path, &e) != DG_OK) {
        rc = cli_fail("hji plot", &e, e.status == DG_ERR_NOMEM ? EXIT_FAIL : EXIT_USAGE);
    } else {
        fprintf(stderr, "wrote %s\n", path);
    }
    free(lv);
    dg_hji_value_close(&vf);
    dg_hji_problem_free(p);
    dg_cfg_free(cfg);
    return rc;
}

/* ------------------------------------------------------------------ play */

/* The JSON line of a play of p (res) with the value's slices vs: its outcome and settings. */
static int play_report(const dg_hji_problem *p, const dg_hji_sim_result *res, const value_in *vi,
                       int cost, double t_max, double layer) {
    dg_json j = {cJSON_CreateObject(), 0};
    dg_json_game(&j, p->name, dg_hji_problem_source(p));
    dg_json_add(&j, j.root, "outcome", cJSON_CreateString(cost ? "end" : res->captured ? "capture" : "escape"));
    dg_json_add(&j, j.root, "capture_time", dg_json_number("%.9g", res->captured ? res->capture_time : NAN));
    dg_json_add(&j, j.root, "payoff", dg_json_number("%.9g", res->payoff));
    dg_json_add(&j, j.root, "value_x0", dg_json_number("%.9g", res->value0));
    dg_json_add(&j, j.root, "t_max", dg_json_number("%.6g", t_max));
    dg_json_add(&j, j.root, "dt", dg_json_number("%.6g", res->dt));
    value_in_json(&j, vi);
    dg_json_add(&j, j.root, "boundary_layer", dg_json_number("%.6g", layer));
    dg_json_add(&j, j.root, "u_player", cJSON_CreateString(p->u_name ? p->u_name : "u"));
    dg_json_add(&j, j.root, "d_player", cJSON_CreateString(p->d_name ? p->d_name : "d"));
    return cli_json_print(&j, "hji play");
}

/* hji play's options (the parsed table) */
typedef struct play_args {
    const char *config, *value, *out, *gif;
    cli_list    from;
    double      t_max, dt, layer;
    int         max_steps, t_max_given;
} play_args;

/* The play of a.config's game p from a.from, its value read from a.value, into csv_path (and a.gif);
 * 0 or the exit status. */
static int play_run(const play_args *a, dg_hji_problem *p, const char *csv_path) {
    const int cost = dg_hji_game_degree(&p->game) && p->payoff == DG_HJI_PAYOFF_COST;
    double t_max = a->t_max_given ? a->t_max : 2 * p->t_end;
    if (a->from.n != p->grid.ndim) {
        cli_error("hji play", "--from: %s needs %d coordinates; got %s", p->name, p->grid.ndim, DG_ECHO(a->from.text));
        return EXIT_USAGE;
    }
    if (cost && !p->stationary) {  /* a finite-horizon game of degree ends at t_end */
        if (a->t_max_given) {
            cli_error("hji play", "--t-max: %s is a game with a running cost over t_end = %g, which ends there",
                      a->config, p->t_end);
            return EXIT_USAGE;
        }
        t_max = p->t_end;
    }
    if (a->gif && p->grid.ndim > DG_HJI_GRID_MAX_DIMS) {
        cli_error("hji play", "--gif: %s has %d state dimensions and no grid to draw the value on (at most %d)",
                  p->name, p->grid.ndim, DG_HJI_GRID_MAX_DIMS);
        return EXIT_USAGE;
    }
    value_in vi;
    int rc = value_in_load("hji play", "--value", a->value, p, a->config, &vi);
    if (rc) return rc;
    const dg_hji_play_opts po = {.t_max = t_max, .dt = a->dt, .max_steps = a->max_steps, .layer = a->layer,
                                 .csv_path = csv_path, .gif_path = a->gif};
    dg_hji_sim_result res;
    dg_hji_file_step step;
    dg_err e = {0};
    const dg_status s = dg_hji_play_sources(p, &vi.src, NULL, a->from.v, &po, &res, &step, &e);
    if (s != DG_OK && step == DG_HJI_FILE_STEPS) {  /* the CSV's rows, bounded before anything is written */
        cli_error("hji play", "--t-max %g / --dt %g is %.3g steps, more than --max-steps %d (one CSV row each)",
                  t_max, res.dt, t_max / res.dt, a->max_steps);
        rc = EXIT_USAGE;
    } else if (s != DG_OK) {
        rc = cli_fail("hji play", &e, 0);
    } else {
        fprintf(stderr, "wrote %s%s%s\n", csv_path, a->gif ? " and " : "", a->gif ? a->gif : "");
        if (dg_hji_game_degree(&p->game))
            fprintf(stderr, "payoff along the path %.6g, V(x0) %.6g (difference %.3g)\n", res.payoff, res.value0,
                    res.payoff - res.value0);
        rc = play_report(p, &res, &vi, cost, t_max, a->layer);
    }
    value_in_free(&vi);
    return rc;
}

static int hji_play(int argc, char **argv) {
    play_args a;
    int rc;
    cli_opt opts[] = {
        CLI_IN("--config", &a.config, "FILE", "the game's HJI config", .req = 1),
        CLI_IN("--value", &a.value, "FILE", "its value file (hji solve), or a network of hji learn "
               "(value.safetensors: the strategies from its gradient)", .req = 1),
        CLI_LIST("--from", &a.from, "X1,X2,...", -INFINITY, INFINITY, "the start state, one coordinate per axis",
                 .max = DG_HJI_MAX_DIMS, .req = 1),
        CLI_OUT("--out", &a.out, "FILE.csv", "the trajectory", .otherwise = "the value file's path with _play.csv for "
                ".safetensors"),
        CLI_OUT("--gif", &a.gif, "FILE.gif", "also draw the game as a GIF"),
        CLI_DOUBLE("--t-max", &a.t_max, "S", 0, INFINITY, "seconds simulated at most", .open = CLI_OPEN_LO,
                   .otherwise = "2 t_end"),
        CLI_DOUBLE("--dt", &a.dt, "S", 0, INFINITY, "the time step", .open = CLI_OPEN_LO, .otherwise = "automatic"),
        /* the CSV's rows */
        CLI_INT("--max-steps", &a.max_steps, "N", 1, DG_HJI_MAX_STEPS, "refuse a t-max / dt above N steps",
                .def = "100000"),
        CLI_DOUBLE("--boundary-layer", &a.layer, "EPS", 0, 1, "inputs saturate linearly where |(G^T p)_j| < EPS "
                   "|p| |G e_j| (against chattering); 0: bang-bang", .def = "0"),
        CLI_END,
    };
    if (!cli_parse(&rc, "hji play", argc, argv, opts, PLAY_HELP)) return rc;
    a.t_max_given = cli_given(opts, "--t-max") != NULL;
    char csv_path[DG_PATH_MAX];
    dg_err e = {0};
    dg_cfg *cfg = NULL;
    dg_hji_problem *p = NULL;
    int ok = 0;  /* csv_path named and checked */
    if (a.out) {
        ok = dg_path_join(csv_path, sizeof csv_path, NULL, a.out, &e) == DG_OK;
        if (!ok) cli_error("hji play", "--out: %s", e.msg);
    } else {  /* the default CSV against the inputs and --gif (the table checked a --out given) */
        const cli_path outs[] = {{"--out (default)", csv_path}, {"--gif", a.gif}};
        const cli_path ins[] = {{"--config", a.config}, {"--value", a.value}};
        ok = !beside_value("hji play", a.value, "_play.csv", csv_path, sizeof csv_path) &&
             !cli_check_outputs("hji play", outs, 2, ins, 2);
    }
    rc = EXIT_USAGE;
    if (ok && (rc = value_rerun(a.value))) {  /* an f64 network: the double copy plays it */
        free(a.from.v);
        return rc;
    }
    rc = EXIT_USAGE;
    /* for work at points: a problem of more than 6 axes, no grid, plays a network (its target's formula) */
    if (ok && (p = load_problem("hji play", a.config, NULL, -1, 0, 2, &cfg))) rc = play_run(&a, p, csv_path);
    free(a.from.v);
    dg_hji_problem_free(p);
    dg_cfg_free(cfg);
    return rc;
}

/* ---------------------------------------------------------------- versus */

static int hji_versus(int argc, char **argv) {
    const char *config, *ckpt, *hji, *value;
    int B, rc;
    double layer;
    cli_opt opts[] = {
        CLI_IN("--config", &config, "GAME.yaml", "the learning game's config", .req = 1),
        CLI_IN("--ckpt", &ckpt, "FILE", "its policy parameters (.safetensors)", .req = 1),
        CLI_IN("--hji", &hji, "HJI.yaml", "the HJI game's config", .req = 1),
        CLI_IN("--value", &value, "FILE", "its value file (hji solve), or a network of hji learn (evaluated in the "
               "learning game's precision)", .req = 1),
        CLI_INT("--batch", &B, "N", 1, 100000, "initial states", .def = "256"),
        CLI_KEY("--seed", "seed", .otherwise = "the config's seed"),
        CLI_DOUBLE("--boundary-layer", &layer, "EPS", 0, 1, "the HJBI inputs saturate linearly where |(G^T p)_j| < "
                   "EPS |p| |G e_j| (as hji play); 0: bang-bang", .def = "0"),
        CLI_END,
    };
    if (!cli_parse(&rc, "hji versus", argc, argv, opts, VERSUS_HELP)) return rc;
    dg_run s;
    if ((rc = cli_load_opts(&s, config, opts))) return rc;
    dg_policy pol;
    dg_params *p = NULL;
    dg_cfg *hcfg = NULL;
    dg_hji_problem *hp = NULL;
    value_in vi = {0};
    dg_err e = {0};
    if (!(hp = load_problem("hji versus", hji, NULL, -1, 0, 0, &hcfg))) { rc = EXIT_USAGE; goto done; }
    if (dg_hji_link_check(hp, s.env, &e) != DG_OK) {  /* the learning game the HJI game declares */
        cli_error("hji versus", "%s: %s", hp->link ? config : hji, e.msg);
        rc = EXIT_USAGE;
        goto done;
    }
    if (dg_run_policy_load(&s, ckpt, &pol, &p, &e) != DG_OK) { rc = cli_fail("hji versus", &e, 0); goto done; }
    if ((rc = value_in_load("hji versus", "--value", value, hp, hji, &vi))) goto done;
    dg_hji_versus_result r;
    if (dg_hji_versus(hp, &vi.src, layer, s.env, &pol, p, B, s.opts.seed, &r, &e) != DG_OK) {
        cli_error("hji versus", "%s", e.msg);
        rc = dg_status_exit(e.status);
        goto done;
    }
    const double t_end = vi.src.horizon;
    fprintf(stderr, "%d initial states; the HJBI value (t_end %g s) puts %.1f %% inside the capture tube\n", B,
            t_end, 100.0 * r.inside);
    dg_json j = {cJSON_CreateObject(), 0};
    dg_json_add(&j, j.root, "episodes", dg_json_number("%.0f", B));
    dg_json_add(&j, j.root, "inside_tube", dg_json_number("%.6g", r.inside));
    dg_json_add(&j, j.root, "t_end", dg_json_number("%.6g", t_end));
    value_in_json(&j, &vi);
    dg_json_add(&j, j.root, "boundary_layer", dg_json_number("%.6g", layer));
    dg_json_add(&j, j.root, "horizon_s", dg_json_number("%.6g", s.env->horizon * s.env->dt));
    if ((rc = cli_json_print(&j, "hji versus"))) goto done;
    fprintf(stderr, "%-34s %12s %18s\n", "pursuer vs evader", "capture rate", "mean capture time");
    for (int k = 0; k < DG_HJI_PAIRINGS; k++) {
        fprintf(stderr, "%-34s %12.3f %16.3f s\n", dg_hji_pairing_name(k), r.capture_rate[k], r.capture_time[k]);
        dg_json jk = {cJSON_CreateObject(), 0};
        dg_json_add(&jk, jk.root, "pairing", cJSON_CreateString(dg_hji_pairing_name(k)));
        dg_json_add(&jk, jk.root, "capture_rate", dg_json_number("%.6g", r.capture_rate[k]));
        dg_json_add(&jk, jk.root, "capture_time", dg_json_number("%.9g", r.capture_time[k]));
        dg_json_add(&jk, jk.root, "episodes", dg_json_number("%.0f", B));
        if ((rc = cli_json_print(&jk, "hji versus"))) goto done;
    }
done:
    value_in_free(&vi);
    dg_hji_problem_free(hp);
    dg_cfg_free(hcfg);
    dg_params_free(p);
    dg_run_free(&s);
    return rc;
}

/* ------------------------------------------------------------ learn, tabulate */

/* The metrics of a run (n iterations) into path as CSV; DG_OK or e set. */
static dg_status learn_csv(const char *path, const dg_hji_learn_metrics *m, int n, dg_err *e) {
    dg_csv w;
    dg_status s = dg_csv_begin(&w, path, e);
    if (s != DG_OK) return s;
    dg_csv_col(&w, "iteration", DG_CSV_INT);
    static const char *const COLS[] = {"loss", "residual", "boundary", "tau_max", "seconds"};
    dg_csv_cols(&w, COLS, NULL, 5, DG_CSV_G9);
    for (int i = 0; i < n; i++) {
        dg_csv_num(&w, m[i].iteration);
        dg_csv_num(&w, m[i].loss);
        dg_csv_num(&w, m[i].residual);
        dg_csv_num(&w, m[i].boundary);
        dg_csv_num(&w, m[i].tau_max);
        dg_csv_num(&w, m[i].seconds);
    }
    return dg_csv_commit(&w, e);
}

static int hji_learn(int argc, char **argv) {
    const char *config, *out, *resume;
    int iterations, points, threads, bench, quiet, rc;
    cli_opt opts[] = {
        CLI_IN("--config", &config, "FILE", "the game's HJI config (configs/hji/*.yaml), its learn.* keys"),
        CLI_OUT("--out", &out, "DIR", "the run's folder (value.safetensors, metrics.csv, resume.safetensors)"),
        CLI_STR("--resume", &resume, "DIR", "go on with the run in DIR from its resume.safetensors (written every "
                "learn.resume_every iterations and at the end), with the config, points and shards stored there; "
                "--iterations may raise the number of iterations. The same bits as a run never stopped."),
        CLI_INT("--iterations", &iterations, "N", 0, 100000000, "overrides learn.iterations"),
        CLI_INT("--points", &points, "N", 1, 1 << 22, "overrides learn.points"),
        CLI_INT("--threads", &threads, "N", 1, DG_HJI_LEARN_MAX_SHARDS, "overrides learn.threads (the shards)"),
        CLI_FLAG("--bench", &bench, "time the iterations and print ms_per_iteration and gflops; write nothing"),
        CLI_QUIET(&quiet, "no progress line"),
        CLI_END,
    };
    if (!cli_parse(&rc, "hji learn", argc, argv, opts, LEARN_HELP)) return rc;
    const int writer = dg_dist_rank() == 0;   /* under mpirun rank 0 alone writes and prints */
    quiet |= !writer;
    if (resume && (config || out || bench || cli_given(opts, "--points") || cli_given(opts, "--threads"))) {
        cli_error("hji learn", "--resume DIR takes the run's own config, points and shards; only --iterations may "
                  "change");
        return EXIT_USAGE;
    }
    if (!resume && !config) {
        cli_error("hji learn", "--config FILE is required (or --resume DIR)");
        return EXIT_USAGE;
    }
    if (resume) out = resume;
    if (!bench && !out) {
        cli_error("hji learn", "--out DIR is required (or --bench)");
        return EXIT_USAGE;
    }
    dg_cfg *cfg = NULL;
    dg_hji_learn_opts o;
    char net_path[DG_PATH_MAX], csv_path[DG_PATH_MAX], res_path[DG_PATH_MAX], label[DG_PATH_MAX + 32];
    char *yaml = NULL;
    size_t yaml_len = 0;
    dg_err e = {0};
    if (!bench && (dg_path_join(net_path, sizeof net_path, out, "value.safetensors", &e) != DG_OK ||
                   dg_path_join(csv_path, sizeof csv_path, out, "metrics.csv", &e) != DG_OK ||
                   dg_path_join(res_path, sizeof res_path, out, "resume.safetensors", &e) != DG_OK)) {
        cli_error("hji learn", "%s: %s", resume ? "--resume" : "--out", e.msg);
        return EXIT_USAGE;
    }
    int r_points = 0, r_threads = 0;
    if (resume) {   /* the run's config, points and shards, stored in its resume file */
        dg_st_file *f = dg_st_load(res_path, &e);
        const char *y = f ? dg_st_meta(f, "config") : NULL, *pt = f ? dg_st_meta(f, "points") : NULL,
                   *th = f ? dg_st_meta(f, "threads") : NULL;
        snprintf(label, sizeof label, "%s (stored config)", res_path);
        if (f && y && *y && pt && th) {
            yaml = strdup(y);
            r_points = atoi(pt), r_threads = atoi(th);
        }
        if (!f) cli_error("hji learn", "--resume: %s", e.msg);
        else if (!yaml) cli_error("hji learn", "--resume: %s: not a resume file of hji learn (no config stored)", res_path);
        dg_st_free(f);
        if (!yaml) return EXIT_USAGE;
        config = label;
    }
    dg_hji_problem *p = load_problem_learn("hji learn", config, NULL, -1, 0, 2, &cfg, &o, yaml);
    free(yaml);
    yaml = NULL;
    if (!p) return EXIT_USAGE;
    if (dg_hji_problem_moving(p)) {   /* (dg_hji_learner_create refuses it too, without the file's name) */
        cli_error("hji learn", "%s: %s moves in time: hji learn learns fixed sets (hji solve takes it)", config,
                  dg_hji_problem_moving(p));
        dg_hji_problem_free(p);
        dg_cfg_free(cfg);
        return EXIT_USAGE;
    }
    if (o.precision != DG_REAL_F64) {  /* learn.precision: the other copy of the command trains (main.c) */
        dg_hji_problem_free(p);
        dg_cfg_free(cfg);
        if (o.precision == 1) return CLI_RERUN_F64;  /* the double copy reads the config again */
        cli_error("hji learn", "%s: learn.precision: f32, but the command runs in f64", config);  /* (never) */
        return EXIT_USAGE;
    }
    if (cli_given(opts, "--iterations")) o.iterations = iterations;
    if (cli_given(opts, "--points")) o.points = points;
    if (cli_given(opts, "--threads")) o.threads = threads;
    if (resume) o.points = r_points, o.threads = r_threads;
    dg_hji_learner *L = dg_hji_learner_create(p, &o, &e);
    dg_hji_learn_metrics *m = L ? calloc((size_t)o.iterations + 1, sizeof *m) : NULL;
    int n = 0;
    if (L && m && resume && dg_hji_learner_restore(L, res_path, m, o.iterations, &n, &e) != DG_OK) {
        rc = cli_fail("hji learn", &e, EXIT_USAGE);
        goto done;
    }
    if (L && !bench && dg_cfg_to_yaml(cfg, &yaml, &yaml_len, &e) != DG_OK) {
        rc = cli_fail("hji learn", &e, 0);
        goto done;
    }
    if (!L) {
        rc = cli_fail("hji learn", &e, e.status == DG_ERR_NOMEM ? EXIT_FAIL : EXIT_USAGE);
        goto done;
    }
    if (!m) {
        cli_error("hji learn", "out of memory for %d iterations' metrics", o.iterations);
        rc = EXIT_FAIL;
        goto done;
    }
    if (!bench && writer && dg_mkdirs(out, &e) != DG_OK) {
        cli_error("hji learn", "--out: %s", e.msg);
        rc = EXIT_USAGE;
        goto done;
    }
    cli_catch_stop();
    cli_bar b = {.tty = !quiet && !bench && isatty(2)};
    double secs = 0, flops = 0, cpu0 = dg_cpu_clock_s(), cpu1 = cpu0;
    const int n0 = n;
    for (; n < o.iterations && !(dg_dist_size() > 1 ? dg_dist_or(cli_stop) : cli_stop); n++) {
        /* (an interrupt stops every rank after the same iteration) */
        if (n == n0 + 1) cpu1 = dg_cpu_clock_s();  /* --bench leaves the first iteration out */
        if (!bench && writer && n > n0 && o.resume_every > 0 && n % o.resume_every == 0 &&
            dg_hji_learner_save(L, res_path, yaml, m, n, &e) != DG_OK) {
            if (b.tty) fputc('\n', stderr);
            rc = cli_fail("hji learn", &e, 0);
            goto done;
        }
        if (dg_hji_learner_step(L, &m[n], &e) != DG_OK) {
            if (b.tty) fputc('\n', stderr);
            rc = cli_fail("hji learn", &e, 0);
            goto done;
        }
        secs += m[n].seconds;
        flops += dg_hji_learner_flops(L);
        const double eta = secs / (n + 1 - n0) * (o.iterations - n - 1);
        cli_bar_draw(&b, (double)(n + 1) / o.iterations, n == 0, "iteration %d/%d  loss %.4g  residual %.4g  tau %.3g  "
                     "ETA %.1fs  ", n + 1, o.iterations, m[n].loss, m[n].residual, m[n].tau_max, eta);
    }
    if (b.tty) fputc('\n', stderr);
    dg_json j = {cJSON_CreateObject(), 0};
    if (!writer) {
        cJSON_Delete(j.root);
        if (cli_stop) rc = EXIT_INTERRUPTED;
        goto done;
    }
    if (bench) {   /* the iterations after the first (which sizes the tape), as given */
        const double t = n > 1 ? secs - m[0].seconds : secs, f = n > 1 ? flops * (n - 1) / n : flops;  /* n0 0 */
        const int k = n > 1 ? n - 1 : n;
        dg_json_add(&j, j.root, "ms_per_iteration", dg_json_number("%.4g", k ? 1e3 * t / k : 0));
        dg_json_add(&j, j.root, "gflops", dg_json_number("%.4g", t > 0 ? f / t / 1e9 : 0));
        /* the process's CPU time: on a shared machine the wall time counts the others' turns too */
        const double cpu = dg_cpu_clock_s() - (n > 1 ? cpu1 : cpu0);
        dg_json_add(&j, j.root, "cpu_ms_per_iteration", dg_json_number("%.4g", k ? 1e3 * cpu / k : 0));
        dg_json_add(&j, j.root, "points", dg_json_number("%.0f", o.points));
        dg_json_add(&j, j.root, "iterations", dg_json_number("%.0f", k));
        rc = cli_json_print(&j, "hji learn");
        goto done;
    }
    if (dg_hji_learn_save(dg_hji_learner_net(L), net_path, &e) != DG_OK || learn_csv(csv_path, m, n, &e) != DG_OK ||
        dg_hji_learner_save(L, res_path, yaml, m, n, &e) != DG_OK) {
        cJSON_Delete(j.root);
        rc = cli_fail("hji learn", &e, 0);
        goto done;
    }
    if (!quiet) fprintf(stderr, "wrote %s, %s, %s\n", net_path, csv_path, res_path);
    dg_json_game(&j, p->name, dg_hji_problem_source(p));
    dg_json_add(&j, j.root, "iterations", dg_json_number("%.0f", n));
    dg_json_add(&j, j.root, "loss", dg_json_number("%.6g", n ? m[n - 1].loss : 0));
    dg_json_add(&j, j.root, "residual", dg_json_number("%.6g", n ? m[n - 1].residual : 0));
    dg_json_add(&j, j.root, "seconds", dg_json_number("%.4f", secs));
    dg_json_add(&j, j.root, "ms_per_iteration", dg_json_number("%.4g", n > n0 ? 1e3 * secs / (n - n0) : 0));
    rc = cli_json_print(&j, "hji learn");
    if (!rc && cli_stop) rc = EXIT_INTERRUPTED;
done:
    free(yaml);
    free(m);
    dg_hji_learner_free(L);
    dg_hji_problem_free(p);
    dg_cfg_free(cfg);
    return rc;
}

static int hji_tabulate(int argc, char **argv) {
    const char *value, *config, *out;
    int f32, rc;
    cli_opt opts[] = {
        CLI_IN("--value", &value, "NET", "the network of hji learn (value.safetensors)", .req = 1),
        CLI_IN("--config", &config, "FILE", "the game's HJI config: its grid and t_end", .req = 1),
        CLI_OUT("--out", &out, "FILE", "the value file (.safetensors)", .req = 1),
        CLI_FLAG("--float32", &f32, "write float32 values"),
        CLI_END,
    };
    if (!cli_parse(&rc, "hji tabulate", argc, argv, opts, TABULATE_HELP)) return rc;
    const cli_path outs[] = {{"--out", out}}, ins[] = {{"--value", value}, {"--config", config}};
    if (cli_check_outputs("hji tabulate", outs, 1, ins, 2) || cli_make_parent("hji tabulate", "--out", out))
        return EXIT_USAGE;
    {  /* the network's precision: an f64 one is evaluated by the double copy of the command (main.c) */
        dg_err pe = {0};
        dg_st_file *f = dg_st_load(value, &pe);  /* unreadable: dg_hji_learn_load says why, below */
        const char *prec = f ? dg_st_meta(f, "precision") : NULL;
        const int f64 = prec && !strcmp(prec, "f64");
        dg_st_free(f);
        if (f64 && !DG_REAL_F64) return CLI_RERUN_F64;
    }
    dg_cfg *cfg = NULL;
    dg_hji_problem *p = load_problem("hji tabulate", config, NULL, -1, 0, 0, &cfg);
    if (!p) return EXIT_USAGE;
    dg_err e = {0};
    dg_hji_learn_net net;
    const int64_t N = p->grid.nodes;
    const int nx = p->grid.ndim;
    double *x = NULL, *tau = NULL, *v = NULL;
    char *yaml = NULL;
    size_t yaml_len = 0;
    if (dg_hji_learn_load(value, p, &net, &e) != DG_OK) {
        rc = cli_fail("hji tabulate", &e, e.status == DG_ERR_NOMEM ? EXIT_FAIL : EXIT_USAGE);
        goto done;
    }
    if (!(x = malloc((size_t)N * (size_t)nx * sizeof(double))) || !(tau = malloc((size_t)N * sizeof(double))) ||
        !(v = malloc((size_t)N * sizeof(double)))) {
        cli_error("hji tabulate", "out of memory for %lld nodes", (long long)N);
        rc = EXIT_FAIL;
        goto done;
    }
    for (int64_t i = 0; i < N; i++) {
        dg_hji_grid_point(&p->grid, i, x + i * nx);
        tau[i] = p->t_end;
    }
    if (dg_hji_learn_eval(&net, p, N, x, tau, v, &e) != DG_OK || dg_cfg_to_yaml(cfg, &yaml, &yaml_len, &e) != DG_OK ||
        dg_hji_value_write(out, p, 1, &p->t_end, NULL, v, f32, yaml, &e) != DG_OK) {
        rc = cli_fail("hji tabulate", &e, 0);
        goto done;
    }
    fprintf(stderr, "wrote %s\n", out);
    rc = 0;
done:
    free(yaml);
    free(x), free(tau), free(v);
    dg_hji_learn_net_free(&net);
    dg_hji_problem_free(p);
    dg_cfg_free(cfg);
    return rc;
}

int cmd_hji(int argc, char **argv) {
    static const cli_cmd CMDS[] = {
        {"solve", hji_solve, NULL, "solve a game's value function (configs/hji/*.yaml) and write it"},
        {"plot", hji_plot, NULL, "draw a value file: its zero level sets, or a game of degree's level sets"},
        {"play", hji_play, NULL, "play both players' equilibrium strategies from a start state"},
        {"versus", hji_versus, NULL, "learned policies against the HJBI equilibrium strategies"},
        {"learn", hji_learn, NULL, "train a value network on the HJI residual (docs/neural.md)"},
        {"tabulate", hji_tabulate, NULL, "a learned value on the config's grid, written as a value file"},
#ifdef DG_HAVE_VIEWER
        {"view", cmd_hji_view, NULL, "a window on a value: slices, sliders, equilibrium play from a click (SDL2)"},
#endif
    };
    int rc;
    const cli_cmd *c = cli_command(&rc, "hji", CMDS, (int)(sizeof CMDS / sizeof CMDS[0]), argc, argv, HELP_HEAD,
                                   HELP_TAIL);
    return c ? c->fn(argc - 1, argv + 1) : rc;
}
