"""dg.train, dg.eval, dg.certify and checkpoints as torch state_dicts: the commands' outputs from the
library's own functions (dg_run_train through dg_flat_train; no command is run)."""
import ctypes
import json
import os

import numpy as np

from . import _lib
from .env import Env

__all__ = ["train", "eval", "certify", "state_dict", "load_state_dict"]


_OUTPUTS = ("metrics.csv", "loss.png", "final.safetensors", "resume.safetensors")


def _g9(x):
    """A number as the command's JSON prints it (%.9g)."""
    return float("%.9g" % float(x))


def _num(x):
    """A number as the command's JSON gives it: %.9g, None (null) where it is not finite."""
    x = float(x)
    return _g9(x) if np.isfinite(x) else None


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


def eval(config, checkpoint, init=None, exploit=True, adversary=None, grad_out=None, noise_draws=10,  # noqa: A001
         **overrides):
    """`difgames eval`'s JSON as a dict, computed by the library (dg_eval_run through dg_flat_eval_run; no
    command is run): one episode of the checkpoint's policy from init ((state, aux) arrays; None:
    train.batch states drawn from the config's seed, as the command): game, source, batch, horizon, loss,
    each term and each metric (a metric undefined by construction: None, its reason under "undefined");
    a zero-sum pair's exploitability (exploit_pursuer, exploit_evader, exploit_epochs) and a general-sum
    game's cost_<player>, nash_conv_<player> and nash_conv unless exploit is False (the command's
    --no-exploit); a noisy game's means over noise_draws draws and their "spread" (--noise-draws);
    grad_out a file for d loss / d parameter and grad_norm (--grad-out); with safety__value (--safety;
    safety__mode, ...) the action goes through that value's safety filter and adversary (a value file,
    --adversary) plays the game's adversarial input: safety, interventions, adversary, violations and
    min_target. An episode that diverged (a number not finite) returns its nulls, as the command prints
    them before its exit 1."""
    with Env(config, **overrides) as env:
        ck = _lib.path_bytes(checkpoint, "checkpoint")
        s = a = None
        B = 0
        if init is not None:
            s, a = env._init(init, None, None)
            B = int(s.shape[0])
        go = None if grad_out is None else _lib.path_bytes(grad_out, "grad_out")
        adv = None if adversary is None else _lib.path_bytes(adversary, "adversary")
        e, usage = _lib.err(), ctypes.c_int()
        out = env._api.flat_eval_run(env._h, ck, None if s is None else env._ptr(s), None if s is None else env._ptr(a),
                                     B, go, adv, int(noise_draws), 1 if exploit else 0, ctypes.byref(usage), None,
                                     ctypes.byref(e))
        if out is None:
            _lib.raise_err(e)
        return json.loads(out.decode())


def certify(config, checkpoint=None, *args, **kwargs):
    """`difgames certify`'s JSON as a dict: a checkpoint, or value= a network by sampling (see
    difgames.hji.certify)."""
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
