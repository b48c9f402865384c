"""The incremental refit (`arena.ladder.refit`): one step from the previous fit with the new results'
gradient and the previous two-level covariance, corrected against every pair's gradient until it is
the full fit's to 0.01 Elo, with intervals that narrow as games come; its coarse covariance built
again past REFIT_SHARE (no Newton iteration); and the full fit whenever the step does not apply (a
new player, anchors, a small pair list)."""

from __future__ import annotations

import numpy as np
import pytest

from arena.bench.ladder import synthetic_season
from arena.ladder.fit import ELO_PER_UNIT, Fit, Pairs, fit_pairs
from arena.ladder.refit import REFIT_SHARE, refit

ELO = 0.01  # a refit's rating off the full fit's, Elo (the corrections' goal; measured ~1e-4)
SD_SHARE = 0.03  # its interval against the full fit's (measured within 1.7%)
SAME = 2e-6 * ELO_PER_UNIT  # the full fit, warm or cold: each within the fit's tol


@pytest.fixture(scope="module")
def season() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    _, a, b, score = synthetic_season(1000, 103_000, seed=11)
    return a, b, score


def _pairs(a: np.ndarray, b: np.ndarray, score: np.ndarray, lo: int, hi: int, n: int = 1000) -> Pairs:
    return Pairs.from_matches(n, a[lo:hi], b[lo:hi], score[lo:hi])


@pytest.fixture(scope="module")
def base(season: tuple[np.ndarray, ...]) -> Fit:
    a, b, score = season
    return fit_pairs(_pairs(a, b, score, 0, 100_000))


def test_a_refit_is_the_full_fit_without_newtons_iterations(
    season: tuple[np.ndarray, ...], base: Fit
) -> None:
    a, b, score = season
    fit = base
    for lo in (100_000, 100_200):
        pairs = _pairs(a, b, score, 0, lo + 200)
        fit = refit(fit, pairs, _pairs(a, b, score, lo, lo + 200), min_pairs=0)
        full = fit_pairs(pairs)
        assert fit.iterations == 0  # no Newton iteration: the step and its corrections
        assert np.abs(fit.ratings - full.ratings).max() < ELO
        assert np.abs(np.sqrt(fit.var / full.var) - 1.0).max() < SD_SHARE
        assert fit.ratings.mean() == pytest.approx(1500.0)
    assert fit.refitted == 400.0
    touched = np.unique(np.concatenate([a[100_000:100_400], b[100_000:100_400]]))
    # more games, narrower intervals (on the whole: the information is taken at the new ratings, as the
    # full fit's, and a rating that moved away from its opponents' holds a little less of it)
    assert fit.var[touched].mean() < base.var[touched].mean()
    los = fit.los_pairs([0, 1], [1, 0])
    assert los[0] + los[1] == pytest.approx(1.0)


def test_past_its_share_of_new_games_the_coarse_covariance_is_built_again(
    season: tuple[np.ndarray, ...], base: Fit
) -> None:
    a, b, score = season
    count = int(REFIT_SHARE * 100_000) + 1
    pairs = _pairs(a, b, score, 0, 100_000 + count)
    fit = refit(base, pairs, _pairs(a, b, score, 100_000, 100_000 + count), min_pairs=0)
    full = fit_pairs(pairs)
    assert fit.iterations == 0 and fit.refitted == 0.0  # no Newton iteration; a new coarse covariance
    assert np.abs(fit.ratings - full.ratings).max() < ELO
    np.testing.assert_allclose(fit.var, full.var, rtol=1e-4)  # built as the full fit builds it
    np.testing.assert_array_equal(fit.pair_key, full.pair_key)  # the pairs met since are in it


def test_a_new_player_anchors_or_a_small_ladder_take_the_full_fit(season: tuple[np.ndarray, ...]) -> None:
    a, b, score = season
    a, b = a[:100_200] % 999, b[:100_200] % 999  # player 999 plays only in the new results
    keep = a != b
    a, b, score = a[keep], b[keep], score[:100_200][keep]
    cut = len(a) - 150
    previous = fit_pairs(_pairs(a, b, score, 0, cut))
    a2, b2 = np.concatenate([a, [999]]), np.concatenate([b, [3]])
    s2 = np.concatenate([score, [1.0]])
    pairs, new = _pairs(a2, b2, s2, 0, len(a2)), _pairs(a2, b2, s2, cut, len(a2))
    assert refit(previous, pairs, new, min_pairs=0).iterations > 0  # player 999 is new
    pairs, new = _pairs(a, b, score, 0, len(a)), _pairs(a, b, score, cut, len(a))
    assert refit(previous, pairs, new, min_pairs=0).iterations == 0
    assert refit(previous, pairs, new, anchors={0: 1500.0}, min_pairs=0).iterations > 0
    small = refit(previous, pairs, new)  # under REFIT_MIN_PAIRS pairs: the full fit is cheap and exact
    assert small.iterations > 0
    np.testing.assert_allclose(small.ratings, fit_pairs(pairs).ratings, rtol=0, atol=SAME)  # NaN: 999
