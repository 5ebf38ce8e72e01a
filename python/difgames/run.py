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


def eval(config, checkpoint, init=None, exploit=True, adversary=None, **overrides):  # noqa: A001 - the command's name
    """`difgames eval`'s JSON as a dict: one episode of the checkpoint's policy from init ((state, aux)
    arrays; None: train.batch states drawn from the config's seed, as the command): game, source,
    batch, horizon, loss, each term and each metric; a zero-sum pair's exploitability
    (exploit_pursuer, exploit_evader, exploit_epochs: dg_run_exploit) and a general-sum game's
    cost_<player>, nash_conv_<player> and nash_conv (dg_run_nash_conv) unless exploit is False (the
    command's --no-exploit; a general-sum game's costs stay); with safety__value (the command's
    --safety; safety__mode, ...) the action goes through that value's safety filter and adversary (a
    value file, --adversary) plays the game's adversarial input: safety, interventions, adversary,
    violations and min_target (dg_safety_eval). A noisy game plays one noise draw here (the
    command's --noise-draws and spread are not computed)."""
    with Env(config, **overrides) as env:
        params = env.load(checkpoint)
        s, a = env._init(init, None, None)
        flat = env.flatten(params)
        B = int(s.shape[0])
        mode = env._name("safety_mode")
        guarded = mode is not None or adversary is not None
        e = _lib.err()
        if guarded:
            loss, side = ctypes.c_double(), (ctypes.c_double * 3)()
            terms = (ctypes.c_double * max(1, len(env.term_names)))()
            mets = (ctypes.c_double * max(1, len(env.metric_names)))()
            adv = None if adversary is None else _lib.path_bytes(adversary, "adversary")
            _lib.check(env._api.flat_safety_eval(env._h, env._ptr(flat), env._ptr(s), env._ptr(a), B, adv,
                                                 ctypes.byref(loss), terms, mets, side, ctypes.byref(e)), e)
            r = {"loss": loss.value, "terms": list(terms), "metrics": list(mets)}
        else:
            r = env.episode(flat, s, a, traj=False)
        out = {"game": env.game, "source": env.source, "batch": B, "horizon": env.horizon, "loss": _num(r["loss"])}
        out.update({n: _num(v) for n, v in zip(env.term_names, r["terms"])})
        out.update({n: _num(v) for n, v in zip(env.metric_names, r["metrics"])})
        why = {n: env._name("metric_undefined", i) for i, n in enumerate(env.metric_names) if out[n] is None}
        why = {n: w for n, w in why.items() if w}  # a mean over no episode: null with its reason, as the command
        if why:
            out["undefined"] = why
        gs, n = bool(env.dims["general_sum"]), env.nplayers
        epochs = env.dims["exploit_epochs"]
        if (n == 2 and not gs and exploit) or gs:
            x = (ctypes.c_double * max(5, 2 * n))()
            # a general-sum game without the NashConv terms: its costs alone (best responses of 0 epochs)
            _lib.check(env._api.flat_exploit(env._h, env._ptr(flat), env._ptr(s), env._ptr(a), B,
                                             epochs if exploit else 0, x, ctypes.byref(e)), e)
            if not gs:
                out.update({"exploit_pursuer": _num(x[3]), "exploit_evader": _num(x[4]), "exploit_epochs": epochs})
            else:
                for i in range(n):
                    name = env._name("player", i)
                    out["cost_" + name] = _g9(x[i])
                    if exploit:
                        out["nash_conv_" + name] = _g9(x[n + i])
                if exploit:
                    out.update({"nash_conv": _g9(sum(x[n + i] for i in range(n))), "exploit_epochs": epochs})
        if mode is not None:
            out.update({"safety": mode, "interventions": _g9(side[0])})
        if adversary is not None:
            out["adversary"] = os.fspath(adversary)
        if guarded:
            out.update({"violations": int(side[1]), "min_target": _g9(side[2])})
        return out


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
