#!/usr/bin/env bash
# Reliability, end to end (issue: bad input never crashes or loses work):
#  1. a table of bad inputs: each gets exit status 2 and one line naming the
#     file, the key or tensor, and what was expected; nothing is left behind;
#  2. a run killed with SIGKILL and resumed ends with the same bytes as one
#     never stopped, and without the dead process's temporary files (a sweep's
#     too); SIGINT writes a final snapshot and exits cleanly;
#  3. a NaN injected at a snapshot epoch is rolled back; no snapshot holds NaN;
#     a cost that is non-finite every epoch (log of a negative number) stops the
#     run with exit 1 and one line naming the term and the epoch, the same bytes
#     on every run, no file holding a non-finite number; eval exits 1 on such a
#     checkpoint or loss, 0 with a reason for a metric undefined by construction.
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
# the temporaries of processes that are gone ("<file>.tmp.<pid>", as a kill at another instant leaves
# them: planted) go when the run resumes; a live process's (this shell's) stay (issue 24)
sh -c 'exit 0' & dead=$!; wait $dead
printf x >"$T/killed/metrics.csv.tmp.$dead"; printf x >"$T/killed/final.safetensors.tmp.$pid"
printf x >"$T/killed/keep.tmp.$$"
[ -e "$T/killed/.lock" ] || bad "SIGKILL: no stale .lock (the test no longer tests taking one over)"
"$DG" train --resume "$T/killed" --quiet >"$T/out" 2>&1 || bad "resume after SIGKILL: $(cat "$T/out")"
[ ! -e "$T/killed/.lock" ] && ok "SIGKILL + resume: the stale .lock taken over, removed at the end" \
    || bad "SIGKILL + resume: .lock left"
left=$(ls "$T/killed" | grep '\.tmp\.' | tr '\n' ' ')
[ "$left" = "keep.tmp.$$ " ] && ok "resume removed the dead processes' temporaries, kept a live one's" \
    || bad "temporaries after resume: '$left', want keep.tmp.$$ alone"
if cmp -s "$T/full/final.safetensors" "$T/killed/final.safetensors"; then ok "SIGKILL + resume: final parameters byte-identical"
else bad "SIGKILL + resume: final parameters differ"; fi
cut -d, -f1-7 "$T/full/metrics.csv" >"$T/a.csv"; cut -d, -f1-7 "$T/killed/metrics.csv" >"$T/b.csv"
if cmp -s "$T/a.csv" "$T/b.csv"; then ok "SIGKILL + resume: metrics.csv identical (but the ms column)"
else bad "SIGKILL + resume: metrics differ"; fi

# a general-sum game of three players: each one's NashConv term survives a resume (metrics.csv's
# nash_conv_p3 included), the same rows as a straight run but the ms column
sed 's/^train:/train:\n  exploit_every: 5\n  exploit_epochs: 3\n  resume_every: 10/' configs/models/lq_nash3.yaml >"$T/n3.yaml"
"$DG" train --config "$T/n3.yaml" --out "$T/n3a" --epochs 20 --quiet >/dev/null 2>&1 \
    && "$DG" train --config "$T/n3.yaml" --out "$T/n3b" --epochs 10 --quiet >/dev/null 2>&1 \
    && "$DG" train --resume "$T/n3b" --epochs 20 --quiet >/dev/null 2>&1 || bad "lq_nash3: train and resume"
ms=$(head -1 "$T/n3a/metrics.csv" | tr , '\n' | grep -nx ms | cut -d: -f1)
if [ -n "$ms" ] && grep -q nash_conv_p3 "$T/n3a/metrics.csv" && awk -F, '$1 == 5 && $NF != "nan" {f = 1} END {exit !f}' "$T/n3b/metrics.csv" \
    && cmp -s <(cut -d, -f"$ms" --complement "$T/n3a/metrics.csv") <(cut -d, -f"$ms" --complement "$T/n3b/metrics.csv"); then
    ok "three players resumed: every NashConv term kept, metrics.csv as a straight run's"
else bad "three players resumed: metrics.csv differs from a straight run's (or NaN)"; fi

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

# a sweep resumed: the temporaries of processes that are gone go from the sweep's folder (the
# summary's) and from a run's folder when that run starts again; a live process's stay
printf 'game: reach\ntrain: {batch: 4, epochs: 2}\n' >"$T/sw.yaml"
"$DG" sweep --config "$T/sw.yaml" --out "$T/sw" --set train.lr=0.01,0.02 --quiet >/dev/null 2>"$T/err" \
    || bad "sweep: $(cat "$T/err")"
run1=$T/sw/train.lr=0.01/seed_config
rm -f "$run1/result.csv"
printf x >"$run1/metrics.csv.tmp.$dead"; printf x >"$run1/keep.tmp.$$"; printf x >"$T/sw/summary.png.tmp.$dead"
"$DG" sweep --config "$T/sw.yaml" --out "$T/sw" --set train.lr=0.01,0.02 --resume --quiet >/dev/null 2>"$T/err" \
    || bad "sweep --resume: $(cat "$T/err")"
left=$(cd "$T/sw" && find . -name '*.tmp.*' | sort | tr '\n' ' ')
[ "$left" = "./train.lr=0.01/seed_config/keep.tmp.$$ " ] && ok "sweep --resume removed the dead processes' temporaries" \
    || bad "temporaries after sweep --resume: '$left'"

# ---------------------------------------------------------------- 3. NaN at a snapshot epoch
printf 'game: reach\ntrain: {batch: 8, epochs: 8, snapshots: [5], fault_nan_epoch: 5}\n' >"$T/nan.yaml"
"$DG" train --config "$T/nan.yaml" --out "$T/nan" >/dev/null 2>"$T/nan.err" || bad "NaN run failed"
grep -q "epoch 5: the loss is nan (every term finite); restored the last good parameters, learning rate halved" \
    "$T/nan.err" && ok "NaN guard reported the rollback" || bad "NaN guard message missing"
# every parameter and optimiser tensor of every .safetensors in the folders given is finite (F32 and
# F64; resume's metrics table holds the losses as they were, NaN epochs included)
all_finite() {
    /usr/bin/python3 - "$@" <<'PY'
import json, math, os, struct, sys
for d in sys.argv[1:]:
    for name in sorted(os.listdir(d)):
        if not name.endswith(".safetensors"):
            continue
        raw = open(os.path.join(d, name), "rb").read()
        (n,) = struct.unpack("<Q", raw[:8])
        hdr = json.loads(raw[8:8 + n]); body = raw[8 + n:]
        for k, v in hdr.items():
            if k in ("__metadata__", "metrics") or v["dtype"] not in ("F32", "F64"):  # metrics: the losses
                continue
            a, b = v["data_offsets"]; w = 4 if v["dtype"] == "F32" else 8
            vals = struct.unpack(f"<{(b - a) // w}{'f' if w == 4 else 'd'}", body[a:b])
            if not all(math.isfinite(x) for x in vals):
                sys.exit(f"{d}/{name}: {k} holds NaN or inf")
PY
}
all_finite "$T/nan" && ok "no snapshot holds NaN" || bad "a snapshot holds NaN"

# a cost non-finite at every epoch: log(x + 0.95) once an episode drifts left of -0.95
sed 's|^    goal: (x - gx)^2 + (y - gy)^2$|    goal: log(x + 0.95)^2|' configs/models/reach.yaml >"$T/lg.yaml"
grep -q 'goal: log(x + 0.95)^2' "$T/lg.yaml" || bad "the log cost was not substituted"
# the initial parameters: one epoch of the same game and seed, its loss made NaN (the guard keeps them)
sed 's|^train:$|train:\n  fault_nan_epoch: 1|' configs/models/reach.yaml >"$T/lg0.yaml"
"$DG" train --config "$T/lg0.yaml" --epochs 1 --out "$T/lg0" --quiet >/dev/null 2>&1 || bad "lg0: one epoch failed"
for i in 1 2 3; do
    "$DG" train --config "$T/lg.yaml" --epochs 8 --out "$T/lg$i" --quiet >/dev/null 2>"$T/lg$i.err"
    rc=$?
    [ $rc -eq 1 ] || bad "lg run $i: exit $rc, expected 1 (a run that cannot make progress)"
done
last=$(grep -v '^warning' "$T/lg1.err")
[ "$(printf '%s\n' "$last" | wc -l)" -eq 1 ] && grep -q "^difgames train: epoch 5: the loss term 'goal' is nan, 5 epochs in a row" \
    <<<"$last" && ok "lg: one line naming the term and the epoch" || bad "lg: message: $last"
cmp -s "$T/lg1/final.safetensors" "$T/lg2/final.safetensors" && cmp -s "$T/lg1/final.safetensors" \
    "$T/lg3/final.safetensors" && ok "lg: final.safetensors the same bytes on three runs" || bad "lg: final differs"
for i in 1 2 3; do cut -d, -f1-7 "$T/lg$i/metrics.csv" >"$T/lg$i.csv"; done  # all but the ms column
cmp -s "$T/lg1.csv" "$T/lg2.csv" && cmp -s "$T/lg1.csv" "$T/lg3.csv" && ok "lg: metrics.csv the same on three runs" \
    || bad "lg: metrics.csv differs (but the ms column)"
all_finite "$T/lg1" && ok "lg: no file holds a non-finite number" || bad "lg: a file holds NaN"
# the guard kept the initial parameters (it never had a finite epoch): the 0-epoch run's tensors
/usr/bin/python3 - "$T/lg0/final.safetensors" "$T/lg1/final.safetensors" <<'PY' && ok "lg: the initial parameters kept" \
    || bad "lg: final parameters are not the initial ones"
import json, struct, sys
def tensors(p):
    raw = open(p, "rb").read(); (n,) = struct.unpack("<Q", raw[:8]); h = json.loads(raw[8:8 + n])
    return {k: raw[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]] for k, v in h.items() if k != "__metadata__"}
sys.exit(tensors(sys.argv[1]) != tensors(sys.argv[2]))
PY
# eval: a non-finite loss exits 1 naming the term; a NaN parameter exits 1 naming it
"$DG" eval --config "$T/lg.yaml" --ckpt "$T/lg1/final.safetensors" >"$T/lg.json" 2>"$T/lg.eval"
rc=$?
[ $rc -eq 1 ] && grep -q "the loss term 'goal' is not finite" "$T/lg.eval" && grep -q '"goal":null' "$T/lg.json" \
    && ok "eval of a non-finite loss: exit 1" || bad "eval of a non-finite loss: exit $rc, $(cat "$T/lg.eval")"
/usr/bin/python3 - "$T/lg0/final.safetensors" "$T/nanw.safetensors" <<'PY' || bad "make a NaN checkpoint"
import json, struct, sys
raw = bytearray(open(sys.argv[1], "rb").read()); (n,) = struct.unpack("<Q", raw[:8]); h = json.loads(raw[8:8 + n])
o = 8 + n + h["net.2.weight"]["data_offsets"][0] + 4 * 3
raw[o:o + 4] = struct.pack("<f", float("nan")); open(sys.argv[2], "wb").write(raw)
PY
"$DG" eval --config configs/models/reach.yaml --ckpt "$T/nanw.safetensors" >/dev/null 2>"$T/nanw.err"
rc=$?
[ $rc -eq 1 ] && grep -q "nanw.safetensors: parameter net.2.weight\[3\] is not finite" "$T/nanw.err" \
    && ok "eval of a NaN parameter: exit 1 naming it" || bad "eval of a NaN parameter: exit $rc, $(cat "$T/nanw.err")"
# a metric undefined by construction: null with its reason, exit 0
"$DG" train --config configs/duel_simple.yaml --epochs 1 --batch 8 --out "$T/duel" --quiet >/dev/null 2>&1 \
    || bad "duel: train"
"$DG" eval --config configs/duel_simple.yaml --ckpt "$T/duel/final.safetensors" --no-exploit --horizon 5 \
    >"$T/duel.json" 2>"$T/duel.err"
rc=$?
[ $rc -eq 0 ] && grep -q '"capture_rate":0,"capture_time":null' "$T/duel.json" \
    && grep -q '"undefined":{"capture_time":"no episode was captured' "$T/duel.json" \
    && ok "eval: capture_time null with its reason, exit 0" || bad "eval of no capture: exit $rc, $(cat "$T/duel.json")"

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
