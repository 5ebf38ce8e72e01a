/* difgames sweep: a settings x seeds study of training runs, one after another, N at a time, or
 * over MPI ranks from a shared queue; then summary.csv and summary.png (library: sweep.h). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "difgames/core.h"
#include "difgames/dist.h"
#include "difgames/fileio.h"
#include "difgames/run.h"
#include "difgames/sweep.h"

static const char HELP[] =
    "usage: difgames sweep --config FILE --out DIR --set KEY=V1,V2,... [--set ...] [--seeds A,B,...]\n"
    "                      [--jobs N] [--resume] [--quiet]\n"
    "\n"
    "Trains the config once per combination of the --set values and seed (the first key varies\n"
    "slowest) into DIR/<KEY=V_KEY=V>/seed_N (each run's folder as `difgames train` writes it, and\n"
    "result.csv), then writes DIR/summary.csv (one row per run: the settings, seed, final loss, each\n"
    "game metric, seconds, and the MPI rank that ran it) and DIR/summary.png (final loss per\n"
    "setting, each setting named by its values, seeds as points, the median as a bar).\n"
    "The values of a --set are split at the commas outside brackets, so a list value is written\n"
    "in brackets: --set policy.hidden=[16,16],[32,32] is two settings.\n"
    "Alone it runs the runs one after another, or N at a time with --jobs N; under mpirun the ranks\n"
    "take runs from a shared queue that rank 0 holds. Interrupted (Ctrl-C), the same command with\n"
    "--resume skips the finished runs and resumes the others. The last line of stdout is one JSON\n"
    "object.\n";

/* dg_sweep_run's on_run (user: --quiet): a run's failure (or the pool's), or its progress line. */
static void on_run(const dg_sweep *s, int i, int rank, dg_status st, double seconds, const dg_err *e, void *user) {
    const int *quiet = user;
    if (st != DG_OK) {
        cli_error("sweep", "%s", e->msg);
        return;
    }
    char setting[512], dir[DG_PATH_MAX], sd[40] = "the config's seed";  /* dg_sweep_run_dir's -1: no --seeds */
    long long seed;
    if (*quiet || dg_sweep_run_dir(s, i, setting, sizeof setting, dir, sizeof dir, &seed, NULL) != DG_OK) return;
    if (seed >= 0) snprintf(sd, sizeof sd, "seed %lld", seed);
    fprintf(stderr, "sweep: run %d/%d %s %s done in %.1f s (rank %d)\n", i + 1, dg_sweep_count(s), setting, sd, seconds,
            rank);
}

/* Every setting's config loads (a bad key or value is refused before any training), all of one
 * train.precision: 0, CLI_RERUN_F64 for an f64 sweep in the float copy, or the exit status after
 * one error line. */
static int sweep_check(const dg_sweep *s) {
    const int N = dg_sweep_count(s), ns = s->nseeds ? s->nseeds : 1;
    int prec = 0;
    dg_err e = {0};
    for (int i = 0; i < N; i += ns) {  /* each setting's config read once */
        char setting[512], dir[DG_PATH_MAX];
        long long seed;
        dg_run r;
        dg_run_doc d;
        dg_run_set sets[DG_SWEEP_MAX_KEYS];
        int vi = i / ns;
        for (int k = s->nkeys - 1; k >= 0; k--) {
            sets[k] = (dg_run_set){s->key[k], s->value[k][vi % s->nvalues[k]]};
            vi /= s->nvalues[k];
        }
        if (dg_sweep_run_dir(s, i, setting, sizeof setting, dir, sizeof dir, &seed, &e) != DG_OK ||
            (i == 0 ? cli_doc(&d, s->config, NULL, 0, sets, s->nkeys, &e)
                    : dg_run_doc_read(&d, s->config, NULL, 0, sets, s->nkeys, &e)) != DG_OK) {
            cli_error("sweep", "%s", e.msg);
            return EXIT_USAGE;
        }
        if (i == 0 && d.precision == 1 && !DG_REAL_F64) {  /* an f64 sweep goes to the double copy, its first
                                                              * setting's config with it, before a game (a plugin) is made */
            cli_doc_hand(&d);
            return CLI_RERUN_F64;
        }
        const int differs = i > 0 && d.precision != prec;
        prec = d.precision;  /* train.precision: one for the whole sweep */
        if (differs) {
            dg_run_doc_free(&d);
            cli_error("sweep", "train.precision differs between settings: sweep each precision on its own");
            return EXIT_USAGE;
        }
        if (dg_run_open(&r, &d, &e) != DG_OK) {
            cli_error("sweep", "%s", e.msg);
            return EXIT_USAGE;
        }
        dg_run_free(&r);
    }
    return prec == 1 && !DG_REAL_F64 ? CLI_RERUN_F64 : 0;  /* the double copy of the command runs it (main.c) */
}

/* A new sweep (no --resume) into a folder that holds one of its runs: the error line, EXIT_USAGE;
 * else 0. */
static int sweep_fresh(const dg_sweep *s) {
    for (int i = 0; i < dg_sweep_count(s); i++)
        if (dg_sweep_done(s, i) || dg_sweep_started(s, i)) {
            char setting[512], dir[DG_PATH_MAX];
            long long seed;
            dg_sweep_run_dir(s, i, setting, sizeof setting, dir, sizeof dir, &seed, NULL);
            cli_error("sweep", "--out: %s holds a run already: --resume to go on with the sweep, or another --out", dir);
            return EXIT_USAGE;
        }
    return 0;
}

/* The sweep's runs trained (jobs at a time), then its summary and JSON line; 0 or the exit status. */
static int sweep_run(const dg_sweep *s, int jobs, int quiet) {
    cli_catch_stop();
    const double t0 = dg_clock_s();
    const int world = dg_dist_world_size();
    const dg_sweep_pool pool = {.jobs = jobs, .stop = &cli_stop, .on_run = on_run, .user = &quiet};
    dg_sweep_pool_result r;
    dg_err e = {0};
    dg_status st = dg_sweep_run(s, &pool, &r, &e);  /* a run's failure: on_run said why */
    if (st == DG_ERR_INTERRUPTED && dg_dist_world_rank() == 0)
        fprintf(stderr, "difgames sweep: interrupted; the same command with --resume goes on\n");
    if (st != DG_OK || dg_dist_world_rank() != 0) return dg_status_exit(st);
    if (dg_sweep_summary(s, &e) != DG_OK) return cli_fail("sweep", &e, 0);
    if (!quiet) fprintf(stderr, "wrote %s/summary.csv, %s/summary.png\n", s->out, s->out);
    dg_json j = {cJSON_CreateObject(), 0};
    dg_json_add(&j, j.root, "runs", dg_json_number("%.0f", dg_sweep_count(s)));
    dg_json_add(&j, j.root, "trained", dg_json_number("%.0f", r.trained));
    dg_json_add(&j, j.root, "skipped", dg_json_number("%.0f", r.skipped));
    dg_json_add(&j, j.root, "ranks", dg_json_number("%.0f", world));
    dg_json_add(&j, j.root, "jobs", dg_json_number("%.0f", world > 1 ? 1 : jobs));
    dg_json_add(&j, j.root, "seconds", dg_json_number("%.3f", dg_clock_s() - t0));
    char path[DG_PATH_MAX];
    snprintf(path, sizeof path, "%s/summary.csv", s->out);
    dg_json_add(&j, j.root, "summary", cJSON_CreateString(path));
    return cli_json_print(&j, "sweep");
}

int cmd_sweep(int argc, char **argv) {
    const char *config, *out, *seeds, *setv[DG_SWEEP_MAX_KEYS];
    int nset, jobs, resume, quiet, rc;
    cli_opt opts[] = {
        CLI_CONFIG(&config),
        CLI_STR("--out", &out, "DIR", "the sweep's folder", .req = 1),
        CLI_STRS("--set", setv, &nset, DG_SWEEP_MAX_KEYS, "KEY=V1,V2,...", "a config key and its values (repeat for "
                 "more keys; lists in brackets: KEY=[16,16],[32,32])"),
        CLI_STR("--seeds", &seeds, "A,B,...", "the seeds of every setting", .otherwise = "the config's seed"),
        CLI_INT("--jobs", &jobs, "N", 1, DG_SWEEP_MAX_JOBS, "runs at a time without MPI (each with its train.threads)",
                .def = "1"),
        CLI_FLAG("--resume", &resume, "go on with the sweep in --out: skip finished runs, resume the others"),
        CLI_QUIET(&quiet, "no progress lines, only the final JSON line"),
        CLI_END,
    };
    if (!cli_parse(&rc, "sweep", argc, argv, opts, HELP)) return rc;
    dg_sweep *s = calloc(1, sizeof *s);
    if (!s) return EXIT_FAIL;
    s->config = config;
    s->out = out;
    dg_err e = {0};
    for (int k = 0; k < nset && !rc; k++)
        if (dg_sweep_add(s, setv[k], &e) != DG_OK) rc = cli_fail("sweep", &e, EXIT_USAGE);
    if (!rc && seeds && dg_sweep_seeds(s, seeds, &e) != DG_OK) rc = cli_fail("sweep", &e, EXIT_USAGE);
    if (!rc) rc = sweep_check(s);
    if (!rc && !resume) rc = sweep_fresh(s);
    if (!rc) rc = sweep_run(s, jobs, quiet);
    free(s);
    return rc;
}
