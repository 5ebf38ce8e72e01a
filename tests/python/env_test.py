"""The package's Env on numpy (python/difgames/env.py; tier unit): import from the build tree, the
keyword-override rule, reset/observe/step, parameters and checkpoints, rollouts, and bad inputs that
raise difgames.Error or a Python error, never crash."""
import os
import sys

from pyutil import cfg, need, raises, run, tmpdir

need("numpy")
import numpy as np  # noqa: E402

import difgames as dg  # noqa: E402

REACH = cfg("reach.yaml")


def test_overrides():
    env = dg.Env(REACH, horizon=7, train__lr=0.01, seed=3)
    assert env.horizon == 7 and env.seed == 3
    assert dict(env.overrides)["train.lr"] == "0.01"
    assert env.precision == "f32" and env.dtype == np.float32
    e = raises(KeyError, dg.Env, REACH, lr=0.1)                  # train.lr and pg.lr
    assert "train__lr" in str(e) and "ambiguous" in str(e), str(e)
    raises(KeyError, dg.Env, REACH, horizn=5, contains="env.horizon")   # unknown: the near ones
    raises(KeyError, dg.Env, REACH, train__nope=5, contains="unknown")
    raises(dg.Error, dg.Env, REACH, horizon="abc", contains="env.horizon")  # the library's own message
    raises(dg.Error, dg.Env, REACH, horizon=0, contains="env.horizon")
    raises(TypeError, dg.Env, REACH, horizon=object())
    env64 = dg.Env(REACH, precision="f64", horizon=10)
    assert env64.precision == "f64" and env64.dtype == np.float64 and env64.horizon == 10


def test_errors_are_library_lines():
    e = raises(dg.Error, dg.Env, "/nonexistent/x.yaml")
    assert e.status == "io" and "/nonexistent/x.yaml" in str(e) and "\n" not in str(e)
    d = tmpdir()
    bad = os.path.join(d, "bad.yaml")
    with open(bad, "w") as f:
        f.write("game: reach\nenv: {dampng: 0.5}\n")
    raises(dg.Error, dg.Env, bad, contains="env.dampng")
    with open(bad, "wb") as f:
        f.write(b"\xff\xfe\x00garbage: [")
    raises(dg.Error, dg.Env, bad)
    raises(dg.Error, dg.Env, cfg("hji/air3d.yaml"), contains="hji")
    raises(TypeError, dg.Env, 42)
    raises(ValueError, dg.Env, "a\0b")


def test_hostile_files():
    """the command's hostile-input classes through Python: files that are not regular files (a FIFO
    must not hang, a device, a folder) as a config or a checkpoint, paths too long, huge values, an
    output that is an input: each raises difgames.Error (one line), nothing crashes or hangs"""
    d = tmpdir()
    fifo = os.path.join(d, "fifo.yaml")
    os.mkfifo(fifo)
    env = dg.Env(REACH, horizon=5)
    for bad in (fifo, "/dev/zero", d, "/" + "x" * 5000 + ".yaml"):
        e = raises(dg.Error, dg.Env, bad)
        assert "\n" not in str(e)
        raises(dg.Error, env.load, bad)
        raises(dg.Error, dg.hji.solve, bad)
    raises(dg.Error, dg.Env, REACH, horizon=10 ** 12)
    raises(dg.Error, dg.Env, REACH, train__batch=2 ** 31)
    raises(dg.Error, dg.Env, REACH, policy__hidden=[10 ** 9, 10 ** 9], contains="policy.hidden")
    raises(ValueError, dg.Env, REACH, game="reach\nx")
    big = dg.Env(REACH, horizon=100000)                    # an episode that cannot fit is refused
    s, aux = big.reset(batch=1 << 20, seed=0)
    flat = big.flatten(big.init_params(0))
    raises(dg.Error, big.episode, flat, s, aux, backward=True, contains="env.horizon")
    raises((dg.Error, MemoryError), big.rollout, big.init_params(0), init=(s, aux))
    p = env.init_params(0)
    raises(dg.Error, env.save, os.path.join(REACH, "no", "w.safetensors"), p)   # below a file
    env.save(os.path.join(d, "new", "dir", "w.safetensors"), p)                   # made, as a run's folder
    raises(dg.Error, env.save, d, p)                       # a folder
    raises(dg.Error, dg.train, REACH, out=fifo, epochs=1)
    raises(dg.Error, dg.train, REACH, out=REACH, epochs=1)  # a file, not a folder


def test_reset_observe_step():
    env = dg.Env(REACH)
    s, aux = env.reset(batch=5, seed=0)
    assert s.shape == (5, env.state_dim) and aux.shape == (5, env.aux_dim) and s.dtype == np.float32
    s2, _ = env.reset(batch=5, seed=0)
    assert np.array_equal(s, s2)                               # the same seed, the same states
    assert not np.array_equal(s, env.reset(batch=5, seed=1)[0])
    o = env.observe(s, aux)
    assert o.shape == (5, env.obs_dim) and np.isfinite(o).all()
    a = np.zeros((5, env.act_dim), np.float32)
    n = env.step(s, a, aux)
    assert n.shape == s.shape and not np.array_equal(n, env.step(s, a + 1, aux))
    assert np.array_equal(n, env.step(s.astype(np.float64), a, aux))   # converted once, same numbers
    assert np.array_equal(n, env.step(np.asfortranarray(s), a, aux))
    # bad shapes, dtypes and sizes raise
    raises(ValueError, env.step, s[:, :2], a, aux, contains="state")
    raises(ValueError, env.step, s, a[:3], aux, contains="action")
    raises(ValueError, env.step, s, a, aux[:, :1], contains="aux")
    raises(ValueError, env.step, s, a, None, contains="aux")
    raises(ValueError, env.step, s[0], a, aux)
    raises(ValueError, env.step, np.array([["x"] * 4]), a[:1], aux[:1])
    raises(ValueError, env.reset, batch=0)
    raises(ValueError, env.reset, batch=2 ** 40)
    raises(ValueError, env.reset, batch=2, seed=-1)
    # NaN states play on (no crash), as the library's step does
    assert np.isnan(env.step(s * np.nan, a, aux)).any()


def test_params_checkpoints_rollout():
    d = tmpdir()
    env = dg.Env(REACH, horizon=10)
    p = env.init_params(seed=0)
    assert list(p) == env.param_names and p["net.0.weight"].shape == (64, env.obs_dim)
    assert all(np.array_equal(p[k], env.init_params(seed=0)[k]) for k in p)
    path = os.path.join(d, "w.safetensors")
    env.save(path, p)
    q = env.load(path)
    assert all(np.array_equal(p[k], q[k]) for k in p)
    r = env.rollout(p, seed=0, batch=8)
    assert set(r["terms"]) == set(env.term_names) and np.isfinite(r["loss"])
    assert abs(sum(r["terms"].values()) - r["loss"]) < 1e-5 * abs(r["loss"]) + 1e-6
    assert r["traj"].shape == (11, 8, env.state_dim)
    s, aux = env.reset(8, 0)
    assert np.array_equal(r["traj"][0], s)
    assert env.rollout(p, init=(s, aux))["loss"] == r["loss"]
    bad = dict(p)
    del bad["net.0.bias"]
    raises(KeyError, env.rollout, bad, contains="net.0.bias")
    bad = dict(p, extra=np.zeros(3))
    raises(KeyError, env.rollout, bad, contains="extra")
    bad = dict(p, **{"net.0.bias": np.zeros(3)})
    raises(ValueError, env.rollout, bad, contains="net.0.bias")
    raises(dg.Error, env.load, os.path.join(d, "missing.safetensors"))
    with open(os.path.join(d, "junk.safetensors"), "wb") as f:
        f.write(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all")
    raises(dg.Error, env.load, os.path.join(d, "junk.safetensors"))
    # another game's checkpoint names the game
    chase = dg.Env(cfg("chase.yaml"))
    cpath = os.path.join(d, "chase.safetensors")
    chase.save(cpath, chase.init_params(0))
    raises(dg.Error, env.load, cpath, contains="chase")


def test_build_tree_import():
    # the package found its library in the build tree (python/CMakeLists.txt's _paths.py)
    from difgames import _paths
    assert os.path.exists(_paths.LIBRARY), _paths.LIBRARY
    assert os.path.dirname(dg.__file__) == os.path.dirname(_paths.__file__)


run([test_hostile_files, test_overrides, test_errors_are_library_lines, test_reset_observe_step, test_params_checkpoints_rollout,
     test_build_tree_import])
