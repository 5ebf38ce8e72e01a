/* The registry of games, and env creation from a config. */
#include <stdlib.h>
#include <string.h>

#include "envs/games.h"

static const dg_game *const GAMES[] = {
    &dg_game_reach,
    &dg_game_chase,
    &dg_game_pixel,
    &dg_game_duel_simple,
};

int dg_game_count(void) { return (int)(sizeof GAMES / sizeof GAMES[0]); }
const dg_game *dg_game_at(int i) { return i >= 0 && i < dg_game_count() ? GAMES[i] : NULL; }

const dg_game *dg_game_find(const char *name) {
    for (int i = 0; i < dg_game_count(); i++)
        if (strcmp(GAMES[i]->name, name) == 0) return GAMES[i];
    return NULL;
}

dg_env *dg_env_create(dg_cfg *cfg, dg_err *e) {
    const char *name;
    if (dg_cfg_get_str_req(cfg, "game", &name, e)) return NULL;
    const dg_game *g = dg_game_find(name);
    if (!g) {
        char list[256] = "";
        for (int i = 0; i < dg_game_count(); i++) {
            if (i) strncat(list, ", ", sizeof list - strlen(list) - 1);
            strncat(list, GAMES[i]->name, sizeof list - strlen(list) - 1);
        }
        dg_cfg_error(cfg, "game", e, "unknown game '%s' (known: %s)", name, list);
        return NULL;
    }
    return dg_env_create_game(g, cfg, e);
}

dg_env *dg_env_create_game(const dg_game *g, dg_cfg *cfg, dg_err *e) {
    if (dg_cfg_has(cfg, "game")) dg_cfg_mark_used(cfg, "game");
    dg_env *env = calloc(1, sizeof *env);
    if (!env) {
        dg_err_set(e, DG_ERR_NOMEM, "out of memory");
        return NULL;
    }
    env->game = g;
    if (g->create(env, cfg, e) != DG_OK) {
        dg_env_free(env);
        return NULL;
    }
    return env;
}

void dg_env_free(dg_env *env) {
    if (!env) return;
    if (env->game && env->game->destroy) env->game->destroy(env);
    free(env);
}
