"""Retired and suspended versions stop their zygotes (docs/sandbox.md "Warm start"): a real season on
a real store, played by the real worker path (`run_job`, bwrap with the warm start on), in this
process's threads so that the worker's launcher and its zygotes can be looked at.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from arena.ladder.runner import SeasonRun
from arena.ladder.seasons import create_season, start_season
from arena.store import Store
from arena.store.models import Bot
from arena.store.repo import find_bot, suspend_bot, unplayable_paths
from arena.workers import execute
from arena.workers.pool import run_pool
from arena.workers.submit import submit_bundle
from tests.sandbox.sandbox_support import TIME_SCALE, warm_launcher

ROOT = Path(__file__).resolve().parents[2]
RANDOM = ROOT / "sample_bots" / "python" / "random"


@pytest.fixture
def worker_launcher(monkeypatch):
    """The worker's own bwrap launcher (execute.make_launcher), warm by ARENA_WARM_START=1."""
    probe = warm_launcher()
    probe.warm.close()
    monkeypatch.setenv("ARENA_WARM_START", "1")
    saved = dict(execute._LAUNCHERS)
    execute._LAUNCHERS.clear()
    launcher = execute.make_launcher("bwrap")
    yield launcher
    launcher.warm.close()
    execute._LAUNCHERS.clear()
    execute._LAUNCHERS.update(saved)


def _bots(store: Store, tmp_path: Path, names: list[str]) -> dict[str, str]:
    """Submit one random bot per name (each its own bundle: bot.toml differs); name -> stored path."""
    paths = {}
    for i, name in enumerate(names):
        src = tmp_path / "src" / name
        shutil.copytree(RANDOM, src)
        (src / "bot.toml").write_text(f'name = "{name}"\nlanguage = "python"\nrun = ["python3", "bot.py"]\n')
        paths[name] = str(submit_bundle(store, src, name=name, owner=f"owner{i}").version.path)
    return paths


def _play(store: Store, matches: int) -> SeasonRun:
    source = SeasonRun(store, "warm", launcher="bwrap", matches=matches)
    run_pool(source, execute.run_job, concurrency=1, threads=True)
    assert not source.errors, source.errors
    return source


def test_a_version_suspended_mid_season_has_no_zygote_after_the_next_match(
    store: Store, tmp_path, worker_launcher
) -> None:
    paths = _bots(store, tmp_path, ["ann", "bob", "cid"])
    create_season(store, "warm", rules=["max_deals=1"], time_control={"startup": 30.0 * TIME_SCALE}, seed=5)
    start_season(store, "warm")
    pool = worker_launcher.warm
    played = 0
    while played < 8 and not all(pool.zygote_for(p) for p in paths.values()):
        played += 1
        _play(store, played)
    zygotes = {name: pool.zygote_for(path) for name, path in paths.items()}
    assert all(zygotes.values()), zygotes  # every bot warm: what the suspension must undo
    with store.tx() as s:
        suspend_bot(s, find_bot(s, "cid").id, "test: suspended mid-season")
        assert unplayable_paths(s) == (paths["cid"],)
    _play(store, played + 1)
    assert pool.zygote_for(paths["cid"]) is None
    assert zygotes["cid"].proc.exit_status() is not None  # its sandbox is gone, not just forgotten
    assert pool.zygote_for(paths["ann"]) is zygotes["ann"] and zygotes["ann"].served >= 2
    assert pool.zygote_for(paths["bob"]) is zygotes["bob"]
    store.retire("bob")  # a retirement is seen the same way (the next job's list)
    with store.tx() as s:
        assert unplayable_paths(s) == tuple(sorted((paths["bob"], paths["cid"])))
        assert not s.get_one(Bot, find_bot(s, "ann").id).retired


def test_a_bundle_shared_with_a_playable_bot_is_not_stopped(store: Store, tmp_path) -> None:
    """Two bots with the same files share one stored bundle: suspending one keeps the other's zygote."""
    one = submit_bundle(store, RANDOM, name="one", owner="a").version.path
    two = submit_bundle(store, RANDOM, name="two", owner="b").version.path
    assert one == two
    with store.tx() as s:
        suspend_bot(s, find_bot(s, "one").id, "test")
        assert unplayable_paths(s) == ()
        suspend_bot(s, find_bot(s, "two").id, "test")
        assert unplayable_paths(s) == (one,)


def test_jobs_name_only_bots_stopped_lately_and_long_enough_for_idle_zygotes(store: Store) -> None:
    """A job carries the bundles of bots retired or suspended in the last STOP_NOTICE, not of every bot
    ever retired; past that, a worker has stopped their unused zygotes itself (WARM_IDLE)."""
    from datetime import timedelta

    from arena.sandbox.warm import WARM_IDLE
    from arena.store.repo import STOP_NOTICE

    assert STOP_NOTICE.total_seconds() > 2 * WARM_IDLE
    old = submit_bundle(store, RANDOM, name="old", owner="a").version.path
    store.retire("old")
    with store.tx() as s:
        stopped = s.get_one(Bot, find_bot(s, "old").id).stopped_at
        assert stopped is not None
        assert unplayable_paths(s, now=stopped + STOP_NOTICE - timedelta(seconds=1)) == (old,)
        assert unplayable_paths(s, now=stopped + STOP_NOTICE + timedelta(seconds=1)) == ()
