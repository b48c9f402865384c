"""`arena demo` as a newcomer runs it, on a few of the sample bots (`--only`): the bots are built in the
sandbox (one per core), a ladder season is played, closed by its duplicate round robin, and the
standings come out with the ratings recomputed from the stored replays."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli.demo import sample_bundles
from arena.sandbox.bundle import load_bundle
from arena.workers.execute import bwrap_available

BOTS = ("random", "greedy", "c-stdio-greedy")


def run_demo(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}  # a cold staging cache: real builds
    cmd = [sys.executable, "-m", "arena.cli", "demo", "--home", str(tmp_path / "var"), *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)


@pytest.mark.slow
def test_a_demo_season_builds_plays_closes_and_prints_standings(tmp_path: Path) -> None:
    if not bwrap_available():
        pytest.skip("bubblewrap cannot run here (the demo would fall back to --sandbox local)")
    only = [arg for bot in BOTS for arg in ("--only", bot)]
    done = run_demo(tmp_path, *only, "--matches", "2", "--seed", "4")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "bwrap sandbox" in out
    for bot in BOTS:
        assert f"   {bot}" in out and f"{bot}@1" in out, out  # built, then in the standings
    assert "3 bots, duplicate pairs, 2 ladder matches" in out
    assert "final duplicate round robin, 6 matches" in out  # 3 pairs, each a duplicate pair
    assert "ratings recomputed from the 8 stored replays: identical" in out
    db = sqlite3.connect(tmp_path / "var" / "arena.db")
    rows = db.execute("select kind, status, void from matches").fetchall()
    assert sorted(rows) == [("final", "done", 0)] * 6 + [("ladder", "done", 0)] * 2
    versions = db.execute("select count(*) from bot_versions where build_ok").fetchone()
    assert versions == (3,)


def test_only_refuses_a_name_that_is_no_sample_bot(tmp_path: Path) -> None:
    done = run_demo(tmp_path, "--only", "random", "--only", "nosuchbot")
    assert done.returncode == 2
    assert "--only nosuchbot: no such sample bot" in done.stderr and "tactician" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "var").exists()  # refused before the store is made
    names = {load_bundle(path).name for path in sample_bundles()}
    assert set(BOTS) <= names
