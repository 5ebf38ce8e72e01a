/* The option tables of the subcommands (cli.h, "options"): parsing, checking, defaults, --help; and
 * the tables of subcommands (difgames, difgames hji). */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

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

/* The key of a CLI_KEY option; NULL for another option (or a key that does not exist). */
static const dg_key *opt_key(const cli_opt *o) { return o->type == CLI_T_KEY ? dg_run_key(o->key) : NULL; }

/* The option of opts named name, or NULL. */
static const cli_opt *opt_find(const cli_opt *opts, const char *name) {
    for (const cli_opt *o = opts; name && o->name; o++)
        if (!strcmp(o->name, name)) return o;
    return NULL;
}

/* The bounds of a number option as --help shows them ("1 to 4096", "in (0, 1)", "> 0"), into buf;
 * "" when it has none. */
static void help_range(const cli_opt *o, char *buf, size_t n) {
    buf[0] = '\0';
    if (o->type == CLI_T_INT) {
        snprintf(buf, n, "%.0f to %.0f", o->lo, o->hi);
    } else if (o->type == CLI_T_LIST && o->integer) {
        snprintf(buf, n, "each %.0f to %.0f", o->lo, o->hi);
    } else if (o->type == CLI_T_DOUBLE || (o->type == CLI_T_LIST && isfinite(o->lo) && isfinite(o->hi))) {
        const int olo = (o->open & CLI_OPEN_LO) != 0, ohi = (o->open & CLI_OPEN_HI) != 0;
        const char *each = o->type == CLI_T_LIST ? "each " : "";
        if (isfinite(o->lo) && isfinite(o->hi))
            snprintf(buf, n, "%sin %c%g, %g%c", each, olo ? '(' : '[', o->lo, o->hi, ohi ? ')' : ']');
        else if (isfinite(o->lo)) snprintf(buf, n, "%s%s %g", each, olo ? ">" : ">=", o->lo);
        else if (isfinite(o->hi)) snprintf(buf, n, "%s%s %g", each, ohi ? "<" : "<=", o->hi);
    }
    if (o->type == CLI_T_LIST && o->max > 0) cli_catf(buf, n, "%sat most %d", buf[0] ? ", " : "", o->max);
}

/* One option's line of --help: "  --name META" and its doc, with its range and default. */
static void help_option(FILE *fp, const cli_opt *o) {
    const dg_key *k = opt_key(o);
    char meta[64] = "", kdoc[256], range[64], tail[320] = "", doc[640];
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
    const int col = fprintf(fp, "  %s%s%s", o->name, metavar ? " " : "", metavar ? metavar : "");
    if (col + 2 > HELP_NAME_COL) fprintf(fp, "\n%*s", HELP_NAME_COL, "");
    else fprintf(fp, "%*s", HELP_NAME_COL - col, "");
    /* "(range; required)", "(range; default X)": what the table says of the value */
    help_range(o, range, sizeof range);
    if (o->req) snprintf(tail, sizeof tail, "required%s%s", o->unless ? ", or " : "", o->unless ? o->unless : "");
    else if (o->def || o->otherwise)  /* both: "default 0.1, or the game's own" */
        snprintf(tail, sizeof tail, "default %s%s%s", o->def ? o->def : o->otherwise, o->def && o->otherwise ? ", " : "",
                 o->def && o->otherwise ? o->otherwise : "");
    snprintf(doc, sizeof doc, "%s%s%s%s%s%s", k ? kdoc : o->doc ? o->doc : "", range[0] || tail[0] ? " (" : "", range,
             range[0] && tail[0] ? "; " : "", tail, range[0] || tail[0] ? ")" : "");
    help_words(fp, doc, HELP_NAME_COL, HELP_NAME_COL);
    fputc('\n', fp);
}

void cli_help(FILE *fp, const char *help, const cli_opt *opts) {
    fputs(help, fp);
    for (const cli_opt *o = opts; o->name; o++) help_option(fp, o);
    fprintf(fp, "  %-*s%s\n", HELP_NAME_COL - 2, "-h, --help", "print this help");
}

#define OPT_VAL 256      /* getopt_long returns OPT_VAL + i for opts[i]: no character, nor 1 (an argument) */
enum { NOT_IN_FULL = -1, HELP_DONE = -2 };  /* opt_take: an abbreviation; opts_scan: --help printed */

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

/* text converted into o's destination as its type says (a key: checked by the key); 0, or the exit
 * status after one error line naming cmd and the option. */
static int opt_convert(const char *cmd, const cli_opt *o, const char *text) {
    long l;
    double v;
    dg_err e = {0};
    switch (o->type) {
    case CLI_T_FLAG: *o->i = 1; return 0;
    case CLI_T_STR: case CLI_T_IN: case CLI_T_OUT:
        if (o->repeat) o->s[(*o->i)++] = text;
        else *o->s = text;
        return 0;
    case CLI_T_INT:
        if (dg_parse_long(text, (size_t)-1, 10, &l) && l >= o->lo && l <= o->hi) {
            *o->i = (int)l;
            return 0;
        }
        cli_error(cmd, "%s: expected an integer from %.0f to %.0f, got %s", o->name, o->lo, o->hi, DG_ECHO(text));
        return EXIT_USAGE;
    case CLI_T_DOUBLE:
        if (dg_parse_double(text, (size_t)-1, &v) && v >= o->lo && v <= o->hi && !(v == o->lo && (o->open & CLI_OPEN_LO)) &&
            !(v == o->hi && (o->open & CLI_OPEN_HI))) {
            *o->d = v;
            return 0;
        }
        cli_error(cmd, "%s: expected a number in %c%g, %g%c, got %s", o->name,
                  (o->open & CLI_OPEN_LO) || isinf(o->lo) ? '(' : '[', o->lo, o->hi,
                  (o->open & CLI_OPEN_HI) || isinf(o->hi) ? ')' : ']', DG_ECHO(text));
        return EXIT_USAGE;
    case CLI_T_LIST: {
        double *vals = NULL;
        const int n = dg_parse_list(text, o->lo, o->hi, o->integer, &vals, &e);
        if (n < 0) cli_error(cmd, "%s: %s", o->name, e.msg);
        else if (o->max > 0 && n > o->max) cli_error(cmd, "%s: at most %d numbers; got %s", o->name, o->max, DG_ECHO(text));
        if (n < 0 || (o->max > 0 && n > o->max)) {
            free(vals);
            return EXIT_USAGE;
        }
        *o->list = (cli_list){vals, n, text};
        return 0;
    }
    case CLI_T_KEY:
        if (dg_key_check(opt_key(o), text, &e) == DG_OK) return 0;
        cli_error(cmd, "%s (%s): %s", o->name, o->key, e.msg);
        return dg_status_exit(e.status);
    }
    return EXIT_FAIL;
}

/* Every destination of opts at its default (a table this program declares: a default its own type
 * refuses, or a key that does not exist, is a bug, EXIT_FAIL); 0. */
static int opts_reset(const char *cmd, cli_opt *opts) {
    int n = 0;
    for (cli_opt *o = opts; o->name; o++, n++) {
        o->given = NULL;
        if (n == CLI_MAX_OPTS) {
            cli_error(cmd, "more than %d options in one table", CLI_MAX_OPTS);
            return EXIT_FAIL;
        }
        if (o->type == CLI_T_KEY && !opt_key(o)) {
            cli_error(cmd, "%s: no config key '%s'", o->name, o->key);
            return EXIT_FAIL;
        }
        if (o->repeat) *o->i = 0;
        else if (o->type == CLI_T_FLAG || o->type == CLI_T_INT) *o->i = 0;
        else if (o->type == CLI_T_DOUBLE) *o->d = 0;
        else if (o->type == CLI_T_LIST) *o->list = (cli_list){NULL, 0, NULL};
        else if (o->type != CLI_T_KEY) *o->s = NULL;
        if (o->def && (o->type == CLI_T_FLAG || o->type == CLI_T_LIST || o->repeat || opt_convert(cmd, o, o->def))) {
            cli_error(cmd, "%s: the table's default '%s' is no value of the option", o->name, o->def);
            return EXIT_FAIL;
        }
    }
    return 0;
}

/* The lists cli_parse allocated, freed (a parse that failed after them). */
static void opts_free(cli_opt *opts) {
    for (cli_opt *o = opts; o->name; o++)
        if (o->type == CLI_T_LIST) {
            free(o->list->v);
            *o->list = (cli_list){NULL, 0, NULL};
        }
}

/* The required options left out (none standing in for them): one error line naming each, EXIT_USAGE;
 * else 0. */
static int opts_missing(const char *cmd, const cli_opt *opts) {
    const cli_opt *miss[CLI_MAX_OPTS];
    int n = 0;
    for (const cli_opt *o = opts; o->name; o++) {
        const cli_opt *alt = opt_find(opts, o->unless);
        if (o->req && !o->given && !(alt && alt->given)) miss[n++] = o;
    }
    if (!n) return 0;
    /* "--config FILE and --ckpt FILE (or --run DIR)": an option standing in for all of them, once */
    const cli_opt *alt = opt_find(opts, miss[0]->unless);
    for (int k = 1; k < n && alt; k++)
        if (opt_find(opts, miss[k]->unless) != alt) alt = NULL;
    char msg[512] = "";
    for (int k = 0; k < n; k++) {
        const cli_opt *o = miss[k], *its = opt_find(opts, o->unless);
        cli_catf(msg, sizeof msg, "%s%s%s%s", k == 0 ? "" : k == n - 1 ? " and " : ", ", o->name,
                 o->metavar ? " " : "", o->metavar ? o->metavar : "");
        if (its && (!alt || k == n - 1))
            cli_catf(msg, sizeof msg, " (or %s%s%s)", its->name, its->metavar ? " " : "", its->metavar ? its->metavar : "");
    }
    cli_error(cmd, "%s %s required (see --help)", msg, n > 1 ? "are" : "is");
    return EXIT_USAGE;
}

/* The output files of opts against its input files and each other (cli_check_outputs). */
static int opts_outputs(const char *cmd, const cli_opt *opts) {
    cli_path ins[CLI_MAX_OPTS], outs[CLI_MAX_OPTS];
    int nin = 0, nout = 0;
    for (const cli_opt *o = opts; o->name; o++) {
        if (o->type == CLI_T_IN) ins[nin++] = (cli_path){o->name, *o->s};
        if (o->type == CLI_T_OUT) outs[nout++] = (cli_path){o->name, *o->s};
    }
    return cli_check_outputs(cmd, outs, nout, ins, nin);
}

/* The value (or flag) of option o, the word a of argv (optarg its value): recorded, or the exit
 * status after one error line. */
static int opt_take(const char *cmd, cli_opt *o, const char *a) {
    /* the name in full: getopt_long would also take a unique abbreviation (--conf) */
    const size_t nl = strlen(o->name);
    const int inline_value = a[nl] == '=';
    if (strncmp(a, o->name, nl) || (a[nl] && !inline_value)) return NOT_IN_FULL;
    if (o->repeat ? *o->i >= o->max : o->given != NULL) {
        if (o->repeat) cli_error(cmd, "option %s given more than %d times", o->name, o->max);
        else cli_error(cmd, "option %s given twice", o->name);
        return EXIT_USAGE;
    }
    if (o->type == CLI_T_FLAG) {
        o->given = "";
        return 0;
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
    o->given = optarg;
    /* a repeated value is kept now (the next one replaces given) */
    return o->repeat ? opt_convert(cmd, o, optarg) : 0;
}

/* getopt_long's answer c other than an option of the table, for the word a: HELP_DONE after --help
 * (printed), else the exit status after one error line. */
static int opt_other(const char *cmd, int c, const char *a, const cli_opt *opts, const char *help) {
    if ((c == 'h' && !strcmp(a, "-h")) || !strcmp(a, "--help")) {
        cli_help(stdout, help, opts);
        return HELP_DONE;
    }
    if (c == ':' && !strncmp(a, "--", 2)) {  /* "--out" at the end */
        cli_error(cmd, "%s needs a value", a);
        return EXIT_USAGE;
    }
    const size_t nl = strcspn(a, "=");
    for (const cli_opt *o = opts; o->name && a[nl]; o++)
        if (o->type == CLI_T_FLAG && strlen(o->name) == nl && !strncmp(a, o->name, nl)) {  /* "--quiet=1" */
            cli_error(cmd, "option %s takes no value", o->name);
            return EXIT_USAGE;
        }
    return unknown_option(cmd, a, nl, opts);
}

/* argv's words against opts (getopt_long), each option's text into its given; arguments into args.
 * 0, HELP_DONE after --help, or the exit status after one error line. */
static int opts_scan(const char *cmd, int argc, char **argv, cli_opt *opts, const char *help, const char **args,
                     int max_args, int *nargs) {
    struct option lo[CLI_MAX_OPTS + 1];
    int n = 0;
    for (const cli_opt *o = opts; o->name; o++, n++)
        lo[n] = (struct option){o->name + 2, o->type == CLI_T_FLAG ? no_argument : required_argument, NULL, OPT_VAL + n};
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
        int rc;
        if (c == 1) {  /* an argument: kept while there is room */
            if (a[0] == '-' || !nargs || *nargs >= max_args) return stray_word(cmd, a, opts);
            args[(*nargs)++] = a;
        } else if (c < OPT_VAL) {
            return opt_other(cmd, c, a, opts, help);
        } else if ((rc = opt_take(cmd, &opts[c - OPT_VAL], a)) != 0) {
            return rc == NOT_IN_FULL ? unknown_option(cmd, a, strcspn(a, "="), opts) : rc;
        }
    }
    /* the first word that is not an option; "--" ends getopt_long's options but is none of ours */
    const int stray = optind > 1 && !strcmp(argv[optind - 1], "--") ? optind - 1 : optind;
    return stray < argc ? stray_word(cmd, argv[stray], opts) : 0;
}

int cli_parse_args(int *rc, const char *cmd, int argc, char **argv, cli_opt *opts, const char *help,
                   const char **args, int max_args, int *nargs) {
    if (nargs) *nargs = 0;
    if ((*rc = opts_reset(cmd, opts)) != 0) return 0;
    *rc = opts_scan(cmd, argc, argv, opts, help, args, max_args, nargs);
    /* each value given, in the table's order; then what is missing; then the files */
    for (const cli_opt *o = opts; !*rc && o->name; o++)
        if (o->given && !o->repeat) *rc = opt_convert(cmd, o, o->given);
    if (!*rc) *rc = opts_missing(cmd, opts);
    if (!*rc) *rc = opts_outputs(cmd, opts);
    if (!*rc) return 1;
    opts_free(opts);
    if (*rc == HELP_DONE) *rc = 0;
    return 0;
}

int cli_parse(int *rc, const char *cmd, int argc, char **argv, cli_opt *opts, const char *help) {
    return cli_parse_args(rc, cmd, argc, argv, opts, help, NULL, 0, NULL);
}

const char *cli_given(const cli_opt *opts, const char *name) {
    const cli_opt *o = opt_find(opts, name);
    return o ? o->given : NULL;
}

int cli_sets(const cli_opt *opts, dg_run_set *sets) {
    int n = 0;
    for (const cli_opt *o = opts; o->name && n < CLI_MAX_OPTS; o++)
        if (o->type == CLI_T_KEY && o->given) sets[n++] = (dg_run_set){o->key, o->given};
    return n;
}

int cli_load_opts(dg_run *r, const char *path, const cli_opt *opts) {
    dg_run_set sets[CLI_MAX_OPTS];
    return cli_load(r, path, NULL, 0, sets, cli_sets(opts, sets));
}

const cli_cmd *cli_command(int *rc, const char *cmd, const cli_cmd *cmds, int n, int argc, char **argv,
                           const char *head, const char *tail) {
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        FILE *fp = argc < 2 ? stderr : stdout;
        int w = 0;  /* the names in one column, two blanks past the longest */
        for (int i = 0; i < n; i++) w = (int)strlen(cmds[i].name) > w ? (int)strlen(cmds[i].name) : w;
        fputs(head, fp);
        for (int i = 0; i < n; i++) fprintf(fp, "  %-*s%s\n", w + 2, cmds[i].name, cmds[i].doc);
        fputs(tail, fp);
        *rc = argc < 2 ? EXIT_USAGE : 0;
        return NULL;
    }
    for (int i = 0; i < n; i++)
        if (!strcmp(argv[1], cmds[i].name)) return &cmds[i];
    char names[256] = "";  /* the table's commands: what this build has */
    for (int i = 0; i < n; i++) cli_catf(names, sizeof names, "%s%s", i ? ", " : "", cmds[i].name);
    if (cmd[0])
        cli_error(cmd, "unknown subcommand %s (subcommands: %s; see difgames %s --help)", DG_ECHO(argv[1]), names, cmd);
    else
        fprintf(stderr, "difgames: unknown command %s (commands: %s; see difgames --help)\n", DG_ECHO(argv[1]), names);
    *rc = EXIT_USAGE;
    return NULL;
}
