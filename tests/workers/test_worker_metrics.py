"""`arena worker --metrics`: a real Celery worker (the machine's Redis, a queue of its own) plays a
season's matches in its prefork children, and its own `/metrics` counts them (multiprocess mode)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

ARENA = str(Path(sys.executable).parent / "arena")
REDIS = "redis://127.0.0.1:6379/11"  # the Celery tests' db; this test's keys carry its own queue name


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _scrape(url: str) -> dict[str, float]:
    with urllib.request.urlopen(url, timeout=30) as r:
        text = r.read().decode()
    return {s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples if not s.labels}


@pytest.mark.slow
def test_the_worker_counts_the_matches_its_children_play(tmp_path: Path, redis_client) -> None:
    client = redis_client(REDIS)
    queue, port = f"arena-metrics-{uuid.uuid4().hex[:10]}", _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "PROMETHEUS_"))}
    env.update(
        ARENA_HOME=str(tmp_path / "home"), ARENA_DATABASE_URL=f"sqlite:///{tmp_path / 'arena.db'}",
        ARENA_BROKER_URL=REDIS, ARENA_CELERY_QUEUE=queue, TMPDIR=str(tmp_path),
    )  # fmt: skip
    worker = subprocess.Popen(
        [ARENA, "worker", "--concurrency", "1", "--loglevel", "warning", "--metrics", str(port)],
        env={**env, "ARENA_HOME": str(tmp_path / "worker")}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, start_new_session=True,
    )  # fmt: skip
    try:
        assert worker.stdout is not None
        assert worker.stdout.readline().strip() == f"metrics: http://127.0.0.1:{port}/metrics"
        before = _scrape(f"http://127.0.0.1:{port}/metrics")
        assert before["arena_matches_played_total"] == 0 and before["process_resident_memory_bytes"] > 0
        args = ["bench", "ladder", "--executor", "celery", "--matches", "2", "--sandbox", "local", "--json"]
        out = subprocess.run([ARENA, *args], env=env, capture_output=True, text=True, timeout=280)
        assert out.returncode == 0, out.stderr[-3000:]
        after = _scrape(f"http://127.0.0.1:{port}/metrics")
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        _, log = worker.communicate(timeout=60)
        for key in client.scan_iter(f"*{queue}*"):
            client.delete(key)
    assert after["arena_matches_played_total"] >= 2, log[-3000:]
    assert after["arena_match_seconds_count"] == after["arena_matches_played_total"]
    assert not list(tmp_path.glob("arena-metrics-*")), "the counting folder outlived the worker"
