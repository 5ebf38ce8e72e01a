/* Helpers shared by the subcommands: config loading, argument parsing, errors. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "difgames/fileio.h"
#include "difgames/memory.h"

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

int cli_make_parent(const char *cmd, const char *flag, const char *path) {
    dg_err e = {0};
    if (dg_file_parent_make(path, &e) == DG_OK) return 0;
    cli_error(cmd, "%s: %s", flag, e.msg);
    return EXIT_USAGE;
}

int cli_int(const char *cmd, const char *flag, const char *text, int lo, int hi, int *out) {
    long v;
    if (!dg_parse_long(text, (size_t)-1, 10, &v) || v < lo || v > hi) {
        cli_error(cmd, "%s: expected an integer from %d to %d, got %s", flag, lo, hi, DG_ECHO(text));
        return 0;
    }
    *out = (int)v;
    return 1;
}

int cli_double(const char *cmd, const char *flag, const char *text, double lo, double hi, int open, double *out) {
    double v;
    if (!dg_parse_double(text, (size_t)-1, &v) || !(v >= lo && v <= hi) || (v == lo && (open & CLI_OPEN_LO)) ||
        (v == hi && (open & CLI_OPEN_HI))) {
        cli_error(cmd, "%s: expected a number in %c%g, %g%c, got %s", flag,
                  (open & CLI_OPEN_LO) || isinf(lo) ? '(' : '[', lo, hi, (open & CLI_OPEN_HI) || isinf(hi) ? ')' : ']',
                  DG_ECHO(text));
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

/* The dg_run_set of a CLI_KEY option (its value field is the option's value); NULL for another. */
static const dg_run_set *opt_set(const cli_opt *o) {
    return o->value && !o->metavar ? (const dg_run_set *)(const void *)((const char *)o->value -
                                                                         offsetof(dg_run_set, value))
                                   : NULL;
}

/* The key of a CLI_KEY option; NULL for another option (or a key that does not exist). */
static const dg_key *opt_key(const cli_opt *o) {
    const dg_run_set *s = opt_set(o);
    return s ? dg_run_key(s->key) : NULL;
}

void cli_help(FILE *fp, const char *help, const cli_opt *opts) {
    fputs(help, fp);
    for (const cli_opt *o = opts; o->name; o++) {
        const dg_key *k = opt_key(o);
        char meta[64] = "", kdoc[256];
        if (k && k->type == DG_KEY_ENUM) {
            for (int j = 0; k->values[j]; j++) cli_catf(meta, sizeof meta, "%s%s", j ? "|" : "", k->values[j]);
        } else if (k) {
            snprintf(meta, sizeof meta, "%s", k->type == DG_KEY_INT ? "N" : k->type == DG_KEY_BOOL ? "BOOL"
                                              : k->type == DG_KEY_STR ? "TEXT" : "X");
        }
        const size_t dl = k ? strlen(k->doc) : 0;  /* "doc (key)"; "doc (note; key)" */
        const char *note = k ? strrchr(k->doc, '(') : NULL;
        if (note && note > k->doc && note[-1] == ' ' && k->doc[dl - 1] == ')')
            snprintf(kdoc, sizeof kdoc, "%.*s; %s)", (int)dl - 1, k->doc, k->name);
        else if (k)
            snprintf(kdoc, sizeof kdoc, "%s (%s)", k->doc, k->name);
        const char *metavar = k ? meta : o->metavar;
        const int w = fprintf(fp, "  %s%s%s", o->name, metavar ? " " : "", metavar ? metavar : "");
        int col = w;
        if (col + 2 > HELP_NAME_COL) {
            fprintf(fp, "\n%*s", HELP_NAME_COL, "");
        } else {
            fprintf(fp, "%*s", HELP_NAME_COL - col, "");
        }
        col = HELP_NAME_COL;
        char doc[512];
        const int req = o->def && !strcmp(o->def, "required");
        snprintf(doc, sizeof doc, "%s%s%s%s", k ? kdoc : o->doc ? o->doc : "",
                 req ? " (required)" : o->def ? " (default " : "", o->def && !req ? o->def : "",
                 o->def && !req ? ")" : "");
        help_words(fp, doc, col, HELP_NAME_COL);
        fputc('\n', fp);
    }
    fprintf(fp, "  %-*s%s\n", HELP_NAME_COL - 2, "-h, --help", "print this help");
}

#define OPT_VAL 256      /* getopt_long returns OPT_VAL + i for opts[i]: no character, nor 1 (an argument) */

/* The error for an option that opts lack, a[0, len) ("--epoch" of "--epoch=10"), with the one it
 * likely misspells (dg_cfg_nearest, as config keys get): EXIT_USAGE. */
static int unknown_option(const char *cmd, const char *a, size_t len, const cli_opt *opts) {
    const char *names[CLI_MAX_OPTS + 1];
    int n = 0;
    for (const cli_opt *o = opts; o->name && n < CLI_MAX_OPTS; o++) names[n++] = o->name + 2;  /* less "--" */
    names[n++] = "help";
    const size_t dashes = strspn(a, "-");
    const int k = dg_cfg_nearest(a + dashes, len > dashes ? len - dashes : 0, names, n);
    if (k >= 0) cli_error(cmd, "unknown option %s (did you mean --%s? see --help)", DG_ECHO_N(a, len), names[k]);
    else cli_error(cmd, "unknown option %s (see --help)", DG_ECHO_N(a, len));
    return EXIT_USAGE;
}

/* The error for a word that is no option, a: EXIT_USAGE. */
static int stray_word(const char *cmd, const char *a, const cli_opt *opts) {
    if (a[0] == '-') return unknown_option(cmd, a, strlen(a), opts);
    else if (!opts->name) cli_error(cmd, "unexpected argument %s: takes no arguments (see --help)", DG_ECHO(a));
    else cli_error(cmd, "unexpected argument %s (options come as --name value; see --help)", DG_ECHO(a));
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
    for (const cli_opt *o = opts; o->name; o++, n++) {  /* nothing given yet; keys that exist */
        if (n == CLI_MAX_OPTS) {  /* a table this program declares: a bug, not a user's error */
            cli_error(cmd, "more than %d options in one table", CLI_MAX_OPTS);
            return EXIT_FAIL;
        }
        if (o->value) *o->value = NULL;
        else if (o->flag) *o->flag = 0;
        if (opt_set(o) && !opt_key(o)) {  /* a table this program declares: a bug */
            cli_error(cmd, "%s: no config key '%s'", o->name, opt_set(o)->key);
            return EXIT_FAIL;
        }
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
            return unknown_option(cmd, a, strcspn(a, "="), opts);
        }
        const cli_opt *o = &opts[c - OPT_VAL];
        /* the name in full: getopt_long would also take a unique abbreviation (--conf) */
        const size_t nl = strlen(o->name);
        const int inline_value = a[nl] == '=';
        if (strncmp(a, o->name, nl) || (a[nl] && !inline_value))
            return unknown_option(cmd, a, strcspn(a, "="), opts);
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
    if (stray < argc) return stray_word(cmd, argv[stray], opts);
    for (const cli_opt *o = opts; o->name; o++) {  /* a key's value: the key's own check */
        const dg_key *k = opt_key(o);
        dg_err e = {0};
        if (k && *o->value && dg_key_check(k, *o->value, &e) != DG_OK) {
            cli_error(cmd, "%s (%s): %s", o->name, k->name, e.msg);
            return cli_exit_for(e.status);
        }
    }
    return 0;
}

const char *cli_given(const cli_opt *opts, const char *name) {
    for (const cli_opt *o = opts; o->name; o++)
        if (o->value && !strcmp(o->name, name)) return *o->value;
    return NULL;
}

int cli_sets(const cli_opt *opts, dg_run_set *sets) {
    int n = 0;
    for (const cli_opt *o = opts; o->name && n < CLI_MAX_OPTS; o++)
        if (opt_set(o) && *o->value) sets[n++] = *opt_set(o);
    return n;
}

int cli_list(const char *cmd, const char *flag, const char *text, double lo, double hi, int integer,
             double **out) {
    dg_err e = {0};
    const int n = dg_parse_list(text, lo, hi, integer, out, &e);
    if (n < 0) cli_error(cmd, "%s: %s", flag, e.msg);
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
    dg_format_double(t, sizeof t, fmt, v);  /* never "-0" */
    return cJSON_CreateRaw(t);
}

cJSON *cli_json_add(cli_json *j, cJSON *obj, const char *key, cJSON *item) {
    const int ok = obj && item && (key ? cJSON_AddItemToObject(obj, key, item) : cJSON_AddItemToArray(obj, item));
    if (ok) return item;
    cJSON_Delete(item);
    j->oom = 1;
    return NULL;
}

void cli_json_game(cli_json *j, const char *name, const char *source) {
    cli_json_add(j, j->root, "game", cJSON_CreateString(name));
    if (source) cli_json_add(j, j->root, "source", cJSON_CreateString(source));
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

int cli_fail(const char *cmd, const dg_err *e, int rc) {
    cli_error(cmd, "%s", e->msg);
    return rc ? rc : cli_exit_for(e->status);
}

int cli_config_fail(const dg_err *e) {
    fprintf(stderr, "difgames: %s\n", e->msg);
    return EXIT_USAGE;
}

dg_status cli_doc(dg_run_doc *d, const char *path, const char *text, size_t len, const dg_run_set *sets, int nsets,
                  dg_err *e) {
    if (DG_REAL_F64 && cli_doc_take(d)) return DG_OK;  /* read by the float copy: the same command line */
    return dg_run_doc_read(d, path, text, len, sets, nsets, e);
}

int cli_load(dg_run *r, const char *path, const char *text, size_t len, const dg_run_set *sets, int nsets) {
    dg_err e = {0};
    dg_run_doc d;
    memset(r, 0, sizeof *r);
    if (cli_doc(&d, path, text, len, sets, nsets, &e) != DG_OK) return cli_config_fail(&e);
    if (d.precision == 1 && !DG_REAL_F64) {  /* train.precision: f64 runs in the double copy (main.c), game and all */
        cli_doc_hand(&d);
        return CLI_RERUN_F64;
    }
    if (d.precision != 1 && DG_REAL_F64) {  /* (never: the double copy runs what the float copy handed it) */
        dg_run_doc_free(&d);
        fprintf(stderr, "difgames: %s: train.precision: f32, but the command runs in f64\n", path ? path : "config");
        return EXIT_USAGE;
    }
    return dg_run_open(r, &d, &e) == DG_OK ? 0 : cli_config_fail(&e);
}

int cli_load_opts(dg_run *r, const char *path, const cli_opt *opts) {
    dg_run_set sets[CLI_MAX_OPTS];
    return cli_load(r, path, NULL, 0, sets, cli_sets(opts, sets));
}

int cli_config_not_output(const char *cmd, const char *config, const char *dir, const char *const *names) {
    char path[DG_PATH_MAX];
    for (int i = 0; names[i]; i++) {
        dg_err e = {0};
        if (dg_path_join(path, sizeof path, dir, names[i], &e) != DG_OK) {
            cli_error(cmd, "--out: %s", e.msg);
            return EXIT_USAGE;
        }
        if (dg_path_same(config, path)) {
            cli_error(cmd, "--config %s is the run's own %s in %s: it would be overwritten; choose another --out",
                      config, names[i], dir);
            return EXIT_USAGE;
        }
    }
    return 0;
}

volatile sig_atomic_t cli_stop;

static void on_stop(int sig) {
    (void)sig;
    cli_stop = 1;
}

void cli_catch_stop(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}
