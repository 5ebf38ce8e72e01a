#!/usr/bin/env bash
# The command under mpirun (docs/scale.md):
#  1. hji solve of air3d and chase4d on 2 and 4 ranks (4: cut 2 x 2, at every accuracy, and along
#     axis 0 alone; float32 on 3 and 4) writes the same file, byte for byte, as one process without
#     mpirun (the value at every stored time, the metadata), each rank writing its box (MPI-IO);
#  2. a rank killed mid-solve ends the job (mpirun says which rank died) instead of hanging;
#  4. training on 2 ranks x 1 thread gives the bits of 1 process x 2 threads (a noisy game too), resumed too; SIGINT
#     stops every rank after the same epoch;
#  5. a sweep of 4 runs alone, with --jobs 2 and on 2 ranks gives the same rows; interrupted and
#     resumed, those of one never stopped;
#  3. more ranks than the grid's axis 0 has nodes, and a command that does not run across ranks, are
#     refused with one message and exit status 2 on every rank (no hang).
# usage: mpi_test.sh path/to/difgames repo_root path/to/mpirun
. "$(dirname "$0")/lib.sh"
MPIRUN=$3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# a sanitizer build: no leak report at exit (Open MPI's dlopen'ed components keep allocations
# LeakSanitizer cannot name); memory errors are still checked
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
cd "$ROOT"
mpi() { local np=$1; shift; timeout 120 "$MPIRUN" -np "$np" --oversubscribe "$@"; }

# ------------------------------------------------------------ 1. the same bytes
# solve_alone NAME ARGS...: hji solve ARGS in one process, into $T/NAME_1.safetensors
solve_alone() {
    local n=$1; shift
    "$DG" hji solve "$@" --out "$T/${n}_1.safetensors" --threads 1 >/dev/null 2>"$T/err" \
        || bad "$n alone: $(tail -n 1 "$T/err")"
}
# solve_ranks NP NAME LABEL ARGS...: the same on NP ranks into $T/NAME_NP.safetensors (rank 0's
# output in $T/out); status 0 when it wrote the bytes one process wrote, else one bad line
solve_ranks() {
    local np=$1 n=$2 label=$3; shift 3
    mpi "$np" "$DG" hji solve "$@" --out "$T/${n}_$np.safetensors" --threads 1 >"$T/out" 2>"$T/err"
    local rc=$?
    if [ $rc -ne 0 ]; then bad "$label on $np ranks: exit $rc ($(tail -n 3 "$T/err"))"; return 1; fi
    cmp -s "$T/${n}_1.safetensors" "$T/${n}_$np.safetensors" && return 0
    bad "$label on $np ranks: the file differs"; return 1
}

D=tests/data/mpi
for c in air3d chase4d; do
    solve_alone "$c" --config $D/$c.yaml --slices 3
    for np in 2 4; do
        solve_ranks $np "$c" "$c" --config $D/$c.yaml --slices 3 || continue
        if [ "$(grep -c '"ranks":'"$np" "$T/out")" -ne 1 ]; then bad "$c on $np ranks: want one JSON line (rank 0): $(cat "$T/out")"
        else ok "$c on $np ranks: the same file as one process"; fi
    done
done

# cut along several axes (4 ranks: 2 x 2, the cut with the least halo) at every accuracy, float32
# too, and along axis 0 alone (solver.split: axis0): the same file as one process, each rank
# writing its box through a subarray view of the file
for c in air3d chase4d; do
    for acc in low medium high veryHigh; do
        solve_alone "${c}_$acc" --config $D/$c.yaml --accuracy $acc --slices 3
        solve_ranks 4 "${c}_$acc" "$c $acc (2 x 2)" --config $D/$c.yaml --accuracy $acc --slices 3 &&
            ok "$c accuracy $acc on 4 ranks (2 x 2): the same file as one process"
    done
    sed 's/^solver:$/solver:\n  split: axis0/' $D/$c.yaml >"$T/${c}_axis0.yaml"
    grep -q 'split: axis0' "$T/${c}_axis0.yaml" || bad "$c: no solver section in $D/$c.yaml"
    # (the file keeps the config's text: alone on the same config)
    solve_alone "${c}_axis0" --config "$T/${c}_axis0.yaml" --slices 3
    solve_ranks 4 "${c}_axis0" "$c with solver.split axis0 (4 x 1)" --config "$T/${c}_axis0.yaml" --slices 3 &&
        ok "$c with solver.split axis0 on 4 ranks (4 x 1): the same file as one process"
done

# the shipped 6-D game (a model file) on 6^6 nodes: on 4 ranks cut 2 x 2 by default, and along
# axis 0 alone blocks of 1 and 2 layers, narrower than ENO2's 2 ghost layers
sed 's/n: \[15, 15, 15, 15, 15, 15\]/n: [6, 6, 6, 6, 6, 6]/' configs/hji/chase6d.yaml >"$T/chase6d.yaml"
grep -q 'n: \[6, 6, 6, 6, 6, 6\]' "$T/chase6d.yaml" || bad "chase6d: no grid line in configs/hji/chase6d.yaml"
sed 's/^solver:$/solver:\n  split: axis0/' "$T/chase6d.yaml" >"$T/chase6d_axis0.yaml"
grep -q 'split: axis0' "$T/chase6d_axis0.yaml" || bad "chase6d: no solver section in configs/hji/chase6d.yaml"
for v in chase6d chase6d_axis0; do
    solve_alone "$v" --config "$T/$v.yaml"
    solve_ranks 4 "$v" "$v" --config "$T/$v.yaml" && ok "$v (6-D, a model file) on 4 ranks: the same file as one process"
done

# float32 (the ranks convert their blocks) and no temporary file left beside the value file
solve_alone f32 --config $D/air3d.yaml --float32
for np in 3 4; do   # 3: blocks of axis 0; 4: 2 x 2 boxes
    solve_ranks $np f32 "air3d float32" --config $D/air3d.yaml --float32 || continue
    if ls "$T"/*.tmp.* >/dev/null 2>&1; then bad "a temporary file was left: $(ls "$T"/*.tmp.*)"
    else ok "air3d float32 on $np ranks: the same file as one process, written by the ranks at their blocks"; fi
done

# ------------------------------------------------------------ 2. a rank killed
OUTK="$T/killed.safetensors"
mpi 2 "$DG" hji solve --config configs/hji/air3d.yaml --out "$OUTK" --slices 1 --threads 1 >"$T/kout" 2>"$T/kerr" &
job=$!
victim=""
for _ in $(seq 1 100); do   # rank 1, once the solve has started (rank 0's banner)
    if grep -q "^solving" "$T/kerr" 2>/dev/null; then
        for pid in $(pgrep -f -- "$OUTK"); do
            tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=1 && victim=$pid
        done
    fi
    [ -n "$victim" ] && break
    sleep 0.2
done
if [ -z "$victim" ]; then
    bad "kill a rank: rank 1 not found ($(tail -n 2 "$T/kerr"))"
    kill -9 $job 2>/dev/null
else
    kill -9 "$victim"
    wait $job
    rc=$?
    if [ $rc -eq 0 ] || [ $rc -eq 124 ]; then bad "kill a rank: exit $rc (want a failure, not a hang)"
    elif ! grep -q "rank 1 .*exited on signal 9" "$T/kerr"; then bad "kill a rank: no message naming rank 1: $(tail -n 5 "$T/kerr")"
    elif [ -e "$OUTK" ]; then bad "kill a rank: a value file was written"
    else ok "a rank killed mid-solve fails the job (exit $rc): $(grep -o "process rank 1 .*signal 9" "$T/kerr" | head -n 1)"; fi
fi

# ------------------------------------------------------------ 3. refused on every rank
cat >"$T/narrow.yaml" <<'YAML'
game: pursuit2d
speed_pursuer: 1.0
speed_evader: 0.5
capture_radius: 0.25
t_end: 0.1
grid: {min: [-2, -2], max: [2, 2], n: [3, 9]}
YAML
mpi 4 "$DG" hji solve --config "$T/narrow.yaml" --out "$T/narrow.safetensors" >"$T/out" 2>"$T/err" </dev/null
rc=$?
if [ $rc -ne 2 ]; then bad "too many ranks: exit $rc, want 2 ($(head -c 300 "$T/err"))"
elif ! grep -q "axis 0 has 3 nodes: 4 ranks" "$T/err"; then bad "too many ranks: $(head -c 300 "$T/err")"
elif [ -e "$T/narrow.safetensors" ]; then bad "too many ranks: a file was written"
else ok "too many ranks for axis 0: exit 2, $(grep -m1 -o "axis 0 has.*layer of the grid" "$T/err")"; fi
mpi 2 "$DG" games >"$T/out" 2>"$T/err" </dev/null
rc=$?
if [ $rc -ne 2 ] || [ "$(grep -c 'does not run across MPI ranks' "$T/err")" -ne 1 ]; then
    bad "a command without MPI: exit $rc, want 2 and one line: $(head -c 300 "$T/err")"
else ok "a command that does not split its work: exit 2, one line"; fi
# ------------------------------------------------------------ 4. data-parallel training
# 2 ranks x 1 thread against 1 process x 2 threads: the same shards, the same sums, the same bits
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
ok = tensors(a + "/final.safetensors") == tensors(b + "/final.safetensors") and \
     metrics(a + "/metrics.csv") == metrics(b + "/metrics.csv")
sys.exit(0 if ok else 1)
PY
}
TR="--epochs 6 --batch 24 --horizon 20"
for c in reach chase; do
    # shellcheck disable=SC2086
    "$DG" train --config configs/$c.yaml $TR --threads 2 --out "$T/${c}_t2" --quiet >/dev/null 2>"$T/err" \
        || bad "train $c alone: $(tail -n 1 "$T/err")"
    # shellcheck disable=SC2086
    mpi 2 "$DG" train --config configs/$c.yaml $TR --threads 1 --out "$T/${c}_r2" >"$T/out" 2>"$T/err"
    rc=$?
    if [ $rc -ne 0 ]; then bad "train $c on 2 ranks: exit $rc ($(tail -n 3 "$T/err"))"
    elif ! same_run "$T/${c}_t2" "$T/${c}_r2"; then bad "train $c: 2 ranks x 1 thread differ from 1 process x 2 threads"
    elif [ "$(grep -c '"final_loss"' "$T/out")" -ne 1 ] || [ "$(grep -c '^training' "$T/err")" -ne 1 ]; then
        bad "train $c on 2 ranks: want one JSON line and one banner (rank 0): $(cat "$T/out")"
    else ok "train $c: 2 ranks x 1 thread = 1 process x 2 threads, bit for bit (rank 0 alone prints)"; fi
done
# a noisy game (reach, env.noise 0.5): the draws follow the global batch row, not the rank that plays it
NZ=$(cfg noisy "game: reach\nseed: 4\nenv: {horizon: 20, noise: 0.5}\npolicy: {hidden: [16]}\ntrain: {epochs: 6, batch: 24}\n")
"$DG" train --config "$NZ" --threads 2 --out "$T/noisy_t2" --quiet >/dev/null 2>"$T/err" \
    || bad "train noisy reach alone: $(tail -n 1 "$T/err")"
mpi 2 "$DG" train --config "$NZ" --threads 1 --out "$T/noisy_r2" >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -ne 0 ]; then bad "train noisy reach on 2 ranks: exit $rc ($(tail -n 3 "$T/err"))"
elif ! same_run "$T/noisy_t2" "$T/noisy_r2"; then bad "train noisy reach: 2 ranks x 1 thread differ from 1 process x 2 threads"
else ok "train reach with env.noise 0.5: 2 ranks x 1 thread = 1 process x 2 threads, bit for bit"; fi
# resumed under mpirun: the same bits as the run never stopped
# shellcheck disable=SC2086
mpi 2 "$DG" train --config configs/reach.yaml --epochs 3 --batch 24 --horizon 20 --threads 1 --out "$T/res" \
    >/dev/null 2>"$T/err" && mpi 2 "$DG" train --resume "$T/res" --epochs 6 >/dev/null 2>>"$T/err"
rc=$?
if [ $rc -ne 0 ]; then bad "train resumed on 2 ranks: exit $rc ($(tail -n 3 "$T/err"))"
elif ! same_run "$T/reach_r2" "$T/res"; then bad "train resumed on 2 ranks: differs from the run never stopped"
else ok "train stopped at 3 epochs and resumed to 6 on 2 ranks: the same bits as 6 at once"; fi
# SIGINT: every rank stops after the same epoch, rank 0 writes final.safetensors, exit 130
# (mpirun itself gets the signal, as from a terminal; it ends with its own non-zero status)
"$MPIRUN" -np 2 --oversubscribe "$DG" train --config configs/reach.yaml --epochs 1000000 --batch 16 --horizon 20 \
    --threads 1 --out "$T/int" --quiet >"$T/out" 2>"$T/err" &
job=$!
for _ in $(seq 1 100); do [ -s "$T/int/epoch_0005.safetensors" ] && break; sleep 0.2; done
kill -INT $job
for i in $(seq 1 60); do kill -0 $job 2>/dev/null || break; sleep 1; done
kill -0 $job 2>/dev/null && kill -9 $job
wait $job
rc=$?
if [ "$i" -ge 60 ] || [ $rc -eq 0 ]; then bad "train interrupted on 2 ranks: exit $rc after ${i} s ($(tail -n 3 "$T/err"))"
elif [ "$(grep -c 'interrupted at epoch' "$T/err")" -ne 1 ]; then bad "train interrupted on 2 ranks: want one line: $(cat "$T/err")"
elif [ ! -s "$T/int/final.safetensors" ] || ! grep -q '"interrupted":true' "$T/out"; then
    bad "train interrupted on 2 ranks: no final snapshot or JSON ($(tail -n 2 "$T/err"))"
else ok "train interrupted on 2 ranks: every rank stopped, final.safetensors written, exit $rc"; fi
# ------------------------------------------------------------ 5. sweeps
# 2 settings x 2 seeds: alone, --jobs 2 and on 2 ranks (a shared queue) give the same rows (but the
# seconds and the rank); an interrupted sweep goes on with --resume to the same summary
SW="--config configs/reach.yaml --set train.lr=0.01,0.003 --set train.batch=16 --set train.epochs=60 --seeds 1,2"
cols() { cut -d, -f1-7 "$1/summary.csv"; }   # keys (3), seed, final loss, the 2 metrics
# shellcheck disable=SC2086
"$DG" sweep $SW --out "$T/sw1" --quiet >"$T/out" 2>"$T/err" || bad "sweep alone: $(tail -n 2 "$T/err")"
# shellcheck disable=SC2086
"$DG" sweep $SW --out "$T/sw2" --jobs 2 --quiet >/dev/null 2>"$T/err" || bad "sweep --jobs 2: $(tail -n 2 "$T/err")"
# shellcheck disable=SC2086
mpi 2 "$DG" sweep $SW --out "$T/sw3" >"$T/out3" 2>"$T/err"
rc=$?
if [ $rc -ne 0 ]; then bad "sweep on 2 ranks: exit $rc ($(tail -n 3 "$T/err"))"
elif [ "$(wc -l <"$T/sw1/summary.csv")" -ne 5 ] || [ ! -s "$T/sw1/summary.png" ]; then bad "sweep: want 4 rows and a plot"
elif [ "$(cols "$T/sw1")" != "$(cols "$T/sw2")" ] || [ "$(cols "$T/sw1")" != "$(cols "$T/sw3")" ]; then
    bad "sweep: the runs differ alone, with --jobs 2 and on 2 ranks"
elif [ "$(grep -c '"runs":4' "$T/out3")" -ne 1 ]; then bad "sweep on 2 ranks: want one JSON line: $(cat "$T/out3")"
else ok "sweep of 4 runs: alone, --jobs 2 and on 2 ranks (shared queue) the same rows; summary.csv and .png"; fi
# shellcheck disable=SC2086
"$DG" sweep $SW --out "$T/sw3" >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q "holds a run already: --resume" "$T/err" && ok "sweep into a used folder without --resume: exit 2" \
    || bad "sweep into a used folder: $(cat "$T/err")"
# 1500 epochs a setting (about 2 s): the interrupt, sent once epoch 50's snapshot is there, lands in the
# first setting's run, so the resume finishes one run and trains the other
SWL="--config configs/reach.yaml --set train.lr=0.01,0.003 --set train.batch=16 --set train.epochs=1500 --seeds 1"
# shellcheck disable=SC2086
"$DG" sweep $SWL --out "$T/swi" --quiet >/dev/null 2>"$T/err" &
job=$!
for _ in $(seq 1 600); do ls "$T"/swi/*/seed_1/epoch_0050.safetensors >/dev/null 2>&1 && break; sleep 0.05; done
kill -INT $job
wait $job
rc=$?
# shellcheck disable=SC2086
"$DG" sweep $SWL --out "$T/swi" --resume --quiet >"$T/out" 2>>"$T/err"
rc2=$?
# shellcheck disable=SC2086
"$DG" sweep $SWL --out "$T/swu" --quiet >/dev/null 2>>"$T/err"
if [ $rc -ne 130 ] || [ $rc2 -ne 0 ]; then bad "sweep interrupted ($rc, want 130) and resumed ($rc2): $(tail -n 3 "$T/err")"
elif [ "$(cols "$T/swi")" != "$(cols "$T/swu")" ]; then bad "sweep interrupted and resumed: differs from one never stopped"
else ok "sweep interrupted (exit 130) and resumed with --resume: the rows of a sweep never stopped"; fi
finish
