"""Two jobs at once on the same cores: how much slower is each than when it runs alone?

Runs a job alone, then two copies of it started together, and reports the slowdown
(wall time of the pair / wall time of one). Two jobs that each use every core can at best
take twice as long as one (slowdown 2.0). Each job runs under the command's own OpenMP wait
policy (threads poll 1000 times, then sleep: GOMP_SPINCOUNT=1000, unless the user set
OMP_WAIT_POLICY or GOMP_SPINCOUNT) and, for comparison in the same run, under
OMP_WAIT_POLICY=passive (sleep at once) and OMP_WAIT_POLICY=active (spin while waiting:
libgomp's default for a program that does not choose).

Jobs: `hji solve` of air3d (every core), and `train` of the reach benchmark task on 2
threads at batch 64 (short parallel regions: one per epoch) and at batch 1024.

usage: python3 bench/sharing.py [--difgames build/difgames] [--markdown FILE] [--repeat N]
"""
import argparse, os, subprocess, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser()
ap.add_argument("--difgames", default=os.path.join(ROOT, "build", "difgames"))
ap.add_argument("--markdown")
ap.add_argument("--repeat", type=int, default=3, help="runs of each measurement; the median is kept")
args = ap.parse_args()


def jobs(tmp):
    dg = args.difgames
    return {
        "hji solve air3d (all cores)": lambda k: [dg, "hji", "solve", "--config",
                                                  os.path.join(ROOT, "configs/hji/air3d.yaml"),
                                                  "--out", os.path.join(tmp, f"v{k}.safetensors")],
        "train reach B 64 (2 threads)": lambda k: [dg, "train", "--config", os.path.join(ROOT, "configs/bench/reach.yaml"),
                                                   "--epochs", "600", "--threads", "2", "--quiet",
                                                   "--out", os.path.join(tmp, f"run{k}")],
        "train reach B 1024 (2 threads)": lambda k: [dg, "train", "--config", os.path.join(ROOT, "configs/bench/reach.yaml"),
                                                     "--batch", "1024", "--epochs", "40", "--threads", "2", "--quiet",
                                                     "--out", os.path.join(tmp, f"run{k}")],
    }


def wall(cmds, env):
    t0 = time.perf_counter()
    procs = [subprocess.Popen(c, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for c in cmds]
    for p in procs:
        if p.wait() != 0:
            raise SystemExit(f"bench/sharing.py: {' '.join(p.args)} failed with status {p.returncode}")
    return time.perf_counter() - t0


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


rows = []
with tempfile.TemporaryDirectory() as tmp:
    for name, cmd in jobs(tmp).items():
        for policy, var in (("difgames (spin 1000, sleep)", None), ("passive", "passive"), ("active (spin)", "active")):
            env = dict(os.environ)
            env.pop("OMP_WAIT_POLICY", None)
            env.pop("GOMP_SPINCOUNT", None)
            if var:
                env["OMP_WAIT_POLICY"] = var
            one = median([wall([cmd(0)], env) for _ in range(args.repeat)])
            two = median([wall([cmd(0), cmd(1)], env) for _ in range(args.repeat)])
            rows.append((name, policy, one, two, two / one))
            print(f"{name:<32} {policy:<28} one {one:7.3f} s, two at once {two:7.3f} s, slowdown {two / one:5.2f}x",
                  flush=True)
if args.markdown:
    with open(args.markdown, "a") as f:
        f.write("\n| job | wait policy | one alone (s) | two at once (s) | slowdown |\n|---|---|---|---|---|\n")
        for name, policy, one, two, r in rows:
            f.write(f"| {name} | {policy} | {one:.3f} | {two:.3f} | {r:.2f}x |\n")
