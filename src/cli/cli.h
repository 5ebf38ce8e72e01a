/* Internal to the difgames command: subcommands and shared helpers. */
#ifndef DG_CLI_H
#define DG_CLI_H

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>

#include "difgames/run.h"
#include "io/json.h"

/* exit codes: one convention for every subcommand (README "Exit status"; dg_status_exit maps a
 * library status to one) */
#define EXIT_FAIL DG_EXIT_FAIL                /* the job ran and failed (e.g. gradcheck above tolerance) */
#define EXIT_USAGE DG_EXIT_USAGE              /* bad command line, config or input file                  */
#define EXIT_INTERRUPTED DG_EXIT_INTERRUPTED  /* stopped by SIGINT / SIGTERM (what was done is saved)   */
/* cli_load's answer in the float copy of the command to a config of train.precision: f64: main()
 * runs the whole command again in the double copy (every command loads its config first) */
#define CLI_RERUN_F64 199

#if defined(__GNUC__)
#define CLI_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))  /* checks the arguments */
#else
#define CLI_PRINTF(fmt, args)
#endif

int cmd_train(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_gradcheck(int argc, char **argv);
int cmd_games(int argc, char **argv);
int cmd_keys(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_hji(int argc, char **argv);
int cmd_pg(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_certify(int argc, char **argv);
int cmd_export(int argc, char **argv);
#ifdef DG_HAVE_VIEWER
int cmd_view(int argc, char **argv);      /* view.c: the viewer's commands, their options */
int cmd_play(int argc, char **argv);
int cmd_hji_view(int argc, char **argv);  /* difgames hji view */
#endif

/* Set by SIGINT/SIGTERM once cli_catch_stop ran (the only type a handler may write): train and
 * sweep stop after the current epoch and still write their files. */
extern volatile sig_atomic_t cli_stop;
void cli_catch_stop(void);

/* dg_run_load (sets: the overrides), or dg_run_parse of text (len bytes, named label) when text is
 * not NULL, the config read and parsed once (cli_doc); prints "difgames: <error>" and returns
 * EXIT_USAGE on failure, CLI_RERUN_F64 (r zeroed, the document handed on: cli_doc_hand) when the
 * config's train.precision is f64 and this is the float copy of the command, else 0. */
int  cli_load(dg_run *r, const char *path, const char *text, size_t len, const dg_run_set *sets, int nsets);
/* The config of path (or text, len bytes, named path) with sets set (dg_run_doc_read): in the double
 * copy the document the float copy handed on, if it did (then nothing is read again), else read now.
 * DG_OK, or the config's error in e. */
dg_status cli_doc(dg_run_doc *d, const char *path, const char *text, size_t len, const dg_run_set *sets, int nsets,
                  dg_err *e);
/* The float copy's config of train.precision: f64, handed to the double copy, which main() runs next
 * (CLI_RERUN_F64): cli_doc_hand takes *d (zeroing it), cli_doc_take gives it back (1; 0 when none was
 * handed). src/cli/handoff.c keeps it: compiled once, the same two functions serve both copies. */
void cli_doc_hand(dg_run_doc *d);
int  cli_doc_take(dg_run_doc *d);
/* Prints "difgames: <e's message>" (a config error: it names the file or key) and returns EXIT_USAGE. */
int  cli_config_fail(const dg_err *e);
/* Prints "difgames <cmd>: <e's message>"; returns rc, or when rc is 0 the exit code of e's status
 * (dg_status_exit). */
int  cli_fail(const char *cmd, const dg_err *e, int rc);

/* Prints "difgames <cmd>: <msg>" to stderr: the one error line of the command and of its viewer
 * (whose vw_error, src/cli/view.c, is this). cli_verror: the same with the arguments in ap. */
void cli_error(const char *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);
void cli_verror(const char *cmd, const char *fmt, va_list ap) CLI_PRINTF(2, 0);
/* The one progress bar: "\r[######......] text" on stderr when tty is set (stderr a terminal),
 * redrawn at most ten times a second, always when first is set or done (frac >= 1), which ends
 * the line. */
typedef struct cli_bar {
    int    tty;    /* draw at all: isatty(2) and not --quiet */
    double last;   /* dg_clock_s() of the last draw          */
} cli_bar;
void cli_bar_draw(cli_bar *b, double frac, int first, const char *fmt, ...) CLI_PRINTF(4, 5);
/* Appends printf-style text to the NUL-terminated string in buf (cap bytes),
 * cut at the end of buf; nothing when buf is full already. */
void cli_catf(char *buf, size_t cap, const char *fmt, ...) CLI_PRINTF(3, 4);
/* 1 when need bytes fit in this process's memory (dg_mem_check); else prints
 * "<what> needs about X GiB, more than ...; lower <lower>" and returns 0. */
int  cli_mem_ok(const char *cmd, double need, const char *what, const char *lower);

/* Prints j's object (src/io/json.h) as one line on stdout and frees it; returns 0, or EXIT_FAIL after
 * an error line naming cmd when out of memory (nothing printed). */
int  cli_json_print(dg_json *j, const char *cmd);

/* ------------------------------------------------------------------ options
 *
 * Each option of a subcommand is one line of its table, declared once (the habit of git's
 * parse-options.h): its destination (a typed pointer), type, bounds, default, whether it is
 * required, and its line of --help. cli_parse reads argv against the table, converts and checks
 * every value (one error line naming the command and the option, EXIT_USAGE), fills every
 * destination (the value given, else the default, else zero: NULL, 0, an empty list), refuses a
 * required option left out, and an output file that is also an input or another output; --help is
 * made from the same table, so the two cannot differ.
 *
 *     const char *config, *out;
 *     int size;
 *     cli_opt opts[] = {
 *         CLI_CONFIG(&config),                                  // --config FILE, required
 *         CLI_OUT("--out", &out, "FILE", "the GIF", .otherwise = "runs/<config name>/replay.gif"),
 *         CLI_INT("--size", &size, "N", 64, 2048, "width and height in pixels", .def = "320"),
 *         CLI_KEY("--seed", "seed", .otherwise = "the config's"),  // sets a config key (cli_sets)
 *         CLI_END,
 *     };
 *     int rc;
 *     if (!cli_parse(&rc, "replay", argc, argv, opts, HELP)) return rc;  // --help: 0; an error: 2
 *
 * The macros' arguments after the fixed ones are the doc, then any of the fields below by name
 * (.def, .otherwise, .req, .unless, .open, ...). */
typedef enum cli_type {
    CLI_T_FLAG,    /* no value: *i = 1 when given                                                   */
    CLI_T_STR,     /* text: *s (.repeat: up to .max of them into s[0 .. *i))                        */
    CLI_T_IN,      /* an input file's path: *s                                                      */
    CLI_T_OUT,     /* an output file's path: *s, refused when too long to write, or the same file as an
                    * input or another output of the table (cli_check_outputs)                      */
    CLI_T_INT,     /* an integer in [lo, hi]: *i                                                    */
    CLI_T_DOUBLE,  /* a finite number between lo and hi, an end refused as .open says: *d          */
    CLI_T_LIST,    /* numbers in [lo, hi] separated by commas (whole ones when .integer), at most .max
                    * of them (0: any number): *list                                               */
    CLI_T_KEY,     /* the value of config key .key, checked by the key itself (dg_key_check; --help
                    * shows the key's doc); cli_sets hands it to dg_run_load                        */
} cli_type;

/* A CLI_T_LIST value: v is malloc'd by cli_parse (the command frees it), NULL when not given. */
typedef struct cli_list {
    double     *v;
    int         n;      /* numbers in v                 */
    const char *text;   /* the option's text, as given  */
} cli_list;

#define CLI_OPEN_LO 1  /* CLI_T_DOUBLE: lo itself is refused */
#define CLI_OPEN_HI 2  /* CLI_T_DOUBLE: hi itself is refused */

typedef struct cli_opt {
    const char  *name;      /* "--size"                                                            */
    cli_type     type;
    const char **s;         /* STR, IN, OUT                                                        */
    int         *i;         /* FLAG, INT; STR with .repeat: the count                              */
    double      *d;         /* DOUBLE                                                              */
    cli_list    *list;      /* LIST                                                                */
    const char  *key;       /* KEY: the config key ("train.batch")                                 */
    const char  *metavar;   /* the value's name in --help ("FILE", "N"); a flag or a key: none     */
    const char  *doc;       /* its line of --help (wrapped to 80 columns)                          */
    double       lo, hi;    /* INT, DOUBLE, LIST: the bounds (shown by --help)                     */
    int          open;      /* DOUBLE: CLI_OPEN_LO, CLI_OPEN_HI                                    */
    int          integer;   /* LIST: whole numbers only                                            */
    int          max;       /* LIST: most numbers (0: any); STR with .repeat: the room of s        */
    int          repeat;    /* STR: may be given up to .max times                                  */
    int          req;       /* must be given (unless the option .unless is)                        */
    const char  *unless;    /* with .req: the option that stands in for this one ("--run")         */
    const char  *def;       /* the default value, converted like a value given, shown by --help    */
    const char  *otherwise; /* what the command does without the option, when that is no value
                             * ("the config's"): shown by --help as its default (after .def when both
                             * are set: "default 0.1, or the game's own")                          */
    const char  *given;     /* set by cli_parse: the text given (a flag: ""), or NULL              */
} cli_opt;

#define CLI_FLAG(n, p, ...)         {.name = (n), .type = CLI_T_FLAG, .i = (p), .doc = __VA_ARGS__}
#define CLI_STR(n, p, m, ...)       {.name = (n), .type = CLI_T_STR, .s = (p), .metavar = (m), .doc = __VA_ARGS__}
#define CLI_IN(n, p, m, ...)        {.name = (n), .type = CLI_T_IN, .s = (p), .metavar = (m), .doc = __VA_ARGS__}
#define CLI_OUT(n, p, m, ...)       {.name = (n), .type = CLI_T_OUT, .s = (p), .metavar = (m), .doc = __VA_ARGS__}
#define CLI_INT(n, p, m, l, h, ...) {.name = (n), .type = CLI_T_INT, .i = (p), .metavar = (m), .lo = (l), .hi = (h), \
                                     .doc = __VA_ARGS__}
#define CLI_DOUBLE(n, p, m, l, h, ...) {.name = (n), .type = CLI_T_DOUBLE, .d = (p), .metavar = (m), .lo = (l), \
                                        .hi = (h), .doc = __VA_ARGS__}
#define CLI_LIST(n, p, m, l, h, ...) {.name = (n), .type = CLI_T_LIST, .list = (p), .metavar = (m), .lo = (l), \
                                      .hi = (h), .doc = __VA_ARGS__}
/* a repeatable text option: each value into arr[*count], at most max of them */
#define CLI_STRS(n, arr, count, mx, m, ...) {.name = (n), .type = CLI_T_STR, .s = (arr), .i = (count), .max = (mx), \
                                             .repeat = 1, .metavar = (m), .doc = __VA_ARGS__}
/* an option that sets config key k of every training config (dg_run_key): its value is checked by
 * the key's own conversion and range ("difgames train: --batch (train.batch): 0 is out of range,
 * expected [1, 1048576]"), --help shows the key's doc; cli_sets gives the keys set to dg_run_load */
#define CLI_KEY(n, k, ...)          {.name = (n), .type = CLI_T_KEY, .key = (k), __VA_ARGS__}
#define CLI_END                     {.name = NULL}

/* The options several subcommands share, declared once. */
#define CLI_CONFIG(p, ...) CLI_IN("--config", p, "FILE", "the game's YAML config (configs/*.yaml)", .req = 1, __VA_ARGS__)
#define CLI_CKPT(p, ...)   CLI_IN("--ckpt", p, "FILE", "policy parameters (.safetensors)", .req = 1, __VA_ARGS__)
/* --plugin FILE.so: the config key plugin (a game of your own, from a shared object) */
#define CLI_PLUGIN         CLI_KEY("--plugin", "plugin")
#define CLI_QUIET(p, doc)  CLI_FLAG("--quiet", p, doc)
/* --at of hji plot and hji view: the slice's other axes (dg_hji_grid_slice_at) */
#define CLI_AT(p) CLI_STR("--at", p, "x2=V,...", "3-D and more: the values of the axes after the first two (x2=V or " \
                          "by the axis's name, psi=V; or V,W in axis order)", .otherwise = "their middle")
#define CLI_MAX_OPTS 48    /* options of one subcommand */

/* Parses argv[1..] against opts (ended by CLI_END) with getopt_long: "--name value" or
 * "--name=value", names spelled out in full. Returns 1 when the command is to run, every
 * destination set; else 0 with *rc the exit status to end with: 0 after printing --help to stdout
 * (the usage and description text help, then the options section made from opts), EXIT_USAGE after
 * one error line: an unknown option, a stray argument, a missing or empty value (a value starting
 * with "--", or -h, is taken for the next option: missing), an option given twice (a repeatable
 * one: more than .max times), a value its type or bounds refuse, a required option left out, an
 * output that is an input or another output. */
int  cli_parse(int *rc, const char *cmd, int argc, char **argv, cli_opt *opts, const char *help);
/* cli_parse for a command that also takes up to max_args arguments (words that are no option,
 * such as keys' GAME): they go to args[0 .. *nargs), in order; one more is an error. */
int  cli_parse_args(int *rc, const char *cmd, int argc, char **argv, cli_opt *opts, const char *help,
                    const char **args, int max_args, int *nargs);
/* Prints help, then the options section of opts (the part of --help cli_parse adds), to fp. */
void cli_help(FILE *fp, const char *help, const cli_opt *opts);
/* The text given to option name of opts (a flag: ""; NULL: not given, or no such option). */
const char *cli_given(const cli_opt *opts, const char *name);
/* The config keys set by opts' CLI_KEY options that were given, in table order, into sets (room for
 * CLI_MAX_OPTS): what dg_run_load sets over the config. Returns their count. */
int  cli_sets(const cli_opt *opts, dg_run_set *sets);
/* cli_load of the config at path with the keys of opts' CLI_KEY options set (cli_sets). */
int  cli_load_opts(dg_run *r, const char *path, const cli_opt *opts);

/* ------------------------------------------------------------- subcommands
 *
 * A command of subcommands (difgames itself; difgames hji) is a table: each one's name, what it
 * runs, its double-precision copy (main: train.precision: f64) and its line of the usage. */
typedef struct cli_cmd {
    const char *name;
    int (*fn)(int argc, char **argv);     /* runs argv[0] == name and its options               */
    int (*fn64)(int argc, char **argv);   /* the command's double copy (main's table), or NULL   */
    const char *doc;                      /* its line of the usage                               */
} cli_cmd;
/* The entry of cmds (n of them) named argv[1]; NULL with *rc the exit status to end with after the
 * usage (head, the commands' lines from the table, then tail) was printed (to stdout for -h,
 * --help and help: *rc 0; to stderr without a word: *rc EXIT_USAGE), or after an error naming the
 * unknown word and the table's names (EXIT_USAGE). cmd: "" for difgames itself, "hji". */
const cli_cmd *cli_command(int *rc, const char *cmd, const cli_cmd *cmds, int n, int argc, char **argv,
                           const char *head, const char *tail);

/* A file named by an option. */
typedef struct cli_path {
    const char *flag, *path;  /* path NULL: not given, skipped */
} cli_path;
/* Refuses an output whose name is too long to write (dg_file_name_ok), or
 * that is one of the inputs or another output (the same file, or the same
 * path once normalised): one error line and EXIT_USAGE; else 0. */
int  cli_check_outputs(const char *cmd, const cli_path *outs, int nout, const cli_path *ins, int nin);

/* Refuses a config that is one of the files (names, NULL-terminated) a run writes into dir: "--config
 * FILE is the run's own NAME in DIR: ...; choose another --out" (or "--out: ..." for a name too
 * long) and EXIT_USAGE; else 0. */
int  cli_config_not_output(const char *cmd, const char *config, const char *dir, const char *const *names);

/* Before a long job: dg_file_parent_make for the output path of flag; prints the error naming flag
 * and returns EXIT_USAGE on failure, else 0. */
int  cli_make_parent(const char *cmd, const char *flag, const char *path);
#endif
