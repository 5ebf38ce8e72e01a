#!/usr/bin/env bash
# General-sum anchors (docs/economics.md, docs/models.md's model.players): the open-loop LQ Nash games
# of 2 and 3 players (configs/models/lq_nash2.yaml, lq_nash3.yaml) trained in f64 match the Nash
# equilibrium of the stacked first-order conditions (tests/lq_nash_ref.py, built from the games' own
# equations) to 1e-5 relative; metrics.csv and eval report each player's cost and NashConv term (>= 0);
# certify refuses the games in one line; and on configs/models/gs_saddle.yaml, whose strict Nash
# equilibrium is a saddle of the gradient flow (game Jacobian eigenvalues 3 and -1), gda, optimistic
# and extragradient each leave it for the box's corner (1, -1); on configs/models/gs_cycle.yaml, whose
# Jacobian has complex eigenvalues of negative real part, each circles the box's edge and never settles.
# usage: lq_nash_test.sh path/to/difgames repo_root
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
REF="python3 tests/lq_nash_ref.py"

for g in 2 3; do
    "$DG" train --config configs/models/lq_nash$g.yaml --quiet --out "$T/lq$g" >"$T/out" 2>"$T/err" \
        || bad "train lq_nash$g: $(head -c 300 "$T/err")"
    r=$($REF lq_nash$g "$T/lq$g/final.safetensors") && ok "$r" || bad "lq_nash$g: $r"
done

# metrics.csv: each player's cost (its weights of the weighted terms), NashConv at exploit_every's epochs
sed 's/^  epochs: 3000/  epochs: 60\n  exploit_every: 30\n  exploit_epochs: 20/' configs/models/lq_nash2.yaml >"$T/x.yaml"
"$DG" train --config "$T/x.yaml" --quiet --out "$T/x" >/dev/null 2>"$T/err" || bad "train with exploit_every: $(head -c 300 "$T/err")"
python3 - "$T/x/metrics.csv" <<'PY' && ok "metrics.csv: cost_alice, cost_bob from the terms; NashConv >= 0 at epochs 30, 60 only" || bad "metrics.csv's players' columns"
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
f = lambda r, k: float(r[k])
for r in rows:
    a = f(r, "xx") + 0.5 * f(r, "gap") + 0.2 * f(r, "uu")
    b = f(r, "yy") + 2.0 * f(r, "gap") + 0.4 * f(r, "vv")
    assert abs(f(r, "cost_alice") - a) <= 1e-6 * (1 + a) and abs(f(r, "cost_bob") - b) <= 1e-6 * (1 + b), r
    measured = r["epoch"] in ("30", "60")
    for k in ("nash_conv_alice", "nash_conv_bob"):
        assert (f(r, k) >= 0) if measured else math.isnan(f(r, k)), (r["epoch"], k, r[k])
assert f(rows[29], "nash_conv_alice") + f(rows[29], "nash_conv_bob") > 0  # not at equilibrium yet
PY

# eval: each player's cost and NashConv term; ~0 at the trained equilibrium, > 0 early
"$DG" eval --config configs/models/lq_nash3.yaml --ckpt "$T/lq3/final.safetensors" >"$T/e3" 2>"$T/err" || bad "eval: $(cat "$T/err")"
"$DG" eval --config configs/models/lq_nash2.yaml --ckpt "$T/x/final.safetensors" >"$T/e2" 2>"$T/err" || bad "eval: $(cat "$T/err")"
python3 - "$T/e3" "$T/e2" <<'PY' && ok "eval: cost_<player> and nash_conv_<player>, 0 at the equilibrium, > 0 after 60 epochs" || bad "eval's players"
import json, sys
e3, e2 = (json.loads(open(p).read().strip().splitlines()[-1]) for p in sys.argv[1:])
assert all(k in e3 for k in ("cost_p1", "cost_p2", "cost_p3", "nash_conv_p1", "nash_conv_p2", "nash_conv_p3")), e3
assert 0 <= e3["nash_conv"] < 1e-9, e3
assert e2["nash_conv_alice"] >= 0 and e2["nash_conv_bob"] >= 0 and e2["nash_conv"] > 1e-6, e2
assert abs(e2["nash_conv"] - e2["nash_conv_alice"] - e2["nash_conv_bob"]) <= 1e-8 * e2["nash_conv"]  # printed to 9 digits
PY

# certify: refused in one line, exit 2
"$DG" certify --config configs/models/lq_nash2.yaml --ckpt "$T/lq2/final.safetensors" >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q "lq_nash2 is a general-sum game" "$T/err" && [ ! -s "$T/out" ] \
    && ok "certify refuses a general-sum game in one line" || bad "certify: rc $rc, $(cat "$T/err")"

# the saddle: the reference's Jacobian eigenvalues, and each solver leaving the equilibrium
$REF gs_saddle | grep -q "eigenvalues (3+0j) (-0.99999" && ok "gs_saddle: game Jacobian eigenvalues 3 and -1" \
    || bad "gs_saddle's eigenvalues: $($REF gs_saddle)"
for s in gda optimistic extragradient; do
    sed "s/game_solver: gda /game_solver: $s /" configs/models/gs_saddle.yaml >"$T/s.yaml"
    "$DG" train --config "$T/s.yaml" --quiet --out "$T/s_$s" >/dev/null 2>"$T/err" || bad "train gs_saddle $s: $(head -c 300 "$T/err")"
    python3 -c "
import math, sys; sys.path.insert(0, 'tests'); import lq_nash_ref as r
u, v = (math.tanh(p) for p in r.plans(sys.argv[1]))
print('%.4f %.4f' % (u, v)); sys.exit(0 if u > 0.99 and v < -0.99 else 1)" "$T/s_$s/final.safetensors" >"$T/uv" \
        && ok "gs_saddle $s: ends at (u, v) = ($(cat "$T/uv")), not the Nash equilibrium (0.0333, 0.1333)" \
        || bad "gs_saddle $s: ends at $(cat "$T/uv")"
done
# the cycle: complex eigenvalues of negative real part; each solver circles the box's edge, far from
# the equilibrium, still moving after 5000 epochs (snapshots every 200 epochs to 6000)
$REF gs_cycle | grep -q "max |det(J - lambda I)| = [0-9.]*e-1[0-9]" && ok "gs_cycle: game Jacobian eigenvalues 1 +- sqrt(2) +- sqrt(2) i" \
    || bad "gs_cycle's eigenvalues: $($REF gs_cycle)"
for s in gda optimistic extragradient; do
    sed "s/game_solver: gda/game_solver: $s/" configs/models/gs_cycle.yaml >"$T/c.yaml"
    "$DG" train --config "$T/c.yaml" --quiet --out "$T/c_$s" >/dev/null 2>"$T/err" || bad "train gs_cycle $s: $(head -c 300 "$T/err")"
    python3 -c "
import math, sys; sys.path.insert(0, 'tests'); import lq_nash_ref as r
ustar, _ = r.equilibrium('gs_cycle')
at = [[math.tanh(p) for p in r.plans('%s/epoch_%04d.safetensors' % (sys.argv[1], e))] for e in range(5000, 6001, 200)]
near = min(math.dist(a, ustar) for a in at)
moved = max(math.dist(a, b) for a, b in zip(at, at[1:]))
print('nearest %.2f to the equilibrium, moving up to %.2f every 200 epochs' % (near, moved))
sys.exit(0 if near > 0.5 and moved > 0.5 else 1)" "$T/c_$s" >"$T/uv" \
        && ok "gs_cycle $s: epochs 5000-6000 $(cat "$T/uv")" || bad "gs_cycle $s: $(cat "$T/uv")"
done
finish
