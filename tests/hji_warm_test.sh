#!/usr/bin/env bash
# hji solve --warm V0 (docs/hji.md, warm starts), the command end to end:
# - a stationary time to reach whose obstacle moved by one cell, started from the old value: it
#   converges in fewer iterations than cold, to the cold value within 1e-6; from its own value
#   file it stops within a tenth of the cold iterations; the JSON says warm_t;
# - a finite-horizon tube goes on from its own value at an earlier t_end: the cold file's value;
# - refusals, one line naming the file and exit 2 each, nothing written: another grid, another
#   game, a finite horizon from another problem (the obstacle moved), from a longer horizon, from a
#   stationary value; under no circumstances a half-written --out.
#   usage: hji_warm_test.sh path/to/difgames repo_root
. "$(dirname "$0")/lib.sh"
cd "$ROOT" || exit 1
PY=/usr/bin/python3
jget() { $PY -c 'import json, sys; r = json.loads(open(sys.argv[1]).read().splitlines()[-1]); print(r.get(sys.argv[2]))' "$1" "$2"; }
# the largest difference of two value files' 'value' tensors (float64)
vdiff() { $PY - "$1" "$2" <<'PYEOF'
import json, struct, sys
def load(p):
    raw = open(p, "rb").read(); n = struct.unpack("<Q", raw[:8])[0]; h = json.loads(raw[8:8 + n]); t = h["value"]
    b, e = t["data_offsets"]; d = raw[8 + n + b:8 + n + e]
    return struct.unpack("<%dd" % (len(d) // 8), d)
a, b = load(sys.argv[1]), load(sys.argv[2])
print("%.3g" % max(abs(x - y) for x, y in zip(a, b)))
PYEOF
}
TIME="game: pursuit2d\npayoff: time\nt_end: 6\nstationary: true\naccuracy: low\ngrid: {n: [41, 41]}\nsolver: {tol: 1.0e-8, method: sweep, threads: 1}\nobstacles:\n  - {shape: box, min: [%s, -0.5], max: [%s, 0.5]}\n"
A=$(cfg a "$(printf "$TIME" 0.5 1.0)")
B=$(cfg b "$(printf "$TIME" 0.6 1.1)")   # the obstacle one cell (0.1) along x1
for c in a b; do
    "$DG" hji solve --config "$T/$c.yaml" --out "$T/$c.safetensors" >"$T/$c.json" 2>"$T/$c.err" || bad "solve $c: $(tail -1 "$T/$c.err")"
done
"$DG" hji solve --config "$B" --out "$T/bw.safetensors" --warm "$T/a.safetensors" >"$T/bw.json" 2>"$T/bw.err" \
    || bad "solve b --warm a: $(tail -1 "$T/bw.err")"
"$DG" hji solve --config "$B" --out "$T/bs.safetensors" --warm "$T/b.safetensors" >"$T/bs.json" 2>"$T/bs.err" \
    || bad "solve b --warm b: $(tail -1 "$T/bs.err")"
ic=$(jget "$T/b.json" iterations) iw=$(jget "$T/bw.json" iterations) is=$(jget "$T/bs.json" iterations)
dw=$(vdiff "$T/b.safetensors" "$T/bw.safetensors") ds=$(vdiff "$T/b.safetensors" "$T/bs.safetensors")
if [ "$(jget "$T/bw.json" converged)" = True ] && [ "$iw" -lt "$ic" ] && [ "$((is * 10))" -le "$ic" ] \
    && awk -v a="$dw" -v b="$ds" 'BEGIN {exit !(a <= 1e-6 && b <= 1e-6)}' && [ "$(jget "$T/bw.json" warm_t)" = 0 ]; then
    ok "stationary, the obstacle moved one cell: cold $ic sweeps, warm $iw (max diff $dw); from its own value $is ($ds)"
else
    bad "stationary warm start: cold $ic, warm $iw (diff $dw), own $is (diff $ds), $(cat "$T/bw.json")"
fi
# a finite-horizon tube goes on from its own value at t_end 0.5 to 1: the cold solve's value
TUBE="game: pursuit2d\nt_end: %s\nmode: brt\naccuracy: medium\ngrid: {n: [41, 41]}\nsolver: {dt: 0.01, threads: 1}\nobstacles:\n  - {shape: ball, center: [%s, 0.0], radius: 0.3}\n"
H=$(cfg h "$(printf "$TUBE" 0.5 0.8)")
F=$(cfg f "$(printf "$TUBE" 1.0 0.8)")
"$DG" hji solve --config "$H" --out "$T/h.safetensors" >/dev/null 2>"$T/h.err" || bad "solve h: $(tail -1 "$T/h.err")"
"$DG" hji solve --config "$F" --out "$T/f.safetensors" >"$T/f.json" 2>"$T/f.err" || bad "solve f: $(tail -1 "$T/f.err")"
"$DG" hji solve --config "$F" --out "$T/fw.safetensors" --warm "$T/h.safetensors" >"$T/fw.json" 2>"$T/fw.err" \
    || bad "solve f --warm h: $(tail -1 "$T/fw.err")"
d=$(vdiff "$T/f.safetensors" "$T/fw.safetensors")
[ "$d" = 0 ] && [ "$(jget "$T/fw.json" steps)" = 50 ] && [ "$(jget "$T/fw.json" warm_t)" = 0.5 ] \
    && ok "finite horizon: from its own value at 0.5, 50 steps to the cold value at 1 (max diff $d)" \
    || bad "finite horizon goes on: diff $d, $(cat "$T/fw.json")"
# refusals
G=$(cfg g "game: pursuit2d\nt_end: 1\nmode: brt\ngrid: {n: [41, 31]}\n")
R=$(cfg r "game: air3d\nt_end: 1\ngrid: {n: [11, 11, 11]}\n")
M=$(cfg m "$(printf "$TUBE" 1.0 0.9)")     # the ball moved by one cell
S=$(cfg s "$(printf "$TUBE" 0.25 0.8)")    # a shorter horizon than the file's
FT=$(cfg ft "game: pursuit2d\npayoff: time\nt_end: 6\naccuracy: low\ngrid: {n: [41, 41]}\nsolver: {threads: 1}\nobstacles:\n  - {shape: box, min: [0.5, -0.5], max: [1.0, 0.5]}\n")
mkdir -p "$T/outs"
OUTS=$T/outs run_rows "refused: " "" \
    "another grid|--warm: $T/h.safetensors: grid axis 1|hji solve --config $G --out $T/outs/x.safetensors --warm $T/h.safetensors" \
    "another game|--warm: $T/h.safetensors: solved for game 'pursuit2d'|hji solve --config $R --out $T/outs/x.safetensors --warm $T/h.safetensors" \
    "finite horizon, obstacle moved|h.safetensors: solved for another problem than $M's (they differ in the obstacles)|hji solve --config $M --out $T/outs/x.safetensors --warm $T/h.safetensors" \
    "a longer horizon's value|--warm: $T/f.safetensors: solved to t_end 1, past|hji solve --config $S --out $T/outs/x.safetensors --warm $T/f.safetensors" \
    "a stationary value, finite horizon|--warm: $T/a.safetensors: a stationary (steady) value|hji solve --config $FT --out $T/outs/x.safetensors --warm $T/a.safetensors" \
    "no such file|none.safetensors: cannot open|hji solve --config $F --out $T/outs/x.safetensors --warm $T/none.safetensors"
[ -n "${SHOW:-}" ] && cat "$T/table.txt"
finish
