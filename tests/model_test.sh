#!/usr/bin/env bash
# Model files (docs/models.md), end to end: configs/models/reach.yaml is the same game as
# configs/reach.yaml (eval of one checkpoint from the same initial states gives the same loss, terms
# and gradients to 1e-5 relative), its gradients pass the finite-difference check, and train,
# replay and bench run it from the command line.
# usage: model_test.sh path/to/difgames repo_root
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
B=configs/reach.yaml
M=configs/models/reach.yaml
export XDG_CACHE_HOME=$T/cache      # the compiled expressions' cache, here private to the test

"$DG" train --config $B --epochs 5 --batch 8 --out "$T/b" --quiet >/dev/null || bad "train the built-in reach"
CK=$T/b/final.safetensors
same() {  # same NAME ARGS...: eval of both configs with ARGS, compared
    local name=$1
    shift
    "$DG" eval --config $B --ckpt "$CK" --grad-out "$T/gb.safetensors" "$@" >"$T/eb.json" 2>"$T/err" || { bad "$name: eval built-in: $(cat "$T/err")"; return; }
    "$DG" eval --config $M --ckpt "$CK" --grad-out "$T/gm.safetensors" "$@" >"$T/em.json" 2>"$T/err" || { bad "$name: eval model: $(cat "$T/err")"; return; }
    if out=$(/usr/bin/python3 - "$T" <<'PY' 2>&1
import json, math, struct, sys
t = sys.argv[1]
def load(path):  # {name: [floats]} of an F32 safetensors file
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    head = json.loads(raw[8:8 + n])
    head.pop("__metadata__", None)
    out = {}
    for k, v in head.items():
        a, b = v["data_offsets"]
        out[k] = struct.unpack(f"<{(b - a) // 4}f", raw[8 + n + a:8 + n + b])
    return out
eb, em = json.load(open(t + "/eb.json")), json.load(open(t + "/em.json"))
for k in ("loss", "goal", "collision", "energy"):
    a, b = eb[k], em[k]
    if abs(a - b) > 1e-5 * max(abs(a), 1e-6):
        sys.exit(f"{k}: built-in {a} model {b}")
gb, gm = load(t + "/gb.safetensors"), load(t + "/gm.safetensors")
if sorted(gb) != sorted(gm):
    sys.exit(f"parameter names differ: {sorted(gb)} vs {sorted(gm)}")
worst = 0.0
for k in gb:
    a, b = gb[k], gm[k]
    norm = math.sqrt(sum(x * x for x in a)) or 1.0
    err = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b))) / norm
    worst = max(worst, err)
    if err > 1e-5:
        sys.exit(f"gradient of {k}: relative error {err:.3g}")
print(f"loss {eb['loss']} vs {em['loss']}, collision {eb['collision']}, worst gradient error {worst:.2g}")
PY
    ); then ok "$name: $out"; else bad "$name: $out"; fi
}
same "reach = models/reach: --init" --init examples/reach_states.safetensors
same "reach = models/reach: 64 drawn states" --batch 64 --seed 7
# the compiled expressions: generated from the parsed expressions (libmatheval's canonical strings,
# not the file's text), kept for inspection in a folder closed to others; the interpreter agrees
C=$T/cache/difgames/models
if ls "$C"/*.cpp >/dev/null 2>&1 && ls "$C"/*.so >/dev/null 2>&1 && [ "$(stat -c %a "$C")" = 700 ]; then
    ok "compiled into a private cache folder ($(ls "$C" | wc -l) files)"
else bad "no compiled model in $C: $(ls -la "$C" 2>&1 | head -5)"; fi
# every file the cache writes (the source, the compiler's log, the object) goes through the one safe
# writer: a symbolic link planted at its name, or at its temporary name <name>.tmp.<pid> (the pid known
# by exec), is replaced, never written through; the file it points to keeps its bytes (issue 24)
XC=$T/xcache/difgames/models
XDG_CACHE_HOME=$T/xcache "$DG" eval --config $M --ckpt "$CK" --batch 4 >/dev/null 2>"$T/err" || bad "eval into a new cache: $(cat "$T/err")"
h=$(basename "$(ls "$XC"/*.so 2>/dev/null | head -1)" .so)
for kind in cpp log so; do
    for at in name temporary; do
        rm -rf "${XC:?}"/*
        printf 'precious\n' >"$T/victim"
        if [ $at = name ]; then ln -s "$T/victim" "$XC/$h.$kind"; fi
        XDG_CACHE_HOME=$T/xcache sh -c '[ "$1" = name ] || ln -s "$2" "$3.tmp.$$" || exit 9; shift 3; exec "$@"' \
            sh $at "$T/victim" "$XC/$h.$kind" "$DG" eval --config $M --ckpt "$CK" --batch 4 >/dev/null 2>"$T/err"
        rc=$?
        if [ -z "$h" ]; then bad "no compiled object in $XC"; break 2
        elif [ $rc -ne 0 ]; then bad "a link at the $kind's $at: exit $rc: $(cat "$T/err")"
        elif [ "$(cat "$T/victim")" != precious ]; then bad "a link at the $kind's $at: the file it points to was written"
        elif [ -L "$XC/$h.$kind" ] || [ ! -f "$XC/$h.$kind" ] || [ ! -f "$XC/$h.so" ]; then
            bad "a link at the $kind's $at: $(ls -la "$XC" | tr '\n' ' ')"
        elif ls "$XC" | grep -qE 'tmp|build'; then bad "a link at the $kind's $at: left $(ls "$XC" | grep -E 'tmp|build')"
        else ok "a link planted at the cache's $kind $at: replaced, what it points to untouched"; fi
    done
done
grep -qF 'return N((((x-gx)^2)+((y-gy)^2))).v;' "$C"/*.cpp && ! grep -qF '(x - gx)^2 + (y - gy)^2' "$C"/*.cpp \
    && ok "the source is generated from the parsed expression, not pasted from the file" \
    || bad "the goal cost's function is not the canonical string in $(ls "$C"/*.cpp)"
sed 's/^  name: reach$/  name: reach\n  compile: false/' $M >"$T/interp.yaml"
"$DG" eval --config "$T/interp.yaml" --ckpt "$CK" --batch 64 --seed 7 >"$T/ei.json" 2>"$T/err" || bad "eval interpreted: $(cat "$T/err")"
/usr/bin/python3 - "$T/em.json" "$T/ei.json" <<'PY' && ok "interpreted (model.compile: false) = compiled" || bad "interpreted differs from compiled"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
sys.exit(0 if all(abs(a[k] - b[k]) <= 1e-6 * max(1e-6, abs(a[k])) for k in ("loss", "goal", "collision", "energy")) else 1)
PY
chmod 755 "$C"
rm -f "$C"/*.so
"$DG" eval --config $M --ckpt "$CK" --batch 64 --seed 7 >"$T/eo.json" 2>"$T/err" && ! ls "$C"/*.so >/dev/null 2>&1 \
    && cmp -s "$T/eo.json" "$T/ei.json" && ok "a cache folder open to others is not used: interpreted, same result" \
    || bad "open cache: $(cat "$T/err") $(ls "$C")"
chmod 700 "$C"
if /usr/bin/python3 -c "import json,sys; sys.exit(0 if json.load(open('$T/em.json'))['collision'] > 0 else 1)"; then
    ok "the drawn states reach the obstacle (collision > 0)"
else bad "the drawn states never reach the obstacle: the collision term is untested"; fi

"$DG" gradcheck --config $M >"$T/gc.txt" 2>&1 && grep -q "gradcheck passed" "$T/gc.txt" \
    && ok "gradcheck of the model game (finite differences)" || bad "gradcheck: $(tail -3 "$T/gc.txt")"
"$DG" train --config $M --epochs 5 --batch 8 --out "$T/m" --quiet >/dev/null 2>"$T/err" && [ -s "$T/m/final.safetensors" ] \
    && ok "train a model" || bad "train a model: $(cat "$T/err")"
"$DG" replay --config $M --ckpt "$T/m/final.safetensors" --out "$T/m.gif" >/dev/null 2>"$T/err" && [ -s "$T/m.gif" ] \
    && ok "replay a model" || bad "replay a model: $(cat "$T/err")"
"$DG" bench --config $M --epochs 2 --warmup 1 --batch 8 >"$T/bench.txt" 2>"$T/err" && grep -q ms_per_epoch "$T/bench.txt" \
    && ok "bench a model" || bad "bench a model: $(cat "$T/err")"
# a model game is named as its file says (model.name), with "source":"model" where a built-in could
# have the name: train's and eval's JSON, and loss.png's title (a model called reach: the built-in
# reach's title, pixel for pixel; one called cart: another)
PNG="/usr/bin/python3 $(dirname "$0")/viewer_png.py"
grep -q '^{"game":"reach","source":"builtin",' "$T/eb.json" && grep -q '^{"game":"reach","source":"model",' "$T/em.json" \
    && ok "eval's JSON: the model's name and source" || bad "eval JSON: $(head -c 80 "$T/eb.json") / $(head -c 80 "$T/em.json")"
sed 's/^  name: reach$/  name: cart/' $M >"$T/cart.yaml"
"$DG" train --config "$T/cart.yaml" --epochs 2 --batch 8 --out "$T/cart" >"$T/ct.json" 2>"$T/err" \
    && grep -q '^{"game":"cart","source":"model",' "$T/ct.json" && grep -q '^training cart: ' "$T/err" \
    && ok "train: model.name cart in the JSON and the progress" || bad "train cart: $(cat "$T/ct.json" "$T/err" | head -c 300)"
"$DG" eval --config "$T/cart.yaml" --ckpt "$CK" --batch 8 >"$T/ce.json" 2>"$T/err" && grep -q '^{"game":"cart","source":"model",' "$T/ce.json" \
    && ok "eval: model.name cart" || bad "eval cart: $(cat "$T/ce.json" "$T/err" | head -c 300)"
title() { $PNG "$1" box 0 0 800 28; }  # loss.png's title band
"$DG" train --config $B --epochs 2 --batch 8 --out "$T/bt" --quiet >/dev/null 2>&1 || bad "train the built-in reach"
"$DG" train --config $M --epochs 2 --batch 8 --out "$T/mt" --quiet >/dev/null 2>&1 || bad "train the model reach"
[ "$(title "$T/mt/loss.png")" = "$(title "$T/bt/loss.png")" ] && [ "$(title "$T/cart/loss.png")" != "$(title "$T/bt/loss.png")" ] \
    && ok "loss.png's title: the model's name (reach's pixels for a model called reach, others for cart)" \
    || bad "loss.png's title does not carry the model's name"
# dubins: 5 steps, as float32 central differences through 10 turns of cos/sin stray past 1e-3
# whatever the step (eps 0.2 to 0.02 move the numeric value on both sides of backward's)
for g in dubins tag gust; do
    "$DG" gradcheck --config configs/models/$g.yaml --horizon 5 >"$T/gc.txt" 2>&1 && grep -q "gradcheck passed" "$T/gc.txt" \
        && ok "gradcheck of configs/models/$g.yaml" || bad "gradcheck $g: $(tail -3 "$T/gc.txt")"
    "$DG" train --config configs/models/$g.yaml --epochs 3 --batch 8 --out "$T/$g" --quiet >/dev/null 2>"$T/err" \
        && ok "train configs/models/$g.yaml" || bad "train $g: $(cat "$T/err")"
done
# the grid solver: configs/models/{pursuit2d,air3d}.yaml give the built-in games' values to 1e-9
# (air3d on a coarser grid, set alike in both files, to keep the test short)
hji_same() {  # hji_same NAME BUILT_IN MODEL: hji solve of both configs, values compared
    local g=$1
    "$DG" hji solve --config "$2" --out "$T/hb.safetensors" --slices 1 >/dev/null 2>"$T/err" || { bad "hji $g built-in: $(tail -1 "$T/err")"; return; }
    "$DG" hji solve --config "$3" --out "$T/hm.safetensors" --slices 1 >/dev/null 2>"$T/err" || { bad "hji $g model: $(tail -1 "$T/err")"; return; }
    if out=$(/usr/bin/python3 - "$T/hb.safetensors" "$T/hm.safetensors" <<'PY' 2>&1
import json, struct, sys
def load(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    v = json.loads(raw[8:8 + n])["value"]
    a, b = v["data_offsets"]
    return struct.unpack(f"<{(b - a) // 8}d", raw[8 + n + a:8 + n + b])
a, b = load(sys.argv[1]), load(sys.argv[2])
d = max(abs(x - y) for x, y in zip(a, b))
if len(a) != len(b) or d > 1e-9:
    sys.exit(f"{len(a)} vs {len(b)} nodes, max difference {d:.3g}")
print(f"{len(a)} nodes, max difference {d:.2g}")
PY
    ); then ok "hji $g = its model: $out"; else bad "hji $g: $out"; fi
}
sed 's/^t_end:.*/t_end: 1.0/' configs/hji/pursuit2d.yaml >"$T/hb.yaml"
sed 's/^t_end:.*/t_end: 1.0/' configs/models/pursuit2d.yaml >"$T/hm.yaml"
hji_same pursuit2d "$T/hb.yaml" "$T/hm.yaml"
AIR='s/^  n: \[51, 40, 50\]/  n: [26, 20, 25]/; s/^t_end:.*/t_end: 1.0/'
sed "$AIR" configs/hji/air3d.yaml >"$T/hb.yaml"
sed "$AIR" configs/models/air3d.yaml >"$T/hm.yaml"
hji_same air3d "$T/hb.yaml" "$T/hm.yaml"
# hji plot of the model's value is the built-in's picture: its title names air3d (model.name) and its
# axes x, y as the state does (not x0, x1); the value file says the game comes from a model file
"$DG" hji plot --value "$T/hb.safetensors" --out "$T/hb.png" 2>"$T/err" || bad "hji plot built-in air3d: $(cat "$T/err")"
"$DG" hji plot --value "$T/hm.safetensors" --out "$T/hm.png" 2>"$T/err" || bad "hji plot model air3d: $(cat "$T/err")"
cmp -s "$T/hb.png" "$T/hm.png" && ok "hji plot of configs/models/air3d.yaml: the built-in's picture (names, axes x, y)" \
    || bad "hji plot: the model's picture differs from the built-in's"
grep -aq '"source":"model"' "$T/hm.safetensors" && grep -aq '"axes":"x,y,psi"' "$T/hm.safetensors" \
    && ok "the model's value file: source model, axes x,y,psi" || bad "value metadata: $(head -c 600 "$T/hm.safetensors" | tr -cd '[:print:]' | tail -c 300)"
# a game of degree: the model's dynamics and target under pursuit2d_time's payoff keys
(sed -n '/^game:/,/^  target/p' configs/models/pursuit2d.yaml
 grep -v '^game\|^speed\|^capture' configs/hji/pursuit2d_time.yaml) >"$T/hm.yaml"
hji_same "pursuit2d_time (time to reach, stationary)" configs/hji/pursuit2d_time.yaml "$T/hm.yaml"
"$DG" hji solve --config configs/models/dubins.yaml --out "$T/dub.safetensors" --slices 2 --accuracy low >/dev/null 2>"$T/err" \
    && ok "hji solve of the Dubins reach-avoid model" || bad "hji dubins: $(tail -1 "$T/err")"
printf 'game: model\nmodel:\n  state: {x: [-1, 1]}\n  inputs: {u: {dim: 1}}\n  dynamics: {x: u^2}\n  target: x\n' >"$T/nonaffine.yaml"
"$DG" hji solve --config "$T/nonaffine.yaml" --out "$T/never.safetensors" >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q "nonaffine.yaml:5: key 'model.dynamics.x': not affine in the inputs" "$T/err" \
    && ok "a dynamics not affine in the inputs is refused by the grid solver" || bad "non-affine: $(cat "$T/err")"
# a terminal cost (model.costs.terminal): once, on the final state, weighted by loss.<name>. Against
# the same game without it: the loss grows by exactly the weight times the final state's mean cost
# (a metric of the same expression), and nothing else moves
sed -e 's/^    mean_final_dist: .*/&\n    final_d2: (x - gx)^2 + (y - gy)^2/' $M >"$T/noterm.yaml"
sed -e 's/^    energy: u1^2 + u2^2$/&\n    terminal: {final: (x - gx)^2 + (y - gy)^2}/' -e 's/^  energy: 0.01$/&\n  final: 3.0/' \
    "$T/noterm.yaml" >"$T/term.yaml"
"$DG" eval --config "$T/noterm.yaml" --ckpt "$CK" --batch 64 --seed 7 >"$T/en.json" 2>"$T/err" || bad "eval without a terminal cost: $(cat "$T/err")"
"$DG" eval --config "$T/term.yaml" --ckpt "$CK" --batch 64 --seed 7 >"$T/et.json" 2>"$T/err" || bad "eval with a terminal cost: $(cat "$T/err")"
if out=$(/usr/bin/python3 - "$T/en.json" "$T/et.json" <<'PY' 2>&1
import json, sys
n, t = (json.load(open(p)) for p in sys.argv[1:3])
want = 3.0 * n["final_d2"]
for k in ("goal", "collision", "energy", "final_d2"):
    if n[k] != t[k]: sys.exit(f"{k} moved: {n[k]} vs {t[k]}")
if abs(t["final"] - want) > 1e-6 * want: sys.exit(f"term final {t['final']}, want 3 x {n['final_d2']} = {want}")
if abs(t["loss"] - n["loss"] - want) > 1e-6 * t["loss"]: sys.exit(f"loss {t['loss']} - {n['loss']} != {want}")
print(f"loss {n['loss']} + 3 x {n['final_d2']} = {t['loss']}")
PY
); then ok "a terminal cost counts once, on the final state: $out"; else bad "terminal cost: $out"; fi
# its gradients: finite differences (terminal costs of a size the float32 check resolves: a term 20 times
# the rest leaves central differences of the loss a few ulps of it, above the 1e-3 tolerance)
sed 's/^    terminal: {final: .*/    terminal: {final: 0.1*sqrt((x - gx)^2 + (y - gy)^2 + 0.01), speed: 0.1*(vx^2 + vy^2)}/' \
    "$T/term.yaml" >"$T/term_fd.yaml"
"$DG" gradcheck --config "$T/term_fd.yaml" >"$T/gc.txt" 2>&1 && grep -q "gradcheck passed" "$T/gc.txt" \
    && ok "gradcheck of terminal costs (finite differences)" || bad "gradcheck terminal: $(tail -3 "$T/gc.txt")"
# checkpointed BPTT (segments of 7 steps) gives the full tape's loss to the bit with a terminal cost
sed 's/^  checkpoint_every: 0/  checkpoint_every: 7/' "$T/term.yaml" >"$T/term_ck.yaml"
"$DG" train --config "$T/term.yaml" --epochs 3 --batch 8 --out "$T/tf" --quiet >"$T/tf.json" 2>"$T/err" || bad "train terminal: $(cat "$T/err")"
"$DG" train --config "$T/term_ck.yaml" --epochs 3 --batch 8 --out "$T/tc" --quiet >"$T/tc.json" 2>"$T/err" || bad "train terminal ck: $(cat "$T/err")"
a=$(grep -o '"final_loss":[^,]*' "$T/tf.json"); b=$(grep -o '"final_loss":[^,]*' "$T/tc.json")
[ -n "$a" ] && [ "$a" = "$b" ] && ok "terminal cost under checkpointed BPTT: the same loss ($a)" || bad "checkpointed: $a vs $b"
# the grid solver: payoff: cost from the model's costs (running and terminal) is the linear game's
# x'Qx + x'Q_T x with box inputs, to 1e-9 (dt 1/16 and horizon 16: t_end and the scale 1/(H dt) are 1).
# WENO5 (veryHigh): the library's x'Q_T x contracts to fused multiply-adds (-ffp-contract=fast), the
# model's compiled terminal cost does not, and the second-order ENO's stencil choice turns that last bit
# of v0 into differences of 2e-4
cat >"$T/lin.yaml" <<'Y'
game: linear
dynamics: {A: [0, 1, 0, 0]}
control: {set: box, matrix: [0, 1], bound: 1}
disturbance: {set: box, matrix: [0, 1], bound: 0.5}
payoff: cost
cost: {state: [1, 0, 0, 1], terminal: [1, 0, 0, 1]}
t_end: 1.0
accuracy: veryHigh
grid: {min: [-2, -2], max: [2, 2], n: [41, 41]}
Y
cat >"$T/linm.yaml" <<'Y'
game: model
model:
  state: {x1: [-2, 2], x2: [-2, 2]}
  inputs:
    u: {dim: 1, lo: -1, hi: 1, role: min}
    d: {dim: 1, lo: -0.5, hi: 0.5, role: max}
  dynamics: {x1: x2, x2: u + d}
  costs:
    run: x1^2 + x2^2
    terminal: {fin: x1^2 + x2^2}
env: {dt: 0.0625, horizon: 16}
payoff: cost
accuracy: veryHigh
grid: {n: [41, 41]}
Y
hji_same "payoff: cost (running and terminal costs of a model)" "$T/lin.yaml" "$T/linm.yaml"
# an input cost the grid cannot hold is refused: a linear term in u
sed 's/^    run: x1^2 + x2^2/    run: x1^2 + x2^2 + x1*u/' "$T/linm.yaml" >"$T/linbad.yaml"
"$DG" hji solve --config "$T/linbad.yaml" --out "$T/never.safetensors" >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q "linbad.yaml:[0-9]*: key 'model.costs': payoff: cost needs running costs of the form" "$T/err" \
    && ok "a running cost not of the form L(x) + a |u|^2 is refused" || bad "linear input cost: $(cat "$T/err")"
# certify --hji: reach on a coarse 4-D HJI grid against its own loss (payoff: cost, the same file as --hji); the policy of 5 epochs is far
# from the value, a gap the table and the JSON line report
sed 's/^grid: {n: \[31, 31, 21, 21\]}/grid: {n: [9, 9, 7, 7]}/' $M >"$T/rc.yaml"
"$DG" certify --config "$T/rc.yaml" --hji "$T/rc.yaml" --ckpt "$CK" --episodes 16 --plot "$T/rc.png" >"$T/rc.json" 2>"$T/err" \
    || bad "certify reach: $(tail -2 "$T/err")"
if out=$(/usr/bin/python3 - "$T/rc.json" <<'PY' 2>&1
import json, sys
r = json.load(open(sys.argv[1]))
if r["episodes"] != 16 or not (r["value_mean"] > 0) or not (r["gap"] > 0.5): sys.exit(f"{r}")
print(f"V {r['value_mean']:.4g}, policy {r['policy_cost_mean']:.4g}, gap {100 * r['gap']:.0f} %")
PY
); then ok "certify reach (payoff: cost, a model file): $out"; else bad "certify reach: $out"; fi
grep -q '^{"game":"reach","source":"model",' "$T/rc.json" && ok "certify's JSON: the model's name and source" \
    || bad "certify JSON: $(head -c 100 "$T/rc.json")"
[ -s "$T/rc.png" ] && ok "certify --plot" || bad "certify --plot wrote nothing"
finish
