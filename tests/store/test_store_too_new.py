"""A store written by a newer arena (a schema revision this code does not know) is refused by every
process that opens it, in one line naming both revisions and the fix, and is left untouched."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from sqlalchemy import text

from arena.cli import cli
from arena.store import Store
from arena.store.migrate import StoreTooNew, head_revision, known_revisions


def test_known_revisions_end_at_the_head() -> None:
    revisions = known_revisions()
    assert revisions[0] == "0001" and revisions[-1] == head_revision()
    assert len(revisions) == len(set(revisions))


def test_a_store_newer_than_the_code_is_refused_and_left_alone(database_url, tmp_path) -> None:
    store = Store.open(database_url, home=tmp_path)
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '0999'"))
    try:
        with pytest.raises(StoreTooNew) as refused:
            Store.open(database_url, home=tmp_path)
        message = str(refused.value)
        assert "schema revision 0999" in message and f"up to {head_revision()}" in message
        assert "upgrade the arena package" in message and "\n" not in message
        with store.engine.connect() as conn:
            assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == "0999"
        env = {"ARENA_DATABASE_URL": database_url, "ARENA_HOME": str(tmp_path)}
        out = CliRunner().invoke(cli, ["admin", "verify-store"], env=env)
        assert out.exit_code == 3 and "0999" in out.stderr and "Traceback" not in out.output
    finally:
        store.close()
