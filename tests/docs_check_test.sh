#!/usr/bin/env bash
# tests/docs_check.py itself, on a small made-up repository whose `difgames` is a script printing
# one JSON line: each check passes on it as made, and fails, naming what drifted, after one change:
#   - a package build.sh installs, or a dependency CMake requires, left out of README's table;
#   - a library difgames.pc.in adds left out of the static-link note;
#   - a documented command writing outside runs/ (an option, a redirection, hji plot's default);
#   - a quoted number that is not the file's value, or not at its precision; a marker naming no
#     measurement; a measurement quoted nowhere; a not-rechecked one without its date;
#   - a rerun whose result moved beyond the precision (doc, id, quoted and measured printed),
#     and one that stays within it; a timing that is not rechecked;
#   - a run's output given from a file (--output RUN=FILE): used, and drift in it, a missing file, an
#     unknown run and a timing of it refused.
#   usage: docs_check_test.sh SOURCE_DIR
set -euo pipefail
CHECK=$(cd "$1" && pwd)/tests/docs_check.py
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0
fail() { echo "docs_check_test: FAIL: $*" >&2; exit 1; }

make_repo() {  # a fresh made-up repository in $T/r, its build in $T/b
    rm -rf "$T/r" "$T/b"
    mkdir -p "$T/r/docs/measurements" "$T/r/docs/games" "$T/r/configs" "$T/r/examples" "$T/b"
    cat >"$T/r/README.md" <<'EOF'
# x

```sh
build/difgames train --config configs/a.yaml --out runs/a
```

To link the static library: `pkg-config --static` adds libyaml, libm and OpenMP.

## Dependencies (Debian packages)

| package | why |
|---|---|
| gcc, pkg-config | the build |
| libyaml-dev | configs |
| g++ | models |
| OpenMP (part of gcc) | threads |

## Next
EOF
    cat >"$T/r/build.sh" <<'EOF'
BUILD_PKGS=(gcc pkg-config libyaml-dev g++)
EOF
    cat >"$T/r/CMakeLists.txt" <<'EOF'
find_package(PkgConfig REQUIRED)
pkg_check_modules(YAML REQUIRED IMPORTED_TARGET yaml-0.1)
find_package(OpenMP REQUIRED COMPONENTS C)
EOF
    printf 'Requires.private: yaml-0.1\nLibs.private: -lm -fopenmp\n' >"$T/r/difgames.pc.in"
    cat >"$T/r/docs/a.md" <<'EOF'
# a

## Measured

The gap is **2.29 %**<!-- m:a.gap --> and the loss 0.3546<!-- m:a.loss -->; training took
9.8 s<!-- m:a.seconds --> of CPU (measured 2026-12-06 on a test machine).

```sh
difgames eval --config configs/a.yaml --ckpt runs/a/final.safetensors
```
EOF
    cat >"$T/r/docs/measurements/a.json" <<'EOF'
{
  "doc": "docs/a.md",
  "runs": {
    "eval": {"command": "difgames eval --config configs/a.yaml"}
  },
  "measurements": [
    {"id": "gap", "run": "eval", "read": {"json": "gap"}, "scale": 100, "value": 2.29, "precision": {"decimals": 2}},
    {"id": "loss", "run": "eval", "read": {"regex": "^all +(\\S+)"}, "value": 0.3546, "precision": {"decimals": 4}},
    {"id": "seconds", "run": "eval", "read": {"json": "seconds"}, "value": 9.8, "precision": {"digits": 2}, "recheck": false, "measured": "2026-12-06", "machine": "a test machine"}
  ]
}
EOF
    # the build's command: prints what FAKE_GAP and FAKE_LOSS say, as difgames prints its results
    cat >"$T/b/difgames" <<'EOF'
#!/usr/bin/env bash
echo "all   ${FAKE_LOSS:-0.35461}"
echo "{\"gap\":${FAKE_GAP:-0.0229174},\"seconds\":${FAKE_SECONDS:-9.8}}"
EOF
    chmod +x "$T/b/difgames"
}

expect_ok() {  # expect_ok WHAT MODE: the checker passes
    n=$((n + 1))
    if ! python3 "$CHECK" "$2" "$T/r" "$T/b" >"$T/out" 2>&1; then
        cat "$T/out" >&2
        fail "$1: the checker failed"
    fi
}
expect_fail() {  # expect_fail WHAT MODE PATTERN...: the checker fails, its messages match each PATTERN
    local what=$1 mode=$2
    shift 2
    n=$((n + 1))
    if python3 "$CHECK" "$mode" "$T/r" "$T/b" >"$T/out" 2>&1; then
        cat "$T/out" >&2
        fail "$what: the checker passed"
    fi
    for p in "$@"; do
        grep -qE -- "$p" "$T/out" || { cat "$T/out" >&2; fail "$what: no message matching '$p'"; }
    done
}

make_repo
expect_ok "the repository as made" static
expect_ok "the repository as made, rerun" rerun

# (1) dependencies
sed -i '/^| g++ |/d' "$T/r/README.md"
expect_fail "g++ left out of the table" static "lacks g\+\+, which build.sh installs"
make_repo
echo 'pkg_check_modules(MATHEVAL REQUIRED IMPORTED_TARGET libmatheval)' >>"$T/r/CMakeLists.txt"
expect_fail "a CMake requirement left out" static "lacks libmatheval, which CMakeLists.txt requires"
make_repo
sed -i 's/-lm -fopenmp/-lmatheval -lm -fopenmp/' "$T/r/difgames.pc.in"
expect_fail "a static library left out of the note" static "static-link note .* lacks matheval"

# (2) outputs outside runs/
make_repo
printf '\n```sh\nbuild/difgames hji solve --config c.yaml --out air3d.safetensors\n```\n' >>"$T/r/docs/a.md"
expect_fail "--out into the repository" static "docs/a.md:[0-9]+: the command writes air3d.safetensors"
make_repo
printf '\nThen `build/difgames hji plot --value v.safetensors`.\n' >>"$T/r/docs/a.md"
expect_fail "hji plot writing beside a value outside runs/" static "writes v.safetensors"
make_repo
printf '\n    printf "game: reach" > b.yaml\n' >>"$T/r/docs/a.md"
expect_fail "a redirection in an indented block" static "writes b.yaml"

# (3) quotes against the files
make_repo
sed -i 's/\*\*2.29 %\*\*/**2.05 %**/' "$T/r/docs/a.md"
expect_fail "a stale quote" static "docs/a.md:5: a.gap: quoted 2.05, the file says 2.29"
make_repo
sed -i 's/0.3546<!--/0.355<!--/' "$T/r/docs/a.md"
expect_fail "a quote at another precision" static "a.loss: quoted 0.355, the file says 0.3546"
make_repo
sed -i 's/m:a.gap/m:a.gapp/' "$T/r/docs/a.md"
expect_fail "a marker naming nothing" static "m:a.gapp names no measurement" "a.gap is quoted nowhere"
make_repo
sed -i 's/ (measured 2026-12-06 on a test machine)//' "$T/r/docs/a.md"
expect_fail "a timing without its date" static "a.seconds is not rechecked: its section must say when"

# (4) reruns
make_repo
FAKE_GAP=0.0205 expect_fail "a result that moved" rerun "docs/a.md:5: a.gap: quoted 2.29, measured 2.05"
make_repo
FAKE_LOSS=0.35 expect_fail "a regex result that moved" rerun "a.loss: quoted 0.3546, measured 0.35"
make_repo
FAKE_GAP=0.022949 FAKE_SECONDS=50 expect_ok "within the precision; timings not rechecked" rerun
make_repo
sed -i 's/"value": 0.3546, "precision": {"decimals": 4}/"value": 0.3546, "precision": {"abs": 0.01}/' \
    "$T/r/docs/measurements/a.json"
FAKE_LOSS=0.36 expect_ok "an absolute precision" rerun
FAKE_LOSS=0.37 expect_fail "beyond an absolute precision" rerun "a.loss: quoted 0.3546, measured 0.37"

# (5) scientific notation ("format": "e" with digits), as the benchmarks' tables print errors
make_repo
printf '\nThe error is 2.580e-02<!-- m:a.err -->.\n' >>"$T/r/docs/a.md"
sed -i 's/^  \]$/    ,{"id": "err", "run": "eval", "read": {"regex": "^err +(\\\\S+)"}, "value": 0.0258, "precision": {"digits": 4}, "format": "e"}\n  ]/' \
    "$T/r/docs/measurements/a.json"
sed -i 's/^echo "all /echo "err   ${FAKE_ERR:-2.5803e-02}"; echo "all /' "$T/b/difgames"
expect_ok "a quote in scientific notation" rerun
FAKE_ERR=2.5813e-02 expect_fail "a scientific quote that moved" rerun "a.err: quoted 2.580e-02, measured 0.025813"
sed -i 's/2.580e-02<!--/0.02580<!--/' "$T/r/docs/a.md"
expect_fail "a scientific quote written otherwise" static "a.err: quoted 0.02580, the file says 2.580e-02"
sed -i 's/0.02580<!--/2.580e-02<!--/; s/"format": "e"/"format": "g"/' "$T/r/docs/a.md" "$T/r/docs/measurements/a.json"
expect_fail "a format that is not e" static "a.err: 'format' can only be"

# (6) a run's output given (--output RUN=FILE: a ctest fixture ran its command): read from the file,
# the command not run; a drifted number in it fails as a rerun's would; a missing file or an unknown
# run fails; a timing of a given run cannot be measured
make_repo
printf 'all   0.35461\n{"gap":0.0229174,"seconds":9.8}\n' >"$T/given"
printf '#!/usr/bin/env bash\nexit 3\n' >"$T/b/difgames"  # the command must not run
n=$((n + 1))
python3 "$CHECK" rerun "$T/r" "$T/b" --output a.eval="$T/given" >"$T/out" 2>&1 || { cat "$T/out" >&2; fail "a given output: the checker failed"; }
grep -q "given: $T/given" "$T/out" || fail "a given output: not named"
n=$((n + 1))
printf 'all   0.36\n{"gap":0.0229174}\n' >"$T/given"
if python3 "$CHECK" rerun "$T/r" "$T/b" --output a.eval="$T/given" >"$T/out" 2>&1 || ! grep -q "a.loss: quoted 0.3546, measured 0.36" "$T/out"; then
    cat "$T/out" >&2; fail "a drifted given output: not refused"
fi
n=$((n + 1))
if python3 "$CHECK" rerun "$T/r" "$T/b" --output a.eval="$T/none" >"$T/out" 2>&1 || ! grep -q "no such file, or empty" "$T/out"; then
    cat "$T/out" >&2; fail "a missing given output: not refused"
fi
n=$((n + 1))
python3 "$CHECK" rerun "$T/r" "$T/b" --output a.evall="$T/given" >"$T/out" 2>&1 && fail "an unknown given run: passed"
grep -q "no run a.evall" "$T/out" || { cat "$T/out" >&2; fail "an unknown given run: not named"; }
n=$((n + 1))
printf 'all   0.35461\n{"gap":0.0229174}\n' >"$T/given"
sed -i 's/"read": {"json": "seconds"}/"read": {"cpu": true}/' "$T/r/docs/measurements/a.json"
python3 "$CHECK" measure "$T/r" "$T/b" a.seconds --output a.eval="$T/given" >"$T/out" 2>&1 && fail "a given run's timing: measured"
grep -q "its time is not known" "$T/out" || { cat "$T/out" >&2; fail "a given run's timing: no reason"; }

echo "docs_check_test: ok ($n checks)"
