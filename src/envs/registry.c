/* The registry of games, and env creation from a config. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envs/games.h"
#include "envs/model_game.h"

static const dg_game *const GAMES[] = {
    &dg_game_reach,
    &dg_game_chase,
    &dg_game_pixel,
    &dg_game_duel_simple,
    &dg_game_billiards,
    &dg_game_racing,
    &dg_game_pong,
    &dg_game_fishwar,
    &dg_game_merton,
};

/* env.dt and env.horizon: every game reads them, with the same bounds; the
 * defaults are the game's */
static const dg_key ENV_KEYS[] = {
    DG_K_F32("env.dt", dg_env, dt, 0.05f, 0, 10, 0, 1, "seconds per step"),
    DG_K_INT("env.horizon", dg_env, horizon, 60, 1, DG_MAX_HORIZON, "steps per episode (H)"),
    /* read by dg_env_create alone, into a const char * (not into the env) */
    {.name = "plugin", .type = DG_KEY_STR, .doc = "a game's shared object (FILE.so, a path with a '/'; a plugin is "
     "code): its game is played instead of a built-in one (game: may then name it)"},
};

/* loss term k of g as a key: a float weight >= 0 (into a float[DG_LOSS_MAX_TERMS]) */
static dg_key loss_key(const dg_game *g, int k) {
    return (dg_key){.name = g->loss[k].key, .type = DG_KEY_F32, .offset = (size_t)k * sizeof(float),
                    .def = g->loss[k].weight, .lo = 0, .hi = INFINITY, .hi_open = 1, .doc = g->loss[k].doc};
}

const dg_key *dg_env_keys(int *n) {
    *n = (int)(sizeof ENV_KEYS / sizeof ENV_KEYS[0]);
    return ENV_KEYS;
}

int dg_game_keys(const dg_game *g, dg_key *out, int max) {
    int n = 0;
    for (int i = 0; i < 2; i++, n++)
        if (n < max) {
            out[n] = ENV_KEYS[i];
            out[n].def = i == 0 ? g->dt : g->horizon;
        }
    for (int i = 0; i < g->nkeys; i++, n++)
        if (n < max) out[n] = g->keys[i];
    for (int k = 0; k < g->nloss; k++, n++)
        if (n < max) out[n] = loss_key(g, k);
    return n;
}

/* the index of the earlier term of g named by key, or -1 */
static int term_index(const dg_game *g, const char *key, int before) {
    for (int k = 0; k < before; k++)
        if (key && !strcmp(g->loss[k].key, key)) return k;
    return -1;
}

/* Reads the weights of env's first nterms terms into env->term_weights. */
static dg_status read_loss(dg_env *env, dg_cfg *cfg, dg_err *e) {
    const dg_game *g = env->game;
    float w[DG_LOSS_MAX_TERMS];
    for (int k = 0; k < env->nterms; k++) {
        dg_key key = loss_key(g, k);
        const int like = term_index(g, g->loss[k].like, k);
        if (like >= 0) key.def = w[like];
        dg_status st = dg_key_read(cfg, &key, w, e);
        if (st) return st;
        env->term_names[k] = g->loss[k].key + strlen("loss.");
        env->term_weights[k] = g->loss[k].evader ? -w[k] : w[k];
    }
    return DG_OK;
}

int dg_game_count(void) { return (int)(sizeof GAMES / sizeof GAMES[0]); }
const dg_game *dg_game_at(int i) { return i >= 0 && i < dg_game_count() ? GAMES[i] : NULL; }

const char *dg_env_source(const dg_env *env) {
    if (!env || !env->game) return "custom";
    if (dg_env_is_model(env)) return "model";
    if (env->plugin) return "plugin";
    return env->game->name && dg_game_find(env->game->name) == env->game ? "builtin" : "custom";
}

void dg_env_state_name(const dg_env *env, int k, char *buf, size_t size) {
    if (!buf || !size) return;
    const char *p = env ? env->state_names : NULL;
    for (int i = 0; p && i < k; i++) {  /* the k-th comma-separated entry */
        p = strchr(p, ',');
        if (p) p++;
    }
    const size_t len = p ? strcspn(p, ",") : 0;
    if (len) snprintf(buf, size, "%.*s", (int)len, p);
    else snprintf(buf, size, "x%d", k);
}

const dg_game *dg_game_find(const char *name) {
    for (int i = 0; i < dg_game_count(); i++)
        if (strcmp(GAMES[i]->name, name) == 0) return GAMES[i];
    return NULL;
}

/* the game of the shared object the config's plugin key names (the env closes it) */
static dg_env *env_create_plugin(dg_cfg *cfg, dg_err *e) {
    const char *path = NULL, *name = NULL;
    if (dg_key_read(cfg, &ENV_KEYS[2], &path, e)) return NULL;
    const dg_game *g;
    void *h;
    if (dg_game_plugin_open(path, &g, &h, e)) {
        char msg[DG_ERR_LEN];
        snprintf(msg, sizeof msg, "%s", e->msg);
        dg_cfg_error(cfg, "plugin", e, "%s", msg);
        return NULL;
    }
    int bad = 0;  /* game: may name the plugin's game, and no other */
    if (dg_cfg_has(cfg, "game") && (bad = dg_cfg_get(cfg, "game", DG_CFG_STR, &name, e) != DG_OK) == 0 &&
        (bad = strcmp(name, g->name) != 0))
        dg_cfg_error(cfg, "game", e, "is '%s', but the plugin %s plays '%s'", name, path, g->name);
    dg_env *env = bad ? NULL : dg_env_create_game(g, cfg, e);
    if (!env) dg_game_plugin_close(h);
    else env->plugin = h;
    return env;
}

dg_env *dg_env_create(dg_cfg *cfg, dg_err *e) {
    if (dg_cfg_has(cfg, "plugin")) return env_create_plugin(cfg, e);
    const char *name = NULL;
    if (dg_cfg_require(cfg, "game", e) || dg_cfg_get(cfg, "game", DG_CFG_STR, &name, e)) return NULL;
    if (strcmp(name, "model") == 0) return dg_model_env_create(cfg, e);  /* a model file's game */
    const dg_game *g = dg_game_find(name);
    if (!g) {
        char list[256] = "";
        for (int i = 0; i < dg_game_count(); i++) {
            if (i) strncat(list, ", ", sizeof list - strlen(list) - 1);
            strncat(list, GAMES[i]->name, sizeof list - strlen(list) - 1);
        }
        dg_cfg_error(cfg, "game", e, "unknown game '%s' (known: %s; a game written as a model file: game: model "
                     "and a model: section, configs/models/*.yaml, docs/models.md; a game of your own: --plugin "
                     "FILE.so)", name, list);
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
    const char *undeclared = NULL;
    for (int k = 0; k < g->nloss && !undeclared; k++)
        if (!g->loss[k].key || strncmp(g->loss[k].key, "loss.", 5) != 0 || !g->loss[k].key[5] ||
            (g->loss[k].like && term_index(g, g->loss[k].like, k) < 0))
            undeclared = g->loss[k].key ? g->loss[k].key : "(null)";
    if (!(g->dt > 0.0f && g->dt <= 10.0f) || g->horizon < 1 || g->horizon > DG_MAX_HORIZON || g->nkeys < 0 ||
        (g->nkeys > 0 && !g->keys) || g->nloss < 1 || g->nloss > DG_LOSS_MAX_TERMS || !g->loss || undeclared) {
        if (undeclared)
            dg_err_set(e, DG_ERR_ARG, "game '%s': loss term '%s' is not a key loss.NAME (or its like is no earlier "
                       "term)", name, undeclared);
        else
            dg_err_set(e, DG_ERR_ARG, "game '%s': its declaration needs dt in (0, 10], horizon in [1, 10000000], "
                       "keys for nkeys and 1 to DG_LOSS_MAX_TERMS loss terms", name);
        free(env);
        return NULL;
    }
    if (g->impl_size > 0 && !(env->impl = calloc(1, g->impl_size))) {
        free(env);
        dg_err_set(e, DG_ERR_NOMEM, "out of memory");
        return NULL;
    }
    dg_key dt = ENV_KEYS[0], horizon = ENV_KEYS[1];
    dt.def = g->dt;
    horizon.def = g->horizon;
    if (dg_key_read(cfg, &dt, env, e) || dg_key_read(cfg, &horizon, env, e) ||
        dg_keys_read(cfg, g->keys, g->nkeys, env->impl, e) || g->create(env, cfg, e) != DG_OK) {
        dg_env_free(env);
        return NULL;
    }
    if (env->nterms == 0) env->nterms = g->nloss;
    if (env->nterms < 1 || env->nterms > g->nloss) {
        dg_err_set(e, DG_ERR_ARG, "game '%s': create set nterms to %d, not 1 to its %d loss terms", name, env->nterms,
                   g->nloss);
        dg_env_free(env);
        return NULL;
    }
    if (read_loss(env, cfg, e)) {
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
    else if (env->nlines < 0 || (env->nlines > 0 && !env->lines)) bad = "nlines > 0 needs lines";
    else if (env->nmetrics > 0 && !g->metrics) bad = "it declares metrics (nmetrics > 0) but has no metrics hook";
    else if (env->nplayers < 1 || env->nplayers > DG_MAX_PLAYERS)
        bad = "nplayers must be 1 to DG_MAX_PLAYERS (or 0, read as 1)";
    else if (env->nplayers > 2 && !env->general_sum) bad = "a game of more than two players must be general-sum";
    else if (env->general_sum && env->nplayers < 2) bad = "a general-sum game needs two or more learned players";
    else if (env->nplayers >= 2 && (!g->observe2 || env->obs2_dim < 1 || env->act2_dim < 1))
        bad = "a two-player game needs the observe2 hook, obs2_dim and act2_dim";
    else if (env->nplayers > 2 && !g->observe_player) bad = "a game of more than two players needs observe_player";
    else if (env->aux_dim < 0 || env->aux_user_dim < 0 || env->aux_user_dim > env->aux_dim)
        bad = "aux_user_dim must be 0 to aux_dim";
    else if (env->aux_user_dim > 0 && env->aux_user_dim < env->aux_dim && !g->complete_aux)
        bad = "users give only part of its aux (aux_user_dim < aux_dim) but it has no complete_aux hook";
    else if (env->aux_dim > 0 && !env->aux_name) bad = "it has episode constants (aux_dim > 0) but no aux_name";
    else if (env->noise_dim < 0 || (env->noise_dim > 0 && !g->step_noise))
        bad = "noise_dim must be >= 0, and a noisy game (noise_dim > 0) needs the step_noise hook";
    env->player_obs[0] = env->obs_dim, env->player_act[0] = env->act_dim;
    if (env->nplayers >= 2) env->player_obs[1] = env->obs2_dim, env->player_act[1] = env->act2_dim;
    for (int p = 2; !bad && p < env->nplayers; p++)
        if (env->player_obs[p] < 1 || env->player_act[p] < 1) bad = "player_obs and player_act of each player must be >= 1";
    if (bad) {
        dg_err_set(e, DG_ERR_ARG, "game '%s': %s", name, bad);
        dg_env_free(env);
        return NULL;
    }
    return env;
}

dg_tensor *dg_env_observe(dg_ctx *ctx, const dg_env *env, int p, dg_tensor *state, dg_tensor *aux) {
    const dg_game *g = env->game;
    if (p == 0) return g->observe(ctx, env, state, aux);
    if (p == 1 && env->nplayers >= 2) return g->observe2(ctx, env, state, aux);
    if (p >= 2 && p < env->nplayers) return g->observe_player(ctx, env, p, state, aux);
    return dg_ctx_fail(ctx, DG_ERR_ARG, "observe: %s has no player %d", g->name, p);
}

int dg_env_action_col(const dg_env *env, int p) {
    int col = 0;
    for (int q = 0; q < p && q < env->nplayers; q++) col += env->player_act[q];
    return col;
}

const char *dg_env_player_name(const dg_env *env, int p, char *buf, size_t size) {
    if (p >= 0 && p < DG_MAX_PLAYERS && env->player_names[p]) snprintf(buf, size, "%s", env->player_names[p]);
    else snprintf(buf, size, "player%d", p);
    return buf;
}

double dg_env_player_cost(const dg_env *env, int p, const dg_real *weighted) {
    double j = 0.0;
    for (int k = 0; k < env->nterms; k++) j += (double)weighted[k];
    if (!env->general_sum) return p == 0 ? j : -j;
    j = 0.0;
    for (int k = 0; k < env->nterms; k++) j += (double)env->player_share[p][k] * weighted[k];
    return j;
}

void dg_env_free(dg_env *env) {
    if (!env) return;
    const int own_impl = env->game && env->game->impl_size > 0;  /* destroy may free the game (a model's) */
    if (env->game && env->game->destroy) env->game->destroy(env);
    if (own_impl) free(env->impl);
    dg_game_plugin_close(env->plugin);  /* last: the hooks above may live in it */
    free(env);
}

void dg_env_add_terminal(dg_ctx *ctx, const dg_env *env, int t, dg_tensor *state, dg_tensor *aux,
                         dg_real inv_batch, dg_tensor **terms) {
    if (!env->game->terminal_cost || t != env->horizon || !state) return;
    dg_tensor *g[DG_LOSS_MAX_TERMS] = {0};
    env->game->terminal_cost(ctx, env, state, aux, inv_batch, g);
    for (int k = 0; k < env->nterms; k++)  /* the loss divides by H: H g counts once */
        if (g[k]) terms[k] = dg_add(ctx, terms[k], dg_scale(ctx, g[k], (dg_real)env->horizon));
}

dg_tensor *dg_env_advance(dg_ctx *ctx, const dg_env *env, int t, dg_tensor *state, dg_tensor *aux,
                          dg_tensor *action, dg_real inv_batch, dg_loss *loss) {
    return dg_env_advance_noise(ctx, env, t, state, aux, action, NULL, inv_batch, loss);
}

dg_tensor *dg_env_advance_noise(dg_ctx *ctx, const dg_env *env, int t, dg_tensor *state, dg_tensor *aux,
                                dg_tensor *action, const dg_noise *nz, dg_real inv_batch, dg_loss *loss) {
    dg_tensor *next = dg_env_step_noise(ctx, env, t, state, aux, action, nz);
    if (!next) return NULL;
    dg_tensor *tm[DG_LOSS_MAX_TERMS] = {0};
    env->game->step_cost(ctx, env, next, aux, action, inv_batch, tm);
    dg_env_add_terminal(ctx, env, t, next, aux, inv_batch, tm);
    if (dg_ctx_status(ctx) != DG_OK) return NULL;
    dg_loss_add(ctx, loss, tm);
    return next;
}
