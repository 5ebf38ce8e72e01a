/* A plugin built for another game ABI: difgames refuses it (hostile_input_test.sh). */
#include "difgames/env.h"

const dg_game difgames_game = {.abi = DG_GAME_ABI + 100u, .name = "bad_abi"};
