"""elfern_v0 passes PettingZoo's own api_test and seed_test; the same seed gives the same episode."""

from __future__ import annotations

import numpy as np
import pytest
from env_helpers import VARIANTS
from pettingzoo.test import api_test, seed_test

from arena.engine import Rules
from arena.env.episode import IllegalAction
from arena.env.pettingzoo_env import env


# api_test's advice on Dict spaces, which action masks need
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("rules", [None, *VARIANTS[1:3]])
def test_api_test_passes(rules: Rules | None) -> None:
    api_test(env(rules), num_cycles=300)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_seed_test_passes() -> None:
    seed_test(env, num_cycles=200)


def _episode(seed: int, rules: Rules) -> list[tuple[str, int, float]]:
    e = env(rules)
    e.reset(seed=seed)
    out = []
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, _ = e.last()
        action = None if terminated or truncated else int(np.flatnonzero(obs["action_mask"])[-1])
        out.append((agent, -1 if action is None else action, reward))
        e.step(action)
    return out


def test_the_same_seed_gives_the_same_episode_and_rewards_sum_to_the_lines() -> None:
    rules = Rules(max_deals=3, trumps=True)
    first = _episode(11, rules)
    assert first == _episode(11, rules)
    assert first != _episode(12, rules)
    e = env(rules)
    e.reset(seed=11)
    for _agent in e.agent_iter():
        obs, _, terminated, _, _ = e.last()
        e.step(None if terminated else int(np.flatnonzero(obs["action_mask"])[-1]))
    assert e.episode is not None
    lines = e.episode.match.lines
    total = [sum(r for a, _, r in first if a == agent) for agent in ("seat_0", "seat_1")]
    assert total == [lines[0] - lines[1], lines[1] - lines[0]]


def test_an_illegal_card_is_refused_with_the_legal_ones() -> None:
    e = env()
    e.reset(seed=1)
    obs = e.observe(e.agent_selection)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(IllegalAction, match="is not a legal card for seat .*legal actions: .*action_mask"):
        e.step(illegal)
