"""The hot reads use an index, not a scan of `matches` or `rating_changes`, with real statistics:
a few thousand rows written in bulk, then ANALYZE (PostgreSQL), or on SQLite both the sampled
statistics `PRAGMA optimize` gathers (`analysis_limit`, as `arena.store.db` runs it) and exact ones.
The very statements the shared queries send are captured on the engine and EXPLAINed with their own
parameters (issue #30: without indexes each of these read the whole table; with sampled statistics
SQLite read every finished match through the status index to list fifty).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import event, select, text
from sqlalchemy.orm import Session

from arena.ladder import queries
from arena.ladder.pairing_pick import pick_in_sql
from arena.ladder.record import _check_suspension
from arena.ladder.runner import SeasonRun
from arena.ladder.seasons import _first_pick
from arena.ladder.visibility import sealed_done, unrevealed_ids
from arena.store import Store, db
from arena.store.health import read_figures
from arena.store.models import Bot, Match, Season
from arena.store.queue import claim, lease_owner
from arena.web.data import WebData
from tests.conftest import _pg_drop, _pg_schema_url
from tests.store.scale_support import Ladder, fill

MATCHES, BOTS = 6000, 60  # a bot plays about 1/30 of the matches: an index beats a scan by far
HOT_TABLES = ("matches", "mate", "open_mate", "rating_changes")
#: `PRAGMA optimize` examines db.ANALYSIS_LIMIT rows of an index whatever the store holds: 1% of a
#: 100,000-match store (size M), whose sampled statistics misled SQLite; here the same 1%.
SAMPLED_ROWS = MATCHES * db.ANALYSIS_LIMIT // 100_000
#: The index that begins with status holds the queue: a read of finished ones through it reads them all.
STATUS_INDEX = "ix_matches_claim"
#: Reads of the newest finished matches that may walk `matches` in id order, newest first: the walk
#: stops at the page's LIMIT (a plan that sorts first would read them all, and is refused).
ID_ORDER_WALKS = ("finished matches (the web's list)",)


@contextmanager
def captured(store: Store) -> Iterator[list[tuple[str, object]]]:
    seen: list[tuple[str, object]] = []

    def note(_conn, _cursor, statement, params, _context, _many) -> None:
        if not statement.lstrip().upper().startswith(("EXPLAIN", "PRAGMA")):
            seen.append((statement, params))

    event.listen(store.engine, "before_cursor_execute", note)
    try:
        yield seen
    finally:
        event.remove(store.engine, "before_cursor_execute", note)


def plan(store: Store, statement: str, params: object) -> list[str]:
    postgres = store.engine.dialect.name == "postgresql"
    with store.engine.connect() as conn:
        prefix = "EXPLAIN " if postgres else "EXPLAIN QUERY PLAN "
        rows = conn.exec_driver_sql(prefix + statement, params).all()  # type: ignore[arg-type]
    return [str(r[0]) if postgres else str(r[-1]) for r in rows]


def full_scans(lines: list[str], statement: str, postgres: bool, *, walk: bool = False) -> list[str]:
    """The lines of a statement's plan that read a hot table from end to end. With `walk`, SQLite's
    scan of `matches` in id order is allowed when nothing is sorted after it (it stops at the LIMIT)."""
    names = "|".join(HOT_TABLES)
    bad = re.compile(rf"Seq Scan on ({names})\b" if postgres else rf"^SCAN ({names})\b")
    scans = [line for line in lines if bad.search(line.strip())]
    if walk and not postgres and "LIMIT" in statement and not any("FOR ORDER BY" in x for x in lines):
        scans = [line for line in scans if line.strip() != "SCAN matches"]
    return scans


@pytest.fixture(
    scope="module",
    params=["sqlite", "sqlite-exact", pytest.param("postgresql", marks=pytest.mark.postgres)],
)
def big(request, tmp_path_factory) -> Iterator[tuple[Store, Ladder]]:
    """One bulk-filled store per database for the module (filling takes a few seconds); "sqlite"
    has sampled statistics as `PRAGMA optimize` gathers them at size M (SAMPLED_ROWS),
    "sqlite-exact" those of a full ANALYZE."""
    home = tmp_path_factory.mktemp("plans")
    schema = None
    if request.param.startswith("sqlite"):
        url = f"sqlite:///{home / 'arena.db'}"
    else:
        url, schema = _pg_schema_url()
    store = Store.open(url, home=home)
    ladder = fill(store, matches=MATCHES, bots=BOTS, open_pairs=5)
    with store.engine.begin() as conn:
        if request.param == "sqlite":
            conn.exec_driver_sql(f"PRAGMA analysis_limit={SAMPLED_ROWS}")
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

    done = queries.MatchStatus.DONE
    return {
        "finished matches (the web's list)": lambda s: queries.list_matches(
            s, queries.MatchFilter(status=done)
        ),
        "finished matches of a bot": lambda s: queries.list_matches(
            s, queries.MatchFilter(status=done, bot=bot)
        ),
        "finished matches of a bot in a season": lambda s: queries.list_matches(
            s, queries.MatchFilter(status=done, bot=bot, season=ladder.season), after=3000
        ),
        "queued matches": lambda s: queries.list_matches(
            s, queries.MatchFilter(status=queries.MatchStatus.QUEUED)
        ),
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
        "the claim of a season's next match": lambda s: claim(
            s, lease_owner(), season_id=ladder.season_id, kinds=("ladder",)
        ),
        "the pairing's first pick, with the registry's count and the fit's state": lambda s: _first_pick(
            s, s.get_one(Season, ladder.season_id), 0.0, False
        ),
        "the pairing": lambda s: pick_in_sql(s, ladder.season_id, 0.0, same_owner=False),
        "bot page (rating history)": history,
        "the health reading of /healthz and /metrics (queue, leases, last result)": lambda _s: read_figures(
            store
        ),
    }


@pytest.mark.timeout(180)
def test_hot_reads_use_an_index_with_statistics(big) -> None:
    store, ladder = big
    postgres = store.engine.dialect.name == "postgresql"
    wrong = {}
    for name, read in _reads(store, ladder).items():
        with captured(store) as statements, store.read() as s:
            read(s)
        assert statements, name
        for statement, params in statements:
            if not any(f" {t}" in statement for t in ("matches", "rating_changes")):
                continue
            lines = plan(store, statement, params)
            if "count(distinct" in statement:  # the capped total: LIMIT COUNT_CAP + 1 bounds its rows
                assert str(queries.COUNT_CAP + 1) in str(params) or "LIMIT" in statement, statement
                scans = []  # but not how many it reads to find them: the status index below
            else:
                scans = full_scans(lines, statement, postgres, walk=name in ID_ORDER_WALKS)
            if name.startswith("finished"):
                scans += [line for line in lines if STATUS_INDEX in line]
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


#: How each database names a read through the partial index of the rare results (migration 0015).
UNUSUAL_INDEX = "ix_matches_unusual"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("verdict", ["CRASH", "VOID", "TIMEOUT"])
def test_a_rare_verdict_filter_reads_the_unusual_matches_only(big, verdict) -> None:
    """A list filtered by a verdict other than OK (or VOID), its page and its capped count, reads
    `ix_matches_unusual` (about 1% of the matches), not the primary key or the table end to end:
    before, a verdict that few matches have cost a walk through every match (2.5-9 s at L)."""
    store, ladder = big
    postgres = store.engine.dialect.name == "postgresql"
    done = queries.MatchStatus.DONE
    for after in (None, 3000):
        with captured(store) as statements, store.read() as s:
            page = queries.list_matches(s, queries.MatchFilter(status=done, verdict=verdict), after=after)
        if verdict == "CRASH":  # the fill's faults: one match in 97 (scale_support)
            assert page.matches and all("CRASH" in x.verdicts for x in page.matches)
        reads = [
            (st, p) for st, p in statements if " matches" in st and ("count(distinct" in st or "LIMIT" in st)
        ]
        assert len(reads) == 2, statements  # the page and its count
        for statement, params in reads:
            lines = plan(store, statement, params)
            outer = [line for line in lines if "open_mate" not in line]
            assert any(UNUSUAL_INDEX in line for line in outer), (verdict, lines)
            scans = [x for x in full_scans(outer, statement, postgres) if UNUSUAL_INDEX not in x]
            assert not scans, (verdict, lines)  # a walk of the partial index alone is what is meant


def test_postgresql_connections_do_not_jit_compile(database_url, tmp_path) -> None:
    """JIT is off on the store's PostgreSQL connections: the verdict filter's partial index has no
    statistics for its condition, so the planner costs its walk as if it read every match, passes
    `jit_above_cost`, and compiled for 200-300 ms a statement that runs in 1-20 ms at L."""
    store = Store.open(database_url, home=tmp_path)
    try:
        with store.read() as s:
            if store.engine.dialect.name != "postgresql":
                pytest.skip("SQLite has no JIT")
            assert s.scalar(text("SHOW jit")) == "off"
    finally:
        store.close()


#: The indexes a bot's sealed matches are read from alone (migration 0016): each seat's matches,
#: which hold the reveal test's columns, and the open matches' decks.
SEALED_INDEXES = ("ix_matches_version0", "ix_matches_version1", "ix_matches_open_decks")


def vacuum(store: Store) -> None:
    """On PostgreSQL, VACUUM as autovacuum would have: index-only scans need the visibility map."""
    if store.engine.dialect.name == "postgresql":
        with store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("VACUUM ANALYZE matches")


def assert_index_only(lines: list[str], statement: str, indexes: tuple[str, ...], postgres: bool) -> None:
    """The plan reads each of `indexes` by an index-only scan (SQLite: a covering index), and never
    a table's heap or a whole hot table."""
    text_plan = "\n".join(lines)
    for index in indexes:
        reads = [x for x in lines if index in x]
        assert reads, (index, text_plan)
        assert all(("Index Only Scan" if postgres else "COVERING INDEX") in x for x in reads), text_plan
    assert "Heap Scan" not in text_plan and not full_scans(lines, statement, postgres), text_plan


@pytest.mark.timeout(120)
def test_a_bots_sealed_matches_are_read_from_indexes_alone(big) -> None:
    """`sealed_done` (a bot's page on the web, in JSON and over gRPC) is one statement that reads
    `ix_matches_version0`/`1` and (PostgreSQL) `ix_matches_open_decks` by index-only scans, never
    the table: at L it read a heap page per match of the bot (about 500) and every open match's
    row twice (1,260 buffers; now 79). PostgreSQL's index-only scans need the visibility map, which
    its autovacuum keeps: VACUUM here stands for it."""
    store, ladder = big
    postgres = store.engine.dialect.name == "postgresql"
    vacuum(store)
    with captured(store) as statements, store.read() as s:
        found = sealed_done(s, [ladder.versions[0], ladder.versions[1]])
    with store.read() as s:  # the bots 0 and 1 met in the first sealed pair (scale_support.fill)
        mine = s.scalars(
            select(Match.id).where(
                Match.id.in_(ladder.sealed),
                Match.version0_id.in_(ladder.versions[:2]) | Match.version1_id.in_(ladder.versions[:2]),
            )
        ).all()
    assert found == sorted(mine) and found
    reads = [x for x in statements if " matches" in x[0]]
    assert len(reads) == 1, statements
    lines = plan(store, *reads[0])
    # SQLite may read the few open matches through the status index instead (its sampled
    # statistics): a search by status either way, never a scan (below)
    assert_index_only(lines, reads[0][0], SEALED_INDEXES if postgres else SEALED_INDEXES[:2], postgres)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("status", [None, queries.MatchStatus.DONE])
def test_a_bot_filtered_lists_count_reads_its_indexes_alone(big, status) -> None:
    """A bot-filtered list's capped count (the bot's newest COUNT_CAP + 1 matches of each seat that
    fit its status and kind) reads `ix_matches_version0`/`1` alone, which hold status and kind
    (migration 0016): before, it read a heap page per match of the bot (994 buffers at L; now 21)."""
    store, ladder = big
    postgres = store.engine.dialect.name == "postgresql"
    vacuum(store)
    with captured(store) as statements, store.read() as s:
        listing = queries.list_matches(s, queries.MatchFilter(status=status, bot=ladder.bots[3]))
    assert listing.total > 50  # the bot played about 1/30 of the matches (MATCHES, BOTS)
    counts = [x for x in statements if "count(distinct" in x[0]]
    assert len(counts) == 1, statements
    lines = plan(store, *counts[0])
    assert_index_only(lines, counts[0][0], SEALED_INDEXES[:2], postgres)
