#!/usr/bin/env python3
"""The docs stay true to the code and to the numbers they quote (docs/measurements/README.md).

    docs_check.py static SRC          what needs no run: (1) README's dependency table names every
                                      package build.sh installs and every dependency CMake requires,
                                      and its static-link note every library difgames.pc adds;
                                      (2) every command in README.md, docs/*.md and docs/games/*.md
                                      writes only under runs/ (or /tmp); (3) every number quoted
                                      with a marker <!-- m:ID --> is the value of measurement ID in
                                      docs/measurements/*.json, written at its precision, and every
                                      measurement is quoted somewhere.
    docs_check.py rerun SRC BUILD     static, then reruns the command of every measurement that is
                                      rechecked (all but timings and slow ones) with BUILD's
                                      difgames in a temporary folder, and fails when a result is
                                      off by more than its precision: doc, id, quoted, measured.
    docs_check.py measure SRC BUILD [ID...]
                                      runs the measurements named (by id or id prefix; default all,
                                      the slow ones too) and prints quoted and measured values,
                                      failing on nothing.
    docs_check.py rerun SRC BUILD --output RUN=FILE ...
                                      rerun, taking run RUN's output (its stdout) from FILE instead of
                                      running its command: a ctest fixture ran it (hji.deg: ctest
                                      hji_degree_configs runs `hji_degree all` for its own check and
                                      keeps the output for the docs); its times are not known then.
    docs_check.py update SRC BUILD [ID...]
                                      the same, and writes the measured values (rounded to their
                                      precision; today's date on those that carry one) into
                                      docs/measurements/*.json and into the marked quotes of the
                                      docs: then read the prose around each changed quote.
Python 3 alone (no packages): the files are JSON.
"""
import glob
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

FAILS = []


def fail(msg):
    """records one failure (all are printed, then the exit status is 1)"""
    FAILS.append(msg)
    print("docs_check: FAIL: " + msg, file=sys.stderr)


def read(path):
    """the text of a file"""
    with open(path, encoding="utf-8") as f:
        return f.read()


def doc_files(src):
    """the documents checked: README.md, docs/*.md, docs/games/*.md (relative paths)"""
    out = ["README.md"] + sorted(glob.glob("docs/*.md", root_dir=src)) + \
        sorted(glob.glob("docs/games/*.md", root_dir=src))
    return [p for p in out if os.path.exists(os.path.join(src, p))]


# ---------------------------------------------------------------- (1) dependencies

def norm_dep(name):
    """a dependency's name as README, build.sh, CMake and pkg-config all spell it: lower case,
    without lib/-dev/version/SONAME digits/dashes (libcairo2-dev, cairo -> cairo; yaml-0.1 -> yaml;
    giflib, -lgif -> gif; pkg-config, PkgConfig -> pkgconfig)"""
    n = name.lower().strip()
    n = re.sub(r"-\d[\d.]*$", "", n)
    n = re.sub(r"-dev$", "", n)
    n = re.sub(r"^lib(?=.)", "", n)
    n = re.sub(r"(?<=.)lib$", "", n)
    n = re.sub(r"\d+$", "", n) if not n.endswith("++") else n
    return n.replace("-", "").replace("_", "")


def dependency_table(readme):
    """the first column of README's table under '## Dependencies' (one string per row)"""
    m = re.search(r"^## Dependencies.*?\n(.*?)(?=^## )", readme, re.S | re.M)
    if not m:
        return None
    rows = []
    for ln in m.group(1).split("\n"):
        if ln.startswith("|") and not re.match(r"^\|\s*-", ln):
            rows.append(ln.split("|")[1].strip())
    return rows[1:]  # without the header


def check_dependencies(src):
    """README's dependency table and static-link note against build.sh, CMake and difgames.pc.in"""
    readme = read(os.path.join(src, "README.md"))
    rows = dependency_table(readme)
    if not rows:
        fail("README.md: no '## Dependencies' table")
        return
    first = " ".join(rows)
    words = {norm_dep(w) for w in re.findall(r"[A-Za-z0-9](?:[A-Za-z0-9.+_-]*[A-Za-z0-9+])?", first)}
    # (a) every Debian package build.sh installs, by its exact name
    build_sh = read(os.path.join(src, "build.sh"))
    pkgs = []
    for m in re.finditer(r"^\s*(?:BUILD|TEST|DOCS)_PKGS\+?=\(([^)]*)\)", build_sh, re.M):
        pkgs += [w for w in m.group(1).split() if not w.startswith(("$", '"$'))]  # not "${X[@]}"
    if not pkgs:
        fail("build.sh: no BUILD_PKGS/TEST_PKGS arrays found")
    for p in pkgs:
        if not re.search(r"(?<![\w.+-])" + re.escape(p) + r"(?![\w.+-])", first):
            fail(f"README.md: the dependency table lacks {p}, which build.sh installs")
    # (b) every dependency CMake requires (pkg-config modules, find_package)
    for cm in sorted(glob.glob("**/CMakeLists.txt", root_dir=src, recursive=True)):
        if cm.startswith(("build", "runs")):
            continue
        text = read(os.path.join(src, cm))
        req = []
        for m in re.finditer(r"pkg_check_modules\(\s*\w+\s+([^)]*)\)", text):
            args = m.group(1).split()
            if "REQUIRED" in args:
                req += [a for a in args if a not in ("REQUIRED", "IMPORTED_TARGET", "QUIET")]
        for m in re.finditer(r"find_package\(\s*(\w+)([^)]*)\)", text):
            if "REQUIRED" in m.group(2).split():
                req.append(m.group(1))
        for r in req:
            if norm_dep(r) not in words:
                fail(f"README.md: the dependency table lacks {r}, which {cm} requires")
    # (c) the static-link note names every library a static link adds (difgames.pc.in's privates)
    pc = read(os.path.join(src, "difgames.pc.in"))
    libs = []
    for m in re.finditer(r"^Requires\.private:(.*)$", pc, re.M):
        libs += [w for w in re.split(r"[\s,]+", m.group(1)) if w and not re.match(r"[<>=\d]", w)]
    for m in re.finditer(r"^Libs\.private:(.*)$", pc, re.M):
        for w in m.group(1).split():
            if w.startswith("-l"):
                libs.append(w[2:])
            elif w == "-fopenmp":
                libs.append("openmp")
    note = re.search(r"[^\n]*pkg-config --static(?:[^\n]+\n)*", readme)
    if not note:
        fail("README.md: no static-link note (pkg-config --static)")
        return
    nwords = {norm_dep(w) for w in re.findall(r"[A-Za-z0-9](?:[A-Za-z0-9.+_-]*[A-Za-z0-9+])?", note.group(0))}
    for lib in libs:
        if norm_dep(lib) not in nwords:
            fail(f"README.md: the static-link note ('pkg-config --static' adds ...) lacks {lib}, "
                 "which difgames.pc.in adds")


# ---------------------------------------------------------------- (2) output paths

# a command of this project: difgames, perhaps behind environment settings, xvfb-run, mpirun, time
CMD = re.compile(r"^(?:\$ )?(?:[A-Z_]+=\S+ +)*(?:xvfb-run(?: -a)? +|mpirun(?: +-np +\w+| +--?[\w-]+)* +"
                 r"|(?:/usr/bin/)?time(?: +-v| +-f +\"[^\"]*\")? +|nice +)*(?:\./)?(?:build/)?difgames(?: +[a-z]+)+(?: |$)")
# an indented code line that is a shell command (indented prose and lists are not)
SHELL = re.compile(r"^(?:\$ )?(?:[A-Z_]+=\S+ +)*(?:difgames|\.?/?build/\S+|\./build\.sh|printf|echo|cat|cc|gcc|python3|"
                   r"sed|cp|mv|mkdir|tee|ctest|cmake|mpirun|xvfb-run|bash|for|time)(?: |$)")
# options whose argument is written
WRITES = {"--out", "--screenshot", "--record", "--trajectory", "--grad-out", "--png", "--gif",
          "--resume", "-o", ">", ">>"}
# files a documented command may write outside runs/: the generated config reference
WRITE_OK = {"docs/config.md"}


def code_commands(text):
    """(line, command) of the doc: each line of a fenced code block (not c or yaml), each indented
    code line that is a shell command, each inline code span that runs difgames; continuation
    lines joined"""
    fence, lang, cur, start = False, "", "", 0
    for i, ln in enumerate(text.split("\n"), 1):
        s = ln.strip()
        if s.startswith("```"):
            fence, lang, cur = not fence, s[3:].strip(), ""
            continue
        code = (fence and lang not in ("c", "yaml", "json", "python")) or \
            (not fence and ln.startswith("    ") and (cur or SHELL.match(s)))
        if code:
            if not cur:
                start = i
            if ln.rstrip().endswith("\\"):
                cur += ln.rstrip()[:-1] + " "
                continue
            yield start, (cur + ln).strip()
            cur = ""
        elif not fence:
            for m in re.finditer(r"`([^`]+)`", ln):
                if CMD.match(m.group(1)):
                    yield i, m.group(1)


def written_paths(cmd):
    """the paths the command line writes: the arguments of writing options and redirections,
    and for hji plot / hji play without --out, the value file's folder (they write beside it)"""
    try:
        t = shlex.split(cmd, comments=True)
    except ValueError:
        return []
    out = []
    for j, x in enumerate(t[:-1]):
        if x in WRITES or (x == "--plot" and "pg" not in t):
            out.append(t[j + 1])
        elif x.startswith(">") and len(x) > 2 and x[1] != ">":
            out.append(x[1:])
    if "hji" in t and ("plot" in t or "play" in t) and "--out" not in t and "--value" in t[:-1]:
        out.append(t[t.index("--value") + 1])
    return out


def allowed_path(p):
    """a path a documented command may write: under runs/ or /tmp, a variable or an upper-case
    placeholder the reader fills in (DIR, FILE.png), or a generated doc"""
    return (p.startswith(("runs/", "/tmp/", "$", '"$')) or p in WRITE_OK
            or re.fullmatch(r"[A-Z][A-Z0-9_]*(\.\w+)?", p) is not None or p.startswith("/dev/"))


def check_outputs(src):
    """every command of the docs writes only under runs/ (or /tmp)"""
    n = 0
    for doc in doc_files(src):
        for line, cmd in code_commands(read(os.path.join(src, doc))):
            for p in written_paths(cmd):
                n += 1
                if not allowed_path(p):
                    fail(f"{doc}:{line}: the command writes {p}, outside runs/ (README: everything "
                         f"under runs/): {cmd[:100]}")
    return n


# ---------------------------------------------------------------- (3) measurements

MARK = re.compile(r"<!-- m:([A-Za-z0-9_.-]+) -->")
# the quoted number: the last number before the marker, with at most a unit, a sign or ** between
QUOTE = re.compile(r"([-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?)[^\d<>|]{0,6}$")
PREC_KEYS = ("decimals", "digits", "abs", "rel")


def load_measurements(src):
    """{id: measurement} and {run id: run} from docs/measurements/*.json; ids are the file's
    name and the entry's, joined by a dot (certify.duel_simple.gap)"""
    ms, runs = {}, {}
    files = sorted(glob.glob(os.path.join(src, "docs", "measurements", "*.json")))
    for path in files:
        rel = os.path.relpath(path, src)
        stem = os.path.basename(path)[:-5]
        try:
            data = json.loads(read(path))
        except ValueError as e:
            fail(f"{rel}: not JSON: {e}")
            continue
        for name, r in data.get("runs", {}).items():
            r = dict(r, id=f"{stem}.{name}", file=rel, stem=stem)
            if not isinstance(r.get("command"), str) or not r["command"].strip():
                fail(f"{rel}: run {name}: 'command' must be a command line")
            runs[r["id"]] = r
        for m in data.get("measurements", []):
            mid = f"{stem}.{m.get('id')}"
            m = dict(m, id=mid, file=rel, stem=stem, doc=data.get("doc"))
            if mid in ms:
                fail(f"{rel}: measurement {mid} twice")
            ms[mid] = m
    for mid, m in ms.items():
        rel = m["file"]
        run = m.get("run", "")
        m["run"] = run if run in runs else f"{m['stem']}.{run}"
        if m["run"] not in runs:
            fail(f"{rel}: {mid}: run '{run}' is not in a runs table")
        if not isinstance(m.get("value"), (int, float)):
            fail(f"{rel}: {mid}: 'value' must be a number")
        p = m.get("precision", {})
        if not isinstance(p, dict) or len(p) != 1 or next(iter(p)) not in PREC_KEYS:
            fail(f"{rel}: {mid}: 'precision' must be one of " + ", ".join(PREC_KEYS))
            m["precision"] = {"abs": 0}
        if "format" in m and (m["format"] != "e" or "digits" not in m["precision"]):
            fail(f"{rel}: {mid}: 'format' can only be \"e\" (with 'digits': 2.580e-02)")
        rd = m.get("read", {})
        if not isinstance(rd, dict) or not any(k in rd for k in ("json", "csv", "regex", "wall", "cpu")):
            fail(f"{rel}: {mid}: 'read' must give json, csv, regex, wall or cpu")
        if not rechecked(m, runs) and not (m.get("measured") and m.get("machine")):
            fail(f"{rel}: {mid}: not rechecked, so it needs 'measured' (a date) and 'machine'")
    for r in runs.values():
        r["after"] = [a if a in runs else f"{r['stem']}.{a}" for a in r.get("after", [])]
        for a in r["after"]:
            if a not in runs:
                fail(f"{r['file']}: run {r['id']}: 'after' names {a}, not a run")
    return ms, runs


def rechecked(m, runs):
    """whether the checker reruns the measurement: not a timing, not on a slow run"""
    r = runs.get(m.get("run"), {})
    return m.get("recheck", True) and r.get("recheck", True)


def fmt(m):
    """the value as the docs must write it (decimals and digits fix the digits shown; digits with
    "format": "e" in scientific notation, 2.580e-02)"""
    v, p = m["value"], m["precision"]
    if "decimals" in p:
        return f"{v:.{p['decimals']}f}"
    if "digits" in p and m.get("format") == "e":  # scientific, as the benchmarks' tables print
        return f"{v:.{p['digits'] - 1}e}"
    if "digits" in p:
        if v == 0:
            return "0"
        d = max(0, p["digits"] - 1 - math.floor(math.log10(abs(v))))
        return f"{v:.{d}f}"
    return None


def within(m, measured):
    """whether a measured value is the file's value at the stated precision"""
    v, p = m["value"], m["precision"]
    k, x = next(iter(p.items()))
    if k == "decimals":
        tol = 0.5 * 10.0 ** -x
    elif k == "digits":
        tol = 0.5 * 10.0 ** (math.floor(math.log10(abs(v))) - x + 1) if v else 0.5 * 10.0 ** -x
    elif k == "abs":
        tol = x
    else:
        tol = x * abs(v)
    return abs(measured - v) <= tol * (1 + 1e-9) + 1e-12


def section_of(text, pos):
    """the text of the section (between headings) around a position"""
    starts = [m.start() for m in re.finditer(r"^#{1,6} ", text, re.M)]
    lo = max([s for s in starts if s <= pos], default=0)
    hi = min([s for s in starts if s > pos], default=len(text))
    return text[lo:hi]


def check_markers(src, ms, runs):
    """each marked number is its measurement's value at its precision; every measurement quoted;
    a number that is not rechecked has its date in its section"""
    quoted = {}
    for doc in doc_files(src):
        text = read(os.path.join(src, doc))
        for mk in MARK.finditer(text):
            mid = mk.group(1)
            line = text.count("\n", 0, mk.start()) + 1
            before = text[text.rfind("\n", 0, mk.start()) + 1:mk.start()]
            before = before[before.rfind("-->") + 3:] if "-->" in before else before
            q = QUOTE.search(before)
            if mid not in ms:
                fail(f"{doc}:{line}: marker m:{mid} names no measurement in docs/measurements/")
                continue
            m = ms[mid]
            if not q:
                fail(f"{doc}:{line}: {mid}: no number right before the marker")
                continue
            s = q.group(1)
            quoted.setdefault(mid, []).append((doc, line, s))
            want = fmt(m)
            ok = float(s) == float(m["value"]) and (want is None or s.lstrip("+") == want)
            if not ok:
                fail(f"{doc}:{line}: {mid}: quoted {s}, the file says {want or m['value']} "
                     f"({m['file']}, precision {m['precision']})")
            if not rechecked(m, runs) and m.get("measured") and m["measured"] not in section_of(text, mk.start()):
                fail(f"{doc}:{line}: {mid} is not rechecked: its section must say when it was "
                     f"measured ({m['measured']}, {m['machine']})")
    for mid, m in ms.items():
        if mid not in quoted:
            fail(f"{m['file']}: {mid} is quoted nowhere (no <!-- m:{mid} --> in the docs)")
    return quoted


# ---------------------------------------------------------------- reruns

class Runner:
    """runs the measurements' commands once each, in one temporary copy of what they read"""

    def __init__(self, src, build, runs, given=None):
        self.src, self.runs, self.out, self.given = src, runs, {}, given or {}
        self.tmp = tempfile.mkdtemp(prefix="docs_check.")
        for d in ("configs", "examples", "bench", "tests/python"):  # the last two: docs/python.md's runs
            if d in ("configs", "examples") or os.path.isdir(os.path.join(src, d)):
                shutil.copytree(os.path.join(src, d), os.path.join(self.tmp, d), symlinks=True)
        os.symlink(os.path.abspath(build), os.path.join(self.tmp, "build"))
        os.mkdir(os.path.join(self.tmp, "bin"))
        os.symlink(os.path.abspath(os.path.join(build, "difgames")), os.path.join(self.tmp, "bin", "difgames"))
        self.env = dict(os.environ, HOME=self.tmp, PATH=os.path.join(self.tmp, "bin") + ":" + os.environ["PATH"])

    def run_all(self, rids, jobs):
        """runs the named runs and those they need (after), each once, `jobs` at a time, each
        when the runs it needs have ended; a run whose prerequisite failed does not run"""
        need, stack = set(), list(rids)
        while stack:
            r = stack.pop()
            if r not in need:
                need.add(r)
                stack += self.runs[r]["after"]
        order = [r for r in self.runs if r in need]  # the files' order: long trainings come first
        for rid in [r for r in order if r in self.given]:  # output given: ran before, elsewhere
            order.remove(rid)
            path = self.given[rid]
            if not os.path.isfile(path) or os.path.getsize(path) == 0:
                fail(f"{self.runs[rid]['file']}: run {rid}: --output {path}: no such file, or empty")
                self.out[rid] = None
            else:
                print(f"  [given: {path}] {self.runs[rid]['command']}", flush=True)
                self.out[rid] = (read(path), "", None, None)
        running = {}
        while order or running:
            for rid in list(order):
                deps = self.runs[rid]["after"]
                if any(a in self.out and self.out[a] is None for a in deps):
                    self.out[rid] = None
                    order.remove(rid)
                elif len(running) < jobs and all(a in self.out for a in deps):
                    order.remove(rid)
                    outf, errf = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
                    p = subprocess.Popen(["bash", "-eo", "pipefail", "-c", self.runs[rid]["command"]],
                                         cwd=self.tmp, env=self.env, stdin=subprocess.DEVNULL,
                                         stdout=outf, stderr=errf, text=True)
                    running[p.pid] = (rid, p, time.time(), outf, errf)
            if not running:
                if order:  # nothing runs and nothing can start: runs that need each other
                    fail("runs that need each other (after): " + ", ".join(order))
                    for rid in order:
                        self.out[rid] = None
                    order = []
                continue
            pid, status, ru = os.wait4(-1, 0)  # the next of ours to end, with its own CPU time
            if pid not in running:
                continue
            rid, p, t0, outf, errf = running.pop(pid)
            p.returncode = os.waitstatus_to_exitcode(status)
            outf.seek(0)
            errf.seek(0)
            out, err = outf.read(), errf.read()
            r = self.runs[rid]
            print(f"  [{time.time() - t0:5.1f} s, cpu {ru.ru_utime + ru.ru_stime:5.1f} s] {r['command']}", flush=True)
            if p.returncode != 0:
                fail(f"{r['file']}: run {rid} exited {p.returncode}: {r['command']}\n{err[-2000:]}")
                self.out[rid] = None
            else:
                self.out[rid] = (out, err, time.time() - t0, ru.ru_utime + ru.ru_stime)

    def value(self, m):
        """the measured number of a measurement (scaled as the doc quotes it), or an error string"""
        o = self.out.get(m["run"])
        if o is None:
            return "its run failed"
        rd, x = m["read"], None
        if "wall" in rd or "cpu" in rd:
            x = o[2] if "wall" in rd else o[3]
            if x is None:
                return "its output was given (--output): its time is not known"
        elif "json" in rd:
            for ln in reversed(o[0].strip().split("\n")):
                try:
                    j = json.loads(ln)
                except ValueError:
                    continue
                for key in rd["json"].split("."):  # a dotted key reads into objects (br_route_pursuer.grid)
                    j = j.get(key) if isinstance(j, dict) else None
                if j is not None:
                    x = j
                    break
            if x is None:
                return f"no JSON line with '{rd['json']}' in its output"
        elif "csv" in rd:
            path = os.path.join(self.tmp, rd["csv"])
            if not os.path.exists(path):
                return f"it wrote no {rd['csv']}"
            rows = [ln.split(",") for ln in read(path).strip().split("\n")]
            head, body = rows[0], rows[1:]
            if rd.get("column") not in head:
                return f"{rd['csv']} has no column {rd.get('column')}"
            if "where" in rd:  # the row whose columns hold these values ({"epoch": 100})
                hit = [r for r in body if all(k in head and float(r[head.index(k)]) == float(v)
                                              for k, v in rd["where"].items())]
                if not hit:
                    return f"{rd['csv']} has no row where {rd['where']}"
                x = hit[-1][head.index(rd["column"])]
            else:
                row = rd.get("row", -1)
                if not -len(body) <= row < len(body):
                    return f"{rd['csv']} has no row {row}"
                x = body[row][head.index(rd["column"])]
        else:
            found = re.findall(rd["regex"], o[0] + o[1], re.M)
            k = rd.get("match", 0)
            if len(found) <= k:
                return f"its output does not match {rd['regex']!r}"
            x = found[k]
        try:
            return float(str(x).rstrip("%")) * m.get("scale", 1)
        except ValueError:
            return f"read {x!r}, not a number"


def rounded(m, x):
    """a measured value at the measurement's precision (as update writes it)"""
    p = m["precision"]
    if "decimals" in p:
        return round(x, p["decimals"]) if p["decimals"] else int(round(x))
    if "digits" in p and x:
        d = p["digits"] - 1 - math.floor(math.log10(abs(x)))
        return round(x, d) if d > 0 else int(round(x, d))
    return float(f"{x:.9g}")  # abs, rel: the number as measured (float32 results have 9 digits)


def dump(data):
    """a measurement file as JSON, one run and one measurement a line (diffs stay readable)"""
    one = lambda x: json.dumps(x, ensure_ascii=False)
    out = ["{"]
    keys = [k for k in data if k not in ("runs", "measurements")]
    for k in keys:
        out.append(f"  {one(k)}: {one(data[k])},")
    out.append('  "runs": {')
    rs = list(data.get("runs", {}).items())
    out += [f"    {one(k)}: {one(v)}" + ("," if i < len(rs) - 1 else "") for i, (k, v) in enumerate(rs)]
    out.append("  },")
    out.append('  "measurements": [')
    ms = data.get("measurements", [])
    out += [f"    {one(m)}" + ("," if i < len(ms) - 1 else "") for i, m in enumerate(ms)]
    out += ["  ]", "}"]
    return "\n".join(out) + "\n"


def write_values(src, ms, values):
    """writes measured values (rounded) into the measurement files, atomically"""
    for path in sorted({ms[mid]["file"] for mid in values}):
        full = os.path.join(src, path)
        data = json.loads(read(full))
        stem = os.path.basename(path)[:-5]
        for m in data["measurements"]:
            mid = f"{stem}.{m['id']}"
            if mid in values:
                m["value"] = rounded(ms[mid], values[mid])
                if "measured" in m:
                    m["measured"] = time.strftime("%Y-%m-%d")
        tmp = full + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(dump(data))
        os.replace(tmp, full)
        print(f"docs_check: wrote {path}")


def write_quotes(src, ms):
    """rewrites each marked quote of a changed measurement to the file's value (a leading + kept)"""
    for doc in doc_files(src):
        path = os.path.join(src, doc)
        text = read(path)

        def fix(mk):
            m = ms.get(mk.group(2))
            if not m:
                return mk.group(0)
            old, new = mk.group(1), fmt(m) or repr(m["value"])
            if old.lstrip("+") == new or (not fmt(m) and float(old) == float(m["value"])):
                return old
            return "+" + new if old.startswith("+") and not new.startswith("-") else new
        new = re.sub(r"([-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?)(?=[^\d<>|\n]{0,6}<!-- m:([A-Za-z0-9_.-]+) -->)", fix, text)
        if new != text:
            with open(path + ".tmp", "w", encoding="utf-8") as f:
                f.write(new)
            os.replace(path + ".tmp", path)
            print(f"docs_check: wrote the quotes of {doc}")


def measure(src, build, ms, runs, quoted, pick, strict, values=None, given=None):
    """reruns the picked measurements; strict: fails on drift (doc, id, quoted, measured);
    values: a dict that receives each measured number; given: {run id: file of its output}"""
    rn = Runner(src, build, runs, given)
    try:
        n = 0
        picked = [mid for mid, m in ms.items() if pick(m)]
        jobs = int(os.environ.get("DOCS_CHECK_JOBS", "0")) or max(1, min(4, os.cpu_count() or 1))
        rn.run_all({ms[mid]["run"] for mid in picked if ms[mid]["run"] in runs}, jobs)
        for mid in picked:
            m = ms[mid]
            n += 1
            got = rn.value(m)
            where = ", ".join(f"{d}:{ln}" for d, ln, _ in quoted.get(mid, [])) or m.get("doc")
            shown = fmt(m) or m["value"]
            if isinstance(got, str):
                fail(f"{where}: {mid}: {got}")
                continue
            if values is not None:
                values[mid] = got
            if not within(m, got):
                msg = f"{where}: {mid}: quoted {shown}, measured {got:.6g} (precision {m['precision']})"
                fail(msg) if strict else print("  drift: " + msg)
            else:
                print(f"  ok {mid}: quoted {shown}, measured {got:.6g}")
        return n
    finally:
        shutil.rmtree(rn.tmp, ignore_errors=True)


def main(argv):
    """the modes above; exit status 0 when everything holds, 1 on a failure, 2 on bad usage"""
    given, rest, i = {}, [], 0
    while i < len(argv):  # --output RUN=FILE, anywhere
        if argv[i] != "--output":
            rest.append(argv[i])
            i += 1
            continue
        run, sep, path = (argv[i + 1] if i + 1 < len(argv) else "").partition("=")
        if not sep or not run or not path:
            print("docs_check: --output wants RUN=FILE", file=sys.stderr)
            return 2
        given[run] = os.path.abspath(path)
        i += 2
    argv = rest
    if len(argv) < 2 or argv[0] not in ("static", "rerun", "measure", "update") or \
            (argv[0] != "static" and len(argv) < 3):
        print(__doc__, file=sys.stderr)
        return 2
    mode, src = argv[0], os.path.abspath(argv[1])
    t0 = time.time()
    check_dependencies(src)
    nout = check_outputs(src)
    ms, runs = load_measurements(src)
    quoted = check_markers(src, ms, runs)
    nq = sum(len(v) for v in quoted.values())
    print(f"docs_check: static: {nout} written paths, {len(ms)} measurements, {nq} quotes")
    if mode != "static":
        build = os.path.abspath(argv[2])
        if not os.access(os.path.join(build, "difgames"), os.X_OK):
            print(f"docs_check: {build}/difgames: not built", file=sys.stderr)
            return 2
        for run in given:
            if run not in runs:
                print(f"docs_check: --output {run}=...: no run {run} in docs/measurements/", file=sys.stderr)
                return 2
        if mode == "rerun":
            n = measure(src, build, ms, runs, quoted, lambda m: rechecked(m, runs), True, given=given)
        else:
            names, values = argv[3:], {}
            n = measure(src, build, ms, runs, quoted,
                        lambda m: not names or any(m["id"] == x or m["id"].startswith(x + ".") for x in names),
                        False, values, given)
            if mode == "update":
                write_values(src, ms, values)
                ms, runs = load_measurements(src)
                write_quotes(src, ms)
        print(f"docs_check: {mode}: {n} measurements, {time.time() - t0:.0f} s")
    if FAILS:
        print(f"docs_check: {len(FAILS)} failure(s)", file=sys.stderr)
        return 1
    print("docs_check: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
