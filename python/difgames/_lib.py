"""The library behind the package: libdifgames.so through ctypes, its error as difgames.Error.

Every call goes through the flat C surface of include/difgames/flat.h (one opaque handle, caller-owned
arrays), so nothing here mirrors a C struct: a field added to the library's structs cannot shift a
Python view of it. The float copy's names are dg_flat_*, the double copy's dg64_flat_* (train.precision
f64; include/difgames/real.h), both in the one shared library.
"""
import ctypes
import os

from . import _paths

__all__ = ["Error", "lib", "api", "check"]


class Error(Exception):
    """A library error: its one-line message (str(err)) and its status name (err.status: "config",
    "io", "format", "argument", ...)."""

    def __init__(self, message, status="error"):
        super().__init__(message)
        self.status = status


Error.__module__ = "difgames"

def _load():
    names = []
    if os.environ.get("DIFGAMES_LIB"):
        names.append(os.environ["DIFGAMES_LIB"])
    if _paths.LIBRARY:
        names.append(_paths.LIBRARY)
    names.append("libdifgames.so.%s" % _paths.SOVERSION)  # the system's loader (ldconfig, LD_LIBRARY_PATH)
    errors = []
    for n in names:
        try:
            return ctypes.CDLL(n)
        except OSError as exc:
            errors.append(str(exc))
    raise ImportError("difgames: cannot load libdifgames.so (set DIFGAMES_LIB to its path): " + "; ".join(errors))


lib = _load()


class _Err(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("msg", ctypes.c_char * 512)]


_STATUS = ["ok", "out of memory", "arena full", "shape", "argument", "io", "format", "not found", "config",
           "non-finite", "interrupted"]

c_real = {4: ctypes.c_float, 8: ctypes.c_double}
P = ctypes.c_void_p
I64 = ctypes.c_int64
_sigs = {
    "flat_keys": (I64, [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t, P]),
    "flat_precision": (ctypes.c_int, [ctypes.c_char_p, P, P, ctypes.c_int, P]),
    "flat_open": (P, [ctypes.c_char_p, P, P, ctypes.c_int, P]),
    "flat_free": (None, [P]),
    "flat_dim": (I64, [P, ctypes.c_int]),
    "flat_name": (ctypes.c_char_p, [P, ctypes.c_int, ctypes.c_int]),
    "flat_param_shape": (ctypes.c_int, [P, ctypes.c_int, P]),
    "flat_offset": (I64, [P, ctypes.c_int]),
    "flat_init": (ctypes.c_int, [P, ctypes.c_uint64, P, ctypes.c_int, ctypes.c_int, P, P, P]),
    "flat_reset": (ctypes.c_int, [P, ctypes.c_uint64, ctypes.c_int, P, P, P]),
    "flat_observe": (ctypes.c_int, [P, ctypes.c_int, P, P, P, P, P]),
    "flat_step": (ctypes.c_int, [P, ctypes.c_int, P, P, P, P, P]),
    "flat_step_cost": (ctypes.c_int, [P, ctypes.c_int, ctypes.c_int, P, P, P, P, P, P]),
    "flat_episode": (ctypes.c_int, [P, P, P, P, ctypes.c_int, ctypes.c_int, P, P, P, P, P, P, P]),
    "flat_load": (ctypes.c_int, [P, ctypes.c_char_p, P, P]),
    "flat_save": (ctypes.c_int, [P, ctypes.c_char_p, P, P]),
    "flat_train": (ctypes.c_int, [P, ctypes.c_char_p, P, P, P, P, P]),
    "flat_exploit": (ctypes.c_int, [P, P, P, P, ctypes.c_int, ctypes.c_int, P, P]),
    "flat_safety_eval": (ctypes.c_int, [P, P, P, P, ctypes.c_int, ctypes.c_char_p, P, P, P, P, P]),
    "flat_certify": (ctypes.c_char_p, [P, ctypes.c_char_p, ctypes.c_char_p, P, P, ctypes.c_int, P, P]),
    "flat_eval_run": (ctypes.c_char_p, [P, ctypes.c_char_p, P, P, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p,
                                        ctypes.c_int, ctypes.c_int, P, P, P]),
}
PROGRESS = ctypes.CFUNCTYPE(None, P, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_double))


class _Api:
    """One copy of the library's flat surface: f32 (dg_*) or f64 (dg64_*)."""

    def __init__(self, prefix):
        for name, (res, args) in _sigs.items():
            fn = getattr(lib, prefix + name)
            fn.restype, fn.argtypes = res, args
            setattr(self, name, fn)


api = {"f32": _Api("dg_"), "f64": _Api("dg64_")}
lib.dg_run_dir.restype, lib.dg_run_dir.argtypes = ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]


def err():
    """A fresh dg_err for one call."""
    return _Err()


def raise_err(e):
    """Raises difgames.Error with e's message."""
    status = _STATUS[e.status] if 0 <= e.status < len(_STATUS) else "error"
    raise Error(e.msg.decode("utf-8", "replace") or status, status)


def check(rc, e):
    """rc a dg_status: raises difgames.Error with e's message unless it is DG_OK."""
    if rc != 0:
        raise_err(e)
    return rc


def path_bytes(path, what="path"):
    """A path argument as bytes: str, bytes or os.PathLike; TypeError otherwise, ValueError with a NUL."""
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if isinstance(path, str):
        path = path.encode()
    if not isinstance(path, bytes):
        raise TypeError("%s: expected a path (str), got %s" % (what, type(path).__name__))
    if b"\0" in path:
        raise ValueError("%s: a path cannot hold a NUL byte" % what)
    return path


def run_dir(config):
    """The command's default run folder of a config: runs/<name> (dg_run_dir)."""
    buf = ctypes.create_string_buffer(4096)
    if lib.dg_run_dir(path_bytes(config, "config"), buf, len(buf)):
        raise Error("%s: path too long to name the default out folder" % config, "argument")
    return buf.value.decode()
