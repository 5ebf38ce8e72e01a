"""Reference test for the `reach` benchmark task (configs/bench/reach.yaml, defined in
docs/games/reach.md) against PyTorch.

Trains a policy for a few epochs with `difgames train`, draws initial states and
goals, runs `difgames eval --init --grad-out`, and recomputes the episode loss,
its weighted terms and d loss / d parameter with a plain PyTorch float32 rollout
(a loop over the horizon, autograd). Passes when the loss and every term agree to
1e-4 relative and every parameter gradient has
max|g_ours - g_torch| / max(max|g_torch|, 1e-6) < 1e-4 per tensor.
A float64 PyTorch rollout is printed beside it as a diagnostic only.
Exit 0 on pass, 1 on fail.
"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import st_py  # noqa: E402
from reflib import check_grads, check_shape, check_values, main, policies, reference, run, run_eval, uniform  # noqa: E402

# The benchmark task's numbers (configs/bench/reach.yaml).
DT, DAMPING, ACCEL = 0.05, 0.98, 5.0
HORIZON = 60
OBSTACLES = [(0.0, 0.0, 0.25)]
MARGIN = 0.05
W_GOAL, W_COLLISION, W_ENERGY = 1.0, 5.0, 0.01
START_X, START_Y = (-0.9, -0.6), (-0.5, 0.5)
GOAL_X, GOAL_Y = (0.6, 0.9), (-0.5, 0.5)
OBS_DIM = 6  # position, velocity, goal


def rollout(policy, state, goal, horizon):
    """The benchmark task's episode loss; returns (loss, {term: weighted value})."""
    dtype = next(policy.parameters()).dtype
    p, v = state[:, :2].to(dtype), state[:, 2:].to(dtype)
    g = goal.to(dtype)
    goal_sum = coll_sum = energy_sum = 0.0
    for _ in range(horizon):
        a = policy(torch.cat([p, v, g], dim=1))
        v = (v + ACCEL * a * DT) * DAMPING
        p = p + v * DT
        goal_sum = goal_sum + ((p - g) ** 2).sum(dim=1).mean()
        collide = 0.0
        for cx, cy, r in OBSTACLES:
            c = torch.tensor([cx, cy], dtype=dtype)
            dist = torch.sqrt(((p - c) ** 2).sum(dim=1) + 1e-9) - r
            collide = collide + torch.relu(MARGIN - dist) ** 2
        coll_sum = coll_sum + collide.mean()
        energy_sum = energy_sum + (a ** 2).sum(dim=1).mean()
    terms = {"goal": W_GOAL * goal_sum / horizon,
             "collision": W_COLLISION * coll_sum / horizon,
             "energy": W_ENERGY * energy_sum / horizon}
    loss = terms["goal"] + terms["collision"] + terms["energy"]
    return loss, terms


def draw_init(B, seed, vel=0.3):
    """Starts and goals in the task's ranges with rejection sampling; small random velocities."""
    gen = torch.Generator().manual_seed(seed)
    state = torch.zeros(B, 4)
    goal = torch.zeros(B, 2)
    for b in range(B):
        while True:
            x, y = uniform(gen, *START_X), uniform(gen, *START_Y)
            if all(((x - cx) ** 2 + (y - cy) ** 2) ** 0.5 - r >= MARGIN for cx, cy, r in OBSTACLES):
                break
        while True:
            gx, gy = uniform(gen, *GOAL_X), uniform(gen, *GOAL_Y)
            if all(((gx - cx) ** 2 + (gy - cy) ** 2) ** 0.5 >= r for cx, cy, r in OBSTACLES):
                break
        state[b] = torch.tensor([x, y, uniform(gen, -vel, vel), uniform(gen, -vel, vel)])
        goal[b] = torch.tensor([gx, gy])
    return state, goal


def check_case(exe, cfg, ckpt, init_path, state, goal, horizon, label):
    """Runs eval on one INIT/horizon and compares; returns True on pass."""
    out, ours_g = run_eval(exe, cfg, ckpt, init_path, init_path + f".grad{horizon}.safetensors", horizon, HORIZON)
    p32, p64 = policies(st_py.load(ckpt), OBS_DIM)
    ref = reference(rollout, p32, p64, state, goal, horizon)
    ok = check_shape(label, out, state.shape[0], horizon)
    ok &= check_values(out, ref)
    ok &= check_grads(ours_g, ref, True, "rel vs torch f32 < 1e-4")
    return ok


def test(args, exe, tmp):
    cfg = os.path.join(REPO, "configs", "bench", "reach.yaml")
    run([exe, "train", "--config", cfg, "--out", os.path.join(tmp, "train"),
         "--epochs", str(args.epochs), "--seed", str(args.seed), "--quiet"])
    ckpt = os.path.join(tmp, "train", "final.safetensors")
    params = st_py.load(ckpt)
    try:
        policies(params, OBS_DIM)
        print(f"checkpoint loads into nn.Sequential with load_state_dict(strict=True): {sorted(params)}")
    except RuntimeError as e:
        print(f"FAIL: checkpoint does not load with strict=True: {e}")
        return False

    state, goal = draw_init(16, args.seed)
    init_path = os.path.join(tmp, "init.safetensors")
    st_py.save(init_path, {"state": state, "goal": goal})
    ok = check_case(exe, cfg, ckpt, init_path, state, goal, HORIZON, "task horizon")
    ok &= check_case(exe, cfg, ckpt, init_path, state, goal, 25, "--horizon 25")
    return ok


if __name__ == "__main__":
    sys.exit(main("ref_reach", test, lambda ap: ap.add_argument("--epochs", type=int, default=20)))
