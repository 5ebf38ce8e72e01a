"""Reads a fishwar checkpoint's two policies at stock levels and compares each country's catch
fraction c_i / x with the closed form: the feedback Nash fraction (1 - alpha beta)/(2 - alpha beta),
or with --cooperative half the cooperative total, (1 - alpha beta)/2 each. One season is played from
each stock (horizon 1, the discount 1), so c_i / x is the fraction the game grants at that stock
(the requests' own while they total below env.ration's lo). Prints a table (stock, c_1/x, c_2/x,
relative errors), each country's discounted utility over the config's horizon on held-out starts
beside the closed forms' (Nash and cooperative) on the same starts, and a last line of JSON: the
fractions, the target, max_rel_err over both countries and every stock, the utilities.

usage: PYTHONPATH=build/python /usr/bin/python3 bench/fishwar_fractions.py --config configs/fishwar.yaml
       --ckpt runs/fishwar/final.safetensors [--cooperative] [--stocks N] [--range LO HI] [--markdown FILE]
"""
import argparse, json

import numpy as np

import difgames as dg

ap = argparse.ArgumentParser()
ap.add_argument("--config", required=True)
ap.add_argument("--ckpt", required=True)
ap.add_argument("--cooperative", action="store_true",
                help="compare with the cooperative fraction (1 - alpha beta)/2 of each country")
ap.add_argument("--stocks", type=int, default=10, help="stock levels, evenly spaced over --range (10)")
ap.add_argument("--range", type=float, nargs=2, default=[0.1, 1.0], metavar=("LO", "HI"),
                help="the stocks' range: the config's env.stock (default 0.1 1, the game's default)")
ap.add_argument("--seed", type=int, default=1000, help="the held-out starts' seed of the utilities (1000)")
ap.add_argument("--batch", type=int, default=1024, help="held-out starts of the utilities (1024)")
ap.add_argument("--markdown", help="also write the table as Markdown to this file")
args = ap.parse_args()

env = dg.Env(args.config, horizon=1)
params = env.load(args.ckpt)
lo, hi = args.range
x = np.linspace(lo, hi, args.stocks)
st = np.zeros((len(x), 4), dtype=env.dtype)
st[:, 0] = x
st[:, 1] = 1
traj = env.rollout(params, init=(st, None))["traj"]
frac = traj[1, :, 2:4] / traj[0, :, 0:1]  # (stocks, 2): c_i / x of the season played
# the game's keys from the season itself: beta is the next catch's discount, and
# x' = ((1 - G) x)^alpha with G x both catches
beta = float(np.median(traj[1, :, 1]))
alpha = float(np.median(np.log(traj[1, :, 0]) / np.log(x - traj[1, :, 2] - traj[1, :, 3])))
ab = alpha * beta
nash, coop = (1 - ab) / (2 - ab), (1 - ab) / 2
target = coop if args.cooperative else nash
err = np.abs(frac / target - 1)


def S(q, H):
    """sum_(t < H) q^t"""
    return (1 - q ** H) / (1 - q)


def utility(fi, F, x0, H):
    """country i's sum_(t < H) beta^t log c_i,t from x0 when it catches fi x and both F x (docs/economics.md)"""
    return (np.log(fi) * S(beta, H) + np.log(x0) * S(ab, H)
            + alpha * np.log(1 - F) / (1 - alpha) * (S(beta, H) - S(ab, H)))


# each country's discounted utility over the config's horizon on held-out starts, against the closed
# form's of both solutions on the same starts
full = dg.Env(args.config)
H = full.horizon
ep = full.rollout(params, seed=args.seed, batch=args.batch)
x0 = full.reset(batch=args.batch, seed=args.seed)[0][:, 0].astype(np.float64)
learned = [-H * ep["terms"]["utility_%d" % i] for i in (1, 2)]
exact = {"nash": float(np.mean(utility(nash, 2 * nash, x0, H))), "cooperative": float(np.mean(utility(coop, 2 * coop, x0, H)))}
kind = "cooperative (1 - alpha beta)/2" if args.cooperative else "Nash (1 - alpha beta)/(2 - alpha beta)"
lines = [f"| stock x | c_1 / x | c_2 / x | rel. err. 1 | rel. err. 2 |", "|---|---|---|---|---|"]
for k in range(len(x)):
    lines.append(f"| {x[k]:.3f} | {frac[k, 0]:.4f} | {frac[k, 1]:.4f} | {err[k, 0] * 100:.2f} % | {err[k, 1] * 100:.2f} % |")
print(f"{args.ckpt}: each country's c_i / x against the {kind} fraction {target:.4f} (alpha {alpha:.4g}, beta {beta:.4g})")
print("\n".join(lines))
print(f"max relative error {err.max() * 100:.2f} %")
print(f"utility sum_t beta^t log c_i over {H} seasons, mean of {args.batch} starts of seed {args.seed}: "
      f"country 1 {learned[0]:.3f}, country 2 {learned[1]:.3f}; closed form: Nash {exact['nash']:.3f} each, "
      f"cooperative {exact['cooperative']:.3f} each")
out = {"alpha": alpha, "beta": beta, "target": target, "cooperative": args.cooperative, "stocks": x.tolist(),
       "fraction_1": frac[:, 0].tolist(), "fraction_2": frac[:, 1].tolist(), "max_rel_err": float(err.max()),
       "utility_1": learned[0], "utility_2": learned[1], "utility_nash": exact["nash"],
       "utility_cooperative": exact["cooperative"], "catch_fraction_1": ep["metrics"]["catch_fraction_1"],
       "catch_fraction_2": ep["metrics"]["catch_fraction_2"]}
if args.markdown:
    with open(args.markdown, "w") as f:
        f.write("\n".join(lines) + "\n")
print(json.dumps(out))
