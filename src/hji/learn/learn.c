/* Training a value network on the HJI residual (DeepReach's loop, Bansal & Tomlin 2021): the learn.*
 * keys, the network (its input scaling, file and evaluation) and the learner (sampling with the tau
 * curriculum, the residual loss, Adam). Compiled twice, like the rest of hji/learn. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/base.h"
#include "difgames/checkpoint.h"
#include "difgames/dist.h"
#include "difgames/hji_learn.h"
#include "difgames/keys.h"
#include "difgames/safetensors.h"

/* ------------------------------------------------------------------ keys */

/* The keys as read; dg_hji_learn_opts widens them. */
typedef struct learn_keys {
    int   hidden[DG_MLP_MAX_LAYERS - 1], nhidden;
    int   activation, points, iterations, pretrain, curriculum, boundary, seed, threads, resume_every, precision, schedule;
    float lr, boundary_weight, margin, focus;
} learn_keys;

static const char *const ACTIVATIONS[] = {"tanh", "sine", NULL};   /* dg_mlp_act order */
static const char *const BOUNDARIES[] = {"exact", "penalty", NULL};  /* exact 1, 0       */
static const char *const PRECISIONS[] = {"f32", "f64", NULL};        /* precision 0, 1   */
static const char *const SCHEDULES[] = {"constant", "cosine", NULL};  /* schedule 0, 1    */

static const dg_key LEARN_KEYS[] = {
    {.name = "learn.hidden", .type = DG_KEY_INT_ARRAY, .offset = offsetof(learn_keys, hidden),
     .count_offset = offsetof(learn_keys, nhidden), .min_n = 1, .max_n = DG_MLP_MAX_LAYERS - 1, .lo = 1,
     .hi = 65536, .def_v = (const double[]){64, 64, 64}, .def_n = 3, .what = "sizes",
     .doc = "hji learn: hidden layer sizes of the value network (DeepReach: [512, 512, 512])"},
    DG_K_ENUM("learn.activation", learn_keys, activation, 1, ACTIVATIONS, "activation",
              "hji learn: the hidden layers' activation, sine (SIREN, omega0 30) or tanh; the last layer linear"),
    DG_K_INT("learn.points", learn_keys, points, 2048, 1, 1 << 22, "hji learn: states sampled per iteration"),
    DG_K_INT("learn.iterations", learn_keys, iterations, 2000, 0, 100000000, "hji learn: Adam steps"),
    DG_K_F32("learn.lr", learn_keys, lr, 2e-5f, 0, 10, 0, 1, "hji learn: Adam learning rate"),
    DG_K_ENUM("learn.schedule", learn_keys, schedule, 0, SCHEDULES, "schedule",
              "hji learn: the learning rate: constant, or cosine (lr until the curriculum ends, then down to 0 at the "
              "last of learn.iterations along half a cosine)"),
    DG_K_INT("learn.pretrain", learn_keys, pretrain, 200, 0, 100000000,
             "hji learn: first iterations at tau = 0 only (penalty: the boundary term alone)"),
    DG_K_INT("learn.curriculum", learn_keys, curriculum, 1000, 0, 100000000,
             "hji learn: iterations over which the sampled tau range then grows linearly to t_end (0: at once)"),
    DG_K_ENUM("learn.boundary", learn_keys, boundary, 0, BOUNDARIES, "boundary",
              "hji learn: V(x, 0) = l(x) exact (V = l + tau N) or penalised (a loss term)"),
    DG_K_F32("learn.boundary_weight", learn_keys, boundary_weight, 1.0f, 0, 1e9, 1, 1,
             "hji learn: the penalised boundary term's weight in the loss"),
    DG_K_F32("learn.margin", learn_keys, margin, 0.0f, 0, 4, 1, 1,
             "hji learn: states are sampled in the grid box widened by margin times its width on each side of every "
             "axis that is not periodic: where the players' motion carries the value in across the box's edge, "
             "the equation inside the box alone does not fix it (air3d: 0.5)"),
    DG_K_F32("learn.focus", learn_keys, focus, 0.0f, 0, 0.9f, 1, 1,
             "hji learn: the fraction of each iteration's points drawn near the learned zero set once the "
             "pretraining is over: of four times as many uniform candidates, those with the least |V|"),
    DG_K_INT("learn.seed", learn_keys, seed, 0, 0, 2147483647, "hji learn: random seed (initial weights, samples)"),
    DG_K_INT("learn.threads", learn_keys, threads, 1, 0, DG_HJI_LEARN_MAX_SHARDS,
             "hji learn: shards of each iteration's points trained in parallel (0: one per core); the same seed and "
             "shard count give the same bits on any number of threads"),
    DG_K_INT("learn.resume_every", learn_keys, resume_every, 500, 0, 100000000,
             "hji learn: write resume.safetensors every N iterations (0: only at the end), for --resume"),
    DG_K_ENUM("learn.precision", learn_keys, precision, 0, PRECISIONS, "precision",
              "hji learn: the tape's numbers, as train.precision: f32 (float32) or f64 (double: the command's "
              "double copy trains, and the network file says f64)"),
};
#define NKEYS ((int)(sizeof LEARN_KEYS / sizeof LEARN_KEYS[0]))

const dg_key *dg_hji_learn_keys(int *n) {
    if (n) *n = NKEYS;
    return LEARN_KEYS;
}

static void opts_from_keys(const learn_keys *k, dg_hji_learn_opts *o) {
    memset(o, 0, sizeof *o);
    memcpy(o->hidden, k->hidden, sizeof o->hidden);
    o->nhidden = k->nhidden;
    o->activation = k->activation;
    o->points = k->points;
    o->iterations = k->iterations;
    o->pretrain = k->pretrain;
    o->curriculum = k->curriculum;
    o->exact = k->boundary == 0;
    o->boundary_weight = k->boundary_weight;
    o->lr = k->lr;
    o->margin = k->margin;
    o->focus = k->focus;
    o->schedule = k->schedule;
    o->seed = (uint64_t)k->seed;
    o->threads = k->threads;
    o->resume_every = k->resume_every;
    o->precision = k->precision;
    if (o->threads == 0) {  /* 0: OpenMP's default, one per core (or OMP_NUM_THREADS), as train.threads */
        const int n = omp_get_max_threads();
        o->threads = n < 1 ? 1 : n > DG_HJI_LEARN_MAX_SHARDS ? DG_HJI_LEARN_MAX_SHARDS : n;
    }
}

void dg_hji_learn_opts_default(dg_hji_learn_opts *o) {
    learn_keys k;
    memset(&k, 0, sizeof k);
    dg_keys_defaults(LEARN_KEYS, NKEYS, &k);
    opts_from_keys(&k, o);
}

dg_status dg_hji_learn_opts_read(dg_cfg *cfg, dg_hji_learn_opts *o, dg_err *e) {
    learn_keys k;
    memset(&k, 0, sizeof k);
    const dg_status s = dg_keys_read(cfg, LEARN_KEYS, NKEYS, &k, e);
    if (s == DG_OK) opts_from_keys(&k, o);
    return s;
}

/* --------------------------------------------------------------- network */

/* axis k of the box states are sampled in: p's grid box widened by margin times its width on
 * each side, unless the axis is periodic (then its period) */
static void sample_box(const dg_hji_problem *p, double margin, int k, double *lo, double *hi) {
    const double w = p->grid.bc[k] == DG_HJI_BC_PERIODIC ? 0 : margin * (p->grid.hi[k] - p->grid.lo[k]);
    *lo = p->grid.lo[k] - w;
    *hi = p->grid.hi[k] + w;
}

/* the sampled box (p's grid box, widened by margin) and horizon into net's input scaling */
static void net_scaling(dg_hji_learn_net *net, const dg_hji_problem *p, double margin) {
    net->nx = p->grid.ndim;
    net->t_end = p->t_end > 0 ? p->t_end : 1;
    for (int k = 0; k < net->nx; k++) {
        double lo, hi;
        sample_box(p, margin, k, &lo, &hi);
        net->mid[k] = 0.5 * (lo + hi);
        net->half[k] = hi > lo ? 0.5 * (hi - lo) : 1;
    }
    snprintf(net->game, sizeof net->game, "%s", p->name);
    net->mode = (int)p->opts.mode;
}

/* the MLP (nx + 1 -> hidden -> 1, act, linear last layer) into net->params */
static dg_status net_build(dg_hji_learn_net *net, const int *hidden, int nhidden, int act, dg_err *e) {
    if (!(net->params = dg_params_create())) return dg_err_set(e, DG_ERR_NOMEM, "hji learn: out of memory");
    dg_status s = dg_mlp_init(&net->mlp, net->params, "value", net->nx + 1, hidden, nhidden, 1, e);
    if (s == DG_OK) s = dg_mlp_set_activation(&net->mlp, (dg_mlp_act)act, 1, e);
    if (s != DG_OK) dg_hji_learn_net_free(net);
    return s;
}

/* DG_OK when p can be learned: a tape form, the whole grid */
static dg_status problem_ok(const dg_hji_problem *p, dg_err *e) {
    if (!p) return dg_err_set(e, DG_ERR_ARG, "hji learn: no problem");
    if (p->block_nodes) return dg_err_set(e, DG_ERR_ARG, "hji learn: the problem holds only a rank's block");
    return dg_hji_learn_check(&p->game, p->name, e);
}

dg_status dg_hji_learn_net_init(dg_hji_learn_net *net, const dg_hji_problem *p, const dg_hji_learn_opts *o,
                                dg_err *e) {
    memset(net, 0, sizeof *net);
    dg_status s = problem_ok(p, e);
    if (s != DG_OK) return s;
    if (!o || o->nhidden < 1 || o->nhidden > DG_MLP_MAX_LAYERS - 1)
        return dg_err_set(e, DG_ERR_ARG, "hji learn: 1 to %d hidden layers", DG_MLP_MAX_LAYERS - 1);
    net_scaling(net, p, o->margin);
    net->exact = o->exact;
    if ((s = net_build(net, o->hidden, o->nhidden, o->activation, e)) != DG_OK) return s;
    dg_rng rng;
    dg_rng_seed(&rng, o->seed);
    dg_mlp_reset_params(&net->mlp, net->params, &rng);
    return DG_OK;
}

void dg_hji_learn_net_free(dg_hji_learn_net *net) {
    if (!net) return;
    dg_params_free(net->params);
    memset(net, 0, sizeof *net);
}

/* "a,b,c" of n doubles (%.17g) into buf */
static void join_f64(char *buf, size_t size, const double *v, int n) {
    buf[0] = 0;
    for (int i = 0, w = 0; i < n && w >= 0 && (size_t)w < size; i++)
        w += snprintf(buf + w, size - (size_t)w, "%s%.17g", i ? "," : "", v[i]);
}

dg_status dg_hji_learn_save(const dg_hji_learn_net *net, const char *path, dg_err *e) {
    char nx[16], hidden[128] = "", exact[4], mode[8], t_end[32], mid[DG_HJI_MAX_DIMS * 26], half[DG_HJI_MAX_DIMS * 26];
    snprintf(nx, sizeof nx, "%d", net->nx);
    for (int l = 1, w = 0; l < net->mlp.nlayers && w >= 0 && (size_t)w < sizeof hidden; l++)
        w += snprintf(hidden + w, sizeof hidden - (size_t)w, "%s%d", l > 1 ? "," : "", net->mlp.sizes[l]);
    snprintf(exact, sizeof exact, "%d", net->exact);
    snprintf(mode, sizeof mode, "%d", net->mode);
    snprintf(t_end, sizeof t_end, "%.17g", net->t_end);
    join_f64(mid, sizeof mid, net->mid, net->nx);
    join_f64(half, sizeof half, net->half, net->nx);
    const char *meta[] = {"format", "difgames-hji-learn", "game", net->game, "nx", nx, "hidden", hidden,
                          "activation", net->mlp.act == DG_MLP_SINE ? "sine" : "tanh", "exact", exact, "mode", mode,
                          "t_end", t_end, "mid", mid, "half", half, "precision", DG_REAL_NAME};
    return dg_checkpoint_save(path, net->params, 0, meta, (int)(sizeof meta / sizeof meta[0]) / 2, e);
}

/* n doubles from "a,b,c" (exactly n, finite); 0 or -1 */
static int parse_f64s(const char *s, double *v, int n) {
    for (int i = 0; i < n; i++) {
        char *end;
        v[i] = strtod(s, &end);
        if (end == s || !isfinite(v[i]) || (i < n - 1 ? *end != ',' : *end != 0)) return -1;
        s = end + 1;
    }
    return 0;
}

dg_status dg_hji_learn_load(const char *path, const dg_hji_problem *p, dg_hji_learn_net *net, dg_err *e) {
    memset(net, 0, sizeof *net);
    dg_status s = problem_ok(p, e);
    if (s != DG_OK) return s;
    dg_st_file *f = dg_st_load(path, e);
    if (!f) return e->status;
    const char *fmt = dg_st_meta(f, "format"), *game = dg_st_meta(f, "game"), *nx = dg_st_meta(f, "nx"),
               *hidden = dg_st_meta(f, "hidden"), *act = dg_st_meta(f, "activation"), *exact = dg_st_meta(f, "exact"),
               *mode = dg_st_meta(f, "mode"), *t_end = dg_st_meta(f, "t_end"), *mid = dg_st_meta(f, "mid"),
               *half = dg_st_meta(f, "half"), *prec = dg_st_meta(f, "precision");  /* none: f32 (older files) */
    int h[DG_MLP_MAX_LAYERS], nh = 0;
    net_scaling(net, p, 0);
    if (!fmt || strcmp(fmt, "difgames-hji-learn") || !game || !nx || !hidden || !act || !exact || !mode || !t_end ||
        !mid || !half) {
        s = dg_err_set(e, DG_ERR_FORMAT, "%.400s: not a value network of difgames hji learn", path);
    } else if (strcmp(game, p->name) || atoi(nx) != p->grid.ndim) {
        s = dg_err_set(e, DG_ERR_ARG, "%.400s: a value network of %.32s (%s states), not of %s (%d states)", path, game,
                       nx, p->name, p->grid.ndim);
    } else {
        for (const char *c = hidden; *c && nh < DG_MLP_MAX_LAYERS - 1; nh++) {
            char *end;
            const long v = strtol(c, &end, 10);
            if (end == c || v < 1 || v > 65536) break;
            h[nh] = (int)v;
            c = *end == ',' ? end + 1 : end;
            if (!*end) {
                nh++;
                break;
            }
        }
        net->exact = atoi(exact) != 0;
        net->mode = atoi(mode);
        net->t_end = strtod(t_end, NULL);
        if (nh < 1 || (strcmp(act, "sine") && strcmp(act, "tanh")) || !(net->t_end > 0) ||
            (prec && strcmp(prec, "f32") && strcmp(prec, "f64")) ||
            parse_f64s(mid, net->mid, net->nx) || parse_f64s(half, net->half, net->nx))
            s = dg_err_set(e, DG_ERR_FORMAT, "%.400s: bad metadata of a value network", path);
        else if ((s = net_build(net, h, nh, strcmp(act, "sine") ? DG_MLP_TANH : DG_MLP_SINE, e)) == DG_OK)
            s = dg_checkpoint_load(path, net->params, e);
    }
    dg_st_free(f);
    if (s != DG_OK) dg_hji_learn_net_free(net);
    return s;
}

/* ------------------------------------------------------- one batch's value */

/* What a batch of B points needs as data: the scaled input, x, tau, l, grad l, obstacle, stop. */
typedef struct batch {
    int      B, nx;
    dg_real *in, *x, *tau, *l, *gl, *obst, *stop, *in0;
    double  *xd, *ld, *gd;                 /* the interpolations' double copies */
} batch;

static void batch_free(batch *b) {
    free(b->in), free(b->x), free(b->tau), free(b->l), free(b->gl), free(b->obst), free(b->stop), free(b->in0);
    free(b->xd), free(b->ld), free(b->gd);
    memset(b, 0, sizeof *b);
}

static dg_status batch_alloc(batch *b, int B, int nx, dg_err *e) {
    memset(b, 0, sizeof *b);
    b->B = B;
    b->nx = nx;
    const size_t n = (size_t)B, r = sizeof(dg_real);
    b->in = malloc(n * (size_t)(nx + 1) * r), b->in0 = malloc(n * (size_t)(nx + 1) * r);
    b->x = malloc(n * (size_t)nx * r), b->gl = malloc(n * (size_t)nx * r);
    b->tau = malloc(n * r), b->l = malloc(n * r), b->obst = malloc(n * r), b->stop = malloc(n * r);
    b->xd = malloc(n * (size_t)nx * sizeof(double)), b->gd = malloc(n * (size_t)nx * sizeof(double));
    b->ld = malloc(n * sizeof(double));
    if (!b->in || !b->in0 || !b->x || !b->gl || !b->tau || !b->l || !b->obst || !b->stop || !b->xd || !b->gd || !b->ld) {
        batch_free(b);
        return dg_err_set(e, DG_ERR_NOMEM, "hji learn: out of memory for %d points", B);
    }
    return DG_OK;
}

/* b's data from its states b->xd (B of them) and tau (set by the caller, in b->tau): the scaled
 * inputs, l and its gradient, the obstacle and stop values (interpolated on p's grid) */
static dg_status batch_fill(batch *b, const dg_hji_learn_net *net, const dg_hji_problem *p, int B, dg_err *e) {
    const int nx = b->nx;
    b->B = B;
    dg_status s = dg_hji_learn_target(p, B, b->xd, b->ld, b->gd, e);
    if (s != DG_OK) return s;
    for (int i = 0; i < B; i++) {
        const double *x = b->xd + (size_t)i * nx;
        for (int k = 0; k < nx; k++) {
            b->x[(size_t)i * nx + k] = (dg_real)x[k];
            b->gl[(size_t)i * nx + k] = (dg_real)b->gd[(size_t)i * nx + k];
            b->in[(size_t)i * (nx + 1) + k] = b->in0[(size_t)i * (nx + 1) + k] =
                (dg_real)((x[k] - net->mid[k]) / net->half[k]);
        }
        b->in[(size_t)i * (nx + 1) + nx] = (dg_real)(b->tau[i] / net->t_end);
        b->in0[(size_t)i * (nx + 1) + nx] = 0;
        b->l[i] = (dg_real)b->ld[i];
        double o = 0, st = 0;  /* the problem's own fields at the point, not the grid's (a game may have none) */
        if (dg_hji_problem_has_obstacle(p) && (s = dg_hji_problem_obstacle_at(p, 1, x, &o, NULL, e)) != DG_OK) return s;
        if (dg_hji_problem_has_stop(p) && (s = dg_hji_problem_stop_at(p, 1, x, &st, e)) != DG_OK) return s;
        b->obst[i] = (dg_real)o;
        b->stop[i] = (dg_real)st;
    }
    return DG_OK;
}

/* V, V_tau and grad_x V (raw units) of b's points on ctx, the network's weights from params (a view:
 * its values, a shard's gradient) */
static dg_status batch_value(dg_ctx *ctx, const dg_hji_learn_net *net, const batch *b, dg_params *params,
                             dg_tensor **V, dg_tensor **Vt, dg_tensor **g) {
    const int B = b->B, nx = b->nx;
    dg_real scale[DG_HJI_MAX_DIMS + 1];  /* d(input)/d(x, tau): the chain rule of the scaling */
    for (int k = 0; k < nx; k++) scale[k] = (dg_real)(1 / net->half[k]);
    scale[nx] = (dg_real)(1 / net->t_end);
    dg_tensor *dy = NULL;
    dg_tensor *y = dg_mlp_forward_grad(ctx, &net->mlp, params, dg_from(ctx, 2, (int[]){B, nx + 1}, b->in), &dy);
    if (!y) return dg_ctx_status(ctx);
    dy = dg_mul(ctx, dy, dg_from(ctx, 2, (int[]){1, nx + 1}, scale));
    if (!net->exact) return dg_hji_learn_value(ctx, nx, y, dy, NULL, NULL, NULL, V, Vt, g);
    return dg_hji_learn_value(ctx, nx, y, dy, dg_from(ctx, 2, (int[]){B, 1}, b->tau),
                              dg_from(ctx, 2, (int[]){B, 1}, b->l), dg_from(ctx, 2, (int[]){B, nx}, b->gl), V, Vt, g);
}

/* the value alone (no input gradient: one forward) of b's points on ctx */
static dg_tensor *batch_value_only(dg_ctx *ctx, const dg_hji_learn_net *net, const batch *b) {
    const int B = b->B, nx = b->nx;
    dg_tensor *y = dg_mlp_forward(ctx, &net->mlp, net->params, dg_from(ctx, 2, (int[]){B, nx + 1}, b->in));
    if (!net->exact) return y;
    return dg_add(ctx, dg_from(ctx, 2, (int[]){B, 1}, b->l), dg_mul(ctx, dg_from(ctx, 2, (int[]){B, 1}, b->tau), y));
}

typedef struct eval_job {
    const dg_hji_learn_net *net;
    const batch            *b;
    int                     with_grad;     /* 1: V_tau and grad_x V too (forward-mode tangents) */
    dg_tensor              *V, *Vt, *g;
} eval_job;

static dg_status eval_run(dg_ctx *ctx, void *user) {
    eval_job *j = user;
    if (!j->with_grad) {
        j->V = batch_value_only(ctx, j->net, j->b);
        return dg_ctx_status(ctx);
    }
    dg_status s = batch_value(ctx, j->net, j->b, j->net->params, &j->V, &j->Vt, &j->g);
    return s != DG_OK ? s : dg_ctx_status(ctx);
}

#define EVAL_BATCH 4096
#define EVAL_GRAD_BATCH 256

/* dg_hji_learn_eval and dg_hji_learn_eval_grad's body: V (and with_grad: V_tau, grad_x V; each may be
 * NULL) at the B points, in batches of EVAL_BATCH on one tape */
static dg_status eval_points(const dg_hji_learn_net *net, const dg_hji_problem *p, int64_t B, const double *x,
                             const double *tau, int with_grad, double *V, double *V_tau, double *grad, dg_err *e) {
    dg_status s = problem_ok(p, e);
    if (s != DG_OK) return s;
    if (!net || !net->params || net->nx != p->grid.ndim || B < 0 || (B && (!x || !tau || (!V && !with_grad))))
        return dg_err_set(e, DG_ERR_ARG, "hji learn: eval: bad arguments");
    const int nx = net->nx;
    batch b;
    /* with the gradient, EVAL_GRAD_BATCH points a tape: its arena (nx + 2 copies of every layer) stays
     * small enough to be reused from the heap, not mapped and faulted in afresh at every call (a
     * rollout calls once a step) */
    const int most = with_grad ? EVAL_GRAD_BATCH : EVAL_BATCH;
    const int cap = B < most ? (int)(B > 0 ? B : 1) : most;  /* a play's one point: a small tape */
    if ((s = batch_alloc(&b, cap, nx, e)) != DG_OK) return s;
    dg_ctx *ctx = dg_ctx_create((size_t)cap * (with_grad ? 64 * (size_t)(nx + 2) : 64) * sizeof(dg_real));
    if (!ctx) s = dg_err_set(e, DG_ERR_NOMEM, "hji learn: out of memory");
    for (int64_t i0 = 0; s == DG_OK && i0 < B; i0 += cap) {
        const int n = (int)(B - i0 < cap ? B - i0 : cap);
        memcpy(b.xd, x + i0 * nx, (size_t)n * (size_t)nx * sizeof(double));
        for (int i = 0; i < n; i++) b.tau[i] = (dg_real)tau[i0 + i];
        if ((s = batch_fill(&b, net, p, n, e)) != DG_OK) break;
        eval_job j = {net, &b, with_grad, NULL, NULL, NULL};
        if ((s = dg_ctx_run(&ctx, DG_ARENA_MAX, eval_run, &j)) != DG_OK) {
            s = dg_err_set(e, s, "hji learn: eval: %s", dg_ctx_error(ctx));
            break;
        }
        for (int i = 0; i < n; i++) {
            if (V) V[i0 + i] = j.V->data[i];
            if (V_tau) V_tau[i0 + i] = j.Vt->data[i];
            if (grad)
                for (int k = 0; k < nx; k++) grad[(i0 + i) * nx + k] = j.g->data[(size_t)i * nx + k];
        }
    }
    dg_ctx_free(ctx);
    batch_free(&b);
    return s;
}

dg_status dg_hji_learn_eval(const dg_hji_learn_net *net, const dg_hji_problem *p, int64_t B, const double *x,
                            const double *tau, double *V, dg_err *e) {
    return eval_points(net, p, B, x, tau, 0, V, NULL, NULL, e);
}

dg_status dg_hji_learn_eval_grad(const dg_hji_learn_net *net, const dg_hji_problem *p, int64_t B, const double *x,
                                 const double *tau, double *V, double *V_tau, double *grad, dg_err *e) {
    return eval_points(net, p, B, x, tau, 1, V, V_tau, grad, e);
}

/* --------------------------------------------------------------- learner */

struct focus_key { double v; int i; };   /* learn.focus: a candidate's |V| and index */

/* One shard of an iteration's points: its rows of the batch, its arena and gradient, its sums. */
typedef struct learn_shard {
    dg_ctx   *ctx;
    dg_real  *grad;                      /* (params total) this shard's gradient              */
    batch     b;                         /* a view: its rows of the learner's batch           */
    double    loss, rsum, bsum;          /* its part of the loss; sum |r|; sum (V(x, 0) - l)^2 */
    uint64_t  flops;                     /* the tape's count of its last step                 */
    dg_status status;
    char      err[256];
} learn_shard;

struct dg_hji_learner {
    const dg_hji_problem *p;
    dg_hji_learn_opts     o;
    dg_hji_learn_net      net;
    dg_adam               adam;
    dg_rng                rng;           /* the samples' stream (the weights' is o.seed's own)  */
    batch                 b;             /* the whole iteration's points                       */
    int                   nshards;
    learn_shard           sh[DG_HJI_LEARN_MAX_SHARDS];
    int                   it;            /* steps taken                                        */
    double                flops;
    int                   boundary_only; /* penalised pretraining                              */
    double               *cx, *ct, *cv;  /* learn.focus: candidates' states, times, values        */
    struct focus_key     *ci;            /* and their order                                    */
};

/* learn.focus: of FOCUS_CANDIDATES times as many uniform candidates, the focused points are those
 * with the least |V| */
#define FOCUS_CANDIDATES 4

dg_hji_learner *dg_hji_learner_create(const dg_hji_problem *p, const dg_hji_learn_opts *o, dg_err *e) {
    if (!o || o->points < 1 || !(o->lr > 0) || o->iterations < 0 || o->pretrain < 0 || o->curriculum < 0 ||
        o->threads > DG_HJI_LEARN_MAX_SHARDS || !(o->margin >= 0 && o->margin <= 4) ||
        !(o->focus >= 0 && o->focus <= 0.9)) {
        dg_err_set(e, DG_ERR_ARG, "hji learn: bad options (points >= 1, lr > 0, iterations, pretrain, curriculum >= 0, "
                   "threads <= %d, 0 <= margin <= 4, 0 <= focus <= 0.9)", DG_HJI_LEARN_MAX_SHARDS);
        return NULL;
    }
    if (dg_hji_problem_moving(p)) {   /* its residual and boundary term read the sets of one time */
        dg_err_set(e, DG_ERR_ARG, "hji learn: %s: %s moves in time: hji learn learns fixed sets (hji solve takes it)",
                   p->name, dg_hji_problem_moving(p));
        return NULL;
    }
    if (p && dg_hji_game_noisy(&p->game)) {   /* its residual has no second-order term */
        dg_err_set(e, DG_ERR_ARG, "hji learn: %s has noise (a diffusion term): hji learn's residual is first order "
                   "(hji solve takes it)", p->name);
        return NULL;
    }
    dg_hji_learner *L = calloc(1, sizeof *L);
    if (!L) {
        dg_err_set(e, DG_ERR_NOMEM, "hji learn: out of memory");
        return NULL;
    }
    L->p = p;
    L->o = *o;
    if (dg_hji_learn_net_init(&L->net, p, o, e) != DG_OK) {
        free(L);
        return NULL;
    }
    /* a stream of samples apart from the weights' (seeded by o->seed itself) */
    dg_rng_seed(&L->rng, o->seed ^ 0x9e3779b97f4a7c15ull);
    const int B = o->points, nx = L->net.nx;
    /* at most one shard a point; each shard's rows B / n, the first B % n one more (train's cut) */
    L->nshards = o->threads < 1 ? 1 : o->threads < B ? o->threads : B;
    const int rows_max = (B + L->nshards - 1) / L->nshards;
    /* a first guess of a shard's tape: (nx + 2) copies of every layer's activations, and their gradients */
    int64_t width = 0;
    for (int l = 1; l <= L->net.mlp.nlayers; l++) width += L->net.mlp.sizes[l];
    const size_t guess = (size_t)rows_max * (size_t)width * (size_t)(nx + 2) * sizeof(dg_real) * 8 + ((size_t)1 << 20);
    int ok = batch_alloc(&L->b, B, nx, e) == DG_OK &&
             dg_adam_init(&L->adam, L->net.params, o->lr, 0.9, 0.999, 1e-8, 0) == DG_OK;
    const size_t nc = (size_t)FOCUS_CANDIDATES * (size_t)(o->focus * B);
    if (ok && nc > 0) {
        L->cx = malloc(nc * (size_t)nx * sizeof *L->cx), L->ct = malloc(nc * sizeof *L->ct);
        L->cv = malloc(nc * sizeof *L->cv), L->ci = malloc(nc * sizeof *L->ci);
        ok = L->cx && L->ct && L->cv && L->ci;
    }
    int lo, hi;   /* under mpirun an arena for this rank's shards only (dg_dist_block) */
    dg_dist_block(L->nshards, &lo, &hi);
    for (int s = 0; ok && s < L->nshards; s++) {
        learn_shard *sh = &L->sh[s];
        ok = (s < lo || s >= hi || (sh->ctx = dg_ctx_create(guess))) &&
             (sh->grad = calloc(L->net.params->total, sizeof(dg_real)));
    }
    if (!ok) {
        if (e->status == DG_OK) dg_err_set(e, DG_ERR_NOMEM, "hji learn: out of memory for %d points", B);
        dg_hji_learner_free(L);
        return NULL;
    }
    return L;
}

void dg_hji_learner_free(dg_hji_learner *L) {
    if (!L) return;
    for (int s = 0; s < L->nshards; s++) {
        dg_ctx_free(L->sh[s].ctx);
        free(L->sh[s].grad);
    }
    dg_adam_free(&L->adam);
    batch_free(&L->b);
    free(L->cx), free(L->ct), free(L->cv), free(L->ci);
    dg_hji_learn_net_free(&L->net);
    free(L);
}

dg_hji_learn_net *dg_hji_learner_net(dg_hji_learner *L) { return L ? &L->net : NULL; }
double dg_hji_learner_flops(const dg_hji_learner *L) { return L ? L->flops : 0; }
int dg_hji_learner_shards(const dg_hji_learner *L) { return L ? L->nshards : 0; }

int dg_hji_learner_points(const dg_hji_learner *L, const double **x, const dg_real **tau) {
    if (x) *x = L ? L->b.xd : NULL;
    if (tau) *tau = L ? L->b.tau : NULL;
    return L ? L->o.points : 0;
}

/* the curriculum's tau_max at step it (0-based) */
static double tau_max_at(const dg_hji_learn_opts *o, double T, int it) {
    if (it < o->pretrain) return 0;
    if (o->curriculum <= 0) return T;
    const double f = (double)(it - o->pretrain + 1) / o->curriculum;
    return f >= 1 ? T : T * f;
}

double dg_hji_learn_lr(const dg_hji_learn_opts *o, int it) {
    const int t0 = o->pretrain + o->curriculum, n = o->iterations - t0;
    if (o->schedule != 1 || it < t0 || n <= 0) return o->lr;
    const double f = (double)(it - t0) / n;
    return f >= 1 ? 0 : o->lr * 0.5 * (1 + cos(3.14159265358979323846 * f));
}

/* rows [r0, r0 + n) of b, as a batch of n points (no copy) */
static batch batch_rows(const batch *b, int r0, int n) {
    const size_t nx = (size_t)b->nx, r = (size_t)r0;
    return (batch){.B = n, .nx = b->nx, .in = b->in + r * (nx + 1), .in0 = b->in0 + r * (nx + 1),
                   .x = b->x + r * nx, .gl = b->gl + r * nx, .tau = b->tau + r, .l = b->l + r, .obst = b->obst + r,
                   .stop = b->stop + r, .xd = b->xd + r * nx, .gd = b->gd + r * nx, .ld = b->ld + r};
}

/* Under mpirun: each shard's sums, status and gradient from the rank that ran it to every rank
 * (copies), so that every rank sums the shards in shard order as one process does. */
static dg_status share_shards(dg_hji_learner *L, dg_err *e) {
    enum { K = 7 };
    void *ptr[DG_HJI_LEARN_MAX_SHARDS * K];
    const size_t bytes[K] = {sizeof(double), sizeof(double), sizeof(double), sizeof(uint64_t), sizeof(dg_status),
                             sizeof L->sh[0].err, L->net.params->total * sizeof(dg_real)};
    for (int s = 0; s < L->nshards; s++) {
        learn_shard *sh = &L->sh[s];
        void *const p[K] = {&sh->loss, &sh->rsum, &sh->bsum, &sh->flops, &sh->status, sh->err, sh->grad};
        memcpy(ptr + (size_t)s * K, p, sizeof p);
    }
    return dg_dist_share_blocks(L->nshards, K, ptr, bytes, e);
}

/* One shard's job: the learner, the shard, its view of the parameters (their values, its gradient). */
typedef struct shard_job { const dg_hji_learner *L; learn_shard *sh; dg_params *view; } shard_job;

/* one shard's part of the loss, sum(r^2) / B (+ the weighted boundary sum / B), and its backward into
 * the shard's gradient, B the whole iteration's points (repeatable: dg_ctx_run) */
static dg_status shard_step(dg_ctx *ctx, void *user) {
    shard_job *j = user;
    const dg_hji_learner *L = j->L;
    learn_shard *sh = j->sh;
    const batch *b = &sh->b;
    const int B = b->B;
    const dg_real inv = (dg_real)(1.0 / L->o.points);
    dg_tensor *loss = NULL, *bnd = NULL, *r = NULL;
    if (!L->boundary_only) {
        dg_tensor *V, *Vt, *g;
        if (batch_value(ctx, &L->net, b, j->view, &V, &Vt, &g) != DG_OK) return dg_ctx_status(ctx);
        const dg_hji_problem *p = L->p;
        dg_hji_learn_eq eq = {.mode = p->opts.mode, .l = dg_from(ctx, 2, (int[]){B, 1}, b->l), .cap = p->opts.cap};
        if (dg_hji_problem_has_obstacle(p)) eq.obstacle = dg_from(ctx, 2, (int[]){B, 1}, b->obst);
        if (dg_hji_problem_has_stop(p)) eq.stop = dg_from(ctx, 2, (int[]){B, 1}, b->stop);
        r = dg_hji_learn_residual(ctx, &p->game, &eq, dg_from(ctx, 2, (int[]){B, b->nx}, b->x), V, Vt, g);
        loss = dg_scale(ctx, dg_sum(ctx, dg_square(ctx, r)), inv);
    }
    if (!L->net.exact) {   /* the boundary term at the same states, tau = 0 */
        dg_tensor *y0 = dg_mlp_forward(ctx, &L->net.mlp, j->view, dg_from(ctx, 2, (int[]){B, b->nx + 1}, b->in0));
        bnd = dg_sum(ctx, dg_square(ctx, dg_sub(ctx, y0, dg_from(ctx, 2, (int[]){B, 1}, b->l))));
        dg_tensor *wb = dg_scale(ctx, bnd, (dg_real)(L->o.boundary_weight / L->o.points));
        loss = loss ? dg_add(ctx, loss, wb) : wb;
    }
    if (dg_ctx_status(ctx) != DG_OK) return dg_ctx_status(ctx);
    memset(j->view->grad, 0, j->view->total * sizeof(dg_real));
    const dg_status s = dg_backward(ctx, loss);
    if (s != DG_OK) return s;
    sh->loss = loss->data[0];
    sh->bsum = bnd ? bnd->data[0] : 0;
    double sum = 0;
    for (int i = 0; r && i < B; i++) sum += fabs((double)r->data[i]);
    sh->rsum = sum;
    return DG_OK;
}

/* candidates by |V|, then by index (a total order: the same choice on every rank) */
static int focus_cmp(const void *a, const void *b) {
    const struct focus_key *u = a, *w = b;
    return u->v < w->v ? -1 : u->v > w->v ? 1 : (u->i > w->i) - (u->i < w->i);
}

/* learn.focus: the last F rows of L's batch, from FOCUS_CANDIDATES * F uniform candidates in the box
 * [blo, bhi] and [0, tmax] (drawn after the uniform rows, from the same stream): those with the least
 * |V_theta|, in that order. The candidates are evaluated in the shards' cut (each shard's rows on a
 * thread of its own), every rank all of them, so the choice depends on the seed and shard count only. */
static dg_status focus_rows(dg_hji_learner *L, int F, double tmax, const double *blo, const double *bhi, dg_err *e) {
    const dg_hji_problem *p = L->p;
    const int nx = L->net.nx, C = FOCUS_CANDIDATES * F, B = L->o.points, ns = L->nshards;
    for (int i = 0; i < C; i++)
        for (int k = 0; k < nx; k++)
            L->cx[(size_t)i * nx + k] = blo[k] + (bhi[k] - blo[k]) * (double)dg_rng_uniform(&L->rng, 0, 1);
    for (int i = 0; i < C; i++) L->ct[i] = (double)(dg_real)(tmax * (double)dg_rng_uniform(&L->rng, 0, 1));
    dg_status st[DG_HJI_LEARN_MAX_SHARDS];
    char msg[DG_HJI_LEARN_MAX_SHARDS][256];
#pragma omp parallel for schedule(static, 1)
    for (int s = 0; s < ns; s++) {
        const int rows = C / ns + (s < C % ns), row0 = s * (C / ns) + (s < C % ns ? s : C % ns);
        dg_err es = {0};
        st[s] = dg_hji_learn_eval(&L->net, p, rows, L->cx + (size_t)row0 * nx, L->ct + row0, L->cv + row0, &es);
        snprintf(msg[s], sizeof msg[s], "%.200s", es.msg);
    }
    for (int s = 0; s < ns; s++)
        if (st[s] != DG_OK) return dg_err_set(e, st[s], "hji learn: focus: %s", msg[s]);
    for (int i = 0; i < C; i++) L->ci[i] = (struct focus_key){fabs(L->cv[i]), i};
    qsort(L->ci, (size_t)C, sizeof *L->ci, focus_cmp);
    for (int i = 0; i < F; i++) {
        const int c = L->ci[i].i, r = B - F + i;
        memcpy(L->b.xd + (size_t)r * nx, L->cx + (size_t)c * nx, (size_t)nx * sizeof(double));
        L->b.tau[r] = (dg_real)L->ct[c];
    }
    return DG_OK;
}

dg_status dg_hji_learner_step(dg_hji_learner *L, dg_hji_learn_metrics *m, dg_err *e) {
    if (!L) return dg_err_set(e, DG_ERR_ARG, "hji learn: no learner");
    const double t0 = dg_clock_s();
    const dg_hji_problem *p = L->p;
    const int B = L->o.points, nx = L->net.nx, ns = L->nshards;
    const double tmax = tau_max_at(&L->o, p->t_end, L->it);
    /* the samples, drawn in a fixed order from one stream before the split: states, then times (the
     * same points whatever the shard count) */
    double blo[DG_HJI_MAX_DIMS], bhi[DG_HJI_MAX_DIMS];
    for (int k = 0; k < nx; k++) sample_box(p, L->o.margin, k, &blo[k], &bhi[k]);
    const int F = L->cx && L->it >= L->o.pretrain ? (int)(L->o.focus * B) : 0;   /* the focused rows, last */
    for (int i = 0; i < B - F; i++)
        for (int k = 0; k < nx; k++)
            L->b.xd[(size_t)i * nx + k] = blo[k] + (bhi[k] - blo[k]) * (double)dg_rng_uniform(&L->rng, 0, 1);
    for (int i = 0; i < B - F; i++)
        L->b.tau[i] = tmax > 0 ? (dg_real)(tmax * (double)dg_rng_uniform(&L->rng, 0, 1)) : 0;
    if (F > 0) {
        const dg_status fs = focus_rows(L, F, tmax, blo, bhi, e);
        if (fs != DG_OK) return fs;
    }
    L->boundary_only = !L->net.exact && L->it < L->o.pretrain;
    int lo, hi;   /* this rank's shards (all of them alone); under mpirun the others' arrive below */
    dg_dist_block(ns, &lo, &hi);
    const int nth = omp_get_max_threads() < hi - lo ? omp_get_max_threads() : hi - lo;
    /* each shard fills its rows' data and runs its tape, on whatever thread; the sums below are in shard
     * order, so the bits depend on the shard count alone (not on the threads or ranks) */
#pragma omp parallel for num_threads(nth > 0 ? nth : 1) schedule(static, 1)
    for (int s = lo; s < hi; s++) {
        learn_shard *sh = &L->sh[s];
        const int rows = B / ns + (s < B % ns), row0 = s * (B / ns) + (s < B % ns ? s : B % ns);
        sh->b = batch_rows(&L->b, row0, rows);
        dg_err es = {0};
        sh->status = batch_fill(&sh->b, &L->net, p, rows, &es);
        if (sh->status != DG_OK) {
            snprintf(sh->err, sizeof sh->err, "%.200s", es.msg);
            continue;
        }
        dg_params view = *L->net.params;
        view.grad = sh->grad;
        shard_job j = {L, sh, &view};
        const uint64_t f0 = dg_ctx_flops(sh->ctx);
        sh->status = dg_ctx_run(&sh->ctx, DG_ARENA_MAX, shard_step, &j);
        const uint64_t f1 = dg_ctx_flops(sh->ctx);   /* a context replaced by dg_ctx_run counts from 0 */
        sh->flops = f1 >= f0 ? f1 - f0 : f1;
        if (sh->status != DG_OK)
            snprintf(sh->err, sizeof sh->err, "iteration %d: %s", L->it + 1, dg_ctx_error(sh->ctx));
    }
    dg_status st = dg_dist_size() > 1 ? share_shards(L, e) : DG_OK;
    if (st != DG_OK) return st;
    double loss = 0, rsum = 0, bsum = 0, flops = 0;
    const size_t total = L->net.params->total;
    dg_real *grad = L->net.params->grad;
    memset(grad, 0, total * sizeof(dg_real));
    for (int s = 0; s < ns; s++) {  /* fixed order: deterministic sums */
        const learn_shard *sh = &L->sh[s];
        if (sh->status != DG_OK) return dg_err_set(e, sh->status, "hji learn: %s", sh->err);
        loss += sh->loss, rsum += sh->rsum, bsum += sh->bsum, flops += (double)sh->flops;
        for (size_t i = 0; i < total; i++) grad[i] += sh->grad[i];
    }
    L->flops = flops;
    if (!isfinite(loss))
        return dg_err_set(e, DG_ERR_NONFINITE, "hji learn: iteration %d: the loss is not finite (lower learn.lr)",
                          L->it + 1);
    L->adam.lr = dg_hji_learn_lr(&L->o, L->it);
    dg_adam_step(&L->adam, L->net.params);
    L->it++;
    if (m) *m = (dg_hji_learn_metrics){.iteration = L->it, .loss = loss, .residual = L->boundary_only ? 0 : rsum / B,
                                       .boundary = L->net.exact ? 0 : bsum / B, .tau_max = tmax,
                                       .seconds = dg_clock_s() - t0};
    return DG_OK;
}

int dg_hji_learner_iteration(const dg_hji_learner *L) { return L ? L->it : 0; }

#define METRIC_COLS 6   /* iteration, loss, residual, boundary, tau_max, seconds */

dg_status dg_hji_learner_save(const dg_hji_learner *L, const char *path, const char *config,
                              const dg_hji_learn_metrics *m, int n, dg_err *e) {
    if (!L || !path || n < 0 || (n && !m)) return dg_err_set(e, DG_ERR_ARG, "hji learn: save: bad arguments");
    char it[16], step[32], rng[40], pts[16], thr[16];
    snprintf(it, sizeof it, "%d", L->it);
    snprintf(step, sizeof step, "%lld", (long long)L->adam.step);
    snprintf(rng, sizeof rng, "%016llx%016llx", (unsigned long long)L->rng.s[0], (unsigned long long)L->rng.s[1]);
    snprintf(pts, sizeof pts, "%d", L->o.points);
    snprintf(thr, sizeof thr, "%d", L->nshards);
    dg_st_writer *w = dg_st_writer_create();
    double *table = malloc(((size_t)n + 1) * METRIC_COLS * sizeof(double));
    dg_status s = w && table ? DG_OK : dg_err_set(e, DG_ERR_NOMEM, "hji learn: out of memory");
    for (int r = 0; s == DG_OK && r < n; r++) {
        double *row = table + (size_t)r * METRIC_COLS;
        row[0] = m[r].iteration, row[1] = m[r].loss, row[2] = m[r].residual, row[3] = m[r].boundary;
        row[4] = m[r].tau_max, row[5] = m[r].seconds;
    }
    const dg_params *p = L->net.params;
    const int64_t total = (int64_t)p->total;
    for (int i = 0; s == DG_OK && i < p->count; i++) {
        int64_t shape[DG_MAX_DIMS];
        for (int d = 0; d < p->info[i].ndim; d++) shape[d] = p->info[i].shape[d];
        s = dg_st_writer_add(w, p->info[i].name, DG_DTYPE_REAL, p->info[i].ndim, shape, p->data + p->info[i].offset, e);
    }
    if (s == DG_OK) s = dg_st_writer_add(w, "optim.adam.m", DG_DTYPE_REAL, 1, &total, L->adam.m, e);
    if (s == DG_OK) s = dg_st_writer_add(w, "optim.adam.v", DG_DTYPE_REAL, 1, &total, L->adam.v, e);
    if (s == DG_OK) s = dg_st_writer_add(w, "metrics", DG_DTYPE_F64, 2, (int64_t[]){n, METRIC_COLS}, table, e);
    const char *meta[][2] = {{"format", "difgames-hji-learn-resume"}, {"game", L->net.game}, {"iteration", it},
                             {"adam_step", step}, {"rng", rng}, {"points", pts}, {"threads", thr},
                             {"precision", DG_REAL_NAME}, {"config", config ? config : ""}};
    for (size_t i = 0; s == DG_OK && i < sizeof meta / sizeof meta[0]; i++) s = dg_st_writer_meta(w, meta[i][0], meta[i][1], e);
    if (s == DG_OK) s = dg_st_writer_write(w, path, e);
    dg_st_writer_free(w);
    free(table);
    return s;
}

dg_status dg_hji_learner_restore(dg_hji_learner *L, const char *path, dg_hji_learn_metrics *m, int cap, int *n,
                                 dg_err *e) {
    if (!L || !path || !n || cap < 0) return dg_err_set(e, DG_ERR_ARG, "hji learn: restore: bad arguments");
    dg_st_file *f = dg_st_load(path, e);
    if (!f) return e->status;
    const char *fmt = dg_st_meta(f, "format"), *game = dg_st_meta(f, "game"), *it = dg_st_meta(f, "iteration"),
               *step = dg_st_meta(f, "adam_step"), *rng = dg_st_meta(f, "rng"), *pts = dg_st_meta(f, "points"),
               *thr = dg_st_meta(f, "threads"), *prec = dg_st_meta(f, "precision");
    const dg_st_tensor *mt = dg_st_find(f, "metrics");
    const dg_params *p = L->net.params;
    const size_t total = p->total;
    unsigned long long r0 = 0, r1 = 0;
    dg_status s = DG_OK;
    if (!fmt || strcmp(fmt, "difgames-hji-learn-resume") || !game || !it || !step || !rng || !pts || !thr || !prec ||
        !mt || mt->ndim != 2 || mt->shape[1] != METRIC_COLS || sscanf(rng, "%16llx%16llx", &r0, &r1) != 2)
        s = dg_err_set(e, DG_ERR_FORMAT, "%.400s: not a resume file of difgames hji learn", path);
    else if (strcmp(game, L->net.game) || atoi(pts) != L->o.points || atoi(thr) != L->nshards || strcmp(prec, DG_REAL_NAME))
        s = dg_err_set(e, DG_ERR_FORMAT, "%.400s: a run of %.32s, %s points, %s shards, %s (not %s, %d, %d, %s)", path,
                       game, pts, thr, prec, L->net.game, L->o.points, L->nshards, DG_REAL_NAME);
    else if (mt->shape[0] > cap || atoi(it) < 0)
        s = dg_err_set(e, DG_ERR_FORMAT, "%.400s: %lld metrics rows, room for %d", path, (long long)mt->shape[0], cap);
    dg_real *w = s == DG_OK ? malloc(3 * total * sizeof(dg_real)) : NULL;
    double *table = s == DG_OK ? malloc(((size_t)mt->shape[0] + 1) * METRIC_COLS * sizeof(double)) : NULL;
    if (s == DG_OK && (!w || !table)) s = dg_err_set(e, DG_ERR_NOMEM, "hji learn: out of memory");
    for (int i = 0; s == DG_OK && i < p->count; i++) {   /* into a copy first: L unchanged on error */
        int64_t shape[DG_MAX_DIMS];
        for (int d = 0; d < p->info[i].ndim; d++) shape[d] = p->info[i].shape[d];
        s = dg_st_read(f, p->info[i].name, DG_DTYPE_REAL, p->info[i].ndim, shape, w + p->info[i].offset, e);
    }
    const int64_t t1 = (int64_t)total;
    if (s == DG_OK) s = dg_st_read(f, "optim.adam.m", DG_DTYPE_REAL, 1, &t1, w + total, e);
    if (s == DG_OK) s = dg_st_read(f, "optim.adam.v", DG_DTYPE_REAL, 1, &t1, w + 2 * total, e);
    if (s == DG_OK) s = dg_st_read(f, "metrics", DG_DTYPE_F64, 2, (int64_t[]){mt->shape[0], METRIC_COLS}, table, e);
    if (s == DG_OK) {
        memcpy(p->data, w, total * sizeof(dg_real));
        memcpy(L->adam.m, w + total, total * sizeof(dg_real));
        memcpy(L->adam.v, w + 2 * total, total * sizeof(dg_real));
        L->adam.step = strtoll(step, NULL, 10);
        L->it = atoi(it);
        L->rng.s[0] = r0, L->rng.s[1] = r1;
        *n = (int)mt->shape[0];
        for (int r = 0; r < *n; r++) {
            const double *row = table + (size_t)r * METRIC_COLS;
            m[r] = (dg_hji_learn_metrics){.iteration = (int)row[0], .loss = row[1], .residual = row[2],
                                          .boundary = row[3], .tau_max = row[4], .seconds = row[5]};
        }
    }
    free(w), free(table);
    dg_st_free(f);
    return s;
}
