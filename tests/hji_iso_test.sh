#!/usr/bin/env bash
# hji plot --3d (issue 31): a 3-D value's level set as a shaded surface (marching tetrahedra,
# dg_hji_plot_iso), helperOC's visSetIm.
# - a small air3d (21x21x20) drawn to a PNG (its signature, its size: 820x740, a surface's worth of
#   bytes) and to a PDF (its header, its end, vector: no image of the figure inside);
# - --level and --view draw another picture; without --out, the value's path with _3d.png;
# - a 4-D value (chase4d) drawn through its 3-D slice at --at; a network of hji learn with --config;
# - refusals, one line and exit 2 each: a value of 2 axes, --view or --level without --3d, a --view
#   of one number or an elevation past 90, --learned with --3d.
#   usage: hji_iso_test.sh path/to/difgames repo_root
. "$(dirname "$0")/lib.sh"
cd "$ROOT" || exit 1
PY=/usr/bin/python3
A3=$(cfg a3 "game: air3d\nt_end: 1.0\naccuracy: low\ngrid: {n: [21, 21, 20]}\nlearn: {hidden: [16, 16], points: 256, iterations: 20, pretrain: 5, curriculum: 10, seed: 1}\n")
"$DG" hji solve --config "$A3" --out "$T/a3.safetensors" >/dev/null 2>"$T/s.err" || bad "hji solve air3d: $(tail -1 "$T/s.err")"
# png_info FILE: "WIDTH HEIGHT" of a PNG with its signature, else nothing
png_info() { $PY -c 'import struct, sys
b = open(sys.argv[1], "rb").read()
if b[:8] == b"\x89PNG\r\n\x1a\n" and b[12:16] == b"IHDR": print(*struct.unpack(">II", b[16:24]))' "$1"; }
"$DG" hji plot --3d --value "$T/a3.safetensors" --out "$T/tube.png" 2>"$T/p.err" || bad "plot --3d png: $(tail -1 "$T/p.err")"
size=$(wc -c <"$T/tube.png" 2>/dev/null || echo 0)
[ "$(png_info "$T/tube.png")" = "820 740" ] && [ "$size" -gt 30000 ] && grep -q "wrote $T/tube.png" "$T/p.err" \
    && ok "hji plot --3d: a PNG of 820x740, $size bytes" || bad "plot --3d png: $(png_info "$T/tube.png"), $size bytes"
"$DG" hji plot --3d --value "$T/a3.safetensors" --out "$T/tube.pdf" 2>"$T/p.err" || bad "plot --3d pdf: $(tail -1 "$T/p.err")"
size=$(wc -c <"$T/tube.pdf" 2>/dev/null || echo 0)
[ "$(head -c 5 "$T/tube.pdf")" = "%PDF-" ] && tail -c 8 "$T/tube.pdf" | grep -q "%%EOF" && [ "$size" -gt 30000 ] \
    && ! grep -qa "/Subtype */Image" "$T/tube.pdf" \
    && ok "hji plot --3d --out .pdf: a PDF of $size bytes, vector (no image in it)" || bad "plot --3d pdf: $size bytes"
"$DG" hji plot --3d --value "$T/a3.safetensors" --level 1.5 --view 30,20 --out "$T/other.png" 2>"$T/p.err" \
    && [ "$(png_info "$T/other.png")" = "820 740" ] && ! cmp -s "$T/tube.png" "$T/other.png" \
    && ok "--level 1.5 --view 30,20: another picture" || bad "--level --view: $(tail -1 "$T/p.err")"
"$DG" hji plot --3d --value "$T/a3.safetensors" 2>"$T/p.err" && [ -n "$(png_info "$T/a3_3d.png")" ] \
    && ok "without --out: the value's path with _3d.png" || bad "default --out: $(tail -1 "$T/p.err")"
# more axes: the 3-D slice through axes 0, 1, 2 at --at
C4=$(cfg c4 "game: chase4d\nt_end: 0.2\naccuracy: low\ngrid: {min: [-1, -1, -2, -2], max: [1, 1, 2, 2], n: [9, 9, 9, 9]}\n")
"$DG" hji solve --config "$C4" --out "$T/c4.safetensors" >/dev/null 2>&1 \
    && "$DG" hji plot --3d --value "$T/c4.safetensors" --at x3=0.5 --out "$T/c4.png" 2>"$T/p.err" \
    && [ "$(png_info "$T/c4.png")" = "820 740" ] \
    && ok "a 4-D value: its 3-D slice at --at x3=0.5" || bad "4-D --3d: $(tail -1 "$T/p.err")"
# a network of hji learn, tabulated on --config's grid
"$DG" hji learn --config "$A3" --out "$T/net" --quiet >/dev/null 2>"$T/l.err" || bad "hji learn: $(tail -1 "$T/l.err")"
"$DG" hji plot --3d --value "$T/net/value.safetensors" --config "$A3" --level 0.5 --out "$T/net.png" 2>"$T/p.err" \
    && [ "$(png_info "$T/net.png")" = "820 740" ] \
    && ok "a network with --config: tabulated, then drawn" || bad "network --3d: $(tail -1 "$T/p.err")"
P2=$(cfg p2 "game: pursuit2d\nt_end: 0.5\ngrid: {min: [-2, -2], max: [2, 2], n: [21, 21]}\n")
"$DG" hji solve --config "$P2" --out "$T/p2.safetensors" >/dev/null 2>&1 || bad "hji solve pursuit2d"
OUTS=$T/outs
mkdir -p "$OUTS"
run_rows "refused: " "" \
    "a value of 2 axes|has 2 axes: a 3-D figure needs 3 or more|hji plot --3d --value $T/p2.safetensors --out $OUTS/x.png" \
    "--view without --3d|--view is for the 3-D figure: add --3d|hji plot --value $T/a3.safetensors --view 10,10 --out $OUTS/x.png" \
    "--level without --3d|--level is for the 3-D figure|hji plot --value $T/a3.safetensors --level 1 --out $OUTS/x.png" \
    "--view of one number|want AZ,EL|hji plot --3d --value $T/a3.safetensors --view 10 --out $OUTS/x.png" \
    "an elevation past 90|the elevation in [-90, 90]|hji plot --3d --value $T/a3.safetensors --view 10,95 --out $OUTS/x.png" \
    "--learned with --3d|not with --3d|hji plot --3d --value $T/a3.safetensors --learned $T/net/value.safetensors --config $A3 --out $OUTS/x.png"
finish
