/* The feedback LQ Nash solver (lq_nash.h): one player is the discounted DARE (its scalar closed
 * form, and in two dimensions optimality against perturbed gains); a scalar two-player game against
 * its hand-derived equilibrium; the coupled equations' residual below 1e-10 for 2 and 3 players in
 * two dimensions; the simulated cost of the gains equals x0'P x0; no convergence and bad games are
 * reported, not hidden. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "difgames/difgames.h"
#include "difgames/lq_nash.h"

/* One player, scalar: the discounted DARE p = q + beta a^2 p - (beta a b p)^2 / (r + beta b^2 p) is the
 * quadratic beta b^2 p^2 + (r - beta q b^2 - beta a^2 r) p - q r = 0, its positive root; k = beta a b p /
 * (r + beta b^2 p). The solver's P and K match it to 1e-12. */
static void test_one_player_scalar(void **state) {
    (void)state;
    const double a = 1.2, b = 0.5, q = 1.0, r = 0.3, beta = 0.9;
    dg_lq_game g = {.n = 1, .nplayers = 1, .m = {1}, .A = &a, .B = {&b}, .Q = {&q}, .beta = beta};
    g.R[0][0] = &r;
    double K, P;
    dg_lq_nash_info info;
    dg_err e = {0};
    if (dg_lq_nash_solve(&g, NULL, (double *[]){&K}, (double *[]){&P}, &info, &e)) fail_msg("%s", e.msg);
    const double qa = beta * b * b, qb = r - beta * q * b * b - beta * a * a * r, qc = -q * r;
    const double p = (-qb + sqrt(qb * qb - 4 * qa * qc)) / (2 * qa), k = beta * a * b * p / (r + beta * b * b * p);
    print_message("one player: P %.15g (closed form %.15g), K %.15g (%.15g), %d rounds\n", P, p, K, k, info.iterations);
    assert_true(info.converged);
    assert_true(fabs(P - p) < 1e-12 * p && fabs(K - k) < 1e-12 * fabs(k));
}

/* a 2-state game of N players (double integrator-like A, each player its own input direction) */
typedef struct game2 {
    double A[4], B[3][2], Q[3][4], R[3][3];
    dg_lq_game g;
} game2;

static void game2_init(game2 *s, int N, double beta) {
    const double A[4] = {1.0, 0.2, -0.1, 1.05};
    const double B[3][2] = {{0.0, 0.3}, {0.25, 0.1}, {0.1, -0.2}};
    const double Q[3][4] = {{1.0, 0.1, 0.1, 0.5}, {0.4, 0.0, 0.0, 1.2}, {0.8, -0.2, -0.2, 0.3}};
    const double R[3][3] = {{0.5, 0.1, 0.0}, {0.2, 0.7, 0.05}, {0.0, 0.3, 0.9}};  /* R[i][j]: u_j's cost to i */
    memcpy(s->A, A, sizeof A);
    memcpy(s->B, B, sizeof B);
    memcpy(s->Q, Q, sizeof Q);
    memcpy(s->R, R, sizeof R);
    memset(&s->g, 0, sizeof s->g);
    s->g.n = 2;
    s->g.nplayers = N;
    s->g.A = s->A;
    s->g.beta = beta;
    for (int i = 0; i < N; i++) {
        s->g.m[i] = 1;
        s->g.B[i] = s->B[i];
        s->g.Q[i] = s->Q[i];
        for (int j = 0; j < N; j++) s->g.R[i][j] = &s->R[i][j];
    }
}

/* One player in two dimensions: P solves the DARE (residual), the simulated cost from a start is x0'P x0,
 * and perturbing K in any of 8 directions costs more (the optimum, checked without the Riccati algebra). */
static void test_one_player_matrix(void **state) {
    (void)state;
    game2 s;
    game2_init(&s, 1, 0.95);
    double K[2], P[4], res;
    dg_err e = {0};
    if (dg_lq_nash_solve(&s.g, NULL, (double *[]){K}, (double *[]){P}, NULL, &e)) fail_msg("%s", e.msg);
    assert_int_equal(dg_lq_nash_residual(&s.g, (const double *[]){K}, (const double *[]){P}, &res, &e), DG_OK);
    assert_true(res < 1e-10);
    const double x0[2] = {0.7, -0.4}, v = x0[0] * (P[0] * x0[0] + P[1] * x0[1]) + x0[1] * (P[2] * x0[0] + P[3] * x0[1]);
    double c, cp;
    assert_int_equal(dg_lq_nash_cost(&s.g, (const double *[]){K}, x0, 2000, &c, &e), DG_OK);
    print_message("one player, 2 states: x0'P x0 %.12g, simulated %.12g\n", v, c);
    assert_true(fabs(c - v) < 1e-9 * v);
    for (int d = 0; d < 8; d++) {
        const double ang = d * 3.14159265358979 / 4, Kp[2] = {K[0] + 1e-2 * cos(ang), K[1] + 1e-2 * sin(ang)};
        assert_int_equal(dg_lq_nash_cost(&s.g, (const double *[]){Kp}, x0, 2000, &cp, &e), DG_OK);
        assert_true(cp > c);
    }
}

/* Two players, scalar, symmetric (b_1 = b_2 = b, q_i = q, r_ii = r, r_ij = 0): with f = a - 2 b k the
 * closed loop, i's best response r k = beta b p f and its value p (1 - beta f^2) = q + r k^2 give
 * k = (a - f) / (2 b), p = r (a - f) / (2 beta b^2 f), and q = [2 r (a - f)(1 - beta f^2) - beta r f (a - f)^2]
 * / (4 beta b^2 f): the game whose equilibrium closed loop is f = 0.5 (a = b = r = 1, beta = 0.9:
 * q = 0.6625 / 1.8, k = 0.25, p = 5/9). The solver finds it to 1e-12. */
static void test_two_players_scalar(void **state) {
    (void)state;
    const double a = 1, b = 1, r = 1, zero = 0, beta = 0.9, f = 0.5;
    const double q = (2 * r * (a - f) * (1 - beta * f * f) - beta * r * f * (a - f) * (a - f)) / (4 * beta * b * b * f);
    dg_lq_game g = {.n = 1, .nplayers = 2, .m = {1, 1}, .A = &a, .B = {&b, &b}, .Q = {&q, &q}, .beta = beta};
    g.R[0][0] = g.R[1][1] = &r;
    g.R[0][1] = &zero;  /* and R[1][0] NULL: also 0 */
    double K[2], P[2], res;
    dg_lq_nash_info info;
    dg_err e = {0};
    if (dg_lq_nash_solve(&g, NULL, (double *[]){&K[0], &K[1]}, (double *[]){&P[0], &P[1]}, &info, &e))
        fail_msg("%s", e.msg);
    print_message("two players, scalar: K %.15g %.15g (0.25), P %.15g %.15g (5/9), %d rounds\n", K[0], K[1], P[0],
                  P[1], info.iterations);
    for (int i = 0; i < 2; i++) assert_true(fabs(K[i] - 0.25) < 1e-12 && fabs(P[i] - 5.0 / 9) < 1e-12);
    assert_int_equal(dg_lq_nash_residual(&g, (const double *[]){&K[0], &K[1]}, (const double *[]){&P[0], &P[1]}, &res,
                                         &e), DG_OK);
    assert_true(res < 1e-12);
}

/* 2 and 3 players in two dimensions, coupled by cross input costs: the coupled equations' residual
 * below 1e-10; each player's simulated cost from a start is x0'P_i x0; a player that deviates alone
 * (its gain perturbed, the others' kept) pays more: a Nash equilibrium among linear feedbacks */
static void test_coupled_residual(void **state) {
    (void)state;
    for (int N = 2; N <= 3; N++) {
        game2 s;
        game2_init(&s, N, 0.95);
        double K[3][2], P[3][4], res, cost[3], dev[3];
        double *Kp[3] = {K[0], K[1], K[2]}, *Pp[3] = {P[0], P[1], P[2]};
        dg_lq_nash_info info;
        dg_err e = {0};
        if (dg_lq_nash_solve(&s.g, NULL, Kp, Pp, &info, &e)) fail_msg("%d players: %s", N, e.msg);
        assert_int_equal(dg_lq_nash_residual(&s.g, (const double *const *)Kp, (const double *const *)Pp, &res, &e),
                         DG_OK);
        print_message("%d players: residual %.3g after %d rounds\n", N, res, info.iterations);
        assert_true(res < 1e-10);
        const double x0[2] = {0.5, 0.3};
        assert_int_equal(dg_lq_nash_cost(&s.g, (const double *const *)Kp, x0, 3000, cost, &e), DG_OK);
        for (int i = 0; i < N; i++) {
            const double v = x0[0] * (P[i][0] * x0[0] + P[i][1] * x0[1]) + x0[1] * (P[i][2] * x0[0] + P[i][3] * x0[1]);
            assert_true(fabs(cost[i] - v) < 1e-9 * fabs(v));
            for (int d = 0; d < 4; d++) {
                double Kd[3][2];
                memcpy(Kd, K, sizeof K);
                Kd[i][d / 2] += d % 2 ? -1e-2 : 1e-2;
                assert_int_equal(dg_lq_nash_cost(&s.g, (const double *[]){Kd[0], Kd[1], Kd[2]}, x0, 3000, dev, &e),
                                 DG_OK);
                assert_true(dev[i] > cost[i]);
            }
        }
    }
}

/* The game proposed for the learned-policies anchor (docs/economics.md): a double integrator (dt 0.1)
 * both players accelerate, player 1 paying for the position, player 2 for the velocity, each 0.1 u_i^2
 * for its own input, beta 0.99. Its gains solve the coupled equations (residual below 1e-10), its closed
 * loop is stable, and the starts of [-0.15, 0.15]^2 need |u_i| = |K_i x| below 1 (a tanh policy's
 * range, unsaturated) */
static void test_anchor_game(void **state) {
    (void)state;
    const double A[4] = {1, 0.1, 0, 1}, B[2] = {0.005, 0.1}, Q1[4] = {1, 0, 0, 0}, Q2[4] = {0, 0, 0, 1}, r = 0.1;
    dg_lq_game g = {.n = 2, .nplayers = 2, .m = {1, 1}, .A = A, .B = {B, B}, .Q = {Q1, Q2}, .beta = 0.99};
    g.R[0][0] = g.R[1][1] = &r;
    double K[2][2], P[2][4], res, cost[2];
    dg_lq_nash_info info;
    dg_err e = {0};
    if (dg_lq_nash_solve(&g, NULL, (double *[]){K[0], K[1]}, (double *[]){P[0], P[1]}, &info, &e)) fail_msg("%s", e.msg);
    const double *Kc[2] = {K[0], K[1]}, *Pc[2] = {P[0], P[1]};
    assert_int_equal(dg_lq_nash_residual(&g, Kc, Pc, &res, &e), DG_OK);
    print_message("anchor game: K1 [%.6f, %.6f], K2 [%.6f, %.6f], P1 [%.6f, %.6f; %.6f], P2 [%.6f, %.6f; %.6f], "
                  "residual %.2g, %d rounds\n", K[0][0], K[0][1], K[1][0], K[1][1], P[0][0], P[0][1], P[0][3], P[1][0],
                  P[1][1], P[1][3], res, info.iterations);
    assert_true(res < 1e-10);
    double umax = 0;
    for (int c = 0; c < 4; c++)
        for (int i = 0; i < 2; i++) umax = fmax(umax, fabs(K[i][0] * (c & 1 ? 0.15 : -0.15) + K[i][1] * (c & 2 ? 0.15 : -0.15)));
    assert_true(umax < 1);
    const double x0[2] = {0.15, -0.1};
    assert_int_equal(dg_lq_nash_cost(&g, Kc, x0, 400, cost, &e), DG_OK);  /* the closed loop contracts: 400 steps */
    for (int i = 0; i < 2; i++) {
        const double v = x0[0] * (P[i][0] * x0[0] + P[i][1] * x0[1]) + x0[1] * (P[i][2] * x0[0] + P[i][3] * x0[1]);
        assert_true(fabs(cost[i] - v) < 1e-9 * v);
    }
}

/* a game without a stationary equilibrium of finite cost (an unstable state no one can move)
 * diverges and says so; too few rounds are reported as not converged; bad games are refused */
static void test_failures(void **state) {
    (void)state;
    const double a = 2, b = 0, q = 1, r = 1, beta = 1;
    dg_lq_game g = {.n = 1, .nplayers = 1, .m = {1}, .A = &a, .B = {&b}, .Q = {&q}, .beta = beta};
    g.R[0][0] = &r;
    double K, P;
    dg_lq_nash_info info;
    dg_err e = {0};
    assert_int_equal(dg_lq_nash_solve(&g, NULL, (double *[]){&K}, (double *[]){&P}, &info, &e), DG_ERR_NONFINITE);
    assert_non_null(strstr(e.msg, "diverge"));
    assert_false(info.converged);
    const double b1 = 0.5;
    g.B[0] = &b1;
    dg_lq_nash_opts o = {.max_iter = 3};
    assert_int_equal(dg_lq_nash_solve(&g, &o, (double *[]){&K}, (double *[]){&P}, &info, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "not converged in 3 rounds"));
    assert_int_equal(info.iterations, 3);
    assert_false(info.converged);
    assert_int_equal(dg_lq_nash_solve(&g, NULL, (double *[]){&K}, (double *[]){&P}, &info, &e), DG_OK);
    g.beta = 1.5;
    assert_int_equal(dg_lq_nash_solve(&g, NULL, (double *[]){&K}, (double *[]){&P}, &info, &e), DG_ERR_ARG);
    g.beta = 0.9;
    g.R[0][0] = NULL;
    assert_int_equal(dg_lq_nash_solve(&g, NULL, (double *[]){&K}, (double *[]){&P}, &info, &e), DG_ERR_ARG);
    assert_non_null(strstr(e.msg, "R_ii"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_player_scalar),
        cmocka_unit_test(test_one_player_matrix),
        cmocka_unit_test(test_two_players_scalar),
        cmocka_unit_test(test_coupled_residual),
        cmocka_unit_test(test_anchor_game),
        cmocka_unit_test(test_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
