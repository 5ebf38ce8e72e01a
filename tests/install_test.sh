#!/usr/bin/env bash
# The installed library links an outside program exactly as the README says:
# install into a temporary prefix, build examples/game_hover.c with
#   cc game_hover.c $(pkg-config --cflags --libs difgames) -Wl,-rpath,PREFIX/lib
# (pkg-config finding difgames.pc through PKG_CONFIG_PATH), run it, and check
# that it trained (game_hover exits 1 unless the loss fell at least 5x). Then
# the same program once more with LD_LIBRARY_PATH instead of an rpath, and once
# statically (pkg-config --static).
#   usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
CC=${CC:-cc}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

fail() { echo "install_test: FAIL: $*" >&2; exit 1; }

cmake --install "$BUILD" --prefix "$T/prefix" >"$T/install.log" || { cat "$T/install.log"; fail "cmake --install"; }
PC=$(find "$T/prefix" -name difgames.pc | head -n 1)
[ -n "$PC" ] || fail "no difgames.pc installed under the prefix"
LIBDIR=$(dirname "$(dirname "$PC")")  # PREFIX/lib (as the README says) unless configured otherwise
for f in "$LIBDIR/libdifgames.so" "$LIBDIR/libdifgames.a" "$T/prefix/include/difgames/difgames.h" \
         "$T/prefix/bin/difgames"; do
    [ -e "$f" ] || fail "not installed: ${f#"$T"/prefix/}"
done
SONAME=$(readelf -d "$LIBDIR/libdifgames.so" 2>/dev/null | sed -n 's/.*SONAME.*\[\(.*\)\].*/\1/p')
[ -n "$SONAME" ] && [ -e "$LIBDIR/$SONAME" ] || fail "libdifgames.so has no SONAME, or its file is missing"

# an outside program, built where the build tree and the sources are out of sight
cp "$SRC/examples/game_hover.c" "$T/game_hover.c"
cd "$T"
FLAGS=$(PKG_CONFIG_PATH="$LIBDIR/pkgconfig" pkg-config --cflags --libs difgames)
case "$FLAGS" in *"$SRC"*|*"$BUILD"*) fail "pkg-config points into the build or source tree: $FLAGS" ;; esac
# shellcheck disable=SC2086
"$CC" -std=c11 -O2 game_hover.c -o hover $FLAGS -Wl,-rpath,"$LIBDIR" || fail "cc with: $FLAGS"
ldd ./hover >ldd.txt  # not piped into grep -q: under pipefail its early exit can fail ldd (SIGPIPE)
grep -q "$LIBDIR/libdifgames.so" ldd.txt || fail "hover does not use the installed shared library"
./hover 150 >out.txt || { cat out.txt; fail "hover (rpath) did not train"; }
grep -q "^hover: loss" out.txt || fail "hover printed no loss line"
cat out.txt

# the same without an rpath: LD_LIBRARY_PATH finds the library
# shellcheck disable=SC2086
"$CC" -std=c11 -O2 game_hover.c -o hover2 $FLAGS || fail "cc without rpath"
LD_LIBRARY_PATH="$LIBDIR" ./hover2 150 >/dev/null || fail "hover (LD_LIBRARY_PATH) did not train"

# statically: Requires.private and Libs.private must name every dependency
SFLAGS=$(PKG_CONFIG_PATH="$LIBDIR/pkgconfig" pkg-config --static --cflags --libs difgames)
# shellcheck disable=SC2086
"$CC" -std=c11 -O2 game_hover.c -o hover3 -Wl,-Bstatic -L"$LIBDIR" -ldifgames -Wl,-Bdynamic $SFLAGS \
    || fail "static link with: $SFLAGS"
ldd ./hover3 >ldd3.txt || true
grep -q libdifgames ldd3.txt && fail "hover3 should not need libdifgames.so"
./hover3 150 >/dev/null || fail "hover (static) did not train"
# the Python package: installed below the prefix (DG_PYTHON_DIR), it finds the installed library
# relative to itself, with the build and source trees out of sight
PYPKG=$(find "$T/prefix" -path '*/difgames/__init__.py' | head -n 1)
[ -n "$PYPKG" ] || fail "the Python package was not installed (python/CMakeLists.txt)"
PYDIR=$(dirname "$(dirname "$PYPKG")")
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
    PYTHONPATH="$PYDIR" /usr/bin/python3 -c '
import sys, difgames as dg, difgames._paths as p
assert p.LIBRARY.startswith(sys.argv[1]), p.LIBRARY
env = dg.Env(sys.argv[2], horizon=5)
s, aux = env.reset(batch=3, seed=0)
assert env.rollout(env.init_params(0), init=(s, aux))["loss"] > 0
' "$T/prefix" "$SRC/configs/reach.yaml" || fail "the installed Python package does not load or run"
    echo "install_test: the Python package runs from $PYDIR"
fi
echo "install_test: ok (installed, linked through pkg-config: shared with rpath, LD_LIBRARY_PATH, static; Python)"
