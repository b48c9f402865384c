"""The sparse season fit (edge list, conjugate-gradient Newton steps, intervals from the information's
diagonal) against the dense reference (`arena.bench.dense_fit`): the same ratings to 0.1 Elo, a warm
start that lands on the same answer, intervals equal (exact groups) or within a few percent (larger
ones), and nothing n×n kept."""

from __future__ import annotations

import numpy as np
import pytest

from arena.bench.dense_fit import dense_fit
from arena.bench.ladder import synthetic_season
from arena.bench.ratings import matchmaking_season
from arena.ladder.fit import ELO_PER_UNIT, EXACT_MAX, Pairs, fit_pairs, fit_ratings

ELO_TOL = 0.1
SD_SHARE = 0.05  # a large group's interval against the exact one (measured: within 1.5% here)
SAME = 2e-6 * ELO_PER_UNIT  # two fits of the same results, each within the fit's tol (1e-6 log-odds)
SAME_VAR = 1e-3  # ... and their variances, from the information at each one's last Newton iterate


@pytest.mark.parametrize(("bots", "matches", "seed"), [(8, 600, 1), (40, 5000, 2), (150, 30_000, 3)])
def test_sparse_and_dense_fits_agree_to_a_tenth_of_an_elo(bots: int, matches: int, seed: int) -> None:
    _, a, b, score = synthetic_season(bots, matches, seed=seed)
    fit = fit_ratings(bots, a, b, score)
    ratings, var, _ = dense_fit(bots, a, b, score)
    assert np.abs(fit.ratings - ratings).max() < ELO_TOL
    if bots <= EXACT_MAX:  # the exact covariance
        np.testing.assert_allclose(fit.var, var, rtol=1e-6)
    else:  # the diagonal approximation
        assert np.abs(np.sqrt(fit.var / var) - 1.0).max() < SD_SHARE


def test_a_warm_start_converges_to_the_same_answer_in_fewer_iterations() -> None:
    _, a, b, score = synthetic_season(300, 60_000, seed=4)
    cold = fit_ratings(300, a, b, score)
    more_a, more_b = np.concatenate([a, [0, 1, 2]]), np.concatenate([b, [5, 6, 7]])
    more_score = np.concatenate([score, [1.0, 0.0, 0.5]])
    fresh = fit_ratings(300, more_a, more_b, more_score)
    warm = fit_ratings(300, more_a, more_b, more_score, warm=cold.ratings)
    assert np.abs(warm.ratings - fresh.ratings).max() < SAME
    assert warm.iterations < fresh.iterations
    # a start far off (every rating 300 Elo out, in a random direction) still lands on it
    rng = np.random.default_rng(5)
    far = fit_ratings(300, more_a, more_b, more_score, warm=fresh.ratings + rng.choice([-300.0, 300.0], 300))
    assert np.abs(far.ratings - fresh.ratings).max() < SAME
    np.testing.assert_allclose(far.var, fresh.var, rtol=SAME_VAR)


def test_nothing_kept_is_n_by_n() -> None:
    bots = 500
    _, a, b, score = synthetic_season(bots, 20_000, seed=6)
    pairs = Pairs.from_matches(bots, a, b, score)
    fit = fit_pairs(pairs)
    sizes = [np.asarray(x).size for x in vars(fit).values() if isinstance(x, np.ndarray)]
    assert max(sizes) <= max(bots, len(pairs.u)) < bots * bots // 10
    assert fit.exact == {}  # one group of 500: no dense covariance, a two-level one of m×K
    assert all(two.q.size <= bots * 128 for _, two in fit.two_level.values())
    los = fit.los_pairs([0, 1], [1, 0])
    assert los[0] + los[1] == pytest.approx(1.0)


def test_a_matchmaking_ladders_intervals_are_near_the_exact_ones() -> None:
    """Paired on neighbours in rating again and again (the matchmaking rule before the repeat cap: the
    hard case), the strongest and weakest bots' intervals need the two-level covariance: the
    information's diagonal alone is 18% short for one of them."""
    _, a, b, score = matchmaking_season(100, 60, seed=0, capped=False)
    fit = fit_ratings(100, a, b, score)
    _, var, _ = dense_fit(100, a, b, score)
    share = np.sqrt(fit.var / var)
    assert 0.95 < share.min() and share.max() < 1.06
    diagonal_only = 1.0 / np.sqrt(fit.info) * ELO_PER_UNIT / np.sqrt(var)
    assert diagonal_only.min() < 0.85
    los = fit.los_pairs(np.arange(99), np.arange(1, 100))
    assert ((los >= 0.0) & (los <= 1.0)).all()
    np.testing.assert_allclose(los + fit.los_pairs(np.arange(1, 100), np.arange(99)), 1.0, atol=1e-6)
