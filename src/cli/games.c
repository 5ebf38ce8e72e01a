/* difgames games: the registered games. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int cmd_games(int argc, char **argv) {
    const cli_opt opts[] = {{NULL, NULL, NULL, NULL, NULL, NULL}};
    const int prc = cli_parse("games", argc, argv, opts,
                              "usage: difgames games\n\nLists the registered games (the config key `game:`).\n\n"
                              "options:\n");
    if (prc) return prc == CLI_HELP ? 0 : prc;
    int w = 0;  /* the names in one column */
    for (int i = 0; i < dg_game_count(); i++)
        if ((int)strlen(dg_game_at(i)->name) > w) w = (int)strlen(dg_game_at(i)->name);
    for (int i = 0; i < dg_game_count(); i++)
        printf("%-*s  %s\n", w, dg_game_at(i)->name, dg_game_at(i)->summary);
    return 0;
}
