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
    const char *name = g->name ? g->name : "?";
    if (!g->create || !g->reset || !g->observe || !g->step || !g->step_cost) {
        dg_err_set(e, DG_ERR_ARG, "game '%s': lacks the hook %s (create, reset, observe, step and step_cost are "
                   "required)", name, !g->create ? "create" : !g->reset ? "reset" : !g->observe ? "observe"
                   : !g->step ? "step" : "step_cost");
        free(env);
        return NULL;
    }
    if (g->create(env, cfg, e) != DG_OK) {
        dg_env_free(env);
        return NULL;
    }
    /* what the game declared must come with the hooks that serve it: no caller
     * ever calls a NULL hook */
    const char *bad = NULL;
    if (env->nplayers == 0) env->nplayers = 1;  /* a game that does not say has one player */
    if (env->state_dim < 1 || env->obs_dim < 1 || env->act_dim < 1 || env->horizon < 1)
        bad = "state_dim, obs_dim, act_dim and horizon must be >= 1";
    else if (env->nterms < 1 || env->nterms > DG_LOSS_MAX_TERMS) bad = "nterms must be 1 to DG_LOSS_MAX_TERMS";
    else if (env->nmetrics < 0 || env->nmetrics > DG_MAX_METRICS) bad = "nmetrics must be 0 to DG_MAX_METRICS";
    else if (env->nshapes < 0 || env->nshapes > DG_MAX_SHAPES) bad = "nshapes must be 0 to DG_MAX_SHAPES";
    else if (env->nmetrics > 0 && !g->metrics) bad = "it declares metrics (nmetrics > 0) but has no metrics hook";
    else if (env->nplayers != 1 && env->nplayers != 2) bad = "nplayers must be 1 or 2 (or 0, read as 1)";
    else if (env->nplayers == 2 && (!g->observe2 || env->obs2_dim < 1 || env->act2_dim < 1))
        bad = "a two-player game needs the observe2 hook, obs2_dim and act2_dim";
    else if (env->aux_dim < 0 || env->aux_user_dim < 0 || env->aux_user_dim > env->aux_dim)
        bad = "aux_user_dim must be 0 to aux_dim";
    else if (env->aux_user_dim > 0 && env->aux_user_dim < env->aux_dim && !g->complete_aux)
        bad = "users give only part of its aux (aux_user_dim < aux_dim) but it has no complete_aux hook";
    else if (env->aux_dim > 0 && !env->aux_name) bad = "it has episode constants (aux_dim > 0) but no aux_name";
    if (bad) {
        dg_err_set(e, DG_ERR_ARG, "game '%s': %s", name, bad);
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
