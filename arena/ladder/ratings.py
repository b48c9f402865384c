"""Ratings: live Elo (one update per recorded match) and the season's maximum-likelihood fit.

Live Elo: expected score 1/(1+10^(-Δ/400)); a win scores 1, a draw ½, a loss 0. One K per match,
the same on both sides (40 if either side has fewer than 20 rated matches, else 20), so the ladder
is zero-sum. Forfeits count (the forfeiting bot lost), voids do not. `elo_update` is the only place
the formula lives, so replaying the same results in the same order reproduces the stored ratings
bit for bit.

The season fit (maximum likelihood, intervals, LOS) is `arena.ladder.fit`, re-exported here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from arena.ladder.fit import (  # noqa: F401 - the season fit, re-exported for its callers
    ELO_PER_UNIT,
    INITIAL,
    PRIOR,
    Z95,
    Fit,
    FitError,
    fit_ratings,
    pair_table,
    score_of,
    virtual_draws,
)

PROVISIONAL_GAMES = 20
K_PROVISIONAL = 40.0
K_ESTABLISHED = 20.0


def expected(rating: float, opponent: float) -> float:
    """Expected score of `rating` against `opponent`."""
    return float(score_of(rating - opponent))


def k_factor(rated: int) -> float:
    """K for a bot that has `rated` rated matches so far."""
    return K_PROVISIONAL if rated < PROVISIONAL_GAMES else K_ESTABLISHED


def is_provisional(rated: int) -> bool:
    return rated < PROVISIONAL_GAMES


@dataclass(frozen=True)
class EloChange:
    before: float
    after: float
    k: float
    score: float


def match_k(rated_a: int, rated_b: int) -> float:
    """The one K of a match: the larger of the two sides' (a provisional side moves fast), used by
    both sides so that what one gains the other loses and the ladder stays zero-sum."""
    return max(k_factor(rated_a), k_factor(rated_b))


def elo_update(a: float, rated_a: int, b: float, rated_b: int, score_a: float) -> tuple[EloChange, EloChange]:
    """Both sides' changes for one match: one K for both, so the changes sum to zero."""
    delta = match_k(rated_a, rated_b) * (score_a - expected(a, b))
    k = match_k(rated_a, rated_b)
    return EloChange(a, a + delta, k, score_a), EloChange(b, b - delta, k, 1.0 - score_a)


class Tallied(Protocol):
    """What one result changes of a ladder entry (the `Entry` row, or a bench's row in memory)."""

    rating: float
    rated: int
    wins: int
    draws: int
    losses: int


def count_change(entry: Tallied, change: EloChange) -> None:
    """Apply one rated result to `entry`: its new live Elo, one more rated match, and its win, draw or loss."""
    entry.rating = change.after
    entry.rated += 1
    if change.score == 1.0:
        entry.wins += 1
    elif change.score == 0.0:
        entry.losses += 1
    else:
        entry.draws += 1


def replay_elo(
    results: Iterable[tuple[int, int, float | None]],
    start: Mapping[int, float] | None = None,
) -> tuple[dict[int, float], list[tuple[EloChange, EloChange] | None]]:
    """Recompute live Elo from scratch: `results` are (player_a, player_b, score_a or None for void) in
    recording order, `start` each player's starting rating (default INITIAL). Returns final ratings
    and each match's changes (None for voids)."""
    rating: dict[int, float] = dict(start or {})
    rated: dict[int, int] = {}
    changes: list[tuple[EloChange, EloChange] | None] = []
    for a, b, score in results:
        if score is None:
            changes.append(None)
            continue
        ca, cb = elo_update(
            rating.get(a, INITIAL), rated.get(a, 0), rating.get(b, INITIAL), rated.get(b, 0), score
        )
        rating[a], rating[b] = ca.after, cb.after
        rated[a], rated[b] = rated.get(a, 0) + 1, rated.get(b, 0) + 1
        changes.append((ca, cb))
    return rating, changes


def naive_fit(
    n: int,
    matches: Sequence[tuple[int, int, float]],
    *,
    anchor: float = INITIAL,
    prior: float = PRIOR,
    tol: float = 0.01,
    max_iter: int = 10_000,
) -> tuple[list[float], int]:
    """The classical minorisation–maximisation (Zermelo/Hunter) iteration over the raw match list in
    plain Python: the simple baseline `arena bench ratings` measures the Newton fit against. Same
    model and prior as `fit_ratings`."""
    points = [0.0] * n
    played = [0] * n
    pair: dict[tuple[int, int], int] = {}
    for a, b, s in matches:
        points[a] += s
        points[b] += 1.0 - s
        played[a] += 1
        played[b] += 1
        key = (min(a, b), max(a, b))
        pair[key] = pair.get(key, 0) + 1
    virtual = [(a, b, prior * 0.5 * (c / played[a] + c / played[b])) for (a, b), c in pair.items()]
    for a, b, w in virtual:
        points[a] += 0.5 * w
        points[b] += 0.5 * w
    gamma = [1.0] * n
    iterations = 0
    for iterations in range(1, max_iter + 1):  # noqa: B007
        denom = [0.0] * n
        for a, b, _ in matches:
            d = 1.0 / (gamma[a] + gamma[b])
            denom[a] += d
            denom[b] += d
        for a, b, w in virtual:
            d = w / (gamma[a] + gamma[b])
            denom[a] += d
            denom[b] += d
        new = [points[i] / denom[i] if denom[i] > 0 else gamma[i] for i in range(n)]
        mean_log = sum(math.log(g) for g in new) / n
        new = [g / math.exp(mean_log) for g in new]
        change = max(abs(math.log(x) - math.log(y)) for x, y in zip(new, gamma, strict=True)) * ELO_PER_UNIT
        gamma = new
        if change < tol:
            break
    return [math.log(g) * ELO_PER_UNIT + anchor for g in gamma], iterations
