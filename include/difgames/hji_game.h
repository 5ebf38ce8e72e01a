/* difgames hji game: a differential game for the grid solver, control- and disturbance-affine
 * dynamics x' = f(x) + G(x) u + D(x) d with box or ball bounds and a role per player (or a generic
 * Hamiltonian), a game of degree's payoff, and the players' optimal inputs. Part of difgames/hji.h. */
#ifndef DIFGAMES_HJI_GAME_H
#define DIFGAMES_HJI_GAME_H

#include "difgames/api.h"
#include "difgames/hji_grid.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_HJI_MAX_INPUT 4   /* most components of the control u or the disturbance d */

typedef enum dg_hji_role { DG_HJI_ROLE_MIN = 0, DG_HJI_ROLE_MAX } dg_hji_role;  /* a player's aim             */
typedef enum dg_hji_set  {        /* a player's input set                                            */
    DG_HJI_SET_BOX = 0,            /* lo <= u <= hi                                                   */
    DG_HJI_SET_BALL,               /* |u - center| <= radius                                          */
    DG_HJI_SET_QUAD,               /* unbounded, at a running cost weight |u|^2 (games of degree)     */
    DG_HJI_SET_BOX_COST            /* a box at a running cost weight |u|^2 (games of degree)          */
} dg_hji_set;

/* At one state x (nx): f (nx), G (nx, nu), D (nx, nd) row-major, zeroed before the call. Must depend on
 * x only (the solver tabulates it once per solve) and be finite. */
typedef void (*dg_hji_dyn_fn)(void *user, const double *x, double *f, double *G, double *D);
/* Generic H(t, x, p) at n points: x, p (ndim, n), h (n). */
typedef void (*dg_hji_ham_fn)(void *user, double t, int n, const double *x, const double *p, double *h);
/* Dissipation bounds at n points: alpha (ndim, n) >= |dH/dp_i| for p in the box [pmin, pmax] (ndim, n). */
typedef void (*dg_hji_alpha_fn)(void *user, double t, int n, const double *x, const double *pmin,
                                const double *pmax, double *alpha);

/* Noise (games of degree; docs/hji.md, "Diffusion"): dx = (f + G u + D d) dt + sigma(x, u, d) dW. At one
 * state x (nx) and inputs u (u.dim), d (d.dim; NULL when absent) fills a (nx, nx, zeroed before the call)
 * with sigma sigma^T, row-major. The diffusion solver takes a diagonal a (no cross terms). */
typedef void (*dg_hji_diffusion_fn)(void *user, const double *x, const double *u, const double *d, double *a);
/* With noise: the value one cell past a plain edge of axis `axis` (upper: 1 past the last node, 0 before
 * the first), from the edge node at x (nx) with value v_edge and its inner neighbour's v_in (dx the
 * spacing). The scheme stays monotone when it is nondecreasing in v_edge and v_in. */
typedef double (*dg_hji_ghost_fn)(void *user, int axis, int upper, const double *x, double dx, double v_edge,
                                  double v_in);

/* One player's input: u (the control) or d (the disturbance). */
typedef struct dg_hji_input {
    int         dim;                      /* components; 0: absent                             */
    dg_hji_set  set;                      /* BOX: lo <= u <= hi;  BALL: |u - center| <= radius;
                                             QUAD: any u, running cost +weight |u|^2 for a MIN
                                             player, -weight |u|^2 for a MAX one (payoff.on);
                                             BOX_COST: the box's u at QUAD's running cost      */
    dg_hji_role role;                     /* MIN or MAX: what the player does to the value     */
    double      lo[DG_HJI_MAX_INPUT];     /* box                                               */
    double      hi[DG_HJI_MAX_INPUT];
    double      center[DG_HJI_MAX_INPUT]; /* ball                                              */
    double      radius;
    double      weight;                   /* QUAD and BOX_COST: > 0                            */
} dg_hji_input;

/* A game of degree's payoff (payoff.on): the minimiser pays, the maximiser receives
 *     J = int_0^tau e^{-rho s} L(x, u, d) ds + e^{-rho tau} g(x(tau)),
 *     L = running + x'Qx + sum over QUAD players of (+-) weight |input|^2,
 * g the initial value v0 (the terminal cost), tau the time-to-go. The value solves
 *     phi_tau + rho phi + H(x, grad phi) = 0,  H = -(L0(x) + p.f + ext_u + ext_d),
 * ext over each player's set of (p.G u) or, for QUAD, of (p.G u +- weight |u|^2): in closed form
 * -|G^T p|^2 / (4 weight) for a MIN player (u* = -G^T p / (2 weight)), +|D^T p|^2 / (4 weight)
 * for a MAX one (d* = D^T p / (2 weight)). A game of kind (payoff.on = 0) is the case L = 0,
 * rho = 0. */
typedef struct dg_hji_payoff {
    int    on;                                   /* 1: a game of degree                        */
    double running;                              /* L0: a constant running cost (1: time)      */
    double Q[DG_HJI_MAX_DIMS * DG_HJI_MAX_DIMS]; /* (nx, nx) row-major: the state cost x'Qx     */
    double discount;                             /* rho >= 0                                   */
    double (*cost)(void *user, const double *x); /* or NULL: a running cost L1(x) of the state,
                                                    added to running + x'Qx (user: the game's)  */
} dg_hji_payoff;

/* A game: control- and disturbance-affine dynamics (dyn set), or a generic Hamiltonian (ham and alpha
 * set, dyn NULL) for phi_tau + ham(t, x, grad phi) = 0. The struct is the caller's; user is passed
 * to every callback. */
typedef struct dg_hji_game {
    int             nx;                   /* state dimension (= grid.ndim)                     */
    dg_hji_dyn_fn   dyn;                  /* x' = f(x) + G(x) u + D(x) d                       */
    dg_hji_input    u, d;                 /* the players' bounds and roles                     */
    dg_hji_payoff   payoff;               /* a game of degree's running cost and discount      */
    dg_hji_ham_fn   ham;                  /* or: a generic Hamiltonian ...                     */
    dg_hji_alpha_fn alpha;                /* ... and its dissipation bounds                    */
    void           *user;
    /* noise: the diffusion term 1/2 tr(sigma sigma^T Hess V) inside the inputs' optimisation (games of
       degree with affine dynamics and box inputs; dg_hji_solve then runs the monotone diffusion scheme,
       docs/hji.md "Diffusion"). NULL: deterministic. */
    dg_hji_diffusion_fn diffusion;
    dg_hji_ghost_fn     ghost;            /* with diffusion: the ghost past a plain edge; NULL: linear
                                             extrapolation (2 v_edge - v_in)                   */
} dg_hji_game;

/* Returns DG_OK or DG_ERR_ARG naming what is wrong (dimensions, empty box, negative radius, a QUAD
 * input without a payoff or a positive weight, no dynamics and no Hamiltonian, nx != ndim when
 * ndim > 0). */
DG_API dg_status dg_hji_game_check(const dg_hji_game *gm, int ndim, dg_err *e);
/* The players' optimal inputs at x for the value gradient p (nx), bang-bang: a box player takes the
 * bound matching the sign of (G^T p)_j (the centre where it is 0), a ball player centre +- radius
 * along G^T p; a QUAD player -+ G^T p / (2 weight). u (u.dim) and d (d.dim) may be NULL. Affine
 * games only (zeros otherwise). */
DG_API void   dg_hji_game_optimal(const dg_hji_game *gm, const double *x, const double *p, double *u, double *d);
/* H(x, p) in the solver's convention (phi_tau + rho phi + H = 0): -(L0(x) + p.f + ext_u + ext_d) for
 * an affine game (L0 = 0 for a game of kind), ham(0, x, p) for a generic one. */
DG_API double dg_hji_game_hamiltonian(const dg_hji_game *gm, const double *x, const double *p);
/* xdot (nx) = f(x) + G(x) u + D(x) d; u or d NULL counts as 0. Affine games only. */
DG_API void   dg_hji_game_dynamics(const dg_hji_game *gm, const double *x, const double *u, const double *d,
                                   double *xdot);
/* The running cost L(x, u, d) of a game of degree (0 for a game of kind): what a simulation adds up,
 * e^{-rho t} L dt along the path, to compare with V(x0). u or d NULL counts as 0. */
DG_API double dg_hji_game_running_cost(const dg_hji_game *gm, const double *x, const double *u, const double *d);
/* 1 when gm has noise (a diffusion term): what certify and the deterministic plays refuse. */
DG_API int    dg_hji_game_noisy(const dg_hji_game *gm);
/* 1 when gm is a game of degree (payoff.on). */
DG_API int    dg_hji_game_degree(const dg_hji_game *gm);

/* The safety filters of one state (docs/safety.md). */
enum { DG_HJI_FILTER_SWITCH = 0, DG_HJI_FILTER_QP = 1 };
/* A safety filter of one player of gm (player 0: u, 1: d; the one that keeps V high, the avoider of an
 * avoid problem whose {V <= 0} the other can force into the target; its input a box) at state x (nx)
 * from V(x) and grad V (nx) there: its action a (A = its dim, in its box's [-1, 1] coordinates) into
 * out (A):
 *   - DG_HJI_FILTER_SWITCH (the least-restrictive filter): where V <= margin, the player's optimal
 *     input (dg_hji_game_optimal, bang-bang), else a;
 *   - DG_HJI_FILTER_QP (the HJ control-barrier filter): the action of the box closest to a with
 *     grad V . f(x, a, o*) >= -gamma V, o* the other player's worst case (closed form for a
 *     control-affine game: one linear constraint on a box, clip(a + lambda g) with lambda among the
 *     breakpoints); where no action of the box meets it, the one that comes nearest.
 * jac (A, A; may be NULL) gets d out / d a (switch: identity, 0 where it acts; qp: the projection's,
 * exact where the active set does not change); jx (A, nx; may be NULL) d out / d x through qp's bound
 * c(x) = -gamma V - grad V . (f + M_o o*) with grad V and o* held (f's and M_o's derivatives by central
 * differences; switch: 0). Returns 1 when it changed a. */
DG_API int    dg_hji_filter_row(const dg_hji_game *gm, int player, int mode, double margin, double gamma,
                                const double *x, double V, const double *grad, const double *a, double *out,
                                double *jac, double *jx);

#ifdef __cplusplus
}
#endif
#endif
