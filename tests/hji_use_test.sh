#!/usr/bin/env bash
# A learned value is a value everywhere a grid value is (issue 27): hji play, hji versus and hji plot
# take a network of hji learn (value.safetensors) where they take a value file, the strategies from
# the network's own gradient (hji view too: viewer_test.sh).
# - a small pursuit2d network (300 iterations, as hji_learn_test.sh) plays from the same start states
#   to the same outcome as the grid's value (capture or escape), capture times within 0.05 s;
# - an f64 network plays in the command's double copy: V(x0) is the f64 tabulation's to 9 digits;
# - hji versus plays the four pairings with a chase4d network as the HJBI players;
# - hji plot draws a network alone (on the config's grid) and beside the grid's zero set (--learned:
#   magenta pixels beside the white);
# - refusals, one line and exit 2 each: a network without --config, a network of another game,
#   --config without a network, two networks, a network of another game (plot, play).
#   usage: hji_use_test.sh path/to/difgames repo_root
. "$(dirname "$0")/lib.sh"
cd "$ROOT" || exit 1
PY=/usr/bin/python3
jget() { $PY -c 'import json, sys; r = json.loads(open(sys.argv[1]).read().splitlines()[-1]); print(r.get(sys.argv[2]))' "$1" "$2"; }

P=$(cfg p "game: pursuit2d\nmode: brt\nt_end: 1.0\ngrid: {min: [-2, -2], max: [2, 2], n: [41, 41]}\nlearn: {hidden: [32, 32], points: 256, iterations: 300, pretrain: 30, curriculum: 150, lr: 0.001, seed: 1}\n")
"$DG" hji learn --config "$P" --out "$T/run" --quiet >/dev/null 2>"$T/l.err" || bad "hji learn: $(tail -2 "$T/l.err")"
"$DG" hji solve --config "$P" --out "$T/g.safetensors" >/dev/null 2>"$T/s.err" || bad "hji solve: $(tail -2 "$T/s.err")"
NET=$T/run/value.safetensors
# the same start states, the grid's value and the network's: captured or not alike
same=0 caps=0 escs=0
for x in 0.5,0.3 1.0,0.2 -0.9,0.6 0.3,-0.95 1.5,1.1 1.9,-1.9 -1.2,-1.4; do
    "$DG" hji play --config "$P" --value "$T/g.safetensors" --from $x --out "$T/g.csv" >"$T/g.json" 2>"$T/g.err" \
        || bad "play grid from $x: $(tail -1 "$T/g.err")"
    "$DG" hji play --config "$P" --value "$NET" --from $x --out "$T/n.csv" --gif "$T/n.gif" >"$T/n.json" 2>"$T/n.err" \
        || bad "play network from $x: $(tail -1 "$T/n.err")"
    og=$(jget "$T/g.json" outcome) on=$(jget "$T/n.json" outcome)
    tg=$(jget "$T/g.json" capture_time) tn=$(jget "$T/n.json" capture_time)
    if [ "$og" = "$on" ] && { [ "$og" = escape ] || awk -v a="$tg" -v b="$tn" 'BEGIN {exit !((a - b)^2 < 0.0025)}'; }; then
        same=$((same + 1))
    else
        echo "  from $x: grid $og $tg, network $on $tn"
    fi
    [ "$on" = capture ] && caps=$((caps + 1)); [ "$on" = escape ] && escs=$((escs + 1))
done
[ $same -eq 7 ] && [ $caps -ge 2 ] && [ $escs -ge 2 ] \
    && ok "hji play: a network and the grid's value, the same outcome from 7 starts ($caps captures, $escs escapes)" \
    || bad "hji play: $same of 7 alike ($caps captures, $escs escapes)"
[ "$(jget "$T/n.json" value)" = network ] && [ "$(jget "$T/g.json" value)" = None ] && [ -s "$T/n.gif" ] \
    && ok "hji play's JSON says a network was played (value_times for a grid's); its GIF" \
    || bad "hji play JSON: $(cat "$T/n.json")"
# an f64 network plays in the double copy: V(x0) to 9 digits is the f64 tabulation's at that node
P64=$(cfg p64 "game: pursuit2d\nmode: brt\nt_end: 1.0\ngrid: {min: [-2, -2], max: [2, 2], n: [41, 41]}\nlearn: {hidden: [32, 32], points: 256, iterations: 100, pretrain: 30, curriculum: 50, lr: 0.001, seed: 1, precision: f64}\n")
"$DG" hji learn --config "$P64" --out "$T/r64" --quiet >/dev/null 2>&1 \
    && "$DG" hji tabulate --value "$T/r64/value.safetensors" --config "$P64" --out "$T/t64.safetensors" 2>/dev/null \
    && "$DG" hji play --config "$P64" --value "$T/r64/value.safetensors" --from 0.5,0.3 --out "$T/n64.csv" >"$T/n64.json" 2>"$T/n64.err" \
    || bad "f64 network: $(tail -1 "$T/n64.err")"
want=$($PY - "$T/t64.safetensors" <<'PY'
import json, struct, sys
b = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n]); t = h["value"]
o0, o1 = t["data_offsets"]; v = struct.unpack("<%dd" % ((o1 - o0) // 8), b[8 + n + o0:8 + n + o1])
print("%.9g" % v[25 * 41 + 23])   # x = 0.5 (node 25 of axis 0), y = 0.3 (node 23)
PY
)
got=$($PY -c 'import json,sys; print("%.9g" % json.loads(open(sys.argv[1]).read())["value_x0"])' "$T/n64.json")
[ -n "$want" ] && [ "$got" = "$want" ] && ok "an f64 network plays in double: V(x0) $got, the f64 tabulation's" \
    || bad "f64 network: V(x0) $got, tabulated $want"
# hji versus: a chase4d network as the HJBI players, the four pairings
C4=$(cfg c4 "game: chase4d\nt_end: 0.2\naccuracy: low\ngrid: {min: [-1, -1, -2, -2], max: [1, 1, 2, 2], n: [9, 9, 9, 9]}\nlearn: {hidden: [16, 16], points: 256, iterations: 40, pretrain: 10, curriculum: 20, seed: 1}\n")
"$DG" train --config configs/duel_open.yaml --epochs 2 --batch 8 --out "$T/do" --quiet >/dev/null 2>&1 \
    && "$DG" hji learn --config "$C4" --out "$T/c4" --quiet >/dev/null 2>&1 || bad "versus setup"
"$DG" hji versus --config configs/duel_open.yaml --ckpt "$T/do/final.safetensors" --hji "$C4" \
    --value "$T/c4/value.safetensors" --batch 16 >"$T/v.json" 2>"$T/v.err" \
    && [ "$(grep -c '"pairing"' "$T/v.json")" -eq 4 ] && grep -q '"value":"network"' "$T/v.json" \
    && grep -q "HJBI vs HJBI" "$T/v.err" \
    && ok "hji versus with a network: the four pairings" || bad "hji versus: $(tail -2 "$T/v.err") $(head -1 "$T/v.json")"
# hji plot: a network alone, and beside the grid's zero set
pixels() { $PY - "$1" <<'PY'
import struct, sys, zlib
b = open(sys.argv[1], "rb").read(); i = 8; idat = b""; w = h = 0
while i < len(b):
    n, t = struct.unpack(">I4s", b[i:i + 8]); d = b[i + 8:i + 8 + n]; i += 12 + n
    if t == b"IHDR": w, h, depth, ctype = struct.unpack(">IIBB", d[:10]); assert depth == 8 and ctype == 2
    elif t == b"IDAT": idat += d
raw = zlib.decompress(idat); s = 3 * w; prev = bytearray(s); mag = white = 0; p = 0
for y in range(h):
    f = raw[p]; line = bytearray(raw[p + 1:p + 1 + s]); p += 1 + s
    for x in range(s):
        a = line[x - 3] if x >= 3 else 0; up = prev[x]; c = prev[x - 3] if x >= 3 else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + up) & 255
        elif f == 3: line[x] = (line[x] + (a + up) // 2) & 255
        elif f == 4:
            q = a + up - c; pa, pb, pc = abs(q - a), abs(q - up), abs(q - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else up if pb <= pc else c)) & 255
    for x in range(0, s, 3):
        r, g, bl = line[x:x + 3]
        mag += r > 230 and g < 110 and bl > 230
        white += r > 240 and g > 240 and bl > 240
    prev = line
print(mag, white)
PY
}
"$DG" hji plot --value "$T/g.safetensors" --out "$T/g.png" 2>/dev/null && "$DG" hji plot --value "$T/g.safetensors" \
    --learned "$NET" --config "$P" --out "$T/both.png" 2>"$T/p.err" || bad "hji plot --learned: $(tail -1 "$T/p.err")"
read -r m0 w0 <<<"$(pixels "$T/g.png")"
read -r m1 w1 <<<"$(pixels "$T/both.png")"
[ "$m0" -lt 20 ] && [ "$m1" -gt 500 ] && [ "$w1" -gt 200 ] \
    && ok "hji plot --learned: the learned zero set in magenta ($m1 pixels, $m0 without) beside the grid's white" \
    || bad "hji plot --learned: magenta $m0 -> $m1, white $w1"
"$DG" hji plot --value "$NET" --config "$P" --out "$T/net.png" 2>"$T/p.err" && [ -s "$T/net.png" ] \
    && ok "hji plot --value NET --config: a network alone on the config's grid" || bad "hji plot NET: $(tail -1 "$T/p.err")"
A3=$(cfg a3 "game: air3d\nt_end: 1.0\naccuracy: low\ngrid: {n: [21, 21, 20]}\n")
run_rows "refused: " "" \
    "plot: a network without --config|is a network of hji learn: it needs --config|hji plot --value $NET" \
    "plot: --config without a network|--config is for a network|hji plot --value $T/g.safetensors --config $P" \
    "plot: two networks|is a network too|hji plot --value $NET --learned $NET --config $P" \
    "plot: a network of another game|--value: $NET: a value network of pursuit2d|hji plot --value $NET --config $A3" \
    "play: a network of another game|--value: $NET: a value network of pursuit2d|hji play --config $A3 --value $NET --from 6,0,1"
finish
