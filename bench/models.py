"""A game in a model file against the same game built in: time per training epoch.

Runs `difgames bench` (the median ms per epoch of --epochs timed epochs) on configs/reach.yaml
and configs/models/reach.yaml (the same game, docs/models.md), alternating, --repeat times each,
with the model's expressions compiled (the default) and interpreted by libmatheval
(model.compile: false); prints the medians of the wall time per epoch (bench's) and of the CPU
time per epoch, and their ratios (issue 14: the compiled model within 2x of the built-in).

usage: python3 bench/models.py [--difgames build/difgames] [--markdown FILE] [--repeat N]
"""
import argparse, json, os, resource, statistics, subprocess, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser()
ap.add_argument("--difgames", default=os.path.join(ROOT, "build", "difgames"))
ap.add_argument("--markdown")
ap.add_argument("--repeat", type=int, default=5)
ap.add_argument("--epochs", type=int, default=200)
args = ap.parse_args()


def run(config, threads, epochs):
    """bench's median wall ms per epoch, and the CPU seconds (user + system) the process took"""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([args.difgames, "bench", "--config", config, "--epochs", str(epochs),
                          "--threads", str(threads)], check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(out.strip().splitlines()[-1])["ms_per_epoch"], cpu


def ms(config, threads):
    """(wall ms per epoch, CPU ms per epoch): the CPU time of --epochs + 10 epochs less that of 10,
    so that loading (and compiling) does not count; on a loaded machine the CPU time is the
    steadier of the two"""
    wall, cpu_long = run(config, threads, args.epochs + 10)
    _, cpu_short = run(config, threads, 10)
    return wall, 1000 * (cpu_long - cpu_short) / args.epochs


with tempfile.TemporaryDirectory() as tmp:
    model = os.path.join(ROOT, "configs/models/reach.yaml")
    interp = os.path.join(tmp, "interp.yaml")
    with open(model) as f, open(interp, "w") as g:
        g.write(f.read().replace("\n  name: reach\n", "\n  name: reach\n  compile: false\n"))
    rows = []
    for threads in (1, 2):
        t = {"built-in": [], "model (compiled)": [], "model (interpreted)": []}
        for _ in range(args.repeat):
            t["built-in"].append(ms(os.path.join(ROOT, "configs/reach.yaml"), threads))
            t["model (compiled)"].append(ms(model, threads))
            t["model (interpreted)"].append(ms(interp, threads))
        wall = {k: statistics.median(w for w, _ in v) for k, v in t.items()}
        cpu = {k: statistics.median(c for _, c in v) for k, v in t.items()}
        for k in t:
            rows.append((k, threads, wall[k], wall[k] / wall["built-in"], cpu[k], cpu[k] / cpu["built-in"]))

lines = ["| reach, batch 64, horizon 60 | threads | wall ms per epoch | vs built-in | CPU ms per epoch | vs built-in |",
         "|---|---:|---:|---:|---:|---:|"]
lines += [f"| {k} | {th} | {w:.2f} | {wr:.2f}x | {c:.2f} | {cr:.2f}x |" for k, th, w, wr, c, cr in rows]
print("\n".join(lines))
if args.markdown:
    with open(args.markdown, "a") as f:
        f.write("\n## Model files (bench/models.py)\n\n" + "\n".join(lines) + "\n")
