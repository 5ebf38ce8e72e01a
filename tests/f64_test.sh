#!/usr/bin/env bash
# train.precision: f64 end to end: the command hands an f64 config to its double copy; the run's
# checkpoints are F64; eval, replay and gradcheck work on it; f32 and f64 agree to float rounding
# on a short episode; the same seed gives the same bits; a resume in the other precision is
# refused with one line (exit 2); an f64 checkpoint loads into an f32 eval (converted); the config is
# read once (the float copy hands it to the double copy); train --seeds of an f64 config runs f64.
# usage: f64_test.sh path/to/difgames repo_root
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
R=configs/reach.yaml
dtype() { python3 -c "import json,struct,sys; b=open(sys.argv[1],'rb').read(); n=struct.unpack('<Q',b[:8])[0]; \
print(' '.join(sorted({v['dtype'] for k,v in json.loads(b[8:8+n]).items() if k!='__metadata__'})))" "$1"; }
loss() { python3 -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['final_loss'])"; }

# a short f64 run, its files, and the same run again: the same bits
for k in a b; do
    "$DG" train --config $R --epochs 3 --batch 16 --precision f64 --threads 2 --quiet --out "$T/r64$k" >"$T/out$k" 2>"$T/err" \
        || bad "train f64 ($k): $(head -c 300 "$T/err")"
done
[ "$(dtype "$T/r64a/final.safetensors")" = F64 ] && ok "f64 run: F64 checkpoint" || bad "f64 run: dtype $(dtype "$T/r64a/final.safetensors")"
[ "$(dtype "$T/r64a/resume.safetensors")" = F64 ] && ok "f64 run: F64 resume file" || bad "f64 resume file"
cmp -s "$T/r64a/final.safetensors" "$T/r64b/final.safetensors" && ok "f64: same seed, same shards, same bits" \
    || bad "f64: two runs of one seed differ"

# f32 and f64: the first epoch's loss (the initial policy's) agrees to float rounding
l32=$("$DG" train --config $R --epochs 1 --quiet --out "$T/e32" 2>/dev/null | loss)
l64=$("$DG" train --config $R --epochs 1 --precision f64 --quiet --out "$T/e64" 2>/dev/null | loss)
python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); sys.exit(0 if abs(a-b)<=1e-6*abs(b) and a!=b else 1)" "$l32" "$l64" \
    && ok "f32 $l32 and f64 $l64 agree to float rounding" || bad "f32 $l32 vs f64 $l64"

# eval and replay of the f64 run (its config says f64), and gradcheck at a step float32 cannot take
"$DG" eval --config $R --precision f64 --ckpt "$T/r64a/final.safetensors" --batch 8 >"$T/out" 2>"$T/err" \
    && grep -q '"loss"' "$T/out" && ok "eval of an f64 run" || bad "eval f64: $(head -c 300 "$T/err")"
sed 's/^train:/train:\n  precision: f64/' $R >"$T/reach64.yaml"
"$DG" replay --config "$T/reach64.yaml" --ckpt "$T/r64a/final.safetensors" --frames 5 --out "$T/r.gif" >"$T/out" 2>"$T/err" \
    && [ -s "$T/r.gif" ] && ok "replay of an f64 run" || bad "replay f64: $(head -c 300 "$T/err")"
"$DG" eval --config $R --ckpt "$T/r64a/final.safetensors" --batch 8 >"$T/out" 2>"$T/err" \
    && ok "an f64 checkpoint in an f32 eval (converted)" || bad "f32 eval of an f64 checkpoint: $(head -c 300 "$T/err")"
"$DG" gradcheck --config configs/racing.yaml --eps 1e-4 --tol 1e-5 --precision f64 >"$T/out" 2>"$T/err" \
    && ok "gradcheck racing, f64, eps 1e-4, tol 1e-5" || bad "gradcheck f64: $(tail -3 "$T/out")"

# a resume goes on in the precision of the run's own config; a resume file whose tensors are of the
# other precision (here an f64 run's rewritten as F32) is refused: one line, exit 2
"$DG" train --config $R --epochs 2 --batch 8 --quiet --out "$T/r32" >/dev/null 2>&1 || bad "train f32"
"$DG" train --resume "$T/r32" --epochs 3 --quiet >/dev/null 2>"$T/err" && [ "$(dtype "$T/r32/final.safetensors")" = F32 ] \
    && ok "f32 resume stays f32" || bad "f32 resume: $(head -c 300 "$T/err")"
cp -r "$T/r64a" "$T/r64x"
python3 - "$T/r64x/resume.safetensors" <<'PY'
import json, struct, sys
b = open(sys.argv[1], 'rb').read(); n = struct.unpack('<Q', b[:8])[0]; h = json.loads(b[8:8 + n]); body = b[8 + n:]
out, off = bytearray(), 0
for k, v in h.items():
    if k == '__metadata__': continue
    s, e = v['data_offsets']; raw = body[s:e]
    if v['dtype'] == 'F64':
        raw = struct.pack('<%df' % (len(raw) // 8), *struct.unpack('<%dd' % (len(raw) // 8), raw)); v['dtype'] = 'F32'
    v['data_offsets'] = [off, off + len(raw)]; out += raw; off += len(raw)
hd = json.dumps(h).encode(); hd += b' ' * (-len(hd) % 8)
open(sys.argv[1], 'wb').write(struct.pack('<Q', len(hd)) + hd + out)
PY
"$DG" train --resume "$T/r64x" --epochs 4 --quiet >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 2 ] && grep -q "train.precision: f32 run's resume file, but this run is f64" "$T/err" && [ "$(wc -l <"$T/err")" -eq 1 ] \
    && ok "F32 resume file in an f64 run: refused (exit 2)" || bad "F32 resume file in an f64 run: exit $rc: $(head -c 300 "$T/err")"
# and in its own precision it goes on
"$DG" train --resume "$T/r64a" --epochs 4 --quiet >"$T/out" 2>"$T/err" || bad "f64 resume: $(head -c 300 "$T/err")"
"$DG" train --config $R --epochs 4 --batch 16 --precision f64 --threads 2 --quiet --out "$T/r64c" >/dev/null 2>&1
cmp -s "$T/r64a/final.safetensors" "$T/r64c/final.safetensors" && ok "f64 resume: the bits of a run never stopped" \
    || bad "f64 resumed run differs from one never stopped"

# the config is read once on the way in: the float copy reads it, learns train.precision and hands an
# f64 config to the double copy, which reads nothing again (tests/plugins/count_opens.c counts the opens
# of a file; the sweep's run reads it once more, as every run of a sweep does)
opens() {  # FILE-SUFFIX COMMAND...: the opens of files ending FILE-SUFFIX while the command runs
    local want=$1
    shift
    rm -f "$T/opens"
    LD_PRELOAD="$B/tests/plugins/count_opens.so" DG_COUNT_OPENS="$want" DG_COUNT_OPENS_OUT="$T/opens" \
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" "$@" >/dev/null 2>"$T/err" || echo "exit $?"
    awk '{n += $2} END {print n + 0}' "$T/opens" 2>/dev/null || echo 0
}
B=$(dirname "$DG")
n=$(opens /reach64.yaml "$DG" train --config "$T/reach64.yaml" --epochs 1 --batch 4 --quiet --out "$T/o1")
[ "$n" = 1 ] && ok "train of an f64 config: the config read once" || bad "train f64: the config read $n times"
n=$(opens /reach.yaml "$DG" train --config $R --epochs 1 --batch 4 --quiet --out "$T/o2")
[ "$n" = 1 ] && ok "train of an f32 config: the config read once" || bad "train f32: the config read $n times"
n=$(opens /reach64.yaml "$DG" eval --config "$T/reach64.yaml" --ckpt "$T/r64a/final.safetensors" --batch 4)
[ "$n" = 1 ] && ok "eval of an f64 config: the config read once" || bad "eval f64: the config read $n times"
n=$(opens /reach.yaml "$DG" sweep --config $R --set train.precision=f64 --set train.epochs=1 --quiet --out "$T/o3")
[ "$n" = 2 ] && ok "sweep of an f64 setting: the config read once, and once by its run" \
    || bad "sweep f64: the config read $n times (want 2: the check, the run)"
# train --seeds of an f64 config trains in the double copy too (each seed's run F64)
"$DG" train --config $R --seeds 1,2 --epochs 2 --batch 4 --precision f64 --quiet --out "$T/s64" >"$T/out" 2>"$T/err" \
    && [ "$(dtype "$T/s64/seed_2/final.safetensors")" = F64 ] && ok "train --seeds of an f64 config: F64 runs" \
    || bad "train --seeds f64: $(head -c 300 "$T/err")"

# a game plugin is of one precision: compiled with -DDG_F64 for an f64 run; the other refused (one line)
sed 's/^train:/train:\n  precision: f64/' examples/hover.yaml >"$T/hover64.yaml"
if cc -shared -fPIC -O2 -DDG_GAME_PLUGIN -DDG_F64 -I include -I "$B/include" -o "$T/hover64.so" examples/game_hover.c \
        2>"$T/err"; then
    "$DG" train --config "$T/hover64.yaml" --plugin "$T/hover64.so" --epochs 2 --quiet --out "$T/h64" >/dev/null 2>"$T/err" \
        && ok "an f64 plugin in an f64 run" || bad "f64 plugin: $(head -c 300 "$T/err")"
    "$DG" train --config examples/hover.yaml --plugin "$T/hover64.so" --epochs 2 --quiet --out "$T/h32" >/dev/null 2>"$T/err"
    rc=$?
    [ $rc -eq 2 ] && grep -q "built for the f64 tape, this run's is f32" "$T/err" && ok "an f64 plugin in an f32 run: refused" \
        || bad "f64 plugin in an f32 run: exit $rc: $(head -c 300 "$T/err")"
else
    bad "cc of an f64 plugin: $(head -c 300 "$T/err")"
fi
if [ -f "$B/examples/hover.so" ]; then
    "$DG" train --config "$T/hover64.yaml" --plugin "$B/examples/hover.so" --epochs 2 --quiet --out "$T/h64b" >/dev/null 2>"$T/err"
    rc=$?
    [ $rc -eq 2 ] && grep -q "built for the f32 tape, this run's is f64" "$T/err" && [ "$(wc -l <"$T/err")" -eq 1 ] \
        && ok "an f32 plugin in an f64 run: refused" || bad "f32 plugin in an f64 run: exit $rc: $(head -c 300 "$T/err")"
fi

finish
