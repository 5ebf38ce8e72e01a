"""Two-player games with PettingZoo's parallel-API conventions, without depending on PettingZoo.

    penv = dg.ParallelEnv("configs/duel_simple.yaml")
    obs, infos = penv.reset(seed=0)                 # {"pursuer": (B, obs), "evader": (B, obs2)}
    obs, rewards, terms, truncs, infos = penv.step({"pursuer": a, "evader": b})

A batch of B games runs at once (arrays have a leading batch axis). Rewards are each game's weighted
step cost (Env.step_cost) negated for the pursuer (it minimises the loss) and as it is for the evader
(zero-sum), so the pursuer's rewards summed over an episode are -H times its loss; one-player games
have the one agent "agent". Every game truncates at the config's horizon (none terminates early).
"""
import numpy as np

from .env import Env

__all__ = ["ParallelEnv"]


class ParallelEnv:
    """A config's game as a PettingZoo-style parallel environment over a batch of games."""

    metadata = {"name": "difgames", "is_parallelizable": True}

    def __init__(self, config, batch=1, **overrides):
        self.env = config if isinstance(config, Env) else Env(config, **overrides)
        self.batch = Env._rows(batch)
        e = self.env
        self.possible_agents = ["pursuer", "evader"] if e.nplayers > 1 else ["agent"]
        self.agents = []
        self._obs_dim = {a: d for a, d in zip(self.possible_agents, (e.obs_dim, e.obs2_dim))}
        self._act_dim = {a: d for a, d in zip(self.possible_agents, (e.act_dim, e.act2_dim))}
        self.state = self.aux = None
        self.t = 0

    def observation_space(self, agent):
        """(shape, low, high) of one game's observation (PettingZoo returns a gymnasium Box)."""
        return ((self._obs_dim[agent],), -np.inf, np.inf)

    def action_space(self, agent):
        """(shape, low, high) of one game's action: each in [-1, 1]."""
        return ((self._act_dim[agent],), -1.0, 1.0)

    def _obs(self):
        o = self.env.observe(self.state, self.aux)
        return dict(zip(self.possible_agents, o if isinstance(o, tuple) else (o,)))

    def reset(self, seed=None, options=None):
        """New games from seed: (observations, infos), dicts by agent."""
        self.state, self.aux = self.env.reset(self.batch, seed)
        self.t = 0
        self.agents = list(self.possible_agents)
        return self._obs(), {a: {} for a in self.agents}

    def step(self, actions):
        """One step of every game with actions (agent -> (B, act)): (observations, rewards, terminations,
        truncations, infos), dicts by agent; rewards (B,) each."""
        if not self.agents:
            raise RuntimeError("step: call reset() first (the episode is over)")
        if set(actions) != set(self.agents):
            raise KeyError("actions: expected one for each of %s, got %s" % (self.agents, sorted(actions)))
        u = np.concatenate([np.asarray(actions[a], dtype=self.env.dtype).reshape(self.batch, -1)
                            for a in self.possible_agents], axis=1)
        self.t += 1
        self.state, r = self.env.step_cost(self.state, u, self.aux, self.t)
        done = self.t >= self.env.horizon
        rewards = {a: (-r if i == 0 else r) for i, a in enumerate(self.possible_agents)}
        obs = self._obs()
        trunc = {a: np.full(self.batch, done) for a in self.agents}
        term = {a: np.zeros(self.batch, bool) for a in self.agents}
        infos = {a: {"t": self.t} for a in self.agents}
        if done:
            self.agents = []
        return obs, rewards, term, trunc, infos

    def close(self):
        self.env.close()
