#!/usr/bin/env bash
# difgames certify --sampling end to end at a tiny size (seconds):
# - on a game whose failures are known (the plane: x' = u + d, the pursuer u in a ball of 2, the
#   avoider d in a ball of 1, the target the disk of 0.5, t_end 1), a network of hji learn trained 0
#   iterations (exact boundary: V = l + tau N, N small: its feedback flies nearly straight away): the JSON line's fields,
#   certified, delta below 1 (the failures lie where l <= 1), the same run twice the same line, and
#   with --grid (a value file of hji solve for the same config) the other player plays the grid's;
# - collision9d (9-D: no grid, the target from its formula): a network of hji learn (16 x 16, 20
#   iterations), certify --sampling at the same loose epsilon and beta: the JSON fields, the same N,
#   the same line twice; hji play from a network: a start in collision captured at 0, one with the
#   aircraft 2 apart escapes within --t-max 1 (1.45 needed), the CSV's 9 state columns;
# - refusals, one line and exit 2 each: a BRS, a reach-avoid game, --sampling without --value, with
#   --ckpt, a sampling option without --sampling, --epsilon 0, a network of another t_end, a --grid
#   of another config; on collision9d: --grid, a grid's value to play, --gif, --from of 8 coordinates,
#   hji tabulate.
#   usage: certify_sampling_test.sh path/to/difgames repo_root
. "$(dirname "$0")/lib.sh"
cd "$ROOT" || exit 1
PY=/usr/bin/python3
json() { $PY -c 'import json, sys; r = json.loads(open(sys.argv[1]).read().splitlines()[-1]); v = eval("(" + sys.argv[2] + ")"); print(v); sys.exit(0 if v else 1)' "$1" "$2"; }

GAME="game: linear\ntarget_radius: 0.5\ncontrol: {set: ball, bound: 2.0}\ndisturbance: {set: ball, bound: 1.0, matrix: [1, 0, 0, 1]}\naccuracy: high\ngrid: {min: [-3, -3], max: [3, 3], n: [41, 41]}\n"
LEARN="learn: {hidden: [16, 16], points: 64, iterations: 0, seed: 1}\n"
P=$(cfg p "${GAME}mode: brt\nt_end: 1.0\n$LEARN")
"$DG" hji learn --config "$P" --out "$T/net" --quiet >/dev/null 2>"$T/l.err" || bad "hji learn: $(tail -2 "$T/l.err")"
# a network of 0 iterations is hji learn's initial one: V = l + tau N with N small, so the failures
# lie near 0.5 < |x| <= 1.5, where l <= 1 (test_certify_sampling checks N = 0 exactly)
OPTS="--epsilon 0.05 --beta 0.001 --failures 4 --rounds 3 --dt 0.01 --coverage-samples 20000 --seed 3"
"$DG" certify --sampling --config "$P" --value "$T/net/value.safetensors" $OPTS >"$T/c.json" 2>"$T/c.err" \
    && json "$T/c.json" 'r["game"] == "linear" and r["certified"] and 0 < r["delta"] < 1.2 and r["epsilon"] == 0.05 and r["beta"] == 0.001 and r["N"] > 0 and r["failures"] <= 4 and r["epsilon_bound"] <= 0.05 and 0 < r["coverage"] < r["safe_fraction"] < 1 and r["coverage_se"] > 0 and 0.1 < r["uncertified_rate"] < 0.35 and r["other"] == "network" and r["steps"] == 100' >/dev/null \
    && grep -q "^certified: V > " "$T/c.err" \
    && ok "certify --sampling: certified, its JSON line and its lines on stderr" || bad "certify --sampling: $(cat "$T/c.err") $(cat "$T/c.json")"
"$DG" certify --sampling --config "$P" --value "$T/net/value.safetensors" $OPTS >"$T/c2.json" 2>/dev/null \
    && cmp -s <(sed 's/"seconds":[^,}]*//' "$T/c.json") <(sed 's/"seconds":[^,}]*//' "$T/c2.json") \
    && ok "the same run twice: the same numbers" || bad "two runs differ: $(cat "$T/c.json") $(cat "$T/c2.json")"
"$DG" hji solve --config "$P" --out "$T/V.safetensors" --slices 5 >/dev/null 2>"$T/s.err" \
    && "$DG" certify --sampling --config "$P" --value "$T/net/value.safetensors" --grid "$T/V.safetensors" $OPTS >"$T/g.json" 2>"$T/g.err" \
    && json "$T/g.json" 'r["certified"] and r["other"] == "grid" and 0 < r["delta"] < 1.2' >/dev/null \
    && ok "--grid: the other player plays the grid value's feedback" || bad "--grid: $(cat "$T/s.err" "$T/g.err") $(cat "$T/g.json")"

# collision9d: no grid, 9 axes
C9=$T/collision9d.yaml
sed 's/hidden: \[128, 128, 128\]/hidden: [16, 16]/' configs/hji/collision9d.yaml >"$C9"
grep -q 'hidden: \[16, 16\]' "$C9" || bad "collision9d: no learn.hidden line to shrink in configs/hji/collision9d.yaml"
N9=$T/c9/value.safetensors
"$DG" hji learn --config "$C9" --out "$T/c9" --iterations 20 --points 128 --quiet >/dev/null 2>"$T/l9.err" \
    || bad "hji learn collision9d: $(tail -2 "$T/l9.err")"
"$DG" certify --sampling --config "$C9" --value "$N9" $OPTS >"$T/c9.json" 2>"$T/c9.err" \
    && N=$($PY -c 'import json, sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])["N"])' "$T/c.json") \
    && json "$T/c9.json" 'r["game"] == "collision9d" and r["N"] == '"$N"' and r["epsilon"] == 0.05 and r["beta"] == 0.001 and r["delta"] >= 0 and 0 <= r["coverage"] <= r["safe_fraction"] <= 1 and r["coverage_se"] >= 0 and 0 <= r["uncertified_rate"] <= 1 and r["uncertified_se"] >= 0 and r["other"] == "network" and r["steps"] == 100 and r["rounds"] >= 1 and r["failures"] >= 0 and r["epsilon_bound"] > 0 and r["draws"] >= r["N"]' >/dev/null \
    && ok "collision9d (no grid): certify --sampling's JSON line" || bad "collision9d: $(cat "$T/c9.err") $(cat "$T/c9.json")"
"$DG" certify --sampling --config "$C9" --value "$N9" $OPTS >"$T/c9b.json" 2>/dev/null \
    && cmp -s <(sed 's/"seconds":[^,}]*//' "$T/c9.json") <(sed 's/"seconds":[^,}]*//' "$T/c9b.json") \
    && ok "collision9d: the same run twice, the same numbers" || bad "collision9d twice: $(cat "$T/c9.json" "$T/c9b.json")"
HIT=-0.5,0,-0.4,0,0.8,0.8,0,3,1
FAR=-1,-1,1,-1,0,1,0,1,2
"$DG" hji play --config "$C9" --value "$N9" --from $HIT --out "$T/hit.csv" >"$T/hit.json" 2>"$T/p.err" \
    && json "$T/hit.json" 'r["outcome"] == "capture" and r["capture_time"] == 0 and r["value"] == "network"' >/dev/null \
    && "$DG" hji play --config "$C9" --value "$N9" --from $FAR --t-max 1 --dt 0.01 --out "$T/far.csv" >"$T/far.json" 2>>"$T/p.err" \
    && json "$T/far.json" 'r["outcome"] == "escape"' >/dev/null \
    && head -1 "$T/far.csv" | grep -q '^t,x0,x1,x2,x3,x4,x5,x6,x7,x8,u0,u1,u2,value,target$' && [ "$(wc -l <"$T/far.csv")" -eq 102 ] \
    && ok "collision9d: hji play from a network (a collision at 0, an escape)" \
    || bad "collision9d play: $(cat "$T/p.err" "$T/hit.json" "$T/far.json" 2>/dev/null) $(head -1 "$T/far.csv" 2>/dev/null)"

# refusals
BRS=$(cfg brs "${GAME}mode: brs\nt_end: 1.0\n")
OBS=$(cfg obs "${GAME}mode: brt\nt_end: 1.0\nobstacles:\n  - {shape: ball, center: [1.5, 0], radius: 0.3}\n")
T2=$(cfg t2 "${GAME}mode: brt\nt_end: 2.0\n")
Q=$(cfg q "$(printf "${GAME}" | sed 's/n: \[41, 41\]/n: [31, 31]/')\nmode: brt\nt_end: 1.0\n")
"$DG" hji solve --config "$Q" --out "$T/Q.safetensors" >/dev/null 2>&1
N="$T/net/value.safetensors"
run_rows "certify --sampling: " "" \
    "a BRS|mode: brs|certify --sampling --config $BRS --value $N" \
    "a reach-avoid game|reach-avoid|certify --sampling --config $OBS --value $N" \
    "no --value|--sampling needs --value|certify --sampling --config $P" \
    "with --ckpt|not with --ckpt|certify --sampling --config $P --value $N --ckpt $N" \
    "--epsilon without --sampling|--epsilon applies to --sampling|certify --config configs/duel_simple.yaml --ckpt $N --epsilon 0.1" \
    "--epsilon 0|--epsilon|certify --sampling --config $P --value $N --epsilon 0" \
    "a network of another t_end|trained to t_end 1|certify --sampling --config $T2 --value $N" \
    "a --grid of another config|--grid|certify --sampling --config $P --value $N --grid $T/Q.safetensors"
mkdir -p "$T/outs"
OUTS=$T/outs run_rows "collision9d: " "" \
    "--grid|--grid $T/V.safetensors: collision9d has 9 state dimensions, no grid|certify --sampling --config $C9 --value $N9 --grid $T/V.safetensors" \
    "play a grid's value|is not a network of hji learn: collision9d has 9 state dimensions|hji play --config $C9 --value $T/V.safetensors --from $FAR --out $T/outs/p.csv" \
    "play --gif|--gif: collision9d has 9 state dimensions and no grid|hji play --config $C9 --value $N9 --from $FAR --out $T/outs/p.csv --gif $T/outs/p.gif" \
    "play --from of 8|--from: collision9d needs 9 coordinates|hji play --config $C9 --value $N9 --from 0,0,0,0,0,0,0,0 --out $T/outs/p.csv" \
    "hji tabulate|9 state dimensions: the grid solver takes at most 6|hji tabulate --value $N9 --config $C9 --out $T/outs/V.safetensors"
finish
