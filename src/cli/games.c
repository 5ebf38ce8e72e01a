/* difgames games: the registered games, and the games written as model files. */
#include <glob.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

#define MODELS "configs/models"  /* where the repository keeps its model files */

static const char HELP[] =
    "usage: difgames games\n"
    "\n"
    "Lists the registered games (the config key `game:`), then `game: model`: a game\n"
    "written as a model file (docs/models.md), and the model files in " MODELS "/\n"
    "(run from the repository) with their games' names (model.name) and the\n"
    "solvers their sections serve. `difgames keys GAME` (and `keys model`) lists a\n"
    "game's keys.\n"
    "\n"
    "options:\n";

/* One model file: its game's name (model.name) and the solvers its sections serve, or why it cannot be
 * read. */
static void print_model_file(const char *path, int w) {
    dg_err e = {0};
    dg_cfg *c = dg_cfg_load(path, &e);
    const char *name = "model", *game = NULL;
    if (c && (dg_cfg_get(c, "game", DG_CFG_STR, &game, &e) || !game || strcmp(game, "model"))) {
        dg_cfg_free(c);
        return;  /* not a model file */
    }
    if (!c) {
        printf("  %-*s  %s  (unreadable: %s)\n", w, "?", path, e.msg);
        return;
    }
    dg_cfg_get(c, "model.name", DG_CFG_STR, &name, &e);
    const int bptt = dg_cfg_has(c, "model.observe") && dg_cfg_has(c, "model.costs") && dg_cfg_has(c, "model.reset");
    const char *payoff = NULL;
    dg_cfg_get(c, "payoff", DG_CFG_STR, &payoff, &e);
    const int grid = dg_cfg_has(c, "model.target") || (payoff && !strcmp(payoff, "cost"));
    printf("  %-*s  %-30s %s%s%s\n", w, name, path, bptt ? "train" : "", bptt && grid ? ", " : "",
           grid ? "hji solve" : "");
    dg_cfg_free(c);
}

int cmd_games(int argc, char **argv) {
    cli_opt opts[] = {CLI_END};
    int rc;
    if (!cli_parse(&rc, "games", argc, argv, opts, HELP)) return rc;
    const dg_game *model = dg_game_model();
    int w = (int)strlen(model->name);  /* the names in one column */
    for (int i = 0; i < dg_game_count(); i++)
        if ((int)strlen(dg_game_at(i)->name) > w) w = (int)strlen(dg_game_at(i)->name);
    for (int i = 0; i < dg_game_count(); i++)
        printf("%-*s  %s\n", w, dg_game_at(i)->name, dg_game_at(i)->summary);
    printf("%-*s  %s\n", w, model->name, model->summary);
    glob_t g;
    if (glob(MODELS "/*.yaml", 0, NULL, &g) != 0) {
        printf("\nno model files in ./" MODELS "/ (the repository's are there: run from its root)\n");
        return 0;
    }
    printf("\nmodel files (game: model) in " MODELS "/:\n");
    for (size_t i = 0; i < g.gl_pathc; i++) print_model_file(g.gl_pathv[i], w);
    globfree(&g);
    return 0;
}
