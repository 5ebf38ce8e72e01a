#!/usr/bin/env bash
# The README works as written: every command line in its ```sh blocks runs,
# in order, in a fresh copy of the repository (the tracked files only, plus
# build/ pointing at this build), with HOME a temporary folder. Checks that
#   - each command exits 0 (a command needing a file that nothing made fails);
#   - every file a command's comment promises ("-> runs/x/y") exists after it;
#   - nothing is written outside runs/ (and build/), and .gitignore ignores runs/;
#   - the ./build.sh lines name modes that build.sh has (they are not run here:
#     they install packages and run this very suite).
# A stale README cannot pass: the commands are read from README.md each time.
#   usage: readme_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "readme_test: FAIL: $*" >&2; exit 1; }

# a fresh copy: what git tracks (or, outside git, the tree without build outputs)
mkdir -p "$T/repo" "$T/home"
if git -C "$SRC" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$SRC" && git ls-files -z --cached --others --exclude-standard | \
        tar -cf - --null --ignore-failed-read -T - 2>/dev/null) | tar -xf - -C "$T/repo"
else
    (cd "$SRC" && tar -cf - --exclude=./build --exclude='./build-*' --exclude=./runs .) | tar -xf - -C "$T/repo"
fi
[ ! -e "$T/repo/runs" ] || fail "the copy already has runs/"
ln -s "$BUILD" "$T/repo/build"
grep -qx 'runs/' "$SRC/.gitignore" || fail ".gitignore does not ignore runs/"

# the commands: ```sh blocks, continuation lines joined, in order
python3 - "$SRC/README.md" >"$T/commands" <<'EOF'
import sys
lines, out, block, cur = open(sys.argv[1], encoding="utf-8").read().split("\n"), [], False, ""
for ln in lines:
    s = ln.strip()
    if s.startswith("```"):
        block = s in ("```sh", "```bash", "```console", "```shell")
        continue
    if not block:
        continue
    cur += ln.rstrip()[:-1] + " " if ln.rstrip().endswith("\\") else ln
    if not ln.rstrip().endswith("\\"):
        if cur.strip() and not cur.strip().startswith("#"):
            out.append(cur.strip())
        cur = ""
for c in out:
    print(c.replace("\n", " "))
EOF
n=$(wc -l <"$T/commands")
[ "$n" -ge 10 ] || fail "only $n command lines found in README.md's sh blocks"

snapshot() {  # every file outside runs/ and build/, with its checksum
    (cd "$T/repo" && find . -path ./runs -prune -o -path ./build -prune -o -type f -print0 | sort -z | \
        xargs -0 sha1sum)
}
snapshot >"$T/before"

k=0
while IFS= read -r cmd; do
    k=$((k + 1))
    case "$cmd" in
        ./build.sh*)  # check the mode exists; the suite itself is what ./build.sh test runs
            mode=$(echo "$cmd" | awk '{print $2}')
            case "$mode" in ""|"#"*) ;; *)
                grep -qE "^[[:space:]]*#[[:space:]]+\./build\.sh $mode\b" "$SRC/build.sh" ||
                    fail "README names './build.sh $mode', which build.sh does not document" ;;
            esac
            echo "[$k/$n] (not run here) $cmd"
            continue ;;
    esac
    echo "[$k/$n] $cmd"
    start=$(date +%s)
    if ! (cd "$T/repo" && HOME="$T/home" timeout 600 bash -eo pipefail -c "$cmd") >"$T/out" 2>&1 </dev/null; then
        cat "$T/out" >&2
        fail "README command $k failed: $cmd"
    fi
    echo "        ok, $(( $(date +%s) - start )) s"
    # files the comment promises: "-> path" (a folder when it ends in /)
    promised=$(echo "$cmd" | grep -oE -- '-> [^ ,]+' | sed 's/^-> //' || true)
    for f in $promised; do
        f=${f%/}
        [ -e "$T/repo/$f" ] || fail "README command $k promises $f, which it did not write: $cmd"
        case "$f" in runs/*) ;; *) fail "README command $k writes $f, outside runs/" ;; esac
    done
done <"$T/commands"

snapshot >"$T/after"
if ! diff -u "$T/before" "$T/after" >"$T/diff"; then
    cat "$T/diff" >&2
    fail "README commands wrote files outside runs/"
fi
echo "readme_test: ok ($n command lines)"
