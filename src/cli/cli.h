/* Internal to the difgames command: subcommands and shared helpers. */
#ifndef DG_CLI_H
#define DG_CLI_H

#include <cjson/cJSON.h>
#include <signal.h>

#include "difgames/run.h"

/* exit codes: one convention for every subcommand (README "Exit status") */
#define EXIT_FAIL 1       /* the job ran and failed (e.g. gradcheck above tolerance) */
#define EXIT_USAGE 2      /* bad command line, config or input file                  */
#define EXIT_INTERRUPTED 130  /* stopped by SIGINT / SIGTERM (what was done is saved)   */
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

/* Set by SIGINT/SIGTERM once cli_catch_stop ran (the only type a handler may write): train and
 * sweep stop after the current epoch and still write their files. */
extern volatile sig_atomic_t cli_stop;
void cli_catch_stop(void);
int cmd_certify(int argc, char **argv);

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
 * handed). main.c keeps it: compiled once, the same two functions serve both copies of the command. */
void cli_doc_hand(dg_run_doc *d);
int  cli_doc_take(dg_run_doc *d);
/* Prints "difgames: <e's message>" (a config error: it names the file or key) and returns EXIT_USAGE. */
int  cli_config_fail(const dg_err *e);
/* Prints "difgames <cmd>: <e's message>"; returns rc, or when rc is 0 the exit code of e's status
 * (cli_exit_for). */
int  cli_fail(const char *cmd, const dg_err *e, int rc);

/* Prints "difgames <cmd>: <msg>" to stderr. */
void cli_error(const char *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);
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
/* cli_int / cli_double parse the value of option flag with the library's one number parser
 * (dg_parse_long / dg_parse_double: the whole text, no overflow), within [lo, hi] (cli_double:
 * without lo or hi as open says), and print "difgames <cmd>: <flag>: expected an integer from lo to
 * hi, got '<text>'" (a number in [lo, hi]) and return 0 on failure. */
int  cli_int(const char *cmd, const char *flag, const char *text, int lo, int hi, int *out);
#define CLI_OPEN_LO 1  /* cli_double: lo itself is refused */
#define CLI_OPEN_HI 2  /* cli_double: hi itself is refused */
int  cli_double(const char *cmd, const char *flag, const char *text, double lo, double hi, int open, double *out);
/* The exit code for a library status: EXIT_USAGE for what the user fixes in
 * the command, config or files (a bad value, a file that cannot be read,
 * parsed or written), EXIT_INTERRUPTED, else EXIT_FAIL (out of memory,
 * non-finite numbers, ...). */
int  cli_exit_for(dg_status s);
/* 1 when need bytes fit in this process's memory (dg_mem_check); else prints
 * "<what> needs about X GiB, more than ...; lower <lower>" and returns 0. */
int  cli_mem_ok(const char *cmd, double need, const char *what, const char *lower);

/* The one JSON line of a command: an object built with cJSON, printed unformatted on one line of
 * stdout. Numbers keep the command's own format (cli_json_number); a cJSON allocation that fails
 * anywhere makes cli_json_print refuse the line rather than print part of it.
 *
 *     cli_json j = {cJSON_CreateObject(), 0};
 *     cli_json_add(&j, j.root, "game", cJSON_CreateString(name));
 *     cli_json_add(&j, j.root, "loss", cli_json_number("%.9g", loss));
 *     return cli_json_print(&j, "train");            // {"game":"reach","loss":0.25}
 */
typedef struct cli_json {
    cJSON *root;   /* the object printed                                   */
    int    oom;    /* set when an allocation failed: the line is not printed */
} cli_json;
/* fmt applied to v (one double conversion: "%.9g", "%.3f", "%.0f" for an integer) as the number's
 * text (dg_format_double: a zero never prints as "-0"), null when v is not finite; NULL when out of
 * memory. */
cJSON *cli_json_number(const char *fmt, double v);
/* Adds item to obj under key (to the array obj when key is NULL) and returns it; a NULL obj or item
 * (an allocation that failed) sets j->oom and frees item. */
cJSON *cli_json_add(cli_json *j, cJSON *obj, const char *key, cJSON *item);
/* Adds "game": name and "source": source (dg_env_source's "builtin", "model", ...; NULL: none): a model
 * file may call its game as a built-in is called, and the pair tells them apart. */
void   cli_json_game(cli_json *j, const char *name, const char *source);
/* Prints j's object as one line on stdout and frees it; returns 0, or EXIT_FAIL after an error line
 * naming cmd when out of memory (nothing printed). */
int    cli_json_print(cli_json *j, const char *cmd);

/* One option of a subcommand: with a value (value != NULL) or a flag. The table is both what
 * cli_parse accepts and the options section of --help, so the two cannot differ. An option with a
 * value and no metavar sets a config key (CLI_KEY): value points into a dg_run_set naming the key. */
typedef struct cli_opt {
    const char  *name;     /* "--config"                                        */
    const char **value;    /* where its value goes; NULL: a flag                */
    int         *flag;     /* a flag: set to 1                                  */
    const char  *metavar;  /* the value's name in --help ("FILE", "N"); a flag or CLI_KEY: NULL */
    const char  *doc;      /* one line of --help (wrapped to the terminal's 80 columns) */
    const char  *def;      /* the default shown by --help ("30", "the config's seed");
                            * "required" for an option that must be given; NULL: none */
} cli_opt;
/* An option that sets key k of every training config (dg_run_key): cli_parse checks its value with
 * the key's own conversion and range check ("difgames train: --batch (train.batch): 0 is out of
 * range, expected [1, 1048576]"), --help shows the key's doc, cli_sets hands it to dg_run_load.
 * CLI_KEY_DEF adds the command's default when the option is not given (def as in cli_opt). The
 * value lives in the table (a compound literal); cli_given reads it. */
#define CLI_KEY_DEF(opt, k, d) {opt, &((dg_run_set){k, NULL}).value, NULL, NULL, NULL, d}
#define CLI_KEY(opt, k) CLI_KEY_DEF(opt, k, NULL)
/* The options several subcommands share, declared once. */
#define CLI_CONFIG(v) {"--config", v, NULL, "FILE", "the game's YAML config (configs/*.yaml)", "required"}
/* --plugin FILE.so: the config key plugin (a game of your own, from a shared object) */
#define CLI_PLUGIN CLI_KEY("--plugin", "plugin")
#define CLI_CKPT(v) {"--ckpt", v, NULL, "FILE", "policy parameters (.safetensors)", "required"}
#define CLI_QUIET(f, doc) {"--quiet", NULL, f, NULL, doc, NULL}
#define CLI_END {NULL, NULL, NULL, NULL, NULL, NULL}
#define CLI_HELP (-1)      /* cli_parse printed --help: exit 0  */
/* Parses argv[1..] against opts (ended by {NULL}; {NULL} alone: no options) with getopt_long: "--name value" or
 * "--name=value", names spelled out in full. Returns 0; CLI_HELP after printing help (the
 * usage and description text, then the options section made from opts) to stdout; or
 * EXIT_USAGE after one error line: an unknown option, a stray argument, a missing or empty
 * value (a value starting with "--", or -h, is taken for the next option: missing), an
 * option given twice. */
int  cli_parse(const char *cmd, int argc, char **argv, const cli_opt *opts, const char *help);
/* cli_parse for a command that also takes up to max_args arguments (words that are no option,
 * such as keys' GAME): they go to args[0 .. *nargs), in order; one more is an error. */
int  cli_parse_args(const char *cmd, int argc, char **argv, const cli_opt *opts, const char *help,
                    const char **args, int max_args, int *nargs);
/* Prints help, then the options section of opts (the part of --help cli_parse adds), to fp. */
void cli_help(FILE *fp, const char *help, const cli_opt *opts);
/* The value given to option name of opts (NULL: not given, or no such option). */
const char *cli_given(const cli_opt *opts, const char *name);
/* The config keys set by opts' CLI_KEY options that were given, in table order, into sets (room for
 * CLI_MAX_OPTS): what dg_run_load sets over the config. Returns their count. */
int  cli_sets(const cli_opt *opts, dg_run_set *sets);
#define CLI_MAX_OPTS 48  /* options of one subcommand */
/* cli_load of the config at path with the keys of opts' CLI_KEY options set (cli_sets). */
int  cli_load_opts(dg_run *r, const char *path, const cli_opt *opts);
/* dg_parse_list of flag's value text; the count, or -1 after one error line naming flag. */
int  cli_list(const char *cmd, const char *flag, const char *text, double lo, double hi, int integer,
              double **out);
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
