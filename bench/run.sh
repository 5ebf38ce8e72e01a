#!/usr/bin/env bash
# Benchmarks (./build.sh bench): difgames against plain PyTorch on the reach benchmark
# task (configs/bench/reach.yaml, docs/games/reach.md), side by side in one run, the HJBI
# solver on air3d, two jobs sharing the cores, hji learn against PyTorch, and the roofline; writes
# bench/results.md.
set -euo pipefail
cd "$(dirname "$0")/.."
/usr/bin/python3 bench/compare.py --difgames build/difgames --markdown bench/results.md "$@"
/usr/bin/python3 bench/hji.py --difgames build/difgames --markdown bench/results.md
/usr/bin/python3 bench/models.py --difgames build/difgames --markdown bench/results.md
/usr/bin/python3 bench/sharing.py --difgames build/difgames --markdown bench/results.md
# hji learn's iteration against the same training in PyTorch, and its share of the FMA peak (slow:
# PyTorch's reference BLAS takes minutes an iteration at 64k points)
/usr/bin/python3 bench/learn_compare.py --difgames build/difgames --markdown bench/results.md
# the roofline (docs/performance.md): this machine's FMA peak and bandwidths, the MLP's kernels
if [ -x build/bench/roofline ]; then
    { echo; echo "Roofline (build/bench/roofline):"; echo; build/bench/roofline all; } | tee -a bench/results.md
fi
# the narrow layers' kernels alone (docs/performance.md, "The narrow layers")
if [ -x build/bench/narrow ]; then
    { echo; echo "Narrow-layer kernels (build/bench/narrow):"; echo; build/bench/narrow; } | tee -a bench/results.md
fi
echo "table written to bench/results.md"
