#!/usr/bin/env bash
# Noise for the gradient solver (env.noise, dg_noise): the same seed and shard count give the same
# bits whichever thread plays a shard: training reach with env.noise 0.5 on 2 shards run by 2 threads
# and by 1 (OMP_THREAD_LIMIT=1) writes the same checkpoint and metrics (the draws are a function
# of the global batch row and step, not of the thread or the order shards run in); the noise moves
# the training (env.noise 0 writes another checkpoint); eval of a noisy game reports the spread of
# its numbers over noise draws; hji solve of a noisy grid game names the diffusion scheme it runs. The
# same over MPI ranks is in mpi_test.sh.
# usage: noise_test.sh path/to/difgames repo_root
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
same_run() {  # DIR_A DIR_B: the tensors of final.safetensors and the metrics but the ms column
    /usr/bin/python3 - "$1" "$2" <<'PY'
import json, struct, sys
def tensors(p):
    b = open(p, "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n])
    return {k: v for k, v in h.items() if k != "__metadata__"}, b[8 + n:]
def metrics(p):
    rows = [l.rstrip("\n").split(",") for l in open(p)]
    ms = rows[0].index("ms")
    return [r[:ms] + r[ms + 1:] for r in rows]
a, b = sys.argv[1], sys.argv[2]
sys.exit(0 if tensors(a + "/final.safetensors") == tensors(b + "/final.safetensors") and
         metrics(a + "/metrics.csv") == metrics(b + "/metrics.csv") else 1)
PY
}
N=$(cfg noisy "game: reach\nseed: 4\nenv: {horizon: 20, noise: 0.5}\npolicy: {hidden: [16]}\ntrain: {batch: 24, epochs: 6, threads: 2}\n")
C=$(cfg calm "game: reach\nseed: 4\nenv: {horizon: 20, noise: 0}\npolicy: {hidden: [16]}\ntrain: {batch: 24, epochs: 6, threads: 2}\n")
"$DG" train --config "$N" --out "$T/two" --quiet >/dev/null 2>"$T/err" || bad "train, 2 threads: $(tail -n 1 "$T/err")"
OMP_THREAD_LIMIT=1 "$DG" train --config "$N" --out "$T/one" --quiet >/dev/null 2>"$T/err" \
    || bad "train, 1 thread: $(tail -n 1 "$T/err")"
"$DG" train --config "$C" --out "$T/calm" --quiet >/dev/null 2>"$T/err" || bad "train, no noise: $(tail -n 1 "$T/err")"
if same_run "$T/two" "$T/one"; then ok "env.noise 0.5, 2 shards on 2 threads and on 1: the same checkpoint and metrics"
else bad "env.noise 0.5: 2 shards on 2 threads differ from 2 shards on 1 thread"; fi
if same_run "$T/two" "$T/calm"; then bad "env.noise 0.5 trains as env.noise 0 does"
else ok "env.noise 0.5 trains otherwise than env.noise 0"; fi
# eval: means and spreads over noise draws
"$DG" eval --config "$N" --ckpt "$T/two/final.safetensors" --batch 32 --noise-draws 5 >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -ne 0 ]; then bad "eval of a noisy game: exit $rc ($(tail -n 1 "$T/err"))"
elif ! /usr/bin/python3 - "$T/out" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
s = j["spread"]
assert s["draws"] == 5 and s["of"] == "standard deviation over noise draws of the batch mean", s
assert s["loss"] > 0 and s["goal"] >= 0 and "final_dist" in s, s
PY
then bad "eval of a noisy game: no spread over 5 draws: $(cat "$T/out")"
else ok "eval of a noisy game: means and spreads over 5 noise draws"; fi
"$DG" eval --config "$C" --ckpt "$T/calm/final.safetensors" --batch 32 >"$T/out" 2>"$T/err"
if grep -q spread "$T/out"; then bad "eval of a game without noise reports a spread: $(cat "$T/out")"
else ok "eval of a game without noise: no spread"; fi
# hji solve of a noisy grid game says the scheme that runs (the diffusion scheme), not an accuracy
# preset that does not apply to it
sed 's/^  n: \[121\]/  n: [31]/' configs/hji/lqg.yaml >"$T/lqg.yaml"
"$DG" hji solve --config "$T/lqg.yaml" --out "$T/lqg.safetensors" >/dev/null 2>"$T/err"
rc=$?
if [ $rc -ne 0 ]; then bad "hji solve lqg1d: exit $rc ($(tail -n 1 "$T/err"))"
elif grep -q "solving lqg1d: .*the monotone diffusion scheme, 101 candidates per input component" "$T/err" \
    && ! grep -qi "veryHigh\|medium\|high$" "$T/err"; then ok "hji solve of a noisy game: its banner names the diffusion scheme"
else bad "hji solve of a noisy game's banner: $(head -n 2 "$T/err")"; fi
finish
