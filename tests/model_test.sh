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
# dubins: 5 steps, as float32 central differences through 10 turns of cos/sin stray past 1e-3
# whatever the step (eps 0.2 to 0.02 move the numeric value on both sides of backward's)
for g in dubins tag; do
    "$DG" gradcheck --config configs/models/$g.yaml --horizon 5 >"$T/gc.txt" 2>&1 && grep -q "gradcheck passed" "$T/gc.txt" \
        && ok "gradcheck of configs/models/$g.yaml" || bad "gradcheck $g: $(tail -3 "$T/gc.txt")"
    "$DG" train --config configs/models/$g.yaml --epochs 3 --batch 8 --out "$T/$g" --quiet >/dev/null 2>"$T/err" \
        && ok "train configs/models/$g.yaml" || bad "train $g: $(cat "$T/err")"
done
finish
