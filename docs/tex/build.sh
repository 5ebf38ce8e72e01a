#!/usr/bin/env bash
# Typesets docs/difgames.pdf from docs/tex/ (./build.sh docs calls it): the measurements' macros from
# docs/measurements/*.json, then pdflatex, bibtex, pdflatex twice, in a scratch folder; reproducible
# (SOURCE_DATE_EPOCH, no dates or IDs in the PDF). It only typesets: figures and measurement files
# are the committed ones (docs/tex/figures.sh redraws the figures).
#   usage: docs/tex/build.sh [OUT.pdf]   (default docs/difgames.pdf)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
SRC="$(cd "$HERE/../.." && pwd)"
OUT="${1:-$SRC/docs/difgames.pdf}"
W="$(mktemp -d "${TMPDIR:-/tmp}/dg_tex.XXXXXX")"
trap 'rm -rf "$W"' EXIT
export SOURCE_DATE_EPOCH=1767225600 FORCE_SOURCE_DATE=1 TZ=UTC LC_ALL=C
cp -r "$HERE/difgames.tex" "$HERE"/refs*.bib "$HERE/sections" "$HERE/fig" "$W/"
mkdir -p "$W/gen"
python3 "$HERE/measurements.py" >"$W/gen/measurements.tex"
cd "$W"
run() { "$@" >"$W/step.log" 2>&1 || { cat "$W/step.log" >&2; echo "docs/tex/build.sh: $1 failed (above)" >&2; exit 1; }; }
run pdflatex -interaction=nonstopmode -halt-on-error difgames.tex
run bibtex difgames
run pdflatex -interaction=nonstopmode -halt-on-error difgames.tex
run pdflatex -interaction=nonstopmode -halt-on-error difgames.tex
if grep -E "undefined references|Citation .* undefined|Reference .* undefined|There were undefined" difgames.log >&2; then
    echo "docs/tex/build.sh: undefined references (above)" >&2
    exit 1
fi
if grep -q "Warning--" difgames.blg; then grep "Warning--" difgames.blg >&2; fi
tmp="$OUT.tmp.$$"
cp difgames.pdf "$tmp" && mv "$tmp" "$OUT"
echo "docs/tex/build.sh: wrote $OUT ($(pdfinfo "$OUT" 2>/dev/null | sed -n 's/^Pages: *//p') pages)"
