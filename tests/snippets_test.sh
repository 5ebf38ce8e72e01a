#!/usr/bin/env bash
# The code in difgames.h's opening comment compiles as written, so the page a newcomer reads first
# cannot rot: each indented block (the config -> train -> eval path, the tape's tutorial) becomes
# the body of a main() that includes difgames.h, compiled with every warning an error.
# snippets_test.sh CC SOURCE_DIR BUILD_DIR
set -euo pipefail
cc=$1 src=$2 bin=$3
hdr=$src/include/difgames/difgames.h
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the opening comment's blocks: lines ' *     code', with the blank ' *' lines inside a block kept
awk -v dir="$tmp" '
    /^ \*\// { exit }
    /^ \*     / { if (!open) { n++; open = 1; pend = "" }
                  printf "%s%s\n", pend, substr($0, 8) >> (dir "/block" n ".txt"); pend = ""; next }
    /^ \*$/   { if (open) pend = pend "\n"; next }
              { open = 0 }
' "$hdr"
nb=$(find "$tmp" -name 'block*.txt' | wc -l)
[ "$nb" -ge 2 ] || { echo "FAIL: $nb code blocks found in $hdr's opening comment (expected the run path and the tutorial)"; exit 1; }

fail=0
for b in "$tmp"/block*.txt; do
    c=${b%.txt}.c
    { printf '#include <stdio.h>\n#include <stdlib.h>\n\n#include "difgames/difgames.h"\n\nint main(void) {\n'
      cat "$b"
      printf '    return 0;\n}\n'; } >"$c"
    if ! "$cc" -std=c11 -Wall -Wextra -Werror -Wno-unused-variable -Wno-unused-but-set-variable \
         -I"$src/include" -I"$bin/include" -c "$c" -o "${b%.txt}.o" 2>"$tmp/err"; then
        echo "FAIL: the code block of $hdr starting '$(head -n 1 "$b")' does not compile:"
        sed 's/^/    /' "$tmp/err" | head -n 30
        fail=1
    fi
done
[ "$fail" = 0 ] || exit 1
echo "ok: $nb code blocks of difgames.h compile"
