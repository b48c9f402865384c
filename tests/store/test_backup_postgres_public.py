"""A PostgreSQL store in its database's `public` schema (how a deployment runs, unlike the suites'
private schemas) backs up and restores into a new database: the dump's own CREATE SCHEMA is left out,
so the existing `public` schema takes the tables."""

from __future__ import annotations

import uuid
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import select

from arena.store import Store
from arena.store.backup import take_backup
from arena.store.db import make_engine
from arena.store.models import BotVersion
from arena.store.restore import restore_backup

ADMIN = "postgresql://postgres@127.0.0.1:5432/test"

pytestmark = pytest.mark.postgres


@pytest.fixture
def two_databases():
    names = [f"bk_{uuid.uuid4().hex[:10]}_{i}" for i in (1, 2)]
    with psycopg.connect(ADMIN, autocommit=True) as c:
        for name in names:
            c.execute(f"CREATE DATABASE {name}")
    try:
        yield [f"postgresql+psycopg://postgres@127.0.0.1:5432/{n}" for n in names]
    finally:
        with psycopg.connect(ADMIN, autocommit=True) as c:
            for name in names:
                c.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_a_public_schema_store_restores_into_a_new_database(two_databases, tmp_path: Path) -> None:
    source, target = two_databases
    store = Store.open(source, home=tmp_path / "a")
    try:
        store.add_version("pub", "ann", content_hash="f" * 64, path=str(tmp_path / "nowhere"))
        manifest = take_backup(store.engine, store.bundles_dir, tmp_path / "bk")
    finally:
        store.close()
    assert manifest.pg_schema == "public" and manifest.counts["bot_versions"] == 1
    engine = make_engine(target)
    try:
        restore_backup(engine, tmp_path / "b" / "bundles", tmp_path / "bk")
    finally:
        engine.dispose()
    restored = Store.open(target, home=tmp_path / "b")
    try:
        with restored.read() as s:
            assert [v.bot.name for v in s.scalars(select(BotVersion))] == ["pub"]
    finally:
        restored.close()
