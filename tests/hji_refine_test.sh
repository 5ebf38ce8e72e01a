#!/usr/bin/env bash
# bench/hji_signs.py (the sign-agreement measure of docs/neural.md) and bench/hji_refine.py (a grid's
# refinement study, a network against each grid) at a reduced size (pursuit2d, seconds):
# - the measure on made-up arrays whose answer is counted by hand: the near mask (a neighbour along an
#   axis of the other sign, a periodic axis wrapping), the agreement split by side, the mean |dV| on
#   the near nodes; common_nodes (a strided view only when nested); interp exact at nodes, linear
#   between;
# - the script on a value file against itself (100 %, 0 near the zero set), a file of another grid
#   refused (one line, exit 2);
# - hji_refine.py on pursuit2d at 11, 21, 41 with a small network: the finest is the reference, the
#   21 grid's signs agree with 41's at the common nodes (pursuit2d's grid converges), the network's
#   table has a row per grid.
#   usage: hji_refine_test.sh path/to/difgames repo_root
. "$(dirname "$0")/lib.sh"
cd "$ROOT" || exit 1
PY=/usr/bin/python3

$PY - <<'PY' && ok "hji_signs: near mask, agreement, common nodes, interp on made-up arrays" || bad "hji_signs on made-up arrays"
import sys
sys.path.insert(0, "bench")
import numpy as np
import hji_signs as s
# 1-D: signs + + - - + ; edges crossing: 1-2, 3-4 -> near nodes 1, 2, 3, 4; node 0 far
v = np.array([1.0, 0.5, -0.5, -1.0, 2.0])
assert s.near_zero_set(v, [0]).tolist() == [False, True, True, True, True]
# periodic: node 0 (+) neighbours node 4 (+): still far; make node 4 negative: then 0 is near
w = np.array([1.0, 2.0, 3.0, 2.0, -1.0])
assert s.near_zero_set(w, [0]).tolist() == [False, False, False, True, True]
assert s.near_zero_set(w, [1]).tolist() == [True, False, False, True, True]
# 2-D: a 4 x 4 reference negative in the corner (0, 0) only; near: (0,0), (0,1), (1,0)
ref = np.ones((4, 4)); ref[0, 0] = -1.0
other = ref.copy(); other[3, 3] = -2.0; other[2, 3] = -0.5; other[0, 1] = 0.75
a = s.agreement(ref, other, [0, 0])
assert (a["nodes"], a["near"], a["kept"]) == (16, 3, 13), a
assert (a["ref_safe_other_unsafe"], a["ref_unsafe_other_safe"], a["agree"]) == (2, 0, 11), a
assert abs(a["agreement"] - 11 / 13) < 1e-12 and abs(a["near_mean_abs"] - 0.25 / 3) < 1e-12, a
assert abs(a["near_max_abs"] - 0.25) < 1e-12 and a["ref_inside"] == 1 / 16 and a["other_inside"] == 3 / 16, a
b = s.agreement(other, ref, [0, 0])   # the other way round: the near mask is the first argument's
assert (b["near"], b["kept"], b["agree"]) == (8, 8, 8), b            # (3,3), (2,3) and their neighbours near
# common nodes: 9 nodes nest 5 (stride 2) and 3 (stride 4), not 4
mf = {"lo": [0.0], "hi": [1.0], "n": [9], "periodic": [0]}
fine = np.arange(9.0)
assert s.common_nodes(fine, mf, dict(mf, n=[5])).tolist() == [0, 2, 4, 6, 8]
assert s.common_nodes(fine, mf, dict(mf, n=[3])).tolist() == [0, 4, 8]
assert s.common_nodes(fine, mf, dict(mf, n=[4])) is None
assert s.common_nodes(fine, mf, dict(mf, hi=[2.0], n=[5])) is None
# interp: V = 3 x + 2 y on a 2-D grid, exact everywhere (multilinear reproduces it)
m2 = {"lo": [-1.0, 0.0], "hi": [1.0, 2.0], "n": [5, 3], "periodic": [0, 0]}
X, Y = np.meshgrid(np.linspace(-1, 1, 5), np.linspace(0, 2, 3), indexing="ij")
g = 3 * X + 2 * Y
for p in ([-1.0, 0.0], [0.5, 1.0], [0.3, 1.7], [1.0, 2.0]):
    assert abs(s.interp(g, m2, p) - (3 * p[0] + 2 * p[1])) < 1e-12, p
PY

P=$(cfg p "game: pursuit2d\nmode: brt\nt_end: 1.0\ngrid:\n  min: [-2, -2]\n  max: [2, 2]\n  n: [41, 41]\nlearn: {hidden: [32, 32], points: 256, iterations: 200, pretrain: 20, curriculum: 100, lr: 0.001, seed: 1}\n")
"$DG" hji solve --config "$P" --out "$T/V41.safetensors" --slices 1 --threads 1 >/dev/null 2>&1 || bad "hji solve"
$PY bench/hji_signs.py "$T/V41.safetensors" "$T/V41.safetensors" >"$T/self.json" 2>"$T/self.err" \
    && $PY -c 'import json, sys; r = json.load(open(sys.argv[1])); sys.exit(0 if r["agreement"] == 1 and r["near_mean_abs"] == 0 and r["near"] > 0 and r["kept"] + r["near"] == 41 * 41 else 1)' "$T/self.json" \
    && ok "hji_signs.py: a value against itself, 100 % and 0 near the zero set" || bad "hji_signs.py against itself: $(cat "$T/self.json" "$T/self.err")"
sed 's/n: \[41, 41\]/n: [21, 21]/' "$P" >"$T/p21.yaml"
"$DG" hji solve --config "$T/p21.yaml" --out "$T/V21.safetensors" --slices 1 --threads 1 >/dev/null 2>&1 || bad "hji solve 21"
$PY bench/hji_signs.py "$T/V41.safetensors" "$T/V21.safetensors" >"$T/o.out" 2>"$T/o.err"
rc=$?
[ $rc -eq 2 ] && [ ! -s "$T/o.out" ] && [ "$(wc -l <"$T/o.err")" -eq 1 ] && grep -q "V21.safetensors: its grid's n \[21, 21\]" "$T/o.err" \
    && ok "hji_signs.py: two grids refused, one line naming the file and the key, exit 2" || bad "hji_signs.py two grids: rc $rc $(cat "$T/o.err")"
# the other way round: the finer file holds every node of the coarser one, so it is compared there
$PY bench/hji_signs.py "$T/V21.safetensors" "$T/V41.safetensors" >"$T/f.json" 2>"$T/f.err" \
    && $PY -c 'import json, sys; r = json.load(open(sys.argv[1])); sys.exit(0 if r["kept"] + r["near"] == 21 * 21 and r["agreement"] > 0.9 else 1)' "$T/f.json" \
    && ok "hji_signs.py: a finer grid compared at the coarser grid's nodes" || bad "hji_signs.py finer grid: $(cat "$T/f.json" "$T/f.err")"

"$DG" hji learn --config "$P" --out "$T/net" --quiet >/dev/null 2>"$T/l.err" || bad "hji learn: $(tail -1 "$T/l.err")"
$PY bench/hji_refine.py --difgames "$DG" --config "$P" --n 11,21,41 --states "1,0;0,0.5;-1.5,1.5" --net "$T/net/value.safetensors" \
    --dir "$T/refine" --markdown "$T/table.md" >"$T/r.out" 2>"$T/r.err" || bad "hji_refine.py: $(tail -2 "$T/r.err")"
$PY - "$T/table.md" <<'PY' && ok "hji_refine.py: the finest the reference, 21's signs 41's at the common nodes, a network row per grid" \
    || bad "hji_refine.py's tables: $(cat "$T/r.out")"
import sys
rows = [r.split("|")[1:-1] for r in open(sys.argv[1]).read().splitlines() if r.startswith("| ") and r[2].isdigit()]
grid, net = rows[:3], rows[3:]
assert [r[0].strip() for r in grid] == ["11", "21", "41"] and "(reference)" in grid[2][5], grid
agree = float(grid[1][5].split("%")[0])
assert 97 <= agree <= 100, grid[1]
assert len(grid[0]) == 8 + 3 and len(net) == 3 and len(net[0]) == 5 + 3, rows
assert [r[0].strip() for r in net] == ["11", "21", "41"] and all("%" in r[1] for r in net), net
assert float(grid[2][8]) > 0 and float(grid[2][9]) < 0, grid[2]   # V(1, 0) > 0 outside the tube, V(0, 0.5) < 0 inside
PY
finish
