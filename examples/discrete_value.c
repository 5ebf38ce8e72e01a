/* The value of a learning config's own discrete game, by dynamic programming on a grid
 * (include/difgames/certify_dp.h): a refinement study at held-out starts drawn by the game's reset,
 * the upper and lower values of a two-player game, one value of a one-player game.
 *
 *     build/examples/discrete_value CONFIG [NODES [TOL [MAX_GRIDS [STARTS]]]]
 *     build/examples/discrete_value tests/data/lq_mass.yaml 21 0.01 4
 *
 * NODES: the coarsest grid's nodes per value axis (21); TOL: the relative change between the two
 * finest grids that counts as converged (0.002); MAX_GRIDS (5); STARTS (16, drawn with the config's
 * seed + 1000; a game with episode constants, a goal, is solved for the first start's). The box is the reset's support widened by a quarter of its span: a game whose
 * optimal paths leave it needs a box of its own (dg_dp_opts.lo, hi; the off-box fraction of each
 * solve says how often it mattered). Prints one line per grid, then each value's mean, order and
 * whether it converged. */
#include <stdio.h>
#include <stdlib.h>

#include "difgames/difgames.h"

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s CONFIG [NODES [TOL [MAX_GRIDS [STARTS]]]]\n", argv[0]);
        return 2;
    }
    const int nodes = argc > 2 ? atoi(argv[2]) : 21, maxg = argc > 4 ? atoi(argv[4]) : 5;
    const int B = argc > 5 ? atoi(argv[5]) : 16;
    const double tol = argc > 3 ? atof(argv[3]) : 0.002;
    if (nodes < 3 || !(tol > 0) || maxg < 3 || maxg > DG_DP_MAX_GRIDS || B < 1 || B > 4096) {
        fprintf(stderr, "%s: NODES >= 3, TOL > 0, MAX_GRIDS 3 to %d, STARTS 1 to 4096\n", argv[0], DG_DP_MAX_GRIDS);
        return 2;
    }
    dg_err e = {0};
    dg_run r;
    if (dg_run_load(&r, argv[1], NULL, 0, &e) != DG_OK) {
        fprintf(stderr, "%s\n", e.msg);
        return 2;
    }
    dg_real *state = NULL, *aux = NULL;
    double *value = malloc(sizeof(double) * 2 * (size_t)B);
    dg_dp_opts o = {.threads = 0};
    for (int k = 0; k < DG_DP_MAX_DIMS; k++) o.nodes[k] = nodes;
    dg_dp_refine_opts ro = {.tol = tol, .max_grids = maxg};
    dg_dp_refinement ref;
    int rc = 1;
    if (!value || dg_run_init_draw(r.env, r.opts.seed + 1000, B, &state, &aux, &e) != DG_OK) goto out;
    o.aux = r.env->aux_dim ? aux : NULL;  /* episode constants (a goal): the first start's, for every start */
    if (dg_dp_refine(r.env, &o, &ro, state, B, &ref, value, NULL, &e) != DG_OK) goto out;
    for (int i = 0; i < ref.ngrids; i++) {
        printf("grid %d: %d", i, ref.nodes[i][0]);
        for (int k = 1; k < dg_dp_dims(r.env); k++) printf(" x %d", ref.nodes[i][k]);
        printf(" nodes  %s %.6f", ref.nvalues == 2 ? "V+" : "V", ref.mean[i][0]);
        if (ref.nvalues == 2) printf("  V- %.6f", ref.mean[i][1]);
        printf("  %.1f s\n", ref.seconds[i]);
    }
    for (int w = 0; w < ref.nvalues; w++) {
        double m = 0;
        for (int b = 0; b < B; b++) m += value[(size_t)w * B + b] / B;
        printf("%s: %.6f (%s), order %.2f, change %.4f\n", ref.nvalues == 1 ? "V" : w ? "V-" : "V+", m,
               ref.extrapolated[w] ? "extrapolated" : "the finest grid's", ref.order[w], ref.change[w]);
    }
    printf("converged: %s (%s, tol %g)\n", ref.converged ? "yes" : "no", ref.stopped, tol);
    rc = 0;
out:
    if (rc) fprintf(stderr, "%s\n", e.msg[0] ? e.msg : "out of memory");
    free(value);
    free(state);
    free(aux);
    dg_run_free(&r);
    return rc;
}
