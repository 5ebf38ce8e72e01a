"""dg.train, dg.eval, dg.certify and checkpoints as torch state_dicts: the commands' outputs from the
library's own functions (dg_run_train through dg_flat_train; no command is run)."""
import ctypes
import os

import numpy as np

from . import _lib
from .env import Env

__all__ = ["train", "eval", "certify", "state_dict", "load_state_dict"]


_OUTPUTS = ("metrics.csv", "loss.png", "final.safetensors", "resume.safetensors")


def _g9(x):
    """A number as the command's JSON prints it (%.9g)."""
    return float("%.9g" % float(x))


def train(config, out=None, progress=None, **overrides):
    """Trains config (keyword overrides as Env's) into out (default runs/<config name>, as the command)
    and returns `difgames train`'s JSON as a dict: game, source, epochs, final_loss, seconds,
    interrupted. The same files as the command (metrics.csv, snapshots, final.safetensors,
    resume.safetensors, loss.png). progress(info) (may be None) is called after each epoch with a dict:
    epoch, epochs, loss, grad_norm, lr, ms, terms and metrics (name -> float); an exception in it (or
    Ctrl-C) stops the run after that epoch, its files still written, and is raised again (a
    KeyboardInterrupt returns the dict with interrupted True, as the command does)."""
    env = Env(config, **overrides)
    try:
        return _train(env, config, out, progress)
    finally:
        env.close()


def _train(env, config, out, progress):
    if out is None:
        out = _lib.run_dir(config)
    # the command's check: the config must not be one of the files the run writes (it would be replaced)
    for name in _OUTPUTS:
        if os.path.exists(config) and os.path.realpath(os.path.join(os.fspath(out), name)) == os.path.realpath(config):
            raise _lib.Error("%s: the config is one of the run's outputs (%s); give another out" % (config, name),
                             "argument")
    stop = ctypes.c_int(0)
    raised = []
    nt, nm = len(env.term_names), len(env.metric_names)

    def on_epoch(user, kind, epoch, v):
        if kind != 0 or progress is None or raised:
            return
        try:
            progress({"epoch": epoch, "epochs": env.epochs, "loss": v[0], "grad_norm": v[1], "lr": v[2], "ms": v[3],
                      "terms": {n: v[4 + i] for i, n in enumerate(env.term_names)},
                      "metrics": {n: v[4 + nt + i] for i, n in enumerate(env.metric_names)}})
        except BaseException as exc:  # noqa: B902 - stop the C loop, raise it once back in Python
            raised.append(exc)
            stop.value = 1

    cb = _lib.PROGRESS(on_epoch) if progress is not None else None
    res = (ctypes.c_double * 4)()
    e = _lib.err()
    rc = env._api.flat_train(env._h, _lib.path_bytes(out, "out"), cb, None, ctypes.byref(stop), res, ctypes.byref(e))
    interrupted = rc == 10  # DG_ERR_INTERRUPTED: stopped after an epoch, the files written
    if raised and not isinstance(raised[0], KeyboardInterrupt):
        raise raised[0]
    if rc != 0 and not interrupted:
        _lib.raise_err(e)
    del nm
    return {"game": env.game, "source": env.source, "epochs": int(res[0]), "final_loss": _g9(res[1]),
            "seconds": round(float(res[2]), 3), "interrupted": interrupted}


def eval(config, checkpoint, init=None, **overrides):  # noqa: A001 - the command's name
    """`difgames eval`'s JSON as a dict: one episode of the checkpoint's policy from init ((state, aux)
    arrays; None: train.batch states drawn from the config's seed, as the command): game, source,
    batch, horizon, loss, each term and each metric. (The command's exploitability of two-player games
    and its safety filter are not computed here.)"""
    with Env(config, **overrides) as env:
        params = env.load(checkpoint)
        s, a = env._init(init, None, None)
        r = env.episode(env.flatten(params), s, a, traj=False)
        out = {"game": env.game, "source": env.source, "batch": int(s.shape[0]), "horizon": env.horizon,
               "loss": _g9(r["loss"])}
        out.update({n: _g9(v) for n, v in zip(env.term_names, r["terms"])})
        out.update({n: _g9(v) for n, v in zip(env.metric_names, r["metrics"])})
        return out


def certify(config, checkpoint, *args, **kwargs):
    """`difgames certify CONFIG CHECKPOINT`'s JSON as a dict (see difgames.hji.certify)."""
    from . import hji
    return hji.certify(config, checkpoint, *args, **kwargs)


def state_dict(params):
    """params (name -> numpy) as a torch state_dict (an OrderedDict of tensors, the same names: a
    module whose Sequential is `net` loads it with load_state_dict unchanged)."""
    import collections
    import torch
    return collections.OrderedDict((k, torch.from_numpy(np.array(v))) for k, v in params.items())


def load_state_dict(env, sd):
    """A torch state_dict (or any name -> tensor mapping) as params for env: name -> numpy, checked
    against env's names and shapes."""
    return env._unflat(env.flatten(dict(sd)))
