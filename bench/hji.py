"""Times the HJBI grid solver on air3d (51 x 40 x 50, t_end 2.8, BRT) at each
accuracy preset on 1 and 2 threads, and prints seconds and cell updates per
second (steps x Runge-Kutta stages x nodes / seconds). ToolboxLS under GNU
Octave on this kind of machine takes about 28 s (medium) and 70 s (veryHigh)
for the same problem (figures from the issue that asked for this benchmark;
Octave and ToolboxLS are not installed here), so the ratio to those is shown.

usage: python3 bench/hji.py [--difgames build/difgames] [--markdown FILE]
"""
import argparse, json, os, subprocess, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser()
ap.add_argument("--difgames", default=os.path.join(ROOT, "build", "difgames"))
ap.add_argument("--markdown")
args = ap.parse_args()
TOOLBOXLS_S = {"medium": 28.0, "veryHigh": 70.0}

rows = []
with tempfile.TemporaryDirectory() as tmp:
    for acc in ("low", "medium", "high", "veryHigh"):
        for thr in (1, 2):
            out = subprocess.run([args.difgames, "hji", "solve", "--config", os.path.join(ROOT, "configs/hji/air3d.yaml"),
                                  "--accuracy", acc, "--threads", str(thr), "--out", os.path.join(tmp, "v.safetensors")],
                                 check=True, capture_output=True, text=True).stdout
            r = json.loads(out.strip().splitlines()[-1])
            ref = TOOLBOXLS_S.get(acc)
            rows.append((acc, thr, r["seconds"], r["steps"], r["cell_updates_per_s"],
                         f"{ref / r['seconds']:.0f}x" if ref else "-"))
            print(f"air3d {acc:<8} threads {thr}: {r['seconds']:.3f} s, {r['steps']} steps, "
                  f"{r['cell_updates_per_s']:.3g} cell updates/s, vs ToolboxLS/Octave {rows[-1][5]}", flush=True)
if args.markdown:
    with open(args.markdown, "a") as f:
        f.write("\n| air3d accuracy | threads | seconds | steps | cell updates/s | vs ToolboxLS (Octave) |\n|---|---|---|---|---|---|\n")
        for acc, thr, s, n, u, ratio in rows:
            f.write(f"| {acc} | {thr} | {s:.3f} | {n} | {u:.3g} | {ratio} |\n")
