#!/usr/bin/env python3
"""Two builds of difgames on one HJI solve, alternated (docs/performance.md, "The HJI solver").

On a shared machine one run's time says little: this runs OLD and NEW in turn, PAIRS times,
and prints for each the best and the median of the solve's own seconds (the JSON line), of
the user CPU time (os.wait4), and the cell updates per second at the best solve time.

  python3 bench/hji_ab.py --old /path/to/old/difgames --new build/difgames \\
      --config configs/hji/air3d.yaml --accuracy veryHigh --pairs 20 [--t-end 0.5]

--t-end writes a copy of the config with a shorter horizon to a temporary directory. The
value files go there too and are compared byte for byte (a change meant to keep the bits).
"""
import argparse
import filecmp
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile


def run(binary, config, accuracy, threads, out):
    cmd = [binary, "hji", "solve", "--config", config, "--accuracy", accuracy,
           "--threads", str(threads), "--out", out]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    text = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"hji_ab: {binary} failed (status {status})")
    line = [s for s in text.splitlines() if s.startswith("{")][-1]
    return json.loads(line), usage.ru_utime


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--config", default="configs/hji/air3d.yaml")
    ap.add_argument("--accuracy", default="veryHigh")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--t-end", type=float, default=None)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = a.config
        if a.t_end is not None:
            with open(a.config) as f:
                text = f.read()
            text, n = re.subn(r"(?m)^t_end:\s*\S+", f"t_end: {a.t_end}", text)
            if n != 1:
                sys.exit(f"hji_ab: {a.config}: no top-level t_end to shorten")
            config = os.path.join(tmp, "config.yaml")
            with open(config, "w") as f:
                f.write(text)
        res = {"old": [], "new": []}
        same = True
        for _ in range(a.pairs):
            for name, binary in (("old", a.old), ("new", a.new)):
                js, user = run(binary, config, a.accuracy, a.threads, os.path.join(tmp, name + ".st"))
                res[name].append((js["seconds"], user, js["cell_updates"]))
            same &= filecmp.cmp(os.path.join(tmp, "old.st"), os.path.join(tmp, "new.st"), shallow=False)
        best = {}
        for name, rows in res.items():
            s = [r[0] for r in rows]
            u = [r[1] for r in rows]
            best[name] = (min(s), statistics.median(s), min(u), statistics.median(u))
            print(f"{name}: solve best {min(s):.3f} s, median {statistics.median(s):.3f} s; user best "
                  f"{min(u):.2f} s, median {statistics.median(u):.2f} s; {rows[0][2] / min(s):.3g} cell updates/s")
        o, n = best["old"], best["new"]
        print(f"old / new: solve best {o[0] / n[0]:.3f}, median {o[1] / n[1]:.3f}; "
              f"user best {o[2] / n[2]:.3f}, median {o[3] / n[3]:.3f}")
        print("value files: " + ("the same bytes" if same else "DIFFERENT"))


if __name__ == "__main__":
    main()
