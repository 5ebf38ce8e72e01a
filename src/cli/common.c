/* Helpers shared by the subcommands: config loading, errors, output files, the progress bar (the
 * option tables: options.c). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "difgames/fileio.h"
#include "difgames/memory.h"

void cli_verror(const char *cmd, const char *fmt, va_list ap) {
    fprintf(stderr, "difgames %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    cli_verror(cmd, fmt, ap);
    va_end(ap);
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

int cli_mem_ok(const char *cmd, double need, const char *what, const char *lower) {
    dg_err e = {0};
    if (dg_mem_require(need, what, lower, &e) == DG_OK) return 1;
    cli_error(cmd, "%s", e.msg);
    return 0;
}

int cli_json_print(dg_json *j, const char *cmd) {
    char *text = dg_json_line(j);
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
    return rc ? rc : dg_status_exit(e->status);
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
