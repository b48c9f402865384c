"""`arena admin` as a user meets it: local only, one line naming the bad input and the fix, exit codes
that mean something, private files, and no database password on pg_dump's command line."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from sqlalchemy.engine import make_url

from arena.cli import cli
from arena.store.backup import libpq_target
from arena.store.migrate import head_revision


def _admin(tmp_path, *args: str, **env: str):
    base = {"ARENA_HOME": str(tmp_path / "home"), "ARENA_DATABASE_URL": f"sqlite:///{tmp_path / 'arena.db'}"}
    return CliRunner().invoke(cli, ["admin", *args], env=base | env)


@pytest.mark.parametrize("args", [("backup", "bk"), ("restore", "bk"), ("verify-store",)])
def test_admin_commands_refuse_a_remote_server(tmp_path, args) -> None:
    out = _admin(tmp_path, *args, ARENA_SERVER="127.0.0.1:1")
    assert out.exit_code == 2 and "works on the local store only" in out.output
    assert not (tmp_path / "arena.db").exists()


def test_bad_folders_are_named_with_the_fix(tmp_path) -> None:
    (tmp_path / "a-file").write_text("x")
    out = _admin(tmp_path, "backup", str(tmp_path / "a-file"))
    assert out.exit_code == 2 and "a-file' is a file" in out.output
    out = _admin(tmp_path, "restore", str(tmp_path / "missing"))
    assert (
        out.exit_code == 2 and "does not exist; give a folder written by `arena admin backup`" in out.output
    )
    (tmp_path / "empty").mkdir()
    out = _admin(tmp_path, "restore", str(tmp_path / "empty"))
    assert out.exit_code == 2 and "holds no manifest.json" in out.output
    assert "Traceback" not in out.output


def test_a_backup_of_an_empty_store_is_private_and_restores(tmp_path) -> None:
    out = _admin(tmp_path, "backup", str(tmp_path / "bk"))
    assert out.exit_code == 0, out.output
    assert "backup in" in out.stdout and f"schema {head_revision()}" in out.stdout
    for path in (tmp_path / "bk").rglob("*"):
        assert path.stat().st_mode & 0o077 == 0, path
    out = _admin(
        tmp_path, "restore", str(tmp_path / "bk"), ARENA_DATABASE_URL=f"sqlite:///{tmp_path / 'new.db'}"
    )
    assert out.exit_code == 0, out.output
    assert (tmp_path / "new.db").stat().st_mode & 0o077 == 0
    out = _admin(tmp_path, "verify-store", ARENA_DATABASE_URL=f"sqlite:///{tmp_path / 'new.db'}")
    assert out.exit_code == 0 and "store ok: 0 replays, 0 bundles, 0 seasons checked" in out.stdout


def test_pg_dump_gets_no_password_on_its_command_line() -> None:
    url = make_url("postgresql+psycopg://arena:s3cret@db.local:5433/arena?options=-csearch_path%3Dx")
    target, env = libpq_target(url)
    assert "s3cret" not in target and target.startswith("postgresql://arena@db.local:5433/arena")
    assert env["PGPASSWORD"] == "s3cret"
