/* The value of the learner's own discrete game by dynamic programming (certify_dp.h): the game's
 * step and per-row costs evaluated on the tape, forward only, over chunks of (node, action pair)
 * rows; a semi-Lagrangian Bellman-Isaacs recursion over the H steps on a grid of the value state. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/certify_dp.h"
#include "difgames/memory.h"

#define DP_ROWS 8192        /* (node, action pair) rows of one evaluation on the tape          */
#define DP_PROBE_ROWS 256   /* rows of the probe that measures the tape's bytes per row        */
#define DP_BOX_DRAWS 4096   /* reset draws behind dg_dp_box                                    */

int dg_dp_dims(const dg_env *env) { return env->value_dim > 0 ? env->value_dim : env->state_dim; }

/* components of the adversarial input no one learns (dg_env_free_inputs), 0 when none */
static int adversary_dim(const dg_env *env) {
    dg_env_input in[2];
    const int nf = dg_env_free_inputs(env, in, 2);
    for (int k = 0; k < nf && k < 2; k++)
        if (in[k].play == DG_INPUT_ADVERSARIAL) return in[k].dim;
    return 0;
}

int dg_dp_nvalues(const dg_env *env) { return env->nplayers == 2 || adversary_dim(env) ? 2 : 1; }

void dg_dp_state(const dg_env *env, const dg_real *s, double *x) {
    if (env->value_dim <= 0) {
        for (int k = 0; k < env->state_dim; k++) x[k] = s[k];
        return;
    }
    for (int k = 0; k < env->value_dim; k++)  /* in the tape's precision, as the game computes it */
        x[k] = env->value_minus[k] >= 0 ? (double)(s[env->value_plus[k]] - s[env->value_minus[k]])
                                        : (double)s[env->value_plus[k]];
}

/* The learning state that stands for value state x: the declared columns, every other entry 0. */
static void lift(const dg_env *env, const double *x, dg_real *s) {
    if (env->value_dim <= 0) {
        for (int k = 0; k < env->state_dim; k++) s[k] = (dg_real)x[k];
        return;
    }
    memset(s, 0, sizeof(dg_real) * (size_t)env->state_dim);
    for (int k = 0; k < env->value_dim; k++) s[env->value_plus[k]] = (dg_real)x[k];
}

dg_status dg_dp_check(const dg_env *env, dg_err *e) {
    if (!env || !env->game) return dg_err_set(e, DG_ERR_ARG, "dp: no game");
    const char *name = env->game->name ? env->game->name : "?";
    if (env->plan_steps)
        return dg_err_set(e, DG_ERR_ARG, "dp: the game %s is played by an open-loop plan, not a feedback", name);
    if (!env->game->step_cost_rows)
        return dg_err_set(e, DG_ERR_ARG, "dp: the game %s does not declare its costs per row (dg_game.step_cost_rows): "
                          "its discrete value cannot be computed", name);
    if (env->nplayers != 1 && env->nplayers != 2)
        return dg_err_set(e, DG_ERR_ARG, "dp: %d players (1 or 2 learned players)", env->nplayers);
    if (env->act_dim > DG_DP_MAX_ACT || (env->nplayers == 2 && env->act2_dim > DG_DP_MAX_ACT))
        return dg_err_set(e, DG_ERR_ARG, "dp: a player of %d action components (the search covers %d at most)",
                          env->act_dim > DG_DP_MAX_ACT ? env->act_dim : env->act2_dim, DG_DP_MAX_ACT);
    if (dg_dp_dims(env) > DG_DP_MAX_DIMS || (env->value_dim > 0 && env->value_dim > env->state_dim))
        return dg_err_set(e, DG_ERR_ARG, "dp: %d value axes (at most %d: the game may declare a reduced value "
                          "state, dg_env.value_dim)", dg_dp_dims(env), DG_DP_MAX_DIMS);
    dg_env_input in[2];
    const int nf = dg_env_free_inputs(env, in, 2);
    for (int k = 0; k < nf && k < 2; k++) {  /* inputs no learned player controls: declared, one adversary */
        if (in[k].play == DG_INPUT_UNDECLARED)
            return dg_err_set(e, DG_ERR_ARG, "dp: the input '%s' of %s is played by no learned player: declare "
                              "how (model.inputs.%s.play: hold, or adversarial)", in[k].name, name, in[k].name);
        if (in[k].play == DG_INPUT_ADVERSARIAL && (env->nplayers == 2 || in[k].dim > DG_DP_MAX_ACT))
            return dg_err_set(e, DG_ERR_ARG, "dp: the adversarial input '%s' of %s: %s", in[k].name, name,
                              env->nplayers == 2 ? "the game has a learned maximiser already"
                                                 : "more components than the search covers");
    }
    for (int k = 0; k < env->value_dim; k++)  /* a plugin's declaration: columns of its state */
        if (env->value_plus[k] < 0 || env->value_plus[k] >= env->state_dim || env->value_minus[k] >= env->state_dim ||
            env->value_minus[k] == env->value_plus[k])
            return dg_err_set(e, DG_ERR_ARG, "dp: the game %s declares value axis %d as state columns %d - %d (of %d)",
                              name, k, env->value_plus[k], env->value_minus[k], env->state_dim);
    return DG_OK;
}

dg_status dg_dp_box(const dg_env *env, const dg_dp_opts *o, double *lo, double *hi, dg_err *e) {
    dg_status rc = dg_dp_check(env, e);
    if (rc != DG_OK) return rc;
    const int d = dg_dp_dims(env), S = env->state_dim;
    const double margin = o->margin > 0 ? o->margin : 0.25;
    if (!(margin >= 0 && margin <= 100)) return dg_err_set(e, DG_ERR_ARG, "dp: margin %g (0 to 100)", o->margin);
    dg_real *s = malloc((size_t)DP_BOX_DRAWS * S * sizeof(dg_real));
    dg_real *a = malloc((size_t)DP_BOX_DRAWS * (env->aux_dim ? env->aux_dim : 1) * sizeof(dg_real));
    if (!s || !a) {
        free(s);
        free(a);
        return dg_err_set(e, DG_ERR_NOMEM, "dp: out of memory");
    }
    dg_rng rng;
    dg_rng_seed(&rng, o->seed);
    rc = env->game->reset(env, &rng, DP_BOX_DRAWS, s, a, e);
    double mn[DG_DP_MAX_DIMS], mx[DG_DP_MAX_DIMS];
    for (int k = 0; k < d; k++) mn[k] = INFINITY, mx[k] = -INFINITY;
    for (int i = 0; i < DP_BOX_DRAWS && rc == DG_OK; i++) {
        double x[DG_DP_MAX_DIMS];
        dg_dp_state(env, s + (size_t)i * S, x);
        for (int k = 0; k < d; k++) mn[k] = fmin(mn[k], x[k]), mx[k] = fmax(mx[k], x[k]);
    }
    free(s);
    free(a);
    for (int k = 0; k < d && rc == DG_OK; k++) {
        if (o->lo[k] < o->hi[k]) {  /* declared */
            lo[k] = o->lo[k];
            hi[k] = o->hi[k];
            continue;
        }
        const double span = mx[k] - mn[k];
        if (!(span > 0) || !isfinite(span))
            rc = dg_err_set(e, DG_ERR_ARG, "dp: the reset draws value axis %d at %g alone: give its bounds (lo, "
                            "hi; certify --box)",
                            k, mn[k]);
        lo[k] = mn[k] - margin * span;
        hi[k] = mx[k] + margin * span;
    }
    return rc;
}

/* ------------------------------------------------------------------- the grid */

typedef struct grid {
    int     d;
    int     n[DG_DP_MAX_DIMS];
    double  lo[DG_DP_MAX_DIMS], h[DG_DP_MAX_DIMS], hi[DG_DP_MAX_DIMS];
    int64_t stride[DG_DP_MAX_DIMS], nodes;
} grid;

static void node_x(const grid *g, int64_t i, double *x) {
    for (int k = g->d - 1; k >= 0; k--) {
        x[k] = g->lo[k] + (double)(i % g->n[k]) * g->h[k];
        i /= g->n[k];
    }
}

/* V at x, multilinear; a coordinate off the box reads the edge (*outside set) */
static double interp(const grid *g, const double *V, const double *x, int *outside) {
    int64_t off[1 << DG_DP_MAX_DIMS];
    double w[1 << DG_DP_MAX_DIMS];
    off[0] = 0;
    w[0] = 1;
    int nc = 1;
    for (int k = 0; k < g->d; k++) {
        double u = (x[k] - g->lo[k]) / g->h[k];
        const double top = g->n[k] - 1;
        if (!(u >= 0)) {  /* NaN too */
            *outside |= !(u > -1e-9);
            u = 0;
        } else if (u > top) {
            *outside |= u > top + 1e-9;
            u = top;
        }
        int j = (int)u;
        if (j > g->n[k] - 2) j = g->n[k] - 2;
        const double t = u - j;
        const int64_t o = j * g->stride[k];
        for (int c = 0; c < nc; c++) {  /* the corners so far, each split along axis k */
            off[c + nc] = off[c] + o + g->stride[k];
            w[c + nc] = w[c] * t;
            off[c] += o;
            w[c] *= 1 - t;
        }
        nc *= 2;
    }
    double sum = 0;
    for (int c = 0; c < nc; c++)
        if (w[c] != 0) sum += w[c] * V[off[c]];
    return sum;
}

/* the grid a solved value lies on */
static grid grid_of(const dg_dp_value *v) {
    grid g = {.d = v->ndim, .nodes = v->nodes};
    int64_t st = 1;
    for (int k = v->ndim - 1; k >= 0; k--) {
        g.n[k] = v->n[k];
        g.lo[k] = v->lo[k];
        g.hi[k] = v->hi[k];
        g.h[k] = (v->hi[k] - v->lo[k]) / (v->n[k] - 1);
        g.stride[k] = st;
        st *= v->n[k];
    }
    return g;
}

double dg_dp_value_at(const dg_env *env, const dg_dp_value *v, int which, const dg_real *s) {
    if (!v || which < 0 || which >= v->nvalues || !v->v[which]) return NAN;
    const grid g = grid_of(v);
    double x[DG_DP_MAX_DIMS];
    int out = 0;
    dg_dp_state(env, s, x);
    return interp(&g, v->v[which], x, &out);
}

/* Player i's actions at B states at step t (its function or MLP on its observation; a plan has none
 * here: dg_dp_check refuses it) */
typedef struct act_job {
    const dg_env    *env;
    const dg_policy *pol;
    dg_params       *params;
    int              i, B, t;
    const dg_real   *state, *aux;  /* aux: one row */
    dg_real         *act;          /* (B, player i's action components) */
} act_job;

static dg_status act_job_run(dg_ctx *ctx, void *user) {
    act_job *x = user;
    const dg_env *env = x->env;
    const int X = env->aux_dim, m = x->i ? env->act2_dim : env->act_dim;
    dg_tensor *state = dg_from(ctx, 2, (int[]){x->B, env->state_dim}, x->state);
    dg_tensor *aux = X ? dg_new(ctx, 2, (int[]){x->B, X}) : NULL;
    if (!state || (X && !aux)) return dg_ctx_status(ctx);
    for (int r = 0; r < x->B && aux; r++) memcpy(aux->data + (size_t)r * X, x->aux, sizeof(dg_real) * X);
    dg_tensor *obs = x->pol->plan_steps ? NULL : (x->i ? env->game->observe2 : env->game->observe)(ctx, env, state, aux);
    dg_tensor *a = dg_policy_act(ctx, x->pol, x->params, x->i, x->t, obs, x->B);
    if (dg_ctx_status(ctx) != DG_OK || !a) return dg_ctx_status(ctx) != DG_OK ? dg_ctx_status(ctx) : DG_ERR_ARG;
    if (a->n != (int64_t)x->B * m) return DG_ERR_SHAPE;
    memcpy(x->act, a->data, sizeof(dg_real) * (size_t)x->B * m);
    return DG_OK;
}

/* ------------------------------------------------------------- the search */

typedef struct dp {
    const dg_env *env;
    grid    g;
    int     S, A1, A2, nv, H, nterms, coarse, rounds, refresh, warm;
    int     fz;                       /* the frozen player (opts.frozen), -1: none                */
    int     fz_off, fz_dim;           /* its action columns                                       */
    const dg_policy *fpol;
    dg_params *fparams;
    int     t;                        /* the step whose action V_k takes: k + 1                   */
    int     full;                     /* this step searches from the coarse grid; else from track */
    double  w[DG_LOSS_MAX_TERMS];
    const dg_real *aux;
    const double *next[2];            /* V_{k+1}, or NULL while the terminal costs are taken  */
    double *track;                    /* (nodes, 2, A1 + A2): each node's best pair of each value at
                                         the last step                                         */
    int     track_ok;                 /* track holds the step before's (not at the first step)  */
} dp;

typedef struct worker {
    dg_ctx  *ctx;
    dg_real *lifted;                  /* (chunk, S) the learning state of each node of the chunk */
    dg_real *act;                     /* (rows, A1 + A2) the actions of one evaluation          */
    int     *rnode;                   /* (rows) the chunk node of each row                      */
    double  *q;                       /* (rows) each row's value                                */
    unsigned char *out;               /* (rows) its next state fell off the box                 */
    double  *oc;                      /* (chunk, no, mo) the committing (outer) player's candidates */
    double  *ic;                      /* (rows, mi) the answering (inner) player's candidates       */
    double  *icen;                    /* (chunk, no, mi) the inner best answer to each outer one    */
    double  *m;                       /* (chunk, no) its value                                      */
    unsigned char *mout;              /* (chunk, no) its off-box flag                               */
    double  *gh;                      /* (chunk, no) the spacing of its next round                  */
    double  *oh;                      /* (chunk) the outer search's spacing at each node            */
    int     *nodes;                   /* (chunk) the nodes of one round                             */
    unsigned char *known, *moved;     /* (chunk) val holds the node's best pair's value; the last
                                         round moved its centre                                     */
    int     *orn;                     /* (chunk) the outer search's rounds at each node             */
    int     *act_g;                   /* (chunk, no) the groups (node, outer candidate) still active */
    double  *cen;                     /* (chunk, A1 + A2) the node's best pair                      */
    double  *val;                     /* (chunk) its value                                          */
    unsigned char *ocen;              /* (chunk) its off-box flag                                   */
    dg_real *fa;                      /* (chunk, fz_dim) the frozen player's action at each node    */
    dg_ctx  *pctx;                    /* the frozen player's forward pass                           */
    int      have_cen;                /* cen holds a pair for every node (a warm start)             */
    int64_t  evals, outs;
} worker;

/* The point j of a grid of c points per axis over [-1, 1]^m */
static void grid_point(int j, int c, int m, double *a) {
    for (int k = m - 1; k >= 0; k--) {
        a[k] = c > 1 ? -1.0 + 2.0 * (j % c) / (c - 1) : 0.0;
        j /= c;
    }
}

static int ipow(int b, int x) {
    int r = 1;
    while (x-- > 0) r *= b;
    return r;
}

/* The stencil around centre cen at spacing h: the 3^m points cen + h {-1, 0, 1}^m (the centre
 * first), clipped to [-1, 1]. Diagonal moves too: a game that maps the action box onto a disk (the
 * box's corners onto its edge) leaves a point near a corner no way inwards along one axis. */
static void stencil(const double *cen, int m, double h, double *out) {
    const int n = ipow(3, m);
    for (int j = 0; j < n; j++) {
        int t = (j + n / 2) % n;  /* j = 0: the middle point, the centre */
        for (int k = m - 1; k >= 0; k--) {
            const double v = cen[k] + h * (t % 3 - 1);
            out[(size_t)j * m + k] = v < -1 ? -1 : v > 1 ? 1 : v;
            t /= 3;
        }
    }
}

/* Candidates of one player of m components at once, at most: the coarse grid's (and a warm start),
 * or the stencil's. */
static int cands(int coarse, int m) {
    const int a = ipow(coarse, m) + 1, b = ipow(3, m);
    return a > b ? a : b;
}

/* the searched components of player i (0: a frozen player plays its own action) */
static int searched(const dp *P, int i) { return P->fz == i ? 0 : i ? P->A2 : P->A1; }

/* candidate actions of player i a node, at most */
static int pcands(const dp *P, int i) {
    const int m = searched(P, i);
    return m ? cands(P->coarse, m) : 1;
}

/* Nodes of one chunk: every evaluation of it fits DP_ROWS rows (or one node, when a node alone
 * needs more). */
static int chunk_nodes(const dp *P) {
    const int np = pcands(P, 0) * pcands(P, 1);
    return np >= DP_ROWS ? 1 : DP_ROWS / np;
}

/* Evaluates R rows, row r at the chunk's node rnode[r] (NULL: node r) with the actions wk->act[r]: the
 * game's step, its per-row costs and V_{k+1} of value w at the next state (w < 0: the node's terminal
 * costs). Writes q[r] and out[r]; returns the tape's status. */
static dg_status eval_rows(const dp *P, worker *wk, int R, const int *rnode, int w) {
    const dg_env *env = P->env;
    const int S = P->S, A = P->A1 + P->A2;
    dg_ctx *ctx = wk->ctx;
    dg_ctx_reset(ctx);
    for (int r = 0; r < R && w >= 0 && P->fz >= 0; r++)  /* the frozen player's own action at the node */
        memcpy(wk->act + (size_t)r * A + P->fz_off, wk->fa + (size_t)(rnode ? rnode[r] : r) * P->fz_dim,
               sizeof(dg_real) * P->fz_dim);
    dg_tensor *state = dg_new(ctx, 2, (int[]){R, S});
    dg_tensor *act = w >= 0 ? dg_from(ctx, 2, (int[]){R, A}, wk->act) : NULL;
    dg_tensor *aux = env->aux_dim ? dg_new(ctx, 2, (int[]){R, env->aux_dim}) : NULL;
    if (!state || (w >= 0 && !act) || (env->aux_dim && !aux)) return dg_ctx_status(ctx);
    for (int r = 0; r < R; r++) {
        const dg_real *src = wk->lifted + (size_t)(rnode ? rnode[r] : r) * S;
        for (int k = 0; k < S; k++) state->data[(size_t)r * S + k] = src[k];
    }
    for (int r = 0; r < R && aux; r++) memcpy(aux->data + (size_t)r * env->aux_dim, P->aux, sizeof(dg_real) * env->aux_dim);
    dg_tensor *rows[DG_LOSS_MAX_TERMS] = {0}, *next = state;
    if (w >= 0) {
        next = env->game->step(ctx, env, state, aux, act);
        env->game->step_cost_rows(ctx, env, next, aux, act, rows);
    } else if (env->game->terminal_cost_rows) {
        env->game->terminal_cost_rows(ctx, env, state, aux, rows);
    }
    dg_status st = dg_ctx_status(ctx);
    if (st != DG_OK) return st;
    if (!next) return DG_ERR_ARG;
    int width[DG_LOSS_MAX_TERMS];  /* a term's columns per row; 0: it costs nothing */
    for (int k = 0; k < P->nterms; k++) width[k] = rows[k] && P->w[k] != 0 ? (int)(rows[k]->n / R) : 0;
    for (int r = 0; r < R; r++) {
        double cost = 0;
        for (int k = 0; k < P->nterms; k++) {
            const int m = width[k];
            double s = 0;
            for (int j = 0; j < m; j++) s += rows[k]->data[(size_t)r * m + j];
            cost += P->w[k] * s;
        }
        wk->out[r] = 0;
        if (w < 0) {  /* the terminal costs, once */
            wk->q[r] = cost;
            continue;
        }
        double x[DG_DP_MAX_DIMS];
        int out = 0;
        dg_dp_state(env, next->data + (size_t)r * S, x);
        wk->q[r] = cost / P->H + interp(&P->g, P->next[w], x, &out);
        wk->out[r] = (unsigned char)out;
    }
    wk->evals += R;
    return DG_OK;
}

/* The players of value w: the committing (outer) one and the answering (inner) one (-1: none), their
 * first action column and size. The upper value (w 0): the minimiser a commits, b answers; the lower
 * (w 1): b commits, a answers. A frozen player: the other searches alone (one value). */
typedef struct roles { int outer, inner, o_off, i_off, mo, mi, outer_max; } roles;

static roles roles_of(const dp *P, int w) {
    if (P->fz >= 0) {
        const int f = 1 - P->fz;
        return (roles){.outer = f, .inner = -1, .o_off = f ? P->A1 : 0, .mo = f ? P->A2 : P->A1, .outer_max = f == 1};
    }
    roles r = {.outer = w, .inner = P->A2 ? 1 - w : -1, .outer_max = w == 1};
    r.o_off = w == 0 ? 0 : P->A1;
    r.mo = w == 0 ? P->A1 : P->A2;
    r.i_off = r.inner == 0 ? 0 : P->A1;
    r.mi = r.inner < 0 ? 0 : r.inner == 0 ? P->A1 : P->A2;
    return r;
}

/* writes row r's actions: outer candidate oc (mo) and inner ic (mi) */
static void put_row(const dp *P, const roles *ro, worker *wk, size_t r, const double *oc, const double *ic) {
    dg_real *ar = wk->act + r * (size_t)(P->A1 + P->A2);
    for (int k = 0; k < ro->mo; k++) ar[ro->o_off + k] = (dg_real)oc[k];
    for (int k = 0; k < ro->mi; k++) ar[ro->i_off + k] = (dg_real)ic[k];
}

/* For every outer candidate o of the nn chunk nodes nodes[] (wk->oc, no a node; candidate 0 is the
 * node's best pair, already answered (wk->val, cen, ocen) where wk->known[j]): the inner player's best
 * answer into wk->m, wk->icen and wk->mout; without an inner player the candidate's own value. The
 * answer: the best of a coarse grid and (with wk->have_cen) the answer in the node's best pair, then
 * rounds of the stencil (but its centre) around the best so far at halving spacings down to the
 * finest: from a coarse point from the coarse grid's half spacing, from the warm start from twice the
 * outer candidates' spacing wk->oh[j] (an answer to a candidate that far from the best pair moves
 * about as far), at least the last `warm` rounds' spacing. */
static dg_status answer(const dp *P, worker *wk, const int *nodes, int nn, int no, int w) {
    const roles ro = roles_of(P, w);
    const int A = P->A1 + P->A2, mo = ro.mo, mi = ro.mi;
    const int nc = mi ? ipow(P->coarse, mi) : 1, warm = mi && wk->have_cen, n0 = nc + warm;
    const double hc = 2.0 / (P->coarse - 1), hmin = ldexp(hc, -P->rounds);
    const int wr = P->warm < P->rounds ? P->warm : P->rounds;
    int ng = 0;
    size_t R = 0;
    for (int jj = 0; jj < nn; jj++)  /* every group's coarse grid and warm start */
        for (int o = 0; o < no; o++) {
            const int j = nodes[jj];
            const size_t jo = (size_t)j * no + o;
            if (o == 0 && wk->known[j]) {
                wk->m[jo] = wk->val[j];
                wk->mout[jo] = wk->ocen[j];
                if (mi) memcpy(wk->icen + jo * mi, wk->cen + (size_t)j * A + ro.i_off, sizeof(double) * mi);
                continue;
            }
            wk->act_g[ng++] = (int)jo;
            for (int i = 0; i < n0; i++, R++) {
                double *ic = wk->ic + R * (mi ? mi : 1);
                if (i < nc && mi) grid_point(i, P->coarse, mi, ic);
                else if (mi) memcpy(ic, wk->cen + (size_t)j * A + ro.i_off, sizeof(double) * mi);
                put_row(P, &ro, wk, R, wk->oc + jo * mo, ic);
                wk->rnode[R] = j;
            }
        }
    if (!ng) return DG_OK;
    dg_status st = eval_rows(P, wk, (int)R, wk->rnode, w);
    if (st != DG_OK) return st;
    for (int g = 0; g < ng; g++) {
        const size_t jo = (size_t)wk->act_g[g], r0 = (size_t)g * n0;
        int best = 0;
        for (int i = 1; i < n0; i++)
            if (ro.outer_max ? wk->q[r0 + i] < wk->q[r0 + best] : wk->q[r0 + i] > wk->q[r0 + best]) best = i;
        wk->m[jo] = wk->q[r0 + best];
        wk->mout[jo] = wk->out[r0 + best];
        if (mi) memcpy(wk->icen + jo * mi, wk->ic + (r0 + best) * mi, sizeof(double) * mi);
        const double ho = wk->oh[jo / no];
        wk->gh[jo] = !mi || P->rounds == 0 ? 0 : best == nc ? fmin(0.5 * hc, fmax(2 * ho, ldexp(hmin, wr - 1))) : 0.5 * hc;
    }
    const int ns = mi ? ipow(3, mi) - 1 : 0;  /* the stencil but its centre */
    for (;;) {  /* the pattern search, while a group's spacing is at least the finest */
        int na = 0;
        R = 0;
        for (int g = 0; g < ng; g++) {
            const size_t jo = (size_t)wk->act_g[g];
            if (!(wk->gh[jo] >= hmin)) continue;
            wk->act_g[na++] = (int)jo;
            double pts[DG_DP_MAX_ACT * 81];
            stencil(wk->icen + jo * mi, mi, wk->gh[jo], pts);
            for (int i = 0; i < ns; i++, R++) {
                memcpy(wk->ic + R * mi, pts + (size_t)(i + 1) * mi, sizeof(double) * mi);
                put_row(P, &ro, wk, R, wk->oc + jo * mo, wk->ic + R * mi);
                wk->rnode[R] = (int)(jo / no);
            }
        }
        if (!na) break;
        ng = na;
        if ((st = eval_rows(P, wk, (int)R, wk->rnode, w)) != DG_OK) return st;
        for (int g = 0; g < ng; g++) {  /* ties keep the centre */
            const size_t jo = (size_t)wk->act_g[g], r0 = (size_t)g * ns;
            int best = -1;
            double v = wk->m[jo];
            wk->gh[jo] *= 0.5;
            for (int i = 0; i < ns; i++)
                if (ro.outer_max ? wk->q[r0 + i] < v : wk->q[r0 + i] > v) best = i, v = wk->q[r0 + i];
            if (best < 0) continue;
            wk->m[jo] = v;
            wk->mout[jo] = wk->out[r0 + best];
            memcpy(wk->icen + jo * mi, wk->ic + (r0 + best) * mi, sizeof(double) * mi);
        }
    }
    return DG_OK;
}

/* The outer player's best candidate of each of the nn nodes: its value, pair and flag into val, cen,
 * ocen (known from then on); moved[j]: another candidate than 0 won. */
static void commit(const dp *P, worker *wk, const int *nodes, int nn, int no, int w) {
    const roles ro = roles_of(P, w);
    const int A = P->A1 + P->A2;
    for (int jj = 0; jj < nn; jj++) {
        const int j = nodes[jj];
        const double *m = wk->m + (size_t)j * no;
        int best = 0;
        for (int o = 1; o < no; o++)
            if (ro.outer_max ? m[o] > m[best] : m[o] < m[best]) best = o;
        const size_t jo = (size_t)j * no + best;
        wk->val[j] = m[best];
        wk->ocen[j] = wk->mout[jo];
        double *cen = wk->cen + (size_t)j * A;
        memcpy(cen + ro.o_off, wk->oc + jo * ro.mo, sizeof(double) * ro.mo);
        if (ro.mi) memcpy(cen + ro.i_off, wk->icen + jo * ro.mi, sizeof(double) * ro.mi);
        wk->known[j] = 1;
        wk->moved[j] = best != 0;
    }
}

/* One step backwards for the chunk's nodes i0 .. i0 + C, each value on its own: the committing
 * player's coarse grid (or, between full searches, the node's best pair of the step before) and the
 * rounds of its stencil around its best, at halving spacings down to the finest, each candidate
 * against the answering player's best answer. A player alone searches as a pattern search: a centre
 * that moved doubles its spacing, one that held halves it (at most 4 x rounds rounds), so that it
 * follows an optimum that moves from step to step; against an answering player the schedule is fixed (the answers it compares come
 * from searches, and a centre that kept its spacing while it moved would chase their differences).
 * Writes V_k into cur[w][i]. */
static dg_status step_chunk(const dp *P, worker *wk, int64_t i0, int C, double *const *cur) {
    const int A = P->A1 + P->A2;
    for (int j = 0; j < C; j++) {
        double x[DG_DP_MAX_DIMS];
        node_x(&P->g, i0 + j, x);
        lift(P->env, x, wk->lifted + (size_t)j * P->S);
        wk->nodes[j] = j;
    }
    if (P->next[0] && P->fz >= 0) {  /* the frozen player's action at each node's learning state */
        act_job aj = {P->env, P->fpol, P->fparams, P->fz, C, P->t, wk->lifted, P->aux, wk->fa};
        const dg_status st = dg_ctx_run(&wk->pctx, DG_ARENA_MAX, act_job_run, &aj);
        if (st != DG_OK) return st;
    }
    if (!P->next[0]) {  /* V_H: the terminal costs */
        dg_status st = eval_rows(P, wk, C, NULL, -1);
        for (int j = 0; j < C && st == DG_OK; j++)
            for (int w = 0; w < P->nv; w++) cur[w][i0 + j] = wk->q[j];
        return st;
    }
    const double hc = 2.0 / (P->coarse - 1), hmin = ldexp(hc, -P->rounds);
    const int wr = P->warm < P->rounds ? P->warm : P->rounds;
    for (int w = 0; w < P->nv; w++) {
        const roles ro = roles_of(P, w);
        dg_status st = DG_OK;
        /* the node's best pair of the step before: a warm start (the first step has none) */
        wk->have_cen = P->track_ok;
        for (int j = 0; j < C; j++) {
            if (wk->have_cen)
                memcpy(wk->cen + (size_t)j * A, P->track + ((size_t)(i0 + j) * 2 + w) * A, sizeof(double) * A);
            wk->known[j] = 0;
        }
        if (P->full) {
            const int no = ipow(P->coarse, ro.mo);
            for (int j = 0; j < C; j++) {
                wk->oh[j] = hc;
                for (int o = 0; o < no; o++) grid_point(o, P->coarse, ro.mo, wk->oc + ((size_t)j * no + o) * ro.mo);
            }
            if ((st = answer(P, wk, wk->nodes, C, no, w)) != DG_OK) return st;
            commit(P, wk, wk->nodes, C, no, w);
        }
        /* the pattern search: from the coarse grid's best at its half spacing, or from the step
         * before's at the last `warm` rounds' */
        const int no = ipow(3, ro.mo);
        for (int j = 0; j < C; j++) {
            wk->oh[j] = P->full ? 0.5 * hc : ldexp(hmin, wr - 1);
        }
        for (int j = 0; j < C; j++) wk->orn[j] = 0;
        for (;;) {
            int nn = 0;
            for (int j = 0; j < C; j++)
                if (wk->oh[j] >= hmin && P->rounds > 0 && wk->orn[j]++ < 4 * P->rounds) wk->nodes[nn++] = j;
            if (!nn) break;
            for (int jj = 0; jj < nn; jj++) {
                const int j = wk->nodes[jj];
                stencil(wk->cen + (size_t)j * A + ro.o_off, ro.mo, wk->oh[j], wk->oc + (size_t)j * no * ro.mo);
            }
            if ((st = answer(P, wk, wk->nodes, nn, no, w)) != DG_OK) return st;
            commit(P, wk, wk->nodes, nn, no, w);
            for (int jj = 0; jj < nn; jj++) {  /* alone, a player whose centre moved goes on at twice its spacing */
                const int j = wk->nodes[jj];
                wk->oh[j] = !ro.mi && wk->moved[j] ? fmin(2 * wk->oh[j], 0.5 * hc) : 0.5 * wk->oh[j];
            }
        }
        for (int j = 0; j < C; j++) {
            cur[w][i0 + j] = wk->val[j];
            wk->outs += wk->ocen[j];
            memcpy(P->track + ((size_t)(i0 + j) * 2 + w) * A, wk->cen + (size_t)j * A, sizeof(double) * A);
        }
    }
    return DG_OK;
}

/* ------------------------------------------------------------- the solve */

/* The options' search and grid, checked; the box from dg_dp_box. */
static dg_status setup(const dg_env *env, const dg_dp_opts *o, dp *P, dg_err *e) {
    dg_status rc = dg_dp_check(env, e);
    if (rc != DG_OK) return rc;
    if (!o) return dg_err_set(e, DG_ERR_ARG, "dp: no options");
    if (env->aux_dim > 0 && !o->aux)
        return dg_err_set(e, DG_ERR_ARG, "dp: the game has %d episode constants (aux): give their values", env->aux_dim);
    memset(P, 0, sizeof *P);
    P->env = env;
    P->S = env->state_dim;
    P->A1 = env->act_dim;
    P->A2 = env->nplayers == 2 ? env->act2_dim : adversary_dim(env);  /* an adversarial input: the maximiser */
    P->nv = P->A2 ? 2 : 1;
    P->fz = -1;
    if (o->frozen) {  /* one player frozen: the other's best response, one value */
        const int f = o->frozen_player;
        if (env->nplayers != 2 || o->frozen->n != 2 || (f != 0 && f != 1))
            return dg_err_set(e, DG_ERR_ARG, "dp: a frozen player needs a game of two learned players and their "
                              "policy, and frozen_player 0 (the pursuer) or 1 (the evader)");
        if (!o->frozen->fn[f] && !o->frozen_params)
            return dg_err_set(e, DG_ERR_ARG, "dp: the frozen player's parameters are missing");
        P->fz = f;
        P->fz_off = f ? P->A1 : 0;
        P->fz_dim = f ? P->A2 : P->A1;
        P->fpol = o->frozen;
        P->fparams = o->frozen_params;
        P->nv = 1;
    }
    P->H = env->horizon;
    P->nterms = env->nterms;
    for (int k = 0; k < env->nterms; k++) P->w[k] = env->term_weights[k];
    P->coarse = o->coarse ? o->coarse : 3;
    P->rounds = o->rounds > 0 ? o->rounds : o->rounds < 0 ? 0 : 8;
    P->refresh = o->refresh > 0 ? o->refresh : 10;
    P->warm = o->warm > 0 ? o->warm : 3;
    P->aux = o->aux;
    if (P->coarse < 2 || P->coarse > 64 || P->rounds > 60 || o->refresh < 0 || o->warm < 0)
        return dg_err_set(e, DG_ERR_ARG, "dp: coarse %d (2 to 64), rounds %d (at most 60), refresh %d or warm %d "
                          "(>= 0)", P->coarse, P->rounds, o->refresh, o->warm);
    const double np = (double)pcands(P, 0) * pcands(P, 1);
    if (np > DP_ROWS * 64.0)
        return dg_err_set(e, DG_ERR_ARG, "dp: coarse %d makes %g action pairs a node (at most %d)", P->coarse, np,
                          DP_ROWS * 64);
    grid *g = &P->g;
    g->d = dg_dp_dims(env);
    if ((rc = dg_dp_box(env, o, g->lo, g->hi, e)) != DG_OK) return rc;
    int64_t nodes = 1;
    for (int k = 0; k < g->d; k++) {
        g->n[k] = o->nodes[k];
        if (g->n[k] < 3 || !dg_mul_ok(nodes, g->n[k], INT64_MAX / 64, &nodes))
            return dg_err_set(e, DG_ERR_ARG, "dp: nodes[%d] = %d (at least 3, and a product that fits)", k, g->n[k]);
        g->h[k] = (g->hi[k] - g->lo[k]) / (g->n[k] - 1);
    }
    g->nodes = nodes;
    int64_t st = 1;
    for (int k = g->d - 1; k >= 0; k--) g->stride[k] = st, st *= g->n[k];
    return DG_OK;
}

static int threads_of(const dg_dp_opts *o) { return o->threads > 0 ? o->threads : omp_get_max_threads(); }

static void worker_free(worker *wk) {
    dg_ctx_free(wk->ctx);
    dg_ctx_free(wk->pctx);
    free(wk->fa);
    free(wk->lifted);
    free(wk->act);
    free(wk->rnode);
    free(wk->q);
    free(wk->out);
    free(wk->oc);
    free(wk->ic);
    free(wk->icen);
    free(wk->m);
    free(wk->mout);
    free(wk->gh);
    free(wk->oh);
    free(wk->nodes);
    free(wk->known);
    free(wk->moved);
    free(wk->orn);
    free(wk->act_g);
    free(wk->cen);
    free(wk->val);
    free(wk->ocen);
    memset(wk, 0, sizeof *wk);
}

/* a worker's sizes for chunks of C nodes: rows of one evaluation, outer candidates per node, the
 * larger player's components */
static void worker_sizes(const dp *P, int C, size_t *rows, size_t *no, size_t *mx) {
    const size_t na = (size_t)pcands(P, 0), nb = (size_t)pcands(P, 1);
    *no = na > nb ? na : nb;
    *rows = (size_t)C * na * nb > DP_ROWS ? (size_t)C * na * nb : DP_ROWS;
    *mx = (size_t)(P->A1 > P->A2 ? P->A1 : P->A2);
}

/* a worker's buffers for chunks of C nodes (the context made by the caller); 0 when out of memory */
static int worker_alloc(const dp *P, worker *wk, int C) {
    const size_t A = (size_t)(P->A1 + P->A2);
    size_t rows, no, mx;
    worker_sizes(P, C, &rows, &no, &mx);
    wk->lifted = malloc((size_t)C * P->S * sizeof(dg_real));
    wk->act = malloc(rows * A * sizeof(dg_real));
    wk->rnode = malloc(rows * sizeof(int));
    wk->q = malloc(rows * sizeof(double));
    wk->out = malloc(rows);
    wk->oc = malloc((size_t)C * no * mx * sizeof(double));
    wk->ic = malloc(rows * mx * sizeof(double));
    wk->icen = malloc((size_t)C * no * mx * sizeof(double));
    wk->m = malloc((size_t)C * no * sizeof(double));
    wk->mout = malloc((size_t)C * no);
    wk->gh = malloc((size_t)C * no * sizeof(double));


    wk->oh = malloc((size_t)C * sizeof(double));
    wk->nodes = malloc((size_t)C * sizeof(int));
    wk->known = malloc((size_t)C);
    wk->moved = malloc((size_t)C);
    wk->orn = malloc((size_t)C * sizeof(int));

    wk->act_g = malloc((size_t)C * no * sizeof(int));
    wk->cen = malloc((size_t)C * A * sizeof(double));
    wk->val = malloc((size_t)C * sizeof(double));
    wk->ocen = malloc((size_t)C);
    wk->fa = calloc((size_t)C * (P->fz_dim ? P->fz_dim : 1), sizeof(dg_real));
    wk->pctx = P->fz >= 0 ? dg_ctx_create((size_t)1 << 20) : NULL;
    return (P->fz < 0 || wk->pctx) && wk->fa && wk->lifted && wk->act && wk->rnode && wk->q && wk->out && wk->oc && wk->ic && wk->icen && wk->m &&
           wk->mout && wk->gh && wk->oh && wk->nodes && wk->known && wk->moved && wk->orn && wk->act_g && wk->cen &&
           wk->val && wk->ocen;
}

static double worker_bytes(const dp *P, int C) {
    const double A = P->A1 + P->A2;
    size_t rows, no, mx;
    worker_sizes(P, C, &rows, &no, &mx);
    return (double)C * P->S * sizeof(dg_real) + rows * (A * sizeof(dg_real) + 4 + 8 + 1 + 8.0 * mx) +
           (double)C * no * (16.0 * mx + 8 + 1 + 8 + 4 + 4) + C * (8 * A + 9 + 8 + 4 + 2) +
           (P->fz >= 0 ? (double)C * (P->fz_dim + 1024.0) * sizeof(dg_real) + (1 << 20) : 0);  /* its forward pass */
}

typedef struct probe_job { const dp *P; worker *wk; } probe_job;

static dg_status probe_run(dg_ctx *ctx, void *user) {
    probe_job *j = user;
    j->wk->ctx = ctx;
    return eval_rows(j->P, j->wk, DP_PROBE_ROWS, j->wk->rnode, 0);
}

/* The arena one evaluation of DP_ROWS rows needs, from a probe on DP_PROBE_ROWS rows; 0 on failure
 * (e set). */
static size_t arena_bytes(const dp *P, dg_err *e) {
    worker wk = {0};
    size_t need = 0;
    const int C = chunk_nodes(P);
    if (!worker_alloc(P, &wk, C)) {
        worker_free(&wk);
        dg_err_set(e, DG_ERR_NOMEM, "dp: out of memory");
        return 0;
    }
    size_t rows, no, mx;
    worker_sizes(P, C, &rows, &no, &mx);
    /* DP_PROBE_ROWS rows at node 0 of the box, the actions 0 */
    double x[DG_DP_MAX_DIMS];
    node_x(&P->g, 0, x);
    lift(P->env, x, wk.lifted);
    memset(wk.act, 0, (size_t)DP_PROBE_ROWS * (size_t)(P->A1 + P->A2) * sizeof(dg_real));
    memset(wk.rnode, 0, (size_t)DP_PROBE_ROWS * sizeof(int));
    double zero[2] = {0, 0};
    dp Q = *P;
    for (int k = 0; k < Q.g.d; k++) Q.g.n[k] = 2, Q.g.stride[k] = 0;  /* every next state reads zero[0] */
    Q.next[0] = Q.next[1] = zero;
    dg_ctx *ctx = dg_ctx_create((size_t)1 << 20);
    probe_job j = {&Q, &wk};
    dg_status st = ctx ? dg_ctx_run(&ctx, DG_ARENA_MAX, probe_run, &j) : DG_ERR_NOMEM;
    if (st != DG_OK)
        dg_err_set(e, st, "dp: the game's step on %d rows: %s", DP_PROBE_ROWS, ctx ? dg_ctx_error(ctx) : "out of memory");
    else
        need = (size_t)(1.25 * (double)dg_ctx_peak(ctx) / DP_PROBE_ROWS * (double)rows) + ((size_t)1 << 20);
    dg_ctx_free(ctx);
    wk.ctx = NULL;  /* the probe's, freed above */
    worker_free(&wk);
    return need;
}

/* bytes of the value arrays and of every worker */
static double solve_bytes(const dp *P, const dg_dp_opts *o, size_t arena) {
    const double nodes = (double)P->g.nodes;
    double b = P->nv * nodes * 16.0 + nodes * 16.0 * (P->A1 + P->A2);  /* V_k, V_{k+1}; the tracked pairs */
    if (o->keep) b += P->nv * nodes * 4.0 * (P->H + 1);
    return b + threads_of(o) * ((double)arena + worker_bytes(P, chunk_nodes(P)));
}

double dg_dp_memory(const dg_env *env, const dg_dp_opts *o, dg_err *e) {
    dp P;
    if (setup(env, o, &P, e) != DG_OK) return -1;
    const size_t arena = arena_bytes(&P, e);
    return arena ? solve_bytes(&P, o, arena) : -1;
}

void dg_dp_value_free(dg_dp_value *v) {
    if (!v) return;
    for (int w = 0; w < 2; w++) {
        free(v->v[w]);
        free(v->all[w]);
    }
    memset(v, 0, sizeof *v);
}

dg_status dg_dp_solve(const dg_env *env, const dg_dp_opts *o, dg_dp_value *v, dg_err *e) {
    if (!v) return dg_err_set(e, DG_ERR_ARG, "dp: no value to fill");
    memset(v, 0, sizeof *v);
    dp P;
    dg_status rc = setup(env, o, &P, e);
    if (rc != DG_OK) return rc;
    const double t0 = dg_clock_s();
    const size_t arena = arena_bytes(&P, e);
    if (!arena) return e->status;
    const double need = solve_bytes(&P, o, arena);
    if (o->max_bytes > 0 && need > o->max_bytes)
        return dg_err_set(e, DG_ERR_NOMEM, "dp: needs about %.3g GiB, more than max_bytes %.3g GiB", need / 1073741824.0,
                          o->max_bytes / 1073741824.0);
    if ((rc = dg_mem_check(need, e)) != DG_OK) return rc;
    const grid *g = &P.g;
    v->ndim = g->d;
    v->nodes = g->nodes;
    v->horizon = P.H;
    v->nvalues = P.nv;
    v->frozen = o->frozen;
    v->frozen_player = P.fz;
    for (int k = 0; k < g->d; k++) v->n[k] = g->n[k], v->lo[k] = g->lo[k], v->hi[k] = g->hi[k];
    double *cur[2] = {NULL, NULL}, *nxt[2] = {NULL, NULL};
    int ok = 1;
    for (int w = 0; w < P.nv; w++) {
        ok &= (cur[w] = malloc((size_t)g->nodes * sizeof(double))) != NULL;
        ok &= (nxt[w] = malloc((size_t)g->nodes * sizeof(double))) != NULL;
        if (o->keep) ok &= (v->all[w] = malloc((size_t)g->nodes * (P.H + 1) * sizeof(float))) != NULL;
    }
    ok &= (P.track = malloc((size_t)g->nodes * 2 * (P.A1 + P.A2) * sizeof(double))) != NULL;
    const int T = threads_of(o), C = chunk_nodes(&P);
    worker *wk = calloc((size_t)T, sizeof *wk);
    ok &= wk != NULL;
    for (int t = 0; t < T && ok; t++)
        ok &= worker_alloc(&P, &wk[t], C) && (wk[t].ctx = dg_ctx_create(arena)) != NULL;
    if (!ok) rc = dg_err_set(e, DG_ERR_NOMEM, "dp: out of memory for %lld nodes", (long long)g->nodes);
    const int64_t nchunks = (g->nodes + C - 1) / C;
    dg_status err = DG_OK;
    char msg[DG_ERR_LEN] = "";
    for (int k = P.H; k >= 0 && rc == DG_OK; k--) {  /* k: V_k from V_{k+1} (k = H: the terminal costs) */
        P.next[0] = k < P.H ? nxt[0] : NULL;
        P.next[1] = k < P.H ? nxt[1] : NULL;
        P.full = (P.H - 1 - k) % P.refresh == 0;  /* the first step, and every refresh steps */
        P.track_ok = k < P.H - 1;
        P.t = k + 1;
#pragma omp parallel for num_threads(T) schedule(dynamic, 1)
        for (int64_t ch = 0; ch < nchunks; ch++) {
            worker *me = &wk[omp_get_thread_num()];
            if (err != DG_OK) continue;
            const int64_t i0 = ch * C;
            const int n = (int)(g->nodes - i0 < C ? g->nodes - i0 : C);
            const dg_status st = step_chunk(&P, me, i0, n, cur);
            if (st != DG_OK) {
#pragma omp critical  /* unnamed: a named one is a global lock symbol the library would export */
                if (err == DG_OK) {
                    err = st;
                    snprintf(msg, sizeof msg, "%s", dg_ctx_error(me->ctx));
                }
            }
        }
        if (err != DG_OK) {
            rc = dg_err_set(e, err, "dp: the game's step at step %d: %s", k, msg[0] ? msg : "failed");
            break;
        }
        for (int w = 0; w < P.nv && o->keep; w++)
            for (int64_t i = 0; i < g->nodes; i++) v->all[w][(size_t)k * g->nodes + i] = (float)cur[w][i];
        for (int w = 0; w < P.nv; w++) {  /* V_k is the next step's V_{k+1} */
            double *t = nxt[w];
            nxt[w] = cur[w];
            cur[w] = t;
        }
    }
    int64_t outs = 0;
    for (int t = 0; t < T && wk; t++) {
        v->evaluations += wk[t].evals;
        outs += wk[t].outs;
        worker_free(&wk[t]);
    }
    free(wk);
    free(P.track);
    for (int w = 0; w < P.nv; w++) {
        free(cur[w]);
        v->v[w] = nxt[w];  /* after the last swap: V_0 */
    }
    v->outside = (double)outs / ((double)g->nodes * P.H * P.nv);
    v->seconds = dg_clock_s() - t0;
    if (rc != DG_OK) dg_dp_value_free(v);
    return rc;
}

/* ------------------------------------------------------------ refinement */

/* The order p with (h1^p - h2^p) / (h2^p - h3^p) = e1 / e2 (h1 > h2 > h3; the ratio grows with p),
 * or NaN when no p in (0, 20] gives it. */
static double observed_order(double h1, double h2, double h3, double e1, double e2) {
    if (!(e2 != 0) || !(e1 / e2 > 0)) return NAN;
    const double want = e1 / e2;
    double lo = 1e-6, hi = 20;
#define RATIO(p) ((pow(h1, p) - pow(h2, p)) / (pow(h2, p) - pow(h3, p)))
    if (!(want > RATIO(lo)) || !(want < RATIO(hi))) return NAN;
    for (int i = 0; i < 200; i++) {
        const double mid = 0.5 * (lo + hi);
        if (RATIO(mid) < want) lo = mid;
        else hi = mid;
    }
#undef RATIO
    return 0.5 * (lo + hi);
}

/* the grid's spacing, as one number: the mean over the axes of 1 / (n - 1) */
static double spacing(const int *n, int d) {
    double s = 0;
    for (int k = 0; k < d; k++) s += 1.0 / (n[k] - 1);
    return s / d;
}

int dg_dp_richardson(double h1, double h2, double h3, const double *v1, const double *v2, const double *v3, int B,
                     double *order, double *out) {
    double m1 = 0, m2 = 0, m3 = 0, d12 = 0, d23 = 0;
    for (int b = 0; b < B; b++) {  /* the means as dg_dp_refine sums them (the same bits) */
        m1 += v1[b] / B, m2 += v2[b] / B, m3 += v3[b] / B;
        d12 += fabs(v2[b] - v1[b]), d23 += fabs(v3[b] - v2[b]);
    }
    const double p = h1 > h2 && h2 > h3 ? observed_order(h1, h2, h3, m1 - m2, m2 - m3) : NAN;
    /* Richardson assumes the error is C h^p already: an order in [0.5, 2.5], and changes that fall
     * from grid to grid, in the mean and at the starts (a study whose changes stand or grow is not in
     * the asymptotic range, whatever the means' order says) */
    const int ok = p >= 0.5 && p <= 2.5 && fabs(m3 - m2) < fabs(m2 - m1) && d23 < d12;
    const double f = ok ? pow(h3, p) / (pow(h2, p) - pow(h3, p)) : 0;
    if (order) *order = p;
    for (int b = 0; b < B && out; b++) out[b] = v3[b] + f * (v3[b] - v2[b]);
    return ok;
}

dg_status dg_dp_refine(const dg_env *env, const dg_dp_opts *o, const dg_dp_refine_opts *ro, const dg_real *states,
                       int B, dg_dp_refinement *r, double *value, double *finest, dg_err *e) {
    dg_status rc = dg_dp_check(env, e);
    if (rc != DG_OK) return rc;
    if (!o || !ro || !r || !states || B < 1 || !(ro->tol > 0) || (ro->ratio != 0 && !(ro->ratio > 1 && ro->ratio <= 4)) ||
        ro->min_grids < 0 || ro->max_grids < 0 || ro->max_grids > DG_DP_MAX_GRIDS ||
        (ro->min_grids && ro->min_grids < 3) || (ro->max_grids && ro->max_grids < (ro->min_grids ? ro->min_grids : 3)))
        return dg_err_set(e, DG_ERR_ARG, "dp refine: bad arguments (tol > 0, ratio in (1, 4], 3 <= min_grids <= "
                          "max_grids <= %d, starts)", DG_DP_MAX_GRIDS);
    const int d = dg_dp_dims(env), nv = dg_dp_nvalues(env), S = env->state_dim;
    const double ratio = ro->ratio ? ro->ratio : 1.5;
    const int gmin = ro->min_grids ? ro->min_grids : 3, gmax = ro->max_grids ? ro->max_grids : DG_DP_MAX_GRIDS;
    dg_dp_opts go = *o;
    go.keep = o->keep || ro->keep;
    if (ro->keep) memset(ro->keep, 0, sizeof *ro->keep);
    if ((rc = dg_dp_box(env, o, go.lo, go.hi, e)) != DG_OK) return rc;  /* one box for every grid */
    memset(r, 0, sizeof *r);
    r->nvalues = nv;
    r->order[0] = r->order[1] = NAN;
    double *vals = malloc((size_t)3 * 2 * B * sizeof(double));  /* the three finest grids' values, per start */
    if (!vals) return dg_err_set(e, DG_ERR_NOMEM, "dp refine: out of memory");
    double limit = o->max_bytes > 0 ? o->max_bytes : dg_mem_limit(NULL);
    r->stopped = "max_grids";
    for (int i = 0; i < gmax; i++) {
        int64_t nodes = 1;
        for (int k = 0; k < d; k++) {
            const int n0 = o->nodes[k] ? o->nodes[k] : 21, q = (n0 - 1) % 2;
            /* n - 1 of one parity on every grid: a box's centre (a symmetric game's origin) is a node on
             * all of them or on none, so that the error falls with the spacing alone; the nearest such
             * count to (n0 - 1) ratio^i (n0 itself first), and at least 2 more than the grid before
             * (rounding gives 3, 5, 5 from 3: two equal grids whose change is 0) */
            int n = 2 * (int)lround(((n0 - 1) * pow(ratio, i) - q) / 2) + q + 1;
            if (i > 0 && n < r->nodes[i - 1][k] + 2) n = r->nodes[i - 1][k] + 2;
            nodes *= go.nodes[k] = n;
        }
        if (ro->max_nodes && nodes > ro->max_nodes) {
            r->stopped = "max_nodes";
            break;
        }
        const double need = dg_dp_memory(env, &go, e);
        if (need < 0) {
            rc = e->status;
            break;
        }
        if (need > limit) {
            r->stopped = "memory";
            break;
        }
        dg_dp_value v;
        if ((rc = dg_dp_solve(env, &go, &v, e)) != DG_OK) break;
        double *now = vals + (size_t)(i % 3) * 2 * B;
        for (int w = 0; w < nv; w++) {
            double m = 0;
            for (int b = 0; b < B; b++) m += (now[(size_t)w * B + b] = dg_dp_value_at(env, &v, w, states + (size_t)b * S)) / B;
            r->mean[i][w] = m;
        }
        r->seconds[i] = v.seconds;
        r->outside[i] = v.outside;
        memcpy(r->nodes[i], go.nodes, sizeof(int) * d);
        r->ngrids = i + 1;
        if (ro->keep) {  /* the finest so far */
            dg_dp_value_free(ro->keep);
            *ro->keep = v;
        } else
            dg_dp_value_free(&v);
        if (i == 0) continue;
        const double *prev = vals + (size_t)((i - 1) % 3) * 2 * B;
        int conv = memcmp(r->nodes[i], r->nodes[i - 1], sizeof(int) * d) != 0;  /* the same grid twice: no test */
        for (int w = 0; w < nv; w++) {
            double dsum = 0, vsum = 0;
            for (int b = 0; b < B; b++) {
                dsum += fabs(now[(size_t)w * B + b] - prev[(size_t)w * B + b]);
                vsum += fabs(now[(size_t)w * B + b]);
            }
            r->change[w] = vsum > 0 ? dsum / vsum : dsum > 0 ? INFINITY : 0;
            conv &= r->change[w] < ro->tol;
        }
        r->converged = conv;
        if (conv && r->ngrids >= gmin) {
            r->stopped = "converged";
            break;
        }
    }
    if (rc == DG_OK && r->ngrids < gmin)
        rc = dg_err_set(e, DG_ERR_NOMEM, "dp refine: only %d grids fit (%s): a study needs %d", r->ngrids, r->stopped, gmin);
    if (rc == DG_OK) {
        const int n = r->ngrids;
        const double *v3 = vals + (size_t)((n - 1) % 3) * 2 * B, *v2 = vals + (size_t)((n - 2) % 3) * 2 * B;
        const double *v1 = vals + (size_t)((n - 3) % 3) * 2 * B;
        const double h1 = spacing(r->nodes[n - 3], d), h2 = spacing(r->nodes[n - 2], d), h3 = spacing(r->nodes[n - 1], d);
        for (int w = 0; w < nv; w++) {
            const size_t at = (size_t)w * B;
            r->extrapolated[w] = dg_dp_richardson(h1, h2, h3, v1 + at, v2 + at, v3 + at, B, &r->order[w],
                                                  value ? value + at : NULL);
            if (finest) memcpy(finest + at, v3 + at, sizeof(double) * B);
        }
    }
    free(vals);
    if (rc != DG_OK && ro->keep) dg_dp_value_free(ro->keep);
    return rc;
}

/* ------------------------------------------------------------ the grid's answer, played */

/* One evaluation of R rows of the learner's game: the step from state (R, S) with actions act (R, A)
 * (act NULL: the terminal costs of state), the next state into next (R, S) and each row's weighted
 * cost into cost (R): sum_k w_k c_k, the running terms over H (as the loss counts them), the terminal
 * ones whole. */
typedef struct play_job {
    const dg_env  *env;
    int            R, A;
    const dg_real *state, *aux, *act;  /* aux: one row, every row's */
    dg_real       *next;
    double        *cost;
} play_job;

static dg_status play_job_run(dg_ctx *ctx, void *user) {
    play_job *x = user;
    const dg_env *env = x->env;
    const int S = env->state_dim, X = env->aux_dim;
    dg_tensor *state = dg_from(ctx, 2, (int[]){x->R, S}, x->state);
    dg_tensor *aux = X ? dg_new(ctx, 2, (int[]){x->R, X}) : NULL;
    dg_tensor *act = x->act ? dg_from(ctx, 2, (int[]){x->R, x->A}, x->act) : NULL;
    if (!state || (X && !aux) || (x->act && !act)) return dg_ctx_status(ctx);
    for (int r = 0; r < x->R && aux; r++) memcpy(aux->data + (size_t)r * X, x->aux, sizeof(dg_real) * X);
    dg_tensor *rows[DG_LOSS_MAX_TERMS] = {0}, *next = state;
    if (act) {
        next = env->game->step(ctx, env, state, aux, act);
        if (next) env->game->step_cost_rows(ctx, env, next, aux, act, rows);
    } else if (env->game->terminal_cost_rows)
        env->game->terminal_cost_rows(ctx, env, state, aux, rows);
    if (dg_ctx_status(ctx) != DG_OK || !next) return dg_ctx_status(ctx) != DG_OK ? dg_ctx_status(ctx) : DG_ERR_ARG;
    const double scale = act ? 1.0 / env->horizon : 1.0;
    for (int r = 0; r < x->R; r++) {
        double c = 0;
        for (int k = 0; k < env->nterms; k++) {
            if (!rows[k] || env->term_weights[k] == 0) continue;
            const int m = (int)(rows[k]->n / x->R);
            double s = 0;
            for (int j = 0; j < m; j++) s += rows[k]->data[(size_t)r * m + j];
            c += env->term_weights[k] * s;
        }
        x->cost[r] = c * scale;
    }
    if (x->next) memcpy(x->next, next->data, sizeof(dg_real) * (size_t)x->R * S);
    return DG_OK;
}

/* Who plays what in a game played against a grid's answer: the policy's player pp (its action
 * columns poff, pdim) and the searching side (soff, sdim), minimising or maximising c / H + V_t(x')
 * over its box; A columns in all. */
typedef struct sides { int pp, poff, pdim, soff, sdim, maximise, A; } sides;

/* cost (B): each start's episode loss with the policy's player acting at the real states and the other
 * side answering every step t by its best action against V_t (row t of v->all[0]), by a coarse grid
 * and `rounds` rounds of the stencil at halving spacings. */
static dg_status play_grid(const dg_env *env, const dg_dp_value *v, int coarse, int rounds, const sides *sd,
                           const dg_policy *pol, dg_params *params, const dg_real *state, const dg_real *aux, int B,
                           double *cost, dg_err *e) {
    const int F = sd->sdim, A = sd->A, S = env->state_dim, H = env->horizon;
    const grid g = grid_of(v);
    const int nc = ipow(coarse, F), ns = ipow(3, F), nmax = nc > ns ? nc : ns;
    const size_t R = (size_t)B * nmax;
    dg_real *cur = malloc(sizeof(dg_real) * (size_t)B * S), *best_next = malloc(sizeof(dg_real) * (size_t)B * S);
    dg_real *a = malloc(sizeof(dg_real) * (size_t)B * sd->pdim), *rs = malloc(sizeof(dg_real) * R * S);
    dg_real *ra = malloc(sizeof(dg_real) * R * A), *rn = malloc(sizeof(dg_real) * R * S);
    double *rc_ = malloc(sizeof(double) * R), *Vt = malloc(sizeof(double) * (size_t)g.nodes);
    double *bq = malloc(sizeof(double) * (size_t)B), *bc = malloc(sizeof(double) * (size_t)B);
    double *bb = malloc(sizeof(double) * (size_t)B * F), *cand = malloc(sizeof(double) * R * F);
    dg_ctx *ctx = dg_ctx_create((size_t)1 << 22);
    dg_status rc = cur && best_next && a && rs && ra && rn && rc_ && Vt && bq && bc && bb && cand && ctx
                       ? DG_OK : dg_err_set(e, DG_ERR_NOMEM, "dp play: out of memory for %d starts", B);
    if (rc == DG_OK) memcpy(cur, state, sizeof(dg_real) * (size_t)B * S);
    for (int b = 0; b < B; b++) cost[b] = 0;
    /* every start plays with its own aux row: the play job takes one row, so one start at a time would
     * be slow; the grid's value is for one aux (the solve's), and certify gives every start that one */
    const dg_real *aux0 = env->aux_dim ? aux : NULL;
    const double hc = 2.0 / (coarse - 1), sgn = sd->maximise ? 1 : -1;
    for (int t = 1; t <= H && rc == DG_OK; t++) {
        for (int64_t i = 0; i < g.nodes; i++) Vt[i] = v->all[0][(size_t)t * g.nodes + i];
        act_job aj = {env, pol, params, sd->pp, B, t, cur, aux0, a};
        if ((rc = dg_ctx_run(&ctx, DG_ARENA_MAX, act_job_run, &aj)) != DG_OK) break;
        /* the answer: the coarse grid (round -1), then rounds of the stencil around the best at
         * halving spacings from half the coarse grid's */
        for (int round = -1; round < rounds && rc == DG_OK; round++) {
            const int n = round < 0 ? nc : ns - 1;
            const double h = ldexp(0.5 * hc, round < 0 ? 0 : -round);
            for (int b = 0; b < B; b++) {
                double pts[DG_DP_MAX_ACT * 81];
                if (round >= 0) stencil(bb + (size_t)b * F, F, h, pts);
                for (int i = 0; i < n; i++) {
                    const size_t r = (size_t)b * n + i;
                    double *c = cand + r * F;
                    if (round < 0) grid_point(i, coarse, F, c);
                    else memcpy(c, pts + (size_t)(i + 1) * F, sizeof(double) * F);  /* but the centre */
                    memcpy(rs + r * S, cur + (size_t)b * S, sizeof(dg_real) * S);
                    memcpy(ra + r * A + sd->poff, a + (size_t)b * sd->pdim, sizeof(dg_real) * sd->pdim);
                    for (int k = 0; k < F; k++) ra[r * A + sd->soff + k] = (dg_real)c[k];
                }
            }
            play_job pj = {env, B * n, A, rs, aux0, ra, rn, rc_};
            if ((rc = dg_ctx_run(&ctx, DG_ARENA_MAX, play_job_run, &pj)) != DG_OK) break;
            for (int b = 0; b < B; b++)
                for (int i = 0; i < n; i++) {
                    const size_t r = (size_t)b * n + i;
                    double x[DG_DP_MAX_DIMS];
                    int out = 0;
                    dg_dp_state(env, rn + r * S, x);
                    const double q = sgn * (rc_[r] + interp(&g, Vt, x, &out));
                    if ((round < 0 && i == 0) || q > bq[b]) {  /* ties keep the earlier */
                        bq[b] = q;
                        bc[b] = rc_[r];
                        memcpy(bb + (size_t)b * F, cand + r * F, sizeof(double) * F);
                        memcpy(best_next + (size_t)b * S, rn + r * S, sizeof(dg_real) * S);
                    }
                }
        }
        if (rc != DG_OK) break;
        for (int b = 0; b < B; b++) cost[b] += bc[b];
        memcpy(cur, best_next, sizeof(dg_real) * (size_t)B * S);
    }
    if (rc == DG_OK) {  /* the terminal costs, once */
        play_job pj = {env, B, A, cur, aux0, NULL, NULL, rc_};
        if ((rc = dg_ctx_run(&ctx, DG_ARENA_MAX, play_job_run, &pj)) == DG_OK)
            for (int b = 0; b < B; b++) cost[b] += rc_[b];
    }
    if (rc != DG_OK && e && !e->msg[0]) dg_err_set(e, rc, "dp play: %s", ctx ? dg_ctx_error(ctx) : "out of memory");
    dg_ctx_free(ctx);
    free(cur);
    free(best_next);
    free(a);
    free(rs);
    free(ra);
    free(rn);
    free(rc_);
    free(Vt);
    free(bq);
    free(bc);
    free(bb);
    free(cand);
    return rc;
}

dg_status dg_dp_play(const dg_env *env, const dg_dp_value *v, const dg_dp_opts *o, const dg_policy *pol,
                     dg_params *params, const dg_real *state, const dg_real *aux, int B, double *cost, dg_err *e) {
    dg_status rc = dg_dp_check(env, e);
    if (rc != DG_OK) return rc;
    const int F = adversary_dim(env), A1 = env->act_dim, H = env->horizon;
    if (!v || !o || !pol || !state || !cost || B < 1 || (env->aux_dim && !aux))
        return dg_err_set(e, DG_ERR_ARG, "dp play: bad arguments");
    sides sd;
    if (v->frozen) {  /* the frozen player's network against the other's best response on the grid */
        const int f = v->frozen_player, m = 1 - f;
        if (env->nplayers != 2 || pol->n != 2)
            return dg_err_set(e, DG_ERR_ARG, "dp play: a best response needs the two learned players' policy");
        sd = (sides){.pp = f, .poff = f ? A1 : 0, .pdim = f ? env->act2_dim : A1, .soff = m ? A1 : 0,
                     .sdim = m ? env->act2_dim : A1, .maximise = m == 1, .A = A1 + env->act2_dim};
    } else {
        if (env->nplayers != 1 || !F || pol->n != 1)
            return dg_err_set(e, DG_ERR_ARG, "dp play: a game of one learned player and an adversarial input");
        sd = (sides){.pp = 0, .poff = 0, .pdim = A1, .soff = A1, .sdim = F, .maximise = 1, .A = A1 + F};
    }
    if (!params && !pol->fn[sd.pp]) return dg_err_set(e, DG_ERR_ARG, "dp play: the policy's parameters are missing");
    if (!v->all[0] || v->horizon != H || v->nvalues != (v->frozen ? 1 : 2) || v->ndim != dg_dp_dims(env))
        return dg_err_set(e, DG_ERR_ARG, "dp play: the value must be env's, solved with keep");
    const int coarse = o->coarse ? o->coarse : 3, rounds = o->rounds > 0 ? o->rounds : o->rounds < 0 ? 0 : 8;
    if (coarse < 2 || coarse > 64 || rounds > 60 || (double)ipow(coarse, sd.sdim) > DP_ROWS)
        return dg_err_set(e, DG_ERR_ARG, "dp play: coarse %d or rounds %d", coarse, rounds);
    return play_grid(env, v, coarse, rounds, &sd, pol, params, state, aux, B, cost, e);
}

int dg_dp_frozen_fits(const dg_env *env, const dg_policy *pol, dg_params *params, int player, const dg_real *state,
                      const dg_real *aux, int B, double tol) {
    if (!env || !pol || !state || B < 1 || player < 0 || player >= pol->n || (env->aux_dim && !aux)) return 0;
    if (env->value_dim <= 0) return 1;  /* the value state is the whole state */
    const int S = env->state_dim, m = player ? env->act2_dim : env->act_dim;
    dg_real *rep = malloc(sizeof(dg_real) * (size_t)B * S), *a0 = malloc(sizeof(dg_real) * (size_t)B * m);
    dg_real *a1 = malloc(sizeof(dg_real) * (size_t)B * m);
    dg_ctx *ctx = dg_ctx_create((size_t)1 << 20);
    int fits = rep && a0 && a1 && ctx;
    for (int b = 0; b < B && fits; b++) {
        double x[DG_DP_MAX_DIMS];
        dg_dp_state(env, state + (size_t)b * S, x);
        lift(env, x, rep + (size_t)b * S);
    }
    act_job j0 = {env, pol, params, player, B, 1, state, env->aux_dim ? aux : NULL, a0};
    act_job j1 = {env, pol, params, player, B, 1, rep, env->aux_dim ? aux : NULL, a1};
    fits = fits && dg_ctx_run(&ctx, DG_ARENA_MAX, act_job_run, &j0) == DG_OK &&
           dg_ctx_run(&ctx, DG_ARENA_MAX, act_job_run, &j1) == DG_OK;
    for (int64_t i = 0; i < (int64_t)B * m && fits; i++) fits = fabs((double)a0[i] - (double)a1[i]) <= tol;
    dg_ctx_free(ctx);
    free(rep);
    free(a0);
    free(a1);
    return fits;
}

dg_status dg_dp_best_response(const dg_env *env, const dg_dp_opts *o, const dg_policy *pol, dg_params *params,
                              int frozen_player, const dg_real *state, const dg_real *aux, int B, double *cost,
                              dg_err *e) {
    if (!o || !pol || !cost) return dg_err_set(e, DG_ERR_ARG, "dp best response: bad arguments");
    dg_dp_opts q = *o;
    q.frozen = pol;
    q.frozen_params = params;
    q.frozen_player = frozen_player;
    q.keep = 1;
    dg_dp_value v;
    dg_status rc = dg_dp_solve(env, &q, &v, e);
    if (rc != DG_OK) return rc;
    rc = dg_dp_play(env, &v, &q, pol, params, state, aux, B, cost, e);
    dg_dp_value_free(&v);
    return rc;
}
