"""Killing the season runner with SIGKILL mid-season loses nothing and records nothing twice.

Real everything: the `arena` CLI in a subprocess, the real referee, the sample Python bots in the
sandbox (bwrap when it runs here, else the local launcher), on SQLite and on PostgreSQL.
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

from arena.ladder.standings import verify_ratings
from arena.store import Store
from arena.store.models import Match, RatingChange, Replay

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
ARENA = [str(Path(sys.executable).parent / "arena")]
TOTAL = 10


def _launcher() -> str:
    from arena.workers.execute import bwrap_available

    return "bwrap" if bwrap_available() else "local"


def _arena(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*ARENA, *args], env=env, cwd=REPO, capture_output=True, text=True, timeout=300)


def _counts(store: Store) -> tuple[int, int]:
    with store.tx() as s:
        done = s.scalar(select(func.count()).select_from(Match).where(Match.status == "done")) or 0
        running = s.scalar(select(func.count()).select_from(Match).where(Match.status == "running")) or 0
    return done, running


def test_sigkill_mid_season_then_resume(database_url: str, tmp_path: Path) -> None:
    env = {**os.environ, "ARENA_HOME": str(tmp_path), "ARENA_DATABASE_URL": database_url}
    launcher = _launcher()
    for name, owner in (("random", "alice"), ("greedy", "bob")):
        r = _arena(
            env,
            "bots",
            "submit",
            str(REPO / "sample_bots" / "python" / name),
            "--name",
            name,
            "--owner",
            owner,
            "--sandbox",
            launcher,
        )
        assert r.returncode == 0, r.stderr
    assert _arena(env, "season", "create", "k", "--format", "flags=1", "--seed", "1").returncode == 0
    assert _arena(env, "season", "start", "k").returncode == 0

    store = Store.open(database_url, home=tmp_path)
    cmd = [
        *ARENA,
        "season",
        "run",
        "k",
        "--matches",
        str(TOTAL),
        "--concurrency",
        "2",
        "--quiet",
        "--sandbox",
        launcher,
    ]
    runner = subprocess.Popen(
        cmd, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:  # kill while some matches are done and some are being played
        done, running = _counts(store)
        if done >= 2 and running >= 1:
            break
        assert runner.poll() is None, runner.communicate()
        time.sleep(0.05)
    else:
        pytest.fail("the runner never reached the middle of the season")
    os.kill(runner.pid, signal.SIGKILL)
    runner.wait()
    done_at_kill, running_at_kill = _counts(store)
    assert done_at_kill < TOTAL and running_at_kill >= 1  # matches were cut off mid-play

    resumed = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr

    with store.tx() as s:
        matches = list(s.scalars(select(Match)))
        replays = Counter(s.scalars(select(Replay.match_id)))
        changes = Counter(s.scalars(select(RatingChange.match_id)))
    done = [m for m in matches if m.status == "done"]
    assert len(done) == TOTAL and all(m.status == "done" for m in matches)
    assert sorted(m.record_seq for m in done) == list(range(TOTAL))  # each recorded exactly once
    assert all(replays[m.id] == 1 for m in done)
    assert all(changes[m.id] == (0 if m.void else 2) for m in done)
    assert any(m.attempts >= 2 for m in done)  # the interrupted ones were played again
    assert verify_ratings(store, "k") == []
    store.close()


def test_ctrl_c_gives_matches_back_at_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    env = {**os.environ, "ARENA_HOME": str(tmp_path), "ARENA_DATABASE_URL": url}
    for name, owner in (("random", "alice"), ("greedy", "bob")):
        assert (
            _arena(
                env,
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
    assert _arena(env, "season", "create", "c", "--seed", "2").returncode == 0
    assert _arena(env, "season", "start", "c").returncode == 0
    store = Store.open(url, home=tmp_path)
    runner = subprocess.Popen(
        [
            *ARENA,
            "season",
            "run",
            "c",
            "--matches",
            "50",
            "--concurrency",
            "2",
            "--quiet",
            "--sandbox",
            "local",
        ],
        env=env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while _counts(store)[1] < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(runner.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole process group
    _, err = runner.communicate(timeout=60)
    assert runner.returncode == 130 and "run the same command again" in err, err
    assert "Traceback" not in err, err
    with store.tx() as s:
        assert s.scalar(select(func.count()).select_from(Match).where(Match.status == "running")) == 0
    store.close()
