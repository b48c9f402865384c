"""The dense season fit, kept as the reference the sparse one is measured and tested against: the
n×n games table, Newton's method solved directly, and the exact covariance (the inverse of the
information plus J/m, minus J/m). One connected group, mean-anchored, BayesElo's prior as the fit's.
O(n²) memory and O(n³) time: for benches and tests, never the ladder."""

from __future__ import annotations

import numpy as np

from arena.ladder.fit import ELO_PER_UNIT, INITIAL, PRIOR, pair_table, virtual_draws


def dense_fit(
    n: int, a: np.ndarray, b: np.ndarray, score: np.ndarray, *, prior: float = PRIOR, tol: float = 1e-9
) -> tuple[np.ndarray, np.ndarray, int]:
    """(ratings in Elo, each rating's variance in Elo², Newton iterations) of one connected group of
    players 0..n-1 that all played."""
    games, won = pair_table(n, a, b, score)
    virtual = virtual_draws(games, prior)
    g = games + virtual
    points = (won + 0.5 * virtual).sum(axis=1)
    totals = g.sum(axis=1)
    theta = np.log((points + 0.5) / (totals - points + 0.5))
    theta -= theta.mean()
    iterations = 0
    for iterations in range(1, 101):  # noqa: B007
        p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
        grad = points - (g * p).sum(axis=1)
        w = g * p * (1.0 - p)
        info = np.diag(w.sum(axis=1)) - w + 1.0 / n
        step = np.linalg.solve(info, grad)
        step -= step.mean()
        biggest = float(np.abs(step).max())
        theta += step * min(1.0, 2.0 / max(biggest, 1e-300))
        theta -= theta.mean()
        if biggest < tol:
            break
    p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
    w = g * p * (1.0 - p)
    cov = np.linalg.inv(np.diag(w.sum(axis=1)) - w + 1.0 / n) - 1.0 / n
    return theta * ELO_PER_UNIT + INITIAL, np.diag(cov) * ELO_PER_UNIT**2, iterations
