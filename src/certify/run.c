/* dg_certify_run: `difgames certify`'s computation and JSON line from a run, for the command and the
 * Python package alike (include/difgames/certify_run.h). The command keeps its tables, --csv and
 * --plot; everything it prints on stdout is built here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/certify_run.h"
#include "difgames/hji_learn.h"
#include "difgames/memory.h"
#include "io/json.h"

static const char *const PLAYER[2] = {"pursuer", "evader"};

/* ------------------------------------------------------------ the options, declared once */

#define OFF(f) offsetof(dg_certify_run_opts, f)
#define OWN DG_CERTIFY_OWN
#define HJI DG_CERTIFY_HJI
#define SMP DG_CERTIFY_SAMPLING
static const dg_certify_opt OPTS[] = {
    {"episodes", DG_CERTIFY_OPT_INT, OWN | HJI, 1, 1 << 20, 0, 0, OFF(episodes), DG_CERTIFY_STORE_INT, "N", NULL,
     "64; with --hji 256", "held-out initial states"},
    {"seed", DG_CERTIFY_OPT_INT, OWN | HJI | SMP, 0, 2147483647, 0, 0, OFF(seed), DG_CERTIFY_STORE_SEED, "N", NULL,
     "the config's seed + 1000; with --sampling 0", "their seed (held out: not the training's stream)"},
    {"tol", DG_CERTIFY_OPT_DOUBLE, OWN, 0, 1, DG_CERTIFY_OPEN_LO, 0, OFF(tol), DG_CERTIFY_STORE_DOUBLE, "X", "0.01",
     NULL, "the relative change between the two finest grids that counts as converged"},
    {"nodes", DG_CERTIFY_OPT_INT, OWN, 3, 100000, 0, 0, OFF(nodes), DG_CERTIFY_STORE_INT, "N", NULL,
     "21 for a 2-D value state, 13 for 3-D, 9 beyond", "the coarsest grid's nodes per value axis (each next grid "
     "1.5 times finer, and at least 2 more nodes an axis)"},
    {"box", DG_CERTIFY_OPT_LIST, OWN, -1e9, 1e9, 0, 2 * DG_DP_MAX_DIMS, OFF(box), DG_CERTIFY_STORE_BOX, "LO,HI,...",
     NULL, "a model file's state box, else the reset's starts widened by a quarter of their span (an axis they "
     "leave fixed: episodes under constant random actions)", "the grid's box: a low and high end for each value "
     "axis (duel_simple: e - p, 2 axes; chase in the open plane: e - p and its velocity, 4)"},
    {"max_grids", DG_CERTIFY_OPT_INT, OWN, 3, DG_DP_MAX_GRIDS, 0, 0, OFF(max_grids), DG_CERTIFY_STORE_INT, "N", "8",
     NULL, "the most grids of the refinement (it stops earlier when converged or at the memory estimate)"},
    {"plan_iters", DG_CERTIFY_OPT_INT, OWN, 0, 1000000, 0, 0, OFF(plan_iters), DG_CERTIFY_STORE_INT, "N", NULL,
     "300; reach 3000", "Adam steps of each plan or best response (per start, open loop)"},
    {"plan_restarts", DG_CERTIFY_OPT_INT, OWN, 1, DG_CERTIFY_MAX_RESTARTS, 0, 0, OFF(plan_restarts),
     DG_CERTIFY_STORE_INT, "N", "3", NULL, "restarts of each plan (the policy's own actions, zero, then random)"},
    {"bptt_epochs", DG_CERTIFY_OPT_INT, OWN, 0, 1000000, 0, 0, OFF(bptt_epochs), DG_CERTIFY_STORE_INT, "N", "50",
     NULL, "two players: epochs of the trainer's best responses, the second route (0: plans only)"},
    {"no_bounds", DG_CERTIFY_OPT_FLAG, OWN, 0, 1, 0, 0, OFF(bounds), DG_CERTIFY_STORE_NOT, NULL, NULL, NULL,
     "skip the plans and best responses (the value and the policy's cost alone)"},
    {"exploit_own", DG_CERTIFY_OPT_INT, HJI, 2, 1000, 0, 0, OFF(xo.n_own), DG_CERTIFY_STORE_INT, "N", "9", NULL,
     "with --hji, the exploitability: nodes per axis of the frozen player's position (the relative position: "
     "the HJI grid's; chase: the HJI grid alone)"},
    {"exploit_half", DG_CERTIFY_OPT_DOUBLE, HJI, 0, 1e6, DG_CERTIFY_OPEN_LO, 0, OFF(xo.own_half),
     DG_CERTIFY_STORE_DOUBLE, "X", "4.5", NULL, "... over [-X, X]^2"},
    {"no_exploit", DG_CERTIFY_OPT_FLAG, HJI, 0, 1, 0, 0, OFF(exploit), DG_CERTIFY_STORE_NOT, NULL, NULL, NULL,
     "with --hji: skip the exploitability (two 4-D solves)"},
    {"epsilon", DG_CERTIFY_OPT_DOUBLE, SMP, 0, 1, DG_CERTIFY_OPEN_LO | DG_CERTIFY_OPEN_HI, 0, OFF(sampling.epsilon),
     DG_CERTIFY_STORE_DOUBLE, "X", "0.001", NULL, "with --sampling: the failure probability promised in the "
     "certified set"},
    {"beta", DG_CERTIFY_OPT_DOUBLE, SMP, 0, 1, DG_CERTIFY_OPEN_LO | DG_CERTIFY_OPEN_HI, 0, OFF(sampling.beta),
     DG_CERTIFY_STORE_DOUBLE, "X", "1e-06", NULL, "with --sampling: the chance that the promise is wrong"},
    {"failures", DG_CERTIFY_OPT_INT, SMP, 0, 1000000, 0, 0, OFF(sampling.failures), DG_CERTIFY_STORE_INT, "K", "10",
     NULL, "with --sampling: failures a round may have and still certify (more samples a round)"},
    {"rounds", DG_CERTIFY_OPT_INT, SMP, 1, 1000, 0, 0, OFF(sampling.rounds), DG_CERTIFY_STORE_INT, "R", "3", NULL,
     "with --sampling: levels tested at most, each at beta / R"},
    {"dt", DG_CERTIFY_OPT_DOUBLE, SMP, 0, 1e6, DG_CERTIFY_OPEN_LO, 0, OFF(sampling.dt), DG_CERTIFY_STORE_DOUBLE, "S",
     NULL, "t_end / 200", "with --sampling: the rollouts' step"},
    {"coverage_samples", DG_CERTIFY_OPT_INT, SMP, 1, 1 << 30, 0, 0, OFF(sampling.coverage_samples),
     DG_CERTIFY_STORE_I64, "M", "100000", NULL, "with --sampling: box points for the coverage estimate"},
    {"min_fraction", DG_CERTIFY_OPT_DOUBLE, SMP, 0, 1, DG_CERTIFY_OPEN_LO, 0, OFF(sampling.min_fraction),
     DG_CERTIFY_STORE_DOUBLE, "X", "0.001", NULL, "with --sampling: a level whose set is below this fraction of the "
     "box is not sampled (not certified)"},
};
#define NOPTS ((int)(sizeof OPTS / sizeof OPTS[0]))

const dg_certify_opt *dg_certify_run_options(int *n) {
    if (n) *n = NOPTS;
    return OPTS;
}

/* value's text as a number of option t into *out; DG_OK, or DG_ERR_ARG naming the option as given. */
static dg_status num(const dg_certify_opt *t, const char *given, const char *value, double *out, dg_err *e) {
    double v;
    const int integer = t->type == DG_CERTIFY_OPT_INT, olo = t->open & DG_CERTIFY_OPEN_LO,
              ohi = t->open & DG_CERTIFY_OPEN_HI;
    if (!value || !dg_parse_double(value, strlen(value), &v) || !isfinite(v) || (integer && v != floor(v)) ||
        v < t->lo || v > t->hi || (olo && v == t->lo) || (ohi && v == t->hi))
        return dg_err_set(e, DG_ERR_ARG, "certify: option %s: '%s' is not %s in %s%.10g, %.10g%s", given,
                          value ? value : "", integer ? "a whole number" : "a number", olo ? "(" : "[", t->lo, t->hi,
                          ohi ? ")" : "]");
    *out = v;
    return DG_OK;
}

/* a flag's text: 1 for "1"/"true", 0 for "0"/"false", else -1 */
static int flag(const char *value) {
    if (!value) return -1;
    if (!strcmp(value, "1") || !strcmp(value, "true") || !strcmp(value, "True")) return 1;
    if (!strcmp(value, "0") || !strcmp(value, "false") || !strcmp(value, "False")) return 0;
    return -1;
}

/* Option t's value text into o (given: its name as given, for messages). */
static dg_status apply(dg_certify_run_opts *o, const dg_certify_opt *t, const char *given, const char *value,
                       dg_err *e) {
    char *at = (char *)o + t->offset;
    double v = 0;
    if (t->type == DG_CERTIFY_OPT_FLAG) {
        const int f = flag(value);
        if (f < 0) return dg_err_set(e, DG_ERR_ARG, "certify: option %s: '%s' is not a flag (1/true or 0/false)", given,
                                     value ? value : "");
        *(int *)at = t->store == DG_CERTIFY_STORE_NOT ? !f : f;
        return DG_OK;
    }
    if (t->type == DG_CERTIFY_OPT_LIST) {
        double *b = NULL;
        dg_err le = {0};
        const int m = value ? dg_parse_list(value, t->lo, t->hi, 0, &b, &le) : -1;
        if (m < 2 || m > t->max || m % 2) {
            free(b);
            return dg_err_set(e, DG_ERR_ARG, "certify: option %s: '%s': give a low and a high end for each value "
                              "axis (at most %d numbers)%s%s", given, value ? value : "", t->max, m < 0 ? ": " : "",
                              m < 0 ? le.msg : "");
        }
        memcpy(o->box, b, sizeof(double) * (size_t)m);
        o->nbox = m;
        free(b);
        return DG_OK;
    }
    if (num(t, given, value, &v, e) != DG_OK) return e->status;
    switch (t->store) {
    case DG_CERTIFY_STORE_INT: *(int *)at = (int)v; break;
    case DG_CERTIFY_STORE_I64: *(int64_t *)at = (int64_t)v; break;
    case DG_CERTIFY_STORE_SEED:
        o->seed = (uint64_t)v;
        o->seed_set = 1;
        break;
    default: *(double *)at = v; break;
    }
    return DG_OK;
}

dg_certify_run_opts dg_certify_run_opts_default(void) {
    dg_certify_run_opts o;
    memset(&o, 0, sizeof o);
    o.plan_iters = -1;  /* the game's own (300; reach 3000) */
    o.bounds = 1;
    o.exploit = 1;
    o.sampling = dg_certify_sampling_opts_default();
    dg_err e = {0};
    for (int k = 0; k < NOPTS; k++)  /* every declared default, as if given */
        if (OPTS[k].def) apply(&o, &OPTS[k], OPTS[k].name, OPTS[k].def, &e);
    return o;
}

/* o's path (DG_CERTIFY_OWN, _HJI or _SAMPLING) */
static int path_of(const dg_certify_run_opts *o) { return o->value ? SMP : o->hji ? HJI : OWN; }

dg_status dg_certify_run_set(dg_certify_run_opts *o, const char *name, const char *value, dg_err *e) {
    char n[32];
    const char *given = name ? name : "";
    size_t len = name ? strlen(name) : 0;
    while (len && name[0] == '-') name++, len--;  /* "--episodes" as "episodes" */
    if (!len || len >= sizeof n) return dg_err_set(e, DG_ERR_ARG, "certify: unknown option '%s'", given);
    for (size_t i = 0; i <= len; i++) n[i] = name[i] == '-' ? '_' : name[i];
    for (int k = 0; k < NOPTS; k++) {
        const dg_certify_opt *t = &OPTS[k];
        if (strcmp(n, t->name)) continue;
        const int path = path_of(o);
        if (!(t->paths & path)) {
            if (path == SMP)
                return dg_err_set(e, DG_ERR_ARG, "certify: --sampling certifies a learned value (--config HJI.yaml "
                                  "--value NET): not with %s", given);
            return dg_err_set(e, DG_ERR_ARG, "certify: %s %s", given,
                              t->paths == SMP   ? "applies to --sampling"
                              : t->paths == OWN ? "applies to the learner's own game: not with --hji"
                                                : "applies to --hji's continuous-time game");
        }
        return apply(o, t, given, value, e);
    }
    char names[600] = "";
    for (int k = 0, at = 0; k < NOPTS && at < (int)sizeof names; k++)
        at += snprintf(names + at, sizeof names - (size_t)at, "%s%s", k ? ", " : "", OPTS[k].name);
    return dg_err_set(e, DG_ERR_ARG, "certify: unknown option '%s' (%s)", given, names);
}

/* e's message without a leading prefix ("certify: ", "dp: "): the caller names the command */
static void strip(dg_err *e, const char *prefix) {
    const size_t n = strlen(prefix);
    if (!strncmp(e->msg, prefix, n)) memmove(e->msg, e->msg + n, strlen(e->msg + n) + 1);
}

/* DG_OK when need bytes fit; else a usage error "what <the estimate>; lower <lower>" */
static dg_status mem_ok(dg_certify_run_result *res, double need, const char *what, const char *lower, dg_err *e) {
    const dg_status st = dg_mem_require(need, what, lower, e);
    if (st != DG_OK) res->usage = 1;
    return st;
}

/* the usage error of a check, without its "certify: " */
static dg_status usage(dg_certify_run_result *res, dg_err *e, const char *prefix) {
    res->usage = 1;
    strip(e, prefix);
    return e->status;
}

/* j's line into res->json (malloc'd); DG_ERR_NOMEM when it could not be built */
static dg_status json_take(dg_json *j, dg_certify_run_result *res, dg_err *e) {
    char *text = dg_json_line(j);
    if (!text) return dg_err_set(e, DG_ERR_NOMEM, "out of memory for the JSON line");
    res->json = malloc(strlen(text) + 1);
    if (res->json) strcpy(res->json, text);
    cJSON_free(text);
    return res->json ? DG_OK : dg_err_set(e, DG_ERR_NOMEM, "out of memory for the JSON line");
}

/* ------------------------------------------------------------ the learner's own game */

/* the JSON line of the default path */
static dg_status own_json(const dg_env *env, const dg_certify_discrete_result *r, double tol, dg_certify_run_result *res,
                          dg_err *e) {
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
    return json_take(&j, res, e);
}

/* the rows' arrays (B starts of S state columns) in one block, res->mem_ */
static int own_rows_alloc(dg_certify_run_result *res, int B, int S) {
    const size_t n = (size_t)B;
    dg_certify_discrete_rows *r = &res->rows;
    double *p = res->mem_ = malloc(sizeof(double) * (n * S + 12 * n) + sizeof(int) * 2 * n);
    if (!p) return 0;
    r->state = p, p += n * S;
    double **cols[] = {&r->value_upper, &r->value_lower, &r->policy_cost, &r->policy_cost_held, &r->gap,
                       &r->abs_gap, &r->plan_cost, &r->br_cost[0], &r->br_cost[1], &r->exploit[0], &r->exploit[1]};
    for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++) *cols[k] = p, p += n;
    p += n;  /* the twelfth column's room: the routes' ints follow, aligned as doubles */
    r->br_route[0] = (int *)p;
    r->br_route[1] = (int *)p + n;
    return 1;
}

/* The default path: dg_certify_discrete with o's options. */
static dg_status own_run(const dg_run *run, const dg_certify_run_opts *o, uint64_t seed, dg_certify_run_result *res,
                         dg_err *e) {
    const dg_env *env = run->env;
    dg_certify_discrete_opts d = dg_certify_discrete_opts_default(env);
    d.episodes = o->episodes ? o->episodes : 64;
    d.seed = seed;
    d.refine.tol = o->tol;
    d.refine.max_grids = o->max_grids;
    for (int k = 0; k < DG_DP_MAX_DIMS; k++) d.dp.nodes[k] = o->nodes;
    const int dims = dg_dp_dims(env);
    int bad = o->nbox && o->nbox != 2 * dims;
    for (int k = 0; o->nbox && !bad && k < dims; k++) {
        d.dp.lo[k] = o->box[2 * k];
        d.dp.hi[k] = o->box[2 * k + 1];
        bad = !(d.dp.lo[k] < d.dp.hi[k]);
    }
    if (bad) {
        res->usage = 1;
        return dg_err_set(e, DG_ERR_ARG, "box: %s's value state has %d axes: give %d numbers, a low end below each "
                          "high one", env->game->name, dims, 2 * dims);
    }
    if (o->plan_iters >= 0) d.plan.iters = o->plan_iters;
    d.plan.restarts = o->plan_restarts;
    d.plan.bptt_epochs = o->bptt_epochs;
    d.plan.seed = seed;
    d.bounds = o->bounds;
    d.train = &run->opts;
    res->episodes = d.episodes;
    if (dg_dp_check(env, e) != DG_OK) return usage(res, e, "dp: ");  /* what the game lacks comes first */
    dg_policy pol;
    dg_params *params = NULL;
    if (dg_run_policy_load(run, o->ckpt, &pol, &params, e) != DG_OK) return e->status;
    dg_status s = mem_ok(res, dg_certify_bounds_memory(env, &pol, d.episodes), "the plans' tapes", "--episodes", e);
    if (s == DG_OK && !own_rows_alloc(res, d.episodes, env->state_dim)) s = dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    if (s == DG_OK && (s = dg_certify_discrete(env, &pol, params, &d, &res->rows, &res->own, e)) != DG_OK) strip(e, "dp: ");
    if (s == DG_OK) s = own_json(env, &res->own, d.refine.tol, res, e);
    dg_params_free(params);
    return s;
}

/* ------------------------------------------------------------ a continuous-time HJI game */

/* The JSON line of the HJI path. */
static dg_status hji_json(const dg_env *env, const dg_certify_run_result *c, dg_certify_run_result *res, dg_err *e) {
    const dg_certify_result *r = &c->cont;
    dg_json j = {cJSON_CreateObject(), 0};
    dg_json_game(&j, env->game->name, dg_env_source(env));
    dg_json_add(&j, j.root, "certifies", cJSON_CreateString("a continuous-time HJI game, not the learner's"));
    dg_json_add(&j, j.root, "hji_game", cJSON_CreateString(c->hji_name));
    dg_json_add(&j, j.root, "episodes", dg_json_number("%.0f", c->episodes));
    if (!c->degree) dg_json_add(&j, j.root, "captured", dg_json_number("%.0f", r->captured));
    dg_json_add(&j, j.root, "value_mean", dg_json_number("%.9g", r->value_mean));
    dg_json_add(&j, j.root, "policy_cost_mean", dg_json_number("%.9g", r->policy_cost_mean));
    dg_json_add(&j, j.root, "gap", dg_json_number("%.6g", r->gap));
    dg_json_add(&j, j.root, "gap_abs", dg_json_number("%.6g", r->gap_abs));
    if (!c->degree) dg_json_add(&j, j.root, "step_bias_s", dg_json_number("%.6g", r->step_bias));
    else {  /* the loss adds each step's cost at its end; the value integrates: the trapezoid's share */
        dg_json_add(&j, j.root, "step_bias", dg_json_number("%.6g", r->step_bias));
        dg_json_add(&j, j.root, "gap_trapezoid", dg_json_number("%.6g", r->gap_trapezoid));
    }
    dg_json_add(&j, j.root, "hji_residual", dg_json_number("%.3g", c->st.residual));
    if (c->exploit) {
        dg_json_add(&j, j.root, "exploit_pursuer", dg_json_number("%.6g", c->exploit_v[0]));
        dg_json_add(&j, j.root, "exploit_evader", dg_json_number("%.6g", c->exploit_v[1]));
        dg_json_add(&j, j.root, "exploit_pursuer_rel", dg_json_number("%.6g", c->exploit_rel[0]));
        dg_json_add(&j, j.root, "exploit_evader_rel", dg_json_number("%.6g", c->exploit_rel[1]));
        dg_json_add(&j, j.root, "exploit_seconds", dg_json_number("%.3g", c->exploit_seconds));
    }
    return json_take(&j, res, e);
}

/* Each learned player frozen, the other's best response on a 4-D grid from the B starts of seed:
 * what the frozen one loses (value: V(x0) at each start) into res. */
static dg_status hji_exploit(const dg_hji_problem *p, const dg_env *env, const dg_policy *pol, dg_params *params,
                             const dg_certify_run_opts *o, uint64_t seed, int B, const double *value,
                             dg_certify_run_result *res, dg_err *e) {
    dg_real *st0 = NULL, *aux0 = NULL;
    double *w = malloc((size_t)B * sizeof *w);
    dg_hji_grid xg;
    dg_status cs = w ? dg_run_init_draw(env, seed, B, &st0, &aux0, e) : dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    if (cs == DG_OK) cs = dg_certify_exploit_grid(p, &o->xo, &xg, e);
    for (int k = 0; k < 2 && cs == DG_OK; k++) {
        if (o->note) {
            char line[192];
            snprintf(line, sizeof line, "the learned %s frozen: the %s's best response on %d x %d x %d x %d nodes ...",
                     k ? "evader" : "pursuer", k ? "pursuer" : "evader", xg.n[0], xg.n[1], xg.n[2], xg.n[3]);
            o->note(o->user, line);
        }
        dg_hji_stats xs;
        if ((cs = dg_certify_exploit(p, env, pol, params, k, &o->xo, B, st0, w, &xs, e)) != DG_OK) break;
        dg_certify_exploit_loss(value, w, B, k, &res->exploit_v[k], &res->exploit_rel[k]);
        res->exploit_seconds += xs.seconds;
    }
    free(st0);
    free(aux0);
    free(w);
    return cs;
}

/* The HJI game's checks, the pair, the solve, the play from B starts, the exploitability, the JSON. */
static dg_status hji_run(const dg_run *run, const dg_certify_run_opts *o, uint64_t seed, dg_certify_run_result *res,
                         dg_err *e) {
    const dg_env *env = run->env;
    const int B = o->episodes ? o->episodes : 256;
    res->episodes = B;
    res->exploit = o->exploit;
    dg_cfg *hcfg = dg_cfg_load(o->hji, e);
    dg_hji_problem *p = NULL;
    dg_policy pol;
    dg_params *params = NULL;
    dg_hji_learn_opts lo;  /* a config that also learns the value: its learn.* keys are read, not used */
    double *V = NULL, *value = NULL, *cost = NULL;
    dg_status s = DG_OK;
    if (!hcfg || !(p = dg_hji_problem_load(hcfg, e)) || dg_hji_learn_opts_read(hcfg, &lo, e) != DG_OK ||
        dg_cfg_check_unused(hcfg, e) != DG_OK ||
        ((res->degree = p->payoff == DG_HJI_PAYOFF_COST)
             ? dg_certify_cost_check(p, env, e) : dg_certify_check(p, env, run->cfg, e)) != DG_OK) {
        s = usage(res, e, "certify: ");
        goto done;
    }
    snprintf(res->hji_name, sizeof res->hji_name, "%s", p->name);
    res->stationary = p->stationary;
    res->t_end = p->t_end;
    if ((s = dg_run_policy_load(run, o->ckpt, &pol, &params, e)) != DG_OK) goto done;
    if ((s = mem_ok(res, dg_hji_problem_memory(p, 1, 1, 0), "the HJI solve", "grid.n", e)) != DG_OK) goto done;
    if (res->degree) res->exploit = 0;  /* one player's cost: nothing to exploit */
    if (res->exploit) {
        if (dg_certify_exploit_check(p, env, e) != DG_OK) {
            s = usage(res, e, "certify: ");
            goto done;
        }
        char what[96];  /* before any solve: the exploitability's 4-D grid must fit too */
        dg_hji_grid xg;
        dg_err ge = {0};
        const double xn = dg_certify_exploit_grid(p, &o->xo, &xg, &ge) == DG_OK
                              ? (double)xg.nodes : (double)o->xo.n_own * o->xo.n_own * p->grid.nodes;
        snprintf(what, sizeof what, "the exploitability's 4-D grid of %.0f nodes", xn);
        if ((s = mem_ok(res, dg_certify_exploit_memory(p, &o->xo), what, "--exploit-own or the HJI grid.n", e)) != DG_OK)
            goto done;
    }
    V = malloc((size_t)p->grid.nodes * sizeof *V);
    res->pairs = malloc((size_t)B * 2 * sizeof *res->pairs);
    value = malloc((size_t)B * sizeof *value);
    cost = malloc((size_t)B * sizeof *cost);
    if (!V || !res->pairs || !value || !cost) {
        s = dg_err_set(e, DG_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((s = dg_hji_problem_solve(p, V, &res->st, e)) != DG_OK) goto done;
    const double t_end = p->t_end;
    const dg_hji_slices VS = {.nt = 1, .t = &t_end, .v = V};
    const dg_certify_opts co = {.episodes = B, .seed = seed};
    s = res->degree ? dg_certify_cost(p, &VS, env, &pol, params, &co, &res->cont, value, cost, e)
                    : dg_certify(p, &VS, env, run->cfg, &pol, params, &co, &res->cont, value, cost, e);
    for (int i = 0; s == DG_OK && i < B; i++) res->pairs[2 * i] = value[i], res->pairs[2 * i + 1] = cost[i];
    if (s == DG_OK && res->exploit) s = hji_exploit(p, env, &pol, params, o, seed, B, value, res, e);
    if (s != DG_OK) {
        strip(e, "certify: ");
        goto done;
    }
    dg_certify_quarters(res->pairs, B, res->q);  /* sorts the pairs by V(x0) */
    s = hji_json(env, res, res, e);
done:
    free(V);
    free(value);
    free(cost);
    dg_params_free(params);
    dg_hji_problem_free(p);
    dg_cfg_free(hcfg);
    return s;
}

dg_status dg_certify_run(const dg_run *r, const dg_certify_run_opts *o, dg_certify_run_result *res, dg_err *e) {
    memset(res, 0, sizeof *res);
    res->exploit_v[0] = res->exploit_v[1] = res->exploit_rel[0] = res->exploit_rel[1] = NAN;
    res->hji = o && o->hji;
    res->usage = 1;  /* until the checks of the arguments pass */
    if (!r || !r->env || !o || !o->ckpt)
        return dg_err_set(e, DG_ERR_ARG, "certify: a run and a checkpoint are required");
    if (o->episodes < 0 || o->episodes > (1 << 20) || !(o->tol > 0 && o->tol <= 1) || o->nodes < 0 ||
        o->max_grids < 3 || o->max_grids > DG_DP_MAX_GRIDS || o->plan_iters < -1 || o->plan_restarts < 1 ||
        o->plan_restarts > DG_CERTIFY_MAX_RESTARTS || o->bptt_epochs < 0 || o->nbox < 0 || o->nbox > 2 * DG_DP_MAX_DIMS ||
        (o->hji && o->exploit && (o->xo.n_own < 2 || !(o->xo.own_half > 0))))
        return dg_err_set(e, DG_ERR_ARG, "certify: an option is out of its bounds (dg_certify_run_set's)");
    dg_err gse = {0};
    if (dg_certify_general_sum_check(r->env, &gse) != DG_OK ||   /* refused before any solve */
        dg_certify_env_noise_check(r->env, &gse) != DG_OK) {
        const char *cfg = r->cfg ? dg_cfg_path(r->cfg) : NULL;
        return dg_err_set(e, gse.status, "%s: %s", cfg ? cfg : "the run's config", gse.msg);
    }
    res->usage = 0;
    const uint64_t seed = o->seed_set ? o->seed : r->opts.seed + 1000;
    return o->hji ? hji_run(r, o, seed, res, e) : own_run(r, o, seed, res, e);
}

void dg_certify_run_free(dg_certify_run_result *res) {
    if (!res) return;
    free(res->json);
    free(res->pairs);
    free(res->mem_);
    memset(res, 0, sizeof *res);
}

/* ------------------------------------------------------------ certify --sampling */

/* the sampling certificate's JSON line into res->json */
static dg_status sampling_json(const dg_hji_problem *p, const dg_certify_run_opts *o, dg_certify_run_result *res,
                               dg_err *e) {
    const dg_certify_sampling_result *r = &res->sampling;
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
    dg_json_add(&j, j.root, "other", cJSON_CreateString(o->grid ? "grid" : "network"));
    dg_json_add(&j, j.root, "dt", dg_json_number("%.6g", r->dt));
    dg_json_add(&j, j.root, "steps", dg_json_number("%.0f", (double)r->steps));
    dg_json_add(&j, j.root, "draws", dg_json_number("%.0f", (double)r->draws));
    dg_json_add(&j, j.root, "seconds", dg_json_number("%.3g", r->seconds));
    return json_take(&j, res, e);
}

dg_status dg_certify_sampling_run(const char *config, const dg_certify_run_opts *o, dg_certify_run_result *res,
                                  dg_err *e) {
    memset(res, 0, sizeof *res);
    res->usage = 1;
    res->sampled = 1;
    if (!config || !o || !o->value)
        return dg_err_set(e, DG_ERR_ARG, "certify: --sampling needs the HJI config and the network (value)");
    dg_hji_learn_opts lo;  /* a config that also learns the value: its learn.* keys are read, not used */
    dg_cfg *cfg = dg_cfg_load(config, e);
    /* for work at points: a problem of more than 6 axes has no grid (its target from its formula) */
    dg_hji_problem *p = cfg ? dg_hji_problem_load_points(cfg, e) : NULL;
    dg_hji_learn_net net = {0};
    dg_hji_value_slices vs = {0};
    dg_hji_source other;
    dg_certify_sampling_opts so = o->sampling;
    so.seed = o->seed_set ? o->seed : 0;
    so.other = NULL;
    dg_status st = DG_OK;
    if (!p || dg_hji_learn_opts_read(cfg, &lo, e) != DG_OK || dg_cfg_check_unused(cfg, e) != DG_OK ||
        dg_certify_sampling_check(p, e) != DG_OK) {
        st = e->status ? e->status : DG_ERR_CONFIG;
        strip(e, "certify: ");
    } else if ((st = dg_hji_learn_load(o->value, p, &net, e)) != DG_OK) {
        res->usage = st != DG_ERR_NOMEM;
    } else if (fabs(net.t_end - p->t_end) > 1e-9 * fabs(p->t_end)) {
        st = dg_err_set(e, DG_ERR_ARG, "--value %.300s was trained to t_end %g, --config %.300s says %g", o->value,
                        net.t_end, config, p->t_end);
    } else if (o->grid && p->grid.ndim > DG_HJI_GRID_MAX_DIMS) {
        st = dg_err_set(e, DG_ERR_ARG, "--grid %.300s: %s has %d state dimensions, no grid (a grid's value has at most "
                        "%d): the other player plays the network's feedback without --grid", o->grid, p->name,
                        p->grid.ndim, DG_HJI_GRID_MAX_DIMS);
    } else if (o->grid) {
        dg_err ge = {0};
        if ((st = dg_hji_value_load(o->grid, p, config, &vs, NULL, &ge)) != DG_OK) {
            res->usage = st != DG_ERR_NOMEM;
            dg_err_set(e, st, "--grid %.300s: %s", o->grid, ge.msg);
        } else {
            other = dg_hji_source_slices(&p->grid, &vs.slices);
            so.other = &other;
        }
    }
    if (st == DG_OK) {
        snprintf(res->game, sizeof res->game, "%s", p->name);
        res->t_end = p->t_end;
        if ((st = dg_certify_sampling(p, &net, &so, &res->sampling, e)) != DG_OK) {
            res->usage = st == DG_ERR_ARG || st == DG_ERR_CONFIG;
            strip(e, "certify: ");
        } else {
            res->usage = 0;
            st = sampling_json(p, o, res, e);
        }
    }
    dg_hji_value_slices_free(&vs);
    dg_hji_learn_net_free(&net);
    dg_hji_problem_free(p);
    dg_cfg_free(cfg);
    return st;
}
