"""`arena bench ladder --executor celery`: a season through a real Celery worker (the machine's Redis, a
queue of its own) against the local pool, on one SQLite store; its figures, and its refusals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from arena.bench.ladder_celery import BOTS

ARENA = str(Path(sys.executable).parent / "arena")
REDIS = "redis://127.0.0.1:6379/11"  # a db number of its own


@pytest.mark.slow
def test_a_celery_season_against_the_local_pool(tmp_path: Path, redis_client) -> None:
    client = redis_client(REDIS)
    queue = f"arena-bench-{uuid.uuid4().hex[:10]}"
    env = {
        **os.environ,
        "ARENA_HOME": str(tmp_path / "home"),
        "ARENA_DATABASE_URL": f"sqlite:///{tmp_path / 'arena.db'}",
        "ARENA_BROKER_URL": REDIS,
        "ARENA_CELERY_QUEUE": queue,
    }
    worker_env = {**env, "ARENA_HOME": str(tmp_path / "worker")}  # its own home: it fetches the bundles
    worker = subprocess.Popen(
        [ARENA, "worker", "--concurrency", "1", "--loglevel", "warning"],
        env=worker_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        args = ["bench", "ladder", "--executor", "celery", "--matches", "2", "--sandbox", "local", "--json"]
        out = subprocess.run([ARENA, *args], env=env, capture_output=True, text=True, timeout=280)
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        _, log = worker.communicate(timeout=60)
        for key in client.scan_iter(f"*{queue}*"):
            client.delete(key)
    assert out.returncode == 0, (out.stderr[-3000:], log[-3000:])
    r = json.loads(out.stdout)
    assert r["bots"] == list(BOTS) and r["concurrency"] == 1 and r["store"] == "sqlite"
    local, celery = r["local"], r["celery"]
    assert local["matches_per_min"] > 0 and celery["matches_per_min"] > 0
    assert r["celery_vs_local"] == round(celery["matches_per_min"] / local["matches_per_min"], 2)
    # the jobs and results travel through Redis only with Celery; the runner's own statements are alike
    assert celery["redis_commands_per_match"] > 10 * max(1.0, local["redis_commands_per_match"])
    assert celery["redis_kib_in_per_match"] > 1 and local["runner_statements_per_match"] > 0
    assert "pg_commits_per_match" not in celery  # PostgreSQL only


def test_the_refusals_name_what_to_change(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["ARENA_HOME"] = str(tmp_path)
    env["ARENA_BROKER_URL"] = "redis://127.0.0.1:6379/11"

    def bench(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [ARENA, "bench", "ladder", *args], env=env, capture_output=True, text=True, timeout=120
        )

    no_store = bench("--executor", "celery", "--sandbox", "local")
    assert no_store.returncode != 0 and "ARENA_DATABASE_URL" in no_store.stderr
    assert "Traceback" not in no_store.stderr
    alone = bench("--concurrency", "2", "--sandbox", "local")
    assert alone.returncode == 2 and "--concurrency goes with --executor celery" in alone.stderr
    warm = bench("--executor", "celery", "--warm")
    assert warm.returncode == 2 and "--executor celery" in warm.stderr
