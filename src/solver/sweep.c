/* A study of many training runs (include/difgames/sweep.h): the runs of a settings x seeds
 * product, each trained into its own folder with a one-row result.csv, and their summary. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "difgames/dist.h"
#include "difgames/fileio.h"
#include "difgames/image.h"
#include "difgames/run.h"
#include "difgames/sweep.h"
#include "io/csv.h"

/* e may be NULL: then errors go to a local one */
#define DG_ERR_LOCAL(e) dg_err e##_local = {0}; if (!(e)) (e) = &e##_local

/* The end of the value starting at p in a --set list: the next comma outside brackets, or the
 * string's end (a list value, "[16,16]", holds commas of its own). NULL when a bracket is unbalanced
 * in the value: a ']' or '}' with none open, one left open at the end, or closed by the other kind. */
static const char *value_end(const char *p) {
    char open[16];
    int depth = 0;
    for (;; p++) {
        if (!*p || (*p == ',' && depth == 0)) return depth ? NULL : p;
        if (*p == '[' || *p == '{') {
            if (depth == (int)sizeof open) return NULL;
            open[depth++] = *p;
        } else if (*p == ']' || *p == '}') {
            if (!depth || open[--depth] != (*p == ']' ? '[' : '{')) return NULL;
        }
    }
}

dg_status dg_sweep_add(dg_sweep *s, const char *arg, dg_err *e) {
    /* every message: "--set KEY: <reason>", then the value echoed short (DG_ECHO) */
    const char *eq = arg ? strchr(arg, '=') : NULL;
    if (!eq || eq == arg || !eq[1])
        return dg_err_set(e, DG_ERR_ARG, "--set: expected KEY=V1,V2,..., got %s", DG_ECHO(arg ? arg : ""));
    if (s->nkeys >= DG_SWEEP_MAX_KEYS) return dg_err_set(e, DG_ERR_ARG, "--set: at most %d keys", DG_SWEEP_MAX_KEYS);
    const size_t kl = (size_t)(eq - arg);
    if (kl >= sizeof s->key[0])
        return dg_err_set(e, DG_ERR_ARG, "--set: a key longer than %zu characters: %s", sizeof s->key[0] - 1,
                          DG_ECHO_N(arg, kl));
    char key[sizeof s->key[0]];
    memcpy(key, arg, kl);
    key[kl] = '\0';
    if (!strcmp(key, "seed")) return dg_err_set(e, DG_ERR_ARG, "--set seed=...: give the seeds with --seeds");
    for (int k = 0; k < s->nkeys; k++)
        if (!strcmp(s->key[k], key)) return dg_err_set(e, DG_ERR_ARG, "--set %s: the key is given twice", DG_ECHO(key));
    const int K = s->nkeys;
    s->nvalues[K] = 0;
    for (const char *p = eq + 1;;) {
        const char *end = value_end(p);
        if (!end)
            return dg_err_set(e, DG_ERR_ARG, "--set %s: unbalanced brackets (a list value is one bracketed setting: "
                              "KEY=[16,16],[32,32]); got %s", key, DG_ECHO(eq + 1));
        const char *c = *end ? end : NULL;
        const size_t n = (size_t)(end - p);
        if (!n) return dg_err_set(e, DG_ERR_ARG, "--set %s: an empty value in %s", key, DG_ECHO(eq + 1));
        if (n >= DG_SWEEP_VALUE_LEN)
            return dg_err_set(e, DG_ERR_ARG, "--set %s: a value longer than %d characters: %s", key,
                              DG_SWEEP_VALUE_LEN - 1, DG_ECHO_N(p, n));
        if (s->nvalues[K] >= DG_SWEEP_MAX_VALUES)
            return dg_err_set(e, DG_ERR_ARG, "--set %s: more than %d values; got %s", key, DG_SWEEP_MAX_VALUES,
                              DG_ECHO(eq + 1));
        char *v = s->value[K][s->nvalues[K]];
        memcpy(v, p, n);
        v[n] = '\0';
        if (strchr(v, '/') || strchr(v, '"'))
            return dg_err_set(e, DG_ERR_ARG, "--set %s: a value holds '/' or '\"' (values name folders): %s", key,
                              DG_ECHO(v));
        for (int j = 0; j < s->nvalues[K]; j++)
            if (!strcmp(s->value[K][j], v))
                return dg_err_set(e, DG_ERR_ARG, "--set %s: value %s given twice", key, DG_ECHO(v));
        s->nvalues[K]++;
        if (!c) break;
        p = c + 1;
    }
    snprintf(s->key[K], sizeof s->key[K], "%s", key);
    s->nkeys++;
    if ((double)dg_sweep_count(s) > DG_SWEEP_MAX_RUNS) {
        s->nkeys--;
        return dg_err_set(e, DG_ERR_ARG, "--set %s: more than %d runs (settings x seeds); got %s", key,
                          DG_SWEEP_MAX_RUNS, DG_ECHO(eq + 1));
    }
    return DG_OK;
}

dg_status dg_sweep_seeds(dg_sweep *s, const char *list, dg_err *e) {
    s->nseeds = 0;
    for (const char *p = list ? list : "";;) {
        char *end;
        errno = 0;
        const long long v = strtoll(p, &end, 10);
        if (end == p || (*end && *end != ',') || errno || v < 0 || v > 2147483647)
            return dg_err_set(e, DG_ERR_ARG, "--seeds: expected integers 0 .. 2147483647 separated by commas, got %s",
                              DG_ECHO(list ? list : ""));
        if (s->nseeds >= DG_SWEEP_MAX_SEEDS)
            return dg_err_set(e, DG_ERR_ARG, "--seeds: more than %d seeds; got %s", DG_SWEEP_MAX_SEEDS, DG_ECHO(list));
        for (int j = 0; j < s->nseeds; j++)
            if (s->seed[j] == v) return dg_err_set(e, DG_ERR_ARG, "--seeds: seed %lld given twice", v);
        s->seed[s->nseeds++] = v;
        if (!*end) break;
        p = end + 1;
    }
    if ((double)dg_sweep_count(s) > DG_SWEEP_MAX_RUNS)
        return dg_err_set(e, DG_ERR_ARG, "--seeds: more than %d runs (settings x seeds)", DG_SWEEP_MAX_RUNS);
    return DG_OK;
}

int dg_sweep_count(const dg_sweep *s) {
    double n = s->nseeds > 0 ? s->nseeds : 1;
    for (int k = 0; k < s->nkeys; k++) n *= s->nvalues[k];
    return n > DG_SWEEP_MAX_RUNS ? DG_SWEEP_MAX_RUNS + 1 : (int)n;
}

/* Run i's value index per key (the first key slowest) and seed index (fastest). */
static void decode(const dg_sweep *s, int i, int *vi, int *si) {
    const int ns = s->nseeds > 0 ? s->nseeds : 1;
    *si = i % ns;
    i /= ns;
    for (int k = s->nkeys - 1; k >= 0; k--) {
        vi[k] = i % s->nvalues[k];
        i /= s->nvalues[k];
    }
}

dg_status dg_sweep_run_dir(const dg_sweep *s, int i, char *setting, size_t nsetting, char *dir, size_t ndir,
                           long long *seed, dg_err *e) {
    if (i < 0 || i >= dg_sweep_count(s)) return dg_err_set(e, DG_ERR_ARG, "sweep: no run %d", i);
    int vi[DG_SWEEP_MAX_KEYS], si;
    decode(s, i, vi, &si);
    size_t at = 0;
    setting[0] = '\0';
    for (int k = 0; k < s->nkeys; k++) {
        const int w = snprintf(setting + at, nsetting - at, "%s%s=%s", k ? "_" : "", s->key[k], s->value[k][vi[k]]);
        if (w < 0 || (size_t)w >= nsetting - at) return dg_err_set(e, DG_ERR_ARG, "sweep: the setting's name is too long");
        at += (size_t)w;
    }
    if (!s->nkeys) snprintf(setting, nsetting, "default");
    *seed = s->nseeds ? s->seed[si] : -1;
    char sub[DG_PATH_MAX];
    if (s->nseeds) snprintf(sub, sizeof sub, "%s/seed_%lld", setting, *seed);
    else snprintf(sub, sizeof sub, "%s/seed_config", setting);
    return dg_path_join(dir, ndir, s->out, sub, e);
}

/* Appends text to out (length *at, cap bytes); when it does not fit, out ends in "..." and *at is
 * set to cap so that later appends do nothing. */
static void label_add(char *out, size_t cap, size_t *at, const char *text) {
    if (*at >= cap) return;
    const size_t n = strlen(text);
    if (*at + n < cap) {
        memcpy(out + *at, text, n + 1);
        *at += n;
        return;
    }
    snprintf(out + *at, cap - *at, "%s", text);
    if (cap >= 4) memcpy(out + cap - 4, "...", 4);
    *at = cap;
}

/* The name key k goes by in a label: its last part ("lr" of "train.lr"), or the whole key when
 * another key of the sweep ends in the same part. */
static const char *short_key(const dg_sweep *s, int k) {
    const char *dot = strrchr(s->key[k], '.'), *last = dot ? dot + 1 : s->key[k];
    for (int j = 0; j < s->nkeys; j++) {
        const char *d = strrchr(s->key[j], '.');
        if (j != k && !strcmp(d ? d + 1 : s->key[j], last)) return s->key[k];
    }
    return last;
}

void dg_sweep_label(const dg_sweep *s, int k, const char *sep, char *out, size_t cap) {
    if (!cap) return;
    out[0] = '\0';
    const int ns = s->nseeds > 0 ? s->nseeds : 1, nset = dg_sweep_count(s) / ns;
    if (k < -1 || k >= nset) return;
    int vi[DG_SWEEP_MAX_KEYS] = {0}, si, varies = 0;
    if (k >= 0) decode(s, k * ns, vi, &si);
    for (int j = 0; j < s->nkeys; j++) varies |= s->nvalues[j] > 1;
    if (k >= 0 && !s->nkeys) {
        snprintf(out, cap, "default");
        return;
    }
    size_t at = 0;
    int n = 0;
    for (int j = 0; j < s->nkeys; j++) {
        /* a setting: the keys that vary (every key when none does); -1: the others */
        const int mine = k >= 0 ? !varies || s->nvalues[j] > 1 : varies && s->nvalues[j] == 1;
        if (!mine) continue;
        char part[96], value[24];
        const char *v = s->value[j][vi[j]];
        if (snprintf(value, sizeof value, "%s", v) >= (int)sizeof value - 4)
            snprintf(value, sizeof value, "%.16s...", v);  /* a long value (20 bytes or more): its start */
        snprintf(part, sizeof part, "%s=%s", short_key(s, j), value);
        if (n++) label_add(out, cap, &at, sep ? sep : ", ");
        label_add(out, cap, &at, part);
    }
}

static int file_in(const dg_sweep *s, int i, const char *name) {
    char setting[512], dir[DG_PATH_MAX - 64], path[DG_PATH_MAX];
    long long seed;
    if (dg_sweep_run_dir(s, i, setting, sizeof setting, dir, sizeof dir, &seed, NULL) != DG_OK) return 0;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

int dg_sweep_done(const dg_sweep *s, int i) { return file_in(s, i, "result.csv"); }
int dg_sweep_started(const dg_sweep *s, int i) { return file_in(s, i, "resume.safetensors"); }

typedef struct watch {
    dg_train_cb    cb;
    void          *user;
    dg_epoch_stats last;
    int            have;
} watch;

static void on_event(const dg_train_event *ev, void *user) {
    watch *w = user;
    if (ev->kind == DG_TRAIN_EV_EPOCH && ev->stats) {
        w->last = *ev->stats;
        w->have = 1;
    }
    if (w->cb) w->cb(ev, w->user);
}

dg_status dg_sweep_train(const dg_sweep *s, int i, int rank, dg_train_cb cb, void *user,
                         volatile sig_atomic_t *stop, dg_err *e) {
    DG_ERR_LOCAL(e);
    char setting[512], dir[DG_PATH_MAX - 128], path[DG_PATH_MAX], seed_s[32];
    long long seed;
    dg_status st = dg_sweep_run_dir(s, i, setting, sizeof setting, dir, sizeof dir, &seed, e);
    if (st != DG_OK) return st;
    int vi[DG_SWEEP_MAX_KEYS], si;
    decode(s, i, vi, &si);
    dg_run_set sets[DG_SWEEP_MAX_KEYS + 1];
    int n = 0;
    snprintf(seed_s, sizeof seed_s, "%lld", seed);
    if (seed >= 0) sets[n++] = (dg_run_set){"seed", seed_s};
    for (int k = 0; k < s->nkeys; k++) sets[n++] = (dg_run_set){s->key[k], s->value[k][vi[k]]};
    dg_run r;
    if ((st = dg_run_load(&r, s->config, sets, n, e)) != DG_OK) return st;
    snprintf(path, sizeof path, "%s/resume.safetensors", dir);
    const int resume = access(path, F_OK) == 0;
    watch w = {.cb = cb, .user = user};
    dg_run_train_result res;
    const int solo = dg_dist_solo(1);   /* the run is this process's alone */
    st = dg_run_train(&r, dir, resume ? path : NULL, 0, on_event, &w, stop, &res, e);
    dg_dist_solo(solo);
    if (st == DG_OK) {
        snprintf(path, sizeof path, "%s/result.csv", dir);
        dg_csv c;
        if ((st = dg_csv_begin(&c, path, e)) == DG_OK) {
            for (int k = 0; k < s->nkeys; k++) dg_csv_col(&c, s->key[k], DG_CSV_STR);
            dg_csv_col(&c, "seed", DG_CSV_INT);
            dg_csv_col(&c, "final_loss", DG_CSV_G9);
            dg_csv_cols(&c, r.env->metric_names, NULL, r.env->nmetrics, DG_CSV_G6);
            dg_csv_col(&c, "seconds", DG_CSV_F3);
            dg_csv_col(&c, "rank", DG_CSV_INT);
            for (int k = 0; k < s->nkeys; k++) dg_csv_str(&c, s->value[k][vi[k]]);
            dg_csv_num(&c, (double)r.opts.seed);
            dg_csv_num(&c, w.have ? w.last.loss : res.loss);
            for (int m = 0; m < r.env->nmetrics; m++) dg_csv_num(&c, w.have ? w.last.metrics[m] : NAN);
            dg_csv_num(&c, res.seconds);
            dg_csv_num(&c, rank);
            st = dg_csv_commit(&c, e);
        }
    }
    dg_run_free(&r);
    return st;
}

#define SUMMARY_LABEL 160  /* a setting's label on summary.png, bytes */

dg_status dg_sweep_summary(const dg_sweep *s, dg_err *e) {
    DG_ERR_LOCAL(e);
    /* the summary's temporaries of a sweep killed while writing it (its runs' own: dg_run_train) */
    if (dg_dir_clean(s->out, e) < 0) return e->status;
    const int N = dg_sweep_count(s);
    const int ns = s->nseeds > 0 ? s->nseeds : 1, nset = N / ns;
    char path[DG_PATH_MAX], setting[512], dir[DG_PATH_MAX - 64], header[4096] = "", line[4096];
    char *cell[DG_CSV_MAX_COLS];
    double *loss = malloc((size_t)N * sizeof *loss);
    float *px = malloc((size_t)(3 * N + 3 * nset) * sizeof *px), *py = malloc((size_t)(3 * N + 3 * nset) * sizeof *py);
    dg_csv c;
    dg_status st = loss && px && py ? DG_OK : dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    int began = 0, ncols = 0;
    snprintf(path, sizeof path, "%s/summary.csv", s->out);
    for (int i = 0; st == DG_OK && i < N; i++) {
        long long seed;
        if ((st = dg_sweep_run_dir(s, i, setting, sizeof setting, dir, sizeof dir, &seed, e)) != DG_OK) break;
        char rpath[DG_PATH_MAX];
        snprintf(rpath, sizeof rpath, "%s/result.csv", dir);
        FILE *f = fopen(rpath, "r");
        char head[sizeof header];
        const int ok = f && fgets(head, sizeof head, f) && fgets(line, sizeof line, f);
        if (f) fclose(f);
        if (!ok) {
            st = dg_err_set(e, DG_ERR_IO, "%s: %s (run %d of the sweep has not finished: --resume)", rpath,
                            f ? "no result row" : strerror(errno), i);
            break;
        }
        if (!began) {
            snprintf(header, sizeof header, "%s", head);
            if ((st = dg_csv_begin(&c, path, e)) != DG_OK) break;
            began = 1;
            ncols = dg_csv_split(head, cell, DG_CSV_MAX_COLS);
            for (int k = 0; k < ncols; k++) dg_csv_col(&c, cell[k], DG_CSV_STR);
            if (ncols < s->nkeys + 2) {   /* the keys, the seed, the final loss at least */
                st = dg_err_set(e, DG_ERR_FORMAT, "%s: not the header of a run of this sweep", rpath);
                break;
            }
        } else if (strcmp(head, header)) {
            st = dg_err_set(e, DG_ERR_FORMAT, "%s: its columns differ from the first run's", rpath);
            break;
        }
        const int n = dg_csv_split(line, cell, DG_CSV_MAX_COLS);
        if (n != ncols) {
            st = dg_err_set(e, DG_ERR_FORMAT, "%s: %d cells, the header has %d", rpath, n, ncols);
            break;
        }
        for (int k = 0; k < n; k++) dg_csv_str(&c, cell[k]);
        loss[i] = strtod(cell[s->nkeys + 1], NULL);   /* after the keys and the seed */
    }
    if (began) {
        if (st == DG_OK) st = dg_csv_commit(&c, e);
        else dg_csv_abort(&c);
    }
    if (st == DG_OK) {   /* seeds as lone points (NaN between them), the median as a short bar */
        int a = 0, b = 3 * N;
        double *v = malloc((size_t)ns * sizeof *v);
        if (!v) st = dg_err_set(e, DG_ERR_NOMEM, "out of memory");
        for (int k = 0; st == DG_OK && k < nset; k++) {
            int m = 0;
            for (int j = 0; j < ns; j++) {
                const double y = loss[k * ns + j];
                px[a] = (float)k;
                py[a++] = (dg_real)y;
                px[a] = NAN;
                py[a++] = NAN;
                if (isfinite(y)) v[m++] = y;
            }
            const double med = m ? dg_median(v, m) : NAN;
            px[b] = (float)k - 0.3f;
            py[b++] = (float)med;
            px[b] = (float)k + 0.3f;
            py[b++] = (float)med;
            px[b] = NAN;
            py[b++] = NAN;
        }
        free(v);
        const dg_plot_series ser[2] = {{"seeds", px, py, a, dg_plot_color(0)},
                                       {"median", px + 3 * N, py + 3 * N, b - 3 * N, dg_plot_color(3)}};
        /* each setting named by its values, a key a line; the keys every run shares under the axis */
        char (*label)[SUMMARY_LABEL] = malloc((size_t)nset * sizeof *label);
        const char **names = malloc((size_t)nset * sizeof *names);
        if (st == DG_OK && (!label || !names)) st = dg_err_set(e, DG_ERR_NOMEM, "out of memory");
        int lines = 1;
        for (int k = 0; st == DG_OK && k < nset; k++) {
            dg_sweep_label(s, k, "\n", label[k], sizeof label[k]);
            names[k] = label[k];
            int n = 1;
            for (const char *q = label[k]; *q; q++) n += *q == '\n';
            lines = n > lines ? n : lines;
        }
        /* wide enough for every label's lines as columns read upwards (16 pixels a line), up to
         * 4000 pixels: past that every k-th setting is labelled */
        const double want = 160.0 + nset * (16.0 * lines + 4);
        const int w = want < 760 ? 760 : want > 4000 ? 4000 : (int)want;
        char fixed[96], xlabel[128] = "setting";
        dg_sweep_label(s, -1, ", ", fixed, sizeof fixed);
        if (fixed[0]) snprintf(xlabel, sizeof xlabel, "setting (every run: %s)", fixed);
        snprintf(path, sizeof path, "%s/summary.png", s->out);
        if (st == DG_OK)
            st = dg_plot_categories(path, w, 560, "sweep: final loss per setting", xlabel, "final loss", 0, names,
                                    nset, ser, 2, e);
        free(label);
        free(names);
    }
    free(loss);
    free(px);
    free(py);
    return st;
}
