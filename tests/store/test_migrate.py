"""Migrations on a brand-new database: several processes starting at once (a web server and workers
brought up together) must all find it migrated, none failing on a table another one just created."""

from __future__ import annotations

import multiprocessing

from sqlalchemy import inspect, text

from arena.store.db import make_engine
from arena.store.migrate import upgrade

PROCESSES = 4


def _migrate(url: str, start: multiprocessing.synchronize.Barrier, results: multiprocessing.Queue) -> None:
    engine = make_engine(url)
    start.wait()  # every process begins its upgrade at the same moment
    try:
        upgrade(engine)
        results.put("ok")
    except Exception as exc:  # reported to the test, which names it
        results.put(f"{type(exc).__name__}: {exc}"[:300])
    finally:
        engine.dispose()


def test_processes_migrating_a_new_database_at_once_all_succeed(database_url) -> None:
    ctx = multiprocessing.get_context("spawn")
    start, results = ctx.Barrier(PROCESSES), ctx.Queue()
    procs = [ctx.Process(target=_migrate, args=(database_url, start, results)) for _ in range(PROCESSES)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    outcomes = [results.get(timeout=5) for _ in procs]
    assert outcomes == ["ok"] * PROCESSES, outcomes
    engine = make_engine(database_url)
    try:
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM alembic_version")).scalar() == 1
        assert "matches" in inspect(engine).get_table_names()
    finally:
        engine.dispose()
