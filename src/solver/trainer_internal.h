/* The trainer's state, shared by its files (src/solver: trainer.c the loop, rollout.c the shards,
 * trainer_files.c the files, trainer_memory.c the estimates). Private: not installed. */
#ifndef DG_SOLVER_TRAINER_INTERNAL_H
#define DG_SOLVER_TRAINER_INTERNAL_H

#include "difgames/fileio.h"  /* DG_PATH_MAX */
#include "difgames/losses.h"
#include "difgames/trainer.h"

#define MAX_THREADS 64
/* a metrics row in the resume file: epoch loss, terms, grad_norm lr ms flops, metrics, then each player's
   exploitability or NashConv term; files written before general-sum games of more players hold two */
#define ROW_COLS (2 + DG_LOSS_MAX_TERMS + 4 + DG_MAX_METRICS + DG_MAX_PLAYERS)
#define ROW_COLS_TWO (ROW_COLS - DG_MAX_PLAYERS + 2)
#define LOSS_PLOT_W 800  /* loss.png */
#define LOSS_PLOT_H 500

typedef struct shard {
    dg_ctx *ctx;
    dg_real  *grad;                    /* (params total) this shard's gradient */
    dg_real  *saved;                   /* checkpointed BPTT: segment start states */
    int     row0, rows;
    double  loss;
    dg_real   terms[DG_LOSS_MAX_TERMS];
    dg_status status;
    char    err[256];
} shard;

typedef struct metrics_row {
    dg_epoch_stats s;
} metrics_row;

struct dg_trainer {
    const dg_env *env;
    dg_train_opts o;
    dg_policy   mlp;
    dg_params  *p;
    dg_adam     adam;
    dg_rng      rng;
    int         nshards;              /* over every MPI rank (ranks x threads, at most the batch) */
    int         sh_lo, sh_hi;         /* this rank's shards [sh_lo, sh_hi) (all of them alone)   */
    unsigned char *xbuf;              /* under MPI: the shards' results as they travel           */
    size_t      xcap;
    shard       shards[MAX_THREADS];
    dg_real      *state0, *aux, *traj;  /* (B,S), (B,A), (H+1,B,S) */
    dg_real      *good_w, *good_m, *good_v;  /* last parameters that gave a finite loss */
    int64_t     good_step;
    int         good_set;              /* good_* hold a state (the start's, a resume's, an epoch's) */
    int         nan_run;               /* epochs in a row the NaN guard fired */
    double      lr_scale;              /* halved by the NaN guard */
    char        out_dir[DG_PATH_MAX - 64]; /* leaves room for "/<name>" under DG_PATH_MAX */
    char       *config_yaml;
    metrics_row *rows;
    int          nrows, caprows;
    dg_epoch_stats last;
    size_t       arena_peak;
    int          epoch;                /* epochs done (restored on resume)            */
    size_t       ev0;                  /* two players: the evader's first parameter    */
    dg_real       *prev_g;               /* optimistic GDA: last epoch's gradient        */
    dg_real       *save_w, *save_m, *save_v;  /* extragradient: the point it leaves from */
    dg_real       *x_state, *x_aux;      /* exploitability: its evaluation batch         */
    int          sg_rows;              /* the state-gradient diagnostic's rows (0: none) */
    double       sg_bytes;             /* and its arena                                 */
    void        *block;                /* the one allocation behind state0 .. x_aux and the shards' arrays */
};

/* dg_train_memory's parts a trainer uses (trainer_memory.c): the checkpointed-BPTT segment length
 * on windows of T steps, and the state-gradient diagnostic's rows (and *bytes, its arena). */
int dg__train_tape_every(const dg_env *env, const dg_train_opts *o, int T);
int dg__train_state_grad_rows(const dg_env *env, const dg_train_opts *o, double *bytes);

/* Loss and gradient (into p->grad) of the batch state0/aux under parameters p, one shard per
 * thread (and rank); traj_all (may be NULL) gets the trajectory (rollout.c). */
dg_status dg__trainer_run_shards(dg_trainer *t, dg_params *p, const dg_real *state0, const dg_real *aux,
                                 dg_real *traj_all, double *loss, dg_real *terms, double *flops, dg_err *e);
/* The state-gradient diagnostic of the first rows of the batch in t->state0 (rollout.c). */
dg_status dg__trainer_state_grads(dg_trainer *t, dg_state_grads *r, dg_err *e);

/* The files under t->out_dir (trainer_files.c): snapshot `name` of epoch (cb told of it),
 * metrics.csv, loss.png, resume.safetensors. */
dg_status dg__trainer_write_snapshot(dg_trainer *t, const char *name, int epoch, dg_train_cb cb, void *user,
                                     dg_err *e);
dg_status dg__trainer_write_metrics(const dg_trainer *t, dg_err *e);
dg_status dg__trainer_write_plot(const dg_trainer *t, dg_err *e);
dg_status dg__trainer_write_resume(dg_trainer *t, dg_err *e);

#endif
