"""A pool worker killed mid-match costs only its own job an attempt; the others in flight go back to
the queue untouched, and the season finishes by itself with no match failed.

Real parts: the process pool, SeasonRun on SQLite, the sample Python bots through the referee
(local launcher: the kills are of the pool's workers, not of the sandbox).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import select

from arena.ladder.runner import SeasonRun
from arena.ladder.seasons import create_season, start_season
from arena.store import Store
from arena.store.models import Match
from arena.workers.execute import run_job
from arena.workers.pool import run_pool
from arena.workers.submit import submit_bundle

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
TOTAL = 6
KILLS = 3


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def _playing(tmp: Path) -> dict[int, int]:
    """pid -> match id of the pool workers playing now: busy (bots of their own) and named in the
    pool's marks (in `tmp`, where this test points the pool's temporary folder)."""
    marks: dict[int, int] = {}
    for mark in tmp.glob("arena-pool-*/*"):
        try:
            marks[int(mark.read_text())] = int(mark.name)
        except (OSError, ValueError):
            pass
    return {pid: marks[pid] for pid in _children(os.getpid()) if pid in marks and _children(pid)}


def test_killing_busy_workers_fails_no_other_match(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    monkeypatch.setenv("ARENA_BUNDLE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where run_pool keeps its marks
    store = Store.open(f"sqlite:///{tmp_path / 'arena.db'}", home=tmp_path)
    for name, owner in (("random", "alice"), ("greedy", "bob")):
        submit_bundle(store, REPO / "sample_bots/python" / name, name=name, owner=owner, launcher="local")
    create_season(store, "k", rules=["flags=1"], seed=1)
    start_season(store, "k")
    source = SeasonRun(store, "k", matches=TOTAL, launcher="local")
    outcome: dict[str, object] = {}

    def play() -> None:
        try:
            outcome["progress"] = run_pool(source, run_job, concurrency=2)
        except BaseException as exc:  # reported below
            outcome["error"] = exc

    runner = threading.Thread(target=play)
    runner.start()
    killed: Counter[int] = Counter()  # match id -> times its worker was killed
    deadline = time.monotonic() + 240
    while killed.total() < KILLS and runner.is_alive() and time.monotonic() < deadline:
        playing = _playing(tmp_path)
        victims = [pid for pid, match in playing.items() if killed[match] < 2]  # 3 would fail it
        if len(playing) >= 2 and victims:  # others in flight, which the old pool failed with it
            os.kill(victims[0], signal.SIGKILL)
            killed[playing[victims[0]]] += 1
            time.sleep(0.3)  # let the pool rebuild and start matches again
        time.sleep(0.05)
    kills = killed.total()
    runner.join(300)
    assert not runner.is_alive()
    assert "error" not in outcome, outcome.get("error")
    assert kills == KILLS, f"only {kills} kills: the season ended first"

    with store.tx() as s:
        matches = list(s.scalars(select(Match).where(Match.kind == "ladder")))
    assert [m.id for m in matches if m.status == "failed"] == []
    assert sum(m.status == "done" for m in matches) == TOTAL
    # Each kill counted one attempt, the victim's; the old pool counted one for every match in
    # flight (at least two per kill here), and the matches lost with it came back with it counted.
    assert {m.id: m.attempts for m in matches} == {m.id: 1 + killed[m.id] for m in matches}
    store.close()
