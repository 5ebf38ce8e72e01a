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
    "  1. the game's step and step_cost, with respect to the state and the action\n"
    "     (at steps X, X/4 and X/16: each element's best-agreeing pair);\n"
    "  2. a short full episode, with respect to every policy parameter.\n"
    "Prints the worst relative error of each; exits 1 if one is above the tolerance.\n"
    "The part of an error that the loss's float rounding explains (the \"rounding\n"
    "allowance\": 4 to 8 ulps of the loss, through the difference quotient) is not\n"
    "counted: the worst element's raw difference is printed beside its allowance.\n"
    "\n"
    "options:\n";

/* One line of a check: the worst relative error, its element, and that element's raw difference
 * beside its rounding allowance, so that a relative error of 0 beside two visibly different
 * numbers reads as what it is (a difference the loss's rounding explains). */
static void report(const char *what, const char *worst, const dg_gradcheck_report *r, double tol) {
    const int within = r->worst_abs_err <= r->worst_allowance;
    printf("%-34s worst rel err %.3e over %lld elements  (%s[%lld]: backward %.6g, numeric %.6g: differ by "
           "%.1e, %s the rounding allowance %.1e)  %s\n",
           what, r->max_rel_err, (long long)r->checked, worst, (long long)r->worst_index, r->worst_analytic,
           r->worst_numeric, r->worst_abs_err, within ? "within" : "beyond", r->worst_allowance,
           r->max_rel_err <= tol ? "ok" : "FAIL");
}

int cmd_gradcheck(int argc, char **argv) {
    const char *config, *eps_s, *tol_s, *batch_s;
    const cli_opt opts[] = {
        CLI_CONFIG(&config), CLI_PLUGIN,
        {"--batch", &batch_s, NULL, "N", "episodes in the check", "4"},
        CLI_KEY_DEF("--horizon", "env.horizon", "min(10, H)"), CLI_KEY_DEF("--seed", "seed", "the config's"),
        {"--eps", &eps_s, NULL, "X", "finite-difference step (Richardson: X and X/2), in (0, 1)",
         "0.1, or the game's own (racing: 0.01)"},
        {"--tol", &tol_s, NULL, "X", "tolerance on the relative error", "1e-3"},
        CLI_KEY("--precision", "train.precision"),
        CLI_END,
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
    if ((eps_s && !cli_double("gradcheck", "--eps", eps_s, 0, 1, CLI_OPEN_LO | CLI_OPEN_HI, &eps)) ||
        (tol_s && !cli_double("gradcheck", "--tol", tol_s, 0, INFINITY, CLI_OPEN_LO, &tol)))
        return EXIT_USAGE;
    dg_run s;
    int rc = cli_load_opts(&s, config, opts);
    if (rc) return rc;
    dg_env_gradcheck_opts go = dg_env_gradcheck_opts_default();
    go.batch = B;
    go.horizon = cli_given(opts, "--horizon") ? s.env->horizon : 0;  /* 0: at most 10 steps */
    go.seed = s.opts.seed;
    if (!eps_s && s.env->gradcheck_eps > 0) eps = s.env->gradcheck_eps;  /* the game's own scale */
    go.eps = (dg_real)eps;
    memcpy(go.hidden, s.opts.hidden, sizeof go.hidden);
    go.nhidden = s.opts.nhidden;
    go.open_loop = s.opts.open_loop;
    dg_env_gradcheck_result r;
    dg_err e = {0};
    if (dg_env_gradcheck(s.env, &go, &r, &e) != DG_OK) {  /* too large for memory (DG_ERR_ARG): bad input */
        rc = cli_fail("gradcheck", &e, e.status == DG_ERR_ARG ? EXIT_USAGE : EXIT_FAIL);
        goto done;
    }
    printf("gradcheck %s: batch %d, eps %g, tolerance %g\n", s.env->game->name, B, eps, tol);
    report("step + step_cost (state, action)", r.step_worst, &r.step, tol);
    char what[64];
    snprintf(what, sizeof what, "episode of %d steps (%s)", r.horizon, go.open_loop ? "plan" : "policy");
    report(what, r.episode_worst, &r.episode, tol);
    for (int i = 0; i < r.nzero && i < DG_ENV_GRADCHECK_MAX_ZERO; i++)
        printf("warning: parameter '%s' has an exactly zero gradient (cut chain?)\n", r.zero[i]);
    rc = r.step.max_rel_err <= tol && r.episode.max_rel_err <= tol && r.nzero == 0 ? 0 : EXIT_FAIL;
    printf("%s\n", rc ? "gradcheck FAILED" : "gradcheck passed");
done:
    dg_run_free(&s);
    return rc;
}
