"""The worked example of docs/training.md runs end to end at a small scale: it trains, writes weights
that NumPy alone reads back, evaluates them against a sample bot, and the same seed gives the same
weights."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from arena.env import encoding
from arena.env.example_reinforce import evaluate, main, policy, train


def test_training_is_deterministic_and_learns_something() -> None:
    first = train(4, seed=3)
    assert np.array_equal(first, train(4, seed=3))
    assert first.shape == (encoding.NUM_CARDS, encoding.SIZE) and np.abs(first).sum() > 0
    assert not np.array_equal(first, train(4, seed=4))


def test_the_policy_plays_only_legal_cards() -> None:
    weights = np.random.default_rng(0).normal(size=(encoding.NUM_CARDS, encoding.SIZE))
    mask = np.zeros(encoding.NUM_CARDS, np.int8)
    mask[[3, 17]] = 1
    p = policy(weights, np.ones(encoding.SIZE, np.float32), mask)
    assert np.isclose(p.sum(), 1) and set(np.flatnonzero(p)) <= {3, 17}


def test_the_command_writes_weights_numpy_reads(tmp_path: Path, capsys) -> None:
    out = tmp_path / "policy.npz"
    main(["--episodes", "3", "--out", str(out), "--against", "greedy"])
    saved = np.load(out)
    assert saved["weights"].shape == (encoding.NUM_CARDS, encoding.SIZE)
    assert int(saved["encoding_version"]) == encoding.ENCODING_VERSION
    assert "lines per deal against greedy" in capsys.readouterr().out
    assert np.isfinite(evaluate(saved["weights"].astype(np.float64), "random", episodes=2))
