/* difgames games: the registered games. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int cmd_games(int argc, char **argv) {
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        puts("usage: difgames games\n\nLists the registered games (the config key `game:`).");
        return 0;
    }
    if (argc > 1) {
        cli_error("games", "takes no arguments (see --help)");
        return EXIT_USAGE;
    }
    for (int i = 0; i < dg_game_count(); i++)
        printf("%-8s %s\n", dg_game_at(i)->name, dg_game_at(i)->summary);
    return 0;
}
