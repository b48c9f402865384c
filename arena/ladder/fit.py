"""The season fit: maximum-likelihood Bradley–Terry ratings on the Elo scale, with honest intervals.

What it will not do is show a figure the data does not support:
- **Unrated players** (no counted game) are left out: their rating and interval are NaN.
- **Disconnected groups.** Players who never met, directly or through others, have no common scale.
  The comparison graph's connected groups are fitted apart, each anchored on its own (its anchor
  players, else a mean of `anchor`), and the LOS between groups is NaN: they cannot be compared.
- **Convergence.** Newton's method stops when the error left after its last step is below `tol`
  (log-odds units), else `FitError`. That error is estimated from the step s: an inexact Newton step
  leaves about r·s from its conjugate gradients (r their residual goal) and, Newton's convergence
  being quadratic, about 0.4·s² from the model's curvature (measured), so it stops once
  s·(s + r) < tol. That spares the last iteration, which only confirmed the answer (a third of a
  warm refit's work). The goal r is the loosest that keeps r·s under both (`forcing`).
- **Perfect and zero scores.** The prior keeps their estimate finite, but the estimate is then the
  prior's, not the data's, so `bound` marks it and `bound_elo` gives an honest one-sided bound: the
  rating at which the perfect (or zero) score would have had a 2.5% chance, against the opponents
  met (the lower end of a 95% interval).

Sparse throughout: the fit works on the comparison graph's edge list (the pairs that met), never an
n×n matrix, so it costs O(players + pairs). The Fisher information is the graph's weighted Laplacian;
each Newton step is solved by preconditioned conjugate gradients (`arena.ladder.newton`), warm-started
from a previous fit's ratings when given.

**Intervals**: a group of at most EXACT_MAX players gets its exact covariance (EXACT_MAX² figures);
a larger mean-anchored one the two-level approximation of `arena.ladder.intervals` (exact on runs of
neighbouring ratings, the information's diagonal on the rest), an anchored one the diagonal alone.
The shown half-width (`ci95`) is the normal one widened by twice the prior's pull
(`arena.ladder.pull`), without which the strongest and weakest bots of sparse or wide ladders were
covered 81-90% of the time. docs/ladder.md has their measured accuracy and coverage.

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

from arena import metrics
from arena.ladder.intervals import Coarse, coarse
from arena.ladder.newton import (
    CG_RTOL,
    QUADRATIC,
    Graph,
    StepError,
    components,
    forcing,
    information,
    newton_step,
    weights,
)
from arena.ladder.pairs import Pairs, pair_table, virtual_draws  # noqa: F401 - the tables, re-exported
from arena.ladder.pull import PULL_WIDENING, prior_pull

INITIAL = 1500.0
ELO_PER_UNIT = 400.0 / math.log(10.0)  # natural log-odds units -> Elo points
Z95 = 1.959963984540054


def score_of(elo: Any) -> Any:
    """The Elo curve, written once for the arena: the expected score of a side `elo` points stronger
    (a float, or a numpy array of them). Live Elo, the SPRT and the simulations all use it."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


PRIOR = 2.0  # virtual drawn games per player (BayesElo's default)
EXACT_MAX = 64  # players: a group this small gets its exact covariance (64² figures); larger, the diagonal
BOUND_P = 0.025  # a perfect score's bound: the rating at which it had this chance (95% two-sided)


class FitError(ArithmeticError):
    """The fit cannot give ratings the data supports (no convergence, an information not definite)."""


@dataclass(frozen=True)
class Fit:
    """A season fit for players 0..n-1 (Elo scale). NaN marks what cannot be rated or compared."""

    ratings: np.ndarray  # NaN: unrated (no counted game)
    var: np.ndarray  # Elo² variance of each rating; 0 for anchors, NaN unrated
    games: np.ndarray
    points: np.ndarray
    iterations: int  # Newton iterations of the largest group
    group: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # -1: unrated
    anchored: tuple[tuple[int, ...], ...] = ()  # per group, its anchor players (empty: mean-anchored)
    bound: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))  # +1 lower, -1 upper
    bound_elo: np.ndarray = field(default_factory=lambda: np.zeros(0))  # the bound's value (NaN: none)
    anchor: float = INITIAL
    info: np.ndarray = field(default_factory=lambda: np.zeros(0))  # each player's information d_i
    pair_key: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # u·n + v, sorted
    pair_info: np.ndarray = field(default_factory=lambda: np.zeros(0))  # each pair's information h_uv
    exact: dict[int, tuple[np.ndarray, np.ndarray]] = field(
        default_factory=dict
    )  # small group -> (players, Elo² cov)
    two_level: dict[int, tuple[np.ndarray, Coarse]] = field(
        default_factory=dict
    )  # large mean-anchored group -> (players, log-odds² covariance: arena.ladder.intervals)
    refitted: float = 0.0  # games added by `arena.ladder.refit` since the last full fit (0: a full fit)
    pull: np.ndarray = field(
        default_factory=lambda: np.zeros(0)
    )  # the prior's pull, Elo (`arena.ladder.pull`)

    @property
    def rated(self) -> np.ndarray:
        return self.group >= 0

    @property
    def groups(self) -> int:
        return len(self.anchored)

    @property
    def ci95(self) -> np.ndarray:
        """Half-width of each rating's 95% interval (NaN: unrated; 0: an anchor, fixed by definition):
        the normal interval widened by PULL_WIDENING times the prior's pull (`arena.ladder.pull`), so
        that the strongest and weakest bots' intervals cover too."""
        if len(self.pull) != len(self.var):
            return self.ci95_normal
        return self.ci95_normal + PULL_WIDENING * self.pull

    @property
    def ci95_normal(self) -> np.ndarray:
        """The normal (Wald) half-width alone, Z95 · sd: what `ci95` widens (and the bench's baseline)."""
        return Z95 * np.sqrt(self.var)

    def is_anchor(self, i: int) -> bool:
        return bool(self.group[i] >= 0) and i in self.anchored[int(self.group[i])]

    def los_pairs(self, i: Sequence[int] | np.ndarray, j: Sequence[int] | np.ndarray) -> np.ndarray:
        """LOS of each pair (i[k], j[k]): the probability that i[k] is stronger; NaN when they cannot
        be compared (unrated, or groups that never met). O(1) a pair: no n×n table."""
        i = np.asarray(i, dtype=np.int64)
        j = np.asarray(j, dtype=np.int64)
        if not len(i):
            return np.zeros(0)
        diff_var = self.diff_var_pairs(i, j)
        with np.errstate(divide="ignore", invalid="ignore"):
            diff = self.ratings[i] - self.ratings[j]
            z = diff / np.sqrt(np.where(diff_var > 0.0, diff_var, np.nan))
        out = normal_cdf(z)
        same = (self.group[i] == self.group[j]) & (self.group[i] >= 0)
        fixed = same & ~(diff_var > 0.0)  # two anchors: the difference is known exactly
        out[fixed] = np.where(diff[fixed] > 0, 1.0, np.where(diff[fixed] < 0, 0.0, 0.5))
        out[~same] = np.nan
        out[same & (i == j)] = 0.5
        return out

    def diff_var_pairs(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """Elo² variance of each difference ratings[i[k]] - ratings[j[k]] (meaningful in one group)."""
        n = len(self.ratings)
        key = np.minimum(i, j) * n + np.maximum(i, j)
        at = np.searchsorted(self.pair_key, key)
        at = np.minimum(at, max(len(self.pair_key) - 1, 0))
        h = np.where(self.pair_key[at] == key, self.pair_info[at], 0.0) if len(self.pair_key) else 0.0 * key
        with np.errstate(divide="ignore", invalid="ignore"):
            cross = h / (self.info[i] * self.info[j]) * ELO_PER_UNIT**2
            free = (self.var[i] > 0) & (self.var[j] > 0)
            cross = np.where(free, cross, 0.0)
            for g, (members, cov) in self.exact.items():  # small groups: the exact covariance
                here = np.flatnonzero((self.group[i] == g) & (self.group[j] == g))
                if len(here):
                    cross[here] = cov[np.searchsorted(members, i[here]), np.searchsorted(members, j[here])]
            diff_var = self.var[i] + self.var[j] - 2.0 * cross
            for g, (members, two) in self.two_level.items():  # large groups: B's quadratic form
                here = np.flatnonzero((self.group[i] == g) & (self.group[j] == g))
                if len(here):
                    li, lj = np.searchsorted(members, i[here]), np.searchsorted(members, j[here])
                    quad = two.cov(li, li) + two.cov(lj, lj) - 2.0 * two.cov(li, lj)
                    diff_var[here] = quad * ELO_PER_UNIT**2
        out: np.ndarray = diff_var
        return out

    def los(self) -> np.ndarray:
        """LOS[i, j] for every pair: an n×n table, for small fits and tests only (the standings ask
        `los_pairs` for the pairs they show)."""
        n = len(self.ratings)
        i, j = np.divmod(np.arange(n * n), n)
        return self.los_pairs(i, j).reshape(n, n)


def normal_cdf(z: np.ndarray) -> np.ndarray:
    """Φ(z), vectorised, NaN-preserving (Abramowitz & Stegun 7.1.26 for erf: |error| < 1.5e-7)."""
    z = np.asarray(z, dtype=np.float64)
    x = np.abs(z) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = 1.0 - poly * np.exp(-x * x)
    return 0.5 * (1.0 + np.sign(z) * erf)


def fit_ratings(
    n: int,
    a: Sequence[int] | np.ndarray,
    b: Sequence[int] | np.ndarray,
    score_a: Sequence[float] | np.ndarray,
    *,
    anchor: float = INITIAL,
    prior: float = PRIOR,
    anchors: Mapping[int, float] | None = None,
    tol: float = 1e-6,
    max_iter: int = 100,
    warm: np.ndarray | None = None,
) -> Fit:
    """Maximum-likelihood Bradley–Terry ratings for players 0..n-1 from a list of matches (see
    `fit_pairs`, which does the work on the results aggregated per pair)."""
    pairs = Pairs.from_matches(n, a, b, score_a)
    return fit_pairs(
        pairs, anchor=anchor, prior=prior, anchors=anchors, tol=tol, max_iter=max_iter, warm=warm
    )


@metrics.timed(metrics.fit_done)
def fit_pairs(
    pairs: Pairs,
    *,
    anchor: float = INITIAL,
    prior: float = PRIOR,
    anchors: Mapping[int, float] | None = None,
    tol: float = 1e-6,
    max_iter: int = 100,
    warm: np.ndarray | None = None,
) -> Fit:
    """Maximum-likelihood Bradley–Terry ratings (see the module docstring).

    `anchors` fixes players at given Elo ratings (their group is anchored by them instead of by a
    mean of `anchor`). `prior` is the virtual draws per player; 0 gives the plain MLE, which has no
    finite answer for a perfect or zero score (`FitError` says so). `warm`: ratings (Elo, NaN for
    none) of an earlier fit to start Newton's method from; the answer is the same, found sooner."""
    anchors = dict(anchors or {})
    n, real_games, real_points = pairs.n, pairs.player_games, pairs.player_points
    perfect = (real_games > 0) & (real_points >= real_games)
    zero = (real_games > 0) & (real_points <= 0)
    if prior <= 0 and (perfect | zero).any():
        who = int(np.flatnonzero(perfect | zero)[0])
        raise FitError(
            f"player {who} has a {'perfect' if perfect[who] else 'zero'} score: without a prior "
            "there is no finite maximum-likelihood rating"
        )
    # the virtual draws of a pair are games · (c[u] + c[v]), c = prior / (2 · games of each)
    c = np.divide(0.5 * max(prior, 0.0), real_games, out=np.zeros(n), where=real_games > 0)
    u, v, games = pairs.u, pairs.v, pairs.games
    w, virtual_total, pair_key = weights(n, u, v, games, c)
    points = real_points + 0.5 * virtual_total
    played = real_games > 0
    label = components(n, u, v, played)
    roots = np.unique(label[played])
    sizes = np.bincount(label[played], minlength=n)[roots]
    order = sorted(range(len(roots)), key=lambda k: (-int(sizes[k]), int(roots[k])))
    ratings, var, info = np.full(n, np.nan), np.full(n, np.nan), np.zeros(n)
    pair_info = np.zeros(0)  # each pair's information h_uv, filled group by group
    group = np.full(n, -1, dtype=np.int64)
    anchored: list[tuple[int, ...]] = []
    exact: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    two_level: dict[int, tuple[np.ndarray, Coarse]] = {}
    iterations = 0
    for g, k in enumerate(order):
        idx = np.flatnonzero(label == roots[k])
        group[idx] = g
        local = np.full(n, -1, dtype=np.int64)
        local[idx] = np.arange(len(idx))
        on: np.ndarray | slice
        if len(idx) == n:  # one group of everyone (a large ladder's usual case): no copies
            on, graph = slice(None), Graph(n, u, v, w)
        else:
            on = np.flatnonzero(label[u] == roots[k])
            graph = Graph(len(idx), local[u[on]], local[v[on]], w[on])
        fixed = {int(local[i]): elo for i, elo in anchors.items() if 0 <= i < n and local[i] >= 0}
        anchored.append(tuple(int(idx[j]) for j in sorted(fixed)))
        start = None if warm is None else warm[idx]
        theta, h, d, its = _fit_group(
            graph, points[idx], real_points[idx], real_games[idx], fixed, start, anchor, tol, max_iter
        )
        iterations = its if g == 0 else max(iterations, its)
        ratings[idx] = theta * ELO_PER_UNIT + (0.0 if fixed else anchor)
        info[idx] = d
        if isinstance(on, slice):  # one group of everyone: its weights are the pairs' own
            pair_info = h
        else:
            pair_info = pair_info if len(pair_info) == len(u) else np.zeros(len(u))
            pair_info[on] = h
        if graph.m <= EXACT_MAX:
            cov = _exact_cov(graph, h, d, fixed) * ELO_PER_UNIT**2
            exact[g] = (idx, cov)
            var[idx] = np.diag(cov)
        elif fixed:
            var[idx] = _variances(d, fixed) * ELO_PER_UNIT**2
        else:
            two = coarse(graph, h, d, theta)
            two_level[g] = (idx, two)
            var[idx] = _checked(two.variances()) * ELO_PER_UNIT**2
    if len(pair_info) != len(u):  # no group (no game played): no information on any pair
        pair_info = np.zeros(len(u))
    bound = np.where(perfect, 1, np.where(zero, -1, 0)).astype(np.int8)
    bound_elo = _bounds(pairs, ratings, bound)
    pull = prior_pull(pairs, ratings, info, prior)
    pull[var == 0.0] = 0.0  # an anchor: fixed, no interval to widen
    return Fit(
        ratings,
        var,
        real_games,
        real_points,
        iterations,
        group,
        tuple(anchored),
        bound,
        bound_elo,
        anchor,
        info,
        pair_key,
        pair_info,
        exact,
        two_level,
        pull=pull,
    )


def _exact_cov(graph: Graph, h: np.ndarray, d: np.ndarray, fixed: dict[int, float]) -> np.ndarray:
    """A small group's exact covariance (log-odds units²): the inverse of its information, on the free
    players (anchors fixed), or its pseudo-inverse under the mean anchor. At most EXACT_MAX² figures."""
    m = graph.m
    info = np.zeros((m, m))
    np.add.at(info, (graph.u, graph.v), -h)
    info += info.T
    info[np.diag_indices(m)] += d
    try:
        if fixed:
            free = np.ones(m, dtype=bool)
            free[list(fixed)] = False
            cov: np.ndarray = np.zeros((m, m))
            np.linalg.cholesky(info[np.ix_(free, free)])  # definite, or LinAlgError
            cov[np.ix_(free, free)] = np.linalg.inv(info[np.ix_(free, free)])
        else:
            shifted = info + 1.0 / m
            np.linalg.cholesky(shifted)
            cov = np.linalg.inv(shifted) - 1.0 / m
    except np.linalg.LinAlgError:
        raise FitError("the season fit's information matrix is not positive definite") from None
    var = np.diag(cov)
    if fixed:
        var = np.delete(var, list(fixed))
    if not (np.isfinite(var).all() and (var > 0).all()):
        raise FitError("the season fit's covariance has a variance that is not finite and positive")
    return 0.5 * (cov + cov.T)


def _checked(var: np.ndarray) -> np.ndarray:
    if not (np.isfinite(var).all() and (var > 0).all()):
        raise FitError("the season fit's covariance has a variance that is not finite and positive")
    return var


def _variances(d: np.ndarray, fixed: dict[int, float]) -> np.ndarray:
    """Each rating's variance (log-odds units²) from the information's diagonal: 1/d, corrected for the
    mean anchor; 0 for an anchor (see the module docstring for what it approximates)."""
    if not (np.isfinite(d).all() and (d > 0).all()):
        raise FitError("the season fit's information has a player with no information (not definite)")
    v = 1.0 / d
    if fixed:
        v[list(fixed)] = 0.0
        return v
    m = len(d)
    return v * (1.0 - 2.0 / m) + v.sum() / m**2


def _fit_group(
    graph: Graph,
    points: np.ndarray,
    real_points: np.ndarray,
    real_games: np.ndarray,
    fixed: dict[int, float],
    warm: np.ndarray | None,
    anchor: float,
    tol: float,
    max_iter: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Newton's method for one connected group: (theta in log-odds units, the information's pair
    weights at theta and each player's total of them, iterations). `points`: each player's with the virtual draws. Anchored by
    `fixed` (local index -> Elo) when given, else by a mean of 0."""
    m = graph.m
    free = np.ones(m, dtype=bool)
    theta = np.log((real_points + 0.5) / (real_games - real_points + 0.5))  # a start near the answer
    if warm is not None:
        known = np.isfinite(warm)
        theta[known] = (warm[known] - (0.0 if fixed else anchor)) / ELO_PER_UNIT
    for k, elo in fixed.items():
        free[k] = False
        theta[k] = elo / ELO_PER_UNIT
    if not fixed:
        theta -= theta.mean()
    biggest = math.inf
    iterations = 0
    h: np.ndarray | None = None  # the last iteration's weights, written over by the next
    rtol = CG_RTOL
    for iterations in range(1, max_iter + 1):
        h, grad, d = information(graph, points, theta, out=h)
        if iterations > 1 and biggest <= 1.0:  # Newton's next step, about 0.4·s² (quadratic)
            rtol = forcing(QUADRATIC * biggest**2, tol)
        try:
            step = newton_step(graph, h, d, grad, free if fixed else None, rtol)
        except StepError as exc:
            raise FitError(f"the season fit's Newton step failed ({exc})") from None
        biggest = float(np.abs(step).max(initial=0.0))
        if not math.isfinite(biggest):
            raise FitError("the season fit diverged (a non-finite Newton step)")
        if biggest > 2.0:  # damp early steps: p is far from the optimum
            step *= 2.0 / biggest
        theta += step
        if not fixed:
            theta -= theta.mean()
        if biggest * (biggest + rtol) < tol:  # the error left: see the module docstring
            break
    else:
        raise FitError(
            f"the season fit did not converge in {max_iter} Newton iterations "
            f"(last step {biggest * ELO_PER_UNIT:.3g} Elo)"
        )
    if graph.m > EXACT_MAX:  # the last iteration's weights: theta moved by under √tol since
        return theta, h, d, iterations
    h, _, d = information(graph, points, theta, out=h)
    return theta, h, d, iterations


def _bounds(pairs: Pairs, ratings: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """For each perfect (zero) score, the rating at which that score had a BOUND_P chance against
    the opponents met, at their fitted ratings: a one-sided 97.5% lower (upper) bound."""
    out = np.full(len(ratings), np.nan)
    target = math.log(BOUND_P)
    for i in np.flatnonzero(bound):
        mine = (pairs.u == i) | (pairs.v == i)
        count = pairs.games[mine]
        theirs = ratings[np.where(pairs.u[mine] == i, pairs.v[mine], pairs.u[mine])]
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
