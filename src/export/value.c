/* A grid value as plain C: the table, the library's interpolation (hji_interp_real in
 * src/hji/kernel.inc), both players' bang-bang feedback (dg_hji_game_optimal) and the switch or the
 * qp filter (dg_hji_filter_row: the game's drift, the projection on the box),
 * written statement for statement in the same order, so that the code compiled anywhere gives the
 * library's bits (tests/export_test.sh compares them on 10^6 states). */
#include <math.h>
#include <string.h>

#include "difgames/hji_file.h"
#include "difgames/safety.h"
#include "difgames/safetensors.h"
#include "export/internal.h"

/* The built-in games whose feedback is exported. G and D (the inputs' matrices) are tabulated from
 * the game's own dynamics where they do not depend on the state; air3d's and chauffeur's do, and
 * their lines below are the game's dyn_* (src/hji/problem_games.c) as C text. */
static const char *const GAMES[] = {"pursuit2d", "air3d", "chauffeur", "chase4d", "linear", NULL};

/* 1 when p's game's G and D depend on the state (state_inputs writes them), 0 when they are constant
 * (tabulated from its dynamics). */
static int state_dependent(const dg_hji_problem *p) {
    return !strcmp(p->name, "air3d") || !strcmp(p->name, "chauffeur");
}

/* Writes the statements that fill G (nx, nu) and D (nx, nd), zeroed before, at x, for a game whose
 * G and D depend on x. */
static void state_inputs(FILE *fp, const dg_hji_problem *p) {
    if (!strcmp(p->name, "air3d")) {  /* G = (y, -x, -1), D = (0, 0, 1) */
        fprintf(fp, "    G[0] = x[1];\n    G[1] = -x[0];\n    G[2] = -1;\n    D[2] = 1;\n");
        return;
    }
    if (!strcmp(p->name, "chauffeur")) {  /* G = (-w y, w x), D = v_e I */
        const double w = dg_hji_problem_param(p, "turn_rate"), ve = dg_hji_problem_param(p, "speed_evader");
        fprintf(fp, "    G[0] = %a * x[1];\n    G[1] = %a * x[0];\n    D[0] = %a;\n    D[3] = %a;\n", -w, w, ve, ve);
    }
}

/* Writes the statements that fill f (nx), zeroed before, with the drift of p's game at x: the game's
 * dyn_* (src/hji/problem_games.c) as C text, for the qp filter (games whose control is a box). */
static void drift_lines(FILE *fp, const dg_hji_problem *p) {
    if (!strcmp(p->name, "air3d")) {  /* f = (-v_a + v_b cos psi, v_b sin psi, 0) */
        const double va = dg_hji_problem_param(p, "speed_evader"), vb = dg_hji_problem_param(p, "speed_pursuer");
        fprintf(fp, "    f[0] = MADD(%a, cos(x[2]), %a);\n    f[1] = %a * sin(x[2]);\n", vb, -va, vb);
    } else if (!strcmp(p->name, "chauffeur")) {  /* f = (0, -v_p) */
        fprintf(fp, "    f[1] = %a;\n", -dg_hji_problem_param(p, "speed_pursuer"));
    } else if (!strcmp(p->name, "linear")) {  /* f = drift + A x */
        for (int k = 0; k < 2; k++) {
            fprintf(fp, "    f[%d] = %a;\n", k, p->lin.drift[k]);
            for (int j = 0; j < 2; j++) fprintf(fp, "    f[%d] = MADD(%a, x[%d], f[%d]);\n", k, p->lin.A[k * 2 + j], j, k);
        }
    }
}

const char *dg_export_filter_refusal(const dg_hji_problem *p, int mode) {
    if (!p) return "no problem";
    if (mode == DG_SAFETY_SWITCH) return NULL;
    if (mode != DG_SAFETY_QP) return "an unknown filter (switch or qp)";
    if (!p->game.u.dim) return "the game has no control for the qp filter to choose";
    if (p->game.u.set != DG_HJI_SET_BOX)
        return "the qp filter's closed form (the library's, dg_hji_filter_row) is for a box control; this one is a ball";
    /* from 4 components on the library's compiler vectorises the projection's sums: not reproduced */
    if (p->game.u.dim > 2) return "the qp filter of a box control of more than 2 components is not exported";
    if (strcmp(p->name, "air3d") && strcmp(p->name, "chauffeur") && strcmp(p->name, "linear"))
        return "the qp filter needs the game's drift written as C: air3d, chauffeur and linear";
    return NULL;
}

const char *dg_export_value_refusal(const dg_hji_problem *p) {
    if (!p) return "no problem";
    int known = 0;
    for (int i = 0; GAMES[i]; i++) known |= !strcmp(p->name, GAMES[i]);
    if (strcmp(dg_hji_problem_source(p), "builtin") || !known)
        return "only the built-in games pursuit2d, air3d, chauffeur, chase4d and linear are exported (their "
               "dynamics written as C)";
    if (!p->game.dyn) return "a game without dynamics (a generic Hamiltonian) has no feedback to export";
    const dg_hji_input *in[2] = {&p->game.u, &p->game.d};
    for (int q = 0; q < 2; q++) {
        if (in[q]->dim && in[q]->set != DG_HJI_SET_BOX && in[q]->set != DG_HJI_SET_BALL)
            return "an input with a quadratic cost (linear's quadratic set) is not exported: boxes and balls only";
        /* the library's compiler sums |s|^2 of a longer ball otherwise (vectorised): not reproduced */
        if (in[q]->set == DG_HJI_SET_BALL && in[q]->dim > 2)
            return "a ball input of more than 2 components is not exported: boxes and balls of 1 or 2";
    }
    if (p->grid.ndim > DG_HJI_GRID_MAX_DIMS) return "a problem without a grid of nodes has no table to export";
    return NULL;
}

/* The constant G and D of p's game, from its dynamics at the grid's low corner, checked at 16 more
 * points spread over the grid (bitwise): into G, D (zeroed); DG_ERR_ARG if they vary. */
static dg_status constant_inputs(const dg_hji_problem *p, double *G, double *D, dg_err *e) {
    const dg_hji_game *gm = &p->game;
    const int nx = gm->nx, nG = nx * gm->u.dim, nD = nx * gm->d.dim;
    double f[DG_HJI_MAX_DIMS], x[DG_HJI_MAX_DIMS], G1[DG_HJI_MAX_DIMS * DG_HJI_MAX_INPUT],
        D1[DG_HJI_MAX_DIMS * DG_HJI_MAX_INPUT];
    for (int s = 0; s <= 16; s++) {
        for (int k = 0; k < nx; k++) x[k] = p->grid.lo[k] + (p->grid.hi[k] - p->grid.lo[k]) * ((s * (k + 3)) % 17) / 16.0;
        memset(f, 0, sizeof f);
        memset(s ? G1 : G, 0, sizeof G1);
        memset(s ? D1 : D, 0, sizeof D1);
        gm->dyn(gm->user, x, f, s ? G1 : G, s ? D1 : D);
        if (s && (memcmp(G, G1, (size_t)nG * sizeof *G) || memcmp(D, D1, (size_t)nD * sizeof *D)))
            return dg_err_set(e, DG_ERR_ARG, "export: %s's input matrices depend on the state: not exported", p->name);
    }
    return DG_OK;
}

/* One player's input set as static arrays named by who ("U" or "D_"): role sign, set, box, ball. */
static void write_input(FILE *fp, const char *who, const dg_hji_input *in) {
    if (!in->dim) return;
    fprintf(fp, "static const double %sSG = %s; /* the role: +1 maximises, -1 minimises */\n", who,
            in->role == DG_HJI_ROLE_MAX ? "1" : "-1");
    if (in->set == DG_HJI_SET_BALL) {
        fprintf(fp, "static const double %sRADIUS = %a;\nstatic const double %sCENTER[%d] = {\n", who, in->radius, who,
                in->dim);
        dg__ex_doubles(fp, in->center, in->dim);
    } else {
        fprintf(fp, "static const double %sLO[%d] = {\n", who, in->dim);
        dg__ex_doubles(fp, in->lo, in->dim);
        fprintf(fp, "};\nstatic const double %sHI[%d] = {\n", who, in->dim);
        dg__ex_doubles(fp, in->hi, in->dim);
    }
    fprintf(fp, "};\n");
}

/* The statements of dg_hji_game_optimal's best() for one player: s (its G^T p) into v. */
static void write_best(FILE *fp, const char *who, const char *v, const dg_hji_input *in) {
    if (in->set == DG_HJI_SET_BALL)
        fprintf(fp,
                "    {\n        double n2 = 0, nrm;\n"
                "        for (j = 0; j < %d; j++) n2 = MADD(s[j], s[j], n2);\n"
                "        nrm = sqrt(n2);\n"
                "        for (j = 0; j < %d; j++) %s[j] = %sCENTER[j] + (nrm > 0 ? %sSG * %sRADIUS * s[j] / nrm : 0);\n"
                "    }\n",
                in->dim, in->dim, v, who, who, who);
    else
        fprintf(fp,
                "    {\n        for (j = 0; j < %d; j++) {\n"
                "            const double q = %sSG * s[j];\n"
                "            %s[j] = q > 0 ? %sHI[j] : q < 0 ? %sLO[j] : 0.5 * (%sLO[j] + %sHI[j]);\n"
                "        }\n    }\n",
                in->dim, who, v, who, who, who, who);
}

/* The fixed part of the code: the interpolation, hji_interp_real's statements (kernel.inc). */
static const char INTERP[] =
    "/* i wrapped into [0, n) */\n"
    "static int wrap(int i, int n) {\n"
    "    int r = i % n;\n"
    "    return r < 0 ? r + n : r;\n"
    "}\n\n"
    "/* central difference of V along axis k at node j (multi-index idx), one-sided at a plain edge */\n"
    "static double node_grad(const int *idx, long long j, int k) {\n"
    "    const int n = NN[k], i = idx[k];\n"
    "    const long long st = ST[k];\n"
    "    if (PER[k]) {\n"
    "        const long long jp = j + (long long)(wrap(i + 1, n) - i) * st;\n"
    "        const long long jm = j + (long long)(wrap(i - 1, n) - i) * st;\n"
    "        return ((double)V[jp] - (double)V[jm]) / (2 * DX[k]);\n"
    "    }\n"
    "    if (i == 0) return ((double)V[j + st] - (double)V[j]) / DX[k];\n"
    "    if (i == n - 1) return ((double)V[j] - (double)V[j - st]) / DX[k];\n"
    "    return ((double)V[j + st] - (double)V[j - st]) / (2 * DX[k]);\n"
    "}\n\n"
    "/* V at x, multilinear, and its gradient into grad (may be NULL): the blend of the nodes' central\n"
    " * differences. A periodic axis wraps; a plain axis clamps x to its edge and extrapolates linearly\n"
    " * with that gradient; a NaN coordinate reads as the low edge. Every index stays in the table. */\n"
    "static double interp(const double *x, double *grad) {\n"
    "    int i0[NX], i1[NX], outside = 0, k, c, want_grad;\n"
    "    double t[NX], off[NX], gl[NX], val = 0;\n"
    "    for (k = 0; k < NX; k++) {\n"
    "        const int n = NN[k];\n"
    "        int i;\n"
    "        double f;\n"
    "        off[k] = 0;\n"
    "        if (PER[k]) {\n"
    "            double u = (x[k] - LO[k]) / DX[k];\n"
    "            if (!isfinite(u)) u = 0;\n"
    "            u = fmod(u, (double)n);\n"
    "            if (u < 0) u += n;\n"
    "            i = (int)floor(u);\n"
    "            if (i < 0) i = 0;\n"
    "            if (i > n - 1) i = n - 1;\n"
    "            f = u - i;\n"
    "            t[k] = f < 0 ? 0 : f > 1 ? 1 : f;\n"
    "            i0[k] = i;\n"
    "            i1[k] = (i + 1) % n;\n"
    "        } else {\n"
    "            const double top = MADD((double)(n - 1), DX[k], LO[k]);\n"
    "            double cl = x[k], u;\n"
    "            if (isnan(cl)) cl = LO[k];\n"
    "            if (cl < LO[k]) cl = LO[k];\n"
    "            if (cl > top) cl = top;\n"
    "            if (isfinite(x[k]) && x[k] != cl) {\n"
    "                off[k] = x[k] - cl;\n"
    "                outside = 1;\n"
    "            }\n"
    "            u = (cl - LO[k]) / DX[k];\n"
    "            i = (int)floor(u);\n"
    "            if (i < 0) i = 0;\n"
    "            if (i > n - 2) i = n - 2;\n"
    "            f = u - i;\n"
    "            t[k] = f < 0 ? 0 : f > 1 ? 1 : f;\n"
    "            i0[k] = i;\n"
    "            i1[k] = i + 1;\n"
    "        }\n"
    "    }\n"
    "    want_grad = grad || outside;\n"
    "    for (k = 0; k < NX; k++) gl[k] = 0;\n"
    "    for (c = 0; c < (1 << NX); c++) {\n"
    "        double w = 1;\n"
    "        int idx[NX];\n"
    "        long long j = 0;\n"
    "        for (k = 0; k < NX; k++) {\n"
    "            const int hi = (c >> k) & 1;\n"
    "            idx[k] = hi ? i1[k] : i0[k];\n"
    "            w *= hi ? t[k] : 1 - t[k];\n"
    "            j += (long long)idx[k] * ST[k];\n"
    "        }\n"
    "        if (w == 0) continue;\n"
    "        val = MADD(w, (double)V[j], val);\n"
    "        if (want_grad)\n"
    "            for (k = 0; k < NX; k++) gl[k] = MADD(w, node_grad(idx, j, k), gl[k]);\n"
    "    }\n"
    "    /* the library's compiler runs this loop 4 terms at a time from 4 axes on: those products rounded,\n"
    "     * then added in order; the rest fused */\n"
    "    for (k = 0; k < NX; k++) val = k < (NX >= 4 ? NX & ~3 : 0) ? val + gl[k] * off[k] : MADD(gl[k], off[k], val);\n"
    "    if (grad)\n"
    "        for (k = 0; k < NX; k++) grad[k] = gl[k];\n"
    "    return val;\n"
    "}\n\n";

/* The fixed part of the qp filter: project_box of src/solver/safety.c (without its Jacobian),
 * statement for statement. */
static const char PROJECT[] =
    "/* the projection of a ([-1, 1]^NU) onto {b in [-1, 1]^NU : g.b >= c} into out: clip(a + lambda g)\n"
    " * with the least lambda >= 0 that meets the constraint, along the breakpoints where components\n"
    " * saturate; when none meets it, g's maximiser (the nearest to meeting it) */\n"
    "static void project_box(const double *a, const double *g, double c, double *out) {\n"
    "    double dot = 0, l[NU], bp[NU], lam = 0, phi, slope, t;\n"
    "    int nb = 0, i, j, k, done = 0;\n"
    "    for (j = 0; j < NU; j++) {\n"
    "        out[j] = a[j] < -1 ? -1 : a[j] > 1 ? 1 : a[j];\n"
    "        dot = MADD(g[j], out[j], dot);\n"
    "        l[j] = g[j] != 0 ? ((g[j] > 0 ? 1 : -1) - out[j]) / g[j] : 0;\n"
    "        if (l[j] > 0) bp[nb++] = l[j];\n"
    "    }\n"
    "    if (dot >= c) return;\n"
    "    for (i = 1; i < nb; i++)\n"
    "        for (k = i; k > 0 && bp[k] < bp[k - 1]; k--) {\n"
    "            t = bp[k];\n"
    "            bp[k] = bp[k - 1], bp[k - 1] = t;\n"
    "        }\n"
    "    phi = dot;\n"
    "    for (i = 0; i < nb && !done; i++) {\n"
    "        slope = 0;\n"
    "        for (j = 0; j < NU; j++)\n"
    "            if (l[j] > lam) slope = MADD(g[j], g[j], slope);\n"
    "        if (MADD(slope, bp[i] - lam, phi) >= c) {\n"
    "            lam += (c - phi) / slope;\n"
    "            done = 1;\n"
    "        } else {\n"
    "            phi = MADD(slope, bp[i] - lam, phi);\n"
    "            lam = bp[i];\n"
    "        }\n"
    "    }\n"
    "    for (j = 0; j < NU; j++) {\n"
    "        if (!done) out[j] = g[j] > 0 ? 1 : g[j] < 0 ? -1 : out[j];\n"
    "        else if (l[j] > lam) out[j] = MADD(lam, g[j], out[j]);\n"
    "        else if (l[j] > 0) out[j] = g[j] > 0 ? 1 : -1;\n"
    "    }\n"
    "}\n\n";

/* The qp filter's code: the drift, the projection and prefix_filter, dg_hji_filter_row's statements. */
static void write_qp(FILE *fp, const dg_hji_problem *p, double gamma, const char *prefix) {
    fprintf(fp, "/* the game's drift f at x (f zeroed before) */\nstatic void drift(const double *x, double *f) {\n"
                "    (void)x, (void)f;\n");
    drift_lines(fp, p);
    fprintf(fp, "}\n\n");
    fputs(PROJECT, fp);
    fprintf(fp,
            "/* the qp (HJ control-barrier) filter: the action closest to u_nominal (u's box's [-1, 1]\n"
            " * coordinates) with grad V . f(x, u, d*) >= -%.17g V(x), d* the value's disturbance */\n"
            "double %s_filter(const double *x, const double *u_nominal, double *u_safe) {\n"
            "    double p[NX], G[NX * NU + 1], D[NX * ND + 1], f[NX], u[NU + 1], d[ND + 1], g[NU], c, di, gj, h, cen;\n"
            "    const double v = feedback(x, u, d);\n"
            "    int i, j, k;\n"
            "    (void)k;\n"
            "    interp(x, p);\n"
            "    for (i = 0; i < NX; i++) f[i] = 0;\n"
            "    drift(x, f);\n"
            "    inputs(x, G, D);\n"
            "    c = %a * v;\n"
            "    for (i = 0; i < NX; i++) {\n"
            "        di = f[i];\n"
            "        for (k = 0; k < ND; k++) di = MADD(D[i * ND + k], d[k], di);\n"
            "        c = c - p[i] * di; /* the library's compiler does not fuse this one, nor the next */\n"
            "    }\n"
            "    for (j = 0; j < NU; j++) {\n"
            "        gj = 0;\n"
            "        for (i = 0; i < NX; i++) gj = MADD(p[i], G[i * NU + j], gj);\n"
            "        h = 0.5 * (UHI[j] - ULO[j]);\n"
            "        cen = 0.5 * (UHI[j] + ULO[j]);\n"
            "        c = c - gj * cen;\n"
            "        g[j] = gj * h;\n"
            "    }\n"
            "    project_box(u_nominal, g, c, u_safe);\n"
            "    return v;\n}\n",
            gamma, prefix, -gamma);
}

/* The fixed part of P_control with a boundary layer: layer_input of src/hji/simulate.c, statement
 * for statement (its sums over the axes two terms at a time as the library's compiler runs them). */
static const char LAYER[] =
    "/* one player's input with the boundary layer at s = M^T p (M: its (NX, m) block of G or D): the\n"
    " * bang-bang choice where |s_j| is large against LAYER |p| |M e_j|, linear in s inside */\n"
    "static void layer_input(int m, double sg, const double *lo, const double *hi, const double *center,\n"
    "                        double radius, const double *M, const double *p, double pn, double *v) {\n"
    "    double s[4], cn[4], s2 = 0, c2 = 0;\n"
    "    int j, k;\n"
    "    for (j = 0; j < m; j++) {\n"
    "        s[j] = cn[j] = 0;\n"
    "        for (k = 0; k < NX; k++) {\n"
    "            const double a = M[k * m + j];\n"
    "            if (k < (NX >= 2 ? NX & ~1 : 0)) {\n"
    "                s[j] = s[j] + a * p[k];\n"
    "                cn[j] = cn[j] + a * a;\n"
    "            } else {\n"
    "                s[j] = MADD(a, p[k], s[j]);\n"
    "                cn[j] = MADD(a, a, cn[j]);\n"
    "            }\n"
    "        }\n"
    "        s2 = s2 + s[j] * s[j];\n"
    "        c2 = c2 + cn[j];\n"
    "        cn[j] = sqrt(cn[j]);\n"
    "    }\n"
    "    if (center) {\n"
    "        const double den = fmax(sqrt(s2), LAYER * pn * sqrt(c2));\n"
    "        for (j = 0; j < m; j++) v[j] = center[j] + (den > 0 ? sg * radius * s[j] / den : 0);\n"
    "        return;\n"
    "    }\n"
    "    for (j = 0; j < m; j++) {\n"
    "        const double w = LAYER * pn * cn[j];\n"
    "        const double r = w > 0 ? fmax(-1, fmin(1, sg * s[j] / w)) : sg * s[j] > 0 ? 1 : sg * s[j] < 0 ? -1 : 0;\n"
    "        v[j] = MADD(0.5, lo[j] + hi[j], 0.5 * r * (hi[j] - lo[j]));\n"
    "    }\n"
    "}\n\n";

/* The arguments of the generated layer_input for one player's set (who: "U" or "D_"). */
static void layer_args(FILE *fp, const char *who, const dg_hji_input *in) {
    if (in->set == DG_HJI_SET_BALL) fprintf(fp, "%sSG, 0, 0, %sCENTER, %sRADIUS", who, who, who);
    else fprintf(fp, "%sSG, %sLO, %sHI, 0, 0", who, who, who);
}

/* prefix_control: the bang-bang feedback, or with the boundary layer (dg_hji_feedback's inputs_at). */
static void write_control(FILE *fp, const dg_hji_problem *p, double layer, const char *prefix) {
    if (!(layer > 0)) {
        fprintf(fp, "double %s_control(const double *x, double *u, double *d) { return feedback(x, u, d); }\n\n",
                prefix);
        return;
    }
    fprintf(fp, "/* the boundary layer (dg_hji_feedback's layer) */\n#define LAYER %a\n\n", layer);
    fputs(LAYER, fp);
    fprintf(fp,
            "double %s_control(const double *x, double *u, double *d) {\n"
            "    double p[NX], G[NX * NU + 1], D[NX * ND + 1], pn = 0;\n"
            "    const double v = interp(x, p);\n"
            "    int k;\n"
            "    inputs(x, G, D);\n"
            "    for (k = 0; k < NX; k++) pn = hypot(pn, p[k]);\n"
            "    (void)u, (void)d, (void)G, (void)D;\n",
            prefix);
    if (p->game.u.dim) {
        fprintf(fp, "    layer_input(NU, ");
        layer_args(fp, "U", &p->game.u);
        fprintf(fp, ", G, p, pn, u);\n");
    }
    if (p->game.d.dim) {
        fprintf(fp, "    layer_input(ND, ");
        layer_args(fp, "D_", &p->game.d);
        fprintf(fp, ", D, p, pn, d);\n");
    }
    fprintf(fp, "    return v;\n}\n\n");
}

/* The .c file: the grid and its table, the interpolation, the feedback, the filter. */
static dg_status write_code(FILE *fp, const dg_hji_problem *p, const dg_hji_value_slices *vs, int f32,
                            const dg_export_value_opts *f, const char *config, const char *value_path, const char *prefix, dg_err *e) {
    const dg_hji_grid *g = &p->grid;
    const dg_hji_game *gm = &p->game;
    const int nx = g->ndim, nu = gm->u.dim, nd = gm->d.dim;
    const double T = vs->file.times[vs->file.nt - 1];
    const double *v = vs->v + (size_t)(vs->file.nt - 1) * (size_t)g->nodes;
    double G[DG_HJI_MAX_DIMS * DG_HJI_MAX_INPUT], D[DG_HJI_MAX_DIMS * DG_HJI_MAX_INPUT];
    fprintf(fp,
            "/* %s.c: the value of %s at time-to-go %.9g and both players' feedback, written by\n"
            " * `difgames export` (docs/export.md) from\n *     %s\n *     %s\n"
            " * (u: the %s, d: the %s). The library's\n"
            " * dg_hji_interp and dg_hji_feedback (bang-bang) bit for bit. C99 and libm only; compile without\n"
            " * contracting a * b + c (-ffp-contract=off; GCC's default under -std=c99). */\n"
            "#include <math.h>\n#include <stddef.h>\n\n#include \"%s.h\"\n\n",
            prefix, p->name, T, config ? config : "", value_path, p->u_name ? p->u_name : "control",
            p->d_name ? p->d_name : "disturbance", prefix);
    fprintf(fp,
            "/* 1: the library that wrote this fused a * b + c into one rounding (FMA), as fma() does */\n"
            "#define FUSED %d\n#if FUSED\n#define MADD(a, b, c) fma(a, b, c)\n#else\n#define MADD(a, b, c) ((a) * (b) + (c))\n"
            "#endif\n\n#define NX %d\n#define NU %d\n#define ND %d\n\n",
            dg__ex_fused(), nx, nu, nd);
    fprintf(fp, "static const int NN[NX] = {");
    for (int k = 0; k < nx; k++) fprintf(fp, "%d%s", g->n[k], k < nx - 1 ? ", " : "};\n");
    fprintf(fp, "static const int PER[NX] = {");
    for (int k = 0; k < nx; k++) fprintf(fp, "%d%s", g->bc[k] == DG_HJI_BC_PERIODIC, k < nx - 1 ? ", " : "};\n");
    fprintf(fp, "static const long long ST[NX] = {");
    for (int k = 0; k < nx; k++) fprintf(fp, "%lld%s", (long long)g->stride[k], k < nx - 1 ? ", " : "};\n");
    fprintf(fp, "static const double LO[NX] = {\n");
    dg__ex_doubles(fp, g->lo, nx);
    fprintf(fp, "};\nstatic const double DX[NX] = {\n");
    dg__ex_doubles(fp, g->dx, nx);
    fprintf(fp, "};\n/* V at the %lld nodes, axis 0 slowest (%s, as the value file holds it) */\n"
            "static const %s V[%lld] = {\n", (long long)g->nodes, f32 ? "float32" : "float64", f32 ? "float" : "double",
            (long long)g->nodes);
    if (f32) {
        for (int64_t i = 0; i < g->nodes; i++) {
            const float x = (float)v[i];
            dg__ex_floats(fp, &x, 1);
        }
    } else {
        dg__ex_doubles(fp, v, g->nodes);
    }
    fprintf(fp, "};\n\n");
    fputs(INTERP, fp);
    const int dep = state_dependent(p);
    if (!dep) {
        dg_status s = constant_inputs(p, G, D, e);
        if (s != DG_OK) return s;
    }
    write_input(fp, "U", &gm->u);
    write_input(fp, "D_", &gm->d);
    if (nu && !dep) {
        fprintf(fp, "static const double GU0[%d] = {\n", nx * nu);
        dg__ex_doubles(fp, G, nx * nu);
        fprintf(fp, "};\n");
    }
    if (nd && !dep) {
        fprintf(fp, "static const double GD0[%d] = {\n", nx * nd);
        dg__ex_doubles(fp, D, nx * nd);
        fprintf(fp, "};\n");
    }
    fprintf(fp,
            "\n/* the inputs' matrices at x: G (NX, NU) and D (NX, ND) row-major, as the game's dynamics give them */\n"
            "static void inputs(const double *x, double *G, double *D) {\n"
            "    int k;\n    (void)x;\n"
            "    for (k = 0; k < NX * NU; k++) G[k] = %s;\n"
            "    for (k = 0; k < NX * ND; k++) D[k] = %s;\n",
            nu ? (dep ? "0" : "GU0[k]") : "0", nd ? (dep ? "0" : "GD0[k]") : "0");
    if (dep) state_inputs(fp, p);
    fprintf(fp, "}\n\n");
    fprintf(fp,
            "double %s_value(const double *x) { return interp(x, NULL); }\n\n"
            "double %s_grad(const double *x, double *g) { return interp(x, g); }\n\n"
            "/* both players' bang-bang feedback (dg_hji_game_optimal): P_control's, the filters' */\n"
            "static double feedback(const double *x, double *u, double *d) {\n"
            "    double p[NX], G[NX * NU + 1], D[NX * ND + 1], s[4];\n"
            "    const double v = interp(x, p);\n"
            "    int j, k;\n"
            "    inputs(x, G, D);\n"
            "    (void)s, (void)j, (void)k, (void)u, (void)d;\n",
            prefix, prefix);
    const dg_hji_input *in[2] = {&gm->u, &gm->d};
    const char *who[2] = {"U", "D_"}, *arg[2] = {"u", "d"}, *mat[2] = {"G", "D"};
    for (int q = 0; q < 2; q++) {
        if (!in[q]->dim) continue;
        fprintf(fp,
                "    /* s = %s^T p (the library's compiler takes its terms two at a time, the products rounded, then\n"
                "     * adds them in order; an odd last one fused), then %s's best input (dg_hji_game_optimal) */\n"
                "    for (j = 0; j < %d; j++) {\n        s[j] = 0;\n"
                "        for (k = 0; k < NX; k++)\n"
                "            s[j] = k < (NX >= 2 ? NX & ~1 : 0) ? s[j] + %s[k * %d + j] * p[k] : MADD(%s[k * %d + j], p[k], s[j]);\n"
                "    }\n",
                mat[q], arg[q], in[q]->dim, mat[q], in[q]->dim, mat[q], in[q]->dim);
        write_best(fp, who[q], arg[q], in[q]);
    }
    fprintf(fp, "    return v;\n}\n\n");
    write_control(fp, p, f->layer, prefix);
    if (f->mode == DG_SAFETY_QP) {
        write_qp(fp, p, f->gamma, prefix);
        return DG_OK;
    }
    fprintf(fp,
            "/* the switch filter: where V(x) <= %.17g (the margin) the value's control replaces the nominal one */\n"
            "double %s_filter(const double *x, const double *u_nominal, double *u_safe) {\n"
            "    double u[NU + 1], d[ND + 1];\n"
            "    const double v = feedback(x, u, d);\n"
            "    int j;\n"
            "    for (j = 0; j < NU; j++) u_safe[j] = v <= %a ? u[j] : u_nominal[j];\n"
            "    return v;\n}\n",
            f->margin, prefix, f->margin);
    return DG_OK;
}

/* The .h file. */
static void write_header(FILE *fp, const dg_hji_problem *p, double T, const dg_export_value_opts *f, const char *prefix) {
    char what[160];
    snprintf(what, sizeof what, "the value of %s at time-to-go %.9g and both players' feedback", p->name, T);
    dg__ex_header_open(fp, prefix, what);
    const int nx = p->grid.ndim;
    fprintf(fp, "#define %s_NX %d /* state:", prefix, nx);
    for (int k = 0; k < nx; k++) {
        char b[32];
        fprintf(fp, " %s", dg_hji_grid_axis_name(&p->grid, k, b, sizeof b));
    }
    fprintf(fp, " */\n#define %s_NU %d /* u: the %s */\n#define %s_ND %d /* d: the %s */\n\n", prefix, p->game.u.dim,
            p->u_name ? p->u_name : "control", prefix, p->game.d.dim, p->d_name ? p->d_name : "disturbance");
    fprintf(fp,
            "/* V(x) (x: %s_NX numbers). Out of the grid: a periodic axis wraps, a plain axis is clamped to its\n"
            " * edge and V extrapolated linearly with the edge's gradient; a NaN coordinate reads as the low edge. */\n"
            "double %s_value(const double *x);\n"
            "/* V(x), and its gradient into g (%s_NX): the blend of the nodes' central differences. */\n"
            "double %s_grad(const double *x, double *g);\n"
            "/* V(x), and both players' equilibrium feedback from the gradient (bang-bang) into u (%s_NU) and\n"
            " * d (%s_ND; a player without inputs: untouched). */\n"
            "double %s_control(const double *x, double *u, double *d);\n",
            prefix, prefix, prefix, prefix, prefix, prefix, prefix);
    if (f->layer > 0)
        fprintf(fp, "/* (%s_control with the boundary layer %.9g: an input saturates linearly where its switching\n"
                " * function is small, dg_hji_feedback's; the filter uses the bang-bang feedback.) */\n"
                "#define %s_LAYER %.17g\n", prefix, f->layer, prefix, f->layer);
    if (f->mode == DG_SAFETY_QP)
        fprintf(fp,
                "/* V(x); u_safe (%s_NU) gets the action closest to u_nominal with grad V . f(x, u, d*) >= -%.9g V(x)\n"
                " * (the qp filter; d* the value's disturbance), both in the control box's [-1, 1] coordinates\n"
                " * (u = centre + half-width a, a policy's action); where no action meets it, the one nearest. */\n"
                "#define %s_FILTER_QP 1\n#define %s_GAMMA %.17g\n",
                prefix, f->gamma, prefix, prefix, f->gamma);
    else
        fprintf(fp, "/* V(x); u_safe (%s_NU) gets the value's control where V(x) <= %.9g, else u_nominal. */\n",
                prefix, f->margin);
    fprintf(fp, "double %s_filter(const double *x, const double *u_nominal, double *u_safe);\n", prefix);
    dg__ex_header_close(fp, prefix);
}

dg_status dg_export_value(const dg_hji_problem *p, const char *config, const char *value_path, const char *dir,
                          const char *prefix, const dg_export_value_opts *filter, dg_export_files *out, dg_err *e) {
    const char *why = dg_export_value_refusal(p);
    if (why) return dg_err_set(e, DG_ERR_ARG, "export: %s: %s", p ? p->name : "?", why);
    const dg_export_value_opts f = filter ? *filter : (dg_export_value_opts){.mode = DG_SAFETY_SWITCH};
    if ((why = dg_export_filter_refusal(p, f.mode)))
        return dg_err_set(e, DG_ERR_ARG, "export: %s: %s", p->name, why);
    if (!isfinite(f.margin)) return dg_err_set(e, DG_ERR_ARG, "export: the filter's margin %g is not finite", f.margin);
    if (!(f.layer >= 0 && f.layer <= 1))
        return dg_err_set(e, DG_ERR_ARG, "export: the boundary layer %g is not in [0, 1]", f.layer);
    if (!(f.gamma >= 0) || !isfinite(f.gamma))
        return dg_err_set(e, DG_ERR_ARG, "export: the qp filter's gamma %g is not a finite number >= 0", f.gamma);
    if (!dg_export_prefix_ok(prefix))
        return dg_err_set(e, DG_ERR_ARG, "export: prefix '%.40s' is not a C identifier of 1 to %d characters",
                          prefix ? prefix : "", DG_EXPORT_PREFIX_MAX);
    dg_hji_value_slices vs;
    dg_status s = dg_hji_value_load(value_path, p, config, &vs, NULL, e);
    if (s != DG_OK) return s;
    const dg_st_tensor *t = dg_st_find(vs.file.f, "value");
    const int f32 = t && t->dtype == DG_DTYPE_F32;
    ex_out o;
    if ((s = dg__ex_open(&o, dir, prefix, e)) == DG_OK) {
        write_header(o.h.fp, p, vs.file.times[vs.file.nt - 1], &f, prefix);
        s = write_code(o.c.fp, p, &vs, f32, &f, config, value_path, prefix, e);
        if (s == DG_OK) s = dg__ex_commit(&o, out, e);
        else dg__ex_abort(&o);
    }
    dg_hji_value_slices_free(&vs);
    return s;
}
