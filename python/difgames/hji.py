"""The HJI grid solver from Python: dg.hji.solve(config) -> Value (include/difgames/hji_flat.h).

    V = dg.hji.solve("configs/hji/pursuit2d.yaml", t_end=0.5)
    V.value(x), V.grad(x), V.control(x), V.disturbance(x)   # x: (B, axes) or (axes,)
    V.grid                                                   # the solved values, a read-only numpy view
"""
import ctypes
import json
import os
import subprocess

import numpy as np

from . import _lib, _paths
from .env import resolve_overrides

__all__ = ["Value", "solve", "certify"]

_h = _lib.lib
_P = ctypes.c_void_p
for _name, _res, _args in [
        ("dg_hji_flat_solve", _P, [ctypes.c_char_p, _P, _P, ctypes.c_int, _P]),
        ("dg_hji_flat_free", None, [_P]),
        ("dg_hji_flat_grid", ctypes.c_int, [_P, _P, _P, _P]),
        ("dg_hji_flat_values", _P, [_P]),
        ("dg_hji_flat_inputs", ctypes.c_double, [_P, _P, _P]),
        ("dg_hji_flat_name", ctypes.c_char_p, [_P, ctypes.c_int, ctypes.c_int]),
        ("dg_hji_flat_eval", ctypes.c_int, [_P, ctypes.c_int64, _P, _P, _P, _P, _P, _P])]:
    _f = getattr(_h, _name)
    _f.restype, _f.argtypes = _res, _args


class Value:
    """A solved HJI value V(x, t_end) on its grid. Made by solve()."""

    def __init__(self, handle, config):
        self._h, self.config = handle, config
        n, lo, hi = (ctypes.c_int64 * 8)(), (ctypes.c_double * 8)(), (ctypes.c_double * 8)()
        self.ndim = _h.dg_hji_flat_grid(handle, n, lo, hi)
        self.shape = tuple(int(n[k]) for k in range(self.ndim))
        self.lo = np.array(lo[:self.ndim])
        self.hi = np.array(hi[:self.ndim])
        nu, nd = ctypes.c_int(), ctypes.c_int()
        self.t_end = _h.dg_hji_flat_inputs(handle, ctypes.byref(nu), ctypes.byref(nd))
        self.nu, self.nd = nu.value, nd.value
        name = lambda k, i=0: _h.dg_hji_flat_name(handle, k, i).decode()  # noqa: E731
        self.game, self.u_name, self.d_name = name(0), name(1), name(2)
        self.axis_names = [name(3, i) or "x%d" % i for i in range(self.ndim)]
        self.axes = [np.linspace(self.lo[k], self.hi[k], self.shape[k]) for k in range(self.ndim)]
        nodes = int(np.prod(self.shape, dtype=np.int64))
        buf = (ctypes.c_double * nodes).from_address(_h.dg_hji_flat_values(handle))
        buf._owner = self  # the view keeps the solve alive
        g = np.frombuffer(buf, dtype=np.float64).reshape(self.shape)
        g.flags.writeable = False
        self.grid = g

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h:
            _h.dg_hji_flat_free(h)

    def __repr__(self):
        return "Value(%s, grid %s, t_end %g)" % (self.game, "x".join(map(str, self.shape)), self.t_end)

    def _eval(self, x):
        a = np.ascontiguousarray(x, dtype=np.float64)
        one = a.ndim == 1
        if one:
            a = a[None, :]
        if a.ndim != 2 or a.shape[1] != self.ndim or a.shape[0] < 1:
            raise ValueError("x: expected shape (B, %d) or (%d,), got %s" % (self.ndim, self.ndim, np.shape(x)))
        B = a.shape[0]
        v, g = np.empty(B), np.empty((B, self.ndim))
        u, d = np.empty((B, max(self.nu, 1))), np.empty((B, max(self.nd, 1)))
        e = _lib.err()
        ptr = lambda z: z.ctypes.data_as(ctypes.c_void_p)  # noqa: E731
        _lib.check(_h.dg_hji_flat_eval(self._h, B, ptr(a), ptr(v), ptr(g), ptr(u), ptr(d), ctypes.byref(e)), e)
        u, d = u[:, :self.nu], d[:, :self.nd]
        return (v[0], g[0], u[0], d[0]) if one else (v, g, u, d)

    def value(self, x):
        """V at states x ((B, axes) -> (B,); (axes,) -> a float), multilinear in the grid."""
        return self._eval(x)[0]

    def grad(self, x):
        """The value's gradient at x: (B, axes) (or (axes,))."""
        return self._eval(x)[1]

    def control(self, x):
        """u's equilibrium input at x (the player named u_name): (B, nu) (or (nu,))."""
        return self._eval(x)[2]

    def disturbance(self, x):
        """d's equilibrium input at x (the player named d_name): (B, nd) (or (nd,))."""
        return self._eval(x)[3]

    def filter(self, x, nominal, player="u", threshold=0.0):
        """A least-restrictive safety filter in a Python loop: the nominal input (B, dim) where
        V(x) > threshold, the player's equilibrium input where V(x) <= threshold (player "u" or "d":
        the one for whom a high value is safe, e.g. the evader of a capture game)."""
        v, _, u, d = self._eval(np.atleast_2d(x))
        best = u if player == "u" else d if player == "d" else None
        if best is None:
            raise ValueError("player: 'u' or 'd', got %r" % (player,))
        nom = np.asarray(nominal, dtype=np.float64).reshape(best.shape)
        return np.where((v <= threshold)[:, None], best, nom)


def solve(config, **overrides):
    """Solves the HJI config (configs/hji/*.yaml; keyword overrides as dg.Env's) to t_end: a Value."""
    path = _lib.path_bytes(config, "config")
    sets = resolve_overrides(config, overrides)
    ck = (ctypes.c_char_p * max(len(sets), 1))(*[k.encode() for k, _ in sets])
    cv = (ctypes.c_char_p * max(len(sets), 1))(*[v.encode() for _, v in sets])
    e = _lib.err()
    h = _h.dg_hji_flat_solve(path, ck, cv, len(sets), ctypes.byref(e))
    if not h:
        _lib.raise_err(e)
    return Value(h, path.decode())


def certify(config, checkpoint, hji=None, **options):
    """`difgames certify --config CONFIG --ckpt CHECKPOINT [--hji HJI] [--option value ...]`'s JSON as a
    dict (options: the command's, dashes as underscores: tol=0.01 -> --tol 0.01; True -> the flag). The
    certification's flow lives in the command (src/cli/certify.c): this runs the command next to the
    package (the build's, or the installed one) and raises difgames.Error with its one-line message."""
    exe = os.environ.get("DIFGAMES_COMMAND") or getattr(_paths, "COMMAND", None) or "difgames"
    args = [exe, "certify", "--config", os.fspath(config), "--ckpt", os.fspath(checkpoint)]
    if hji is not None:
        args += ["--hji", os.fspath(hji)]
    for k, v in options.items():
        flag = "--" + k.replace("_", "-")
        if v is True:
            args.append(flag)
        elif v is not False and v is not None:
            args += [flag, ",".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)]
    r = subprocess.run(args, capture_output=True, text=True)
    lines = r.stdout.strip().splitlines()
    if r.returncode != 0 or not lines:
        msg = (r.stderr.strip().splitlines() or ["difgames certify: exit status %d" % r.returncode])[-1]
        raise _lib.Error(msg, "usage" if r.returncode == 2 else "error")
    return json.loads(lines[-1])
