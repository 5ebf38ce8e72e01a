"""The reach benchmark task (configs/bench/reach.yaml, defined in docs/games/reach.md)
in plain PyTorch, written the way a
PyTorch user would write it, timed per epoch. Used by bench/run.sh as the
reference side of the speed comparison.

usage: reach_torch.py [--batch 64] [--horizon 60] [--hidden 64] [--epochs 50]
                      [--warmup 5] [--threads 1] [--seed 0]
Prints one JSON line: ms_per_epoch (median over the timed epochs), final_loss.
"""
import argparse, json, math, statistics, time
import torch
import torch.nn as nn

ap = argparse.ArgumentParser()
ap.add_argument("--batch", type=int, default=64)
ap.add_argument("--horizon", type=int, default=60)
ap.add_argument("--hidden", type=int, default=64)
ap.add_argument("--epochs", type=int, default=50)
ap.add_argument("--warmup", type=int, default=5)
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--seed", type=int, default=0)
args = ap.parse_args()
torch.set_num_threads(args.threads)
torch.manual_seed(args.seed)

DT, DAMPING, ACCEL, MARGIN = 0.05, 0.98, 5.0, 0.05
OBST = torch.tensor([[0.0, 0.0, 0.25]])
W_GOAL, W_COLL, W_ENERGY = 1.0, 5.0, 0.01


class Policy(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                 nn.Linear(hidden, 2), nn.Tanh())

    def forward(self, obs):
        return self.net(obs)


def obstacle_dist(p):
    d = p[:, None, :] - OBST[None, :, :2]
    return torch.sqrt((d ** 2).sum(-1) + 1e-9) - OBST[None, :, 2]


def reset(B):
    def draw(n, lo_x, hi_x, ok):
        out = torch.empty(0, 2)
        while out.shape[0] < n:
            c = torch.stack([torch.empty(n).uniform_(lo_x, hi_x), torch.empty(n).uniform_(-0.5, 0.5)], 1)
            out = torch.cat([out, c[ok(c)]])
        return out[:n]
    start = draw(B, -0.9, -0.6, lambda c: obstacle_dist(c).min(1).values >= MARGIN)
    goal = draw(B, 0.6, 0.9, lambda c: obstacle_dist(c).min(1).values >= 0)
    return torch.cat([start, torch.zeros(B, 2)], 1), goal


def episode_loss(policy, state, goal, H):
    p, v = state[:, :2], state[:, 2:]
    total = 0.0
    for _ in range(H):
        a = policy(torch.cat([p, v, goal], 1))
        v = (v + ACCEL * a * DT) * DAMPING
        p = p + v * DT
        collide = torch.relu(MARGIN - obstacle_dist(p)).pow(2).sum(1)
        cost = (W_GOAL * ((p - goal) ** 2).sum(1).mean() + W_COLL * collide.mean()
                + W_ENERGY * (a ** 2).sum(1).mean())
        total = total + cost
    return total / H


policy = Policy(args.hidden)
opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
times, loss = [], float("nan")
for epoch in range(args.warmup + args.epochs):
    t0 = time.perf_counter()
    state, goal = reset(args.batch)
    l = episode_loss(policy, state, goal, args.horizon)
    opt.zero_grad()
    l.backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
    opt.step()
    dt = time.perf_counter() - t0
    if epoch >= args.warmup:
        times.append(dt)
    loss = l.item()
print(json.dumps({"impl": "pytorch", "torch": torch.__version__, "batch": args.batch,
                  "horizon": args.horizon, "hidden": args.hidden, "threads": args.threads,
                  "ms_per_epoch": 1e3 * statistics.median(times), "final_loss": loss}))
