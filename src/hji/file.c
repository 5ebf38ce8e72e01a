/* The flows around a value file (include/difgames/hji.h): solve a problem into one (the times
 * checked, memory and disk estimated up front), load one's slices for a problem, play the
 * equilibrium from a start state against them. What `difgames hji solve|play|versus` call. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>

#include "difgames/dist.h"
#include "difgames/fileio.h"
#include "difgames/hji_part.h"
#include "difgames/safetensors.h"
#include "difgames/memory.h"
#include "hji/internal.h"

/* ----------------------------------------------------------------- helpers */

/* The steps and times of a solve into a file: o's times checked against p, r->nt the most times. */
static dg_status file_plan(const dg_hji_problem *p, const dg_hji_file_opts *o, int *slices, dg_hji_file_result *r,
                           dg_err *e) {
    const char *label = o->label ? o->label : p->name;
    *slices = o->slices < 2 ? 0 : o->slices;  /* no marks: t_end (and the times) only */
    const int nt = o->ntimes;
    if (nt < 0 || (nt && !o->times) || nt + 1 + *slices > DG_HJI_MAX_TIMES) {
        r->step = DG_HJI_FILE_COUNT;
        return dg_err_set(e, DG_ERR_ARG, "%d + %d times and t_end, more than %d", nt, *slices, DG_HJI_MAX_TIMES);
    }
    const double t0 = p->opts.warm ? p->opts.warm_t : 0;   /* a warm start's time-to-go: the solve starts there */
    for (int i = 0; i < nt; i++)
        if (!(o->times[i] > t0 && o->times[i] < p->t_end) || (i && o->times[i] <= o->times[i - 1])) {
            r->step = DG_HJI_FILE_TIMES;
            return dg_err_set(e, DG_ERR_ARG, "increasing times in (%s%g, t_end = %g)", t0 > 0 ? "the warm start's " : "",
                              t0, p->t_end);
        }
    if (nt && p->stationary) {
        r->step = DG_HJI_FILE_STATIONARY;
        return dg_err_set(e, DG_ERR_ARG, "%s is stationary (one value, no earlier times)", label);
    }
    if (p->stationary || p->opts.warm) *slices = 0;  /* one value, or a warm start (no earlier values): no samples */
    r->nt = nt + 1 + *slices;        /* landed on: the times and t_end; sampled: the slices */
    /* the solver's arrays, the nt values, the file's copies: refused if they cannot fit */
    r->memory = dg_hji_problem_memory(p, r->nt, nt + 1, o->f32);
    if (p->opts.warm) r->memory += (double)p->grid.nodes * sizeof(double);   /* the warm start's value, held */
    if (dg_dist_size() > 1) {  /* this rank's: its block's arrays, solve and values, rank 0's gathered values */
        dg_hji_part pt;
        if (dg_hji_part_init(&pt, &p->grid, &p->opts, e) != DG_OK) {
            r->step = DG_HJI_FILE_SOLVE;
            char why[sizeof e->msg];
            snprintf(why, sizeof why, "%s", e->msg);
            return dg_err_set(e, DG_ERR_ARG, "%s: %s", label, why);
        }
        const double N = (double)p->grid.nodes, NB = (double)pt.nodes;
        (void)N;   /* the ranks write their blocks into the file: nobody holds the whole value */
        r->memory = NB * sizeof(double) * (hji_problem_has_obstacle(p) ? 2 : 1) +
                    dg_hji_solve_part_memory(&pt, &p->grid, &p->game, &p->opts, nt + 1) +
                    (double)r->nt * NB * sizeof(double) + NB * sizeof(double) + 1048576.0;
    }
    dg_err me = {0};
    if (dg_mem_check(r->memory, &me) != DG_OK) {
        char dims[96] = "";  /* " 101x101x51" */
        for (int k = 0, w = 0; k < p->grid.ndim && w >= 0 && (size_t)w < sizeof dims; k++)
            w += snprintf(dims + w, sizeof dims - (size_t)w, "%s%d", k ? "x" : " ", p->grid.n[k]);
        r->step = DG_HJI_FILE_MEMORY;
        return dg_err_set(e, me.status, "%.200s: a grid of%s nodes at %d time%s %s", label, dims, r->nt,
                          r->nt > 1 ? "s" : "", me.msg);
    }
    return DG_OK;
}

/* 1 on a little-endian host: the file's byte order, so a block is written as it is. */
static int little_endian(void) {
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* The value file written by every rank at once (collective): rank 0 opens the temporary file
 * and writes the header (the same bytes dg_hji_value_write's would have: every rank builds it
 * from the same problem, times and config), every rank writes its block of each time at its
 * offset (MPI-IO), rank 0 fsyncs and renames it into place. The same bytes as one process's
 * file; nobody holds more than its block. */
static dg_status write_blocks(const char *path, const dg_hji_problem *p, const dg_hji_part *pt, int nt,
                              const double *times, const unsigned char *sampled, const double *vals, int f32,
                              const char *yaml, dg_err *e) {
    const int rank0 = pt->rank == 0;
    const size_t es = f32 ? sizeof(float) : sizeof(double);
    dg_st_writer *w = NULL;
    unsigned char *head = NULL, *stage = NULL;
    size_t hlen = 0;
    dg_file fl;
    memset(&fl, 0, sizeof fl);
    dg_dist_file *df = NULL;
    char tmp[sizeof fl.tmp];
    dg_err mine = {0};
    dg_status s = hji_value_writer(p, nt, times, sampled, NULL, f32, yaml, &w, &mine);
    if (s == DG_OK) s = dg_st_writer_header(w, &head, &hlen, &mine);
    const int need_stage = f32 || !little_endian();
    if (s == DG_OK && need_stage && !(stage = malloc((size_t)pt->nodes * es)))
        s = dg_err_set(&mine, DG_ERR_NOMEM, "out of memory for a block of %lld values", (long long)pt->nodes);
    if (s == DG_OK && rank0) {   /* the temporary file and its header */
        s = dg_file_begin(&fl, path, &mine);
        if (s == DG_OK && (fwrite(head, 1, hlen, fl.fp) != hlen || fflush(fl.fp) != 0))
            s = dg_err_set(&mine, DG_ERR_IO, "%s: write failed: %s", path, strerror(errno));
        snprintf(tmp, sizeof tmp, "%s", fl.tmp);
    }
    if (dg_dist_or(s != DG_OK)) {
        if (s == DG_OK) s = dg_err_set(&mine, DG_ERR_IO, "%s: another rank could not prepare its write", path);
        goto done;
    }
    dg_dist_bcast(tmp, sizeof tmp, 0);
    if ((s = dg_dist_file_open(&df, tmp, &mine)) != DG_OK) goto done;
    for (int i = 0; i < nt && s == DG_OK; i++) {
        const double *v = vals + (size_t)i * (size_t)pt->nodes;
        const void *src = v;
        if (need_stage) {   /* float32, or the host's doubles turned little-endian */
            unsigned char *d = stage;
            for (int64_t j = 0; j < pt->nodes; j++, d += es) {
                unsigned char b[sizeof(double)];
                if (f32) {
                    const float x = (float)v[j];
                    memcpy(b, &x, es);
                } else {
                    memcpy(b, &v[j], es);
                }
                for (size_t k = 0; k < es; k++) d[k] = little_endian() ? b[k] : b[es - 1 - k];
            }
            src = stage;
        }
        const uint64_t at = (uint64_t)hlen + (uint64_t)i * (uint64_t)p->grid.nodes * es;
        if (pt->multi)   /* a box: its rows through a subarray view of the grid */
            s = dg_dist_file_write_box(df, at, p->grid.ndim, p->grid.n, pt->n, pt->lo, es, src, &mine);
        else             /* a block of axis 0: one range */
            s = dg_dist_file_write_at(df, at + (uint64_t)pt->node0 * es, src, (size_t)pt->nodes * es, &mine);
    }
    const dg_status sc = dg_dist_file_close(df, s == DG_OK ? &mine : NULL);
    if (s == DG_OK) s = sc;
    if (rank0) {   /* in place, or gone */
        if (s == DG_OK) s = dg_file_commit(&fl, &mine);
        else dg_file_abort(&fl);
    }
    const int failed = dg_dist_or(s != DG_OK);
    if (failed && s == DG_OK) s = dg_err_set(&mine, DG_ERR_IO, "%s: rank 0 could not put the file in place", path);
done:
    if (s != DG_OK && rank0 && fl.fp) dg_file_abort(&fl);
    if (s != DG_OK) *e = mine;
    free(head);
    free(stage);
    dg_st_writer_free(w);
    return s;
}

/* ------------------------------------------------------- public functions */

dg_status dg_hji_solve_plan(const dg_hji_problem *p, const dg_hji_file_opts *o, dg_hji_file_result *r, dg_err *e) {
    memset(r, 0, sizeof *r);
    int slices;
    return file_plan(p, o, &slices, r, e);
}

dg_status dg_hji_solve_file(dg_hji_problem *p, const dg_hji_file_opts *o, const char *path, dg_hji_file_result *r,
                            dg_err *e) {
    memset(r, 0, sizeof *r);
    int slices;
    dg_status s = file_plan(p, o, &slices, r, e);
    if (s != DG_OK) return s;
    const int nreq = o->ntimes, nmax = r->nt;
    r->nt = 0;
    char *yaml = NULL;
    size_t yaml_len = 0;
    double *vals = NULL;  /* this process's values: the whole grid's, or under mpirun its block's */
    /* under mpirun: the grid split over the ranks (hji_part.h), each rank writing its box into
     * the file (docs/scale.md) */
    const int nranks = dg_dist_size();
    const int64_t N = p->grid.nodes;
    dg_hji_part pt;
    if (nranks > 1 || !p->target) {   /* (a problem loaded split builds its arrays here) */
        r->step = DG_HJI_FILE_SOLVE;
        if ((s = dg_hji_part_init(&pt, &p->grid, &p->opts, e)) == DG_OK)
            s = dg_hji_problem_keep_block(p, &pt, e);  /* 1/R of the node arrays */
        if (s != DG_OK) return s;
        memcpy(r->cuts, pt.cuts, sizeof r->cuts);
    }
    const int64_t NB = nranks > 1 ? pt.nodes : N;  /* the nodes this process solves */
    r->step = DG_HJI_FILE_WRITE;
    if (o->cfg && (s = dg_cfg_to_yaml(o->cfg, &yaml, &yaml_len, e)) != DG_OK) goto done;
    {   /* the file must fit on the disk: refused before the solve, not after it */
        const double need = dg_hji_value_file_bytes(p, nmax, o->f32, (double)yaml_len), avail = dg_disk_free(path);
        if (avail >= 0 && need > avail) {
            r->step = DG_HJI_FILE_DISK;
            s = dg_err_set(e, DG_ERR_IO, "%s: the value file of %d times takes about %.1f MiB, more than the %.1f MiB "
                           "free there", path, nmax, need / 1048576.0, avail / 1048576.0);
            goto done;
        }
    }
    if (!(vals = malloc((size_t)nmax * (size_t)NB * sizeof(double)))) {
        s = dg_err_set(e, DG_ERR_NOMEM, "out of memory for %d x %lld values", nmax, (long long)N);
        goto done;
    }
    r->step = DG_HJI_FILE_SOLVE;
    s = nranks > 1 ? dg_hji_problem_solve_slices_part(p, &pt, slices, nreq, o->times, &r->nt, r->times, vals,
                                                      &r->stats, e)
                   : dg_hji_problem_solve_slices(p, slices, nreq, o->times, &r->nt, r->times, vals, &r->stats, e);
    if (s != DG_OK) {
        char why[sizeof e->msg];
        snprintf(why, sizeof why, "%s", e->msg);
        dg_err_set(e, s, "%s: %s", o->label ? o->label : p->name, why);
        goto done;
    }
    /* 'value' at t_end, earlier times as value_k; V(., t_end) has the same bits whatever the slices:
     * the samples do not change the steps */
    unsigned char sampled[DG_HJI_MAX_TIMES];  /* what the slices added: the times not asked for */
    for (int i = 0; i < r->nt; i++) {
        sampled[i] = r->times[i] != p->t_end;
        for (int k = 0; k < nreq; k++) sampled[i] &= r->times[i] != o->times[k];
    }
    r->step = DG_HJI_FILE_WRITE;
    s = nranks > 1 ? write_blocks(path, p, &pt, r->nt, r->times, sampled, vals, o->f32, yaml, e)
                   : dg_hji_value_write(path, p, r->nt, r->times, sampled, vals, o->f32, yaml, e);
done:
    if (s == DG_OK) r->step = DG_HJI_FILE_OK;
    free(yaml);
    free(vals);
    return s;
}

dg_status dg_hji_value_load(const char *path, const dg_hji_problem *p, const char *config, dg_hji_value_slices *vs,
                            dg_hji_file_step *step, dg_err *e) {
    memset(vs, 0, sizeof *vs);
    dg_hji_file_step st_local;
    if (!step) step = &st_local;
    *step = DG_HJI_FILE_READ;
    dg_status s = dg_hji_value_open(path, &vs->file, e);
    if (s == DG_OK) s = dg_hji_value_check(&vs->file, p, config, e);
    if (s == DG_OK) {  /* the slices in double, beside the file already read */
        dg_err me = {0};
        if (dg_mem_check((double)vs->file.nt * (double)p->grid.nodes * sizeof(double), &me) != DG_OK) {
            *step = DG_HJI_FILE_MEMORY;
            s = dg_err_set(e, me.status, "%.500s: %d times of %lld nodes %s", path, vs->file.nt,
                           (long long)p->grid.nodes, me.msg);
        }
    }
    if (s == DG_OK && !(vs->v = malloc((size_t)vs->file.nt * (size_t)p->grid.nodes * sizeof(double))))
        s = dg_err_set(e, DG_ERR_NOMEM, "out of memory");
    if (s == DG_OK) s = dg_hji_value_read_all(&vs->file, vs->v, e);
    if (s != DG_OK) {
        dg_hji_value_slices_free(vs);
        return s;
    }
    vs->slices = (dg_hji_slices){.nt = vs->file.nt, .t = vs->file.times, .v = vs->v};
    *step = DG_HJI_FILE_OK;
    return DG_OK;
}

void dg_hji_value_slices_free(dg_hji_value_slices *vs) {
    if (!vs) return;
    free(vs->v);
    dg_hji_value_close(&vs->file);
    memset(vs, 0, sizeof *vs);
}

dg_status dg_hji_play(const dg_hji_problem *p, const dg_hji_slices *V, const double *x0, const dg_hji_play_opts *o,
                      dg_hji_sim_result *r, dg_hji_file_step *step, dg_err *e) {
    memset(r, 0, sizeof *r);
    if (step) *step = DG_HJI_FILE_STEPS;
    if (!(o->t_max > 0) || o->dt < 0 || V->nt < 1)
        return dg_err_set(e, DG_ERR_ARG, "play: t_max %g and dt %g must be > 0 (dt 0: automatic), with %d value "
                          "times", o->t_max, o->dt, V->nt);
    const dg_hji_source src = dg_hji_source_slices(&p->grid, V);
    return dg_hji_play_sources(p, &src, NULL, x0, o, r, step, e);
}

dg_status dg_hji_play_sources(const dg_hji_problem *p, const dg_hji_source *su, const dg_hji_source *sd,
                              const double *x0, const dg_hji_play_opts *o, dg_hji_sim_result *r, dg_hji_file_step *step,
                              dg_err *e) {
    memset(r, 0, sizeof *r);
    dg_hji_file_step st_local;
    if (!step) step = &st_local;
    *step = DG_HJI_FILE_STEPS;
    if (!su || !(o->t_max > 0) || o->dt < 0)
        return dg_err_set(e, DG_ERR_ARG, "play: a value, and t_max %g and dt %g > 0 (dt 0: automatic) needed",
                          o->t_max, o->dt);
    r->dt = o->dt;
    *step = DG_HJI_FILE_SIM;
    dg_status s0 = o->dt > 0 ? DG_OK : dg_hji_sim_dt_sources(p, su, sd, x0, o->t_max, &r->dt, e);
    if (s0 != DG_OK) return s0;
    *step = DG_HJI_FILE_STEPS;
    if (!(o->t_max / r->dt <= (double)o->max_steps))  /* the CSV's rows, bounded before anything is written */
        return dg_err_set(e, DG_ERR_ARG, "t_max %g / dt %g is %.3g steps, more than max_steps %lld (one CSV row "
                          "each)", o->t_max, r->dt, o->t_max / r->dt, (long long)o->max_steps);
    const double dt = r->dt;
    dg_hji_play_gif *pg = NULL;
    *step = DG_HJI_FILE_GIF;
    if (o->gif_path && p->grid.ndim > DG_HJI_GRID_MAX_DIMS)
        return dg_err_set(e, DG_ERR_ARG, "play: %s has %d state dimensions and no grid to draw a GIF on (at most %d)",
                          p->name, p->grid.ndim, DG_HJI_GRID_MAX_DIMS);
    double *tab = NULL;  /* the GIF's background: u's value at its horizon on p's grid */
    const double *bg = NULL;
    if (o->gif_path && hji_source_on_grid(su, &p->grid)) {
        const dg_hji_slices *V = &su->slices;  /* the slices' own last one, as ever */
        bg = V->v + (size_t)(V->nt - 1) * (size_t)p->grid.nodes;
    } else if (o->gif_path) {
        if (!(tab = malloc((size_t)p->grid.nodes * sizeof *tab)))
            return dg_err_set(e, DG_ERR_NOMEM, "play: out of memory for %lld nodes", (long long)p->grid.nodes);
        if ((s0 = dg_hji_source_tabulate(su, &p->grid, su->horizon, tab, e)) != DG_OK) {
            free(tab);
            return s0;
        }
        bg = tab;
    }
    if (o->gif_path && !(pg = dg_hji_play_gif_begin(o->gif_path, p, bg, su->horizon, e))) {
        free(tab);
        return e->status;
    }
    /* both players follow the equilibrium feedback: inputs from the gradient of V(x, t_end - t) */
    const dg_hji_sim_opts so = {.t_max = o->t_max, .dt = dt, .max_steps = o->max_steps, .layer = o->layer,
                                .csv_path = o->csv_path, .on_step = pg ? dg_hji_play_gif_step : NULL, .user = pg};
    *step = DG_HJI_FILE_SIM;
    dg_status s = dg_hji_simulate_sources(p, su, sd, x0, &so, r, e);
    if (s == DG_ERR_INTERRUPTED && pg) {  /* the GIF's step stopped it: its error */
        *e = *dg_hji_play_gif_error(pg);
        s = e->status;
        *step = DG_HJI_FILE_GIF;
    }
    if (s != DG_OK) {
        dg_hji_play_gif_abort(pg);
        free(tab);
        return s;
    }
    *step = DG_HJI_FILE_GIF;
    s = pg ? dg_hji_play_gif_end(pg, e) : DG_OK;
    free(tab);
    if (s != DG_OK) return s;
    *step = DG_HJI_FILE_OK;
    return DG_OK;
}
