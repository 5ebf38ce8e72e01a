/* difgames gradcheck: finite differences against backward for a game. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char HELP[] =
    "usage: difgames gradcheck --config FILE [options]\n"
    "\n"
    "Compares backward with central finite differences (Richardson-extrapolated) for\n"
    "  1. the game's step and step_cost, with respect to the state and the action;\n"
    "  2. a short full episode, with respect to every policy parameter.\n"
    "Prints the worst relative error of each; exits 1 if one is above the tolerance.\n"
    "\n"
    "options:\n"
    "  --config FILE   the game's YAML config                      required\n"
    "  --batch N       episodes in the check                       default 4\n"
    "  --horizon N     steps of the short episode                  default min(10, H)\n"
    "  --seed N        seed for states and parameters              default the config's\n"
    "  --eps X         finite-difference step (Richardson: X and X/2)  default 0.1\n"
    "  --tol X         tolerance on the relative error             default 1e-3\n";

typedef struct step_case {
    const dg_env *env;
    const float  *aux;
    int           B;
} step_case;

/* loss = Σ_i w_i term_i(step(state, action), action) */
static dg_tensor *step_loss(dg_ctx *ctx, dg_params *p, void *user) {
    const step_case *c = user;
    const dg_env *env = c->env;
    dg_tensor *state = dg_param(ctx, p, 0), *action = dg_param(ctx, p, 1);
    dg_tensor *aux = env->aux_dim ? dg_from(ctx, 2, (int[]){c->B, env->aux_dim}, c->aux) : NULL;
    dg_tensor *next = env->game->step(ctx, env, state, aux, action);
    if (!next) return NULL;
    dg_tensor *terms[DG_LOSS_MAX_TERMS] = {0};
    env->game->step_cost(ctx, env, next, aux, action, 1.0f / (float)c->B, terms);
    dg_tensor *total = NULL;
    for (int i = 0; i < env->nterms; i++) {
        dg_tensor *w = dg_scale(ctx, terms[i], env->term_weights[i]);
        total = total ? dg_add(ctx, total, w) : w;
    }
    return total;
}

typedef struct episode_case {
    const dg_env *env;
    const dg_policy *m;
    const float  *state, *aux;
    int           B;
} episode_case;

static dg_tensor *episode_loss(dg_ctx *ctx, dg_params *p, void *user) {
    const episode_case *c = user;
    return dg_rollout(ctx, c->env, c->m, p, c->state, c->aux, c->B, 1.0f / (float)c->B, NULL, NULL, 0);
}

static void report(const char *what, const dg_params *p, const dg_gradcheck_report *r, double tol) {
    printf("%-34s worst rel err %.3e over %lld elements  (%s[%lld]: backward %.6g, numeric %.6g)  %s\n",
           what, r->max_rel_err, (long long)r->checked,
           r->worst_param >= 0 ? p->info[r->worst_param].name : "-", (long long)r->worst_index,
           r->worst_analytic, r->worst_numeric, r->max_rel_err <= tol ? "ok" : "FAIL");
}

int cmd_gradcheck(int argc, char **argv) {
    const char *config, *eps_s, *tol_s, *batch_s;
    cli_overrides ov = {0};
    const cli_opt opts[] = {
        {"--config", &config, NULL}, {"--batch", &batch_s, NULL}, {"--horizon", &ov.horizon, NULL},
        {"--seed", &ov.seed, NULL},  {"--eps", &eps_s, NULL},     {"--tol", &tol_s, NULL},
        {NULL, NULL, NULL},
    };
    const int prc = cli_parse("gradcheck", argc, argv, opts, HELP);
    if (prc) return prc == CLI_HELP ? 0 : prc;
    if (!config) {
        cli_error("gradcheck", "--config FILE is required (see --help)");
        return EXIT_USAGE;
    }
    int B = 4;
    if (batch_s && !cli_int("gradcheck", "--batch", batch_s, 1, 4096, &B)) return EXIT_USAGE;
    double eps = 0.1, tol = 1e-3;
    if (eps_s && (sscanf(eps_s, "%lf", &eps) != 1 || !(eps > 0 && eps < 1))) {
        cli_error("gradcheck", "--eps: expected a number in (0, 1), got '%s'", eps_s);
        return EXIT_USAGE;
    }
    if (tol_s && (sscanf(tol_s, "%lf", &tol) != 1 || !(tol > 0))) {
        cli_error("gradcheck", "--tol: expected a positive number, got '%s'", tol_s);
        return EXIT_USAGE;
    }
    cli_setup s;
    int rc = cli_setup_load(&s, config, &ov);
    if (rc) return rc;
    dg_env env = *s.env;  /* a copy whose horizon we may shorten */
    if (!ov.horizon && env.horizon > 10) env.horizon = 10;
    const int S = env.state_dim, A = env.act_dim + (env.nplayers == 2 ? env.act2_dim : 0);
    const int AX = env.aux_dim ? env.aux_dim : 1;
    float *state = malloc((size_t)B * S * sizeof(float)), *aux = malloc((size_t)B * AX * sizeof(float));
    dg_params *sp = dg_params_create(), *pp = NULL;
    dg_ctx *ctx = dg_ctx_create((size_t)256 << 20);
    dg_policy m;
    dg_err e = {0};
    if (!state || !aux || !sp || !ctx) {
        cli_error("gradcheck", "out of memory");
        rc = EXIT_FAIL;
        goto done;
    }
    dg_rng rng;
    dg_rng_seed(&rng, s.opts.seed);
    if (env.game->reset(&env, &rng, B, state, aux, &e) != DG_OK) {
        cli_error("gradcheck", "%s", e.msg);
        rc = EXIT_FAIL;
        goto done;
    }
    printf("gradcheck %s: batch %d, eps %g, tolerance %g\n", env.game->name, B, eps, tol);

    /* 1. step + step_cost w.r.t. state and action, at a state the game reaches
     * with its bodies moving: WARM steps from the reset states under a constant
     * random action per episode. The game's own step, not random numbers put
     * into columns taken for velocities: that put duel_simple's evader (whose
     * columns 2, 3 are a position) next to the pursuer, at the kink of |p - e|. */
    if (dg_params_add(sp, "state", 2, (int[]){B, S}, &e) < 0 ||
        dg_params_add(sp, "action", 2, (int[]){B, A}, &e) < 0) {
        cli_error("gradcheck", "%s", e.msg);
        rc = EXIT_FAIL;
        goto done;
    }
    enum { WARM = 2 };
    float *x = dg_params_data(sp, 0), *u = dg_params_data(sp, 1);
    memcpy(x, state, (size_t)B * S * sizeof(float));
    for (int i = 0; i < B * A; i++) u[i] = dg_rng_uniform(&rng, -0.6f, 0.6f);
    for (int k = 0; k < WARM; k++) {
        dg_ctx_reset(ctx);
        dg_tensor *xt = dg_from(ctx, 2, (int[]){B, S}, x), *ut = dg_from(ctx, 2, (int[]){B, A}, u);
        dg_tensor *at = env.aux_dim ? dg_from(ctx, 2, (int[]){B, env.aux_dim}, aux) : NULL;
        dg_tensor *next = xt && ut ? env.game->step(ctx, &env, xt, at, ut) : NULL;
        if (!next) {
            cli_error("gradcheck", "step: %s", dg_ctx_error(ctx));
            rc = EXIT_FAIL;
            goto done;
        }
        memcpy(x, next->data, (size_t)B * S * sizeof(float));
    }
    dg_ctx_reset(ctx);
    for (int i = 0; i < B * A; i++)  /* inside the unit disk, away from its edge (a kink) */
        u[i] = dg_rng_uniform(&rng, -0.6f, 0.6f);
    step_case sc = {&env, aux, B};
    dg_gradcheck_report r1, r2;
    if (dg_gradcheck(ctx, sp, step_loss, &sc, (float)eps, 1e-2, 0, &r1, &e) != DG_OK) {
        cli_error("gradcheck", "step_cost: %s", e.msg);
        rc = EXIT_FAIL;
        goto done;
    }
    report("step + step_cost (state, action)", sp, &r1, tol);

    /* 2. a short episode w.r.t. the policy parameters */
    if (dg_policy_create(&env, s.opts.hidden, s.opts.nhidden, &m, &pp, &e) != DG_OK) {
        cli_error("gradcheck", "%s", e.msg);
        rc = EXIT_FAIL;
        goto done;
    }
    dg_policy_reset_params(&m, pp, &rng);
    episode_case ec = {&env, &m, state, aux, B};
    if (dg_gradcheck(ctx, pp, episode_loss, &ec, (float)eps, 1e-2, 24, &r2, &e) != DG_OK) {
        cli_error("gradcheck", "episode: %s", e.msg);
        rc = EXIT_FAIL;
        goto done;
    }
    char what[64];
    snprintf(what, sizeof what, "episode of %d steps (policy)", env.horizon);
    report(what, pp, &r2, tol);
    int zero[8];
    const int nz = dg_params_find_zero_grads(pp, zero, 8);
    dg_params_zero_grad(pp);
    dg_ctx_reset(ctx);
    dg_tensor *l = episode_loss(ctx, pp, &ec);
    if (l) dg_backward(ctx, l);
    const int nz2 = dg_params_find_zero_grads(pp, zero, 8);
    for (int i = 0; i < nz2 && i < 8; i++)
        printf("warning: parameter '%s' has an exactly zero gradient (cut chain?)\n", pp->info[zero[i]].name);
    (void)nz;
    rc = r1.max_rel_err <= tol && r2.max_rel_err <= tol && nz2 == 0 ? 0 : EXIT_FAIL;
    printf("%s\n", rc ? "gradcheck FAILED" : "gradcheck passed");
done:
    dg_ctx_free(ctx);
    dg_params_free(sp);
    dg_params_free(pp);
    free(state);
    free(aux);
    cli_setup_free(&s);
    return rc;
}
