/* difgames train: BPTT training with progress, metrics, snapshots and plots. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "difgames/dist.h"
#include "difgames/fileio.h"
#include "difgames/safetensors.h"

static const char HELP[] =
    "usage: difgames train --config FILE [options]\n"
    "       difgames train --resume DIR [--epochs N]\n"
    "\n"
    "Trains the config's policy by backpropagation through whole episodes (or windows\n"
    "of train.truncate steps) and writes into DIR: metrics.csv (epoch, loss, each term,\n"
    "grad norm, lr, ms, game metrics), epoch_NNNN.safetensors snapshots,\n"
    "final.safetensors, resume.safetensors and loss.png.\n"
    "The last line of stdout is one JSON object (game, source, epochs, final loss,\n"
    "seconds; source: builtin, or model for a model file's game, named by its\n"
    "model.name).\n"
    "\n"
    "Ctrl-C stops after the current epoch and still writes final.safetensors.\n"
    "\n"
    "options (each overrides the config):\n";

/* the files of a run the config must not be */
static const char *const OUTPUTS[] = {"metrics.csv", "loss.png", "final.safetensors", "resume.safetensors", NULL};

typedef struct progress {
    const dg_run *run;
    const dg_env *env;
    const char *config, *resume;         /* --config; the resume file (NULL: a fresh run)   */
    char   dir[DG_PATH_MAX], game[64];   /* the run folder; the game's name                */
    const char *source;                  /* where the game comes from (dg_env_source)       */
    const dg_run_train_result *res;
    int    epochs, tty, quiet;
    double t0;
    cli_bar bar;
} progress;

static void on_event(const dg_train_event *ev, void *user) {
    progress *pr = user;
    const dg_env *env = pr->env;
    if (pr->quiet && ev->kind != DG_TRAIN_EV_NAN && ev->kind != DG_TRAIN_EV_ZERO_GRAD) return;
    switch (ev->kind) {
    case DG_TRAIN_EV_START: {
        const dg_train_opts *o = &pr->run->opts;
        if (pr->resume) fprintf(stderr, "resuming %s after epoch %d\n", pr->resume, pr->res->epochs_before);
        fprintf(stderr, "training %s: batch %d, horizon %d, %d epochs, %d thread%s, seed %llu", env->game->name,
                o->batch, env->horizon, o->epochs, o->threads, o->threads > 1 ? "s" : "", (unsigned long long)o->seed);
        if (o->truncate > 0 && o->truncate < env->horizon)
            fprintf(stderr, ", truncated BPTT in windows of %d steps", o->truncate);
        if (pr->res->checkpoint_every)
            fprintf(stderr, ", checkpointed BPTT every %d steps", pr->res->checkpoint_every);
        fprintf(stderr, ", memory about %.1f MiB -> %s/\n", dg_train_memory(env, o, NULL) / 1048576.0, pr->dir);
        pr->t0 = dg_clock_s();
        break;
    }
    case DG_TRAIN_EV_INIT: {
        const dg_epoch_stats *s = ev->stats;
        fprintf(stderr, "loss terms at initialisation (balance the weights so none dominates):\n");
        for (int i = 0; i < env->nterms; i++) {
            const dg_real w = env->term_weights[i];
            fprintf(stderr, "  %-10s weight %-8g raw %-12.6g weighted %.6g\n", env->term_names[i], w,
                    w != 0.0f ? s->terms[i] / w : 0.0, s->terms[i]);
        }
        fprintf(stderr, "  %-10s %.6g\n", "total", s->loss);
        const dg_state_grads *g = ev->state_grads;
        if (!g || g->n == 0) break;
        fprintf(stderr, "gradient of the loss w.r.t. the state, |d loss / d x_t| (first %d episode%s of the batch):\n",
                g->rows, g->rows > 1 ? "s" : "");
        for (int i = 0; i < g->n; i++)
            fprintf(stderr, "  t = %-6d H-%-6d %.4g\n", g->t[i], env->horizon - g->t[i], g->norm[i]);
        if (g->chaotic)
            fprintf(stderr, "warning: the state gradient grows x%.3g from t = %d back to t = %d: exploding gradients "
                            "(chaos or stiff contacts); try train.truncate: %d (gradients then flow back at most that many steps; "
                            "docs/long_horizon.md)\n",
                    g->growth, g->t[g->ref], g->growth_t, g->window > 0 ? g->window : 1);
        break;
    }
    case DG_TRAIN_EV_ZERO_GRAD:
        fprintf(stderr, "warning: parameter '%s' has an exactly zero gradient on the first batch "
                        "(is the gradient chain cut?)\n", ev->param);
        break;
    case DG_TRAIN_EV_NAN:
        if (pr->tty) fputc('\n', stderr);
        fprintf(stderr, "warning: epoch %d: %s; restored the last good parameters, learning rate halved to %g\n",
                ev->stats->epoch, ev->param, ev->lr);
        break;
    case DG_TRAIN_EV_SNAPSHOT:
        break;
    case DG_TRAIN_EV_EPOCH: {
        const dg_epoch_stats *s = ev->stats;
        const double el = dg_clock_s() - pr->t0;
        const double eta = s->epoch ? el / s->epoch * (pr->epochs - s->epoch) : 0;
        if (pr->tty) {
            cli_bar_draw(&pr->bar, pr->epochs ? (double)s->epoch / pr->epochs : 1.0, s->epoch == 1,
                         "%d/%d loss %.4g  %.1f ms/epoch  ETA %.1fs   ", s->epoch, pr->epochs, s->loss, s->ms, eta);
        } else {
            const int every = pr->epochs >= 10 ? pr->epochs / 10 : 1;
            if (s->epoch % every == 0 || s->epoch == 1 || s->epoch == pr->epochs) {
                fprintf(stderr, "epoch %d/%d loss %.6g", s->epoch, pr->epochs, s->loss);
                for (int i = 0; i < env->nterms; i++)
                    fprintf(stderr, " %s %.4g", env->term_names[i], s->terms[i]);
                for (int i = 0; i < env->nmetrics; i++)
                    fprintf(stderr, " %s %.4g", env->metric_names[i], s->metrics[i]);
                for (int i = 0; env->general_sum && i < env->nplayers; i++) {  /* each player's own cost */
                    char nm[32];
                    fprintf(stderr, " cost_%s %.4g", dg_env_player_name(env, i, nm, sizeof nm), s->cost[i]);
                }
                fprintf(stderr, " grad_norm %.4g %.2f ms ETA %.1fs\n", s->grad_norm, s->ms, eta);
            }
        }
        break;
    }
    }
}

/* The run of --resume DIR: its config, stored in DIR/resume.safetensors (path), with sets set. */
static int load_resume(dg_run *s, const char *resume, char *path, size_t n, const dg_run_set *sets, int nsets) {
    dg_err e = {0};
    if (dg_path_join(path, n, resume, "resume.safetensors", &e) != DG_OK) {
        cli_error("train", "--resume: %s", e.msg);
        return EXIT_USAGE;
    }
    dg_st_file *f = dg_st_load(path, &e);
    const char *yaml = f ? dg_st_meta(f, "config") : NULL;
    char label[DG_PATH_MAX + 32];
    snprintf(label, sizeof label, "%s (stored config)", path);
    int rc = EXIT_USAGE;
    if (!f) cli_error("train", "%s", e.msg);
    else if (!yaml || !*yaml) cli_error("train", "%s: no config stored in it (metadata 'config')", path);
    else rc = cli_load(s, label, yaml, strlen(yaml), sets, nsets);
    dg_st_free(f);
    return rc;
}

/* The message and exit code of a dg_run_train (or dg_run_seeds) that failed with st, training into
 * pr->dir; resume: the --resume folder. */
static int train_failed(dg_status st, const dg_run_train_result *res, const dg_err *e, const progress *pr,
                        const char *resume) {
    if (res->step == DG_RUN_STEP_TRAIN && pr->tty) fputc('\n', stderr);
    switch (res->step) {
    case DG_RUN_STEP_CONFIG: return cli_config_fail(e);
    case DG_RUN_STEP_EPOCHS:
        cli_error("train", "--epochs %d: the run in %s has done %d epochs already; give more to go on",
                  pr->run->opts.epochs, resume, res->epochs_before);
        return EXIT_USAGE;
    case DG_RUN_STEP_FOLDER:
        cli_error("train", "--out: %s", e->msg);
        return EXIT_USAGE;
    case DG_RUN_STEP_CALLER:  /* on_seed said why */
        return EXIT_USAGE;
    case DG_RUN_STEP_SEEDS:
        if (st == DG_ERR_ARG) cli_error("train", "--seeds: %s", e->msg);
        return st == DG_ERR_ARG ? EXIT_USAGE : cli_fail("train", e, 0);
    default:
        break;
    }
    if (st != DG_ERR_INTERRUPTED) return cli_fail("train", e, res->step == DG_RUN_STEP_RESUME ? EXIT_USAGE : 0);
    if (dg_dist_rank() == 0)   /* under mpirun: rank 0 wrote it */
        fprintf(stderr, "difgames train: interrupted at epoch %d; wrote %s/final.safetensors\n", res->epochs, pr->dir);
    return EXIT_INTERRUPTED;
}

/* Trains the config (or goes on with the run in resume) into out, its keys set by sets; returns 0 or
 * an exit code; *res: what the training did, pr->game its game. */
static int train_one(const char *config, const char *resume, const dg_run_set *sets, int nsets, const char *out,
                     progress *pr, dg_run_train_result *res) {
    dg_run s;
    dg_err e = {0};
    char resume_path[DG_PATH_MAX] = "", dir[DG_PATH_MAX - 128];  /* the trainer adds file names */
    int rc = resume ? load_resume(&s, resume, resume_path, sizeof resume_path, sets, nsets)
                    : cli_load(&s, config, NULL, 0, sets, nsets);
    if (rc) return rc;
    if (resume) out = resume;
    rc = EXIT_USAGE;
    if (out && dg_path_join(dir, sizeof dir, NULL, out, &e) != DG_OK) {
        cli_error("train", "--out: %s", e.msg);
    } else if (!out && dg_run_dir(config, dir, sizeof dir)) {  /* the config's own folder: runs/<config name> */
        cli_error("train", "--config: path too long to name the default --out");
    } else if (!(config && cli_config_not_output("train", config, dir, OUTPUTS))) {
        rc = 0;
    }
    if (!rc) {
        *pr = (progress){.run = &s, .env = s.env, .resume = resume ? resume_path : NULL, .res = res,
                         .epochs = s.opts.epochs, .tty = pr->tty, .quiet = pr->quiet, .bar = pr->bar};
        snprintf(pr->dir, sizeof pr->dir, "%s", dir);
        snprintf(pr->game, sizeof pr->game, "%s", s.env->game->name);
        pr->source = dg_env_source(s.env);
        const dg_status st = dg_run_train(&s, dir, resume ? resume_path : NULL, nsets > 0, on_event, pr, &cli_stop,
                                          res, &e);
        if (st != DG_OK) rc = train_failed(st, res, &e, pr, resume);
        else if (!pr->quiet) fprintf(stderr, "wrote %s/metrics.csv, loss.png, final.safetensors\n", dir);
    }
    dg_run_free(&s);
    return rc;
}

/* dg_run_seeds' on_seed: before a seed, the config must not be one of its files, and the progress
 * follows it; after, its result. */
static dg_status on_seed(int k, const dg_run *r, const char *dir, const dg_run_train_result *res, void *user) {
    progress *pr = user;
    if (res) {
        if (!pr->quiet) fprintf(stderr, "wrote %s/metrics.csv, loss.png, final.safetensors\nseed %d: final loss "
                                "%.6g\n", dir, (int)r->opts.seed, res->loss);
        return DG_OK;
    }
    if (cli_config_not_output("train", pr->config, dir, OUTPUTS)) return DG_ERR_ARG;
    pr->run = r;
    pr->env = r->env;
    pr->epochs = r->opts.epochs;
    snprintf(pr->dir, sizeof pr->dir, "%s", dir);
    snprintf(pr->game, sizeof pr->game, "%s", r->env->game->name);
    pr->source = dg_env_source(r->env);
    (void)k;
    return DG_OK;
}

/* The training of cmd_train (seeds: --seeds, freed here); 0 or the exit status. */
static int train_run(const char *config, const char *out, const char *resume, cli_list *seeds, const dg_run_set *sets,
                     int nsets, int quiet) {
    if (seeds->v) {  /* train.precision first: an f64 config's seeds train in the double copy (main.c) */
        dg_run_doc d;
        dg_err e = {0};
        int rc = 0;
        if (cli_doc(&d, config, NULL, 0, sets, nsets, &e) != DG_OK) {
            rc = cli_config_fail(&e);
        } else if (d.precision == 1 && !DG_REAL_F64) {
            cli_doc_hand(&d);
            rc = CLI_RERUN_F64;
        } else {
            dg_run_doc_free(&d);  /* dg_run_seeds reads it for each seed, the seed set first */
        }
        if (rc) {
            free(seeds->v);
            return rc;
        }
    }
    cli_catch_stop();
    int rc = 0;
    double *losses = NULL, loss = NAN;
    int *seedi = NULL;
    quiet |= dg_dist_rank() != 0;   /* under mpirun rank 0 alone prints */
    progress pr = {.tty = isatty(2) && !quiet, .quiet = quiet, .config = config};
    pr.bar.tty = pr.tty;
    dg_run_train_result res = {0};
    dg_run_seed_sweep w = {0};
    char base[DG_PATH_MAX];
    /* --seeds: each seed in its own folder, then the median; else the one run */
    const int n = seeds->n;
    if (!seeds->v) {
        rc = train_one(config, resume, sets, nsets, out, &pr, &res);
        if (rc && rc != EXIT_INTERRUPTED) return rc;
        loss = res.loss;
    } else if (!(losses = malloc((size_t)n * sizeof *losses)) || !(seedi = malloc((size_t)n * sizeof *seedi))) {
        cli_error("train", "out of memory for %d seeds", n);
        rc = EXIT_FAIL;
    } else if (!out && dg_run_dir(config, base, sizeof base)) {  /* the config's own folder: runs/<name> */
        cli_error("train", "--config: path too long to name the default --out");
        rc = EXIT_USAGE;
    } else {
        for (int k = 0; k < n; k++) seedi[k] = (int)seeds->v[k];
        w = (dg_run_seed_sweep){.config = config, .sets = sets, .nsets = nsets, .base = out ? out : base, .seeds = seedi,
                           .n = n, .on_seed = on_seed, .on_event = on_event, .user = &pr, .stop = &cli_stop,
                           .losses = losses};
        pr.res = &w.res;
        dg_err e = {0};
        const dg_status st = dg_run_seeds(&w, &e);
        if (st != DG_OK) rc = train_failed(st, &w.res, &e, &pr, NULL);
        loss = w.median;
    }
    if ((!seeds->v || !rc) && dg_dist_rank() == 0) {
        dg_json j = {cJSON_CreateObject(), 0};
        dg_json_game(&j, pr.game, pr.source);
        dg_json_add(&j, j.root, "epochs", dg_json_number("%.0f", seeds->v ? w.epochs : res.epochs));
        cJSON *js = seeds->v ? dg_json_add(&j, j.root, "seeds", cJSON_CreateArray()) : NULL;
        for (int k = 0; seeds->v && k < n; k++) dg_json_add(&j, js, NULL, dg_json_number("%.0f", seeds->v[k]));
        cJSON *jl = seeds->v ? dg_json_add(&j, j.root, "final_losses", cJSON_CreateArray()) : NULL;
        for (int k = 0; seeds->v && k < n; k++) dg_json_add(&j, jl, NULL, dg_json_number("%.9g", losses[k]));
        dg_json_add(&j, j.root, "final_loss", dg_json_number("%.9g", loss));
        if (seeds->v) dg_json_add(&j, j.root, "median_final_loss", dg_json_number("%.9g", loss));
        dg_json_add(&j, j.root, "seconds", dg_json_number("%.3f", seeds->v ? w.seconds : res.seconds));
        if (!seeds->v) dg_json_add(&j, j.root, "interrupted", cJSON_CreateBool(rc == EXIT_INTERRUPTED));
        const int jrc = cli_json_print(&j, "train");
        rc = rc ? rc : jrc;
    }
    free(seeds->v);
    free(seedi);
    free(losses);
    return rc;
}

int cmd_train(int argc, char **argv) {
    const char *config, *out, *resume;
    cli_list seeds;
    int quiet, rc;
    cli_opt opts[] = {
        CLI_CONFIG(&config, .unless = "--resume"), CLI_PLUGIN,
        CLI_STR("--out", &out, "DIR", "output folder", .otherwise = "runs/<config name>, e.g. configs/duel.yaml -> "
                "runs/duel, configs/bench/reach.yaml -> runs/bench/reach"),
        CLI_LIST("--seeds", &seeds, "A,B,...", 0, 2147483647, "train each seed into DIR/seed_N; report the median "
                 "final loss", .integer = 1),
        CLI_KEY("--seed", "seed"), CLI_KEY("--batch", "train.batch"), CLI_KEY("--epochs", "train.epochs"),
        CLI_KEY("--horizon", "env.horizon"), CLI_KEY("--lr", "train.lr"), CLI_KEY("--threads", "train.threads"),
        CLI_KEY("--precision", "train.precision"),
        CLI_KEY("--safety", "safety.value", .otherwise = "the config's safety.value"),
        CLI_KEY("--safety-train", "safety.train", .otherwise = "the config's"),
        CLI_KEY("--safety-mode", "safety.mode", .otherwise = "the config's"),
        CLI_KEY("--safety-penalty", "safety.penalty", .otherwise = "the config's"),
        CLI_STR("--resume", &resume, "DIR", "go on with the run in DIR from its resume.safetensors (written at "
                "snapshots, every train.resume_every epochs and at the end), with the config stored there; --epochs "
                "may raise the number of epochs. A run killed and resumed ends with the same bits as one never "
                "stopped."),
        CLI_QUIET(&quiet, "no progress output, only the final JSON line"),
        CLI_END,
    };
    if (!cli_parse(&rc, "train", argc, argv, opts, HELP)) return rc;
    dg_run_set sets[CLI_MAX_OPTS];
    const int nsets = cli_sets(opts, sets);
    if (resume && (config || out || seeds.v || nsets > (cli_given(opts, "--epochs") != NULL)))
        cli_error("train", "--resume DIR takes the run's own config; only --epochs may change");
    else if (seeds.v && cli_given(opts, "--seed"))
        cli_error("train", "--seed and --seeds cannot be given together (--seeds A,B,... names every seed)");
    else
        return train_run(config, out, resume, &seeds, sets, nsets, quiet);
    free(seeds.v);
    return EXIT_USAGE;
}
