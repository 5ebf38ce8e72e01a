/* difgames export: a grid value (its feedback and switch filter) or a checkpoint's policy written as
 * plain C, C99 and libm only (docs/export.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "difgames/export.h"
#include "difgames/hji_learn.h"
#include "difgames/safety.h"

static const char HELP[] =
    "usage: difgames export --value V.safetensors --config FILE --out DIR [--prefix P]\n"
    "                       [--filter switch --margin M | --filter qp --gamma G]\n"
    "                       [--boundary-layer EPS]\n"
    "       difgames export --ckpt final.safetensors --config FILE --out DIR [--prefix P]\n"
    "\n"
    "Writes DIR/P.h and DIR/P.c, plain C99 and libm only (no libdifgames, no allocation,\n"
    "thread-safe), and prints one JSON line: the files and their sizes.\n"
    "--value (a value file of `difgames hji solve`, --config its HJI config): the table of V\n"
    "at the file's last time (float64 or float32, as solved) and P_value(x), P_grad(x, g),\n"
    "P_control(x, u, d) (both players' feedback: bang-bang, or with --boundary-layer) and\n"
    "P_filter(x, u_nominal, u_safe): --filter switch, the value's bang-bang control where\n"
    "V(x) <= --margin; --filter qp, the action closest to u_nominal with\n"
    "grad V . f(x, u, d*) >= -G V(x) (u_nominal and u_safe in the control box's [-1, 1]\n"
    "coordinates; the box controls of air3d, chauffeur and linear). Built-in games\n"
    "pursuit2d, air3d, chauffeur, chase4d and linear (box and ball inputs); others are\n"
    "refused.\n"
    "--ckpt (a training checkpoint, --config its training config): P_policy(obs, act), the\n"
    "network's forward pass (and P_policy2 for a second learned player).\n"
    "The functions give the library's own bits (dg_hji_interp, dg_hji_feedback,\n"
    "dg_hji_filter_row, dg_mlp_forward); out of the grid a plain axis is clamped to its edge\n"
    "and V extrapolated linearly, a periodic axis wraps. Compile without -ffast-math and\n"
    "without contracting a * b + c (-ffp-contract=off; GCC's default under -std=c99).\n"
    "\n"
    "options:\n";

/* The JSON line of an export: what, the game, the files and their sizes. */
static int report(const char *what, const char *game, const char *source, const dg_export_files *f) {
    dg_json j = {cJSON_CreateObject(), 0};
    dg_json_add(&j, j.root, "export", cJSON_CreateString(what));
    dg_json_game(&j, game, source);
    dg_json_add(&j, j.root, "h", cJSON_CreateString(f->h));
    dg_json_add(&j, j.root, "c", cJSON_CreateString(f->c));
    dg_json_add(&j, j.root, "h_bytes", dg_json_number("%.0f", (double)f->h_bytes));
    dg_json_add(&j, j.root, "c_bytes", dg_json_number("%.0f", (double)f->c_bytes));
    return cli_json_print(&j, "export");
}

/* The value's export: the HJI config loaded as hji's commands load it, then dg_export_value. */
static int export_value(const char *config, const char *value, const char *out, const char *prefix,
                        const dg_export_value_opts *filter) {
    dg_err e = {0};
    dg_hji_learn_opts lo;
    dg_cfg *cfg = dg_cfg_load(config, &e);
    dg_hji_problem *p = cfg ? dg_hji_problem_load(cfg, &e) : NULL;
    if (!p || dg_hji_learn_opts_read(cfg, &lo, &e) != DG_OK || dg_cfg_check_unused(cfg, &e) != DG_OK) {
        dg_hji_problem_free(p);
        dg_cfg_free(cfg);
        return cli_config_fail(&e);
    }
    int rc = 0;
    const char *why = dg_export_value_refusal(p), *fwhy = why ? NULL : dg_export_filter_refusal(p, filter->mode);
    if (why) {
        cli_error("export", "--config %s: %s: %s", config, p->name, why);
        rc = EXIT_USAGE;
    } else if (fwhy) {
        cli_error("export", "--filter %s: --config %s: %s: %s", dg_safety_mode_name(filter->mode), config, p->name,
                  fwhy);
        rc = EXIT_USAGE;
    } else if (!prefix && !dg_export_prefix_ok(p->name)) {
        cli_error("export", "--prefix: the game's name '%s' is not a C identifier: give one", p->name);
        rc = EXIT_USAGE;
    } else {
        dg_export_files f;
        if (dg_export_value(p, config, value, out, prefix ? prefix : p->name, filter, &f, &e) != DG_OK)
            rc = cli_fail("export", &e, e.status == DG_ERR_IO ? EXIT_USAGE : 0);
        else rc = report("value", p->name, dg_hji_problem_source(p), &f);
    }
    dg_hji_problem_free(p);
    dg_cfg_free(cfg);
    return rc;
}

/* The policy's export: the training config's policy with the checkpoint, then dg_export_policy. */
static int export_policy(const char *config, const char *ckpt, const char *out, const char *prefix) {
    dg_run s;
    int rc = cli_load(&s, config, NULL, 0, NULL, 0);
    if (rc) return rc;
    dg_err e = {0};
    dg_policy m;
    dg_params *p = NULL;
    const char *game = s.env->game->name;
    if (!prefix && !dg_export_prefix_ok(game)) {
        cli_error("export", "--prefix: the game's name '%s' is not a C identifier: give one", game);
        rc = EXIT_USAGE;
    } else if (dg_run_policy_load(&s, ckpt, &m, &p, &e) != DG_OK) {
        rc = cli_fail("export", &e, 0);
    } else {
        dg_export_files f;
        if (dg_export_policy(&m, p, ckpt, out, prefix ? prefix : game, &f, &e) != DG_OK)
            rc = cli_fail("export", &e, e.status == DG_ERR_IO ? EXIT_USAGE : 0);
        else rc = report("policy", game, dg_env_source(s.env), &f);
    }
    dg_params_free(p);
    dg_run_free(&s);
    return rc;
}

int cmd_export(int argc, char **argv) {
    const char *config, *value, *ckpt, *out, *prefix, *mode;
    double margin, gamma, layer;
    int rc;
    cli_opt opts[] = {
        CLI_CONFIG(&config),
        CLI_IN("--value", &value, "FILE", "a value file of hji solve (--config: its HJI config)", .req = 1,
               .unless = "--ckpt"),
        CLI_IN("--ckpt", &ckpt, "FILE", "a policy checkpoint (--config: its training config)", .req = 1,
               .unless = "--value"),
        CLI_STR("--out", &out, "DIR", "the folder of P.h and P.c (made if missing)", .req = 1),
        CLI_STR("--prefix", &prefix, "P", "the files' name and the functions' prefix (a C identifier)",
                .otherwise = "the game's name"),
        CLI_DOUBLE("--margin", &margin, "M", -INFINITY, INFINITY, "--value: P_filter switches to the value's "
                   "control where V(x) <= M", .def = "0"),
        CLI_STR("--filter", &mode, "switch|qp", "--value: P_filter's kind: switch (the value's control where V <= "
                "--margin) or qp (the HJ control-barrier filter)", .def = "switch"),
        CLI_DOUBLE("--gamma", &gamma, "G", 0, INFINITY, "--filter qp: the barrier's decay rate (1/s): grad V . "
                   "f(x, u, d*) >= -G V(x)", .otherwise = "safety.gamma's default (difgames keys)"),
        CLI_DOUBLE("--boundary-layer", &layer, "EPS", 0, 1, "--value: P_control's inputs saturate linearly where "
                   "|(G^T p)_j| < EPS |p| |G e_j| (dg_hji_feedback's layer, as hji play's); 0: bang-bang", .def = "0"),
        CLI_END,
    };
    if (!cli_parse(&rc, "export", argc, argv, opts, HELP)) return rc;
    if (value && ckpt) {
        cli_error("export", "--value and --ckpt: give one (a value or a policy)");
        return EXIT_USAGE;
    }
    if (prefix && !dg_export_prefix_ok(prefix)) {
        cli_error("export", "--prefix: %s is not a C identifier of 1 to %d characters", DG_ECHO(prefix),
                  DG_EXPORT_PREFIX_MAX);
        return EXIT_USAGE;
    }
    for (int i = 0; i < 4; i++) {
        const char *opt = (const char *[]){"--margin", "--filter", "--gamma", "--boundary-layer"}[i];
        if (cli_given(opts, opt) && ckpt) {
            cli_error("export", "%s: only with --value (the filter of a value)", opt);
            return EXIT_USAGE;
        }
    }
    dg_export_value_opts filter = {.mode = -1, .margin = margin, .layer = layer};
    for (int m = 0; dg_safety_mode_name(m); m++)
        if (!strcmp(mode, dg_safety_mode_name(m))) filter.mode = m;
    if (filter.mode < 0) {
        cli_error("export", "--filter: %s is not switch or qp", DG_ECHO(mode));
        return EXIT_USAGE;
    }
    if (cli_given(opts, "--margin") && filter.mode != DG_SAFETY_SWITCH) {
        cli_error("export", "--margin: the switch filter's (--filter switch); qp takes --gamma");
        return EXIT_USAGE;
    }
    if (cli_given(opts, "--gamma") && filter.mode != DG_SAFETY_QP) {
        cli_error("export", "--gamma: the qp filter's (--filter qp)");
        return EXIT_USAGE;
    }
    if (cli_given(opts, "--gamma")) {
        filter.gamma = gamma;
    } else {  /* the default declared once, by the safety.gamma key */
        int n;
        const dg_key *k = dg_safety_keys(&n);
        for (int i = 0; i < n; i++)
            if (!strcmp(k[i].name, "safety.gamma")) filter.gamma = k[i].def;
    }
    return value ? export_value(config, value, out, prefix, &filter) : export_policy(config, ckpt, out, prefix);
}
