/* The model game: a game read from a config's `model:` section (docs/models.md). */
#ifndef DG_ENVS_MODEL_GAME_H
#define DG_ENVS_MODEL_GAME_H
#include "difgames/env.h"
/* Creates the env of cfg's model (cfg's `game:` is "model"); NULL with e naming file, line and key. */
dg_env *dg_model_env_create(dg_cfg *cfg, dg_err *e);
/* 1 when env plays a model file's game (whatever its model.name), else 0. */
int dg_env_is_model(const dg_env *env);
#endif
