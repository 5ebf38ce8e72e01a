#!/usr/bin/env bash
# Memory estimates against the peak resident memory they predict: each job's
# estimate (printed by `train` and `hji solve` as "memory about X MiB") next to
# its peak RSS from /usr/bin/time -v, less the RSS of a job-free run of the
# same binary (code, libraries). docs/limits.md has the results.
# usage: bench/memory.sh [path/to/difgames]
set -u
DG=${1:-build/difgames}
cd "$(dirname "$0")/.."
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
c() { printf "$2" >"$T/$1.yaml"; echo "$T/$1.yaml"; }
rss() { grep "Maximum resident" "$1" | awk '{print $NF}'; }
/usr/bin/time -v "$DG" games >/dev/null 2>"$T/base"
BASE=$(rss "$T/base")
row() {  # label, command... (the command prints "memory about X MiB")
    local label=$1; shift
    /usr/bin/time -v "$@" >/dev/null 2>"$T/err"
    local kib est
    kib=$(rss "$T/err")
    est=$(grep -o "memory about [0-9.]* MiB" "$T/err" | awk '{print $3}')
    awk -v l="$label" -v e="$est" -v r="$kib" -v b="$BASE" \
        'BEGIN { printf "| %s | %.1f | %.1f | %.2f |\n", l, e, (r - b) / 1024, e * 1024 / (r - b) }'
}
echo "| job | estimate (MiB) | peak RSS less base (MiB) | ratio |"
echo "|---|---|---|---|"
row "train reach, batch 64, horizon 60 (default)" "$DG" train --config configs/reach.yaml --epochs 3 --out "$T/r1"
row "train reach, batch 4096, horizon 60" "$DG" train --config "$(c r2 'game: reach\ntrain: {batch: 4096, epochs: 2}\n')" --out "$T/r2"
row "train reach, batch 4096, horizon 600 (checkpointed)" "$DG" train --config "$(c r3 'game: reach\ntrain: {batch: 4096, epochs: 1}\nenv: {horizon: 600}\n')" --out "$T/r3"
row "train reach, batch 2048, horizon 300, full tape" "$DG" train --config "$(c r4 'game: reach\ntrain: {batch: 2048, epochs: 1, checkpoint_every: -1}\nenv: {horizon: 300}\n')" --out "$T/r4"
row "train reach, hidden 1024x3, batch 256" "$DG" train --config "$(c r5 'game: reach\npolicy: {hidden: [1024, 1024, 1024]}\ntrain: {batch: 256, epochs: 1}\n')" --out "$T/r5"
row "train chase, batch 1024" "$DG" train --config "$(c c1 'game: chase\ntrain: {batch: 1024, epochs: 2}\n')" --out "$T/c1"
row "train chase, learned evader, batch 1024" "$DG" train --config "$(c c2 'game: chase\nenv: {evader: policy}\ntrain: {batch: 1024, epochs: 2}\n')" --out "$T/c2"
row "train pixel, batch 32, size 32 (default)" "$DG" train --config configs/pixel.yaml --epochs 2 --out "$T/p1"
row "train pixel, batch 64, size 128" "$DG" train --config "$(c p2 'game: pixel\nrender: {size: 128}\ntrain: {batch: 64, epochs: 1}\n')" --out "$T/p2"
row "train billiards, policy, batch 1024" "$DG" train --config "$(c b1 'game: billiards\ntrain: {mode: policy, batch: 1024, epochs: 2}\n')" --out "$T/b1"
row "train racing, batch 1024" "$DG" train --config "$(c g1 'game: racing\ntrain: {batch: 1024, epochs: 2}\n')" --out "$T/g1"
row "train racing, batch 1024, horizon 400, truncate 50" "$DG" train --config "$(c g2 'game: racing\nenv: {horizon: 400}\ntrain: {batch: 1024, epochs: 1, truncate: 50}\n')" --out "$T/g2"
row "hji solve pursuit2d 801², veryHigh (RK3)" "$DG" hji solve --config "$(c h1 'game: pursuit2d\nt_end: 0.1\ngrid: {n: [801, 801]}\n')" --out "$T/h1.st" --threads 1 --slices 1
row "hji solve pursuit2d 801², low (Euler)" "$DG" hji solve --config "$(c h2 'game: pursuit2d\nt_end: 0.1\naccuracy: low\ngrid: {n: [801, 801]}\n')" --out "$T/h2.st" --threads 1 --slices 1
row "hji solve pursuit2d 801², --times (5 values)" "$DG" hji solve --config "$T/h1.yaml" --out "$T/h3.st" --times 0.02,0.04,0.06,0.08 --threads 1 --slices 1
row "hji solve pursuit2d 801², --float32" "$DG" hji solve --config "$T/h1.yaml" --out "$T/h4.st" --float32 --threads 1 --slices 1
row "hji solve air3d 101x101x81" "$DG" hji solve --config "$(c h5 'game: air3d\nt_end: 0.05\ngrid: {n: [101, 101, 81]}\n')" --out "$T/h5.st" --threads 1 --slices 1
row "hji solve air3d 101x101x81, --float32, 3 times" "$DG" hji solve --config "$T/h5.yaml" --out "$T/h6.st" --float32 --times 0.01,0.03 --threads 1 --slices 1
row "hji solve chase4d 41⁴" "$DG" hji solve --config "$(c h7 'game: chase4d\nt_end: 0.02\ngrid: {n: [41, 41, 41, 41]}\n')" --out "$T/h7.st" --threads 1 --slices 1
row "hji solve pursuit2d 801², 11 slices (default)" "$DG" hji solve --config "$T/h1.yaml" --out "$T/h8.st" --threads 1
row "hji solve air3d 101x101x81, 11 slices (default)" "$DG" hji solve --config "$T/h5.yaml" --out "$T/h9.st" --threads 1
