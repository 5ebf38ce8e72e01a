/* difgames keys: every config key with its type, default, range and doc
 * (docs/config.md is this command's --markdown output). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "difgames/hji.h"
#include "difgames/hji_learn.h"

static const char USAGE[] =
    "usage: difgames keys [GAME | hji [GAME]] [--markdown]\n"
    "\n"
    "Lists the config keys: the training options every game reads (seed, train.*,\n"
    "policy.*), those of `difgames pg` (pg.*), the safety filter's (safety.*), then\n"
    "each game's (env.*, render.*, loss.*), then the HJI solver's (game, accuracy,\n"
    "mode, solver.*, obstacles),\n"
    "hji learn's (learn.*) and each HJI game's (t_end, grid.*, its constants), with\n"
    "type, default, range and a line of doc. GAME: only that game's keys (model: a\n"
    "model file's game's); hji: only the HJI solver's and hji learn's; hji GAME:\n"
    "only that HJI game's.\n"
    "\n"
    "options:\n";

#define MAX_KEYS 64

/* s with each '|' escaped, as a markdown table cell */
static void md_cell(const char *s, int code) {
    fputs(code ? "| `" : "| ", stdout);
    for (; *s; s++) fputs(*s == '|' ? (code ? "|" : "\\|") : (char[]){*s, 0}, stdout);
    fputs(code ? "` " : " ", stdout);
}

static void print_keys(const dg_key *keys, int n, int markdown) {
    char type[64], def[160], range[96];
    if (markdown) puts("| key | type | default | range | meaning |\n|---|---|---|---|---|");
    for (int i = 0; i < n; i++) {
        const dg_key *k = &keys[i];
        dg_key_type_str(k, type, sizeof type);
        dg_key_default_str(k, def, sizeof def);
        dg_key_range_str(k, range, sizeof range);
        if (markdown) {
            md_cell(k->name, 1);
            md_cell(type, 0);
            md_cell(def, 1);
            md_cell(range, 0);
            md_cell(k->doc ? k->doc : "", 0);
            puts("|");
        }
        else printf("  %-24s %-20s %-16s %-30s %s\n", k->name, type, def, range, k->doc ? k->doc : "");
    }
}

/* a heading (md in markdown, else plain), then the table of keys */
static void print_section(const char *md, const char *plain, const dg_key *keys, int n, int markdown) {
    puts(markdown ? md : plain);
    print_keys(keys, n, markdown);
}

static void print_game(const dg_game *g, int markdown) {
    dg_key keys[MAX_KEYS];
    int n = dg_game_keys(g, keys, MAX_KEYS);
    if (n > MAX_KEYS) n = MAX_KEYS;
    if (markdown) printf("\n## `game: %s`\n\n%s.\n\n", g->name, g->summary);
    else printf("\ngame: %s (%s)\n", g->name, g->summary);
    if (g == dg_game_model())  /* its other keys are the file's own */
        printf("%sThe rest of the model: section (state, inputs, dynamics, costs, ...) is the file format of\n"
               "%sdocs/models.md; each cost `model.costs.NAME` is weighted by `loss.NAME` (a float >= 0, default 1).%s\n",
               markdown ? "" : "  ", markdown ? "" : "  ", markdown ? "\n" : "");
    print_keys(keys, n, markdown);
}

/* the keys of the HJI solver: those of every HJI game (unless only), then each game's, or only game's */
static int print_hji(const char *game, int markdown) {
    dg_key keys[MAX_KEYS];
    if (game && dg_hji_game_keys(game, keys, MAX_KEYS) < 0) {
        cli_error("keys", "unknown hji game %s (see difgames keys hji)", DG_ECHO(game));
        return EXIT_USAGE;
    }
    if (!game) {
        int n;
        const dg_key *common = dg_hji_keys(&n);
        print_section("\n## HJI solver (every HJI game)\n\n"
                      "Configs of `difgames hji` (configs/hji/); docs/hji.md describes the games and the solver.\n"
                      "`obstacles` is a list of shapes; `obstacles[i].*` are the keys of each.\n",
                      "\nhji (every HJI game):", common, n, markdown);
        const dg_key *learn = dg_hji_learn_keys(&n);
        print_section("\n## Learned values (`difgames hji learn`, every HJI game)\n\n"
                      "A value network trained on the HJI residual; docs/neural.md describes the method.\n",
                      "\nhji learn (every HJI game):", learn, n, markdown);
    }
    for (int i = 0; dg_hji_problem_name(i); i++) {
        const char *name = dg_hji_problem_name(i);
        if (game && strcmp(game, name)) continue;
        int n = dg_hji_game_keys(name, keys, MAX_KEYS);
        if (n > MAX_KEYS) n = MAX_KEYS;
        if (markdown) printf("\n## `game: %s` (HJI)\n\n%s.\n\n", name, dg_hji_game_summary(name));
        else printf("\nhji game: %s (%s)\n", name, dg_hji_game_summary(name));
        print_keys(keys, n, markdown);
    }
    return 0;
}

int cmd_keys(int argc, char **argv) {
    int markdown, rc;
    cli_opt opts[] = {
        CLI_FLAG("--markdown", &markdown, "as docs/config.md has them"),
        CLI_END,
    };
    const char *args[2] = {NULL, NULL};
    int nargs;
    if (!cli_parse_args(&rc, "keys", argc, argv, opts, USAGE, args, 2, &nargs)) return rc;
    const int hji = nargs > 0 && !strcmp(args[0], "hji");
    const char *game = hji ? args[1] : args[0];
    if (!hji && nargs > 1) {
        cli_error("keys", "unexpected argument %s (see --help)", DG_ECHO(args[1]));
        return EXIT_USAGE;
    }
    if (hji) return print_hji(game, markdown);
    const dg_game *g = !game ? NULL : !strcmp(game, "model") ? dg_game_model() : dg_game_find(game);
    if (game && !g) {
        cli_error("keys", "unknown game %s (see difgames games; a model file's game: difgames keys model)", DG_ECHO(game));
        return EXIT_USAGE;
    }
    if (g) {
        print_game(g, markdown);
        return 0;
    }
    int n;
    const dg_key *train = dg_train_keys(&n);
    print_section("# Config keys\n\n"
                  "Every key a training config reads, with its type, default and range. Generated by\n"
                  "`difgames keys --markdown > docs/config.md` from the tables the library reads (the\n"
                  "`config_doc` test fails when the two differ); do not edit by hand. Ranges: `[` and `]`\n"
                  "include the end, `(` and `)` exclude it. A key not listed is an error (did you mean...?).\n"
                  "The HJI solver's keys (`difgames hji`) follow the learning games'.\n\n"
                  "## Training (every game)\n", "training (every game):", train, n, markdown);
    const dg_key *env_keys = dg_env_keys(&n);
    print_section("\n## A game of your own (every command that plays a game)\n\n"
                  "A plugin is code: load only a shared object you built or trust (README, \"Add your own game\").\n",
                  "\na game of your own (a plugin is code):", env_keys + 2, n - 2, markdown);
    const dg_key *pg = dg_pg_keys(&n);
    print_section("\n## Policy gradient (`difgames pg`, every game)\n\n"
                  "Read by `difgames pg` (its options override them); defaults are PPO's, and where\n"
                  "REINFORCE's differ the meaning says so: a key left out takes `pg.algo`'s default.\n",
                  "\npolicy gradient (difgames pg; a key left out takes pg.algo's default):", pg, n, markdown);
    const dg_key *safety = dg_safety_keys(&n);
    print_section("\n## Safety filter (every game of one learned player)\n\n"
                  "A value of `difgames hji solve` around the learned player's action (docs/safety.md): read by\n"
                  "`difgames eval` (`--safety` sets `safety.value`) and, with `safety.train`, by training.\n",
                  "\nsafety filter (docs/safety.md):", safety, n, markdown);
    for (int i = 0; i < dg_game_count(); i++) print_game(dg_game_at(i), markdown);
    print_game(dg_game_model(), markdown);
    return print_hji(NULL, markdown);
}
