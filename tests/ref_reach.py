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
import argparse
import json
import os
import subprocess
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import st_py  # noqa: E402

# The benchmark task's numbers (configs/bench/reach.yaml).
DT, DAMPING, ACCEL = 0.05, 0.98, 5.0
HORIZON = 60
OBSTACLES = [(0.0, 0.0, 0.25)]
MARGIN = 0.05
W_GOAL, W_COLLISION, W_ENERGY = 1.0, 5.0, 0.01
START_X, START_Y = (-0.9, -0.6), (-0.5, 0.5)
GOAL_X, GOAL_Y = (0.6, 0.9), (-0.5, 0.5)
TOL = 1e-4


class Policy(torch.nn.Module):
    def __init__(self, obs_dim=6, hidden=64, act_dim=2):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(obs_dim, hidden), torch.nn.Tanh(),
            torch.nn.Linear(hidden, hidden), torch.nn.Tanh(),
            torch.nn.Linear(hidden, act_dim), torch.nn.Tanh())

    def forward(self, obs):
        return self.net(obs)


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


def uniform(gen, lo, hi):
    return lo + (hi - lo) * torch.rand((), generator=gen).item()


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


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    return r.stdout


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-6)


def check_case(exe, cfg, ckpt, init_path, state, goal, policy, horizon, label):
    """Runs eval on one INIT/horizon and compares; returns True on pass."""
    grad_path = init_path + f".grad{horizon}.safetensors"
    cmd = [exe, "eval", "--config", cfg, "--ckpt", ckpt, "--init", init_path, "--grad-out", grad_path]
    if horizon != HORIZON:
        cmd += ["--horizon", str(horizon)]
    out = json.loads(run(cmd).strip().splitlines()[-1])
    ours_g = st_py.load(grad_path)

    policy.zero_grad()
    loss, terms = rollout(policy, state, goal, horizon)
    loss.backward()
    ref_g = {n: p.grad.detach().clone() for n, p in policy.named_parameters()}

    p64 = Policy().double()
    p64.load_state_dict({k: v.double() for k, v in policy.state_dict().items()})
    loss64, terms64 = rollout(p64, state.double(), goal.double(), horizon)
    loss64.backward()
    ref_g64 = {n: p.grad.detach() for n, p in p64.named_parameters()}

    ok = True
    print(f"\n[{label}] B={state.shape[0]} H={horizon} (eval says batch={out.get('batch')} horizon={out.get('horizon')})")
    if out.get("horizon") != horizon or out.get("batch") != state.shape[0]:
        print("FAIL: eval ran a different batch or horizon")
        ok = False
    print(f"{'value':<14}{'difgames':>16}{'torch f32':>16}{'rel':>11}{'rel vs f64':>12}")
    for name, ref, ref64 in [("loss", loss, loss64)] + [(k, terms[k], terms64[k]) for k in terms]:
        if name not in out:
            print(f"{name:<14}{'missing':>16}")
            ok = False
            continue
        ours, r32, r64 = float(out[name]), float(ref), float(ref64)
        e = rel(ours, r32)
        bad = e >= TOL
        ok &= not bad
        print(f"{name:<14}{ours:>16.9g}{r32:>16.9g}{e:>11.2e}{rel(ours, r64):>12.2e}{'  FAIL' if bad else ''}")
    print(f"{'gradient':<16}{'shape':>12}{'max|g_torch|':>14}{'worst rel':>11}{'vs f64':>10}")
    if set(ours_g) != set(ref_g):
        print(f"FAIL: gradient names {sorted(ours_g)} != parameters {sorted(ref_g)}")
        ok = False
    for n, g in ref_g.items():
        if n not in ours_g:
            continue
        og = ours_g[n].float()
        if tuple(og.shape) != tuple(g.shape):
            print(f"{n:<16}{str(tuple(og.shape)):>12}  FAIL: shape, want {tuple(g.shape)}")
            ok = False
            continue
        scale = max(g.abs().max().item(), 1e-6)
        e = (og - g).abs().max().item() / scale
        e64 = (og.double() - ref_g64[n]).abs().max().item() / max(ref_g64[n].abs().max().item(), 1e-6)
        bad = e >= TOL
        ok &= not bad
        print(f"{n:<16}{str(tuple(g.shape)):>12}{scale:>14.4g}{e:>11.2e}{e64:>10.2e}{'  FAIL' if bad else ''}")
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True, help="the build folder holding difgames")
    ap.add_argument("--seed", type=int, default=3, help="seed for training and the initial states")
    ap.add_argument("--epochs", type=int, default=20)
    args = ap.parse_args()
    torch.set_num_threads(1)
    exe = os.path.join(os.path.abspath(args.build), "difgames")
    cfg = os.path.join(REPO, "configs", "bench", "reach.yaml")
    ok = True
    with tempfile.TemporaryDirectory(prefix="ref_reach_") as tmp:
        try:
            run([exe, "train", "--config", cfg, "--out", os.path.join(tmp, "train"),
                 "--epochs", str(args.epochs), "--seed", str(args.seed), "--quiet"])
        except RuntimeError as e:
            print(f"FAIL: {e}")
            return 1
        ckpt = os.path.join(tmp, "train", "final.safetensors")
        params = st_py.load(ckpt)
        policy = Policy()
        try:
            policy.load_state_dict(params, strict=True)
            print(f"checkpoint loads into nn.Sequential with load_state_dict(strict=True): {sorted(params)}")
        except RuntimeError as e:
            print(f"FAIL: checkpoint does not load with strict=True: {e}")
            return 1

        state, goal = draw_init(16, args.seed)
        init_path = os.path.join(tmp, "init.safetensors")
        st_py.save(init_path, {"state": state, "goal": goal})
        try:
            ok &= check_case(exe, cfg, ckpt, init_path, state, goal, policy, HORIZON, "task horizon")
            ok &= check_case(exe, cfg, ckpt, init_path, state, goal, policy, 25, "--horizon 25")
        except RuntimeError as e:
            print(f"FAIL: {e}")
            return 1
    print("\nref_reach: " + ("PASS" if ok else "FAIL") + f" (tolerance {TOL:g})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
