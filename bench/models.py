"""A game in a model file against the same game built in: time per training epoch.

Runs `difgames bench` (the median ms per epoch of --epochs timed epochs) on configs/reach.yaml
and configs/models/reach.yaml (the same game, docs/models.md), alternating, --repeat times each,
with the model's expressions compiled (the default) and interpreted by libmatheval
(model.compile: false); prints the medians and the ratios (issue 14: the compiled model within
2x of the built-in).

usage: python3 bench/models.py [--difgames build/difgames] [--markdown FILE] [--repeat N]
"""
import argparse, json, os, statistics, subprocess, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser()
ap.add_argument("--difgames", default=os.path.join(ROOT, "build", "difgames"))
ap.add_argument("--markdown")
ap.add_argument("--repeat", type=int, default=5)
ap.add_argument("--epochs", type=int, default=30)
args = ap.parse_args()


def ms(config, threads):
    out = subprocess.run([args.difgames, "bench", "--config", config, "--epochs", str(args.epochs),
                          "--threads", str(threads)], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["ms_per_epoch"]


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
        base = statistics.median(t["built-in"])
        for k, v in t.items():
            rows.append((k, threads, statistics.median(v), statistics.median(v) / base))

lines = ["| reach, batch 64, horizon 60 | threads | ms per epoch (median) | vs built-in |",
         "|---|---:|---:|---:|"]
lines += [f"| {k} | {th} | {m:.2f} | {r:.2f}x |" for k, th, m, r in rows]
print("\n".join(lines))
if args.markdown:
    with open(args.markdown, "a") as f:
        f.write("\n## Model files (bench/models.py)\n\n" + "\n".join(lines) + "\n")
