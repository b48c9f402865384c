"""A backup of a store at an older schema revision restores, is checked against its own counts, and is
then migrated to this code's schema."""

from __future__ import annotations

from click.testing import CliRunner
from sqlalchemy import text

from arena.cli import cli
from arena.store.backup import take_backup
from arena.store.db import make_engine
from arena.store.migrate import head_revision, upgrade


def test_a_backup_at_an_older_revision_restores_and_is_migrated(tmp_path) -> None:
    old = make_engine(f"sqlite:///{tmp_path / 'old.db'}")
    upgrade(old, "0008")
    with old.begin() as conn:
        conn.execute(text("INSERT INTO owners (name, token_hash, token_prefix, created_at) "
                          "VALUES ('ann', 'h', 'elf_abcd', '2026-01-01')"))  # fmt: skip
    try:
        manifest = take_backup(old, tmp_path / "bundles", tmp_path / "bk")
    finally:
        old.dispose()
    assert manifest.schema_revision == "0008" and "bundle_blobs" not in manifest.counts
    env = {"ARENA_DATABASE_URL": f"sqlite:///{tmp_path / 'new.db'}", "ARENA_HOME": str(tmp_path / "home")}
    out = CliRunner().invoke(cli, ["admin", "restore", str(tmp_path / "bk")], env=env)
    assert out.exit_code == 0, out.output
    new = make_engine(env["ARENA_DATABASE_URL"])
    try:
        with new.connect() as conn:
            assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == head_revision()
            assert conn.execute(text("SELECT name FROM owners")).scalars().all() == ["ann"]
    finally:
        new.dispose()
