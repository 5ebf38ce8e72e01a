/* difgames: the command-line tool (git-style subcommands). */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef DG_HAVE_VIEWER
#include "viewer/viewer.h"
#endif
#include "cli/cli.h"

static const char USAGE[] =
    "usage: difgames <command> [options]\n"
    "\n"
    "Differentiable games: train a policy by backpropagation through whole episodes.\n"
    "\n"
    "commands:\n"
    "  train      train a policy on a game       (difgames train --config configs/reach.yaml)\n"
    "  replay     write an animated GIF of one episode of a trained policy\n"
    "  view       a window: the policy playing live, its loss terms and metrics (SDL2)\n"
    "  play       a window: you drive one body against the learned player (SDL2)\n"
    "  eval       loss, loss terms and metrics of a policy as JSON (and its gradient)\n"
    "  gradcheck  finite differences against backward for a game\n"
    "  games      list the registered games\n"
    "  keys       every config key: type, default, range, doc (docs/config.md)\n"
    "  bench      speed of a game: ms/epoch, env-steps/s, FLOP rate, tape memory\n"
    "  hji        the HJBI grid solver: solve a differential game, plot, play its equilibrium\n"
    "  pg         policy-gradient baseline (REINFORCE / PPO) and its sample count against BPTT\n"
    "\n"
    "`difgames <command> --help` describes each.\n"
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
static void omp_short_spin(char **argv) {
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT") || getenv("DIFGAMES_NO_REEXEC")) return;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0 || n >= (ssize_t)sizeof self - 1) return;  /* cannot find ourselves: keep running */
    self[n] = '\0';
    if (setenv("GOMP_SPINCOUNT", "1000", 1) != 0) return;
    execv(self, argv);  /* returns only on failure: then run as we are, the policy unchanged */
}

int main(int argc, char **argv) {
    omp_short_spin(argv);
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        fputs(USAGE, argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : 0;
    }
    if (!strcmp(argv[1], "--version")) {
        puts("difgames 0.1.0");
        return 0;
    }
    static const struct { const char *name; int (*fn)(int, char **); } CMDS[] = {
#ifdef DG_HAVE_VIEWER
        {"view", cmd_view}, {"play", cmd_play},
#endif
        {"train", cmd_train}, {"replay", cmd_replay}, {"eval", cmd_eval},
        {"gradcheck", cmd_gradcheck}, {"games", cmd_games}, {"keys", cmd_keys}, {"bench", cmd_bench}, {"hji", cmd_hji}, {"pg", cmd_pg},
    };
    for (size_t i = 0; i < sizeof CMDS / sizeof CMDS[0]; i++)
        if (!strcmp(argv[1], CMDS[i].name)) {
            const int rc = CMDS[i].fn(argc - 1, argv + 1);
            if (fflush(stdout) != 0 || ferror(stdout)) {  /* results that never arrived are a failure */
                fprintf(stderr, "difgames %s: cannot write the results to standard output\n", argv[1]);
                return rc ? rc : EXIT_FAIL;
            }
            return rc;
        }
    fprintf(stderr, "difgames: unknown command '%s' (commands: train, replay, eval, gradcheck, games, keys, bench, "
                    "hji, pg; see difgames --help)\n", argv[1]);
    return EXIT_USAGE;
}
