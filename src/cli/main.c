/* difgames: the command-line tool (git-style subcommands). */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "difgames/dist.h"

static const char USAGE_HEAD[] =
    "usage: difgames <command> [options]\n"
    "\n"
    "Differentiable games: train a policy by backpropagation through whole episodes.\n"
    "\n"
    "commands:\n";
static const char USAGE_TAIL[] =
    "\n"
    "`difgames <command> --help` describes each.\n"
    "\n"
    "options:\n"
    "  -h, --help  print this help\n"
    "  --version   print the version\n"
    "\n"
    "exit status: 0 ok; 1 the job ran and failed (out of memory, non-finite numbers, a\n"
    "check above its tolerance); 2 bad usage or input (an option, config or input file,\n"
    "or an output that cannot be written), with one line naming it; 130 interrupted.\n";

/* OpenMP threads that wait for work spin by default (libgomp: 300 000 polls, about a
 * millisecond, before they sleep). Alone on the machine that saves microseconds a parallel
 * region; but two jobs started together on the same cores spin against each other's work, and
 * each runs 4-15x slower instead of 2x. The command lets them poll 1000 times (microseconds)
 * and then sleep, unless the user chose (OMP_WAIT_POLICY or GOMP_SPINCOUNT): measured by
 * bench/sharing.py, two air3d solves at once then take 2.0x one, not 14x, and one alone is
 * within 5 % of spinning (fully passive waiting costs a lone solve 10-15 %). libgomp reads
 * the variable once, when it is loaded, before main(); so the command sets it and executes
 * itself again (once: the second start finds it set). DIFGAMES_NO_REEXEC=1 skips it (e.g.
 * under valgrind, which would run the new image natively). */
/* The commands that split their work over MPI ranks. */
static int cli_dist_ok(int argc, char **argv) {
    return (argc > 2 && !strcmp(argv[1], "hji") && (!strcmp(argv[2], "solve") || !strcmp(argv[2], "learn"))) ||
           !strcmp(argv[1], "train") || !strcmp(argv[1], "sweep");
}

static void omp_short_spin(char **argv) {
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT") || getenv("DIFGAMES_NO_REEXEC")) return;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0 || n >= (ssize_t)sizeof self - 1) return;  /* cannot find ourselves: keep running */
    self[n] = '\0';
    if (setenv("GOMP_SPINCOUNT", "1000", 1) != 0) return;
    execv(self, argv);  /* returns only on failure: then run as we are, the policy unchanged */
}

/* The command's double copy (CMakeLists.txt: the command's code compiled again with DG_F64, its
 * names prefixed f64_): a config of train.precision: f64 runs there (cli_load). */
#define CLI_F64(name) int f64_##name(int argc, char **argv);
CLI_F64(cmd_train) CLI_F64(cmd_replay) CLI_F64(cmd_eval) CLI_F64(cmd_gradcheck) CLI_F64(cmd_games)
CLI_F64(cmd_keys) CLI_F64(cmd_bench) CLI_F64(cmd_hji) CLI_F64(cmd_pg) CLI_F64(cmd_sweep) CLI_F64(cmd_certify)
CLI_F64(cmd_export)
#ifdef DG_HAVE_VIEWER
CLI_F64(cmd_view) CLI_F64(cmd_play)
#endif
#undef CLI_F64

/* The commands, in the order the usage lists them. */
static const cli_cmd CMDS[] = {
    {"train", cmd_train, f64_cmd_train, "train a policy on a game       (difgames train --config configs/reach.yaml)"},
    {"replay", cmd_replay, f64_cmd_replay, "write an animated GIF of one episode of a trained policy"},
#ifdef DG_HAVE_VIEWER
    {"view", cmd_view, f64_cmd_view, "a window: the policy playing live, its loss terms and metrics (SDL2)"},
    {"play", cmd_play, f64_cmd_play, "a window: you drive one body against the learned player (SDL2)"},
#endif
    {"eval", cmd_eval, f64_cmd_eval, "loss, loss terms and metrics of a policy as JSON (and its gradient)"},
    {"gradcheck", cmd_gradcheck, f64_cmd_gradcheck, "finite differences against backward for a game"},
    {"games", cmd_games, f64_cmd_games, "list the games: built-in ones and model files (game: model)"},
    {"keys", cmd_keys, f64_cmd_keys, "every config key: type, default, range, doc (docs/config.md)"},
    {"bench", cmd_bench, f64_cmd_bench, "speed of a game: ms/epoch, env-steps/s, FLOP rate, tape memory"},
    {"hji", cmd_hji, f64_cmd_hji, "the HJBI grid solver: solve a differential game, plot, play its equilibrium"},
    {"pg", cmd_pg, f64_cmd_pg, "policy-gradient baseline (REINFORCE / PPO) and its sample count against BPTT"},
    {"sweep", cmd_sweep, f64_cmd_sweep, "a study of training runs (settings x seeds): summary.csv, summary.png"},
    {"certify", cmd_certify, f64_cmd_certify, "a learned pair against the HJBI equilibrium: value, policy cost, gap"},
    {"export", cmd_export, f64_cmd_export, "a grid value's feedback or a policy as plain C99 (P.h, P.c): no library"},
};

/* Runs command c (argv[0] its name): again in the double copy when its config says train.precision:
 * f64; under MPI a failed rank ends them all; results that never reached stdout are a failure. */
static int run_command(const cli_cmd *c, int argc, char **argv) {
    int rc = c->fn(argc, argv);
    if (rc == CLI_RERUN_F64) rc = c->fn64(argc, argv);  /* train.precision: f64 */
    if (rc == CLI_RERUN_F64) rc = EXIT_USAGE;            /* (never: cli_load's f64 copy) */
    dg_run_doc left;  /* a document the double copy did not take (it failed before its config) */
    if (cli_doc_take(&left)) dg_run_doc_free(&left);
    /* the other ranks may wait for this one: end them all (an interrupt stops every rank at the same
     * epoch or step: they end together) */
    if (rc && rc != EXIT_INTERRUPTED && dg_dist_size() > 1) {
        cli_error(c->name, "rank %d of %d failed (exit %d): ending every rank", dg_dist_rank(), dg_dist_size(), rc);
        dg_dist_abort(rc);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {  /* results that never arrived are a failure */
        cli_error(c->name, "cannot write the results to standard output");
        return rc ? rc : EXIT_FAIL;
    }
    return rc;
}

int main(int argc, char **argv) {
    omp_short_spin(argv);
    if (argc >= 2 && !strcmp(argv[1], "--version")) {
        puts("difgames " DG_VERSION);  /* CMake's project version */
        return 0;
    }
    int rc;
    const cli_cmd *c = cli_command(&rc, "", CMDS, (int)(sizeof CMDS / sizeof CMDS[0]), argc, argv, USAGE_HEAD,
                                   USAGE_TAIL);
    if (!c) return rc;
    if (!dg_dist_built() && dg_dist_launched()) {   /* every rank would do the whole job alone */
        fprintf(stderr, "difgames: started by an MPI launcher, but built without MPI (DG_MPI=OFF): run it "
                "without mpirun, or build with MPI (docs/scale.md)\n");
        return EXIT_USAGE;
    }
    /* under mpirun / srun: MPI started (docs/scale.md); a command that fails on any rank ends them all */
    if (dg_dist_init(&argc, &argv) > 1 && !cli_dist_ok(argc, argv)) {
        if (dg_dist_rank() == 0)
            fprintf(stderr, "difgames: %s does not run across MPI ranks (%d ranks): start it without "
                    "mpirun (commands that do: hji solve, hji learn, train, sweep)\n", argv[1], dg_dist_size());
        dg_dist_finalize();
        return EXIT_USAGE;
    }
    atexit(dg_dist_finalize);   /* nothing to do unless MPI was started (mpirun -np 1 too) */
    return run_command(c, argc - 1, argv + 1);
}
