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
from arena.env.process_opponent import ProcessOpponent


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


RECORDER = """
from arena.sdk import Bot


class Recorder(Bot):
    name = "recorder"
    version = "1"

    def __init__(self):
        self.heard = []

    def on_deal_start(self, deal):
        self.heard.append("deal_start")

    def on_trick(self, result):
        self.heard.append("trick")

    def on_deal_end(self, result):
        self.heard.append("deal_end")

    def on_match_end(self, result):
        self.heard.append(("match_end", result.end_reason, result.winner))

    def play(self, view):
        return view.legal[0]
"""


def test_the_opponent_hears_the_match_as_from_a_referee(tmp_path) -> None:
    """Every hook of the SDK, in the referee's order: the deal's start, each trick, the deal's end, the
    match's end (played out, or won through the learner's illegal card)."""
    bundle = tmp_path / "recorder"
    bundle.mkdir()
    (bundle / "bot.py").write_text(RECORDER)
    e = ElfernEnv(bundle)
    _, _, lines = _episode(e, 3)
    assert e.opponent is not None and e.episode is not None
    winner = e.episode.match.winner
    assert e.opponent.bot.heard == [
        "deal_start",
        *["trick"] * 16,
        "deal_end",
        ("match_end", "COMPLETED", winner),
    ]
    obs, _ = e.reset(seed=4)
    e.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    assert e.opponent.bot.heard[-1] == ("match_end", "VERDICT", 1)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_a_stdio_bundle_in_another_language_is_an_opponent(repo_root) -> None:
    """The shell sample, its process speaking the stdio lines: Gymnasium's checker passes, an episode
    plays out, and closing the environment ends the process."""
    shell = repo_root / "sample_bots" / "stdio" / "shell"
    e = ElfernEnv(shell, rules=Rules(max_deals=2))
    check_env(e)
    actions, _, lines = _episode(e, 5)
    assert len(actions) == 32 and sum(lines) > 0
    assert isinstance(e.opponent, ProcessOpponent)
    proc = e.opponent.proc
    e.close()
    assert proc.poll() is not None


@pytest.mark.parametrize(
    ("folder", "why"),
    [("node", "speaks grpc; a bundle plays Elfern-v0 over the stdio lines"), ("stdio/c", "build step")],
)
def test_a_bundle_that_cannot_play_here_is_refused_with_why(repo_root, folder: str, why: str) -> None:
    with pytest.raises(OpponentError, match=why):
        ElfernEnv(repo_root / "sample_bots" / folder)
