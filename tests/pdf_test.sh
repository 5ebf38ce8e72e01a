#!/usr/bin/env bash
# The theory PDF (docs/difgames.pdf, issue 31): rebuilt from docs/tex/ it compiles without errors or
# undefined references (docs/tex/build.sh fails on either), has at least 25 pages, and its text
# (pdftotext) equals the committed PDF's: the committed file is what the sources typeset. Every figure
# the sources include is in docs/tex/fig/ and listed in its MANIFEST by docs/tex/figures.sh with the
# same sha256 (drawn by difgames, not edited since). Every number comes from docs/measurements/*.json
# (measurements.py; an unknown id stops the build).
#   usage: pdf_test.sh repo_root
ROOT=${1:?usage: pdf_test.sh repo_root}
cd "$ROOT" || exit 1
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
for t in pdflatex bibtex pdftotext pdfinfo; do
    command -v $t >/dev/null || { echo "pdf_test: $t is missing (./build.sh test installs TeX and poppler-utils)"; exit 1; }
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
if docs/tex/build.sh "$T/rebuilt.pdf" >"$T/build.log" 2>&1; then
    ok "docs/tex/build.sh: no LaTeX error, no undefined reference or citation"
else
    bad "docs/tex/build.sh: $(tail -15 "$T/build.log")"
fi
[ -f docs/difgames.pdf ] || bad "docs/difgames.pdf is not committed"
if [ -f "$T/rebuilt.pdf" ] && [ -f docs/difgames.pdf ]; then
    pages=$(pdfinfo "$T/rebuilt.pdf" | sed -n 's/^Pages: *//p')
    [ "${pages:-0}" -ge 25 ] && ok "$pages pages (at least 25)" || bad "$pages pages, fewer than 25"
    pdftotext -layout docs/difgames.pdf "$T/committed.txt" && pdftotext -layout "$T/rebuilt.pdf" "$T/rebuilt.txt"
    if cmp -s "$T/committed.txt" "$T/rebuilt.txt"; then
        ok "the committed PDF's text equals the rebuilt one's"
    else
        bad "docs/difgames.pdf is stale (./build.sh docs rewrites it): $(diff "$T/committed.txt" "$T/rebuilt.txt" | head -8)"
    fi
fi
# every figure included is one figures.sh drew, unchanged
figs=$(grep -ho '\\includegraphics\(\[[^]]*\]\)\?{[^}]*}' docs/tex/difgames.tex docs/tex/sections/*.tex | sed 's/.*{\(.*\)}/\1/' | sort -u)
n=0
for f in $figs; do
    n=$((n + 1))
    name=${f#fig/}
    if [ ! -f "docs/tex/fig/$name" ]; then
        bad "figure $f is not in docs/tex/fig/"
        continue
    fi
    want=$(awk -v n="$name" '$2 == n {print $1}' docs/tex/fig/MANIFEST 2>/dev/null)
    have=$(sha256sum "docs/tex/fig/$name" | cut -d' ' -f1)
    [ -n "$want" ] && [ "$want" = "$have" ] && ok "figure $name: drawn by docs/tex/figures.sh, unchanged" \
        || bad "figure $name: not in docs/tex/fig/MANIFEST or changed since docs/tex/figures.sh drew it"
done
[ "$n" -ge 1 ] || bad "the PDF includes no figure"
exit $fail
