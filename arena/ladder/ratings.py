"""Ratings: live Elo (one update per recorded match) and the season's maximum-likelihood fit.

Live Elo: expected score 1/(1+10^(-Δ/400)); a win scores 1, a draw ½, a loss 0; K = 40 while a bot
has fewer than 20 rated matches, 20 after. Forfeits count (the forfeiting bot lost), voids do not.
`elo_update` is the only place the formula lives, so replaying the same results in the same order
reproduces the stored ratings bit for bit.

Season fit: the Bradley–Terry model on the Elo scale, draws as half points, solved by Newton's
method on the aggregated pair table, anchored to a mean of 1500. The covariance is the
pseudo-inverse of the Fisher information, which gives 95% intervals and the likelihood of
superiority (LOS) of every bot over every other, as BayesElo and Ordo report.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

INITIAL = 1500.0
PROVISIONAL_GAMES = 20
K_PROVISIONAL = 40.0
K_ESTABLISHED = 20.0
#: natural log-odds units -> Elo points
ELO_PER_UNIT = 400.0 / math.log(10.0)
Z95 = 1.959963984540054
PRIOR = 2.0  # virtual drawn games per bot in the season fit (BayesElo's default prior)


def expected(rating: float, opponent: float) -> float:
    """Expected score of `rating` against `opponent`."""
    return 1.0 / (1.0 + 10.0 ** ((opponent - rating) / 400.0))


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


def elo_update(a: float, rated_a: int, b: float, rated_b: int, score_a: float) -> tuple[EloChange, EloChange]:
    """Both sides' changes for one match; each side uses its own K."""
    ea = expected(a, b)
    ka, kb = k_factor(rated_a), k_factor(rated_b)
    score_b = 1.0 - score_a
    return (
        EloChange(a, a + ka * (score_a - ea), ka, score_a),
        EloChange(b, b + kb * (score_b - (1.0 - ea)), kb, score_b),
    )


def replay_elo(
    results: Iterable[tuple[int, int, float | None]],
) -> tuple[dict[int, float], list[tuple[EloChange, EloChange] | None]]:
    """Recompute live Elo from scratch: `results` are (player_a, player_b, score_a or None for void) in
    recording order. Returns final ratings and each match's changes (None for voids)."""
    rating: dict[int, float] = {}
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


@dataclass(frozen=True)
class Fit:
    """A season fit for players 0..n-1 (Elo scale, mean = anchor)."""

    ratings: np.ndarray
    cov: np.ndarray  # Elo² covariance under the mean constraint
    games: np.ndarray
    points: np.ndarray
    iterations: int

    @property
    def ci95(self) -> np.ndarray:
        """Half-width of each rating's 95% confidence interval."""
        return Z95 * np.sqrt(np.clip(np.diag(self.cov), 0.0, None))

    def los(self) -> np.ndarray:
        """LOS[i, j]: probability that i is stronger than j (0.5 on the diagonal)."""
        var = np.diag(self.cov)
        diff_var = var[:, None] + var[None, :] - 2.0 * self.cov
        diff = self.ratings[:, None] - self.ratings[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(diff_var > 1e-12, diff / np.sqrt(np.where(diff_var > 1e-12, diff_var, 1.0)), 0.0)
        out = ndtr(z)
        np.fill_diagonal(out, 0.5)
        return out


def pair_table(
    n: int,
    a: Sequence[int] | np.ndarray,
    b: Sequence[int] | np.ndarray,
    score_a: Sequence[float] | np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Aggregate matches into games N[i, j] (symmetric) and points W[i, j] (i's points against j)."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    s = np.asarray(score_a, dtype=np.float64)
    games = np.bincount(a * n + b, minlength=n * n).reshape(n, n).astype(np.float64)
    games += games.T
    won = np.bincount(a * n + b, weights=s, minlength=n * n) + np.bincount(
        b * n + a, weights=1.0 - s, minlength=n * n
    )
    return games, won.reshape(n, n)


def fit_ratings(
    n: int,
    a: Sequence[int] | np.ndarray,
    b: Sequence[int] | np.ndarray,
    score_a: Sequence[float] | np.ndarray,
    *,
    anchor: float = INITIAL,
    prior: float = PRIOR,
    tol: float = 1e-9,
    max_iter: int = 100,
) -> Fit:
    """Maximum-likelihood Bradley–Terry ratings for players 0..n-1.

    `prior` gives every bot that many virtual drawn games, spread over the opponents it met, so an
    unbeaten bot gets a finite rating (BayesElo's virtual draws); 0 gives the plain MLE.
    """
    games, won = pair_table(n, a, b, score_a)
    virtual = virtual_draws(games > 0, prior)
    games = games + virtual
    won = won + 0.5 * virtual
    points = won.sum(axis=1)
    theta = np.zeros(n)
    ones = np.ones((n, n)) / max(n, 1)
    iterations = 0
    info = np.zeros((n, n))
    for iterations in range(1, max_iter + 1):  # noqa: B007
        p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))  # p[i, j] = P(i beats j)
        grad = points - (games * p).sum(axis=1)
        w = games * p * (1.0 - p)
        info = np.diag(w.sum(axis=1)) - w
        step = np.linalg.solve(info + ones + 1e-12 * np.eye(n), grad)
        biggest = np.abs(step).max(initial=0.0)
        if biggest > 2.0:  # damp early steps: p is far from the optimum
            step *= 2.0 / biggest
        theta += step
        theta -= theta.mean()
        if biggest < tol:
            break
    p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
    w = games * p * (1.0 - p)
    info = np.diag(w.sum(axis=1)) - w
    cov = np.linalg.pinv(info, hermitian=True) * ELO_PER_UNIT**2
    return Fit(
        theta * ELO_PER_UNIT + anchor,
        cov,
        (games - virtual).sum(axis=1),
        points - 0.5 * virtual.sum(axis=1),
        iterations,
    )


def virtual_draws(met: np.ndarray, prior: float) -> np.ndarray:
    """Virtual games per pair: each bot's `prior` split evenly over the opponents it met."""
    degree = met.sum(axis=1).astype(np.float64)
    inverse = np.divide(1.0, degree, out=np.zeros_like(degree), where=degree > 0)
    return prior * 0.5 * (inverse[:, None] + inverse[None, :]) * met


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
    opponents: list[set[int]] = [set() for _ in range(n)]
    for a, b, s in matches:
        points[a] += s
        points[b] += 1.0 - s
        opponents[a].add(b)
        opponents[b].add(a)
    virtual = [
        (a, b, prior * 0.5 * (1 / len(opponents[a]) + 1 / len(opponents[b])))
        for a in range(n)
        for b in opponents[a]
        if a < b
    ]
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
