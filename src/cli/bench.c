/* difgames bench: how fast a game trains, and how close to the machine's limit. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>

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


int cmd_bench(int argc, char **argv) {
    const char *config;
    int epochs, warmup, hidden, rc;
    cli_opt opts[] = {
        CLI_CONFIG(&config), CLI_PLUGIN,
        CLI_INT("--epochs", &epochs, "N", 1, DG_MAX_EPOCHS, "timed epochs", .def = "30"),
        CLI_INT("--warmup", &warmup, "N", 1, DG_MAX_EPOCHS, "untimed epochs first (the arena grows in the first)",
                .def = "3"),
        CLI_KEY("--batch", "train.batch"), CLI_KEY("--horizon", "env.horizon"),
        CLI_INT("--hidden", &hidden, "N", 1, 65536, "width of both hidden layers (policy.hidden: [N, N])"),
        CLI_KEY("--threads", "train.threads"), CLI_KEY("--checkpoint", "train.checkpoint_every"),
        CLI_KEY("--precision", "train.precision"),
        CLI_END,
    };
    if (!cli_parse(&rc, "bench", argc, argv, opts, HELP)) return rc;
    char total_s[32];
    snprintf(total_s, sizeof total_s, "%d", epochs + warmup);
    dg_run_set sets[CLI_MAX_OPTS + 1];
    int nsets = cli_sets(opts, sets);
    sets[nsets++] = (dg_run_set){"train.epochs", total_s};
    dg_run s;
    if ((rc = cli_load(&s, config, NULL, 0, sets, nsets))) return rc;
    if (hidden) {
        s.opts.nhidden = 2;
        s.opts.hidden[0] = s.opts.hidden[1] = hidden;
    }
    s.opts.nsnapshots = 0;
    dg_err e = {0};
    dg_bench_result b;
    if (dg_run_memory_check(&s, &e) != DG_OK) rc = cli_config_fail(&e);
    else if (dg_run_bench(&s, warmup, epochs, &b, &e) != DG_OK) rc = cli_fail("bench", &e, EXIT_FAIL);
    if (rc) {
        dg_run_free(&s);
        return rc;
    }
    const int B = s.opts.batch, H = s.env->horizon, ckk = b.checkpoint_every;
    const double gflops = b.flops / (b.ms / 1e3) / 1e9;
    printf("%s: batch %d, horizon %d, hidden %d, %d thread%s, %s\n", s.env->game->name, B, H,
           s.opts.nhidden ? s.opts.hidden[0] : 0, s.opts.threads, s.opts.threads > 1 ? "s" : "",
           ckk ? "checkpointed BPTT" : "full tape");
    printf("  ms/epoch        %.3f  (median of %d, min %.3f)\n", b.ms, b.epochs, b.ms_min);
    printf("  env-steps/s     %.4g  (with backward)\n", b.steps_per_s);
    printf("  FLOP/epoch      %.4g  -> %.2f GFLOP/s\n", b.flops, gflops);
    printf("  tape peak       %.1f MiB  (%d shard%s)\n", b.tape_bytes / 1048576.0, b.shards, b.shards > 1 ? "s" : "");
    if (ckk) printf("  saved states    %.1f MiB  (every %d steps)\n", b.saved_bytes / 1048576.0, ckk);
    dg_json j = {cJSON_CreateObject(), 0};
    const struct { const char *key, *fmt; double v; } nums[] = {
        {"batch", "%.0f", B},             {"horizon", "%.0f", H},
        {"hidden", "%.0f", s.opts.nhidden ? s.opts.hidden[0] : 0},
        {"threads", "%.0f", s.opts.threads}, {"checkpoint_every", "%.0f", ckk},
        {"ms_per_epoch", "%.4f", b.ms},   {"env_steps_per_s", "%.1f", b.steps_per_s},
        {"flop_per_epoch", "%.0f", b.flops}, {"gflops", "%.3f", gflops},
        {"tape_bytes", "%.0f", b.tape_bytes}, {"saved_bytes", "%.0f", b.saved_bytes},
    };
    dg_json_game(&j, s.env->game->name, dg_env_source(s.env));
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        dg_json_add(&j, j.root, nums[i].key, dg_json_number(nums[i].fmt, nums[i].v));
    rc = cli_json_print(&j, "bench");
    dg_run_free(&s);
    return rc;
}
