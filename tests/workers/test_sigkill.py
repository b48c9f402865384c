"""Killing the season runner with SIGKILL mid-season loses nothing and records nothing twice.

Real everything: the `arena` CLI in a subprocess, the real referee, the sample Python bots in the
sandbox (bwrap when it runs here, else the local launcher), on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import json
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


MATCH_REFEREE = """
import json, sys
from arena.engine import Rules
from arena.referee import TimeControl
from arena.sandbox.bundle import load_bundle
from arena.sandbox.launchers import get_launcher
from arena.workers.match import play_match
import dataclasses
bundle, told = dataclasses.replace(load_bundle(sys.argv[2]), protocol="grpc"), []  # found by their tokens
def ready(addresses, tokens):
    print(json.dumps(list(tokens)), flush=True)
def event(e):
    if e["event"] == "trick" and not told:  # mid-match: both bots up, one paused by the fair clock
        told.append(print("trick", flush=True))
play_match((bundle, bundle), rules=Rules.from_pairs([sys.argv[3]]), seed=1, time_control=TimeControl(),
           launcher=get_launcher(sys.argv[1], warn=False), pause_idle=True, on_ready=ready, on_event=event)
"""


def _referee(launcher: str, home: Path, fmt: str) -> subprocess.Popen:
    bundle = REPO / "sample_bots" / "python" / "random"
    env = {**os.environ, "ARENA_BUNDLE_CACHE": str(home / "cache")}
    return subprocess.Popen(
        [sys.executable, "-c", MATCH_REFEREE, launcher, str(bundle), fmt],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )


def _frozen(pid: int) -> bool:
    """Whether `pid` sits in a frozen cgroup v1 freezer group (where SIGKILL waits for a thaw)."""
    from arena.sandbox import cgroups

    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return False
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "freezer" in controllers.split(","):
            state = cgroups.ROOT / "freezer" / path.lstrip("/") / "freezer.state"
            return cgroups.read_file(state).strip() == "FROZEN"
    return False


@pytest.mark.parametrize("launcher", ["local", "bwrap"])
def test_nothing_of_a_match_survives_a_sigkilled_referee(launcher, tmp_path, processes_with_env):
    """Every process of the match dies with its referee; on cgroup v1 a bot the fair clock froze
    cannot die until thawed, and the next run's first launch kills it."""
    if launcher == "bwrap" and _launcher() != "bwrap":
        pytest.skip("bwrap cannot run here")
    referee = _referee(launcher, tmp_path, "flags=10000")
    try:
        tokens = [f"ARENA_TOKEN={t}" for t in json.loads(referee.stdout.readline())]
        assert referee.stdout.readline().strip() == "trick", "the match never started"
        assert len(processes_with_env(*tokens)) >= 2  # both seats' processes, found by their tokens
        os.kill(referee.pid, signal.SIGKILL)
        referee.wait(30)
        deadline = time.monotonic() + 30
        while any(not _frozen(p) for p in processes_with_env(*tokens)) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = processes_with_env(*tokens)
        assert all(_frozen(p) for p in left), f"alive after the referee's SIGKILL: {left}"
        assert launcher == "bwrap" or left == []  # the local launcher has no freezer
        nxt = _referee(launcher, tmp_path, "flags=1")  # the next run
        assert nxt.wait(120) == 0
        assert processes_with_env(*tokens) == []
    finally:
        referee.kill()
        referee.wait(30)
