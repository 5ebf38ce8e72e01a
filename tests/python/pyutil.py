"""Shared by the Python package's tests (tests/python/*_test.py): skip (exit 77, ctest's
SKIP_RETURN_CODE) without numpy (or torch where needed), the source tree's configs, a temporary folder,
and a runner that names each failing check."""
import os
import sys
import tempfile
import traceback

SKIP = 77
SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def need(*modules):
    """Exits 77 (skipped) when a module is missing."""
    for m in modules:
        try:
            __import__(m)
        except ImportError:
            print("skipped: python3 has no %s (Debian: python3-%s)" % (m, m))
            sys.exit(SKIP)


class Skip(Exception):
    """A case that cannot run here (a module missing): run() skips it and runs the others."""


def need_case(*modules):
    """Inside a test case: raises Skip when a module is missing (the other cases still run)."""
    for m in modules:
        try:
            __import__(m)
        except ImportError:
            raise Skip("python3 has no %s (Debian: python3-%s)" % (m, m))


def cfg(name):
    return os.path.join(SRC, "configs", name)


def tmpdir():
    return tempfile.mkdtemp(prefix="dg_py_")


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def raises(exc, fn, *args, contains=None, **kwargs):
    """fn(*args) raises exc (with contains in its message); returns the exception."""
    try:
        fn(*args, **kwargs)
    except exc as e:
        if contains is not None and contains not in str(e):
            raise AssertionError("%s raised %r, expected a message with %r" % (fn, str(e), contains))
        return e
    raise AssertionError("%s did not raise %s" % (getattr(fn, "__name__", fn), exc.__name__))


def run(tests):
    """Runs each test function; exit 1 when one fails, else 77 (skipped) when one was skipped (Skip)."""
    failed = skipped = 0
    for t in tests:
        try:
            t()
            print("ok   %s" % t.__name__)
        except Skip as why:
            skipped += 1
            print("skip %s: %s" % (t.__name__, why))
        except Exception:
            failed += 1
            print("FAIL %s" % t.__name__)
            traceback.print_exc()
    sys.exit(1 if failed else SKIP if skipped else 0)
