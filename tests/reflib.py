"""What the reference tests against PyTorch (tests/ref_reach.py, tests/ref_chase.py) share: the
policy as a PyTorch module, running `difgames`, the float32 and float64 PyTorch references of one
case, and the tables that compare `difgames eval --init --grad-out` with them.

Every comparison prints its numbers and returns False on a failure, so that a test prints all of
them before it exits 1.
"""
import argparse
import json
import os
import subprocess
import tempfile

import torch

import st_py

TOL = 1e-4  # largest relative difference from PyTorch float32 that passes


class Policy(torch.nn.Module):
    """The games' policy, tanh(W3 tanh(W2 tanh(W1 obs))), with the checkpoint's tensor names."""

    def __init__(self, obs_dim, hidden=64, act_dim=2):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(obs_dim, hidden), torch.nn.Tanh(),
            torch.nn.Linear(hidden, hidden), torch.nn.Tanh(),
            torch.nn.Linear(hidden, act_dim), torch.nn.Tanh())

    def forward(self, obs):
        return self.net(obs)


def policies(params, obs_dim):
    """The checkpoint params in a float32 and a float64 copy of the module (strict: raises on a mismatch)."""
    p32, p64 = Policy(obs_dim), Policy(obs_dim).double()
    p32.load_state_dict(params, strict=True)
    p64.load_state_dict({k: v.double() for k, v in params.items()}, strict=True)
    return p32, p64


def uniform(gen, lo, hi):
    return lo + (hi - lo) * torch.rand((), generator=gen).item()


def run(cmd):
    """Runs cmd; its standard output, or RuntimeError with everything it said."""
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    return r.stdout


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-6)


def grad_rel(g, ref):
    """max|g - ref| / max(max|ref|, 1e-6), in float64."""
    return (g.double() - ref.double()).abs().max().item() / max(ref.abs().max().item(), 1e-6)


def reference(rollout, p32, p64, *args):
    """rollout(policy, *args) -> (loss, {term: value}, extra...) run and differentiated with each copy:
    {"32": ..., "64": ...} of (loss, {term: float}, [extra...], {parameter: gradient})."""
    out = {}
    for key, pol in (("32", p32), ("64", p64)):
        pol.zero_grad()
        loss, terms, *extra = rollout(pol, *args)
        loss.backward()
        out[key] = (loss.item(), {k: v.item() for k, v in terms.items()}, extra,
                    {n: p.grad.detach().clone() for n, p in pol.named_parameters()})
    return out


def run_eval(exe, cfg, ckpt, init_path, grad_path, horizon, task_horizon):
    """`difgames eval` of the initial states in init_path (with --horizon when it is not the task's);
    returns (its JSON summary, its gradients)."""
    cmd = [exe, "eval", "--config", cfg, "--ckpt", ckpt, "--init", init_path, "--grad-out", grad_path]
    if horizon != task_horizon:
        cmd += ["--horizon", str(horizon)]
    out = json.loads(run(cmd).strip().splitlines()[-1])
    return out, st_py.load(grad_path)


def check_shape(label, out, batch, horizon):
    """Prints the case's heading; False when eval ran another batch or horizon."""
    print(f"\n[{label}] B={batch} H={horizon} (eval says batch={out.get('batch')} horizon={out.get('horizon')})")
    if out.get("horizon") != horizon or out.get("batch") != batch:
        print("FAIL: eval ran a different batch or horizon")
        return False
    return True


def check_values(out, ref):
    """The loss and every term of eval's summary out against PyTorch float32 (relative difference
    below TOL), float64 printed beside it; ref from reference()."""
    (loss32, terms32, _, _), (loss64, terms64, _, _) = ref["32"], ref["64"]
    ok = True
    print(f"{'value':<14}{'difgames':>16}{'torch f32':>16}{'rel':>11}{'rel vs f64':>12}")
    for name, r32, r64 in [("loss", loss32, loss64)] + [(k, terms32[k], terms64[k]) for k in terms32]:
        if name not in out:
            print(f"{name:<14}{'missing':>16}  FAIL")
            ok = False
            continue
        ours = float(out[name])
        e = rel(ours, r32)
        bad = e >= TOL
        ok &= not bad
        print(f"{name:<14}{ours:>16.9g}{r32:>16.9g}{e:>11.2e}{rel(ours, r64):>12.2e}{'  FAIL' if bad else ''}")
    return ok


def check_grads(ours, ref, strict, crit):
    """eval's gradient of every parameter (same names and shapes) against PyTorch float32 and float64,
    with PyTorch's own float32-vs-float64 difference; with strict, each must be within TOL of float32
    (crit says what the column means)."""
    g32, g64 = ref["32"][3], ref["64"][3]
    ok = True
    print(f"{'gradient':<14}{'shape':>10}{'max|g_torch|':>14}{'vs f32':>10}{'vs f64':>10}{'f32 vs f64':>12}   ({crit})")
    if set(ours) != set(g32):
        print(f"FAIL: gradient names {sorted(ours)} != parameters {sorted(g32)}")
        ok = False
    for n, g in g32.items():
        if n not in ours:
            continue
        og = ours[n].float()
        if tuple(og.shape) != tuple(g.shape):
            print(f"{n:<14}{str(tuple(og.shape)):>10}  FAIL: shape, want {tuple(g.shape)}")
            ok = False
            continue
        e32, e64, cond = grad_rel(og, g), grad_rel(og, g64[n]), grad_rel(g, g64[n])
        bad = strict and e32 >= TOL
        ok &= not bad
        print(f"{n:<14}{str(tuple(g.shape)):>10}{g.abs().max().item():>14.4g}{e32:>10.2e}{e64:>10.2e}{cond:>12.2e}"
              f"{'  FAIL' if bad else ''}")
    return ok


def main(name, body, add_args=None):
    """A reference test's command line and verdict: parses --build, --seed and what add_args(parser)
    adds, then runs body(args, exe, tmp) (exe: the difgames command; tmp: a temporary folder) -> True
    on pass; a RuntimeError fails the test with its message. Returns the exit status (0 on pass)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True, help="the build folder holding difgames")
    ap.add_argument("--seed", type=int, default=3, help="seed for training and the initial states")
    if add_args:
        add_args(ap)
    args = ap.parse_args()
    torch.set_num_threads(1)
    exe = os.path.join(os.path.abspath(args.build), "difgames")
    with tempfile.TemporaryDirectory(prefix=name + "_") as tmp:
        try:
            ok = body(args, exe, tmp)
        except RuntimeError as e:
            print(f"FAIL: {e}")
            return 1
    print(f"\n{name}: " + ("PASS" if ok else "FAIL") + f" (tolerance {TOL:g})")
    return 0 if ok else 1
