#!/usr/bin/env bash
# Only the tape's layers are compiled twice (CMakeLists.txt, docs/architecture.md): their double copy
# is reached through difgames/f64_names.h, which renames nothing but dg_ names, and the layers
# compiled once have one copy in the library under their own names:
# - the installed f64_names.h is '#define dg_x dg64_x' lines only (no cli_, cmd_, vw_, hji_ name
#   renamed in a user's translation unit built with -DDG_F64);
# - a public header of a layer compiled once (every header but the tape's, listed below) does not
#   include difgames/real.h, so with -DDG_F64 it renames nothing;
# - libdifgames.a holds no f64_ symbol and no dg64_ twin of a function those headers declare, and
#   the grid solver's kernel once per precision (hji_solve_f32, hji_solve_f64).
#   usage: f64_layers_test.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
CC=${CC:-cc}
NM=${NM:-nm}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "f64_layers_test: FAIL: $*" >&2; fail=1; }

# the tape's public headers: they declare dg_real and so include real.h (with DG_F64, f64_names.h);
# and lq_nash.h, of the solver layer (compiled twice with it), whose functions are double in both copies
TAPE="core.h checkpoint.h physics.h render.h policy.h losses.h env.h replay.h live.h trainer.h pg.h run.h safety.h
      sweep.h flat.h certify.h certify_dp.h certify_run.h certify_sampling.h eval_run.h hji_learn.h export.h difgames.h real.h lq_nash.h"

names="$BUILD/include/difgames/f64_names.h"
if [ ! -s "$names" ]; then
    bad "no $names"
else
    other=$(grep '^#define ' "$names" | grep -v '^#define DIFGAMES_F64_NAMES_H$' |
            grep -Ev '^#define dg_([A-Za-z0-9_]+) dg64_\1$' || true)
    [ -z "$other" ] || bad "f64_names.h renames names other than dg_x -> dg64_x: $(echo "$other" | head -n 5 | tr '\n' ' ')"
    n=$(grep -Ec '^#define dg_' "$names")
    [ "$n" -ge 100 ] || bad "f64_names.h renames only $n dg_ names (the tape's layers have hundreds)"
fi

"$NM" -g --defined-only -P "$BUILD/libdifgames.a" 2>/dev/null >"$T/nm"
awk 'NF >= 2 {print $1}' "$T/nm" | sort -u >"$T/syms"
[ -s "$T/syms" ] || bad "no symbols read from $BUILD/libdifgames.a"
f64=$(grep '^f64_' "$T/syms" | head -n 5 | tr '\n' ' ')
[ -z "$f64" ] || bad "libdifgames.a holds f64_ symbols (a layer compiled twice whose names are not dg_): $f64"
for k in hji_solve_f32 hji_solve_f64; do
    c=$(grep -Ec "^(f64_)?$k T " "$T/nm")
    [ "$c" -eq 1 ] || bad "the grid solver's kernel $k is defined $c times in libdifgames.a (once expected)"
done

once=0
for h in "$SRC"/include/difgames/*.h; do
    b=$(basename "$h")
    case " $(echo $TAPE) " in *" $b "*) continue ;; esac
    once=$((once + 1))
    printf '#include "difgames/%s"\n#ifdef DIFGAMES_REAL_H\n#error includes real.h\n#endif\n' "$b" >"$T/h.c"
    "$CC" -std=c11 -fsyntax-only -DDG_F64 -I"$SRC/include" -I"$BUILD/include" "$T/h.c" 2>"$T/err" ||
        bad "$b (a layer compiled once) with -DDG_F64: $(grep -m1 -oE 'error: .*' "$T/err")"
    # its functions: one copy, under their own names (comments left out: they may name the tape's)
    "$CC" -fpreprocessed -dD -E -P "$h" 2>/dev/null | grep -oE '\bdg_[a-z0-9_]+[[:space:]]*\(' |
        sed -E 's/[[:space:]]*\($//; s/^dg_/dg64_/' | sort -u >"$T/twins"
    twins=$(comm -12 "$T/twins" "$T/syms" | head -n 5 | tr '\n' ' ')
    [ -z "$twins" ] || bad "$b (a layer compiled once): its functions have a double copy: $twins"
done
[ "$once" -ge 8 ] || bad "only $once public headers of layers compiled once found"

[ $fail -eq 0 ] && echo "f64_layers_test: ok ($once headers of layers compiled once; f64_names.h: dg_ names only)"
exit $fail
