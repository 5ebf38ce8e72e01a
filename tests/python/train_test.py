"""dg.train and dg.eval against the command (python/difgames/run.py; tier e2e): the same JSON and the
same files as `difgames train` / `difgames eval` for the same config, the progress callback, a callback
that raises or interrupts, and checkpoints through a torch state_dict."""
import csv
import json
import os
import subprocess
import sys

from pyutil import cfg, need, need_case, raises, run, tmpdir, write

need("numpy")
import numpy as np  # noqa: E402

import difgames as dg  # noqa: E402

BUILD = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(dg.__file__))))  # build/python/difgames/ -> build
CLI = os.path.join(BUILD, "difgames")
OVER = dict(epochs=12, horizon=15, train__batch=16)


def command(*args):
    out = subprocess.run([CLI] + list(args), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def metrics(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r.pop("ms", None)  # wall time: the one column that differs
    return rows


def test_train_as_command():
    d = tmpdir()
    conf = write(os.path.join(d, "reach.yaml"), open(cfg("reach.yaml")).read())
    seen = []
    res = dg.train(conf, out=os.path.join(d, "py"), progress=seen.append, **OVER)
    ref = command("train", "--config", conf, "--out", os.path.join(d, "cli"), "--epochs", "12", "--horizon", "15",
                  "--batch", "16", "--quiet")
    assert list(res) == list(ref), (list(res), list(ref))    # the same keys, in the same order
    for k in ("game", "source", "epochs", "final_loss", "interrupted"):
        assert res[k] == ref[k], (k, res[k], ref[k])
    assert [s["epoch"] for s in seen] == list(range(1, 13)) and float("%.9g" % seen[-1]["loss"]) == res["final_loss"]
    assert set(seen[0]["terms"]) == {"goal", "collision", "energy"}
    for f in ("final.safetensors", "resume.safetensors", "loss.png", "metrics.csv"):
        assert os.path.exists(os.path.join(d, "py", f)), f
    assert metrics(os.path.join(d, "py", "metrics.csv")) == metrics(os.path.join(d, "cli", "metrics.csv"))
    env = dg.Env(conf, **OVER)
    a, b = env.load(os.path.join(d, "py", "final.safetensors")), env.load(os.path.join(d, "cli", "final.safetensors"))
    assert all(np.array_equal(a[k], b[k]) for k in a)
    # eval: the command's numbers
    ev = dg.eval(conf, os.path.join(d, "py", "final.safetensors"), **OVER)
    ref = command("eval", "--config", conf, "--ckpt", os.path.join(d, "py", "final.safetensors"),
                  "--horizon", "15", "--batch", "16")
    for k in ref:
        assert k in ev and (ev[k] == ref[k] or abs(ev[k] - ref[k]) <= 1e-7 * abs(ref[k])), (k, ev.get(k), ref[k])


def test_train_default_out_and_f64():
    d = tmpdir()
    os.makedirs(os.path.join(d, "configs"))
    conf = write(os.path.join(d, "configs", "tiny.yaml"), "game: reach\nenv: {horizon: 5}\ntrain: {batch: 4}\n")
    cwd = os.getcwd()
    os.chdir(d)
    try:
        res = dg.train("configs/tiny.yaml", epochs=2, precision="f64")
    finally:
        os.chdir(cwd)
    assert res["epochs"] == 2 and os.path.exists(os.path.join(d, "runs", "tiny", "final.safetensors"))
    del conf


def test_callback_stops():
    d = tmpdir()
    conf = write(os.path.join(d, "reach.yaml"), open(cfg("reach.yaml")).read())

    def boom(info):
        if info["epoch"] == 3:
            raise ValueError("stop here")
    raises(ValueError, dg.train, conf, out=os.path.join(d, "a"), progress=boom, contains="stop here", **OVER)
    assert os.path.exists(os.path.join(d, "a", "final.safetensors"))   # what was done is saved

    def ctrl_c(info):
        if info["epoch"] == 4:
            raise KeyboardInterrupt
    res = dg.train(conf, out=os.path.join(d, "b"), progress=ctrl_c, **OVER)
    assert res["interrupted"] and res["epochs"] == 4, res


def test_train_refuses():
    d = tmpdir()
    conf = write(os.path.join(d, "reach.yaml"), open(cfg("reach.yaml")).read())
    raises(dg.Error, dg.train, conf, out=os.path.join(d, "x"), epochs=0, contains="train.epochs")
    write(os.path.join(d, "file"), "x")
    raises(dg.Error, dg.train, conf, out=os.path.join(d, "file"), **OVER)
    raises(KeyError, dg.train, conf, out=os.path.join(d, "y"), epoch=3, contains="epochs")
    raises(dg.Error, dg.eval, conf, os.path.join(d, "missing.safetensors"))
    os.makedirs(os.path.join(d, "o"))
    inside = write(os.path.join(d, "o", "metrics.csv"), open(conf).read())
    raises(dg.Error, dg.train, inside, out=os.path.join(d, "o"), contains="outputs", **OVER)
    assert open(inside).read() == open(conf).read()


def test_state_dict_round_trip():
    need_case("torch")
    import torch
    d = tmpdir()
    env = dg.Env(cfg("reach.yaml"), horizon=10)
    p = env.init_params(seed=2)
    net = torch.nn.Sequential(torch.nn.Linear(env.obs_dim, 64), torch.nn.Tanh(), torch.nn.Linear(64, 64),
                              torch.nn.Tanh(), torch.nn.Linear(64, env.act_dim), torch.nn.Tanh())
    module = torch.nn.Module()
    module.net = net
    module.load_state_dict(dg.state_dict(p))                 # the checkpoint's names, unchanged
    s, aux = env.reset(4, 0)
    o = torch.from_numpy(env.observe(s, aux))
    with torch.no_grad():
        for prm in module.parameters():
            prm.mul_(0.5)
    q = dg.load_state_dict(env, module.state_dict())
    path = os.path.join(d, "half.safetensors")
    env.save(path, q)
    back = env.load(path)
    assert all(np.array_equal(back[k], p[k] * np.float32(0.5)) for k in p)
    ref = command("eval", "--config", cfg("reach.yaml"), "--ckpt", path, "--horizon", "10", "--batch", "4")
    assert abs(ref["loss"] - env.rollout(back, seed=0, batch=4)["loss"]) <= 1e-6 * ref["loss"]
    del o
    raises(KeyError, dg.load_state_dict, env, {"net.0.weight": torch.zeros(64, env.obs_dim)})


def timeless(r):
    """A certify JSON without its wall times (seconds_*, exploit_seconds, the refinement's seconds)."""
    r = {k: v for k, v in r.items() if "seconds" not in k}
    for g in r.get("refinement", []):
        g.pop("seconds", None)
    return r


def test_certify_in_library():
    """dg.certify is the library's (dg_flat_certify): the command's JSON for the same options, both
    paths, with no command to run (DIFGAMES_COMMAND points nowhere)."""
    d = tmpdir()
    conf = write(os.path.join(d, "ds.yaml"), "game: duel_simple\nseed: 0\nenv: {dt: 0.1, horizon: 10, distance: [0.4, 0.8]}\n"
                 "policy: {hidden: [16]}\ntrain: {batch: 32, epochs: 20, snapshots: [], exploit_every: 0}\n")
    dg.train(conf, out=os.path.join(d, "ds"))
    ck = os.path.join(d, "ds", "final.safetensors")
    opts = ["--episodes", "6", "--nodes", "9", "--max-grids", "3", "--plan-iters", "20", "--bptt-epochs", "2",
            "--tol", "0.5", "--seed", "3"]
    ref = command("certify", "--config", conf, "--ckpt", ck, *opts)
    hji = os.path.join(d, "ds_time.yaml")
    with open(cfg("hji/duel_simple_time.yaml")) as f:
        write(hji, f.read().replace("n: [81, 81]", "n: [21, 21]").replace("tol: 1.0e-6", "tol: 1.0e-3"))
    ref_hji = command("certify", "--config", conf, "--ckpt", ck, "--hji", hji, "--episodes", "8", "--exploit-own", "3")
    old = os.environ.get("DIFGAMES_COMMAND")
    os.environ["DIFGAMES_COMMAND"] = "/nonexistent/difgames"  # the package ran this once: no more
    try:
        got = dg.certify(conf, ck, episodes=6, nodes=9, max_grids=3, plan_iters=20, bptt_epochs=2, tol=0.5, seed=3)
        got_hji = dg.certify(conf, ck, hji=hji, episodes=8, exploit_own=3)
        nb = dg.certify(conf, ck, episodes=4, nodes=9, max_grids=3, no_bounds=True, box=[-2, 2, -2, 2])
    finally:
        if old is None:
            del os.environ["DIFGAMES_COMMAND"]
        else:
            os.environ["DIFGAMES_COMMAND"] = old
    assert timeless(got) == timeless(ref), (got, ref)
    assert timeless(got_hji) == timeless(ref_hji) and "exploit_pursuer" in got_hji, (got_hji, ref_hji)
    assert nb["episodes"] == 4 and "br_cost_pursuer" not in nb
    raises(dg.Error, dg.certify, conf, ck, episodez=4, contains="unknown option 'episodez'")
    raises(dg.Error, dg.certify, conf, ck, episodes=0, contains="episodes")
    raises(dg.Error, dg.certify, conf, ck, box=[1, 0, 0, 1], nodes=9, contains="box")
    raises(dg.Error, dg.certify, conf, ck, hji=hji, tol=0.1, contains="not with --hji")
    raises(dg.Error, dg.certify, conf, os.path.join(d, "none.safetensors"), contains="none.safetensors")
    raises(TypeError, dg.certify, conf, ck, episodes="4")


def test_eval_extras():
    """dg.eval as `difgames eval`: a zero-sum pair's exploitability, a general-sum game's costs and
    NashConv terms (with and without them), the safety filter with an adversary, a noisy game's draws
    and the gradient file."""
    d = tmpdir()
    ds = write(os.path.join(d, "ds.yaml"), "game: duel_simple\nseed: 0\nenv: {dt: 0.1, horizon: 10}\n"
               "policy: {hidden: [8]}\ntrain: {batch: 8, epochs: 5, snapshots: [], exploit_every: 0, exploit_epochs: 4}\n")
    dg.train(ds, out=os.path.join(d, "ds"))
    ck = os.path.join(d, "ds", "final.safetensors")
    ref = command("eval", "--config", ds, "--ckpt", ck)
    got = dg.eval(ds, ck)
    assert got == ref and "exploit_pursuer" in got, (got, ref)
    assert dg.eval(ds, ck, exploit=False) == command("eval", "--config", ds, "--ckpt", ck, "--no-exploit")
    fw = cfg("fishwar.yaml")
    fo = dict(horizon=20, train__batch=8, train__epochs=2, train__exploit_epochs=3)
    dg.train(fw, out=os.path.join(d, "fw"), **fo)
    fck = os.path.join(d, "fw", "final.safetensors")
    cli = ["--horizon", "20", "--batch", "8", "--exploit-epochs", "3"]
    ref = command("eval", "--config", fw, "--ckpt", fck, *cli)
    got = dg.eval(fw, fck, **fo)
    assert got == ref and "nash_conv" in got, (got, ref)
    ref = command("eval", "--config", fw, "--ckpt", fck, *cli, "--no-exploit")
    got = dg.eval(fw, fck, exploit=False, **fo)
    assert got == ref and "cost_" + sorted(k[5:] for k in got if k.startswith("cost_"))[0] in got, (got, ref)
    with open(cfg("hji/reach_wind_avoid.yaml")) as f:
        avoid = write(os.path.join(d, "avoid.yaml"), f.read().replace("n: [31, 31, 25, 25]", "n: [15, 15, 11, 11]"))
    V = os.path.join(d, "V.safetensors")
    r = subprocess.run([CLI, "hji", "solve", "--config", avoid, "--out", V, "--slices", "1"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rw = cfg("models/reach_wind.yaml")
    dg.train(rw, out=os.path.join(d, "rw"), epochs=20)
    rck = os.path.join(d, "rw", "final.safetensors")
    ref = command("eval", "--config", rw, "--ckpt", rck, "--seed", "1000", "--batch", "64", "--safety", V,
                  "--adversary", V)
    got = dg.eval(rw, rck, adversary=V, seed=1000, train__batch=64, safety__value=V)
    assert got == ref and got["safety"] == "switch" and "violations" in got, (got, ref)
    ref = command("eval", "--config", rw, "--ckpt", rck, "--seed", "1000", "--batch", "64", "--adversary", V)
    assert dg.eval(rw, rck, adversary=V, seed=1000, train__batch=64) == ref
    raises(dg.Error, dg.eval, rw, rck, safety__value=os.path.join(d, "none.safetensors"), contains="none.safetensors")
    # a noisy game's draws and their spread (--noise-draws), and the gradient file (--grad-out): the
    # command's JSON and the command's bytes
    mn = cfg("merton.yaml")
    mo = dict(horizon=20, train__batch=16, train__epochs=3)
    dg.train(mn, out=os.path.join(d, "mn"), **mo)
    mck = os.path.join(d, "mn", "final.safetensors")
    ref = command("eval", "--config", mn, "--ckpt", mck, "--horizon", "20", "--batch", "16", "--noise-draws", "4")
    got = dg.eval(mn, mck, noise_draws=4, **mo)
    assert got == ref and got["spread"]["draws"] == 4, (got, ref)
    g1, g2 = os.path.join(d, "g1.safetensors"), os.path.join(d, "g2.safetensors")
    ref = command("eval", "--config", rw, "--ckpt", rck, "--seed", "1000", "--grad-out", g1)
    got = dg.eval(rw, rck, seed=1000, grad_out=g2)
    assert got == ref and got["grad_norm"] > 0, (got, ref)
    with open(g1, "rb") as f1, open(g2, "rb") as f2:
        assert f1.read() == f2.read()
    raises(dg.Error, dg.eval, mn, mck, noise_draws=0, contains="noise draws")


run([test_train_as_command, test_train_default_out_and_f64, test_callback_stops, test_train_refuses,
     test_state_dict_round_trip, test_certify_in_library, test_eval_extras])
sys.exit(0)
