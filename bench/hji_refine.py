"""A grid value's own refinement study, and a network against each grid (issue 27, section 2).

Solves an HJI config (configs/hji/*.yaml) at several resolutions (`grid.n` set to N on every axis,
nothing else changed) with `difgames hji solve --slices 1`, reads V at t_end from the value files
and prints a markdown table: for each N the nodes, steps, seconds, the fraction of nodes with
V <= 0, and against the finest grid at their common nodes (every node of an N whose N - 1 divides
the finest's: choose such N) the sign agreement of bench/hji_signs.py (nodes more than one coarse
cell from the finest's zero set; disagreements split by side) and the mean |V_N - V_finest| on the
nodes within one cell of it; then V at the --states (multilinear between nodes).

With --net NET (a network of `hji learn`), each grid's config tabulates it (`hji tabulate`) and a
second table gives the same measure of V_theta against that grid, on all its nodes, and V_theta at
the states (from its tabulation on the finest grid).

usage:
  python3 bench/hji_refine.py --config configs/hji/chase4d_open.yaml --n 11,16,21,31,61 \\
      --states "0.3,0,0,0;-0.6,0.6,0,0" [--net runs/hji/chase4d_open_nn/value.safetensors]
The value files stay in --dir (default runs/hji/refine, named CONFIG_N.safetensors with the solve's
JSON line in CONFIG_N.json); --reuse skips a solve (or a tabulation) whose files are there.
"""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hji_signs  # noqa: E402  (the measure, one definition)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def with_n(text, n, dims):
    """The config text with its grid's `n: [...]` line set to n on every one of dims axes."""
    pat = re.compile(r"^(\s+n:\s*)\[[^\]]*\]", re.M)
    if not pat.search(text):
        raise SystemExit("hji_refine: the config has no indented `n: [...]` line under grid:")
    return pat.sub(lambda m: m.group(1) + "[" + ", ".join([str(n)] * dims) + "]", text, count=1)


def dims_of(text):
    """The number of axes of the config's grid (its `n: [...]` list)."""
    m = re.search(r"^\s+n:\s*\[([^\]]*)\]", text, re.M)
    if not m:
        raise SystemExit("hji_refine: the config has no indented `n: [...]` line under grid:")
    return len([x for x in m.group(1).split(",") if x.strip()])


def run(cmd):
    """Runs cmd (a list), returns its last stdout line as JSON (None when it prints none)."""
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"hji_refine: {' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
    lines = [x for x in r.stdout.strip().splitlines() if x.startswith("{")]
    return json.loads(lines[-1]) if lines else None


def fmt_states(states):
    return ["(" + ", ".join(f"{x:g}" for x in s) + ")" for s in states]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--difgames", default=os.path.join(ROOT, "build", "difgames"))
    ap.add_argument("--config", required=True)
    ap.add_argument("--n", required=True, help="nodes an axis, comma-separated; the largest is the reference")
    ap.add_argument("--states", default="", help="states to print V at: 'x1,x2,...;x1,x2,...'")
    ap.add_argument("--net", help="a network of hji learn: tabulated on each grid and measured against it")
    ap.add_argument("--dir", default=os.path.join("runs", "hji", "refine"))
    ap.add_argument("--threads", default="1", help="hji solve --threads")
    ap.add_argument("--reuse", action="store_true", help="skip a solve or tabulation whose files exist")
    ap.add_argument("--markdown", help="append the tables to this file")
    args = ap.parse_args()

    with open(args.config) as f:
        base = f.read()
    d = dims_of(base)
    ns = sorted({int(x) for x in args.n.split(",")})
    states = [[float(x) for x in s.split(",")] for s in args.states.split(";") if s.strip()]
    for s in states:
        if len(s) != d:
            raise SystemExit(f"hji_refine: --states: {s} has {len(s)} entries, the grid {d} axes")
    os.makedirs(args.dir, exist_ok=True)
    stem = os.path.splitext(os.path.basename(args.config))[0]

    grids = {}
    for n in ns:
        path = os.path.join(args.dir, f"{stem}_{n}")
        with open(path + ".yaml", "w") as f:
            f.write(with_n(base, n, d))
        if not (args.reuse and os.path.exists(path + ".safetensors") and os.path.exists(path + ".json")):
            r = run([args.difgames, "hji", "solve", "--config", path + ".yaml", "--out", path + ".safetensors",
                     "--slices", "1", "--threads", args.threads])
            with open(path + ".json", "w") as f:
                f.write(json.dumps(r) + "\n")
            print(f"solved {stem} at {n}^{d}: {r['steps']} steps, {r['seconds']:.1f} s", file=sys.stderr)
        with open(path + ".json") as f:
            stats = json.loads(f.read())
        grids[n] = (path, stats) + hji_signs.read_value(path + ".safetensors")

    fine = ns[-1]
    _, _, vf, mf = grids[fine]
    names = fmt_states(states)
    out = [f"{stem} (t_end from {args.config}), V at t_end on N^{d} grids against the finest, {fine}^{d}:", ""]
    out.append("| N | nodes | steps | seconds | V <= 0 | sign agreement with the finest (common nodes > 1 cell from its zero set) "
               "| safe here, unsafe on the finest / the other way | mean (max) \\|V_N - V_finest\\| within 1 cell |"
               + "".join(f" V{s} |" for s in names))
    out.append("|" + "---|" * (8 + len(states)))
    for n in ns:
        path, stats, v, m = grids[n]
        inside = float((v <= 0).sum()) / v.size
        if n == fine:
            cmp_ = "(reference) | | "
        else:
            sub = hji_signs.common_nodes(vf, mf, m)
            if sub is None:
                cmp_ = f"(no common nodes: {fine - 1} is not a multiple of {n - 1}) | | "
            else:
                a = hji_signs.agreement(sub, v, m["periodic"])
                cmp_ = (f"{100 * a['agreement']:.2f} % of {a['kept']:,} | {a['ref_unsafe_other_safe']:,} / "
                        f"{a['ref_safe_other_unsafe']:,} | {a['near_mean_abs']:.4f} ({a['near_max_abs']:.3f})")
        vals = "".join(f" {hji_signs.interp(v, m, s):.4f} |" for s in states)
        out.append(f"| {n} | {v.size:,} | {stats['steps']} | {stats['seconds']:.1f} | {100 * inside:.2f} % | {cmp_} |{vals}")

    if args.net:
        out += ["", f"the network {args.net} tabulated on each grid, against that grid (all its nodes):", ""]
        out.append("| N | sign agreement (nodes > 1 cell from the grid's zero set) | grid safe, network unsafe / the other way "
                   "| mean (max) \\|V_theta - V_grid\\| within 1 cell | V_theta <= 0 |"
                   + "".join(f" V_theta{s} |" for s in names))
        out.append("|" + "---|" * (5 + len(states)))
        tab = {}
        for n in ns:
            path, stats, v, m = grids[n]
            tpath = path + "_net.safetensors"
            if not (args.reuse and os.path.exists(tpath)):
                run([args.difgames, "hji", "tabulate", "--value", args.net, "--config", path + ".yaml", "--out", tpath])
            tv, tm = hji_signs.read_value(tpath)
            tab[n] = (tv, tm)
            a = hji_signs.agreement(v, tv, m["periodic"])
            tab[n] += (a,)
        tvf, tmf, _ = tab[fine]
        vals = "".join(f" {hji_signs.interp(tvf, tmf, s):.4f} |" for s in states)
        blank = " |" * len(states)
        for n in ns:
            a = tab[n][2]
            out.append(f"| {n} | {100 * a['agreement']:.2f} % of {a['kept']:,} | {a['ref_safe_other_unsafe']:,} / "
                       f"{a['ref_unsafe_other_safe']:,} | {a['near_mean_abs']:.4f} ({a['near_max_abs']:.3f}) | "
                       f"{100 * a['other_inside']:.2f} % |{vals if n == fine else blank}")
    print("\n".join(out))
    if args.markdown:
        with open(args.markdown, "a") as f:
            f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
