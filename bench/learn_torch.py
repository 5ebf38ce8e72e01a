"""hji learn's training on air3d in plain PyTorch, for the side-by-side timing of bench/learn_compare.py:
the same network (SIREN: (x, y, psi, tau) -> hidden sine layers, omega0 30, SIREN's initialisation ->
a linear output), the same exact boundary form V = l(x) + tau N((x - mid) / half, tau / t_end) with
l(x) = sqrt(x^2 + y^2) - R, the same loss mean_b r^2 with the BRT residual
r = V_tau + max(0, H(x, grad_x V)), H(x, p) = p . f(x) + a |p . G(x)| - b |p_psi| (the evader turns at
most a and maximises, the pursuer at most b and minimises), the same uniform samples (tau after the
pretraining iterations from a linearly growing range), Adam, float32. The input gradient is taken the
way a PyTorch user takes it: torch.autograd.grad(..., create_graph=True), a double backward.

usage: learn_torch.py [--points 8192] [--hidden 256,256,256] [--iterations 2] [--warmup 1] [--threads 1]
Prints one JSON line: ms_per_iteration and cpu_ms_per_iteration (the process's CPU time), means over
the timed iterations, and the final loss.
"""
import argparse, json, math, time
import torch
import torch.nn as nn

ap = argparse.ArgumentParser()
ap.add_argument("--points", type=int, default=8192)
ap.add_argument("--hidden", default="256,256,256")
ap.add_argument("--iterations", type=int, default=2)
ap.add_argument("--warmup", type=int, default=1)
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--lr", type=float, default=2e-5)
ap.add_argument("--pretrain", type=int, default=200)
ap.add_argument("--curriculum", type=int, default=1000)
ap.add_argument("--seed", type=int, default=0)
args = ap.parse_args()
torch.set_num_threads(args.threads)
torch.manual_seed(args.seed)
torch.set_default_dtype(torch.float32)

# configs/hji/air3d.yaml
VA, VB, A_MAX, B_MAX, RADIUS, T_END = 5.0, 5.0, 1.0, 1.0, 5.0, 2.8
LO = torch.tensor([-6.0, -10.0, 0.0])
HI = torch.tensor([20.0, 10.0, 2 * math.pi])
MID, HALF = (LO + HI) / 2, (HI - LO) / 2
OMEGA0 = 30.0


class Sine(nn.Module):
    def forward(self, z):
        return torch.sin(OMEGA0 * z)


def siren(sizes):
    """nn.Linear layers with sine between them, SIREN's initialisation (the first layer's weights in
    +-1/fan_in, the others' in +-sqrt(6/fan_in)/omega0, biases as nn.Linear's)"""
    layers = []
    for i in range(len(sizes) - 1):
        lin = nn.Linear(sizes[i], sizes[i + 1])
        bound = 1.0 / sizes[i] if i == 0 else math.sqrt(6.0 / sizes[i]) / OMEGA0
        with torch.no_grad():
            lin.weight.uniform_(-bound, bound)
        layers.append(lin)
        if i < len(sizes) - 2:
            layers.append(Sine())
    return nn.Sequential(*layers)


net = siren([4] + [int(h) for h in args.hidden.split(",")] + [1])
opt = torch.optim.Adam(net.parameters(), lr=args.lr, betas=(0.9, 0.999), eps=1e-8)


def hamiltonian(x, p):
    psi = x[:, 2]
    pf = p[:, 0] * (-VA + VB * torch.cos(psi)) + p[:, 1] * VB * torch.sin(psi)
    pg = p[:, 0] * x[:, 1] - p[:, 1] * x[:, 0] - p[:, 2]
    return pf + A_MAX * pg.abs() - B_MAX * p[:, 2].abs()


def step(it):
    B = args.points
    x = LO + (HI - LO) * torch.rand(B, 3)
    tau_max = 0.0 if it < args.pretrain else T_END * min(1.0, (it - args.pretrain + 1) / args.curriculum)
    tau = tau_max * torch.rand(B, 1)
    rho = torch.sqrt(x[:, 0] ** 2 + x[:, 1] ** 2).unsqueeze(1)
    l = rho - RADIUS
    grad_l = torch.cat([x[:, :2] / rho, torch.zeros(B, 1)], 1)
    inp = torch.cat([(x - MID) / HALF, tau / T_END], 1).requires_grad_(True)
    n = net(inp)
    (dn,) = torch.autograd.grad(n.sum(), inp, create_graph=True)
    V_tau = n + tau * dn[:, 3:4] / T_END
    grad = grad_l + tau * dn[:, :3] / HALF
    r = V_tau.squeeze(1) + torch.relu(hamiltonian(x, grad))
    loss = (r ** 2).mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss.item()


for it in range(args.warmup):
    step(it)
t0, c0 = time.perf_counter(), time.process_time()
for it in range(args.warmup, args.warmup + args.iterations):
    loss = step(it)
dt, dc = time.perf_counter() - t0, time.process_time() - c0
k = max(args.iterations, 1)
print(json.dumps({"ms_per_iteration": 1e3 * dt / k, "cpu_ms_per_iteration": 1e3 * dc / k, "points": args.points,
                  "iterations": args.iterations, "loss": loss}))
