"""The standings' fit memo: a hit needs the exact inputs, so one more game (or another score, or an
anchor) is always a fresh fit, equal to computing it directly."""

from __future__ import annotations

import numpy as np

from arena.ladder.ratings import fit_ratings
from arena.ladder.standings import _fit


def _games(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 6, n)
    b = (a + rng.integers(1, 6, n)) % 6
    return a.astype(np.int64), b.astype(np.int64), rng.choice([0.0, 0.5, 1.0], n)


def test_the_same_inputs_hit_and_any_change_refits() -> None:
    a, b, score = _games(300, 1)
    first = _fit(6, a, b, score, {})
    assert _fit(6, a.copy(), b.copy(), score.copy(), {}) is first  # equal bytes: the remembered fit
    np.testing.assert_array_equal(first.ratings, fit_ratings(6, a, b, score).ratings)

    flipped = score.copy()
    i = int(np.flatnonzero(score != 0.5)[0])
    flipped[i] = 1.0 - flipped[i]
    changed = [
        (6, np.append(a, 0), np.append(b, 1), np.append(score, 1.0), {}),  # one more game
        (6, a, b, flipped, {}),  # one result flipped
        (7, a, b, score, {}),  # a new entry without games
        (6, a, b, score, {0: 1600.0}),  # an anchor
    ]
    for n, a2, b2, s2, anchors in changed:
        got = _fit(n, a2, b2, s2, anchors)
        assert got is not first
        np.testing.assert_array_equal(got.ratings, fit_ratings(n, a2, b2, s2, anchors=anchors).ratings)
