"""dg.hji.load and Value.filter (python/difgames/hji.py; tier e2e): a value file of `difgames hji solve`
and a network of `difgames hji learn` read from Python as a grid solved in Python is, and the library's
safety filters (switch and qp) checked against air3d's own dynamics written here."""
import json
import os
import subprocess

from pyutil import cfg, need, raises, run, tmpdir, write

need("numpy")
import numpy as np  # noqa: E402

import difgames as dg  # noqa: E402

BUILD = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(dg.__file__))))
CLI = os.path.join(BUILD, "difgames")
D = tmpdir()
with open(cfg("hji/air3d.yaml")) as _f:
    AIR = write(os.path.join(D, "air3d.yaml"), _f.read().replace("n: [51, 40, 50]", "n: [27, 21, 24]")
                .replace("t_end: 2.8", "t_end: 1.0").replace("accuracy: veryHigh", "accuracy: medium"))


def command(*args):
    r = subprocess.run([CLI] + list(args), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r


def air3d_xdot(x, a, b):
    """air3d's dynamics (docs: configs/hji/air3d.yaml), v_a = v_b = 5: the evader turns at a, the pursuer
    at b."""
    px, py, psi = x[:, 0], x[:, 1], x[:, 2]
    return np.stack([-5 + 5 * np.cos(psi) + a * py, 5 * np.sin(psi) - a * px, b - a], axis=1)


def states(V, n, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(V.lo, V.hi, (n, V.ndim))


def test_value_file():
    V = dg.hji.solve(AIR)
    command("hji", "solve", "--config", AIR, "--out", F)
    W = dg.hji.load(F)  # the problem from the config the file stores
    assert W.source == "file" and V.source == "solved" and W.shape == V.shape and W.t_end == V.t_end
    assert np.array_equal(W.grid, V.grid), np.abs(W.grid - V.grid).max()
    x = states(V, 200, 1)
    assert np.array_equal(W.value(x), V.value(x)) and np.array_equal(W.control(x), V.control(x))
    W2 = dg.hji.load(F, config=AIR)   # checked against a config given
    assert np.array_equal(W2.grid, W.grid)
    other = write(os.path.join(D, "other.yaml"), open(AIR).read().replace("n: [27, 21, 24]", "n: [27, 21, 25]"))
    raises(dg.Error, dg.hji.load, F, config=other, contains="grid")
    raises(dg.Error, dg.hji.load, os.path.join(D, "none.safetensors"), contains="none.safetensors")
    raises(ValueError, dg.hji.load, F, t_end=2)


def test_filters():
    V = dg.hji.solve(AIR)
    assert V.safe_player == "u" and V.u_name  # the evader keeps V high
    x = states(V, 400, 2)
    v = V.value(x)
    nominal = np.random.default_rng(3).uniform(-1, 1, (len(x), V.nu))
    # switch: the nominal input where V > margin, the value's optimal input where V <= margin
    out, ch = V.filter(x, nominal, mode="switch", margin=0.5, changed=True)
    assert np.array_equal(ch, v <= 0.5) and ch.any() and not ch.all()
    assert np.array_equal(out[~ch], nominal[~ch]) and np.array_equal(out[ch], V.control(x[ch]))
    # qp: where the nominal meets grad V . f >= -gamma V it stays; elsewhere the nearest input that does,
    # or where none in [-1, 1] does, the best one (the optimal control)
    gamma = 2.0
    out, ch = V.filter(x, nominal, mode="qp", gamma=gamma, changed=True)
    g, b = V.grad(x), V.disturbance(x)[:, 0]
    lhs = lambda a: np.sum(g * air3d_xdot(x, a, b), axis=1) + gamma * v  # noqa: E731
    assert (lhs(nominal[:, 0])[~ch] >= -1e-9).all() and np.array_equal(out[~ch], nominal[~ch])
    assert ch.any() and (lhs(nominal[:, 0])[ch] < 0).all()
    best = V.control(x)[:, 0]
    feas = lhs(best) >= 0
    assert np.allclose(lhs(out[:, 0])[ch & feas], 0, atol=1e-9)   # on the constraint: the nearest point
    assert np.array_equal(out[ch & ~feas, 0], best[ch & ~feas])
    assert (np.abs(out) <= 1 + 1e-12).all()
    raises(ValueError, V.filter, x, nominal, mode="cbf")
    raises(dg.Error, V.filter, x, nominal, mode="qp", gamma=-1, contains="gamma")
    raises(dg.Error, V.filter, x, np.full_like(nominal, np.nan), contains="nominal")
    # pursuit2d: its maximiser (the evader, d) moves in a disc, not a box: no filter
    P = dg.hji.solve(cfg("hji/pursuit2d.yaml"), grid__n=[21, 21], accuracy="medium", t_end=0.5)
    assert P.safe_player is None
    raises(dg.Error, P.filter, [[1.5, 0.0]], [[0.0, 0.0]], contains="no player to filter for")


F = os.path.join(D, "V.safetensors")


def test_network():
    for prec in ("f32", "f64"):
        learn = write(os.path.join(D, "learn_%s.yaml" % prec), open(AIR).read().split("\nlearn:")[0] +
                      "\nlearn: {hidden: [32, 32], points: 512, iterations: 60, pretrain: 10, curriculum: 30, "
                      "lr: 0.001, seed: 1, threads: 1, precision: %s}\n" % prec)
        run_dir = os.path.join(D, "nn_" + prec)
        command("hji", "learn", "--config", learn, "--out", run_dir, "--quiet")
        net = os.path.join(run_dir, "value.safetensors")
        N = dg.hji.load(net, config=learn)
        assert N.source == "network" and N.t_end == 1.0 and N.shape == (27, 21, 24)
        # its grid is `hji tabulate`'s, bit for bit (the same copy, the same batch evaluation)
        T = os.path.join(D, "T_%s.safetensors" % prec)
        command("hji", "tabulate", "--value", net, "--config", learn, "--out", T)
        assert np.array_equal(N.grid, dg.hji.load(T).grid)
        x = states(N, 50, 4)
        v, g = N.value(x), N.grad(x)
        # the gradient is the network's own: central differences of value()
        h = 1e-4 if prec == "f64" else 1e-2
        for k in range(3):
            e = np.zeros(3)
            e[k] = h
            fd = (N.value(x + e) - N.value(x - e)) / (2 * h)
            assert np.allclose(fd, g[:, k], rtol=1e-3 if prec == "f64" else 5e-2, atol=1e-4 if prec == "f64" else 5e-2)
        out = N.filter(x, np.zeros((50, 1)), mode="qp")
        assert out.shape == (50, 1) and np.isfinite(out).all() and np.isfinite(v).all()
        # certify --sampling in the library: the command's JSON line, the same numbers
        opts = dict(epsilon=0.05, beta=0.001, failures=4, rounds=2, dt=0.02, coverage_samples=2000, seed=3)
        got = dg.certify(learn, value=net, grid=F if os.path.exists(F) else None, **opts)
        cli = ["--sampling", "--config", learn, "--value", net] + (["--grid", F] if os.path.exists(F) else [])
        for k, v in opts.items():
            cli += ["--" + k.replace("_", "-"), str(v)]
        ref = json.loads(command("certify", *cli).stdout.strip().splitlines()[-1])
        got.pop("seconds"), ref.pop("seconds")
        assert got == ref and got["N"] > 0, (got, ref)
    raises(dg.Error, dg.certify, learn, value=net, tol=0.1, contains="not with tol")
    raises(dg.Error, dg.certify, learn, value=net, epsilon=2, contains="epsilon")
    raises(ValueError, dg.certify, learn, value=net, checkpoint=net)
    raises(dg.Error, dg.hji.load, net, contains="config")
    raises(dg.Error, dg.hji.load, net, config=cfg("hji/pursuit2d.yaml"))


run([test_value_file, test_filters, test_network])
