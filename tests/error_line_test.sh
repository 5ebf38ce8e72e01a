#!/usr/bin/env bash
# The command's error line, "difgames <cmd>: <msg>" on stderr, has one home: cli_verror
# (src/cli/common.c), which cli_error, cli_fail and the viewer's vw_error (defined by the command in
# src/cli/view.c) print through; no other source spells it, and the viewer includes no header of the
# command's (docs/architecture.md's layers: view.c joins the two).
# Fails listing the lines that break it.
#   usage: error_line_test.sh SOURCE_DIR
set -euo pipefail
cd "$1"
# the pattern spelt so that this file does not match itself
P='fprintf\(stderr, "difgames %s'
fail=0
hits=$(grep -rn -E "$P" src --include='*.c' --include='*.h' || true)
if [ "$(printf '%s\n' "$hits" | grep -c .)" != 1 ] || ! printf '%s\n' "$hits" | grep -q '^src/cli/common.c:'; then
    echo "error_line_test: FAIL: the error line is printed here (want once, in src/cli/common.c):" >&2
    printf '%s\n' "$hits" >&2
    fail=1
fi
inc=$(grep -rn -E '#include "cli/' src/viewer || true)
if [ -n "$inc" ]; then
    echo "error_line_test: FAIL: the viewer includes the command's headers:" >&2
    printf '%s\n' "$inc" >&2
    fail=1
fi
[ $fail = 0 ] && echo "error_line_test: ok (one error line, src/cli/common.c; the viewer off cli/)"
exit $fail
