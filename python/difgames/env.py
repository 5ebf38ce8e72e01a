"""Env: a config's game on numpy arrays (include/difgames/flat.h through ctypes)."""
import ctypes
import difflib
import os

import numpy as np

from . import _lib
from ._lib import Error

__all__ = ["Env", "config_keys", "resolve_overrides"]

# what dg_flat_dim and dg_flat_name are asked (include/difgames/flat.h, dg_flat_what and dg_flat_kind)
_DIM = {n: i for i, n in enumerate(["state", "aux", "obs", "act", "players", "obs2", "act2", "horizon", "terms",
                                    "metrics", "params", "total", "batch", "epochs", "seed", "open_loop", "real",
                                    "aux_user", "threads", "general_sum", "exploit_epochs", "noise"])}
_NAME = {n: i for i, n in enumerate(["term", "metric", "param", "game", "source", "aux_name", "config", "player",
                                     "safety_mode", "metric_undefined"])}


def config_keys(config):
    """Every key the config at path may set (its key tables' and those written in it): a sorted list."""
    path = _lib.path_bytes(config, "config")
    e = _lib.err()
    need = _lib.api["f32"].flat_keys(path, None, 0, ctypes.byref(e))
    if need < 0:
        _lib.raise_err(e)
    buf = ctypes.create_string_buffer(int(need))
    _lib.api["f32"].flat_keys(path, buf, len(buf), ctypes.byref(e))
    return sorted(set(k for k in buf.value.decode().split("\n") if k))


def _value_text(key, v):
    """A Python value as the text of a config value (what --set takes)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float, np.integer, np.floating)):
        return repr(float(v)) if isinstance(v, (float, np.floating)) else str(int(v))
    if isinstance(v, str):
        if "\0" in v or "\n" in v:
            raise ValueError("%s: a value cannot hold a NUL byte or a newline" % key)
        return v
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value_text(key, x) for x in v) + "]"
    raise TypeError("%s: cannot set a config key to a %s" % (key, type(v).__name__))


def resolve_overrides(config, overrides):
    """Keyword overrides as (key, value text) pairs. A keyword names a key by its dotted path with __
    for the dots (train__lr) or by its last part where that is unique among the config's keys
    (horizon); an unknown or ambiguous name raises KeyError naming the candidates."""
    if not overrides:
        return []
    keys = config_keys(config)
    last = {}
    for k in keys:
        last.setdefault(k.rsplit(".", 1)[-1], []).append(k)
    out = []
    for name, v in overrides.items():
        dotted = name.replace("__", ".")
        if dotted in keys:
            key = dotted
        elif "__" not in name and len(last.get(name, [])) == 1:
            key = last[name][0]
        elif "__" not in name and len(last.get(name, [])) > 1:
            raise KeyError("%s: ambiguous config key, one of: %s (name it as %s)" % (
                name, ", ".join(last[name]), " or ".join(k.replace(".", "__") for k in last[name])))
        else:
            near = difflib.get_close_matches(dotted, keys, n=5) or difflib.get_close_matches(name, list(last), n=5)
            raise KeyError("%s: unknown config key of %s%s" % (
                name, config, "; did you mean: " + ", ".join(near) if near else ""))
        out.append((key, _value_text(key, v)))
    return out


def _c_strings(items):
    arr = (ctypes.c_char_p * max(len(items), 1))(*[s.encode() for s in items])
    return arr


class Env:
    """A config's game and policy: Env("configs/reach.yaml", precision="f64", horizon=10).

    Arrays are numpy, row-major, of the env's dtype (float32, or float64 with precision="f64"):
    state (B, state_dim), aux (B, aux_dim) episode constants (one column of zeros for a game without),
    actions (B, act_dim [+ act2_dim]). An input already of that dtype and C-contiguous is passed to the
    library as it is (no copy); any other is converted once (np.ascontiguousarray). Outputs are new
    arrays the library writes into directly. The library copies the inputs onto its tape inside a step
    (one copy of B x state_dim values): a step costs that copy and the game's own step."""

    def __init__(self, config, **overrides):
        self.config = str(_lib.path_bytes(config, "config").decode())
        self.overrides = resolve_overrides(config, overrides)
        keys, vals = [k for k, _ in self.overrides], [v for _, v in self.overrides]
        ck, cv = _c_strings(keys), _c_strings(vals)
        e = _lib.err()
        prec = _lib.api["f32"].flat_precision(self.config.encode(), ck, cv, len(keys), ctypes.byref(e))
        if prec < 0:
            _lib.raise_err(e)
        self.precision = "f64" if prec == 1 else "f32"
        self._api = _lib.api[self.precision]
        self._h = self._api.flat_open(self.config.encode(), ck, cv, len(keys), ctypes.byref(e))
        if not self._h:
            _lib.raise_err(e)
        self.dtype = np.float64 if self.precision == "f64" else np.float32
        d = {n: int(self._api.flat_dim(self._h, i)) for n, i in _DIM.items()}
        self.dims = d
        self.state_dim, self.aux_dim, self.obs_dim, self.act_dim = d["state"], d["aux"], d["obs"], d["act"]
        self.nplayers, self.obs2_dim, self.act2_dim = d["players"], d["obs2"], d["act2"]
        self.horizon, self.batch, self.epochs, self.seed = d["horizon"], d["batch"], d["epochs"], d["seed"]
        self.open_loop = bool(d["open_loop"])
        self.game = self._name("game")
        self.source = self._name("source")
        self.term_names = [self._name("term", i) for i in range(d["terms"])]
        self.metric_names = [self._name("metric", i) for i in range(d["metrics"])]
        self.param_names, self.param_shapes, self._offsets = [], [], []
        shape = (ctypes.c_int * 8)()
        for i in range(d["params"]):
            self.param_names.append(self._name("param", i))
            nd = self._api.flat_param_shape(self._h, i, shape)
            self.param_shapes.append(tuple(shape[k] for k in range(nd)))
            self._offsets.append(int(self._api.flat_offset(self._h, i)))
        self.nparams = d["total"]

    def _name(self, kind, i=0):
        s = self._api.flat_name(self._h, _NAME[kind], i)
        return s.decode() if s is not None else None

    def close(self):
        """Frees the library's run (also done when the Env is collected)."""
        h, self._h = getattr(self, "_h", None), None
        if h:
            self._api.flat_free(h)

    __del__ = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "Env(%r, game=%s, precision=%s, state_dim=%d, act_dim=%d, horizon=%d)" % (
            self.config, self.game, self.precision, self.state_dim, self.act_dim, self.horizon)

    # ---------------------------------------------------------------- arrays

    def _ptr(self, a):
        return a.ctypes.data_as(ctypes.c_void_p) if a is not None else None

    def _arr(self, x, cols, what, rows=None):
        """x as a C-contiguous (B, cols) array of the env's dtype (no copy when it is one already)."""
        if hasattr(x, "detach"):  # a torch tensor
            x = x.detach().cpu().numpy()
        a = np.ascontiguousarray(x, dtype=self.dtype)
        want = max(cols, 1)
        if a.ndim != 2 or a.shape[1] != want or a.shape[0] < 1 or (rows is not None and a.shape[0] != rows):
            raise ValueError("%s: expected shape (%s, %d), got %s" % (what, rows if rows is not None else "B", want,
                                                                       tuple(a.shape)))
        return a

    def _aux(self, aux, B):
        if aux is None:
            if self.aux_dim:
                raise ValueError("aux: the game has episode constants (%d columns): pass reset()'s aux" % self.aux_dim)
            return np.zeros((B, 1), self.dtype)
        return self._arr(aux, self.aux_dim, "aux", B)

    def _check(self, rc, e):
        return _lib.check(rc, e)

    @staticmethod
    def _rows(batch):
        if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or not 1 <= batch <= 1 << 20:
            raise ValueError("batch: expected an integer 1 to %d, got %r" % (1 << 20, batch))
        return int(batch)

    @staticmethod
    def _seed(seed):
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 1 << 64:
            raise ValueError("seed: expected an integer 0 to 2^64-1, got %r" % (seed,))
        return int(seed)

    def reset(self, batch=None, seed=None):
        """B initial states drawn by the game's reset from seed (the config's seed by default), as
        `difgames eval` draws them: (state (B, state_dim), aux (B, max(aux_dim, 1)))."""
        B = self._rows(self.batch if batch is None else batch)
        s = np.empty((B, self.state_dim), self.dtype)
        a = np.zeros((B, max(self.aux_dim, 1)), self.dtype)
        e = _lib.err()
        self._check(self._api.flat_reset(self._h, self._seed(self.seed if seed is None else seed), B, self._ptr(s),
                                         self._ptr(a), ctypes.byref(e)), e)
        return s, a

    def observe(self, state, aux=None):
        """The players' observations: obs (B, obs_dim), or for two players (obs, obs2)."""
        s = self._arr(state, self.state_dim, "state")
        B = s.shape[0]
        a = self._aux(aux, B)
        o = np.empty((B, self.obs_dim), self.dtype)
        o2 = np.empty((B, self.obs2_dim), self.dtype) if self.nplayers > 1 else None
        e = _lib.err()
        self._check(self._api.flat_observe(self._h, B, self._ptr(s), self._ptr(a), self._ptr(o), self._ptr(o2),
                                           ctypes.byref(e)), e)
        return (o, o2) if self.nplayers > 1 else o

    def step(self, state, action, aux=None):
        """The next states (B, state_dim) from state with action (B, act_dim [+ act2_dim]: both players'
        columns side by side), each in [-1, 1]."""
        s = self._arr(state, self.state_dim, "state")
        B = s.shape[0]
        u = self._arr(action, self.act_dim + self.act2_dim, "action", B)
        a = self._aux(aux, B)
        n = np.empty((B, self.state_dim), self.dtype)
        e = _lib.err()
        self._check(self._api.flat_step(self._h, B, self._ptr(s), self._ptr(a), self._ptr(u), self._ptr(n),
                                        ctypes.byref(e)), e)
        return n

    def step_cost(self, state, action, aux=None, t=1):
        """Step t (1..horizon) of each row on its own: (next states (B, state_dim), costs (B,)), a row's
        cost its weighted step cost (with H times the terminal cost at t = horizon): the mean over
        rows of the costs summed over t = 1..H, divided by H, is the episode loss."""
        s = self._arr(state, self.state_dim, "state")
        B = s.shape[0]
        u = self._arr(action, self.act_dim + self.act2_dim, "action", B)
        a = self._aux(aux, B)
        if isinstance(t, bool) or not isinstance(t, (int, np.integer)):
            raise TypeError("t: expected an integer step")
        n = np.empty((B, self.state_dim), self.dtype)
        c = np.empty(B)
        e = _lib.err()
        self._check(self._api.flat_step_cost(self._h, B, int(t), self._ptr(s), self._ptr(a), self._ptr(u),
                                             self._ptr(n), self._ptr(c), ctypes.byref(e)), e)
        return n, c

    # ---------------------------------------------------------------- parameters

    def _unflat(self, flat):
        """name -> a view of flat (the checkpoint's shapes)."""
        return {n: flat[o:o + int(np.prod(s, dtype=np.int64))].reshape(s)
                for n, s, o in zip(self.param_names, self.param_shapes, self._offsets)}

    def flatten(self, params):
        """params (name -> array or tensor, the checkpoint's names and shapes) as one flat array."""
        if not isinstance(params, dict):
            raise TypeError("params: expected a dict name -> array, got %s" % type(params).__name__)
        unknown = sorted(set(params) - set(self.param_names))
        missing = [n for n in self.param_names if n not in params]
        if unknown or missing:
            raise KeyError("params: %s%s%s (the policy's: %s)" % (
                "unknown " + ", ".join(map(str, unknown)) if unknown else "", "; " if unknown and missing else "",
                "missing " + ", ".join(missing) if missing else "", ", ".join(self.param_names)))
        flat = np.empty(self.nparams, self.dtype)
        for n, s, o in zip(self.param_names, self.param_shapes, self._offsets):
            v = params[n]
            if hasattr(v, "detach"):
                v = v.detach().cpu().numpy()
            v = np.asarray(v)
            if tuple(v.shape) != s:
                raise ValueError("params[%r]: expected shape %s, got %s" % (n, s, tuple(v.shape)))
            if v.dtype.kind not in "fiu":
                raise TypeError("params[%r]: expected numbers, got dtype %s" % (n, v.dtype))
            flat[o:o + v.size] = v.ravel()
        return flat

    def init_params(self, seed=None):
        """The policy's initial parameters as `difgames train` draws them from seed (the config's by
        default): a dict name -> numpy array, the checkpoint's names ("net.0.weight", ...)."""
        flat = np.empty(self.nparams, self.dtype)
        e = _lib.err()
        self._check(self._api.flat_init(self._h, self._seed(self.seed if seed is None else seed), self._ptr(flat), 0,
                                        0, None, None, ctypes.byref(e)), e)
        return self._unflat(flat)

    def trainer_start(self, seed=None, epochs=1, batch=None):
        """What `difgames train` starts from with seed: (params, states (epochs, B, state_dim), aux
        (epochs, B, max(aux_dim, 1))), the initial parameters and the batches of its first epochs
        (train.fixed_batch: the first is every epoch's)."""
        B = self._rows(self.batch if batch is None else batch)
        if isinstance(epochs, bool) or not isinstance(epochs, (int, np.integer)) or not 0 <= epochs <= 1 << 20:
            raise ValueError("epochs: expected an integer 0 to %d, got %r" % (1 << 20, epochs))
        flat = np.empty(self.nparams, self.dtype)
        s = np.empty((epochs, B, self.state_dim), self.dtype)
        a = np.zeros((epochs, B, max(self.aux_dim, 1)), self.dtype)
        e = _lib.err()
        self._check(self._api.flat_init(self._h, self._seed(self.seed if seed is None else seed), self._ptr(flat),
                                        int(epochs), B, self._ptr(s), self._ptr(a), ctypes.byref(e)), e)
        return self._unflat(flat), s, a

    def load(self, checkpoint):
        """The parameters of a checkpoint (final.safetensors, ...) as a dict name -> numpy array."""
        flat = np.empty(self.nparams, self.dtype)
        e = _lib.err()
        self._check(self._api.flat_load(self._h, _lib.path_bytes(checkpoint, "checkpoint"), self._ptr(flat),
                                        ctypes.byref(e)), e)
        return self._unflat(flat)

    def save(self, path, params):
        """params as a checkpoint at path (safetensors, atomic; the game and config in its metadata);
        its folder is made when missing, as a training run's."""
        flat = self.flatten(params)
        folder = os.path.dirname(os.fspath(path))
        if folder and not os.path.isdir(folder):
            try:
                os.makedirs(folder, exist_ok=True)
            except (OSError, ValueError) as exc:
                raise Error("%s: cannot make its folder: %s" % (path, exc.strerror or exc), "io") from None
        e = _lib.err()
        self._check(self._api.flat_save(self._h, _lib.path_bytes(path), self._ptr(flat), ctypes.byref(e)), e)

    # ---------------------------------------------------------------- episodes

    def _init(self, init, seed, batch):
        if init is None:
            return self.reset(batch, seed)
        if not isinstance(init, (tuple, list)) or len(init) != 2:
            raise TypeError("init: expected None or (state, aux)")
        s = self._arr(init[0], self.state_dim, "init state")
        return s, self._aux(init[1], s.shape[0])

    def episode(self, flat, state, aux, backward=False, scale=None, traj=False):
        """One episode from flat parameters (DG_FLAT_TOTAL values) as the trainer plays it: a dict with
        loss (float), terms (nterms), metrics, grad (d loss / d flat, with backward) and traj
        ((H + 1, B, state_dim), with traj)."""
        flat = np.ascontiguousarray(flat, dtype=self.dtype)
        if flat.shape != (self.nparams,):
            raise ValueError("params: expected %d values, got shape %s" % (self.nparams, flat.shape))
        s = self._arr(state, self.state_dim, "state")
        B = s.shape[0]
        a = self._aux(aux, B)
        loss = ctypes.c_double()
        terms = np.zeros(max(len(self.term_names), 1), self.dtype)
        metrics = np.zeros(max(len(self.metric_names), 1), np.float64)
        grad = np.empty(self.nparams, self.dtype) if backward else None
        tr = np.empty((self.horizon + 1, B, self.state_dim), self.dtype) if traj else None
        sc = None
        if scale is not None:
            sc = np.ascontiguousarray(scale, dtype=np.float64)
            if sc.shape != (len(self.term_names),):
                raise ValueError("scale: expected %d values" % len(self.term_names))
        e = _lib.err()
        self._check(self._api.flat_episode(self._h, self._ptr(flat), self._ptr(s), self._ptr(a), B, int(backward),
                                           ctypes.byref(loss), self._ptr(terms), self._ptr(grad), self._ptr(metrics),
                                           self._ptr(tr), self._ptr(sc), ctypes.byref(e)), e)
        return {"loss": loss.value, "terms": terms[:len(self.term_names)], "metrics": metrics[:len(self.metric_names)],
                "grad": grad, "traj": tr}

    def rollout(self, params, init=None, seed=None, batch=None):
        """A batched episode of the policy params (a dict, the checkpoint's names) from init ((state,
        aux); None: reset(batch, seed)): a dict with loss, terms and metrics (name -> float) and traj
        (H + 1, B, state_dim), the states of every step."""
        s, a = self._init(init, seed, batch)
        r = self.episode(self.flatten(params), s, a, traj=True)
        return {"loss": r["loss"], "terms": dict(zip(self.term_names, map(float, r["terms"]))),
                "metrics": dict(zip(self.metric_names, map(float, r["metrics"]))), "traj": r["traj"]}
