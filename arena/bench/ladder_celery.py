"""`arena bench ladder --executor celery`: a season through the Celery workers against the local pool.

Both seasons run in this process on the same store (`ARENA_DATABASE_URL`) at the same concurrency
(`--concurrency`, the number of worker processes listening on `ARENA_BROKER_URL`), one after the
other: first the local pool here (the baseline), then the Celery executor, whose matches the workers
play wherever they run (scripts/bench_hosts.py starts them on hosts of their own). For each, the
matches per minute and what a match costs the services:
- the broker: Redis commands and bytes in and out per match, from the server's own counters
  (`INFO stats`: every client, so the workers' task traffic and live events too);
- the store: the SQL statements this process (the runner: claims, leases, pairing, recording) sends
  per match, counted on its engine, and on PostgreSQL the transactions every client committed per
  match (`pg_stat_database.xact_commit`: the workers' bundle reads too).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event, text

BOTS = ("random", "greedy")
#: PostgreSQL folds a backend's statistics into the shared counters at most once a second while it
#: works and within 10 s once it idles: the store's counters are read after this long.
PG_STATS_SETTLE = 11.0


def _samples() -> Path:
    return Path(__file__).resolve().parents[2] / "sample_bots" / "python"


def _redis_counters(url: str) -> dict[str, int]:
    import redis

    info = redis.Redis.from_url(url, socket_connect_timeout=5).info("stats")
    keys = ("total_commands_processed", "total_net_input_bytes", "total_net_output_bytes")
    return {k: int(info[k]) for k in keys}


def _pg_commits(store: Any) -> int | None:
    if store.dialect != "postgresql":
        return None
    with store.engine.connect() as conn:
        value = conn.execute(
            text("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")
        ).scalar()
    return int(value or 0)


@contextmanager
def _statements(store: Any) -> Iterator[list[int]]:
    """Counts the statements this process sends on the store's engine while inside."""
    count = [0]

    def one(*_args: Any) -> None:
        count[0] += 1

    event.listen(store.engine, "before_cursor_execute", one)
    try:
        yield count
    finally:
        event.remove(store.engine, "before_cursor_execute", one)


def _season(store: Any, executor: str, concurrency: int, matches: int, launcher: str) -> dict[str, Any]:
    """One season of `matches` through `executor` at `concurrency`: its rate and services' costs."""
    from arena.ladder.runner import SeasonRun
    from arena.ladder.seasons import create_season, start_season
    from arena.workers.celery_app import CeleryExecutor, broker_url
    from arena.workers.execute import run_job
    from arena.workers.pool import run_pool

    name = f"bench-{executor}-c{concurrency}-{uuid.uuid4().hex[:6]}"
    create_season(store, name)
    start_season(store, name)
    source = SeasonRun(store, name, matches=matches, launcher=launcher)
    redis_url = broker_url()
    redis_before, commits_before = _redis_counters(redis_url), _pg_commits(store)
    factory = (lambda _n: CeleryExecutor()) if executor == "celery" else None
    with _statements(store) as statements:
        start = time.perf_counter()
        run_pool(source, run_job, concurrency=concurrency, executor_factory=factory)
        elapsed = time.perf_counter() - start
    played = store.season(name).recorded or 0
    if played != matches or source.errors:
        raise RuntimeError(f"season {name}: {played} of {matches} matches recorded; {source.errors}")
    redis_after = _redis_counters(redis_url)
    out: dict[str, Any] = {
        "matches_per_min": round(60 * matches / elapsed, 1),
        "runner_statements_per_match": round(statements[0] / matches, 1),
        "redis_commands_per_match": round(
            (redis_after["total_commands_processed"] - redis_before["total_commands_processed"]) / matches, 1
        ),
        "redis_kib_in_per_match": round(
            (redis_after["total_net_input_bytes"] - redis_before["total_net_input_bytes"]) / 1024 / matches, 1
        ),
        "redis_kib_out_per_match": round(
            (redis_after["total_net_output_bytes"] - redis_before["total_net_output_bytes"]) / 1024 / matches,
            1,
        ),
    }
    if commits_before is not None:
        time.sleep(PG_STATS_SETTLE)
        out["pg_commits_per_match"] = round(((_pg_commits(store) or 0) - commits_before) / matches, 1)
    return out


def run_ladder_celery(
    matches: int,
    concurrency: int,
    launcher: str,
    progress: Callable[[float], None] = lambda f: None,
) -> dict[str, Any]:
    """The local pool's season, then the Celery executor's, on the store and broker of the
    environment, at `concurrency`; figures per match of each and the ratio of their rates."""
    from arena.store import Store
    from arena.workers.celery_app import broker_url_shown
    from arena.workers.submit import submit_bundle

    url = os.environ.get("ARENA_DATABASE_URL")
    if not url or not os.environ.get("ARENA_BROKER_URL"):
        raise RuntimeError(
            "--executor celery measures the store and broker of ARENA_DATABASE_URL and ARENA_BROKER_URL: "
            "set both"
        )
    home = Path(os.environ.get("ARENA_HOME") or tempfile.mkdtemp(prefix="arena-bench-celery-"))
    store = Store.open(url, home=home)
    try:
        known = {b.name for b in store.bots()}
        for i, name in enumerate(BOTS):
            if name not in known:
                submit_bundle(store, _samples() / name, name=name, owner=f"bench{i}", launcher=launcher)
        progress(0.1)
        local = _season(store, "local", concurrency, matches, launcher)
        progress(0.5)
        celery = _season(store, "celery", concurrency, matches, launcher)
        progress(1.0)
        dialect = store.dialect
    finally:
        store.close()
        if not os.environ.get("ARENA_HOME"):
            shutil.rmtree(home, ignore_errors=True)
    return {
        "matches": matches, "concurrency": concurrency, "launcher": launcher, "bots": list(BOTS),
        "store": dialect, "broker": broker_url_shown(), "local": local, "celery": celery,
        "celery_vs_local": round(celery["matches_per_min"] / local["matches_per_min"], 2),
    }  # fmt: skip
