"""Compares difgames' Adam, SGD and clip_grad_norm_ with torch.optim on the
same parameters and gradients (tests/test_optim.c --dump prints ours).
Exit 0 when every value agrees to 1e-6 (relative, or absolute below 1); prints the largest gap."""
import argparse, math, subprocess, sys
import torch

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
args = ap.parse_args()
out = subprocess.run([f"{args.build}/tests/test_optim", "--dump"], check=True,
                     capture_output=True, text=True).stdout
ours = {l.split()[0]: [float(v) for v in l.split()[1:]] for l in out.strip().splitlines()}

STEPS = 5
N = 10
f32 = torch.float32

def make():
    w = torch.tensor([math.sin(0.7 * i + 0.3) for i in range(N)], dtype=f32)
    return [torch.nn.Parameter(w[:6].reshape(2, 3).clone()), torch.nn.Parameter(w[6:].clone())]

def grads(s):
    # float32 as in C: cosf(1.3f * i + 0.5f * s) * (1 + i % 3)
    i = torch.arange(N, dtype=f32)
    g = torch.cos(torch.tensor(1.3, dtype=f32) * i + torch.tensor(0.5 * s, dtype=f32)) * (1 + i.long() % 3).to(f32)
    return [g[:6].reshape(2, 3), g[6:]]

def run(make_opt):
    ps = make()
    opt = make_opt(ps)
    for s in range(STEPS):
        for p, g in zip(ps, grads(s)):
            p.grad = g.clone()
        opt.step()
    return torch.cat([p.detach().reshape(-1) for p in ps]).tolist()

ref = {
    "adam0": run(lambda ps: torch.optim.Adam(ps, lr=1e-2, betas=(0.9, 0.999), eps=1e-8)),
    "adam1": run(lambda ps: torch.optim.Adam(ps, lr=3e-2, betas=(0.8, 0.99), eps=1e-3, weight_decay=0.1)),
    "sgd0": run(lambda ps: torch.optim.SGD(ps, lr=0.1)),
    "sgd1": run(lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    "sgd2": run(lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True)),
}
for k, mx in ((0, 1.0), (1, 100.0)):
    ps = make()
    for p, g in zip(ps, grads(0)):
        p.grad = g.clone()
    norm = torch.nn.utils.clip_grad_norm_(ps, mx)
    ref[f"clip{k}"] = [float(norm)] + torch.cat([p.grad.reshape(-1) for p in ps]).tolist()

worst = 0.0
for name, want in ref.items():
    got = ours[name]
    assert len(got) == len(want), name
    for a, b in zip(got, want):
        worst = max(worst, abs(a - b) / max(abs(b), 1.0))
    print(f"{name}: max rel diff {max(abs(a - b) / max(abs(b), 1.0) for a, b in zip(got, want)):.2e}")
print(f"worst relative difference vs torch {torch.__version__}: {worst:.2e}")
sys.exit(0 if worst < 1e-6 else 1)
