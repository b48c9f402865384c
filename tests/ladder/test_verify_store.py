"""`arena admin verify-store` (arena.ladder.verify_store) on both databases: a sound store passes; a
recorded result that its replay contradicts, a damaged bundle blob or folder, and a stored rating off
by a hair are each named, and the command exits 1."""

from __future__ import annotations

import json

import engine_play
from click.testing import CliRunner
from sqlalchemy import select

from arena.cli import cli
from arena.ladder.runner import SeasonRun
from arena.ladder.seasons import create_season, start_season
from arena.ladder.verify_store import verify_store
from arena.store import Store
from arena.store.models import BotVersion, BundleBlob, Match, RatingChange
from arena.workers.pool import run_pool
from arena.workers.submit import submit_bundle


def test_verify_store_passes_a_sound_store_and_names_each_mismatch(store: Store, tmp_path) -> None:
    for name, owner, strategy in (("a", "1", "high"), ("b", "2", "low")):
        submit_bundle(
            store, engine_play.make_bundle(tmp_path / "src", name, strategy), name=name, owner=owner
        )
    create_season(store, "v", seed=3)
    start_season(store, "v")
    run_pool(
        SeasonRun(store, "v", launcher="local", matches=4), engine_play.play, concurrency=1, threads=True
    )
    stages: set[str] = set()
    audit = verify_store(store, progress=lambda stage, done, total: stages.add(stage))
    assert audit.ok, audit.problems
    assert (audit.replays, audit.bundles, audit.seasons) == (4, 4, 1)  # 2 blobs + 2 folders
    assert stages == {"replays", "bundles", "standings"}

    with store.tx() as s:
        m = s.scalars(select(Match).where(Match.status == "done").order_by(Match.id)).first()
        assert m is not None
        m.winner = 1 - m.winner if m.winner is not None else 0
        blob, other = s.scalars(select(BundleBlob)).all()
        blob.data = other.data  # a sound archive, of the other bundle's files
        rc = s.scalars(select(RatingChange).order_by(RatingChange.id.desc())).first()
        assert rc is not None
        rc.after += 1e-9
        version = s.scalars(select(BotVersion).where(BotVersion.content_hash != blob.content_hash)).one()
        folder, match_id = version.path, m.id
    with open(f"{folder}/bot.py", "a") as fh:
        fh.write("# changed on disk\n")

    runner = CliRunner()
    env = {
        "ARENA_DATABASE_URL": store.engine.url.render_as_string(hide_password=False),
        "ARENA_HOME": str(store.home),
    }
    out = runner.invoke(cli, ["admin", "verify-store", "--json"], env=env)
    assert out.exit_code == 1, out.output
    problems = json.loads(out.stdout)["problems"]
    assert any(p.startswith(f"match {match_id}: recorded winner") for p in problems)
    assert any(f"bundle {blob.content_hash[:12]} (database copy)" in p for p in problems)
    assert any(f"(folder {folder}): does not hash to its name" in p for p in problems)
    assert any(p.startswith("season v: match ") and "recomputed" in p for p in problems)
    assert "mismatches in 4 replays, 4 bundles, 1 seasons" in out.stderr
