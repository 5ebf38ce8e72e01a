"""dg.hji (python/difgames/hji.py) and dg.ParallelEnv (parallel.py); tier unit: a grid value solved
from Python read at arrays of states, its grid a zero-copy view, and a
two-player game through the PettingZoo parallel-API conventions."""
import numpy as np

from pyutil import cfg, need, raises, run

need("numpy")
import difgames as dg  # noqa: E402


def test_solve_value():
    V = dg.hji.solve(cfg("hji/pursuit2d.yaml"), grid__n=[41, 41], accuracy="medium", t_end=0.5)
    assert V.shape == (41, 41) and V.ndim == 2 and V.t_end == 0.5 and V.game == "pursuit2d"
    assert V.grid.shape == (41, 41) and not V.grid.flags.writeable and not V.grid.flags.owndata
    # at the nodes value() is the grid's own number
    idx = [(0, 0), (20, 33), (40, 7)]
    x = np.array([[V.axes[0][i], V.axes[1][j]] for i, j in idx])
    assert np.allclose(V.value(x), [V.grid[i, j] for i, j in idx], rtol=0, atol=1e-12)
    # far from the pursuer: capture distance less what the pursuer closes in t_end
    assert abs(V.value([1.5, 0.0]) - (1.5 - 0.25 - 0.5 * 0.5)) < 0.05
    g = V.grad(np.array([[1.5, 0.0], [0.0, 1.2]]))
    assert g.shape == (2, 2) and g[0, 0] > 0.9 and g[1, 1] > 0.9
    assert V.control(x).shape == (3, V.nu) and V.disturbance(x).shape == (3, V.nd)
    # (its safety filters: tests/python/value_test.py, on air3d)
    grid = V.grid
    del V                                                      # the view keeps the solve alive
    assert np.isfinite(grid).all()
    raises(ValueError, dg.hji.Value.value, dg.hji.solve(cfg("hji/pursuit2d.yaml"), grid__n=[11, 11]),
           np.zeros((3, 3)))


def test_solve_refuses():
    raises(dg.Error, dg.hji.solve, "/nonexistent.yaml")
    raises(KeyError, dg.hji.solve, cfg("hji/pursuit2d.yaml"), grid__nn=[3, 3])
    raises(dg.Error, dg.hji.solve, cfg("hji/pursuit2d.yaml"), grid__n=[1, 1], contains="grid.n")
    V = dg.hji.solve(cfg("hji/pursuit2d.yaml"), grid__n=[11, 11])
    raises(dg.Error, V.value, [np.nan, 0.0], contains="not finite")
    raises(dg.Error, dg.certify, cfg("duel_simple.yaml"), "/nonexistent.safetensors", contains="nonexistent")


def test_parallel_env():
    penv = dg.ParallelEnv(cfg("duel_simple.yaml"), batch=4, horizon=5)
    assert penv.possible_agents == ["pursuer", "evader"]
    obs, infos = penv.reset(seed=0)
    assert set(obs) == {"pursuer", "evader"} and obs["pursuer"].shape[0] == 4
    rng = np.random.default_rng(0)
    total = {a: np.zeros(4) for a in penv.possible_agents}
    for t in range(5):
        acts = {a: rng.uniform(-1, 1, (4, penv.action_space(a)[0][0])) for a in penv.agents}
        obs, rew, term, trunc, infos = penv.step(acts)
        for a in rew:
            total[a] += rew[a]
        assert all(trunc[a].all() == (t == 4) for a in trunc)
    assert np.array_equal(total["pursuer"], -total["evader"])  # zero-sum
    assert penv.agents == []
    raises(RuntimeError, penv.step, acts)
    penv.reset(seed=0)
    raises(KeyError, penv.step, {"pursuer": acts["pursuer"]})
    # one player: the rewards of zero actions add up to -H x the loss of an open-loop plan of zeros
    env = dg.Env(cfg("reach.yaml"), train__mode="open_loop", horizon=6)
    one = dg.ParallelEnv(env, batch=3)
    one.reset(seed=2)
    r = sum(one.step({"agent": np.zeros((3, 2))})[1]["agent"] for _ in range(6))
    loss = env.rollout({"plan": np.zeros(env.param_shapes[0])}, seed=2, batch=3)["loss"]
    assert abs(-r.mean() / 6 - loss) < 1e-5 * loss, (-r.mean() / 6, loss)


run([test_solve_value, test_solve_refuses, test_parallel_env])
