"""A Celery worker whose main process is SIGKILLed mid-match loses only that match's attempt: the
runner sees the worker stop answering pings, gives the match back to the queue, the other worker
plays it, and the season completes with every match recorded once.

Real parts: two `arena worker` processes on the real Redis (a DB of its own, a queue of its own),
`arena season run --executor celery` in a subprocess, SQLite, the sample bots (local launcher).
The pings come every 2 s here (ARENA_WORKER_PING) instead of 10, to keep the test short; the
requeue time it prints is for that setting (the default bound is in docs/deploy.md).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import select

from arena.ladder.seasons import create_season, start_season
from arena.ladder.standings import verify_ratings
from arena.store import Store
from arena.store.models import Match, Replay
from arena.workers.submit import submit_bundle

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
ARENA = str(Path(sys.executable).parent / "arena")
REDIS = "redis://127.0.0.1:6379/12"
TOTAL = 6


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            out += [int(c) for c in (task / "children").read_text().split()]
    except OSError:
        pass
    return out


def _playing(worker: int) -> bool:
    """The worker's pool child has bots of its own: it is playing a match."""
    return any(_children(child) for child in _children(worker))


def test_killed_worker_match_is_requeued_and_season_completes(tmp_path: Path, redis_client) -> None:
    client = redis_client(REDIS)
    queue = f"arena-loss-{uuid.uuid4().hex[:10]}"
    env = {
        **os.environ,
        "ARENA_HOME": str(tmp_path),
        "ARENA_DATABASE_URL": f"sqlite:///{tmp_path / 'arena.db'}",
        "ARENA_BUNDLE_CACHE": str(tmp_path / "cache"),
        "ARENA_BROKER_URL": REDIS,
        "ARENA_CELERY_QUEUE": queue,
        "ARENA_WORKER_PING": "2",
    }
    store = Store.open(env["ARENA_DATABASE_URL"], home=tmp_path)
    os.environ["ARENA_BUNDLE_CACHE"] = env["ARENA_BUNDLE_CACHE"]
    try:
        for name, owner in (("random", "alice"), ("greedy", "bob")):
            submit_bundle(store, REPO / "sample_bots/python" / name, name=name, owner=owner, launcher="local")
    finally:
        del os.environ["ARENA_BUNDLE_CACHE"]
    create_season(store, "c", rules=["flags=2"], seed=5)
    start_season(store, "c")

    def start_worker() -> subprocess.Popen:
        return subprocess.Popen(
            [ARENA, "worker", "--concurrency", "1", "--loglevel", "warning"],
            env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip

    workers = [start_worker(), start_worker()]
    run = subprocess.Popen(
        [ARENA, "season", "run", "c", "--matches", str(TOTAL), "--executor", "celery", "--sandbox", "local",
         "--concurrency", "2", "--quiet"],
        env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        victim = None
        while victim is None and time.monotonic() < deadline and run.poll() is None:
            victim = next((w for w in workers if _playing(w.pid)), None)
            time.sleep(0.05)
        assert victim is not None, "no worker was ever seen playing"
        with store.tx() as s:
            running_at_kill = {
                m.id: m.attempts for m in s.scalars(select(Match).where(Match.status == "running"))
            }
        os.kill(victim.pid, signal.SIGKILL)  # the main process only; its pool child dies with it
        killed_at = time.monotonic()
        requeued_after = None
        while run.poll() is None and time.monotonic() < killed_at + 240:
            if requeued_after is None:
                with store.tx() as s:
                    again = [
                        m for m in s.scalars(select(Match)) if m.attempts > running_at_kill.get(m.id, 99)
                    ]
                if again:
                    requeued_after = time.monotonic() - killed_at
            time.sleep(0.2)
        out, err = run.communicate(timeout=60)
    finally:
        for w in workers:
            if w.poll() is None:
                os.killpg(w.pid, signal.SIGTERM)
                w.wait(timeout=60)
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
        for key in client.scan_iter(f"*{queue}*"):
            client.delete(key)
    with store.tx() as s:  # the run may end between two looks: judge by the rows as they are now
        attempts = {m.id: m.attempts for m in s.scalars(select(Match))}
    again = [mid for mid, n in attempts.items() if n > running_at_kill.get(mid, 99)]
    if requeued_after is None and again:
        requeued_after = time.monotonic() - killed_at
    seen = f"running at the kill {running_at_kill}, attempts now {attempts}; the run said:\n{err[-2000:]}"
    assert run.returncode == 0, seen
    assert requeued_after is not None, f"no match of the killed worker was played again: {seen}"
    print(f"match of the killed worker back in play {requeued_after:.1f} s after the kill (pings every 2 s)")
    with store.tx() as s:
        matches = list(s.scalars(select(Match)))
        replays = Counter(s.scalars(select(Replay.match_id)))
    assert len(matches) == TOTAL and all(m.status == "done" for m in matches)
    assert sorted(m.record_seq for m in matches) == list(range(TOTAL))  # each recorded exactly once
    assert all(replays[m.id] == 1 for m in matches)
    assert verify_ratings(store, "c") == []
    store.close()
