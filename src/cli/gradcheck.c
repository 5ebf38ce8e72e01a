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
    const char *config;
    int B, rc;
    double eps, tol;
    cli_opt opts[] = {
        CLI_CONFIG(&config), CLI_PLUGIN,
        CLI_INT("--batch", &B, "N", 1, 4096, "episodes in the check", .def = "4"),
        CLI_KEY("--horizon", "env.horizon", .otherwise = "min(10, H)"),
        CLI_KEY("--seed", "seed", .otherwise = "the config's"),
        CLI_DOUBLE("--eps", &eps, "X", 0, 1, "finite-difference step (Richardson: X and X/2)",
                   .open = CLI_OPEN_LO | CLI_OPEN_HI, .def = "0.1",
                   .otherwise = "or the game's own (racing: 0.01)"),
        CLI_DOUBLE("--tol", &tol, "X", 0, INFINITY, "tolerance on the relative error", .open = CLI_OPEN_LO,
                   .def = "1e-3"),
        CLI_KEY("--precision", "train.precision"),
        CLI_END,
    };
    if (!cli_parse(&rc, "gradcheck", argc, argv, opts, HELP)) return rc;
    dg_run s;
    if ((rc = cli_load_opts(&s, config, opts))) return rc;
    dg_env_gradcheck_opts go = dg_env_gradcheck_opts_default();
    go.batch = B;
    go.horizon = cli_given(opts, "--horizon") ? s.env->horizon : 0;  /* 0: at most 10 steps */
    go.seed = s.opts.seed;
    if (!cli_given(opts, "--eps") && s.env->gradcheck_eps > 0) eps = s.env->gradcheck_eps;  /* the game's own scale */
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
