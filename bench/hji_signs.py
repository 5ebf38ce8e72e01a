"""Sign agreement of two values on one grid: the measure of docs/neural.md (issue 27, section 2).

Given a reference value V_ref (a grid value of `hji solve`) and another V (a network tabulated on the
same grid by `hji tabulate`, or another grid's value restricted to common nodes), both as
difgames-hji-value files (safetensors: a u64 header length, a JSON header, the data):
- a node is *near* the reference's zero set when a neighbour along some axis has the other sign
  (V_ref > 0 on one side, not on the other; a periodic axis wraps), the same rule as
  tests/test_hji_learn_loop.c and tests/test_certify_sampling.c;
- `agreement` is the fraction of the other nodes (more than one cell from the zero set) where
  (V > 0) == (V_ref > 0), with the disagreements split by side: `ref_safe_other_unsafe` counts
  the nodes the reference calls safe (V_ref > 0) and the other unsafe (a tube too large), and
  `ref_unsafe_other_safe` the other way;
- `near_mean_abs` is the mean |V - V_ref| on the near nodes (how far the two are where the boundary
  is read), `near_max_abs` its largest.

The arrays are read by np.memmap (a 25^6 value is 2 GB as float64), and the near mask is built one
axis at a time on boolean arrays, so the peak memory is a few bytes a node beyond the files' pages.

As a script:  python3 bench/hji_signs.py GRID.safetensors OTHER.safetensors
prints one JSON line; OTHER on a finer grid holding GRID's nodes (a refinement) is compared at them;
two files of other grids are refused (one line, exit 2).
"""
import json
import struct
import sys

import numpy as np

_DTYPES = {"F64": np.float64, "F32": np.float32}


def read_value(path, name="value"):
    """(array with the grid's shape, read-only memmap; metadata dict with lo, hi (lists of float), n,
    periodic (lists of int) and the file's other keys as strings) of a difgames-hji-value file."""
    with open(path, "rb") as f:
        (hlen,) = struct.unpack("<Q", f.read(8))
        head = json.loads(f.read(hlen))
    meta = dict(head.pop("__metadata__", {}) or {})
    if name not in head:
        raise ValueError(f"{path}: no tensor '{name}' (not a value file of hji solve / hji tabulate?)")
    e = head[name]
    if e["dtype"] not in _DTYPES:
        raise ValueError(f"{path}: tensor '{name}' is {e['dtype']}, not F64 or F32")
    for k in ("lo", "hi", "n"):
        if k not in meta:
            raise ValueError(f"{path}: metadata has no '{k}' (not a value file of hji solve / hji tabulate?)")
    meta["lo"] = [float(x) for x in meta["lo"].split(",")]
    meta["hi"] = [float(x) for x in meta["hi"].split(",")]
    meta["n"] = [int(x) for x in meta["n"].split(",")]
    per = meta.get("periodic", "")
    meta["periodic"] = [int(x) for x in per.split(",")] if per else [0] * len(meta["n"])
    shape = tuple(int(s) for s in e["shape"])
    if list(shape) != meta["n"]:
        raise ValueError(f"{path}: tensor '{name}' has shape {list(shape)}, the metadata says n {meta['n']}")
    a, b = e["data_offsets"]
    dt = np.dtype(_DTYPES[e["dtype"]]).newbyteorder("<")
    if b - a != int(np.prod(shape)) * dt.itemsize:
        raise ValueError(f"{path}: tensor '{name}' offsets {a}..{b} do not fit its shape")
    v = np.memmap(path, dtype=dt, mode="r", offset=8 + hlen + a, shape=shape)
    return v, meta


def near_zero_set(v, periodic):
    """Boolean array of v's shape: True at a node with a neighbour along some axis of the other sign
    (v > 0 against v <= 0); an axis with periodic[k] set wraps (its last node neighbours its first)."""
    pos = np.asarray(v) > 0
    near = np.zeros(pos.shape, dtype=bool)
    for k in range(pos.ndim):
        if pos.shape[k] < 2:
            continue
        lo = [slice(None)] * pos.ndim
        hi = [slice(None)] * pos.ndim
        lo[k], hi[k] = slice(0, -1), slice(1, None)
        lo, hi = tuple(lo), tuple(hi)
        d = pos[lo] != pos[hi]           # the edge between node i and i + 1 crosses the zero set
        near[lo] |= d
        near[hi] |= d
        if periodic[k]:
            first = [slice(None)] * pos.ndim
            last = [slice(None)] * pos.ndim
            first[k], last[k] = 0, -1
            first, last = tuple(first), tuple(last)
            d = pos[first] != pos[last]
            near[first] |= d
            near[last] |= d
    return near


def agreement(v_ref, v, periodic):
    """Dict of the measure (module docstring) of v against v_ref, two arrays of one shape:
    nodes, near (within one cell of v_ref's zero set), kept (the rest), agree (of kept),
    agreement (agree / kept), ref_safe_other_unsafe, ref_unsafe_other_safe, near_mean_abs,
    near_max_abs, and the fractions of all nodes with V <= 0 in each (ref_inside, other_inside)."""
    v_ref = np.asarray(v_ref)
    v = np.asarray(v)
    if v_ref.shape != v.shape:
        raise ValueError(f"shapes differ: {v_ref.shape} and {v.shape}")
    near = near_zero_set(v_ref, periodic)
    pr = v_ref > 0
    po = v > 0
    far = ~near
    kept = int(far.sum())
    ref_safe_other_unsafe = int((far & pr & ~po).sum())
    ref_unsafe_other_safe = int((far & ~pr & po).sum())
    agree = kept - ref_safe_other_unsafe - ref_unsafe_other_safe
    nn = int(near.sum())
    if nn:
        diff = np.abs(v[near].astype(np.float64) - v_ref[near].astype(np.float64))
        near_mean, near_max = float(diff.mean()), float(diff.max())
    else:
        near_mean = near_max = float("nan")
    return {
        "nodes": int(v_ref.size), "near": nn, "kept": kept, "agree": agree,
        "agreement": agree / kept if kept else float("nan"),
        "ref_safe_other_unsafe": ref_safe_other_unsafe, "ref_unsafe_other_safe": ref_unsafe_other_safe,
        "near_mean_abs": near_mean, "near_max_abs": near_max,
        "ref_inside": float((~pr).sum()) / v_ref.size, "other_inside": float((~po).sum()) / v.size,
    }


def common_nodes(v_fine, meta_fine, meta_coarse):
    """v_fine restricted to the coarse grid's nodes (a strided view), when every coarse node is a fine
    node (the same box, n_fine - 1 a multiple of n_coarse - 1; n_fine a multiple of n_coarse on a
    periodic axis); None otherwise."""
    if meta_fine["lo"] != meta_coarse["lo"] or meta_fine["hi"] != meta_coarse["hi"] \
            or meta_fine["periodic"] != meta_coarse["periodic"]:
        return None
    idx = []
    for nf, nc, p in zip(meta_fine["n"], meta_coarse["n"], meta_fine["periodic"]):
        cells_f, cells_c = (nf, nc) if p else (nf - 1, nc - 1)
        if cells_c <= 0 or cells_f % cells_c:
            return None
        idx.append(slice(None, None, cells_f // cells_c))
    return np.asarray(v_fine)[tuple(idx)]


def interp(v, meta, x):
    """Multilinear interpolation of the grid value v (metadata meta) at the state x (a list, one
    entry an axis), clamped to the box; a periodic axis wraps."""
    v = np.asarray(v)
    lo_idx, w = [], []
    for k, xk in enumerate(x):
        lo, hi, n, p = meta["lo"][k], meta["hi"][k], meta["n"][k], meta["periodic"][k]
        h = (hi - lo) / (n if p else n - 1)
        s = (xk - lo) / h
        if p:
            s %= n
        else:
            s = min(max(s, 0.0), n - 1.0)
        i = min(int(np.floor(s)), n - 1 if p else n - 2)
        lo_idx.append(i)
        w.append(s - i)
    total = 0.0
    d = len(x)
    for corner in range(1 << d):
        wt, at = 1.0, []
        for k in range(d):
            b = (corner >> k) & 1
            wt *= w[k] if b else 1.0 - w[k]
            at.append((lo_idx[k] + b) % meta["n"][k])
        if wt:
            total += wt * float(v[tuple(at)])
    return total


def main(argv):
    """The script: prints agreement(GRID, OTHER) as one JSON line; exit 2 on bad input."""
    if len(argv) != 2:
        print("usage: python3 bench/hji_signs.py GRID.safetensors OTHER.safetensors (OTHER on GRID's grid, or on a "
              "finer one holding its nodes)", file=sys.stderr)
        return 2
    try:
        vr, mr = read_value(argv[0])
        vo, mo = read_value(argv[1])
    except (OSError, ValueError, KeyError, json.JSONDecodeError) as e:
        print(f"hji_signs: {e}", file=sys.stderr)
        return 2
    if mr["n"] != mo["n"]:  # a finer grid over the same box: compared at GRID's nodes, which are its nodes too
        sub = common_nodes(vo, mo, mr)
        if sub is not None:
            vo, mo = sub, dict(mo, n=list(mr["n"]))
    for k in ("lo", "hi", "n", "periodic"):
        if mr[k] != mo[k]:
            print(f"hji_signs: {argv[1]}: its grid's {k} {mo[k]} is not {argv[0]}'s {mr[k]} (nor a finer grid "
                  f"holding its nodes)", file=sys.stderr)
            return 2
    r = agreement(vr, vo, mr["periodic"])
    r["grid"] = argv[0]
    r["other"] = argv[1]
    print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
