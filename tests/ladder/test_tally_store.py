"""A new process reads the standings without the season's history: the last reader saved the season's
tally (results per pair, trend points, the fit's ratings) in the store, and the next process starts
from it, reading only the results recorded since (issue #30: `arena standings` took 44 s at 1M results).
A saved tally that cannot be the season's (more results than it holds, another format) is ignored."""

from __future__ import annotations

import io

import numpy as np
from sqlalchemy import select, update

from arena.ladder import standings as standings_module
from arena.ladder import tally as tally_module
from arena.ladder import tally_store
from arena.ladder.standings import season_fit, standings_with_los
from arena.store import Store
from arena.store.models import Season, SeasonTally
from tests.ladder.ladder_rows import make_season, random_results, record
from tests.ladder.test_standings_cache import Statements, _check_equal_to_the_old_way


def _new_process() -> None:
    """Forget what this process remembers of every season, as a fresh process starts."""
    tally_module._SLOTS._items.clear()
    standings_module._RANKED._items.clear()


def _saved(store: Store, name: str) -> int | None:
    with store.read() as s:
        season = s.scalars(select(Season).where(Season.name == name)).one()
        return s.scalar(select(SeasonTally.recorded).where(SeasonTally.season_id == season.id))


def test_a_new_process_reads_only_the_results_since_the_saved_tally(store: Store) -> None:
    ids = make_season(store, 20, "n")
    record(store, "n", random_results(ids, 500, seed=7))
    _new_process()
    standings_with_los(store, "n")
    assert _saved(store, "n") == 500  # the first reader saved its tally

    record(store, "n", random_results(ids, 9, seed=8))
    _new_process()
    listening = Statements(store)
    try:
        standings_with_los(store, "n")
        matches = listening.reading("matches")
        # the new results' aggregate and their rating changes, from the saved count on: no whole-season
        # GROUP BY, no window over every rating change
        assert len(matches) == 2 and all("record_seq >=" in q for q, _ in matches), matches
        assert not any("row_number" in q for q, _ in listening.seen)
    finally:
        listening.close()
    assert _saved(store, "n") == 500  # 9 more are not worth a save (tally_store.save_due)
    _check_equal_to_the_old_way(store, "n")  # the same standings and trends as from every result


def test_a_saved_tally_of_more_results_than_the_season_holds_is_ignored(store: Store) -> None:
    ids = make_season(store, 6, "w")
    record(store, "w", random_results(ids, 40, seed=9))
    standings_with_los(store, "w")
    with store.tx() as s:  # a tally from the future (a database restored from an older backup)
        s.execute(update(SeasonTally).values(recorded=SeasonTally.recorded + 1000))
    _new_process()
    _check_equal_to_the_old_way(store, "w")
    standings_with_los(store, "w")
    assert _saved(store, "w") == 40  # the season's own tally replaced it


def test_a_saved_tally_of_another_format_is_ignored_and_replaced(store: Store) -> None:
    ids = make_season(store, 6, "f")
    record(store, "f", random_results(ids, 40, seed=10))
    standings_with_los(store, "f")
    other = io.BytesIO()
    np.savez(other, format=np.array([tally_store.FORMAT + 1, 40], dtype=np.int64))
    with store.tx() as s:
        s.execute(update(SeasonTally).values(data=other.getvalue()))
    _new_process()
    _check_equal_to_the_old_way(store, "f")
    standings_with_los(store, "f")
    with store.read() as s:
        data = s.scalar(select(SeasonTally.data))
    assert data is not None and tally_store.decode(data) is not None  # saved again, in this format


def test_a_fit_inside_a_write_transaction_saves_nothing(store: Store) -> None:
    """The runner fits while it holds the season FOR UPDATE; a save from there would wait on its own
    lock (it hung the season tests once). Only a reader, after its read, saves."""
    ids = make_season(store, 6, "t")
    record(store, "t", random_results(ids, 40, seed=11))
    _new_process()
    with store.tx() as s:
        season = s.scalars(select(Season).where(Season.name == "t").with_for_update()).one()
        season_fit(s, season)
    assert _saved(store, "t") is None


def test_a_save_is_due_after_a_hundredth_of_the_results_and_at_least_a_thousand() -> None:
    assert tally_store.save_due(None, 5)
    assert not tally_store.save_due(500, 1499) and tally_store.save_due(500, 1500)
    assert not tally_store.save_due(1_000_000, 1_009_999) and tally_store.save_due(1_000_000, 1_010_000)
    assert tally_store.save_due(600, 400)  # a rewound season: its own tally replaces the other


def test_a_save_behind_a_busy_sqlite_writer_is_skipped_and_the_wait_restored(store: Store) -> None:
    """On SQLite a reader's save waits SAVE_BUSY_MS for the write lock, not the store's 60 s: while a
    season's writer holds it the save is skipped (the next reader saves); the pooled connection gets
    its own busy timeout back."""
    if store.engine.dialect.name != "sqlite":
        return  # PostgreSQL: a save takes only its own row's lock (no foreign key to the season row)
    from arena.store.db import SQLITE_BUSY_SECONDS

    ids = make_season(store, 6, "b")
    record(store, "b", random_results(ids, 40, seed=13))
    _new_process()
    with store.read() as s:
        season = s.scalars(select(Season).where(Season.name == "b")).one()
        season_fit(s, season)
        pending = tally_module.unsaved(s, season)
    assert pending is not None
    with store.tx() as writer:  # BEGIN IMMEDIATE: the write lock, held
        writer.execute(update(Season).where(Season.name == "b").values(options=None))
        assert not tally_store.save(store.engine, pending.season_id, pending.tally, pending.tally.warm)
    assert _saved(store, "b") is None
    assert tally_store.save(store.engine, pending.season_id, pending.tally, pending.tally.warm)
    assert _saved(store, "b") == 40
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == SQLITE_BUSY_SECONDS * 1000


def test_the_season_runners_pairing_fit_is_saved_for_a_new_process(store: Store) -> None:
    """The matchmaking's fit feeds the saved tally: a runner that pairs (and so fits) saves the season's
    tally and fit ratings after its transaction, and a new process's standings start from them."""
    from arena.ladder.runner import SeasonRun

    ids = make_season(store, 20, "q")
    record(store, "q", random_results(ids, 500, seed=8))  # everyone past provisional: a pairing fit is due
    _new_process()
    run = SeasonRun(store, "q", launcher="local", matches=501)
    assert run.next_job() is not None  # paired (the fit made) and claimed
    assert _saved(store, "q") == 500
    _new_process()
    listening = Statements(store)
    try:
        with store.read() as s:
            season_fit(s, s.scalars(select(Season).where(Season.name == "q")).one())
        assert all("record_seq >=" in q for q, _ in listening.reading("matches"))  # no whole season read
    finally:
        listening.close()
