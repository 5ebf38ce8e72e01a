#!/usr/bin/env bash
# The command under mpirun (docs/scale.md):
#  1. hji solve of air3d and chase4d on 2 and 4 ranks writes the same file, byte for byte, as one
#     process without mpirun (the value at every stored time, the metadata);
#  2. a rank killed mid-solve ends the job (mpirun says which rank died) instead of hanging;
#  3. too many ranks for the grid's axis 0, and a command that does not run across ranks, are
#     refused with one message and exit status 2 on every rank (no hang).
# usage: mpi_test.sh path/to/difgames repo_root path/to/mpirun
. "$(dirname "$0")/lib.sh"
MPIRUN=$3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$ROOT"
mpi() { local np=$1; shift; timeout 120 "$MPIRUN" -np "$np" --oversubscribe "$@"; }

# ------------------------------------------------------------ 1. the same bytes
D=tests/data/mpi
for c in air3d chase4d; do
    "$DG" hji solve --config $D/$c.yaml --out "$T/${c}_1.safetensors" --slices 3 --threads 1 >/dev/null 2>"$T/err" \
        || bad "$c alone: $(tail -n 1 "$T/err")"
    for np in 2 4; do
        mpi $np "$DG" hji solve --config $D/$c.yaml --out "$T/${c}_$np.safetensors" --slices 3 --threads 1 \
            >"$T/out" 2>"$T/err"
        rc=$?
        if [ $rc -ne 0 ]; then bad "$c on $np ranks: exit $rc ($(tail -n 3 "$T/err"))"
        elif ! cmp -s "$T/${c}_1.safetensors" "$T/${c}_$np.safetensors"; then bad "$c on $np ranks: the file differs"
        elif [ "$(grep -c '"ranks":'"$np" "$T/out")" -ne 1 ]; then bad "$c on $np ranks: want one JSON line (rank 0): $(cat "$T/out")"
        else ok "$c on $np ranks: the same file as one process"; fi
    done
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
grid: {min: [-2, -2], max: [2, 2], n: [9, 9]}
YAML
mpi 4 "$DG" hji solve --config "$T/narrow.yaml" --out "$T/narrow.safetensors" >"$T/out" 2>"$T/err" </dev/null
rc=$?
if [ $rc -ne 2 ]; then bad "too many ranks: exit $rc, want 2 ($(head -c 300 "$T/err"))"
elif ! grep -q "axis 0 has 9 nodes: 4 ranks" "$T/err"; then bad "too many ranks: $(head -c 300 "$T/err")"
elif [ -e "$T/narrow.safetensors" ]; then bad "too many ranks: a file was written"
else ok "too many ranks for axis 0: exit 2, $(grep -m1 -o "axis 0 has.*ghost layers" "$T/err")"; fi
mpi 2 "$DG" games >"$T/out" 2>"$T/err" </dev/null
rc=$?
if [ $rc -ne 2 ] || [ "$(grep -c 'does not run across MPI ranks' "$T/err")" -ne 1 ]; then
    bad "a command without MPI: exit $rc, want 2 and one line: $(head -c 300 "$T/err")"
else ok "a command that does not split its work: exit 2, one line"; fi
finish
