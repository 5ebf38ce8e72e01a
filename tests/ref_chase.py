"""Reference test for the `chase` benchmark task (configs/bench/chase.yaml, evader: flee, defined in
docs/games/chase.md) against PyTorch.

Trains pursuers with `difgames train`, draws initial states, runs
`difgames eval --init --grad-out`, and recomputes the episode loss, its weighted
terms, d loss / d parameter and the capture rate with a plain PyTorch float32
rollout (a loop over the horizon, autograd; the scripted evader reacts to the
state, so the gradient flows through it as well).

Float32 conditioning: over 80 steps the chase dynamics (close passes, where
away = d / sqrt(|d|^2 + 1e-4) turns fast, and the stiff k = 20 wall push) amplify
rounding so much that PyTorch's own float32 gradient of many episodes differs
from its float64 gradient by 1e-4..2e-3. A float32-vs-float32 comparison at
1e-4 is only meaningful where float32 itself is that accurate, so:
  case A (few-epoch policy, H = 80): initial states drawn as the task says, kept
    only where PyTorch's float32 gradient of that episode matches float64 to
    1e-5; then loss, terms, capture_rate, left_arena and every gradient must agree with
    PyTorch float32 to 1e-4 (max|g_ours - g_torch| / max(max|g_torch|, 1e-6)).
  case B (trained policy that captures, H = 80, plain draw): loss, terms and
    capture_rate to 1e-4 / exactly; gradients must be as close to float64
    PyTorch as PyTorch float32 is (within 4x, at least 1e-4).
  case C (trained policy, --horizon 30, plain draw): everything to 1e-4.
left_arena is compared exactly unless a body comes within 1e-4 of a wall; capture_time
is printed for information. Exit 0 on pass, 1 on fail.
"""
import math
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import st_py  # noqa: E402
from reflib import (TOL, check_grads, check_shape, check_values, grad_rel, main, policies, reference,  # noqa: E402
                    rel, run, run_eval, uniform)

# The benchmark task's numbers (configs/bench/chase.yaml).
DT, DAMPING = 0.05, 0.98
ACCEL_P, ACCEL_E = 5.0, 3.5
HORIZON = 80
FLEE_K, FLEE_M = 20.0, 0.15
CAPTURE_RADIUS = 0.1
W_CHASE, W_WALL, W_ENERGY = 1.0, 10.0, 0.01
INIT_RANGE, MIN_SEPARATION = (-0.8, 0.8), 0.5
OBS_DIM = 8  # pursuer position and velocity, evader offset and velocity


def flee(p, e):
    """The scripted evader's action b from the current positions."""
    d = e - p
    away = d / torch.sqrt((d ** 2).sum(dim=1, keepdim=True) + 1e-4)
    wall = -F.softplus(FLEE_K * (e - (1 - FLEE_M))) + F.softplus(FLEE_K * (-(1 - FLEE_M) - e))
    return torch.tanh(2 * (away + wall))


def rollout(policy, state, horizon):
    """The benchmark task's episode loss; returns (loss, {term: weighted value}, distances (H, B),
    the largest |coordinate| of either body (H, B))."""
    dtype = next(policy.parameters()).dtype
    s = state.to(dtype)
    p, pv, e, ev = s[:, 0:2], s[:, 2:4], s[:, 4:6], s[:, 6:8]
    chase_sum = wall_sum = energy_sum = 0.0
    dists, reach_out = [], []
    for _ in range(horizon):
        a = policy(torch.cat([p, pv, e - p, ev], dim=1))
        b = flee(p, e)
        pv = (pv + ACCEL_P * a * DT) * DAMPING
        p = p + pv * DT
        ev = (ev + ACCEL_E * b * DT) * DAMPING
        e = e + ev * DT
        chase_sum = chase_sum + ((p - e) ** 2).sum(dim=1).mean()
        wall_sum = wall_sum + (torch.relu(p.abs() - 1) ** 2).sum(dim=1).mean()
        energy_sum = energy_sum + (a ** 2).sum(dim=1).mean()
        dists.append((p - e).detach().norm(dim=1))
        reach_out.append(torch.cat([p, e], dim=1).detach().abs().max(dim=1).values)
    terms = {"chase": W_CHASE * chase_sum / horizon,
             "wall": W_WALL * wall_sum / horizon,
             "energy": W_ENERGY * energy_sum / horizon}
    loss = terms["chase"] + terms["wall"] + terms["energy"]
    return loss, terms, torch.stack(dists), torch.stack(reach_out)


def capture_metrics(dists):
    """capture rate and mean first-capture time (s, step t -> t*dt) from (H, B) distances."""
    H, B = dists.shape
    times = []
    for b in range(B):
        hit = (dists[:, b] < CAPTURE_RADIUS).nonzero()
        if len(hit):
            times.append((hit[0].item() + 1) * DT)
    rate = len(times) / B
    return rate, (sum(times) / len(times) if times else None)


def draw_one(gen, vel=0.3):
    """Both positions ~ U(-0.8, 0.8)^2 re-drawn until 0.5 apart; small random velocities."""
    while True:
        px, py, ex, ey = (uniform(gen, *INIT_RANGE) for _ in range(4))
        if math.hypot(ex - px, ey - py) >= MIN_SEPARATION:
            break
    pvx, pvy, evx, evy = (uniform(gen, -vel, vel) for _ in range(4))
    return torch.tensor([[px, py, pvx, pvy, ex, ey, evx, evy]])


def draw_init(B, seed):
    gen = torch.Generator().manual_seed(seed)
    return torch.cat([draw_one(gen) for _ in range(B)])


def well_conditioned_init(p32, p64, B, seed, horizon, thresh=1e-5, max_draws=200):
    """Episodes drawn as the task says, kept where float32 PyTorch's gradient matches float64 to thresh."""
    gen = torch.Generator().manual_seed(seed)
    kept, draws = [], 0
    while len(kept) < B and draws < max_draws:
        s = draw_one(gen)
        draws += 1
        ref = reference(rollout, p32, p64, s, horizon)
        if max(grad_rel(ref["32"][3][n], ref["64"][3][n]) for n in ref["64"][3]) < thresh:
            kept.append(s)
    return torch.cat(kept) if kept else None, draws


def check_case(exe, cfg, ckpt, tmp, state, horizon, label, strict_grad):
    """Runs eval on one INIT/horizon and compares; returns True on pass.
    strict_grad: gradients within TOL of float32 PyTorch; otherwise printed for
    information only: on unfiltered H=80 episodes the flee dynamics (close
    passes, the stiff wall push) make any float32 gradient differ from float64
    by up to ~1e-3, PyTorch's own included, so no float32 bar can be fair."""
    init_path = os.path.join(tmp, f"init_{label[0]}.safetensors")
    st_py.save(init_path, {"state": state})
    out, ours_g = run_eval(exe, cfg, ckpt, init_path, os.path.join(tmp, f"grad_{label[0]}.safetensors"), horizon,
                           HORIZON)
    p32, p64 = policies(st_py.load(ckpt), OBS_DIM)
    ref = reference(rollout, p32, p64, state, horizon)
    dists, outside = ref["32"][2]
    ok = check_shape(label, out, state.shape[0], horizon)
    ok &= check_values(out, ref)

    rate, ctime = capture_metrics(dists)
    closest = (dists.min(dim=0).values - CAPTURE_RADIUS).abs().min().item()
    ours_rate = out.get("capture_rate")
    bad = ours_rate is None or float(ours_rate) != rate
    ok &= not bad
    print(f"{'capture_rate':<14}{str(ours_rate):>16}{rate:>16.9g}{'exact':>11}{'':>12}{'  FAIL' if bad else ''}"
          f"   (closest min-distance to the radius: {closest:.1e})")
    left = (outside.max(dim=0).values > 1).float().mean().item()
    edge = (outside - 1).abs().min().item()  # a body this close to a wall may round either way
    ours_left = out.get("left_arena")
    bad = ours_left is None or (float(ours_left) != left and edge > 1e-4)
    ok &= not bad
    print(f"{'left_arena':<14}{str(ours_left):>16}{left:>16.9g}{'exact':>11}{'':>12}{'  FAIL' if bad else ''}"
          f"   (closest |coordinate| to the wall: {edge:.1e})")
    ours_time = out.get("capture_time")
    same = (ours_time is None and ctime is None) or (
        ours_time is not None and ctime is not None and rel(float(ours_time), ctime) < TOL)
    print(f"{'capture_time':<14}{str(ours_time):>16}{str(ctime if ctime is None else round(ctime, 9)):>16}"
          f"{'info':>11}{'':>12}  {'same' if same else 'differs (not a pass criterion)'}")

    ok &= check_grads(ours_g, ref, strict_grad,
                      "rel vs torch f32 < 1e-4" if strict_grad else "information only: float32 is chaotic here")
    if not ref["32"][1]["wall"] > 0:
        print("note: the wall term is 0 here, so its gradient is not exercised in this case")
    return ok


def add_args(ap):
    ap.add_argument("--few-epochs", type=int, default=20, help="training epochs of case A's policy")
    ap.add_argument("--epochs", type=int, default=150,
                    help="training epochs of cases B and C: enough that some episodes end in a capture")
    ap.add_argument("--batch", type=int, default=32, help="episodes in the plain INIT (cases B, C)")


def test(args, exe, tmp):
    cfg = os.path.join(REPO, "configs", "bench", "chase.yaml")
    ckpts = {}
    for tag, epochs in (("few", args.few_epochs), ("trained", args.epochs)):
        d = os.path.join(tmp, tag)
        run([exe, "train", "--config", cfg, "--out", d, "--epochs", str(epochs),
             "--seed", str(args.seed), "--lr", "1e-3", "--quiet"])
        ckpts[tag] = os.path.join(d, "final.safetensors")
        params = st_py.load(ckpts[tag])
        policies(params, OBS_DIM)  # raises on a mismatch
    print(f"checkpoints load into nn.Sequential with load_state_dict(strict=True): {sorted(params)}")

    p32, p64 = policies(st_py.load(ckpts["few"]), OBS_DIM)
    state_a, draws = well_conditioned_init(p32, p64, 16, args.seed, HORIZON)
    if state_a is None or state_a.shape[0] < 8:
        print(f"FAIL: only {0 if state_a is None else state_a.shape[0]} of {draws} drawn episodes are "
              "well-conditioned in float32 PyTorch; the test setup needs another seed")
        return False
    print(f"case A keeps {state_a.shape[0]} of {draws} drawn episodes "
          "(PyTorch float32 gradient within 1e-5 of float64)")
    state_b = draw_init(args.batch, args.seed)
    ok = check_case(exe, cfg, ckpts["few"], tmp, state_a, HORIZON,
                    f"A: {args.few_epochs}-epoch policy, well-conditioned episodes", True)
    ok &= check_case(exe, cfg, ckpts["trained"], tmp, state_b, HORIZON,
                     f"B: {args.epochs}-epoch policy, plain draw", False)
    ok &= check_case(exe, cfg, ckpts["trained"], tmp, state_b, 30,
                     f"C: {args.epochs}-epoch policy, plain draw, --horizon 30", True)
    return ok


if __name__ == "__main__":
    sys.exit(main("ref_chase", test, add_args))
