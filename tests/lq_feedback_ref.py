#!/usr/bin/env python3
"""Feedback LQ Nash with learned policies (configs/models/lq_feedback.yaml, docs/economics.md): each
learned player's discounted cost from held-out starts against x0'P_i x0, and its gain against K_i.

usage: lq_feedback_ref.py BUILD CONFIG CKPT [--starts N] [--seed S] [--tol T] [--gain-tol G]

The game's matrices are written once, here; the script
1. gets the feedback Nash gains K_i and values P_i from the library's dg_lq_nash_solve
   (BUILD/tests/lq_nash_dump),
2. checks that the model file is that game: the Nash gains played through the model's own steps
   (difgames.Env.step, f64) cost x0'P_i x0 from the starts, to 1e-9 relative (so the file's dynamics,
   costs, discount and the bookkeeping of its copied states are the matrices' game),
3. plays the checkpoint's policies from N held-out starts drawn uniformly in [-0.15, 0.15]^2 by numpy
   from seed S (not the game's reset: the training never saw them), and compares each player's
   discounted cost, summed over the starts, with the sum of x0'P_i x0: |learned / Nash - 1| <= T,
   each player; the library's episode terms (cost_<player> = J_i / H) must agree with the sum from the
   trajectory,
   Also reports the open-loop Nash equilibrium's costs of the same H-step game from the same starts
   (the stacked first-order conditions), the other equilibrium the learners could have reached,
4. reports each policy's gain, its Jacobian at the origin by central differences (the first step's
   actions, recorded in the states pu, pw), against K_i: max |dK| / max |K_i| <= G; and the
   effective gains (gain*_ls: least squares of -u_t on x_t over the states the held-out episodes visit).
Prints one JSON line; exit 0 when all hold, 1 otherwise.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

BETA = 0.99
A = np.array([[1.0, 0.1], [0.0, 1.0]])
B = [np.array([[0.005], [0.1]]), np.array([[0.005], [0.1]])]
Q = [np.diag([1.0, 0.0]), np.diag([0.0, 1.0])]
R = [np.array([[0.1]]), np.array([[0.1]])]
BOX = 2.0      # the model's input box [-2, 2]: action a in [-1, 1] plays u = 2 a
COLS = {"p": 0, "v": 1, "px": 2, "pv": 3, "pu": 4, "pw": 5, "d": 6}


def nash(build):
    """K_i (1, 2) and P_i (2, 2) from dg_lq_nash_solve, with its residual."""
    args = [os.path.join(build, "tests", "lq_nash_dump"), "2", str(len(B)), repr(BETA)]
    args += [repr(x) for x in A.ravel()]
    for i in range(len(B)):
        args += [str(B[i].shape[1])] + [repr(x) for x in np.concatenate([B[i].ravel(), Q[i].ravel(), R[i].ravel()])]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    K, P, info = {}, {}, {}
    for line in out.splitlines():
        w = line.split()
        if w[0] == "K":
            K[int(w[1])] = np.array(list(map(float, w[2:]))).reshape(1, 2)
        elif w[0] == "P":
            P[int(w[1])] = np.array(list(map(float, w[2:]))).reshape(2, 2)
        else:
            info[w[0]] = float(w[1])
    return [K[i] for i in range(len(B))], [P[i] for i in range(len(B))], info


def costs_from_traj(traj):
    """Each row's discounted costs (2, rows) from a trajectory (H + 1, rows, 7): step t's terms read
    x_t (px, pv), u_t (pu, pw) and beta^(t+1) (d) after the step."""
    s = traj[1:]
    disc = s[:, :, COLS["d"]] / BETA
    j1 = (disc * (s[:, :, COLS["px"]] ** 2 + R[0][0, 0] * s[:, :, COLS["pu"]] ** 2)).sum(0)
    j2 = (disc * (s[:, :, COLS["pv"]] ** 2 + R[1][0, 0] * s[:, :, COLS["pw"]] ** 2)).sum(0)
    return np.stack([j1, j2])


def open_loop_costs(x0, H):
    """Each player's cost summed over the starts x0 at the open-loop Nash equilibrium of the same H-step
    game (plans u_0..u_(H-1) per start; the stacked first-order conditions
    G'D_i (Phi x0 + sum_j G_j U_j) + R_i U_i = 0, one linear system): what simultaneous gradient play
    would reach if each player held the other's actions fixed as a sequence instead of a policy."""
    n, disc = A.shape[0], BETA ** np.arange(H)
    Phi = np.vstack([np.linalg.matrix_power(A, t) for t in range(H)])
    G = [np.zeros((n * H, H)) for _ in B]     # x_t = A^t x0 + sum_(s<t) A^(t-1-s) B_j u_j,s
    for j in range(len(B)):
        for t in range(H):
            for s_ in range(t):
                G[j][n * t:n * t + n, s_] = (np.linalg.matrix_power(A, t - 1 - s_) @ B[j])[:, 0]
    D = [np.kron(np.diag(disc), Q[i]) for i in range(len(B))]
    Rm = [R[i][0, 0] * np.diag(disc) for i in range(len(B))]
    M = np.block([[G[i].T @ D[i] @ G[j] + (Rm[i] if i == j else 0) for j in range(len(B))] for i in range(len(B))])
    U = np.linalg.solve(M, -np.vstack([G[i].T @ D[i] @ Phi @ x0.T for i in range(len(B))]))
    U = [U[j * H:(j + 1) * H] for j in range(len(B))]
    X = Phi @ x0.T + sum(G[j] @ U[j] for j in range(len(B)))
    return np.array([((X * (D[i] @ X)).sum() + (U[i] * (Rm[i] @ U[i])).sum()) for i in range(len(B))])


def states(x0):
    """Full model states of starts x0 (rows, 2): the reset's values of the other columns."""
    s = np.zeros((x0.shape[0], len(COLS)))
    s[:, :2] = x0
    s[:, COLS["d"]] = 1.0
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("config")
    ap.add_argument("ckpt")
    ap.add_argument("--starts", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--tol", type=float, default=0.01)
    ap.add_argument("--gain-tol", type=float, default=float("inf"))
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(a.build, "python"))
    import difgames as dg

    K, P, info = nash(a.build)
    x0 = np.random.default_rng(a.seed).uniform(-0.15, 0.15, size=(a.starts, 2))
    nash_sum = np.array([np.einsum("bi,ij,bj->", x0, P[i], x0) for i in range(2)])
    res = {"K1": K[0].ravel().tolist(), "K2": K[1].ravel().tolist(), "residual": info["residual"],
           "starts": a.starts, "seed": a.seed}
    good = True

    # 2. the model file is the matrices' game: the Nash gains through its own step, in f64
    env = dg.Env(a.config, precision="f64")
    H = env.horizon
    s = states(x0)
    tr = [s]
    for _ in range(H):
        x = s[:, :2]
        act = np.hstack([-(x @ K[i].T) / BOX for i in range(2)])
        assert np.abs(act).max() < 1, "a Nash action outside the box"
        s = env.step(s, act)
        tr.append(s)
    lin = costs_from_traj(np.array(tr)).sum(1)
    res["linear_rel"] = float(np.abs(lin / nash_sum - 1).max())
    good &= res["linear_rel"] <= 1e-9

    # 3. the learned policies from the held-out starts
    env = dg.Env(a.config)
    params = env.load(a.ckpt)
    s0 = states(x0).astype(env.dtype)
    r = env.rollout(params, init=(s0, np.zeros((a.starts, 1), env.dtype)))
    learned = costs_from_traj(r["traj"].astype(np.float64)).sum(1)
    t = r["terms"]
    lib = np.array([t["pos"] + t["uu"], t["vel"] + t["ww"]]) * H * a.starts   # cost_<player> = J / H, a mean
    res["terms_rel"] = float(np.abs(lib / learned - 1).max())
    good &= res["terms_rel"] <= 1e-4
    ratio = learned / nash_sum
    # the effective gains: least squares of -u_t on x_t over every state the held-out episodes visit
    tr = r["traj"][1:].astype(np.float64)
    X = tr[:, :, [COLS["px"], COLS["pv"]]].reshape(-1, 2)
    Kls = np.linalg.lstsq(X, -tr[:, :, [COLS["pu"], COLS["pw"]]].reshape(-1, 2), rcond=None)[0].T
    res["gain1_ls"], res["gain2_ls"] = Kls[0].tolist(), Kls[1].tolist()
    res["cost_learned"] = (learned / a.starts).tolist()
    res["cost_nash"] = (nash_sum / a.starts).tolist()
    res["rel"] = (ratio - 1).tolist()
    res["cost_open_loop"] = (open_loop_costs(x0, H) / a.starts).tolist()
    good &= bool(np.all(np.abs(ratio - 1) <= a.tol))

    # 4. the gains: Jacobian of the first actions at the origin
    h = 1e-3
    e = np.array([[h, 0], [-h, 0], [0, h], [0, -h]])
    r = env.rollout(params, init=(states(e).astype(env.dtype), np.zeros((4, 1), env.dtype)))
    u0 = r["traj"][1][:, [COLS["pu"], COLS["pw"]]].astype(np.float64)   # (4, 2): each player's action
    J = np.stack([(u0[0] - u0[1]) / (2 * h), (u0[2] - u0[3]) / (2 * h)], axis=1)   # (player, state)
    gains = -J
    res["gain1"] = gains[0].tolist()
    res["gain2"] = gains[1].tolist()
    res["gain_rel"] = [float(np.abs(gains[i] - K[i].ravel()).max() / np.abs(K[i]).max()) for i in range(2)]
    good &= max(res["gain_rel"]) <= a.gain_tol
    res["pass"] = bool(good)
    print(json.dumps(res))
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
