/* Helpers shared by the subcommands: config loading, argument parsing, errors. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "difgames/checkpoint.h"
#include "difgames/fileio.h"
#include "difgames/hji.h"
#include "difgames/memory.h"
#include "difgames/safetensors.h"

void cli_error(const char *cmd, const char *fmt, ...) {
    fprintf(stderr, "difgames %s: ", cmd);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void cli_bar_draw(cli_bar *b, double frac, int first, const char *fmt, ...) {
    enum { WIDTH = 30 };
    if (!b->tty) return;
    const double now = dg_clock_s();
    const int done = frac >= 1.0;
    if (now - b->last < 0.1 && !first && !done) return;
    b->last = now;
    const int fill = done ? WIDTH : frac > 0.0 ? (int)(WIDTH * frac) : 0;
    char bar[WIDTH + 1];
    for (int i = 0; i < WIDTH; i++) bar[i] = i < fill ? '#' : '.';
    bar[WIDTH] = 0;
    fprintf(stderr, "\r[%s] ", bar);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (done) fputc('\n', stderr);
}

void cli_catf(char *buf, size_t cap, const char *fmt, ...) {
    const size_t o = strnlen(buf, cap);
    if (o + 1 >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + o, cap - o, fmt, ap);
    va_end(ap);
}

int cli_run_dir(const char *config, char *buf, size_t n) {
    const char *name = config, *p = config;
    for (const char *hit; (hit = strstr(p, "configs/")) != NULL; p = hit + 1)
        if (hit == config || hit[-1] == '/') name = hit + 8;
    /* not under a configs/ folder, or a path that climbs out of it: the file name alone */
    if (name == config || strstr(name, "..") || name[0] == '/') {
        const char *slash = strrchr(config, '/');
        name = slash ? slash + 1 : config;
    }
    size_t len = strlen(name);
    if (len > 5 && !strcmp(name + len - 5, ".yaml")) len -= 5;
    else if (len > 4 && !strcmp(name + len - 4, ".yml")) len -= 4;
    /* "..yaml" or "...yaml" would give runs/. or runs/.., a folder that is not the run's own */
    const int dots = (len == 1 && name[0] == '.') || (len == 2 && !strncmp(name, "..", 2));
    const int w = len && !dots ? snprintf(buf, n, "runs/%.*s", (int)len, name) : snprintf(buf, n, "runs/run");
    return w >= 0 && (size_t)w < n ? 0 : -1;
}

int cli_make_parent(const char *cmd, const char *flag, const char *path) {
    char dir[DG_PATH_MAX];
    dg_err e = {0};
    if (dg_file_name_ok(path, &e) != DG_OK) {  /* the name dg_file_begin will need, before the long job */
        cli_error(cmd, "%s: %s", flag, e.msg);
        return EXIT_USAGE;
    }
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path) return 0;  /* the working directory, or / */
    memcpy(dir, path, (size_t)(slash - path));  /* fits: dg_file_name_ok bounds path by DG_PATH_MAX */
    dir[slash - path] = 0;
    if (dg_mkdirs(dir, &e) != DG_OK) {
        cli_error(cmd, "%s: %s", flag, e.msg);
        return EXIT_USAGE;
    }
    if (access(dir, W_OK) != 0) {
        cli_error(cmd, "%s: %s: folder not writable", flag, dir);
        return EXIT_USAGE;
    }
    return 0;
}

int cli_int(const char *cmd, const char *flag, const char *text, int lo, int hi, int *out) {
    long v;
    if (!dg_parse_long(text, (size_t)-1, 10, &v) || v < lo || v > hi) {
        cli_error(cmd, "%s: expected an integer from %d to %d, got '%s'", flag, lo, hi, text);
        return 0;
    }
    *out = (int)v;
    return 1;
}

int cli_double(const char *cmd, const char *flag, const char *text, double lo, double hi, int open, double *out) {
    double v;
    if (!dg_parse_double(text, (size_t)-1, &v) || !(v >= lo && v <= hi) || (v == lo && (open & CLI_OPEN_LO)) ||
        (v == hi && (open & CLI_OPEN_HI))) {
        cli_error(cmd, "%s: expected a number in %c%g, %g%c, got '%s'", flag,
                  (open & CLI_OPEN_LO) || isinf(lo) ? '(' : '[', lo, hi, (open & CLI_OPEN_HI) || isinf(hi) ? ')' : ']',
                  text);
        return 0;
    }
    *out = v;
    return 1;
}

enum { HELP_COLS = 80, HELP_NAME_COL = 24 };  /* --help: line width, where the docs begin */

/* words of text from column col (the cursor is there), wrapped at HELP_COLS to indent */
static void help_words(FILE *fp, const char *text, int col, int indent) {
    for (const char *w = text; *w;) {
        while (*w == ' ') w++;
        const int len = (int)strcspn(w, " ");
        if (!len) break;
        if (col > indent && col + 1 + len > HELP_COLS) {
            fprintf(fp, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', fp);
            col++;
        }
        fprintf(fp, "%.*s", len, w);
        col += len;
        w += len;
    }
}

void cli_help(FILE *fp, const char *help, const cli_opt *opts) {
    fputs(help, fp);
    for (const cli_opt *o = opts; o->name; o++) {
        const int w = fprintf(fp, "  %s%s%s", o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
        int col = w;
        if (col + 2 > HELP_NAME_COL) {
            fprintf(fp, "\n%*s", HELP_NAME_COL, "");
        } else {
            fprintf(fp, "%*s", HELP_NAME_COL - col, "");
        }
        col = HELP_NAME_COL;
        char doc[512];
        const int req = o->def && !strcmp(o->def, "required");
        snprintf(doc, sizeof doc, "%s%s%s%s", o->doc ? o->doc : "", req ? " (required)" : o->def ? " (default " : "",
                 o->def && !req ? o->def : "", o->def && !req ? ")" : "");
        help_words(fp, doc, col, HELP_NAME_COL);
        fputc('\n', fp);
    }
    fprintf(fp, "  %-*s%s\n", HELP_NAME_COL - 2, "-h, --help", "print this help");
}

#define CLI_MAX_OPTS 48  /* options of one subcommand */
#define OPT_VAL 256      /* getopt_long returns OPT_VAL + i for opts[i]: no character, nor 1 (an argument) */

/* The error for a word that is no option, a: EXIT_USAGE. */
static int stray_word(const char *cmd, const char *a, const cli_opt *opts) {
    if (a[0] == '-') cli_error(cmd, "unknown option '%s' (see --help)", a);
    else if (!opts->name) cli_error(cmd, "unexpected argument '%s': takes no arguments (see --help)", a);
    else cli_error(cmd, "unexpected argument '%s' (options come as --name value; see --help)", a);
    return EXIT_USAGE;
}

int cli_parse(const char *cmd, int argc, char **argv, const cli_opt *opts, const char *help) {
    return cli_parse_args(cmd, argc, argv, opts, help, NULL, 0, NULL);
}

int cli_parse_args(const char *cmd, int argc, char **argv, const cli_opt *opts, const char *help,
                   const char **args, int max_args, int *nargs) {
    if (nargs) *nargs = 0;
    struct option lo[CLI_MAX_OPTS + 1];
    int n = 0;
    for (const cli_opt *o = opts; o->name; o++, n++) {  /* nothing given yet */
        if (n == CLI_MAX_OPTS) {  /* a table this program declares: a bug, not a user's error */
            cli_error(cmd, "more than %d options in one table", CLI_MAX_OPTS);
            return EXIT_FAIL;
        }
        if (o->value) *o->value = NULL;
        if (o->flag) *o->flag = 0;
        lo[n] = (struct option){o->name + 2, o->value ? required_argument : no_argument, NULL, OPT_VAL + n};
    }
    lo[n] = (struct option){NULL, 0, NULL, 0};
    /* "-": words that are no option come back in order as 1; ":" and opterr 0: getopt_long prints
     * nothing, the messages are ours */
    opterr = 0;
#if defined(__GLIBC__)
    optind = 0;  /* a fresh scan, whatever scanned before */
#else
    optind = 1;
#endif
    for (;;) {
        const int at = optind < 1 ? 1 : optind;  /* the word getopt_long reads next */
        const int c = getopt_long(argc, argv, "-:h", lo, NULL);
        if (c == -1) break;
        const char *a = argv[at];
        if (c == 1) {  /* an argument: kept while there is room */
            if (a[0] == '-' || !nargs || *nargs >= max_args) return stray_word(cmd, a, opts);
            args[(*nargs)++] = a;
            continue;
        }
        if (c == 'h' && !strcmp(a, "-h")) {
            cli_help(stdout, help, opts);
            return CLI_HELP;
        }
        if (c == ':' || c == '?' || c == 'h') {
            if (c == ':' && !strncmp(a, "--", 2)) {  /* "--out" at the end */
                cli_error(cmd, "%s needs a value", a);
                return EXIT_USAGE;
            }
            if (!strcmp(a, "--help")) {
                cli_help(stdout, help, opts);
                return CLI_HELP;
            }
            const size_t nl = strcspn(a, "=");
            for (const cli_opt *o = opts; o->name && a[nl]; o++)
                if (!o->value && strlen(o->name) == nl && !strncmp(a, o->name, nl)) {  /* "--quiet=1" */
                    cli_error(cmd, "option %s takes no value", o->name);
                    return EXIT_USAGE;
                }
            cli_error(cmd, "unknown option '%s' (see --help)", a);
            return EXIT_USAGE;
        }
        const cli_opt *o = &opts[c - OPT_VAL];
        /* the name in full: getopt_long would also take a unique abbreviation (--conf) */
        const size_t nl = strlen(o->name);
        const int inline_value = a[nl] == '=';
        if (strncmp(a, o->name, nl) || (a[nl] && !inline_value)) {
            cli_error(cmd, "unknown option '%.*s' (see --help)", (int)strcspn(a, "="), a);
            return EXIT_USAGE;
        }
        if (o->value ? *o->value != NULL : *o->flag) {
            cli_error(cmd, "option %s given twice", o->name);
            return EXIT_USAGE;
        }
        if (!o->value) {
            *o->flag = 1;
            continue;
        }
        /* "--out --ckpt x", "--out -h": --out has no value, it takes no option (no word starting with
         * "--", nor -h) as one */
        if (!inline_value && (!strncmp(optarg, "--", 2) || !strcmp(optarg, "-h"))) {
            cli_error(cmd, "%s needs a value", o->name);
            return EXIT_USAGE;
        }
        if (!optarg[0]) {
            cli_error(cmd, "%s: empty value", o->name);
            return EXIT_USAGE;
        }
        *o->value = optarg;
    }
    /* the first word that is not an option; "--" ends getopt_long's options but is none of ours */
    const int stray = optind > 1 && !strcmp(argv[optind - 1], "--") ? optind - 1 : optind;
    return stray < argc ? stray_word(cmd, argv[stray], opts) : 0;
}

int cli_list(const char *cmd, const char *flag, const char *text, double lo, double hi, int integer,
             double **out) {
    *out = NULL;
    size_t cap = 1;
    for (const char *c = text; *c; c++) cap += *c == ',';
    double *v = malloc(cap * sizeof *v);
    if (!v) {
        cli_error(cmd, "%s: out of memory for a list of %zu numbers", flag, cap);
        return -1;
    }
    int n = 0;
    const char *s = text;
    for (;;) {
        const size_t len = strcspn(s, ",");
        double x;
        if (!dg_parse_double(s, len, &x)) {
            cli_error(cmd, "%s: item %d '%.*s' is not a number (expected a list like 1,2,3, got '%.200s')", flag,
                      n + 1, (int)(len < 60 ? len : 60), s, text);
            free(v);
            return -1;
        }
        if (!(x >= lo && x <= hi) || (integer && x != floor(x))) {
            cli_error(cmd, "%s: item %d is %.*s; expected %s from %.17g to %.17g", flag, n + 1,
                      (int)(len < 60 ? len : 60), s, integer ? "a whole number" : "a number", lo, hi);
            free(v);
            return -1;
        }
        v[n++] = x;
        if (!s[len]) break;
        s += len + 1;
    }
    *out = v;
    return n;
}

int cli_check_outputs(const char *cmd, const cli_path *outs, int nout, const cli_path *ins, int nin) {
    for (int i = 0; i < nout; i++) {
        if (!outs[i].path) continue;
        dg_err e = {0};
        if (dg_file_name_ok(outs[i].path, &e) != DG_OK) {  /* a name the write would refuse, refused now */
            cli_error(cmd, "%s: %s", outs[i].flag, e.msg);
            return EXIT_USAGE;
        }
        for (int j = 0; j < nin + i; j++) {
            const cli_path *other = j < nin ? &ins[j] : &outs[j - nin];
            if (!other->path || !dg_path_same(outs[i].path, other->path)) continue;
            cli_error(cmd, "%s %s is also the %s %s: it would be overwritten; choose another file", outs[i].flag,
                      outs[i].path, j < nin ? "input" : "output", other->flag);
            return EXIT_USAGE;
        }
    }
    return 0;
}

int cli_exit_for(dg_status s) {
    switch (s) {
    case DG_OK: return 0;
    case DG_ERR_ARG: case DG_ERR_IO: case DG_ERR_FORMAT: case DG_ERR_NOT_FOUND: case DG_ERR_CONFIG:
        return EXIT_USAGE;
    case DG_ERR_INTERRUPTED: return EXIT_INTERRUPTED;
    default: return EXIT_FAIL;
    }
}

int cli_mem_ok(const char *cmd, double need, const char *what, const char *lower) {
    dg_err e = {0};
    if (dg_mem_check(need, &e) == DG_OK) return 1;
    cli_error(cmd, "%s %s; lower %s", what, e.msg, lower);
    return 0;
}

cJSON *cli_json_number(const char *fmt, double v) {
    if (!isfinite(v)) return cJSON_CreateNull();
    char t[64];
    snprintf(t, sizeof t, fmt, v);
    return cJSON_CreateRaw(t);
}

cJSON *cli_json_add(cli_json *j, cJSON *obj, const char *key, cJSON *item) {
    const int ok = obj && item && (key ? cJSON_AddItemToObject(obj, key, item) : cJSON_AddItemToArray(obj, item));
    if (ok) return item;
    cJSON_Delete(item);
    j->oom = 1;
    return NULL;
}

int cli_json_print(cli_json *j, const char *cmd) {
    char *text = j->root && !j->oom ? cJSON_PrintUnformatted(j->root) : NULL;
    cJSON_Delete(j->root);
    j->root = NULL;
    if (!text) {
        cli_error(cmd, "out of memory for the JSON line");
        return EXIT_FAIL;
    }
    puts(text);
    fflush(stdout);
    cJSON_free(text);
    return 0;
}

/* 0 when training s's config fits in memory; 1 with e set to the config error naming the key
 * to lower. */
static int train_memory(const cli_setup *s, dg_err *e) {
    dg_mem_parts m;
    dg_err me = {0};
    if (dg_mem_check(dg_train_memory(s->env, &s->opts, &m), &me) == DG_OK) return 0;
    const char *key = dg_train_memory_key(s->env, &m);
    const char *hint = !strcmp(key, "policy.hidden") ? "lower policy.hidden"
                     : !strcmp(key, "train.epochs") ? "lower train.epochs"
                     : !strcmp(key, "train.batch") ? "lower train.batch or env.horizon" : NULL;
    if (hint) dg_cfg_error(s->cfg, key, e, "batch %d x horizon %d %s; %s", s->opts.batch, s->env->horizon, me.msg, hint);
    else dg_cfg_error(s->cfg, key, e, "batch %d x horizon %d %s; lower %s, train.batch or env.horizon", s->opts.batch,
                      s->env->horizon, me.msg, key);
    return 1;
}

/* Applies overrides, makes the env, reads the options, checks unused keys;
 * s->cfg is already parsed. */
static int setup_finish(cli_setup *s, const cli_overrides *ov, dg_err *e) {
    if (ov) {
        const struct { const char *key, *val; } sets[] = {
            {"seed", ov->seed},       {"train.batch", ov->batch}, {"train.epochs", ov->epochs},
            {"env.horizon", ov->horizon}, {"train.lr", ov->lr},  {"train.threads", ov->threads},
        };
        for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
            if (sets[i].val && dg_cfg_set(s->cfg, sets[i].key, sets[i].val, e) != DG_OK) return 1;
        for (int i = 0; i < ov->nsets; i++)
            if (ov->sets[i].value && dg_cfg_set(s->cfg, ov->sets[i].key, ov->sets[i].value, e) != DG_OK) return 1;
    }
    const char *game = NULL;
    if (dg_cfg_get(s->cfg, "game", DG_CFG_STR, &game, NULL) == DG_OK && game)
        for (int i = 0; dg_hji_problem_name(i); i++)
            if (!strcmp(game, dg_hji_problem_name(i))) {
                dg_cfg_error(s->cfg, "game", e, "'%s' is a game of the HJBI grid solver: use difgames hji "
                             "solve|plot|play (this command trains and checks learned policies)", game);
                return 1;
            }
    s->env = dg_env_create(s->cfg, e);
    if (!s->env) return 1;
    if (dg_train_opts_read(s->cfg, &s->opts, e) != DG_OK) return 1;
    if (dg_pg_opts_read(s->cfg, &s->pg, &s->pg_run, e) != DG_OK) return 1;
    if (dg_cfg_check_unused(s->cfg, e) != DG_OK) return 1;
    return 0;
}

int cli_train_memory_ok(const cli_setup *s) {
    dg_err e = {0};
    if (!train_memory(s, &e)) return 1;
    fprintf(stderr, "difgames: %s\n", e.msg);
    return 0;
}

int cli_setup_load(cli_setup *s, const char *path, const cli_overrides *ov) {
    memset(s, 0, sizeof *s);
    dg_err e = {0};
    s->cfg = dg_cfg_load(path, &e);
    if (!s->cfg || setup_finish(s, ov, &e)) {
        fprintf(stderr, "difgames: %s\n", e.msg);
        cli_setup_free(s);
        return EXIT_USAGE;
    }
    return 0;
}

int cli_setup_parse(cli_setup *s, const char *text, size_t len, const char *label, const cli_overrides *ov) {
    memset(s, 0, sizeof *s);
    dg_err e = {0};
    s->cfg = dg_cfg_parse(text, len, label, &e);
    if (!s->cfg || setup_finish(s, ov, &e)) {
        fprintf(stderr, "difgames: %s\n", e.msg);
        cli_setup_free(s);
        return EXIT_USAGE;
    }
    return 0;
}

void cli_setup_free(cli_setup *s) {
    dg_env_free(s->env);
    dg_cfg_free(s->cfg);
    memset(s, 0, sizeof *s);
}

#define INIT_MAX_ROWS (1 << 20)  /* initial states in one --init file */

int cli_load_init(const char *cmd, const dg_env *env, const char *path, float **state, float **aux) {
    dg_err e = {0};
    *state = *aux = NULL;
    dg_st_file *f = dg_st_load(path, &e);
    if (!f) {
        cli_error(cmd, "%s", e.msg);
        return -1;
    }
    const dg_st_tensor *ts = dg_st_find(f, "state");
    int B = -1;
    if (!ts || ts->ndim != 2 || ts->shape[1] != env->state_dim || ts->shape[0] < 1) {
        cli_error(cmd, "%s: needs a tensor 'state' of shape (B, %d)", path, env->state_dim);
        goto done;
    }
    if (ts->shape[0] > INIT_MAX_ROWS) {
        cli_error(cmd, "%s: tensor 'state' has %lld rows, more than the %d initial states a file may hold", path,
                  (long long)ts->shape[0], INIT_MAX_ROWS);
        goto done;
    }
    B = (int)ts->shape[0];
    char what[300];
    snprintf(what, sizeof what, "%.200s: %d initial states", path, B);
    if (!cli_mem_ok(cmd, (double)B * (env->state_dim + env->aux_dim + env->aux_user_dim) * sizeof(float), what,
                    "the rows of the file")) {
        B = -1;
        goto done;
    }
    *state = malloc((size_t)B * env->state_dim * sizeof(float));
    *aux = malloc((size_t)B * (env->aux_dim ? env->aux_dim : 1) * sizeof(float));
    if (!*state || !*aux) {
        cli_error(cmd, "out of memory");
        B = -1;
        goto done;
    }
    if (dg_st_read_f32(f, "state", 2, (int64_t[]){B, env->state_dim}, *state, &e) != DG_OK) {
        cli_error(cmd, "%s", e.msg);
        B = -1;
        goto done;
    }
    if (env->aux_dim) {
        const int ud = env->aux_user_dim ? env->aux_user_dim : env->aux_dim;
        float *tmp = malloc((size_t)B * ud * sizeof(float));
        if (!tmp || dg_st_read_f32(f, env->aux_name, 2, (int64_t[]){B, ud}, tmp, &e) != DG_OK) {
            if (tmp) cli_error(cmd, "%s", e.msg);
            else cli_error(cmd, "out of memory");
            free(tmp);
            B = -1;
            goto done;
        }
        for (int b = 0; b < B; b++)
            memcpy(*aux + (size_t)b * env->aux_dim, tmp + (size_t)b * ud, (size_t)ud * sizeof(float));
        free(tmp);
        if (env->game->complete_aux) env->game->complete_aux(env, B, *aux);
    }
done:
    dg_st_free(f);
    if (B < 0) {
        free(*state);
        free(*aux);
        *state = *aux = NULL;
    }
    return B;
}

typedef struct rollout_job {
    const dg_env *env;
    const dg_policy *m;
    dg_params *p;
    const float *state0, *aux;
    int B, backward;
    float *terms, *traj;
    dg_tensor *loss;
} rollout_job;

static dg_status run_rollout(dg_ctx *ctx, void *user) {
    rollout_job *j = user;
    j->loss = dg_rollout(ctx, j->env, j->m, j->p, j->state0, j->aux, j->B, 1.0f / (float)j->B, j->terms,
                         j->traj, j->B);
    if (j->loss && j->backward) dg_backward(ctx, j->loss);
    return dg_ctx_status(ctx);
}

dg_ctx *cli_rollout(const char *cmd, const dg_env *env, const dg_policy *m, dg_params *p,
                    const float *state0, const float *aux, int B, int backward, float *terms,
                    float *traj, dg_tensor **loss) {
    int hidden[DG_MLP_MAX_LAYERS];
    for (int i = 0; i + 1 < m->mlp[0].nlayers; i++) hidden[i] = m->mlp[0].sizes[i + 1];
    /* the measured tape (never short for a shipped game; dg_ctx_run grows it if it is) */
    size_t cap = (size_t)dg_rollout_memory(env, hidden, m->mlp[0].nlayers - 1, B, env->horizon, backward);
    if (cap < ((size_t)1 << 20)) cap = (size_t)1 << 20;
    dg_ctx *ctx = dg_ctx_create(cap);
    if (!ctx) {
        cli_error(cmd, "out of memory for a %zu MiB arena", cap >> 20);
        return NULL;
    }
    rollout_job j = {env, m, p, state0, aux, B, backward, terms, traj, NULL};
    if (dg_ctx_run(&ctx, DG_ARENA_MAX, run_rollout, &j) != DG_OK) {
        cli_error(cmd, "%s", dg_ctx_error(ctx));
        dg_ctx_free(ctx);
        return NULL;
    }
    *loss = j.loss;
    return ctx;
}

int cli_load_policy(const char *cmd, const cli_setup *s, const char *ckpt, dg_policy *m, dg_params **p) {
    dg_err e = {0};
    if (dg_policy_create(s->env, s->opts.hidden, s->opts.nhidden, m, p, &e) != DG_OK) {
        cli_error(cmd, "%s", e.msg);
        return EXIT_FAIL;
    }
    if (dg_checkpoint_load(ckpt, *p, &e) != DG_OK) {
        cli_error(cmd, "%s", e.msg);
        dg_params_free(*p);
        *p = NULL;
        return EXIT_USAGE;
    }
    return 0;
}
