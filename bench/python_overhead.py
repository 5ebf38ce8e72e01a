#!/usr/bin/env python3
"""What the Python package costs over the command (docs/python.md, "Speed"):

1. dg.train against `difgames train` at a config's defaults (configs/reach.yaml: 900 epochs): each run
   N times, alternating, the median wall time of each. The command's time is its process's (start,
   config, training, files); dg.train's is the call's, in a Python that has imported difgames (the
   import itself, once a process, is printed apart).
2. One training epoch through dg.torch's autograd.Function (forward, backward, clip_grad_norm_ and
   torch.optim.Adam's step) against `difgames bench`'s ms per epoch, same config.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_overhead.py [--runs 5] [--config configs/reach.yaml]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--config", default=os.path.join(ROOT, "configs", "reach.yaml"))
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--epochs", type=int, default=200, help="autograd.Function epochs timed")
    a = ap.parse_args()
    t0 = time.perf_counter()
    import difgames as dg
    t_import = time.perf_counter() - t0
    cli = os.path.join(a.build, "difgames")
    tmp = tempfile.mkdtemp(prefix="dg_pybench_")
    cmd_s, py_s, cmd_in, py_in = [], [], [], []
    try:
        for i in range(a.runs):
            out = os.path.join(tmp, "cli%d" % i)
            t = time.perf_counter()
            r = subprocess.run([cli, "train", "--config", a.config, "--out", out, "--quiet"], check=True,
                               capture_output=True, text=True)
            cmd_s.append(time.perf_counter() - t)
            cmd_in.append(json.loads(r.stdout.strip().splitlines()[-1])["seconds"])
            t = time.perf_counter()
            py_in.append(dg.train(a.config, out=os.path.join(tmp, "py%d" % i))["seconds"])
            py_s.append(time.perf_counter() - t)
        mc, mp = statistics.median(cmd_s), statistics.median(py_s)
        print("train %s: command %.3f s, dg.train %.3f s (median of %d each, alternating): %+.1f %%; "
              "import difgames %.3f s" % (os.path.relpath(a.config, ROOT), mc, mp, a.runs, 100 * (mp / mc - 1),
                                          t_import))
        ic, ip = statistics.median(cmd_in), statistics.median(py_in)
        print("  the training alone (the JSON's seconds): command %.3f s, dg.train %.3f s: %+.1f %%"
              % (ic, ip, 100 * (ip / ic - 1)))
        # the autograd.Function's epoch
        import torch
        bench = subprocess.run([cli, "bench", "--config", a.config], check=True, capture_output=True, text=True)
        b = json.loads(bench.stdout.strip().splitlines()[-1])
        env = dg.Env(a.config)
        p0, states, auxs = env.trainer_start(epochs=a.epochs)
        p = {k: torch.tensor(v, requires_grad=True) for k, v in p0.items()}
        ps = list(p.values())
        opt = torch.optim.Adam(ps, lr=1e-3)
        ms = []
        for k in range(a.epochs):
            t = time.perf_counter()
            opt.zero_grad()
            loss = dg.torch.episode_loss(env, p, init=(states[k], auxs[k]))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(ps, 1.0)
            opt.step()
            ms.append(1e3 * (time.perf_counter() - t))
        s, x = states[0], auxs[0]
        flat = env.flatten(p0)
        lib = []
        for k in range(a.epochs):
            t = time.perf_counter()
            env.episode(flat, s, x, backward=True)
            lib.append(1e3 * (time.perf_counter() - t))
        print("epoch of %s: autograd.Function + Adam %.3f ms (median of %d), of which the library's episode "
              "through ctypes %.3f ms; difgames bench %.3f ms" % (os.path.relpath(a.config, ROOT),
                                                                 statistics.median(ms), a.epochs,
                                                                 statistics.median(lib), b["ms_per_epoch"]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
