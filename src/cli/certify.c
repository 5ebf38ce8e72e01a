/* difgames certify: how far a learned player (pair) is from the value of the learner's own discrete
 * game (dg_certify_discrete), or with --hji from a continuous-time HJI game's equilibrium (dg_certify). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "difgames/certify.h"
#include "difgames/certify_run.h"
#include "difgames/hji_learn.h"
#include "difgames/image.h"
#include "difgames/safetensors.h"
#include "io/csv.h"

static const char HELP[] =
    "usage: difgames certify --config GAME.yaml --ckpt FILE [options]\n"
    "       difgames certify --config GAME.yaml --ckpt FILE --hji HJI.yaml [options]\n"
    "       difgames certify --sampling --config HJI.yaml --value NET [--grid VALUE] [options]\n"
    "\n"
    "Without --hji: the value of the learner's own discrete game (its dt, step, costs, weights and\n"
    "horizon) by dynamic programming on grids refined until two differ by less than --tol (at least\n"
    "three), the upper and lower values V+ and V- at held-out starts, the learned policy's loss from\n"
    "each, its gap to [V-, V+], and bounds with a sign per start: one learned player, the best\n"
    "open-loop plan's loss (>= V); two, each player frozen and the other's best response (br_cost,\n"
    "exploit). A table of the grids and the means on stderr (a line when the study did not converge:\n"
    "the values are then estimates), one JSON line, --csv a row per start (docs/certify.md). An input\n"
    "no learned player controls must be declared in the model file (play: hold or adversarial).\n"
    "\n"
    "With --hji: a different game, the continuous-time HJI game the learning game maps onto (its\n"
    "capture time, payoff: time; or a model file with payoff: cost, given as its own --hji), compared\n"
    "by quarter of V(x0): value_mean, policy_cost_mean, gap, and each learned player's exploitability on\n"
    "a 4-D grid (duel_simple onto pursuit2d, duel_open onto chase4d with env.observe: relative).\n"
    "\n"
    "With --sampling: a learned value's safe set certified by sampling (Lin & Bansal 2023; a tube of a\n"
    "game of kind, --config its HJI config, --value the network of hji learn, no --ckpt). States drawn\n"
    "uniformly from S_delta = {V_theta(x, t_end) > delta} in the config's box are rolled out over\n"
    "t_end, the player who avoids playing V_theta's feedback against the other's (the --grid value's\n"
    "feedback, else V_theta's); a state fails when its path enters the target (l <= 0). A problem of\n"
    "more than six axes (collision9d) has no grid: l from its formula, and no --grid. Rounds test\n"
    "delta = 0 and then the levels the earlier rounds' failures give, each on N fresh samples at\n"
    "beta / rounds. Certified: with confidence 1 - beta, a state drawn uniformly from S_delta fails\n"
    "with probability at most epsilon (conditional on S_delta, for that closed loop at that --dt).\n"
    "One JSON line: delta, epsilon, beta, N, the box's fraction in S_delta (coverage, with its\n"
    "standard error) and the failure rate among V_theta > 0 (uncertified_rate); docs/neural.md.\n";

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

/* the library's progress lines on stderr */
static void certify_note(void *user, const char *line) {
    (void)user;
    fprintf(stderr, "%s\n", line);
}

/* The failure of dg_certify_run: its line and the exit status */
static int certify_fail(const dg_certify_run_result *r, const dg_err *e) {
    cli_error("certify", "%s", e->msg);
    return r->usage ? EXIT_USAGE : dg_status_exit(e->status);
}

/* --hji: dg_certify_run's result as the table (and --plot's figure), the lines on stderr of a game of
 * degree and of the exploitability, and the JSON line; 0 or the exit status. */
static int certify_show(const dg_env *env, const dg_certify_run_result *r, const char *plot) {
    const dg_certify_result *c = &r->cont;
    const int B = r->episodes;
    if (r->degree)
        fprintf(stderr, "%s against its value in continuous time (payoff: cost, the episode loss over %g s; a "
                        "different game from the learner's discrete one): %d held-out starts\n",
                env->game->name, r->t_end, B);
    else
        fprintf(stderr, "%s against %s (payoff: time, %s; a different game from the learner's discrete one): %d "
                        "held-out episodes, %d captured\n", env->game->name, r->hji_name,
                r->stationary ? "stationary" : "finite horizon", B, c->captured);
    int rc = plot ? plot_rows(plot, r->pairs, B, r->degree) : 0;  /* pairs ordered by V(x0) */
    if (rc) return rc;
    certify_table(r->q);
    if (r->degree)
        fprintf(stderr, "each step's cost counted at its end: the policy's cost by the trapezoid rule is %.4f higher "
                        "(mean); gap %.2f%%\n", c->step_bias, 100 * c->gap_trapezoid);
    if (r->exploit)
        fprintf(stderr, "exploitability (what the frozen player loses to a best response, mean over the starts):\n"
                        "  pursuer %.4f s (%.2f%% of V), evader %.4f s (%.2f%% of V)\n",
                r->exploit_v[0], 100 * r->exploit_rel[0], r->exploit_v[1], 100 * r->exploit_rel[1]);
    puts(r->json);
    fflush(stdout);
    return 0;
}

/* ------------------------------------------------------------ the learner's own game (default) */

static const char *const PLAYER[2] = {"pursuer", "evader"};

/* --csv: one row per start (docs/certify.md names the columns); 0 or an exit status */
static int own_csv(const char *path, const dg_env *env, const dg_certify_discrete_result *r,
                   const dg_certify_discrete_rows *x) {
    dg_csv w;
    dg_err e = {0};
    const int B = r->episodes, S = env->state_dim;
    if (dg_csv_begin(&w, path, &e) != DG_OK) return cli_fail("certify", &e, 0);
    for (int k = 0; k < S; k++) {
        char name[64];
        dg_env_state_name(env, k, name, sizeof name);
        dg_csv_col(&w, name, DG_CSV_G9);
    }
    dg_csv_col(&w, "value_upper", DG_CSV_G9);
    dg_csv_col(&w, "value_lower", DG_CSV_G9);
    dg_csv_col(&w, "policy_cost", DG_CSV_G9);
    dg_csv_col(&w, "gap", DG_CSV_G9);
    dg_csv_col(&w, "abs_gap", DG_CSV_G9);
    if (r->players == 1) dg_csv_col(&w, "plan_cost", DG_CSV_G9);
    if (r->adversarial) dg_csv_col(&w, "policy_cost_held", DG_CSV_G9);
    for (int k = 0; k < 2 && r->players == 2; k++) {
        char name[3][32];
        snprintf(name[0], sizeof name[0], "br_cost_%s", PLAYER[k]);
        snprintf(name[1], sizeof name[1], "br_route_%s", PLAYER[k]);
        snprintf(name[2], sizeof name[2], "exploit_%s", PLAYER[k]);
        dg_csv_col(&w, name[0], DG_CSV_G9);
        dg_csv_col(&w, name[1], DG_CSV_STR);
        dg_csv_col(&w, name[2], DG_CSV_G9);
    }
    for (int b = 0; b < B; b++) {
        for (int k = 0; k < S; k++) dg_csv_num(&w, x->state[(size_t)b * S + k]);
        dg_csv_num(&w, x->value_upper[b]);
        dg_csv_num(&w, x->value_lower[b]);
        dg_csv_num(&w, x->policy_cost[b]);
        dg_csv_num(&w, x->gap[b]);
        dg_csv_num(&w, x->abs_gap[b]);
        if (r->players == 1) dg_csv_num(&w, x->plan_cost[b]);
        if (r->adversarial) dg_csv_num(&w, x->policy_cost_held[b]);
        for (int k = 0; k < 2 && r->players == 2; k++) {
            const char *route = dg_certify_route_name(x->br_route[k][b]);
            dg_csv_num(&w, x->br_cost[k][b]);
            dg_csv_str(&w, route ? route : "");
            dg_csv_num(&w, x->exploit[k][b]);
        }
    }
    return dg_csv_commit(&w, &e) == DG_OK ? 0 : cli_fail("certify", &e, 0);
}

/* the refinement study and the means on stderr; the line that says it did not converge */
static void own_table(const dg_env *env, const dg_certify_discrete_result *r, double tol) {
    const dg_dp_refinement *f = &r->ref;
    const int d = dg_dp_dims(env), two = r->nvalues == 2;
    fprintf(stderr, "%s: the learner's own discrete game (dt %g, %d steps), %d held-out starts; the grid's value by "
                    "refinement:\n", env->game->name, (double)env->dt, env->horizon, r->episodes);
    fprintf(stderr, "  %-20s %12s %12s %9s\n", "nodes", two ? "mean V+" : "mean V", two ? "mean V-" : "", "seconds");
    for (int i = 0; i < f->ngrids; i++) {
        char nodes[96] = "";
        for (int k = 0; k < d; k++) cli_catf(nodes, sizeof nodes, "%s%d", k ? " x " : "", f->nodes[i][k]);
        char lo[32] = "";
        if (two) snprintf(lo, sizeof lo, "%.6f", f->mean[i][1]);
        fprintf(stderr, "  %-20s %12.6f %12s %9.1f\n", nodes, f->mean[i][0], lo, f->seconds[i]);
    }
    for (int w = 0; w < r->nvalues; w++)
        fprintf(stderr, "  %s: change %.3g%% between the two finest, order %.2f, %s\n", two ? (w ? "V-" : "V+") : "V",
                100 * f->change[w], f->order[w], f->extrapolated[w] ? "extrapolated"
                : "the finest grid's value (not extrapolated: the order is outside [0.5, 2.5] or the changes do not fall)");
    if (!f->converged)
        fprintf(stderr, "certify: not converged: the two finest grids differ by %.3g%% (tol %.3g%%), stopped by %s: "
                        "the values are estimates\n", 100 * fmax(f->change[0], two ? f->change[1] : 0), 100 * tol,
                f->stopped);
    if (r->outside > 0.01)
        fprintf(stderr, "certify: the finest grid's chosen next states left its box at %.0f%% of node-steps (off_box): "
                        "the edge's values stood in there; widen it with --box\n", 100 * r->outside);
    if (r->bounds && r->players == 1 && r->plan_cost < r->value_upper * (1 - f->change[0]))
        fprintf(stderr, "certify: the best plan's loss (%.6f) lies below the grid's value (%.6f) by more than its last "
                        "change: the plan is a bound (V <= plan_cost), the grid errs high\n", r->plan_cost,
                r->value_upper);
    for (int k = 0; k < r->ninputs; k++)
        fprintf(stderr, "the input '%s' (no learned player): %s\n", r->inputs[k].name,
                r->inputs[k].play == DG_INPUT_ADVERSARIAL ? "adversarial, the grid's worst-case answer to the policy"
                                                            : "held at its declared value");
    char lower[48] = "";
    if (two) snprintf(lower, sizeof lower, " V- %.6f,", r->value_lower);
    fprintf(stderr, "means: %s %.6f,%s policy cost %.6f, gap %.2f%%, abs_gap %.2f%%\n", two ? "V+" : "V", r->value_upper,
            lower, r->policy_cost, 100 * r->gap, 100 * r->abs_gap);
    if (r->adversarial)
        fprintf(stderr, "  the policy's loss with the input held (the game BPTT trained on): %.6f\n", r->policy_cost_held);
    if (r->bounds && r->players == 1)
        fprintf(stderr, "  the best open-loop plan: %.6f (>= V(x0) at every start; the policy is at least %.6f above "
                        "it)\n", r->plan_cost, r->bound_stats.suboptimal);
    for (int k = 0; k < 2 && r->bounds && r->players == 2; k++)
        fprintf(stderr, "  the %s frozen: the %s's best response %.6f, exploit_%s %.6f%s%s\n", PLAYER[k], PLAYER[1 - k],
                r->br_cost[k], PLAYER[k], r->exploit[k], r->weak[k] ? " (weak at some starts: see weak_*)" : "",
                r->grid_route[k] == -1 ? " (no grid route: the frozen player sees more than the value state)" : "");
}

/* --plot of the default path: V+ and the policy's loss at each start, ordered by V+ */
static int own_plot(const char *path, const dg_certify_discrete_result *r, const dg_certify_discrete_rows *x) {
    const int B = r->episodes;
    double *rows = malloc(sizeof(double) * 2 * (size_t)B);
    if (!rows) {
        cli_error("certify", "out of memory");
        return EXIT_FAIL;
    }
    for (int b = 0; b < B; b++) rows[2 * b] = x->value_upper[b], rows[2 * b + 1] = x->policy_cost[b];
    dg_certify_quarter q[5];
    dg_certify_quarters(rows, B, q);  /* sorts the pairs by value */
    const int rc = plot_rows(path, rows, B, 1);
    free(rows);
    return rc;
}

/* The default path: dg_certify_run's result as the study's table, --csv, --plot and the JSON line; 0 or
 * the exit status. */
static int own_show(const dg_env *env, const dg_certify_run_result *r, double tol, const char *csv, const char *plot) {
    own_table(env, &r->own, tol);
    int rc = csv ? own_csv(csv, env, &r->own, &r->rows) : 0;
    if (!rc && plot) rc = own_plot(plot, &r->own, &r->rows);
    if (rc) return rc;
    puts(r->json);
    fflush(stdout);
    return 0;
}

/* ------------------------------------------------------------ --sampling: a learned value's safe set */

/* What --sampling is given. */
/* --sampling: the certificate's lines on stderr and its JSON line (built by dg_certify_sampling_run). */
static int sampling_show(const dg_certify_run_opts *o, const dg_certify_run_result *res) {
    const dg_certify_sampling_result *r = &res->sampling;
    fprintf(stderr, "%s: %lld samples a round (%d failures allowed, beta %g / %d rounds), %d round%s run, %lld "
                    "failures in the last\n", res->game, (long long)r->N, r->k, r->beta, o->sampling.rounds, r->rounds,
            r->rounds == 1 ? "" : "s", (long long)r->failures);
    if (r->certified)
        fprintf(stderr, "certified: V > %.6g (%.2f%% +- %.2f%% of the box): with confidence 1 - %g a state drawn "
                        "uniformly from it enters the target with probability <= %g (the samples support %.3g)\n",
                r->delta, 100 * r->coverage, 100 * r->coverage_se, r->beta, r->epsilon, r->epsilon_bound);
    else
        fprintf(stderr, "not certified: %s\n", r->sparse ? "the level reached leaves less than --min-fraction of the "
                "box to sample" : "every level tested had more failures than allowed (more --rounds or --failures)");
    fprintf(stderr, "among V > 0 (%.2f%% of the box), %.4g%% +- %.2g%% of the states fail (uncertified)\n",
            100 * r->safe_fraction, 100 * r->uncertified_rate, 100 * r->uncertified_se);
    puts(res->json);
    return 0;
}

/* --sampling: the network (an f64 one in the double copy), then the library's certificate; 0 or the
 * exit status. */
static int sampling_run(const char *config, const dg_certify_run_opts *o) {
    {  /* the network's precision: an f64 one is evaluated by the double copy of the command (main.c) */
        int f64 = 0;
        if (dg_hji_learn_probe(o->value, &f64) && f64 && !DG_REAL_F64) return CLI_RERUN_F64;
    }
    dg_err e = {0};
    dg_certify_run_result r;
    int rc = dg_certify_sampling_run(config, o, &r, &e) == DG_OK ? sampling_show(o, &r) : certify_fail(&r, &e);
    dg_certify_run_free(&r);
    return rc;
}

/* The options one path takes and the other does not: the first given, or NULL. */
static const char *stray(const cli_opt *opts, const char *const *names) {
    for (; *names; names++)
        if (cli_given(opts, *names)) return *names;
    return NULL;
}

/* certify's own options (include/difgames/certify_run.h, dg_certify_run_options) as the command's:
 * --name with '-' for '_', their types, bounds, defaults and --help lines the table's, into opts
 * from *n on (after the first option of --sampling alone: the command's --sampling, --value and --grid
 * first, from extra). Their values land in iv, dv, lv (cli_parse checks them; the library parses
 * the given text again into its options). */
typedef struct lib_opts {
    char     name[32][40];
    int      iv[32];
    double   dv[32];
    cli_list lv[4];
} lib_opts;

static void lib_opts_add(cli_opt *opts, int *n, lib_opts *L, const cli_opt *extra, int nextra) {
    int no = 0, nl = 0;
    const dg_certify_opt *t = dg_certify_run_options(&no);
    for (int k = 0; k < no && k < 32; k++) {
        if (t[k].paths == DG_CERTIFY_SAMPLING && extra) {
            for (int x = 0; x < nextra; x++) opts[(*n)++] = extra[x];
            extra = NULL;
        }
        char *nm = L->name[k];
        snprintf(nm, sizeof L->name[k], "--%s", t[k].name);
        for (char *c = nm + 2; *c; c++)
            if (*c == '_') *c = '-';
        cli_opt o = {.name = nm, .metavar = t[k].metavar, .doc = t[k].doc, .lo = t[k].lo, .hi = t[k].hi,
                     .open = t[k].open, .max = t[k].max, .def = t[k].def, .otherwise = t[k].otherwise};
        switch (t[k].type) {
        case DG_CERTIFY_OPT_INT: o.type = CLI_T_INT, o.i = &L->iv[k]; break;
        case DG_CERTIFY_OPT_DOUBLE: o.type = CLI_T_DOUBLE, o.d = &L->dv[k]; break;
        case DG_CERTIFY_OPT_FLAG: o.type = CLI_T_FLAG, o.i = &L->iv[k], o.metavar = NULL; break;
        default: o.type = CLI_T_LIST, o.list = &L->lv[nl < 3 ? nl++ : 3]; break;
        }
        opts[(*n)++] = o;
    }
}

int cmd_certify(int argc, char **argv) {
    const char *config, *ckpt, *hji, *plot, *csv, *value, *grid;
    int rc, sampling;
    dg_run run;
    lib_opts L;
    memset(&L, 0, sizeof L);
    cli_opt opts[CLI_MAX_OPTS] = {
        CLI_IN("--config", &config, "FILE", "the game's YAML config (configs/*.yaml); with --sampling its HJI "
               "config (configs/hji/*.yaml)", .req = 1),
        CLI_CKPT(&ckpt, .unless = "--sampling"), CLI_PLUGIN,
        CLI_IN("--hji", &hji, "HJI.yaml", "compare against a continuous-time HJI game instead (a different game: its "
               "payoff: time, or a model file with payoff: cost given as its own --hji)",
               .otherwise = "the learner's own discrete game"),
        CLI_OUT("--plot", &plot, "FILE.png", "the value and the policy's cost at each start, ordered by the value",
                .otherwise = "none"),
        CLI_OUT("--csv", &csv, "FILE.csv", "one row per start: the state's columns, value_upper, value_lower, "
                "policy_cost, gap, abs_gap, plan_cost or br_cost_P, br_route_P, exploit_P (not with --hji)",
                .otherwise = "none"),
    };
    const cli_opt extra[] = {
        CLI_FLAG("--sampling", &sampling, "certify a learned value's safe set by sampling instead (--value, no "
                 "--ckpt)"),
        CLI_IN("--value", &value, "NET", "with --sampling: the network of hji learn (value.safetensors)"),
        CLI_IN("--grid", &grid, "VALUE", "with --sampling: a value file of hji solve for the same config, whose "
               "feedback the other player plays", .otherwise = "the other player plays V_theta's feedback"),
    };
    int n = 6;
    lib_opts_add(opts, &n, &L, extra, 3);
    opts[n] = (cli_opt)CLI_END;
    if (!cli_parse(&rc, "certify", argc, argv, opts, HELP)) return rc;
    for (int k = 0; k < 4; k++) free(L.lv[k].v);  /* the library reads the given text */
    static const char *const SAMPLING_NOT[] = {"--ckpt", "--plugin", "--hji", "--plot", "--csv", NULL};
    static const char *const SAMPLING_ONLY[] = {"--value", "--grid", NULL};
    const char *odd = sampling ? stray(opts, SAMPLING_NOT) : stray(opts, SAMPLING_ONLY);
    if (odd || (sampling && !value)) {
        if (!odd) cli_error("certify", "--sampling needs --value NET (the network of hji learn)");
        else if (sampling) cli_error("certify", "--sampling certifies a learned value (--config HJI.yaml --value NET): "
                                     "not with %s", odd);
        else cli_error("certify", "%s applies to --sampling", odd);
        return EXIT_USAGE;
    }
    if (hji && csv) {
        cli_error("certify", "--csv applies to the learner's own game: not with --hji");
        return EXIT_USAGE;
    }
    dg_certify_run_opts o = dg_certify_run_opts_default();
    o.ckpt = ckpt;
    o.hji = hji;
    o.value = sampling ? value : NULL;
    o.grid = grid;
    o.note = certify_note;
    dg_err e = {0};
    for (int k = 6; opts[k].name; k++) {  /* the library's options given, by its table */
        if (!opts[k].given || opts[k].i == &sampling || opts[k].s == &value || opts[k].s == &grid) continue;
        if (dg_certify_run_set(&o, opts[k].name, opts[k].type == CLI_T_FLAG ? "1" : opts[k].given, &e) != DG_OK) {
            certify_error(&e);
            return EXIT_USAGE;
        }
    }
    if (sampling) return sampling_run(config, &o);
    if ((rc = cli_load_opts(&run, config, opts))) return rc;
    if (!hji && o.nbox) {
        const int d = dg_dp_dims(run.env);
        int bad = o.nbox != 2 * d;
        for (int k = 0; !bad && k < d; k++) bad = !(o.box[2 * k] < o.box[2 * k + 1]);
        dg_err gse = {0};  /* a general-sum or noisy game is refused first (dg_certify_run's own first checks) */
        if (bad && dg_certify_general_sum_check(run.env, &gse) == DG_OK &&
            dg_certify_env_noise_check(run.env, &gse) == DG_OK) {
            cli_error("certify", "--box %s: %s's value state has %d axes: give %d numbers, a low end below each high one",
                      cli_given(opts, "--box"), run.env->game->name, d, 2 * d);
            dg_run_free(&run);
            return EXIT_USAGE;
        }
        if (bad) o.nbox = 0;
    }
    dg_certify_run_result r;
    if (dg_certify_run(&run, &o, &r, &e) != DG_OK) rc = certify_fail(&r, &e);
    else rc = hji ? certify_show(run.env, &r, plot) : own_show(run.env, &r, o.tol, csv, plot);
    dg_certify_run_free(&r);
    dg_run_free(&run);
    return rc;
}
