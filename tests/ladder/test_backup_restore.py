"""`arena admin backup` / `restore` end to end on both databases: a season runs, a backup is taken
while it plays, the store and its bundles are destroyed, the backup is restored and the season run on
to its goal: no recorded match is lost and none is recorded twice. A tampered backup and one newer
than this code are refused.

Matches are played by `engine_play` (the real engine in-process, real records), as in test_season.
"""

from __future__ import annotations

import itertools
import json
import shutil
import threading
import time
from collections import Counter
from pathlib import Path

import engine_play
import psycopg
from click.testing import CliRunner
from sqlalchemy import func, select
from sqlalchemy.engine import make_url

from arena.cli import cli
from arena.ladder.runner import SeasonRun
from arena.ladder.seasons import create_season, start_season
from arena.ladder.standings import verify_ratings
from arena.store import Store
from arena.store.migrate import head_revision
from arena.store.models import BotVersion, Match, RatingChange
from arena.store.queue import LEASE_SECONDS, requeue_abandoned
from arena.workers.pool import run_pool
from arena.workers.submit import submit_bundle

GOAL = 16
HELD_AFTER = 6  # matches played before the runner waits for the backup


def _admin(url: str, home: Path, *args: str):
    return CliRunner().invoke(cli, ["admin", *args], env={"ARENA_DATABASE_URL": url, "ARENA_HOME": str(home)})


def _season(url: str, home: Path, tmp_path: Path) -> Store:
    store = Store.open(url, home=home)
    for name, owner, strategy in (
        ("a", "1", "high"),
        ("b", "2", "low"),
        ("c", "3", "random"),
        ("d", "4", "random"),
    ):
        bundle = engine_play.make_bundle(tmp_path / "src", name, strategy)
        submit_bundle(store, bundle, name=name, owner=owner)
    create_season(store, "s", seed=7, duplicate=True)
    start_season(store, "s")
    return store


def _done(store: Store) -> int:
    with store.read() as s:
        return s.scalar(select(func.count()).select_from(Match).where(Match.status == "done")) or 0


def _destroy(url: str, store: Store) -> None:
    """The disk died: the database and the bundle folders are gone (an empty database is back)."""
    store.close()
    shutil.rmtree(store.bundles_dir)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        for suffix in ("", "-wal", "-shm"):
            Path(str(parsed.database) + suffix).unlink(missing_ok=True)
        return
    schema = str(parsed.query["options"]).split("=", 1)[1]
    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/test", autocommit=True) as c:
        c.execute(f"DROP SCHEMA {schema} CASCADE")
        c.execute(f"CREATE SCHEMA {schema}")


def test_backup_mid_season_restore_and_rerun_loses_and_repeats_nothing(database_url, tmp_path) -> None:
    home = tmp_path / "home"
    store = _season(database_url, home, tmp_path)
    run = SeasonRun(store, "s", launcher="local", matches=GOAL)
    gate, started = threading.Event(), itertools.count()
    entered: list[int] = []

    def held_after(job):  # the season's 7th match on waits for the backup: it is taken mid-run
        entered.append(n := next(started))
        if n >= HELD_AFTER:
            assert gate.wait(60)
        return engine_play.play(job)

    player = threading.Thread(
        target=run_pool, args=(run, held_after), kwargs={"concurrency": 2, "threads": True}
    )
    player.start()
    # six recorded, two claimed and held (running) when the snapshot is taken
    while (len(entered) < HELD_AFTER + 2 or _done(store) < HELD_AFTER) and player.is_alive():
        time.sleep(0.01)
    try:
        taken = _admin(database_url, home, "backup", str(tmp_path / "bk"), "--json")
    finally:
        gate.set()
        player.join(timeout=120)
    assert taken.exit_code == 0, taken.output
    manifest = json.loads(taken.stdout)
    saved = manifest["counts"]["matches"]
    assert manifest["schema_revision"] == head_revision() and len(manifest["bundles"]) == 4
    assert (tmp_path / "bk").stat().st_mode & 0o777 == 0o700
    with store.read() as s:
        recorded_then = s.scalar(select(func.count()).select_from(RatingChange))
    assert recorded_then is not None and _done(store) == GOAL  # the season went on past the backup

    _destroy(database_url, store)
    home = tmp_path / "new-home"  # the disk is gone: the arena comes back under another folder
    restored = _admin(database_url, home, "restore", str(tmp_path / "bk"))
    assert restored.exit_code == 0, restored.output
    again = _admin(database_url, home, "restore", str(tmp_path / "bk"))
    assert again.exit_code == 2 and "not empty" in again.output and "--force" in again.output

    store = Store.open(database_url, home=home)
    try:
        with store.read() as s:
            assert s.scalar(select(func.count()).select_from(Match)) == saved
            kept = sorted(m.record_seq for m in s.scalars(select(Match).where(Match.status == "done")))
            running = s.scalar(select(func.count()).select_from(Match).where(Match.status == "running"))
        assert kept == list(range(HELD_AFTER)) and running == 2
        assert verify_ratings(store, "s") == []
        with store.read() as s:  # each version points at its restored folder
            paths = set(s.scalars(select(BotVersion.path)))
        assert paths == {str(home / "bundles" / d) for d in manifest["bundles"]}
        assert all(Path(p, "bot.toml").is_file() for p in paths)
        with store.tx() as s:  # the runner that held the backup's leases is gone: they expire
            requeue_abandoned(s, now=time.time() + LEASE_SECONDS + 1)
        run_pool(
            SeasonRun(store, "s", launcher="local", matches=GOAL),
            engine_play.play,
            concurrency=2,
            threads=True,
        )
        with store.read() as s:
            done = list(s.scalars(select(Match).where(Match.status == "done")))
            changes = Counter(s.scalars(select(RatingChange.match_id)))
        assert sorted(m.record_seq for m in done) == list(range(GOAL))
        assert all(changes[m.id] == 2 for m in done if not m.void) and sum(changes.values()) <= 2 * GOAL
        assert verify_ratings(store, "s") == []
    finally:
        store.close()
    audit = _admin(database_url, home, "verify-store", "--json")
    assert audit.exit_code == 0, audit.output
    assert json.loads(audit.stdout)["replays"] == GOAL


def test_tampered_or_newer_backup_is_refused(tmp_path) -> None:
    url, home = f"sqlite:///{tmp_path / 'arena.db'}", tmp_path / "home"
    store = _season(url, home, tmp_path)
    store.close()
    bk = tmp_path / "bk"
    assert _admin(url, home, "backup", str(bk)).exit_code == 0
    refused = _admin(url, home, "backup", str(bk))
    assert refused.exit_code == 2 and f"backup folder {bk} is not empty" in refused.output

    empty = f"sqlite:///{tmp_path / 'other.db'}"
    manifest = json.loads((bk / "manifest.json").read_text())
    newer = dict(manifest, schema_revision="0999")
    (bk / "manifest.json").write_text(json.dumps(newer))
    out = _admin(empty, tmp_path / "other", "restore", str(bk))
    assert (
        out.exit_code == 2
        and "0999" in out.output
        and head_revision() in out.output
        and "upgrade" in out.output
    )
    (bk / "manifest.json").write_text(json.dumps(manifest))

    bot = next((bk / "bundles").glob("*/bot.py"))
    bot.write_text("print('changed')\n")
    out = _admin(empty, tmp_path / "other", "restore", str(bk))
    assert out.exit_code == 1 and "does not hash to its name" in out.output
    shutil.rmtree(bot.parent)
    shutil.copytree(next(home.glob(f"bundles/{bot.parent.name}")), bot.parent)

    with open(bk / "arena.db", "r+b") as fh:
        fh.seek(200)
        byte = fh.read(1)
        fh.seek(200)
        fh.write(bytes([byte[0] ^ 1]))
    out = _admin(empty, tmp_path / "other", "restore", str(bk))
    assert out.exit_code == 1 and "arena.db does not match the sha256" in out.output
    assert (
        not Path(tmp_path / "other.db").exists()
        or _admin(empty, tmp_path / "other", "verify-store").exit_code == 0
    )
