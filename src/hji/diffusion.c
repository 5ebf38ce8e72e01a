/* The grid solver's noise: games of degree whose state diffuses, dx = (f + G u + D d) dt + sigma dW,
 * with sigma sigma^T depending on the state and the inputs. The value solves
 *     V_tau + rho V = ext_u ext_d [ L + b.grad V + 1/2 tr(a Hess V) ],  b = f + G u + D d, a = sigma sigma^T,
 * discretised by an explicit monotone finite-difference scheme (a Kushner-Dupuis Markov chain): per
 * candidate input pair and axis, central differences where the diffusion dominates the drift
 * (a_ii >= |b_i| dx_i), upwind differences of the drift otherwise, the diffusion always by the central
 * second difference; forward Euler in tau with dt <= cfl / max (sum_i (cp_i + cm_i) + rho) over the
 * nodes and candidates. docs/hji.md, "Diffusion", states the scheme, its monotonicity and its bound. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/memory.h"
#include "hji/internal.h"

#define DEFAULT_CONTROLS 101   /* candidate points per input component (opts.controls 0; dg_hji_solve_memory too) */
#define MAX_CANDIDATES 20000   /* most candidate input pairs                                   */

int dg_hji_game_noisy(const dg_hji_game *gm) { return gm && gm->diffusion; }

/* What the scheme needs about a game on a grid. */
typedef struct noise_ctx {
    const dg_hji_grid *g;
    const dg_hji_game *gm;
    int     nx, nu, nd;
    int     k;                            /* candidate points per component                  */
    int     ncu, ncd, nc;                 /* candidates of u, of d, pairs (u outer, d inner)  */
    double *cu, *cd;                      /* (ncu, nu), (ncd, nd) candidate inputs            */
    int     refine;                       /* one player of one component: refine its input    */
    int     width;                        /* 2 nx + 1: cp (nx), cm (nx), L per candidate pair */
    double  smax;                         /* the largest sum of coefficients (+ rho)          */
} noise_ctx;

/* The candidates of a box input: k evenly spaced points per component, their product, into out
 * (k^dim, dim); the count. */
static int box_candidates(const dg_hji_input *in, int k, double *out) {
    int n = 1;
    for (int j = 0; j < in->dim; j++) n *= k;
    for (int c = 0; c < n; c++) {
        int r = c;
        for (int j = in->dim - 1; j >= 0; j--, r /= k) {
            const int i = r % k;
            out[c * in->dim + j] = in->lo[j] + (in->hi[j] - in->lo[j]) * i / (k - 1);
        }
    }
    return n;
}

/* The scheme's coefficients at x (f, G, D there) for the inputs u, d into cp, cm (nx each, >= 0: the
 * weights of V(x + dx_i e_i) - V(x) and V(x - dx_i e_i) - V(x)) and *L (the running cost); returns
 * their sum plus rho, or -1 for a cross term of sigma sigma^T, -2 for a negative or non-finite one. */
static double coef(const noise_ctx *c, const double *x, const double *f, const double *G, const double *D,
                   const double *u, const double *d, double *cp, double *cm, double *L) {
    const int nx = c->nx;
    double a[DG_HJI_MAX_DIMS * DG_HJI_MAX_DIMS];
    memset(a, 0, (size_t)(nx * nx) * sizeof *a);
    c->gm->diffusion(c->gm->user, x, c->nu ? u : NULL, c->nd ? d : NULL, a);
    double sum = c->gm->payoff.discount;
    for (int i = 0; i < nx; i++) {
        for (int j = 0; j < nx; j++)
            if (j != i && a[i * nx + j] != 0) return -1;
        const double aii = a[i * nx + i], h = c->g->dx[i];
        if (!(aii >= 0) || !isfinite(aii)) return -2;
        double b = f[i];
        for (int j = 0; j < c->nu; j++) b += G[i * c->nu + j] * u[j];
        for (int j = 0; j < c->nd; j++) b += D[i * c->nd + j] * d[j];
        const double dd = aii / (2 * h * h);
        if (aii >= fabs(b) * h) {   /* central: both weights stay >= 0 */
            cp[i] = dd + b / (2 * h);
            cm[i] = dd - b / (2 * h);
        } else {                     /* upwind drift */
            cp[i] = dd + (b > 0 ? b : 0) / h;
            cm[i] = dd + (b < 0 ? -b : 0) / h;
        }
        sum += cp[i] + cm[i];
    }
    *L = dg_hji_game_running_cost(c->gm, x, c->nu ? u : NULL, c->nd ? d : NULL);
    return sum;
}

/* f, G, D at x (zeroed first), as the affine game's dyn gives them. */
static void dyn_at(const noise_ctx *c, const double *x, double *f, double *G, double *D) {
    memset(f, 0, (size_t)c->nx * sizeof *f);
    memset(G, 0, (size_t)(c->nx * DG_HJI_MAX_INPUT) * sizeof *G);
    memset(D, 0, (size_t)(c->nx * DG_HJI_MAX_INPUT) * sizeof *D);
    c->gm->dyn(c->gm->user, x, f, G, D);
}

/* Node j's row: every candidate pair's coefficients (nc, width) into row; the largest sum into *smax.
 * Returns 0, or the coef code (-1 cross term, -2 bad variance) of the first bad pair. */
static int fill_row(const noise_ctx *c, int64_t j, double *row, double *smax) {
    double x[DG_HJI_MAX_DIMS], f[DG_HJI_MAX_DIMS], G[DG_HJI_MAX_DIMS * DG_HJI_MAX_INPUT],
        D[DG_HJI_MAX_DIMS * DG_HJI_MAX_INPUT];
    dg_hji_grid_point(c->g, j, x);
    dyn_at(c, x, f, G, D);
    for (int a = 0; a < c->ncu; a++)
        for (int b = 0; b < c->ncd; b++) {
            double *r = row + (size_t)(a * c->ncd + b) * (size_t)c->width;
            const double s = coef(c, x, f, G, D, c->cu + a * c->nu, c->cd + b * c->nd, r, r + c->nx, r + 2 * c->nx);
            if (s < 0) return (int)s;
            if (s > *smax) *smax = s;
        }
    return 0;
}

/* V's differences to the node j's neighbours along each axis into dp, dm (nx): the next node, the
 * wrapped one on a periodic axis, the game's ghost (or 2 v - v_in) past a plain edge. */
static void node_diffs(const noise_ctx *c, const double *V, int64_t j, double *dp, double *dm) {
    const dg_hji_grid *g = c->g;
    double x[DG_HJI_MAX_DIMS];
    int have_x = 0;
    const double v = V[j];
    for (int i = 0; i < c->nx; i++) {
        const int64_t s = g->stride[i];
        const int n = g->n[i], k = (int)((j / s) % n);
        double vp, vm;
        for (int up = 0; up < 2; up++) {
            const int inside = up ? k + 1 < n : k > 0;
            double w;
            if (inside) w = V[up ? j + s : j - s];
            else if (g->bc[i] == DG_HJI_BC_PERIODIC) w = V[up ? j - (int64_t)(n - 1) * s : j + (int64_t)(n - 1) * s];
            else {
                const double vin = V[up ? j - s : j + s];
                if (c->gm->ghost) {
                    if (!have_x) dg_hji_grid_point(g, j, x), have_x = 1;
                    w = c->gm->ghost(c->gm->user, i, up, x, g->dx[i], v, vin);
                } else {
                    w = 2 * v - vin;
                }
            }
            if (up) vp = w;
            else vm = w;
        }
        dp[i] = vp - v;
        dm[i] = vm - v;
    }
}

/* 1 when h is better than best for a player of this role */
static int better(dg_hji_role role, double h, double best) { return role == DG_HJI_ROLE_MAX ? h > best : h < best; }

/* The discrete Hamiltonian ext_u ext_d [L + sum_i cp_i dp_i + cm_i dm_i] over node j's candidate row;
 * the optimal pair's indices into *bu, *bd. */
static double row_ham(const noise_ctx *c, const double *row, const double *dp, const double *dm, int *bu, int *bd) {
    const int nx = c->nx;
    double best = 0;
    for (int a = 0; a < c->ncu; a++) {
        double inner = 0;
        int ib = 0;
        for (int b = 0; b < c->ncd; b++) {
            const double *r = row + (size_t)(a * c->ncd + b) * (size_t)c->width;
            double h = r[2 * nx];
            for (int i = 0; i < nx; i++) h += r[i] * dp[i] + r[nx + i] * dm[i];
            if (b == 0 || better(c->gm->d.role, h, inner)) inner = h, ib = b;
        }
        if (a == 0 || better(c->gm->u.role, inner, best)) best = inner, *bu = a, *bd = ib;
    }
    return best;
}

/* The Hamiltonian at node j (x, f, G, D) for the refined player's input w (the other absent), or the
 * worst value for its role when the coefficients break the step's bound. */
static double ham_at(const noise_ctx *c, const double *x, const double *f, const double *G, const double *D,
                     double w, const double *dp, const double *dm) {
    const int nx = c->nx;
    const int isu = c->nu == 1;
    const dg_hji_role role = isu ? c->gm->u.role : c->gm->d.role;
    double cp[DG_HJI_MAX_DIMS], cm[DG_HJI_MAX_DIMS], L;
    const double s = coef(c, x, f, G, D, &w, &w, cp, cm, &L);
    if (s < 0 || s > c->smax) return role == DG_HJI_ROLE_MAX ? -INFINITY : INFINITY;
    double h = L;
    for (int i = 0; i < nx; i++) h += cp[i] * dp[i] + cm[i] * dm[i];
    return h;
}

/* The Hamiltonian of node j's candidate pair k (its row) for V's differences dp, dm. */
static double cand_ham(const noise_ctx *c, const double *row, int k, const double *dp, const double *dm) {
    const double *r = row + (size_t)k * (size_t)c->width;
    double h = r[2 * c->nx];
    for (int i = 0; i < c->nx; i++) h += r[i] * dp[i] + r[c->nx + i] * dm[i];
    return h;
}

/* Refines the one-component player's best candidate k (Hamiltonian h) at node j: the vertex of the
 * parabola through the Hamiltonians of the candidates k - 1, k, k + 1 (exact where the discrete
 * Hamiltonian is quadratic in the input: a linear drift, a quadratic cost, sigma linear in the input,
 * one differencing regime), evaluated exactly and kept if it does better. Returns the Hamiltonian kept
 * and its input into *w. Monotone either way: every input kept has nonnegative weights within the
 * bound (ham_at refuses the others). */
static double refine(const noise_ctx *c, const double *row, int64_t j, int k, double h, const double *dp,
                     const double *dm, double *w) {
    const int isu = c->nu == 1;
    const double *cand = isu ? c->cu : c->cd;
    const int n = isu ? c->ncu : c->ncd;
    *w = cand[k];
    if (k == 0 || k == n - 1) return h;   /* at the box's edge: the bound is the optimum's projection */
    const double hm = cand_ham(c, row, k - 1, dp, dm), hp = cand_ham(c, row, k + 1, dp, dm);
    const double step = cand[k + 1] - cand[k], curv = hp - 2 * h + hm;
    if (curv == 0) return h;
    double s = 0.5 * (hm - hp) / curv;   /* the vertex, in steps from cand[k]: within [-1/2, 1/2] for the best */
    if (s > 1) s = 1;
    if (s < -1) s = -1;
    const double m = cand[k] + s * step;
    double x[DG_HJI_MAX_DIMS], f[DG_HJI_MAX_DIMS], G[DG_HJI_MAX_DIMS * DG_HJI_MAX_INPUT],
        D[DG_HJI_MAX_DIMS * DG_HJI_MAX_INPUT];
    dg_hji_grid_point(c->g, j, x);
    dyn_at(c, x, f, G, D);
    const double hv = ham_at(c, x, f, G, D, m, dp, dm);
    if (better(isu ? c->gm->u.role : c->gm->d.role, hv, h)) {
        *w = m;
        return hv;
    }
    return h;
}

/* Checks what the diffusion scheme solves and sets up c (its candidates allocated: noise_free). */
static dg_status noise_setup(noise_ctx *c, const dg_hji_grid *g, const dg_hji_game *gm, const dg_hji_opts *o,
                             dg_err *e) {
    memset(c, 0, sizeof *c);
    dg_status rc = hji_check_grid(g, e);
    if (rc) return rc;
    if (!gm || !o) return dg_err_set(e, DG_ERR_ARG, "hji: solve needs a game and options");
    if ((rc = dg_hji_game_check(gm, g->ndim, e))) return rc;
    if (!gm->payoff.on)
        return dg_err_set(e, DG_ERR_ARG, "hji: noise (a diffusion term) is solved for games of degree; a noisy game "
                          "of kind (a tube) would be a probability of reaching, which is not defined here yet");
    if (!gm->dyn)
        return dg_err_set(e, DG_ERR_ARG, "hji: noise needs affine dynamics (dyn), not a generic Hamiltonian");
    const dg_hji_input *in[2] = {&gm->u, &gm->d};
    for (int q = 0; q < 2; q++)
        if (in[q]->dim && in[q]->set != DG_HJI_SET_BOX && in[q]->set != DG_HJI_SET_BOX_COST)
            return dg_err_set(e, DG_ERR_ARG, "hji: with noise the %s must be a box (set box, or a box at a cost): "
                              "the scheme optimises over candidates in it", q ? "disturbance d" : "control u");
    if (o->controls < 0 || o->controls == 1)
        return dg_err_set(e, DG_ERR_ARG, "hji: controls %d: expected 0 (the default, %d) or at least 2 candidates "
                          "per component", o->controls, DEFAULT_CONTROLS);
    c->g = g;
    c->gm = gm;
    c->nx = g->ndim;
    c->nu = gm->u.dim;
    c->nd = gm->d.dim;
    c->k = o->controls ? o->controls : DEFAULT_CONTROLS;
    double ncu = 1, ncd = 1;
    for (int j = 0; j < c->nu; j++) ncu *= c->k;
    for (int j = 0; j < c->nd; j++) ncd *= c->k;
    if (ncu * ncd > MAX_CANDIDATES)
        return dg_err_set(e, DG_ERR_ARG, "hji: with noise, %d candidates per component make %.0f input pairs, more "
                          "than %d: lower the controls", c->k, ncu * ncd, MAX_CANDIDATES);
    c->ncu = (int)ncu;
    c->ncd = (int)ncd;
    c->nc = c->ncu * c->ncd;
    c->width = 2 * c->nx + 1;
    c->refine = (c->nu == 1 && c->nd == 0) || (c->nu == 0 && c->nd == 1);
    c->cu = malloc((size_t)c->ncu * (size_t)(c->nu ? c->nu : 1) * sizeof *c->cu);
    c->cd = malloc((size_t)c->ncd * (size_t)(c->nd ? c->nd : 1) * sizeof *c->cd);
    if (!c->cu || !c->cd) return dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory");
    if (c->nu) box_candidates(&gm->u, c->k, c->cu);
    if (c->nd) box_candidates(&gm->d, c->k, c->cd);
    return DG_OK;
}

static void noise_free(noise_ctx *c) {
    free(c->cu);
    free(c->cd);
}

/* The message for fill_row's code at node j. */
static dg_status bad_row(const noise_ctx *c, int code, int64_t j, dg_err *e) {
    double x[DG_HJI_MAX_DIMS];
    dg_hji_grid_point(c->g, j, x);
    if (code == -1)
        return dg_err_set(e, DG_ERR_ARG, "hji: sigma sigma^T has a cross term (an off-diagonal entry) at x = (%g%s): "
                          "the monotone scheme here takes diagonal diffusion (cross terms need a wide stencil)",
                          x[0], c->nx > 1 ? ", ..." : "");
    return dg_err_set(e, DG_ERR_ARG, "hji: sigma sigma^T has a negative or non-finite diagonal entry at x = (%g%s)",
                      x[0], c->nx > 1 ? ", ..." : "");
}

/* The one-component player's input at the refined or candidate optimum, into u, d. */
static void inputs_of(const noise_ctx *c, int bu, int bd, int refined, double w, double *u, double *d) {
    if (u && c->nu) memcpy(u, c->cu + bu * c->nu, (size_t)c->nu * sizeof *u);
    if (d && c->nd) memcpy(d, c->cd + bd * c->nd, (size_t)c->nd * sizeof *d);
    if (refined && c->nu == 1 && u) u[0] = w;
    if (refined && c->nd == 1 && d) d[0] = w;
}

dg_status hji_noise_solve(const dg_hji_grid *g, const dg_hji_game *gm, const dg_hji_opts *o, const double *v0,
                          const double *obstacle, int nt, const double *times, double *out, dg_hji_stats *stats,
                          dg_err *e) {
    const double t_start = omp_get_wtime();
    noise_ctx c;
    dg_status rc = noise_setup(&c, g, gm, o, e);
    if (rc) {
        noise_free(&c);
        return rc;
    }
    if (o->real == DG_HJI_REAL_F32) rc = dg_err_set(e, DG_ERR_ARG, "hji: noise is solved in double (precision f64)");
    else if (o->tol > 0) rc = dg_err_set(e, DG_ERR_ARG, "hji: noise is solved over a finite horizon (not stationary)");
    else if (obstacle || o->stop || o->cap > 0 || o->sets)
        rc = dg_err_set(e, DG_ERR_ARG, "hji: noise is solved for payoff: cost without a target or obstacles");
    else if (nt < 1 || !times) rc = dg_err_set(e, DG_ERR_ARG, "hji: need at least one output time");
    for (int k = 0; !rc && k < nt; k++)
        if (!(times[k] >= 0) || !isfinite(times[k]) || (k && !(times[k] >= times[k - 1])))
            rc = dg_err_set(e, DG_ERR_ARG, "hji: output times must be finite, >= 0 and increasing (times[%d] = %g)", k,
                            times[k]);
    const double t0 = o->warm ? o->warm_t : 0;
    if (!rc && o->warm && !(t0 >= 0 && t0 <= times[0]))
        rc = dg_err_set(e, DG_ERR_ARG, "hji: a warm start at %g must lie in [0, the first output time %g]", t0, times[0]);
    if (rc) {
        noise_free(&c);
        return rc;
    }
    const int64_t N = g->nodes;
    const double rowbytes = (double)c.nc * c.width * sizeof(double);
    if (dg_mem_check((double)N * rowbytes + 2.0 * N * sizeof(double), e) != DG_OK) {
        noise_free(&c);
        return DG_ERR_NOMEM;
    }
    double *tab = malloc((size_t)N * (size_t)c.nc * (size_t)c.width * sizeof *tab);
    double *V = malloc((size_t)N * sizeof *V), *W = malloc((size_t)N * sizeof *W);
    if (!tab || !V || !W) {
        rc = dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory for the noise scheme's tables (%lld nodes x %d inputs)",
                        (long long)N, c.nc);
        goto done;
    }
    /* every node's coefficients, once: the dynamics and the diffusion do not depend on time */
    c.smax = 0;
    for (int64_t j = 0; j < N; j++) {
        const int code = fill_row(&c, j, tab + (size_t)j * (size_t)c.nc * (size_t)c.width, &c.smax);
        if (code) {
            rc = bad_row(&c, code, j, e);
            goto done;
        }
    }
    /* the monotone bound: every weight of the update V + dt (h - rho V) is >= 0 while dt smax <= 1 */
    const double bound = c.smax > 0 ? 1 / c.smax : INFINITY;
    double dt_max = c.smax > 0 ? o->cfl / c.smax : (times[nt - 1] - t0 > 0 ? times[nt - 1] - t0 : 1);
    if (o->dt > 0) {
        if (o->dt > bound) {
            rc = dg_err_set(e, DG_ERR_ARG, "hji: dt %g breaks the noise scheme's monotone bound 1 / max(sum of "
                            "weights) = %g", o->dt, bound);
            goto done;
        }
        dt_max = o->dt;
    }
    memcpy(V, o->warm ? o->warm : v0, (size_t)N * sizeof *V);
    int nth = o->threads > 0 ? o->threads : omp_get_max_threads();
    if (o->threads <= 0 && nth > 1 + N / 16384) nth = (int)(1 + N / 16384);
    const double rho = gm->payoff.discount;
    double t = t0;
    int64_t steps = 0;
    double dtmin = INFINITY, dtmaxs = 0;
    for (int k = 0; k < nt && !rc; k++) {
        const double span = times[k] - t;
        const double ns = span > 0 ? ceil(span / dt_max * (1 - 1e-12)) : 0;
        if (ns > DG_HJI_MAX_STEPS) {
            rc = dg_err_set(e, DG_ERR_ARG, "hji: the noise scheme needs %.3g steps to %g (dt %g), more than %d",
                            ns, times[k], dt_max, DG_HJI_MAX_STEPS);
            break;
        }
        const double dt = ns > 0 ? span / ns : 0;
        for (int64_t s = 0; s < (int64_t)ns && !rc; s++) {
            int bad = 0;
#pragma omp parallel for num_threads(nth) schedule(static) reduction(| : bad)
            for (int64_t j = 0; j < N; j++) {
                double dp[DG_HJI_MAX_DIMS], dm[DG_HJI_MAX_DIMS];
                node_diffs(&c, V, j, dp, dm);
                int bu = 0, bd = 0;
                double h = row_ham(&c, tab + (size_t)j * (size_t)c.nc * (size_t)c.width, dp, dm, &bu, &bd);
                if (c.refine) {
                    double w;
                    h = refine(&c, tab + (size_t)j * (size_t)c.nc * (size_t)c.width, j, c.nu ? bu : bd, h, dp, dm, &w);
                }
                W[j] = V[j] + dt * (h - rho * V[j]);
                bad |= !isfinite(W[j]);
            }
            double *sw = V;
            V = W;
            W = sw;
            t = s + 1 == (int64_t)ns ? times[k] : t + dt;
            steps++;
            if (dt < dtmin) dtmin = dt;
            if (dt > dtmaxs) dtmaxs = dt;
            if (bad) rc = dg_err_set(e, DG_ERR_NONFINITE, "hji: the value is not finite at tau = %g", t);
            if (!rc && o->progress) {
                const dg_hji_progress pr = {.t = t, .t_end = times[nt - 1], .step = steps, .dt = dt,
                                            .seconds = omp_get_wtime() - t_start, .value = V};
                if (o->progress(o->progress_user, &pr))
                    rc = dg_err_set(e, DG_ERR_INTERRUPTED, "hji: interrupted at tau = %g", t);
            }
        }
        if (!rc || rc == DG_ERR_INTERRUPTED) memcpy(out + (size_t)k * (size_t)N, V, (size_t)N * sizeof *out);
        if (!rc) t = times[k];
    }
    if (stats) {
        memset(stats, 0, sizeof *stats);
        stats->steps = steps;
        stats->stages = 1;
        stats->nodes = N;
        stats->cell_updates = (double)steps * (double)N;
        stats->seconds = omp_get_wtime() - t_start;
        stats->updates_per_s = stats->seconds > 0 ? stats->cell_updates / stats->seconds : 0;
        stats->dt_min = steps ? dtmin : 0;
        stats->dt_max = dtmaxs;
        stats->threads = nth;
        stats->t = t;
    }
done:
    free(tab);
    free(V);
    free(W);
    noise_free(&c);
    return rc;
}

dg_status dg_hji_noise_inputs(const dg_hji_grid *g, const dg_hji_game *gm, const dg_hji_opts *o, const double *v,
                              int64_t node, double *u, double *d, dg_err *e) {
    if (!gm || !gm->diffusion) return dg_err_set(e, DG_ERR_ARG, "hji: noise_inputs needs a game with noise");
    noise_ctx c;
    dg_status rc = noise_setup(&c, g, gm, o, e);
    if (!rc && (!v || node < 0 || node >= g->nodes))
        rc = dg_err_set(e, DG_ERR_ARG, "hji: noise_inputs needs a value and a node in [0, %lld)", (long long)g->nodes);
    double *row = rc ? NULL : malloc((size_t)c.nc * (size_t)c.width * sizeof *row);
    if (!rc && !row) rc = dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory");
    if (!rc) {
        /* the bound over the whole grid, as the solve had it (a refined input may not exceed it) */
        double *scratch = malloc((size_t)c.nc * (size_t)c.width * sizeof *scratch);
        if (!scratch) rc = dg_err_set(e, DG_ERR_NOMEM, "hji: out of memory");
        for (int64_t j = 0; !rc && j < g->nodes; j++) {
            const int code = fill_row(&c, j, scratch, &c.smax);
            if (code) rc = bad_row(&c, code, j, e);
        }
        free(scratch);
    }
    if (!rc) {
        double dp[DG_HJI_MAX_DIMS], dm[DG_HJI_MAX_DIMS], s = 0, w = 0;
        fill_row(&c, node, row, &s);
        node_diffs(&c, v, node, dp, dm);
        int bu = 0, bd = 0;
        const double h = row_ham(&c, row, dp, dm, &bu, &bd);
        if (c.refine) refine(&c, row, node, c.nu ? bu : bd, h, dp, dm, &w);
        inputs_of(&c, bu, bd, c.refine, w, u, d);
    }
    free(row);
    noise_free(&c);
    return rc;
}
