#!/usr/bin/env bash
# The shared library exports its public API and nothing else (include/difgames/api.h):
#   1. every name `nm -D --defined-only` lists is a public one: dg_<name>, or the double copy's
#      prefix of a dg_ name (read from the generated f64_names.h: dg64_<name>); not an internal
#      one (dg__*, hji_*, f64_*, ...), which -fvisibility=hidden keeps inside;
#   2. the exported names and the functions the installed headers declare, in either precision
#      (DG_F64), are the same: a declaration without DG_API would be missing from the library, and
#      an internal function named dg_ (dg_draw_*, dg_csv_*) would be exported (GCC's -aux-info
#      lists the declarations; skipped with another compiler).
# exports_test.sh LIB.so NM CC SOURCE_DIR BUILD_DIR
set -euo pipefail
so=$1 nm=$2 cc=$3 src=$4 bin=$5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# (a DG_SANITIZE build also exports the sanitizer's own hooks, __lsan_default_suppressions and the
# like, src/base/status.c: its runtime finds them by name; not the library's API)
"$nm" -D --defined-only "$so" | awk 'NF >= 3 {print $NF}' | grep -Ev '^__(lsan|asan|ubsan)_' | sort -u >"$tmp/exported"
n=$(wc -l <"$tmp/exported")
[ "$n" -gt 0 ] || { echo "FAIL: $nm lists no exported symbol of $so"; exit 1; }

# the double copy's prefix: '#define dg_ctx_create dg64_ctx_create' -> dg64_
names=$bin/include/difgames/f64_names.h
p64=$(sed -n 's/^#define dg_\([A-Za-z0-9_]*\) \([A-Za-z0-9]*_\)\1$/\2/p' "$names" | head -n 1)
[ -n "$p64" ] || { echo "FAIL: no dg_ name renamed in $names"; exit 1; }

# 1. public names only (a second underscore, dg__x, marks an internal one)
grep -Ev "^(dg|${p64%_})_[A-Za-z0-9]" "$tmp/exported" >"$tmp/bad" || true
if [ -s "$tmp/bad" ]; then
    echo "FAIL: $(wc -l <"$tmp/bad") of $n exported names of $so are not public (dg_ or ${p64}), e.g.:"
    head -n 20 "$tmp/bad" | sed 's/^/    /'
    fail=1
fi

# 2. the declared functions, all exported, and nothing else
if "$cc" --version 2>/dev/null | grep -qi 'gcc\|free software foundation'; then
    printf '#include "difgames/difgames.h"\n' >"$tmp/all.c"
    for def in "" "-DDG_F64"; do
        # shellcheck disable=SC2086
        "$cc" -std=c11 $def -I"$src/include" -I"$bin/include" -aux-info "$tmp/aux" -c "$tmp/all.c" \
            -o "$tmp/all.o"
        grep '/include/difgames/' "$tmp/aux" |
            sed -n 's/^.*\*\/ *extern [^(]*[ *]\([A-Za-z_][A-Za-z0-9_]*\) (.*$/\1/p' >>"$tmp/declared"
    done
    sort -u -o "$tmp/declared" "$tmp/declared"
    nd=$(wc -l <"$tmp/declared")
    [ "$nd" -gt 100 ] || { echo "FAIL: only $nd functions found declared in $src/include"; exit 1; }
    comm -23 "$tmp/declared" "$tmp/exported" >"$tmp/missing"
    if [ -s "$tmp/missing" ]; then
        echo "FAIL: $(wc -l <"$tmp/missing") of $nd functions the installed headers declare are not exported" \
             "by $so (DG_API missing?), e.g.:"
        head -n 20 "$tmp/missing" | sed 's/^/    /'
        fail=1
    fi
    comm -13 "$tmp/declared" "$tmp/exported" >"$tmp/extra"
    if [ -s "$tmp/extra" ]; then
        echo "FAIL: $(wc -l <"$tmp/extra") of $n names exported by $so are declared in no installed header," \
             "e.g.:"
        head -n 20 "$tmp/extra" | sed 's/^/    /'
        fail=1
    fi
else
    nd="(not checked: -aux-info needs GCC)"
fi
[ "$fail" = 0 ] || exit 1
echo "ok: $n exported names, all public; functions the headers declare: $nd"
