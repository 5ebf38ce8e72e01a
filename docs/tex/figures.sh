#!/usr/bin/env bash
# Redraws every figure of the theory PDF into docs/tex/fig/ with difgames itself (a few minutes on 2
# cores), then writes docs/tex/fig/MANIFEST: each figure's sha256 and the command that drew it. Run
# it when results change; ./build.sh docs only typesets the committed figures, and the docs test
# (tests/pdf_test.sh) checks that every figure the PDF includes is listed there, unchanged.
#   usage: docs/tex/figures.sh [BUILD]   (BUILD: a Release build folder, default build)
set -euo pipefail
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$SRC"
B="${1:-build}"
DG="$B/difgames"
[ -x "$DG" ] || { echo "figures.sh: no $DG (./build.sh first)" >&2; exit 2; }
FIG=docs/tex/fig
W="$(mktemp -d "${TMPDIR:-/tmp}/dg_fig.XXXXXX")"
trap 'rm -rf "$W"' EXIT
MAN="$W/MANIFEST"
: >"$MAN"
# draw NAME COMMAND...: runs the command (its output into the scratch folder), then records NAME
draw() {
    local name=$1; shift
    echo "figures.sh: $name: $*" >&2
    "$@" >"$W/out.log" 2>&1 || { cat "$W/out.log" >&2; echo "figures.sh: $name failed" >&2; exit 1; }
}
record() {  # record NAME "COMMAND TEXT"
    echo "$(sha256sum "$FIG/$1" | cut -d' ' -f1)  $1  $2" >>"$MAN"
}

# 1. the grid solver's convergence: the smooth benchmark's mean error against n, each scheme's order
draw convergence.png "$B/bench/hji_convergence" smooth "$FIG/convergence.png"
record convergence.png "build/bench/hji_convergence smooth docs/tex/fig/convergence.png"

# 2. the air3d tube in three dimensions (veryHigh, 51 x 40 x 50): its zero isosurface
draw air3d "$DG" hji solve --config configs/hji/air3d.yaml --out "$W/air3d.safetensors"
draw air3d_tube.pdf "$DG" hji plot --3d --value "$W/air3d.safetensors" --out "$FIG/air3d_tube.pdf"
draw air3d_tube.png "$DG" hji plot --3d --value "$W/air3d.safetensors" --out "$FIG/air3d_tube.png"
record air3d_tube.pdf "difgames hji solve --config configs/hji/air3d.yaml --out V.safetensors; difgames hji plot --3d --value V.safetensors --out docs/tex/fig/air3d_tube.pdf"
record air3d_tube.png "difgames hji plot --3d --value V.safetensors --out docs/tex/fig/air3d_tube.png"

# 3. two-player training: duel_simple's curves (both players' losses, the exploitability), the
#    run's own loss.png; then certify's value against the policy's cost at held-out starts
draw duel_simple "$DG" train --config configs/duel_simple.yaml --out "$W/ds" --quiet
cp "$W/ds/loss.png" "$FIG/training.png"
record training.png "difgames train --config configs/duel_simple.yaml --out runs/duel_simple (its loss.png)"
draw certify.png "$DG" certify --config configs/duel_simple.yaml --ckpt "$W/ds/final.safetensors" \
    --hji configs/hji/duel_simple_time.yaml --no-exploit --plot "$FIG/certify.png"
record certify.png "difgames certify --config configs/duel_simple.yaml --ckpt runs/duel_simple/final.safetensors --hji configs/hji/duel_simple_time.yaml --no-exploit --plot docs/tex/fig/certify.png"

sort -k2 "$MAN" >"$FIG/MANIFEST"
echo "figures.sh: wrote $(wc -l <"$FIG/MANIFEST") figures into $FIG (MANIFEST)" >&2
