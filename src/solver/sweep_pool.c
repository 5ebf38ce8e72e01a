/* A sweep's runs trained by a pool (include/difgames/sweep.h, dg_sweep_run): under MPI from the
 * ranks' shared queue, else by forked processes taking runs from a counter they share. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "difgames/base.h"
#include "difgames/dist.h"
#include "difgames/fileio.h"
#include "difgames/sweep.h"

static int stopped(const dg_sweep_pool *o) { return o->stop && *o->stop; }

/* Trains run i unless it is done, counting it in *trained; its end (but a stop) goes to on_run.
 * Returns the run's status (DG_OK for a run done before). */
static dg_status pool_one(const dg_sweep *s, const dg_sweep_pool *o, int i, int rank, int *trained, dg_err *e) {
    if (dg_sweep_done(s, i)) return DG_OK;
    char setting[512], dir[DG_PATH_MAX], what[DG_PATH_MAX + 32];
    long long seed;
    const double t = dg_clock_s();
    dg_status st = dg_sweep_run_dir(s, i, setting, sizeof setting, dir, sizeof dir, &seed, e);
    if (st == DG_OK && (st = dg_sweep_train(s, i, rank, NULL, NULL, o->stop, e)) != DG_OK &&
        st != DG_ERR_INTERRUPTED) {
        snprintf(what, sizeof what, "run %d (%s)", i, dir);
        dg_err_prefix(e, what);
    }
    if (st == DG_ERR_INTERRUPTED) return st;
    if (st == DG_OK) (*trained)++;
    if (o->on_run) o->on_run(s, i, rank, st, dg_clock_s() - t, e, o->user);
    return st;
}

/* The pool's own failure st (fmt: why) into e and to on_run (i -1); returns st. */
static dg_status pool_fail(const dg_sweep *s, const dg_sweep_pool *o, int rank, dg_err *e, dg_status st,
                           const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->status = st;
    if (o->on_run) o->on_run(s, -1, rank, st, 0, e, o->user);
    return st;
}

/* One run after another in this process; under MPI from the ranks' shared queue. */
static dg_status pool_queue(const dg_sweep *s, const dg_sweep_pool *o, int rank, int *trained, dg_err *e) {
    const int N = dg_sweep_count(s);
    dg_status st = DG_OK;
    int n = 0;
    dg_dist_queue_open();
    for (int i; st == DG_OK && !stopped(o) && (i = dg_dist_queue_next()) < N;) st = pool_one(s, o, i, rank, &n, e);
    dg_dist_queue_close();
    *trained = (int)dg_dist_sum_int(n);
    dg_dist_barrier();
    return st;
}

/* The status that ended job j (pid): its exit code, or a signal's DG_ERR_NOMEM (reported). */
static dg_status pool_wait(const dg_sweep *s, const dg_sweep_pool *o, int rank, int j, pid_t pid, dg_err *e) {
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0)
        if (errno != EINTR) return pool_fail(s, o, rank, e, DG_ERR_NOMEM, "--jobs: job %d lost (%s)", j + 1, strerror(errno));
    if (WIFEXITED(ws)) return (dg_status)WEXITSTATUS(ws);
    return pool_fail(s, o, rank, e, DG_ERR_NOMEM, "--jobs: job %d was killed by signal %d", j + 1,
                     WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
}

/* o->jobs processes forked from this one, each taking the next run from a counter they share, until
 * none is left or stop is set; then waits for them all. */
static dg_status pool_fork(const dg_sweep *s, const dg_sweep_pool *o, int rank, dg_err *e) {
    const int N = dg_sweep_count(s), jobs = o->jobs < DG_SWEEP_MAX_JOBS ? o->jobs : DG_SWEEP_MAX_JOBS;
    /* a page of /dev/zero mapped shared: memory the forked jobs share (POSIX, without MAP_ANONYMOUS) */
    const int fd = open("/dev/zero", O_RDWR);
    int *next = fd < 0 ? MAP_FAILED : mmap(NULL, sizeof *next, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (fd >= 0) close(fd);
    if (next == MAP_FAILED)
        return pool_fail(s, o, rank, e, DG_ERR_NOMEM, "--jobs: cannot share a counter between processes");
    *next = 0;
    fflush(NULL);  /* nothing buffered is written twice */
    pid_t pid[DG_SWEEP_MAX_JOBS];
    dg_status st = DG_OK;
    int nj = 0;
    for (int j = 0; j < jobs; j++) {
        const pid_t p = fork();
        if (p == 0) {  /* the job: runs until none is left; its status is its exit code */
            dg_status r = DG_OK;
            int t = 0;
            dg_err je = {0};
            for (int i; r == DG_OK && !stopped(o) && (i = __atomic_fetch_add(next, 1, __ATOMIC_SEQ_CST)) < N;)
                r = pool_one(s, o, i, rank, &t, &je);
            fflush(NULL);
            _exit(r != DG_OK ? (int)r : stopped(o) ? (int)DG_ERR_INTERRUPTED : 0);
        }
        if (p < 0) {
            st = pool_fail(s, o, rank, e, DG_ERR_NOMEM, "--jobs: cannot start job %d", j + 1);
            break;
        }
        pid[nj++] = p;
    }
    for (int j = 0; j < nj; j++) {  /* a failure wins over a stop */
        const dg_status code = pool_wait(s, o, rank, j, pid[j], e);
        if (code != DG_OK && (st == DG_OK || st == DG_ERR_INTERRUPTED)) {
            if (code != e->status) dg_err_set(e, code, "--jobs: job %d: %s", j + 1, dg_status_str(code));
            st = code;
        }
    }
    munmap(next, sizeof *next);
    return st;
}

dg_status dg_sweep_run(const dg_sweep *s, const dg_sweep_pool *o, dg_sweep_pool_result *r, dg_err *e) {
    dg_err local = {0};
    if (!e) e = &local;
    const int N = dg_sweep_count(s), world = dg_dist_world_size(), rank = dg_dist_world_rank();
    r->skipped = r->trained = 0;
    for (int i = 0; i < N; i++) r->skipped += dg_sweep_done(s, i);
    dg_status st;
    if (world > 1 || o->jobs <= 1) {
        st = pool_queue(s, o, rank, &r->trained, e);
    } else {
        st = pool_fork(s, o, rank, e);
        int now = 0;
        for (int i = 0; i < N; i++) now += dg_sweep_done(s, i);
        r->trained = now - r->skipped;
    }
    if (st == DG_OK && stopped(o)) st = dg_err_set(e, DG_ERR_INTERRUPTED, "interrupted");
    return st;
}
