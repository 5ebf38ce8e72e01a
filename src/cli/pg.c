/* difgames pg: the policy-gradient baseline (PPO / REINFORCE), BPTT against it
 * on one evaluation batch (--compare), and the plot of such curves (--plot). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "difgames/fileio.h"
#include "difgames/image.h"
#include "difgames/pg.h"

static const char HELP[] =
    "usage: difgames pg --config FILE [options]\n"
    "       difgames pg --config FILE --compare [options]\n"
    "       difgames pg --plot CURVES.csv --png OUT.png [--title TEXT]\n"
    "\n"
    "Trains the config's policy by policy gradient (PPO, or REINFORCE with a learned\n"
    "value baseline; Gaussian actions around the tanh MLP's mean, clipped to [-1, 1]).\n"
    "Every evaluation (at env steps on a log grid) rolls the MEAN action out on a\n"
    "fixed evaluation batch and prints one JSON line {method, seed, iter, steps, loss}\n"
    "to stdout: loss is the BPTT episode loss (docs/games/), so methods compare\n"
    "on one number. --compare first trains by BPTT (the config's train.*, the\n"
    "trainer of `difgames train`) with the same evaluations, counting batch x horizon\n"
    "env steps an epoch (the backward pass counts no extra steps). The last line is a\n"
    "JSON summary. Progress goes to stderr.\n"
    "\n"
    "Each option overrides the config key in parentheses (`difgames keys` lists them).\n"
    "\n"
    "options:\n";

/* Declared in cli/cli.h with the other subcommands; repeated so that this
 * file compiles warning-free on its own. */
int cmd_pg(int argc, char **argv);

/* ------------------------------------------------------- internal helpers */

typedef struct run {
    const dg_run *run;
    int    seed, quiet;
    double t0, last_print;              /* the PG run's start, the last progress line */
    char   err[DG_ERR_LEN];             /* set when printing failed                   */
} run;

/* A phase's start: its line on stderr. */
static void on_start(run *r, const char *phase) {
    const dg_env *env = r->run->env;
    const dg_pg_opts *o = &r->run->pg;
    const dg_pg_schedule *sc = &r->run->pg_run;
    r->t0 = r->last_print = dg_clock_s();
    if (r->quiet) return;
    if (!strcmp(phase, "bptt")) {
        fprintf(stderr, "bptt %s seed %d: batch %d, horizon %d, %d epochs\n", env->game->name, r->seed,
                r->run->opts.batch, env->horizon, r->run->opts.epochs);
        return;
    }
    fprintf(stderr, "%s %s seed %d: batch %d episodes (%d samples), horizon %d", dg_pg_algo_name(o->algo),
            env->game->name, r->seed, o->batch, o->batch * env->horizon, env->horizon);
    if (sc->iters > 0) fprintf(stderr, ", %d iterations", sc->iters);
    if (sc->max_steps > 0) fprintf(stderr, ", up to %lld env steps", (long long)sc->max_steps);
    fprintf(stderr, "\n");
}

/* Each evaluation: one JSON line on stdout; progress on stderr. */
static dg_status on_progress(const dg_pg_progress *p, void *user) {
    run *r = user;
    const dg_pg_point *pt = p->point;
    if (p->start) on_start(r, p->start);
    if (pt) {
        dg_json j = {cJSON_CreateObject(), 0};
        dg_json_add(&j, j.root, "method", cJSON_CreateString(pt->method));
        dg_json_add(&j, j.root, "seed", dg_json_number("%.0f", r->seed));
        dg_json_add(&j, j.root, "iter", dg_json_number("%.0f", pt->iter));
        dg_json_add(&j, j.root, "steps", dg_json_number("%.0f", (double)pt->steps));
        dg_json_add(&j, j.root, "loss", dg_json_number("%.9g", pt->loss));
        dg_json_add(&j, j.root, "sample_loss", dg_json_number("%.9g", pt->sample_loss));
        if (cli_json_print(&j, "pg")) {
            snprintf(r->err, sizeof r->err, "out of memory");
            return DG_ERR_NOMEM;
        }
        if (!r->quiet && !p->stats && pt->iter > 0)
            fprintf(stderr, "bptt seed %d epoch %d steps %lld eval loss %.6g train loss %.6g\n", r->seed,
                    pt->iter, (long long)pt->steps, pt->loss, pt->sample_loss);
    }
    const dg_pg_stats *st = p->stats;
    if (!st || r->quiet) return DG_OK;
    const double now = dg_clock_s();
    if (pt || now - r->last_print > 10.0) {
        r->last_print = now;
        fprintf(stderr, "pg seed %d iter %d steps %lld sample loss %.5g", r->seed, st->iter,
                (long long)st->env_steps, st->sample_loss);
        if (pt) fprintf(stderr, " eval loss %.5g", pt->loss);
        fprintf(stderr, " pi %.4g v %.4g kl %.3g clip %.3f std %.3f %.1f ms %.0fs\n", st->pi_loss, st->v_loss,
                st->approx_kl, st->clip_frac, st->std, st->ms, now - r->t0);
    }
    if (st->skipped)
        fprintf(stderr, "warning: iteration %d: %d minibatch steps skipped (non-finite gradient)\n", st->iter,
                st->skipped);
    return DG_OK;
}

/* ------------------------------------------------------------ subcommand */

int cmd_pg(int argc, char **argv) {
    const char *config, *out, *plot, *png, *title;
    int compare, bptt_only, quiet, fixed_std, rc;
    cli_opt opts[] = {
        CLI_CONFIG(&config, .unless = "--plot"),
        CLI_KEY("--seed", "seed"),             CLI_KEY("--iters", "pg.iters"),
        CLI_KEY("--max-steps", "pg.max_steps"), CLI_KEY("--stop-below", "pg.stop_below"),
        CLI_KEY("--stop-after", "pg.stop_after"), CLI_KEY("--batch", "pg.batch"),
        CLI_KEY("--algo", "pg.algo"),          CLI_KEY("--lr", "pg.lr"),
        CLI_KEY("--vf-lr", "pg.vf_lr"),        CLI_KEY("--log-std", "pg.log_std"),
        CLI_FLAG("--fixed-std", &fixed_std, "keep log sigma at its initial value (pg.learn_std: false)",
                 .otherwise = "learned"),
        CLI_KEY("--gamma", "pg.gamma"),        CLI_KEY("--lambda", "pg.lambda"),
        CLI_KEY("--clip", "pg.clip_ratio"),    CLI_KEY("--epochs", "pg.epochs_per_iter"),
        CLI_KEY("--vf-epochs", "pg.vf_epochs"), CLI_KEY("--minibatch", "pg.minibatch"),
        CLI_KEY("--vf-minibatch", "pg.vf_minibatch"), CLI_KEY("--ent-coef", "pg.ent_coef"),
        CLI_KEY("--threads", "train.threads"), CLI_KEY("--eval-batch", "pg.eval_batch"),
        CLI_KEY("--eval-seed", "pg.eval_seed"), CLI_KEY("--evals-per-decade", "pg.evals_per_decade"),
        CLI_FLAG("--compare", &compare, "train by BPTT first, then by policy gradient"),
        CLI_FLAG("--bptt-only", &bptt_only, "only the BPTT part of --compare"),
        CLI_KEY("--bptt-epochs", "train.epochs"), CLI_KEY("--bptt-batch", "train.batch"),
        CLI_KEY("--bptt-lr", "train.lr"),
        CLI_STR("--out", &out, "DIR", "write curve.csv, policy.safetensors (net.*, log_std) and value.safetensors "
                "there"),
        CLI_QUIET(&quiet, "no progress on stderr"),
        CLI_IN("--plot", &plot, "CSV", "draw curves (columns panel,series,label,color,steps,loss; one panel per "
               "distinct panel, log10 steps against log loss) into --png"),
        CLI_OUT("--png", &png, "FILE", "the image --plot draws"),
        CLI_STR("--title", &title, "TEXT", "the title of --plot's image"),
        CLI_END,
    };
    if (!cli_parse(&rc, "pg", argc, argv, opts, HELP)) return rc;
    if (bptt_only) compare = 1;
    if (plot || png) {
        if (!plot || !png) {
            cli_error("pg", "--plot CSV and --png FILE go together");
            return EXIT_USAGE;
        }
        dg_err e = {0};
        return dg_plot_curves_csv(plot, png, title, &e) == DG_OK ? 0 : cli_fail("pg", &e, 0);
    }
    dg_run_set sets[CLI_MAX_OPTS + 1];
    int nsets = cli_sets(opts, sets);
    if (fixed_std) sets[nsets++] = (dg_run_set){"pg.learn_std", "false"};
    dg_run s;
    if ((rc = cli_load(&s, config, NULL, 0, sets, nsets))) return rc;
    const dg_env *env = s.env;
    const dg_pg_opts o = s.pg;
    const int eval_batch = s.pg_run.eval_batch, eval_seed = (int)s.pg_run.eval_seed;
    run r = {.run = &s, .seed = (int)s.opts.seed, .quiet = quiet};
    char what[96];  /* the sample batch, arenas, networks and the evaluation batch: refused if they cannot fit */
    snprintf(what, sizeof what, "batch %d x horizon %d", o.batch, env->horizon);
    static const char *const NAMES[] = {"curve.csv", "policy.safetensors", "value.safetensors", NULL};
    if (!cli_mem_ok("pg", dg_pg_memory(env, &o, eval_batch), what, "--batch, --minibatch or --eval-batch") ||
        (out && cli_config_not_output("pg", config, out, NAMES))) {  /* the config is none of the run's files */
        dg_run_free(&s);
        return EXIT_USAGE;
    }
    dg_run_pg_result res;
    dg_err e = {0};
    const dg_status st = dg_run_pg(&s, out, compare, !bptt_only, on_progress, &r, &res, &e);
    const dg_pg_result bptt = res.bptt, pgr = res.pg;
    if (st != DG_OK) {
        if (res.step == DG_RUN_STEP_CONFIG) {  /* BPTT's memory: the key named */
            rc = cli_config_fail(&e);
        } else {
            cli_error("pg", "%s", r.err[0] ? r.err : e.msg);  /* r.err: our own callback failed */
            rc = res.step == DG_RUN_STEP_DIR ? EXIT_USAGE : res.step == DG_RUN_STEP_SAVE ? dg_status_exit(st) : EXIT_FAIL;
        }
        dg_run_free(&s);
        return rc;
    }
    dg_json j = {cJSON_CreateObject(), 0};
    dg_json_game(&j, env->game->name, dg_env_source(env));
    dg_json_add(&j, j.root, "seed", dg_json_number("%.0f", r.seed));
    dg_json_add(&j, j.root, "eval_batch", dg_json_number("%.0f", eval_batch));
    dg_json_add(&j, j.root, "eval_seed", dg_json_number("%.0f", eval_seed));
    if (compare) {
        cJSON *b = dg_json_add(&j, j.root, "bptt", cJSON_CreateObject());
        dg_json_add(&j, b, "epochs", dg_json_number("%.0f", s.opts.epochs));
        dg_json_add(&j, b, "batch", dg_json_number("%.0f", s.opts.batch));
        dg_json_add(&j, b, "env_steps", dg_json_number("%.0f", (double)bptt.steps));
        dg_json_add(&j, b, "final_loss", dg_json_number("%.9g", bptt.final));
        dg_json_add(&j, b, "best_loss", dg_json_number("%.9g", bptt.best));
        dg_json_add(&j, b, "seconds", dg_json_number("%.3f", res.bptt_seconds));
    }
    if (!bptt_only) {
        cJSON *g = dg_json_add(&j, j.root, "pg", cJSON_CreateObject());
        dg_json_add(&j, g, "algo", cJSON_CreateString(dg_pg_algo_name(o.algo)));
        const struct { const char *key, *fmt; double v; } nums[] = {
            {"iters", "%.0f", pgr.iters},       {"batch", "%.0f", o.batch},
            {"env_steps", "%.0f", (double)res.pg_env_steps},
            {"lr", "%g", o.lr},                  {"vf_lr", "%g", o.vf_lr},
            {"log_std0", "%g", o.log_std0},      {"learn_std", "%.0f", o.learn_std},
            {"gamma", "%g", o.gamma},            {"lambda", "%g", o.lambda},
            {"clip", "%g", o.clip},              {"epochs", "%.0f", o.pi_epochs},
            {"vf_epochs", "%.0f", o.vf_epochs},  {"minibatch", "%.0f", o.minibatch},
            {"vf_minibatch", "%.0f", o.vf_minibatch}, {"final_loss", "%.9g", pgr.final},
            {"best_loss", "%.9g", pgr.best},      {"seconds", "%.3f", res.pg_seconds},
        };
        for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
            dg_json_add(&j, g, nums[i].key, dg_json_number(nums[i].fmt, nums[i].v));
    }
    rc = cli_json_print(&j, "pg");
    dg_run_free(&s);
    return rc;
}
