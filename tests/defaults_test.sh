#!/usr/bin/env bash
# The shipped defaults show what each game is about (issue 10): trained at
# configs/reach.yaml, the agent goes around the obstacle (at most 5 % of 256
# held-out episodes enter it, median final distance <= 0.1), while the
# benchmark task configs/bench/reach.yaml, trained the same way, cuts through
# (so this test can tell the two apart); trained at configs/chase.yaml, the
# pursuer captures in >= 90 % of 256 held-out episodes and no body leaves the
# arena. One seed each (the report of issue 10 has seeds 0, 1, 2); held-out
# initial states come from eval --seed 1000, a seed no training run uses.
# usage: defaults_test.sh path/to/difgames repo_root
set -u
DG=$1
ROOT=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
cd "$ROOT"

metric() {  # json, key -> value
    sed -n "s/.*\"$2\": *\([^,}]*\).*/\1/p" <<<"$1"
}

# train_eval NAME CONFIG: trains seed 0, prints eval's JSON on 256 held-out states
train_eval() {
    "$DG" train --config "$2" --seed 0 --out "$T/$1" --quiet >/dev/null || { echo "FAIL $1: train"; return 1; }
    "$DG" eval --config "$2" --ckpt "$T/$1/final.safetensors" --seed 1000 --batch 256
}

expect() {  # name, awk condition on x, value
    if awk -v x="$3" "BEGIN { exit !($2) }"; then
        echo "ok   $1 ($3)"
    else
        echo "FAIL $1: $3 does not satisfy $2"
        fail=$((fail + 1))
    fi
}

j=$(train_eval reach configs/reach.yaml) || fail=$((fail + 1))
expect "reach: obstacle_hit_rate <= 0.05" "x <= 0.05" "$(metric "$j" obstacle_hit_rate)"
expect "reach: median final_dist <= 0.1" "x <= 0.1" "$(metric "$j" final_dist)"
j=$(train_eval bench configs/bench/reach.yaml) || fail=$((fail + 1))
expect "benchmark reach cuts through: obstacle_hit_rate > 0.3" "x > 0.3" "$(metric "$j" obstacle_hit_rate)"
j=$(train_eval chase configs/chase.yaml) || fail=$((fail + 1))
expect "chase: capture_rate >= 0.9" "x >= 0.9" "$(metric "$j" capture_rate)"
expect "chase: left_arena == 0" "x == 0" "$(metric "$j" left_arena)"

[ "$fail" -eq 0 ] || { echo "$fail failed"; exit 1; }
echo "all passed"
