"""Where the store lives and how to connect: SQLite (`arena.db`, WAL) by default, PostgreSQL by URL.

`ARENA_DATABASE_URL` names the database; otherwise `$ARENA_HOME/arena.db` (ARENA_HOME defaults to the
current directory). Bundles of submitted bots are copied under `$ARENA_HOME/bundles/`.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

DB_FILE = "arena.db"
BACKENDS = ("sqlite", "postgresql")
URL_HELP = "use sqlite:///PATH or postgresql://USER@HOST:PORT/DB in --db or ARENA_DATABASE_URL"
#: Where this process last opened a store (password hidden), so that a database lost later in the
#: run can be named in the one line the CLI prints (`arena.cli`).
OPENED: list[str] = []


class StoreUnavailable(RuntimeError):
    """The store cannot be used: a URL we cannot use, or a database we cannot reach or write.
    The message is one line naming the URL (never its password) and what to do."""


def shown(url: str | URL) -> str:
    """A URL as messages may show it: the password hidden, at most 120 characters."""
    try:
        text = (
            make_url(url).render_as_string(hide_password=True)
            if isinstance(url, str)
            else (url.render_as_string(hide_password=True))
        )
    except ArgumentError:
        text = str(url)
    return ascii(text[:120])[1:-1]


def check_url(url: str) -> URL:
    """The parsed URL if the arena can use it, else StoreUnavailable (before any driver is loaded)."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        raise StoreUnavailable(f"database URL {shown(url)!r} is not a URL; {URL_HELP}") from None
    backend = parsed.get_backend_name()
    if backend not in BACKENDS:
        raise StoreUnavailable(
            f"database URL {shown(url)!r}: {backend} is not supported (only SQLite and PostgreSQL); {URL_HELP}"
        )
    if parsed.drivername not in ("sqlite", "sqlite+pysqlite", "postgresql", "postgresql+psycopg"):
        raise StoreUnavailable(
            f"database URL {shown(url)!r}: driver {parsed.drivername} is not installed; {URL_HELP}"
        )
    if backend == "sqlite" and parsed.database and parsed.database != ":memory:":
        folder = Path(parsed.database).parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreUnavailable(
                f"database {shown(url)!r}: cannot create folder {folder} ({exc.strerror}); "
                "give a path you can write"
            ) from None
        if not os.access(folder, os.W_OK | os.X_OK) or (
            Path(parsed.database).exists() and not os.access(parsed.database, os.R_OK | os.W_OK)
        ):
            raise StoreUnavailable(
                f"database {shown(url)!r}: {folder} is not writable; give a path you can write"
            )
    return parsed


def arena_home(home: str | Path | None = None) -> Path:
    """The data folder: bundles, replays exported for viewing, and the default SQLite file."""
    return Path(home or os.environ.get("ARENA_HOME") or ".").resolve()


def database_url(url: str | None = None, home: str | Path | None = None) -> str:
    """The URL to use: an explicit one, then ARENA_DATABASE_URL, then SQLite in the arena home."""
    if url:
        return url
    env = os.environ.get("ARENA_DATABASE_URL")
    if env:
        return env
    return f"sqlite:///{arena_home(home) / DB_FILE}"


#: Seconds a SQLite connection waits for another one's lock (the busy timeout, and the WAL switch below).
SQLITE_BUSY_SECONDS = 60


def _use_wal(cursor: sqlite3.Cursor) -> None:
    """Switch a SQLite file to WAL, waiting out another connection that holds it.

    WAL is a property of the file, so only the first connection to a brand-new database changes
    anything; but when several processes open a new file at once (the web server and workers
    brought up together), SQLite answers `database is locked` to the switch at once, without
    calling the busy handler, so the busy timeout alone does not cover it.
    """
    deadline = time.monotonic() + SQLITE_BUSY_SECONDS
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.005)


#: SQLite's advice for a connection that may live long (https://sqlite.org/pragma.html#pragma_optimize):
#: at open, analyse every table whose statistics are missing or stale (0x10002), reading at most
#: `analysis_limit` rows per index; `PRAGMA optimize` again every OPTIMIZE_EVERY uses of a pooled
#: connection and before it closes. Without statistics the planner guesses, and with a half-written
#: store's stale ones it full-scans the open matches.
OPTIMIZE_AT_OPEN = "PRAGMA optimize=0x10002"
ANALYSIS_LIMIT = 1000
OPTIMIZE_BUSY_MS = 200  # ANALYZE writes: never queue behind a season's writer for it; next time
OPTIMIZE_EVERY = 1000  # uses (checkins) of a pooled connection between two PRAGMA optimize


def _optimize(cursor: sqlite3.Cursor, pragma: str) -> None:
    """Run a `PRAGMA optimize` without waiting for the write lock; skipped when the file is busy or
    read-only (it is advice, and the next connection tries again)."""
    try:
        cursor.execute(f"PRAGMA analysis_limit={ANALYSIS_LIMIT}")
        cursor.execute(f"PRAGMA busy_timeout={OPTIMIZE_BUSY_MS}")
        cursor.execute(pragma)
    except sqlite3.OperationalError:  # busy, locked or read-only
        pass
    finally:
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_SECONDS * 1000}")


#: Execution option that marks a read-only connection (see Store.read).
READONLY_OPTION = "arena_readonly"


def make_engine(url: str, *, schema: str | None = None) -> Engine:
    """Create an engine with the settings the ladder relies on.

    SQLite: WAL journal (readers never block the writer), a busy timeout, foreign keys on, and
    `BEGIN IMMEDIATE` transactions so two writers queue instead of failing on a lock upgrade.
    PostgreSQL: psycopg 3; `schema` (tests) sets the search_path so each run has its own tables.
    """
    parsed = check_url(url)
    if parsed.get_backend_name() == "sqlite":
        engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_SECONDS})

        @event.listens_for(engine, "connect")
        def _sqlite_connect(dbapi_conn, _record) -> None:
            dbapi_conn.isolation_level = None  # let SQLAlchemy's "begin" hook issue BEGIN
            cur = dbapi_conn.cursor()
            cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_SECONDS * 1000}")
            _use_wal(cur)
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA foreign_keys=ON")
            _optimize(cur, OPTIMIZE_AT_OPEN)
            cur.close()

        @event.listens_for(engine, "close")
        def _sqlite_close(dbapi_conn, _record) -> None:
            cur = dbapi_conn.cursor()
            _optimize(cur, "PRAGMA optimize")
            cur.close()

        @event.listens_for(engine, "checkin")
        def _sqlite_checkin(dbapi_conn, record) -> None:
            # a pooled connection may live as long as the server: optimize it now and then too
            if dbapi_conn is None:  # the pool gave up on it (invalidated)
                return
            uses = record.info.get("arena_uses", 0) + 1
            record.info["arena_uses"] = uses
            if uses % OPTIMIZE_EVERY == 0:
                cur = dbapi_conn.cursor()
                _optimize(cur, "PRAGMA optimize")
                cur.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn) -> None:
            # Readers (Store.read: web pages, standings) take no write lock: under WAL they neither
            # wait for nor block the season's writer.
            readonly = conn.get_execution_options().get(READONLY_OPTION)
            conn.exec_driver_sql("BEGIN" if readonly else "BEGIN IMMEDIATE")

        return engine
    from arena.extras import require

    # psycopg is the [postgres] extra: without it, one line naming the extra (not SQLAlchemy's traceback).
    require("postgres", f"the database URL {shown(url)!r}")
    if parsed.get_backend_name() == "postgresql" and parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    # JIT off: the arena's statements are short index reads, but a planner that overestimates one
    # (a partial index's condition has no statistics: it guesses that it keeps nearly every row)
    # passes jit_above_cost and spends 200-300 ms compiling what then runs in 10 (issue #30)
    options = ["-cjit=off"]
    # the URL's own (`?options=-csearch_path%3D...`) joins them here, where connect_args override the
    # URL's, and stays in the URL too: code that passes `engine.url` on (the players' process, a
    # backup's pg_dump, the fit caches' keys) must keep naming the same schema
    given = parsed.query.get("options")
    if given:
        options += [given] if isinstance(given, str) else list(given)
    if schema:
        options.append(f"-csearch_path={schema}")
    return create_engine(parsed, connect_args={"options": " ".join(options)}, pool_pre_ping=True)


def make_private(engine: Engine) -> None:
    """A SQLite store holds seeds, salts and bots' logs: only its owner may read the file (0600;
    SQLite gives the -wal and -shm files the main file's mode). PostgreSQL has its own roles."""
    name = engine.url.database if engine.url.get_backend_name() == "sqlite" else None
    if not name or name == ":memory:":
        return
    for suffix in ("", "-wal", "-shm"):
        path = Path(name + suffix)
        if path.exists() and path.stat().st_mode & 0o077:
            try:
                path.chmod(0o600)
            except OSError:  # not ours (a read-only copy, say): nothing to tighten
                pass
