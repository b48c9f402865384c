"""The season fit: maximum-likelihood Bradley–Terry ratings on the Elo scale, with honest intervals.

What it will not do is show a figure the data does not support:
- **Unrated players** (no counted game) are left out: their rating and interval are NaN.
- **Disconnected groups.** Players who never met, directly or through others, have no common scale.
  The comparison graph's connected groups are fitted apart, each anchored on its own (its anchor
  players, else a mean of `anchor`), and the LOS between groups is NaN: they cannot be compared.
- **Convergence.** Newton's method must reach a step below `tol`; otherwise `FitError`.
- **Covariance.** The Fisher information of each group (made definite by the anchoring) is checked
  positive definite by a Cholesky factorisation and inverted; any variance that comes out not
  finite or not positive raises `FitError`. An interval is never silently ±0.
- **Perfect and zero scores.** The prior keeps their estimate finite, but the estimate is then the
  prior's, not the data's, so `bound` marks it and `bound_elo` gives an honest one-sided bound: the
  rating at which the perfect (or zero) score would have had a 2.5% chance, against the opponents
  met (the lower end of a 95% interval).

The prior is BayesElo's virtual draws, scaled to the games played: each player's `prior` draws are
spread over its opponents in proportion to the games it played against each, so it never outweighs
a pairing that was played often and fades as the games grow.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from arena.ladder.blas import add_transpose, definite_inverse, for_size
from arena.ladder.newton import as_information, information, newton_step

INITIAL = 1500.0
ELO_PER_UNIT = 400.0 / math.log(10.0)  # natural log-odds units -> Elo points
Z95 = 1.959963984540054


def score_of(elo: Any) -> Any:
    """The Elo curve, written once for the arena: the expected score of a side `elo` points stronger
    (a float, or a numpy array of them). Live Elo, the SPRT and the simulations all use it."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


PRIOR = 2.0  # virtual drawn games per player (BayesElo's default)
BOUND_P = 0.025  # a perfect score's bound: the rating at which it had this chance (95% two-sided)


class FitError(ArithmeticError):
    """The fit cannot give ratings the data supports (no convergence, a covariance not definite)."""


@dataclass(frozen=True)
class Fit:
    """A season fit for players 0..n-1 (Elo scale). NaN marks what cannot be rated or compared."""

    ratings: np.ndarray  # NaN: unrated (no counted game)
    cov: np.ndarray  # Elo² covariance; 0 across groups and for anchors
    games: np.ndarray
    points: np.ndarray
    iterations: int  # Newton iterations of the largest group
    group: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # -1: unrated
    anchored: tuple[tuple[int, ...], ...] = ()  # per group, its anchor players (empty: mean-anchored)
    bound: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))  # +1 lower, -1 upper
    bound_elo: np.ndarray = field(default_factory=lambda: np.zeros(0))  # the bound's value (NaN: none)
    anchor: float = INITIAL

    @property
    def rated(self) -> np.ndarray:
        return self.group >= 0

    @property
    def groups(self) -> int:
        return len(self.anchored)

    @property
    def ci95(self) -> np.ndarray:
        """Half-width of each rating's 95% interval (NaN: unrated; 0: an anchor, fixed by definition)."""
        out = Z95 * np.sqrt(np.diag(self.cov))
        out[~self.rated] = np.nan
        return out

    def is_anchor(self, i: int) -> bool:
        return bool(self.group[i] >= 0) and i in self.anchored[int(self.group[i])]

    def los(self) -> np.ndarray:
        """LOS[i, j]: probability that i is stronger than j; NaN when they cannot be compared."""
        var = np.diag(self.cov)
        diff_var = var[:, None] + var[None, :] - 2.0 * self.cov
        diff = self.ratings[:, None] - self.ratings[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            z = diff / np.sqrt(np.where(diff_var > 0.0, diff_var, np.nan))
        out = normal_cdf(z)
        same = (self.group[:, None] == self.group[None, :]) & self.rated[:, None]
        fixed = same & ~(diff_var > 0.0)  # two anchors: the difference is known exactly
        out[fixed] = np.where(diff[fixed] > 0, 1.0, np.where(diff[fixed] < 0, 0.0, 0.5))
        out[~same] = np.nan
        idx = np.flatnonzero(self.rated)
        out[idx, idx] = 0.5
        return out


def normal_cdf(z: np.ndarray) -> np.ndarray:
    """Φ(z), vectorised, NaN-preserving (Abramowitz & Stegun 7.1.26 for erf: |error| < 1.5e-7)."""
    z = np.asarray(z, dtype=np.float64)
    x = np.abs(z) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = 1.0 - poly * np.exp(-x * x)
    return 0.5 * (1.0 + np.sign(z) * erf)


def pair_games(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Games N[i, j] between players i and j (symmetric), from int64 arrays of the matches' sides."""
    return add_transpose(np.bincount(a * n + b, minlength=n * n).reshape(n, n).astype(np.float64))


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
    games = pair_games(n, a, b)
    won = np.bincount(a * n + b, weights=s, minlength=n * n) + np.bincount(
        b * n + a, weights=1.0 - s, minlength=n * n
    )
    return games, won.reshape(n, n)


def virtual_draws(games: np.ndarray, prior: float) -> np.ndarray:
    """Virtual games per pair: each player's `prior` spread over its opponents in proportion to the
    games it played against each (so a pair met often is never outweighed by the prior)."""
    total = games.sum(axis=1)
    share = np.divide(games, total[:, None], out=np.zeros_like(games), where=total[:, None] > 0)
    return prior * 0.5 * (share + share.T)


def components(games: np.ndarray) -> list[np.ndarray]:
    """The connected groups of the comparison graph among players with games, largest first."""
    n = len(games)
    met = games > 0
    label = np.full(n, -1, dtype=np.int64)
    groups: list[np.ndarray] = []
    for start in np.flatnonzero(met.any(axis=1)):
        if label[start] >= 0:
            continue
        label[start] = len(groups)
        frontier = np.array([start])
        while frontier.size:
            reached = met[frontier].any(axis=0) & (label < 0)
            frontier = np.flatnonzero(reached)
            label[frontier] = len(groups)
        groups.append(np.flatnonzero(label == len(groups)))
    groups.sort(key=lambda g: (-len(g), int(g[0])))
    return groups


def fit_ratings(
    n: int,
    a: Sequence[int] | np.ndarray,
    b: Sequence[int] | np.ndarray,
    score_a: Sequence[float] | np.ndarray,
    *,
    anchor: float = INITIAL,
    prior: float = PRIOR,
    anchors: Mapping[int, float] | None = None,
    tol: float = 1e-7,
    max_iter: int = 100,
) -> Fit:
    """Maximum-likelihood Bradley–Terry ratings for players 0..n-1 (see the module docstring).

    `anchors` fixes players at given Elo ratings (their group is anchored by them instead of by a
    mean of `anchor`). `prior` is the virtual draws per player; 0 gives the plain MLE, which has no
    finite answer for a perfect or zero score (`FitError` says so).

    The only n×n tables are the games and, per group, the games with the virtual draws (the
    information's pair weights); points enter the likelihood through each player's total only.
    """
    anchors = dict(anchors or {})
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    s = np.asarray(score_a, dtype=np.float64)
    games = pair_games(n, a, b)
    real_games = np.bincount(a, minlength=n) + np.bincount(b, minlength=n)
    real_games = real_games.astype(np.float64)
    real_points = np.bincount(a, weights=s, minlength=n) + np.bincount(b, weights=1.0 - s, minlength=n)
    perfect = (real_games > 0) & (real_points >= real_games)
    zero = (real_games > 0) & (real_points <= 0)
    if prior <= 0 and (perfect | zero).any():
        who = int(np.flatnonzero(perfect | zero)[0])
        raise FitError(
            f"player {who} has a {'perfect' if perfect[who] else 'zero'} score: without a prior "
            "there is no finite maximum-likelihood rating"
        )
    # virtual_draws(games, prior) is games[i, j] · (c[i] + c[j]), c = prior / (2 · games of each)
    c = np.divide(0.5 * max(prior, 0.0), real_games, out=np.zeros(n), where=real_games > 0)
    with for_size(n):
        virtual_total = c * real_games + games @ c  # each player's virtual games
    points = real_points + 0.5 * virtual_total
    totals = real_games + virtual_total
    ratings = np.full(n, np.nan)
    cov: np.ndarray | None = None
    group = np.full(n, -1, dtype=np.int64)
    anchored: list[tuple[int, ...]] = []
    iterations = 0
    for g, idx in enumerate(components(games)):
        group[idx] = g
        members = set(idx.tolist())
        fixed = {int(np.searchsorted(idx, i)): elo for i, elo in anchors.items() if i in members}
        anchored.append(tuple(int(idx[k]) for k in sorted(fixed)))
        whole = len(idx) == n
        with for_size(len(idx)):
            weights = _with_virtual(games[_block(idx)], c[idx])
            theta, sub_cov, its = _fit_group(weights, points[idx], totals[idx], fixed, tol, max_iter)
        iterations = max(iterations, its) if g else its
        ratings[idx] = theta * ELO_PER_UNIT + (0.0 if fixed else anchor)
        sub_cov *= ELO_PER_UNIT**2
        if whole:
            cov = sub_cov
        else:
            cov = np.zeros((n, n)) if cov is None else cov
            cov[_block(idx)] = sub_cov
    cov = np.zeros((n, n)) if cov is None else cov
    bound = np.where(perfect, 1, np.where(zero, -1, 0)).astype(np.int8)
    bound_elo = _bounds(games, ratings, bound)
    return Fit(
        ratings, cov, real_games, real_points, iterations, group, tuple(anchored), bound, bound_elo, anchor
    )


def _block(idx: np.ndarray) -> tuple[slice, slice] | tuple[np.ndarray, np.ndarray]:
    """The index of matrix[idx][:, idx] (sorted idx): slices when idx is one run of players (views,
    no gather), else an open mesh."""
    if len(idx) and idx[-1] - idx[0] == len(idx) - 1:
        run = slice(int(idx[0]), int(idx[-1]) + 1)
        return run, run
    rows, cols = np.ix_(idx, idx)
    return rows, cols


def _with_virtual(games: np.ndarray, c: np.ndarray) -> np.ndarray:
    """games + virtual draws, a new matrix: games[i, j] · (1 + c[i] + c[j])."""
    factor = np.add.outer(c, c)
    factor += 1.0
    factor *= games
    return factor


def _fit_group(
    games: np.ndarray,
    points: np.ndarray,
    totals: np.ndarray,
    fixed: dict[int, float],
    tol: float,
    max_iter: int,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Newton's method for one connected group: (theta in log-odds units, covariance, iterations).
    `games`: games and virtual draws per pair; `points` and `totals`: each player's.

    Anchored by `fixed` (local index -> Elo) when given, else by a mean of 0 (the information plus
    J/m, J the all-ones matrix, is definite and its inverse minus J/m is the constrained covariance)."""
    m = len(games)
    free = np.ones(m, dtype=bool)
    theta = np.log((points + 0.5) / (totals - points + 0.5))  # a start near the answer
    for k, elo in fixed.items():
        free[k] = False
        theta[k] = elo / ELO_PER_UNIT
    if not fixed:
        theta -= theta.mean()
    biggest = math.inf
    iterations = 0
    for iterations in range(1, max_iter + 1):  # noqa: B007
        h, grad = information(games, points, theta)
        step = np.zeros(m)
        if fixed:
            step[free] = _step(h[np.ix_(free, free)], h.sum(axis=1)[free], grad[free], 0.0)
        else:
            step = _step(h, h.sum(axis=1), grad, 1.0 / m)
        biggest = float(np.abs(step).max(initial=0.0))
        if not math.isfinite(biggest):
            raise FitError("the season fit diverged (a non-finite Newton step)")
        if biggest > 2.0:  # damp early steps: p is far from the optimum
            step *= 2.0 / biggest
        theta += step
        if not fixed:
            theta -= theta.mean()
        if biggest < tol:
            break
    else:
        raise FitError(
            f"the season fit did not converge in {max_iter} Newton iterations "
            f"(last step {biggest * ELO_PER_UNIT:.3g} Elo)"
        )
    h = information(games, points, theta)[0]
    if fixed:
        cov = np.zeros((m, m))
        cov[np.ix_(free, free)] = _definite_inverse(as_information(h, 0.0)[np.ix_(free, free)])
    else:
        cov = _definite_inverse(as_information(h, 1.0 / m))
        cov -= 1.0 / m
    var = np.diag(cov)[free]
    if not (np.isfinite(var).all() and (var > 0).all()):
        raise FitError("the season fit's covariance has a variance that is not finite and positive")
    return theta, cov, iterations


def _step(h: np.ndarray, diag: np.ndarray, grad: np.ndarray, shift: float) -> np.ndarray:
    try:
        return newton_step(h, diag, grad, shift)
    except np.linalg.LinAlgError as exc:
        raise FitError(f"the season fit's Newton step failed ({exc})") from None


def _definite_inverse(matrix: np.ndarray) -> np.ndarray:
    """The inverse of a symmetric matrix that must be positive definite (Cholesky checks it)."""
    inverse = definite_inverse(matrix, overwrite=True)
    if inverse is None:
        raise FitError("the season fit's information matrix is not positive definite")
    return inverse


def _bounds(games: np.ndarray, ratings: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """For each perfect (zero) score, the rating at which that score had a BOUND_P chance against
    the opponents met, at their fitted ratings: a one-sided 97.5% lower (upper) bound."""
    out = np.full(len(ratings), np.nan)
    target = math.log(BOUND_P)
    for i in np.flatnonzero(bound):
        opp = np.flatnonzero(games[i] > 0)
        count, theirs = games[i, opp], ratings[opp]
        sign = float(bound[i])  # +1: P(all won) rises with r; -1: P(all lost) falls with r

        def log_chance(r: float, count=count, theirs=theirs, sign=sign) -> float:
            x = sign * (r - theirs) / ELO_PER_UNIT
            return float(-(count * np.logaddexp(0.0, -x)).sum())

        lo, hi = float(theirs.min()) - 4000.0, float(theirs.max()) + 4000.0
        for _ in range(60):  # bisection: log_chance is monotone in r
            mid = 0.5 * (lo + hi)
            if (log_chance(mid) < target) == (sign > 0):
                lo = mid
            else:
                hi = mid
        out[i] = 0.5 * (lo + hi)
    return out
