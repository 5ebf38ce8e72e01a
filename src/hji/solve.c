/* The level-set solver's public entry points: options, checks, the double and float32 solves
 * (one kernel, kernel.inc, compiled as kernel_f64.c and kernel_f32.c), nodal gradients and
 * interpolation. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "hji/internal.h"

/* ------------------------------------------------------------------ options */

static const char *const ACCURACY_NAME[] = {"low", "medium", "high", "veryHigh"};
_Static_assert(sizeof ACCURACY_NAME / sizeof ACCURACY_NAME[0] == DG_HJI_ACCURACY_COUNT,
               "ACCURACY_NAME must name every dg_hji_accuracy");

dg_hji_opts dg_hji_opts_default(void) {
    dg_hji_opts o = {0};
    dg_hji_opts_accuracy(&o, DG_HJI_ACCURACY_VERY_HIGH);
    o.diss = DG_HJI_DISS_GLOBAL;
    o.mode = DG_HJI_MODE_BRS;
    o.weno_eps = DG_HJI_WENO_EPS_GRID;
    o.real = DG_HJI_REAL_F64;
    o.cfl = 0.75;
    return o;
}

void dg_hji_opts_accuracy(dg_hji_opts *o, dg_hji_accuracy a) {
    static const dg_hji_deriv D[] = {DG_HJI_DERIV_UPWIND1, DG_HJI_DERIV_ENO2, DG_HJI_DERIV_ENO3, DG_HJI_DERIV_WENO5};
    static const dg_hji_time T[] = {DG_HJI_TIME_EULER, DG_HJI_TIME_RK2, DG_HJI_TIME_RK3, DG_HJI_TIME_RK3};
    if ((int)a < 0 || a >= DG_HJI_ACCURACY_COUNT) a = DG_HJI_ACCURACY_VERY_HIGH;
    o->deriv = D[a];
    o->time = T[a];
}

dg_hji_accuracy dg_hji_accuracy_of(const dg_hji_opts *o) {
    return o->deriv == DG_HJI_DERIV_WENO5 ? DG_HJI_ACCURACY_VERY_HIGH
         : o->deriv == DG_HJI_DERIV_ENO3  ? DG_HJI_ACCURACY_HIGH
         : o->deriv == DG_HJI_DERIV_ENO2  ? DG_HJI_ACCURACY_MEDIUM : DG_HJI_ACCURACY_LOW;
}

const char *dg_hji_accuracy_name(dg_hji_accuracy a) {
    return (int)a >= 0 && a < DG_HJI_ACCURACY_COUNT ? ACCURACY_NAME[a] : "?";
}

int dg_hji_accuracy_from_name(const char *s) {
    if (!s) return -1;
    for (int i = 0; i < DG_HJI_ACCURACY_COUNT; i++)
        if (strcmp(s, ACCURACY_NAME[i]) == 0) return i;
    return -1;
}

/* ------------------------------------------------------------------- checks */

dg_status hji_check_grid(const dg_hji_grid *g, dg_err *e) {
    if (!g || g->ndim < 1 || g->ndim > DG_HJI_GRID_MAX_DIMS)  /* more: its n^d nodes would not fit (hji learn) */
        return dg_err_set(e, DG_ERR_ARG, "hji: the grid solver takes grids of 1 to %d axes (got %d)",
                          DG_HJI_GRID_MAX_DIMS, g ? g->ndim : 0);
    int64_t nodes = 1;
    for (int k = g->ndim - 1; k >= 0; k--) {
        if (g->n[k] < 2 || !(g->dx[k] > 0) || !isfinite(g->lo[k]) || g->stride[k] != nodes)
            return dg_err_set(e, DG_ERR_ARG, "hji: grid axis %d is not initialised (use dg_hji_grid_init)", k);
        nodes *= g->n[k];
    }
    if (nodes != g->nodes)
        return dg_err_set(e, DG_ERR_ARG, "hji: grid has %lld nodes, its axes say %lld (use dg_hji_grid_init)",
                          (long long)g->nodes, (long long)nodes);
    return DG_OK;
}

dg_status hji_check_solve(const dg_hji_grid *g, const dg_hji_game *gm, const dg_hji_opts *o, int nt,
                          const double *times, dg_err *e) {
    dg_status rc = hji_check_grid(g, e);
    if (rc) return rc;
    if (!gm || !o) return dg_err_set(e, DG_ERR_ARG, "hji: solve needs a game and options");
    rc = dg_hji_game_check(gm, g->ndim, e);
    if (rc) return rc;
    if ((int)o->deriv < 0 || o->deriv > DG_HJI_DERIV_WENO5 || (int)o->time < 0 || o->time > DG_HJI_TIME_RK3 ||
        (int)o->diss < 0 || o->diss > DG_HJI_DISS_GLOBAL_MAX || (int)o->mode < 0 ||
        o->mode > DG_HJI_MODE_BRT_TARGET || (int)o->weno_eps < 0 || o->weno_eps > DG_HJI_WENO_EPS_CONST)
        return dg_err_set(e, DG_ERR_ARG, "hji: an option enum is out of range");
    if (!(o->cfl > 0) || !isfinite(o->cfl))
        return dg_err_set(e, DG_ERR_ARG, "hji: cfl must be positive, got %g", o->cfl);
    if (!(o->dt >= 0) || !isfinite(o->dt))
        return dg_err_set(e, DG_ERR_ARG, "hji: dt must be >= 0 (0: CFL steps), got %g", o->dt);
    if (o->threads < 0) return dg_err_set(e, DG_ERR_ARG, "hji: threads must be >= 0, got %d", o->threads);
    if (!(o->tol >= 0) || !isfinite(o->tol) || !(o->cap >= 0) || isnan(o->cap) || o->max_sweeps < 0 ||
        (int)o->method < 0 || o->method > DG_HJI_METHOD_SWEEP)
        return dg_err_set(e, DG_ERR_ARG, "hji: tol %g and cap %g must be >= 0 and finite, max_sweeps >= 0, "
                          "method MARCH or SWEEP", o->tol, o->cap);
    if (o->tol > 0 && nt != 1)
        return dg_err_set(e, DG_ERR_ARG, "hji: a stationary solve (tol > 0) has one output time (the most "
                          "to march), got %d", nt);
    if (o->tol > 0 && o->method == DG_HJI_METHOD_SWEEP && !(gm->payoff.on && (gm->dyn || gm->ham)))
        return dg_err_set(e, DG_ERR_ARG, "hji: fast sweeping solves games of degree (payoff.on)");
    if (o->sets && (o->tol > 0 || (gm->payoff.on && !o->stop)))
        return dg_err_set(e, DG_ERR_ARG, "hji: time-varying sets are solved over a finite horizon (not a stationary "
                          "solve) for games of kind and times to reach (a stop set)");
    if (nt < 1 || !times) return dg_err_set(e, DG_ERR_ARG, "hji: need at least one output time");
    if (o->warm && (!(o->warm_t >= 0) || !isfinite(o->warm_t) || !(times[0] >= o->warm_t)))
        return dg_err_set(e, DG_ERR_ARG, "hji: a warm start at time-to-go %g must be finite, >= 0 and at most the "
                          "first output time %g", o->warm_t, times[0]);
    for (int k = 0; k < nt; k++)
        if (!(times[k] >= 0) || !isfinite(times[k]) || (k && !(times[k] >= times[k - 1])))
            return dg_err_set(e, DG_ERR_ARG, "hji: output times must be finite, >= 0 and increasing "
                              "(times[%d] = %g)", k, times[k]);
    return DG_OK;
}

/* ------------------------------------------------------------------- solving */

/* dg_hji_solve on the whole grid (pt NULL) or on a rank's block (dg_hji_solve_part). */
static dg_status solve_any(const dg_hji_part *pt, const dg_hji_grid *g, const dg_hji_game *gm, const dg_hji_opts *o,
                           const double *v0, const double *obstacle, int nt, const double *times,
                           double *out, dg_hji_stats *stats, dg_err *e) {
    if (!v0 || !out) return dg_err_set(e, DG_ERR_ARG, "hji: solve needs v0 and out");
    if (gm && gm->diffusion) {   /* noise: the monotone diffusion scheme (diffusion.c) */
        if (pt && pt->size > 1)
            return dg_err_set(e, DG_ERR_ARG, "hji: noise is solved on the whole grid, not split over ranks");
        return hji_noise_solve(g, gm, o, v0, obstacle, nt, times, out, stats, e);
    }
    if (o && o->tol > 0 && o->method == DG_HJI_METHOD_SWEEP) {
        dg_status rc = hji_check_solve(g, gm, o, nt, times, e);
        return rc ? rc : hji_fast_sweep(g, gm, o, v0, out, stats, pt, e);
    }
    if (!o || o->real != DG_HJI_REAL_F32)
        return hji_solve_f64(g, gm, o, v0, obstacle, nt, times, out, stats, pt, e);
    dg_status rc = hji_check_solve(g, gm, o, nt, times, e);
    if (rc) return rc;
    const int64_t N = pt ? pt->nodes : g->nodes;
    float *v = malloc((size_t)N * sizeof *v);
    float *ob = obstacle ? malloc((size_t)N * sizeof *ob) : NULL;
    float *res = malloc((size_t)N * (size_t)nt * sizeof *res);
    if (!v || (obstacle && !ob) || !res) {
        rc = dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory for %lld nodes", (long long)N);
        goto cleanup;
    }
    for (int64_t j = 0; j < N; j++) {
        v[j] = (float)v0[j];
        if (ob) ob[j] = (float)obstacle[j];
    }
    rc = hji_solve_f32(g, gm, o, v, ob, nt, times, res, stats, pt, e);
    if (rc == DG_OK || rc == DG_ERR_INTERRUPTED)
        for (int64_t j = 0; j < N * nt; j++) out[j] = res[j];
cleanup:
    free(v);
    free(ob);
    free(res);
    return rc;
}

dg_status dg_hji_solve(const dg_hji_grid *g, const dg_hji_game *gm, const dg_hji_opts *o,
                       const double *v0, const double *obstacle, int nt, const double *times,
                       double *out, dg_hji_stats *stats, dg_err *e) {
    return solve_any(NULL, g, gm, o, v0, obstacle, nt, times, out, stats, e);
}

dg_status dg_hji_solve_part(const dg_hji_part *pt, const dg_hji_grid *g, const dg_hji_game *gm,
                            const dg_hji_opts *o, const double *v0, const double *obstacle, int nt,
                            const double *times, double *out, dg_hji_stats *stats, dg_err *e) {
    if (!pt) return dg_err_set(e, DG_ERR_ARG, "hji: solve_part needs a part (dg_hji_part_init)");
    dg_status rc = hji_check_grid(g, e);
    if (rc) return rc;
    int64_t node0 = 0, nodes = 1;
    int box = pt->i0 == pt->lo[0] && pt->i1 == pt->lo[0] + pt->n[0];
    for (int k = 0; k < g->ndim && box; k++) {
        box = pt->lo[k] >= 0 && pt->n[k] >= 1 && pt->lo[k] + pt->n[k] <= g->n[k] &&
              (pt->multi || k == 0 || (pt->lo[k] == 0 && pt->n[k] == g->n[k]));
        node0 += (int64_t)pt->lo[k] * g->stride[k];
        nodes *= pt->n[k];
    }
    if (!box || pt->node0 != node0 || pt->nodes != nodes)
        return dg_err_set(e, DG_ERR_ARG, "hji: the part is not a block of this grid (use dg_hji_part_init)");
    if (pt->multi && o && o->tol > 0 && o->method == DG_HJI_METHOD_SWEEP)
        return dg_err_set(e, DG_ERR_ARG, "hji: fast sweeping sweeps blocks of axis 0 (dg_hji_part_init cuts axis 0 "
                          "alone for it)");
    if (pt->size > 1 && o && g->bc[0] == DG_HJI_BC_PERIODIC && g->n[0] < hji_ghost_width(o->deriv))
        return dg_err_set(e, DG_ERR_ARG, "hji: periodic axis 0 has %d nodes, fewer than the scheme's %d ghost "
                          "layers: it cannot be split", g->n[0], hji_ghost_width(o->deriv));
    return solve_any(pt, g, gm, o, v0, obstacle, nt, times, out, stats, e);
}

dg_status dg_hji_solve_f32(const dg_hji_grid *g, const dg_hji_game *gm, const dg_hji_opts *o,
                           const float *v0, const float *obstacle, int nt, const double *times,
                           float *out, dg_hji_stats *stats, dg_err *e) {
    if (!v0 || !out) return dg_err_set(e, DG_ERR_ARG, "hji: solve needs v0 and out");
    if (o && o->tol > 0 && o->method == DG_HJI_METHOD_SWEEP)
        return dg_err_set(e, DG_ERR_ARG, "hji: fast sweeping runs in double (dg_hji_solve)");
    if (gm && gm->diffusion) return dg_err_set(e, DG_ERR_ARG, "hji: noise is solved in double (dg_hji_solve)");
    return hji_solve_f32(g, gm, o, v0, obstacle, nt, times, out, stats, NULL, e);
}

/* Checks the options that derivatives use. */
static dg_status check_deriv_opts(const dg_hji_opts *o, dg_err *e) {
    if (!o) return dg_err_set(e, DG_ERR_ARG, "hji: derivatives need options");
    if ((int)o->deriv < 0 || o->deriv > DG_HJI_DERIV_WENO5 || (int)o->weno_eps < 0 || o->weno_eps > DG_HJI_WENO_EPS_CONST ||
        o->threads < 0)
        return dg_err_set(e, DG_ERR_ARG, "hji: derivative options out of range");
    return DG_OK;
}

dg_status dg_hji_gradient(const dg_hji_grid *g, const dg_hji_opts *o, const double *v, double *grad,
                          dg_err *e) {
    dg_status rc = check_deriv_opts(o, e);
    if (rc) return rc;
    if (!v || !grad) return dg_err_set(e, DG_ERR_ARG, "hji: gradient needs v and grad");
    return hji_derivs_f64(g, o, v, NULL, NULL, grad, e);
}

dg_status dg_hji_upwind(const dg_hji_grid *g, const dg_hji_opts *o, const double *v, double *left,
                        double *right, dg_err *e) {
    dg_status rc = check_deriv_opts(o, e);
    if (rc) return rc;
    if (!v || (!left && !right)) return dg_err_set(e, DG_ERR_ARG, "hji: upwind needs v and left or right");
    return hji_derivs_f64(g, o, v, left, right, NULL, e);
}

/* ------------------------------------------------------------- interpolation */

double dg_hji_interp(const dg_hji_grid *g, const double *v, const double *x, double *grad) {
    return hji_interp_f64(g, v, x, grad);
}

double dg_hji_interp_f32(const dg_hji_grid *g, const float *v, const double *x, double *grad) {
    return hji_interp_f32(g, v, x, grad);
}

/* ----------------------------------------------------------------- memory */

/* Tables of f, G, D the solver will keep (in values): each entry zero or constant (none), varying
 * along one axis (a line) or everywhere (a full table), as the solver's tabulation classifies them;
 * judged here from the dynamics at the low corner and 64 spread nodes, without allocating. */
static double dyn_table_values(const dg_hji_grid *g, const dg_hji_game *gm, int *afull) {
    const int nd = g->ndim, nu = gm->u.dim, ndd = gm->d.dim, E = nd * (1 + nu + ndd);
    double ref[DG_HJI_MAX_DIMS * (1 + 2 * DG_HJI_MAX_INPUT)] = {0}, v[sizeof ref / sizeof ref[0]];
    double lv[sizeof ref / sizeof ref[0]], x[DG_HJI_MAX_DIMS], xl[DG_HJI_MAX_DIMS];
    int is_c[sizeof ref / sizeof ref[0]], on_axis[sizeof ref / sizeof ref[0]][DG_HJI_MAX_DIMS];
    for (int k = 0; k < nd; k++) x[k] = g->lo[k];
    gm->dyn(gm->user, x, ref, ref + nd, ref + nd + nd * nu);
    for (int q = 0; q < E; q++) {
        is_c[q] = 1;
        for (int k = 0; k < nd; k++) on_axis[q][k] = 1;
    }
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int s = 0; s < 64; s++) {
        h = h * 6364136223846793005ull + 1442695040888963407ull;
        dg_hji_grid_point(g, (int64_t)((h >> 11) % (uint64_t)g->nodes), x);
        memset(v, 0, sizeof v);
        gm->dyn(gm->user, x, v, v + nd, v + nd + nd * nu);
        for (int q = 0; q < E; q++) is_c[q] &= v[q] == ref[q];
        for (int k = 0; k < nd; k++) {
            for (int j = 0; j < nd; j++) xl[j] = j == k ? x[k] : g->lo[j];
            memset(lv, 0, sizeof lv);
            gm->dyn(gm->user, xl, lv, lv + nd, lv + nd + nd * nu);
            for (int q = 0; q < E; q++) on_axis[q][k] &= v[q] == lv[q];
        }
    }
    double values = 0;
    int last[DG_HJI_MAX_DIMS] = {0}, other[DG_HJI_MAX_DIMS] = {0};  /* row k varies along them */
    for (int q = 0; q < E; q++) {
        if (is_c[q]) continue;
        int axis = -1;
        for (int k = 0; k < nd && axis < 0; k++)
            if (on_axis[q][k]) axis = k;
        if (axis >= 0) values += g->n[axis] + 16;
        else values += (double)g->nodes + 16;
        /* entry q sits in row r of f (q < nd), G (nd x nu) or D (nd x ndd) */
        const int r = q < nd ? q : q < nd + nd * nu ? (q - nd) / nu : (q - nd - nd * nu) / ndd;
        last[r] |= axis < 0 || axis == nd - 1;
        other[r] |= axis < 0 || axis != nd - 1;
    }
    /* the dissipation along axis k needs a full table when it varies along the last axis and
     * another one; the solver keeps at most two such tables (else it recomputes them) */
    int n = 0;
    for (int k = 0; k < nd; k++) n += last[k] && other[k];
    *afull = n <= 2 ? n : 0;
    return values;
}

double dg_hji_solve_memory(const dg_hji_grid *g, const dg_hji_game *gm, const dg_hji_opts *o, int nt) {
    if (!g || !o || g->ndim < 1 || g->ndim > DG_HJI_GRID_MAX_DIMS || g->nodes < 1) return 0;
    const double N = (double)g->nodes + 16, nd = g->ndim;
    const double R = o->real == DG_HJI_REAL_F32 ? sizeof(float) : sizeof(double);
    const double stages = o->time == DG_HJI_TIME_EULER ? 1 : o->time == DG_HJI_TIME_RK2 ? 2 : 3;
    /* the value, the stage result, and a third for RK3 */
    double bytes = (stages == 3 ? 3 : 2) * N * R;
    /* the caller's output: nt times (value_k slices and the final value) */
    bytes += (double)nt * N * sizeof(double);
    /* float32 through dg_hji_solve: v0, the obstacle and the nt results converted */
    if (o->real == DG_HJI_REAL_F32) bytes += (2.0 + nt) * N * sizeof(float);
    const double nl = g->n[g->ndim - 1], q = ceil(nl / 16) * 16, rows = (double)g->nodes / nl;
    if (gm && gm->diffusion) {   /* noise (diffusion.c): two values, the output, every node's weights */
        const double k = o->controls > 0 ? o->controls : 101;
        const double pairs = pow(k, gm->u.dim) * pow(k, gm->d.dim);
        return 1.02 * ((2.0 + nt) * N * sizeof(double) + N * pairs * (2 * nd + 1) * sizeof(double)) + 1048576.0;
    }
    if (o->tol > 0 && o->method == DG_HJI_METHOD_SWEEP)   /* the sweeps' alpha and held flags */
        return 1.02 * (nt * N * sizeof(double) + nd * N * sizeof(double) + N) + 1048576.0;
    if (o->tol > 0) bytes += N * R;                          /* the previous step's value */
    const int quad = gm && hji_game_quad_inputs(gm);
    if (gm && gm->payoff.on) bytes += N * R;                 /* a running cost table */
    if (gm && gm->dyn && !quad) {
        int afull = 0;
        bytes += dyn_table_values(g, gm, &afull) * R;
        /* dissipation: a value a row and a line per axis, and the full tables */
        bytes += nd * (rows + q) * R;
        if (o->diss != DG_HJI_DISS_GLOBAL_MAX) bytes += afull * N * R;
    }
    /* each thread's workspace (a row, its ghosts, derivatives, dissipation) */
    int threads = o->threads > 0 ? o->threads : omp_get_max_threads();
    if (o->threads <= 0 && threads > 1 + g->nodes / 16384) threads = (int)(1 + g->nodes / 16384);
    const double gw = hji_ghost_width(o->deriv);
    bytes += threads * (q * R * (nd * (2 * gw + 4) + 5) + q * sizeof(double) * (5 * nd + 1) + 4096);
    /* the tabulation's scratch, page rounding of the large arrays, the allocator (measured
     * against peak RSS: within 1 % without this) */
    return 1.02 * bytes + 1048576.0;
}

/* ------------------------------------------------------------ time slices */

/* The slices solve's progress hook: copies the value at the first step at or past each mark (a
 * time the solve does not land on itself), then calls the caller's hook. */
typedef struct slice_hook {
    dg_hji_progress_fn fn;                /* the caller's, or NULL                            */
    void              *user;
    int                nmark, next;       /* marks and the next one to take                   */
    double             step;              /* the marks are k * step                           */
    int                nland;             /* times the solve lands on (it stores those)       */
    const double      *land;
    int                taken;             /* samples so far, in out                           */
    double            *times, *out;
    int64_t            N;
} slice_hook;

static int slice_progress(void *user, const dg_hji_progress *pr) {
    slice_hook *h = user;
    if (h->next < h->nmark && pr->t >= h->next * h->step * (1 - 1e-12)) {
        int landed = 0;
        for (int i = 0; i < h->nland; i++) landed |= pr->t == h->land[i];
        if (!landed) {
            double *dst = h->out + (size_t)h->taken * (size_t)h->N;
            if (pr->value) memcpy(dst, pr->value, (size_t)h->N * sizeof *dst);
            else
                for (int64_t j = 0; j < h->N; j++) dst[j] = pr->value_f32[j];
            h->times[h->taken++] = pr->t;
        }
        while (h->next < h->nmark && pr->t >= h->next * h->step * (1 - 1e-12)) h->next++;
    }
    return h->fn ? h->fn(h->user, pr) : 0;
}

/* dg_hji_problem_solve_slices on the whole grid (pt NULL) or on a rank's block. */
static dg_status solve_slices(const dg_hji_problem *p, const dg_hji_part *pt, int slices, int nreq,
                              const double *req, int *nt, double *times, double *out, dg_hji_stats *stats,
                              dg_err *e) {
    if (!p || !nt || !times || !out || nreq < 0 || (nreq && !req) || slices < 0)
        return dg_err_set(e, DG_ERR_ARG, "hji: solve_slices needs a problem, nt, times and out");
    const double T = p->t_end;
    /* a stationary value is one value; a warm start has no values before its own time to sample */
    if (slices < 2 || p->stationary || p->opts.warm) slices = 0;
    const double t0 = p->opts.warm ? p->opts.warm_t : 0;
    if (p->stationary && nreq)
        return dg_err_set(e, DG_ERR_ARG, "hji: %s is stationary (one value, no earlier times)", p->name);
    if (slices + nreq + 1 > DG_HJI_MAX_TIMES)
        return dg_err_set(e, DG_ERR_ARG, "hji: %d slices and %d requested times make more than %d times", slices,
                          nreq, DG_HJI_MAX_TIMES);
    for (int i = 0; i < nreq; i++)
        if (!(req[i] > t0 && req[i] < T) || (i && !(req[i] > req[i - 1])))
            return dg_err_set(e, DG_ERR_ARG, "hji: requested times must increase within (%g, t_end = %g)", t0, T);
    const int64_t N = pt ? pt->nodes : p->grid.nodes, node0 = pt ? pt->node0 : 0;
    const int nland = nreq + 1;
    double land[DG_HJI_MAX_TIMES];
    for (int i = 0; i < nreq; i++) land[i] = req[i];
    land[nreq] = T;
    double *solved = malloc((size_t)nland * (size_t)N * sizeof *solved);
    if (!solved) return dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory for %d x %lld values", nland, (long long)N);
    slice_hook h = {.fn = p->opts.progress, .user = p->opts.progress_user, .nmark = slices, .next = 1,
                    .step = slices ? T / (slices - 1) : 0, .nland = nland, .land = land, .times = times,
                    .out = out, .N = N};
    if (slices) {  /* the mark 0: the initial value, as the solver starts from it */
        const int f32 = p->opts.real == DG_HJI_REAL_F32;
        const double *v0 = dg_hji_problem_v0(p) + (node0 - p->block0);
        const double *ob = p->obstacle ? p->obstacle + (node0 - p->block0) : NULL;
        for (int64_t j = 0; j < N; j++) {
            double v = v0[j];
            if (ob && ob[j] > v) v = ob[j];
            out[j] = f32 ? (double)(float)v : v;
        }
        times[h.taken++] = 0;
    }
    dg_hji_problem q = *p;  /* the same problem, its progress seen by the sampler first */
    q.opts.progress = slice_progress;
    q.opts.progress_user = &h;
    dg_status rc = pt ? dg_hji_problem_solve_part(&q, pt, nland, land, solved, stats, e)
                      : dg_hji_problem_solve_at(&q, nland, land, solved, stats, e);
    if (rc == DG_OK) {  /* merge the samples (out) and the landed times (solved) from the back */
        int a = h.taken - 1, b = nland - 1;
        for (int w = h.taken + nland - 1; w >= 0; w--) {
            const int from_a = b < 0 || (a >= 0 && times[a] > land[b]);
            const double *src = from_a ? out + (size_t)a * (size_t)N : solved + (size_t)b * (size_t)N;
            double *dst = out + (size_t)w * (size_t)N;
            if (src != dst) memcpy(dst, src, (size_t)N * sizeof *dst);
            times[w] = from_a ? times[a--] : land[b--];
        }
        *nt = h.taken + nland;
        if (p->payoff == DG_HJI_PAYOFF_TIME)  /* the samples too: 0 on the target, as solve_at's */
            hji_problem_time_report(p, node0, N, *nt, out);
    }
    free(solved);
    return rc;
}

dg_status dg_hji_problem_solve_slices(const dg_hji_problem *p, int slices, int nreq, const double *req,
                                      int *nt, double *times, double *out, dg_hji_stats *stats, dg_err *e) {
    return solve_slices(p, NULL, slices, nreq, req, nt, times, out, stats, e);
}

dg_status dg_hji_problem_solve_slices_part(const dg_hji_problem *p, const dg_hji_part *pt, int slices, int nreq,
                                           const double *req, int *nt, double *times, double *out,
                                           dg_hji_stats *stats, dg_err *e) {
    if (!pt) return dg_err_set(e, DG_ERR_ARG, "hji: solve_slices_part needs a part (dg_hji_part_init)");
    return solve_slices(p, pt, slices, nreq, req, nt, times, out, stats, e);
}
