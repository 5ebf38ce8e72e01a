#!/usr/bin/env bash
# Hostile input, the classes of memory, counts, output size and value files:
# every row gets exit status 2, exactly one line on stderr naming the key or
# option (or the file and what differs), and leaves no file behind. Rows are
# also run under `ulimit -v` (1 GiB): refused with a message, never killed.
#  1. memory: a job that cannot fit is refused before it allocates;
#  2. counts from user numbers (steps, nodes) are bounded;
#  3. outputs (hji play's CSV, replay's GIF) are bounded by an option;
#  4. a value file that does not belong to the config is refused.
# usage: hostile_memory_test.sh path/to/difgames repo_root
. "$(dirname "$0")/lib.sh"
trap 'umount "$T/small" 2>/dev/null; rm -rf "$T"' EXIT
cd "$ROOT"

# a small value file (pursuit2d on 41x41), one on a non-square grid, a checkpoint
P2=$(cfg p2 'game: pursuit2d\nt_end: 0.5\ngrid: {n: [41, 41]}\n')
"$DG" hji solve --config "$P2" --out "$T/v.safetensors" --times 0.25 >/dev/null 2>&1 || bad "solve a value file"
RECT=$(cfg rect 'game: pursuit2d\nt_end: 0.5\ngrid: {min: [-2, -1], max: [2, 1], n: [41, 21]}\n')
"$DG" hji solve --config "$RECT" --out "$T/rect.safetensors" >/dev/null 2>&1 || bad "solve a value file"
"$DG" train --config configs/reach.yaml --epochs 1 --batch 4 --out "$T/ck" --quiet >/dev/null 2>&1 || bad "make a checkpoint"
"$DG" train --config configs/duel_open.yaml --epochs 1 --batch 4 --out "$T/duel" --quiet >/dev/null 2>&1 || bad "make a checkpoint"
/usr/bin/python3 - "$T/v.safetensors" "$T/nan.safetensors" <<'PY' || bad "make a NaN value file"
import json, struct, sys
b = open(sys.argv[1], 'rb').read()
n = struct.unpack('<Q', b[:8])[0]
h = json.loads(b[8:8 + n])
off = 8 + n + h['value']['data_offsets'][0] + 8 * 100
b = b[:off] + struct.pack('<d', float('nan')) + b[off + 8:]
open(sys.argv[2], 'wb').write(b)
PY
/usr/bin/python3 - "$T/init.safetensors" <<'PY' || bad "make an init file"
import json, struct, sys
B = 300000
h = {"state": {"dtype": "F32", "shape": [B, 4], "data_offsets": [0, 16 * B]},
     "goal": {"dtype": "F32", "shape": [B, 2], "data_offsets": [16 * B, 24 * B]}}
hb = json.dumps(h).encode()
hb += b" " * (-len(hb) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(hb)) + hb + bytes(24 * B))
PY
/usr/bin/python3 - "$T/v.safetensors" "$T/longgame.safetensors" <<'PY' || bad "make a value file with a long game name"
import json, struct, sys
b = open(sys.argv[1], 'rb').read()
n = struct.unpack('<Q', b[:8])[0]
h = json.loads(b[8:8 + n])
h['__metadata__']['game'] = 'x' * 300
hb = json.dumps(h).encode()
hb += b' ' * (-len(hb) % 8)
open(sys.argv[2], 'wb').write(struct.pack('<Q', len(hb)) + hb + b[8 + n:])
PY
"$DG" train --config configs/pixel.yaml --epochs 1 --batch 2 --out "$T/px" --quiet >/dev/null 2>&1 || bad "make a pixel checkpoint"
PX=$(cfg px 'game: pixel\nrender: {size: 1024}\n')
mkdir -p "$T/out"
O=$T/out
OUTS=$O  # run_rows: a refused row leaves nothing here

# name | expected words in the one error line | command...
table=(
  # 1. memory
  "train: batch x horizon|key 'train.batch': batch 1000000 x horizon 100000 needs about|train --config $(cfg m1 'game: reach\ntrain: {batch: 1000000}\nenv: {horizon: 100000}\n') --out $O/m1"
  "train: policy size|key 'policy.hidden': batch 64 x horizon 60 needs about|train --config $(cfg m2 'game: reach\npolicy: {hidden: [65536, 65536, 65536]}\n') --out $O/m2"
  "pixel: render.size|key 'render.size': batch 100000 x horizon 40 needs about|train --config $(cfg m3 'game: pixel\nrender: {size: 1024}\ntrain: {batch: 100000}\n') --out $O/m3"
  "eval: batch x horizon|difgames eval: batch 100000 x horizon 100000 needs about|eval --config configs/reach.yaml --ckpt $T/ck/final.safetensors --batch 100000 --horizon 100000"
  "eval --grad-out: batch x horizon|difgames eval: batch 100000 x horizon 100000 with gradients needs about|eval --config configs/reach.yaml --ckpt $T/ck/final.safetensors --batch 100000 --horizon 100000 --grad-out $O/g.safetensors"
  "eval: pixel images|difgames eval: batch 20000 x horizon 40 needs about|eval --config $PX --ckpt $T/px/final.safetensors --batch 20000"
  "eval --init: rows of pixel images|init.safetensors: 300000 initial states needs about|eval --config $PX --ckpt $T/px/final.safetensors --init $T/init.safetensors"
  "replay: horizon|difgames replay: an episode of horizon 10000000 needs about|replay --config $(cfg m7 'game: reach\nenv: {horizon: 10000000}\n') --ckpt $T/ck/final.safetensors --frames 2 --out $O/r.gif"
  "train: epochs|key 'train.epochs': batch 64 x horizon 60 needs about|train --config $(cfg m4 'game: reach\ntrain: {epochs: 100000000}\n') --out $O/m4"
  "pg: batch x horizon|difgames pg: batch 1048576 x horizon 100000 needs about|pg --config $(cfg m5 'game: reach\nenv: {horizon: 100000}\n') --batch 1048576 --iters 1 --out $O/m5"
  "gradcheck: batch x horizon|difgames gradcheck: batch 4096 x horizon 100000: the episode needs about|gradcheck --config configs/pixel.yaml --batch 4096 --horizon 100000"
  "hji: grid too large|key 'grid.n': a grid of 4000000000 nodes needs about|hji solve --config $(cfg m6 'game: pursuit2d\ngrid: {n: [40000, 100000]}\n') --out $O/m6.safetensors"
  # 2. counts
  "hji: node count past 2^40|the product of the node counts passes 2^40|hji solve --config $(cfg c1 'game: air3d\ngrid: {n: [100000, 100000, 100000]}\n') --out $O/c1.safetensors"
  "hji: t_end / dt steps|key 'solver.dt': t_end 1 / dt 1e-12 is 1e+12 steps|hji solve --config $(cfg c2 'game: pursuit2d\ngrid: {n: [21, 21]}\nsolver: {dt: 1e-12}\n') --out $O/c2.safetensors"
  "hji: cfl steps|steps, more than 100000000 (raise dt or cfl|hji solve --config $(cfg c3 'game: pursuit2d\ngrid: {n: [21, 21]}\nsolver: {cfl: 1e-12}\n') --out $O/c3.safetensors"
  "hji play: t-max / dt|steps, more than --max-steps 100000|hji play --config $P2 --value $T/v.safetensors --from 1,1 --t-max 1e300 --dt 1e-300 --out $O/c4.csv"
  # 3. outputs
  "hji play: CSV rows|--t-max 2000 / --dt 0.01 is 2e+05 steps, more than --max-steps 100000|hji play --config $P2 --value $T/v.safetensors --from 1,1 --t-max 2000 --dt 0.01 --out $O/o1.csv --gif $O/o1.gif"
  "replay: GIF size|frames of 2048x2070 pixels pass --max-mb 256|replay --config $(cfg o2 'game: reach\nenv: {horizon: 10000}\n') --ckpt $T/ck/final.safetensors --size 2048 --out $O/o2.gif"
  # 4. value files
  "value of another game|v.safetensors: solved for game 'pursuit2d', but $T/a3.yaml is 'air3d'|hji play --config $(cfg a3 'game: air3d\ngrid: {n: [11, 11, 11]}\n') --value $T/v.safetensors --from 1,1,1 --out $O/v1.csv"
  "value on another grid shape|grid axis 0 is 41 nodes over [-2, 2], but $T/g1.yaml's is 21 nodes|hji play --config $(cfg g1 'game: pursuit2d\ngrid: {n: [21, 21]}\n') --value $T/v.safetensors --from 1,1 --out $O/v2.csv"
  "value on other bounds|grid axis 0 is 41 nodes over [-2, 2], but $T/g2.yaml's is 41 nodes over [-3, 3]|hji play --config $(cfg g2 'game: pursuit2d\ngrid: {n: [41, 41], min: [-3, -3], max: [3, 3]}\n') --value $T/v.safetensors --from 1,1 --out $O/v3.csv"
  "value with transposed axes|(axes in another order: transposed)|hji play --config $(cfg g3 'game: pursuit2d\ngrid: {min: [-1, -2], max: [1, 2], n: [21, 41]}\n') --value $T/rect.safetensors --from 0.5,0.5 --out $O/v4.csv"
  "value with other game constants|solved with game constant 1 = 0.5, but $T/g4.yaml sets 0.3|hji play --config $(cfg g4 'game: pursuit2d\nspeed_evader: 0.3\ngrid: {n: [41, 41]}\n') --value $T/v.safetensors --from 1,1 --out $O/v5.csv"
  "not a value file|final.safetensors: not a value file of 'difgames hji solve'|hji play --config $P2 --value $T/ck/final.safetensors --from 1,1 --out $O/v8.csv"
  "value not finite|nan.safetensors: tensor 'value' has a non-finite value|hji play --config $P2 --value $T/nan.safetensors --from 1,1 --out $O/v6.csv"
  "plot of a value with a 300-character game|longgame.safetensors: metadata 'game' is 300 characters long, more than 31|hji plot --value $T/longgame.safetensors --out $O/v9.png"
  "plot of a value not finite|nan.safetensors: tensor 'value' has a non-finite value|hji plot --value $T/nan.safetensors --out $O/v7.png"
  "versus with another game's value|v.safetensors: solved for game 'pursuit2d', but configs/hji/chase4d_open.yaml is 'chase4d'|hji versus --config configs/duel_open.yaml --ckpt $T/duel/final.safetensors --hji configs/hji/chase4d_open.yaml --value $T/v.safetensors"
)
run_rows "" "" "${table[@]}"
# the same under an address-space limit: still refused with a message, never killed
# (a sanitizer build reserves terabytes of address space and cannot start under one)
if ( ulimit -v 1048576; exec "$DG" games ) >/dev/null 2>&1; then
    ulimit_ok=1
    run_rows "ulimit -v 1 GiB: " 1048576 "${table[@]}"
else
    ulimit_ok=0
    echo "skip ulimit -v rows (this build cannot start under an address-space limit)"
fi
# 3. a run whose files the disk cannot hold: refused before the first epoch, nothing written
mkdir -p "$T/small"
if mount -t tmpfs -o size=1m tmpfs "$T/small" 2>/dev/null; then
    "$DG" train --config "$(cfg d1 'game: reach\npolicy: {hidden: [512, 512]}\ntrain: {epochs: 60}\n')" --out "$T/small/run" >/dev/null 2>"$T/err"
    rc=$?
    if [ $rc -eq 2 ] && grep -q "MiB free there; lower train.snapshots" "$T/err" && [ "$(wc -l <"$T/err")" -eq 1 ] &&
       [ -z "$(ls -A "$T/small")" ]; then ok "disk too small: $(sed "s|$T|<tmp>|" "$T/err")"
    else bad "disk too small: exit $rc, $(cat "$T/err"), left: $(ls -A "$T/small")"; fi
    umount "$T/small"
else
    echo "skip disk too small (no tmpfs can be mounted here)"
fi
# and one that fits the machine but not the limit: the message names the limit
if [ $ulimit_ok = 1 ]; then
    ( ulimit -v 1048576; exec "$DG" train --config "$(cfg u1 'game: reach\ntrain: {batch: 20000}\nenv: {horizon: 2000}\n')" --out "$O/u1" ) >/dev/null 2>"$T/err"
    rc=$?
    if [ $rc -eq 2 ] && grep -q "(ulimit -v)" "$T/err" && [ "$(wc -l <"$T/err")" -eq 1 ]; then ok "ulimit -v named: $(sed "s|$T|<tmp>|" "$T/err")"
    else bad "ulimit -v: exit $rc, $(cat "$T/err")"; fi
fi
cat "$T/table.txt"
finish
