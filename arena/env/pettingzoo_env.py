"""`elfern_v0`: Elfern as a PettingZoo AEC environment, two agents `seat_0` and `seat_1`.

Every observation is a dict: `observation`, the seat's view as arena/env/encoding.py encodes it, and
`action_mask`, its legal cards (all zeros when it is not on move). Actions are cards 0..31. A deal's
reward goes to both seats when it ends: the lines each gained minus the opponent's. The episode is a
match under `rules` (default: one deal), dealt from the engine's seeded packs (arena/env/episode.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv  # type: ignore[import-untyped]

from arena.engine import Rules
from arena.env import encoding
from arena.env.episode import DEFAULT_RULES, Episode

AGENTS = ("seat_0", "seat_1")


def observation_space() -> spaces.Dict:
    """The space of one seat's observation (the same for both seats, and for Elfern-v0)."""
    return spaces.Dict(
        {
            "observation": spaces.Box(0.0, encoding.HIGH, (encoding.SIZE,), np.float32),
            "action_mask": spaces.Box(0, 1, (encoding.NUM_CARDS,), np.int8),
        }
    )


def observe_view(episode: Episode, seat: int) -> dict[str, Any]:
    view = episode.view(seat)
    return {"observation": encoding.encode(view), "action_mask": encoding.action_mask(view)}


class ElfernAEC(AECEnv):
    """The AEC environment; `env()` below is the usual constructor."""

    metadata = {"name": "elfern_v0", "render_modes": ["ansi"], "is_parallelizable": False}

    def __init__(self, rules: Rules | None = None, render_mode: str | None = None) -> None:
        super().__init__()
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode {render_mode!r} is not offered; use None or 'ansi'")
        self.rules = rules or DEFAULT_RULES
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        self.observation_spaces = {a: observation_space() for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(encoding.NUM_CARDS) for a in AGENTS}
        self._seeds = np.random.default_rng()
        self.episode: Episode | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """A new match. With `seed`, the match seed and the seeds of later resets follow from it."""
        if seed is not None:
            self._seeds = np.random.default_rng(seed)
            for space in (*self.observation_spaces.values(), *self.action_spaces.values()):
                space.seed(int(self._seeds.integers(2**31)))
        self.episode = Episode(self.rules, int(self._seeds.integers(2**63)))
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in AGENTS}
        self.agent_selection = AGENTS[self._to_move()]

    def _to_move(self) -> int:
        assert self.episode is not None and self.episode.to_move is not None
        return self.episode.to_move

    def observe(self, agent: str) -> dict[str, Any]:
        if self.episode is None:
            raise RuntimeError("call reset() before observe()")
        return observe_view(self.episode, AGENTS.index(agent))

    def step(self, action: Any) -> None:
        if self.episode is None:
            raise RuntimeError("call reset() before step()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0
        reward, _ = self.episode.play(action)
        if self.episode.deal_over:
            self.episode.next_deal()
        self.rewards = {AGENTS[s]: reward[s] for s in (0, 1)}
        if self.episode.over:
            self.terminations = dict.fromkeys(AGENTS, True)
            winner = self.episode.match.winner
            for s, a in enumerate(AGENTS):
                self.infos[a] = {"lines": tuple(self.episode.match.lines), "won": winner == s}
        else:
            self.agent_selection = AGENTS[self._to_move()]
        self._accumulate_rewards()

    def render(self) -> str | None:
        if self.render_mode is None or self.episode is None:
            return None
        deal = self.episode.match.deal
        assert deal is not None
        return str(encoding.to_string(self.episode.view(deal.to_move if deal.to_move is not None else 0)))

    def close(self) -> None:
        pass


def env(rules: Rules | None = None, render_mode: str | None = None) -> ElfernAEC:
    """`elfern_v0`: the AEC environment for `rules` (default: one deal)."""
    return ElfernAEC(rules, render_mode)
