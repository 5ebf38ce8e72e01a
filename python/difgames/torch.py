"""Gradients into PyTorch: a difgames episode as a torch.autograd.Function.

    loss = dg.torch.episode_loss(env, params, init=None, seed=0)   # 0-d tensor
    loss.backward()                                                # the library's BPTT

Forward plays one episode in the library from the policy parameters (a dict name -> tensor or numpy
array, the checkpoint's names; an open-loop env's "plan" rows are its actions before tanh) and the
initial states; backward is the library's backpropagation through time. Tensors get gradients,
numpy arrays are constants. The initial states get none (they are the game's draw or the caller's
data). The episode runs on the CPU in the env's precision (float32, or float64 with precision="f64").
"""
import numpy as np
import torch

__all__ = ["Episode", "episode", "episode_loss", "episode_terms"]


class Episode(torch.autograd.Function):
    """forward(env, state, aux, *params) -> (loss 0-d, terms (nterms,)); params in env.param_names order."""

    @staticmethod
    def forward(ctx, env, state, aux, *params):
        flat = np.concatenate([p.detach().cpu().numpy().astype(env.dtype, copy=False).ravel() for p in params])
        need = any(ctx.needs_input_grad[3:])
        r = env.episode(flat, state, aux, backward=need)
        ctx.env, ctx.state, ctx.aux, ctx.flat = env, state, aux, flat
        ctx.grad = r["grad"]
        ctx.meta = [(p.dtype, p.device, p.shape) for p in params]
        dt = params[0].dtype if params else torch.float64
        return (torch.tensor(r["loss"], dtype=dt), torch.from_numpy(np.array(r["terms"])).to(dt))

    @staticmethod
    def backward(ctx, gloss, gterms):
        env = ctx.env
        gl = float(gloss) if gloss is not None else 0.0
        gt = gterms.detach().cpu().numpy().astype(np.float64) if gterms is not None else None
        if gt is None or not gt.any():
            g = ctx.grad * gl if gl != 1.0 else ctx.grad
        else:  # d(gl loss + gt . terms) = d(sum_k (gl + gt_k) term_k): one episode with scaled weights
            g = env.episode(ctx.flat, ctx.state, ctx.aux, backward=True, scale=gl + gt)["grad"]
        out, o = [], 0
        for dt, dev, shape in ctx.meta:
            n = int(np.prod(shape, dtype=np.int64))
            out.append(torch.from_numpy(np.array(g[o:o + n]).reshape(tuple(shape))).to(dtype=dt, device=dev))
            o += n
        return (None, None, None) + tuple(out)


def _inputs(env, params, init, seed, batch):
    if not isinstance(params, dict):
        raise TypeError("params: expected a dict name -> tensor or array, got %s" % type(params).__name__)
    env.flatten(params)  # names and shapes checked (raises)
    s, a = env._init(init, seed, batch)
    ps = []
    for n in env.param_names:
        v = params[n]
        if not torch.is_tensor(v):
            v = torch.from_numpy(np.array(v, dtype=env.dtype))
        ps.append(v)
    return s, a, ps


def episode(env, params, init=None, seed=None, batch=None):
    """(loss, terms): the episode loss, a 0-d tensor, and a dict term -> 0-d tensor (the weighted terms,
    which add up to the loss). Both carry gradients to the tensors of params."""
    s, a, ps = _inputs(env, params, init, seed, batch)
    loss, terms = Episode.apply(env, s, a, *ps)
    return loss, {n: terms[i] for i, n in enumerate(env.term_names)}


def episode_loss(env, params, init=None, seed=None, batch=None):
    """The episode loss, a 0-d tensor. init None: env.reset(batch, seed), the same states for the same
    seed (seed None: the config's); else (state, aux) arrays."""
    return episode(env, params, init, seed, batch)[0]


def episode_terms(env, params, init=None, seed=None, batch=None):
    """The episode's weighted loss terms: a dict term -> 0-d tensor (they add up to episode_loss)."""
    return episode(env, params, init, seed, batch)[1]
