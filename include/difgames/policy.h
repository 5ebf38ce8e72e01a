/* difgames policy: small MLPs (tanh or sine), and the players' policies built from them.
 *
 * Layers in -> hidden... -> out with tanh after every layer (the last tanh
 * bounds the action to [-1, 1]); dg_mlp_set_activation makes a network sine (SIREN) instead,
 * and/or its last layer linear (a value, not bounded). Parameters are named as a PyTorch
 * nn.Sequential(Linear, Tanh, Linear, Tanh, ...) held in an attribute `net`
 * ("net.0.weight" (h1, in), "net.0.bias" (h1), "net.2.weight", ...), so a
 * checkpoint loads with load_state_dict unchanged. A prefix other than "net"
 * names a second network (e.g. "evader") in the same dg_params.
 */
#ifndef DIFGAMES_POLICY_H
#define DIFGAMES_POLICY_H

#include "difgames/api.h"
#include "difgames/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_MLP_MAX_LAYERS 8
/* SIREN's frequency factor (Sitzmann et al. 2020, and DeepReach after them): omega0 */
#define DG_MLP_SIREN_OMEGA0 30.0

/* A layer's activation (every layer's but a linear last one) */
typedef enum dg_mlp_act {
    DG_MLP_TANH = 0,                      /* tanh(z): the policies' (and the default)             */
    DG_MLP_SINE = 1,                      /* sin(omega0 z) (SIREN), every layer's omega0 the same */
} dg_mlp_act;

typedef struct dg_mlp {
    int nlayers;                          /* linear layers                       */
    int sizes[DG_MLP_MAX_LAYERS + 1];     /* in, hidden..., out                  */
    int w[DG_MLP_MAX_LAYERS];             /* parameter index of layer l's weight */
    int b[DG_MLP_MAX_LAYERS];             /* parameter index of layer l's bias   */
    dg_mlp_act act;                       /* the activation (dg_mlp_init: tanh)   */
    int    linear_out;                    /* 1: no activation after the last layer (a value);
                                             0 (dg_mlp_init): the activation there too          */
    double omega0;                        /* sine: z's factor inside the sine (DG_MLP_SIREN_OMEGA0) */
} dg_mlp;

/* Adds the MLP's parameters to p as "<prefix>.<2l>.weight/bias"; nhidden
 * hidden sizes between in and out. Returns DG_OK or an error in e. */
DG_API dg_status  dg_mlp_init(dg_mlp *m, dg_params *p, const char *prefix, int in, const int *hidden,
                              int nhidden, int out, dg_err *e);
/* Chooses the MLP's activation act (DG_MLP_SINE sets omega0 to DG_MLP_SIREN_OMEGA0) and whether
 * its last layer is linear (linear_out 1: an output not bounded, e.g. a value function). Call it
 * after dg_mlp_init and before dg_mlp_reset_params (whose initialisation depends on it). DG_OK, or
 * DG_ERR_ARG for an unknown act. An MLP left as dg_mlp_init made it is the policies' tanh network,
 * unchanged to the bit. */
DG_API dg_status  dg_mlp_set_activation(dg_mlp *m, dg_mlp_act act, int linear_out, dg_err *e);
/* Initialises the weights for the MLP's activation. Tanh: PyTorch's nn.Linear default, weight and
 * bias ~ U(±1/sqrt(fan_in)). Sine (SIREN, Sitzmann et al. 2020): the first layer's weight
 * ~ U(±1/fan_in), every later layer's ~ U(±sqrt(6/fan_in)/omega0) (so that omega0 z is about
 * U(±sqrt(6/fan_in)) · h, and each layer's sines keep the same spread), biases PyTorch's default,
 * as SIREN's code leaves them. */
DG_API void       dg_mlp_reset_params(const dg_mlp *m, dg_params *p, dg_rng *rng);
/* act(... act(x W0ᵀ + b0) ...): x (B, in) -> (B, out); the last layer without act when
 * m->linear_out. */
DG_API dg_tensor *dg_mlp_forward(dg_ctx *ctx, const dg_mlp *m, dg_params *p, dg_tensor *x);
/* The MLP's output y (B, out), returned, and its input Jacobian *dy = dy/dx (B, in·out), both
 * tape tensors made of ops: dy's element [b, j·out + k] is dy_k/dx_j at row b (for out 1, (B, in):
 * row b is the gradient of y at x_b). y is dg_mlp_forward's, to the bit. A loss made of y and dy
 * (an HJI residual) gets its exact weight gradient from dg_backward. NULL (and *dy NULL) on error,
 * with the context's error set. For one output: reverse mode in one op (dg_mlp_value_grad), two
 * forwards' matrix products and four more in the backward, whatever in is; for several: forward
 * tangents, about in + 1 forwards and twice that back (policy/mlp.c says why). */
DG_API dg_tensor *dg_mlp_forward_grad(dg_ctx *ctx, const dg_mlp *m, dg_params *p, dg_tensor *x, dg_tensor **dy);
/* Multiply-adds of one forward for a batch of B (for FLOP counts). */
DG_API int64_t    dg_mlp_macs(const dg_mlp *m, int B);

/* The players' policies: one MLP for one-player games, two (pursuer "net",
 * evader "evader") for two-player games, and "player2", "player3" after them for a general-sum game of
 * more players (env.h's general_sum), all in one dg_params. */
#define DG_MAX_PLAYERS 4
/* A player written as code (a hand-made controller, a known equilibrium strategy): its action at
 * step t (1-based) of a B-row batch from its observation obs (B, obs), a (B, act) tensor built from
 * ops on ctx (so that gradients flow through it like a network's); NULL with the context's error
 * set on failure. */
typedef dg_tensor *(*dg_player_fn)(dg_ctx *ctx, void *user, int t, dg_tensor *obs, int B);
typedef struct dg_policy {
    int    n;                             /* players: 1 to DG_MAX_PLAYERS (3 and 4: general-sum) */
    dg_mlp mlp[DG_MAX_PLAYERS];           /* [0] the agent / pursuer, [1] evader, [2] player2, ... */
    int    plan_steps;                    /* open loop (train.mode: open_loop): the steps of each
                                             player's plan; 0: the players are the MLPs       */
    int    plan[DG_MAX_PLAYERS];          /* open loop: parameter index of player i's plan,
                                             "plan" (plan_steps, act_dim), "evader_plan",
                                             then "player2_plan", ...                        */
    dg_player_fn fn[DG_MAX_PLAYERS];      /* not NULL: player i is this function (fn_user[i] its
                                             argument), not its MLP or plan; it has no parameters.
                                             dg_policy_act plays it, so certify's bounds and grid
                                             (certify.h, certify_dp.h) take it; the trainer does not */
    void        *fn_user[DG_MAX_PLAYERS];
    /* not NULL: what the game steps with is filter(ctx, filter_user, t, state, action) of the players'
     * joint action at step t (a safety filter, safety.h: dg_safety_attach), an op on ctx; the rollout
     * on the tape (training, eval) calls it. NULL with the context's error set on failure. */
    dg_tensor *(*filter)(dg_ctx *ctx, void *user, int t, dg_tensor *state, dg_tensor *action);
    void        *filter_user;
    /* > 0 with filter: the rollout on the tape adds filter_penalty * Σ_rows |filtered - action|^2 / B
     * (the players' columns) at every step to the loss, a term of its own after the game's (index
     * env->nterms: the loss has nterms + 1; dg_trainer_set_filter_penalty), so the policy learns to
     * need the filter less. */
    double       filter_penalty;
} dg_policy;

/* What the players' policies are sized from: a game's players, observations, actions and steps
 * (dg_env_policy_shape in env.h fills it from a game; dg_policy_create and dg_policy_create_plan there
 * take the game itself). */
typedef struct dg_policy_shape {
    int nplayers;                         /* 1, or 2: a learned evader too (0: 1); up to DG_MAX_PLAYERS */
    int obs_dim, act_dim;                 /* the agent's / pursuer's observation and action     */
    int obs2_dim, act2_dim;               /* the evader's, when nplayers is 2                   */
    int obs_dims[DG_MAX_PLAYERS];         /* player p >= 2's observation and action (general-sum   */
    int act_dims[DG_MAX_PLAYERS];         /* games of more players; entries 0 and 1 unused)        */
    int horizon;                          /* steps per episode                                  */
    int plan_steps;                       /* open loop: steps that take a planned action (0: all) */
} dg_policy_shape;

/* The policies for a game of shape s: an MLP obs_dim -> hidden... -> act_dim named "net.*",
 * for two-player games one obs2_dim -> hidden... -> act2_dim named "evader.*", and for player
 * p >= 2 one obs_dims[p] -> hidden... -> act_dims[p] named "player<p>.*". */
DG_API dg_status dg_policy_create_shape(const dg_policy_shape *s, const int *hidden, int nhidden, dg_policy *pol,
                                        dg_params **p, dg_err *e);
/* Open-loop players (train.mode: open_loop): each player's parameters are its action sequence,
 * one row of pre-tanh values a step for the first s->plan_steps steps (0: every step), named
 * "plan" (plan_steps, act_dim), for two-player games "evader_plan" (plan_steps, act2_dim), and for
 * player p >= 2 "player<p>_plan" (plan_steps, act_dims[p]).
 * Step t's action is tanh(plan[t]) in every batch row, zero after the plan's last step. */
DG_API dg_status dg_policy_create_plan_shape(const dg_policy_shape *s, dg_policy *pol, dg_params **p, dg_err *e);
/* PyTorch's nn.Linear initialisation of every player's MLP; an open-loop plan starts at zero
 * (the game's neutral action: tanh(0) = 0). */
DG_API void      dg_policy_reset_params(const dg_policy *pol, dg_params *p, dg_rng *rng);
/* Player i's action at step t (1-based) of a B-row batch, (B, act): its function (pol->fn[i]) or its
 * MLP on obs, or its plan's row t (obs unused; NULL is fine then). */
DG_API dg_tensor *dg_policy_act(dg_ctx *ctx, const dg_policy *pol, dg_params *p, int i, int t, dg_tensor *obs, int B);
/* The index in p of player i's first parameter (to split the players' gradients: player i's
 * parameters are contiguous, from its first to the next player's first or the end). */
DG_API int       dg_policy_first_param(const dg_policy *pol, int i);

#ifdef __cplusplus
}
#endif
#endif
