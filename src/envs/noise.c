/* Noise of the stochastic games (dx = f dt + sigma(x, u) dW): counter-based standard normal draws,
 * a function of (key, global row, step, component) alone, and the step that takes them. */
#include <math.h>
#include <stdint.h>

#include "difgames/env.h"

/* splitmix64's finaliser of x + the golden-ratio increment: a bijection of 64 bits whose outputs
 * for consecutive inputs pass the usual tests (what dg_rng_seed expands a seed with) */
static uint64_t mix64(uint64_t x) {
    uint64_t z = x + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t dg_noise_key(uint64_t seed, uint64_t draw) {
    return mix64(mix64(seed ^ 0x6E6F697365ull /* "noise": apart from the streams seed gives dg_rng */) ^ draw);
}

/* the standard normal draw (key, row, t, k): Box-Muller of two uniforms hashed from the counter,
 * in double (u1 in (0, 1]: the log is finite) */
static double normal_at(uint64_t key, int64_t row, int t, int k) {
    const uint64_t h = mix64(mix64(mix64(key ^ (uint64_t)row) ^ (uint64_t)(uint32_t)t) ^ (uint64_t)(uint32_t)k);
    const double u1 = ((double)(mix64(h ^ 1u) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
    const double u2 = (double)(mix64(h ^ 2u) >> 11) * (1.0 / 9007199254740992.0);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

void dg_noise_fill(const dg_noise *nz, int t, int B, int dim, dg_real *z) {
    const dg_noise def = {0, 0};
    if (!nz) nz = &def;
    for (int b = 0; b < B; b++)
        for (int k = 0; k < dim; k++) z[(size_t)b * dim + k] = (dg_real)normal_at(nz->key, nz->row0 + b, t, k);
}

dg_tensor *dg_env_step_noise(dg_ctx *ctx, const dg_env *env, int t, dg_tensor *state, dg_tensor *aux,
                             dg_tensor *action, const dg_noise *nz) {
    if (env->noise_dim <= 0 || !env->game->step_noise || !state) return env->game->step(ctx, env, state, aux, action);
    const int B = state->shape[0];
    dg_tensor *z = dg_zeros(ctx, 2, (int[]){B, env->noise_dim});  /* a constant: no gradient reaches it */
    if (!z) return NULL;
    dg_noise_fill(nz, t, B, env->noise_dim, z->data);
    return env->game->step_noise(ctx, env, state, aux, action, z);
}
