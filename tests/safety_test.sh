#!/usr/bin/env bash
# The safety filter end to end (docs/safety.md, issue 28 section 1): reach with a wind the value
# treats as adversarial (configs/models/reach_wind.yaml) and the obstacle's avoid tube under that wind
# (configs/hji/reach_wind_avoid.yaml, here on a coarse 15x15x11x11 grid: about a second).
# - a policy trained without wind (900 epochs, seed 0) evaluated on N held-out episodes (seed 1000)
#   while the wind plays the value's worst case (eval --adversary): violations > 0 without the
#   filter; 0 with the switch filter and with the qp filter; interventions reported, in (0, 1); the
#   goal still reached (mean_final_dist below 0.2; 0.05 without the wind);
# - replay --safety --adversary writes its GIF;
# - safety.train: training with the filter on the tape runs and its policy is safe under the filter;
# - refusals, one line and exit 2 each: a missing value file, a file that is not a value, a value
#   whose axes are not the game's states, --adversary on a game without an adversarial input,
#   safety.train without safety.value, safety.train on difgames pg, an unknown safety.mode.
#   usage: safety_test.sh path/to/difgames repo_root [episodes]   (default 2000; the slow tier 10000)
. "$(dirname "$0")/lib.sh"
cd "$ROOT" || exit 1
N=${3:-2000}
PY=/usr/bin/python3
jget() { $PY -c 'import json, sys; r = json.loads(open(sys.argv[1]).read().splitlines()[-1]); print(r.get(sys.argv[2]))' "$1" "$2"; }
lt() { awk -v a="$1" -v b="$2" 'BEGIN {exit !(a + 0 < b + 0)}'; }

sed 's/n: \[31, 31, 25, 25\]/n: [15, 15, 11, 11]/' configs/hji/reach_wind_avoid.yaml >"$T/avoid.yaml"
"$DG" hji solve --config "$T/avoid.yaml" --out "$T/V.safetensors" --slices 1 >/dev/null 2>"$T/s.err" \
    || bad "hji solve: $(tail -1 "$T/s.err")"
"$DG" train --config configs/models/reach_wind.yaml --out "$T/run" --quiet >/dev/null 2>"$T/t.err" \
    || bad "train: $(tail -1 "$T/t.err")"
V=$T/V.safetensors
E=("$DG" eval --config configs/models/reach_wind.yaml --ckpt "$T/run/final.safetensors" --seed 1000 --batch "$N")
"${E[@]}" >"$T/calm.json" 2>"$T/e.err" || bad "eval: $(tail -1 "$T/e.err")"
"${E[@]}" --adversary "$V" >"$T/wind.json" 2>"$T/e.err" || bad "eval --adversary: $(tail -1 "$T/e.err")"
"${E[@]}" --adversary "$V" --safety "$V" >"$T/switch.json" 2>"$T/e.err" || bad "eval --safety: $(tail -1 "$T/e.err")"
"${E[@]}" --adversary "$V" --safety "$V" --safety-mode qp >"$T/qp.json" 2>"$T/e.err" \
    || bad "eval --safety-mode qp: $(tail -1 "$T/e.err")"
vw=$(jget "$T/wind.json" violations) vs=$(jget "$T/switch.json" violations) vq=$(jget "$T/qp.json" violations)
is=$(jget "$T/switch.json" interventions) iq=$(jget "$T/qp.json" interventions)
dc=$(jget "$T/calm.json" mean_final_dist) ds=$(jget "$T/switch.json" mean_final_dist) dq=$(jget "$T/qp.json" mean_final_dist)
echo "  $N episodes: violations without the filter $vw, switch $vs, qp $vq; interventions switch $is, qp $iq;" \
     "final_dist calm $dc, switch $ds, qp $dq"
[ "$vw" != None ] && [ "$vw" -gt 0 ] && ok "the worst-case wind: $vw of $N episodes enter the obstacle without the filter" \
    || bad "the worst-case wind: violations '$vw' without the filter, want > 0"
[ "$vs" = 0 ] && [ "$vq" = 0 ] && ok "with the filter (switch, qp): 0 violations in $N episodes" \
    || bad "with the filter: violations switch '$vs', qp '$vq', want 0"
lt 0 "$is" && lt "$is" 1 && lt 0 "$iq" && lt "$iq" 1 && ok "interventions reported: switch $is, qp $iq" \
    || bad "interventions switch '$is', qp '$iq', want in (0, 1)"
lt "$ds" 0.2 && lt "$dq" 0.2 && lt "$dc" 0.06 && ok "the goal reached: mean_final_dist $ds (switch), $dq (qp), $dc (no wind)" \
    || bad "mean_final_dist switch '$ds', qp '$dq', no wind '$dc'"
[ "$(jget "$T/calm.json" violations)" = None ] && [ "$(jget "$T/wind.json" interventions)" = None ] \
    && ok "eval's JSON: violations only with a value, interventions only with a filter" \
    || bad "eval's JSON: calm $(cat "$T/calm.json"), wind $(cat "$T/wind.json")"

# replay: the episode with the filter and the wind
"$DG" replay --config configs/models/reach_wind.yaml --ckpt "$T/run/final.safetensors" --seed 1000 --safety "$V" \
    --adversary "$V" --out "$T/r.gif" 2>"$T/r.err" && [ -s "$T/r.gif" ] && ok "replay --safety --adversary writes its GIF" \
    || bad "replay --safety --adversary: $(tail -1 "$T/r.err")"

# safety.train: the filter on the tape of every epoch
printf 'safety: {value: %s, train: true}\n' "$V" | cat configs/models/reach_wind.yaml - >"$T/train_safe.yaml"
"$DG" train --config "$T/train_safe.yaml" --out "$T/run_safe" --epochs 300 --quiet >/dev/null 2>"$T/t.err" \
    || bad "train with safety.train: $(tail -1 "$T/t.err")"
"$DG" eval --config configs/models/reach_wind.yaml --ckpt "$T/run_safe/final.safetensors" --seed 1000 --batch 500 \
    --safety "$V" >"$T/ts.json" 2>"$T/e.err" || bad "eval of the safety.train policy: $(tail -1 "$T/e.err")"
[ "$(jget "$T/ts.json" violations)" = 0 ] && ok "safety.train: the policy trained under the filter, 0 violations under it" \
    || bad "safety.train: $(cat "$T/ts.json")"

# the filter and its penalty from train's options (safety.value, .train, .mode, .penalty), briefly
"$DG" train --config configs/models/reach_wind.yaml --out "$T/run_pen" --epochs 20 --safety "$V" --safety-train true \
    --safety-mode qp --safety-penalty 10 --quiet >"$T/tp.json" 2>"$T/t.err" && [ -s "$T/run_pen/final.safetensors" ] \
    && ok "train --safety --safety-train true --safety-mode qp --safety-penalty 10" \
    || bad "train with the filter's penalty: $(tail -1 "$T/t.err") $(cat "$T/tp.json")"

# refusals
printf 'not a value' >"$T/junk.safetensors"
printf 'safety: {train: true}\n' | cat configs/models/reach_wind.yaml - >"$T/train_novalue.yaml"
printf 'safety: {mode: bang}\n' | cat configs/models/reach_wind.yaml - >"$T/bad_mode.yaml"
"$DG" hji solve --config configs/hji/pursuit2d.yaml --out "$T/P.safetensors" --slices 1 >/dev/null 2>&1
Q=$(cfg q "game: model\nmodel:\n  name: q\n  compile: false\n  state: {x: [-1, 1], q: [-1, 1]}\n  inputs: {u: {dim: 2, role: max}}\n  dynamics: {x: u1, q: u2}\n  target: sqrt(x^2 + q^2) - 0.3\nt_end: 0.2\ngrid: {n: [11, 11]}\n")
"$DG" hji solve --config "$Q" --out "$T/Q.safetensors" --slices 1 >/dev/null 2>&1
"$DG" train --config configs/reach.yaml --out "$T/reach" --quiet --epochs 1 >/dev/null 2>&1
C=configs/models/reach_wind.yaml K=$T/run/final.safetensors
run_rows "refused: " "" \
    "missing value|$T/none.safetensors|eval --config $C --ckpt $K --safety $T/none.safetensors" \
    "not a value|junk.safetensors|eval --config $C --ckpt $K --safety $T/junk.safetensors" \
    "another game's inputs|is not the learned player's action of reach_wind|eval --config $C --ckpt $K --safety $T/P.safetensors" \
    "another game's axes|the value's axis 'q' is not a state of reach_wind|eval --config $C --ckpt $K --safety $T/Q.safetensors" \
    "no adversarial input|has no adversarial input|eval --config configs/reach.yaml --ckpt $T/reach/final.safetensors --adversary $V" \
    "replay: missing value|$T/none.safetensors|replay --config $C --ckpt $K --safety $T/none.safetensors --out $T/x.gif" \
    "safety.train without a value|safety.value|train --config $T/train_novalue.yaml --out $T/nv" \
    "a negative penalty|--safety-penalty (safety.penalty): -1 is out of range|train --config $C --out $T/np --safety-penalty -1" \
    "pg with safety.train|difgames pg does not train with the safety filter|pg --config $T/train_safe.yaml --out $T/pg" \
    "unknown mode|safety.mode|eval --config $T/bad_mode.yaml --ckpt $K"
finish
