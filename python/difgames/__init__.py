"""difgames from Python: the C library's games, training, gradients and HJI solver on numpy arrays
and PyTorch tensors (docs/python.md).

    import difgames as dg
    env = dg.Env("configs/reach.yaml", precision="f64", horizon=10)
    s, aux = env.reset(batch=64, seed=0)
    params = env.init_params(seed=0)
    loss = dg.torch.episode_loss(env, params, init=None, seed=0)
    result = dg.train("configs/reach.yaml", out="runs/x", epochs=100)

A thin layer: every number comes from libdifgames.so (ctypes, include/difgames/flat.h); a library
error is raised as difgames.Error with the library's one-line message.
"""
from ._lib import Error
from .env import Env, config_keys
from .run import train, eval, certify, state_dict, load_state_dict
from .parallel import ParallelEnv
from . import hji

__all__ = ["Error", "Env", "config_keys", "train", "eval", "certify", "state_dict", "load_state_dict",
           "ParallelEnv", "hji", "torch"]
__version__ = "0.1.0"


def __getattr__(name):
    # dg.torch imports PyTorch (seconds) only when used
    if name == "torch":
        import importlib
        mod = importlib.import_module(".torch", __name__)
        globals()["torch"] = mod
        return mod
    raise AttributeError("module 'difgames' has no attribute %r" % name)
