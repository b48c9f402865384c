"""A season's results aggregated per pair of players (what the fit reads), and the dense per-pair
tables the tests' reference computation uses (n×n: never the season fit)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Pairs:
    """A season's results aggregated per pair of players (u < v), what the fit reads: the games of
    each pair, and each player's games and points in all."""

    n: int
    u: np.ndarray  # int64, u < v, each pair once
    v: np.ndarray
    games: np.ndarray  # float64, games of the pair
    player_games: np.ndarray  # float64, per player
    player_points: np.ndarray  # float64, per player

    @classmethod
    def from_matches(
        cls,
        n: int,
        a: Sequence[int] | np.ndarray,
        b: Sequence[int] | np.ndarray,
        score_a: Sequence[float] | np.ndarray,
    ) -> Pairs:
        a = np.asarray(a, dtype=np.int64)
        b = np.asarray(b, dtype=np.int64)
        s = np.asarray(score_a, dtype=np.float64)
        key, games = np.unique(np.minimum(a, b) * n + np.maximum(a, b), return_counts=True)
        player_games = (np.bincount(a, minlength=n) + np.bincount(b, minlength=n)).astype(np.float64)
        points = np.bincount(a, weights=s, minlength=n) + np.bincount(b, weights=1.0 - s, minlength=n)
        return cls(n, key // n, key % n, games.astype(np.float64), player_games, points)


def pair_table(
    n: int,
    a: Sequence[int] | np.ndarray,
    b: Sequence[int] | np.ndarray,
    score_a: Sequence[float] | np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Dense games N[i, j] (symmetric) and points W[i, j] (i's against j): the reference computation
    of the tests and small tables only, never the season fit (it is n×n)."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    s = np.asarray(score_a, dtype=np.float64)
    games = np.bincount(a * n + b, minlength=n * n).reshape(n, n).astype(np.float64)
    games += games.T
    won = np.bincount(a * n + b, weights=s, minlength=n * n) + np.bincount(
        b * n + a, weights=1.0 - s, minlength=n * n
    )
    return games, won.reshape(n, n)


def virtual_draws(games: np.ndarray, prior: float) -> np.ndarray:
    """Virtual games per pair of a dense games table (the tests' reference): each player's `prior`
    spread over its opponents in proportion to the games it played against each."""
    total = games.sum(axis=1)
    share = np.divide(games, total[:, None], out=np.zeros_like(games), where=total[:, None] > 0)
    return prior * 0.5 * (share + share.T)
