#!/usr/bin/env bash
# difgames build script. On a fresh Debian machine:
#   ./build.sh          install missing packages, build (Release) -> build/difgames
#   ./build.sh run      build, then train the default game and write its outputs
#   ./build.sh unit     build, then the everyday loop: the unit tier of the tests
#                       (ctest -L unit, under a minute; tests/README.md)
#   ./build.sh test     build, then the whole test suite through ctest: every tier (unit,
#                       e2e, slow) in the normal build, unit and e2e in an AddressSanitizer+UBSan
#                       build, valgrind on training runs, and each fuzz harness briefly (clang)
#   ./build.sh bench    build, then the benchmarks (bench/), never run by tests
#   ./build.sh install  build, then install the command, the library (shared and
#                       static), headers and difgames.pc (PREFIX, default /usr/local)
#   ./build.sh docs-check  build, then check the docs: dependencies, output paths, and
#                       every quoted measurement against docs/measurements/, rerun
#   ./build.sh docs     typeset the theory PDF, docs/difgames.pdf, from docs/tex/ (TeX installed
#                       in this mode and for the tests only; the figures are docs/tex/figures.sh's)
set -euo pipefail
cd "$(dirname "$0")"
MODE=${1:-build}
JOBS=$(nproc 2>/dev/null || echo 2)

# Debian packages: what the build needs, and what tests and benchmarks add.
BUILD_PKGS=(gcc make cmake pkg-config libyaml-dev libcjson-dev libpng-dev libgif-dev libcairo2-dev libmatheval-dev g++)
# MPI (grids split over ranks, data-parallel training; docs/scale.md): found by CMake's FindMPI
BUILD_PKGS+=(libopenmpi-dev openmpi-bin)
TEST_PKGS=(libcmocka-dev python3 python3-numpy)   # all the unit tier needs (./build.sh unit; py_hji reads numpy)
UNIT_PKGS=("${TEST_PKGS[@]}")
TEST_PKGS+=(python3-torch valgrind clang)

# the viewer (difgames view, play, hji view): SDL2, in the command only; its test runs real
# windows on a virtual display
BUILD_PKGS+=(libsdl2-dev)
TEST_PKGS+=(xvfb xauth)
# the theory PDF (./build.sh docs; the test that rebuilds it, label docs): LaTeX, BibTeX, the Latin
# Modern fonts and pdftotext/pdfinfo
DOCS_PKGS=(texlive-latex-base texlive-latex-recommended lmodern poppler-utils python3)
TEST_PKGS+=("${DOCS_PKGS[@]}")

install_missing() {
    local missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "build.sh: installing missing Debian packages: ${missing[*]}"
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || { echo "build.sh: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
        sudo=sudo
    fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

configure_build() {  # dir, extra cmake args...
    local dir=$1; shift
    cmake -S . -B "$dir" "$@" >/dev/null
    cmake --build "$dir" -j "$JOBS"
}

case "$MODE" in
    build|run|install) install_missing "${BUILD_PKGS[@]}" ;;
    docs-check) install_missing "${BUILD_PKGS[@]}" python3 ;;
    docs) install_missing "${DOCS_PKGS[@]}"; exec docs/tex/build.sh ;;
    test|bench) install_missing "${BUILD_PKGS[@]}" "${TEST_PKGS[@]}" ;;
    unit) install_missing "${BUILD_PKGS[@]}" "${UNIT_PKGS[@]}" ;;
    -h|--help|help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "build.sh: unknown mode '$MODE' (build, run, unit, test, bench, install, docs-check, docs)" >&2; exit 2 ;;
esac

case "$MODE" in test|unit) TESTS=ON ;; *) TESTS=OFF ;; esac
configure_build build -DCMAKE_BUILD_TYPE=Release -DDG_TESTS=$TESTS

case "$MODE" in
    run)
        if [ -x build/difgames ] && [ -f configs/reach.yaml ]; then
            ./build/difgames train --config configs/reach.yaml --out runs/reach
            ./build/difgames replay --config configs/reach.yaml --ckpt runs/reach/final.safetensors \
                --out runs/reach/replay.gif
            echo "build.sh: outputs in runs/reach/ (metrics.csv, loss.png, replay.gif, snapshots)"
        else
            ./build/examples/core_fit_mlp
        fi
        ;;
    unit)
        echo "== tests: the unit tier (ctest -L unit; ./build.sh test runs every tier)"
        ctest --test-dir build --output-on-failure -j "$JOBS" -L unit
        ;;
    test)
        echo "== tests: Release build, every tier (unit, e2e, slow)"
        ctest --test-dir build --output-on-failure -j "$JOBS"
        # not the slow tier: its long anchors ran just above, and under the sanitizers they took
        # most of the time again, on code that unit and e2e reach at smaller sizes (tests/README.md
        # says what only the Release run checks)
        echo "== tests: AddressSanitizer + UBSan build, tiers unit and e2e"
        configure_build build-asan -DCMAKE_BUILD_TYPE=Debug -DDG_SANITIZE=ON -DDG_NATIVE=ON \
            -DCMAKE_C_FLAGS_DEBUG="-O1 -g"
        # GOMP_SPINCOUNT=1000 is the wait policy the command sets itself by executing itself again
        # (src/cli/main.c); given here, each of the e2e tests' commands starts once under the
        # sanitizers instead of twice (a quarter of hostile_memory's time); the Release run above
        # checks the re-execution
        GOMP_SPINCOUNT=1000 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
            UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
            ctest --test-dir build-asan --output-on-failure -j "$JOBS" -LE slow
        echo "== valgrind memcheck: training runs (a portable build: valgrind lacks AVX-512)"
        # the command alone: the runs need nothing else of the build
        cmake -S . -B build-valgrind -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDG_NATIVE=OFF -DDG_TESTS=OFF \
            -DDG_EXAMPLES=OFF >/dev/null
        cmake --build build-valgrind -j "$JOBS" --target difgames
        vg_out=$(mktemp -d)
        # the command re-executes itself to set OpenMP's wait policy unless one is set; under
        # valgrind the new image would run natively, unchecked
        export OMP_WAIT_POLICY=passive
        # the three at once, each into its own folder (valgrind runs a program on one core at a time)
        vg_pids=()
        k=0
        for run in "configs/reach.yaml --epochs 3 --batch 8 --horizon 20" \
                   "configs/chase.yaml --epochs 2 --batch 4 --horizon 10 --threads 2" \
                   "configs/pixel.yaml --epochs 2 --batch 2 --horizon 5"; do
            k=$((k + 1))
            # shellcheck disable=SC2086
            valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
                --suppressions=tests/valgrind.supp \
                --show-leak-kinds=definite --quiet \
                build-valgrind/difgames train --config $run --out "$vg_out/run$k" --quiet &
            vg_pids+=($!)
        done
        vg_failed=0
        for pid in "${vg_pids[@]}"; do wait "$pid" || vg_failed=$((vg_failed + 1)); done
        rm -rf "$vg_out"
        echo "valgrind: $((3 - vg_failed)) passed, $vg_failed failed"
        [ "$vg_failed" -eq 0 ] || exit 1
        # 20 s a harness: in ci mode the inputs a run finds are thrown away, so a longer run only
        # buys a wider random search; what CI needs is that the harnesses build with clang and that
        # libFuzzer's first pass, every committed input under its sanitizers, leak, time and memory
        # limits, passes (seconds), then a short search. The campaigns whose finds are committed are
        # fuzz/run.sh's own (30 minutes a harness by default); ctest replays the corpora in both builds.
        echo "== fuzz: every libFuzzer harness built with clang, its corpus run, then 20 s of search (fuzz/run.sh)"
        fuzz/run.sh all 20 ci
        ;;
    bench)
        if [ -x bench/run.sh ]; then bench/run.sh; else echo "build.sh: no benchmarks yet" >&2; exit 1; fi
        ;;
    docs-check)  # a couple of minutes: every measurement the docs quote that reruns in under a minute
        python3 tests/docs_check.py rerun . build
        ;;
    install)
        cmake --install build --prefix "${PREFIX:-/usr/local}"
        # the shared library's cache, so programs find libdifgames.so.0 without an rpath
        if [ "$(id -u)" -eq 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi
        ;;
esac
