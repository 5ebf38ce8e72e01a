#!/usr/bin/env bash
# Default output folders: every shipped training config trains into its own
# runs/<config name> (the path below configs/ without .yaml), so that no two
# configs, and no two games, share one; replay's default GIF lands in the same
# folder; a config outside configs/ uses its file name. One epoch of a tiny
# batch each, in a temporary working directory with a copy of configs/.
#   usage: outdirs_test.sh DIFGAMES SOURCE_DIR
set -euo pipefail
DG=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "outdirs_test: FAIL: $*" >&2; exit 1; }

cp -r "$SRC/configs" "$T/configs"
cd "$T"
n=0
declare -A seen=()
while IFS= read -r cfg; do
    case "$cfg" in configs/hji/*) continue ;; esac  # grid-solver configs: hji solve --out is required
    case "$cfg" in configs/models/*) grep -q '^  observe:' "$cfg" || continue ;; esac  # a model for the grid alone
    replay=1  # a model file without `draw:` has nothing to draw (replay says so in one line): gs_saddle, gs_cycle, lq_nash2, lq_nash3 (open-loop plans of the config's horizon: not this 3-step run's)
    case "$cfg" in configs/models/*) grep -q "^  draw:" "$cfg" || replay=0 ;; esac
    name=${cfg#configs/}
    name=${name%.yaml}
    want="runs/$name"
    [ -z "${seen[$want]:-}" ] || fail "$cfg and ${seen[$want]} share $want"
    seen[$want]=$cfg
    before=$(find runs -name final.safetensors 2>/dev/null | sort || true)
    "$DG" train --config "$cfg" --epochs 1 --batch 2 --horizon 3 --quiet >/dev/null 2>"$T/err" ||
        { cat "$T/err" >&2; fail "train --config $cfg"; }
    after=$(find runs -name final.safetensors | sort)
    new=$(comm -13 <(echo "$before") <(echo "$after"))
    [ "$new" = "$want/final.safetensors" ] || fail "$cfg trained into '${new%/final.safetensors}', expected $want"
    if [ "$replay" = 1 ]; then
        "$DG" replay --config "$cfg" --ckpt "$want/final.safetensors" --frames 2 --size 64 >/dev/null 2>"$T/err" ||
            { cat "$T/err" >&2; fail "replay --config $cfg"; }
        [ -s "$want/replay.gif" ] || fail "replay of $cfg did not write $want/replay.gif"
    fi
    n=$((n + 1))
done < <(find configs -name '*.yaml' | sort)
[ "$n" -ge 5 ] || fail "only $n training configs found"

# a config outside configs/: its file name
mkdir -p elsewhere
cp configs/reach.yaml elsewhere/my_reach.yaml
"$DG" train --config elsewhere/my_reach.yaml --epochs 1 --batch 2 --horizon 3 --quiet >/dev/null 2>&1 ||
    fail "train --config elsewhere/my_reach.yaml"
[ -f runs/my_reach/final.safetensors ] || fail "a config outside configs/ did not train into runs/<file name>"
echo "outdirs_test: ok ($n configs, each in its own runs/<config name>)"
