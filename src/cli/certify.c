/* difgames certify: how far a learned pair is from the game's equilibrium (dg_certify). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "difgames/certify.h"
#include "difgames/image.h"

static const char HELP[] =
    "usage: difgames certify --config GAME.yaml --ckpt FILE [--hji HJI.yaml] [options]\n"
    "\n"
    "Solves the HJI game the learning game maps onto (its value: the equilibrium\n"
    "capture time, payoff: time), plays the learned pair in the learning game from\n"
    "held-out initial states, and compares: a table by quarter of V(x0) on stderr and\n"
    "one JSON line with value_mean, policy_cost_mean and gap, the mean of\n"
    "(cost - V(x0)) / |V(x0)| (docs/certify.md). duel_simple maps onto pursuit2d, chase (duel_open) onto chase4d (exploitability: env.observe: relative).\n"
    "A model file with payoff: cost (configs/models/reach.yaml) is its own HJI game\n"
    "(no --hji): the value of the episode loss the policy was trained on, for the\n"
    "episode variables the file fixes on the grid (model.episode.grid).\n";

/* --plot: V(x0) and the policy's cost at each start (rows: B pairs, ordered by V); 0 or an exit status */
static int plot_rows(const char *path, const double *rows, int B, int degree) {
    float *v = malloc((size_t)B * 2 * sizeof *v);
    if (!v) {
        cli_error("certify", "out of memory");
        return EXIT_FAIL;
    }
    for (int i = 0; i < B; i++) v[i] = (float)rows[2 * i], v[B + i] = (float)rows[2 * i + 1];
    const dg_plot_series sr[2] = {{"V(x0): the value", NULL, v, B, dg_plot_color(0)},
                                  {"the learned policy's cost", NULL, v + B, B, dg_plot_color(1)}};
    dg_err e = {0};
    const dg_status st = dg_plot_lines(path, 800, 500, degree ? "certify: episode loss from each start"
                                                              : "certify: capture time from each start",
                                       "starts, ordered by V(x0)", degree ? "loss" : "time (s)", 0, sr, 2, &e);
    free(v);
    return st == DG_OK ? 0 : cli_fail("certify", &e, 0);
}

/* the library's message, without its own "certify: " (cli_error names the command) */
static void certify_error(const dg_err *e) {
    cli_error("certify", "%s", e->msg + (strncmp(e->msg, "certify: ", 9) ? 0 : 9));
}

/* A certify: its learning game (run), HJI game p and the learned pair (pol, params). */
typedef struct certify {
    dg_run          run;
    dg_policy       pol;
    dg_params      *params;
    dg_cfg         *hcfg;
    dg_hji_problem *p;
    int             degree;    /* 1: the game's own cost (a model file, payoff: cost) */
    int             exploit;   /* the exploitability is measured                     */
    dg_certify_exploit_opts xo;
} certify;

/* The HJI game (hji), its match with the learning game, the pair from ckpt, and the memory the solves
 * need; 0, or the exit status after one error line. */
static int certify_setup(certify *c, const char *hji, const char *ckpt) {
    dg_err e = {0};
    const dg_env *env = c->run.env;
    c->hcfg = dg_cfg_load(hji, &e);
    if (!c->hcfg || !(c->p = dg_hji_problem_load(c->hcfg, &e)) || dg_cfg_check_unused(c->hcfg, &e) != DG_OK ||
        ((c->degree = c->p->payoff == DG_HJI_PAYOFF_COST)
             ? dg_certify_cost_check(c->p, env, &e) : dg_certify_check(c->p, env, c->run.cfg, &e)) != DG_OK) {
        certify_error(&e);
        return EXIT_USAGE;
    }
    if (dg_run_policy_load(&c->run, ckpt, &c->pol, &c->params, &e) != DG_OK) return cli_fail("certify", &e, 0);
    if (!cli_mem_ok("certify", dg_hji_problem_memory(c->p, 1, 1, 0), "the HJI solve", "grid.n")) return EXIT_USAGE;
    if (c->degree) c->exploit = 0;  /* one player's cost: nothing to exploit */
    if (!c->exploit) return 0;
    if (dg_certify_exploit_check(c->p, env, &e) != DG_OK) {
        certify_error(&e);
        return EXIT_USAGE;
    }
    char what[96];  /* before any solve: the exploitability's 4-D grid must fit too */
    dg_hji_grid xg;
    const double xn = dg_certify_exploit_grid(c->p, &c->xo, &xg, &e) == DG_OK
                          ? (double)xg.nodes : (double)c->xo.n_own * c->xo.n_own * c->p->grid.nodes;
    snprintf(what, sizeof what, "the exploitability's 4-D grid of %.0f nodes", xn);
    return cli_mem_ok("certify", dg_certify_exploit_memory(c->p, &c->xo), what, "--exploit-own or the HJI grid.n")
               ? 0 : EXIT_USAGE;
}

/* Each learned player frozen, the other's best response on a 4-D grid from the B starts of seed:
 * what the frozen one loses (value: V(x0) at each start), into exploit, exploit_rel, and the
 * solves' seconds. */
static dg_status certify_exploit(const certify *c, uint64_t seed, int B, const double *value, double exploit[2],
                                 double exploit_rel[2], double *seconds, dg_err *e) {
    dg_real *st0 = NULL, *aux0 = NULL;
    double *w = malloc((size_t)B * sizeof *w);
    dg_hji_grid xg;
    dg_status cs = w ? dg_run_init_draw(c->run.env, seed, B, &st0, &aux0, e) : dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    if (cs == DG_OK) cs = dg_certify_exploit_grid(c->p, &c->xo, &xg, e);
    for (int k = 0; k < 2 && cs == DG_OK; k++) {
        fprintf(stderr, "the learned %s frozen: the %s's best response on %d x %d x %d x %d nodes ...\n",
                k ? "evader" : "pursuer", k ? "pursuer" : "evader", xg.n[0], xg.n[1], xg.n[2], xg.n[3]);
        dg_hji_stats xs;
        if ((cs = dg_certify_exploit(c->p, c->run.env, &c->pol, c->params, k, &c->xo, B, st0, w, &xs, e)) != DG_OK) break;
        dg_certify_exploit_loss(value, w, B, k, &exploit[k], &exploit_rel[k]);
        *seconds += xs.seconds;
    }
    free(st0);
    free(aux0);
    free(w);
    return cs;
}

/* The table on stderr: by quarter of V(x0) (q: dg_certify_quarters), then all. */
static void certify_table(const dg_certify_quarter q[5]) {
    fprintf(stderr, "%-22s %9s %12s %16s %9s\n", "V(x0) quarter", "episodes", "mean V(x0)", "mean policy cost",
            "gap");
    for (int k = 0; k <= 4; k++) {
        if (!q[k].n) continue;
        char label[64];
        if (k < 4) snprintf(label, sizeof label, "[%.3f, %.3f]", q[k].v_lo, q[k].v_hi);
        else snprintf(label, sizeof label, "all");
        fprintf(stderr, "%-22s %9d %12.4f %16.4f %8.2f%%\n", label, q[k].n, q[k].value_mean, q[k].cost_mean,
                100 * q[k].gap);
    }
}

/* The JSON line (and the lines on stderr of a game of degree and the exploitability). */
static int certify_report(const certify *c, int B, const dg_certify_result *r, const dg_hji_stats *st,
                          const double exploit[2], const double exploit_rel[2], double exploit_s) {
    const dg_env *env = c->run.env;
    dg_json j = {cJSON_CreateObject(), 0};
    dg_json_game(&j, env->game->name, dg_env_source(env));
    dg_json_add(&j, j.root, "hji_game", cJSON_CreateString(c->p->name));
    dg_json_add(&j, j.root, "episodes", dg_json_number("%.0f", B));
    if (!c->degree) dg_json_add(&j, j.root, "captured", dg_json_number("%.0f", r->captured));
    dg_json_add(&j, j.root, "value_mean", dg_json_number("%.9g", r->value_mean));
    dg_json_add(&j, j.root, "policy_cost_mean", dg_json_number("%.9g", r->policy_cost_mean));
    dg_json_add(&j, j.root, "gap", dg_json_number("%.6g", r->gap));
    dg_json_add(&j, j.root, "gap_abs", dg_json_number("%.6g", r->gap_abs));
    if (!c->degree) dg_json_add(&j, j.root, "step_bias_s", dg_json_number("%.6g", r->step_bias));
    else {  /* the loss adds each step's cost at its end; the value integrates: the trapezoid's share */
        dg_json_add(&j, j.root, "step_bias", dg_json_number("%.6g", r->step_bias));
        dg_json_add(&j, j.root, "gap_trapezoid", dg_json_number("%.6g", r->gap_trapezoid));
        fprintf(stderr, "each step's cost counted at its end: the policy's cost by the trapezoid rule is %.4f higher "
                        "(mean); gap %.2f%%\n", r->step_bias, 100 * r->gap_trapezoid);
    }
    dg_json_add(&j, j.root, "hji_residual", dg_json_number("%.3g", st->residual));
    if (c->exploit) {
        fprintf(stderr, "exploitability (what the frozen player loses to a best response, mean over the starts):\n"
                        "  pursuer %.4f s (%.2f%% of V), evader %.4f s (%.2f%% of V)\n",
                exploit[0], 100 * exploit_rel[0], exploit[1], 100 * exploit_rel[1]);
        dg_json_add(&j, j.root, "exploit_pursuer", dg_json_number("%.6g", exploit[0]));
        dg_json_add(&j, j.root, "exploit_evader", dg_json_number("%.6g", exploit[1]));
        dg_json_add(&j, j.root, "exploit_pursuer_rel", dg_json_number("%.6g", exploit_rel[0]));
        dg_json_add(&j, j.root, "exploit_evader_rel", dg_json_number("%.6g", exploit_rel[1]));
        dg_json_add(&j, j.root, "exploit_seconds", dg_json_number("%.3g", exploit_s));
    }
    return cli_json_print(&j, "certify");
}

/* The HJI solve, the pair's play from B held-out starts of seed, the exploitability, the table (and
 * --plot's figure) and the JSON line; 0 or the exit status. */
static int certify_run(certify *c, int B, uint64_t seed, const char *plot) {
    const dg_env *env = c->run.env;
    const dg_hji_problem *p = c->p;
    dg_err e = {0};
    double *V = malloc((size_t)p->grid.nodes * sizeof *V), *rows = malloc((size_t)B * 2 * sizeof *rows);
    double *value = malloc((size_t)B * sizeof *value), *cost = malloc((size_t)B * sizeof *cost);
    int rc = 0;
    dg_hji_stats st;
    dg_certify_result r;
    double exploit[2] = {NAN, NAN}, exploit_rel[2] = {NAN, NAN}, exploit_s = 0;
    if (!V || !rows || !value || !cost) {
        cli_error("certify", "out of memory");
        rc = EXIT_FAIL;
    } else if (dg_hji_problem_solve(c->p, V, &st, &e) != DG_OK) {
        rc = cli_fail("certify", &e, 0);
    } else {
        const double t_end = p->t_end;
        const dg_hji_slices VS = {.nt = 1, .t = &t_end, .v = V};
        const dg_certify_opts o = {.episodes = B, .seed = seed};
        dg_status cs = c->degree ? dg_certify_cost(p, &VS, env, &c->pol, c->params, &o, &r, value, cost, &e)
                                 : dg_certify(p, &VS, env, c->run.cfg, &c->pol, c->params, &o, &r, value, cost, &e);
        for (int i = 0; cs == DG_OK && i < B; i++) rows[2 * i] = value[i], rows[2 * i + 1] = cost[i];
        if (cs == DG_OK && c->exploit) cs = certify_exploit(c, seed, B, value, exploit, exploit_rel, &exploit_s, &e);
        if (cs != DG_OK) {
            certify_error(&e);
            rc = dg_status_exit(e.status);
        }
    }
    if (!rc) {
        if (c->degree)
            fprintf(stderr, "%s against its value (payoff: cost, the episode loss over %g s): %d held-out starts\n",
                    env->game->name, p->t_end, B);
        else
            fprintf(stderr, "%s against %s (payoff: time, %s): %d held-out episodes, %d captured\n", env->game->name,
                    p->name, p->stationary ? "stationary" : "finite horizon", B, r.captured);
        dg_certify_quarter q[5];
        dg_certify_quarters(rows, B, q);  /* rows sorted by V(x0): --plot draws them in that order */
        if (!(plot && (rc = plot_rows(plot, rows, B, c->degree)) != 0)) {
            certify_table(q);
            rc = certify_report(c, B, &r, &st, exploit, exploit_rel, exploit_s);
        }
    }
    free(V);
    free(rows);
    free(value);
    free(cost);
    return rc;
}

int cmd_certify(int argc, char **argv) {
    const char *config, *ckpt, *hji, *plot;
    int B, seed, no_exploit, rc;
    certify c = {0};
    cli_opt opts[] = {
        CLI_CONFIG(&config), CLI_CKPT(&ckpt),
        CLI_IN("--hji", &hji, "HJI.yaml", "the HJI game (payoff: time) with the learning game's constants",
               .otherwise = "the config itself (a model file with payoff: cost)"),
        CLI_OUT("--plot", &plot, "FILE.png", "V(x0) and the policy's cost at each start, ordered by V(x0)",
                .otherwise = "none"),
        CLI_INT("--episodes", &B, "N", 1, 1 << 20, "held-out initial states", .def = "256"),
        CLI_INT("--seed", &seed, "N", 0, 2147483647, "their seed (held out: not the training's stream)",
                .otherwise = "the config's seed + 1000"),
        CLI_INT("--exploit-own", &c.xo.n_own, "N", 2, 1000, "exploitability: nodes per axis of the frozen player's "
                "position (the relative position: the HJI grid's; chase: the HJI grid alone)", .def = "9"),
        CLI_DOUBLE("--exploit-half", &c.xo.own_half, "X", 0, 1e6, "... over [-X, X]^2", .open = CLI_OPEN_LO,
                   .def = "4.5"),
        CLI_FLAG("--no-exploit", &no_exploit, "skip the exploitability (two 4-D solves)"),
        CLI_END,
    };
    if (!cli_parse(&rc, "certify", argc, argv, opts, HELP)) return rc;
    if ((rc = cli_load_opts(&c.run, config, opts))) return rc;
    c.exploit = !no_exploit;
    rc = certify_setup(&c, hji ? hji : config, ckpt);  /* a model file with payoff: cost is its own HJI game */
    if (!rc) rc = certify_run(&c, B, cli_given(opts, "--seed") ? (uint64_t)seed : c.run.opts.seed + 1000, plot);
    dg_hji_problem_free(c.p);
    dg_cfg_free(c.hcfg);
    dg_params_free(c.params);
    dg_run_free(&c.run);
    return rc;
}
