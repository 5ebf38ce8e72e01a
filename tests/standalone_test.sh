#!/usr/bin/env bash
# The repository stands alone: no tracked file may refer to a folder outside
# it (a sibling "shared" folder of specs and data that a clone does not have,
# or its spec/*.md pages; the games are defined in docs/games/).
# Fails listing every file:line that does. Run on the git checkout when there
# is one (tracked files only), else on every file under the source tree.
#   usage: standalone_test.sh SOURCE_DIR
set -euo pipefail
SRC=$(cd "$1" && pwd)
# the patterns, spelt so that this file does not match itself
S=shared
PATTERNS=(-e "\.\./$S" -e "$S/spec" -e "$S/data" -e "/work/$S" -e "(^|[^A-Za-z0-9_./-])spec/[A-Za-z0-9_]+\.md")
cd "$SRC"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    hits=$(git grep -n -I -E "${PATTERNS[@]}" -- . || true)
else
    hits=$(grep -rn -I -E "${PATTERNS[@]}" --exclude-dir=build --exclude-dir='build-*' \
           --exclude-dir=runs --exclude-dir=.git . || true)
fi
if [ -n "$hits" ]; then
    echo "standalone_test: FAIL: these lines refer to files outside the repository:" >&2
    echo "$hits" >&2
    exit 1
fi
echo "standalone_test: ok (no reference to a folder outside the repository)"
