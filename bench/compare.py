"""Times difgames and the plain PyTorch implementation of the reach benchmark task
(configs/bench/reach.yaml, defined in docs/games/reach.md) side by
side, in one run, on the same machine and thread count, and prints a table:
ms/epoch of both, their ratio, and env-steps/s including the backward pass
(batch x horizon / epoch time). Also the memory of a 10 000-step horizon with
the full tape and with checkpointed BPTT.

usage: python3 bench/compare.py --difgames build/difgames [--quick] [--markdown FILE]
"""
import argparse, json, os, platform, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser()
ap.add_argument("--difgames", default=os.path.join(ROOT, "build", "difgames"))
ap.add_argument("--quick", action="store_true", help="fewer epochs (a smoke test)")
ap.add_argument("--markdown", help="also write the table as Markdown to this file")
args = ap.parse_args()
CONFIG = os.path.join(ROOT, "configs", "bench", "reach.yaml")
TORCH = os.path.join(ROOT, "bench", "reach_torch.py")

# name, batch, horizon, hidden, threads, (torch epochs, difgames epochs)
RUNS = [
    ("reach defaults", 64, 60, 64, 1, (30, 300)),
    ("reach defaults", 64, 60, 64, 2, (30, 300)),
    ("batch 1024", 1024, 60, 64, 1, (8, 40)),
    ("batch 1024", 1024, 60, 64, 2, (8, 40)),
    ("hidden 256", 64, 60, 256, 1, (10, 60)),
    ("horizon 600", 64, 600, 64, 1, (4, 30)),
]


def last_json(out):
    return json.loads(out.strip().splitlines()[-1])


def run(cmd):
    return last_json(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


# An untimed warm-up of both sides before the first timed row: on this page's virtual machine the
# first run after a while idle was consistently slower (1.89 against 1.25 ms/epoch for the same
# difgames binary), which would have charged the first row's side with the machine's wake-up.
if not args.quick:
    run([args.difgames, "bench", "--config", CONFIG, "--epochs", "100"])
    run(["/usr/bin/python3", TORCH, "--epochs", "3", "--warmup", "1"])

rows = []
for name, B, H, hid, thr, (te, de) in RUNS:
    if args.quick:
        te, de = 2, 5
    d = run([args.difgames, "bench", "--config", CONFIG, "--batch", str(B), "--horizon", str(H),
             "--hidden", str(hid), "--threads", str(thr), "--epochs", str(de)])
    t = run(["/usr/bin/python3", TORCH, "--batch", str(B), "--horizon", str(H), "--hidden", str(hid),
             "--threads", str(thr), "--epochs", str(te), "--warmup", "2"])
    steps = B * H
    rows.append({"config": name, "batch": B, "horizon": H, "hidden": hid, "threads": thr,
                 "torch_ms": t["ms_per_epoch"], "difgames_ms": d["ms_per_epoch"],
                 "ratio": t["ms_per_epoch"] / d["ms_per_epoch"],
                 "difgames_steps_s": d["env_steps_per_s"], "torch_steps_s": steps / (t["ms_per_epoch"] / 1e3),
                 "gflops": d["gflops"], "torch": t["torch"]})
    r = rows[-1]
    print(f"{name:<15} B={B:<5} H={H:<4} hidden={hid:<4} threads={thr}: PyTorch {r['torch_ms']:9.2f} ms, "
          f"difgames {r['difgames_ms']:8.3f} ms, ratio {r['ratio']:6.1f}x, difgames {r['difgames_steps_s']:.3g} "
          f"env-steps/s ({r['gflops']:.1f} GFLOP/s), PyTorch {r['torch_steps_s']:.3g}", flush=True)

# the targets of issue 18, 1 thread, from this run (PyTorch and difgames side by side)
for name, target in (("reach defaults", 50), ("batch 1024", 25)):
    r = next((r for r in rows if r["config"] == name and r["threads"] == 1), None)
    if r:
        print(f"target {name} (B {r['batch']}), 1 thread: {r['ratio']:.1f}x PyTorch "
              f"(target {target}x: {'met' if r['ratio'] >= target else 'not met'})", flush=True)

mem = []
for ck in (-1, 0):
    m = run([args.difgames, "bench", "--config", CONFIG, "--horizon", "10000", "--epochs", "1" if args.quick else "3",
             "--warmup", "1", "--checkpoint", str(ck)])
    mem.append(m)
    mode = "full tape" if m["checkpoint_every"] == 0 else f"checkpointed every {m['checkpoint_every']} (auto)"
    print(f"horizon 10000, {mode}: tape {m['tape_bytes'] / 2**20:.1f} MiB"
          f" + saved states {m['saved_bytes'] / 2**20:.2f} MiB, {m['ms_per_epoch']:.1f} ms/epoch", flush=True)

t12 = {r["threads"]: r["difgames_ms"] for r in rows if r["config"] == "batch 1024"}
if 1 in t12 and 2 in t12:
    print(f"batch 1024: 2 threads are {t12[1] / t12[2]:.2f}x faster than 1 thread")

if args.markdown:
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    lines = [f"Measured {time.strftime('%Y-%m-%d')} on {cpu} ({os.cpu_count()} cores), {platform.system()}, "
             f"PyTorch {rows[0]['torch']} (Debian python3-torch); command: `python3 bench/compare.py`.", "",
             "| configuration | threads | PyTorch ms/epoch | difgames ms/epoch | ratio | difgames env-steps/s | PyTorch env-steps/s |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['config']} (B {r['batch']}, H {r['horizon']}, hidden {r['hidden']}) | {r['threads']} | "
                     f"{r['torch_ms']:.2f} | {r['difgames_ms']:.3f} | {r['ratio']:.1f}x | {r['difgames_steps_s']:.3g} | "
                     f"{r['torch_steps_s']:.3g} |")
    lines += ["", "| horizon 10000 (B 64) | tape | saved states | ms/epoch |", "|---|---|---|---|"]
    for m in mem:
        mode = "full tape" if m["checkpoint_every"] == 0 else f"checkpointed BPTT every {m['checkpoint_every']} steps (auto)"
        lines.append(f"| {mode} | "
                     f"{m['tape_bytes'] / 2**20:.1f} MiB | {m['saved_bytes'] / 2**20:.2f} MiB | {m['ms_per_epoch']:.1f} |")
    with open(args.markdown, "w") as f:
        f.write("\n".join(lines) + "\n")
