"""The SPRT decides H1 for a clearly better bot, H0 for an equal one, and reports the Elo estimate."""

from __future__ import annotations

import math
import random

import pytest

from arena.ladder.sprt import Sprt, elo_of, score_of


def _run(p_win: float, seed: int, pairs: bool = True, limit: int = 5000) -> Sprt:
    rng = random.Random(seed)
    test = Sprt(pairs=pairs)
    while test.state().verdict is None and test.n < limit:
        if pairs:
            test.add((float(rng.random() < p_win) + float(rng.random() < p_win)) / 2)
        else:
            test.add(float(rng.random() < p_win))
    return test


def test_bounds_are_fishtest_defaults() -> None:
    state = Sprt().state()
    assert state.upper == pytest.approx(math.log(0.95 / 0.05))
    assert state.lower == pytest.approx(-state.upper)


@pytest.mark.parametrize("seed", range(5))
def test_stronger_bot_accepted_equal_bot_rejected(seed: int) -> None:
    strong = _run(score_of(120), seed)
    assert strong.state().verdict == "H1"
    assert strong.state().elo_low < 120 < strong.state().elo_high + 60
    equal = _run(0.5, seed)
    assert equal.state().verdict == "H0"


def test_trinomial_games_and_bad_scores() -> None:
    assert _run(score_of(150), 1, pairs=False).state().verdict == "H1"
    with pytest.raises(ValueError, match="not one of"):
        Sprt(pairs=False).add(0.25)


def test_not_decided_after_one_lucky_pair() -> None:
    test = Sprt()
    test.add(1.0)
    assert test.state().verdict is None


def test_elo_score_round_trip() -> None:
    for elo in (-300, -30, 0, 45, 400):
        assert elo_of(score_of(elo)) == pytest.approx(elo)
