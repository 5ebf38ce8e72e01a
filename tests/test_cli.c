/* The command's option tables (src/cli/options.c): each option's type, bounds, default and
 * "required" declared once, in one line; the parser converts, checks and fills every destination,
 * --help is made from the same lines; a table of subcommands; the JSON line (src/io/json.h).
 * Built with src/cli/options.c and src/cli/common.c (tests/CMakeLists.txt). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli/cli.h"

/* fn(user) with fd (1: stdout, 2: stderr) written into out (n bytes, NUL-terminated); returns fn's. */
static int capture(int fd, char *out, size_t n, int (*fn)(void *), void *user) {
    fflush(stdout);
    fflush(stderr);
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    const int saved = dup(fd);
    dup2(fileno(tmp), fd);
    const int rc = fn(user);
    fflush(stdout);
    fflush(stderr);
    dup2(saved, fd);
    close(saved);
    rewind(tmp);
    const size_t got = fread(out, 1, n - 1, tmp);
    out[got] = '\0';
    fclose(tmp);
    return rc;
}

/* A table of every type, and the values it parsed. */
typedef struct args {
    const char *name, *in, *out, *set[3];
    int count, size, flag, nset, rc;
    double speed;
    cli_list list;
    cli_opt opts[16];
    char **argv;
    int argc;
} args;

static void table(args *a) {
    const cli_opt opts[] = {
        CLI_IN("--in", &a->in, "FILE", "an input", .req = 1),
        CLI_OUT("--out", &a->out, "FILE", "an output"),
        CLI_STR("--name", &a->name, "TEXT", "a name", .def = "plain"),
        CLI_INT("--size", &a->size, "N", 1, 10, "a size", .def = "3"),
        CLI_INT("--count", &a->count, "N", 0, 5, "a count", .otherwise = "as many as it takes"),
        CLI_DOUBLE("--speed", &a->speed, "X", 0, 2, "a speed", .open = CLI_OPEN_LO, .def = "1"),
        CLI_FLAG("--flag", &a->flag, "a flag"),
        CLI_LIST("--list", &a->list, "A,B", -1, 1, "numbers", .max = 3),
        CLI_STRS("--set", a->set, &a->nset, 3, "K=V", "repeatable"),
        CLI_KEY("--lr", "train.lr"),
        CLI_END,
    };
    memcpy(a->opts, opts, sizeof opts);
}

/* cli_parse of a->argv against a's table (as capture's fn) */
static int parse(void *user) {
    args *a = user;
    table(a);
    return cli_parse(&a->rc, "test", a->argc, a->argv, a->opts, "usage: test\n\noptions:\n");
}

/* Parses the words (NULL-ended, after the command's name) into a; cli_parse's answer, and its stderr
 * (or stdout, for --help) in err. */
static int parse_words(args *a, char *err, size_t n, int fd, ...) {
    static char *argv[32];
    int argc = 0;
    argv[argc++] = "test";
    va_list ap;
    va_start(ap, fd);
    for (char *w; (w = va_arg(ap, char *)) && argc < 31;) argv[argc++] = w;
    va_end(ap);
    argv[argc] = NULL;
    memset(a, 0, sizeof *a);
    a->argv = argv;
    a->argc = argc;
    return capture(fd, err, n, parse, a);
}

/* Every destination is set: the value given, converted, else the default, else zero. */
static void test_values_and_defaults(void **state) {
    (void)state;
    args a;
    char err[1024];
    assert_int_equal(parse_words(&a, err, sizeof err, 2, "--in", "x.yaml", NULL), 1);
    assert_string_equal(a.in, "x.yaml");
    assert_null(a.out);
    assert_string_equal(a.name, "plain");
    assert_int_equal(a.size, 3);
    assert_int_equal(a.count, 0);
    assert_true(a.speed == 1.0);
    assert_int_equal(a.flag, 0);
    assert_null(a.list.v);
    assert_int_equal(a.nset, 0);
    assert_null(cli_given(a.opts, "--size"));
    assert_string_equal(err, "");

    assert_int_equal(parse_words(&a, err, sizeof err, 2, "--in=x.yaml", "--size", "10", "--speed", "2", "--flag",
                                 "--list", "-1,0.5", "--set", "a=1", "--set=b=2", "--lr", "0.5", "--name", "n", NULL), 1);
    assert_int_equal(a.size, 10);
    assert_true(a.speed == 2.0);
    assert_int_equal(a.flag, 1);
    assert_int_equal(a.list.n, 2);
    assert_true(a.list.v[0] == -1.0 && a.list.v[1] == 0.5);
    assert_string_equal(a.list.text, "-1,0.5");
    assert_int_equal(a.nset, 2);
    assert_string_equal(a.set[0], "a=1");
    assert_string_equal(a.set[1], "b=2");
    assert_string_equal(a.name, "n");
    assert_string_equal(cli_given(a.opts, "--size"), "10");
    assert_string_equal(cli_given(a.opts, "--flag"), "");
    dg_run_set sets[CLI_MAX_OPTS];
    assert_int_equal(cli_sets(a.opts, sets), 1);
    assert_string_equal(sets[0].key, "train.lr");
    assert_string_equal(sets[0].value, "0.5");
    free(a.list.v);
}

/* A value its type or bounds refuse, a required option left out, an option given twice (a repeatable
 * one too often), an output that is an input: one line naming the command and the option, exit 2. */
static void test_refused(void **state) {
    (void)state;
    static const struct { const char *words[6], *line; } CASES[] = {
        {{"--in", "x", "--size", "11"}, "difgames test: --size: expected an integer from 1 to 10, got '11'\n"},
        {{"--in", "x", "--size", "2.5"}, "difgames test: --size: expected an integer from 1 to 10, got '2.5'\n"},
        {{"--in", "x", "--speed", "0"}, "difgames test: --speed: expected a number in (0, 2], got '0'\n"},
        {{"--in", "x", "--list", "0,2"}, "difgames test: --list: item 2 is '2'; expected a number from -1 to 1\n"},
        {{"--in", "x", "--list", "0,0,0,0"}, "difgames test: --list: at most 3 numbers; got '0,0,0,0'\n"},
        {{"--size", "2"}, "difgames test: --in FILE is required (see --help)\n"},
        {{"--in", "x", "--in", "y"}, "difgames test: option --in given twice\n"},
        {{"--in", "x", "--out", "./x"}, "difgames test: --out ./x is also the input --in: it would be overwritten; "
                                        "choose another file\n"},
        {{"--in", "x", "--lr", "0"}, "difgames test: --lr (train.lr): 0 is out of range, expected (0, 10]\n"},
        {{"--in", "x", "--sise", "2"}, "difgames test: unknown option '--sise' (did you mean --size? see --help)\n"},
        {{"--in", "x", "--flag=1"}, "difgames test: option --flag takes no value\n"},
        {{"--in", "x", "--size"}, "difgames test: --size needs a value\n"},
    };
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        args a;
        char err[1024];
        const char *const *w = CASES[k].words;
        assert_int_equal(parse_words(&a, err, sizeof err, 2, w[0], w[1], w[2], w[3], w[4], w[5], NULL), 0);
        assert_int_equal(a.rc, EXIT_USAGE);
        if (strcmp(err, CASES[k].line)) fail_msg("case %zu: '%s', want '%s'", k, err, CASES[k].line);
        assert_null(a.list.v);  /* a list parsed before the error is freed */
    }
    args a;  /* a repeatable option past its room */
    char err[1024];
    assert_int_equal(parse_words(&a, err, sizeof err, 2, "--in", "x", "--set", "a", "--set", "b", "--set", "c", "--set",
                                 "d", NULL), 0);
    assert_string_equal(err, "difgames test: option --set given more than 3 times\n");
}

/* The options standing in for required ones (.unless); the message names all that are missing, the
 * stand-in once. */
static int parse_unless(void *user) {
    args *a = user;
    const char *config, *ckpt, *run;
    cli_opt opts[] = {
        CLI_CONFIG(&config, .unless = "--run"), CLI_CKPT(&ckpt, .unless = "--run"),
        CLI_STR("--run", &run, "DIR", "a run"),
        CLI_END,
    };
    return cli_parse(&a->rc, "view", a->argc, a->argv, opts, "usage\n");
}

static void test_required_unless(void **state) {
    (void)state;
    char *none[] = {"view", NULL}, *run[] = {"view", "--run", "r", NULL}, *config[] = {"view", "--config", "c", NULL};
    args a = {.argv = none, .argc = 1};
    char err[512];
    assert_int_equal(capture(2, err, sizeof err, parse_unless, &a), 0);
    assert_string_equal(err, "difgames view: --config FILE and --ckpt FILE (or --run DIR) are required (see --help)\n");
    a = (args){.argv = config, .argc = 3};
    assert_int_equal(capture(2, err, sizeof err, parse_unless, &a), 0);
    assert_string_equal(err, "difgames view: --ckpt FILE (or --run DIR) is required (see --help)\n");
    a = (args){.argv = run, .argc = 3};
    assert_int_equal(capture(2, err, sizeof err, parse_unless, &a), 1);
    assert_string_equal(err, "");
}

/* --help is the table: each option with its metavar, range and default (or "required"), wrapped at
 * 80 columns; the command ends with status 0. */
static void test_help(void **state) {
    (void)state;
    args a;
    char out[4096];
    assert_int_equal(parse_words(&a, out, sizeof out, 1, "--help", NULL), 0);
    assert_int_equal(a.rc, 0);
    const char *want[] = {
        "usage: test\n\noptions:\n",
        "  --in FILE             an input (required)\n",
        "  --name TEXT           a name (default plain)\n",
        "  --size N              a size (1 to 10; default 3)\n",
        "  --count N             a count (0 to 5; default as many as it takes)\n",
        "  --speed X             a speed (in (0, 2]; default 1)\n",
        "  --flag                a flag\n",
        "  --list A,B            numbers (each in [-1, 1], at most 3)\n",
        "  --set K=V             repeatable\n",
        "  --lr X                Adam learning rate (train.lr)\n",
        "  -h, --help            print this help\n",
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++)
        if (!strstr(out, want[k])) fail_msg("--help lacks '%s':\n%s", want[k], out);
    for (const char *l = out; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0))
        assert_true(strcspn(l, "\n") <= 80);
}

/* A default its own option refuses is the table's bug: the command fails (exit 1) whatever is given. */
static int parse_bad_default(void *user) {
    args *a = user;
    int size;
    cli_opt opts[] = {CLI_INT("--size", &size, "N", 1, 10, "a size", .def = "20"), CLI_END};
    return cli_parse(&a->rc, "test", a->argc, a->argv, opts, "usage\n");
}

static void test_table_bug(void **state) {
    (void)state;
    char *argv[] = {"test", "--help", NULL};
    args a = {.argv = argv, .argc = 2};
    char err[512];
    assert_int_equal(capture(2, err, sizeof err, parse_bad_default, &a), 0);
    assert_int_equal(a.rc, EXIT_FAIL);
    assert_non_null(strstr(err, "--size: the table's default '20' is no value of the option"));
}

static int run_a(int argc, char **argv) { return argc * 10 + (argv[0][0] == 'a'); }
static int run_b(int argc, char **argv) { return argc * 20 + (argv[0][0] == 'b'); }
static const cli_cmd CMDS[] = {{"alpha", run_a, NULL, "the first"}, {"beta", run_b, NULL, "the second"}};

/* cli_command on argv (words of w, NULL-ended) */
typedef struct cmd_call {
    char **argv;
    int argc, rc;
    const cli_cmd *c;
} cmd_call;

static int command(void *user) {
    cmd_call *k = user;
    k->c = cli_command(&k->rc, "tool", CMDS, 2, k->argc, k->argv, "usage: tool <sub>\n\n", "\nend\n");
    return 0;
}

/* One table of subcommands: the entry named, its usage made from the table, an unknown one refused. */
static void test_subcommands(void **state) {
    (void)state;
    char *beta[] = {"tool", "beta", "--x", NULL}, *help[] = {"tool", "--help", NULL}, *bad[] = {"tool", "gamma", NULL};
    char out[512];
    cmd_call k = {.argv = beta, .argc = 3};
    capture(2, out, sizeof out, command, &k);
    assert_ptr_equal(k.c, &CMDS[1]);
    assert_int_equal(k.c->fn(k.argc - 1, k.argv + 1), 41);
    k = (cmd_call){.argv = help, .argc = 2};
    capture(1, out, sizeof out, command, &k);
    assert_null(k.c);
    assert_int_equal(k.rc, 0);
    assert_string_equal(out, "usage: tool <sub>\n\n  alpha  the first\n  beta   the second\n\nend\n");
    k = (cmd_call){.argv = bad, .argc = 2};
    capture(2, out, sizeof out, command, &k);
    assert_null(k.c);
    assert_int_equal(k.rc, EXIT_USAGE);
    assert_string_equal(out, "difgames tool: unknown subcommand 'gamma' (subcommands: alpha, beta; see difgames tool "
                             "--help)\n");
    k = (cmd_call){.argv = bad, .argc = 1};  /* no word: the usage on stderr, exit 2 */
    capture(2, out, sizeof out, command, &k);
    assert_int_equal(k.rc, EXIT_USAGE);
    assert_non_null(strstr(out, "usage: tool <sub>"));
}

/* The JSON line: numbers in the command's format (no "-0"), null for what is not finite; an
 * allocation that failed refuses the whole line. */
static void test_json(void **state) {
    (void)state;
    dg_json j = {cJSON_CreateObject(), 0};
    dg_json_game(&j, "reach", "builtin");
    dg_json_add(&j, j.root, "loss", dg_json_number("%.3f", -0.0001));
    dg_json_add(&j, j.root, "nan", dg_json_number("%.9g", NAN));
    cJSON *a = dg_json_add(&j, j.root, "a", cJSON_CreateArray());
    dg_json_add(&j, a, NULL, dg_json_number("%.0f", 3));
    char *line = dg_json_line(&j);
    assert_string_equal(line, "{\"game\":\"reach\",\"source\":\"builtin\",\"loss\":0.000,\"nan\":null,\"a\":[3]}");
    assert_null(j.root);
    cJSON_free(line);
    j = (dg_json){cJSON_CreateObject(), 0};
    dg_json_add(&j, j.root, "x", NULL);  /* an item whose allocation failed */
    assert_int_equal(j.oom, 1);
    assert_null(dg_json_line(&j));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_and_defaults),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_required_unless),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_table_bug),
        cmocka_unit_test(test_subcommands),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
