"""The standings read no history: after N new results a request reads only the results recorded
since the last one (the key is the season's own count, `Season.recorded`), and with none it reads no
match or rating change at all; the standings and trend points equal the ones computed the old way
(every result loaded, the fit of the whole list, every rating change)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from sqlalchemy import delete, event, select

from arena.ladder.ratings import fit_ratings
from arena.ladder.standings import season_results, standings, trend_points
from arena.store import Store
from arena.store.models import Entry, Match, RatingChange, Season
from tests.ladder.ladder_rows import make_season, random_results, record


class Statements:
    """Every SQL statement the store's engine runs while it listens, with its parameters."""

    def __init__(self, store: Store) -> None:
        self.seen: list[tuple[str, object]] = []
        self.engine = store.engine
        event.listen(self.engine, "before_cursor_execute", self._on)

    def _on(self, conn, cursor, statement, parameters, context, executemany) -> None:
        self.seen.append((statement.lower(), parameters))

    def close(self) -> None:
        event.remove(self.engine, "before_cursor_execute", self._on)

    def reading(self, table: str) -> list[tuple[str, object]]:
        return [(q, p) for q, p in self.seen if f"from {table}" in q or f"join {table}" in q]


def _old_standings(store: Store, name: str):  # (entry ids, Fit)
    with store.read() as s:
        season = s.scalars(select(Season).where(Season.name == name)).one()
        ids = [e.id for e in s.scalars(select(Entry).where(Entry.season_id == season.id).order_by(Entry.id))]
        rows = season_results(s, season.id)
    index = {e: i for i, e in enumerate(ids)}
    a = np.array([index[r[0]] for r in rows])
    b = np.array([index[r[1]] for r in rows])
    return ids, fit_ratings(len(ids), a, b, np.array([r[2] for r in rows]))


def _old_trends(store: Store, name: str) -> dict[int, tuple[float, ...]]:
    """web/data.py's former `_entry_history`: every rating change of the season, last 11 points."""
    out: dict[int, list[float]] = defaultdict(list)
    with store.read() as s:
        season = s.scalars(select(Season).where(Season.name == name)).one()
        q = (
            select(RatingChange.entry_id, RatingChange.before, RatingChange.after)
            .join(Match, Match.id == RatingChange.match_id)
            .where(Match.season_id == season.id)
            .order_by(Match.record_seq, RatingChange.id)
        )
        for entry_id, before, after in s.execute(q):
            if not out[entry_id]:
                out[entry_id].append(before)
            out[entry_id].append(after)
    return {k: tuple(v[-11:]) for k, v in out.items()}


def _check_equal_to_the_old_way(store: Store, name: str) -> None:
    _, rows = standings(store, name)
    ids, fit = _old_standings(store, name)
    labels = {f"b{k:04d}@1": i for k, i in zip(range(len(ids)), range(len(ids)), strict=True)}
    for r in rows:
        i = labels[r.bot]
        shown = fit.bound_elo[i] if fit.bound[i] else fit.ratings[i]
        assert r.elo == pytest.approx(round(float(shown), 1), abs=0.051)
        if not fit.bound[i]:
            assert r.ci95 == pytest.approx(round(float(fit.ci95[i]), 1), abs=0.051)
    with store.read() as s:
        season = s.scalars(select(Season).where(Season.name == name)).one()
        got = trend_points(s, season)
    assert got == _old_trends(store, name)


def test_a_request_reads_only_the_results_recorded_since_the_last(store: Store) -> None:
    ids = make_season(store, 30, "c")
    record(store, "c", random_results(ids, 600, seed=1))
    _check_equal_to_the_old_way(store, "c")  # the first read: the whole season, aggregated in SQL

    listening = Statements(store)
    try:
        standings(store, "c")  # nothing new: no match and no rating change is read
        assert listening.reading("matches") == [] and listening.reading("rating_changes") == []
        # the season row, the registry's one aggregate, and nothing else: no entry is loaded
        assert len(listening.seen) <= 3, [q for q, _ in listening.seen]

        record(store, "c", random_results(ids, 7, seed=2))
        listening.seen.clear()
        standings(store, "c")
        matches = listening.reading("matches")
        # one aggregation of the 7 new results and one read of their 14 rating changes, each bounded
        # below by the count the last read had (600): never the season's whole history
        assert len(matches) == 2
        for query, params in matches:
            assert "record_seq >=" in query
            values = params.values() if isinstance(params, dict) else params
            assert 600 in list(values) and 607 in list(values), (query, params)
        assert all("rating_changes" not in q or "record_seq >=" in q for q, _ in listening.seen)
    finally:
        listening.close()
    _check_equal_to_the_old_way(store, "c")


def test_a_count_that_went_back_is_a_fresh_tally(store: Store) -> None:
    """A season whose recorded count is below its tally's (its later results removed) is tallied
    afresh, not added to."""
    ids = make_season(store, 6, "r")
    record(store, "r", random_results(ids, 40, seed=3))
    _check_equal_to_the_old_way(store, "r")
    with store.tx() as s:  # rewind the count as a replaced season would: the tally starts over
        season = s.scalars(select(Season).where(Season.name == "r")).one()
        late = select(Match.id).where(Match.season_id == season.id, Match.record_seq >= 20)
        s.execute(delete(RatingChange).where(RatingChange.match_id.in_(late)))
        s.execute(delete(Match).where(Match.id.in_(late.scalar_subquery())))
        season.recorded = 20
    _check_equal_to_the_old_way(store, "r")


def test_the_matchmakings_refit_reads_the_same_tally(store: Store) -> None:
    """A process's first pairing fit aggregates in SQL (no match row per result reaches Python), and a
    refit after new results reads only those; its ratings are the standings' fit."""
    from arena.ladder.pairing_fit import pairing_ratings

    ids = make_season(store, 12, "p")
    record(store, "p", random_results(ids, 400, seed=4))  # everyone past provisional
    listening = Statements(store)
    try:
        with store.tx() as s:
            fitted = pairing_ratings(s, s.scalars(select(Season).where(Season.name == "p")).one())
        matches = listening.reading("matches")
        assert matches and all("group by" in q or "row_number" in q for q, _ in matches)
        record(store, "p", random_results(ids, 60, seed=5))  # over a twentieth of 400: a refit is due
        listening.seen.clear()
        with store.tx() as s:
            refitted = pairing_ratings(s, s.scalars(select(Season).where(Season.name == "p")).one())
        assert all("record_seq >=" in q for q, _ in listening.reading("matches"))
    finally:
        listening.close()
    _, fit = _old_standings(store, "p")
    assert refitted != fitted
    # both within the fit's tolerance, 1e-6 log-odds (4e-5 Elo)
    assert sorted(refitted.values()) == pytest.approx(sorted(fit.ratings.tolist()), abs=1e-4)


def test_a_suspension_that_records_no_result_still_shows(store: Store) -> None:
    """The remembered standings are keyed by the registry too: suspending a bot (no result recorded)
    marks it at once."""
    from arena.store.models import Bot

    ids = make_season(store, 5, "z")
    record(store, "z", random_results(ids, 60, seed=6))
    assert not any(r.suspended for r in standings(store, "z")[1])
    with store.tx() as s:
        s.scalars(select(Bot).where(Bot.name == "b0002")).one().suspended = True
    assert [r.bot for r in standings(store, "z")[1] if r.suspended] == ["b0002@1"]
