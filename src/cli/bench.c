/* difgames bench: how fast a game trains, and how close to the machine's limit. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char HELP[] =
    "usage: difgames bench --config FILE [options]\n"
    "\n"
    "Trains the config's game for a few epochs (writing nothing) and prints the speed:\n"
    "ms per epoch (median), environment steps per second including the backward pass\n"
    "(batch x horizon / epoch time, as Brax reports it), the FLOPs of one epoch and their\n"
    "rate, and the memory of the tape (arena peak of all shards) and of checkpointed\n"
    "states. The last line is the same as one JSON object.\n"
    "\n"
    "options (those naming a key override that key of the config; the config's\n"
    "train.epochs is not used: bench runs --warmup + --epochs epochs):\n";


typedef struct timing {
    double *ms, *flops;
    int     n, cap, warmup;
} timing;

static void on_event(const dg_train_event *ev, void *user) {
    timing *t = user;
    if (ev->kind != DG_TRAIN_EV_EPOCH || ev->stats->epoch <= t->warmup || t->n == t->cap) return;
    t->ms[t->n] = ev->stats->ms;
    t->flops[t->n] = ev->stats->flops;
    t->n++;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int cmd_bench(int argc, char **argv) {
    const char *config, *epochs_s, *warmup_s, *hidden_s, *ck_s;
    cli_overrides ov = {0};
    const cli_opt opts[] = {
        {"--config", &config, NULL, "FILE", "YAML config", "required"},
        {"--epochs", &epochs_s, NULL, "N", "timed epochs", "30"},
        {"--warmup", &warmup_s, NULL, "N", "untimed epochs first (the arena grows in the first)", "3"},
        {"--batch", &ov.batch, NULL, "N", "parallel episodes (train.batch)", NULL},
        {"--horizon", &ov.horizon, NULL, "N", "steps per episode (env.horizon)", NULL},
        {"--hidden", &hidden_s, NULL, "N", "width of both hidden layers (policy.hidden: [N, N])", NULL},
        {"--threads", &ov.threads, NULL, "N", "threads over the batch (train.threads; 0: one per core)", NULL},
        {"--checkpoint", &ck_s, NULL, "K", "checkpointed BPTT, a segment every K steps; 0 auto, -1 full tape "
         "(train.checkpoint_every)", NULL},
        {NULL, NULL, NULL, NULL, NULL, NULL},
    };
    const int prc = cli_parse("bench", argc, argv, opts, HELP);
    if (prc) return prc == CLI_HELP ? 0 : prc;
    if (!config) {
        cli_error("bench", "--config FILE is required (see --help)");
        return EXIT_USAGE;
    }
    int epochs = 30, warmup = 3, hidden = 0, ck = -2;
    if ((epochs_s && !cli_int("bench", "--epochs", epochs_s, 1, DG_MAX_EPOCHS, &epochs)) ||
        (warmup_s && !cli_int("bench", "--warmup", warmup_s, 1, DG_MAX_EPOCHS, &warmup)) ||
        (hidden_s && !cli_int("bench", "--hidden", hidden_s, 1, 65536, &hidden)) ||
        (ck_s && !cli_int("bench", "--checkpoint", ck_s, -1, DG_MAX_HORIZON, &ck)))
        return EXIT_USAGE;
    char total_s[32];
    snprintf(total_s, sizeof total_s, "%d", epochs + warmup);
    ov.epochs = total_s;
    cli_setup s;
    int rc = cli_setup_load(&s, config, &ov);
    if (rc) return rc;
    if (hidden) {
        s.opts.nhidden = 2;
        s.opts.hidden[0] = s.opts.hidden[1] = hidden;
    }
    if (ck > -2) s.opts.checkpoint_every = ck;
    s.opts.nsnapshots = 0;
    if (!cli_train_memory_ok(&s)) {
        cli_setup_free(&s);
        return EXIT_USAGE;
    }
    dg_err e = {0};
    dg_trainer *t = dg_trainer_create(s.env, &s.opts, NULL, NULL, &e);
    timing tm = {.ms = calloc((size_t)epochs, sizeof(double)), .flops = calloc((size_t)epochs, sizeof(double)),
                 .cap = epochs, .warmup = warmup};
    if (!t || !tm.ms || !tm.flops) {
        cli_error("bench", "%s", t ? "out of memory" : e.msg);
        rc = EXIT_FAIL;
        goto done;
    }
    if (dg_trainer_run(t, on_event, &tm, NULL, &e) != DG_OK) {
        cli_error("bench", "%s", e.msg);
        rc = EXIT_FAIL;
        goto done;
    }
    const double flops = tm.flops[tm.n - 1];
    qsort(tm.ms, (size_t)tm.n, sizeof(double), cmp_double);
    const double ms = tm.ms[tm.n / 2];
    const int B = s.opts.batch, H = s.env->horizon;
    const int shards = s.opts.threads < B ? s.opts.threads : B;
    const double steps_per_s = (double)B * H / (ms / 1e3);
    const double tape = (double)dg_trainer_arena_peak(t) * shards;
    const int ckk = dg_trainer_checkpoint_every(t);
    const double saved = ckk ? (double)((H + ckk - 1) / ckk) * B * s.env->state_dim * sizeof(float) : 0;
    printf("%s: batch %d, horizon %d, hidden %d, %d thread%s, %s\n", s.env->game->name, B, H,
           s.opts.nhidden ? s.opts.hidden[0] : 0, s.opts.threads, s.opts.threads > 1 ? "s" : "",
           ckk ? "checkpointed BPTT" : "full tape");
    printf("  ms/epoch        %.3f  (median of %d, min %.3f)\n", ms, tm.n, tm.ms[0]);
    printf("  env-steps/s     %.4g  (with backward)\n", steps_per_s);
    printf("  FLOP/epoch      %.4g  -> %.2f GFLOP/s\n", flops, flops / (ms / 1e3) / 1e9);
    printf("  tape peak       %.1f MiB  (%d shard%s)\n", tape / 1048576.0, shards, shards > 1 ? "s" : "");
    if (ckk) printf("  saved states    %.1f MiB  (every %d steps)\n", saved / 1048576.0, ckk);
    cli_json j = {cJSON_CreateObject(), 0};
    const struct { const char *key, *fmt; double v; } nums[] = {
        {"batch", "%.0f", B},             {"horizon", "%.0f", H},
        {"hidden", "%.0f", s.opts.nhidden ? s.opts.hidden[0] : 0},
        {"threads", "%.0f", s.opts.threads}, {"checkpoint_every", "%.0f", ckk},
        {"ms_per_epoch", "%.4f", ms},     {"env_steps_per_s", "%.1f", steps_per_s},
        {"flop_per_epoch", "%.0f", flops}, {"gflops", "%.3f", flops / (ms / 1e3) / 1e9},
        {"tape_bytes", "%.0f", tape},     {"saved_bytes", "%.0f", saved},
    };
    cli_json_add(&j, j.root, "game", cJSON_CreateString(s.env->game->name));
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        cli_json_add(&j, j.root, nums[i].key, cli_json_number(nums[i].fmt, nums[i].v));
    rc = cli_json_print(&j, "bench");
done:
    free(tm.ms);
    free(tm.flops);
    dg_trainer_free(t);
    cli_setup_free(&s);
    return rc;
}
