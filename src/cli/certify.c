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

static int cmp_by_value(const void *a, const void *b) {
    const double x = ((const double *)a)[0], y = ((const double *)b)[0];
    return (x > y) - (x < y);
}

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

int cmd_certify(int argc, char **argv) {
    const char *config, *ckpt, *hji, *episodes_s, *seed_s, *own_s, *half_s, *plot;
    int no_exploit;
    const cli_opt opts[] = {
        CLI_CONFIG(&config), CLI_CKPT(&ckpt),
        {"--hji", &hji, NULL, "HJI.yaml", "the HJI game (payoff: time) with the learning game's constants",
         "the config itself (a model file with payoff: cost)"},
        {"--plot", &plot, NULL, "FILE.png", "V(x0) and the policy's cost at each start, ordered by V(x0)", "none"},
        {"--episodes", &episodes_s, NULL, "N", "held-out initial states", "256"},
        {"--seed", &seed_s, NULL, "N", "their seed (held out: not the training's stream)", "the config's seed + 1000"},
        {"--exploit-own", &own_s, NULL, "N", "exploitability: nodes per axis of the frozen player's position (the "
         "relative position: the HJI grid's; chase: the HJI grid alone)", "9"},
        {"--exploit-half", &half_s, NULL, "X", "... over [-X, X]^2", "4.5"},
        {"--no-exploit", NULL, &no_exploit, NULL, "skip the exploitability (two 4-D solves)", NULL},
        CLI_END,
    };
    const int prc = cli_parse("certify", argc, argv, opts, HELP);
    if (prc) return prc == CLI_HELP ? 0 : prc;
    if (!config || !ckpt) {
        cli_error("certify", "--config FILE and --ckpt FILE are required (see --help)");
        return EXIT_USAGE;
    }
    if (!hji) hji = config;  /* a model file with payoff: cost is its own HJI game */
    int B = 256, seed = -1;
    if (episodes_s && !cli_int("certify", "--episodes", episodes_s, 1, 1 << 20, &B)) return EXIT_USAGE;
    if (seed_s && !cli_int("certify", "--seed", seed_s, 0, 2147483647, &seed)) return EXIT_USAGE;
    dg_certify_exploit_opts xo = {.n_own = 9, .own_half = 4.5};
    if ((own_s && !cli_int("certify", "--exploit-own", own_s, 2, 1000, &xo.n_own)) ||
        (half_s && !cli_double("certify", "--exploit-half", half_s, 0, 1e6, 1, &xo.own_half)))
        return EXIT_USAGE;
    dg_run s;
    int rc = cli_load_opts(&s, config, opts);
    if (rc) return rc;
    dg_err e = {0};
    dg_policy pol;
    dg_params *params = NULL;
    dg_hji_problem *p = NULL;
    double *V = NULL, *rows = NULL;
    dg_cfg *hcfg = dg_cfg_load(hji, &e);
    int degree = 0;  /* 1: the game's own cost (a model file, payoff: cost) */
    if (!hcfg || !(p = dg_hji_problem_load(hcfg, &e)) || dg_cfg_check_unused(hcfg, &e) != DG_OK ||
        ((degree = p->payoff == DG_HJI_PAYOFF_COST)
             ? dg_certify_cost_check(p, s.env, &e) : dg_certify_check(p, s.env, s.cfg, &e)) != DG_OK) {
        certify_error(&e);
        rc = EXIT_USAGE;
        goto done;
    }
    if (dg_run_policy_load(&s, ckpt, &pol, &params, &e) != DG_OK) {
        rc = cli_fail("certify", &e, 0);
        goto done;
    }
    if (!cli_mem_ok("certify", dg_hji_problem_memory(p, 1, 1, 0), "the HJI solve", "grid.n")) {
        rc = EXIT_USAGE;
        goto done;
    }
    if (degree) no_exploit = 1;  /* one player's cost: nothing to exploit */
    if (!no_exploit && dg_certify_exploit_check(p, s.env, &e) != DG_OK) {
        certify_error(&e);
        rc = EXIT_USAGE;
        goto done;
    }
    if (!no_exploit) {  /* before any solve: the exploitability's 4-D grid must fit too */
        char what[96];
        dg_hji_grid xg;
        const double xn = dg_certify_exploit_grid(p, &xo, &xg, &e) == DG_OK ? (double)xg.nodes
                                                                             : (double)xo.n_own * xo.n_own * p->grid.nodes;
        snprintf(what, sizeof what, "the exploitability's 4-D grid of %.0f nodes", xn);
        if (!cli_mem_ok("certify", dg_certify_exploit_memory(p, &xo), what, "--exploit-own or the HJI grid.n")) {
            rc = EXIT_USAGE;
            goto done;
        }
    }
    V = malloc((size_t)p->grid.nodes * sizeof *V);
    rows = malloc((size_t)B * 2 * sizeof *rows);
    if (!V || !rows) {
        cli_error("certify", "out of memory");
        rc = EXIT_FAIL;
        goto done;
    }
    dg_hji_stats st;
    if (dg_hji_problem_solve(p, V, &st, &e) != DG_OK) {
        rc = cli_fail("certify", &e, 0);
        goto done;
    }
    const double t_end = p->t_end;
    const dg_hji_slices VS = {.nt = 1, .t = &t_end, .v = V};
    const dg_certify_opts o = {.episodes = B, .seed = seed >= 0 ? (uint64_t)seed : s.opts.seed + 1000};
    dg_certify_result r;
    double *value = malloc((size_t)B * sizeof *value), *cost = malloc((size_t)B * sizeof *cost);
    double *w = malloc((size_t)B * sizeof *w);
    if (!value || !cost || !w) {
        free(value);
        free(cost);
        free(w);
        cli_error("certify", "out of memory");
        rc = EXIT_FAIL;
        goto done;
    }
    dg_status cs = degree ? dg_certify_cost(p, &VS, s.env, &pol, params, &o, &r, value, cost, &e)
                          : dg_certify(p, &VS, s.env, s.cfg, &pol, params, &o, &r, value, cost, &e);
    for (int i = 0; cs == DG_OK && i < B; i++) rows[2 * i] = value[i], rows[2 * i + 1] = cost[i];
    free(cost);
    /* each learned player frozen, the other's best response on a 4-D grid: what the frozen one loses */
    double exploit[2] = {NAN, NAN}, exploit_rel[2] = {NAN, NAN}, exploit_s[2] = {0, 0};
    dg_real *st0 = NULL, *aux0 = NULL;
    if (cs == DG_OK && !no_exploit && (cs = dg_run_init_draw(s.env, o.seed, B, &st0, &aux0, &e)) == DG_OK) {
        dg_hji_grid xg;
        cs = dg_certify_exploit_grid(p, &xo, &xg, &e);
        for (int k = 0; k < 2 && cs == DG_OK; k++) {
            fprintf(stderr, "the learned %s frozen: the %s's best response on %d x %d x %d x %d nodes ...\n",
                    k ? "evader" : "pursuer", k ? "pursuer" : "evader", xg.n[0], xg.n[1], xg.n[2], xg.n[3]);
            dg_hji_stats xs;
            if ((cs = dg_certify_exploit(p, s.env, &pol, params, k, &xo, B, st0, w, &xs, &e)) != DG_OK) break;
            exploit[k] = exploit_rel[k] = 0;
            exploit_s[k] = xs.seconds;
            for (int i = 0; i < B; i++) {
                const double loss = k ? value[i] - w[i] : w[i] - value[i];
                exploit[k] += loss / B;
                exploit_rel[k] += loss / fabs(value[i]) / B;
            }
        }
    }
    free(st0);
    free(aux0);
    free(value);
    free(w);
    if (cs != DG_OK) {
        certify_error(&e);
        rc = cli_exit_for(e.status);
        goto done;
    }
    qsort(rows, (size_t)B, 2 * sizeof *rows, cmp_by_value);
    if (degree)
        fprintf(stderr, "%s against its value (payoff: cost, the episode loss over %g s): %d held-out starts\n",
                s.env->game->name, p->t_end, B);
    else
        fprintf(stderr, "%s against %s (payoff: time, %s): %d held-out episodes, %d captured\n", s.env->game->name,
                p->name, p->stationary ? "stationary" : "finite horizon", B, r.captured);
    if (plot && (rc = plot_rows(plot, rows, B, degree)) != 0) goto done;
    fprintf(stderr, "%-22s %9s %12s %16s %9s\n", "V(x0) quarter", "episodes", "mean V(x0)", "mean policy cost",
            "gap");
    for (int q = 0; q <= 4; q++) {
        const int i0 = q < 4 ? q * B / 4 : 0, i1 = q < 4 ? (q + 1) * B / 4 : B;
        double v = 0, c = 0, g = 0;
        for (int i = i0; i < i1; i++) {
            v += rows[2 * i];
            c += rows[2 * i + 1];
            g += (rows[2 * i + 1] - rows[2 * i]) / fabs(rows[2 * i]);
        }
        if (i1 == i0) continue;
        char label[64];
        if (q < 4) snprintf(label, sizeof label, "[%.3f, %.3f]", rows[2 * i0], rows[2 * (i1 - 1)]);
        else snprintf(label, sizeof label, "all");
        fprintf(stderr, "%-22s %9d %12.4f %16.4f %8.2f%%\n", label, i1 - i0, v / (i1 - i0), c / (i1 - i0),
                100 * g / (i1 - i0));
    }
    cli_json j = {cJSON_CreateObject(), 0};
    cli_json_game(&j, s.env->game->name, dg_env_source(s.env));
    cli_json_add(&j, j.root, "hji_game", cJSON_CreateString(p->name));
    cli_json_add(&j, j.root, "episodes", cli_json_number("%.0f", B));
    if (!degree) cli_json_add(&j, j.root, "captured", cli_json_number("%.0f", r.captured));
    cli_json_add(&j, j.root, "value_mean", cli_json_number("%.9g", r.value_mean));
    cli_json_add(&j, j.root, "policy_cost_mean", cli_json_number("%.9g", r.policy_cost_mean));
    cli_json_add(&j, j.root, "gap", cli_json_number("%.6g", r.gap));
    cli_json_add(&j, j.root, "gap_abs", cli_json_number("%.6g", r.gap_abs));
    if (!degree) cli_json_add(&j, j.root, "step_bias_s", cli_json_number("%.6g", r.step_bias));
    else {  /* the loss adds each step's cost at its end; the value integrates: the trapezoid's share */
        cli_json_add(&j, j.root, "step_bias", cli_json_number("%.6g", r.step_bias));
        cli_json_add(&j, j.root, "gap_trapezoid", cli_json_number("%.6g", r.gap_trapezoid));
        fprintf(stderr, "each step's cost counted at its end: the policy's cost by the trapezoid rule is %.4f higher "
                        "(mean); gap %.2f%%\n", r.step_bias, 100 * r.gap_trapezoid);
    }
    cli_json_add(&j, j.root, "hji_residual", cli_json_number("%.3g", st.residual));
    if (!no_exploit) {
        fprintf(stderr, "exploitability (what the frozen player loses to a best response, mean over the starts):\n"
                        "  pursuer %.4f s (%.2f%% of V), evader %.4f s (%.2f%% of V)\n",
                exploit[0], 100 * exploit_rel[0], exploit[1], 100 * exploit_rel[1]);
        cli_json_add(&j, j.root, "exploit_pursuer", cli_json_number("%.6g", exploit[0]));
        cli_json_add(&j, j.root, "exploit_evader", cli_json_number("%.6g", exploit[1]));
        cli_json_add(&j, j.root, "exploit_pursuer_rel", cli_json_number("%.6g", exploit_rel[0]));
        cli_json_add(&j, j.root, "exploit_evader_rel", cli_json_number("%.6g", exploit_rel[1]));
        cli_json_add(&j, j.root, "exploit_seconds", cli_json_number("%.3g", exploit_s[0] + exploit_s[1]));
    }
    rc = cli_json_print(&j, "certify");
done:
    free(V);
    free(rows);
    dg_hji_problem_free(p);
    dg_cfg_free(hcfg);
    dg_params_free(params);
    dg_run_free(&s);
    return rc;
}
