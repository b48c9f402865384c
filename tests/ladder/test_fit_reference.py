"""The season fit against a straightforward reference: the dense per-pair tables (`pair_table`,
`virtual_draws`), Newton's method solved directly, and the covariance as a pseudo-inverse (mean
anchor) or a plain inverse (fixed anchors). The fit takes shortcuts (an edge list, points as totals,
inexact conjugate-gradient steps); none may move a rating. Its variances are the information's
diagonal (docs/ladder.md): they must stay within SD_TOL of the exact ones, as a share."""

from __future__ import annotations

import numpy as np
import pytest

from arena.bench.ladder import synthetic_season
from arena.ladder.fit import ELO_PER_UNIT, INITIAL, fit_ratings, pair_table, virtual_draws

RATING_TOL = 1e-6 * ELO_PER_UNIT  # Elo: the fit's own tolerance (1e-6 log-odds, 4e-5 Elo)
SD_TOL = 0.05  # an interval's half-width against the exact one, as a share (measured: +1.5% to +4%)


def _reference(n: int, a, b, score, anchors: dict[int, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Ratings and covariance, group by group, the plain way."""
    anchors = anchors or {}
    games, won = pair_table(n, a, b, score)
    virtual = virtual_draws(games, 2.0)
    ratings, cov = np.full(n, np.nan), np.zeros((n, n))
    seen = np.zeros(n, dtype=bool)
    for start in range(n):
        if seen[start] or not games[start].any():
            continue
        members = {start}
        while True:  # the group: everyone reached through games
            more = set(np.flatnonzero(games[sorted(members)].sum(axis=0) > 0).tolist()) | members
            if more == members:
                break
            members = more
        idx = np.array(sorted(members))
        seen[idx] = True
        g = games[np.ix_(idx, idx)] + virtual[np.ix_(idx, idx)]
        points = (won[np.ix_(idx, idx)] + 0.5 * virtual[np.ix_(idx, idx)]).sum(axis=1)
        fixed = {k: anchors[i] / ELO_PER_UNIT for k, i in enumerate(idx) if i in anchors}
        free = np.array([k not in fixed for k in range(len(idx))])
        theta = np.zeros(len(idx))
        for k, value in fixed.items():
            theta[k] = value
        for _ in range(200):
            p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
            grad = points - (g * p).sum(axis=1)
            w = g * p * (1.0 - p)
            info = np.diag(w.sum(axis=1)) - w
            step = np.zeros(len(idx))
            if fixed:
                step[free] = np.linalg.solve(info[np.ix_(free, free)], grad[free])
            else:
                step = np.linalg.lstsq(info, grad, rcond=None)[0]
                step -= step.mean()
            theta += step * min(1.0, 2.0 / np.abs(step).max(initial=1e-300))  # no step over 2
            if np.abs(step).max() < 1e-12:
                break
        p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
        w = g * p * (1.0 - p)
        info = np.diag(w.sum(axis=1)) - w
        sub = np.zeros((len(idx), len(idx)))
        if fixed:
            sub[np.ix_(free, free)] = np.linalg.inv(info[np.ix_(free, free)])
        else:
            sub = np.linalg.pinv(info, hermitian=True)
        ratings[idx] = theta * ELO_PER_UNIT + (0.0 if fixed else INITIAL)
        cov[np.ix_(idx, idx)] = sub * ELO_PER_UNIT**2
    return ratings, cov


def _season(n: int, m: int, seed: int):
    _, a, b, score = synthetic_season(n, m, seed=seed)
    return a, b, score


def _same(fit, ratings: np.ndarray, cov: np.ndarray) -> None:
    assert np.array_equal(np.isnan(fit.ratings), np.isnan(ratings))
    rated = ~np.isnan(ratings)
    assert np.abs(fit.ratings[rated] - ratings[rated]).max() < RATING_TOL
    exact = np.sqrt(np.diag(cov))[rated]
    free = exact > 0  # not an anchor (both 0 there)
    assert np.array_equal(fit.var[rated] > 0, free)
    assert np.abs(np.sqrt(fit.var[rated][free]) / exact[free] - 1.0).max() < SD_TOL


@pytest.mark.parametrize(("n", "m"), [(12, 3000), (160, 30_000)])
def test_fit_equals_the_reference_computation(n: int, m: int) -> None:
    a, b, score = _season(n, m, seed=n)
    fit = fit_ratings(n, a, b, score)
    _same(fit, *_reference(n, a, b, score))


def test_groups_unrated_entries_and_anchors_equal_the_reference() -> None:
    """Two groups that never met (one anchored, one not a run of players), unrated entries between
    them and inside one, and a bot with a perfect score (the prior's estimate)."""
    a1, b1, s1 = _season(6, 800, seed=1)
    a2, b2, s2 = _season(5, 600, seed=2)
    second = np.array([7, 9, 10, 11, 12])  # 6 and 8 never play
    a = np.concatenate([a1, second[a2], [0, 0, 0]])
    b = np.concatenate([b1, second[b2], [1, 2, 3]])
    score = np.concatenate([s1, s2, [1.0, 1.0, 1.0]])
    for anchors in ({}, {9: 1000.0}):
        fit = fit_ratings(13, a, b, score, anchors=anchors)
        _same(fit, *_reference(13, a, b, score, anchors))
    perfect = fit_ratings(3, [0] * 10 + [1] * 20, [1] * 10 + [2] * 20, [1.0] * 10 + [0.5] * 20)
    _same(perfect, *_reference(3, [0] * 10 + [1] * 20, [1] * 10 + [2] * 20, [1.0] * 10 + [0.5] * 20))
