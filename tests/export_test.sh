#!/usr/bin/env bash
# difgames export: the exported C compiled with plain `cc -std=c99 -O2` in a folder that holds only the
# two exported files and a small reader (no difgames header), run on 10^6 states (2 x 10^5 for a second
# case of a kind; DG_EXPORT_STATES sets the 10^6) (in and out of the
# grid, nodes, edges, far away, NaN, infinities) or observations, its answers compared byte for byte
# (cmp) with the library's own (tests/drivers/export_dump.c): dg_hji_interp's value and gradient,
# dg_hji_feedback's inputs (air3d: a box each and G(x) of the state; pursuit2d: balls; a float32 value
# file too), the switch filter and the qp filter (dg_hji_filter_row: air3d, chauffeur and a linear game with a
# 2-component box), P_control with a boundary layer (dg_hji_feedback's layer: air3d's boxes with the qp filter,
# pursuit2d's balls, linear: a layer past 1/sqrt(2) there, below which its isotropic ball never saturates
# linearly), and dg_mlp_forward's actions (a two-player policy of hidden sizes whose
# columns take each of the library kernel's paths). Then the refusals, one line each, nothing written.
#   usage: export_test.sh path/to/difgames repo_root path/to/export_dump
. "$(dirname "$0")/lib.sh"
DUMP=$3
N=${DG_EXPORT_STATES:-1000000}
N2=$((N / 5))   # the second case of a kind (float32; the other kernel paths)
N3=$((N / 10))  # the qp filter's other cases and the boundary layer's
CC=${CC:-cc}

# value_runner P: a plain C reader of states for the exported P (P_grad, P_value, P_control, P_filter)
value_runner() {
    sed "s/PFX/$1/g" <<'C'
#include <stdio.h>
#include <string.h>
#include "PFX.h"
int main(int argc, char **argv) {
    FILE *in = fopen(argv[1], "rb"), *out = fopen(argv[2], "wb");
    double x[PFX_NX], o[64], u[PFX_NU + 1], d[PFX_ND + 1], us[PFX_NU + 1], un[PFX_NU + 1], v;
    long i = 0;
    int m, j;
    if (!in || !out) return 2;
    (void)argc;
    while (fread(x, sizeof x[0], PFX_NX, in) == PFX_NX) {
        m = 0;
        o[m++] = PFX_grad(x, o + 1);
        m += PFX_NX;
        v = PFX_value(x);
        if (memcmp(&v, o, sizeof v)) return 3; /* P_value and P_grad's value: the same bits */
        o[m] = PFX_control(x, u, d);
        for (j = 0; j < PFX_NU; j++) o[m++] = u[j];
        for (j = 0; j < PFX_ND; j++) o[m++] = d[j];
        o[m++] = PFX_control(x, u, d);
        for (j = 0; j < PFX_NU; j++) /* the qp filter's nominal action: export_dump's qp_nominal */
#ifdef PFX_FILTER_QP
            un[j] = (double)((i * 7919 + j * 104729) % 2401) / 1000.0 - 1.2;
#else
            un[j] = (const double[4]){0.25, -0.5, 0.75, -1}[j];
#endif
        i++;
        PFX_filter(x, un, us);
        for (j = 0; j < PFX_NU; j++) o[m++] = us[j];
        if (fwrite(o, sizeof o[0], (size_t)m, out) != (size_t)m) return 2;
    }
    return fclose(out) != 0;
}
C
}

# policy_runner P: the same for P_policy (and P_policy2, P_policy3, P_policy4 for the other players)
policy_runner() {
    sed "s/PFX/$1/g" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include "PFX.h"
static int run(FILE *in, FILE *out, long n, int nin, int nout, void (*f)(const float *, float *)) {
    float obs[256], act[256];
    long i;
    for (i = 0; i < n; i++) {
        if (fread(obs, sizeof obs[0], (size_t)nin, in) != (size_t)nin) return 2;
        f(obs, act);
        if (fwrite(act, sizeof act[0], (size_t)nout, out) != (size_t)nout) return 2;
    }
    return 0;
}
int main(int argc, char **argv) {
    FILE *in = fopen(argv[1], "rb"), *out = fopen(argv[2], "wb");
    const long n = atol(argv[3]);
    int rc;
    if (!in || !out || argc != 4) return 2;
    rc = run(in, out, n, PFX_OBS, PFX_ACT, PFX_policy);
#ifdef PFX_OBS2
    if (!rc) rc = run(in, out, n, PFX_OBS2, PFX_ACT2, PFX_policy2);
#endif
#ifdef PFX_OBS3
    if (!rc) rc = run(in, out, n, PFX_OBS3, PFX_ACT3, PFX_policy3);
#endif
#ifdef PFX_OBS4
    if (!rc) rc = run(in, out, n, PFX_OBS4, PFX_ACT4, PFX_policy4);
#endif
    return rc ? rc : fclose(out) != 0;
}
C
}

# check NAME KIND P DIR N: compiles DIR/P.c with the reader in a bare folder, runs it on the N states of
# $T/NAME.in, compares with $T/NAME.lib
check() {
    local name=$1 kind=$2 p=$3 dir=$4 n=$5 bare=$T/bare_$1
    mkdir -p "$bare"
    cp "$dir/$p.h" "$dir/$p.c" "$bare/"
    "${kind}_runner" "$p" >"$bare/main.c"
    if ! (cd "$bare" && "$CC" -std=c99 -O2 -Wall -Wextra -Wshadow -Werror -o run main.c "$p.c" -lm 2>"$T/cc.err"); then
        bad "$name: the exported code does not compile with $CC -std=c99 -O2: $(head -c 400 "$T/cc.err")"
        return
    fi
    if ! "$bare/run" "$T/$name.in" "$T/$name.out" "$n"; then bad "$name: the exported code's reader failed"
    elif ! cmp -s "$T/$name.lib" "$T/$name.out"; then
        bad "$name: the exported answers differ from the library's: $(cmp "$T/$name.lib" "$T/$name.out" | head -1)"
    else ok "$name: $n states, the library's bits ($(wc -c <"$dir/$p.c") bytes of C)"; fi
}

# the values: air3d (boxes, G of the state, a periodic axis) in float64 and float32, pursuit2d (balls)
AIR=$(cfg air3d 'game: air3d\nt_end: 0.5\nmode: brt\naccuracy: medium\ngrid:\n  min: [-6, -10, 0]\n  max: [20, 10, 6.283185307179586]\n  n: [27, 21, 24]\n')
PUR=$(cfg pursuit2d 'game: pursuit2d\nt_end: 0.5\nmode: brt\naccuracy: medium\ngrid:\n  min: [-2, -2]\n  max: [2, 2]\n  n: [41, 41]\n')
"$DG" hji solve --config "$AIR" --out "$T/air3d.safetensors" >/dev/null 2>&1 || bad "hji solve air3d"
"$DG" hji solve --config "$AIR" --float32 --out "$T/air3d32.safetensors" >/dev/null 2>&1 || bad "hji solve air3d --float32"
"$DG" hji solve --config "$PUR" --out "$T/pursuit2d.safetensors" >/dev/null 2>&1 || bad "hji solve pursuit2d"
# and the other games exported, a second case each: chauffeur (G of the state and the game's constants),
# chase4d (4 axes), linear (a box control and no disturbance)
CHA=$(cfg chauffeur 'game: chauffeur\nt_end: 0.5\nmode: brt\naccuracy: medium\ngrid:\n  min: [-3, -3]\n  max: [3, 3]\n  n: [31, 31]\n')
C4D=$(cfg chase4d 'game: chase4d\nt_end: 0.1\nmode: brt\naccuracy: low\ngrid:\n  min: [-1, -1, -2, -2]\n  max: [1, 1, 2, 2]\n  n: [11, 11, 11, 11]\n')
LIN=$(cfg linear 'game: linear\nt_end: 0.5\nmode: brt\naccuracy: medium\ndynamics:\n  A: [0, 1, -1, 0]\ngrid:\n  min: [-1, -1]\n  max: [1, 1]\n  n: [21, 21]\n')
# the qp filter's linear case: a 2-component box control (2 breakpoints), a box disturbance, a drift
LINQ=$(cfg linearq 'game: linear\nt_end: 0.5\nmode: brt\naccuracy: medium\ndynamics:\n  A: [0, 1, -1, 0]\n  drift: [0.1, -0.2]\ncontrol:\n  matrix: [1, 0.5, 0, 1]\n  bound: 0.8\ndisturbance:\n  set: box\n  matrix: [0.3, 0, 0, 0.3]\ngrid:\n  min: [-1, -1]\n  max: [1, 1]\n  n: [21, 21]\n')
for g in chauffeur chase4d linear linearq; do
    "$DG" hji solve --config "$T/$g.yaml" --out "$T/$g.safetensors" >/dev/null 2>&1 || bad "hji solve $g"
done
for row in "air3d|$AIR|air3d|air|0.5|$N" "air3d32|$AIR|air3d32|air32|1|$N2" "pursuit2d|$PUR|pursuit2d|pur|-0.1|$N" \
           "chauffeur|$CHA|chauffeur|cha|0|$N2" "chase4d|$C4D|chase4d|c4d|0|$N2" "linear|$LIN|linear|lin|0|$N2" \
           "air3d_qp|$AIR|air3d|airq|qp:2|$N|0.1" "chauffeur_qp|$CHA|chauffeur|chaq|qp:1|$N3" \
           "linear_qp|$LINQ|linearq|linq|qp:3|$N3" "pursuit2d_layer|$PUR|pursuit2d|purl|0|$N3|0.9" \
           "linear_layer|$LINQ|linearq|linl|qp:1|$N3|0.05"; do
    IFS='|' read -r name config value p margin n layer <<<"$row"
    filter=(--margin "$margin")
    [[ $margin == qp:* ]] && filter=(--filter qp --gamma "${margin#qp:}")
    [[ -n $layer ]] && filter+=(--boundary-layer "$layer")
    if ! "$DG" export --value "$T/$value.safetensors" --config "$config" --out "$T/out_$name" --prefix "$p" \
         "${filter[@]}" >"$T/$name.json" 2>"$T/err"; then
        bad "$name: export failed: $(head -c 300 "$T/err")"
        continue
    fi
    grep -q "\"c_bytes\"" "$T/$name.json" || bad "$name: no c_bytes in $(cat "$T/$name.json")"
    "$DUMP" value "$config" "$T/$value.safetensors" "$n" 7 "$margin" "$T/$name.in" "$T/$name.lib" ${layer:+"$layer"} \
        >"$T/$name.moved" ||
        { bad "$name: export_dump"; continue; }
    # the qp filter acts on some states and not on all, the layer changes some inputs (so that the
    # comparison covers both)
    read -r moved layered <"$T/$name.moved"
    [[ $margin != qp:* ]] || ((moved > n / 1000 && moved < n - n / 1000)) ||
        bad "$name: the qp filter moved $moved of $n nominal actions"
    [[ -z $layer ]] || ((layered > n / 1000)) || bad "$name: the boundary layer changed the inputs at $layered of $n states"
    check "$name" value "$p" "$T/out_$name" "$n"
done
grep -q "static const float V\[" "$T/out_air3d32/air32.c" || bad "air3d32: the float32 file's table is not float"

# the policies: duel_simple's two players, trained a few epochs, of hidden sizes whose columns take each of
# the library kernel's paths: 20, 48 (a 16-wide vector and scalar columns, 8 x 32 blocks and a vector,
# dot products without a tail); 48, 20 (dot products with a tail of k)
for row in "20, 48|$N" "48, 20|$N2"; do
    IFS='|' read -r hidden n <<<"$row"
    name=duel${hidden/, /_}
    DUEL=$(cfg "$name" "game: duel_simple\nseed: 3\nenv:\n  horizon: 20\npolicy:\n  hidden: [$hidden]\ntrain:\n  batch: 16\n  epochs: 5\n  exploit_every: 0\n  threads: 1\n")
    if ! "$DG" train --config "$DUEL" --out "$T/$name" >/dev/null 2>"$T/err"; then
        bad "$name: train failed: $(head -c 300 "$T/err")"
    elif ! "$DG" export --ckpt "$T/$name/final.safetensors" --config "$DUEL" --out "$T/out_$name" --prefix duel \
        >"$T/$name.json" 2>"$T/err"; then
        bad "$name: export failed: $(head -c 300 "$T/err")"
    elif ! "$DUMP" policy "$DUEL" "$T/$name/final.safetensors" "$n" 11 "$T/$name.in" "$T/$name.lib"; then
        bad "$name: export_dump (the library's batch and single rows)"
    else check "$name" policy duel "$T/out_$name" "$n"; fi
done

# three players (a general-sum model file, lq_nash3 as feedback policies in float32): P_policy,
# P_policy2 and P_policy3, each its network bit for bit
sed -e 's/precision: f64/precision: f32/' -e 's/  mode: open_loop/  mode: policy/' -e 's/epochs: 3000/epochs: 3/' \
    "$ROOT/configs/models/lq_nash3.yaml" >"$T/nash3.yaml"
if ! "$DG" train --config "$T/nash3.yaml" --out "$T/nash3" >/dev/null 2>"$T/err"; then
    bad "nash3: train failed: $(head -c 300 "$T/err")"
elif ! "$DG" export --ckpt "$T/nash3/final.safetensors" --config "$T/nash3.yaml" --out "$T/out_nash3" --prefix nash3 \
    >/dev/null 2>"$T/err"; then
    bad "nash3: export failed: $(head -c 300 "$T/err")"
elif ! grep -q "nash3_policy3" "$T/out_nash3/nash3.h"; then
    bad "nash3: no nash3_policy3 in the header"
elif ! "$DUMP" policy "$T/nash3.yaml" "$T/nash3/final.safetensors" "$N2" 11 "$T/nash3.in" "$T/nash3.lib"; then
    bad "nash3: export_dump (the library's batch and single rows)"
else check nash3 policy nash3 "$T/out_nash3" "$N2"; fi

# the refusals: one line, exit 2, nothing written in the output folder
COLL=$ROOT/configs/hji/collision9d.yaml
MODEL=$(cfg model 'game: model\nmodel:\n  name: tiny\n  state: {x: [-1, 1], y: [-1, 1]}\n  inputs:\n    a: {dim: 1, lo: -1, hi: 1, role: min}\n  dynamics:\n    x: a\n    y: 0\n  target: x^2 + y^2 - 0.1\nt_end: 0.1\ngrid:\n  min: [-1, -1]\n  max: [1, 1]\n  n: [11, 11]\n')
LQ=$ROOT/configs/hji/lq_game.yaml
F64=$(cfg duel64 'game: duel_simple\npolicy:\n  hidden: [20, 48]\ntrain:\n  precision: f64\n')
OUTS=$T/refused
mkdir -p "$OUTS"
run_rows "" "" \
    "model game|only the built-in games|export --value $T/pursuit2d.safetensors --config $MODEL --out $OUTS" \
    "collision9d (9 axes: no grid)|9 state dimensions|export --value $T/pursuit2d.safetensors --config $COLL --out $OUTS" \
    "quadratic input|boxes and balls only|export --value $T/pursuit2d.safetensors --config $LQ --out $OUTS" \
    "another game's value|$T/air3d.safetensors|export --value $T/air3d.safetensors --config $PUR --out $OUTS" \
    "bad prefix|--prefix|export --value $T/pursuit2d.safetensors --config $PUR --out $OUTS --prefix 9x" \
    "value and ckpt|give one|export --value $T/pursuit2d.safetensors --ckpt $T/duel20_48/final.safetensors --config $PUR --out $OUTS" \
    "margin with ckpt|--margin|export --ckpt $T/duel48_20/final.safetensors --config $DUEL --out $OUTS --margin 1" \
    "f64 policy|float32 policies only|export --ckpt $T/duel20_48/final.safetensors --config $F64 --out $OUTS" \
    "no value nor ckpt|--value|export --config $PUR --out $OUTS" \
    "qp on a ball control|a box control|export --value $T/pursuit2d.safetensors --config $PUR --out $OUTS --filter qp" \
    "an unknown filter|--filter|export --value $T/air3d.safetensors --config $AIR --out $OUTS --filter cbf" \
    "gamma with switch|--gamma|export --value $T/air3d.safetensors --config $AIR --out $OUTS --gamma 1" \
    "margin with qp|--margin|export --value $T/air3d.safetensors --config $AIR --out $OUTS --filter qp --margin 1" \
    "a negative gamma|--gamma|export --value $T/air3d.safetensors --config $AIR --out $OUTS --filter qp --gamma -1" \
    "gamma with ckpt|--gamma|export --ckpt $T/duel48_20/final.safetensors --config $DUEL --out $OUTS --gamma 1" \
    "a layer past 1|--boundary-layer|export --value $T/air3d.safetensors --config $AIR --out $OUTS --boundary-layer 2"
finish
