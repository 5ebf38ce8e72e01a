#!/usr/bin/env bash
# Reliability, end to end (issue: bad input never crashes or loses work):
#  1. a table of bad inputs: each gets exit status 2 and one line naming the
#     file, the key or tensor, and what was expected; nothing is left behind;
#  2. a run killed with SIGKILL and resumed ends with the same bytes as one
#     never stopped; SIGINT writes a final snapshot and exits cleanly;
#  3. a NaN injected at a snapshot epoch is rolled back; no snapshot holds NaN.
# usage: reliability_test.sh path/to/difgames repo_root
. "$(dirname "$0")/lib.sh"
trap 'kill -9 $(jobs -p) 2>/dev/null; umount "$T/full" 2>/dev/null; rm -rf "$T"' EXIT
cd "$ROOT"

# ---------------------------------------------------------------- 1. bad input
R=configs/reach.yaml
"$DG" train --config $R --epochs 2 --batch 4 --out "$T/good" --quiet >/dev/null || bad "make a good checkpoint"
/usr/bin/python3 tests/make_bad_files.py "$T/good/final.safetensors" "$T" || bad "make bad files"

# name | expected text in the one error line | command...
table=(
  "yaml syntax error|syntax.yaml:3: did not find expected|train --config $(cfg syntax 'game: reach\nenv: [1, 2\n')"
  "unknown key|unknown.yaml:2: unknown key 'env.dampng'|train --config $(cfg unknown 'game: reach\nenv: {dampng: 0.9}\n')"
  "wrong type|type.yaml:2: key 'train.epochs': expected an integer, got 'abc'|train --config $(cfg type 'game: reach\ntrain: {epochs: abc}\n')"
  "missing required key|missing required key 'game'|train --config $(cfg nogame 'env: {dt: 0.05}\n')"
  "unknown game|key 'game': unknown game 'tetris'|train --config $(cfg game 'game: tetris\n')"
  "batch <= 0|key 'train.batch': 0 is out of range|train --config $(cfg batch 'game: reach\ntrain: {batch: 0}\n')"
  "horizon <= 0|key 'env.horizon': -5 is out of range|train --config $(cfg horizon 'game: reach\nenv: {horizon: -5}\n')"
  "dt <= 0|key 'env.dt': 0 is out of range|train --config $(cfg dt 'game: chase\nenv: {dt: 0}\n')"
  "contact walls inside the start box|key 'env.contact_wall': the contact walls at +-0.5 must enclose env.init|train --config $(cfg contact 'game: chase\nenv: {contact_wall: 0.5}\n')"
  "damping outside (0, 1]|key 'env.damping': 1.5 is out of range, expected (0, 1]|train --config $(cfg damping 'game: reach\nenv: {damping: 1.5}\n')"
  "negative weight|key 'loss.collision': -1 is out of range|train --config $(cfg weight 'game: reach\nloss: {collision: -1}\n')"
  "sigma <= 0|key 'render.sigma': 0 is out of range|train --config $(cfg sigma 'game: pixel\nrender: {sigma: 0}\n')"
  "NaN|key 'train.lr': expected a finite number|train --config $(cfg nan 'game: reach\ntrain: {lr: .nan}\n')"
  "infinity|key 'env.dt': expected a finite number|train --config $(cfg inf 'game: reach\nenv: {dt: .inf}\n')"
  "too large for memory|key 'train.batch': batch 1000000 x horizon 100000 needs about|train --config $(cfg huge 'game: reach\ntrain: {batch: 1000000}\nenv: {horizon: 100000}\n')"
  "missing config file|$T/nope.yaml: cannot open|train --config $T/nope.yaml"
  "unwritable output folder|/proc/dg: cannot create folder|train --config $R --out /proc/dg/x"
  "checkpoint truncated|truncated.safetensors: tensor 'net.2.weight': data_offsets|eval --config $R --ckpt $T/truncated.safetensors"
  "checkpoint wrong magic/header|not_safetensors.safetensors: header length|eval --config $R --ckpt $T/not_safetensors.safetensors"
  "checkpoint header length past the end|header_past_end.safetensors: header length|eval --config $R --ckpt $T/header_past_end.safetensors"
  "checkpoint offsets out of range|offsets_out_of_range.safetensors: tensor 'net.4.bias'|eval --config $R --ckpt $T/offsets_out_of_range.safetensors"
  "checkpoint offsets overlap|and 'net.2.bias' [1536,1792] overlap|eval --config $R --ckpt $T/offsets_overlap.safetensors"
  "checkpoint wrong dtype|wrong_dtype.safetensors: tensor 'net.4.bias': expected dtype F32, found I32|eval --config $R --ckpt $T/wrong_dtype.safetensors"
  "checkpoint unknown dtype|unknown_dtype.safetensors: tensor 'net.0.bias'|eval --config $R --ckpt $T/unknown_dtype.safetensors"
  "checkpoint tensor missing|tensor 'net.2.weight' missing|eval --config $R --ckpt $T/tensor_missing.safetensors"
  "checkpoint of another hidden size|tensor 'net.0.weight': expected shape [32, 6], found [64, 6]|eval --config $(cfg small 'game: reach\npolicy: {hidden: [32, 32]}\n') --ckpt $T/good/final.safetensors"
  "checkpoint of another game|checkpoint $T/good/final.safetensors was trained on game 'reach' (this config: 'chase'): tensor 'net.0.weight': expected shape [64, 8], found [64, 6]|eval --config configs/chase.yaml --ckpt $T/good/final.safetensors"
  "resume without a run|$T/none/resume.safetensors: cannot open|train --resume $T/none"
  "resume file corrupt|resume.safetensors: header length|train --resume $T/corrupt"
)
mkdir -p "$T/corrupt" && head -c 300 "$T/good/resume.safetensors" >"$T/corrupt/resume.safetensors"
printf '%-40s %s\n' "bad input" "message (exit status 2)" >"$T/table.txt"
run_rows "" "" "${table[@]}"
[ ! -e /proc/dg ] || bad "unwritable folder was created"
ls "$T" | grep -q '\.tmp\.' && bad "temporary files left behind"
cat "$T/table.txt"

# ---------------------------------------------------------------- 2. kill and resume
printf 'game: reach\nseed: 3\nenv: {horizon: 120}\ntrain: {batch: 128, epochs: 160, snapshots: [5, 20], resume_every: 10}\n' >"$T/res.yaml"
"$DG" train --config "$T/res.yaml" --out "$T/full" --quiet >/dev/null || bad "uninterrupted run"
wait_for() { for _ in $(seq 1 600); do [ -e "$1" ] && return 0; sleep 0.05; done; return 1; }

"$DG" train --config "$T/res.yaml" --out "$T/killed" --quiet >/dev/null 2>&1 &
pid=$!
wait_for "$T/killed/epoch_0020.safetensors" || bad "no snapshot appeared"
kill -9 $pid; wait $pid 2>/dev/null
if [ -e "$T/killed/final.safetensors" ]; then bad "kill -9 came too late (run already finished)"; fi
[ -e "$T/killed/.lock" ] || bad "SIGKILL: no stale .lock (the test no longer tests taking one over)"
"$DG" train --resume "$T/killed" --quiet >"$T/out" 2>&1 || bad "resume after SIGKILL: $(cat "$T/out")"
[ ! -e "$T/killed/.lock" ] && ok "SIGKILL + resume: the stale .lock taken over, removed at the end" \
    || bad "SIGKILL + resume: .lock left"
if cmp -s "$T/full/final.safetensors" "$T/killed/final.safetensors"; then ok "SIGKILL + resume: final parameters byte-identical"
else bad "SIGKILL + resume: final parameters differ"; fi
cut -d, -f1-7 "$T/full/metrics.csv" >"$T/a.csv"; cut -d, -f1-7 "$T/killed/metrics.csv" >"$T/b.csv"
if cmp -s "$T/a.csv" "$T/b.csv"; then ok "SIGKILL + resume: metrics.csv identical (but the ms column)"
else bad "SIGKILL + resume: metrics differ"; fi

"$DG" train --config "$T/res.yaml" --out "$T/int" >"$T/int.out" 2>"$T/int.err" &
pid=$!
wait_for "$T/int/epoch_0020.safetensors" || bad "no snapshot appeared (SIGINT run)"
kill -INT $pid; wait $pid; rc=$?
if [ $rc -eq 130 ] && [ -s "$T/int/final.safetensors" ] && grep -q '"interrupted": *true' "$T/int.out"; then
    ok "SIGINT: final snapshot written, exit 130"
else bad "SIGINT: exit $rc, $(tail -n 2 "$T/int.err")"; fi
[ ! -e "$T/int/.lock" ] && ok "SIGINT: .lock removed" || bad "SIGINT: .lock left in the run folder"
"$DG" train --resume "$T/int" --quiet >/dev/null 2>&1 || bad "resume after SIGINT"
cmp -s "$T/full/final.safetensors" "$T/int/final.safetensors" && ok "SIGINT + resume: byte-identical" || bad "SIGINT + resume differs"

# ---------------------------------------------------------------- 3. NaN at a snapshot epoch
printf 'game: reach\ntrain: {batch: 8, epochs: 8, snapshots: [5], fault_nan_epoch: 5}\n' >"$T/nan.yaml"
"$DG" train --config "$T/nan.yaml" --out "$T/nan" >/dev/null 2>"$T/nan.err" || bad "NaN run failed"
grep -q "epoch 5: non-finite loss or gradient; restored the last good parameters, learning rate halved" "$T/nan.err" \
    && ok "NaN guard reported the rollback" || bad "NaN guard message missing"
if /usr/bin/python3 - "$T/nan" <<'PY'
import json, math, os, struct, sys
for name in sorted(os.listdir(sys.argv[1])):
    if not name.endswith(".safetensors"):
        continue
    raw = open(os.path.join(sys.argv[1], name), "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    hdr = json.loads(raw[8:8 + n]); body = raw[8 + n:]
    for k, v in hdr.items():
        if k == "__metadata__" or v["dtype"] != "F32":
            continue
        a, b = v["data_offsets"]
        vals = struct.unpack(f"<{(b - a) // 4}f", body[a:b])
        if not all(math.isfinite(x) for x in vals):
            sys.exit(f"{name}: {k} holds NaN or inf")
PY
then ok "no snapshot holds NaN"; else bad "a snapshot holds NaN"; fi

# ---------------------------------------------------------------- 4. a full disk
mkdir -p "$T/full"
if mount -t tmpfs -o size=64k tmpfs "$T/full" 2>/dev/null; then
    "$DG" train --config $R --epochs 30 --out "$T/full/run" --quiet >/dev/null 2>"$T/full.err"
    rc=$?
    if [ $rc -eq 2 ] && grep -qE "write failed: No space left on device|MiB free there" "$T/full.err" && [ "$(wc -l <"$T/full.err")" -eq 1 ]; then
        ok "full disk: one clear line, exit 2 ($(sed "s|$T|<tmp>|" "$T/full.err"))"
    else bad "full disk: exit $rc, $(cat "$T/full.err")"; fi
    ls "$T/full/run" | grep -q '\.tmp\.' && bad "full disk: a temporary file was left"
    umount "$T/full"
else
    echo "skip full disk (no tmpfs can be mounted here)"
fi

finish
