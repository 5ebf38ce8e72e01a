#!/usr/bin/env bash
# difgames hji learn under mpirun (docs/neural.md, docs/scale.md): the ranks split the iteration's
# learn.threads shards and sum every shard's gradient in shard order, so that
#  1. 2 shards on 2 ranks, 4 shards on 3 ranks (blocks of 1, 1 and 2) and 2 shards on 3 ranks (one
#     rank without a shard) write the value.safetensors of one process with the same learn.threads,
#     byte for byte, and the same metrics.csv rows (but the seconds); rank 0 alone prints its JSON
#     line and writes;
#  2. a run of 15 iterations on 2 ranks resumed with --resume on 2 ranks to 30 equals 30 at once;
#  3. --bench on 2 ranks prints one JSON line and writes nothing.
# usage: mpi_learn_test.sh path/to/difgames repo_root path/to/mpirun
. "$(dirname "$0")/lib.sh"
MPIRUN=$3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"   # as mpi_test.sh: Open MPI's components
cd "$ROOT" || exit 1
mpi() { local np=$1; shift; timeout 120 "$MPIRUN" -np "$np" --oversubscribe "$@"; }
C=$(cfg c "game: pursuit2d\nmode: brt\nt_end: 1.0\ngrid: {min: [-2, -2], max: [2, 2], n: [41, 41]}\nlearn: {hidden: [16, 16], points: 96, iterations: 30, pretrain: 5, curriculum: 10, lr: 0.001, seed: 3, resume_every: 7}\n")
# same DIR_A DIR_B: the same network file and metrics rows (but the seconds column)
same() { cmp -s "$1/value.safetensors" "$2/value.safetensors" && cmp -s <(cut -d, -f1-5 "$1/metrics.csv") <(cut -d, -f1-5 "$2/metrics.csv"); }

# ------------------------------------------------------------ 1. the same bits on any number of ranks
for sh in 2 4; do
    OMP_NUM_THREADS=1 "$DG" hji learn --config "$C" --threads $sh --out "$T/alone$sh" --quiet >/dev/null 2>"$T/err" \
        || bad "$sh shards alone: $(tail -n 1 "$T/err")"
done
for run in "2 2" "3 4" "3 2"; do
    set -- $run
    np=$1 sh=$2
    OMP_NUM_THREADS=1 mpi "$np" "$DG" hji learn --config "$C" --threads "$sh" --out "$T/r${np}_$sh" >"$T/out" 2>"$T/err"
    rc=$?
    if [ $rc -ne 0 ]; then bad "$sh shards on $np ranks: exit $rc ($(tail -n 3 "$T/err"))"
    elif ! same "$T/alone$sh" "$T/r${np}_$sh"; then bad "$sh shards on $np ranks: not the files of one process"
    elif [ "$(grep -c '"iterations":30' "$T/out")" -ne 1 ] || [ "$(grep -c '^wrote' "$T/err")" -ne 1 ]; then
        bad "$sh shards on $np ranks: want one JSON line and one 'wrote' line (rank 0): $(cat "$T/out" "$T/err")"
    else ok "$sh shards on $np ranks: value.safetensors and metrics.csv of one process, byte for byte (rank 0 prints)"; fi
done

# ------------------------------------------------------------ 2. --resume under mpirun
OMP_NUM_THREADS=1 mpi 2 "$DG" hji learn --config "$C" --threads 2 --iterations 15 --out "$T/res" --quiet \
    >/dev/null 2>"$T/err" && OMP_NUM_THREADS=1 mpi 2 "$DG" hji learn --resume "$T/res" --iterations 30 --quiet \
    >/dev/null 2>>"$T/err"
rc=$?
if [ $rc -ne 0 ]; then bad "resumed on 2 ranks: exit $rc ($(tail -n 3 "$T/err"))"
elif ! same "$T/alone2" "$T/res" || [ "$(wc -l <"$T/res/metrics.csv")" -ne 31 ]; then
    bad "15 iterations, then resumed to 30 on 2 ranks: not the run of 30 at once"
else ok "15 iterations on 2 ranks, resumed to 30 on 2 ranks: the files of 30 at once, byte for byte"; fi

# ------------------------------------------------------------ 3. --bench
OMP_NUM_THREADS=1 mpi 2 "$DG" hji learn --config "$C" --threads 2 --iterations 5 --bench >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -ne 0 ] || [ "$(grep -c '"ms_per_iteration"' "$T/out")" -ne 1 ] || [ "$(wc -l <"$T/out")" -ne 1 ]; then
    bad "--bench on 2 ranks: exit $rc, want one JSON line: $(cat "$T/out") $(tail -n 2 "$T/err")"
else ok "--bench on 2 ranks: one JSON line"; fi
finish
