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
    int    seed, quiet;
    double t0, last_print;              /* the PG run's start, the last progress line */
    char   err[DG_ERR_LEN];             /* set when printing failed                   */
} run;

/* Each evaluation: one JSON line on stdout; progress on stderr. */
static dg_status on_progress(const dg_pg_progress *p, void *user) {
    run *r = user;
    const dg_pg_point *pt = p->point;
    if (pt) {
        cli_json j = {cJSON_CreateObject(), 0};
        cli_json_add(&j, j.root, "method", cJSON_CreateString(pt->method));
        cli_json_add(&j, j.root, "seed", cli_json_number("%.0f", r->seed));
        cli_json_add(&j, j.root, "iter", cli_json_number("%.0f", pt->iter));
        cli_json_add(&j, j.root, "steps", cli_json_number("%.0f", (double)pt->steps));
        cli_json_add(&j, j.root, "loss", cli_json_number("%.9g", pt->loss));
        cli_json_add(&j, j.root, "sample_loss", cli_json_number("%.9g", pt->sample_loss));
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
    int compare, bptt_only, quiet, fixed_std;
    const cli_opt opts[] = {
        CLI_CONFIG(&config),
        CLI_KEY("--seed", "seed"),             CLI_KEY("--iters", "pg.iters"),
        CLI_KEY("--max-steps", "pg.max_steps"), CLI_KEY("--stop-below", "pg.stop_below"),
        CLI_KEY("--stop-after", "pg.stop_after"), CLI_KEY("--batch", "pg.batch"),
        CLI_KEY("--algo", "pg.algo"),          CLI_KEY("--lr", "pg.lr"),
        CLI_KEY("--vf-lr", "pg.vf_lr"),        CLI_KEY("--log-std", "pg.log_std"),
        {"--fixed-std",  NULL, &fixed_std, NULL, "keep log sigma at its initial value (pg.learn_std: false)",
         "learned"},
        CLI_KEY("--gamma", "pg.gamma"),        CLI_KEY("--lambda", "pg.lambda"),
        CLI_KEY("--clip", "pg.clip_ratio"),    CLI_KEY("--epochs", "pg.epochs_per_iter"),
        CLI_KEY("--vf-epochs", "pg.vf_epochs"), CLI_KEY("--minibatch", "pg.minibatch"),
        CLI_KEY("--vf-minibatch", "pg.vf_minibatch"), CLI_KEY("--ent-coef", "pg.ent_coef"),
        CLI_KEY("--threads", "train.threads"), CLI_KEY("--eval-batch", "pg.eval_batch"),
        CLI_KEY("--eval-seed", "pg.eval_seed"), CLI_KEY("--evals-per-decade", "pg.evals_per_decade"),
        {"--compare",  NULL, &compare, NULL, "train by BPTT first, then by policy gradient", NULL},
        {"--bptt-only",  NULL, &bptt_only, NULL, "only the BPTT part of --compare", NULL},
        CLI_KEY("--bptt-epochs", "train.epochs"), CLI_KEY("--bptt-batch", "train.batch"),
        CLI_KEY("--bptt-lr", "train.lr"),
        {"--out", &out, NULL, "DIR", "write curve.csv, policy.safetensors (net.*, log_std) and value.safetensors "
         "there", NULL},
        CLI_QUIET(&quiet, "no progress on stderr"),
        {"--plot", &plot, NULL, "CSV", "draw curves (columns panel,series,label,color,steps,loss; one panel per "
         "distinct panel, log10 steps against log loss) into --png", NULL},
        {"--png", &png, NULL, "FILE", "the image --plot draws", NULL},
        {"--title", &title, NULL, "TEXT", "the title of --plot's image", NULL},
        CLI_END,
    };
    const int prc = cli_parse("pg", argc, argv, opts, HELP);
    if (prc) return prc == CLI_HELP ? 0 : prc;
    if (bptt_only) compare = 1;
    if (plot || png) {
        if (!plot || !png) {
            cli_error("pg", "--plot CSV and --png FILE go together");
            return EXIT_USAGE;
        }
        const cli_path ins[] = {{"--plot", plot}}, outs[] = {{"--png", png}};
        if (cli_check_outputs("pg", outs, 1, ins, 1)) return EXIT_USAGE;
        dg_err e = {0};
        return dg_plot_curves_csv(plot, png, title, &e) == DG_OK ? 0 : cli_fail("pg", &e, 0);
    }
    if (!config) {
        cli_error("pg", "--config FILE is required (see --help)");
        return EXIT_USAGE;
    }
    dg_run_set sets[CLI_MAX_OPTS + 1];
    int nsets = cli_sets(opts, sets);
    if (fixed_std) sets[nsets++] = (dg_run_set){"pg.learn_std", "false"};
    dg_run s;
    int rc = cli_load(&s, config, NULL, 0, sets, nsets);
    if (rc) return rc;
    const dg_env *env = s.env;
    const dg_pg_opts o = s.pg;
    const dg_pg_schedule sc = s.pg_run;
    const int eval_batch = sc.eval_batch, eval_seed = (int)sc.eval_seed;
    run r = {.seed = (int)s.opts.seed, .quiet = quiet};
    dg_pg *pg = NULL;
    dg_pg_eval *ev = NULL;
    dg_pg_curve curve = {0};
    dg_pg_result bptt = {.best = NAN, .final = NAN}, pgr = {.best = NAN, .final = NAN};
    dg_err e = {0};
    double t_bptt = 0, t_pg = 0;
    int lock = -1;
    {   /* the sample batch, arenas, networks and the evaluation batch: refused if they cannot fit */
        char what[96];
        snprintf(what, sizeof what, "batch %d x horizon %d", o.batch, env->horizon);
        if (!cli_mem_ok("pg", dg_pg_memory(env, &o, eval_batch), what, "--batch, --minibatch or --eval-batch")) {
            dg_run_free(&s);
            return EXIT_USAGE;
        }
    }
    if (out) {  /* the folder is this run's until it ends; the config is not one of its files */
        static const char *const NAMES[] = {"curve.csv", "policy.safetensors", "value.safetensors", NULL};
        rc = cli_config_not_output("pg", config, out, NAMES);
        if (!rc && (lock = dg_dir_lock(out, &e)) < 0) rc = cli_fail("pg", &e, EXIT_USAGE);
        if (rc) goto done;
    }
    if (!(ev = dg_pg_eval_create(env, eval_batch, (uint64_t)eval_seed, o.threads, &e))) {
        rc = cli_fail("pg", &e, EXIT_FAIL);
        goto done;
    }
    if (compare) {
        if (!cli_train_memory_ok(&s)) {
            rc = EXIT_USAGE;
            goto done;
        }
        if (!quiet)
            fprintf(stderr, "bptt %s seed %d: batch %d, horizon %d, %d epochs\n", env->game->name, r.seed,
                    s.opts.batch, env->horizon, s.opts.epochs);
        const double t0 = dg_clock_s();
        if (dg_pg_run_bptt(env, &s.opts, ev, sc.evals_per_decade, &curve, on_progress, &r, &bptt, &e) != DG_OK) {
            cli_error("pg", "%s", r.err[0] ? r.err : e.msg);
            rc = EXIT_FAIL;
            goto done;
        }
        t_bptt = dg_clock_s() - t0;
    }
    if (!bptt_only) {
        if (!(pg = dg_pg_create(env, &o, &e))) {
            rc = cli_fail("pg", &e, EXIT_FAIL);
            goto done;
        }
        if (!quiet) {
            fprintf(stderr, "%s %s seed %d: batch %d episodes (%d samples), horizon %d", dg_pg_algo_name(o.algo),
                    env->game->name, r.seed, o.batch, o.batch * env->horizon, env->horizon);
            if (sc.iters > 0) fprintf(stderr, ", %d iterations", sc.iters);
            if (sc.max_steps > 0) fprintf(stderr, ", up to %lld env steps", (long long)sc.max_steps);
            fprintf(stderr, "\n");
        }
        r.t0 = r.last_print = dg_clock_s();
        if (dg_pg_run(pg, ev, &sc, &curve, on_progress, &r, &pgr, &e) != DG_OK) {
            cli_error("pg", "%s", r.err[0] ? r.err : e.msg);
            rc = EXIT_FAIL;
            goto done;
        }
        t_pg = dg_clock_s() - r.t0;
    }
    if (out && dg_run_pg_save(out, &curve, r.seed, pg, env->game->name, &e) != DG_OK) {
        rc = cli_fail("pg", &e, 0);
        goto done;
    }
    cli_json j = {cJSON_CreateObject(), 0};
    cli_json_add(&j, j.root, "game", cJSON_CreateString(env->game->name));
    cli_json_add(&j, j.root, "seed", cli_json_number("%.0f", r.seed));
    cli_json_add(&j, j.root, "eval_batch", cli_json_number("%.0f", eval_batch));
    cli_json_add(&j, j.root, "eval_seed", cli_json_number("%.0f", eval_seed));
    if (compare) {
        cJSON *b = cli_json_add(&j, j.root, "bptt", cJSON_CreateObject());
        cli_json_add(&j, b, "epochs", cli_json_number("%.0f", s.opts.epochs));
        cli_json_add(&j, b, "batch", cli_json_number("%.0f", s.opts.batch));
        cli_json_add(&j, b, "env_steps", cli_json_number("%.0f", (double)bptt.steps));
        cli_json_add(&j, b, "final_loss", cli_json_number("%.9g", bptt.final));
        cli_json_add(&j, b, "best_loss", cli_json_number("%.9g", bptt.best));
        cli_json_add(&j, b, "seconds", cli_json_number("%.3f", t_bptt));
    }
    if (!bptt_only) {
        cJSON *g = cli_json_add(&j, j.root, "pg", cJSON_CreateObject());
        cli_json_add(&j, g, "algo", cJSON_CreateString(dg_pg_algo_name(o.algo)));
        const struct { const char *key, *fmt; double v; } nums[] = {
            {"iters", "%.0f", pgr.iters},       {"batch", "%.0f", o.batch},
            {"env_steps", "%.0f", (double)dg_pg_env_steps(pg)},
            {"lr", "%g", o.lr},                  {"vf_lr", "%g", o.vf_lr},
            {"log_std0", "%g", o.log_std0},      {"learn_std", "%.0f", o.learn_std},
            {"gamma", "%g", o.gamma},            {"lambda", "%g", o.lambda},
            {"clip", "%g", o.clip},              {"epochs", "%.0f", o.pi_epochs},
            {"vf_epochs", "%.0f", o.vf_epochs},  {"minibatch", "%.0f", o.minibatch},
            {"vf_minibatch", "%.0f", o.vf_minibatch}, {"final_loss", "%.9g", pgr.final},
            {"best_loss", "%.9g", pgr.best},      {"seconds", "%.3f", t_pg},
        };
        for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
            cli_json_add(&j, g, nums[i].key, cli_json_number(nums[i].fmt, nums[i].v));
    }
    rc = cli_json_print(&j, "pg");
done:
    dg_dir_unlock(lock);
    dg_pg_free(pg);
    dg_pg_eval_free(ev);
    dg_pg_curve_free(&curve);
    dg_run_free(&s);
    return rc;
}
