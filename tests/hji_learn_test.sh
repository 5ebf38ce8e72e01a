#!/usr/bin/env bash
# difgames hji learn and hji tabulate end to end at a tiny size (seconds):
# - learn on pursuit2d writes value.safetensors and metrics.csv (a row per iteration, the curriculum's
#   tau_max reaching t_end), prints a JSON line; the same config twice gives the same file's bytes;
# - tabulate writes a value file that hji plot draws, the learned zero set near the exact one;
# - learn.precision: f64 trains in the command's double copy: its network says f64, the same seed gives
#   the same bytes (not f32's), tabulate evaluates it in double, it learns as f32 does, --resume works;
# - --bench prints one JSON line {ms_per_iteration, gflops, ...} and writes nothing;
# - refusals, one line and exit 2 each: an unknown learn key, learn.points 0, a bad activation,
#   --out missing, a network of another game, a file that is not a network, learn.precision f16, a
#   network whose metadata says precision f16; hji solve, tabulate and play of an 8-D game.
# - an 8-D game (its grid 2.6e9 nodes) is learned under a 2 GB address-space limit, --bench too; so is
#   collision9d (9-D), and hji solve refuses it.
# (A game given by a generic Hamiltonian has no tape form, but no config makes one: test_hji_learn_loop
# checks that refusal in the library.)
#   usage: hji_learn_test.sh path/to/difgames repo_root
. "$(dirname "$0")/lib.sh"
cd "$ROOT" || exit 1
PY=/usr/bin/python3
json() { $PY -c 'import json, sys; r = json.loads(open(sys.argv[1]).read().splitlines()[-1]); v = eval("(" + sys.argv[2] + ")"); print(v); sys.exit(0 if v else 1)' "$1" "$2"; }

P=$(cfg p "game: pursuit2d\nmode: brt\nt_end: 1.0\ngrid: {min: [-2, -2], max: [2, 2], n: [41, 41]}\nlearn: {hidden: [32, 32], points: 256, iterations: 300, pretrain: 30, curriculum: 150, lr: 0.001, seed: 1}\n")
"$DG" hji learn --config "$P" --out "$T/run" --quiet >"$T/l.json" 2>"$T/l.err" \
    && json "$T/l.json" 'r["game"] == "pursuit2d" and r["iterations"] == 300 and r["ms_per_iteration"] > 0' >/dev/null \
    && ok "hji learn: exit 0, its JSON line" || bad "hji learn: $(tail -2 "$T/l.err") $(cat "$T/l.json")"
[ -s "$T/run/value.safetensors" ] && [ "$(wc -l <"$T/run/metrics.csv")" -eq 301 ] \
    && head -1 "$T/run/metrics.csv" | grep -qx 'iteration,loss,residual,boundary,tau_max,seconds' \
    && [ "$(tail -1 "$T/run/metrics.csv" | cut -d, -f5)" = 1 ] && [ "$(sed -n 2p "$T/run/metrics.csv" | cut -d, -f5)" = 0 ] \
    && ok "value.safetensors; metrics.csv: a row per iteration, tau_max from 0 to t_end" \
    || bad "outputs: $(ls "$T/run") $(head -2 "$T/run/metrics.csv")"
"$DG" hji learn --config "$P" --out "$T/run2" --quiet >/dev/null 2>&1 && cmp -s "$T/run/value.safetensors" "$T/run2/value.safetensors" \
    && ok "the same config twice: the same network, byte for byte" || bad "two runs differ"
# learn.threads: 2 shards on 1 thread and on 2, the same bytes (--threads overrides the key)
OMP_NUM_THREADS=1 "$DG" hji learn --config "$P" --out "$T/s1" --threads 2 --iterations 40 --quiet >/dev/null 2>&1 \
    && OMP_NUM_THREADS=2 "$DG" hji learn --config "$P" --out "$T/s2" --threads 2 --iterations 40 --quiet >/dev/null 2>&1 \
    && cmp -s "$T/s1/value.safetensors" "$T/s2/value.safetensors" \
    && ok "--threads 2: the same network on 1 thread and on 2" || bad "--threads 2: 1 and 2 threads differ"
# --resume: 40 iterations straight == 20, then resumed to 40 (2 shards, resume files every 7 iterations)
R=$(cfg r "game: pursuit2d\nmode: brt\nt_end: 1.0\ngrid: {min: [-2, -2], max: [2, 2], n: [41, 41]}\nlearn: {hidden: [32, 32], points: 256, iterations: 40, pretrain: 10, curriculum: 20, lr: 0.001, seed: 1, threads: 2, resume_every: 7}\n")
"$DG" hji learn --config "$R" --out "$T/straight" --quiet >/dev/null 2>&1 \
    && "$DG" hji learn --config "$R" --out "$T/half" --iterations 20 --quiet >/dev/null 2>&1 \
    && "$DG" hji learn --resume "$T/half" --iterations 40 --quiet >"$T/res.json" 2>"$T/res.err" \
    && cmp -s "$T/straight/value.safetensors" "$T/half/value.safetensors" \
    && cmp -s <(cut -d, -f1-5 "$T/straight/metrics.csv") <(cut -d, -f1-5 "$T/half/metrics.csv") \
    && [ "$(wc -l <"$T/half/metrics.csv")" -eq 41 ] \
    && ok "--resume: 20 then 20 more, the same network and metrics.csv rows as 40 straight" \
    || bad "--resume: $(tail -2 "$T/res.err") $(diff <(cut -d, -f1-5 "$T/straight/metrics.csv") <(cut -d, -f1-5 "$T/half/metrics.csv") | head -4)"
"$DG" hji tabulate --value "$T/run/value.safetensors" --config "$P" --out "$T/V.safetensors" 2>"$T/t.err" \
    && "$DG" hji plot --value "$T/V.safetensors" --out "$T/V.png" 2>>"$T/t.err" && [ -s "$T/V.png" ] \
    && ok "hji tabulate, then hji plot reads its file" || bad "tabulate/plot: $(tail -2 "$T/t.err")"
# the learned zero set against the exact one, |x| = r + (v_p - v_e) t_end = 0.75, away from it
signs() { $PY - "$1" <<'PY'
import json, math, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n])
t = h["value"]
o0, o1 = t["data_offsets"]
fmt = "<%d%s" % ((o1 - o0) // (8 if t["dtype"] == "F64" else 4), "d" if t["dtype"] == "F64" else "f")
v = struct.unpack(fmt, b[8 + n + o0:8 + n + o1])
N = 41
good = tot = 0
for i in range(N):
    for j in range(N):
        x, y = -2 + 4 * i / (N - 1), -2 + 4 * j / (N - 1)
        d = math.hypot(x, y) - 0.75
        if abs(d) < 0.15: continue
        tot += 1
        good += (v[i * N + j] > 0) == (d > 0)
print("sign agreement %.4f over %d nodes" % (good / tot, tot))
assert good / tot > 0.97
PY
}
signs "$T/V.safetensors" && ok "tabulated V: its sign the exact value's on the nodes 0.15 from the zero set" || bad "tabulated V's signs"
# learn.precision: f64, the double copy of the command: its network says f64 (F64 weights), the same
# seed twice the same bytes, other bytes than f32's, tabulated (in double) and plotted, and it learns
P64=$(cfg p64 "game: pursuit2d\nmode: brt\nt_end: 1.0\ngrid: {min: [-2, -2], max: [2, 2], n: [41, 41]}\nlearn: {hidden: [32, 32], points: 256, iterations: 300, pretrain: 30, curriculum: 150, lr: 0.001, seed: 1, precision: f64}\n")
meta() { $PY -c 'import json, struct, sys; b = open(sys.argv[1], "rb").read(); h = json.loads(b[8:8 + struct.unpack("<Q", b[:8])[0]]); print(h["__metadata__"].get("precision"), sorted({t["dtype"] for k, t in h.items() if k != "__metadata__"}))' "$1"; }
"$DG" hji learn --config "$P64" --out "$T/r64" --quiet >"$T/l64.json" 2>"$T/l64.err" \
    && json "$T/l64.json" 'r["iterations"] == 300' >/dev/null && [ "$(meta "$T/r64/value.safetensors")" = "f64 ['F64']" ] \
    && [ "$(meta "$T/run/value.safetensors")" = "f32 ['F32']" ] \
    && ok "learn.precision: f64: a network of F64 weights, its metadata precision f64 (f32's says f32)" \
    || bad "learn.precision f64: $(tail -2 "$T/l64.err") $(meta "$T/r64/value.safetensors")"
"$DG" hji learn --config "$P64" --out "$T/r64b" --quiet >/dev/null 2>&1 && cmp -s "$T/r64/value.safetensors" "$T/r64b/value.safetensors" \
    && ! cmp -s "$T/r64/value.safetensors" "$T/run/value.safetensors" \
    && ok "f64: the same seed twice, the same bytes; other bytes than f32's" || bad "f64: two runs differ, or equal f32's"
"$DG" hji tabulate --value "$T/r64/value.safetensors" --config "$P" --out "$T/V64.safetensors" 2>"$T/t64.err" \
    && "$DG" hji plot --value "$T/V64.safetensors" --out "$T/V64.png" 2>>"$T/t64.err" && [ -s "$T/V64.png" ] \
    && ! cmp -s "$T/V64.safetensors" "$T/V.safetensors" \
    && ok "f64: hji tabulate and hji plot; values other than f32's" || bad "f64 tabulate/plot: $(tail -2 "$T/t64.err")"
# evaluated in double: values a float evaluation (rounded to float, then widened) could not give
$PY -c 'import json, struct, sys; b = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", b[:8])[0]; t = json.loads(b[8:8 + n])["value"]; o0, o1 = t["data_offsets"]; v = struct.unpack("<%dd" % ((o1 - o0) // 8), b[8 + n + o0:8 + n + o1]); sys.exit(0 if t["dtype"] == "F64" and sum(x != struct.unpack("<f", struct.pack("<f", x))[0] for x in v) > len(v) // 2 else 1)' \
    "$T/V64.safetensors" && ok "f64 tabulate: the network evaluated in double" || bad "f64 tabulate: values of a float evaluation"
signs "$T/V64.safetensors" && ok "f64 tabulated V: its sign the exact value's on the nodes 0.15 from the zero set" \
    || bad "f64 tabulated V's signs"
# --resume of an f64 run (the stored config says f64: the double copy restores it): the same bytes
R64=$(cfg r64 "game: pursuit2d\nmode: brt\nt_end: 1.0\ngrid: {min: [-2, -2], max: [2, 2], n: [41, 41]}\nlearn: {hidden: [32, 32], points: 256, iterations: 40, pretrain: 10, curriculum: 20, lr: 0.001, seed: 1, threads: 2, resume_every: 7, precision: f64}\n")
"$DG" hji learn --config "$R64" --out "$T/s64" --quiet >/dev/null 2>&1 \
    && "$DG" hji learn --config "$R64" --out "$T/h64" --iterations 20 --quiet >/dev/null 2>&1 \
    && "$DG" hji learn --resume "$T/h64" --iterations 40 --quiet >/dev/null 2>"$T/res64.err" \
    && cmp -s "$T/s64/value.safetensors" "$T/h64/value.safetensors" && [ "$(meta "$T/h64/value.safetensors")" = "f64 ['F64']" ] \
    && ok "f64 --resume: 20 then 20 more, the same network as 40 straight" || bad "f64 --resume: $(tail -2 "$T/res64.err")"
# a network whose precision is neither f32 nor f64: refused (below)
$PY -c 'import sys; b = open(sys.argv[1], "rb").read(); open(sys.argv[2], "wb").write(b.replace(b"\"precision\":\"f32\"", b"\"precision\":\"f16\""))' \
    "$T/run/value.safetensors" "$T/f16.safetensors"
"$DG" hji learn --config "$P" --bench --iterations 5 --points 128 >"$T/b.json" 2>"$T/b.err" \
    && [ "$(wc -l <"$T/b.json")" -eq 1 ] && json "$T/b.json" 'r["ms_per_iteration"] > 0 and r["cpu_ms_per_iteration"] > 0 and r["gflops"] > 0 and r["points"] == 128' >/dev/null \
    && ok "--bench: one JSON line" || bad "--bench: $(cat "$T/b.json" "$T/b.err")"

# more than six state dimensions: an 8-D model game (four simple-motion pairs and four axes that integrate
# them) whose grid.n, 15 an axis, would be 2.6e9 nodes (20 GB an array): hji learn and --bench take it under
# a 2 GB address-space limit (no array of its nodes), the grid's commands refuse it (below)
D8=$(cfg d8 "game: model\nmodel:\n  name: drift8\n  constants: {vp: 1.0, ve: 0.5, radius: 0.5}\n  state: {p1: [-1, 1], p2: [-1, 1], p3: [-1, 1], p4: [-1, 1], p5: [-1, 1], p6: [-1, 1], p7: [-1, 1], p8: [-1, 1]}\n  inputs:\n    a: {dim: 4, lo: -1, hi: 1, role: min}\n    b: {dim: 4, lo: -1, hi: 1, role: max}\n  dynamics:\n    p1: ve*b1 - vp*a1\n    p2: ve*b2 - vp*a2\n    p3: ve*b3 - vp*a3\n    p4: ve*b4 - vp*a4\n    p5: p1\n    p6: p2\n    p7: p3\n    p8: p4\n  target: sqrt(p1^2 + p2^2 + p3^2 + p4^2 + p5^2 + p6^2 + p7^2 + p8^2) - radius\nt_end: 0.5\nmode: brt\ngrid:\n  n: [15, 15, 15, 15, 15, 15, 15, 15]\nlearn: {hidden: [16, 16], points: 64, iterations: 5, pretrain: 1, curriculum: 2, lr: 0.001}\n")
# (a sanitizer build reserves terabytes of shadow address space and cannot start under any such
# limit, as hostile_memory_test.sh finds: there the limit is left off and the run itself checked)
LIM=2000000
( ulimit -v "$LIM"; exec "$DG" games ) >/dev/null 2>&1 || LIM=unlimited
( ulimit -v "$LIM"; exec "$DG" hji learn --config "$D8" --out "$T/d8" --quiet ) >"$T/d8.json" 2>"$T/d8.err" \
    && json "$T/d8.json" 'r["game"] == "drift8" and r["iterations"] == 5' >/dev/null && [ -s "$T/d8/value.safetensors" ] \
    && ( ulimit -v "$LIM"; exec "$DG" hji learn --config "$D8" --bench ) >"$T/d8b.json" 2>>"$T/d8.err" \
    && json "$T/d8b.json" 'r["ms_per_iteration"] > 0' >/dev/null \
    && ok "an 8-D game (2.6e9 grid nodes): hji learn and --bench (address space limit: $LIM kB)" \
    || bad "8-D learn: $(tail -2 "$T/d8.err") $(cat "$T/d8.json")"

# collision9d (three Dubins aircraft, 9-D; configs/hji/collision9d.yaml): 5 iterations of a tiny network, and
# --bench, as shipped but smaller; hji solve refuses it (below)
C9=$T/collision9d.yaml
sed 's/hidden: \[128, 128, 128\]/hidden: [16, 16]/' configs/hji/collision9d.yaml >"$C9"
grep -q 'hidden: \[16, 16\]' "$C9" || bad "collision9d: no learn.hidden line in configs/hji/collision9d.yaml"
"$DG" hji learn --config $C9 --out "$T/c9" --iterations 5 --points 128 --quiet >"$T/c9.json" 2>"$T/c9.err" \
    && json "$T/c9.json" 'r["game"] == "collision9d" and r["iterations"] == 5 and r["loss"] > 0' >/dev/null \
    && [ "$(wc -l <"$T/c9/metrics.csv")" -eq 6 ] \
    && "$DG" hji learn --config $C9 --bench --iterations 3 --points 128 >"$T/c9b.json" 2>>"$T/c9.err" \
    && [ "$(wc -l <"$T/c9b.json")" -eq 1 ] && json "$T/c9b.json" 'r["ms_per_iteration"] > 0 and r["gflops"] > 0' >/dev/null \
    && ok "collision9d (9-D): hji learn of 5 iterations, --bench's JSON line" \
    || bad "collision9d: $(tail -2 "$T/c9.err") $(cat "$T/c9.json" "$T/c9b.json" 2>/dev/null)"

BADKEY=$(cfg bk "game: pursuit2d\nlearn: {pointz: 10}\n")
ZERO=$(cfg z "game: pursuit2d\nlearn: {points: 0}\n")
ACT=$(cfg a "game: pursuit2d\nlearn: {activation: relu}\n")
AIR=$(cfg air "game: air3d\ngrid: {n: [11, 11, 11]}\n")
mkdir -p "$T/outs"
OUTS=$T/outs run_rows "" "" \
    "unknown learn key|learn.pointz|hji learn --config $BADKEY --out $T/outs/r" \
    "learn.points 0|learn.points|hji learn --config $ZERO --out $T/outs/r" \
    "learn.activation relu|relu|hji learn --config $ACT --out $T/outs/r" \
    "no --out|--out|hji learn --config $P" \
    "--points 0|--points|hji learn --config $P --out $T/outs/r --points 0" \
    "--resume and --config|--resume|hji learn --resume $T/half --config $P" \
    "--resume of a folder without one|resume.safetensors|hji learn --resume $T/outs" \
    "another game's network|pursuit2d|hji tabulate --value $T/run/value.safetensors --config $AIR --out $T/outs/V.safetensors" \
    "a value file as a network|not a value network|hji tabulate --value $T/V.safetensors --config $P --out $T/outs/V.safetensors" \
    "learn.precision f16|learn.precision|hji learn --config $(cfg pr "game: pursuit2d\nlearn: {precision: f16}\n") --out $T/outs/r" \
    "a network of precision f16|bad metadata|hji tabulate --value $T/f16.safetensors --config $P --out $T/outs/V.safetensors" \
    "hji solve of 8 dimensions|d8.yaml:22: key 'grid.n': 8 state dimensions: the grid solver takes at most 6|hji solve --config $D8 --out $T/outs/V.safetensors" \
    "hji tabulate of 8 dimensions|d8.yaml:22: key 'grid.n': 8 state dimensions|hji tabulate --value $T/d8/value.safetensors --config $D8 --out $T/outs/V.safetensors" \
    "hji play of 8 dimensions, a grid's value|is not a network of hji learn: drift8 has 8 state dimensions and no grid|hji play --config $D8 --value $T/V.safetensors --from 0,0,0,0,0,0,0,0 --out $T/outs/p.csv" \
    "hji solve of collision9d|collision9d.yaml:15: key 'grid': 9 state dimensions: the grid solver takes at most 6|hji solve --config $C9 --out $T/outs/V.safetensors"
# a config that also learns its value is still a game for certify --hji (its learn.* keys read, not refused)
D="$T/d.yaml"
{ cat configs/hji/duel_simple_time.yaml; echo "learn: {hidden: [16], iterations: 10}"; } >"$D"
"$DG" train --config configs/duel_simple.yaml --epochs 1 --out "$T/ds" --quiet >/dev/null 2>&1 \
    && "$DG" certify --config configs/duel_simple.yaml --ckpt "$T/ds/final.safetensors" --hji "$D" --no-exploit --episodes 4 \
        >"$T/c.json" 2>"$T/c.err" && json "$T/c.json" 'r["hji_game"] == "pursuit2d"' >/dev/null \
    && ok "certify --hji takes a config with a learn: section" || bad "certify --hji with learn: $(tail -1 "$T/c.err")"
finish
