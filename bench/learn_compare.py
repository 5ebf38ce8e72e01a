"""hji learn against the same training in PyTorch (bench/learn_torch.py), side by side in one run, and
the share of the core's float32 FMA peak an iteration of ours uses: air3d, a 3 x 256 SIREN, exact
boundary, Adam, float32, one thread each, at 8k, 16k, 32k and 64k points. For each size the two
are run alternately (ours, then PyTorch, `--rounds` times); ours is `difgames hji learn --bench
--threads 1` (its first iteration, which sizes the tape, left out), PyTorch's is its mean over
`--iterations` after one warm-up. The peak is build/bench/roofline's, measured in the same run.
Our GFLOP/s is the tape's count (matrix products exactly) over the wall time, and over the CPU time
(the process's; on a machine shared with other jobs the wall time counts their turns too).

Debian's torch links the reference BLAS (Netlib's libblas.so.3, one unblocked loop per product), so
the ratio flatters us: against an optimised BLAS it would be far smaller.

usage: python3 bench/learn_compare.py [--difgames build/difgames] [--points 8192,16384,32768,65536]
                                      [--iterations 2] [--rounds 1] [--markdown FILE]
"""
import argparse, json, os, re, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser()
ap.add_argument("--difgames", default=os.path.join(ROOT, "build", "difgames"))
ap.add_argument("--roofline", default=os.path.join(ROOT, "build", "bench", "roofline"))
ap.add_argument("--points", default="8192,16384,32768,65536")
ap.add_argument("--hidden", default="256,256,256")
ap.add_argument("--iterations", type=int, default=2, help="timed iterations of each side a round")
ap.add_argument("--rounds", type=int, default=1)
ap.add_argument("--markdown")
args = ap.parse_args()


def peak_gflops():
    out = subprocess.run([args.roofline, "peak"], check=True, capture_output=True, text=True).stdout
    m = re.search(r"\| float32 FMA[^|]*\| ([0-9.]+) \|", out)
    if not m:
        sys.exit("learn_compare: no peak in build/bench/roofline's output")
    return float(m.group(1))


def ours(cfg, points):
    out = subprocess.run([args.difgames, "hji", "learn", "--config", cfg, "--bench", "--threads", "1", "--points",
                          str(points), "--iterations", str(args.iterations + 1)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def torch_side(points):
    out = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "learn_torch.py"), "--points", str(points),
                          "--hidden", args.hidden, "--iterations", str(args.iterations), "--threads", "1"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


rows = []
with tempfile.TemporaryDirectory() as tmp:
    cfg = os.path.join(tmp, "air3d.yaml")
    with open(os.path.join(ROOT, "configs", "hji", "air3d.yaml")) as f, open(cfg, "w") as g:
        # the game and grid as shipped; its learn: section (the recipe) replaced by the network timed here
        text = re.sub(r"(?m)^learn:.*\n(?:[ #].*\n|\n)*", "", f.read())
        g.write(text)
        g.write(f"\nlearn:\n  hidden: [{args.hidden.replace(',', ', ')}]\n  activation: sine\n  threads: 1\n")
    peak = peak_gflops()
    print(f"float32 FMA peak (build/bench/roofline peak): {peak:.1f} GFLOP/s", flush=True)
    for points in [int(p) for p in args.points.split(",")]:
        mine, theirs = [], []
        for _ in range(args.rounds):
            mine.append(ours(cfg, points))
            theirs.append(torch_side(points))
        best = min(mine, key=lambda r: r["ms_per_iteration"])
        tb = min(theirs, key=lambda r: r["ms_per_iteration"])
        flop = best["gflops"] * best["ms_per_iteration"] * 1e6  # the tape's count an iteration
        cpu_gf = flop / (best["cpu_ms_per_iteration"] * 1e6)
        rows.append((points, best["ms_per_iteration"], best["cpu_ms_per_iteration"], best["gflops"] / peak,
                     cpu_gf / peak, tb["ms_per_iteration"], tb["cpu_ms_per_iteration"],
                     tb["ms_per_iteration"] / best["ms_per_iteration"],
                     tb["cpu_ms_per_iteration"] / best["cpu_ms_per_iteration"], flop / 1e9))
        r = rows[-1]
        print(f"{points:>6} points ({r[9]:.1f} GFLOP an iteration): difgames {r[1]:.1f} ms wall, {r[2]:.1f} ms CPU "
              f"= {100 * r[3]:.0f} % / {100 * r[4]:.0f} % of the FMA peak; PyTorch {r[5]:.0f} ms wall, {r[6]:.0f} ms "
              f"CPU; ratio {r[7]:.1f}x wall, {r[8]:.1f}x CPU", flush=True)
if args.markdown:
    with open(args.markdown, "a") as f:
        f.write(f"\nhji learn against PyTorch (bench/learn_compare.py), air3d, {args.hidden.replace(',', ' x ')} SIREN, "
                f"float32, 1 thread; FMA peak {peak:.1f} GFLOP/s (build/bench/roofline); PyTorch links the reference "
                "BLAS (the ratio flatters us):\n\n"
                "| points | GFLOP an iteration (tape) | difgames ms wall / CPU | of the FMA peak, wall / CPU | "
                "PyTorch ms wall / CPU | ratio wall / CPU |\n|---|---|---|---|---|---|\n")
        for p, ms, cms, sh, csh, tms, tcms, ratio, cratio, gf in rows:
            f.write(f"| {p} | {gf:.1f} | {ms:.0f} / {cms:.0f} | {100 * sh:.0f} % / {100 * csh:.0f} % | "
                    f"{tms:.0f} / {tcms:.0f} | {ratio:.1f}x / {cratio:.1f}x |\n")
