#!/usr/bin/env bash
# Builds the libFuzzer harnesses with clang and runs them.
# usage: fuzz/run.sh [config|safetensors|hji|all] [seconds per target, default 1800]
# New interesting inputs are added to fuzz/corpus/<target>/ (commit them); a
# crash leaves crash-* files in the current folder.
set -euo pipefail
cd "$(dirname "$0")/.."
WHICH=${1:-all}
SECS=${2:-1800}
OUT=build-fuzz
mkdir -p "$OUT"
SRC=$(ls src/core/*.c src/io/*.c src/envs/*.c src/physics/*.c src/render/*.c src/policy/*.c \
         src/losses/*.c src/solver/*.c src/hji/*.c)
FLAGS="-g -O1 -std=c11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -Iinclude -Isrc"
LIBS="$(pkg-config --libs yaml-0.1 libcjson libpng) -lgif -lm -fopenmp"
for t in config safetensors hji; do
    [ "$WHICH" = all ] || [ "$WHICH" = "$t" ] || continue
    clang $FLAGS "fuzz/fuzz_$t.c" $SRC $LIBS -o "$OUT/fuzz_$t"
done
for t in config safetensors hji; do
    [ "$WHICH" = all ] || [ "$WHICH" = "$t" ] || continue
    mkdir -p "fuzz/corpus/$t"
    "$OUT/fuzz_$t" "fuzz/corpus/$t" -max_total_time="$SECS" -rss_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1 2>&1 | tail -n 25 &
done
wait
