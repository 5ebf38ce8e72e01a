/* difgames certify: how far a learned player (pair) is from the value of the learner's own discrete
 * game (dg_certify_discrete), or with --hji from a continuous-time HJI game's equilibrium (dg_certify). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "difgames/certify.h"
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
    dg_hji_learn_opts lo;  /* a config that also learns the value: its learn.* keys are read, not used */
    if (!c->hcfg || !(c->p = dg_hji_problem_load(c->hcfg, &e)) || dg_hji_learn_opts_read(c->hcfg, &lo, &e) != DG_OK ||
        dg_cfg_check_unused(c->hcfg, &e) != DG_OK ||
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
    dg_json_add(&j, j.root, "certifies", cJSON_CreateString("a continuous-time HJI game, not the learner's"));
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
            fprintf(stderr, "%s against its value in continuous time (payoff: cost, the episode loss over %g s; a "
                            "different game from the learner's discrete one): %d held-out starts\n",
                    env->game->name, p->t_end, B);
        else
            fprintf(stderr, "%s against %s (payoff: time, %s; a different game from the learner's discrete one): %d "
                            "held-out episodes, %d captured\n", env->game->name, p->name,
                    p->stationary ? "stationary" : "finite horizon", B, r.captured);
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

/* ------------------------------------------------------------ the learner's own game (default) */

static const char *const PLAYER[2] = {"pursuer", "evader"};

/* Per start, what the CSV and --plot show (dg_certify_discrete_rows over owned arrays). */
typedef struct own_rows {
    dg_certify_discrete_rows r;
    double *block;
    int    *routes;
} own_rows;

static int own_rows_alloc(own_rows *o, int B, int S) {
    memset(o, 0, sizeof *o);
    const size_t n = (size_t)B;
    o->block = malloc(sizeof(double) * (n * S + 12 * n));
    o->routes = malloc(sizeof(int) * 2 * n);
    if (!o->block || !o->routes) return 0;
    double *p = o->block;
    o->r.state = p, p += n * S;
    double **cols[] = {&o->r.value_upper, &o->r.value_lower, &o->r.policy_cost, &o->r.policy_cost_held, &o->r.gap,
                       &o->r.abs_gap, &o->r.plan_cost, &o->r.br_cost[0], &o->r.br_cost[1], &o->r.exploit[0],
                       &o->r.exploit[1]};
    for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++) *cols[k] = p, p += n;
    o->r.br_route[0] = o->routes;
    o->r.br_route[1] = o->routes + n;
    return 1;
}

static void own_rows_free(own_rows *o) {
    free(o->block);
    free(o->routes);
}

/* --csv: one row per start (docs/certify.md names the columns); 0 or an exit status */
static int own_csv(const char *path, const dg_env *env, const dg_certify_discrete_result *r, const own_rows *o) {
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
    const dg_certify_discrete_rows *x = &o->r;
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

/* the JSON line of the default path */
static int own_json(const dg_env *env, const dg_certify_discrete_result *r, double tol) {
    const dg_dp_refinement *f = &r->ref;
    const int d = dg_dp_dims(env);
    dg_json j = {cJSON_CreateObject(), 0};
    dg_json_game(&j, env->game->name, dg_env_source(env));
    dg_json_add(&j, j.root, "certifies", cJSON_CreateString("the learner's discrete game"));
    dg_json_add(&j, j.root, "episodes", dg_json_number("%.0f", r->episodes));
    dg_json_add(&j, j.root, "players", dg_json_number("%.0f", r->players));
    dg_json_add(&j, j.root, "value_upper", dg_json_number("%.9g", r->value_upper));
    dg_json_add(&j, j.root, "value_lower", dg_json_number("%.9g", r->value_lower));
    dg_json_add(&j, j.root, "policy_cost", dg_json_number("%.9g", r->policy_cost));
    dg_json_add(&j, j.root, "gap", dg_json_number("%.6g", r->gap));
    dg_json_add(&j, j.root, "abs_gap", dg_json_number("%.6g", r->abs_gap));
    if (r->adversarial) dg_json_add(&j, j.root, "policy_cost_held", dg_json_number("%.9g", r->policy_cost_held));
    if (r->bounds && r->players == 1) dg_json_add(&j, j.root, "plan_cost", dg_json_number("%.9g", r->plan_cost));
    for (int k = 0; k < 2 && r->bounds && r->players == 2; k++) {
        char key[40];
        snprintf(key, sizeof key, "br_cost_%s", PLAYER[k]);
        dg_json_add(&j, j.root, key, dg_json_number("%.9g", r->br_cost[k]));
        cJSON *routes = dg_json_add(&j, j.root, (snprintf(key, sizeof key, "br_route_%s", PLAYER[k]), key),
                                    cJSON_CreateObject());
        for (int q = 0; dg_certify_route_name(q); q++)
            dg_json_add(&j, routes, dg_certify_route_name(q), dg_json_number("%.0f", r->route_starts[k][q]));
        const int g = r->grid_route[k];  /* why the grid route ran or not */
        snprintf(key, sizeof key, "grid_route_%s", PLAYER[k]);
        dg_json_add(&j, j.root, key, cJSON_CreateString(g == 1 ? "ran" : g == 0 ? "off" : g == -1 ? "sees more than the value state"
                                                                                         : "over the memory estimate"));
        snprintf(key, sizeof key, "exploit_%s", PLAYER[k]);
        dg_json_add(&j, j.root, key, dg_json_number("%.6g", r->exploit[k]));
        snprintf(key, sizeof key, "weak_%s", PLAYER[k]);
        dg_json_add(&j, j.root, key, dg_json_number("%.0f", r->weak[k]));
    }
    cJSON *ref = dg_json_add(&j, j.root, "refinement", cJSON_CreateArray());
    for (int i = 0; i < f->ngrids; i++) {
        cJSON *g = cJSON_CreateObject(), *n = cJSON_CreateArray();
        dg_json_add(&j, ref, NULL, g);
        dg_json_add(&j, g, "nodes", n);
        for (int k = 0; k < d; k++) dg_json_add(&j, n, NULL, dg_json_number("%.0f", f->nodes[i][k]));
        dg_json_add(&j, g, "value_upper", dg_json_number("%.9g", f->mean[i][0]));
        dg_json_add(&j, g, "value_lower", dg_json_number("%.9g", f->mean[i][r->nvalues - 1]));
        dg_json_add(&j, g, "seconds", dg_json_number("%.3g", f->seconds[i]));
    }
    cJSON *order = dg_json_add(&j, j.root, "order", cJSON_CreateObject());
    cJSON *ext = dg_json_add(&j, j.root, "extrapolated", cJSON_CreateObject());
    cJSON *change = dg_json_add(&j, j.root, "change", cJSON_CreateObject());
    for (int w = 0; w < 2; w++) {
        const int v = w < r->nvalues ? w : 0;
        const char *name = w ? "value_lower" : "value_upper";
        dg_json_add(&j, order, name, dg_json_number("%.3g", f->order[v]));
        dg_json_add(&j, ext, name, cJSON_CreateBool(f->extrapolated[v]));
        dg_json_add(&j, change, name, dg_json_number("%.3g", f->change[v]));
    }
    dg_json_add(&j, j.root, "converged", cJSON_CreateBool(f->converged));
    dg_json_add(&j, j.root, "tol", dg_json_number("%.6g", tol));
    dg_json_add(&j, j.root, "stopped", cJSON_CreateString(f->stopped ? f->stopped : ""));
    dg_json_add(&j, j.root, "off_box", dg_json_number("%.3g", r->outside));
    cJSON *inputs = dg_json_add(&j, j.root, "inputs", cJSON_CreateObject());
    for (int k = 0; k < r->ninputs; k++) {
        const dg_env_input *in = &r->inputs[k];
        cJSON *x = dg_json_add(&j, inputs, in->name, cJSON_CreateObject());
        dg_json_add(&j, x, "play", cJSON_CreateString(dg_env_input_play_name(in->play)));
        cJSON *h = dg_json_add(&j, x, in->play == DG_INPUT_ADVERSARIAL ? "held_in_training" : "held", cJSON_CreateArray());
        for (int c = 0; c < in->dim; c++) dg_json_add(&j, h, NULL, dg_json_number("%.9g", in->hold[c]));
    }
    double grid_s = 0;
    for (int i = 0; i < f->ngrids; i++) grid_s += f->seconds[i];
    dg_json_add(&j, j.root, "seconds_grid", dg_json_number("%.3g", grid_s));
    dg_json_add(&j, j.root, "seconds_bounds", dg_json_number("%.3g", r->seconds_bounds));
    if (r->grid_route[0] == 1 || r->grid_route[1] == 1)
        dg_json_add(&j, j.root, "seconds_grid_route", dg_json_number("%.3g", r->seconds_grid));
    return cli_json_print(&j, "certify");
}

/* --plot of the default path: V+ and the policy's loss at each start, ordered by V+ */
static int own_plot(const char *path, const dg_certify_discrete_result *r, const own_rows *o) {
    const int B = r->episodes;
    double *rows = malloc(sizeof(double) * 2 * (size_t)B);
    if (!rows) {
        cli_error("certify", "out of memory");
        return EXIT_FAIL;
    }
    for (int b = 0; b < B; b++) rows[2 * b] = o->r.value_upper[b], rows[2 * b + 1] = o->r.policy_cost[b];
    dg_certify_quarter q[5];
    dg_certify_quarters(rows, B, q);  /* sorts the pairs by value */
    const int rc = plot_rows(path, rows, B, 1);
    free(rows);
    return rc;
}

/* The default path: dg_certify_discrete with the command's options; 0 or the exit status. */
static int own_run(dg_run *run, const char *ckpt, const dg_certify_discrete_opts *o, const char *csv,
                   const char *plot) {
    const dg_env *env = run->env;
    dg_err e = {0};
    dg_policy pol;
    dg_params *params = NULL;
    if (dg_dp_check(env, &e) != DG_OK) {  /* before the checkpoint: what the game lacks comes first */
        cli_error("certify", "%s", e.msg + (strncmp(e.msg, "dp: ", 4) ? 0 : 4));
        return EXIT_USAGE;
    }
    if (dg_run_policy_load(run, ckpt, &pol, &params, &e) != DG_OK) return cli_fail("certify", &e, 0);
    if (!cli_mem_ok("certify", dg_certify_bounds_memory(env, &pol, o->episodes), "the plans' tapes", "--episodes")) {
        dg_params_free(params);
        return EXIT_USAGE;
    }
    own_rows rows;
    dg_certify_discrete_result r;
    int rc = 0;
    if (!own_rows_alloc(&rows, o->episodes, env->state_dim)) {
        cli_error("certify", "out of memory");
        rc = EXIT_FAIL;
    } else if (dg_certify_discrete(env, &pol, params, o, &rows.r, &r, &e) != DG_OK) {
        cli_error("certify", "%s", e.msg + (strncmp(e.msg, "dp: ", 4) ? 0 : 4));
        rc = dg_status_exit(e.status);
    } else {
        own_table(env, &r, o->refine.tol);
        if (csv) rc = own_csv(csv, env, &r, &rows);
        if (!rc && plot) rc = own_plot(plot, &r, &rows);
        if (!rc) rc = own_json(env, &r, o->refine.tol);
    }
    own_rows_free(&rows);
    dg_params_free(params);
    return rc;
}

/* ------------------------------------------------------------ --sampling: a learned value's safe set */

/* What --sampling is given. */
typedef struct sampling_args {
    const char *config, *value, *grid;
    dg_certify_sampling_opts o;
    dg_hji_source other;                  /* --grid's value, o.other's                           */
} sampling_args;

/* The JSON line of a sampling certificate (and its lines on stderr). */
static int sampling_report(const dg_hji_problem *p, const sampling_args *a, const dg_certify_sampling_result *r) {
    fprintf(stderr, "%s: %lld samples a round (%d failures allowed, beta %g / %d rounds), %d round%s run, %lld "
                    "failures in the last\n", p->name, (long long)r->N, r->k, r->beta, a->o.rounds, r->rounds,
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
    dg_json j = {cJSON_CreateObject(), 0};
    dg_json_game(&j, p->name, dg_hji_problem_source(p));
    dg_json_add(&j, j.root, "certifies", cJSON_CreateString("a learned value's safe set, by sampling"));
    dg_json_add(&j, j.root, "certified", cJSON_CreateBool(r->certified));
    dg_json_add(&j, j.root, "delta", dg_json_number("%.9g", r->delta));
    dg_json_add(&j, j.root, "epsilon", dg_json_number("%.6g", r->epsilon));
    dg_json_add(&j, j.root, "beta", dg_json_number("%.6g", r->beta));
    dg_json_add(&j, j.root, "N", dg_json_number("%.0f", (double)r->N));
    dg_json_add(&j, j.root, "failures_allowed", dg_json_number("%.0f", r->k));
    dg_json_add(&j, j.root, "rounds", dg_json_number("%.0f", r->rounds));
    dg_json_add(&j, j.root, "failures", dg_json_number("%.0f", (double)r->failures));
    dg_json_add(&j, j.root, "epsilon_bound", dg_json_number("%.6g", r->epsilon_bound));
    dg_json_add(&j, j.root, "coverage", dg_json_number("%.6g", r->coverage));
    dg_json_add(&j, j.root, "coverage_se", dg_json_number("%.3g", r->coverage_se));
    dg_json_add(&j, j.root, "safe_fraction", dg_json_number("%.6g", r->safe_fraction));
    dg_json_add(&j, j.root, "uncertified_rate", dg_json_number("%.6g", r->uncertified_rate));
    dg_json_add(&j, j.root, "uncertified_se", dg_json_number("%.3g", r->uncertified_se));
    dg_json_add(&j, j.root, "other", cJSON_CreateString(a->grid ? "grid" : "network"));
    dg_json_add(&j, j.root, "dt", dg_json_number("%.6g", r->dt));
    dg_json_add(&j, j.root, "steps", dg_json_number("%.0f", (double)r->steps));
    dg_json_add(&j, j.root, "draws", dg_json_number("%.0f", (double)r->draws));
    dg_json_add(&j, j.root, "seconds", dg_json_number("%.3g", r->seconds));
    return cli_json_print(&j, "certify");
}

/* --sampling: the HJI config, the network (an f64 one in the double copy), the grid's value, the
 * certificate; 0 or the exit status. */
static int sampling_run(sampling_args *a) {
    {  /* the network's precision: an f64 one is evaluated by the double copy of the command (main.c) */
        dg_err pe = {0};
        dg_st_file *f = dg_st_load(a->value, &pe);  /* unreadable: dg_hji_learn_load says why, below */
        const char *prec = f ? dg_st_meta(f, "precision") : NULL;
        const int f64 = prec && !strcmp(prec, "f64");
        dg_st_free(f);
        if (f64 && !DG_REAL_F64) return CLI_RERUN_F64;
    }
    dg_err e = {0};
    dg_hji_learn_opts lo;  /* a config that also learns the value: its learn.* keys are read, not used */
    dg_cfg *cfg = dg_cfg_load(a->config, &e);
    /* for work at points: a problem of more than 6 axes has no grid (its target from its formula) */
    dg_hji_problem *p = cfg ? dg_hji_problem_load_points(cfg, &e) : NULL;
    dg_hji_learn_net net = {0};
    dg_hji_value_slices vs = {0};
    int rc = 0;
    if (!p || dg_hji_learn_opts_read(cfg, &lo, &e) != DG_OK || dg_cfg_check_unused(cfg, &e) != DG_OK ||
        dg_certify_sampling_check(p, &e) != DG_OK) {
        certify_error(&e);
        rc = EXIT_USAGE;
    } else if (dg_hji_learn_load(a->value, p, &net, &e) != DG_OK) {
        rc = cli_fail("certify", &e, e.status == DG_ERR_NOMEM ? EXIT_FAIL : EXIT_USAGE);
    } else if (fabs(net.t_end - p->t_end) > 1e-9 * fabs(p->t_end)) {
        cli_error("certify", "--value %s was trained to t_end %g, --config %s says %g", a->value, net.t_end, a->config,
                  p->t_end);
        rc = EXIT_USAGE;
    } else if (a->grid && p->grid.ndim > DG_HJI_GRID_MAX_DIMS) {
        cli_error("certify", "--grid %s: %s has %d state dimensions, no grid (a grid's value has at most %d): the "
                  "other player plays the network's feedback without --grid", a->grid, p->name, p->grid.ndim,
                  DG_HJI_GRID_MAX_DIMS);
        rc = EXIT_USAGE;
    } else if (a->grid) {
        dg_hji_file_step step;
        const dg_status s = dg_hji_value_load(a->grid, p, a->config, &vs, &step, &e);
        if (s != DG_OK) {
            cli_error("certify", "--grid %s: %s", a->grid, e.msg);
            rc = s == DG_ERR_NOMEM ? EXIT_FAIL : EXIT_USAGE;
        }
        a->other = dg_hji_source_slices(&p->grid, &vs.slices);
        a->o.other = &a->other;
    }
    dg_certify_sampling_result r;
    if (!rc && dg_certify_sampling(p, &net, &a->o, &r, &e) != DG_OK) {
        certify_error(&e);
        rc = dg_status_exit(e.status);
    }
    if (!rc) rc = sampling_report(p, a, &r);
    dg_hji_value_slices_free(&vs);
    dg_hji_learn_net_free(&net);
    dg_hji_problem_free(p);
    dg_cfg_free(cfg);
    return rc;
}

/* The options one path takes and the other does not: the first given, or NULL. */
static const char *stray(const cli_opt *opts, const char *const *names) {
    for (; *names; names++)
        if (cli_given(opts, *names)) return *names;
    return NULL;
}

int cmd_certify(int argc, char **argv) {
    const char *config, *ckpt, *hji, *plot, *csv;
    int B, seed, no_exploit, nodes, max_grids, iters, restarts, bptt, no_bounds, rc, sampling, cov;
    double tol;
    sampling_args sa = {.o = dg_certify_sampling_opts_default()};
    cli_list box = {0};
    certify c = {0};
    cli_opt opts[] = {
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
        CLI_INT("--episodes", &B, "N", 1, 1 << 20, "held-out initial states", .otherwise = "64; with --hji 256"),
        CLI_INT("--seed", &seed, "N", 0, 2147483647, "their seed (held out: not the training's stream)",
                .otherwise = "the config's seed + 1000; with --sampling 0"),
        CLI_DOUBLE("--tol", &tol, "X", 0, 1, "the relative change between the two finest grids that counts as "
                   "converged", .open = CLI_OPEN_LO, .def = "0.01"),
        CLI_INT("--nodes", &nodes, "N", 3, 100000, "the coarsest grid's nodes per value axis (each next grid 1.5 "
                "times finer, and at least 2 more nodes an axis)", .otherwise = "21 for a 2-D value state, 13 for 3-D, 9 beyond"),
        CLI_LIST("--box", &box, "LO,HI,...", -1e9, 1e9, "the grid's box: a low and high end for each value axis "
                 "(duel_simple: e - p, 2 axes; chase in the open plane: e - p and its velocity, 4)",
                 .max = 2 * DG_DP_MAX_DIMS, .otherwise = "a model file's state box, else the reset's starts widened "
                 "by a quarter of their span (an axis they leave fixed: episodes under constant random actions)"),
        CLI_INT("--max-grids", &max_grids, "N", 3, DG_DP_MAX_GRIDS, "the most grids of the refinement (it stops "
                "earlier when converged or at the memory estimate)", .def = "8"),
        CLI_INT("--plan-iters", &iters, "N", 0, 1000000, "Adam steps of each plan or best response (per start, "
                "open loop)", .otherwise = "300; reach 3000"),
        CLI_INT("--plan-restarts", &restarts, "N", 1, DG_CERTIFY_MAX_RESTARTS, "restarts of each plan (the "
                "policy's own actions, zero, then random)", .def = "3"),
        CLI_INT("--bptt-epochs", &bptt, "N", 0, 1000000, "two players: epochs of the trainer's best responses, the "
                "second route (0: plans only)", .def = "50"),
        CLI_FLAG("--no-bounds", &no_bounds, "skip the plans and best responses (the value and the policy's cost "
                 "alone)"),
        CLI_INT("--exploit-own", &c.xo.n_own, "N", 2, 1000, "with --hji, the exploitability: nodes per axis of the "
                "frozen player's position (the relative position: the HJI grid's; chase: the HJI grid alone)",
                .def = "9"),
        CLI_DOUBLE("--exploit-half", &c.xo.own_half, "X", 0, 1e6, "... over [-X, X]^2", .open = CLI_OPEN_LO,
                   .def = "4.5"),
        CLI_FLAG("--no-exploit", &no_exploit, "with --hji: skip the exploitability (two 4-D solves)"),
        CLI_FLAG("--sampling", &sampling, "certify a learned value's safe set by sampling instead (--value, no "
                 "--ckpt)"),
        CLI_IN("--value", &sa.value, "NET", "with --sampling: the network of hji learn (value.safetensors)"),
        CLI_IN("--grid", &sa.grid, "VALUE", "with --sampling: a value file of hji solve for the same config, whose "
               "feedback the other player plays", .otherwise = "the other player plays V_theta's feedback"),
        CLI_DOUBLE("--epsilon", &sa.o.epsilon, "X", 0, 1, "with --sampling: the failure probability promised in "
                   "the certified set", .open = CLI_OPEN_LO | CLI_OPEN_HI, .def = "0.001"),
        CLI_DOUBLE("--beta", &sa.o.beta, "X", 0, 1, "with --sampling: the chance that the promise is wrong",
                   .open = CLI_OPEN_LO | CLI_OPEN_HI, .def = "1e-06"),
        CLI_INT("--failures", &sa.o.failures, "K", 0, 1000000, "with --sampling: failures a round may have and "
                "still certify (more samples a round)", .def = "10"),
        CLI_INT("--rounds", &sa.o.rounds, "R", 1, 1000, "with --sampling: levels tested at most, each at beta / R",
                .def = "3"),
        CLI_DOUBLE("--dt", &sa.o.dt, "S", 0, 1e6, "with --sampling: the rollouts' step", .open = CLI_OPEN_LO,
                   .otherwise = "t_end / 200"),
        CLI_INT("--coverage-samples", &cov, "M", 1, 1 << 30, "with --sampling: box points for the coverage "
                "estimate", .def = "100000"),
        CLI_DOUBLE("--min-fraction", &sa.o.min_fraction, "X", 0, 1, "with --sampling: a level whose set is below "
                   "this fraction of the box is not sampled (not certified)", .open = CLI_OPEN_LO, .def = "0.001"),
        CLI_END,
    };
    if (!cli_parse(&rc, "certify", argc, argv, opts, HELP)) return rc;
    static const char *const SAMPLING_ONLY[] = {"--value", "--grid", "--epsilon", "--beta", "--failures", "--rounds",
                                                "--dt", "--coverage-samples", "--min-fraction", NULL};
    static const char *const NOT_SAMPLING[] = {"--ckpt", "--plugin", "--hji", "--plot", "--csv", "--episodes", "--tol",
                                               "--nodes", "--box", "--max-grids", "--plan-iters", "--plan-restarts",
                                               "--bptt-epochs", "--no-bounds", "--exploit-own", "--exploit-half",
                                               "--no-exploit", NULL};
    const char *odd = sampling ? stray(opts, NOT_SAMPLING) : stray(opts, SAMPLING_ONLY);
    if (odd || (sampling && !sa.value)) {
        if (!odd) cli_error("certify", "--sampling needs --value NET (the network of hji learn)");
        else if (sampling) cli_error("certify", "--sampling certifies a learned value (--config HJI.yaml --value NET): "
                                     "not with %s", odd);
        else cli_error("certify", "%s applies to --sampling", odd);
        free(box.v);
        return EXIT_USAGE;
    }
    if (sampling) {
        free(box.v);
        sa.config = config;
        sa.o.coverage_samples = cov;
        sa.o.seed = (uint64_t)seed;
        return sampling_run(&sa);
    }
    static const char *const OWN_ONLY[] = {"--csv", "--tol", "--nodes", "--box", "--max-grids", "--plan-iters",
                                           "--plan-restarts", "--bptt-epochs", "--no-bounds", NULL};
    static const char *const HJI_ONLY[] = {"--exploit-own", "--exploit-half", "--no-exploit", NULL};
    const char *bad = hji ? stray(opts, OWN_ONLY) : stray(opts, HJI_ONLY);
    if (bad) {
        cli_error("certify", "%s %s", bad, hji ? "applies to the learner's own game: not with --hji"
                                               : "applies to --hji's continuous-time game");
        free(box.v);
        return EXIT_USAGE;
    }
    if ((rc = cli_load_opts(&c.run, config, opts))) {
        free(box.v);
        return rc;
    }
    dg_err gse = {0};
    if (dg_certify_general_sum_check(c.run.env, &gse) != DG_OK ||   /* refused before any solve */
        dg_certify_env_noise_check(c.run.env, &gse) != DG_OK) {
        free(box.v);
        dg_run_free(&c.run);
        cli_error("certify", "%s: %s", config ? config : "the run's config", gse.msg);
        return EXIT_USAGE;
    }
    const uint64_t sd = cli_given(opts, "--seed") ? (uint64_t)seed : c.run.opts.seed + 1000;
    if (!hji) {
        dg_certify_discrete_opts o = dg_certify_discrete_opts_default(c.run.env);
        o.episodes = cli_given(opts, "--episodes") ? B : 64;
        o.seed = sd;
        o.refine.tol = tol;
        o.refine.max_grids = max_grids;
        for (int k = 0; k < DG_DP_MAX_DIMS; k++) o.dp.nodes[k] = cli_given(opts, "--nodes") ? nodes : 0;
        const int d = dg_dp_dims(c.run.env);
        rc = box.v && box.n != 2 * d ? EXIT_USAGE : 0;
        for (int k = 0; box.v && !rc && k < d; k++) {
            o.dp.lo[k] = box.v[2 * k];
            o.dp.hi[k] = box.v[2 * k + 1];
        }
        for (int k = 0; box.v && !rc && k < d; k++) rc = o.dp.lo[k] < o.dp.hi[k] ? 0 : EXIT_USAGE;
        if (rc) {
            cli_error("certify", "--box %s: %s's value state has %d axes: give %d numbers, a low end below each high one",
                      box.text, c.run.env->game->name, d, 2 * d);
            free(box.v);
            dg_run_free(&c.run);
            return rc;
        }
        if (cli_given(opts, "--plan-iters")) o.plan.iters = iters;
        o.plan.restarts = restarts;
        o.plan.bptt_epochs = bptt;
        o.plan.seed = sd;
        o.bounds = !no_bounds;
        o.train = &c.run.opts;
        rc = own_run(&c.run, ckpt, &o, csv, plot);
        free(box.v);
        dg_run_free(&c.run);
        return rc;
    }
    free(box.v);
    c.exploit = !no_exploit;
    rc = certify_setup(&c, hji, ckpt);
    if (!rc) rc = certify_run(&c, cli_given(opts, "--episodes") ? B : 256, sd, plot);
    dg_hji_problem_free(c.p);
    dg_cfg_free(c.hcfg);
    dg_params_free(c.params);
    dg_run_free(&c.run);
    return rc;
}
