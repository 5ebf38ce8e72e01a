/* difgames sweep: a study of many training runs (`difgames sweep`, docs/scale.md).
 *
 *     dg_sweep s = {.config = "configs/reach.yaml", .out = "runs/lr_study"};
 *     dg_sweep_add(&s, "train.lr=0.001,0.003,0.01", &e);     // a key and its values
 *     dg_sweep_seeds(&s, "0,1,2", &e);
 *     dg_sweep_run(&s, &(dg_sweep_pool){.jobs = 2}, &r, &e);  // the runs not done, 2 at a time
 *     dg_sweep_summary(&s, &e);                               // summary.csv, summary.png
 *
 * (dg_sweep_run's loop by hand: for each i, if (!dg_sweep_done(&s, i)) dg_sweep_train(&s, i, ...), in any
 * order, in any process.)
 *
 * The runs are the Cartesian product of the keys' values times the seeds, in a fixed order (the
 * first key slowest, the seed fastest); run i trains into out/<setting>/seed_<N> (setting: the
 * KEY=VALUE pairs joined by '_'), and on success writes result.csv there (one row: each key's
 * value, seed, final_loss, each game metric, seconds, rank). A run is done when its result.csv
 * exists; an unfinished one with a resume.safetensors goes on from it. Each run is one process's
 * (MPI off for it: dg_dist_solo), so runs may go to separate processes or ranks.
 */
#ifndef DIFGAMES_SWEEP_H
#define DIFGAMES_SWEEP_H

#include <signal.h>
#include <stddef.h>

#include "difgames/api.h"
#include "difgames/status.h"
#include "difgames/trainer.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_SWEEP_MAX_KEYS   8
#define DG_SWEEP_MAX_VALUES 32
#define DG_SWEEP_MAX_SEEDS  256
#define DG_SWEEP_MAX_RUNS   4096
#define DG_SWEEP_VALUE_LEN  48
#define DG_SWEEP_MAX_JOBS   256   /* processes of dg_sweep_run at a time */

typedef struct dg_sweep {
    const char *config;                          /* the training config                       */
    const char *out;                             /* the sweep's folder                        */
    int         nkeys;
    char        key[DG_SWEEP_MAX_KEYS][64];
    int         nvalues[DG_SWEEP_MAX_KEYS];
    char        value[DG_SWEEP_MAX_KEYS][DG_SWEEP_MAX_VALUES][DG_SWEEP_VALUE_LEN];
    int         nseeds;                          /* 0: the config's seed alone                */
    long long   seed[DG_SWEEP_MAX_SEEDS];
} dg_sweep;

/* Adds "KEY=V1,V2,..." (DG_ERR_ARG naming what is wrong: no '=', an empty value, a key given
 * twice, too many keys, values or runs, a value too long or with '/', unbalanced brackets). The
 * values are split at the commas outside brackets, so that a list is one value:
 * "policy.hidden=[16,16],[32,32]" is two settings, [16,16] and [32,32]. */
DG_API dg_status dg_sweep_add(dg_sweep *s, const char *arg, dg_err *e);
/* Sets the seeds from "A,B,..." (integers >= 0, none twice). */
DG_API dg_status dg_sweep_seeds(dg_sweep *s, const char *list, dg_err *e);
DG_API int       dg_sweep_count(const dg_sweep *s);                   /* runs: values' product x seeds */
/* Run i's setting name (KEY=V_KEY=V, or "default" without keys), folder and seed. */
DG_API dg_status dg_sweep_run_dir(const dg_sweep *s, int i, char *setting, size_t nsetting, char *dir, size_t ndir,
                                  long long *seed, dg_err *e);
DG_API int       dg_sweep_done(const dg_sweep *s, int i);             /* 1 when run i's result.csv exists */
DG_API int       dg_sweep_started(const dg_sweep *s, int i);          /* 1 when its folder holds a resume file */
/* Trains run i (from its resume.safetensors when it has one) and writes its result.csv, with rank
 * in its rank column. cb, user, stop as dg_run_train's. DG_ERR_INTERRUPTED: stopped (resumable). */
DG_API dg_status dg_sweep_train(const dg_sweep *s, int i, int rank, dg_train_cb cb, void *user,
                                volatile sig_atomic_t *stop, dg_err *e);
/* What dg_sweep_run does with each run it ends (in the process that trained it): i the run, rank the
 * MPI rank it ran on, st DG_OK (trained in seconds) or its failure, e naming it ("run I (DIR): ...");
 * i -1: the pool itself failed (a job that could not start, or was killed), e says which. A run
 * stopped by stop is not reported. */
typedef void (*dg_sweep_run_fn)(const dg_sweep *s, int i, int rank, dg_status st, double seconds, const dg_err *e,
                                void *user);
typedef struct dg_sweep_pool {
    int                    jobs;    /* runs at a time without MPI, each in a process of its own forked from
                                     * this one (1 or less: this process, one run after another), at most
                                     * DG_SWEEP_MAX_JOBS; under MPI one a rank                          */
    volatile sig_atomic_t *stop;    /* set (SIGINT): no new run starts, and the trainings stop (NULL: none) */
    dg_sweep_run_fn        on_run;  /* may be NULL                                                        */
    void                  *user;
} dg_sweep_pool;
typedef struct dg_sweep_pool_result {
    int trained;   /* runs trained by this call (every rank's)          */
    int skipped;   /* runs done already when it began (dg_sweep_done)   */
} dg_sweep_pool_result;
/* Trains every run of s not done yet: under MPI (more than one rank) each rank takes runs from a
 * queue rank 0 holds (dg_dist_queue_*; collective), else o->jobs processes take them from a counter
 * they share (a forked job ends with _exit, its status the exit code; the caller's process forks and
 * waits, and goes on). Returns DG_OK; DG_ERR_INTERRUPTED when stop ended it (the same call later
 * skips the runs done and resumes the others); else the first failure's status (a failure wins over
 * a stop), e its message in this process (a job's runs report theirs to on_run there): a run's, or
 * DG_ERR_NOMEM when a job cannot be started or shares no counter, or was killed by a signal (the
 * kernel's out-of-memory killer, most often). */
DG_API dg_status dg_sweep_run(const dg_sweep *s, const dg_sweep_pool *o, dg_sweep_pool_result *r, dg_err *e);
/* Setting k's label (k = 0 .. runs / seeds - 1, in the runs' order), for a reader: KEY=VALUE of each
 * key that takes more than one value (every key when none does; "default" without keys), the key
 * by its last part ("lr" for train.lr) unless two keys of the sweep end alike, a value past 19
 * characters cut to its first 16 and "...", joined by sep (NULL: ", "). k = -1: the keys that take
 * one value, the same in every setting ("" when none, or when no key takes more). Into out (cap
 * bytes), its end "..." when it is longer. */
DG_API void      dg_sweep_label(const dg_sweep *s, int k, const char *sep, char *out, size_t cap);
/* Reads every run's result.csv into out/summary.csv (the runs in order; a missing one is an error
 * naming it) and draws out/summary.png: each setting's final losses, seeds as points, the median
 * as a bar, the settings named by dg_sweep_label (dg_plot_categories). First removes from out the
 * temporary files of a sweep killed there (dg_dir_clean); a run's folder is cleaned when the run
 * starts again (dg_run_train). */
DG_API dg_status dg_sweep_summary(const dg_sweep *s, dg_err *e);

#ifdef __cplusplus
}
#endif
#endif
