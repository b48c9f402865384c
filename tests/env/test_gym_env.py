"""Elfern-v0 passes Gymnasium's own check_env against sample bots; the same seed gives the same
episode; an illegal card ends the episode as the referee's ILLEGAL_MOVE ends the match."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from arena.engine import Rules
from arena.env.gym_env import ENV_ID, ElfernEnv
from arena.env.opponents import OpponentError


# check_env's advice on Dict spaces, which action masks need
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("opponent", ["random", "greedy", "tactician"])
def test_check_env_passes(opponent: str) -> None:
    check_env(gym.make(ENV_ID, opponent=opponent, rules=Rules(max_deals=2, trumps=True)).unwrapped)


def _episode(e: ElfernEnv, seed: int) -> tuple[list[int], float, tuple[int, int]]:
    obs, info = e.reset(seed=seed)
    actions, total, done = [], 0.0, False
    while not done:
        action = int(np.flatnonzero(obs["action_mask"])[0])
        actions.append(action)
        obs, reward, done, _, info = e.step(action)
        total += reward
    return actions, total, info["lines"]


def test_the_same_seed_gives_the_same_episode_and_rewards_are_the_lines() -> None:
    e = ElfernEnv("greedy", seat=None, rules=Rules(max_deals=2))
    first = _episode(e, 4)
    assert first == _episode(ElfernEnv("greedy", seat=None, rules=Rules(max_deals=2)), 4)
    actions, total, lines = first
    assert total == lines[e.seat] - lines[1 - e.seat]
    assert len(actions) == 32


def test_a_python_bundle_folder_is_an_opponent(repo_root) -> None:
    e = ElfernEnv(repo_root / "sample_bots" / "python" / "greedy")
    assert _episode(e, 1)[0]


def test_an_illegal_card_ends_the_episode() -> None:
    e = ElfernEnv("random", illegal_reward=-7.0)
    obs, _ = e.reset(seed=2)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    _, reward, terminated, truncated, info = e.step(illegal)
    assert (reward, terminated, truncated) == (-7.0, True, False)
    assert "is not a legal card" in info["illegal"]
    with pytest.raises(RuntimeError, match="call reset"):
        e.step(0)


def test_an_unknown_opponent_names_the_sample_bots() -> None:
    with pytest.raises(
        OpponentError, match="neither a Python sample bot .*greedy.*nor a folder with a bot.py"
    ):
        ElfernEnv("no_such_bot")
