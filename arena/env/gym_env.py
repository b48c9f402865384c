"""`Elfern-v0`: Elfern as a single-agent Gymnasium environment, the learner in one seat against a bot.

The opponent is a Python sample bot by name (`random`, `greedy`, `tactician`, `pimc`, `ismcts`) or a
Python bundle folder, played in-process as the arena plays it (arena/env/opponents.py), or any other
bundle that speaks the stdio lines, run as a process, unsandboxed (arena/env/process_opponent.py). The
observation is PettingZoo's: `observation` (arena/env/encoding.py) and `action_mask`; actions are
cards 0..31. Rewards are the difference in lines of each deal as it ends. An illegal card ends the
episode, as the referee ends the match with ILLEGAL_MOVE, with `illegal_reward` (default -10) and
`info["illegal"]` set. `seat` fixes the learner's seat; None alternates it with the episode's seed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
from gymnasium import spaces

from arena.engine import Rules
from arena.env import encoding
from arena.env.episode import DEFAULT_RULES, Episode, IllegalAction
from arena.env.opponents import Opponent
from arena.env.pettingzoo_env import observation_space, observe_view
from arena.env.process_opponent import opponent_maker

ENV_ID = "Elfern-v0"


class ElfernEnv(gym.Env):
    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        opponent: str | Path = "random",
        seat: int | None = 0,
        rules: Rules | None = None,
        illegal_reward: float = -10.0,
        render_mode: str | None = None,
    ) -> None:
        if seat not in (0, 1, None):
            raise ValueError(f"seat must be 0, 1 or None (alternate), not {seat!r}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode {render_mode!r} is not offered; use None or 'ansi'")
        self.make_opponent = opponent_maker(opponent)
        self.opponent_name = str(opponent)
        self.fixed_seat = seat
        self.rules = rules or DEFAULT_RULES
        self.illegal_reward = illegal_reward
        self.render_mode = render_mode
        self.observation_space = observation_space()
        self.action_space = spaces.Discrete(encoding.NUM_CARDS)
        self.episode: Episode | None = None
        self.opponent: Opponent | None = None
        self.seat = 0
        self.forfeited = False  # the learner played an illegal card: the episode is over

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        super().reset(seed=seed)
        match_seed = int(self.np_random.integers(2**63))
        self.seat = self.fixed_seat if self.fixed_seat is not None else match_seed & 1
        self.episode = Episode(self.rules, match_seed)
        self.forfeited = False
        self.close()
        self.opponent = self.make_opponent(self.episode.match, 1 - self.seat)
        self.opponent.deal_started()
        self._opponent_turns()  # no deal ends before the learner's first card
        return self._observe(), self._info()

    def _observe(self) -> dict[str, Any]:
        assert self.episode is not None
        return observe_view(self.episode, self.seat)

    def _info(self, **extra: Any) -> dict[str, Any]:
        assert self.episode is not None
        mask = encoding.action_mask(self.episode.view(self.seat))
        return {"seat": self.seat, "action_mask": mask, "lines": tuple(self.episode.match.lines), **extra}

    def _play(self, card: Any) -> float:
        """One card for the seat on move; the learner's reward from a deal it ended. The opponent hears
        of every trick, and of a deal's end before the next deal is dealt."""
        assert self.episode is not None and self.opponent is not None
        reward, trick = self.episode.play(card)
        if trick is not None:
            self.opponent.trick_done(trick)
        if self.episode.deal_over:
            self.episode.next_deal()
            self.opponent.deal_started()
        return float(reward[self.seat])

    def _opponent_turns(self) -> float:
        reward = 0.0
        assert self.episode is not None and self.opponent is not None
        while not self.episode.over and self.episode.to_move != self.seat:
            reward += self._play(self.opponent.choose())
        return reward

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        if self.episode is None:
            raise RuntimeError("call reset() before step()")
        if self.episode.over or self.forfeited:
            raise RuntimeError("the episode is over: call reset()")
        try:
            reward = self._play(action)
        except IllegalAction as exc:
            self.forfeited = True  # the referee's rule: an illegal card loses the match
            assert self.opponent is not None
            self.opponent.match_over(forfeit=True)
            return self._observe(), self.illegal_reward, True, False, self._info(illegal=str(exc))
        reward += self._opponent_turns()
        if self.episode.over:
            assert self.opponent is not None
            self.opponent.match_over()
        return self._observe(), reward, self.episode.over, False, self._info()

    def close(self) -> None:
        """End the opponent's process, if it has one."""
        if self.opponent is not None:
            self.opponent.close()

    def render(self) -> str | None:
        if self.render_mode is None or self.episode is None:
            return None
        return encoding.to_string(self.episode.view(self.seat))


if ENV_ID not in gym.registry:
    gym.register(id=ENV_ID, entry_point="arena.env.gym_env:ElfernEnv")
