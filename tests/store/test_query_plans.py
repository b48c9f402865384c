"""The hot reads use an index, not a scan of `matches` or `rating_changes`, with real statistics:
a few thousand rows written in bulk, then ANALYZE (PostgreSQL) or ANALYZE as `PRAGMA optimize`
would run it (SQLite). The very statements the shared queries send are captured on the engine and
EXPLAINed with their own parameters (issue #30: without indexes each of these read the whole table).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import event, select, text
from sqlalchemy.orm import Session

from arena.ladder import queries
from arena.ladder.record import _check_suspension
from arena.ladder.runner import SeasonRun
from arena.ladder.visibility import sealed_done, unrevealed_ids
from arena.store import Store
from arena.store.models import Bot, Match
from arena.web.data import WebData
from tests.conftest import _pg_drop, _pg_schema_url
from tests.store.scale_support import Ladder, fill

MATCHES, BOTS = 6000, 60  # a bot plays about 1/30 of the matches: an index beats a scan by far
HOT_TABLES = ("matches", "mate", "open_mate", "rating_changes")


@contextmanager
def captured(store: Store) -> Iterator[list[tuple[str, object]]]:
    seen: list[tuple[str, object]] = []

    def note(_conn, _cursor, statement, params, _context, _many) -> None:  # noqa: ANN001
        if not statement.lstrip().upper().startswith(("EXPLAIN", "PRAGMA")):
            seen.append((statement, params))

    event.listen(store.engine, "before_cursor_execute", note)
    try:
        yield seen
    finally:
        event.remove(store.engine, "before_cursor_execute", note)


def full_scans(store: Store, statement: str, params: object) -> list[str]:
    """The plan lines that read a hot table from end to end."""
    postgres = store.engine.dialect.name == "postgresql"
    with store.engine.connect() as conn:
        prefix = "EXPLAIN " if postgres else "EXPLAIN QUERY PLAN "
        rows = conn.exec_driver_sql(prefix + statement, params).all()  # type: ignore[arg-type]
    lines = [str(r[0]) if postgres else str(r[-1]) for r in rows]
    names = "|".join(HOT_TABLES)
    bad = re.compile(rf"Seq Scan on ({names})\b" if postgres else rf"^SCAN ({names})\b")
    return [line for line in lines if bad.search(line.strip())]


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def big(request, tmp_path_factory) -> Iterator[tuple[Store, Ladder]]:
    """One bulk-filled store per database for the module (filling takes a few seconds)."""
    home = tmp_path_factory.mktemp("plans")
    schema = None
    if request.param == "sqlite":
        url = f"sqlite:///{home / 'arena.db'}"
    else:
        url, schema = _pg_schema_url()
    store = Store.open(url, home=home)
    ladder = fill(store, matches=MATCHES, bots=BOTS, open_pairs=5)
    with store.engine.begin() as conn:
        conn.execute(text("ANALYZE"))
    yield store, ladder
    store.engine.dispose()
    if schema:
        _pg_drop(schema)


def _reads(store: Store, ladder: Ladder) -> dict[str, Callable[[Session], object]]:
    bot = ladder.bots[3]
    versions = [ladder.versions[3]]

    def page_reveal(s: Session) -> object:
        page = s.query(Match).filter(Match.id.in_(ladder.sealed + [1, 2, 3, 500, 2500])).all()
        return unrevealed_ids(s, page)

    def history(_s: Session) -> object:
        web = WebData.__new__(WebData)
        web.store, web.session = store, store.read
        return web.bot(bot)

    return {
        "reveal check of a page": page_reveal,
        "season list, later page": lambda s: queries.list_matches(
            s, queries.MatchFilter(season=ladder.season), after=3000, limit=50
        ),
        "bot filter": lambda s: queries.list_matches(s, queries.MatchFilter(bot=bot), limit=50),
        "bot filter, later page": lambda s: queries.list_matches(s, queries.MatchFilter(bot=bot), after=3000),
        "bot's recent matches": lambda s: queries.recent_matches(s, versions, 20, queries.MatchStatus.DONE),
        "head-to-head and verdicts": lambda s: queries.bot_record(
            s, s.scalar(select(Bot.id).where(Bot.name == bot)), versions
        ),
        "a bot's sealed matches": lambda s: sealed_done(s, [ladder.versions[0]]),
        "open matches per season": lambda s: queries.open_counts(s),
        "the claim's open counts": lambda s: SeasonRun(store, ladder.season)._open_ladder_counts(s),
        "suspension check": lambda s: _check_suspension(s, ladder.entries[3]),
        "bot page (rating history)": history,
    }


@pytest.mark.timeout(180)
def test_hot_reads_use_an_index_with_statistics(big) -> None:
    store, ladder = big
    wrong = {}
    for name, read in _reads(store, ladder).items():
        with captured(store) as statements, store.read() as s:
            read(s)
        assert statements, name
        for statement, params in statements:
            if (
                "count(distinct" in statement
            ):  # the capped total: LIMIT COUNT_CAP + 1 bounds it whatever the plan
                assert str(queries.COUNT_CAP + 1) in str(params) or "LIMIT" in statement, statement
                continue
            if any(f" {t}" in statement for t in ("matches", "rating_changes")):
                scans = full_scans(store, statement, params)
                if scans:
                    wrong[name] = (statement.split("\n")[0][:120], scans)
    assert not wrong, wrong


def test_sqlite_connections_gather_statistics_themselves(tmp_path) -> None:
    """`PRAGMA optimize` at open and close (arena.store.db): a store that never ran ANALYZE has
    statistics for its match indexes after a connection has come and gone."""
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    store = Store.open(url, home=tmp_path)
    fill(store, matches=2000, bots=BOTS)
    store.engine.dispose()  # closes the pooled connections: PRAGMA optimize runs as each closes
    with Store.open(url, home=tmp_path).engine.connect() as conn:
        indexes = set(conn.exec_driver_sql("SELECT idx FROM sqlite_stat1 WHERE tbl = 'matches'").scalars())
    assert {"ix_matches_seed", "ix_matches_version0", "ix_matches_season_pair"} <= indexes


def test_a_long_lived_sqlite_connection_optimizes_now_and_then(tmp_path, monkeypatch) -> None:
    """A pooled connection that is never closed still gathers statistics: `PRAGMA optimize` every
    OPTIMIZE_EVERY uses (here every use)."""
    from arena.store import db

    url = f"sqlite:///{tmp_path / 'arena.db'}"
    store = Store.open(url, home=tmp_path)
    fill(store, matches=2000, bots=BOTS)
    with store.engine.connect() as conn:
        before = set(
            conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE name = 'sqlite_stat1'").scalars()
        )
        stats = (
            set(conn.exec_driver_sql("SELECT idx FROM sqlite_stat1 WHERE tbl = 'matches'").scalars())
            if before
            else set()
        )
    assert "ix_matches_version0" not in stats  # filled after the connection opened: no statistics yet
    monkeypatch.setattr(db, "OPTIMIZE_EVERY", 1)
    with store.read() as s:
        s.scalar(text("SELECT 1"))  # one use, then the checkin optimizes
    with store.engine.connect() as conn:
        indexes = set(conn.exec_driver_sql("SELECT idx FROM sqlite_stat1 WHERE tbl = 'matches'").scalars())
    assert {"ix_matches_seed", "ix_matches_version0"} <= indexes
