# Shared by the shell tests, sourced as `. "$(dirname "$0")/lib.sh"` by a test called as
#   test.sh path/to/difgames repo_root
# Sets GOMP_SPINCOUNT (below), DG (the command, made absolute), ROOT, T (a temporary folder removed on exit, with any
# background job killed; a test that mounts in it sets its own trap), the counters pass and fail
# with ok/bad to count, cfg to write a config, run_rows for a table of refused commands and
# finish to print the count and set the exit status.
set -u
# OpenMP's wait policy as the command sets it itself when none is given, by executing itself again
# (src/cli/main.c): given here, each command a test runs starts once, not twice (the libraries'
# loading is most of a refused command's time); cli_test.sh checks the re-execution on its own
[ -n "${OMP_WAIT_POLICY:-}${GOMP_SPINCOUNT:-}" ] || export GOMP_SPINCOUNT=1000
DG=$1
ROOT=$2
case $DG in /*) ;; *) DG=$PWD/$DG ;; esac   # a test may run it from another folder
T=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null; rm -rf "$T"' EXIT
pass=0
fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
# cfg NAME TEXT: writes TEXT (printf escapes) into $T/NAME.yaml and prints that path
cfg() { printf "$2" >"$T/$1.yaml"; echo "$T/$1.yaml"; }

# run_rows LABEL LIMIT ROW...: each ROW is "name|expected words|arguments of difgames" (the
# arguments split as the shell would, eval'd). Each command runs with stdin from /dev/null,
# killed after 20 s, under `ulimit -v LIMIT` (KiB) when LIMIT is not empty. A row passes when it
# exits with status 2 within the time, its stderr is one line holding the expected words, nothing
# says it crashed, it wrote nothing on stdout, and, when OUTS names a folder, it left nothing
# there (emptied after each row), and, when MAXLEN is set, the line has at most MAXLEN characters
# (an echoed value shortened, the reason kept). LABEL goes before each row's name in ok/FAIL lines;
# without a LIMIT, the row's name and its error line (the temporary folder written <tmp>) are
# appended to $T/table.txt.
run_rows() {
    local label=$1 limit=$2 row name rest want cmd rc lines
    shift 2
    for row in "$@"; do
        name=${row%%|*}; rest=${row#*|}; want=${rest%%|*}; cmd=${rest#*|}
        eval "set -- $cmd"
        ( [ -n "$limit" ] && ulimit -v "$limit"; exec timeout 20 "$DG" "$@" ) >"$T/stdout" 2>"$T/err" </dev/null
        rc=$?
        lines=$(wc -l <"$T/err")
        if [ $rc -eq 124 ]; then bad "$label$name: hung (killed after 20 s)"
        elif [ $rc -ne 2 ]; then bad "$label$name: exit $rc, want 2 ($(head -c 300 "$T/err"))"
        elif ! grep -qF -- "$want" "$T/err"; then bad "$label$name: message lacks '$want': $(head -c 400 "$T/err")"
        elif [ "$lines" -ne 1 ]; then bad "$label$name: $lines lines on stderr, want 1: $(head -c 300 "$T/err")"
        elif [ -n "${MAXLEN:-}" ] && [ "$(wc -c <"$T/err")" -gt $((MAXLEN + 1)) ]; then
            bad "$label$name: a line of $(($(wc -c <"$T/err") - 1)) characters, more than $MAXLEN: $(head -c 300 "$T/err")"
        elif grep -qiE 'sanitizer|segmentation|core dumped' "$T/err"; then bad "$label$name: crashed"
        elif [ -s "$T/stdout" ]; then bad "$label$name: wrote to stdout"
        elif [ -n "${OUTS:-}" ] && [ -n "$(ls -A "$OUTS")" ]; then bad "$label$name: left $(ls -A "$OUTS" | head -3)"
        else ok "$label$name"; fi
        [ -z "$limit" ] && printf '%-40s %s\n' "$name" "$(head -n 1 "$T/err" | sed "s|$T|<tmp>|g" | cut -c1-200)" >>"$T/table.txt"
        [ -n "${OUTS:-}" ] && rm -rf "${OUTS:?}"/*
    done
}

# finish: prints the count; the exit status of the test (0 when nothing failed)
finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}
