/* A trainer's files: snapshots, metrics.csv, loss.png, resume.safetensors (written, and read
 * back by dg_trainer_restore to go on as if never stopped). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/checkpoint.h"
#include "difgames/image.h"
#include "difgames/safetensors.h"
#include "io/csv.h"
#include "solver/trainer_internal.h"

/* metrics.csv: epoch, loss, each term, grad_norm, lr, ms, game metrics */
dg_status dg__trainer_write_metrics(const dg_trainer *t, dg_err *e) {
    char path[DG_PATH_MAX];
    snprintf(path, sizeof path, "%s/metrics.csv", t->out_dir);
    dg_csv w;
    const dg_status st = dg_csv_begin(&w, path, e);
    if (st != DG_OK) return st;
    const dg_env *env = t->env;
    dg_csv_col(&w, "epoch", DG_CSV_INT);
    dg_csv_col(&w, "loss", DG_CSV_G9);
    dg_csv_cols(&w, env->term_names, NULL, env->nterms, DG_CSV_G9);
    dg_csv_col(&w, "grad_norm", DG_CSV_G9);
    dg_csv_col(&w, "lr", DG_CSV_G9);
    dg_csv_col(&w, "ms", DG_CSV_F3);
    dg_csv_cols(&w, env->metric_names, NULL, env->nmetrics, DG_CSV_G6);
    const int zs = t->mlp.n == 2 && !env->general_sum, gs = env->general_sum ? t->mlp.n : 0;
    if (zs) {
        dg_csv_col(&w, "evader_loss", DG_CSV_G9);
        dg_csv_cols(&w, (const char *const[]){"exploit_pursuer", "exploit_evader"}, NULL, 2, DG_CSV_G6);
    }
    /* general-sum: each player's cost, then its NashConv term (NaN but at exploit_every's epochs) */
    char names[2 * DG_MAX_PLAYERS][48];
    const char *cols[2 * DG_MAX_PLAYERS];
    for (int i = 0; i < gs; i++) {
        char nm[32];
        dg_env_player_name(env, i, nm, sizeof nm);
        snprintf(names[i], sizeof names[i], "cost_%s", nm);
        snprintf(names[gs + i], sizeof names[gs + i], "nash_conv_%s", nm);
        cols[i] = names[i], cols[gs + i] = names[gs + i];
    }
    if (gs) dg_csv_cols(&w, cols, NULL, 2 * gs, DG_CSV_G9);
    for (int r = 0; r < t->nrows; r++) {
        const dg_epoch_stats *s = &t->rows[r].s;
        dg_csv_num(&w, s->epoch);
        dg_csv_num(&w, s->loss);
        for (int i = 0; i < env->nterms; i++) dg_csv_num(&w, s->terms[i]);
        dg_csv_num(&w, s->grad_norm);
        dg_csv_num(&w, s->lr);
        dg_csv_num(&w, s->ms);
        for (int i = 0; i < env->nmetrics; i++) dg_csv_num(&w, s->metrics[i]);
        if (zs) {
            dg_csv_num(&w, -s->loss);
            dg_csv_num(&w, s->exploit[0]);
            dg_csv_num(&w, s->exploit[1]);
        }
        for (int i = 0; i < gs; i++) dg_csv_num(&w, dg_env_player_cost(env, i, s->terms));
        for (int i = 0; i < gs; i++) dg_csv_num(&w, s->exploit[i]);
    }
    return dg_csv_commit(&w, e);
}

dg_status dg__trainer_write_plot(const dg_trainer *t, dg_err *e) {
    const dg_env *env = t->env;
    const int n = t->nrows;
    if (n == 0) return DG_OK;
    /* two or more players: each one's exploitability (zero-sum) or NashConv term (general-sum) at the
       epochs train.exploit_every measured it, beside the loss: a curve for each player */
    const int np = (t->mlp.n == 2 && !env->general_sum) || env->general_sum ? t->mlp.n : 0;
    float *buf = malloc((size_t)n * (env->nterms + 2 + 2 * np) * sizeof(float));
    if (!buf) return dg_err_set(e, DG_ERR_NOMEM, "out of memory for the plot");
    float *x = buf;
    dg_plot_series s[DG_LOSS_MAX_TERMS + 1 + DG_MAX_PLAYERS];
    char label[DG_MAX_PLAYERS][64];
    for (int r = 0; r < n; r++) x[r] = (float)t->rows[r].s.epoch;
    for (int i = 0; i <= env->nterms; i++) {
        float *y = buf + (size_t)(i + 1) * n;
        for (int r = 0; r < n; r++) y[r] = i == 0 ? (float)t->rows[r].s.loss : t->rows[r].s.terms[i - 1];
        s[i] = (dg_plot_series){i == 0 ? "loss" : env->term_names[i - 1], x, y, n, dg_plot_color(i)};
    }
    int ns = env->nterms + 1;
    for (int p = 0; p < np; p++) {
        float *px = buf + (size_t)(env->nterms + 2 + 2 * p) * n, *py = px + n;
        int m = 0;
        for (int r = 0; r < n; r++)
            if (isfinite(t->rows[r].s.exploit[p])) px[m] = (float)t->rows[r].s.epoch, py[m++] = (float)t->rows[r].s.exploit[p];
        if (!m) continue;
        char nm[32];
        if (env->general_sum) dg_env_player_name(env, p, nm, sizeof nm);
        else snprintf(nm, sizeof nm, "%s", p ? "evader" : "pursuer");  /* metrics.csv's exploit_<player> */
        snprintf(label[p], sizeof label[p], "%s: %s", env->general_sum ? "NashConv term" : "exploitability", nm);
        s[ns] = (dg_plot_series){label[p], px, py, m, dg_plot_color(ns)};
        ns++;
    }
    char path[DG_PATH_MAX], title[160];
    snprintf(path, sizeof path, "%s/loss.png", t->out_dir);
    snprintf(title, sizeof title, "%s: episode loss and its terms%s", env->game->name,
             ns > env->nterms + 1 ? (env->general_sum ? ", each player's NashConv term" : ", each player's exploitability")
                                  : "");
    dg_status st = dg_plot_lines(path, LOSS_PLOT_W, LOSS_PLOT_H, title, "epoch", "loss (log scale)", 1, s, ns, e);
    free(buf);
    return st;
}

/* DG_OK when every parameter, Adam moment and the guard's copies are finite; else refuses to write
 * `name` (the last line of defence, as dg_checkpoint_save's for the snapshots: no file a run writes
 * holds a non-finite number to train on). */
static dg_status check_finite(const dg_trainer *t, const char *name, dg_err *e) {
    const struct { const char *what; const dg_real *block; } b[] = {
        {"parameter", t->p->data}, {"Adam first moment of", t->adam.m}, {"Adam second moment of", t->adam.v},
        {"last good parameter", t->good_w}, {"last good first moment of", t->good_m},
        {"last good second moment of", t->good_v}};
    for (size_t k = 0; k < sizeof b / sizeof b[0]; k++) {
        int64_t j = 0;
        const int i = dg_params_first_nonfinite(t->p, b[k].block, &j);
        if (i >= 0)
            return dg_err_set(e, DG_ERR_NONFINITE, "%s/%s not written: the %s %s[%lld] is not finite", t->out_dir,
                              name, b[k].what, t->p->info[i].name, (long long)j);
    }
    return DG_OK;
}

/* 1 when file f (a resume file) is a run of env's game: the same name and source (dg_env_source); files
 * written before the source was stored called every model file's game "model" */
static int same_game(const dg_st_file *f, const dg_env *env) {
    const char *game = dg_st_meta(f, "game"), *src = dg_st_meta(f, "source");
    const char *mine = dg_env_source(env);
    if (!game) return 0;
    if (!src) return !strcmp(mine, "model") ? !strcmp(game, "model") : !strcmp(game, env->game->name);
    return !strcmp(game, env->game->name) && !strcmp(src, mine);
}

dg_status dg__trainer_write_snapshot(dg_trainer *t, const char *name, int epoch, dg_train_cb cb,
                                void *user, dg_err *e) {
    char path[DG_PATH_MAX], ep[32], step[32], lr[64];
    snprintf(path, sizeof path, "%s/%s", t->out_dir, name);
    snprintf(ep, sizeof ep, "%d", epoch);
    snprintf(step, sizeof step, "%lld", (long long)t->adam.step);
    snprintf(lr, sizeof lr, "%.9g", t->o.lr * t->lr_scale);
    const char *meta[] = {"format", "difgames", "game", t->env->game->name, "source", dg_env_source(t->env),
                          "epoch", ep, "adam_step", step, "lr", lr, "config", t->config_yaml ? t->config_yaml : ""};
    dg_status st = dg_checkpoint_save(path, t->p, 0, meta, 7, e);
    if (st == DG_OK && cb) {
        dg_train_event ev = {.kind = DG_TRAIN_EV_SNAPSHOT, .path = path};
        cb(&ev, user);
    }
    return st;
}

/* ------------------------------------------------------------ resume */


static void row_pack(const dg_epoch_stats *s, double *r) {
    int k = 0;
    r[k++] = s->epoch;
    r[k++] = s->loss;
    for (int i = 0; i < DG_LOSS_MAX_TERMS; i++) r[k++] = s->terms[i];
    r[k++] = s->grad_norm;
    r[k++] = s->lr;
    r[k++] = s->ms;
    r[k++] = s->flops;
    for (int i = 0; i < DG_MAX_METRICS; i++) r[k++] = s->metrics[i];
    for (int i = 0; i < DG_MAX_PLAYERS; i++) r[k++] = s->exploit[i];
}

/* cols: ROW_COLS, or ROW_COLS_TWO (an older file: two players' numbers, the others NaN) */
static void row_unpack(const double *r, int cols, dg_epoch_stats *s) {
    int k = 0;
    s->epoch = (int)r[k++];
    s->loss = r[k++];
    for (int i = 0; i < DG_LOSS_MAX_TERMS; i++) s->terms[i] = (dg_real)r[k++];
    s->grad_norm = r[k++];
    s->lr = r[k++];
    s->ms = r[k++];
    s->flops = r[k++];
    for (int i = 0; i < DG_MAX_METRICS; i++) s->metrics[i] = r[k++];
    for (int i = 0; i < DG_MAX_PLAYERS; i++) s->exploit[i] = i < cols - (ROW_COLS - DG_MAX_PLAYERS) ? r[k++] : NAN;
    for (int i = 0; i < DG_MAX_PLAYERS; i++) s->cost[i] = NAN;     /* metrics.csv's come from the terms */
}

/* Everything a run needs to go on as if never stopped: parameters (under their
 * own names), Adam moments and step, the NaN guard's last good state, the RNG,
 * the episode batch (fixed_batch), the metrics so far, the config. */
dg_status dg__trainer_write_resume(dg_trainer *t, dg_err *e) {
    const dg_status fin = check_finite(t, "resume.safetensors", e);
    if (fin != DG_OK) return fin;
    char path[DG_PATH_MAX], ep[32], step[32], gstep[32], scale[40], rng[64], rows[32];
    snprintf(path, sizeof path, "%s/resume.safetensors", t->out_dir);
    snprintf(ep, sizeof ep, "%d", t->epoch);
    snprintf(step, sizeof step, "%lld", (long long)t->adam.step);
    snprintf(gstep, sizeof gstep, "%lld", (long long)t->good_step);
    snprintf(scale, sizeof scale, "%.17g", t->lr_scale);
    snprintf(rng, sizeof rng, "%016llx%016llx", (unsigned long long)t->rng.s[0],
             (unsigned long long)t->rng.s[1]);
    snprintf(rows, sizeof rows, "%d", t->nrows);
    dg_st_writer *w = dg_st_writer_create();
    if (!w) return dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    const dg_params *p = t->p;
    const int64_t total = (int64_t)p->total;
    const dg_env *env = t->env;
    double *table = malloc(((size_t)t->nrows + 1) * ROW_COLS * sizeof(double));
    dg_status st = table ? DG_OK : dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    for (int r = 0; r < t->nrows && st == DG_OK; r++) row_pack(&t->rows[r].s, table + (size_t)r * ROW_COLS);
    for (int i = 0; i < p->count && st == DG_OK; i++) {
        int64_t shape[DG_MAX_DIMS];
        for (int d = 0; d < p->info[i].ndim; d++) shape[d] = p->info[i].shape[d];
        st = dg_st_writer_add(w, p->info[i].name, DG_DTYPE_REAL, p->info[i].ndim, shape, p->data + p->info[i].offset, e);
    }
    const struct { const char *name; const dg_real *data; } flat[] = {
        {"optim.adam.m", t->adam.m}, {"optim.adam.v", t->adam.v}, {"optim.good.w", t->good_w},
        {"optim.good.m", t->good_m}, {"optim.good.v", t->good_v}};
    for (size_t i = 0; i < sizeof flat / sizeof flat[0] && st == DG_OK; i++)
        st = dg_st_writer_add(w, flat[i].name, DG_DTYPE_REAL, 1, &total, flat[i].data, e);
    if (st == DG_OK)
        st = dg_st_writer_add(w, "episode.state", DG_DTYPE_REAL, 2, (int64_t[]){t->o.batch, env->state_dim}, t->state0, e);
    if (st == DG_OK && env->aux_dim)
        st = dg_st_writer_add(w, "episode.aux", DG_DTYPE_REAL, 2, (int64_t[]){t->o.batch, env->aux_dim}, t->aux, e);
    if (st == DG_OK)
        st = dg_st_writer_add(w, "metrics", DG_DTYPE_F64, 2, (int64_t[]){t->nrows, ROW_COLS}, table, e);
    const char *meta[][2] = {{"format", "difgames-resume"}, {"game", env->game->name},
                             {"source", dg_env_source(env)}, {"epoch", ep},
                             {"adam_step", step}, {"good_step", gstep}, {"lr_scale", scale},
                             {"rng", rng}, {"rows", rows}, {"config", t->config_yaml ? t->config_yaml : ""}};
    for (size_t i = 0; i < sizeof meta / sizeof meta[0] && st == DG_OK; i++)
        st = dg_st_writer_meta(w, meta[i][0], meta[i][1], e);
    if (st == DG_OK) st = dg_st_writer_write(w, path, e);
    dg_st_writer_free(w);
    free(table);
    return st;
}

static dg_status meta_i64(const dg_st_file *f, const char *path, const char *key, long long lo,
                          long long hi, long long *out, dg_err *e) {
    const char *v = dg_st_meta(f, key);
    char *end;
    if (!v) return dg_err_set(e, DG_ERR_FORMAT, "%s: metadata '%s' missing", path, key);
    long long x = strtoll(v, &end, 10);
    if (*v == 0 || *end || x < lo || x > hi)
        return dg_err_set(e, DG_ERR_FORMAT, "%s: metadata '%s' = '%.40s' is not an integer in [%lld, %lld]",
                          path, key, v, lo, hi);
    *out = x;
    return DG_OK;
}

dg_status dg_trainer_restore(dg_trainer *t, const char *path, dg_err *e) {
    dg_st_file *f = dg_st_load(path, e);
    if (!f) return e ? e->status : DG_ERR_IO;
    const dg_env *env = t->env;
    const size_t total = t->p->total;
    dg_status st = DG_OK;
    long long epoch = 0, step = 0, gstep = 0, rows = 0;
    const char *fmt = dg_st_meta(f, "format"), *game = dg_st_meta(f, "game");
    const char *scale = dg_st_meta(f, "lr_scale"), *rng = dg_st_meta(f, "rng");
    dg_real *buf = malloc((total ? total : 1) * 6 * sizeof(dg_real));
    double *table = NULL;
    if (!buf) { st = dg_err_set(e, DG_ERR_NOMEM, "out of memory"); goto done; }
    if (!fmt || strcmp(fmt, "difgames-resume") != 0) {
        st = dg_err_set(e, DG_ERR_FORMAT, "%s: not a difgames resume file (metadata 'format')", path);
        goto done;
    }
    if (!same_game(f, env)) {
        const char *src = dg_st_meta(f, "source");
        st = dg_err_set(e, DG_ERR_FORMAT, "%s: a run of game '%s'%s%s%s, not '%s' (%s)", path, game ? game : "?",
                        src ? " (" : "", src ? src : "", src ? ")" : "", env->game->name, dg_env_source(env));
        goto done;
    }
    if ((st = meta_i64(f, path, "epoch", 0, DG_MAX_EPOCHS, &epoch, e)) ||
        (st = meta_i64(f, path, "adam_step", 0, (long long)1 << 40, &step, e)) ||
        (st = meta_i64(f, path, "good_step", 0, (long long)1 << 40, &gstep, e)) ||
        (st = meta_i64(f, path, "rows", 0, DG_MAX_EPOCHS, &rows, e)))
        goto done;
    char *end = NULL;
    double ls = scale ? strtod(scale, &end) : NAN;
    if (!scale || *end || !(ls > 0.0 && ls <= 1.0)) {
        st = dg_err_set(e, DG_ERR_FORMAT, "%s: metadata 'lr_scale' missing or not in (0, 1]", path);
        goto done;
    }
    unsigned long long s0 = 0, s1 = 0;
    if (!rng || strlen(rng) != 32 || sscanf(rng, "%16llx%16llx", &s0, &s1) != 2) {
        st = dg_err_set(e, DG_ERR_FORMAT, "%s: metadata 'rng' missing or malformed", path);
        goto done;
    }
    /* the tape's precision: a resume goes on in the one the run started in (train.precision) */
    const dg_st_tensor *t0 = t->p->count ? dg_st_find(f, t->p->info[0].name) : NULL;
    if (t0 && t0->dtype != DG_DTYPE_REAL && (t0->dtype == DG_DTYPE_F32 || t0->dtype == DG_DTYPE_F64)) {
        st = dg_err_set(e, DG_ERR_CONFIG, "%s: a train.precision: %s run's resume file, but this run is %s: resume it "
                        "with the precision it started with", path, t0->dtype == DG_DTYPE_F64 ? "f64" : "f32", DG_REAL_NAME);
        goto done;
    }
    /* parameters by name and shape, then the flat optimiser blocks */
    for (int i = 0; i < t->p->count && st == DG_OK; i++) {
        int64_t shape[DG_MAX_DIMS];
        for (int d = 0; d < t->p->info[i].ndim; d++) shape[d] = t->p->info[i].shape[d];
        st = dg_st_read(f, t->p->info[i].name, DG_DTYPE_REAL, t->p->info[i].ndim, shape, buf + t->p->info[i].offset, e);
    }
    const char *flat[] = {"optim.adam.m", "optim.adam.v", "optim.good.w", "optim.good.m", "optim.good.v"};
    for (int i = 0; i < 5 && st == DG_OK; i++)
        st = dg_st_read(f, flat[i], DG_DTYPE_REAL, 1, (int64_t[]){(int64_t)total}, buf + (size_t)(i + 1) * total, e);
    if (st == DG_OK)
        st = dg_st_read(f, "episode.state", DG_DTYPE_REAL, 2, (int64_t[]){t->o.batch, env->state_dim}, t->state0, e);
    if (st == DG_OK && env->aux_dim)
        st = dg_st_read(f, "episode.aux", DG_DTYPE_REAL, 2, (int64_t[]){t->o.batch, env->aux_dim}, t->aux, e);
    if (st == DG_OK && !(table = malloc(((size_t)rows + 1) * ROW_COLS * sizeof(double))))
        st = dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    const dg_st_tensor *mt = st == DG_OK ? dg_st_find(f, "metrics") : NULL;
    const int cols = mt && mt->ndim == 2 && mt->shape[1] == ROW_COLS_TWO ? ROW_COLS_TWO : ROW_COLS;
    if (st == DG_OK) st = dg_st_read(f, "metrics", DG_DTYPE_F64, 2, (int64_t[]){rows, cols}, table, e);
    if (st != DG_OK) goto done;
    if (rows > t->caprows) {
        metrics_row *r = realloc(t->rows, (size_t)rows * sizeof *r);
        if (!r) { st = dg_err_set(e, DG_ERR_NOMEM, "out of memory"); goto done; }
        t->rows = r;
        t->caprows = (int)rows;
    }
    /* all read and checked: now change the trainer */
    memcpy(t->p->data, buf, total * sizeof(dg_real));
    memcpy(t->adam.m, buf + total, total * sizeof(dg_real));
    memcpy(t->adam.v, buf + 2 * total, total * sizeof(dg_real));
    memcpy(t->good_w, buf + 3 * total, total * sizeof(dg_real));
    memcpy(t->good_m, buf + 4 * total, total * sizeof(dg_real));
    memcpy(t->good_v, buf + 5 * total, total * sizeof(dg_real));
    t->adam.step = step;
    t->good_step = gstep;
    t->good_set = 1;
    t->lr_scale = ls;
    t->rng.s[0] = s0;
    t->rng.s[1] = s1;
    t->epoch = (int)epoch;
    t->nrows = (int)rows;
    for (int r = 0; r < rows; r++) row_unpack(table + (size_t)r * cols, cols, &t->rows[r].s);
    if (rows) t->last = t->rows[rows - 1].s;
done:
    free(buf);
    free(table);
    dg_st_free(f);
    return st;
}
