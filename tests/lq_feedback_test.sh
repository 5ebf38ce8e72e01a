#!/usr/bin/env bash
# Feedback LQ Nash with learned policies (docs/economics.md; configs/models/lq_feedback.yaml): both
# players' MLPs trained by BPTT, each descending its own discounted cost (a reduced run: EPOCHS epochs
# of batch 128 at Adam 3e-3, the config's seed), reach each player's feedback Nash cost x0'P_i x0
# (dg_lq_nash_solve) within TOL from 1000 held-out starts, and their gains at the origin (Jacobians)
# are within GTOL of K_i (tests/lq_feedback_ref.py, which first checks that the model file is the
# solver's game: the Nash gains played through its steps cost x0'P_i x0 to 1e-9).
# usage: lq_feedback_test.sh path/to/difgames repo_root build_dir
. "$(dirname "$0")/lib.sh"
B=$3
case $B in /*) ;; *) B=$PWD/$B ;; esac
cd "$ROOT"
EPOCHS=1500
TOL=0.01
GTOL=0.03

"$DG" train --config configs/models/lq_feedback.yaml --epochs $EPOCHS --batch 128 --lr 3e-3 --quiet --out "$T/run" >"$T/out" 2>"$T/err" \
    || bad "train: $(head -c 300 "$T/err")"
r=$(PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tests/lq_feedback_ref.py "$B" configs/models/lq_feedback.yaml \
    "$T/run/final.safetensors" --tol $TOL --gain-tol $GTOL 2>&1) \
    && ok "learned costs within $TOL of x0'P_i x0, gains within $GTOL: $r" || bad "lq_feedback: $r"

# the untrained policies are far from it (the check can fail)
"$DG" train --config configs/models/lq_feedback.yaml --epochs 1 --quiet --out "$T/r1" >/dev/null 2>"$T/err" \
    || bad "train 1 epoch: $(head -c 300 "$T/err")"
r=$(PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 tests/lq_feedback_ref.py "$B" configs/models/lq_feedback.yaml \
    "$T/r1/final.safetensors" --tol $TOL 2>&1) && bad "one epoch passes: $r" || ok "one epoch is outside $TOL"
finish
