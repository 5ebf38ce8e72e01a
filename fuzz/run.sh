#!/usr/bin/env bash
# Builds the libFuzzer harnesses with clang and runs them.
# usage: fuzz/run.sh [config|safetensors|hji|all] [seconds per target, default 1800] [ci]
# New interesting inputs are added to fuzz/corpus/<target>/ (commit them); with
# "ci" they go to a scratch folder instead and the committed corpus is only
# read (build.sh test runs every target for 20 s that way). A crash, a
# leak, a hang (30 s on one input) or a sanitizer report fails the script and
# leaves the input in build-fuzz/crash-* (or leak-*, timeout-*, oom-*).
set -euo pipefail
cd "$(dirname "$0")/.."
WHICH=${1:-all}
SECS=${2:-1800}
MODE=${3:-}
TARGETS=(config safetensors hji)
OUT=build-fuzz
mkdir -p "$OUT"
# the library: every folder of src/ but the command's and the viewer's, and the folders within one
# (hji/learn), as CMakeLists.txt's globs (the float copy only: nothing here calls the double one)
SRC=$(ls src/*/*.c src/*/*/*.c | grep -v -e '^src/cli/' -e '^src/viewer/')
# -march=native as the CMake build: the gemm's vector types are written for it
CFLAGS="-g -O1 -std=c11 -march=native -Wno-psabi -Wno-pass-failed -fsanitize=address,undefined \
        -fno-sanitize-recover=undefined -Iinclude -Isrc -fopenmp $(pkg-config --cflags cairo)"
LIBS="$(pkg-config --libs yaml-0.1 libcjson libpng cairo libmatheval) -lgif -lm -fopenmp -ldl"
# the library once (instrumented for coverage), then one link per harness
rm -rf "$OUT/obj" && mkdir -p "$OUT/obj"
# shellcheck disable=SC2086
printf '%s\n' $SRC | xargs -P "$(nproc 2>/dev/null || echo 2)" -I{} sh -c \
    'o="$1/obj/$(echo "$2" | tr / _).o"; clang $3 -fsanitize=fuzzer-no-link -c "$2" -o "$o"' _ "$OUT" {} "$CFLAGS" \
    || { echo "fuzz/run.sh: the library did not build" >&2; exit 1; }
for t in "${TARGETS[@]}"; do
    [ "$WHICH" = all ] || [ "$WHICH" = "$t" ] || continue
    # shellcheck disable=SC2086
    clang $CFLAGS -fsanitize=fuzzer "fuzz/fuzz_$t.c" "$OUT"/obj/*.o $LIBS -o "$OUT/fuzz_$t" \
        || { echo "fuzz/run.sh: fuzz_$t did not build" >&2; exit 1; }
done
wait_all() {  # waits for every pid given; fails if one failed
    local rc=0
    for pid in "$@"; do wait "$pid" || rc=1; done
    return $rc
}
pids=()
for t in "${TARGETS[@]}"; do
    [ "$WHICH" = all ] || [ "$WHICH" = "$t" ] || continue
    mkdir -p "fuzz/corpus/$t"
    dirs=("fuzz/corpus/$t")
    if [ "$MODE" = ci ]; then rm -rf "$OUT/scratch-$t"; mkdir -p "$OUT/scratch-$t"; dirs=("$OUT/scratch-$t" "fuzz/corpus/$t"); fi
    ( "$OUT/fuzz_$t" "${dirs[@]}" -max_total_time="$SECS" -timeout=30 -rss_limit_mb=2048 -max_len=65536 \
          -artifact_prefix="$OUT/" -print_final_stats=1 >"$OUT/$t.log" 2>&1 \
      && echo "fuzz $t: $(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$OUT/$t.log" | grep -Eo '[0-9]+$') runs, no failure" ) \
      || { echo "fuzz $t: FAILED (input in $OUT/, log $OUT/$t.log)"; tail -n 40 "$OUT/$t.log"; exit 1; } &
    pids+=($!)
done
wait_all "${pids[@]}"
