"""dg.torch's autograd.Function (python/difgames/torch.py; tier e2e): torch.autograd.gradcheck in f64,
repeated backward, forward against the numpy rollout, gradients of the terms, and a plain
torch.optim.Adam loop over it against `dg.train` (the command's trainer) for the same config and seed."""
import os

from pyutil import cfg, need, run, tmpdir, write

need("numpy", "torch")
import numpy as np  # noqa: E402
import torch  # noqa: E402

import difgames as dg  # noqa: E402

SMALL = ("game: reach\nseed: 4\nenv: {horizon: 6}\npolicy: {hidden: [5]}\n"
         "train: {batch: 3, precision: f64, threads: 1}\n")


def small_env():
    return dg.Env(write(os.path.join(tmpdir(), "small.yaml"), SMALL))


def tensors(p):
    return {k: torch.tensor(v, requires_grad=True) for k, v in p.items()}


def test_gradcheck_f64():
    env = small_env()
    p = tensors(env.init_params(seed=1))
    names = env.param_names
    s, a = env.reset(3, 0)

    def f(*ps):
        return dg.torch.episode_loss(env, dict(zip(names, ps)), init=(s, a))
    assert torch.autograd.gradcheck(f, tuple(p[n] for n in names), eps=1e-6, atol=1e-7, rtol=1e-5)

    def g(*ps):  # the terms too: their gradients through the scaled-weight episode
        t = dg.torch.episode_terms(env, dict(zip(names, ps)), init=(s, a))
        return tuple(t[k] for k in env.term_names)
    assert torch.autograd.gradcheck(g, tuple(p[n] for n in names), eps=1e-6, atol=1e-7, rtol=1e-5)


def test_open_loop_actions():
    """open-loop actions (train.mode: open_loop): the plan's rows, before tanh, get the gradient"""
    env = dg.Env(write(os.path.join(tmpdir(), "ol.yaml"), SMALL), train__mode="open_loop")
    assert env.param_names == ["plan"]
    plan = torch.zeros(env.param_shapes[0], dtype=torch.float64).uniform_(-0.5, 0.5).requires_grad_()
    s, a = env.reset(3, 0)
    assert torch.autograd.gradcheck(lambda q: dg.torch.episode_loss(env, {"plan": q}, init=(s, a)), (plan,),
                                    eps=1e-6, atol=1e-7, rtol=1e-5)


def test_repeated_backward_and_forward():
    env = dg.Env(cfg("reach.yaml"), precision="f64", horizon=10)
    p = tensors(env.init_params(seed=0))
    loss = dg.torch.episode_loss(env, p, init=None, seed=0, batch=16)
    assert loss.dim() == 0 and loss.dtype == torch.float64
    r = env.rollout(env.init_params(seed=0), seed=0, batch=16)
    assert float(loss) == r["loss"]                            # forward: the library's episode
    terms = dg.torch.episode_terms(env, p, seed=0, batch=16)
    assert set(terms) == set(env.term_names)
    assert abs(float(sum(terms.values())) - float(loss)) < 1e-12
    loss.backward(retain_graph=True)
    g1 = {k: v.grad.clone() for k, v in p.items()}
    loss.backward(retain_graph=True)                           # accumulates: exactly twice
    assert all(torch.equal(p[k].grad, 2 * g1[k]) for k in p)
    for v in p.values():
        v.grad = None
    dg.torch.episode_loss(env, p, seed=0, batch=16).backward()  # a fresh forward: the same gradient
    assert all(torch.equal(p[k].grad, g1[k]) for k in p)
    (3 * loss).backward()                                      # upstream gradient scales it
    assert all(torch.allclose(p[k].grad, 4 * g1[k], rtol=1e-14, atol=0) for k in p)
    # numpy values are constants: no gradient, and the tensors' still flows
    q = dict(p)
    q["net.0.weight"] = env.init_params(seed=0)["net.0.weight"]
    for v in p.values():
        v.grad = None
    dg.torch.episode_loss(env, q, seed=0, batch=16).backward()
    assert p["net.0.weight"].grad is None and torch.equal(p["net.0.bias"].grad, g1["net.0.bias"])
    # float32 parameters on a float32 env
    env32 = dg.Env(cfg("reach.yaml"), horizon=10)
    p32 = {k: torch.tensor(v, requires_grad=True) for k, v in env32.init_params(seed=0).items()}
    l32 = dg.torch.episode_loss(env32, p32, seed=0, batch=16)
    l32.backward()
    assert l32.dtype == torch.float32 and abs(float(l32) - float(loss)) < 1e-4 * float(loss)


def test_adam_loop_matches_train():
    """A plain PyTorch loop (Adam, clip_grad_norm_) over the Function from what `difgames train` starts
    with (dg.Env.trainer_start: its parameters and epoch batches) ends where dg.train ends."""
    d = tmpdir()
    conf = write(os.path.join(d, "reach.yaml"), open(cfg("reach.yaml")).read())
    over = dict(precision="f64", horizon=20, epochs=30, train__batch=16, threads=1, snapshots=[])
    res = dg.train(conf, out=os.path.join(d, "run"), **over)
    assert res["epochs"] == 30 and res["game"] == "reach" and not res["interrupted"]
    env = dg.Env(conf, **over)
    p0, states, auxs = env.trainer_start(seed=env.seed, epochs=30, batch=16)
    p = tensors(p0)
    ps = [p[n] for n in env.param_names]
    f32 = lambda x: float(np.float32(x))  # noqa: E731 - the config's float keys are float32 (keys.h)
    opt = torch.optim.Adam(ps, lr=f32(1e-3), betas=(f32(0.9), f32(0.999)), eps=f32(1e-8))
    for k in range(30):
        opt.zero_grad()
        loss = dg.torch.episode_loss(env, p, init=(states[k], auxs[k]))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(ps, 1.0)
        opt.step()
    final = env.load(os.path.join(d, "run", "final.safetensors"))
    worst = max(float(np.max(np.abs(p[k].detach().numpy() - final[k]))) for k in p)
    scale = max(float(np.max(np.abs(final[k]))) for k in p)
    print("Adam loop vs dg.train after 30 epochs (f64): max |param difference| %.3g (params up to %.3g); "
          "last loss %.12g vs %.12g" % (worst, scale, float(loss), res["final_loss"]))
    assert worst < 1e-12, worst  # measured: 3.3e-16


run([test_gradcheck_f64, test_open_loop_actions, test_repeated_backward_and_forward, test_adam_loop_matches_train])
