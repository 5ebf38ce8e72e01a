"""Has a capture tube converged? Solves an HJBI config (configs/hji/*.yaml) to a
longer horizon with `difgames hji solve --times`, and prints, for each stored
time-to-go t, the fraction of the grid inside the tube ({V(x, t) <= 0}), its
size in the grid's units (area, volume), and the largest change of V over the
grid since the previous stored time. A tube that has converged stops growing:
the fraction is flat and the change falls to zero (up to the solver's rounding).
A last column takes the change only near the zero level set (|V| below the
largest grid spacing), where the tube's boundary is read. With --modes it also
solves the config in `brt_target` mode and compares it with the `brt` value at
the horizon (the two share the zero sublevel set, not the value). Pure Python:
reads the safetensors value file with json + struct.

usage: python3 bench/hji_horizon.py --config configs/hji/chauffeur.yaml --t-end 12 --every 1
       python3 bench/hji_horizon.py --config configs/hji/air3d.yaml --t-end 4 --every 0.2 --modes
"""
import argparse, json, os, re, struct, subprocess, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser()
ap.add_argument("--difgames", default=os.path.join(ROOT, "build", "difgames"))
ap.add_argument("--config", required=True)
ap.add_argument("--t-end", type=float, required=True, help="the horizon of the solve")
ap.add_argument("--every", type=float, required=True, help="store the value every this many seconds")
ap.add_argument("--threads", default="1")
ap.add_argument("--modes", action="store_true", help="also compare brt with brt_target at --t-end")
ap.add_argument("--markdown", help="append the table to this file")
args = ap.parse_args()


def read_values(path):
    """{time: list of floats} from a difgames-hji-value file, and the metadata."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        head = json.loads(f.read(n))
        data = f.read()
    meta = head.pop("__metadata__")
    times = [float(t) for t in meta["times"].split(",")]
    names = [f"value_{i + 1}" for i in range(len(times) - 1)] + ["value"]
    out = {}
    for t, name in zip(times, names):
        e = head[name]
        a, b = e["data_offsets"]
        fmt = "d" if e["dtype"] == "F64" else "f"
        out[t] = struct.unpack(f"<{(b - a) // struct.calcsize(fmt)}{fmt}", data[a:b])
    return out, meta


def solve(text, tmp, name, times):
    cfg = os.path.join(tmp, name + ".yaml")
    with open(cfg, "w") as f:
        f.write(text)
    out = os.path.join(tmp, name + ".safetensors")
    cmd = [args.difgames, "hji", "solve", "--config", cfg, "--out", out, "--threads", args.threads, "--slices", "1"]
    if times:
        cmd += ["--times", ",".join(f"{t:g}" for t in times)]
    r = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return read_values(out), json.loads(r.stdout.strip().splitlines()[-1])


def with_key(text, key, value):
    """The config text with a top-level `key: value` (replaced, or added)."""
    line = f"{key}: {value}"
    pat = re.compile(rf"^{key}:.*$", re.M)
    return pat.sub(line, text) if pat.search(text) else text.rstrip("\n") + "\n" + line + "\n"


with open(args.config) as f:
    base = f.read()
k = 1
times = []
while k * args.every < args.t_end - 1e-9:
    times.append(round(k * args.every, 10))
    k += 1
lines = []
with tempfile.TemporaryDirectory() as tmp:
    text = with_key(base, "t_end", f"{args.t_end:g}")
    if args.modes:
        text = with_key(text, "mode", "brt")
    (vals, meta), stats = solve(text, tmp, "tube", times)
    lo = [float(v) for v in meta["lo"].split(",")]
    hi = [float(v) for v in meta["hi"].split(",")]
    n = [int(v) for v in meta["n"].split(",")]
    per = [int(v) for v in meta["periodic"].split(",")]
    cell, band = 1.0, 0.0
    for a, b, m, p in zip(lo, hi, n, per):
        cell *= (b - a) / (m if p else m - 1)
        band = max(band, (b - a) / (m if p else m - 1))
    lines.append(f"{meta['game']}, {meta['n'].replace(',', ' x ')} grid, solved to t = {args.t_end:g} "
                 f"({stats['steps']} steps, {stats['seconds']:.2f} s)")
    lines.append("")
    lines.append("| t | fraction of the grid with V <= 0 | its size (nodes x cell) | max abs change of V since the previous t "
                 f"| the same where abs V <= {band:.3g} (the largest spacing) |")
    lines.append("|---|---|---|---|---|")
    prev = None
    for t in sorted(vals):
        v = vals[t]
        inside = sum(1 for x in v if x <= 0)
        change = near = ""
        if prev is not None:
            change = f"{max(abs(a - b) for a, b in zip(v, prev)):.4f}"
            near = f"{max((abs(a - b) for a, b in zip(v, prev) if abs(a) <= band), default=0.0):.4f}"
        lines.append(f"| {t:g} | {inside / len(v):.4f} | {inside * cell:.3f} | {change} | {near} |")
        prev = v
    if args.modes:
        (target, _), _ = solve(with_key(text, "mode", "brt_target"), tmp, "target", [])
        a, b = vals[max(vals)], target[max(target)]
        diff = max(abs(x - y) for x, y in zip(a, b))
        sign = sum(1 for x, y in zip(a, b) if (x <= 0) != (y <= 0))
        lines.append("")
        lines.append(f"brt against brt_target at t = {args.t_end:g}: max abs difference of V {diff:.4f}, "
                     f"nodes on opposite sides of 0: {sign} of {len(a)}")
print("\n".join(lines))
if args.markdown:
    with open(args.markdown, "a") as f:
        f.write("\n".join(lines) + "\n")
