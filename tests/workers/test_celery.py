"""The Celery executor against the real Redis: `arena worker` plays, the runner records and rates."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from arena.ladder.standings import verify_ratings
from arena.store import Store

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
ARENA = str(Path(sys.executable).parent / "arena")
REDIS = "redis://127.0.0.1:6379/0"


def test_season_through_celery_workers(tmp_path: Path, redis_client) -> None:
    client = redis_client(REDIS)
    queue = f"arena-test-{uuid.uuid4().hex[:10]}"
    env = {
        **os.environ,
        "ARENA_HOME": str(tmp_path),
        "ARENA_DATABASE_URL": f"sqlite:///{tmp_path / 'arena.db'}",
        "ARENA_BROKER_URL": REDIS,
        "ARENA_CELERY_QUEUE": queue,
    }

    def arena(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([ARENA, *args], env=env, cwd=REPO, capture_output=True, text=True, timeout=300)

    for name, owner in (("random", "alice"), ("greedy", "bob")):
        assert (
            arena(
                "bots",
                "submit",
                str(REPO / "sample_bots" / "python" / name),
                "--name",
                name,
                "--owner",
                owner,
                "--sandbox",
                "local",
            ).returncode
            == 0
        )
    assert arena("season", "create", "cel", "--duplicate", "--seed", "3").returncode == 0
    assert arena("season", "start", "cel").returncode == 0
    worker = subprocess.Popen(
        [ARENA, "worker", "--concurrency", "2", "--loglevel", "info"],
        env=env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        run = arena(
            "season",
            "run",
            "cel",
            "--matches",
            "6",
            "--executor",
            "celery",
            "--sandbox",
            "local",
            "--concurrency",
            "2",
            "--quiet",
        )
        assert run.returncode == 0, run.stderr
        assert "played 6 matches" in run.stdout
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        _, log = worker.communicate(timeout=60)
        for key in client.scan_iter(f"*{queue}*"):
            client.delete(key)
    assert log.count("arena.play_match") >= 6 and "succeeded" in log  # the worker played them
    ids = [
        line.split("[")[1].split("]")[0] for line in log.splitlines() if "succeeded" in line and "[" in line
    ]
    assert ids and not any(
        client.exists(f"celery-task-meta-{i}") for i in ids
    )  # results handed over, then dropped
    store = Store.open(env["ARENA_DATABASE_URL"], home=tmp_path)
    assert verify_ratings(store, "cel") == []
    assert store.season("cel").recorded == 6
    store.close()
