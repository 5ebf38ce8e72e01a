#!/usr/bin/env bash
# Hostile input, end to end (issue 10, section 4), one table per class. Each
# row must exit with status 2 within 20 s (no hang), print exactly one line on
# stderr holding the expected words, trip no sanitizer, and leave nothing
# behind: no temporary file anywhere and none of the outputs the refused
# commands name (all called never*).
#  1. files that are not regular files (FIFO, device, folder) as any input
#  2. two runs writing one output folder (and its lock file planted as a link)
#  3. an output that is an input of the same command; paths too long
#  4. lists on the command line (4b: each list-taking option given an over-long value)
#  5. options that make no sense
#  6. exit codes and one-line errors of the command itself
# usage: hostile_input_test.sh path/to/difgames repo_root
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

R=configs/reach.yaml
PL=$(dirname "$DG")/tests/plugins     # bad game plugins the tests build (tests/plugins/*.c)
"$DG" train --config $R --epochs 2 --batch 4 --out "$T/good" --quiet >/dev/null || bad "make a good checkpoint"
CK=$T/good/final.safetensors
"$DG" train --config configs/duel_simple.yaml --epochs 1 --batch 4 --out "$T/duel" --quiet >/dev/null || bad "make a duel_simple checkpoint"
DCK=$T/duel/final.safetensors
printf 'game: pursuit2d\nspeed_evader: 0.6\ncapture_radius: 0.1\nt_end: 0.2\naccuracy: low\ngrid: {n: [21, 21]}\n' >"$T/p2k.yaml"
printf 'game: pursuit2d\nt_end: 0.2\naccuracy: low\ngrid: {min: [-2, -2], max: [2, 2], n: [21, 21]}\n' >"$T/p2.yaml"
"$DG" hji solve --config "$T/p2.yaml" --out "$T/v.safetensors" >/dev/null 2>&1 || bad "make a value file"
printf 'panel,series,label,color,steps,loss\na,b,c,,10,1\n' >"$T/curves.csv"
printf 'panel,series,label,color,steps,loss\na,b,c,red,10,1\n' >"$T/badcolor.csv"
mkfifo "$T/fifo"                        # nobody writes it: a plain open would block forever
mkdir -p "$T/fiforun" && mkfifo "$T/fiforun/resume.safetensors"
mkdir -p "$T/cfgdir"
cp $R "$T/cfgrun.yaml"
mkdir -p "$T/ownrun" && cp $R "$T/ownrun/metrics.csv"
LONG=$(printf 'd%.0s' $(seq 1 300))      # one name longer than NAME_MAX (255)
DEEP=$(printf 'abcdefghij/%.0s' $(seq 1 420))   # a path longer than PATH_MAX (4096)
SEEDS65=$(seq -s, 1 70 | sed 's/,/.01,/g')
N250=never19-$(printf 'n%.0s' $(seq 1 230)).safetensors   # 250 characters: fits NAME_MAX, not with .tmp.<pid>
printf 'precious\n' >"$T/keep.txt"                     # what a planted .lock points to
mkdir -p "$T/symrun" "$T/hardrun" && ln -s "$T/keep.txt" "$T/symrun/.lock" && ln "$T/keep.txt" "$T/hardrun/.lock"
truncate -s 17M "$T/big.yaml"                           # past the 16 MiB of a config
truncate -s 1T "$T/huge.safetensors"                    # sparse: refused from its size, never read
/usr/bin/python3 - "$T/rows.safetensors" <<'PY' || bad "make an init file of 2^20 + 1 rows"
import json, struct, sys
B = (1 << 20) + 1
h = {"state": {"dtype": "F32", "shape": [B, 4], "data_offsets": [0, 16 * B]}}
hb = json.dumps(h).encode()
hb += b" " * (-len(hb) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(hb)) + hb + bytes(16 * B))
PY

# name | expected words in the one error line | command...
table=(
  # 1. not regular files
  "config is a FIFO|fifo: not a regular file (it is a FIFO)|train --config $T/fifo --out $T/never1"
  "config is /dev/zero|/dev/zero: not a regular file (it is a character device)|train --config /dev/zero --out $T/never1"
  "config is a folder|cfgdir: not a regular file (it is a folder)|eval --config $T/cfgdir --ckpt $CK"
  "checkpoint is a FIFO|fifo: not a regular file (it is a FIFO)|eval --config $R --ckpt $T/fifo"
  "checkpoint is /dev/zero|/dev/zero: not a regular file|replay --config $R --ckpt /dev/zero --out $T/never2.gif"
  "--init is /dev/zero|/dev/zero: not a regular file|eval --config $R --ckpt $CK --init /dev/zero"
  "--init is a folder|good: not a regular file (it is a folder)|eval --config $R --ckpt $CK --init $T/good"
  "--init of 2^20 + 1 rows|has 1048577 rows, more than the 1048576 initial states a file may hold|eval --config $R --ckpt $CK --init $T/rows.safetensors"
  "config of 17 MiB|big.yaml: a file of 17 MiB, more than the 16 MiB it may have|train --config $T/big.yaml --out $T/never18"
  "checkpoint of 1 TiB (sparse)|huge.safetensors: too large to load|eval --config $R --ckpt $T/huge.safetensors"
  "value file of 1 TiB (sparse)|huge.safetensors: too large to load|hji plot --value $T/huge.safetensors --out $T/never20.png"
  "resume file is a FIFO|resume.safetensors: not a regular file (it is a FIFO)|train --resume $T/fiforun"
  "value file is a FIFO|fifo: not a regular file (it is a FIFO)|hji plot --value $T/fifo --out $T/never3.png"
  "hji config is /dev/zero|/dev/zero: not a regular file|hji solve --config /dev/zero --out $T/never4.safetensors"
  "hji play config is a folder|cfgdir: not a regular file|hji play --config $T/cfgdir --value $T/v.safetensors --from 0,0 --out $T/never5.csv"
  "pg --plot CSV is a FIFO|fifo: not a regular file (it is a FIFO)|pg --plot $T/fifo --png $T/never6.png"
  "gradcheck config is a FIFO|fifo: not a regular file|gradcheck --config $T/fifo"
  "bench config is a FIFO|fifo: not a regular file|bench --config $T/fifo"
  "output is a folder|good: cannot write: it is a folder, not a regular file|replay --config $R --ckpt $CK --out $T/good"
  "output is a FIFO|fifo: cannot write: it is a FIFO, not a regular file|eval --config $R --ckpt $CK --grad-out $T/fifo"
  # 2. the lock file of an output folder planted as a link: refused, what it points to untouched
  "lock file a symbolic link|symrun: its lock file .lock is a symbolic link|train --config $R --epochs 1 --batch 2 --out $T/symrun"
  "lock file a hard link|hardrun: its lock file .lock has 2 names|train --config $R --epochs 1 --batch 2 --out $T/hardrun"
  # 3. an output that is an input; paths too long
  "--grad-out = --ckpt|--grad-out $CK is also the input --ckpt|eval --config $R --ckpt $CK --grad-out $CK"
  "--grad-out = --ckpt (another spelling)|is also the input --ckpt|eval --config $R --ckpt $CK --grad-out $T/good/../good/./final.safetensors"
  "--grad-out = --init|is also the input --init|eval --config $R --ckpt $CK --init $T/v.safetensors --grad-out $T/v.safetensors"
  "--grad-out = --config|is also the input --config|eval --config $T/cfgrun.yaml --ckpt $CK --grad-out $T/cfgrun.yaml"
  "replay --out = --ckpt|--out $CK is also the input --ckpt|replay --config $R --ckpt $CK --out $CK"
  "replay --out = --config|is also the input --config|replay --config $T/cfgrun.yaml --ckpt $CK --out $T/cfgrun.yaml"
  "train --config inside --out|is the run's own metrics.csv|train --config $T/ownrun/metrics.csv --out $T/ownrun"
  "hji solve --out = --config|--out $T/p2.yaml is also the input --config|hji solve --config $T/p2.yaml --out $T/p2.yaml"
  "hji plot --out = --value|is also the input --value|hji plot --value $T/v.safetensors --out $T/v.safetensors"
  "hji play --out = --value|is also the input --value|hji play --config $T/p2.yaml --value $T/v.safetensors --from 0,0 --out $T/v.safetensors"
  "hji play --gif = --out|--gif $T/never7.csv is also the output --out|hji play --config $T/p2.yaml --value $T/v.safetensors --from 0,0 --out $T/never7.csv --gif $T/never7.csv"
  "pg --png = --plot|--png $T/curves.csv is also the input --plot|pg --plot $T/curves.csv --png $T/curves.csv"
  "file name too long|file name too long|replay --config $R --ckpt $CK --out $T/never-$LONG.gif"
  "hji solve --out of 250 characters|file name too long (250 characters; at most|hji solve --config $T/p2.yaml --out $T/$N250"
  "replay --out of 250 characters|file name too long (250 characters; at most|replay --config $R --ckpt $CK --out $T/$N250"
  "eval --grad-out of 250 characters|file name too long (250 characters; at most|eval --config $R --ckpt $CK --grad-out $T/$N250"
  "pg --png of 250 characters|file name too long (250 characters; at most|pg --plot $T/curves.csv --png $T/$N250"
  "hji play --gif = the default --out|--gif $T/v_play.csv is also the output --out (default)|hji play --config $T/p2.yaml --value $T/v.safetensors --from 0,0 --gif $T/v_play.csv"
  "path too long|path too long|eval --config $R --ckpt $CK --grad-out $T/never8/$DEEP/g.safetensors"
  "run folder path too long|path too long|train --config $R --epochs 1 --out $T/never9/$DEEP"
  "run folder name too long|name too long (300 characters; at most 255)|train --config $R --epochs 1 --out $T/never16/$LONG"
  "pg folder name too long|folder name too long|pg --config $R --iters 1 --out $T/never17/$LONG"
  # 4. lists
  "--seeds empty item|--seeds: item 2 is not a number: ''|train --config $R --seeds 1,,2 --out $T/never10"
  "--seeds not a number|--seeds: item 1 is not a number: 'x'|train --config $R --seeds x --out $T/never10"
  "--seeds trailing comma|--seeds: item 3 is not a number: ''|train --config $R --seeds 1,2, --out $T/never10"
  "--seeds negative|--seeds: item 1 is '-1'; expected a whole number from 0|train --config $R --seeds -1 --out $T/never10"
  "--seeds fraction|--seeds: item 2 is '1.5'; expected a whole number|train --config $R --seeds 1,1.5 --out $T/never10"
  "--seeds repeated|--seeds: seed 3 given twice|train --config $R --seeds 3,4,3 --out $T/never10"
  "--times more than 64|--times: at most 63 numbers; got '1.01,2.01,3.01,|hji solve --config $T/p2.yaml --out $T/never11.safetensors --times $SEEDS65"
  "--times not numbers|--times: item 2 is not a number: 'b'|hji solve --config $T/p2.yaml --out $T/never11.safetensors --times 0.1,b"
  "--from too many|--from: at most 12 numbers; got '1,2,3,4,5,6,7,8,9,10,11,12,13'|hji play --config $T/p2.yaml --value $T/v.safetensors --from 1,2,3,4,5,6,7,8,9,10,11,12,13 --out $T/never12.csv"
  "--from wrong count|--from: pursuit2d needs 2 coordinates|hji play --config $T/p2.yaml --value $T/v.safetensors --from 1 --out $T/never12.csv"
  "--from infinite|--from: item 1 is not a number: 'inf'|hji play --config $T/p2.yaml --value $T/v.safetensors --from inf,0 --out $T/never12.csv"
  "--at junk|--at: expected no values: this 2-D grid has no axes after the first two, got 'x2=1junk'|hji plot --value $T/v.safetensors --at x2=1junk --out $T/never13.png"
  # 5. options that make no sense
  "--epochs 0|key 'train.epochs': 0 epochs would train nothing|train --config $R --epochs 0 --out $T/never14"
  "train.epochs: 0|key 'train.epochs': 0 epochs would train nothing|train --config $(printf 'game: reach\ntrain: {epochs: 0}\n' >"$T/e0.yaml"; echo "$T/e0.yaml") --out $T/never14"
  "resume --epochs not above done|has done 2 epochs already|train --resume $T/good --epochs 2"
  "--seed twice|option --seed given twice|train --config $R --seed 1 --seed 2 --out $T/never14"
  "--quiet twice|option --quiet given twice|train --config $R --quiet --quiet --out $T/never14"
  "--seed with --seeds|--seed and --seeds cannot be given together|train --config $R --seed 1 --seeds 1,2 --out $T/never14"
  "unknown option|unknown option '--bogus'|eval --config $R --ckpt $CK --bogus"
  "stray argument|unexpected argument 'extra'|gradcheck --config $R extra"
  "missing value at the end|--ckpt needs a value|eval --config $R --ckpt"
  "missing value before an option|--out needs a value|train --config $R --out --quiet"
  "missing value before --seed|--out needs a value|train --config $R --out --seed 3"
  "missing value before -h|--out needs a value|train --config $R --out -h"
  "missing value before --help|--ckpt needs a value|eval --config $R --ckpt --help"
  "empty value|--config: empty value|train --config '' --out $T/never14"
  "--threads -1|difgames train: --threads (train.threads): -1 is out of range, expected [0, 64]|train --config $R --threads -1 --out $T/never14"
  "train.threads: -1|key 'train.threads': -1 is out of range|train --config $(printf 'game: reach\ntrain: {threads: -1}\n' >"$T/t1.yaml"; echo "$T/t1.yaml") --out $T/never14"
  "hji --threads -1|--threads: expected an integer from 0|hji solve --config $T/p2.yaml --out $T/never15.safetensors --threads -1"
  "bench --epochs 0|--epochs: expected an integer from 1|bench --config $R --epochs 0"
  "pg --epochs 0|difgames pg: --epochs (pg.epochs_per_iter): 0 is out of range|pg --config $R --epochs 0"
  "pg --batch twice|option --batch given twice|pg --config $R --batch 2 --batch 3"
  "abbreviated option|unknown option '--conf'|train --conf $R --out $T/never14"
  "flag with a value|option --quiet takes no value|train --config $R --quiet=1 --out $T/never14"
  "empty --name=|--out: empty value|train --config $R --out="
  "twice, once with =|option --seed given twice|train --config $R --seed=1 --seed 2 --out $T/never14"
  "-- ends nothing|unknown option '--'|train --config $R -- --out $T/never14"
  "--epochs 1e3|--epochs (train.epochs): expected an integer, got '1e3'|train --config $R --epochs 1e3 --out $T/never14"
  "--epochs trailing|--epochs (train.epochs): expected an integer, got '5 '|train --config $R --epochs '5 ' --out $T/never14"
  "gradcheck --eps 1|--eps: expected a number in (0, 1), got '1'|gradcheck --config $R --eps 1"
  "gradcheck --tol hex float|--tol: expected a number in (0, inf), got '0x1p-3'|gradcheck --config $R --tol 0x1p-3"
  "hji play --dt 0|--dt: expected a number in (0, inf), got '0'|hji play --config $T/p2.yaml --value $T/v.safetensors --from 1,1 --dt 0 --out $T/never12.csv"
  "hji play --boundary-layer 2|--boundary-layer: expected a number in [0, 1], got '2'|hji play --config $T/p2.yaml --value $T/v.safetensors --from 1,1 --boundary-layer 2 --out $T/never12.csv"
  "hji solve --slices 0|--slices: expected an integer from 1 to 63, got '0'|hji solve --config $T/p2.yaml --out $T/never11.safetensors --slices 0"
  "hji solve --slices + --times past 64|--times and --slices: 4 + 60 times and t_end, more than 64|hji solve --config $T/p2.yaml --out $T/never11.safetensors --slices 60 --times 0.1,0.2,0.3,0.4"
  "pg --gamma nan|--gamma (pg.gamma): expected a finite number, got 'nan'|pg --config $R --gamma nan"
  "pg --plot bad colour|expected panel,series,label,color,steps,loss (color|pg --plot $T/badcolor.csv --png $T/never18.png"
  "keys two games|unexpected argument 'chase'|keys reach chase"
  "hji versus: an HJI game no learning game maps onto|no learning game maps onto air3d's state: needs pursuit2d or chase4d|hji versus --config configs/duel_open.yaml --ckpt $CK --hji configs/hji/air3d.yaml --value $T/v.safetensors"
  "hji versus: another learning game|needs duel_simple (two learned players, simple motion)|hji versus --config configs/duel_open.yaml --ckpt $CK --hji $T/p2.yaml --value $T/v.safetensors"
  "certify: constants that differ|certify: env.speed_evader is 0.6 in configs/duel_simple.yaml, but speed_evader is 0.5|certify --config configs/duel_simple.yaml --ckpt $DCK --hji configs/hji/pursuit2d_time.yaml"
  "certify: another learning game|needs duel_simple|certify --config configs/duel_open.yaml --ckpt $CK --hji configs/hji/duel_simple_time.yaml"
  "certify --episodes 0|--episodes: expected an integer from 1|certify --config configs/duel_simple.yaml --ckpt $DCK --hji configs/hji/duel_simple_time.yaml --episodes 0"
  "certify --exploit-own 1|--exploit-own: expected an integer from 2|certify --config configs/duel_simple.yaml --ckpt $DCK --hji configs/hji/duel_simple_time.yaml --exploit-own 1"
  "certify: an exploitability grid past memory|the exploitability's 4-D grid of 6561000000 nodes needs about|certify --config configs/duel_simple.yaml --ckpt $DCK --hji configs/hji/duel_simple_time.yaml --exploit-own 1000"
  "certify: a game of kind|must be the time to capture (payoff: time)|certify --config configs/duel_simple.yaml --ckpt $DCK --hji $T/p2k.yaml"
  "hji versus --seed twice|option --seed given twice|hji versus --config configs/duel_open.yaml --ckpt $CK --hji $T/p2.yaml --value $T/v.safetensors --seed 1 --seed 2"
  "HJBI config to a learning command|'air3d' is a game of the HJBI grid solver|train --config configs/hji/air3d.yaml --out $T/never14"
  # 7. game plugins (issue 14): a plugin is code, loaded only from a path given explicitly
  "plugin not a shared object|not a shared object (no ELF header)|train --plugin $R --config examples/hover.yaml --out $T/never22"
  "plugin exports no game|exports no game (the symbol 'difgames_game'|train --plugin $PL/no_game.so --config examples/hover.yaml --out $T/never22"
  "plugin of another ABI|built for the game ABI 105, this difgames has ABI 5|eval --plugin $PL/bad_abi.so --config examples/hover.yaml --ckpt $CK"
  "plugin a bare name|give the file's path (./no_game.so|gradcheck --plugin no_game.so --config examples/hover.yaml"
  "plugin a FIFO|fifo: not a regular file (it is a FIFO)|bench --plugin $T/fifo --config examples/hover.yaml"
  "plugin missing|nothing.so|replay --plugin $T/nothing.so --config examples/hover.yaml --ckpt $CK --out $T/never22.gif"
  "plugin key of another game|key 'game': is 'reach', but the plugin|train --config $(printf "game: reach\nplugin: $(dirname "$DG")/examples/hover.so\n" >"$T/pk.yaml"; echo "$T/pk.yaml") --out $T/never22"
  # 6. the command itself
  "unknown command|unknown command 'frobnicate'|frobnicate"
  "hji unknown subcommand|unknown subcommand 'solv'|hji solv"
  "games with an argument|takes no arguments|games reach"
)
printf '%-40s %s\n' "hostile input" "message (exit status 2)" >"$T/table.txt"
run_rows "" "" "${table[@]}"

# 4b. every list-taking option of every subcommand given an over-long value (issue 24): the one line
# names the option, gives the reason first and echoes the value shortened ('0.01,0.02,...' (100
# values)), 200 characters at most. (hji view's --at and --from: viewer_test.sh.)
V100=$(seq -s, 1 100 | sed 's/[0-9][0-9]*/0.0&/g')   # 0.01,0.02,...,0.0100: 100 values
S300=$(seq -s, 1 300)
X3000=$(printf 'x%.0s' $(seq 1 3000))
longlists=(
  "sweep --set of 100 values|difgames sweep: --set train.lr: more than 32 values; got '0.01,0.02,0.03,0.04,0.05,0.06,0.07,0.08,0.09,...' (100 values)|sweep --config $R --out $T/never40 --set train.lr=$V100"
  "sweep --set a value of 3000 characters|--set train.lr: a value longer than 47 characters: 'xxxx|sweep --config $R --out $T/never40 --set train.lr=0.1,$X3000"
  "sweep --set a key of 3000 characters|--set: a key longer than 63 characters: 'xxxx|sweep --config $R --out $T/never40 --set $X3000=1,2"
  "sweep --set 3000 characters without =|--set: expected KEY=V1,V2,..., got 'xxxx|sweep --config $R --out $T/never40 --set $X3000"
  "sweep --seeds of 300 values|--seeds: more than 256 seeds; got '1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,...' (300 values)|sweep --config $R --out $T/never40 --seeds $S300"
  "sweep --seeds of 3000 characters|--seeds: expected integers 0 .. 2147483647 separated by commas, got 'xxxx|sweep --config $R --out $T/never40 --seeds $X3000"
  "train --seeds of 100, the last no number|--seeds: item 100 is not a number: 'x'|train --config $R --seeds $(seq -s, 1 99),x --out $T/never41"
  "train --seeds an item of 3000 characters|--seeds: item 2 is not a number: 'xxxx|train --config $R --seeds 1,$X3000 --out $T/never41"
  "hji solve --times of 100 values|--times: at most 63 numbers; got '0.01,0.02,0.03,0.04,0.05,0.06,0.07,0.08,0.09,...' (100 values)|hji solve --config $T/p2.yaml --out $T/never42.safetensors --times $V100"
  "hji solve --times an item of 3000|--times: item 2 is not a number: 'xxxx|hji solve --config $T/p2.yaml --out $T/never42.safetensors --times 0.1,$X3000"
  "hji plot --at of 3000 characters|--at: expected no values: this 2-D grid has no axes after the first two, got 'x2=xxxx|hji plot --value $T/v.safetensors --at x2=$X3000 --out $T/never43.png"
  "hji play --from of 100 values|--from: at most 12 numbers; got '0.01,0.02,|hji play --config $T/p2.yaml --value $T/v.safetensors --from $V100 --out $T/never44.csv"
  "hji play --from an item of 3000|--from: item 1 is not a number: 'xxxx|hji play --config $T/p2.yaml --value $T/v.safetensors --from $X3000,1 --out $T/never44.csv"
)
MAXLEN=200 run_rows "long list: " "" "${longlists[@]}"
left=$(find "$T" -name '*.tmp.*' -o -name 'never*' | head -n 3)
[ -z "$left" ] && ok "nothing left behind by the refused commands" || bad "left behind: $left"
[ -p "$T/fifo" ] || bad "the FIFO was replaced"
[ "$(cat "$T/keep.txt")" = precious ] && ok "a .lock link's target untouched" || bad "a .lock link's target was emptied"
[ -e "$T/v_play.csv" ] && bad "hji play wrote its CSV though refused"

# ---------------------------------------------------------------- 2. two runs, one folder
printf 'game: reach\ntrain: {batch: 4, epochs: 1000000, snapshots: [1]}\n' >"$T/long.yaml"
"$DG" train --config "$T/long.yaml" --out "$T/busy" --quiet >/dev/null 2>&1 &
first=$!
# up to 2 minutes for the first snapshot: a loaded machine under ASan (the check ends as soon as it is there)
for _ in $(seq 1 2400); do [ -e "$T/busy/epoch_0001.safetensors" ] && break; sleep 0.05; done
[ -e "$T/busy/epoch_0001.safetensors" ] || bad "the first run did not start"
printf 'game: pixel\ntrain: {batch: 2, epochs: 1}\n' >"$T/pix.yaml"
mkdir -p "$T/busy2/seed_1"
lock=(
  "second train into the folder|$T/busy: another run is writing into this folder (process $first)|train --config $R --epochs 1 --out $T/busy"
  "train --resume of a running run|$T/busy: another run is writing into this folder|train --resume $T/busy --epochs 1000000"
  "pg --out into the folder|$T/busy: another run is writing into this folder|pg --config $R --iters 1 --batch 2 --eval-batch 2 --out $T/busy"
)
run_rows "" "" "${lock[@]}"
# --seeds: a seed folder held by another run is refused the same way
"$DG" train --config "$T/long.yaml" --out "$T/seeds/seed_2" --quiet >/dev/null 2>&1 &
second=$!
for _ in $(seq 1 2400); do [ -e "$T/seeds/seed_2/epoch_0001.safetensors" ] && break; sleep 0.05; done
[ -e "$T/seeds/seed_2/epoch_0001.safetensors" ] || bad "the held seed run did not start"
timeout 60 "$DG" train --config $R --epochs 1 --batch 2 --seeds 1,2 --out "$T/seeds" --quiet >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -eq 2 ] && grep -qF "$T/seeds/seed_2: another run is writing into this folder" "$T/err"; then ok "train --seeds into a held seed folder"
else bad "train --seeds into a held seed folder: exit $rc, $(head -c 300 "$T/err")"; fi
kill -INT $first $second
wait $first; rc1=$?
wait $second
[ $rc1 -eq 130 ] && ok "the first run, interrupted, exits 130" || bad "the first run: exit $rc1, want 130"
"$DG" train --config $R --epochs 1 --batch 2 --out "$T/busy" --quiet >/dev/null 2>"$T/err" \
    && ok "the folder is free once its run has ended" || bad "the folder stayed locked: $(cat "$T/err")"

# ---------------------------------------------------------------- what must work
if "$DG" train --config $R --epochs 1 --batch 2 --seeds "$(seq -s, 0 79)" --out "$T/many" --quiet >"$T/out" 2>"$T/err" \
   && [ "$(ls "$T/many" | wc -l)" -eq 80 ] && grep -q '"seeds": *\[0, *1,.*, *79\]' "$T/out"; then
    ok "--seeds with 80 seeds trains 80 runs"
else bad "--seeds with 80 seeds: $(head -c 300 "$T/err")"; fi
"$DG" train --config $R --epochs 1 --batch 4 --threads 0 --out "$T/t0" --quiet >"$T/out" 2>"$T/err" \
    && ok "--threads 0 (one per core) trains" || bad "--threads 0: $(cat "$T/err")"
"$DG" hji solve --config "$T/p2.yaml" --out "$T/v0.safetensors" --threads 0 >/dev/null 2>"$T/err" \
    && ok "hji solve --threads 0 solves" || bad "hji --threads 0: $(cat "$T/err")"
CDIR=$T/$(printf 'c%.0s' $(seq 1 200))                  # a long config path, named in messages
mkdir -p "$CDIR" && cp "$T/p2.yaml" "$CDIR/p2.yaml"
"$DG" hji solve --config "$CDIR/p2.yaml" --out "$T/vlong.safetensors" >/dev/null 2>"$T/err" \
    && ok "hji solve of a config with a 250-character path" || bad "hji solve, long config path: $(head -c 300 "$T/err")"
mkdir -p "$T/dots" && cp $R "$T/dots/...yaml" && cp $R "$T/dots/..yaml"
for c in ...yaml ..yaml; do
    (cd "$T/dots" && rm -rf runs && "$DG" train --config $c --epochs 1 --batch 2 --quiet >/dev/null 2>"$T/err") &&
    [ -f "$T/dots/runs/run/final.safetensors" ] && [ ! -e "$T/dots/final.safetensors" ] && [ ! -e "$T/dots/runs/final.safetensors" ] \
        && ok "config $c trains into runs/run" || bad "config $c: $(ls "$T/dots" "$T/dots/runs" 2>&1 | tr '\n' ' ') $(head -c 200 "$T/err")"
done
"$DG" games >/dev/full 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q "cannot write the results to standard output" "$T/err" \
    && ok "a failed write to stdout: exit 1" || bad "stdout to /dev/full: exit $rc"

cat "$T/table.txt"
# 7. model files (docs/models.md): a bad expression is one line naming the file, line and key, and
# nothing of a hostile one (C syntax, comments, strings, preprocessor lines, calls outside the
# allowed functions) reaches a parser or a compiler
M=configs/models/reach.yaml
mexpr() {  # mexpr NAME TEXT: configs/models/reach.yaml with its goal cost's expression replaced by TEXT
    sed "s|^    goal: (x - gx)^2 + (y - gy)^2\$|    goal: $2|" $M >"$T/$1.yaml"
    grep -qF "    goal: $2" "$T/$1.yaml" || bad "mexpr $1: no goal line replaced"
    echo "$T/$1.yaml"
}
mline=$(grep -n '^    goal: (x - gx)' $M | cut -d: -f1)
model=(
  "model: syntax error|m1.yaml:$mline: key 'model.costs.goal': cannot parse|eval --config $(mexpr m1 '(x - gx)^2 +') --ckpt $CK"
  "model: unknown name|key 'model.costs.goal': unknown name 'q'|eval --config $(mexpr m2 '(x - q)^2') --ckpt $CK"
  "model: two arguments|key 'model.costs.goal': ',' at column 8: functions of expressions take one argument|eval --config $(mexpr m3 'atan2(x, y)') --ckpt $CK"
  "model: a function outside the set|key 'model.costs.goal': cannot parse 'system(x)'|eval --config $(mexpr m4 'system(x)') --ckpt $CK"
  "model: C statement|key 'model.costs.goal': character ';' at column 2|eval --config $(mexpr m5 'x; y') --ckpt $CK"
  "model: C comment|key 'model.costs.goal': cannot parse|eval --config $(mexpr m6 'x /* c */ + 1') --ckpt $CK"
  "model: string literal|character '\"' at column 1|eval --config $(mexpr m7 "'\"abc\"'") --ckpt $CK"
  "model: preprocessor line|character '#' at column 1|eval --config $(mexpr m8 "'#include <stdio.h>'") --ckpt $CK"
  "model: division by zero at reset|key 'model.costs.goal': evaluates to inf at an initial state|train --config $(mexpr m9 '1/(x - x)') --out $T/never30"
  "model: expression of 5000 characters|key 'model.costs.goal': expression longer than 4096 characters|eval --config $(mexpr m11 "$(printf 'x+%.0s' $(seq 1 2500))x") --ckpt $CK"
  "model: unknown state in dynamics|key 'model.dynamics.vx': unknown name 'vz'|train --config $(sed 's|^    vx: ((damping.*|    vx: vz|' $M >$T/m10.yaml; echo $T/m10.yaml) --out $T/never31"
  "model: a terminal cost reading an input|key 'model.costs.terminal.fin': 'u1' cannot be read here|train --config $(sed 's|^    energy: u1^2 + u2^2$|&\n    terminal: {fin: u1^2}|' $M >$T/m12.yaml; echo $T/m12.yaml) --out $T/never32"
  "model: a terminal cost named twice|key 'model.costs.terminal.goal': the cost 'goal' is declared twice|train --config $(sed 's|^    energy: u1^2 + u2^2$|&\n    terminal: {goal: x^2}|' $M >$T/m13.yaml; echo $T/m13.yaml) --out $T/never33"
  "model: a grid value for a state|key 'model.episode.grid.x': 'x' is not an episode variable|hji solve --config $(sed 's|grid: {gx: 0.75, gy: 0.0}|grid: {x: 0.75}|' $M >$T/m14.yaml; echo $T/m14.yaml) --out $T/never34.safetensors"
)
run_rows "" "" "${model[@]}"

finish
