"""`arena bench scale`'s stores: synthetic ladders at named sizes, built once and kept.

A store is built with the project's own migrations (`Store.open`) and filled in bulk through the
models' table metadata: COPY on PostgreSQL (psycopg's copy), executemany in large transactions on
SQLite. A column the builder does not fill takes its model default, so a migration that adds a
nullable or defaulted column does not break it. The rows are `scale_rows`'s; the replays are real
records from `scale_replays`.

A built store is kept, keyed by size, seed, database kind and the schema revision (a digest of the
migrations and the models), and reused by the next run: a SQLite file under the cache folder, a
PostgreSQL database of its own (`bench_scale_<key>`) on the bench's server; a JSON manifest in the
cache folder records what was built and marks the store complete (a build that was interrupted has
none, and is built again).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from sqlalchemy import JSON, Engine, Table, bindparam, text, update

from arena.bench.scale_replays import replay_pool
from arena.bench.scale_rows import SEASON, SEASON_ID, History, Plan, entry_updates, people
from arena.store.migrate import MIGRATIONS
from arena.store.models import Base, Season
from arena.store.tallies import recount

log = logging.getLogger("arena.bench.scale")
Progress = Callable[[float], None]
POOL_RECORDS = 400  # distinct real replays per store
CHUNK_PAIRS = 5000  # pairings written per batch (10,000 matches)
DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432/postgres"
#: The order tables are written in (foreign keys first).
PEOPLE = ("owners", "bots", "bot_versions", "seasons", "entries")
HISTORY = ("matches", "replays", "rating_changes", "match_logs")


class Size(StrEnum):
    S = "S"
    M = "M"
    L = "L"
    XL = "XL"


class DbKind(StrEnum):
    SQLITE = "sqlite"
    POSTGRESQL = "postgresql"


#: (bots, matches) per size.
SHAPES: dict[Size, tuple[int, int]] = {
    Size.S: (20, 2_000),
    Size.M: (200, 100_000),
    Size.L: (2_000, 1_000_000),
    Size.XL: (10_000, 10_000_000),
}


@dataclass(frozen=True)
class Built:
    """A complete store and what is in it (the manifest)."""

    key: str
    size: str
    db: str
    seed: int
    url: str  # no password: the bench's own PostgreSQL server trusts loopback, or the URL named one
    bots: int
    matches: int
    counts: dict[str, int]
    build_seconds: float
    season: str = SEASON


def schema_revision() -> str:
    """A digest of the migrations and the models: a store built under other ones is built again."""
    h = hashlib.sha256()
    for path in sorted((MIGRATIONS / "versions").glob("*.py")) + [
        Path(__file__).parents[1] / "store/models.py"
    ]:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:10]


def store_key(size: Size, db: DbKind, seed: int) -> str:
    return f"{size.value.lower()}_s{seed}_{db.value}_{schema_revision()}"


def _pg_url(server: str, database: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(server).set(drivername="postgresql+psycopg", database=database).render_as_string(False)


def _pg_admin(server: str, sql: str) -> None:
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(server).set(drivername="postgresql")
    with psycopg.connect(url.render_as_string(False), autocommit=True, connect_timeout=5) as conn:
        conn.execute(sql.encode())  # our own identifiers (bench_scale_<key>), never a caller's text


def _pg_exists(server: str, database: str) -> bool:
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(server).set(drivername="postgresql")
    with psycopg.connect(url.render_as_string(False), autocommit=True, connect_timeout=5) as conn:
        return (
            conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,)).fetchone() is not None
        )


def ensure(
    size: Size,
    db: DbKind,
    *,
    seed: int = 1,
    cache: Path,
    pg_server: str = DEFAULT_PG,
    rebuild: bool = False,
    progress: Progress = lambda f: None,
) -> Built:
    """The store for (size, db, seed) at this schema revision: reused if complete, else built."""
    key = store_key(size, db, seed)
    manifest = cache / f"{key}.json"
    if db == DbKind.SQLITE:
        url = f"sqlite:///{cache / key / 'arena.db'}"
        present = (cache / key / "arena.db").exists()
    else:
        database = f"bench_scale_{key}"
        url = _pg_url(pg_server, database)
        present = _pg_exists(pg_server, database)
    if manifest.exists() and present and not rebuild:
        return Built(**json.loads(manifest.read_text()))
    manifest.unlink(missing_ok=True)
    _forget_older(size, db, seed, key, cache, pg_server)
    if db == DbKind.SQLITE:
        for suffix in ("", "-wal", "-shm"):
            (cache / key / f"arena.db{suffix}").unlink(missing_ok=True)
        (cache / key).mkdir(parents=True, exist_ok=True)
    else:
        _pg_admin(pg_server, f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        _pg_admin(pg_server, f'CREATE DATABASE "{database}"')
    bots, matches = SHAPES[size]
    started = time.monotonic()
    counts = build(url, Plan(bots, matches, seed), cache / key, progress)
    built = Built(
        key, size.value, db.value, seed, url, bots, matches, counts, round(time.monotonic() - started, 1)
    )
    cache.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps(asdict(built), indent=1))
    log.info("built %s in %.1f s: %s", key, built.build_seconds, counts)
    return built


def _forget_older(size: Size, db: DbKind, seed: int, key: str, cache: Path, pg_server: str) -> None:
    """Remove the stores of this size, seed and database built under other schema revisions: an L
    store is gigabytes, and a new migration would otherwise leave one behind each time."""
    import shutil

    prefix = f"{size.value.lower()}_s{seed}_{db.value}_"
    for old in cache.glob(f"{prefix}*") if cache.exists() else ():
        if old.name not in (key, f"{key}.json"):
            if old.is_dir():
                shutil.rmtree(old, ignore_errors=True)
            else:
                old.unlink(missing_ok=True)
    if db == DbKind.POSTGRESQL:
        import psycopg
        from sqlalchemy.engine import make_url

        url = make_url(pg_server).set(drivername="postgresql").render_as_string(False)
        with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
            names = [r[0] for r in conn.execute("SELECT datname FROM pg_database WHERE datname LIKE %s",
                                                (f"bench_scale_{prefix}%",))]  # fmt: skip
        for name in names:
            if name != f"bench_scale_{key}":
                _pg_admin(pg_server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def build(url: str, plan: Plan, home: Path, progress: Progress = lambda f: None) -> dict[str, int]:
    """Migrate an empty database at `url` and fill it with `plan`'s ladder; the rows per table."""
    from arena.store import Store

    store = Store.open(url, home=home)
    try:
        pool = replay_pool(plan.rules, min(POOL_RECORDS, max(2, plan.matches)), plan.seed,
                           lambda f: progress(0.03 * f))  # fmt: skip
        rows, entries = people(plan)
        writer = _Writer(store.engine)
        for name in PEOPLE:
            writer.write(name, rows[name])
        writer.commit()
        progress(0.05)
        history = History(plan, entries, pool)
        counts = {name: len(rows[name]) for name in PEOPLE} | dict.fromkeys(HISTORY, 0)
        for done, chunk in history.chunks(CHUNK_PAIRS):
            for name in HISTORY:
                writer.write(name, chunk[name])
                counts[name] += len(chunk[name])
            writer.commit()
            progress(0.05 + 0.9 * done / max(1, plan.pairs))
        writer.finish(entry_updates(entries), history.recorded)
        progress(1.0)
        return counts
    finally:
        store.close()


class _Writer:
    """Bulk inserts through the models' tables: COPY on PostgreSQL, executemany on SQLite."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.pg = engine.dialect.name == "postgresql"
        self.conn = engine.connect()
        self.conn.begin()

    def write(self, name: str, rows: list[dict]) -> None:
        if not rows:
            return
        table = Base.metadata.tables[name]
        extra = _defaults(table, rows[0].keys())
        if extra:
            rows = [{**extra, **r} for r in rows]
        if not self.pg:
            self.conn.execute(table.insert(), rows)
            return
        columns = list(rows[0])
        jsons = {c.name for c in table.columns if isinstance(c.type, JSON)}
        raw: Any = self.conn.connection.driver_connection
        listed = ", ".join(f'"{c}"' for c in columns)
        with raw.cursor() as cur, cur.copy(f"COPY {name} ({listed}) FROM STDIN") as copy:
            for r in rows:
                copy.write_row(
                    [json.dumps(r[c]) if c in jsons and r[c] is not None else r[c] for c in columns]
                )

    def commit(self) -> None:
        self.conn.commit()
        self.conn.begin()

    def finish(self, entries: list[dict], recorded: int) -> None:
        """The entries' live figures, the season's counters, the bots' tallies, the id sequences, the planner's statistics
        and (PostgreSQL) the visibility map."""
        t = Base.metadata.tables["entries"]
        fields = [k for k in entries[0] if k != "id"] if entries else []
        stmt = update(t).where(t.c.id == bindparam("e_id")).values({k: bindparam(f"e_{k}") for k in fields})
        if entries:
            self.conn.execute(stmt, [{f"e_{k}": v for k, v in e.items()} for e in entries])
        self.conn.execute(update(Season).where(Season.id == SEASON_ID).values(recorded=recorded))
        recount(self.conn)  # the bots' tallies, as the recorder would have kept them
        if self.pg:
            for table in Base.metadata.sorted_tables:
                if "id" in table.columns and table.columns["id"].primary_key:
                    self.conn.execute(text(
                        f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                        f"(SELECT coalesce(max(id), 0) + 1 FROM {table.name}), false)"
                    ))  # fmt: skip
        self.conn.commit()
        if self.pg:  # VACUUM as autovacuum would by now: index-only scans need the visibility map
            self.conn.execution_options(isolation_level="AUTOCOMMIT").execute(text("VACUUM ANALYZE"))
        else:
            self.conn.execute(text("ANALYZE"))
            self.conn.commit()
        self.conn.close()


def _defaults(table: Table, given: Any) -> dict[str, Any]:
    """Model-side defaults of the columns a row leaves out (server defaults and NULLs need nothing)."""
    out: dict[str, Any] = {}
    for column in table.columns:
        if column.name in given or column.default is None:
            continue
        default: Any = column.default
        if getattr(default, "is_scalar", False):
            out[column.name] = default.arg
        elif getattr(default, "is_callable", False):
            out[column.name] = default.arg(None)
    return out
