/* Explicit-state random numbers: xoroshiro128++ seeded by splitmix64. */
#include <math.h>

#include "difgames/base.h"

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void dg_rng_seed(dg_rng *r, uint64_t seed) {
    uint64_t x = seed;
    r->s[0] = splitmix64(&x);
    r->s[1] = splitmix64(&x);
    if (!r->s[0] && !r->s[1]) r->s[1] = 1;  /* the all-zero state is a fixed point */
}

uint64_t dg_rng_u64(dg_rng *r) {
    uint64_t s0 = r->s[0], s1 = r->s[1];
    uint64_t out = rotl(s0 + s1, 17) + s0;
    s1 ^= s0;
    r->s[0] = rotl(s0, 49) ^ s1 ^ (s1 << 21);
    r->s[1] = rotl(s1, 28);
    return out;
}

float dg_rng_uniform(dg_rng *r, float lo, float hi) {
    float u = (float)(dg_rng_u64(r) >> 40) * (1.0f / 16777216.0f);  /* [0, 1) */
    float v = lo + (hi - lo) * u;
    return v < hi ? v : lo;  /* rounding must not reach hi */
}

float dg_rng_normal(dg_rng *r, float mean, float std) {
    /* u1 in (0, 1] so the log is finite */
    double u1 = ((double)(dg_rng_u64(r) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
    double u2 = (double)(dg_rng_u64(r) >> 11) * (1.0 / 9007199254740992.0);
    double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    return mean + std * (float)z;
}
