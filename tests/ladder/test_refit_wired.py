"""The incremental refit wired into the standings' and the matchmaking's fit (issue #30): after k new
results a request or a pairing takes them in from the process's last fit (`arena.ladder.refit`: no
Newton iteration, no new coarse covariance), and its ratings are the cold fit's of every result to
0.1 Elo (measured: 1e-4). Its intervals keep the last full fit's coarse covariance (its runs of
neighbouring ratings): they are as far from the cold fit's as the last full fit's own were (a full
fit regroups its runs, which alone moves a small ladder's intervals by 4-5%), plus at most 1%."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import select

from arena.ladder import refit as refit_module
from arena.ladder.fit import Fit
from arena.ladder.pairing_fit import pairing_ratings
from arena.ladder.standings import season_fit, standings
from arena.store import Store
from arena.store.models import Season
from tests.ladder.ladder_rows import make_season, random_results, record
from tests.ladder.test_standings_cache import _old_standings

ELO = 0.1  # the refit's ratings against the cold fit's, at most
SD = 0.01  # its intervals against the cold fit's, as a share, beyond the last full fit's own distance


@pytest.fixture
def small_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test season has a few thousand pairs: let the refit apply from there (it needs 100,000)."""
    monkeypatch.setattr(refit_module, "REFIT_MIN_PAIRS", 0)


def _fit(store: Store, name: str) -> Fit:
    with store.read() as s:
        return season_fit(s, s.scalars(select(Season).where(Season.name == name)).one())[1]


def _same_as_cold(store: Store, name: str, fit: Fit, full: Fit) -> None:
    """`fit`'s ratings are the cold fit's to ELO, its intervals as near as those of `full`, the last
    full fit (of fewer results), plus SD."""
    _, cold = _old_standings(store, name)  # every result loaded and fitted cold
    assert np.abs(fit.ratings - cold.ratings).max() < ELO
    off = np.abs(np.sqrt(fit.var / cold.var) - 1.0).max()
    assert off <= np.abs(np.sqrt(full.var / cold.var) - 1.0).max() + SD


def test_new_results_are_taken_in_by_the_refit_not_a_whole_fit(store: Store, small_pairs: None) -> None:
    ids = make_season(store, 80, "w")  # over EXACT_MAX bots: the two-level covariance the step uses
    record(store, "w", random_results(ids, 2500, seed=1))
    first = _fit(store, "w")
    assert first.iterations > 0 and first.refitted == 0.0  # the first fit of a process: the whole fit
    for seed in (2, 3):  # 1% of the season each time, twice in a row (the second from the first refit)
        record(store, "w", random_results(ids, 25, seed=seed))
        fit = _fit(store, "w")
        assert fit.iterations == 0 and fit.refitted > 0  # the step from the last fit, not Newton's method
        _same_as_cold(store, "w", fit, first)
    assert fit.refitted == 50.0
    _, rows = standings(store, "w")  # and the standings show it
    shown = {r.bot: r.elo for r in rows}
    for k, i in enumerate(range(len(ids))):
        if not fit.bound[i]:
            assert shown[f"b{k:04d}@1"] == pytest.approx(round(float(fit.ratings[i]), 1), abs=0.051)


def test_the_refit_takes_in_results_read_by_two_tallies_since_its_fit(
    store: Store, small_pairs: None
) -> None:
    """Results tallied twice without a fit between (the trend column reads the tally too) are taken
    in together: what a refit adds is counted from the tally of its fit, not the last tally."""
    from arena.ladder.standings import trend_points

    ids = make_season(store, 70, "t")
    record(store, "t", random_results(ids, 2000, seed=4))
    first = _fit(store, "t")
    for seed in (5, 6):
        record(store, "t", random_results(ids, 10, seed=seed))
        with store.read() as s:
            trend_points(s, s.scalars(select(Season).where(Season.name == "t")).one())  # a tally, no fit
    fit = _fit(store, "t")
    assert fit.iterations == 0 and fit.refitted == 20.0
    _same_as_cold(store, "t", fit, first)


def test_the_matchmakings_refit_is_the_incremental_one(store: Store, small_pairs: None) -> None:
    """A pairing that refits after new results takes the refit too (the process's fit is shared with
    the standings), and stores the cold fit's ratings to 0.1 Elo for its established entries."""
    ids = make_season(store, 80, "m")
    record(store, "m", random_results(ids, 2500, seed=7))  # everyone past provisional
    with store.tx() as s:
        pairing_ratings(s, s.scalars(select(Season).where(Season.name == "m")).one())
    # a twentieth of those fitted: a pairing refit is due (pairing_fit.refit_due), and past the refit's
    # REFIT_SHARE, so its coarse covariance is built again too, still without Newton's iterations
    record(store, "m", random_results(ids, 125, seed=8))
    with store.tx() as s:
        season = s.scalars(select(Season).where(Season.name == "m")).one()
        fitted = pairing_ratings(s, season)
        assert season.pairing_fitted == 2625
        fit = season_fit(s, season)[1]
    assert fit.iterations == 0 and fit.refitted == 0.0
    _, cold = _old_standings(store, "m")
    got, want = np.array([fitted[e] for e in ids]), cold.ratings
    assert np.abs(got - want).max() < ELO


def test_an_entry_new_to_the_fit_takes_the_whole_fit(store: Store, small_pairs: None) -> None:
    ids = make_season(store, 80, "n")
    record(store, "n", random_results(ids[:-1], 2500, seed=9))  # the last entry has not played
    _fit(store, "n")
    record(
        store, "n", [*random_results(ids, 25, seed=10), (ids[-1], ids[0], 0)]
    )  # now it has: new to the fit
    fit = _fit(store, "n")
    assert fit.iterations > 0 and fit.refitted == 0.0
    _same_as_cold(store, "n", fit, fit)
