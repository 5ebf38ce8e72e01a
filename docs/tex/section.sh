#!/usr/bin/env bash
# Typesets one section of the theory PDF alone, for its writer's loop: docs/tex/section.sh NAME [OUT.pdf]
# (sections/NAME.tex with the document's preamble, macros, measurements and bibliography; default
# OUT /tmp/dg_section_NAME.pdf). Errors and undefined references fail it, as docs/tex/build.sh.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
NAME=${1:?usage: docs/tex/section.sh NAME [OUT.pdf]}
OUT="${2:-/tmp/dg_section_$NAME.pdf}"
W="$(mktemp -d "${TMPDIR:-/tmp}/dg_sec.XXXXXX")"
trap 'rm -rf "$W"' EXIT
cp -r "$HERE/refs.bib" "$HERE"/refs-*.bib "$HERE/sections" "$HERE/fig" "$W/" 2>/dev/null || true
mkdir -p "$W/gen"
python3 "$HERE/measurements.py" >"$W/gen/measurements.tex"
# the main file with only this section between the table of contents and the bibliography
sed -e '/^\\input{sections\//d' -e "s|^\\\\bibliographystyle|\\\\input{sections/$NAME}\\n\\\\bibliographystyle|" \
    "$HERE/difgames.tex" >"$W/difgames.tex"
cd "$W"
run() { "$@" >"$W/step.log" 2>&1 || { tail -40 "$W/step.log" >&2; echo "section.sh: $1 failed (above)" >&2; exit 1; }; }
run pdflatex -interaction=nonstopmode -halt-on-error difgames.tex
run bibtex difgames
run pdflatex -interaction=nonstopmode -halt-on-error difgames.tex
run pdflatex -interaction=nonstopmode -halt-on-error difgames.tex
if grep -E "Reference .* undefined|Citation .* undefined" difgames.log >&2; then
    echo "section.sh: undefined references (above; a \\ref to another section is fine only in the full build)" >&2
fi
cp difgames.pdf "$OUT"
echo "section.sh: wrote $OUT ($(pdfinfo "$OUT" | sed -n 's/^Pages: *//p') pages, title page and contents included)"
