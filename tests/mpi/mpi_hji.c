/* Under mpirun -np N: every case solved by each rank alone (dg_hji_problem_solve_slices on the whole
 * grid) and by the ranks together (dg_hji_problem_solve_slices_part on each rank's box); each
 * box must hold the same bits as the whole solve's nodes there, at every stored time. Cases: the
 * four accuracies on the cut dg_hji_part_cuts chooses, on axis 0 alone and on cuts along other
 * axes (1 x N, 2 x 2, 1 x 2 x 2), the three modes, float32, every dissipation, games of kind and
 * of degree (a stationary time to reach with an obstacle, quadratic-cost inputs: a generic
 * Hamiltonian), grids periodic along a split axis (axis 0; axes 0 and 1 cut in boxes), and grids
 * so short along axis 0 that blocks are narrower than the ghost layers. Fast sweeping (a game of degree) must converge on the ranks to within ten
 * tolerances of one process's value. dg_dist_share_blocks (hji learn's shards) gives every rank every
 * item. Prints one line a case on rank 0; exit 1 on a mismatch.
 * Usage: mpi_hji DATA_DIR (tests/data/mpi). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difgames/config.h"
#include "difgames/dist.h"
#include "difgames/hji.h"
#include "difgames/hji_part.h"

static int failures;

/* pt's box of the whole array (g's nodes) into out (pt->nodes, row-major), node by node. */
static void box_of(const dg_hji_grid *g, const dg_hji_part *pt, const double *whole, double *out) {
    for (int64_t j = 0; j < pt->nodes; j++) {
        int64_t r = j, at = 0;
        for (int k = g->ndim - 1; k >= 0; k--) {
            at += (int64_t)(pt->lo[k] + (int)(r % pt->n[k])) * g->stride[k];
            r /= pt->n[k];
        }
        out[j] = whole[at];
    }
}

/* "2 x 2 x 1" */
static const char *cut_name(const dg_hji_part *pt, int nd, char *buf, size_t size) {
    int w = 0;
    for (int k = 0; k < nd && w >= 0 && (size_t)w < size; k++)
        w += snprintf(buf + w, size - (size_t)w, "%s%d", k ? " x " : "", pt->cuts[k]);
    return buf;
}

/* Compares the ranks' boxes with the whole solve: 0 when every bit matches on every rank. */
static int compare(const char *what, const dg_hji_part *pt, const dg_hji_grid *g, int nt_w, const double *tw,
                   const double *vw, int nt_p, const double *tp, const double *vp) {
    const int64_t N = g->nodes;
    double *b = malloc((size_t)pt->nodes * sizeof *b);
    int bad = nt_w != nt_p || !b;
    for (int k = 0; !bad && k < nt_w; k++) {
        box_of(g, pt, vw + (size_t)k * (size_t)N, b);
        bad |= memcmp(&tw[k], &tp[k], sizeof *tw) != 0 ||
               memcmp(b, vp + (size_t)k * (size_t)pt->nodes, (size_t)pt->nodes * sizeof *vw) != 0;
    }
    free(b);
    bad = dg_dist_or(bad);
    char cut[64];
    if (pt->rank == 0)
        printf("%-44s %d ranks (%s), %d times: %s\n", what, pt->size, cut_name(pt, g->ndim, cut, sizeof cut), nt_w,
               bad ? "DIFFERENT" : "same bits");
    failures += bad;
    return bad;
}

/* 1 when the box array a (NULL or not) is pt's box of the whole array b (both NULL: equal). */
static int same_nodes(const double *a, const double *b, const dg_hji_grid *g, const dg_hji_part *pt) {
    if (!a || !b) return !a && !b;
    double *x = malloc((size_t)pt->nodes * sizeof *x);
    if (!x) return 0;
    box_of(g, pt, b, x);
    const int same = memcmp(a, x, (size_t)pt->nodes * sizeof *a) == 0;
    free(x);
    return same;
}

/* A problem loaded split (dg_hji_problem_load_split: each rank builds its block's node arrays in
 * dg_hji_problem_keep_block) against the whole load p: the block's target, obstacle, initial and
 * stop and the game's fingerprint must be p's bits; 0 when they are on every rank. */
static int compare_built(const char *what, const dg_hji_part *pt, const dg_hji_problem *p, const dg_hji_problem *q) {
    const dg_hji_grid *g = &p->grid;
    int bad = !same_nodes(q->target, p->target, g, pt) || !same_nodes(q->obstacle, p->obstacle, g, pt) ||
              !same_nodes(q->initial, p->initial, g, pt) || !same_nodes(q->stop, p->stop, g, pt) ||
              q->opts.stop != q->stop ||
              q->nprint != p->nprint || memcmp(q->print, p->print, sizeof p->print) != 0;
    bad = dg_dist_or(bad);
    if (pt->rank == 0) printf("%-44s built per block: %s\n", what, bad ? "DIFFERENT" : "same bits");
    failures += bad;
    return bad;
}

/* One config with overrides (key=value pairs, NULL-terminated): solved alone on the whole load and
 * split on a load that builds only the box's arrays; cuts: the cut (NULL: dg_hji_part_init's). */
static void run_config_cut(const char *dir, const char *file, const char *const *set, const int *cuts) {
    char path[512], what[256];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    snprintf(what, sizeof what, "%s", file);
    dg_err e = {0};
    dg_cfg *cfg = dg_cfg_load(path, &e);
    for (int i = 0; cfg && set[i]; i += 2) {
        if (dg_cfg_set(cfg, set[i], set[i + 1], &e)) break;
        snprintf(what + strlen(what), sizeof what - strlen(what), " %s=%s", set[i], set[i + 1]);
    }
    dg_hji_problem *p = cfg && !e.status ? dg_hji_problem_load(cfg, &e) : NULL;
    dg_hji_problem *q = p ? dg_hji_problem_load_split(cfg, &e) : NULL;
    if (!p || !q) {
        fprintf(stderr, "mpi_hji: %s: %s\n", path, e.msg);
        exit(2);
    }
    p->opts.threads = 1;
    q->opts.threads = 1;
    const int slices = p->stationary ? 0 : 4;
    const int64_t N = p->grid.nodes;
    dg_hji_part pt;
    if (dg_hji_part_init_cut(&pt, &p->grid, &p->opts, cuts, &e) || dg_hji_problem_keep_block(q, &pt, &e)) {
        fprintf(stderr, "mpi_hji: %s: %s\n", path, e.msg);
        exit(2);
    }
    compare_built(what, &pt, p, q);
    double tw[DG_HJI_MAX_TIMES], tp[DG_HJI_MAX_TIMES];
    int nw = 0, np = 0;
    double *vw = malloc((size_t)(slices + 1) * (size_t)N * sizeof *vw);
    double *vp = malloc((size_t)(slices + 1) * (size_t)pt.nodes * sizeof *vp);
    dg_hji_stats sw, sp;
    if (!vw || !vp || dg_hji_problem_solve_slices(p, slices, 0, NULL, &nw, tw, vw, &sw, &e) ||
        dg_hji_problem_solve_slices_part(q, &pt, slices, 0, NULL, &np, tp, vp, &sp, &e)) {
        fprintf(stderr, "mpi_hji: %s: %s\n", what, e.msg);
        exit(1);
    }
    if (sw.steps != sp.steps || sw.converged != sp.converged) {
        fprintf(stderr, "mpi_hji: %s: %lld steps alone, %lld split\n", what, (long long)sw.steps, (long long)sp.steps);
        failures++;
    }
    compare(what, &pt, &p->grid, nw, tw, vw, np, tp, vp);
    /* rank 0 assembles the blocks: the whole solve's bits */
    double *all = pt.rank == 0 ? malloc((size_t)np * (size_t)N * sizeof *all) : NULL;
    if ((pt.rank == 0 && !all) || dg_hji_part_gather(&pt, &p->grid, np, vp, all, &e)) {
        fprintf(stderr, "mpi_hji: %s: gather: %s\n", what, e.msg);
        exit(1);
    }
    if (pt.rank == 0 && memcmp(all, vw, (size_t)np * (size_t)N * sizeof *all)) {
        printf("%-44s gathered on rank 0: DIFFERENT\n", what);
        failures++;
    }
    free(all);
    free(vw);
    free(vp);
    dg_hji_problem_free(p);
    dg_hji_problem_free(q);
    dg_cfg_free(cfg);
}

static void run_config(const char *dir, const char *file, const char *const *set) {
    run_config_cut(dir, file, set, NULL);
}

/* A rotation x' = -w y + u, y' = w x + d on a grid periodic along axis 0 (the split axis). */
static void rot_dyn(void *user, const double *x, double *f, double *G, double *D) {
    (void)user;
    f[0] = -0.7 * x[1];
    f[1] = 0.7 * sin(x[0]);
    G[0] = 1;
    G[1] = 0;
    D[0] = 0;
    D[1] = 0.5 + 0.25 * cos(x[0]);
}

/* n0 nodes along axis 0, periodic or not: few enough nodes leave blocks narrower than the ghost
 * layers (taken from several ranks). */
static void run_periodic(dg_hji_accuracy acc, dg_hji_mode mode, int n0, int wrap) {
    const double lo[2] = {0, -1}, hi[2] = {6.283185307179586, 1};
    const int n[2] = {n0, 21}, periodic[2] = {wrap, 0};
    dg_hji_grid g;
    dg_err e = {0};
    if (dg_hji_grid_init(&g, 2, lo, hi, n, periodic, &e)) {
        fprintf(stderr, "mpi_hji: %s\n", e.msg);
        exit(2);
    }
    dg_hji_game gm = {.nx = 2, .dyn = rot_dyn};
    gm.u = (dg_hji_input){.dim = 1, .set = DG_HJI_SET_BOX, .role = DG_HJI_ROLE_MAX, .lo = {-0.5}, .hi = {0.5}};
    gm.d = (dg_hji_input){.dim = 1, .set = DG_HJI_SET_BOX, .role = DG_HJI_ROLE_MIN, .lo = {-0.3}, .hi = {0.3}};
    dg_hji_opts o = dg_hji_opts_default();
    dg_hji_opts_accuracy(&o, acc);
    o.mode = mode;
    o.threads = 1;
    o.diss = DG_HJI_DISS_LOCAL;
    const int64_t N = g.nodes;
    double *v0 = malloc((size_t)N * sizeof *v0), *vw = malloc(2 * (size_t)N * sizeof *vw);
    const double c[2] = {3.0, 0.2};
    dg_hji_sdf_ball(&g, c, 0.6, 3u, v0);
    dg_hji_part pt;
    if (!v0 || !vw || dg_hji_part_init(&pt, &g, &o, &e)) {
        fprintf(stderr, "mpi_hji: periodic: %s\n", e.msg);
        exit(2);
    }
    double *vp = malloc(2 * (size_t)pt.nodes * sizeof *vp);
    const double times[2] = {0.4, 0.9};
    if (!vp || dg_hji_solve(&g, &gm, &o, v0, NULL, 2, times, vw, NULL, &e) ||
        dg_hji_solve_part(&pt, &g, &gm, &o, v0 + pt.node0, NULL, 2, times, vp, NULL, &e)) {
        fprintf(stderr, "mpi_hji: periodic: %s\n", e.msg);
        exit(1);
    }
    char what[128];
    snprintf(what, sizeof what, "%s axis 0 of %d accuracy=%s mode=%d", wrap ? "periodic" : "open", n0,
             dg_hji_accuracy_name(acc), (int)mode);
    compare(what, &pt, &g, 2, times, vw, 2, times, vp);
    free(v0);
    free(vw);
    free(vp);
}

/* The rotation in 3-D, z' = 0.4 cos x + d: a grid periodic along axes 0 and 1, cut into boxes along
 * both (a ring of two boxes: the neighbour below is the one above) or along axis 1 alone. */
static void rot3_dyn(void *user, const double *x, double *f, double *G, double *D) {
    (void)user;
    f[0] = -0.7 * sin(x[1]);
    f[1] = 0.7 * sin(x[0]);
    f[2] = 0.4 * cos(x[0]);
    G[0] = 1;
    G[1] = 0;
    G[2] = 0;
    D[0] = 0;
    D[1] = 0.5 + 0.25 * cos(x[0]);
    D[2] = 0.3;
}

static void run_periodic_box(dg_hji_accuracy acc, const int *cuts) {
    const double lo[3] = {0, 0, -1}, hi[3] = {6.283185307179586, 6.283185307179586, 1};
    const int n[3] = {12, 10, 9}, periodic[3] = {1, 1, 0};
    dg_hji_grid g;
    dg_err e = {0};
    if (dg_hji_grid_init(&g, 3, lo, hi, n, periodic, &e)) {
        fprintf(stderr, "mpi_hji: %s\n", e.msg);
        exit(2);
    }
    dg_hji_game gm = {.nx = 3, .dyn = rot3_dyn};
    gm.u = (dg_hji_input){.dim = 1, .set = DG_HJI_SET_BOX, .role = DG_HJI_ROLE_MAX, .lo = {-0.5}, .hi = {0.5}};
    gm.d = (dg_hji_input){.dim = 1, .set = DG_HJI_SET_BOX, .role = DG_HJI_ROLE_MIN, .lo = {-0.3}, .hi = {0.3}};
    dg_hji_opts o = dg_hji_opts_default();
    dg_hji_opts_accuracy(&o, acc);
    o.threads = 1;
    o.diss = DG_HJI_DISS_LOCAL;
    const int64_t N = g.nodes;
    double *v0 = malloc((size_t)N * sizeof *v0), *vw = malloc(2 * (size_t)N * sizeof *vw);
    const double c[3] = {3.0, 2.0, 0.2};
    dg_hji_sdf_ball(&g, c, 1.2, 7u, v0);
    dg_hji_part pt;
    if (!v0 || !vw || dg_hji_part_init_cut(&pt, &g, &o, cuts, &e)) {
        fprintf(stderr, "mpi_hji: periodic box: %s\n", e.msg);
        exit(2);
    }
    double *vp = malloc(2 * (size_t)pt.nodes * sizeof *vp), *b0 = malloc((size_t)pt.nodes * sizeof *b0);
    const double times[2] = {0.3, 0.6};
    if (!vp || !b0) exit(2);
    box_of(&g, &pt, v0, b0);
    if (dg_hji_solve(&g, &gm, &o, v0, NULL, 2, times, vw, NULL, &e) ||
        dg_hji_solve_part(&pt, &g, &gm, &o, b0, NULL, 2, times, vp, NULL, &e)) {
        fprintf(stderr, "mpi_hji: periodic box: %s\n", e.msg);
        exit(1);
    }
    char what[128];
    snprintf(what, sizeof what, "periodic axes 0, 1 of 12 x 10 accuracy=%s", dg_hji_accuracy_name(acc));
    compare(what, &pt, &g, 2, times, vw, 2, times, vp);
    free(v0);
    free(vw);
    free(vp);
    free(b0);
}

/* Fast sweeping across the ranks: block Jacobi between the blocks, so not one process's bits;
 * both must converge, to values within a few tolerances of each other (printed). */
static void run_sweep(const char *dir, const char *file) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    dg_err e = {0};
    dg_cfg *cfg = dg_cfg_load(path, &e);
    dg_hji_problem *p = cfg ? dg_hji_problem_load(cfg, &e) : NULL;
    dg_hji_part pt;
    if (!p || dg_hji_part_init(&pt, &p->grid, &p->opts, &e)) {
        fprintf(stderr, "mpi_hji: %s: %s\n", path, e.msg);
        exit(2);
    }
    const int64_t N = p->grid.nodes;
    double *vw = malloc((size_t)N * sizeof *vw), *vp = malloc((size_t)pt.nodes * sizeof *vp);
    dg_hji_stats sw, sp;
    if (!vw || !vp || dg_hji_problem_solve_at(p, 1, &p->t_end, vw, &sw, &e) ||
        dg_hji_problem_solve_part(p, &pt, 1, &p->t_end, vp, &sp, &e)) {
        fprintf(stderr, "mpi_hji: %s: %s\n", path, e.msg);
        exit(1);
    }
    double d[2] = {0, 0};   /* max |difference|, max |value| */
    for (int64_t j = 0; j < pt.nodes; j++) {
        d[0] = fmax(d[0], fabs(vp[j] - vw[pt.node0 + j]));
        d[1] = fmax(d[1], fabs(vw[pt.node0 + j]));
    }
    dg_dist_max(d, 2);
    /* the same tolerance met on both; the values within ten tolerances of each other */
    const int bad = dg_dist_or(!sw.converged || !sp.converged || !(sp.residual < p->opts.tol) ||
                               !(d[0] <= 10 * p->opts.tol));
    if (pt.rank == 0)
        printf("%-44s %d ranks: %s (sweeps %lld alone, %lld split; max |diff| %.3g of max |V| %.3g)\n",
               file, pt.size, bad ? "DIFFERENT" : "converged, close", (long long)sw.iterations,
               (long long)sp.iterations, d[0], d[1]);
    failures += bad;
    free(vw);
    free(vp);
    dg_hji_problem_free(p);
    dg_cfg_free(cfg);
}

/* The cut of a grid over the ranks and the face exchange of a d-dimensional split (the groundwork
 * of cuts over several axes): the chooser's known answers on 41^3, and on a 3-D grid cut as it
 * says every ghost node along one cut axis holds its neighbour's value after dg_dist_halo_faces
 * (around the ring of a periodic axis; beyond an open edge untouched). */
static void run_cuts(void) {
    dg_err e = {0};
    const int R = dg_dist_size();
    int bad = 0;
    {   /* 41^3, 3 ghost layers: 2 ranks cut axis 0; 4 cut axes 0 and 1 in two (one face each) */
        const double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
        const int n[3] = {41, 41, 41}, per[3] = {0, 0, 0};
        dg_hji_grid g;
        int c[3];
        double h = 0;
        if (dg_hji_grid_init(&g, 3, lo, hi, n, per, &e) || dg_hji_part_cuts(&g, 3, R, c, &h, &e)) {
            fprintf(stderr, "mpi_hji: cuts: %s\n", e.msg);
            exit(1);
        }
        const int want[5][3] = {{1, 1, 1}, {1, 1, 1}, {2, 1, 1}, {3, 1, 1}, {2, 2, 1}};
        const double want_h[5] = {0, 0, 3.0 * 41 * 41, 2 * 3.0 * 41 * 41, 2 * 3.0 * 21 * 41};
        if (R <= 4 && (memcmp(c, want[R], sizeof c) || h != want_h[R])) {
            if (dg_dist_rank() == 0)
                printf("cut of 41^3 over %d ranks: %d x %d x %d, halo %g: WRONG\n", R, c[0], c[1], c[2], h);
            bad = 1;
        }
        /* 12 ranks over 41^6 with 3 ghost layers: blocks of at least 3 layers, product 12 */
        const double lo6[6] = {0}, hi6[6] = {1, 1, 1, 1, 1, 1};
        const int n6[6] = {41, 41, 41, 41, 41, 41}, per6[6] = {0};
        dg_hji_grid g6;
        int c6[6];
        if (dg_hji_grid_init(&g6, 6, lo6, hi6, n6, per6, &e) || dg_hji_part_cuts(&g6, 3, 12, c6, &h, &e)) {
            fprintf(stderr, "mpi_hji: cuts: %s\n", e.msg);
            exit(1);
        }
        int prod = 1, axes = 0;
        for (int k = 0; k < 6; k++) {
            prod *= c6[k];
            axes += c6[k] > 1;
            bad |= c6[k] > 1 && 41 / c6[k] < 3;
        }
        bad |= prod != 12 || c6[5] != 1 || axes < 2;   /* one axis in 12 would have far more halo */
        bad |= dg_hji_part_cuts(&g6, 3, 41 * 41, c6, &h, &e) != DG_ERR_ARG;   /* 41 x 41 blocks of 1 layer */
    }
    /* the exchange on a 9 x 8 x 7 grid, axis 1 periodic, 2 ghost layers */
    const double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    const int n[3] = {9, 8, 7}, per[3] = {0, 1, 0}, gwd = 2;
    dg_hji_grid g;
    int c[3], coords[3], nlo[3], nhi[3], size[3], gw[3], b0[3], b1[3];
    if (dg_hji_grid_init(&g, 3, lo, hi, n, per, &e) || dg_hji_part_cuts(&g, gwd, R, c, NULL, &e)) {
        fprintf(stderr, "mpi_hji: cuts: %s\n", e.msg);
        exit(1);
    }
    dg_dist_cart(3, c, per, coords, nlo, nhi);
    int64_t cells = 1;
    for (int k = 0; k < 3; k++) {
        b0[k] = (int)((int64_t)coords[k] * n[k] / c[k]);
        b1[k] = (int)((int64_t)(coords[k] + 1) * n[k] / c[k]);
        gw[k] = c[k] > 1 ? gwd : 0;
        size[k] = b1[k] - b0[k] + 2 * gw[k];
        cells *= size[k];
    }
    double *a = malloc((size_t)cells * sizeof *a);
    if (!a) exit(2);
    for (int64_t j = 0; j < cells; j++) {   /* own nodes: their global index; ghosts: -1 */
        int own = 1;
        int64_t r = j, gi = 0, stride = 1;
        for (int k = 2; k >= 0; k--) {
            const int l = (int)(r % size[k]);
            r /= size[k];
            own &= l >= gw[k] && l < size[k] - gw[k];
            gi += (int64_t)(b0[k] + l - gw[k]) * stride;
            stride *= n[k];
        }
        a[j] = own ? (double)gi : -1;
    }
    dg_dist_halo_faces(a, 3, size, gw, sizeof *a, nlo, nhi);
    int64_t wrong = 0;
    for (int64_t j = 0; j < cells; j++) {
        int l[3], ghost = 0, out = 0;
        int64_t r = j, gi = 0, stride = 1;
        for (int k = 2; k >= 0; k--) {
            l[k] = (int)(r % size[k]);
            r /= size[k];
        }
        for (int k = 2; k >= 0; k--) {
            int i = b0[k] + l[k] - gw[k];
            if (l[k] < gw[k] || l[k] >= size[k] - gw[k]) ghost++;
            if (i < 0 || i >= n[k]) {
                if (per[k]) i = (i + n[k]) % n[k];
                else out = 1;
            }
            gi += (int64_t)i * stride;
            stride *= n[k];
        }
        if (ghost != 1) continue;   /* own nodes, and edges and corners (not read by the per-axis stencils) */
        wrong += out ? a[j] != -1 : a[j] != (double)gi;
    }
    free(a);
    bad |= wrong != 0;
    bad = dg_dist_or(bad);
    if (dg_dist_rank() == 0)
        printf("%-44s %d ranks: %s (9 x 8 x 7 cut %d x %d x %d)\n", "cuts and face exchange", R,
               bad ? "WRONG" : "as expected", c[0], c[1], c[2]);
    failures += bad;
}

/* dg_dist_block and dg_dist_share_blocks (hji learn's shards): n items of two pieces (an int, three
 * doubles), each rank filling its block and the others' items left at -1; after the exchange every
 * rank must hold every item's values (n = 2 leaves a rank without items on 3 and 4 ranks). */
static void run_share_blocks(void) {
    for (int n = 1; n <= 7; n++) {
        int a[7], lo, hi, bad = 0;
        double b[7][3];
        void *ptr[14];
        const size_t bytes[2] = {sizeof(int), sizeof b[0]};
        dg_dist_block(n, &lo, &hi);
        for (int i = 0; i < n; i++) {
            const int mine = i >= lo && i < hi;
            a[i] = mine ? 10 * i : -1;
            for (int j = 0; j < 3; j++) b[i][j] = mine ? i + 0.25 * j : -1;
            ptr[2 * i] = &a[i], ptr[2 * i + 1] = b[i];
        }
        dg_err e = {0};
        if (dg_dist_share_blocks(n, 2, ptr, bytes, &e) != DG_OK) bad = 1;
        for (int i = 0; i < n; i++) {
            bad |= a[i] != 10 * i;
            for (int j = 0; j < 3; j++) bad |= b[i][j] != i + 0.25 * j;
        }
        if (dg_dist_sum_int(hi - lo) != n) bad = 1;   /* the blocks cover the items once */
        if (dg_dist_or(bad)) {
            failures++;
            if (dg_dist_rank() == 0) printf("FAIL dg_dist_share_blocks of %d items on %d ranks\n", n, dg_dist_size());
        }
    }
    if (dg_dist_rank() == 0) printf("ok   dg_dist_share_blocks: 1 to 7 items on %d ranks, every rank holds all\n",
                                    dg_dist_size());
}

int main(int argc, char **argv) {
    dg_dist_init(&argc, &argv);
    if (argc != 2) {
        fprintf(stderr, "usage: mpi_hji DATA_DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    static const char *const ACC[] = {"low", "medium", "high", "veryHigh"};
    const int R = dg_dist_size();
    /* cuts along other axes than 0: 1 x R (air3d's 16 nodes along axis 1, chase4d's 11), 1 x 1 x 2
     * on 2 ranks, 1 x 2 x 2 on 4; the chosen cut is 2 x 2 on 4 ranks for both, axis 0 on 2 and 3 */
    const int air_1r[3] = {1, R, 1}, ch_1r[4] = {1, R, 1, 1}, ch_122[4] = {1, 2, 2, 1}, ch_12[4] = {1, 1, 2, 1};
    for (int a = 0; a < 4; a++) {
        const char *const s1[] = {"accuracy", ACC[a], NULL};
        const char *const s0[] = {"accuracy", ACC[a], "solver.split", "axis0", NULL};
        run_config(dir, "air3d.yaml", s1);
        run_config(dir, "chase4d.yaml", s1);
        if (R == 1) continue;
        run_config(dir, "air3d.yaml", s0);
        run_config(dir, "chase4d.yaml", s0);
        if (R <= 5) run_config_cut(dir, "air3d.yaml", s1, air_1r);
        if (R <= 3) run_config_cut(dir, "chase4d.yaml", s1, ch_1r);
        if (R == 4) run_config_cut(dir, "chase4d.yaml", s1, ch_122);
        if (R == 2) run_config_cut(dir, "chase4d.yaml", s1, ch_12);
    }
    if (R > 1) {   /* float32, and a model file's time to reach built per box, on axis 1 alone (2 x 2 on 4) */
        const char *const f32b[] = {"solver.precision", "f32", "accuracy", "high", NULL};
        if (R <= 3) run_config_cut(dir, "chase4d.yaml", f32b, ch_1r);
        const char *const dubins_box[] = {"grid.n", "[13, 11, 8]", "payoff", "time", "mode", "brs", "t_end", "0.3",
                                          NULL};
        const int d_1r[3] = {1, R, 1};
        if (R <= 4) run_config_cut(dir, "../../../configs/models/dubins.yaml", dubins_box, R == 4 ? NULL : d_1r);
    }
    for (int a = 0; a < 4 && R > 1; a++) {   /* periodic axes cut into boxes */
        const int c01[3] = {R == 4 ? 2 : R, R == 4 ? 2 : 1, 1}, c1[3] = {1, R, 1};
        if (R == 4 || R == 2) run_periodic_box((dg_hji_accuracy)a, c01);
        if (R <= 3) run_periodic_box((dg_hji_accuracy)a, c1);
    }
    static const char *const MODES[] = {"brs", "brt_target"};
    for (int m = 0; m < 2; m++) {
        const char *const s[] = {"mode", MODES[m], NULL};
        run_config(dir, "air3d.yaml", s);
    }
    static const char *const DISS[] = {"local", "locallocal", "globalmax"};
    for (int d = 0; d < 3; d++) {
        const char *const s[] = {"solver.dissipation", DISS[d], "accuracy", "high", NULL};
        run_config(dir, "air3d.yaml", s);
    }
    const char *const f32[] = {"solver.precision", "f32", NULL};
    run_config(dir, "air3d.yaml", f32);
    run_config(dir, "chase4d.yaml", f32);
    const char *const none[] = {NULL};
    run_config(dir, "pursuit2d_time.yaml", none);
    run_config(dir, "lq_game.yaml", none);
    const char *const lq_low[] = {"accuracy", "medium", "solver.dissipation", "global", NULL};
    run_config(dir, "lq_game.yaml", lq_low);
    for (int a = 0; a < 4; a++) run_periodic((dg_hji_accuracy)a, a == 1 ? DG_HJI_MODE_BRT : DG_HJI_MODE_BRS, 26, 1);
    /* blocks of one or two layers: ghost layers from two and three ranks away, around the ring too */
    for (int a = 0; a < 4; a++) {
        run_periodic((dg_hji_accuracy)a, DG_HJI_MODE_BRS, 5, 1);
        run_periodic((dg_hji_accuracy)a, DG_HJI_MODE_BRT, 4, 0);
    }
    const char *const narrow[] = {"accuracy", "veryHigh", "solver.split", "axis0", NULL};
    run_config(dir, "air3d_narrow.yaml", narrow);
    const char *const narrow_lo[] = {"accuracy", "medium", "solver.dissipation", "local", "solver.split", "axis0", NULL};
    run_config(dir, "air3d_narrow.yaml", narrow_lo);
    /* model files: a target and an avoid set of expressions, a time to reach; narrow blocks along x */
    const char *const dubins[] = {"grid.n", "[13, 11, 8]", "t_end", "0.3", NULL};
    run_config(dir, "../../../configs/models/dubins.yaml", dubins);
    const char *const dubins_time[] = {"grid.n", "[6, 11, 8]", "payoff", "time", "mode", "brs", "t_end", "0.3",
                                       "solver.split", "axis0", NULL};
    run_config(dir, "../../../configs/models/dubins.yaml", dubins_time);
    const char *const p2_narrow[] = {"grid.n", "[5, 21]", "accuracy", "low", "solver.split", "axis0", NULL};
    run_config(dir, "pursuit2d_time.yaml", p2_narrow);
    run_sweep(dir, "lq_sweep.yaml");
    run_cuts();
    run_share_blocks();
    const int rc = failures ? 1 : 0;
    if (dg_dist_rank() == 0) printf("%s\n", rc ? "mpi_hji: FAILED" : "mpi_hji: every case the same bits");
    dg_dist_finalize();
    return rc;
}
