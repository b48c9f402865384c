"""A service lost in the middle of a season run: one line naming it and its address, a non-zero
exit, this run's leases released where the store still answers, and the next run finishes the rest.

Real parts: PRIVATE PostgreSQL and Redis instances (tests/workers/private_services.py) stopped by
their pid mid-run, `arena season run` in a subprocess, the sample bots (local launcher), a real
`arena worker` for the Redis case.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import func, select

from arena.ladder.seasons import create_season, start_season
from arena.store import Store
from arena.store.models import Match, Replay
from arena.workers.submit import submit_bundle
from tests.workers.private_services import PrivatePostgres, PrivateRedis

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
ARENA = str(Path(sys.executable).parent / "arena")
TOTAL = 4


def _season(store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_BUNDLE_CACHE", str(tmp_path / "cache"))
    for name, owner in (("random", "alice"), ("greedy", "bob")):
        submit_bundle(store, REPO / "sample_bots/python" / name, name=name, owner=owner, launcher="local")
    create_season(store, "s", rules=["flags=1"], seed=2)
    start_season(store, "s")


def _counts(store: Store) -> tuple[int, int]:
    with store.tx() as s:
        done = s.scalar(select(func.count()).select_from(Match).where(Match.status == "done")) or 0
        running = s.scalar(select(func.count()).select_from(Match).where(Match.status == "running")) or 0
    return done, running


def _run(env: dict, *extra: str) -> subprocess.Popen:
    argv = [ARENA, "season", "run", "s", "--matches", str(TOTAL), "--concurrency", "2", "--sandbox", "local",
            "--quiet", *extra]  # fmt: skip
    return subprocess.Popen(
        argv, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _wait_mid_run(store: Store, run: subprocess.Popen) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        done, running = _counts(store)
        if done >= 1 and running >= 1:
            return
        assert run.poll() is None, run.communicate()
        time.sleep(0.05)
    pytest.fail("the run never reached the middle of the season")


def _one_line(err: str, words: str) -> None:
    lines = [
        line for line in err.splitlines() if line.strip() and not line.startswith("warning: --sandbox local")
    ]
    assert "Traceback" not in err, err
    assert len(lines) == 1, err
    assert lines[0].startswith("Error: " + words), lines[0]


def _all_recorded_once(store: Store) -> None:
    with store.tx() as s:
        matches = list(s.scalars(select(Match)))
        replays = Counter(s.scalars(select(Replay.match_id)))
    assert len(matches) == TOTAL and all(m.status == "done" for m in matches), [m.status for m in matches]
    assert sorted(m.record_seq for m in matches) == list(range(TOTAL))
    assert all(replays[m.id] == 1 for m in matches)


def test_postgresql_lost_mid_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pg = PrivatePostgres(tmp_path / "pg")
    pg.start()
    try:
        store = Store.open(pg.url, home=tmp_path)
        _season(store, tmp_path, monkeypatch)
        env = {**os.environ, "ARENA_HOME": str(tmp_path), "ARENA_DATABASE_URL": pg.url}
        run = _run(env)
        _wait_mid_run(store, run)
        store.close()
        pg.stop()
        _, err = run.communicate(timeout=120)
        assert run.returncode == 3, err
        _one_line(err, f"lost the database postgresql+psycopg://postgres@127.0.0.1:{pg.port}/postgres")
        pg.start()
        store = Store.open(pg.url, home=tmp_path)
        again = _run(env)  # its dead predecessor's leases are seen at once (same host, pid gone)
        out, err = again.communicate(timeout=300)
        assert again.returncode == 0, err
        _all_recorded_once(store)
        store.close()
    finally:
        if pg.proc is not None:
            pg.stop()
        pg.remove()


def test_redis_lost_mid_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    redis = PrivateRedis(tmp_path / "redis")
    redis.start()
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    store = Store.open(db, home=tmp_path)
    _season(store, tmp_path, monkeypatch)
    env = {**os.environ, "ARENA_HOME": str(tmp_path), "ARENA_DATABASE_URL": db, "ARENA_BROKER_URL": redis.url,
           "ARENA_BUNDLE_CACHE": str(tmp_path / "cache")}  # fmt: skip

    def start_worker() -> subprocess.Popen:
        return subprocess.Popen(
            [ARENA, "worker", "--concurrency", "2"], env=env, cwd=REPO,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip

    worker = start_worker()
    try:
        run = _run(env, "--executor", "celery")
        _wait_mid_run(store, run)
        redis.stop()
        lost_at = time.monotonic()
        _, err = run.communicate(timeout=180)
        print(f"the run stopped {time.monotonic() - lost_at:.1f} s after Redis was killed")
        assert run.returncode == 3, err
        _one_line(err, f"lost the Redis broker {redis.url}")
        assert _counts(store)[1] == 0  # the store still answered: every lease of the run was released
        redis.start()  # the same port
        os.killpg(worker.pid, signal.SIGKILL)  # a fresh worker: the old one's reconnect back-off is slow
        worker.wait(timeout=60)
        worker = start_worker()
        again = _run(env, "--executor", "celery")
        out, err = again.communicate(timeout=300)
        assert again.returncode == 0, err
        _all_recorded_once(store)
    finally:
        os.killpg(worker.pid, signal.SIGKILL)  # our own worker's group (a warm stop waits on Redis)
        worker.wait(timeout=60)
        redis.stop()
        store.close()


def test_sqlite_lost_mid_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SQLite file's disk fills up mid-run (a small tmpfs of our own, filled by a filler file)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(disk)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({mounted.stderr.decode().strip()})")
    try:
        db = f"sqlite:///{disk / 'arena.db'}"
        store = Store.open(db, home=tmp_path)
        _season(store, tmp_path, monkeypatch)
        env = {**os.environ, "ARENA_HOME": str(tmp_path), "ARENA_DATABASE_URL": db}
        run = _run(env)
        _wait_mid_run(store, run)
        filler = disk / "filler"
        try:
            with open(filler, "wb") as fh:  # every byte the disk has left
                while True:
                    fh.write(b"\0" * 65536)
                    fh.flush()
        except OSError:  # full (the database's own writes may fill the last bytes first)
            pass
        _, err = run.communicate(timeout=120)
        assert run.returncode == 3, err
        _one_line(err, f"lost the database sqlite:///{disk / 'arena.db'}")
        filler.unlink()
        again = _run(env)
        out, err = again.communicate(timeout=300)
        assert again.returncode == 0, err
        _all_recorded_once(store)
        store.close()
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)
