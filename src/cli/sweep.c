/* difgames sweep: a settings x seeds study of training runs, one after another, N at a time, or
 * over MPI ranks from a shared queue; then summary.csv and summary.png (library: sweep.h). */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

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

typedef struct ctx {
    dg_sweep *s;
    int       quiet, rank;
    double    t0;
} ctx;

/* Trains run i unless it is done; 0, EXIT_INTERRUPTED or the failure's status (message printed). */
static int one(ctx *c, int i, int *trained) {
    char setting[512], dir[DG_PATH_MAX];
    long long seed;
    dg_err e = {0};
    if (dg_sweep_done(c->s, i)) return 0;
    if (dg_sweep_run_dir(c->s, i, setting, sizeof setting, dir, sizeof dir, &seed, &e) != DG_OK) {
        cli_error("sweep", "%s", e.msg);
        return EXIT_USAGE;
    }
    const double t = dg_clock_s();
    const dg_status st = dg_sweep_train(c->s, i, c->rank, NULL, NULL, &cli_stop, &e);
    if (st == DG_ERR_INTERRUPTED) return EXIT_INTERRUPTED;
    if (st != DG_OK) {
        cli_error("sweep", "run %d (%s): %s", i, dir, e.msg);
        return cli_exit_for(st);
    }
    (*trained)++;
    if (!c->quiet)
    {
        char sd[40] = "the config's seed";  /* dg_sweep_run_dir's -1: no --seeds */
        if (seed >= 0) snprintf(sd, sizeof sd, "seed %lld", seed);
        fprintf(stderr, "sweep: run %d/%d %s %s done in %.1f s (rank %d)\n", i + 1, dg_sweep_count(c->s), setting, sd,
                dg_clock_s() - t, c->rank);
    }
    return 0;
}

int cmd_sweep(int argc, char **argv) {
    /* --set repeats: taken out before the other options are parsed */
    const char *setv[DG_SWEEP_MAX_KEYS + 1];
    int nset = 0, n2 = 0;
    char **av = malloc((size_t)(argc + 1) * sizeof *av);
    if (!av) return EXIT_FAIL;
    for (int i = 0; i < argc; i++) {
        const int eq = !strncmp(argv[i], "--set=", 6);
        if (i && (eq || (!strcmp(argv[i], "--set") && i + 1 < argc))) {
            const char *v = eq ? argv[i] + 6 : argv[++i];
            if (nset > DG_SWEEP_MAX_KEYS) {
                cli_error("sweep", "--set: at most %d keys", DG_SWEEP_MAX_KEYS);
                free(av);
                return EXIT_USAGE;
            }
            setv[nset++] = v;
        } else {
            av[n2++] = argv[i];
        }
    }
    av[n2] = NULL;
    const char *config = NULL, *out = NULL, *seeds = NULL, *jobs_s = NULL, *dummy = NULL;
    int resume = 0, quiet = 0;
    const cli_opt opts[] = {
        CLI_CONFIG(&config),
        {"--out", &out, NULL, "DIR", "the sweep's folder", "required"},
        {"--set", &dummy, NULL, "KEY=V1,V2,...", "a config key and its values (repeat for more keys; lists in brackets: "
         "KEY=[16,16],[32,32])", NULL},
        {"--seeds", &seeds, NULL, "A,B,...", "the seeds of every setting", "the config's seed"},
        {"--jobs", &jobs_s, NULL, "N", "runs at a time without MPI (each with its train.threads)", "1"},
        {"--resume", NULL, &resume, NULL, "go on with the sweep in --out: skip finished runs, resume the others", NULL},
        CLI_QUIET(&quiet, "no progress lines, only the final JSON line"),
        CLI_END,
    };
    int prc = cli_parse("sweep", n2, av, opts, HELP);
    free(av);
    if (prc) return prc == CLI_HELP ? 0 : prc;
    if (!config || !out) {
        cli_error("sweep", "--config FILE and --out DIR are required (see --help)");
        return EXIT_USAGE;
    }
    int jobs = 1;
    if (jobs_s && !cli_int("sweep", "--jobs", jobs_s, 1, 256, &jobs)) return EXIT_USAGE;
    dg_sweep *s = calloc(1, sizeof *s);
    if (!s) return EXIT_FAIL;
    s->config = config;
    s->out = out;
    dg_err e = {0};
    int rc = 0;
    for (int k = 0; k < nset && !rc; k++)
        if (dg_sweep_add(s, setv[k], &e) != DG_OK) rc = EXIT_USAGE;
    if (!rc && seeds && dg_sweep_seeds(s, seeds, &e) != DG_OK) rc = EXIT_USAGE;
    if (rc) {
        cli_error("sweep", "%s", e.msg);
        free(s);
        return rc;
    }
    const int N = dg_sweep_count(s), ns = s->nseeds ? s->nseeds : 1;
    /* every setting's config loads (a bad key or value is refused before any training), each read
     * once: the first setting's, when it says f64, is handed to the double copy (main.c) */
    int prec = 0;
    for (int i = 0; i < N && !rc; i += ns) {
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
            (i == 0 ? cli_doc(&d, config, NULL, 0, sets, s->nkeys, &e)
                    : dg_run_doc_read(&d, config, NULL, 0, sets, s->nkeys, &e)) != DG_OK) {
            cli_error("sweep", "%s", e.msg);
            rc = EXIT_USAGE;
            break;
        }
        if (i == 0) prec = d.precision;  /* train.precision: one for the whole sweep */
        if (i == 0 && prec == 1 && !DG_REAL_F64) {  /* an f64 sweep goes to the double copy before a game (a plugin) is made */
            cli_doc_hand(&d);
            break;
        }
        if (d.precision != prec) {
            cli_error("sweep", "train.precision differs between settings: sweep each precision on its own");
            dg_run_doc_free(&d);
            rc = EXIT_USAGE;
        } else if (dg_run_open(&r, &d, &e) != DG_OK) {
            cli_error("sweep", "%s", e.msg);
            rc = EXIT_USAGE;
        } else {
            dg_run_free(&r);
        }
    }
    if (!rc && prec == 1 && !DG_REAL_F64) {  /* the double copy of the command runs it (main.c) */
        free(s);
        return CLI_RERUN_F64;
    }
    for (int i = 0; i < N && !rc && !resume; i++)
        if (dg_sweep_done(s, i) || dg_sweep_started(s, i)) {
            char setting[512], dir[DG_PATH_MAX];
            long long seed;
            dg_sweep_run_dir(s, i, setting, sizeof setting, dir, sizeof dir, &seed, &e);
            cli_error("sweep", "--out: %s holds a run already: --resume to go on with the sweep, or another --out", dir);
            rc = EXIT_USAGE;
        }
    if (rc) {
        free(s);
        return rc;
    }
    cli_catch_stop();
    const int world = dg_dist_world_size(), rank = dg_dist_world_rank();
    ctx c = {.s = s, .quiet = quiet, .rank = rank, .t0 = dg_clock_s()};
    int trained = 0, done0 = 0;
    for (int i = 0; i < N; i++) done0 += dg_sweep_done(s, i);
    if (world > 1 || jobs == 1) {   /* one after another; under MPI from the ranks' shared queue */
        dg_dist_queue_open();
        for (int i; !rc && !cli_stop && (i = dg_dist_queue_next()) < N;) rc = one(&c, i, &trained);
        dg_dist_queue_close();
        trained = (int)dg_dist_sum_int(trained);
        dg_dist_barrier();
    } else {   /* --jobs N: N processes take runs from a counter they share */
        int *next = mmap(NULL, sizeof *next, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        int *count = next == MAP_FAILED ? NULL : next;
        if (!count) {
            cli_error("sweep", "--jobs: cannot share a counter between processes");
            free(s);
            return EXIT_FAIL;
        }
        *count = 0;
        fflush(NULL);
        pid_t pid[256];
        int nj = 0;
        for (int j = 0; j < jobs; j++) {
            const pid_t p = fork();
            if (p == 0) {
                int r = 0, t = 0;
                for (int i; !r && !cli_stop && (i = __atomic_fetch_add(count, 1, __ATOMIC_SEQ_CST)) < N;) r = one(&c, i, &t);
                fflush(NULL);
                _exit(r ? r : cli_stop ? EXIT_INTERRUPTED : 0);
            }
            if (p < 0) {
                cli_error("sweep", "--jobs: cannot start job %d", j + 1);
                rc = EXIT_FAIL;
                break;
            }
            pid[nj++] = p;
        }
        for (int j = 0; j < nj; j++) {
            int ws = 0;
            while (waitpid(pid[j], &ws, 0) < 0) {}
            const int code = WIFEXITED(ws) ? WEXITSTATUS(ws) : EXIT_FAIL;
            if (code && (!rc || rc == EXIT_INTERRUPTED)) rc = code;
        }
        munmap(next, sizeof *next);
        int now = 0;
        for (int i = 0; i < N; i++) now += dg_sweep_done(s, i);
        trained = now - done0;
    }
    if (!rc && cli_stop) rc = EXIT_INTERRUPTED;
    if (rc == EXIT_INTERRUPTED && rank == 0)
        fprintf(stderr, "difgames sweep: interrupted; the same command with --resume goes on\n");
    if (!rc && rank == 0) {
        if (dg_sweep_summary(s, &e) != DG_OK) {
            rc = cli_fail("sweep", &e, 0);
        } else {
            if (!quiet) fprintf(stderr, "wrote %s/summary.csv, %s/summary.png\n", out, out);
            cli_json j = {cJSON_CreateObject(), 0};
            cli_json_add(&j, j.root, "runs", cli_json_number("%.0f", N));
            cli_json_add(&j, j.root, "trained", cli_json_number("%.0f", trained));
            cli_json_add(&j, j.root, "skipped", cli_json_number("%.0f", done0));
            cli_json_add(&j, j.root, "ranks", cli_json_number("%.0f", world));
            cli_json_add(&j, j.root, "jobs", cli_json_number("%.0f", world > 1 ? 1 : jobs));
            cli_json_add(&j, j.root, "seconds", cli_json_number("%.3f", dg_clock_s() - c.t0));
            char path[DG_PATH_MAX];
            snprintf(path, sizeof path, "%s/summary.csv", out);
            cli_json_add(&j, j.root, "summary", cJSON_CreateString(path));
            rc = cli_json_print(&j, "sweep");
        }
    }
    free(s);
    return rc;
}
