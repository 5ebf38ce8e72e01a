#!/usr/bin/env bash
# difgames certify by default: the learner's own discrete game (issue 26, sections 3 to 5), end to end
# on games small enough for seconds.
# - duel_simple (dt 0.1, 10 steps): the JSON line's means and study (refinement, order, extrapolated,
#   converged), the best responses of both players, --csv's header and rows; a study that cannot
#   converge says so on stderr and in the JSON, and still exits 0.
# - gust, a model file with a wind nobody learns: declared adversarial, the policy's cost is the one
#   against the grid's answer (above its cost with the wind held); declared held, one value and the
#   plan bound; the JSON says how the input was treated, the CSV names the state as the file does.
# - refusals, one line and exit 2 each: an input left undeclared, a game without per-row costs (a
#   plugin), an open-loop game, a noisy game (reach's env.noise, merton, a model file's diffusion), a
#   general-sum game (fishwar), a --box of the wrong size or upside down, options of the other path.
#   usage: certify_test.sh path/to/difgames repo_root
. "$(dirname "$0")/lib.sh"
cd "$ROOT" || exit 1
PY=/usr/bin/python3
# json FILE EXPR: evaluates the Python expression EXPR on the JSON line r of FILE (its last line); prints
# what it returns, fails when it raises or returns something false
json() { $PY -c 'import json, sys; r = json.loads(open(sys.argv[1]).read().splitlines()[-1]); v = eval("(" + sys.argv[2] + ")"); print(v); sys.exit(0 if v else 1)' "$1" "$2"; }

# ---------------------------------------------------------------- duel_simple: two learned players
DS=$(cfg ds "game: duel_simple\nseed: 0\nenv: {dt: 0.1, horizon: 10, distance: [0.4, 0.8]}\npolicy: {hidden: [16]}\ntrain: {batch: 32, epochs: 20, snapshots: [], exploit_every: 0}\n")
"$DG" train --config "$DS" --out "$T/ds" --quiet >/dev/null 2>"$T/err" || bad "train duel_simple: $(tail -1 "$T/err")"
OPTS=(--episodes 8 --nodes 9 --max-grids 3 --plan-iters 20 --bptt-epochs 2)
"$DG" certify --config "$DS" --ckpt "$T/ds/final.safetensors" "${OPTS[@]}" --tol 0.5 --csv "$T/ds.csv" \
    >"$T/ds.json" 2>"$T/ds.err"
rc=$?
[ $rc -eq 0 ] && ok "certify duel_simple: exit 0" || bad "certify duel_simple: exit $rc: $(tail -2 "$T/ds.err")"
out=$(json "$T/ds.json" 'r["certifies"] == "the learner'"'"'s discrete game" and r["players"] == 2 and r["episodes"] == 8 and
    all(k in r for k in ("value_upper", "value_lower", "policy_cost", "gap", "abs_gap", "br_cost_pursuer",
        "br_cost_evader", "exploit_pursuer", "exploit_evader", "br_route_pursuer", "order", "extrapolated", "stopped"))
    and "plan_cost" not in r and r["converged"] is True and r["inputs"] == {} and len(r["refinement"]) == 3
    and [g["nodes"] for g in r["refinement"]] == [[9, 9], [13, 13], [19, 19]] and r["abs_gap"] >= abs(r["gap"])
    and r["br_cost_pursuer"] >= r["policy_cost"] - 1e-9 and r["br_cost_evader"] <= r["policy_cost"] + 1e-9
    and abs(r["exploit_pursuer"] - (r["br_cost_pursuer"] - r["value_upper"])) < 1e-6
    and set(r["order"]) == {"value_upper", "value_lower"} and sum(r["br_route_pursuer"].values()) == 8') \
    && ok "certify duel_simple's JSON: means, study, best responses" || bad "certify duel_simple JSON: $out $(tail -c 600 "$T/ds.json")"
head -1 "$T/ds.csv" | grep -qx 'px,py,ex,ey,value_upper,value_lower,policy_cost,gap,abs_gap,br_cost_pursuer,br_route_pursuer,exploit_pursuer,br_cost_evader,br_route_evader,exploit_evader' \
    && [ "$(wc -l <"$T/ds.csv")" -eq 9 ] && ok "--csv: the state's names and a row per start" \
    || bad "--csv: $(head -2 "$T/ds.csv")"
$PY - "$T/ds.csv" "$T/ds.json" <<'PY' && ok "--csv's rows average to the JSON's means" || bad "--csv against the JSON"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
r = json.loads(open(sys.argv[2]).read())
for k in ("value_upper", "value_lower", "policy_cost", "gap", "abs_gap", "exploit_evader"):
    m = sum(float(x[k]) for x in rows) / len(rows)
    assert abs(m - r[k]) <= 1e-5 * max(1, abs(m)), (k, m, r[k])
assert all(x["br_route_pursuer"] in ("plan", "bptt") for x in rows)
PY
grep -q "the learner's own discrete game (dt 0.1, 10 steps), 8 held-out starts" "$T/ds.err" && ! grep -q "not converged" "$T/ds.err" \
    && ok "stderr: the study's table" || bad "stderr: $(head -3 "$T/ds.err")"
# a tolerance three grids cannot meet: an estimate, said twice
"$DG" certify --config "$DS" --ckpt "$T/ds/final.safetensors" "${OPTS[@]}" --tol 1e-9 --no-bounds >"$T/nc.json" 2>"$T/nc.err"
rc=$?
[ $rc -eq 0 ] && json "$T/nc.json" 'r["converged"] is False and r["stopped"] == "max_grids" and "br_cost_pursuer" not in r' >/dev/null \
    && grep -q "^difgames certify: not converged\|^certify: not converged" "$T/nc.err" \
    && ok "not converged: exit 0, converged false, a line on stderr" || bad "not converged: exit $rc, $(cat "$T/nc.err" | tail -3)"

# ---------------------------------------------------------------- gust: an input nobody learns
gust() {  # gust NAME DECLARATION: a point on a line, x' = x + dt (u + w), the wind w learned by no one
    cfg "$1" "game: model\nseed: 0\nmodel:\n  name: gust\n  compile: false\n  state: {x: [-2, 2]}\n  inputs:\n    u: {dim: 1, lo: -1, hi: 1, role: min}\n    w: {dim: 1, lo: -0.5, hi: 0.5, role: max, learned: false$2}\n  dynamics: {x: u + w}\n  observe: [x]\n  costs: {dist: x^2}\n  reset:\n    - {x: [0.5, 1.0]}\nenv: {dt: 0.1, horizon: 10}\nloss: {dist: 1.0}\npolicy: {hidden: [8]}\ntrain: {batch: 32, epochs: 100, lr: 0.01, snapshots: []}\n"
}
GA=$(gust ga ", play: adversarial")
GH=$(gust gh ", play: hold, hold: 0.2")
GU=$(gust gu "")
"$DG" train --config "$GU" --out "$T/gust" --quiet >/dev/null 2>"$T/err" || bad "train gust: $(tail -1 "$T/err")"
CK=$T/gust/final.safetensors
"$DG" certify --config "$GA" --ckpt "$CK" --episodes 8 --tol 0.005 --csv "$T/ga.csv" >"$T/ga.json" 2>"$T/ga.err" \
    || bad "certify gust (adversarial): $(tail -2 "$T/ga.err")"
out=$(json "$T/ga.json" 'r["players"] == 1 and r["inputs"] == {"w": {"play": "adversarial", "held_in_training": [0]}}
    and r["policy_cost"] > r["policy_cost_held"] and r["policy_cost"] >= 0.999 * r["value_upper"]
    and r["value_upper"] >= r["value_lower"] and "plan_cost" not in r and r["converged"] is True') \
    && ok "adversarial wind: the policy against the grid's answer, above its held cost" || bad "adversarial: $out $(cat "$T/ga.json")"
head -1 "$T/ga.csv" | grep -qx 'x,value_upper,value_lower,policy_cost,gap,abs_gap,plan_cost,policy_cost_held' \
    && ok "--csv of a model file: its state's names" || bad "gust --csv: $(head -1 "$T/ga.csv")"
grep -q "the input 'w' (no learned player): adversarial" "$T/ga.err" && ok "stderr: how the wind was played" \
    || bad "gust stderr: $(cat "$T/ga.err")"
"$DG" certify --config "$GH" --ckpt "$CK" --episodes 8 --tol 0.002 --plan-iters 100 --csv "$T/gh.csv" >"$T/gh.json" \
    2>"$T/gh.err" || bad "certify gust (held): $(tail -2 "$T/gh.err")"
out=$(json "$T/gh.json" 'r["inputs"] == {"w": {"play": "hold", "held": [0.2]}} and r["value_upper"] == r["value_lower"]
    and r["plan_cost"] <= r["policy_cost"] + 1e-9 and "policy_cost_held" not in r') \
    && ok "held wind: one value, the plan bound" || bad "held: $out $(cat "$T/gh.json")"
# the held game's exact value: x' the point of [x + dt (h - 1), x + dt (h + 1)] nearest 0, cost x'^2 / H
$PY - "$T/gh.csv" <<'PY' && ok "held wind: the grid's value within 1 % of the exact one, the plans above it" \
    || bad "held wind against the exact value"
import csv, sys
for row in csv.DictReader(open(sys.argv[1])):
    x, s = float(row["x"]), 0.0
    for _ in range(10):
        a, b = x + 0.1 * (0.2 - 1), x + 0.1 * (0.2 + 1)
        x = a if a > 0 else b if b < 0 else 0.0
        s += x * x / 10
    assert abs(float(row["value_upper"]) - s) < 0.01 * s, (row, s)
    assert float(row["plan_cost"]) >= s - 1e-6 and float(row["policy_cost"]) >= s - 1e-6, (row, s)
PY

# ---------------------------------------------------------------- refusals: one line, exit 2
HOVER=$(dirname "$DG")/examples/hover.so
CH=$(cfg ch "game: chase\nenv: {evader: policy, walls: false, horizon: 5}\npolicy: {hidden: [8]}\n")
"$DG" train --config "$CH" --epochs 1 --out "$T/ch" --quiet >/dev/null 2>&1 || bad "train chase"
BI=$(cfg bi "game: billiards\n")
RN=$(cfg rn "game: reach\nenv: {noise: 0.5}\n")
run_rows "" "" \
    "an input nobody declared|the input 'w' of gust is played by no learned player: declare how (model.inputs.w.play|certify --config $GU --ckpt $CK" \
    "a game without per-row costs|does not declare its costs per row (dg_game.step_cost_rows)|certify --plugin $HOVER --config examples/hover.yaml --ckpt $CK" \
    "an open-loop game|is played by an open-loop plan|certify --config $BI --ckpt $CK" \
    "a noisy game (env.noise)|$RN: reach has Brownian noise (env.noise > 0)|certify --config $RN --ckpt $CK" \
    "a noisy game (merton)|configs/merton.yaml: merton has Brownian noise|certify --config configs/merton.yaml --ckpt $CK" \
    "a model file's diffusion|has Brownian noise (model.diffusion)|certify --config configs/models/merton_noise.yaml --ckpt $CK" \
    "a general-sum game|configs/fishwar.yaml: fishwar is a general-sum game|certify --config configs/fishwar.yaml --ckpt $CK" \
    "--box of the wrong size|--box -1,1: chase's value state has 4 axes: give 8 numbers|certify --config $CH --ckpt $T/ch/final.safetensors --box -1,1" \
    "--box upside down|a low end below each high one|certify --config $GA --ckpt $CK --box 1,-1" \
    "--tol with --hji|--tol applies to the learner's own game: not with --hji|certify --config $DS --ckpt $CK --hji configs/hji/duel_simple_time.yaml --tol 0.1" \
    "--no-exploit without --hji|--no-exploit applies to --hji's continuous-time game|certify --config $DS --ckpt $CK --no-exploit" \
    "--tol 0|--tol|certify --config $DS --ckpt $CK --tol 0" \
    "--max-grids 2|--max-grids|certify --config $DS --ckpt $CK --max-grids 2"
finish
