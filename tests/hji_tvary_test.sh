#!/usr/bin/env bash
# Time-varying targets and obstacles from the command line (docs/hji.md, time-varying sets; the
# numbers are tests/test_hji_tvary.c's):
# - hji solve of a moving obstacle (obstacles[i].velocity) and of a model file whose avoid set reads t:
#   the same value (the value files' tensors compared, read with python), and not the fixed obstacle's;
# - hji play of the moving-target anchor (tests/test_hji_tvary.c's test_play_moving_target, on a coarser
#   grid): the CSV's target column is the target of each row's time t, |x - w t| - r, and the play is
#   captured near the closed form's time (1.443 s; 2.85 against the target where it ends);
# - hji versus with a moving target (the learning game's plays captured against the target of their
#   time): four pairings;
# - refusals, one line and exit 2 each: a velocity of the wrong length, a moving target under mode brt,
#   a moving target at payoff: cost, moving sets in a stationary solve, target_velocity on a model
#   file, hji learn and certify --sampling of moving sets.
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

# the anchor's play: simple pursuit of a target moving at w = (0.3, -0.2), the time to reach it
ANC=$(cfg anc "game: linear\ntarget_radius: 0.25\ncontrol: {set: ball, matrix: [-1, 0, 0, -1], bound: 1.0}\ndisturbance: {set: ball, matrix: [1, 0, 0, 1], bound: 0.5}\npayoff: time\nt_end: 3.0\naccuracy: high\ngrid: {min: [-2, -2], max: [2, 2], n: [61, 61]}\ntarget_velocity: [0.3, -0.2]\n")
"$DG" hji solve --config "$ANC" --out "$T/anc.safetensors" --slices 31 >/dev/null 2>"$T/anc.err" \
    || bad "hji solve anchor: $(tail -1 "$T/anc.err")"
if "$DG" hji play --config "$ANC" --value "$T/anc.safetensors" --from 1.0,0.5 --dt 0.005 --t-max 3 \
        --out "$T/anc.csv" >"$T/play.json" 2>"$T/play.err"; then
    # columns t,x0,x1,u0,u1,d0,d1,value,target: the target of time t on every row, the last one captured
    awk -F, 'NR > 1 {e = sqrt(($2 - 0.3 * $1)^2 + ($3 + 0.2 * $1)^2) - 0.25 - $9; if (e < 0) e = -e;
                     if (e > m) m = e; t = $1; l = $9}
             END {exit !(m < 1e-6 && l <= 0 && t > 1.38 && t < 1.51)}' "$T/anc.csv" \
        && ok "hji play of a moving target: captured at $(tail -1 "$T/anc.csv" | cut -d, -f1) s (closed form 1.443), against the target of each time" \
        || bad "hji play of a moving target: $(tail -1 "$T/anc.csv")"
else
    bad "hji play of a moving target: $(tail -1 "$T/play.err")"
fi
# versus: the learning game's plays against the HJBI strategies of a moving target (a smoke test)
"$DG" train --config configs/duel_open.yaml --epochs 2 --batch 8 --out "$T/do" --quiet >/dev/null 2>&1 \
    || bad "duel_open train"
C4=$(cfg c4 "game: chase4d\nt_end: 0.2\naccuracy: low\ngrid: {min: [-1, -1, -2, -2], max: [1, 1, 2, 2], n: [9, 9, 9, 9]}\nmode: brt_target\ntarget_velocity: [0.5, 0, 0, 0]\n")
if "$DG" hji solve --config "$C4" --out "$T/c4.safetensors" >/dev/null 2>"$T/c4.err" &&
    "$DG" hji versus --config configs/duel_open.yaml --ckpt "$T/do/final.safetensors" --hji "$C4" \
        --value "$T/c4.safetensors" --batch 16 >"$T/vs.out" 2>"$T/vs.err"; then
    [ "$(grep -c '"pairing"' "$T/vs.out")" -eq 4 ] && ok "hji versus of a moving target: four pairings" \
        || bad "hji versus of a moving target: $(cat "$T/vs.out")"
else
    bad "hji versus of a moving target: $(tail -1 "$T/c4.err" "$T/vs.err")"
fi

TGT=$(cfg tgt "game: pursuit2d\nmode: brt_target\nt_end: 1.0\naccuracy: low\ngrid: {n: [21, 21]}\ntarget_velocity: [0.5, 0]\n")
run_rows "refused: " "" \
    "velocity of the wrong length|obstacles[0].velocity|hji solve --config $(cfg v1 "${BASE}obstacles:\n  - {shape: ball, center: [1, 0], radius: 0.3, velocity: [1]}\n") --out $T/x.safetensors" \
    "a moving target under mode brt|brt_target|hji solve --config $(cfg brt "game: pursuit2d\nmode: brt\ntarget_velocity: [0.5, 0]\ngrid: {n: [21, 21]}\n") --out $T/x.safetensors" \
    "a moving target at payoff cost|not payoff: cost|hji solve --config $(cfg pc "game: linear\npayoff: cost\ncost: {terminal: [1, 0, 0, 1]}\ncontrol: {set: ball, bound: 1}\ngrid: {n: [21, 21]}\ntarget_velocity: [0, 0.1]\n") --out $T/x.safetensors" \
    "a moving obstacle, stationary|no steady value|hji solve --config $(cfg ps "game: pursuit2d\npayoff: time\nstationary: true\ngrid: {n: [21, 21]}\nobstacles:\n  - {shape: box, min: [0.5, 0.5], max: [1, 1], velocity: [0, 0.1]}\n") --out $T/x.safetensors" \
    "target_velocity on a model file|expression of t|hji solve --config $(cfg tm "${MODEL}target_velocity: [0.1, 0]\n") --out $T/x.safetensors" \
    "hji learn of moving sets|moves in time|hji learn --config $MOV --out $T/learn" \
    "certify --sampling of moving sets|moves in time|certify --sampling --config $TGT --value $T/none.safetensors"
finish
