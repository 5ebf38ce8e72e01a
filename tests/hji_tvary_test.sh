#!/usr/bin/env bash
# Time-varying targets and obstacles from the command line (docs/hji.md, time-varying sets; the
# numbers are tests/test_hji_tvary.c's):
# - hji solve of a moving obstacle (obstacles[i].velocity) and of a model file whose avoid set reads t:
#   the same value (the value files' tensors compared, read with python), and not the fixed obstacle's;
# - refusals, one line and exit 2 each: a velocity of the wrong length, a moving target under mode brt,
#   a moving target at payoff: cost, moving sets in a stationary solve, target_velocity on a model
#   file, hji play / learn / versus of moving sets.
#   usage: hji_tvary_test.sh path/to/difgames repo_root
. "$(dirname "$0")/lib.sh"
cd "$ROOT" || exit 1
PY=/usr/bin/python3

BASE="game: pursuit2d\nmode: brt_target\nt_end: 1.0\naccuracy: medium\ngrid: {min: [-2, -2], max: [2, 2], n: [41, 41]}\n"
MOV=$(cfg mov "${BASE}obstacles:\n  - {shape: ball, center: [1.0, 0.0], radius: 0.3, velocity: [-0.8, 0.2]}\n")
FIX=$(cfg fix "${BASE}obstacles:\n  - {shape: ball, center: [1.0, 0.0], radius: 0.3}\n")
MODEL="game: model\nmodel:\n  name: pursuit2d\n  constants: {vp: 1, ve: 0.5, r: 0.25}\n  state: {x: [-2, 2], y: [-2, 2]}\n"
MODEL="${MODEL}  inputs:\n    a: {dim: 2, set: ball, radius: 1, role: min}\n    b: {dim: 2, set: ball, radius: 1, role: max}\n"
MODEL="${MODEL}  dynamics:\n    x: ve*b1 - vp*a1\n    y: ve*b2 - vp*a2\n  target: sqrt(x^2 + y^2) - r\n"
MODEL="${MODEL}  avoid: sqrt((x - (1.0 - 0.8*t))^2 + (y - 0.2*t)^2) - 0.3\n"
MODEL="${MODEL}mode: brt_target\nt_end: 1.0\naccuracy: medium\ngrid: {min: [-2, -2], max: [2, 2], n: [41, 41]}\n"
MOD=$(cfg mod "$MODEL")

for c in mov fix mod; do
    "$DG" hji solve --config "$T/$c.yaml" --out "$T/$c.safetensors" --slices 1 >"$T/$c.json" 2>"$T/$c.err" \
        || bad "hji solve $c: $(tail -1 "$T/$c.err")"
done
# the value at t_end of two files: their largest difference, and the moving one's from the fixed one
cmp_values() {
    $PY - "$1" "$2" <<'EOF'
import json, struct, sys
def value(path):
    b = open(path, 'rb').read()
    n = struct.unpack('<Q', b[:8])[0]
    h = json.loads(b[8:8 + n])
    t = h['value']
    lo, hi = t['data_offsets']
    raw = b[8 + n + lo:8 + n + hi]
    return struct.unpack('<%dd' % (len(raw) // 8), raw)
a, b = value(sys.argv[1]), value(sys.argv[2])
print('%.3g' % max(abs(x - y) for x, y in zip(a, b)))
EOF
}
d=$(cmp_values "$T/mov.safetensors" "$T/mod.safetensors")
m=$(cmp_values "$T/mov.safetensors" "$T/fix.safetensors")
awk -v d="$d" -v m="$m" 'BEGIN {exit !(d < 1e-9 && m > 0.05)}' \
    && ok "hji solve: obstacles[0].velocity and a model's avoid set of t, the same value ($d apart; $m from the fixed obstacle's)" \
    || bad "hji solve: keys and expression $d apart, the fixed obstacle's $m"

run_rows "refused: " "" \
    "velocity of the wrong length|obstacles[0].velocity|hji solve --config $(cfg v1 "${BASE}obstacles:\n  - {shape: ball, center: [1, 0], radius: 0.3, velocity: [1]}\n") --out $T/x.safetensors" \
    "a moving target under mode brt|brt_target|hji solve --config $(cfg brt "game: pursuit2d\nmode: brt\ntarget_velocity: [0.5, 0]\ngrid: {n: [21, 21]}\n") --out $T/x.safetensors" \
    "a moving target at payoff cost|not payoff: cost|hji solve --config $(cfg pc "game: linear\npayoff: cost\ncost: {terminal: [1, 0, 0, 1]}\ncontrol: {set: ball, bound: 1}\ngrid: {n: [21, 21]}\ntarget_velocity: [0, 0.1]\n") --out $T/x.safetensors" \
    "a moving obstacle, stationary|no steady value|hji solve --config $(cfg ps "game: pursuit2d\npayoff: time\nstationary: true\ngrid: {n: [21, 21]}\nobstacles:\n  - {shape: box, min: [0.5, 0.5], max: [1, 1], velocity: [0, 0.1]}\n") --out $T/x.safetensors" \
    "target_velocity on a model file|expression of t|hji solve --config $(cfg tm "${MODEL}target_velocity: [0.1, 0]\n") --out $T/x.safetensors" \
    "hji play of moving sets|hji play|hji play --config $MOV --value $T/mov.safetensors --from 0.5,0.5" \
    "hji learn of moving sets|hji learn|hji learn --config $MOV --out $T/learn" \
    "hji versus of moving sets|moves in time|hji versus --config configs/duel_open.yaml --ckpt $T/none.safetensors --hji $MOV --value $T/mov.safetensors"
finish
