/* difgames certify run: what `difgames certify --config GAME --ckpt FILE [--hji HJI]` computes, from a
 * run (dg_run) to its JSON line, for any caller (the command prints it; the Python package's
 * dg.certify reads it through dg_flat_certify).
 *
 *     dg_certify_run_opts o = dg_certify_run_opts_default();
 *     o.ckpt = "runs/reach/final.safetensors";
 *     o.episodes = 16;
 *     dg_certify_run_result res;
 *     if (dg_certify_run(&run, &o, &res, &e) == DG_OK) puts(res.json);  // {"game":"reach",...}
 *     dg_certify_run_free(&res);
 *
 * Two paths, as the command's (docs/certify.md): the learner's own discrete game by dynamic
 * programming (dg_certify_discrete), or with o.hji a continuous-time HJI game's equilibrium
 * (dg_certify, dg_certify_cost) and each learned player's exploitability on a 4-D grid. The result
 * keeps what the command's tables, --csv and --plot show beside the JSON. Nothing here prints.
 */
#ifndef DIFGAMES_CERTIFY_RUN_H
#define DIFGAMES_CERTIFY_RUN_H

#include "difgames/api.h"
#include "difgames/certify.h"
#include "difgames/certify_sampling.h"
#include "difgames/run.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A progress line (the exploitability's solves are minutes), without its newline. */
typedef void (*dg_certify_note_fn)(void *user, const char *line);

/* The command's options, by its names (dg_certify_run_set takes them as text; dg_certify_run_options
 * declares each one). Three paths: the learner's own discrete game (hji and value NULL), a
 * continuous-time HJI game (hji), a learned value's safe set by sampling (value). */
typedef struct dg_certify_run_opts {
    const char *ckpt;               /* the learned player(s)' checkpoint (own and hji: required)      */
    const char *hji;                /* NULL: the learner's own discrete game; else the HJI config    */
    const char *value;              /* sampling: the network of hji learn (dg_certify_sampling_run)  */
    const char *grid;               /* sampling: a value file of hji solve whose feedback the other
                                       player plays (NULL: the network's)                            */
    dg_certify_sampling_opts sampling; /* sampling: its options (its seed and other: from seed, grid) */
    int      episodes;              /* held-out starts (1 .. 2^20); 0: 64, with hji 256               */
    int      seed_set;              /* 0: the config's seed + 1000                                    */
    uint64_t seed;                  /* their seed                                                     */
    double   tol;                   /* own game: the refinement's tol, in (0, 1]                      */
    int      nodes;                 /* own game: the coarsest grid's nodes an axis (3 .. 100000; 0 its default) */
    int      nbox;                  /* own game: 2 x the value axes numbers in box (0: the default box) */
    double   box[2 * DG_DP_MAX_DIMS]; /* ... a low and high end for each value axis                  */
    int      max_grids;             /* own game: the most grids (3 .. DG_DP_MAX_GRIDS)                */
    int      plan_iters;            /* own game: Adam steps of each plan (0 .. 10^6; -1: the game's)  */
    int      plan_restarts;         /* own game: restarts of each plan (1 .. DG_CERTIFY_MAX_RESTARTS)  */
    int      bptt_epochs;           /* own game, two players: epochs of the BPTT route (0 .. 10^6)     */
    int      bounds;                /* own game: 1 the plans and best responses                      */
    int      exploit;               /* hji: 1 the exploitability (two 4-D solves)                     */
    dg_certify_exploit_opts xo;     /* hji: its grid (n_own 2 .. 1000, own_half in (0, 10^6])          */
    dg_certify_note_fn note;        /* progress lines (may be NULL)                                   */
    void    *user;
} dg_certify_run_opts;

/* The paths an option applies to (dg_certify_opt.paths). */
enum { DG_CERTIFY_OWN = 1, DG_CERTIFY_HJI = 2, DG_CERTIFY_SAMPLING = 4 };
typedef enum dg_certify_opt_type {
    DG_CERTIFY_OPT_INT,             /* a whole number in [lo, hi]                                     */
    DG_CERTIFY_OPT_DOUBLE,          /* a finite number in [lo, hi], an end excluded as open says      */
    DG_CERTIFY_OPT_FLAG,            /* no value on the command line; "1"/"true" or "0"/"false" as text */
    DG_CERTIFY_OPT_LIST,            /* numbers in [lo, hi] separated by commas, at most max           */
} dg_certify_opt_type;
#define DG_CERTIFY_OPEN_LO 1        /* DOUBLE: lo itself is refused                                   */
#define DG_CERTIFY_OPEN_HI 2        /* DOUBLE: hi itself is refused                                   */
/* Where a value lands in dg_certify_run_opts (at offset). */
enum { DG_CERTIFY_STORE_INT, DG_CERTIFY_STORE_I64, DG_CERTIFY_STORE_DOUBLE, DG_CERTIFY_STORE_NOT /* a flag's
       negation: no_bounds -> bounds */, DG_CERTIFY_STORE_SEED /* seed and seed_set */, DG_CERTIFY_STORE_BOX
       /* box and nbox */ };
/* One option of certify, declared once: dg_certify_run_set parses and bounds it by this line,
 * dg_certify_run_opts_default applies its def, and the command builds its option and --help line
 * from it (--name with '-' for '_'). */
typedef struct dg_certify_opt {
    const char *name;               /* "plan_iters" (the command's --plan-iters)                      */
    int         type;               /* dg_certify_opt_type                                            */
    int         paths;              /* DG_CERTIFY_OWN | _HJI | _SAMPLING: the paths that take it      */
    double      lo, hi;             /* INT, DOUBLE, LIST: the bounds                                  */
    int         open;               /* DOUBLE: DG_CERTIFY_OPEN_LO, _HI                                */
    int         max;                /* LIST: most numbers                                             */
    size_t      offset;             /* where it lands in dg_certify_run_opts ...                      */
    int         store;              /* ... and how (DG_CERTIFY_STORE_*)                               */
    const char *metavar;            /* its value's name in --help ("N")                               */
    const char *def;                /* its default as text (NULL: none, see otherwise)                */
    const char *otherwise;          /* what the path does without it, when that is no one value       */
    const char *doc;                /* its line of --help                                             */
} dg_certify_opt;
/* The options (*n of them), in the command's --help order. */
DG_API const dg_certify_opt *dg_certify_run_options(int *n);

/* The command's defaults: every dg_certify_run_options default (--tol 0.01, --max-grids 8, --plan-restarts
 * 3, --bptt-epochs 50, the bounds, the exploitability on 9 x 9 own nodes over [-4.5, 4.5]^2, the
 * sampling certificate's epsilon 1e-3 and beta 1e-6 ...). */
DG_API dg_certify_run_opts dg_certify_run_opts_default(void);
/* Sets the option named as in dg_certify_run_options, with or without the command's dashes, '-' or '_'
 * between words ("episodes", "--plan-iters", "no_bounds"; a flag's value "1"/"true" or "0"/"false")
 * from value's text. DG_ERR_ARG naming the option as given for an unknown name, a value that is no
 * number or out of its bounds, or an option of another path (set o->hji or o->value first). */
DG_API dg_status dg_certify_run_set(dg_certify_run_opts *o, const char *name, const char *value, dg_err *e);

/* What dg_certify_run found: the JSON line, and what the command shows beside it. */
typedef struct dg_certify_run_result {
    int    usage;                   /* on failure: 1 when the input is at fault (the command's exit 2) */
    int    hji;                     /* 1: the HJI path                                                 */
    int    episodes;
    char  *json;                    /* the JSON line (no newline), the command's stdout; the result's  */
    /* the learner's own game */
    dg_certify_discrete_result own;
    dg_certify_discrete_rows   rows;  /* per start (--csv)                                             */
    /* the HJI game */
    int    degree;                  /* 1: a model file's payoff: cost                                  */
    int    exploit;                 /* the exploitability was measured                                 */
    dg_certify_result cont;
    /* the sampling certificate (dg_certify_sampling_run) */
    int    sampled;                 /* 1: this path                                                    */
    dg_certify_sampling_result sampling;
    char   game[64];                /* its HJI game's name                                             */
    dg_hji_stats st;                /* the HJI solve's                                                 */
    double exploit_v[2], exploit_rel[2], exploit_seconds;
    double *pairs;                  /* (episodes, 2): V(x0) and the policy's cost, ordered by V(x0)     */
    dg_certify_quarter q[5];        /* by quarter of V(x0), then all (dg_certify_quarters)             */
    char   hji_name[64];
    int    stationary;
    double t_end;
    void  *mem_;                    /* the rows' memory                                                */
} dg_certify_run_result;

/* Certifies r's learned player(s) from o->ckpt by o and fills res (zeroed first): res->json the
 * command's JSON line. DG_OK; else e says why (res->usage 1 when it is the input's fault: a game the
 * path cannot certify, a bad option, the HJI config's error, a memory estimate over the machine's;
 * otherwise the status of the checkpoint's, a solve's or an allocation's error). Free res with
 * dg_certify_run_free either way. */
DG_API dg_status dg_certify_run(const dg_run *r, const dg_certify_run_opts *o, dg_certify_run_result *res, dg_err *e);
DG_API void      dg_certify_run_free(dg_certify_run_result *res);  /* a zeroed result is harmless */
/* `difgames certify --sampling`: the learned value o->value (a network of hji learn, for the HJI
 * config at config, trained to its t_end) certified by sampling (dg_certify_sampling, o->sampling; its
 * seed o->seed, 0 unless set; the other player on o->grid's value file's feedback, else the
 * network's) into res: res->json the command's JSON line, res->sampling the certificate. The network
 * is read in this copy's precision (the command evaluates an f64 one in its double copy). DG_OK; else
 * e says why (res->usage 1 when it is the input's fault: the config's error, a game the certificate
 * does not take, a network of another game or horizon, a grid value for a game of no grid). Free res
 * with dg_certify_run_free either way. */
DG_API dg_status dg_certify_sampling_run(const char *config, const dg_certify_run_opts *o, dg_certify_run_result *res,
                                         dg_err *e);

#ifdef __cplusplus
}
#endif
#endif
