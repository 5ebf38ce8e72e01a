"""HJI values from Python (include/difgames/hji_flat.h): a grid solved here, a value file of
`difgames hji solve`, or a network of `difgames hji learn`, each a Value.

    V = dg.hji.solve("configs/hji/pursuit2d.yaml", t_end=0.5)          # solve the grid now
    W = dg.hji.load("runs/hji/air3d.safetensors")                       # a value file (its stored config)
    N = dg.hji.load("runs/hji/air3d_nn/value.safetensors", config="configs/hji/air3d.yaml")  # a network
    V.value(x), V.grad(x), V.control(x), V.disturbance(x)   # x: (B, axes) or (axes,)
    V.grid                                                   # the values on the grid, a read-only numpy view
    a = W.filter(x, nominal, mode="qp", gamma=2.0)           # the library's safety filter (dg_hji_filter_row)
"""
import ctypes
import json

import numpy as np

from . import _lib
from .env import resolve_overrides

__all__ = ["Value", "solve", "load", "certify"]

_h = _lib.lib
_P = ctypes.c_void_p
for _name, _res, _args in [
        ("dg_hji_flat_solve", _P, [ctypes.c_char_p, _P, _P, ctypes.c_int, _P]),
        ("dg_hji_flat_free", None, [_P]),
        ("dg_hji_flat_grid", ctypes.c_int, [_P, _P, _P, _P]),
        ("dg_hji_flat_values", _P, [_P, _P]),
        ("dg_hji_flat_file", _P, [ctypes.c_char_p, ctypes.c_char_p, _P, _P, ctypes.c_int, _P]),
        ("dg_hji_flat_open", _P, [ctypes.c_char_p, ctypes.c_char_p, _P, _P, ctypes.c_int, _P]),
        ("dg64_hji_flat_open", _P, [ctypes.c_char_p, ctypes.c_char_p, _P, _P, ctypes.c_int, _P]),
        ("dg_hji_learn_probe", ctypes.c_int, [ctypes.c_char_p, _P]),
        ("dg_hji_flat_source", ctypes.c_int, [_P]),
        ("dg_hji_flat_safe_player", ctypes.c_int, [_P]),
        ("dg_flat_certify_sampling", _P, [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, _P, _P, ctypes.c_int,
                                          _P, _P]),
        ("dg64_flat_certify_sampling", _P, [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, _P, _P,
                                            ctypes.c_int, _P, _P]),
        ("dg_flat_text_free", None, [_P]),
        ("dg_hji_flat_filter", ctypes.c_int, [_P, ctypes.c_int, ctypes.c_double, ctypes.c_double, ctypes.c_int64,
                                              _P, _P, _P, _P, _P]),
        ("dg_hji_flat_inputs", ctypes.c_double, [_P, _P, _P]),
        ("dg_hji_flat_name", ctypes.c_char_p, [_P, ctypes.c_int, ctypes.c_int]),
        ("dg_hji_flat_eval", ctypes.c_int, [_P, ctypes.c_int64, _P, _P, _P, _P, _P, _P])]:
    _f = getattr(_h, _name)
    _f.restype, _f.argtypes = _res, _args


_SOURCES = ["solved", "file", "network"]
_MODES = {"switch": 0, "qp": 1}


class Value:
    """An HJI value V(x) at its horizon t_end (the time-to-go it is read at), on its config's grid.
    Made by solve() or load(); source says which ("solved", "file", "network")."""

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
        self.source = _SOURCES[_h.dg_hji_flat_source(handle)]
        sp = _h.dg_hji_flat_safe_player(handle)
        self.safe_player = {0: "u", 1: "d"}.get(sp)   # whom filter() acts for (None: no one)
        self._grid = None

    @property
    def grid(self):
        """The value at every node of the grid (shape), a read-only numpy view of the library's array
        (zero-copy; it keeps the handle alive). A network's is tabulated there on first use."""
        if self._grid is None:
            e = _lib.err()
            ptr = _h.dg_hji_flat_values(self._h, ctypes.byref(e))
            if not ptr:
                _lib.raise_err(e)
            nodes = int(np.prod(self.shape, dtype=np.int64))
            buf = (ctypes.c_double * nodes).from_address(ptr)
            buf._owner = self  # the view keeps the handle alive
            g = np.frombuffer(buf, dtype=np.float64).reshape(self.shape)
            g.flags.writeable = False
            self._grid = g
        return self._grid

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h:
            _h.dg_hji_flat_free(h)

    def __repr__(self):
        return "Value(%s, %s, grid %s, t_end %g)" % (self.game, self.source, "x".join(map(str, self.shape)),
                                                     self.t_end)

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

    def filter(self, x, nominal, mode="switch", margin=0.0, gamma=2.0, changed=False):
        """The library's safety filter (dg_hji_flat_filter, dg_hji_filter_row; docs/safety.md) for the
        safe player (safe_player: the maximiser, whom a high value keeps safe) around its nominal input
        (B, dim) at states x (B, axes), both in the game's own units; returns the filtered input (and,
        changed=True, a bool array of the rows it changed).
        mode "switch": the player's equilibrium input where V(x) <= margin, else the nominal;
        mode "qp": the input of its box nearest the nominal with grad V . f(x, a, o*) >= -gamma V(x)."""
        if mode not in _MODES:
            raise ValueError("mode: 'switch' or 'qp', got %r" % (mode,))
        if self.safe_player is None:
            raise _lib.Error("filter: %s has no player to filter for (a control-affine game of kind whose "
                             "maximiser has a box input)" % self.game, "argument")
        a = np.ascontiguousarray(np.atleast_2d(x), dtype=np.float64)
        dim = self.nu if self.safe_player == "u" else self.nd
        if a.ndim != 2 or a.shape[1] != self.ndim or a.shape[0] < 1:
            raise ValueError("x: expected shape (B, %d) or (%d,), got %s" % (self.ndim, self.ndim, np.shape(x)))
        B = a.shape[0]
        nom = np.ascontiguousarray(np.asarray(nominal, dtype=np.float64).reshape(B, dim))
        out, ch = np.empty((B, dim)), np.empty(B, dtype=np.int32)
        e = _lib.err()
        ptr = lambda z: z.ctypes.data_as(ctypes.c_void_p)  # noqa: E731
        _lib.check(_h.dg_hji_flat_filter(self._h, _MODES[mode], float(margin), float(gamma), B, ptr(a), ptr(nom),
                                         ptr(out), ptr(ch), ctypes.byref(e)), e)
        if np.ndim(x) == 1:
            out, ch = out[0], ch[0]
        return (out, ch.astype(bool)) if changed else out


def _sets(config, overrides):
    sets = resolve_overrides(config, overrides) if overrides else []
    ck = (ctypes.c_char_p * max(len(sets), 1))(*[k.encode() for k, _ in sets])
    cv = (ctypes.c_char_p * max(len(sets), 1))(*[v.encode() for _, v in sets])
    return ck, cv, len(sets)


def load(path, config=None, **overrides):
    """The value at path as a Value: a value file of `difgames hji solve` (its problem from config, or
    from the config the file stores when config is None; the file checked against it, its last stored
    time read) or a network of `difgames hji learn` (config: the HJI config it was trained on, needed;
    an f64 network is read by the library's double copy). Keyword overrides as dg.Env's, on config."""
    vp = _lib.path_bytes(path, "value")
    cp = None if config is None else _lib.path_bytes(config, "config")
    if overrides and cp is None:
        raise ValueError("load: overrides need config (the HJI config to set them on)")
    ck, cv, n = _sets(config, overrides)
    f64 = ctypes.c_int(0)
    net = _h.dg_hji_learn_probe(vp, ctypes.byref(f64))
    opener = _h.dg64_hji_flat_open if net and f64.value else _h.dg_hji_flat_open
    e = _lib.err()
    h = opener(vp, cp, ck, cv, n, ctypes.byref(e))
    if not h:
        _lib.raise_err(e)
    return Value(h, (cp or vp).decode())


def solve(config, **overrides):
    """Solves the HJI config (configs/hji/*.yaml; keyword overrides as dg.Env's) to t_end: a Value."""
    path = _lib.path_bytes(config, "config")
    ck, cv, n = _sets(config, overrides)
    e = _lib.err()
    h = _h.dg_hji_flat_solve(path, ck, cv, n, ctypes.byref(e))
    if not h:
        _lib.raise_err(e)
    return Value(h, path.decode())


def certify(config, checkpoint=None, hji=None, overrides=None, value=None, grid=None, **options):
    """`difgames certify`'s JSON as a dict, computed by the library (no command is run):
    - certify(config, checkpoint[, hji=HJI]): `--config CONFIG --ckpt CHECKPOINT [--hji HJI]`
      (dg_certify_run through dg_flat_certify): the learner's own discrete game, or the HJI game;
    - certify(hji_config, value=NET[, grid=VALUE]): `--sampling --config HJI --value NET [--grid VALUE]`
      (dg_certify_sampling_run through dg_flat_certify_sampling): a learned value's safe set by
      sampling (an f64 network is read by the library's double copy, as the command does).
    options: the command's, dashes as underscores (episodes=16, tol=0.01, box=[lo, hi, ...],
    no_bounds=True, exploit_own=3; epsilon=1e-3, beta=1e-6, seed=0, ...), refused when unknown, out of
    bounds or of another path; overrides: config keys as Env's keywords ({"precision": "f64"}; not
    with value). Its errors raise difgames.Error with the library's one-line message; the command's
    tables, --csv and --plot stay the command's."""
    from .env import Env
    names, values = [], []
    for k, v in options.items():
        if v is None:
            continue
        if isinstance(v, bool):
            v = "1" if v else "0"
        elif isinstance(v, (list, tuple, np.ndarray)):
            v = ",".join(repr(float(x)) for x in v)
        elif isinstance(v, (int, float, np.integer, np.floating)):
            v = repr(v.item() if hasattr(v, "item") else v)
        else:
            raise TypeError("certify: option %s: expected a number, a flag or a list, got %s" % (k, type(v).__name__))
        names.append(k.encode())
        values.append(v.encode())
    cn, cv = (ctypes.c_char_p * max(1, len(names)))(*names), (ctypes.c_char_p * max(1, len(values)))(*values)
    if value is not None:
        if checkpoint is not None or hji is not None or overrides:
            raise ValueError("certify: value (--sampling) certifies a learned value: not with checkpoint, hji or "
                             "overrides")
        vp = _lib.path_bytes(value, "value")
        f64 = ctypes.c_int(0)
        fn = _h.dg64_flat_certify_sampling if _h.dg_hji_learn_probe(vp, ctypes.byref(f64)) and f64.value \
            else _h.dg_flat_certify_sampling
        e = _lib.err()
        out = fn(_lib.path_bytes(config, "config"), vp, None if grid is None else _lib.path_bytes(grid, "grid"),
                 cn, cv, len(names), None, ctypes.byref(e))
        if not out:
            _lib.raise_err(e)
        try:
            return json.loads(ctypes.string_at(out).decode())
        finally:
            _h.dg_flat_text_free(out)
    if checkpoint is None:
        raise ValueError("certify: give the checkpoint (or value=, a network of hji learn, to certify by sampling)")
    if grid is not None:
        raise ValueError("certify: grid applies to value= (--sampling)")
    ck = _lib.path_bytes(checkpoint, "checkpoint")
    hj = None if hji is None else _lib.path_bytes(hji, "hji")
    with Env(config, **(overrides or {})) as env:
        e = _lib.err()
        out = env._api.flat_certify(env._h, ck, hj, cn, cv, len(names), None, ctypes.byref(e))
        if out is None:
            _lib.raise_err(e)
        return json.loads(out.decode())
